/* The planner. Every number it uses comes from the problem, the device facts or the tuning table. */
#include "tiling/planner.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/status.h"
#include "tiling/kernel_shape.h"
#include "tiling/kv_codes.h"
#include "tiling/template_choice.h"
#include "tiling/tiling_key.h"
#include "tiling/tuning_table.h"


/* the farthest the strided prefetch reaches (the most measured: 128 rows, D = 64) */
#define IFA__MAX_PREFETCH_ROWS 128

int64_t ifa__all_vector_local_bytes(int64_t heads_per_group, int64_t seq_q, int64_t head_dim, int64_t value_dim,
                                    int64_t chunk_rows) {
    /* per query row (head x token): query (fp32, D), output accumulator (D_v), one chunk of
     * scores/probabilities, max/sum/rescale and the antiquant constant; per chunk row: its KV element offset
     * (8 bytes) and the value's token scale and offset; per value column: its channel scale and offset */
    return 4 * heads_per_group * seq_q * (head_dim + value_dim + chunk_rows + 4) + 16 * chunk_rows + 8 * value_dim;
}

/* What heads query heads of p (all their S1 tokens) need at chunk rows per chunk; per-batch query tokens add
 * each row's head and token (the kernel's packed rows). */
static int64_t block_bytes(const ifa_problem *p, int64_t heads, int64_t chunk) {
    return ifa__all_vector_local_bytes(heads, p->seq_q, p->head_dim, ifa__value_dim(p), chunk) +
           (p->q_lengths ? 8 * heads * p->seq_q : 0);
}

/* A named, aligned bump allocator over the workspace: run once to size and place every region. */
typedef struct workspace_cursor {
    int64_t used;
} workspace_cursor;

static int64_t place(workspace_cursor *c, int64_t bytes) {
    if (bytes == 0) return 0;
    int64_t at = (c->used + IFA_WORKSPACE_ALIGN - 1) / IFA_WORKSPACE_ALIGN * IFA_WORKSPACE_ALIGN;
    c->used = at + bytes;
    return at;
}

static int32_t floor_pow2(int32_t v) {
    int32_t p = 1;
    while (p <= v / 2) p *= 2;
    return p;
}

static ifa_status make_key(const ifa_plan *plan, uint64_t *key) {
    int32_t v[IFA_KEY_FIELD_COUNT_] = {0};
    v[IFA_KEY_LAYOUT] = plan->problem.layout;
    v[IFA_KEY_Q_DTYPE] = ifa__key_dtype_digit(plan->problem.q_dtype);
    v[IFA_KEY_KV_DTYPE] = ifa__key_dtype_digit(plan->problem.kv_dtype);
    v[IFA_KEY_OUT_DTYPE] = ifa__key_dtype_digit(plan->problem.out_dtype);
    v[IFA_KEY_TEMPLATE] = plan->template_id;
    v[IFA_KEY_LSE] = plan->problem.has_lse;
    v[IFA_KEY_LENGTHS] = plan->problem.lengths_mode;
    v[IFA_KEY_SPLIT_KV] = plan->split_kv;
    v[IFA_KEY_PAGED] = plan->problem.paged;
    v[IFA_KEY_ANTIQUANT] = plan->problem.antiquant;
    v[IFA_KEY_V_ANTIQUANT] = plan->problem.v_antiquant != plan->problem.antiquant ? plan->problem.v_antiquant : 0;
    v[IFA_KEY_MODE] = plan->problem.has_prefix ? 2 : 1;
    v[IFA_KEY_ROPE] = plan->problem.rope + (plan->problem.rope && plan->problem.rope_table ? 2 : 0);
    v[IFA_KEY_SHAPE] = plan->shape;
    return ifa__key_encode(v, key);
}

/* Splits group query heads of p (S1 tokens each) into the fewest even groups whose rows fit budget bytes of
 * local memory: the largest fitting group found by halving (then one by one), then evened out so no group is
 * left nearly empty. DEVICE_LIMIT when not even one head fits. */
static ifa_status fit_heads(const ifa_problem *p, int64_t group, int32_t chunk, int64_t budget, int64_t *per_group,
                            int64_t *groups) {
    int64_t fit = 0;
    for (int64_t g = group; g >= 1; g = g == 1 ? 0 : (g + 1) / 2) {
        if (block_bytes(p, g, chunk) <= budget) {
            fit = g;
            break;
        }
    }
    if (fit == 0) {
        for (int64_t g = 1; g <= group && block_bytes(p, g, chunk) <= budget; ++g) fit = g;
        if (fit == 0)
            return ifa__fail(IFA_STATUS_DEVICE_LIMIT,
                             "one query head with S1 = %" PRId64 ", D = %" PRId64 " and %d KV rows per chunk needs %" PRId64
                             " bytes of local memory; the device offers %" PRId64,
                             p->seq_q, p->head_dim, (int)chunk, block_bytes(p, 1, chunk), budget);
    }
    *groups = (group + fit - 1) / fit;
    *per_group = (group + *groups - 1) / *groups;
    return IFA_STATUS_OK;
}

/* Bytes of one position's key row over all KV heads (BSH/BSND): N_kv x D elements of the KV dtype. */
static int64_t kv_row_bytes(const ifa_problem *p) {
    const int64_t bits = p->kv_dtype == IFA__KV_FLOAT32                                     ? 32
                         : p->kv_dtype == IFA__KV_FLOAT16 || p->kv_dtype == IFA__KV_BFLOAT16 ? 16
                         : p->kv_dtype == IFA__KV_INT4                                       ? 4
                                                                                             : 8; /* int8, float8 */
    const int64_t bytes = p->num_kv_heads * p->head_dim * bits / 8;
    return bytes > 0 ? bytes : 1;
}

/* Bytes of one KV head's slice of that row (D elements), which a work-group of one head reads per position. */
static int64_t kv_slice_bytes(const ifa_problem *p) {
    const int64_t bytes = kv_row_bytes(p) / p->num_kv_heads;
    return bytes > 0 ? bytes : 1;
}

/* The most splits the equal-split rule may cut the longest sequence into for work-groups of rows query rows,
 * ifa__split_floor's rows or more each; 1 where it is too short for two. */
static int64_t most_splits(const ifa_problem *p, const ifa_tuning *t, int64_t rows) {
    const int64_t min_tokens = ifa__split_floor(p, t, rows);
    return p->max_length / min_tokens > 1 ? p->max_length / min_tokens : 1;
}

