/* The all-vector kernel's vectors along D (fv: VW floats, a float in the GPU shapes) and the CPU shape's (VW > 1)
 * register tiles, K/V loads, score reductions, antiquant folds and software prefetches (ifa_all_vector_options.cl
 * says where this file stands in the program). */
/* query rows per register tile of the dot products and of P.V (all of them in the scalar shape); with MH > 1
 * KV heads per work-group, RB_MH divides one head's GSQ = G x SQ rows (ifa__tile_rows), so that a tile reads
 * one head's K/V slice, IFA_HOFF(r0) elements after the block's first head */
#if VW > 1 && MH > 1
#define RB RB_MH
#define IFA_HOFF(r0) ((ulong)((r0) / GSQ) * kv_hstride)
#elif VW > 1 && R > IFA_MAX_TILE_ROWS
#define RB IFA_MAX_TILE_ROWS
#define IFA_HOFF(r0) 0
#else
#define RB R
#define IFA_HOFF(r0) 0
#endif
/* query rows per P.V register block (plan->pv_rows): with MH > 1 a divisor of one head's GSQ rows, for
 * IFA_HOFF; else any count, the last block masked */
#ifndef PV_RB
#define PV_RB RB
#endif

/* fv: VW floats. IFA_LV/IFA_SV load and store one from float memory (local or private), IFA_VLOAD loads
 * one from a KV or query tensor of dtype code c at element index i. */
#if VW == 1
typedef float fv;
#define IFA_LV(ptr) (*(ptr))
#define IFA_SV(x, ptr) (*(ptr) = (x))
#define IFA_VLOAD(c, p, i) IFA_LOAD(c, p, i)
#define IFA_KV_VLOAD(p, row, col) IFA_VLOAD(KV_T, p, (row) + (col))
inline float ifa_hsum(float a) { return a; }
inline float ifa_hmax(float a) { return a; }
#define IFA_UNROLL_X
#else
typedef IFA_CAT(float, VW) fv;
#define IFA_LV(ptr) IFA_CAT(vload, VW)(0, ptr)
#define IFA_SV(x, ptr) IFA_CAT(vstore, VW)(x, 0, ptr)
#define IFA_VLOAD_0(p, i) IFA_NLOAD(0, VW, p, i)
#define IFA_VLOAD_1(p, i) IFA_NLOAD(1, VW, p, i)
#define IFA_VLOAD_2(p, i) IFA_NLOAD(2, VW, p, i)
#define IFA_VLOAD_3(p, i) IFA_NLOAD(3, VW, p, i)
#define IFA_VLOAD_8(p, i) ifa_i4_vload((p), (i))
#define IFA_VLOAD_9(p, i) IFA_NLOAD(9, VW, p, i)
#define IFA_VLOAD_10(p, i) IFA_NLOAD(10, VW, p, i)
/* VW int4 values from byte p (ifa_i4_vload: from element index i, even): VW / 2 bytes, each giving its low then
 * its high nibble */
#define ifa_i4_vload(p, i) ifa_i4_vload_b((p) + ((i) >> 1))
#if VW == 2
inline fv ifa_i4_vload_b(__global const uchar *p) {
    const char b = as_char(p[0]);
    return (fv)((float)((char)(b << 4) >> 4), (float)(b >> 4));
}
#else
#if VW == 16
#define IFA_HALF_VW 8
#elif VW == 8
#define IFA_HALF_VW 4
#else
#define IFA_HALF_VW 2
#endif
#if defined(__ENDIAN_LITTLE__) && (VW == 8 || VW == 16)
/* 8 values from one 32-bit word: value e is bits 4e..4e+3, moved to the top of lane e by a per-lane shift and
 * sign-extended by an arithmetic shift back (AVX2's variable shifts; the byte-lane form below went through
 * scalar byte moves at this width: G = 8, D = 64, S = 2048 int4 in L2 520 -> 237 us, docs/performance.md,
 * Zen 3, 2026-11-23) */
