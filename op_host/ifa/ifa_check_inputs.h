/* Internal: the checks of IncreFlashAttention's optional inputs and modes, which ifa__ifa_check_args
 * (op_host/ifa/ifa_check.c) runs after the shapes and dtypes: each returns OK or the status of the broken rule with
 * the last error naming the argument, and records what it found in the problem. */
#ifndef IFA_OP_HOST_IFA_IFA_CHECK_INPUTS_H
#define IFA_OP_HOST_IFA_IFA_CHECK_INPUTS_H

#include "core/limits.h"
#include "ifa/ifa.h"

/* The antiquant tensors' argument names, in the order of args' fields: antiquant_scale, antiquant_offset, then the
 * key's and the value's separate scales and offsets. */
extern const char *const ifa__aq_names[6];

/* Whether d is float32, float16 or bfloat16. */
int ifa__is_float_dtype(ifa_dtype d);

/* Whether a and b have the same rank and dimensions. */
int ifa__same_shape(const ifa_tensor *a, const ifa_tensor *b);

/* atten_mask against the problem's batch, query tokens and the longest visible length max_len (mask_kind, mask_len). */
ifa_status ifa__ifa_check_mask(const ifa_tensor *mask, ifa_problem *p, int64_t max_len);

/* sinks: one float32 logit per query head (has_sinks). */
ifa_status ifa__ifa_check_sinks(const ifa_tensor *sinks, ifa_problem *p);

/* alibi_slopes: (N) or (B, N) float32 (alibi). */
ifa_status ifa__ifa_check_alibi(const ifa_tensor *slopes, ifa_problem *p);

/* pse_shift: (1 or B, N, S1, >= max_len) in the query's dtype (pse_kind, pse_len). */
ifa_status ifa__ifa_check_pse(const ifa_tensor *pse, ifa_problem *p, int64_t max_len);

/* The shared prefix: both tensors or neither, its length, and what it cannot be combined with (has_prefix). */
ifa_status ifa__ifa_check_prefix(const ifa_incre_flash_attention_args *args, ifa_problem *p);

/* int8 output: quant_scale2 and quant_offset2 (quant_out). */
ifa_status ifa__ifa_check_quant_out(const ifa_incre_flash_attention_args *args, ifa_problem *p);

/* Antiquant: the scale form of integer and scaled float8 K/V and its tensors (antiquant, v_antiquant, aq_*). */
ifa_status ifa__ifa_check_antiquant(const ifa_incre_flash_attention_args *args, ifa_problem *p, int64_t max_len);

/* template_mode: "auto", "all_vector" or "cv", and what the cv template takes. */
ifa_status ifa__ifa_check_template(const ifa_incre_flash_attention_args *args, ifa_problem *p);

/* The rotary query: rope_mode, its tables or frequencies, offset and positions (rope, rope_*). */
ifa_status ifa__ifa_check_rope(const ifa_incre_flash_attention_args *args, ifa_problem *p);

/* Paged K/V: the pool's shape in layout, block_size, block_table's form (paged, block_size, table_cols,
 * pool_blocks, seq_kv). */
ifa_status ifa__ifa_check_paged(const ifa_incre_flash_attention_args *args, ifa_problem *p, ifa_layout layout);

#endif
