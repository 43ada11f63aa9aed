/* MergeAttentionStates: merging IncreFlashAttention's results over two halves of each sequence's keys equals
 * attention over all of them (float64 reference), empty parts (LSE -inf) contribute nothing even when their
 * outputs hold NaN, and every invalid argument has its own error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/reference.h"
#include "common/runner.h"
#include "test_util.h"

enum { B = 3, N = 8, NKV = 2, D = 32, S = 200, CUT = 120 };

/* A BNSD case over key rows [r0, r1) of full (B, N_kv, S, D) K/V, with per-batch lengths clipped to it. */
static void slice_case(const ifa_case *full, int64_t r0, int64_t r1, ifa_case *c) {
    ifa_case_init(c);
    int64_t ks[4] = {B, NKV, r1 - r0, D};
    ck_assert_int_eq(ifa_host_tensor_alloc(&c->query, full->query.dtype, 4, full->query.shape), 0);
    memcpy(c->query.data, full->query.data, full->query.bytes);
    ck_assert_int_eq(ifa_host_tensor_alloc(&c->key, full->key.dtype, 4, ks), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&c->value, full->key.dtype, 4, ks), 0);
    for (int64_t bh = 0; bh < B * NKV; ++bh)
        for (int64_t s = r0; s < r1; ++s)
            for (int64_t d = 0; d < D; ++d) {
                const int64_t from = (bh * S + s) * D + d, to = (bh * (r1 - r0) + s - r0) * D + d;
                ifa_host_set(&c->key, to, ifa_host_get(&full->key, from));
                ifa_host_set(&c->value, to, ifa_host_get(&full->value, from));
            }
    c->lengths = malloc(B * sizeof *c->lengths);
    ck_assert_ptr_nonnull(c->lengths);
    for (int64_t b = 0; b < B; ++b) {
        const int64_t len = full->lengths[b] < r0 ? 0 : full->lengths[b] > r1 ? r1 - r0 : full->lengths[b] - r0;
        c->lengths[b] = len;
    }
    c->lengths_count = B;
    c->num_heads = N, c->num_key_value_heads = NKV, c->scale_value = full->scale_value, c->softmax_lse_flag = 1;
    strcpy(c->input_layout, "BNSD");
}

static cl_mem upload(const ifa_host_tensor *t) {
    cl_int err;
    cl_mem m = clCreateBuffer(ifa_context_cl_context(test_ctx()), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, t->bytes,
                              t->data, &err);
    ck_assert_ptr_nonnull(m);
    return m;
}

static void describe(ifa_tensor *t, const ifa_host_tensor *h, cl_mem m) {
    memset(t, 0, sizeof *t);
    t->buffer = m, t->dtype = h->dtype, t->ndim = h->ndim;
    memcpy(t->shape, h->shape, sizeof t->shape);
}

/* Lengths 200 (both halves), 120 (the second half empty), 0 (both empty: zeros, -inf); in float32 and, for
 * _i = 1, float16 outputs; the empty parts' outputs are overwritten with NaN before the merge. */
