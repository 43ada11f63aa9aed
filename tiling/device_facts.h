/* What the planner knows about a device: plain integers, filled from OpenCL by templates/ or from a named
 * profile by tools, so the planner itself needs no OpenCL. */
#ifndef IFA_TILING_DEVICE_FACTS_H
#define IFA_TILING_DEVICE_FACTS_H

#include <stddef.h>
#include <stdint.h>

/* Device families that get their own tuning rows. */
typedef enum ifa_vendor {
    IFA_VENDOR_GENERIC_GPU = 0, /* any GPU-like device without a row of its own */
    IFA_VENDOR_NVIDIA = 1,
    IFA_VENDOR_CPU = 2,         /* CPU devices (PoCL): work-items are loops, "local" memory is plain memory */
    IFA_VENDOR_CPU_INTEL = 3,   /* Intel CPUs (PoCL's CL_DEVICE_VENDOR "GenuineIntel"): the CPU row with its
                                 * own BSH/BSND head rule; its prefetchers stream strided slices worse than AMD's */
    IFA_VENDOR_COUNT_
} ifa_vendor;

/* Whether vendor is one of the CPU rows (the vector shape's devices). */
static inline int ifa__vendor_is_cpu(int32_t vendor) {
    return vendor == IFA_VENDOR_CPU || vendor == IFA_VENDOR_CPU_INTEL;
}

typedef struct ifa_device_facts {
    int32_t vendor;              /* ifa_vendor */
    int32_t compute_units;       /* CL_DEVICE_MAX_COMPUTE_UNITS */
    int32_t max_work_group_size; /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
    int32_t native_float_width;  /* CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT: 16 on AVX-512 CPUs, 8 on AVX2 (0: unknown) */
    int64_t local_mem_bytes;     /* CL_DEVICE_LOCAL_MEM_SIZE */
    int32_t compute_capability;  /* NVIDIA's, major x 10 + minor (90: the H100), from cl_nv_device_attribute_query;
                                  * 0 elsewhere or unknown. The instructions a kernel variant may use (sm_89's
                                  * float8 conversions) follow it; IFA_DEVICE_FACTS does not override it */
} ifa_device_facts;

/* The device's facts as the planner uses them: *f, overridden by IFA_DEVICE_FACTS ("compute_units=64,
 * native_float_width=16", read on every plan, like IFA_TUNING) for experiments and soak runs. Only
 * overrides every kernel still runs under are taken: compute_units >= 1 (it moves splits only), a
 * native_float_width of 1 to 16 that is a power of 2 (the vector tiles; OpenCL's vectors run at any width),
 * local_mem_bytes or max_work_group_size no larger than the device's own, and vendor (2 or 3) from one CPU
 * row to the other (both plan the same kernel shapes); anything else is ignored. */
ifa_device_facts ifa__device_facts_effective(const ifa_device_facts *f);

/* Applies spec (IFA_DEVICE_FACTS's form) to *e under those rules for a device whose own facts are *f: the
 * parser ifa__device_facts_effective reads the variable with. Returns 0, or -1 when an entry was skipped, with
 * the first such entry and the rules in err (when err_size > 0), for tools that must not run without what
 * they were asked for (ifa-soak --facts). */
int ifa__device_facts_apply(ifa_device_facts *e, const ifa_device_facts *f, const char *spec, char *err,
                            size_t err_size);

#endif
