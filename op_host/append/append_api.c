/* KVCacheAppend: validation, destination table and launch (op_kernel/ifa_append.cl). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "core/limits.h"
#include "op_host/runtime/cl_status.h"
#include "op_host/runtime/context.h"
#include "op_host/runtime/launch.h"
#include "op_host/common/rope.h"
#include "op_host/common/verbose.h"
#include "op_host/runtime/tensor_check.h"
#include "tiling/tuning_table.h"

static int is_float(ifa_dtype d) { return d == IFA_DTYPE_FLOAT32 || d == IFA_DTYPE_FLOAT16 || d == IFA_DTYPE_BFLOAT16; }

/* One side's scales in the separate form: written per token and head (quant 1 symmetric, 2 asymmetric with
 * offsets), or given (stat 1 per tensor, 2 per channel; s_dtype their dtype, s_off 1 with offsets). */
typedef struct side_scales {
    int quant, stat, s_dtype, s_off;
} side_scales;

/* The append's sizes, from validated arguments. units x rows_per_unit is the cache's (batch, position) or
 * (block, row) grid; quant is 0 (float cache), 1 (symmetric) or 2 (asymmetric, with offsets) for
 * antiquant_scale's (2, ...) form; separate: key_/value_antiquant_scale, side[0] the key's, side[1] the
 * value's. */
typedef struct append_shape {
    ifa_layout layout;
    int64_t batch, seq_new, nkv, dim, units, rows_per_unit;
    int paged, quant, separate;
    side_scales side[2];
    ifa__rope_info rope;
} append_shape;

/* The workspace: 4 int32 per new token (unit, row, rotary position, source token; the rows new_seq_lengths
 * leaves out are not listed, so the first entries are the written ones), then with rope_theta the inverse
 * frequencies as float pairs. */
static int64_t append_workspace(const append_shape *m) {
    return 16 * m->batch * m->seq_new + (m->rope.mode && !m->rope.table ? 4 * m->rope.dim : 0);
}

static ifa__rope_view rope_view(const ifa_kv_cache_append_args *a) {
    return (ifa__rope_view){a->rope_mode, a->rope_theta, a->rope_dim, a->rope_positions, a->rope_positions_count,
                            a->rope_cos, a->rope_sin, a->rope_offset};
}

void ifa_kv_cache_append_args_init(ifa_kv_cache_append_args *args) {
    if (!args) return;
    memset(args, 0, sizeof *args);
    args->input_layout = "BSH";
}

/* The new rows: layout-shaped with N_kv heads; sets batch, seq_new and dim. */
static ifa_status check_new_rows(const ifa_kv_cache_append_args *a, append_shape *m) {
    char s1[128], s2[128];
    const ifa_tensor *k = a->key, *v = a->value;
    const int64_t nkv = m->nkv;
    const int want = m->layout == IFA_LAYOUT_BSH ? 3 : 4;
    if (k->ndim != want)
        return ifa__fail(IFA_STATUS_INVALID_RANK, "key has rank %d; input_layout %s needs rank %d %s", (int)k->ndim,
                         ifa__layout_name(m->layout), want,
                         m->layout == IFA_LAYOUT_BSH ? "(B, S1, N_kv·D)" : m->layout == IFA_LAYOUT_BSND
                                                                                ? "(B, S1, N_kv, D)" : "(B, N_kv, S1, D)");
    m->batch = k->shape[0];
    if (m->layout == IFA_LAYOUT_BSH) {
        if (k->shape[2] % nkv != 0)
            return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "key's last dimension %" PRId64 " is not a multiple of "
                             "num_key_value_heads = %" PRId64, k->shape[2], nkv);
        m->seq_new = k->shape[1], m->dim = k->shape[2] / nkv;
    } else {
        const int hd = m->layout == IFA_LAYOUT_BSND ? 2 : 1;
        if (k->shape[hd] != nkv)
            return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "key has shape %s; its head dimension (%d) must be "
                             "num_key_value_heads = %" PRId64, ifa__shape_str(k, s1, sizeof s1), hd, nkv);
        m->seq_new = k->shape[3 - hd], m->dim = k->shape[3];
    }
    if (m->batch > IFA_MAX_BATCH)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_SHAPE, "key has batch %" PRId64 "; at most %d", m->batch, IFA_MAX_BATCH);
    if (m->dim > IFA_MAX_HEAD_DIM)
        return ifa__fail(IFA_STATUS_INVALID_HEAD_DIM, "the head dimension D = %" PRId64 " is outside [1, %d]", m->dim,
                         IFA_MAX_HEAD_DIM);
    /* each new token costs 16 bytes of workspace and host validation: 2^24 tokens per call is ample */
    if (m->batch * m->seq_new > (1 << 24))
        return ifa__fail(IFA_STATUS_UNSUPPORTED_SHAPE, "B·S1 = %" PRId64 "·%" PRId64 " new tokens exceed 2^24 per call",
                         m->batch, m->seq_new);
    if (m->batch * m->seq_new > INT32_MAX / nkv)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_SHAPE, "B·S1·N_kv = %" PRId64 "·%" PRId64 "·%" PRId64
                         " rows exceed 2^31 - 1", m->batch, m->seq_new, nkv);
    if (v && (v->ndim != k->ndim || memcmp(v->shape, k->shape, (size_t)k->ndim * sizeof k->shape[0]) != 0))
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "value has shape %s; it must be key's shape %s",
                         ifa__shape_str(v, s1, sizeof s1), ifa__shape_str(k, s2, sizeof s2));
    if (!is_float(k->dtype))
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "key has dtype %s; new rows are float32, float16 or bfloat16",
                         ifa_dtype_name(k->dtype));
    if (v && v->dtype != k->dtype)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "value has dtype %s; it must be key's %s", ifa_dtype_name(v->dtype),
                         ifa_dtype_name(k->dtype));
    return IFA_STATUS_OK;
}