START_TEST(merge_equals_attention_over_the_union) {
    static const int64_t lens[B] = {200, 120, 0};
    const ifa_dtype out_dt = _i ? IFA_DTYPE_FLOAT16 : IFA_DTYPE_FLOAT32;
    ifa_case full;
    ifa_case_init(&full);
    int64_t qs[4] = {B, N, 1, D}, ks[4] = {B, NKV, S, D};
    ck_assert_int_eq(ifa_host_tensor_alloc(&full.query, IFA_DTYPE_FLOAT32, 4, qs), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&full.key, IFA_DTYPE_FLOAT16, 4, ks), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&full.value, IFA_DTYPE_FLOAT16, 4, ks), 0);
    ifa_host_fill_random(&full.query, 51 + (uint64_t)_i, -1, 1);
    ifa_host_fill_random(&full.key, 52 + (uint64_t)_i, -1, 1);
    ifa_host_fill_random(&full.value, 53 + (uint64_t)_i, -1, 1);
    full.lengths = malloc(sizeof lens);
    memcpy(full.lengths, lens, sizeof lens);
    full.lengths_count = B, full.num_heads = N, full.num_key_value_heads = NKV, full.scale_value = 0.2;
    full.softmax_lse_flag = 1;
    strcpy(full.input_layout, "BNSD");

    /* the two halves, each run by IncreFlashAttention with LSE */
    ifa_case part[2];
    ifa_case_result res[2];
    slice_case(&full, 0, CUT, &part[0]);
    slice_case(&full, CUT, S, &part[1]);
    for (int i = 0; i < 2; ++i)
        ck_assert_msg(ifa_case_run(test_ctx(), test_queue(), &part[i], NULL, NULL, &res[i]) == IFA_STATUS_OK, "%s",
                      ifa_last_error());

    /* stacked (2, B, N, D) outputs and (2, B, N) LSEs; NaN in the outputs of parts that saw nothing */
    ifa_host_tensor po, pl, out, lse;
    int64_t pos[4] = {2, B, N, D}, pls[3] = {2, B, N}, os[3] = {B, N, D}, ls[2] = {B, N};
    ck_assert_int_eq(ifa_host_tensor_alloc(&po, IFA_DTYPE_FLOAT32, 4, pos), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&pl, IFA_DTYPE_FLOAT32, 3, pls), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&out, out_dt, 3, os), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&lse, IFA_DTYPE_FLOAT32, 2, ls), 0);
    for (int i = 0; i < 2; ++i)
        for (int64_t row = 0; row < B * N; ++row) {
            const double l = ifa_host_get(&res[i].lse, row);
            ifa_host_set(&pl, i * B * N + row, l);
            for (int64_t d = 0; d < D; ++d)
                ifa_host_set(&po, (i * B * N + row) * D + d, isinf(l) ? NAN : ifa_host_get(&res[i].out, row * D + d));
        }
    for (int64_t i = 0; i < B * N * D; ++i) ifa_host_set(&out, i, NAN);
    for (int64_t i = 0; i < B * N; ++i) ifa_host_set(&lse, i, NAN);
    cl_mem mpo = upload(&po), mpl = upload(&pl), mo = upload(&out), ml = upload(&lse);
    ifa_tensor tpo, tpl, to, tl;
    describe(&tpo, &po, mpo), describe(&tpl, &pl, mpl), describe(&to, &out, mo), describe(&tl, &lse, ml);
    ifa_merge_attention_states_args a = {&tpo, &tpl, &to, &tl};
    size_t ws = 1;
    ck_assert_int_eq(ifa_merge_attention_states_get_workspace_size(test_ctx(), &a, &ws), IFA_STATUS_OK);
    ck_assert_uint_eq(ws, 0);
    cl_event ev;
    ck_assert_msg(ifa_merge_attention_states_run(test_ctx(), &a, test_queue(), 0, NULL, &ev) == IFA_STATUS_OK, "%s",
                  ifa_last_error());
    ck_assert_int_eq(clEnqueueReadBuffer(test_queue(), mo, CL_TRUE, 0, out.bytes, out.data, 1, &ev, NULL), CL_SUCCESS);
    ck_assert_int_eq(clEnqueueReadBuffer(test_queue(), ml, CL_TRUE, 0, lse.bytes, lse.data, 1, &ev, NULL), CL_SUCCESS);
    clReleaseEvent(ev);

    /* the reference over all keys */
    double *ref = malloc(sizeof(double) * B * N * D), *rlse = malloc(sizeof(double) * B * N);
    ck_assert_int_eq(ifa_reference_ifa(&full, ref, rlse, NULL), 0);
    double num = 0, den = 0;
    for (int64_t i = 0; i < B * N * D; ++i) {
        const double got = ifa_host_get(&out, i);
        ck_assert_msg(isfinite(got), "merged element %lld is not finite", (long long)i);
        num += (got - ref[i]) * (got - ref[i]), den += ref[i] * ref[i];
    }
    ck_assert_msg(sqrt(num / den) <= ifa_case_tolerance(out_dt), "rel_l2 %.3g", sqrt(num / den));
    for (int64_t i = 0; i < B * N; ++i) {
        const double got = ifa_host_get(&lse, i);
        if (isinf(rlse[i]))
            ck_assert_msg(got == rlse[i], "lse %lld: %g, want -inf", (long long)i, got);
        else
            ck_assert_msg(fabs(got - rlse[i]) <= 1e-5 * fmax(1.0, fabs(rlse[i])), "lse %lld: %g vs %g", (long long)i, got,
                          rlse[i]);
    }
    for (int64_t i = 2 * N * D; i < 3 * N * D; ++i) ck_assert(ifa_host_get(&out, i) == 0.0); /* batch 2: zeros */
    free(ref), free(rlse);
    cl_mem all[] = {mpo, mpl, mo, ml};
    for (int i = 0; i < 4; ++i) clReleaseMemObject(all[i]);
    ifa_host_tensor_free(&po), ifa_host_tensor_free(&pl), ifa_host_tensor_free(&out), ifa_host_tensor_free(&lse);
    for (int i = 0; i < 2; ++i) ifa_case_result_free(&res[i]), ifa_case_free(&part[i]);
    ifa_case_free(&full);
}
END_TEST

static void tensor(ifa_tensor *t, ifa_dtype dt, int nd, int64_t d0, int64_t d1, int64_t d2) {
    memset(t, 0, sizeof *t);
    t->dtype = dt, t->ndim = nd, t->shape[0] = d0, t->shape[1] = d1, t->shape[2] = d2;
}

static void expect(const ifa_merge_attention_states_args *a, ifa_status want, const char *needle) {
    size_t ws;
    ifa_status st = ifa_merge_attention_states_get_workspace_size(test_ctx(), a, &ws);
    ck_assert_msg(st == want, "got %s (%s), want %s", ifa_status_name(st), ifa_last_error(), ifa_status_name(want));
    if (want != IFA_STATUS_OK)
        ck_assert_msg(strstr(ifa_last_error(), needle), "message \"%s\" lacks \"%s\"", ifa_last_error(), needle);
}