/* Adjacent KV heads per work-group (the tuning row's multi_head_rows): in BSH/BSND a position's KV heads are
 * adjacent, so a work-group holding all of them reads each position's row whole, where one holding a single
 * head reads a D-element slice every N_kv x D elements. All or one: a part of the row (2 or 4 of 8 heads) was
 * the slowest choice, or level with it, in 8 of the 10 cases measured and never clearly the fastest
 * (docs/performance.md, Zen 4, 2026-11-22 and Zen 3, 2026-11-24). The vector (CPU) shape only, no antiquant (its constants are per KV head) and no cascade; all
 * heads when their query rows stay within multi_head_rows and fit local memory in one group. With per-batch
 * query tokens such a block computes every head's S1 rows (the attention kernels pack a batch's tokens only with
 * one KV head): faster than one head's packed rows where batches use most of their S1 tokens (G = 4, S1 = 1
 * with idle slots' 0: 7.3-8.0 -> 4.2-5.1 ms), level where all use half.
 * With 32 vector registers (AVX-512) all heads also need one head's slice of a position (D elements) of at
 * least multi_head_min_slice_bytes and a position's row of one tensor (N_kv x D) of at least
 * multi_head_min_row_bytes: there one head, its slices prefetched far enough ahead (prefetch_rows below), was
 * faster at D = 64 (N_kv = 16, G = 1: 1.65-1.81 against 3.29-3.46 ms) and level or faster at N_kv = 8, D = 128
 * (G = 8: 2.2 against 3.4-3.7), and all heads only won from N_kv = 16 at D = 128 (2.4-2.9 against 3.0-3.2;
 * docs/performance.md, Zen 4, 2026-11-25; an AMD Zen 4). Since all heads' tiles share out the score step's
 * prefetches (spread_prefetch) all heads win at N_kv = 8, D = 128 there too (G = 4, cold, medians: 6.2
 * against 9.9 ms; G = 1 6.3 against 7.7), and the CPU row's minimum row is 0 (Zen 4, 2026-11-25). The
 * AVX2 VM of 2026-11-24 measured all heads faster at N_kv = 8, D = 128, G = 8 (3.0 against
 * 3.6-4.9 ms), so 16 registers keep the rows rule alone.
 * Intel's row sets the minimum slice to 0 too: there all heads won at every slice and row size measured (its
 * tuning row says by how much). */
static int64_t multi_heads(const ifa_problem *p, const ifa_device_facts *dev, const ifa_tuning *t, int32_t vw,
                           int32_t regs, int32_t chunk, int64_t budget) {
    const int64_t group = p->num_heads / p->num_kv_heads, m = p->num_kv_heads;
    if (t->multi_head_rows <= 0 || vw == 1 || p->layout == IFA_LAYOUT_BNSD || p->antiquant != IFA_ANTIQUANT_NONE ||
        p->has_prefix)
        return 1;
    /* All heads make one block per batch; where the sequence is too short to split (split_min_tokens) those
     * blocks cannot give every compute unit work, and one head per block (B x N_kv of them) does: BSND
     * 1,8,8,128,1024 on 2 Intel cores, all heads in one work-group 396-487 us, one head 331-345 (Xeon,
     * 2026-11-25). With per-batch lengths, fewer blocks than compute units always make choose_split cut them
     * into balanced units, which fill the units at any length. */
    if (p->lengths_mode != IFA_LENGTHS_PER_BATCH && dev->compute_units > 0 &&
        p->batch * most_splits(p, t, m * group * p->seq_q) < dev->compute_units)
        return 1;
    if (regs >= 32 &&
        (kv_slice_bytes(p) < t->multi_head_min_slice_bytes || kv_row_bytes(p) < t->multi_head_min_row_bytes))
        return 1;
    return m > 1 && m * group * p->seq_q <= t->multi_head_rows && block_bytes(p, m * group, chunk) <= budget ? m : 1;
}

/* The vector registers a CPU core gives the kernel's register tiles. OpenCL does not say; the native float
 * width tells x86's two files apart: AVX-512 (16 lanes) has 32 registers, AVX and AVX2 (8 lanes) 16. Other
 * SIMD CPUs (NEON, SVE at 4 lanes) have 32. */
static int32_t vector_registers(const ifa_device_facts *dev) { return dev->native_float_width == 8 ? 16 : 32; }

/* P.V keeps pv_rows x pv_block vectors in registers: about half the register file, so fewer vectors per block
 * when a block holds many query rows (AVX2, 16 registers: G = 4 at D = 128 2 vectors, 45 -> 40 us;
 * docs/performance.md, Zen 3, 2026-11-23). With 32 registers an 8-row block of values that need converting takes
 * pv_block_8rows vectors where the row gives it (Zen 4: one vector, 0.89-0.96x of two's time; tuning_table.c). */
static int32_t pv_block(const ifa_problem *p, int32_t vw, const ifa_tuning *t, int64_t pv_rows, int32_t regs) {
    int32_t xb = vw > 1 && t->pv_block > 0 ? t->pv_block : 1;
    if (vw > 1 && regs == 32 && pv_rows == IFA_MAX_TILE_ROWS && t->pv_block_8rows > 0 &&
        p->kv_dtype != IFA__KV_FLOAT32)
        xb = t->pv_block_8rows;
    while (xb > 1 && pv_rows * xb > regs / 2) xb /= 2;
    return xb;
}

/* Query rows per P.V register block, out of the score step's tile of tile_rows (up to 8; with several KV
 * heads per work-group a divisor of one head's rows, which P.V keeps). With 16 registers, more than 4 rows and
 * float16 values, blocks of 2 rows x 4 vectors instead of 8 rows x 1: a value vector (one conversion) feeds 2
 * FMAs instead of 8, but a probability broadcast feeds 4 instead of 1, 6 loads per 8 FMAs instead of 9
 * (G = 8, D = 128: 42.8 -> 38.1 us; G = 16, D = 64: 97.6 -> 87.2; D = 256: 69 -> 65.5). Values that cost more
 * to convert keep the 8-row blocks, which convert each vector once per 8 rows (D = 256, G = 16: int8 80 -> 87-111
 * us, float8 128 -> 170; bfloat16 and float32 alike either way); docs/performance.md, Zen 3, 2026-11-23. int8
 * values take the middle, 4 rows x 2 vectors (a conversion feeds 4 FMAs, a broadcast 2, 6 loads per 8 FMAs):
 * Zen 3, G = 8 and 16, D = 64 to 256, in L3 and cold, 0.90-0.94x of the 8-row blocks' time (Zen 3,
 * 2026-11-28; int4 and float8 e5m2 level, e4m3fn 1.2x slower, float16 level against its 2-row blocks).
 * 32 registers keep the 8-row blocks, measured on AVX-512 before this choice existed. */
static int32_t pv_rows(const ifa_problem *p, int64_t tile_rows, int32_t kv_heads_per_group, int32_t regs) {
    if (regs == 16 && tile_rows > 4 && kv_heads_per_group <= 1 && p->kv_dtype == IFA__KV_FLOAT16) return 2;
    if (regs == 16 && tile_rows > 4 && tile_rows % 4 == 0 && p->kv_dtype == IFA__KV_INT8) return 4;
    return (int32_t)tile_rows;
}

/* Key rows the CPU shape prefetches ahead. A BSH/BSND work-group holding one of several KV heads reads a
 * D-element slice every N_kv x D elements, which the hardware prefetchers do not follow, so the software
 * prefetch alone must cover the memory's latency: a distance in bytes of the head's slices, not in rows
 * (AVX-512, one thread, B = 1, G = 1, S = 8192: D = 64 fp16, 16 rows 2.27-2.30 ms, 32 rows 1.66-1.79; D = 128
 * fp16 at 16 rows either way; docs/performance.md, Zen 4, 2026-11-25). Contiguous rows (BNSD, all heads, one
 * KV head in all) keep prefetch_rows: there the hardware prefetchers stream and BNSD measured no gain. */
static int32_t prefetch_rows(const ifa_problem *p, const ifa_tuning *t, int64_t kv_heads_per_group) {
    int64_t rows = t->prefetch_rows;
    const int strided = p->layout != IFA_LAYOUT_BNSD && kv_heads_per_group < p->num_kv_heads;
    if (rows > 0 && t->strided_prefetch_bytes > 0 && strided) {
        const int64_t slice = kv_slice_bytes(p), want = (t->strided_prefetch_bytes + slice - 1) / slice;
        if (want > rows) rows = want < IFA__MAX_PREFETCH_ROWS ? want : IFA__MAX_PREFETCH_ROWS;
    }
    return (int32_t)rows;
}

