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
 * (2, B, N_kv, S) or (2, num_blocks, N_kv, block_size); lead 0: one side's own tensor, without the 2. */
static void poison_scale(ifa_host_tensor *s, int lead, int64_t b, int64_t pos) {
    if (!s->data || (s->ndim != 2 + lead && s->ndim != 3 + lead) || (lead && s->shape[0] != 2)) return;
    const int per_head = s->ndim == 3 + lead;
    const int64_t nb = s->shape[lead], heads = per_head ? s->shape[lead + 1] : 1, len = s->shape[s->ndim - 1];
    if (b >= nb || pos >= len) return; /* a shape the op refuses: nothing to poison */
    for (int64_t half = 0; half < 1 + lead; ++half)
        for (int64_t h = 0; h < heads; ++h) ifa_host_set(s, ((half * nb + b) * heads + h) * len + pos, NAN);
}

/* A scale form of the case: antiquant_scale's (lead 1) or one side's own (lead 0), with its offset and mode. */
typedef struct scale_form {
    ifa_host_tensor *scale, *offset;
    int64_t mode;
    int lead;
} scale_form;

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
    const int int_kv = is_int_kv(k->dtype);
    for (int64_t r = 0; r < outer * per && !int_kv; ++r) {
        if (need[r]) continue;
        poison_row(k, bnsd, per, Nkv, D, r / per, r % per);
        poison_row(v, bnsd, per, Nkv, D, r / per, r % per);
    }
    const scale_form forms[3] = {{&c->antiquant_scale, &c->antiquant_offset, c->antiquant_mode, 1},
                                 {&c->key_antiquant_scale, &c->key_antiquant_offset, c->key_antiquant_mode, 0},
                                 {&c->value_antiquant_scale, &c->value_antiquant_offset, c->value_antiquant_mode, 0}};
    for (int f = 0; f < 3; ++f) {
        const scale_form *sf = &forms[f];
        if (!sf->scale->data || sf->mode < 1) continue; /* token modes only */
        /* scales indexed like the rows: key rows (contiguous modes 1, 2) or pool rows (mode 3) */
        for (int64_t r = 0; r < outer * per && (sf->mode == 3 || !paged); ++r) {
            if (need[r]) continue;
            poison_scale(sf->scale, sf->lead, r / per, r % per);
            poison_scale(sf->offset, sf->lead, r / per, r % per);
        }
        /* paged modes 1, 2: one value per logical position of each batch */
        if (paged && sf->mode != 3) {
            const int64_t L = sf->scale->shape[sf->scale->ndim - 1];
            for (int64_t b = 0; b < B; ++b)
                for (int64_t p = 0; p < L; ++p)
                    if (p < lo[b] || p >= len[b]) {
                        poison_scale(sf->scale, sf->lead, b, p);
                        poison_scale(sf->offset, sf->lead, b, p);
                    }
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
