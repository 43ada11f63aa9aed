/* Random legal IncreFlashAttention cases for soak runs (ifa-soak): from a seed alone, the JSON text ifa-run
 * reads (docs/case-format.md) and the IFA_TUNING string to run it under, so that any case a soak run draws
 * can be written out and replayed with `IFA_TUNING=... ifa-run CASE.json --check`. The draw combines the
 * op's features (layouts, dtypes, GQA, lengths with zeros, paging, padding, masks, biases, ALiBi, soft-cap,
 * windows, sinks, antiquant modes, float8, int8 output, RoPE, shared prefix, multi-token queries, both
 * templates) and the planner's knobs (split modes, chunk sizes, the GPU work-group shapes), keeping only
 * combinations the op accepts. */
#ifndef IFA_TOOLS_RANDOM_CASE_H
#define IFA_TOOLS_RANDOM_CASE_H

#include <stddef.h>
#include <stdint.h>

typedef struct ifa_random_case {
    char *json;        /* malloc'd case text */
    char tuning[1280]; /* IFA_TUNING for the run ("" for the device's own row) */
    char facts[256];   /* IFA_DEVICE_FACTS for the run ("" for the device's own facts) */
    char summary[256]; /* the draw in one line: layout, dtypes, shape and the features it has */
    int buffer_create; /* 1: run with key and value in ifa_buffer_create's buffers (ifa-run --buffer-create) */
    int far_kv;        /* 1: key and value (an append's caches) at the end of the largest buffer the device allocates
                        * (ifa-run --far-kv; over buffer_create) */
} ifa_random_case;

/* Draws case `seed`. Returns 0, or -1 when out of memory. */
int ifa_random_case_make(uint64_t seed, ifa_random_case *out);

/* As ifa_random_case_make, with a share wide_share (0 to 1) of the cases past 256 columns (D = 512, or DeepSeek's
 * MLA: 576, the value its first 512), where ifa_random_case_make draws 0.05 (and then the same cases): the GPU
 * shapes' wide rows and the latent tile (ifa-soak --wide). The share's own draw leaves the rest of a case's draw as
 * it is. */
int ifa_random_case_make_wide(uint64_t seed, double wide_share, ifa_random_case *out);

/* Draws a random legal KVCacheAppend case `seed` (a generic registry case, docs/case-format.md): layouts,
 * source and cache dtypes (float, int8, int4, float8 with or without scales, asymmetric offsets),
 * contiguous or paged caches with shuffled blocks, key-only appends, RoPE (both modes, partial dims, explicit
 * positions, tables) and the append's GPU work-group shapes. 0, or -1 when out of memory. */
int ifa_random_append_case_make(uint64_t seed, ifa_random_case *out);

/* Draws a random legal MergeAttentionStates case `seed`: 1 to 33 parts, 0 to 2 row dimensions, D from 1 to
 * 576, float16/bfloat16/float32 outputs and another output dtype, LSEs close or far apart, with or without
 * the merged LSE. 0, or -1 when out of memory. */
int ifa_random_merge_case_make(uint64_t seed, ifa_random_case *out);

/* Draws, for case `seed`, values of the planner's knobs that ifa_random_case_make leaves at the device row's (the
 * vector shape's prefetches, P.V blocks, all-heads chunks and width, the balance, cv's and the combine's shapes)
 * into out as IFA_TUNING entries to add after the case's own `tuning` (whose vector_width, where it has one, is
 * kept). From a generator of their own: the case is the same with or without them. 0, or -1 when out (n bytes)
 * is too small. */
int ifa_random_tuning_knobs(uint64_t seed, const char *tuning, char *out, size_t n);

/* Frees the text. */
void ifa_random_case_free(ifa_random_case *c);

#endif
