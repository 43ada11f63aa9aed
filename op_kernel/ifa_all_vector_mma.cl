/* The all-vector kernel's matrix shapes (MMA 1 to 7; ifa_all_vector_options.cl says where this file stands in the
 * program): their sizes, operand conversions and warp matrix products. */
/* MMA (the matrix shape, beside the lane shape): each warp of 32 work-items takes 16 key rows a step and computes
 * the step's scores and P.V as warp matrix products (m16n8k16: 16 query rows by 8 key rows or value columns over
 * 16 terms, fp16 inputs, fp32 sums), the query rows as the 16-row side (R <= 16, rows past R zero). A quad of
 * lanes reads a key row and its value row, a quarter each in 16-byte loads, interleaved: lane t's load u is the
 * row's 16-byte chunk 4u + t, so each load instruction of the quad covers 64 contiguous bytes (on NVIDIA a warp's
 * load then touches one 128-byte line a row instead of D / 64 of them: D = 256 loaded 4 lines for each 128 bytes
 * used); the terms of the products are the lane's elements in an order both operands share (IFA_KWCOL), so no
 * data moves between lanes for the
 * scores, and one 8 x 8 transpose per value tile (movmatrix) gives P.V its operand. Inputs are exact: fp16 query
 * (no RoPE, no antiquant: qs holds the stored values) and fp16 K/V; each product of two fp16 values is exact in
 * fp32. The probabilities enter P.V as two fp16 parts (p = hi + lo, both products accumulated): about 22 bits of
 * each, where one fp16 part would keep 11. Lane (g, t) = (lane / 4, lane % 4) holds scores and accumulators of
 * rows g and g + 8; its accumulator columns are IFA_KWCOL(j) and + 1 of value tile j (its word j's columns).
 * Warp matrix instructions through inline PTX on NVIDIA (IFA_NV); elsewhere the same fragments go through local
 * memory, one barrier pair per product (the tests run the layout on every CI device).
 * MMA 2 (lean) reads the query's fragments from local memory at each step and loads the value rows after the
 * scores: fewer registers live at once (NVIDIA's compiler gave MMA 1 180 at G = 4, D = 128: 2 work-groups of
 * 128 a multiprocessor).
 * MMA 3 (transposed, R <= 8) computes S^T = K Q^T and O^T = V^T P^T instead: the 16 keys of a step and 16 value
 * columns are the 16-row side and the query rows the 8-column side, so at G <= 8 half as many products (no 16-row
 * side half empty), half the accumulators (D / 4 a lane) and D up to 256. Lane (g, t) reads key rows g and g + 8
 * (a quarter each, as above) and value rows 2t, 2t + 1, 2t + 8, 2t + 9 of the step, an eighth each (load u of a
 * row the 8-element chunk 8u + g: the 8 lanes of a row cover 64 or 128 contiguous bytes): pairs of those rows'
 * words are the value operand's words (a byte permute, no transpose), value tile i's rows g and g + 8 being
 * columns IFA_VWCOL(i) and + 1. Its scores are keys g and g + 8 of query rows 2t and
 * 2t + 1 (maxima and sums over g: 3 shuffles); two transposes a part turn them into P^T's operand. int8 token
 * scales (antiquant 3 to 5) fit it: the key's scale is a factor on its keys' scores, the value's folds into P^T
 * (p x scale, each row by a power of two a step). MMA 4 is its lean variant (as 2 is 1's), which MMA 3 becomes
 * beyond D = 128; MMA 5 loads each step's rows during the step before. */
