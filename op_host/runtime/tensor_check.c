/* Checks every op shares: a tensor descriptor's form and its buffer's size. */
#include "op_host/runtime/tensor_check.h"

#include <inttypes.h>
#include <stdio.h>

#include "op_host/runtime/cl_status.h"

/* "(2, 1, 128)" into buf. */
const char *ifa__shape_str(const ifa_tensor *t, char *buf, size_t n) {
    size_t k = 0;
    buf[k++] = '(';
    for (int i = 0; i < t->ndim && k + 24 < n; ++i)
        k += (size_t)snprintf(buf + k, n - k, i ? ", %" PRId64 : "%" PRId64, t->shape[i]);
    snprintf(buf + k, n - k, ")");
    return buf;
}

ifa_status ifa__check_descriptor(const ifa_tensor *t, const char *name) {
    if (t->ndim < 1 || t->ndim > IFA_MAX_DIMS)
        return ifa__fail(IFA_STATUS_INVALID_TENSOR, "%s has ndim %d; it must be in [1, %d]", name, (int)t->ndim,
                         IFA_MAX_DIMS);
    for (int i = 0; i < t->ndim; ++i)
        if (t->shape[i] < 1)
            return ifa__fail(IFA_STATUS_INVALID_TENSOR, "%s has dimension %d = %" PRId64 "; every dimension must be >= 1",
                             name, i, t->shape[i]);
    if (ifa_tensor_numel(t) < 0 || (uint64_t)ifa_tensor_numel(t) > (uint64_t)INT64_MAX / 8)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_SHAPE, "%s has more elements than fit in 64-bit byte counts", name);
    if (ifa_dtype_size(t->dtype) == 0)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "%s has dtype value %d, which is not an ifa_dtype", name,
                         (int)t->dtype);
    if (t->offset % ifa_dtype_size(t->dtype) != 0)
        return ifa__fail(IFA_STATUS_INVALID_OFFSET, "%s has byte offset %zu, not a multiple of its element size %zu", name,
                         t->offset, ifa_dtype_size(t->dtype));
    return IFA_STATUS_OK;
}

ifa_status ifa__check_buffer(cl_context cl, const ifa_tensor *t, const char *name) {
    if (!t->buffer) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "%s.buffer is NULL; run needs a cl_mem for it", name);
    size_t size = 0;
    cl_int err = clGetMemObjectInfo(t->buffer, CL_MEM_SIZE, sizeof size, &size, NULL);
    if (err != CL_SUCCESS) return ifa__fail_cl(err, "clGetMemObjectInfo", "%s.buffer is not a valid cl_mem", name);
    cl_context owner = NULL;
    err = clGetMemObjectInfo(t->buffer, CL_MEM_CONTEXT, sizeof owner, &owner, NULL);
    if (err != CL_SUCCESS) return ifa__fail_cl(err, "clGetMemObjectInfo", "CL_MEM_CONTEXT of %s.buffer", name);
    if (cl && owner != cl)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE,
                         "%s.buffer belongs to another cl_context than the ifa context's; create it in "
                         "ifa_context_cl_context(ctx)", name);
    uint64_t need = (uint64_t)ifa_tensor_bytes(t);
    if (t->offset > size || need > size - t->offset)
        return ifa__fail(IFA_STATUS_BUFFER_TOO_SMALL,
                         "%s needs %" PRIu64 " bytes from offset %zu but its buffer holds %zu bytes", name, need,
                         t->offset, size);
    return IFA_STATUS_OK;
}

ifa_status ifa__check_apart(const ifa_tensor *out, const char *out_name, cl_mem buf, size_t offset, uint64_t bytes,
                            const char *name) {
    if (!out || !buf || out->buffer != buf) return IFA_STATUS_OK;
    const uint64_t a0 = out->offset, a1 = a0 + (uint64_t)ifa_tensor_bytes(out), b0 = offset, b1 = b0 + bytes;
    if (a0 < b1 && b0 < a1)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE,
                         "%s (bytes [%" PRIu64 ", %" PRIu64 ") of its buffer) overlaps %s (bytes [%" PRIu64 ", %" PRIu64
                         ")) in the same buffer; an output may not alias an input, another output or the workspace",
                         out_name, a0, a1, name, b0, b1);
    return IFA_STATUS_OK;
}
