#include "common/runner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/reference.h"

void ifa_case_init(ifa_case *c) {
    memset(c, 0, sizeof *c);
    c->scale_value = 1.0;
    c->int8_poison = -128;
    strcpy(c->input_layout, "BSH");
}

void ifa_case_free(ifa_case *c) {
    ifa_host_tensor_free(&c->query);
    ifa_host_tensor_free(&c->key);
    ifa_host_tensor_free(&c->value);
    ifa_host_tensor_free(&c->atten_mask);
    ifa_host_tensor_free(&c->pse_shift);
    ifa_host_tensor_free(&c->sinks);
    ifa_host_tensor_free(&c->alibi_slopes);
    ifa_host_tensor_free(&c->antiquant_scale);
    ifa_host_tensor_free(&c->antiquant_offset);
    ifa_host_tensor_free(&c->key_antiquant_scale);
    ifa_host_tensor_free(&c->key_antiquant_offset);
    ifa_host_tensor_free(&c->value_antiquant_scale);
    ifa_host_tensor_free(&c->value_antiquant_offset);
    ifa_host_tensor_free(&c->quant_scale2);
    ifa_host_tensor_free(&c->quant_offset2);
    ifa_host_tensor_free(&c->key_shared_prefix);
    ifa_host_tensor_free(&c->value_shared_prefix);
    ifa_host_tensor_free(&c->rope_cos);
    ifa_host_tensor_free(&c->rope_sin);
    free(c->lengths);
    free(c->q_lengths);
    free(c->block_table);
    free(c->rope_positions);
    c->lengths = NULL;
    c->q_lengths = NULL;
    c->block_table = NULL;
    c->rope_positions = NULL;
}

int64_t ifa_case_seq_q(const ifa_case *c) {
    return strcmp(c->input_layout, "BNSD") == 0 ? (c->query.ndim > 2 ? c->query.shape[2] : 1)
                                                : (c->query.ndim > 1 ? c->query.shape[1] : 1);
}

int64_t ifa_case_at(int bnsd, int64_t S, int64_t N, int64_t D, int64_t b, int64_t s, int64_t n, int64_t d) {
    return bnsd ? ((b * N + n) * S + s) * D + d : ((b * S + s) * N + n) * D + d;
}

int64_t ifa_case_head_dim(const ifa_case *c) {
    const int64_t b = c->query.ndim > 0 ? c->query.shape[0] : 0, n = c->num_heads, s1 = ifa_case_seq_q(c);
    return b > 0 && n > 0 && s1 > 0 ? ifa_host_tensor_numel(&c->query) / (b * n * s1) : 0;
}

int64_t ifa_case_value_dim(const ifa_case *c) { return c->value_head_dim > 0 ? c->value_head_dim : ifa_case_head_dim(c); }

void ifa_case_out_shape(const ifa_case *c, int64_t *shape) {
    memcpy(shape, c->query.shape, sizeof c->query.shape);
    if (c->query.ndim < 1 || c->value_head_dim <= 0) return;
    const int bsh = strcmp(c->input_layout, "BSH") == 0;
    shape[c->query.ndim - 1] = bsh ? c->num_heads * c->value_head_dim : c->value_head_dim;
}

void ifa_case_output_forms(const ifa_case *c, ifa_host_tensor *out, ifa_host_tensor *lse) {
    memset(out, 0, sizeof *out), memset(lse, 0, sizeof *lse);
    out->dtype = c->quant_scale2.data ? IFA_DTYPE_INT8 : c->query.dtype, out->ndim = c->query.ndim;
    ifa_case_out_shape(c, out->shape);
    lse->dtype = IFA_DTYPE_FLOAT32, lse->ndim = 3;
    lse->shape[0] = c->query.shape[0], lse->shape[1] = c->num_heads, lse->shape[2] = ifa_case_seq_q(c);
}

