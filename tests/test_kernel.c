#define _POSIX_C_SOURCE 200809L /* setenv */
/* Kernel correctness: every result is compared with the float64 reference on fresh random inputs, with
 * outputs poisoned (NaN) before the run, at tolerances set by the output's storage precision. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <unistd.h>

#include "common/runner.h"
#include "op_host/runtime/buffer.h"
#include "op_host/runtime/context.h"
#include "templates/blas.h"
#include "test_util.h"
#include "tiling/planner.h"
#include "tiling/tuning_table.h"

typedef struct spec {
    const char *layout;
    ifa_dtype q, kv;
    int64_t b, n, nkv, d, s;
    const int64_t *lens;
    int64_t nlens;
    int lse;
    uint64_t seed;
} spec;

static void shape_q(const spec *p, int32_t *nd, int64_t *sh) {
    if (strcmp(p->layout, "BSH") == 0) *nd = 3, sh[0] = p->b, sh[1] = 1, sh[2] = p->n * p->d;
    else if (strcmp(p->layout, "BSND") == 0) *nd = 4, sh[0] = p->b, sh[1] = 1, sh[2] = p->n, sh[3] = p->d;
    else *nd = 4, sh[0] = p->b, sh[1] = p->n, sh[2] = 1, sh[3] = p->d;
}

static void shape_kv(const spec *p, int32_t *nd, int64_t *sh) {
    if (strcmp(p->layout, "BSH") == 0) *nd = 3, sh[0] = p->b, sh[1] = p->s, sh[2] = p->nkv * p->d;
    else if (strcmp(p->layout, "BSND") == 0) *nd = 4, sh[0] = p->b, sh[1] = p->s, sh[2] = p->nkv, sh[3] = p->d;
    else *nd = 4, sh[0] = p->b, sh[1] = p->nkv, sh[2] = p->s, sh[3] = p->d;
}

/* Fills c from p with fresh random inputs (seeded from p->seed, so a failure reproduces). Returns 0, or -1
 * when memory runs out (callable from worker threads, where Check's assertions must not run). */
static int build_case(const spec *p, uint64_t seed, ifa_case *c) {
    ifa_case_init(c);
    int32_t nd;
    int64_t sh[IFA_MAX_DIMS];
    shape_q(p, &nd, sh);
    if (ifa_host_tensor_alloc(&c->query, p->q, nd, sh) != 0) return -1;
    shape_kv(p, &nd, sh);
    if (ifa_host_tensor_alloc(&c->key, p->kv, nd, sh) != 0 || ifa_host_tensor_alloc(&c->value, p->kv, nd, sh) != 0)
        return -1;
    ifa_host_fill_random(&c->query, seed * 3 + 1, -1, 1);
    ifa_host_fill_random(&c->key, seed * 3 + 2, -1, 1);
    ifa_host_fill_random(&c->value, seed * 3 + 3, -1, 1);
    if (p->nlens) {
        if (!(c->lengths = malloc((size_t)p->nlens * sizeof *c->lengths))) return -1;
        memcpy(c->lengths, p->lens, (size_t)p->nlens * sizeof *c->lengths);
        c->lengths_count = p->nlens;
    }
    c->num_heads = p->n;
    c->num_key_value_heads = p->nkv;
    c->scale_value = 1.0 / sqrt((double)p->d);
    strcpy(c->input_layout, p->layout);
    c->softmax_lse_flag = p->lse;
    return 0;
}

/* Builds the case, runs it and checks it against the reference; adjust (optional) replaces the plan. */
static void check_spec_with(const spec *p, int (*adjust)(ifa_plan *, void *), void *user) {
    ifa_case c;
    ck_assert_int_eq(build_case(p, p->seed, &c), 0);

    ifa_case_result r;
    ifa_status st = ifa_case_run(test_ctx(), test_queue(), &c, adjust, user, &r);
    ck_assert_msg(st == IFA_STATUS_OK, "run failed: %s (%s)", ifa_status_name(st),
                  st == IFA_STATUS_INTERNAL && adjust ? "the adjusted plan was refused" : ifa_last_error());
    ifa_case_check k;
    ck_assert_int_eq(ifa_case_check_result(&c, &r, &k), 0);
    ck_assert_msg(k.pass,
                  "%s q=%s kv=%s B=%lld N=%lld N_kv=%lld D=%lld S=%lld: rel_l2=%.3g (tol %.0e) max_abs=%.3g "
                  "nonfinite=%lld lse_bad=%lld round_bias=%.3f ulp",
                  p->layout, ifa_dtype_name(p->q), ifa_dtype_name(p->kv), (long long)p->b, (long long)p->n,
                  (long long)p->nkv, (long long)p->d, (long long)p->s, k.rel_l2, k.tolerance, k.max_abs,
                  (long long)k.nonfinite, (long long)k.lse_bad, k.round_bias);
    ifa_case_result_free(&r);
    ifa_case_free(&c);
}

static void check_spec(const spec *p) { check_spec_with(p, NULL, NULL); }

/* Replans plan's problem for facts with the all_vector template (cv_min_rows 0: the head groups and split
 * algorithms the hooks below ask for are all_vector's, and a GPU row gives many query heads per KV head to cv)
 * and tuning (NULL: none) on top of IFA_TUNING. */
static ifa_status replan_all_vector(ifa_plan *plan, const ifa_device_facts *facts, const char *tuning) {
    test_tuning_push("cv_min_rows=0");
    if (tuning) test_tuning_push(tuning);
    ifa_problem p = plan->problem;
    const ifa_status st = ifa__plan_make(&p, facts, plan);
    if (tuning) test_tuning_pop();
    test_tuning_pop();
    return st;
}

/* Replans for a device with little local memory, so the query heads of a KV head are split into groups;
 * a plan that does not split them fails the run. */
static int small_local_memory(ifa_plan *plan, void *user) {
    return replan_all_vector(plan, user, NULL) == IFA_STATUS_OK && plan->head_groups > 1 ? 0 : -1;
}

/* Replans as if the device had many compute units and splits could be short, so PoCL runs split-KV (with the
 * device's own native float width: the register file's shape this machine's engines get); a GPU keeps its own
 * facts (its vendor's plan shape) with the given compute units. */
typedef struct split_force {
    int32_t compute_units;
    const char *tuning;
    int32_t want_split;
    int32_t want_fused; /* 1: the plan must have the last split combine (fused_combine), 2: must not, 0: either */
} split_force;

static int force_split(ifa_plan *plan, void *user) {
    const split_force *f = user;
    ifa_device_facts facts = {IFA_VENDOR_CPU, f->compute_units, 4096, test_ctx()->facts.native_float_width,
                              2 * 1024 * 1024, 0};
    if (!ifa__vendor_is_cpu(test_ctx()->facts.vendor)) {
        facts = test_ctx()->facts;
        facts.compute_units = f->compute_units;
    }
    return replan_all_vector(plan, &facts, f->tuning) == IFA_STATUS_OK && plan->split_kv == f->want_split &&
                   (f->want_fused == 0 || plan->fused_combine == (f->want_fused == 1))
               ? 0
               : -1;
}

static const char *const layouts[] = {"BSH", "BSND", "BNSD"};
static const ifa_dtype dtype_pairs[][2] = {
    {IFA_DTYPE_FLOAT32, IFA_DTYPE_FLOAT32},  {IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT16},
    {IFA_DTYPE_BFLOAT16, IFA_DTYPE_BFLOAT16}, {IFA_DTYPE_FLOAT32, IFA_DTYPE_FLOAT16},
    {IFA_DTYPE_FLOAT16, IFA_DTYPE_BFLOAT16}, {IFA_DTYPE_BFLOAT16, IFA_DTYPE_FLOAT32},
};
#define NPAIRS ((int)(sizeof dtype_pairs / sizeof dtype_pairs[0]))

