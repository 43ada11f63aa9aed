/* Internal: the argument checks every op shares. Each failure returns its status with a message naming
 * the argument (name) and the rule. */
#ifndef IFA_OP_HOST_RUNTIME_TENSOR_CHECK_H
#define IFA_OP_HOST_RUNTIME_TENSOR_CHECK_H

#include "ifa/ifa.h"
#include "core/status.h"

/* "(2, 1, 128)" into buf (n bytes); returns buf. */
const char *ifa__shape_str(const ifa_tensor *t, char *buf, size_t n);
/* A descriptor's own rules: rank in [1, 8], dimensions >= 1, byte counts that fit 64 bits, a known dtype and
 * an offset that is a multiple of the element size. */
ifa_status ifa__check_descriptor(const ifa_tensor *t, const char *name);
/* t's byte offset counted in its elements (int4: two per byte), as kernels index buffers. */
static inline uint64_t ifa__elem_offset(const ifa_tensor *t) { return (uint64_t)t->offset * 8 / ifa_dtype_bits(t->dtype); }
/* Either float8 format (e4m3fn, e5m2): numbers by themselves, so a scale is optional where they are KV. */
static inline int ifa__is_float8(ifa_dtype d) { return d == IFA_DTYPE_FLOAT8_E4M3 || d == IFA_DTYPE_FLOAT8_E5M2; }
/* t names a valid cl_mem of context cl holding offset + its bytes (a buffer of another context is
 * INVALID_ATTRIBUTE: the kernels of cl's programs cannot take it). */
ifa_status ifa__check_buffer(cl_context cl, const ifa_tensor *t, const char *name);
/* An output must not share bytes with another tensor of the call (or the workspace: bytes from offset in buf):
 * INVALID_ATTRIBUTE naming both, where both are in the same cl_mem and their byte ranges overlap (sub-buffers of
 * one buffer are the caller's to keep apart). */
ifa_status ifa__check_apart(const ifa_tensor *out, const char *out_name, cl_mem buf, size_t offset, uint64_t bytes,
                            const char *name);

#endif
