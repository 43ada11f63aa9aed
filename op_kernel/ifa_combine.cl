/* Split-KV combine (flash decoding, partial-rowmax algorithm): each split s of a query row left an
 * unnormalised accumulator acc_s, its max m_s and its sum l_s. With M = max_s m_s:
 *   L = sum_s l_s * exp(m_s - M),  out = sum_s acc_s * exp(m_s - M) / L,  lse = M + log(L).
 * A split that saw no key has m_s = -inf and contributes nothing (never exp(-inf - -inf) = NaN); a row whose
 * splits all saw nothing gives zeros and lse = -inf.
 * With ROWMAX=2 (global rowmax) every split already used the row's global max M, so the combine only sums:
 * L = sum_s l_s, out = sum_s acc_s / L.
 * With BALANCED=1 the pieces of a row are the partials of the units that cut its block (ifa_attention_begin.clh);
 * a block that one unit holds whole was written by that unit, and the row is left alone here.
 * With CV=1 the partials are the cv template's (ifa_cv.cl): entry (batch, KV head, split), row (head in
 * group, token).
 * With SINK=1 the head's sink logit joins the sum (ifa_common.cl's ifa_sink_factor and ifa_sink_lse).
 * One work-group per (batch, query head, query token) row, its work-items over the row's splits and columns at
 * once (the sums through local memory). Build options (-D): O_T, WG, CVW, HAS_LSE, SINK, ROWMAX,
 * BALANCED, CV, QUANT_OUT, Q2_T, Q2_OFF, PREFIX_SLOTS, QLEN (per-batch query tokens: each batch's causal shift,
 * and a padding token's row written as one that saw nothing: the fused kernel leaves no partial for it), QPACK
 * (the fused kernel packed each head's rows by the batch's tokens: QLEN with one KV head per work-group). The shape (head_dim: the output's, D_v; gt: rows'
 * heads per partial entry, sq: query tokens, causal) comes as arguments: the combine does a few integer
 * divisions per work-group and one pass over D_v, so specialising on them bought nothing and cost a program
 * build per shape (as in ifa_attention_begin.clh, a batch's splits cover [ifa_kv_lo, len)). */

#undef IFA_SQ
#define IFA_SQ sq /* query tokens: an argument here (ifa_common.cl's IFA_QLEN without QLEN) */
#ifndef BALANCED
#define BALANCED 0
#endif
#ifndef CV
#define CV 0 /* 1: the cv template's partials, indexed by (batch, KV head, split) entry and row (g, t) */
#endif
#ifndef PREFIX_SLOTS
#define PREFIX_SLOTS 0 /* 1: slot 0 of each row holds the shared prefix's partial */
#endif
#ifndef QPACK
#define QPACK 0
#endif
/* CVW > 1 (the vector shape's width, dividing D_v; not with int8 output): a work-item's columns CVW at a time over
 * the row's splits, each split's weight once a vector, where the quads' pass took each split's exp for every quad
 * and a barrier a pass (on a CPU, MLA's balanced units at G = 128: 128 rows x 128 quads a batch) */
#ifndef CVW
#define CVW 1
#endif
#if CVW > 1
typedef IFA_CAT(float, CVW) fcv;
#endif

/* x over the work-group (max where is_max, else the sum), every work-item's result the same: a tree in red (WG
 * floats; every work-item calls it) */