/* The cache: contiguous or a paged pool in the layout's form; sets units, rows_per_unit, paged, quant. */
static ifa_status check_cache(const ifa_kv_cache_append_args *a, append_shape *m) {
    char s1[128], s2[128];
    const ifa_tensor *c = a->key_cache, *vc = a->value_cache;
    const int64_t nkv = m->nkv, d = m->dim;
    m->paged = a->block_table != NULL;
    if (!m->paged && a->block_size != 0)
        return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "block_table is NULL but block_size = %" PRId64 " asks for a paged "
                         "cache", a->block_size);
    if (m->paged && (a->block_size < 1 || a->block_size > IFA_MAX_BLOCK_SIZE))
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "block_size = %" PRId64 " is outside [1, %d]", a->block_size,
                         IFA_MAX_BLOCK_SIZE);
    const int64_t r = m->paged ? a->block_size : 0; /* 0: any S_max */
    int ok;
    const char *form;
    if (m->layout == IFA_LAYOUT_BNSD) {
        form = m->paged ? "(num_blocks, N_kv, block_size, D)" : "(B, N_kv, S_max, D)";
        ok = c->ndim == 4 && c->shape[1] == nkv && (r == 0 || c->shape[2] == r) && c->shape[3] == d;
        m->rows_per_unit = c->ndim == 4 ? c->shape[2] : 0;
    } else if (c->ndim == 3 && (m->layout == IFA_LAYOUT_BSH || m->paged)) {
        form = m->paged ? "(num_blocks, block_size, N_kv·D)" : "(B, S_max, N_kv·D)";
        ok = (r == 0 || c->shape[1] == r) && c->shape[2] == nkv * d;
        m->rows_per_unit = c->shape[1];
    } else {
        form = m->paged ? "(num_blocks, block_size, N_kv, D)" : m->layout == IFA_LAYOUT_BSH ? "(B, S_max, N_kv·D)"
                                                                                           : "(B, S_max, N_kv, D)";
        ok = m->layout != IFA_LAYOUT_BSH && c->ndim == 4 && (r == 0 || c->shape[1] == r) && c->shape[2] == nkv &&
             c->shape[3] == d;
        m->rows_per_unit = c->ndim == 4 ? c->shape[1] : 0;
    }
    if (ok && !m->paged && c->shape[0] != m->batch) ok = 0;
    if (!ok)
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "key_cache has shape %s; a %s %s cache with B = %" PRId64
                         ", N_kv = %" PRId64 ", D = %" PRId64 "%s must be %s", ifa__shape_str(c, s1, sizeof s1),
                         m->paged ? "paged" : "contiguous", ifa__layout_name(m->layout), m->batch, nkv, d,
                         m->paged ? ", block_size given" : "", form);
    if (m->rows_per_unit > INT32_MAX)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_SHAPE, "key_cache holds %" PRId64 " rows per %s; at most 2^31 - 1",
                         m->rows_per_unit, m->paged ? "block" : "sequence");
    if (c->shape[0] > INT32_MAX)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_SHAPE, "key_cache has %" PRId64 " blocks; at most 2^31 - 1", c->shape[0]);
    m->units = c->shape[0];
    if (vc && (vc->ndim != c->ndim || memcmp(vc->shape, c->shape, (size_t)c->ndim * sizeof c->shape[0]) != 0))
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "value_cache has shape %s; it must be key_cache's shape %s",
                         ifa__shape_str(vc, s1, sizeof s1), ifa__shape_str(c, s2, sizeof s2));
    if (!is_float(c->dtype) && c->dtype != IFA_DTYPE_INT8 && c->dtype != IFA_DTYPE_INT4 && !ifa__is_float8(c->dtype))
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "key_cache has dtype %s; a cache is float32, float16, bfloat16, "
                         "float8_e4m3fn, float8_e5m2, int8 or int4", ifa_dtype_name(c->dtype));
    if (vc && vc->dtype != c->dtype)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "value_cache has dtype %s; it must be key_cache's %s",
                         ifa_dtype_name(vc->dtype), ifa_dtype_name(c->dtype));
    if (c->dtype == IFA_DTYPE_INT4 && d % 2 != 0)
        return ifa__fail(IFA_STATUS_INVALID_HEAD_DIM, "an int4 cache packs two values per byte along D; D = %" PRId64
                         " must be even", d);
    return IFA_STATUS_OK;
}

