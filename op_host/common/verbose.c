#define _POSIX_C_SOURCE 200809L /* flockfile */
#include "core/layout.h"
#include "op_host/common/verbose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "tiling/planner.h"

/* A generated tensor of t's shape and dtype, in a range that suits its role: masks 0/1 (uniform in [0, 2)
 * truncated), quantised K/V their whole integer range, antiquant scales small and positive. */
static void tensor_json(FILE *f, const char *name, const ifa_tensor *t, int seed) {
    fprintf(f, "\"%s\": {\"shape\": [", name);
    for (int i = 0; i < t->ndim; ++i) fprintf(f, i ? ", %lld" : "%lld", (long long)t->shape[i]);
    const char *range = "";
    if (strcmp(name, "atten_mask") == 0) range = ", \"low\": 0, \"high\": 2";
    else if (t->dtype == IFA_DTYPE_INT8) range = ", \"low\": -128, \"high\": 128";
    else if (t->dtype == IFA_DTYPE_INT4) range = ", \"low\": -8, \"high\": 8";
    else if (strstr(name, "antiquant_scale")) range = ", \"low\": 0.002, \"high\": 0.02"; /* either form */
    else if (strcmp(name, "quant_scale2") == 0) range = ", \"low\": 20, \"high\": 200";
    else if (strcmp(name, "alibi_slopes") == 0) range = ", \"low\": 0, \"high\": 0.5";
    fprintf(f, "], \"dtype\": \"%s\", \"random\": {\"seed\": %d%s}}", ifa_dtype_name(t->dtype), seed, range);
}

/* ", " and t's entry (tensor_json) where the optional tensor t is given. */
static void opt_tensor_json(FILE *f, const char *name, const ifa_tensor *t, int seed) {
    if (!t) return;
    fputs(", ", f);
    tensor_json(f, name, t, seed);
}

/* Read once per process: getenv walks the whole environment, a measurable share of a run call's host time
 * on every decode step. */
static int verbose_flag;
static once_flag verbose_once = ONCE_FLAG_INIT;
static void read_verbose(void) {
    const char *v = getenv("IFA_VERBOSE");
    verbose_flag = v && *v && strcmp(v, "0") != 0;
}
static int verbose_on(void) {
    call_once(&verbose_once, read_verbose);
    return verbose_flag;
}

static void int_list_json(FILE *f, const char *name, const int64_t *v, int64_t n) {
    fprintf(f, ", \"%s\": [", name);
    for (int64_t i = 0; i < n; ++i) fprintf(f, i ? ", %lld" : "%lld", (long long)v[i]);
    fputc(']', f);
}

void ifa__verbose_merge(const ifa_merge_attention_states_args *a) {
    if (!verbose_on()) return;
    flockfile(stderr);
    fprintf(stderr, "ifa_verbose: op=MergeAttentionStates case={\"op\": \"MergeAttentionStates\", \"attrs\": "
            "{\"merged_lse_flag\": %s, \"out_dtype\": \"%s\"}, \"inputs\": {", a->merged_lse ? "true" : "false",
            ifa_dtype_name(a->merged_output->dtype));
    tensor_json(stderr, "partial_outputs", a->partial_outputs, 1);
    fputs(", ", stderr);
    tensor_json(stderr, "partial_lses", a->partial_lses, 2);
    fputs("}}\n", stderr);
    funlockfile(stderr);
}

/* ", "block_table": [[...], ...]" for rows x cols ids. */
static void table_json(FILE *f, const int32_t *table, int64_t rows, int64_t cols) {
    fputs(", \"block_table\": [", f);
    for (int64_t b = 0; b < rows; ++b) {
        fputs(b ? ", [" : "[", f);
        for (int64_t i = 0; i < cols; ++i) fprintf(f, i ? ", %d" : "%d", (int)table[b * cols + i]);
        fputc(']', f);
    }
    fputc(']', f);
}

