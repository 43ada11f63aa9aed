/* The all-vector template: -D options from the plan, strides from the layout, one kernel launch. */
#include "templates/all_vector.h"

#include <stdio.h>
#include <string.h>

#include "op_host/runtime/cl_status.h"
#include "op_host/runtime/context.h"
#include "op_host/runtime/counters.h"
#include "op_host/runtime/launch.h"
#include "op_host/runtime/tensor_check.h"
#include "templates/op_args.h"
#include "tiling/planner.h"

/* the files every shape's program starts with */
#define IFA__AV_SHARED                                                                                             \
    "ifa_formulas.h", "ifa_common.cl", "ifa_kernel_args.h", "ifa_all_vector_options.cl", "ifa_all_vector_mma.cl",   \
        "ifa_all_vector_gpu.cl", "ifa_all_vector_cpu.cl", "ifa_attention.cl"
static const ifa__av_program chunks = {{IFA__AV_SHARED, "ifa_attention_chunks.cl"}, "ifa_attention_chunks"};
static const ifa__av_program lanes_prog = {{IFA__AV_SHARED, "ifa_attention_lanes.cl"}, "ifa_attention_lanes"};
static const ifa__av_program matrix = {{IFA__AV_SHARED, "ifa_attention_matrix.cl"}, "ifa_attention_matrix"};
static const ifa__av_program matrix_t = {{IFA__AV_SHARED, "ifa_attention_matrix_t.cl"},
                                                 "ifa_attention_matrix_t"};
static const ifa__av_program latent_tile = {{IFA__AV_SHARED, "ifa_attention_latent_tile.cl"},
                                                    "ifa_attention_latent_tile"};
#undef IFA__AV_SHARED

const ifa__av_program *ifa__all_vector_program(int32_t shape) {
    switch (shape) {
    case IFA_SHAPE_VECTOR:
    case IFA_SHAPE_WORK_GROUP:
    case IFA_SHAPE_WIDE_LOADS:
    case IFA_SHAPE_KEY_TILE: return &chunks;
    case IFA_SHAPE_LANES: return &lanes_prog;
    case IFA_SHAPE_MATRIX: return &matrix;
    case IFA_SHAPE_MATRIX_T: return &matrix_t;
    case IFA_SHAPE_LATENT_TILE: return &latent_tile;
    default: return NULL;
    }
}

/* The program a kernel's defines build: that of the shape their VW, MMA and LANES name, as ifa__shape_of names a
 * plan's (the max pass of a matrix plan, MMA 0, and the cascade's prefix pass, neither set, run a chunk shape). */
static const ifa__av_program *program_of(const ifa__define *d, int n) {
    int64_t vw = 1, mma = 0, lanes = 0;
    for (int i = 0; i < n; ++i) {
        if (strcmp(d[i].name, "VW") == 0) vw = d[i].value;
        else if (strcmp(d[i].name, "MMA") == 0) mma = d[i].value;
        else if (strcmp(d[i].name, "LANES") == 0) lanes = d[i].value;
    }
    const int32_t shape = vw > 1     ? IFA_SHAPE_VECTOR
                          : mma == 7 ? IFA_SHAPE_LATENT_TILE
                          : mma >= 3 ? IFA_SHAPE_MATRIX_T
                          : mma >= 1 ? IFA_SHAPE_MATRIX
                          : lanes    ? IFA_SHAPE_LANES
                                     : IFA_SHAPE_WORK_GROUP;
    return ifa__all_vector_program(shape);
}

/* the kernel defines build, from ctx's program cache (built there if it is not) */
static ifa_status get_kernel(ifa_context *ctx, const ifa__define *defines, int nd, ifa__cached_kernel **out) {
    const ifa__av_program *prog = program_of(defines, nd);
    return ifa__get_kernel(ctx, prog->sources, IFA__ALL_VECTOR_SOURCES, defines, nd, prog->kernel, out);
}

/* The cascade's prefix pass, with a (the main pass's arguments with the prefix's substituted) and the prefix
 * kernel variant: every batch's query rows as B*G virtual heads per KV head and one split covering the
 * prefix, writing partial slot 0 of every row. */
