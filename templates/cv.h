/* Internal: the cv template (matrix products through CLBlast, vector kernels between them), turning a plan
 * into kernel builds and launches. */
#ifndef IFA_TEMPLATES_CV_H
#define IFA_TEMPLATES_CV_H

#include "ifa/ifa.h"

/* As ifa__all_vector_launch, for a plan with template_id IFA_TEMPLATE_CV. queue must be in order
 * (INVALID_QUEUE otherwise): CLBlast's calls take no wait lists. With queue NULL it only builds ifa's own kernels
 * of such a launch (CLBlast builds its matrix products at their first call). */
ifa_status ifa__cv_launch(ifa_context *ctx, const ifa_plan *plan, const ifa_incre_flash_attention_args *args,
                          cl_mem workspace, size_t workspace_offset, cl_command_queue queue, cl_uint num_wait,
                          const cl_event *wait, cl_event *first, cl_event *event);

#endif
