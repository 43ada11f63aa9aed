/* ifa: IncreFlashAttention (decode attention against a long KV cache) on OpenCL.
 *
 * Use: make a context (ifa_context_create or ifa_context_create_default), describe tensors with
 * ifa_tensor, fill an ifa_incre_flash_attention_args (start from ifa_incre_flash_attention_args_init),
 * call ifa_incre_flash_attention_get_workspace_size once per shape/length set (validates and plans),
 * then ifa_incre_flash_attention_run (launches only) as often as those arguments hold.
 *
 * Thread-safety: a context may be shared by threads (its program cache is locked); plans are plain data.
 * Errors: every function returns an ifa_status; ifa_last_error() returns this thread's message for the
 * last failure, naming the argument and the rule it broke. Nothing in the library aborts. */
#ifndef IFA_IFA_H
#define IFA_IFA_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "ifa/status.h"
#include "ifa/version.h"

/* ---- dtypes and tensors ----------------------------------------------------------------------- */

/* Element types. Values are stable ABI. bfloat16 is stored as the upper 16 bits of an IEEE float. */
typedef enum ifa_dtype {
    IFA_DTYPE_FLOAT32 = 0,
    IFA_DTYPE_FLOAT16 = 1,
    IFA_DTYPE_BFLOAT16 = 2,
    IFA_DTYPE_INT8 = 3,
    IFA_DTYPE_UINT8 = 4,
    IFA_DTYPE_INT32 = 5,
    IFA_DTYPE_INT64 = 6,
    IFA_DTYPE_BOOL = 7,
    IFA_DTYPE_INT4 = 8, /* signed 4-bit, two per byte along the last dimension, low nibble first */
    IFA_DTYPE_FLOAT8_E4M3 = 9, /* float8 e4m3fn (as PyTorch's float8_e4m3fn): sign, 4 exponent bits (bias 7), 3
                                * mantissa bits; no infinities, NaN = 0x7f / 0xff, largest finite 448 */
    IFA_DTYPE_FLOAT8_E5M2 = 10, /* float8 e5m2 (as PyTorch's float8_e5m2): the upper byte of a binary16 (sign, 5
                                 * exponent bits, bias 15, 2 mantissa bits); infinities and NaNs as binary16's,
                                 * largest finite 57344 */
    IFA_DTYPE_COUNT_
} ifa_dtype;

/* Bytes per element of a dtype (1 for int4: the byte holding it); 0 for a value outside the enum. */
IFA_API size_t ifa_dtype_size(ifa_dtype dtype);
/* Bits per element: 8 x ifa_dtype_size, 4 for int4; 0 for a value outside the enum. */
IFA_API size_t ifa_dtype_bits(ifa_dtype dtype);
/* The largest finite value of a dtype (448 for float8_e4m3fn, 57344 for float8_e5m2, 127 for int8, 7 for int4,
 * 65504 for float16; 2^63 for int64, whose maximum a double rounds up): what a symmetric quantiser divides max|x| by
 * to get a per-row scale, as KVCacheAppend does. 0 for a value outside the enum. */
IFA_API double ifa_dtype_max(ifa_dtype dtype);
/* NumPy-style name ("float16", "bfloat16", ...); "invalid" for a value outside the enum. */
IFA_API const char *ifa_dtype_name(ifa_dtype dtype);
/* Parses a name from ifa_dtype_name (also "fp32", "fp16", "bf16"); returns 0 and sets *out, or -1. */
IFA_API int ifa_dtype_from_name(const char *name, ifa_dtype *out);

#define IFA_MAX_DIMS 8

/* A dense row-major tensor in an OpenCL buffer. buffer may be NULL while only planning (get_workspace_size
 * checks shapes and dtypes); run requires it and checks offset + bytes against the buffer's size.
 * offset is in bytes and must be a multiple of the element size. */
typedef struct ifa_tensor {
    cl_mem buffer;
    size_t offset;
    ifa_dtype dtype;
    int32_t ndim;
    int64_t shape[IFA_MAX_DIMS];
} ifa_tensor;

