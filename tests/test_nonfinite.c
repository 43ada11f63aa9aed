#define _POSIX_C_SOURCE 200809L /* setenv */
/* Non-finite values (docs/op.md, "Non-finite values"): each kind of corruption (a NaN or an infinity in the query,
 * a key, a value, a scale, a float8 NaN code, scores that overflow, keys whose every score is -inf, NaN at masked
 * positions) on every kind of plan (the CPU shape whole, split with either rowmax, the fused combine, balanced
 * units, the cascade's shared prefix, the cv template, the GPU shapes on PoCL: work-group, lanes, the matrix
 * shapes, the latent tile), against the float64 reference that follows the same rule: the output and the LSE
 * must be NaN exactly where the reference's are (and infinite where its are), finite and within tolerance
 * elsewhere. Each class also asserts that its corruption did reach the reference (or, for masked positions, did
 * not), so a case cannot pass by corrupting nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/merge_case.h"
#include "common/reference.h"
#include "common/runner.h"
#include "test_util.h"

/* A plan kind: the tuning and device facts that give it, whether it runs a GPU shape (built unoptimised on PoCL,
 * as the suite's other GPU-shape runs), the template asked for, and what the plan must show. */
typedef struct kind {
    const char *name;
    const char *tuning;
    const char *facts;
    int gpu;
    const char *tmpl;
    int32_t want_split; /* ifa_split_mode the plan must have */
    int want_mma;       /* 1: the plan must take a matrix shape (fp16 K/V; the others take it by their scales' form) */
    int want_lanes;     /* 1: the plan must take the lane shape */
    int prefix;         /* > 0: a shared prefix of this many rows before every batch's own (the cascade's pass) */
} kind;

#define WG16 "work_group_size=16,chunk_rows=128,vector_width=1,pv_block=1,batch_fast=0"
#define LANES "work_group_size=64,chunk_rows=64,vector_width=1,pv_block=1,lanes=3,lane_q_local=1"
#define LANES_SC "work_group_size=32,chunk_rows=32,vector_width=1,pv_block=1,lanes=4,lane_prefetch=1,lane_scores=1"
#define MMA_ALL "mma_int8=1,mma_bf16=1,mma_float8=1,mma_int4=1"
#define MMA(n) "work_group_size=64,chunk_rows=64,vector_width=1,pv_block=1,lanes=3,mma=" #n "," MMA_ALL
#define SPLIT "split_min_tokens=64,balance_milli=1000000,fused_balanced=0"
#define BAL "split_min_tokens=64,balance_milli=1"
#define CU "compute_units=64"

