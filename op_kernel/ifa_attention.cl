/* The all-vector template's fused attention kernels for IncreFlashAttention: what they compute, and what they share
 * at file scope.
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
 * Each shape is its own kernel in its own file, ifa_attention_<shape>.cl (templates/all_vector.c names each
 * shape's program): the block's setup (ifa_attention_begin.clh), the shape's walk over the block's K/V rows, and
 * its end (ifa_attention_end.clh: the value folds, the split's partials or the final normalisation); docs/templates.md
 * lists the pieces. Build options and their defaults: ifa_all_vector_options.cl. */

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