int64_t ifa_case_length(const ifa_case *c, int64_t b, int64_t S, int64_t *raw, int64_t *row0) {
    *raw = c->lengths == NULL ? S : c->lengths[c->lengths_count == 1 ? 0 : b];
    const int64_t len = c->has_kv_padding && S - c->kv_padding_size - *raw < 0 ? 0 : *raw;
    *row0 = c->has_kv_padding ? S - c->kv_padding_size - len : 0;
    return len;
}

int64_t ifa_case_query_tokens(const ifa_case *c, int64_t b) {
    return c->q_lengths ? c->q_lengths[c->q_lengths_count == 1 ? 0 : b] : ifa_case_seq_q(c);
}

void ifa_case_result_free(ifa_case_result *r) {
    ifa_host_tensor_free(&r->out);
    ifa_host_tensor_free(&r->lse);
}

int64_t ifa_case_far_base(cl_device_id device, int64_t bytes) {
    cl_ulong max_alloc = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL) != CL_SUCCESS)
        return 0;
    const int64_t cap = max_alloc < (9ull << 30) ? (int64_t)max_alloc : (int64_t)(9ll << 30);
    return bytes + 8192 <= cap ? (cap - bytes) / 4096 * 4096 : 0;
}

int64_t ifa_case_far_kv_base(cl_device_id device, const ifa_case *c) {
    return ifa_case_far_base(device, c->key.bytes > c->value.bytes ? c->key.bytes : c->value.bytes);
}

double ifa_case_tolerance(ifa_dtype d) { return d == IFA_DTYPE_FLOAT32 ? 1e-5 : d == IFA_DTYPE_FLOAT16 ? 1e-3 : 8e-3; }

static void describe(ifa_tensor *t, const ifa_host_tensor *h, cl_mem buf) {
    memset(t, 0, sizeof *t);
    t->buffer = buf;
    t->dtype = h->dtype;
    t->ndim = h->ndim;
    memcpy(t->shape, h->shape, sizeof t->shape);
}

