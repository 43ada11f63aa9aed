/* The all-vector kernel's lane shape (LANES, LANE_SC) and key tile (KTILE), and what the GPU shapes share: e^x by
 * the exp2 unit, 8 K/V elements as loaded (ifa_all_vector_options.cl says where this file stands in the program). */
/* LANES (the lane shape, a GPU shape beside the work-group shape's phases; LANES = key rows per lane group and step):
 * each key row is read by D / 8 consecutive work-items, a lane group, 8 elements each (16 bytes of fp16: a warp's
 * load covers whole rows), which hold 8 columns of every query row in registers, reduce each row's dot product among
 * themselves (warp shuffles on NVIDIA, IFA_NV; local memory elsewhere) and run their own online softmax over
 * their rows, P.V on the same 8 columns of the same rows in registers: no chunk, no barrier per chunk on NVIDIA.
 * The WG / IFA_LN groups take LANES rows each of a step's (WG / IFA_LN) x LANES consecutive rows, and merge
 * their maxima, sums and accumulators through local memory once, at the end. Any K/V type whose rows start at
 * multiples of 16 bytes (the host checks; a lane loads 16 bytes of 16-bit K/V, 8 of one-byte, 4 of int4, 32 of
 * fp32), D a multiple of 8 (IFA_LN lanes, D / 8 up to a power of two, more than one chunk a lane past 256),
 * D_v <= D. LANE_PF 1:
 * each step loads the next step's rows before its own arithmetic (their latency behind the math). */
#if LANES
/* lanes per key row: D / 8 up to the next power of two (the shuffles' butterfly and a warp's aligned runs need
 * one), at most a warp's 32; past 256 columns (D = 512, MLA's 576) a lane takes IFA_LCK chunks of 8 key columns
 * (IFA_LCV of value columns), IFA_LW columns apart, so that each load of the group still covers whole runs of a row.
 * Where D is not IFA_LCK x IFA_LW (D = 80, 96, 112: Phi-2's and Phi-3's heads; 576), the chunks past D (IFA_LPAD)
 * load no key and add zero partial dot products: as many loads as D / 8 chunks. */
#define IFA_LN (HEAD_DIM <= 8 ? 1 : HEAD_DIM <= 16 ? 2 : HEAD_DIM <= 32 ? 4 : HEAD_DIM <= 64 ? 8 : HEAD_DIM <= 128 ? 16 : 32)
#define IFA_LW (IFA_LN * 8)
#define IFA_LCK ((HEAD_DIM + IFA_LW - 1) / IFA_LW)
#define IFA_LCV ((VDIM + IFA_LW - 1) / IFA_LW)
#define IFA_LPAD (IFA_LCK * IFA_LW != HEAD_DIM)
#define IFA_NG (WG / IFA_LN) /* lane groups */
#if VW != 1 || V8 || KTILE || MH != 1 || HEAD_DIM % 8 != 0 || VDIM % 8 != 0 || VDIM > HEAD_DIM || WG % IFA_LN != 0
#error "the lane shape needs VW = 1, one KV head per group, D a multiple of 8 (lanes a power of two dividing WG), D_v <= D"
#endif
#endif
/* LANE_SC (with LANES): a step's IFA_ST = R x LANES dot products, sum s = r x LANES + u for query row r and key row
 * u, are summed by a transposing butterfly: at each lane bit a lane keeps the half of its sums its bit selects
 * and adds its partner's partials of that half, so that log2(D / 8) exchanges leave IFA_SOWN consecutive sums
 * from s0 in each lane (IFA_SREP lanes hold the same ones where there are fewer sums than lanes): 15 shuffles
 * for 16 sums where the plain butterfly takes 64. A lane scores and exponentiates its own sums only (one query
 * row's), the row's max comes from the IFA_SROWL lanes that share the row, and the probabilities and each row's
 * rescale reach every lane by broadcast for P.V, which is unchanged. Each lane keeps its row's max and its own
 * part of the row's sum; they meet after the loop. */
#if LANE_SC
#define IFA_ST (R * LANES)
#define IFA_SOWN (IFA_ST > IFA_LN ? IFA_ST / IFA_LN : 1)
#define IFA_SREP (IFA_ST < IFA_LN ? IFA_LN / IFA_ST : 1)
#define IFA_SROWL (LANES / IFA_SOWN)
#define IFA_LOG_LN (IFA_LN >= 32 ? 5 : IFA_LN >= 16 ? 4 : IFA_LN >= 8 ? 3 : IFA_LN >= 4 ? 2 : IFA_LN >= 2 ? 1 : 0)
/* the group lane that holds sum s (and where in its share), the first lane of row r; where a lane's share,
 * rescale, max and sum lie in its exchange array */