void ifa__verbose_append(const ifa_kv_cache_append_args *a) {
    if (!verbose_on()) return;
    flockfile(stderr);
    fprintf(stderr, "ifa_verbose: op=KVCacheAppend case={\"op\": \"KVCacheAppend\", \"attrs\": {\"input_layout\": \"%s\", "
            "\"num_key_value_heads\": %lld", a->input_layout, (long long)a->num_key_value_heads);
    if (a->block_table) fprintf(stderr, ", \"block_size\": %lld", (long long)a->block_size);
    if (a->key_antiquant_mode || a->value_antiquant_mode)
        fprintf(stderr, ", \"key_antiquant_mode\": %lld, \"value_antiquant_mode\": %lld", (long long)a->key_antiquant_mode,
                (long long)a->value_antiquant_mode);
    if (a->rope_mode)
        fprintf(stderr, ", \"rope_mode\": \"%s\", \"rope_dim\": %lld, \"rope_offset\": %lld", a->rope_mode,
                (long long)a->rope_dim, (long long)a->rope_offset);
    if (a->rope_mode && a->rope_theta != 0) fprintf(stderr, ", \"rope_theta\": %.17g", a->rope_theta);
    fputs("}, \"inputs\": {", stderr);
    tensor_json(stderr, "key", a->key, 1);
    opt_tensor_json(stderr, "value", a->value, 2);
    fputs(", ", stderr), tensor_json(stderr, "key_cache", a->key_cache, 3);
    opt_tensor_json(stderr, "value_cache", a->value_cache, 4);
    opt_tensor_json(stderr, "antiquant_scale", a->antiquant_scale, 5);
    opt_tensor_json(stderr, "antiquant_offset", a->antiquant_offset, 6);
    opt_tensor_json(stderr, "key_antiquant_scale", a->key_antiquant_scale, 9);
    opt_tensor_json(stderr, "key_antiquant_offset", a->key_antiquant_offset, 10);
    opt_tensor_json(stderr, "value_antiquant_scale", a->value_antiquant_scale, 11);
    opt_tensor_json(stderr, "value_antiquant_offset", a->value_antiquant_offset, 12);
    opt_tensor_json(stderr, "rope_cos", a->rope_cos, 7);
    opt_tensor_json(stderr, "rope_sin", a->rope_sin, 8);
    int_list_json(stderr, "cache_seq_lengths", a->cache_seq_lengths, a->cache_seq_lengths_count);
    if (a->new_seq_lengths_count > 0) int_list_json(stderr, "new_seq_lengths", a->new_seq_lengths, a->new_seq_lengths_count);
    if (a->rope_positions) int_list_json(stderr, "rope_positions", a->rope_positions, a->rope_positions_count);
    if (a->block_table) table_json(stderr, a->block_table, a->key->shape[0], a->block_table_cols);
    fputs("}}\n", stderr);
    funlockfile(stderr);
}

/* " shape=NAME" and, where the planner passed over shapes before it, " passed_over=\"NAME: why; ...\"" */
static void shape_text(FILE *f, const ifa_plan *plan, const ifa_device_facts *facts) {
    fprintf(f, " shape=%s", ifa__shape_name(plan->shape));
    if (plan->template_id != IFA_TEMPLATE_ALL_VECTOR) return;
    const ifa_device_facts eff = ifa__device_facts_effective(facts);
    ifa_shape_candidate c[IFA_SHAPE_CANDIDATES];
    ifa__plan_shape_candidates(plan, &eff, c);
    for (int i = 0; i < IFA_SHAPE_CANDIDATES && !c[i].chosen; ++i)
        fprintf(f, "%s%s: %s", i ? "; " : " passed_over=\"", ifa__shape_name(c[i].shape), c[i].reason);
    if (!c[0].chosen) fputc('"', f);
}

