/* ifa_dtype's codes for the K/V types (include/ifa/ifa.h): the planner sees dtypes as the plan's integer codes. */
#ifndef IFA_TILING_KV_CODES_H
#define IFA_TILING_KV_CODES_H

#define IFA__KV_FLOAT32 0
#define IFA__KV_FLOAT16 1
#define IFA__KV_BFLOAT16 2
#define IFA__KV_INT8 3
#define IFA__KV_INT4 8
#define IFA__KV_E4M3 9
#define IFA__KV_E5M2 10
/* one byte an element (int8, float8): the matrix shapes load 16 a 16-byte load */
#define IFA__KV_ONE_BYTE(t) ((t) == IFA__KV_INT8 || (t) == IFA__KV_E4M3 || (t) == IFA__KV_E5M2)
/* K/V types the key tile reads (16-bit floats and int8) */
#define IFA__KEY_TILE_KV(t) ((t) == IFA__KV_FLOAT16 || (t) == IFA__KV_BFLOAT16 || (t) == IFA__KV_INT8)

#endif
