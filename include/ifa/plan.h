/* The plan: everything get_workspace_size decided, as plain fixed-width integers (no pointers), so it can
 * be copied, stored, dumped as JSON and reused for every run with the same arguments. Included by ifa.h. */
#ifndef IFA_PLAN_H
#define IFA_PLAN_H

#include <stdint.h>

#define IFA_PLAN_MAGIC 0x31414649u /* "IFA1" read as little-endian bytes */
#define IFA_PLAN_VERSION 26u

/* Input layouts (the input_layout attribute). */
typedef enum ifa_layout { IFA_LAYOUT_BSH = 0, IFA_LAYOUT_BSND = 1, IFA_LAYOUT_BNSD = 2, IFA_LAYOUT_COUNT_ } ifa_layout;

/* How actual_seq_lengths was given. */
typedef enum ifa_lengths_mode {
    IFA_LENGTHS_FULL = 0,      /* not given: every batch sees S_kv positions */
    IFA_LENGTHS_UNIFORM = 1,   /* one value for every batch */
    IFA_LENGTHS_PER_BATCH = 2  /* B values, uploaded to the workspace by run */
} ifa_lengths_mode;

/* Templates: how the op is computed. */
typedef enum ifa_template {
    IFA_TEMPLATE_ALL_VECTOR = 1, /* one fused kernel: scores, online softmax and P·V in registers/local memory */
    IFA_TEMPLATE_CV = 2          /* matrix products through CLBlast with vector kernels between (templates/cv.c) */
} ifa_template;

/* How the KV sequence is split across work-groups (the plan's split_kv and the key's split_kv digit). */
typedef enum ifa_split_mode {
    IFA_SPLIT_NONE = 0,           /* one work-group per (batch, KV head, head group) block */
    IFA_SPLIT_PARTIAL_ROWMAX = 1, /* equal splits, each normalised by its own max; the combine rescales */
    IFA_SPLIT_GLOBAL_ROWMAX = 2,  /* equal splits after a max pass; the combine only sums */
    IFA_SPLIT_BALANCED = 3        /* balanced units over a cost line of all blocks (partial rowmax) */
} ifa_split_mode;

/* atten_mask forms. */
typedef enum ifa_mask_kind {
    IFA_MASK_NONE = 0,
    IFA_MASK_PER_BATCH = 1, /* (B, S), (B, 1, S) or (B, 1, 1, S): one row per batch, for every query token */
    IFA_MASK_PER_TOKEN = 2  /* (B, 1, S1, S): one row per query token; no implicit causal mask */
} ifa_mask_kind;

/* pse_shift forms. */
typedef enum ifa_pse_kind {
    IFA_PSE_NONE = 0,
    IFA_PSE_PER_BATCH = 1, /* (B, N, S1, S) */
    IFA_PSE_BROADCAST = 2  /* (1, N, S1, S): the same bias for every batch */
} ifa_pse_kind;

/* alibi_slopes forms. */
typedef enum ifa_alibi_kind {
    IFA_ALIBI_NONE = 0,
    IFA_ALIBI_PER_HEAD = 1, /* (N): the same slopes for every batch */
    IFA_ALIBI_PER_BATCH = 2 /* (B, N) */
} ifa_alibi_kind;

/* Rotary position embedding modes. */
typedef enum ifa_rope_mode {
    IFA_ROPE_NONE = 0,
    IFA_ROPE_NEOX = 1, /* rotate halves: dims (i, i + rope_dim/2) */
    IFA_ROPE_GPTJ = 2  /* rotate interleaved pairs: dims (2i, 2i + 1) */
} ifa_rope_mode;

/* Antiquant modes (the key's antiquant digit). */
typedef enum ifa_antiquant {
    IFA_ANTIQUANT_NONE = 0,
    IFA_ANTIQUANT_PER_CHANNEL = 1,       /* scale/offset per (KV head, d) */
    IFA_ANTIQUANT_PER_TENSOR = 2,        /* one scale/offset for key, one for value */
    IFA_ANTIQUANT_PER_TOKEN = 3,         /* per (batch, position) */
    IFA_ANTIQUANT_PER_HEAD_PER_TOKEN = 4, /* per (batch, KV head, position) */
    IFA_ANTIQUANT_PAGED_HEAD_TOKEN = 5    /* per (pool block, KV head, row of the block): stored with the pages */
} ifa_antiquant;