void ifa__verbose_run(const ifa_plan *plan, const ifa_device_facts *facts, const ifa_incre_flash_attention_args *a) {
    if (!verbose_on()) return;
    const ifa_problem *p = &plan->problem;
    float scale;
    memcpy(&scale, &p->scale_bits, sizeof scale);
    flockfile(stderr);
    fprintf(stderr, "ifa_verbose: op=IncreFlashAttention template=%s tiling_key=%llu",
            plan->template_id == IFA_TEMPLATE_ALL_VECTOR ? "all_vector" : "cv", (unsigned long long)plan->tiling_key);
    shape_text(stderr, plan, facts);
    fprintf(stderr,
            " work_group_size=%d chunk_rows=%d "
            "heads_per_group=%d workspace=%lld case={\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": %lld, "
            "\"num_key_value_heads\": %lld, \"scale_value\": %.9g, \"input_layout\": \"%s\", \"softmax_lse_flag\": %s, "
            "\"softcap\": %.9g, \"window\": %lld, \"block_size\": %lld, \"antiquant_mode\": %lld, "
            "\"key_antiquant_mode\": %lld, \"value_antiquant_mode\": %lld",
            (int)plan->work_group_size, (int)plan->chunk_rows, (int)plan->heads_per_group,
            (long long)plan->workspace_bytes, (long long)p->num_heads, (long long)p->num_kv_heads, (double)scale,
            ifa__layout_name((ifa_layout)p->layout), p->has_lse ? "true" : "false", a->softcap, (long long)a->window,
            (long long)a->block_size, (long long)a->antiquant_mode, (long long)a->key_antiquant_mode,
            (long long)a->value_antiquant_mode);
    if (p->rope) {
        fprintf(stderr, ", \"rope_mode\": \"%s\", \"rope_dim\": %lld, \"rope_offset\": %lld",
                p->rope == IFA_ROPE_NEOX ? "neox" : "gptj", (long long)p->rope_dim, (long long)p->rope_offset);
        double theta;
        memcpy(&theta, &p->rope_theta_bits, sizeof theta);
        if (!p->rope_table) fprintf(stderr, ", \"rope_theta\": %.17g", theta);
    }
    if (p->template_request)
        fprintf(stderr, ", \"template_mode\": \"%s\"", p->template_request == IFA_TEMPLATE_CV ? "cv" : "all_vector");
    if (a->value_head_dim) fprintf(stderr, ", \"value_head_dim\": %lld", (long long)a->value_head_dim);
    fputs("}, \"inputs\": {", stderr);
    tensor_json(stderr, "query", a->query, 1);
    fputs(", ", stderr);
    tensor_json(stderr, "key", a->key, 2);
    fputs(", ", stderr);
    /* the key passed as the value (MLA's one latent cache) replays as such */
    if (a->value == a->key || (a->value->buffer && a->value->buffer == a->key->buffer && a->value->offset == a->key->offset))
        fputs("\"value\": \"key\"", stderr);
    else
        tensor_json(stderr, "value", a->value, 3);
    if (a->actual_seq_lengths_count > 0)
        int_list_json(stderr, "actual_seq_lengths", a->actual_seq_lengths, a->actual_seq_lengths_count);
    if (a->actual_seq_lengths_q_count > 0)
        int_list_json(stderr, "actual_seq_lengths_q", a->actual_seq_lengths_q, a->actual_seq_lengths_q_count);
    opt_tensor_json(stderr, "atten_mask", a->atten_mask, 4);
    opt_tensor_json(stderr, "pse_shift", a->pse_shift, 5);
    opt_tensor_json(stderr, "sinks", a->sinks, 14);
    opt_tensor_json(stderr, "alibi_slopes", a->alibi_slopes, 15);
    opt_tensor_json(stderr, "antiquant_scale", a->antiquant_scale, 6);
    opt_tensor_json(stderr, "antiquant_offset", a->antiquant_offset, 7);
    opt_tensor_json(stderr, "key_antiquant_scale", a->key_antiquant_scale, 16);
    opt_tensor_json(stderr, "key_antiquant_offset", a->key_antiquant_offset, 17);
    opt_tensor_json(stderr, "value_antiquant_scale", a->value_antiquant_scale, 18);
    opt_tensor_json(stderr, "value_antiquant_offset", a->value_antiquant_offset, 19);
    opt_tensor_json(stderr, "quant_scale2", a->quant_scale2, 8);
    opt_tensor_json(stderr, "quant_offset2", a->quant_offset2, 9);
    opt_tensor_json(stderr, "key_shared_prefix", a->key_shared_prefix, 10);
    opt_tensor_json(stderr, "value_shared_prefix", a->value_shared_prefix, 11);
    if (a->actual_shared_prefix_len)
        fprintf(stderr, ", \"actual_shared_prefix_len\": %lld", (long long)*a->actual_shared_prefix_len);
    if (p->rope && a->rope_positions)
        int_list_json(stderr, "rope_positions", a->rope_positions, a->rope_positions_count);
    if (p->rope && a->rope_cos) {
        fputs(", ", stderr), tensor_json(stderr, "rope_cos", a->rope_cos, 12);
        fputs(", ", stderr), tensor_json(stderr, "rope_sin", a->rope_sin, 13);
    }
    if (a->kv_padding_size) fprintf(stderr, ", \"kv_padding_size\": %lld", (long long)*a->kv_padding_size);
    if (a->block_table) table_json(stderr, a->block_table, p->batch, p->table_cols);
    fputs("}}\n", stderr);
    funlockfile(stderr);
}
