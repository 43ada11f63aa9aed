/* Host conversions between float and the 16- and 8-bit storage formats (round to nearest even). */
#ifndef IFA_TOOLS_HALF_H
#define IFA_TOOLS_HALF_H

#include <stdint.h>

/* IEEE binary16 bits to float (exact). */
float ifa_half_to_float(uint16_t h);
/* float to binary16 bits, round to nearest even; overflow gives ±inf, NaN stays NaN. */
uint16_t ifa_float_to_half(float f);
/* bfloat16 bits to float (exact). */
float ifa_bf16_to_float(uint16_t b);
/* float to bfloat16 bits, round to nearest even; NaN stays NaN. */
uint16_t ifa_float_to_bf16(float f);
/* float8 e4m3fn bits to double (exact); 0x7f and 0xff are NaN. */
double ifa_e4m3_to_double(uint8_t b);
/* double to float8 e4m3fn bits, round to nearest even; beyond ±448 saturates to ±448 (as quantisers clamp;
 * the format has no infinity), NaN gives 0x7f. */
uint8_t ifa_double_to_e4m3(double v);
/* float8 e5m2 bits to double (exact): the upper byte of a binary16, infinities and NaNs included. */
double ifa_e5m2_to_double(uint8_t b);
/* double to float8 e5m2 bits, round to nearest even (straight from the double, never through binary16);
 * beyond ±57344 saturates to ±57344 (as quantisers clamp), NaN gives 0x7f. */
uint8_t ifa_double_to_e5m2(double v);

#endif