START_TEST(layout_by_dtype) {
    static const int64_t lens[] = {300, 123, 0};
    spec p = {layouts[_i / NPAIRS], dtype_pairs[_i % NPAIRS][0], dtype_pairs[_i % NPAIRS][1], 3, 8, 2, 64, 300,
              lens, 3, 1, (uint64_t)_i + 10};
    check_spec(&p);
}
END_TEST

START_TEST(gqa_ratios) {
    /* G = 1, 4, 8, a non-power-of-two (28/4 = 7) and MQA (16/1) */
    static const int64_t heads[][2] = {{8, 8}, {16, 4}, {32, 4}, {28, 4}, {16, 1}};
    static const int64_t lens[] = {200, 77};
    spec p = {layouts[_i % 3], IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT16, 2, heads[_i][0], heads[_i][1], 64, 200,
              lens, 2, 1, (uint64_t)_i + 100};
    check_spec(&p);
}
END_TEST

START_TEST(head_dims) {
    static const int64_t dims[] = {1, 64, 80, 128, 256, 512, 3, 100};
    static const int64_t lens[] = {130, 33};
    spec p = {layouts[_i % 3], IFA_DTYPE_FLOAT32, IFA_DTYPE_FLOAT32, 2, 8, 2, dims[_i], 130, lens, 2, 1,
              (uint64_t)_i + 200};
    check_spec(&p);
}
END_TEST

START_TEST(long_and_short_sequences) {
    static const int64_t seqs[] = {1, 2, 255, 256, 257, 4096, 5000};
    spec p = {layouts[_i % 3], IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT16, 1, 8, 2, 128, seqs[_i], NULL, 0, 1,
              (uint64_t)_i + 300};
    check_spec(&p);
}
END_TEST

START_TEST(fp32_long_sequence) {
    spec p = {"BNSD", IFA_DTYPE_FLOAT32, IFA_DTYPE_FLOAT32, 2, 4, 1, 128, 4500, NULL, 0, 1, 400};
    check_spec(&p);
}
END_TEST

START_TEST(uneven_lengths) {
    static const int64_t lens[] = {0, 1, 4096, 17, 0, 511};
    spec p = {layouts[_i], IFA_DTYPE_BFLOAT16, IFA_DTYPE_BFLOAT16, 6, 4, 2, 64, 4096, lens, 6, 1, (uint64_t)_i + 500};
    check_spec(&p);
}
END_TEST

START_TEST(all_lengths_zero_give_zeros) {
    static const int64_t zero[] = {0};
    spec p = {"BSND", IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT16, 3, 4, 4, 32, 50, zero, 1, 1, 600};
    check_spec(&p);
}
END_TEST

START_TEST(largest_batch_and_group) {
    if (_i == 0) {
        spec p = {"BSH", IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT16, 65536, 2, 1, 4, 3, NULL, 0, 1, 1100}; /* B = 65536 */
        check_spec(&p);
    } else {
        static const int64_t lens[] = {100, 1};
        spec p = {"BNSD", IFA_DTYPE_BFLOAT16, IFA_DTYPE_BFLOAT16, 2, 64, 1, 64, 100, lens, 2, 1, 1101}; /* G = 64 */
        check_spec(&p);
    }
}
END_TEST

START_TEST(many_kv_heads) {
    spec p = {"BSND", IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT16, 2, 256, 256, 16, 20, NULL, 0, 1, 1200}; /* N_kv = 256 */
    check_spec(&p);
}
END_TEST

START_TEST(uniform_length_and_no_lse) {
    static const int64_t one[] = {99};
    spec p = {"BSH", IFA_DTYPE_FLOAT32, IFA_DTYPE_FLOAT16, 4, 6, 3, 48, 160, one, 1, 0, 700};
    check_spec(&p);
}
END_TEST

START_TEST(head_groups_when_local_memory_is_small) {
    /* G = 12, D = 128 in 8 KiB: the planner splits the 12 heads into even groups */
    ifa_device_facts facts = {IFA_VENDOR_GENERIC_GPU, 4, 64, 0, 8 * 1024, 0};
    static const int64_t lens[] = {90, 200};
    spec p = {layouts[_i], IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT16, 2, 24, 2, 128, 200, lens, 2, 1, (uint64_t)_i + 800};
    check_spec_with(&p, small_local_memory, &facts); /* fails unless the plan really splits the heads */
}
END_TEST

static cl_mem upload(const ifa_host_tensor *h) {
    cl_int err;
    cl_mem m = clCreateBuffer(ifa_context_cl_context(test_ctx()), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, h->bytes,
                              h->data, &err);
    ck_assert_ptr_nonnull(m);
    return m;
}

/* The program cache finds a variant by its sources, kernel name and define values, comparing names by text
 * when their addresses differ; any other value, name or kernel is another variant. */
/* Whether environment variable name is set to something other than "" or "0": the library's reading of its
 * build variables (op_host/runtime/program_cache.c). */
static int env_on(const char *name) {
    const char *env = getenv(name);
    return env && *env && strcmp(env, "0") != 0;
}

START_TEST(program_cache_keys) {
    static const char *const sources[] = {"ifa_formulas.h", "ifa_common.cl", "ifa_merge.cl"};
    static const char *const same_sources[] = {"ifa_formulas.h", "ifa_common.cl", "ifa_merge.cl"};
    char wg_name[] = "WG"; /* the same text at another address */
    const ifa__define defs[] = {{"P_T", IFA_DTYPE_FLOAT32}, {"O_T", IFA_DTYPE_FLOAT32}, {"WG", 8}, {"HAS_LSE", 1}};
    const ifa__define same[] = {{"P_T", IFA_DTYPE_FLOAT32}, {"O_T", IFA_DTYPE_FLOAT32}, {wg_name, 8}, {"HAS_LSE", 1}};
    const ifa__define other_value[] = {{"P_T", IFA_DTYPE_FLOAT32}, {"O_T", IFA_DTYPE_FLOAT32}, {"WG", 4}, {"HAS_LSE", 1}};
    const ifa__define other_name[] = {{"P_T", IFA_DTYPE_FLOAT32}, {"O_T", IFA_DTYPE_FLOAT32}, {"WG", 8}, {"XB", 1}};
    ifa_context *ctx = test_ctx();
    ifa__cached_kernel *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL;
    ck_assert_int_eq(ifa__get_kernel(ctx, sources, 3, defs, 4, "ifa_merge", &a), IFA_STATUS_OK);
    const int64_t built = ifa_context_programs_built(ctx);
    ck_assert_int_eq(ifa__get_kernel(ctx, same_sources, 3, same, 4, "ifa_merge", &b), IFA_STATUS_OK);
    ck_assert_ptr_eq(a, b);
    ck_assert_int_eq(ifa_context_programs_built(ctx), built);
    ck_assert_int_eq(ifa__get_kernel(ctx, sources, 3, other_value, 4, "ifa_merge", &c), IFA_STATUS_OK);
    ck_assert_ptr_ne(a, c);
    ck_assert_int_eq(ifa__get_kernel(ctx, sources, 3, other_name, 4, "ifa_merge", &d), IFA_STATUS_OK); /* HAS_LSE unset */
    ck_assert_ptr_ne(a, d);
    ck_assert_ptr_ne(c, d);
    ck_assert_int_eq(ifa__get_kernel(ctx, sources, 3, defs, 3, "ifa_merge", &e), IFA_STATUS_OK); /* fewer defines */
    ck_assert_ptr_ne(d, e);
    ck_assert_ptr_ne(a, e);
    ck_assert_int_eq(ifa_context_programs_built(ctx), built + 3);
    /* failures cache nothing: a dtype code the sources do not know (the options in the message), a kernel
     * the program does not hold */
    const ifa__define bad[] = {{"P_T", 99}, {"O_T", IFA_DTYPE_FLOAT32}, {"WG", 8}, {"HAS_LSE", 1}};
    ck_assert_int_eq(ifa__get_kernel(ctx, sources, 3, bad, 4, "ifa_merge", &e), IFA_STATUS_BUILD_FAILED);
    char opts[160];
    const int cpu = ifa__vendor_is_cpu(ctx->facts.vendor); /* the variables: scripts/test and ctest set them */
    snprintf(opts, sizeof opts, "-cl-std=CL1.2%s%s -D IFA_CPU=%d -D IFA_NV=%d -D P_T=99 -D O_T=0 -D WG=8 -D HAS_LSE=1",
             env_on("IFA_KERNEL_WERROR") ? " -Werror" : "", cpu && env_on("IFA_CPU_OPT_DISABLE") ? " -cl-opt-disable" : "",
             cpu, ctx->facts.vendor == IFA_VENDOR_NVIDIA);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), opts));
    ck_assert_int_eq(ifa__get_kernel(ctx, sources, 3, defs, 4, "no_such_kernel", &e), IFA_STATUS_OPENCL_ERROR);
    ck_assert_int_eq(ifa_context_programs_built(ctx), built + 3);
}
END_TEST

