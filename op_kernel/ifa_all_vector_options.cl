/* The all-vector kernel's build options: their defaults, what they derive and the checks that span its shapes.
 * Each kernel shape's program is one text from several files, in this order (templates/all_vector.c's
 * ifa__all_vector_program): ifa_formulas.h, ifa_common.cl, ifa_kernel_args.h, this file, ifa_all_vector_mma.cl (the
 * matrix shapes), ifa_all_vector_gpu.cl (the lane shape, the key tile and what the GPU shapes share),
 * ifa_all_vector_cpu.cl (vectors along D and the CPU shape's tiles and prefetches), ifa_attention.cl (what the
 * kernels share at file scope) and the shape's kernel, ifa_attention_<shape>.cl, whose body includes
 * ifa_attention_begin.clh and ifa_attention_end.clh (and the matrix shapes' ifa_attention_matrix.clh). A file may use
 * what the files before it define.
 *
 * Build options (-D): Q_T, KV_T, O_T dtype codes (ifa_common.cl); HEAD_DIM; VDIM (D_v: the value columns
 * read per row and the output's head dimension, <= HEAD_DIM; multi-head latent attention reads the first 512
 * of 576); WG work-items per group; VW vector width along D (divides HEAD_DIM and VDIM; 1 = scalar); PV_RB
 * query rows x XB vectors per P.V register block; CHUNK rows per chunk (a multiple of WG); GT heads per
 * group; SQ query tokens; CAUSAL 0/1; HAS_LSE 0/1; SPLIT 0/1; ROWMAX 1/2; MAX_PASS 0/1; BALANCED 0/1; BATCH_FAST 0/1 (the grid's order); HAS_MASK 0/1; HAS_PSE 0/1; HAS_ALIBI 0/1; SOFTCAP 0/1;
 * HAS_PAD 0/1; QLEN 0/1 (per-batch query tokens, ifa_common.cl's IFA_QLEN: rows past a batch's tokens are
 * padding, never read, seeing nothing); ROPE 0-2, ROPE_DIM, ROPE_OFF, ROPE_TAB 0/1 (rotary query, ifa_common.cl);
 * MH KV heads per work-group (adjacent heads of BSH/BSND, vector shape, no antiquant or cascade: query head
 * g of the block belongs to its KV head g / G), GSQ = G x SQ, RB_MH rows per register tile with MH > 1;
 * PREFETCH key rows to prefetch ahead (0: none; clang-based compilers, the vector shape), PV_PREFETCH 0/1 (P.V
 * also asks for the next chunk's keys), SPREAD_PF 0/1 (with MH > 1: the heads' tiles share out a step's
 * prefetches);
 * V8 0/1 (8-wide loads); PAGED 0/1; ANTIQUANT, VAQ 0-5 (the key's and the value's ifa_antiquant), AQ_T/VAQ_T
 * scale dtype codes, AQ_OFF/VAQ_OFF 0/1 (ifa_common.cl); QUANT_OUT 0-2, Q2_T, Q2_OFF
 * (int8 output, ifa_common.cl); PREFIX 0/1 (the shared-prefix pass: virtual heads gv = batch * G + head of
 * every batch share one pass over the prefix and write partial slot 0; needs SPLIT=1); PREFIX_SLOTS 0/1 (the
 * main pass of a cascade writes its splits after the prefix's slot); SINK 0/1 (sinks in the final
 * normalisation of a whole row, ifa_common.cl; split rows get theirs in the combine). Offsets and strides are in
 * elements, so the three layouts share one binary. */

#ifndef ROWMAX
#define ROWMAX 1
#endif
#ifndef MAX_PASS
#define MAX_PASS 0
#endif
#ifndef BALANCED
#define BALANCED 0
#endif
/* BATCH_FAST 1: the grid's dimension 0 is the batch and 1 the block (PoCL deals contiguous runs of work-groups
 * to its threads, so a run then holds a share of every batch, not whole batches of uneven lengths) */
