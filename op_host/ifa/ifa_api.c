/* The two-phase C API of IncreFlashAttention: plan (get_workspace_size), then launch (run). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "op_host/runtime/cl_status.h"
#include "op_host/runtime/context.h"
#include "op_host/ifa/ifa_check.h"
#include "op_host/runtime/launch.h"
#include "op_host/common/rope.h"
#include "op_host/common/verbose.h"
#include "templates/all_vector.h"
#include "templates/cv.h"
#include "tiling/planner.h"

void ifa_incre_flash_attention_args_init(ifa_incre_flash_attention_args *args) {
    if (!args) return;
    memset(args, 0, sizeof *args);
    args->scale_value = 1.0;
    args->input_layout = "BSH";
}

ifa_status ifa_incre_flash_attention_get_workspace_size(ifa_context *ctx, const ifa_incre_flash_attention_args *args,
                                                        ifa_plan *plan, size_t *workspace_bytes) {
    if (!ctx) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "ctx is NULL");
    if (!plan) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "plan is NULL");
    if (!workspace_bytes) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "workspace_bytes is NULL");
    ifa_problem problem;
    IFA__TRY(ifa__ifa_check_args(args, &problem));
    const ifa_device_facts facts = ifa__device_facts_effective(&ctx->facts);
    IFA__TRY(ifa__plan_make(&problem, &facts, plan));
    *workspace_bytes = (size_t)plan->workspace_bytes;
    return IFA_STATUS_OK;
}

/* Names the first field where the arguments' problem differs from the plan's (every field of
 * include/ifa/plan_fields.h but the padding; a hash names its array). */
