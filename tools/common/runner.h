/* Running one IncreFlashAttention case on a device and checking it against the float64 reference: the
 * shared core of ifa-run and the kernel tests. */
#ifndef IFA_TOOLS_RUNNER_H
#define IFA_TOOLS_RUNNER_H

#include "common/host_tensor.h"

typedef struct ifa_case {
    ifa_host_tensor query, key, value;
    int64_t *lengths; /* malloc'd, NULL for none */
    int64_t lengths_count;
    int64_t *q_lengths; /* malloc'd actual_seq_lengths_q (1 or B values), NULL for none: S1 in every batch */
    int64_t q_lengths_count;
    int64_t num_heads;
    int64_t num_key_value_heads;
    double scale_value;
    char input_layout[8];
    int softmax_lse_flag;
    ifa_host_tensor atten_mask; /* data NULL: absent */
    ifa_host_tensor pse_shift;  /* data NULL: absent */
    ifa_host_tensor sinks;      /* data NULL: absent; float32 (N) */
    ifa_host_tensor alibi_slopes; /* data NULL: absent; float32 (N) or (B, N) */
    double softcap;
    int64_t window;
    int has_kv_padding;
    int64_t kv_padding_size;
    int32_t *block_table;       /* malloc'd (B x block_table_cols), NULL: contiguous key/value */
    int64_t block_table_cols;
    int64_t block_size;
    ifa_host_tensor antiquant_scale;  /* data NULL: absent */
    ifa_host_tensor antiquant_offset; /* data NULL: absent */
    int64_t antiquant_mode;
    /* the separate form: the key's and the value's scales (offsets) in their own tensors and modes */
    ifa_host_tensor key_antiquant_scale, key_antiquant_offset;     /* data NULL: absent */
    ifa_host_tensor value_antiquant_scale, value_antiquant_offset; /* data NULL: absent */
    int64_t key_antiquant_mode, value_antiquant_mode;
    ifa_host_tensor quant_scale2;     /* data NULL: absent; with it the output is int8 */
    ifa_host_tensor quant_offset2;    /* data NULL: absent */
    ifa_host_tensor key_shared_prefix, value_shared_prefix; /* data NULL: absent */
    int has_prefix_len;
    int64_t prefix_len;               /* actual_shared_prefix_len when has_prefix_len */
    char rope_mode[8];                /* "" or "none": off; "neox" or "gptj" */
    double rope_theta;                /* 0: 10000 */
    int64_t rope_dim;                 /* 0: D - rope_offset */
    int64_t rope_offset;              /* the first rotated dim */
    int64_t *rope_positions;          /* malloc'd, B values; NULL: the op's default */
    int64_t rope_positions_count;
    ifa_host_tensor rope_cos, rope_sin; /* data NULL: absent */
    char template_mode[16];           /* "" or "auto": the planner's choice; "all_vector" or "cv" forces one */
    int64_t value_head_dim;           /* D_v, 0: D (the op reads the first D_v elements of each value row) */
    int value_is_key;                 /* 1: the op's value is the key tensor itself (MLA's one latent cache); value
                                       * then holds a copy of key for the host code that reads it */
    int8_t int8_poison;               /* int8 output: the value every element holds before the run (int8 has no
                                       * NaN, so tests run twice with two values to catch unwritten elements) */
    int kv_from_buffer_create;        /* 1: key and value in ifa_buffer_create's buffers (as ifa-bench times them),
                                       * else clCreateBuffer's */
    int64_t kv_base_bytes;            /* > 0: key and value start this many bytes into clCreateBuffer's buffers of
                                       * that many more bytes (tensor offset kv_base_bytes), only their own bytes
                                       * written (a host's pages past them are never touched): the kernels' index
                                       * arithmetic past 2^31 bytes or 2^32 elements; 0: at offset 0 */
} ifa_case;

/* The tensor descriptors of a case's arguments (what ifa_case_describe points args at). */
typedef struct ifa_case_tensors {
    ifa_tensor query, key, value, attention_out, softmax_lse, atten_mask, pse_shift, antiquant_scale, antiquant_offset,
        quant_scale2, quant_offset2, key_shared_prefix, value_shared_prefix, rope_cos, rope_sin, sinks,
        alibi_slopes, key_antiquant_scale, key_antiquant_offset, value_antiquant_scale, value_antiquant_offset;
} ifa_case_tensors;

typedef struct ifa_case_result {
    ifa_host_tensor out; /* query's shape with D_v (ifa_case_out_shape) and dtype (int8 with quant_scale2) */
    ifa_host_tensor lse; /* (B, N, S1) float32 when softmax_lse_flag */
    ifa_plan plan;
    double device_ms;    /* kernel time from profiling events (0 if the queue has no profiling) */
    int64_t outside;     /* bytes changed in the guards around the output, softmax_lse and the workspace (the
                          * run wrote outside them: ifa_case_check_result fails it) */
    char error[512];     /* when ifa_case_run fails: what failed (the library's message, or the runner's own step);
                          * kept after the failure frees the rest */
} ifa_case_result;

