/* Storage types and conversions shared by ifa kernels. All arithmetic is fp32; fp16 is only stored
 * (vload_half/vstore_half need no cl_khr_fp16) and bf16 is the upper half of an fp32 word.
 * Dtype codes follow ifa_dtype: 0 float32, 1 float16, 2 bfloat16, 3 int8, 8 int4 (two signed nibbles per
 * byte, low nibble first; element index i lives in byte i / 2), 9 float8 e4m3fn, 10 float8 e5m2. The integer
 * codes are load-only; float8 is also stored (by the append, IFA_STORE / IFA_NSTORE). */

#if IFA_CPU && defined(__clang__)
/* On a CPU without AVX-512 clang notes (-Wpsabi) that the 16-wide vectors handed to PoCL's builtins would pass
 * differently were AVX-512 enabled; the kernel and its builtins are built together, so there is nothing to
 * fix, and under -Werror (the test suite's) the note failed every build on AVX2 machines. */
#pragma clang diagnostic ignored "-Wpsabi"
#endif

#define IFA_F32 0
#define IFA_F16 1
#define IFA_BF16 2
#define IFA_I8 3
#define IFA_I4 8
#define IFA_E4M3 9
#define IFA_E5M2 10
#define IFA_IS_FP8(c) ((c) == IFA_E4M3 || (c) == IFA_E5M2)

#define IFA_STORE_TYPE_0 float
#define IFA_STORE_TYPE_1 half
#define IFA_STORE_TYPE_2 ushort
#define IFA_STORE_TYPE_3 char
#define IFA_STORE_TYPE_8 uchar
#define IFA_STORE_TYPE_9 uchar
#define IFA_STORE_TYPE_10 uchar
#define IFA_STORE_TYPE_(c) IFA_STORE_TYPE_##c
#define IFA_STORE_TYPE(c) IFA_STORE_TYPE_(c)

/* Horizontal reductions of 8 and 16 floats by halving the vector: whole-vector operations until two lanes
 * remain, which the CPU's vector units do in a few shuffles (a loop over lanes is scalar code). One order
 * of additions for every kernel that sums this way. */
inline float ifa_sum8(float8 a) { const float4 b = a.lo + a.hi; const float2 c = b.lo + b.hi; return c.x + c.y; }
inline float ifa_max8(float8 a) { const float4 b = fmax(a.lo, a.hi); const float2 c = fmax(b.lo, b.hi); return fmax(c.x, c.y); }
inline float ifa_min8(float8 a) { const float4 b = fmin(a.lo, a.hi); const float2 c = fmin(b.lo, b.hi); return fmin(c.x, c.y); }
/* the 16-wide ones are macros: a float16 passed by value to a function is a 512-bit argument, which clang
 * warns about on CPUs without AVX-512 even where the call is inlined (a must be a plain variable) */
#define ifa_sum16(a) ifa_sum8((a).lo + (a).hi)
#define ifa_max16(a) ifa_max8(fmax((a).lo, (a).hi))
#define ifa_min16(a) ifa_min8(fmin((a).lo, (a).hi))

inline float ifa_bf16_to_f32(ushort x) { return as_float((uint)x << 16); }

/* float8 e4m3fn to float, exact. One value: a normal value's exponent and mantissa move into place with the
 * bias raised by 120 (127 - 7); a subnormal (exponent 0) is its mantissa times 2^-9, computed so that no
 * float denormal is ever formed (devices may flush them); 0x7f / 0xff are NaN. */
inline float ifa_e4m3_to_f32(uchar b) {
    const uint u = b, mag = u & 0x7fu;
    const float x = mag >> 3 ? as_float(((u & 0x80u) << 24) | ((mag << 20) + (120u << 23)))
                             : (u & 0x80u ? -1.0f : 1.0f) * (float)mag * 0x1p-9f;
    return mag == 0x7fu ? NAN : x;
}
#if IFA_CPU && defined(__clang__) && defined(VW) && VW == 16
/* 16 halves in one conversion (IFA_H16X16): PoCL's vload_half16 converts two halves of 8 and joins them
 * (vcvtph2ps ymm twice and vinsertf64x4 on AVX-512, 3 instructions a vector in the score and P.V loops where
 * one does); clang's storage-only __fp16 widened by __builtin_convertvector is the one instruction, exact as
 * vload_half. IFA_H16_BITS: 16 binary16 bit patterns (ushort16) as floats. */
