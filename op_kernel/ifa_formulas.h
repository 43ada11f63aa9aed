/* The formulas the host's planner and the kernels must agree on, written once: tiling/planner.h includes this file
 * and every kernel program starts with it (before ifa_common.cl). Each is an expression macro over its arguments;
 * IFA_CLAMP is OpenCL C's clamp in the kernels and a plain one on the host. No include of its own: it is C and
 * OpenCL C alike. */
#ifndef IFA_OP_KERNEL_FORMULAS_H
#define IFA_OP_KERNEL_FORMULAS_H

#if defined(__OPENCL_C_VERSION__) || defined(__OPENCL_VERSION__)
#define IFA_CLAMP(x, lo, hi) clamp(x, lo, hi)
#else
#define IFA_CLAMP(x, lo, hi) ((x) < (lo) ? (lo) : (x) > (hi) ? (hi) : (x))
#endif

/* The most query rows a register tile of the vector shape holds (its RB: up to this many of the work-group's rows;
 * ifa__tile_rows), which also bounds the plan's P.V blocks. */
#define IFA_MAX_TILE_ROWS 8

/* Balanced units: where unit u's stretch of the cost line [0, total) starts, floor(u * total / units) without
 * overflowing 64 bits. */
#define IFA_UNIT_START(total, units, u) ((total) / (units) * (u) + (total) % (units) * (u) / (units))

/* The first logical KV position a (batch, KV head) block reads for a batch of length len: its earliest query row
 * ends at len - causal_shift and sees the last `window` positions before that (window 0: all). The block reads
 * [lo, len); the plan's costs and the kernels' ranges agree on it. */
#define IFA_KV_LO(len, window, causal_shift) ((window) > 0 ? IFA_CLAMP((len) - (causal_shift) - (window), 0, (len)) : 0)

#endif
