/* KVCacheAppend: validation, destination table and launch (op_kernel/ifa_append.cl). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_host/cl_status.h"
#include "op_host/context.h"
#include "op_host/ifa_check.h"
#include "op_host/launch.h"
#include "op_host/rope.h"
#include "op_host/verbose.h"
#include "op_host/tensor_check.h"
#include "tiling/tuning_table.h"

static int is_float(ifa_dtype d) { return d == IFA_DTYPE_FLOAT32 || d == IFA_DTYPE_FLOAT16 || d == IFA_DTYPE_BFLOAT16; }

/* The append's sizes, from validated arguments. units x rows_per_unit is the cache's (batch, position) or
 * (block, row) grid; quant is 0 (float cache), 1 (symmetric) or 2 (asymmetric, with offsets). */
typedef struct append_shape {
    ifa_layout layout;
    int64_t batch, seq_new, nkv, dim, units, rows_per_unit;
    int paged, quant;
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
                            a->rope_cos, a->rope_sin};
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

/* The scales (and offsets) an int8/int4 cache gets: the attention op's antiquant_mode 2 or 3 form. A float8
 * cache takes a scale or none (symmetric: max|x| / the format's largest finite, 448 or 57344, per token and
 * head), never an offset. */
static ifa_status check_scales(const ifa_kv_cache_append_args *a, append_shape *m) {
    char s1[128], s2[128];
    const ifa_tensor *sc = a->antiquant_scale, *of = a->antiquant_offset;
    const ifa_dtype cd = a->key_cache->dtype;
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
        if (of->ndim != sc->ndim || memcmp(of->shape, sc->shape, (size_t)sc->ndim * sizeof sc->shape[0]) != 0)
            return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "antiquant_offset has shape %s; it must be the scale's shape %s",
                             ifa__shape_str(of, s1, sizeof s1), ifa__shape_str(sc, s2, sizeof s2));
        if (of->dtype != IFA_DTYPE_FLOAT32)
            return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "antiquant_offset has dtype %s; it must be float32",
                             ifa_dtype_name(of->dtype));
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
    if (a->antiquant_scale) IFA__TRY(ifa__check_descriptor(a->antiquant_scale, "antiquant_scale"));
    if (a->antiquant_offset) IFA__TRY(ifa__check_descriptor(a->antiquant_offset, "antiquant_offset"));
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

/* What run needs beyond the arguments: real buffers, a workspace of table_bytes, ctx's queue, and the kernel
 * variant (built once per context) with its work-group size and KV heads per work-group. */
static ifa_status check_launch(ifa_context *ctx, const ifa_kv_cache_append_args *args, const append_shape *m,
                               size_t table_bytes, cl_mem workspace, size_t workspace_offset, cl_command_queue queue,
                               ifa__cached_kernel **k, int32_t *wg_out, int32_t *hpg_out) {
    IFA__TRY(ifa__check_buffer(args->key, "key"));
    if (args->value) IFA__TRY(ifa__check_buffer(args->value, "value"));
    IFA__TRY(ifa__check_buffer(args->key_cache, "key_cache"));
    if (args->value_cache) IFA__TRY(ifa__check_buffer(args->value_cache, "value_cache"));
    if (args->antiquant_scale) IFA__TRY(ifa__check_buffer(args->antiquant_scale, "antiquant_scale"));
    if (args->antiquant_offset) IFA__TRY(ifa__check_buffer(args->antiquant_offset, "antiquant_offset"));
    if (args->rope_cos) IFA__TRY(ifa__check_buffer(args->rope_cos, "rope_cos"));
    if (args->rope_sin) IFA__TRY(ifa__check_buffer(args->rope_sin, "rope_sin"));
    IFA__TRY(ifa__check_workspace((int64_t)table_bytes, workspace, workspace_offset));
    IFA__TRY(ifa__check_queue(ctx, queue));

    const ifa_tuning t = ifa__tuning_for(ctx->facts.vendor);
    int32_t wg = t.append_work_group_size > 0 ? t.append_work_group_size : 64;
    while (wg > 1 && (wg / 2 >= m->dim || (ctx->facts.max_work_group_size > 0 && wg > ctx->facts.max_work_group_size)))
        wg /= 2;
    int32_t hpg = t.append_heads > 1 ? t.append_heads : 1;
    while (m->nkv % hpg != 0) --hpg;
    const ifa__define defines[] = {
        {"SRC_T", args->key->dtype}, {"DST_T", args->key_cache->dtype}, {"HEAD_DIM", m->dim},
        {"QUANT", m->quant},         {"WG", wg},                         {"HPG", hpg},
        {"ROPE", m->rope.mode},      {"ROPE_DIM", m->rope.dim},          {"ROPE_TAB", m->rope.table},
        {"KEY_ONLY", args->value == NULL},
    };
    static const char *const sources[] = {"ifa_common.cl", "ifa_append.cl"};
    IFA__TRY(ifa__get_kernel(ctx, sources, 2, defines, sizeof defines / sizeof defines[0], "ifa_kv_append", k));
    IFA__TRY(ifa__check_kernel(ctx, *k, wg));
    *wg_out = wg, *hpg_out = hpg;
    return IFA_STATUS_OK;
}

