#define _POSIX_C_SOURCE 200809L
/* The plans a configuration takes over its steps (tiling/plan_domain.h), without a device: every random step's
 * plan is one of those the domain visits, so ifa_incre_flash_attention_prepare builds what the steps run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "test_util.h"
#include "tiling/plan_domain.h"
#include "tiling/planner.h"

static const ifa_device_facts h100 = {IFA_VENDOR_NVIDIA, 132, 1024, 0, 48 * 1024, 90};
static const ifa_device_facts generic_gpu = {IFA_VENDOR_GENERIC_GPU, 40, 1024, 0, 64 * 1024, 0};
static const ifa_device_facts pocl = {IFA_VENDOR_CPU, 2, 4096, 0, 2 * 1024 * 1024, 0};
static const ifa_device_facts avx2 = {IFA_VENDOR_CPU, 2, 4096, 8, 2 * 1024 * 1024, 0};
static const ifa_device_facts intel = {IFA_VENDOR_CPU_INTEL, 2, 4096, 0, 2 * 1024 * 1024, 0};
static const ifa_device_facts cpu16 = {IFA_VENDOR_CPU, 16, 4096, 0, 2 * 1024 * 1024, 0};

/* A configuration: its problem at the most batches, and the form of the lengths its steps pass. */
typedef struct {
    const char *name;
    const ifa_device_facts *dev;
    int64_t batch, n, nkv, d, s, sq, window, block_size;
    int32_t layout, kv_dtype, lengths_mode, q_lengths, causal, prefix;
    const char *tuning; /* IFA_TUNING entries added for the walk and the steps (NULL: none) */
} config;

static const config configs[] = {
    {"h100 BNSD G4 D128 per batch", &h100, 64, 32, 8, 128, 32768, 1, 0, 0, IFA_LAYOUT_BNSD, IFA_DTYPE_FLOAT16, IFA_LENGTHS_PER_BATCH, 0, 0, 0, NULL},
    {"h100 BSND G16 D64 uniform", &h100, 32, 128, 8, 64, 16384, 1, 0, 0, IFA_LAYOUT_BSND, IFA_DTYPE_FLOAT16, IFA_LENGTHS_UNIFORM, 0, 0, 0, NULL},
    {"h100 BNSD G4 D128 int8 per batch", &h100, 48, 32, 8, 128, 16384, 1, 0, 0, IFA_LAYOUT_BNSD, IFA_DTYPE_INT8, IFA_LENGTHS_PER_BATCH, 0, 0, 0, NULL},
    {"h100 BNSD G8 D256 full", &h100, 16, 64, 8, 256, 8192, 1, 0, 0, IFA_LAYOUT_BNSD, IFA_DTYPE_FLOAT16, IFA_LENGTHS_FULL, 0, 0, 0, NULL},
    {"h100 paged G1 S1=4 causal window", &h100, 24, 8, 8, 128, 8192, 4, 1000, 16, IFA_LAYOUT_BSND, IFA_DTYPE_FLOAT16, IFA_LENGTHS_PER_BATCH, 0, 1, 0, NULL},
    {"h100 query tokens", &h100, 16, 32, 8, 128, 8192, 3, 0, 0, IFA_LAYOUT_BNSD, IFA_DTYPE_FLOAT16, IFA_LENGTHS_PER_BATCH, 1, 1, 0, NULL},
    {"h100 int8 token scales", &h100, 24, 16, 8, 128, 8192, 1, 0, 0, IFA_LAYOUT_BNSD, IFA_DTYPE_INT8 + 100, IFA_LENGTHS_PER_BATCH, 0, 0, 0, NULL},
    {"h100 lane shape (mma=0), small grids", &h100, 8, 32, 8, 128, 8192, 1, 0, 0, IFA_LAYOUT_BNSD, IFA_DTYPE_FLOAT16, IFA_LENGTHS_PER_BATCH, 0, 0, 0, "mma=0"},
    {"generic GPU BSH G2 per batch", &generic_gpu, 32, 16, 8, 64, 4096, 1, 0, 0, IFA_LAYOUT_BSH, IFA_DTYPE_FLOAT16, IFA_LENGTHS_PER_BATCH, 0, 0, 0, NULL},
    {"pocl BNSD G4 D128 per batch", &pocl, 16, 32, 8, 128, 16384, 1, 0, 0, IFA_LAYOUT_BNSD, IFA_DTYPE_FLOAT16, IFA_LENGTHS_PER_BATCH, 0, 0, 0, NULL},
    {"pocl BSND G1 D128 uniform (all heads)", &pocl, 8, 8, 8, 128, 8192, 1, 0, 0, IFA_LAYOUT_BSND, IFA_DTYPE_FLOAT16, IFA_LENGTHS_UNIFORM, 0, 0, 0, NULL},
    {"avx2 BSND G4 paged per batch", &avx2, 12, 32, 8, 128, 8192, 1, 0, 64, IFA_LAYOUT_BSND, IFA_DTYPE_FLOAT16, IFA_LENGTHS_PER_BATCH, 0, 0, 0, NULL},
    {"avx2 BSH MQA int8 per batch", &avx2, 8, 16, 1, 128, 4096, 2, 0, 0, IFA_LAYOUT_BSH, IFA_DTYPE_INT8, IFA_LENGTHS_PER_BATCH, 0, 1, 0, NULL},
    {"intel BSND G1 D64 per batch", &intel, 8, 16, 16, 64, 4096, 1, 0, 0, IFA_LAYOUT_BSND, IFA_DTYPE_FLOAT16, IFA_LENGTHS_PER_BATCH, 0, 0, 0, NULL},
    {"16 cores BNSD G8 shared prefix", &cpu16, 16, 64, 8, 128, 4096, 1, 0, 0, IFA_LAYOUT_BNSD, IFA_DTYPE_FLOAT16, IFA_LENGTHS_PER_BATCH, 0, 0, 1, NULL},
};

