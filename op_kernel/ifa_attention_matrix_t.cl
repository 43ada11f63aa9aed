/* The transposed matrix shape (MMA 3 to 6): warp matrix products with the keys and the value columns as the
 * products' 16-row side and the query rows as their 8-column side. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void ifa_attention_matrix_t(IFA_KPARAMS(IFA_ARGS_ALL_VECTOR)) {
#include "ifa_attention_begin.clh"
#include "ifa_attention_matrix.clh"
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
#include "ifa_attention_end.clh"
}
