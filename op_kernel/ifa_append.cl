/* KVCacheAppend: one work-group per (new token, group of HPG KV heads, key|value) copies those rows of
 * HEAD_DIM values from the new rows into the cache, one after the other, converting to the cache's dtype,
 * or quantising it online:
 *   QUANT 1 (symmetric):  a = max|x|, scale = a / QMAX (1 if a = 0), q = rint(x / scale), no offset
 *   QUANT 2 (asymmetric): span = max x - min x (|min x|, or 1, if that is 0), scale = span / (QMAX - QMIN),
 *                         offset = min x / scale - QMIN, q = rint(x / scale - offset)
 * with q clamped to [QMIN, QMAX] ([-128, 127] for int8, [-8, 7] for int4), so that (q + offset) * scale,
 * which IncreFlashAttention computes, is within scale / 2 of x (docs/kv-cache.md has the bound). A float8
 * cache (DST_T 9 e4m3fn, 10 e5m2) takes QUANT 1 with QMAX = 448 or 57344 (the format's largest finite) and
 * q = x / scale rounded to float8 (within 2^-4 or 2^-3 of it), or QUANT 0: each value rounded as it is.
 * dst[4t .. 4t+3] holds written row t's (unit, row, position, source): its batch and position (contiguous)
 * or its pool block and row in the block (paged), validated on the host, its rotary position and the new
 * token it comes from (b x S1 + i; with new_seq_lengths the rows a batch leaves out have no entry). The cache element of
 * (unit u, row r, head n, d) is ((u * R + r) * NKV + n) * D + d, or ((u * NKV + n) * R + r) * D + d with
 * bnsd (an argument: it moves a row's start, once per row, so a build per layout bought nothing); the
 * scale of half h is ((h * U + u) * NKV + n) * R + r in both cases.
 * With ROPE (ifa_common.cl) the key rows are rotated at their position before anything else, so the cache
 * holds rotated keys and the quantisation sees the rotated values; the token's cos/sin pairs are computed
 * once for the HPG heads of the work-group.
 * With KEY_ONLY (no value rows: one latent cache, multi-head latent attention) the grid has the key pass only
 * and each scale (and offset) is written to both halves.
 * With STAT (given scales: the separate form's key_/value_antiquant_mode 0) nothing is reduced or written
 * beside the rows: element d of head n is q = rint(x / s - o) clamped (float8: x / s - o rounded to the
 * format), s and o the given per-tensor (STAT 1) or per-channel (STAT 2, index n x D + d) scale and offset.
 * The separate form launches one pass per side (the grid's second dimension 1), with that side's tensors in
 * the key slots, so kv is 0 and a scale index has no half.
 * Build options (-D): SRC_T, DST_T (dtype codes), HEAD_DIM, QUANT 0/1/2, WG (a power of 2), HPG
 * (divides N_kv), ROPE, ROPE_DIM, ROPE_OFF, ROPE_TAB, KEY_ONLY 0/1, STAT 0/1/2, S_T (the given scales' dtype code),
 * S_OFF 0/1. */
#ifndef HPG
#define HPG 1
#endif
#ifndef KEY_ONLY
#define KEY_ONLY 0
#endif
#ifndef STAT
#define STAT 0
#endif
#ifndef S_T
#define S_T 0
#endif
#ifndef S_OFF
#define S_OFF 0
#endif
typedef IFA_STORE_TYPE(S_T) given_store;
/* the given scale and offset of element d of head n (STAT), and 16 of them from d (IFA_GS16, IFA_GO16) */
#define IFA_GIDX(n, d) (STAT == 2 ? (ulong)(n) * HEAD_DIM + (ulong)(d) : (ulong)0)
#define IFA_GS(n, d) IFA_LOAD(S_T, gsc, gsc_off + IFA_GIDX(n, d))
#define IFA_GS16(n, d) (STAT == 2 ? IFA_NLOAD(S_T, 16, gsc, gsc_off + IFA_GIDX(n, d)) : (float16)IFA_GS(n, 0))
#if S_OFF
#define IFA_GO(n, d) IFA_LOAD(S_T, gof, gof_off + IFA_GIDX(n, d))
#define IFA_GO16(n, d) (STAT == 2 ? IFA_NLOAD(S_T, 16, gof, gof_off + IFA_GIDX(n, d)) : (float16)IFA_GO(n, 0))
#else
#define IFA_GO(n, d) 0.0f
#define IFA_GO16(n, d) ((float16)0.0f)
#endif

