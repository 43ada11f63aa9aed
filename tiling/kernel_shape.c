/* The fused kernel's shapes: each one's rule, its local memory, and the ordered choice among them. The rules say what
 * each kernel file's code takes (op_kernel/ifa_all_vector_gpu.cl's LANES, ifa_all_vector_mma.cl's MMA and IFA_MLA);
 * the plan check holds a handed-back plan to the same rules, since the kernels refuse to build otherwise. */
#include "tiling/kernel_shape.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tiling/kv_codes.h"
#include "tiling/planner.h"
#include "tiling/tiling_key.h"

const char *ifa__shape_name(int32_t shape) {
    const char *const *names = ifa__key_fields()[IFA_KEY_SHAPE].names;
    return shape >= 0 && shape < IFA_SHAPE_COUNT_ && names[shape] ? names[shape] : "?";
}

int32_t ifa__shape_of(const ifa_plan *plan) {
    if (plan->template_id != IFA_TEMPLATE_ALL_VECTOR) return IFA_SHAPE_NONE;
    if (plan->vector_width > 1) return IFA_SHAPE_VECTOR;
    if (plan->mma == 7) return IFA_SHAPE_LATENT_TILE;
    if (plan->mma >= 3) return IFA_SHAPE_MATRIX_T;
    if (plan->mma >= 1) return IFA_SHAPE_MATRIX;
    if (plan->lanes) return IFA_SHAPE_LANES;
    if (plan->key_tile) return IFA_SHAPE_KEY_TILE;
    if (plan->vector_loads) return IFA_SHAPE_WIDE_LOADS;
    return IFA_SHAPE_WORK_GROUP;
}

int64_t ifa__key_tile_local_bytes(int64_t head_dim, int64_t kv_bytes, int64_t chunk_rows) {
    /* 16-byte words per row: the row's D x kv_bytes / 16 and one of padding (work-items reading their own rows
     * at the same column then fall on different banks) */
    return 16 * chunk_rows * (head_dim * kv_bytes / 16 + 1);
}

int64_t ifa__vector_loads_local_bytes(int64_t rows, int64_t value_dim, int64_t work_group_size) {
    /* P.V's accumulator slices: (WG / (rows x D_v / 8)) groups x rows x D_v floats */
    const int64_t xl = value_dim / 8;
    return rows > 0 && xl > 0 ? 4 * (work_group_size / (xl * rows)) * rows * value_dim : 0;
}

/* The key tile's local memory for p at chunk_rows rows per chunk (int8 elements take 1 byte, the others 2). */
static int64_t key_tile_bytes(const ifa_problem *p, int64_t chunk_rows) {
    return ifa__key_tile_local_bytes(p->head_dim, p->kv_dtype == IFA__KV_INT8 ? 1 : 2, chunk_rows);
}

/* Why 8-wide loads cannot read p's rows (NULL: they can): D and D_v multiples of 8, and no int4 (the kernel's
 * float8 loads). */
static const char *wide_loads_refusal(const ifa_problem *p) {
    if (p->head_dim % 8 != 0 || ifa__value_dim(p) % 8 != 0) return "D and D_v must be multiples of 8";
    if (p->kv_dtype == IFA__KV_INT4) return "no int4 K/V";
    return NULL;
}

/* Why the key tile cannot run rows query rows of p in groups of wg (NULL: it can): 16-bit or int8 K/V (16-byte
 * words of 8 or 16 elements), at most 16 query rows (P.V keeps 8 columns of each in registers), D_v / 8 work-items
 * within the group, the groups' slices (WG / (D_v / 8) x rows x D_v floats) within the tile's memory, which sums
 * them at the end. */
static const char *key_tile_refusal(const ifa_problem *p, int64_t rows, int64_t wg, int64_t tile_bytes) {
    const int64_t dv = ifa__value_dim(p), xl = dv / 8;
    if (!IFA__KEY_TILE_KV(p->kv_dtype)) return "fp16, bf16 or int8 K/V only";
    if (rows > 16) return "at most 16 query rows a work-group";
    if (xl <= 0 || xl > wg) return "D_v / 8 must be within the work-group";
    if (4 * (wg / xl) * rows * dv > tile_bytes) return "P.V's slices do not fit the tile's memory";
    return NULL;
}

int64_t ifa__lanes_per_row(int64_t head_dim) {
    int64_t ln = 1;
    while (ln * 8 < head_dim && ln < 32) ln *= 2;
    return ln;
}

int64_t ifa__lanes_chunks(const ifa_problem *p) {
    const int64_t w = 8 * ifa__lanes_per_row(p->head_dim);
    return (p->head_dim + w - 1) / w;
}