static ifa_status prefix_kernel(ifa_context *ctx, const ifa_plan *plan, ifa__cached_kernel **out) {
    const ifa_problem *p = &plan->problem;
    const ifa__define defines[] = {
        {"Q_T", p->q_dtype},          {"KV_T", p->kv_dtype},      {"O_T", p->out_dtype == IFA_DTYPE_INT8 ? 0 : p->out_dtype},
        {"HEAD_DIM", p->head_dim},    {"VDIM", ifa__value_dim(p)}, {"WG", plan->work_group_size},
        {"VW", plan->vector_width},
        {"XB", plan->prefix_pv_block}, {"PV_RB", plan->prefix_pv_rows}, {"CHUNK", plan->chunk_rows},
        {"GT", plan->prefix_heads_per_group}, {"RS_MAX", plan->score_rows}, {"SQ", p->seq_q},
        {"CAUSAL", 0},                {"HAS_LSE", 0},
        {"HAS_MASK", 0},              {"HAS_PSE", 0},             {"SOFTCAP", p->softcap_bits != 0},
        {"HAS_PAD", 0},               {"QLEN", p->q_lengths},     {"PAGED", 0},               {"ANTIQUANT", 0},
        {"SPLIT", 1},                 {"BALANCED", 0},            {"ROWMAX", 1},
        {"MAX_PASS", 0},              {"PREFIX", 1},              {"ROPE", p->rope},
        {"ROPE_DIM", p->rope_dim},    {"ROPE_TAB", p->rope_table}, {"ROPE_OFF", p->rope_offset}, {"PREFETCH", plan->prefetch_rows},
        {"PV_PREFETCH", plan->prefix_pv_prefetch}, {"V8", 0},
    };
    IFA__TRY(get_kernel(ctx, defines, sizeof defines / sizeof defines[0], out));
    return ifa__check_kernel(ctx, *out, plan->work_group_size);
}

static ifa_status launch_prefix(ifa_context *ctx, const ifa_plan *plan, const ifa__op_args *a, cl_command_queue queue,
                                cl_uint num_wait, const cl_event *wait, cl_event *done, int one_group) {
    const ifa_problem *p = &plan->problem;
    ifa__cached_kernel *k;
    IFA__TRY(prefix_kernel(ctx, plan, &k));
    const size_t local[3] = {(size_t)plan->work_group_size, 1, 1};
    const size_t groups = one_group ? 1 : (size_t)(p->num_kv_heads * plan->prefix_head_groups);
    const size_t global[3] = {(size_t)plan->work_group_size * groups, 1, 1};
    const ifa__karg kargs[] = IFA__KARGS_LIST(IFA_ARGS_ALL_VECTOR, *a);
    return ifa__enqueue(k, k->kernel_name, kargs, IFA__NKARGS(kargs), global, local, 3, queue,
                        num_wait, wait, done);
}

/* The warm launch's scratch buffer, in 4-byte words: a zero region every input reads (never written), then the
 * output, the LSE, the partials (accumulators, maxima, sums) and the split counters, and a guard. Sized for one
 * work-group: batch 0 (the cascade's pass: the batches its first group's rows span), its block's query rows at
 * their real strides, a first chunk of K/V rows (or a block of a page) at theirs, per-channel scales and the
 * RoPE frequencies. Elements are at most 4 bytes. */
typedef struct {
    cl_ulong zero, out, lse, acc, m, l, cnt, guard, total;
} warm_regions;

static warm_regions warm_layout(const ifa_plan *plan) {
    const ifa_problem *p = &plan->problem;
    const cl_ulong n = (cl_ulong)p->num_heads, nkv = (cl_ulong)p->num_kv_heads, sq = (cl_ulong)p->seq_q;
    const cl_ulong d = (cl_ulong)p->head_dim, dv = (cl_ulong)ifa__value_dim(p), g = n / nkv;
    const cl_ulong batches = p->has_prefix ? ((cl_ulong)plan->prefix_heads_per_group + g - 1) / g + 1 : 1;
    const cl_ulong rows = batches * n * sq, slots = 2 * ((cl_ulong)plan->prefix_slots + 1);
    const cl_ulong chunk = (cl_ulong)(plan->chunk_rows > 0 ? plan->chunk_rows : 1);
    const cl_ulong block = (cl_ulong)(p->paged ? p->block_size : 0);
    warm_regions r;
    r.zero = 0;
    r.out = rows * (d > dv ? d : dv) + (chunk + block) * nkv * d + 4 * nkv * d + n * dv +
            4 * (cl_ulong)p->rope_dim + 4 * batches + 1024;
    r.lse = r.out + rows * dv + 64;
    r.acc = r.lse + rows + 64;
    r.m = r.acc + slots * rows * dv + 64;
    r.l = r.m + slots * rows + 64;
    r.cnt = r.l + slots * rows + 64;
    r.guard = r.cnt + 64;
    r.total = r.guard + 1024;
    return r;
}

