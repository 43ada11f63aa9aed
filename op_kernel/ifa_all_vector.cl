/* The all-vector template: one fused kernel for IncreFlashAttention.
 *
 * One work-group owns one (batch, KV head, head group): all GT query heads that share the KV head (GQA),
 * so each K and V element is read from global memory once per (batch, KV head) when the heads fit in one
 * group. The KV sequence is walked in chunks of CHUNK rows with the online softmax:
 *   scores   S[g][j] = (q_g * k_j) * scale          (one work-item per KV row, all heads at once)
 *   update   m' = max(m, max_j S), P = exp(S - m'), l' = l*exp(m - m') + sum P
 *   output   acc[g][:] = acc[g][:]*exp(m - m') + sum_j P[g][j] * v_j   (one work-item per column d)
 * and at the end out = acc / l, lse = m + log(l); a row with no visible key gives zeros and lse = -inf.
 *
 * With SPLIT=1 (flash decoding) the third grid dimension is the split: split s covers key rows
 * [s * split_tokens, min(len, (s + 1) * split_tokens)) and writes its unnormalised accumulator, max and sum
 * to the workspace (part_acc, part_m, part_l, indexed ((b * N + h) * max_splits + s)). Batch b has
 * max(1, ceil(len_b / split_tokens)) splits (split 0 of an empty batch writes max = -inf, sum = 0); later
 * split work-groups exit at once. ifa_combine.cl merges the splits.
 *
 * ROWMAX selects the flash-decoding algorithm. 1, partial rowmax: each split runs the online softmax
 * against its own max and the combine rescales the splits. 2, global rowmax: a first launch with MAX_PASS=1
 * only computes each split's score max into part_m; the second launch starts every split from the row's
 * global max M = max_s part_m, so P = exp(S - M) needs no rescaling and the combine only sums (at the price
 * of reading K twice).
 *
 * With BALANCED=1 the grid is one work-group per unit; unit u walks the blocks its stretch of the cost line
 * (see ifa_unit_start) touches, in order. A block wholly inside the stretch is written to the output; a
 * block cut by the stretch's ends leaves a partial (partial rowmax) in slot 2u (the unit's first block) or
 * 2u + 1 (its last), which ifa_combine.cl merges (with FUSED, the block's last piece does). prefix[b] is the
 * cost position of batch b's first block.
 *
 * Query rows. A work-group holds R = GT * SQ query rows, row r = g * SQ + t for head g of its group and
 * query token t (multi-token queries, speculative decoding). Every row shares the block's pass over K/V.
 * Row (g, t) sees logical position p when begin_t <= p < end_t, with end_t = len_b - (qn - 1 - t) if CAUSAL
 * else len_b, and begin_t = end_t - window when window > 0 (else 0), and the mask (if any) is 0 at p; qn is
 * the batch's query tokens, SQ unless QLEN, and a row t >= qn is padding that sees nothing.
 * The block reads positions [ifa_kv_lo, len_b) only: nothing before the earliest row's window.
 * Scores: s = (q.k) * scale [+ pse] [- slope_h * |p - (len_b - qn + t)|, ALiBi]; [s = softcap * tanh(s / softcap)];
 * invisible positions are -inf.
 *
 * KV addressing. Logical position p of batch b lives at row row0_b + p of batch b (row0_b = kv_end - len_b
 * with Ascend's kv padding, else 0), or with PAGED=1 at row p % block_size of pool block
 * table[b][p / block_size] (kv_bstride is then the pool's block stride). Each chunk row's element offset is
 * computed once, in the score phase, and kept in local memory for the P.V phase.
 *
 * Vector shape (VW > 1, the CPU shape). The same phases run with vectors of VW floats along D: a KV row's
 * dot products with all R query rows in VW-wide FMAs, the softmax of a chunk VW rows at a time, and the
 * P.V update in register blocks of R x XB vectors, each V vector loaded once for all R rows. With WG = 1
 * (one work-item per work-group, what PoCL runs best) every loop is a plain vector loop; with VW = 1 and
 * XB = 1 the phases are the work-group kernel above (one work-item per KV row, then per column d).
 *
 * 8-wide loads (VW = 1, V8 = 1, a GPU shape). The work-group shape above with each KV row read 8 elements
 * (16 bytes of fp16) per load instead of one: a work-item's dot products walk its key row in float8 steps,
 * and in P.V work-item (z, r, x) owns the 8 value columns x of query row r for the chunk rows j = z mod ZV,
 * adding them into its own slice of lacc (no two work-items share one, so no reduction per chunk); the ZV
 * slices are summed into acc once, after the last chunk. Needs R x D_v / 8 <= WG, D and D_v multiples of 8,
 * no int4.
 *
 * Its build options and their defaults are in ifa_all_vector_options.cl, which also lists the files of its
 * program; this one is the last. */

/* The block's query rows. Row r is (head g, token t) = (r / rq, r % rq) with rq = SQ, except with QLEN in the
 * main pass with one KV head per work-group (IFA_PACKED), where rq is the batch's own qn tokens: the rn = gn x qn
 * rows that hold query tokens come first, the vector shape's register tiles stop after them (IFA_RSTOP: a
 * break out of loops whose trip count stays the constant R, so that LLVM still unrolls them for full
 * batches; a loop bound of rn cost those 20 %), so a batch with fewer tokens computes fewer rows (S1 = 4 with
 * one token per batch: 2.1x faster on AVX2), and the padding tokens' rows are written apart (zeros here
 * for a whole block, the combine's for split rows). In the prefix pass (rows of every batch) a row is a query
 * token when its virtual head g0 + g exists and t is below its batch's tokens (IFA_QVALID); it sees nothing
 * otherwise (IFA_END 0). With several KV heads per work-group (MH > 1, whose register tiles must not straddle
 * two heads' rows) every head keeps its SQ rows and a row t >= qn is padding the same way. */
#if QLEN && !PREFIX && MH == 1
#define IFA_PACKED 1
#else
#define IFA_PACKED 0
#endif
#if IFA_PACKED && VW > 1
#define IFA_RSTOP(r) if ((r) >= rn) break
#else
#define IFA_RSTOP(r)
#endif
#if QLEN && PREFIX
#define IFA_QVALID(g, t) ((g) < gn && (t) < IFA_QLEN((g0 + (g)) / real_group))
#elif QLEN
#define IFA_QVALID(g, t) ((t) < qn) /* several KV heads (MH > 1): every head keeps its SQ rows, unpacked */
#else
#define IFA_QVALID(g, t) 1
#endif
/* whether row r = (g, t) holds a query token to load */
#if IFA_PACKED
#define IFA_QROW(r, g, t) ((r) < rn)
#else
#define IFA_QROW(r, g, t) ((g) < gn && IFA_QVALID(g, t))
#endif
#define IFA_END(g, t) (IFA_QVALID(g, t) ? len_b - (CAUSAL ? qn - 1 - (t) : 0) : 0)
/* row r's head and token in the score loops: with packed rows from the block's table (rq is not a constant,
 * and the loops would divide by it for every row and key row), else the constant division */
#if IFA_PACKED
#define IFA_ROW_GT(r, g, t) const int g = rg_s[r], t = rt_s[r]
#else
#define IFA_ROW_GT(r, g, t) const int g = (r) / SQ, t = (r) - g * SQ
#endif
/* the global row (batch, query head, token) of the main pass's row r: softmax_lse's index and the partials' */
#define IFA_GROW(r) (((ulong)b * (ulong)num_heads + (ulong)(h0 + (r) / rq)) * SQ + (ulong)((r) % rq))
/* The online-softmax step of query row r after a chunk whose score max is mx: the max pass only raises m_s;
 * otherwise m_s becomes the new max and a_s the factor that rescales what the row accumulated so far, and
 * the result is the max to subtract from the chunk's scores. */
inline float ifa_max_update(__local float *m_s, __local float *a_s, int r, float mx) {
#if MAX_PASS
    m_s[r] = fmax(m_s[r], mx);
    return 0.0f;
#else
#if IFA_GLOBAL_MAX
    /* the row's max over every split is known from the max pass: nothing to rescale */
    const float m_new = m_s[r], alpha = 1.0f;
    (void)mx;
#else
    const float m_old = m_s[r], m_new = fmax(m_old, mx);
    /* -inf - -inf is NaN: a row that has seen nothing rescales by 0. A max that did not move (most chunks after the
     * first few) rescales by exp(0) = 1 without the scalar exp (on Zen 4 about 4 % of the kernel's samples at
     * G = 8, D = 128, Zen 4, 2026-11-28) */
    float alpha = 0.0f;
    if (m_old != -INFINITY) alpha = m_old == m_new ? 1.0f : exp(m_old - m_new);
#endif
    m_s[r] = m_new;
    a_s[r] = alpha;
    /* a row whose max is still -inf has only -inf scores: exp(-inf - 0) = 0 */
    return m_new == -INFINITY ? 0.0f : m_new;
#endif
}

/* Balanced units: block k = (batch, KV head, head group) costs len_b + c0 (c0 > 0, so an empty batch still
 * costs something); the blocks laid end to end form a cost line [0, total) that unit u cuts at
 * ifa_unit_start (ifa_common.cl). */

typedef IFA_STORE_TYPE(Q_T) q_store;
typedef IFA_STORE_TYPE(KV_T) kv_store;
typedef IFA_STORE_TYPE(O_T) o_store;

#if FUSED
/* (max, sum) of a row's softmax merged with another part's (mk, lk): the online softmax's step. A part that saw
 * nothing (mk -inf) adds 0 x lk, which keeps a NaN sum (IFA_PART_W) */
