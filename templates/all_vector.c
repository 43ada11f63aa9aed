/* The all-vector template: -D options from the plan, strides from the layout, one kernel launch. */
#include "templates/all_vector.h"

#include <stdio.h>
#include <string.h>

#include "op_host/cl_status.h"
#include "op_host/context.h"
#include "op_host/launch.h"
#include "op_host/tensor_check.h"

typedef struct strides {
    cl_ulong q_batch, q_head, q_tok;
    cl_ulong kv_batch, kv_head, kv_row; /* paged: kv_batch is the pool's block stride */
} strides;

static strides layout_strides(const ifa_problem *p) {
    strides s;
    const cl_ulong d = (cl_ulong)p->head_dim, n = (cl_ulong)p->num_heads, nkv = (cl_ulong)p->num_kv_heads;
    const cl_ulong sq = (cl_ulong)p->seq_q;
    const cl_ulong rows = p->paged ? (cl_ulong)p->block_size : (cl_ulong)p->seq_kv; /* rows per batch or block */
    if (p->layout == IFA_LAYOUT_BNSD) {
        s.q_batch = n * sq * d, s.q_head = sq * d, s.q_tok = d;
        s.kv_batch = nkv * rows * d, s.kv_head = rows * d, s.kv_row = d;
    } else {
        s.q_batch = sq * n * d, s.q_head = d, s.q_tok = n * d;
        s.kv_batch = rows * nkv * d, s.kv_head = d, s.kv_row = nkv * d;
    }
    return s;
}

/* Replaces the value of the argument whose value pointer is `was` (one of the main pass's variables). */
static void set_arg(ifa__karg *args, size_t n, const void *was, const void *now) {
    for (size_t i = 0; i < n; ++i)
        if (args[i].value == was) args[i].value = now;
}

/* The cascade's prefix pass, with a (the main pass's arguments with the prefix's substituted) and the prefix
 * kernel variant: every batch's query rows as B*G virtual heads per KV head and one split covering the
 * prefix, writing partial slot 0 of every row. */
static ifa_status launch_prefix(ifa_context *ctx, const ifa_plan *plan, const ifa__karg *a, cl_uint nargs,
                                cl_command_queue queue, cl_uint num_wait, const cl_event *wait, cl_event *done) {
    const ifa_problem *p = &plan->problem;
    char options[768];
    snprintf(options, sizeof options,
             "-cl-std=CL1.2 -D Q_T=%d -D KV_T=%d -D O_T=%d -D HEAD_DIM=%d -D WG=%d -D VW=%d -D XB=%d -D CHUNK=%d "
             "-D GT=%d -D SQ=%d -D CAUSAL=0 -D HAS_LSE=0 -D HAS_MASK=0 -D HAS_PSE=0 -D SOFTCAP=%d -D HAS_PAD=0 "
             "-D PAGED=0 -D ANTIQUANT=0 -D SPLIT=1 -D BALANCED=0 -D ROWMAX=1 -D MAX_PASS=0 -D PREFIX=1 "
             "-D ROPE=%d -D ROPE_DIM=%d -D ROPE_TAB=%d",
             (int)p->q_dtype, (int)p->kv_dtype, p->out_dtype == IFA_DTYPE_INT8 ? 0 : (int)p->out_dtype,
             (int)p->head_dim, (int)plan->work_group_size, (int)plan->vector_width, (int)plan->prefix_pv_block,
             (int)plan->chunk_rows, (int)plan->prefix_heads_per_group, (int)p->seq_q, p->softcap_bits != 0,
             (int)p->rope, (int)p->rope_dim, (int)p->rope_table);
    static const char *const sources[] = {"ifa_common.cl", "ifa_all_vector.cl"};
    ifa__cached_kernel *k;
    IFA__TRY(ifa__get_kernel(ctx, sources, 2, options, "ifa_all_vector", &k));
    IFA__TRY(ifa__check_kernel(ctx, k, plan->work_group_size));
    const size_t local[3] = {(size_t)plan->work_group_size, 1, 1};
    const size_t global[3] = {(size_t)plan->work_group_size * (size_t)(p->num_kv_heads * plan->prefix_head_groups), 1, 1};
    return ifa__enqueue(k, "ifa_all_vector (shared prefix)", a, nargs, global, local, 3, queue, num_wait, wait, done);
}

