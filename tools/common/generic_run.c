/* Running a generic (registry) case (generic_run.h). */
#include "common/generic_run.h"

#include "common/runner.h"

#include <stdio.h>
#include <string.h>

/* Input i's byte offset in its buffer: cache_base_bytes for a non-empty key_cache or value_cache, else 0. */
static size_t cache_base(const ifa_generic_case *c, int i) {
    const char *n = c->def->inputs[i].name;
    return c->cache_base_bytes > 0 && c->inputs[i].bytes && (strcmp(n, "key_cache") == 0 || strcmp(n, "value_cache") == 0)
               ? (size_t)c->cache_base_bytes
               : 0;
}

ifa_status ifa_generic_case_run(ifa_context *ctx, cl_command_queue q, const ifa_generic_case *c,
                                const char *const names[IFA_GENERIC_WRITTEN], int plan_only, size_t *workspace_bytes,
                                ifa_generic_run *r) {
    memset(r, 0, sizeof *r);
    const ifa_op_def *d = c->def;
    ifa_named_tensor named[IFA_GENERIC_MAX];
    cl_mem bufs[IFA_GENERIC_MAX] = {NULL};
    int nt = 0;
    ifa_status st = IFA_STATUS_OK;
    for (int i = 0; i < d->num_inputs && st == IFA_STATUS_OK; ++i) {
        if (!c->inputs[i].data) continue;
        cl_int cerr = CL_SUCCESS;
        const size_t base = cache_base(c, i);
        if (!plan_only && base) {
            st = ifa_case_buffer_at(ifa_context_cl_context(ctx), q, c->inputs[i].data, c->inputs[i].bytes, base, &bufs[i]);
        } else if (!plan_only) {
            bufs[i] = clCreateBuffer(ifa_context_cl_context(ctx), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                     c->inputs[i].bytes ? c->inputs[i].bytes : 1, c->inputs[i].data, &cerr);
        }
        if (cerr != CL_SUCCESS) st = IFA_STATUS_OPENCL_ERROR;
        if (st != IFA_STATUS_OK)
            snprintf(r->error, sizeof r->error, "a buffer for %s: %s (OpenCL error %d)", d->inputs[i].name,
                     ifa_status_name(st), (int)cerr);
        named[nt].name = d->inputs[i].name;
        memset(&named[nt].tensor, 0, sizeof named[nt].tensor);
        named[nt].tensor.buffer = bufs[i], named[nt].tensor.dtype = c->inputs[i].dtype, named[nt].tensor.offset = base;
        named[nt].tensor.ndim = c->inputs[i].ndim;
        memcpy(named[nt].tensor.shape, c->inputs[i].shape, sizeof named[nt].tensor.shape);
        nt++;
    }
    const ifa_op_call call = {named, nt, c->attrs, c->num_attrs};
    ifa_plan plan;
    size_t ws_bytes = 0;
    if (st == IFA_STATUS_OK && (st = ifa_op_get_workspace_size(ctx, d, &call, &plan, &ws_bytes)) != IFA_STATUS_OK)
        snprintf(r->error, sizeof r->error, "%s", ifa_last_error());
    if (workspace_bytes) *workspace_bytes = ws_bytes;
    cl_mem ws = NULL;
    cl_event ev = NULL;
    if (st == IFA_STATUS_OK && !plan_only) {
        if ((st = ifa_buffer_create(ctx, CL_MEM_READ_WRITE, ws_bytes ? ws_bytes : 8, &ws)) != IFA_STATUS_OK) {
            ws = NULL;
            snprintf(r->error, sizeof r->error, "a workspace buffer of %zu bytes: %s", ws_bytes, ifa_last_error());
        } else if ((st = ifa_op_run(ctx, d, &call, &plan, ws, 0, q, 0, NULL, &ev)) != IFA_STATUS_OK) {
            snprintf(r->error, sizeof r->error, "%s", ifa_last_error());
        }
    }
    if (ev) {
        clWaitForEvents(1, &ev);
        cl_ulong t0 = 0, t1 = 0;
        if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) == CL_SUCCESS &&
            clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) == CL_SUCCESS)
            r->device_ms = (double)(t1 - t0) * 1e-6;
        clReleaseEvent(ev);
    }
    for (int w = 0; w < IFA_GENERIC_WRITTEN && st == IFA_STATUS_OK && !plan_only; ++w)
        for (int i = 0; names[w] && i < d->num_inputs; ++i)
            if (strcmp(d->inputs[i].name, names[w]) == 0 && c->inputs[i].data) {
                if (ifa_host_tensor_alloc(&r->written[w], c->inputs[i].dtype, c->inputs[i].ndim, c->inputs[i].shape) != 0)
                    st = IFA_STATUS_OUT_OF_MEMORY;
                else if (clEnqueueReadBuffer(q, bufs[i], CL_TRUE, cache_base(c, i), r->written[w].bytes,
                                             r->written[w].data, 0, NULL, NULL) != CL_SUCCESS)
                    st = IFA_STATUS_OPENCL_ERROR;
                if (st != IFA_STATUS_OK)
                    snprintf(r->error, sizeof r->error, "reading %s back: %s", names[w], ifa_status_name(st));
            }
    if (ws) clReleaseMemObject(ws);
    for (int i = 0; i < IFA_GENERIC_MAX; ++i)
        if (bufs[i]) clReleaseMemObject(bufs[i]);
    if (st != IFA_STATUS_OK) {
        char keep[sizeof r->error];
        memcpy(keep, r->error, sizeof keep);
        ifa_generic_run_free(r);
        memcpy(r->error, keep, sizeof keep);
    }
    return st;
}

int64_t ifa_generic_case_far_caches_base(cl_device_id device, const ifa_generic_case *c) {
    const ifa_host_tensor *kc = ifa_generic_case_input(c, "key_cache"), *vc = ifa_generic_case_input(c, "value_cache");
    const int64_t kb = kc ? kc->bytes : 0, vb = vc ? vc->bytes : 0;
    return kb || vb ? ifa_case_far_base(device, kb > vb ? kb : vb) : 0;
}

void ifa_generic_run_free(ifa_generic_run *r) {
    for (int w = 0; w < IFA_GENERIC_WRITTEN; ++w) ifa_host_tensor_free(&r->written[w]);
}
