/* Internal: the rotary-position-embedding attributes both ops take (IncreFlashAttention rotates the query,
 * KVCacheAppend the new keys): their validation, positions and inverse frequencies. docs/rope.md. */
#ifndef IFA_OP_HOST_COMMON_ROPE_H
#define IFA_OP_HOST_COMMON_ROPE_H

#include "ifa/ifa.h"

/* Positions must stay exact in float32 (the kernels compute angles from a float position). */
#define IFA_MAX_ROPE_POSITION (1LL << 24)

/* The rope attributes of either op's args. */
typedef struct ifa__rope_view {
    const char *mode;
    double theta;
    int64_t dim;
    const int64_t *positions;
    int64_t positions_count;
    const ifa_tensor *cos, *sin;
    int64_t offset;
} ifa__rope_view;

/* What the checks found: mode (ifa_rope_mode), the rotated dims, theta (10000 when 0 was given), whether the
 * tables replace theta, their rows, and the first rotated dim. */
typedef struct ifa__rope_info {
    int32_t mode, table;
    int64_t dim, table_rows;
    double theta;
    int64_t offset;
} ifa__rope_info;

/* Checks the attributes for a head dimension of head_dim and batch rows and fills *info (mode NONE when
 * off). Positions are not looked at: ifa__rope_check_positions does that. */
ifa_status ifa__rope_check(const ifa__rope_view *v, int64_t batch, int64_t head_dim, ifa__rope_info *info);

/* The ops' default positions: batch b's length (lengths[b], lengths[0] when count is 1, fallback when lengths
 * is NULL) minus shift, or minus its own token count when shift_by_tokens. tokens (tokens[b], tokens[0] when
 * tokens_count is 1), when set, is each batch's count of positions checked instead of the call's. */
typedef struct ifa__rope_default {
    const int64_t *lengths;
    int64_t count, fallback, shift;
    const char *what; /* names the default in messages ("actual_seq_lengths - S1") */
    const int64_t *tokens;
    int64_t tokens_count;
    int shift_by_tokens;
} ifa__rope_default;

/* Checks each batch's first position (rope_positions[b], else the default) and its span of tokens positions:
 * non-negative, below 2^24 and within the tables' rows. Fills first (batch values) when not NULL. */
ifa_status ifa__rope_check_positions(const ifa__rope_view *v, const ifa__rope_info *info, int64_t batch,
                                     const ifa__rope_default *dflt, int64_t tokens, int64_t *first);

/* The inverse frequencies theta^(-2i/dim), i < dim/2, each as two floats (hi, lo) whose sum is the float64
 * value to about 2^-48: the kernels reduce pos * (hi + lo) modulo 2 pi without losing the angle at large
 * positions. out holds dim floats. */
void ifa__rope_freqs(const ifa__rope_info *info, float *out);

#endif
