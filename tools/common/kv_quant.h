/* The float64 twin of KVCacheAppend's online quantisation and cache indexing, shared by the append tests
 * and the decode driver's verification (docs/kv-cache.md has the formulas). */
#ifndef IFA_TOOLS_KV_QUANT_H
#define IFA_TOOLS_KV_QUANT_H

#include <stdint.h>

#include "ifa/ifa.h"

/* The scale and offset KVCacheAppend writes for a row of n values quantised to bits (8 or 4): asymmetric
 * over [min, max] when asym, else symmetric over [-max|x|, max|x|] with offset 0. */
void ifa_kv_quant_params(const double *x, int64_t n, int bits, int asym, double *scale, double *offset);

/* The largest |x - (q + offset) * scale| the op may leave for a row quantised with the stored (fp32) scale
 * and offset whose largest |x| is amax: half a step, plus the fp32 rounding of x / scale - offset. */
double ifa_kv_quant_bound(double scale, double offset, double amax);

/* A float8 cache's (fmt: IFA_DTYPE_FLOAT8_E4M3 or _E5M2) scale for a row of n values: max|x| over the
 * format's largest finite (448, 57344), 1 for a zero row. */
void ifa_kv_fp8_scale(ifa_dtype fmt, const double *x, int64_t n, double *scale);

/* The largest |x - q * scale| for x stored as the float8 q nearest x / scale (scale 1: no scale): half a
 * float8 step, 2^-4 (e4m3fn) or 2^-3 (e5m2) of |x| for normal values and half the smallest subnormal (2^-10,
 * 2^-17) times scale below, plus the fp32 division. */
double ifa_kv_fp8_bound(ifa_dtype fmt, double scale, double x);

/* The largest error of rounding x once to a float cache's dtype: half an ulp of float32, float16 or bfloat16
 * (plus 2^-24 for values near zero), or a float8 format's ifa_kv_fp8_bound with scale 1. */
double ifa_kv_round_bound(ifa_dtype cache, double x);

/* Element index of (unit u, row r, head n, dim d) in a cache of R rows per unit (a batch's S_max or a block's
 * block_size), N heads of D: BSH/BSND ((u·R + r)·N + n)·D + d, BNSD ((u·N + n)·R + r)·D + d. */
static inline int64_t ifa_kv_cache_at(int bnsd, int64_t R, int64_t N, int64_t D, int64_t u, int64_t r, int64_t n,
                                      int64_t d) {
    return bnsd ? ((u * N + n) * R + r) * D + d : ((u * R + r) * N + n) * D + d;
}

#endif
