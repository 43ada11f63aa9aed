/* MergeAttentionStates: validation and launch (op_kernel/ifa_merge.cl). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "op_host/runtime/cl_status.h"
#include "op_host/runtime/context.h"
#include "op_host/runtime/launch.h"
#include "op_host/runtime/tensor_check.h"
#include "op_host/common/verbose.h"
#include "tiling/tuning_table.h"

#define IFA_MAX_MERGE_PARTS 4096

static int is_float(ifa_dtype d) { return d == IFA_DTYPE_FLOAT32 || d == IFA_DTYPE_FLOAT16 || d == IFA_DTYPE_BFLOAT16; }

/* The merge's sizes, from validated arguments. */
typedef struct merge_shape {
    int64_t parts, rows, dim;
} merge_shape;

static ifa_status check_args(const ifa_merge_attention_states_args *a, merge_shape *m) {
    char s1[128], s2[128];
    if (!a) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "args is NULL");
    const struct {
        const ifa_tensor *t;
        const char *name;
    } required[] = {{a->partial_outputs, "partial_outputs"}, {a->partial_lses, "partial_lses"},
                    {a->merged_output, "merged_output"}};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; ++i) {
        if (!required[i].t) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "%s is NULL", required[i].name);
        IFA__TRY(ifa__check_descriptor(required[i].t, required[i].name));
    }
    if (a->merged_lse) IFA__TRY(ifa__check_descriptor(a->merged_lse, "merged_lse"));
    const ifa_tensor *po = a->partial_outputs, *pl = a->partial_lses, *o = a->merged_output, *l = a->merged_lse;
    if (po->ndim < 2)
        return ifa__fail(IFA_STATUS_INVALID_RANK, "partial_outputs has rank %d; it must be (P, rows..., D), rank >= 2",
                         (int)po->ndim);
    if (pl->ndim != po->ndim - 1)
        return ifa__fail(IFA_STATUS_INVALID_RANK, "partial_lses has rank %d; it must be partial_outputs' rank minus 1 (%d)",
                         (int)pl->ndim, (int)po->ndim - 1);
    for (int i = 0; i < pl->ndim; ++i)
        if (pl->shape[i] != po->shape[i])
            return ifa__fail(IFA_STATUS_SHAPE_MISMATCH,
                             "partial_lses has shape %s; it must be partial_outputs' shape %s without the last dimension",
                             ifa__shape_str(pl, s1, sizeof s1), ifa__shape_str(po, s2, sizeof s2));
    if (po->shape[0] > IFA_MAX_MERGE_PARTS)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_SHAPE, "partial_outputs has %" PRId64 " parts; at most %d are merged",
                         po->shape[0], IFA_MAX_MERGE_PARTS);
    if (o->ndim != po->ndim - 1)
        return ifa__fail(IFA_STATUS_INVALID_RANK, "merged_output has rank %d; it must be (rows..., D), rank %d",
                         (int)o->ndim, (int)po->ndim - 1);
    for (int i = 0; i < o->ndim; ++i)
        if (o->shape[i] != po->shape[i + 1])
            return ifa__fail(IFA_STATUS_SHAPE_MISMATCH,
                             "merged_output has shape %s; it must be partial_outputs' shape %s without the first dimension",
                             ifa__shape_str(o, s1, sizeof s1), ifa__shape_str(po, s2, sizeof s2));
    if (l) {
        int ok = l->ndim == (po->ndim > 2 ? po->ndim - 2 : 1);
        for (int i = 0; ok && i < po->ndim - 2; ++i) ok = l->shape[i] == po->shape[i + 1];
        if (ok && po->ndim == 2) ok = l->shape[0] == 1;
        if (!ok)
            return ifa__fail(IFA_STATUS_SHAPE_MISMATCH,
                             "merged_lse has shape %s; it must be partial_lses' shape %s without the first dimension",
                             ifa__shape_str(l, s1, sizeof s1), ifa__shape_str(pl, s2, sizeof s2));
        if (l->dtype != IFA_DTYPE_FLOAT32)
            return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "merged_lse has dtype %s; it must be float32",
                             ifa_dtype_name(l->dtype));
    }
    if (!is_float(po->dtype))
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE,
                         "partial_outputs has dtype %s; it must be float32, float16 or bfloat16", ifa_dtype_name(po->dtype));
    if (pl->dtype != IFA_DTYPE_FLOAT32)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE, "partial_lses has dtype %s; it must be float32",
                         ifa_dtype_name(pl->dtype));
    if (!is_float(o->dtype))
        return ifa__fail(IFA_STATUS_UNSUPPORTED_DTYPE,
                         "merged_output has dtype %s; it must be float32, float16 or bfloat16", ifa_dtype_name(o->dtype));
    m->parts = po->shape[0];
    m->dim = po->shape[po->ndim - 1];
    m->rows = ifa_tensor_numel(pl) / m->parts;
    if (m->dim > INT32_MAX)
        return ifa__fail(IFA_STATUS_UNSUPPORTED_SHAPE, "partial_outputs' last dimension %" PRId64 " exceeds 2^31 - 1",
                         m->dim);
    return IFA_STATUS_OK;
}

