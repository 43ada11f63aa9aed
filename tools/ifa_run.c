#define _POSIX_C_SOURCE 200809L /* clock_gettime */
/* ifa-run: the standalone op tester. Runs cases (JSON, docs/case-format.md) of any ifa op on an OpenCL
 * device: one file, several, a directory of *.json, or a batch file with one case per line (.jsonl).
 *   --mode run (default): run, write outputs with --out, compare with the float64 reference with --check;
 *   --mode test: run and check every case; --mode perf: build the kernels apart (timed), then run --runs times and
 *   report the median kernel time;
 *   --mode support: plan only: whether the device takes the case, and the template, tiling key and workspace.
 * Ops: IncreFlashAttention (attention_out.npy, softmax_lse.npy), MergeAttentionStates (merged_output.npy,
 * merged_lse.npy), KVCacheAppend (key_cache.npy, value_cache.npy and the scales it writes). With more than one case a summary line "N passed, N failed" ends the output.
 * Exit status: 0 ran (and passed), 1 a check failed, 2 a bad case or usage, 3 a device or runtime failure
 * (the worst over all cases). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/append_check.h"
#include "common/args.h"
#include "common/bench_variants.h"
#include "common/env_check.h"
#include "common/generic_run.h"
#include "common/case.h"
#include "common/generic_case.h"
#include "common/merge_case.h"
#include "common/npy.h"
#include "op_host/runtime/context.h"
#include "tiling/kernel_shape.h"

static int usage(FILE *f) {
    fputs("usage: ifa-run CASE.json|DIR|BATCH.jsonl [...] [options]\n"
          "  Runs IncreFlashAttention, KVCacheAppend and MergeAttentionStates cases (docs/case-format.md): case files,\n"
          "  folders of *.json cases, .jsonl batches (a case a line). Exit 0, 1 on a failed check, 2 on a bad case or\n"
          "  option, 3 on a device failure (over many cases: the worst).\n"
          "  --mode run|test|perf|support  run (default): run and write outputs; test: run and check each, then\n"
          "                                \"N passed, N failed\"; perf: the build's time (kernels built apart), then\n"
          "                                the median kernel time; support: plan only\n"
          "  --check                       compare each output with the float64 reference (exit 1 on a failure)\n"
          "  --out DIR                     write each case's outputs (.npy) to DIR, all of them or none\n"
          "  --runs N                      perf mode's timed runs (default 10)\n"
          "  --device SELECTOR             P:D (platform and device index, as clinfo -l) or part of a device name;\n"
          "                                default: $IFA_DEVICE, else the first device\n"
          "  --template auto|all_vector|cv IncreFlashAttention cases run with that template_mode, whatever their attrs say\n"
          "  --buffer-create               key and value in ifa_buffer_create's buffers (on a CPU, from 2 MiB up, host\n"
          "                                memory in whole 2 MiB pages), as ifa-bench times them\n"
          "  --far-kv                      key and value (KVCacheAppend's caches) at the end of the largest buffer the\n"
          "                                device allocates (up to 9 GiB; PoCL: 2 GiB): the kernels index past 2^31 bytes\n"
          "  --json                        one JSON object a case on stdout instead of the text lines (case, device,\n"
          "                                op, plan, times, check, error, exit)\n"
          "  --help                        this text\n",
          f);
    return f == stdout ? 0 : 2;
}

enum mode { MODE_RUN, MODE_TEST, MODE_PERF, MODE_SUPPORT };

typedef struct options {
    enum mode mode;
    int check, runs;
    const char *out_dir;
    const char *template_mode; /* NULL: each case's own */
    int buffer_create;         /* key and value in ifa_buffer_create's buffers */
    int far_kv;                /* key and value at the end of the largest buffer the device allocates */
    int json;                  /* --json */
    const char *device;        /* the device's name, for --json's objects */
} options;

/* --json: the current case's object, which the report lines below fill instead of printing; NULL otherwise */
static cJSON *report;

/* Adds number v under key to the current case's object (a nested object's where sub is not NULL). */
static void report_num(const char *sub, const char *key, double v) {
    cJSON *o = sub ? cJSON_GetObjectItemCaseSensitive(report, sub) : report;
    if (sub && !o) o = cJSON_AddObjectToObject(report, sub);
    cJSON_AddNumberToObject(o, key, v);
}