void ifa_case_describe(const ifa_case *c, const ifa_host_tensor *out, const ifa_host_tensor *lse, const cl_mem *bufs,
                       ifa_case_tensors *t, ifa_incre_flash_attention_args *a) {
    enum { Q, K, V, O, L, M, P, AS, AO, QS, QO, KP, VP, RC, RS, SK, AL, KS, KO, VS, VO };
    const cl_mem none[IFA_CASE_TENSORS] = {NULL};
    if (!bufs) bufs = none;
    describe(&t->query, &c->query, bufs[Q]), describe(&t->key, &c->key, bufs[K]);
    describe(&t->value, &c->value, bufs[c->value_is_key ? K : V]), describe(&t->attention_out, out, bufs[O]);
    if (lse) describe(&t->softmax_lse, lse, bufs[L]);
    if (c->atten_mask.data) describe(&t->atten_mask, &c->atten_mask, bufs[M]);
    if (c->pse_shift.data) describe(&t->pse_shift, &c->pse_shift, bufs[P]);
    if (c->antiquant_scale.data) describe(&t->antiquant_scale, &c->antiquant_scale, bufs[AS]);
    if (c->antiquant_offset.data) describe(&t->antiquant_offset, &c->antiquant_offset, bufs[AO]);
    if (c->quant_scale2.data) describe(&t->quant_scale2, &c->quant_scale2, bufs[QS]);
    if (c->quant_offset2.data) describe(&t->quant_offset2, &c->quant_offset2, bufs[QO]);
    if (c->key_shared_prefix.data) describe(&t->key_shared_prefix, &c->key_shared_prefix, bufs[KP]);
    if (c->value_shared_prefix.data) describe(&t->value_shared_prefix, &c->value_shared_prefix, bufs[VP]);
    if (c->rope_cos.data) describe(&t->rope_cos, &c->rope_cos, bufs[RC]);
    if (c->rope_sin.data) describe(&t->rope_sin, &c->rope_sin, bufs[RS]);
    if (c->sinks.data) describe(&t->sinks, &c->sinks, bufs[SK]);
    if (c->alibi_slopes.data) describe(&t->alibi_slopes, &c->alibi_slopes, bufs[AL]);
    if (c->key_antiquant_scale.data) describe(&t->key_antiquant_scale, &c->key_antiquant_scale, bufs[KS]);
    if (c->key_antiquant_offset.data) describe(&t->key_antiquant_offset, &c->key_antiquant_offset, bufs[KO]);
    if (c->value_antiquant_scale.data) describe(&t->value_antiquant_scale, &c->value_antiquant_scale, bufs[VS]);
    if (c->value_antiquant_offset.data) describe(&t->value_antiquant_offset, &c->value_antiquant_offset, bufs[VO]);
    ifa_incre_flash_attention_args_init(a);
    a->query = &t->query, a->key = &t->key, a->value = &t->value, a->attention_out = &t->attention_out;
    a->softmax_lse = lse ? &t->softmax_lse : NULL;
    a->actual_seq_lengths = c->lengths, a->actual_seq_lengths_count = c->lengths_count;
    a->num_heads = c->num_heads, a->num_key_value_heads = c->num_key_value_heads;
    a->scale_value = c->scale_value, a->input_layout = c->input_layout;
    a->atten_mask = c->atten_mask.data ? &t->atten_mask : NULL;
    a->pse_shift = c->pse_shift.data ? &t->pse_shift : NULL;
    a->sinks = c->sinks.data ? &t->sinks : NULL;
    a->alibi_slopes = c->alibi_slopes.data ? &t->alibi_slopes : NULL;
    a->softcap = c->softcap, a->window = c->window;
    a->kv_padding_size = c->has_kv_padding ? &c->kv_padding_size : NULL;
    a->block_table = c->block_table, a->block_table_cols = c->block_table_cols, a->block_size = c->block_size;
    a->antiquant_scale = c->antiquant_scale.data ? &t->antiquant_scale : NULL;
    a->antiquant_offset = c->antiquant_offset.data ? &t->antiquant_offset : NULL;
    a->antiquant_mode = c->antiquant_mode;
    a->key_antiquant_scale = c->key_antiquant_scale.data ? &t->key_antiquant_scale : NULL;
    a->key_antiquant_offset = c->key_antiquant_offset.data ? &t->key_antiquant_offset : NULL;
    a->value_antiquant_scale = c->value_antiquant_scale.data ? &t->value_antiquant_scale : NULL;
    a->value_antiquant_offset = c->value_antiquant_offset.data ? &t->value_antiquant_offset : NULL;
    a->key_antiquant_mode = c->key_antiquant_mode, a->value_antiquant_mode = c->value_antiquant_mode;
    a->quant_scale2 = c->quant_scale2.data ? &t->quant_scale2 : NULL;
    a->quant_offset2 = c->quant_offset2.data ? &t->quant_offset2 : NULL;
    a->key_shared_prefix = c->key_shared_prefix.data ? &t->key_shared_prefix : NULL;
    a->value_shared_prefix = c->value_shared_prefix.data ? &t->value_shared_prefix : NULL;
    a->actual_shared_prefix_len = c->has_prefix_len ? &c->prefix_len : NULL;
    a->rope_mode = c->rope_mode[0] ? c->rope_mode : NULL;
    a->rope_theta = c->rope_theta, a->rope_dim = c->rope_dim, a->rope_offset = c->rope_offset;
    a->rope_positions = c->rope_positions, a->rope_positions_count = c->rope_positions_count;
    a->rope_cos = c->rope_cos.data ? &t->rope_cos : NULL;
    a->rope_sin = c->rope_sin.data ? &t->rope_sin : NULL;
    a->template_mode = c->template_mode[0] ? c->template_mode : NULL;
    a->value_head_dim = c->value_head_dim;
    a->actual_seq_lengths_q = c->q_lengths, a->actual_seq_lengths_q_count = c->q_lengths_count;
}

static cl_mem make_buffer(cl_context cl, const ifa_host_tensor *h, int copy, cl_int *err) {
    return clCreateBuffer(cl, copy ? CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR : CL_MEM_READ_WRITE,
                          h->bytes ? h->bytes : 1, copy ? h->data : NULL, err);
}

