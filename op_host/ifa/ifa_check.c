/* Validation of IncreFlashAttention arguments: one rule per check, each failure naming the argument. */
#include "op_host/ifa/ifa_check.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "op_host/runtime/cl_status.h"
#include "op_host/common/rope.h"
#include "op_host/ifa/ifa_check_inputs.h"
#include "op_host/runtime/tensor_check.h"
#include "tiling/planner.h"

static ifa_status check_rank(const ifa_tensor *t, const char *name, ifa_layout layout, const char *form) {
    int want = layout == IFA_LAYOUT_BSH ? 3 : 4;
    if (t->ndim != want)
        return ifa__fail(IFA_STATUS_INVALID_RANK, "%s has rank %d; input_layout %s needs rank %d %s", name, (int)t->ndim,
                         ifa__layout_name(layout), want, form);
    return IFA_STATUS_OK;
}

int ifa__is_float_dtype(ifa_dtype d) {
    return d == IFA_DTYPE_FLOAT32 || d == IFA_DTYPE_FLOAT16 || d == IFA_DTYPE_BFLOAT16;
}

/* Expected key/value shape for layout, batch, S_kv, N_kv and D. */
static void kv_shape(ifa_layout layout, int64_t b, int64_t s, int64_t nkv, int64_t d, ifa_tensor *out) {
    memset(out, 0, sizeof *out);
    if (layout == IFA_LAYOUT_BSH) {
        out->ndim = 3;
        out->shape[0] = b, out->shape[1] = s, out->shape[2] = nkv * d;
    } else if (layout == IFA_LAYOUT_BSND) {
        out->ndim = 4;
        out->shape[0] = b, out->shape[1] = s, out->shape[2] = nkv, out->shape[3] = d;
    } else {
        out->ndim = 4;
        out->shape[0] = b, out->shape[1] = nkv, out->shape[2] = s, out->shape[3] = d;
    }
}

