#define _POSIX_C_SOURCE 200809L /* setenv */
/* Masks, position bias, soft-cap, sliding window, kv padding, paged KV and multi-token queries, each
 * against the float64 reference on fresh random inputs, outputs and workspace poisoned with NaN, with and
 * without each split-KV mode and in every layout. Key/value rows a case must not read hold NaN (padding,
 * rows past a length or before a window, unused pool slots), so any such read fails the check. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/half.h"
#include "common/rng.h"
#include "common/runner.h"
#include "test_util.h"
#include "op_host/runtime/context.h"
#include "op_host/runtime/tensor_check.h"
#include "tiling/planner.h"

enum mask_form { NO_MASK, MASK_BS, MASK_B1S, MASK_B11S, MASK_PER_TOKEN };
enum mask_fill { MASK_RANDOM, MASK_BATCH0_ALL, MASK_HIDE_HEAD };

typedef struct fspec {
    const char *layout;
    ifa_dtype q, kv;
    int64_t b, n, nkv, d, s, sq;
    const int64_t *lens;
    int64_t nlens;
    int mask;             /* enum mask_form */
    int mask_fill;        /* enum mask_fill */
    ifa_dtype mask_dtype; /* bool, int8 or uint8 */
    int64_t hide;         /* MASK_HIDE_HEAD: positions [0, hide) are masked in every batch */
    int pse;              /* ifa_pse_kind */
    double softcap;
    int64_t window;
    int pad;
    int64_t pad_size;
    int64_t block_size; /* > 0: paged */
    int share_blocks;   /* paged: batch 1's first block is batch 0's */
    int split;          /* ifa_split_mode to force; 0: the device's own plan */
    int aq;             /* ifa_antiquant (kv must be int8 or int4) */
    int aq_offset;      /* 1: with antiquant_offset */
    ifa_dtype aq_dtype; /* channel modes: the scale's dtype (token modes are float32) */
    int v_aq;           /* > 0: the separate form, the key's scales in mode aq and the value's in this ifa_antiquant */
    int v_aq_offset;    /* the separate form: the value with offsets (aq_offset is the key's) */
    ifa_dtype v_aq_dtype; /* the value's channel-mode scale dtype */
    int q2;             /* int8 output: 1 per-tensor quant_scale2, 2 per-channel (N·D), 3 per-channel (N, D) */
    int q2_offset;
    double q2_max;      /* scales drawn in [q2_max / 4, q2_max): large ones saturate */
    int64_t prefix;     /* > 0: a shared prefix of this many rows (S_p) */
    int64_t prefix_len; /* actual_shared_prefix_len, 0 = all S_p; rows past it hold NaN */
    int rope;           /* ifa_rope_mode */
    int64_t rope_dim;   /* 0: D - rope_offset */
    int64_t rope_offset; /* the first rotated dim */
    double rope_theta;  /* 0: 10000 */
    int64_t rope_pos0;  /* > 0: rope_positions[b] = rope_pos0 + 7b, else the op's default */
    double rope_table;  /* > 0: cos/sin tables of angles (pos · rope_table) · theta^(-2i/dim) (rope_table 1: the
                         * theta formula's own values; 0.25: a linearly scaled context) */
    int sinks;          /* 1: a sink logit per head in [-3, 6); 2: also heads with -inf (none), +40 (all of the
                         * weight) and -40; 0: none */
    int alibi;          /* 1: ALiBi slopes (N) in [0, 0.5); 2: (B, N), with heads of slope 0, 6 (only the nearest
                         * keys count) and -0.03 (far keys weigh more) in every batch; 0: none */
    int tmpl;           /* ifa_template to force through template_mode; 0: the planner's choice */
    int native;         /* > 0: plan for a CPU of this native float width (16: AVX-512, 8: AVX2), so the vector
                         * shape's tiles of either register file run on this machine; 0: the device's own */
    int64_t dv;         /* > 0: value_head_dim D_v < D (the value's columns from D_v on hold NaN unless value_is_key) */
    int value_is_key;   /* 1: value is the key tensor itself (MLA's one latent cache) */
    const int64_t *qlens; /* actual_seq_lengths_q (nqlens values, 1 or B); the query's padding tokens hold NaN */
    int64_t nqlens;
    int64_t kv_base;    /* > 0: key and value start this many bytes into their buffers (any multiple of the element
                         * size: unaligned rows); -1: at the end of the largest buffer the device allocates
                         * (ifa_case_far_kv_base); 0: at the start */
    uint64_t seed;
} fspec;

static int is_bnsd(const char *layout) { return strcmp(layout, "BNSD") == 0; }

/* (B, S, H), (B, S, N, D) or (B, N, S, D) for rows S of N heads. */
static void shape4(const char *layout, int64_t b, int64_t s, int64_t n, int64_t d, int32_t *nd, int64_t *sh) {
    if (strcmp(layout, "BSH") == 0) *nd = 3, sh[0] = b, sh[1] = s, sh[2] = n * d;
    else if (strcmp(layout, "BSND") == 0) *nd = 4, sh[0] = b, sh[1] = s, sh[2] = n, sh[3] = d;
    else *nd = 4, sh[0] = b, sh[1] = n, sh[2] = s, sh[3] = d;
}


static int64_t len_of(const fspec *p, int64_t b) { return p->nlens == 0 ? p->s : p->lens[p->nlens == 1 ? 0 : b]; }
static int64_t qlen_of(const fspec *p, int64_t b) { return p->nqlens == 0 ? p->sq : p->qlens[p->nqlens == 1 ? 0 : b]; }

/* The logical rows [lo, len) batch b's blocks read (after kv padding), as the op defines them: its first query
 * token's window, none without query tokens. */
static void read_range(const fspec *p, int64_t b, int64_t *lo, int64_t *len) {
    const int64_t qn = qlen_of(p, b);
    int64_t l = qn > 0 ? len_of(p, b) : 0;
    if (p->pad && p->s - p->pad_size - l < 0) l = 0;
    const int per_token = p->mask == MASK_PER_TOKEN && p->sq > 1;
    *lo = ifa__kv_lo(l, p->window, p->sq > 1 && !per_token && qn > 0 ? qn - 1 : 0);
    *len = l;
}

static void set_nan_row(ifa_host_tensor *t, int bnsd, int64_t S, int64_t N, int64_t D, int64_t b, int64_t s) {
    for (int64_t h = 0; h < N; ++h)
        for (int64_t d = 0; d < D; ++d) ifa_host_set(t, ifa_case_at(bnsd, S, N, D, b, s, h, d), NAN);
}

/* Copies row (b, s) of a (B, S, ...) tensor to row (blk, r) of a (num_blocks, bs, ...) pool. */
static void copy_row(ifa_host_tensor *pool, const ifa_host_tensor *src, int bnsd, int64_t S, int64_t bs, int64_t N,
                     int64_t D, int64_t b, int64_t s, int64_t blk, int64_t r) {
    for (int64_t h = 0; h < N; ++h)
        for (int64_t d = 0; d < D; ++d)
            ifa_host_set(pool, ifa_case_at(bnsd, bs, N, D, blk, r, h, d),
                         ifa_host_get(src, ifa_case_at(bnsd, S, N, D, b, s, h, d)));
}

/* Turns c's contiguous key/value into a NaN-filled pool of shuffled blocks holding only the rows the case
 * reads, with a block table whose unused entries are wild ids (reading one would fail validation or the
 * check). share: batch 1's first block is batch 0's first block (prefix sharing). */
static int make_paged(const fspec *p, ifa_case *c) {
    const int bnsd = is_bnsd(p->layout);
    const int64_t bs = p->block_size, cols = (p->s + bs - 1) / bs;
    int64_t used = 0;
    for (int64_t b = 0; b < p->b; ++b) used += (len_of(p, b) + bs - 1) / bs;
    const int64_t nblocks = used + 3;
    ifa_rng rng;
    ifa_rng_seed(&rng, p->seed * 7 + 5);
    int64_t *perm = ifa_rng_permutation(&rng, nblocks);
    int32_t *table = malloc((size_t)(p->b * cols) * sizeof *table);
    if (!perm || !table) return -1;
    int64_t next = 0;
    for (int64_t b = 0; b < p->b; ++b)
        for (int64_t i = 0; i < cols; ++i)
            table[b * cols + i] = i * bs < len_of(p, b) ? (int32_t)perm[next++] : (int32_t)(1 << 30) + (int32_t)i;
    if (p->share_blocks && p->b > 1 && len_of(p, 0) > 0 && len_of(p, 1) > 0) table[cols] = table[0];
    ifa_host_tensor pk, pv;
    int32_t nd;
    int64_t sh[IFA_MAX_DIMS];
    shape4(p->layout, nblocks, bs, p->nkv, p->d, &nd, sh);
    if (ifa_host_tensor_alloc(&pk, p->kv, nd, sh) != 0 || ifa_host_tensor_alloc(&pv, p->kv, nd, sh) != 0) return -1;
    for (int64_t i = 0; i < ifa_host_tensor_numel(&pk); ++i) ifa_host_set(&pk, i, NAN), ifa_host_set(&pv, i, NAN);
    for (int64_t b = 0; b < p->b; ++b) {
        int64_t lo, len;
        read_range(p, b, &lo, &len);
        for (int64_t s = lo; s < len; ++s) {
            if (p->share_blocks && b == 1 && s < bs && table[cols] == table[0]) continue; /* batch 0 wrote it */
            const int64_t blk = table[b * cols + s / bs];
            copy_row(&pk, &c->key, bnsd, p->s, bs, p->nkv, p->d, b, s, blk, s % bs);
            copy_row(&pv, &c->value, bnsd, p->s, bs, p->nkv, p->d, b, s, blk, s % bs);
        }
    }
    ifa_host_tensor_free(&c->key);
    ifa_host_tensor_free(&c->value);
    c->key = pk, c->value = pv;
    c->block_table = table, c->block_table_cols = cols, c->block_size = bs;
    free(perm);
    return 0;
}

/* Scales near 1/range (so dequantised values are about +-1) and offsets in [-3, 3), in the mode's form.
 * Token modes: the scales of rows the case must not read are NaN (integers cannot hold NaN themselves). */
static int build_antiquant(const fspec *p, ifa_case *c) {
    const double range = p->kv == IFA_DTYPE_INT8 ? 128 : p->kv == IFA_DTYPE_INT4 ? 8 : ifa_dtype_max(p->kv);
    int64_t sh[4] = {2, 0, 0, 0};
    int nd = 1;
    ifa_dtype dt = IFA_DTYPE_FLOAT32;
    if (p->aq == IFA_ANTIQUANT_PER_CHANNEL) nd = 3, sh[1] = p->nkv, sh[2] = p->d, dt = p->aq_dtype;
    if (p->aq == IFA_ANTIQUANT_PER_TENSOR) dt = p->aq_dtype;
    if (p->aq == IFA_ANTIQUANT_PER_TOKEN) nd = 3, sh[1] = p->b, sh[2] = p->s;
    /* the paged form starts as per (batch, head, position) and moves into the pages in page_scales */
    if (p->aq >= IFA_ANTIQUANT_PER_HEAD_PER_TOKEN) nd = 4, sh[1] = p->b, sh[2] = p->nkv, sh[3] = p->s;
    c->antiquant_mode = p->aq >= IFA_ANTIQUANT_PER_TOKEN ? p->aq - 2 : 0;
    if (ifa_host_tensor_alloc(&c->antiquant_scale, dt, nd, sh) != 0) return -1;
    ifa_host_fill_random(&c->antiquant_scale, p->seed * 11 + 6, 0.5 / range, 1.5 / range);
    if (p->aq_offset) {
        if (ifa_host_tensor_alloc(&c->antiquant_offset, dt, nd, sh) != 0) return -1;
        ifa_host_fill_random(&c->antiquant_offset, p->seed * 11 + 7, -3, 3);
    }
    if (p->aq >= IFA_ANTIQUANT_PER_TOKEN && p->block_size == 0) {
        const int64_t heads = p->aq == IFA_ANTIQUANT_PER_TOKEN ? 1 : p->nkv;
        for (int64_t b = 0; b < p->b; ++b) {
            int64_t lo, len;
            read_range(p, b, &lo, &len);
            const int64_t row0 = p->pad ? p->s - p->pad_size - len : 0;
            for (int64_t half = 0; half < 2; ++half)
                for (int64_t h = 0; h < heads; ++h)
                    for (int64_t s = 0; s < p->s; ++s)
                        if (s < row0 + lo || s >= row0 + len)
                            ifa_host_set(&c->antiquant_scale, ((half * p->b + b) * heads + h) * p->s + s, NAN);
        }
    }
    return 0;
}

/* antiquant_mode 3: moves c's (2, B, N_kv, S) scales and offsets into the pool's (2, num_blocks, N_kv,
 * block_size) form through the block table; entries no read position maps to are NaN. */
static int page_scales(const fspec *p, ifa_case *c) {
    const int64_t bs = p->block_size, nblocks = c->key.shape[0];
    const int64_t sh[4] = {2, nblocks, p->nkv, bs};
    ifa_host_tensor *t[2] = {&c->antiquant_scale, &c->antiquant_offset};
    for (int k = 0; k < 2; ++k) {
        if (!t[k]->data) continue;
        ifa_host_tensor pooled;
        if (ifa_host_tensor_alloc(&pooled, IFA_DTYPE_FLOAT32, 4, sh) != 0) return -1;
        for (int64_t i = 0; i < ifa_host_tensor_numel(&pooled); ++i) ifa_host_set(&pooled, i, NAN);
        for (int64_t b = 0; b < p->b; ++b) {
            int64_t lo, len;
            read_range(p, b, &lo, &len);
            for (int64_t s = lo; s < len; ++s) {
                if (p->share_blocks && b == 1 && s < bs && c->block_table[c->block_table_cols] == c->block_table[0])
                    continue; /* a shared block holds batch 0's rows, and so its scales */
                const int64_t blk = c->block_table[b * c->block_table_cols + s / bs];
                for (int64_t half = 0; half < 2; ++half)
                    for (int64_t h = 0; h < p->nkv; ++h)
                        ifa_host_set(&pooled, ((half * nblocks + blk) * p->nkv + h) * bs + s % bs,
                                     ifa_host_get(t[k], ((half * p->b + b) * p->nkv + h) * p->s + s));
            }
        }
        ifa_host_tensor_free(t[k]);
        *t[k] = pooled;
    }
    return 0;
}

/* Half `half` of a (2, ...) scale form as one side's own tensor: the shape without the leading 2, (1) for
 * per tensor. Frees two's share of nothing: the caller frees two. */
static int take_half(const ifa_host_tensor *two, int half, ifa_host_tensor *out) {
    if (!two->data) return 0;
    const int64_t one = 1;
    const int64_t n = ifa_host_tensor_numel(two) / 2;
    if (ifa_host_tensor_alloc(out, two->dtype, two->ndim == 1 ? 1 : two->ndim - 1, two->ndim == 1 ? &one : two->shape + 1))
        return -1;
    for (int64_t i = 0; i < n; ++i) ifa_host_set(out, i, ifa_host_get(two, half * n + i));
    return 0;
}

