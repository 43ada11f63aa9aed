/* The fused kernel's shapes: each shape's rule (the problems and query rows it runs), the local memory it adds,
 * and the ordered choice among them, each candidate saying whether it applies and why. docs/tiling.md's table of
 * shapes says what each does and when the tuning rows take it. Pure C, no OpenCL. */
#ifndef IFA_TILING_KERNEL_SHAPE_H
#define IFA_TILING_KERNEL_SHAPE_H

#include "ifa/plan.h"
#include "tiling/device_facts.h"
#include "tiling/tuning_table.h"

/* The candidates in the order the planner weighs them (ifa_kernel_shape values; the first that applies is taken). */
#define IFA_SHAPE_CANDIDATES 8

typedef struct ifa_shape_candidate {
    int32_t shape;      /* ifa_kernel_shape */
    int32_t applicable; /* 1: the tuning row asks for it and it runs the plan's rows in the device's local memory */
    int32_t chosen;     /* 1: the plan takes it (the first applicable candidate) */
    char reason[160];   /* why it does (not) apply, for ifa-tiling and IFA_VERBOSE */
} ifa_shape_candidate;

/* The name of shape (ifa_kernel_shape) as the tiling key's shape digit, ifa-tiling and IFA_VERBOSE print it, or "?". */
const char *ifa__shape_name(int32_t shape);

/* The shape a plan's fields describe: vector_width > 1 the vector shape; else by mma (7 the latent tile, 3 to 6
 * the transposed matrix shape, 1 and 2 the matrix shape), lanes, key_tile, vector_loads, else the work-group
 * shape; IFA_SHAPE_NONE for the cv template. */
int32_t ifa__shape_of(const ifa_plan *plan);

/* Chooses the fused kernel's shape for an all_vector plan whose vector_width, kv_heads_per_group,
 * heads_per_group, work_group_size and chunk_rows are set, and sets the shape's fields (shape, mma, mma_cvt,
 * lanes, lane_prefetch, lane_scores, lane_q_local, key_tile, vector_loads). budget: the local memory the
 * work-group may use; base: what its rows take without the shape's own (ifa__all_vector_local_bytes). When out is
 * not NULL it receives the IFA_SHAPE_CANDIDATES candidates in order. */
void ifa__shape_choose(const ifa_problem *p, const ifa_device_facts *dev, const ifa_tuning *t, int64_t budget,
                       int64_t base, ifa_plan *plan, ifa_shape_candidate out[IFA_SHAPE_CANDIDATES]);

/* The local memory plan's shape adds to its rows' (base) at the plan's rows and work-group on dev; the latent tile
 * replaces base by its own. */
int64_t ifa__shape_local_bytes(const ifa_problem *p, const ifa_device_facts *dev, const ifa_plan *plan, int64_t base);

/* Whether the plan's shape fields are what ifa__shape_choose may set for its problem and rows (the kernel refuses to
 * build otherwise): 1 or 0. */
int ifa__shape_consistent(const ifa_plan *plan);

/* The most query rows (x the lane shape's chunks of columns) a lane-shape work-group holds: 8 with the query's
 * columns in registers, 16 with them read from local memory (q_local). */
int64_t ifa__lane_rows_most(int q_local);
/* The lane shape's chunks of 8 key columns per lane at p's D (1 up to D = 256, 2 at 512, 3 at MLA's 576). */
int64_t ifa__lanes_chunks(const ifa_problem *p);
/* Whether the lane shape runs rows query rows of p in groups of wg at lanes key rows a step (q_local: the query may
 * be read from local memory). */
int ifa__lanes_fit(const ifa_problem *p, int64_t rows, int64_t wg, int64_t lanes, int q_local);
/* The matrix shape the tuning's mma (t_mma) gives rows query rows of p in groups of wg: 3 to 5 the transposed shape,
 * 1 or 2 the other, 0 none. */
int32_t ifa__mma_shape(const ifa_problem *p, int32_t t_mma, int64_t rows, int64_t wg);
/* Whether the tuning row asks for a matrix shape for p's K/V type (mma and the type's own setting). */
int ifa__mma_wanted(const ifa_problem *p, const ifa_tuning *t);
/* Whether the latent tile takes p at rows query rows a group of wg (vw: the vector width, mh: KV heads a group) within
 * budget bytes of local memory on dev. */
int ifa__mla_tile_takes(const ifa_problem *p, const ifa_tuning *t, const ifa_device_facts *dev, int64_t rows, int64_t wg,
                        int64_t vw, int64_t mh, int64_t budget);
/* Whether the tuning row asks for the latent tile for p and p is what it is for (keys wider than 256 columns or a
 * value narrower than the key) at its own S1 rows. */
int ifa__mla_tile_wanted(const ifa_problem *p, const ifa_tuning *t, int64_t wg, int64_t vw, int64_t mh);

/* The lane shape's work-items per key row at head_dim (> 0): head_dim / 8 up to the next power of two (the kernel's
 * IFA_LN; the lanes past head_dim / 8 load nothing). */
int64_t ifa__lanes_per_row(int64_t head_dim);

/* What 8-wide loads with the key tile add (instead of ifa__vector_loads_local_bytes): a chunk's key rows of
 * head_dim elements of kv_bytes each (2, or 1 for int8), padded by 16 bytes each (P.V's accumulators stay in
 * registers and are summed through the same memory at the end). */
int64_t ifa__key_tile_local_bytes(int64_t head_dim, int64_t kv_bytes, int64_t chunk_rows);

/* What 8-wide loads add (P.V's accumulator slices over value_dim) for rows query rows in a group of
 * work_group_size. */
int64_t ifa__vector_loads_local_bytes(int64_t rows, int64_t value_dim, int64_t work_group_size);

/* The local memory the lane shape adds to a work-group of work_group_size work-items with rows query rows at
 * head_dim and lanes rows per lane group and step: each group's maxima and sums, and without shuffles (shuffles
 * 0: every device but NVIDIA's) the partial dot products of a step. */
int64_t ifa__lanes_local_bytes(int64_t rows, int64_t head_dim, int64_t work_group_size, int64_t lanes, int shuffles);

/* The local memory of the latent tile (plan->mma 7) for rows query rows of head_dim and value_dim in a group of
 * work_group_size work-items (matrix_instructions: NVIDIA's, else each warp's scratch for the products;
 * q_two_parts: the query in two parts, RoPE's or another 16-bit type's), without RoPE's angles. */
int64_t ifa__mla_tile_local_bytes(int64_t rows, int64_t head_dim, int64_t value_dim, int64_t work_group_size,
                                  int matrix_instructions, int q_two_parts);

/* The local memory the matrix shape (plan->mma) adds to a work-group of work_group_size work-items with rows query
 * rows: each warp's maxima and sums, and without matrix instructions (matrix_instructions 0: every device but
 * NVIDIA's) each warp's scratch through which its products go. */
int64_t ifa__mma_local_bytes(int64_t rows, int64_t work_group_size, int matrix_instructions);
/* The local memory of the matrix shapes' query operand words where the plan keeps them there (lane_q_local with
 * mma): two parts, at most 8 rows, D / 16 steps, 4 lanes a row, 8 bytes each. */
int64_t ifa__mma_q_local_bytes(int64_t head_dim);

#endif
