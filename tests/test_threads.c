/* Thread safety as documented (docs/api.md): host threads share one context, each with its own queue, and
 * run ops at the same time (both templates: CLBlast's products beside the fused kernel), building kernel
 * variants concurrently on a fresh context; every result matches the float64 reference and each thread's
 * last error is its own. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "common/runner.h"
#include "test_util.h"

enum { THREADS = 4, ROUNDS = 3 };

typedef struct job {
    ifa_context *ctx;
    int id;
    int failures;
    char error[256];
} job;

/* A case that differs per thread and round (layout, dtype, shape, lengths, paging through GQA), so threads
 * need different kernel variants at the same time. */
static int make_case(int id, int round, ifa_case *c) {
    static const char *const layouts[] = {"BSH", "BSND", "BNSD"};
    ifa_case_init(c);
    const int64_t b = 2, n = 8, nkv = id % 2 ? 2 : 8, d = 32 + 32 * (round % 2), s = 100 + 37 * id, sq = 1 + round % 2;
    const char *l = layouts[(id + round) % 3];
    strcpy(c->input_layout, l);
    const ifa_dtype dt = id % 3 == 0 ? IFA_DTYPE_FLOAT16 : id % 3 == 1 ? IFA_DTYPE_BFLOAT16 : IFA_DTYPE_FLOAT32;
    int64_t qs[4], ks[4];
    int32_t nd = strcmp(l, "BSH") == 0 ? 3 : 4;
    if (nd == 3) qs[0] = b, qs[1] = sq, qs[2] = n * d, ks[0] = b, ks[1] = s, ks[2] = nkv * d;
    else if (strcmp(l, "BSND") == 0) qs[0] = b, qs[1] = sq, qs[2] = n, qs[3] = d, ks[0] = b, ks[1] = s, ks[2] = nkv, ks[3] = d;
    else qs[0] = b, qs[1] = n, qs[2] = sq, qs[3] = d, ks[0] = b, ks[1] = nkv, ks[2] = s, ks[3] = d;
    if (ifa_host_tensor_alloc(&c->query, dt, nd, qs) || ifa_host_tensor_alloc(&c->key, dt, nd, ks) ||
        ifa_host_tensor_alloc(&c->value, dt, nd, ks) || !(c->lengths = malloc(2 * sizeof *c->lengths)))
        return -1;
    const uint64_t seed = 9000 + (uint64_t)(id * 10 + round);
    ifa_host_fill_random(&c->query, seed, -1, 1), ifa_host_fill_random(&c->key, seed + 1, -1, 1);
    ifa_host_fill_random(&c->value, seed + 2, -1, 1);
    c->lengths[0] = s, c->lengths[1] = s / 3, c->lengths_count = 2;
    c->num_heads = n, c->num_key_value_heads = nkv, c->scale_value = 1.0 / sqrt((double)d), c->softmax_lse_flag = 1;
    if ((id + round) % 2) strcpy(c->template_mode, "cv"); /* CLBlast products beside fused kernels */
    return 0;
}

static int worker(void *arg) {
    job *j = arg;
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(ifa_context_cl_context(j->ctx), ifa_context_device(j->ctx), 0, &err);
    if (err != CL_SUCCESS) {
        j->failures++;
        return 0;
    }
    for (int round = 0; round < ROUNDS; ++round) {
        ifa_case c;
        ifa_case_result r;
        ifa_case_check chk;
        if (make_case(j->id, round, &c) != 0 || ifa_case_run(j->ctx, q, &c, NULL, NULL, &r) != IFA_STATUS_OK ||
            ifa_case_check_result(&c, &r, &chk) != 0 || !chk.pass) {
            j->failures++;
            snprintf(j->error, sizeof j->error, "thread %d round %d: %s", j->id, round, ifa_last_error());
        }
        ifa_case_result_free(&r);
        ifa_case_free(&c);
    }
    /* a failure in this thread sets this thread's message only */
    ifa_incre_flash_attention_args a;
    ifa_incre_flash_attention_args_init(&a);
    ifa_plan plan;
    size_t ws;
    char want[64];
    snprintf(want, sizeof want, "thread-%d", j->id);
    a.input_layout = want; /* an invalid layout whose message names this thread */
    ifa_tensor t = {0};
    t.dtype = IFA_DTYPE_FLOAT16, t.ndim = 3, t.shape[0] = t.shape[1] = t.shape[2] = 1;
    a.query = a.key = a.value = a.attention_out = &t, a.num_heads = 1;
    ifa_incre_flash_attention_get_workspace_size(j->ctx, &a, &plan, &ws);
    thrd_yield();
    if (!strstr(ifa_last_error(), want)) {
        j->failures++;
        snprintf(j->error, sizeof j->error, "thread %d reads another thread's last error: %s", j->id, ifa_last_error());
    }
    clReleaseCommandQueue(q);
    return 0;
}

START_TEST(threads_share_a_context) {
    ifa_context *ctx;
    ck_assert_int_eq(ifa_context_create(ifa_context_cl_context(test_ctx()), ifa_context_device(test_ctx()), &ctx),
                     IFA_STATUS_OK); /* fresh: its kernels are built while the threads run */
    thrd_t th[THREADS];
    job jobs[THREADS];
    for (int i = 0; i < THREADS; ++i) {
        jobs[i] = (job){.ctx = ctx, .id = i};
        ck_assert_int_eq(thrd_create(&th[i], worker, &jobs[i]), thrd_success);
    }
    for (int i = 0; i < THREADS; ++i) thrd_join(th[i], NULL);
    for (int i = 0; i < THREADS; ++i) ck_assert_msg(jobs[i].failures == 0, "%s", jobs[i].error);
    ck_assert_int_ge(ifa_context_programs_built(ctx), THREADS);
    ifa_context_destroy(ctx);
}
END_TEST

int main(void) {
    Suite *s = suite_create("threads");
    TCase *t = test_tcase_create("threads");
    tcase_set_timeout(t, 600);
    tcase_add_test(t, threads_share_a_context);
    suite_add_tcase(s, t);
    return test_run_suite(s);
}
