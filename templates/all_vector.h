/* Internal: the all-vector template, turning a plan into a kernel build and launch. */
#ifndef IFA_TEMPLATES_ALL_VECTOR_H
#define IFA_TEMPLATES_ALL_VECTOR_H

#include "ifa/ifa.h"

/* Enqueues the fused kernel for args (already checked against plan) on queue after the wait list, and
 * with split-KV the combine kernel after it. The plan's workspace regions start at workspace_offset.
 * *event receives the last kernel's event, and *first (if not NULL) the first kernel's (the caller releases
 * both). With queue NULL it only builds (or finds in ctx's cache) every kernel such a launch needs, as on an
 * in-order queue (args' tensors then only decide the alignment rules; their buffers may be NULL). */
ifa_status ifa__all_vector_launch(ifa_context *ctx, const ifa_plan *plan, const ifa_incre_flash_attention_args *args,
                                  cl_mem workspace, size_t workspace_offset, cl_command_queue queue, cl_uint num_wait,
                                  const cl_event *wait, cl_event *first, cl_event *event);

#endif