#if MMA
#define IFA_NW (WG / 32)         /* warps */
#define IFA_KW (HEAD_DIM / 8)    /* their 32-bit words (two fp16 each) */
#define IFA_KS (HEAD_DIM / 16)   /* 16-term steps of a score tile */
#define IFA_DT (HEAD_DIM / 8)    /* 8-column tiles of P.V */
#define IFA_VT (HEAD_DIM / 16)   /* MMA 3, 4: 16-column value tiles, and the words of a lane's eighth of a value row */
/* the columns of a lane's K/V words: IFA_KE elements a 16-byte load (8 fp16, 16 int8), so key (and MMA 1, 2 value)
 * word j of quad lane mt4 holds columns IFA_KWCOL(j) and + 1, from load j / (IFA_KE / 2), the row's chunk
 * 4 (j / (IFA_KE / 2)) + mt4; the query's step s2 takes the 4 columns from IFA_KWCOL(2 s2), the terms of the key
 * words 2 s2 and 2 s2 + 1. MMA 3 to 5: value word i of quad row mg (loads of 8 elements) holds columns IFA_VWCOL(i)
 * and + 1, from the row's chunk 8 (i / 4) + mg. */
#define IFA_KE (KV_T == IFA_I4 ? 32 : IFA_KV1 ? 16 : 8)
#define IFA_KWCOL(j) (IFA_KE * (4 * ((j) / (IFA_KE / 2)) + mt4) + 2 * ((j) % (IFA_KE / 2)))
#define IFA_VWCOL(i) (8 * (8 * ((i) / 4) + mg) + 2 * ((i) % 4))
/* MMA 7, the latent tile (DeepSeek's MLA: D = 576, D_v = 512; below): its own rule */
#define IFA_MLA (MMA == 7)
#if IFA_MLA && (VW != 1 || V8 || KTILE || LANES || MH != 1 || (KV_T != IFA_F16 && KV_T != IFA_BF16 && !IFA_KV1) ||   \
                (Q_T != IFA_F16 && Q_T != IFA_BF16) || (ANTIQUANT != 0 && ANTIQUANT != 2) ||                        \
                (VAQ != 0 && VAQ != 2) || (!IFA_KV1 && (ANTIQUANT || VAQ)) || WG != 128 || R > 16 ||                \
                HEAD_DIM % 64 != 0 || VDIM % 256 != 0 || VDIM > HEAD_DIM || MAX_PASS || LANE_QL || PREFIX)
#error "MMA 7 needs a 16-bit query, 16-bit or one-byte K/V (one-byte: per-tensor scales or none), no prefix pass, 4 warps, up to 16 rows, D a multiple of 64 and D_v of 256, D_v <= D"
#endif
#if !IFA_MLA && (VW != 1 || V8 || KTILE || LANES || MH != 1 ||                                                        \
    (KV_T != IFA_F16 && KV_T != IFA_BF16 && !IFA_KV1 && KV_T != IFA_I4) || (Q_T != IFA_F16 && Q_T != IFA_BF16) ||   \
    VDIM != HEAD_DIM || WG % 32 != 0 || MAX_PASS || MMA > 6 || HEAD_DIM % (4 * IFA_KE) != 0 ||                     \
    (MMA >= 3 ? HEAD_DIM % 64 != 0 || HEAD_DIM > 256 || R > 8 : HEAD_DIM > 128 || R > 16 || ANTIQUANT > 2 || VAQ > 2))
#error "the matrix shape needs a 16-bit Q, 16-bit, int8, float8 or int4 K/V, D_v = D, warps of 32; D a multiple of 32 (one-byte K/V: 64, int4: 128) up to 128, R <= 16 and scales per channel or per tensor (MMA 3 to 5: D also a multiple of 64, up to 256, R <= 8, any scales)"
#endif
/* IFA_MMA_BF: bf16 K/V, so the products' operands are bf16 (the same fragments; fp16 for fp16 and int8 K/V).
 * IFA_MMA_QLO: the query in qs is not its stored value in the operands' type (rotated, the key's per-channel scale
 * folded in, or another 16-bit type; a per-tensor scale is not folded in the matrix shapes: IFA_AQ_FOLD), so it
 * enters the score products as two parts (hi, and what hi missed), each row first brought by a power of two to a largest element below 2^14 (fp16 holds it; the scores are scaled back
 * exactly) */