/* An offset tensor (name) beside its scale: the scale's shape and dtype. */
static ifa_status check_offset_of(const ifa_tensor *of, const ifa_tensor *sc, const char *name) {
    char s1[128], s2[128];
    if (of->ndim != sc->ndim || memcmp(of->shape, sc->shape, (size_t)sc->ndim * sizeof sc->shape[0]) != 0)
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "%s has shape %s; it must be the scale's shape %s", name,
                         ifa__shape_str(of, s1, sizeof s1), ifa__shape_str(sc, s2, sizeof s2));
    if (of->dtype != sc->dtype)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "%s has dtype %s; it must be the scale's %s", name,
                         ifa_dtype_name(of->dtype), ifa_dtype_name(sc->dtype));
    return IFA_STATUS_OK;
}

/* One side of the separate form (side 0 the key, 1 the value): mode 0, scales given per tensor (1) or per
 * channel (N_kv, 1, D), (N_kv, D), (N_kv·D) in a float dtype, each value quantised with its channel's; mode
 * 2 (contiguous) or 3 (paged), written per token and head, float32 (B, N_kv, S_max) or (num_blocks, N_kv,
 * block_size), the attention op's form for that mode without the leading 2. A float8 cache takes no offset. */
static ifa_status check_side(const ifa_kv_cache_append_args *a, const append_shape *m, int side, side_scales *s) {
    char s1[128];
    static const char *const names[2][3] = {{"key_antiquant_scale", "key_antiquant_offset", "key_antiquant_mode"},
                                            {"value_antiquant_scale", "value_antiquant_offset", "value_antiquant_mode"}};
    const ifa_tensor *sc = side ? a->value_antiquant_scale : a->key_antiquant_scale;
    const ifa_tensor *of = side ? a->value_antiquant_offset : a->key_antiquant_offset;
    const int64_t mode = side ? a->value_antiquant_mode : a->key_antiquant_mode, nkv = m->nkv, d = m->dim;
    const ifa_dtype cd = a->key_cache->dtype;
    memset(s, 0, sizeof *s);
    if (!sc)
        return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "%s is NULL; the separate form needs the key's and the value's "
                         "scales%s", names[side][0], of ? " (an offset alone is not enough)" : "");
    if (of && ifa__is_float8(cd))
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "%s is given but key_cache has dtype %s; a float8 cache is "
                         "scaled without offsets", names[side][1], ifa_dtype_name(cd));
    if (of) IFA__TRY(check_offset_of(of, sc, names[side][1]));
    if (mode == 0) {
        if (!is_float(sc->dtype))
            return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "%s has dtype %s; given scales are float32, float16 or "
                             "bfloat16", names[side][0], ifa_dtype_name(sc->dtype));
        const int64_t *sh = sc->shape;
        if (sc->ndim == 1 && sh[0] == 1)
            s->stat = 1;
        else if ((sc->ndim == 3 && sh[0] == nkv && sh[1] == 1 && sh[2] == d) || (sc->ndim == 2 && sh[0] == nkv && sh[1] == d) ||
                 (sc->ndim == 1 && sh[0] == nkv * d))
            s->stat = 2;
        else
            return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "%s has shape %s; %s 0 (given scales) takes (1) per tensor or "
                             "(N_kv, 1, D), (N_kv, D), (N_kv·D) per channel with N_kv = %" PRId64 ", D = %" PRId64,
                             names[side][0], ifa__shape_str(sc, s1, sizeof s1), names[side][2], nkv, d);
        s->s_dtype = sc->dtype, s->s_off = of != NULL;
        return IFA_STATUS_OK;
    }
    if (mode != 2 && mode != 3)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "%s = %" PRId64 " is not 0 (scales given per tensor or channel), "
                         "2 (written per head and token, contiguous) or 3 (written with the pages)", names[side][2], mode);
    if ((mode == 3) != m->paged)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "%s = %" PRId64 " but the cache is %s; written scales take mode %d "
                         "there", names[side][2], mode, m->paged ? "paged" : "contiguous", m->paged ? 3 : 2);
    if (sc->dtype != IFA_DTYPE_FLOAT32)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "%s has dtype %s; written scales are float32", names[side][0],
                         ifa_dtype_name(sc->dtype));
    if (sc->ndim != 3 || sc->shape[0] != m->units || sc->shape[1] != nkv || sc->shape[2] != m->rows_per_unit)
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "%s has shape %s; %s %" PRId64 " takes %s = (%" PRId64 ", %" PRId64
                         ", %" PRId64 ")", names[side][0], ifa__shape_str(sc, s1, sizeof s1), names[side][2], mode,
                         m->paged ? "(num_blocks, N_kv, block_size)" : "(B, N_kv, S_max)", m->units, nkv,
                         m->rows_per_unit);
    s->quant = of ? 2 : 1;
    return IFA_STATUS_OK;
}

/* The separate form: both sides, the value rows present, not beside antiquant_scale's form. */
static ifa_status check_separate(const ifa_kv_cache_append_args *a, append_shape *m) {
    const ifa_dtype cd = a->key_cache->dtype;
    if (is_float(cd))
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "key_/value_antiquant tensors are given but key_cache has dtype "
                         "%s; scales go with an int8, int4 or float8 cache", ifa_dtype_name(cd));
    if (a->antiquant_scale || a->antiquant_offset)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "antiquant_scale/offset and key_/value_antiquant tensors are "
                         "two forms of the same scales; give one");
    if (!a->value)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "a key-only append (value NULL) writes antiquant_scale's "
                         "(2, ...) form, whose value half repeats the key's; the separate form needs value rows");
    IFA__TRY(check_side(a, m, 0, &m->side[0]));
    IFA__TRY(check_side(a, m, 1, &m->side[1]));
    m->separate = 1;
    return IFA_STATUS_OK;
}