ifa_status ifa_kv_cache_append_run(ifa_context *ctx, const ifa_kv_cache_append_args *args, cl_mem workspace,
                                   size_t workspace_offset, cl_command_queue queue, cl_uint num_events_in_wait_list,
                                   const cl_event *event_wait_list, cl_event *event) {
    if (!ctx) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "ctx is NULL");
    if (num_events_in_wait_list > 0 && !event_wait_list)
        return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "event_wait_list is NULL with num_events_in_wait_list = %u",
                         (unsigned)num_events_in_wait_list);
    append_shape m;
    IFA__TRY(check_args(args, &m));
    const size_t tokens = (size_t)(m.batch * m.seq_new), table_bytes = (size_t)append_workspace(&m);
    ifa__cached_kernel *k = NULL;
    int32_t wg = 1, hpg = 1;
    /* the destinations, checked and staged in one pass; the staging copy goes to the upload below */
    cl_int *host = malloc(table_bytes);
    if (!host) return ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "staging %zu destinations", tokens);
    int64_t written = 0;
    ifa_status st = check_destinations(args, &m, host, &written);
    if (st == IFA_STATUS_OK) st = check_launch(ctx, args, &m, table_bytes, workspace, workspace_offset, queue, &k, &wg, &hpg);
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
    const ifa_tensor *sc = args->antiquant_scale, *of = args->antiquant_offset;
    const cl_mem sc_buf = sc ? sc->buffer : kc->buffer, of_buf = of ? of->buffer : sc_buf; /* unread when absent */
    const cl_ulong k_off = ifa__elem_offset(kn), v_off = ifa__elem_offset(vn), kc_off = ifa__elem_offset(kc),
                   vc_off = ifa__elem_offset(vc), dst_off = workspace_offset / 4, sc_off = sc ? ifa__elem_offset(sc) : 0,
                   of_off = of ? ifa__elem_offset(of) : 0, units = (cl_ulong)m.units,
                   rope_f_off = (workspace_offset + 16 * tokens) / 8;
    const ifa_tensor *rcos = args->rope_cos, *rsin = args->rope_sin;
    const cl_mem rcos_buf = rcos ? rcos->buffer : kn->buffer, rsin_buf = rsin ? rsin->buffer : kn->buffer;
    const cl_ulong rcos_off = rcos ? ifa__elem_offset(rcos) : 0, rsin_off = rsin ? ifa__elem_offset(rsin) : 0;
    const cl_int seq_new = (cl_int)m.seq_new, nkv = (cl_int)m.nkv, rows = (cl_int)m.rows_per_unit,
                 bnsd = m.layout == IFA_LAYOUT_BNSD;
    const ifa__karg kargs[] = {
        {sizeof(cl_mem), &kn->buffer}, {sizeof k_off, &k_off},     {sizeof(cl_mem), &vn->buffer}, {sizeof v_off, &v_off},
        {sizeof(cl_mem), &kc->buffer}, {sizeof kc_off, &kc_off},   {sizeof(cl_mem), &vc->buffer}, {sizeof vc_off, &vc_off},
        {sizeof(cl_mem), &workspace},  {sizeof dst_off, &dst_off}, {sizeof(cl_mem), &sc_buf},     {sizeof sc_off, &sc_off},
        {sizeof(cl_mem), &of_buf},     {sizeof of_off, &of_off},   {sizeof seq_new, &seq_new},    {sizeof nkv, &nkv},
        {sizeof rows, &rows},          {sizeof units, &units},     {sizeof(cl_mem), &workspace},  {sizeof rope_f_off, &rope_f_off},
        {sizeof(cl_mem), &rcos_buf},   {sizeof rcos_off, &rcos_off}, {sizeof(cl_mem), &rsin_buf},   {sizeof rsin_off, &rsin_off},
        {sizeof bnsd, &bnsd},
    };
    const size_t local[2] = {(size_t)wg, 1},
                 global[2] = {(size_t)wg * (size_t)written * (size_t)(m.nkv / hpg), args->value ? 2 : 1};
    cl_event done = NULL;
    if (written > 0) {
        st = ifa__enqueue(k, "ifa_kv_append", kargs, sizeof kargs / sizeof kargs[0], global, local, 2, queue, 1,
                          &uploaded, &done);
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