size_t ifa__all_vector_warm_bytes(const ifa_plan *plan) { return (size_t)(4 * warm_layout(plan).total); }

size_t ifa__all_vector_warm_unwritten(const ifa_plan *plan, size_t *zero_words, size_t *guard_word) {
    const warm_regions r = warm_layout(plan);
    *zero_words = (size_t)r.out, *guard_word = (size_t)r.guard;
    return (size_t)(r.total - r.guard);
}

/* Points every buffer of a at scratch (laid out as r): inputs at the zero region (offset 0, every length 0 and
 * read from there), outputs at their regions, in the elements of each tensor's dtype. */
static void warm_args(const ifa_plan *plan, const warm_regions *r, cl_mem scratch, ifa__op_args *a) {
    const ifa_problem *p = &plan->problem;
    a->q = a->k = a->v = a->o = a->lse = a->lens = a->mask = a->pse = a->table = scratch;
    a->aqs = a->aqo = a->vaqs = a->vaqo = a->qs2 = a->qo2 = scratch;
    a->rope_pos = a->rope_f = a->rope_cos = a->rope_sin = a->sinks = a->alibi = scratch;
    a->q_off = a->k_off = a->v_off = a->lens_off = a->mask_off = a->pse_off = a->table_off = 0;
    a->aqs_off = a->aqo_off = a->vaqs_off = a->vaqo_off = a->qs2_off = a->qo2_off = 0;
    a->rope_pos_off = a->rope_f_off = a->rope_c_off = a->rope_s_off = a->sinks_off = a->alibi_off = 0;
    a->o_off = r->out * 4 / ifa_dtype_size((ifa_dtype)p->out_dtype);
    a->lse_off = r->lse;
    a->uniform_len = 0, a->per_batch = 1; /* batch 0's length (and query tokens) read as 0 */
}

/* The launch; warm: one work-group of each kernel over scratch (warm_layout) with every length 0, so that a
 * driver that generates code at a kernel's first launch (PoCL) has done so. */
/* The fused kernel's build options for plan (at most AV_DEFINES entries into d; returns the count): aligned says
 * whether every K/V row starts a multiple of 16 bytes (8 elements; 16 of int8) after an aligned base, which the
 * key tile and the lane and matrix shapes' 16-byte loads need; fused whether the last split combines (the
 * fused combine's counters, an in-order queue's). MAX_PASS last: the max pass differs there (and in MMA). */
enum { AV_DEFINES = 64 };
static int av_defines(const ifa_plan *plan, int aligned, int fused, ifa__define *d) {
    const ifa_problem *p = &plan->problem;
    const int key_tile = plan->key_tile && aligned;
    const int balanced = plan->split_kv == IFA_SPLIT_BALANCED, global_max = plan->split_kv == IFA_SPLIT_GLOBAL_ROWMAX;
    const int equal_splits = plan->split_kv == IFA_SPLIT_PARTIAL_ROWMAX || global_max;
    const ifa__define all[] = {
        {"Q_T", p->q_dtype},
        {"KV_T", p->kv_dtype},
        {"O_T", p->out_dtype},
        {"HEAD_DIM", p->head_dim},
        {"VDIM", ifa__value_dim(p)},
        {"WG", plan->work_group_size},
        {"VW", plan->vector_width},
        {"XB", plan->pv_block},
        {"PV_RB", plan->pv_rows},
        {"RS_MAX", plan->score_rows},
        {"CHUNK", plan->chunk_rows},
        {"GT", plan->heads_per_group},
        {"SQ", p->seq_q},
        {"HAS_LSE", p->has_lse},
        IFA__FEATURE_DEFINES(p),
        IFA__OUT_DEFINES(p, plan),
        {"MH", plan->kv_heads_per_group},
        {"RB_MH", ifa__tile_rows(plan)},
        {"GSQ", p->num_heads / p->num_kv_heads * p->seq_q},
        {"PREFETCH", plan->prefetch_rows},
        {"PV_PREFETCH", plan->pv_prefetch},
        {"SPREAD_PF", plan->spread_prefetch},
        {"BATCH_FAST", plan->batch_fast},
        /* a tile plan whose K/V rows are not 16-byte aligned and whose rows x D_v / 8 exceed the group runs the
         * scalar loads (the 8-wide ones without the tile need them within it) */
        {"V8", plan->vector_loads != 0 &&
                   (key_tile || (int64_t)plan->heads_per_group * p->seq_q * (ifa__value_dim(p) / 8) <= plan->work_group_size)},
        {"KTILE", key_tile},
        {"LANES", aligned ? plan->lanes : 0},
        {"LANE_PF", aligned && plan->lanes ? plan->lane_prefetch : 0},
        {"LANE_SC", aligned && plan->lanes ? plan->lane_scores : 0},
        {"LANE_QL", aligned && (plan->lanes || plan->mma) ? plan->lane_q_local : 0},
        /* the latent tile loads rows at any element where they are not 16 bytes apart (MMA_AL 0) */
        {"MMA", aligned || plan->mma == 7 ? plan->mma : 0},
        {"F8CVT", aligned && plan->mma ? plan->mma_cvt : 0},
        {"MMA_AL", plan->mma == 7 && aligned},
        {"SPLIT", equal_splits},
        {"BALANCED", balanced},
        {"ROWMAX", global_max ? 2 : 1},
        {"FUSED", fused},
        {"MAX_PASS", 0}, /* last: the max pass differs only here */
    };
    const int n = (int)(sizeof all / sizeof all[0]);
    _Static_assert(sizeof all / sizeof all[0] <= AV_DEFINES, "AV_DEFINES too small");
    memcpy(d, all, sizeof all);
    return n;
}