/* The separate form (key_/value_antiquant_scale): the key's scales are half 0 of the (2, ...) form built for
 * p->aq, the value's half 1 of one built for p->v_aq, so that each carries its mode's NaN where a row must not
 * be read. */
static int split_antiquant(const fspec *p, ifa_case *c) {
    ifa_host_tensor ks = c->antiquant_scale, ko = c->antiquant_offset;
    const int64_t kmode = c->antiquant_mode;
    memset(&c->antiquant_scale, 0, sizeof c->antiquant_scale), memset(&c->antiquant_offset, 0, sizeof c->antiquant_offset);
    fspec vp = *p;
    vp.aq = p->v_aq, vp.aq_offset = p->v_aq_offset, vp.aq_dtype = p->v_aq_dtype ? p->v_aq_dtype : IFA_DTYPE_FLOAT32;
    vp.seed = p->seed + 5000;
    int rc = build_antiquant(&vp, c) != 0 ||
             (vp.aq == IFA_ANTIQUANT_PAGED_HEAD_TOKEN && vp.block_size > 0 && page_scales(&vp, c) != 0) ||
             take_half(&ks, 0, &c->key_antiquant_scale) || take_half(&ko, 0, &c->key_antiquant_offset) ||
             take_half(&c->antiquant_scale, 1, &c->value_antiquant_scale) ||
             take_half(&c->antiquant_offset, 1, &c->value_antiquant_offset);
    c->key_antiquant_mode = kmode, c->value_antiquant_mode = c->antiquant_mode, c->antiquant_mode = 0;
    ifa_host_tensor_free(&ks), ifa_host_tensor_free(&ko);
    ifa_host_tensor_free(&c->antiquant_scale), ifa_host_tensor_free(&c->antiquant_offset);
    return rc ? -1 : 0;
}

static int build(const fspec *p, ifa_case *c) {
    ifa_case_init(c);
    const int bnsd = is_bnsd(p->layout);
    int32_t nd;
    int64_t sh[IFA_MAX_DIMS];
    shape4(p->layout, p->b, p->sq, p->n, p->d, &nd, sh);
    if (ifa_host_tensor_alloc(&c->query, p->q, nd, sh) != 0) return -1;
    shape4(p->layout, p->b, p->s, p->nkv, p->d, &nd, sh);
    if (ifa_host_tensor_alloc(&c->key, p->kv, nd, sh) != 0 || ifa_host_tensor_alloc(&c->value, p->kv, nd, sh) != 0)
        return -1;
    ifa_host_fill_random(&c->query, p->seed * 11 + 1, -1, 1);
    /* float8: up to 2 (e4m3fn's subnormals to exponent 8) on its own, its whole range with scales */
    const double kv_range = p->kv == IFA_DTYPE_INT8 ? 128
                            : p->kv == IFA_DTYPE_INT4 ? 8
                            : ifa__is_float8(p->kv) ? (p->aq ? ifa_dtype_max(p->kv) : 2)
                                                    : 1;
    ifa_host_fill_random(&c->key, p->seed * 11 + 2, -kv_range, kv_range);
    ifa_host_fill_random(&c->value, p->seed * 11 + 3, -kv_range, kv_range);
    /* the key as the value: the same numbers, so that every later step (poison, pages) treats both alike */
    if (p->value_is_key) memcpy(c->value.data, c->key.data, c->key.bytes);
    c->value_head_dim = p->dv, c->value_is_key = p->value_is_key;
    if (p->aq && build_antiquant(p, c) != 0) return -1;
    if (p->nlens) {
        if (!(c->lengths = malloc((size_t)p->nlens * sizeof *c->lengths))) return -1;
        memcpy(c->lengths, p->lens, (size_t)p->nlens * sizeof *c->lengths);
        c->lengths_count = p->nlens;
    }
    if (p->nqlens) {
        if (!(c->q_lengths = malloc((size_t)p->nqlens * sizeof *c->q_lengths))) return -1;
        memcpy(c->q_lengths, p->qlens, (size_t)p->nqlens * sizeof *c->q_lengths);
        c->q_lengths_count = p->nqlens;
        for (int64_t b = 0; b < p->b; ++b) /* padding tokens are never read */
            for (int64_t t = qlen_of(p, b); t < p->sq; ++t)
                for (int64_t h = 0; h < p->n; ++h)
                    for (int64_t d = 0; d < p->d; ++d)
                        ifa_host_set(&c->query, ifa_case_at(bnsd, p->sq, p->n, p->d, b, t, h, d), NAN);
    }
    c->num_heads = p->n, c->num_key_value_heads = p->nkv, c->scale_value = 1.0 / sqrt((double)p->d);
    strcpy(c->input_layout, p->layout);
    c->softmax_lse_flag = 1;
    c->softcap = p->softcap, c->window = p->window;
    c->has_kv_padding = p->pad, c->kv_padding_size = p->pad_size;
    if (p->sinks) {
        const int64_t n = p->n;
        if (ifa_host_tensor_alloc(&c->sinks, IFA_DTYPE_FLOAT32, 1, &n) != 0) return -1;
        ifa_host_fill_random(&c->sinks, p->seed * 11 + 12, -3, 6);
        if (p->sinks == 2) {
            static const double extremes[] = {-INFINITY, 40.0, -40.0};
            for (int64_t h = 0; h < 3 && h < n; ++h) ifa_host_set(&c->sinks, h, extremes[h]);
        }
    }
    if (p->alibi) {
        const int64_t as[2] = {p->b, p->n};
        const int nd = p->alibi == 2 ? 2 : 1;
        if (ifa_host_tensor_alloc(&c->alibi_slopes, IFA_DTYPE_FLOAT32, nd, as + 2 - nd) != 0) return -1;
        ifa_host_fill_random(&c->alibi_slopes, p->seed * 11 + 13, 0, 0.5);
        static const double extremes[] = {0.0, 6.0, -0.03};
        for (int64_t b = 0; p->alibi == 2 && b < p->b; ++b)
            for (int64_t h = 0; h < 3 && h < p->n; ++h) ifa_host_set(&c->alibi_slopes, b * p->n + h, extremes[h]);
    }

    int64_t max_len = 1;
    for (int64_t b = 0; b < p->b; ++b) max_len = len_of(p, b) > max_len ? len_of(p, b) : max_len;
    if (p->mask != NO_MASK) {
        const int64_t ml = max_len + 3; /* longer than needed: the op reads the first len positions of a row */
        int64_t ms[4] = {p->b, 1, 1, 1};
        int mnd = p->mask == MASK_BS ? 2 : p->mask == MASK_B1S ? 3 : 4;
        ms[mnd - 1] = ml;
        if (p->mask == MASK_PER_TOKEN) ms[2] = p->sq;
        if (ifa_host_tensor_alloc(&c->atten_mask, p->mask_dtype, mnd, ms) != 0) return -1;
        const int64_t rows = ifa_host_tensor_numel(&c->atten_mask) / ml;
        ifa_rng rng;
        ifa_rng_seed(&rng, p->seed * 11 + 4);
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < ml; ++j) {
                const int64_t b = r / (rows / p->b);
                int set = p->mask_fill == MASK_RANDOM    ? ifa_rng_next(&rng) % 4 == 0
                          : p->mask_fill == MASK_HIDE_HEAD ? j < p->hide
                                                           : b == 0;
                /* any non-zero byte excludes: use values other than 1 where the dtype allows */
                double on = p->mask_dtype == IFA_DTYPE_BOOL ? 1 : p->mask_dtype == IFA_DTYPE_INT8 ? -3 : 200;
                ifa_host_set(&c->atten_mask, r * ml + j, set ? on : 0);
            }
    }
    if (p->pse) {
        int64_t ps[4] = {p->pse == IFA_PSE_BROADCAST ? 1 : p->b, p->n, p->sq, max_len + 1};
        if (ifa_host_tensor_alloc(&c->pse_shift, p->q, 4, ps) != 0) return -1;
        ifa_host_fill_random(&c->pse_shift, p->seed * 11 + 5, -2, 2);
    }
    const int64_t dv = p->dv ? p->dv : p->d; /* the output's head dimension */
    if (p->q2) {
        int64_t qs[2] = {p->q2 == 1 ? 1 : p->q2 == 2 ? p->n * dv : p->n, dv};
        const int nd = p->q2 == 3 ? 2 : 1;
        if (ifa_host_tensor_alloc(&c->quant_scale2, IFA_DTYPE_FLOAT32, nd, qs) != 0) return -1;
        ifa_host_fill_random(&c->quant_scale2, p->seed * 11 + 8, p->q2_max / 4, p->q2_max);
        if (p->q2_offset) {
            if (ifa_host_tensor_alloc(&c->quant_offset2, IFA_DTYPE_FLOAT32, nd, qs) != 0) return -1;
            ifa_host_fill_random(&c->quant_offset2, p->seed * 11 + 9, -20, 20);
        }
    }
    if (p->rope) {
        strcpy(c->rope_mode, p->rope == IFA_ROPE_NEOX ? "neox" : "gptj");
        c->rope_dim = p->rope_dim, c->rope_theta = p->rope_table > 0 ? 0 : p->rope_theta, c->rope_offset = p->rope_offset;
        if (p->rope_pos0 > 0) {
            if (!(c->rope_positions = malloc((size_t)p->b * sizeof *c->rope_positions))) return -1;
            for (int64_t b = 0; b < p->b; ++b) c->rope_positions[b] = p->rope_pos0 + 7 * b;
            c->rope_positions_count = p->b;
        }
        if (p->rope_table > 0) {
            const int64_t rd = p->rope_dim ? p->rope_dim : p->d - p->rope_offset, rows = (p->rope_pos0 > 0 ? p->rope_pos0 + 7 * p->b : p->s) + p->sq;
            const int64_t ts[2] = {rows, rd / 2};
            if (ifa_host_tensor_alloc(&c->rope_cos, IFA_DTYPE_FLOAT32, 2, ts) != 0 ||
                ifa_host_tensor_alloc(&c->rope_sin, IFA_DTYPE_FLOAT32, 2, ts) != 0)
                return -1;
            const double theta = p->rope_theta ? p->rope_theta : 10000.0;
            for (int64_t r = 0; r < rows; ++r)
                for (int64_t i = 0; i < rd / 2; ++i) {
                    const double angle = (double)r * p->rope_table * pow(theta, -2.0 * (double)i / (double)rd);
                    ifa_host_set(&c->rope_cos, r * (rd / 2) + i, cos(angle));
                    ifa_host_set(&c->rope_sin, r * (rd / 2) + i, sin(angle));
                }
        }
    }
    if (p->tmpl) strcpy(c->template_mode, p->tmpl == IFA_TEMPLATE_CV ? "cv" : "all_vector");
    if (p->prefix > 0) {
        shape4(p->layout, 1, p->prefix, p->nkv, p->d, &nd, sh);
        if (ifa_host_tensor_alloc(&c->key_shared_prefix, p->kv, nd, sh) != 0 ||
            ifa_host_tensor_alloc(&c->value_shared_prefix, p->kv, nd, sh) != 0)
            return -1;
        ifa_host_fill_random(&c->key_shared_prefix, p->seed * 11 + 10, -1, 1);
        ifa_host_fill_random(&c->value_shared_prefix, p->seed * 11 + 11, -1, 1);
        if (p->prefix_len > 0) {
            c->has_prefix_len = 1, c->prefix_len = p->prefix_len;
            for (int64_t r = p->prefix_len; r < p->prefix; ++r) {
                set_nan_row(&c->key_shared_prefix, bnsd, p->prefix, p->nkv, p->d, 0, r);
                set_nan_row(&c->value_shared_prefix, bnsd, p->prefix, p->nkv, p->d, 0, r);
            }
        }
    }
    if (p->block_size > 0 &&
        (make_paged(p, c) != 0 || (p->aq == IFA_ANTIQUANT_PAGED_HEAD_TOKEN && page_scales(p, c) != 0)))
        return -1;
    if (p->v_aq && split_antiquant(p, c) != 0) return -1;
    /* a value's columns past D_v are never read: NaN in them where the dtype holds one (float KV, a value of its
     * own) */
    if (dv < p->d && !p->value_is_key && p->kv != IFA_DTYPE_INT8 && p->kv != IFA_DTYPE_INT4)
        for (int64_t i = 0; i < ifa_host_tensor_numel(&c->value); ++i)
            if (i % p->d >= dv) ifa_host_set(&c->value, i, NAN);
    if (p->block_size > 0) return 0;
    /* contiguous: NaN in every row the case must not read (float KV; quantised KV poisons token scales) */
    for (int64_t b = 0; b < p->b && !p->aq; ++b) {
        int64_t lo, len;
        read_range(p, b, &lo, &len);
        const int64_t row0 = p->pad ? p->s - p->pad_size - len : 0;
        for (int64_t s = 0; s < p->s; ++s)
            if (s < row0 + lo || s >= row0 + len) {
                set_nan_row(&c->key, bnsd, p->s, p->nkv, p->d, b, s);
                set_nan_row(&c->value, bnsd, p->s, p->nkv, p->d, b, s);
            }
    }
    return 0;
}

/* What check() replans for: a split mode to force (0: none) and a native float width (0: the device's). */
typedef struct replan_for {
    int split;
    int native;
} replan_for;

/* Replans for a CPU of another native float width: the vector shape with that width's tiles (the CPU row's
 * shape even where ctest's tuned runs select the work-group shape). */
static int force_native(ifa_plan *plan, int native) {
    ifa_device_facts facts = test_ctx()->facts;
    facts.native_float_width = native;
    ifa_problem p = plan->problem;
    test_tuning_push("work_group_size=1,chunk_rows=64,vector_width=16,pv_block=4,vector_loads=0");
    const ifa_status st = ifa__plan_make(&p, &facts, plan);
    test_tuning_pop();
    return st == IFA_STATUS_OK && plan->vector_width > 1 &&
                   plan->vector_registers == (native == 8 ? 16 : 32)
               ? 0
               : -1;
}

/* Replans as if the device had 64 compute units and short splits, to force a split mode on PoCL (for the
 * device's own native width where the case names none: on an AVX2 machine the 8-wide shape its engines get,
 * not the 16-wide one two registers a vector); or only for another native width. */
static int replan(ifa_plan *plan, void *user) {
    const replan_for *r = user;
    if (!r->split) return force_native(plan, r->native);
    const int want = r->split;
    ifa_device_facts facts = {IFA_VENDOR_CPU, 64, 4096, r->native ? r->native : test_ctx()->facts.native_float_width,
                              2 * 1024 * 1024, 0};
    test_tuning_push(
           want == IFA_SPLIT_BALANCED         ? "chunk_rows=16,block_cost_rows=8"
           : want == IFA_SPLIT_GLOBAL_ROWMAX ? "split_min_tokens=16,chunk_rows=16,split_rowmax=2,balance_milli=1000000"
                                             : "split_min_tokens=16,chunk_rows=16,balance_milli=1000000,"
                                               "cv_chunk_rows=32"); /* cv: several chunks per split */
    ifa_problem p = plan->problem;
    ifa_status st = ifa__plan_make(&p, &facts, plan);
    test_tuning_pop();
    return st == IFA_STATUS_OK && plan->split_kv == want ? 0 : -1;
}

