/* The cv template's vector kernels. templates/cv.c runs them around CLBlast's matrix products:
 *   ifa_cv_query    once: the query rows of every (batch, KV head, split) entry as fp32 (E, M, D), M = GT x SQ
 *                   rows r = g x SQ + t, rotated (RoPE) on the way; one copy per split, so both products
 *                   are plain strided batches;
 *   then per chunk (`step`) of CHUNK KV rows:
 *   ifa_cv_gather   the chunk's K rows (E, CHUNK, D) and the first D_v = VDIM columns of its V rows
 *                   (E, CHUNK, D_v) of every entry as fp32: converted from the
 *                   storage dtype, dequantised (antiquant), fetched through the block table; rows past the
 *                   entry's end, and value rows the mask hides from every query token, are written as zeros
 *                   without being read;
 *   (CLBlast)       S = Q x K^T, (E, M, CHUNK);
 *   ifa_cv_softmax  one work-group per (entry, row): scale, pse, ALiBi, softcap and visibility (length, causal
 *                   query tokens, window, mask) turn S into scores; the online softmax updates the row's max
 *                   m and sum l, writes the probabilities over the scores and rescales the row's accumulator
 *                   by exp(m_old - m_new) (zeroes it on chunk 0);
 *   (CLBlast)       acc += P x V, (E, M, D_v);
 * and ifa_combine.cl (CV=1) merges the splits, normalises and writes the output and the LSE.
 * Entry e = (b x N_kv + kvh) x max_splits + s reads batch b's logical positions [first, end) with
 * first = kv_lo + min(span, s x split_tokens), end = min(len_b, first + split_tokens) (ifa_attention_begin.clh's
 * split rule); chunk `step` covers [first + step x CHUNK, + CHUNK). The accumulators (E, M, D_v), maxima and
 * sums (E, M) are the combine's partials. All arithmetic is fp32.
 * Build options (-D): Q_T, KV_T, HEAD_DIM, VDIM, WG (softmax work-items per row, a power of 2), GT (= G), SQ,
 * CHUNK, CAUSAL, HAS_MASK, HAS_PSE, HAS_ALIBI, SOFTCAP, HAS_PAD, QLEN, PAGED, ANTIQUANT, AQ_T, AQ_OFF, VAQ,
 * VAQ_T, VAQ_OFF, ROPE, ROPE_DIM, ROPE_OFF, ROPE_TAB, as in ifa_all_vector_options.cl. */

#define M_ROWS (GT * SQ)

typedef IFA_STORE_TYPE(Q_T) q_store;
typedef IFA_STORE_TYPE(KV_T) kv_store;

/* Global id (d, r, e): element d of row r of entry e. */
__kernel void ifa_cv_query(IFA_KPARAMS(IFA_ARGS_CV_QUERY)) {
    const int d = (int)get_global_id(0), r = (int)get_global_id(1);
    const ulong e = get_global_id(2);
    const ulong bh = e / (ulong)max_splits, b = bh / (ulong)num_kv_heads, kvh = bh % (ulong)num_kv_heads;
    const int g = r / SQ, t = r - g * SQ;
    const ulong addr = q_off + b * q_bstride + (kvh * GT + (ulong)g) * q_hstride + (ulong)t * q_tstride + (ulong)d;
    const int qok = t < IFA_QLEN(b); /* a padding token is never read: its row is zeros and sees nothing */
    float x = qok ? IFA_LOAD(Q_T, q, addr) : 0.0f;
#if ROPE
    if (qok && IFA_ROPE_IN(d)) {
        const int pos = (int)rope_pos[rope_pos_off + b] + t, re = d - ROPE_OFF;
        const float xp = IFA_LOAD(Q_T, q, addr - (ulong)re + (ulong)ifa_rope_partner(re));
        x = ifa_rope_apply(x, xp, re, IFA_ROPE_CS(pos, ifa_rope_index(re)));
    }
#endif
    ws[qt_off + (e * M_ROWS + (ulong)r) * HEAD_DIM + (ulong)d] = x;
}

/* The logical rows [*first, *end) entry e reads, and its batch and KV head. */
inline void ifa_cv_entry(ulong e, int num_kv_heads, int max_splits, int split_tokens, __global const int *lens,
                         ulong lens_off, int uniform_len, int per_batch, int window, ulong *b, ulong *kvh, int *len_b,
                         int *first, int *end) {
    const ulong bh = e / (ulong)max_splits;
    const int s = (int)(e - bh * (ulong)max_splits);
    *b = bh / (ulong)num_kv_heads, *kvh = bh % (ulong)num_kv_heads;
    *len_b = IFA_LEN(*b);
    const int kv_lo = ifa_kv_lo(*len_b, window, IFA_SHIFT(CAUSAL, IFA_QLEN(*b))), span = *len_b - kv_lo;
    *first = kv_lo + min(span, s * split_tokens);
    *end = min(*len_b, *first + split_tokens);
}

