/* NumPy .npy files (format 1.0/2.0/3.0, C order, little-endian): read into and write from host tensors.
 * bfloat16 has no NumPy dtype: it is stored as '<u2' and the caller says it is bfloat16. */
#ifndef IFA_TOOLS_NPY_H
#define IFA_TOOLS_NPY_H

#include "common/host_tensor.h"

/* Reads path into t. If as_bf16, a '<u2' file is taken as bfloat16. Returns 0, or -1 with a message in
 * err (malformed header, Fortran order, unsupported dtype, a size that does not match the shape). */
int ifa_npy_read(const char *path, int as_bf16, ifa_host_tensor *t, char *err, size_t err_size);
/* Writes t to path (bfloat16 as '<u2'). Returns 0 or -1. */
int ifa_npy_write(const char *path, const ifa_host_tensor *t);

#endif
