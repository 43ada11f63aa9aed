/* The registry as a framework uses it: nothing registered by hand; ops looked up by name, their definitions
 * read (and parsed as JSON), outputs inferred and allocated from the inference, and every op run through the
 * generic call and checked against a float64 reference. Bad generic calls name what is wrong. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/reference.h"
#include "common/runner.h"
#include "ifa/registry.h"
#include "test_util.h"

static cl_mem upload(const ifa_host_tensor *t) {
    cl_int err;
    cl_mem m = clCreateBuffer(ifa_context_cl_context(test_ctx()), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              t->bytes ? t->bytes : 1, t->data, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    return m;
}

static cl_mem device_alloc(const ifa_tensor *t) {
    cl_int err;
    cl_mem m = clCreateBuffer(ifa_context_cl_context(test_ctx()), CL_MEM_READ_WRITE, (size_t)ifa_tensor_bytes(t), NULL,
                              &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    return m;
}

static ifa_named_tensor named(const char *name, const ifa_host_tensor *h, cl_mem buf) {
    ifa_named_tensor n;
    memset(&n, 0, sizeof n);
    n.name = name, n.tensor.buffer = buf, n.tensor.dtype = h->dtype, n.tensor.ndim = h->ndim;
    memcpy(n.tensor.shape, h->shape, sizeof n.tensor.shape);
    return n;
}

static ifa_named_attr int_attr(const char *name, int64_t v) {
    return (ifa_named_attr){.name = name, .type = IFA_ATTR_INT, .i = v};
}

/* Plans and runs def with call, allocating the workspace. */
static ifa_status run_generic(const ifa_op_def *def, const ifa_op_call *call) {
    ifa_plan plan;
    size_t ws_bytes = 0;
    ifa_status st = ifa_op_get_workspace_size(test_ctx(), def, call, &plan, &ws_bytes);
    if (st != IFA_STATUS_OK) return st;
    cl_int err;
    cl_mem ws = clCreateBuffer(ifa_context_cl_context(test_ctx()), CL_MEM_READ_WRITE, ws_bytes ? ws_bytes : 8, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    st = ifa_op_run(test_ctx(), def, call, &plan, ws, 0, test_queue(), 0, NULL, NULL);
    ck_assert_int_eq(clFinish(test_queue()), CL_SUCCESS);
    clReleaseMemObject(ws);
    return st;
}

START_TEST(definitions_and_json) {
    ck_assert_int_eq(ifa_op_count(), 3);
    for (int32_t i = 0; i < ifa_op_count(); ++i) {
        const ifa_op_def *d = ifa_op_at(i), *found = NULL;
        ck_assert_int_eq(ifa_op_find(d->name, &found), IFA_STATUS_OK);
        ck_assert_ptr_eq(found, d);
        char *json = ifa_op_def_json(d);
        ck_assert_ptr_nonnull(json);
        cJSON *root = cJSON_Parse(json);
        ck_assert_ptr_nonnull(root);
        ck_assert_str_eq(cJSON_GetObjectItem(root, "name")->valuestring, d->name);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(root, "inputs")), d->num_inputs);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(root, "outputs")), d->num_outputs);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(root, "attrs")), d->num_attrs);
        const cJSON *in0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "inputs"), 0);
        ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(in0, "required")));
        ck_assert_int_gt(cJSON_GetArraySize(cJSON_GetObjectItem(in0, "dtypes")), 0);
        cJSON_Delete(root);
        ifa_free(json);
    }
    const ifa_op_def *d;
    ck_assert_int_eq(ifa_op_find("FlashAttentionScore", &d), IFA_STATUS_INVALID_ATTRIBUTE);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "no op is named \"FlashAttentionScore\""));
}
END_TEST

/* IncreFlashAttention: outputs inferred (and allocated from the inference), paged KV and RoPE through
 * INT_LIST and STRING attributes, checked against the float64 reference. */
