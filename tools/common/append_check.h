/* The float64 check of a KVCacheAppend case (ifa-run --check): every new row where the op defines it (rotated
 * and quantised as docs/kv-cache.md and docs/rope.md say), and every other element of the caches, scales and
 * offsets unchanged. */
#ifndef IFA_TOOLS_APPEND_CHECK_H
#define IFA_TOOLS_APPEND_CHECK_H

#include "common/generic_case.h"
#include "common/generic_run.h"

typedef struct ifa_append_check {
    int64_t rows, bad_rows; /* new (token, head, key|value) rows checked, and those off their bound */
    int64_t changed;        /* elements outside the new rows (and their scales) that changed */
    double worst;           /* the largest error over its bound (<= 1 passes) */
    int pass;
} ifa_append_check;

/* c: the case as given (the caches before the run); after[IFA_GENERIC_WRITTEN]: key_cache, value_cache,
 * antiquant_scale, antiquant_offset, key_antiquant_scale, key_antiquant_offset, value_antiquant_scale,
 * value_antiquant_offset as read back after the run (NULL for absent ones). 0, or -1 when the case's shapes
 * do not allow a reference (the op should have rejected it). */
int ifa_append_case_check(const ifa_generic_case *c, const ifa_host_tensor *const after[IFA_GENERIC_WRITTEN],
                          ifa_append_check *k);

/* The inputs KVCacheAppend writes, in the order of ifa_append_case_check's after[] (ifa_generic_case_run's
 * names for an append case). */
extern const char *const ifa_append_written[IFA_GENERIC_WRITTEN];
/* The tensors a run read back (ifa_generic_case_run with ifa_append_written) as after[] (NULL for absent ones). */
void ifa_append_after(const ifa_generic_run *r, const ifa_host_tensor *after[IFA_GENERIC_WRITTEN]);

#endif
