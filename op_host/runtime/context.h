/* Internal: the context object and its program cache. */
#ifndef IFA_OP_HOST_RUNTIME_CONTEXT_H
#define IFA_OP_HOST_RUNTIME_CONTEXT_H

#include <stdatomic.h>
#include <threads.h>

#include "ifa/ifa.h"
#include "tiling/device_facts.h"

/* One -D NAME=VALUE build option of a kernel variant. name is usually a string literal: the program cache
 * compares names by address first and by text only when the addresses differ. */
typedef struct ifa__define {
    const char *name;
    int64_t value;
} ifa__define;

/* One built kernel variant: program, kernel and what the compiled kernel needs, found again by its sources,
 * kernel name and defines (compared as numbers, so a run finds its kernel without formatting an options
 * string). The kernel object is shared, so argument setting and enqueueing happen under lock. */
typedef struct ifa__cached_kernel {
    struct ifa__cached_kernel *next;
    const char *const *sources; /* the caller's static list */
    int source_count, define_count;
    const char *kernel_name;
    ifa__define *defines; /* a copy */
    cl_program program;
    cl_kernel kernel;
    mtx_t lock;
    size_t max_work_group_size; /* CL_KERNEL_WORK_GROUP_SIZE */
    cl_ulong local_mem_bytes;   /* CL_KERNEL_LOCAL_MEM_SIZE */
} ifa__cached_kernel;

/* The fused combine's split counters of one command queue (op_host/runtime/counters.c). */
enum { IFA__COUNTER_QUEUES = 8 };
typedef struct ifa__counter_slot {
    cl_command_queue queue; /* not retained */
    cl_mem buffer;          /* count int32 zeros between runs; NULL until a run needs it */
    int64_t count;
    int in_order; /* 0: the queue may overlap runs, so its runs launch the combine kernel */
} ifa__counter_slot;

struct ifa_context {
    cl_context cl_ctx;
    cl_device_id device;
    ifa_device_facts facts;
    char device_name[256];
    mtx_t lock; /* guards programs, programs_built and counters */
    ifa__cached_kernel *programs;
    int64_t programs_built;
    ifa__counter_slot counters[IFA__COUNTER_QUEUES];
    int counters_next; /* the slot a new queue takes when none is free */
    atomic_int blas_used; /* 1 once a cv run has called CLBlast (its programs are then in CLBlast's cache) */
};

/* Returns the kernel kernel_name of the program made of sources (names in op_kernel/, concatenated in
 * order) built with "-cl-std=CL1.2" and one -D NAME=VALUE per entry of defines (in order), building it on
 * first use. The cache keeps the addresses of sources, kernel_name and the define names: they must outlive
 * ctx (static arrays and string literals). The result lives as long as ctx. The build log is
 * in the message of a BUILD_FAILED status. Setting IFA_KERNEL_DIR reads the sources from that directory
 * instead of the embedded copies (a developer option: edit a kernel without rebuilding the library). */
ifa_status ifa__get_kernel(ifa_context *ctx, const char *const *sources, int source_count, const ifa__define *defines,
                           int define_count, const char *kernel_name, ifa__cached_kernel **out);

/* The build options ifa__get_kernel passes for defines on a device of vendor (tiling/device_facts.h):
 * "-cl-std=CL1.2 [-Werror] [-cl-opt-disable] -D IFA_CPU=0|1 -D IFA_NV=0|1 -D NAME=VALUE ...", into out (size
 * bytes). Returns 0 when they do not fit. */
int ifa__format_build_options(int32_t vendor, int werror, int opt_disable, const ifa__define *defines,
                              int define_count, char *out, size_t size);

/* Releases every cached program and kernel of ctx. */
void ifa__program_cache_clear(ifa_context *ctx);

#endif