START_TEST(generic_incre_flash_attention) {
    const ifa_op_def *def;
    ck_assert_int_eq(ifa_op_find("IncreFlashAttention", &def), IFA_STATUS_OK);
    ifa_case c;
    ifa_case_init(&c);
    const int64_t qs[4] = {2, 2, 8, 32}, ks[4] = {6, 16, 2, 32}; /* BSND query with S1 = 2; a pool of 6 blocks */
    ck_assert_int_eq(ifa_host_tensor_alloc(&c.query, IFA_DTYPE_FLOAT16, 4, qs), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&c.key, IFA_DTYPE_FLOAT16, 4, ks), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&c.value, IFA_DTYPE_FLOAT16, 4, ks), 0);
    ifa_host_fill_random(&c.query, 91, -1, 1), ifa_host_fill_random(&c.key, 92, -1, 1);
    ifa_host_fill_random(&c.value, 93, -1, 1);
    static const int64_t lens[2] = {40, 17}, table[6] = {4, 0, 2, 5, 1, -1};
    c.lengths = malloc(sizeof lens), c.block_table = malloc(6 * sizeof(int32_t));
    memcpy(c.lengths, lens, sizeof lens), c.lengths_count = 2;
    for (int i = 0; i < 6; ++i) c.block_table[i] = (int32_t)table[i];
    c.block_table_cols = 3, c.block_size = 16, c.num_heads = 8, c.num_key_value_heads = 2, c.scale_value = 0.125;
    strcpy(c.input_layout, "BSND"), strcpy(c.rope_mode, "gptj"), c.softmax_lse_flag = 1;

    cl_mem bq = upload(&c.query), bk = upload(&c.key), bv = upload(&c.value);
    ifa_named_tensor t[5] = {named("query", &c.query, bq), named("key", &c.key, bk), named("value", &c.value, bv)};
    const ifa_named_attr attrs[] = {
        int_attr("num_heads", 8), int_attr("num_key_value_heads", 2),
        {.name = "scale_value", .type = IFA_ATTR_FLOAT, .f = 0.125},
        {.name = "input_layout", .type = IFA_ATTR_STRING, .s = "BSND"},
        {.name = "softmax_lse_flag", .type = IFA_ATTR_BOOL, .i = 1},
        {.name = "actual_seq_lengths", .type = IFA_ATTR_INT_LIST, .list = lens, .list_len = 2},
        {.name = "block_table", .type = IFA_ATTR_INT_LIST, .list = table, .list_len = 6},
        int_attr("block_table_cols", 3), int_attr("block_size", 16),
        {.name = "rope_mode", .type = IFA_ATTR_STRING, .s = "gptj"},
    };
    ifa_op_call call = {t, 3, attrs, (int32_t)(sizeof attrs / sizeof attrs[0])};
    ifa_tensor outs[2];
    ck_assert_msg(ifa_op_infer(def, &call, outs) == IFA_STATUS_OK, "%s", ifa_last_error());
    ck_assert_int_eq(outs[0].dtype, IFA_DTYPE_FLOAT16);
    ck_assert_int_eq(outs[0].ndim, 4);
    ck_assert_int_eq(outs[1].ndim, 3);
    ck_assert_int_eq(outs[1].shape[1], 8);
    ck_assert_int_eq(outs[1].shape[2], 2);
    cl_mem bo = device_alloc(&outs[0]), bl = device_alloc(&outs[1]);
    outs[0].buffer = bo, outs[1].buffer = bl;
    t[3] = (ifa_named_tensor){"attention_out", outs[0]}, t[4] = (ifa_named_tensor){"softmax_lse", outs[1]};
    call.num_tensors = 5;
    ck_assert_msg(run_generic(def, &call) == IFA_STATUS_OK, "%s", ifa_last_error());

    ifa_case_result r;
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(ifa_host_tensor_alloc(&r.out, outs[0].dtype, outs[0].ndim, outs[0].shape), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&r.lse, outs[1].dtype, outs[1].ndim, outs[1].shape), 0);
    clEnqueueReadBuffer(test_queue(), bo, CL_TRUE, 0, r.out.bytes, r.out.data, 0, NULL, NULL);
    clEnqueueReadBuffer(test_queue(), bl, CL_TRUE, 0, r.lse.bytes, r.lse.data, 0, NULL, NULL);
    ifa_case_check chk;
    ck_assert_int_eq(ifa_case_check_result(&c, &r, &chk), 0);
    ck_assert_msg(chk.pass, "rel_l2 %.3g, lse_bad %lld", chk.rel_l2, (long long)chk.lse_bad);
    ifa_case_result_free(&r), ifa_case_free(&c);
    cl_mem all[] = {bq, bk, bv, bo, bl};
    for (size_t i = 0; i < 5; ++i) clReleaseMemObject(all[i]);
}
END_TEST