/* The scales (and offsets) an int8/int4 cache gets: the attention op's antiquant_mode 2 or 3 form. A float8
 * cache takes a scale or none (symmetric: max|x| / the format's largest finite, 448 or 57344, per token and
 * head), never an offset. Or the separate form (check_separate). */
static ifa_status check_scales(const ifa_kv_cache_append_args *a, append_shape *m) {
    char s1[128];
    const ifa_tensor *sc = a->antiquant_scale, *of = a->antiquant_offset;
    const ifa_dtype cd = a->key_cache->dtype;
    m->separate = 0;
    if (a->key_antiquant_scale || a->key_antiquant_offset || a->value_antiquant_scale || a->value_antiquant_offset) {
        m->quant = 0;
        return check_separate(a, m);
    }
    if (a->key_antiquant_mode || a->value_antiquant_mode)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "%s = %" PRId64 " is given without key_/value_antiquant_scale",
                         a->key_antiquant_mode ? "key_antiquant_mode" : "value_antiquant_mode",
                         a->key_antiquant_mode ? a->key_antiquant_mode : a->value_antiquant_mode);
    if (is_float(cd)) {
        if (sc || of)
            return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "antiquant_%s is given but key_cache has dtype %s; scales "
                             "go with an int8, int4 or float8 cache", sc ? "scale" : "offset", ifa_dtype_name(cd));
        m->quant = 0;
        return IFA_STATUS_OK;
    }
    if (ifa__is_float8(cd) && of)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "antiquant_offset is given but key_cache has dtype %s; a float8 "
                         "cache is scaled symmetrically (max|x| / %g), without offsets", ifa_dtype_name(cd),
                         ifa_dtype_max(cd));
    if (ifa__is_float8(cd) && !sc) {
        m->quant = 0; /* each value rounded to float8 as it is */
        return IFA_STATUS_OK;
    }
    if (!sc)
        return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "antiquant_scale is NULL but key_cache has dtype %s; online "
                         "quantisation writes a scale per token and head", ifa_dtype_name(cd));
    if (sc->dtype != IFA_DTYPE_FLOAT32)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "antiquant_scale has dtype %s; it must be float32",
                         ifa_dtype_name(sc->dtype));
    if (sc->ndim != 4 || sc->shape[0] != 2 || sc->shape[1] != m->units || sc->shape[2] != m->nkv ||
        sc->shape[3] != m->rows_per_unit)
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "antiquant_scale has shape %s; a %s cache takes %s = (2, %" PRId64
                         ", %" PRId64 ", %" PRId64 ")", ifa__shape_str(sc, s1, sizeof s1),
                         m->paged ? "paged" : "contiguous",
                         m->paged ? "(2, num_blocks, N_kv, block_size)" : "(2, B, N_kv, S_max)", m->units, m->nkv,
                         m->rows_per_unit);
    m->quant = 1;
    if (of) {
        IFA__TRY(check_offset_of(of, sc, "antiquant_offset"));
        m->quant = 2;
    }
    return IFA_STATUS_OK;
}

/* One written row's destination: (unit, row) and the batch writing it, for the duplicate search. */
typedef struct dest {
    int64_t cell; /* unit * rows_per_unit + row */
    int64_t batch;
} dest;

static int cmp_dest(const void *x, const void *y) {
    const dest *a = x, *b = y;
    return a->cell < b->cell ? -1 : a->cell > b->cell ? 1 : (a->batch > b->batch) - (a->batch < b->batch);
}

/* Batch b's rows to write: new_seq_lengths' value (checked), or all S1. */
static int64_t rows_of(const ifa_kv_cache_append_args *a, const append_shape *m, int64_t b) {
    return a->new_seq_lengths_count > 0 ? a->new_seq_lengths[a->new_seq_lengths_count == 1 ? 0 : b] : m->seq_new;
}

/* new_seq_lengths: absent, or 1 or B values in [0, S1]. */
static ifa_status check_new_lengths(const ifa_kv_cache_append_args *a, const append_shape *m) {
    const int64_t count = a->new_seq_lengths_count;
    if (count == 0) {
        if (a->new_seq_lengths)
            return ifa__fail(IFA_STATUS_INVALID_SEQ_LENGTHS, "new_seq_lengths is non-NULL with new_seq_lengths_count 0; "
                             "pass NULL to write all S1 rows of every batch or a count of 1 or B");
        return IFA_STATUS_OK;
    }
    if (!a->new_seq_lengths)
        return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "new_seq_lengths is NULL but new_seq_lengths_count is %" PRId64, count);
    if (count != 1 && count != m->batch)
        return ifa__fail(IFA_STATUS_INVALID_SEQ_LENGTHS, "new_seq_lengths has %" PRId64 " values; it needs 1 or B = %"
                         PRId64, count, m->batch);
    for (int64_t i = 0; i < count; ++i)
        if (a->new_seq_lengths[i] < 0 || a->new_seq_lengths[i] > m->seq_new)
            return ifa__fail(IFA_STATUS_INVALID_SEQ_LENGTHS, "new_seq_lengths[%" PRId64 "] = %" PRId64 " is outside [0, "
                             "S1 = %" PRId64 "] (the batch's rows to write, the first of the S1 given)", i,
                             a->new_seq_lengths[i], m->seq_new);
    return IFA_STATUS_OK;
}

