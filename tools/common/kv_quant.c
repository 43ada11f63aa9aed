#include "common/kv_quant.h"

#include <math.h>

void ifa_kv_quant_params(const double *x, int64_t n, int bits, int asym, double *scale, double *offset) {
    const double qmax = bits == 4 ? 7 : 127, qmin = bits == 4 ? -8 : -128;
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