/* P.V's next-chunk prefetch (ifa_all_vector_cpu.cl's PV_PREFETCH): while P.V reads a chunk's values from cache it
 * asks for the next chunk's keys, so the memory does not idle between the two passes. Faster where a KV head
 * has few query rows (rows, G x S1): one AVX-512 thread, G = 1, D = 64 1.8-2.2 -> 1.2-1.4 ms, G = 4, D = 128
 * 2.1-2.2 -> 2.0 (Zen 4, 2026-11-25); one AVX2 thread, G = 1 and 2 7-12 % faster, but G = 4 2.8-2.9 -> 3.0-3.1
 * and G = 8 2.4 -> 2.6-2.8 ms (BNSD, D = 128), BSND's all-heads G = 8 3.0 -> 4.4-4.7 (Zen 3, 2026-11-25).
 * After P.V's loop lost its row-offset loads (Zen 3, 2026-11-28), AVX2 at G = 4 is faster with it cold (BNSD
 * D = 128 0.83-0.96x of the time, D = 64 0.88-0.97x, BSND all heads 0.74-0.78x; 1.03-1.14x slower when K/V sit
 * in L3), G = 8 still slower (D = 64 1.12x). With paged KV (paged: the pass reads the pool) only up to the row's
 * own count of query rows: the next chunk's rows lie in other blocks; on the Intel Xeon P.V ran 1.10-1.21x slower
 * with the prefetch (Xeon, 2026-11-25), and at G = 4 with 64-row blocks it is slower on AMD too (Zen 4
 * 0.87-0.95x of the time without it, Zen 4, 2026-11-25; Zen 3 1.05-1.13x slower with it, 2026-11-28) where
 * G = 1 gains (Zen 4 64-row blocks 1.10x). */
static int32_t pv_prefetch(const ifa_tuning *t, int32_t prefetch, int64_t rows, int32_t regs, int paged) {
    const int64_t most = regs >= 32 ? t->pv_prefetch_rows : t->pv_prefetch_rows_16;
    return prefetch > 0 && rows <= most && (!paged || rows <= t->pv_prefetch_paged);
}

static int32_t combine_wg(const ifa_device_facts *dev, const ifa_tuning *t) {
    int32_t cwg = t->combine_work_group_size > 0 ? t->combine_work_group_size : 64;
    if (dev->max_work_group_size > 0 && cwg > dev->max_work_group_size) cwg = floor_pow2(dev->max_work_group_size);
    return cwg;
}

/* Flash decoding. The (batch, KV head, head group) blocks cost len_b + block_cost_rows each (so an empty
 * batch still costs something), W in all, and a device offers compute_units * split_waves work-group slots.
 * - Balanced units (per-batch lengths only), when the longest block is more than balance_milli/1000 of a
 *   compute unit's fair share W / compute_units: the blocks are laid on one cost line cut into one equal
 *   stretch per slot.
 * - Equal splits, when the blocks alone cannot fill the slots: the fewest splits that do, never shorter
 *   than split_min_tokens rows, each a whole number of chunks; the grid follows the longest batch and a
 *   batch with fewer rows uses fewer splits.
 * The plan's load ratio estimates the busiest work-group's cost over the fair share. Only the fused
 * (all-vector) kernel has balanced units and global rowmax; fused = 0 (the cv template) keeps to equal
 * splits with partial rowmax. */
static void choose_split(const ifa_problem *p, const ifa_device_facts *dev, const ifa_tuning *t, int fused,
                         ifa_plan *plan) {
    plan->split_kv = IFA_SPLIT_NONE;
    plan->split_tokens = 0;
    plan->max_splits = 1;
    plan->combine_work_group_size = 0;
    const int64_t per_batch_blocks = ifa__plan_blocks(plan);
    const int64_t blocks = p->batch * per_batch_blocks;
    const int64_t c0 = t->block_cost_rows > 0 ? t->block_cost_rows : 1;
    const int64_t total = p->total_length * per_batch_blocks + blocks * c0;
    /* the matrix shape's kernels hold fewer work-groups a multiprocessor than the others (H100: 2 at mma 5's 203
     * registers, 4 at the lane shape's 128), so fewer waves fill the device */
    const int32_t waves = !plan->mma && t->lane_split_waves > 0 ? t->lane_split_waves : t->split_waves;
    const int64_t slots = (int64_t)dev->compute_units * (waves > 0 ? waves : 1);
    const double share = dev->compute_units > 0 ? (double)total / dev->compute_units : 1.0;
    const int64_t balance_milli = t->balance_milli > 0 ? t->balance_milli : 1100;
    int64_t critical = p->max_length + c0; /* the busiest work-group's cost */
    if (fused && p->lengths_mode == IFA_LENGTHS_PER_BATCH && dev->compute_units > 0 && slots >= 2 &&
        slots <= INT32_MAX &&
        (double)critical * 1000.0 > share * (double)balance_milli) {
        plan->split_kv = IFA_SPLIT_BALANCED;
        plan->units = (int32_t)slots;
        plan->block_cost_rows = (int32_t)c0;
        plan->total_cost = total;
        critical = (total + slots - 1) / slots;
    } else {
        const int64_t limit = most_splits(p, t, (int64_t)plan->heads_per_group * p->seq_q);
        if (dev->compute_units > 0 && blocks < slots && limit >= 2) {
            int64_t splits = (slots + blocks - 1) / blocks;
            /* split_fill: no more work-groups than slots where that still gives 2 splits or more; a last wave
             * started by the rounding up costs about a whole wave's time for a few work-groups (H100, 2026-11-26:
             * B = 16 8K at 3 splits in one wave 290 us against 5 in 1.2 waves 333) */
            if (t->split_fill && slots / blocks >= 2) splits = slots / blocks;
            if (splits > limit) splits = limit;
            int64_t tokens = (p->max_length + splits - 1) / splits;
            /* whole chunks; with paged KV whole blocks too when one size divides the other, so that a split
             * starts at a block boundary (unless a sliding window shifts the block's first row) */
            int64_t grain = plan->chunk_rows;
            if (p->paged && p->block_size > grain && p->block_size % grain == 0) grain = p->block_size;
            tokens = (tokens + grain - 1) / grain * grain;
            const int64_t max_splits = (p->max_length + tokens - 1) / tokens;
            if (max_splits >= 2 && tokens <= INT32_MAX) {
                plan->split_kv = t->split_rowmax == 2 && fused ? IFA_SPLIT_GLOBAL_ROWMAX : IFA_SPLIT_PARTIAL_ROWMAX;
                plan->split_tokens = (int32_t)tokens;
                plan->max_splits = (int32_t)max_splits;
                critical = tokens + c0;
            }
        }
    }
    if (plan->split_kv != IFA_SPLIT_NONE) plan->combine_work_group_size = combine_wg(dev, t);
    const double ratio = (critical > share ? (double)critical : share) / share;
    plan->load_ratio_milli = ratio * 1000.0 > 2e9 ? 2000000000 : (int32_t)(ratio * 1000.0 + 0.5);
}

