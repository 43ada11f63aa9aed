/* MergeAttentionStates cases for ifa-run: {"op": "MergeAttentionStates", "attrs": {"merged_lse_flag": true},
 * "inputs": {"partial_outputs": TENSOR, "partial_lses": TENSOR}} with tensors as in docs/case-format.md,
 * run on a device and checked against a float64 merge of the same stored inputs. */
#ifndef IFA_TOOLS_MERGE_CASE_H
#define IFA_TOOLS_MERGE_CASE_H

#include "common/host_tensor.h"

typedef struct ifa_merge_case {
    ifa_host_tensor partial_outputs, partial_lses;
    ifa_dtype out_dtype; /* merged_output's dtype: the partial outputs' unless attrs.out_dtype says */
    int lse_flag;
} ifa_merge_case;

typedef struct ifa_merge_result {
    ifa_host_tensor out, lse;
    double rel_l2, tolerance;
    int64_t nonfinite, lse_bad; /* elements (LSE rows) whose class (finite, NaN, +-inf) differs from the merge's */
    int pass;
    char error[512];            /* when the run fails: the library's message, or the tool's own step */
} ifa_merge_result;

/* Parses JSON text (base_dir resolves .npy paths). Returns 0, or -1 with a message in err. */
int ifa_merge_case_parse(const char *json, const char *base_dir, ifa_merge_case *c, char *err, size_t err_size);
void ifa_merge_case_free(ifa_merge_case *c);
void ifa_merge_result_free(ifa_merge_result *r);
/* Runs the case (outputs poisoned with NaN first); returns the library's status. */
ifa_status ifa_merge_case_run(ifa_context *ctx, cl_command_queue queue, const ifa_merge_case *c, ifa_merge_result *r);
/* Fills r's check fields from the float64 merge. */
void ifa_merge_case_check(const ifa_merge_case *c, ifa_merge_result *r);

#endif