/* Number of elements of t (product of its shape); -1 if ndim is out of range, a dim is negative, or the
 * product overflows int64. */
IFA_API int64_t ifa_tensor_numel(const ifa_tensor *t);
/* Bytes of t's elements (int4: numel / 2 rounded up); -1 as ifa_tensor_numel. */
IFA_API int64_t ifa_tensor_bytes(const ifa_tensor *t);

/* ---- context ---------------------------------------------------------------------------------- */

typedef struct ifa_context ifa_context;

/* Makes a context over the caller's cl_context and device (both retained, released by destroy). The
 * context owns the program cache: each kernel variant is built once per context. */
IFA_API ifa_status ifa_context_create(cl_context cl_ctx, cl_device_id device, ifa_context **out);
/* Makes a context on a device chosen by selector: NULL or "" = the IFA_DEVICE environment variable if
 * set, else the first device of the first platform that has one; "P:D" = device D of platform P (indices
 * as clinfo lists them); any other text = the first device whose name or platform name contains it. */
IFA_API ifa_status ifa_context_create_default(const char *selector, ifa_context **out);
/* Releases everything the context holds. NULL is ignored. No run may be in flight on its programs. If the
 * context ran the cv template, CLBlast's program cache is cleared too: CLBlast keeps one cache for the whole
 * process, holding every context it served, so other contexts rebuild (or reload) their GEMM programs on
 * their next cv run. */
IFA_API void ifa_context_destroy(ifa_context *ctx);
/* The OpenCL objects the context uses (not retained for the caller). */
IFA_API cl_context ifa_context_cl_context(const ifa_context *ctx);
IFA_API cl_device_id ifa_context_device(const ifa_context *ctx);
/* Number of kernel programs built so far by this context (lets tests check that the cache works). */
IFA_API int64_t ifa_context_programs_built(const ifa_context *ctx);

/* Creates a buffer of `bytes` (contents undefined) for a large tensor the kernels stream, a K/V cache or
 * pool above all, or any buffer whose memory must exist when the call returns; the caller releases it with
 * clReleaseMemObject. On a CPU device it is host memory of its own, taken and written here (so that no page
 * faults in while serving, and so that running out of memory is OUT_OF_MEMORY here: PoCL backs a plain
 * clCreateBuffer at its first use, inside a run, and stops the process when that fails), given to OpenCL with
 * CL_MEM_USE_HOST_PTR and freed when the runtime drops the buffer; from 2 MiB up in whole 2 MiB pages, starting
 * the tuning row's buffer_offset bytes past a 2 MiB boundary (Intel 640, else 0), on Linux advised for
 * transparent huge pages (madvise MADV_HUGEPAGE): PoCL's own buffers come from malloc in 4 KiB pages, and K/V
 * streamed from DRAM out of them took 1.06-1.41x longer (docs/performance.md). Otherwise it is
 * clCreateBuffer(flags, bytes).
 * flags are the access flags (CL_MEM_READ_WRITE, CL_MEM_READ_ONLY, ...); CL_MEM_USE_HOST_PTR,
 * CL_MEM_COPY_HOST_PTR or CL_MEM_ALLOC_HOST_PTR are INVALID_ATTRIBUTE, as is bytes 0; on a GPU, bytes over
 * CL_DEVICE_MAX_MEM_ALLOC_SIZE are OUT_OF_MEMORY (NVIDIA's driver does not refuse them itself). */
IFA_API ifa_status ifa_buffer_create(ifa_context *ctx, cl_mem_flags flags, size_t bytes, cl_mem *out);

/* ---- plan ------------------------------------------------------------------------------------- */

#include "ifa/plan.h"

/* ---- IncreFlashAttention ---------------------------------------------------------------------- */