/* Global id (d, j, e): element d of chunk row j of entry e, for K and V. */
__kernel void ifa_cv_gather(IFA_KPARAMS(IFA_ARGS_CV_GATHER)) {
    const int d = (int)get_global_id(0), j = (int)get_global_id(1);
    const ulong e = get_global_id(2);
    ulong b, kvh;
    int len_b, first, end;
    ifa_cv_entry(e, num_kv_heads, max_splits, split_tokens, lens, lens_off, uniform_len, per_batch, window, &b, &kvh,
                 &len_b, &first, &end);
    const int p = first + step * CHUNK + j;
#if HAS_PAD
    const int row0 = kv_end - len_b; /* Ascend's kv padding: batch b's rows end at kv_end */
#else
    const int row0 = 0;
#endif
    float kx = 0.0f, vx = 0.0f;
    if (p < end) {
#if PAGED
        const int pb = table[table_off + b * (ulong)table_cols + (ulong)(p / block_size)];
        const ulong ro = (ulong)pb * kv_bstride + (ulong)(p % block_size) * kv_rstride;
#else
        const ulong ro = b * kv_bstride + (ulong)(row0 + p) * kv_rstride;
#endif
        const ulong at = ro + kvh * kv_hstride + (ulong)d;
        kx = IFA_LOAD(KV_T, k, k_off + at);
#if HAS_MASK
        /* a row the mask hides from every query token: its value is zero, never read (P x V would multiply what
         * it holds by 0, and 0 x NaN is NaN; its key's scores are -inf whatever it holds) */
        const int vread =
            d < VDIM && !ifa_hidden(mask, mask_off + b * mask_bstride + (ulong)p, mask_tstride, IFA_QLEN(b));
#else
        const int vread = d < VDIM;
        (void)mask, (void)mask_off, (void)mask_bstride, (void)mask_tstride;
#endif
        if (vread) vx = IFA_LOAD(KV_T, v, v_off + at);
        /* the position a token-mode scale form indexes: the pool's row (mode 5), the logical position (paged)
         * or the key row */
#if PAGED
#define IFA_AQ_POS(mode) ((mode) == 5 ? (ulong)pb * (ulong)block_size + (ulong)(p % block_size) : (ulong)p)
#else
#define IFA_AQ_POS(mode) ((ulong)(row0 + p))
#endif
#if ANTIQUANT
        const ulong ai = AQ_IDX(IFA_AQ_POS(ANTIQUANT), d);
        kx = (kx + AQ_OFFSET(ai)) * AQ_SCALE(ai);
#endif
#if VAQ
        if (vread) {
            const ulong vai = VAQ_IDX(IFA_AQ_POS(VAQ), d);
            vx = (vx + VAQ_OFFSET(vai)) * VAQ_SCALE(vai);
        }
#endif
    }
    ws[kt_off + (e * CHUNK + (ulong)j) * HEAD_DIM + (ulong)d] = kx;
    if (d < VDIM) ws[vt_off + (e * CHUNK + (ulong)j) * VDIM + (ulong)d] = vx;
}

/* The max (is_max) or sum of x over the work-group; every work-item gets it. */
inline float ifa_cv_reduce(__local float *red, float x, int lid, int is_max) {
    red[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = WG / 2; w > 0; w >>= 1) {
        if (lid < w) red[lid] = is_max ? fmax(red[lid], red[lid + w]) : red[lid] + red[lid + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float r = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

/* One work-group of WG work-items per (entry, row). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void ifa_cv_softmax(IFA_KPARAMS(IFA_ARGS_CV_SOFTMAX)) {
    __local float red[WG];
    const int lid = (int)get_local_id(0);
    const ulong row = get_group_id(0), e = row / M_ROWS;
    const int r = (int)(row - e * M_ROWS), g = r / SQ, t = r - g * SQ;
    ulong b, kvh;
    int len_b, first, end;
    ifa_cv_entry(e, num_kv_heads, max_splits, split_tokens, lens, lens_off, uniform_len, per_batch, window, &b, &kvh,
                 &len_b, &first, &end);
    const int c0 = first + step * CHUNK;
    const int qn = IFA_QLEN(b);
    const int end_t = t < qn ? len_b - (CAUSAL ? qn - 1 - t : 0) : 0; /* the token's causal end; padding: none */
    __global float *sr = ws + s_off + row * CHUNK;
    float mx = -INFINITY;
    for (int j = lid; j < CHUNK; j += WG) {
        const int p = c0 + j;
        float s = -INFINITY;
        int visible = p < end && p < end_t && (window <= 0 || p >= end_t - window);
#if HAS_MASK
        visible = visible && mask[mask_off + b * mask_bstride + (ulong)t * mask_tstride + (ulong)p] == 0;
#endif
        if (visible) {
            s = sr[j] * scale;
#if HAS_PSE
            s += IFA_LOAD(Q_T, pse, pse_off + b * pse_bstride + (kvh * GT + (ulong)g) * pse_hstride +
                                        (ulong)t * pse_tstride + (ulong)p);
#endif
#if HAS_ALIBI
            s += ifa_alibi(alibi[alibi_off + b * alibi_bstride + kvh * GT + (ulong)g], p, len_b - qn + t);
#endif
#if SOFTCAP
            s = softcap * tanh(s / softcap);
#endif
        }
        sr[j] = s;
        mx = fmax(mx, s);
    }
    mx = ifa_cv_reduce(red, mx, lid, 1);
    const float m_old = step == 0 ? -INFINITY : ws[m_off + row];
    const float l_old = step == 0 ? 0.0f : ws[l_off + row];
    const float m_new = fmax(m_old, mx);
    /* -inf - -inf is NaN: a row that has seen nothing rescales by 0, and a row still at -inf has only -inf
     * scores, whose exp against 0 is 0 */
    const float alpha = m_old == -INFINITY ? 0.0f : exp(m_old - m_new);
    const float m_use = m_new == -INFINITY ? 0.0f : m_new;
    float sum = 0.0f;
    for (int j = lid; j < CHUNK; j += WG) {
        const float pr = exp(sr[j] - m_use);
        sr[j] = pr;
        sum += pr;
    }
    sum = ifa_cv_reduce(red, sum, lid, 0);
    if (lid == 0) {
        ws[m_off + row] = m_new;
        ws[l_off + row] = l_old * alpha + sum;
    }
    __global float *acc = ws + acc_off + row * VDIM;
    for (int d = lid; d < VDIM; d += WG) acc[d] = step == 0 ? 0.0f : acc[d] * alpha;
}
