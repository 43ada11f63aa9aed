/* ifa-tiling: prints the plan the planner makes for a case on a device (real or a named profile) as JSON,
 * or explains a tiling key field by field.
 *   ifa-tiling CASE.json [--device-profile NAME | --device SELECTOR] [--time]
 *   ifa-tiling --shape B,N,N_kv,D,S [--layout BSH] [--dtype float16] [--kv-dtype float16] [--lse]
 *              [--device-profile NAME] [--time]
 *   ifa-tiling ... [--domain] [--per-batch]
 *   ifa-tiling --decode KEY
 *   ifa-tiling --sources SHAPE
 * --sources: the program of kernel shape SHAPE (a name of the tiling key's shape field: vector, lanes, matrix ...),
 * its op_kernel/ files in order on one line (what scripts/nv-regs and ctest nvptx_lanes concatenate; the last
 * file includes .clh pieces, so a compiler needs -I op_kernel).
 * --domain: every distinct plan (kernel set) the case's configuration takes over batch sizes 1 .. B and its
 * lengths, what ifa_incre_flash_attention_prepare builds, each with the step that first gave it; --per-batch
 * gives a --shape case B per-batch lengths (else none: every batch the same length). A --shape case with int8 or
 * int4 K/V has per-channel scales and offsets (float16, (2, N_kv, D)), as ifa-bench's default.
 * The plan's JSON ends with the fused kernel's build options on that device ("build"; scripts/nv-regs compiles
 * them for an NVIDIA GPU offline).
 * Profiles: h100 (132 CUs, 48 KiB local), pocl-2 (2 AVX-512 CPU cores), pocl-2-avx2 (2 AVX2 cores),
 * generic-gpu-64cu. Exit 0, or 2 with a message for a bad case, key or argument. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/args.h"
#include "common/case.h"
#include "common/env_check.h"
#include "op_host/runtime/context.h"
#include "op_host/ifa/ifa_check.h"
#include "templates/all_vector.h"
#include "tiling/plan_domain.h"
#include "tiling/planner.h"
#include "tiling/template_choice.h"
#include "tiling/tiling_key.h"

static const struct {
    const char *name;
    ifa_device_facts facts;
} profiles[] = {
    {"h100", {IFA_VENDOR_NVIDIA, 132, 1024, 0, 48 * 1024, 90}},
    {"pocl-2", {IFA_VENDOR_CPU, 2, 4096, 16, 2 * 1024 * 1024, 0}},      /* 2 AVX-512 cores (Zen 4) */
    {"pocl-2-avx2", {IFA_VENDOR_CPU, 2, 4096, 8, 2 * 1024 * 1024, 0}},  /* 2 AVX2 cores (Zen 3) */
    {"pocl-2-intel", {IFA_VENDOR_CPU_INTEL, 2, 4096, 16, 2 * 1024 * 1024, 0}}, /* 2 AVX-512 Intel Xeon cores */
    {"generic-gpu-64cu", {IFA_VENDOR_GENERIC_GPU, 64, 256, 0, 32 * 1024, 0}},
};

static int usage(FILE *f) {
    fputs("usage: ifa-tiling CASE.json | --shape B,N,N_kv,D,S [options]\n"
          "       ifa-tiling --decode KEY | --sources SHAPE\n"
          "  Prints the plan of a case, or of a shape, as JSON: the device and tuning row, the tiling key, the template\n"
          "  and kernel shape with the candidates weighed for each, every problem and plan field, the build options.\n"
          "  --shape B,N,N_kv,D,S          plan this shape instead of a case file (fp16, BSH, one query token)\n"
          "  --layout BSH|BSND|BNSD        the shape's layout (default BSH)\n"
          "  --dtype T                     the query's and output's dtype (default float16)\n"
          "  --kv-dtype T                  the K/V dtype (default: --dtype's; int8 and int4 with per-channel scales)\n"
          "  --value-dim DV                value_head_dim: the key also the value (MLA: --shape 1,16,1,576,S --value-dim 512)\n"
          "  --lse                         with softmax_lse\n"
          "  --template auto|all_vector|cv the template_mode\n"
          "  --per-batch                   per-batch lengths (each S), as a decode loop passes them\n"
          "  --device-profile NAME         plan for a profile: h100, pocl-2, pocl-2-avx2, pocl-2-intel, generic-gpu-64cu\n"
          "  --device SELECTOR             plan for that OpenCL device (default: $IFA_DEVICE, else the first)\n"
          "  --time                        add plan_ns: validation and planning, averaged over 20000 calls\n"
          "  --domain                      the distinct plans (kernel sets) over batch sizes 1..B and every length\n"
          "  --decode KEY                  explain a tiling key field by field (exit 2 on an illegal one)\n"
          "  --sources SHAPE               kernel shape SHAPE's op_kernel/ files in program order\n"
          "  --help                        this text\n",
          f);
    return f == stdout ? 0 : 2;
}

