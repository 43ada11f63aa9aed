/* Internal: setting a cached kernel's arguments and enqueueing it, shared by every op's launch code. */
#ifndef IFA_OP_HOST_LAUNCH_H
#define IFA_OP_HOST_LAUNCH_H

#include "op_host/context.h"

/* One kernel argument: its size and a pointer to its value. */
typedef struct ifa__karg {
    size_t size;
    const void *value;
} ifa__karg;

/* Sets nargs arguments of k and enqueues it over dims dimensions, under the cached kernel's lock (the kernel
 * object is shared by threads). name labels error messages. */
ifa_status ifa__enqueue(ifa__cached_kernel *k, const char *name, const ifa__karg *args, cl_uint nargs,
                        const size_t *global, const size_t *local, cl_uint dims, cl_command_queue queue,
                        cl_uint num_wait, const cl_event *wait, cl_event *event);

/* DEVICE_LIMIT if the compiled kernel cannot run wg work-items per group or needs more local memory than the
 * device has. */
ifa_status ifa__check_kernel(const ifa_context *ctx, const ifa__cached_kernel *k, int32_t wg);

#endif