inline float8 ifa_i4_word8(uint w) { return convert_float8(as_int8((uint8)w << (uint8)(28, 24, 20, 16, 12, 8, 4, 0)) >> 28); }
#if VW == 8
inline fv ifa_i4_vload_b(__global const uchar *p) { return ifa_i4_word8(as_uint(vload4(0, p))); }
#else
/* 16 values from two 32-bit words. On AVX-512 each word goes to 8 lanes, a per-lane shift brings nibble e to the
 * bottom of lane e, and a 16-entry table lookup (vpermps reads each lane's low 4 bits) gives the signed value as a
 * float at once; elsewhere each word takes the 8-lane form. The byte-lane form below took 8 instructions a vector
 * here (Zen 4, in L3: G = 1, D = 128 0.73x of the time with the table, 0.83x with the shifts; G = 8, D = 64 0.86x
 * and 0.90x; docs/performance.md, Zen 4, 2026-11-29). */
inline fv ifa_i4_vload_b(__global const uchar *p) {
    const uint2 w = as_uint2(vload8(0, p));
#if IFA_CPU && defined(__clang__) && defined(__AVX512F__)
    const uint16 d = (uint16)(w.x, w.x, w.x, w.x, w.x, w.x, w.x, w.x, w.y, w.y, w.y, w.y, w.y, w.y, w.y, w.y);
    return __builtin_ia32_permvarsf512((float16)(0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1),
                                       as_int16(d >> (uint16)(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28)));
#else
    return (float16)(ifa_i4_word8(w.x), ifa_i4_word8(w.y));
#endif
}
#endif
#elif defined(__ENDIAN_LITTLE__)
/* Spread each byte's two nibbles into the two bytes of a 16-bit lane (low nibble in the low byte, so the
 * bytes read in element order on a little-endian device), then sign-extend 4-bit values with (n ^ 8) - 8:
 * element-wise vector operations only, no shuffles. */
inline fv ifa_i4_vload_b(__global const uchar *p) {
    const IFA_CAT(ushort, IFA_HALF_VW) w = IFA_CAT(convert_ushort, IFA_HALF_VW)(IFA_CAT(vload, IFA_HALF_VW)(0, p));
    const IFA_CAT(ushort, IFA_HALF_VW) t = (w & (ushort)0x0F) | ((w & (ushort)0xF0) << (ushort)4);
    const IFA_CAT(char, VW) x = IFA_CAT(as_char, VW)(IFA_CAT(as_uchar, VW)(t) ^ (uchar)8) - (char)8;
    return IFA_CAT(convert_float, VW)(x);
}
#else /* big-endian: interleave the low and high nibbles with a shuffle */
inline fv ifa_i4_vload_b(__global const uchar *p) {
    const IFA_CAT(uchar, IFA_HALF_VW) b = IFA_CAT(vload, IFA_HALF_VW)(0, p);
    const IFA_CAT(char, IFA_HALF_VW) lo = IFA_CAT(as_char, IFA_HALF_VW)(b << (uchar)4) >> (char)4;
    const IFA_CAT(char, IFA_HALF_VW) hi = IFA_CAT(as_char, IFA_HALF_VW)(b) >> (char)4;
#if VW == 16
    const char16 x = shuffle2(lo, hi, (uchar16)(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15));
#elif VW == 8
    const char8 x = shuffle2(lo, hi, (uchar8)(0, 4, 1, 5, 2, 6, 3, 7));
#else
    const char4 x = shuffle2(lo, hi, (uchar4)(0, 2, 1, 3));
#endif
    return IFA_CAT(convert_float, VW)(x);
}
#endif
#endif
#define IFA_VLOAD_(c, p, i) IFA_VLOAD_##c(p, i)
#define IFA_VLOAD(c, p, i) IFA_VLOAD_(c, p, i)
/* a K/V vector at element row + col of p, where int4 halves each part alone (both are even: offsets come in bytes,
 * D is even): a row's byte offset once per row, the column's folded into the load's address, instead of the sum
 * halved for every vector (a lea and a shr of 8 instructions a vector in int4's P.V loop, Zen 3, 2026-11-27) */