#define IFA_MMA_BF (KV_T == IFA_BF16)
#define IFA_MMA_QLO (ROPE || ANTIQUANT == 1 || Q_T != (IFA_MMA_BF ? IFA_BF16 : IFA_F16))
/* ifa_prmt(a, b, s): PTX's byte permute (prmt.b32, the default mode): byte i of the result is byte s_i of the
 * eight bytes {b, a} (a's are 0-3, b's 4-7), s_i the low 3 bits of nibble i of s (bit 3, which replicates a
 * byte's sign, is not used here). One instruction on NVIDIA for what masks, shifts and ors spread over several,
 * which ptxas does not fuse into one (sm_90a, int8 at 16,32,8,128,8192: the fused kernel 3544 -> 3352 instructions;
 * the value operands' 16-bit halves, where it fused part of it: fp16 2664 -> 2632 at the same shape);
 * elsewhere the same bytes by shifts, so that the CPU's runs of these shapes check the selectors. */
#if IFA_NV
/* a function f(a, b, c) of one three-operand PTX instruction on 32-bit registers */
#define IFA_PTX3(f, op)                                                                                             \
    inline uint f(uint a, uint b, uint c) {                                                                         \
        uint d;                                                                                                     \
        asm(op " %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));                                             \
        return d;                                                                                                   \
    }
IFA_PTX3(ifa_prmt, "prmt.b32")
#else
inline uint ifa_prmt(uint a, uint b, uint s) {
    const ulong x = ((ulong)b << 32) | a;
    uint d = 0;
    for (int i = 0; i < 4; ++i) d |= (uint)((x >> (8 * ((s >> (4 * i)) & 7u))) & 0xffu) << (8 * i);
    return d;
}
#endif
/* two floats as the operands' 16-bit type (round to nearest even), lo in the low half: an f16x2 or bf16x2 operand;
 * and back (ifa_mma_qf: rows r0 and r1's 4 columns as a query fragment, below) */
#if IFA_MMA_BF
#if IFA_NV
inline uint ifa_h2(float lo, float hi) {
    uint u;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(u) : "f"(hi), "f"(lo));
    return u;
}
#else
inline uint ifa_h2(float lo, float hi) { return (uint)ifa_f32_to_bf16(lo) | ((uint)ifa_f32_to_bf16(hi) << 16); }
#endif
inline float2 ifa_f2(uint u) { return (float2)(as_float(u << 16), as_float(u & 0xffff0000u)); }
#elif IFA_NV
inline uint ifa_h2(float lo, float hi) {
    uint u;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(u) : "f"(hi), "f"(lo));
    return u;
}
inline float2 ifa_f2(uint u) {
    float lo, hi;
    asm("{.reg .f16 l, h;\n\tmov.b32 {l, h}, %2;\n\tcvt.f32.f16 %0, l;\n\tcvt.f32.f16 %1, h;}" : "=f"(lo), "=f"(hi) : "r"(u));
    return (float2)(lo, hi);
}
#else
inline uint ifa_h2(float lo, float hi) {
    ushort2 h;
    vstore_half2_rte((float2)(lo, hi), 0, (__private half *)&h);
    return as_uint(h);
}
inline float2 ifa_f2(uint u) { return vload_half2(0, (const __private half *)&u); }
#endif
inline float ifa_add(float a, float b) { return a + b; }
/* one butterfly step: x = op(x, x of the lane whose index differs in the bits of o), in place */
#define IFA_XSTEP(x, op, o)                                                                                        \
    do {                                                                                                           \
        float y_;                                                                                                  \
        IFA_QXOR(y_, (x), (o));                                                                                    \
        (x) = op((x), y_);                                                                                         \
    } while (0)
/* x over the lane's quad (the 4 lanes that share its rows) by op: fmax or ifa_add, in place */
#define IFA_QUAD(x, op)                                                                                            \
    do {                                                                                                           \
        IFA_XSTEP(x, op, 1);                                                                                       \
        IFA_XSTEP(x, op, 2);                                                                                       \
    } while (0)