static const kind kinds[] = {
    {.name = "vector", .tuning = "split_min_tokens=100000", .want_split = IFA_SPLIT_NONE},
    {.name = "vector_split", .tuning = SPLIT ",split_rowmax=1,fused_combine=0", .facts = CU,
     .want_split = IFA_SPLIT_PARTIAL_ROWMAX},
    {.name = "vector_split_global", .tuning = SPLIT ",split_rowmax=2,fused_combine=0", .facts = CU,
     .want_split = IFA_SPLIT_GLOBAL_ROWMAX},
    {.name = "vector_split_fused", .tuning = SPLIT ",split_rowmax=1,fused_combine=1", .facts = CU,
     .want_split = IFA_SPLIT_PARTIAL_ROWMAX},
    {.name = "vector_balanced", .tuning = BAL ",fused_balanced=0", .facts = CU, .want_split = IFA_SPLIT_BALANCED},
    {.name = "vector_balanced_fused", .tuning = BAL ",fused_balanced=1", .facts = CU, .want_split = IFA_SPLIT_BALANCED},
    {.name = "cv", .tuning = "split_min_tokens=100000,cv_work_group_size=16", .tmpl = "cv",
     .want_split = IFA_SPLIT_NONE},
    {.name = "cv_split", .tuning = SPLIT ",split_rowmax=1", .facts = CU, .tmpl = "cv",
     .want_split = IFA_SPLIT_PARTIAL_ROWMAX},
    {.name = "work_group", .tuning = WG16 ",split_min_tokens=100000", .gpu = 1, .want_split = IFA_SPLIT_NONE},
    {.name = "work_group_split", .tuning = WG16 "," SPLIT ",split_rowmax=1,fused_combine=0", .facts = CU, .gpu = 1,
     .want_split = IFA_SPLIT_PARTIAL_ROWMAX},
    {.name = "work_group_balanced", .tuning = WG16 "," BAL ",fused_balanced=1", .facts = CU, .gpu = 1,
     .want_split = IFA_SPLIT_BALANCED},
    {.name = "lanes", .tuning = LANES ",split_min_tokens=100000", .gpu = 1,
     .want_split = IFA_SPLIT_NONE, .want_lanes = 1},
    {.name = "lanes_split_fused", .tuning = LANES_SC "," SPLIT ",split_rowmax=1,fused_combine=1", .facts = CU, .gpu = 1,
     .want_split = IFA_SPLIT_PARTIAL_ROWMAX, .want_lanes = 1},
    {.name = "mma", .tuning = MMA(1) ",split_min_tokens=100000", .gpu = 1, .want_split = IFA_SPLIT_NONE, .want_mma = 1},
    {.name = "mma_lean_split", .tuning = MMA(2) "," SPLIT ",split_rowmax=2,fused_combine=0", .facts = CU, .gpu = 1,
     .want_split = IFA_SPLIT_GLOBAL_ROWMAX, .want_mma = 1},
    {.name = "mma_t", .tuning = MMA(3) ",split_min_tokens=100000", .gpu = 1,
     .want_split = IFA_SPLIT_NONE, .want_mma = 1},
    {.name = "mma_t_ahead_split_fused",
     .tuning = MMA(5) "," SPLIT ",split_rowmax=1,fused_combine=1", .facts = CU, .gpu = 1,
     .want_split = IFA_SPLIT_PARTIAL_ROWMAX, .want_mma = 1},
    {.name = "vector_prefix", .tuning = "split_min_tokens=100000", .want_split = IFA_SPLIT_PARTIAL_ROWMAX, .prefix = 40},
    {.name = "work_group_prefix_split",
     .tuning = WG16 "," SPLIT ",split_rowmax=1,fused_combine=0", .facts = CU, .gpu = 1,
     .want_split = IFA_SPLIT_PARTIAL_ROWMAX, .prefix = 40},
};
#define KINDS (int)(sizeof kinds / sizeof kinds[0])

/* The corruptions. */
enum {
    C_KEY_NAN,      /* one element of one visible key row: its KV head's rows in that batch NaN */
    C_QUERY_NAN,    /* one element of one query row: that row NaN */
    C_QUERY_INF,    /* +inf in one query element: that row's scores +-inf (or NaN): NaN */
    C_VALUE_NAN,    /* one value element: that column of its KV head's rows NaN, the LSE finite */
    C_VALUE_INF,    /* +inf in one value element: that column +inf */
    C_KEY_INF,      /* +inf in one key element: a score of +inf (row NaN) or -inf (weight 0) by the query's sign */
    C_OVERFLOW,     /* scale 3e38: scores past float32's range, +inf among them: every row NaN */
    C_ALL_NEG_INF,  /* every visible key of batch 1, KV head 0, scores -inf: those rows zeros, LSE -inf */
    C_MASKED_NAN,   /* NaN in keys and values at masked positions: nothing changes */
    C_FP8_NAN,      /* float8 e4m3fn K/V with a NaN code in a key and in a value */
    C_SCALE_NAN,    /* int8 K/V, per-channel scales, one NaN: every row of its KV head NaN */
    C_TOKEN_SCALE_NAN, /* int8 K/V, per-token scales (key and value alike), one NaN at a visible position */
    C_SINK_NAN,     /* sinks with a NaN logit for one head: its rows NaN */
    C_SCALE_INF,    /* int8 K/V, per-channel scales, one +inf key scale: its KV head's scores +-inf: rows NaN */
    C_TOKEN_SCALE_INF, /* int8 K/V, per-token scales, +inf at one visible position of batch 0: its key's scores NaN
                        * (elements of both signs times inf), and its value row infinite: batch 0's rows NaN */
    CLASSES
};
static const char *const class_names[CLASSES] = {"key_nan",  "query_nan", "query_inf",    "value_nan",
                                                 "value_inf", "key_inf",  "overflow",     "all_neg_inf",
                                                 "masked_nan", "fp8_nan", "scale_nan", "token_scale_nan",
                                                 "sink_nan", "scale_inf", "token_scale_inf"};