int ifa__same_shape(const ifa_tensor *a, const ifa_tensor *b) {
    if (a->ndim != b->ndim) return 0;
    for (int i = 0; i < a->ndim; ++i)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

int64_t ifa__effective_length(const ifa_problem *p, int64_t raw) {
    /* Ascend's kv_padding_size: rows [S_kv - pad - len, S_kv - pad); a window starting before row 0 is empty */
    return p->has_kv_padding && p->seq_kv - p->kv_padding - raw < 0 ? 0 : raw;
}

/* FNV-1a over a value's 8 bytes, low first (the plan's hashes of per-batch lengths and tokens). */
#define IFA__FNV_BASIS 1469598103934665603ull
static uint64_t fnv_add(uint64_t h, int64_t v) {
    for (int k = 0; k < 8; ++k) h = (h ^ ((uint64_t)v >> (8 * k) & 0xffu)) * 1099511628211ull;
    return h;
}

int64_t ifa__query_tokens(const ifa_incre_flash_attention_args *a, const ifa_problem *p, int64_t b) {
    return p->q_lengths ? a->actual_seq_lengths_q[a->actual_seq_lengths_q_count == 1 ? 0 : b] : p->seq_q;
}

int64_t ifa__batch_length(const ifa_incre_flash_attention_args *a, const ifa_problem *p, int64_t b) {
    if (p->q_lengths && ifa__query_tokens(a, p, b) == 0) return 0;
    const int64_t count = a->actual_seq_lengths_count;
    return count == 0 ? p->seq_kv : ifa__effective_length(p, a->actual_seq_lengths[count == 1 ? 0 : b]);
}

int64_t ifa__batch_causal_shift(const ifa_incre_flash_attention_args *a, const ifa_problem *p, int64_t b) {
    const int64_t q = ifa__query_tokens(a, p, b);
    return p->causal && q > 0 ? q - 1 : 0;
}

/* actual_seq_lengths_q: 1 or B values in [0, S1]; fills q_lengths and its hash. */
static ifa_status check_query_lengths(const ifa_incre_flash_attention_args *a, ifa_problem *p) {
    const int64_t count = a->actual_seq_lengths_q_count;
    if (count == 0) {
        if (a->actual_seq_lengths_q)
            return ifa__fail(IFA_STATUS_INVALID_SEQ_LENGTHS,
                             "actual_seq_lengths_q is non-NULL with actual_seq_lengths_q_count 0; pass NULL for S1 "
                             "query tokens in every batch or a count of 1 or B");
        return IFA_STATUS_OK;
    }
    if (!a->actual_seq_lengths_q)
        return ifa__fail(IFA_STATUS_NULL_ARGUMENT,
                         "actual_seq_lengths_q is NULL but actual_seq_lengths_q_count is %" PRId64, count);
    if (count != 1 && count != p->batch)
        return ifa__fail(IFA_STATUS_INVALID_SEQ_LENGTHS,
                         "actual_seq_lengths_q has %" PRId64 " values; it needs 1 or B = %" PRId64, count, p->batch);
    for (int64_t i = 0; i < count; ++i) {
        const int64_t v = a->actual_seq_lengths_q[i];
        if (v < 0 || v > p->seq_q)
            return ifa__fail(IFA_STATUS_INVALID_SEQ_LENGTHS,
                             "actual_seq_lengths_q[%" PRId64 "] = %" PRId64 " is outside [0, S1 = %" PRId64
                             "] (the batch's query tokens, the first of query's S1)", i, v, p->seq_q);
    }
    p->q_lengths = 1;
    uint64_t h = IFA__FNV_BASIS;
    for (int64_t b = 0; b < p->batch; ++b) h = fnv_add(h, ifa__query_tokens(a, p, b));
    p->q_lengths_hash = h;
    return IFA_STATUS_OK;
}

/* With actual_seq_lengths_q each batch has its own causal shift and a batch without query tokens reads
 * nothing, so the lengths go to the kernels per batch (with the tokens) and the spans are each batch's. */
static void query_token_spans(const ifa_incre_flash_attention_args *a, ifa_problem *p, int64_t *max_len) {
    uint64_t h = IFA__FNV_BASIS;
    int64_t mx = 0, span_max = 0, total = 0;
    for (int64_t b = 0; b < p->batch; ++b) {
        const int64_t e = ifa__batch_length(a, p, b), span = ifa__kv_span(e, p->window, ifa__batch_causal_shift(a, p, b));
        if (e > mx) mx = e;
        if (span > span_max) span_max = span;
        total += span;
        h = fnv_add(h, e);
    }
    *max_len = mx;
    p->lengths_mode = IFA_LENGTHS_PER_BATCH;
    p->uniform_length = 0;
    p->max_length = span_max;
    p->total_length = total;
    p->lengths_hash = h;
}

/* Reads the lengths; fills lengths_mode, uniform_length, the largest effective length (*max_len, what
 * masks and biases must cover) and the rows blocks read (max_length, total_length). */
static ifa_status check_lengths(const ifa_incre_flash_attention_args *a, ifa_problem *p, int64_t *max_len) {
    int64_t count = a->actual_seq_lengths_count;
    const int64_t shift = p->causal ? p->seq_q - 1 : 0;
    if (count == 0) {
        if (a->actual_seq_lengths)
            return ifa__fail(IFA_STATUS_INVALID_SEQ_LENGTHS,
                             "actual_seq_lengths is non-NULL with actual_seq_lengths_count 0; pass NULL for full "
                             "length or a count of 1 or B");
        if (p->paged)
            return ifa__fail(IFA_STATUS_INVALID_SEQ_LENGTHS,
                             "paged KV (block_table) needs actual_seq_lengths: the pool has no per-batch length");
        if (p->has_kv_padding)
            return ifa__fail(IFA_STATUS_INVALID_SEQ_LENGTHS, "kv_padding_size needs actual_seq_lengths");
        p->lengths_mode = IFA_LENGTHS_FULL;
        p->uniform_length = *max_len = p->seq_kv;
        p->max_length = ifa__kv_span(p->seq_kv, p->window, shift);
        p->total_length = p->max_length * p->batch;
        if (p->q_lengths) query_token_spans(a, p, max_len);
        return IFA_STATUS_OK;
    }
    if (!a->actual_seq_lengths)
        return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "actual_seq_lengths is NULL but actual_seq_lengths_count is %" PRId64,
                         count);
    if (count != 1 && count != p->batch)
        return ifa__fail(IFA_STATUS_INVALID_SEQ_LENGTHS,
                         "actual_seq_lengths has %" PRId64 " values; it needs 1 or B = %" PRId64, count, p->batch);
    uint64_t h = IFA__FNV_BASIS;
    int64_t mx = 0, span_max = 0, total = 0;
    for (int64_t i = 0; i < count; ++i) {
        int64_t v = a->actual_seq_lengths[i];
        if (v < 0)
            return ifa__fail(IFA_STATUS_INVALID_SEQ_LENGTHS, "actual_seq_lengths[%" PRId64 "] = %" PRId64 " is negative",
                             i, v);
        if (p->paged && v > p->seq_kv)
            return ifa__fail(IFA_STATUS_INVALID_BLOCK_TABLE,
                             "block_table has %" PRId64 " blocks of %" PRId64 " rows per sequence (%" PRId64
                             " positions), too few for actual_seq_lengths[%" PRId64 "] = %" PRId64,
                             p->table_cols, p->block_size, p->seq_kv, i, v);
        if (v > p->seq_kv)
            return ifa__fail(IFA_STATUS_INVALID_SEQ_LENGTHS,
                             "actual_seq_lengths[%" PRId64 "] = %" PRId64 " is outside [0, S_kv = %" PRId64 "]", i, v,
                             p->seq_kv);
        const int64_t e = ifa__effective_length(p, v), span = ifa__kv_span(e, p->window, shift);
        if (e > mx) mx = e;
        if (span > span_max) span_max = span;
        total += span;
        h = fnv_add(h, v);
    }
    *max_len = mx;
    p->max_length = span_max;
    if (count == 1) {
        p->lengths_mode = IFA_LENGTHS_UNIFORM;
        p->uniform_length = mx;
        p->total_length = span_max * p->batch;
    } else {
        p->lengths_mode = IFA_LENGTHS_PER_BATCH;
        p->uniform_length = 0;
        p->total_length = total;
        p->lengths_hash = h;
    }
    if (p->q_lengths) query_token_spans(a, p, max_len);
    return IFA_STATUS_OK;
}