/* 8 floats (a, then b) as a 16-row operand's 4 words, in the operands' type; ifa_frag_lo: what that operand (h)
 * missed of them, as another (the second of two parts) */
inline uint4 ifa_frag_hi(float4 a, float4 b) {
    return (uint4)(ifa_h2(a.x, a.y), ifa_h2(a.z, a.w), ifa_h2(b.x, b.y), ifa_h2(b.z, b.w));
}
inline uint4 ifa_frag_lo(float4 a, float4 b, uint4 h) {
    return ifa_frag_hi(a - (float4)(ifa_f2(h.x), ifa_f2(h.y)), b - (float4)(ifa_f2(h.z), ifa_f2(h.w)));
}
/* 4 columns of rows r0 (q0) and r1 (q1) as a step's query fragment: columns 2t, 2t + 1 of both rows, then 2t + 8, 9;
 * ifa_mma_ql: what that fragment (h) missed of them, as another */
inline uint4 ifa_mma_qf(float4 q0, float4 q1) { return ifa_frag_hi((float4)(q0.xy, q1.xy), (float4)(q0.zw, q1.zw)); }
inline uint4 ifa_mma_ql(float4 q0, float4 q1, uint4 h) {
    return ifa_frag_lo((float4)(q0.xy, q1.xy), (float4)(q0.zw, q1.zw), h);
}
/* 2^-e for a row whose largest magnitude is m: m x 2^-e < 2^14 (1 for m = 0; e >= -100 keeps 2^-e finite) */
inline float ifa_mma_qscale(float m) {
    int e;
    (void)frexp(m, &e);
    return m > 0.0f ? ldexp(1.0f, 14 - max(e, -100)) : 1.0f;
}
#if IFA_KV1 || KV_T == IFA_I4
/* x - c and x * c on two fp16 pairs (f16x2 words), rounded to nearest: one instruction on NVIDIA; elsewhere through
 * floats, exact where the conversions below use them */
#if IFA_NV
inline uint ifa_h2_sub(uint x, uint c) {
    uint y;
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(y) : "r"(x), "r"(c));
    return y;
}
inline uint ifa_h2_mul(uint x, uint c) {
    uint y;
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(y) : "r"(x), "r"(c));
    return y;
}
#else
inline uint ifa_h2_sub(uint x, uint c) {
    const float2 f = ifa_f2(x), g = ifa_f2(c);
    return ifa_h2(f.x - g.x, f.y - g.y);
}
inline uint ifa_h2_mul(uint x, uint c) {
    const float2 f = ifa_f2(x), g = ifa_f2(c);
    return ifa_h2(f.x * g.x, f.y * g.y);
}
#endif
#endif
#if IFA_KV1
/* IFA_B4H(a, b, w): 4 one-byte values (w) as two fp16x2 words, exactly: bytes 0, 1 into a, 2, 3 into b (fp16 holds
 * every int8 and float8 value) */
/* IFA_B4HI(a, b, w, f): bytes 0, 1 of w each into the high byte of a 16-bit half of a (code << 8), bytes 2, 3 of b,
 * each word then through f (the float8 types: e5m2's word as it is, f empty; e4m3fn's through ifa_e4m3_hb) */
#define IFA_B4HI(a, b, w, f)                                                                                        \
    do {                                                                                                            \
        const uint u_ = (w);                                                                                        \
        (a) = f(ifa_prmt(u_, 0u, 0x1404u));                                                                         \
        (b) = f(ifa_prmt(u_, 0u, 0x3424u));                                                                         \
    } while (0)
#if KV_T == IFA_I8
/* Each byte biased by 128 is the low mantissa of an fp16 in [1024, 1280) (0x6400 | byte: a byte permute puts 0x64
 * above it), and 1152 (0x6480) off that is the int8 */
