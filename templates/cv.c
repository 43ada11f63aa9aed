/* The cv template: per chunk, a gather kernel, S = Q x K^T (CLBlast), the softmax kernel, acc += P x V
 * (CLBlast); the query kernel before and the split combine after (op_kernel/ifa_cv.cl has the data flow). */
#include "templates/cv.h"

#include <stdio.h>
#include <string.h>

#include "op_host/runtime/cl_status.h"
#include "op_host/runtime/context.h"
#include "op_host/runtime/launch.h"
#include "core/status.h"
#include "templates/blas.h"
#include "templates/op_args.h"
#include "tiling/planner.h"

static ifa_status check_in_order(cl_command_queue queue) {
    cl_command_queue_properties props = 0;
    const cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    if (err != CL_SUCCESS) return ifa__fail_cl(err, "clGetCommandQueueInfo", "queue properties");
    if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        return ifa__fail(IFA_STATUS_INVALID_QUEUE, "the cv template needs an in-order queue (CLBlast's matrix products "
                         "take no wait lists); use an in-order queue or template_mode \"all_vector\"");
    return IFA_STATUS_OK;
}

ifa_status ifa__cv_launch(ifa_context *ctx, const ifa_plan *plan, const ifa_incre_flash_attention_args *args,
                          cl_mem workspace, size_t workspace_offset, cl_command_queue queue, cl_uint num_wait,
                          const cl_event *wait, cl_event *first, cl_event *event) {
    const ifa_problem *p = &plan->problem;
    if (queue) IFA__TRY(check_in_order(queue));
    ifa__op_args a;
    ifa__op_args_fill(plan, args, workspace, workspace_offset, &a);
    const ifa__define defines[] = {
        {"Q_T", p->q_dtype},
        {"KV_T", p->kv_dtype},
        {"HEAD_DIM", p->head_dim},
        {"VDIM", ifa__value_dim(p)},
        {"WG", plan->cv_work_group_size},
        {"GT", plan->heads_per_group},
        {"SQ", p->seq_q},
        {"CHUNK", plan->chunk_rows},
        IFA__FEATURE_DEFINES(p),
    };
    const int nd = (int)(sizeof defines / sizeof defines[0]);
    static const char *const sources[] = {"ifa_common.cl", "ifa_cv.cl"};
    ifa__cached_kernel *kq, *kg, *ks;
    IFA__TRY(ifa__get_kernel(ctx, sources, 2, defines, nd, "ifa_cv_query", &kq));
    IFA__TRY(ifa__get_kernel(ctx, sources, 2, defines, nd, "ifa_cv_gather", &kg));
    IFA__TRY(ifa__get_kernel(ctx, sources, 2, defines, nd, "ifa_cv_softmax", &ks));
    IFA__TRY(ifa__check_kernel(ctx, ks, plan->cv_work_group_size));
    if (!queue) { /* building only: the combine too (CLBlast builds its matrix products at their first call) */
        ifa__cached_kernel *kc;
        return ifa__combine_kernel(ctx, plan, 1, 0, 1, &kc);
    }

    const size_t ws_word = workspace_offset / 4;
    const cl_ulong qt = ws_word + (cl_ulong)plan->ws_cv_q_offset / 4, kt = ws_word + (cl_ulong)plan->ws_cv_k_offset / 4;
    const cl_ulong vt = ws_word + (cl_ulong)plan->ws_cv_v_offset / 4, st = ws_word + (cl_ulong)plan->ws_cv_s_offset / 4;
    ifa__combine_parts c = {0};
    c.part = workspace, c.prefix = workspace, c.cv = 1, c.rowmax = 1, c.head_groups = 1, c.group = a.group;
    c.acc = ws_word + (cl_ulong)plan->ws_part_acc_offset / 4;
    c.m = ws_word + (cl_ulong)plan->ws_part_m_offset / 4;
    c.l = ws_word + (cl_ulong)plan->ws_part_l_offset / 4;
    c.max_splits = plan->max_splits;
    /* without splits one "split" covers every row an entry reads */
    c.split_tokens = (cl_int)ifa__cv_entry_rows(plan);
    const cl_int nkv = (cl_int)p->num_kv_heads;
    const size_t e = (size_t)plan->cv_entries, m = (size_t)plan->cv_rows, d = (size_t)p->head_dim;
    const size_t dv = (size_t)ifa__value_dim(p);
    const size_t chunk = (size_t)plan->chunk_rows;

    const ifa__karg qargs[] = {
        {sizeof(cl_mem), &a.q},       {sizeof a.q_off, &a.q_off},     {sizeof a.q_batch, &a.q_batch},
        {sizeof a.q_head, &a.q_head}, {sizeof a.q_tok, &a.q_tok},     {sizeof nkv, &nkv},
        {sizeof c.max_splits, &c.max_splits}, {sizeof(cl_mem), &workspace}, {sizeof qt, &qt},
        {sizeof(cl_mem), &a.rope},    {sizeof a.rope_pos_off, &a.rope_pos_off}, {sizeof(cl_mem), &a.rope},
        {sizeof a.rope_f_off, &a.rope_f_off}, {sizeof(cl_mem), &a.rcos}, {sizeof a.rcos_off, &a.rcos_off},
        {sizeof(cl_mem), &a.rsin},    {sizeof a.rsin_off, &a.rsin_off}, {sizeof(cl_mem), &a.lens},
        {sizeof a.lens_off, &a.lens_off},
    };
    const size_t qglobal[3] = {d, m, e};
    cl_event started = NULL;
    IFA__TRY(ifa__enqueue(kq, "ifa_cv_query", qargs, sizeof qargs / sizeof qargs[0], qglobal, NULL, 3, queue, num_wait,
                          wait, &started));

    cl_int step = 0;
    const ifa__karg gargs[] = {
        {sizeof(cl_mem), &a.k},         {sizeof a.k_off, &a.k_off},       {sizeof(cl_mem), &a.v},
        {sizeof a.v_off, &a.v_off},     {sizeof a.kv_batch, &a.kv_batch}, {sizeof a.kv_head, &a.kv_head},
        {sizeof a.kv_row, &a.kv_row},   {sizeof(cl_mem), &a.lens},        {sizeof a.lens_off, &a.lens_off},
        {sizeof a.uniform_len, &a.uniform_len}, {sizeof a.per_batch, &a.per_batch}, {sizeof nkv, &nkv},
        {sizeof c.max_splits, &c.max_splits}, {sizeof c.split_tokens, &c.split_tokens}, {sizeof step, &step},
        {sizeof a.window, &a.window},   {sizeof a.kv_end, &a.kv_end},     {sizeof(cl_mem), &a.table},
        {sizeof a.table_off, &a.table_off}, {sizeof a.table_cols, &a.table_cols}, {sizeof a.block_size, &a.block_size},
        {sizeof(cl_mem), &a.aqs},       {sizeof a.aqs_off, &a.aqs_off},   {sizeof(cl_mem), &a.aqo},
        {sizeof a.aqo_off, &a.aqo_off}, {sizeof a.aq_bstride, &a.aq_bstride},
        {sizeof a.aq_hstride, &a.aq_hstride},
        {sizeof(cl_mem), &a.vaqs},       {sizeof a.vaqs_off, &a.vaqs_off}, {sizeof(cl_mem), &a.vaqo},
        {sizeof a.vaqo_off, &a.vaqo_off}, {sizeof a.vaq_bstride, &a.vaq_bstride},
        {sizeof a.vaq_hstride, &a.vaq_hstride}, {sizeof(cl_mem), &workspace}, {sizeof kt, &kt},
        {sizeof vt, &vt},               {sizeof(cl_mem), &a.mask},        {sizeof a.mask_off, &a.mask_off},
        {sizeof a.mask_bstride, &a.mask_bstride}, {sizeof a.mask_tstride, &a.mask_tstride},
    };
    const ifa__karg sargs[] = {
        {sizeof(cl_mem), &workspace},   {sizeof st, &st},                 {sizeof c.acc, &c.acc},
        {sizeof c.m, &c.m},             {sizeof c.l, &c.l},               {sizeof step, &step},
        {sizeof(cl_mem), &a.lens},      {sizeof a.lens_off, &a.lens_off}, {sizeof a.uniform_len, &a.uniform_len},
        {sizeof a.per_batch, &a.per_batch}, {sizeof nkv, &nkv},           {sizeof c.max_splits, &c.max_splits},
        {sizeof c.split_tokens, &c.split_tokens}, {sizeof a.window, &a.window}, {sizeof a.scale, &a.scale},
        {sizeof a.softcap, &a.softcap}, {sizeof(cl_mem), &a.mask},        {sizeof a.mask_off, &a.mask_off},
        {sizeof a.mask_bstride, &a.mask_bstride}, {sizeof a.mask_tstride, &a.mask_tstride}, {sizeof(cl_mem), &a.pse},
        {sizeof a.pse_off, &a.pse_off}, {sizeof a.pse_bstride, &a.pse_bstride}, {sizeof a.pse_hstride, &a.pse_hstride},
        {sizeof a.pse_tstride, &a.pse_tstride}, {sizeof(cl_mem), &a.alibi}, {sizeof a.alibi_off, &a.alibi_off},
        {sizeof a.alibi_bstride, &a.alibi_bstride},
    };
    /* work-groups along D, so that a GPU reads each row coalesced (on PoCL this measured the same as letting
     * the driver choose) */
    size_t lx = 1;
    while (lx < 64 && d % (lx * 2) == 0) lx *= 2;
    const size_t gglobal[3] = {d, chunk, e}, glocal[3] = {lx, 1, 1};
    const size_t slocal[1] = {(size_t)plan->cv_work_group_size}, sglobal[1] = {slocal[0] * e * m};
    /* S_e (M x chunk) = Q_e (M x D) x K_e^T; acc_e (M x D_v) += P_e (M x chunk) x V_e (chunk x D_v) */
    const ifa__gemm qk = {m, chunk, d, 1, workspace, (size_t)qt, d, m * d, workspace, (size_t)kt, d, chunk * d,
                          0.0f, workspace, (size_t)st, chunk, m * chunk, e};
    const ifa__gemm pv = {m, dv, chunk, 0, workspace, (size_t)st, chunk, m * chunk, workspace, (size_t)vt, dv,
                          chunk * dv, 1.0f, workspace, (size_t)c.acc, dv, m * dv, e};
    ifa_status s = IFA_STATUS_OK;
    atomic_store(&ctx->blas_used, 1);
    for (step = 0; s == IFA_STATUS_OK && step < plan->cv_steps; ++step) {
        s = ifa__enqueue(kg, "ifa_cv_gather", gargs, sizeof gargs / sizeof gargs[0], gglobal, glocal, 3, queue, 0,
                         NULL, NULL);
        if (s == IFA_STATUS_OK) s = ifa__sgemm_batched(&qk, queue, NULL, "scores Q x K^T");
        if (s == IFA_STATUS_OK)
            s = ifa__enqueue(ks, "ifa_cv_softmax", sargs, sizeof sargs / sizeof sargs[0], sglobal, slocal, 1, queue, 0,
                             NULL, NULL);
        if (s == IFA_STATUS_OK) s = ifa__sgemm_batched(&pv, queue, NULL, "accumulators P x V");
    }
    if (s == IFA_STATUS_OK) s = ifa__combine_launch(ctx, plan, &a, &c, queue, 0, NULL, event);
    if (s == IFA_STATUS_OK && first)
        *first = started;
    else
        clReleaseEvent(started);
    return s;
}