#define IFA_H16X16 1
typedef __fp16 ifa_h16_t __attribute__((ext_vector_type(16)));
#define IFA_H16_BITS(h) __builtin_convertvector(__builtin_astype((h), ifa_h16_t), float16)
#else
#define IFA_H16X16 0
#endif
/* IFA_HBITS_n(h): the n binary16 bit patterns of the private ushortn variable h as floats (the float8 forms below) */
#define IFA_HBITS_2(h) vload_half2(0, (const __private half *)&(h))
#define IFA_HBITS_4(h) vload_half4(0, (const __private half *)&(h))
#define IFA_HBITS_8(h) vload_half8(0, (const __private half *)&(h))
#if IFA_H16X16
#define IFA_HBITS_16(h) IFA_H16_BITS(h)
#else
#define IFA_HBITS_16(h) vload_half16(0, (const __private half *)&(h))
#endif
/* n values: each byte becomes the binary16 with the same sign, exponent and mantissa bits (sign-extended,
 * shifted by 7, bit 14 cleared), which is the float8 value times 2^-8 for normal and subnormal codes alike
 * (a float8 subnormal is a binary16 subnormal); the hardware's half conversion (F16C on x86) and a multiply
 * by 256 give the float. A NaN code (0x7f, 0xff) would give 1.875 * 2^8 = 480, beyond float8's 448: a CPU
 * makes it a binary16 NaN in the 16-bit bits first (IFA_E4M3_BITS: bit 14 of the shifted word is the sign's copy,
 * and + 0x80 carries into it only from a NaN code's bits 0x3f80, so that XOR-ing its bit 14 with the sum's leaves
 * the carry there: bit 14 clear for every other code and set for the NaN codes, 0x7f80 with the sign, exponent all
 * ones and a mantissa; an add and one vpternlog on AVX-512 that also clear bit 14, where the mask and the NaN step
 * took three; exact for all 256 codes), other devices clear bit 14 and select NaN where |x| == 480
 * (IFA_E4M3_NAN_F). About 9 vector instructions per 8 values on AVX2 with the select, against 20 for
 * the integer form of the scalar function above (G = 1, D = 128, one thread in L3: 163 against 359 us; fp16 68,
 * int8 71: docs/performance.md). */
#if IFA_CPU
#define IFA_E4M3_BITS(h) ((h) ^ (((h) + (ushort)0x80) & (ushort)0x4000))
#define IFA_E4M3_NAN_F(n, x) (x)
#else
#define IFA_E4M3_BITS(h) ((h) & (ushort)0xbf80)
#define IFA_E4M3_NAN_F(n, x) select((x), (float##n)(NAN), as_int##n(fabs(x) == 480.0f))
#endif
#define IFA_E4M3_N(n)                                                                                             \
    inline float##n ifa_e4m3_to_f32_##n(uchar##n b) {                                                            \
        const ushort##n h0 = as_ushort##n(convert_short##n(as_char##n(b))) << (ushort)7;                         \
        const ushort##n h = IFA_E4M3_BITS(h0);                                                                   \
        const float##n x = IFA_HBITS_##n(h) * 256.0f;                                                            \
        return IFA_E4M3_NAN_F(n, x);                                                                              \
    }
/* float to float8, round to nearest even, for a format of M mantissa bits whose smallest normal is MIN_NORMAL
 * and largest finite MAX (code MAX_CODE): beyond ±MAX saturates (quantisers clamp; CUDA's __NV_SATFINITE does
 * the same), NaN gives 0x7f. Below MIN_NORMAL the result is a subnormal, a whole number of steps of
 * MIN_NORMAL / 2^M (rint rounds half to even; 2^M steps is the smallest normal); above, the float's mantissa
 * is rounded to M bits in its own bits, a carry moving into the exponent, and the exponent is rebiased by
 * REBIAS (127 minus the format's bias). Rounding straight from the float: through binary16 first would round
 * twice. tools/common/half.c has the twin. */
#define IFA_F32_TO_FP8(name, M, MIN_NORMAL, MAX, MAX_CODE, REBIAS)                                                \
    inline uchar name(float x) {                                                                                  \
        const uint u = as_uint(x), sign = (u >> 24) & 0x80u, a = u & 0x7fffffffu;                                 \
        if (isnan(x)) return (uchar)0x7f;                                                                         \
        if (as_float(a) >= (MAX)) return (uchar)(sign | (MAX_CODE));                                              \
        if (as_float(a) < (MIN_NORMAL)) return (uchar)(sign | (uint)rint(as_float(a) / (MIN_NORMAL) * (1 << (M)))); \
        const uint r = (a + ((1u << (22 - (M))) - 1u) + ((a >> (23 - (M))) & 1u)) >> (23 - (M));                  \
        return (uchar)(sign | min(r - ((uint)(REBIAS) << (M)), (uint)(MAX_CODE)));                                \
    }