/* The case: B = 2 with lengths 300 and 170 (uneven: balanced units), N = 8 query heads on N_kv = 2 (G = 4), D = 64,
 * BSND, fp16 (int8 or float8 K/V where the class says), the LSE written. */
enum { B = 2, N = 8, NKV = 2, D = 64, S = 300 };
static const int64_t lens[B] = {300, 170};

/* the classes on int8 K/V with scales */
static int int8_class(int cls) {
    return cls == C_SCALE_NAN || cls == C_TOKEN_SCALE_NAN || cls == C_SCALE_INF || cls == C_TOKEN_SCALE_INF;
}

static int64_t at(int64_t s_len, int64_t heads, int64_t b, int64_t s, int64_t h, int64_t d) {
    return ifa_case_at(0, s_len, heads, D, b, s, h, d);
}

static void build(int cls, int64_t prefix, uint64_t seed, ifa_case *c) {
    ifa_case_init(c);
    const ifa_dtype kv = cls == C_FP8_NAN                                     ? IFA_DTYPE_FLOAT8_E4M3
                         : int8_class(cls)                                                        ? IFA_DTYPE_INT8
                                                                              : IFA_DTYPE_FLOAT16;
    const int64_t qs[4] = {B, 1, N, D}, ks[4] = {B, S, NKV, D};
    ck_assert_int_eq(ifa_host_tensor_alloc(&c->query, IFA_DTYPE_FLOAT16, 4, qs), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&c->key, kv, 4, ks), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&c->value, kv, 4, ks), 0);
    const double range = kv == IFA_DTYPE_INT8 ? 127 : kv == IFA_DTYPE_FLOAT8_E4M3 ? 2 : 1;
    ifa_host_fill_random(&c->query, seed * 7 + 1, -1, 1);
    ifa_host_fill_random(&c->key, seed * 7 + 2, -range, range);
    ifa_host_fill_random(&c->value, seed * 7 + 3, -range, range);
    ck_assert_ptr_nonnull(c->lengths = malloc(B * sizeof *c->lengths));
    memcpy(c->lengths, lens, sizeof lens);
    c->lengths_count = B;
    c->num_heads = N, c->num_key_value_heads = NKV, c->scale_value = 1.0 / sqrt((double)D);
    strcpy(c->input_layout, "BSND");
    c->softmax_lse_flag = 1;
    /* rows past a batch's length hold NaN: never read */
    for (int64_t b = 0; b < B; ++b)
        for (int64_t s = lens[b]; s < S && kv == IFA_DTYPE_FLOAT16; ++s)
            for (int64_t i = 0; i < NKV * D; ++i) {
                ifa_host_set(&c->key, at(S, NKV, b, s, 0, 0) + i, NAN);
                ifa_host_set(&c->value, at(S, NKV, b, s, 0, 0) + i, NAN);
            }
    if (kv == IFA_DTYPE_INT8) {
        /* per channel (N_kv, D) for both halves, or per token (2, B, S) */
        const int token = cls == C_TOKEN_SCALE_NAN || cls == C_TOKEN_SCALE_INF;
        const int64_t sh[3] = {2, token ? B : NKV, token ? S : D};
        ck_assert_int_eq(ifa_host_tensor_alloc(&c->antiquant_scale, IFA_DTYPE_FLOAT32, 3, sh), 0);
        ifa_host_fill_random(&c->antiquant_scale, seed * 7 + 4, 0.5 / 127, 1.5 / 127);
        c->antiquant_mode = token ? 1 : 0;
    }
    if (prefix > 0) {
        const int64_t ps[4] = {1, prefix, NKV, D};
        ck_assert_int_eq(ifa_host_tensor_alloc(&c->key_shared_prefix, kv, 4, ps), 0);
        ck_assert_int_eq(ifa_host_tensor_alloc(&c->value_shared_prefix, kv, 4, ps), 0);
        ifa_host_fill_random(&c->key_shared_prefix, seed * 7 + 5, -range, range);
        ifa_host_fill_random(&c->value_shared_prefix, seed * 7 + 6, -range, range);
    }
}

