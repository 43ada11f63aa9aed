#include "common/runner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/reference.h"

void ifa_case_init(ifa_case *c) {
    memset(c, 0, sizeof *c);
    c->scale_value = 1.0;
    strcpy(c->input_layout, "BSH");
}

void ifa_case_free(ifa_case *c) {
    ifa_host_tensor_free(&c->query);
    ifa_host_tensor_free(&c->key);
    ifa_host_tensor_free(&c->value);
    free(c->lengths);
    c->lengths = NULL;
}

void ifa_case_result_free(ifa_case_result *r) {
    ifa_host_tensor_free(&r->out);
    ifa_host_tensor_free(&r->lse);
}

double ifa_case_tolerance(ifa_dtype d) { return d == IFA_DTYPE_FLOAT32 ? 1e-5 : d == IFA_DTYPE_FLOAT16 ? 1e-3 : 8e-3; }

static void describe(ifa_tensor *t, const ifa_host_tensor *h, cl_mem buf) {
    memset(t, 0, sizeof *t);
    t->buffer = buf;
    t->dtype = h->dtype;
    t->ndim = h->ndim;
    memcpy(t->shape, h->shape, sizeof t->shape);
}

static cl_mem make_buffer(cl_context cl, const ifa_host_tensor *h, int copy, cl_int *err) {
    return clCreateBuffer(cl, copy ? CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR : CL_MEM_READ_WRITE,
                          h->bytes ? h->bytes : 1, copy ? h->data : NULL, err);
}

/* Fills a host tensor with NaN so that any element the kernel does not write fails the check. */
static void poison(ifa_host_tensor *t) {
    int64_t n = ifa_host_tensor_numel(t);
    for (int64_t i = 0; i < n; ++i) ifa_host_set(t, i, NAN);
}

ifa_status ifa_case_run(ifa_context *ctx, cl_command_queue queue, const ifa_case *c,
                        int (*adjust)(ifa_plan *plan, void *user), void *user, ifa_case_result *r) {
    memset(r, 0, sizeof *r);
    cl_context cl = ifa_context_cl_context(ctx);
    if (ifa_host_tensor_alloc(&r->out, c->query.dtype, c->query.ndim, c->query.shape) != 0) return IFA_STATUS_OUT_OF_MEMORY;
    poison(&r->out);
    if (c->softmax_lse_flag) {
        int64_t shape[3] = {c->query.shape[0], c->num_heads, 1};
        if (ifa_host_tensor_alloc(&r->lse, IFA_DTYPE_FLOAT32, 3, shape) != 0) return IFA_STATUS_OUT_OF_MEMORY;
        poison(&r->lse);
    }
    cl_int err = CL_SUCCESS;
    cl_mem bq = make_buffer(cl, &c->query, 1, &err), bk = make_buffer(cl, &c->key, 1, &err);
    cl_mem bv = make_buffer(cl, &c->value, 1, &err), bo = make_buffer(cl, &r->out, 1, &err);
    cl_mem bl = c->softmax_lse_flag ? make_buffer(cl, &r->lse, 1, &err) : NULL;
    cl_mem ws = NULL;
    ifa_status st = IFA_STATUS_OK;
    if (!bq || !bk || !bv || !bo || (c->softmax_lse_flag && !bl)) st = IFA_STATUS_OUT_OF_MEMORY;

    ifa_tensor tq, tk, tv, to, tl;
    describe(&tq, &c->query, bq), describe(&tk, &c->key, bk), describe(&tv, &c->value, bv);
    describe(&to, &r->out, bo);
    if (bl) describe(&tl, &r->lse, bl);
    ifa_incre_flash_attention_args a;
    ifa_incre_flash_attention_args_init(&a);
    a.query = &tq, a.key = &tk, a.value = &tv, a.attention_out = &to, a.softmax_lse = bl ? &tl : NULL;
    a.actual_seq_lengths = c->lengths, a.actual_seq_lengths_count = c->lengths_count;
    a.num_heads = c->num_heads, a.num_key_value_heads = c->num_key_value_heads;
    a.scale_value = c->scale_value, a.input_layout = c->input_layout;

    size_t ws_bytes = 0;
    cl_event poisoned = NULL; /* the run must wait for it: the queue may be out of order */
    if (st == IFA_STATUS_OK) st = ifa_incre_flash_attention_get_workspace_size(ctx, &a, &r->plan, &ws_bytes);
    if (st == IFA_STATUS_OK && adjust) {
        if (adjust(&r->plan, user) != 0) st = IFA_STATUS_INTERNAL;
        ws_bytes = (size_t)r->plan.workspace_bytes;
    }
    if (st == IFA_STATUS_OK && ws_bytes) {
        ws = clCreateBuffer(cl, CL_MEM_READ_WRITE, ws_bytes, NULL, &err);
        if (!ws) st = IFA_STATUS_OUT_OF_MEMORY;
        /* NaN in every workspace word, so a partial result that no kernel wrote poisons the output */
        const float nan = NAN;
        if (ws && clEnqueueFillBuffer(queue, ws, &nan, sizeof nan, 0, ws_bytes / 4 * 4, 0, NULL, &poisoned) != CL_SUCCESS)
            st = IFA_STATUS_OPENCL_ERROR;
    }
    cl_event ev = NULL;
    if (st == IFA_STATUS_OK)
        st = ifa_incre_flash_attention_run(ctx, &r->plan, &a, ws, 0, queue, poisoned ? 1 : 0, poisoned ? &poisoned : NULL,
                                           &ev);
    if (poisoned) clReleaseEvent(poisoned);
    if (st == IFA_STATUS_OK) {
        err = clEnqueueReadBuffer(queue, bo, CL_TRUE, 0, r->out.bytes, r->out.data, 1, &ev, NULL);
        if (err == CL_SUCCESS && bl) err = clEnqueueReadBuffer(queue, bl, CL_TRUE, 0, r->lse.bytes, r->lse.data, 1, &ev, NULL);
        if (err != CL_SUCCESS) st = IFA_STATUS_OPENCL_ERROR;
        cl_ulong t0 = 0, t1 = 0;
        if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) == CL_SUCCESS &&
            clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) == CL_SUCCESS)
            r->device_ms = (double)(t1 - t0) * 1e-6;
        clReleaseEvent(ev);
    }
    cl_mem all[] = {bq, bk, bv, bo, bl, ws};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
        if (all[i]) clReleaseMemObject(all[i]);
    return st;
}

