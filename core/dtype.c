/* The dtype table: sizes, names and largest finite values, and tensor element counts. */
#include "ifa/ifa.h"

#include <float.h>
#include <string.h>

static const struct {
    const char *name;
    const char *alias;
    size_t size;
    double max; /* largest finite value; the scale a symmetric quantiser divides max|x| by */
} dtypes[IFA_DTYPE_COUNT_] = {
    [IFA_DTYPE_FLOAT32] = {"float32", "fp32", 4, FLT_MAX},
    [IFA_DTYPE_FLOAT16] = {"float16", "fp16", 2, 65504},
    [IFA_DTYPE_BFLOAT16] = {"bfloat16", "bf16", 2, 0x1.fep127},
    [IFA_DTYPE_INT8] = {"int8", "i8", 1, 127},
    [IFA_DTYPE_UINT8] = {"uint8", "u8", 1, 255},
    [IFA_DTYPE_INT32] = {"int32", "i32", 4, 2147483647.0},
    [IFA_DTYPE_INT64] = {"int64", "i64", 8, 0x1p63}, /* INT64_MAX rounds up to 2^63 in a double */
    [IFA_DTYPE_BOOL] = {"bool", "bool_", 1, 1},
    [IFA_DTYPE_INT4] = {"int4", "i4", 1, 7},
    [IFA_DTYPE_FLOAT8_E4M3] = {"float8_e4m3fn", "fp8_e4m3", 1, 448},
    [IFA_DTYPE_FLOAT8_E5M2] = {"float8_e5m2", "fp8_e5m2", 1, 57344},
};

static int valid(ifa_dtype d) { return (int)d >= 0 && d < IFA_DTYPE_COUNT_; }

size_t ifa_dtype_size(ifa_dtype dtype) { return valid(dtype) ? dtypes[dtype].size : 0; }

size_t ifa_dtype_bits(ifa_dtype dtype) { return !valid(dtype) ? 0 : dtype == IFA_DTYPE_INT4 ? 4 : 8 * dtypes[dtype].size; }

double ifa_dtype_max(ifa_dtype dtype) { return valid(dtype) ? dtypes[dtype].max : 0; }

const char *ifa_dtype_name(ifa_dtype dtype) { return valid(dtype) ? dtypes[dtype].name : "invalid"; }

int ifa_dtype_from_name(const char *name, ifa_dtype *out) {
    if (!name || !out) return -1;
    for (int i = 0; i < IFA_DTYPE_COUNT_; ++i) {
        if (strcmp(name, dtypes[i].name) == 0 || strcmp(name, dtypes[i].alias) == 0) {
            *out = (ifa_dtype)i;
            return 0;
        }
    }
    return -1;
}

int64_t ifa_tensor_numel(const ifa_tensor *t) {
    if (!t || t->ndim < 0 || t->ndim > IFA_MAX_DIMS) return -1;
    int64_t n = 1;
    for (int i = 0; i < t->ndim; ++i) {
        int64_t d = t->shape[i];
        if (d < 0) return -1;
        if (d != 0 && n > INT64_MAX / d) return -1;
        n *= d;
    }
    return n;
}

int64_t ifa_tensor_bytes(const ifa_tensor *t) {
    const int64_t n = ifa_tensor_numel(t);
    if (n < 0 || n > INT64_MAX / 8) return -1;
    return (n * (int64_t)ifa_dtype_bits(t->dtype) + 7) / 8;
}