/* the query element (b, h, d) and the key/value element (b, s, kv head, d) */
static void set_q(ifa_case *c, int64_t b, int64_t h, int64_t d, double x) { ifa_host_set(&c->query, at(1, N, b, 0, h, d), x); }
static void set_kv(ifa_host_tensor *t, int64_t b, int64_t s, int64_t kh, int64_t d, double x) {
    ifa_host_set(t, at(S, NKV, b, s, kh, d), x);
}

static void corrupt(int cls, ifa_case *c) {
    switch (cls) {
    case C_KEY_NAN: set_kv(&c->key, 1, 137, 0, 5, NAN); break;
    case C_QUERY_NAN: set_q(c, 0, 5, 3, NAN); break;
    case C_QUERY_INF: set_q(c, 0, 2, 3, INFINITY); break;
    case C_VALUE_NAN: set_kv(&c->value, 1, 42, 1, 7, NAN); break;
    case C_VALUE_INF: set_kv(&c->value, 0, 250, 1, 9, INFINITY); break;
    case C_KEY_INF:
        /* batch 0's heads of KV head 1 (4 to 7): two positive query elements there (a score of +inf: NaN), two
         * negative (-inf: the key weighs 0) */
        for (int64_t h = N / NKV; h < N; ++h) set_q(c, 0, h, 11, h < N / NKV + 2 ? 0.5 : -0.5);
        set_kv(&c->key, 0, 77, 1, 11, INFINITY);
        break;
    case C_OVERFLOW: c->scale_value = 3e38; break;
    case C_ALL_NEG_INF:
        /* a positive query element d = 0 in the heads of KV head 0, and -inf there in every key of batch 1 and of
         * the shared prefix (if any) */
        for (int64_t h = 0; h < N / NKV; ++h) set_q(c, 0, h, 0, 0.5), set_q(c, 1, h, 0, 0.5);
        for (int64_t s = 0; s < lens[1]; ++s) set_kv(&c->key, 1, s, 0, 0, -INFINITY);
        for (int64_t s = 0; c->key_shared_prefix.data && s < c->key_shared_prefix.shape[1]; ++s)
            ifa_host_set(&c->key_shared_prefix, at(c->key_shared_prefix.shape[1], NKV, 0, s, 0, 0), -INFINITY);
        break;
    case C_MASKED_NAN: {
        /* a (B, S) mask hiding every seventh position; NaN in every key and value element there */
        const int64_t ms[2] = {B, S};
        ck_assert_int_eq(ifa_host_tensor_alloc(&c->atten_mask, IFA_DTYPE_BOOL, 2, ms), 0);
        for (int64_t b = 0; b < B; ++b)
            for (int64_t s = 0; s < S; ++s) {
                const int hide = s % 7 == 3;
                ifa_host_set(&c->atten_mask, b * S + s, hide);
                for (int64_t i = 0; hide && i < NKV * D; ++i) {
                    ifa_host_set(&c->key, at(S, NKV, b, s, 0, 0) + i, NAN);
                    ifa_host_set(&c->value, at(S, NKV, b, s, 0, 0) + i, NAN);
                }
            }
        break;
    }
    case C_FP8_NAN:
        ((uint8_t *)c->key.data)[at(S, NKV, 0, 99, 1, 17)] = 0x7f;
        ((uint8_t *)c->value.data)[at(S, NKV, 1, 12, 0, 20)] = 0xff;
        break;
    case C_SCALE_NAN: ifa_host_set(&c->antiquant_scale, 1 * D + 30, NAN); break; /* the key's, KV head 1 */
    case C_SCALE_INF: ifa_host_set(&c->antiquant_scale, 1 * D + 30, INFINITY); break;
    case C_TOKEN_SCALE_INF: ifa_host_set(&c->antiquant_scale, 0 * S + 200, INFINITY); break; /* key and value */
    case C_SINK_NAN: {
        const int64_t n = N;
        ck_assert_int_eq(ifa_host_tensor_alloc(&c->sinks, IFA_DTYPE_FLOAT32, 1, &n), 0);
        ifa_host_fill_random(&c->sinks, 91, -3, 3);
        ifa_host_set(&c->sinks, 6, NAN);
        break;
    }
    case C_TOKEN_SCALE_NAN:
        ifa_host_set(&c->antiquant_scale, 0 * S + 123, NAN);           /* the key's: batch 0, position 123 */
        ifa_host_set(&c->antiquant_scale, (1 * B + 1) * S + 60, NAN);  /* the value's: batch 1, position 60 */
        break;
    }
}

