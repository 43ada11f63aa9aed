/* ifa-run: runs one case (a JSON file, docs/case-format.md) of any ifa op on an OpenCL device, writes its
 * outputs as .npy files and, with --check, compares them with the float64 reference.
 * Ops: IncreFlashAttention (attention_out.npy, softmax_lse.npy), MergeAttentionStates (merged_output.npy,
 * merged_lse.npy). Exit status: 0 ran (and passed), 1 check failed, 2 bad case or usage, 3 device or
 * runtime failure. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/case.h"
#include "common/merge_case.h"
#include "common/npy.h"

static int usage(void) {
    fprintf(stderr, "usage: ifa-run CASE.json [--out DIR] [--check] [--device SELECTOR]\n"
                    "  SELECTOR: P:D (platform and device index, as clinfo -l) or part of a device name;\n"
                    "  default: $IFA_DEVICE, else the first device.\n");
    return 2;
}

/* 2 for a status that says the case is wrong, 3 for one that says the device or runtime failed. */
static int status_exit(ifa_status st) {
    const int bad_case = st != IFA_STATUS_OPENCL_ERROR && st != IFA_STATUS_BUILD_FAILED && st != IFA_STATUS_OUT_OF_MEMORY &&
                         st != IFA_STATUS_NO_DEVICE && st != IFA_STATUS_DEVICE_LIMIT && st != IFA_STATUS_INTERNAL;
    return bad_case ? 2 : 3;
}

/* Writes each (name, tensor) pair with a non-NULL tensor to out_dir; 0 or 3. */
static int write_outputs(const char *out_dir, const char *const *names, const ifa_host_tensor *const *ts, int n) {
    char p[4096];
    mkdir(out_dir, 0777);
    for (int i = 0; i < n; ++i) {
        if (!ts[i]) continue;
        snprintf(p, sizeof p, "%s/%s", out_dir, names[i]);
        if (ifa_npy_write(p, ts[i]) != 0) {
            fprintf(stderr, "ifa-run: cannot write %s\n", p);
            return 3;
        }
        printf("wrote %s\n", p);
    }
    return 0;
}

static int run_merge(ifa_context *ctx, cl_command_queue q, const char *text, const char *base, const char *out_dir,
                     int check) {
    char err[1024];
    ifa_merge_case c;
    if (ifa_merge_case_parse(text, base, &c, err, sizeof err) != 0) {
        fprintf(stderr, "ifa-run: bad case: %s\n", err);
        return 2;
    }
    ifa_merge_result r;
    int rc = 0;
    ifa_status st = ifa_merge_case_run(ctx, q, &c, &r);
    if (st != IFA_STATUS_OK) {
        fprintf(stderr, "ifa-run: %s\n", ifa_last_error());
        rc = status_exit(st);
    } else {
        printf("case: MergeAttentionStates parts=%lld rows=%lld D=%lld out=%s\n", (long long)c.partial_outputs.shape[0],
               (long long)(ifa_host_tensor_numel(&c.partial_lses) / c.partial_outputs.shape[0]),
               (long long)c.partial_outputs.shape[c.partial_outputs.ndim - 1], ifa_dtype_name(c.out_dtype));
        static const char *const names[] = {"merged_output.npy", "merged_lse.npy"};
        const ifa_host_tensor *ts[] = {&r.out, c.lse_flag ? &r.lse : NULL};
        if (out_dir) rc = write_outputs(out_dir, names, ts, 2);
        if (rc == 0 && check) {
            ifa_merge_case_check(&c, &r);
            printf("check: rel_l2=%.3g (tolerance %.0e) nonfinite=%lld lse_rows_out_of_bound=%lld -> %s\n", r.rel_l2,
                   r.tolerance, (long long)r.nonfinite, (long long)r.lse_bad, r.pass ? "PASS" : "FAIL");
            rc = r.pass ? 0 : 1;
        }
    }
    ifa_merge_result_free(&r);
    ifa_merge_case_free(&c);
    return rc;
}