static void describe_spec(const fspec *p, char *buf, size_t n) {
    snprintf(buf, n,
             "%s q=%s kv=%s B=%lld N=%lld N_kv=%lld D=%lld S=%lld S1=%lld mask=%d/%d pse=%d softcap=%g window=%lld "
             "pad=%d/%lld block_size=%lld share=%d split=%d aq=%d/%d/%s v_aq=%d/%d rope=%d/%lld@%lld/%g/%lld/%g q2=%d template=%d "
             "native=%d sinks=%d alibi=%d dv=%lld%s q_tokens=%lld(%lld values) seed=%llu",
             p->layout, ifa_dtype_name(p->q), ifa_dtype_name(p->kv), (long long)p->b, (long long)p->n,
             (long long)p->nkv, (long long)p->d, (long long)p->s, (long long)p->sq, p->mask, p->mask_fill, p->pse,
             p->softcap, (long long)p->window, p->pad, (long long)p->pad_size, (long long)p->block_size,
             p->share_blocks, p->split, p->aq, p->aq_offset, ifa_dtype_name(p->aq_dtype), p->v_aq, p->v_aq_offset,
             p->rope, (long long)p->rope_dim, (long long)p->rope_offset,
             p->rope_theta, (long long)p->rope_pos0, p->rope_table, p->q2, p->tmpl, p->native, p->sinks,
             p->alibi, (long long)p->dv, p->value_is_key ? "(value=key)" : "",
             (long long)(p->nqlens ? p->qlens[0] : p->sq), (long long)p->nqlens, (unsigned long long)p->seed);
}

static double last_tolerance; /* the storage-precision tolerance of the last check() */

/* ||a - b|| / ||b|| over two runs' outputs. */
static double rel_l2_out(const ifa_case_result *a, const ifa_case_result *b) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < ifa_host_tensor_numel(&a->out); ++i) {
        const double x = ifa_host_get(&a->out, i), y = ifa_host_get(&b->out, i);
        num += (x - y) * (x - y), den += y * y;
    }
    return sqrt(num / den);
}

/* Runs p and checks it against the reference; returns the result for further comparison if keep. An int8
 * output runs twice, its elements set to -128 and then 127 before the run, so an unwritten one fails. */
static void check(const fspec *p, ifa_case_result *keep) {
    /* A case planned for a native width pushes the CPU row's whole kernel shape over IFA_TUNING, so ctest's
     * tuned reruns would build and run exactly the programs the plain run does: they set
     * IFA_TEST_SKIP_NATIVE=1 and leave these cases to it. */
    const char *skip_native = getenv("IFA_TEST_SKIP_NATIVE");
    if (p->native && skip_native && strcmp(skip_native, "1") == 0) return;
    char what[512];
    describe_spec(p, what, sizeof what);
    ifa_case c;
    ck_assert_msg(build(p, &c) == 0, "cannot build %s", what);
    if (p->kv_base) {
        c.kv_base_bytes = p->kv_base > 0 ? p->kv_base : ifa_case_far_kv_base(ifa_context_device(test_ctx()), &c);
        ck_assert_msg(c.kv_base_bytes > 0, "%s: the device allocates no buffer past the key", what);
        const size_t n = strlen(what);
        snprintf(what + n, sizeof what - n, " kv_base_bytes=%lld", (long long)c.kv_base_bytes);
    }
    for (int pass = 0; pass < (p->q2 ? 2 : 1); ++pass) {
        c.int8_poison = pass ? 127 : -128;
        ifa_case_result r;
        replan_for want = {p->split, p->native};
        ifa_status st = ifa_case_run(test_ctx(), test_queue(), &c, p->split || p->native ? replan : NULL, &want, &r);
        ck_assert_msg(st == IFA_STATUS_OK, "%s: run failed: %s (%s)", what, ifa_status_name(st), ifa_last_error());
        if (p->split) ck_assert_int_eq(r.plan.split_kv, p->split);
        if (p->tmpl) ck_assert_int_eq(r.plan.template_id, p->tmpl);
        ck_assert_int_eq(r.plan.problem.paged, p->block_size > 0);
        ifa_case_check k;
        ck_assert_int_eq(ifa_case_check_result(&c, &r, &k), 0);
        last_tolerance = k.tolerance;
        ck_assert_msg(k.pass, "%s: rel_l2=%.3g (tol %.0e) max_abs=%.3g nonfinite=%lld lse_bad=%lld int8_bad=%lld "
                      "round_bias=%.3f ulp", what, k.rel_l2, k.tolerance, k.max_abs, (long long)k.nonfinite,
                      (long long)k.lse_bad, (long long)k.int8_bad, k.round_bias);
        if (keep && pass == 0)
            *keep = r;
        else
            ifa_case_result_free(&r);
    }
    ifa_case_free(&c);
}

static const char *const layouts[] = {"BSH", "BSND", "BNSD"};
static const int splits[] = {IFA_SPLIT_NONE, IFA_SPLIT_PARTIAL_ROWMAX, IFA_SPLIT_GLOBAL_ROWMAX, IFA_SPLIT_BALANCED};

/* S1 = 1, 2, 7, 16 with GQA in every layout; a batch shorter than S1 leaves its first query rows empty. */
START_TEST(multi_token_queries) {
    static const int64_t sqs[] = {1, 2, 7, 16}, lens[] = {150, 3, 97};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 3, .n = 8, .nkv = 2,
               .d = 64, .s = 150, .sq = sqs[_i / 3], .lens = lens, .nlens = 3, .seed = 100 + (uint64_t)_i};
    check(&p, NULL);
}
END_TEST

/* Every split mode with multi-token queries (the partials and the combine are per query token). */
START_TEST(multi_token_split) {
    static const int64_t lens[] = {300, 20, 0, 171};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_BFLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 4, .n = 12,
               .nkv = 4, .d = 40, .s = 300, .sq = 7, .lens = lens, .nlens = 4, .split = splits[1 + _i % 3],
               .seed = 200 + (uint64_t)_i};
    check(&p, NULL);
}
END_TEST

/* Each mask form with each mask dtype, S1 = 1 and 3 (the broadcast forms keep the causal rule). */
START_TEST(mask_forms) {
    static const ifa_dtype mdt[] = {IFA_DTYPE_BOOL, IFA_DTYPE_INT8, IFA_DTYPE_UINT8};
    static const int64_t lens[] = {130, 77};
    const int form = 1 + _i % 4;
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 2, .n = 4, .nkv = 2,
               .d = 32, .s = 130, .sq = _i < 4 ? 1 : 3, .lens = lens, .nlens = 2, .mask = form,
               .mask_dtype = mdt[_i % 3], .seed = 300 + (uint64_t)_i};
    check(&p, NULL);
}
END_TEST

/* A batch whose every position is masked gives zeros and LSE -inf (the check requires both), alone and
 * with split-KV, where every split of that batch sees nothing. */
START_TEST(fully_masked_rows) {
    static const int64_t lens[] = {200, 120};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT32, .kv = IFA_DTYPE_FLOAT32, .b = 2, .n = 4, .nkv = 1,
               .d = 16, .s = 200, .sq = 1 + _i % 2, .lens = lens, .nlens = 2, .mask = _i % 2 ? MASK_PER_TOKEN : MASK_BS,
               .mask_fill = MASK_BATCH0_ALL, .mask_dtype = IFA_DTYPE_BOOL, .split = splits[_i % 4],
               .seed = 400 + (uint64_t)_i};
    ifa_case_result r;
    check(&p, &r);
    for (int64_t i = 0; i < 4 * p.sq; ++i) ck_assert_msg(ifa_host_get(&r.lse, i) == -INFINITY, "lse row %lld", (long long)i);
    ifa_case_result_free(&r);
}
END_TEST

/* A mask that hides the first 40 positions of every batch: with 16-row splits, whole splits see nothing. */
START_TEST(mask_hides_whole_splits) {
    static const int64_t lens[] = {200, 41, 40};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_BFLOAT16, .b = 3, .n = 6, .nkv = 2,
               .d = 24, .s = 200, .sq = 2, .lens = lens, .nlens = 3, .mask = MASK_B11S, .mask_fill = MASK_HIDE_HEAD,
               .hide = 40, .mask_dtype = IFA_DTYPE_UINT8, .split = splits[_i % 4], .seed = 500 + (uint64_t)_i};
    check(&p, NULL);
}
END_TEST

/* pse_shift per batch and broadcast over batch, S1 = 1 and 4, in each query dtype. */
START_TEST(position_bias) {
    static const ifa_dtype qdt[] = {IFA_DTYPE_FLOAT32, IFA_DTYPE_FLOAT16, IFA_DTYPE_BFLOAT16};
    static const int64_t lens[] = {90, 0, 64};
    fspec p = {.layout = layouts[_i % 3], .q = qdt[_i % 3], .kv = IFA_DTYPE_FLOAT16, .b = 3, .n = 8, .nkv = 4, .d = 32,
               .s = 90, .sq = _i < 3 ? 1 : 4, .lens = lens, .nlens = 3,
               .pse = _i % 2 ? IFA_PSE_BROADCAST : IFA_PSE_PER_BATCH, .seed = 600 + (uint64_t)_i};
    check(&p, NULL);
}
END_TEST

/* Soft-cap alone, with bias and with a mask, without and with each split mode. */
START_TEST(softcap) {
    static const int64_t lens[] = {180, 33};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 2, .n = 4, .nkv = 2,
               .d = 64, .s = 180, .sq = 1 + _i % 3, .lens = lens, .nlens = 2, .softcap = _i % 2 ? 0.5 : 30.0,
               .pse = _i >= 4 ? IFA_PSE_PER_BATCH : 0, .mask = _i >= 6 ? MASK_BS : 0, .mask_dtype = IFA_DTYPE_BOOL,
               .split = splits[_i % 4], .seed = 700 + (uint64_t)_i};
    check(&p, NULL);
}
END_TEST

/* Sliding windows shorter and longer than the lengths, with S1 > 1 (each query row has its own window),
 * without and with splits; rows before the window hold NaN, so the op must not read them. */
START_TEST(sliding_window) {
    static const int64_t lens[] = {250, 40, 0, 129};
    static const struct {
        int64_t window, sq;
        int split;
    } cases[] = {{1, 1, IFA_SPLIT_NONE},        {17, 5, IFA_SPLIT_NONE},           {64, 1, IFA_SPLIT_PARTIAL_ROWMAX},
                 {1000, 5, IFA_SPLIT_PARTIAL_ROWMAX}, {64, 5, IFA_SPLIT_GLOBAL_ROWMAX}, {40, 1, IFA_SPLIT_GLOBAL_ROWMAX},
                 {100, 1, IFA_SPLIT_BALANCED},  {17, 5, IFA_SPLIT_BALANCED}};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 4, .n = 8, .nkv = 2,
               .d = 32, .s = 250, .sq = cases[_i].sq, .lens = lens, .nlens = 4, .window = cases[_i].window,
               .split = cases[_i].split, .seed = 800 + (uint64_t)_i};
    check(&p, NULL);
}
END_TEST

/* Ascend's kv padding: rows [S - pad - len, S - pad) with NaN everywhere else, including a batch whose
 * window would start before row 0 (zeros, LSE -inf), uniform and per-batch lengths, with splits. */
START_TEST(kv_padding) {
    static const int64_t lens[] = {100, 150, 7, 0}, one[] = {90};
    static const struct {
        int uniform;
        int64_t pad, sq;
        int split;
    } cases[] = {{0, 60, 1, IFA_SPLIT_NONE},   {0, 60, 3, IFA_SPLIT_PARTIAL_ROWMAX}, {0, 0, 1, IFA_SPLIT_GLOBAL_ROWMAX},
                 {0, 60, 3, IFA_SPLIT_BALANCED}, {1, 60, 1, IFA_SPLIT_PARTIAL_ROWMAX}, {1, 150, 3, IFA_SPLIT_NONE},
                 {1, 110, 2, IFA_SPLIT_GLOBAL_ROWMAX}, {1, 200, 1, IFA_SPLIT_NONE}};
    const int u = cases[_i].uniform;
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 4, .n = 4, .nkv = 2,
               .d = 32, .s = 200, .sq = cases[_i].sq, .lens = u ? one : lens, .nlens = u ? 1 : 4, .pad = 1,
               .pad_size = cases[_i].pad, .split = cases[_i].split, .seed = 900 + (uint64_t)_i};
    check(&p, NULL);
}
END_TEST

/* Paged KV: block sizes 1, 3, 16, 128 and 512, shuffled ids, a shared block, NaN in unused pool slots and
 * wild ids in unused table entries, every layout. */
START_TEST(paged_block_sizes) {
    static const int64_t sizes[] = {1, 3, 16, 128, 512}, lens[] = {700, 1, 0, 513};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 4, .n = 8, .nkv = 2,
               .d = 32, .s = 700, .sq = 1, .lens = lens, .nlens = 4, .block_size = sizes[_i % 5],
               .share_blocks = 1, .seed = 1000 + (uint64_t)_i};
    check(&p, NULL);
}
END_TEST

/* Paged KV with each split mode, multi-token queries and the BSND pool as (blocks, block_size, N_kv·D). */
START_TEST(paged_split) {
    static const int64_t lens[] = {333, 17, 200};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_BFLOAT16, .kv = IFA_DTYPE_BFLOAT16, .b = 3, .n = 4, .nkv = 2,
               .d = 48, .s = 333, .sq = 1 + _i % 3, .lens = lens, .nlens = 3, .block_size = _i % 2 ? 16 : 5,
               .split = splits[1 + _i % 3], .seed = 1100 + (uint64_t)_i};
    check(&p, NULL);
}
END_TEST

/* Paged and contiguous runs of the same logical KV give the same output. */
START_TEST(paged_equals_contiguous) {
    static const int64_t lens[] = {260, 99};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 2, .n = 8, .nkv = 8,
               .d = 64, .s = 260, .sq = 2, .lens = lens, .nlens = 2, .seed = 1200 + (uint64_t)_i};
    ifa_case_result a, b;
    check(&p, &a);
    p.block_size = 32;
    check(&p, &b);
    const int64_t n = ifa_host_tensor_numel(&a.out);
    for (int64_t i = 0; i < n; ++i)
        ck_assert_msg(ifa_host_get(&a.out, i) == ifa_host_get(&b.out, i), "element %lld: %g vs %g", (long long)i,
                      ifa_host_get(&a.out, i), ifa_host_get(&b.out, i));
    ifa_case_result_free(&a);
    ifa_case_result_free(&b);
}
END_TEST

/* Everything at once (S1 = 3, mask, bias, soft-cap, window, GQA) in every layout, contiguous and paged,
 * under every split mode. */
START_TEST(all_features_every_layout_and_split) {
    static const int64_t lens[] = {400, 5, 0, 211};
    const int paged = _i >= 12;
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 4, .n = 8, .nkv = 2,
               .d = 32, .s = 400, .sq = 3, .lens = lens, .nlens = 4, .mask = MASK_B1S, .mask_dtype = IFA_DTYPE_INT8,
               .pse = IFA_PSE_BROADCAST, .softcap = 5.0, .window = 150, .block_size = paged ? 7 : 0,
               .split = splits[(_i / 3) % 4], .seed = 1300 + (uint64_t)_i};
    check(&p, NULL);
}
END_TEST