static void report_str(const char *key, const char *v) { cJSON_AddStringToObject(report, key, v); }

/* A case that could not be read: 3 when memory ran out (a resource failure), else 2; the message printed. */
static int bad_case(const char *err) {
    if (report) report_str("error", err);
    const int memory = ifa_case_no_memory(err);
    fprintf(stderr, "ifa-run: %s%s\n", memory ? "" : "bad case: ", err);
    return memory ? 3 : 2;
}

/* 2 for a status that says the case is wrong, 3 for one that says the device or runtime failed. */
static int status_exit(ifa_status st) {
    const int wrong_case = st != IFA_STATUS_OPENCL_ERROR && st != IFA_STATUS_BUILD_FAILED &&
                           st != IFA_STATUS_OUT_OF_MEMORY && st != IFA_STATUS_NO_DEVICE &&
                           st != IFA_STATUS_DEVICE_LIMIT && st != IFA_STATUS_INTERNAL;
    return wrong_case ? 2 : 3;
}

/* --out is all or nothing: before a case runs, the files of its outputs' names in out_dir go (clear_outputs), so that
 * none of an earlier run is taken for this one's; its outputs are then written to NAME.partial and renamed into place
 * only once every one is complete (write_outputs), so that a failed or killed run leaves no truncated NAME. */
static void clear_outputs(const char *out_dir, const char *const *names, int n) {
    char p[4096];
    for (int i = 0; out_dir && i < n; ++i) {
        snprintf(p, sizeof p, "%s/%s", out_dir, names[i]);
        (void)unlink(p);
    }
}

/* Writes each (name, tensor) pair with a non-NULL tensor to out_dir as above; 0, or 3 with the message printed. */
static int write_outputs(const char *out_dir, const char *const *names, const ifa_host_tensor *const *ts, int n) {
    char p[4096], part[4200];
    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "ifa-run: cannot make %s: %s\n", out_dir, strerror(errno));
        return 3;
    }
    int written = 0, rc = 0;
    for (; written < n && rc == 0; ++written) {
        if (!ts[written]) continue;
        snprintf(part, sizeof part, "%s/%s.partial", out_dir, names[written]);
        errno = 0;
        if (ifa_npy_write(part, ts[written]) != 0) {
            fprintf(stderr, "ifa-run: cannot write %s: %s\n", part, errno ? strerror(errno) : "no .npy dtype for it");
            rc = 3;
        }
    }
    for (int i = 0; i < written; ++i) {
        if (!ts[i]) continue;
        snprintf(part, sizeof part, "%s/%s.partial", out_dir, names[i]);
        snprintf(p, sizeof p, "%s/%s", out_dir, names[i]);
        if (rc != 0) {
            (void)unlink(part);
        } else if (rename(part, p) != 0) {
            fprintf(stderr, "ifa-run: cannot rename %s to %s: %s\n", part, p, strerror(errno));
            rc = 3;
        } else {
            printf("wrote %s\n", p);
        }
    }
    return rc;
}