static ifa_problem config_problem(const config *c) {
    ifa_problem p;
    memset(&p, 0, sizeof p);
    p.batch = c->batch, p.num_heads = c->n, p.num_kv_heads = c->nkv, p.head_dim = c->d, p.value_dim = (int32_t)c->d;
    p.seq_q = c->sq, p.seq_kv = c->s, p.window = c->window, p.causal = c->causal, p.q_lengths = c->q_lengths;
    p.layout = c->layout, p.q_dtype = p.out_dtype = IFA_DTYPE_FLOAT16, p.kv_dtype = c->kv_dtype;
    if (c->kv_dtype == IFA_DTYPE_INT8)
        p.antiquant = p.v_antiquant = IFA_ANTIQUANT_PER_CHANNEL, p.aq_dtype = p.v_aq_dtype = IFA_DTYPE_FLOAT16;
    if (c->kv_dtype == IFA_DTYPE_INT8 + 100) /* int8 with per-token scales (the transposed matrix shape's) */
        p.kv_dtype = IFA_DTYPE_INT8, p.antiquant = p.v_antiquant = IFA_ANTIQUANT_PER_TOKEN,
        p.aq_dtype = p.v_aq_dtype = IFA_DTYPE_FLOAT32;
    if (c->block_size)
        p.paged = 1, p.block_size = c->block_size, p.table_cols = c->s / c->block_size, p.pool_blocks = 4096;
    if (c->prefix) p.has_prefix = 1, p.prefix_seq = p.prefix_len = 512;
    p.lengths_mode = c->q_lengths ? IFA_LENGTHS_PER_BATCH : c->lengths_mode;
    p.max_length = c->s, p.total_length = c->s * c->batch;
    p.uniform_length = p.lengths_mode == IFA_LENGTHS_PER_BATCH ? 0 : c->s;
    return p;
}

typedef struct {
    ifa_plan *sig;
    int64_t n, cap;
} sig_list;