static void place_common(const ifa_problem *p, ifa_plan *plan, workspace_cursor *ws) {
    if (p->lengths_mode == IFA_LENGTHS_PER_BATCH) {
        plan->ws_lengths_bytes = (p->q_lengths ? 8 : 4) * p->batch; /* with query tokens: (length, tokens) pairs */
        plan->ws_lengths_offset = place(ws, plan->ws_lengths_bytes);
    }
    if (p->paged) {
        plan->ws_table_bytes = 4 * p->batch * p->table_cols;
        plan->ws_table_offset = place(ws, plan->ws_table_bytes);
    }
    if (p->rope) {
        plan->ws_rope_bytes = 8 * p->batch + (p->rope_table ? 0 : 4 * p->rope_dim);
        plan->ws_rope_offset = place(ws, plan->ws_rope_bytes);
    }
}

/* The cv template: every (batch, KV head, split) block is one entry of two batched GEMMs per chunk, with all
 * G x S1 query rows of the KV head (no local memory is involved, so no head groups). Splits follow the equal
 * split rule (partial rowmax; balanced units would need entries of different lengths); the chunk is the
 * tuning row's cv_chunk_rows, no longer than an entry's rows, shrunk until the K, V and score tiles of all
 * entries fit cv_workspace_mib. */
static ifa_status plan_cv(const ifa_problem *p, const ifa_device_facts *dev, const ifa_tuning *t, ifa_plan *plan) {
    /* a power of 2: the softmax kernel reduces by halving */
    int32_t wg = floor_pow2(t->cv_work_group_size > 0 ? t->cv_work_group_size : 1);
    if (dev->max_work_group_size > 0 && wg > dev->max_work_group_size) wg = floor_pow2(dev->max_work_group_size);
    const int32_t grain = wg > 16 ? wg : 16;
    plan->template_id = IFA_TEMPLATE_CV;
    plan->work_group_size = wg;
    plan->cv_work_group_size = wg;
    plan->vector_width = 1, plan->pv_block = 1;
    plan->heads_per_group = (int32_t)(p->num_heads / p->num_kv_heads), plan->head_groups = 1, plan->kv_heads_per_group = 1;
    plan->chunk_rows = grain; /* the split grain */
    choose_split(p, dev, t, 0, plan);
    const int64_t m = p->num_heads / p->num_kv_heads * p->seq_q;
    const int64_t entries = p->batch * p->num_kv_heads * plan->max_splits;
    const int64_t rows = ifa__cv_entry_rows(plan);
    int64_t chunk = t->cv_chunk_rows > grain ? t->cv_chunk_rows / grain * grain : grain;
    const int64_t need = (rows + grain - 1) / grain * grain;
    if (chunk > need) chunk = need;
    const int64_t budget = (int64_t)(t->cv_workspace_mib > 0 ? t->cv_workspace_mib : 64) << 20;
    const int64_t dv = ifa__value_dim(p);
    const int64_t tile_bytes_per_row = 4 * entries * (p->head_dim + dv + m); /* K, V and score tiles */
    while (chunk > grain && tile_bytes_per_row * chunk > budget) chunk -= grain;
    if (entries > INT32_MAX || tile_bytes_per_row * chunk > ((int64_t)1 << 40))
        return ifa__fail(IFA_STATUS_UNSUPPORTED_SHAPE, "the cv template would need %" PRId64 " entries of %" PRId64
                         " rows: too large a workspace; use template_mode \"all_vector\"", entries, chunk);
    plan->chunk_rows = (int32_t)chunk;
    plan->cv_entries = entries;
    plan->cv_rows = (int32_t)m;
    plan->cv_steps = (int32_t)((rows + chunk - 1) / chunk);
    plan->combine_work_group_size = combine_wg(dev, t);
    plan->num_work_groups = entries * m;

    workspace_cursor ws = {0};
    place_common(p, plan, &ws);
    plan->ws_cv_q_offset = place(&ws, 4 * entries * m * p->head_dim);
    plan->ws_cv_k_offset = place(&ws, 4 * entries * chunk * p->head_dim);
    plan->ws_cv_v_offset = place(&ws, 4 * entries * chunk * dv);
    plan->ws_cv_s_offset = place(&ws, 4 * entries * m * chunk);
    plan->ws_part_acc_offset = place(&ws, 4 * entries * m * dv);
    plan->ws_part_m_offset = place(&ws, 4 * entries * m);
    plan->ws_part_l_offset = place(&ws, 4 * entries * m);
    plan->workspace_bytes = ws.used;
    return make_key(plan, &plan->tiling_key);
}

/* The local memory an all_vector work-group may use on dev under row t: the device's, less the row's reserve and
 * RoPE's cos/sin pairs (8 bytes x S1 x rope_dim / 2). */
static int64_t local_budget(const ifa_problem *p, const ifa_device_facts *dev, const ifa_tuning *t) {
    const int64_t rope_local = p->rope ? 4 * p->seq_q * p->rope_dim : 0;
    return dev->local_mem_bytes - t->local_mem_reserve - rope_local;
}

void ifa__plan_shape_candidates(const ifa_plan *plan, const ifa_device_facts *dev,
                                ifa_shape_candidate out[IFA_SHAPE_CANDIDATES]) {
    const ifa_problem *p = &plan->problem;
    const ifa_tuning t = ifa__tuning_for(dev->vendor);
    ifa_plan copy = *plan;
    ifa__shape_choose(p, dev, &t, local_budget(p, dev, &t), block_bytes(p, plan->heads_per_group, plan->chunk_rows),
                      &copy, out);
    if (plan->template_id != IFA_TEMPLATE_ALL_VECTOR)
        for (int i = 0; i < IFA_SHAPE_CANDIDATES; ++i) {
            out[i].applicable = out[i].chosen = 0;
            snprintf(out[i].reason, sizeof out[i].reason, "the cv template runs no fused kernel");
        }
}

static ifa_status plan_all_vector(const ifa_problem *p, const ifa_device_facts *dev, ifa_tuning t, ifa_plan *plan);

ifa_status ifa__plan_make(const ifa_problem *p, const ifa_device_facts *dev, ifa_plan *plan) {
    if (!p || !dev || !plan) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "planner: problem, device facts or plan is NULL");
    memset(plan, 0, sizeof *plan);
    plan->magic = IFA_PLAN_MAGIC;
    plan->version = IFA_PLAN_VERSION;
    plan->problem = *p;
    plan->template_id = IFA_TEMPLATE_ALL_VECTOR;

    ifa_tuning t = ifa__tuning_for(dev->vendor);
    ifa_template_candidate candidates[IFA_TEMPLATE_CANDIDATES];
    int32_t chosen;
    IFA__TRY(ifa__template_choose(p, &t, candidates, &chosen));
    if (chosen == IFA_TEMPLATE_CV) return plan_cv(p, dev, &t, plan);
    const ifa_plan fresh = *plan;
    const ifa_status av = plan_all_vector(p, dev, t, plan);
    /* Where not even one head's rows fit the device's local memory (D = 512 with 16 query tokens on a GPU's 48 KiB)
     * and the caller left the template to the planner, cv takes the case: its products keep the rows in the
     * workspace. A plan the caller forced to all_vector stays refused. */
    if (av == IFA_STATUS_DEVICE_LIMIT && !p->template_request && candidates[0].applicable) {
        *plan = fresh;
        return plan_cv(p, dev, &t, plan);
    }
    IFA__TRY(av);
    /* A grid of no more work-groups than compute units holds one work-group per unit, a few warps each: where
     * the row says so (small_grid_work_group_size), the lane shape's plan with wider work-groups instead, when it
     * still keeps within the units (on an H100, B = 1 8192 as 128 work-groups: 54 -> 45 us at 256 work-items;
     * wider groups were slower on every larger grid measured; docs/performance.md, H100, 2026-11-26). */
    if (plan->lanes && t.small_grid_work_group_size > plan->work_group_size &&
        plan->num_work_groups <= dev->compute_units &&
        (dev->max_work_group_size <= 0 || t.small_grid_work_group_size <= dev->max_work_group_size)) {
        ifa_tuning wide_t = t;
        wide_t.work_group_size = t.small_grid_work_group_size;
        ifa_plan wide = *plan;
        if (plan_all_vector(p, dev, wide_t, &wide) == IFA_STATUS_OK && wide.lanes &&
            wide.work_group_size == t.small_grid_work_group_size && wide.num_work_groups <= dev->compute_units)
            *plan = wide;
    }
    return IFA_STATUS_OK;
}

