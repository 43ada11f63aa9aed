#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_util.h"

#include "common/rng.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

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

int test_run_suite(Suite *s) {
    /* IFA_TEST_SEED=N (N > 0) salts every seed the suite draws its inputs with, so a rerun checks other
     * random tensors, lengths and tables than the committed ones; the banner makes a failure reproducible */
    const char *seed = getenv("IFA_TEST_SEED");
    unsigned long long salt = 0;
    if (seed && *seed) {
        char *end;
        errno = 0;
        salt = strtoull(seed, &end, 10);
        if (*end || errno || seed[0] == '-') { /* a typo must not silently run the committed seeds */
            fprintf(stderr, "IFA_TEST_SEED=\"%s\": must be a non-negative decimal integer\n", seed);
            return EXIT_FAILURE;
        }
    }
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