/* The files of prog (NULL: none) in order, space-separated, into out (size bytes; truncated to fit); 0 for NULL. */
static int program_sources(const ifa__av_program *prog, char *out, size_t size) {
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; prog && i < IFA__ALL_VECTOR_SOURCES && n < size; ++i)
        n += (size_t)snprintf(out + n, size - n, "%s%s", i ? " " : "", prog->sources[i]);
    return prog != NULL;
}

static cJSON *key_fields_json(uint64_t key) {
    int32_t v[IFA_KEY_FIELD_COUNT_];
    if (ifa__key_decode(key, v) != IFA_STATUS_OK) return NULL;
    const ifa_key_field *f = ifa__key_fields();
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < IFA_KEY_FIELD_COUNT_; ++i) {
        cJSON *e = cJSON_AddObjectToObject(o, f[i].name);
        cJSON_AddNumberToObject(e, "digit", f[i].digit);
        cJSON_AddNumberToObject(e, "value", v[i]);
        cJSON_AddStringToObject(e, "meaning", f[i].names[v[i]] ? f[i].names[v[i]] : "?");
    }
    return o;
}

static int decode(const char *text) {
    char *end;
    unsigned long long key = strtoull(text, &end, 10);
    if (end == text || *end) {
        fprintf(stderr, "ifa-tiling: \"%s\" is not a decimal key\n", text);
        return 2;
    }
    cJSON *o = key_fields_json(key);
    if (!o) {
        fprintf(stderr, "ifa-tiling: %s\n", ifa_last_error());
        return 2;
    }
    char *s = cJSON_Print(o);
    printf("%s\n", s);
    free(s);
    cJSON_Delete(o);
    return 0;
}

static void describe(ifa_tensor *t, ifa_dtype dt, int nd, const int64_t *shape) {
    memset(t, 0, sizeof *t);
    t->dtype = dt;
    t->ndim = nd;
    memcpy(t->shape, shape, (size_t)nd * sizeof *shape);
}

/* The tuning table's row names (docs/tiling.md), by ifa_vendor. */
static const char *const tuning_rows[IFA_VENDOR_COUNT_] = {"generic GPU", "NVIDIA", "CPU", "CPU, Intel"};