static int run_merge(ifa_context *ctx, cl_command_queue q, const char *text, const char *base, const options *o) {
    const char *out_dir = o->out_dir;
    const int check = o->check;
    char err[1024];
    static const char *const names[] = {"merged_output.npy", "merged_lse.npy"};
    clear_outputs(out_dir, names, 2);
    ifa_merge_case c;
    if (ifa_merge_case_parse(text, base, &c, err, sizeof err) != 0) return bad_case(err);
    ifa_merge_result r;
    memset(&r, 0, sizeof r);
    int rc = 0;
    if (o->mode == MODE_SUPPORT) {
        const ifa_tensor po = {NULL, 0, c.partial_outputs.dtype, c.partial_outputs.ndim, {0}};
        ifa_tensor pl = {NULL, 0, c.partial_lses.dtype, c.partial_lses.ndim, {0}}, mo = {NULL, 0, c.out_dtype, 0, {0}};
        ifa_tensor t[3] = {po, pl, mo};
        memcpy(t[0].shape, c.partial_outputs.shape, sizeof t[0].shape), memcpy(t[1].shape, c.partial_lses.shape, sizeof t[1].shape);
        t[2].ndim = po.ndim - 1, memcpy(t[2].shape, c.partial_outputs.shape + 1, sizeof t[2].shape - sizeof t[2].shape[0]);
        const ifa_merge_attention_states_args a = {&t[0], &t[1], &t[2], NULL};
        size_t ws;
        const ifa_status ss = ifa_merge_attention_states_get_workspace_size(ctx, &a, &ws);
        if (report) {
            report_str("op", "MergeAttentionStates");
            cJSON_AddBoolToObject(report, "supported", ss == IFA_STATUS_OK);
            if (ss == IFA_STATUS_OK) report_num(NULL, "workspace", (double)ws);
            else report_str("error", ifa_last_error());
        } else if (ss == IFA_STATUS_OK) printf("support: MergeAttentionStates supported, workspace=%zu\n", ws);
        else printf("support: not supported: %s\n", ifa_last_error());
        ifa_merge_case_free(&c);
        return ss == IFA_STATUS_OK ? 0 : status_exit(ss);
    }
    ifa_status st = ifa_merge_case_run(ctx, q, &c, &r);
    if (st != IFA_STATUS_OK) {
        fprintf(stderr, "ifa-run: %s\n", r.error);
        if (report) report_str("error", r.error);
        rc = status_exit(st);
    } else {
        const long long parts = (long long)c.partial_outputs.shape[0],
                        rows = (long long)(ifa_host_tensor_numel(&c.partial_lses) / c.partial_outputs.shape[0]),
                        cols = (long long)c.partial_outputs.shape[c.partial_outputs.ndim - 1];
        if (report) {
            report_str("op", "MergeAttentionStates");
            report_num(NULL, "parts", (double)parts), report_num(NULL, "rows", (double)rows);
            report_num(NULL, "D", (double)cols), report_str("out", ifa_dtype_name(c.out_dtype));
        } else {
            printf("case: MergeAttentionStates parts=%lld rows=%lld D=%lld out=%s\n", parts, rows, cols,
                   ifa_dtype_name(c.out_dtype));
        }
        const ifa_host_tensor *ts[] = {&r.out, c.lse_flag ? &r.lse : NULL};
        if (out_dir) rc = write_outputs(out_dir, names, ts, 2);
        if (rc == 0 && check) {
            ifa_merge_case_check(&c, &r);
            if (report) {
                cJSON_AddBoolToObject(cJSON_AddObjectToObject(report, "check"), "pass", r.pass);
                report_num("check", "rel_l2", r.rel_l2), report_num("check", "tolerance", r.tolerance);
                report_num("check", "nonfinite", (double)r.nonfinite);
                report_num("check", "lse_rows_out_of_bound", (double)r.lse_bad);
            } else {
                printf("check: rel_l2=%.3g (tolerance %.0e) nonfinite=%lld lse_rows_out_of_bound=%lld -> %s\n",
                       r.rel_l2, r.tolerance, (long long)r.nonfinite, (long long)r.lse_bad, r.pass ? "PASS" : "FAIL");
            }
            rc = r.pass ? 0 : 1;
        }
    }
    ifa_merge_result_free(&r);
    ifa_merge_case_free(&c);
    return rc;
}


/* KVCacheAppend, through the registry's generic call: the caches (and scales) it writes are read back,
 * written to --out as key_cache.npy, value_cache.npy, antiquant_scale.npy, antiquant_offset.npy and, with
 * --check, compared with the float64 append. */