IFA_F32_TO_FP8(ifa_f32_to_e4m3, 3, 0x1p-6f, 448.0f, 0x7eu, 120) /* bias 7 */
IFA_F32_TO_FP8(ifa_f32_to_e5m2, 2, 0x1p-14f, 57344.0f, 0x7bu, 112) /* bias 15 */
/* float8 e5m2 to float, exact: the byte is the upper half of a binary16 with the same value (infinities and
 * NaNs included), which the hardware's half conversion reads. One load per value or per vector. */
inline float ifa_e5m2_to_f32(uchar b) {
    const ushort h = (ushort)b << 8;
    return vload_half(0, (const __private half *)&h);
}
#define IFA_E5M2_N(n)                                                                                             \
    inline float##n ifa_e5m2_to_f32_##n(uchar##n b) {                                                            \
        const ushort##n h = convert_ushort##n(b) << (ushort)8;                                                    \
        return IFA_HBITS_##n(h);                                                                                  \
    }
/* n values stored from a private vector x at p (only the append writes float8, 16 at a time) */
#define IFA_FP8_NSTORE(f, n, x, p, i)                                                                             \
    do {                                                                                                          \
        const float##n x_ = (x);                                                                                  \
        for (int j_ = 0; j_ < n; ++j_) (p)[(i) + j_] = f(((const float *)&x_)[j_]);                               \
    } while (0)
#define IFA_NSTORE_9(n, x, p, i) IFA_FP8_NSTORE(ifa_f32_to_e4m3, n, x, p, i)
#define IFA_NSTORE_10(n, x, p, i) IFA_FP8_NSTORE(ifa_f32_to_e5m2, n, x, p, i)
IFA_E4M3_N(2)
IFA_E4M3_N(4)
IFA_E4M3_N(8)
IFA_E5M2_N(2)
IFA_E5M2_N(4)
IFA_E5M2_N(8)
#if defined(VW) && VW == 16 /* only where 16-wide vectors are native: elsewhere clang warns on the ABI */
IFA_E4M3_N(16)
IFA_E5M2_N(16)
#endif

inline float ifa_i4_to_f32(__global const uchar *p, ulong i) {
    const char byte = as_char(p[i >> 1]);
    return (float)((i & 1) ? byte >> 4 : (char)(byte << 4) >> 4);
}

/* Round to nearest even, keeping NaN a (quiet) NaN. */
inline ushort ifa_f32_to_bf16(float f) {
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

#define IFA_LOAD_0(p, i) ((p)[i])
#define IFA_LOAD_1(p, i) vload_half((i), (p))
#define IFA_LOAD_2(p, i) ifa_bf16_to_f32((p)[i])
#define IFA_LOAD_3(p, i) ((float)(p)[i])
#define IFA_LOAD_8(p, i) ifa_i4_to_f32((p), (i))
#define IFA_LOAD_9(p, i) ifa_e4m3_to_f32((p)[i])
#define IFA_LOAD_10(p, i) ifa_e5m2_to_f32((p)[i])
#define IFA_LOAD_(c, p, i) IFA_LOAD_##c(p, i)
#define IFA_LOAD(c, p, i) IFA_LOAD_(c, p, i)

#define IFA_STORE_0(x, p, i) ((p)[i] = (x))
#define IFA_STORE_1(x, p, i) vstore_half_rte((x), (i), (p))
#define IFA_STORE_2(x, p, i) ((p)[i] = ifa_f32_to_bf16(x))
/* int8 output (post-quant): round half to even, saturate to [-128, 127] */
#define IFA_STORE_3(x, p, i) ((p)[i] = convert_char_sat_rte(x))
#define IFA_STORE_9(x, p, i) ((p)[i] = ifa_f32_to_e4m3(x))
#define IFA_STORE_10(x, p, i) ((p)[i] = ifa_f32_to_e5m2(x))
#define IFA_STORE_(c, x, p, i) IFA_STORE_##c(x, p, i)
#define IFA_STORE(c, x, p, i) IFA_STORE_(c, x, p, i)

/* n elements at once (n = 2, 4, 8, 16) from / to element index i of a tensor of dtype code c (0-2; loads
 * also 3, int8): PoCL converts a lone half or bf16 in scalar integer code, a vector in vector instructions.
 * Rounding as IFA_STORE. */
#define IFA_BF16_ROUND_N(n)                                                                                       \
    inline ushort##n ifa_f32_to_bf16_##n(float##n f) {                                                           \
        const uint##n u = as_uint##n(f);                                                                         \
        const uint##n rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16, quiet = (u >> 16) | 0x40u;               \
        return convert_ushort##n(select(rounded, quiet, (u & 0x7fffffffu) > 0x7f800000u));                       \
    }
