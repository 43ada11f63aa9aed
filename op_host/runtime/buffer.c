#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include "op_host/runtime/buffer.h"
#include "op_host/runtime/cl_status.h"
#include "op_host/runtime/context.h"
#include "tiling/tuning_table.h"

/* 2 MiB: the size of an x86-64 (and arm64 4K-granule) transparent huge page */
#define IFA__HUGE_PAGE ((size_t)2 << 20)

size_t ifa__buffer_start(int32_t vendor) {
    const int32_t wanted = ifa__tuning_for(vendor).buffer_offset;
    return wanted > 0 ? ((size_t)wanted % IFA__HUGE_PAGE) / 128 * 128 : 0;
}

static void CL_CALLBACK free_host(cl_mem mem, void *data) {
    (void)mem;
    free(data);
}

/* The buffer of bytes at start, inside host (malloc'd memory the buffer now owns: freed when the runtime drops it,
 * or here on failure). */
static ifa_status wrap_host(ifa_context *ctx, cl_mem_flags flags, size_t bytes, void *host, void *start, cl_mem *out) {
    cl_int err;
    cl_mem m = clCreateBuffer(ctx->cl_ctx, flags | CL_MEM_USE_HOST_PTR, bytes, start, &err);
    if (!m) {
        free(host);
        return ifa__fail_cl(err, "clCreateBuffer", "%zu bytes of host memory with CL_MEM_USE_HOST_PTR", bytes);
    }
    err = clSetMemObjectDestructorCallback(m, free_host, host);
    if (err != CL_SUCCESS) {
        clReleaseMemObject(m); /* without the callback the memory cannot be freed after the runtime's last use */
        free(host);
        return ifa__fail_cl(err, "clSetMemObjectDestructorCallback", "the host memory of a %zu-byte buffer", bytes);
    }
    *out = m;
    return IFA_STATUS_OK;
}

ifa_status ifa_buffer_create(ifa_context *ctx, cl_mem_flags flags, size_t bytes, cl_mem *out) {
    if (!out) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "out is NULL");
    *out = NULL;
    if (!ctx) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "ctx is NULL");
    if (bytes == 0) return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "bytes is 0; a buffer holds at least one byte");
    const cl_mem_flags host_ptr = CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR | CL_MEM_ALLOC_HOST_PTR;
    if (flags & host_ptr)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE,
                         "flags name where the memory comes from (CL_MEM_USE/COPY/ALLOC_HOST_PTR); ifa_buffer_create "
                         "chooses that itself");
    cl_device_type type = 0;
    cl_int err = clGetDeviceInfo(ctx->device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    if (err != CL_SUCCESS) return ifa__fail_cl(err, "clGetDeviceInfo", "CL_DEVICE_TYPE of the context's device");
    if (!(type & CL_DEVICE_TYPE_CPU)) {
        /* the spec's limit, checked here: NVIDIA's driver (580) returned a buffer of SIZE_MAX - 4096 bytes */
        cl_ulong max_alloc = 0;
        err = clGetDeviceInfo(ctx->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
        if (err != CL_SUCCESS)
            return ifa__fail_cl(err, "clGetDeviceInfo", "CL_DEVICE_MAX_MEM_ALLOC_SIZE of the context's device");
        if ((cl_ulong)bytes > max_alloc)
            return ifa__fail(IFA_STATUS_OUT_OF_MEMORY,
                             "bytes = %zu is over the device's largest buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE %llu)", bytes,
                             (unsigned long long)max_alloc);
    }
    if (!(type & CL_DEVICE_TYPE_CPU)) {
        cl_mem m = clCreateBuffer(ctx->cl_ctx, flags, bytes, NULL, &err);
        if (!m) return ifa__fail_cl(err, "clCreateBuffer", "%zu bytes", bytes);
        *out = m;
        return IFA_STATUS_OK;
    }
    /* a CPU device: host memory of the buffer's own, taken now (PoCL backs a plain buffer at its first use, inside a
     * run, and stops the process when that fails). Under one huge page: 128-byte aligned, nothing to gain from
     * rounding up to a huge page. */
    if (bytes < IFA__HUGE_PAGE) {
        const size_t whole = (bytes + 127) / 128 * 128;
        void *host = aligned_alloc(128, whole);
        if (!host) return ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "%zu bytes of host memory for a CPU device's buffer", whole);
        memset(host, 0, whole);
        return wrap_host(ctx, flags, bytes, host, host, out);
    }
    /* where the buffer starts past the huge page's boundary: the vendor row's (the kernels' loads interact
     * with the start's low bits; tiling/tuning_table.c has the measurements) */
    const size_t at = ifa__buffer_start(ctx->facts.vendor);
    if (bytes > SIZE_MAX - IFA__HUGE_PAGE - at)
        return ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "bytes = %zu leaves no room to round up to whole 2 MiB pages", bytes);
    /* aligned_alloc wants a size that is a multiple of the alignment */
    const size_t whole = (bytes + at + IFA__HUGE_PAGE - 1) / IFA__HUGE_PAGE * IFA__HUGE_PAGE;
    void *host = aligned_alloc(IFA__HUGE_PAGE, whole);
    if (!host) return ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "%zu bytes of host memory for a CPU device's buffer", whole);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    /* a hint: where transparent huge pages are off (or the kernel refuses) the pages stay 4 KiB */
    (void)madvise(host, whole, MADV_HUGEPAGE);
#endif
    /* touched now, not while serving: a huge page's first write faults in (and zeroes) 2 MiB, which in the
     * decode loop put 40-50 ms into the prefill appends and 7 ms into a step's p99 */
    memset(host, 0, whole);
    return wrap_host(ctx, flags, bytes, host, (char *)host + at, out);
}