static int run_append(ifa_context *ctx, cl_command_queue q, const char *text, const char *base, const options *o) {
    char err[1024];
    static const char *const names[IFA_GENERIC_WRITTEN] = {
        "key_cache.npy",           "value_cache.npy",          "antiquant_scale.npy",
        "antiquant_offset.npy",    "key_antiquant_scale.npy",  "key_antiquant_offset.npy",
        "value_antiquant_scale.npy", "value_antiquant_offset.npy"};
    clear_outputs(o->out_dir, names, IFA_GENERIC_WRITTEN);
    ifa_generic_case c;
    if (ifa_generic_case_parse(text, base, &c, err, sizeof err) != 0) return bad_case(err);
    const int support = o->mode == MODE_SUPPORT;
    if (o->far_kv && !(c.cache_base_bytes = ifa_generic_case_far_caches_base(ifa_context_device(ctx), &c))) {
        fprintf(stderr, "ifa-run: --far-kv: the device allocates no buffer 8 KiB past the caches\n");
        ifa_generic_case_free(&c);
        return 3;
    }
    ifa_generic_run r;
    size_t ws_bytes = 0;
    const ifa_status st = ifa_generic_case_run(ctx, q, &c, ifa_append_written, support, &ws_bytes, &r);
    int rc = 0;
    if (report) report_str("op", c.def->name);
    if (support) {
        if (report) {
            cJSON_AddBoolToObject(report, "supported", st == IFA_STATUS_OK);
            if (st == IFA_STATUS_OK) report_num(NULL, "workspace", (double)ws_bytes);
            else report_str("error", ifa_last_error());
        } else if (st == IFA_STATUS_OK) printf("support: %s supported, workspace=%zu\n", c.def->name, ws_bytes);
        else printf("support: not supported: %s\n", ifa_last_error());
        rc = st == IFA_STATUS_OK ? 0 : status_exit(st);
    } else if (st != IFA_STATUS_OK) {
        fprintf(stderr, "ifa-run: %s\n", r.error);
        if (report) report_str("error", r.error);
        rc = status_exit(st);
    } else {
        int nt = 0;
        for (int i = 0; i < c.def->num_inputs; ++i) nt += c.inputs[i].data != NULL;
        if (report) {
            report_num(NULL, "tensors", nt), report_num(NULL, "attributes", (double)c.num_attrs);
            report_num(NULL, "first_run_device_ms", r.device_ms);
        } else {
            printf("case: %s, %d tensors, %d attributes\nkernel time: %.3f ms\n", c.def->name, nt, (int)c.num_attrs,
                   r.device_ms);
        }
        const ifa_host_tensor *outs[IFA_GENERIC_WRITTEN];
        ifa_append_after(&r, outs);
        if (o->out_dir) rc = write_outputs(o->out_dir, names, outs, IFA_GENERIC_WRITTEN);
        ifa_append_check k;
        if (rc == 0 && o->check && ifa_append_case_check(&c, outs, &k) != 0) {
            fprintf(stderr, "ifa-run: the reference could not be computed\n");
            rc = 3;
        } else if (rc == 0 && o->check && report) {
            cJSON_AddBoolToObject(cJSON_AddObjectToObject(report, "check"), "pass", k.pass);
            report_num("check", "rows", (double)k.rows), report_num("check", "bad_rows", (double)k.bad_rows);
            report_num("check", "worst_error_over_bound", k.worst);
            report_num("check", "changed_elsewhere", (double)k.changed);
            rc = k.pass ? 0 : 1;
        } else if (rc == 0 && o->check) {
            printf("check: rows=%lld bad_rows=%lld worst_error/bound=%.3g changed_elsewhere=%lld -> %s\n",
                   (long long)k.rows, (long long)k.bad_rows, k.worst, (long long)k.changed, k.pass ? "PASS" : "FAIL");
            rc = k.pass ? 0 : 1;
        }
        ifa_generic_run_free(&r);
    }
    ifa_generic_case_free(&c);
    return rc;
}

/* --mode perf: the case's kernels built ahead of its runs (ifa_incre_flash_attention_prepare over descriptors without
 * buffers), so that the first run's time holds no build; prints (or reports) the build's wall time and kernel sets. */
static void prepare_ifa(ifa_context *ctx, cl_command_queue q, const ifa_case *c) {
    ifa_host_tensor out, lse;
    ifa_case_output_forms(c, &out, &lse);
    ifa_case_tensors t;
    ifa_incre_flash_attention_args a;
    ifa_case_describe(c, &out, c->softmax_lse_flag ? &lse : NULL, NULL, &t, &a);
    struct timespec t0, t1;
    int64_t sets = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const ifa_status st = ifa_incre_flash_attention_prepare(ctx, &a, q, &sets);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
    if (st != IFA_STATUS_OK) return; /* the run reports what is wrong */
    if (report) {
        report_num("build", "ms", ms), report_num("build", "kernel_sets", (double)sets);
        return;
    }
    printf("build: %.1f ms for %lld kernel sets (ifa_incre_flash_attention_prepare: each batch size and length up to "
           "the case's; PoCL's code generation included)\n", ms, (long long)sets);
}

