/* The host planner: from a validated problem and device facts to a plan. Pure C, no OpenCL. */
#ifndef IFA_TILING_PLANNER_H
#define IFA_TILING_PLANNER_H

#include "ifa/plan.h"
#include "ifa/status.h"
#include "op_kernel/ifa_formulas.h"
#include "tiling/device_facts.h"
#include "tiling/kernel_shape.h"
#include "tiling/tuning_table.h"

/* Alignment of every workspace region, in bytes. */
#define IFA_WORKSPACE_ALIGN 256

/* Balanced units: where unit u's stretch of the cost line [0, total) starts, floor(u * total / units) without
 * overflowing 64 bits (op_kernel/ifa_formulas.h: the kernels' ifa_unit_start is the same formula). */
static inline int64_t ifa__unit_start(int64_t total, int64_t units, int64_t u) {
    return IFA_UNIT_START(total, units, u);
}

/* The first logical KV position a (batch, KV head) block reads, for a batch of effective length len: its earliest
 * query row ends at len - causal_shift (causal_shift = S1 - 1 for causal multi-token queries, else 0) and sees the
 * last `window` positions before that (window 0: all). The block reads [lo, len) (op_kernel/ifa_formulas.h: the
 * kernels' ifa_kv_lo is the same formula). */
static inline int64_t ifa__kv_lo(int64_t len, int64_t window, int64_t causal_shift) {
    return IFA_KV_LO(len, window, causal_shift);
}

/* KV rows a block of effective length len reads. */
static inline int64_t ifa__kv_span(int64_t len, int64_t window, int64_t causal_shift) {
    return len - ifa__kv_lo(len, window, causal_shift);
}

/* The (batch-independent) blocks of query heads a plan's work-groups hold per batch: KV heads / KV heads per
 * work-group, times the head groups. */
static inline int64_t ifa__plan_blocks(const ifa_plan *plan) {
    const int64_t mh = plan->kv_heads_per_group > 1 ? plan->kv_heads_per_group : 1;
    return plan->problem.num_kv_heads / mh * plan->head_groups;
}

/* cv template: the KV rows one (batch, KV head, split) entry may read, its split's length (or without
 * splits the longest block's, at least 1). plan_cv sizes its chunks by it, the plan check and templates/cv.c
 * (the combine's split length) read it back. */
static inline int64_t ifa__cv_entry_rows(const ifa_plan *plan) {
    return plan->split_kv ? plan->split_tokens : plan->problem.max_length > 0 ? plan->problem.max_length : 1;
}

/* Query rows per register tile of the vector-shape kernel (ifa_all_vector_cpu.cl's RB: this value as RB_MH with
 * several KV heads per work-group, else the kernel's own min(rows, IFA_MAX_TILE_ROWS) of op_kernel/ifa_formulas.h):
 * up to IFA_MAX_TILE_ROWS, and with several KV heads per work-group a divisor of one head's G x S1 rows, so that a
 * tile reads one head's K/V slice. */
static inline int64_t ifa__tile_rows(const ifa_plan *plan) {
    const int64_t rows = (int64_t)plan->heads_per_group * plan->problem.seq_q;
    if (plan->kv_heads_per_group <= 1) return rows < IFA_MAX_TILE_ROWS ? rows : IFA_MAX_TILE_ROWS;
    const int64_t head_rows = plan->problem.num_heads / plan->problem.num_kv_heads * plan->problem.seq_q;
    int64_t rb = IFA_MAX_TILE_ROWS;
    while (head_rows % rb != 0) rb /= 2;
    return rb;
}

/* The value columns a problem reads per row and its output's head dimension: value_dim, or head_dim where
 * value_dim is 0 (a problem built by hand, as the planner's tests do). */
static inline int64_t ifa__value_dim(const ifa_problem *p) { return p->value_dim > 0 ? p->value_dim : p->head_dim; }

/* The fewest KV rows a split may get for a work-group of rows query rows: the row's split_min_tokens, or fewer where
 * split_min_work is reached sooner (rows x (D + D_v) multiply-adds a key row: a split's fixed costs, a thread woken
 * and the partials merged, are paid back by its work, not by its rows). At least 1. */
static inline int64_t ifa__split_floor(const ifa_problem *p, const ifa_tuning *t, int64_t rows) {
    const int64_t min_tokens = t->split_min_tokens > 0 ? t->split_min_tokens : 1;
    if (t->split_min_work <= 0) return min_tokens;
    const int64_t per_row = (rows > 0 ? rows : 1) * (p->head_dim + ifa__value_dim(p)); /* D >= 1: positive */
    const int64_t by_work = (((int64_t)t->split_min_work << 10) + per_row - 1) / per_row; /* >= 1 */
    return by_work < min_tokens ? by_work : min_tokens;
}

/* Local memory (bytes) the all-vector kernel needs for heads_per_group heads of seq_q query tokens, head
 * dim head_dim (query and keys), value_dim (values and accumulators) and chunk rows. */
int64_t ifa__all_vector_local_bytes(int64_t heads_per_group, int64_t seq_q, int64_t head_dim, int64_t value_dim,
                                    int64_t chunk_rows);
/* Plans problem p (already validated) for device dev. DEVICE_LIMIT if the device cannot hold even one
 * query head's working set in local memory. */
ifa_status ifa__plan_make(const ifa_problem *p, const ifa_device_facts *dev, ifa_plan *plan);

/* The kernel-shape candidates the planner weighs for an all_vector plan it made on dev under the tuning row as it
 * reads now (IFA_TUNING applied), in order, each with its reason: what ifa-tiling and IFA_VERBOSE print. A cv plan
 * gets every candidate refused. */
void ifa__plan_shape_candidates(const ifa_plan *plan, const ifa_device_facts *dev,
                                ifa_shape_candidate out[IFA_SHAPE_CANDIDATES]);

/* Checks a plan handed back by a caller: magic, version, a legal key that matches the plan's fields, and
 * sizes that are in range. INVALID_PLAN with the broken rule otherwise. */
ifa_status ifa__plan_check(const ifa_plan *plan);

#endif