static cJSON *plan_json(const ifa_plan *p, const ifa_device_facts *dev, const char *device_name) {
    cJSON *o = cJSON_CreateObject();
    cJSON *d = cJSON_AddObjectToObject(o, "device");
    cJSON_AddStringToObject(d, "name", device_name);
    cJSON_AddStringToObject(d, "tuning_row", dev->vendor >= 0 && dev->vendor < IFA_VENDOR_COUNT_
                                                 ? tuning_rows[dev->vendor]
                                                 : tuning_rows[IFA_VENDOR_GENERIC_GPU]);
    cJSON_AddNumberToObject(d, "compute_units", dev->compute_units);
    cJSON_AddNumberToObject(d, "max_work_group_size", dev->max_work_group_size);
    cJSON_AddNumberToObject(d, "local_mem_bytes", (double)dev->local_mem_bytes);
    cJSON_AddNumberToObject(d, "native_float_width", dev->native_float_width);
    cJSON_AddNumberToObject(d, "compute_capability", dev->compute_capability);
    {   /* the row as the planner read it (IFA_TUNING applied), in IFA_TUNING's own form: a start for experiments */
        const ifa_tuning row = ifa__tuning_for(dev->vendor);
        char text[2048];
        if (ifa__tuning_format(&row, text, sizeof text) == 0) cJSON_AddStringToObject(d, "tuning", text);
    }
    char key[32];
    snprintf(key, sizeof key, "%" PRIu64, p->tiling_key);
    cJSON_AddStringToObject(o, "tiling_key", key);
    cJSON_AddItemToObject(o, "key_fields", key_fields_json(p->tiling_key));
    cJSON_AddStringToObject(o, "template", p->template_id == IFA_TEMPLATE_ALL_VECTOR ? "all_vector" : "cv");
    /* the candidates the planner weighed, in order, and why */
    ifa_template_candidate cands[IFA_TEMPLATE_CANDIDATES];
    int32_t chosen;
    const ifa_tuning tuning = ifa__tuning_for(dev->vendor);
    if (ifa__template_choose(&p->problem, &tuning, cands, &chosen) == IFA_STATUS_OK) {
        if (chosen != p->template_id) /* the planner's fallback: all_vector's rows past the device's local memory */
            for (int i = 0; i < IFA_TEMPLATE_CANDIDATES; ++i) {
                cands[i].chosen = cands[i].template_id == p->template_id;
                snprintf(cands[i].reason, sizeof cands[i].reason, "%s",
                         cands[i].chosen ? "all_vector's rows do not fit the device's local memory"
                                         : "its rows do not fit the device's local memory (DEVICE_LIMIT)");
            }
        cJSON *cl = cJSON_AddArrayToObject(o, "template_candidates");
        for (int i = 0; i < IFA_TEMPLATE_CANDIDATES; ++i) {
            cJSON *c = cJSON_CreateObject();
            cJSON_AddStringToObject(c, "template", cands[i].template_id == IFA_TEMPLATE_CV ? "cv" : "all_vector");
            cJSON_AddBoolToObject(c, "applicable", cands[i].applicable);
            cJSON_AddBoolToObject(c, "chosen", cands[i].chosen);
            cJSON_AddStringToObject(c, "reason", cands[i].reason);
            cJSON_AddItemToArray(cl, c);
        }
    }
    cJSON_AddStringToObject(o, "shape", ifa__shape_name(p->shape));
    {   /* the kernel shapes the planner weighed, in order, and why */
        ifa_shape_candidate shapes[IFA_SHAPE_CANDIDATES];
        ifa__plan_shape_candidates(p, dev, shapes);
        cJSON *sl = cJSON_AddArrayToObject(o, "shape_candidates");
        for (int i = 0; i < IFA_SHAPE_CANDIDATES; ++i) {
            cJSON *c = cJSON_CreateObject();
            cJSON_AddStringToObject(c, "shape", ifa__shape_name(shapes[i].shape));
            cJSON_AddBoolToObject(c, "applicable", shapes[i].applicable);
            cJSON_AddBoolToObject(c, "chosen", shapes[i].chosen);
            cJSON_AddStringToObject(c, "reason", shapes[i].reason);
            cJSON_AddItemToArray(sl, c);
        }
    }
    if (p->template_id == IFA_TEMPLATE_CV) /* each step's two matrix products */
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "cv"), "gemm_calls", 2.0 * p->cv_steps);
    cJSON *s = cJSON_AddObjectToObject(o, "split_kv");
    static const char *const algorithms[] = {"none", "partial_rowmax", "global_rowmax", "balanced_units"};
    cJSON_AddStringToObject(s, "algorithm", p->split_kv >= 0 && p->split_kv <= 3 ? algorithms[p->split_kv] : "?");
    int64_t busy = p->num_work_groups < dev->compute_units ? p->num_work_groups : dev->compute_units;
    cJSON_AddNumberToObject(o, "compute_units_busy", (double)busy);
    cJSON_AddNumberToObject(o, "load_ratio", p->load_ratio_milli / 1000.0);
    /* every field of the problem and the plan by its name (include/ifa/plan_fields.h; a flag as a boolean, a hash as a decimal string) */
    cJSON *pr = cJSON_AddObjectToObject(o, "problem"), *pf = cJSON_AddObjectToObject(o, "fields");
#define IFA_FIELD_JSON(obj, value, name, flags)                                                                    \
    if ((flags) & IFA_FIELD_ARRAY) {                                                                               \
        char h_[24];                                                                                               \
        snprintf(h_, sizeof h_, "%" PRIu64, (uint64_t)(value));                                                    \
        cJSON_AddStringToObject(obj, name, h_);                                                                    \
    } else if ((flags) & IFA_FIELD_BOOL) {                                                                         \
        cJSON_AddBoolToObject(obj, name, (value) != 0);                                                            \
    } else if (!((flags) & IFA_FIELD_PAD)) {                                                                       \
        cJSON_AddNumberToObject(obj, name, (double)(value));                                                       \
    }
