/* The one list of the plan's fields, read by X-macros: IFA_PROBLEM_FIELD(type, name, flags, doc) rows make struct
 * ifa_problem, IFA_PLAN_FIELD(type, name, flags, doc) rows make struct ifa_plan after its frame (magic, version,
 * tiling_key and the problem), in this order (the structs' layout: no padding the compiler adds unseen, a PAD
 * field closes a gap; tiling/plan_layout.c). The same rows make run's comparison of a call with its plan
 * (op_host/ifa/ifa_api.c), the plan check's per-field rules (tiling/planner.c), the plan domain's build signature
 * (tiling/plan_domain.c) and ifa-tiling's JSON; a field is added here and nowhere else (and IFA_PLAN_VERSION
 * bumped). Flags:
 *   IFA_FIELD_STEP   the step's own sizes and lengths or a layout derived from them (offsets, counts): not part of
 *                    the kernels' build, so zero in the plan domain's signature
 *   IFA_FIELD_ARRAY  a hash of a host array, which run compares with a message naming the array (in doc)
 *   IFA_FIELD_BOOL   0 or 1 (the plan check refuses any other value)
 *   IFA_FIELD_PAD    padding, always 0 (checked; neither compared nor dumped)
 * No include guard on purpose: each use defines the row macros it reads (an undefined one reads nothing). */
#ifndef IFA_PROBLEM_FIELD
#define IFA_PROBLEM_FIELD(type, name, flags, doc)
#define IFA__UNDEF_PROBLEM_FIELD
#endif
#ifndef IFA_PLAN_FIELD
#define IFA_PLAN_FIELD(type, name, flags, doc)
#define IFA__UNDEF_PLAN_FIELD
#endif

/* ifa_problem: the call a plan was made for, reduced to integers */
IFA_PROBLEM_FIELD(int64_t, batch, IFA_FIELD_STEP, "B")
IFA_PROBLEM_FIELD(int64_t, num_heads, 0, "N")
IFA_PROBLEM_FIELD(int64_t, num_kv_heads, 0, "N_kv")
IFA_PROBLEM_FIELD(int64_t, head_dim, 0, "D")
IFA_PROBLEM_FIELD(int64_t, seq_q, 0, "S1, query tokens per batch, 1 to 16")
IFA_PROBLEM_FIELD(int64_t, seq_kv, IFA_FIELD_STEP, "S_kv: the key tensor's sequence dimension; paged: "
    "block_table_cols x block_size")
IFA_PROBLEM_FIELD(int32_t, layout, 0, "ifa_layout")
IFA_PROBLEM_FIELD(int32_t, q_dtype, 0, "ifa_dtype of query")
IFA_PROBLEM_FIELD(int32_t, kv_dtype, 0, "ifa_dtype of key and value")
IFA_PROBLEM_FIELD(int32_t, out_dtype, 0, "ifa_dtype of attention_out")
IFA_PROBLEM_FIELD(int32_t, has_lse, IFA_FIELD_BOOL, "1 if softmax_lse is written")
IFA_PROBLEM_FIELD(int32_t, lengths_mode, 0, "ifa_lengths_mode")
IFA_PROBLEM_FIELD(int64_t, uniform_length, IFA_FIELD_STEP, "the length when lengths_mode != PER_BATCH (0 where kv "
    "padding empties it)")
IFA_PROBLEM_FIELD(int64_t, max_length, IFA_FIELD_STEP, "the most KV rows one (batch, KV head) block reads "
    "(ifa__kv_span)")
IFA_PROBLEM_FIELD(int64_t, total_length, IFA_FIELD_STEP, "KV rows read per KV head, summed over batches")
IFA_PROBLEM_FIELD(uint64_t, lengths_hash, IFA_FIELD_STEP | IFA_FIELD_ARRAY,
    "FNV-1a of actual_seq_lengths (the per-batch lengths, PER_BATCH), else 0")
