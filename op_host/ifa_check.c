/* Validation of IncreFlashAttention arguments: one rule per check, each failure naming the argument. */
#include "op_host/ifa_check.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "op_host/cl_status.h"

static const char *const layout_names[IFA_LAYOUT_COUNT_] = {"BSH", "BSND", "BNSD"};

int ifa__layout_from_name(const char *name, ifa_layout *out) {
    for (int i = 0; name && i < IFA_LAYOUT_COUNT_; ++i) {
        if (strcmp(name, layout_names[i]) == 0) {
            *out = (ifa_layout)i;
            return 0;
        }
    }
    return -1;
}

const char *ifa__layout_name(ifa_layout layout) {
    return (int)layout >= 0 && layout < IFA_LAYOUT_COUNT_ ? layout_names[layout] : "invalid";
}

/* "(2, 1, 128)" into buf. */
static const char *shape_str(const ifa_tensor *t, char *buf, size_t n) {
    size_t k = 0;
    buf[k++] = '(';
    for (int i = 0; i < t->ndim && k + 24 < n; ++i)
        k += (size_t)snprintf(buf + k, n - k, i ? ", %" PRId64 : "%" PRId64, t->shape[i]);
    snprintf(buf + k, n - k, ")");
    return buf;
}

static ifa_status check_descriptor(const ifa_tensor *t, const char *name) {
    if (t->ndim < 1 || t->ndim > IFA_MAX_DIMS)
        return ifa__fail(IFA_STATUS_INVALID_TENSOR, "%s has ndim %d; it must be in [1, %d]", name, (int)t->ndim,
                         IFA_MAX_DIMS);
    for (int i = 0; i < t->ndim; ++i)
        if (t->shape[i] < 1)
            return ifa__fail(IFA_STATUS_INVALID_TENSOR, "%s has dimension %d = %" PRId64 "; every dimension must be >= 1",
                             name, i, t->shape[i]);
    if (ifa_tensor_numel(t) < 0 || (uint64_t)ifa_tensor_numel(t) > (uint64_t)INT64_MAX / 8)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_SHAPE, "%s has more elements than fit in 64-bit byte counts", name);
    if (ifa_dtype_size(t->dtype) == 0)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "%s has dtype value %d, which is not an ifa_dtype", name,
                         (int)t->dtype);
    if (t->offset % ifa_dtype_size(t->dtype) != 0)
        return ifa__fail(IFA_STATUS_INVALID_OFFSET, "%s has byte offset %zu, not a multiple of its element size %zu", name,
                         t->offset, ifa_dtype_size(t->dtype));
    return IFA_STATUS_OK;
}

static ifa_status check_rank(const ifa_tensor *t, const char *name, ifa_layout layout, const char *form) {
    int want = layout == IFA_LAYOUT_BSH ? 3 : 4;
    if (t->ndim != want)
        return ifa__fail(IFA_STATUS_INVALID_RANK, "%s has rank %d; input_layout %s needs rank %d %s", name, (int)t->ndim,
                         ifa__layout_name(layout), want, form);
    return IFA_STATUS_OK;
}

