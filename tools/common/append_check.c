#include "common/append_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/kv_quant.h"
#include "common/reference.h"
#include "op_host/runtime/tensor_check.h"

const char *const ifa_append_written[IFA_GENERIC_WRITTEN] = {
    "key_cache",           "value_cache",          "antiquant_scale",       "antiquant_offset",
    "key_antiquant_scale", "key_antiquant_offset", "value_antiquant_scale", "value_antiquant_offset"};

void ifa_append_after(const ifa_generic_run *r, const ifa_host_tensor *after[IFA_GENERIC_WRITTEN]) {
    for (int w = 0; w < IFA_GENERIC_WRITTEN; ++w) after[w] = r->written[w].data ? &r->written[w] : NULL;
}

static int64_t attr_int(const ifa_generic_case *c, const char *name, int64_t dflt) {
    const ifa_named_attr *a = ifa_generic_case_attr(c, name);
    return a ? a->i : dflt;
}

/* One side's scales: where its written scale (offset) of a row lands (tensor index t of after[], element
 * stride of the side within it) or, given, the tensors to read per element. */
typedef struct side_form {
    int quant;                         /* a scale per token and head, written */
    int sc_t, of_t;                    /* after[] indices of the written scale and offset (-1: none) */
    int64_t half_at;                   /* the side's first element in them (the (2, ...) form's value half) */
    const ifa_host_tensor *gs, *go;    /* given scales and offsets (the separate form's mode 0), else NULL */
} side_form;

