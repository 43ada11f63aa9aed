/* binary16, bfloat16 and float8 (e4m3fn, e5m2) conversions, bit-exact with the kernels' vload_half,
 * vstore_half_rte, ifa_f32_to_bf16, ifa_e4m3_to_f32 / ifa_f32_to_e4m3 and ifa_e5m2_to_f32 / ifa_f32_to_e5m2. */
#include "common/half.h"

#include <math.h>
#include <string.h>

static uint32_t bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float ifa_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f) return from_bits(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        if (man == 0) return from_bits(sign);
        /* subnormal: man · 2^-24 */
        float v = (float)man * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    return from_bits(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t ifa_float_to_half(float f) {
    uint32_t u = bits(f), sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: inf */
    if (a < 0x38800000u) {                                   /* below the smallest normal 2^-14 */
        /* subnormal: round a·2^24 to an integer, nearest even */
        float v = from_bits(a) * 16777216.0f;
        uint32_t m = (uint32_t)v;
        float rem = v - (float)m;
        if (rem > 0.5f || (rem == 0.5f && (m & 1u))) m++;
        return (uint16_t)(sign | m);
    }
    uint32_t r = a - 0x38000000u; /* rebias exponent 127 -> 15 */
    uint32_t h = r >> 13, low = r & 0x1fffu;
    if (low > 0x1000u || (low == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

float ifa_bf16_to_float(uint16_t b) { return from_bits((uint32_t)b << 16); }

uint16_t ifa_float_to_bf16(float f) {
    uint32_t u = bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

double ifa_e4m3_to_double(uint8_t b) {
    if ((b & 0x7f) == 0x7f) return NAN;
    const int e = (b >> 3) & 15, m = b & 7;
    const double v = e == 0 ? m * 0x1p-9 : ldexp(1 + m / 8.0, e - 7);
    return b & 0x80 ? -v : v;
}

/* A float8 format with m_bits mantissa bits and exponent bias bias, round to nearest even: subnormals (below
 * 2^(1 - bias)) in steps of 2^(1 - bias - m_bits), the last of which rounds up to the smallest normal; a
 * mantissa that rounds to 2 carries into the exponent; max (code max_code) and beyond saturate. */
static uint8_t double_to_fp8(double v, int m_bits, int bias, double max, uint8_t max_code) {
    if (isnan(v)) return 0x7f;
    const uint8_t sign = signbit(v) ? 0x80 : 0;
    const double a = fabs(v);
    if (a >= max) return sign | max_code;
    if (a < ldexp(1, 1 - bias)) return sign | (uint8_t)nearbyint(ldexp(a, m_bits + bias - 1));
    int x;
    const double f = frexp(a, &x); /* a = f 2^x, f in [0.5, 1): exponent x - 1, mantissa 2f in [1, 2) */
    int e = x - 1 + bias, m = (int)nearbyint(ldexp(2 * f - 1, m_bits));
    if (m == 1 << m_bits) m = 0, e++;
    const int code = e << m_bits | m;
    return sign | (uint8_t)(code > max_code ? max_code : code);
}

uint8_t ifa_double_to_e4m3(double v) { return double_to_fp8(v, 3, 7, 448, 0x7e); }

double ifa_e5m2_to_double(uint8_t b) { return ifa_half_to_float((uint16_t)(b << 8)); }

uint8_t ifa_double_to_e5m2(double v) { return double_to_fp8(v, 2, 15, 57344, 0x7b); }