/* What the reference must show for the class, so that the corruption is known to reach it: rows with a NaN LSE,
 * output elements NaN or infinite, LSE rows of -inf. */
typedef struct shows {
    int64_t nan_lse, nonfinite_out, neg_inf_lse;
} shows;

static shows reference_shows(const ifa_case *c) {
    const int64_t rows = B * N, n = rows * D;
    double *ref = malloc((size_t)n * sizeof *ref), *lse = malloc((size_t)rows * sizeof *lse);
    ck_assert(ref && lse);
    ck_assert_int_eq(ifa_reference_ifa(c, ref, lse, NULL), 0);
    shows s = {0, 0, 0};
    for (int64_t i = 0; i < rows; ++i) s.nan_lse += isnan(lse[i]), s.neg_inf_lse += lse[i] == -INFINITY;
    for (int64_t i = 0; i < n; ++i) s.nonfinite_out += !isfinite(ref[i]);
    free(ref), free(lse);
    return s;
}

static void expect_shows(int cls, shows s) {
    switch (cls) {
    case C_VALUE_NAN:
    case C_VALUE_INF: /* one column of the KV head's G rows, the LSE finite */
        ck_assert_int_eq(s.nan_lse, 0);
        ck_assert_int_eq(s.nonfinite_out, N / NKV);
        break;
    case C_MASKED_NAN:
        ck_assert_int_eq(s.nan_lse + s.nonfinite_out + s.neg_inf_lse, 0);
        break;
    case C_ALL_NEG_INF:
        ck_assert_int_eq(s.neg_inf_lse, N / NKV);
        ck_assert_int_eq(s.nan_lse + s.nonfinite_out, 0);
        break;
    case C_KEY_INF: /* two of the KV head's rows NaN (a +inf score), the two others finite */
        ck_assert_int_eq(s.nan_lse, 2);
        ck_assert_int_eq(s.nonfinite_out, 2 * D);
        break;
    case C_TOKEN_SCALE_NAN: /* batch 0's rows (a NaN key row) and batch 1's outputs (a NaN value row) */
        ck_assert_int_eq(s.nan_lse, N);
        ck_assert_int_eq(s.nonfinite_out, B * N * D);
        break;
    case C_FP8_NAN: /* batch 0 KV head 1's rows (key), batch 1 KV head 0's column 20 (value) */
        ck_assert_int_eq(s.nan_lse, N / NKV);
        ck_assert_int_eq(s.nonfinite_out, N / NKV * D + N / NKV);
        break;
    case C_OVERFLOW: ck_assert_int_eq(s.nan_lse, B * N); break;
    case C_SINK_NAN: ck_assert_int_eq(s.nan_lse, B); break; /* head 6 of each batch */
    case C_SCALE_INF: ck_assert_int_eq(s.nan_lse, B * N / NKV); break; /* KV head 1's rows in both batches */
    case C_TOKEN_SCALE_INF: ck_assert_int_eq(s.nan_lse, N); break;
    default: ck_assert_int_gt(s.nan_lse, 0); /* whole rows NaN */
    }
}