IFA_BF16_ROUND_N(2)
IFA_BF16_ROUND_N(4)
IFA_BF16_ROUND_N(8)
IFA_BF16_ROUND_N(16)
#define IFA_NLOAD_0(n, p, i) vload##n(0, (p) + (i))
#define IFA_NLOAD_1(n, p, i) IFA_HLOAD_##n(p, i)
#define IFA_HLOAD_2(p, i) vload_half2(0, (p) + (i))
#define IFA_HLOAD_4(p, i) vload_half4(0, (p) + (i))
#define IFA_HLOAD_8(p, i) vload_half8(0, (p) + (i))
#if IFA_H16X16 /* packed: K/V rows need only 2-byte alignment */
typedef struct __attribute__((packed)) { ifa_h16_t v; } ifa_h16_packed;
#define IFA_HLOAD_16(p, i) __builtin_convertvector(((__global const ifa_h16_packed *)((p) + (i)))->v, float16)
#else
#define IFA_HLOAD_16(p, i) vload_half16(0, (p) + (i))
#endif
#define IFA_NLOAD_2(n, p, i) as_float##n(convert_uint##n(vload##n(0, (p) + (i))) << 16)
#define IFA_NLOAD_3(n, p, i) convert_float##n(vload##n(0, (p) + (i)))
#define IFA_NLOAD_9(n, p, i) ifa_e4m3_to_f32_##n(vload##n(0, (p) + (i)))
#define IFA_NLOAD_10(n, p, i) ifa_e5m2_to_f32_##n(vload##n(0, (p) + (i)))
#define IFA_NLOAD_(c, n, p, i) IFA_NLOAD_##c(n, p, i)
#define IFA_NLOAD(c, n, p, i) IFA_NLOAD_(c, n, p, i)
#define IFA_NSTORE_0(n, x, p, i) vstore##n((x), 0, (p) + (i))
#define IFA_NSTORE_1(n, x, p, i) vstore_half##n##_rte((x), 0, (p) + (i))
#define IFA_NSTORE_2(n, x, p, i) vstore##n(ifa_f32_to_bf16_##n(x), 0, (p) + (i))
#define IFA_NSTORE_(c, n, x, p, i) IFA_NSTORE_##c(n, x, p, i)
#define IFA_NSTORE(c, n, x, p, i) IFA_NSTORE_(c, n, x, p, i)

/* Balanced units: where unit u's stretch of the cost line [0, total) starts (ifa_formulas.h, which the planner's
 * ifa__unit_start computes too). */
inline long ifa_unit_start(long total, long units, long u) { return IFA_UNIT_START(total, units, u); }

/* The unit whose stretch holds cost position x: the largest u with start(u) <= x (the combine's first and last
 * pieces of a block; the fused combine's too), by bisection over start(u) = q u + floor(r u / units) with total's
 * quotient q and remainder r by units taken once, and r u / units in 32 bits where r u fits (up to 65536 units: a
 * GPU's few hundred): a 64-bit division is a long subroutine on a GPU, and ifa_unit_start takes three. */
inline long ifa_unit_of(long total, long units, long x) {
    const long q = total / units, r = total % units;
    const int narrow = units <= 65536;
    long lo = 0, hi = units;
    while (hi - lo > 1) {
        const long mid = (lo + hi) / 2;
        const long f = narrow ? (long)((uint)(r * mid) / (uint)units) : r * mid / units;
        if (q * mid + f <= x) lo = mid; else hi = mid;
    }
    return lo;
}

/* Balanced units' partial slots, the one rule the writer (ifa_attention_begin.clh's piece loop) and the readers (the
 * combine kernel, the fused combine's last piece) share: only a stretch's first and last pieces can be partial
 * blocks, so unit u has two slots, 2u for its first piece and 2u + 1 for a later one (its last). */
inline ulong ifa_unit_slot(long u, int later) { return 2 * (ulong)u + (later ? 1 : 0); }

/* The pieces of the block at cost positions [pk, pk + bcost): units first to first + count - 1 ran them, in that
 * order, and skip says the first piece is the first unit's last (its stretch starts before pk), the others being
 * their units' first. count 1: one unit held the whole block. */
typedef struct {
    long first;
    int count;
    int skip;
} ifa_pieces;