/* h in a buffer from ifa_buffer_create, which chooses the memory itself: the contents go in with a write. */
static ifa_status created_buffer(ifa_context *ctx, cl_command_queue queue, const ifa_host_tensor *h, cl_mem *out) {
    const ifa_status st = ifa_buffer_create(ctx, CL_MEM_READ_WRITE, h->bytes ? h->bytes : 1, out);
    if (st != IFA_STATUS_OK) return st;
    if (h->bytes && clEnqueueWriteBuffer(queue, *out, CL_TRUE, 0, h->bytes, h->data, 0, NULL, NULL) != CL_SUCCESS)
        return IFA_STATUS_OPENCL_ERROR;
    return IFA_STATUS_OK;
}

ifa_status ifa_case_buffer_at(cl_context cl, cl_command_queue queue, const void *data, size_t bytes, size_t base,
                              cl_mem *out) {
    cl_int err = CL_SUCCESS;
    *out = clCreateBuffer(cl, CL_MEM_READ_WRITE, base + (bytes ? bytes : 1), NULL, &err);
    if (!*out) return IFA_STATUS_OUT_OF_MEMORY;
    if (bytes && clEnqueueWriteBuffer(queue, *out, CL_TRUE, base, bytes, data, 0, NULL, NULL) != CL_SUCCESS)
        return IFA_STATUS_OPENCL_ERROR;
    return IFA_STATUS_OK;
}

/* Bytes of pattern before and after the output, softmax_lse and the workspace in their buffers: a kernel that
 * writes past its row changes them (on a CPU device its buffers are host memory, where such a write corrupts
 * whatever lies beside them: PoCL's vector half stores under a partly idle work-group once did). A multiple of
 * every alignment the op asks of an offset. */
#define GUARD 4096

static unsigned char guard_byte(size_t i) { return (unsigned char)(0xa5 ^ (i * 31u)); }

/* A buffer of bytes with GUARD pattern bytes each side, the data between them (NULL: NaN in every float word).
 * Its contents are copied in at creation (CL_MEM_COPY_HOST_PTR), so that its memory is taken there, where a
 * failure comes back as an error: on PoCL a plain buffer gets its memory at its first use, and a failure there
 * stops the process (docs/api.md, "Contracts"). */
static cl_mem guarded_buffer(cl_context cl, const void *data, size_t bytes, cl_int *err) {
    unsigned char *host = malloc(bytes + 2 * GUARD);
    if (!host) {
        *err = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    for (size_t i = 0; i < GUARD; ++i) host[i] = host[GUARD + bytes + i] = guard_byte(i);
    if (data && bytes) {
        memcpy(host + GUARD, data, bytes);
    } else {
        const float nan = NAN;
        for (size_t i = 0; i + sizeof nan <= bytes; i += sizeof nan) memcpy(host + GUARD + i, &nan, sizeof nan);
    }
    cl_mem m = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes + 2 * GUARD, host, err);
    free(host);
    return m;
}

/* The guard bytes of m (around bytes of data) that no longer hold their pattern, or -1 if they cannot be read. */
static int64_t guard_changed(cl_command_queue queue, cl_mem m, size_t bytes) {
    unsigned char back[GUARD];
    int64_t changed = 0;
    for (int side = 0; side < 2; ++side) {
        if (clEnqueueReadBuffer(queue, m, CL_TRUE, side ? GUARD + bytes : 0, GUARD, back, 0, NULL, NULL) != CL_SUCCESS)
            return -1;
        for (size_t i = 0; i < GUARD; ++i) changed += back[i] != guard_byte(i);
    }
    return changed;
}

/* Fills a host tensor with NaN so that any element the kernel does not write fails the check. */
static void poison(ifa_host_tensor *t) {
    int64_t n = ifa_host_tensor_numel(t);
    for (int64_t i = 0; i < n; ++i) ifa_host_set(t, i, NAN);
}

static int by_reference(const void *a, const void *b) {
    const double x = ((const double *)a)[0], y = ((const double *)b)[0];
    return (x > y) - (x < y);
}