/* Plans an IncreFlashAttention case without buffers and says whether the device takes it. */
static int support_ifa(ifa_context *ctx, const ifa_case *c) {
    ifa_host_tensor out, lse;
    ifa_case_output_forms(c, &out, &lse);
    ifa_case_tensors t;
    ifa_incre_flash_attention_args a;
    ifa_case_describe(c, &out, c->softmax_lse_flag ? &lse : NULL, NULL, &t, &a);
    ifa_plan plan;
    size_t ws;
    const ifa_status st = ifa_incre_flash_attention_get_workspace_size(ctx, &a, &plan, &ws);
    if (report) {
        report_str("op", "IncreFlashAttention");
        cJSON_AddBoolToObject(report, "supported", st == IFA_STATUS_OK);
        if (st != IFA_STATUS_OK) return report_str("error", ifa_last_error()), status_exit(st);
        char key[24];
        snprintf(key, sizeof key, "%llu", (unsigned long long)plan.tiling_key);
        report_str("template", plan.template_id == IFA_TEMPLATE_ALL_VECTOR ? "all_vector" : "cv");
        report_str("tiling_key", key), report_str("shape", ifa__shape_name(plan.shape));
        report_num(NULL, "workspace", (double)ws), report_num(NULL, "local_mem", (double)plan.local_mem_bytes);
        return 0;
    }
    if (st != IFA_STATUS_OK) {
        printf("support: not supported: %s\n", ifa_last_error());
        return status_exit(st);
    }
    printf("support: supported: template=%s tiling_key=%llu work_group=%d chunk=%d heads/group=%d split_kv=%d "
           "workspace=%zu local_mem=%lld\n", plan.template_id == IFA_TEMPLATE_ALL_VECTOR ? "all_vector" : "cv",
           (unsigned long long)plan.tiling_key, (int)plan.work_group_size, (int)plan.chunk_rows,
           (int)plan.heads_per_group, (int)plan.split_kv, ws, (long long)plan.local_mem_bytes);
    return 0;
}

/* One case's text (base: the folder its relative paths start from): 0 ran or passed, 1 failed, 2 bad case,
 * 3 device or runtime failure. */
