/* MergeAttentionStates: one work-group per query row merges the row's P partial results,
 *   M = max_i lse_i,  L = Σ_i exp(lse_i - M),  out = Σ_i exp(lse_i - M) · out_i / L,  lse = M + ln L,
 * skipping parts whose lse_i is -inf (their outputs are not even read, so NaN there cannot leak); a row
 * with every part -inf gives zeros and lse -inf. A NaN lse_i, a +inf one (e^(inf - inf)) or a NaN in a part's
 * output that is read makes the row (or that column) NaN (docs/op.md, "Non-finite values"). Partial outputs
 * are (P, rows, D), LSEs (P, rows).
 * Build options (-D): P_T, O_T dtype codes (ifa_common.cl), WG, HAS_LSE. */

typedef IFA_STORE_TYPE(P_T) p_store;
typedef IFA_STORE_TYPE(O_T) o_store;

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void ifa_merge(
    __global const p_store *po, ulong po_off, __global const float *pl, ulong pl_off, __global o_store *o,
    ulong o_off, __global float *lse, ulong lse_off, ulong rows, int parts, int dim) {
    const ulong row = get_group_id(0);
    const int lid = (int)get_local_id(0);
    float m = -INFINITY;
    for (int i = 0; i < parts; ++i) m = fmax(m, pl[pl_off + (ulong)i * rows + row]);
    float l = 0.0f;
    for (int i = 0; i < parts; ++i) {
        const float li = pl[pl_off + (ulong)i * rows + row];
        if (li != -INFINITY) l += exp(li - m);
    }
    for (int d = lid; d < dim; d += WG) {
        float acc = 0.0f;
        for (int i = 0; i < parts; ++i) {
            const float li = pl[pl_off + (ulong)i * rows + row];
            if (li != -INFINITY) acc = fma(exp(li - m), IFA_LOAD(P_T, po, po_off + ((ulong)i * rows + row) * (ulong)dim + d), acc);
        }
        IFA_STORE(O_T, IFA_SEEN(l) ? acc / l : 0.0f, o, o_off + row * (ulong)dim + d);
    }
#if HAS_LSE
    if (lid == 0) lse[lse_off + row] = ifa_lse(m, l);
#endif
}
