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
    static const char *const sources[] = {"ifa_formulas.h", "ifa_common.cl", "ifa_kernel_args.h", "ifa_cv.cl"};
    ifa__cached_kernel *kq, *kg, *ks;
    IFA__TRY(ifa__get_kernel(ctx, sources, sizeof sources / sizeof sources[0], defines, nd, "ifa_cv_query", &kq));
    IFA__TRY(ifa__get_kernel(ctx, sources, sizeof sources / sizeof sources[0], defines, nd, "ifa_cv_gather", &kg));
    IFA__TRY(ifa__get_kernel(ctx, sources, sizeof sources / sizeof sources[0], defines, nd, "ifa_cv_softmax", &ks));
    IFA__TRY(ifa__check_kernel(ctx, ks, plan->cv_work_group_size));
    if (!queue) { /* building only: the combine too (CLBlast builds its matrix products at their first call) */
        ifa__cached_kernel *kc;
        return ifa__combine_kernel(ctx, plan, 1, 0, 1, &kc);
    }

    const size_t ws_word = workspace_offset / 4;
    const cl_ulong qt = ws_word + (cl_ulong)plan->ws_cv_q_offset / 4, kt = ws_word + (cl_ulong)plan->ws_cv_k_offset / 4;
    const cl_ulong vt = ws_word + (cl_ulong)plan->ws_cv_v_offset / 4, st = ws_word + (cl_ulong)plan->ws_cv_s_offset / 4;
    const ifa__combine_parts c = {.cv = 1, .rowmax = 1};
    a.part = a.prefix = workspace, a.head_groups = 1, a.group = a.real_group;
    a.part_acc = ws_word + (cl_ulong)plan->ws_part_acc_offset / 4;
    a.part_m = ws_word + (cl_ulong)plan->ws_part_m_offset / 4;
    a.part_l = ws_word + (cl_ulong)plan->ws_part_l_offset / 4;
    a.max_splits = plan->max_splits;
    /* without splits one "split" covers every row an entry reads */
    a.split_tokens = (cl_int)ifa__cv_entry_rows(plan);
    const cl_int nkv = (cl_int)p->num_kv_heads;
    const size_t e = (size_t)plan->cv_entries, m = (size_t)plan->cv_rows, d = (size_t)p->head_dim;
    const size_t dv = (size_t)ifa__value_dim(p);
    const size_t chunk = (size_t)plan->chunk_rows;

    IFA__KARGS_STRUCT(IFA_ARGS_CV_QUERY)
    qa = {.q = a.q, .q_off = a.q_off, .q_bstride = a.q_bstride, .q_hstride = a.q_hstride, .q_tstride = a.q_tstride,
          .num_kv_heads = nkv, .max_splits = a.max_splits, .ws = workspace, .qt_off = qt, .rope_pos = a.rope_pos,
          .rope_pos_off = a.rope_pos_off, .rope_f = a.rope_f, .rope_f_off = a.rope_f_off, .rope_cos = a.rope_cos,
          .rope_c_off = a.rope_c_off, .rope_sin = a.rope_sin, .rope_s_off = a.rope_s_off, .lens = a.lens,
          .lens_off = a.lens_off};
    const ifa__karg qargs[] = IFA__KARGS_LIST(IFA_ARGS_CV_QUERY, qa);
    const size_t qglobal[3] = {d, m, e};
    cl_event started = NULL;
    IFA__TRY(ifa__enqueue(kq, "ifa_cv_query", qargs, IFA__NKARGS(qargs), qglobal, NULL, 3, queue, num_wait,
                          wait, &started));

    /* gather and softmax read the chunk index (step) from their structs, set before each launch */
    IFA__KARGS_STRUCT(IFA_ARGS_CV_GATHER)
    ga = {.k = a.k, .k_off = a.k_off, .v = a.v, .v_off = a.v_off, .kv_bstride = a.kv_bstride,
          .kv_hstride = a.kv_hstride, .kv_rstride = a.kv_rstride, .lens = a.lens, .lens_off = a.lens_off,
          .uniform_len = a.uniform_len, .per_batch = a.per_batch, .num_kv_heads = nkv, .max_splits = a.max_splits,
          .split_tokens = a.split_tokens, .window = a.window, .kv_end = a.kv_end, .table = a.table,
          .table_off = a.table_off, .table_cols = a.table_cols, .block_size = a.block_size, .aqs = a.aqs,
          .aqs_off = a.aqs_off, .aqo = a.aqo, .aqo_off = a.aqo_off, .aq_bstride = a.aq_bstride,
          .aq_hstride = a.aq_hstride, .vaqs = a.vaqs, .vaqs_off = a.vaqs_off, .vaqo = a.vaqo,
          .vaqo_off = a.vaqo_off, .vaq_bstride = a.vaq_bstride, .vaq_hstride = a.vaq_hstride, .ws = workspace,
          .kt_off = kt, .vt_off = vt, .mask = a.mask, .mask_off = a.mask_off, .mask_bstride = a.mask_bstride,
          .mask_tstride = a.mask_tstride};
    IFA__KARGS_STRUCT(IFA_ARGS_CV_SOFTMAX)
    sa = {.ws = workspace, .s_off = st, .acc_off = a.part_acc, .m_off = a.part_m, .l_off = a.part_l, .lens = a.lens,
          .lens_off = a.lens_off, .uniform_len = a.uniform_len, .per_batch = a.per_batch, .num_kv_heads = nkv,
          .max_splits = a.max_splits, .split_tokens = a.split_tokens, .window = a.window, .scale = a.scale,
          .softcap = a.softcap, .mask = a.mask, .mask_off = a.mask_off, .mask_bstride = a.mask_bstride,
          .mask_tstride = a.mask_tstride, .pse = a.pse, .pse_off = a.pse_off, .pse_bstride = a.pse_bstride,
          .pse_hstride = a.pse_hstride, .pse_tstride = a.pse_tstride, .alibi = a.alibi, .alibi_off = a.alibi_off,
          .alibi_bstride = a.alibi_bstride};
    const ifa__karg gargs[] = IFA__KARGS_LIST(IFA_ARGS_CV_GATHER, ga);
    const ifa__karg sargs[] = IFA__KARGS_LIST(IFA_ARGS_CV_SOFTMAX, sa);
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
                          chunk * dv, 1.0f, workspace, (size_t)a.part_acc, dv, m * dv, e};
    ifa_status s = IFA_STATUS_OK;
    atomic_store(&ctx->blas_used, 1);
    for (cl_int step = 0; s == IFA_STATUS_OK && step < plan->cv_steps; ++step) {
        ga.step = sa.step = step;
        s = ifa__enqueue(kg, "ifa_cv_gather", gargs, IFA__NKARGS(gargs), gglobal, glocal, 3, queue, 0,
                         NULL, NULL);
        if (s == IFA_STATUS_OK) s = ifa__sgemm_batched(&qk, queue, NULL, "scores Q x K^T");
        if (s == IFA_STATUS_OK)
            s = ifa__enqueue(ks, "ifa_cv_softmax", sargs, IFA__NKARGS(sargs), sglobal, slocal, 1, queue, 0,
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