/* MergeAttentionStates: two parts merged by their LSE against a float64 merge in the test. */
START_TEST(generic_merge) {
    const ifa_op_def *def;
    ck_assert_int_eq(ifa_op_find("MergeAttentionStates", &def), IFA_STATUS_OK);
    const int64_t ps[3] = {2, 6, 16}, ls[2] = {2, 6};
    ifa_host_tensor po, pl;
    ck_assert_int_eq(ifa_host_tensor_alloc(&po, IFA_DTYPE_FLOAT32, 3, ps), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&pl, IFA_DTYPE_FLOAT32, 2, ls), 0);
    ifa_host_fill_random(&po, 94, -1, 1), ifa_host_fill_random(&pl, 95, -3, 3);
    cl_mem bpo = upload(&po), bpl = upload(&pl);
    ifa_named_tensor t[4] = {named("partial_outputs", &po, bpo), named("partial_lses", &pl, bpl)};
    const ifa_named_attr attrs[] = {{.name = "merged_lse_flag", .type = IFA_ATTR_BOOL, .i = 1}};
    ifa_op_call call = {t, 2, attrs, 1};
    ifa_tensor outs[2];
    ck_assert_int_eq(ifa_op_infer(def, &call, outs), IFA_STATUS_OK);
    ck_assert_int_eq(outs[0].ndim, 2);
    ck_assert_int_eq(outs[0].shape[0], 6);
    ck_assert_int_eq(outs[0].shape[1], 16);
    ck_assert_int_eq(outs[1].ndim, 1);
    ck_assert_int_eq(outs[1].shape[0], 6);
    cl_mem bo = device_alloc(&outs[0]), bl = device_alloc(&outs[1]);
    outs[0].buffer = bo, outs[1].buffer = bl;
    t[2] = (ifa_named_tensor){"merged_output", outs[0]}, t[3] = (ifa_named_tensor){"merged_lse", outs[1]};
    call.num_tensors = 4;
    ck_assert_msg(run_generic(def, &call) == IFA_STATUS_OK, "%s", ifa_last_error());
    float out[6 * 16], lse[6];
    clEnqueueReadBuffer(test_queue(), bo, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
    clEnqueueReadBuffer(test_queue(), bl, CL_TRUE, 0, sizeof lse, lse, 0, NULL, NULL);
    for (int r = 0; r < 6; ++r) {
        const double l0 = ifa_host_get(&pl, r), l1 = ifa_host_get(&pl, 6 + r), m = fmax(l0, l1);
        const double want_lse = m + log(exp(l0 - m) + exp(l1 - m));
        ck_assert_msg(fabs(lse[r] - want_lse) < 1e-5, "row %d lse %g want %g", r, lse[r], want_lse);
        for (int d = 0; d < 16; ++d) {
            const double want = exp(l0 - want_lse) * ifa_host_get(&po, r * 16 + d) +
                                exp(l1 - want_lse) * ifa_host_get(&po, 96 + r * 16 + d);
            ck_assert_msg(fabs(out[r * 16 + d] - want) < 1e-5, "row %d d %d: %g want %g", r, d, out[r * 16 + d], want);
        }
    }
    ifa_host_tensor_free(&po), ifa_host_tensor_free(&pl);
    cl_mem all[] = {bpo, bpl, bo, bl};
    for (size_t i = 0; i < 4; ++i) clReleaseMemObject(all[i]);
}
END_TEST

/* KVCacheAppend: in place (no outputs to infer); two rows per batch land at the lengths given. */
START_TEST(generic_append) {
    const ifa_op_def *def;
    ck_assert_int_eq(ifa_op_find("KVCacheAppend", &def), IFA_STATUS_OK);
    ck_assert_int_eq(def->num_outputs, 0);
    const int64_t ns[3] = {2, 2, 64}, cs[3] = {2, 10, 64};
    ifa_host_tensor kn, kc;
    ck_assert_int_eq(ifa_host_tensor_alloc(&kn, IFA_DTYPE_FLOAT32, 3, ns), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&kc, IFA_DTYPE_FLOAT32, 3, cs), 0);
    ifa_host_fill_random(&kn, 96, -1, 1);
    cl_mem bn = upload(&kn), bkc = upload(&kc), bvc = upload(&kc);
    const ifa_named_tensor t[4] = {named("key", &kn, bn), named("value", &kn, bn), named("key_cache", &kc, bkc),
                                   named("value_cache", &kc, bvc)};
    static const int64_t lens[2] = {3, 8};
    const ifa_named_attr attrs[] = {
        {.name = "cache_seq_lengths", .type = IFA_ATTR_INT_LIST, .list = lens, .list_len = 2},
        int_attr("num_key_value_heads", 2)};
    const ifa_op_call call = {t, 4, attrs, 2};
    ck_assert_int_eq(ifa_op_infer(def, &call, NULL), IFA_STATUS_OK);
    ck_assert_msg(run_generic(def, &call) == IFA_STATUS_OK, "%s", ifa_last_error());
    clEnqueueReadBuffer(test_queue(), bkc, CL_TRUE, 0, kc.bytes, kc.data, 0, NULL, NULL);
    for (int64_t b = 0; b < 2; ++b)
        for (int64_t p = 0; p < 10; ++p)
            for (int64_t e = 0; e < 64; ++e) {
                const int64_t i = p - lens[b];
                const double want = i >= 0 && i < 2 ? ifa_host_get(&kn, (b * 2 + i) * 64 + e) : 0.0;
                ck_assert_msg(ifa_host_get(&kc, (b * 10 + p) * 64 + e) == want, "b %lld p %lld e %lld", (long long)b,
                              (long long)p, (long long)e);
            }
    ifa_host_tensor_free(&kn), ifa_host_tensor_free(&kc);
    clReleaseMemObject(bn), clReleaseMemObject(bkc), clReleaseMemObject(bvc);
}
END_TEST