static ifa_status collect(const ifa_plan *plan, void *user) {
    sig_list *l = user;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->sig = realloc(l->sig, (size_t)l->cap * sizeof *l->sig);
        ck_assert_ptr_nonnull(l->sig);
    }
    ifa__plan_signature(plan, &l->sig[l->n++]);
    return IFA_STATUS_OK;
}

static int listed(const sig_list *l, const ifa_plan *sig) {
    for (int64_t i = 0; i < l->n; ++i)
        if (memcmp(&l->sig[i], sig, sizeof *sig) == 0) return 1;
    return 0;
}

/* One random step of configuration c at batch b: each batch's length drawn by one of four habits (all over
 * the range, one long and the rest short, all alike, some empty), summarised as the argument check does. */
static void draw_step(const config *c, const ifa_problem *p, ifa_rng *r, int64_t b, ifa_problem *q, char *what,
                      size_t n) {
    *q = *p;
    q->batch = b;
    const int habit = (int)ifa_rng_int(r, 0, 3);
    const int64_t top = ifa_rng_int(r, 0, 3) == 0 ? c->s : ifa_rng_int(r, 0, c->s);
    const int per_batch = p->lengths_mode == IFA_LENGTHS_PER_BATCH && (b > 1 || p->q_lengths);
    int64_t mx = 0, total = 0, shown = 0;
    for (int64_t i = 0; i < (per_batch ? b : 1); ++i) {
        int64_t len = habit == 0 ? ifa_rng_int(r, 0, top) : habit == 1 ? (i == 0 ? top : ifa_rng_int(r, 0, top / 16))
                    : habit == 2 ? top : (ifa_rng_int(r, 0, 1) ? 0 : ifa_rng_int(r, 0, top));
        const int64_t shift = !c->causal ? 0 : p->q_lengths ? ifa_rng_int(r, 0, c->sq) - 1 : c->sq - 1;
        const int64_t span = ifa__kv_span(len, c->window, shift < 0 ? 0 : shift);
        if (span > mx) mx = span;
        total += span;
        if (i == 0) shown = len;
    }
    q->max_length = mx;
    q->total_length = per_batch ? total : mx * b;
    if (!per_batch && p->lengths_mode == IFA_LENGTHS_PER_BATCH) q->lengths_mode = IFA_LENGTHS_UNIFORM;
    q->uniform_length = q->lengths_mode == IFA_LENGTHS_PER_BATCH ? 0 : shown;
    snprintf(what, n, "B = %lld, habit %d, longest block %lld rows, %lld in all", (long long)b, habit, (long long)mx,
             (long long)q->total_length);
}

START_TEST(domain_holds_every_step) {
    const config *c = &configs[_i];
    const ifa_problem p = config_problem(c);
    if (c->tuning) test_tuning_push(c->tuning);
    sig_list seen = {0};
    int64_t plans = 0, visited = 0;
    ck_assert_int_eq(ifa__plan_domain(&p, c->dev, collect, &seen, &plans, &visited), IFA_STATUS_OK);
    ck_assert_int_eq(visited, seen.n);
    ck_assert_int_ge(plans, p.batch);
    /* the signatures visited are distinct */
    for (int64_t i = 0; i < seen.n; ++i)
        for (int64_t j = i + 1; j < seen.n; ++j)
            ck_assert_int_ne(memcmp(&seen.sig[i], &seen.sig[j], sizeof *seen.sig), 0);
    ifa_rng r;
    ifa_rng_seed(&r, 4100 + (uint64_t)_i);
    for (int step = 0; step < 4000; ++step) {
        ifa_problem q;
        char what[160];
        draw_step(c, &p, &r, ifa_rng_int(&r, 1, p.batch), &q, what, sizeof what);
        ifa_plan plan, sig;
        ck_assert_int_eq(ifa__plan_make(&q, c->dev, &plan), IFA_STATUS_OK);
        ifa__plan_signature(&plan, &sig);
        ck_assert_msg(listed(&seen, &sig), "%s: step %d (%s) planned a kernel set none of the %lld visited has "
                      "(split %d, KV heads per group %d, heads per group %d, fused %d, work-group %d)", c->name, step,
                      what, (long long)seen.n, plan.split_kv, plan.kv_heads_per_group, plan.heads_per_group,
                      plan.fused_combine, plan.work_group_size);
    }
    if (getenv("IFA_TEST_VERBOSE")) {
        printf("%s: %lld plans, %lld kernel sets:", c->name, (long long)plans, (long long)visited);
        for (int64_t i = 0; i < seen.n; ++i)
            printf(" [split %d fused %d wg %d lanes %d mma %d mh %d]", seen.sig[i].split_kv, seen.sig[i].fused_combine,
                   seen.sig[i].work_group_size, seen.sig[i].lanes, seen.sig[i].mma, seen.sig[i].kv_heads_per_group);
        printf("\n");
    }
    if (c->tuning) test_tuning_pop();
    free(seen.sig);
}
END_TEST

