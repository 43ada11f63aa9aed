#include "common/kv_quant.h"
#include "op_host/runtime/tensor_check.h"

#include <math.h>

void ifa_kv_quant_params(const double *x, int64_t n, int bits, int asym, double *scale, double *offset) {
    /* a signed `bits`-bit integer's range: [-2^(bits-1), 2^(bits-1) - 1] */
    const double qmin = -ldexp(1.0, bits - 1), qmax = -qmin - 1;
    double mn = INFINITY, mx = -INFINITY;
    for (int64_t i = 0; i < n; ++i) mn = fmin(mn, x[i]), mx = fmax(mx, x[i]);
    if (!asym) {
        const double amax = fmax(fabs(mn), fabs(mx));
        *scale = amax > 0 ? amax / qmax : 1.0;
        *offset = 0;
        return;
    }
    double span = mx - mn;
    if (span == 0) span = mn != 0 ? fabs(mn) : 1.0;
    *scale = span / (qmax - qmin);
    *offset = mn / *scale - qmin;
}

double ifa_kv_quant_bound(double scale, double offset, double amax) {
    /* x / scale (OpenCL allows 2.5 ulp) and the subtraction, each relative to |x| / scale + |offset| */
    return 0.5 * fabs(scale) + 0x1p-21 * (amax + fabs(offset * scale));
}

void ifa_kv_fp8_scale(ifa_dtype fmt, const double *x, int64_t n, double *scale) {
    double amax = 0;
    for (int64_t i = 0; i < n; ++i) amax = fmax(amax, fabs(x[i]));
    *scale = amax > 0 ? amax / ifa_dtype_max(fmt) : 1.0;
}

double ifa_kv_fp8_bound(ifa_dtype fmt, double scale, double x) {
    /* half a float8 step: 2^-(mantissa bits + 1) of the value when normal, half the smallest subnormal (e4m3fn
     * 2^-9, e5m2 2^-16) times the scale below; plus x / scale in fp32 (2.5 ulp allowed) */
    const int e5m2 = fmt == IFA_DTYPE_FLOAT8_E5M2;
    return fabs(x) * ((e5m2 ? 0x1p-3 : 0x1p-4) + 0x1p-21) + (e5m2 ? 0x1p-17 : 0x1p-10) * fabs(scale);
}

double ifa_kv_round_bound(ifa_dtype cache, double x) {
    if (ifa__is_float8(cache)) return ifa_kv_fp8_bound(cache, 1, x);
    const double eps = cache == IFA_DTYPE_FLOAT32 ? 0x1p-24 : cache == IFA_DTYPE_FLOAT16 ? 0x1p-11 : 0x1p-8;
    return fabs(x) * eps + 0x1p-24;
}