/* Arguments of IncreFlashAttention, named as in Ascend's op (docs/op.md has the full rules).
 * For each query head h and query token i of batch b, over the key positions j it sees:
 *   s_j = (q·k_j)·scale_value + pse_shift[b, h, i, j] − alibi_slopes[b, h]·|j − (len_b − S1 + i)|;
 *   s_j = softcap·tanh(s_j / softcap) if softcap > 0;
 *   masked positions are dropped; out = Σ softmax(s)_j · v_j.  All in fp32.
 *   input_layout "BSH":  query (B, S1, N·D), key/value (B, S_kv, N_kv·D)
 *               "BSND": query (B, S1, N, D), key/value (B, S_kv, N_kv, D)
 *               "BNSD": query (B, N, S1, D), key/value (B, N_kv, S_kv, D)
 *   S1 (query tokens, speculative decoding) is 1 to 16. Key positions are logical: 0 .. len_b - 1 with
 *   len_b = actual_seq_lengths[b]. Query token i sees positions < len_b - S1 + 1 + i (causal, aligned to
 *   the end) unless atten_mask is per token, and only the last `window` of those when window > 0.
 *   attention_out: the query's shape (last dimension D_v with value_head_dim) and dtype, or int8 with
 *   quant_scale2. softmax_lse (optional, fp32, (B, N, S1)): natural-log
 *   sum-exp of the final scores, -inf for a row with no visible key (whose output is zeros).
 *   actual_seq_lengths: host array of 1 (applies to every batch) or B values in [0, S_kv]; NULL with
 *   count 0 means every batch sees all S_kv positions.
 *   num_key_value_heads: 0 means num_heads; it must divide num_heads (GQA/MQA).
 *   atten_mask (optional): bool, int8 or uint8; non-zero excludes a position. (B, S), (B, 1, S) or
 *   (B, 1, 1, S) for every query token, (B, 1, S1, S) per query token; indexed by logical position.
 *   pse_shift (optional): query's dtype, (B, N, S1, S) or (1, N, S1, S); indexed by logical position.
 *   kv_padding_size (optional, host scalar; contiguous KV with actual_seq_lengths): batch b's positions
 *   are the key rows [S_kv - pad - len_b, S_kv - pad); a batch whose rows would start before 0 sees nothing.
 *   Paged KV: block_table (host, int32, B x block_table_cols, row-major) and block_size (1 to 512); key and
 *   value are pools (num_blocks, block_size, H_kv) for BSH/BSND, (num_blocks, block_size, N_kv, D) for
 *   BSND, (num_blocks, N_kv, block_size, D) for BNSD; position p of batch b is row p % block_size of block
 *   block_table[b][p / block_size]. Only the entries a batch's length uses are read (and validated).
 *   key/value: float32, float16, bfloat16, float8 (e4m3fn, e5m2; values by themselves, a scale optional) or
 *   int8/int4 (a scale required).
 *   Antiquant (key/value int8 or int4, or float8 with a scale): antiquant_scale and optional
 *   antiquant_offset, the leading 2 being key then value; mode 0: (2) per tensor or (2, N_kv, 1, D),
 *   (2, N_kv, D), (2, H_kv) per channel, in a float dtype; mode 1: float32 (2, B, S) per token; mode 2:
 *   float32 (2, B, N_kv, S) per head and token; S is S_kv for contiguous KV (indexed by key row) and
 *   covers the longest length for paged KV (indexed by logical position); mode 3 (paged only): float32
 *   (2, num_blocks, N_kv, block_size), indexed like the pool, so scales move with shared and reused blocks.
 *   Or the separate form: key_antiquant_scale and value_antiquant_scale (offsets optional), each in its own
 *   mode (key_antiquant_mode, value_antiquant_mode), the shapes above without the leading 2. */
