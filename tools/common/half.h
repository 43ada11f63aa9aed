/* Host conversions between float and the 16-bit storage formats (round to nearest even). */
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

#endif
