/* Validation of IncreFlashAttention's optional inputs and modes (mask, position bias, sinks, ALiBi, shared prefix,
 * int8 output, antiquant, template, RoPE, paged KV): a rule per check, each failure naming the argument. */
#include "op_host/ifa/ifa_check_inputs.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "op_host/common/rope.h"
#include "op_host/runtime/cl_status.h"
#include "op_host/runtime/tensor_check.h"
#include "tiling/planner.h"

/* atten_mask: (B, S), (B, 1, S), (B, 1, 1, S) or (B, 1, S1, S), 1-byte elements, covering every batch and
 * every visible position. */
ifa_status ifa__ifa_check_mask(const ifa_tensor *m, ifa_problem *p, int64_t max_len) {
    char s1[128];
    if (m->dtype != IFA_DTYPE_BOOL && m->dtype != IFA_DTYPE_INT8 && m->dtype != IFA_DTYPE_UINT8)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "atten_mask has dtype %s; it must be bool, int8 or uint8",
                         ifa_dtype_name(m->dtype));
    if (m->ndim < 2 || m->ndim > 4)
        return ifa__fail(IFA_STATUS_INVALID_RANK,
                         "atten_mask has rank %d; it must be (B, S), (B, 1, S), (B, 1, 1, S) or (B, 1, S1, S)",
                         (int)m->ndim);
    for (int i = 1; i < m->ndim - 1; ++i) {
        const int per_token_dim = m->ndim == 4 && i == 2;
        if (m->shape[i] != 1 && !(per_token_dim && m->shape[i] == p->seq_q))
            return ifa__fail(IFA_STATUS_SHAPE_MISMATCH,
                             "atten_mask has shape %s; its dimension %d must be 1%s", ifa__shape_str(m, s1, sizeof s1), i,
                             per_token_dim ? " or S1" : "");
    }
    if (m->shape[0] < p->batch)
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "atten_mask has batch %" PRId64 ", fewer than B = %" PRId64,
                         m->shape[0], p->batch);
    const int64_t len = m->shape[m->ndim - 1];
    if (len < max_len)
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH,
                         "atten_mask's last dimension %" PRId64 " is shorter than the longest visible length %" PRId64,
                         len, max_len);
    p->mask_kind = m->ndim == 4 && m->shape[2] == p->seq_q && p->seq_q > 1 ? IFA_MASK_PER_TOKEN : IFA_MASK_PER_BATCH;
    p->mask_batch = m->shape[0];
    p->mask_len = len;
    return IFA_STATUS_OK;
}

/* sinks: float32, one logit per query head. */
ifa_status ifa__ifa_check_sinks(const ifa_tensor *t, ifa_problem *p) {
    char s[128];
    if (t->dtype != IFA_DTYPE_FLOAT32)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "sinks has dtype %s; it must be float32", ifa_dtype_name(t->dtype));
    if (t->ndim != 1 || t->shape[0] != p->num_heads)
        return ifa__fail(t->ndim != 1 ? IFA_STATUS_INVALID_RANK : IFA_STATUS_SHAPE_MISMATCH,
                         "sinks has shape %s; it must be (N) = (%" PRId64 "), one logit per query head",
                         ifa__shape_str(t, s, sizeof s), p->num_heads);
    p->has_sinks = 1;
    return IFA_STATUS_OK;
}

/* alibi_slopes: float32, (N) for every batch or (B, N). */
ifa_status ifa__ifa_check_alibi(const ifa_tensor *t, ifa_problem *p) {
    char s[128];
    if (t->dtype != IFA_DTYPE_FLOAT32)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "alibi_slopes has dtype %s; it must be float32",
                         ifa_dtype_name(t->dtype));
    if (t->ndim != 1 && t->ndim != 2)
        return ifa__fail(IFA_STATUS_INVALID_RANK, "alibi_slopes has rank %d; it must be (N) or (B, N)", (int)t->ndim);
    if (t->shape[t->ndim - 1] != p->num_heads || (t->ndim == 2 && t->shape[0] != p->batch))
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH,
                         "alibi_slopes has shape %s; it must be (N) = (%" PRId64 ") or (B, N) = (%" PRId64 ", %" PRId64
                         "), one slope per query head", ifa__shape_str(t, s, sizeof s), p->num_heads, p->batch,
                         p->num_heads);
    p->alibi = t->ndim == 2 ? IFA_ALIBI_PER_BATCH : IFA_ALIBI_PER_HEAD;
    return IFA_STATUS_OK;
}