IFA_PROBLEM_FIELD(uint32_t, scale_bits, 0, "scale_value as float32 bits")
IFA_PROBLEM_FIELD(uint32_t, softcap_bits, 0, "softcap as float32 bits, 0 = off")
IFA_PROBLEM_FIELD(int64_t, window, 0, "sliding window in key positions, 0 = off")
IFA_PROBLEM_FIELD(int32_t, causal, IFA_FIELD_BOOL, "1: query token i of S1 sees positions < len - S1 + 1 + i (S1 > "
    "1, no per-token mask)")
IFA_PROBLEM_FIELD(int32_t, mask_kind, 0, "ifa_mask_kind")
IFA_PROBLEM_FIELD(int64_t, mask_batch, IFA_FIELD_STEP, "atten_mask's batch dimension (>= B)")
IFA_PROBLEM_FIELD(int64_t, mask_len, IFA_FIELD_STEP, "atten_mask's last dimension (>= max visible length)")
IFA_PROBLEM_FIELD(int32_t, pse_kind, 0, "ifa_pse_kind")
IFA_PROBLEM_FIELD(int32_t, has_kv_padding, IFA_FIELD_BOOL, "1 if kv_padding_size was given")
IFA_PROBLEM_FIELD(int64_t, pse_len, IFA_FIELD_STEP, "pse_shift's last dimension")
IFA_PROBLEM_FIELD(int64_t, kv_padding, IFA_FIELD_STEP, "kv_padding_size")
IFA_PROBLEM_FIELD(int32_t, paged, IFA_FIELD_BOOL, "1: key/value are a pool of blocks addressed through block_table")
IFA_PROBLEM_FIELD(int32_t, template_request, 0, "template_mode: 0 auto (the planner chooses), else the ifa_template "
    "asked for")
IFA_PROBLEM_FIELD(int64_t, block_size, 0, "paged: rows per block")
IFA_PROBLEM_FIELD(int64_t, table_cols, IFA_FIELD_STEP, "paged: block_table's second dimension (blocks per sequence)")
IFA_PROBLEM_FIELD(int64_t, pool_blocks, IFA_FIELD_STEP, "paged: blocks in the key/value pool")
IFA_PROBLEM_FIELD(int32_t, antiquant, 0, "ifa_antiquant of the key's scales")
IFA_PROBLEM_FIELD(int32_t, aq_dtype, 0, "ifa_dtype of the key's scale (and offset)")
IFA_PROBLEM_FIELD(int32_t, aq_offset, IFA_FIELD_BOOL, "1 if the key has offsets")
IFA_PROBLEM_FIELD(int32_t, quant_out, 0, "int8 output: 0 off, 1 per-tensor quant_scale2, 2 per-channel")
IFA_PROBLEM_FIELD(int32_t, q2_dtype, 0, "ifa_dtype of quant_scale2 (and quant_offset2)")
IFA_PROBLEM_FIELD(int32_t, q2_offset, IFA_FIELD_BOOL, "1 if quant_offset2 is given")
IFA_PROBLEM_FIELD(int32_t, has_prefix, IFA_FIELD_BOOL, "1 with key_shared_prefix / value_shared_prefix")
IFA_PROBLEM_FIELD(int32_t, has_sinks, IFA_FIELD_BOOL, "1 with sinks")
IFA_PROBLEM_FIELD(int64_t, prefix_seq, IFA_FIELD_STEP, "the prefix tensors' sequence dimension S_p")
IFA_PROBLEM_FIELD(int64_t, prefix_len, IFA_FIELD_STEP, "the prefix positions every batch sees "
    "(actual_shared_prefix_len)")
IFA_PROBLEM_FIELD(int64_t, aq_len, IFA_FIELD_STEP, "per-token modes: the scale's last dimension (positions; "
    "block_size for pages)")