ifa_status ifa_merge_attention_states_get_workspace_size(ifa_context *ctx, const ifa_merge_attention_states_args *args,
                                                         size_t *workspace_bytes) {
    if (!ctx) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "ctx is NULL");
    if (!workspace_bytes) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "workspace_bytes is NULL");
    merge_shape m;
    IFA__TRY(check_args(args, &m));
    *workspace_bytes = 0;
    return IFA_STATUS_OK;
}

ifa_status ifa_merge_attention_states_run(ifa_context *ctx, const ifa_merge_attention_states_args *args,
                                          cl_command_queue queue, cl_uint num_events_in_wait_list,
                                          const cl_event *event_wait_list, cl_event *event) {
    if (!ctx) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "ctx is NULL");
    if (!queue) return ifa__fail(IFA_STATUS_INVALID_QUEUE, "queue is NULL");
    IFA__TRY(ifa__check_wait_list(num_events_in_wait_list, event_wait_list));
    merge_shape m;
    IFA__TRY(check_args(args, &m));
    IFA__TRY(ifa__check_buffer(ctx->cl_ctx, args->partial_outputs, "partial_outputs"));
    IFA__TRY(ifa__check_buffer(ctx->cl_ctx, args->partial_lses, "partial_lses"));
    IFA__TRY(ifa__check_buffer(ctx->cl_ctx, args->merged_output, "merged_output"));
    if (args->merged_lse) IFA__TRY(ifa__check_buffer(ctx->cl_ctx, args->merged_lse, "merged_lse"));
    const ifa_tensor *const ins[3] = {args->partial_outputs, args->partial_lses, args->merged_lse};
    static const char *const in_names[3] = {"partial_outputs", "partial_lses", "merged_lse"};
    const ifa_tensor *const outs[2] = {args->merged_output, args->merged_lse};
    static const char *const out_names[2] = {"merged_output", "merged_lse"};
    for (int o = 0; o < 2; ++o)
        for (int i = 0; outs[o] && i < 3; ++i)
            if (ins[i] && ins[i] != outs[o])
                IFA__TRY(ifa__check_apart(outs[o], out_names[o], ins[i]->buffer, ins[i]->offset,
                                          (uint64_t)ifa_tensor_bytes(ins[i]), in_names[i]));
    ifa__verbose_merge(args);

    const ifa_tuning t = ifa__tuning_for(ctx->facts.vendor);
    int32_t wg = t.combine_work_group_size > 0 ? t.combine_work_group_size : 64;
    while (ctx->facts.max_work_group_size > 0 && wg > ctx->facts.max_work_group_size) wg /= 2;
    const ifa__define defines[] = {{"P_T", args->partial_outputs->dtype}, {"O_T", args->merged_output->dtype},
                                   {"WG", wg}, {"HAS_LSE", args->merged_lse != NULL}};
    static const char *const sources[] = {"ifa_formulas.h", "ifa_common.cl", "ifa_merge.cl"};
    ifa__cached_kernel *k;
    IFA__TRY(ifa__get_kernel(ctx, sources, sizeof sources / sizeof sources[0], defines,
                             sizeof defines / sizeof defines[0], "ifa_merge", &k));
    IFA__TRY(ifa__check_kernel(ctx, k, wg));
    const ifa_tensor *po = args->partial_outputs, *pl = args->partial_lses, *o = args->merged_output;
    const ifa_tensor *l = args->merged_lse ? args->merged_lse : pl; /* not written without HAS_LSE */
    const cl_ulong po_off = ifa__elem_offset(po), pl_off = ifa__elem_offset(pl), o_off = ifa__elem_offset(o);
    const cl_ulong l_off = args->merged_lse ? ifa__elem_offset(l) : 0, rows = (cl_ulong)m.rows;
    const cl_int parts = (cl_int)m.parts, dim = (cl_int)m.dim;
    const ifa__karg kargs[] = {
        {sizeof(cl_mem), &po->buffer}, {sizeof po_off, &po_off}, {sizeof(cl_mem), &pl->buffer}, {sizeof pl_off, &pl_off},
        {sizeof(cl_mem), &o->buffer},  {sizeof o_off, &o_off},   {sizeof(cl_mem), &l->buffer},  {sizeof l_off, &l_off},
        {sizeof rows, &rows},          {sizeof parts, &parts},   {sizeof dim, &dim},
    };
    const size_t local[1] = {(size_t)wg}, global[1] = {(size_t)wg * (size_t)m.rows};
    cl_event done = NULL;
    IFA__TRY(ifa__enqueue(k, "ifa_merge", kargs, sizeof kargs / sizeof kargs[0], global, local, 1, queue,
                          num_events_in_wait_list, event_wait_list, &done));
    if (event)
        *event = done;
    else
        clReleaseEvent(done);
    return IFA_STATUS_OK;
}
