/* What the planner knows about a device: plain integers, filled from OpenCL by templates/ or from a named
 * profile by tools, so the planner itself needs no OpenCL. */
#ifndef IFA_TILING_DEVICE_FACTS_H
#define IFA_TILING_DEVICE_FACTS_H

#include <stdint.h>

/* Device families that get their own tuning rows. */
typedef enum ifa_vendor {
    IFA_VENDOR_GENERIC_GPU = 0, /* any GPU-like device without a row of its own */
    IFA_VENDOR_NVIDIA = 1,
    IFA_VENDOR_CPU = 2,         /* CPU devices (PoCL): work-items are loops, "local" memory is plain memory */
    IFA_VENDOR_COUNT_
} ifa_vendor;

typedef struct ifa_device_facts {
    int32_t vendor;              /* ifa_vendor */
    int32_t compute_units;       /* CL_DEVICE_MAX_COMPUTE_UNITS */
    int32_t max_work_group_size; /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
    int32_t native_float_width;  /* CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT: 16 on AVX-512 CPUs, 8 on AVX2 (0: unknown) */
    int64_t local_mem_bytes;     /* CL_DEVICE_LOCAL_MEM_SIZE */
} ifa_device_facts;

#endif
