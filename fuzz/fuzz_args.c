/* libFuzzer target: argument validation and planning of every op (get_workspace_size) on arguments decoded
 * from arbitrary bytes: shapes (including zero, negative and huge dimensions), dtypes (including values
 * outside the enum), layouts, attributes (NaN, infinities, negatives), lengths, block tables, rope positions
 * and which optional tensors are present. Every call must return a status, never crash, hang, leak or trip
 * a sanitizer; buffers are NULL (planning only), so nothing reaches a device. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ifa/ifa.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ifa_context *ctx;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    if (ifa_context_create_default(NULL, &ctx) != IFA_STATUS_OK) abort(); /* the fuzz job needs a device */
    return 0;
}

/* Reads bytes from the input; zeros once it is used up. */
typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static uint8_t u8(reader *r) {
    if (r->n == 0) return 0;
    r->n--;
    return *r->p++;
}

static int64_t i64(reader *r) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | u8(r);
    return (int64_t)v;
}

/* Mostly small dimensions, sometimes 0, negative or anything. */
static int64_t dim(reader *r) {
    const uint8_t k = u8(r);
    if (k < 200) return 1 + k % 64;
    if (k < 220) return 64 * (1 + u8(r));
    if (k < 235) return k - 230; /* -5 .. 4 */
    return i64(r);
}

