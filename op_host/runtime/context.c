/* Contexts: the OpenCL objects ifa works with, the device's facts for the planner, and the program cache. */
#define _POSIX_C_SOURCE 200809L /* access */
#include <clblast_c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "op_host/runtime/cl_status.h"
#include "op_host/runtime/context.h"
#include "op_host/runtime/counters.h"

/* cl_nv_device_attribute_query's compute capability queries (CL/cl_ext.h's names where the headers have them) */
#define IFA__CL_NV_CC_MAJOR 0x4000
#define IFA__CL_NV_CC_MINOR 0x4001

static ifa_status read_facts(ifa_context *c) {
    cl_uint cu = 0;
    size_t wg = 0;
    cl_ulong local = 0;
    cl_uint native_float = 0;
    cl_device_type type = 0;
    char vendor[256] = "";
    cl_int err = clGetDeviceInfo(c->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
    if (err == CL_SUCCESS) err = clGetDeviceInfo(c->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
    if (err == CL_SUCCESS) err = clGetDeviceInfo(c->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, NULL);
    if (err == CL_SUCCESS)
        err = clGetDeviceInfo(c->device, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, sizeof native_float, &native_float, NULL);
    if (err == CL_SUCCESS) err = clGetDeviceInfo(c->device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    if (err == CL_SUCCESS) err = clGetDeviceInfo(c->device, CL_DEVICE_VENDOR, sizeof vendor - 1, vendor, NULL);
    if (err == CL_SUCCESS) err = clGetDeviceInfo(c->device, CL_DEVICE_NAME, sizeof c->device_name - 1, c->device_name, NULL);
    if (err != CL_SUCCESS) return ifa__fail_cl(err, "clGetDeviceInfo", "reading the device's limits");
    c->facts.compute_units = (int32_t)cu;
    c->facts.max_work_group_size = wg > 0x7fffffff ? 0x7fffffff : (int32_t)wg;
    c->facts.local_mem_bytes = (int64_t)local;
    c->facts.native_float_width = native_float > 64 ? 64 : (int32_t)native_float;
    if (type & CL_DEVICE_TYPE_CPU)
        c->facts.vendor = strstr(vendor, "Intel") ? IFA_VENDOR_CPU_INTEL : IFA_VENDOR_CPU;
    else if (strstr(vendor, "NVIDIA"))
        c->facts.vendor = IFA_VENDOR_NVIDIA;
    else
        c->facts.vendor = IFA_VENDOR_GENERIC_GPU;
    if (c->facts.vendor == IFA_VENDOR_NVIDIA) {
        /* cl_nv_device_attribute_query; a driver without it leaves 0 (no sm_89 instructions) */
        cl_uint major = 0, minor = 0;
        if (clGetDeviceInfo(c->device, IFA__CL_NV_CC_MAJOR, sizeof major, &major, NULL) == CL_SUCCESS &&
            clGetDeviceInfo(c->device, IFA__CL_NV_CC_MINOR, sizeof minor, &minor, NULL) == CL_SUCCESS && major < 100 &&
            minor < 10)
            c->facts.compute_capability = (int32_t)(major * 10 + minor);
    }
    return IFA_STATUS_OK;
}

ifa_status ifa_context_create(cl_context cl_ctx, cl_device_id device, ifa_context **out) {
    if (!out) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "out is NULL");
    *out = NULL;
    if (!cl_ctx) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "cl_ctx is NULL");
    if (!device) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "device is NULL");
    ifa_context *c = calloc(1, sizeof *c);
    if (!c) return ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "allocating the context");
    if (mtx_init(&c->lock, mtx_plain) != thrd_success) {
        free(c);
        return ifa__fail(IFA_STATUS_INTERNAL, "mtx_init failed");
    }
    c->cl_ctx = cl_ctx;
    c->device = device;
    atomic_init(&c->blas_used, 0);
    ifa_status st = read_facts(c);
    if (st != IFA_STATUS_OK) {
        mtx_destroy(&c->lock);
        free(c);
        return st;
    }
    clRetainContext(cl_ctx);
    clRetainDevice(device);
    *out = c;
    return IFA_STATUS_OK;
}

/* No device on any platform, and PoCL among them with none: PoCL offers no device when it cannot use its kernel
 * cache folder (POCL_CACHE_DIR, else $XDG_CACHE_HOME/pocl, else $HOME/.cache/pocl), so that folder is named when it
 * cannot be written; NO_DEVICE's usual message otherwise. */
