/* Split-KV combine (flash decoding, partial-rowmax algorithm): each split s of a query row left an
 * unnormalised accumulator acc_s, its max m_s and its sum l_s. With M = max_s m_s:
 *   L = sum_s l_s * exp(m_s - M),  out = sum_s acc_s * exp(m_s - M) / L,  lse = M + log(L).
 * A split that saw no key has m_s = -inf and contributes nothing (never exp(-inf - -inf) = NaN); a row whose
 * splits all saw nothing gives zeros and lse = -inf.
 * With ROWMAX=2 (global rowmax) every split already used the row's global max M, so the combine only sums:
 * L = sum_s l_s, out = sum_s acc_s / L.
 * One work-group per (batch, query head) row. Build options (-D): O_T, HEAD_DIM, WG, HAS_LSE, ROWMAX. */

typedef IFA_STORE_TYPE(O_T) o_store;

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void ifa_combine(
    __global const float *part, ulong part_acc, ulong part_m, ulong part_l, int max_splits,
    __global o_store *o, ulong o_off, ulong q_bstride, ulong q_hstride,
    __global float *lse, ulong lse_off, int num_heads,
    __global const int *lens, ulong lens_off, int uniform_len, int per_batch, int split_tokens) {
    const ulong row = get_group_id(0);
    const ulong b = row / (ulong)num_heads, h = row - b * (ulong)num_heads;
    const int lid = (int)get_local_id(0);
    const ulong first = row * (ulong)max_splits;
    /* only the splits this batch has were written */
    const int len_b = per_batch ? lens[lens_off + b] : uniform_len;
    const int nsplit = max(1, (len_b + split_tokens - 1) / split_tokens);

    float m = -INFINITY;
    for (int s = 0; s < nsplit; ++s) m = fmax(m, part[part_m + first + s]);
    float l = 0.0f;
    for (int s = 0; s < nsplit; ++s) {
        const float ms = part[part_m + first + s];
#if ROWMAX == 2
        (void)ms;
        l += part[part_l + first + s];
#else
        if (ms != -INFINITY) l += part[part_l + first + s] * exp(ms - m);
#endif
    }
    const ulong obase = o_off + b * q_bstride + h * q_hstride;
    for (int d = lid; d < HEAD_DIM; d += WG) {
        float acc = 0.0f;
        for (int s = 0; s < nsplit; ++s) {
            const float ms = part[part_m + first + s];
#if ROWMAX == 2
            (void)ms;
            acc += part[part_acc + (first + s) * HEAD_DIM + d];
#else
            if (ms != -INFINITY) acc = fma(part[part_acc + (first + s) * HEAD_DIM + d], exp(ms - m), acc);
#endif
        }
        IFA_STORE(O_T, l > 0.0f ? acc / l : 0.0f, o, obase + d);
    }
#if HAS_LSE
    if (lid == 0) lse[lse_off + row] = l > 0.0f ? m + log(l) : -INFINITY;
#endif
}
