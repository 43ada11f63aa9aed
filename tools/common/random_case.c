/* Random legal IncreFlashAttention cases (random_case.h). Every draw comes from one generator seeded with the
 * case's seed, in a fixed order, so a seed names its case on every machine; value_head_dim's, the device
 * facts' and actual_seq_lengths_q's draws come from a second generator of the same seed, and head dims past 256
 * from a third, so that the seeds named before they existed keep their other draws (a seed the third takes is a
 * new case). */
#include "common/random_case.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "tiling/device_facts.h"

enum { BSH, BSND, BNSD };

typedef struct draw {
    ifa_rng r;
    uint64_t seed;
    int tensors; /* tensors drawn so far: each gets its own data seed */
} draw;

static int64_t pick(draw *g, const int64_t *v, int n) { return v[ifa_rng_int(&g->r, 0, n - 1)]; }
static int chance(draw *g, double p) { return ifa_rng_uniform(&g->r, 0, 1) < p; }

/* {"shape": [...], "dtype": dt, "random": {"seed": S, "low": lo, "high": hi}} with a fresh data seed. */
static cJSON *tensor(draw *g, const int64_t *shape, int nd, const char *dt, double lo, double hi) {
    cJSON *t = cJSON_CreateObject(), *sh = cJSON_AddArrayToObject(t, "shape"), *rnd;
    for (int i = 0; i < nd; ++i) cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)shape[i]));
    cJSON_AddStringToObject(t, "dtype", dt);
    rnd = cJSON_AddObjectToObject(t, "random");
    cJSON_AddNumberToObject(rnd, "seed", (double)((g->seed % 1000000) * 64 + (uint64_t)g->tensors++));
    cJSON_AddNumberToObject(rnd, "low", lo);
    cJSON_AddNumberToObject(rnd, "high", hi);
    return t;
}

/* The layout's shape of `rows` positions of n heads (batch dimension b). */
static int layout_shape(int layout, int64_t b, int64_t rows, int64_t n, int64_t d, int64_t *sh) {
    if (layout == BSH) return sh[0] = b, sh[1] = rows, sh[2] = n * d, 3;
    if (layout == BSND) return sh[0] = b, sh[1] = rows, sh[2] = n, sh[3] = d, 4;
    return sh[0] = b, sh[1] = n, sh[2] = rows, sh[3] = d, 4;
}

static cJSON *int_array(const int64_t *v, int64_t n) {
    cJSON *a = cJSON_CreateArray();
    for (int64_t i = 0; i < n; ++i) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
    return a;
}

/* With chance p (from r), inputs[name] = per-batch counts in [0, hi]: 1 value (a fifth of the time) or b (at
 * most 8), a fifth of them 0 (an idle batch). Returns whether it drew them. */
static int per_batch_counts(ifa_rng *r, double p, int64_t b, int64_t hi, cJSON *in, const char *name) {
    if (ifa_rng_uniform(r, 0, 1) >= p) return 0;
    const int64_t n = ifa_rng_uniform(r, 0, 1) < 0.2 || b > 8 ? 1 : b;
    int64_t v[8];
    for (int64_t i = 0; i < n; ++i) v[i] = ifa_rng_uniform(r, 0, 1) < 0.2 ? 0 : ifa_rng_int(r, 1, hi);
    cJSON_AddItemToObject(in, name, int_array(v, n));
    return 1;
}

/* The case's JSON text into out (root is freed); 0, or -1 without memory. */
static int finish(cJSON *root, ifa_random_case *out) {
    out->json = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return out->json ? 0 : -1;
}

static void add_summary(char *s, size_t n, const char *what) {
    const size_t used = strlen(s);
    if (used + 1 < n) snprintf(s + used, n - used, " %s", what);
}

/* The rotary attributes both ops share: rope_mode, then (half the time) a rope_dim of any even size and,
 * for a partial rotation, sometimes a rope_offset away from the front (MLA's trailing part), any start that
 * fits. Heads narrower than min_d rotate whole. Returns rope_dim (0: the default, all of D from the offset). */
static int64_t draw_rope_dims(draw *g, cJSON *attrs, int64_t d, int64_t min_d) {
    cJSON_AddStringToObject(attrs, "rope_mode", chance(g, 0.5) ? "neox" : "gptj");
    const int64_t rd = chance(g, 0.5) || d < min_d ? 0 : 2 * ifa_rng_int(&g->r, 1, d / 2);
    if (rd) cJSON_AddNumberToObject(attrs, "rope_dim", (double)rd);
    const int64_t ro = rd && rd < d && chance(g, 0.4) ? ifa_rng_int(&g->r, 1, d - rd) : 0;
    if (ro) cJSON_AddNumberToObject(attrs, "rope_offset", (double)ro);
    return rd;
}

/* The planner's knobs: the device's row, or the GPU work-group shapes on the CPU, with split knobs that push
 * small cases into each flash-decoding mode. */
