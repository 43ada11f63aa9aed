/* The fused combine's counters: a small table of (queue, buffer) pairs in the context. A queue's buffer is
 * zeroed once when made; the kernels leave it zero after every run. Entries are replaced in turn when the
 * table is full: a replaced buffer is only released (OpenCL keeps it while enqueued commands use it), and the
 * queue, should it come back, gets a fresh zeroed one. No queue is retained: a released queue's address can
 * only come back once its commands have finished, and those left the counters at 0. */
#include "op_host/runtime/counters.h"

#include <stdlib.h>

#include "op_host/runtime/cl_status.h"

/* A zeroed buffer of at least n counters (a power of two, at least 1024: a growing plan reallocates rarely);
 * *count gets how many it holds. */
static ifa_status make_buffer(ifa_context *ctx, int64_t n, cl_mem *out, int64_t *count) {
    int64_t cap = 1024;
    while (cap < n) cap *= 2;
    int32_t *zeros = calloc((size_t)cap, sizeof *zeros);
    if (!zeros) return ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "allocating %lld split counters", (long long)cap);
    cl_int err = CL_SUCCESS;
    *out = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, (size_t)cap * sizeof *zeros, zeros, &err);
    free(zeros);
    if (err != CL_SUCCESS) return ifa__fail_cl(err, "clCreateBuffer", "the fused combine's split counters");
    *count = cap;
    return IFA_STATUS_OK;
}

ifa_status ifa__combine_counters(ifa_context *ctx, cl_command_queue queue, int64_t n, cl_mem *out) {
    *out = NULL;
    ifa_status st = IFA_STATUS_OK;
    mtx_lock(&ctx->lock);
    int i = 0;
    while (i < IFA__COUNTER_QUEUES && ctx->counters[i].queue != queue) ++i;
    if (i == IFA__COUNTER_QUEUES) {
        cl_command_queue_properties props = 0;
        const cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
        if (err != CL_SUCCESS) {
            st = ifa__fail_cl(err, "clGetCommandQueueInfo", "reading the queue's properties");
            goto done;
        }
        i = ctx->counters_next;
        ctx->counters_next = (i + 1) % IFA__COUNTER_QUEUES;
        if (ctx->counters[i].buffer) clReleaseMemObject(ctx->counters[i].buffer);
        ctx->counters[i].queue = queue;
        ctx->counters[i].buffer = NULL;
        ctx->counters[i].count = 0;
        ctx->counters[i].in_order = !(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    }
    if (!ctx->counters[i].in_order) goto done;
    if (ctx->counters[i].count < n) {
        cl_mem b = NULL;
        int64_t count = 0;
        st = make_buffer(ctx, n, &b, &count);
        if (st != IFA_STATUS_OK) goto done;
        if (ctx->counters[i].buffer) clReleaseMemObject(ctx->counters[i].buffer);
        ctx->counters[i].buffer = b;
        ctx->counters[i].count = count;
    }
    *out = ctx->counters[i].buffer;
done:
    mtx_unlock(&ctx->lock);
    return st;
}

void ifa__combine_counters_clear(ifa_context *ctx) {
    for (int i = 0; i < IFA__COUNTER_QUEUES; ++i) {
        if (ctx->counters[i].buffer) clReleaseMemObject(ctx->counters[i].buffer);
        ctx->counters[i].buffer = NULL;
        ctx->counters[i].queue = NULL;
    }
}