IFA_PROBLEM_FIELD(int32_t, rope, 0, "ifa_rope_mode of the query")
IFA_PROBLEM_FIELD(int32_t, rope_table, IFA_FIELD_BOOL, "1: cos/sin from rope_cos/rope_sin, 0: from rope_theta")
IFA_PROBLEM_FIELD(int64_t, rope_dim, 0, "dims of D that rotate, from rope_offset")
IFA_PROBLEM_FIELD(uint64_t, rope_theta_bits, 0, "rope_theta as float64 bits (0 with tables)")
IFA_PROBLEM_FIELD(int64_t, rope_table_rows, IFA_FIELD_STEP, "rope_cos/rope_sin rows (positions they cover)")
IFA_PROBLEM_FIELD(int64_t, rope_offset, 0, "the first rotated dim (0: the leading rope_dim; DeepSeek's MLA: D - 64)")
IFA_PROBLEM_FIELD(int32_t, alibi, 0, "ifa_alibi_kind")
IFA_PROBLEM_FIELD(int32_t, value_dim, 0, "D_v: value columns read per row and the output's head dimension (head_dim "
    "unless value_head_dim)")
IFA_PROBLEM_FIELD(int32_t, q_lengths, IFA_FIELD_BOOL, "1 with actual_seq_lengths_q: per-batch query tokens, uploaded "
    "beside the KV lengths (the lengths are then PER_BATCH)")
IFA_PROBLEM_FIELD(int32_t, reserved1, IFA_FIELD_PAD, "0. The 4 bytes before q_lengths_hash, which the compiler would "
    "otherwise pad unseen (tiling/plan_layout.c)")
IFA_PROBLEM_FIELD(uint64_t, q_lengths_hash, IFA_FIELD_STEP | IFA_FIELD_ARRAY,
    "FNV-1a of actual_seq_lengths_q (the per-batch query tokens, q_lengths), else 0")
IFA_PROBLEM_FIELD(int32_t, aq_separate, IFA_FIELD_BOOL, "1: key_/value_antiquant_scale (their own tensors and "
    "modes), 0: antiquant_scale's (2, ...) form or none")
IFA_PROBLEM_FIELD(int32_t, v_antiquant, 0, "ifa_antiquant of the value's scales (antiquant when not aq_separate)")
IFA_PROBLEM_FIELD(int32_t, v_aq_dtype, 0, "ifa_dtype of the value's scale (and offset)")
IFA_PROBLEM_FIELD(int32_t, v_aq_offset, IFA_FIELD_BOOL, "1 if the value has offsets")
IFA_PROBLEM_FIELD(int64_t, v_aq_len, IFA_FIELD_STEP, "the value's aq_len")

/* ifa_plan: what get_workspace_size decided */
IFA_PLAN_FIELD(int32_t, template_id, 0, "ifa_template")
IFA_PLAN_FIELD(int32_t, work_group_size, 0, "work-items per work-group")
IFA_PLAN_FIELD(int32_t, chunk_rows, 0, "KV rows per inner block")
IFA_PLAN_FIELD(int32_t, heads_per_group, 0, "query heads held by one work-group (G when they fit in local memory)")
IFA_PLAN_FIELD(int32_t, head_groups, 0, "ceil(G / heads_per_group): passes over each (batch, KV head)")
IFA_PLAN_FIELD(int32_t, split_kv, 0, "ifa_split_mode")
IFA_PLAN_FIELD(int32_t, split_tokens, IFA_FIELD_STEP, "KV rows per split (a multiple of chunk_rows)")
IFA_PLAN_FIELD(int32_t, max_splits, IFA_FIELD_STEP, "splits of the longest batch; shorter batches leave later splits "
    "empty (a row's partials are prefix_slots + max_splits apart)")
IFA_PLAN_FIELD(int32_t, combine_work_group_size, 0, "work-items per work-group of the combine kernel")
IFA_PLAN_FIELD(int32_t, units, IFA_FIELD_STEP, "IFA_SPLIT_BALANCED: work-groups, each a balanced stretch of the cost "
    "line")
IFA_PLAN_FIELD(int32_t, block_cost_rows, 0, "IFA_SPLIT_BALANCED: what a (batch, KV head, head group) block costs "
    "besides its rows")
IFA_PLAN_FIELD(int32_t, load_ratio_milli, IFA_FIELD_STEP, "1000 x (busiest work-group's cost / mean cost over "
    "compute units), estimated")