typedef struct ifa_case_check {
    double rel_l2;       /* ||out - ref|| / ||ref|| over the whole output (0 if both are all zero) */
    double max_abs;      /* max |out - ref| */
    double tolerance;    /* the relative L2 bound for the output dtype */
    double lse_max_excess; /* max over rows of |lse - ref| minus that row's bound; <= 0 passes */
    int64_t nonfinite;   /* elements of out whose class differs from the reference's: non-finite where it is finite
                          * (an unwritten, poisoned element shows here), or not its NaN or infinity */
    int64_t lse_bad;     /* LSE rows out of bound, or -inf mismatches */
    int64_t int8_bad;    /* int8 output: elements off the rounded reference (beyond a tie's 1 unit) */
    int64_t outside;     /* the result's outside: bytes written past the output, lse or workspace */
    double round_bias;   /* fp16/bf16 outputs: the mean error toward zero in units of the last place over the normal
                          * values of at least 1/64 of the largest (256 or more; else 0): about 0 when the store
                          * rounds to nearest even, -0.5 toward zero; beyond IFA_ROUND_BIAS_MAX fails */
    int pass;
} ifa_case_check;
/* The largest |round_bias| a check passes: 0.1 ulp, five times the spread of a mean of 256 round-to-nearest errors
 * (0.29 / 16) and the kernels' fp32 error far below it (about 2^-13 of an fp16 ulp). */
#define IFA_ROUND_BIAS_MAX 0.1

/* Initialises a case with Ascend's defaults (scale 1, BSH, no lengths, no LSE). */
void ifa_case_init(ifa_case *c);
/* Query tokens per batch (S1) from the query's shape and the layout. */
int64_t ifa_case_seq_q(const ifa_case *c);
/* Flat index of element (b, s, n, d) of a (B, S, N·D) / (B, S, N, D) (bnsd 0) or (B, N, S, D) (bnsd 1)
 * tensor; with a pool, b is the block and S its rows. */
int64_t ifa_case_at(int bnsd, int64_t S, int64_t N, int64_t D, int64_t b, int64_t s, int64_t n, int64_t d);
/* The key's head dimension D (from the query's shape; 0 for a shape without it), the value's D_v
 * (value_head_dim, or D) and the output's shape: the query's with D_v for D (shape holds IFA_MAX_DIMS). */
int64_t ifa_case_head_dim(const ifa_case *c);
int64_t ifa_case_value_dim(const ifa_case *c);
void ifa_case_out_shape(const ifa_case *c, int64_t *shape);
/* The forms (dtype, rank, shape; no data) of the case's outputs: attention_out (ifa_case_out_shape, the query's
 * dtype or int8 with quant_scale2) and softmax_lse (float32 (B, N, S1)); what planning describes and a run
 * allocates. */
void ifa_case_output_forms(const ifa_case *c, ifa_host_tensor *out, ifa_host_tensor *lse);
/* Batch b's length as the op defines it, for S key rows per batch: *raw is actual_seq_lengths' value (S
 * without lengths); with kv padding the batch's rows are [S - pad - len, S - pad), and a batch whose rows
 * would start before row 0 sees nothing. Returns the effective length; *row0 is its first key row
 * (contiguous KV). The lengths must hold 1 or more than b values. */
int64_t ifa_case_length(const ifa_case *c, int64_t b, int64_t S, int64_t *raw, int64_t *row0);
/* Batch b's query tokens: actual_seq_lengths_q's value, or S1 without it. */
int64_t ifa_case_query_tokens(const ifa_case *c, int64_t b);

#define IFA_CASE_TENSORS 21

/* Fills args (and the descriptors in t it points to) from c. bufs, in the order of ifa_case_tensors'
 * fields (IFA_CASE_TENSORS of them), may be NULL (planning only) or hold a cl_mem per tensor (NULL for absent ones); out and lse
 * describe the outputs (lse may be NULL when the case has no LSE). */
void ifa_case_describe(const ifa_case *c, const ifa_host_tensor *out, const ifa_host_tensor *lse, const cl_mem *bufs,
                       ifa_case_tensors *t, ifa_incre_flash_attention_args *args);

/* The kv_base_bytes at which a tensor of `bytes` ends at the end of the largest buffer the device allocates,
 * at most 9 GiB (on a card, float16 element indices past 2^32), 4 KiB aligned with at least 4 KiB before it;
 * 0 if it does not fit or the device does not say. PoCL allocates 2 GiB: int4 nibble indices near 2^32. */
int64_t ifa_case_far_base(cl_device_id device, int64_t bytes);
/* ifa_case_far_base for the larger of c's key and value (kv_base_bytes for a far run). */
int64_t ifa_case_far_kv_base(cl_device_id device, const ifa_case *c);
/* A buffer of base + bytes (at least 1) holding data's bytes at byte base; nothing else is written, so memory
 * before them (a CPU device's host pages) need never be committed. OUT_OF_MEMORY or OPENCL_ERROR on failure
 * (*out may then hold a buffer to release). */
ifa_status ifa_case_buffer_at(cl_context cl, cl_command_queue queue, const void *data, size_t bytes, size_t base,
                              cl_mem *out);

/* Frees what a case owns. */
void ifa_case_free(ifa_case *c);
void ifa_case_result_free(ifa_case_result *r);

/* Uploads the inputs, poisons the outputs with NaN, plans, runs and reads back. Returns the library's
 * status, or the runner's own for a step of its own that failed; r->error says why either way. adjust, if not NULL, may replace the plan after get_workspace_size
 * (tests use it to force plan variants the device would not choose); it returns 0 or -1 to fail, which makes
 * the run INTERNAL without touching the last error (an earlier call's message may still be there). On failure
 * r holds nothing to free (freeing it anyway is harmless). */
ifa_status ifa_case_run(ifa_context *ctx, cl_command_queue queue, const ifa_case *c,
                        int (*adjust)(ifa_plan *plan, void *user), void *user, ifa_case_result *r);

/* The relative L2 tolerance for an output dtype, from its storage precision: float32 1e-5, float16 1e-3,
 * bfloat16 8e-3. */
double ifa_case_tolerance(ifa_dtype out_dtype);

/* Compares r with the float64 reference of c. Returns 0, or -1 if the reference cannot be computed. */
int ifa_case_check_result(const ifa_case *c, const ifa_case_result *r, ifa_case_check *chk);

#endif