/* 8 with the query's columns in registers too (8 columns a chunk of every row's query and accumulator: 16 rows
 * spilled), 16 with the query's read from local memory at each use (lane_q_local; nv-regs for sm_90a: 16 rows of one
 * chunk at D = 80 in 255 registers, no spill, where the query in registers spilled 720 bytes). */
int64_t ifa__lane_rows_most(int q_local) { return q_local ? 16 : 8; }

/* Why the lane shape cannot run rows query rows of p in groups of wg at lanes key rows a step (NULL: it can): any
 * K/V type, D a multiple of 8 (D / 8 lanes per key row up to the next power of two, ifa__lanes_per_row: at most 32,
 * dividing the group; past 256 columns more than one chunk of 8 a lane), D_v <= D a multiple of 8, rows x chunks
 * within ifa__lane_rows_most (q_local: whether the plan may read the query from local memory; MLA's 3 chunks take 2
 * rows, 5 so), 1 to 8 rows per lane group and step. */
static const char *lanes_refusal(const ifa_problem *p, int64_t rows, int64_t wg, int64_t lanes, int q_local) {
    const int64_t dv = ifa__value_dim(p);
    if (p->head_dim % 8 != 0 || p->head_dim < 8) return "D must be a multiple of 8";
    if (wg % ifa__lanes_per_row(p->head_dim) != 0) return "the lanes a key row must divide the work-group";
    if (dv % 8 != 0 || dv > p->head_dim) return "D_v must be a multiple of 8 up to D";
    if (rows * ifa__lanes_chunks(p) > ifa__lane_rows_most(q_local))
        return q_local ? "query rows x column chunks above 16" : "query rows x column chunks above 8";
    if (lanes < 1 || lanes > 8) return "1 to 8 key rows a step";
    return NULL;
}

int ifa__lanes_fit(const ifa_problem *p, int64_t rows, int64_t wg, int64_t lanes, int q_local) {
    return lanes_refusal(p, rows, wg, lanes, q_local) == NULL;
}

/* The lane shape's transposing butterfly (lane_scores) splits a step's rows x lanes sums into halves lane bit by
 * lane bit, and each lane's share must lie in one query row: both powers of two, rows <= the lanes a key row, at
 * least 2 sums and at least 2 lanes a key row (D >= 16). The exchange through local memory gives a lane as many floats as
 * the step has sums, and it writes its share and its rescale there: a share of at most half the sums fits, but
 * one lane a row (D = 8) holds every sum, and its rescale went into the next lane's floats (the last lane's past
 * the array): wrong results on PoCL (ifa-soak seed 4748, Zen 3, 2026-11-28); with one lane there is nothing
 * to exchange anyway. */
static int lane_scores_fit(const ifa_problem *p, int64_t rows, int64_t lanes) {
    const int64_t ln = ifa__lanes_per_row(p->head_dim);
    return (rows & (rows - 1)) == 0 && (lanes & (lanes - 1)) == 0 && rows <= ln && rows * lanes >= 2 && ln >= 2;
}

/* The D a lane's quarter of a key row in whole 16-byte loads needs a multiple of: 32 for 16-bit K/V, 64 for one
 * byte an element, 128 for int4. */
static int64_t mma_quarter(const ifa_problem *p) {
    return p->kv_dtype == IFA__KV_INT4 ? 128 : IFA__KV_ONE_BYTE(p->kv_dtype) ? 64 : 32;
}

/* Why the matrix shapes cannot take p's inputs in groups of wg (NULL: they can; ifa_all_vector_mma.cl's MMA): a
 * 16-bit query, 16-bit, int8, float8 or int4 K/V (their values are exact in fp16), D_v = D, whole warps of 32, D a
 * multiple of mma_quarter. */
static const char *mma_inputs_refusal(const ifa_problem *p, int64_t wg) {
    if (p->q_dtype != IFA__KV_FLOAT16 && p->q_dtype != IFA__KV_BFLOAT16) return "a 16-bit query only";
    if (p->kv_dtype == IFA__KV_FLOAT32) return "no fp32 K/V";
    if (ifa__value_dim(p) != p->head_dim) return "D_v must equal D";
    if (wg < 32 || wg % 32 != 0) return "whole warps of 32 work-items only";
    if (p->head_dim % mma_quarter(p) != 0)
        return p->kv_dtype == IFA__KV_INT4 ? "D must be a multiple of 128 (int4)"
               : IFA__KV_ONE_BYTE(p->kv_dtype) ? "D must be a multiple of 64 (one-byte K/V)"
                                               : "D must be a multiple of 32";
    return NULL;
}