/* The all_vector plan of p under the tuning row t into *plan (its header and problem already set). */
static ifa_status plan_all_vector(const ifa_problem *p, const ifa_device_facts *dev, ifa_tuning t, ifa_plan *plan) {
    int32_t wg = t.work_group_size;
    if (dev->max_work_group_size > 0 && wg > dev->max_work_group_size) wg = floor_pow2(dev->max_work_group_size);
    /* the widest power-of-2 vector (up to the tuning row's and the device's native width) that divides D:
     * 16 floats on AVX-512, 8 on AVX2, where a float16 is two registers of a file of 16 (D = 128, G = 4 on
     * an AVX2 core: 77 -> 40 us) */
    int32_t vw = 1, vw_max = t.vector_width;
    if (dev->native_float_width > 0 && vw_max > dev->native_float_width) vw_max = dev->native_float_width;
    const int64_t dv = ifa__value_dim(p); /* the vector divides the value's columns too */
    while (vw * 2 <= vw_max && p->head_dim % (vw * 2) == 0 && dv % (vw * 2) == 0) vw *= 2;
    const int32_t regs = vw > 1 ? vector_registers(dev) : 0;
    /* chunks are whole multiples of the work-group (rows per work-item) and of the vector (softmax) */
    const int32_t step = wg > vw ? wg : vw;
    int32_t chunk = t.chunk_rows < step ? step : t.chunk_rows / step * step;

    const int64_t group = p->num_heads / p->num_kv_heads;
    /* with RoPE the kernel keeps each query token's cos/sin pairs: 8 bytes x S1 x rope_dim / 2 */
    const int64_t rope_local = p->rope ? 4 * p->seq_q * p->rope_dim : 0;
    const int64_t budget = local_budget(p, dev, &t);
    const int64_t mh = multi_heads(p, dev, &t, vw, regs, chunk, budget);
    /* All KV heads per work-group: a chunk is N_kv x D elements per position, so the chunk shrinks until one
     * tensor's rows of it fit multi_head_chunk_bytes, which keeps a chunk's K and V in the L2 between the score
     * and P.V passes of every head (MHA, N_kv = 32, D = 128 fp16: 64 rows 7.7-9.0 ms, 16 rows 4.6-6.2;
     * docs/performance.md, Zen 3, 2026-11-24). */
    /* With one query row per KV head (G x S1 = 1) a chunk's passes are short and its K and V come in bursts:
     * chunks of 32 KiB per tensor ran 1.11-1.19x faster cold than 128 KiB (N_kv = 8 and 16, D = 128, Zen 4;
     * G = 4 1.17x slower; Zen 4, 2026-11-25). */
    /* With 16 vector registers (AVX2) chunks of 32 KiB per tensor at any G and S1: on the 2-core Zen 3 (a
     * 512 KiB L2 a core, half Zen 4's) 128 KiB ran 1.1-1.9x slower cold at D = 128, G = 1 to 8, and MHA; level
     * at D = 64 (64 KiB before) and D = 256, G = 16 (docs/performance.md, Zen 3, 2026-11-28). */
    const int32_t chunk_bytes = regs == 16 && t.multi_head_chunk_bytes_16 > 0 ? t.multi_head_chunk_bytes_16
                                : group * p->seq_q == 1 && regs >= 32 && t.multi_head_chunk_bytes_g1 > 0
                                    ? t.multi_head_chunk_bytes_g1
                                    : t.multi_head_chunk_bytes;
    if (mh > 1 && chunk_bytes > 0) {
        int64_t cap = chunk_bytes / kv_row_bytes(p) / step * step;
        if (cap < step) cap = step;
        if (cap < chunk) chunk = (int32_t)cap;
    }
    /* Shrink the chunk before splitting the heads: splitting makes K/V be read once per head group. Where even
     * the smallest chunk leaves the heads split, the full chunk is kept and the heads split at it: each chunk
     * costs a rescale of every accumulator, which at a few rows per chunk costs more than the split saves
     * (MLA, G = 128, D + D_v = 1088 on a 512 KiB CPU budget: chunks of 8 rows in 2 groups against 64 rows in
     * 2 groups; docs/performance.md, Zen 3, 2026-11-24). */
    const int32_t full_chunk = chunk;
    while (chunk > step && block_bytes(p, mh * group, chunk) > budget) chunk -= step;
    if (block_bytes(p, mh * group, chunk) > budget && block_bytes(p, 1, full_chunk) <= budget) chunk = full_chunk;
    int64_t groups, per_group;
    IFA__TRY(fit_heads(p, mh * group, chunk, budget, &per_group, &groups));
    /* The lane shape holds at most 8 query rows: where the row asks for it (lane_head_groups) and more rows share
     * a KV head than the row's lane_group_rows (8, or fewer: each row's query and accumulator columns take 16
     * registers, and 8 rows' kernels 231-242 on an H100, 2 work-groups a multiprocessor), the heads go in even
     * groups of up to that many rows, each group reading the head's K and V again (at about the same time, so
     * mostly from the L2) instead of all of them in the work-group shape's per-row loads (on an H100 8-row
     * groups beat cv on docs/templates.md's G >= 16 rows by 1.42-1.76x). */
    /* The matrix shape (mma) takes up to 16 rows a group, its products' 16-row side; where only the transposed
     * one fits (D above 128, int8 token scales), up to 8, its 8-column side; fewer where the row's
     * mma_group_rows says (8 at G = 16: the transposed shape in two groups instead of the other in one). */
    const int matrix = ifa__mma_wanted(p, &t) && vw == 1 && mh == 1 ? ifa__mma_shape(p, t.mma, p->seq_q, wg) : 0;
    const int64_t mma_rows = matrix >= 3 && ifa__mma_shape(p, 1, p->seq_q, wg) == 0 ? 8 : 16;
    /* ifa__lanes_fit's rows: fewer where a lane takes several chunks; with more query tokens than that, as many as the
     * query read from local memory leaves room for (speculative decoding's 8 or 16 tokens: a head a group) */
    const int64_t chunks = ifa__lanes_chunks(p), lane_cap = ifa__lane_rows_most(0) / chunks;
    int64_t lane_rows = matrix ? (t.mma_group_rows >= 1 && t.mma_group_rows < mma_rows ? t.mma_group_rows : mma_rows)
                        : t.lane_group_rows >= 1 && t.lane_group_rows <= lane_cap ? t.lane_group_rows : lane_cap;
    if (!matrix && p->seq_q > lane_rows && p->seq_q * chunks <= ifa__lane_rows_most(1))
        lane_rows = ifa__lane_rows_most(1) / chunks;
    if ((matrix || t.lanes > 0) && t.lane_head_groups && vw == 1 && mh == 1 && per_group * p->seq_q > lane_rows &&
        p->seq_q <= lane_rows) {
        const int64_t cap = lane_rows / p->seq_q, g2 = (group + cap - 1) / cap, per2 = (group + g2 - 1) / g2;
        if (g2 <= INT32_MAX && (matrix ? ifa__mma_shape(p, t.mma, per2 * p->seq_q, wg) != 0
                                       : ifa__lanes_fit(p, per2 * p->seq_q, wg, t.lanes, 1)))
            groups = g2, per_group = per2;
    }
    /* The latent tile takes 16 rows a group (the products' 16-row side), the heads in even groups, where it takes
     * them (ifa__shape_choose asks the same): its local memory (a row's D floats, not the work-group shape's D +
     * D_v + a chunk) is what fit_heads' rows assumed */
    if (ifa__mla_tile_wanted(p, &t, wg, vw, mh)) {
        const int64_t cap = 16 / p->seq_q, g2 = (group + cap - 1) / cap, per2 = (group + g2 - 1) / g2;
        if (g2 <= INT32_MAX && ifa__mla_tile_takes(p, &t, dev, per2 * p->seq_q, wg, vw, mh, budget))
            groups = g2, per_group = per2;
    }
    plan->kv_heads_per_group = (int32_t)mh;
    plan->head_groups = (int32_t)groups;
    plan->heads_per_group = (int32_t)per_group;
    plan->work_group_size = wg;
    plan->chunk_rows = chunk;
    plan->vector_width = vw;
    plan->pv_rows = vw > 1 ? pv_rows(p, ifa__tile_rows(plan), plan->kv_heads_per_group, regs) : 0;
    plan->pv_block = pv_block(p, vw, &t, plan->pv_rows, regs);
    /* the four-key-row score step holds 4 x score_rows accumulators, 4 key vectors and a query vector: 21 of
     * 32 registers with 4 rows; with 16 registers 2 rows (4 rows spill: G = 16, D = 128, 192 -> 177 us) */
    plan->vector_registers = regs;
    plan->score_rows = vw > 1 ? (regs >= 32 ? 4 : 2) : 0;
    plan->prefetch_rows = vw > 1 ? prefetch_rows(p, &t, mh) : 0;
    plan->pv_prefetch = pv_prefetch(&t, plan->prefetch_rows, group * p->seq_q, regs, p->paged);
    /* All KV heads per work-group, with P.V asking for each next chunk's keys: the score pass's own key
     * prefetch reaches only a few rows past the chunk, so a short distance in bytes (8 KiB, twice one head's 16
     * rows at D = 128) serves, and prefetch_rows whole rows (32 KiB at N_kv = 8, D = 128) ran up to 1.1x slower cold on
     * Zen 4 (G = 1 to 4, S1 = 2, pools; Zen 4, 2026-11-25). Without that P.V prefetch (G = 8) the full
     * distance stays: 2 rows there were 1.15x slower. With 16 registers (AVX2, where P.V prefetches at G x S1 <= 2)
     * the same: Zen 3, cold, against 16 rows, BSND G = 1 0.74-0.82, BSH 0.78, 16-row pool 0.73, G = 2 0.86, S1 = 2
     * 0.76-0.87, B = 1 split 0.81, MHA 0.92-0.96, D = 64 0.92-1.01 (Zen 3, 2026-11-28). */
    if (mh > 1 && plan->pv_prefetch && t.multi_head_prefetch_bytes > 0) {
        const int64_t want = (t.multi_head_prefetch_bytes + kv_row_bytes(p) - 1) / kv_row_bytes(p);
        if (want < plan->prefetch_rows) plan->prefetch_rows = (int32_t)(want > 0 ? want : 1);
    }
    /* All KV heads per work-group: each head's tiles ask for their share of the step's K and V lines among
     * their own FMAs, where the row says so, with 32 registers (measured on AVX-512 only, Intel and AMD: D = 128
     * G = 4 BSND, cold, 7.2 -> 6.0-6.1 ms and 8.8 -> 6.2 median; G = 1 cold on AMD within the noise of the
     * burst, ahead of it in cache; Xeon, 2026-11-25 and Zen 4, 2026-11-25) */
    plan->spread_prefetch = mh > 1 && plan->prefetch_rows > 0 && regs >= 32 && t.spread_prefetch != 0;
    plan->batch_fast = t.batch_fast != 0;
    const int64_t base = block_bytes(p, plan->heads_per_group, chunk);
    ifa__shape_choose(p, dev, &t, budget, base, plan, NULL);
    plan->local_mem_bytes = ifa__shape_local_bytes(p, dev, plan, base) + rope_local;
    plan->num_work_groups = p->batch * ifa__plan_blocks(plan);

    /* the latent tile's own split floor (mma_mla_split_tokens): its work-groups hold 16 heads each, so a batch of one
     * has few of them at the row's */
    if (plan->mma == 7 && t.mma_mla_split_tokens > 0) t.split_min_tokens = t.mma_mla_split_tokens;
    choose_split(p, dev, &t, 1, plan);
    if (p->has_prefix) {
        /* Cascade: one pass over the prefix per KV head holds the query rows of every batch (B x G virtual
         * heads, as many per work-group as fit), so the prefix is read ceil(B*G / rows per group) times instead
         * of B times; each row's own part becomes partials that the combine merges with the prefix's. */
        int64_t pgroups, pper;
        IFA__TRY(fit_heads(p, p->batch * group, chunk, budget, &pper, &pgroups));
        if (pgroups > INT32_MAX) return ifa__fail(IFA_STATUS_UNSUPPORTED_SHAPE, "shared prefix: too many row groups");
        plan->prefix_heads_per_group = (int32_t)pper;
        plan->prefix_head_groups = (int32_t)pgroups;
        plan->prefix_slots = 1;
        const int64_t prefix_rows = pper * p->seq_q;
        plan->prefix_pv_rows =
            vw > 1 ? pv_rows(p, prefix_rows < IFA_MAX_TILE_ROWS ? prefix_rows : IFA_MAX_TILE_ROWS, 1, regs) : 0;
        plan->prefix_pv_block = pv_block(p, vw, &t, plan->prefix_pv_rows, regs);
        plan->prefix_pv_prefetch = pv_prefetch(&t, plan->prefetch_rows, prefix_rows, regs, 0); /* a tensor of its own */
        if (plan->split_kv != IFA_SPLIT_PARTIAL_ROWMAX) {
            /* one split per batch (balanced units and global rowmax have no prefix slot) */
            const int64_t len = p->max_length > 0 ? p->max_length : 1;
            plan->split_kv = IFA_SPLIT_PARTIAL_ROWMAX;
            plan->split_tokens = (int32_t)((len + chunk - 1) / chunk * chunk);
            plan->max_splits = 1;
            plan->units = 0, plan->total_cost = 0, plan->block_cost_rows = 0;
        }
        plan->combine_work_group_size = combine_wg(dev, &t);
        const int64_t prefix_local = block_bytes(p, pper, chunk) + rope_local;
        if (prefix_local > plan->local_mem_bytes) plan->local_mem_bytes = prefix_local;
    }
    plan->num_work_groups =
        plan->split_kv == IFA_SPLIT_BALANCED ? plan->units : plan->num_work_groups * plan->max_splits;
    if (p->has_prefix) plan->num_work_groups += p->num_kv_heads * plan->prefix_head_groups;
    /* The last split of a block combines it where the row says so (CPU: a launch less saves PoCL's 30-60 us wait
     * between kernels; the row's 1) or where that split's share is small (a row's value above 1: at most that
     * many partial values, splits x rows x D_v, since one work-group reads them all while the combine kernel
     * spreads them over a work-group per row: on the H100 8192 of them fused ran faster, 32768 slower).
     * Partial rowmax only: the combine's rows are the block's own, with no prefix slot and no padding tokens to
     * write. Balanced units by their own value (fused_balanced), where no unit's stretch is empty (the slots
     * between a block's first and last unit then all hold its pieces) and a block's cost fits the int32 counter
     * its pieces add their cost positions to; a block's pieces are at most ceil(its cost / the shortest stretch)
     * + 1. */
    const int64_t counters = p->batch * ifa__plan_blocks(plan);
    const int64_t rows_dv = (int64_t)plan->heads_per_group * p->seq_q * ifa__value_dim(p);
    int fuse = 0;
    if (plan->split_kv == IFA_SPLIT_PARTIAL_ROWMAX) {
        fuse = t.fused_combine == 1 || (t.fused_combine > 1 && plan->max_splits * rows_dv <= t.fused_combine);
    } else if (plan->split_kv == IFA_SPLIT_BALANCED && plan->total_cost >= plan->units &&
               p->max_length + plan->block_cost_rows <= INT32_MAX) {
        const int64_t stretch = plan->total_cost / plan->units, bcost = p->max_length + plan->block_cost_rows;
        const int64_t pieces = (bcost + stretch - 1) / stretch + 1;
        fuse = t.fused_balanced == 1 || (t.fused_balanced > 1 && pieces * rows_dv <= t.fused_balanced);
    }
    plan->fused_combine = fuse && !p->has_prefix && !p->q_lengths && counters <= INT32_MAX;
    plan->combine_counters = plan->fused_combine ? (int32_t)counters : 0;

    workspace_cursor ws = {0};
    place_common(p, plan, &ws);
    if (plan->split_kv == IFA_SPLIT_BALANCED) {
        const int64_t slots = 2 * (int64_t)plan->units * plan->heads_per_group * p->seq_q;
        plan->ws_prefix_offset = place(&ws, 8 * (p->batch + 1));
        plan->ws_part_acc_offset = place(&ws, 4 * slots * dv);
        plan->ws_part_m_offset = place(&ws, 4 * slots);
        plan->ws_part_l_offset = place(&ws, 4 * slots);
    } else if (plan->split_kv != IFA_SPLIT_NONE) {
        const int64_t rows = p->batch * p->num_heads * p->seq_q * ((int64_t)plan->max_splits + plan->prefix_slots);
        plan->ws_part_acc_offset = place(&ws, 4 * rows * dv);
        plan->ws_part_m_offset = place(&ws, 4 * rows);
        plan->ws_part_l_offset = place(&ws, 4 * rows);
    }
    plan->workspace_bytes = ws.used;
    return make_key(plan, &plan->tiling_key);
}