inline ifa_pieces ifa_pieces_of(long total, long units, long pk, long bcost) {
    ifa_pieces p;
    p.first = ifa_unit_of(total, units, pk);
    p.count = (int)(ifa_unit_of(total, units, pk + bcost - 1) - p.first + 1);
    p.skip = ifa_unit_start(total, units, p.first) < pk;
    return p;
}

/* The slot of piece s (0 <= s < count) of a block */
inline ulong ifa_piece_slot(ifa_pieces p, int s) { return ifa_unit_slot(p.first + s, s == 0 && p.skip); }

/* token pasting after expansion: IFA_CAT(float, VW) is float16 at VW = 16 (vector types and vload/vstore names) */
#define IFA_CAT_(a, b) a##b
#define IFA_CAT(a, b) IFA_CAT_(a, b)

/* The first logical KV position a (batch, KV head) block reads (ifa_formulas.h, which the planner's ifa__kv_lo
 * computes too: the plan's costs and the kernels' ranges agree on it). */
inline int ifa_kv_lo(int len, int window, int causal_shift) { return IFA_KV_LO(len, window, causal_shift); }

/* Batch b's KV length and query tokens from the lengths array (lens, lens_off, per_batch and uniform_len are
 * the kernels' arguments). With QLEN (actual_seq_lengths_q) the host uploads (length, tokens) pairs: batch b
 * has its first IFA_QLEN(b) of the SQ query tokens, the rest are padding that sees nothing; the shared
 * prefix's pass keeps per_batch = 0 for its own length and still reads the tokens. Without QLEN every batch
 * has all SQ (IFA_SQ: the combine passes it as an argument). */
#ifndef QLEN
#define QLEN 0
#endif
#ifndef IFA_SQ
#define IFA_SQ SQ
#endif
#if QLEN
#define IFA_LEN(b) (per_batch ? lens[lens_off + 2 * (ulong)(b)] : uniform_len)
#define IFA_QLEN(b) lens[lens_off + 2 * (ulong)(b) + 1]
#else
#define IFA_LEN(b) (per_batch ? lens[lens_off + (ulong)(b)] : uniform_len)
#define IFA_QLEN(b) IFA_SQ
#endif
/* the causal shift of a batch with qn query tokens (ifa_kv_lo; the host's ifa__batch_causal_shift) */
#define IFA_SHIFT(causal, qn) ((causal) && (qn) > 0 ? (qn) - 1 : 0)

/* VDIM: the value columns a kernel reads per row and the output's head dimension (D_v, value_head_dim);
 * the key's HEAD_DIM unless the host sets it */
#ifndef VDIM
#define VDIM HEAD_DIM
#endif

/* Post-quant of an output element of query head h, dim d: x * scale2 + offset2, per tensor (QUANT_OUT 1) or
 * per channel (QUANT_OUT 2, index h * VDIM + d); the int8 store rounds and saturates. The kernel must
 * declare qs2, qs2_off, qo2, qo2_off (scale and offset of dtype code Q2_T) when QUANT_OUT is set. */
#ifndef QUANT_OUT
#define QUANT_OUT 0
#endif
#ifndef Q2_OFF
#define Q2_OFF 0
#endif
#if QUANT_OUT == 1
#define IFA_Q2_IDX(h, d) ((ulong)0)
#else
#define IFA_Q2_IDX(h, d) ((ulong)(h) * VDIM + (ulong)(d))
#endif
#if QUANT_OUT && Q2_OFF
#define IFA_QUANT(x, h, d) fma((x), IFA_LOAD(Q2_T, qs2, qs2_off + IFA_Q2_IDX(h, d)), IFA_LOAD(Q2_T, qo2, qo2_off + IFA_Q2_IDX(h, d)))
#elif QUANT_OUT
#define IFA_QUANT(x, h, d) ((x) * IFA_LOAD(Q2_T, qs2, qs2_off + IFA_Q2_IDX(h, d)))
#else
#define IFA_QUANT(x, h, d) (x)
#endif

/* The combines' column steps (ifa_combine.cl, and the last split's in ifa_attention_end.clh): the cw floats (a quad, or
 * one where D_v is not a multiple of 4) of p from at as a float4 (the rest 0), to add by a split's weight; and a's
 * cw columns from column d on of a row of head h, stored at element at of o (int8 output through IFA_QUANT). */