/* The call a plan was made for, reduced to integers. run recomputes it from its arguments and refuses a
 * plan whose problem differs (PLAN_MISMATCH). */
typedef struct ifa_problem {
    int64_t batch;          /* B */
    int64_t num_heads;      /* N */
    int64_t num_kv_heads;   /* N_kv */
    int64_t head_dim;       /* D */
    int64_t seq_q;          /* S1, query tokens per batch, 1 to 16 */
    int64_t seq_kv;         /* S_kv: the key tensor's sequence dimension; paged: block_table_cols x block_size */
    int32_t layout;         /* ifa_layout */
    int32_t q_dtype;        /* ifa_dtype of query */
    int32_t kv_dtype;       /* ifa_dtype of key and value */
    int32_t out_dtype;      /* ifa_dtype of attention_out */
    int32_t has_lse;        /* 1 if softmax_lse is written */
    int32_t lengths_mode;   /* ifa_lengths_mode */
    int64_t uniform_length; /* the length when lengths_mode != PER_BATCH (0 where kv padding empties it) */
    int64_t max_length;     /* the most KV rows one (batch, KV head) block reads (ifa__kv_span) */
    int64_t total_length;   /* KV rows read per KV head, summed over batches */
    uint64_t lengths_hash;  /* FNV-1a of the per-batch lengths (PER_BATCH), else 0 */
    uint32_t scale_bits;    /* scale_value as float32 bits */
    uint32_t softcap_bits;  /* softcap as float32 bits, 0 = off */
    int64_t window;         /* sliding window in key positions, 0 = off */
    int32_t causal;         /* 1: query token i of S1 sees positions < len - S1 + 1 + i (S1 > 1, no per-token mask) */
    int32_t mask_kind;      /* ifa_mask_kind */
    int64_t mask_batch;     /* atten_mask's batch dimension (>= B) */
    int64_t mask_len;       /* atten_mask's last dimension (>= max visible length) */
    int32_t pse_kind;       /* ifa_pse_kind */
    int32_t has_kv_padding; /* 1 if kv_padding_size was given */
    int64_t pse_len;        /* pse_shift's last dimension */
    int64_t kv_padding;     /* kv_padding_size */
    int32_t paged;          /* 1: key/value are a pool of blocks addressed through block_table */
    int32_t template_request; /* template_mode: 0 auto (the planner chooses), else the ifa_template asked for */
    int64_t block_size;     /* paged: rows per block */
    int64_t table_cols;     /* paged: block_table's second dimension (blocks per sequence) */
    int64_t pool_blocks;    /* paged: blocks in the key/value pool */
    int32_t antiquant;      /* ifa_antiquant of the key's scales */
    int32_t aq_dtype;       /* ifa_dtype of the key's scale (and offset) */
    int32_t aq_offset;      /* 1 if the key has offsets */
    int32_t quant_out;      /* int8 output: 0 off, 1 per-tensor quant_scale2, 2 per-channel */
    int32_t q2_dtype;       /* ifa_dtype of quant_scale2 (and quant_offset2) */
    int32_t q2_offset;      /* 1 if quant_offset2 is given */
    int32_t has_prefix;     /* 1 with key_shared_prefix / value_shared_prefix */
    int32_t has_sinks;      /* 1 with sinks */
    int64_t prefix_seq;     /* the prefix tensors' sequence dimension S_p */
    int64_t prefix_len;     /* the prefix positions every batch sees (actual_shared_prefix_len) */
    int64_t aq_len;         /* per-token modes: the scale's last dimension (positions; block_size for pages) */
    int32_t rope;           /* ifa_rope_mode of the query */
    int32_t rope_table;     /* 1: cos/sin from rope_cos/rope_sin, 0: from rope_theta */
    int64_t rope_dim;       /* dims of D that rotate, from rope_offset */
    uint64_t rope_theta_bits; /* rope_theta as float64 bits (0 with tables) */
    int64_t rope_table_rows;  /* rope_cos/rope_sin rows (positions they cover) */
    int64_t rope_offset;      /* the first rotated dim (0: the leading rope_dim; DeepSeek's MLA: D - 64) */
    int32_t alibi;            /* ifa_alibi_kind */
    int32_t value_dim;        /* D_v: value columns read per row and the output's head dimension (head_dim unless
                               * value_head_dim) */
    int32_t q_lengths;        /* 1 with actual_seq_lengths_q: per-batch query tokens, uploaded beside the KV
                               * lengths (the lengths are then PER_BATCH) */
    int32_t reserved1;        /* 0. The 4 bytes before q_lengths_hash, which the compiler would otherwise pad
                               * unseen (tiling/plan_layout.c) */
    uint64_t q_lengths_hash;  /* FNV-1a of the per-batch query tokens (q_lengths), else 0 */
    int32_t aq_separate;      /* 1: key_/value_antiquant_scale (their own tensors and modes), 0: antiquant_scale's
                               * (2, ...) form or none */
    int32_t v_antiquant;      /* ifa_antiquant of the value's scales (antiquant when not aq_separate) */
    int32_t v_aq_dtype;       /* ifa_dtype of the value's scale (and offset) */
    int32_t v_aq_offset;      /* 1 if the value has offsets */
    int64_t v_aq_len;         /* the value's aq_len */
} ifa_problem;

