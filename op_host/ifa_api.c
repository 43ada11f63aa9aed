/* The two-phase C API of IncreFlashAttention: plan (get_workspace_size), then launch (run). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "op_host/cl_status.h"
#include "op_host/context.h"
#include "op_host/ifa_check.h"
#include "op_host/launch.h"
#include "op_host/rope.h"
#include "op_host/verbose.h"
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
    IFA__TRY(ifa__plan_make(&problem, &ctx->facts, plan));
    *workspace_bytes = (size_t)plan->workspace_bytes;
    return IFA_STATUS_OK;
}

/* Names the first field where the arguments' problem differs from the plan's. */
static ifa_status compare_problem(const ifa_problem *got, const ifa_problem *want) {
#define FIELD(f)                                                                                                  \
    if (got->f != want->f)                                                                                        \
        return ifa__fail(IFA_STATUS_PLAN_MISMATCH, "the plan was made for %s = %" PRId64 " but args give %" PRId64, \
                         #f, (int64_t)want->f, (int64_t)got->f);
    FIELD(batch) FIELD(num_heads) FIELD(num_kv_heads) FIELD(head_dim) FIELD(seq_q) FIELD(seq_kv) FIELD(layout)
    FIELD(q_dtype) FIELD(kv_dtype) FIELD(out_dtype) FIELD(has_lse) FIELD(lengths_mode) FIELD(uniform_length)
    FIELD(max_length) FIELD(total_length) FIELD(scale_bits) FIELD(softcap_bits) FIELD(window) FIELD(causal)
    FIELD(mask_kind) FIELD(mask_batch) FIELD(mask_len) FIELD(pse_kind) FIELD(pse_len) FIELD(has_kv_padding)
    FIELD(kv_padding) FIELD(paged) FIELD(block_size) FIELD(table_cols) FIELD(pool_blocks) FIELD(antiquant)
    FIELD(aq_dtype) FIELD(aq_offset) FIELD(aq_len) FIELD(quant_out) FIELD(q2_dtype) FIELD(q2_offset)
    FIELD(has_prefix) FIELD(prefix_seq) FIELD(prefix_len) FIELD(rope) FIELD(rope_table) FIELD(rope_dim)
    FIELD(rope_theta_bits) FIELD(rope_table_rows) FIELD(template_request)
#undef FIELD
    if (got->lengths_hash != want->lengths_hash)
        return ifa__fail(IFA_STATUS_PLAN_MISMATCH, "the plan was made for other actual_seq_lengths values");
    return IFA_STATUS_OK;
}

/* The per-batch lengths as int32, after kv padding. */
static ifa_status upload_lengths(const ifa_plan *plan, const ifa_incre_flash_attention_args *args, cl_mem ws,
                                 size_t at, cl_command_queue queue, cl_uint num_wait, const cl_event *wait,
                                 cl_event *done) {
    const int64_t b = plan->problem.batch;
    cl_int *host = malloc((size_t)b * sizeof *host);
    if (!host) return ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "staging %" PRId64 " lengths", b);
    for (int64_t i = 0; i < b; ++i) host[i] = (cl_int)ifa__effective_length(&plan->problem, args->actual_seq_lengths[i]);
    return ifa__upload_staged(host, (size_t)b * sizeof *host, ws, at, queue, num_wait, wait, done);
}

/* Paged KV: the block table as int32 (B, table_cols). */
static ifa_status upload_table(const ifa_plan *plan, const ifa_incre_flash_attention_args *args, cl_mem ws, size_t at,
                               cl_command_queue queue, cl_uint num_wait, const cl_event *wait, cl_event *done) {
    const size_t bytes = (size_t)plan->ws_table_bytes;
    cl_int *host = malloc(bytes);
    if (!host) return ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "staging a %zu-byte block table", bytes);
    memcpy(host, args->block_table, bytes);
    return ifa__upload_staged(host, bytes, ws, at, queue, num_wait, wait, done);
}

/* Balanced units: the cost-line position of each batch's first block, B + 1 int64 values. */
static ifa_status upload_prefix(const ifa_plan *plan, const ifa_incre_flash_attention_args *args, cl_mem ws,
                                size_t at, cl_command_queue queue, cl_uint num_wait, const cl_event *wait,
                                cl_event *done) {
    const ifa_problem *p = &plan->problem;
    const int64_t blocks = ifa__plan_blocks(plan);
    cl_long *host = malloc((size_t)(p->batch + 1) * sizeof *host);
    if (!host) return ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "staging %" PRId64 " batch offsets", p->batch + 1);
    host[0] = 0;
    for (int64_t b = 0; b < p->batch; ++b) {
        const int64_t len = p->lengths_mode == IFA_LENGTHS_PER_BATCH
                                ? ifa__effective_length(p, args->actual_seq_lengths[b]) : p->uniform_length;
        const int64_t span = ifa__kv_span(len, p->window, p->causal ? p->seq_q - 1 : 0);
        host[b + 1] = host[b] + (span + plan->block_cost_rows) * blocks;
    }
    if (host[p->batch] != plan->total_cost) {
        free(host);
        return ifa__fail(IFA_STATUS_INTERNAL, "balanced units: the lengths add up to another cost than the plan's");
    }
    return ifa__upload_staged(host, (size_t)(p->batch + 1) * sizeof *host, ws, at, queue, num_wait, wait, done);
}