inline float4 ifa_load_cols(__global const float *p, ulong at, int cw) {
    return cw == 4 ? vload4(0, p + at) : (float4)(p[at], 0.0f, 0.0f, 0.0f);
}
#define IFA_STORE_COLS(a, cw, h, d, o, at)                                                                        \
    do {                                                                                                          \
        IFA_STORE(O_T, IFA_QUANT((a).x, h, d), o, at);                                                            \
        if ((cw) == 4) {                                                                                          \
            IFA_STORE(O_T, IFA_QUANT((a).y, h, (d) + 1), o, (at) + 1);                                             \
            IFA_STORE(O_T, IFA_QUANT((a).z, h, (d) + 2), o, (at) + 2);                                             \
            IFA_STORE(O_T, IFA_QUANT((a).w, h, (d) + 3), o, (at) + 3);                                             \
        }                                                                                                         \
    } while (0)
#ifndef Q2_T
#define Q2_T 0
#endif

/* Non-finite values (docs/op.md, "Non-finite values"). The softmax's max is fmax, which passes over a NaN score,
 * so a NaN reaches a row through its weight e^(s - m) and from there its sum and accumulators; these rules keep it
 * there on every shape and through every merge of parts (splits, warps, lane groups, units):
 * IFA_MAX_BASE(m): the max a row's scores are taken from: m, or 0 while the row has seen only -inf (and NaN)
 *   scores, so that a -inf score weighs e^-inf = 0 while a NaN one still weighs NaN (testing the max instead,
 *   m == -inf ? 0 : e^(s - m), would give the NaN score a weight of 0).
 * IFA_PART_W(mp, mx): the weight of a part whose max is mp in a row whose max is mx: 0 for a part that saw only
 *   -inf (or NaN) scores. The part's sum and accumulators are multiplied by it, never skipped, so that a NaN they
 *   hold survives (0 x NaN); every part a merge reads has written its sum and accumulators (0 when it saw nothing).
 * IFA_SEEN(l): whether a row with sum l saw a key of any weight: l != 0, so that a NaN sum (not > 0) still divides
 *   the row into NaN instead of leaving zeros, and only a row that saw nothing gets zeros and a -inf LSE. */
#define IFA_MAX_BASE(m) ((m) == -INFINITY ? 0.0f : (m))
#define IFA_PART_W(mp, mx) ((mp) == -INFINITY ? 0.0f : exp((mp) - (mx)))
#define IFA_SEEN(l) ((l) != 0.0f)
/* a row's LSE from its max and sum (-inf for a row that saw nothing, NaN for a NaN sum) */
inline float ifa_lse(float m, float l) { return IFA_SEEN(l) ? m + log(l) : -INFINITY; }

/* Whether atten_mask hides key position p from every one of a batch's qn query tokens (at: the mask's element of
 * token 0 at p, tstride its token stride, 0 for a mask the tokens share): a hidden position's value is never
 * read, so that whatever it holds (NaN in a padded slot) cannot reach a row through 0 x NaN. A position some
 * tokens of a step see is multiplied by 0 for the others (docs/op.md, "Non-finite values"). */
inline int ifa_hidden(__global const uchar *mask, ulong at, ulong tstride, int qn) {
    int seen = 0;
    for (int t = 0; t < max(qn, 1); ++t) seen |= mask[at + (ulong)t * tstride] == 0;
    return !seen;
}

/* Attention sinks (SINK 1): the final normalisation of a row whose scores have max m and sum
 * l = sum_j e^(s_j - m), with the head's sink logit z joining the sum as a key with no value. With
 * M = max(m, z): den = l e^(m - M) + e^(z - M); the output is acc e^(m - M) / den, the lse M + log(den).
 * A row with no visible key (m = -inf, l = 0) gets factor 0 and lse z; z = -inf is no sink (factor 1 / l,
 * or 0 and lse -inf for an empty row), never exp(-inf - -inf) = NaN; a NaN sum or sink logit gives NaN. */
#ifndef SINK
#define SINK 0
#endif
inline float ifa_sink_factor(float m, float l, float z) {
    const float mm = fmax(m, z);
    /* no sink and no key: 0 x l keeps a NaN sum (a row of NaN scores) */
    return m == -INFINITY && z == -INFINITY ? 0.0f * l : exp(m - mm) / fma(l, exp(m - mm), exp(z - mm));
}
inline float ifa_sink_lse(float m, float l, float z) {
    const float mm = fmax(m, z);
    return m == -INFINITY && z == -INFINITY ? ifa_lse(m, l) : mm + log(fma(l, exp(m - mm), exp(z - mm)));
}
typedef IFA_STORE_TYPE(Q2_T) q2_store;

/* ALiBi (HAS_ALIBI 1): the bias -slope * |p - qpos| of logical key position p for the query token at logical
 * position qpos. The distance is taken in int, so it is exact, and below 2^24 it converts to float exactly:
 * the only rounding is the product's. */