/* Several KV heads per work-group only where the planner puts them (multi_heads): all of them, in one head group. */
static int multi_heads_consistent(const ifa_plan *plan) {
    const ifa_problem *p = &plan->problem;
    const int32_t mh = plan->kv_heads_per_group;
    if (mh < 1 || p->num_kv_heads % mh != 0) return 0;
    return mh == 1 || (mh == p->num_kv_heads && plan->template_id == IFA_TEMPLATE_ALL_VECTOR && plan->vector_width > 1 &&
                       p->layout != IFA_LAYOUT_BNSD && p->antiquant == IFA_ANTIQUANT_NONE && !p->has_prefix &&
                       plan->head_groups == 1 && plan->heads_per_group == mh * (p->num_heads / p->num_kv_heads));
}

/* The cv template's fields agree with the problem and with each other (all zero for all_vector). */
static int cv_consistent(const ifa_plan *plan) {
    const ifa_problem *p = &plan->problem;
    if (plan->template_id != IFA_TEMPLATE_CV)
        return plan->template_id == IFA_TEMPLATE_ALL_VECTOR && plan->cv_entries == 0 && plan->cv_rows == 0 &&
               plan->cv_steps == 0 && plan->cv_work_group_size == 0;
    const int64_t g = p->num_heads / p->num_kv_heads, m = g * p->seq_q, dv = ifa__value_dim(p);
    const int64_t entries = p->batch * p->num_kv_heads * plan->max_splits;
    const int64_t rows = ifa__cv_entry_rows(plan);
    return !p->has_prefix && (plan->split_kv == IFA_SPLIT_NONE || plan->split_kv == IFA_SPLIT_PARTIAL_ROWMAX) &&
           plan->max_splits >= 1 && (plan->split_kv || plan->max_splits == 1) && plan->cv_entries == entries &&
           plan->cv_rows == m && plan->heads_per_group == g && plan->head_groups == 1 && plan->vector_width == 1 &&
           plan->cv_work_group_size == plan->work_group_size && plan->combine_work_group_size >= 1 &&
           (plan->cv_work_group_size & (plan->cv_work_group_size - 1)) == 0 &&
           plan->cv_steps == (rows + plan->chunk_rows - 1) / plan->chunk_rows &&
           plan->ws_cv_q_offset >= 0 && plan->ws_cv_k_offset >= plan->ws_cv_q_offset + 4 * entries * m * p->head_dim &&
           plan->ws_cv_v_offset >= plan->ws_cv_k_offset + 4 * entries * plan->chunk_rows * p->head_dim &&
           plan->ws_cv_s_offset >= plan->ws_cv_v_offset + 4 * entries * plan->chunk_rows * dv &&
           plan->ws_part_acc_offset >= plan->ws_cv_s_offset + 4 * entries * m * plan->chunk_rows &&
           plan->ws_part_m_offset >= plan->ws_part_acc_offset + 4 * entries * m * dv &&
           plan->ws_part_l_offset >= plan->ws_part_m_offset + 4 * entries * m &&
           plan->workspace_bytes >= plan->ws_part_l_offset + 4 * entries * m;
}

