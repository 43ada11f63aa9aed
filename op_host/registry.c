/* The op registry: each op's definition as data, and the generic call that binds named tensors and
 * attributes to the op's typed arguments. */
#include "ifa/registry.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"

#define DT(d) (1u << IFA_DTYPE_##d)
#define FLOATS (DT(FLOAT32) | DT(FLOAT16) | DT(BFLOAT16))
#define KV_TYPES (FLOATS | DT(INT8) | DT(INT4) | DT(FLOAT8_E4M3) | DT(FLOAT8_E5M2))

/* ---- definitions -------------------------------------------------------------------------------------- */

static const ifa_tensor_def ifa_inputs[] = {
    {"query", 1, FLOATS, 3, 4, 0, "(B, S1, N·D) BSH, (B, S1, N, D) BSND, (B, N, S1, D) BNSD"},
    {"key", 1, KV_TYPES, 3, 4, 0, "(B, S_kv, N_kv·D) / (B, S_kv, N_kv, D) / (B, N_kv, S_kv, D), or a paged pool"},
    {"value", 1, KV_TYPES, 3, 4, 0, "key's shape and dtype"},
    {"atten_mask", 0, DT(BOOL) | DT(INT8) | DT(UINT8), 2, 4, 0, "non-zero excludes a position"},
    {"pse_shift", 0, FLOATS, 4, 4, 0, "(B or 1, N, S1, S) position bias, query's dtype"},
    {"sinks", 0, DT(FLOAT32), 1, 1, 0, "(N) attention-sink logit per query head: joins the softmax sum, no value"},
    {"alibi_slopes", 0, DT(FLOAT32), 1, 2, 0, "(N) or (B, N) ALiBi slopes: score - slope * |j - query position|"},
    {"antiquant_scale", 0, FLOATS, 1, 4, 0, "int8/int4 KV: scales, key's then value's"},
    {"antiquant_offset", 0, FLOATS, 1, 4, 0, "int8/int4 KV: offsets, the scale's shape"},
    {"key_antiquant_scale", 0, FLOATS, 1, 3, 0, "separate form: the key's scales in key_antiquant_mode (KIVI: per channel)"},
    {"key_antiquant_offset", 0, FLOATS, 1, 3, 0, "separate form: the key's offsets, its scale's shape"},
    {"value_antiquant_scale", 0, FLOATS, 1, 3, 0, "separate form: the value's scales in value_antiquant_mode (KIVI: per token)"},
    {"value_antiquant_offset", 0, FLOATS, 1, 3, 0, "separate form: the value's offsets, its scale's shape"},
    {"quant_scale2", 0, FLOATS, 1, 2, 0, "int8 output: (1), (N·D) or (N, D)"},
    {"quant_offset2", 0, FLOATS, 1, 2, 0, "int8 output: the scale's shape"},
    {"key_shared_prefix", 0, FLOATS, 3, 4, 0, "shared prefix keys, the key's layout with batch 1"},
    {"value_shared_prefix", 0, FLOATS, 3, 4, 0, "shared prefix values"},
    {"rope_cos", 0, DT(FLOAT32), 2, 2, 0, "RoPE tables (positions, rope_dim / 2)"},
    {"rope_sin", 0, DT(FLOAT32), 2, 2, 0, "RoPE tables (positions, rope_dim / 2)"},
};
static const ifa_tensor_def ifa_outputs[] = {
    {"attention_out", 1, FLOATS | DT(INT8), 3, 4, 0, "the query's shape (D_v for D); the query's dtype, or int8 with quant_scale2"},
    {"softmax_lse", 0, DT(FLOAT32), 3, 3, 0, "(B, N, S1) natural-log sum-exp, with softmax_lse_flag"},
};
static const ifa_attr_def ifa_attrs[] = {
    {"num_heads", IFA_ATTR_INT, 1, NULL, "N"},
    {"scale_value", IFA_ATTR_FLOAT, 0, "1.0", "score scale"},
    {"input_layout", IFA_ATTR_STRING, 0, "BSH", "BSH, BSND or BNSD"},
    {"num_key_value_heads", IFA_ATTR_INT, 0, "0", "N_kv; 0 = N"},
    {"softmax_lse_flag", IFA_ATTR_BOOL, 0, "false", "write softmax_lse"},
    {"actual_seq_lengths", IFA_ATTR_INT_LIST, 0, NULL, "1 or B lengths; absent = S_kv"},
    {"actual_seq_lengths_q", IFA_ATTR_INT_LIST, 0, NULL, "1 or B query tokens in [0, S1]; absent = S1"},
    {"softcap", IFA_ATTR_FLOAT, 0, "0", "score soft-cap, 0 = off"},
    {"window", IFA_ATTR_INT, 0, "0", "sliding window, 0 = off"},
    {"kv_padding_size", IFA_ATTR_INT, 0, NULL, "Ascend's KV padding; absent = none"},
    {"block_table", IFA_ATTR_INT_LIST, 0, NULL, "paged KV: B x block_table_cols block ids, row-major"},
    {"block_table_cols", IFA_ATTR_INT, 0, "0", "paged KV: columns of block_table"},
    {"block_size", IFA_ATTR_INT, 0, "0", "paged KV: rows per block"},
    {"antiquant_mode", IFA_ATTR_INT, 0, "0", "0 channel/tensor, 1 token, 2 head and token, 3 the same with pages"},
    {"key_antiquant_mode", IFA_ATTR_INT, 0, "0", "separate form: key_antiquant_scale's mode, as antiquant_mode"},
    {"value_antiquant_mode", IFA_ATTR_INT, 0, "0", "separate form: value_antiquant_scale's mode, as antiquant_mode"},
    {"actual_shared_prefix_len", IFA_ATTR_INT, 0, NULL, "shared prefix rows seen; absent = all"},
    {"rope_mode", IFA_ATTR_STRING, 0, "none", "none, neox or gptj"},
    {"rope_theta", IFA_ATTR_FLOAT, 0, "0", "RoPE base; 0 = 10000"},
    {"rope_dim", IFA_ATTR_INT, 0, "0", "rotated dims; 0 = D - rope_offset"},
    {"rope_offset", IFA_ATTR_INT, 0, "0", "first rotated dim (MLA: D - 64)"},
    {"rope_positions", IFA_ATTR_INT_LIST, 0, NULL, "B first-token positions; absent = length - S1"},
    {"template_mode", IFA_ATTR_STRING, 0, "auto", "auto, all_vector or cv"},
    {"value_head_dim", IFA_ATTR_INT, 0, "0", "D_v: value columns read and the output's head dim; 0 = D (MLA: 512 of 576)"},
};
static const ifa_dtype_combo ifa_combos[] = {
    {{"query", "key", "attention_out"}, {IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT16, IFA_DTYPE_FLOAT16}},
    {{"query", "key", "attention_out"}, {IFA_DTYPE_BFLOAT16, IFA_DTYPE_BFLOAT16, IFA_DTYPE_BFLOAT16}},
    {{"query", "key", "attention_out"}, {IFA_DTYPE_FLOAT32, IFA_DTYPE_FLOAT32, IFA_DTYPE_FLOAT32}},
    {{"query", "key", "antiquant_scale", "attention_out"}, {-1, IFA_DTYPE_INT8, -1, -1}},
    {{"query", "key", "antiquant_scale", "attention_out"}, {-1, IFA_DTYPE_INT4, -1, -1}},
    {{"query", "key", "key_antiquant_scale", "value_antiquant_scale", "attention_out"}, {-1, IFA_DTYPE_INT8, -1, -1, -1}},
    {{"query", "key", "key_antiquant_scale", "value_antiquant_scale", "attention_out"}, {-1, IFA_DTYPE_INT4, -1, -1, -1}},
    {{"query", "key", "attention_out"}, {-1, IFA_DTYPE_FLOAT8_E4M3, -1}}, /* antiquant_scale optional */
    {{"query", "key", "attention_out"}, {-1, IFA_DTYPE_FLOAT8_E5M2, -1}},
    {{"query", "key", "quant_scale2", "attention_out"}, {-1, -1, -1, IFA_DTYPE_INT8}},
};