#if KV_T == IFA_I4
#define IFA_KV_VLOAD(p, row, col) ifa_i4_vload_b((p) + ((row) >> 1) + ((col) >> 1))
#else
#define IFA_KV_VLOAD(p, row, col) IFA_VLOAD(KV_T, p, (row) + (col))
#endif
/* IFA_VSTORE stores VW floats to an output of dtype code c (0-2) at element index i (ifa_common.cl) */
#define IFA_VSTORE(c, x, p, i) IFA_NSTORE(c, VW, x, p, i)
#define IFA_UNROLL_X _Pragma("unroll")
/* horizontal sum and max (ifa_common.cl's halving reductions) */
#if VW == 16
inline float ifa_hsum(fv a) { return ifa_sum16(a); }
inline float ifa_hmax(fv a) { return ifa_max16(a); }
#elif VW == 8
inline float ifa_hsum(fv a) { return ifa_sum8(a); }
inline float ifa_hmax(fv a) { return ifa_max8(a); }
#elif VW == 4
inline float ifa_hsum(fv a) { const float2 c = a.lo + a.hi; return c.x + c.y; }
inline float ifa_hmax(fv a) { const float2 c = fmax(a.lo, a.hi); return fmax(c.x, c.y); }
#elif VW == 2
inline float ifa_hsum(fv a) { return a.x + a.y; }
inline float ifa_hmax(fv a) { return fmax(a.x, a.y); }
#endif
#endif
/* Key rows per step of the CPU shape's score loop (VW = 16 or 8): each query vector serves IFA_KJ = 4 key
 * rows and the RS x 4 accumulators of a tile of RS <= RS_MAX query rows are reduced together, a transposed
 * reduction whose first levels add whole vectors of two rows' partial sums, so the 4 scores of a query row
 * come out side by side (one float4 store instead of 4 horizontal sums and a scatter). Larger tiles (RB rows)
 * score as several tiles of RS_MAX, reading the 4 key rows again from L1. RS_MAX (plan->score_rows) fits the
 * register file: 4 with AVX-512's 32 registers, 2 with AVX2's 16. Measured: AVX-512, G = 4 to 16 at D = 64
 * and 128 about 10-15 % faster; at D = 256 fp16 G = 16 13 % faster, int8 (antiquant's per-score path) 7 %
 * slower (Zen 4, 2026-11-23), but 0.83-0.94x of the time for int8 and int4 once the step took one vector of
 * each key row (IFA_XS; Zen 4, 2026-11-28), so antiquant takes it at any D on AVX-512 too; AVX2
 * (VW = 8), G = 16 at D = 128 19 % faster, G = 4 and 8 alike, and int8 at D = 128 and 256 (16 and 32 vectors)
 * 9-26 % faster (Zen 3, 2026-11-23). At 16 lanes any D takes it (IFA_XS a divisor of DV): D = 80, 96, 112 and 160
 * at G = 4 and 8 0.78-0.88x of one key row a step for fp16 and int8 (Zen 4, 2026-11-28). float8 keys take
 * it only when one tile holds every row: its tiles convert each key vector again (9 instructions per 8 values),
 * and one key row per step over all rows converts it once (AVX2, one thread in L3, G = 4 / 8 / 16: 19-25 %
 * faster; G = 1 keeps the four-row step; docs/performance.md, Zen 3, 2026-11-23). */