/* Every antiquant mode with int8 and int4 KV, with and without offsets (each mode x KV dtype x offset in
 * two of the four variants), across layouts, GQA and uneven lengths; the later cases add each split mode,
 * paged KV and masks. */
START_TEST(antiquant_modes) {
    static const int64_t lens[] = {300, 1, 0, 177};
    static const ifa_dtype sdt[] = {IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT32, IFA_DTYPE_BFLOAT16};
    const int mode = 1 + _i % 4, int4 = (_i / 4) % 2, variant = _i / 8; /* variant 0..3 */
    fspec p = {.layout = layouts[_i % 3], .q = _i % 3 == 2 ? IFA_DTYPE_BFLOAT16 : IFA_DTYPE_FLOAT16,
               .kv = int4 ? IFA_DTYPE_INT4 : IFA_DTYPE_INT8, .b = 4, .n = 8, .nkv = 2, .d = 64, .s = 300, .sq = 1,
               .lens = lens, .nlens = 4, .aq = mode, .aq_offset = (variant + int4) % 2, .aq_dtype = sdt[_i % 3],
               .seed = 1400 + (uint64_t)_i};
    if (variant == 1) p.split = splits[1 + _i % 3];
    if (variant == 2) p.block_size = 16, p.split = _i % 2 ? IFA_SPLIT_PARTIAL_ROWMAX : 0;
    if (variant == 3) p.mask = MASK_BS, p.mask_dtype = IFA_DTYPE_BOOL, p.sq = 2, p.window = 100;
    check(&p, NULL);
}
END_TEST

/* antiquant_mode 3: per-head-per-token scales kept with the pages (shared blocks included), int8 and int4,
 * with and without offsets, across layouts and split modes. */
START_TEST(antiquant_paged_scales) {
    static const int64_t lens[] = {300, 1, 0, 177};
    fspec p = {.layout = layouts[_i % 3], .q = _i % 3 == 1 ? IFA_DTYPE_BFLOAT16 : IFA_DTYPE_FLOAT16,
               .kv = _i % 2 ? IFA_DTYPE_INT4 : IFA_DTYPE_INT8, .b = 4, .n = 8, .nkv = 2, .d = 64, .s = 300, .sq = 1,
               .lens = lens, .nlens = 4, .aq = IFA_ANTIQUANT_PAGED_HEAD_TOKEN, .aq_offset = _i % 4 < 2,
               .aq_dtype = IFA_DTYPE_FLOAT32, .block_size = _i % 2 ? 16 : 32, .share_blocks = _i % 3 == 0,
               .split = splits[_i % 4], .seed = 1450 + (uint64_t)_i};
    if (_i >= 8) p.sq = 3, p.lens = lens + 3, p.nlens = 1, p.split = splits[_i % 3]; /* balanced: per-batch lengths */
    check(&p, NULL);
}
END_TEST

/* The separate form (key_/value_antiquant_scale, each side in its own mode): KIVI's keys per channel with
 * values per token and the other pairings of unlike modes (the pages' mode 3 beside each other kind), int8
 * and int4, offsets on either side, scale dtypes that differ between the sides; then each split mode with
 * two query tokens, both register files of the CPU shape, float8 KV, and value = key (MLA's one cache, the
 * value's channel scales its first D_v). */
START_TEST(antiquant_separate_modes) {
    static const int64_t lens[] = {300, 1, 0, 177};
    /* (key, value) ifa_antiquant pairs; 5 (with the pages) needs paged KV */
    static const int pairs[10][2] = {{1, 3}, {1, 4}, {2, 1}, {3, 1}, {4, 3}, {3, 2}, {5, 1}, {1, 5}, {4, 5}, {5, 3}};
    const int k = _i % 10;
    const int paged = pairs[k][0] == 5 || pairs[k][1] == 5 || (_i >= 10 && _i % 3 == 0);
    fspec p = {.layout = layouts[_i % 3], .q = _i % 3 == 2 ? IFA_DTYPE_BFLOAT16 : IFA_DTYPE_FLOAT16,
               .kv = _i % 4 == 1 ? IFA_DTYPE_INT4 : IFA_DTYPE_INT8, .b = 4, .n = 8, .nkv = 2, .d = 64, .s = 300,
               .sq = 1, .lens = lens, .nlens = 4, .aq = pairs[k][0], .aq_offset = _i % 2, .aq_dtype = IFA_DTYPE_FLOAT16,
               .v_aq = pairs[k][1], .v_aq_offset = _i % 3 != 0, .v_aq_dtype = IFA_DTYPE_BFLOAT16,
               .block_size = paged ? 16 : 0, .share_blocks = paged && _i % 2, .seed = 1470 + (uint64_t)_i};
    if (_i >= 10 && _i < 20) p.split = splits[1 + _i % 3], p.sq = 2;
    if (_i >= 20 && _i < 24) p.native = _i % 2 ? 8 : 16;
    if (_i >= 24 && _i < 26) p.kv = _i % 2 ? IFA_DTYPE_FLOAT8_E5M2 : IFA_DTYPE_FLOAT8_E4M3, p.aq = 2, p.v_aq = 3;
    if (_i >= 26) {
        p.value_is_key = 1, p.dv = 48, p.block_size = 0, p.share_blocks = 0;
        p.aq = _i % 2 ? IFA_ANTIQUANT_PER_TOKEN : IFA_ANTIQUANT_PER_CHANNEL;
        p.v_aq = _i % 2 ? IFA_ANTIQUANT_PER_CHANNEL : IFA_ANTIQUANT_PER_HEAD_PER_TOKEN;
    }
    ifa_case_result r;
    memset(&r, 0, sizeof r);
    check(&p, &r);
    if (!r.out.data) return; /* a native-width case the tuned reruns leave to the plain run */
    /* the key's form in the antiquant digit, the value's beside it */
    ck_assert_int_eq((int32_t)(r.plan.tiling_key / 1000000000ull % 10), p.aq);
    ck_assert_int_eq((int32_t)(r.plan.tiling_key / 1000000000000ull % 10), p.v_aq);
    ifa_case_result_free(&r);
}
END_TEST

/* Key and value at the far end of the largest buffer the device allocates (a tensor offset of ~2 GiB on PoCL,
 * ~9 GiB on a card), so every kernel's index arithmetic runs past 2^31 bytes (and, with int4's nibbles, past
 * 2^32 elements; on a card float16's too): a 32-bit product or sum anywhere reads the wrong rows, which the check
 * against the reference sees. int4 and int8 in their scale forms (KIVI's separate one, the pages' own), float16,
 * bfloat16 as MLA's one cache, float8; contiguous and paged, every layout, split modes; the cv template. */
START_TEST(kv_far_in_large_buffers) {
    static const int64_t lens[] = {300, 1, 0, 177};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_INT4, .b = 4, .n = 8, .nkv = 2,
               .d = 128, .s = 300, .sq = 1, .lens = lens, .nlens = 4, .aq_dtype = IFA_DTYPE_FLOAT16, .kv_base = -1,
               .seed = 2900 + (uint64_t)_i};
    switch (_i) {
    case 0: p.aq = IFA_ANTIQUANT_PER_CHANNEL, p.aq_offset = 1; break;
    case 1: p.aq = IFA_ANTIQUANT_PER_TOKEN, p.aq_dtype = IFA_DTYPE_FLOAT32, p.block_size = 16,
            p.split = IFA_SPLIT_PARTIAL_ROWMAX; break;
    case 2: p.aq = IFA_ANTIQUANT_PER_CHANNEL, p.v_aq = IFA_ANTIQUANT_PER_HEAD_PER_TOKEN, p.v_aq_offset = 1,
            p.v_aq_dtype = IFA_DTYPE_FLOAT32, p.block_size = 32, p.share_blocks = 1; break;
    case 3: p.kv = IFA_DTYPE_INT8, p.aq = IFA_ANTIQUANT_PER_CHANNEL, p.aq_offset = 1, p.n = 32,
            p.split = IFA_SPLIT_BALANCED; break;
    case 4: p.kv = IFA_DTYPE_INT8, p.aq = IFA_ANTIQUANT_PAGED_HEAD_TOKEN, p.aq_dtype = IFA_DTYPE_FLOAT32,
            p.block_size = 16; break;
    case 5: p.kv = IFA_DTYPE_FLOAT16, p.n = 16, p.block_size = 16, p.sq = 2, p.split = IFA_SPLIT_GLOBAL_ROWMAX; break;
    case 6: p.q = p.kv = IFA_DTYPE_BFLOAT16, p.d = 80, p.dv = 64, p.value_is_key = 1, p.nkv = 1; break;
    case 7: p.kv = IFA_DTYPE_FLOAT8_E4M3, p.aq = IFA_ANTIQUANT_PER_TENSOR, p.aq_dtype = IFA_DTYPE_FLOAT32; break;
    /* the cv template: CLBlast's products over the K/V at their offset, its gathers of paged and int8 rows */
    case 8: p.kv = IFA_DTYPE_FLOAT16, p.tmpl = IFA_TEMPLATE_CV, p.n = 32; break;
    default: p.kv = IFA_DTYPE_INT8, p.aq = IFA_ANTIQUANT_PER_CHANNEL, p.tmpl = IFA_TEMPLATE_CV, p.n = 32,
             p.block_size = 16; break;
    }
    check(&p, NULL);
}
END_TEST

/* Key and value a few bytes into their buffers (one element, or a few: rows not 16-byte aligned), which the GPU
 * shapes' 16-byte loads cannot take (templates/all_vector.c leaves them for the work-group shape) and the vector
 * shape reads element-aligned: float16, bfloat16 paged, float32, int8 and int4 per channel, float8, MLA's one
 * cache, each layout, with splits; and int4 8 elements in (4 bytes: the lane shape's int4 loads take it, the
 * matrix shapes' 16-byte loads do not). */
START_TEST(kv_unaligned_offsets) {
    static const int64_t lens[] = {300, 1, 0, 177};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 4, .n = 8, .nkv = 2,
               .d = 128, .s = 300, .sq = 1, .lens = lens, .nlens = 4, .aq_dtype = IFA_DTYPE_FLOAT16, .kv_base = 2,
               .split = splits[_i % 4], .seed = 2950 + (uint64_t)_i};
    switch (_i) {
    case 0: break;
    case 1: p.q = p.kv = IFA_DTYPE_BFLOAT16, p.kv_base = 6, p.block_size = 16; break;
    case 2: p.q = p.kv = IFA_DTYPE_FLOAT32, p.kv_base = 4, p.d = 64; break;
    case 3: p.kv = IFA_DTYPE_INT8, p.aq = IFA_ANTIQUANT_PER_CHANNEL, p.aq_offset = 1, p.kv_base = 1, p.n = 32; break;
    case 4: p.kv = IFA_DTYPE_INT4, p.aq = IFA_ANTIQUANT_PER_CHANNEL, p.kv_base = 3; break;
    case 5: p.kv = IFA_DTYPE_FLOAT8_E5M2, p.kv_base = 5; break;
    case 7: p.kv = IFA_DTYPE_INT4, p.aq = IFA_ANTIQUANT_PER_CHANNEL, p.kv_base = 4, p.d = 80; break;
    default: p.d = 80, p.dv = 64, p.value_is_key = 1, p.nkv = 1, p.kv_base = 10; break;
    }
    check(&p, NULL);
}
END_TEST

/* DeepSeek's MLA at its own size (D = 576, D_v = 512, the key as the value, one KV head) for a run under the latent
 * tile (CK_RUN_CASE=mla_tile, ctest test_features_mla_tile: plan mma 7): rows a few bytes into their buffers (the
 * tile's element-aligned loads, MMA_AL 0) in each layout, paged, with splits and balanced units, 2 query tokens,
 * 128 heads in 8 groups, 12 heads (padding rows in the 16-row tile), RoPE on the last 64 columns and a fp16 query
 * against a bf16 cache (the query in two parts), float8 caches (e4m3fn with per-tensor scales and offsets, e5m2). */
START_TEST(mla_tile) {
    static const int64_t lens[] = {300, 1, 0, 177}, rope_lens[] = {300, 1, 5, 177};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 4, .n = 16, .nkv = 1,
               .d = 576, .dv = 512, .value_is_key = 1, .s = 300, .sq = 1, .lens = lens, .nlens = 4,
               .split = splits[_i % 2 ? 1 : 3 * (_i % 4 == 2)], .seed = 5600 + (uint64_t)_i};
    switch (_i) {
    case 0: p.kv_base = 2; break;
    case 1: p.q = p.kv = IFA_DTYPE_BFLOAT16, p.kv_base = 6, p.block_size = 64; break;
    case 2: p.kv_base = 10, p.n = 12; break;
    case 3: p.q = p.kv = IFA_DTYPE_BFLOAT16, p.sq = 2, p.n = 8; break;
    case 4: p.n = 128; break;
    case 5: p.block_size = 16, p.kv_base = 4; break;
    case 6: /* RoPE's default positions need every length >= S1 */
        p.q = p.kv = IFA_DTYPE_BFLOAT16, p.rope = 2, p.rope_offset = 512, p.rope_dim = 64, p.block_size = 64,
        p.lens = rope_lens;
        break;
    case 7: p.kv = IFA_DTYPE_BFLOAT16, p.sq = 3, p.n = 5; break; /* a fp16 query: two parts, as RoPE's */
    case 8: /* an e4m3fn cache with per-tensor scales and offsets, rows off 16-byte alignment, paged */
        p.kv = IFA_DTYPE_FLOAT8_E4M3, p.aq = IFA_ANTIQUANT_PER_TENSOR, p.aq_offset = 1, p.aq_dtype = IFA_DTYPE_FLOAT32,
        p.kv_base = 5, p.block_size = 16;
        break;
    default: p.q = IFA_DTYPE_BFLOAT16, p.kv = IFA_DTYPE_FLOAT8_E5M2; break; /* e5m2 under a bf16 query (two parts) */
    }
    check(&p, NULL);
}
END_TEST

/* The separate form with the key's and the value's halves of one (2, ...) form, in its mode, is the same
 * computation: the same kernel build (tiling key) and bitwise the same output and LSE. */
