#define _POSIX_C_SOURCE 200809L
/* The kernel shape as a declared choice (tiling/kernel_shape.c): the plan's shape field, the tiling key's shape
 * digit, the ordered candidates and their reasons, and the plan check's hold on the field. Without a device. */
#include <stdio.h>
#include <string.h>

#include "test_util.h"
#include "tiling/planner.h"
#include "tiling/tiling_key.h"

static const ifa_device_facts h100 = {IFA_VENDOR_NVIDIA, 132, 1024, 0, 48 * 1024, 90};
static const ifa_device_facts pocl = {IFA_VENDOR_CPU, 2, 4096, 0, 2 * 1024 * 1024, 0};
static const ifa_device_facts gpu = {IFA_VENDOR_GENERIC_GPU, 64, 1024, 0, 48 * 1024, 0};

/* One planned case: B, N, N_kv, D, S, D_v (0: D), the K/V type, the device, tuning entries added for it; the shape
 * the plan must take, and one candidate (passed over or not) with a piece of its reason. */
typedef struct shape_case {
    int64_t b, n, nkv, d, s, dv;
    int32_t kv_dtype;
    const ifa_device_facts *dev;
    const char *tuning;
    int32_t shape;
    int32_t about;     /* the candidate whose reason is checked */
    const char *because;
} shape_case;

static const shape_case cases[] = {
    /* the CPU rows: vector_width 16, the first candidate; every other refused by it */
    {1, 32, 8, 128, 8192, 0, IFA_DTYPE_FLOAT16, &pocl, "", IFA_SHAPE_VECTOR, IFA_SHAPE_LANES, "vector shape"},
    /* the CPU row at vector_width 1 (a GPU shape run on PoCL): the work-group shape */
    {1, 32, 8, 128, 8192, 0, IFA_DTYPE_FLOAT16, &pocl, "vector_width=1", IFA_SHAPE_WORK_GROUP, IFA_SHAPE_VECTOR,
     "vector_width is 1"},
    /* NVIDIA: the transposed matrix shape at G = 4, D = 128 (mma 5); the other matrix shape defers to it */
    {1, 32, 8, 128, 8192, 0, IFA_DTYPE_FLOAT16, &h100, "", IFA_SHAPE_MATRIX_T, IFA_SHAPE_MATRIX, "transposed"},
    /* G = 16 at D = 64: more rows than the transposed shape's 8, so the matrix shape */
    {1, 32, 2, 64, 8192, 0, IFA_DTYPE_FLOAT16, &h100, "", IFA_SHAPE_MATRIX, IFA_SHAPE_MATRIX_T, "8 query rows"},
    /* fp32 K/V: no matrix shape, the lane shape */
    {1, 32, 8, 128, 8192, 0, IFA_DTYPE_FLOAT32, &h100, "", IFA_SHAPE_LANES, IFA_SHAPE_MATRIX_T, "fp32"},
    /* int4 K/V while the row's mma_int4 is 0 */
    {1, 32, 8, 128, 8192, 0, IFA_DTYPE_INT4, &h100, "", IFA_SHAPE_LANES, IFA_SHAPE_MATRIX, "mma_int4 is 0"},
    /* D = 96: no matrix shape (not a multiple of 64; the other matrix shape at G = 4 takes multiples of 32) */
    {1, 32, 8, 96, 8192, 0, IFA_DTYPE_FLOAT8_E4M3, &h100, "", IFA_SHAPE_LANES, IFA_SHAPE_MATRIX, "multiple of 64"},
    /* DeepSeek's MLA: the latent tile where the row asks for it, else the lane shape */
    {1, 16, 1, 576, 4096, 512, IFA_DTYPE_FLOAT16, &h100, "mma_mla=1", IFA_SHAPE_LATENT_TILE, IFA_SHAPE_MATRIX_T,
     "D_v must equal D"},
    {1, 16, 1, 576, 4096, 512, IFA_DTYPE_FLOAT16, &h100, "", IFA_SHAPE_LANES, IFA_SHAPE_LATENT_TILE, "mma_mla"},
    /* the generic GPU row: the work-group shape; with vector_loads 8-element loads, with key_tile the key tile */
    {1, 32, 8, 128, 8192, 0, IFA_DTYPE_FLOAT16, &gpu, "", IFA_SHAPE_WORK_GROUP, IFA_SHAPE_LANES, "lanes is 0"},
    {1, 32, 8, 128, 8192, 0, IFA_DTYPE_FLOAT16, &gpu, "vector_loads=8", IFA_SHAPE_WIDE_LOADS, IFA_SHAPE_KEY_TILE,
     "key_tile is 0"},
    {1, 32, 8, 128, 8192, 0, IFA_DTYPE_FLOAT16, &gpu, "vector_loads=8,key_tile=1", IFA_SHAPE_KEY_TILE,
     IFA_SHAPE_WIDE_LOADS, "8 elements a load"},
    /* int4 K/V under vector_loads: neither 8-element shape reads int4 */
    {1, 32, 8, 128, 8192, 0, IFA_DTYPE_INT4, &gpu, "vector_loads=8,key_tile=1", IFA_SHAPE_WORK_GROUP,
     IFA_SHAPE_WIDE_LOADS, "no int4"},
};

