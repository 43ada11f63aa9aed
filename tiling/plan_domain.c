/* The plans of one op configuration over batch sizes and lengths (plan_domain.h). */
#include "tiling/plan_domain.h"

#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "tiling/planner.h"
#include "tiling/tuning_table.h"

void ifa__plan_signature(const ifa_plan *plan, ifa_plan *sig) {
    *sig = *plan;
    /* the step's own sizes, lengths and the layout derived from them (IFA_FIELD_STEP): no build option reads them */
#define IFA_PROBLEM_FIELD(type, name, flags, doc)                                                                  \
    if ((flags) & IFA_FIELD_STEP) sig->problem.name = 0;
#define IFA_PLAN_FIELD(type, name, flags, doc)                                                                     \
    if ((flags) & IFA_FIELD_STEP) sig->name = 0;
#include "ifa/plan_fields.h"
#undef IFA_PROBLEM_FIELD
#undef IFA_PLAN_FIELD
}

/* The lengths (rows the longest block reads) to plan at, ascending and distinct, up to most. */
typedef struct {
    int64_t *v;
    int64_t n, cap;
} length_set;

static int add_length(length_set *s, int64_t len, int64_t most) {
    if (len < 0 || len > most) return 0;
    if (s->n == s->cap) {
        const int64_t cap = s->cap ? 2 * s->cap : 256;
        int64_t *v = realloc(s->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        s->v = v, s->cap = cap;
    }
    s->v[s->n++] = len;
    return 0;
}

static int cmp_len(const void *a, const void *b) {
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The splits a block can take are bounded by the work-group slots of the device's widest split (slots over
 * one block); past those, multiples of the split floor (ifa__split_floor) change nothing. The chunk (and a paged
 * block) is the grain of a split's rows, so the split count's roundings change at its multiples. */
static int fill_lengths(const ifa_problem *p, const ifa_device_facts *dev, length_set *s) {
    const ifa_tuning t = ifa__tuning_for(dev->vendor);
    /* the most rows a block can read: the tensors' positions, or the window and a query's later tokens */
    const int64_t most = ifa__kv_span(p->seq_kv, p->window, p->seq_q - 1);
    const int64_t waves = t.split_waves > t.lane_split_waves ? t.split_waves : t.lane_split_waves;
    const int64_t slots = (int64_t)(dev->compute_units > 0 ? dev->compute_units : 1) * (waves > 0 ? waves : 1);
    /* the split floor of one KV head's query rows and of all heads' (a BSH/BSND work-group may hold them all);
     * head groups between take the 3 % steps */
    const int64_t floors[3] = {t.split_min_tokens > 0 ? t.split_min_tokens : 1,
                               ifa__split_floor(p, &t, p->num_heads / p->num_kv_heads * p->seq_q),
                               ifa__split_floor(p, &t, p->num_heads * p->seq_q)};
    int64_t grain = t.chunk_rows > 0 ? t.chunk_rows : 1;
    if (t.cv_chunk_rows > grain) grain = t.cv_chunk_rows;
    if (p->paged && p->block_size > grain) grain = p->block_size;
    int bad = 0;
    for (int64_t len = 0; len <= 2 * grain + 1; ++len) bad |= add_length(s, len, most);
    for (int f = 0; f < 3; ++f)
        for (int64_t k = 1; k <= slots + 2 && k * floors[f] <= most + 1; ++k)
            for (int64_t d = -1; d <= 1; ++d) bad |= add_length(s, k * floors[f] + d, most);
    for (int64_t j = 1; j <= slots + 2 && j * grain <= most + 1; ++j)
        for (int64_t d = -1; d <= 1; ++d) bad |= add_length(s, j * grain + d, most);
    for (double len = 2.0 * (double)grain; len < (double)most; len *= 1.03) bad |= add_length(s, (int64_t)len, most);
    bad |= add_length(s, most - 1, most);
    bad |= add_length(s, most, most);
    if (bad) return -1;
    qsort(s->v, (size_t)s->n, sizeof *s->v, cmp_len);
    int64_t n = 0;
    for (int64_t i = 0; i < s->n; ++i)
        if (n == 0 || s->v[i] != s->v[n - 1]) s->v[n++] = s->v[i];
    s->n = n;
    return 0;
}

/* The signatures seen so far, with a hash each, and the one the last plan had: neighbouring steps of the walk
 * mostly plan alike, so most plans cost one comparison of their bytes and no hash. */
typedef struct {
    ifa_plan *sig;
    uint64_t *hash;
    int64_t n, cap, last;
} signature_set;

/* FNV-1a over 8-byte words (a byte at a time cost more than planning itself: ~85 % of the walk's time); a
 * prefilter only, every match is confirmed by memcmp */
static uint64_t hash_bytes(const void *data, size_t n) {
    const unsigned char *b = data;
    uint64_t h = 1469598103934665603ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 1099511628211ull;
    }
    for (; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* 1 if sig is new (added), 0 if seen, -1 without memory. */
static int add_signature(signature_set *s, const ifa_plan *sig) {
    if (s->n > 0 && memcmp(&s->sig[s->last], sig, sizeof *sig) == 0) return 0;
    const uint64_t h = hash_bytes(sig, sizeof *sig);
    for (int64_t i = 0; i < s->n; ++i)
        if (s->hash[i] == h && memcmp(&s->sig[i], sig, sizeof *sig) == 0) {
            s->last = i;
            return 0;
        }
    if (s->n == s->cap) {
        const int64_t cap = s->cap ? 2 * s->cap : 16;
        ifa_plan *v = realloc(s->sig, (size_t)cap * sizeof *v);
        if (!v) return -1;
        s->sig = v;
        uint64_t *hv = realloc(s->hash, (size_t)cap * sizeof *hv);
        if (!hv) return -1;
        s->hash = hv, s->cap = cap;
    }
    s->last = s->n;
    s->sig[s->n] = *sig, s->hash[s->n++] = h;
    return 1;
}

ifa_status ifa__plan_domain(const ifa_problem *p, const ifa_device_facts *dev, ifa__plan_visit visit, void *user,
                            int64_t *plans, int64_t *visited) {
    if (plans) *plans = 0;
    if (visited) *visited = 0;
    if (!p || !dev || !visit)
        return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "plan domain: problem, facts or visit is NULL");
    length_set lens = {0};
    signature_set seen = {0};
    ifa_status st = IFA_STATUS_OK;
    if (fill_lengths(p, dev, &lens) != 0) st = ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "plan domain: lengths");
    /* a per-batch problem stays per batch, but its single batch is uniform (one length of one batch) unless
     * per-batch query tokens keep it per batch */
    const int per_batch = p->lengths_mode == IFA_LENGTHS_PER_BATCH;
    int64_t made = 0;
    for (int64_t b = 1; st == IFA_STATUS_OK && b <= p->batch; ++b)
        for (int64_t i = 0; st == IFA_STATUS_OK && i < lens.n; ++i) {
            const int64_t len = lens.v[i];
            /* the rows summed over batches: all as long, and where per batch, one long batch and the others empty */
            const int ends = per_batch && (b > 1 || p->q_lengths) && len > 0 ? 2 : 1;
            for (int e = 0; st == IFA_STATUS_OK && e < ends; ++e) {
                ifa_problem q = *p;
                q.batch = b;
                q.max_length = len;
                q.total_length = e == 0 ? len * b : len;
                if (per_batch && b == 1 && !p->q_lengths) q.lengths_mode = IFA_LENGTHS_UNIFORM;
                if (q.lengths_mode != IFA_LENGTHS_PER_BATCH) q.uniform_length = len;
                ifa_plan plan, sig;
                st = ifa__plan_make(&q, dev, &plan);
                if (st != IFA_STATUS_OK) break;
                ++made;
                ifa__plan_signature(&plan, &sig);
                const int added = add_signature(&seen, &sig);
                if (added < 0) st = ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "plan domain: signatures");
                else if (added) st = visit(&plan, user);
            }
        }
    if (plans) *plans = made;
    if (visited) *visited = seen.n;
    free(lens.v);
    free(seen.sig);
    free(seen.hash);
    return st;
}