/* Lengths and block table: every written row's destination exists, lies in the pool and is written once;
 * with RoPE, every written row's position is valid. Fills out ((unit, row, position, source token) for each
 * written row, in batch and row order) when it is not NULL, and *written with their count. */
static ifa_status check_destinations(const ifa_kv_cache_append_args *a, const append_shape *m, cl_int *out,
                                     int64_t *written) {
    IFA__TRY(check_new_lengths(a, m));
    if (!a->cache_seq_lengths)
        return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "cache_seq_lengths is NULL; the append needs each batch's length");
    if (a->cache_seq_lengths_count != 1 && a->cache_seq_lengths_count != m->batch)
        return ifa__fail(IFA_STATUS_INVALID_SEQ_LENGTHS, "cache_seq_lengths has %" PRId64 " values; it needs 1 or B = %"
                         PRId64, a->cache_seq_lengths_count, m->batch);
    if (m->paged && (a->block_table_cols < 1 || a->block_table_cols > IFA_MAX_SEQ_KV / a->block_size))
        return ifa__fail(IFA_STATUS_INVALID_BLOCK_TABLE, "block_table_cols = %" PRId64 " is outside [1, %lld]",
                         a->block_table_cols, IFA_MAX_SEQ_KV / a->block_size);
    const int64_t cap = m->paged ? a->block_table_cols * a->block_size : m->rows_per_unit;
    int64_t w = 0;
    for (int64_t b = 0; b < m->batch; ++b) {
        const int64_t len = a->cache_seq_lengths[a->cache_seq_lengths_count == 1 ? 0 : b], nb = rows_of(a, m, b);
        if (len < 0 || len > cap - nb)
            return ifa__fail(m->paged && len >= 0 ? IFA_STATUS_INVALID_BLOCK_TABLE : IFA_STATUS_INVALID_SEQ_LENGTHS,
                             "cache_seq_lengths[%" PRId64 "] = %" PRId64 ": the %" PRId64 " new rows go at positions [%"
                             PRId64 ", %" PRId64 "), %s %" PRId64 " positions", b, len, nb, len, len + nb,
                             m->paged ? "but the batch's block_table row holds" : "but the cache (S_max) holds", cap);
        for (int64_t i = 0; i < nb; ++i, ++w) {
            const int64_t p = len + i;
            int64_t unit = b, row = p;
            if (m->paged) {
                const int64_t col = p / a->block_size;
                const int32_t blk = a->block_table[b * a->block_table_cols + col];
                if (blk < 0 || blk >= m->units)
                    return ifa__fail(IFA_STATUS_INVALID_BLOCK_TABLE, "block_table[%" PRId64 "][%" PRId64 "] = %d is "
                                     "outside the pool's blocks [0, %" PRId64 ") (position %" PRId64 " of batch %" PRId64
                                     ")", b, col, (int)blk, m->units, p, b);
                unit = blk, row = p % a->block_size;
            }
            if (out) {
                cl_int *o = out + 4 * w;
                o[0] = (cl_int)unit, o[1] = (cl_int)row, o[3] = (cl_int)(b * m->seq_new + i);
                o[2] = m->rope.mode ? (cl_int)((a->rope_positions ? a->rope_positions[b] : len) + i) : 0;
            }
        }
    }
    *written = w;
    if (m->rope.mode) {
        const ifa__rope_view v = rope_view(a);
        const ifa__rope_default dflt = {a->cache_seq_lengths, a->cache_seq_lengths_count, 0, 0, "cache_seq_lengths",
                                        a->new_seq_lengths_count > 0 ? a->new_seq_lengths : NULL,
                                        a->new_seq_lengths_count, 0};
        IFA__TRY(ifa__rope_check_positions(&v, &m->rope, m->batch, &dflt, m->seq_new, NULL));
    }
    if (!m->paged || m->batch < 2 || w < 2) return IFA_STATUS_OK; /* one batch's positions are distinct */
    const int64_t n = w;
    dest *d = malloc((size_t)n * sizeof *d);
    if (!d) return ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "sorting %" PRId64 " destinations", n);
    for (int64_t b = 0, t = 0; b < m->batch; ++b)
        for (int64_t i = 0; i < rows_of(a, m, b); ++i, ++t) {
            const int64_t p = a->cache_seq_lengths[a->cache_seq_lengths_count == 1 ? 0 : b] + i;
            d[t].cell = (int64_t)a->block_table[b * a->block_table_cols + p / a->block_size] * a->block_size +
                        p % a->block_size;
            d[t].batch = b;
        }
    qsort(d, (size_t)n, sizeof *d, cmp_dest);
    ifa_status st = IFA_STATUS_OK;
    for (int64_t t = 1; t < n && st == IFA_STATUS_OK; ++t)
        if (d[t].cell == d[t - 1].cell)
            st = ifa__fail(IFA_STATUS_INVALID_BLOCK_TABLE, "row %" PRId64 " of block %" PRId64 " would be written by "
                           "batch %" PRId64 " and batch %" PRId64 ": two sequences append into one shared block (copy it "
                           "first)", d[t].cell % a->block_size, d[t].cell / a->block_size, d[t - 1].batch,
                           d[t].batch);
    free(d);
    return st;
}