/* IFA_KERNEL_DIR without a program's sources: BUILD_FAILED naming the file that is missing and nothing cached,
 * whether the first source is missing (the build then freed uninitialised pointers: ifa-bench aborted in free())
 * or a later one (the first one's text freed: the sanitizer run's leak check). */
START_TEST(program_cache_kernel_dir_missing) {
    static const char *const sources[] = {"ifa_common.cl", "ifa_merge.cl"};
    const ifa__define defs[] = {{"P_T", IFA_DTYPE_FLOAT32}, {"O_T", IFA_DTYPE_FLOAT32}, {"WG", 2}, {"HAS_LSE", 0}};
    ifa_context *ctx = test_ctx();
    ifa__cached_kernel *k = NULL;
    char dir[] = "/tmp/ifa_kernel_dir_XXXXXX", path[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const int64_t built = ifa_context_programs_built(ctx);
    const char *const saved = getenv("IFA_KERNEL_DIR");
    char keep[4096] = "";
    if (saved) snprintf(keep, sizeof keep, "%s", saved);
    ck_assert_int_eq(setenv("IFA_KERNEL_DIR", dir, 1), 0);
    ck_assert_int_eq(ifa__get_kernel(ctx, sources, 2, defs, 4, "ifa_merge", &k), IFA_STATUS_BUILD_FAILED);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "/ifa_common.cl cannot be read"));
    snprintf(path, sizeof path, "%s/ifa_common.cl", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("/* the first source only */\n", f);
    fclose(f);
    ck_assert_int_eq(ifa__get_kernel(ctx, sources, 2, defs, 4, "ifa_merge", &k), IFA_STATUS_BUILD_FAILED);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "/ifa_merge.cl cannot be read"));
    ck_assert_int_eq(saved ? setenv("IFA_KERNEL_DIR", keep, 1) : unsetenv("IFA_KERNEL_DIR"), 0);
    ck_assert_int_eq(ifa_context_programs_built(ctx), built);
    ck_assert_int_eq(remove(path), 0);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static void write_text(const char *dir, const char *name, const char *text) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void remove_text(const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_int_eq(remove(path), 0);
}

/* A source's `#include "NAME"` lines (alone on their line, spaces allowed around the #) are replaced by source NAME,
 * read as the program's sources are (here from IFA_KERNEL_DIR), itself expanded: the kernel sees the included
 * macros, and a last line without a newline does not run into the next. An include that cannot be read, or includes
 * nested deeper than 4 (a file including itself), fail the build naming the file; nothing is cached. */
START_TEST(program_cache_includes) {
    static const char *const good[] = {"inc_kernel.cl"}, *const missing[] = {"inc_missing.cl"},
                             *const loop[] = {"inc_loop.clh"};
    ifa_context *ctx = test_ctx();
    ifa__cached_kernel *k = NULL;
    char dir[] = "/tmp/ifa_kernel_dir_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    write_text(dir, "inc_kernel.cl",
               "#include \"inc_b.clh\"\n__kernel void inc_k(__global float *o) { o[0] = B_VALUE; }\n");
    write_text(dir, "inc_b.clh", "  #  include \"inc_c.clh\"  \n#define B_VALUE (C_VALUE + 1.0f)\n");
    write_text(dir, "inc_c.clh", "#define C_VALUE 2.0f");
    write_text(dir, "inc_missing.cl", "#include \"inc_none.clh\"\n");
    write_text(dir, "inc_loop.clh", "#include \"inc_loop.clh\"\n");
    const char *const saved = getenv("IFA_KERNEL_DIR");
    char keep[4096] = "";
    if (saved) snprintf(keep, sizeof keep, "%s", saved);
    ck_assert_int_eq(setenv("IFA_KERNEL_DIR", dir, 1), 0);
    const int64_t built = ifa_context_programs_built(ctx);
    ck_assert_int_eq(ifa__get_kernel(ctx, missing, 1, NULL, 0, "inc_k", &k), IFA_STATUS_BUILD_FAILED);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "/inc_none.clh cannot be read"));
    ck_assert_int_eq(ifa__get_kernel(ctx, loop, 1, NULL, 0, "inc_k", &k), IFA_STATUS_BUILD_FAILED);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "inc_loop.clh: includes nested deeper than 4"));
    ck_assert_int_eq(ifa_context_programs_built(ctx), built);
    ck_assert_int_eq(ifa__get_kernel(ctx, good, 1, NULL, 0, "inc_k", &k), IFA_STATUS_OK);
    ck_assert_int_eq(saved ? setenv("IFA_KERNEL_DIR", keep, 1) : unsetenv("IFA_KERNEL_DIR"), 0);
    cl_command_queue q = test_queue();
    cl_int err;
    cl_mem o = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, sizeof(float), NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    const size_t one = 1;
    ck_assert_int_eq(clSetKernelArg(k->kernel, 0, sizeof o, &o), CL_SUCCESS);
    ck_assert_int_eq(clEnqueueNDRangeKernel(q, k->kernel, 1, NULL, &one, &one, 0, NULL, NULL), CL_SUCCESS);
    float v = 0.0f;
    ck_assert_int_eq(clEnqueueReadBuffer(q, o, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL), CL_SUCCESS);
    ck_assert(v == 3.0f);
    clReleaseMemObject(o);
    const char *const names[] = {"inc_kernel.cl", "inc_b.clh", "inc_c.clh", "inc_missing.cl", "inc_loop.clh"};
    for (int i = 0; i < 5; ++i) remove_text(dir, names[i]);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* ifa_buffer_create: on the CPU device a buffer of 2 MiB or more lies over host memory of its own, starting
 * the tuning row's buffer_offset past a 2 MiB boundary (freed with the buffer: the sanitizer run's leak
 * check), which the device reads and writes like any buffer; a smaller one is a plain buffer; wrong
 * arguments are refused with a message naming them. */
