/* The kernels' argument lists, declared once for the host (C) and the kernels (OpenCL C, the first source of
 * each program after ifa_common.cl).
 *
 * Each table IFA_ARGS_<KERNEL>(B, V, X) lists a kernel's arguments in order: B(X, T, name) is a buffer the kernel
 * sees as `__global T *name`, V(X, T, name) a value of OpenCL C type T (ulong, long, int or float). X is handed
 * through to B and V untouched (the host's argument struct). The kernel's parameter list is IFA_KPARAMS(table);
 * the host builds its struct with IFA__KARGS_STRUCT(table) and the clSetKernelArg list with IFA__KARGS_LIST
 * (templates/kernel_args.h). Adding an argument is one entry here: both sides follow by name, and no position is
 * written anywhere else.
 *
 * Offsets and strides are in elements of each tensor's storage dtype; an argument a build does not read (an
 * absent optional tensor) still travels, pointing at any valid buffer. */
#ifndef IFA_OP_KERNEL_KERNEL_ARGS_H
#define IFA_OP_KERNEL_KERNEL_ARGS_H

/* The fused kernel (ifa_attention_<shape>.cl): the main pass, the cascade's prefix pass and the global rowmax's max pass. */
#define IFA_ARGS_ALL_VECTOR(B, V, X)                                                                                 \
    /* the query, (B, N, S1, D) at any strides */                                                                  \
    B(X, const q_store, q) V(X, ulong, q_off) V(X, ulong, q_bstride) V(X, ulong, q_hstride) V(X, ulong, q_tstride)   \
    /* the cache (paged: kv_bstride is the pool's block stride) */                                                 \
    B(X, const kv_store, k) V(X, ulong, k_off) B(X, const kv_store, v) V(X, ulong, v_off) V(X, ulong, kv_bstride)    \
    V(X, ulong, kv_hstride) V(X, ulong, kv_rstride)                                                                \
    /* the output and the LSE */                                                                                   \
    B(X, o_store, o) V(X, ulong, o_off) V(X, ulong, o_bstride) V(X, ulong, o_hstride) V(X, ulong, o_tstride)         \
    B(X, float, lse) V(X, ulong, lse_off)                                                                          \
    /* lengths: per batch from lens, else uniform_len */                                                           \
    B(X, const int, lens) V(X, ulong, lens_off) V(X, int, uniform_len) V(X, int, per_batch)                         \
    V(X, int, num_heads) V(X, int, group) V(X, int, head_groups) V(X, float, scale)                                  \
    /* the split partials and the balanced units' cost line */                                                     \
    B(X, float, part) V(X, ulong, part_acc) V(X, ulong, part_m) V(X, ulong, part_l) V(X, int, split_tokens)          \
    V(X, int, max_splits) B(X, const long, prefix) V(X, ulong, prefix_off) V(X, long, total_cost) V(X, int, units)   \
    V(X, int, c0) V(X, int, batch)                                                                                 \
    /* the score hooks: mask, position bias, soft-cap, window, KV padding */                                       \
    B(X, const uchar, mask) V(X, ulong, mask_off) V(X, ulong, mask_bstride) V(X, ulong, mask_tstride)                \
    B(X, const q_store, pse) V(X, ulong, pse_off) V(X, ulong, pse_bstride) V(X, ulong, pse_hstride)                  \
    V(X, ulong, pse_tstride) V(X, float, softcap) V(X, int, window) V(X, int, kv_end)                                \
    /* the block table */                                                                                          \
    B(X, const int, table) V(X, ulong, table_off) V(X, int, table_cols) V(X, int, block_size)                        \
    /* antiquant: the key's scales and offsets, then the value's */                                                \
    B(X, const aq_store, aqs) V(X, ulong, aqs_off) B(X, const aq_store, aqo) V(X, ulong, aqo_off)                    \
    V(X, ulong, aq_bstride) V(X, ulong, aq_hstride)                                                                \
    B(X, const vaq_store, vaqs) V(X, ulong, vaqs_off) B(X, const vaq_store, vaqo) V(X, ulong, vaqo_off)              \
    V(X, ulong, vaq_bstride) V(X, ulong, vaq_hstride)                                                              \
    /* int8 output's scale and offset */                                                                           \
    B(X, const q2_store, qs2) V(X, ulong, qs2_off) B(X, const q2_store, qo2) V(X, ulong, qo2_off)                    \
    V(X, int, real_group)                                                                                          \
    /* RoPE: first positions and frequencies, or cos/sin tables */                                                 \
    B(X, const long, rope_pos) V(X, ulong, rope_pos_off) B(X, const float2, rope_f) V(X, ulong, rope_f_off)          \
    B(X, const float, rope_cos) V(X, ulong, rope_c_off) B(X, const float, rope_sin) V(X, ulong, rope_s_off)          \
    /* sinks, ALiBi slopes, the fused combine's counters */                                                        \
    B(X, const float, sinks) V(X, ulong, sinks_off) B(X, const float, alibi) V(X, ulong, alibi_off)                  \
    V(X, ulong, alibi_bstride) B(X, volatile int, cnt) V(X, ulong, cnt_off)

