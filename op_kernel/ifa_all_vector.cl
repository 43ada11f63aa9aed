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
 * 2u + 1 (its last), which ifa_combine.cl merges. prefix[b] is the cost position of batch b's first block.
 *
 * Build options (-D): Q_T, KV_T, O_T dtype codes (ifa_common.cl); HEAD_DIM; WG work-items per group;
 * CHUNK rows per chunk (a multiple of WG); GT heads per group; HAS_LSE 0/1; SPLIT 0/1; ROWMAX 1/2;
 * MAX_PASS 0/1; BALANCED 0/1. Offsets and strides are in elements, so the three layouts share one binary. */

#ifndef ROWMAX
#define ROWMAX 1
#endif
#ifndef MAX_PASS
#define MAX_PASS 0
#endif
#ifndef BALANCED
#define BALANCED 0
#endif
#define IFA_GLOBAL_MAX (SPLIT && ROWMAX == 2 && !MAX_PASS)

/* Balanced units: block k = (batch, KV head, head group) costs len_b + c0 (c0 > 0, so an empty batch still
 * costs something); the blocks laid end to end form a cost line [0, total) that unit u cuts at
 * ifa_unit_start (ifa_common.cl). */

typedef IFA_STORE_TYPE(Q_T) q_store;
typedef IFA_STORE_TYPE(KV_T) kv_store;
typedef IFA_STORE_TYPE(O_T) o_store;

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void ifa_all_vector(
    __global const q_store *q, ulong q_off, ulong q_bstride, ulong q_hstride,
    __global const kv_store *k, ulong k_off, __global const kv_store *v, ulong v_off,
    ulong kv_bstride, ulong kv_hstride, ulong kv_rstride,
    __global o_store *o, ulong o_off, __global float *lse, ulong lse_off,
    __global const int *lens, ulong lens_off, int uniform_len, int per_batch,
    int num_heads, int group, int head_groups, float scale,
    __global float *part, ulong part_acc, ulong part_m, ulong part_l, int split_tokens, int max_splits,
    __global const long *prefix, ulong prefix_off, long total_cost, int units, int c0, int batch) {
    const int lid = (int)get_local_id(0);

    __local float qs[GT * HEAD_DIM];
    __local float acc[GT * HEAD_DIM];
    __local float sc[GT * CHUNK];
    __local float m_s[GT], l_s[GT], a_s[GT];

#if BALANCED
    const long unit = (long)get_group_id(0);
    const long x1 = ifa_unit_start(total_cost, units, unit + 1);
    long x = ifa_unit_start(total_cost, units, unit);
    for (int piece = 0; x < x1; ++piece) {
        /* the batch holding cost position x: the largest b with prefix[b] <= x */
        int lo = 0, hi = batch;
        while (hi - lo > 1) {
            const int mid = (lo + hi) / 2;
            if (prefix[prefix_off + mid] <= x) lo = mid; else hi = mid;
        }
        const ulong b = (ulong)lo;
        const int len_b = per_batch ? lens[lens_off + b] : uniform_len;
        const long bcost = (long)len_b + c0;
        const int blk = (int)((x - prefix[prefix_off + b]) / bcost);
        const long pk = prefix[prefix_off + b] + (long)blk * bcost, pe = pk + bcost;
        const long cut0 = x - pk, cut1 = min(x1, pe) - pk;
        const int first = (int)clamp(cut0 - c0, 0L, (long)len_b);
        const int len = (int)clamp(cut1 - c0, 0L, (long)len_b);
        const int whole = cut0 == 0 && pe <= x1;
        const ulong slot = 2 * (ulong)unit + (piece == 0 ? 0 : 1);
        const int active = 1;
        x = pe;
#else
    {
        const int blk = (int)get_group_id(0);
        const ulong b = get_group_id(1);
        const int len_b = per_batch ? lens[lens_off + b] : uniform_len;
#if SPLIT
        const int split = (int)get_group_id(2);
        /* a batch has max(1, ceil(len_b / split_tokens)) splits; the work-groups of later splits run no chunk
         * and write nothing (the combine never reads their slots). No early return: PoCL's work-item loops
         * mishandle a return ahead of barriers. */
        const int active = split == 0 || split * split_tokens < len_b;
        const int first = min(len_b, split * split_tokens);
        const int len = active ? min(len_b, first + split_tokens) : first;
        const int whole = 0;
#else
        const int first = 0;
        const int len = len_b;
        const int whole = 1;
#endif
#endif
    const int kvh = blk / head_groups;
    const int g0 = (blk - kvh * head_groups) * GT;
    const int gn = min(GT, group - g0);
    const int h0 = kvh * group + g0;

    const ulong qbase = q_off + b * q_bstride + (ulong)h0 * q_hstride;
    for (int i = lid; i < GT * HEAD_DIM; i += WG) {
        const int g = i / HEAD_DIM, d = i - g * HEAD_DIM;
        qs[i] = g < gn ? IFA_LOAD(Q_T, q, qbase + (ulong)g * q_hstride + d) : 0.0f;
        acc[i] = 0.0f;
    }
    for (int g = lid; g < GT; g += WG) {
        float m0 = -INFINITY;
#if IFA_GLOBAL_MAX
        /* the row's global max over every split, from the max pass */
        const ulong mrow = (b * (ulong)num_heads + (ulong)(h0 + g)) * (ulong)max_splits;
        const int nsplit = max(1, (len_b + split_tokens - 1) / split_tokens);
        for (int s = 0; g < gn && s < nsplit; ++s) m0 = fmax(m0, part[part_m + mrow + s]);
#endif
        m_s[g] = m0;
        l_s[g] = 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    const ulong kbase = k_off + b * kv_bstride + (ulong)kvh * kv_hstride;
    const ulong vbase = v_off + b * kv_bstride + (ulong)kvh * kv_hstride;
    for (int c0 = first; c0 < len; c0 += CHUNK) {
        const int rows = min(CHUNK, len - c0);

        for (int j = lid; j < rows; j += WG) {
            const ulong kr = kbase + (ulong)(c0 + j) * kv_rstride;
            float dot[GT];
            for (int g = 0; g < GT; ++g) dot[g] = 0.0f;
            for (int d = 0; d < HEAD_DIM; ++d) {
                const float kk = IFA_LOAD(KV_T, k, kr + d);
                for (int g = 0; g < GT; ++g) dot[g] = fma(qs[g * HEAD_DIM + d], kk, dot[g]);
            }
            for (int g = 0; g < GT; ++g) sc[g * CHUNK + j] = dot[g] * scale;
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        for (int g = lid; g < gn; g += WG) {
            float mx = -INFINITY;
            for (int j = 0; j < rows; ++j) mx = fmax(mx, sc[g * CHUNK + j]);
#if MAX_PASS
            m_s[g] = fmax(m_s[g], mx);
#elif IFA_GLOBAL_MAX
            const float m = m_s[g];
            float sum = 0.0f;
            for (int j = 0; j < rows; ++j) {
                const float p = m == -INFINITY ? 0.0f : exp(sc[g * CHUNK + j] - m);
                sc[g * CHUNK + j] = p;
                sum += p;
            }
            l_s[g] += sum;
            a_s[g] = 1.0f;
#else
            const float m_old = m_s[g];
            const float m_new = fmax(m_old, mx);
            /* -inf - -inf is NaN: a head that has seen nothing rescales by 0, and an all -inf chunk adds 0. */
            const float alpha = m_old == -INFINITY ? 0.0f : exp(m_old - m_new);
            float sum = 0.0f;
            for (int j = 0; j < rows; ++j) {
                const float p = m_new == -INFINITY ? 0.0f : exp(sc[g * CHUNK + j] - m_new);
                sc[g * CHUNK + j] = p;
                sum += p;
            }
            l_s[g] = l_s[g] * alpha + sum;
            m_s[g] = m_new;
            a_s[g] = alpha;
#endif
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#if !MAX_PASS

        for (int d = lid; d < HEAD_DIM; d += WG) {
            float a[GT];
            for (int g = 0; g < GT; ++g) a[g] = g < gn ? acc[g * HEAD_DIM + d] * a_s[g] : 0.0f;
            for (int j = 0; j < rows; ++j) {
                const float vv = IFA_LOAD(KV_T, v, vbase + (ulong)(c0 + j) * kv_rstride + d);
                for (int g = 0; g < GT; ++g) a[g] = fma(sc[g * CHUNK + j], vv, a[g]);
            }
            for (int g = 0; g < gn; ++g) acc[g * HEAD_DIM + d] = a[g];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
    }

#if SPLIT || BALANCED
    if (!whole) {
        /* partials of this piece: the accumulator stays unnormalised, the combine rescales it */
#if BALANCED
#define IFA_PROW(g) (slot * GT + (ulong)(g))
#else
        const ulong row0 = (b * (ulong)num_heads + (ulong)h0) * (ulong)max_splits + (ulong)split;
#define IFA_PROW(g) (row0 + (ulong)(g) * (ulong)max_splits)
#endif
        const int gw = active ? gn : 0; /* heads whose partials this work-group writes */
#if MAX_PASS
        for (int g = lid; g < gw; g += WG) part[part_m + IFA_PROW(g)] = m_s[g];
#else
        for (int i = lid; i < gw * HEAD_DIM; i += WG) {
            const int g = i / HEAD_DIM, d = i - g * HEAD_DIM;
            part[part_acc + IFA_PROW(g) * HEAD_DIM + d] = acc[i];
        }
        for (int g = lid; g < gw; g += WG) {
#if ROWMAX == 1
            part[part_m + IFA_PROW(g)] = m_s[g]; /* global rowmax leaves the max pass's values */
#endif
            part[part_l + IFA_PROW(g)] = l_s[g];
        }
#endif
    }
#endif
#if !SPLIT
    if (whole) {
        const ulong obase = o_off + b * q_bstride + (ulong)h0 * q_hstride;
        for (int i = lid; i < gn * HEAD_DIM; i += WG) {
            const int g = i / HEAD_DIM, d = i - g * HEAD_DIM;
            const float l = l_s[g];
            IFA_STORE(O_T, l > 0.0f ? acc[i] / l : 0.0f, o, obase + (ulong)g * q_hstride + d);
        }
#if HAS_LSE
        for (int g = lid; g < gn; g += WG) {
            const float l = l_s[g];
            lse[lse_off + b * (ulong)num_heads + (ulong)(h0 + g)] = l > 0.0f ? m_s[g] + log(l) : -INFINITY;
        }
#endif
    }
#endif
    /* the next piece reuses the local arrays */
    barrier(CLK_LOCAL_MEM_FENCE);
    }
}