/* the scale tensors in the order check_args and check_launch list them */
static const char *const scale_names[6] = {"antiquant_scale",      "antiquant_offset",      "key_antiquant_scale",
                                           "key_antiquant_offset", "value_antiquant_scale", "value_antiquant_offset"};

/* Everything but the lengths and block table (check_destinations), which every call checks once. */
static ifa_status check_args(const ifa_kv_cache_append_args *a, append_shape *m) {
    if (!a) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "args is NULL");
    const struct {
        const ifa_tensor *t;
        const char *name;
    } required[] = {{a->key, "key"}, {a->key_cache, "key_cache"}, {a->value, "value"}, {a->value_cache, "value_cache"}};
    /* value and value_cache: both, or neither (a key-only append into one latent cache) */
    if (!a->value != !a->value_cache)
        return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "%s is NULL but %s is given; a key-only append (one latent cache, "
                         "multi-head latent attention) leaves both NULL", a->value ? "value_cache" : "value",
                         a->value ? "value" : "value_cache");
    for (size_t i = 0; i < sizeof required / sizeof required[0]; ++i) {
        if (i >= 2 && !a->value) break;
        if (!required[i].t) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "%s is NULL", required[i].name);
        IFA__TRY(ifa__check_descriptor(required[i].t, required[i].name));
    }
    const ifa_tensor *const scales[6] = {a->antiquant_scale,     a->antiquant_offset,    a->key_antiquant_scale,
                                         a->key_antiquant_offset, a->value_antiquant_scale, a->value_antiquant_offset};
    for (int i = 0; i < 6; ++i)
        if (scales[i]) IFA__TRY(ifa__check_descriptor(scales[i], scale_names[i]));
    if (!a->input_layout || ifa__layout_from_name(a->input_layout, &m->layout) != 0)
        return ifa__fail(IFA_STATUS_INVALID_LAYOUT, "input_layout \"%s\" is not one of BSH, BSND, BNSD",
                         a->input_layout ? a->input_layout : "(null)");
    if (a->num_key_value_heads < 1 || a->num_key_value_heads > IFA_MAX_KV_HEADS)
        return ifa__fail(IFA_STATUS_INVALID_HEADS, "num_key_value_heads = %" PRId64 " is outside [1, %d]",
                         a->num_key_value_heads, IFA_MAX_KV_HEADS);
    m->nkv = a->num_key_value_heads;
    IFA__TRY(check_new_rows(a, m));
    IFA__TRY(check_cache(a, m));
    IFA__TRY(check_scales(a, m));
    const ifa__rope_view v = rope_view(a);
    return ifa__rope_check(&v, m->batch, m->dim, &m->rope);
}

ifa_status ifa_kv_cache_append_get_workspace_size(ifa_context *ctx, const ifa_kv_cache_append_args *args,
                                                  size_t *workspace_bytes) {
    if (!ctx) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "ctx is NULL");
    if (!workspace_bytes) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "workspace_bytes is NULL");
    append_shape m;
    int64_t written;
    IFA__TRY(check_args(args, &m));
    IFA__TRY(check_destinations(args, &m, NULL, &written));
    *workspace_bytes = (size_t)append_workspace(&m);
    return IFA_STATUS_OK;
}

/* The kernel variant of a pass: side -1 both (antiquant_scale's form or none), 0 or 1 one side of the
 * separate form (its quantisation, no RoPE for the value). */
static ifa_status pass_kernel(ifa_context *ctx, const ifa_kv_cache_append_args *args, const append_shape *m, int side,
                              int32_t wg, int32_t hpg, ifa__cached_kernel **k) {
    const side_scales none = {m->quant, 0, 0, 0}, *s = side < 0 ? &none : &m->side[side];
    const int rope = side == 1 ? 0 : m->rope.mode;
    const ifa__define defines[] = {
        {"SRC_T", args->key->dtype}, {"DST_T", args->key_cache->dtype}, {"HEAD_DIM", m->dim},
        {"QUANT", s->quant},         {"WG", wg},                         {"HPG", hpg},
        {"ROPE", rope},              {"ROPE_DIM", rope ? m->rope.dim : 0}, {"ROPE_TAB", rope ? m->rope.table : 0},
        {"ROPE_OFF", rope ? m->rope.offset : 0},
        {"KEY_ONLY", args->value == NULL}, {"STAT", s->stat},            {"S_T", s->stat ? s->s_dtype : 0},
        {"S_OFF", s->s_off},
    };
    static const char *const sources[] = {"ifa_formulas.h", "ifa_common.cl", "ifa_append.cl"};
    IFA__TRY(ifa__get_kernel(ctx, sources, sizeof sources / sizeof sources[0], defines,
                             sizeof defines / sizeof defines[0], "ifa_kv_append", k));
    return ifa__check_kernel(ctx, *k, wg);
}

/* What run needs beyond the arguments: real buffers, a workspace of table_bytes, ctx's queue, and the kernel
 * variants (built once per context; k[1] for the separate form's value pass) with their work-group size and
 * KV heads per work-group. */