static ifa_status no_device(const char *sel, int pocl_without_devices) {
    char dir[1024] = "";
    const char *env = getenv("POCL_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (env && *env)
        snprintf(dir, sizeof dir, "%s", env);
    else if (xdg && *xdg)
        snprintf(dir, sizeof dir, "%s/pocl", xdg);
    else if (home && *home)
        snprintf(dir, sizeof dir, "%s/.cache/pocl", home);
    if (pocl_without_devices && dir[0] && access(dir, W_OK) != 0)
        return ifa__fail(IFA_STATUS_NO_DEVICE, "PoCL offers no device: its kernel cache folder \"%.900s\" (%s) is missing "
                         "and could not be made, or is not writable; set POCL_CACHE_DIR to a writable folder", dir,
                         env && *env ? "POCL_CACHE_DIR" : xdg && *xdg ? "$XDG_CACHE_HOME/pocl" : "$HOME/.cache/pocl");
    return ifa__fail(IFA_STATUS_NO_DEVICE, "no OpenCL device matches selector \"%.64s\" (use P:D indices as clinfo -l "
                     "lists them, or part of a device or platform name)", sel ? sel : "");
}

/* Picks a device by the selector rules of ifa_context_create_default. */
static ifa_status select_device(const char *sel, cl_device_id *out) {
    cl_platform_id platforms[16];
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(16, platforms, &np);
    if (err != CL_SUCCESS || np == 0)
        return ifa__fail(IFA_STATUS_NO_DEVICE, "no OpenCL platform found (clGetPlatformIDs returned %d %s); install an "
                         "ICD such as pocl-opencl-icd", (int)err, ifa__cl_error_name(err));
    if (np > 16) np = 16;
    int want_p = -1, want_d = -1;
    if (sel && *sel) {
        int consumed = 0;
        if (sscanf(sel, "%d:%d%n", &want_p, &want_d, &consumed) != 2 || sel[consumed] != '\0') want_p = want_d = -1;
    }
    int any_device = 0, pocl_without_devices = 0;
    for (cl_uint p = 0; p < np; ++p) {
        cl_device_id devs[64];
        cl_uint nd = 0;
        char pname[256] = "";
        clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 64, devs, &nd) != CL_SUCCESS || nd == 0) {
            pocl_without_devices |= strstr(pname, "Portable Computing Language") != NULL;
            continue;
        }
        any_device = 1;
        if (nd > 64) nd = 64;
        for (cl_uint d = 0; d < nd; ++d) {
            char dname[256] = "";
            clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof dname - 1, dname, NULL);
            int match;
            if (!sel || !*sel)
                match = 1;
            else if (want_p >= 0)
                match = (int)p == want_p && (int)d == want_d;
            else
                match = strstr(dname, sel) != NULL || strstr(pname, sel) != NULL;
            if (match) {
                *out = devs[d];
                return IFA_STATUS_OK;
            }
        }
    }
    return no_device(sel, !any_device && pocl_without_devices);
}

ifa_status ifa_context_create_default(const char *selector, ifa_context **out) {
    if (!out) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "out is NULL");
    *out = NULL;
    if (!selector || !*selector) selector = getenv("IFA_DEVICE");
    cl_device_id dev;
    ifa_status st = select_device(selector, &dev);
    if (st != IFA_STATUS_OK) return st;
    cl_int err;
    cl_context cl_ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (err != CL_SUCCESS) return ifa__fail_cl(err, "clCreateContext", "for the selected device");
    st = ifa_context_create(cl_ctx, dev, out);
    clReleaseContext(cl_ctx); /* the ifa context holds its own reference */
    return st;
}

void ifa_context_destroy(ifa_context *ctx) {
    if (!ctx) return;
    if (atomic_load(&ctx->blas_used)) CLBlastClearCache(); /* its programs hold this context */
    ifa__program_cache_clear(ctx);
    ifa__combine_counters_clear(ctx);
    mtx_destroy(&ctx->lock);
    clReleaseDevice(ctx->device);
    clReleaseContext(ctx->cl_ctx);
    free(ctx);
}

cl_context ifa_context_cl_context(const ifa_context *ctx) { return ctx ? ctx->cl_ctx : NULL; }

cl_device_id ifa_context_device(const ifa_context *ctx) { return ctx ? ctx->device : NULL; }

int64_t ifa_context_programs_built(const ifa_context *ctx) {
    if (!ctx) return 0;
    mtx_lock((mtx_t *)&ctx->lock);
    int64_t n = ctx->programs_built;
    mtx_unlock((mtx_t *)&ctx->lock);
    return n;
}