/* Why the matrix shape cannot run rows query rows of p (NULL: it can): mma_inputs, quantised K/V with per-channel
 * or per-tensor scales only (the key's scales folded into the query, the value's applied after P.V); D up to 128
 * (128 keeps the accumulators at 64 registers), at most 16 query rows (the products' 16-row side). */
static const char *mma_refusal(const ifa_problem *p, int64_t rows, int64_t wg) {
    const char *why = mma_inputs_refusal(p, wg);
    if (why) return why;
    if (p->antiquant > IFA_ANTIQUANT_PER_TENSOR || p->v_antiquant > IFA_ANTIQUANT_PER_TENSOR)
        return "per-channel or per-tensor scales only";
    if (p->head_dim > 128) return "D up to 128";
    if (rows < 1 || rows > 16) return "at most 16 query rows a work-group";
    return NULL;
}

static int mma_fit(const ifa_problem *p, int64_t rows, int64_t wg) { return mma_refusal(p, rows, wg) == NULL; }

/* Why the transposed matrix shape cannot run rows query rows of p (NULL: it can; keys and value columns the
 * products' 16-row side, the query rows their 8-column side): mma_inputs, int8 with any scales (the key's token
 * scales on its scores, the value's folded into P per key), at most 8 query rows, D a multiple of 64 (a lane's
 * eighth of a value row is whole 16-byte loads of 16-bit values, 8-byte ones of int8) up to 256 (D / 4
 * accumulators). */
static const char *mma_t_refusal(const ifa_problem *p, int64_t rows, int64_t wg) {
    const char *why = mma_inputs_refusal(p, wg);
    if (why) return why;
    if (p->head_dim % 64 != 0 || p->head_dim > 256) return "D a multiple of 64 up to 256";
    if (rows < 1 || rows > 8) return "at most 8 query rows a work-group";
    return NULL;
}

static int mma_t_fit(const ifa_problem *p, int64_t rows, int64_t wg) { return mma_t_refusal(p, rows, wg) == NULL; }

int32_t ifa__mma_shape(const ifa_problem *p, int32_t t_mma, int64_t rows, int64_t wg) {
    if (t_mma >= 3 && mma_t_fit(p, rows, wg)) return t_mma >= 5 ? 5 : t_mma;
    return t_mma > 0 && mma_fit(p, rows, wg) ? (t_mma == 2 || t_mma == 4 ? 2 : 1) : 0;
}

/* Plan mma 6 (mma 5 with the rows loaded two steps ahead): K/V of less than 16 bits (int8, float8, int4: a step's
 * rows as loaded take half the registers of fp16's or fewer) up to D = 128, where mma 5 prefetches. */
static int mma6_fit(const ifa_problem *p) {
    return (IFA__KV_ONE_BYTE(p->kv_dtype) || p->kv_dtype == IFA__KV_INT4) && p->head_dim <= 128;
}

/* Why the latent tile cannot run rows query rows of p in groups of wg (NULL: it can; ifa_all_vector_mma.cl's
 * IFA_MLA: 16 query rows against 16 keys a step, the warps sharing out the score's columns and then the value's): a
 * 16-bit query, 16-bit K/V without scales or one-byte K/V (float8, int8: exact in fp16) with per-tensor scales or
 * none, 4 warps, at most 16 rows, D a multiple of 64 and D_v of 256 up to D; no cascade (the prefix pass) and no
 * per-batch query tokens. */
static const char *mla_tile_refusal(const ifa_problem *p, int64_t rows, int64_t wg) {
    const int64_t dv = ifa__value_dim(p);
    const int one_byte = IFA__KV_ONE_BYTE(p->kv_dtype);
#define IFA__NONE_OR_TENSOR(a) ((a) == IFA_ANTIQUANT_NONE || (a) == IFA_ANTIQUANT_PER_TENSOR)
    const int scales_ok = one_byte ? IFA__NONE_OR_TENSOR(p->antiquant) && IFA__NONE_OR_TENSOR(p->v_antiquant)
                                   : p->antiquant == IFA_ANTIQUANT_NONE && p->v_antiquant == IFA_ANTIQUANT_NONE;
#undef IFA__NONE_OR_TENSOR
    if (p->kv_dtype != IFA__KV_FLOAT16 && p->kv_dtype != IFA__KV_BFLOAT16 && !one_byte)
        return "16-bit or one-byte K/V only";
    if (p->q_dtype != IFA__KV_FLOAT16 && p->q_dtype != IFA__KV_BFLOAT16) return "a 16-bit query only";
    if (!scales_ok) return "per-tensor scales (one-byte K/V) or none only";
    if (wg != 128) return "work-groups of 128 only";
    if (rows < 1 || rows > 16) return "at most 16 query rows a work-group";
    if (p->head_dim % 64 != 0 || dv % 256 != 0 || dv > p->head_dim) return "D a multiple of 64, D_v of 256 up to D";
    if (p->has_prefix) return "no shared prefix";
    if (p->q_lengths) return "no per-batch query tokens";
    return NULL;
}