static void expect_call(const ifa_op_def *def, const ifa_op_call *call, ifa_status want, const char *needle) {
    ifa_plan plan;
    size_t ws;
    const ifa_status st = ifa_op_get_workspace_size(test_ctx(), def, call, &plan, &ws);
    ck_assert_msg(st == want, "got %s (%s), want %s", ifa_status_name(st), ifa_last_error(), ifa_status_name(want));
    ck_assert_msg(strstr(ifa_last_error(), needle), "message \"%s\" lacks \"%s\"", ifa_last_error(), needle);
}

START_TEST(generic_call_rules) {
    const ifa_op_def *def;
    ck_assert_int_eq(ifa_op_find("IncreFlashAttention", &def), IFA_STATUS_OK);
    ifa_host_tensor q;
    const int64_t qs[3] = {1, 1, 64};
    ck_assert_int_eq(ifa_host_tensor_alloc(&q, IFA_DTYPE_FLOAT16, 3, qs), 0);
    ifa_named_tensor t[2] = {named("query", &q, NULL), named("querry", &q, NULL)};
    ifa_named_attr a[2] = {int_attr("num_heads", 4), int_attr("num_heads", 4)};
    ifa_op_call call = {t, 2, a, 1};
    expect_call(def, &call, IFA_STATUS_INVALID_ATTRIBUTE, "IncreFlashAttention has no input or output named \"querry\"");
    t[1].name = "query";
    expect_call(def, &call, IFA_STATUS_INVALID_ATTRIBUTE, "tensor \"query\" is named twice");
    call.num_tensors = 1, call.num_attrs = 2;
    expect_call(def, &call, IFA_STATUS_INVALID_ATTRIBUTE, "attribute num_heads is given twice");
    a[1] = (ifa_named_attr){.name = "scale_value", .type = IFA_ATTR_INT, .i = 1};
    expect_call(def, &call, IFA_STATUS_INVALID_ATTRIBUTE, "attribute scale_value is given as type 0; IncreFlashAttention "
                                                          "takes type 1 (float)");
    a[1] = (ifa_named_attr){.name = "softcapp", .type = IFA_ATTR_FLOAT, .f = 1};
    expect_call(def, &call, IFA_STATUS_INVALID_ATTRIBUTE, "IncreFlashAttention has no attribute named \"softcapp\"");
    a[1] = (ifa_named_attr){.name = "softmax_lse_flag", .type = IFA_ATTR_BOOL, .i = 1};
    expect_call(def, &call, IFA_STATUS_INVALID_ATTRIBUTE, "softmax_lse_flag is true but no softmax_lse tensor");
    call.num_attrs = 0;
    expect_call(def, &call, IFA_STATUS_NULL_ARGUMENT, "IncreFlashAttention needs the attribute num_heads");
    call.num_attrs = 1; /* the typed op's own checks come next: key is missing */
    expect_call(def, &call, IFA_STATUS_NULL_ARGUMENT, "key");
    ifa_op_def fake = *def;
    expect_call(&fake, &call, IFA_STATUS_INVALID_ATTRIBUTE, "def is not one of the registry's");
    /* prepare binds and validates alike: the same status and message as planning */
    int64_t sets = -1;
    ck_assert_int_eq(ifa_op_prepare(test_ctx(), def, &call, NULL, &sets), IFA_STATUS_NULL_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "key"));
    ck_assert_int_eq(sets, 0);
    ck_assert_int_eq(ifa_op_prepare(test_ctx(), &fake, &call, NULL, NULL), IFA_STATUS_INVALID_ATTRIBUTE);
    ifa_host_tensor_free(&q);
}
END_TEST

int main(void) {
    Suite *s = suite_create("registry");
    TCase *t = test_tcase_create("registry");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, definitions_and_json);
    tcase_add_test(t, generic_incre_flash_attention);
    tcase_add_test(t, generic_merge);
    tcase_add_test(t, generic_append);
    tcase_add_test(t, generic_call_rules);
    suite_add_tcase(s, t);
    return test_run_suite(s);
}