#if (VW == 16 || VW == 8) && !V8
#if RS_MAX >= 1 /* the host passes plan->score_rows */ && (VW == 16 || DV <= 4 || DV % 4 == 0) && (RB <= RS_MAX || RB % RS_MAX == 0) && (KV_T != IFA_E4M3 || RB <= RS_MAX)
#define IFA_KJ 4
#define RS (RB <= RS_MAX ? RB : RS_MAX)
#endif
#endif
#ifndef IFA_KJ
#define IFA_KJ 1
#endif
/* Vectors of each key row per step of the four-key-row score loop. At 16 lanes, K/V other than fp16 take one: with
 * 4, LLVM issued a step's 16 loads and widenings (vpmovsxbd for int8) first and kept them on the stack, and the
 * query vectors too; the spills cost G = 8, D = 128 a fifth of its time in L3 (Zen 4, 2026-11-28: one
 * vector a step 0.80x of the time for int8, 0.84x bf16, 0.87x fp32, 0.92x float8 e5m2, 0.95x int4; D = 256 G = 16
 * bf16 0.82x, e5m2 0.86x; G = 4 and G = 8 at D = 64 level). fp16's widening reads memory itself (vcvtph2ps) and
 * spilled nothing. 8 lanes (16 registers) unmeasured: as before. */
#if VW == 16 && KV_T != IFA_F16
#define IFA_XS 1
#elif VW == 16 /* a divisor of DV, so that the step unrolls (D = 80, 96, 112 at 16 lanes) */
#define IFA_XS (DV % 4 == 0 ? 4 : DV % 3 == 0 ? 3 : DV % 2 == 0 ? 2 : 1)
#else
#define IFA_XS 4
#endif
#if IFA_KJ == 4 && VW == 16
/* the sums of 4 float16 vectors: halves of two vectors side by side, then quarters, then pairs of lanes */
inline float16 ifa_hpair16(float16 a, float16 b) { return (float16)(a.lo, b.lo) + (float16)(a.hi, b.hi); }
inline float4 ifa_hsum_x4(float16 a, float16 b, float16 c, float16 d) {
    const float16 ab = ifa_hpair16(a, b), cd = ifa_hpair16(c, d);           /* a: 0-7, b: 8-15 (c, d alike) */
    const float16 e = (float16)(ab.s0123, ab.s89ab, cd.s0123, cd.s89ab) +
                      (float16)(ab.s4567, ab.scdef, cd.s4567, cd.scdef);      /* a, b, c, d: 4 lanes each */
    const float8 f = e.even + e.odd;
    return f.even + f.odd;
}
/* A whole tile of 4 rows x 4 key rows (RS = 4) reduced together: the 16 vectors to their 16 sums in one vector, by
 * halves, 128-bit quarters, pairs and lanes of two vectors at a time: 15 additions and 30 shuffles where four
 * ifa_hsum_x4 take about 72 operations, 52 of them shuffles (vhaddps among them), which share the FMA pipes. Each
 * level is written as the one x86 shuffle it is (vshuff64x2, vunpck*ps, vunpck*pd on 64-bit lanes): in other forms
 * LLVM merged the levels into masked vpermt2pd chains longer than the sums they replaced. Vector k = 4 x row + key
 * row goes to lanes 0-3 (k = 0-3), 8-11 (4-7), 4-7 (8-11), 12-15 (12-15): t = hpair16(v_k, v_k+8) holds v_k in its
 * low half, u = hquad16(t_k, t_k+4) v_k, v_k+8, v_k+4, v_k+12 in its 128-bit quarters, and the last two levels pair
 * u_0 with u_1 and u_2 with u_3 within each quarter. */