START_TEST(merge_rules) {
    ifa_tensor po, pl, o, l;
    ifa_merge_attention_states_args a = {&po, &pl, &o, &l};
#define RESET()                                                                                                    \
    tensor(&po, IFA_DTYPE_FLOAT16, 3, 4, 6, 64), tensor(&pl, IFA_DTYPE_FLOAT32, 2, 4, 6, 0),                       \
        tensor(&o, IFA_DTYPE_BFLOAT16, 2, 6, 64, 0), tensor(&l, IFA_DTYPE_FLOAT32, 1, 6, 0, 0),                    \
        a.partial_outputs = &po, a.partial_lses = &pl, a.merged_output = &o, a.merged_lse = &l
    RESET();
    expect(&a, IFA_STATUS_OK, NULL);
    a.merged_lse = NULL; /* optional */
    expect(&a, IFA_STATUS_OK, NULL);
    RESET(), a.partial_lses = NULL;
    expect(&a, IFA_STATUS_NULL_ARGUMENT, "partial_lses is NULL");
    RESET(), tensor(&po, IFA_DTYPE_FLOAT16, 1, 4, 0, 0);
    expect(&a, IFA_STATUS_INVALID_RANK, "partial_outputs has rank 1; it must be (P, rows..., D)");
    RESET(), pl.shape[1] = 5;
    expect(&a, IFA_STATUS_SHAPE_MISMATCH, "partial_lses has shape (4, 5); it must be partial_outputs' shape (4, 6, 64)");
    RESET(), pl.ndim = 3, pl.shape[2] = 1;
    expect(&a, IFA_STATUS_INVALID_RANK, "partial_lses has rank 3");
    RESET(), o.shape[1] = 32;
    expect(&a, IFA_STATUS_SHAPE_MISMATCH, "merged_output has shape (6, 32)");
    RESET(), l.shape[0] = 7;
    expect(&a, IFA_STATUS_SHAPE_MISMATCH, "merged_lse has shape (7)");
    RESET(), pl.dtype = IFA_DTYPE_FLOAT16;
    expect(&a, IFA_STATUS_UNSUPPORTED_DTYPE, "partial_lses has dtype float16; it must be float32");
    RESET(), po.dtype = IFA_DTYPE_INT8;
    expect(&a, IFA_STATUS_UNSUPPORTED_DTYPE, "partial_outputs has dtype int8");
    RESET(), l.dtype = IFA_DTYPE_FLOAT16;
    expect(&a, IFA_STATUS_UNSUPPORTED_DTYPE, "merged_lse has dtype float16");
    RESET(), po.shape[0] = pl.shape[0] = 5000;
    expect(&a, IFA_STATUS_UNSUPPORTED_SHAPE, "5000 parts; at most 4096");
    RESET();
    ck_assert_int_eq(ifa_merge_attention_states_run(test_ctx(), &a, test_queue(), 0, NULL, NULL), IFA_STATUS_NULL_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "partial_outputs.buffer is NULL"));
    ck_assert_int_eq(ifa_merge_attention_states_run(test_ctx(), &a, NULL, 0, NULL, NULL), IFA_STATUS_INVALID_QUEUE);
    ck_assert_int_eq(ifa_merge_attention_states_run(test_ctx(), &a, test_queue(), 2, NULL, NULL), IFA_STATUS_NULL_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "event_wait_list is NULL with num_events_in_wait_list = 2"));
    {
        /* the outputs apart from the inputs: merged_output over partial_outputs' bytes in one buffer is refused */
        cl_int err;
        cl_mem one = clCreateBuffer(ifa_context_cl_context(test_ctx()), CL_MEM_READ_WRITE, 8192, NULL, &err);
        ck_assert_ptr_nonnull(one);
        RESET();
        po.buffer = pl.buffer = o.buffer = l.buffer = one;
        pl.offset = 4096, o.offset = 2048, l.offset = 6144;
        ck_assert_int_eq(ifa_merge_attention_states_run(test_ctx(), &a, test_queue(), 0, NULL, NULL),
                         IFA_STATUS_INVALID_ATTRIBUTE);
        ck_assert_msg(strstr(ifa_last_error(), "merged_output (bytes [2048, 2816) of its buffer) overlaps partial_outputs"),
                      "%s", ifa_last_error());
        o.offset = 5120; /* past partial_outputs' 3072 bytes and partial_lses' 96 */
        ck_assert_int_eq(ifa_merge_attention_states_run(test_ctx(), &a, test_queue(), 0, NULL, NULL), IFA_STATUS_OK);
        ck_assert_int_eq(clFinish(test_queue()), CL_SUCCESS);
        clReleaseMemObject(one);
    }
#undef RESET
}
END_TEST

int main(void) {
    Suite *s = suite_create("merge");
    TCase *t = test_tcase_create("merge");
    tcase_set_timeout(t, 300);
    tcase_add_loop_test(t, merge_equals_attention_over_the_union, 0, 2);
    tcase_add_test(t, merge_rules);
    suite_add_tcase(s, t);
    return test_run_suite(s);
}
