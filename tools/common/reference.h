/* The float64 host reference of IncreFlashAttention, shared by tests and tools. It reads the stored
 * inputs (after their rounding to the storage dtype) and indexes them from their own shapes, independently
 * of the library's strides. */
#ifndef IFA_TOOLS_REFERENCE_H
#define IFA_TOOLS_REFERENCE_H

#include "common/host_tensor.h"

/* out: B·N·D doubles in (b, n, d) order; lse: B·N doubles (natural log, -inf for an empty row);
 * score_bound (optional, B·N): for each row, max over visible keys of Σ_d |q_d·k_d|·|scale|, the scale of
 * the fp32 rounding error a kernel may make in that row's scores. lens: NULL (full S_kv), 1 or B values.
 * layout: "BSH", "BSND" or "BNSD". Returns 0, or -1 on inconsistent shapes. */
int ifa_reference_ifa(const ifa_host_tensor *q, const ifa_host_tensor *k, const ifa_host_tensor *v, const char *layout,
                      int64_t num_heads, int64_t num_kv_heads, double scale, const int64_t *lens, int64_t nlens,
                      double *out, double *lse, double *score_bound);

#endif