#ifndef HAS_ALIBI
#define HAS_ALIBI 0
#endif
inline float ifa_alibi(float slope, int p, int qpos) { return -slope * convert_float(abs(p - qpos)); }
inline float4 ifa_alibi4(float slope, int4 p, int qpos) { return -slope * convert_float4(abs(p - (int4)qpos)); }

/* Rotary position embedding (docs/rope.md): ROPE 1 rotates halves (neox: dims d and d + ROPE_DIM/2), 2
 * interleaved pairs (gptj: dims 2i and 2i + 1), over the ROPE_DIM dims from ROPE_OFF (0: the leading ones;
 * DeepSeek's MLA rotates the trailing 64); ROPE_TAB 1 reads cos/sin from tables instead of computing them. The kernel must declare rope_f, rope_f_off (inverse frequencies as
 * (hi, lo) float pairs) or, with ROPE_TAB, rope_cos, rope_c_off, rope_sin, rope_s_off. */
#ifndef ROPE
#define ROPE 0
#endif
#ifndef ROPE_TAB
#define ROPE_TAB 0
#endif
#ifndef ROPE_OFF
#define ROPE_OFF 0
#endif
/* whether element d of a row rotates; the helpers below take its place e = d - ROPE_OFF in the rotated part */
#define IFA_ROPE_IN(d) ((uint)((d) - ROPE_OFF) < (uint)ROPE_DIM)
#if ROPE
/* cos and sin of r for |r| up to a few π (the angle after ifa_rope_cs's reduction): r = k·π/2 + y with
 * |y| <= π/4 (π/2 split into a float and its remainder), then Cephes' single-precision minimax polynomials
 * for sin and cos on [-π/4, π/4] (about 1 ulp) and the quadrant's swap and signs. PoCL's sincos runs a
 * general argument reduction even for small arguments (about 40 ns per call on the CPU, most of a decode
 * step's KVCacheAppend with RoPE). */
inline float2 ifa_sincos_small(float r) {
    const float k = rint(r * 0.636619772367581343f);
    float y = fma(-k, 1.57079637050628662f, r);
    y = fma(-k, -4.37113900630947676e-8f, y);
    const float z = y * y;
    const float s = fma(fma(fma(-1.9515295891e-4f, z, 8.3321608736e-3f), z, -1.6666654611e-1f), z * y, y);
    const float c = fma(fma(fma(2.443315711809948e-5f, z, -1.388731625493765e-3f), z, 4.166664568298827e-2f), z * z,
                        fma(-0.5f, z, 1.0f));
    const int q = (int)k & 3;
    const float sn = (q & 1) ? c : s, cs = (q & 1) ? s : c;
    return (float2)(((q + 1) & 2) ? -cs : cs, (q & 2) ? -sn : sn);
}

/* cos and sin of pos · (f.x + f.y), reduced modulo 2π in float32 without losing the angle at large pos:
 * a = pos·f.x rounded, e its exact rounding error (fma), k = round(a / 2π); a - k·2π with 2π split into a
 * float and its remainder (Cody-Waite, each product by fma), then e and pos·f.y added to the small result.
 * The angle is good to a few 1e-7 rad for positions up to 2^24 (a plain float pos·f is off by up to
 * 2^-24·pos rad: 0.06 rad at 1M). */
inline float2 ifa_rope_cs(int pos, float2 f) {
    const float p = (float)pos;
    const float a = p * f.x;
    const float e = fma(p, f.x, -a);
    const float k = rint(a * 0.15915494309189535f);
    float r = fma(-k, 6.28318548202514648f, a);
    r = fma(-k, -1.7484556000744487e-07f, r);
    r += e + p * f.y;
    return ifa_sincos_small(r);
}
#if ROPE_TAB
#define IFA_ROPE_CS(pos, i)                                                                                      \
    ((float2)(rope_cos[rope_c_off + (ulong)(pos) * (ROPE_DIM / 2) + (ulong)(i)],                                \
              rope_sin[rope_s_off + (ulong)(pos) * (ROPE_DIM / 2) + (ulong)(i)]))
#else
#define IFA_ROPE_CS(pos, i) ifa_rope_cs((pos), rope_f[rope_f_off + (ulong)(i)])
#endif
/* Rotating element e (< ROPE_DIM) of the rotated part: its pair partner, the frequency index of the pair, and
 * the rotated value from x = element e, xp = the partner and cs = IFA_ROPE_CS(pos, ifa_rope_index(e)); places
 * within the part (the row's element is ROPE_OFF + e). */
