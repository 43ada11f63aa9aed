/* Kernel arguments from a plan, and the split combine launch. */
#include "templates/op_args.h"

#include <stdio.h>
#include <string.h>

#include "op_host/runtime/launch.h"
#include "op_host/runtime/tensor_check.h"
#include "tiling/planner.h"

/* The batch and head strides of a scale form (ifa_antiquant kind, positions len); returns its elements (one
 * side of antiquant_scale's (2, ...) form). */
static cl_ulong aq_strides(const ifa_problem *p, int32_t kind, int64_t len, cl_ulong *bstride, cl_ulong *hstride) {
    const cl_ulong nkv = (cl_ulong)p->num_kv_heads, l = (cl_ulong)len;
    *bstride = 0, *hstride = 0;
    switch (kind) {
    case IFA_ANTIQUANT_PER_CHANNEL: return nkv * (cl_ulong)p->head_dim;
    case IFA_ANTIQUANT_PER_TENSOR: return 1;
    case IFA_ANTIQUANT_PER_TOKEN: *bstride = l; return (cl_ulong)p->batch * l;
    case IFA_ANTIQUANT_PER_HEAD_PER_TOKEN: *hstride = l, *bstride = nkv * l; return (cl_ulong)p->batch * nkv * l;
    case IFA_ANTIQUANT_PAGED_HEAD_TOKEN: *hstride = l, *bstride = nkv * l; return (cl_ulong)p->pool_blocks * nkv * l;
    default: return 0;
    }
}