typedef struct ifa_incre_flash_attention_args {
    const ifa_tensor *query;
    const ifa_tensor *key;
    const ifa_tensor *value;
    const int64_t *actual_seq_lengths;
    int64_t actual_seq_lengths_count;
    int64_t num_heads;
    double scale_value;
    const char *input_layout;
    int64_t num_key_value_heads;
    const ifa_tensor *attention_out;
    const ifa_tensor *softmax_lse;
    /* masks, bias and windows */
    const ifa_tensor *atten_mask;
    const ifa_tensor *pse_shift;
    double softcap;                 /* 0 = off */
    int64_t window;                 /* 0 = off */
    const int64_t *kv_padding_size; /* NULL = absent */
    /* attention sinks (as gpt-oss uses them): optional float32 (N), one logit per query head that joins
     * each row's softmax as a key with no value: out = sum_j e^(s_j) v_j / (sum_j e^(s_j) + e^(sinks[h])),
     * softmax_lse = log(sum_j e^(s_j) + e^(sinks[h])) (sinks is not scaled, capped or masked). A row with
     * no visible key gives zeros and lse = sinks[h]. */
    const ifa_tensor *sinks;
    /* ALiBi (BLOOM, MPT, Baichuan): optional float32 (N) or (B, N) slopes, finite; each score gets
     * −slope·|j − q_pos| with q_pos = len_b − S1 + i (Q_b for S1 with actual_seq_lengths_q) the query
     * token's own logical position, so a causal row's bias is slope·(j − q_pos) ≤ 0 (FlashAttention's
     * alibi_slopes, vLLM's ALiBi up to a per-row constant, which the softmax ignores but softmax_lse keeps).
     * Added with pse_shift, before the soft-cap.
     * Not with a shared prefix. */
    const ifa_tensor *alibi_slopes;
    /* paged KV cache */
    const int32_t *block_table;     /* NULL = contiguous key/value */
    int64_t block_table_cols;
    int64_t block_size;
    /* quantised KV: int8/int4 key and value, dequantised as (x + offset) * scale while they are loaded */
    const ifa_tensor *antiquant_scale;
    const ifa_tensor *antiquant_offset; /* optional, absent = 0 */
    int64_t antiquant_mode;             /* 0 per-channel (per-tensor for shape (2)), 1 per-token, 2 per-head-per-token,
                                         * 3 per-head-per-token with the pages */
    /* int8 output (Ascend's post-quant): attention_out = round_half_even(out * scale2 + offset2), saturated */
    const ifa_tensor *quant_scale2;     /* (1) per tensor, or (N·D) / (N, D) per channel; float dtype */
    const ifa_tensor *quant_offset2;    /* optional, the scale's shape and dtype */
    /* shared prefix (cascade): every batch attends to [prefix ; its own KV]; the prefix is read once per KV
     * head for the whole batch. Layout-shaped with batch 1: BSH (1, S_p, H_kv), BSND (1, S_p, N_kv, D),
     * BNSD (1, N_kv, S_p, D); key's dtype (float only). No atten_mask, pse_shift or window with it. */
    const ifa_tensor *key_shared_prefix;
    const ifa_tensor *value_shared_prefix;
    const int64_t *actual_shared_prefix_len; /* host scalar, NULL = S_p */
    /* rotary position embedding (docs/rope.md): off unless rope_mode is "neox" or "gptj" */
    const char *rope_mode;          /* NULL or "none", "neox" (rotate halves), "gptj" (rotate interleaved pairs) */
    double rope_theta;              /* frequency base, 0 = 10000; not with tables */
    int64_t rope_dim;               /* dims of D that rotate (from rope_offset), 0 = D - rope_offset; even */
    int64_t rope_offset;            /* the first rotated dim, 0 = the leading ones; DeepSeek's MLA rotates the
                                     * trailing 64 of 576 (rope_offset 512) */
    const int64_t *rope_positions;  /* host, B values: position of each batch's first query
                                     * token (token i at + i); NULL = actual length - S1 */
    int64_t rope_positions_count;
    const ifa_tensor *rope_cos;     /* optional, with rope_sin: float32 (P, rope_dim/2), row = position */
    const ifa_tensor *rope_sin;
    /* which template computes the op (docs/templates.md): NULL or "auto" lets the planner choose; "all_vector"
     * (one fused kernel) or "cv" (matrix products through CLBlast, vector kernels between) forces one, and a
     * forced template that cannot run the case is INVALID_ATTRIBUTE with the reason */
    const char *template_mode;
    /* value head dimension D_v (multi-head latent attention): 0 means D. With 1 <= D_v < D the op reads only
     * the first D_v elements of each value row (value keeps key's shape), and attention_out's last dimension
     * is D_v (BSH: N·D_v). DeepSeek's MLA decode in its absorbed form is D = 576 (512 latent + 64 rotary),
     * D_v = 512, N_kv = 1 and value = key: the same tensor, one latent cache (FlashMLA's and vLLM's form). */
    int64_t value_head_dim;
    /* query tokens per batch (speculative decoding with per-request draft lengths, idle slots of a
     * persistent batch): host array of 1 (every batch) or B values in [0, S1]; NULL with count 0 means S1
     * for every batch. Batch b's query tokens are its first Q_b = actual_seq_lengths_q[b] tokens, aligned
     * to the end of its sequence: token i (< Q_b) sees positions < len_b - Q_b + 1 + i (causal), sits at
     * position len_b - Q_b + i (ALiBi, default RoPE positions). Tokens Q_b .. S1 - 1 are padding: never
     * read, their output rows are zeros and their softmax_lse -inf (sinks[h] with sinks), as for a row that
     * sees no key. A batch with Q_b = 0 reads no key or value (vLLM's query_start_loc lengths, Ascend
     * FIA's actualSeqLengths of the query). */
    const int64_t *actual_seq_lengths_q;
    int64_t actual_seq_lengths_q_count;
    /* separate key and value antiquant (Ascend FIA's key_/value_antiquant_scale and _mode; KIVI's keys per
     * channel with values per token): the key's and the value's scales in their own tensors, each in its own
     * mode, instead of antiquant_scale's (2, ...) form (giving both forms is INVALID_ATTRIBUTE, and
     * antiquant_mode must then be 0). Each takes antiquant_scale's shapes without the leading 2: mode 0 (1) per
     * tensor or (N_kv, 1, D), (N_kv, D), (N_kv·D) per channel, a float dtype; 1 (B, S); 2 (B, N_kv, S); 3 (paged)
     * (num_blocks, N_kv, block_size); float32 in modes 1-3. Both scales or neither (float8 without scales);
     * an offset has its scale's shape and dtype. The value's per-channel scales are the first D_v of D. */
    const ifa_tensor *key_antiquant_scale;
    const ifa_tensor *key_antiquant_offset;   /* optional, absent = 0 */
    const ifa_tensor *value_antiquant_scale;
    const ifa_tensor *value_antiquant_offset; /* optional, absent = 0 */
    int64_t key_antiquant_mode;               /* 0 channel/tensor, 1 token, 2 head and token, 3 with the pages */
    int64_t value_antiquant_mode;
} ifa_incre_flash_attention_args;