/* pse_shift: (B, N, S1, S) or (1, N, S1, S) in the query's dtype. */
ifa_status ifa__ifa_check_pse(const ifa_tensor *t, ifa_problem *p, int64_t max_len) {
    char s1[128];
    if ((int32_t)t->dtype != p->q_dtype)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "pse_shift has dtype %s; it must be the query's dtype %s",
                         ifa_dtype_name(t->dtype), ifa_dtype_name((ifa_dtype)p->q_dtype));
    if (t->ndim != 4)
        return ifa__fail(IFA_STATUS_INVALID_RANK, "pse_shift has rank %d; it must be rank 4, (B, N, S1, S) or (1, N, S1, S)",
                         (int)t->ndim);
    if ((t->shape[0] != p->batch && t->shape[0] != 1) || t->shape[1] != p->num_heads || t->shape[2] != p->seq_q)
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH,
                         "pse_shift has shape %s; it must be (B or 1, N, S1, S) = (%" PRId64 " or 1, %" PRId64 ", %" PRId64
                         ", S)", ifa__shape_str(t, s1, sizeof s1), p->batch, p->num_heads, p->seq_q);
    if (t->shape[3] < max_len)
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH,
                         "pse_shift's last dimension %" PRId64 " is shorter than the longest visible length %" PRId64,
                         t->shape[3], max_len);
    p->pse_kind = t->shape[0] == 1 && p->batch > 1 ? IFA_PSE_BROADCAST : IFA_PSE_PER_BATCH;
    p->pse_len = t->shape[3];
    return IFA_STATUS_OK;
}

/* Shared prefix: both tensors, shaped like the key with batch 1, in the key's (float) dtype; no mask, bias
 * or window with it (they index a sequence's own positions). */