static const ifa_tensor_def merge_inputs[] = {
    {"partial_outputs", 1, FLOATS, 2, 8, 0, "(P, rows..., D)"},
    {"partial_lses", 1, DT(FLOAT32), 1, 7, 0, "(P, rows...)"},
};
static const ifa_tensor_def merge_outputs[] = {
    {"merged_output", 1, FLOATS, 1, 7, 0, "(rows..., D)"},
    {"merged_lse", 0, DT(FLOAT32), 1, 6, 0, "(rows...), with merged_lse_flag"},
};
static const ifa_attr_def merge_attrs[] = {
    {"merged_lse_flag", IFA_ATTR_BOOL, 0, "false", "write merged_lse"},
    {"out_dtype", IFA_ATTR_STRING, 0, NULL, "merged_output's dtype for infer; absent = partial_outputs'"},
};
static const ifa_dtype_combo merge_combos[] = {
    {{"partial_outputs", "partial_lses", "merged_output"}, {-1, IFA_DTYPE_FLOAT32, -1}},
};

static const ifa_tensor_def append_inputs[] = {
    {"key", 1, FLOATS, 3, 4, 0, "new rows: (B, S1, N_kv·D) / (B, S1, N_kv, D) / (B, N_kv, S1, D)"},
    {"value", 0, FLOATS, 3, 4, 0, "key's shape and dtype; absent with value_cache: a key-only append (one latent cache)"},
    {"key_cache", 1, KV_TYPES, 3, 4, 1, "contiguous (B, S_max, ...) or a paged pool; written"},
    {"value_cache", 0, KV_TYPES, 3, 4, 1, "key_cache's shape and dtype; written; absent with value"},
    {"antiquant_scale", 0, DT(FLOAT32), 4, 4, 1, "int8/int4 cache, or float8 optionally: per head and token scales; written"},
    {"antiquant_offset", 0, DT(FLOAT32), 4, 4, 1, "asymmetric quantisation offsets; written"},
    {"key_antiquant_scale", 0, FLOATS, 1, 3, 1, "separate form: the key's scales, given (mode 0) or written (2, 3)"},
    {"key_antiquant_offset", 0, FLOATS, 1, 3, 1, "separate form: the key's offsets, beside its scales"},
    {"value_antiquant_scale", 0, FLOATS, 1, 3, 1, "separate form: the value's scales, given (mode 0) or written (2, 3)"},
    {"value_antiquant_offset", 0, FLOATS, 1, 3, 1, "separate form: the value's offsets, beside its scales"},
    {"rope_cos", 0, DT(FLOAT32), 2, 2, 0, "RoPE tables (positions, rope_dim / 2)"},
    {"rope_sin", 0, DT(FLOAT32), 2, 2, 0, "RoPE tables (positions, rope_dim / 2)"},
};
static const ifa_attr_def append_attrs[] = {
    {"cache_seq_lengths", IFA_ATTR_INT_LIST, 1, NULL, "1 or B rows already cached"},
    {"new_seq_lengths", IFA_ATTR_INT_LIST, 0, NULL, "1 or B rows to write, each in [0, S1]; absent = S1"},
    {"input_layout", IFA_ATTR_STRING, 0, "BSH", "BSH, BSND or BNSD"},
    {"num_key_value_heads", IFA_ATTR_INT, 1, NULL, "N_kv"},
    {"block_table", IFA_ATTR_INT_LIST, 0, NULL, "paged cache: B x block_table_cols block ids"},
    {"block_table_cols", IFA_ATTR_INT, 0, "0", "paged cache: columns of block_table"},
    {"block_size", IFA_ATTR_INT, 0, "0", "paged cache: rows per block"},
    {"rope_mode", IFA_ATTR_STRING, 0, "none", "none, neox or gptj: rotate the new keys"},
    {"rope_theta", IFA_ATTR_FLOAT, 0, "0", "RoPE base; 0 = 10000"},
    {"rope_dim", IFA_ATTR_INT, 0, "0", "rotated dims; 0 = D - rope_offset"},
    {"rope_offset", IFA_ATTR_INT, 0, "0", "first rotated dim (MLA: D - 64)"},
    {"rope_positions", IFA_ATTR_INT_LIST, 0, NULL, "B first-row positions; absent = cache_seq_lengths"},
    {"key_antiquant_mode", IFA_ATTR_INT, 0, "0", "separate form: 0 scales given, 2 written (contiguous), 3 written (paged)"},
    {"value_antiquant_mode", IFA_ATTR_INT, 0, "0", "separate form: as key_antiquant_mode"},
};
static const ifa_dtype_combo append_combos[] = {
    {{"key", "key_cache"}, {-1, -1}},
    {{"key", "key_cache", "antiquant_scale"}, {-1, IFA_DTYPE_INT8, IFA_DTYPE_FLOAT32}},
    {{"key", "key_cache", "antiquant_scale"}, {-1, IFA_DTYPE_INT4, IFA_DTYPE_FLOAT32}},
    {{"key", "key_cache", "antiquant_scale"}, {-1, IFA_DTYPE_FLOAT8_E4M3, IFA_DTYPE_FLOAT32}},
    {{"key", "key_cache", "antiquant_scale"}, {-1, IFA_DTYPE_FLOAT8_E5M2, IFA_DTYPE_FLOAT32}},
};