inline int ifa_rope_partner(int d) {
    return ROPE == 1 ? (d < ROPE_DIM / 2 ? d + ROPE_DIM / 2 : d - ROPE_DIM / 2) : d ^ 1;
}
inline int ifa_rope_index(int d) { return ROPE == 1 ? d % (ROPE_DIM / 2) : d >> 1; }
inline float ifa_rope_apply(float x, float xp, int d, float2 cs) {
    const int first = ROPE == 1 ? d < ROPE_DIM / 2 : (d & 1) == 0;
    return first ? x * cs.x - xp * cs.y : x * cs.x + xp * cs.y;
}
#endif

/* Antiquant (ifa_antiquant codes 0-5): dequantised x = (x_q + offset) * scale. The key's form is ANTIQUANT
 * (scale dtype code AQ_T, AQ_OFF 1 with offsets), the value's VAQ (VAQ_T, VAQ_OFF), the key's unless the op
 * was given separate key and value scales (Ascend FIA's key/value_antiquant_mode: KIVI's keys per channel
 * and values per token). AQ_IDX(pos, d) (VAQ_IDX) is the element index of the key's (value's) scale/offset
 * entry for key row pos (logical position for paged modes 3-4, pool block x block_size + row for mode 5,
 * IFA_AQ_POS) and dim d. The kernel must declare b, kvh, block_size, aqs, aqs_off, aqo, aqo_off, aq_bstride,
 * aq_hstride and their vaq* twins. The all-vector kernel folds the key's channel modes (1 per channel, 2 per
 * tensor) into the query and its token modes (3 per token, 4 per head and token, 5 with the pages) into each
 * row's dot product, and dequantises each value vector with one FMA; the cv gather dequantises each element. */
#ifndef ANTIQUANT
#define ANTIQUANT 0
#endif
#ifndef AQ_T
#define AQ_T 0
#endif
#ifndef AQ_OFF
#define AQ_OFF 0
#endif
#ifndef VAQ
#define VAQ ANTIQUANT
#endif
#ifndef VAQ_T
#define VAQ_T AQ_T
#endif
#ifndef VAQ_OFF
#define VAQ_OFF AQ_OFF
#endif
typedef IFA_STORE_TYPE(AQ_T) aq_store;
typedef IFA_STORE_TYPE(VAQ_T) vaq_store;
/* the index of a form (mode, its batch and head strides); the mode is a constant, so this folds to one case */
#define IFA_AQ_INDEX(mode, bs, hs, pos, d)                                                                       \
    ((mode) == 1   ? (ulong)kvh * HEAD_DIM + (ulong)(d)                                                         \
     : (mode) == 2 ? (ulong)0                                                                                   \
     : (mode) == 3 ? b * (bs) + (ulong)(pos)                                                                    \
     : (mode) == 4 ? b * (bs) + (ulong)kvh * (hs) + (ulong)(pos)                                                \
                   : (ulong)(pos) / (ulong)block_size * (bs) + (ulong)kvh * (hs) + (ulong)(pos) % (ulong)block_size)
#define AQ_IDX(pos, d) IFA_AQ_INDEX(ANTIQUANT, aq_bstride, aq_hstride, pos, d)
#define VAQ_IDX(pos, d) IFA_AQ_INDEX(VAQ, vaq_bstride, vaq_hstride, pos, d)
#define AQ_SCALE(i) IFA_LOAD(AQ_T, aqs, aqs_off + (i))
#define VAQ_SCALE(i) IFA_LOAD(VAQ_T, vaqs, vaqs_off + (i))
#if AQ_OFF
#define AQ_OFFSET(i) IFA_LOAD(AQ_T, aqo, aqo_off + (i))
#else
#define AQ_OFFSET(i) 0.0f
#endif
#if VAQ_OFF
#define VAQ_OFFSET(i) IFA_LOAD(VAQ_T, vaqo, vaqo_off + (i))
#else
#define VAQ_OFFSET(i) 0.0f
#endif
/* The key's token scale and offset (modes 3 to 5), which the kernels apply to a row's whole dot product
 * ((q.k + o q.1) s) instead of to each element ((k_i + o) s): an infinite one becomes NaN, what the elements'
 * products would sum to over a row of both signs (docs/op.md, "Non-finite values"), so that a row's result is
 * the same as the dequantised keys' and the cv template's. */
#define IFA_ROW_FACTOR(x) (fabs(x) < INFINITY ? (x) : NAN) /* false for +-inf and NaN */
#define AQ_ROW_SCALE(i) IFA_ROW_FACTOR(AQ_SCALE(i))
#define AQ_ROW_OFFSET(i) IFA_ROW_FACTOR(AQ_OFFSET(i))
