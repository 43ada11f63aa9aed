#include "op_host/common/rope.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/status.h"
#include "op_host/runtime/tensor_check.h"

static int mode_from_name(const char *s) {
    if (!s || strcmp(s, "none") == 0) return IFA_ROPE_NONE;
    if (strcmp(s, "neox") == 0) return IFA_ROPE_NEOX;
    if (strcmp(s, "gptj") == 0) return IFA_ROPE_GPTJ;
    return -1;
}

ifa_status ifa__rope_check(const ifa__rope_view *v, int64_t batch, int64_t head_dim, ifa__rope_info *info) {
    char s1[128], s2[128];
    memset(info, 0, sizeof *info);
    const int mode = mode_from_name(v->mode);
    if (mode < 0)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "rope_mode \"%s\" is not \"none\", \"neox\" or \"gptj\"", v->mode);
    if (mode == IFA_ROPE_NONE) {
        const char *extra = v->theta != 0 ? "rope_theta" : v->dim != 0 ? "rope_dim" : v->offset != 0 ? "rope_offset"
                            : v->positions ? "rope_positions" : v->cos ? "rope_cos" : v->sin ? "rope_sin" : NULL;
        if (extra)
            return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "%s is given but rope_mode is none; set rope_mode to \"neox\" "
                             "or \"gptj\"", extra);
        return IFA_STATUS_OK;
    }
    info->mode = mode;
    if (v->offset < 0 || v->offset >= head_dim)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "rope_offset = %" PRId64 " is outside [0, D = %" PRId64 "): it is "
                         "the first rotated dim of the head", v->offset, head_dim);
    info->offset = v->offset;
    info->dim = v->dim == 0 ? head_dim - v->offset : v->dim;
    if (info->dim <= 0 || info->dim % 2 != 0) {
        if (v->dim == 0)
            return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "rope_dim = 0 rotates D - rope_offset = %" PRId64 " dims, which "
                             "is odd: dims rotate in pairs; give rope_dim", info->dim);
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "rope_dim = %" PRId64 " must be even and positive: dims rotate in "
                         "pairs", info->dim);
    }
    if (info->offset + info->dim > head_dim) {
        if (info->offset == 0)
            return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "rope_dim = %" PRId64 " exceeds the head dimension D = %" PRId64,
                             info->dim, head_dim);
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "rope_offset + rope_dim = %" PRId64 " + %" PRId64 " exceeds the "
                         "head dimension D = %" PRId64, info->offset, info->dim, head_dim);
    }
    if (!!v->cos != !!v->sin)
        return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "%s is given without %s; the tables go together",
                         v->cos ? "rope_cos" : "rope_sin", v->cos ? "rope_sin" : "rope_cos");
    if (v->cos) {
        if (v->theta != 0)
            return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "rope_theta = %g is given with rope_cos/rope_sin tables, "
                             "which replace it", v->theta);
        IFA__TRY(ifa__check_descriptor(v->cos, "rope_cos"));
        IFA__TRY(ifa__check_descriptor(v->sin, "rope_sin"));
        if (v->cos->ndim != 2 || v->cos->shape[1] != info->dim / 2)
            return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "rope_cos has shape %s; it must be (positions, rope_dim / 2 = %"
                             PRId64 ")", ifa__shape_str(v->cos, s1, sizeof s1), info->dim / 2);
        if (v->sin->ndim != 2 || memcmp(v->sin->shape, v->cos->shape, 2 * sizeof v->cos->shape[0]) != 0)
            return ifa__fail(IFA_STATUS_SHAPE_MISMATCH, "rope_sin has shape %s; it must be rope_cos's %s",
                             ifa__shape_str(v->sin, s1, sizeof s1), ifa__shape_str(v->cos, s2, sizeof s2));
        if (v->cos->dtype != IFA_DTYPE_FLOAT32 || v->sin->dtype != IFA_DTYPE_FLOAT32)
            return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "rope_%s has dtype %s; the tables are float32",
                             v->cos->dtype != IFA_DTYPE_FLOAT32 ? "cos" : "sin",
                             ifa_dtype_name(v->cos->dtype != IFA_DTYPE_FLOAT32 ? v->cos->dtype : v->sin->dtype));
        info->table = 1;
        info->table_rows = v->cos->shape[0];
    } else {
        info->theta = v->theta == 0 ? 10000.0 : v->theta;
        if (!(info->theta > 0) || !isfinite(info->theta))
            return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "rope_theta = %g must be positive and finite", v->theta);
    }
    if (v->positions && v->positions_count != batch)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "rope_positions has %" PRId64 " values; it needs B = %" PRId64,
                         v->positions_count, batch);
    if (!v->positions && v->positions_count != 0)
        return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "rope_positions is NULL with rope_positions_count = %" PRId64,
                         v->positions_count);
    return IFA_STATUS_OK;
}

ifa_status ifa__rope_check_positions(const ifa__rope_view *v, const ifa__rope_info *info, int64_t batch,
                                     const ifa__rope_default *dflt, int64_t tokens, int64_t *first) {
    if (info->mode == IFA_ROPE_NONE) return IFA_STATUS_OK;
    for (int64_t b = 0; b < batch; ++b) {
        const int64_t nt = dflt->tokens ? dflt->tokens[dflt->tokens_count == 1 ? 0 : b] : tokens;
        const int64_t p = v->positions ? v->positions[b]
                          : (dflt->lengths ? dflt->lengths[dflt->count == 1 ? 0 : b] : dflt->fallback) -
                                (dflt->shift_by_tokens ? nt : dflt->shift);
        char what[96];
        if (v->positions)
            snprintf(what, sizeof what, "rope_positions[%" PRId64 "] = %" PRId64, b, p);
        else
            snprintf(what, sizeof what, "batch %" PRId64 "'s default rope position (%s) = %" PRId64, b, dflt->what, p);
        if (p < 0)
            return ifa__fail(IFA_STATUS_INVALID_POSITION, "%s is negative%s", what,
                             v->positions ? "" : "; rope_positions gives positions explicitly");
        if (p + nt > IFA_MAX_ROPE_POSITION)
            return ifa__fail(IFA_STATUS_INVALID_POSITION, "%s puts the last of %" PRId64 " tokens at or past 2^24, where "
                             "float32 positions stop being exact", what, nt);
        if (info->table && p + nt > info->table_rows)
            return ifa__fail(IFA_STATUS_INVALID_POSITION, "%s needs rope_cos/rope_sin rows up to %" PRId64 "; the tables "
                             "have %" PRId64, what, p + nt - 1, info->table_rows);
        if (first) first[b] = p;
    }
    return IFA_STATUS_OK;
}

void ifa__rope_freqs(const ifa__rope_info *info, float *out) {
    for (int64_t i = 0; i < info->dim / 2; ++i) {
        const double f = pow(info->theta, -2.0 * (double)i / (double)info->dim);
        const float hi = (float)f;
        out[2 * i] = hi, out[2 * i + 1] = (float)(f - (double)hi);
    }
}
