/* The template rule. The numbers behind cv_min_rows are in docs/templates.md. */
#include "tiling/template_choice.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/status.h"

/* Why the cv template cannot run p, or NULL when it can. */
static const char *cv_refusal(const ifa_problem *p) {
    if (p->has_prefix) return "the shared-prefix cascade runs in the all_vector template only";
    return NULL;
}

ifa_status ifa__template_choose(const ifa_problem *p, const ifa_tuning *t, ifa_template_candidate out[IFA_TEMPLATE_CANDIDATES],
                                int32_t *chosen) {
    memset(out, 0, sizeof *out * IFA_TEMPLATE_CANDIDATES);
    ifa_template_candidate *cv = &out[0], *av = &out[1];
    cv->template_id = IFA_TEMPLATE_CV, av->template_id = IFA_TEMPLATE_ALL_VECTOR;
    const int64_t rows = p->num_heads / p->num_kv_heads * p->seq_q;
    const char *refusal = cv_refusal(p);
    cv->applicable = refusal == NULL;
    av->applicable = 1;
    if (p->template_request == IFA_TEMPLATE_CV && refusal)
        return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "template_mode \"cv\" cannot run this case: %s", refusal);
    int32_t pick;
    if (p->template_request) {
        pick = p->template_request;
        snprintf(pick == IFA_TEMPLATE_CV ? cv->reason : av->reason, sizeof cv->reason, "forced by template_mode");
        snprintf(pick == IFA_TEMPLATE_CV ? av->reason : cv->reason, sizeof cv->reason, "%s",
                 refusal && pick != IFA_TEMPLATE_CV ? refusal : "template_mode forces the other template");
    } else if (refusal) {
        pick = IFA_TEMPLATE_ALL_VECTOR;
        snprintf(cv->reason, sizeof cv->reason, "%s", refusal);
        snprintf(av->reason, sizeof av->reason, "the cv template cannot run the case");
    } else if (t->cv_min_rows > 0 && rows >= t->cv_min_rows) {
        pick = IFA_TEMPLATE_CV;
        snprintf(cv->reason, sizeof cv->reason, "G x S1 = %" PRId64 " query rows per KV head >= cv_min_rows = %d", rows,
                 (int)t->cv_min_rows);
        snprintf(av->reason, sizeof av->reason, "the cv template is preferred for this many rows per KV head");
    } else {
        pick = IFA_TEMPLATE_ALL_VECTOR;
        if (t->cv_min_rows > 0)
            snprintf(cv->reason, sizeof cv->reason, "G x S1 = %" PRId64 " query rows per KV head < cv_min_rows = %d",
                     rows, (int)t->cv_min_rows);
        else
            snprintf(cv->reason, sizeof cv->reason, "this device's tuning row never prefers it (cv_min_rows = 0)");
        snprintf(av->reason, sizeof av->reason, "preferred");
    }
    cv->chosen = pick == IFA_TEMPLATE_CV, av->chosen = pick == IFA_TEMPLATE_ALL_VECTOR;
    *chosen = pick;
    return IFA_STATUS_OK;
}