typedef struct ifa_plan {
    uint32_t magic;   /* IFA_PLAN_MAGIC */
    uint32_t version; /* IFA_PLAN_VERSION */
    uint64_t tiling_key;
    ifa_problem problem;
    int32_t template_id;       /* ifa_template */
    int32_t work_group_size;   /* work-items per work-group */
    int32_t chunk_rows;        /* KV rows per inner block */
    int32_t heads_per_group;   /* query heads held by one work-group (G when they fit in local memory) */
    int32_t head_groups;       /* ceil(G / heads_per_group): passes over each (batch, KV head) */
    int32_t split_kv;          /* ifa_split_mode */
    int32_t split_tokens;      /* KV rows per split (a multiple of chunk_rows) */
    int32_t max_splits;        /* splits of the longest batch; shorter batches leave later splits empty (a row's
                                * partials are prefix_slots + max_splits apart) */
    int32_t combine_work_group_size;
    int32_t units;             /* IFA_SPLIT_BALANCED: work-groups, each a balanced stretch of the cost line */
    int32_t block_cost_rows;   /* IFA_SPLIT_BALANCED: what a (batch, KV head, head group) block costs besides its rows */
    int32_t load_ratio_milli;  /* 1000 x (busiest work-group's cost / mean cost over compute units), estimated */
    int32_t vector_width;      /* floats per vector along D in the fused kernel (1: scalar work-group shape) */
    int32_t prefix_heads_per_group; /* shared prefix pass: (batch, query head) rows per work-group */
    int32_t prefix_head_groups;     /* shared prefix pass: work-groups per KV head */
    int32_t prefix_slots;           /* 1 with a shared prefix: partial slot 0 of each row is the prefix's */
    int32_t pv_block;          /* vectors per P.V register block */
    int32_t prefix_pv_block;   /* the same for the shared prefix pass (more rows per work-group) */
    int32_t pv_rows;           /* all_vector, vector shape: query rows per P.V register block (pv_rows x pv_block
                                * accumulators; 1 to 8, 0 in the work-group shape) */
    int32_t prefix_pv_rows;    /* the same for the shared prefix pass */
    int64_t total_cost;        /* IFA_SPLIT_BALANCED: sum over blocks of (length + block_cost_rows) */
    int64_t local_mem_bytes;   /* local memory one work-group uses */
    int64_t num_work_groups;   /* work-groups launched */
    int64_t ws_lengths_offset; /* workspace: per-batch lengths as int32 (with q_lengths: (KV length, query tokens)
                                * pairs) */
    int64_t ws_lengths_bytes;
    int64_t ws_part_acc_offset; /* workspace: split partial accumulators, fp32 (B, N, S1, max_splits, D) */
    int64_t ws_part_m_offset;   /* split maxima, fp32 (B, N, S1, max_splits) */
    int64_t ws_part_l_offset;   /* split sums, fp32 (B, N, S1, max_splits) */
    int64_t ws_table_offset;    /* paged: the block table as int32 (B, table_cols), uploaded by run */
    int64_t ws_table_bytes;
    int64_t ws_prefix_offset;   /* IFA_SPLIT_BALANCED: int64 cost position of each batch's first block, B + 1 values;
                                 * the partials are then indexed by slot (2 per unit) x heads_per_group x S1 */
    int64_t ws_rope_offset;     /* rope: each batch's first query position (int64, B), then with rope_theta the
                                 * inverse frequencies as float pairs (hi, lo), rope_dim / 2 of them */
    int64_t ws_rope_bytes;
    /* the cv template (template_id IFA_TEMPLATE_CV): E = cv_entries (batch, KV head, split) blocks, each with
     * M = cv_rows query rows (G x S1), walking its KV rows in cv_steps chunks of chunk_rows rows. Per chunk a
     * gather kernel writes the chunk's K and V rows as fp32 (E, chunk_rows, D) tiles, CLBlast computes the
     * scores (E, M, chunk_rows) = Q x K^T, a vector kernel turns them into probabilities and rescales the
     * accumulators, and CLBlast adds P x V into them; ifa_combine.cl finishes. The accumulators, maxima and
     * sums use ws_part_acc/m/l, indexed by entry and row. */
    int64_t cv_entries;
    int32_t cv_rows;
    int32_t cv_steps;
    int32_t cv_work_group_size; /* work-items per row of the cv softmax kernel */
    int32_t kv_heads_per_group; /* all_vector: adjacent KV heads one work-group holds (BSH/BSND on CPUs, so that it
                                 * reads whole runs of a position's heads instead of one head's slice of each row);
                                 * its query heads are kv_heads_per_group x G, heads_per_group counts them all */
    int32_t prefetch_rows;      /* all_vector, vector shape: key rows the kernel prefetches ahead (0: none) */
    int32_t vector_loads;       /* all_vector, work-group shape: 8 (K/V read 8 elements per load, P.V work-items own
                                 * (query row, 8 columns) slices) or 0 (one element per load) */
    int32_t vector_registers;   /* all_vector, vector shape: the register file the tiles below are sized for (32 on
                                 * AVX-512 CPUs and 4-lane SIMD, 16 on AVX2; 0 in the work-group shape) */
    int32_t score_rows;         /* all_vector, vector shape: query rows per register tile of the four-key-row score
                                 * step (4 x score_rows accumulators; 1 to 4, 0 in the work-group shape) */
    int32_t batch_fast;         /* all_vector without balanced units: 1 lays the grid out batch first (dimension 0
                                 * the batch, 1 the block), 0 block first */
    int32_t pv_prefetch;        /* all_vector, vector shape with prefetch_rows > 0: 1 where P.V also asks for the next
                                 * chunk's key lines while it reads the chunk's values, 0 not */
    int32_t prefix_pv_prefetch; /* the same for the shared prefix pass */
    int32_t spread_prefetch;    /* all_vector with kv_heads_per_group > 1 and prefetch_rows > 0: 1 where each KV
                                 * head's register tiles ask for their share of a four-key-row step's K and V
                                 * lines, 0 where the step asks for the whole rows first */
    int32_t key_tile;           /* all_vector with vector_loads and 16-bit or int8 K/V: 1 where each chunk's key rows
                                 * are copied into local memory in 16-byte loads first and values load 8 at a time
                                 * in one load (the kernel falls back to 8-element loads where an offset or stride
                                 * of K/V is not a multiple of 16 bytes), 0 not */
    int32_t lanes;              /* all_vector, work-group shape: key rows per lane group and step of the lane shape
                                 * (D / 8 work-items read a key and a value row 16 bytes each, reduce its dot
                                 * products among themselves and keep their own online softmax and 8 accumulator
                                 * columns in registers; the kernel falls back to scalar loads where a K/V offset or
                                 * stride is not a multiple of 16 bytes), 0 not */
    int32_t lane_prefetch;      /* with lanes: 1 where each step loads the next step's key and value rows before its
                                 * own arithmetic (twice the rows' registers, their latency behind the math), 0 not */
    int32_t lane_scores;        /* with lanes, query rows and lanes powers of two, rows <= D / 8 and rows x lanes >= 2:
                                 * 1 where a step's rows x lanes dot products are summed by a transposing butterfly
                                 * so that each work-item scores and exponentiates its share only (D / 8 lanes split
                                 * them; the probabilities and rescales reach every lane by a broadcast), 0 where
                                 * every lane sums, scores and exponentiates all of them */
    int32_t mma;                /* all_vector, work-group shape, 16-bit Q, 16-bit K/V or int8 with per-channel or
                                 * per-tensor scales, D a multiple of 32 (int8: 64) up to 128, D_v = D, at most 16
                                 * query rows: 1 where each warp of 32 work-items takes 16 key rows a step and
                                 * computes scores and P.V as warp matrix products (fp16 or bf16 inputs, fp32 sums;
                                 * the probabilities in two 16-bit parts); 2 the
                                 * same with the query's fragments read from local memory at each step and the
                                 * value rows loaded after the scores (fewer registers); 3 to 6 the transposed
                                 * shapes (docs/tiling.md); 7 the latent tile (DeepSeek's MLA: 16 query rows against 16
                                 * keys a step, D a multiple of 64, D_v of 256, a 16-bit query, 16-bit K/V or
                                 * one-byte K/V with per-tensor scales or none); 0 not */
    int32_t lane_q_local;       /* with lanes: 1 where each step reads the query's columns from local memory instead
                                 * of holding them in registers (8 per query row a lane: fewer registers, more
                                 * work-groups a multiprocessor); with mma 3, 5 or 6 up to D = 128 where the query
                                 * enters as two parts (tuning mma_q_local): 1 where its operand words are in local
                                 * memory, read at each step; 0 not */
    int32_t fused_combine;      /* equal splits with partial rowmax, or balanced units none of whose stretches is
                                 * empty (total_cost >= units); no cascade, no per-batch query tokens: 1 where the
                                 * last split (piece) of each (batch, block) to finish combines the block's rows itself
                                 * (no combine kernel; a counter per block, kept by the context per in-order queue;
                                 * runs on an out-of-order queue launch the combine kernel), 0 not */
    int32_t combine_counters;   /* with fused_combine: the counters a run uses, batch x blocks (0 without) */
    int32_t mma_cvt;            /* with mma and e4m3fn K/V: 1 where each pair of bytes becomes an fp16 pair by the
                                 * device's own conversion instruction (NVIDIA from sm_89: cvt.rn.f16x2.e4m3x2; the
                                 * integer path elsewhere), 0 the integer path everywhere */
    int32_t reserved0;          /* 0. The last 32-bit field before the 64-bit ones (no hidden padding:
                                 * tiling/plan_layout.c) */
    int64_t ws_cv_q_offset;     /* the rotated query as fp32 (E, M, D), one copy per entry */
    int64_t ws_cv_k_offset;     /* the chunk's keys as fp32 (E, chunk_rows, D) */
    int64_t ws_cv_v_offset;     /* the chunk's values as fp32 (E, chunk_rows, D) */
    int64_t ws_cv_s_offset;     /* scores, then probabilities, fp32 (E, M, chunk_rows) */
    int64_t workspace_bytes;   /* total workspace run needs */
} ifa_plan;

#endif