START_TEST(buffer_create) {
    ifa_context *ctx = test_ctx();
    cl_command_queue q = test_queue();
    cl_mem m = NULL, plain = NULL;
    const size_t bytes = 3 * 1000 * 1000 + 5; /* not a whole number of huge pages */
    ck_assert_int_eq(ifa_buffer_create(ctx, CL_MEM_READ_WRITE, bytes, &m), IFA_STATUS_OK);
    ck_assert_ptr_nonnull(m);
    size_t size = 0;
    cl_mem_flags flags = 0;
    void *host = NULL;
    cl_device_type type = 0;
    ck_assert_int_eq(clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL), CL_SUCCESS);
    ck_assert_uint_eq(size, bytes);
    ck_assert_int_eq(clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof flags, &flags, NULL), CL_SUCCESS);
    ck_assert_int_eq(clGetMemObjectInfo(m, CL_MEM_HOST_PTR, sizeof host, &host, NULL), CL_SUCCESS);
    ck_assert_int_eq(clGetDeviceInfo(ifa_context_device(ctx), CL_DEVICE_TYPE, sizeof type, &type, NULL), CL_SUCCESS);
    if (type & CL_DEVICE_TYPE_CPU) {
        ck_assert(flags & CL_MEM_USE_HOST_PTR);
        ck_assert_ptr_nonnull(host);
        /* the row's start past the 2 MiB boundary (Intel's 640, else 0) */
        ck_assert_uint_eq((uintptr_t)host % ((uintptr_t)2 << 20),
                          (uintptr_t)ifa__tuning_for(ctx->facts.vendor).buffer_offset);
        ck_assert_uint_eq(ifa__buffer_start(ctx->facts.vendor), (size_t)ifa__tuning_for(ctx->facts.vendor).buffer_offset);
    } else {
        ck_assert(!(flags & CL_MEM_USE_HOST_PTR));
    }
    /* the device copies a pattern through it */
    unsigned char *in = malloc(bytes), *back = malloc(bytes);
    ck_assert(in && back);
    for (size_t i = 0; i < bytes; ++i) in[i] = (unsigned char)(i * 7 + 3), back[i] = 0;
    cl_int err;
    plain = clCreateBuffer(ifa_context_cl_context(ctx), CL_MEM_READ_WRITE, bytes, NULL, &err);
    ck_assert_ptr_nonnull(plain);
    ck_assert_int_eq(clEnqueueWriteBuffer(q, m, CL_FALSE, 0, bytes, in, 0, NULL, NULL), CL_SUCCESS);
    ck_assert_int_eq(clEnqueueCopyBuffer(q, m, plain, 0, 0, bytes, 0, NULL, NULL), CL_SUCCESS);
    ck_assert_int_eq(clEnqueueReadBuffer(q, plain, CL_TRUE, 0, bytes, back, 0, NULL, NULL), CL_SUCCESS);
    ck_assert_mem_eq(in, back, bytes);
    clReleaseMemObject(plain);
    clReleaseMemObject(m);
    free(in);
    free(back);
    /* IFA_TUNING moves the start, in whole 128-byte steps */
    if (type & CL_DEVICE_TYPE_CPU) {
        test_tuning_push("buffer_offset=1000");
        ck_assert_uint_eq(ifa__buffer_start(ctx->facts.vendor), 896);
        ck_assert_int_eq(ifa_buffer_create(ctx, CL_MEM_READ_WRITE, bytes, &m), IFA_STATUS_OK);
        test_tuning_pop();
        ck_assert_int_eq(clGetMemObjectInfo(m, CL_MEM_HOST_PTR, sizeof host, &host, NULL), CL_SUCCESS);
        ck_assert_uint_eq((uintptr_t)host % ((uintptr_t)2 << 20), 896);
        clReleaseMemObject(m);
    }
    /* under one huge page: on a CPU host memory of its own, 128-byte aligned, taken at creation; else a plain buffer */
    ck_assert_int_eq(ifa_buffer_create(ctx, CL_MEM_READ_ONLY, 4096, &m), IFA_STATUS_OK);
    ck_assert_int_eq(clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof flags, &flags, NULL), CL_SUCCESS);
    ck_assert(!(flags & CL_MEM_USE_HOST_PTR) == !(type & CL_DEVICE_TYPE_CPU));
    ck_assert(flags & CL_MEM_READ_ONLY);
    if (type & CL_DEVICE_TYPE_CPU) {
        ck_assert_int_eq(clGetMemObjectInfo(m, CL_MEM_HOST_PTR, sizeof host, &host, NULL), CL_SUCCESS);
        ck_assert_uint_eq((uintptr_t)host % 128, 0);
    }
    clReleaseMemObject(m);
    /* refused */
    m = NULL;
    ck_assert_int_eq(ifa_buffer_create(ctx, CL_MEM_READ_WRITE, 0, &m), IFA_STATUS_INVALID_ATTRIBUTE);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "bytes is 0"));
    ck_assert_ptr_null(m);
    ck_assert_int_eq(ifa_buffer_create(ctx, CL_MEM_READ_ONLY | CL_MEM_ALLOC_HOST_PTR, 64, &m), IFA_STATUS_INVALID_ATTRIBUTE);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "flags"));
    ck_assert_int_eq(ifa_buffer_create(ctx, CL_MEM_USE_HOST_PTR, 64, &m), IFA_STATUS_INVALID_ATTRIBUTE);
    ck_assert_int_eq(ifa_buffer_create(NULL, CL_MEM_READ_WRITE, 64, &m), IFA_STATUS_NULL_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "ctx"));
    ck_assert_int_eq(ifa_buffer_create(ctx, CL_MEM_READ_WRITE, 64, NULL), IFA_STATUS_NULL_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "out"));
    ck_assert_ptr_null(m);
    /* a size with no room for whole pages: refused on the CPU before any allocation; elsewhere as over the
     * device's largest buffer (NVIDIA's runtime itself accepted it) */
    const ifa_status huge = ifa_buffer_create(ctx, CL_MEM_READ_WRITE, SIZE_MAX - 4096, &m);
    ck_assert_int_eq(huge, IFA_STATUS_OUT_OF_MEMORY);
    ck_assert_ptr_nonnull(
        strstr(ifa_last_error(), (type & CL_DEVICE_TYPE_CPU) ? "whole 2 MiB pages" : "CL_DEVICE_MAX_MEM_ALLOC_SIZE"));
    ck_assert_ptr_null(m);
}
END_TEST

/* The op reading K/V from ifa_buffer_create's buffers (2.25 MB each: on the CPU, huge-page memory starting
 * the row's buffer_offset in) matches the float64 reference, as ifa-bench times them. */
START_TEST(op_on_buffer_create_kv) {
    spec p = {"BNSD", IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT16, 1, 16, 8, 128, 1100, NULL, 0, 1, 913};
    ifa_case c;
    ck_assert_int_eq(build_case(&p, p.seed, &c), 0);
    c.kv_from_buffer_create = 1;
    ifa_case_result r;
    ck_assert_msg(ifa_case_run(test_ctx(), test_queue(), &c, NULL, NULL, &r) == IFA_STATUS_OK, "run failed: %s",
                  ifa_last_error());
    ifa_case_check k;
    ck_assert_int_eq(ifa_case_check_result(&c, &r, &k), 0);
    ck_assert_msg(k.pass, "rel_l2=%.3g (tol %.0e) nonfinite=%lld", k.rel_l2, k.tolerance, (long long)k.nonfinite);
    ifa_case_result_free(&r);
    ifa_case_free(&c);
}
END_TEST