ifa_status ifa__ifa_check_prefix(const ifa_incre_flash_attention_args *a, ifa_problem *p) {
    char s1[128], s2[128];
    const ifa_tensor *kp = a->key_shared_prefix, *vp = a->value_shared_prefix;
    if (!kp && !vp) {
        if (a->actual_shared_prefix_len)
            return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "actual_shared_prefix_len is given without key_shared_prefix");
        return IFA_STATUS_OK;
    }
    if (!kp || !vp)
        return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "%s is NULL but %s is given; a shared prefix needs both",
                         kp ? "value_shared_prefix" : "key_shared_prefix", kp ? "key_shared_prefix" : "value_shared_prefix");
    const ifa_layout layout = (ifa_layout)p->layout;
    const int64_t nkv = p->num_kv_heads, d = p->head_dim;
    const int want_rank = layout == IFA_LAYOUT_BSH ? 3 : 4;
    if (kp->ndim != want_rank)
        return ifa__fail(IFA_STATUS_INVALID_RANK, "key_shared_prefix has rank %d; layout %s needs rank %d",
                         (int)kp->ndim, ifa__layout_name(layout), want_rank);
    const int64_t sp = layout == IFA_LAYOUT_BNSD ? kp->shape[2] : kp->shape[1];
    const int64_t heads = layout == IFA_LAYOUT_BSH ? (kp->shape[2] % d ? -1 : kp->shape[2] / d)
                          : layout == IFA_LAYOUT_BSND ? kp->shape[2] : kp->shape[1];
    const int64_t last = layout == IFA_LAYOUT_BSH ? d : kp->shape[3];
    if (kp->shape[0] != 1)
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "key_shared_prefix has shape %s; its batch dimension must be 1 (one "
                         "prefix for every batch)", ifa__shape_str(kp, s1, sizeof s1));
    if (heads != nkv || last != d)
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH,
                         "key_shared_prefix has shape %s: %" PRId64 " KV heads of D = %" PRId64 "; it must have N_kv = %"
                         PRId64 " heads of D = %" PRId64, ifa__shape_str(kp, s1, sizeof s1), heads, last, nkv, d);
    if (!ifa__same_shape(vp, kp))
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "value_shared_prefix has shape %s; it must equal key_shared_prefix's %s",
                         ifa__shape_str(vp, s1, sizeof s1), ifa__shape_str(kp, s2, sizeof s2));
    if (kp->dtype != (ifa_dtype)p->kv_dtype || vp->dtype != kp->dtype)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "key/value_shared_prefix have dtypes %s/%s; they must be the key's %s",
                         ifa_dtype_name(kp->dtype), ifa_dtype_name(vp->dtype), ifa_dtype_name((ifa_dtype)p->kv_dtype));
    if (p->antiquant || ifa__is_float8((ifa_dtype)p->kv_dtype))
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "a shared prefix with quantised (int8/int4/float8) KV is not "
                                                       "supported");
    if (a->atten_mask || a->pse_shift || a->alibi_slopes || a->window)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE,
                         "%s with a shared prefix is not supported (it indexes a sequence's own positions)",
                         a->atten_mask     ? "atten_mask"
                         : a->pse_shift    ? "pse_shift"
                         : a->alibi_slopes ? "alibi_slopes"
                                           : "window");
    const int64_t len = a->actual_shared_prefix_len ? *a->actual_shared_prefix_len : sp;
    if (len < 0 || len > sp)
        return ifa__fail(IFA_STATUS_INVALID_SEQ_LENGTHS, "actual_shared_prefix_len = %" PRId64 " is outside [0, S_p = %"
                         PRId64 "]", len, sp);
    p->has_prefix = 1;
    p->prefix_seq = sp;
    p->prefix_len = len;
    return IFA_STATUS_OK;
}

/* An offset tensor (name) goes with its scale: the same dtype and shape. */
static ifa_status check_offset(const ifa_tensor *off, const ifa_tensor *sc, const char *name) {
    char s1[128];
    if (off->dtype != sc->dtype)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "%s has dtype %s; it must be the scale's %s", name,
                         ifa_dtype_name(off->dtype), ifa_dtype_name(sc->dtype));
    if (!ifa__same_shape(off, sc))
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "%s has shape %s; it must be the scale's shape", name,
                         ifa__shape_str(off, s1, sizeof s1));
    return IFA_STATUS_OK;
}

/* int8 output: quant_scale2 per tensor (1) or per channel (N·D) / (N, D), a float dtype; the offset alike. */
ifa_status ifa__ifa_check_quant_out(const ifa_incre_flash_attention_args *a, ifa_problem *p) {
    char s1[128];
    const ifa_tensor *sc = a->quant_scale2, *off = a->quant_offset2;
    if (!sc) {
        if (off) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "quant_offset2 is given without quant_scale2");
        return IFA_STATUS_OK;
    }
    if (!ifa__is_float_dtype(sc->dtype))
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "quant_scale2 has dtype %s; it must be float32, float16 or bfloat16",
                         ifa_dtype_name(sc->dtype));
    const int64_t n = p->num_heads, d = p->value_dim; /* the output's head dimension */
    if (sc->ndim == 1 && sc->shape[0] == 1)
        p->quant_out = 1;
    else if ((sc->ndim == 1 && sc->shape[0] == n * d) || (sc->ndim == 2 && sc->shape[0] == n && sc->shape[1] == d))
        p->quant_out = 2;
    else
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH,
                         "quant_scale2 has shape %s; it must be (1) per tensor or (N·D) = (%" PRId64 ") or (N, D) = (%"
                         PRId64 ", %" PRId64 ") per channel", ifa__shape_str(sc, s1, sizeof s1), n * d, n, d);
    if (off) {
        IFA__TRY(check_offset(off, sc, "quant_offset2"));
        p->q2_offset = 1;
    }
    p->q2_dtype = sc->dtype;
    return IFA_STATUS_OK;
}

