#include "common/host_tensor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/half.h"
#include "common/parallel.h"
#include "common/rng.h"

int ifa_host_tensor_alloc(ifa_host_tensor *t, ifa_dtype dtype, int32_t ndim, const int64_t *shape) {
    memset(t, 0, sizeof *t);
    if (ndim < 0 || ndim > IFA_MAX_DIMS || ifa_dtype_size(dtype) == 0) return -1;
    t->dtype = dtype;
    t->ndim = ndim;
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) {
        if (shape[i] < 0 || (shape[i] && n > INT64_MAX / 64 / shape[i])) return -1; /* n x bits stays in range */
        t->shape[i] = shape[i];
        n *= shape[i];
    }
    t->bytes = (size_t)((n * (int64_t)ifa_dtype_bits(dtype) + 7) / 8);
    t->data = calloc(t->bytes ? t->bytes : 1, 1);
    return t->data ? 0 : -1;
}

int ifa_host_tensor_copy(ifa_host_tensor *dst, const ifa_host_tensor *src) {
    if (ifa_host_tensor_alloc(dst, src->dtype, src->ndim, src->shape) != 0) return -1;
    if (src->bytes) memcpy(dst->data, src->data, src->bytes);
    return 0;
}

void ifa_host_tensor_free(ifa_host_tensor *t) {
    free(t->data);
    t->data = NULL;
    t->bytes = 0;
}

int64_t ifa_host_tensor_numel(const ifa_host_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
    return n;
}

double ifa_host_get(const ifa_host_tensor *t, int64_t i) {
    const unsigned char *p = (const unsigned char *)t->data;
    switch (t->dtype) {
    case IFA_DTYPE_FLOAT32: return ((const float *)p)[i];
    case IFA_DTYPE_FLOAT16: return ifa_half_to_float(((const uint16_t *)p)[i]);
    case IFA_DTYPE_BFLOAT16: return ifa_bf16_to_float(((const uint16_t *)p)[i]);
    case IFA_DTYPE_INT8: return ((const int8_t *)p)[i];
    case IFA_DTYPE_UINT8:
    case IFA_DTYPE_BOOL: return p[i];
    case IFA_DTYPE_INT32: return ((const int32_t *)p)[i];
    case IFA_DTYPE_INT64: return (double)((const int64_t *)p)[i];
    case IFA_DTYPE_INT4: {
        const int8_t byte = (int8_t)p[i / 2];
        return (i & 1) ? byte >> 4 : (int8_t)(byte * 16) >> 4;
    }
    case IFA_DTYPE_FLOAT8_E4M3: return ifa_e4m3_to_double(p[i]);
    case IFA_DTYPE_FLOAT8_E5M2: return ifa_e5m2_to_double(p[i]);
    default: return NAN;
    }
}

/* v truncated toward zero and saturated to [lo, hi] (NaN gives 0): converting an out-of-range double to an
 * integer type is undefined behaviour, and case files may ask for any range. */
static double sat(double v, double lo, double hi) {
    if (isnan(v)) return 0;
    v = trunc(v);
    return v < lo ? lo : v > hi ? hi : v;
}

void ifa_host_set(ifa_host_tensor *t, int64_t i, double v) {
    unsigned char *p = (unsigned char *)t->data;
    switch (t->dtype) {
    case IFA_DTYPE_FLOAT32: ((float *)p)[i] = (float)v; break;
    case IFA_DTYPE_FLOAT16: ((uint16_t *)p)[i] = ifa_float_to_half((float)v); break;
    case IFA_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = ifa_float_to_bf16((float)v); break;
    case IFA_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)sat(v, -128, 127); break;
    case IFA_DTYPE_UINT8:
    case IFA_DTYPE_BOOL: p[i] = (unsigned char)sat(v, 0, 255); break;
    case IFA_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)sat(v, -2147483648.0, 2147483647.0); break;
    case IFA_DTYPE_INT64: ((int64_t *)p)[i] = (int64_t)sat(v, -9223372036854775808.0, 9223372036854774784.0); break;
    case IFA_DTYPE_INT4: {
        const unsigned nib = (unsigned)((int)sat(v, -8, 7) & 0xf);
        p[i / 2] = (unsigned char)((i & 1) ? (p[i / 2] & 0x0fu) | nib << 4 : (p[i / 2] & 0xf0u) | nib);
        break;
    }
    case IFA_DTYPE_FLOAT8_E4M3: p[i] = ifa_double_to_e4m3(v); break;
    case IFA_DTYPE_FLOAT8_E5M2: p[i] = ifa_double_to_e5m2(v); break;
    default: break;
    }
}

typedef struct fill_job {
    ifa_host_tensor *t;
    ifa_rng start; /* the generator before element 0 */
    double lo, hi;
} fill_job;

/* elements [a, b) of the fill: element i takes draw i, whichever range draws it */
static void fill_range(void *p, int64_t a, int64_t b) {
    const fill_job *j = p;
    ifa_rng r = j->start;
    ifa_rng_advance(&r, (uint64_t)a);
    for (int64_t i = a; i < b; ++i) ifa_host_set(j->t, i, ifa_rng_uniform(&r, j->lo, j->hi));
}

void ifa_host_fill_random(ifa_host_tensor *t, uint64_t seed, double lo, double hi) {
    fill_job j = {t, {0}, lo, hi};
    ifa_rng_seed(&j.start, seed);
    /* ranges of 2^16 elements (even: int4's two elements a byte stay in one range); a test's small tensors
     * stay on the calling thread */
    ifa_parallel_for(ifa_host_tensor_numel(t), (int64_t)1 << 16, fill_range, &j);
}