/* Sets every field to its default: NULL tensors and lengths, scale_value 1.0, input_layout "BSH",
 * num_heads 0 (must be set), num_key_value_heads 0 (= num_heads), no mask, bias, softcap, window, padding
 * or paging. */
IFA_API void ifa_incre_flash_attention_args_init(ifa_incre_flash_attention_args *args);

/* Phase 1: validates args (buffers may be NULL), plans the launch for ctx's device and returns the plan
 * and the workspace bytes run needs (0 means run needs no workspace). The plan is plain data that stays
 * valid for any later call whose arguments have the same shapes, dtypes, attributes and lengths. */
IFA_API ifa_status ifa_incre_flash_attention_get_workspace_size(ifa_context *ctx,
                                                                const ifa_incre_flash_attention_args *args,
                                                                ifa_plan *plan, size_t *workspace_bytes);

/* Phase 2: enqueues the op on queue (a queue of ctx's context and device). args must match the plan
 * (PLAN_MISMATCH otherwise) and name real buffers; workspace must hold plan->workspace_bytes from
 * workspace_offset on (it may be NULL when that is 0). The op waits on the wait list; if event is not
 * NULL it receives an event that completes when the op's last command does, on in-order and out-of-order
 * queues alike. Returns after enqueueing; host arrays in args may be freed on return. A plan whose last split
 * combines (plan->fused_combine) uses split counters ctx keeps per in-order queue (made on first use); on an
 * out-of-order queue it launches the combine kernel instead. */
