/* Tuning numbers: one row per device family, kept in tuning_table.c and nowhere else. */
#ifndef IFA_TILING_TUNING_TABLE_H
#define IFA_TILING_TUNING_TABLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct ifa_tuning {
    int32_t vendor;          /* ifa_vendor this row serves */
    int32_t work_group_size; /* work-items per work-group of the all-vector kernel */
    int32_t chunk_rows;      /* KV rows per inner block; a multiple of work_group_size */
    int32_t local_mem_reserve; /* bytes of local memory left unused (drivers keep some for themselves) */
    int32_t split_min_tokens;  /* flash decoding: no split gets fewer KV rows than this (Ascend keeps 512) */
    int32_t split_waves;       /* split until work units reach compute_units * split_waves */
    int32_t combine_work_group_size;
    int32_t split_rowmax;      /* flash-decoding algorithm: 1 partial rowmax, 2 global rowmax */
    int32_t block_cost_rows;   /* balanced units: a block's fixed cost in KV-row equivalents (query load, writes) */
    int32_t balance_milli;     /* balanced units when the longest block exceeds this/1000 of a unit's share */
    int32_t vector_width;      /* the kernel's vector width along D (the largest power of 2 up to this and the
                                * device's native float width that divides D); 1 = the scalar work-group kernel */
    int32_t pv_block;          /* vectors per P.V register block (with vector_width > 1; the planner halves it
                                * until rows x vectors fit half the register file) */
    int32_t append_work_group_size; /* KVCacheAppend: work-items per (token, head) row */
    int32_t cv_min_rows;       /* the planner picks the cv template when G x S1 >= this (0: never by itself) */
    int32_t cv_chunk_rows;     /* cv template: most KV rows per chunk (per GEMM) */
    int32_t cv_workspace_mib;  /* cv template: the chunk shrinks until its K, V and score tiles fit this many MiB */
    int32_t cv_work_group_size; /* cv template: work-items per query row of the softmax kernel */
    int32_t multi_head_rows;   /* BSH/BSND, vector shape: a work-group holds all of a position's KV heads when their
                                * query rows (N_kv x G x S1) stay within this, else one (0: always one) */
    int32_t append_heads;      /* KVCacheAppend: KV heads of one token per work-group (the largest divisor of N_kv up
                                * to this), which share the token's rotary cos/sin (0 or 1: one head each) */
    int32_t vector_loads;      /* all_vector, work-group (scalar) shape: 1 reads K/V rows 8 elements per load with
                                * P.V work-items owning (query row, 8 columns) slices; 0: one element per load */
    int32_t prefetch_rows;     /* all_vector, vector shape: key rows the kernel prefetches ahead, and each value row
                                * during the scores (0: none, the hardware prefetchers alone) */
    int32_t batch_fast;        /* all_vector: 1 numbers the work-groups batch first, so that a runtime dealing out
                                * contiguous runs of work-groups (PoCL) gives each thread every batch's share of the
                                * heads instead of whole batches (uneven lengths); 0 block first */
    int32_t multi_head_chunk_bytes; /* all KV heads per work-group (multi_head_rows): the chunk shrinks until its
                                     * rows of one tensor (N_kv x D elements each) fit this many bytes (0: no cap) */
    int32_t multi_head_min_slice_bytes; /* with 32 vector registers (AVX-512), all KV heads per work-group also need
                                         * one head's D elements to take at least this many bytes (0: any) */
    int32_t multi_head_min_row_bytes;   /* ... and a position's N_kv x D elements of one tensor this many (0: any) */
    int32_t strided_prefetch_bytes; /* BSH/BSND with one of several KV heads per work-group (a D-element slice every
                                     * N_kv x D elements): the kernel prefetches at least this many bytes of its
                                     * head's key slices ahead, prefetch_rows rows at the least (0: prefetch_rows) */
    int32_t pv_prefetch_rows;    /* with prefetch_rows, 32 vector registers: P.V also prefetches the next chunk's
                                  * keys where one KV head's query rows (G x S1) are at most this (0: never) */
    int32_t pv_prefetch_rows_16; /* the same with 16 vector registers (AVX2) */
    int32_t pv_prefetch_paged;   /* paged KV takes P.V's next-chunk prefetch up to this many query rows per KV head
                                    (within the two limits above); 0: contiguous KV only */
    int32_t buffer_offset;       /* ifa_buffer_create on a CPU device: bytes from a 2 MiB boundary to the buffer's
                                  * start (rounded down to a multiple of 128) */
    int32_t spread_prefetch;     /* all KV heads per work-group with prefetch_rows: 1 spreads the prefetches of a
                                  * four-key-row step over the heads' register tiles, 0 asks for the whole rows
                                  * before the tiles */
    int32_t multi_head_prefetch_bytes; /* all KV heads per work-group with P.V's next-chunk prefetch on: the score
                                        * pass asks for key rows this many bytes ahead (whole rows, at least one,
                                        * at most prefetch_rows; 0: prefetch_rows rows) */
    int32_t multi_head_chunk_bytes_g1; /* multi_head_chunk_bytes where each KV head has one query row (G x S1 = 1)
                                        * and the core 32 vector registers (0: multi_head_chunk_bytes) */
    int32_t key_tile;          /* all_vector with 8-wide loads and 16-bit or int8 K/V: 1 copies each chunk's key
                                * rows into local memory first, 16 bytes a load with consecutive work-items on
                                * consecutive bytes, so that a warp's loads are whole rows instead of 2 bytes of
                                * 32 rows; values load 8 at a time in one load, 8 rows' loads before their FMAs
                                * (0: off) */
    int32_t lanes;             /* all_vector's work-group shape with any K/V type, D a multiple of 8 and at most 8
                                * query rows' chunks per work-group (16 with the query from local memory): the lane
                                * shape (a key row read by D / 8 work-items up to a power of two, several chunks a
                                * lane past 256 columns, registers instead of chunks) with this many rows per lane
                                * group and step, 1 to 8 (0: off) */
    int32_t lane_prefetch;     /* with the lane shape: 1 loads the next step's key and value rows before the
                                * step's arithmetic (0: each step's loads first, then their math) */
    int32_t lane_head_groups;  /* with the lane shape: 1 puts more than 8 query rows per KV head in even head groups
                                * of up to 8 rows that run the lane shape (0: they keep the work-group shape) */
    int32_t lane_scores;       /* with the lane shape: 1 sums a step's dot products with a transposing butterfly
                                * and has each lane score and exponentiate its share only, where rows and lanes are
                                * powers of two and rows <= D / 8 (0: every lane scores all of them) */
    int32_t mma;               /* 1: the matrix shape (warp matrix products, up to 16 query rows per KV head) where
                                * it fits (fp16 Q and K/V, D a multiple of 32 up to 128; before the lane shape);
                                * 2: its lean variant (fewer registers); 3: the transposed shape where it fits
                                * (up to 8 query rows, D a multiple of 64 up to 256), else 1; 4: the transposed
                                * shape's lean variant, else 2; 5 (or more): the transposed shape with each step's
                                * rows loaded during the step before (up to D = 128), else 1 */
    int32_t lane_group_rows;   /* with lane_head_groups: the most query rows per lane-shape work-group, 1 to 8 (more
                                * rows per KV head go in even head groups of up to this many) */
    int32_t small_grid_work_group_size; /* with the lane shape: the work-group size where the grid has no more
                                         * work-groups than compute units (and still has at that size; 0: off) */
    int32_t split_fill;        /* 1: splits = floor(slots / blocks) where that is 2 or more (no partial last wave),
                                * 0: the ceiling (at least as many work-groups as slots) */
    int32_t lane_q_local;      /* with the lane shape: 1 reads the query's columns from local memory each step instead
                                * of registers (0: registers) */
    int32_t mma_int8;          /* with mma: 1 takes the matrix shape for int8 K/V too (per-channel or per-tensor
                                * scales, D a multiple of 64), 0 not; 2: as 1, and where the transposed shape loads
                                * each step's rows during the step before (mma 5, D <= 128), int8 rows two steps
                                * before (plan mma 6: int8 rows are half the bytes of a step's fp16 ones, so one
                                * step in flight keeps half as many bytes on the way) */
    int32_t mma_bf16;          /* with mma: 1 takes the matrix shape for bf16 K/V too (bf16 products), 0 not */
    int32_t mma_group_rows;    /* with mma and lane_head_groups: the most query rows per work-group, 1 to 16 (more
                                * rows per KV head go in even head groups; 8 gives G = 16 the transposed shape in
                                * two groups, each reading K/V); 0: the shape's most (16, or 8 where only the
                                * transposed shape fits) */
    int32_t fused_combine;     /* 1: a split plan that allows it (partial rowmax, no cascade, no per-batch query
                                * tokens) has the last split of each block combine its rows (no combine kernel);
                                * above 1: the same where that split reads at most this many partial values
                                * (splits x query rows x D_v); 0: the combine kernel */
    int32_t lane_split_waves;  /* split_waves for a plan without the matrix shape (the lane shape, cv, the others):
                                * their kernels hold more work-groups a multiprocessor; 0: split_waves */
    int32_t mma_float8;        /* with mma: 1 takes the matrix shape for float8 K/V too (e4m3fn, e5m2: each byte
                                * converted exactly to fp16 in registers; scales in any mode or none, D a multiple
                                * of 64), 0 not; 2: as 1, with the rows two steps ahead as mma_int8 2 */
    int32_t mma_int4;          /* with mma: 1 takes the matrix shape for int4 K/V too (each nibble converted
                                * exactly to fp16 in registers; scales as int8's, D a multiple of 128), 0 not; 2: as
                                * 1, with the rows two steps ahead as mma_int8 2 */
    int32_t mma_q_local;       /* with mma 3, 5 or 6 up to D = 128 where the query enters the score products as two
                                * parts (the key's per-channel scale folded in, RoPE, a query type other than the
                                * operands'): 1 keeps its operand words in local memory, read at each step
                                * (the plan's lane_q_local), instead of registers; 0 not */
    int32_t mma_f8_cvt;        /* with mma and e4m3fn K/V: 1 converts each byte pair by the device's own instruction
                                * (the plan's mma_cvt; NVIDIA from sm_89 only: other NVIDIA cards fail the build),
                                * 0 by integer operations and an f16x2 multiply */
    int32_t multi_head_chunk_bytes_16; /* multi_head_chunk_bytes (at any G and S1) where the core has 16 vector
                                        * registers (AVX2; 0: the rules above) */
    int32_t mma_mla;           /* with mma: 1 takes the latent tile (plan mma 7) where a key row is wider than 256
                                * or the value narrower than the key (DeepSeek's MLA): 16 query rows a group against
                                * 16 keys a step, the warps sharing the score's columns and then the value's; a 16-bit
                                * query, 16-bit K/V or one-byte K/V with per-tensor scales or none; 0 not (the lane
                                * shape) */
    int32_t mma_mla_split_tokens; /* split_min_tokens for the latent tile's plans (16 heads a work-group: a batch of
                                   * one has few work-groups at the row's floor); 0: split_min_tokens */
    int32_t split_min_work;    /* a split's least work in 1024s of multiply-adds (a work-group's query rows x
                                * (D + D_v) a key row): lowers split_min_tokens to the key rows that reach it where a
                                * key row costs much (many query rows, wide heads: MLA on a CPU); 0: split_min_tokens
                                * alone */
    int32_t fused_balanced;    /* fused_combine for balanced units (a block's pieces written by the units that cut
                                * it, no unit's stretch empty): 1 the last piece to finish combines the block, above
                                * 1 the same where its block has at most this many partial values (pieces x query
                                * rows x D_v), 0 the combine kernel */
    int32_t pv_block_8rows;    /* with 32 vector registers: vectors per P.V register block where the block holds 8
                                * query rows and the values need converting (K/V other than fp32), in pv_block's
                                * place (0: pv_block) */
} ifa_tuning;

/* The row for vendor (the generic GPU row for an unknown vendor), with the IFA_TUNING environment
 * variable applied on top for experiments: "work_group_size=64,chunk_rows=128" (unknown keys and bad values
 * are ignored, so a typo cannot break a run; ifa-tiling shows the plan the row gives). */
ifa_tuning ifa__tuning_for(int32_t vendor);

/* Sets t's fields from s, IFA_TUNING's form ("chunk_rows=32,prefetch_rows=0": the field names above, decimal
 * integers; later entries win). Each entry that names no field, or whose value is not an integer in the field's
 * range (0 only where 0 means off, at most 2^20), is skipped and the others still apply. Returns 0, or -1 when an
 * entry was skipped, with the first such entry and its rule in err (when err_size > 0). */
int ifa__tuning_apply(ifa_tuning *t, const char *s, char *err, size_t err_size);

/* Writes every field of t but vendor into out (n bytes) in IFA_TUNING's form, all of them, in the order of the
 * fields ("work_group_size=128,chunk_rows=128,..."), so that a row can be read back, compared or handed to a tool
 * (ifa-tiling prints the plan's). 0, or -1 when n is too small (out then holds a cut string). */
int ifa__tuning_format(const ifa_tuning *t, char *out, size_t n);

#endif