static void set_env(const char *name, const char *value) {
    if (value && *value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

/* Runs class cls under kind k and checks it; 0 when the kind's shape does not take the class's K/V type (float8
 * and int4 in the matrix shapes stay behind their own switches), 1 when it ran. */
static int run_one(const kind *k, int cls, uint64_t seed) {
    /* the shared prefix is the query's dtype (the reference reads it undequantised); the op takes no mask with it */
    if (k->prefix && (cls == C_FP8_NAN || int8_class(cls) || cls == C_MASKED_NAN))
        return 0;
    ifa_case c;
    build(cls, k->prefix, seed, &c);
    corrupt(cls, &c);
    expect_shows(cls, reference_shows(&c));
    if (k->tmpl) strcpy(c.template_mode, k->tmpl);
    test_tuning_push(k->tuning);
    set_env("IFA_DEVICE_FACTS", k->facts);
    set_env("IFA_CPU_OPT_DISABLE", k->gpu ? "1" : NULL);
    ifa_case_result r;
    const ifa_status st = ifa_case_run(test_ctx(), test_queue(), &c, NULL, NULL, &r);
    test_tuning_pop();
    set_env("IFA_DEVICE_FACTS", NULL);
    set_env("IFA_CPU_OPT_DISABLE", NULL);
    ck_assert_msg(st == IFA_STATUS_OK, "%s %s: %s (%s)", k->name, class_names[cls], ifa_status_name(st), ifa_last_error());
    const ifa_plan *p = &r.plan;
    ck_assert_msg(p->split_kv == k->want_split, "%s %s: split mode %d, want %d", k->name, class_names[cls],
                  (int)p->split_kv, (int)k->want_split);
    ck_assert_msg(!k->tmpl || p->template_id == IFA_TEMPLATE_CV, "%s: not the cv template", k->name);
    ck_assert_msg(!k->want_lanes || p->lanes > 0, "%s %s: not the lane shape", k->name, class_names[cls]);
    const int mma_type = c.key.dtype == IFA_DTYPE_FLOAT16; /* int8 and float8 take it by their scales' form */
    ck_assert_msg(!k->want_mma || !mma_type || p->mma > 0, "%s %s: not a matrix shape", k->name, class_names[cls]);
    ifa_case_check chk;
    ck_assert_int_eq(ifa_case_check_result(&c, &r, &chk), 0);
    ck_assert_msg(chk.pass, "%s %s (mma %d, lanes %d, vector width %d): nonfinite mismatches %lld, lse_bad %lld, rel_l2 %.3g",
                  k->name, class_names[cls], (int)p->mma, (int)p->lanes, (int)p->vector_width,
                  (long long)chk.nonfinite, (long long)chk.lse_bad, chk.rel_l2);
    ifa_case_result_free(&r);
    ifa_case_free(&c);
    return 1;
}

/* loop index i: kind i / CLASSES, class i % CLASSES */
START_TEST(nonfinite_rule) {
    const kind *k = &kinds[_i / CLASSES];
    run_one(k, _i % CLASSES, 4000 + (uint64_t)_i);
}
END_TEST

/* Empty rows (a length of 0) stay zeros with an LSE of -inf beside corrupted ones, on the CPU shape's plan. */
START_TEST(empty_row_beside_nan) {
    ifa_case c;
    build(C_KEY_NAN, 0, 77, &c);
    corrupt(C_KEY_NAN, &c);
    c.lengths[0] = 0;
    ifa_case_result r;
    ck_assert_int_eq(ifa_case_run(test_ctx(), test_queue(), &c, NULL, NULL, &r), IFA_STATUS_OK);
    ifa_case_check chk;
    ck_assert_int_eq(ifa_case_check_result(&c, &r, &chk), 0);
    ck_assert_msg(chk.pass, "nonfinite mismatches %lld, lse_bad %lld", (long long)chk.nonfinite, (long long)chk.lse_bad);
    for (int64_t h = 0; h < N; ++h) {
        ck_assert(ifa_host_get(&r.lse, h) == -INFINITY);
        ck_assert(isnan(ifa_host_get(&r.lse, N + h)) == (h < N / NKV));
    }
    ifa_case_result_free(&r);
    ifa_case_free(&c);
}
END_TEST

/* MergeAttentionStates: a NaN partial LSE (row NaN), a +inf one (row NaN), a NaN in a read part's output (that
 * column NaN), NaN in the output of a part whose LSE is -inf (not read: the row unchanged), every part -inf (zeros
 * and -inf), each against the float64 merge that follows the same rule. */
START_TEST(merge_states) {
    enum { P = 3, ROWS = 6, DM = 40 };
    ifa_merge_case c = {.out_dtype = IFA_DTYPE_FLOAT16, .lse_flag = 1};
    const int64_t os[3] = {P, ROWS, DM}, ls[2] = {P, ROWS};
    ck_assert_int_eq(ifa_host_tensor_alloc(&c.partial_outputs, IFA_DTYPE_FLOAT16, 3, os), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&c.partial_lses, IFA_DTYPE_FLOAT32, 2, ls), 0);
    ifa_host_fill_random(&c.partial_outputs, 5, -1, 1);
    ifa_host_fill_random(&c.partial_lses, 6, -2, 4);
    ifa_host_set(&c.partial_lses, 1 * ROWS + 0, NAN);                      /* row 0: NaN */
    ifa_host_set(&c.partial_lses, 2 * ROWS + 1, INFINITY);                 /* row 1: NaN */
    ifa_host_set(&c.partial_outputs, (0 * ROWS + 2) * DM + 7, NAN);        /* row 2: column 7 NaN */
    ifa_host_set(&c.partial_lses, 1 * ROWS + 3, -INFINITY);                /* row 3: part 1 not read */
    for (int64_t d = 0; d < DM; ++d) ifa_host_set(&c.partial_outputs, (1 * ROWS + 3) * DM + d, NAN);
    for (int64_t i = 0; i < P; ++i) ifa_host_set(&c.partial_lses, i * ROWS + 4, -INFINITY); /* row 4: empty */
    ifa_merge_result r;
    ck_assert_int_eq(ifa_merge_case_run(test_ctx(), test_queue(), &c, &r), IFA_STATUS_OK);
    ifa_merge_case_check(&c, &r);
    ck_assert_msg(r.pass, "nonfinite mismatches %lld, lse_bad %lld, rel_l2 %.3g", (long long)r.nonfinite,
                  (long long)r.lse_bad, r.rel_l2);
    ck_assert(isnan(ifa_host_get(&r.lse, 0)) && isnan(ifa_host_get(&r.lse, 1)) && isfinite(ifa_host_get(&r.lse, 2)));
    ck_assert(isnan(ifa_host_get(&r.out, 2 * DM + 7)) && isfinite(ifa_host_get(&r.out, 2 * DM + 8)));
    ck_assert(isfinite(ifa_host_get(&r.lse, 3)) && ifa_host_get(&r.lse, 4) == -INFINITY);
    ck_assert(ifa_host_get(&r.out, 4 * DM) == 0 && isfinite(ifa_host_get(&r.out, 3 * DM)));
    ifa_merge_result_free(&r);
    ifa_merge_case_free(&c);
}
END_TEST

int main(void) {
    Suite *s = suite_create("nonfinite");
    TCase *t = test_tcase_create("rule");
    tcase_set_timeout(t, 0);
    test_add_loop(t, nonfinite_rule, 0, KINDS * CLASSES);
    tcase_add_test(t, empty_row_beside_nan);
    tcase_add_test(t, merge_states);
    suite_add_tcase(s, t);
    return test_run_suite(s);
}
