/* NaN where a case must not be read (poison.h). */
#include "common/poison.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tiling/planner.h"

static int is_int_kv(ifa_dtype t) { return t == IFA_DTYPE_INT8 || t == IFA_DTYPE_INT4; }

/* NaN in row (blk, r) of every head of a key/value tensor or pool with `rows` rows per block. */
static void poison_row(ifa_host_tensor *t, int bnsd, int64_t rows, int64_t Nkv, int64_t D, int64_t blk, int64_t r) {
    for (int64_t h = 0; h < Nkv; ++h)
        for (int64_t d = 0; d < D; ++d) ifa_host_set(t, ifa_case_at(bnsd, rows, Nkv, D, blk, r, h, d), NAN);
}

/* NaN at position pos of batch (or pool block) b in every half and head of a token-mode scale (2, B, S),
 * (2, B, N_kv, S) or (2, num_blocks, N_kv, block_size). */
static void poison_scale(ifa_host_tensor *s, int64_t b, int64_t pos) {
    if (!s->data || (s->ndim != 3 && s->ndim != 4) || s->shape[0] != 2) return;
    const int per_head = s->ndim == 4;
    const int64_t nb = s->shape[1], heads = per_head ? s->shape[2] : 1, len = s->shape[s->ndim - 1];
    if (b >= nb || pos >= len) return; /* a shape the op refuses: nothing to poison */
    for (int64_t half = 0; half < 2; ++half)
        for (int64_t h = 0; h < heads; ++h) ifa_host_set(s, ((half * nb + b) * heads + h) * len + pos, NAN);
}

int ifa_case_poison_unread(ifa_case *c) {
    const int64_t N = c->num_heads, Nkv = c->num_key_value_heads ? c->num_key_value_heads : N;
    const int bnsd = strcmp(c->input_layout, "BNSD") == 0, paged = c->block_table != NULL;
    ifa_host_tensor *k = &c->key, *v = &c->value;
    const int64_t B = c->query.shape[0], S1 = ifa_case_seq_q(c);
    if (N < 1 || Nkv < 1 || N % Nkv || S1 < 1) return -1;
    const int64_t D = ifa_host_tensor_numel(&c->query) / (B * N * S1);
    /* rows per batch (contiguous) or per block (paged), and batches or blocks */
    const int64_t per = paged ? c->block_size : bnsd ? k->shape[2] : k->shape[1], outer = k->shape[0];
    const int64_t S = paged ? c->block_table_cols * c->block_size : per;
    /* shapes or lengths the op refuses are not indexed: a length count other than 1 or B, or a paged length
     * past the block table */
    if (D < 1 || per < 1 || ifa_host_tensor_numel(k) != outer * per * Nkv * D ||
        ifa_host_tensor_numel(v) != ifa_host_tensor_numel(k) ||
        (c->lengths && c->lengths_count != 1 && c->lengths_count != B) ||
        (c->q_lengths && c->q_lengths_count != 1 && c->q_lengths_count != B))
        return -1;
    const ifa_host_tensor *m = c->atten_mask.data ? &c->atten_mask : NULL;
    const int per_token_mask = m && m->ndim == 4 && m->shape[2] == S1 && S1 > 1;
    const int causal = S1 > 1 && !per_token_mask;
    char *need = calloc((size_t)(outer * per), 1);
    int64_t *lo = malloc((size_t)B * sizeof *lo), *len = malloc((size_t)B * sizeof *len);
    if (!need || !lo || !len) {
        free(need), free(lo), free(len);
        return -1;
    }
    for (int64_t b = 0; b < B; ++b) {
        int64_t raw = 0, row0 = 0;
        const int64_t qn = ifa_case_query_tokens(c, b);
        len[b] = qn > 0 ? ifa_case_length(c, b, S, &raw, &row0) : 0; /* no query token: no key read */
        lo[b] = ifa__kv_lo(len[b], c->window, causal && qn > 0 ? qn - 1 : 0);
        /* the query's padding tokens (actual_seq_lengths_q) */
        for (int64_t t = qn; t < S1 && t >= 0; ++t)
            for (int64_t h = 0; h < N; ++h)
                for (int64_t d = 0; d < D; ++d) ifa_host_set(&c->query, ifa_case_at(bnsd, S1, N, D, b, t, h, d), NAN);
        for (int64_t p = lo[b]; p < len[b] && p < S; ++p) {
            const int64_t r = paged ? (int64_t)c->block_table[b * c->block_table_cols + p / per] * per + p % per
                                    : b * per + row0 + p;
            if (r >= 0 && r < outer * per) need[r] = 1;
        }
    }
    const int int_kv = is_int_kv(k->dtype), mode = (int)c->antiquant_mode;
    const int token_scales = c->antiquant_scale.data && mode >= 1;
    for (int64_t r = 0; r < outer * per; ++r) {
        if (need[r]) continue;
        if (!int_kv) {
            poison_row(k, bnsd, per, Nkv, D, r / per, r % per);
            poison_row(v, bnsd, per, Nkv, D, r / per, r % per);
        }
        /* scales indexed like the rows: key rows (contiguous modes 1, 2) or pool rows (mode 3) */
        if (token_scales && (mode == 3 || !paged)) {
            poison_scale(&c->antiquant_scale, r / per, r % per);
            poison_scale(&c->antiquant_offset, r / per, r % per);
        }
    }
    /* paged modes 1, 2: one value per logical position of each batch */
    if (token_scales && paged && mode != 3) {
        const int64_t L = c->antiquant_scale.shape[c->antiquant_scale.ndim - 1];
        for (int64_t b = 0; b < B; ++b)
            for (int64_t p = 0; p < L; ++p)
                if (p < lo[b] || p >= len[b]) {
                    poison_scale(&c->antiquant_scale, b, p);
                    poison_scale(&c->antiquant_offset, b, p);
                }
    }
    ifa_host_tensor *kp = &c->key_shared_prefix, *vp = &c->value_shared_prefix;
    if (kp->data && vp->data && c->has_prefix_len && ifa_host_tensor_numel(vp) == ifa_host_tensor_numel(kp) &&
        ifa_host_tensor_numel(kp) == (bnsd ? kp->shape[2] : kp->shape[1]) * Nkv * D) {
        const int64_t sp = bnsd ? kp->shape[2] : kp->shape[1];
        for (int64_t r = c->prefix_len; r < sp; ++r) {
            poison_row(kp, bnsd, sp, Nkv, D, 0, r);
            poison_row(vp, bnsd, sp, Nkv, D, 0, r);
        }
    }
    /* a value's columns from D_v on, its own or the prefix's (not when the value is the key: the scores read
     * those columns of the key) */
    const int64_t dv = c->value_head_dim;
    ifa_host_tensor *vs[2] = {c->value_is_key ? NULL : v, vp->data ? vp : NULL};
    for (int i = 0; i < 2 && dv > 0 && dv < D && !int_kv; ++i)
        for (int64_t e = 0; vs[i] && e < ifa_host_tensor_numel(vs[i]); ++e)
            if (e % D >= dv) ifa_host_set(vs[i], e, NAN);
    free(need), free(lo), free(len);
    return 0;
}