static int run_case(ifa_context *ctx, cl_command_queue q, const char *text, const char *base, const options *o) {
    char err[1024];
    /* the op decides the case format */
    cJSON *root = cJSON_Parse(text);
    const cJSON *opj = root ? cJSON_GetObjectItemCaseSensitive(root, "op") : NULL;
    const int merge = cJSON_IsString(opj) && strcmp(opj->valuestring, "MergeAttentionStates") == 0;
    const int append = cJSON_IsString(opj) && strcmp(opj->valuestring, "KVCacheAppend") == 0;
    cJSON_Delete(root);
    if (merge) return run_merge(ctx, q, text, base, o);
    if (append) return run_append(ctx, q, text, base, o);
    static const char *const names[] = {"attention_out.npy", "softmax_lse.npy"};
    clear_outputs(o->out_dir, names, 2);
    ifa_case c;
    if (ifa_case_parse(text, base, &c, err, sizeof err) != 0) {
        return bad_case(err);
    }
    if (o->template_mode) snprintf(c.template_mode, sizeof c.template_mode, "%s", o->template_mode);
    c.kv_from_buffer_create = o->buffer_create;
    if (o->far_kv && !(c.kv_base_bytes = ifa_case_far_kv_base(ifa_context_device(ctx), &c))) {
        fprintf(stderr, "ifa-run: --far-kv: the device allocates no buffer 8 KiB past the key and value\n");
        ifa_case_free(&c);
        return 3;
    }
    if (o->mode == MODE_SUPPORT) {
        const int rc = support_ifa(ctx, &c);
        ifa_case_free(&c);
        return rc;
    }
    if (o->mode == MODE_PERF) prepare_ifa(ctx, q, &c);
    int rc = 0;
    ifa_case_result r;
    memset(&r, 0, sizeof r);
    ifa_status st = ifa_case_run(ctx, q, &c, NULL, NULL, &r);
    if (st != IFA_STATUS_OK) {
        fprintf(stderr, "ifa-run: %s\n", r.error);
        if (report) report_str("error", r.error);
        rc = status_exit(st);
        goto done;
    }
    const ifa_problem *pr = &r.plan.problem;
    char dv[48] = "";
    if (pr->value_dim != pr->head_dim)
        snprintf(dv, sizeof dv, " D_v=%lld%s", (long long)pr->value_dim, c.value_is_key ? " (value=key)" : "");
    if (report) {
        char key[24];
        snprintf(key, sizeof key, "%llu", (unsigned long long)r.plan.tiling_key);
        report_str("op", "IncreFlashAttention");
        report_num(NULL, "B", (double)pr->batch), report_num(NULL, "N", (double)pr->num_heads);
        report_num(NULL, "N_kv", (double)pr->num_kv_heads), report_num(NULL, "D", (double)pr->head_dim);
        report_num(NULL, "D_v", (double)pr->value_dim), report_num(NULL, "S1", (double)pr->seq_q);
        report_num(NULL, "S_kv", (double)pr->seq_kv), report_str("layout", c.input_layout);
        report_str("q", ifa_dtype_name(c.query.dtype)), report_str("kv", ifa_dtype_name(c.key.dtype));
        report_str("template", r.plan.template_id == IFA_TEMPLATE_ALL_VECTOR ? "all_vector" : "cv");
        report_str("tiling_key", key), report_str("shape", ifa__shape_name(r.plan.shape));
        /* the first run on fresh buffers: PoCL maps the pages inside it, and without --mode perf's build first,
         * generates the kernel's code there too */
        report_num(NULL, "first_run_device_ms", r.device_ms);
    } else {
    printf("case: B=%lld N=%lld N_kv=%lld D=%lld%s S1=%lld S_kv=%lld layout=%s q=%s kv=%s%s%s%s%s%s%s%s%s%s; tiling_key=%llu "
           "work_group=%d chunk=%d heads/group=%d split_kv=%d\n",
           (long long)pr->batch, (long long)pr->num_heads, (long long)pr->num_kv_heads, (long long)pr->head_dim, dv,
           (long long)pr->seq_q, (long long)pr->seq_kv, c.input_layout, ifa_dtype_name(c.query.dtype),
           ifa_dtype_name(c.key.dtype), pr->causal ? " causal" : "",
           pr->mask_kind == IFA_MASK_PER_TOKEN ? " mask=per_token" : pr->mask_kind ? " mask=per_batch" : "",
           pr->pse_kind ? " pse" : "", pr->softcap_bits ? " softcap" : "", pr->window ? " window" : "",
           pr->has_sinks ? " sinks" : "", pr->alibi ? " alibi" : "",
           pr->paged ? " paged" : pr->has_kv_padding ? " kv_padding" : "", pr->rope ? " rope" : "",
           (unsigned long long)r.plan.tiling_key, (int)r.plan.work_group_size, (int)r.plan.chunk_rows,
           (int)r.plan.heads_per_group, (int)r.plan.split_kv);
    /* one run on buffers just created: PoCL maps their pages on first touch, inside this time */
    printf("kernel time: %.3f ms (first run on fresh buffers%s)\n", r.device_ms,
           o->mode == MODE_PERF ? ", kernels built before it" : ", its kernel builds included; --mode perf builds apart");
    }
    if (o->mode == MODE_PERF) {
        /* the first run built the kernels; the median of the next runs' kernel times */
        double *t = malloc((size_t)o->runs * sizeof *t);
        int n = 0;
        for (int i = 0; t && i < o->runs; ++i) {
            ifa_case_result ri;
            if (ifa_case_run(ctx, q, &c, NULL, NULL, &ri) == IFA_STATUS_OK) t[n++] = ri.device_ms;
            ifa_case_result_free(&ri);
        }
        if (n > 0) {
            ifa_bench_sort(t, n);
            if (report) {
                report_num("perf", "median_ms", t[n / 2]), report_num("perf", "min_ms", t[0]);
                report_num("perf", "runs", n);
            } else {
                printf("perf: median %.4f ms, min %.4f ms over %d runs\n", t[n / 2], t[0], n);
            }
        }
        free(t);
        rc = n == o->runs ? 0 : 3;
        goto done;
    }
    if (o->out_dir) {
        const ifa_host_tensor *ts[] = {&r.out, c.softmax_lse_flag ? &r.lse : NULL};
        if ((rc = write_outputs(o->out_dir, names, ts, 2)) != 0) goto done;
    }
    if (o->check) {
        ifa_case_check k;
        if (ifa_case_check_result(&c, &r, &k) != 0) {
            fprintf(stderr, "ifa-run: the reference could not be computed\n");
            rc = 3;
            goto done;
        }
        if (report) {
            cJSON_AddBoolToObject(cJSON_AddObjectToObject(report, "check"), "pass", k.pass);
            report_num("check", "rel_l2", k.rel_l2), report_num("check", "tolerance", k.tolerance);
            report_num("check", "max_abs", k.max_abs), report_num("check", "nonfinite", (double)k.nonfinite);
            report_num("check", "lse_rows_out_of_bound", (double)k.lse_bad);
            report_num("check", "bytes_outside", (double)k.outside);
            report_num("check", "round_bias_ulp", k.round_bias);
        } else {
            printf("check: rel_l2=%.3g (tolerance %.0e) max_abs=%.3g nonfinite=%lld lse_rows_out_of_bound=%lld "
                   "bytes_outside=%lld round_bias=%.3f ulp -> %s\n",
                   k.rel_l2, k.tolerance, k.max_abs, (long long)k.nonfinite, (long long)k.lse_bad, (long long)k.outside,
                   k.round_bias, k.pass ? "PASS" : "FAIL");
        }
        rc = k.pass ? 0 : 1;
    }
done:
    ifa_case_result_free(&r);
    ifa_case_free(&c);
    return rc;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

typedef struct tally {
    int passed, failed, worst;
} tally;

static void count(tally *t, int rc) {
    if (rc == 0) t->passed++;
    else t->failed++;
    if (rc > t->worst) t->worst = rc;
}

/* Runs one case's text and counts it; with --json, its object (case: name) on one line of stdout, else a header
 * line naming it where header is set. */
static void run_one(ifa_context *ctx, cl_command_queue q, const char *text, const char *base, const options *o,
                    tally *t, const char *name, int header) {
    if (o->json) {
        report = cJSON_CreateObject();
        report_str("case", name), report_str("device", o->device);
    } else if (header) { /* one of a folder's or a batch's cases */
        printf("== %s\n", name);
    }
    const int rc = run_case(ctx, q, text, base, o);
    if (report) {
        report_num(NULL, "exit", rc);
        char *line = cJSON_PrintUnformatted(report);
        if (line) printf("%s\n", line);
        free(line);
        cJSON_Delete(report);
        report = NULL;
    }
    count(t, rc);
}

/* One argument: a case file, a .jsonl batch (a case per non-empty line) or a directory of *.json cases (depth 0: the
 * argument itself; a folder inside it is no case). */
static void run_path(ifa_context *ctx, cl_command_queue q, const char *path, const options *o, tally *t, int depth) {
    char err[1024], base[4096];
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (depth > 0) { /* a folder among a folder's cases (one named x.json): not a case */
            fprintf(stderr, "ifa-run: bad case: %s is a folder, not a case file\n", path);
            count(t, 2);
            return;
        }
        DIR *d = opendir(path);
        if (!d) {
            fprintf(stderr, "ifa-run: %s: cannot open the folder: %s\n", path, strerror(errno));
            count(t, 2);
            return;
        }
        char **names = NULL;
        size_t n = 0, cap = 0;
        int no_memory = 0;
        const size_t dlen = strlen(path);
        const int slash = dlen > 0 && path[dlen - 1] == '/'; /* "examples/" joins as examples/x.json */
        for (struct dirent *e; !no_memory && (e = readdir(d));) {
            const size_t len = strlen(e->d_name);
            if (len < 5 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
            if (n == cap) {
                char **m = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *m);
                if (!m) {
                    no_memory = 1;
                    break;
                }
                names = m;
            }
            const size_t plen = dlen + len + 2;
            if (!(names[n] = malloc(plen))) {
                no_memory = 1;
                break;
            }
            snprintf(names[n++], plen, "%s%s%s", path, slash ? "" : "/", e->d_name);
        }
        closedir(d);
        if (no_memory) {
            fprintf(stderr, "ifa-run: %s: out of memory listing the cases\n", path);
            count(t, 3);
        } else if (n == 0) {
            fprintf(stderr, "ifa-run: bad case: %s is a folder with no *.json cases\n", path);
            count(t, 2);
        } else {
            qsort(names, n, sizeof *names, cmp_str);
        }
        for (size_t i = 0; i < n; ++i) {
            if (!no_memory) run_path(ctx, q, names[i], o, t, depth + 1);
            free(names[i]);
        }
        free(names);
        return;
    }
    char *text = ifa_case_read_file(path, base, sizeof base, err, sizeof err);
    if (!text) {
        fprintf(stderr, "ifa-run: bad case: %s\n", err);
        count(t, 2);
        return;
    }
    const size_t len = strlen(path);
    if (len > 6 && strcmp(path + len - 6, ".jsonl") == 0) {
        int line = 0;
        for (char *s = text, *nl; s && *s; s = nl ? nl + 1 : NULL) {
            nl = strchr(s, '\n');
            if (nl) *nl = '\0';
            ++line;
            if (strspn(s, " \t\r") == strlen(s)) continue;
            char name[4200];
            snprintf(name, sizeof name, "%s:%d", path, line);
            run_one(ctx, q, s, base, o, t, name, 1);
        }
    } else {
        run_one(ctx, q, text, base, o, t, path, depth > 0);
    }
    free(text);
}

