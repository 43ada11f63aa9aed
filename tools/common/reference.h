/* The float64 host reference of IncreFlashAttention, shared by tests and tools. It reads the stored
 * inputs (after their rounding to the storage dtype) and indexes them from their own shapes, independently
 * of the library's strides: masks, bias, ALiBi, soft-cap, sliding window, kv padding, paged pools and multi-token
 * queries are each written out here from the op's definition (include/ifa/ifa.h, docs/op.md). */
#ifndef IFA_TOOLS_REFERENCE_H
#define IFA_TOOLS_REFERENCE_H

#include "common/runner.h"

/* out: one double per element of the output (the query's shape with D_v, ifa_case_out_shape), in its
 * element order; lse: B·N·S1 doubles in (b, n, token) order (natural log, the sinks' term included; -inf for a row that sees no key and has no
 * sink); score_bound (optional, B·N·S1): for each row, the max over visible keys of
 * Σ_d |q_d·k_d|·|scale| + |pse| + |ALiBi bias| (+ softcap), and |sink|, the scale of the
 * fp32 rounding error a kernel may make in that row's scores. Returns 0, or -1 on inconsistent shapes or
 * no memory. */
int ifa_reference_ifa(const ifa_case *c, double *out, double *lse, double *score_bound);

/* Rotates row x (D values) in place at position pos, as the ops define RoPE (docs/rope.md), in float64:
 * mode "neox" or "gptj" (anything else leaves x as it is), the dim dims from offset (dim 0: D - offset), angles
 * pos·theta^(-2i/dim) (theta 0: 10000) or, when cos_table has data, cos/sin from row pos of the tables. -1 on
 * a bad dim or offset. */
int ifa_reference_rope(const char *mode, double theta, int64_t dim, int64_t offset, const ifa_host_tensor *cos_table,
                       const ifa_host_tensor *sin_table, int64_t pos, double *x, int64_t D);

#endif