IFA_PLAN_FIELD(int32_t, vector_width, 0, "floats per vector along D in the fused kernel (1: scalar work-group shape)")
IFA_PLAN_FIELD(int32_t, prefix_heads_per_group, 0, "shared prefix pass: (batch, query head) rows per work-group")
IFA_PLAN_FIELD(int32_t, prefix_head_groups, 0, "shared prefix pass: work-groups per KV head")
IFA_PLAN_FIELD(int32_t, prefix_slots, IFA_FIELD_BOOL, "1 with a shared prefix: partial slot 0 of each row is the "
    "prefix's")
IFA_PLAN_FIELD(int32_t, pv_block, 0, "vectors per P.V register block")
IFA_PLAN_FIELD(int32_t, prefix_pv_block, 0, "the same for the shared prefix pass (more rows per work-group)")
IFA_PLAN_FIELD(int32_t, pv_rows, 0, "all_vector, vector shape: query rows per P.V register block (pv_rows x pv_block "
    "accumulators; 1 to 8, 0 in the work-group shape)")
IFA_PLAN_FIELD(int32_t, prefix_pv_rows, 0, "the same for the shared prefix pass")
IFA_PLAN_FIELD(int64_t, total_cost, IFA_FIELD_STEP, "IFA_SPLIT_BALANCED: sum over blocks of (length + block_cost_rows)")
IFA_PLAN_FIELD(int64_t, local_mem_bytes, 0, "local memory one work-group uses")
IFA_PLAN_FIELD(int64_t, num_work_groups, IFA_FIELD_STEP, "work-groups launched")
IFA_PLAN_FIELD(int64_t, ws_lengths_offset, IFA_FIELD_STEP, "workspace: per-batch lengths as int32 (with q_lengths: "
    "(KV length, query tokens) pairs)")
IFA_PLAN_FIELD(int64_t, ws_lengths_bytes, IFA_FIELD_STEP, "its bytes")
IFA_PLAN_FIELD(int64_t, ws_part_acc_offset, IFA_FIELD_STEP, "workspace: split partial accumulators, fp32 (B, N, S1, "
    "max_splits, D)")
IFA_PLAN_FIELD(int64_t, ws_part_m_offset, IFA_FIELD_STEP, "split maxima, fp32 (B, N, S1, max_splits)")
IFA_PLAN_FIELD(int64_t, ws_part_l_offset, IFA_FIELD_STEP, "split sums, fp32 (B, N, S1, max_splits)")
IFA_PLAN_FIELD(int64_t, ws_table_offset, IFA_FIELD_STEP, "paged: the block table as int32 (B, table_cols), uploaded "
    "by run")
IFA_PLAN_FIELD(int64_t, ws_table_bytes, IFA_FIELD_STEP, "its bytes")
IFA_PLAN_FIELD(int64_t, ws_prefix_offset, IFA_FIELD_STEP, "IFA_SPLIT_BALANCED: int64 cost position of each batch's "
    "first block, B + 1 values; the partials are then indexed by slot (2 per unit) x heads_per_group x S1")
IFA_PLAN_FIELD(int64_t, ws_rope_offset, IFA_FIELD_STEP, "rope: each batch's first query position (int64, B), then "
    "with rope_theta the inverse frequencies as float pairs (hi, lo), rope_dim / 2 of them")
IFA_PLAN_FIELD(int64_t, ws_rope_bytes, IFA_FIELD_STEP, "its bytes")
/* the cv template (template_id IFA_TEMPLATE_CV): E = cv_entries (batch, KV head, split) blocks, each with M = cv_rows
 * query rows (G x S1), walking its KV rows in cv_steps chunks of chunk_rows rows. Per chunk a gather kernel writes
 * the chunk's K and V rows as fp32 (E, chunk_rows, D) tiles, CLBlast computes the scores (E, M, chunk_rows) =
 * Q x K^T, a vector kernel turns them into probabilities and rescales the accumulators, and CLBlast adds P x V into
 * them; ifa_combine.cl finishes. The accumulators, maxima and sums use ws_part_acc/m/l, by entry and row. */