/* Whether the matrix shapes' query in local memory is not its stored value in the products' operand type (the
 * kernel's IFA_MMA_QLO: the key's per-channel scale folded in, RoPE, or a query type other than the operands': bf16
 * for bf16 K/V, else fp16), so that it enters the score products as two parts. */
static int mma_query_not_operand(const ifa_problem *p) {
    const int32_t operand = p->kv_dtype == IFA__KV_BFLOAT16 ? IFA__KV_BFLOAT16 : IFA__KV_FLOAT16; /* ifa_dtype codes */
    return p->rope != 0 || p->antiquant == IFA_ANTIQUANT_PER_CHANNEL || p->q_dtype != operand;
}

/* Why the row does not ask for the latent tile for p (NULL: it does), p's keys at most 256 wide and its value as
 * wide, or p at its own S1 rows not one the tile runs: it is for keys wider than the other matrix shapes take, or a
 * value narrower than the key (DeepSeek's MLA: D = 576, D_v = 512), in groups of wg with one KV head each; a
 * global-rowmax split would need a max pass the tile has no variant of. */
static const char *mla_tile_unwanted(const ifa_problem *p, const ifa_tuning *t, int64_t wg) {
    if (t->mma <= 0 || t->mma_mla <= 0) return "the tuning row does not ask for it (mma or mma_mla 0)";
    if (t->split_rowmax == 2) return "global-rowmax splits need a max pass it has no variant of";
    if (p->head_dim <= 256 && ifa__value_dim(p) == p->head_dim)
        return "for keys wider than 256 columns or a value narrower than the key only";
    return mla_tile_refusal(p, p->seq_q, wg);
}

int ifa__mla_tile_wanted(const ifa_problem *p, const ifa_tuning *t, int64_t wg, int64_t vw, int64_t mh) {
    return vw == 1 && mh == 1 && mla_tile_unwanted(p, t, wg) == NULL;
}

int64_t ifa__mla_tile_local_bytes(int64_t rows, int64_t head_dim, int64_t value_dim, int64_t work_group_size,
                                  int matrix_instructions, int q_two_parts) {
    /* the query's room (then two steps' partial scores of 4 warps, 8 KiB, and with the query in two parts each
     * lane's low words; then the accumulators), each row's max, sum, rescale and antiquant constants, the value's
     * channel constants, the warps' merge (and scratch) */
    const int64_t scores = 2048 + (q_two_parts ? 128 * 4 * (head_dim / 64) : 0);
    const int64_t room = rows * head_dim > scores ? rows * head_dim : scores;
    return 4 * room + 20 * rows + 8 * value_dim + ifa__mma_local_bytes(rows, work_group_size, matrix_instructions);
}

static int64_t mla_tile_bytes(const ifa_problem *p, const ifa_device_facts *dev, int64_t rows, int64_t wg) {
    return ifa__mla_tile_local_bytes(rows, p->head_dim, ifa__value_dim(p), wg, dev->vendor == IFA_VENDOR_NVIDIA,
                                     mma_query_not_operand(p));
}

/* Whether a matrix shape's e4m3fn K/V go through the card's conversion instruction (the plan's mma_cvt, the row's
 * mma_f8_cvt): PTX cvt.rn.f16x2.e4m3x2, from sm_89 (other cards would fail the build). */
static int mma_f8_cvt_takes(const ifa_problem *p, const ifa_tuning *t, const ifa_device_facts *dev) {
    return t->mma_f8_cvt != 0 && p->kv_dtype == IFA__KV_E4M3 && dev->vendor == IFA_VENDOR_NVIDIA &&
           dev->compute_capability >= 89;
}

int ifa__mla_tile_takes(const ifa_problem *p, const ifa_tuning *t, const ifa_device_facts *dev, int64_t rows, int64_t wg,
                        int64_t vw, int64_t mh, int64_t budget) {
    return ifa__mla_tile_wanted(p, t, wg, vw, mh) && mla_tile_refusal(p, rows, wg) == NULL &&
           mla_tile_bytes(p, dev, rows, wg) <= budget;
}

/* Whether plan mma (3 to 6) holds the query's operand words in registers as two parts (the kernel's IFA_MMA_QLO
 * without IFA_MMA_QSTEP): the query is not its stored value in the operands' type (the key's per-channel scale
 * folded in, RoPE, or a query type other than the operands': bf16 for bf16 K/V, else fp16; a per-tensor scale
 * multiplies the scores instead), and the plan does not read it at each step anyway (mma 4, D above 128). */