inline float16 ifa_hquad16(float16 t, float16 s) {
    return (float16)(t.s0123, t.s89ab, s.s0123, s.s89ab) + (float16)(t.s4567, t.scdef, s.s4567, s.scdef);
}
inline float16 ifa_hunpack16(float16 a, float16 b) {
    return (float16)(a.s0, b.s0, a.s1, b.s1, a.s4, b.s4, a.s5, b.s5, a.s8, b.s8, a.s9, b.s9, a.sc, b.sc, a.sd, b.sd) +
           (float16)(a.s2, b.s2, a.s3, b.s3, a.s6, b.s6, a.s7, b.s7, a.sa, b.sa, a.sb, b.sb, a.se, b.se, a.sf, b.sf);
}
inline float16 ifa_hshuf16(float16 a, float16 b) {
    const ulong8 x = as_ulong8(a), y = as_ulong8(b);
    return as_float16((ulong8)(x.s0, y.s0, x.s2, y.s2, x.s4, y.s4, x.s6, y.s6)) +
           as_float16((ulong8)(x.s1, y.s1, x.s3, y.s3, x.s5, y.s5, x.s7, y.s7));
}
#define IFA_HSUM_TILE16(d)                                                                                         \
    ifa_hshuf16(ifa_hunpack16(ifa_hquad16(ifa_hpair16(d[0][0], d[2][0]), ifa_hpair16(d[1][0], d[3][0])),           \
                              ifa_hquad16(ifa_hpair16(d[0][1], d[2][1]), ifa_hpair16(d[1][1], d[3][1]))),          \
                ifa_hunpack16(ifa_hquad16(ifa_hpair16(d[0][2], d[2][2]), ifa_hpair16(d[1][2], d[3][2])),           \
                              ifa_hquad16(ifa_hpair16(d[0][3], d[2][3]), ifa_hpair16(d[1][3], d[3][3]))))
/* row rr's 4 sums in IFA_HSUM_TILE16's result */
#define IFA_TILE16_ROW(h, rr) ((rr) == 0 ? (h).s0123 : (rr) == 1 ? (h).s89ab : (rr) == 2 ? (h).s4567 : (h).scdef)
#elif IFA_KJ == 4
/* the same for 4 float8 vectors (AVX2's width): halves side by side, then pairs of lanes */
inline float8 ifa_hpair8(float8 a, float8 b) { return (float8)(a.lo, b.lo) + (float8)(a.hi, b.hi); }
inline float4 ifa_hsum_x4(float8 a, float8 b, float8 c, float8 d) {
    const float8 ab = ifa_hpair8(a, b), cd = ifa_hpair8(c, d);               /* a: 0-3, b: 4-7 (c, d alike) */
    const float8 e = (float8)(ab.s01, ab.s45, cd.s01, cd.s45) + (float8)(ab.s23, ab.s67, cd.s23, cd.s67);
    return e.even + e.odd;
}
/* A whole tile of 2 rows x 4 key rows (RS = 2) reduced together, as IFA_HSUM_TILE16 at 16 lanes: t = hpair8(v_k,
 * v_k+4) holds v_k in its low 128 bits and v_k+4 in its high, then pairs within each 128-bit lane; vector k = 4 x
 * row + key row ends in lane k. 7 additions and 14 shuffles (vperm2f128, vunpck[lh]ps, vunpck[lh]pd) where two
 * ifa_hsum_x4 took about 36 operations (clang-15 for Zen 3). */
inline float8 ifa_hunpack8(float8 a, float8 b) {
    return (float8)(a.s0, b.s0, a.s1, b.s1, a.s4, b.s4, a.s5, b.s5) + (float8)(a.s2, b.s2, a.s3, b.s3, a.s6, b.s6, a.s7, b.s7);
}
inline float8 ifa_hshuf8(float8 a, float8 b) {
    const ulong4 x = as_ulong4(a), y = as_ulong4(b);
    return as_float8((ulong4)(x.s0, y.s0, x.s2, y.s2)) + as_float8((ulong4)(x.s1, y.s1, x.s3, y.s3));
}
#define IFA_HSUM_TILE8(d)                                                                                          \
    ifa_hshuf8(ifa_hunpack8(ifa_hpair8(d[0][0], d[1][0]), ifa_hpair8(d[0][1], d[1][1])),                          \
               ifa_hunpack8(ifa_hpair8(d[0][2], d[1][2]), ifa_hpair8(d[0][3], d[1][3])))
#endif
/* The vector shape loads the query and stores the output VW elements at a time, except where an element
 * needs its own treatment (rotary pairs, the prefix pass's virtual heads, int8 output's post-quant) */
