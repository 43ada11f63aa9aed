/* The tuning table. Each number here was chosen by measurement; docs/tiling.md says which. */
#include "tiling/tuning_table.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiling/device_facts.h"

/* Rows in full; Intel CPUs take the CPU row with their measured differences (intel_row below). */
static const ifa_tuning table[IFA_VENDOR_CPU_INTEL] = {
    /* vendor, work_group_size, chunk_rows, local_mem_reserve, split_min_tokens, split_waves, combine_wg,
     * split_rowmax (partial rowmax until the GPU measurement of docs/tiling.md says otherwise: global
     * rowmax reads K twice), block_cost_rows, balance_milli, vector_width, pv_block, append_work_group_size,
     * cv_min_rows, cv_chunk_rows, cv_workspace_mib, cv_work_group_size, multi_head_rows, append_heads, vector_loads,
     * prefetch_rows, batch_fast, multi_head_chunk_bytes, multi_head_min_slice_bytes, multi_head_min_row_bytes,
     * strided_prefetch_bytes, pv_prefetch_rows, pv_prefetch_rows_16, pv_prefetch_paged, buffer_offset,
     * spread_prefetch, multi_head_prefetch_bytes, multi_head_chunk_bytes_g1, key_tile, lanes, lane_prefetch, lane_head_groups, lane_scores,
     * mma, lane_group_rows, small_grid_work_group_size, split_fill,
     * lane_q_local, mma_int8, mma_bf16 (1 in the NVIDIA row since the thirty-fifth session), mma_group_rows (0 in
     * every row: the shape's most; 8, the transposed shape at G = 16 in two groups, measured 1.05x slower than one
     * group of 16 on an H100), fused_combine (NVIDIA: everywhere since the fortieth session, below),
     * lane_split_waves (NVIDIA: 4, the lane shape's waves since the twenty-seventh session; 0 elsewhere:
     * split_waves), mma_float8 (1 in the NVIDIA row since the fortieth session, below), mma_int4 (0 in every row:
     * int4 K/V in the matrix shapes ran 3-8x faster than the work-group shape on an H100, 2026-11-27, but its
     * checks on the card did not finish in that call; NVIDIA's int4 plans keep the work-group shape until one
     * does), mma_q_local (0 in every row: written in the fortieth session, unmeasured; by nv-regs int8 with
     * per-channel scales under mma 5 196 -> 142 registers, 2 -> 3 work-groups a multiprocessor; since the fifty-third
     * session also D = 256's and mma 4's words, converted once instead of at each step), mma_f8_cvt (0 in
     * every row: e4m3fn by cvt.rn.f16x2.e4m3x2, fortieth session, unmeasured; nv-regs 186 -> 146 registers; the
     * planner takes it on NVIDIA from compute capability 8.9 only, the instruction's), multi_head_chunk_bytes_16
     * (0 but in the CPU row, below), mma_mla (0 in every row: the latent tile for DeepSeek's MLA, fifty-sixth
     * session, CPU-checked and counted offline, unmeasured on a card; MLA keeps the lane shape until one is),
     * mma_mla_split_tokens (128 in the NVIDIA row, a starting value for the tile's splits: at the row's 512 a batch
     * of one at G = 16, S = 8192 has 16 work-groups for 132 units, at 128 64; 0 elsewhere), split_min_work (4096 in
     * the CPU rows, below; 0 in the GPU rows, whose splits the waves and their own floors size), fused_balanced
     * (the last piece of a balanced block combines it: 1 in the CPU rows, DeepSeek's MLA with lengths 4096 and 1024
     * on 2 Zen 4 cores 0.92x of the time at G = 16 and 0.96x at G = 128, 2,8,1,128 with 8192 and 2048 0.91x,
     * fifty-eighth session; 0 in the GPU rows until a card times it: scripts/gpu-measure's part fusedbal, whose
     * verdict says whether the NVIDIA row takes 1 or the equal splits' cap of 8192 partial values), pv_block_8rows
     * (1 in the CPU row, below; 0 elsewhere).
     * GPUs: the generic GPU row keeps the starting values (cv never chosen by itself, no 8-wide loads, no
     * key tile, no lane shape) until a GPU other than NVIDIA's measures them. */
    [IFA_VENDOR_GENERIC_GPU] = {IFA_VENDOR_GENERIC_GPU, 128, 128, 1024, 512, 2, 64, 1, 32, 1100, 1, 1, 64, 0, 512, 256, 64, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    /* NVIDIA: since the fortieth session (H100, 2026-11-27, docs/performance.md) the fused combine everywhere
     * (fused_combine 1: seven-shape geometric mean 87.7 -> 85.8 us once the last work-group's combine took one
     * round trip for 16 splits: B = 1 32K 64.3 -> 59.3, D = 256 77.3 -> 72.9, the rest level) and float8 K/V in
     * the matrix shapes (mma_float8 1: against the work-group shape 0.08-0.25x the time on the peer's 11 shapes
     * for both formats, e5m2 at 79-100 % of the read bandwidth on the large rows, e4m3fn 56-71 %; two steps in
     * flight, mma_float8 2, 1.0-1.15x the time of one; the float8 feature cases and every code, and the 11
     * e4m3fn rows, checked against float64 on the card).
     * Since the thirty-fifth session (H100, 2026-11-27, docs/performance.md) the transposed matrix shape
     * with each step's rows loaded during the step before where it fits (mma 5: G <= 8, D a multiple of 64 up to
     * 256; mma 1 at G = 9-16), 2 waves of splits and 256-wide combine work-groups: seven-shape geometric mean
     * 117.1 us (mma 1, 4 waves) -> 112.6 (mma 5) -> 108.0 (2 waves; B = 1 32K 83 -> 69 us, 8,64,8 16K 212 -> 198);
     * mma 3 112.2, the lean variants 2 and 4 177.5 and 137.9, 256-row splits 120.5, the fused combine everywhere
     * 110.7: faster where a block's last split reads few partial values (splits x rows x D_v: B = 1 8192, 8192 of
     * them, 30.9 -> 27.2 us; G = 16 D = 64, 2048, 75.7 -> 68.8; B = 16 8K, 2048, 200.7 -> 197.5; MHA B = 1 32K,
     * 2048, 198.8 -> 195.1; G = 8 16K, 8192, 211.7 -> 212.2), slower where many (B = 1 32K, 32768, 83.3 -> 89.6;
     * D = 256, 32768, 140.0 -> 148.9), hence fused_combine 8192 (those figures under 4 waves); the combine's
     * 256-wide work-groups against 64: B = 1 32K (64 splits) 90.6 -> 82.3 us, B = 1 8192 34.7 -> 33.8; the 2 waves
     * for the matrix shape only (203 registers: 2 work-groups a multiprocessor), the other shapes keep 4
     * (lane_split_waves); int8 (per-channel) and bf16 K/V in the transposed shape (mma_int8, mma_bf16) against the lane
     * shape: 1.81x and 1.20x in geometric mean over three shapes, all checked against float64 on the card.
     * Before, the matrix shape where it fits (mma 1: fp16 Q and K/V, D a multiple of 32 up to 128; H100, twenty-ninth
     * session: seven-shape geometric mean 169.2 -> 125.6 us, G = 16 D = 64 216 -> 74, G = 8 439 -> 227, B = 16 8K
     * 252 -> 213, B = 1 8192 47 -> 37; B = 1 32K 109 -> 122: 180 registers, 2 work-groups a multiprocessor), and
     * elsewhere the generic GPU row with the lane shape at 2 rows a step with the transposing butterfly (lanes 2,
     * lane_scores 1), more than 4 query rows per KV head in head groups of 4 rows of the lane shape
     * (lane_head_groups 1, lane_group_rows 4) instead of cv (cv_min_rows 0), 4 waves of splits cut to whole
     * waves (split_fill 1). On an H100 (2026-11-26, twenty-ninth session, docs/performance.md): whole waves took
     * the seven-shape geometric mean from 187.9 to 176.7 us (B = 16 8K 346 -> 250 us, 5 -> 4 splits; 8,64,8 16K
     * 510 -> 449), head groups of 4 rows on top to 168.6 (G = 16 D = 64 274 -> 216 us, 2 -> 1 splits; D = 256
     * G = 8 146 -> 140); the register cap (max_registers) does not build: the driver rejects
     * "-cl-nv-maxrregcount N"; the query from local memory (lane_q_local) 215.7, 256-wide groups 200-203, 64- and
     * 128-row splits 196-202. Before, on an H100 (2026-11-26, twenty-eighth session,
     * docs/performance.md): the butterfly took the six-shape geometric mean from 206 us (lanes 4) to 190 at 4
     * rows a step and 182 at 2 (B = 1 32K 159 -> 110 us: 2 rows take 128 registers, 4 groups of 128 a
     * multiprocessor, 4 rows 137, 3 groups, and its 512 work-groups then run in 2 waves; the register cap tried,
     * max_registers, was not applied); next-step loads, 64-row splits, 256-wide groups and 2 waves mixed or
     * slower (256-wide groups helped B = 1 8192, 128 work-groups, 54 -> 45 us: small_grid_work_group_size 256
     * takes them where the grid has no more work-groups than units); with head groups
     * all_vector beat cv on every G >= 16 row of docs/templates.md by 1.42-1.76x. Before (twenty-seventh
     * session): on an H100 (driver 580, 2026-11-26, twenty-seventh session, docs/performance.md): the lane shape
     * at 4 rows a step beat one element per load by 3.5x in geometric mean over six shapes (726 -> 210 us; 2 rows
     * 216, 8 rows 251, 64-wide groups 307, 256-wide 212; the key tile 368), 4 waves of splits 201 (mixed: B = 1
     * 32K and B = 16 8K slower, MHA and G = 8 faster), split_min_tokens 128 204; with it all_vector won every
     * G <= 8 row of docs/templates.md by 2.06-3.52x and cv every G >= 16 row by 1.65-2.06x (16 of 16 rows right
     * at cv_min_rows 16). On an H200 before the lane shape: partial rowmax beat global by 1.27-1.62x
     * (split_rowmax 1); 8-wide loads were 1.2-1.43x slower than scalar ones (vector_loads 0). */
    [IFA_VENDOR_NVIDIA] = {IFA_VENDOR_NVIDIA, 128, 128, 1024, 512, 2, 256, 1, 32, 1100, 1, 1, 64, 0, 512, 256, 64, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 1, 5, 4, 256, 1, 0, 1, 1, 0, 1, 4, 1, 0, 0, 0, 0, 0, 128, 0, 0, 0},
    /* PoCL: one work-item per work-group with vectors along D up to 16 wide (the planner caps them at the
     * device's native width: 16 on AVX-512, 8 on AVX2), 128-row chunks and P.V blocks of up to 4 vectors per
     * query row (fewer where the register file is smaller); docs/performance.md has the measurements behind
     * each number. 128 rows against 64 (half the P.V accumulators' reloads and the softmax's per-chunk steps):
     * Zen 4, BNSD, in L3 0.93-0.97x of the time at G = 1 to 8 (D = 128), cold 0.91-0.99x at G = 4 to 16, G = 1
     * level; at 8 lanes (Zen 4 with AVX2's plans) level in L3 (fiftieth session; Intel, warm, G = 1 ~0.97x,
     * twenty-first). BSH/BSND work-groups hold all KV heads up to 64 query rows (G = 8, or G = 4 with S1 = 2, at
     * D = 128 on AVX2: 3.0 ms against 3.4-5.0 for half the heads and 3.6-5.0 for one; eighteenth session).
     * The append runs a row per work-item: 2.6x faster than 16 work-items with barriers (int8 prefill of
     * 41K tokens, D = 128: 463 vs 1222 ms). Software prefetch 16 key rows ahead (and each value row during
     * the scores): D = 128, G = 4, S = 8192 2.6-3.5 -> 1.5-2.1 ms; 8 to 64 rows measured alike. A BSH/BSND
     * work-group of one KV head among several prefetches 4 KiB of its head's key slices ahead: D = 64 fp16
     * (32 rows) 2.3 -> 1.7 ms, D = 128 fp16 (16 rows) unchanged; on AVX-512 all heads only where a head's slice is
     * 256 bytes or more (nineteenth session), at any row size since all heads' tiles share out a score step's
     * prefetches (spread_prefetch, 32 registers: Zen 4, BSND, cold, medians, 8,32,8,128,4096 one head 9.9 ms,
     * all heads 8.8, all heads spread 6.2; G = 1 7.7, 5.9, 6.3; 1,16,4,256,4096 one thread 1.74-1.81 -> 1.09;
     * twenty-fourth session; the Xeon's figures at intel_row). P.V prefetches the next
     * chunk's keys where a KV head has at most 64 query rows on AVX-512 (G = 1 and 4 measured faster: 1.9-2.0
     * -> 1.5-1.8 ms and 2.1-2.2 -> 2.0, nineteenth session; Zen 4, cold, against 4 rows, fifty-second session:
     * fp16 D = 256 G = 8 0.75x of the time, G = 16 0.92x, D = 128 G = 8 0.96x, G = 32 0.97x, D = 64 G = 8 0.97x,
     * 4 query tokens at G = 4 0.97x, bf16 0.97x, MLA G = 16 and 64 0.86x and 0.98x, BSH all heads 0.77-0.89x,
     * D = 128 G = 16 and int8/int4 level; in L3 level, BSH D = 128 G = 16 1.05-1.10x), at most 4 on AVX2 too since
     * P.V's loop lost its row-offset loads (G = 1 and 2
     * faster, G = 8 slower: D = 128, G = 8, BSND all heads 3.0 -> 4.4-4.7 ms, twentieth session; G = 4 cold BNSD
     * 0.83-0.96x of the time, BSND all heads 0.74-0.78x, 1.03-1.14x slower in L3, forty-fourth session), paged K/V
     * up to 2 query rows a KV head (Zen 4, cold, BNSD pools: 256-row blocks 1.14-1.4x faster with it, 16-row 5-7 %
     * slower, twenty-fourth session; G = 4 64-row blocks slower with it on Zen 4 and Zen 3: 1.05-1.15x). With all KV heads per
     * work-group and that next-chunk prefetch, the score pass asks for keys 8 KiB ahead instead of 16 rows
     * (Zen 4, BSND, cold, medians of 5-8 alternating rounds against 16 rows: 8,32,8,128,4096 (4 rows) 0.92,
     * G = 1 0.93, G = 2 0.94, S1 = 2 0.93, 256-row pool 0.91, 16-row pool 0.99, MHA N_kv = 16 (2 rows) 0.94;
     * twenty-fifth session), and with one query row per KV head in chunks of 32 KiB per tensor instead of
     * 128 (8,8,8,128,4096 16 rows 0.84 of 64, B = 1 split 0.84, ragged 0.89, 64-row pool 0.89, N_kv = 16
     * 0.90; G = 2 level, G = 4 1.17x slower; in L3 two threads 1.07x slower; the same session). With 16 vector
     * registers (AVX2) such chunks hold 32 KiB per tensor at any G (multi_head_chunk_bytes_16): on a Zen 3 (512 KiB
     * of L2 a core), BSND, cold, medians of 4 alternating rounds, time against 128 KiB: G = 1 0.70-0.87, BSH
     * 0.79, 16-row pool 0.79-0.80, G = 2 S1 = 2 0.79, G = 4 0.73 (1.10 in a noisier pass), 64-row pool G = 4
     * 0.72, G = 8 0.81-0.90, MHA N_kv = 32 0.75-0.78, B = 1 split 0.83; D = 64 (64 KiB chunks before) level
     * (G = 1 128 KiB ahead in 5 of 6 rounds by ~5 %); 64 KiB within the noise of 32; and there too the keys 8 KiB
     * ahead with all heads and P.V's prefetch (G x S1 <= 2): G = 1 0.74-0.82 of 16 rows' time, 16-row pool 0.73,
     * S1 = 2 0.76-0.87, MHA 0.92-0.96 (forty-third session). A split needs 1024 rows or 4096 x 1024 multiply-adds
     * (split_min_work: a work-group's query rows x (D + D_v) a key row), whichever is fewer rows: the rows alone kept
     * MLA and G >= 32 on one core below 2048 rows (Zen 4, cold, against the rows alone: MLA G = 16 at 512-1536 rows
     * 0.61-0.71x of the time, G = 128 at 256-1536 0.52-0.66x, G = 32 and 64 at D = 128 0.62-0.67x, BSND all heads
     * at G = 4 and 1024 rows 0.77x; splits of about 2 M multiply-adds were mixed, 0.77-1.2x; fifty-seventh session).
     * P.V blocks of 8 query rows hold one vector each, not 2 (pv_block_8rows): Zen 4, BNSD, in L3 and cold, medians
     * of 6-10 alternating rounds with a second copy of each variant, G = 8 and 16 at D = 64, 128 and 256 0.91-0.96x
     * of the time for fp16, bf16, int8, int4, e4m3fn and e5m2 (fp32 1.01-1.02x: no conversion, it keeps 2), BSND all
     * heads at G = 8 0.89x, G = 4 with 2 query tokens 0.95x, MLA G = 16 and 128 0.94-0.95x; the same loop in C with
     * intrinsics reached 100 % of the FMA peak at 8 x 1 against 87-89 % at 8 x 2 (sixty-first session). */
    [IFA_VENDOR_CPU] = {IFA_VENDOR_CPU, 1, 128, 0, 1024, 1, 16, 1, 32, 1100, 16, 4, 1, 0, 512, 64, 1, 64, 64, 0, 16, 1, 131072, 256, 0, 4096, 64, 4, 2, 0, 1, 8192, 32768, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 32768, 0, 0, 4096, 1, 1},
};

/* Intel CPUs: the CPU row, but all KV heads per BSH/BSND work-group at any slice size (no
 * multi_head_min_slice_bytes; the CPU row has no minimum row either): on the 2-core AVX-512 Xeon one head's strided
 * slices streamed 1.3-1.7x slower than all heads' whole rows, prefetched or not (N_kv = 8, D = 128, G = 1,
 * S = 8192: 2.48-2.66 -> 1.75-1.81 ms; D = 64 2.85-3.05 -> 1.69-1.73; N_kv = 16, D = 64, the AMD row's
 * counter-case, 2.88-2.92 -> 1.78-1.80; G = 8 level; twenty-first session). With paged KV, P.V does not
 * prefetch the next chunk's keys (pv_prefetch_paged 0): BNSD pools, 16- to 256-row blocks, D = 64 and 128,
 * G = 1 and 4, S = 8192, cold, 1.10-1.21x faster without it (contiguous KV level either way), BSND one head
 * per work-group 1.03-1.07x, BSND all heads level (twenty-second session). ifa_buffer_create starts its
 * buffers 640 bytes past a 2 MiB boundary: cold BNSD, at 0 bytes D = 128 G = 4 took 1.19-1.27x longer
 * (1,32,8,128,8192 1459-1511 us against 1185-1193; 2,32,8,128,32768 11.8-11.9 ms against 9.5), G = 1 1.14x
 * (1199-1222 against 1053), PoCL's own buffers 1.04-1.29x; the start repeats its effect every 1 KiB; BSND and
 * paged pools within 3 % (twenty-second session). The spread prefetch of the CPU row (all heads' register
 * tiles share out a score step's prefetches) was first measured here: BSND, cold, 8,32,8,128,4096 7.0-7.2 ->
 * 6.0-6.1 ms, 8,8,8,64,8192 5.7 -> 4.4, paged pools 1.15-1.19x (twenty-third session). P.V's next-chunk prefetch up
 * to the CPU row's 64 query rows per KV head (pv_prefetch_rows; it was 4 here): on a 2-core Emerald Rapids Xeon
 * (300 MiB L3), cold BNSD fp16, the limit of 4 took 1.19-1.23x the time at D = 256 G = 8, 1.08-1.23x at G = 16,
 * 1.04-1.06x at D = 128 G = 8 and 16; D = 64 G = 8 and int8 D = 256 G = 16 0.95-0.98x (within that VM's noise, as
 * measured by a second copy of a variant: up to 8 %; sixtieth section of docs/performance.md). */
static ifa_tuning intel_row(void) {
    ifa_tuning t = table[IFA_VENDOR_CPU];
    t.vendor = IFA_VENDOR_CPU_INTEL;
    t.multi_head_min_slice_bytes = 0;
    t.pv_prefetch_paged = 0;
    t.pv_prefetch_rows_16 = 2; /* 4 measured on AMD's Zen 3 only */
    t.buffer_offset = 640;
    t.multi_head_prefetch_bytes = 0; /* faster on Zen 4; with the next, level on Emerald Rapids (sixtieth session) */
    t.multi_head_chunk_bytes_g1 = 0;
    t.multi_head_chunk_bytes_16 = 0; /* measured on AMD's Zen 3 only */
    t.pv_block_8rows = 0;            /* measured on Zen 4 only, whose cores run a 512-bit FMA as two 256-bit halves */
    return t;
}

/* Every field but vendor, by its IFA_TUNING key, with the least value it takes (0 only where 0 means "off" or
 * "none"; at most 2^20): ifa__tuning_apply reads them and ifa__tuning_format writes them. */
static const struct {
    const char *key;
    size_t offset;
    long min;
} keys[] = {
    {"work_group_size", offsetof(ifa_tuning, work_group_size), 1},
    {"chunk_rows", offsetof(ifa_tuning, chunk_rows), 1},
    {"local_mem_reserve", offsetof(ifa_tuning, local_mem_reserve), 0},
    {"split_min_tokens", offsetof(ifa_tuning, split_min_tokens), 1},
    {"split_waves", offsetof(ifa_tuning, split_waves), 1},
    {"combine_work_group_size", offsetof(ifa_tuning, combine_work_group_size), 1},
    {"split_rowmax", offsetof(ifa_tuning, split_rowmax), 1},
    {"block_cost_rows", offsetof(ifa_tuning, block_cost_rows), 1},
    {"balance_milli", offsetof(ifa_tuning, balance_milli), 1},
    {"vector_width", offsetof(ifa_tuning, vector_width), 1}, {"pv_block", offsetof(ifa_tuning, pv_block), 1},
    {"append_work_group_size", offsetof(ifa_tuning, append_work_group_size), 1},
    {"cv_min_rows", offsetof(ifa_tuning, cv_min_rows), 0}, {"cv_chunk_rows", offsetof(ifa_tuning, cv_chunk_rows), 1},
    {"cv_workspace_mib", offsetof(ifa_tuning, cv_workspace_mib), 1},
    {"cv_work_group_size", offsetof(ifa_tuning, cv_work_group_size), 1},
    {"multi_head_rows", offsetof(ifa_tuning, multi_head_rows), 0},
    {"append_heads", offsetof(ifa_tuning, append_heads), 1}, {"vector_loads", offsetof(ifa_tuning, vector_loads), 0},
    {"prefetch_rows", offsetof(ifa_tuning, prefetch_rows), 0}, {"batch_fast", offsetof(ifa_tuning, batch_fast), 0},
    {"multi_head_chunk_bytes", offsetof(ifa_tuning, multi_head_chunk_bytes), 0},
    {"multi_head_min_slice_bytes", offsetof(ifa_tuning, multi_head_min_slice_bytes), 0},
    {"multi_head_min_row_bytes", offsetof(ifa_tuning, multi_head_min_row_bytes), 0},
    {"strided_prefetch_bytes", offsetof(ifa_tuning, strided_prefetch_bytes), 0},
    {"pv_prefetch_rows", offsetof(ifa_tuning, pv_prefetch_rows), 0},
    {"pv_prefetch_rows_16", offsetof(ifa_tuning, pv_prefetch_rows_16), 0},
    {"pv_prefetch_paged", offsetof(ifa_tuning, pv_prefetch_paged), 0},
    {"buffer_offset", offsetof(ifa_tuning, buffer_offset), 0},
    {"spread_prefetch", offsetof(ifa_tuning, spread_prefetch), 0},
    {"multi_head_prefetch_bytes", offsetof(ifa_tuning, multi_head_prefetch_bytes), 0},
    {"multi_head_chunk_bytes_g1", offsetof(ifa_tuning, multi_head_chunk_bytes_g1), 0},
    {"key_tile", offsetof(ifa_tuning, key_tile), 0}, {"lanes", offsetof(ifa_tuning, lanes), 0},
    {"lane_prefetch", offsetof(ifa_tuning, lane_prefetch), 0},
    {"lane_head_groups", offsetof(ifa_tuning, lane_head_groups), 0},
    {"lane_scores", offsetof(ifa_tuning, lane_scores), 0}, {"mma", offsetof(ifa_tuning, mma), 0},
    {"lane_group_rows", offsetof(ifa_tuning, lane_group_rows), 1},
    {"small_grid_work_group_size", offsetof(ifa_tuning, small_grid_work_group_size), 0},
    {"split_fill", offsetof(ifa_tuning, split_fill), 0}, {"lane_q_local", offsetof(ifa_tuning, lane_q_local), 0},
    {"mma_int8", offsetof(ifa_tuning, mma_int8), 0}, {"mma_bf16", offsetof(ifa_tuning, mma_bf16), 0},
    {"mma_group_rows", offsetof(ifa_tuning, mma_group_rows), 0},
    {"fused_combine", offsetof(ifa_tuning, fused_combine), 0},
    {"lane_split_waves", offsetof(ifa_tuning, lane_split_waves), 0},
    {"mma_float8", offsetof(ifa_tuning, mma_float8), 0}, {"mma_int4", offsetof(ifa_tuning, mma_int4), 0},
    {"mma_q_local", offsetof(ifa_tuning, mma_q_local), 0}, {"mma_f8_cvt", offsetof(ifa_tuning, mma_f8_cvt), 0},
    {"multi_head_chunk_bytes_16", offsetof(ifa_tuning, multi_head_chunk_bytes_16), 0},
    {"mma_mla", offsetof(ifa_tuning, mma_mla), 0},
    {"mma_mla_split_tokens", offsetof(ifa_tuning, mma_mla_split_tokens), 0},
    {"split_min_work", offsetof(ifa_tuning, split_min_work), 0},
    {"fused_balanced", offsetof(ifa_tuning, fused_balanced), 0},
    {"pv_block_8rows", offsetof(ifa_tuning, pv_block_8rows), 0}
};
enum { KEYS = sizeof keys / sizeof keys[0] };

static int32_t *field(ifa_tuning *t, size_t i) { return (int32_t *)((char *)t + keys[i].offset); }
static int32_t value(const ifa_tuning *t, size_t i) { return *(const int32_t *)((const char *)t + keys[i].offset); }

int ifa__tuning_apply(ifa_tuning *t, const char *s, char *err, size_t err_size) {
    int bad = 0;
    while (s && *s) {
        const char *comma = strchr(s, ','), *stop = comma ? comma : s + strlen(s);
        const char *eq = memchr(s, '=', (size_t)(stop - s));
        size_t i = 0, n = eq ? (size_t)(eq - s) : 0;
        while (i < KEYS && !(n == strlen(keys[i].key) && strncmp(s, keys[i].key, n) == 0)) ++i;
        if (stop > s) {
            char *end = NULL;
            const long v = eq ? strtol(eq + 1, &end, 10) : 0;
            if (i < KEYS && end == stop && end != eq + 1 && v >= keys[i].min && v <= (1L << 20)) {
                *field(t, i) = (int32_t)v;
            } else if (!bad++ && err && err_size) {
                /* the first bad entry only: the ones after it still apply */
                if (i < KEYS)
                    snprintf(err, err_size, "tuning key %s takes an integer in [%ld, %ld], not \"%.*s\"", keys[i].key,
                             keys[i].min, 1L << 20, (int)(stop - (eq + 1)), eq + 1);
                else
                    snprintf(err, err_size, "\"%.*s\" is not key=value with a key of the tuning row (tiling/tuning_table.h)",
                             (int)(stop - s), s);
            }
        }
        s = comma ? comma + 1 : stop;
    }
    return bad ? -1 : 0;
}

int ifa__tuning_format(const ifa_tuning *t, char *out, size_t n) {
    size_t w = 0;
    if (n) out[0] = '\0';
    for (size_t i = 0; i < KEYS; ++i) {
        const int k = snprintf(out + w, n > w ? n - w : 0, "%s%s=%d", i ? "," : "", keys[i].key,
                               (int)value(t, i));
        if (k < 0 || (w += (size_t)k) >= n) return -1;
    }
    return 0;
}

/* IFA_TUNING: entries that are not a known key with a value in range are skipped (the planner has no channel for
 * a warning; ifa-bench's --variant checks its own with ifa__tuning_apply) */
static void apply_env(ifa_tuning *t) {
    const char *env = getenv("IFA_TUNING");
    if (env) (void)ifa__tuning_apply(t, env, NULL, 0);
}

ifa_tuning ifa__tuning_for(int32_t vendor) {
    ifa_tuning t = vendor == IFA_VENDOR_CPU_INTEL
                       ? intel_row()
                       : table[(vendor >= 0 && vendor < IFA_VENDOR_CPU_INTEL) ? vendor : IFA_VENDOR_GENERIC_GPU];
    apply_env(&t);
    return t;
}