static double real(reader *r) {
    const uint8_t k = u8(r);
    if (k < 200) return (double)k / 16.0;
    if (k < 210) return NAN;
    if (k < 220) return INFINITY;
    if (k < 230) return -1.0;
    int64_t bits = i64(r);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static void tensor(reader *r, ifa_tensor *t) {
    memset(t, 0, sizeof *t);
    t->dtype = (ifa_dtype)(u8(r) % (IFA_DTYPE_COUNT_ + 2)); /* every dtype and two values past the enum */
    t->ndim = u8(r) % 7;
    for (int i = 0; i < t->ndim && i < IFA_MAX_DIMS; ++i) t->shape[i] = dim(r);
    if (u8(r) > 250) t->offset = (size_t)u8(r);
}

/* A host array of up to 8 values; counts passed with it never exceed its length (the API's contract), though
 * they may be negative. */
static int64_t *list(reader *r, int64_t *count) {
    *count = u8(r) % 9;
    if (*count == 0) return NULL;
    int64_t *v = malloc((size_t)*count * sizeof *v);
    for (int64_t i = 0; v && i < *count; ++i) v[i] = u8(r) < 220 ? u8(r) * 4 : i64(r);
    return v;
}

/* A block table of batch rows (the API's contract: the caller's array holds B x cols ids; the library cannot
 * see its length) with ids mostly in a small pool, sometimes anything. batch: the first dimension of the
 * tensor that gives B, clamped (larger batches are rejected before the table is read). */
static int32_t *table(reader *r, int64_t batch, int64_t *cols) {
    *cols = u8(r) % 8;
    const int64_t rows = batch < 1 ? 1 : batch > 65536 ? 65536 : batch, n = rows * *cols;
    if (n == 0) return NULL;
    int32_t *t = malloc((size_t)n * sizeof *t);
    for (int64_t i = 0; t && i < n; ++i) t[i] = u8(r) < 240 ? u8(r) % 16 : (int32_t)(uint32_t)i64(r);
    return t;
}

static const char *layout(reader *r) {
    static const char *const names[] = {"BSH", "BSND", "BNSD", "bsh", ""};
    const uint8_t k = u8(r) % 6;
    return k < 5 ? names[k] : NULL;
}

static const char *rope(reader *r) {
    static const char *const names[] = {NULL, "none", "neox", "gptj", "yarn"};
    return names[u8(r) % 5];
}

static const char *template_mode(reader *r) {
    static const char *const names[] = {NULL, "auto", "all_vector", "cv", "cube"};
    return names[u8(r) % 5];
}

static void fuzz_ifa(reader *r) {
    ifa_tensor q, k, v, o, lse, mask, pse, aqs, aqo, qs2, qo2, kp, vp, rc, rs, sk, al;
    ifa_tensor *opt[] = {&lse, &mask, &pse, &aqs, &aqo, &qs2, &qo2, &kp, &vp, &rc, &rs, &sk, &al};
    tensor(r, &q), tensor(r, &k), tensor(r, &v), tensor(r, &o);
    const uint16_t present = (uint16_t)(u8(r) | u8(r) << 8);
    for (size_t i = 0; i < sizeof opt / sizeof opt[0]; ++i) tensor(r, opt[i]);
    ifa_incre_flash_attention_args a;
    ifa_incre_flash_attention_args_init(&a);
    a.query = &q, a.key = &k, a.value = &v, a.attention_out = u8(r) < 250 ? &o : NULL;
    const ifa_tensor **slots[] = {&a.softmax_lse, &a.atten_mask, &a.pse_shift, &a.antiquant_scale, &a.antiquant_offset,
                                  &a.quant_scale2, &a.quant_offset2, &a.key_shared_prefix, &a.value_shared_prefix,
                                  &a.rope_cos, &a.rope_sin, &a.sinks, &a.alibi_slopes};
    for (size_t i = 0; i < sizeof slots / sizeof slots[0]; ++i) *slots[i] = present >> i & 1 ? opt[i] : NULL;
    a.num_heads = (int8_t)u8(r), a.num_key_value_heads = (int8_t)u8(r) % 9;
    a.scale_value = real(r), a.input_layout = layout(r), a.softcap = u8(r) < 200 ? 0 : real(r);
    a.window = u8(r) < 200 ? 0 : dim(r);
    int64_t pad = dim(r), prefix_len = dim(r), nlens, npos;
    a.kv_padding_size = u8(r) > 240 ? &pad : NULL;
    a.actual_shared_prefix_len = u8(r) > 240 ? &prefix_len : NULL;
    int64_t *lens = list(r, &nlens), *pos = list(r, &npos);
    a.actual_seq_lengths = lens, a.actual_seq_lengths_count = u8(r) < 240 ? nlens : -(int64_t)(u8(r) % 4);
    int32_t *tab = table(r, q.ndim > 0 ? q.shape[0] : 0, &a.block_table_cols);
    a.block_table = u8(r) < 128 ? tab : NULL, a.block_size = a.block_table || u8(r) > 240 ? dim(r) : 0;
    a.antiquant_mode = u8(r) % 5;
    a.rope_mode = rope(r), a.rope_theta = u8(r) < 200 ? 0 : real(r), a.rope_dim = u8(r) < 200 ? 0 : dim(r);
    a.rope_positions = pos, a.rope_positions_count = u8(r) < 240 ? npos : -(int64_t)(u8(r) % 4);
    a.template_mode = template_mode(r);
    a.value_head_dim = u8(r) < 200 ? 0 : dim(r) - 2; /* mostly off; sometimes negative or past D */
    if (u8(r) > 240) a.value = &k;                   /* the key as the value (MLA) */
    int64_t nql, *ql = list(r, &nql);                /* per-batch query tokens */
    a.actual_seq_lengths_q = ql, a.actual_seq_lengths_q_count = u8(r) < 240 ? nql : -(int64_t)(u8(r) % 4);
    /* the separate antiquant form last, so that older corpus inputs (read as zeros here) keep their meaning */
    ifa_tensor ks, ko, vs, vo;
    const uint8_t sep = u8(r);
    tensor(r, &ks), tensor(r, &ko), tensor(r, &vs), tensor(r, &vo);
    a.key_antiquant_scale = sep & 1 ? &ks : NULL, a.key_antiquant_offset = sep & 2 ? &ko : NULL;
    a.value_antiquant_scale = sep & 4 ? &vs : NULL, a.value_antiquant_offset = sep & 8 ? &vo : NULL;
    a.key_antiquant_mode = sep & 16 ? (int8_t)u8(r) % 5 : 0, a.value_antiquant_mode = sep & 32 ? (int8_t)u8(r) % 5 : 0;
    a.rope_offset = u8(r) < 200 ? 0 : dim(r) - 2; /* the rotated part's start: mostly 0, sometimes negative or past D */
    ifa_plan plan;
    size_t ws;
    ifa_incre_flash_attention_get_workspace_size(ctx, &a, &plan, &ws);
    free(lens), free(pos), free(tab), free(ql);
}

static void fuzz_append(reader *r) {
    ifa_tensor k, v, kc, vc, sc, of, rc, rs;
    tensor(r, &k), tensor(r, &v), tensor(r, &kc), tensor(r, &vc), tensor(r, &sc), tensor(r, &of), tensor(r, &rc);
    tensor(r, &rs);
    const uint8_t present = u8(r);
    ifa_kv_cache_append_args a;
    ifa_kv_cache_append_args_init(&a);
    a.key = &k, a.value = &v, a.key_cache = &kc, a.value_cache = present & 1 ? &vc : NULL;
    a.antiquant_scale = present & 2 ? &sc : NULL, a.antiquant_offset = present & 4 ? &of : NULL;
    a.rope_cos = present & 8 ? &rc : NULL, a.rope_sin = present & 16 ? &rs : NULL;
    int64_t nlens, npos;
    int64_t *lens = list(r, &nlens), *pos = list(r, &npos);
    a.cache_seq_lengths = lens, a.cache_seq_lengths_count = u8(r) < 240 ? nlens : -(int64_t)(u8(r) % 4);
    a.input_layout = layout(r), a.num_key_value_heads = (int8_t)u8(r);
    int32_t *tab = table(r, k.ndim > 0 ? k.shape[0] : 0, &a.block_table_cols);
    a.block_table = present & 32 ? tab : NULL, a.block_size = a.block_table || u8(r) > 240 ? dim(r) : 0;
    a.rope_mode = rope(r), a.rope_dim = u8(r) < 200 ? 0 : dim(r), a.rope_theta = u8(r) < 200 ? 0 : real(r);
    a.rope_positions = pos, a.rope_positions_count = u8(r) < 240 ? npos : -(int64_t)(u8(r) % 4);
    a.rope_offset = u8(r) < 200 ? 0 : dim(r) - 2; /* last, as the IFA's: older corpus inputs keep their meaning */
    size_t ws;
    ifa_kv_cache_append_get_workspace_size(ctx, &a, &ws);
    free(lens), free(pos), free(tab);
}

static void fuzz_merge(reader *r) {
    ifa_tensor po, pl, mo, ml;
    tensor(r, &po), tensor(r, &pl), tensor(r, &mo), tensor(r, &ml);
    const uint8_t present = u8(r);
    const ifa_merge_attention_states_args a = {present & 1 ? &po : NULL, present & 2 ? &pl : NULL,
                                               present & 4 ? &mo : NULL, present & 8 ? &ml : NULL};
    size_t ws;
    ifa_merge_attention_states_get_workspace_size(ctx, &a, &ws);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader r = {data, size};
    switch (u8(&r) % 3) {
    case 0: fuzz_ifa(&r); break;
    case 1: fuzz_append(&r); break;
    default: fuzz_merge(&r); break;
    }
    return 0;
}
