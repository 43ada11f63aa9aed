/* Internal: the OpenCL C sources of op_kernel/, embedded at build time (cmake/embed_cl.cmake). */
#ifndef IFA_OP_HOST_RUNTIME_KERNEL_SOURCES_H
#define IFA_OP_HOST_RUNTIME_KERNEL_SOURCES_H

#include <stddef.h>

typedef struct ifa__kernel_source {
    const char *name; /* file name in op_kernel/, e.g. "ifa_attention_lanes.cl" */
    const char *text; /* NUL-terminated */
    size_t size;      /* bytes, without the NUL */
} ifa__kernel_source;

extern const ifa__kernel_source ifa__kernel_sources[];
extern const int ifa__kernel_source_count;

#endif