IFA_PLAN_FIELD(int64_t, cv_entries, IFA_FIELD_STEP, "cv: E, the (batch, KV head, split) blocks")
IFA_PLAN_FIELD(int32_t, cv_rows, 0, "cv: M, the query rows of a block (G x S1)")
IFA_PLAN_FIELD(int32_t, cv_steps, IFA_FIELD_STEP, "cv: the chunks of chunk_rows rows a block walks")
IFA_PLAN_FIELD(int32_t, cv_work_group_size, 0, "work-items per row of the cv softmax kernel")
IFA_PLAN_FIELD(int32_t, kv_heads_per_group, 0, "all_vector: adjacent KV heads one work-group holds (BSH/BSND on "
    "CPUs, so that it reads whole runs of a position's heads instead of one head's slice of each row); its query "
    "heads are kv_heads_per_group x G, heads_per_group counts them all")
IFA_PLAN_FIELD(int32_t, prefetch_rows, 0, "all_vector, vector shape: key rows the kernel prefetches ahead (0: none)")
IFA_PLAN_FIELD(int32_t, vector_loads, 0, "all_vector, work-group shape: 8 (K/V read 8 elements per load, P.V "
    "work-items own (query row, 8 columns) slices) or 0 (one element per load)")
IFA_PLAN_FIELD(int32_t, vector_registers, 0, "all_vector, vector shape: the register file the tiles below are sized "
    "for (32 on AVX-512 CPUs and 4-lane SIMD, 16 on AVX2; 0 in the work-group shape)")
IFA_PLAN_FIELD(int32_t, score_rows, 0, "all_vector, vector shape: query rows per register tile of the four-key-row "
    "score step (4 x score_rows accumulators; 1 to 4, 0 in the work-group shape)")
IFA_PLAN_FIELD(int32_t, batch_fast, IFA_FIELD_BOOL, "all_vector without balanced units: 1 lays the grid out batch "
    "first (dimension 0 the batch, 1 the block), 0 block first")
IFA_PLAN_FIELD(int32_t, pv_prefetch, IFA_FIELD_BOOL, "all_vector, vector shape with prefetch_rows > 0: 1 where P.V "
    "also asks for the next chunk's key lines while it reads the chunk's values, 0 not")
IFA_PLAN_FIELD(int32_t, prefix_pv_prefetch, IFA_FIELD_BOOL, "the same for the shared prefix pass")
IFA_PLAN_FIELD(int32_t, spread_prefetch, IFA_FIELD_BOOL, "all_vector with kv_heads_per_group > 1 and prefetch_rows > "
    "0: 1 where each KV head's register tiles ask for their share of a four-key-row step's K and V lines, 0 where "
    "the step asks for the whole rows first")
IFA_PLAN_FIELD(int32_t, key_tile, 0, "all_vector with vector_loads and 16-bit or int8 K/V: 1 where each chunk's key "
    "rows are copied into local memory in 16-byte loads first and values load 8 at a time in one load (the kernel "
    "falls back to 8-element loads where an offset or stride of K/V is not a multiple of 16 bytes), 0 not")
IFA_PLAN_FIELD(int32_t, lanes, 0, "all_vector, work-group shape: key rows per lane group and step of the lane shape "
    "(D / 8 work-items read a key and a value row 16 bytes each, reduce its dot products among themselves and keep "
    "their own online softmax and 8 accumulator columns in registers; the kernel falls back to scalar loads where a "
    "K/V offset or stride is not a multiple of 16 bytes), 0 not")
IFA_PLAN_FIELD(int32_t, lane_prefetch, 0, "with lanes: 1 where each step loads the next step's key and value rows "
    "before its own arithmetic (twice the rows' registers, their latency behind the math), 0 not")
IFA_PLAN_FIELD(int32_t, lane_scores, 0, "with lanes, query rows and lanes powers of two, rows <= D / 8 and rows x "
    "lanes >= 2: 1 where a step's rows x lanes dot products are summed by a transposing butterfly so that each "
    "work-item scores and exponentiates its share only (D / 8 lanes split them; the probabilities and rescales reach "
    "every lane by a broadcast), 0 where every lane sums, scores and exponentiates all of them")
