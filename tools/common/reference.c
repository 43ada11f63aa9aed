#include "common/reference.h"

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/parallel.h"

/* Where logical position p of batch b, KV head kh, dim d lives in the key/value tensor. */
static int64_t kv_at(const ifa_case *c, int bnsd, int64_t S, int64_t Nkv, int64_t D, int64_t row0, int64_t b,
                     int64_t p, int64_t kh, int64_t d) {
    if (!c->block_table) return ifa_case_at(bnsd, S, Nkv, D, b, row0 + p, kh, d);
    const int64_t bs = c->block_size, blk = c->block_table[b * c->block_table_cols + p / bs];
    return ifa_case_at(bnsd, bs, Nkv, D, blk, p % bs, kh, d);
}

/* Antiquant: the dequantised value of stored element x of the key (half 0) or value (half 1) at batch b,
 * KV head kh, dim d, key row / logical position pos: (x + offset) * scale, indexed as the op defines, from
 * antiquant_scale's (2, ...) form or the side's own tensor (the separate form). */
static double dequant(const ifa_case *c, int half, double x, int64_t B, int64_t Nkv, int64_t D, int64_t b, int64_t kh,
                      int64_t d, int64_t pos) {
    const int own = c->key_antiquant_scale.data || c->value_antiquant_scale.data;
    const ifa_host_tensor *s = !own ? &c->antiquant_scale : half ? &c->value_antiquant_scale : &c->key_antiquant_scale;
    const ifa_host_tensor *o = !own ? &c->antiquant_offset : half ? &c->value_antiquant_offset : &c->key_antiquant_offset;
    const int64_t mode = !own ? c->antiquant_mode : half ? c->value_antiquant_mode : c->key_antiquant_mode;
    if (!s->data) return x;
    const int64_t h = own ? 0 : half, last = s->shape[s->ndim - 1]; /* h: the side's index in the (2, ...) form */
    int64_t i;
    if (mode == 0)
        i = ifa_host_tensor_numel(s) == (own ? 1 : 2) ? h : (h * Nkv + kh) * D + d;
    else if (mode == 1)
        i = (h * B + b) * last + pos;
    else if (mode == 2)
        i = ((h * B + b) * Nkv + kh) * last + pos;
    else /* 3: with the pages, ([2,] num_blocks, N_kv, block_size) */
        i = ((h * s->shape[own ? 0 : 1] + c->block_table[b * c->block_table_cols + pos / c->block_size]) * Nkv + kh) *
                c->block_size + pos % c->block_size;
    return (x + (o->data ? ifa_host_get(o, i) : 0.0)) * ifa_host_get(s, i);
}

int ifa_reference_rope(const char *mode, double theta, int64_t dim, int64_t offset, const ifa_host_tensor *cos_table,
                       const ifa_host_tensor *sin_table, int64_t pos, double *x, int64_t D) {
    const int neox = strcmp(mode, "neox") == 0;
    if (!neox && strcmp(mode, "gptj") != 0) return 0;
    const int64_t rd = dim ? dim : D - offset, half_dim = rd / 2;
    if (offset < 0 || rd <= 0 || rd % 2 || offset + rd > D) return -1;
    x += offset;
    for (int64_t i = 0; i < half_dim; ++i) {
        double cs, sn;
        if (cos_table && cos_table->data) {
            cs = ifa_host_get(cos_table, pos * half_dim + i), sn = ifa_host_get(sin_table, pos * half_dim + i);
        } else {
            const double angle = (double)pos * pow(theta ? theta : 10000.0, -2.0 * (double)i / (double)rd);
            cs = cos(angle), sn = sin(angle);
        }
        const int64_t a = neox ? i : 2 * i, b = neox ? i + half_dim : 2 * i + 1;
        const double x1 = x[a], x2 = x[b];
        x[a] = x1 * cs - x2 * sn, x[b] = x2 * cs + x1 * sn;
    }
    return 0;
}

/* x as a float32 score holds it: beyond float32's range it is infinite (the kernels' scores are float32, and an
 * overflowing score must meet the rules of docs/op.md's "Non-finite values" here as there) */
static double f32_range(double x) { return fabs(x) > FLT_MAX ? copysign(INFINITY, x) : x; }

/* What every row of the reference shares: the case and the quantities ifa_reference_ifa derives from its shapes. */
typedef struct ref_job {
    const ifa_case *c;
    double *out, *lse, *score_bound;
    int64_t N, Nkv, G, B, S1, D, DV, S, SP, P, mask_len, mask_bstride, pse_len;
    int bnsd, per_token_mask, causal;
    const ifa_host_tensor *q, *k, *v, *mask, *pse, *kp, *vp;
    atomic_int failed; /* a range without scratch memory, or a RoPE the case cannot hold */
} ref_job;

/* Rows [r0, r1) of the output, row r being (b, t, h) = (r / (S1 N), r / N % S1, r % N). Each row is computed
 * alone, in the same order whichever range holds it, so the result does not depend on the threads. */