/* Paged KV: every block a batch's length uses names a block of the pool. Entries past the length are not
 * looked at (engines leave them stale or -1). */
static ifa_status check_block_table(const ifa_incre_flash_attention_args *a, const ifa_problem *p) {
    for (int64_t b = 0; b < p->batch; ++b) {
        const int64_t len = ifa__batch_length(a, p, b); /* paged: no kv padding; 0 without query tokens */
        const int64_t used = (len + p->block_size - 1) / p->block_size;
        const int32_t *row = a->block_table + b * p->table_cols;
        for (int64_t i = 0; i < used; ++i)
            if (row[i] < 0 || row[i] >= p->pool_blocks)
                return ifa__fail(IFA_STATUS_INVALID_BLOCK_TABLE,
                                 "block_table[%" PRId64 "][%" PRId64 "] = %" PRId32 " is outside the pool's blocks [0, %"
                                 PRId64 ")", b, i, row[i], p->pool_blocks);
    }
    return IFA_STATUS_OK;
}

ifa_status ifa__ifa_check_args(const ifa_incre_flash_attention_args *a, ifa_problem *p) {
    char s1[128], s2[128];
    if (!a) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "args is NULL");
    if (!p) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "problem is NULL");
    memset(p, 0, sizeof *p);
    const struct {
        const ifa_tensor *t;
        const char *name;
    } required[] = {{a->query, "query"}, {a->key, "key"}, {a->value, "value"}, {a->attention_out, "attention_out"}};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; ++i) {
        if (!required[i].t) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "%s is NULL", required[i].name);
        IFA__TRY(ifa__check_descriptor(required[i].t, required[i].name));
    }
    if (a->softmax_lse) IFA__TRY(ifa__check_descriptor(a->softmax_lse, "softmax_lse"));
    if (a->atten_mask) IFA__TRY(ifa__check_descriptor(a->atten_mask, "atten_mask"));
    if (a->pse_shift) IFA__TRY(ifa__check_descriptor(a->pse_shift, "pse_shift"));
    if (a->sinks) IFA__TRY(ifa__check_descriptor(a->sinks, "sinks"));
    if (a->alibi_slopes) IFA__TRY(ifa__check_descriptor(a->alibi_slopes, "alibi_slopes"));
    const ifa_tensor *const aq[6] = {a->antiquant_scale,     a->antiquant_offset,    a->key_antiquant_scale,
                                     a->key_antiquant_offset, a->value_antiquant_scale, a->value_antiquant_offset};
    for (int i = 0; i < 6; ++i)
        if (aq[i]) IFA__TRY(ifa__check_descriptor(aq[i], ifa__aq_names[i]));
    if (a->quant_scale2) IFA__TRY(ifa__check_descriptor(a->quant_scale2, "quant_scale2"));
    if (a->quant_offset2) IFA__TRY(ifa__check_descriptor(a->quant_offset2, "quant_offset2"));
    if (a->key_shared_prefix) IFA__TRY(ifa__check_descriptor(a->key_shared_prefix, "key_shared_prefix"));
    if (a->value_shared_prefix) IFA__TRY(ifa__check_descriptor(a->value_shared_prefix, "value_shared_prefix"));

    if (!a->input_layout) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "input_layout is NULL");
    ifa_layout layout;
    if (ifa__layout_from_name(a->input_layout, &layout) != 0)
        return ifa__fail(IFA_STATUS_INVALID_LAYOUT, "input_layout \"%.32s\" is not one of BSH, BSND, BNSD", a->input_layout);
    p->layout = layout;
    const int paged = a->block_table != NULL || a->block_size != 0;

    const char *qform = layout == IFA_LAYOUT_BSH ? "(B, S1, H)" : layout == IFA_LAYOUT_BSND ? "(B, S1, N, D)" : "(B, N, S1, D)";
    const char *kform =
        layout == IFA_LAYOUT_BSH ? "(B, S_kv, H_kv)" : layout == IFA_LAYOUT_BSND ? "(B, S_kv, N_kv, D)" : "(B, N_kv, S_kv, D)";
    IFA__TRY(check_rank(a->query, "query", layout, qform));
    if (!paged || layout != IFA_LAYOUT_BSND || a->key->ndim != 3) {
        IFA__TRY(check_rank(a->key, "key", layout, kform));
        IFA__TRY(check_rank(a->value, "value", layout, kform));
    }
    IFA__TRY(check_rank(a->attention_out, "attention_out", layout, qform));

    if (a->num_heads < 1 || a->num_heads > IFA_MAX_HEADS)
        return ifa__fail(IFA_STATUS_INVALID_HEADS, "num_heads = %" PRId64 " is outside [1, %d]", a->num_heads, IFA_MAX_HEADS);
    int64_t n = a->num_heads, nkv = a->num_key_value_heads ? a->num_key_value_heads : a->num_heads;
    if (nkv < 0 || nkv > IFA_MAX_KV_HEADS)
        return ifa__fail(IFA_STATUS_INVALID_HEADS, "num_key_value_heads = %" PRId64 " is outside [0, %d] (0 means num_heads)",
                         a->num_key_value_heads, IFA_MAX_KV_HEADS);
    if (n % nkv != 0)
        return ifa__fail(IFA_STATUS_INVALID_HEADS,
                         "num_key_value_heads = %" PRId64 " does not divide num_heads = %" PRId64, nkv, n);
    p->num_heads = n;
    p->num_kv_heads = nkv;

    const ifa_tensor *q = a->query;
    p->batch = q->shape[0];
    if (p->batch > IFA_MAX_BATCH)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_SHAPE, "query batch B = %" PRId64 " exceeds the supported %d", p->batch,
                         IFA_MAX_BATCH);
    int64_t sq, qheads;
    if (layout == IFA_LAYOUT_BSH) {
        sq = q->shape[1];
        if (q->shape[2] % n != 0)
            return ifa__fail(IFA_STATUS_SHAPE_MISMATCH,
                             "query hidden size H = %" PRId64 " is not a multiple of num_heads = %" PRId64, q->shape[2], n);
        qheads = n;
        p->head_dim = q->shape[2] / n;
    } else if (layout == IFA_LAYOUT_BSND) {
        sq = q->shape[1], qheads = q->shape[2], p->head_dim = q->shape[3];
    } else {
        qheads = q->shape[1], sq = q->shape[2], p->head_dim = q->shape[3];
    }
    if (qheads != n)
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "query %s has %" PRId64 " heads but num_heads = %" PRId64,
                         ifa__shape_str(q, s1, sizeof s1), qheads, n);
    if (sq > IFA_MAX_SEQ_Q)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_SHAPE,
                         "query %s has %" PRId64 " tokens per batch (S1); IncreFlashAttention takes 1 to %d",
                         ifa__shape_str(q, s1, sizeof s1), sq, IFA_MAX_SEQ_Q);
    p->seq_q = sq;
    if (p->head_dim > IFA_MAX_HEAD_DIM)
        return ifa__fail(IFA_STATUS_INVALID_HEAD_DIM, "head dimension D = %" PRId64 " exceeds %d", p->head_dim,
                         IFA_MAX_HEAD_DIM);
    if (a->value_head_dim < 0 || a->value_head_dim > p->head_dim)
        return ifa__fail(IFA_STATUS_INVALID_HEAD_DIM,
                         "value_head_dim = %" PRId64 " is outside [0, D = %" PRId64 "] (0 means D; the op reads the "
                         "first value_head_dim elements of each value row)", a->value_head_dim, p->head_dim);
    p->value_dim = a->value_head_dim ? (int32_t)a->value_head_dim : (int32_t)p->head_dim;

    const ifa_tensor *k = a->key;
    if (paged) {
        IFA__TRY(ifa__ifa_check_paged(a, p, layout));
    } else {
        p->seq_kv = layout == IFA_LAYOUT_BNSD ? k->shape[2] : k->shape[1];
        if (p->seq_kv > IFA_MAX_SEQ_KV)
            return ifa__fail(IFA_STATUS_UNSUPPORTED_SHAPE, "key sequence length S_kv = %" PRId64 " exceeds %lld",
                             p->seq_kv, IFA_MAX_SEQ_KV);
        ifa_tensor want;
        kv_shape(layout, p->batch, p->seq_kv, nkv, p->head_dim, &want);
        if (!ifa__same_shape(k, &want))
            return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "key has shape %s; with B = %" PRId64 ", N_kv = %" PRId64
                             ", D = %" PRId64 " and layout %s it must be %s",
                             ifa__shape_str(k, s1, sizeof s1), p->batch, nkv, p->head_dim, ifa__layout_name(layout),
                             ifa__shape_str(&want, s2, sizeof s2));
    }
    if (!ifa__same_shape(a->value, k))
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "value has shape %s; it must equal key's shape %s",
                         ifa__shape_str(a->value, s1, sizeof s1), ifa__shape_str(k, s2, sizeof s2));
    ifa_tensor out_want = *q; /* the query's shape with D_v as its head dimension */
    out_want.shape[out_want.ndim - 1] = layout == IFA_LAYOUT_BSH ? n * p->value_dim : p->value_dim;
    if (!ifa__same_shape(a->attention_out, &out_want))
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "attention_out has shape %s; it must %s %s",
                         ifa__shape_str(a->attention_out, s1, sizeof s1),
                         p->value_dim == p->head_dim ? "equal query's shape" : "be query's shape with D_v = value_head_dim:",
                         ifa__shape_str(&out_want, s2, sizeof s2));
    if (a->softmax_lse) {
        const ifa_tensor *l = a->softmax_lse;
        if (l->ndim != 3)
            return ifa__fail(IFA_STATUS_INVALID_RANK, "softmax_lse has rank %d; it must be rank 3 (B, N, S1)", (int)l->ndim);
        if (l->shape[0] != p->batch || l->shape[1] != n || l->shape[2] != sq)
            return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "softmax_lse has shape %s; it must be (B, N, S1) = (%" PRId64
                             ", %" PRId64 ", %" PRId64 ")", ifa__shape_str(l, s1, sizeof s1), p->batch, n, sq);
        if (l->dtype != IFA_DTYPE_FLOAT32)
            return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "softmax_lse has dtype %s; it must be float32",
                             ifa_dtype_name(l->dtype));
        p->has_lse = 1;
    }

    if (!ifa__is_float_dtype(q->dtype))
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "query has dtype %s; it must be float32, float16 or bfloat16",
                         ifa_dtype_name(q->dtype));
    if (!ifa__is_float_dtype(k->dtype) && k->dtype != IFA_DTYPE_INT8 && k->dtype != IFA_DTYPE_INT4 &&
        !ifa__is_float8(k->dtype))
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE,
                         "key has dtype %s; it must be float32, float16, bfloat16, float8_e4m3fn, float8_e5m2, or int8 "
                         "or int4 with antiquant_scale", ifa_dtype_name(k->dtype));
    if (a->value->dtype != k->dtype)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "value has dtype %s; it must equal key's dtype %s",
                         ifa_dtype_name(a->value->dtype), ifa_dtype_name(k->dtype));
    if (a->quant_scale2 ? a->attention_out->dtype != IFA_DTYPE_INT8 : a->attention_out->dtype != q->dtype)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "attention_out has dtype %s; it must be %s",
                         ifa_dtype_name(a->attention_out->dtype),
                         a->quant_scale2 ? "int8 with quant_scale2" : "the query's dtype (int8 needs quant_scale2)");
    p->q_dtype = q->dtype, p->kv_dtype = k->dtype, p->out_dtype = a->attention_out->dtype;

    if (!isfinite(a->scale_value) || fabs(a->scale_value) > 3.0e38)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "scale_value = %g is not a finite float32", a->scale_value);
    float scale = (float)a->scale_value;
    memcpy(&p->scale_bits, &scale, sizeof scale);
    if (!isfinite(a->softcap) || a->softcap < 0 || a->softcap > 3.0e38)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "softcap = %g must be 0 (off) or a positive finite float32",
                         a->softcap);
    float cap = (float)a->softcap;
    if (a->softcap > 0 && cap < 1e-30f)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "softcap = %g is too small to divide by in float32", a->softcap);
    memcpy(&p->softcap_bits, &cap, sizeof cap);
    if (a->window < 0)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "window = %" PRId64 " is negative; 0 turns the sliding window off",
                         a->window);
    p->window = a->window;
    if (a->kv_padding_size) {
        const int64_t pad = *a->kv_padding_size;
        if (paged)
            return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE,
                             "kv_padding_size applies to contiguous key/value; paged KV (block_table) has no padding");
        if (pad < 0 || pad > p->seq_kv)
            return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "kv_padding_size = %" PRId64 " is outside [0, S_kv = %" PRId64 "]",
                             pad, p->seq_kv);
        p->has_kv_padding = 1;
        p->kv_padding = pad;
    }
    /* a per-token mask says what each query token sees; otherwise the query tokens are causal */
    const int per_token_mask = a->atten_mask && a->atten_mask->ndim == 4 && a->atten_mask->shape[2] == sq && sq > 1;
    p->causal = sq > 1 && !per_token_mask;

    int64_t max_len = 0;
    IFA__TRY(check_query_lengths(a, p));
    IFA__TRY(check_lengths(a, p, &max_len));
    if (paged) IFA__TRY(check_block_table(a, p));
    if (a->atten_mask) IFA__TRY(ifa__ifa_check_mask(a->atten_mask, p, max_len));
    if (a->pse_shift) IFA__TRY(ifa__ifa_check_pse(a->pse_shift, p, max_len));
    if (a->sinks) IFA__TRY(ifa__ifa_check_sinks(a->sinks, p));
    if (a->alibi_slopes) IFA__TRY(ifa__ifa_check_alibi(a->alibi_slopes, p));
    IFA__TRY(ifa__ifa_check_antiquant(a, p, max_len));
    IFA__TRY(ifa__ifa_check_quant_out(a, p));
    IFA__TRY(ifa__ifa_check_prefix(a, p));
    IFA__TRY(ifa__ifa_check_template(a, p));
    return ifa__ifa_check_rope(a, p);
}