#define IFA_B4H(a, b, w)                                                                                            \
    do {                                                                                                            \
        const uint u_ = (w) ^ 0x80808080u;                                                                          \
        (a) = ifa_h2_sub(ifa_prmt(u_, 0x64646464u, 0x4140u), 0x64806480u);                                          \
        (b) = ifa_h2_sub(ifa_prmt(u_, 0x64646464u, 0x4342u), 0x64806480u);                                          \
    } while (0)
#elif KV_T == IFA_E5M2
/* e5m2 is the upper byte of the binary16 of the same value (infinities and NaNs included) */
#define IFA_B4H(a, b, w) IFA_B4HI(a, b, w, )
#elif IFA_NV && F8CVT
/* e4m3fn by the card's own conversion (F8CVT: the plan's mma_cvt; sm_89 and later): each 16-bit half's two codes
 * to an f16x2 (the low byte to the low fp16), exact, NaN codes to NaN. The word's halves taken apart inside the asm
 * (mov.b32 {l, h}): ptxas reads a register's halves in place, where the shift and narrowing outside it cost the step
 * 31 shifts (tools/sass_hist.py --core, 16,32,8,128,8192: a step 404 -> 364 instructions) */
inline uint2 ifa_e4m3x4_h2(uint x) {
    uint lo, hi;
    asm("{\n\t.reg .b16 l, h;\n\tmov.b32 {l, h}, %2;\n\tcvt.rn.f16x2.e4m3x2 %0, l;\n\tcvt.rn.f16x2.e4m3x2 %1, h;\n\t}"
        : "=r"(lo), "=r"(hi)
        : "r"(x));
    return (uint2)(lo, hi);
}
#define IFA_B4H(a, b, w)                                                                                            \
    do {                                                                                                            \
        const uint2 h_ = ifa_e4m3x4_h2(w);                                                                          \
        (a) = h_.x;                                                                                                 \
        (b) = h_.y;                                                                                                 \
    } while (0)
#else
/* e4m3fn: y holds two codes, each in the high byte of its 16-bit half (IFA_B4HI's permute, as e5m2's). Each
 * code's sign kept at bit 15 and its exponent and mantissa one place lower (bits 7-13) make the binary16 of the
 * value x 2^-8, for normal and subnormal codes alike (a float8 subnormal is a binary16 subnormal); x 256 in fp16 is
 * exact. A NaN code (0x7f, 0xff: bits 7-13 all ones, 480 so far, beyond float8's 448) takes bit 14 from the carry
 * of + 0x80, which no other code reaches: the binary16 NaN's exponent and a mantissa (ifa_common.cl's
 * ifa_e4m3_to_f32_n does the same on CPUs). Checked for every pair of codes in both halves against the format's
 * definition. A permute, a shift, two logic ops, an add, a logic op and the multiply a word: ptxas (sm_90a,
 * 16,32,8,128,8192, tools/sass_hist.py --core) a step 875 -> 580 instructions and 180 -> 154 registers (3 work-groups
 * a multiprocessor instead of 2) against masks and shifts per code, whose NaN took a multiply */