inline float2 ifa_merge_ml(float2 a, float mk, float lk) {
    if (mk == -INFINITY) return (float2)(a.x, fma(lk, 0.0f, a.y));
    return mk > a.x ? (float2)(mk, a.y * IFA_PART_W(a.x, mk) + lk) : (float2)(a.x, a.y + lk * exp(mk - a.x));
}
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void ifa_all_vector(IFA_KPARAMS(IFA_ARGS_ALL_VECTOR)) {
    const int lid = (int)get_local_id(0);
#if FUSED
    __local float4 fc_red[WG]; /* the last split's sums across work-items */
    __local int fc_last;
#endif

#if IFA_MLA
    /* MMA 7: one room for the query (until its operand words are in registers), the steps' partial scores (and
     * with IFA_MMA_QLO each lane's low query words), then the accumulators (16 rows of D = 576 floats are 36 KiB of
     * the 48 an NVIDIA work-group has) */
#define IFA_L7_ROOM (2048 + (IFA_MMA_QLO ? 128 * 4 * (HEAD_DIM / 64) : 0))
    __local float qs[R * HEAD_DIM > IFA_L7_ROOM ? R * HEAD_DIM : IFA_L7_ROOM] __attribute__((aligned(16)));
    __local float *const acc = qs;
#else
    __local float qs[R * HEAD_DIM];
    __local float acc[R * VDIM] __attribute__((aligned(16)));
#endif
#if !LANES && !MMA
    __local float sc[R * CHUNK];
#endif
#define IFA_MASK_SKIP (HAS_MASK && !PREFIX && !LANES && !MMA && !MAX_PASS)
#if IFA_MASK_SKIP
#define IFA_PV_HID(j) pv_hid[j]
#define IFA_PV_ROW(j) ((j) < rows && !pv_hid[j])
#else
#define IFA_PV_HID(j) 0
#define IFA_PV_ROW(j) ((j) < rows)
#endif
#if IFA_MASK_SKIP
    __local uchar pv_hid[CHUNK]; /* the chunk's rows the mask hides from every query token (IFA_HIDDEN) */
#endif
    __local float m_s[R], l_s[R], a_s[R];
#if IFA_PACKED
    __local int rg_s[R], rt_s[R]; /* each row's head and token (IFA_ROW_GT) */
#endif
#if !LANES && !MMA
/* the chunk's row offsets, shared with P.V; the register-tiled P.V of a contiguous cache steps its own offset, so
 * there the score pass skips this store (one local write per key row) */
#define IFA_ROFF_KEPT (!MAX_PASS && (KTILE || V8 || VW == 1 || PAGED))
#if IFA_ROFF_KEPT
    __local ulong roff[CHUNK];
#endif
#endif
    /* antiquant: per-row constants (channel modes: the key offset's dot with the scaled query; token modes:
     * the query's sum), the value's scale and offset*scale per d (channel modes) or per chunk row (token
     * modes) */
    __local float aq_q[R], aq_c[R], aq_v[2 * VDIM];
#if !LANES && !MMA
    __local float aq_t[2 * CHUNK];
#endif
#if ANTIQUANT && VW == 1
    /* the GPU shapes' antiquant sums over D: IFA_AQ_T shares a row (the chunk's scores' room where the shape has it) */
#if LANES || MMA
    __local float aq_red[WG];
#else
    __local float *const aq_red = sc;
#endif
#endif
#if MMA
    /* each warp's maxima and sums for the merge; elsewhere than NVIDIA, each warp's scratch for its products */
    __local float mg_m[IFA_NW * R], mg_l[IFA_NW * R];
#if MMA >= 3 && LANE_QL
    /* the query's operand words (hi, then lo: IFA_MQ_W) */
    __local uint2 mq_w[2 * 8 * (HEAD_DIM / 16) * 4];
#endif
#if !IFA_NV
    __local float ms[IFA_NW * 384];
    __local uint mw[IFA_NW * 64];
#endif
#endif
#if LANES
    /* each lane group's maxima and sums for the merge; elsewhere than NVIDIA, the lanes' partial dot products */
    __local float lg_m[IFA_NG * R], lg_l[IFA_NG * R];
#if !IFA_NV
    __local float lred[WG * R * LANES];
#endif
#endif
#if IFA_TPR > 1
    /* the softmax's partial maxima and sums, and each row's max to subtract */
    __local float red_s[WG], m_use_s[R];
#endif
#if V8
#if !KTILE
    /* P.V accumulators, one slice per (group z, query row r): lacc[(z * R + r) * VDIM + d] */
    __local float lacc[IFA_ZV * R * VDIM];
#endif
#endif
#if KTILE
    __local uint4 ktile[CHUNK * IFA_KT_W];
#endif
#if ROPE && !PREFIX
    /* cos and sin of each query token's angles, computed once per work-group instead of once per head and
     * per element of a rotated pair (a sincos costs about as much as streaming a few KV rows on a CPU) */
    __local float2 rope_cs[SQ * (ROPE_DIM / 2)];
#endif

#if BALANCED
    const long unit = (long)get_group_id(0);
    const long x1 = ifa_unit_start(total_cost, units, unit + 1);
    long x = ifa_unit_start(total_cost, units, unit);
    const int lid_unit = lid;
    for (int piece = 0; x < x1; ++piece) {
        /* the work-item's index through an asm zero (IFA_QZERO) each piece: what the body derives from it (lanes,
         * local addresses) is computed again per piece instead of hoisted above the loop and kept live across it
         * (nv-regs, NVIDIA: the RoPE example's bf16 8-row plan 255 registers with 24 bytes spilled -> 240) */
        uint lz_;
        IFA_QZERO(lz_);
        const int lid = lid_unit + (int)lz_;
        /* the batch holding cost position x: the largest b with prefix[b] <= x */
        int lo = 0, hi = batch;
        while (hi - lo > 1) {
            const int mid = (lo + hi) / 2;
            if (prefix[prefix_off + mid] <= x) lo = mid; else hi = mid;
        }
        const ulong b = (ulong)lo;
        const int len_b = IFA_LEN(b), qn = IFA_QLEN(b);
        const int kv_lo = ifa_kv_lo(len_b, window, IFA_SHIFT(CAUSAL, qn)), span = len_b - kv_lo;
        const long bcost = (long)span + c0;
        const int blk = (int)((x - prefix[prefix_off + b]) / bcost);
        const long pk = prefix[prefix_off + b] + (long)blk * bcost, pe = pk + bcost;
        const long cut0 = x - pk, cut1 = min(x1, pe) - pk;
        const int first = kv_lo + (int)clamp(cut0 - c0, 0L, (long)span);
        const int len = kv_lo + (int)clamp(cut1 - c0, 0L, (long)span);
        const int whole = cut0 == 0 && pe <= x1;
        const ulong slot = ifa_unit_slot(unit, piece != 0);
        const int active = 1;
        x = pe;
#else
    {
#if BATCH_FAST
        const int blk = (int)get_group_id(1);
        const ulong b = get_group_id(0);
#else
        const int blk = (int)get_group_id(0);
        const ulong b = get_group_id(1);
#endif
        const int len_b = IFA_LEN(b), qn = IFA_QLEN(b);
        const int kv_lo = ifa_kv_lo(len_b, window, IFA_SHIFT(CAUSAL, qn)), span = len_b - kv_lo;
#if SPLIT
        const int split = (int)get_group_id(2);
        /* a batch has max(1, ceil(span / split_tokens)) splits; the work-groups of later splits run no chunk
         * and write nothing (the combine never reads their slots). No early return: PoCL's work-item loops
         * mishandle a return ahead of barriers. */
        const int active = split == 0 || split * split_tokens < span;
        const int first = kv_lo + min(span, split * split_tokens);
        const int len = active ? min(len_b, first + split_tokens) : first;
        const int whole = 0;
#else
        const int first = kv_lo;
        const int len = len_b;
        const int whole = 1;
#endif
#endif
    const int kvh = blk / head_groups;
    const int g0 = (blk - kvh * head_groups) * GT;
    const int gn = min(GT, group - g0);
    const int rq = IFA_PACKED ? max(qn, 1) : SQ; /* tokens per head among the rows */
    const int rn = gn * (IFA_PACKED ? qn : SQ);  /* the rows that hold query tokens */
    const int h0 = kvh * group + g0;
#if HAS_PAD
    const int row0 = kv_end - len_b;
#else
    const int row0 = 0;
#endif
    const ulong kvh_off = (ulong)kvh * MH * kv_hstride;
#if PAGED
/* the pool block of batch b's block-table slot blk, and where this KV head's rows of that block start (P.V's
 * prefetch walks the slots by these without a division) */
#define IFA_SLOT(blk) table[table_off + b * (ulong)table_cols + (ulong)(blk)]
#define IFA_BLOCK_OFF(blk) ((ulong)IFA_SLOT(blk) * kv_bstride + kvh_off)
#define IFA_PAGE(p) IFA_SLOT((p) / block_size)
#define IFA_ROW_OFF(p) (IFA_BLOCK_OFF((p) / block_size) + (ulong)((p) % block_size) * kv_rstride)
#else
#define IFA_ROW_OFF(p) (b * kv_bstride + (ulong)(row0 + (p)) * kv_rstride + kvh_off)
#endif
/* the position a token-mode scale form indexes: the pool's row for mode 5, the logical position for paged
 * KV, the key row otherwise */
#if PAGED
#define IFA_AQ_POS(mode, p) ((mode) == 5 ? (ulong)IFA_PAGE(p) * (ulong)block_size + (ulong)((p) % block_size) : (ulong)(p))
#else
#define IFA_AQ_POS(mode, p) ((ulong)(row0 + (p)))
#endif
/* IFA_VREAD(p): whether the block reads value row p (and its token scale): inside the block and not hidden by the
 * mask from every query token (ifa_hidden). IFA_MASK_SKIP: the chunk shapes' P.V skips the rows pv_hid marks. */
#if HAS_MASK && !PREFIX
#define IFA_HIDDEN(p) ifa_hidden(mask, mask_off + b * mask_bstride + (ulong)(p), mask_tstride, qn)
#define IFA_VREAD(p) ((p) < len && !IFA_HIDDEN(p))
#else
#define IFA_HIDDEN(p) 0
#define IFA_VREAD(p) ((p) < len)
#endif
#if MMA
/* K/V rows as loaded (IFA_MMA_RK words a lane's quarter of a key row, IFA_MMA_RV its eighth of a value row) and
 * their conversion into the operands' fp16x2 words (IFA_MMA_CVT: int8's exact, fp16's a copy). MMA 5 keeps its
 * prefetched rows as loaded and converts them in the step that uses them: converted at the load, int8's next-step
 * rows made the warp wait for their round trip before this step's math, and took twice the registers in flight */
#if IFA_KV1
#define IFA_MMA_RK (IFA_KW / 2)
#define IFA_MMA_RV (IFA_VT / 2)
#define IFA_MMA_CVT(w, r, n) _Pragma("unroll") for (int j_ = 0; j_ < (n); ++j_) IFA_B4H((w)[2 * j_], (w)[2 * j_ + 1], (r)[j_])
#elif KV_T == IFA_I4
#define IFA_MMA_RK (IFA_KW / 4)
#define IFA_MMA_RV (IFA_VT / 4)
#define IFA_MMA_CVT(w, r, n)                                                                                        \
    _Pragma("unroll") for (int j_ = 0; j_ < (n); ++j_)                                                              \
        IFA_N8H((w)[4 * j_], (w)[4 * j_ + 1], (w)[4 * j_ + 2], (w)[4 * j_ + 3], (r)[j_])
#else
#define IFA_MMA_RK IFA_KW
#define IFA_MMA_RV IFA_VT
#define IFA_MMA_CVT(w, r, n) _Pragma("unroll") for (int j_ = 0; j_ < (n); ++j_) (w)[j_] = (r)[j_]
#endif
/* the address of element i of K/V tensor t (int4: two a byte, i even here) */
#if KV_T == IFA_I4
#define IFA_MMA_AT(t, i) ((t) + ((i) >> 1))
#else
#define IFA_MMA_AT(t, i) ((t) + (i))
#endif
/* the lane's quarter of rows pa and pb of tensor t (k or v, from offset off; IFA_KWCOL) as loaded into ra and rb
 * (zero past len, and for v where the mask hides the row: IFA_VREAD): 16-byte loads; IFA_MMA_ROWS: as fp16x2 words
 * wa and wb */
#define IFA_MMA_READ_k(p) ((p) < len)
#define IFA_MMA_READ_v(p) IFA_VREAD(p)
#define IFA_MMA_RAWROWS(ra, rb, t, off)                                                                            \
    _Pragma("unroll") for (int u = 0; u < IFA_MMA_RK / 4; ++u) {                                                  \
        const ulong c_ = IFA_KWCOL(IFA_KE / 2 * u);                                                                \
        const uint4 x0 = IFA_MMA_READ_##t(pa) ? *(__global const uint4 *)IFA_MMA_AT(t, (off) + roa + c_) : (uint4)0; \
        const uint4 x1 = IFA_MMA_READ_##t(pb) ? *(__global const uint4 *)IFA_MMA_AT(t, (off) + rob + c_) : (uint4)0; \
        ra[4 * u] = x0.x, ra[4 * u + 1] = x0.y, ra[4 * u + 2] = x0.z, ra[4 * u + 3] = x0.w;                       \
        rb[4 * u] = x1.x, rb[4 * u + 1] = x1.y, rb[4 * u + 2] = x1.z, rb[4 * u + 3] = x1.w;                       \
    }
/* 16-bit K/V straight into the operands' words: through a copy, D = 256 ran 70 -> 79 us on the H100 though clang's
 * PTX was the same (H100, 2026-11-27; the bisect part of scripts/gpu-measure times it) */
#define IFA_MMA_AS_LOADED (!IFA_KV1 && KV_T != IFA_I4)
#if IFA_MMA_AS_LOADED
#define IFA_MMA_ROWS(wa, wb, t, off) IFA_MMA_RAWROWS(wa, wb, t, off)
#else
#define IFA_MMA_ROWS(wa, wb, t, off)                                                                               \
    {                                                                                                              \
        uint ra_[IFA_MMA_RK], rb_[IFA_MMA_RK];                                                                     \
        IFA_MMA_RAWROWS(ra_, rb_, t, off)                                                                          \
        IFA_MMA_CVT(wa, ra_, IFA_MMA_RK);                                                                          \
        IFA_MMA_CVT(wb, rb_, IFA_MMA_RK);                                                                          \
    }
#endif
/* MMA 3 to 6: the lane's eighth of value row p as loaded into rd (zero where not IFA_VREAD): load u the row's chunk
 * of 8 elements 8 u + mg (IFA_VWCOL); IFA_MMA_VROW: as IFA_VT fp16x2 words wd */
#if IFA_KV1
#define IFA_MMA_RAWVROW(rd, p)                                                                                      \
    do {                                                                                                           \
        const ulong ro_ = (p) < len ? IFA_ROW_OFF(p) : 0;                                                          \
        _Pragma("unroll") for (int u = 0; u < IFA_VT / 4; ++u) {                                                   \
            const uint2 x_ = IFA_VREAD(p) ? IFA_RAW8(v, v_off + ro_ + (ulong)IFA_VWCOL(4 * u)) : (uint2)0;             \
            rd[2 * u] = x_.x, rd[2 * u + 1] = x_.y;                                                                \
        }                                                                                                          \
    } while (0)
#elif KV_T == IFA_I4
#define IFA_MMA_RAWVROW(rd, p)                                                                                      \
    do {                                                                                                           \
        const ulong ro_ = (p) < len ? IFA_ROW_OFF(p) : 0;                                                          \
        _Pragma("unroll") for (int u = 0; u < IFA_VT / 4; ++u)                                                     \
            rd[u] = IFA_VREAD(p) ? *(__global const uint *)IFA_MMA_AT(v, v_off + ro_ + (ulong)IFA_VWCOL(4 * u)) : 0u; \
    } while (0)
#else
#define IFA_MMA_RAWVROW(rd, p)                                                                                      \
    do {                                                                                                           \
        const ulong ro_ = (p) < len ? IFA_ROW_OFF(p) : 0;                                                          \
        _Pragma("unroll") for (int u = 0; u < IFA_VT / 4; ++u) {                                                   \
            const uint4 x_ = IFA_VREAD(p) ? IFA_RAW8(v, v_off + ro_ + (ulong)IFA_VWCOL(4 * u)) : (uint4)0;             \
            rd[4 * u] = x_.x, rd[4 * u + 1] = x_.y, rd[4 * u + 2] = x_.z, rd[4 * u + 3] = x_.w;                        \
        }                                                                                                          \
    } while (0)
#endif
#if IFA_MMA_AS_LOADED
#define IFA_MMA_VROW(wd, p) IFA_MMA_RAWVROW(wd, p)
#else
#define IFA_MMA_VROW(wd, p)                                                                                         \
    do {                                                                                                           \
        uint r_[IFA_MMA_RV];                                                                                       \
        IFA_MMA_RAWVROW(r_, p);                                                                                    \
        IFA_MMA_CVT(wd, r_, IFA_MMA_RV);                                                                           \
    } while (0)
#endif
#endif
#if MMA >= 3
/* MMA 4 (transposed and lean), and MMA 3 beyond D = 128: the value rows after the scores, the query's operand read
 * and converted at each step (registers: ptxas on clang's PTX, D = 128: 169 -> 147; D = 256: 255 and spills ->
 * 200) */
#define IFA_MMA_VLATE (MMA == 4 || HEAD_DIM > 128)
#define IFA_MMA_QSTEP (MMA == 4 || HEAD_DIM > 128)
/* LANE_QL with MMA 3 to 6: the query's operand words from local memory, written once, where the query is otherwise
 * held in registers as two parts (their registers left to more work-groups) or read and converted at each step
 * (IFA_MMA_QSTEP: one load a step's column where 4 floats, their conversion and the second part's took 5 to 15
 * instructions) */
#define IFA_MMA_QLOC LANE_QL
/* MMA 5 up to D = 128: MMA 3 with each step's key and value rows loaded during the step before (twice the row
 * registers; for grids of about one work-group a multiprocessor, where nothing else hides a step's load latency);
 * beyond D = 128 it is MMA 3 */
#define IFA_MMA_PF (MMA >= 5 && HEAD_DIM <= 128)
/* MMA 6: MMA 5 with int8 (float8, int4) rows loaded two steps ahead (a step's int8 rows are half the bytes of fp16's: one step
 * in flight kept half as many bytes on the way, and int8 ran no faster than fp16 per key, 2026-11-27) */
#define IFA_MMA_PF2 (MMA == 6)
#if IFA_MMA_PF2 && ((!IFA_KV1 && KV_T != IFA_I4) || HEAD_DIM > 128)
#error "MMA 6 is MMA 5 for int8, float8 or int4 K/V up to D = 128"
#endif
/* the planner reserves mq_w's local memory only where this holds (tiling/planner.c's mma_q_local_fit mirrors the
 * conditions): a change to either side fails the build instead of planning the wrong budget */
#if LANE_QL && !IFA_MMA_QSTEP && !IFA_MMA_QLO
#error "lane_q_local with MMA 3 to 6 needs the query's two parts held across steps (IFA_MMA_QLO) or read at each step (IFA_MMA_QSTEP)"
#endif
    /* warp wp, lane (mg, mt4): key rows mg and mg + 8 of a step (a quarter: IFA_KWCOL), value rows 2 mt4, + 1,
     * + 8, + 9 (an eighth: IFA_VWCOL); query row mg of the score products' 8-column side, scores and
     * accumulators of query rows r0 and r1. Here for MMA 5's first rows, which go out before the query's prologue;
     * the other plans take them after it (IFA_MMA_LANES below: computed here, D = 256's unfused plan ran 70 -> 79
     * us on the H100 with clang's PTX the same, H100, 2026-11-27) */
#define IFA_MMA_LANES                                                                                              \
    const int lane = lid & 31, wp = lid / 32, mg = lane >> 2, mt4 = lane & 3;                                     \
    const int r0 = 2 * mt4, r1 = r0 + 1
#if IFA_MMA_PF
    IFA_MMA_LANES;
#endif
/* step jb_'s rows for this lane: keys mg and mg + 8 (a quarter) into ka and kb (IFA_MMA_KEYS), values 2 mt4, + 1,
 * + 8, + 9 (an eighth) into v0 .. v3 (IFA_MMA_VALS) */
#define IFA_MMA_KEYS(jb_, ka, kb)                                                                                  \
    do {                                                                                                           \
        const int pa = (jb_) + wp * 16 + mg, pb = pa + 8;                                                          \
        const ulong roa = pa < len ? IFA_ROW_OFF(pa) : 0, rob = pb < len ? IFA_ROW_OFF(pb) : 0;                    \
        IFA_MMA_ROWS(ka, kb, k, k_off)                                                                             \
    } while (0)
#define IFA_MMA_VALS(jb_, v0, v1, v2, v3)                                                                          \
    do {                                                                                                           \
        const int pv = (jb_) + wp * 16 + r0;                                                                       \
        IFA_MMA_VROW(v0, pv);                                                                                      \
        IFA_MMA_VROW(v1, pv + 1);                                                                                  \
        IFA_MMA_VROW(v2, pv + 8);                                                                                  \
        IFA_MMA_VROW(v3, pv + 9);                                                                                  \
    } while (0)
#define IFA_MMA_RAW_LOADS(jb_, ka, kb, v0, v1, v2, v3)                                                             \
    do {                                                                                                           \
        const int pa = (jb_) + wp * 16 + mg, pb = pa + 8, pv = (jb_) + wp * 16 + r0;                               \
        const ulong roa = pa < len ? IFA_ROW_OFF(pa) : 0, rob = pb < len ? IFA_ROW_OFF(pb) : 0;                    \
        IFA_MMA_RAWROWS(ka, kb, k, k_off)                                                                          \
        IFA_MMA_RAWVROW(v0, pv);                                                                                   \
        IFA_MMA_RAWVROW(v1, pv + 1);                                                                               \
        IFA_MMA_RAWVROW(v2, pv + 8);                                                                               \
        IFA_MMA_RAWVROW(v3, pv + 9);                                                                               \
    } while (0)
#if IFA_MMA_PF
    /* MMA 5: the first step's rows (MMA 6: two steps') go out before the query's prologue, their round trip beside
     * its loads and barriers instead of after them (a work-group of a B = 1 split has a handful of steps) */
    uint rka[IFA_MMA_RK], rkb[IFA_MMA_RK], rv0[IFA_MMA_RV], rv1[IFA_MMA_RV], rv2[IFA_MMA_RV], rv3[IFA_MMA_RV];
    IFA_MMA_RAW_LOADS(first, rka, rkb, rv0, rv1, rv2, rv3);
#if IFA_MMA_PF2
    /* the step after's */
    uint ska[IFA_MMA_RK], skb[IFA_MMA_RK], sv0[IFA_MMA_RV], sv1[IFA_MMA_RV], sv2[IFA_MMA_RV], sv3[IFA_MMA_RV];
    IFA_MMA_RAW_LOADS(first + IFA_NW * 16, ska, skb, sv0, sv1, sv2, sv3);
#endif
#endif
#endif

#if ROPE && !PREFIX
    for (int i = lid; i < SQ * (ROPE_DIM / 2); i += WG) {
        const int t = i / (ROPE_DIM / 2);
        rope_cs[i] = IFA_ROPE_CS((int)rope_pos[rope_pos_off + b] + t, i - t * (ROPE_DIM / 2));
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    const ulong qbase = q_off + b * q_bstride + (ulong)h0 * q_hstride;
#if IFA_VEC_Q
    for (int i = lid * VW; i < R * HEAD_DIM; i += WG * VW) {
        const int r = i / HEAD_DIM, d = i - r * HEAD_DIM;
        const int g = r / rq, t = r - g * rq;
        fv qv = IFA_QROW(r, g, t)
                    ? IFA_VLOAD(Q_T, q, qbase + (ulong)g * q_hstride + (ulong)t * q_tstride + (ulong)d) : 0.0f;
#if IFA_AQ_FOLD
        qv *= IFA_AQ_VS(d);
#endif
        IFA_SV(qv, qs + i);
    }
#else
    /* on a GPU the work-item's R x D / WG query elements (16 at G = 8, D = 256) are loaded in one go: the loop
     * unrolled, so that its loads do not wait for each other round trip by round trip (their stores go to local
     * memory, which no load here reads); a CPU work-group loops over far more of them */
    IFA_Q_UNROLL for (int k = 0; k < (R * HEAD_DIM + WG - 1) / WG; ++k) {
        const int i = lid + k * WG;
        if (i >= R * HEAD_DIM) break;
        const int r = i / HEAD_DIM, d = i - r * HEAD_DIM;
        const int g = r / rq, t = r - g * rq;
#if PREFIX
        /* virtual head g0 + g of the prefix pass is query head (gv % G) of KV head kvh in batch gv / G */
        const int gv = g0 + g;
        const ulong qb = (ulong)(gv / real_group);
        const ulong qaddr = q_off + qb * q_bstride + (ulong)(kvh * real_group + gv % real_group) * q_hstride +
                            (ulong)t * q_tstride + d;
#else
        const ulong qb = b;
        const ulong qaddr = qbase + (ulong)g * q_hstride + (ulong)t * q_tstride + d;
#endif
        const int qok = IFA_QROW(r, g, t); /* padding tokens are never read */
        float qv = qok ? IFA_LOAD(Q_T, q, qaddr) : 0.0f;
#if ROPE
        /* rotated in registers at the token's position; the query in memory is left as it is */
        if (qok && IFA_ROPE_IN(d)) {
            const int re = d - ROPE_OFF;
            const float xp = IFA_LOAD(Q_T, q, qaddr - (ulong)re + (ulong)ifa_rope_partner(re));
#if PREFIX
            /* virtual heads of different batches: each its own positions */
            const float2 cs = IFA_ROPE_CS((int)rope_pos[rope_pos_off + qb] + t, ifa_rope_index(re));
#else
            const float2 cs = rope_cs[t * (ROPE_DIM / 2) + ifa_rope_index(re)];
#endif
            qv = ifa_rope_apply(qv, xp, re, cs);
        }
#else
        (void)qb;
#endif
#if IFA_AQ_FOLD
        qv *= AQ_SCALE(AQ_IDX(0, d));
#endif
        qs[i] = qv;
    }
#endif
#if !IFA_MLA /* MMA 7 writes every accumulator once, after its loop */
    for (int i = lid; i < R * VDIM; i += WG) acc[i] = 0.0f;
#endif
#if V8 && !KTILE
    for (int i = lid; i < IFA_ZV * R * VDIM; i += WG) lacc[i] = 0.0f;
#endif
#if (VAQ == 1 || VAQ == 2) && VW > 1
    for (int d = lid * VW; d < VDIM; d += WG * VW) {
        const fv vs = IFA_VAQ_VS(d);
        IFA_SV(vs, aq_v + d);
        IFA_SV(IFA_VAQ_VO(d) * vs, aq_v + VDIM + d);
    }
#elif VAQ == 1 || VAQ == 2
    for (int d = lid; d < VDIM; d += WG) {
        const float vs = VAQ_SCALE(VAQ_IDX(0, d));
        aq_v[d] = vs;
        aq_v[VDIM + d] = VAQ_OFFSET(VAQ_IDX(0, d)) * vs;
    }
#endif
    for (int r = lid; r < R; r += WG) {
        float m0 = -INFINITY;
#if IFA_GLOBAL_MAX
        /* the row's global max over every split, from the max pass */
        const ulong mrow = IFA_GROW(r) * (ulong)max_splits;
        const int nsplit = max(1, (span + split_tokens - 1) / split_tokens);
        for (int s = 0; r < rn && s < nsplit; ++s) m0 = fmax(m0, part[part_m + mrow + s]);
#endif
        m_s[r] = m0;
        l_s[r] = 0.0f;
        aq_c[r] = 0.0f;
#if IFA_PACKED
        rg_s[r] = r / rq, rt_s[r] = r % rq;
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#if ANTIQUANT && VW > 1
    for (int r = lid; r < R; r += WG) {
        fv cv = 0.0f;
        for (int d = 0; d < HEAD_DIM; d += VW) {
#if ANTIQUANT <= 2
            cv = fma(IFA_LV(qs + r * HEAD_DIM + d), IFA_AQ_VO(d), cv);
#else
            cv += IFA_LV(qs + r * HEAD_DIM + d);
#endif
        }
        aq_q[r] = ifa_hsum(cv);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#elif ANTIQUANT
    /* the GPU shapes: IFA_AQ_T work-items a row, each summing every IFA_AQ_T-th of its D terms (a loop unrolled on
     * a GPU: the offsets' global loads go out together), the row's first adding the shares in order. One
     * work-item a row running down all D terms waited for each offset's load in turn, D round trips a
     * work-group. aq_red: IFA_AQ_T x rows per pass floats (sc where the shape has it; the planner's estimate
     * counts sc's room for every shape) */
    {
        const int rows = WG / IFA_AQ_T, j = lid % IFA_AQ_T;
        for (int rp = 0; rp < R; rp += rows) {
            const int r = rp + lid / IFA_AQ_T, mine = lid / IFA_AQ_T < rows && r < R;
            float c = 0.0f;
            IFA_Q_UNROLL for (int e = 0; e < (HEAD_DIM + IFA_AQ_T - 1) / IFA_AQ_T; ++e) {
                const int d = j + e * IFA_AQ_T;
                if (!mine || d >= HEAD_DIM) break;
#if ANTIQUANT <= 2
                c = fma(qs[r * HEAD_DIM + d], AQ_OFFSET(AQ_IDX(0, d)), c);
#else
                c += qs[r * HEAD_DIM + d];
#endif
            }
            aq_red[lid] = c;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (mine && j == 0) {
                float sum = 0.0f;
                for (int k = 0; k < IFA_AQ_T; ++k) sum += aq_red[lid + k];
                aq_q[r] = sum;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
#endif

/* The score of query row r (head g, token t) at key position p from its dot product d, into s: antiquant's
 * correction (ko, ks: a token mode's offset and scale of the row), scale, pse, ALiBi, soft-cap; s_vis: whether
 * the row sees p (window, causal end, mask). Both shapes' one-score paths (the four-row path has its own). */
#if ANTIQUANT == 0
#define IFA_SCORE_BASE(d, r, ko, ks) ((d) * scale)
#elif ANTIQUANT == 2 && MMA
    /* the matrix shapes' per-tensor key scale: s (q.k + q.o), after the products (IFA_AQ_FOLD) */
    const float scale_kt = scale * AQ_ROW_SCALE(AQ_IDX(0, 0)); /* applied to whole dot products: ifa_common.cl */
#define IFA_SCORE_BASE(d, r, ko, ks) (((d) + aq_q[r]) * scale_kt)
#elif ANTIQUANT <= 2
#define IFA_SCORE_BASE(d, r, ko, ks) (((d) + aq_q[r]) * scale)
#else
#define IFA_SCORE_BASE(d, r, ko, ks) (fma((ko), aq_q[r], (d)) * (ks) * scale)
#endif
#if HAS_PSE
#define IFA_SCORE_PSE(s, g, t, p)                                                                                 \
    if ((g) < gn) (s) += IFA_LOAD(Q_T, pse, pse_off + b * pse_bstride + (ulong)(h0 + (g)) * pse_hstride +      \
                                              (ulong)(t) * pse_tstride + (ulong)(p))
#else
#define IFA_SCORE_PSE(s, g, t, p)
#endif
#if HAS_ALIBI
#define IFA_SCORE_ALIBI(s, g, t, p) \
    if ((g) < gn) (s) += ifa_alibi(alibi[alibi_off + b * alibi_bstride + (ulong)(h0 + (g))], (p), len_b - qn + (t))
#else
#define IFA_SCORE_ALIBI(s, g, t, p)
#endif
#if SOFTCAP
#define IFA_SCORE_CAP(s) (s) = softcap * tanh((s) / softcap)
#else
#define IFA_SCORE_CAP(s)
#endif
#if HAS_MASK
#define IFA_SCORE_MASK(vis, t, p) \
    (vis) = (vis) && mask[mask_off + b * mask_bstride + (ulong)(t) * mask_tstride + (ulong)(p)] == 0
#else
#define IFA_SCORE_MASK(vis, t, p)
#endif
#define IFA_SCORE(s, s_vis, d, r, g, t, p, end, ko, ks)                                                          \
    float s = IFA_SCORE_BASE(d, r, ko, ks);                                                                       \
    IFA_SCORE_PSE(s, g, t, p);                                                                                    \
    IFA_SCORE_ALIBI(s, g, t, p);                                                                                  \
    IFA_SCORE_CAP(s);                                                                                             \
    int s_vis = (p) < (end) && (window <= 0 || (p) >= (end) - window);                                           \
    IFA_SCORE_MASK(s_vis, t, p)
#if MMA
/* element x of row r at key position p scored as the other paths score it (-inf where unseen or past R); IFA_MMA_SCT
 * with the key's token scale ks and offset ko (antiquant 3 to 5) */
#define IFA_MMA_SC(x, r, p) IFA_MMA_SCT(x, r, p, 0.0f, 1.0f)
#define IFA_MMA_SCT(x, r, p, ko, ks)                                                                               \
    if ((r) < R) {                                                                                                \
        IFA_ROW_GT(r, gq, tq);                                                                                    \
        const int end = IFA_END(gq, tq), pl = min((p), len - 1);                                                  \
        IFA_SCORE(sc_, vis_, (x), (r), gq, tq, pl, end, (ko), (ks));                                              \
        vis_ = vis_ && (p) < len;                                                                                 \
        (x) = vis_ ? sc_ : -INFINITY;                                                                             \
    } else                                                                                                        \
        (x) = -INFINITY
#define IFA_MMA_P(x, mn) IFA_GEXP((x) - IFA_MAX_BASE(mn))
/* the 16-row shapes' step after its score products (MMA 1, 2 and 7): sa and sb (keys c, c + 1 of rows r0 (x, y) and
 * r1 (z, w); sb at c + 8, c + 9) scored, each row's max over its quad's 16 keys, the rows' rescales al0 and al1 (1
 * while a row has seen nothing) and probabilities pa4 and pb4, the running sums and maxima moved on */
#define IFA_MMA16_SOFTMAX(sa, sb, c, pa4, pb4)                                                                     \
    IFA_MMA_SC((sa).x, r0, (c));                                                                                  \
    IFA_MMA_SC((sa).y, r0, (c) + 1);                                                                              \
    IFA_MMA_SC((sa).z, r1, (c));                                                                                  \
    IFA_MMA_SC((sa).w, r1, (c) + 1);                                                                              \
    IFA_MMA_SC((sb).x, r0, (c) + 8);                                                                              \
    IFA_MMA_SC((sb).y, r0, (c) + 9);                                                                              \
    IFA_MMA_SC((sb).z, r1, (c) + 8);                                                                              \
    IFA_MMA_SC((sb).w, r1, (c) + 9);                                                                              \
    float mt0 = fmax(fmax((sa).x, (sa).y), fmax((sb).x, (sb).y));                                                  \
    float mt1 = fmax(fmax((sa).z, (sa).w), fmax((sb).z, (sb).w));                                                  \
    IFA_QUAD(mt0, fmax);                                                                                          \
    IFA_QUAD(mt1, fmax);                                                                                          \
    const float mn0 = fmax(m0, mt0), mn1 = fmax(m1, mt1);                                                         \
    const float al0 = mn0 == -INFINITY ? 1.0f : IFA_GEXP(m0 - mn0);                                               \
    const float al1 = mn1 == -INFINITY ? 1.0f : IFA_GEXP(m1 - mn1);                                               \
    const float4 pa4 = (float4)(IFA_MMA_P((sa).x, mn0), IFA_MMA_P((sa).y, mn0), IFA_MMA_P((sa).z, mn1),           \
                                IFA_MMA_P((sa).w, mn1));                                                          \
    const float4 pb4 = (float4)(IFA_MMA_P((sb).x, mn0), IFA_MMA_P((sb).y, mn0), IFA_MMA_P((sb).z, mn1),           \
                                IFA_MMA_P((sb).w, mn1));                                                          \
    l0 = l0 * al0 + ((pa4.x + pa4.y) + (pb4.x + pb4.y));                                                          \
    l1 = l1 * al1 + ((pa4.z + pa4.w) + (pb4.z + pb4.w));                                                          \
    m0 = mn0, m1 = mn1
/* the warps' merge, after each lane's rows r0 and r1 have their maxima (m0, m1) and sums (l0, l1) over the warp:
 * the lanes where own write them, each row's max over the warps rescales this warp's accumulators (by f0, f1),
 * and m_s and l_s take each row's max and sum */
#define IFA_MMA_MERGE(own)                                                                                         \
    if (own) {                                                                                                     \
        if (r0 < R) mg_m[wp * R + r0] = m0, mg_l[wp * R + r0] = l0;                                                \
        if (r1 < R) mg_m[wp * R + r1] = m1, mg_l[wp * R + r1] = l1;                                                \
    }                                                                                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                                  \
    float mx0 = -INFINITY, mx1 = -INFINITY;                                                                        \
    for (int q = 0; q < IFA_NW; ++q) {                                                                             \
        if (r0 < R) mx0 = fmax(mx0, mg_m[q * R + r0]);                                                             \
        if (r1 < R) mx1 = fmax(mx1, mg_m[q * R + r1]);                                                             \
    }                                                                                                              \
    const float f0 = m0 == -INFINITY ? 0.0f : IFA_GEXP(m0 - mx0);                                                  \
    const float f1 = m1 == -INFINITY ? 0.0f : IFA_GEXP(m1 - mx1);                                                  \
    if (lid < R) {                                                                                                 \
        float mx = -INFINITY, sum = 0.0f;                                                                          \
        for (int q = 0; q < IFA_NW; ++q) mx = fmax(mx, mg_m[q * R + lid]);                                         \
        for (int q = 0; q < IFA_NW; ++q) /* a warp that saw nothing weighs 0 (its sum 0, or NaN: kept) */        \
            sum += mg_l[q * R + lid] * (mg_m[q * R + lid] == -INFINITY ? 0.0f : IFA_GEXP(mg_m[q * R + lid] - mx)); \
        m_s[lid] = mx;                                                                                             \
        l_s[lid] = sum;                                                                                            \
    }
/* this warp's accumulators o of rows r0 (o.x, o.y) and r1 (o.z, o.w) at columns d and d + 1 into acc, rescaled
 * by f0 and f1 (after IFA_MMA_MERGE), with the value's per-channel scale s and offset x scale c:
 * sum p (v s + c) = s sum p v + c l */
/* IFA_MMA_VCH2(o, da, db): the value's scale and offset on columns da (o.x, o.z) and db (o.y, o.w), wherever they
 * lie (the latent tile's pairs are 8 apart); IFA_MMA_VCH(o, d): on d and d + 1 */
#if VAQ == 1 || VAQ == 2
#define IFA_MMA_VCH2(o, da, db)                                                                                    \
    do {                                                                                                           \
        const float s0_ = aq_v[da], s1_ = aq_v[db], c0_ = aq_v[VDIM + (da)], c1_ = aq_v[VDIM + (db)];             \
        (o) = (float4)(fma((o).x, s0_, c0_ * l0), fma((o).y, s1_, c1_ * l0), fma((o).z, s0_, c0_ * l1),             \
                       fma((o).w, s1_, c1_ * l1));                                                                  \
    } while (0)
#else
#define IFA_MMA_VCH2(o, da, db)
#endif
#define IFA_MMA_VCH(o, d) IFA_MMA_VCH2(o, d, (d) + 1)
/* columns d and d + 1 of row r in acc as one 8-byte word (d even, acc 16-byte aligned): a warp's lanes write
 * their rows' pairs in half the local-memory accesses of two floats each */
#define IFA_ACC2(r, d) (*(__local float2 *)(acc + (r) * VDIM + (d)))
#define IFA_MMA_OUT(o_, d)                                                                                         \
    do {                                                                                                           \
        float4 o = (o_);                                                                                           \
        IFA_MMA_VCH(o, d);                                                                                         \
        if (r0 < rn) IFA_ACC2(r0, d) += o.xy * f0;                                                                 \
        if (r1 < rn) IFA_ACC2(r1, d) += o.zw * f1;                                                                 \
    } while (0)
#if IFA_MLA
    {
        /* MMA 7, the latent tile: the group's 16 query rows (the products' 16-row side) against 16 keys a step.
         * Warp wp scores its quarter of the D columns (IFA_LK 16-column steps, the query's operand words for them in
         * registers, converted once) for both 8-key halves; the four partial tiles meet in local memory (two
         * buffers in the query's room: one barrier a step) and every warp sums them in the same order, so that all
         * hold the same scores, maxima and probabilities; then each takes P.V for its quarter of the value columns
         * (IFA_LT tiles of 8: 64 accumulators a lane at D_v = 512). A step reads each key row once across the warps
         * and each value row once (MLA's value rows are the key rows' first D_v columns, just read: cache hits),
         * where the lane shape read the latent row once per 2 heads and multiplied on the CUDA cores. */
        const int lane = lid & 31, wp = lid / 32, mg = lane >> 2, mt4 = lane & 3;
        const int r0 = mg, r1 = mg + 8;
#define IFA_LK (HEAD_DIM / 64) /* a warp's 16-column score steps */
#define IFA_LT (VDIM / 32)     /* a warp's 8-column value tiles */
#define IFA_LC (VDIM / 256)    /* a lane's 8-column chunks of a value row */
/* the first of lane mt4's columns of score step s (b0's two; b1's are the next two): steps 2u and 2u + 1 from one
 * load of 8 columns, 8 (4u + mt4) into the warp's quarter; an odd last step from a load of 4 */
#define IFA_LKCOL(s)                                                                                                \
    (wp * (HEAD_DIM / 4) +                                                                                         \
     ((s) < IFA_LK / 2 * 2 ? 8 * (4 * ((s) / 2) + mt4) + 4 * ((s) % 2) : 32 * (IFA_LK / 2) + 4 * mt4))
/* the value operand's column of tile i (chunk u, word e, half h) for lane row n (mg in the operand, 2 mt4 and + 1
 * in the accumulators) */
#define IFA_LVCOL(i, n) (wp * (VDIM / 4) + 8 * (8 * ((i) / 8) + (n)) + 2 * (((i) / 2) % 4) + (i) % 2)
/* IFA_L7_W8(t, i): elements i .. i + 7 of K/V tensor t as 4 operand words (columns i, i + 1 the first);
 * IFA_L7_W4: i .. i + 3 as 2. 16-bit K/V as loaded; one-byte K/V (float8; int8 with a per-tensor scale) through
 * IFA_B4H, exact. Without MMA_AL (the plan's rows not 16 bytes apart) element-aligned loads. */
#if IFA_KV1
#if MMA_AL
#define IFA_L7_RAW8(t, i) (*(__global const uint2 *)((t) + (i)))
#define IFA_L7_RAW4(t, i) (*(__global const uint *)((t) + (i)))
#else
#define IFA_L7_RAW8(t, i) as_uint2(vload8(0, (__global const uchar *)((t) + (i))))
#define IFA_L7_RAW4(t, i) as_uint(vload4(0, (__global const uchar *)((t) + (i))))
#endif
#define IFA_L7_W8(t, i) ifa_l7_w8(IFA_L7_RAW8(t, i))
#define IFA_L7_W4(t, i) ifa_l7_w4(IFA_L7_RAW4(t, i))
#elif MMA_AL
#define IFA_L7_W8(t, i) (*(__global const uint4 *)((t) + (i)))
#define IFA_L7_W4(t, i) (*(__global const uint2 *)((t) + (i)))
#else
#define IFA_L7_W8(t, i) as_uint4(vload8(0, (__global const ushort *)((t) + (i))))
#define IFA_L7_W4(t, i) as_uint2(vload4(0, (__global const ushort *)((t) + (i))))
#endif
#if IFA_MMA_QLO
        /* the query as two parts (hi, and what hi missed: RoPE's rotated columns, another 16-bit type than the
         * K/V's), each row first brought by a power of two below 2^14 (fp16 holds it), the scores scaled back */
        float qx0 = 0.0f, qx1 = 0.0f;
        for (int d = 0; d < HEAD_DIM; ++d) {
            qx0 = fmax(qx0, r0 < R ? fabs(qs[r0 * HEAD_DIM + d]) : 0.0f);
            qx1 = fmax(qx1, r1 < R ? fabs(qs[r1 * HEAD_DIM + d]) : 0.0f);
        }
        const float qe0 = ifa_mma_qscale(qx0), qe1 = ifa_mma_qscale(qx1), qi0 = 1.0f / qe0, qi1 = 1.0f / qe1;
        uint4 qlw[IFA_LK];
#else
        const float qe0 = 1.0f, qe1 = 1.0f;
#endif
        uint4 qf[IFA_LK]; /* step s's query words: rows r0, r1 at b0's columns, then at b1's */
        _Pragma("unroll") for (int s = 0; s < IFA_LK; ++s) {
            const int c = IFA_LKCOL(s);
            const float4 x0 = r0 < R ? vload4(0, qs + r0 * HEAD_DIM + c) * qe0 : (float4)0.0f;
            const float4 x1 = r1 < R ? vload4(0, qs + r1 * HEAD_DIM + c) * qe1 : (float4)0.0f;
            qf[s] = ifa_mma_qf(x0, x1);
#if IFA_MMA_QLO
            qlw[s] = ifa_mma_ql(x0, x1, qf[s]);
#endif
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* the query's room now holds the partial scores */
#if IFA_MMA_QLO
        /* the low words past the partial scores, each lane its own, read at each step behind an opaque zero (in
         * registers they took 36 more a lane) */
        __local uint4 *const ql_l = (__local uint4 *)(qs + 2048) + (wp * 32 + lane) * IFA_LK;
        _Pragma("unroll") for (int s = 0; s < IFA_LK; ++s) ql_l[s] = qlw[s];
#endif
        float4 oacc[IFA_LT];
        _Pragma("unroll") for (int i = 0; i < IFA_LT; ++i) oacc[i] = (float4)0.0f;
        float m0 = r0 < R ? m_s[r0] : -INFINITY, m1 = r1 < R ? m_s[r1] : -INFINITY, l0 = 0.0f, l1 = 0.0f;
        int par = 0;
        /* the step loop is the work-group's (uniform: every lane reaches the products and the barrier) */
        for (int jb = first; jb < len; jb += 16, par ^= 1) {
            /* keys pa and pb (the score operand's rows mg of the two halves): this warp's quarter of each */
            const int pa = jb + mg, pb = pa + 8;
            const ulong roa = pa < len ? IFA_ROW_OFF(pa) : 0, rob = pb < len ? IFA_ROW_OFF(pb) : 0;
            uint ka[2 * IFA_LK], kb[2 * IFA_LK];
            _Pragma("unroll") for (int u = 0; u < IFA_LK / 2; ++u) {
                const ulong c = (ulong)IFA_LKCOL(2 * u);
                const uint4 x = pa < len ? IFA_L7_W8(k, k_off + roa + c) : (uint4)0;
                const uint4 y = pb < len ? IFA_L7_W8(k, k_off + rob + c) : (uint4)0;
                ka[4 * u] = x.x, ka[4 * u + 1] = x.y, ka[4 * u + 2] = x.z, ka[4 * u + 3] = x.w;
                kb[4 * u] = y.x, kb[4 * u + 1] = y.y, kb[4 * u + 2] = y.z, kb[4 * u + 3] = y.w;
            }
#if IFA_LK % 2
            {
                const ulong c = (ulong)IFA_LKCOL(IFA_LK - 1);
                const uint2 x = pa < len ? IFA_L7_W4(k, k_off + roa + c) : (uint2)0;
                const uint2 y = pb < len ? IFA_L7_W4(k, k_off + rob + c) : (uint2)0;
                ka[2 * IFA_LK - 2] = x.x, ka[2 * IFA_LK - 1] = x.y, kb[2 * IFA_LK - 2] = y.x, kb[2 * IFA_LK - 1] = y.y;
            }
#endif
            /* value rows jb + 2 mt4, + 1, + 8, + 9 (the value operand's pairs): this warp's quarter, a lane's chunks
             * 8 u + mg */
            uint vr[4][4 * IFA_LC];
            _Pragma("unroll") for (int t = 0; t < 4; ++t) {
                const int pv = jb + 2 * mt4 + (t & 1) + 8 * (t >> 1);
                const ulong ro = pv < len ? IFA_ROW_OFF(pv) : 0;
                _Pragma("unroll") for (int u = 0; u < IFA_LC; ++u) {
                    const uint4 x = IFA_VREAD(pv) ? IFA_L7_W8(v, v_off + ro + (ulong)IFA_LVCOL(8 * u, mg)) : (uint4)0;
                    vr[t][4 * u] = x.x, vr[t][4 * u + 1] = x.y, vr[t][4 * u + 2] = x.z, vr[t][4 * u + 3] = x.w;
                }
            }
            /* this warp's share of the scores: rows r0 (x, y), r1 (z, w) at keys jb + 2 mt4, + 1 (s0) and + 8, + 9
             * (s1) */
            float4 s0 = (float4)0.0f, s1 = (float4)0.0f;
#if IFA_MMA_QLO
            uint qz;
            IFA_QZERO(qz);
#endif
            IFA_MMA_UNROLL for (int s = 0; s < IFA_LK; ++s) {
                IFA_MMA(s0, qf[s], (uint2)(ka[2 * s], ka[2 * s + 1]));
                IFA_MMA(s1, qf[s], (uint2)(kb[2 * s], kb[2 * s + 1]));
#if IFA_MMA_QLO
                const uint4 ql = ql_l[s + qz];
                IFA_MMA(s0, ql, (uint2)(ka[2 * s], ka[2 * s + 1]));
                IFA_MMA(s1, ql, (uint2)(kb[2 * s], kb[2 * s + 1]));
#endif
            }
            {
                __local float4 *const xw = (__local float4 *)qs + ((par * 4 + wp) * 32 + lane) * 2;
                xw[0] = s0, xw[1] = s1;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            s0 = (float4)0.0f, s1 = (float4)0.0f;
            for (int q = 0; q < 4; ++q) {
                __local const float4 *const xr = (__local const float4 *)qs + ((par * 4 + q) * 32 + lane) * 2;
                s0 += xr[0], s1 += xr[1];
            }
#if IFA_MMA_QLO
            s0.xy *= qi0, s0.zw *= qi1, s1.xy *= qi0, s1.zw *= qi1;
#endif
            IFA_MMA16_SOFTMAX(s0, s1, jb + 2 * mt4, p0, p1);
            /* P as the 16-row operand over the step's 16 keys, in two parts: hi, and what hi missed */
            const uint4 ph = ifa_frag_hi(p0, p1), pl = ifa_frag_lo(p0, p1, ph);
            /* the rescale only where a row's max moved in some lane of the warp (exp(0) is exactly 1) */
            if (ifa_warp_any(al0 != 1.0f || al1 != 1.0f))
                _Pragma("unroll") for (int i = 0; i < IFA_LT; ++i) oacc[i].xy *= al0, oacc[i].zw *= al1;
            /* tile i's value operand: the words of rows 2 mt4 and + 1 (+ 8 and + 9) paired, low or high halves */
            IFA_MMA_UNROLL for (int i = 0; i < IFA_LT; ++i) {
                const int w = 4 * (i / 8) + (i / 2) % 4;
                const uint sel = i % 2 ? 0x7632u : 0x5410u;
                const uint2 vb = (uint2)(ifa_prmt(vr[0][w], vr[1][w], sel), ifa_prmt(vr[2][w], vr[3][w], sel));
                float4 oi = oacc[i];
                IFA_MMA(oi, ph, vb);
                IFA_MMA(oi, pl, vb);
                oacc[i] = oi;
            }
        }
        IFA_QUAD(l0, ifa_add);
        IFA_QUAD(l1, ifa_add);
        barrier(CLK_LOCAL_MEM_FENCE); /* the last partial scores read: the room takes the accumulators */
        _Pragma("unroll") for (int i = 0; i < IFA_LT; ++i) {
            const int c0 = IFA_LVCOL(i, 2 * mt4), c1 = IFA_LVCOL(i, 2 * mt4 + 1);
            float4 o = oacc[i];
            IFA_MMA_VCH2(o, c0, c1); /* the value's per-tensor scale and offset (VAQ 2) */
            if (r0 < R) acc[r0 * VDIM + c0] = o.x, acc[r0 * VDIM + c1] = o.y;
            if (r1 < R) acc[r1 * VDIM + c0] = o.z, acc[r1 * VDIM + c1] = o.w;
        }
        if (wp == 0 && mt4 == 0) {
            if (r0 < R) m_s[r0] = m0, l_s[r0] = l0;
            if (r1 < R) m_s[r1] = m1, l_s[r1] = l1;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#elif MMA >= 3
    {
#if !IFA_MMA_PF
        IFA_MMA_LANES;
#endif
#if IFA_MMA_QLO
        /* each row's power of two (IFA_MMA_QLO above): query row mg's, and rows r0 and r1's inverses for the scores */
        float qx = 0.0f, qx0 = 0.0f, qx1 = 0.0f;
        for (int d = 0; d < HEAD_DIM; ++d) {
            qx = fmax(qx, mg < R ? fabs(qs[mg * HEAD_DIM + d]) : 0.0f);
            qx0 = fmax(qx0, r0 < R ? fabs(qs[r0 * HEAD_DIM + d]) : 0.0f);
            qx1 = fmax(qx1, r1 < R ? fabs(qs[r1 * HEAD_DIM + d]) : 0.0f);
        }
        const float qe = ifa_mma_qscale(qx), qi0 = 1.0f / ifa_mma_qscale(qx0), qi1 = 1.0f / ifa_mma_qscale(qx1);
#else
        const float qe = 1.0f;
#endif
        /* step s2's query operand: columns IFA_KWCOL(2 s2) .. + 3 of row mg (the key operand's terms in the same
         * order), from qs at offset z; with IFA_MMA_QSTEP read and converted at each step (z an opaque zero on
         * NVIDIA, so that the compiler does not hoist them back into registers), else once into registers */
#define IFA_MMA_Q4(s2, z) (mg < R ? vload4(0, qs + mg * HEAD_DIM + IFA_KWCOL(2 * (s2)) + (z)) * qe : (float4)0.0f)
#define IFA_MMA_QH(q4) ((uint2)(ifa_h2((q4).x, (q4).y), ifa_h2((q4).z, (q4).w)))
#define IFA_MMA_QL(q4, h)                                                                                          \
    ((uint2)(ifa_h2((q4).x - ifa_f2((h).x).x, (q4).y - ifa_f2((h).x).y),                                          \
             ifa_h2((q4).z - ifa_f2((h).y).x, (q4).w - ifa_f2((h).y).y)))
#if IFA_MMA_QLOC
        /* LANE_QL (lane_q_local): the query's operand words once into local memory by warp 0, read at each step
         * behind an opaque zero: the registers of the words (32 with the two parts at D = 128) left to more
         * work-groups a multiprocessor */
/* part (0 hi, 1 lo) of lane (mg, mt4)'s query words of step column s2 */
#define IFA_MQ_W(part, s2) mq_w[((8 * (part) + mg) * IFA_KS + (s2)) * 4 + mt4]
        if (wp == 0)
            for (int s2 = 0; s2 < IFA_KS; ++s2) {
                const float4 q4 = IFA_MMA_Q4(s2, 0);
                const uint2 h = IFA_MMA_QH(q4);
                IFA_MQ_W(0, s2) = h;
#if IFA_MMA_QLO
                IFA_MQ_W(1, s2) = IFA_MMA_QL(q4, h);
#endif
            }
        barrier(CLK_LOCAL_MEM_FENCE);
#elif !IFA_MMA_QSTEP
        uint2 qf[IFA_KS];
#if IFA_MMA_QLO
        uint2 ql[IFA_KS];
#endif
        _Pragma("unroll") for (int s2 = 0; s2 < IFA_KS; ++s2) {
            const float4 q4 = IFA_MMA_Q4(s2, 0);
            qf[s2] = IFA_MMA_QH(q4);
#if IFA_MMA_QLO
            ql[s2] = IFA_MMA_QL(q4, qf[s2]);
#endif
        }
#endif
        /* value tile i: oacc[i] holds rows r0 and r1 (x, y) of column IFA_VWCOL(i) and (z, w) of the next */
        float4 oacc[IFA_VT];
        _Pragma("unroll") for (int i = 0; i < IFA_VT; ++i) oacc[i] = (float4)0.0f;
        float m0 = r0 < R ? m_s[r0] : -INFINITY, m1 = r1 < R ? m_s[r1] : -INFINITY, l0 = 0.0f, l1 = 0.0f;
#if VAQ >= 3
        float co0 = 0.0f, co1 = 0.0f; /* rows r0 and r1's sums of p x the value's token scale x its offset */
#endif
/* x over the 8 lanes that share the lane's query rows (same mt4) by op, in place */
#define IFA_GRED(x, op)                                                                                            \
    do {                                                                                                           \
        IFA_XSTEP(x, op, 4);                                                                                       \
        IFA_XSTEP(x, op, 8);                                                                                       \
        IFA_XSTEP(x, op, 16);                                                                                      \
    } while (0)
        /* the step loop is the work-group's (uniform: every lane reaches the products) */
        for (int jb = first; jb < len; jb += IFA_NW * 16) {
            const int pa = jb + wp * 16 + mg, pb = pa + 8;
#if IFA_MMA_PF
            /* the next step's rows (MMA 6: the step after it's) go out before this step's math (past len they are
             * zeros, nothing read); this step's, loaded during a step before, become operand words */
            uint nka[IFA_MMA_RK], nkb[IFA_MMA_RK], nv0[IFA_MMA_RV], nv1[IFA_MMA_RV], nv2[IFA_MMA_RV], nv3[IFA_MMA_RV];
            IFA_MMA_RAW_LOADS(jb + (IFA_MMA_PF2 ? 2 : 1) * IFA_NW * 16, nka, nkb, nv0, nv1, nv2, nv3);
            uint kaw[IFA_KW], kbw[IFA_KW], vw0[IFA_VT], vw1[IFA_VT], vw2[IFA_VT], vw3[IFA_VT];
            IFA_MMA_CVT(kaw, rka, IFA_MMA_RK);
            IFA_MMA_CVT(kbw, rkb, IFA_MMA_RK);
            IFA_MMA_CVT(vw0, rv0, IFA_MMA_RV);
            IFA_MMA_CVT(vw1, rv1, IFA_MMA_RV);
            IFA_MMA_CVT(vw2, rv2, IFA_MMA_RV);
            IFA_MMA_CVT(vw3, rv3, IFA_MMA_RV);
#else
            uint kaw[IFA_KW], kbw[IFA_KW], vw0[IFA_VT], vw1[IFA_VT], vw2[IFA_VT], vw3[IFA_VT];
            IFA_MMA_KEYS(jb, kaw, kbw);
#if !IFA_MMA_VLATE
            IFA_MMA_VALS(jb, vw0, vw1, vw2, vw3);
#endif
#endif
            /* S^T: keys mg, mg + 8 (x, y; z, w) of query rows r0, r1 (x, z; y, w) */
            float4 st = (float4)0.0f;
#if IFA_MMA_QSTEP || IFA_MMA_QLOC
            uint qz;
            IFA_QZERO(qz);
#endif
            IFA_MMA_UNROLL for (int s2 = 0; s2 < IFA_KS; ++s2) {
                const uint4 ka = (uint4)(kaw[2 * s2], kbw[2 * s2], kaw[2 * s2 + 1], kbw[2 * s2 + 1]);
#if IFA_MMA_QLOC
                IFA_MMA(st, ka, IFA_MQ_W(0, s2 + qz));
#if IFA_MMA_QLO
                IFA_MMA(st, ka, IFA_MQ_W(1, s2 + qz));
#endif
#elif IFA_MMA_QSTEP
                const float4 q4 = IFA_MMA_Q4(s2, qz);
                const uint2 qh = IFA_MMA_QH(q4);
                IFA_MMA(st, ka, qh);
#if IFA_MMA_QLO
                IFA_MMA(st, ka, IFA_MMA_QL(q4, qh));
#endif
#else
                IFA_MMA(st, ka, qf[s2]);
#if IFA_MMA_QLO
                IFA_MMA(st, ka, ql[s2]);
#endif
#endif
            }
#if IFA_MMA_QLO
            st.xz *= qi0, st.yw *= qi1;
#endif
#if IFA_MMA_VLATE
            /* the value rows after the scores (a compiler barrier on NVIDIA: not live with the key words) */
            IFA_MMA_FENCE;
            IFA_MMA_VALS(jb, vw0, vw1, vw2, vw3);
#endif
#if ANTIQUANT >= 3
            /* keys pa and pb's token scales and offsets */
            const float ksa = pa < len ? AQ_ROW_SCALE(AQ_IDX(IFA_AQ_POS(ANTIQUANT, pa), 0)) : 0.0f;
            const float koa = pa < len ? AQ_ROW_OFFSET(AQ_IDX(IFA_AQ_POS(ANTIQUANT, pa), 0)) : 0.0f;
            const float ksb = pb < len ? AQ_ROW_SCALE(AQ_IDX(IFA_AQ_POS(ANTIQUANT, pb), 0)) : 0.0f;
            const float kob = pb < len ? AQ_ROW_OFFSET(AQ_IDX(IFA_AQ_POS(ANTIQUANT, pb), 0)) : 0.0f;
#else
            const float ksa = 1.0f, koa = 0.0f, ksb = 1.0f, kob = 0.0f;
#endif
            IFA_MMA_SCT(st.x, r0, pa, koa, ksa);
            IFA_MMA_SCT(st.y, r1, pa, koa, ksa);
            IFA_MMA_SCT(st.z, r0, pb, kob, ksb);
            IFA_MMA_SCT(st.w, r1, pb, kob, ksb);
            /* each row's max over the step's 16 keys: the lane's 2, then the 8 lanes of its rows */
            float mt0 = fmax(st.x, st.z), mt1 = fmax(st.y, st.w);
            IFA_GRED(mt0, fmax);
            IFA_GRED(mt1, fmax);
            const float mn0 = fmax(m0, mt0), mn1 = fmax(m1, mt1);
            const float al0 = mn0 == -INFINITY ? 1.0f : IFA_GEXP(m0 - mn0);
            const float al1 = mn1 == -INFINITY ? 1.0f : IFA_GEXP(m1 - mn1);
            const float4 p4 = (float4)(IFA_MMA_P(st.x, mn0), IFA_MMA_P(st.y, mn1), IFA_MMA_P(st.z, mn0),
                                       IFA_MMA_P(st.w, mn1));
            l0 = l0 * al0 + (p4.x + p4.z);
            l1 = l1 * al1 + (p4.y + p4.w);
            m0 = mn0, m1 = mn1;
#if VAQ >= 3
            /* value token scales (antiquant 3 to 5): p (v + o) s = (p s) v + p s o. P x s enters the products, each
             * row brought by a power of two (its largest p s over the step's 16 keys: 3 shuffles) below 2^14 so that
             * fp16 keeps it whatever the scales' range, the step's products scaled back exactly; the rows' sums of
             * p s o (co0, co1) are added to every column at the end */
            const float vsa = IFA_VREAD(pa) ? VAQ_SCALE(VAQ_IDX(IFA_AQ_POS(VAQ, pa), 0)) : 0.0f;
            const float vsb = IFA_VREAD(pb) ? VAQ_SCALE(VAQ_IDX(IFA_AQ_POS(VAQ, pb), 0)) : 0.0f;
            const float voa = IFA_VREAD(pa) ? VAQ_OFFSET(VAQ_IDX(IFA_AQ_POS(VAQ, pa), 0)) : 0.0f;
            const float vob = IFA_VREAD(pb) ? VAQ_OFFSET(VAQ_IDX(IFA_AQ_POS(VAQ, pb), 0)) : 0.0f;
            float4 ps = p4 * (float4)(vsa, vsa, vsb, vsb);
            co0 = co0 * al0 + fma(ps.x, voa, ps.z * vob);
            co1 = co1 * al1 + fma(ps.y, voa, ps.w * vob);
            float mp0 = fmax(ps.x, ps.z), mp1 = fmax(ps.y, ps.w);
            IFA_GRED(mp0, fmax);
            IFA_GRED(mp1, fmax);
            const float ps0 = ifa_mma_qscale(mp0), ps1 = ifa_mma_qscale(mp1);
            const float pi0 = 1.0f / ps0, pi1 = 1.0f / ps1;
            ps *= (float4)(ps0, ps1, ps0, ps1);
#else
            const float4 ps = p4;
#endif
            /* P^T as the 8-column operand, in two parts (hi, and what hi missed): keys mg (mg + 8) of rows r0, r1
             * are an 8 x 8 matrix's row mg, columns 2 mt4 and + 1; transposed, row mg of P over keys 2 mt4, + 1 */
            const uint2 pw = (uint2)(ifa_h2(ps.x, ps.y), ifa_h2(ps.z, ps.w));
            const float2 e0 = ifa_f2(pw.x), e1 = ifa_f2(pw.y);
            const uint2 pl = (uint2)(ifa_h2(ps.x - e0.x, ps.y - e0.y), ifa_h2(ps.z - e1.x, ps.w - e1.y));
            uint2 bh, bl;
            IFA_MOVT(bh.x, pw.x);
            IFA_MOVT(bh.y, pw.y);
            IFA_MOVT(bl.x, pl.x);
            IFA_MOVT(bl.y, pl.y);
#if VAQ < 3
            /* the accumulators' rescale only where a row's max moved, in some lane of the warp: exp(0) is exactly 1,
             * so skipping it changes no bit, and once a decode's max settles the step's 2 x IFA_VT multiplies go */
            if (ifa_warp_any(al0 != 1.0f || al1 != 1.0f))
                IFA_MMA_UNROLL for (int i = 0; i < IFA_VT; ++i) oacc[i].xz *= al0, oacc[i].yw *= al1;
#endif
            /* O^T tile by tile: value tile i's operand pairs the words of value rows 2 mt4 and + 1 (+ 8 and + 9):
             * column IFA_VWCOL(i) as its row mg, the next as row mg + 8 */
            IFA_MMA_UNROLL for (int i = 0; i < IFA_VT; ++i) {
                const uint4 va = (uint4)(ifa_prmt(vw0[i], vw1[i], 0x5410u), ifa_prmt(vw0[i], vw1[i], 0x7632u),
                                         ifa_prmt(vw2[i], vw3[i], 0x5410u), ifa_prmt(vw2[i], vw3[i], 0x7632u));
                float4 oi = oacc[i];
#if VAQ >= 3
                float4 pr = (float4)0.0f;
                IFA_MMA(pr, va, bh);
                IFA_MMA(pr, va, bl);
                oi.xz = fma(oi.xz, (float2)al0, pr.xz * pi0);
                oi.yw = fma(oi.yw, (float2)al1, pr.yw * pi1);
#else
                IFA_MMA(oi, va, bh);
                IFA_MMA(oi, va, bl);
#endif
                oacc[i] = oi;
            }
#if IFA_MMA_PF2
            _Pragma("unroll") for (int i = 0; i < IFA_MMA_RK; ++i) rka[i] = ska[i], rkb[i] = skb[i], ska[i] = nka[i], skb[i] = nkb[i];
            _Pragma("unroll") for (int i = 0; i < IFA_MMA_RV; ++i) {
                rv0[i] = sv0[i], rv1[i] = sv1[i], rv2[i] = sv2[i], rv3[i] = sv3[i];
                sv0[i] = nv0[i], sv1[i] = nv1[i], sv2[i] = nv2[i], sv3[i] = nv3[i];
            }
#elif IFA_MMA_PF
            _Pragma("unroll") for (int i = 0; i < IFA_MMA_RK; ++i) rka[i] = nka[i], rkb[i] = nkb[i];
            _Pragma("unroll") for (int i = 0; i < IFA_MMA_RV; ++i) rv0[i] = nv0[i], rv1[i] = nv1[i], rv2[i] = nv2[i], rv3[i] = nv3[i];
#endif
        }
        /* each row's sum over its 8 lanes, then the warps' merge */
        IFA_GRED(l0, ifa_add);
        IFA_GRED(l1, ifa_add);
#if VAQ >= 3
        IFA_GRED(co0, ifa_add);
        IFA_GRED(co1, ifa_add);
#endif
        IFA_MMA_MERGE(mg == 0);
        for (int q = 0; q < IFA_NW; ++q) {
            if (wp == q)
                /* tile i's rows r0, r1 at columns IFA_VWCOL(i), + 1 (x, y; z, w) in IFA_MMA_OUT's order */
                _Pragma("unroll") for (int i = 0; i < IFA_VT; ++i) {
#if VAQ >= 3
                    IFA_MMA_OUT(oacc[i].xzyw + (float4)(co0, co0, co1, co1), IFA_VWCOL(i));
#else
                    IFA_MMA_OUT(oacc[i].xzyw, IFA_VWCOL(i));
#endif
                }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
#else
    {
        /* warp wp, lane (mg, mt4): query rows r0 and r1 of every tile, a quarter of the key and value rows
         * (IFA_KWCOL) */
        const int lane = lid & 31, wp = lid / 32, mg = lane >> 2, mt4 = lane & 3;
        const int r0 = mg, r1 = mg + 8;
        /* the query as the products' 16-row operand: step s2 holds columns IFA_KWCOL(2 s2) .. + 3 of rows r0 and r1
         * (the key's operand takes the same columns: the terms' order within a step is the lanes' choice), zero
         * past R */
/* rows r0 and r1's 4 columns of step s2 from qs at offset z (0), times qe0 and qe1 */
#define IFA_MMA_Q0(s2, z) (r0 < R ? vload4(0, qs + r0 * HEAD_DIM + IFA_KWCOL(2 * (s2)) + (z)) * qe0 : (float4)0.0f)
#define IFA_MMA_Q1(s2, z) (r1 < R ? vload4(0, qs + r1 * HEAD_DIM + IFA_KWCOL(2 * (s2)) + (z)) * qe1 : (float4)0.0f)
#if IFA_MMA_QLO
        /* each row's power of two (its quad's largest element: 2 shuffles) */
        float qe0 = 1.0f, qe1 = 1.0f, qm0 = 0.0f, qm1 = 0.0f;
        _Pragma("unroll") for (int s2 = 0; s2 < IFA_KS; ++s2) {
            const float4 a = fabs(IFA_MMA_Q0(s2, 0)), b = fabs(IFA_MMA_Q1(s2, 0));
            qm0 = fmax(qm0, fmax(fmax(a.x, a.y), fmax(a.z, a.w)));
            qm1 = fmax(qm1, fmax(fmax(b.x, b.y), fmax(b.z, b.w)));
        }
        IFA_QUAD(qm0, fmax);
        IFA_QUAD(qm1, fmax);
        qe0 = ifa_mma_qscale(qm0), qe1 = ifa_mma_qscale(qm1);
        /* the scores back by the inverse powers of two */
        const float qi0 = 1.0f / qe0, qi1 = 1.0f / qe1;
#else
        const float qe0 = 1.0f, qe1 = 1.0f;
#endif
#if MMA == 2
        /* MMA 2 (lean): the fragments from local memory at each use, behind an offset the compiler cannot see
         * through (an asm zero on NVIDIA, as lane_q_local's), so that they are not hoisted back into registers */
#define IFA_MMA_Q(s2) ifa_mma_qf(IFA_MMA_Q0(s2, qz), IFA_MMA_Q1(s2, qz))
#define IFA_MMA_QL(s2) ifa_mma_ql(IFA_MMA_Q0(s2, qz), IFA_MMA_Q1(s2, qz), IFA_MMA_Q(s2))
#else
        uint4 qf[IFA_KS];
        _Pragma("unroll") for (int s2 = 0; s2 < IFA_KS; ++s2) qf[s2] = ifa_mma_qf(IFA_MMA_Q0(s2, 0), IFA_MMA_Q1(s2, 0));
#define IFA_MMA_Q(s2) qf[s2]
#if IFA_MMA_QLO
        uint4 ql[IFA_KS];
        _Pragma("unroll") for (int s2 = 0; s2 < IFA_KS; ++s2)
            ql[s2] = ifa_mma_ql(IFA_MMA_Q0(s2, 0), IFA_MMA_Q1(s2, 0), qf[s2]);
#define IFA_MMA_QL(s2) ql[s2]
#endif
#endif
        float4 oacc[IFA_DT];
        _Pragma("unroll") for (int j = 0; j < IFA_DT; ++j) oacc[j] = (float4)0.0f;
        float m0 = r0 < R ? m_s[r0] : -INFINITY, m1 = r1 < R ? m_s[r1] : -INFINITY, l0 = 0.0f, l1 = 0.0f;
        /* the step loop is the work-group's (uniform: every lane reaches the products) */
        for (int jb = first; jb < len; jb += IFA_NW * 16) {
            /* this lane's key rows: column mg of the step's two 8-row tiles */
            const int pa = jb + wp * 16 + mg, pb = pa + 8;
            const ulong roa = pa < len ? IFA_ROW_OFF(pa) : 0, rob = pb < len ? IFA_ROW_OFF(pb) : 0;
            uint kaw[IFA_KW], kbw[IFA_KW], vaw[IFA_KW], vbw[IFA_KW];
            IFA_MMA_ROWS(kaw, kbw, k, k_off)
#if MMA == 2
            uint qz;
            IFA_QZERO(qz);
#else
            IFA_MMA_ROWS(vaw, vbw, v, v_off)
#endif
            /* scores: tile a's rows r0, r1 at key columns 2 mt4, + 1 (sa), tile b's 8 rows later (sb) */
            float4 sa = (float4)0.0f, sb = (float4)0.0f;
            IFA_MMA_UNROLL for (int s2 = 0; s2 < IFA_KS; ++s2) {
                IFA_MMA(sa, IFA_MMA_Q(s2), (uint2)(kaw[2 * s2], kaw[2 * s2 + 1]));
                IFA_MMA(sb, IFA_MMA_Q(s2), (uint2)(kbw[2 * s2], kbw[2 * s2 + 1]));
#if IFA_MMA_QLO
                IFA_MMA(sa, IFA_MMA_QL(s2), (uint2)(kaw[2 * s2], kaw[2 * s2 + 1]));
                IFA_MMA(sb, IFA_MMA_QL(s2), (uint2)(kbw[2 * s2], kbw[2 * s2 + 1]));
#endif
            }
#if IFA_MMA_QLO
            sa.xy *= qi0, sa.zw *= qi1, sb.xy *= qi0, sb.zw *= qi1;
#endif
#if MMA == 2
            /* the value rows after the scores (a compiler barrier on NVIDIA: their words and the key words are
             * not live together) */
            IFA_MMA_FENCE;
            IFA_MMA_ROWS(vaw, vbw, v, v_off)
#endif
            IFA_MMA16_SOFTMAX(sa, sb, jb + wp * 16 + 2 * mt4, pa4, pb4);
            /* P as the 16-row operand over the step's 16 keys, in two fp16 parts: hi, and what hi missed */
            const uint4 ph = ifa_frag_hi(pa4, pb4), pl4 = ifa_frag_lo(pa4, pb4, ph);
            /* the accumulators' rescale only where a row's max moved in some lane of the warp (as the transposed
             * shape's: exactly 1 otherwise) */
            if (ifa_warp_any(al0 != 1.0f || al1 != 1.0f))
                IFA_MMA_UNROLL for (int j = 0; j < IFA_DT; ++j) oacc[j].xy *= al0, oacc[j].zw *= al1;
            /* P.V tile by tile: value tile j's operand is the transpose of the lanes' word j of their value rows */
            IFA_MMA_UNROLL for (int j = 0; j < IFA_DT; ++j) {
                uint b0, b1;
                IFA_MOVT(b0, vaw[j]);
                IFA_MOVT(b1, vbw[j]);
                float4 oj = oacc[j];
                IFA_MMA(oj, ph, (uint2)(b0, b1));
                IFA_MMA(oj, pl4, (uint2)(b0, b1));
                oacc[j] = oj;
            }
        }
        /* each row's sum over its quad, then the warps' merge: each row's max over the warps, every warp's sum and
         * accumulator rescaled to it, the accumulators added into acc one warp at a time */
        IFA_QUAD(l0, ifa_add);
        IFA_QUAD(l1, ifa_add);
        IFA_MMA_MERGE(mt4 == 0);
        for (int q = 0; q < IFA_NW; ++q) {
            if (wp == q)
                _Pragma("unroll") for (int j = 0; j < IFA_DT; ++j) IFA_MMA_OUT(oacc[j], IFA_KWCOL(j));
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
#endif
#elif LANES
    {
        /* lane ln of group grp: columns IFA_LX(c) .. + 7 of the key rows (those < D; past D, IFA_LPAD, none) and
         * value rows (< D_v) the group takes, chunk c; IFA_LXQ(c): its query columns, the last 8 past D (finite,
         * times zero keys) */
        const int ln = lid % IFA_LN, grp = lid / IFA_LN, x = ln * 8;
#define IFA_LX(c) (x + (c) * IFA_LW)
#define IFA_LXQ(c) (IFA_LPAD ? min(IFA_LX(c), HEAD_DIM - 8) : IFA_LX(c))
        float8 o[R][IFA_LCV];
        float m[R], l[R];
#if LANE_QL
        /* LANE_QL: the query's 8 columns of row r from local memory at each use (qs + qz, qz a zero set each step:
         * on NVIDIA an asm result the compiler cannot see through, so the loads are not hoisted out of the step
         * loop into the registers they are meant to save) */
#define IFA_QV(r, c) vload8(0, qs + (r) * HEAD_DIM + IFA_LXQ(c) + qz)
#else
        float8 qv[R][IFA_LCK];
#define IFA_QV(r, c) qv[r][c]
#endif
        _Pragma("unroll") for (int r = 0; r < R; ++r) {
#if !LANE_QL
            _Pragma("unroll") for (int c = 0; c < IFA_LCK; ++c) qv[r][c] = vload8(0, qs + r * HEAD_DIM + IFA_LXQ(c));
#endif
            _Pragma("unroll") for (int c = 0; c < IFA_LCV; ++c) o[r][c] = (float8)0.0f;
            m[r] = m_s[r];
            l[r] = 0.0f;
        }
/* d = row r's partial dot product with the step's key row u: its chunks' */
#define IFA_LDOT(d, r, u)                                                                                          \
    d = ifa_dot8(IFA_QV(r, 0), kk[u][0]);                                                                          \
    _Pragma("unroll") for (int c_ = 1; c_ < IFA_LCK; ++c_) d += ifa_dot8(IFA_QV(r, c_), kk[u][c_])
#if VAQ == 1 || VAQ == 2
        float8 vsc[IFA_LCV], vof[IFA_LCV];
        _Pragma("unroll") for (int c = 0; c < IFA_LCV; ++c) {
            vsc[c] = IFA_LX(c) < VDIM ? vload8(0, aq_v + IFA_LX(c)) : (float8)0.0f;
            vof[c] = IFA_LX(c) < VDIM ? vload8(0, aq_v + VDIM + IFA_LX(c)) : (float8)0.0f;
        }
#endif
        /* the group's rows of the step at jb, raw, into rk and rv, with their per-token scale and offset (token
         * antiquant modes) in the same round trip: zero past the block's end */
        ifa_raw8 rk[LANES][IFA_LCK], rv[LANES][IFA_LCV];
#if MAX_PASS
#define IFA_LANE_VLOAD(u, ro)
#else
#define IFA_LANE_VLOAD(u, ro)                                                                                      \
    _Pragma("unroll") for (int c_ = 0; c_ < IFA_LCV; ++c_) if (IFA_LX(c_) < VDIM)                                  \
        rv[u][c_] = IFA_RAW8(v, v_off + (ro) + (ulong)IFA_LX(c_))
#endif
/* a token mode's scale and offset at position p into sa[u] and oa[u] (zero where not read: past the block's end;
 * for the value's, READ is IFA_VREAD) */
#define IFA_LANE_TS(sa, oa, mode, IDX, SCALE, OFFSET, u, p, READ)                                                \
    sa[u] = READ(p) ? SCALE(IDX(IFA_AQ_POS(mode, p), 0)) : 0.0f,                                                  \
    oa[u] = READ(p) ? OFFSET(IDX(IFA_AQ_POS(mode, p), 0)) : 0.0f
#define IFA_KREAD(p) ((p) < len)
#if ANTIQUANT >= 3
        float rks[LANES], rko[LANES];
#define IFA_LANE_KS(u, p) IFA_LANE_TS(rks, rko, ANTIQUANT, AQ_IDX, AQ_ROW_SCALE, AQ_ROW_OFFSET, u, p, IFA_KREAD)
#else
#define IFA_LANE_KS(u, p)
#endif
#if VAQ >= 3 && !MAX_PASS
        float rvs[LANES], rvo[LANES];
#define IFA_LANE_VS(u, p) IFA_LANE_TS(rvs, rvo, VAQ, VAQ_IDX, VAQ_SCALE, VAQ_OFFSET, u, p, IFA_VREAD)
#else
#define IFA_LANE_VS(u, p)
#endif
#define IFA_LANE_LOAD(jb)                                                                                          \
    _Pragma("unroll") for (int u = 0; u < LANES; ++u) {                                                           \
        const int p = (jb) + grp * LANES + u;                                                                     \
        _Pragma("unroll") for (int c_ = 0; c_ < IFA_LCK; ++c_) rk[u][c_] = 0;                                     \
        _Pragma("unroll") for (int c_ = 0; c_ < IFA_LCV; ++c_) rv[u][c_] = 0;                                     \
        if (p < len) {                                                                                            \
            const ulong ro = IFA_ROW_OFF(p);                                                                      \
            _Pragma("unroll") for (int c_ = 0; c_ < IFA_LCK; ++c_) if (!IFA_LPAD || IFA_LX(c_) < HEAD_DIM)        \
                rk[u][c_] = IFA_RAW8(k, k_off + ro + (ulong)IFA_LX(c_));                                          \
            if (!IFA_HIDDEN(p)) IFA_LANE_VLOAD(u, ro);                                                            \
        }                                                                                                         \
        IFA_LANE_KS(u, p);                                                                                        \
        IFA_LANE_VS(u, p);                                                                                        \
    }
#if LANE_PF
        IFA_LANE_LOAD(first)
#endif
#if LANE_SC
        /* this lane's share of a step's sums (IFA_SOWN from s0: row r_own, key rows u0 ..), the warp lane (NVIDIA)
         * or work-item (elsewhere) of its group's first lane, its row's max and its part of the row's sum */
        const int s0 = ln / IFA_SREP * IFA_SOWN, r_own = s0 / LANES, u0 = s0 % LANES;
        const int lane_base = IFA_NV ? (lid & 31) - ln : lid - ln;
        float m_own = m_s[r_own], l_own = 0.0f;
#endif
        /* the step loop is the work-group's (uniform: every lane of a warp reaches the shuffles) */
        for (int jb = first; jb < len; jb += IFA_NG * LANES) {
            const int j0 = jb + grp * LANES;
            float8 kk[LANES][IFA_LCK], vv[LANES][IFA_LCV];
#if LANE_QL
            uint qz;
            IFA_QZERO(qz);
#endif
#if ANTIQUANT >= 3
            float ks_u[LANES], ko_u[LANES];
#endif
#if VAQ >= 3 && !MAX_PASS
            float vs_u[LANES], vo_u[LANES];
#endif
            /* the step's rows (and token scales) as floats */
#define IFA_LANE_TAKE                                                                                              \
    _Pragma("unroll") for (int u = 0; u < LANES; ++u) {                                                           \
        _Pragma("unroll") for (int c_ = 0; c_ < IFA_LCK; ++c_) kk[u][c_] = ifa_cvt8(rk[u][c_]);                   \
        _Pragma("unroll") for (int c_ = 0; c_ < IFA_LCV; ++c_) vv[u][c_] = ifa_cvt8(rv[u][c_]);                   \
        IFA_LANE_TAKE_KS(u);                                                                                      \
        IFA_LANE_TAKE_VS(u);                                                                                      \
    }
#if ANTIQUANT >= 3
#define IFA_LANE_TAKE_KS(u) ks_u[u] = rks[u], ko_u[u] = rko[u]
#else
#define IFA_LANE_TAKE_KS(u)
#endif
#if VAQ >= 3 && !MAX_PASS
#define IFA_LANE_TAKE_VS(u) vs_u[u] = rvs[u], vo_u[u] = rvo[u] * rvs[u]
#else
#define IFA_LANE_TAKE_VS(u)
#endif
/* ov += probability pu times the step's value row u (its 8 columns of chunk c), with the value's antiquant */
#if VAQ == 1 || VAQ == 2
#define IFA_LANE_PV(ov, pu, u, c) ov = fma((float8)(pu), fma(vv[u][c], vsc[c], vof[c]), ov)
#elif VAQ
#define IFA_LANE_PV(ov, pu, u, c) ov = fma((float8)(pu), fma(vv[u][c], (float8)vs_u[u], (float8)vo_u[u]), ov)
#else
#define IFA_LANE_PV(ov, pu, u, c) ov = fma((float8)(pu), vv[u][c], ov)
#endif
/* query row r's accumulators, every chunk: rescaled by al, plus each of the step's value rows u times P[u] */
#define IFA_LANE_ROW_PV(r, al, P)                                                                                  \
    _Pragma("unroll") for (int c_ = 0; c_ < IFA_LCV; ++c_) {                                                       \
        float8 ov_ = o[r][c_] * (al);                                                                              \
        _Pragma("unroll") for (int u_ = 0; u_ < LANES; ++u_) IFA_LANE_PV(ov_, (P)[u_], u_, c_);                    \
        o[r][c_] = ov_;                                                                                            \
    }
#if LANE_PF
            /* this step's rows came with the last step; the next step's loads go out before this one's math */
            IFA_LANE_TAKE
            IFA_LANE_LOAD(jb + IFA_NG * LANES)
#else
            IFA_LANE_LOAD(jb)
            IFA_LANE_TAKE
#endif
#if LANE_SC
            /* the transposing butterfly over the step's sums, s = r x LANES + u */
            float sv[IFA_ST];
            _Pragma("unroll") for (int r = 0; r < R; ++r)
                _Pragma("unroll") for (int u = 0; u < LANES; ++u) {
                    IFA_LDOT(sv[r * LANES + u], r, u);
                }
            /* stage k at lane bit o over n sums (a counted loop: unrolled, the arrays stay in registers) */
            _Pragma("unroll") for (int k = 0; k < IFA_LOG_LN; ++k) {
                const int o = IFA_LN >> (k + 1), n = IFA_ST >> k;
                float snd[IFA_ST / 2 + 1], rcv[IFA_ST / 2 + 1];
                if (n > 1) {
                    /* the lane whose bit o is set keeps the upper half and sends the lower (bit masks, not a
                     * select: a select of two array elements can become one load at a selected index, which
                     * keeps the array out of registers; clang did so while these loops counted to n / 2) */
                    const uint hi = (ln & o) != 0 ? 0xffffffffu : 0u;
                    /* the loops count to IFA_ST / 2 (inner loops unroll before the stage loop) */
                    _Pragma("unroll") for (int i = 0; i < IFA_ST / 2; ++i) if (i < n / 2) {
                        const uint a = as_uint(sv[i]), b = as_uint(sv[i + n / 2]);
                        snd[i] = as_float((a & hi) | (b & ~hi));
                        sv[i] = as_float((b & hi) | (a & ~hi));
                    }
                    IFA_XOR_N(rcv, snd, n / 2, o);
                    _Pragma("unroll") for (int i = 0; i < IFA_ST / 2; ++i) if (i < n / 2) sv[i] += rcv[i];
                } else {
                    IFA_XOR_N(rcv, sv, 1, o);
                    sv[0] += rcv[0];
                }
            }
            /* this lane's sums (row r_own, key rows u0 ..), scored as the other paths score them */
            float mt = -INFINITY;
            {
                IFA_ROW_GT(r_own, g, t);
                const int end = IFA_END(g, t);
                _Pragma("unroll") for (int i = 0; i < IFA_SOWN; ++i) {
                    const int u = u0 + i, p = j0 + u, pl = min(p, len - 1);
#if ANTIQUANT >= 3
                    float ks = ks_u[0], ko = ko_u[0];
                    _Pragma("unroll") for (int w = 1; w < LANES; ++w) ks = u == w ? ks_u[w] : ks, ko = u == w ? ko_u[w] : ko;
                    IFA_SCORE(sc, visible, sv[i], r_own, g, t, pl, end, ko, ks);
#else
                    IFA_SCORE(sc, visible, sv[i], r_own, g, t, pl, end, 0.0f, 1.0f);
#endif
                    visible = visible && p < len;
                    sv[i] = visible ? sc : -INFINITY;
                    mt = fmax(mt, sv[i]);
                }
            }
            /* the row's max over the lanes that share it */
            _Pragma("unroll") for (int w = 1; w < IFA_SROWL; w <<= 1) {
                float mx[1], my[1] = {mt};
                IFA_XOR_N(mx, my, 1, w * IFA_SREP);
                mt = fmax(mt, mx[0]);
            }
            const float mn = fmax(m_own, mt);
#if MAX_PASS
            m_own = mn;
#else
            /* own probabilities and the row's rescale (1 and 0 while the row has seen nothing) */
            float pown[IFA_SOWN + 1], ps = 0.0f;
            _Pragma("unroll") for (int i = 0; i < IFA_SOWN; ++i) {
                pown[i] = IFA_GEXP(sv[i] - IFA_MAX_BASE(mn));
                ps += pown[i];
            }
            pown[IFA_SOWN] = mn == -INFINITY ? 1.0f : IFA_GEXP(m_own - mn);
            l_own = l_own * pown[IFA_SOWN] + ps;
            m_own = mn;
            /* every probability and every row's rescale to every lane, then P.V as in the other path */
            float pb[IFA_ST], ab[R];
            IFA_IDX_N(pb, pown, IFA_SOWN + 1, IFA_ST, IFA_SC_PSRC, IFA_SC_PIDX);
            IFA_IDX_N(ab, pown, IFA_SOWN + 1, R, IFA_SC_ASRC, IFA_SC_AIDX);
            _Pragma("unroll") for (int r = 0; r < R; ++r) {
                IFA_LANE_ROW_PV(r, ab[r], pb + r * LANES);
            }
#endif
#else
            float sd[LANES][R];
#if IFA_NV
            /* the butterfly stage by stage over all of the step's sums: a stage's shuffles do not depend on each
             * other, so they are in flight together (the asm is volatile: chain by chain, each shuffle would wait
             * for the one before it) */
            _Pragma("unroll") for (int u = 0; u < LANES; ++u)
                _Pragma("unroll") for (int r = 0; r < R; ++r) {
                    IFA_LDOT(sd[u][r], r, u);
                }
            _Pragma("unroll") for (int o = IFA_LN / 2; o > 0; o >>= 1)
                _Pragma("unroll") for (int u = 0; u < LANES; ++u)
                    _Pragma("unroll") for (int r = 0; r < R; ++r) sd[u][r] += ifa_shfl_xor(sd[u][r], o);
#else
            /* the partial dot products through local memory: each lane sums its group's IFA_LN partials itself */
            _Pragma("unroll") for (int u = 0; u < LANES; ++u)
                _Pragma("unroll") for (int r = 0; r < R; ++r) {
                    float d;
                    IFA_LDOT(d, r, u);
                    lred[((grp * LANES + u) * R + r) * IFA_LN + ln] = d;
                }
            barrier(CLK_LOCAL_MEM_FENCE);
            _Pragma("unroll") for (int u = 0; u < LANES; ++u)
                _Pragma("unroll") for (int r = 0; r < R; ++r) {
                    __local const float *pd = lred + ((grp * LANES + u) * R + r) * IFA_LN;
                    float t = 0.0f;
                    for (int i = 0; i < IFA_LN; ++i) t += pd[i];
                    sd[u][r] = t;
                }
            barrier(CLK_LOCAL_MEM_FENCE);
#endif
            /* scores (the work-group shape's per-score code, in the same order), then the group's online softmax
             * over its LANES rows: one rescale per step */
            _Pragma("unroll") for (int r = 0; r < R; ++r) {
                IFA_ROW_GT(r, g, t);
                const int end = IFA_END(g, t);
                float mt = -INFINITY;
                _Pragma("unroll") for (int u = 0; u < LANES; ++u) {
                    const int p = j0 + u;
                    /* past the block's end: a row in the block stands in for the pse and mask reads, unseen */
                    const int pl = min(p, len - 1);
#if ANTIQUANT >= 3
                    IFA_SCORE(sv, visible, sd[u][r], r, g, t, pl, end, ko_u[u], ks_u[u]);
#else
                    IFA_SCORE(sv, visible, sd[u][r], r, g, t, pl, end, 0.0f, 1.0f);
#endif
                    visible = visible && p < len;
                    sd[u][r] = visible ? sv : -INFINITY;
                    mt = fmax(mt, sd[u][r]);
                }
                const float mn = fmax(m[r], mt);
#if MAX_PASS
                m[r] = mn;
#else
                float ps = 0.0f, pu[LANES];
                _Pragma("unroll") for (int u = 0; u < LANES; ++u) {
                    pu[u] = IFA_GEXP(sd[u][r] - IFA_MAX_BASE(mn));
                    ps += pu[u];
                }
                /* a step whose keys all weigh 0 for the row adds nothing (their values are not multiplied); a NaN
                 * weight (a NaN score) makes the sum NaN and enters */
                if (ps != 0.0f) {
                    const float al = mn == -INFINITY ? 1.0f : IFA_GEXP(m[r] - mn);
                    IFA_LANE_ROW_PV(r, al, pu);
                    l[r] = l[r] * al + ps;
                    m[r] = mn;
                }
#endif
            }
#endif
        }
#if LANE_SC
        /* each row's max and sum (its lanes' parts added) to every lane, for the merge */
        {
            float mo[2] = {m_own, l_own};
#if !MAX_PASS
            _Pragma("unroll") for (int w = 1; w < IFA_SROWL; w <<= 1) {
                float lx[1], ly[1] = {mo[1]};
                IFA_XOR_N(lx, ly, 1, w * IFA_SREP);
                mo[1] += lx[0];
            }
#endif
            float mb[R], lb[R];
            IFA_IDX_N(mb, mo, 2, R, IFA_SC_ASRC, IFA_SC_MIDX);
#if !MAX_PASS
            IFA_IDX_N(lb, mo, 2, R, IFA_SC_ASRC, IFA_SC_LIDX);
#endif
            _Pragma("unroll") for (int r = 0; r < R; ++r) {
                m[r] = mb[r];
#if !MAX_PASS
                l[r] = lb[r];
#endif
            }
        }
#endif
        /* the groups' merge: each row's max over the groups, every group's sum and accumulator rescaled to it,
         * the accumulators added into acc one group at a time */
        if (ln == 0)
            _Pragma("unroll") for (int r = 0; r < R; ++r) lg_m[grp * R + r] = m[r], lg_l[grp * R + r] = l[r];
        barrier(CLK_LOCAL_MEM_FENCE);
        _Pragma("unroll") for (int r = 0; r < R; ++r) {
            float mx = -INFINITY;
            for (int q = 0; q < IFA_NG; ++q) mx = fmax(mx, lg_m[q * R + r]);
            const float f = m[r] == -INFINITY ? 0.0f : IFA_GEXP(m[r] - mx);
            _Pragma("unroll") for (int c = 0; c < IFA_LCV; ++c) o[r][c] *= f;
            if (lid == 0) {
                float sum = 0.0f;
                for (int q = 0; q < IFA_NG; ++q) /* a group that saw nothing weighs 0 (a NaN sum is kept) */
                    sum += lg_l[q * R + r] * (lg_m[q * R + r] == -INFINITY ? 0.0f : IFA_GEXP(lg_m[q * R + r] - mx));
                m_s[r] = mx;
                l_s[r] = sum;
            }
        }
#if !MAX_PASS
        for (int q = 0; q < IFA_NG; ++q) {
            if (grp == q)
                _Pragma("unroll") for (int r = 0; r < R; ++r)
                    _Pragma("unroll") for (int c = 0; c < IFA_LCV; ++c)
                        if (r < rn && IFA_LX(c) < VDIM) {
                            __local float *const a = acc + r * VDIM + IFA_LX(c);
                            vstore8(vload8(0, a) + o[r][c], 0, a);
                        }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
#else
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
    }
#else
#if KTILE && !MAX_PASS
    /* work-item (z, x) of P.V: the 8 value columns x of every query row over the chunk rows j = z mod ZV, in
     * registers across the chunks */
    const int pv_x = lid % IFA_XL * 8, pv_z = lid / IFA_XL;
    float8 pa[R];
    _Pragma("unroll") for (int r = 0; r < R; ++r) pa[r] = (float8)0.0f;
#endif
    for (int c = first; c < len; c += CHUNK) {
        const int rows = min(CHUNK, len - c);
        /* the softmax reads whole vectors of rows: rows up to the next multiple of VW score -inf */
        const int rows_pad = min(CHUNK, (rows + VW - 1) / VW * VW);
#if KTILE
        /* the chunk's key rows into the tile, a 16-byte word per work-item and step, IFA_KT_B steps' loads issued
         * before their stores (a load then its store per step would wait out each load's latency); each
         * work-item computes its rows' offsets itself: one barrier fewer than sharing roff, which the score loop
         * below fills for P.V */
        for (int i0 = lid; i0 < rows * (HEAD_DIM / IFA_KT_E); i0 += WG * IFA_KT_B) {
            uint4 kw[IFA_KT_B];
            _Pragma("unroll") for (int u = 0; u < IFA_KT_B; ++u) {
                const int i = i0 + u * WG, j = i / (HEAD_DIM / IFA_KT_E), w = i - j * (HEAD_DIM / IFA_KT_E);
                if (i < rows * (HEAD_DIM / IFA_KT_E))
                    kw[u] = *(__global const uint4 *)(k + k_off + IFA_ROW_OFF(c + j) + (ulong)(IFA_KT_E * w));
            }
            _Pragma("unroll") for (int u = 0; u < IFA_KT_B; ++u) {
                const int i = i0 + u * WG, j = i / (HEAD_DIM / IFA_KT_E), w = i - j * (HEAD_DIM / IFA_KT_E);
                if (i < rows * (HEAD_DIM / IFA_KT_E)) ktile[j * IFA_KT_W + w] = kw[u];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#endif

        for (int j0 = lid * IFA_KJ; j0 < rows_pad; j0 += WG * IFA_KJ) {
            /* the block's rows: offsets (kept for P.V), prefetches, per-token antiquant factors */
            ulong ro_j[IFA_KJ];
#if PREFETCH > 0 && IFA_SLICE_PF
            /* the key rows PREFETCH ahead (ULONG_MAX: past the end), for the tiles' slice prefetches */
            ulong pf_j[IFA_KJ];
            const int slice_pf = j0 + IFA_KJ <= rows;
#endif
#if ANTIQUANT >= 3
            float ks_j[IFA_KJ], ko_j[IFA_KJ];
#endif
            _Pragma("unroll") for (int jj = 0; jj < IFA_KJ; ++jj) {
                const int j = j0 + jj, p = c + j;
                if (j < rows) {
                    const ulong ro = IFA_ROW_OFF(p);
                    ro_j[jj] = ro;
#if IFA_ROFF_KEPT
                    roff[j] = ro;
#endif
#if IFA_MASK_SKIP
                    pv_hid[j] = IFA_HIDDEN(p);
#endif
#if PREFETCH > 0
#if IFA_SLICE_PF
                    pf_j[jj] = p + PREFETCH < len ? IFA_ROW_OFF(p + PREFETCH) : ULONG_MAX;
                    if (!slice_pf) /* a chunk's last rows: the whole rows, as without the spread */
#endif
                    {
                        if (p + PREFETCH < len) IFA_PREFETCH_ROW(k, k_off + IFA_ROW_OFF(p + PREFETCH));
#if !MAX_PASS
                        IFA_PREFETCH_ROW(v, v_off + ro);
#endif
                    }
#endif
#if ANTIQUANT >= 3
                    const ulong ai = AQ_IDX(IFA_AQ_POS(ANTIQUANT, p), 0);
                    ks_j[jj] = AQ_ROW_SCALE(ai);
                    ko_j[jj] = AQ_ROW_OFFSET(ai);
#endif
#if VAQ >= 3 && !MAX_PASS
                    const ulong vai = VAQ_IDX(IFA_AQ_POS(VAQ, p), 0);
                    const int vread = !IFA_HIDDEN(p); /* a hidden row's scale is not read either */
                    const float vs = vread ? VAQ_SCALE(vai) : 0.0f;
                    aq_t[j] = vs;
                    aq_t[CHUNK + j] = vread ? VAQ_OFFSET(vai) * vs : 0.0f;
#endif
                }
#if IFA_VFOLD
                else if (j < rows_pad) {
                    /* the softmax reads whole vectors: rows past the chunk's end weigh 0 (never stale NaN) */
                    aq_t[j] = 0.0f;
                    aq_t[CHUNK + j] = 0.0f;
                }
#endif
            }
            /* the dot products in register tiles of RB query rows (x IFA_KJ key rows), so the accumulators
             * stay in registers (the key rows are reloaded from cache per tile) */
            float dsum[IFA_KJ][R];
#if IFA_KJ > 1
            if (j0 + IFA_KJ <= rows) {
                /* LLVM would hoist the loads of all R x DV query vectors out of this loop (they do not depend
                 * on the row) and spill them to the stack; an address that depends on the row (ro >> 63 is 0
                 * for any offset inside a buffer) keeps them as memory operands of the FMAs */
                __local const float *qb = qs + (ro_j[0] >> 63);
                for (int r0 = 0; r0 < R; r0 += RS) {
                    IFA_RSTOP(r0);
#if PREFETCH > 0 && IFA_SLICE_PF
                    if (r0 % GSQ == 0)
                        _Pragma("unroll") for (int u = 0; u < IFA_SLICE_N; ++u) {
                            const int t = (r0 / GSQ) * IFA_SLICE_N + u, jj = t / IFA_LR, l = t % IFA_LR;
                            if (jj < IFA_KJ) {
                                if (pf_j[jj] != ULONG_MAX) IFA_PREFETCH_LINE(IFA_BYTE_ADDR(k, k_off + pf_j[jj]) + l * 64);
#if !MAX_PASS
                                IFA_PREFETCH_LINE(IFA_BYTE_ADDR(v, v_off + ro_j[jj]) + l * 64);
#endif
                            }
                        }
#endif
                    fv dot[RS][IFA_KJ];
                    _Pragma("unroll") for (int rr = 0; rr < RS; ++rr)
                        _Pragma("unroll") for (int jj = 0; jj < IFA_KJ; ++jj) dot[rr][jj] = 0.0f;
                    /* IFA_XS vectors of each key row per step, the steps not unrolled: with all of a row's
                     * vectors in one block LLVM loads the 4 rows x DV vectors ahead and spills the accumulators */
#if IFA_XS > 1
                    _Pragma("unroll 1") for (int x0 = 0; x0 < DV; x0 += IFA_XS)
                    _Pragma("unroll") for (int x = x0; x < x0 + IFA_XS && x < DV; ++x) {
#else /* an inner loop of one vector left clang's unroll pragma unmet ("loop not unrolled": an error under -Werror) */
                    _Pragma("unroll 1") for (int x = 0; x < DV; ++x) {
#endif
                        fv kk[IFA_KJ];
                        _Pragma("unroll") for (int jj = 0; jj < IFA_KJ; ++jj)
                            kk[jj] = IFA_KV_VLOAD(k, ro_j[jj], k_off + IFA_HOFF(r0) + (ulong)x * VW);
                        _Pragma("unroll") for (int rr = 0; rr < RS; ++rr) {
                            if (r0 + rr < R) {
                                const fv qv = IFA_LV(qb + (r0 + rr) * HEAD_DIM + x * VW);
                                _Pragma("unroll") for (int jj = 0; jj < IFA_KJ; ++jj) dot[rr][jj] = fma(qv, kk[jj], dot[rr][jj]);
                            }
                        }
                    }
                    /* the 4 scores of a query row as a vector (the per-score code below, in the same order):
                     * antiquant's correction, scale, pse, soft-cap, visibility; stored side by side */
                    const int4 p4 = (int4)(c + j0) + (int4)(0, 1, 2, 3);
#if ANTIQUANT >= 3
                    const float4 ko4 = (float4)(ko_j[0], ko_j[1], ko_j[2], ko_j[3]);
                    const float4 ks4 = (float4)(ks_j[0], ks_j[1], ks_j[2], ks_j[3]);
#endif
#if VW == 16 && RS == 4
                    const float16 h16 = IFA_HSUM_TILE16(dot);
#elif VW == 8 && RS == 2
                    const float8 h8 = IFA_HSUM_TILE8(dot);
#endif
                    _Pragma("unroll") for (int rr = 0; rr < RS; ++rr) {
                        if (r0 + rr < R) {
                            IFA_ROW_GT(r0 + rr, g, t);
                            const int end = IFA_END(g, t);
                            int4 vis = (p4 < (int4)end) & (window <= 0 ? (int4)(-1) : p4 >= (int4)(end - window));
#if HAS_MASK
                            vis &= convert_int4(vload4(0, mask + mask_off + b * mask_bstride + (ulong)t * mask_tstride +
                                                              (ulong)(c + j0)) == (uchar4)0);
#endif
#if VW == 16 && RS == 4
                            const float4 h4 = IFA_TILE16_ROW(h16, rr);
#elif VW == 8 && RS == 2
                            const float4 h4 = rr == 0 ? h8.lo : h8.hi;
#else
                            const float4 h4 = ifa_hsum_x4(dot[rr][0], dot[rr][1], dot[rr][2], dot[rr][3]);
#endif
#if ANTIQUANT == 0
                            float4 s4 = h4 * scale;
#elif ANTIQUANT <= 2
                            float4 s4 = (h4 + aq_q[r0 + rr]) * scale;
#else
                            float4 s4 = fma(ko4, (float4)aq_q[r0 + rr], h4) * ks4 * scale;
#endif
#if HAS_PSE
                            if (g < gn)
                                s4 += IFA_NLOAD(Q_T, 4, pse, pse_off + b * pse_bstride + (ulong)(h0 + g) * pse_hstride +
                                                                 (ulong)t * pse_tstride + (ulong)(c + j0));
#endif
#if HAS_ALIBI
                            if (g < gn) s4 += ifa_alibi4(alibi[alibi_off + b * alibi_bstride + (ulong)(h0 + g)], p4,
                                                         len_b - qn + t);
#endif
#if SOFTCAP
                            s4 = softcap * tanh(s4 / softcap);
#endif
                            vstore4(select((float4)(-INFINITY), s4, vis), 0, sc + (r0 + rr) * CHUNK + j0);
                        }
                    }
                }
                continue;
            } else
#endif
            {
                for (int jj = 0; jj < IFA_KJ; ++jj) {
                    if (j0 + jj >= rows) continue;
                    const ulong ro = ro_j[jj];
#if V8
                    _Pragma("unroll") for (int r = 0; r < R; ++r) dsum[jj][r] = 0.0f;
                    for (int x = 0; x < HEAD_DIM; x += 8) {
#if KTILE
                        const float8 kk = ifa_kt_row8(ktile + (j0 + jj) * IFA_KT_W, x);
                        (void)ro;
#else
                        const float8 kk = IFA_L8(KV_T, k, k_off + ro + (ulong)x);
#endif
                        _Pragma("unroll") for (int r = 0; r < R; ++r) dsum[jj][r] += ifa_dot8(vload8(0, qs + r * HEAD_DIM + x), kk);
                    }
#else
                    for (int r0 = 0; r0 < R; r0 += RB) {
                        IFA_RSTOP(r0);
                        fv dot[RB];
                        _Pragma("unroll") for (int rr = 0; rr < RB; ++rr) dot[rr] = 0.0f;
                        IFA_UNROLL_X for (int x = 0; x < DV; ++x) {
                            const fv kk = IFA_KV_VLOAD(k, ro, k_off + IFA_HOFF(r0) + (ulong)x * VW);
                            _Pragma("unroll") for (int rr = 0; rr < RB; ++rr)
                                if (r0 + rr < R) dot[rr] = fma(IFA_LV(qs + (r0 + rr) * HEAD_DIM + x * VW), kk, dot[rr]);
                        }
                        _Pragma("unroll") for (int rr = 0; rr < RB; ++rr)
                            if (r0 + rr < R) dsum[jj][r0 + rr] = ifa_hsum(dot[rr]);
                    }
#endif
                }
            }
            /* query row outside, key rows inside: the block's scores of a row are stored side by side */
            for (int r = 0; r < R; ++r) {
                IFA_RSTOP(r);
                IFA_ROW_GT(r, g, t);
                const int end = IFA_END(g, t);
                _Pragma("unroll") for (int jj = 0; jj < IFA_KJ; ++jj) {
                    const int j = j0 + jj, p = c + j;
                    if (j >= rows) {
                        sc[r * CHUNK + j] = -INFINITY;
                        continue;
                    }
#if ANTIQUANT >= 3
                    IFA_SCORE(s, visible, dsum[jj][r], r, g, t, p, end, ko_j[jj], ks_j[jj]);
#else
                    IFA_SCORE(s, visible, dsum[jj][r], r, g, t, p, end, 0.0f, 1.0f);
#endif
                    sc[r * CHUNK + j] = visible ? s : -INFINITY;
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);

#if IFA_TPR > 1
        /* IFA_TPR work-items per query row: partial maxima, the row's max and rescale by one work-item per row,
         * then the exponentials and partial sums, the row's sum (straight-line barriers: PoCL 3.1 mishandles a
         * barrier inside an inner loop) */
        {
            const int r = lid / IFA_TPR, t = lid - r * IFA_TPR;
            float pm = -INFINITY;
            for (int j = t; r < rn && j < rows_pad; j += IFA_TPR) pm = fmax(pm, sc[r * CHUNK + j]);
            red_s[lid] = pm;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < rn) {
            float mx = -INFINITY;
            for (int t = 0; t < IFA_TPR; ++t) mx = fmax(mx, red_s[lid * IFA_TPR + t]);
            m_use_s[lid] = ifa_max_update(m_s, a_s, lid, mx);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#if !MAX_PASS
        {
            const int r = lid / IFA_TPR, t = lid - r * IFA_TPR;
            float ps = 0.0f;
            for (int j = t; r < rn && j < rows_pad; j += IFA_TPR) {
                const float pr = IFA_GEXP(sc[r * CHUNK + j] - m_use_s[r]);
                sc[r * CHUNK + j] = pr;
                ps += pr;
            }
            red_s[lid] = ps;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < rn) {
            float sum = 0.0f;
            for (int t = 0; t < IFA_TPR; ++t) sum += red_s[lid * IFA_TPR + t];
            l_s[lid] = l_s[lid] * a_s[lid] + sum;
        }
#endif
#else
        for (int r = lid; r < rn; r += WG) {
            __local float *sr = sc + r * CHUNK;
            fv mv = -INFINITY;
            for (int j = 0; j < rows_pad; j += VW) mv = fmax(mv, IFA_LV(sr + j));
            const float m_use = ifa_max_update(m_s, a_s, r, ifa_hmax(mv));
#if MAX_PASS
            (void)m_use;
#else
            fv sum = 0.0f;
#if IFA_VFOLD
            fv cs = 0.0f;
#endif
            for (int j = 0; j < rows_pad; j += VW) {
                const fv pr = exp(IFA_LV(sr + j) - m_use);
#if IFA_VFOLD
                IFA_SV(pr * IFA_LV(aq_t + j), sr + j);
                cs = fma(pr, IFA_LV(aq_t + CHUNK + j), cs);
#else
                IFA_SV(pr, sr + j);
#endif
                sum += pr;
            }
            l_s[r] = l_s[r] * a_s[r] + ifa_hsum(sum);
#if IFA_VFOLD
            aq_c[r] = aq_c[r] * a_s[r] + ifa_hsum(cs);
#endif
#endif
        }
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
#if !MAX_PASS

#if KTILE
        /* each value vector loaded once for all query rows, IFA_KT_B rows' loads before their FMAs; the
         * accumulators rescaled first */
        if (pv_z < IFA_ZV) {
            _Pragma("unroll") for (int r = 0; r < R; ++r) pa[r] = r < rn ? pa[r] * a_s[r] : (float8)0.0f;
            for (int j0 = pv_z; j0 < rows; j0 += IFA_ZV * IFA_KT_B) {
                float8 vv[IFA_KT_B];
                _Pragma("unroll") for (int u = 0; u < IFA_KT_B; ++u) {
                    const int j = j0 + u * IFA_ZV;
                    vv[u] = IFA_PV_ROW(j) ? IFA_KT_G(v, v_off + roff[j] + (ulong)pv_x) : (float8)0.0f;
                }
                _Pragma("unroll") for (int u = 0; u < IFA_KT_B; ++u) {
                    const int j = j0 + u * IFA_ZV;
                    if (j < rows) {
#if VAQ == 1 || VAQ == 2
                        vv[u] = fma(vv[u], vload8(0, aq_v + pv_x), vload8(0, aq_v + VDIM + pv_x));
#elif VAQ
                        vv[u] = fma(vv[u], (float8)aq_t[j], (float8)aq_t[CHUNK + j]);
#endif
                        _Pragma("unroll") for (int r = 0; r < R; ++r) pa[r] = fma((float8)sc[r * CHUNK + j], vv[u], pa[r]);
                    }
                }
            }
        }
#elif V8
        /* work-item (z, r, x): its slice of lacc, rescaled, plus its chunk rows */
        {
            const int x = lid % IFA_XL * 8, r = lid / IFA_XL % R, z = lid / (IFA_XL * R);
            if (z < IFA_ZV) {
                __local float *la = lacc + (z * R + r) * VDIM + x;
                float8 a = r < rn ? vload8(0, la) * a_s[r] : (float8)0.0f;
                for (int j = z; j < rows; j += IFA_ZV) {
                    if (IFA_PV_HID(j)) continue;
                    float8 vv = IFA_L8(KV_T, v, v_off + roff[j] + (ulong)x);
#if VAQ == 1 || VAQ == 2
                    vv = fma(vv, vload8(0, aq_v + x), vload8(0, aq_v + VDIM + x));
#elif VAQ
                    vv = fma(vv, (float8)aq_t[j], (float8)aq_t[CHUNK + j]);
#endif
                    a = fma((float8)sc[r * CHUNK + j], vv, a);
                }
                vstore8(a, 0, la);
            }
        }
#elif VW == 1
        /* one work-item per column d. (The blocked form below computes the same; PoCL 3.1 miscompiles it
         * with 16-item groups inside the balanced units' piece loop, so the scalar shape keeps this one.) */
        for (int d = lid; d < VDIM; d += WG) {
            float a[R];
            for (int r = 0; r < R; ++r) a[r] = r < rn ? acc[r * VDIM + d] * a_s[r] : 0.0f;
            for (int j = 0; j < rows; ++j) {
                if (IFA_PV_HID(j)) continue;
                float vv = IFA_LOAD(KV_T, v, v_off + roff[j] + d);
#if VAQ == 1 || VAQ == 2
                vv = fma(vv, aq_v[d], aq_v[VDIM + d]);
#elif VAQ
                vv = fma(vv, aq_t[j], aq_t[CHUNK + j]);
#endif
                for (int r = 0; r < R; ++r) a[r] = fma(sc[r * CHUNK + j], vv, a[r]);
            }
            /* over R, not rn: a[] indexed at run time would leave registers (NVIDIA: a stack frame) */
            for (int r = 0; r < R; ++r)
                if (r < rn) acc[r * VDIM + d] = a[r];
        }
#else
        /* register tiles of PV_RB rows x XB vectors; each V vector is loaded once per tile of rows (from cache
         * after the first) */
        for (int r0 = 0; r0 < R; r0 += PV_RB) {
        IFA_RSTOP(r0);
        for (int x0 = lid * XB; x0 < DVV; x0 += WG * XB) {
            fv a[PV_RB][XB];
            _Pragma("unroll") for (int rr = 0; rr < PV_RB; ++rr) _Pragma("unroll") for (int xb = 0; xb < XB; ++xb)
                a[rr][xb] = r0 + rr < rn && x0 + xb < DVV ? IFA_LV(acc + (r0 + rr) * VDIM + (x0 + xb) * VW) * a_s[r0 + rr]
                                                          : 0.0f;
#if IFA_PV_PF
            /* this register block's share of the next chunk's key lines: lines t = pf_b x CHUNK x IFA_LK + j x IFA_LK
             * + u, line t % IFA_LR of row t / IFA_LR */
            const int pf_b = (r0 / PV_RB) * IFA_NBX + x0 / XB;
#if PAGED
            /* walked by the row's block, its row within the block, its offset and the line (a block's offset from the
             * table when the walk enters it): no division by the run-time block size and no table read per line (two
             * of each before: paged 1,8,8,128,8192 cold 0.95x of the time with 16- and 64-row blocks, and with
             * 64-row blocks at G = 4 in L3 1.28 -> 1.17x of no prefetch; docs/performance.md, Zen 3, 2026-11-28);
             * a row's offset is taken only when one of its lines is asked for, so no slot past the batch's rows is
             * read */
            const int pf_t0 = pf_b * CHUNK * IFA_LK, pf_p0 = c + CHUNK + pf_t0 / IFA_LR;
            int pf_n = min(CHUNK * IFA_LK, max(0, min(CHUNK, len - c - CHUNK) * IFA_LR - pf_t0)), pf_l = pf_t0 % IFA_LR;
            int pf_r = pf_p0 % block_size, pf_blk = pf_p0 / block_size;
            ulong pf_o = pf_n > 0 ? IFA_ROW_OFF(pf_p0) : 0;
#endif
#endif
            /* a contiguous cache's rows step by kv_rstride and the probabilities of row r0 + rr sit rr x CHUNK
             * past a pointer that steps by one: no roff[j] load ahead of each value vector's address and no
             * 32-bit index arithmetic per broadcast (AVX2, G = 4, D = 128: 26 -> 18 instructions a step; in L3
             * 0.88-0.91x of the time at G = 4 and 8, 0.85-0.89x at G = 1, D = 64; docs/performance.md,
             * Zen 3, 2026-11-28) */
#if !PAGED
            ulong pv_ro = IFA_ROW_OFF(c);
#endif
            __local const float *pv_sc = sc + r0 * CHUNK;
            for (int j = 0; j < rows; ++j, ++pv_sc) {
#if PAGED
                const ulong pv_rj = roff[j];
#else
                const ulong pv_rj = pv_ro;
                pv_ro += kv_rstride;
#endif
                if (IFA_PV_HID(j)) continue;
#if IFA_PV_PF && PAGED
                _Pragma("unroll") for (int u = 0; u < IFA_LK; ++u) {
                    if (pf_n > 0) {
                        IFA_PREFETCH_LINE(IFA_BYTE_ADDR(k, k_off + pf_o) + pf_l * 64);
                        if (--pf_n > 0 && ++pf_l == IFA_LR) {
                            pf_l = 0;
                            if (++pf_r == block_size)
                                pf_r = 0, pf_o = IFA_BLOCK_OFF(++pf_blk);
                            else
                                pf_o += kv_rstride;
                        }
                    }
                }
#elif IFA_PV_PF
                /* a contiguous cache keeps the direct form: the walk above measured 1.06-1.13x slower there (AVX2,
                 * G = 4, in L3 and cold) */
                _Pragma("unroll") for (int u = 0; u < IFA_LK; ++u) {
                    const int t = (pf_b * CHUNK + j) * IFA_LK + u, q = t / IFA_LR;
                    if (q < CHUNK && c + CHUNK + q < len)
                        IFA_PREFETCH_LINE(IFA_BYTE_ADDR(k, k_off + IFA_ROW_OFF(c + CHUNK + q)) + (t % IFA_LR) * 64);
                }
#endif
                _Pragma("unroll") for (int xb = 0; xb < XB; ++xb) {
                    if (x0 + xb < DVV) {
                        fv vv = IFA_KV_VLOAD(v, pv_rj, v_off + IFA_HOFF(r0) + (ulong)(x0 + xb) * VW);
#if (VAQ == 1 || VAQ == 2) && !IFA_VCFOLD
                        vv = fma(vv, IFA_LV(aq_v + (x0 + xb) * VW), IFA_LV(aq_v + VDIM + (x0 + xb) * VW));
#elif VAQ && !IFA_VFOLD && !IFA_VCFOLD
                        vv = fma(vv, (fv)aq_t[j], (fv)aq_t[CHUNK + j]);
#endif
                        _Pragma("unroll") for (int rr = 0; rr < PV_RB; ++rr)
                            if (r0 + rr < R) a[rr][xb] = fma((fv)pv_sc[rr * CHUNK], vv, a[rr][xb]);
                    }
                }
            }
            for (int rr = 0; rr < PV_RB && r0 + rr < rn; ++rr) _Pragma("unroll") for (int xb = 0; xb < XB; ++xb)
                if (x0 + xb < DVV) IFA_SV(a[rr][xb], acc + (r0 + rr) * VDIM + (x0 + xb) * VW);
        }
        }
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
    }
#endif /* LANES */
#if IFA_VFOLD
    for (int i = lid; i < rn * VDIM; i += WG) acc[i] += aq_c[i / VDIM];
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
#if IFA_VCFOLD
    for (int i = lid; i < rn * VDIM; i += WG) {
        const int r = i / VDIM, d = i - r * VDIM;
        acc[i] = fma(acc[i], aq_v[d], aq_v[VDIM + d] * l_s[r]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
#if V8 && !MAX_PASS
    {
#if KTILE
        /* the registers' slices go through the tile's memory (its last chunk was read before the softmax's
         * barriers) */
        __local float *slices = (__local float *)ktile;
        if (pv_z < IFA_ZV)
            _Pragma("unroll") for (int r = 0; r < R; ++r) vstore8(pa[r], 0, slices + (pv_z * R + r) * VDIM + pv_x);
        barrier(CLK_LOCAL_MEM_FENCE);
#else
        __local const float *slices = lacc;
#endif
        /* the groups' slices into acc */
        for (int i = lid; i < rn * VDIM; i += WG) {
            const int r = i / VDIM, d = i - r * VDIM;
            float s = 0.0f;
            for (int z = 0; z < IFA_ZV; ++z) s += slices[(z * R + r) * VDIM + d];
            acc[i] = s;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif

#if SPLIT || BALANCED
    if (!whole) {
        /* partials of this piece: the accumulator stays unnormalised, the combine rescales it */
#if BALANCED
#define IFA_PROW(r) (slot * R + (ulong)(r))
#else
#if PREFIX
        /* slot 0 of row (batch, query head, token) for virtual head g0 + r / SQ */
#define IFA_PV(r) (g0 + (r) / SQ)
#define IFA_PROW(r)                                                                                               \
    ((((ulong)(IFA_PV(r) / real_group) * (ulong)num_heads + (ulong)(kvh * real_group + IFA_PV(r) % real_group)) * SQ + \
      (ulong)((r) % SQ)) * (ulong)max_splits)
#else
        /* max_splits is the row stride: PREFIX_SLOTS prefix partials, then the splits */
#define IFA_PROW(r) (IFA_GROW(r) * (ulong)max_splits + (ulong)(split + PREFIX_SLOTS))
#endif
#endif
        const int rw = active ? rn : 0; /* rows whose partials this work-group writes */
#if MAX_PASS
        for (int r = lid; r < rw; r += WG) part[part_m + IFA_PROW(r)] = m_s[r];
#else
        /* the vector shape VW floats a store (element by element, a divide for each, the store of 128 rows x 512
         * columns took a sixth of an MLA split's time at G = 128 on the CPU) */
        for (int i = lid * VW; i < rw * VDIM; i += WG * VW) {
            const int r = i / VDIM, d = i - r * VDIM;
            IFA_SV(IFA_LV(acc + i), part + part_acc + IFA_PROW(r) * VDIM + d);
        }
        for (int r = lid; r < rw; r += WG) {
#if ROWMAX == 1
            part[part_m + IFA_PROW(r)] = m_s[r]; /* global rowmax leaves the max pass's values */
#endif
            part[part_l + IFA_PROW(r)] = l_s[r];
        }
#endif
    }
#if FUSED
    /* the work-group's partials are written before work-item 0 counts them; its fences on both sides of the
     * count order them against the other splits' (a release and an acquire at device scope) */
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
#if !BALANCED
    const int ns = max(1, (span + split_tokens - 1) / split_tokens); /* the block's splits */
#define IFA_FPR(r, s) (IFA_GROW(r) * (ulong)max_splits + (ulong)(s))
#endif
    if (lid == 0) {
        int last = 0;
#if BALANCED
        if (!whole) { /* a whole block went to the output: no partial to count */
            const ulong ci = cnt_off + b * (ulong)(num_heads / group * head_groups) + (ulong)blk;
            const int n = (int)(cut1 - cut0); /* this piece's cost positions */
            mem_fence(CLK_GLOBAL_MEM_FENCE);
            last = atomic_add(cnt + ci, n) + n == (int)bcost;
#else
        if (active) {
#if BATCH_FAST
            const ulong ci = cnt_off + b * get_num_groups(1) + (ulong)blk;
#else
            const ulong ci = cnt_off + b * get_num_groups(0) + (ulong)blk;
#endif
            mem_fence(CLK_GLOBAL_MEM_FENCE);
            last = atomic_inc(cnt + ci) == ns - 1;
#endif
            if (last) atomic_xchg(cnt + ci, 0);
            mem_fence(CLK_GLOBAL_MEM_FENCE);
        }
        fc_last = last;
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (fc_last) {
#if BALANCED
        /* the block's pieces, split s the partial its s-th unit wrote (no stretch is empty: the planner's rule) */
        const ifa_pieces fc_p = ifa_pieces_of(total_cost, units, pk, bcost);
        const int ns = fc_p.count;
#define IFA_FPR(r, s) (ifa_piece_slot(fc_p, s) * (ulong)R + (ulong)(r))
#endif
/* the GPU shapes' splits loaded at once by a work-item (all 16 of a B = 1 row's) */
#define IFA_FC_U 16
#if MMA || LANES
        /* the GPU shapes (the lane and matrix shapes): each column quad's work-item combines its quad over the
         * splits alone and online, as the kernel's steps do: each group of IFA_FC_U splits' maxima, sums and
         * partial quads loaded together, the running max, sum and quad rescaled to the group's max. Every
         * work-item of a row merges the row's maxima and sums alike (the same loads, which the cache serves). One
         * dependent round trip a group, so one for a B = 1 row's 16 splits: the row-by-row merge, the weights and
         * the columns behind them took about 9 in this last work-group, which the whole run waits for. The CPU
         * shapes (below) merge each row once and weigh the splits once per row: a work-item there walks hundreds
         * of columns. */
        const int cw = VDIM % 4 == 0 ? 4 : 1, cols = VDIM / cw, e_n = rn * cols;
        const ulong obase = o_off + b * o_bstride + (ulong)h0 * o_hstride;
        for (int e = lid; e < e_n; e += WG) {
            const int r = e / cols, d = (e - r * cols) * cw;
            float mx = -INFINITY, sum = 0.0f;
            float4 a = (float4)0.0f;
            for (int s0 = 0; s0 < ns; s0 += IFA_FC_U) {
                float mu[IFA_FC_U], lu[IFA_FC_U];
                float4 xu[IFA_FC_U];
                _Pragma("unroll") for (int u = 0; u < IFA_FC_U; ++u) {
                    const int s = s0 + u;
                    const ulong pr = IFA_FPR(r, s < ns ? s : 0);
                    mu[u] = s < ns ? part[part_m + pr] : -INFINITY;
                    lu[u] = s < ns ? part[part_l + pr] : 0.0f;
                    xu[u] = s < ns ? ifa_load_cols(part, part_acc + pr * VDIM + (ulong)d, cw) : (float4)0.0f;
                }
                float gm = mx;
                _Pragma("unroll") for (int u = 0; u < IFA_FC_U; ++u) gm = fmax(gm, mu[u]);
                /* a split that saw nothing (max -inf) weighs 0, multiplied in: a NaN it holds stays */
                const float k = IFA_PART_W(mx, gm);
                sum *= k;
                a *= k;
                _Pragma("unroll") for (int u = 0; u < IFA_FC_U; ++u) {
                    const float w = IFA_PART_W(mu[u], gm);
                    sum = fma(lu[u], w, sum);
                    a = fma(xu[u], (float4)w, a);
                }
                mx = gm;
            }
            /* the row's output factor: its sum's reciprocal, or with a sink the sink's share taken out */
#if SINK
            const float f = ifa_sink_factor(mx, sum, sinks[sinks_off + h0 + r / rq]);
#else
            const float f = IFA_SEEN(sum) ? 1.0f / sum : 0.0f;
#endif
            const float4 y = a * f;
            const int g = r / rq, t = r - g * rq;
            IFA_STORE_COLS(y, cw, h0 + g, d, o, obase + (ulong)g * o_hstride + (ulong)t * o_tstride + (ulong)d);
#if HAS_LSE
            if (d == 0)
#if SINK
                lse[lse_off + IFA_GROW(r)] = ifa_sink_lse(mx, sum, sinks[sinks_off + h0 + r / rq]);
#else
                lse[lse_off + IFA_GROW(r)] = ifa_lse(mx, sum);
#endif
#endif
        }
#else
        /* as ifa_combine.cl does for one row, for the block's rn rows at once: the rows' max and sum with T
         * work-items a row (each merging its share of the splits, then one merging the T), then the
         * accumulators' column quads across the work-items (par split groups a quad where they are fewer) */
        const int P = min(rn, WG), T = WG / P;
        for (int r0 = 0; r0 < rn; r0 += P) {
            const int r = r0 + lid / T, j = lid - lid / T * T, mine = lid / T < P && r < rn;
            float2 ml = (float2)(-INFINITY, 0.0f);
            for (int s = j; mine && s < ns; s += T) {
                /* the sum loaded beside the max, not behind it: one round trip a split, not two */
                const ulong pr = IFA_FPR(r, s);
                const float ms = part[part_m + pr], ls = part[part_l + pr];
                ml = ifa_merge_ml(ml, ms, ls);
            }
            fc_red[lid] = (float4)(ml, 0.0f, 0.0f);
            barrier(CLK_LOCAL_MEM_FENCE);
            if (mine && j == 0) {
                for (int k = 1; k < T; ++k)
                    ml = ifa_merge_ml(ml, fc_red[lid + k].x, fc_red[lid + k].y);
                m_s[r] = ml.x;
                /* the row's output factor: its sum's reciprocal, or with a sink the sink's share taken out; the
                 * row's LSE here, where its work-item is known to hold a row (a loop of its own after the columns,
                 * r from lid while r < rn, wrote rows 12-15 of a 12-row block past the LSE on PoCL 3.1 inside a
                 * balanced unit's piece loop, -O2 only) */
#if SINK
                a_s[r] = ifa_sink_factor(ml.x, ml.y, sinks[sinks_off + h0 + r / rq]);
#if HAS_LSE
                lse[lse_off + IFA_GROW(r)] = ifa_sink_lse(ml.x, ml.y, sinks[sinks_off + h0 + r / rq]);
#endif
#else
                a_s[r] = IFA_SEEN(ml.y) ? 1.0f / ml.y : 0.0f;
#if HAS_LSE
                lse[lse_off + IFA_GROW(r)] = ifa_lse(ml.x, ml.y);
#endif
#endif
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        /* each split's weight in its max's place (the partials are this work-group's now): exp(m_s - M) times the
         * row's factor; a split or row that saw nothing weighs 0 */
        for (int i = lid; i < rn * ns; i += WG) {
            const int r = i / ns, s = i - r * ns;
            const ulong pr = IFA_FPR(r, s);
            const float ms = part[part_m + pr];
            part[part_m + pr] = IFA_PART_W(ms, m_s[r]) * a_s[r];
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
#if IFA_VEC_OUT
        /* the vector shape (a CPU's one work-item, rows across the work-items otherwise): VW columns of a row at a
         * time over its splits, in split order as below (the same sums), a store of VW elements; quads with a
         * barrier each took a tenth of an MLA split's time at G = 128 */
        const ulong obase = o_off + b * o_bstride + (ulong)h0 * o_hstride;
        for (int r = lid; r < rn; r += WG) {
            const int g = r / rq, t = r - g * rq;
            for (int d = 0; d < VDIM; d += VW) {
                fv a = (fv)0.0f;
                for (int s = 0; s < ns; ++s) {
                    const ulong pr = IFA_FPR(r, s);
                    a = fma(IFA_LV(part + part_acc + pr * VDIM + (ulong)d), (fv)part[part_m + pr], a);
                }
                IFA_VSTORE(O_T, a, o, obase + (ulong)g * o_hstride + (ulong)t * o_tstride + (ulong)d);
            }
        }
#else
        const int cw = VDIM % 4 == 0 ? 4 : 1, cols = VDIM / cw, e_n = rn * cols;
        const int ncol = min(e_n, WG), par = WG / ncol, c = lid % ncol, jj = lid / ncol;
        const ulong obase = o_off + b * o_bstride + (ulong)h0 * o_hstride;
        for (int e0 = 0; e0 < e_n; e0 += ncol) {
            const int e = e0 + c, r = e / cols, d = (e - r * cols) * cw;
            float4 a = (float4)0.0f;
            /* the work-item's splits 4 at a time, so that their loads go out together (one at a time, a B = 1
             * row's 16 splits were 16 round trips in this last work-group), each added in split order as before */
            for (int s0 = jj; jj < par && e < e_n && s0 < ns; s0 += 4 * par) {
                float w4[4];
                float4 x4[4];
                _Pragma("unroll") for (int u = 0; u < 4; ++u) {
                    const int s = s0 + u * par;
                    const ulong pr = IFA_FPR(r, s < ns ? s : 0);
                    w4[u] = s < ns ? part[part_m + pr] : 0.0f;
                    const ulong at = part_acc + pr * VDIM + (ulong)d;
                    x4[u] = s < ns ? ifa_load_cols(part, at, cw) : (float4)0.0f;
                }
                _Pragma("unroll") for (int u = 0; u < 4; ++u)
                    if (s0 + u * par < ns) a = fma(x4[u], (float4)w4[u], a);
            }
            fc_red[lid] = a;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (jj == 0 && e < e_n) {
                for (int k = 1; k < par; ++k) a += fc_red[k * ncol + c];
                const int g = r / rq, t = r - g * rq;
                IFA_STORE_COLS(a, cw, h0 + g, d, o, obase + (ulong)g * o_hstride + (ulong)t * o_tstride + (ulong)d);
            }
            barrier(CLK_LOCAL_MEM_FENCE); /* fc_red is read before the next pass writes it */
        }
#endif
#endif
    }
#undef IFA_FPR
#endif
#endif
#if !SPLIT
    if (whole) {
        const ulong obase = o_off + b * o_bstride + (ulong)h0 * o_hstride;
#if SINK
        /* a work-item's elements come row by row: the row's factor (two exp and a division) once per row */
        int f_row = -1;
        float f = 0.0f;
#define IFA_SINK_FACTOR(r, g)                                                                                     \
    (f_row == (r) ? f : (f_row = (r), f = ifa_sink_factor(m_s[r], l_s[r], sinks[sinks_off + h0 + (g)])))
#endif
#if IFA_VEC_OUT
        for (int i = lid * VW; i < rn * VDIM; i += WG * VW) {
            const int r = i / VDIM, d = i - r * VDIM;
            const int g = r / rq, t = r - g * rq;
#if SINK
            const fv x = IFA_LV(acc + i) * IFA_SINK_FACTOR(r, g);
#else
            const float l = l_s[r];
            const fv x = IFA_SEEN(l) ? IFA_LV(acc + i) / l : 0.0f;
#endif
            IFA_VSTORE(O_T, x, o, obase + (ulong)g * o_hstride + (ulong)t * o_tstride + (ulong)d);
        }
#else
        for (int i = lid; i < rn * VDIM; i += WG) {
            const int r = i / VDIM, d = i - r * VDIM;
            const int g = r / rq, t = r - g * rq;
#if SINK
            const float x = acc[i] * IFA_SINK_FACTOR(r, g);
#else
            const float l = l_s[r];
            const float x = IFA_SEEN(l) ? acc[i] / l : 0.0f;
#endif
            IFA_STORE(O_T, IFA_QUANT(x, h0 + g, d), o,
                      obase + (ulong)g * o_hstride + (ulong)t * o_tstride + d);
        }
#endif
#if HAS_LSE
        for (int r = lid; r < rn; r += WG) {
            const float l = l_s[r];
            lse[lse_off + IFA_GROW(r)] =
#if SINK
                ifa_sink_lse(m_s[r], l, sinks[sinks_off + h0 + r / rq]);
#else
                ifa_lse(m_s[r], l);
#endif
        }
#endif
#if IFA_PACKED
        /* the padding tokens' rows: those of a row that sees nothing */
        const int np = SQ - qn;
        for (int i = lid; i < gn * np * VDIM; i += WG) {
            const int pr = i / VDIM, d = i - pr * VDIM, g = pr / np, t = qn + (pr - g * np);
            IFA_STORE(O_T, IFA_QUANT(0.0f, h0 + g, d), o, obase + (ulong)g * o_hstride + (ulong)t * o_tstride + d);
        }
#if HAS_LSE
        for (int pr = lid; pr < gn * np; pr += WG) {
            const int g = pr / np, t = qn + (pr - g * np);
            const ulong row = (b * (ulong)num_heads + (ulong)(h0 + g)) * SQ + (ulong)t;
#if SINK
            lse[lse_off + row] = ifa_sink_lse(-INFINITY, 0.0f, sinks[sinks_off + h0 + g]);
#else
            lse[lse_off + row] = -INFINITY;
#endif
        }
#endif
#endif
    }
#endif
    /* the next piece reuses the local arrays */
    barrier(CLK_LOCAL_MEM_FENCE);
    }
}