/* the antiquant tensors in the order check_descriptors and check_buffers list them */
const char *const ifa__aq_names[6] = {"antiquant_scale",     "antiquant_offset",      "key_antiquant_scale",
                                        "key_antiquant_offset", "value_antiquant_scale", "value_antiquant_offset"};

/* One scale form of quantised KV: scale sc (offset off, optional) in mode `mode` (attribute mode_name); lead 1
 * for antiquant_scale's (2, ...) form (key's then value's), 0 for one side's own tensor. Sets the form's
 * ifa_antiquant, scale dtype, offset flag and positions (token modes) in *f. */
typedef struct aq_form {
    int32_t kind, dtype, offset;
    int64_t len;
} aq_form;

static ifa_status check_aq_form(const ifa_tensor *sc, const ifa_tensor *off, int64_t mode, int lead, const char *sname,
                                const char *oname, const char *mode_name, const ifa_problem *p, int64_t max_len,
                                aq_form *f) {
    char s1[128];
    if (mode < 0 || mode > 3)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE,
                         "%s = %" PRId64 " is not 0 (per channel or tensor), 1 (per token), 2 (per head "
                         "and token) or 3 (per head and token, stored with the pages)", mode_name, mode);
    const int64_t nkv = p->num_kv_heads, d = p->head_dim, b = p->batch;
    /* the shape without the leading 2 */
    const int64_t *sh = sc->shape + lead;
    const int nd = sc->ndim - lead;
    const char *two = lead ? "2, " : "";
    if (lead && (sc->ndim < 1 || sc->shape[0] != 2))
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "%s has shape %s; its leading dimension must be 2 (the key's "
                         "scales, then the value's)", sname, ifa__shape_str(sc, s1, sizeof s1));
    memset(f, 0, sizeof *f);
    if (mode == 0) {
        if (!ifa__is_float_dtype(sc->dtype))
            return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE,
                             "%s has dtype %s; per-channel and per-tensor scales are float32, float16 or "
                             "bfloat16", sname, ifa_dtype_name(sc->dtype));
        if ((lead && nd == 0) || (!lead && nd == 1 && sh[0] == 1)) {
            f->kind = IFA_ANTIQUANT_PER_TENSOR;
        } else if ((nd == 3 && sh[0] == nkv && sh[1] == 1 && sh[2] == d) || (nd == 2 && sh[0] == nkv && sh[1] == d) ||
                   (nd == 1 && sh[0] == nkv * d)) {
            f->kind = IFA_ANTIQUANT_PER_CHANNEL;
        } else {
            return ifa__fail(IFA_STATUS_SHAPE_MISMATCH,
                             "%s has shape %s; %s 0 takes (%s) per tensor or (%sN_kv, 1, D), (%sN_kv, D), (%sN_kv·D) "
                             "per channel with N_kv = %" PRId64 ", D = %" PRId64, sname,
                             ifa__shape_str(sc, s1, sizeof s1), mode_name, lead ? "2" : "1", two, two, two, nkv, d);
        }
    } else if (mode == 3) {
        if (!p->paged)
            return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE,
                             "%s 3 keeps scales with the pages of a paged cache, but key is contiguous "
                             "(block_table is NULL); use mode 2 for a contiguous cache", mode_name);
        if (sc->dtype != IFA_DTYPE_FLOAT32)
            return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "%s has dtype %s; per-token scales are float32", sname,
                             ifa_dtype_name(sc->dtype));
        if (nd != 3 || sh[0] != p->pool_blocks || sh[1] != nkv || sh[2] != p->block_size)
            return ifa__fail(IFA_STATUS_SHAPE_MISMATCH,
                             "%s has shape %s; %s 3 takes (%snum_blocks, N_kv, block_size) = (%s%" PRId64 ", %" PRId64
                             ", %" PRId64 ")", sname, ifa__shape_str(sc, s1, sizeof s1), mode_name, two, two,
                             p->pool_blocks, nkv, p->block_size);
        f->kind = IFA_ANTIQUANT_PAGED_HEAD_TOKEN;
        f->len = p->block_size;
    } else {
        if (sc->dtype != IFA_DTYPE_FLOAT32)
            return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "%s has dtype %s; per-token scales are float32", sname,
                             ifa_dtype_name(sc->dtype));
        const int per_head = mode == 2;
        if (nd != (per_head ? 3 : 2) || sh[0] != b || (per_head && sh[1] != nkv))
            return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "%s has shape %s; %s %" PRId64 " takes (%s%s) with B = %" PRId64
                             ", N_kv = %" PRId64, sname, ifa__shape_str(sc, s1, sizeof s1), mode_name, mode, two,
                             per_head ? "B, N_kv, S" : "B, S", b, nkv);
        const int64_t len = sh[nd - 1];
        if (p->paged ? len < max_len : len != p->seq_kv)
            return ifa__fail(IFA_STATUS_SHAPE_MISMATCH,
                             p->paged ? "%s's last dimension %" PRId64 " is shorter than the longest "
                                        "length %" PRId64 " (paged: one value per logical position)"
                                      : "%s's last dimension %" PRId64 " must be S_kv = %" PRId64
                                        " (one value per key row)",
                             sname, len, p->paged ? max_len : p->seq_kv);
        f->kind = per_head ? IFA_ANTIQUANT_PER_HEAD_PER_TOKEN : IFA_ANTIQUANT_PER_TOKEN;
        f->len = len;
    }
    if (off) {
        IFA__TRY(check_offset(off, sc, oname));
        f->offset = 1;
    }
    f->dtype = sc->dtype;
    return IFA_STATUS_OK;
}