static int mma_q_two_parts(const ifa_problem *p, int32_t mma) {
    return mma >= 3 && mma != 4 && p->head_dim <= 128 && mma_query_not_operand(p);
}

/* Whether plan mma may take the query's operand words from local memory (the plan's lane_q_local, asked by mma_q_local):
 * where it holds them in registers as two parts (mma_q_two_parts: local memory gives those registers to more
 * work-groups), and where it reads and converts the query at each step (mma 4, D above 128: the words, converted once,
 * replace each step's floats and their conversion, two parts or one). */
static int mma_q_local_fit(const ifa_problem *p, int32_t mma) {
    return mma_q_two_parts(p, mma) || (mma >= 3 && (mma == 4 || p->head_dim > 128));
}

int64_t ifa__mma_q_local_bytes(int64_t head_dim) {
    /* two parts of 8 rows x D / 16 steps x 4 lanes, 8 bytes each */
    return 2 * 8 * (head_dim / 16) * 4 * 8;
}

/* The row's setting for p's K/V type in the matrix shapes and its name: mma_bf16, mma_int8, mma_float8 or mma_int4
 * (0 keeps that type out; for the last three 2 asks for mma 6), 1 for fp16 K/V. */
static int32_t mma_kv_setting(const ifa_problem *p, const ifa_tuning *t, const char **name) {
    switch (p->kv_dtype) {
    case IFA__KV_BFLOAT16: return *name = "mma_bf16", t->mma_bf16;
    case IFA__KV_INT8: return *name = "mma_int8", t->mma_int8;
    case IFA__KV_E4M3:
    case IFA__KV_E5M2: return *name = "mma_float8", t->mma_float8;
    case IFA__KV_INT4: return *name = "mma_int4", t->mma_int4;
    default: return *name = "mma", 1;
    }
}

int ifa__mma_wanted(const ifa_problem *p, const ifa_tuning *t) {
    const char *name;
    return t->mma > 0 && mma_kv_setting(p, t, &name) > 0;
}

int64_t ifa__mma_local_bytes(int64_t rows, int64_t work_group_size, int matrix_instructions) {
    /* each warp's maxima and sums, and without the matrix instructions each warp's scratch (384 floats, 64 words) */
    return 8 * (work_group_size / 32) * rows + (matrix_instructions ? 0 : 4 * (work_group_size / 32) * (384 + 64));
}

int64_t ifa__lanes_local_bytes(int64_t rows, int64_t head_dim, int64_t work_group_size, int64_t lanes, int shuffles) {
    /* each lane group's maxima and sums, and without shuffles every lane's partial dot products of a step */
    return 8 * (work_group_size / ifa__lanes_per_row(head_dim)) * rows + (shuffles ? 0 : 4 * work_group_size * rows * lanes);
}

/* The lane shape's local memory for rows query rows in a group of wg work-items on dev (NVIDIA's shuffles need
 * no room for the partial dot products). */
static int64_t lanes_bytes(const ifa_problem *p, const ifa_device_facts *dev, int64_t rows, int64_t wg, int64_t lanes) {
    return ifa__lanes_local_bytes(rows, p->head_dim, wg, lanes, dev->vendor == IFA_VENDOR_NVIDIA);
}

int64_t ifa__shape_local_bytes(const ifa_problem *p, const ifa_device_facts *dev, const ifa_plan *plan, int64_t base) {
    const int64_t rows = (int64_t)plan->heads_per_group * p->seq_q, wg = plan->work_group_size;
    if (plan->mma == 7) return mla_tile_bytes(p, dev, rows, wg);
    if (plan->mma)
        return base + ifa__mma_local_bytes(rows, wg, dev->vendor == IFA_VENDOR_NVIDIA) +
               (plan->lane_q_local ? ifa__mma_q_local_bytes(p->head_dim) : 0);
    if (plan->lanes) return base + lanes_bytes(p, dev, rows, wg, plan->lanes);
    if (plan->key_tile) return base + key_tile_bytes(p, plan->chunk_rows);
    if (plan->vector_loads) return base + ifa__vector_loads_local_bytes(rows, ifa__value_dim(p), wg);
    return base;
}

/* What one candidate sees, and the fields it sets when it applies. */
typedef struct shape_in {
    const ifa_problem *p;
    const ifa_device_facts *dev;
    const ifa_tuning *t;
    int64_t budget, base, rows, wg, chunk;
    int32_t vw, mh;
} shape_in;