#ifndef BATCH_FAST
#define BATCH_FAST 0
#endif
#ifndef PREFIX
#define PREFIX 0
#endif
#ifndef PREFIX_SLOTS
#define PREFIX_SLOTS 0
#endif
/* FUSED 1 (with SPLIT or BALANCED, partial rowmax, no cascade, no per-batch query tokens): the block's last split
 * to finish combines the block's rows itself (no combine kernel). Each active split adds one to the block's
 * counter, cnt[cnt_off + b * blocks + blk], after its partials: the one that sees the count reach the block's
 * splits knows every partial is written, combines, and sets the counter back to 0 for the next run (so the
 * counters must start at 0 and no two runs may use them at once: the host gives each in-order queue its own).
 * With BALANCED a block's splits are the pieces of the units that cut it, each of which writes one partial; they
 * partition the block's cost positions, so each adds its own count of them and the one that brings the counter to
 * the block's cost is the last (no unit needs the block's piece count, which takes two searches over the units;
 * the last finds its pieces' slots then). The planner fuses only where no unit's stretch is empty (total_cost >=
 * units: the slots between the block's first and last unit all hold pieces) and a block's cost fits the int
 * counter. */
#ifndef FUSED
#define FUSED 0
#endif
#if FUSED && (!(SPLIT || BALANCED) || ROWMAX != 1 || MAX_PASS || PREFIX || PREFIX_SLOTS || QLEN)
#error "FUSED needs SPLIT or BALANCED with partial rowmax, no cascade and no per-batch query tokens"
#endif
#ifndef VW
#define VW 1
#endif
#ifndef XB
#define XB 1
#endif
#define IFA_GLOBAL_MAX (SPLIT && ROWMAX == 2 && !MAX_PASS)
#define R (GT * SQ)
#define DV (HEAD_DIM / VW)
#define DVV (VDIM / VW) /* value vectors per row */
#ifndef MH
#define MH 1
#endif
#ifndef V8
#define V8 0
#endif
#ifndef LANES
#define LANES 0
#endif
/* one-byte K/V (int8, float8): 16 elements a 16-byte load, 4 a word */
#define IFA_KV1 (KV_T == IFA_I8 || KV_T == IFA_E4M3 || KV_T == IFA_E5M2)
/* the key's per-channel or per-tensor scale folded into the query (qs); the matrix shapes scale their scores by a
 * per-tensor one instead (IFA_SCORE_BASE), so that the query enters their products as its stored value, one part
 * (IFA_MMA_QLO) */
#define IFA_AQ_FOLD (ANTIQUANT == 1 || (ANTIQUANT == 2 && !MMA))
#ifndef MMA
#define MMA 0
#endif
#ifndef MMA_AL
#define MMA_AL 0
#endif
/* work-items per query row in the softmax: the work-group shape on GPUs spreads each row's chunk over
 * WG / R work-items (capped at 32) instead of leaving the chunk to one work-item per row (the lane shape has no
 * softmax phase) */
#if VW == 1 && WG >= 2 * R && !LANES && !MMA
#define IFA_TPR (WG / R > 32 ? 32 : WG / R)
#else
#define IFA_TPR 1
#endif
#ifndef KTILE
#define KTILE 0
#endif
#if V8
#if VW != 1 || KV_T == IFA_I4 || HEAD_DIM % 8 != 0 || VDIM % 8 != 0 || (KTILE ? VDIM / 8 > WG || R > 16 : R * (VDIM / 8) > WG)
#error "8-wide loads need VW = 1, no int4, D and D_v multiples of 8 and R x D_v / 8 <= WG (the key tile: D_v / 8 <= WG, R <= 16)"
#endif
#define IFA_XL (VDIM / 8)            /* work-items across one query row's D_v in P.V */
#if KTILE
#define IFA_ZV (WG / IFA_XL)         /* groups of them, each its own chunk rows of every query row */
#else
#define IFA_ZV (WG / (IFA_XL * R))   /* groups of them, each its own chunk rows */
#endif
#define IFA_L8(c, p, i) IFA_NLOAD(c, 8, p, i)
#endif
#if V8 || LANES
inline float ifa_dot8(float8 a, float8 b) { return dot(a.lo, b.lo) + dot(a.hi, b.hi); }
#endif
#ifndef IFA_NV
#define IFA_NV 0
#endif
/* z = 0 where the compiler cannot see it (an asm result on NVIDIA): an offset that keeps local-memory loads in a
 * loop from being hoisted out of it into the registers they are meant to save (lane_q_local, the lean matrix
 * shape) */
#if IFA_NV
#define IFA_QZERO(z) asm volatile("mov.u32 %0, 0;" : "=r"(z))
#else
#define IFA_QZERO(z) (z) = 0u
#endif
#ifndef LANE_PF
#define LANE_PF 0
#endif
#ifndef LANE_SC
#define LANE_SC 0
#endif
#ifndef F8CVT
#define F8CVT 0
#endif
#ifndef LANE_QL
#define LANE_QL 0
#endif