IFA_API ifa_status ifa_incre_flash_attention_run(ifa_context *ctx, const ifa_plan *plan,
                                                 const ifa_incre_flash_attention_args *args,
                                                 cl_mem workspace, size_t workspace_offset,
                                                 cl_command_queue queue, cl_uint num_events_in_wait_list,
                                                 const cl_event *event_wait_list, cl_event *event);

/* Builds, ahead of the first runs, the kernels that get_workspace_size and run choose for steps like args: the
 * same dtypes, layout, heads, head dims and attributes, any batch size from 1 to args' B and any lengths up to
 * what args' key and value hold (S_kv, or block_table_cols x block_size positions; a window's rows with a
 * window), given in args' form (B values or one; a single batch's one value is uniform). args is validated as
 * get_workspace_size validates it (buffers may be NULL; the host arrays must be valid for args' B). The batch
 * size and the lengths move the planner's choices (splits or none, balanced units, heads per work-group, the
 * fused combine), and each kernel set is built on its first run, a stall in the middle of serving; an engine
 * that prepares once at start-up builds no program while it serves (on an in-order queue, with K/V offsets like
 * args'; the cv template's CLBlast products still build at their first call). NVIDIA's build compiles to the
 * device's code (ptxas runs in it); PoCL's is the front end (about 0.25 s of a fused kernel's 1.3 s on an AVX2
 * core) and the machine code follows at a kernel's first launch, so with queue (of ctx's context and device; may
 * be NULL) on a CPU device prepare also launches each all-vector kernel once, one work-group over a zeroed
 * scratch buffer of its own with every length 0 (none of args' buffers is read or written), and waits for them.
 * The lengths tried are where the planner's choices can change (docs/api.md); tests/test_plan_domain.c checks
 * random steps' plans against them. *variants (may be NULL): the distinct kernel sets of those plans;
 * ifa_context_programs_built counts what was built. */
IFA_API ifa_status ifa_incre_flash_attention_prepare(ifa_context *ctx, const ifa_incre_flash_attention_args *args,
                                                     cl_command_queue queue, int64_t *variants);

/* ---- MergeAttentionStates -------------------------------------------------------------------- */

/* Merges P partial attention results of the same query rows, each over its own set of keys (e.g. a cached
 * segment and a new-token segment, or a shared prefix and each sequence's own cache):
 *   lse = ln Σ_i exp(lse_i),   out = Σ_i exp(lse_i − lse) · out_i          (fp32 arithmetic)
 * which equals attention over the union of the key sets. A part whose lse_i is −inf (it saw no key)
 * contributes nothing, whatever its output holds; a row whose parts are all −inf gives zeros and −inf.
 *   partial_outputs: (P, rows..., D), float32, float16 or bfloat16; P in [1, 4096]
 *   partial_lses:    (P, rows...), float32 (natural log, as IncreFlashAttention's softmax_lse)
 *   merged_output:   (rows..., D), float32, float16 or bfloat16
 *   merged_lse:      (rows...), float32, optional */
typedef struct ifa_merge_attention_states_args {
    const ifa_tensor *partial_outputs;
    const ifa_tensor *partial_lses;
    const ifa_tensor *merged_output;
    const ifa_tensor *merged_lse;
} ifa_merge_attention_states_args;

/* Phase 1: validates args (buffers may be NULL) and returns the workspace run needs (always 0; the
 * two-phase form matches every ifa op, so frameworks call them all alike). */
IFA_API ifa_status ifa_merge_attention_states_get_workspace_size(ifa_context *ctx,
                                                                 const ifa_merge_attention_states_args *args,
                                                                 size_t *workspace_bytes);