static void draw_tuning(draw *g, char *t, size_t n) {
    static const int64_t chunks[] = {16, 32, 64, 128}, mins[] = {16, 16, 64, 512}, waves[] = {4, 64, 64};
    static const int64_t milli[] = {1, 1100, 1000000}, mh[] = {0, 8, 32};
    int w = 0;
    const double shape = ifa_rng_uniform(&g->r, 0, 1);
    if (shape < 0.25)
        w = snprintf(t, n, "work_group_size=16,chunk_rows=%d,vector_width=1,pv_block=1,",
                     (int)pick(g, chunks, 4));
    else if (shape < 0.35) { /* 8-wide loads, the key tile or the lane shape (1 to 8 rows a step, loads ahead or
                              * not, the transposing butterfly or not, head groups of 1 to 8 rows or not, the query
                              * from local memory or registers), or the matrix shape where it fits (1 or 2 warps,
                              * either variant, int8 or bf16 K/V or not, its groups capped at the lane groups' rows
                              * below 8: no draw of its own, so that earlier seeds keep their cases). Drawn one
                              * statement each: the order of a call's arguments is the compiler's, and a seed must
                              * mean the same case everywhere. */
        int v[12];
        v[0] = chance(g, 0.5) ? 64 : 32;
        v[1] = (int)pick(g, chunks + 1, 3);
        v[2] = (int)chance(g, 0.5);
        v[3] = chance(g, 0.5) ? (int)ifa_rng_int(&g->r, 1, 8) : 0;
        v[4] = (int)chance(g, 0.5);
        v[5] = (int)chance(g, 0.6);
        v[6] = (int)chance(g, 0.5);
        v[7] = (int)ifa_rng_int(&g->r, 1, 8);
        v[8] = (int)chance(g, 0.4);
        v[9] = chance(g, 0.5) ? (int)ifa_rng_int(&g->r, 1, 2) : 0;
        v[10] = (int)chance(g, 0.5);
        v[11] = (int)chance(g, 0.5);
        w = snprintf(t, n,
                     "work_group_size=%d,chunk_rows=%d,vector_width=1,pv_block=1,vector_loads=1,key_tile=%d,lanes=%d,"
                     "lane_prefetch=%d,lane_scores=%d,lane_head_groups=%d,lane_group_rows=%d,lane_q_local=%d,mma=%d,"
                     "mma_int8=%d,mma_bf16=%d,mma_group_rows=%d,mma_q_local=%d,",
                     v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[7] < 8 ? v[7] : 0,
                     v[8]); /* the query from local memory: the lane shape's draw serves the matrix shapes' */
    } else if (shape < 0.6) {
        const int c = (int)pick(g, chunks, 4);
        w = snprintf(t, n, "chunk_rows=%d,multi_head_rows=%d,", c, (int)pick(g, mh, 3));
    }
    /* snprintf returns the length it wanted: past the buffer, the cursor stops at its end (the string is cut) */
    if (w < 0) w = 0;
    if ((size_t)w >= n) w = (int)n - 1;
    if (chance(g, 0.6)) {
        const int a = (int)pick(g, mins, 4), b = (int)pick(g, waves, 3), c = (int)ifa_rng_int(&g->r, 1, 2);
        /* the last split's combine or the combine kernel: from the draws above (a new draw would change every
         * earlier seed's later cases) */
        w += snprintf(t + w, n - (size_t)w, "split_min_tokens=%d,split_waves=%d,split_rowmax=%d,balance_milli=%d,"
                      "fused_combine=%d,", a, b, c, (int)pick(g, milli, 3), (a / 16 + b / 4) % 2);
        if ((size_t)w >= n) w = (int)n - 1;
    }
    if (w > 0 && t[w - 1] == ',') t[w - 1] = '\0';
}

int ifa_random_case_make(uint64_t seed, ifa_random_case *out) { return ifa_random_case_make_wide(seed, 0.05, out); }