int ifa_append_case_check(const ifa_generic_case *c, const ifa_host_tensor *const after[IFA_GENERIC_WRITTEN],
                          ifa_append_check *k) {
    memset(k, 0, sizeof *k);
    const ifa_host_tensor *kn = ifa_generic_case_input(c, "key"), *vn = ifa_generic_case_input(c, "value");
    const ifa_host_tensor *kc = ifa_generic_case_input(c, "key_cache");
    const ifa_host_tensor *before[IFA_GENERIC_WRITTEN];
    for (int w = 0; w < IFA_GENERIC_WRITTEN; ++w) before[w] = ifa_generic_case_input(c, ifa_append_written[w]);
    const ifa_named_attr *lay = ifa_generic_case_attr(c, "input_layout"), *lens = ifa_generic_case_attr(c, "cache_seq_lengths");
    const ifa_named_attr *tab = ifa_generic_case_attr(c, "block_table"), *pos = ifa_generic_case_attr(c, "rope_positions");
    const ifa_named_attr *rmode = ifa_generic_case_attr(c, "rope_mode"), *rtheta = ifa_generic_case_attr(c, "rope_theta");
    const ifa_named_attr *news = ifa_generic_case_attr(c, "new_seq_lengths"); /* rows written per batch */
    const char *layout = lay ? lay->s : "BSH";
    const int bnsd = strcmp(layout, "BNSD") == 0;
    const int64_t nkv = attr_int(c, "num_key_value_heads", 0), bs = attr_int(c, "block_size", 0);
    const int64_t cols = attr_int(c, "block_table_cols", 0);
    /* without value and value_cache: a key-only append, whose scales fill both halves */
    const int key_only = !vn;
    if (!kn || !kc || !vn != !before[1] || !lens || nkv < 1 || kn->ndim < 3 || kc->ndim < 3) return -1;
    const int64_t B = kn->shape[0], S1 = bnsd ? kn->shape[2] : kn->shape[1];
    const int64_t D = kn->ndim == 4 ? kn->shape[3] : kn->shape[2] / nkv;
    const int64_t R = tab ? bs : bnsd ? kc->shape[2] : kc->shape[1], U = kc->shape[0];
    const int fp8 = ifa__is_float8(kc->dtype), integer = kc->dtype == IFA_DTYPE_INT8 || kc->dtype == IFA_DTYPE_INT4;
    /* the stored range: integers, or a float8 format's finite values */
    const double qmax = fp8 ? ifa_dtype_max(kc->dtype) : kc->dtype == IFA_DTYPE_INT4 ? 7 : 127;
    const double qmin = fp8 ? -qmax : -qmax - 1;
    /* each side's form: antiquant_scale's halves (int8 and int4 always, float8 when the case gives scales), or
     * the separate form's own tensors, written (modes 2, 3) or given (mode 0) */
    const int separate = before[4] || before[6];
    side_form side[2];
    for (int h = 0; h < 2; ++h) {
        side_form *f = &side[h];
        memset(f, 0, sizeof *f);
        f->sc_t = f->of_t = -1;
        if (separate) {
            const int64_t mode = attr_int(c, h ? "value_antiquant_mode" : "key_antiquant_mode", 0);
            if (!before[4 + 2 * h]) return -1;
            if (mode == 0) {
                f->gs = before[4 + 2 * h], f->go = before[5 + 2 * h];
            } else {
                f->quant = 1, f->sc_t = 4 + 2 * h, f->of_t = before[5 + 2 * h] ? 5 + 2 * h : -1;
            }
        } else if (integer || (fp8 && before[2])) {
            if (!before[2]) return -1;
            f->quant = 1, f->sc_t = 2, f->of_t = before[3] ? 3 : -1, f->half_at = h * U * nkv * R;
        }
    }
    ifa_host_tensor expect[IFA_GENERIC_WRITTEN], one;
    memset(expect, 0, sizeof expect);
    for (int t = 0; t < IFA_GENERIC_WRITTEN; ++t)
        if (before[t]) {
            if (!after[t] || ifa_host_tensor_alloc(&expect[t], before[t]->dtype, before[t]->ndim, before[t]->shape)) return -1;
            memcpy(expect[t].data, before[t]->data, before[t]->bytes);
        }
    double *x = malloc((size_t)D * sizeof *x);
    if (!x || ifa_host_tensor_alloc(&one, kc->dtype, 1, (int64_t[]){2}) != 0) return free(x), -1;
    for (int half = 0; half < (key_only ? 1 : 2); ++half)
        for (int64_t b = 0; b < B; ++b)
            for (int64_t i = 0; i < (news && news->list_len > 0 ? news->list[news->list_len == 1 ? 0 : b] : S1); ++i)
                for (int64_t n = 0; n < nkv; ++n) {
                    const side_form *f = &side[half];
                    const int64_t p = lens->list[lens->list_len == 1 ? 0 : b] + i;
                    const int64_t u = tab ? tab->list[b * cols + p / bs] : b, r = tab ? p % bs : p;
                    for (int64_t d = 0; d < D; ++d)
                        x[d] = ifa_host_get(half ? vn : kn, ifa_kv_cache_at(bnsd, S1, nkv, D, b, i, n, d));
                    double amax = 0, rot = 0;
                    if (half == 0 && rmode && strcmp(rmode->s, "none") != 0) {
                        ifa_reference_rope(rmode->s, rtheta ? rtheta->f : 0, attr_int(c, "rope_dim", 0), attr_int(c, "rope_offset", 0),
                                           ifa_generic_case_input(c, "rope_cos"), ifa_generic_case_input(c, "rope_sin"),
                                           pos ? pos->list[b] + i : p, x, D);
                        rot = 1;
                    }
                    for (int64_t d = 0; d < D; ++d) amax = fmax(amax, fabs(x[d]));
                    rot *= 16 * 0x1p-24 * amax; /* the fp32 rotation against this float64 one */
                    const int64_t si = f->half_at + (u * nkv + n) * R + r;
                    const double sc = f->quant ? ifa_host_get(after[f->sc_t], si) : 1;
                    const double of = f->quant && f->of_t >= 0 ? ifa_host_get(after[f->of_t], si) : 0;
                    double worst = 0;
                    for (int64_t d = 0; d < D; ++d) {
                        const int64_t e = ifa_kv_cache_at(bnsd, R, nkv, D, u, r, n, d);
                        const double g = ifa_host_get(after[half], e);
                        double err, bound;
                        if (f->gs) { /* the channel's (or the tensor's) given scale and offset; a value past
                                      * what they span saturates */
                            const int64_t gi = ifa_host_tensor_numel(f->gs) == 1 ? 0 : n * D + d;
                            const double s = ifa_host_get(f->gs, gi), o = f->go ? ifa_host_get(f->go, gi) : 0;
                            const double lo = (qmin + o) * s, hi = (qmax + o) * s;
                            err = fabs((g + o) * s - fmin(fmax(x[d], fmin(lo, hi)), fmax(lo, hi)));
                            bound = (fp8 ? ifa_kv_fp8_bound(kc->dtype, s, x[d]) : ifa_kv_quant_bound(s, o, fabs(x[d]))) + rot;
                        } else if (fp8) { /* rounded to float8 (after x / scale when scaled) */
                            err = fabs(g * sc - x[d]), bound = ifa_kv_fp8_bound(kc->dtype, sc, x[d]) + rot;
                        } else if (f->quant) {
                            err = fabs((g + of) * sc - x[d]), bound = ifa_kv_quant_bound(sc, of, amax) + rot;
                        } else {
                            ifa_host_set(&one, 0, x[d]);
                            err = rot > 0 ? fabs(g - x[d]) : fabs(g - ifa_host_get(&one, 0));
                            bound = rot > 0 ? rot + ifa_kv_round_bound(kc->dtype, x[d]) : 0;
                        }
                        const double ratio = err == 0 ? 0 : bound > 0 ? err / bound : INFINITY;
                        worst = fmax(worst, ratio);
                        ifa_host_set(&expect[half], e, g);
                    }
                    for (int h = 0; f->quant && h < (key_only ? 2 : 1); ++h) {
                        const int64_t at = si + h * U * nkv * R; /* key-only: the key's into the value half too */
                        ifa_host_set(&expect[f->sc_t], at, sc);
                        if (f->of_t >= 0) ifa_host_set(&expect[f->of_t], at, of);
                    }
                    k->rows++;
                    k->bad_rows += !(worst <= 1);
                    k->worst = fmax(k->worst, worst);
                }
    for (int t = 0; t < IFA_GENERIC_WRITTEN; ++t)
        if (before[t]) {
            const unsigned char *a = expect[t].data, *g = after[t]->data;
            for (size_t i = 0; i < expect[t].bytes; ++i) k->changed += a[i] != g[i];
            ifa_host_tensor_free(&expect[t]);
        }
    ifa_host_tensor_free(&one);
    free(x);
    k->pass = k->bad_rows == 0 && k->changed == 0;
    return 0;
}