ifa_status ifa__ifa_check_buffers(cl_context cl, const ifa_incre_flash_attention_args *a, cl_mem workspace,
                                  size_t workspace_offset, int64_t workspace_bytes) {
    IFA__TRY(ifa__check_buffer(cl, a->query, "query"));
    IFA__TRY(ifa__check_buffer(cl, a->key, "key"));
    IFA__TRY(ifa__check_buffer(cl, a->value, "value"));
    IFA__TRY(ifa__check_buffer(cl, a->attention_out, "attention_out"));
    if (a->softmax_lse) IFA__TRY(ifa__check_buffer(cl, a->softmax_lse, "softmax_lse"));
    if (a->atten_mask) IFA__TRY(ifa__check_buffer(cl, a->atten_mask, "atten_mask"));
    if (a->pse_shift) IFA__TRY(ifa__check_buffer(cl, a->pse_shift, "pse_shift"));
    if (a->sinks) IFA__TRY(ifa__check_buffer(cl, a->sinks, "sinks"));
    if (a->alibi_slopes) IFA__TRY(ifa__check_buffer(cl, a->alibi_slopes, "alibi_slopes"));
    const ifa_tensor *const aq[6] = {a->antiquant_scale,     a->antiquant_offset,    a->key_antiquant_scale,
                                     a->key_antiquant_offset, a->value_antiquant_scale, a->value_antiquant_offset};
    for (int i = 0; i < 6; ++i)
        if (aq[i]) IFA__TRY(ifa__check_buffer(cl, aq[i], ifa__aq_names[i]));
    if (a->quant_scale2) IFA__TRY(ifa__check_buffer(cl, a->quant_scale2, "quant_scale2"));
    if (a->quant_offset2) IFA__TRY(ifa__check_buffer(cl, a->quant_offset2, "quant_offset2"));
    if (a->key_shared_prefix) IFA__TRY(ifa__check_buffer(cl, a->key_shared_prefix, "key_shared_prefix"));
    if (a->value_shared_prefix) IFA__TRY(ifa__check_buffer(cl, a->value_shared_prefix, "value_shared_prefix"));
    if (a->rope_cos) IFA__TRY(ifa__check_buffer(cl, a->rope_cos, "rope_cos"));
    if (a->rope_sin) IFA__TRY(ifa__check_buffer(cl, a->rope_sin, "rope_sin"));
    /* the outputs apart from every other tensor and the workspace */
    const ifa_tensor *const ins[] = {a->query, a->key, a->value, a->atten_mask, a->pse_shift, a->sinks,
                                     a->alibi_slopes, a->antiquant_scale, a->antiquant_offset, a->key_antiquant_scale,
                                     a->key_antiquant_offset, a->value_antiquant_scale, a->value_antiquant_offset,
                                     a->quant_scale2, a->quant_offset2, a->key_shared_prefix, a->value_shared_prefix,
                                     a->rope_cos, a->rope_sin, a->softmax_lse};
    static const char *const in_names[] = {"query", "key", "value", "atten_mask", "pse_shift", "sinks", "alibi_slopes",
                                           "antiquant_scale", "antiquant_offset", "key_antiquant_scale",
                                           "key_antiquant_offset", "value_antiquant_scale", "value_antiquant_offset",
                                           "quant_scale2", "quant_offset2", "key_shared_prefix", "value_shared_prefix",
                                           "rope_cos", "rope_sin", "softmax_lse"};
    const ifa_tensor *const outs[2] = {a->attention_out, a->softmax_lse};
    static const char *const out_names[2] = {"attention_out", "softmax_lse"};
    for (int o = 0; o < 2; ++o) {
        if (!outs[o]) continue;
        for (size_t i = 0; i < sizeof ins / sizeof ins[0]; ++i)
            if (ins[i] && ins[i] != outs[o])
                IFA__TRY(ifa__check_apart(outs[o], out_names[o], ins[i]->buffer, ins[i]->offset,
                                          (uint64_t)ifa_tensor_bytes(ins[i]), in_names[i]));
        if (workspace_bytes > 0)
            IFA__TRY(ifa__check_apart(outs[o], out_names[o], workspace, workspace_offset, (uint64_t)workspace_bytes,
                                      "the workspace"));
    }
    return IFA_STATUS_OK;
}