int ifa_random_case_make_wide(uint64_t seed, double wide_share, ifa_random_case *out) {
    memset(out, 0, sizeof *out);
    draw g = {{0}, seed, 0};
    ifa_rng_seed(&g.r, seed * 0x9E3779B97F4A7C15ull + 17);
    static const char *const layouts[] = {"BSH", "BSND", "BNSD"};
    static const char *const floats[] = {"float16", "bfloat16", "float32"};
    static const int64_t groups[] = {1, 1, 2, 3, 4, 5, 8, 16}, dims[] = {8, 16, 24, 40, 64, 64, 80, 96, 128, 128, 256};
    static const int64_t block_sizes[] = {1, 3, 16, 16, 32, 64, 128};
    char *sum = out->summary;
    const size_t sum_n = sizeof out->summary;

    const int layout = (int)ifa_rng_int(&g.r, 0, 2);
    const char *qdt = floats[chance(&g, 0.2) ? 2 : ifa_rng_int(&g.r, 0, 1)];
    const double kind = ifa_rng_uniform(&g.r, 0, 1);
    const char *kvdt = kind < 0.6    ? (chance(&g, 0.8) ? qdt : floats[ifa_rng_int(&g.r, 0, 2)])
                       : kind < 0.75 ? "int8"
                       : kind < 0.85 ? "int4"
                       : kind < 0.95 ? "float8_e4m3fn"
                                     : "float8_e5m2";
    const int int_kv = kind >= 0.6 && kind < 0.85, fp8 = kind >= 0.85, float_kv = kind < 0.6;
    const int64_t nkv = ifa_rng_int(&g.r, 1, 4), grp = pick(&g, groups, 8), n = nkv * grp;
    int64_t d = pick(&g, dims, 11);
    /* one case in 20 past 256 columns (wide_share: ifa-soak --wide): D = 512, or DeepSeek's MLA (576, the value its
     * first 512, below), where the GPU shapes take several chunks of 8 columns a lane (Zen 4, 2026-11-29) and the
     * latent tile 16 rows (Zen 4, 2026-11-29) */
    ifa_rng wide;
    ifa_rng_seed(&wide, seed * 0x9E3779B97F4A7C15ull + 31);
    if (ifa_rng_uniform(&wide, 0, 1) < wide_share) d = ifa_rng_uniform(&wide, 0, 1) < 0.5 ? 512 : 576;
    const int64_t b = ifa_rng_int(&g.r, 1, 5), sq = chance(&g, 0.6) ? 1 : ifa_rng_int(&g.r, 2, 4);
    if (d >= 256 && n * sq > 16) d = 128;
    int64_t s = ifa_rng_int(&g.r, 1, 600);
    while (s > 8 && (double)b * (double)n * (double)sq * (double)s * (double)d > 2e7) s /= 2; /* the reference's time */
    const int paged = chance(&g, 0.3);
    const int64_t bs = paged ? pick(&g, block_sizes, 7) : 0, cols = paged ? (s + bs - 1) / bs : 0;
    const int64_t skv = paged ? cols * bs : s;

    /* lengths: absent (every batch sees S_kv), one for all, or one per batch with zeros and full ones */
    const double lmode = ifa_rng_uniform(&g.r, 0, 1);
    const int64_t nlens = !paged && lmode < 0.2 ? 0 : lmode < 0.4 ? 1 : b;
    int64_t lens[8] = {0}, max_raw = nlens ? 0 : skv, min_raw = skv;
    for (int64_t i = 0; i < nlens; ++i) {
        const double u = ifa_rng_uniform(&g.r, 0, 1);
        lens[i] = u < 0.1 ? 0 : u < 0.25 ? s : u < 0.3 ? 1 : ifa_rng_int(&g.r, 0, s);
        if (lens[i] > max_raw) max_raw = lens[i];
        if (lens[i] < min_raw) min_raw = lens[i];
    }
    const int64_t cover = max_raw > 0 ? max_raw : 1; /* masks and biases: at least the longest length */

    cJSON *root = cJSON_CreateObject(), *attrs, *in;
    if (!root) return -1;
    cJSON_AddStringToObject(root, "op", "IncreFlashAttention");
    cJSON_AddBoolToObject(root, "poison_unread", 1);
    attrs = cJSON_AddObjectToObject(root, "attrs");
    in = cJSON_AddObjectToObject(root, "inputs");
    cJSON_AddNumberToObject(attrs, "num_heads", (double)n);
    cJSON_AddNumberToObject(attrs, "num_key_value_heads", (double)nkv);
    cJSON_AddNumberToObject(attrs, "scale_value", ifa_rng_uniform(&g.r, 0.05, 0.5));
    cJSON_AddStringToObject(attrs, "input_layout", layouts[layout]);
    cJSON_AddBoolToObject(attrs, "softmax_lse_flag", chance(&g, 0.7));
    snprintf(sum, sum_n, "%s q=%s kv=%s B=%lld N=%lld N_kv=%lld D=%lld S1=%lld S=%lld", layouts[layout], qdt, kvdt,
             (long long)b, (long long)n, (long long)nkv, (long long)d, (long long)sq, (long long)skv);

    int64_t sh[4];
    int nd = layout_shape(layout, b, sq, n, d, sh);
    cJSON_AddItemToObject(in, "query", tensor(&g, sh, nd, qdt, -1, 1));
    const double kv_hi = !strcmp(kvdt, "int8") ? 128 : !strcmp(kvdt, "int4") ? 8 : fp8 ? 4 : 1;
    int64_t pool = 0;
    if (paged) {
        /* a shuffled pool holding the blocks each batch's length uses, a few spare; unused table entries are
         * wild ids the op must not look at */
        int64_t used[8], total = 0;
        for (int64_t i = 0; i < b; ++i) total += used[i] = (lens[nlens == 1 ? 0 : i] + bs - 1) / bs;
        pool = total + ifa_rng_int(&g.r, 1, 3);
        int64_t *perm = ifa_rng_permutation(&g.r, pool), *row = malloc((size_t)cols * sizeof *row);
        if (!perm || !row) {
            free(perm), free(row), cJSON_Delete(root);
            return -1;
        }
        cJSON *table = cJSON_AddArrayToObject(in, "block_table");
        for (int64_t i = 0, next = 0; i < b; ++i) {
            for (int64_t c = 0; c < cols; ++c) row[c] = c < used[i] ? perm[next++] : (c % 2 ? -1 : 1000000 + c);
            cJSON_AddItemToArray(table, int_array(row, cols));
        }
        free(perm), free(row);
        cJSON_AddNumberToObject(attrs, "block_size", (double)bs);
        nd = layout_shape(layout, pool, bs, nkv, d, sh); /* (blocks, rows of a block, ...) */
        add_summary(sum, sum_n, "paged");
    } else {
        nd = layout_shape(layout, b, s, nkv, d, sh);
    }
    cJSON_AddItemToObject(in, "key", tensor(&g, sh, nd, kvdt, -kv_hi, kv_hi));
    cJSON_AddItemToObject(in, "value", tensor(&g, sh, nd, kvdt, -kv_hi, kv_hi));
    /* multi-head latent attention: D_v < D, half the time with the key itself as the value */
    ifa_rng latent;
    ifa_rng_seed(&latent, seed * 0x2545F4914F6CDD1Dull + 29);
    int64_t dv = d;
    if (d > 1 && (ifa_rng_uniform(&latent, 0, 1) < 0.15 || d == 576)) {
        const double u = ifa_rng_uniform(&latent, 0, 1);
        dv = d == 576                   ? 512
             : u < 0.4                  ? d / 2
             : u < 0.7 && d > 8         ? 8 * ifa_rng_int(&latent, 1, (d - 1) / 8)
                                        : ifa_rng_int(&latent, 1, d - 1);
        cJSON_AddNumberToObject(attrs, "value_head_dim", (double)dv);
        const int value_is_key = ifa_rng_uniform(&latent, 0, 1) < 0.5;
        if (value_is_key) cJSON_ReplaceItemInObject(in, "value", cJSON_CreateString("key"));
        char what[48];
        snprintf(what, sizeof what, "D_v=%lld%s", (long long)dv, value_is_key ? "(value=key)" : "");
        add_summary(sum, sum_n, what);
    }
    /* device facts (the same second generator): 64 compute units push a CPU's plans into splits with the device's
     * own tuning row; another native width gives the vector shape's tiles of another register file */
    const double fu = ifa_rng_uniform(&latent, 0, 1), fw = ifa_rng_uniform(&latent, 0, 1);
    static const int64_t widths[] = {4, 8, 16};
    const int64_t width = widths[ifa_rng_int(&latent, 0, 2)];
    int fn = 0;
    if (fu < 0.25) fn = snprintf(out->facts, sizeof out->facts, "compute_units=64");
    if (fw < 0.25)
        fn += snprintf(out->facts + fn, sizeof out->facts - (size_t)fn, "%snative_float_width=%d", fn ? "," : "",
                       (int)width);
    /* a CPU's other tuning row (AMD's or Intel's), from a generator of its own so that the draws above keep
     * their sequence; a GPU ignores it */
    ifa_rng row;
    ifa_rng_seed(&row, seed * 0x9E3779B97F4A7C15ull + 31);
    const double fv = ifa_rng_uniform(&row, 0, 1);
    if (fv < 0.3)
        snprintf(out->facts + fn, sizeof out->facts - (size_t)fn, "%svendor=%d", fn ? "," : "",
                 fv < 0.15 ? (int)IFA_VENDOR_CPU : (int)IFA_VENDOR_CPU_INTEL);
    if (nlens) cJSON_AddItemToObject(in, "actual_seq_lengths", int_array(lens, nlens));
    /* per-batch query tokens (the second generator): batches with fewer than S1 tokens, idle ones with none */
    if (per_batch_counts(&latent, 0.2, b, sq, in, "actual_seq_lengths_q")) add_summary(sum, sum_n, "q_tokens");
    if (!paged && nlens && chance(&g, 0.15)) {
        cJSON_AddNumberToObject(in, "kv_padding_size", (double)ifa_rng_int(&g.r, 0, s));
        add_summary(sum, sum_n, "kv_padding");
    }

    /* a shared prefix excludes masks, biases, windows, quantised KV and the cv template */
    const int prefix = float_kv && chance(&g, 0.12);
    if (prefix) {
        const int64_t sp = ifa_rng_int(&g.r, 1, 300);
        nd = layout_shape(layout, 1, sp, nkv, d, sh);
        cJSON_AddItemToObject(in, "key_shared_prefix", tensor(&g, sh, nd, kvdt, -1, 1));
        cJSON_AddItemToObject(in, "value_shared_prefix", tensor(&g, sh, nd, kvdt, -1, 1));
        if (chance(&g, 0.5)) cJSON_AddNumberToObject(in, "actual_shared_prefix_len", (double)ifa_rng_int(&g.r, 0, sp));
        add_summary(sum, sum_n, "prefix");
    }
    if (!prefix && chance(&g, 0.2)) {
        static const char *const mdt[] = {"bool", "int8", "uint8"};
        const int per_token = sq > 1 && chance(&g, 0.5);
        const int64_t mb = b + ifa_rng_int(&g.r, 0, 1), ml = cover + ifa_rng_int(&g.r, 0, 4);
        const int form = per_token ? 4 : (int)ifa_rng_int(&g.r, 2, 4);
        int64_t ms[4] = {mb, 1, 1, 1};
        ms[form - 1] = ml;
        if (per_token) ms[2] = sq;
        cJSON_AddItemToObject(in, "atten_mask", tensor(&g, ms, form, mdt[ifa_rng_int(&g.r, 0, 2)], 0, 1.25));
        add_summary(sum, sum_n, per_token ? "mask=per_token" : "mask");
    }
    if (!prefix && chance(&g, 0.15)) {
        const int64_t ps[4] = {chance(&g, 0.5) ? 1 : b, n, sq, cover + ifa_rng_int(&g.r, 0, 3)};
        cJSON_AddItemToObject(in, "pse_shift", tensor(&g, ps, 4, qdt, -2, 2));
        add_summary(sum, sum_n, "pse");
    }
    if (!prefix && chance(&g, 0.2)) {
        const int64_t as[2] = {b, n};
        const int per_batch = chance(&g, 0.5);
        cJSON_AddItemToObject(in, "alibi_slopes", tensor(&g, as + !per_batch, 1 + per_batch, "float32", 0, 0.5));
        add_summary(sum, sum_n, "alibi");
    }
    if (chance(&g, 0.15)) {
        cJSON_AddNumberToObject(attrs, "softcap", ifa_rng_uniform(&g.r, 5, 50));
        add_summary(sum, sum_n, "softcap");
    }
    if (!prefix && chance(&g, 0.15)) {
        cJSON_AddNumberToObject(attrs, "window", (double)ifa_rng_int(&g.r, 1, s));
        add_summary(sum, sum_n, "window");
    }
    if (chance(&g, 0.15)) {
        const int64_t ns[1] = {n};
        cJSON_AddItemToObject(in, "sinks", tensor(&g, ns, 1, "float32", -3, 6));
        add_summary(sum, sum_n, "sinks");
    }
    if (int_kv || (fp8 && chance(&g, 0.5))) {
        /* antiquant: mode 0 (per channel, three shapes, or per tensor), 1 per token, 2 per head and token, 3 with
         * the pages; antiquant_scale's (2, ...) form, or (a third of the cases) the key's and the value's own
         * tensors, each in a mode of its own */
        const int separate = chance(&g, 0.3);
        static const char *const names[3][3] = {{"antiquant_scale", "antiquant_offset", "antiquant_mode"},
                                                {"key_antiquant_scale", "key_antiquant_offset", "key_antiquant_mode"},
                                                {"value_antiquant_scale", "value_antiquant_offset", "value_antiquant_mode"}};
        char what[48];
        snprintf(what, sizeof what, "antiquant=");
        for (int side = separate; side < (separate ? 3 : 1); ++side) {
            const int mode = (int)ifa_rng_int(&g.r, 0, paged ? 3 : 2), lead = !separate;
            const char *sdt = mode == 0 ? floats[ifa_rng_int(&g.r, 0, 2)] : "float32";
            int64_t ss[4], *sh = ss + lead; /* the shape after the leading 2 of the (2, ...) form */
            int snd;
            ss[0] = 2;
            if (mode == 0) {
                const int form = (int)ifa_rng_int(&g.r, 0, 3);
                snd = form == 0 ? (sh[0] = 1, !lead) : form == 1 ? (sh[0] = nkv, sh[1] = 1, sh[2] = d, 3)
                                                    : form == 2 ? (sh[0] = nkv, sh[1] = d, 2)
                                                                : (sh[0] = nkv * d, 1);
            } else if (mode == 3) {
                sh[0] = pool, sh[1] = nkv, sh[2] = bs, snd = 3;
            } else {
                const int64_t len = paged ? cover + ifa_rng_int(&g.r, 0, 3) : s;
                sh[0] = b, snd = mode == 1 ? (sh[1] = len, 2) : (sh[1] = nkv, sh[2] = len, 3);
            }
            snd += lead;
            const double lo = !strcmp(kvdt, "int8") ? 0.002 : !strcmp(kvdt, "int4") ? 0.02 : 0.05;
            cJSON_AddItemToObject(in, names[side][0], tensor(&g, ss, snd, sdt, lo, lo * 10));
            if (chance(&g, 0.5)) cJSON_AddItemToObject(in, names[side][1], tensor(&g, ss, snd, sdt, -kv_hi / 20, kv_hi / 20));
            cJSON_AddNumberToObject(attrs, names[side][2], mode);
            snprintf(what + strlen(what), sizeof what - strlen(what), side == 2 ? "/%d" : "%d", mode);
        }
        add_summary(sum, sum_n, what);
    }
    if (chance(&g, 0.1)) {
        const int form = (int)ifa_rng_int(&g.r, 0, 2);
        const int64_t qs[2] = {form == 0 ? 1 : form == 1 ? n * dv : n, dv}; /* over the output's N·D_v */
        const char *q2dt = floats[ifa_rng_int(&g.r, 0, 2)];
        cJSON_AddItemToObject(in, "quant_scale2", tensor(&g, qs, form == 2 ? 2 : 1, q2dt, 20, 200));
        if (chance(&g, 0.5)) cJSON_AddItemToObject(in, "quant_offset2", tensor(&g, qs, form == 2 ? 2 : 1, q2dt, -20, 20));
        add_summary(sum, sum_n, "int8_out");
    }
    if (chance(&g, 0.15)) {
        const int64_t rd = draw_rope_dims(&g, attrs, d, 0);
        /* the default positions (length - S1) must not be negative */
        const int explicit_pos = chance(&g, 0.6) || min_raw < sq;
        int64_t pos[8], last = max_raw - 1;
        if (explicit_pos) {
            last = 0;
            for (int64_t i = 0; i < b; ++i) {
                pos[i] = ifa_rng_int(&g.r, 0, 3000);
                if (pos[i] + sq - 1 > last) last = pos[i] + sq - 1;
            }
            cJSON_AddItemToObject(in, "rope_positions", int_array(pos, b));
        }
        if (chance(&g, 0.4)) {
            const int64_t ts[2] = {(last >= 0 ? last + 1 : 1) + ifa_rng_int(&g.r, 0, 3), (rd ? rd : d) / 2};
            cJSON_AddItemToObject(in, "rope_cos", tensor(&g, ts, 2, "float32", -1, 1));
            cJSON_AddItemToObject(in, "rope_sin", tensor(&g, ts, 2, "float32", -1, 1));
        } else if (chance(&g, 0.5)) {
            cJSON_AddNumberToObject(attrs, "rope_theta", 500000);
        }
        add_summary(sum, sum_n, "rope");
    }
    const double tmpl = ifa_rng_uniform(&g.r, 0, 1);
    if (!prefix && tmpl < 0.2) {
        cJSON_AddStringToObject(attrs, "template_mode", "cv");
        add_summary(sum, sum_n, "template=cv");
    } else if (tmpl > 0.9) {
        cJSON_AddStringToObject(attrs, "template_mode", "all_vector");
    }
    draw_tuning(&g, out->tuning, sizeof out->tuning);
    /* last, so that the draws above stay as they were for a seed: on a CPU, K/V of 2 MiB and more then come in
     * whole huge pages at the tuning row's offset (CL_MEM_USE_HOST_PTR), as ifa-bench and ifa-decode run */
    out->buffer_create = chance(&g, 0.5);
    /* 1 in 8: the kernels' index arithmetic past 2^31 bytes (int4's nibbles near 2^32 on PoCL) */
    out->far_kv = chance(&g, 0.125);
    if (out->far_kv) add_summary(sum, sum_n, "kv=far");
    else if (out->buffer_create) add_summary(sum, sum_n, "buffers=created");
    return finish(root, out);
}