/* The mean rounding error toward zero over the distinct reference values among v[0..n) ((reference, error) pairs,
 * sorted here): an output of few distinct values (one key's row: its value times a scale, repeated across heads)
 * would otherwise weigh each of their fixed errors by its count. 0 below 256 distinct values: a mean of 256
 * round-to-nearest errors spreads by 0.29 / 16 = 0.018 ulp. */
static double round_bias(double (*v)[2], int64_t n) {
    if (!v || n == 0) return 0.0;
    qsort(v, (size_t)n, sizeof *v, by_reference);
    double sum = 0;
    int64_t distinct = 0;
    for (int64_t i = 0; i < n; ++i)
        if (i == 0 || v[i][0] != v[i - 1][0]) sum += v[i][1], ++distinct;
    return distinct >= 256 ? sum / (double)distinct : 0.0;
}

/* A step of the runner's own failed: st, with what failed in r->error (first failure only). */
static ifa_status runner_failed(ifa_case_result *r, ifa_status st, const char *what, cl_int err) {
    if (!r->error[0])
        snprintf(r->error, sizeof r->error, "%s: %s (OpenCL error %d)", what, ifa_status_name(st), (int)err);
    return st;
}

/* A library call failed: its status, with the library's message in r->error. */
static ifa_status library_failed(ifa_case_result *r, ifa_status st) {
    if (!r->error[0]) snprintf(r->error, sizeof r->error, "%s", ifa_last_error());
    return st;
}