START_TEST(antiquant_separate_equals_combined) {
    static const int64_t lens[] = {250, 97};
    const int mode = 1 + _i % 5;
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = _i >= 5 ? IFA_DTYPE_INT4 : IFA_DTYPE_INT8,
               .b = 2, .n = 8, .nkv = 2, .d = 32, .s = 250, .sq = 1, .lens = lens, .nlens = 2, .aq = mode,
               .aq_offset = 1, .aq_dtype = IFA_DTYPE_FLOAT32, .block_size = mode == 5 ? 16 : 0,
               .seed = 1560 + (uint64_t)_i};
    ifa_case cc, cs;
    ck_assert_int_eq(build(&p, &cc), 0);
    ck_assert_int_eq(build(&p, &cs), 0);
    ck_assert_int_eq(take_half(&cs.antiquant_scale, 0, &cs.key_antiquant_scale), 0);
    ck_assert_int_eq(take_half(&cs.antiquant_offset, 0, &cs.key_antiquant_offset), 0);
    ck_assert_int_eq(take_half(&cs.antiquant_scale, 1, &cs.value_antiquant_scale), 0);
    ck_assert_int_eq(take_half(&cs.antiquant_offset, 1, &cs.value_antiquant_offset), 0);
    cs.key_antiquant_mode = cs.value_antiquant_mode = cs.antiquant_mode, cs.antiquant_mode = 0;
    ifa_host_tensor_free(&cs.antiquant_scale), ifa_host_tensor_free(&cs.antiquant_offset);
    ifa_case_result rc, rs;
    ck_assert_msg(ifa_case_run(test_ctx(), test_queue(), &cc, NULL, NULL, &rc) == IFA_STATUS_OK, "%s", ifa_last_error());
    ck_assert_msg(ifa_case_run(test_ctx(), test_queue(), &cs, NULL, NULL, &rs) == IFA_STATUS_OK, "%s", ifa_last_error());
    ck_assert_msg(rc.plan.tiling_key == rs.plan.tiling_key, "keys %llu and %llu", (unsigned long long)rc.plan.tiling_key,
                  (unsigned long long)rs.plan.tiling_key);
    ck_assert_int_eq(rs.plan.problem.aq_separate, 1);
    ck_assert(memcmp(rc.out.data, rs.out.data, rc.out.bytes) == 0);
    ck_assert(memcmp(rc.lse.data, rs.lse.data, rc.lse.bytes) == 0);
    ifa_case_check k;
    ck_assert_int_eq(ifa_case_check_result(&cs, &rs, &k), 0);
    ck_assert_msg(k.pass, "mode %d: rel_l2 %.3g", mode, k.rel_l2);
    ifa_case_result_free(&rc), ifa_case_result_free(&rs);
    ifa_case_free(&cc), ifa_case_free(&cs);
}
END_TEST

/* RoPE on the query: both modes, full and partial rope_dim, theta and tables (a scaled context), default and
 * explicit positions, S1 > 1, GQA, paged KV, every split mode, a shared prefix; a rotated part away from the
 * front (rope_offset): DeepSeek's MLA in small (D = 80 of which the trailing 16 rotate, D_v = 64, the key as
 * the value) in both templates, and 24 dims from 6. */
START_TEST(rope_query) {
    static const int64_t lens[] = {300, 5, 177, 64};
    fspec p = {.layout = layouts[_i % 3], .q = _i % 3 == 1 ? IFA_DTYPE_BFLOAT16 : IFA_DTYPE_FLOAT16,
               .kv = IFA_DTYPE_FLOAT16, .b = 4, .n = 8, .nkv = 2, .d = 64, .s = 300, .sq = 1 + (_i / 2) % 3,
               .lens = lens, .nlens = 4, .rope = 1 + _i % 2, .rope_dim = _i % 4 >= 2 ? 32 : 0,
               .rope_theta = _i % 5 == 0 ? 500000 : 0, .rope_pos0 = _i % 3 == 2 ? 1000 : 0,
               .rope_table = _i % 6 == 1 ? 0.25 : 0, .split = splits[_i % 4], .seed = 1700 + (uint64_t)_i};
    if (_i >= 12) p.block_size = 16, p.split = _i % 2 ? IFA_SPLIT_PARTIAL_ROWMAX : 0;
    if (_i >= 16) p.block_size = 0, p.prefix = 100, p.split = 0, p.sq = 1; /* rotated rows of every batch in one pass */
    if (_i >= 20) {
        p.prefix = 0, p.rope_offset = 6, p.rope_dim = 24, p.split = splits[_i % 4];
        if (_i % 3 != 2) p.d = 80, p.dv = 64, p.value_is_key = 1, p.rope_offset = 64, p.rope_dim = _i % 2 ? 16 : 0;
        p.tmpl = _i % 2 ? IFA_TEMPLATE_CV : 0, p.block_size = _i >= 24 ? 16 : 0;
        if (p.tmpl) p.split = 0;
    }
    check(&p, NULL);
}
END_TEST

/* Positions near 2^20 stay within the usual tolerance: the kernel's angle reduction keeps them exact where a
 * float32 pos · inv_freq would be off by up to 0.06 rad. And tables holding the theta formula's values give
 * the theta path's output. */
START_TEST(rope_large_positions_and_tables) {
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT32, .kv = IFA_DTYPE_FLOAT32, .b = 3, .n = 4, .nkv = 2,
               .d = 128, .s = 200, .sq = 1 + _i % 2, .rope = 1 + _i % 2, .rope_pos0 = (1 << 20) - 50,
               .seed = 1800 + (uint64_t)_i};
    ifa_case_result r1, r2;
    check(&p, &r1);
    p.rope_table = 1; /* cos/sin tables of exactly the theta formula's angles */
    check(&p, &r2);
    const double rel = rel_l2_out(&r1, &r2);
    ck_assert_msg(rel < 1e-5, "theta vs tables at 2^20: rel_l2 %.3g", rel);
    ifa_case_result_free(&r1), ifa_case_result_free(&r2);
}
END_TEST

/* int8 KV and float32 KV holding the same dequantised values give the same output to fp32 rounding. */
START_TEST(antiquant_equals_dequantised_float) {
    static const int64_t lens[] = {250, 97};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT32, .kv = _i < 3 ? IFA_DTYPE_INT8 : IFA_DTYPE_INT4, .b = 2,
               .n = 8, .nkv = 2, .d = 32, .s = 250, .sq = 1, .lens = lens, .nlens = 2, .aq = 1 + _i % 4, .aq_offset = 1,
               .aq_dtype = IFA_DTYPE_FLOAT32, .seed = 1500 + (uint64_t)_i};
    ifa_case cq, cf;
    ck_assert_int_eq(build(&p, &cq), 0);
    ck_assert_int_eq(build(&p, &cf), 0);
    /* cf: the dequantised values stored as float32, no antiquant */
    ifa_host_tensor kf, vf;
    ck_assert_int_eq(ifa_host_tensor_alloc(&kf, IFA_DTYPE_FLOAT32, cq.key.ndim, cq.key.shape), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&vf, IFA_DTYPE_FLOAT32, cq.key.ndim, cq.key.shape), 0);
    const int bnsd = is_bnsd(p.layout);
    for (int64_t b = 0; b < p.b; ++b)
        for (int64_t s = 0; s < p.s; ++s)
            for (int64_t h = 0; h < p.nkv; ++h)
                for (int64_t d = 0; d < p.d; ++d) {
                    const int64_t i = ifa_case_at(bnsd, p.s, p.nkv, p.d, b, s, h, d);
                    const ifa_host_tensor *sc = &cq.antiquant_scale, *of = &cq.antiquant_offset;
                    for (int half = 0; half < 2; ++half) {
                        int64_t j = p.aq == IFA_ANTIQUANT_PER_CHANNEL ? (half * p.nkv + h) * p.d + d
                                    : p.aq == IFA_ANTIQUANT_PER_TENSOR ? half
                                    : p.aq == IFA_ANTIQUANT_PER_TOKEN  ? (half * p.b + b) * p.s + s
                                                                       : ((half * p.b + b) * p.nkv + h) * p.s + s;
                        const double x = ifa_host_get(half ? &cq.value : &cq.key, i);
                        ifa_host_set(half ? &vf : &kf, i, (x + ifa_host_get(of, j)) * ifa_host_get(sc, j));
                    }
                }
    ifa_host_tensor_free(&cf.key), ifa_host_tensor_free(&cf.value);
    ifa_host_tensor_free(&cf.antiquant_scale), ifa_host_tensor_free(&cf.antiquant_offset);
    cf.key = kf, cf.value = vf;
    ifa_case_result rq, rf;
    ck_assert_msg(ifa_case_run(test_ctx(), test_queue(), &cq, NULL, NULL, &rq) == IFA_STATUS_OK, "%s", ifa_last_error());
    ck_assert_msg(ifa_case_run(test_ctx(), test_queue(), &cf, NULL, NULL, &rf) == IFA_STATUS_OK, "%s", ifa_last_error());
    const double rel = rel_l2_out(&rq, &rf);
    ck_assert_msg(rel < 2e-6, "mode %d: int vs dequantised float rel_l2 %.3g", p.aq, rel);
    ifa_case_result_free(&rq), ifa_case_result_free(&rf);
    ifa_case_free(&cq), ifa_case_free(&cf);
}
END_TEST

/* int8 output per tensor and per channel, with and without offsets, scales that saturate, every split
 * mode (the combine quantises), a bf16 and an fp32 query, int8 KV. */
START_TEST(quantised_output) {
    static const int64_t lens[] = {260, 3, 0, 140};
    fspec p = {.layout = layouts[_i % 3], .q = _i % 4 == 1 ? IFA_DTYPE_BFLOAT16 : _i % 4 == 2 ? IFA_DTYPE_FLOAT32 : IFA_DTYPE_FLOAT16,
               .kv = IFA_DTYPE_FLOAT16, .b = 4, .n = 8, .nkv = 2, .d = 48, .s = 260, .sq = 1 + _i % 2, .lens = lens,
               .nlens = 4, .q2 = 1 + _i % 3, .q2_offset = _i % 2, .q2_max = _i % 4 == 3 ? 2000.0 : 150.0,
               .split = splits[_i % 4], .seed = 1600 + (uint64_t)_i};
    if (_i >= 8) p.kv = IFA_DTYPE_INT8, p.aq = IFA_ANTIQUANT_PER_TOKEN, p.aq_offset = 1;
    check(&p, NULL);
}
END_TEST

/* A shared prefix (cascade) before every batch's own KV: layouts, S1 = 1 and 3 (the prefix is visible to
 * every query token), GQA, uneven and zero own lengths, a prefix length short of S_p (NaN beyond it), paged
 * own KV, forced splits of the own KV, soft-cap, and a prefix of length 0. */
START_TEST(shared_prefix) {
    static const int64_t lens[] = {150, 0, 37, 90};
    fspec p = {.layout = layouts[_i % 3], .q = _i % 4 == 3 ? IFA_DTYPE_BFLOAT16 : IFA_DTYPE_FLOAT16,
               .kv = IFA_DTYPE_FLOAT16, .b = 4, .n = 8, .nkv = 2, .d = 32, .s = 150, .sq = _i % 2 ? 3 : 1, .lens = lens,
               .nlens = 4, .prefix = 200, .prefix_len = _i % 3 == 1 ? 123 : 0, .seed = 1700 + (uint64_t)_i};
    if (_i >= 3) p.split = IFA_SPLIT_PARTIAL_ROWMAX;
    if (_i == 5 || _i == 6) p.block_size = 16;
    if (_i == 7) p.softcap = 4.0;
    if (_i == 8) p.prefix_len = 0, p.prefix = 1; /* one row */
    check(&p, NULL);
}
END_TEST

/* The vector shape planned for each CPU register file (16-wide with 32 registers, as on AVX-512; 8-wide with
 * 16, as on AVX2), whichever this machine has: the four-key-row score step's tiles (4 or 2 query rows; G = 8
 * and 16 as several tiles), its vector scores with mask, pse, soft-cap, window and antiquant, the per-row
 * step where D / width is not a multiple of 4, S1 > 1, paged KV, adjacent KV heads, a shared prefix. */
START_TEST(vector_tiles_both_register_files) {
    static const int64_t lens[] = {300, 1, 0, 177};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 4, .n = 8, .nkv = 2,
               .d = 64, .s = 300, .sq = 1, .lens = lens, .nlens = 4, .native = _i % 2 ? 8 : 16,
               .seed = 1800 + (uint64_t)_i};
    switch (_i / 2) {
    case 0: /* G = 4: mask, pse, soft-cap, window in the vector scores */
        p.mask = MASK_B1S, p.mask_dtype = IFA_DTYPE_INT8, p.pse = IFA_PSE_BROADCAST, p.softcap = 5.0, p.window = 150;
        break;
    case 1: p.n = 16, p.d = 128; break;                          /* G = 8: two tiles of 4, four of 2 */
    case 2: p.q = IFA_DTYPE_BFLOAT16, p.kv = IFA_DTYPE_BFLOAT16, p.n = 32, p.d = 128, p.mask = MASK_BS,
            p.mask_dtype = IFA_DTYPE_BOOL; break;                /* G = 16 */
    case 3: p.kv = IFA_DTYPE_INT8, p.aq = IFA_ANTIQUANT_PER_CHANNEL, p.aq_offset = 1, p.aq_dtype = IFA_DTYPE_FLOAT16; break;
    case 4: p.kv = IFA_DTYPE_INT4, p.aq = IFA_ANTIQUANT_PER_HEAD_PER_TOKEN, p.aq_offset = 1, p.aq_dtype = IFA_DTYPE_FLOAT32,
            p.block_size = 16; break;
    case 5: p.kv = IFA_DTYPE_INT8, p.aq = IFA_ANTIQUANT_PER_TOKEN, p.aq_offset = 1, p.aq_dtype = IFA_DTYPE_FLOAT32,
            p.d = 128; break;                                    /* antiquant's vector scores at 8 or 16 vectors */
    case 6: p.sq = 3; break;                                     /* 12 query rows, causal */
    case 7: p.q = IFA_DTYPE_FLOAT32, p.kv = IFA_DTYPE_FLOAT32, p.layout = "BSND", p.n = 28, p.nkv = 4; break; /* G = 7 */
    case 8: p.d = 48; break;                                     /* 3 or 6 vectors per row */
    default: p.prefix = 64, p.d = 32; break;                     /* the cascade's prefix pass */
    }
    check(&p, NULL);
}
END_TEST