int ifa_random_append_case_make(uint64_t seed, ifa_random_case *out) {
    memset(out, 0, sizeof *out);
    draw g = {{0}, seed, 0};
    ifa_rng_seed(&g.r, seed * 0xD1B54A32D192ED03ull + 41);
    static const char *const layouts[] = {"BSH", "BSND", "BNSD"};
    static const char *const floats[] = {"float16", "bfloat16", "float32"};
    static const int64_t dims[] = {8, 16, 24, 40, 64, 72, 128, 136, 256, 576}, block_sizes[] = {1, 3, 16, 32, 64};
    char *sum = out->summary;
    const size_t sum_n = sizeof out->summary;

    const int layout = (int)ifa_rng_int(&g.r, 0, 2);
    const char *src = floats[ifa_rng_int(&g.r, 0, 2)];
    const double kind = ifa_rng_uniform(&g.r, 0, 1);
    const char *cdt = kind < 0.4    ? floats[ifa_rng_int(&g.r, 0, 2)]
                      : kind < 0.6  ? "int8"
                      : kind < 0.75 ? "int4"
                      : kind < 0.87 ? "float8_e4m3fn"
                                    : "float8_e5m2";
    const int int_cache = kind >= 0.4 && kind < 0.75, fp8 = kind >= 0.75;
    const int64_t nkv = ifa_rng_int(&g.r, 1, 4), d = pick(&g, dims, 10), b = ifa_rng_int(&g.r, 1, 5);
    const int64_t s1 = chance(&g, 0.6) ? 1 : ifa_rng_int(&g.r, 2, 4);
    const int paged = chance(&g, 0.5);
    const int64_t bs = paged ? pick(&g, block_sizes, 5) : 0;
    int64_t cap = ifa_rng_int(&g.r, s1, 300); /* positions per sequence */
    if (paged) cap = (cap + bs - 1) / bs * bs;
    const int key_only = chance(&g, 0.2);

    cJSON *root = cJSON_CreateObject(), *attrs, *in;
    if (!root) return -1;
    cJSON_AddStringToObject(root, "op", "KVCacheAppend");
    attrs = cJSON_AddObjectToObject(root, "attrs");
    in = cJSON_AddObjectToObject(root, "inputs");
    cJSON_AddStringToObject(attrs, "input_layout", layouts[layout]);
    cJSON_AddNumberToObject(attrs, "num_key_value_heads", (double)nkv);
    snprintf(sum, sum_n, "KVCacheAppend %s %s -> %s B=%lld N_kv=%lld D=%lld S1=%lld cap=%lld", layouts[layout], src,
             cdt, (long long)b, (long long)nkv, (long long)d, (long long)s1, (long long)cap);

    /* lengths: one for all or one per batch, each leaving room for the new rows */
    const int64_t nlens = chance(&g, 0.3) ? 1 : b;
    int64_t lens[5];
    for (int64_t i = 0; i < nlens; ++i) lens[i] = chance(&g, 0.15) ? 0 : ifa_rng_int(&g.r, 0, cap - s1);
    cJSON_AddItemToObject(in, "cache_seq_lengths", int_array(lens, nlens));
    int64_t sh[4];
    int nd = layout_shape(layout, b, s1, nkv, d, sh);
    cJSON_AddItemToObject(in, "key", tensor(&g, sh, nd, src, -3, 3));
    if (!key_only) cJSON_AddItemToObject(in, "value", tensor(&g, sh, nd, src, -3, 3));
    int64_t units = b, rows = cap;
    if (paged) {
        /* each batch owns cap / bs distinct blocks of a shuffled pool with spares; entries past what a batch
         * writes are -1 or wild ids */
        const int64_t cols = cap / bs, pool = b * cols + ifa_rng_int(&g.r, 0, 3);
        int64_t *perm = ifa_rng_permutation(&g.r, pool), *row = malloc((size_t)cols * sizeof *row);
        if (!perm || !row) {
            free(perm), free(row), cJSON_Delete(root);
            return -1;
        }
        cJSON *table = cJSON_AddArrayToObject(in, "block_table");
        for (int64_t i = 0; i < b; ++i) {
            const int64_t last = (lens[nlens == 1 ? 0 : i] + s1 - 1) / bs; /* the last block the batch writes */
            for (int64_t c = 0; c < cols; ++c) row[c] = c <= last ? perm[i * cols + c] : c % 2 ? -1 : 1000000 + c;
            cJSON_AddItemToArray(table, int_array(row, cols));
        }
        free(perm), free(row);
        cJSON_AddNumberToObject(attrs, "block_size", (double)bs);
        units = pool, rows = bs;
        add_summary(sum, sum_n, "paged");
    }
    nd = layout_shape(layout, units, rows, nkv, d, sh);
    const double c_hi = int_cache ? (!strcmp(cdt, "int8") ? 128 : 8) : fp8 ? 4 : 1;
    cJSON_AddItemToObject(in, "key_cache", tensor(&g, sh, nd, cdt, -c_hi, c_hi));
    if (!key_only) cJSON_AddItemToObject(in, "value_cache", tensor(&g, sh, nd, cdt, -c_hi, c_hi));
    else add_summary(sum, sum_n, "key_only");
    if (!key_only && (int_cache || fp8) && chance(&g, 0.3)) {
        /* the separate form: each side's scales given (mode 0: per tensor or channel, read) or written per
         * token and head (mode 2, 3 paged); given ones span the new rows' range or less (saturating) */
        static const char *const names[2][3] = {{"key_antiquant_scale", "key_antiquant_offset", "key_antiquant_mode"},
                                                {"value_antiquant_scale", "value_antiquant_offset", "value_antiquant_mode"}};
        const double qmax = !strcmp(cdt, "int8") ? 127 : !strcmp(cdt, "int4") ? 7 : !strcmp(cdt, "float8_e5m2") ? 57344 : 448;
        char what[32];
        snprintf(what, sizeof what, "separate=");
        for (int side = 0; side < 2; ++side) {
            const int given = chance(&g, 0.5), asym = int_cache && chance(&g, 0.5);
            int64_t ss[3] = {units, nkv, rows};
            int snd = 3;
            if (given) {
                const int form = (int)ifa_rng_int(&g.r, 0, 2);
                snd = form == 0 ? (ss[0] = 1, 1) : form == 1 ? (ss[0] = nkv, ss[1] = d, 2) : (ss[0] = nkv * d, 1);
            }
            const char *sdt = given ? floats[ifa_rng_int(&g.r, 0, 2)] : "float32";
            const double lo = given ? 2.5 / qmax : 0.01;
            cJSON_AddItemToObject(in, names[side][0], tensor(&g, ss, snd, sdt, lo, lo * 2));
            if (asym) cJSON_AddItemToObject(in, names[side][1], tensor(&g, ss, snd, sdt, given ? -1 : -3, given ? 1 : 3));
            cJSON_AddNumberToObject(attrs, names[side][2], given ? 0 : paged ? 3 : 2);
            snprintf(what + strlen(what), sizeof what - strlen(what), side ? "/%s" : "%s", given ? "given" : "written");
        }
        add_summary(sum, sum_n, what);
    } else if (int_cache || (fp8 && chance(&g, 0.5))) {
        const int64_t ss[4] = {2, units, nkv, rows};
        cJSON_AddItemToObject(in, "antiquant_scale", tensor(&g, ss, 4, "float32", 0.01, 0.02));
        const int asym = int_cache && chance(&g, 0.5);
        if (asym) cJSON_AddItemToObject(in, "antiquant_offset", tensor(&g, ss, 4, "float32", -3, 3));
        add_summary(sum, sum_n, asym ? "scales+offsets" : "scales");
    }
    if (chance(&g, 0.25)) {
        const int64_t rd = draw_rope_dims(&g, attrs, d, 4);
        int64_t pos[5], last = cap;
        if (chance(&g, 0.5)) {
            last = 0;
            for (int64_t i = 0; i < b; ++i) {
                pos[i] = ifa_rng_int(&g.r, 0, 5000);
                if (pos[i] + s1 > last) last = pos[i] + s1;
            }
            cJSON_AddItemToObject(in, "rope_positions", int_array(pos, b));
        }
        if (chance(&g, 0.3)) {
            const int64_t ts[2] = {last + 1, (rd ? rd : d) / 2};
            cJSON_AddItemToObject(in, "rope_cos", tensor(&g, ts, 2, "float32", -1, 1));
            cJSON_AddItemToObject(in, "rope_sin", tensor(&g, ts, 2, "float32", -1, 1));
        }
        add_summary(sum, sum_n, "rope");
    }
    /* rows to write per batch (a second generator of the seed, so that earlier seeds keep their draws) */
    ifa_rng more;
    ifa_rng_seed(&more, seed * 0x2545F4914F6CDD1Dull + 43);
    if (per_batch_counts(&more, 0.25, b, s1, in, "new_seq_lengths")) add_summary(sum, sum_n, "new_rows");
    if (chance(&g, 0.3)) { /* the GPU shapes: several work-items and KV heads per work-group */
        static const int64_t wgs[] = {2, 16, 64}, heads[] = {1, 2, 4};
        const int wg = (int)pick(&g, wgs, 3); /* drawn before the call: its arguments' order is the compiler's */
        snprintf(out->tuning, sizeof out->tuning, "append_work_group_size=%d,append_heads=%d", wg, (int)pick(&g, heads, 3));
    }
    /* 1 in 8, last (earlier seeds keep their draws): the caches at the end of the largest buffer (ifa-run --far-kv) */
    out->far_kv = ifa_rng_uniform(&more, 0, 1) < 0.125;
    if (out->far_kv) add_summary(sum, sum_n, "cache=far");
    return finish(root, out);
}