#define N_(a) (int32_t)(sizeof a / sizeof a[0])
static const ifa_op_def ops[] = {
    {"IncreFlashAttention", "decode attention against a long KV cache (docs/op.md)", ifa_inputs, N_(ifa_inputs),
     ifa_outputs, N_(ifa_outputs), ifa_attrs, N_(ifa_attrs), ifa_combos, N_(ifa_combos)},
    {"MergeAttentionStates", "merge partial attention results by their LSE (docs/op.md)", merge_inputs,
     N_(merge_inputs), merge_outputs, N_(merge_outputs), merge_attrs, N_(merge_attrs), merge_combos, N_(merge_combos)},
    {"KVCacheAppend", "write new K/V rows into a contiguous or paged cache, quantising online (docs/kv-cache.md)",
     append_inputs, N_(append_inputs), NULL, 0, append_attrs, N_(append_attrs), append_combos, N_(append_combos)},
};

int32_t ifa_op_count(void) { return N_(ops); }

const ifa_op_def *ifa_op_at(int32_t i) { return i >= 0 && i < N_(ops) ? &ops[i] : NULL; }

ifa_status ifa_op_find(const char *name, const ifa_op_def **def) {
    if (!def) return ifa__fail(IFA_STATUS_NULL_ARGUMENT, "def is NULL");
    for (int32_t i = 0; name && i < N_(ops); ++i)
        if (strcmp(ops[i].name, name) == 0) {
            *def = &ops[i];
            return IFA_STATUS_OK;
        }
    return ifa__fail(IFA_STATUS_INVALID_ATTRIBUTE, "no op is named \"%s\"; ifa has IncreFlashAttention, "
                     "MergeAttentionStates and KVCacheAppend", name ? name : "(null)");
}