/* The cascade equals one attention over [prefix ; own KV] concatenated into each sequence. */
START_TEST(shared_prefix_equals_concatenated) {
    static const int64_t lens[] = {100, 7, 0};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT32, .kv = IFA_DTYPE_FLOAT32, .b = 3, .n = 4, .nkv = 2,
               .d = 16, .s = 100, .sq = 1, .lens = lens, .nlens = 3, .prefix = 64, .seed = 1800 + (uint64_t)_i};
    ifa_case cp;
    ck_assert_int_eq(build(&p, &cp), 0);
    /* the same KV concatenated: rows [0, 64) the prefix, then each batch's own rows */
    ifa_case cc;
    fspec q = p;
    q.s = p.s + p.prefix, q.prefix = 0;
    ck_assert_int_eq(build(&q, &cc), 0);
    const int bnsd = is_bnsd(p.layout);
    for (int64_t b = 0; b < p.b; ++b) {
        for (int64_t r = 0; r < q.s; ++r)
            for (int64_t h = 0; h < p.nkv; ++h)
                for (int64_t d = 0; d < p.d; ++d) {
                    const int64_t to = ifa_case_at(bnsd, q.s, p.nkv, p.d, b, r, h, d);
                    const int own = r >= p.prefix;
                    const int64_t from = own ? ifa_case_at(bnsd, p.s, p.nkv, p.d, b, r - p.prefix, h, d)
                                             : ifa_case_at(bnsd, p.prefix, p.nkv, p.d, 0, r, h, d);
                    ifa_host_set(&cc.key, to, ifa_host_get(own ? &cp.key : &cp.key_shared_prefix, from));
                    ifa_host_set(&cc.value, to, ifa_host_get(own ? &cp.value : &cp.value_shared_prefix, from));
                }
        cc.lengths[b] = lens[b] + p.prefix;
    }
    memcpy(cc.query.data, cp.query.data, cp.query.bytes);
    ifa_case_result rp, rc;
    ck_assert_msg(ifa_case_run(test_ctx(), test_queue(), &cp, NULL, NULL, &rp) == IFA_STATUS_OK, "%s", ifa_last_error());
    ck_assert_msg(ifa_case_run(test_ctx(), test_queue(), &cc, NULL, NULL, &rc) == IFA_STATUS_OK, "%s", ifa_last_error());
    ck_assert_int_eq(rp.plan.tiling_key / 10000000000ull % 10, 2); /* mode digit: shared prefix */
    double num = 0, den = 0;
    for (int64_t i = 0; i < ifa_host_tensor_numel(&rp.out); ++i) {
        const double a = ifa_host_get(&rp.out, i), b = ifa_host_get(&rc.out, i);
        ck_assert_msg(isfinite(a), "element %lld not finite", (long long)i);
        num += (a - b) * (a - b), den += b * b;
    }
    ck_assert_msg(sqrt(num / den) < 2e-6, "cascade vs concatenated: rel_l2 %.3g", sqrt(num / den));
    for (int64_t i = 0; i < ifa_host_tensor_numel(&rp.lse); ++i)
        ck_assert_msg(fabs(ifa_host_get(&rp.lse, i) - ifa_host_get(&rc.lse, i)) < 1e-5, "lse %lld", (long long)i);
    ifa_case_result_free(&rp), ifa_case_result_free(&rc);
    ifa_case_free(&cp), ifa_case_free(&cc);
}
END_TEST

/* Attention sinks in every layout and split mode (the sink enters where a row is normalised: the fused
 * kernel for a whole row, the combine for split rows and the cascade), with empty batches and fully masked
 * rows (zeros, lse = the sink), multi-token queries, windows, GQA and MQA, paged KV, int8 KV, int8 output,
 * a shared prefix and both register files; every other case also has heads without a sink (-inf), with
 * one that takes all of the weight (+40) and with a negligible one (-40). */
START_TEST(attention_sinks) {
    static const int64_t lens[] = {260, 0, 31, 140};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 4, .n = 8, .nkv = 2,
               .d = 64, .s = 260, .sq = 1, .lens = lens, .nlens = 4, .split = splits[_i % 4], .sinks = 1 + _i % 2,
               .seed = 2200 + (uint64_t)_i};
    switch (_i / 4) {
    case 0: break;
    case 1: p.sq = 3, p.window = 64, p.q = IFA_DTYPE_BFLOAT16, p.kv = IFA_DTYPE_BFLOAT16; break;
    case 2: /* a fully masked batch: its rows' lse is the sink */
        p.mask = MASK_BS, p.mask_fill = MASK_BATCH0_ALL, p.mask_dtype = IFA_DTYPE_BOOL, p.n = 16, p.nkv = 1;
        break;
    case 3: p.block_size = 16, p.kv = IFA_DTYPE_INT8, p.aq = IFA_ANTIQUANT_PER_CHANNEL, p.aq_dtype = IFA_DTYPE_FLOAT32; break;
    case 4: p.q2 = 1, p.q2_max = 120.0, p.split = _i % 2 ? IFA_SPLIT_PARTIAL_ROWMAX : 0; break;
    default: /* the cascade (prefix partial + own splits, combined) and the other register file */
        if (_i == 20) p.prefix = 70, p.split = 0;
        if (_i == 21) p.prefix = 70, p.prefix_len = 45, p.split = IFA_SPLIT_PARTIAL_ROWMAX;
        if (_i >= 22) p.native = _i == 22 ? 16 : 8, p.split = 0, p.n = 16;
        break;
    }
    check(&p, NULL);
}
END_TEST

/* ALiBi slopes, (N) and (B, N), in every layout and split mode (the bias enters every score step: the
 * four-key step and the single-key tail, the max pass of the global rowmax), with empty batches, multi-token
 * queries (causal, and per-token masks that let a token see keys after its own position: the distance is
 * |j - q_pos|), windows, soft-cap, paged int8 KV, MQA and both register files. */
START_TEST(alibi) {
    static const int64_t lens[] = {260, 0, 31, 140};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 4, .n = 8, .nkv = 2,
               .d = 64, .s = 260, .sq = 1, .lens = lens, .nlens = 4, .split = splits[_i % 4], .alibi = 1 + _i % 2,
               .seed = 2600 + (uint64_t)_i};
    switch (_i) {
    case 0: case 1: case 2: case 3: break;
    case 4: case 5: case 6: case 7:
        p.sq = 3, p.window = 64, p.softcap = 20, p.q = IFA_DTYPE_BFLOAT16, p.kv = IFA_DTYPE_BFLOAT16;
        break;
    case 8: p.block_size = 16, p.kv = IFA_DTYPE_INT8, p.aq = IFA_ANTIQUANT_PER_CHANNEL, p.aq_dtype = IFA_DTYPE_FLOAT32; break;
    case 9: /* per token, hiding only the first 5 positions: token 0 sees the key after its own position */
        p.sq = 2, p.mask = MASK_PER_TOKEN, p.mask_fill = MASK_HIDE_HEAD, p.hide = 5, p.mask_dtype = IFA_DTYPE_UINT8;
        break;
    default: p.native = _i == 10 ? 16 : 8, p.split = 0, p.n = 16, p.nkv = _i == 10 ? 2 : 1; break;
    }
    check(&p, NULL);
}
END_TEST

/* p forced to cv (under cv_tuning, if not NULL, and in at least min_cv_steps chunks) and to all_vector: each
 * against the reference, and their outputs (int8 ones within 1 unit) and lse against each other. */
static void check_cv_and_all_vector_under(fspec *p, const char *cv_tuning, int32_t min_cv_steps) {
    ifa_case_result rc, ra;
    p->tmpl = IFA_TEMPLATE_CV;
    if (cv_tuning) test_tuning_push(cv_tuning);
    check(p, &rc);
    ck_assert_int_ge(rc.plan.cv_steps, min_cv_steps);
    if (cv_tuning) test_tuning_pop();
    const double tol = last_tolerance;
    p->tmpl = IFA_TEMPLATE_ALL_VECTOR;
    check(p, &ra);
    for (int64_t i = 0; p->q2 && i < ifa_host_tensor_numel(&rc.out); ++i) {
        const double a = ifa_host_get(&rc.out, i), b = ifa_host_get(&ra.out, i);
        ck_assert_msg(fabs(a - b) <= 1, "int8 element %lld: %g vs %g", (long long)i, a, b);
    }
    for (int64_t i = 0; i < ifa_host_tensor_numel(&rc.lse); ++i) {
        const double a = ifa_host_get(&rc.lse, i), b = ifa_host_get(&ra.lse, i);
        ck_assert_msg(a == b || fabs(a - b) < 1e-4 * (1 + fabs(b)), "lse row %lld: %g vs %g", (long long)i, a, b);
    }
    const double rel = rel_l2_out(&rc, &ra);
    if (!p->q2)
        ck_assert_msg(rel <= tol, "seed %llu: cv vs all_vector rel_l2 %.3g (tol %.0e)", (unsigned long long)p->seed, rel,
                      tol);
    ifa_case_result_free(&rc), ifa_case_result_free(&ra);
}

static void check_cv_and_all_vector(fspec *p) { check_cv_and_all_vector_under(p, NULL, 1); }

/* Sinks in the cv template (its combine normalises every row), against all_vector and the reference. */
START_TEST(cv_sinks) {
    static const int64_t lens[] = {200, 0, 77};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 3, .n = 16, .nkv = 2,
               .d = 64, .s = 200, .sq = 1 + _i % 2, .lens = lens, .nlens = 3, .sinks = 2,
               .split = _i % 2 ? IFA_SPLIT_PARTIAL_ROWMAX : 0, .seed = 2300 + (uint64_t)_i};
    check_cv_and_all_vector(&p);
}
END_TEST

/* ALiBi in the cv template (its softmax kernel adds the bias), against all_vector and the reference. */
START_TEST(cv_alibi) {
    static const int64_t lens[] = {200, 0, 77};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 3, .n = 16, .nkv = 2,
               .d = 64, .s = 200, .sq = 1 + _i % 2, .lens = lens, .nlens = 3, .alibi = 1 + _i / 2,
               .split = _i % 2 ? IFA_SPLIT_PARTIAL_ROWMAX : 0, .seed = 2700 + (uint64_t)_i};
    check_cv_and_all_vector(&p);
}
END_TEST

/* float8 KV in the cv template (its gather kernel converts the chunk), without and with scales; e4m3fn in
 * cases 0-3, e5m2 in 4-5. */
START_TEST(cv_float8) {
    static const int64_t lens[] = {200, 0, 77};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16,
               .kv = _i < 4 ? IFA_DTYPE_FLOAT8_E4M3 : IFA_DTYPE_FLOAT8_E5M2, .b = 3, .n = 16,
               .nkv = 2, .d = 64, .s = 200, .sq = 1 + _i % 2, .lens = lens, .nlens = 3,
               .aq = _i < 2 || _i == 4 ? 0 : _i == 3 ? IFA_ANTIQUANT_PER_HEAD_PER_TOKEN : IFA_ANTIQUANT_PER_CHANNEL,
               .aq_offset = _i == 3, .aq_dtype = IFA_DTYPE_FLOAT32, .split = _i % 2 ? IFA_SPLIT_PARTIAL_ROWMAX : 0,
               .seed = 2500 + (uint64_t)_i};
    check_cv_and_all_vector(&p);
}
END_TEST

/* The cv template's gather with the separate form: each side dequantised in its own mode (channel beside
 * token, the pages' mode 3 beside channel), split and not. */
START_TEST(cv_antiquant_separate) {
    static const int64_t lens[] = {200, 0, 77};
    static const int pairs[4][2] = {{1, 3}, {5, 1}, {3, 2}, {2, 4}};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = _i == 2 ? IFA_DTYPE_INT4 : IFA_DTYPE_INT8,
               .b = 3, .n = 16, .nkv = 2, .d = 64, .s = 200, .sq = 1 + _i % 2, .lens = lens, .nlens = 3,
               .aq = pairs[_i][0], .aq_offset = _i % 2, .aq_dtype = IFA_DTYPE_FLOAT16, .v_aq = pairs[_i][1],
               .v_aq_offset = 1, .v_aq_dtype = IFA_DTYPE_FLOAT32, .block_size = _i == 1 ? 16 : 0,
               .split = _i % 2 ? IFA_SPLIT_PARTIAL_ROWMAX : 0, .seed = 2550 + (uint64_t)_i};
    check_cv_and_all_vector(&p);
}
END_TEST

/* Multi-head latent attention (value_head_dim D_v < D): the value a tensor of its own whose columns past D_v
 * hold NaN, or the key itself (DeepSeek's MLA: one latent cache, N_kv = 1, the first D_v columns as the
 * value). Cases 0-2 the MLA form; 3-5 paged, each split mode; 6-8 a value of its own, GQA, S1 = 3, each
 * split mode; 9-11 int8 KV with channel scales; 12-14 int8 output per channel (N·D_v) and (N, D_v);
 * 15-17 DeepSeek's own D = 576, D_v = 512 with both register files' tiles and sinks; 18-20 mask, window,
 * soft-cap and ALiBi with S1 = 2. */
START_TEST(value_head_dim) {
    static const int64_t lens[] = {230, 0, 97}, short_lens[] = {100, 0, 61};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_BFLOAT16, .kv = IFA_DTYPE_BFLOAT16, .b = 3, .n = 16, .nkv = 1,
               .d = 72, .dv = 64, .value_is_key = 1, .s = 230, .sq = 1, .lens = lens, .nlens = 3,
               .seed = 2800 + (uint64_t)_i};
    switch (_i / 3) {
    case 0: break;
    case 1: p.block_size = 16, p.split = splits[1 + _i % 3]; break;
    case 2:
        p.value_is_key = 0, p.q = p.kv = IFA_DTYPE_FLOAT16, p.n = 8, p.nkv = 2, p.d = 48, p.dv = 24, p.sq = 3;
        p.split = splits[_i % 4];
        break;
    case 3:
        p.value_is_key = _i == 9, p.kv = IFA_DTYPE_INT8, p.aq = IFA_ANTIQUANT_PER_CHANNEL, p.aq_offset = 1;
        p.aq_dtype = IFA_DTYPE_FLOAT16, p.d = 64, p.dv = 40, p.split = _i == 11 ? IFA_SPLIT_PARTIAL_ROWMAX : 0;
        break;
    case 4: p.value_is_key = _i == 12, p.q2 = 2 + _i % 2, p.q2_offset = 1, p.q2_max = 150.0; break;
    case 5: p.d = 576, p.dv = 512, p.s = 100, p.lens = short_lens, p.native = _i == 15 ? 8 : _i == 16 ? 16 : 0, p.sinks = _i == 17; break;
    default:
        p.value_is_key = _i != 18, p.sq = 2, p.mask = MASK_B1S, p.mask_dtype = IFA_DTYPE_BOOL, p.window = 120;
        p.softcap = 7.0, p.alibi = 1, p.split = _i == 20 ? IFA_SPLIT_BALANCED : 0;
        break;
    }
    ifa_case_result r;
    memset(&r, 0, sizeof r);
    check(&p, &r);
    if (r.out.data) { /* a skipped native case kept nothing */
        ck_assert_int_eq(r.plan.problem.value_dim, p.dv);
        ck_assert_int_eq(r.out.shape[r.out.ndim - 1], strcmp(p.layout, "BSH") == 0 ? p.n * p.dv : p.dv);
    }
    ifa_case_result_free(&r);
}
END_TEST

/* value_head_dim in the cv template (the gather keeps D_v value columns, P x V is M x D_v), against all_vector
 * and the reference: the MLA form, paged with splits, int8 KV with token scales, multi-token GQA. */
START_TEST(cv_value_head_dim) {
    static const int64_t lens[] = {200, 0, 77};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 3, .n = 16, .nkv = 1,
               .d = 72, .dv = 64, .value_is_key = 1, .s = 200, .sq = 1, .lens = lens, .nlens = 3,
               .seed = 2900 + (uint64_t)_i};
    if (_i == 1) p.block_size = 16, p.split = IFA_SPLIT_PARTIAL_ROWMAX;
    if (_i == 2) p.value_is_key = 0, p.kv = IFA_DTYPE_INT8, p.aq = IFA_ANTIQUANT_PER_HEAD_PER_TOKEN, p.aq_offset = 1;
    if (_i == 3) p.value_is_key = 0, p.nkv = 4, p.d = 40, p.dv = 8, p.sq = 2, p.split = IFA_SPLIT_PARTIAL_ROWMAX;
    check_cv_and_all_vector(&p);
}
END_TEST