static ifa_status check_launch(ifa_context *ctx, const ifa_kv_cache_append_args *args, const append_shape *m,
                               size_t table_bytes, cl_mem workspace, size_t workspace_offset, cl_command_queue queue,
                               ifa__cached_kernel *k[2], int32_t *wg_out, int32_t *hpg_out) {
    IFA__TRY(ifa__check_buffer(ctx->cl_ctx, args->key, "key"));
    if (args->value) IFA__TRY(ifa__check_buffer(ctx->cl_ctx, args->value, "value"));
    IFA__TRY(ifa__check_buffer(ctx->cl_ctx, args->key_cache, "key_cache"));
    if (args->value_cache) IFA__TRY(ifa__check_buffer(ctx->cl_ctx, args->value_cache, "value_cache"));
    const ifa_tensor *const scales[6] = {args->antiquant_scale,     args->antiquant_offset,
                                         args->key_antiquant_scale, args->key_antiquant_offset,
                                         args->value_antiquant_scale, args->value_antiquant_offset};
    for (int i = 0; i < 6; ++i)
        if (scales[i]) IFA__TRY(ifa__check_buffer(ctx->cl_ctx, scales[i], scale_names[i]));
    if (args->rope_cos) IFA__TRY(ifa__check_buffer(ctx->cl_ctx, args->rope_cos, "rope_cos"));
    if (args->rope_sin) IFA__TRY(ifa__check_buffer(ctx->cl_ctx, args->rope_sin, "rope_sin"));
    IFA__TRY(ifa__check_workspace((int64_t)table_bytes, workspace, workspace_offset));
    IFA__TRY(ifa__check_queue(ctx, queue));

    const ifa_tuning t = ifa__tuning_for(ctx->facts.vendor);
    int32_t wg = t.append_work_group_size > 0 ? t.append_work_group_size : 64;
    while (wg > 1 && (wg / 2 >= m->dim || (ctx->facts.max_work_group_size > 0 && wg > ctx->facts.max_work_group_size)))
        wg /= 2;
    int32_t hpg = t.append_heads > 1 ? t.append_heads : 1;
    while (m->nkv % hpg != 0) --hpg;
    IFA__TRY(pass_kernel(ctx, args, m, m->separate ? 0 : -1, wg, hpg, &k[0]));
    if (m->separate) IFA__TRY(pass_kernel(ctx, args, m, 1, wg, hpg, &k[1]));
    *wg_out = wg, *hpg_out = hpg;
    return IFA_STATUS_OK;
}

/* One launch's tensors: the new rows and caches of its passes (v, vc those of the value pass when kinds is 2),
 * the scales it writes (sc, of) and those it is given (gsc, gof); absent ones are stood in for by a buffer
 * the kernel never reads. */
typedef struct pass_io {
    const ifa_tensor *k, *v, *kc, *vc, *sc, *of, *gsc, *gof;
    int kinds; /* the grid's second dimension: 2 key and value passes, 1 the key slots' only */
} pass_io;

static ifa_status enqueue_pass(ifa__cached_kernel *kern, const pass_io *io, const ifa_kv_cache_append_args *args,
                               const append_shape *m, cl_mem workspace, size_t workspace_offset, int64_t written,
                               int32_t wg, int32_t hpg, cl_command_queue queue, cl_event wait, cl_event *done) {
    const size_t tokens = (size_t)(m->batch * m->seq_new);
    const cl_mem kc_buf = io->kc->buffer;
    const cl_mem sc_buf = io->sc ? io->sc->buffer : kc_buf, of_buf = io->of ? io->of->buffer : sc_buf;
    const cl_mem gsc_buf = io->gsc ? io->gsc->buffer : kc_buf, gof_buf = io->gof ? io->gof->buffer : gsc_buf;
    const cl_ulong k_off = ifa__elem_offset(io->k), v_off = ifa__elem_offset(io->v), kc_off = ifa__elem_offset(io->kc),
                   vc_off = ifa__elem_offset(io->vc), dst_off = workspace_offset / 4,
                   sc_off = io->sc ? ifa__elem_offset(io->sc) : 0, of_off = io->of ? ifa__elem_offset(io->of) : 0,
                   gsc_off = io->gsc ? ifa__elem_offset(io->gsc) : 0, gof_off = io->gof ? ifa__elem_offset(io->gof) : 0,
                   units = (cl_ulong)m->units, rope_f_off = (workspace_offset + 16 * tokens) / 8;
    const ifa_tensor *rcos = args->rope_cos, *rsin = args->rope_sin;
    const cl_mem rcos_buf = rcos ? rcos->buffer : kc_buf, rsin_buf = rsin ? rsin->buffer : kc_buf;
    const cl_ulong rcos_off = rcos ? ifa__elem_offset(rcos) : 0, rsin_off = rsin ? ifa__elem_offset(rsin) : 0;
    const cl_int seq_new = (cl_int)m->seq_new, nkv = (cl_int)m->nkv, rows = (cl_int)m->rows_per_unit,
                 bnsd = m->layout == IFA_LAYOUT_BNSD;
    const ifa__karg kargs[] = {
        {sizeof(cl_mem), &io->k->buffer}, {sizeof k_off, &k_off},     {sizeof(cl_mem), &io->v->buffer},
        {sizeof v_off, &v_off},           {sizeof(cl_mem), &kc_buf},  {sizeof kc_off, &kc_off},
        {sizeof(cl_mem), &io->vc->buffer}, {sizeof vc_off, &vc_off},  {sizeof(cl_mem), &workspace},
        {sizeof dst_off, &dst_off},       {sizeof(cl_mem), &sc_buf},  {sizeof sc_off, &sc_off},
        {sizeof(cl_mem), &of_buf},        {sizeof of_off, &of_off},   {sizeof seq_new, &seq_new},
        {sizeof nkv, &nkv},               {sizeof rows, &rows},       {sizeof units, &units},
        {sizeof(cl_mem), &workspace},     {sizeof rope_f_off, &rope_f_off}, {sizeof(cl_mem), &rcos_buf},
        {sizeof rcos_off, &rcos_off},     {sizeof(cl_mem), &rsin_buf}, {sizeof rsin_off, &rsin_off},
        {sizeof bnsd, &bnsd},             {sizeof(cl_mem), &gsc_buf}, {sizeof gsc_off, &gsc_off},
        {sizeof(cl_mem), &gof_buf},       {sizeof gof_off, &gof_off},
    };
    const size_t local[2] = {(size_t)wg, 1},
                 global[2] = {(size_t)wg * (size_t)written * (size_t)(m->nkv / hpg), (size_t)io->kinds};
    return ifa__enqueue(kern, "ifa_kv_append", kargs, sizeof kargs / sizeof kargs[0], global, local, 2, queue, 1, &wait,
                        done);
}

