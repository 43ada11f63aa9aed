/* Internal: the kernel arguments both templates derive from a plan and the op's arguments (buffers, element
 * offsets and strides of every tensor), computed once by one function, and the split combine launch they
 * share. */
#ifndef IFA_TEMPLATES_OP_ARGS_H
#define IFA_TEMPLATES_OP_ARGS_H

#include "ifa/ifa.h"
#include "op_host/runtime/context.h"
#include "templates/kernel_args.h"

/* The fused kernel's arguments (op_kernel/ifa_kernel_args.h's IFA_ARGS_ALL_VECTOR), which hold every tensor's
 * buffer, element offset and strides; the other kernels take theirs from it by name. ifa__op_args_fill sets the
 * tensors' and the problem's; a launch sets the partials', the counters' and the work-group's own (group,
 * head_groups). Absent optional inputs name the query's buffer (the kernels are built without reading them). */
typedef IFA__KARGS_STRUCT(IFA_ARGS_ALL_VECTOR) ifa__op_args;

/* The build options of the features the kernels of both templates read alike (causal rows, mask, pse,
 * ALiBi, soft-cap, KV padding, per-batch query tokens, paged KV, antiquant, rotary query); entries of an
 * ifa__define array. */
#define IFA__FEATURE_DEFINES(p)                                                                                     \
    {"CAUSAL", (p)->causal}, {"HAS_MASK", (p)->mask_kind != IFA_MASK_NONE},                                        \
        {"HAS_PSE", (p)->pse_kind != IFA_PSE_NONE}, {"HAS_ALIBI", (p)->alibi != IFA_ALIBI_NONE},                    \
        {"SOFTCAP", (p)->softcap_bits != 0},                                                                       \
        {"HAS_PAD", (p)->has_kv_padding}, {"QLEN", (p)->q_lengths}, {"PAGED", (p)->paged}, {"ANTIQUANT", (p)->antiquant},                    \
        {"AQ_T", (p)->antiquant ? (p)->aq_dtype : 0}, {"AQ_OFF", (p)->aq_offset}, {"VAQ", (p)->v_antiquant},       \
        {"VAQ_T", (p)->v_antiquant ? (p)->v_aq_dtype : 0}, {"VAQ_OFF", (p)->v_aq_offset}, {"ROPE", (p)->rope},    \
        {"ROPE_DIM", (p)->rope_dim}, {"ROPE_TAB", (p)->rope_table}, {"ROPE_OFF", (p)->rope_offset}

/* The build options the fused and the combine kernels share: int8 output (quant_scale2 / quant_offset2),
 * the cascade's prefix slot and the sinks, which the final normalisation reads; entries of an ifa__define array. */
#define IFA__OUT_DEFINES(p, plan)                                                                                   \
    {"QUANT_OUT", (p)->quant_out}, {"Q2_T", (p)->quant_out ? (p)->q2_dtype : 0}, {"Q2_OFF", (p)->q2_offset},       \
        {"PREFIX_SLOTS", (plan)->prefix_slots}, {"SINK", (p)->has_sinks}

/* Fills a from plan and args (already checked against each other); the plan's workspace regions start at
 * workspace_offset of workspace. */
void ifa__op_args_fill(const ifa_plan *plan, const ifa_incre_flash_attention_args *args, cl_mem workspace,
                       size_t workspace_offset, ifa__op_args *a);

/* How the combine reads a launch's partials (ifa_combine.cl), beside where they are: a's part, part_acc, part_m,
 * part_l, max_splits (partial slots per row, prefix slot included), split_tokens, prefix and prefix_off (balanced
 * units' int64 batch cost offsets), total_cost, units, c0, group (query heads per block) and head_groups, which the
 * launch sets for its own kernels too. */
typedef struct ifa__combine_parts {
    int balanced, rowmax, cv; /* cv: partials indexed by (batch, KV head, split) entry and row */
    int one_group;            /* a warm launch: one work-group (the first row) */
} ifa__combine_parts;

/* Builds (or finds in ctx's cache) the combine kernel of plan for partials of that rowmax mode (1 partial, 2
 * global), balanced units or not and the cv template's entries or not. */
ifa_status ifa__combine_kernel(ifa_context *ctx, const ifa_plan *plan, int rowmax, int balanced, int cv,
                               ifa__cached_kernel **out);

/* Enqueues ifa_combine over every (batch, query head, query token) row after the wait list, reading the partials
 * where a says they are. */
ifa_status ifa__combine_launch(ifa_context *ctx, const ifa_plan *plan, const ifa__op_args *a,
                               const ifa__combine_parts *parts, cl_command_queue queue, cl_uint num_wait,
                               const cl_event *wait, cl_event *event);

#endif