/* The max pass of a global-rowmax plan: defines (n of them, MAX_PASS last) turned into its variant, which scores
 * in the work-group shape (the matrix shape has no max-only variant). */
static void av_max_pass(ifa__define *d, int n) {
    d[n - 1].value = 1;
    for (int i = 0; i < n; ++i)
        if (strcmp(d[i].name, "MMA") == 0) d[i].value = 0;
}

int ifa__all_vector_options(const ifa_plan *plan, int32_t vendor, int max_pass, char *out, size_t size,
                            const ifa__av_program **program) {
    if (plan->template_id != IFA_TEMPLATE_ALL_VECTOR || (max_pass && plan->split_kv != IFA_SPLIT_GLOBAL_ROWMAX))
        return 0;
    ifa__define d[AV_DEFINES];
    const int n = av_defines(plan, 1, plan->fused_combine != 0, d);
    if (max_pass) av_max_pass(d, n);
    if (program) *program = program_of(d, n);
    return ifa__format_build_options(vendor, 0, 0, d, n, out, size);
}

static ifa_status launch(ifa_context *ctx, const ifa_plan *plan, const ifa_incre_flash_attention_args *args,
                         cl_mem workspace, size_t workspace_offset, cl_command_queue queue, cl_uint num_wait,
                         const cl_event *wait, cl_event *first, cl_event *event, int warm);

ifa_status ifa__all_vector_launch(ifa_context *ctx, const ifa_plan *plan, const ifa_incre_flash_attention_args *args,
                                  cl_mem workspace, size_t workspace_offset, cl_command_queue queue, cl_uint num_wait,
                                  const cl_event *wait, cl_event *first, cl_event *event) {
    return launch(ctx, plan, args, workspace, workspace_offset, queue, num_wait, wait, first, event, 0);
}

ifa_status ifa__all_vector_warm(ifa_context *ctx, const ifa_plan *plan, const ifa_incre_flash_attention_args *args,
                                cl_mem scratch, cl_command_queue queue, cl_event *event) {
    return launch(ctx, plan, args, scratch, 0, queue, 0, NULL, NULL, event, 1);
}