/* One plan serves many runs on fresh data in the same buffers; the program is built once per variant. */
START_TEST(plan_reuse_and_program_cache) {
    static const int64_t lens[] = {64, 0, 33};
    spec p = {"BSND", IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT16, 3, 4, 2, 40, 64, lens, 3, 1, 900};
    check_spec(&p); /* builds the variant */
    const int64_t built = ifa_context_programs_built(test_ctx());

    ifa_case c;
    ifa_case_init(&c);
    int64_t qs[4] = {3, 1, 4, 40}, ks[4] = {3, 64, 2, 40}, ls[3] = {3, 4, 1};
    ifa_case_result r;
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(ifa_host_tensor_alloc(&c.query, IFA_DTYPE_FLOAT16, 4, qs), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&c.key, IFA_DTYPE_FLOAT16, 4, ks), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&c.value, IFA_DTYPE_FLOAT16, 4, ks), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&r.out, IFA_DTYPE_FLOAT16, 4, qs), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&r.lse, IFA_DTYPE_FLOAT32, 3, ls), 0);
    c.lengths = malloc(sizeof lens);
    memcpy(c.lengths, lens, sizeof lens);
    c.lengths_count = 3, c.num_heads = 4, c.num_key_value_heads = 2, c.scale_value = 0.3, c.softmax_lse_flag = 1;
    strcpy(c.input_layout, "BSND");
    cl_mem bq = upload(&c.query), bk = upload(&c.key), bv = upload(&c.value), bo = upload(&r.out), bl = upload(&r.lse);
    ifa_tensor tq = {bq, 0, IFA_DTYPE_FLOAT16, 4, {3, 1, 4, 40}}, tk = {bk, 0, IFA_DTYPE_FLOAT16, 4, {3, 64, 2, 40}};
    ifa_tensor tv = tk, to = tq, tl = {bl, 0, IFA_DTYPE_FLOAT32, 3, {3, 4, 1}};
    tv.buffer = bv, to.buffer = bo;
    ifa_incre_flash_attention_args a;
    ifa_incre_flash_attention_args_init(&a);
    a.query = &tq, a.key = &tk, a.value = &tv, a.attention_out = &to, a.softmax_lse = &tl;
    a.actual_seq_lengths = c.lengths, a.actual_seq_lengths_count = 3, a.num_heads = 4, a.num_key_value_heads = 2;
    a.scale_value = 0.3, a.input_layout = "BSND";
    ifa_plan plan;
    size_t ws_bytes;
    ck_assert_int_eq(ifa_incre_flash_attention_get_workspace_size(test_ctx(), &a, &plan, &ws_bytes), IFA_STATUS_OK);
    cl_int err;
    cl_mem ws = clCreateBuffer(ifa_context_cl_context(test_ctx()), CL_MEM_READ_WRITE, ws_bytes, NULL, &err);
    cl_command_queue q = test_queue();
    for (int run = 0; run < 3; ++run) {
        ifa_host_fill_random(&c.query, 1000 + (uint64_t)run, -1, 1);
        ifa_host_fill_random(&c.key, 2000 + (uint64_t)run, -1, 1);
        ifa_host_fill_random(&c.value, 3000 + (uint64_t)run, -1, 1);
        int64_t n = ifa_host_tensor_numel(&r.out);
        for (int64_t i = 0; i < n; ++i) ifa_host_set(&r.out, i, NAN);
        for (int64_t i = 0; i < 12; ++i) ifa_host_set(&r.lse, i, NAN);
        ck_assert_int_eq(clEnqueueWriteBuffer(q, bq, CL_FALSE, 0, c.query.bytes, c.query.data, 0, NULL, NULL), CL_SUCCESS);
        ck_assert_int_eq(clEnqueueWriteBuffer(q, bk, CL_FALSE, 0, c.key.bytes, c.key.data, 0, NULL, NULL), CL_SUCCESS);
        ck_assert_int_eq(clEnqueueWriteBuffer(q, bv, CL_FALSE, 0, c.value.bytes, c.value.data, 0, NULL, NULL), CL_SUCCESS);
        ck_assert_int_eq(clEnqueueWriteBuffer(q, bo, CL_FALSE, 0, r.out.bytes, r.out.data, 0, NULL, NULL), CL_SUCCESS);
        ck_assert_int_eq(clEnqueueWriteBuffer(q, bl, CL_FALSE, 0, r.lse.bytes, r.lse.data, 0, NULL, NULL), CL_SUCCESS);
        ck_assert_int_eq(ifa_incre_flash_attention_run(test_ctx(), &plan, &a, ws, 0, q, 0, NULL, NULL), IFA_STATUS_OK);
        ck_assert_int_eq(clEnqueueReadBuffer(q, bo, CL_TRUE, 0, r.out.bytes, r.out.data, 0, NULL, NULL), CL_SUCCESS);
        ck_assert_int_eq(clEnqueueReadBuffer(q, bl, CL_TRUE, 0, r.lse.bytes, r.lse.data, 0, NULL, NULL), CL_SUCCESS);
        ifa_case_check k;
        ck_assert_int_eq(ifa_case_check_result(&c, &r, &k), 0);
        ck_assert_msg(k.pass, "run %d: rel_l2=%.3g nonfinite=%lld lse_bad=%lld", run, k.rel_l2, (long long)k.nonfinite,
                      (long long)k.lse_bad);
    }
    ck_assert_int_eq(ifa_context_programs_built(test_ctx()), built);
    cl_mem all[] = {bq, bk, bv, bo, bl, ws};
    for (int i = 0; i < 6; ++i) clReleaseMemObject(all[i]);
    ifa_case_result_free(&r);
    ifa_case_free(&c);
}
END_TEST

/* Two host threads, each with its own queue on the shared context, run different variants at once. */
typedef struct worker {
    spec p;
    cl_command_queue queue;
    int runs, passed;
    char error[256];
} worker;

static int work(void *arg) {
    worker *w = arg;
    for (int i = 0; i < w->runs; ++i) {
        ifa_case c;
        if (build_case(&w->p, w->p.seed + (uint64_t)i, &c) != 0) {
            snprintf(w->error, sizeof w->error, "out of host memory");
            ifa_case_free(&c);
            continue;
        }
        ifa_case_result r;
        ifa_case_check k;
        if (ifa_case_run(test_ctx(), w->queue, &c, NULL, NULL, &r) != IFA_STATUS_OK)
            snprintf(w->error, sizeof w->error, "%s", ifa_last_error());
        else if (ifa_case_check_result(&c, &r, &k) == 0 && k.pass)
            w->passed++;
        ifa_case_result_free(&r);
        ifa_case_free(&c);
    }
    return 0;
}

START_TEST(two_threads_two_queues_one_context) {
    static const int64_t lens[] = {300, 17};
    worker w[2] = {{{"BSH", IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT16, 2, 8, 2, 64, 300, lens, 2, 1, 1000}, NULL, 6, 0, ""},
                   {{"BNSD", IFA_DTYPE_BFLOAT16, IFA_DTYPE_FLOAT32, 3, 4, 4, 96, 200, NULL, 0, 1, 2000}, NULL, 6, 0, ""}};
    thrd_t t[2];
    for (int i = 0; i < 2; ++i) {
        cl_int err;
        w[i].queue = clCreateCommandQueue(ifa_context_cl_context(test_ctx()), ifa_context_device(test_ctx()), 0, &err);
        ck_assert_ptr_nonnull(w[i].queue);
    }
    for (int i = 0; i < 2; ++i) ck_assert_int_eq(thrd_create(&t[i], work, &w[i]), thrd_success);
    for (int i = 0; i < 2; ++i) ck_assert_int_eq(thrd_join(t[i], NULL), thrd_success);
    for (int i = 0; i < 2; ++i) {
        clReleaseCommandQueue(w[i].queue);
        ck_assert_msg(w[i].passed == w[i].runs, "thread %d: %d of %d passed %s", i, w[i].passed, w[i].runs, w[i].error);
    }
}
END_TEST