static void ref_rows(void *p, int64_t r0, int64_t r1) {
    ref_job *J = p;
    const ifa_case *c = J->c;
    const int64_t N = J->N, G = J->G, B = J->B, S1 = J->S1, D = J->D, DV = J->DV, S = J->S, SP = J->SP, P = J->P;
    const int64_t Nkv = J->Nkv;
    const int bnsd = J->bnsd;
    const ifa_host_tensor *q = J->q, *k = J->k, *v = J->v, *mask = J->mask, *pse = J->pse, *kp = J->kp, *vp = J->vp;
    /* s: the scores of own positions then prefix positions; e: their exp(s - m); acc: a row's D_v sums */
    double *s = malloc((size_t)(S + P + 1) * sizeof *s), *e = malloc((size_t)(S + P + 1) * sizeof *e);
    double *acc = malloc((size_t)(DV + 1) * sizeof *acc);
    char *vis = malloc((size_t)(S + P + 1));
    double *qrow = malloc((size_t)D * sizeof *qrow);
    if (!s || !e || !acc || !vis || !qrow) {
        atomic_store(&J->failed, 1);
        r1 = r0;
    }
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t b = r / (S1 * N), t = r / N % S1, h = r % N;
        int64_t raw, row0;
        const int64_t len = ifa_case_length(c, b, S, &raw, &row0); /* after Ascend's kv padding */
        const int64_t qn = ifa_case_query_tokens(c, b); /* tokens qn .. S1 - 1 are padding: they see nothing */
        const int pad = t >= qn;
        const int64_t end = pad ? 0 : J->causal ? len - (qn - 1 - t) : len;
        const int64_t np = pad ? 0 : P; /* the prefix positions the row sees */
        const int64_t begin = c->window > 0 && end - c->window > 0 ? end - c->window : 0;
        const int64_t kh = h / G;
        double m = -INFINITY, bound = 0;
        /* the query row, rotated at its position when the case has RoPE */
        for (int64_t d = 0; d < D; ++d) qrow[d] = pad ? 0 : ifa_host_get(q, ifa_case_at(bnsd, S1, N, D, b, t, h, d));
        const int64_t first = c->rope_positions ? c->rope_positions[b] : raw - qn;
        if (!pad && ifa_reference_rope(c->rope_mode, c->rope_theta, c->rope_dim, c->rope_offset, &c->rope_cos,
                                       &c->rope_sin, first + t, qrow, D) != 0) {
            atomic_store(&J->failed, 1);
            break;
        }
        for (int64_t j = 0; j < len; ++j) {
            vis[j] = j >= begin && j < end;
            if (vis[j] && mask)
                vis[j] = ifa_host_get(mask, b * J->mask_bstride + (J->per_token_mask ? t * J->mask_len : 0) + j) == 0;
            if (!vis[j]) continue;
            double dot = 0, mag = 0;
            for (int64_t d = 0; d < D; ++d) {
                const int64_t pos = c->block_table ? j : row0 + j;
                double x = qrow[d] * dequant(c, 0, ifa_host_get(k, kv_at(c, bnsd, S, Nkv, D, row0, b, j, kh, d)), B, Nkv,
                                             D, b, kh, d, pos);
                dot += x;
                mag += fabs(x);
            }
            s[j] = f32_range(dot * c->scale_value);
            mag *= fabs(c->scale_value);
            if (pse) {
                const int64_t pb = pse->shape[0] == 1 ? 0 : b;
                const double bias = ifa_host_get(pse, ((pb * N + h) * S1 + t) * J->pse_len + j);
                s[j] += bias;
                mag += fabs(bias);
            }
            if (c->alibi_slopes.data) {
                /* ALiBi: minus slope times the distance to the query token's own position */
                const int64_t ab = c->alibi_slopes.ndim == 2 ? b : 0;
                const double slope = ifa_host_get(&c->alibi_slopes, ab * N + h);
                const double bias = -slope * (double)llabs(j - (len - qn + t));
                s[j] += bias;
                mag += fabs(bias);
            }
            if (c->softcap > 0) {
                s[j] = c->softcap * tanh(s[j] / c->softcap);
                mag += c->softcap;
            }
            if (s[j] > m) m = s[j];
            if (mag > bound) bound = mag;
        }
        /* prefix positions: every row sees all of them; their scores follow own positions in s */
        double *ps = s + len, *pe = e + len;
        for (int64_t j = 0; j < np; ++j) {
            double dot = 0, mag = 0;
            for (int64_t d = 0; d < D; ++d) {
                const double x = qrow[d] * ifa_host_get(kp, ifa_case_at(bnsd, SP, Nkv, D, 0, j, kh, d));
                dot += x, mag += fabs(x);
            }
            ps[j] = f32_range(dot * c->scale_value);
            mag *= fabs(c->scale_value);
            if (c->softcap > 0) ps[j] = c->softcap * tanh(ps[j] / c->softcap), mag += c->softcap;
            if (ps[j] > m) m = ps[j];
            if (mag > bound) bound = mag;
        }
        /* the head's sink logit: a key with no value, in the max and the sum */
        const double sink = c->sinks.data ? ifa_host_get(&c->sinks, h) : -INFINITY;
        if (sink > m) m = sink;
        if (fabs(sink) > bound && isfinite(sink)) bound = fabs(sink);
        /* The max skips NaN scores (as the kernels' fmax does) and a row that has seen only -inf scores subtracts
         * 0: a -inf score weighs exp(-inf) = 0, while a NaN score (or +inf - +inf) gives a NaN weight that the
         * sum and every column carry (docs/op.md, "Non-finite values"). */
        const double mb = m == -INFINITY ? 0 : m;
        double l = exp(sink - mb);
        for (int64_t j = 0; j < len; ++j)
            if (vis[j]) l += e[j] = exp(s[j] - mb);
        for (int64_t j = 0; j < np; ++j) l += pe[j] = exp(ps[j] - mb);
        /* each column's sum over the keys in position order (own positions, then the prefix's) */
        for (int64_t d = 0; d < DV; ++d) acc[d] = 0;
        for (int64_t j = 0; j < len; ++j) {
            if (!vis[j]) continue;
            const int64_t pos = c->block_table ? j : row0 + j;
            for (int64_t d = 0; d < DV; ++d)
                acc[d] += e[j] * dequant(c, 1, ifa_host_get(v, kv_at(c, bnsd, S, Nkv, D, row0, b, j, kh, d)), B, Nkv, D,
                                         b, kh, d, pos);
        }
        for (int64_t j = 0; j < np; ++j)
            for (int64_t d = 0; d < DV; ++d) acc[d] += pe[j] * ifa_host_get(vp, ifa_case_at(bnsd, SP, Nkv, D, 0, j, kh, d));
        /* a sum of 0: no key of any weight, no sink: zeros and -inf; a NaN sum makes the row NaN */
        for (int64_t d = 0; d < DV; ++d)
            J->out[ifa_case_at(bnsd, S1, N, DV, b, t, h, d)] = l != 0 ? acc[d] / l : 0.0;
        const int64_t row = (b * N + h) * S1 + t;
        if (J->lse) J->lse[row] = l != 0 ? m + log(l) : -INFINITY;
        if (J->score_bound) J->score_bound[row] = bound;
    }
    free(s), free(e), free(acc), free(vis), free(qrow);
}

