/* The matrix shape (MMA 1 and 2): warp matrix products with the query rows as the products' 16-row side, each warp
 * a quarter of the key and value rows of a step, the warps merged at the end. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void ifa_attention_matrix(IFA_KPARAMS(IFA_ARGS_ALL_VECTOR)) {
#include "ifa_attention_begin.clh"
#include "ifa_attention_matrix.clh"
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
#include "ifa_attention_end.clh"
}