static ifa_status check_int4_dim(const ifa_problem *p) {
    if (p->kv_dtype == IFA_DTYPE_INT4 && p->head_dim % 2 != 0)
        return ifa__fail(IFA_STATUS_INVALID_HEAD_DIM,
                         "int4 key/value pack two values per byte along D; D = %" PRId64 " must be even", p->head_dim);
    return IFA_STATUS_OK;
}

/* Quantised KV: antiquant_scale's (2, ...) form in antiquant_mode, or the key's and the value's own tensors in
 * their own modes. int8 and int4 need scales; float8 values are numbers by themselves, so their scales are
 * optional (vLLM's k_scale / v_scale are the per-tensor form). */
ifa_status ifa__ifa_check_antiquant(const ifa_incre_flash_attention_args *a, ifa_problem *p, int64_t max_len) {
    const int quantised = p->kv_dtype == IFA_DTYPE_INT8 || p->kv_dtype == IFA_DTYPE_INT4;
    const int fp8 = ifa__is_float8((ifa_dtype)p->kv_dtype);
    const ifa_tensor *sc = a->antiquant_scale, *off = a->antiquant_offset;
    const ifa_tensor *ks = a->key_antiquant_scale, *ko = a->key_antiquant_offset;
    const ifa_tensor *vs = a->value_antiquant_scale, *vo = a->value_antiquant_offset;
    const char *given = sc ? "antiquant_scale" : off ? "antiquant_offset" : ks ? "key_antiquant_scale"
                        : ko ? "key_antiquant_offset" : vs ? "value_antiquant_scale" : vo ? "value_antiquant_offset" : NULL;
    const int separate = ks || ko || vs || vo;
    if (!quantised && !fp8) {
        if (given)
            return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE,
                             "%s is given but key has dtype %s; antiquant applies to int8, int4 or "
                             "float8 (e4m3fn, e5m2) key/value", given, ifa_dtype_name((ifa_dtype)p->kv_dtype));
        return IFA_STATUS_OK;
    }
    if (separate && (sc || off))
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE,
                         "%s and %s are two forms of the same scales; give antiquant_scale's (2, ...) form or the "
                         "key's and the value's own tensors, not both", sc ? "antiquant_scale" : "antiquant_offset",
                         ks ? "key_antiquant_scale" : ko ? "key_antiquant_offset" : vs ? "value_antiquant_scale"
                                                                                       : "value_antiquant_offset");
    if (!separate && (a->key_antiquant_mode || a->value_antiquant_mode))
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE,
                         "%s = %" PRId64 " is given without key_antiquant_scale and value_antiquant_scale; with "
                         "antiquant_scale the mode is antiquant_mode", a->key_antiquant_mode ? "key_antiquant_mode"
                                                                                             : "value_antiquant_mode",
                         a->key_antiquant_mode ? a->key_antiquant_mode : a->value_antiquant_mode);
    if (separate && a->antiquant_mode)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE,
                         "antiquant_mode = %" PRId64 " is given with key_/value_antiquant_scale; their modes are "
                         "key_antiquant_mode and value_antiquant_mode", a->antiquant_mode);
    aq_form kf, vf;
    if (separate) {
        if (!ks && ko) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "key_antiquant_offset is given without key_antiquant_scale");
        if (!vs && vo)
            return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "value_antiquant_offset is given without value_antiquant_scale");
        if (!ks || !vs)
            return ifa__fail(IFA_STATUS_NULL_ARGUMENT,
                             "%s is given but %s is NULL; the separate form needs both scales%s",
                             ks ? "key_antiquant_scale" : "value_antiquant_scale",
                             ks ? "value_antiquant_scale" : "key_antiquant_scale",
                             fp8 ? " (a float8 cache without scales gives neither)" : "");
        IFA__TRY(check_int4_dim(p));
        IFA__TRY(check_aq_form(ks, ko, a->key_antiquant_mode, 0, "key_antiquant_scale", "key_antiquant_offset",
                               "key_antiquant_mode", p, max_len, &kf));
        IFA__TRY(check_aq_form(vs, vo, a->value_antiquant_mode, 0, "value_antiquant_scale", "value_antiquant_offset",
                               "value_antiquant_mode", p, max_len, &vf));
    } else {
        if (!sc && fp8 && off)
            return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "antiquant_offset is given without antiquant_scale");
        if (!sc && fp8) return IFA_STATUS_OK;
        if (!sc)
            return ifa__fail(IFA_STATUS_NULL_ARGUMENT,
                             "antiquant_scale is NULL but key has dtype %s; quantised KV needs it (or "
                             "key_antiquant_scale and value_antiquant_scale)%s",
                             ifa_dtype_name((ifa_dtype)p->kv_dtype), off ? "; antiquant_offset alone is not enough" : "");
        IFA__TRY(check_int4_dim(p));
        IFA__TRY(check_aq_form(sc, off, a->antiquant_mode, 1, "antiquant_scale", "antiquant_offset", "antiquant_mode", p,
                               max_len, &kf));
        vf = kf;
    }
    p->aq_separate = separate;
    p->antiquant = kf.kind, p->aq_dtype = kf.dtype, p->aq_offset = kf.offset, p->aq_len = kf.len;
    p->v_antiquant = vf.kind, p->v_aq_dtype = vf.dtype, p->v_aq_offset = vf.offset, p->v_aq_len = vf.len;
    return IFA_STATUS_OK;
}

