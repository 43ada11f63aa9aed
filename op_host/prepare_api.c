/* IncreFlashAttention's kernels built ahead of the first runs over a configuration's batch sizes and lengths. */
#include "op_host/context.h"
#include "op_host/ifa_check.h"
#include "op_host/status.h"
#include "templates/all_vector.h"
#include "templates/cv.h"
#include "tiling/plan_domain.h"

typedef struct {
    ifa_context *ctx;
    const ifa_incre_flash_attention_args *args;
} prepare_state;

static ifa_status build_plan(const ifa_plan *plan, void *user) {
    const prepare_state *s = user;
    return plan->template_id == IFA_TEMPLATE_CV
               ? ifa__cv_launch(s->ctx, plan, s->args, NULL, 0, NULL, 0, NULL, NULL, NULL)
               : ifa__all_vector_launch(s->ctx, plan, s->args, NULL, 0, NULL, 0, NULL, NULL, NULL);
}

ifa_status ifa_incre_flash_attention_prepare(ifa_context *ctx, const ifa_incre_flash_attention_args *args,
                                             int64_t *variants) {
    if (variants) *variants = 0;
    if (!ctx) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "ctx is NULL");
    ifa_problem problem;
    IFA__TRY(ifa__ifa_check_args(args, &problem));
    const ifa_device_facts facts = ifa__device_facts_effective(&ctx->facts);
    prepare_state s = {ctx, args};
    return ifa__plan_domain(&problem, &facts, build_plan, &s, NULL, variants);
}