ifa_status ifa_case_run(ifa_context *ctx, cl_command_queue queue, const ifa_case *c,
                        int (*adjust)(ifa_plan *plan, void *user), void *user, ifa_case_result *r) {
    memset(r, 0, sizeof *r);
    cl_context cl = ifa_context_cl_context(ctx);
    ifa_host_tensor out_form, lse_form;
    ifa_case_output_forms(c, &out_form, &lse_form);
    if (ifa_host_tensor_alloc(&r->out, out_form.dtype, out_form.ndim, out_form.shape) != 0)
        return runner_failed(r, IFA_STATUS_OUT_OF_MEMORY, "host memory for the output", CL_SUCCESS);
    poison(&r->out);
    if (out_form.dtype == IFA_DTYPE_INT8) memset(r->out.data, (unsigned char)c->int8_poison, r->out.bytes);
    if (c->softmax_lse_flag) {
        if (ifa_host_tensor_alloc(&r->lse, lse_form.dtype, lse_form.ndim, lse_form.shape) != 0) {
            ifa_case_result_free(r);
            return runner_failed(r, IFA_STATUS_OUT_OF_MEMORY, "host memory for softmax_lse", CL_SUCCESS);
        }
        poison(&r->lse);
    }
    cl_int err = CL_SUCCESS;
    const ifa_host_tensor *mask = c->atten_mask.data ? &c->atten_mask : NULL;
    const ifa_host_tensor *pse = c->pse_shift.data ? &c->pse_shift : NULL;
    const ifa_host_tensor *hosts[IFA_CASE_TENSORS] = {
        &c->query, &c->key, c->value_is_key ? NULL : &c->value, &r->out, c->softmax_lse_flag ? &r->lse : NULL, mask, pse,
        c->antiquant_scale.data ? &c->antiquant_scale : NULL, c->antiquant_offset.data ? &c->antiquant_offset : NULL,
        c->quant_scale2.data ? &c->quant_scale2 : NULL, c->quant_offset2.data ? &c->quant_offset2 : NULL,
        c->key_shared_prefix.data ? &c->key_shared_prefix : NULL,
        c->value_shared_prefix.data ? &c->value_shared_prefix : NULL, c->rope_cos.data ? &c->rope_cos : NULL,
        c->rope_sin.data ? &c->rope_sin : NULL, c->sinks.data ? &c->sinks : NULL,
        c->alibi_slopes.data ? &c->alibi_slopes : NULL, c->key_antiquant_scale.data ? &c->key_antiquant_scale : NULL,
        c->key_antiquant_offset.data ? &c->key_antiquant_offset : NULL,
        c->value_antiquant_scale.data ? &c->value_antiquant_scale : NULL,
        c->value_antiquant_offset.data ? &c->value_antiquant_offset : NULL};
    cl_mem bufs[IFA_CASE_TENSORS] = {NULL};
    ifa_status st = IFA_STATUS_OK;
    static const char *const names[IFA_CASE_TENSORS] = {
        "query", "key", "value", "attention_out", "softmax_lse", "atten_mask", "pse_shift", "antiquant_scale",
        "antiquant_offset", "quant_scale2", "quant_offset2", "key_shared_prefix", "value_shared_prefix", "rope_cos",
        "rope_sin", "sinks", "alibi_slopes", "key_antiquant_scale", "key_antiquant_offset", "value_antiquant_scale",
        "value_antiquant_offset"};
    for (int i = 0; i < IFA_CASE_TENSORS && st == IFA_STATUS_OK; ++i) {
        if (!hosts[i]) continue;
        err = CL_SUCCESS;
        if ((i == 1 || i == 2) && c->kv_base_bytes > 0) {
            st = ifa_case_buffer_at(cl, queue, hosts[i]->data, hosts[i]->bytes, (size_t)c->kv_base_bytes, &bufs[i]);
        } else if ((i == 1 || i == 2) && c->kv_from_buffer_create) {
            st = created_buffer(ctx, queue, hosts[i], &bufs[i]);
            if (st != IFA_STATUS_OK && st != IFA_STATUS_OPENCL_ERROR) library_failed(r, st);
        } else if (i == 3 || i == 4) { /* the outputs: inside guards */
            if (!(bufs[i] = guarded_buffer(cl, hosts[i]->data, (size_t)hosts[i]->bytes, &err)))
                st = err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_HOST_MEMORY ? IFA_STATUS_OUT_OF_MEMORY
                                                                                           : IFA_STATUS_OPENCL_ERROR;
        } else if (!(bufs[i] = make_buffer(cl, hosts[i], 1, &err))) {
            st = IFA_STATUS_OUT_OF_MEMORY;
        }
        if (st != IFA_STATUS_OK) {
            char what[64];
            snprintf(what, sizeof what, "a buffer for %s", names[i]);
            runner_failed(r, st, what, err);
        }
    }
    cl_mem ws = NULL;
    ifa_case_tensors tensors;
    ifa_incre_flash_attention_args a;
    ifa_case_describe(c, &r->out, c->softmax_lse_flag ? &r->lse : NULL, bufs, &tensors, &a);
    if (c->kv_base_bytes > 0) tensors.key.offset = tensors.value.offset = (size_t)c->kv_base_bytes;
    tensors.attention_out.offset = GUARD;
    if (c->softmax_lse_flag) tensors.softmax_lse.offset = GUARD;

    size_t ws_bytes = 0;
    if (st == IFA_STATUS_OK && (st = ifa_incre_flash_attention_get_workspace_size(ctx, &a, &r->plan, &ws_bytes)) !=
                                   IFA_STATUS_OK)
        library_failed(r, st);
    if (st == IFA_STATUS_OK && adjust) {
        if (adjust(&r->plan, user) != 0) st = runner_failed(r, IFA_STATUS_INTERNAL, "the plan's adjustment", CL_SUCCESS);
        ws_bytes = (size_t)r->plan.workspace_bytes;
    }
    const size_t ws_words = (ws_bytes + 3) / 4 * 4; /* the workspace's NaN words, then its guard */
    if (st == IFA_STATUS_OK && ws_bytes) {
        /* NaN in every workspace word, so a partial result that no kernel wrote poisons the output */
        ws = guarded_buffer(cl, NULL, ws_words, &err);
        if (!ws) st = runner_failed(r, IFA_STATUS_OUT_OF_MEMORY, "a guarded buffer for the workspace", err);
    }
    cl_event ev = NULL, first = NULL;
    if (st == IFA_STATUS_OK &&
        (st = ifa_incre_flash_attention_run_profiled(ctx, &r->plan, &a, ws, ws ? GUARD : 0, queue, 0, NULL, &first,
                                                     &ev)) != IFA_STATUS_OK)
        library_failed(r, st);
    if (st == IFA_STATUS_OK) {
        err = clEnqueueReadBuffer(queue, bufs[3], CL_TRUE, GUARD, r->out.bytes, r->out.data, 1, &ev, NULL);
        if (err == CL_SUCCESS && bufs[4])
            err = clEnqueueReadBuffer(queue, bufs[4], CL_TRUE, GUARD, r->lse.bytes, r->lse.data, 1, &ev, NULL);
        if (err != CL_SUCCESS) st = runner_failed(r, IFA_STATUS_OPENCL_ERROR, "reading the outputs back", err);
        /* the guards (the reads above waited for the run) */
        const int64_t go = guard_changed(queue, bufs[3], (size_t)r->out.bytes);
        const int64_t gl = bufs[4] ? guard_changed(queue, bufs[4], (size_t)r->lse.bytes) : 0;
        const int64_t gw = ws ? guard_changed(queue, ws, ws_words) : 0;
        if (go < 0 || gl < 0 || gw < 0)
            st = runner_failed(r, IFA_STATUS_OPENCL_ERROR, "reading the guard bytes back", CL_SUCCESS);
        r->outside = go + gl + gw;
        cl_ulong t0 = 0, t1 = 0;
        /* first kernel start to last kernel end */
        if (clGetEventProfilingInfo(first, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) == CL_SUCCESS &&
            clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) == CL_SUCCESS)
            r->device_ms = (double)(t1 - t0) * 1e-6;
        clReleaseEvent(ev);
        clReleaseEvent(first);
    }
    for (int i = 0; i < IFA_CASE_TENSORS; ++i)
        if (bufs[i]) clReleaseMemObject(bufs[i]);
    if (ws) clReleaseMemObject(ws);
    if (st != IFA_STATUS_OK) ifa_case_result_free(r); /* nothing to read: the caller need not free */
    return st;
}