int main(int argc, char **argv) {
    const char *path = NULL, *out_dir = NULL, *device = NULL;
    int check = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) out_dir = argv[++i];
        else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
        else if (strcmp(argv[i], "--check") == 0) check = 1;
        else if (argv[i][0] != '-' && !path) path = argv[i];
        else return usage();
    }
    if (!path) return usage();

    char err[1024], base[4096];
    char *text = ifa_case_read_file(path, base, sizeof base, err, sizeof err);
    if (!text) {
        fprintf(stderr, "ifa-run: bad case: %s\n", err);
        return 2;
    }
    /* the op decides the case format */
    cJSON *root = cJSON_Parse(text);
    const cJSON *opj = root ? cJSON_GetObjectItemCaseSensitive(root, "op") : NULL;
    const int merge = cJSON_IsString(opj) && strcmp(opj->valuestring, "MergeAttentionStates") == 0;
    cJSON_Delete(root);
    ifa_case c;
    if (!merge && ifa_case_parse(text, base, &c, err, sizeof err) != 0) {
        fprintf(stderr, "ifa-run: bad case: %s\n", err);
        free(text);
        return 2;
    }
    if (merge) ifa_case_init(&c);
    ifa_context *ctx = NULL;
    ifa_status st = ifa_context_create_default(device, &ctx);
    if (st != IFA_STATUS_OK) {
        fprintf(stderr, "ifa-run: %s\n", ifa_last_error());
        ifa_case_free(&c);
        free(text);
        return 3;
    }
    char name[256] = "";
    clGetDeviceInfo(ifa_context_device(ctx), CL_DEVICE_NAME, sizeof name - 1, name, NULL);
    cl_int cerr;
    cl_command_queue q = clCreateCommandQueue(ifa_context_cl_context(ctx), ifa_context_device(ctx),
                                              CL_QUEUE_PROFILING_ENABLE, &cerr);
    int rc = 0;
    ifa_case_result r;
    memset(&r, 0, sizeof r);
    if (!q) {
        fprintf(stderr, "ifa-run: clCreateCommandQueue failed (%d)\n", (int)cerr);
        rc = 3;
        goto done;
    }
    printf("device: %s\n", name);
    if (merge) {
        rc = run_merge(ctx, q, text, base, out_dir, check);
        goto done;
    }
    st = ifa_case_run(ctx, q, &c, NULL, NULL, &r);
    if (st != IFA_STATUS_OK) {
        fprintf(stderr, "ifa-run: %s\n", ifa_last_error());
        rc = status_exit(st);
        goto done;
    }
    const ifa_problem *pr = &r.plan.problem;
    printf("case: B=%lld N=%lld N_kv=%lld D=%lld S1=%lld S_kv=%lld layout=%s q=%s kv=%s%s%s%s%s%s%s; tiling_key=%llu "
           "work_group=%d chunk=%d heads/group=%d split_kv=%d\n",
           (long long)pr->batch, (long long)pr->num_heads, (long long)pr->num_kv_heads, (long long)pr->head_dim,
           (long long)pr->seq_q, (long long)pr->seq_kv, c.input_layout, ifa_dtype_name(c.query.dtype),
           ifa_dtype_name(c.key.dtype), pr->causal ? " causal" : "",
           pr->mask_kind == IFA_MASK_PER_TOKEN ? " mask=per_token" : pr->mask_kind ? " mask=per_batch" : "",
           pr->pse_kind ? " pse" : "", pr->softcap_bits ? " softcap" : "", pr->window ? " window" : "",
           pr->paged ? " paged" : pr->has_kv_padding ? " kv_padding" : "", (unsigned long long)r.plan.tiling_key,
           (int)r.plan.work_group_size, (int)r.plan.chunk_rows, (int)r.plan.heads_per_group, (int)r.plan.split_kv);
    printf("kernel time: %.3f ms\n", r.device_ms);
    if (out_dir) {
        static const char *const names[] = {"attention_out.npy", "softmax_lse.npy"};
        const ifa_host_tensor *ts[] = {&r.out, c.softmax_lse_flag ? &r.lse : NULL};
        if ((rc = write_outputs(out_dir, names, ts, 2)) != 0) goto done;
    }
    if (check) {
        ifa_case_check k;
        if (ifa_case_check_result(&c, &r, &k) != 0) {
            fprintf(stderr, "ifa-run: the reference could not be computed\n");
            rc = 3;
            goto done;
        }
        printf("check: rel_l2=%.3g (tolerance %.0e) max_abs=%.3g nonfinite=%lld lse_rows_out_of_bound=%lld -> %s\n",
               k.rel_l2, k.tolerance, k.max_abs, (long long)k.nonfinite, (long long)k.lse_bad, k.pass ? "PASS" : "FAIL");
        rc = k.pass ? 0 : 1;
    }
done:
    ifa_case_result_free(&r);
    if (q) clReleaseCommandQueue(q);
    ifa_context_destroy(ctx);
    ifa_case_free(&c);
    free(text);
    return rc;
}