static ifa__rope_view rope_view(const ifa_incre_flash_attention_args *a) {
    return (ifa__rope_view){a->rope_mode, a->rope_theta, a->rope_dim, a->rope_positions, a->rope_positions_count,
                            a->rope_cos, a->rope_sin, a->rope_offset};
}

ifa_status ifa__ifa_rope_positions(const ifa_incre_flash_attention_args *a, const ifa_problem *p, int64_t *first) {
    const ifa__rope_view v = rope_view(a);
    const ifa__rope_info info = {p->rope, p->rope_table, p->rope_dim, p->rope_table_rows, 0, p->rope_offset};
    const ifa__rope_default dflt = {a->actual_seq_lengths,
                                    a->actual_seq_lengths_count,
                                    p->seq_kv,
                                    p->seq_q,
                                    p->q_lengths ? "actual_seq_lengths - actual_seq_lengths_q" : "actual_seq_lengths - S1",
                                    p->q_lengths ? a->actual_seq_lengths_q : NULL,
                                    a->actual_seq_lengths_q_count,
                                    p->q_lengths};
    return ifa__rope_check_positions(&v, &info, p->batch, &dflt, p->seq_q, first);
}

/* template_mode: whether the planner chooses the template or the caller forces one (tests, experiments). */
ifa_status ifa__ifa_check_template(const ifa_incre_flash_attention_args *a, ifa_problem *p) {
    const char *m = a->template_mode;
    if (!m || strcmp(m, "auto") == 0) p->template_request = 0;
    else if (strcmp(m, "all_vector") == 0) p->template_request = IFA_TEMPLATE_ALL_VECTOR;
    else if (strcmp(m, "cv") == 0) p->template_request = IFA_TEMPLATE_CV;
    else
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "template_mode \"%.32s\" is not \"auto\", \"all_vector\" or \"cv\"",
                         m);
    return IFA_STATUS_OK;
}