inline uint ifa_e4m3_hb(uint y) {
    const uint h = (y & 0x80008000u) | ((y >> 1) & 0x3f803f80u);
    return ifa_h2_mul(h ^ ((h + 0x00800080u) & 0x40004000u), 0x5c005c00u /* 256 */);
}
#define IFA_B4H(a, b, w) IFA_B4HI(a, b, w, ifa_e4m3_hb)
#endif
#if IFA_MLA
/* the latent tile's one-byte K/V: 8 raw bytes as 4 operand words, 4 as 2 (IFA_L7_W8, IFA_L7_W4) */
inline uint4 ifa_l7_w8(uint2 r) {
    uint4 w;
    IFA_B4H(w.x, w.y, r.x);
    IFA_B4H(w.z, w.w, r.y);
    return w;
}
inline uint2 ifa_l7_w4(uint r) {
    uint2 w;
    IFA_B4H(w.x, w.y, r);
    return w;
}
#endif
#endif
#if KV_T == IFA_I4
/* IFA_N8H(w0, w1, w2, w3, x): 8 int4 (x, low nibble first) as four fp16x2 words, exactly: elements 0, 1 into w0 ..
 * 6, 7 into w3. As int8's: each nibble biased by 8 (the exclusive or) is the low mantissa of an fp16 in [1024, 1040)
 * (0x6400 | nibble), and 1032 off that is the int4. Byte i holds both elements of word i: a byte permute copies it
 * into both halves, a mask keeps the low nibble in the low half and the high nibble, 16 times its value, in the high
 * half (0x6400 | nibble << 4 = 1024 + 16 n), and one f16x2 multiply-add takes (x - 1032, x / 16 - 72) (exact: whole
 * numbers in [-8, 8)): on NVIDIA a permute, a logic op and the multiply-add a word (ptxas, sm_90a, 16,32,8,128,8192:
 * the fused kernel's 64 words 72 instructions fewer than by shifts and masks). */
#if IFA_NV
IFA_PTX3(ifa_h2_fma, "fma.rn.f16x2")
#else
inline uint ifa_h2_fma(uint x, uint a, uint c) {
    const float2 f = ifa_f2(x), g = ifa_f2(a), h = ifa_f2(c);
    return ifa_h2(fma(f.x, g.x, h.x), fma(f.y, g.y, h.y));
}
#endif
/* word i of 8 nibbles u (biased): (1, 1/16) and (-1032, -72) as f16x2 */
#define ifa_i4_word(u, i) ifa_h2_fma((ifa_prmt((u), 0u, 0x4040u + 0x101u * (i)) & 0x00f0000fu) | 0x64006400u,          \
                                     0x2c003c00u, 0xd480e408u)
#define IFA_N8H(w0, w1, w2, w3, x)                                                                                  \
    do {                                                                                                            \
        const uint u_ = (x) ^ 0x88888888u;                                                                          \
        (w0) = ifa_i4_word(u_, 0);                                                                                  \
        (w1) = ifa_i4_word(u_, 1);                                                                                  \
        (w2) = ifa_i4_word(u_, 2);                                                                                  \
        (w3) = ifa_i4_word(u_, 3);                                                                                  \
    } while (0)
#endif
#if IFA_NV
/* the operands' types in the instruction's name */
#if IFA_MMA_BF
#define IFA_MMA_AB "bf16.bf16.f32"
#else
#define IFA_MMA_AB "f16.f16.f32"
#endif
/* d = a (16 x 16, row) x b (16 x 8, col) + c: a in 4 f16x2 words, b in 2, c and d 4 floats (PTX's fragments) */
inline float4 ifa_mma(float4 c, uint4 a, uint2 b) {
    float d0, d1, d2, d3;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." IFA_MMA_AB " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%10, %11, %12, %13};"
                 : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                 : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b.x), "r"(b.y), "f"(c.x), "f"(c.y), "f"(c.z), "f"(c.w));
    return (float4)(d0, d1, d2, d3);
}
/* the warp's 8 x 8 fp16 matrix (lane (g, t): row g, columns 2t and 2t + 1) transposed, in the same fragment */
inline uint ifa_movt(uint x) {
    uint y;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(y) : "r"(x));
    return y;
}
/* x of the lane whose index differs in the bits of o */
inline float ifa_mxor(float x, int o) {
    uint y;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(y) : "r"(as_uint(x)), "r"(o));
    return as_float(y);
}
/* whether c holds in any lane of the warp (vote.sync.any): a condition that every lane branches on alike */
inline int ifa_warp_any(int c) {
    uint r;
    asm volatile("{\n\t.reg .pred p, q;\n\tsetp.ne.s32 p, %1, 0;\n\tvote.sync.any.pred q, p, 0xffffffff;\n\t"
                 "selp.u32 %0, 1, 0, q;\n\t}"
                 : "=r"(r)
                 : "r"(c));
    return (int)r;
}
#define IFA_MMA(c, a, b) (c) = ifa_mma((c), (a), (b))
#define IFA_MMA_FENCE asm volatile("" ::: "memory")
#define IFA_MOVT(y, x) (y) = ifa_movt(x)
#define IFA_QXOR(y, x, o) (y) = ifa_mxor((x), (o))
#define IFA_MMA_UNROLL _Pragma("unroll")
#else
/* the same products through the warp's scratch in local memory (ms: 16 x 16 + 16 x 8 floats a warp, mw: 64 words);
 * every work-item of the group calls them together (barriers) */