int ifa_case_check_result(const ifa_case *c, const ifa_case_result *r, ifa_case_check *chk) {
    memset(chk, 0, sizeof *chk);
    const int64_t rows = c->query.shape[0] * c->num_heads * ifa_case_seq_q(c);
    const int64_t n = rows * ifa_case_value_dim(c); /* output elements */
    double *ref = malloc((size_t)n * sizeof *ref), *lse = malloc((size_t)rows * sizeof *lse);
    double *bound = malloc((size_t)rows * sizeof *bound);
    int rc = -1;
    if (ref && lse && bound && ifa_reference_ifa(c, ref, lse, bound) == 0) {
        double num = 0, den = 0;
        /* (reference, error toward zero in last places) of the values the rounding check reads */
        double(*rounded)[2] = malloc((size_t)n * sizeof *rounded);
        int64_t nrounded = 0;
        const int int8_out = c->quant_scale2.data != NULL;
        ifa_host_tensor out_form, lse_form;
        ifa_case_output_forms(c, &out_form, &lse_form);
        const int64_t D = ifa_case_head_dim(c), DV = ifa_case_value_dim(c), S1 = ifa_case_seq_q(c), N = c->num_heads;
        const int bnsd = strcmp(c->input_layout, "BNSD") == 0;
        for (int64_t i = 0; int8_out && i < n; ++i) {
            /* the reference, quantised as the op defines: x = out * scale2 + offset2, rounded half to even */
            const int64_t d = i % DV, h = bnsd ? i / DV / S1 % N : i / DV % N;
            const int64_t qi = ifa_host_tensor_numel(&c->quant_scale2) == 1 ? 0 : h * DV + d;
            const double x = ref[i] * ifa_host_get(&c->quant_scale2, qi) +
                             (c->quant_offset2.data ? ifa_host_get(&c->quant_offset2, qi) : 0.0);
            /* NaN stores as 0 (OpenCL's saturating conversion), infinities saturate */
            const double want = isnan(x) ? 0.0 : fmin(127.0, fmax(-128.0, nearbyint(x)));
            const double got = ifa_host_get(&r->out, i);
            /* a value within 1e-3 of a tie may round either way: the op's fp32 output is not the reference */
            const int near_tie = fabs(fabs(x - floor(x)) - 0.5) < 1e-3;
            if (got != want && !(near_tie && fabs(got - want) <= 1.0)) chk->int8_bad++;
            ref[i] = want; /* the L2 figures then compare the integers */
        }
        double ref_max = 0;
        for (int64_t i = 0; i < n; ++i)
            if (isfinite(ref[i])) ref_max = fmax(ref_max, fabs(ref[i]));
        for (int64_t i = 0; i < n; ++i) {
            double o = ifa_host_get(&r->out, i);
            if (!isfinite(o) || !isfinite(ref[i])) {
                /* NaN where the reference has NaN; where it has an infinity, that infinity or NaN (0 x inf: a
                 * weight of 0, or one of the matrix shapes' two fp16 parts of a weight, meeting an infinite value);
                 * anything else non-finite, an unwritten (poisoned) element among them, fails (docs/op.md,
                 * "Non-finite values") */
                if (!(isnan(o) ? !isfinite(ref[i]) : o == ref[i])) chk->nonfinite++;
                continue;
            }
            double e = o - ref[i];
            num += e * e;
            den += ref[i] * ref[i];
            if (fabs(e) > chk->max_abs) chk->max_abs = fabs(e);
            /* the store's rounding: the error toward zero in units of the output's last place (round to nearest
             * even: symmetric about 0; toward zero: about -0.5), over normal values no smaller than 1/64 of the
             * output's largest: nearer 0 the kernels' fp32 error (about 2^-24 of the largest value a sum adds)
             * is no longer small beside the last place */
            const int mant = out_form.dtype == IFA_DTYPE_FLOAT16 ? 10 : out_form.dtype == IFA_DTYPE_BFLOAT16 ? 7 : 0;
            const double least = fmax(out_form.dtype == IFA_DTYPE_FLOAT16 ? 0x1p-14 : 0x1p-126, ref_max / 64);
            if (mant && fabs(ref[i]) >= least) {
                int ex;
                (void)frexp(ref[i], &ex);
                if (rounded) {
                    rounded[nrounded][0] = ref[i];
                    rounded[nrounded++][1] = e * (ref[i] > 0 ? 1 : -1) / ldexp(1.0, ex - 1 - mant);
                }
            }
        }
        chk->rel_l2 = den > 0 ? sqrt(num / den) : (num > 0 ? INFINITY : 0);
        chk->round_bias = round_bias(rounded, nrounded);
        free(rounded);
        chk->tolerance = int8_out ? INFINITY : ifa_case_tolerance(c->query.dtype);
        chk->lse_max_excess = -INFINITY;
        for (int64_t i = 0; c->softmax_lse_flag && i < rows; ++i) {
            double got = ifa_host_get(&r->lse, i);
            if (!isfinite(lse[i]) || !isfinite(got)) {
                if (!(isnan(got) ? isnan(lse[i]) : got == lse[i])) chk->lse_bad++;
                continue;
            }
            /* fp32 scores: each dot product may be off by D·2^-24·Σ|q·k|·|scale| (twice, for the max and the
             * term); exp, the sum and log add a few ulps of |lse|. */
            double allowed = 2.0 * (double)D * 0x1p-24 * bound[i] + 8.0 * 0x1p-24 * fmax(1.0, fabs(lse[i]));
            double excess = fabs(got - lse[i]) - allowed;
            if (excess > chk->lse_max_excess) chk->lse_max_excess = excess;
            if (excess > 0) chk->lse_bad++;
        }
        chk->outside = r->outside;
        chk->pass = chk->nonfinite == 0 && chk->rel_l2 <= chk->tolerance && chk->lse_bad == 0 && chk->int8_bad == 0 &&
                    chk->outside == 0 && fabs(chk->round_bias) <= IFA_ROUND_BIAS_MAX;
        rc = 0;
    }
    free(ref);
    free(lse);
    free(bound);
    return rc;
}