int ifa_case_check_result(const ifa_case *c, const ifa_case_result *r, ifa_case_check *chk) {
    memset(chk, 0, sizeof *chk);
    const int64_t B = c->query.shape[0], N = c->num_heads;
    const int64_t n = ifa_host_tensor_numel(&c->query);
    double *ref = malloc((size_t)n * sizeof *ref), *lse = malloc((size_t)(B * N) * sizeof *lse);
    double *bound = malloc((size_t)(B * N) * sizeof *bound);
    int rc = -1;
    if (ref && lse && bound &&
        ifa_reference_ifa(&c->query, &c->key, &c->value, c->input_layout, N, c->num_key_value_heads, c->scale_value,
                          c->lengths, c->lengths_count, ref, lse, bound) == 0) {
        double num = 0, den = 0;
        for (int64_t i = 0; i < n; ++i) {
            double o = ifa_host_get(&r->out, i);
            if (!isfinite(o)) {
                chk->nonfinite++;
                continue;
            }
            double e = o - ref[i];
            num += e * e;
            den += ref[i] * ref[i];
            if (fabs(e) > chk->max_abs) chk->max_abs = fabs(e);
        }
        chk->rel_l2 = den > 0 ? sqrt(num / den) : (num > 0 ? INFINITY : 0);
        chk->tolerance = ifa_case_tolerance(c->query.dtype);
        const int64_t D = n / (B * N);
        chk->lse_max_excess = -INFINITY;
        for (int64_t i = 0; c->softmax_lse_flag && i < B * N; ++i) {
            double got = ifa_host_get(&r->lse, i);
            if (isinf(lse[i]) || isinf(got) || isnan(got)) {
                if (!(isinf(lse[i]) && got == lse[i])) chk->lse_bad++;
                continue;
            }
            /* fp32 scores: each dot product may be off by D·2^-24·Σ|q·k|·|scale| (twice, for the max and the
             * term); exp, the sum and log add a few ulps of |lse|. */
            double allowed = 2.0 * (double)D * 0x1p-24 * bound[i] + 8.0 * 0x1p-24 * fmax(1.0, fabs(lse[i]));
            double excess = fabs(got - lse[i]) - allowed;
            if (excess > chk->lse_max_excess) chk->lse_max_excess = excess;
            if (excess > 0) chk->lse_bad++;
        }
        chk->pass = chk->nonfinite == 0 && chk->rel_l2 <= chk->tolerance && chk->lse_bad == 0;
        rc = 0;
    }
    free(ref);
    free(lse);
    free(bound);
    return rc;
}