/* Phase 2: validates args and their buffers and enqueues the merge on queue after the wait list; *event
 * (if not NULL) completes with it. */
IFA_API ifa_status ifa_merge_attention_states_run(ifa_context *ctx, const ifa_merge_attention_states_args *args,
                                                  cl_command_queue queue, cl_uint num_events_in_wait_list,
                                                  const cl_event *event_wait_list, cl_event *event);

/* ---- KVCacheAppend ---------------------------------------------------------------------------- */

/* Writes the S1 new key and value rows of each batch into a KV cache, at that batch's positions
 * cache_seq_lengths[b] .. cache_seq_lengths[b] + S1 - 1, in the form IncreFlashAttention reads
 * (docs/kv-cache.md has the formulas and error bounds).
 *   key, value (new rows): float32, float16 or bfloat16, shaped by input_layout like IncreFlashAttention's
 *     query with N_kv heads: BSH (B, S1, N_kv·D), BSND (B, S1, N_kv, D), BNSD (B, N_kv, S1, D).
 *   value and value_cache may both be NULL: a key-only append into one cache (multi-head latent attention,
 *     whose attention passes the key cache as the value with value_head_dim); quantised, the key's scale (and
 *     offset) is written to both halves of antiquant_scale (antiquant_offset), which that attention reads.
 *   key_cache, value_cache: the same shape and dtype each. Contiguous (block_table NULL): BSH (B, S_max,
 *     N_kv·D), BSND (B, S_max, N_kv, D), BNSD (B, N_kv, S_max, D), position p at row p. Paged: the pool
 *     shapes IncreFlashAttention takes, position p of batch b at row p % block_size of block
 *     block_table[b][p / block_size]. A float cache stores the rows converted to its dtype (round to nearest
 *     even; a float8 cache saturates at its largest finite); an int8 or int4 cache quantises each (token, KV
 *     head) row of D values online; a float8 cache given antiquant_scale scales each row by max|x| over its
 *     largest finite (448 e4m3fn, 57344 e5m2) before rounding.
 *   antiquant_scale (written; required with an int8/int4 cache, optional with float8, float32): contiguous
 *     (2, B, N_kv, S_max), the attention op's antiquant_mode 2; paged (2, num_blocks, N_kv, block_size), its
 *     antiquant_mode 3. Key first, then value.
 *   antiquant_offset (written; optional, the scale's shape): given, the quantisation is asymmetric over the
 *     row's [min, max]; absent, symmetric over [-max|x|, max|x|] with no offset.
 *   cache_seq_lengths: host, B values (or 1 for all), each >= 0 with length + S1 within S_max (contiguous)
 *     or within the batch's block_table_cols · block_size positions (paged); every block id written must lie
 *     in the pool and no (block, row) may be written twice (two batches sharing a block they append into).
 * Nothing outside the new rows (and their scales) is written. */