inline float ifa_combine_reduce(__local float *red, float x, int lid, int is_max) {
    red[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 1; k < WG; k *= 2) { /* any WG, not only powers of two */
        if (lid % (2 * k) == 0 && lid + k < WG) red[lid] = is_max ? fmax(red[lid], red[lid + k]) : red[lid] + red[lid + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float r = red[0];
    barrier(CLK_LOCAL_MEM_FENCE); /* red is free again for the next call */
    return r;
}

typedef IFA_STORE_TYPE(O_T) o_store;

#undef VDIM
#define VDIM head_dim /* ifa_common.cl's per-channel post-quant index reads VDIM: here the argument (D_v) */

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void ifa_combine(IFA_KPARAMS(IFA_ARGS_COMBINE)) {
    /* the sums' scratch (at the kernel's outermost scope before any statement, as every compiler takes it) */
    __local float red[WG];
    __local float4 red4[WG];
    const ulong row = get_group_id(0);
    const ulong bh = row / (ulong)sq, t = row - bh * (ulong)sq;
    const ulong b = bh / (ulong)num_heads, h = bh - b * (ulong)num_heads;
    const int lid = (int)get_local_id(0);
    const int len_b = IFA_LEN(b), qn = IFA_QLEN(b);
    const int span = len_b - ifa_kv_lo(len_b, window, IFA_SHIFT(causal, qn));
    const ulong obase = o_off + b * o_bstride + h * o_hstride + t * o_tstride;
#if QLEN
    /* a padding token (the fused kernel packs the batch's qn tokens' rows and writes no partial for the
     * others): the row of a row that sees nothing */
    if ((int)t >= qn) {
        for (int d = lid; d < head_dim; d += WG) IFA_STORE(O_T, IFA_QUANT(0.0f, h, d), o, obase + d);
#if HAS_LSE && SINK
        if (lid == 0) lse[lse_off + row] = ifa_sink_lse(-INFINITY, 0.0f, sinks[sinks_off + h]);
#elif HAS_LSE
        if (lid == 0) lse[lse_off + row] = -INFINITY;
#endif
        return; /* the whole work-group: no barrier follows */
    }
#endif
#if BALANCED
    const int hh = (int)h % group;
    const int blk = (int)h / group * head_groups + hh / gt;
    /* the slot's row: head by head, each with the fused kernel's tokens per head (QPACK: the batch's own) */
    const ulong r = (ulong)(hh % gt) * (ulong)(QPACK ? max(qn, 1) : sq) + t;
    const long bcost = (long)span + c0;
    const long pk = prefix[prefix_off + b] + (long)blk * bcost;
    const ifa_pieces pc = ifa_pieces_of(total_cost, units, pk, bcost);
    const int nsplit = pc.count > 1 ? pc.count : 0; /* 0: one unit held the block and wrote it */
#define IFA_PIDX(s) (ifa_piece_slot(pc, s) * (ulong)(gt * sq) + r)
/* a unit whose stretch is empty (more units than cost positions) ran nothing and wrote no slot */
#define IFA_PVALID(s)                                                                                             \
    (ifa_unit_start(total_cost, units, pc.first + (s)) < ifa_unit_start(total_cost, units, pc.first + (s) + 1))
#elif CV
    /* entry (b, KV head, split) holds the gt x sq rows of the KV head's query heads; gt = group */
    const ulong ebase = (b * (ulong)(num_heads / group) + h / (ulong)group) * (ulong)max_splits;
    const ulong erow = (h % (ulong)group) * (ulong)sq + t;
    const int nsplit = max(1, (span + split_tokens - 1) / split_tokens);
#define IFA_PIDX(s) ((ebase + (ulong)(s)) * (ulong)(gt * sq) + erow)
#define IFA_PVALID(s) 1
#else
    const ulong first = row * (ulong)max_splits;
    /* only the splits this batch has were written */
    const int nsplit = PREFIX_SLOTS + max(1, (span + split_tokens - 1) / split_tokens);
#define IFA_PIDX(s) (first + (ulong)(s))
#define IFA_PVALID(s) 1
#endif
    if (nsplit == 0) return; /* the whole work-group (nsplit is the row's): no barrier follows */
    /* The row's max and sum with the work-items over the splits (a split each, then a tree in local memory),
     * and the accumulators with them over columns and splits at once: column quad c of split group j, j taking
     * every par-th split, the par sums added in local memory. A work-item walking all of a row's splits alone
     * waits for each load in turn: 64 splits of a B = 1 row are 3 x 64 loads one after another. */
    float m = -INFINITY;
    for (int s = lid; s < nsplit; s += WG)
        if (IFA_PVALID(s)) m = fmax(m, part[part_m + IFA_PIDX(s)]);
    m = ifa_combine_reduce(red, m, lid, 1);
    float l = 0.0f;
    for (int s = lid; s < nsplit; s += WG) {
        if (!IFA_PVALID(s)) continue;
#if ROWMAX == 2
        l += part[part_l + IFA_PIDX(s)];
#else
        /* a split that saw nothing weighs 0, multiplied in (a NaN sum stays: ifa_common.cl's IFA_PART_W) */
        l += part[part_l + IFA_PIDX(s)] * IFA_PART_W(part[part_m + IFA_PIDX(s)], m);
#endif
    }
    l = ifa_combine_reduce(red, l, lid, 0);
#if SINK
    const float f = ifa_sink_factor(m, l, sinks[sinks_off + h]);
#endif
#if CVW > 1 && QUANT_OUT == 0
    /* each work-item its vectors of CVW columns over every split in split order (the quads' sums where they take
     * one split group), stored an element at a time: where some work-items of the group had no vector (D_v < WG x
     * CVW), PoCL 3.1's optimised vstore_half16_rte wrote for them too, past the row (another row's output, or past
     * the buffer: valgrind, B = 2, N = 2, D = 32, fp16); the elements' stores cost no time measured (MLA G = 128,
     * B = 2: the combine's 193 us either way) */
    const int nv = head_dim / CVW;
    for (int v = lid; v < nv; v += WG) {
        const int d = v * CVW;
        fcv acc = (fcv)0.0f;
        for (int s = 0; s < nsplit; ++s) {
#if ROWMAX == 2
            const int ok = IFA_PVALID(s);
            const float w = 1.0f;
#else
            const int ok = IFA_PVALID(s);
            const float w = ok ? IFA_PART_W(part[part_m + IFA_PIDX(s)], m) : 0.0f;
#endif
            if (ok)
                acc = fma(IFA_CAT(vload, CVW)(0, part + part_acc + IFA_PIDX(s) * (ulong)head_dim + (ulong)d), (fcv)w,
                          acc);
        }
#if SINK
        acc *= f;
#else
        acc = IFA_SEEN(l) ? acc / l : (fcv)0.0f;
#endif
        float a_[CVW];
        IFA_CAT(vstore, CVW)(acc, 0, a_);
        for (int j = 0; j < CVW; ++j) IFA_STORE(O_T, a_[j], o, obase + (ulong)(d + j));
    }
#else
    /* columns in quads where D_v allows (else one at a time), ncol work-items a split group; every work-item
     * takes the same number of passes (the barriers) */
    const int cw = head_dim % 4 == 0 ? 4 : 1, cols = head_dim / cw, ncol = min(cols, WG), par = WG / ncol;
    const int c = lid % ncol, j = lid / ncol;
    for (int q0 = 0; q0 < cols; q0 += ncol) {
        const int cc = q0 + c;
        float4 acc = (float4)0.0f;
        /* the work-item's splits 4 at a time, so that their loads go out together, each added in split order */
        for (int s0 = j; j < par && cc < cols && s0 < nsplit; s0 += 4 * par) {
            float w4[4];
            float4 x4[4];
            int ok4[4];
            _Pragma("unroll") for (int u = 0; u < 4; ++u) {
                const int s = s0 + u * par;
                int ok = s < nsplit && IFA_PVALID(s);
#if ROWMAX == 2
                w4[u] = 1.0f;
#else
                w4[u] = ok ? IFA_PART_W(part[part_m + IFA_PIDX(s)], m) : 0.0f;
#endif
                const ulong at = ok ? part_acc + IFA_PIDX(s) * (ulong)head_dim + (ulong)(cc * cw) : 0;
                x4[u] = ok ? ifa_load_cols(part, at, cw) : (float4)0.0f;
                ok4[u] = ok;
            }
            _Pragma("unroll") for (int u = 0; u < 4; ++u)
                if (ok4[u]) acc = fma(x4[u], (float4)w4[u], acc);
        }
        red4[lid] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (j == 0 && cc < cols) {
            for (int k = 1; k < par; ++k) acc += red4[k * ncol + c];
#if SINK
            acc *= f;
#else
            acc = IFA_SEEN(l) ? acc / l : (float4)0.0f;
#endif
            const int d = cc * cw;
            IFA_STORE_COLS(acc, cw, h, d, o, obase + d);
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* red4 is read before the next pass writes it */
    }
#endif
#if HAS_LSE && SINK
    if (lid == 0) lse[lse_off + row] = ifa_sink_lse(m, l, sinks[sinks_off + h]);
#elif HAS_LSE
    if (lid == 0) lse[lse_off + row] = ifa_lse(m, l);
#endif
}