typedef struct shape_fields {
    int32_t mma, mma_cvt, lanes, lane_prefetch, lane_scores, lane_q_local, key_tile, vector_loads;
} shape_fields;

/* A candidate: 1 where it applies (its fields set in *f), else 0 with why in why[n]. */
typedef int (*shape_try)(const shape_in *in, shape_fields *f, char *why, size_t n);

static int refuse(char *why, size_t n, const char *reason) {
    snprintf(why, n, "%s", reason);
    return 0;
}

static int accept(char *why, size_t n, const char *reason) {
    snprintf(why, n, "%s", reason);
    return 1;
}

/* The local memory check every shape ends with: its bytes (the latent tile's own, the others' added to the rows') */
static int fits(const shape_in *in, int64_t bytes, char *why, size_t n) {
    if (bytes <= in->budget) return 1;
    snprintf(why, n, "needs %" PRId64 " bytes of local memory; the work-group may use %" PRId64, bytes, in->budget);
    return 0;
}

/* The shapes below the vector shape run one KV head's rows a work-group in scalar lanes (vector_width 1). */
static int gpu_gate(const shape_in *in, char *why, size_t n) {
    if (in->vw > 1) {
        snprintf(why, n, "the vector shape takes the plan (vector_width %d)", (int)in->vw);
        return 0;
    }
    if (in->mh > 1) return refuse(why, n, "several KV heads a work-group run in the vector shape only");
    return 1;
}

static int try_vector(const shape_in *in, shape_fields *f, char *why, size_t n) {
    (void)f;
    if (in->vw > 1) {
        snprintf(why, n, "vectors of %d floats divide D and D_v", (int)in->vw);
        return 1;
    }
    if (in->t->vector_width <= 1) return refuse(why, n, "the tuning row's vector_width is 1");
    return refuse(why, n, "no vector of 2 or more floats within the row's and the device's width divides D and D_v");
}

static int try_latent_tile(const shape_in *in, shape_fields *f, char *why, size_t n) {
    const char *no = mla_tile_unwanted(in->p, in->t, in->wg);
    if (!gpu_gate(in, why, n)) return 0;
    if (!no) no = mla_tile_refusal(in->p, in->rows, in->wg);
    if (no) return refuse(why, n, no);
    if (!fits(in, mla_tile_bytes(in->p, in->dev, in->rows, in->wg), why, n)) return 0;
    f->mma = 7;
    f->mma_cvt = mma_f8_cvt_takes(in->p, in->t, in->dev);
    return accept(why, n, "keys wider than 256 columns or a value narrower than the key, 16 rows a step");
}

/* The row's matrix settings for p: mma and the K/V type's own (why the row does not ask, else NULL). */
static const char *mma_unwanted(const shape_in *in, char *why, size_t n) {
    const char *name;
    if (in->t->mma <= 0) return "the tuning row's mma is 0";
    if (mma_kv_setting(in->p, in->t, &name) <= 0) {
        snprintf(why, n, "the tuning row's %s is 0", name);
        return why;
    }
    return NULL;
}

/* Both matrix shapes end the same: their local memory, then mma, the query's place and the float8 conversion. */
static int take_matrix(const shape_in *in, int32_t mma, shape_fields *f, char *why, size_t n) {
    const char *name;
    if (mma == 5 && mma_kv_setting(in->p, in->t, &name) >= 2 && mma6_fit(in->p)) mma = 6;
    const int q_local = in->t->mma_q_local != 0 && mma_q_local_fit(in->p, mma);
    const int64_t bytes = in->base + ifa__mma_local_bytes(in->rows, in->wg, in->dev->vendor == IFA_VENDOR_NVIDIA) +
                          (q_local ? ifa__mma_q_local_bytes(in->p->head_dim) : 0);
    if (!fits(in, bytes, why, n)) return 0;
    f->mma = mma;
    f->lane_q_local = q_local;
    f->mma_cvt = mma_f8_cvt_takes(in->p, in->t, in->dev);
    snprintf(why, n, "plan mma %d", (int)mma);
    return 1;
}

static int try_matrix_t(const shape_in *in, shape_fields *f, char *why, size_t n) {
    if (!gpu_gate(in, why, n)) return 0;
    const char *no = mma_unwanted(in, why, n);
    if (!no && in->t->mma < 3) no = "the tuning row's mma asks for the other matrix shape";
    if (!no) no = mma_t_refusal(in->p, in->rows, in->wg);
    if (no) return no == why ? 0 : refuse(why, n, no);
    return take_matrix(in, in->t->mma >= 5 ? 5 : in->t->mma, f, why, n);
}