static ifa_problem problem_of(const shape_case *c) {
    ifa_problem p;
    memset(&p, 0, sizeof p);
    p.batch = c->b, p.num_heads = c->n, p.num_kv_heads = c->nkv, p.head_dim = c->d, p.seq_q = 1, p.seq_kv = c->s;
    p.value_dim = c->dv;
    p.layout = IFA_LAYOUT_BNSD, p.q_dtype = p.out_dtype = IFA_DTYPE_FLOAT16, p.kv_dtype = c->kv_dtype;
    p.lengths_mode = IFA_LENGTHS_FULL, p.uniform_length = p.max_length = c->s, p.total_length = c->s * c->b;
    if (c->kv_dtype == IFA_DTYPE_INT8 || c->kv_dtype == IFA_DTYPE_INT4) p.antiquant = IFA_ANTIQUANT_PER_CHANNEL;
    return p;
}

/* Case _i: the plan takes the case's shape, names it in its key, passes the plan check; the candidates come in the
 * declared order, the chosen one is the first that applies and is the plan's, and the case's candidate says why. */
START_TEST(shape_table) {
    const shape_case *c = &cases[_i];
    const ifa_problem p = problem_of(c);
    ifa_plan plan;
    ifa_shape_candidate cand[IFA_SHAPE_CANDIDATES];
    test_tuning_push(c->tuning);
    const ifa_status st = ifa__plan_make(&p, c->dev, &plan);
    if (st == IFA_STATUS_OK) ifa__plan_shape_candidates(&plan, c->dev, cand);
    test_tuning_pop();
    ck_assert_msg(st == IFA_STATUS_OK, "case %d: %s", _i, ifa_last_error());
    ck_assert_msg(plan.shape == c->shape, "case %d: shape %s, expected %s", _i, ifa__shape_name(plan.shape),
                  ifa__shape_name(c->shape));
    ck_assert_int_eq(ifa__shape_of(&plan), plan.shape);
    ck_assert_int_eq((int32_t)(plan.tiling_key / 10000000000000ull % 10), plan.shape);
    ck_assert_int_eq(ifa__plan_check(&plan), IFA_STATUS_OK);
    int chosen = -1, about = -1;
    for (int i = 0; i < IFA_SHAPE_CANDIDATES; ++i) {
        ck_assert_int_ne(cand[i].shape, IFA_SHAPE_NONE);
        ck_assert_msg(cand[i].reason[0] != '\0', "case %d: candidate %s gives no reason", _i,
                      ifa__shape_name(cand[i].shape));
        if (cand[i].chosen) {
            ck_assert_int_eq(chosen, -1);
            chosen = i;
            ck_assert(cand[i].applicable);
        } else if (chosen < 0) {
            ck_assert_msg(!cand[i].applicable, "case %d: %s applies before the chosen one", _i,
                          ifa__shape_name(cand[i].shape));
        }
        if (cand[i].shape == c->about) about = i;
    }
    ck_assert_int_ge(chosen, 0);
    ck_assert_int_eq(cand[chosen].shape, plan.shape);
    ck_assert_int_ge(about, 0);
    ck_assert_msg(strstr(cand[about].reason, c->because), "case %d: %s says \"%s\", expected \"%s\"", _i,
                  ifa__shape_name(c->about), cand[about].reason, c->because);
}
END_TEST