ifa_status ifa__plan_check(const ifa_plan *plan) {
    if (!plan) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "plan is NULL");
    if (plan->magic != IFA_PLAN_MAGIC)
        return ifa__fail(IFA_STATUS_INVALID_PLAN, "plan magic is 0x%08" PRIx32 ", not 0x%08x: not a plan from "
                         "get_workspace_size", plan->magic, IFA_PLAN_MAGIC);
    if (plan->version != IFA_PLAN_VERSION)
        return ifa__fail(IFA_STATUS_INVALID_PLAN, "plan version %" PRIu32 " is not this library's %u", plan->version,
                         IFA_PLAN_VERSION);
    /* the per-field rules of include/ifa/plan_fields.h: padding 0, flags 0 or 1 */
#define IFA_FIELD_RULE(where, name, flags)                                                                         \
    if (((flags) & IFA_FIELD_PAD) && where name != 0)                                                               \
        return ifa__fail(IFA_STATUS_INVALID_PLAN, "plan field %s is %" PRId64 "; padding must be 0", #name,          \
                         (int64_t)where name);                                                                      \
    if (((flags) & IFA_FIELD_BOOL) && where name != 0 && where name != 1)                                           \
        return ifa__fail(IFA_STATUS_INVALID_PLAN, "plan field %s is %" PRId64 "; it must be 0 or 1", #name,          \
                         (int64_t)where name);