ifa_status ifa_kv_cache_append_run(ifa_context *ctx, const ifa_kv_cache_append_args *args, cl_mem workspace,
                                   size_t workspace_offset, cl_command_queue queue, cl_uint num_events_in_wait_list,
                                   const cl_event *event_wait_list, cl_event *event) {
    if (!ctx) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "ctx is NULL");
    IFA__TRY(ifa__check_wait_list(num_events_in_wait_list, event_wait_list));
    append_shape m;
    IFA__TRY(check_args(args, &m));
    const size_t tokens = (size_t)(m.batch * m.seq_new), table_bytes = (size_t)append_workspace(&m);
    ifa__cached_kernel *k[2] = {NULL, NULL};
    int32_t wg = 1, hpg = 1;
    /* the destinations, checked and staged in one pass; the staging copy goes to the upload below */
    cl_int *host = malloc(table_bytes);
    if (!host) return ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "staging %zu destinations", tokens);
    int64_t written = 0;
    ifa_status st = check_destinations(args, &m, host, &written);
    if (st == IFA_STATUS_OK) st = check_launch(ctx, args, &m, table_bytes, workspace, workspace_offset, queue, k, &wg, &hpg);
    if (st != IFA_STATUS_OK) {
        free(host);
        return st;
    }
    if (m.rope.mode && !m.rope.table) ifa__rope_freqs(&m.rope, (float *)(host + 4 * tokens));
    cl_event uploaded = NULL;
    IFA__TRY(ifa__upload_staged(host, table_bytes, workspace, workspace_offset, queue, num_events_in_wait_list,
                                event_wait_list, &uploaded));
    ifa__verbose_append(args);

    /* key-only: the key's tensors stand in for the value's, which the kernel's single pass never reads */
    const ifa_tensor *kn = args->key, *vn = args->value ? args->value : kn, *kc = args->key_cache;
    const ifa_tensor *vc = args->value_cache ? args->value_cache : kc;
    cl_event done = NULL;
    if (written > 0 && !m.separate) {
        const pass_io io = {kn, vn, kc, vc, args->antiquant_scale, args->antiquant_offset, NULL, NULL, args->value ? 2 : 1};
        st = enqueue_pass(k[0], &io, args, &m, workspace, workspace_offset, written, wg, hpg, queue, uploaded, &done);
    } else if (written > 0) {
        /* one pass per side, each with its own scales in the key slots: written (online) or given */
        cl_event key_done = NULL;
        for (int side = 0; side < 2 && st == IFA_STATUS_OK; ++side) {
            const int given = m.side[side].stat > 0;
            const ifa_tensor *s = side ? args->value_antiquant_scale : args->key_antiquant_scale;
            const ifa_tensor *o = side ? args->value_antiquant_offset : args->key_antiquant_offset;
            const ifa_tensor *src = side ? vn : kn, *cache = side ? vc : kc;
            const pass_io io = {src, src, cache, cache, given ? NULL : s, given ? NULL : o, given ? s : NULL,
                                given ? o : NULL, 1};
            /* in order: the value pass waits on the key pass, so the last event covers both */
            st = enqueue_pass(k[side], &io, args, &m, workspace, workspace_offset, written, wg, hpg, queue,
                              side ? key_done : uploaded, side ? &done : &key_done);
        }
        if (key_done) clReleaseEvent(key_done);
    } else { /* no row to write: the returned event still follows the caller's wait list */
        const cl_int err = clEnqueueMarkerWithWaitList(queue, 1, &uploaded, &done);
        st = err == CL_SUCCESS ? IFA_STATUS_OK : ifa__fail_cl(err, "clEnqueueMarkerWithWaitList", "KVCacheAppend of no row");
    }
    clReleaseEvent(uploaded);
    if (st != IFA_STATUS_OK) return st;
    if (event)
        *event = done;
    else
        clReleaseEvent(done);
    return IFA_STATUS_OK;
}