static int is_float_dtype(ifa_dtype d) {
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

static int same_shape(const ifa_tensor *a, const ifa_tensor *b) {
    if (a->ndim != b->ndim) return 0;
    for (int i = 0; i < a->ndim; ++i)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

static ifa_status check_lengths(const ifa_incre_flash_attention_args *a, ifa_problem *p) {
    int64_t count = a->actual_seq_lengths_count;
    if (count == 0) {
        if (a->actual_seq_lengths)
            return ifa__fail(IFA_STATUS_INVALID_SEQ_LENGTHS,
                             "actual_seq_lengths is non-NULL with actual_seq_lengths_count 0; pass NULL for full "
                             "length or a count of 1 or B");
        p->lengths_mode = IFA_LENGTHS_FULL;
        p->uniform_length = p->max_length = p->seq_kv;
        p->total_length = p->seq_kv * p->batch;
        return IFA_STATUS_OK;
    }
    if (!a->actual_seq_lengths)
        return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "actual_seq_lengths is NULL but actual_seq_lengths_count is %" PRId64,
                         count);
    if (count != 1 && count != p->batch)
        return ifa__fail(IFA_STATUS_INVALID_SEQ_LENGTHS,
                         "actual_seq_lengths has %" PRId64 " values; it needs 1 or B = %" PRId64, count, p->batch);
    uint64_t h = 1469598103934665603ull;
    int64_t mx = 0, total = 0;
    for (int64_t i = 0; i < count; ++i) {
        int64_t v = a->actual_seq_lengths[i];
        if (v < 0 || v > p->seq_kv)
            return ifa__fail(IFA_STATUS_INVALID_SEQ_LENGTHS,
                             "actual_seq_lengths[%" PRId64 "] = %" PRId64 " is outside [0, S_kv = %" PRId64 "]", i, v,
                             p->seq_kv);
        if (v > mx) mx = v;
        total += v;
        for (int k = 0; k < 8; ++k) h = (h ^ ((uint64_t)v >> (8 * k) & 0xffu)) * 1099511628211ull;
    }
    p->max_length = mx;
    if (count == 1) {
        p->lengths_mode = IFA_LENGTHS_UNIFORM;
        p->uniform_length = mx;
        p->total_length = mx * p->batch;
    } else {
        p->lengths_mode = IFA_LENGTHS_PER_BATCH;
        p->uniform_length = 0;
        p->total_length = total;
        p->lengths_hash = h;
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
        IFA__TRY(check_descriptor(required[i].t, required[i].name));
    }
    if (a->softmax_lse) IFA__TRY(check_descriptor(a->softmax_lse, "softmax_lse"));

    if (!a->input_layout) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "input_layout is NULL");
    ifa_layout layout;
    if (ifa__layout_from_name(a->input_layout, &layout) != 0)
        return ifa__fail(IFA_STATUS_INVALID_LAYOUT, "input_layout \"%.32s\" is not one of BSH, BSND, BNSD", a->input_layout);
    p->layout = layout;

    const char *qform = layout == IFA_LAYOUT_BSH ? "(B, 1, H)" : layout == IFA_LAYOUT_BSND ? "(B, 1, N, D)" : "(B, N, 1, D)";
    const char *kform =
        layout == IFA_LAYOUT_BSH ? "(B, S_kv, H_kv)" : layout == IFA_LAYOUT_BSND ? "(B, S_kv, N_kv, D)" : "(B, N_kv, S_kv, D)";
    IFA__TRY(check_rank(a->query, "query", layout, qform));
    IFA__TRY(check_rank(a->key, "key", layout, kform));
    IFA__TRY(check_rank(a->value, "value", layout, kform));
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
                         shape_str(q, s1, sizeof s1), qheads, n);
    if (sq != 1)
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "query %s has sequence length %" PRId64 "; IncreFlashAttention needs 1",
                         shape_str(q, s1, sizeof s1), sq);
    p->seq_q = 1;
    if (p->head_dim > IFA_MAX_HEAD_DIM)
        return ifa__fail(IFA_STATUS_INVALID_HEAD_DIM, "head dimension D = %" PRId64 " exceeds %d", p->head_dim,
                         IFA_MAX_HEAD_DIM);

    const ifa_tensor *k = a->key;
    p->seq_kv = layout == IFA_LAYOUT_BNSD ? k->shape[2] : k->shape[1];
    if (p->seq_kv > IFA_MAX_SEQ_KV)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_SHAPE, "key sequence length S_kv = %" PRId64 " exceeds %lld", p->seq_kv,
                         IFA_MAX_SEQ_KV);
    ifa_tensor want;
    kv_shape(layout, p->batch, p->seq_kv, nkv, p->head_dim, &want);
    if (!same_shape(k, &want))
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "key has shape %s; with B = %" PRId64 ", N_kv = %" PRId64
                         ", D = %" PRId64 " and layout %s it must be %s",
                         shape_str(k, s1, sizeof s1), p->batch, nkv, p->head_dim, ifa__layout_name(layout),
                         shape_str(&want, s2, sizeof s2));
    if (!same_shape(a->value, k))
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "value has shape %s; it must equal key's shape %s",
                         shape_str(a->value, s1, sizeof s1), shape_str(k, s2, sizeof s2));
    if (!same_shape(a->attention_out, q))
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "attention_out has shape %s; it must equal query's shape %s",
                         shape_str(a->attention_out, s1, sizeof s1), shape_str(q, s2, sizeof s2));
    if (a->softmax_lse) {
        const ifa_tensor *l = a->softmax_lse;
        if (l->ndim != 3)
            return ifa__fail(IFA_STATUS_INVALID_RANK, "softmax_lse has rank %d; it must be rank 3 (B, N, 1)", (int)l->ndim);
        if (l->shape[0] != p->batch || l->shape[1] != n || l->shape[2] != 1)
            return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "softmax_lse has shape %s; it must be (B, N, 1) = (%" PRId64
                             ", %" PRId64 ", 1)", shape_str(l, s1, sizeof s1), p->batch, n);
        if (l->dtype != IFA_DTYPE_FLOAT32)
            return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "softmax_lse has dtype %s; it must be float32",
                             ifa_dtype_name(l->dtype));
        p->has_lse = 1;
    }

    if (!is_float_dtype(q->dtype))
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "query has dtype %s; it must be float32, float16 or bfloat16",
                         ifa_dtype_name(q->dtype));
    if (!is_float_dtype(k->dtype))
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "key has dtype %s; it must be float32, float16 or bfloat16",
                         ifa_dtype_name(k->dtype));
    if (a->value->dtype != k->dtype)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "value has dtype %s; it must equal key's dtype %s",
                         ifa_dtype_name(a->value->dtype), ifa_dtype_name(k->dtype));
    if (a->attention_out->dtype != q->dtype)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "attention_out has dtype %s; it must equal query's dtype %s",
                         ifa_dtype_name(a->attention_out->dtype), ifa_dtype_name(q->dtype));
    p->q_dtype = q->dtype, p->kv_dtype = k->dtype, p->out_dtype = a->attention_out->dtype;

    if (!isfinite(a->scale_value) || fabs(a->scale_value) > 3.0e38)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "scale_value = %g is not a finite float32", a->scale_value);
    float scale = (float)a->scale_value;
    memcpy(&p->scale_bits, &scale, sizeof scale);

    return check_lengths(a, p);
}