/* Rotary query: each batch's first query position (int64), then the inverse frequencies as float pairs. */
static ifa_status upload_rope(const ifa_plan *plan, const ifa_incre_flash_attention_args *args, cl_mem ws, size_t at,
                              cl_command_queue queue, cl_uint num_wait, const cl_event *wait, cl_event *done) {
    const ifa_problem *p = &plan->problem;
    const size_t bytes = (size_t)plan->ws_rope_bytes;
    unsigned char *host = malloc(bytes);
    if (!host) return ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "staging %zu bytes of rope positions", bytes);
    int64_t *first = (int64_t *)host;
    const ifa_status st = ifa__ifa_rope_positions(args, p, first);
    if (st != IFA_STATUS_OK) {
        free(host);
        return st;
    }
    if (!p->rope_table) {
        ifa__rope_info info = {p->rope, 0, p->rope_dim, 0, 0};
        memcpy(&info.theta, &p->rope_theta_bits, sizeof info.theta);
        ifa__rope_freqs(&info, (float *)(host + 8 * p->batch));
    }
    return ifa__upload_staged(host, bytes, ws, at, queue, num_wait, wait, done);
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
    if (num_events_in_wait_list > 0 && !event_wait_list)
        return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "event_wait_list is NULL with num_events_in_wait_list = %u",
                         (unsigned)num_events_in_wait_list);
    IFA__TRY(ifa__plan_check(plan));
    ifa_problem problem;
    IFA__TRY(ifa__ifa_check_args(args, &problem));
    IFA__TRY(compare_problem(&problem, &plan->problem));
    IFA__TRY(ifa__ifa_check_buffers(args));
    IFA__TRY(ifa__check_workspace(plan->workspace_bytes, workspace, workspace_offset));
    IFA__TRY(ifa__check_queue(ctx, queue));

    ifa__verbose_run(plan, args);

    cl_event uploaded[4] = {NULL, NULL, NULL, NULL};
    cl_uint nup = 0;
    ifa_status ust = IFA_STATUS_OK;
    if (problem.lengths_mode == IFA_LENGTHS_PER_BATCH)
        ust = upload_lengths(plan, args, workspace, workspace_offset + (size_t)plan->ws_lengths_offset, queue,
                             num_events_in_wait_list, event_wait_list, &uploaded[nup++]);
    if (ust == IFA_STATUS_OK && problem.paged)
        ust = upload_table(plan, args, workspace, workspace_offset + (size_t)plan->ws_table_offset, queue,
                           num_events_in_wait_list, event_wait_list, &uploaded[nup++]);
    if (ust == IFA_STATUS_OK && problem.rope)
        ust = upload_rope(plan, args, workspace, workspace_offset + (size_t)plan->ws_rope_offset, queue,
                          num_events_in_wait_list, event_wait_list, &uploaded[nup++]);
    if (ust == IFA_STATUS_OK && plan->split_kv == IFA_SPLIT_BALANCED)
        ust = upload_prefix(plan, args, workspace, workspace_offset + (size_t)plan->ws_prefix_offset, queue,
                            num_events_in_wait_list, event_wait_list, &uploaded[nup++]);
    if (ust != IFA_STATUS_OK) {
        for (cl_uint i = 0; i < nup; ++i)
            if (uploaded[i]) clReleaseEvent(uploaded[i]);
        return ust;
    }
    if (nup) {
        num_events_in_wait_list = nup;
        event_wait_list = uploaded;
    }
    cl_event done = NULL;
    ifa_status st = plan->template_id == IFA_TEMPLATE_CV
                        ? ifa__cv_launch(ctx, plan, args, workspace, workspace_offset, queue, num_events_in_wait_list,
                                         event_wait_list, first_kernel, &done)
                        : ifa__all_vector_launch(ctx, plan, args, workspace, workspace_offset, queue,
                                                 num_events_in_wait_list, event_wait_list, first_kernel, &done);
    for (cl_uint i = 0; i < nup; ++i) clReleaseEvent(uploaded[i]);
    if (st != IFA_STATUS_OK) return st;
    if (event)
        *event = done;
    else
        clReleaseEvent(done);
    return IFA_STATUS_OK;
}