/* Every longest-block length of a few small configurations, at each batch size, with the rows summed at both
 * ends and once between: nothing between the lengths the domain tries plans another kernel set. */
static const config small[] = {
    {"h100 BNSD G4 D128, 6 batches", &h100, 6, 32, 8, 128, 9000, 1, 0, 0, IFA_LAYOUT_BNSD, IFA_DTYPE_FLOAT16, IFA_LENGTHS_PER_BATCH, 0, 0, 0, NULL},
    {"h100 BSND MQA G8 D64 uniform", &h100, 3, 8, 1, 64, 20000, 1, 0, 0, IFA_LAYOUT_BSND, IFA_DTYPE_FLOAT16, IFA_LENGTHS_UNIFORM, 0, 0, 0, NULL},
    {"pocl BSND G1 all heads, 4 batches", &pocl, 4, 8, 8, 128, 6000, 1, 0, 0, IFA_LAYOUT_BSND, IFA_DTYPE_FLOAT16, IFA_LENGTHS_PER_BATCH, 0, 0, 0, NULL},
    {"avx2 MQA BNSD G4, 4 batches", &avx2, 4, 4, 1, 128, 9000, 1, 0, 0, IFA_LAYOUT_BNSD, IFA_DTYPE_FLOAT16, IFA_LENGTHS_PER_BATCH, 0, 0, 0, NULL},
};

START_TEST(domain_holds_every_length) {
    const config *c = &small[_i];
    const ifa_problem p = config_problem(c);
    sig_list seen = {0};
    ck_assert_int_eq(ifa__plan_domain(&p, c->dev, collect, &seen, NULL, NULL), IFA_STATUS_OK);
    ifa_rng r;
    ifa_rng_seed(&r, 4200 + (uint64_t)_i);
    for (int64_t b = 1; b <= p.batch; ++b) {
        const int per_batch = p.lengths_mode == IFA_LENGTHS_PER_BATCH && b > 1;
        for (int64_t len = 0; len <= c->s; ++len)
            for (int e = 0; e < (per_batch ? 3 : 1); ++e) {
                ifa_problem q = p;
                q.batch = b, q.max_length = len;
                q.total_length = e == 0 ? len * b : e == 1 ? len : ifa_rng_int(&r, len, len * b);
                if (!per_batch) q.lengths_mode = p.lengths_mode == IFA_LENGTHS_PER_BATCH ? IFA_LENGTHS_UNIFORM : p.lengths_mode;
                q.uniform_length = q.lengths_mode == IFA_LENGTHS_PER_BATCH ? 0 : len;
                ifa_plan plan, sig;
                ck_assert_int_eq(ifa__plan_make(&q, c->dev, &plan), IFA_STATUS_OK);
                ifa__plan_signature(&plan, &sig);
                ck_assert_msg(listed(&seen, &sig), "%s: B = %lld, longest block %lld rows, %lld in all: a kernel set "
                              "none of the %lld visited has (split %d, fused %d, KV heads per group %d)", c->name,
                              (long long)b, (long long)len, (long long)q.total_length, (long long)seen.n, plan.split_kv,
                              plan.fused_combine, plan.kv_heads_per_group);
            }
    }
    free(seen.sig);
}
END_TEST