int main(int argc, char **argv) {
    if (ifa_arg_help(argc, argv)) return usage(stdout);
    options o = {.mode = MODE_RUN, .runs = 10};
    const char *device = NULL;
    const char *paths[256];
    int npaths = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) o.out_dir = argv[++i];
        else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            if (ifa_arg_int32("ifa-run", argv[i], argv[i + 1], 1, 1000000, &o.runs) != 0) return 2;
            ++i;
        }
        else if (strcmp(argv[i], "--check") == 0) o.check = 1;
        else if (strcmp(argv[i], "--buffer-create") == 0) o.buffer_create = 1;
        else if (strcmp(argv[i], "--far-kv") == 0) o.far_kv = 1;
        else if (strcmp(argv[i], "--json") == 0) o.json = 1;
        else if (strcmp(argv[i], "--template") == 0 && i + 1 < argc) o.template_mode = argv[++i];
        else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
            const char *m = argv[++i];
            if (strcmp(m, "run") == 0) o.mode = MODE_RUN;
            else if (strcmp(m, "test") == 0) o.mode = MODE_TEST, o.check = 1;
            else if (strcmp(m, "perf") == 0) o.mode = MODE_PERF;
            else if (strcmp(m, "support") == 0) o.mode = MODE_SUPPORT;
            else return fprintf(stderr, "ifa-run: --mode %s: want run, test, perf or support\n", m), 2;
        } else if (argv[i][0] != '-' && npaths < 256) paths[npaths++] = argv[i];
        else return ifa_arg_unknown("ifa-run", argv[i]), usage(stderr);
    }
    if (npaths == 0 || o.runs < 1) return usage(stderr);

    ifa_context *ctx = NULL;
    if (ifa_context_create_default(device, &ctx) != IFA_STATUS_OK) {
        fprintf(stderr, "ifa-run: %s\n", ifa_last_error());
        return 3;
    }
    if (ifa_tool_check_env("ifa-run", &ctx->facts) != 0) {
        ifa_context_destroy(ctx);
        return 2;
    }
    char name[256] = "";
    clGetDeviceInfo(ifa_context_device(ctx), CL_DEVICE_NAME, sizeof name - 1, name, NULL);
    cl_int cerr;
    cl_command_queue q = clCreateCommandQueue(ifa_context_cl_context(ctx), ifa_context_device(ctx),
                                              CL_QUEUE_PROFILING_ENABLE, &cerr);
    if (!q) {
        fprintf(stderr, "ifa-run: clCreateCommandQueue failed (%d)\n", (int)cerr);
        ifa_context_destroy(ctx);
        return 3;
    }
    o.device = name;
    if (!o.json) printf("device: %s\n", name);
    tally t = {0, 0, 0};
    for (int i = 0; i < npaths; ++i) run_path(ctx, q, paths[i], &o, &t, 0);
    if (t.passed + t.failed > 1 && !o.json) printf("%d passed, %d failed\n", t.passed, t.failed);
    clReleaseCommandQueue(q);
    ifa_context_destroy(ctx);
    return t.worst;
}
