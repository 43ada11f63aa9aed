/* Host-side tensors for tools and tests: a dtype, a shape and malloc'd bytes. */
#ifndef IFA_TOOLS_HOST_TENSOR_H
#define IFA_TOOLS_HOST_TENSOR_H

#include "ifa/ifa.h"

typedef struct ifa_host_tensor {
    ifa_dtype dtype;
    int32_t ndim;
    int64_t shape[IFA_MAX_DIMS];
    void *data;
    size_t bytes;
} ifa_host_tensor;

/* Allocates zeroed storage for dtype and shape; 0 on success, -1 on a bad shape or no memory. */
int ifa_host_tensor_alloc(ifa_host_tensor *t, ifa_dtype dtype, int32_t ndim, const int64_t *shape);
/* A copy of src's dtype, shape and bytes into dst (which owns nothing yet); 0, or -1 with no memory. */
int ifa_host_tensor_copy(ifa_host_tensor *dst, const ifa_host_tensor *src);
/* Frees the storage (t itself stays). */
void ifa_host_tensor_free(ifa_host_tensor *t);
/* Element count. */
int64_t ifa_host_tensor_numel(const ifa_host_tensor *t);
/* Element i as a double (exact for every supported dtype but int64 beyond 2^53). */
double ifa_host_get(const ifa_host_tensor *t, int64_t i);
/* Stores v into element i, rounding to the dtype (nearest even for floats). */
void ifa_host_set(ifa_host_tensor *t, int64_t i, double v);
/* Fills t with uniform values in [lo, hi) from a seeded generator. */
void ifa_host_fill_random(ifa_host_tensor *t, uint64_t seed, double lo, double hi);

#endif