/* Per-batch query tokens (actual_seq_lengths_q): batches with 4, 0, 2 and 1 of S1 = 4 tokens, the padding
 * tokens NaN in the query and every key row outside the real tokens' windows NaN, against the float64
 * reference (padding rows: zeros, lse -inf or the sink). Cases 0-2 every layout; 3-5 each split mode; 6-8
 * paged with the split modes; 9 window, per-batch mask and soft-cap (batch 3 reads 64 rows, whole splits of
 * 16, 32 or 64, where S1 - 1 for its shift would have made one more); 10 per-token mask (not causal) and pse;
 * 11 ALiBi and sinks; 12 RoPE at the default positions (length - tokens); 13 a shared prefix (padding rows
 * see none of it); 14 int8 KV with token scales and int8 output; 15 one value for every batch, bfloat16;
 * 16-17 both register files' tiles; 18 the MLA form (value = key, D_v < D); 19-22 BSND with both KV heads in
 * one work-group (every head's S1 rows unpacked): balanced units, paged with partial rowmax, global rowmax
 * with AVX2's tiles, sinks under the planner's own plan. */
START_TEST(query_lengths) {
    static const int64_t lens[] = {230, 40, 150, 97}, qlens[] = {4, 0, 2, 1}, one[] = {2};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 4, .n = 8, .nkv = 2,
               .d = 64, .s = 230, .sq = 4, .lens = lens, .nlens = 4, .qlens = qlens, .nqlens = 4,
               .seed = 3000 + (uint64_t)_i};
    switch (_i) {
    case 3: case 4: case 5: p.split = splits[_i - 2]; break;
    case 6: case 7: case 8: p.block_size = 16, p.share_blocks = 1, p.split = splits[_i - 6]; break;
    case 9:
        p.window = 64, p.mask = MASK_B1S, p.mask_dtype = IFA_DTYPE_UINT8, p.softcap = 9.0;
        p.split = IFA_SPLIT_PARTIAL_ROWMAX;
        break;
    case 10: p.mask = MASK_PER_TOKEN, p.mask_dtype = IFA_DTYPE_BOOL, p.pse = IFA_PSE_PER_BATCH; break;
    case 11: p.alibi = 2, p.sinks = 2, p.split = IFA_SPLIT_BALANCED; break;
    case 12: p.rope = IFA_ROPE_NEOX, p.rope_table = 1, p.split = IFA_SPLIT_GLOBAL_ROWMAX; break;
    case 13: p.prefix = 40, p.prefix_len = 33; break;
    case 14:
        p.kv = IFA_DTYPE_INT8, p.aq = IFA_ANTIQUANT_PER_HEAD_PER_TOKEN, p.aq_offset = 1;
        p.q2 = 2, p.q2_offset = 1, p.q2_max = 150.0;
        break;
    case 15: p.q = p.kv = IFA_DTYPE_BFLOAT16, p.sq = 3, p.qlens = one, p.nqlens = 1, p.window = 70; break;
    case 16: case 17: p.native = _i == 16 ? 8 : 16, p.n = 16, p.nkv = 2; break;
    case 18: p.nkv = 1, p.d = 72, p.dv = 64, p.value_is_key = 1, p.block_size = 32; break;
    case 19: p.layout = "BSND", p.split = IFA_SPLIT_BALANCED; break;
    case 20: p.layout = "BSND", p.block_size = 16, p.share_blocks = 1, p.split = IFA_SPLIT_PARTIAL_ROWMAX; break;
    case 21: p.layout = "BSND", p.native = 8, p.split = IFA_SPLIT_GLOBAL_ROWMAX; break;
    case 22: p.layout = "BSND", p.sinks = 2; break;
    default: break;
    }
    ifa_case_result r;
    memset(&r, 0, sizeof r);
    /* 19-22: all heads on either register file (AVX-512's rule would give these 128-byte slices one head) */
    if (_i >= 19) test_tuning_push("multi_head_min_slice_bytes=0,multi_head_min_row_bytes=0");
    check(&p, &r);
    if (_i >= 19) test_tuning_pop();
    if (r.out.data) ck_assert_int_eq(r.plan.problem.q_lengths, 1);
    /* (the work-group shape, which ctest's reruns force, always holds one KV head) */
    if (r.out.data && _i >= 19 && r.plan.vector_width > 1) ck_assert_int_eq(r.plan.kv_heads_per_group, 2);
    ifa_case_result_free(&r);
}
END_TEST

/* All KV heads per work-group with the prefetches spread over the heads' tiles (spread_prefetch 1) and asked
 * for row by row (0), whatever the machine's row says: BSND and BSH, G = 1 and 4, D = 64 and 128, lengths
 * that end steps and chunks part way (the last rows take the row-by-row form), every split mode (global
 * rowmax's max pass prefetches keys only), paged pools with a shared block. Prefetches are hints: the check
 * is that the results stay those of the reference and that the plan holds what was asked. */
START_TEST(spread_prefetch) {
    static const int64_t lens[] = {301, 7, 0, 130};
    const int spread = _i % 2, g = (_i / 2) % 2 ? 4 : 1;
    fspec p = {.layout = (_i / 4) % 2 ? "BSH" : "BSND", .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 4,
               .n = 4 * g, .nkv = 4, .d = _i % 3 ? 64 : 128, .s = 301, .sq = 1, .lens = lens, .nlens = 4,
               .split = splits[(_i / 2) % 4], .seed = 3200 + (uint64_t)_i};
    if (_i >= 8) p.block_size = 16, p.share_blocks = 1;
    test_tuning_push(spread ? "multi_head_min_slice_bytes=0,multi_head_min_row_bytes=0,spread_prefetch=1"
                            : "multi_head_min_slice_bytes=0,multi_head_min_row_bytes=0,spread_prefetch=0");
    ifa_case_result r;
    memset(&r, 0, sizeof r);
    check(&p, &r);
    test_tuning_pop();
    /* (the work-group shape, which ctest's reruns force, holds one KV head and no prefetch) */
    if (r.out.data && r.plan.vector_width > 1) {
        ck_assert_int_eq(r.plan.kv_heads_per_group, 4);
        ck_assert_int_eq(r.plan.spread_prefetch, spread && r.plan.prefetch_rows > 0 && r.plan.vector_registers >= 32);
    }
    ifa_case_result_free(&r);
}
END_TEST

/* actual_seq_lengths_q in the cv template, against all_vector and the reference: plain, split, paged with
 * ALiBi, RoPE with a per-token mask. */
START_TEST(cv_query_lengths) {
    static const int64_t lens[] = {200, 40, 130}, qlens[] = {3, 0, 1};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 3, .n = 8, .nkv = 1,
               .d = 64, .s = 200, .sq = 3, .lens = lens, .nlens = 3, .qlens = qlens, .nqlens = 3,
               .seed = 3100 + (uint64_t)_i};
    if (_i == 1) p.split = IFA_SPLIT_PARTIAL_ROWMAX, p.window = 60;
    if (_i == 2) p.block_size = 16, p.alibi = 1, p.sinks = 1;
    if (_i == 3) p.rope = IFA_ROPE_GPTJ, p.mask = MASK_PER_TOKEN, p.mask_dtype = IFA_DTYPE_INT8;
    check_cv_and_all_vector(&p);
}
END_TEST

/* float8 KV: on its own and with each antiquant mode (scales optional for float8), in every layout and split
 * mode, multi-token, paged (shared blocks), int8 output, MQA and both register files. Cases 0-23 are e4m3fn;
 * 24-35 e5m2 over half of the same variants (k: two of each group of four, every split mode among them). */
START_TEST(float8_kv) {
    static const int64_t lens[] = {300, 1, 0, 177};
    const int k = _i < 24 ? _i : (_i - 24) * 2 + ((_i - 24) / 2) % 2;
    fspec p = {.layout = layouts[k % 3], .q = k % 3 == 2 ? IFA_DTYPE_BFLOAT16 : IFA_DTYPE_FLOAT16,
               .kv = _i < 24 ? IFA_DTYPE_FLOAT8_E4M3 : IFA_DTYPE_FLOAT8_E5M2, .b = 4, .n = 8, .nkv = 2, .d = 64,
               .s = 300, .sq = 1, .lens = lens, .nlens = 4, .split = splits[k % 4], .aq_dtype = IFA_DTYPE_FLOAT32,
               .seed = 2400 + (uint64_t)_i};
    switch (k / 4) {
    case 0: break;
    case 1: p.aq = IFA_ANTIQUANT_PER_TENSOR, p.aq_offset = k % 2, p.aq_dtype = IFA_DTYPE_BFLOAT16; break;
    case 2: p.aq = IFA_ANTIQUANT_PER_CHANNEL, p.aq_offset = k % 2, p.sq = 3; break;
    case 3: p.aq = k % 2 ? IFA_ANTIQUANT_PER_TOKEN : IFA_ANTIQUANT_PER_HEAD_PER_TOKEN, p.aq_offset = 1; break;
    case 4: p.block_size = 16, p.share_blocks = 1, p.aq = k % 2 ? IFA_ANTIQUANT_PAGED_HEAD_TOKEN : 0; break;
    default:
        if (k == 20) p.q2 = 2, p.q2_offset = 1, p.q2_max = 150.0;
        if (k == 21) p.n = 16, p.nkv = 1, p.sq = 2;
        if (k >= 22) p.native = k == 22 ? 16 : 8, p.split = 0;
        break;
    }
    check(&p, NULL);
}
END_TEST

/* int4 K/V at the D the matrix shapes take it (a multiple of 128: a lane's quarter of a key row is whole 16-byte
 * loads of 32 nibbles), for their runs (CK_RUN_CASE=int4 under mma_int4, ctest test_features_int4_mma: each nibble
 * converted to fp16 in registers): per channel and per tensor in both shapes (G = 16 takes the other one), token,
 * head-token and paged scales and KIVI's separate form in the transposed one, offsets, every layout and split mode,
 * paged K/V with shared blocks, 2 query tokens, a bf16 query, D = 256. */
START_TEST(int4_matrix_shapes) {
    static const int64_t lens[] = {300, 1, 0, 177};
    fspec p = {.layout = layouts[_i % 3], .q = _i % 5 == 4 ? IFA_DTYPE_BFLOAT16 : IFA_DTYPE_FLOAT16,
               .kv = IFA_DTYPE_INT4, .b = 4, .n = 8, .nkv = 2, .d = 128, .s = 300, .sq = 1, .lens = lens, .nlens = 4,
               .split = splits[_i % 4], .aq_offset = _i % 2, .aq_dtype = _i % 3 ? IFA_DTYPE_FLOAT16 : IFA_DTYPE_FLOAT32,
               .seed = 2700 + (uint64_t)_i};
    switch (_i / 4) {
    case 0: p.aq = IFA_ANTIQUANT_PER_CHANNEL; break;
    case 1: p.aq = IFA_ANTIQUANT_PER_TENSOR, p.n = 32, p.sq = _i % 2 ? 1 : 2; break; /* G = 16: the other shape */
    case 2: p.aq = _i % 2 ? IFA_ANTIQUANT_PER_TOKEN : IFA_ANTIQUANT_PER_HEAD_PER_TOKEN, p.aq_dtype = IFA_DTYPE_FLOAT32; break;
    case 3: /* KIVI: keys per channel, values per token */
        p.aq = IFA_ANTIQUANT_PER_CHANNEL, p.v_aq = IFA_ANTIQUANT_PER_HEAD_PER_TOKEN, p.v_aq_offset = 1,
        p.v_aq_dtype = IFA_DTYPE_FLOAT32;
        break;
    case 4: p.aq = _i % 2 ? IFA_ANTIQUANT_PAGED_HEAD_TOKEN : IFA_ANTIQUANT_PER_CHANNEL, p.block_size = 32,
            p.share_blocks = 1, p.aq_dtype = IFA_DTYPE_FLOAT32; break;
    default: p.aq = IFA_ANTIQUANT_PER_CHANNEL, p.d = 256, p.sq = 2; break;
    }
    check(&p, NULL);
}
END_TEST

/* Every float8 code through the kernel: one key row, so the output is the value row itself, exactly (a
 * softmax weight of 1), for the 256 codes of a D = 256 row, NaN codes giving NaN (e5m2's infinities too,
 * cases 3-5). Cases 6-11 repeat them with a float16 query, which the matrix shapes take (their own conversion
 * of each byte to fp16 in registers: the float8 case's run under those shapes). */
START_TEST(float8_codes_exact) {
    const int e5m2 = _i % 6 >= 3;
    fspec p = {.layout = layouts[_i % 3], .q = _i >= 6 ? IFA_DTYPE_FLOAT16 : IFA_DTYPE_FLOAT32,
               .kv = e5m2 ? IFA_DTYPE_FLOAT8_E5M2 : IFA_DTYPE_FLOAT8_E4M3, .b = 1, .n = 2,
               .nkv = 1, .d = 256, .s = 1, .sq = 1, .seed = 2600 + (uint64_t)_i};
    ifa_case c;
    ck_assert_int_eq(build(&p, &c), 0);
    for (int code = 0; code < 256; ++code) ((uint8_t *)c.value.data)[code] = (uint8_t)code;
    ifa_case_result r;
    const ifa_status st = ifa_case_run(test_ctx(), test_queue(), &c, NULL, NULL, &r);
    ck_assert_msg(st == IFA_STATUS_OK, "%s", ifa_last_error());
    for (int h = 0; h < 2; ++h)
        for (int code = 0; code < 256; ++code) {
            const double got = ifa_host_get(&r.out, h * 256 + code);
            const double want = e5m2 ? ifa_e5m2_to_double((uint8_t)code) : ifa_e4m3_to_double((uint8_t)code);
            /* the matrix shapes add P.V's products of the two fp16 parts of each probability: the low part of a
             * weight of 1 is 0, and 0 x an infinite value is NaN (float8's own quantisers saturate: no cache they
             * write holds an infinity) */
            const int inf_may_be_nan = _i >= 6 && isinf(want) && isnan(got);
            ck_assert_msg(isnan(want) ? isnan(got) : got == want || inf_may_be_nan, "head %d code 0x%02x: %g, want %g",
                          h, code, got, want);
        }
    ifa_case_result_free(&r);
    ifa_case_free(&c);
}
END_TEST

/* The cv template (CLBlast products, vector kernels between) on every feature it shares with the
 * all-vector template: layouts, dtypes, uneven and empty lengths, equal splits, multi-token causal queries,
 * masks, bias, soft-cap, window, kv padding, paged KV (shared blocks), every antiquant mode with int8 and
 * int4, int8 output, RoPE, GQA ratios 1 to 128. Each runs forced to cv and forced to all_vector: both
 * against the float64 reference (NaN in every row they must not read), and against each other. */
