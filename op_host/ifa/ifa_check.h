/* Internal: argument validation of IncreFlashAttention, reducing valid arguments to an ifa_problem. */
#ifndef IFA_OP_HOST_IFA_IFA_CHECK_H
#define IFA_OP_HOST_IFA_IFA_CHECK_H

#include "core/limits.h"
#include "ifa/ifa.h"


/* Checks every rule on shapes, dtypes, attributes and lengths, and fills *problem. Buffers are not looked
 * at (they may be NULL while planning). Returns OK or the status of the first broken rule, with the last
 * error naming the argument and the rule. */
ifa_status ifa__ifa_check_args(const ifa_incre_flash_attention_args *args, ifa_problem *problem);

/* The length batch b sees once kv_padding_size is applied: raw, or 0 when its rows would start before
 * the key's first row. */
int64_t ifa__effective_length(const ifa_problem *problem, int64_t raw);

/* Batch b's query tokens: S1, or its actual_seq_lengths_q value (args already checked into problem). */
int64_t ifa__query_tokens(const ifa_incre_flash_attention_args *args, const ifa_problem *problem, int64_t b);

/* The KV length the kernels use for batch b: its actual_seq_lengths value (S_kv when absent) after kv
 * padding, and 0 for a batch with no query tokens (it reads nothing). */
int64_t ifa__batch_length(const ifa_incre_flash_attention_args *args, const ifa_problem *problem, int64_t b);

/* How many positions before the end batch b's first query token stops: its tokens - 1 when they are causal. */
int64_t ifa__batch_causal_shift(const ifa_incre_flash_attention_args *args, const ifa_problem *problem, int64_t b);

/* With a rotary query: each batch's first query position into first (B values), checked. */
ifa_status ifa__ifa_rope_positions(const ifa_incre_flash_attention_args *args, const ifa_problem *problem,
                                   int64_t *first);

/* Checks that every tensor of args names a buffer large enough for offset + its bytes. */
ifa_status ifa__ifa_check_buffers(cl_context cl, const ifa_incre_flash_attention_args *args, cl_mem workspace,
                                  size_t workspace_offset, int64_t workspace_bytes);


#endif