static ifa_status compare_problem(const ifa_problem *got, const ifa_problem *want) {
#define IFA_PROBLEM_FIELD(type, name, flags, doc)                                                                  \
    if (!((flags) & IFA_FIELD_PAD) && got->name != want->name) {                                                    \
        if ((flags) & IFA_FIELD_ARRAY)                                                                              \
            return ifa__fail(IFA_STATUS_PLAN_MISMATCH, "the plan was made for other values of %s (%s)", #name, doc); \
        return ifa__fail(IFA_STATUS_PLAN_MISMATCH, "the plan was made for %s = %" PRId64 " but args give %" PRId64,   \
                         #name, (int64_t)want->name, (int64_t)got->name);                                           \
    }
#include "ifa/plan_fields.h"
#undef IFA_PROBLEM_FIELD
    return IFA_STATUS_OK;
}

/* The per-batch lengths as int32, after kv padding; with actual_seq_lengths_q (length, query tokens) pairs. */
static void fill_lengths(const ifa_plan *plan, const ifa_incre_flash_attention_args *args, unsigned char *at) {
    const ifa_problem *p = &plan->problem;
    cl_int *host = (cl_int *)at;
    for (int64_t b = 0; b < p->batch; ++b) {
        if (p->q_lengths) {
            host[2 * b] = (cl_int)ifa__batch_length(args, p, b);
            host[2 * b + 1] = (cl_int)ifa__query_tokens(args, p, b);
        } else {
            host[b] = (cl_int)ifa__batch_length(args, p, b);
        }
    }
}

/* Balanced units: the cost-line position of each batch's first block, B + 1 int64 values. */
static ifa_status fill_prefix(const ifa_plan *plan, const ifa_incre_flash_attention_args *args, unsigned char *at) {
    const ifa_problem *p = &plan->problem;
    const int64_t blocks = ifa__plan_blocks(plan);
    cl_long *host = (cl_long *)at;
    host[0] = 0;
    for (int64_t b = 0; b < p->batch; ++b) {
        const int64_t len = p->lengths_mode == IFA_LENGTHS_PER_BATCH ? ifa__batch_length(args, p, b) : p->uniform_length;
        const int64_t span = ifa__kv_span(len, p->window, ifa__batch_causal_shift(args, p, b));
        host[b + 1] = host[b] + (span + plan->block_cost_rows) * blocks;
    }
    if (host[p->batch] != plan->total_cost)
        return ifa__fail(IFA_STATUS_INTERNAL, "balanced units: the lengths add up to another cost than the plan's");
    return IFA_STATUS_OK;
}

/* Rotary query: each batch's first query position (int64), then the inverse frequencies as float pairs. */
static ifa_status fill_rope(const ifa_plan *plan, const ifa_incre_flash_attention_args *args, unsigned char *at) {
    const ifa_problem *p = &plan->problem;
    IFA__TRY(ifa__ifa_rope_positions(args, p, (int64_t *)at));
    if (!p->rope_table) {
        ifa__rope_info info = {p->rope, 0, p->rope_dim, 0, 0, p->rope_offset};
        memcpy(&info.theta, &p->rope_theta_bits, sizeof info.theta);
        ifa__rope_freqs(&info, (float *)(at + 8 * p->batch));
    }
    return IFA_STATUS_OK;
}

/* What run writes into the workspace before the kernels: the per-batch lengths, the block table, the rotary
 * positions and frequencies and the balanced units' batch offsets. The planner places these regions first,
 * so they are staged in one host buffer (alignment gaps zeroed) and sent with one non-blocking write: each
 * enqueue costs the host 10-20 us on PoCL. *done is NULL when there is nothing to send. */
static ifa_status upload_inputs(const ifa_plan *plan, const ifa_incre_flash_attention_args *args, cl_mem ws,
                                size_t ws_offset, cl_command_queue queue, cl_uint num_wait, const cl_event *wait,
                                cl_event *done) {
    const ifa_problem *p = &plan->problem;
    const int lens = p->lengths_mode == IFA_LENGTHS_PER_BATCH, balanced = plan->split_kv == IFA_SPLIT_BALANCED;
    const struct {
        int present;
        int64_t offset, bytes;
    } regions[] = {{lens, plan->ws_lengths_offset, plan->ws_lengths_bytes},
                   {p->paged, plan->ws_table_offset, plan->ws_table_bytes},
                   {p->rope != 0, plan->ws_rope_offset, plan->ws_rope_bytes},
                   {balanced, plan->ws_prefix_offset, 8 * (p->batch + 1)}};
    int64_t lo = INT64_MAX, hi = 0;
    for (size_t i = 0; i < sizeof regions / sizeof regions[0]; ++i)
        if (regions[i].present) {
            if (regions[i].offset < lo) lo = regions[i].offset;
            if (regions[i].offset + regions[i].bytes > hi) hi = regions[i].offset + regions[i].bytes;
        }
    *done = NULL;
    if (hi == 0) return IFA_STATUS_OK;
    /* nothing a kernel writes may lie in the span (the planner's order guarantees it) */
    if (plan->split_kv != IFA_SPLIT_NONE && plan->ws_part_acc_offset < hi && plan->ws_part_acc_offset >= lo)
        return ifa__fail(IFA_STATUS_INTERNAL, "workspace: the uploaded regions enclose the partials");
    unsigned char *host = calloc(1, (size_t)(hi - lo));
    if (!host) return ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "staging %" PRId64 " bytes of run inputs", hi - lo);
    if (lens) fill_lengths(plan, args, host + (plan->ws_lengths_offset - lo));
    if (p->paged) memcpy(host + (plan->ws_table_offset - lo), args->block_table, (size_t)plan->ws_table_bytes);
    ifa_status st = p->rope ? fill_rope(plan, args, host + (plan->ws_rope_offset - lo)) : IFA_STATUS_OK;
    if (st == IFA_STATUS_OK && balanced) st = fill_prefix(plan, args, host + (plan->ws_prefix_offset - lo));
    if (st != IFA_STATUS_OK) {
        free(host);
        return st;
    }
    return ifa__upload_staged(host, (size_t)(hi - lo), ws, ws_offset + (size_t)lo, queue, num_wait, wait, done);
}

ifa_status ifa_incre_flash_attention_run(ifa_context *ctx, const ifa_plan *plan,
                                         const ifa_incre_flash_attention_args *args, cl_mem workspace,
                                         size_t workspace_offset, cl_command_queue queue, cl_uint num_events_in_wait_list,
                                         const cl_event *event_wait_list, cl_event *event) {
    return ifa_incre_flash_attention_run_profiled(ctx, plan, args, workspace, workspace_offset, queue,
                                                  num_events_in_wait_list, event_wait_list, NULL, event);
}

ifa_status ifa_incre_flash_attention_run_profiled(ifa_context *ctx, const ifa_plan *plan,
                                                  const ifa_incre_flash_attention_args *args, cl_mem workspace,
                                                  size_t workspace_offset, cl_command_queue queue,
                                                  cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                                                  cl_event *first_kernel, cl_event *event) {
    if (first_kernel) *first_kernel = NULL;
    if (!ctx) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "ctx is NULL");
    IFA__TRY(ifa__check_wait_list(num_events_in_wait_list, event_wait_list));
    IFA__TRY(ifa__plan_check(plan));
    ifa_problem problem;
    IFA__TRY(ifa__ifa_check_args(args, &problem));
    IFA__TRY(compare_problem(&problem, &plan->problem));
    IFA__TRY(ifa__ifa_check_buffers(ctx->cl_ctx, args, workspace, workspace_offset, plan->workspace_bytes));
    IFA__TRY(ifa__check_workspace(plan->workspace_bytes, workspace, workspace_offset));
    IFA__TRY(ifa__check_queue(ctx, queue));

    ifa__verbose_run(plan, &ctx->facts, args);

    cl_event uploaded = NULL;
    IFA__TRY(upload_inputs(plan, args, workspace, workspace_offset, queue, num_events_in_wait_list, event_wait_list,
                           &uploaded));
    if (uploaded) {
        num_events_in_wait_list = 1;
        event_wait_list = &uploaded;
    }
    cl_event done = NULL;
    ifa_status st = plan->template_id == IFA_TEMPLATE_CV
                        ? ifa__cv_launch(ctx, plan, args, workspace, workspace_offset, queue, num_events_in_wait_list,
                                         event_wait_list, first_kernel, &done)
                        : ifa__all_vector_launch(ctx, plan, args, workspace, workspace_offset, queue,
                                                 num_events_in_wait_list, event_wait_list, first_kernel, &done);
    if (uploaded) clReleaseEvent(uploaded);
    if (st != IFA_STATUS_OK) return st;
    if (event)
        *event = done;
    else
        clReleaseEvent(done);
    return IFA_STATUS_OK;
}