/* The event run returns covers the lengths upload and the kernel on an out-of-order queue too. */
START_TEST(out_of_order_queue) {
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(ifa_context_cl_context(test_ctx()), ifa_context_device(test_ctx()),
                                              CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
    if (!q) return; /* the device has no out-of-order queues: nothing to check */
    static const int64_t lens[] = {500, 3, 0, 250};
    worker w = {{"BSND", IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT16, 4, 8, 2, 64, 500, lens, 4, 1, 3000}, q, 3, 0, ""};
    work(&w);
    clReleaseCommandQueue(q);
    ck_assert_msg(w.passed == w.runs, "%d of %d passed %s", w.passed, w.runs, w.error);
}
END_TEST

/* The cv template refuses an out-of-order queue (CLBlast's products take no wait lists) and runs on an
 * in-order one; CLBlast's failures come back as statuses with messages, never as a crash. */
START_TEST(cv_queue_and_clblast_errors) {
    const spec p = {"BSND", IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT16, 2, 8, 2, 32, 100, NULL, 0, 1, 3100};
    ifa_case c;
    ck_assert_int_eq(build_case(&p, p.seed, &c), 0);
    strcpy(c.template_mode, "cv");
    ifa_case_result r;
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(ifa_context_cl_context(test_ctx()), ifa_context_device(test_ctx()),
                                              CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
    if (q) {
        ck_assert_int_eq(ifa_case_run(test_ctx(), q, &c, NULL, NULL, &r), IFA_STATUS_INVALID_QUEUE);
        ck_assert_msg(strstr(ifa_last_error(), "the cv template needs an in-order queue"), "%s", ifa_last_error());
        clReleaseCommandQueue(q);
    }
    ck_assert_msg(ifa_case_run(test_ctx(), test_queue(), &c, NULL, NULL, &r) == IFA_STATUS_OK, "%s", ifa_last_error());
    ck_assert_int_eq(r.plan.template_id, IFA_TEMPLATE_CV);
    ifa_case_check k;
    ck_assert_int_eq(ifa_case_check_result(&c, &r, &k), 0);
    ck_assert(k.pass);
    ifa_case_result_free(&r);
    ifa_case_free(&c);

    /* two 4 x 4 products need 128 bytes of C; the buffer has 64 */
    cl_mem small = clCreateBuffer(ifa_context_cl_context(test_ctx()), CL_MEM_READ_WRITE, 64, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    const ifa__gemm g = {4, 4, 4, 0, small, 0, 4, 0, small, 0, 4, 0, 0.0f, small, 0, 4, 16, 2};
    ck_assert_int_eq(ifa__sgemm_batched(&g, test_queue(), NULL, "a test product"), IFA_STATUS_BLAS_ERROR);
    ck_assert_msg(strstr(ifa_last_error(), "CLBlastSgemmStridedBatched (a test product) failed with CLBlast status "
                                           "-1009: matrix C's buffer is too small"), "%s", ifa_last_error());
    clReleaseMemObject(small);
    ck_assert_int_eq(ifa__blas_status(0, "call", "what"), IFA_STATUS_OK);
    ck_assert_int_eq(ifa__blas_status(CL_OUT_OF_RESOURCES, "call", "what"), IFA_STATUS_OUT_OF_MEMORY);
    ck_assert_int_eq(ifa__blas_status(CL_BUILD_PROGRAM_FAILURE, "call", "what"), IFA_STATUS_BUILD_FAILED);
    ck_assert_int_eq(ifa__blas_status(-1017, "call", "what"), IFA_STATUS_BLAS_ERROR);
    ck_assert_msg(strstr(ifa_last_error(), "M, N and K must be larger than zero"), "%s", ifa_last_error());
}
END_TEST

/* Both flash-decoding algorithms: the second half of each loop runs global rowmax. */
START_TEST(split_kv_layout_by_dtype) {
    static const int64_t lens[] = {1000, 999, 257, 0};
    const int global = _i >= 3 * NPAIRS, i = _i % (3 * NPAIRS), fused = i % 2;
    split_force f = {64, global  ? "split_min_tokens=64,chunk_rows=64,split_rowmax=2,balance_milli=1000000"
                         : fused ? "split_min_tokens=64,chunk_rows=64,balance_milli=1000000,fused_combine=1"
                                 : "split_min_tokens=64,chunk_rows=64,balance_milli=1000000,fused_combine=0",
                     global ? 2 : 1, global ? 2 : fused ? 1 : 2};
    spec p = {layouts[i / NPAIRS], dtype_pairs[i % NPAIRS][0], dtype_pairs[i % NPAIRS][1], 4, 8, 2, 64, 1000,
              lens, 4, 1, (uint64_t)_i + 1300};
    check_spec_with(&p, force_split, &f);
}
END_TEST

START_TEST(split_kv_gqa_and_head_dims) {
    static const int64_t heads[][3] = {{8, 8, 64}, {16, 4, 128}, {32, 4, 80}, {28, 4, 1}, {16, 1, 256}, {8, 2, 512}};
    static const int64_t lens[] = {700, 65};
    const int global = _i >= 6, i = _i % 6, fused = i % 2;
    split_force f = {64, global  ? "split_min_tokens=32,chunk_rows=32,split_rowmax=2,balance_milli=1000000"
                         : fused ? "split_min_tokens=32,chunk_rows=32,balance_milli=1000000,fused_combine=1"
                                 : "split_min_tokens=32,chunk_rows=32,balance_milli=1000000,fused_combine=0",
                     global ? 2 : 1, global ? 2 : fused ? 1 : 2};
    spec p = {layouts[_i % 3], IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT16, 2, heads[i][0], heads[i][1], heads[i][2], 700,
              lens, 2, 1, (uint64_t)_i + 1400};
    check_spec_with(&p, force_split, &f);
}
END_TEST

/* Lengths that are not multiples of the chunk or the split, batches whose later splits are all empty, and
 * a batch with no key at all: the combine must skip -inf splits without making NaN. */
START_TEST(split_kv_empty_splits) {
    static const int64_t lens[] = {4097, 1, 0, 4096, 130, 2000};
    const int global = _i >= 3, i = _i % 3, fused = i != 1;
    split_force f = {128, global  ? "split_min_tokens=128,chunk_rows=128,split_rowmax=2,balance_milli=1000000"
                          : fused ? "split_min_tokens=128,chunk_rows=128,balance_milli=1000000,fused_combine=1"
                                  : "split_min_tokens=128,chunk_rows=128,balance_milli=1000000,fused_combine=0",
                     global ? 2 : 1, global ? 2 : fused ? 1 : 2};
    spec p = {layouts[i], i == 1 ? IFA_DTYPE_FLOAT32 : IFA_DTYPE_BFLOAT16, i == 1 ? IFA_DTYPE_FLOAT32 : IFA_DTYPE_BFLOAT16,
              6, 4, 2, 64, 4097, lens, 6, 1, (uint64_t)_i + 1500};
    check_spec_with(&p, force_split, &f);
}
END_TEST

/* Split and non-split results of the same inputs agree directly, within the output dtype's tolerance. */
START_TEST(split_equals_non_split) {
    static const int64_t lens[] = {2500, 0, 1, 1999};
    const ifa_dtype dt = _i == 0 ? IFA_DTYPE_FLOAT32 : _i == 1 ? IFA_DTYPE_FLOAT16 : IFA_DTYPE_BFLOAT16;
    const spec p = {"BSH", dt, dt, 4, 8, 2, 64, 2500, lens, 4, 1, 1700 + (uint64_t)_i};
    ifa_case c;
    ck_assert_int_eq(build_case(&p, p.seed, &c), 0);
    ifa_case_result whole, partial, global, fused;
    split_force fp = {64, "split_min_tokens=64,chunk_rows=64,balance_milli=1000000,fused_combine=0", 1, 2};
    split_force fg = {64, "split_min_tokens=64,chunk_rows=64,split_rowmax=2,balance_milli=1000000", 2, 2};
    split_force ff = {64, "split_min_tokens=64,chunk_rows=64,balance_milli=1000000,fused_combine=1", 1, 1};
    /* one compute unit: a GPU's own plan splits this case */
    split_force fw = {1, "split_min_tokens=1000000000,chunk_rows=64", 0, 0};
    ck_assert_int_eq(ifa_case_run(test_ctx(), test_queue(), &c, force_split, &fw, &whole), IFA_STATUS_OK);
    ck_assert_int_eq(whole.plan.split_kv, 0);
    ck_assert_int_eq(ifa_case_run(test_ctx(), test_queue(), &c, force_split, &fp, &partial), IFA_STATUS_OK);
    ck_assert_int_eq(ifa_case_run(test_ctx(), test_queue(), &c, force_split, &fg, &global), IFA_STATUS_OK);
    ck_assert_int_eq(ifa_case_run(test_ctx(), test_queue(), &c, force_split, &ff, &fused), IFA_STATUS_OK);
    const ifa_case_result *split[3] = {&partial, &global, &fused};
    const int64_t n = ifa_host_tensor_numel(&whole.out);
    for (int k = 0; k < 3; ++k) {
        double num = 0, den = 0;
        for (int64_t i = 0; i < n; ++i) {
            double a = ifa_host_get(&whole.out, i), b = ifa_host_get(&split[k]->out, i);
            ck_assert_msg(isfinite(a) && isfinite(b), "element %lld not finite", (long long)i);
            num += (a - b) * (a - b);
            den += a * a;
        }
        ck_assert_msg(sqrt(num / den) <= ifa_case_tolerance(dt), "split %d differs: rel_l2 %.3g", k + 1, sqrt(num / den));
        for (int64_t i = 0; i < 4 * 8; ++i) {
            double a = ifa_host_get(&whole.lse, i), b = ifa_host_get(&split[k]->lse, i);
            ck_assert_msg((isinf(a) && a == b) || fabs(a - b) <= 1e-5 * fmax(1.0, fabs(a)), "lse %lld: %g vs %g",
                          (long long)i, a, b);
        }
    }
    ifa_case_result_free(&whole);
    ifa_case_result_free(&partial);
    ifa_case_result_free(&global);
    ifa_case_result_free(&fused);
    ifa_case_free(&c);
}
END_TEST

/* The last split's combine (fused_combine) counts a block's splits in counters the context keeps per in-order
 * queue and the last split sets back to 0: runs one after another on one queue, on a second queue, and on an
 * out-of-order queue (which launches the combine kernel instead) each give the right result, with fresh inputs
 * and poisoned outputs every run. A counter left wrong by one run would give a later run's block no combine
 * (poison left) or an early one (a partial missing). */
static void check_runs_on(cl_command_queue q, const spec *p, const split_force *f, int runs, uint64_t seed) {
    for (int run = 0; run < runs; ++run) {
        ifa_case c;
        ck_assert_int_eq(build_case(p, seed + (uint64_t)run, &c), 0);
        ifa_case_result r;
        ck_assert_int_eq(ifa_case_run(test_ctx(), q, &c, force_split, (void *)f, &r), IFA_STATUS_OK);
        ifa_case_check k;
        ck_assert_int_eq(ifa_case_check_result(&c, &r, &k), 0);
        ck_assert_msg(k.pass, "run %d: rel_l2=%.3g nonfinite=%lld lse_bad=%lld", run, k.rel_l2, (long long)k.nonfinite,
                      (long long)k.lse_bad);
        ifa_case_result_free(&r);
        ifa_case_free(&c);
    }
}

/* 3 runs on the test queue, 2 on a second in-order queue, 1 more on the first (its counters are still its own),
 * 2 on an out-of-order queue where the device has them; seeds from seed on. */
static void check_queues(const spec *p, const split_force *f, uint64_t seed) {
    check_runs_on(test_queue(), p, f, 3, seed);
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(ifa_context_cl_context(test_ctx()), ifa_context_device(test_ctx()), 0, &err);
    ck_assert_ptr_nonnull(q);
    check_runs_on(q, p, f, 2, seed + 100);
    check_runs_on(test_queue(), p, f, 1, seed + 200);
    clReleaseCommandQueue(q);
    q = clCreateCommandQueue(ifa_context_cl_context(test_ctx()), ifa_context_device(test_ctx()),
                             CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
    if (q) { /* a device without out-of-order queues has nothing more to check */
        check_runs_on(q, p, f, 2, seed + 300);
        clReleaseCommandQueue(q);
    }
}

START_TEST(fused_combine_queues) {
    static const int64_t lens[] = {900, 0, 1, 700, 64};
    const spec p = {"BNSD", IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT16, 5, 8, 2, 64, 900, lens, 5, 1, 2100};
    const split_force f = {64, "split_min_tokens=64,chunk_rows=64,balance_milli=1000000,fused_combine=1", 1, 1};
    check_queues(&p, &f, 2100);
}
END_TEST

/* The same for balanced units (fused_balanced): the pieces of the units that cut a block add their cost positions
 * to its counter, and the one that brings it to the block's cost combines (BSND: all KV heads in one work-group). */
START_TEST(fused_balanced_queues) {
    static const int64_t lens[] = {900, 0, 1, 700, 64};
    const spec p = {"BSND", IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT16, 5, 8, 2, 64, 900, lens, 5, 1, 2500};
    const split_force f = {16, "chunk_rows=64,fused_balanced=1", 3, 1};
    check_queues(&p, &f, 2500);
}
END_TEST

/* Balanced units: skewed lengths on a device of many compute units, so units cut blocks anywhere (inside
 * the fixed-cost head of a block, mid-chunk, across batches), every layout and dtype pair, merged by the last
 * piece of each block (fused_balanced) and by the combine kernel in turn. */
START_TEST(balanced_layout_by_dtype) {
    static const int64_t lens[] = {1000, 3, 0, 777};
    split_force f = {64, _i % 2 ? "chunk_rows=64,fused_balanced=0" : "chunk_rows=64,fused_balanced=1", 3, _i % 2 ? 2 : 1};
    spec p = {layouts[_i / NPAIRS], dtype_pairs[_i % NPAIRS][0], dtype_pairs[_i % NPAIRS][1], 4, 8, 2, 64, 1000,
              lens, 4, 1, (uint64_t)_i + 1800};
    check_spec_with(&p, force_split, &f);
}
END_TEST

START_TEST(balanced_gqa_head_dims_and_edges) {
    static const int64_t l1[] = {4097, 1, 0, 4096, 130, 2000}, l2[] = {3, 0}, l3[] = {0, 0, 900};
    static const struct {
        const int64_t *lens;
        int64_t b, n, nkv, d, s;
        const char *tuning;
    } cases[] = {
        {l1, 6, 4, 2, 64, 4097, "chunk_rows=128"},
        {l1, 6, 28, 4, 80, 4097, "chunk_rows=64,block_cost_rows=100"},
        {l1, 6, 16, 1, 128, 4097, "chunk_rows=32"},
        /* fewer cost positions than units: empty units, which the last piece's count would miss (the combine
         * kernel merges) */
        {l2, 2, 4, 2, 512, 3, "block_cost_rows=1,fused_balanced=1"},
        {l3, 3, 8, 8, 1, 900, "chunk_rows=16,block_cost_rows=7,fused_balanced=0"},
    };
    split_force f = {_i == 3 ? 64 : 100, cases[_i].tuning, 3, _i >= 3 ? 2 : 1};
    spec p = {layouts[_i % 3], IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT16, cases[_i].b, cases[_i].n, cases[_i].nkv,
              cases[_i].d, cases[_i].s, cases[_i].lens, cases[_i].b, 1, (uint64_t)_i + 1900};
    check_spec_with(&p, force_split, &f);
}
END_TEST

/* The output store rounds to nearest even, ties included: one key (its weight exactly 1, so each output element is
 * its value element in fp32), fp32 values placed on the half-way points between neighbouring fp16 (bf16) values,
 * odd and even mantissas, both signs, normal and small; each stored element must be the value rounded to even. */
START_TEST(output_rounds_ties_to_even) {
    static const ifa_dtype outs[2] = {IFA_DTYPE_FLOAT16, IFA_DTYPE_BFLOAT16};
    for (int o = 0; o < 2; ++o) {
        const int mant = outs[o] == IFA_DTYPE_FLOAT16 ? 10 : 7;
        ifa_case c;
        ifa_case_init(&c);
        const int64_t qs[4] = {1, 4, 1, 64}, ks[4] = {1, 1, 1, 64};
        ck_assert_int_eq(ifa_host_tensor_alloc(&c.query, outs[o], 4, qs), 0);
        ck_assert_int_eq(ifa_host_tensor_alloc(&c.key, IFA_DTYPE_FLOAT32, 4, ks), 0);
        ck_assert_int_eq(ifa_host_tensor_alloc(&c.value, IFA_DTYPE_FLOAT32, 4, ks), 0);
        ifa_host_fill_random(&c.query, 5, -1, 1);
        ifa_host_fill_random(&c.key, 6, -1, 1);
        for (int d = 0; d < 64; ++d) {
            /* (1 + k 2^-mant + 2^-(mant+1)) 2^e: k odd rounds up, k even down; a few non-ties among them */
            const int k = d % 8, e = d / 8 % 4 * 3 - 4;
            const double tie = ldexp(1.0 + k * ldexp(1.0, -mant) + (d % 16 == 15 ? 0.3 : 0.5) * ldexp(1.0, -mant), e);
            ifa_host_set(&c.value, d, d % 2 ? -tie : tie);
        }
        c.num_heads = 4, c.num_key_value_heads = 1, c.scale_value = 0.125, c.softmax_lse_flag = 1;
        strcpy(c.input_layout, "BNSD");
        ifa_case_result r;
        ck_assert_msg(ifa_case_run(test_ctx(), test_queue(), &c, NULL, NULL, &r) == IFA_STATUS_OK, "%s", r.error);
        ifa_host_tensor want;
        ck_assert_int_eq(ifa_host_tensor_alloc(&want, outs[o], 1, (const int64_t[]){64}), 0);
        for (int d = 0; d < 64; ++d) ifa_host_set(&want, d, ifa_host_get(&c.value, d)); /* rounds to nearest even */
        for (int h = 0; h < 4; ++h)
            for (int d = 0; d < 64; ++d)
                ck_assert_msg(ifa_host_get(&r.out, h * 64 + d) == ifa_host_get(&want, d),
                              "%s head %d element %d: stored %.9g, the value %.9g rounds to nearest even as %.9g",
                              ifa_dtype_name(outs[o]), h, d, ifa_host_get(&r.out, h * 64 + d), ifa_host_get(&c.value, d),
                              ifa_host_get(&want, d));
        ifa_host_tensor_free(&want);
        ifa_case_result_free(&r);
        ifa_case_free(&c);
    }
}
END_TEST

START_TEST(split_kv_all_empty_and_uniform) {
    static const int64_t zero[] = {0}, some[] = {3000};
    split_force f = {64, "split_min_tokens=64,chunk_rows=64,balance_milli=1000000", 0, 0}; /* max length 0: nothing to split */
    spec p = {"BSH", IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT16, 2, 4, 1, 32, 100, zero, 1, 1, 1600};
    check_spec_with(&p, force_split, &f);
    split_force g = {64, "split_min_tokens=100,chunk_rows=64", 1, 0};
    spec q = {"BNSD", IFA_DTYPE_FLOAT32, IFA_DTYPE_FLOAT16, 2, 4, 1, 32, 3500, some, 1, 0, 1601};
    check_spec_with(&q, force_split, &g);
    split_force h = {64, "split_min_tokens=100,chunk_rows=64,split_rowmax=2", 2, 0};
    check_spec_with(&q, force_split, &h);
}
END_TEST

Suite *kernel_suite(void) {
    Suite *s = suite_create("kernel");
    TCase *t = test_tcase_create("correctness");
    tcase_set_timeout(t, 600);
    test_add_loop(t, layout_by_dtype, 0, 3 * NPAIRS);
    test_add_loop(t, gqa_ratios, 0, 5);
    test_add_loop(t, head_dims, 0, 8);
    test_add_loop(t, long_and_short_sequences, 0, 7);
    tcase_add_test(t, fp32_long_sequence);
    test_add_loop(t, uneven_lengths, 0, 3);
    tcase_add_test(t, all_lengths_zero_give_zeros);
    tcase_add_test(t, uniform_length_and_no_lse);
    test_add_loop(t, largest_batch_and_group, 0, 2);
    tcase_add_test(t, many_kv_heads);
    test_add_loop(t, head_groups_when_local_memory_is_small, 0, 3);
    tcase_add_test(t, buffer_create);
    tcase_add_test(t, op_on_buffer_create_kv);
    tcase_add_test(t, plan_reuse_and_program_cache);
    tcase_add_test(t, program_cache_keys);
    tcase_add_test(t, program_cache_kernel_dir_missing);
    tcase_add_test(t, program_cache_includes);
    tcase_add_test(t, two_threads_two_queues_one_context);
    tcase_add_test(t, out_of_order_queue);
    tcase_add_test(t, cv_queue_and_clblast_errors);
    test_add_loop(t, split_kv_layout_by_dtype, 0, 2 * 3 * NPAIRS);
    test_add_loop(t, split_kv_gqa_and_head_dims, 0, 2 * 6);
    test_add_loop(t, split_kv_empty_splits, 0, 2 * 3);
    tcase_add_test(t, split_kv_all_empty_and_uniform);
    tcase_add_test(t, output_rounds_ties_to_even);
    test_add_loop(t, split_equals_non_split, 0, 3);
    tcase_add_test(t, fused_combine_queues);
    tcase_add_test(t, fused_balanced_queues);
    test_add_loop(t, balanced_layout_by_dtype, 0, 3 * NPAIRS);
    test_add_loop(t, balanced_gqa_head_dims_and_edges, 0, 5);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return test_run_suite(kernel_suite()); }
