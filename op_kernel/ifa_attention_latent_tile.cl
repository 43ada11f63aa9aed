/* The latent tile (MMA 7, multi-head latent attention): the group's 16 query rows against 16 keys a step in warp
 * matrix products, four warps sharing the D columns of the scores and then the value columns of P.V. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
ifa_attention_latent_tile(IFA_KPARAMS(IFA_ARGS_ALL_VECTOR)) {
#include "ifa_attention_begin.clh"
#include "ifa_attention_matrix.clh"
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
#include "ifa_attention_end.clh"
}