#define IFA_VEC_Q (VW > 1 && !ROPE && !PREFIX)
/* the work-items that share a row's antiquant sum over D in the GPU shapes (WG / R, at least 1) */
#define IFA_AQ_T (WG / R > 0 ? WG / R : 1)
#if IFA_CPU
#define IFA_Q_UNROLL
#else
#define IFA_Q_UNROLL _Pragma("unroll")
#endif
#define IFA_VEC_OUT (VW > 1 && QUANT_OUT == 0)
/* Token-mode value scales in the vector shape fold into the probabilities: sum_j p_j (s_j v_j + s_j o_j) =
 * sum_j (p_j s_j) v_j + sum_j p_j s_j o_j, so the softmax stores p_j s_j, keeps the offsets' share per row
 * (aq_c, rescaled with l) and P.V, the loop that touches every value element, converts without a scale or
 * offset (a scale and offset per row and element cost int4 values a third of their time); aq_c joins every
 * column after the last chunk */
#define IFA_VFOLD (VAQ >= 3 && VW > 1 && !MAX_PASS)
/* Channel-mode value scales in the vector shape leave P.V likewise: sum_j p_j (v_j s + o s) = s sum_j p_j v_j +
 * (o s) l, applied to each column after the last chunk (aq_v holds s and o s), so P.V converts without them */
#define IFA_VCFOLD ((VAQ == 1 || VAQ == 2) && VW > 1 && !MAX_PASS)
/* channel antiquant (modes 1-2) in the vector shape: the scale and offset of VW dims from d, the key's
 * (IFA_AQ_VS/VO) and the value's (IFA_VAQ_VS/VO) */
#if VW > 1 && ANTIQUANT == 1
#define IFA_AQ_VS(d) IFA_VLOAD(AQ_T, aqs, aqs_off + AQ_IDX(0, d))
#if AQ_OFF
#define IFA_AQ_VO(d) IFA_VLOAD(AQ_T, aqo, aqo_off + AQ_IDX(0, d))
#else
#define IFA_AQ_VO(d) ((fv)0.0f)
#endif
#elif VW > 1 && ANTIQUANT == 2
#define IFA_AQ_VS(d) ((fv)AQ_SCALE(0))
#define IFA_AQ_VO(d) ((fv)AQ_OFFSET(0))
#endif
#if VW > 1 && VAQ == 1
#define IFA_VAQ_VS(d) IFA_VLOAD(VAQ_T, vaqs, vaqs_off + VAQ_IDX(0, d))
#if VAQ_OFF
#define IFA_VAQ_VO(d) IFA_VLOAD(VAQ_T, vaqo, vaqo_off + VAQ_IDX(0, d))
#else
#define IFA_VAQ_VO(d) ((fv)0.0f)
#endif
#elif VW > 1 && VAQ == 2
#define IFA_VAQ_VS(d) ((fv)VAQ_SCALE(0))
#define IFA_VAQ_VO(d) ((fv)VAQ_OFFSET(0))
#endif

/* Software prefetch (PREFETCH > 0, the CPU shape): while a chunk's scores are computed, each row asks for
 * its key row PREFETCH positions ahead and for its own value row, so that the K and V streams arrive while
 * the core computes instead of when P.V and the next chunk stall on them (the hardware prefetchers alone
 * left D = 128, G = 4 at half the read bandwidth). PV_PREFETCH 1: while P.V reads the chunk's values (from
 * cache by then), it asks for the next chunk's key lines, so the memory does not idle between the two passes
 * (G = 1, one AVX-512 thread: D = 64 1.8-2.2 -> 1.2-1.4 ms, D = 128 1.9-2.0 -> 1.5-1.8); the lines are spread
 * evenly over P.V's register blocks, one or a few per value row, in the order the next chunk reads them
 * (all of them from the first block: 5-25 % slower on AVX2, most where all KV heads share a work-group);
 * the planner leaves it off where a KV head has many query rows (slower on AVX2). A hint only: it never
 * faults and changes no result. Only positions the work-group reads anyway are asked for (no unused page
 * slot or padding). */
