/* Running a generic (registry) case on a device: its inputs uploaded, the op planned and run through
 * ifa_op_get_workspace_size / ifa_op_run, and the inputs the op writes read back. ifa-run's KVCacheAppend path
 * and ifa-soak's append cases share it. */
#ifndef IFA_TOOLS_GENERIC_RUN_H
#define IFA_TOOLS_GENERIC_RUN_H

#include "common/generic_case.h"

/* The most written inputs a run reads back. */
#define IFA_GENERIC_WRITTEN 8

/* What a run read back: the written inputs named in `names` (their order), data NULL for absent ones. */
typedef struct ifa_generic_run {
    ifa_host_tensor written[IFA_GENERIC_WRITTEN];
    double device_ms; /* the op's kernel time from its event (0 without profiling) */
    char error[512];  /* on failure: the library's message, or the tool's own step that failed */
} ifa_generic_run;

/* Uploads c's inputs, plans and runs its op on q, and reads back the inputs named in names
 * (IFA_GENERIC_WRITTEN entries, NULL ones ignored). Returns the library's status (OPENCL_ERROR or OUT_OF_MEMORY for the tool's own calls);
 * on failure r holds nothing. With plan_only, nothing is uploaded or run: the status says whether the device
 * takes the case, and *workspace_bytes (if not NULL) the workspace it needs. */
ifa_status ifa_generic_case_run(ifa_context *ctx, cl_command_queue q, const ifa_generic_case *c,
                                const char *const names[IFA_GENERIC_WRITTEN], int plan_only, size_t *workspace_bytes,
                                ifa_generic_run *r);
void ifa_generic_run_free(ifa_generic_run *r);
/* ifa_case_far_base (common/runner.h) for the larger of c's key_cache and value_cache (cache_base_bytes for a
 * far run); 0 if neither is there or the device has no such buffer. */
int64_t ifa_generic_case_far_caches_base(cl_device_id device, const ifa_generic_case *c);

#endif
