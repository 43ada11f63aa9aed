/* The lane shape (LANES): D / 8 work-items a key row, 8 columns (16 bytes of fp16) each, every group of lanes its
 * own key rows with its own online softmax in registers; the groups merged at the end. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void ifa_attention_lanes(IFA_KPARAMS(IFA_ARGS_ALL_VECTOR)) {
#include "ifa_attention_begin.clh"
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
#include "ifa_attention_lanes_step_sc.clh"
#else
#include "ifa_attention_lanes_step.clh"
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
#include "ifa_attention_lanes_merge.clh"
    }
#include "ifa_attention_end.clh"
}
