/* The chunk shapes (vector, work_group, wide_loads, key_tile): the block's K/V rows in chunks of CHUNK, each chunk's
 * scores into local memory, its softmax, then P.V into acc. VW > 1 (the CPU's vector shape) walks each phase in
 * vectors of VW floats with register tiles; VW = 1 is the work-group shape (a work-item a key row, then a value
 * column), with V8 reading 8 elements a load and KTILE the chunk's key rows through local memory. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void ifa_attention_chunks(IFA_KPARAMS(IFA_ARGS_ALL_VECTOR)) {
#include "ifa_attention_begin.clh"
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

#include "ifa_attention_chunk_scores.clh"
        barrier(CLK_LOCAL_MEM_FENCE);

#include "ifa_attention_chunk_softmax.clh"
        barrier(CLK_LOCAL_MEM_FENCE);
#if !MAX_PASS
#include "ifa_attention_chunk_pv.clh"
#endif
    }
#include "ifa_attention_end.clh"
}