static ifa_status check_buffer(const ifa_tensor *t, const char *name) {
    if (!t->buffer) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "%s.buffer is NULL; run needs a cl_mem for it", name);
    size_t size = 0;
    cl_int err = clGetMemObjectInfo(t->buffer, CL_MEM_SIZE, sizeof size, &size, NULL);
    if (err != CL_SUCCESS) return ifa__fail_cl(err, "clGetMemObjectInfo", "%s.buffer is not a valid cl_mem", name);
    uint64_t need = (uint64_t)ifa_tensor_numel(t) * ifa_dtype_size(t->dtype);
    if (t->offset > size || need > size - t->offset)
        return ifa__fail(IFA_STATUS_BUFFER_TOO_SMALL,
                         "%s needs %" PRIu64 " bytes from offset %zu but its buffer holds %zu bytes", name, need,
                         t->offset, size);
    return IFA_STATUS_OK;
}

ifa_status ifa__ifa_check_buffers(const ifa_incre_flash_attention_args *a) {
    IFA__TRY(check_buffer(a->query, "query"));
    IFA__TRY(check_buffer(a->key, "key"));
    IFA__TRY(check_buffer(a->value, "value"));
    IFA__TRY(check_buffer(a->attention_out, "attention_out"));
    if (a->softmax_lse) IFA__TRY(check_buffer(a->softmax_lse, "softmax_lse"));
    return IFA_STATUS_OK;
}
