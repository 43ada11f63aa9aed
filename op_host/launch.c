#include "op_host/launch.h"

#include "op_host/cl_status.h"

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