/* The declared order: the vector shape first, the work-group shape (which runs every problem) last. */
START_TEST(candidate_order) {
    const shape_case *c = &cases[0];
    const ifa_problem p = problem_of(c);
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ifa_shape_candidate cand[IFA_SHAPE_CANDIDATES];
    ifa__plan_shape_candidates(&plan, &h100, cand);
    static const int32_t order[IFA_SHAPE_CANDIDATES] = {
        IFA_SHAPE_VECTOR, IFA_SHAPE_LATENT_TILE, IFA_SHAPE_MATRIX_T, IFA_SHAPE_MATRIX,
        IFA_SHAPE_LANES,  IFA_SHAPE_KEY_TILE,    IFA_SHAPE_WIDE_LOADS, IFA_SHAPE_WORK_GROUP};
    for (int i = 0; i < IFA_SHAPE_CANDIDATES; ++i) ck_assert_int_eq(cand[i].shape, order[i]);
    ck_assert(cand[IFA_SHAPE_CANDIDATES - 1].applicable);
    /* every shape has a name, and the key's table holds the same names */
    for (int32_t s = 0; s < IFA_SHAPE_COUNT_; ++s) {
        ck_assert_str_ne(ifa__shape_name(s), "?");
        ck_assert_str_eq(ifa__shape_name(s), ifa__key_fields()[IFA_KEY_SHAPE].names[s]);
    }
    ck_assert_str_eq(ifa__shape_name(IFA_SHAPE_COUNT_), "?");
}
END_TEST

/* A handed-back plan whose shape field disagrees with its fields is refused, naming the shape they describe; a cv
 * plan's shape is none and its candidates all refused. */
START_TEST(plan_check_holds_the_shape) {
    const shape_case *c = &cases[2];
    const ifa_problem p = problem_of(c);
    ifa_plan plan;
    ck_assert_int_eq(ifa__plan_make(&p, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.shape, IFA_SHAPE_MATRIX_T);
    ifa_plan bad = plan;
    bad.shape = IFA_SHAPE_LANES;
    ck_assert_int_eq(ifa__plan_check(&bad), IFA_STATUS_INVALID_PLAN);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "plan shape 5 is not the matrix_t shape its fields describe"));
    bad = plan, bad.mma = 0; /* now the work-group shape's fields, under the old shape and key */
    ck_assert_int_eq(ifa__plan_check(&bad), IFA_STATUS_INVALID_PLAN);
    ifa_problem q = p;
    q.template_request = IFA_TEMPLATE_CV;
    ck_assert_int_eq(ifa__plan_make(&q, &h100, &plan), IFA_STATUS_OK);
    ck_assert_int_eq(plan.shape, IFA_SHAPE_NONE);
    ifa_shape_candidate cand[IFA_SHAPE_CANDIDATES];
    ifa__plan_shape_candidates(&plan, &h100, cand);
    for (int i = 0; i < IFA_SHAPE_CANDIDATES; ++i) ck_assert(!cand[i].applicable && !cand[i].chosen);
}
END_TEST

int main(void) {
    Suite *s = suite_create("kernel_shape");
    TCase *t = test_tcase_create("shape");
    tcase_add_loop_test(t, shape_table, 0, (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(t, candidate_order);
    tcase_add_test(t, plan_check_holds_the_shape);
    suite_add_tcase(s, t);
    return test_run_suite(s);
}
