/* ifa-run: runs one IncreFlashAttention case (a JSON file, docs/case-format.md) on an OpenCL device,
 * writes attention_out.npy (and softmax_lse.npy) and, with --check, compares with the float64 reference.
 * Exit status: 0 ran (and passed), 1 check failed, 2 bad case or usage, 3 device or runtime failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/case.h"
#include "common/npy.h"

static int usage(void) {
    fprintf(stderr, "usage: ifa-run CASE.json [--out DIR] [--check] [--device SELECTOR]\n"
                    "  SELECTOR: P:D (platform and device index, as clinfo -l) or part of a device name;\n"
                    "  default: $IFA_DEVICE, else the first device.\n");
    return 2;
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

    char err[1024];
    ifa_case c;
    if (ifa_case_load(path, &c, err, sizeof err) != 0) {
        fprintf(stderr, "ifa-run: bad case: %s\n", err);
        return 2;
    }
    ifa_context *ctx = NULL;
    ifa_status st = ifa_context_create_default(device, &ctx);
    if (st != IFA_STATUS_OK) {
        fprintf(stderr, "ifa-run: %s\n", ifa_last_error());
        ifa_case_free(&c);
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
    st = ifa_case_run(ctx, q, &c, NULL, NULL, &r);
    if (st != IFA_STATUS_OK) {
        fprintf(stderr, "ifa-run: %s\n", ifa_last_error());
        int bad_case = st != IFA_STATUS_OPENCL_ERROR && st != IFA_STATUS_BUILD_FAILED && st != IFA_STATUS_OUT_OF_MEMORY &&
                       st != IFA_STATUS_NO_DEVICE && st != IFA_STATUS_DEVICE_LIMIT && st != IFA_STATUS_INTERNAL;
        rc = bad_case ? 2 : 3;
        goto done;
    }
    printf("device: %s\n", name);
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
        char p[4096];
        mkdir(out_dir, 0777);
        snprintf(p, sizeof p, "%s/attention_out.npy", out_dir);
        int wrc = ifa_npy_write(p, &r.out);
        if (wrc == 0 && c.softmax_lse_flag) {
            snprintf(p, sizeof p, "%s/softmax_lse.npy", out_dir);
            wrc = ifa_npy_write(p, &r.lse);
        }
        if (wrc != 0) {
            fprintf(stderr, "ifa-run: cannot write %s\n", p);
            rc = 3;
            goto done;
        }
        printf("wrote %s/attention_out.npy%s\n", out_dir, c.softmax_lse_flag ? " and softmax_lse.npy" : "");
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
    return rc;
}
