#include "op_host/runtime/launch.h"

#include <inttypes.h>
#include <stdlib.h>

#include "op_host/runtime/cl_status.h"

ifa_status ifa__enqueue(ifa__cached_kernel *k, const char *name, const ifa__karg *args, cl_uint nargs,
                        const size_t *global, const size_t *local, cl_uint dims, cl_command_queue queue,
                        cl_uint num_wait, const cl_event *wait, cl_event *event) {
    ifa_status st = IFA_STATUS_OK;
    mtx_lock(&k->lock);
    for (cl_uint i = 0; i < nargs && st == IFA_STATUS_OK; ++i) {
        cl_int err = clSetKernelArg(k->kernel, i, args[i].size, args[i].value);
        if (err != CL_SUCCESS) st = ifa__fail_cl(err, "clSetKernelArg", "argument %u of %s", i, name);
    }
    if (st == IFA_STATUS_OK) {
        cl_int err = clEnqueueNDRangeKernel(queue, k->kernel, dims, NULL, global, local, num_wait,
                                            num_wait ? wait : NULL, event);
        if (err != CL_SUCCESS)
            st = ifa__fail_cl(err, "clEnqueueNDRangeKernel", "%s with global (%zu, %zu), local %zu", name, global[0],
                              dims > 1 ? global[1] : (size_t)1, local[0]);
    }
    mtx_unlock(&k->lock);
    return st;
}

ifa_status ifa__check_kernel(const ifa_context *ctx, const ifa__cached_kernel *k, int32_t wg) {
    if (k->max_work_group_size < (size_t)wg)
        return ifa__fail(IFA_STATUS_DEVICE_LIMIT, "the compiled kernel allows %zu work-items per group; the plan needs %d",
                         k->max_work_group_size, (int)wg);
    if ((cl_long)k->local_mem_bytes > ctx->facts.local_mem_bytes)
        return ifa__fail(IFA_STATUS_DEVICE_LIMIT, "the compiled kernel needs %llu bytes of local memory; the device has %lld",
                         (unsigned long long)k->local_mem_bytes, (long long)ctx->facts.local_mem_bytes);
    return IFA_STATUS_OK;
}

ifa_status ifa__check_wait_list(cl_uint num_events, const cl_event *wait_list) {
    if (num_events > 0 && !wait_list)
        return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "event_wait_list is NULL with num_events_in_wait_list = %u",
                         (unsigned)num_events);
    return IFA_STATUS_OK;
}

ifa_status ifa__check_queue(const ifa_context *ctx, cl_command_queue queue) {
    if (!queue) return ifa__fail(IFA_STATUS_INVALID_QUEUE, "queue is NULL");
    cl_context qctx = NULL;
    cl_device_id qdev = NULL;
    cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof qctx, &qctx, NULL);
    if (err == CL_SUCCESS) err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof qdev, &qdev, NULL);
    if (err != CL_SUCCESS) return ifa__fail(IFA_STATUS_INVALID_QUEUE, "queue is not a valid command queue (%s)",
                                            ifa__cl_error_name(err));
    if (qctx != ctx->cl_ctx || qdev != ctx->device)
        return ifa__fail(IFA_STATUS_INVALID_QUEUE, "queue belongs to another OpenCL context or device than ctx");
    return IFA_STATUS_OK;
}

ifa_status ifa__check_workspace(int64_t need, cl_mem workspace, size_t offset) {
    if (need == 0) return IFA_STATUS_OK;
    if (!workspace)
        return ifa__fail(IFA_STATUS_WORKSPACE_TOO_SMALL, "workspace is NULL but the op needs %" PRId64 " bytes",
                         need);
    size_t size = 0;
    cl_int err = clGetMemObjectInfo(workspace, CL_MEM_SIZE, sizeof size, &size, NULL);
    if (err != CL_SUCCESS) return ifa__fail_cl(err, "clGetMemObjectInfo", "workspace is not a valid cl_mem");
    if (offset > size || (uint64_t)need > size - offset)
        return ifa__fail(IFA_STATUS_WORKSPACE_TOO_SMALL,
                         "workspace holds %zu bytes; the op needs %" PRId64 " from offset %zu", size,
                         need, offset);
    /* the kernels index the workspace as 32- and 64-bit words from the offset */
    if (offset % 8 != 0)
        return ifa__fail(IFA_STATUS_INVALID_OFFSET, "workspace_offset %zu is not a multiple of 8", offset);
    return IFA_STATUS_OK;
}

static void CL_CALLBACK free_on_complete(cl_event ev, cl_int status, void *data) {
    (void)ev, (void)status;
    free(data);
}

ifa_status ifa__upload_staged(void *host, size_t bytes, cl_mem ws, size_t at, cl_command_queue queue, cl_uint num_wait,
                              const cl_event *wait, cl_event *done) {
    cl_int err = clEnqueueWriteBuffer(queue, ws, CL_FALSE, at, bytes, host, num_wait, num_wait ? wait : NULL, done);
    if (err != CL_SUCCESS) {
        free(host);
        return ifa__fail_cl(err, "clEnqueueWriteBuffer", "uploading %zu bytes of per-run tables to the workspace", bytes);
    }
    if (clSetEventCallback(*done, CL_COMPLETE, free_on_complete, host) != CL_SUCCESS) {
        clWaitForEvents(1, done);
        free(host);
    }
    return IFA_STATUS_OK;
}