/* the loops over a step's products stay loops here: unrolled, their barriers would multiply PoCL's compile time */
#define IFA_MMA_UNROLL _Pragma("nounroll")
/* each work-item on its own (the branch it guards holds no barrier) */
#define ifa_warp_any(c) (c)
#define IFA_MMA(c, a, b) (c) = ifa_mma_l((c), (a), (b), ms + wp * 384, lane)
#define IFA_MMA_FENCE
#define IFA_MOVT(y, x) (y) = ifa_movt_l((x), mw + wp * 64, lane)
#define IFA_QXOR(y, x, o) (y) = ifa_qxor_l((x), (o), (__local float *)(mw + wp * 64), lane)
inline float4 ifa_mma_l(float4 c, uint4 a, uint2 b, __local float *m, int lane) {
    const int g = lane >> 2, t = lane & 3;
    __local float *A = m, *B = m + 256; /* A[row][k], B[k][col] */
    float2 x = ifa_f2(a.x), y = ifa_f2(a.y), z = ifa_f2(a.z), w = ifa_f2(a.w), u = ifa_f2(b.x), v = ifa_f2(b.y);
    A[g * 16 + 2 * t] = x.x, A[g * 16 + 2 * t + 1] = x.y;
    A[(g + 8) * 16 + 2 * t] = y.x, A[(g + 8) * 16 + 2 * t + 1] = y.y;
    A[g * 16 + 2 * t + 8] = z.x, A[g * 16 + 2 * t + 9] = z.y;
    A[(g + 8) * 16 + 2 * t + 8] = w.x, A[(g + 8) * 16 + 2 * t + 9] = w.y;
    B[(2 * t) * 8 + g] = u.x, B[(2 * t + 1) * 8 + g] = u.y;
    B[(2 * t + 8) * 8 + g] = v.x, B[(2 * t + 9) * 8 + g] = v.y;
    barrier(CLK_LOCAL_MEM_FENCE);
    float4 d = c;
    for (int k = 0; k < 16; ++k) {
        d.x = fma(A[g * 16 + k], B[k * 8 + 2 * t], d.x);
        d.y = fma(A[g * 16 + k], B[k * 8 + 2 * t + 1], d.y);
        d.z = fma(A[(g + 8) * 16 + k], B[k * 8 + 2 * t], d.z);
        d.w = fma(A[(g + 8) * 16 + k], B[k * 8 + 2 * t + 1], d.w);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return d;
}
inline uint ifa_movt_l(uint x, __local uint *m, int lane) {
    const int g = lane >> 2, t = lane & 3;
    m[g * 4 + t] = x; /* row g, columns 2t and 2t + 1 */
    barrier(CLK_LOCAL_MEM_FENCE);
    /* row g of the transpose: column g of rows 2t and 2t + 1 */
    const uint r0 = m[(2 * t) * 4 + g / 2], r1 = m[(2 * t + 1) * 4 + g / 2];
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint sh = (uint)(g & 1) * 16u;
    return ((r0 >> sh) & 0xffffu) | (((r1 >> sh) & 0xffffu) << 16);
}
inline float ifa_qxor_l(float x, int o, __local float *m, int lane) {
    m[lane] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    const float y = m[lane ^ o];
    barrier(CLK_LOCAL_MEM_FENCE);
    return y;
}
#endif
#endif