#define IFA_PROBLEM_FIELD(type, name, flags, doc) IFA_FIELD_RULE(plan->problem., name, flags)
#define IFA_PLAN_FIELD(type, name, flags, doc) IFA_FIELD_RULE(plan->, name, flags)
#include "ifa/plan_fields.h"
#undef IFA_PROBLEM_FIELD
#undef IFA_PLAN_FIELD
#undef IFA_FIELD_RULE
    if (plan->problem.num_kv_heads < 1 || plan->problem.num_heads < plan->problem.num_kv_heads ||
        plan->problem.batch < 1 || plan->problem.head_dim < 1 || plan->problem.seq_q < 1 || plan->problem.seq_q > 16 ||
        plan->problem.value_dim < 0 || plan->problem.value_dim > plan->problem.head_dim)
        return ifa__fail(IFA_STATUS_INVALID_PLAN, "plan problem sizes are out of range");
    if (plan->shape != ifa__shape_of(plan))
        return ifa__fail(IFA_STATUS_INVALID_PLAN, "plan shape %d is not the %s shape its fields describe", (int)plan->shape,
                         ifa__shape_name(ifa__shape_of(plan)));
    uint64_t key;
    IFA__TRY(make_key(plan, &key));
    if (key != plan->tiling_key)
        return ifa__fail(IFA_STATUS_INVALID_PLAN, "plan tiling_key %" PRIu64 " does not match its fields (%" PRIu64 ")",
                         plan->tiling_key, key);
    if (plan->vector_width > 1 && (plan->score_rows < 1 || plan->score_rows > 4))
        return ifa__fail(IFA_STATUS_INVALID_PLAN, "plan score_rows %d: the vector shape (vector_width %d) scores tiles "
                         "of 1 to 4 query rows", (int)plan->score_rows, (int)plan->vector_width);
    const int64_t head_rows = plan->problem.num_heads / plan->problem.num_kv_heads * plan->problem.seq_q;
    if (plan->vector_width > 1 &&
        (plan->pv_rows < 1 || plan->pv_rows > IFA_MAX_TILE_ROWS ||
         (plan->kv_heads_per_group > 1 && head_rows % plan->pv_rows != 0) ||
         (plan->problem.has_prefix && (plan->prefix_pv_rows < 1 || plan->prefix_pv_rows > IFA_MAX_TILE_ROWS))))
        return ifa__fail(IFA_STATUS_INVALID_PLAN, "plan pv_rows %d (prefix %d): the vector shape's P.V blocks are 1 to 8 "
                         "query rows, and with several KV heads per work-group they divide one head's %" PRId64,
                         (int)plan->pv_rows, (int)plan->prefix_pv_rows, head_rows);
    if (plan->work_group_size < 1 || plan->chunk_rows < plan->work_group_size || plan->vector_width < 1 ||
        plan->vector_width > 16 || (plan->vector_width & (plan->vector_width - 1)) != 0 ||
        plan->problem.head_dim % plan->vector_width != 0 || ifa__value_dim(&plan->problem) % plan->vector_width != 0 ||
        plan->chunk_rows % plan->vector_width != 0 ||
        plan->pv_block < 1 || plan->pv_block > 16 ||
        plan->prefetch_rows < 0 || plan->prefetch_rows > (1 << 20) || (plan->vector_width == 1 && plan->prefetch_rows) ||
        (plan->pv_prefetch && !plan->prefetch_rows) ||
        (plan->prefix_pv_prefetch && (!plan->prefetch_rows || !plan->prefix_slots)) ||
        (plan->spread_prefetch &&
         (!plan->prefetch_rows || plan->kv_heads_per_group < 2 || plan->vector_registers < 32)) ||
        plan->chunk_rows % plan->work_group_size != 0 || plan->heads_per_group < 1 || plan->head_groups < 1 ||
        (int64_t)plan->heads_per_group * plan->head_groups < plan->problem.num_heads / plan->problem.num_kv_heads ||
        plan->workspace_bytes < plan->ws_lengths_offset + plan->ws_lengths_bytes ||
        (plan->problem.q_lengths && (plan->problem.lengths_mode != IFA_LENGTHS_PER_BATCH ||
                                     plan->ws_lengths_bytes < 8 * plan->problem.batch)) ||
        (plan->split_kv != IFA_SPLIT_NONE && plan->split_kv != IFA_SPLIT_BALANCED &&
         (plan->max_splits < 2 - plan->prefix_slots || plan->split_tokens < plan->chunk_rows ||
          plan->combine_work_group_size < 1 ||
          plan->workspace_bytes < plan->ws_part_l_offset + 4 * plan->problem.batch * plan->problem.num_heads *
                                                               plan->problem.seq_q *
                                                               ((int64_t)plan->max_splits + plan->prefix_slots))) ||
        (plan->problem.has_prefix &&
         (plan->prefix_slots != 1 || plan->split_kv != IFA_SPLIT_PARTIAL_ROWMAX || plan->prefix_heads_per_group < 1 ||
          plan->prefix_head_groups < 1)) ||
        (!plan->problem.has_prefix && plan->prefix_slots != 0) ||
        (plan->fused_combine &&
         ((plan->split_kv != IFA_SPLIT_PARTIAL_ROWMAX &&
           (plan->split_kv != IFA_SPLIT_BALANCED || plan->total_cost < plan->units ||
            plan->problem.max_length + plan->block_cost_rows > INT32_MAX)) ||
          plan->problem.has_prefix || plan->problem.q_lengths || plan->template_id != IFA_TEMPLATE_ALL_VECTOR ||
          plan->combine_counters != plan->problem.batch * ifa__plan_blocks(plan))) ||
        (!plan->fused_combine && plan->combine_counters != 0) ||
        (plan->mma_cvt && (!plan->mma || plan->problem.kv_dtype != IFA__KV_E4M3)) ||
        (plan->split_kv == IFA_SPLIT_BALANCED &&
         (plan->units < 2 || plan->block_cost_rows < 1 || plan->combine_work_group_size < 1 || plan->total_cost < 1 ||
          plan->workspace_bytes <
              plan->ws_part_l_offset + 8 * (int64_t)plan->units * plan->heads_per_group * plan->problem.seq_q)) ||
        (plan->problem.paged && plan->workspace_bytes < plan->ws_table_offset + 4 * plan->problem.batch *
                                                                                  plan->problem.table_cols) ||
        (plan->problem.rope && (plan->ws_rope_bytes < 8 * plan->problem.batch ||
                                plan->workspace_bytes < plan->ws_rope_offset + plan->ws_rope_bytes)) ||
        !cv_consistent(plan) || !multi_heads_consistent(plan) || !ifa__shape_consistent(plan))
        return ifa__fail(IFA_STATUS_INVALID_PLAN, "plan sizes are inconsistent (work_group_size %d, chunk_rows %d, "
                         "heads_per_group %d, head_groups %d)", (int)plan->work_group_size, (int)plan->chunk_rows,
                         (int)plan->heads_per_group, (int)plan->head_groups);
    return IFA_STATUS_OK;
}