void ifa__op_args_fill(const ifa_plan *plan, const ifa_incre_flash_attention_args *args, cl_mem workspace,
                       size_t workspace_offset, ifa__op_args *a) {
    const ifa_problem *p = &plan->problem;
    memset(a, 0, sizeof *a);
    const cl_ulong d = (cl_ulong)p->head_dim, n = (cl_ulong)p->num_heads, nkv = (cl_ulong)p->num_kv_heads;
    const cl_ulong sq = (cl_ulong)p->seq_q;
    const cl_ulong rows = p->paged ? (cl_ulong)p->block_size : (cl_ulong)p->seq_kv; /* rows per batch or block */
    const cl_ulong dv = (cl_ulong)ifa__value_dim(p);
    if (p->layout == IFA_LAYOUT_BNSD) {
        a->q_bstride = n * sq * d, a->q_hstride = sq * d, a->q_tstride = d;
        a->o_bstride = n * sq * dv, a->o_hstride = sq * dv, a->o_tstride = dv;
        a->kv_bstride = nkv * rows * d, a->kv_hstride = rows * d, a->kv_rstride = d;
    } else {
        a->q_bstride = sq * n * d, a->q_hstride = d, a->q_tstride = n * d;
        a->o_bstride = sq * n * dv, a->o_hstride = dv, a->o_tstride = n * dv;
        a->kv_bstride = rows * nkv * d, a->kv_hstride = d, a->kv_rstride = nkv * d;
    }
    const ifa_tensor *q = args->query, *o = args->attention_out;
    const cl_ulong ws_word = workspace_offset / 4;
    a->q = q->buffer, a->k = args->key->buffer, a->v = args->value->buffer, a->o = o->buffer;
    a->q_off = ifa__elem_offset(q), a->k_off = ifa__elem_offset(args->key), a->v_off = ifa__elem_offset(args->value);
    a->o_off = ifa__elem_offset(o);
    a->lse = args->softmax_lse ? args->softmax_lse->buffer : o->buffer;
    a->lse_off = args->softmax_lse ? args->softmax_lse->offset / 4 : 0;
    a->per_batch = p->lengths_mode == IFA_LENGTHS_PER_BATCH;
    a->lens = a->per_batch ? workspace : q->buffer;
    a->lens_off = a->per_batch ? ws_word + (cl_ulong)plan->ws_lengths_offset / 4 : 0;
    a->uniform_len = (cl_int)p->uniform_length;
    a->num_heads = (cl_int)p->num_heads, a->real_group = (cl_int)(p->num_heads / p->num_kv_heads);
    a->batch = (cl_int)p->batch;
    memcpy(&a->scale, &p->scale_bits, sizeof a->scale);
    memcpy(&a->softcap, &p->softcap_bits, sizeof a->softcap);
    a->window = (cl_int)p->window, a->kv_end = (cl_int)(p->seq_kv - p->kv_padding);

    a->sinks = args->sinks ? args->sinks->buffer : q->buffer;
    a->sinks_off = args->sinks ? ifa__elem_offset(args->sinks) : 0;
    a->alibi = args->alibi_slopes ? args->alibi_slopes->buffer : q->buffer;
    a->alibi_off = args->alibi_slopes ? ifa__elem_offset(args->alibi_slopes) : 0;
    a->alibi_bstride = p->alibi == IFA_ALIBI_PER_BATCH ? n : 0;
    const ifa_tensor *mask = args->atten_mask, *pse = args->pse_shift;
    a->mask = mask ? mask->buffer : q->buffer, a->pse = pse ? pse->buffer : q->buffer;
    a->mask_off = mask ? mask->offset : 0, a->pse_off = pse ? ifa__elem_offset(pse) : 0;
    a->mask_tstride = p->mask_kind == IFA_MASK_PER_TOKEN ? (cl_ulong)p->mask_len : 0;
    a->mask_bstride = mask ? (cl_ulong)(ifa_tensor_numel(mask) / mask->shape[0]) : 0;
    a->pse_tstride = (cl_ulong)p->pse_len, a->pse_hstride = (cl_ulong)(p->seq_q * p->pse_len);
    a->pse_bstride = p->pse_kind == IFA_PSE_PER_BATCH ? (cl_ulong)p->num_heads * a->pse_hstride : 0;
    a->table = p->paged ? workspace : q->buffer;
    a->table_off = p->paged ? ws_word + (cl_ulong)plan->ws_table_offset / 4 : 0;
    a->table_cols = (cl_int)p->table_cols, a->block_size = (cl_int)p->block_size;

    /* int8 output: quant_scale2 / quant_offset2 */
    const ifa_tensor *qs2 = args->quant_scale2, *qo2 = args->quant_offset2;
    a->qs2 = qs2 ? qs2->buffer : q->buffer, a->qo2 = qo2 ? qo2->buffer : a->qs2;
    a->qs2_off = qs2 ? ifa__elem_offset(qs2) : 0, a->qo2_off = qo2 ? ifa__elem_offset(qo2) : 0;

    /* antiquant scales/offsets: the key's and the value's element offsets and strides; antiquant_scale's
     * (2, ...) form holds the value's after the key's, one side's elements (`half`) later */
    const cl_ulong kh = aq_strides(p, p->antiquant, p->aq_len, &a->aq_bstride, &a->aq_hstride);
    aq_strides(p, p->v_antiquant, p->v_aq_len, &a->vaq_bstride, &a->vaq_hstride);
    const ifa_tensor *aqs = p->aq_separate ? args->key_antiquant_scale : args->antiquant_scale;
    const ifa_tensor *aqo = p->aq_separate ? args->key_antiquant_offset : args->antiquant_offset;
    const ifa_tensor *vaqs = p->aq_separate ? args->value_antiquant_scale : aqs;
    const ifa_tensor *vaqo = p->aq_separate ? args->value_antiquant_offset : aqo;
    const cl_ulong half = p->aq_separate ? 0 : kh;
    a->aqs = aqs ? aqs->buffer : q->buffer, a->aqo = aqo ? aqo->buffer : a->aqs;
    a->aqs_off = aqs ? ifa__elem_offset(aqs) : 0, a->aqo_off = aqo ? ifa__elem_offset(aqo) : 0;
    a->vaqs = vaqs ? vaqs->buffer : q->buffer, a->vaqo = vaqo ? vaqo->buffer : a->vaqs;
    a->vaqs_off = vaqs ? ifa__elem_offset(vaqs) + half : 0, a->vaqo_off = vaqo ? ifa__elem_offset(vaqo) + half : 0;

    /* rope: the first query positions (int64) and inverse frequencies (float pairs) in the workspace, or tables */
    a->rope_pos = a->rope_f = p->rope ? workspace : q->buffer;
    a->rope_pos_off = p->rope ? (workspace_offset + (cl_ulong)plan->ws_rope_offset) / 8 : 0;
    a->rope_f_off = p->rope ? a->rope_pos_off + (cl_ulong)p->batch : 0; /* float2 = 8 bytes */
    const ifa_tensor *rcos = args->rope_cos, *rsin = args->rope_sin;
    a->rope_cos = rcos ? rcos->buffer : q->buffer, a->rope_sin = rsin ? rsin->buffer : q->buffer;
    a->rope_c_off = rcos ? ifa__elem_offset(rcos) : 0, a->rope_s_off = rsin ? ifa__elem_offset(rsin) : 0;
}