int ifa_reference_ifa(const ifa_case *c, double *out, double *lse, double *score_bound) {
    ref_job J = {.c = c, .out = out, .lse = lse, .score_bound = score_bound};
    J.N = c->num_heads, J.Nkv = c->num_key_value_heads ? c->num_key_value_heads : J.N;
    J.bnsd = strcmp(c->input_layout, "BNSD") == 0;
    J.q = &c->query, J.k = &c->key, J.v = &c->value;
    J.B = J.q->shape[0], J.S1 = ifa_case_seq_q(c);
    if (J.N < 1 || J.N % J.Nkv || J.S1 < 1) return -1;
    J.D = ifa_host_tensor_numel(J.q) / (J.B * J.N * J.S1);
    J.DV = c->value_head_dim > 0 ? c->value_head_dim : J.D; /* the value columns read, the output's D */
    if (J.DV > J.D) return -1;
    J.S = c->block_table ? c->block_table_cols * c->block_size : J.bnsd ? J.k->shape[2] : J.k->shape[1];
    if (!c->block_table && ifa_host_tensor_numel(J.k) != J.B * J.S * J.Nkv * J.D) return -1;
    if (ifa_host_tensor_numel(J.v) != ifa_host_tensor_numel(J.k)) return -1;
    J.mask = c->atten_mask.data ? &c->atten_mask : NULL;
    J.pse = c->pse_shift.data ? &c->pse_shift : NULL;
    J.per_token_mask = J.mask && J.mask->ndim == 4 && J.mask->shape[2] == J.S1 && J.S1 > 1;
    J.causal = J.S1 > 1 && !J.per_token_mask;
    J.mask_len = J.mask ? J.mask->shape[J.mask->ndim - 1] : 0;
    J.mask_bstride = J.mask ? ifa_host_tensor_numel(J.mask) / J.mask->shape[0] : 0;
    J.pse_len = J.pse ? J.pse->shape[3] : 0;
    J.G = J.N / J.Nkv;
    /* a shared prefix (batch 1, the key's layout) comes before each sequence's own positions */
    J.kp = c->key_shared_prefix.data ? &c->key_shared_prefix : NULL;
    J.vp = J.kp ? &c->value_shared_prefix : NULL;
    J.SP = J.kp ? (J.bnsd ? J.kp->shape[2] : J.kp->shape[1]) : 0;
    J.P = J.kp ? (c->has_prefix_len ? c->prefix_len : J.SP) : 0;
    atomic_init(&J.failed, 0);
    /* rows in ranges of about 2^20 key elements' work (a test's small case stays on the calling thread) */
    const int64_t row_work = (J.S + J.P + 1) * J.D;
    ifa_parallel_for(J.B * J.S1 * J.N, ((int64_t)1 << 20) / row_work + 1, ref_rows, &J);
    return atomic_load(&J.failed) ? -1 : 0;
}