/* Rotary embedding of the query: attributes, then each batch's positions. */
ifa_status ifa__ifa_check_rope(const ifa_incre_flash_attention_args *a, ifa_problem *p) {
    const ifa__rope_view v = rope_view(a);
    ifa__rope_info info;
    IFA__TRY(ifa__rope_check(&v, p->batch, p->head_dim, &info));
    if (info.mode == IFA_ROPE_NONE) return IFA_STATUS_OK;
    p->rope = info.mode, p->rope_table = info.table, p->rope_dim = info.dim, p->rope_table_rows = info.table_rows;
    p->rope_offset = info.offset;
    if (!info.table) memcpy(&p->rope_theta_bits, &info.theta, sizeof info.theta);
    return ifa__ifa_rope_positions(a, p, NULL);
}

/* Paged KV attributes and the pool's shape. Sets paged, block_size, table_cols, pool_blocks and seq_kv. */
ifa_status ifa__ifa_check_paged(const ifa_incre_flash_attention_args *a, ifa_problem *p, ifa_layout layout) {
    char s1[128];
    if (!a->block_table)
        return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "block_table is NULL but block_size = %" PRId64 " asks for paged KV",
                         a->block_size);
    if (a->block_size < 1 || a->block_size > IFA_MAX_BLOCK_SIZE)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "block_size = %" PRId64 " is outside [1, %d]", a->block_size,
                         IFA_MAX_BLOCK_SIZE);
    if (a->block_table_cols < 1 || a->block_table_cols > IFA_MAX_SEQ_KV / a->block_size)
        return ifa__fail(IFA_STATUS_INVALID_BLOCK_TABLE, "block_table_cols = %" PRId64 " is outside [1, %lld]",
                         a->block_table_cols, IFA_MAX_SEQ_KV / a->block_size);
    const ifa_tensor *k = a->key;
    const int64_t nkv = p->num_kv_heads, d = p->head_dim, bs = a->block_size;
    int ok;
    const char *form;
    if (layout == IFA_LAYOUT_BNSD) {
        form = "(num_blocks, N_kv, block_size, D)";
        ok = k->ndim == 4 && k->shape[1] == nkv && k->shape[2] == bs && k->shape[3] == d;
    } else if (k->ndim == 3) {
        form = "(num_blocks, block_size, N_kv·D)";
        ok = k->shape[1] == bs && k->shape[2] == nkv * d;
    } else {
        form = "(num_blocks, block_size, N_kv, D)";
        ok = layout == IFA_LAYOUT_BSND && k->ndim == 4 && k->shape[1] == bs && k->shape[2] == nkv && k->shape[3] == d;
    }
    if (!ok)
        return ifa__fail(IFA_STATUS_SHAPE_MISMATCH,
                         "key has shape %s; a paged %s pool with block_size = %" PRId64 ", N_kv = %" PRId64 ", D = %" PRId64
                         " must be %s", ifa__shape_str(k, s1, sizeof s1), ifa__layout_name(layout), bs, nkv, d, form);
    p->paged = 1;
    p->block_size = bs;
    p->table_cols = a->block_table_cols;
    p->pool_blocks = k->shape[0];
    p->seq_kv = a->block_table_cols * bs;
    return IFA_STATUS_OK;
}