static int try_matrix(const shape_in *in, shape_fields *f, char *why, size_t n) {
    if (!gpu_gate(in, why, n)) return 0;
    const char *no = mma_unwanted(in, why, n);
    /* the row's mma 3 and above take the transposed shape wherever it runs the rows, local memory or not */
    if (!no && in->t->mma >= 3 && mma_t_fit(in->p, in->rows, in->wg))
        no = "the tuning row's mma takes the transposed shape for these rows";
    if (!no) no = mma_refusal(in->p, in->rows, in->wg);
    if (no) return no == why ? 0 : refuse(why, n, no);
    return take_matrix(in, in->t->mma == 2 || in->t->mma == 4 ? 2 : 1, f, why, n);
}

static int try_lanes(const shape_in *in, shape_fields *f, char *why, size_t n) {
    const ifa_problem *p = in->p;
    const ifa_tuning *t = in->t;
    if (!gpu_gate(in, why, n)) return 0;
    if (t->lanes <= 0) return refuse(why, n, "the tuning row's lanes is 0");
    /* key rows a step: the row's lanes, but 1 for fp32 K/V where the rows' chunks pass what the query in registers
     * allows: a lane's 8 fp32 columns of a key and a value row take twice 16-bit K/V's registers, and 16 rows at 2 a
     * step spilled 4-12 bytes by nv-regs for sm_90a (BNSD, 8 and 16 tokens, 255 registers; 1 a step 253-254, no
     * spill; Zen 4, 2026-11-29) */
    const int32_t step =
        p->kv_dtype == IFA__KV_FLOAT32 && in->rows * ifa__lanes_chunks(p) > ifa__lane_rows_most(0) ? 1 : t->lanes;
    const char *no = lanes_refusal(p, in->rows, in->wg, step, 1);
    if (no) return refuse(why, n, no);
    if (!fits(in, in->base + lanes_bytes(p, in->dev, in->rows, in->wg, step), why, n)) return 0;
    f->lanes = step;
    f->lane_prefetch = t->lane_prefetch != 0;
    f->lane_scores = t->lane_scores != 0 && lane_scores_fit(p, in->rows, step);
    /* the query's columns from local memory where the row asks, and where the rows' chunks need it */
    f->lane_q_local = t->lane_q_local != 0 || !ifa__lanes_fit(p, in->rows, in->wg, step, 0);
    snprintf(why, n, "%d key rows a step", (int)step);
    return 1;
}

/* 8-wide loads in the work-group shape: P.V gives each work-item one query row's 8 columns, so the rows x D / 8
 * slices must fit in the work-group; D a multiple of 8, one KV head per group and no int4; on only when the tuning
 * row asks and the accumulator slices fit the budget. With the row's key_tile, the key tile where it runs the rows
 * and its memory fits the budget, at up to 16 rows whatever rows x D / 8 (its P.V work-items take every row). */
static int try_key_tile(const shape_in *in, shape_fields *f, char *why, size_t n) {
    if (!gpu_gate(in, why, n)) return 0;
    if (in->t->vector_loads < 1 || in->t->key_tile <= 0)
        return refuse(why, n, "the tuning row's vector_loads or key_tile is 0");
    const int64_t tile = key_tile_bytes(in->p, in->chunk);
    const char *no = wide_loads_refusal(in->p);
    if (!no) no = key_tile_refusal(in->p, in->rows, in->wg, tile);
    if (no) return refuse(why, n, no);
    if (!fits(in, in->base + tile, why, n)) return 0;
    f->vector_loads = 8;
    f->key_tile = 1;
    return accept(why, n, "each chunk's key rows through local memory");
}

static int try_wide_loads(const shape_in *in, shape_fields *f, char *why, size_t n) {
    if (!gpu_gate(in, why, n)) return 0;
    if (in->t->vector_loads < 1) return refuse(why, n, "the tuning row's vector_loads is 0");
    const char *no = wide_loads_refusal(in->p);
    if (no) return refuse(why, n, no);
    if (in->rows * (ifa__value_dim(in->p) / 8) > in->wg) return refuse(why, n, "query rows x D_v / 8 exceed the work-group");
    if (!fits(in, in->base + ifa__vector_loads_local_bytes(in->rows, ifa__value_dim(in->p), in->wg), why, n)) return 0;
    f->vector_loads = 8;
    return accept(why, n, "8 elements a load");
}

static int try_work_group(const shape_in *in, shape_fields *f, char *why, size_t n) {
    (void)f;
    if (!gpu_gate(in, why, n)) return 0;
    return accept(why, n, "one element a load: runs every problem");
}