void ifa_free(void *p) { free(p); }

size_t ifa_plan_size(void) { return sizeof(ifa_plan); }

/* ---- JSON ------------------------------------------------------------------------------------------------ */

static cJSON *tensor_defs_json(const ifa_tensor_def *t, int32_t n) {
    cJSON *arr = cJSON_CreateArray();
    for (int32_t i = 0; arr && i < n; ++i) {
        cJSON *o = cJSON_CreateObject(), *dts = cJSON_CreateArray();
        cJSON_AddItemToArray(arr, o);
        cJSON_AddStringToObject(o, "name", t[i].name);
        cJSON_AddBoolToObject(o, "required", t[i].required);
        for (int d = 0; d < IFA_DTYPE_COUNT_; ++d)
            if (t[i].dtypes >> d & 1) cJSON_AddItemToArray(dts, cJSON_CreateString(ifa_dtype_name((ifa_dtype)d)));
        cJSON_AddItemToObject(o, "dtypes", dts);
        cJSON_AddNumberToObject(o, "min_rank", t[i].min_rank);
        cJSON_AddNumberToObject(o, "max_rank", t[i].max_rank);
        if (t[i].in_place) cJSON_AddBoolToObject(o, "written", 1);
        cJSON_AddStringToObject(o, "doc", t[i].doc);
    }
    return arr;
}

char *ifa_op_def_json(const ifa_op_def *def) {
    static const char *const types[] = {"int", "float", "string", "bool", "int_list"};
    if (!def) return NULL;
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON_AddStringToObject(root, "name", def->name);
    cJSON_AddStringToObject(root, "doc", def->doc);
    cJSON_AddItemToObject(root, "inputs", tensor_defs_json(def->inputs, def->num_inputs));
    cJSON_AddItemToObject(root, "outputs", tensor_defs_json(def->outputs, def->num_outputs));
    cJSON *attrs = cJSON_AddArrayToObject(root, "attrs");
    for (int32_t i = 0; attrs && i < def->num_attrs; ++i) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(attrs, o);
        cJSON_AddStringToObject(o, "name", def->attrs[i].name);
        cJSON_AddStringToObject(o, "type", types[def->attrs[i].type]);
        cJSON_AddBoolToObject(o, "required", def->attrs[i].required);
        if (def->attrs[i].default_value) cJSON_AddStringToObject(o, "default", def->attrs[i].default_value);
        cJSON_AddStringToObject(o, "doc", def->attrs[i].doc);
    }
    cJSON *combos = cJSON_AddArrayToObject(root, "dtype_combinations");
    for (int32_t i = 0; combos && i < def->num_combos; ++i) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(combos, o);
        for (int j = 0; j < 6 && def->combos[i].names[j]; ++j)
            cJSON_AddStringToObject(o, def->combos[i].names[j],
                                    def->combos[i].dtypes[j] < 0 ? "any" : ifa_dtype_name((ifa_dtype)def->combos[i].dtypes[j]));
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}