#define IFA_PROBLEM_FIELD(type, name, flags, doc) IFA_FIELD_JSON(pr, p->problem.name, #name, flags)
#define IFA_PLAN_FIELD(type, name, flags, doc) IFA_FIELD_JSON(pf, p->name, #name, flags)
#include "ifa/plan_fields.h"
#undef IFA_PROBLEM_FIELD
#undef IFA_PLAN_FIELD
#undef IFA_FIELD_JSON
    /* the fused kernel's build options on this device (K/V rows 16-byte aligned, an in-order queue): what
     * NVIDIA's compiler (scripts/nv-regs) or PoCL builds for this plan */
    char opts[2048];
    const ifa__av_program *prog = NULL;
    if (ifa__all_vector_options(p, dev->vendor, 0, opts, sizeof opts, &prog)) {
        cJSON *b = cJSON_AddObjectToObject(o, "build");
        cJSON_AddStringToObject(b, "kernel", prog->kernel);
        char sources[512];
        program_sources(prog, sources, sizeof sources);
        cJSON_AddStringToObject(b, "sources", sources);
        cJSON_AddStringToObject(b, "options", opts);
        if (ifa__all_vector_options(p, dev->vendor, 1, opts, sizeof opts, &prog)) {
            cJSON_AddStringToObject(b, "max_pass_kernel", prog->kernel);
            cJSON_AddStringToObject(b, "max_pass_options", opts);
        }
    }
    return o;
}

/* --domain: the kernel sets, each as the step that first planned it and that step's plan */
typedef struct {
    cJSON *sets;
    const ifa_device_facts *facts;
    const char *device_name;
} domain_state;

static ifa_status add_set(const ifa_plan *plan, void *user) {
    domain_state *d = user;
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "batch", (double)plan->problem.batch);
    cJSON_AddNumberToObject(e, "longest_block_rows", (double)plan->problem.max_length);
    cJSON_AddNumberToObject(e, "rows_in_all", (double)plan->problem.total_length);
    cJSON_AddItemToObject(e, "plan", plan_json(plan, d->facts, d->device_name));
    cJSON_AddItemToArray(d->sets, e);
    return IFA_STATUS_OK;
}

static int print_domain(const ifa_problem *p, const ifa_device_facts *facts, const char *device_name) {
    domain_state d = {cJSON_CreateArray(), facts, device_name};
    int64_t plans = 0, sets = 0;
    if (ifa__plan_domain(p, facts, add_set, &d, &plans, &sets) != IFA_STATUS_OK) {
        fprintf(stderr, "ifa-tiling: %s\n", ifa_last_error());
        cJSON_Delete(d.sets);
        return 2;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "device", device_name);
    cJSON_AddNumberToObject(o, "most_batches", (double)p->batch);
    cJSON_AddStringToObject(o, "lengths", p->lengths_mode == IFA_LENGTHS_PER_BATCH ? "per batch" : "one for every batch");
    cJSON_AddNumberToObject(o, "plans", (double)plans);
    cJSON_AddNumberToObject(o, "kernel_sets", (double)sets);
    cJSON_AddItemToObject(o, "sets", d.sets);
    char *s = cJSON_Print(o);
    printf("%s\n", s);
    free(s);
    cJSON_Delete(o);
    return 0;
}