int ifa_random_merge_case_make(uint64_t seed, ifa_random_case *out) {
    memset(out, 0, sizeof *out);
    draw g = {{0}, seed, 0};
    ifa_rng_seed(&g.r, seed * 0x94D049BB133111EBull + 53);
    static const char *const floats[] = {"float16", "bfloat16", "float32"};
    static const int64_t dims[] = {1, 8, 40, 64, 128, 512, 576}, parts[] = {1, 2, 3, 8, 33};
    const int64_t np = pick(&g, parts, 5), d = pick(&g, dims, 7);
    const int rank = (int)ifa_rng_int(&g.r, 2, 4); /* partial_outputs (P, rows..., D) with 0 to 2 row dims */
    int64_t sh[4] = {np, 0, 0, 0}, rows = 1;
    for (int i = 1; i < rank - 1; ++i) rows *= sh[i] = ifa_rng_int(&g.r, 1, 40);
    sh[rank - 1] = d;
    const char *pdt = floats[ifa_rng_int(&g.r, 0, 2)], *odt = chance(&g, 0.3) ? floats[ifa_rng_int(&g.r, 0, 2)] : NULL;
    const int lse = chance(&g, 0.7);
    cJSON *root = cJSON_CreateObject(), *attrs, *in;
    if (!root) return -1;
    cJSON_AddStringToObject(root, "op", "MergeAttentionStates");
    attrs = cJSON_AddObjectToObject(root, "attrs");
    in = cJSON_AddObjectToObject(root, "inputs");
    cJSON_AddBoolToObject(attrs, "merged_lse_flag", lse);
    if (odt) cJSON_AddStringToObject(attrs, "out_dtype", odt);
    cJSON_AddItemToObject(in, "partial_outputs", tensor(&g, sh, rank, pdt, -2, 2));
    /* LSEs far apart (one part dominates a row) or close (every part counts) */
    const double spread = chance(&g, 0.5) ? 60 : 3;
    cJSON *lses = tensor(&g, sh, rank - 1, "float32", -spread, spread);
    cJSON_AddItemToObject(in, "partial_lses", lses);
    /* parts that saw no key (-inf): a few, or most, so that whole rows of them occur (a second generator of
     * the seed, so that earlier seeds keep their draws) */
    ifa_rng more;
    ifa_rng_seed(&more, seed * 0x2545F4914F6CDD1Dull + 59);
    const double u = ifa_rng_uniform(&more, 0, 1), ninf = u < 0.2 ? 0.1 : u < 0.35 ? 0.7 : 0;
    if (ninf > 0) cJSON_AddNumberToObject(cJSON_GetObjectItemCaseSensitive(lses, "random"), "neg_inf", ninf);
    snprintf(out->summary, sizeof out->summary, "MergeAttentionStates P=%lld rows=%lld D=%lld %s -> %s lse spread %g%s%s",
             (long long)np, (long long)rows, (long long)d, pdt, odt ? odt : pdt, spread, lse ? " merged_lse" : "",
             ninf > 0 ? (ninf > 0.5 ? " most -inf" : " some -inf") : "");
    return finish(root, out);
}