typedef struct ifa_kv_cache_append_args {
    const ifa_tensor *key;
    const ifa_tensor *value;
    const ifa_tensor *key_cache;
    const ifa_tensor *value_cache;
    const int64_t *cache_seq_lengths;
    int64_t cache_seq_lengths_count;
    const char *input_layout;    /* "BSH" (default), "BSND", "BNSD" */
    int64_t num_key_value_heads; /* N_kv, >= 1 */
    const int32_t *block_table;  /* NULL = contiguous cache */
    int64_t block_table_cols;
    int64_t block_size;
    const ifa_tensor *antiquant_scale;
    const ifa_tensor *antiquant_offset;
    /* rotary position embedding of the new keys before they are written (and quantised) */
    const char *rope_mode;          /* NULL or "none", "neox" (rotate halves), "gptj" (rotate interleaved pairs) */
    double rope_theta;              /* frequency base, 0 = 10000; not with tables */
    int64_t rope_dim;               /* dims of D that rotate (from rope_offset), 0 = D - rope_offset; even */
    int64_t rope_offset;            /* the first rotated dim, 0 = the leading ones; DeepSeek's MLA rotates the
                                     * trailing 64 of 576 (rope_offset 512) */
    const int64_t *rope_positions;  /* host, B values: position of each batch's first new row (row
                                     * i at + i); NULL = cache_seq_lengths */
    int64_t rope_positions_count;
    const ifa_tensor *rope_cos;     /* optional, with rope_sin: float32 (P, rope_dim/2), row = position */
    const ifa_tensor *rope_sin;
    /* new rows per batch (speculative decoding's accepted tokens, a persistent batch's idle slots): host, 1
     * or B values in [0, S1]; NULL with count 0 means all S1. Batch b writes only its first
     * new_seq_lengths[b] rows, at cache_seq_lengths[b] + i; its other rows are never read, and the cache
     * positions, blocks and scales they would have used are neither checked nor written. */
    const int64_t *new_seq_lengths;
    int64_t new_seq_lengths_count;
    /* the separate form (IncreFlashAttention's key_/value_antiquant_scale), instead of antiquant_scale; not
     * with a key-only append. Each side (int8/int4 cache: both required; float8: both or neither) in its mode:
     * 0, scales given (read, never written): (1) per tensor or (N_kv, 1, D), (N_kv, D), (N_kv·D) per channel,
     * a float dtype, an optional offset alike; each value becomes clamp(rint(x / s_d - o_d)) (float8: x / s_d
     * rounded), e.g. KIVI's keys with calibrated per-channel scales. 2 (contiguous) or 3 (paged), written
     * online per token and head as above, float32 (B, N_kv, S_max) or (num_blocks, N_kv, block_size), an
     * offset (int8/int4) making it asymmetric. The attention op reads either side in the same mode. */
    const ifa_tensor *key_antiquant_scale;
    const ifa_tensor *key_antiquant_offset;
    const ifa_tensor *value_antiquant_scale;
    const ifa_tensor *value_antiquant_offset;
    int64_t key_antiquant_mode;   /* 0 given, 2 written (contiguous), 3 written (paged) */
    int64_t value_antiquant_mode;
} ifa_kv_cache_append_args;

/* Sets every field to its default: NULL tensors and lengths, layout "BSH", N_kv 0 (must be set), contiguous. */
IFA_API void ifa_kv_cache_append_args_init(ifa_kv_cache_append_args *args);
/* Phase 1: validates args (buffers may be NULL) and returns the workspace run needs: 16 bytes per new token (its
 * destination, uploaded by run), plus 4 x rope_dim with rope_theta (the inverse frequencies). */
IFA_API ifa_status ifa_kv_cache_append_get_workspace_size(ifa_context *ctx, const ifa_kv_cache_append_args *args,
                                                          size_t *workspace_bytes);
/* Phase 2: validates args (lengths and block table included, every call) and enqueues the append on queue
 * after the wait list; *event (if not NULL) completes when the cache holds the rows. workspace must hold the
 * phase-1 bytes from workspace_offset (a multiple of 8). Host arrays in args may be freed on return. */
IFA_API ifa_status ifa_kv_cache_append_run(ifa_context *ctx, const ifa_kv_cache_append_args *args, cl_mem workspace,
                                           size_t workspace_offset, cl_command_queue queue,
                                           cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                                           cl_event *event);

/* run, also returning in *first_kernel (if not NULL; the caller releases it) the event of the op's first
 * kernel, so that device time can be measured from the first kernel's start to the last one's end (the
 * per-run uploads of lengths and tables before it are excluded). ifa-bench uses it. */
IFA_API ifa_status ifa_incre_flash_attention_run_profiled(ifa_context *ctx, const ifa_plan *plan,
                                                          const ifa_incre_flash_attention_args *args,
                                                          cl_mem workspace, size_t workspace_offset,
                                                          cl_command_queue queue, cl_uint num_events_in_wait_list,
                                                          const cl_event *event_wait_list, cl_event *first_kernel,
                                                          cl_event *event);

#ifdef __cplusplus
}
#endif
#endif
