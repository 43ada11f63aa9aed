/* The plan: everything get_workspace_size decided, as plain fixed-width integers (no pointers), so it can
 * be copied, stored, dumped as JSON and reused for every run with the same arguments. Included by ifa.h. */
#ifndef IFA_PLAN_H
#define IFA_PLAN_H

#include <stdint.h>

#define IFA_PLAN_MAGIC 0x31414649u /* "IFA1" read as little-endian bytes */
#define IFA_PLAN_VERSION 27u

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

/* The fused kernel's shapes (the plan's shape and the tiling key's shape digit; docs/tiling.md's table of shapes). */
typedef enum ifa_kernel_shape {
    IFA_SHAPE_NONE = 0,        /* the cv template: no fused kernel */
    IFA_SHAPE_VECTOR = 1,      /* CPUs: one work-item a work-group, register tiles of vector_width floats */
    IFA_SHAPE_WORK_GROUP = 2,  /* a work-item a key row, then a value column; one element a load */
    IFA_SHAPE_WIDE_LOADS = 3,  /* the work-group shape reading 8 elements a load (vector_loads) */
    IFA_SHAPE_KEY_TILE = 4,    /* 8-element loads with each chunk's key rows copied into local memory (key_tile) */
    IFA_SHAPE_LANES = 5,       /* D / 8 work-items a key row, 16 bytes each; an online softmax per lane group */
    IFA_SHAPE_MATRIX = 6,      /* warp matrix products, the query rows their 16-row side (mma 1, 2) */
    IFA_SHAPE_MATRIX_T = 7,    /* warp matrix products, keys and value columns their 16-row side (mma 3 to 6) */
    IFA_SHAPE_LATENT_TILE = 8, /* MLA: 16 query rows against 16 keys a step, 4 warps sharing the columns (mma 7) */
    IFA_SHAPE_COUNT_
} ifa_kernel_shape;

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

/* Field flags of include/ifa/plan_fields.h, the one list of the plan's fields (what each means is said there). */
#define IFA_FIELD_STEP 1
#define IFA_FIELD_ARRAY 2
#define IFA_FIELD_BOOL 4
#define IFA_FIELD_PAD 8

/* The call a plan was made for, reduced to integers. run recomputes it from its arguments and refuses a
 * plan whose problem differs (PLAN_MISMATCH). Its fields: include/ifa/plan_fields.h. */
typedef struct ifa_problem {
#define IFA_PROBLEM_FIELD(type, name, flags, doc) type name;
#include "ifa/plan_fields.h"
#undef IFA_PROBLEM_FIELD
} ifa_problem;

/* Everything get_workspace_size decided. Its fields after the frame: include/ifa/plan_fields.h. */
typedef struct ifa_plan {
    uint32_t magic;   /* IFA_PLAN_MAGIC */
    uint32_t version; /* IFA_PLAN_VERSION */
    uint64_t tiling_key;
    ifa_problem problem;
#define IFA_PLAN_FIELD(type, name, flags, doc) type name;
#include "ifa/plan_fields.h"
#undef IFA_PLAN_FIELD
} ifa_plan;

#endif