#define IFA_SC_PSRC(s) ((s) / IFA_SOWN * IFA_SREP)
#define IFA_SC_PIDX(s) ((s) % IFA_SOWN)
#define IFA_SC_ASRC(r) ((r) * LANES / IFA_SOWN * IFA_SREP)
#define IFA_SC_AIDX(r) IFA_SOWN
#define IFA_SC_MIDX(r) 0
#define IFA_SC_LIDX(r) 1
/* IFA_LN >= 2: a lane's share and its rescale (IFA_SOWN + 1 floats) must fit its IFA_ST floats of lred */
#if !LANES || (R & (R - 1)) != 0 || (LANES & (LANES - 1)) != 0 || R > IFA_LN || IFA_ST < 2 || IFA_LN < 2
#error "lane_scores needs the lane shape, query rows and lanes powers of two, rows <= D / 8, 2 sums or more and D >= 16"
#endif
#endif
/* e^x in the GPU shapes (the lane and matrix shapes' probabilities, rescales and warp merges, the work-group shape's
 * probabilities): 2^(x log2 e). On NVIDIA a multiply and the exp2 unit (PTX ex2.approx.ftz.f32: 2 ulp, a result below
 * 2^-126 flushed to 0, the instruction libdevice's expf itself ends in), where expf's range reduction and scaling took
 * about 10 instructions and exp2's denormal fix-up 4 (sass_hist.py --core on sm_90a, the matrix shapes' step: int8 at
 * 16,32,8,128,8192 493 -> 426 instructions, G = 16 at 32,128,8,64,2048 338 -> 219); elsewhere exp2, which the CPU's
 * runs of these shapes check. The product's rounding moves e^x by |x| 2^-24 relatively, ~1e-6 for the x <= 0 whose e^x
 * counts, and a flushed probability is below 2^-126 of its row's largest: both far below every storage precision the
 * shapes take. The CPU's own shapes keep exp (one exponential a score beside 2 D multiply-adds). */
#if IFA_NV
inline float ifa_gexp(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * M_LOG2E_F));
    return y;
}
#define IFA_GEXP(x) ifa_gexp(x)
#else
#define IFA_GEXP(x) exp2((x) * M_LOG2E_F)
#endif
#if KTILE || LANES || MMA
/* 8 elements as they lie in memory (ifa_raw8: 8 bytes of int8 or float8, 16 of 16-bit floats; the lane shape's
 * 4 of int4 and 32 of fp32 too), loaded at element i of p in one load, and as floats */
#if IFA_KV1
typedef uint2 ifa_raw8;
#if KV_T == IFA_E4M3
inline float8 ifa_cvt8(uint2 u) { return ifa_e4m3_to_f32_8(as_uchar8(u)); }
#elif KV_T == IFA_E5M2
inline float8 ifa_cvt8(uint2 u) { return ifa_e5m2_to_f32_8(as_uchar8(u)); }
#else
inline float8 ifa_cvt8(uint2 u) { return convert_float8(as_char8(u)); }
#endif
#define IFA_RAW8(p, i) (*(__global const uint2 *)((p) + (i)))
#elif KV_T == IFA_I4
/* two elements a byte, the even one in the low nibble (i even: the lanes' columns are multiples of 8) */
typedef uchar4 ifa_raw8;
inline float8 ifa_cvt8(uchar4 u) {
#if defined(__ENDIAN_LITTLE__)
    /* value e is bits 4e..4e+3 of the word: to the top of lane e by a shift, sign-extended by the shift back */
    return convert_float8(as_int8((uint8)as_uint(u) << (uint8)(28, 24, 20, 16, 12, 8, 4, 0)) >> 28);
#else
    const char4 lo = as_char4(u << (uchar)4) >> (char)4, hi = as_char4(u) >> (char)4;
    return convert_float8(shuffle2(lo, hi, (uchar8)(0, 4, 1, 5, 2, 6, 3, 7)));
#endif
}
#define IFA_RAW8(p, i) (*(__global const uchar4 *)((p) + ((i) >> 1)))
#elif KV_T == IFA_F32
typedef float8 ifa_raw8;
inline float8 ifa_cvt8(float8 u) { return u; }
#define IFA_RAW8(p, i) (*(__global const float8 *)((p) + (i)))
#else
typedef uint4 ifa_raw8;
inline float8 ifa_cvt8(uint4 u) {
#if KV_T == IFA_F16
    return vload_half8(0, (const __private half *)&u);
#else
    return as_float8(convert_uint8(as_ushort8(u)) << 16);
#endif
}
#define IFA_RAW8(p, i) (*(__global const uint4 *)((p) + (i)))
#endif
#define IFA_KT_G(p, i) ifa_cvt8(IFA_RAW8(p, i))
#endif
#if LANES
/* x of the lane whose index differs from this one's in the bits of o: a warp shuffle on NVIDIA (the lane groups
 * are aligned runs of a warp's 32 lanes, and every lane of the warp runs it: the step loop is the work-group's);
 * elsewhere the lanes' sums go through local memory (lred) */