int main(int argc, char **argv) {
    if (ifa_arg_help(argc, argv)) return usage(stdout);
    const char *case_path = NULL, *profile = NULL, *device = NULL, *shape = NULL, *layout = "BSH", *tmpl = NULL;
    ifa_dtype qdt = IFA_DTYPE_FLOAT16, kvdt = IFA_DTYPE_FLOAT16;
    int lse = 0, timing = 0, kv_set = 0, domain = 0, per_batch = 0;
    long long value_dim = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--decode") == 0 && i + 1 < argc) return decode(argv[i + 1]);
        if (strcmp(argv[i], "--sources") == 0 && argc == 3) {
            char sources[512];
            int32_t shape = IFA_SHAPE_COUNT_;
            for (int32_t s = 0; s < IFA_SHAPE_COUNT_; ++s)
                if (strcmp(argv[2], ifa__shape_name(s)) == 0) shape = s;
            if (!program_sources(ifa__all_vector_program(shape), sources, sizeof sources)) {
                fprintf(stderr, "ifa-tiling: --sources %s: not a kernel shape (", argv[2]);
                for (int32_t s = IFA_SHAPE_NONE + 1; s < IFA_SHAPE_COUNT_; ++s)
                    fprintf(stderr, "%s%s", s > IFA_SHAPE_NONE + 1 ? ", " : "", ifa__shape_name(s));
                fputs(")\n", stderr);
                return 2;
            }
            printf("%s\n", sources);
            return 0;
        }
        if (strcmp(argv[i], "--device-profile") == 0 && i + 1 < argc) profile = argv[++i];
        else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
        else if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc) shape = argv[++i];
        else if (strcmp(argv[i], "--layout") == 0 && i + 1 < argc) layout = argv[++i];
        else if (strcmp(argv[i], "--template") == 0 && i + 1 < argc) tmpl = argv[++i];
        else if (strcmp(argv[i], "--value-dim") == 0 && i + 1 < argc) {
            if (ifa_arg_int("ifa-tiling", argv[i], argv[i + 1], 0, IFA_ARG_NO_MAX, &value_dim) != 0) return 2;
            ++i;
        } else if (strcmp(argv[i], "--dtype") == 0 && i + 1 < argc) {
            if (ifa_arg_dtype("ifa-tiling", argv[i], argv[i + 1], &qdt) != 0) return 2;
            ++i;
        } else if (strcmp(argv[i], "--kv-dtype") == 0 && i + 1 < argc) {
            if (ifa_arg_dtype("ifa-tiling", argv[i], argv[i + 1], &kvdt) != 0) return 2;
            ++i;
            kv_set = 1;
        } else if (strcmp(argv[i], "--lse") == 0) lse = 1;
        else if (strcmp(argv[i], "--time") == 0) timing = 1;
        else if (strcmp(argv[i], "--domain") == 0) domain = 1;
        else if (strcmp(argv[i], "--per-batch") == 0) per_batch = 1;
        else if (argv[i][0] != '-' && !case_path) case_path = argv[i];
        else return ifa_arg_unknown("ifa-tiling", argv[i]), usage(stderr);
    }
    if (!kv_set) kvdt = qdt;
    if (!case_path == !shape || (per_batch && !shape)) return usage(stderr);

    ifa_device_facts facts;
    char device_name[256] = "";
    ifa_context *ctx = NULL;
    if (profile) {
        size_t i = 0;
        while (i < sizeof profiles / sizeof profiles[0] && strcmp(profiles[i].name, profile)) ++i;
        if (i == sizeof profiles / sizeof profiles[0]) {
            /* the names from the table, so that the list cannot fall behind it */
            fprintf(stderr, "ifa-tiling: unknown profile \"%s\" (", profile);
            for (size_t j = 0; j < sizeof profiles / sizeof profiles[0]; ++j)
                fprintf(stderr, "%s%s", j ? ", " : "", profiles[j].name);
            fprintf(stderr, ")\n");
            return 2;
        }
        facts = profiles[i].facts;
        snprintf(device_name, sizeof device_name, "profile %s", profile);
    } else {
        if (ifa_context_create_default(device, &ctx) != IFA_STATUS_OK) {
            fprintf(stderr, "ifa-tiling: %s\n", ifa_last_error());
            return 3;
        }
        facts = ctx->facts;
        snprintf(device_name, sizeof device_name, "%s", ctx->device_name);
    }
    if (ifa_tool_check_env("ifa-tiling", &facts) != 0) {
        if (ctx) ifa_context_destroy(ctx);
        return 2;
    }
    facts = ifa__device_facts_effective(&facts); /* IFA_DEVICE_FACTS, as get_workspace_size reads it */

    ifa_case c;
    ifa_case_init(&c);
    ifa_tensor tq, tk, tv, to, tl, taq;
    int64_t *lens = NULL;
    ifa_case_tensors ct;
    ifa_incre_flash_attention_args a;
    ifa_incre_flash_attention_args_init(&a);
    if (case_path) {
        char err[512];
        if (ifa_case_load(case_path, &c, err, sizeof err) != 0) {
            fprintf(stderr, "ifa-tiling: bad case: %s\n", err);
            ifa_context_destroy(ctx);
            return 2;
        }
        /* planning only: descriptors without buffers */
        ifa_host_tensor out_host, lse_host;
        ifa_case_output_forms(&c, &out_host, &lse_host);
        ifa_case_describe(&c, &out_host, c.softmax_lse_flag ? &lse_host : NULL, NULL, &ct, &a);
    } else {
        long long d5[5];
        if (ifa_arg_int_list("ifa-tiling", "--shape", shape, "B,N,N_kv,D,S", 5, 0, d5) != 0) {
            ifa_context_destroy(ctx);
            return 2;
        }
        const long long b = d5[0], n = d5[1], nkv = d5[2], d = d5[3], s = d5[4];
        int bnsd = strcmp(layout, "BNSD") == 0, bsh = strcmp(layout, "BSH") == 0;
        int64_t qs[4] = {b, bnsd ? n : 1, bnsd ? 1 : n, d}, ks[4] = {b, bnsd ? nkv : s, bnsd ? s : nkv, d};
        int64_t qs3[3] = {b, 1, n * d}, ks3[3] = {b, s, nkv * d};
        describe(&tq, qdt, bsh ? 3 : 4, bsh ? qs3 : qs);
        describe(&tk, kvdt, bsh ? 3 : 4, bsh ? ks3 : ks);
        tv = tk, to = tq;
        if (value_dim > 0) /* latent attention: the output has D_v for D */
            to.shape[to.ndim - 1] = bsh ? n * value_dim : value_dim;
        a.num_heads = n, a.num_key_value_heads = nkv, a.input_layout = layout, a.value_head_dim = value_dim;
        int64_t lse_shape[3] = {tq.shape[0], a.num_heads, 1};
        describe(&tl, IFA_DTYPE_FLOAT32, 3, lse_shape);
        a.query = &tq, a.key = &tk, a.value = &tv, a.attention_out = &to, a.softmax_lse = lse ? &tl : NULL;
        /* integer K/V: per-channel scales and offsets in float16, as ifa-bench's default (--scales channel) */
        const int64_t aq_shape[3] = {2, nkv, d};
        describe(&taq, IFA_DTYPE_FLOAT16, 3, aq_shape);
        if (kvdt == IFA_DTYPE_INT8 || kvdt == IFA_DTYPE_INT4) a.antiquant_scale = a.antiquant_offset = &taq;
        if (per_batch && b > 0) {
            if (!(lens = malloc((size_t)b * sizeof *lens))) {
                fprintf(stderr, "ifa-tiling: no memory for %lld lengths\n", b);
                ifa_context_destroy(ctx);
                return 3;
            }
            for (long long i = 0; i < b; ++i) lens[i] = s;
            a.actual_seq_lengths = lens, a.actual_seq_lengths_count = b;
        }
    }

    if (tmpl) a.template_mode = tmpl;
    int rc = 0;
    ifa_problem problem;
    ifa_plan plan;
    if (ifa__ifa_check_args(&a, &problem) != IFA_STATUS_OK || ifa__plan_make(&problem, &facts, &plan) != IFA_STATUS_OK) {
        fprintf(stderr, "ifa-tiling: %s\n", ifa_last_error());
        rc = 2;
    } else if (domain) {
        rc = print_domain(&problem, &facts, device_name);
    } else {
        cJSON *o = plan_json(&plan, &facts, device_name);
        if (timing) {
            /* validation + planning, as get_workspace_size does on every decode step */
            const int reps = 20000;
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            for (int i = 0; i < reps; ++i) {
                ifa__ifa_check_args(&a, &problem);
                ifa__plan_make(&problem, &facts, &plan);
            }
            clock_gettime(CLOCK_MONOTONIC, &t1);
            double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / reps;
            cJSON_AddNumberToObject(o, "plan_ns", ns);
        }
        char *s = cJSON_Print(o);
        printf("%s\n", s);
        free(s);
        cJSON_Delete(o);
    }
    free(lens);
    ifa_case_free(&c);
    ifa_context_destroy(ctx);
    return rc;
}