START_TEST(cv_equals_all_vector) {
    static const int64_t lens[] = {300, 5, 0, 177};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 4, .n = 8, .nkv = 2,
               .d = 64, .s = 300, .sq = 1, .lens = lens, .nlens = 4, .seed = 2000 + (uint64_t)_i};
    switch (_i / 3) {
    case 0: break;
    case 1: p.split = IFA_SPLIT_PARTIAL_ROWMAX; break;
    case 2: /* everything at once, S1 = 3 causal */
        p.sq = 3, p.mask = MASK_B1S, p.mask_dtype = IFA_DTYPE_INT8, p.pse = IFA_PSE_BROADCAST, p.softcap = 5.0,
        p.window = 150, p.split = _i % 2 ? IFA_SPLIT_PARTIAL_ROWMAX : 0;
        break;
    case 3: p.block_size = _i % 2 ? 16 : 5, p.share_blocks = 1, p.sq = 2, p.split = _i % 2 ? 0 : IFA_SPLIT_PARTIAL_ROWMAX; break;
    case 4: /* antiquant channel and token modes */
    case 5:
        p.kv = _i % 2 ? IFA_DTYPE_INT4 : IFA_DTYPE_INT8, p.aq = 1 + _i % 4, p.aq_offset = _i % 2,
        p.aq_dtype = IFA_DTYPE_FLOAT32, p.split = _i >= 15 ? IFA_SPLIT_PARTIAL_ROWMAX : 0;
        break;
    case 6: /* scales with the pages; int8 output; per-token mask */
        if (_i == 18)
            p.kv = IFA_DTYPE_INT8, p.aq = IFA_ANTIQUANT_PAGED_HEAD_TOKEN, p.aq_offset = 1, p.aq_dtype = IFA_DTYPE_FLOAT32,
            p.block_size = 16, p.share_blocks = 1, p.split = IFA_SPLIT_PARTIAL_ROWMAX;
        if (_i == 19) p.q2 = 2, p.q2_offset = 1, p.q2_max = 150.0, p.q = IFA_DTYPE_BFLOAT16, p.kv = IFA_DTYPE_BFLOAT16;
        if (_i == 20) p.sq = 4, p.mask = MASK_PER_TOKEN, p.mask_dtype = IFA_DTYPE_BOOL, p.pse = IFA_PSE_PER_BATCH;
        break;
    case 7: /* RoPE: theta and tables, explicit positions; kv padding */
        if (_i == 21) p.rope = IFA_ROPE_NEOX, p.rope_dim = 32, p.sq = 2, p.rope_pos0 = 10;
        if (_i == 22) p.rope = IFA_ROPE_GPTJ, p.rope_table = 0.25, p.rope_pos0 = 1000, p.q = IFA_DTYPE_FLOAT32,
                      p.kv = IFA_DTYPE_FLOAT32;
        if (_i == 23) p.pad = 1, p.pad_size = 20, p.s = 330, p.split = IFA_SPLIT_PARTIAL_ROWMAX;
        break;
    default: { /* GQA ratios 1, 16, 64, 128 */
        static const int64_t heads[][2] = {{4, 4}, {32, 2}, {64, 1}, {128, 1}};
        const int k = _i - 24;
        p.n = heads[k][0], p.nkv = heads[k][1], p.d = k >= 2 ? 32 : 64, p.split = k % 2 ? IFA_SPLIT_PARTIAL_ROWMAX : 0;
        break;
    }
    }
    /* several chunks per entry: the online rescaling between GEMMs */
    check_cv_and_all_vector_under(&p, "cv_chunk_rows=64", p.s > 64 && !p.split ? 2 : 1);
}
END_TEST

/* The planner picks cv by the tuning rule (G x S1 >= cv_min_rows) and refuses a forced cv for the cascade. */
START_TEST(cv_chosen_by_rule) {
    static const int64_t lens[] = {100, 40};
    fspec p = {.layout = "BSND", .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 2, .n = 16, .nkv = 2, .d = 32,
               .s = 100, .sq = 2, .lens = lens, .nlens = 2, .seed = 2100};
    test_tuning_push("cv_min_rows=16");
    ifa_case_result r;
    check(&p, &r);
    ck_assert_int_eq(r.plan.template_id, IFA_TEMPLATE_CV); /* G x S1 = 16 */
    ck_assert_int_eq(r.plan.tiling_key / 10000 % 10, IFA_TEMPLATE_CV);
    ifa_case_result_free(&r);
    p.sq = 1;
    check(&p, &r);
    ck_assert_int_eq(r.plan.template_id, IFA_TEMPLATE_ALL_VECTOR); /* 8 < 16 */
    ifa_case_result_free(&r);
    test_tuning_pop();
    p.prefix = 50, p.tmpl = IFA_TEMPLATE_CV;
    ifa_case c;
    ck_assert_int_eq(build(&p, &c), 0);
    ifa_status st = ifa_case_run(test_ctx(), test_queue(), &c, NULL, NULL, &r);
    ck_assert_int_eq(st, IFA_STATUS_INVALID_ATTRIBUTE);
    ck_assert_msg(strstr(ifa_last_error(), "template_mode \"cv\" cannot run this case: the shared-prefix"), "%s",
                  ifa_last_error());
    ifa_case_free(&c);
}
END_TEST

/* The cases whose kernels a GPU kernel shape changes (scores, softmax, P.V, splits, paged and quantised K/V): the
 * tuned ctest runs of a shape take only these (CK_RUN_CASE=features_kernel), to keep the cold suite short.
 * part 1: masks, positions, paging, the prefix; part 2: quantised K/V; part 3: value widths, query lengths, K/V
 * placement; 0: all three. */
static void add_kernel_shape_cases(TCase *t, int part) {
    if (part == 0 || part == 1) {
        test_add_loop(t, multi_token_queries, 0, 12);
        test_add_loop(t, multi_token_split, 0, 3);
        test_add_loop(t, mask_forms, 0, 8);
        test_add_loop(t, fully_masked_rows, 0, 4);
        test_add_loop(t, mask_hides_whole_splits, 0, 4);
        test_add_loop(t, position_bias, 0, 6);
        test_add_loop(t, softcap, 0, 8);
        test_add_loop(t, sliding_window, 0, 8);
        test_add_loop(t, kv_padding, 0, 8);
        test_add_loop(t, paged_block_sizes, 0, 5);
        test_add_loop(t, paged_split, 0, 3);
        test_add_loop(t, paged_equals_contiguous, 0, 3);
        test_add_loop(t, all_features_every_layout_and_split, 0, 24);
        test_add_loop(t, shared_prefix, 0, 9);
        test_add_loop(t, shared_prefix_equals_concatenated, 0, 3);
        test_add_loop(t, alibi, 0, 12);
    }
    if (part == 0 || part == 2) {
        test_add_loop(t, antiquant_modes, 0, 32);
        test_add_loop(t, antiquant_paged_scales, 0, 12);
        test_add_loop(t, antiquant_separate_modes, 0, 28);
        test_add_loop(t, antiquant_separate_equals_combined, 0, 8);
        test_add_loop(t, antiquant_equals_dequantised_float, 0, 6);
    }
    if (part == 0 || part == 3) {
        test_add_loop(t, value_head_dim, 0, 21);
        test_add_loop(t, query_lengths, 0, 23);
        test_add_loop(t, kv_far_in_large_buffers, 0, 10);
        test_add_loop(t, kv_unaligned_offsets, 0, 8);
    }
}

static void add_kernel_shape_case(Suite *s, const char *name, int part) {
    TCase *k = test_tcase_create(name);
    tcase_set_timeout(k, 600);
    add_kernel_shape_cases(k, part);
    suite_add_tcase(s, k);
}

/* prepare with a queue on the CPU launches each kernel of the walk's plans once, one work-group over a zeroed
 * scratch buffer with every length 0 (op_host/ifa/prepare_api.c); IFA_PREPARE_CHECK=1 reads back the scratch's
 * inputs and guard, which the launches must leave at zero. Each feature's prologue and epilogue (RoPE from
 * theta and tables, int8 output per channel, sinks, ALiBi per batch, antiquant per channel with offsets and per
 * token, paged K/V, per-batch query tokens, a shared prefix, D_v < D, masks, pse, a window) in the layouts,
 * with the walk's split, balanced and fused plans; then the case runs and checks as usual (a fused plan's
 * counters left at zero). */
START_TEST(prepare_warm_launches) {
    static const int64_t lens[] = {300, 5, 177}, qlens[] = {2, 0, 3};
    fspec p = {.layout = layouts[_i % 3], .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .b = 3, .n = 8, .nkv = 2,
               .d = 64, .s = 300, .sq = 1, .lens = lens, .nlens = 3, .seed = 4300 + (uint64_t)_i};
    switch (_i) {
    case 0: p.rope = 1, p.rope_dim = 32, p.q2 = 2, p.q2_max = 100, p.sinks = 1; break;
    case 1: p.alibi = 2, p.rope = 2, p.rope_table = 0.25, p.window = 64; break;
    case 2: p.kv = IFA_DTYPE_INT8, p.aq = IFA_ANTIQUANT_PER_CHANNEL, p.aq_offset = 1, p.aq_dtype = IFA_DTYPE_FLOAT16; break;
    case 3: p.kv = IFA_DTYPE_INT8, p.aq = IFA_ANTIQUANT_PER_TOKEN, p.block_size = 16; break;
    case 4: p.sq = 3, p.qlens = qlens, p.nqlens = 3, p.sinks = 1; break;
    case 5: p.prefix = 100, p.nkv = 1, p.n = 4; break;
    case 6: p.d = 80, p.dv = 64, p.value_is_key = 1, p.nkv = 1, p.rope = 2, p.rope_offset = 64, p.rope_dim = 16; break;
    default: p.mask = MASK_BS, p.mask_dtype = IFA_DTYPE_UINT8, p.pse = IFA_PSE_PER_BATCH, p.sq = 2, p.softcap = 30; break;
    }
    char what[512];
    describe_spec(&p, what, sizeof what);
    ifa_case c;
    ck_assert_msg(build(&p, &c) == 0, "cannot build %s", what);
    ifa_host_tensor out, lse;
    ifa_case_output_forms(&c, &out, &lse);
    ifa_case_tensors ct;
    ifa_incre_flash_attention_args a;
    ifa_case_describe(&c, &out, c.softmax_lse_flag ? &lse : NULL, NULL, &ct, &a);
    setenv("IFA_PREPARE_CHECK", "1", 1);
    int64_t sets = 0;
    const ifa_status st = ifa_incre_flash_attention_prepare(test_ctx(), &a, test_queue(), &sets);
    unsetenv("IFA_PREPARE_CHECK");
    ck_assert_msg(st == IFA_STATUS_OK, "%s: prepare: %s (%s)", what, ifa_status_name(st), ifa_last_error());
    ck_assert_int_ge(sets, 1);
    ifa_case_free(&c);
    check(&p, NULL);
}
END_TEST

Suite *features_suite(void) {
    Suite *s = suite_create("features");
    TCase *t = test_tcase_create("features");
    tcase_set_timeout(t, 600);
    /* the query's rotation and the output's quantisation and sinks (the kernels' shared prologue and epilogue),
     * float8 K/V (no GPU shape of its own), the vector shape's register tiles and prefetch */
    tcase_add_loop_test(t, rope_query, 0, 28);
    tcase_add_loop_test(t, rope_large_positions_and_tables, 0, 6);
    tcase_add_loop_test(t, quantised_output, 0, 12);
    tcase_add_loop_test(t, vector_tiles_both_register_files, 0, 20);
    suite_add_tcase(s, t);
    /* and in a case of their own, which ctest runs beside it (test_features_2): no test of the suite over 2 minutes
     * on a cold kernel cache */
    TCase *t2 = test_tcase_create("features_2");
    tcase_set_timeout(t2, 600);
    tcase_add_loop_test(t2, attention_sinks, 0, 24);
    tcase_add_loop_test(t2, float8_kv, 0, 36);
    tcase_add_loop_test(t2, float8_codes_exact, 0, 6);
    tcase_add_loop_test(t2, spread_prefetch, 0, 16);
    suite_add_tcase(s, t2);
    /* The cases a kernel shape changes in two cases of their own, which the CPU shape's ctest runs beside this one
     * (CK_RUN_CASE): the three took 1041 s together on a cold kernel cache (2-core Zen 3), over ctest's 900 s for
     * one test, and 430, 238 and 325 s apart in a cold .ci/run. The tuned runs of a shape name features_kernel:
     * both parts in one case. */
    const char *only = getenv("CK_RUN_CASE");
    if (only && strcmp(only, "features_kernel") == 0) {
        add_kernel_shape_case(s, "features_kernel", 0);
    } else {
        add_kernel_shape_case(s, "features_kernel_1", 1);
        add_kernel_shape_case(s, "features_kernel_2", 2);
        add_kernel_shape_case(s, "features_kernel_3", 3);
    }
    /* float8 K/V alone, for a run under the matrix shapes (CK_RUN_CASE=float8, ctest test_features_float8_mma) */
    if (only && strcmp(only, "float8") == 0) {
        TCase *f8 = test_tcase_create("float8");
        tcase_set_timeout(f8, 600);
        test_add_loop(f8, float8_kv, 0, 36); /* IFA_TEST_SAMPLE: a card's call takes half (its builds) */
        tcase_add_loop_test(f8, float8_codes_exact, 0, 12);
        suite_add_tcase(s, f8);
    }
    /* int4 K/V at the matrix shapes' D, for a run under them (CK_RUN_CASE=int4, ctest test_features_int4_mma) */
    if (only && strcmp(only, "int4") == 0) {
        TCase *i4 = test_tcase_create("int4");
        tcase_set_timeout(i4, 600);
        test_add_loop(i4, int4_matrix_shapes, 0, 22);
        suite_add_tcase(s, i4);
    }
    /* MLA at D = 576 alone, for a run under the latent tile (CK_RUN_CASE=mla_tile, ctest test_features_mla_tile) */
    if (only && strcmp(only, "mla_tile") == 0) {
        TCase *ml = test_tcase_create("mla_tile");
        tcase_set_timeout(ml, 600);
        tcase_add_loop_test(ml, mla_tile, 0, 10);
        suite_add_tcase(s, ml);
    }
    /* prepare's warm launches: a case of their own, run by ctest beside the rest (CK_RUN_CASE=prepare) */
    TCase *pr = test_tcase_create("prepare");
    tcase_set_timeout(pr, 600);
    tcase_add_loop_test(pr, prepare_warm_launches, 0, 8);
    suite_add_tcase(s, pr);
    /* a case of its own, so that ctest runs it beside the rest (CK_RUN_CASE) */
    TCase *cv = test_tcase_create("cv");
    tcase_set_timeout(cv, 600);
    tcase_add_loop_test(cv, cv_equals_all_vector, 0, 28);
    tcase_add_loop_test(cv, cv_chosen_by_rule, 0, 1);
    tcase_add_loop_test(cv, cv_sinks, 0, 4);
    tcase_add_loop_test(cv, cv_alibi, 0, 4);
    tcase_add_loop_test(cv, cv_float8, 0, 6);
    tcase_add_loop_test(cv, cv_antiquant_separate, 0, 4);
    tcase_add_loop_test(cv, cv_value_head_dim, 0, 4);
    tcase_add_loop_test(cv, cv_query_lengths, 0, 4);
    suite_add_tcase(s, cv);
    return s;
}

int main(void) { return test_run_suite(features_suite()); }