/* Steps that differ only in what enters no build share a signature; a choice that enters one does not. */
START_TEST(signature_keeps_what_builds) {
    ifa_problem p = config_problem(&configs[7]); /* pocl, BNSD, G = 4, per batch */
    ifa_plan a, b, sa, sb;
    p.batch = 3, p.max_length = 100, p.total_length = 300;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &a), IFA_STATUS_OK);
    p.batch = 5, p.max_length = 90, p.total_length = 420, p.lengths_hash = 77;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &b), IFA_STATUS_OK);
    ck_assert_int_eq(a.split_kv, b.split_kv);
    ifa__plan_signature(&a, &sa), ifa__plan_signature(&b, &sb);
    ck_assert_int_eq(memcmp(&sa, &sb, sizeof sa), 0);
    b.fused_combine ^= 1; /* a kernel option */
    ifa__plan_signature(&b, &sb);
    ck_assert_int_ne(memcmp(&sa, &sb, sizeof sa), 0);
    b.fused_combine ^= 1, b.heads_per_group += 1;
    ifa__plan_signature(&b, &sb);
    ck_assert_int_ne(memcmp(&sa, &sb, sizeof sa), 0);
    /* one KV head of one batch: a long sequence splits over the 2 cores where a short one does not */
    p.batch = 1, p.num_heads = 4, p.num_kv_heads = 1, p.lengths_mode = IFA_LENGTHS_UNIFORM;
    p.max_length = p.total_length = p.uniform_length = 100;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &a), IFA_STATUS_OK);
    p.max_length = p.total_length = p.uniform_length = 16384;
    ck_assert_int_eq(ifa__plan_make(&p, &pocl, &b), IFA_STATUS_OK);
    ck_assert_int_eq(a.split_kv, IFA_SPLIT_NONE);
    ck_assert_int_ne(b.split_kv, IFA_SPLIT_NONE);
    ifa__plan_signature(&a, &sa), ifa__plan_signature(&b, &sb);
    ck_assert_int_ne(memcmp(&sa, &sb, sizeof sa), 0);
}
END_TEST

static ifa_status stop_at_second(const ifa_plan *plan, void *user) {
    (void)plan;
    return ++*(int *)user == 2 ? IFA_STATUS_INTERNAL : IFA_STATUS_OK;
}

/* A visit's failure stops the walk and is what the walk returns; NULLs are refused by name. */
START_TEST(domain_stops_at_a_failed_visit) {
    const ifa_problem p = config_problem(&configs[0]);
    int calls = 0;
    int64_t visited = -1;
    ck_assert_int_eq(ifa__plan_domain(&p, &h100, stop_at_second, &calls, NULL, &visited), IFA_STATUS_INTERNAL);
    ck_assert_int_eq(calls, 2);
    ck_assert_int_eq(visited, 2);
    ck_assert_int_eq(ifa__plan_domain(&p, &h100, NULL, NULL, NULL, NULL), IFA_STATUS_NULL_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "visit"));
}
END_TEST

static Suite *plan_domain_suite(void) {
    Suite *s = suite_create("plan_domain");
    TCase *t = test_tcase_create("plan_domain");
    tcase_set_timeout(t, 300);
    tcase_add_loop_test(t, domain_holds_every_step, 0, (int)(sizeof configs / sizeof configs[0]));
    tcase_add_loop_test(t, domain_holds_every_length, 0, (int)(sizeof small / sizeof small[0]));
    tcase_add_test(t, signature_keeps_what_builds);
    tcase_add_test(t, domain_stops_at_a_failed_visit);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return test_run_suite(plan_domain_suite()); }
