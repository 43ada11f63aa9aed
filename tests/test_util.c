#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_util.h"

#include "common/rng.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ifa_context *ctx;
static cl_command_queue queue;

ifa_context *test_ctx(void) {
    if (!ctx) {
        ifa_status st = ifa_context_create_default(NULL, &ctx);
        ck_assert_msg(st == IFA_STATUS_OK, "no OpenCL device: %s", ifa_last_error());
        cl_int err;
        queue = clCreateCommandQueue(ifa_context_cl_context(ctx), ifa_context_device(ctx), CL_QUEUE_PROFILING_ENABLE,
                                     &err);
        ck_assert_msg(queue != NULL, "clCreateCommandQueue failed: %d", (int)err);
    }
    return ctx;
}

cl_command_queue test_queue(void) {
    test_ctx();
    return queue;
}

/* IFA_TUNING before each push, so that pushes nest (a case's override under check()'s own replans) */
#define TUNING_DEPTH 8
static char saved_tuning[TUNING_DEPTH][1024];
static int saved_set[TUNING_DEPTH];
static int tuning_depth;

void test_tuning_push(const char *extra) {
    ck_assert_msg(tuning_depth < TUNING_DEPTH, "test_tuning_push nested more than %d deep", TUNING_DEPTH);
    const char *env = getenv("IFA_TUNING");
    snprintf(saved_tuning[tuning_depth], sizeof saved_tuning[0], "%s", env ? env : "");
    saved_set[tuning_depth] = env != NULL;
    char v[2048];
    snprintf(v, sizeof v, "%s%s%s", env && env[0] ? env : "", env && env[0] ? "," : "", extra);
    setenv("IFA_TUNING", v, 1);
    ++tuning_depth;
}

void test_tuning_pop(void) {
    ck_assert_msg(tuning_depth > 0, "test_tuning_pop without a push");
    --tuning_depth;
    if (saved_set[tuning_depth])
        setenv("IFA_TUNING", saved_tuning[tuning_depth], 1);
    else
        unsetenv("IFA_TUNING");
}

/* A fixture's teardown: a test that fails between a push and its pop leaves by Check's longjmp, past the pop,
 * and without this the later tests of the process would run under its tuning (and fail too, for no fault of
 * their own) */
static void tuning_unwind(void) {
    if (tuning_depth == 0) return;
    tuning_depth = 1;
    test_tuning_pop();
}

TCase *test_tcase_create(const char *name) {
    TCase *t = tcase_create(name);
    tcase_add_checked_fixture(t, NULL, tuning_unwind);
    return t;
}

/* IFA_TEST_SEED as a number (0 when unset); 0 returned when it is not a non-negative decimal integer */
static int test_salt(unsigned long long *salt) {
    const char *seed = getenv("IFA_TEST_SEED");
    *salt = 0;
    if (!seed || !*seed) return 1;
    char *end;
    errno = 0;
    *salt = strtoull(seed, &end, 10);
    return !*end && !errno && seed[0] != '-';
}

/* What a case index selects in the suites: residues (i % mod, div 1) and blocks (i / div, mod 0); the weights
 * favour the small moduli the cases decode most (layout, dtype, split mode). */
static const struct {
    int div, mod, weight;
} families[] = {
    {1, 2, 16}, {1, 3, 16}, {1, 4, 12}, {1, 5, 3}, {1, 6, 3},  {1, 7, 1},  {1, 8, 2},  {2, 0, 1},
    {3, 0, 4},  {4, 0, 6},  {5, 0, 1},  {6, 0, 1}, {8, 0, 4}, {10, 0, 1}, {12, 0, 1}, {16, 0, 1},
};
enum { FAMILIES = sizeof families / sizeof families[0] };
static int sampled_total, sampled_kept;

static int family_value(int f, int i) {
    return families[f].mod ? (i / families[f].div) % families[f].mod : i / families[f].div;
}

int test_sample_cases(int s, int e, int k, unsigned long long salt, char *picked) {
    const int n = e - s;
    if (n < 1 || s < 0) return 0;
    if (k <= 1 || n == 1) {
        memset(picked, 1, (size_t)n);
        return n;
    }
    memset(picked, 0, (size_t)n);
    char *covered = calloc((size_t)FAMILIES * (size_t)e, 1);
    if (!covered) return -1;
    const int keep = (n + k - 1) / k, rot = (int)(salt % (unsigned long long)n);
    for (int pick = 0; pick < keep; ++pick) {
        int best = -1, best_score = -1;
        for (int off = 0; off < n; ++off) {
            const int j = (rot + off) % n;
            if (picked[j]) continue;
            int score = 0;
            for (int f = 0; f < FAMILIES; ++f)
                if (!covered[f * e + family_value(f, s + j)]) score += families[f].weight;
            if (score > best_score) best = j, best_score = score;
        }
        picked[best] = 1;
        for (int f = 0; f < FAMILIES; ++f) covered[f * e + family_value(f, s + best)] = 1;
    }
    free(covered);
    return keep;
}

void test_add_loop(TCase *t, const TTest *tf, int s, int e) {
    const char *env = getenv("IFA_TEST_SAMPLE");
    const int k = env && *env ? atoi(env) : 1;
    unsigned long long salt = 0;
    char *picked = k > 1 && e - s > 1 && test_salt(&salt) ? malloc((size_t)(e - s)) : NULL;
    const int kept = picked ? test_sample_cases(s, e, k, salt, picked) : -1;
    if (kept < 0) { /* no sampling asked for (or no memory: every case) */
        free(picked);
        tcase_add_loop_test(t, tf, s, e);
        return;
    }
    for (int j = 0; j < e - s; ++j)
        if (picked[j]) tcase_add_loop_test(t, tf, s + j, s + j + 1);
    sampled_total += e - s, sampled_kept += kept;
    free(picked);
}

int test_run_suite(Suite *s) {
    /* IFA_TEST_SEED=N (N > 0) salts every seed the suite draws its inputs with, so a rerun checks other
     * random tensors, lengths and tables than the committed ones; the banner makes a failure reproducible */
    unsigned long long salt = 0;
    if (!test_salt(&salt)) { /* a typo must not silently run the committed seeds */
        fprintf(stderr, "IFA_TEST_SEED=\"%s\": must be a non-negative decimal integer\n", getenv("IFA_TEST_SEED"));
        return EXIT_FAILURE;
    }
    if (sampled_total)
        printf("IFA_TEST_SAMPLE=%s: %d of %d loop cases added (over all the suite's test cases; CK_RUN_CASE runs one)\n",
               getenv("IFA_TEST_SAMPLE"), sampled_kept, sampled_total);
    if (salt) {
        ifa_rng_set_salt(salt);
        printf("IFA_TEST_SEED=%llu: inputs drawn from salted seeds\n", salt);
    }
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (queue) clReleaseCommandQueue(queue);
    ifa_context_destroy(ctx);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