#if IFA_NV
inline float ifa_shfl_xor(float x, int o) {
    uint y;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(y) : "r"(as_uint(x)), "r"(o));
    return as_float(y);
}
/* x of lane src of the warp (0 to 31) */
inline float ifa_shfl_idx(float x, int src) {
    uint y;
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(y) : "r"(as_uint(x)), "r"(src));
    return as_float(y);
}
#endif
#if LANE_SC
/* lane_scores' exchanges among a lane group, n values at once: rcv[i] = snd[i] of the lane whose index differs
 * in the bits of o (IFA_XOR_N), or of the group's lane src (IFA_IDX_N, src[i] per value); warp shuffles on
 * NVIDIA, elsewhere through lred (IFA_ST floats per work-item), one barrier pair per exchange: the same
 * algorithm, so that every CI device runs its index arithmetic */
#if IFA_NV
#define IFA_XOR_N(rcv, snd, n, o)                                                                                \
    _Pragma("unroll") for (int i_ = 0; i_ < IFA_ST; ++i_) if (i_ < (n)) rcv[i_] = ifa_shfl_xor(snd[i_], (o))
#define IFA_IDX_N(rcv, snd, ns, n, SRC, SI)                                                                      \
    _Pragma("unroll") for (int i_ = 0; i_ < (n); ++i_) rcv[i_] = ifa_shfl_idx(snd[SI(i_)], lane_base + (SRC(i_)))
#else
#define IFA_XOR_N(rcv, snd, n, o)                                                                                \
    _Pragma("unroll") for (int i_ = 0; i_ < IFA_ST; ++i_) if (i_ < (n)) lred[lid * IFA_ST + i_] = snd[i_];       \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                               \
    _Pragma("unroll") for (int i_ = 0; i_ < IFA_ST; ++i_) if (i_ < (n)) rcv[i_] = lred[(lid ^ (o)) * IFA_ST + i_];\
    barrier(CLK_LOCAL_MEM_FENCE)
#define IFA_IDX_N(rcv, snd, ns, n, SRC, SI)                                                                      \
    _Pragma("unroll") for (int i_ = 0; i_ < (ns); ++i_) lred[lid * IFA_ST + i_] = snd[i_];                       \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                               \
    _Pragma("unroll") for (int i_ = 0; i_ < (n); ++i_) rcv[i_] = lred[(lane_base + (SRC(i_))) * IFA_ST + SI(i_)]; \
    barrier(CLK_LOCAL_MEM_FENCE)
#endif
#endif
#endif

/* KTILE (with V8, 16-bit or int8 K/V, every row 16-byte aligned: the host checks): each chunk's key rows are first
 * copied into local memory, 16 bytes a load with consecutive work-items on consecutive 16 bytes of a row, so
 * that a warp's load covers whole rows (a work-item per row touches 32 rows 2 bytes apart per load: 6-17 % of
 * an H200's bandwidth, docs/performance.md); each tile row has 16 bytes of padding, so that work-items reading
 * their own rows at one column fall on different banks. P.V loads 8 values in one load (16 bytes, 8 of int8),
 * IFA_KT_B rows' loads before their FMAs. */
#if KTILE
#if !V8 || (KV_T != IFA_F16 && KV_T != IFA_BF16 && KV_T != IFA_I8)
#error "the key tile needs 8-wide loads and 16-bit or int8 K/V"
#endif
#if KV_T == IFA_I8
#define IFA_KT_E 16 /* elements per 16-byte word */
#else
#define IFA_KT_E 8
#endif
#define IFA_KT_W (HEAD_DIM / IFA_KT_E + 1)        /* 16-byte words per tile row, one of them padding */
#define IFA_KT_B 8
/* P.V's accumulators stay in registers across the chunks; at the end the groups' slices are summed through the
 * tile's memory, which must hold them */
#if IFA_ZV * R * VDIM > CHUNK * IFA_KT_W * 4
#error "the key tile's memory must hold the P.V groups' slices (WG / (D_v / 8) x R x D_v floats)"
#endif
/* elements x .. x + 7 of a tile row (x a multiple of 8) */
#if KV_T == IFA_I8
inline float8 ifa_kt_row8(__local const uint4 *row, int x) {
    const char16 c = as_char16(row[x / 16]);
    return convert_float8((x & 8) ? c.hi : c.lo);
}
#else
inline float8 ifa_kt_row8(__local const uint4 *row, int x) { return ifa_cvt8(row[x / 8]); }
#endif
#endif