static ifa_status launch(ifa_context *ctx, const ifa_plan *plan, const ifa_incre_flash_attention_args *args,
                         cl_mem workspace, size_t workspace_offset, cl_command_queue queue, cl_uint num_wait,
                         const cl_event *wait, cl_event *first, cl_event *event, int warm) {
    const ifa_problem *p = &plan->problem;
    const warm_regions wr = warm ? warm_layout(plan) : (warm_regions){0}; /* a run's launch needs none */
    const int balanced = plan->split_kv == IFA_SPLIT_BALANCED, global_max = plan->split_kv == IFA_SPLIT_GLOBAL_ROWMAX;
    ifa__op_args a;
    ifa__op_args_fill(plan, args, workspace, workspace_offset, &a);
    /* the key tile's, the lane and matrix shapes' 16-byte loads need every K/V row to start a multiple of 16 bytes
     * (8 elements, 16 of int8 and float8, 32 of int4) after an aligned base (the lane shape's one-byte rows load 8
     * bytes per lane and its fp32 rows 32, 8 elements: the same rule keeps one; its int4 rows 4 bytes, 8 elements) */
    const cl_ulong kt = p->kv_dtype == IFA_DTYPE_INT4 ? (plan->lanes ? 8 : 32)
                        : p->kv_dtype == IFA_DTYPE_INT8 || p->kv_dtype == IFA_DTYPE_FLOAT8_E4M3 ||
                                p->kv_dtype == IFA_DTYPE_FLOAT8_E5M2
                            ? 16
                            : 8;
    const int aligned = a.k_off % kt == 0 && a.v_off % kt == 0 && a.kv_bstride % kt == 0 && a.kv_hstride % kt == 0 &&
                        a.kv_rstride % kt == 0;
    if (warm) warm_args(plan, &wr, workspace, &a); /* after the alignment rules: the variants are the run's */
    /* the fused combine's counters: the queue's own, or none on an out-of-order queue (the combine kernel then);
     * building only and warm launches take an in-order queue's (warm: the scratch's) */
    cl_mem counters = NULL;
    if (plan->fused_combine && queue && !warm)
        IFA__TRY(ifa__combine_counters(ctx, queue, plan->combine_counters, &counters));
    const int fused = queue && !warm ? counters != NULL : plan->fused_combine != 0;
    const cl_mem cnt = warm ? workspace : fused ? counters : a.o;
    const cl_ulong cnt_off = warm ? wr.cnt : 0;
    ifa__define defines[AV_DEFINES];
    const int nd = av_defines(plan, aligned, fused, defines);
    ifa__cached_kernel *k, *kmax = NULL;
    IFA__TRY(get_kernel(ctx, defines, nd, &k));
    IFA__TRY(ifa__check_kernel(ctx, k, plan->work_group_size));
    if (global_max) {
        av_max_pass(defines, nd);
        IFA__TRY(get_kernel(ctx, defines, nd, &kmax));
        IFA__TRY(ifa__check_kernel(ctx, kmax, plan->work_group_size));
    }
    /* the prefix pass's and the combine's kernels too, built before the first launch: built between two launches,
     * a build left the device idle behind the first for its length (NVIDIA, H100, 2026-11-27: a decode step's
     * device span took the combine program's build, ~0.2 s) */
    ifa__cached_kernel *other;
    if (p->has_prefix) IFA__TRY(prefix_kernel(ctx, plan, &other));
    if (plan->split_kv != IFA_SPLIT_NONE && !fused)
        IFA__TRY(ifa__combine_kernel(ctx, plan, global_max ? 2 : 1, balanced, 0, &other));
    if (!queue) return IFA_STATUS_OK; /* building only */

    /* partials: a row's prefix slot (cascade), then its splits; balanced units index slots per unit */
    const ifa__combine_parts c = {.balanced = balanced, .rowmax = global_max ? 2 : 1, .one_group = warm};
    const size_t ws_word = workspace_offset / 4;
    a.part = plan->split_kv ? workspace : a.o;
    a.part_acc = plan->split_kv ? ws_word + (cl_ulong)plan->ws_part_acc_offset / 4 : 0;
    a.part_m = plan->split_kv ? ws_word + (cl_ulong)plan->ws_part_m_offset / 4 : 0;
    a.part_l = plan->split_kv ? ws_word + (cl_ulong)plan->ws_part_l_offset / 4 : 0;
    a.split_tokens = plan->split_tokens, a.max_splits = plan->max_splits + plan->prefix_slots;
    a.prefix = balanced ? workspace : a.part; /* int64 batch offsets of the cost line */
    a.prefix_off = balanced ? (workspace_offset + (cl_ulong)plan->ws_prefix_offset) / 8 : 0;
    a.total_cost = plan->total_cost, a.units = plan->units, a.c0 = plan->block_cost_rows;
    a.head_groups = plan->head_groups;
    a.group = a.real_group * plan->kv_heads_per_group; /* a block's query heads (the plan check keeps it >= 1) */
    if (warm) {
        a.part = a.prefix = workspace, a.part_acc = wr.acc, a.part_m = wr.m, a.part_l = wr.l, a.prefix_off = 0;
        a.split_tokens = plan->chunk_rows, a.max_splits = 1 + plan->prefix_slots;
        a.total_cost = 0, a.units = 1;
    }
    /* the fused combine's counters */
    a.cnt = cnt, a.cnt_off = cnt_off;
    const ifa__karg kargs[] = IFA__KARGS_LIST(IFA_ARGS_ALL_VECTOR, a);
    const size_t local[3] = {(size_t)plan->work_group_size, 1, 1};
    const size_t blocks = (size_t)ifa__plan_blocks(plan), batch = (size_t)p->batch;
    const size_t global[3] = {(size_t)plan->work_group_size * (warm ? 1 : plan->batch_fast ? batch : blocks),
                              warm ? 1 : plan->batch_fast ? blocks : batch, warm ? 1 : (size_t)plan->max_splits};
    const size_t unit_global[1] = {(size_t)plan->work_group_size * (warm ? 1 : (size_t)plan->units)};
    if (plan->split_kv == IFA_SPLIT_NONE || fused) {
        IFA__TRY(ifa__enqueue(k, k->kernel_name, kargs, IFA__NKARGS(kargs), balanced ? unit_global : global,
                              local, balanced ? 1 : fused ? 3 : 2, queue, num_wait, wait, event));
        if (first) clRetainEvent(*first = *event);
        return IFA_STATUS_OK;
    }

    cl_event max_done = NULL, split_done = NULL, prefix_done = NULL;
    if (p->has_prefix) {
        /* the prefix pass's arguments: the main pass's, with the prefix tensors (batch 1, its own strides), every
         * batch's rows as B*G virtual heads, a uniform length and one split covering the prefix */
        ifa__op_args pa = a;
        const ifa_tensor *kp = args->key_shared_prefix, *vp = args->value_shared_prefix;
        const cl_ulong d = (cl_ulong)p->head_dim, nkv = (cl_ulong)p->num_kv_heads, sp = (cl_ulong)p->prefix_seq;
        const cl_int plen = warm ? 0 : (cl_int)p->prefix_len;
        pa.k = warm ? workspace : kp->buffer, pa.v = warm ? workspace : vp->buffer;
        pa.k_off = warm ? 0 : ifa__elem_offset(kp), pa.v_off = warm ? 0 : ifa__elem_offset(vp);
        pa.kv_bstride = 0;
        pa.kv_hstride = p->layout == IFA_LAYOUT_BNSD ? sp * d : d;
        pa.kv_rstride = p->layout == IFA_LAYOUT_BNSD ? d : nkv * d;
        pa.uniform_len = plen, pa.per_batch = 0, pa.window = 0;
        pa.group = (cl_int)p->batch * a.real_group, pa.head_groups = plan->prefix_head_groups;
        pa.split_tokens = plen > 0 ? plen : 1;
        IFA__TRY(launch_prefix(ctx, plan, &pa, queue, num_wait, wait, &prefix_done, warm));
    }
    if (kmax) {
        /* global rowmax: every split's score max first, then the splits against the row's max */
        IFA__TRY(ifa__enqueue(kmax, "the max pass", kargs, IFA__NKARGS(kargs), global, local, 3,
                         queue, num_wait, wait, &max_done));
        num_wait = 1;
        wait = &max_done;
    }
    ifa_status sst = ifa__enqueue(k, k->kernel_name, kargs, IFA__NKARGS(kargs),
                             balanced ? unit_global : global, local, balanced ? 1 : 3, queue,
                             num_wait, wait, &split_done);
    if (sst == IFA_STATUS_OK && first) clRetainEvent(*first = prefix_done ? prefix_done : max_done ? max_done : split_done);
    if (max_done) clReleaseEvent(max_done);
    if (sst != IFA_STATUS_OK) {
        if (prefix_done) clReleaseEvent(prefix_done);
        return sst;
    }
    const cl_event parts[2] = {split_done, prefix_done};
    ifa_status st = ifa__combine_launch(ctx, plan, &a, &c, queue, prefix_done ? 2 : 1, parts, event);
    clReleaseEvent(split_done);
    if (prefix_done) clReleaseEvent(prefix_done);
    if (st != IFA_STATUS_OK && first) {
        clReleaseEvent(*first);
        *first = NULL;
    }
    return st;
}
