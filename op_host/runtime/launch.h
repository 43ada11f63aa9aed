/* Internal: setting a cached kernel's arguments and enqueueing it, shared by every op's launch code. */
#ifndef IFA_OP_HOST_RUNTIME_LAUNCH_H
#define IFA_OP_HOST_RUNTIME_LAUNCH_H

#include "op_host/runtime/context.h"

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

/* NULL_ARGUMENT when a run's wait list has events (num_events) but no array to hold them. */
ifa_status ifa__check_wait_list(cl_uint num_events, const cl_event *wait_list);

/* INVALID_QUEUE unless queue is a valid queue of ctx's context and device. */
ifa_status ifa__check_queue(const ifa_context *ctx, cl_command_queue queue);

/* workspace holds need bytes from offset (a multiple of 8: kernels index it as 64-bit words); nothing is
 * asked of it when need is 0. */
ifa_status ifa__check_workspace(int64_t need, cl_mem workspace, size_t offset);

/* Enqueues a non-blocking write of host (malloc'd, bytes long) to ws at byte offset at after the wait list;
 * the staging copy is freed by the write's completion callback (or here on failure), so callers' arrays
 * may go as soon as a run returns. *done receives the write's event. */
ifa_status ifa__upload_staged(void *host, size_t bytes, cl_mem ws, size_t at, cl_command_queue queue, cl_uint num_wait,
                              const cl_event *wait, cl_event *done);

#endif