ifa_status ifa__combine_kernel(ifa_context *ctx, const ifa_plan *plan, int rowmax, int balanced, int cv,
                               ifa__cached_kernel **out) {
    const ifa_problem *p = &plan->problem;
    /* the combine's columns at the vector shape's width (ifa_combine.cl's CVW; the plan check holds that it divides
     * D_v, and the cv template's plans have 1) */
    const ifa__define defines[] = {
        {"O_T", p->out_dtype},   {"WG", plan->combine_work_group_size}, {"CVW", plan->vector_width},
        {"HAS_LSE", p->has_lse}, {"ROWMAX", rowmax},                    {"BALANCED", balanced},
        {"CV", cv},
        {"QLEN", p->q_lengths},  {"QPACK", p->q_lengths && plan->kv_heads_per_group <= 1},
        IFA__OUT_DEFINES(p, plan),
    };
    static const char *const sources[] = {"ifa_formulas.h", "ifa_common.cl", "ifa_kernel_args.h", "ifa_combine.cl"};
    IFA__TRY(ifa__get_kernel(ctx, sources, sizeof sources / sizeof sources[0], defines, sizeof defines / sizeof defines[0], "ifa_combine", out));
    return ifa__check_kernel(ctx, *out, plan->combine_work_group_size);
}

ifa_status ifa__combine_launch(ifa_context *ctx, const ifa_plan *plan, const ifa__op_args *a,
                               const ifa__combine_parts *c, cl_command_queue queue, cl_uint num_wait,
                               const cl_event *wait, cl_event *event) {
    const ifa_problem *p = &plan->problem;
    ifa__cached_kernel *k;
    IFA__TRY(ifa__combine_kernel(ctx, plan, c->rowmax, c->balanced, c->cv, &k));
    IFA__KARGS_STRUCT(IFA_ARGS_COMBINE)
    ka = {.part = a->part, .part_acc = a->part_acc, .part_m = a->part_m, .part_l = a->part_l, .max_splits = a->max_splits,
          .o = a->o, .o_off = a->o_off, .o_bstride = a->o_bstride, .o_hstride = a->o_hstride, .o_tstride = a->o_tstride,
          .lse = a->lse, .lse_off = a->lse_off, .num_heads = a->num_heads,
          .lens = a->lens, .lens_off = a->lens_off, .uniform_len = a->uniform_len, .per_batch = a->per_batch,
          .split_tokens = a->split_tokens, .prefix = a->prefix, .prefix_off = a->prefix_off,
          .total_cost = a->total_cost, .units = a->units, .c0 = a->c0, .group = a->group,
          .head_groups = a->head_groups, .window = a->window, .qs2 = a->qs2, .qs2_off = a->qs2_off, .qo2 = a->qo2,
          .qo2_off = a->qo2_off, .sinks = a->sinks, .sinks_off = a->sinks_off,
          .head_dim = (cl_int)ifa__value_dim(p), .gt = (cl_int)plan->heads_per_group, .sq = (cl_int)p->seq_q,
          .causal = (cl_int)p->causal};
    const ifa__karg args[] = IFA__KARGS_LIST(IFA_ARGS_COMBINE, ka);
    const size_t local[1] = {(size_t)plan->combine_work_group_size};
    const size_t global[1] = {local[0] * (c->one_group ? 1 : (size_t)(p->batch * p->num_heads * p->seq_q))};
    return ifa__enqueue(k, "ifa_combine", args, IFA__NKARGS(args), global, local, 1, queue, num_wait, wait,
                        event);
}