#ifndef PREFETCH
#define PREFETCH 0
#endif
#ifndef PV_PREFETCH
#define PV_PREFETCH 0
#endif
#define IFA_PV_PF (PREFETCH > 0 && PV_PREFETCH && !MAX_PASS)
#if PREFETCH > 0
#if KV_T == IFA_I4
#define IFA_ROW_BYTES (MH * HEAD_DIM / 2)
#define IFA_BYTE_ADDR(p, i) ((__global const char *)(p) + ((i) >> 1))
#else
#define IFA_ROW_BYTES (MH * HEAD_DIM * (int)sizeof(kv_store))
#define IFA_BYTE_ADDR(p, i) ((__global const char *)((p) + (i)))
#endif
#if defined(__clang__) && IFA_CPU /* the host's -D IFA_CPU: see program_cache.c */
#define IFA_PREFETCH_LINE(a) __builtin_prefetch((a), 0, 2)
#else
#define IFA_PREFETCH_LINE(a) prefetch((a), 64)
#endif
/* the 64-byte lines of one KV row slice: IFA_LR of them from element index i. Unrolled where one register tile
 * holds a work-group's query rows (RB <= RS_MAX: G <= 4 at 16 lanes, G <= 2 at 8): a key row's score step is short
 * there, and a loop's 3 instructions a line beside each prefetch showed (in L3 G = 1 and 4 0.90-0.96x of the time,
 * cold level; Zen 4, 2026-11-29). A loop where they take several tiles (G >= 8 at 16 lanes): without P.V's
 * next-chunk prefetch (PV_PREFETCH 0) the unrolled lines cost the cold D = 256 G = 16 rows 1.23-1.27x the loop's
 * time (fp16, bf16; P.V's value loads stalled twice as often), G = 8 and D = 128 G = 16 1.02-1.07x; with it (the
 * AVX-512 row's plans since) G = 8 1.04x, G = 16 level; level in L3 (Zen 4, 2026-11-29; AVX2 unmeasured) */
#define IFA_LR ((IFA_ROW_BYTES + 63) / 64)
#if RB <= RS_MAX
#define IFA_LR_UNROLL _Pragma("unroll")
#else
#define IFA_LR_UNROLL
#endif
#define IFA_PREFETCH_ROW(p, i)                                                                                     \
    do {                                                                                                          \
        __global const char *a_ = IFA_BYTE_ADDR(p, i);                                                            \
        IFA_LR_UNROLL for (int l_ = 0; l_ < IFA_LR; ++l_) IFA_PREFETCH_LINE(a_ + l_ * 64);                        \
    } while (0)
/* SPREAD_PF with all KV heads per work-group (MH > 1) and the four-key-row step: the first register tile of
 * each head asks for its share of the step's lines (the 4 key rows PREFETCH ahead and the 4 value rows, in
 * address order, IFA_SLICE_N lines of each) among its own FMAs, instead of the step asking for the whole rows
 * in one burst before the tiles: at D = 128, N_kv = 8 fp16 that burst was 2 x 128 prefetches and stalled on
 * the fill buffers for a quarter of the kernel's time (the Xeon, one thread in L3; docs/performance.md,
 * Xeon, 2026-11-25). The step's last rows of a chunk (fewer than 4) keep the burst. */
#ifndef SPREAD_PF
#define SPREAD_PF 0
#endif
#define IFA_SLICE_PF (SPREAD_PF && MH > 1 && IFA_KJ > 1)
#define IFA_SLICE_N ((IFA_KJ * IFA_LR + MH - 1) / MH)
/* P.V's next-chunk prefetch: register blocks per row block (IFA_NBX) and in all (IFA_PV_NB), and the lines
 * each block asks for per value row (IFA_LK) so that the blocks cover a chunk's rows */
#define IFA_NBX ((DVV + XB - 1) / XB)
#define IFA_PV_NB (((R + PV_RB - 1) / PV_RB) * IFA_NBX)
#define IFA_LK ((IFA_LR + IFA_PV_NB - 1) / IFA_PV_NB)
#endif
