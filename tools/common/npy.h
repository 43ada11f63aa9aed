/* NumPy .npy files (format 1.0/2.0/3.0, C order, little-endian): read into and write from host tensors.
 * Three dtypes have no NumPy dtype: bfloat16 is stored as '<u2', int4 as '|i1' (one value per element, not
 * packed) and float8 (float8_e4m3fn, float8_e5m2) as '|u1' (its bytes); on reading, the caller says which
 * of them the file holds. */
#ifndef IFA_TOOLS_NPY_H
#define IFA_TOOLS_NPY_H

#include "common/host_tensor.h"

/* Reads path into t. marked is the dtype the case names beside the file: IFA_DTYPE_BFLOAT16 (a '<u2' file),
 * IFA_DTYPE_INT4 (a '|i1' file of values in [-8, 7], packed into t), IFA_DTYPE_FLOAT8_E4M3 or _E5M2 (a
 * '|u1' file of the float8 bytes) or IFA_DTYPE_COUNT_ (none: the file's own
 * dtype, never '<u2'). Returns 0, or -1 with a message in err (malformed header, Fortran order, unsupported
 * dtype, a dtype that does not match the mark, a size that does not match the shape, an int4 value out of
 * range, a header that is not the dict NumPy writes, a file that is not a regular one, data shorter or
 * longer than the shape, checked before anything is allocated). */
int ifa_npy_read(const char *path, ifa_dtype marked, ifa_host_tensor *t, char *err, size_t err_size);
/* Writes t to path (bfloat16 as '<u2', int4 as '|i1' one value per element). Returns 0 or -1. */
int ifa_npy_write(const char *path, const ifa_host_tensor *t);

#endif