ifa_status ifa__all_vector_launch(ifa_context *ctx, const ifa_plan *plan, const ifa_incre_flash_attention_args *args,
                                  cl_mem workspace, size_t workspace_offset, cl_command_queue queue, cl_uint num_wait,
                                  const cl_event *wait, cl_event *first, cl_event *event) {
    const ifa_problem *p = &plan->problem;
    const int balanced = plan->split_kv == IFA_SPLIT_BALANCED, global_max = plan->split_kv == IFA_SPLIT_GLOBAL_ROWMAX;
    const int equal_splits = plan->split_kv == IFA_SPLIT_PARTIAL_ROWMAX || global_max;
    char options[768], q2_options[64];
    snprintf(q2_options, sizeof q2_options, "-D QUANT_OUT=%d -D Q2_T=%d -D Q2_OFF=%d -D PREFIX_SLOTS=%d",
             (int)p->quant_out, p->quant_out ? (int)p->q2_dtype : 0, (int)p->q2_offset, (int)plan->prefix_slots);
    snprintf(options, sizeof options,
             "-cl-std=CL1.2 -D Q_T=%d -D KV_T=%d -D O_T=%d -D HEAD_DIM=%d -D WG=%d -D VW=%d -D XB=%d -D CHUNK=%d "
             "-D GT=%d -D SQ=%d "
             "-D CAUSAL=%d -D HAS_LSE=%d -D HAS_MASK=%d -D HAS_PSE=%d -D SOFTCAP=%d -D HAS_PAD=%d -D PAGED=%d "
             "-D ANTIQUANT=%d -D AQ_T=%d -D AQ_OFF=%d %s -D ROPE=%d -D ROPE_DIM=%d -D ROPE_TAB=%d "
             "-D SPLIT=%d -D BALANCED=%d -D ROWMAX=%d -D MAX_PASS=",
             (int)p->q_dtype, (int)p->kv_dtype, (int)p->out_dtype, (int)p->head_dim, (int)plan->work_group_size,
             (int)plan->vector_width, (int)plan->pv_block, (int)plan->chunk_rows, (int)plan->heads_per_group,
             (int)p->seq_q, (int)p->causal, (int)p->has_lse,
             p->mask_kind != IFA_MASK_NONE, p->pse_kind != IFA_PSE_NONE, p->softcap_bits != 0, (int)p->has_kv_padding,
             (int)p->paged, (int)p->antiquant, p->antiquant ? (int)p->aq_dtype : 0, (int)p->aq_offset, q2_options,
             (int)p->rope, (int)p->rope_dim, (int)p->rope_table, equal_splits, balanced, global_max ? 2 : 1);
    const size_t olen = strlen(options);
    static const char *const sources[] = {"ifa_common.cl", "ifa_all_vector.cl"};
    ifa__cached_kernel *k, *kmax = NULL;
    snprintf(options + olen, sizeof options - olen, "0");
    IFA__TRY(ifa__get_kernel(ctx, sources, 2, options, "ifa_all_vector", &k));
    IFA__TRY(ifa__check_kernel(ctx, k, plan->work_group_size));
    if (global_max) {
        snprintf(options + olen, sizeof options - olen, "1");
        IFA__TRY(ifa__get_kernel(ctx, sources, 2, options, "ifa_all_vector", &kmax));
        IFA__TRY(ifa__check_kernel(ctx, kmax, plan->work_group_size));
    }

    const strides s = layout_strides(p);
    const ifa_tensor *q = args->query, *kt = args->key, *v = args->value, *o = args->attention_out;
    const ifa_tensor *lse = args->softmax_lse ? args->softmax_lse : args->attention_out;
    const cl_mem lens = plan->problem.lengths_mode == IFA_LENGTHS_PER_BATCH ? workspace : q->buffer;
    const cl_mem part = plan->split_kv ? workspace : o->buffer;
    const size_t ws_word = workspace_offset / 4;
    const cl_ulong part_acc = plan->split_kv ? ws_word + (cl_ulong)plan->ws_part_acc_offset / 4 : 0;
    const cl_ulong part_m = plan->split_kv ? ws_word + (cl_ulong)plan->ws_part_m_offset / 4 : 0;
    const cl_ulong part_l = plan->split_kv ? ws_word + (cl_ulong)plan->ws_part_l_offset / 4 : 0;
    /* a row's partials: the prefix's slot (cascade), then the splits */
    const cl_int split_tokens = plan->split_tokens, max_splits = plan->max_splits + plan->prefix_slots;
    const cl_mem prefix = balanced ? workspace : part; /* int64 batch offsets of the cost line */
    const cl_ulong prefix_off = balanced ? (workspace_offset + (cl_ulong)plan->ws_prefix_offset) / 8 : 0;
    const cl_long total_cost = plan->total_cost;
    const cl_int units = plan->units, c0 = plan->block_cost_rows, batch = (cl_int)p->batch;
    const cl_ulong q_off = ifa__elem_offset(q), k_off = ifa__elem_offset(kt), v_off = ifa__elem_offset(v), o_off = ifa__elem_offset(o);
    const cl_ulong lse_off = args->softmax_lse ? lse->offset / 4 : 0;
    const cl_ulong lens_off =
        plan->problem.lengths_mode == IFA_LENGTHS_PER_BATCH ? ws_word + (cl_ulong)plan->ws_lengths_offset / 4 : 0;
    const cl_int uniform_len = (cl_int)p->uniform_length;
    const cl_int per_batch = p->lengths_mode == IFA_LENGTHS_PER_BATCH;
    const cl_int num_heads = (cl_int)p->num_heads, group = (cl_int)(p->num_heads / p->num_kv_heads);
    const cl_int head_groups = plan->head_groups, real_group = group;
    float scale, softcap;
    memcpy(&scale, &p->scale_bits, sizeof scale);
    memcpy(&softcap, &p->softcap_bits, sizeof softcap);
    const cl_int window = (cl_int)p->window, kv_end = (cl_int)(p->seq_kv - p->kv_padding);
    /* absent optional inputs are passed as the query's buffer: the kernel is built without reading them */
    const ifa_tensor *mask = args->atten_mask, *pse = args->pse_shift;
    const cl_mem mask_buf = mask ? mask->buffer : q->buffer, pse_buf = pse ? pse->buffer : q->buffer;
    const cl_ulong mask_off = mask ? mask->offset : 0, pse_off = pse ? ifa__elem_offset(pse) : 0;
    const cl_ulong mask_tstride = p->mask_kind == IFA_MASK_PER_TOKEN ? (cl_ulong)p->mask_len : 0;
    const cl_ulong mask_bstride = mask ? (cl_ulong)(ifa_tensor_numel(mask) / mask->shape[0]) : 0;
    const cl_ulong pse_tstride = (cl_ulong)p->pse_len, pse_hstride = (cl_ulong)(p->seq_q * p->pse_len);
    const cl_ulong pse_bstride = p->pse_kind == IFA_PSE_PER_BATCH ? (cl_ulong)p->num_heads * pse_hstride : 0;
    const cl_mem table = p->paged ? workspace : q->buffer;
    const cl_ulong table_off = p->paged ? ws_word + (cl_ulong)plan->ws_table_offset / 4 : 0;
    const cl_int table_cols = (cl_int)p->table_cols, block_size = (cl_int)p->block_size;
    /* int8 output: quant_scale2 / quant_offset2 */
    const ifa_tensor *qs2 = args->quant_scale2, *qo2 = args->quant_offset2;
    const cl_mem qs2_buf = qs2 ? qs2->buffer : q->buffer, qo2_buf = qo2 ? qo2->buffer : qs2_buf;
    const cl_ulong qs2_off = qs2 ? ifa__elem_offset(qs2) : 0, qo2_off = qo2 ? ifa__elem_offset(qo2) : 0;
    /* antiquant scale/offset: element offsets and the strides of their (2, ...) forms */
    const ifa_tensor *aqs = args->antiquant_scale, *aqo = args->antiquant_offset;
    const cl_mem aqs_buf = aqs ? aqs->buffer : q->buffer, aqo_buf = aqo ? aqo->buffer : aqs_buf;
    const cl_ulong aqs_off = aqs ? ifa__elem_offset(aqs) : 0, aqo_off = aqo ? ifa__elem_offset(aqo) : 0;
    const cl_ulong aq_len = (cl_ulong)p->aq_len, nkv_u = (cl_ulong)p->num_kv_heads, b_u = (cl_ulong)p->batch;
    cl_ulong aq_vstride = 0, aq_bstride = 0, aq_hstride = 0;
    if (p->antiquant == IFA_ANTIQUANT_PER_CHANNEL) aq_vstride = nkv_u * (cl_ulong)p->head_dim;
    if (p->antiquant == IFA_ANTIQUANT_PER_TENSOR) aq_vstride = 1;
    if (p->antiquant == IFA_ANTIQUANT_PER_TOKEN) aq_bstride = aq_len, aq_vstride = b_u * aq_len;
    if (p->antiquant == IFA_ANTIQUANT_PER_HEAD_PER_TOKEN)
        aq_hstride = aq_len, aq_bstride = nkv_u * aq_len, aq_vstride = b_u * nkv_u * aq_len;
    if (p->antiquant == IFA_ANTIQUANT_PAGED_HEAD_TOKEN)
        aq_hstride = aq_len, aq_bstride = nkv_u * aq_len, aq_vstride = (cl_ulong)p->pool_blocks * nkv_u * aq_len;

    /* rope: the first query positions (int64) and inverse frequencies (float pairs) in the workspace, or tables */
    const cl_mem rope_buf = p->rope ? workspace : q->buffer;
    const cl_ulong rope_pos_off = p->rope ? (workspace_offset + (cl_ulong)plan->ws_rope_offset) / 8 : 0;
    const cl_ulong rope_f_off = p->rope ? rope_pos_off + (cl_ulong)p->batch : 0; /* float2 = 8 bytes */
    const ifa_tensor *rcos = args->rope_cos, *rsin = args->rope_sin;
    const cl_mem rcos_buf = rcos ? rcos->buffer : q->buffer, rsin_buf = rsin ? rsin->buffer : q->buffer;
    const cl_ulong rcos_off = rcos ? ifa__elem_offset(rcos) : 0, rsin_off = rsin ? ifa__elem_offset(rsin) : 0;

    const ifa__karg kargs[] = {
        {sizeof(cl_mem), &q->buffer},    {sizeof q_off, &q_off},       {sizeof s.q_batch, &s.q_batch},
        {sizeof s.q_head, &s.q_head},    {sizeof s.q_tok, &s.q_tok},    {sizeof(cl_mem), &kt->buffer},
        {sizeof k_off, &k_off},
        {sizeof(cl_mem), &v->buffer},    {sizeof v_off, &v_off},        {sizeof s.kv_batch, &s.kv_batch},
        {sizeof s.kv_head, &s.kv_head},  {sizeof s.kv_row, &s.kv_row},  {sizeof(cl_mem), &o->buffer},
        {sizeof o_off, &o_off},          {sizeof(cl_mem), &lse->buffer}, {sizeof lse_off, &lse_off},
        {sizeof(cl_mem), &lens},         {sizeof lens_off, &lens_off},  {sizeof uniform_len, &uniform_len},
        {sizeof per_batch, &per_batch},  {sizeof num_heads, &num_heads}, {sizeof group, &group},
        {sizeof head_groups, &head_groups}, {sizeof scale, &scale},      {sizeof(cl_mem), &part},
        {sizeof part_acc, &part_acc},    {sizeof part_m, &part_m},      {sizeof part_l, &part_l},
        {sizeof split_tokens, &split_tokens}, {sizeof max_splits, &max_splits}, {sizeof(cl_mem), &prefix},
        {sizeof prefix_off, &prefix_off}, {sizeof total_cost, &total_cost}, {sizeof units, &units},
        {sizeof c0, &c0},                {sizeof batch, &batch},        {sizeof(cl_mem), &mask_buf},
        {sizeof mask_off, &mask_off},    {sizeof mask_bstride, &mask_bstride}, {sizeof mask_tstride, &mask_tstride},
        {sizeof(cl_mem), &pse_buf},      {sizeof pse_off, &pse_off},    {sizeof pse_bstride, &pse_bstride},
        {sizeof pse_hstride, &pse_hstride}, {sizeof pse_tstride, &pse_tstride}, {sizeof softcap, &softcap},
        {sizeof window, &window},        {sizeof kv_end, &kv_end},      {sizeof(cl_mem), &table},
        {sizeof table_off, &table_off},  {sizeof table_cols, &table_cols}, {sizeof block_size, &block_size},
        {sizeof(cl_mem), &aqs_buf},      {sizeof aqs_off, &aqs_off},    {sizeof(cl_mem), &aqo_buf},
        {sizeof aqo_off, &aqo_off},      {sizeof aq_vstride, &aq_vstride}, {sizeof aq_bstride, &aq_bstride},
        {sizeof aq_hstride, &aq_hstride}, {sizeof(cl_mem), &qs2_buf},  {sizeof qs2_off, &qs2_off},
        {sizeof(cl_mem), &qo2_buf},      {sizeof qo2_off, &qo2_off},    {sizeof real_group, &real_group},
        {sizeof(cl_mem), &rope_buf},     {sizeof rope_pos_off, &rope_pos_off}, {sizeof(cl_mem), &rope_buf},
        {sizeof rope_f_off, &rope_f_off}, {sizeof(cl_mem), &rcos_buf},  {sizeof rcos_off, &rcos_off},
        {sizeof(cl_mem), &rsin_buf},     {sizeof rsin_off, &rsin_off},
    };
    const size_t local[3] = {(size_t)plan->work_group_size, 1, 1};
    const size_t global[3] = {(size_t)plan->work_group_size * (size_t)(p->num_kv_heads * plan->head_groups),
                              (size_t)p->batch, (size_t)plan->max_splits};
    if (plan->split_kv == IFA_SPLIT_NONE) {
        IFA__TRY(ifa__enqueue(k, "ifa_all_vector", kargs, sizeof kargs / sizeof kargs[0], global, local, 2, queue, num_wait,
                         wait, event));
        if (first) clRetainEvent(*first = *event);
        return IFA_STATUS_OK;
    }
    const size_t unit_global[1] = {(size_t)plan->work_group_size * (size_t)plan->units};

    cl_event max_done = NULL, split_done = NULL, prefix_done = NULL;
    if (p->has_prefix) {
        /* the prefix pass's arguments: the main pass's, with the prefix tensors (batch 1, its own strides), every
         * batch's rows as B*G virtual heads, a uniform length and one split covering the prefix */
        enum { NARGS = sizeof kargs / sizeof kargs[0] };
        ifa__karg pargs[NARGS];
        memcpy(pargs, kargs, sizeof kargs);
        const ifa_tensor *kp = args->key_shared_prefix, *vp = args->value_shared_prefix;
        const cl_ulong kp_off = ifa__elem_offset(kp), vp_off = ifa__elem_offset(vp), no_stride = 0;
        const cl_ulong d = (cl_ulong)p->head_dim, nkv = (cl_ulong)p->num_kv_heads, sp = (cl_ulong)p->prefix_seq;
        const cl_ulong hstride = p->layout == IFA_LAYOUT_BNSD ? sp * d : d;
        const cl_ulong rstride = p->layout == IFA_LAYOUT_BNSD ? d : nkv * d;
        const cl_int plen = (cl_int)p->prefix_len, not_per_batch = 0, vgroup = (cl_int)p->batch * group;
        const cl_int pgroups = plan->prefix_head_groups, ptokens = plen > 0 ? plen : 1, no_window = 0;
        set_arg(pargs, NARGS, &kt->buffer, &kp->buffer);
        set_arg(pargs, NARGS, &v->buffer, &vp->buffer);
        set_arg(pargs, NARGS, &k_off, &kp_off);
        set_arg(pargs, NARGS, &v_off, &vp_off);
        set_arg(pargs, NARGS, &s.kv_batch, &no_stride);
        set_arg(pargs, NARGS, &s.kv_head, &hstride);
        set_arg(pargs, NARGS, &s.kv_row, &rstride);
        set_arg(pargs, NARGS, &uniform_len, &plen);
        set_arg(pargs, NARGS, &per_batch, &not_per_batch);
        set_arg(pargs, NARGS, &group, &vgroup);
        set_arg(pargs, NARGS, &head_groups, &pgroups);
        set_arg(pargs, NARGS, &split_tokens, &ptokens);
        set_arg(pargs, NARGS, &window, &no_window);
        IFA__TRY(launch_prefix(ctx, plan, pargs, NARGS, queue, num_wait, wait, &prefix_done));
    }
    if (kmax) {
        /* global rowmax: every split's score max first, then the splits against the row's max */
        IFA__TRY(ifa__enqueue(kmax, "ifa_all_vector (max pass)", kargs, sizeof kargs / sizeof kargs[0], global, local, 3,
                         queue, num_wait, wait, &max_done));
        num_wait = 1;
        wait = &max_done;
    }
    ifa_status sst = ifa__enqueue(k, "ifa_all_vector", kargs, sizeof kargs / sizeof kargs[0],
                             balanced ? unit_global : global, local, balanced ? 1 : 3, queue,
                             num_wait, wait, &split_done);
    if (sst == IFA_STATUS_OK && first) clRetainEvent(*first = prefix_done ? prefix_done : max_done ? max_done : split_done);
    if (max_done) clReleaseEvent(max_done);
    if (sst != IFA_STATUS_OK) {
        if (prefix_done) clReleaseEvent(prefix_done);
        return sst;
    }
    char coptions[256];
    snprintf(coptions, sizeof coptions,
             "-cl-std=CL1.2 -D O_T=%d -D HEAD_DIM=%d -D WG=%d -D HAS_LSE=%d -D ROWMAX=%d -D BALANCED=%d -D GT=%d "
             "-D SQ=%d -D CAUSAL=%d %s",
             (int)p->out_dtype, (int)p->head_dim, (int)plan->combine_work_group_size, (int)p->has_lse,
             global_max ? 2 : 1, balanced, (int)plan->heads_per_group, (int)p->seq_q, (int)p->causal, q2_options);
    static const char *const csources[] = {"ifa_common.cl", "ifa_combine.cl"};
    ifa__cached_kernel *ck;
    ifa_status st = ifa__get_kernel(ctx, csources, 2, coptions, "ifa_combine", &ck);
    if (st == IFA_STATUS_OK) st = ifa__check_kernel(ctx, ck, plan->combine_work_group_size);
    if (st == IFA_STATUS_OK) {
        const ifa__karg cargs[] = {
            {sizeof(cl_mem), &part},      {sizeof part_acc, &part_acc}, {sizeof part_m, &part_m},
            {sizeof part_l, &part_l},     {sizeof max_splits, &max_splits}, {sizeof(cl_mem), &o->buffer},
            {sizeof o_off, &o_off},       {sizeof s.q_batch, &s.q_batch}, {sizeof s.q_head, &s.q_head},
            {sizeof s.q_tok, &s.q_tok},
            {sizeof(cl_mem), &lse->buffer}, {sizeof lse_off, &lse_off}, {sizeof num_heads, &num_heads},
            {sizeof(cl_mem), &lens},      {sizeof lens_off, &lens_off}, {sizeof uniform_len, &uniform_len},
            {sizeof per_batch, &per_batch}, {sizeof split_tokens, &split_tokens}, {sizeof(cl_mem), &prefix},
            {sizeof prefix_off, &prefix_off}, {sizeof total_cost, &total_cost}, {sizeof units, &units},
            {sizeof c0, &c0},             {sizeof group, &group},       {sizeof head_groups, &head_groups},
            {sizeof window, &window},     {sizeof(cl_mem), &qs2_buf},   {sizeof qs2_off, &qs2_off},
            {sizeof(cl_mem), &qo2_buf},   {sizeof qo2_off, &qo2_off},
        };
        const size_t clocal[1] = {(size_t)plan->combine_work_group_size};
        const size_t cglobal[1] = {clocal[0] * (size_t)(p->batch * p->num_heads * p->seq_q)};
        const cl_event parts[2] = {split_done, prefix_done};
        st = ifa__enqueue(ck, "ifa_combine", cargs, sizeof cargs / sizeof cargs[0], cglobal, clocal, 1, queue,
                          prefix_done ? 2 : 1, parts, event);
    }
    clReleaseEvent(split_done);
    if (prefix_done) clReleaseEvent(prefix_done);
    if (st != IFA_STATUS_OK && first) {
        clReleaseEvent(*first);
        *first = NULL;
    }
    return st;
}