void ifa_random_case_free(ifa_random_case *c) {
    cJSON_free(c->json);
    c->json = NULL;
}

/* The knobs a case's own draw leaves at its row's values: the vector shape's prefetches, P.V blocks, vector width
 * and all-heads chunks, the balance, the cv template's shape and workspace cap, and the combine's shape. Drawn
 * from a generator of their own so that a seed's case is the same with and without them. */
int ifa_random_tuning_knobs(uint64_t seed, const char *tuning, char *out, size_t n) {
    static const int64_t pv_block[] = {1, 2, 4, 8}, prefetch[] = {0, 1, 3, 8, 16}, pv_rows[] = {0, 1, 2, 4, 8, 16};
    static const int64_t paged[] = {0, 1, 2, 4, 8}, strided[] = {0, 512, 4096, 16384}, ahead[] = {0, 256, 8192};
    static const int64_t chunk_bytes[] = {0, 4096, 32768, 131072}, slice[] = {0, 256}, row[] = {0, 1024};
    static const int64_t heads[] = {0, 8, 64, 256}, widths[] = {2, 4, 8, 16}, cost[] = {1, 32, 256};
    static const int64_t cv_chunk[] = {16, 64, 512}, cv_wg[] = {1, 16, 64}, combine_wg[] = {1, 16, 64, 256};
    static const int64_t cv_mib[] = {2, 16, 64}; /* cv's workspace cap: small ones shrink its chunks, more steps */
    static const int64_t work[] = {0, 1, 64, 4096}; /* the split floor by work: off, a chunk's rows, a few, the CPU row's */
    static const int64_t fuse_bal[] = {0, 1, 8192}; /* balanced units' combine: the kernel, the last piece, the NVIDIA row's */
    static const int64_t pv_8rows[] = {0, 1, 2, 4}; /* an 8-row P.V block's vectors: pv_block's, the CPU row's, more */
    draw g = {.seed = seed};
    ifa_rng_seed(&g.r, seed * 0xD1B54A32D192ED03ull + 97);
    int64_t v[26];
    int k = 0; /* one statement a draw: the order of a call's arguments is the compiler's */
    v[k++] = pick(&g, pv_block, 4);
    v[k++] = pick(&g, prefetch, 5);
    v[k++] = pick(&g, pv_rows, 6);
    v[k++] = pick(&g, pv_rows, 6);
    v[k++] = pick(&g, paged, 5);
    v[k++] = chance(&g, 0.5);
    v[k++] = pick(&g, strided, 4);
    v[k++] = pick(&g, ahead, 3);
    v[k++] = pick(&g, chunk_bytes, 4);
    v[k++] = pick(&g, chunk_bytes, 4);
    v[k++] = pick(&g, chunk_bytes, 4);
    v[k++] = pick(&g, slice, 2);
    v[k++] = pick(&g, row, 2);
    v[k++] = pick(&g, heads, 4);
    v[k++] = chance(&g, 0.5);
    v[k++] = pick(&g, cost, 3);
    v[k++] = pick(&g, cv_chunk, 3);
    v[k++] = pick(&g, cv_wg, 3);
    v[k++] = pick(&g, combine_wg, 4);
    v[k++] = chance(&g, 0.5);
    v[k++] = pick(&g, widths, 4);
    v[k++] = chance(&g, 0.5);
    v[k++] = pick(&g, cv_mib, 3); /* drawn after the others: the draws before it are those of the seeds before it was added */
    v[k++] = pick(&g, work, 4);   /* likewise after cv_mib */
    v[k++] = pick(&g, fuse_bal, 3); /* and after that */
    v[k++] = pick(&g, pv_8rows, 4); /* and after that */
    int w = snprintf(out, n,
                     "pv_block=%d,prefetch_rows=%d,pv_prefetch_rows=%d,pv_prefetch_rows_16=%d,pv_prefetch_paged=%d,"
                     "spread_prefetch=%d,strided_prefetch_bytes=%d,multi_head_prefetch_bytes=%d,"
                     "multi_head_chunk_bytes=%d,multi_head_chunk_bytes_g1=%d,multi_head_chunk_bytes_16=%d,"
                     "multi_head_min_slice_bytes=%d,multi_head_min_row_bytes=%d,multi_head_rows=%d,batch_fast=%d,"
                     "block_cost_rows=%d,cv_chunk_rows=%d,cv_work_group_size=%d,combine_work_group_size=%d,split_fill=%d,"
                     "cv_workspace_mib=%d,split_min_work=%d,fused_balanced=%d,pv_block_8rows=%d",
                     (int)v[0], (int)v[1], (int)v[2], (int)v[3], (int)v[4], (int)v[5], (int)v[6], (int)v[7], (int)v[8],
                     (int)v[9], (int)v[10], (int)v[11], (int)v[12], (int)v[13], (int)v[14], (int)v[15], (int)v[16],
                     (int)v[17], (int)v[18], (int)v[19], (int)v[22], (int)v[23], (int)v[24], (int)v[25]);
    /* a narrower vector than the device's (half the time), where the case did not pick the work-group shape's
     * width of 1: the vector shape's tiles at another width than the row's */
    if (v[21] && w >= 0 && (size_t)w < n && (!tuning || !strstr(tuning, "vector_width=")))
        w += snprintf(out + w, n - (size_t)w, ",vector_width=%d", (int)v[20]);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}