IFA_PLAN_FIELD(int32_t, mma, 0, "all_vector, work-group shape, 16-bit Q, 16-bit K/V or int8 with per-channel or "
    "per-tensor scales, D a multiple of 32 (int8: 64) up to 128, D_v = D, at most 16 query rows: 1 where each warp "
    "of 32 work-items takes 16 key rows a step and computes scores and P.V as warp matrix products (fp16 or bf16 "
    "inputs, fp32 sums; the probabilities in two 16-bit parts); 2 the same with the query's fragments read from "
    "local memory at each step and the value rows loaded after the scores (fewer registers); 3 to 6 the transposed "
    "shapes (docs/tiling.md); 7 the latent tile (DeepSeek's MLA: 16 query rows against 16 keys a step, D a multiple "
    "of 64, D_v of 256, a 16-bit query, 16-bit K/V or one-byte K/V with per-tensor scales or none); 0 not")
IFA_PLAN_FIELD(int32_t, lane_q_local, 0, "with lanes: 1 where each step reads the query's columns from local memory "
    "instead of holding them in registers (8 per query row a lane: fewer registers, more work-groups a "
    "multiprocessor); with mma 3, 5 or 6 up to D = 128 where the query enters as two parts (tuning mma_q_local): 1 "
    "where its operand words are in local memory, read at each step; 0 not")
IFA_PLAN_FIELD(int32_t, fused_combine, IFA_FIELD_BOOL, "equal splits with partial rowmax, or balanced units none of "
    "whose stretches is empty (total_cost >= units); no cascade, no per-batch query tokens: 1 where the last split "
    "(piece) of each (batch, block) to finish combines the block's rows itself (no combine kernel; a counter per "
    "block, kept by the context per in-order queue; runs on an out-of-order queue launch the combine kernel), 0 not")
IFA_PLAN_FIELD(int32_t, combine_counters, IFA_FIELD_STEP, "with fused_combine: the counters a run uses, batch x "
    "blocks (0 without)")
IFA_PLAN_FIELD(int32_t, mma_cvt, IFA_FIELD_BOOL, "with mma and e4m3fn K/V: 1 where each pair of bytes becomes an "
    "fp16 pair by the device's own conversion instruction (NVIDIA from sm_89: cvt.rn.f16x2.e4m3x2; the integer path "
    "elsewhere), 0 the integer path everywhere")
IFA_PLAN_FIELD(int32_t, shape, 0, "ifa_kernel_shape: the fused kernel's shape, as vector_width, mma, lanes, key_tile "
    "and vector_loads say (IFA_SHAPE_NONE for cv); the tiling key's shape digit")
IFA_PLAN_FIELD(int64_t, ws_cv_q_offset, IFA_FIELD_STEP, "the rotated query as fp32 (E, M, D), one copy per entry")
IFA_PLAN_FIELD(int64_t, ws_cv_k_offset, IFA_FIELD_STEP, "the chunk's keys as fp32 (E, chunk_rows, D)")
IFA_PLAN_FIELD(int64_t, ws_cv_v_offset, IFA_FIELD_STEP, "the chunk's values as fp32 (E, chunk_rows, D)")
IFA_PLAN_FIELD(int64_t, ws_cv_s_offset, IFA_FIELD_STEP, "scores, then probabilities, fp32 (E, M, chunk_rows)")
IFA_PLAN_FIELD(int64_t, workspace_bytes, IFA_FIELD_STEP, "total workspace run needs")

#ifdef IFA__UNDEF_PROBLEM_FIELD
#undef IFA_PROBLEM_FIELD
#undef IFA__UNDEF_PROBLEM_FIELD
#endif
#ifdef IFA__UNDEF_PLAN_FIELD
#undef IFA_PLAN_FIELD
#undef IFA__UNDEF_PLAN_FIELD
#endif