static const struct {
    int32_t shape;
    shape_try take;
} candidates[IFA_SHAPE_CANDIDATES] = {
    {IFA_SHAPE_VECTOR, try_vector},     {IFA_SHAPE_LATENT_TILE, try_latent_tile}, {IFA_SHAPE_MATRIX_T, try_matrix_t},
    {IFA_SHAPE_MATRIX, try_matrix},     {IFA_SHAPE_LANES, try_lanes},             {IFA_SHAPE_KEY_TILE, try_key_tile},
    {IFA_SHAPE_WIDE_LOADS, try_wide_loads}, {IFA_SHAPE_WORK_GROUP, try_work_group},
};

void ifa__shape_choose(const ifa_problem *p, const ifa_device_facts *dev, const ifa_tuning *t, int64_t budget,
                       int64_t base, ifa_plan *plan, ifa_shape_candidate out[IFA_SHAPE_CANDIDATES]) {
    const shape_in in = {p, dev, t, budget, base, (int64_t)plan->heads_per_group * p->seq_q, plan->work_group_size,
                         plan->chunk_rows, plan->vector_width, plan->kv_heads_per_group};
    shape_fields taken = {0};
    int32_t shape = IFA_SHAPE_WORK_GROUP;
    int found = 0;
    for (int i = 0; i < IFA_SHAPE_CANDIDATES && (out || !found); ++i) {
        shape_fields f = {0};
        char why[160];
        const int applies = candidates[i].take(&in, &f, why, sizeof why);
        if (out) {
            out[i].shape = candidates[i].shape;
            out[i].applicable = applies;
            out[i].chosen = applies && !found;
            snprintf(out[i].reason, sizeof out[i].reason, "%s", why);
        }
        if (applies && !found) taken = f, shape = candidates[i].shape, found = 1;
    }
    plan->shape = shape;
    plan->mma = taken.mma;
    plan->mma_cvt = taken.mma_cvt;
    plan->lanes = taken.lanes;
    plan->lane_prefetch = taken.lane_prefetch;
    plan->lane_scores = taken.lane_scores;
    plan->lane_q_local = taken.lane_q_local;
    plan->key_tile = taken.key_tile;
    plan->vector_loads = taken.vector_loads;
}

int ifa__shape_consistent(const ifa_plan *plan) {
    const ifa_problem *p = &plan->problem;
    const int64_t rows = (int64_t)plan->heads_per_group * p->seq_q;
    if (plan->shape != ifa__shape_of(plan)) return 0;
    if (plan->key_tile != 0 && plan->key_tile != 1) return 0;
    if ((plan->lane_q_local != 0 && plan->lane_q_local != 1) ||
        (plan->lane_q_local && !plan->lanes && !mma_q_local_fit(p, plan->mma)) ||
        plan->mma < 0 || plan->mma > 7 || (plan->mma == 6 && !mma6_fit(p)) ||
        (plan->mma && (plan->lanes || plan->vector_loads || plan->template_id != IFA_TEMPLATE_ALL_VECTOR ||
                       plan->vector_width != 1 || plan->kv_heads_per_group != 1 ||
                       (plan->mma == 7  ? mla_tile_refusal(p, rows, plan->work_group_size) != NULL
                        : plan->mma >= 3 ? !mma_t_fit(p, rows, plan->work_group_size)
                                         : !mma_fit(p, rows, plan->work_group_size)))) ||
        (plan->mma == 7 && (plan->lane_q_local || plan->split_kv == IFA_SPLIT_GLOBAL_ROWMAX)) ||
        (plan->lane_prefetch != 0 && plan->lane_prefetch != 1) ||
        (plan->lane_prefetch && !plan->lanes) || (plan->lane_scores != 0 && plan->lane_scores != 1) ||
        (plan->lane_scores && (!plan->lanes || !lane_scores_fit(p, rows, plan->lanes))))
        return 0;
    if (plan->lanes != 0)
        return plan->vector_loads == 0 && plan->key_tile == 0 && plan->template_id == IFA_TEMPLATE_ALL_VECTOR &&
               plan->vector_width == 1 && plan->kv_heads_per_group == 1 &&
               ifa__lanes_fit(p, rows, plan->work_group_size, plan->lanes, plan->lane_q_local);
    if (plan->key_tile &&
        (plan->vector_loads != 8 ||
         key_tile_refusal(p, rows, plan->work_group_size, key_tile_bytes(p, plan->chunk_rows)) != NULL))
        return 0;
    if (plan->vector_loads == 0) return 1;
    return plan->vector_loads == 8 && plan->template_id == IFA_TEMPLATE_ALL_VECTOR && plan->vector_width == 1 &&
           plan->kv_heads_per_group == 1 && wide_loads_refusal(p) == NULL &&
           (plan->key_tile || rows * (ifa__value_dim(p) / 8) <= plan->work_group_size);
}