typedef IFA_STORE_TYPE(SRC_T) src_store;
typedef IFA_STORE_TYPE(DST_T) dst_store;

#if DST_T == IFA_I4
#define QMIN (-8.0f)
#define QMAX 7.0f
#elif DST_T == IFA_E4M3
#define QMIN (-448.0f)
#define QMAX 448.0f
#elif DST_T == IFA_E5M2
#define QMIN (-57344.0f)
#define QMAX 57344.0f
#else
#define QMIN (-128.0f)
#define QMAX 127.0f
#endif

/* max that propagates NaN (fmax drops it): a row holding a non-finite value gets a NaN scale, so attention
 * over it is visibly NaN instead of silently wrong */
inline float ifa_nanmax(float a, float b) { return isnan(a) || isnan(b) ? NAN : fmax(a, b); }

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void ifa_kv_append(
    __global const src_store *k, ulong k_off, __global const src_store *v, ulong v_off, __global dst_store *kc,
    ulong kc_off, __global dst_store *vc, ulong vc_off, __global const int *dst, ulong dst_off, __global float *sc,
    ulong sc_off, __global float *of, ulong of_off, int seq_new, int nkv, int rows_per_unit, ulong units,
    __global const float2 *rope_f, ulong rope_f_off, __global const float *rope_cos, ulong rope_c_off,
    __global const float *rope_sin, ulong rope_s_off, int bnsd, __global const given_store *gsc, ulong gsc_off,
    __global const given_store *gof, ulong gof_off) {
    const ulong g = get_group_id(0), hgroups = (ulong)(nkv / HPG);
    const int kv = (int)get_group_id(1), lid = (int)get_local_id(0);
    /* entry t of the destination table is written row t; its source token ts = b x S1 + i */
    const ulong t = g / hgroups, ts = (ulong)dst[dst_off + 4 * t + 3], b = ts / (ulong)seq_new, i = ts % (ulong)seq_new;
    __global const src_store *src = kv ? v : k;
    const ulong u = (ulong)dst[dst_off + 4 * t], r = (ulong)dst[dst_off + 4 * t + 1], R = (ulong)rows_per_unit;
#if ROPE
    /* the token's cos/sin pairs, once: both elements of a pair, both passes of the quantisation and every head
     * of the group use them */
    __local float2 rope_cs[ROPE_DIM / 2];
    const int pos = dst[dst_off + 4 * t + 2];
    for (int j = lid; kv == 0 && j < ROPE_DIM / 2; j += WG) rope_cs[j] = IFA_ROPE_CS(pos, j);
    barrier(CLK_LOCAL_MEM_FENCE);
#define SRC(d)                                                                                                   \
    (kv == 0 && IFA_ROPE_IN(d)                                                                                  \
         ? ifa_rope_apply(IFA_LOAD(SRC_T, src, src0 + (d)),                                                      \
                          IFA_LOAD(SRC_T, src, src0 + ROPE_OFF + ifa_rope_partner((d) - ROPE_OFF)), (d) - ROPE_OFF, \
                          rope_cs[ifa_rope_index((d) - ROPE_OFF)])                                               \
         : IFA_LOAD(SRC_T, src, src0 + (d)))
#else
#define SRC(d) IFA_LOAD(SRC_T, src, src0 + (d))
#endif
/* The CPU shape (one work-item per group) reads a row 16 elements per load, rotary pairs as vectors too,
 * where whole vectors fit (the rotated part starts on a vector, neox's halves and gptj's span a multiple of
 * 16), into 16-wide vectors: stored 16 at a time, or quantised from them (min/max and the quantisation as
 * vector operations) */
#define IFA_APPEND_VEC                                                                                            \
    (WG == 1 && HEAD_DIM % 16 == 0 &&                                                                            \
     (!ROPE || (ROPE_OFF % 16 == 0 && ((ROPE == 1 && ROPE_DIM % 32 == 0) || (ROPE == 2 && ROPE_DIM % 16 == 0)))))
#if QUANT && !IFA_APPEND_VEC
    /* the work-items' partial min and max of a row (the vector shape reduces in registers) */
    __local float lo[WG], hi[WG];
#endif
    for (ulong n = g % hgroups * HPG; n < (g % hgroups + 1) * HPG; ++n) {
        const ulong src_row =
            bnsd ? ((b * (ulong)nkv + n) * (ulong)seq_new + i) * HEAD_DIM : (ts * (ulong)nkv + n) * HEAD_DIM;
        const ulong src0 = (kv ? v_off : k_off) + src_row;
        const ulong dst0 = (kv ? vc_off : kc_off) + (bnsd ? ((u * (ulong)nkv + n) * R + r) * HEAD_DIM
                                                             : ((u * R + r) * (ulong)nkv + n) * HEAD_DIM);
        __global dst_store *out = kv ? vc : kc;
#if IFA_APPEND_VEC
        float16 xs[HEAD_DIM / 16];
        int d0 = 0;
#if ROPE
        /* the key's dims before the rotated part pass through */
        for (; kv == 0 && d0 < ROPE_OFF; d0 += 16) xs[d0 / 16] = IFA_NLOAD(SRC_T, 16, src, src0 + d0);
#endif
#if ROPE == 1
        /* neox: element e of the first half pairs with e + ROPE_DIM / 2 */
        for (int e = 0; kv == 0 && e < ROPE_DIM / 2; e += 16) {
            const ulong a = src0 + ROPE_OFF + e;
            const float16 x = IFA_NLOAD(SRC_T, 16, src, a), y = IFA_NLOAD(SRC_T, 16, src, a + ROPE_DIM / 2);
            const float16 cs0 = vload16(0, (__local const float *)(rope_cs + e));
            const float16 cs1 = vload16(0, (__local const float *)(rope_cs + e + 8));
            const float16 c = (float16)(cs0.even, cs1.even), sn = (float16)(cs0.odd, cs1.odd);
            xs[(ROPE_OFF + e) / 16] = x * c - y * sn;
            xs[(ROPE_OFF + e + ROPE_DIM / 2) / 16] = y * c + x * sn;
        }
        if (kv == 0) d0 = ROPE_OFF + ROPE_DIM;
#elif ROPE == 2
        /* gptj: elements 2j and 2j + 1 of the part pair, with angle j */
        for (; kv == 0 && d0 < ROPE_OFF + ROPE_DIM; d0 += 16) {
            const float16 x = IFA_NLOAD(SRC_T, 16, src, src0 + d0);
            const float16 cs = vload16(0, (__local const float *)(rope_cs + (d0 - ROPE_OFF) / 2));
            const float16 c = cs.s0022446688aaccee, sn = cs.s1133557799bbddff;
            const float16 sign = (float16)(-1.0f, 1.0f, -1.0f, 1.0f, -1.0f, 1.0f, -1.0f, 1.0f, -1.0f, 1.0f, -1.0f, 1.0f,
                                           -1.0f, 1.0f, -1.0f, 1.0f);
            xs[d0 / 16] = x * c + sign * x.s1032547698badcfe * sn;
        }
#endif
        for (int d = d0; d < HEAD_DIM; d += 16) xs[d / 16] = IFA_NLOAD(SRC_T, 16, src, src0 + d);
#endif
#if STAT || QUANT
#if STAT
        /* the given scales: element-wise, nothing reduced or written beside the row */
#define IFA_Y16(e) (xs[e] / IFA_GS16(n, 16 * (e)) - IFA_GO16(n, 16 * (e)))
#define IFA_Y(d) (SRC(d) / IFA_GS(n, d) - IFA_GO(n, d))
#else
        float mn = INFINITY, mx = -INFINITY;
#if IFA_APPEND_VEC
        {
            float16 mnv = INFINITY, mxv = -INFINITY;
            int16 bad = 0;
            for (int e = 0; e < HEAD_DIM / 16; ++e) {
                mnv = fmin(mnv, xs[e]), mxv = fmax(mxv, xs[e]);
                bad |= isnan(xs[e]) | isinf(xs[e]);
            }
            mn = ifa_min16(mnv);
            mx = any(bad) ? NAN : ifa_max16(mxv);
        }
#else
        for (int d = lid; d < HEAD_DIM; d += WG) {
            const float x = SRC(d);
            mn = fmin(mn, x), mx = ifa_nanmax(mx, isfinite(x) ? x : NAN);
        }
        lo[lid] = mn, hi[lid] = mx;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int s = WG / 2; s > 0; s >>= 1) {
            if (lid < s) lo[lid] = fmin(lo[lid], lo[lid + s]), hi[lid] = ifa_nanmax(hi[lid], hi[lid + s]);
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        mn = lo[0], mx = hi[0];
#endif
#if QUANT == 1
        const float amax = fmax(fabs(mn), fabs(mx));
        const float scale = isnan(mx) ? NAN : amax > 0.0f ? amax / QMAX : 1.0f, offset = 0.0f;
#else
        float span = mx - mn;
        if (span == 0.0f) span = mn != 0.0f ? fabs(mn) : 1.0f;
        const float scale = span / (QMAX - QMIN), offset = mn / scale - QMIN;
#endif
        if (lid == 0) {
            const ulong si = ((ulong)kv * units + u) * (ulong)nkv * R + n * R + r;
            sc[sc_off + si] = scale;
#if QUANT == 2
            of[of_off + si] = offset;
#endif
#if KEY_ONLY
            /* one cache (MLA): its value half repeats the key's, what IncreFlashAttention's value = key reads */
            const ulong vh = units * (ulong)nkv * R;
            sc[sc_off + vh + si] = scale;
#if QUANT == 2
            of[of_off + vh + si] = offset;
#endif
#endif
        }
#define IFA_Y16(e) (xs[e] / scale - offset)
#define IFA_Y(d) (SRC(d) / scale - offset)
#endif
#if IFA_APPEND_VEC
        /* rint(x / scale - offset) clamped: whole numbers in range, so the conversion is exact (float8: the value
         * rounded to the format) */
        for (int e = 0; e < HEAD_DIM / 16; ++e) {
#if IFA_IS_FP8(DST_T)
            IFA_NSTORE(DST_T, 16, IFA_Y16(e), out, dst0 + 16 * e);
#else
            const char16 q = convert_char16(clamp(rint(IFA_Y16(e)), QMIN, QMAX));
#if DST_T == IFA_I4
            const uchar16 w = as_uchar16(q) & (uchar)0xf;
            vstore8(w.even | (w.odd << (uchar)4), 0, (__global uchar *)out + (dst0 >> 1) + 8 * e);
#else
            vstore16(q, 0, out + dst0 + 16 * e);
#endif
#endif
        }
#elif DST_T == IFA_I4
        /* two values per byte, low nibble first; HEAD_DIM and the row's start are even */
        __global uchar *bytes = (__global uchar *)out;
        for (int e = lid; e < HEAD_DIM / 2; e += WG) {
            const int q0 = (int)clamp(rint(IFA_Y(2 * e)), QMIN, QMAX);
            const int q1 = (int)clamp(rint(IFA_Y(2 * e + 1)), QMIN, QMAX);
            bytes[(dst0 >> 1) + e] = (uchar)((q0 & 0xf) | ((q1 & 0xf) << 4));
        }
#elif IFA_IS_FP8(DST_T)
        for (int d = lid; d < HEAD_DIM; d += WG) IFA_STORE(DST_T, IFA_Y(d), out, dst0 + d);
#else
        for (int d = lid; d < HEAD_DIM; d += WG)
            out[dst0 + d] = (char)clamp(rint(IFA_Y(d)), QMIN, QMAX);
#endif
#elif IFA_APPEND_VEC
        for (int e = 0; e < HEAD_DIM / 16; ++e) IFA_NSTORE(DST_T, 16, xs[e], out, dst0 + 16 * e);
#else
        for (int d = lid; d < HEAD_DIM; d += WG) IFA_STORE(DST_T, SRC(d), out, dst0 + d);
#endif
        /* the next head's reduction reuses lo and hi */
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