/* The split combine (ifa_combine.cl). */
#define IFA_ARGS_COMBINE(B, V, X)                                                                                    \
    B(X, const float, part) V(X, ulong, part_acc) V(X, ulong, part_m) V(X, ulong, part_l) V(X, int, max_splits)      \
    B(X, o_store, o) V(X, ulong, o_off) V(X, ulong, o_bstride) V(X, ulong, o_hstride) V(X, ulong, o_tstride)         \
    B(X, float, lse) V(X, ulong, lse_off) V(X, int, num_heads)                                                      \
    B(X, const int, lens) V(X, ulong, lens_off) V(X, int, uniform_len) V(X, int, per_batch) V(X, int, split_tokens)  \
    B(X, const long, prefix) V(X, ulong, prefix_off) V(X, long, total_cost) V(X, int, units) V(X, int, c0)           \
    V(X, int, group) V(X, int, head_groups) V(X, int, window)                                                      \
    B(X, const q2_store, qs2) V(X, ulong, qs2_off) B(X, const q2_store, qo2) V(X, ulong, qo2_off)                    \
    B(X, const float, sinks) V(X, ulong, sinks_off) V(X, int, head_dim) V(X, int, gt) V(X, int, sq) V(X, int, causal)

/* The cv template's query copy (ifa_cv.cl). */
#define IFA_ARGS_CV_QUERY(B, V, X)                                                                                   \
    B(X, const q_store, q) V(X, ulong, q_off) V(X, ulong, q_bstride) V(X, ulong, q_hstride) V(X, ulong, q_tstride)   \
    V(X, int, num_kv_heads) V(X, int, max_splits) B(X, float, ws) V(X, ulong, qt_off)                               \
    B(X, const long, rope_pos) V(X, ulong, rope_pos_off) B(X, const float2, rope_f) V(X, ulong, rope_f_off)          \
    B(X, const float, rope_cos) V(X, ulong, rope_c_off) B(X, const float, rope_sin) V(X, ulong, rope_s_off)          \
    B(X, const int, lens) V(X, ulong, lens_off)

/* The cv template's chunk gather (ifa_cv.cl). */
#define IFA_ARGS_CV_GATHER(B, V, X)                                                                                  \
    B(X, const kv_store, k) V(X, ulong, k_off) B(X, const kv_store, v) V(X, ulong, v_off) V(X, ulong, kv_bstride)    \
    V(X, ulong, kv_hstride) V(X, ulong, kv_rstride) B(X, const int, lens) V(X, ulong, lens_off)                      \
    V(X, int, uniform_len) V(X, int, per_batch) V(X, int, num_kv_heads) V(X, int, max_splits)                        \
    V(X, int, split_tokens) V(X, int, step) V(X, int, window) V(X, int, kv_end) B(X, const int, table)               \
    V(X, ulong, table_off) V(X, int, table_cols) V(X, int, block_size)                                              \
    B(X, const aq_store, aqs) V(X, ulong, aqs_off) B(X, const aq_store, aqo) V(X, ulong, aqo_off)                    \
    V(X, ulong, aq_bstride) V(X, ulong, aq_hstride)                                                                \
    B(X, const vaq_store, vaqs) V(X, ulong, vaqs_off) B(X, const vaq_store, vaqo) V(X, ulong, vaqo_off)              \
    V(X, ulong, vaq_bstride) V(X, ulong, vaq_hstride)                                                              \
    B(X, float, ws) V(X, ulong, kt_off) V(X, ulong, vt_off)                                                         \
    B(X, const uchar, mask) V(X, ulong, mask_off) V(X, ulong, mask_bstride) V(X, ulong, mask_tstride)

/* The cv template's softmax (ifa_cv.cl). */
#define IFA_ARGS_CV_SOFTMAX(B, V, X)                                                                                 \
    B(X, float, ws) V(X, ulong, s_off) V(X, ulong, acc_off) V(X, ulong, m_off) V(X, ulong, l_off) V(X, int, step)    \
    B(X, const int, lens) V(X, ulong, lens_off) V(X, int, uniform_len) V(X, int, per_batch) V(X, int, num_kv_heads)  \
    V(X, int, max_splits) V(X, int, split_tokens) V(X, int, window) V(X, float, scale) V(X, float, softcap)          \
    B(X, const uchar, mask) V(X, ulong, mask_off) V(X, ulong, mask_bstride) V(X, ulong, mask_tstride)                \
    B(X, const q_store, pse) V(X, ulong, pse_off) V(X, ulong, pse_bstride) V(X, ulong, pse_hstride)                  \
    V(X, ulong, pse_tstride) B(X, const float, alibi) V(X, ulong, alibi_off) V(X, ulong, alibi_bstride)

/* A kernel's parameter list from its table: every entry with a leading comma, the first one dropped (defined for
 * the host too, where nothing expands it: no condition on which compiler reads the file). */
#define IFA_KPARAM_B(X, T, name) , __global T *name
#define IFA_KPARAM_V(X, T, name) , T name
#define IFA_DROP_FIRST_(first, ...) __VA_ARGS__
#define IFA_DROP_FIRST(...) IFA_DROP_FIRST_(__VA_ARGS__)
#define IFA_KPARAMS(table) IFA_DROP_FIRST(table(IFA_KPARAM_B, IFA_KPARAM_V, ~))

#endif
