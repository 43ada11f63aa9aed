#include "test_util.h"

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

int test_run_suite(Suite *s) {
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (queue) clReleaseCommandQueue(queue);
    ifa_context_destroy(ctx);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
