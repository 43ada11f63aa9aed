/* IncreFlashAttention's kernels built ahead of the first runs over a configuration's batch sizes and lengths. */
#include <stdlib.h>
#include <string.h>

#include "op_host/runtime/cl_status.h"
#include "op_host/runtime/context.h"
#include "op_host/ifa/ifa_check.h"
#include "op_host/runtime/launch.h"
#include "core/status.h"
#include "templates/all_vector.h"
#include "templates/cv.h"
#include "tiling/plan_domain.h"

typedef struct {
    ifa_context *ctx;
    const ifa_incre_flash_attention_args *args;
    cl_command_queue queue; /* warm launches on it, or NULL */
} prepare_state;

/* The guard's fill: a write there of any value but this one shows */
static const cl_uint guard_fill = 0xa5a5a5a5u;

/* IFA_PREPARE_CHECK=1: after each warm launch, the scratch's input region (read as zeros) must still be zero and
 * its guard (after the outputs) still guard_fill: the launch wrote nothing there. For tests; a start-up cost
 * otherwise. */
static ifa_status check_scratch(const prepare_state *s, const ifa_plan *plan, cl_mem scratch, size_t zero_words,
                                size_t guard_word, size_t guard_words) {
    const char *env = getenv("IFA_PREPARE_CHECK");
    if (!env || !*env || strcmp(env, "0") == 0) return IFA_STATUS_OK;
    const size_t words = zero_words > guard_words ? zero_words : guard_words;
    uint32_t *host = malloc(words * 4);
    if (!host) return ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "prepare check: %zu bytes", words * 4);
    ifa_status st = IFA_STATUS_OK;
    for (int part = 0; part < 2 && st == IFA_STATUS_OK; ++part) {
        const size_t from = part ? guard_word : 0, n = part ? guard_words : zero_words;
        const cl_int err = clEnqueueReadBuffer(s->queue, scratch, CL_TRUE, from * 4, n * 4, host, 0, NULL, NULL);
        if (err != CL_SUCCESS) st = ifa__fail_cl(err, "clEnqueueReadBuffer", "prepare check");
        for (size_t i = 0; st == IFA_STATUS_OK && i < n; ++i)
            if (host[i] != (part ? guard_fill : 0))
                st = ifa__fail(IFA_STATUS_INTERNAL, "prepare check: a warm launch (key %llu) wrote word %zu of its %s",
                               (unsigned long long)plan->tiling_key, from + i, part ? "guard" : "inputs");
    }
    free(host);
    return st;
}

/* One work-group of each of plan's kernels over zeroed scratch with every length 0 (templates/all_vector.c). */
static ifa_status warm(const prepare_state *s, const ifa_plan *plan) {
    const size_t bytes = ifa__all_vector_warm_bytes(plan);
    cl_int err = CL_SUCCESS;
    cl_mem scratch = clCreateBuffer(s->ctx->cl_ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err != CL_SUCCESS) return ifa__fail_cl(err, "clCreateBuffer", "prepare's scratch of %zu bytes", bytes);
    const cl_uint zero = 0;
    cl_event filled[2] = {NULL, NULL}, done = NULL;
    ifa_status st = IFA_STATUS_OK;
    size_t zero_words, guard_word;
    const size_t guard_words = ifa__all_vector_warm_unwritten(plan, &zero_words, &guard_word);
    err = clEnqueueFillBuffer(s->queue, scratch, &zero, sizeof zero, 0, guard_word * 4, 0, NULL, &filled[0]);
    if (err == CL_SUCCESS)
        err = clEnqueueFillBuffer(s->queue, scratch, &guard_fill, sizeof guard_fill, guard_word * 4, guard_words * 4, 0,
                                  NULL, &filled[1]);
    if (err != CL_SUCCESS) st = ifa__fail_cl(err, "clEnqueueFillBuffer", "prepare's scratch");
    else if ((err = clWaitForEvents(2, filled)) != CL_SUCCESS) /* the queue may run out of order */
        st = ifa__fail_cl(err, "clWaitForEvents", "prepare's scratch fill");
    if (st == IFA_STATUS_OK) st = ifa__all_vector_warm(s->ctx, plan, s->args, scratch, s->queue, &done);
    if (st == IFA_STATUS_OK && (err = clWaitForEvents(1, &done)) != CL_SUCCESS)
        st = ifa__fail_cl(err, "clWaitForEvents", "prepare's launches");
    if (st == IFA_STATUS_OK) st = check_scratch(s, plan, scratch, zero_words, guard_word, guard_words);
    for (int i = 0; i < 2; ++i)
        if (filled[i]) clReleaseEvent(filled[i]);
    if (done) clReleaseEvent(done);
    clReleaseMemObject(scratch);
    return st;
}

/* Builds plan's kernels: the launches with no queue build only; a warm launch gets (builds) the same kernels. */
static ifa_status build_plan(const ifa_plan *plan, void *user) {
    const prepare_state *s = user;
    if (plan->template_id == IFA_TEMPLATE_CV) return ifa__cv_launch(s->ctx, plan, s->args, NULL, 0, NULL, 0, NULL, NULL, NULL);
    return s->queue ? warm(s, plan) : ifa__all_vector_launch(s->ctx, plan, s->args, NULL, 0, NULL, 0, NULL, NULL, NULL);
}

ifa_status ifa_incre_flash_attention_prepare(ifa_context *ctx, const ifa_incre_flash_attention_args *args,
                                             cl_command_queue queue, int64_t *variants) {
    if (variants) *variants = 0;
    if (!ctx) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "ctx is NULL");
    ifa_problem problem;
    IFA__TRY(ifa__ifa_check_args(args, &problem));
    if (queue) IFA__TRY(ifa__check_queue(ctx, queue));
    const ifa_device_facts facts = ifa__device_facts_effective(&ctx->facts);
    /* only a CPU device (PoCL) generates a kernel's code at its first launch; a GPU's build compiled it */
    prepare_state s = {ctx, args, queue && ifa__vendor_is_cpu(ctx->facts.vendor) ? queue : NULL};
    return ifa__plan_domain(&problem, &facts, build_plan, &s, NULL, variants);
}
