#define _POSIX_C_SOURCE 200809L /* clock_gettime */
/* ifa-decode: a persistent-batch decode driver, the client an engine would be. N slots serve a seeded
 * trace of requests (or one read from a CSV): requests join when a slot and blocks are free, and every step
 * each active request gets one new token whose K/V row KVCacheAppend writes into a paged cache (random
 * data standing in for a model), then IncreFlashAttention runs over the active slots' gathered context.
 * A host block pool hands out the cache's blocks, shares full blocks between requests with the same token
 * prefix (system prompts, follow-up turns of a finished conversation), keeps finished requests' blocks
 * cached and evicts the least recently released first; when a request cannot grow, the newest request is
 * preempted and later rebuilt from its token ids. docs/kv-cache.md describes it and its report.
 *
 * A token's K/V row is a function of the hash of the token prefix ending at it, so any row can be
 * regenerated on the host: --verify N reads the cache back every N-th step, checks every active request's
 * rows against their regenerated values (exactly for float caches, within the quantisation bound for
 * int8/int4 and the rounding bound for scaled float8) and the attention output against the float64
 * reference over the gathered context.
 *
 * --latent DV runs multi-head latent attention: one cache (no value pool), appended key-only, attended with
 * the key cache as the value and value_head_dim DV (DeepSeek's MLA: --kv-heads 1 --dim 576 --latent 512).
 *
 * --draft K runs speculative decoding's verification steps: each step each request brings its own number of
 * tokens (1 to K: the last accepted token and its drafts), appended in one ragged KVCacheAppend
 * (new_seq_lengths) and attended as K query tokens with actual_seq_lengths_q (the padding tokens NaN: never
 * read); then a seeded share of them is accepted (at least one) and the length moves past those only, so
 * the rejected rows stay in the cache behind the length, never read, and the next step overwrites them. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/args.h"
#include "common/bench_variants.h"
#include "common/block_pool.h"
#include "common/env_check.h"
#include "common/kv_quant.h"
#include "common/pin.h"
#include "common/reference.h"
#include "common/rng.h"
#include "common/runner.h"
#include "common/stream_buffer.h"
#include "op_host/runtime/context.h"
#include "op_host/runtime/tensor_check.h"

static int usage(FILE *f) {
    fprintf(f,
            "usage: ifa-decode [--device SEL] [--slots 8] [--requests 32] [--seed 1] [--trace FILE.csv]\n"
            "                  [--prompt MIN,MAX] [--output MIN,MAX] [--prefixes K] [--prefix-len L]\n"
            "                  [--follow-up P] [--heads 8] [--kv-heads 2] [--dim 64] [--layout BSND]\n"
            "                  [--dtype float16] [--kv-dtype float16|bfloat16|float32|float8_e4m3fn|float8_e5m2|int8|int4]\n"
            "                  [--symmetric] [--scaled] [--kivi]\n"
            "                  [--block-size 16] [--pool-blocks N] [--max-steps N] [--verify N] [--quiet] [--json]\n"
            "                  [--rope neox|gptj] [--template auto|all_vector|cv] [--window W] [--sinks] [--latent DV]\n"
            "                  [--draft K] [--rope-offset R] [--plain-buffers] [--prepare]\n"
            "--trace: CSV lines prompt_len,output_len[,prefix_id] (a header line is skipped; prefix_id -1 = none).\n"
            "--prefixes K --prefix-len L: half the requests open with one of K shared system prompts of L tokens.\n"
            "--follow-up P: a request continues a finished conversation (its tokens, then new ones) with chance P.\n"
            "--verify N: every N-th step, check the cache and the attention output against the float64 reference.\n"
            "--rope: KVCacheAppend rotates each new key at its position and IncreFlashAttention the query (theta 1e4);\n"
            "  --rope-offset R: the dims from R rotate (MLA's trailing 64: --dim 576 --latent 512 --rope-offset 512).\n"
            "--symmetric: int8/int4 scales without offsets; --scaled: a float8 cache scales each row (max|x| / the\n"
            "  format's largest) and the attention applies the scales (per head and token, in the pages).\n"
            "--kivi: an int8/int4 cache in the separate form (KIVI's pairing): keys quantised with per-channel\n"
            "  scales calibrated on the model's rows (given, never written), values per head and token.\n"
            "--template: IncreFlashAttention's template_mode (default: the planner's choice).\n"
            "--window W --sinks: each query sees its last W positions; a seeded sink logit per query head joins the\n"
            "  softmax (the attention of gpt-oss's sliding-window layers).\n"
            "--latent DV: one latent cache, the first DV of each row's D values also the value (MLA: --kv-heads 1\n"
            "  --dim 576 --latent 512); appends write the key only.\n"
            "--draft K: speculative decoding, K in [1, 16]: each step a request verifies 1 to K tokens (ragged append\n"
            "  and query tokens) and accepts 1 to all of them.\n"
            "--prepare: before the first step's attention, build the kernels of every batch size up to --slots and\n"
            "  every length the pool holds (ifa_incre_flash_attention_prepare), so no step's attention builds one.\n"
            "--plain-buffers: the K/V pools and their per-token scales in clCreateBuffer's buffers instead of\n"
            "  ifa_buffer_create's (on a CPU device: whole 2 MiB pages advised for transparent huge pages).\n"
            "--json: the summary as one JSON object on stdout (names with their units: tokens_per_s_decode_steps\n"
            "  over the steps' time, tokens_per_s_wall over the wall time, ...) instead of the text lines.\n"
            "--quiet: no progress lines (stderr) during the run.\n"
            "--help: this text.\n");
    return f == stdout ? 0 : 2;
}

typedef struct opts {
    const char *device, *trace, *layout, *rope, *template_mode;
    int slots, requests, prefixes, verify, quiet, symmetric, scaled, sinks, kivi;
    int plain_buffers; /* the pools in clCreateBuffer's buffers instead of ifa_buffer_create's */
    int json;          /* --json: the summary as one JSON object on stdout */
    int prepare;       /* ifa_incre_flash_attention_prepare before the first attention */
    int64_t prompt_min, prompt_max, output_min, output_max, prefix_len, heads, kv_heads, dim, block_size, pool_blocks;
    int64_t max_steps, window;
    int64_t latent; /* > 0: value_head_dim over one latent cache */
    int64_t draft;  /* > 0: speculative steps of 1 to draft tokens per request */
    int64_t rope_offset; /* --rope: the first rotated dim (the rest of the row rotates) */
    double follow_up;
    uint64_t seed;
    ifa_dtype dtype, kv_dtype;
} opts;

/* A request: its tokens (prompt, then generated), the prefix hash at each position, and the blocks that
 * hold its cached positions. */
typedef struct request {
    int32_t *tokens;
    uint64_t *hash;
    int64_t ntok, cap;
    int64_t prompt_len, output_len, generated, cached; /* cached: positions whose K/V the cache holds */
    int32_t *blocks;
    int64_t nblocks;
    int64_t admitted_step;
    int slot, prefix_id;
} request;

typedef struct stats {
    double *step_us, *attn_us; /* per step that built nothing: its time, its attention's device time */
    int64_t steps, timed, build_steps, tokens, prefill_tokens, reused_tokens, preemptions, verified_steps, block_max;
    int64_t request_steps, verified_tokens; /* --draft: (request, step) pairs and the tokens they brought */
    int64_t attn_build_steps, prepared_sets, prepared_programs; /* attention calls that built; --prepare's sets and builds */
    double prepare_us;
    double build_us, plan_us, wait_us, verify_us, gen_us, wall_us, steps_us, attn_dev_us, append_dev_us, prefill_dev_us;
    double kv_bytes, blocks_sum;
} stats;

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/* Device time from the start of a to the end of b, in µs (0 without profiling). */
static double event_us(cl_event a, cl_event b) {
    cl_ulong ts = 0, te = 0;
    if (clGetEventProfilingInfo(a, CL_PROFILING_COMMAND_START, sizeof ts, &ts, NULL) != CL_SUCCESS ||
        clGetEventProfilingInfo(b, CL_PROFILING_COMMAND_END, sizeof te, &te, NULL) != CL_SUCCESS)
        return 0;
    return (double)(te - ts) * 1e-3;
}

static uint64_t mix(uint64_t x) {
    x ^= x >> 30, x *= 0xbf58476d1ce4e5b9ull, x ^= x >> 27, x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* ---- requests --------------------------------------------------------------------------------------- */

static int push_token(request *r, int32_t tok) {
    if (r->ntok == r->cap) {
        const int64_t cap = r->cap ? 2 * r->cap : 256;
        int32_t *t = realloc(r->tokens, (size_t)cap * sizeof *t);
        if (t) r->tokens = t;
        uint64_t *h = realloc(r->hash, (size_t)cap * sizeof *h);
        if (h) r->hash = h;
        if (!t || !h) return -1;
        r->cap = cap;
    }
    r->tokens[r->ntok] = tok;
    r->hash[r->ntok] = mix((r->ntok ? r->hash[r->ntok - 1] : 0x1fa5eedull) ^ mix((uint64_t)(uint32_t)tok + 1));
    r->ntok++;
    return 0;
}

static void request_free(request *r) {
    free(r->tokens), free(r->hash), free(r->blocks);
    memset(r, 0, sizeof *r);
}

/* The model's stand-in: K and V rows are drawn from a bank of BANK_ROWS rows in the new rows' dtype, each
 * uniform in [-1, 1) around a centre that is 0 for most rows and up to +-2 for some (asymmetric ranges).
 * The row of K (kv 0) or V (kv 1), KV head n, for the token whose prefix hash is h is bank_row(h, kv, n):
 * copying bank rows keeps a 32K-token prefill cheap on the host, and verification finds the same row. */
#define BANK_ROWS 4096

static int64_t bank_row(uint64_t h, int kv, int64_t n) {
    return (int64_t)(mix(h ^ mix((uint64_t)kv * 0x9e37u + (uint64_t)n * 0x85ebu + 7)) % BANK_ROWS);
}

static int make_bank(ifa_host_tensor *bank, ifa_dtype dt, int64_t dim, uint64_t seed) {
    const int64_t sh[2] = {BANK_ROWS, dim};
    if (ifa_host_tensor_alloc(bank, dt, 2, sh) != 0) return -1;
    ifa_rng g;
    ifa_rng_seed(&g, seed * 0x2545f491u + 3);
    for (int64_t r = 0; r < BANK_ROWS; ++r) {
        const double centre = ifa_rng_int(&g, 0, 3) == 0 ? ifa_rng_uniform(&g, -2, 2) : 0.0;
        for (int64_t d = 0; d < dim; ++d) ifa_host_set(bank, r * dim + d, centre + ifa_rng_uniform(&g, -1, 1));
    }
    return 0;
}

/* ---- the driver ---------------------------------------------------------------------------------------- */

typedef struct driver {
    opts o;
    ifa_context *ctx;
    cl_command_queue q;
    cl_context clc;
    ifa_block_pool pool;
    int bnsd, quant;
    int64_t cols;                     /* block-table columns: the most blocks one request may hold */
    ifa_host_tensor pool_shape;       /* dtype and shape of the K and V pools (no data) */
    int64_t scale_shape[4];
    cl_mem kpool, vpool, scale, offset, sinks_buf;
    ifa_host_tensor kscale, koffset;  /* --kivi: the key's given per-channel scales and offsets (N_kv, D) */
    cl_mem kscale_buf, koffset_buf;
    ifa_host_tensor bank;             /* the model's stand-in rows */
    ifa_host_tensor sinks;            /* --sinks: float32 (N), also on the device in sinks_buf */
    cl_mem staging_k, staging_v, query, out, ws;
    size_t staging_k_bytes, staging_v_bytes, query_bytes, out_bytes, ws_bytes;
    request *reqs;                    /* the trace, in arrival order */
    int nreqs, next_req;
    int *waiting;                     /* preempted requests, rebuilt first */
    int nwaiting;
    int *slot_req;                    /* request in each slot, -1 free */
    int *finished;                    /* finished requests, for follow-ups */
    int nfinished;
    ifa_rng rng;
    stats st;
    int64_t verify_failures;
    const char *pocl_affinity; /* POCL_AFFINITY in force (ifa_tool_pin_pocl_workers) */
} driver;

static int fail(const char *what, ifa_status s) {
    fprintf(stderr, "ifa-decode: %s: %s\n", what, s == IFA_STATUS_OK ? "failed" : ifa_last_error());
    return 3;
}

/* A buffer whose memory exists when it returns (ifa_buffer_create; NULL on failure) */
static cl_mem make_buffer(driver *dr, size_t bytes) {
    cl_mem m = NULL;
    return ifa_buffer_create(dr->ctx, CL_MEM_READ_WRITE, bytes ? bytes : 8, &m) == IFA_STATUS_OK ? m : NULL;
}

/* The K/V pools and their per-token scales: what the kernels stream (ifa_buffer_create unless
 * --plain-buffers). NULL on failure, with the message on stderr. */
static cl_mem pool_buffer(driver *dr, size_t bytes) {
    return ifa_tool_stream_buffer(dr->ctx, CL_MEM_READ_WRITE, bytes, dr->o.plain_buffers, "ifa-decode");
}

/* Grows buffer *m to at least bytes. */
static int ensure(driver *dr, cl_mem *m, size_t *have, size_t bytes) {
    if (*m && *have >= bytes) return 0;
    if (*m) clReleaseMemObject(*m);
    *have = bytes + bytes / 2;
    *m = make_buffer(dr, *have);
    return *m ? 0 : -1;
}

/* Descriptor of a layout-shaped tensor of dtype dt with batch b, sequence s, h heads of dim d. */
static ifa_tensor layout_tensor(const driver *dr, cl_mem buf, ifa_dtype dt, int64_t b, int64_t s, int64_t h) {
    ifa_tensor t;
    memset(&t, 0, sizeof t);
    t.buffer = buf, t.dtype = dt;
    const int64_t d = dr->o.dim;
    if (dr->bnsd) t.ndim = 4, t.shape[0] = b, t.shape[1] = h, t.shape[2] = s, t.shape[3] = d;
    else if (strcmp(dr->o.layout, "BSND") == 0) t.ndim = 4, t.shape[0] = b, t.shape[1] = s, t.shape[2] = h, t.shape[3] = d;
    else t.ndim = 3, t.shape[0] = b, t.shape[1] = s, t.shape[2] = h * d;
    return t;
}

static ifa_tensor plain_tensor(cl_mem buf, ifa_dtype dt, int nd, const int64_t *shape) {
    ifa_tensor t;
    memset(&t, 0, sizeof t);
    t.buffer = buf, t.dtype = dt, t.ndim = nd;
    memcpy(t.shape, shape, (size_t)nd * sizeof *shape);
    return t;
}

/* The descriptors of the paged cache: the K and V pools (one latent pool: both the key's), their scales and
 * offsets (int8/int4). */
static void cache_tensors(const driver *dr, ifa_tensor *kc, ifa_tensor *vc, ifa_tensor *sc, ifa_tensor *of) {
    *kc = plain_tensor(dr->kpool, dr->pool_shape.dtype, dr->pool_shape.ndim, dr->pool_shape.shape);
    *vc = *kc;
    vc->buffer = dr->o.latent ? dr->kpool : dr->vpool;
    *sc = plain_tensor(dr->scale, IFA_DTYPE_FLOAT32, 4, dr->scale_shape);
    *of = *sc;
    of->buffer = dr->offset;
}

/* --kivi: the separate form's tensors. The key's given scales (ks, ko), and the value's written ones (vs, vo),
 * which are the value half of the scale and offset buffers, (num_blocks, N_kv, block_size) from there. */
static void kivi_tensors(const driver *dr, ifa_tensor *ks, ifa_tensor *ko, ifa_tensor *vs, ifa_tensor *vo) {
    *ks = plain_tensor(dr->kscale_buf, IFA_DTYPE_FLOAT32, 2, dr->kscale.shape);
    *ko = plain_tensor(dr->koffset_buf, IFA_DTYPE_FLOAT32, 2, dr->kscale.shape);
    *vs = plain_tensor(dr->scale, IFA_DTYPE_FLOAT32, 3, dr->scale_shape + 1);
    vs->offset = (size_t)(dr->scale_shape[1] * dr->scale_shape[2] * dr->scale_shape[3]) * 4;
    *vo = *vs;
    vo->buffer = dr->offset;
}

/* Points args a (append or attention: the same six fields) at the cache's scales: antiquant_scale's (2, ...)
 * form in mode 3, or with --kivi the separate form (keys given per channel, values per head and token). */
#define IFA_DECODE_SCALES(dr, a, sc, of, ks, ko, vs, vo)                                                          \
    do {                                                                                                          \
        if ((dr)->o.kivi) {                                                                                       \
            (a).key_antiquant_scale = &(ks), (a).key_antiquant_offset = (dr)->o.symmetric ? NULL : &(ko);         \
            (a).value_antiquant_scale = &(vs), (a).value_antiquant_offset = (dr)->o.symmetric ? NULL : &(vo);     \
            (a).key_antiquant_mode = 0, (a).value_antiquant_mode = 3;                                             \
        } else if ((dr)->quant) {                                                                                 \
            (a).antiquant_scale = &(sc), (a).antiquant_offset = (dr)->o.symmetric ? NULL : &(of);                 \
        }                                                                                                         \
    } while (0)

/* Appends the next `rows` K/V rows of each request in list (nb of them) at its cached length, regenerated from
 * its prefix hashes; with news (NULL: all rows) request i writes only its first news[i] (new_seq_lengths).
 * *event (if not NULL) receives the append's event; else this waits for it and adds its device time to the
 * append total. */
static int append_rows(driver *dr, const int *list, int nb, int64_t rows, const int64_t *news, cl_event *event) {
    const opts *o = &dr->o;
    const int64_t h = o->kv_heads, d = o->dim;
    const size_t esz = ifa_dtype_size(o->dtype), bytes = (size_t)(nb * rows * h * d) * esz;
    if (ensure(dr, &dr->staging_k, &dr->staging_k_bytes, bytes) != 0 ||
        ensure(dr, &dr->staging_v, &dr->staging_v_bytes, bytes) != 0)
        return fail("staging buffers", IFA_STATUS_OK);
    ifa_host_tensor hk = {0}, hv = {0};
    ifa_tensor tk = layout_tensor(dr, dr->staging_k, o->dtype, nb, rows, h);
    int64_t *lens = malloc((size_t)nb * sizeof *lens);
    int32_t *table = malloc((size_t)(nb * dr->cols) * sizeof *table);
    if (ifa_host_tensor_alloc(&hk, o->dtype, tk.ndim, tk.shape) != 0 ||
        ifa_host_tensor_alloc(&hv, o->dtype, tk.ndim, tk.shape) != 0 || !lens || !table) {
        ifa_host_tensor_free(&hk), ifa_host_tensor_free(&hv);
        free(lens), free(table);
        return fail("host memory", IFA_STATUS_OK);
    }
    const double tg = now_us();
    for (int i = 0; i < nb; ++i) {
        const request *r = &dr->reqs[list[i]];
        lens[i] = r->cached;
        for (int64_t c = 0; c < dr->cols; ++c) table[i * dr->cols + c] = c < r->nblocks ? r->blocks[c] : -1;
        for (int64_t s = 0; s < (news ? news[i] : rows); ++s) /* the rows a ragged append leaves out stay zero */
            for (int kv = 0; kv < (o->latent ? 1 : 2); ++kv) /* one latent cache: the key rows only */
                for (int64_t n = 0; n < h; ++n) /* D is innermost in every layout: one row is one copy */
                    memcpy((char *)(kv ? hv.data : hk.data) + (size_t)ifa_kv_cache_at(dr->bnsd, rows, h, d, i, s, n, 0) * esz,
                           (const char *)dr->bank.data + (size_t)(bank_row(r->hash[r->cached + s], kv, n) * d) * esz,
                           (size_t)d * esz);
    }
    dr->st.gen_us += now_us() - tg; /* the model's stand-in, not the engine's work */
    /* in-order queue: the blocking last write also ends the first, and the previous append has read both */
    cl_int err = clEnqueueWriteBuffer(dr->q, dr->staging_k, o->latent ? CL_TRUE : CL_FALSE, 0, hk.bytes, hk.data, 0,
                                      NULL, NULL);
    if (err == CL_SUCCESS && !o->latent)
        err = clEnqueueWriteBuffer(dr->q, dr->staging_v, CL_TRUE, 0, hv.bytes, hv.data, 0, NULL, NULL);
    ifa_tensor tv = layout_tensor(dr, dr->staging_v, o->dtype, nb, rows, h);
    ifa_tensor kc, vc, sc, of, ks, ko, vs, vo;
    cache_tensors(dr, &kc, &vc, &sc, &of);
    kivi_tensors(dr, &ks, &ko, &vs, &vo);
    ifa_kv_cache_append_args a;
    ifa_kv_cache_append_args_init(&a);
    a.key = &tk, a.value = o->latent ? NULL : &tv, a.key_cache = &kc, a.value_cache = o->latent ? NULL : &vc;
    IFA_DECODE_SCALES(dr, a, sc, of, ks, ko, vs, vo);
    a.cache_seq_lengths = lens, a.cache_seq_lengths_count = nb;
    if (news) a.new_seq_lengths = news, a.new_seq_lengths_count = nb;
    a.input_layout = o->layout, a.num_key_value_heads = h;
    a.block_table = table, a.block_table_cols = dr->cols, a.block_size = o->block_size;
    a.rope_mode = o->rope, a.rope_offset = o->rope_offset; /* each new key rotated at its position, the cache length */
    size_t ws = 0;
    const double t0 = now_us();
    ifa_status s = ifa_kv_cache_append_get_workspace_size(dr->ctx, &a, &ws);
    dr->st.plan_us += now_us() - t0;
    int rc = 0;
    cl_event ev = NULL;
    if (err != CL_SUCCESS) rc = fail("uploading new rows", IFA_STATUS_OK);
    else if (s != IFA_STATUS_OK) rc = fail("KVCacheAppend get_workspace_size", s);
    else if (ensure(dr, &dr->ws, &dr->ws_bytes, ws) != 0) rc = fail("workspace", IFA_STATUS_OK);
    else if ((s = ifa_kv_cache_append_run(dr->ctx, &a, dr->ws, 0, dr->q, 0, NULL, &ev)) != IFA_STATUS_OK)
        rc = fail("KVCacheAppend run", s);
    if (ev && event) {
        *event = ev;
    } else if (ev) {
        const double tw = now_us();
        clWaitForEvents(1, &ev);
        dr->st.wait_us += now_us() - tw;
        dr->st.prefill_dev_us += event_us(ev, ev);
        clReleaseEvent(ev);
    }
    ifa_host_tensor_free(&hk), ifa_host_tensor_free(&hv);
    free(lens), free(table);
    return rc;
}

/* Publishes every full block of r whose last position is cached, so later requests can share it. */
static void publish_full_blocks(driver *dr, request *r, int64_t from_pos) {
    const int64_t bs = dr->o.block_size;
    for (int64_t c = from_pos / bs; (c + 1) * bs <= r->cached; ++c) ifa_block_pool_publish(&dr->pool, r->blocks[c], r->hash[(c + 1) * bs - 1]);
}

static void release_blocks(driver *dr, request *r) {
    for (int64_t c = 0; c < r->nblocks; ++c) ifa_block_pool_release(&dr->pool, r->blocks[c]);
    r->nblocks = 0;
    r->cached = 0;
}

/* Builds request i's prompt tokens when it is first admitted: a system prompt, a finished conversation
 * to continue, or neither, then its own tokens. */
static int build_prompt(driver *dr, request *r) {
    if (r->ntok > 0) return 0; /* preempted: its tokens are kept */
    int64_t own = r->prompt_len;
    if (dr->o.follow_up > 0 && dr->nfinished > 0 && ifa_rng_uniform(&dr->rng, 0, 1) < dr->o.follow_up) {
        const request *f = &dr->reqs[dr->finished[ifa_rng_int(&dr->rng, 0, dr->nfinished - 1)]];
        if (f->ntok + own + r->output_len + 1 <= dr->cols * dr->o.block_size)
            for (int64_t i = 0; i < f->ntok; ++i)
                if (push_token(r, f->tokens[i]) != 0) return -1;
    } else if (r->prefix_id >= 0) {
        ifa_rng g;
        ifa_rng_seed(&g, 0x5157u + (uint64_t)r->prefix_id);
        for (int64_t i = 0; i < dr->o.prefix_len; ++i)
            if (push_token(r, (int32_t)ifa_rng_int(&g, 0, 32000)) != 0) return -1;
    }
    for (int64_t i = 0; i < own; ++i)
        if (push_token(r, (int32_t)ifa_rng_int(&dr->rng, 0, 32000)) != 0) return -1;
    r->prompt_len = r->ntok;
    return 0;
}

/* Admits request i into slot: shares the cached blocks of its longest cached prefix, allocates the rest
 * and prefills the positions not shared. Returns 1 when admitted, 0 when the pool cannot hold it yet. */
static int admit(driver *dr, int i, int slot, int64_t step) {
    request *r = &dr->reqs[i];
    const int64_t bs = dr->o.block_size;
    if (build_prompt(dr, r) != 0) return fail("host memory", IFA_STATUS_OK), -1;
    const int64_t need = (r->ntok + 1 + bs - 1) / bs; /* the prompt and the first generated token */
    if (need > dr->cols) {
        fprintf(stderr, "ifa-decode: request %d needs %lld blocks; the table has %lld columns\n", i, (long long)need,
                (long long)dr->cols);
        return -1;
    }
    if (!r->blocks && !(r->blocks = malloc((size_t)dr->cols * sizeof *r->blocks))) return -1;
    r->nblocks = 0;
    while ((r->nblocks + 1) * bs <= r->ntok) { /* full blocks of the prompt, looked up by their prefix hash */
        const int32_t b = ifa_block_pool_lookup(&dr->pool, r->hash[(r->nblocks + 1) * bs - 1]);
        if (b < 0) break;
        r->blocks[r->nblocks++] = b;
    }
    const int64_t reused = r->nblocks;
    if (ifa_block_pool_available(&dr->pool) < need - reused) {
        release_blocks(dr, r);
        dr->pool.hits -= reused; /* counted again when it is admitted */
        return 0;
    }
    while (r->nblocks < need) r->blocks[r->nblocks++] = ifa_block_pool_alloc(&dr->pool);
    r->cached = reused * bs;
    dr->st.reused_tokens += r->cached;
    while (r->cached < r->ntok) { /* prefill in chunks */
        const int64_t rows = r->ntok - r->cached < 512 ? r->ntok - r->cached : 512;
        if (append_rows(dr, &i, 1, rows, NULL, NULL) != 0) return -1;
        r->cached += rows;
        dr->st.prefill_tokens += rows;
    }
    publish_full_blocks(dr, r, reused * bs);
    r->slot = slot, r->admitted_step = step;
    dr->slot_req[slot] = i;
    return 1;
}

/* Takes the newest active request out (preemption): its blocks go back, its tokens stay for its rebuild. */
static void preempt_newest(driver *dr) {
    int victim = -1;
    for (int s = 0; s < dr->o.slots; ++s) {
        const int i = dr->slot_req[s];
        if (i >= 0 && (victim < 0 || dr->reqs[i].admitted_step >= dr->reqs[victim].admitted_step)) victim = i;
    }
    request *r = &dr->reqs[victim];
    r->ntok = r->cached; /* a token drawn this step but not appended is drawn again after the rebuild */
    release_blocks(dr, r);
    dr->slot_req[r->slot] = -1;
    r->slot = -1;
    dr->waiting[dr->nwaiting++] = victim;
    dr->st.preemptions++;
}

/* Reads a device buffer into a host tensor of the given form. */
static int read_tensor(driver *dr, cl_mem m, ifa_dtype dt, int nd, const int64_t *shape, ifa_host_tensor *t) {
    if (ifa_host_tensor_alloc(t, dt, nd, shape) != 0) return -1;
    return clEnqueueReadBuffer(dr->q, m, CL_TRUE, 0, t->bytes, t->data, 0, NULL, NULL) == CL_SUCCESS ? 0 : -1;
}

/* --kivi: turns the reference case's (2, ...) scales, as read back, into the separate form: the key's given
 * channel scales, the value's half of what was read. */
static int kivi_case(const driver *dr, ifa_case *c) {
    const int64_t half = ifa_host_tensor_numel(&c->antiquant_scale) / 2;
    ifa_host_tensor *from[2] = {&c->antiquant_scale, &c->antiquant_offset};
    ifa_host_tensor *to[2] = {&c->value_antiquant_scale, &c->value_antiquant_offset};
    for (int t = 0; t < (dr->o.symmetric ? 1 : 2); ++t) {
        if (ifa_host_tensor_alloc(to[t], IFA_DTYPE_FLOAT32, 3, dr->scale_shape + 1) != 0) return -1;
        memcpy(to[t]->data, (const float *)from[t]->data + half, to[t]->bytes);
    }
    if (ifa_host_tensor_copy(&c->key_antiquant_scale, &dr->kscale) != 0 ||
        (!dr->o.symmetric && ifa_host_tensor_copy(&c->key_antiquant_offset, &dr->koffset) != 0))
        return -1;
    ifa_host_tensor_free(&c->antiquant_scale), ifa_host_tensor_free(&c->antiquant_offset);
    c->antiquant_mode = 0, c->key_antiquant_mode = 0, c->value_antiquant_mode = 3;
    return 0;
}

/* Checks the cache rows of every request in list and the attention output (out, host) of query (host)
 * against the float64 reference over what the cache holds. Returns the number of failures. */
static int64_t verify_step(driver *dr, const int *list, int nb, const int64_t *lens, const int32_t *table,
                           const int64_t *qlens, const ifa_host_tensor *query, const ifa_host_tensor *out) {
    const opts *o = &dr->o;
    ifa_case c;
    ifa_case_init(&c);
    int64_t bad = 0;
    if (read_tensor(dr, dr->kpool, dr->pool_shape.dtype, dr->pool_shape.ndim, dr->pool_shape.shape, &c.key) ||
        (o->latent ? ifa_host_tensor_copy(&c.value, &c.key)
                   : read_tensor(dr, dr->vpool, dr->pool_shape.dtype, dr->pool_shape.ndim, dr->pool_shape.shape,
                                 &c.value)) ||
        (dr->quant && read_tensor(dr, dr->scale, IFA_DTYPE_FLOAT32, 4, dr->scale_shape, &c.antiquant_scale)) ||
        (dr->quant && !o->symmetric &&
         read_tensor(dr, dr->offset, IFA_DTYPE_FLOAT32, 4, dr->scale_shape, &c.antiquant_offset))) {
        fprintf(stderr, "ifa-decode: verify: cannot read the cache back\n");
        ifa_case_free(&c);
        return 1;
    }
    /* the cache rows: regenerated from the prefix hashes */
    const int64_t h = o->kv_heads, d = o->dim, bs = o->block_size, nblk = dr->scale_shape[1];
    double *x = malloc((size_t)d * sizeof *x);
    ifa_host_tensor one; /* rounding to a float cache's dtype */
    ifa_host_tensor_alloc(&one, dr->pool_shape.dtype, 1, (int64_t[]){1});
    for (int i = 0; x && i < nb; ++i) {
        const request *r = &dr->reqs[list[i]];
        for (int64_t p = 0; p < lens[i]; ++p)
            for (int kv = 0; kv < (o->latent ? 1 : 2); ++kv) /* one latent cache: the key rows */
                for (int64_t n = 0; n < h; ++n) {
                    const int64_t br = bank_row(r->hash[p], kv, n);
                    for (int64_t e = 0; e < d; ++e) x[e] = ifa_host_get(&dr->bank, br * d + e);
                    double rot = 0; /* a rotated key: float32 rotation against this float64 one */
                    if (kv == 0 && o->rope) {
                        ifa_reference_rope(o->rope, 0, 0, o->rope_offset, NULL, NULL, p, x, d);
                        for (int64_t e = 0; e < d; ++e) rot = fmax(rot, 16 * 0x1p-24 * fabs(x[e]));
                    }
                    const int64_t blk = r->blocks[p / bs], row = p % bs, si = ((kv * nblk + blk) * h + n) * bs + row;
                    const double sc = dr->quant ? ifa_host_get(&c.antiquant_scale, si) : 1;
                    const double of = dr->quant && !o->symmetric ? ifa_host_get(&c.antiquant_offset, si) : 0;
                    const int given = o->kivi && kv == 0; /* the key's channel scales (given, calibrated) */
                    double amax = 0;
                    for (int64_t e = 0; e < d; ++e) amax = fmax(amax, fabs(x[e]));
                    int64_t row_bad = 0;
                    for (int64_t e = 0; e < d; ++e) {
                        const double g = ifa_host_get(kv ? &c.value : &c.key,
                                                      ifa_kv_cache_at(dr->bnsd, bs, h, d, blk, row, n, e));
                        if (given) {
                            const double gs = ifa_host_get(&dr->kscale, n * d + e);
                            const double go = o->symmetric ? 0 : ifa_host_get(&dr->koffset, n * d + e);
                            row_bad += !(fabs((g + go) * gs - x[e]) <= ifa_kv_quant_bound(gs, go, fabs(x[e])) + rot);
                        } else if (o->scaled) { /* x / scale rounded to float8 */
                            row_bad += !(fabs(g * sc - x[e]) <= ifa_kv_fp8_bound(o->kv_dtype, sc, x[e]) + rot);
                        } else if (dr->quant) {
                            row_bad += !(fabs((g + of) * sc - x[e]) <= ifa_kv_quant_bound(sc, of, amax) + rot);
                        } else {
                            ifa_host_set(&one, 0, x[e]);
                            const double want = ifa_host_get(&one, 0);
                            /* rotated: the float64 row, within the fp32 rotation and one rounding to the cache */
                            row_bad += rot > 0 ? !(fabs(g - x[e]) <= rot + ifa_kv_round_bound(o->kv_dtype, x[e]))
                                               : g != want;
                        }
                    }
                    if (row_bad && bad++ < 5 && dr->verify_failures == 0)
                        fprintf(stderr, "ifa-decode: verify: request %d position %lld %s head %lld (block %lld row %lld): "
                                "%lld values differ from the token's row\n", list[i], (long long)p, kv ? "V" : "K",
                                (long long)n, (long long)blk, (long long)row, (long long)row_bad);
                }
    }
    free(x);
    ifa_host_tensor_free(&one);
    /* the attention output */
    c.query = *query;
    c.lengths = malloc((size_t)nb * sizeof *c.lengths);
    c.block_table = malloc((size_t)(nb * dr->cols) * sizeof *c.block_table);
    if (!c.lengths || !c.block_table) bad++;
    if (c.lengths) memcpy(c.lengths, lens, (size_t)nb * sizeof *c.lengths);
    if (c.block_table) memcpy(c.block_table, table, (size_t)(nb * dr->cols) * sizeof *c.block_table);
    c.lengths_count = nb;
    if (o->draft > 0) { /* each request's own query tokens */
        c.q_lengths = malloc((size_t)nb * sizeof *c.q_lengths);
        if (!c.q_lengths) bad++;
        else memcpy(c.q_lengths, qlens, (size_t)nb * sizeof *c.q_lengths), c.q_lengths_count = nb;
    }
    c.block_table_cols = dr->cols, c.block_size = bs;
    c.num_heads = o->heads, c.num_key_value_heads = h, c.scale_value = 1.0 / sqrt((double)d);
    snprintf(c.input_layout, sizeof c.input_layout, "%s", o->layout);
    c.antiquant_mode = dr->quant ? 3 : 0;
    if (o->kivi && kivi_case(dr, &c) != 0) bad++;
    if (o->rope) snprintf(c.rope_mode, sizeof c.rope_mode, "%s", o->rope), c.rope_offset = o->rope_offset;
    c.window = o->window;
    c.value_head_dim = o->latent, c.value_is_key = o->latent > 0;
    if (o->sinks) c.sinks = dr->sinks; /* borrowed: cleared before ifa_case_free */
    ifa_case_result res;
    memset(&res, 0, sizeof res);
    res.out = *out;
    ifa_case_check chk;
    if (c.lengths && c.block_table && (o->draft == 0 || c.q_lengths) &&
        (ifa_case_check_result(&c, &res, &chk) != 0 || !chk.pass)) {
        bad++;
        fprintf(stderr, "ifa-decode: verify: attention output rel_l2 %.3g (tolerance %.0e), %lld non-finite\n",
                chk.rel_l2, chk.tolerance, (long long)chk.nonfinite);
    }
    memset(&c.query, 0, sizeof c.query); /* the caller's */
    memset(&c.sinks, 0, sizeof c.sinks);
    ifa_case_free(&c);
    return bad;
}

/* One decode step over the active slots. */
/* --prepare: the kernels of every step ahead, from this step's arguments a at the most batches (--slots), each
 * sequence S1 positions long in block 0 (valid arguments: RoPE's default positions are length - S1; the lengths'
 * form, tensors and attributes are what prepare reads). */
static ifa_status prepare_attention(driver *dr, const ifa_incre_flash_attention_args *a) {
    const int64_t b = dr->o.slots;
    ifa_incre_flash_attention_args pa = *a;
    ifa_tensor q = *a->query, out = *a->attention_out;
    q.shape[0] = out.shape[0] = b; /* batch leads in every layout */
    int64_t *lens = calloc((size_t)b, sizeof *lens), *qlens = calloc((size_t)b, sizeof *qlens);
    int32_t *table = malloc((size_t)(b * dr->cols) * sizeof *table);
    ifa_status st = IFA_STATUS_OUT_OF_MEMORY;
    if (lens && qlens && table) {
        const int64_t sq = a->query->shape[dr->bnsd ? 2 : 1];
        for (int64_t i = 0; i < b * dr->cols; ++i) table[i] = 0;
        for (int64_t i = 0; i < b; ++i) lens[i] = sq, qlens[i] = 1;
        pa.query = &q, pa.attention_out = &out;
        pa.actual_seq_lengths = lens, pa.actual_seq_lengths_count = b;
        if (a->actual_seq_lengths_q) pa.actual_seq_lengths_q = qlens, pa.actual_seq_lengths_q_count = b;
        pa.block_table = table;
        const int64_t built = ifa_context_programs_built(dr->ctx);
        const double t0 = now_us();
        st = ifa_incre_flash_attention_prepare(dr->ctx, &pa, dr->q, &dr->st.prepared_sets);
        dr->st.prepare_us = now_us() - t0;
        dr->st.prepared_programs = ifa_context_programs_built(dr->ctx) - built;
    }
    free(lens), free(qlens), free(table);
    return st;
}

static int decode_step(driver *dr, int64_t step) {
    const opts *o = &dr->o;
    const int64_t bs = o->block_size;
    /* each active request's next token (--draft: 1 to K of them, no more than it still generates); a request
     * that needs a block and finds none preempts the newest */
    int64_t want[4096];
    for (int s = 0; s < o->slots; ++s) {
        const int i = dr->slot_req[s];
        if (i < 0) continue;
        request *r = &dr->reqs[i];
        int64_t q = 1;
        if (o->draft > 0) {
            q = ifa_rng_int(&dr->rng, 1, o->draft);
            if (q > r->output_len - r->generated) q = r->output_len - r->generated > 0 ? r->output_len - r->generated : 1;
        }
        want[s] = q;
        while (r->ntok < r->cached + q)
            if (push_token(r, (int32_t)ifa_rng_int(&dr->rng, 0, 32000)) != 0) return -1;
        while (r->slot >= 0 && (r->cached + q - 1) / bs >= r->nblocks) {
            const int32_t b = ifa_block_pool_alloc(&dr->pool);
            if (b >= 0) r->blocks[r->nblocks++] = b;
            else preempt_newest(dr);
        }
    }
    int list[4096], nb = 0;
    int64_t qlens[4096]; /* each listed request's tokens this step */
    for (int s = 0; s < o->slots; ++s)
        if (dr->slot_req[s] >= 0) qlens[nb] = want[s], list[nb++] = dr->slot_req[s];
    if (nb == 0) return 0;
    const int64_t sq = o->draft > 0 ? o->draft : 1;
    /* the step's query (a random one per active request) is the model's stand-in too: drawn before the step's
     * device work, so that on a CPU device it neither counts as the engine's work nor takes a core from the
     * kernels */
    const double tg = now_us();
    ifa_tensor tq = layout_tensor(dr, dr->query, o->dtype, nb, sq, o->heads);
    ifa_host_tensor hq;
    if (ifa_host_tensor_alloc(&hq, o->dtype, tq.ndim, tq.shape) != 0) return fail("host memory", IFA_STATUS_OK);
    ifa_host_fill_random(&hq, o->seed * 1000003u + (uint64_t)step, -1, 1);
    for (int k = 0; o->draft > 0 && k < nb; ++k) /* a request's padding tokens are never read: NaN */
        for (int64_t t = qlens[k]; t < sq; ++t)
            for (int64_t n = 0; n < o->heads; ++n)
                for (int64_t e = 0; e < o->dim; ++e)
                    ifa_host_set(&hq, ifa_kv_cache_at(dr->bnsd, sq, o->heads, o->dim, k, t, n, e), NAN);
    dr->st.gen_us += now_us() - tg;
    cl_event appended = NULL;
    if (append_rows(dr, list, nb, sq, o->draft > 0 ? qlens : NULL, &appended) != 0) {
        ifa_host_tensor_free(&hq);
        return -1;
    }

    const int64_t h = o->kv_heads, d = o->dim;
    int64_t *lens = malloc((size_t)nb * sizeof *lens);
    int32_t *table = malloc((size_t)(nb * dr->cols) * sizeof *table);
    int rc = 0;
    if (!lens || !table) {
        rc = fail("host memory", IFA_STATUS_OK);
        goto out;
    }
    double kv_bytes = 0;
    const double elem = (double)ifa_dtype_bits(o->kv_dtype) / 8, per_scale = dr->quant ? (o->symmetric ? 4 : 8) : 0;
    const double scaled_sides = o->kivi ? 1 : 2; /* --kivi: the key's scales are per channel, not per row */
    for (int k = 0; k < nb; ++k) {
        request *r = &dr->reqs[list[k]];
        lens[k] = r->cached + qlens[k]; /* the step's tokens are in the cache; acceptance moves cached below */
        for (int64_t c = 0; c < dr->cols; ++c) table[k * dr->cols + c] = c < r->nblocks ? r->blocks[c] : -1;
        /* rows the step reads: the first token's window to the end */
        const int64_t span = o->window > 0 ? o->window + qlens[k] - 1 : lens[k], read = span < lens[k] ? span : lens[k];
        kv_bytes += (double)read * (double)h * ((o->latent ? 1 : 2) * (double)d * elem + scaled_sides * per_scale);
    }
    /* attention */
    if (ensure(dr, &dr->query, &dr->query_bytes, hq.bytes) != 0 || ensure(dr, &dr->out, &dr->out_bytes, hq.bytes) != 0) {
        rc = fail("query buffers", IFA_STATUS_OK);
        goto out;
    }
    tq.buffer = dr->query;
    ifa_tensor to = tq; /* the query's shape with D_v (latent) */
    to.buffer = dr->out;
    if (o->latent) to.shape[to.ndim - 1] = strcmp(o->layout, "BSH") == 0 ? o->heads * o->latent : o->latent;
    cl_int err = clEnqueueWriteBuffer(dr->q, dr->query, CL_FALSE, 0, hq.bytes, hq.data, 0, NULL, NULL);
    ifa_tensor kc, vc, sc, of, ks, ko, vs, vo;
    cache_tensors(dr, &kc, &vc, &sc, &of);
    kivi_tensors(dr, &ks, &ko, &vs, &vo);
    ifa_incre_flash_attention_args a;
    ifa_incre_flash_attention_args_init(&a);
    a.query = &tq, a.key = &kc, a.value = &vc, a.attention_out = &to;
    a.value_head_dim = o->latent;
    a.actual_seq_lengths = lens, a.actual_seq_lengths_count = nb;
    if (o->draft > 0) a.actual_seq_lengths_q = qlens, a.actual_seq_lengths_q_count = nb;
    a.num_heads = o->heads, a.num_key_value_heads = h, a.scale_value = 1.0 / sqrt((double)d), a.input_layout = o->layout;
    a.block_table = table, a.block_table_cols = dr->cols, a.block_size = bs;
    IFA_DECODE_SCALES(dr, a, sc, of, ks, ko, vs, vo);
    if (dr->quant && !o->kivi) a.antiquant_mode = 3;
    a.rope_mode = o->rope, a.rope_offset = o->rope_offset; /* the query at its position, length - 1 */
    a.template_mode = o->template_mode;
    a.window = o->window;
    const ifa_tensor ts = {dr->sinks_buf, 0, IFA_DTYPE_FLOAT32, 1, {o->heads}};
    if (o->sinks) a.sinks = &ts;
    ifa_status s = o->prepare && step == 0 ? prepare_attention(dr, &a) : IFA_STATUS_OK;
    if (s != IFA_STATUS_OK) {
        rc = fail("IncreFlashAttention prepare", s);
        goto out;
    }
    const int64_t built_before = ifa_context_programs_built(dr->ctx);
    ifa_plan plan;
    size_t ws = 0;
    const double t0 = now_us();
    s = ifa_incre_flash_attention_get_workspace_size(dr->ctx, &a, &plan, &ws);
    dr->st.plan_us += now_us() - t0;
    cl_event first = NULL, done = NULL;
    if (err != CL_SUCCESS) rc = fail("uploading the query", IFA_STATUS_OK);
    else if (s != IFA_STATUS_OK) rc = fail("IncreFlashAttention get_workspace_size", s);
    else if (ensure(dr, &dr->ws, &dr->ws_bytes, ws) != 0) rc = fail("workspace", IFA_STATUS_OK);
    else if ((s = ifa_incre_flash_attention_run_profiled(dr->ctx, &plan, &a, dr->ws, 0, dr->q, 0, NULL, &first, &done)) !=
             IFA_STATUS_OK)
        rc = fail("IncreFlashAttention run", s);
    if (ifa_context_programs_built(dr->ctx) != built_before) dr->st.attn_build_steps++;
    if (rc == 0) {
        const double tw = now_us();
        clWaitForEvents(1, &done);
        dr->st.wait_us += now_us() - tw;
        dr->st.attn_dev_us += event_us(first, done);
        dr->st.append_dev_us += event_us(appended, appended);
        dr->st.kv_bytes += kv_bytes;
        if (o->verify > 0 && step % o->verify == 0) {
            const double tv = now_us();
            ifa_host_tensor ho;
            if (read_tensor(dr, dr->out, o->dtype, to.ndim, to.shape, &ho) != 0) {
                rc = fail("reading the output", IFA_STATUS_OK);
            } else {
                dr->verify_failures += verify_step(dr, list, nb, lens, table, qlens, &hq, &ho);
                dr->st.verified_steps++;
                ifa_host_tensor_free(&ho);
            }
            dr->st.verify_us += now_us() - tv;
        }
    }
    if (first) clReleaseEvent(first);
    if (done) clReleaseEvent(done);
out: /* every path after the query was drawn and the append enqueued ends here */
    if (appended) {
        if (rc) clWaitForEvents(1, &appended);
        clReleaseEvent(appended);
    }
    ifa_host_tensor_free(&hq);
    free(lens), free(table);
    if (rc) return rc;
    /* acceptance (--draft: a seeded 1 to all of the step's tokens; the rest are rejected, their rows left
     * behind the length for the next step to overwrite), then retire the finished */
    for (int k = 0; k < nb; ++k) {
        request *r = &dr->reqs[list[k]];
        const int64_t accepted = qlens[k] > 1 ? ifa_rng_int(&dr->rng, 1, qlens[k]) : 1, from = r->cached;
        r->cached += accepted;
        r->ntok = r->cached; /* rejected tokens are forgotten: the next ones get new ids and hashes */
        publish_full_blocks(dr, r, from);
        dr->st.tokens += accepted;
        dr->st.request_steps++, dr->st.verified_tokens += qlens[k];
        if ((r->generated += accepted) < r->output_len) continue;
        release_blocks(dr, r);
        dr->slot_req[r->slot] = -1;
        r->slot = -1;
        dr->finished[dr->nfinished++] = list[k];
    }
    return 0;
}

/* ---- setup and report ------------------------------------------------------------------------------- */

/* MIN,MAX with 1 <= MIN <= MAX */
static int parse_pair(const char *opt, const char *s, int64_t *a, int64_t *b) {
    long long xy[2];
    if (ifa_arg_int_list("ifa-decode", opt, s, "MIN,MAX", 2, 1, xy) != 0) return -1;
    if (xy[1] < xy[0]) {
        fprintf(stderr, "ifa-decode: %s %s: want MIN <= MAX\n", opt, s);
        return -1;
    }
    *a = xy[0], *b = xy[1];
    return 0;
}

/* Returns 0; -1 for the usage text (an unknown option, a missing value); -2 when a message said what is wrong. */
static int parse_args(int argc, char **argv, opts *o) {
    *o = (opts){.layout = "BSND", .slots = 8, .requests = 32, .prefixes = 0, .verify = 0, .prompt_min = 32,
                .prompt_max = 256, .output_min = 16, .output_max = 96, .prefix_len = 64, .heads = 8, .kv_heads = 2,
                .dim = 64, .block_size = 16, .pool_blocks = 0, .max_steps = 1000000, .follow_up = 0, .seed = 1,
                .dtype = IFA_DTYPE_FLOAT16, .kv_dtype = IFA_DTYPE_FLOAT16};
    const char *tool = "ifa-decode";
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int used = 1, bad = 0;
        unsigned long long seed = 0;
        if (strcmp(a, "--quiet") == 0) o->quiet = 1, used = 0;
        else if (strcmp(a, "--json") == 0) o->json = 1, used = 0;
        else if (strcmp(a, "--symmetric") == 0) o->symmetric = 1, used = 0;
        else if (strcmp(a, "--scaled") == 0) o->scaled = 1, used = 0;
        else if (strcmp(a, "--sinks") == 0) o->sinks = 1, used = 0;
        else if (strcmp(a, "--kivi") == 0) o->kivi = 1, used = 0;
        else if (strcmp(a, "--plain-buffers") == 0) o->plain_buffers = 1, used = 0;
        else if (strcmp(a, "--prepare") == 0) o->prepare = 1, used = 0;
        else if (!v) return ifa_arg_unknown(tool, a), -1;
        else if (strcmp(a, "--device") == 0) o->device = v;
        else if (strcmp(a, "--trace") == 0) o->trace = v;
        else if (strcmp(a, "--layout") == 0) o->layout = v;
        else if (strcmp(a, "--rope") == 0) o->rope = v;
        else if (strcmp(a, "--template") == 0) o->template_mode = v;
        else if (strcmp(a, "--slots") == 0) bad = ifa_arg_int32(tool, a, v, 1, 4096, &o->slots);
        else if (strcmp(a, "--requests") == 0) bad = ifa_arg_int32(tool, a, v, 1, 1 << 30, &o->requests);
        else if (strcmp(a, "--prefixes") == 0) bad = ifa_arg_int32(tool, a, v, 0, 1 << 20, &o->prefixes);
        else if (strcmp(a, "--verify") == 0) bad = ifa_arg_int32(tool, a, v, 0, 1 << 30, &o->verify);
        else if (strcmp(a, "--prefix-len") == 0) bad = ifa_arg_int64(tool, a, v, 1, IFA_ARG_NO_MAX, &o->prefix_len);
        else if (strcmp(a, "--heads") == 0) bad = ifa_arg_int64(tool, a, v, 1, IFA_ARG_NO_MAX, &o->heads);
        else if (strcmp(a, "--kv-heads") == 0) bad = ifa_arg_int64(tool, a, v, 1, IFA_ARG_NO_MAX, &o->kv_heads);
        else if (strcmp(a, "--dim") == 0) bad = ifa_arg_int64(tool, a, v, 1, IFA_ARG_NO_MAX, &o->dim);
        else if (strcmp(a, "--block-size") == 0) bad = ifa_arg_int64(tool, a, v, 1, IFA_ARG_NO_MAX, &o->block_size);
        else if (strcmp(a, "--pool-blocks") == 0) bad = ifa_arg_int64(tool, a, v, 0, IFA_ARG_NO_MAX, &o->pool_blocks);
        else if (strcmp(a, "--max-steps") == 0) bad = ifa_arg_int64(tool, a, v, 1, IFA_ARG_NO_MAX, &o->max_steps);
        else if (strcmp(a, "--window") == 0) bad = ifa_arg_int64(tool, a, v, 0, IFA_ARG_NO_MAX, &o->window);
        else if (strcmp(a, "--latent") == 0) bad = ifa_arg_int64(tool, a, v, 0, IFA_ARG_NO_MAX, &o->latent);
        else if (strcmp(a, "--draft") == 0) bad = ifa_arg_int64(tool, a, v, 0, 16, &o->draft);
        else if (strcmp(a, "--rope-offset") == 0) bad = ifa_arg_int64(tool, a, v, 0, IFA_ARG_NO_MAX, &o->rope_offset);
        else if (strcmp(a, "--follow-up") == 0) bad = ifa_arg_real(tool, a, v, 0, 1, &o->follow_up);
        else if (strcmp(a, "--seed") == 0) bad = ifa_arg_u64(tool, a, v, &seed), o->seed = seed; /* read if good */
        else if (strcmp(a, "--prompt") == 0) bad = parse_pair(a, v, &o->prompt_min, &o->prompt_max);
        else if (strcmp(a, "--output") == 0) bad = parse_pair(a, v, &o->output_min, &o->output_max);
        else if (strcmp(a, "--dtype") == 0) bad = ifa_arg_dtype(tool, a, v, &o->dtype);
        else if (strcmp(a, "--kv-dtype") == 0) bad = ifa_arg_dtype(tool, a, v, &o->kv_dtype);
        else return ifa_arg_unknown(tool, a), -1;
        if (bad) return -2;
        i += used;
    }
    const char *clash = o->latent > o->dim ? "--latent DV: want DV <= --dim"
                        : o->rope_offset && !o->rope ? "--rope-offset needs --rope"
                        : o->rope_offset >= o->dim ? "--rope-offset R: want R < --dim"
                                                   : NULL;
    if (clash) {
        fprintf(stderr, "ifa-decode: %s\n", clash);
        return -2;
    }
    const int fp8 = ifa__is_float8(o->kv_dtype);
    if (o->scaled && !fp8) {
        fprintf(stderr, "ifa-decode: --scaled applies to float8 caches (int8/int4 are always scaled)\n");
        return -2;
    }
    if (o->scaled) o->symmetric = 1; /* float8 rows are scaled symmetrically, without offsets */
    if (o->kivi && ((o->kv_dtype != IFA_DTYPE_INT8 && o->kv_dtype != IFA_DTYPE_INT4) || o->latent)) {
        fprintf(stderr, "ifa-decode: --kivi takes an int8 or int4 cache with value rows of its own (no --latent)\n");
        return -2;
    }
    return 0;
}

/* The trace: from the CSV, or drawn from the seeded distributions. */
static int load_trace(driver *dr) {
    const opts *o = &dr->o;
    int cap = o->trace ? 1024 : o->requests;
    dr->reqs = calloc((size_t)cap, sizeof *dr->reqs);
    if (!dr->reqs) return -1;
    if (!o->trace) {
        for (int i = 0; i < o->requests; ++i) {
            request *r = &dr->reqs[i];
            r->prompt_len = ifa_rng_int(&dr->rng, o->prompt_min, o->prompt_max);
            r->output_len = ifa_rng_int(&dr->rng, o->output_min, o->output_max);
            r->prefix_id = o->prefixes > 0 && ifa_rng_int(&dr->rng, 0, 1) ? (int)ifa_rng_int(&dr->rng, 0, o->prefixes - 1)
                                                                          : -1;
            r->slot = -1;
        }
        dr->nreqs = o->requests;
        return 0;
    }
    FILE *f = fopen(o->trace, "r");
    if (!f) {
        fprintf(stderr, "ifa-decode: cannot open %s\n", o->trace);
        return -1;
    }
    char line[256];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        long long p, q, k = -1;
        const int got = sscanf(line, "%lld,%lld,%lld", &p, &q, &k);
        if (got < 2) continue; /* a header or a blank line */
        if (p < 1 || q < 1) {
            fprintf(stderr, "ifa-decode: %s: line %d: prompt_len and output_len must be >= 1\n", o->trace, n + 1);
            fclose(f);
            return -1;
        }
        if (n == cap) {
            request *m = realloc(dr->reqs, (size_t)cap * 2 * sizeof *m);
            if (!m) return fclose(f), -1;
            memset(m + cap, 0, (size_t)cap * sizeof *m);
            dr->reqs = m, cap *= 2;
        }
        dr->reqs[n] = (request){.prompt_len = p, .output_len = q, .prefix_id = got > 2 ? (int)k : -1, .slot = -1};
        n++;
    }
    fclose(f);
    dr->nreqs = n;
    return n > 0 ? 0 : -1;
}

/* --kivi: per-channel key scales (and zero points) calibrated on the bank, the model's rows: each channel's
 * [min, max] over them, or with RoPE +-(the largest |x| x sqrt 2) for every channel (a rotation mixes pairs of
 * channels), so that no key saturates; then uploaded. */
static int kivi_calibrate(driver *dr) {
    const opts *o = &dr->o;
    const int64_t h = o->kv_heads, d = o->dim, sh[2] = {h, d};
    const double qmax = o->kv_dtype == IFA_DTYPE_INT4 ? 7 : 127, qmin = -qmax - 1;
    if (ifa_host_tensor_alloc(&dr->kscale, IFA_DTYPE_FLOAT32, 2, sh) != 0 ||
        ifa_host_tensor_alloc(&dr->koffset, IFA_DTYPE_FLOAT32, 2, sh) != 0)
        return -1;
    double amax = 0;
    for (int64_t i = 0; i < BANK_ROWS * d; ++i) amax = fmax(amax, fabs(ifa_host_get(&dr->bank, i)));
    for (int64_t n = 0; n < h; ++n)
        for (int64_t e = 0; e < d; ++e) {
            double lo = INFINITY, hi = -INFINITY;
            for (int64_t r = 0; r < BANK_ROWS; ++r) {
                const double x = ifa_host_get(&dr->bank, r * d + e);
                lo = fmin(lo, x), hi = fmax(hi, x);
            }
            if (o->rope) lo = -amax * sqrt(2.0) * 1.001, hi = -lo;
            const double s = o->symmetric ? fmax(-lo, hi) / qmax : (hi - lo) / (qmax - qmin);
            ifa_host_set(&dr->kscale, n * d + e, s);
            ifa_host_set(&dr->koffset, n * d + e, o->symmetric ? 0 : lo / ifa_host_get(&dr->kscale, n * d + e) - qmin);
        }
    dr->kscale_buf = make_buffer(dr, dr->kscale.bytes), dr->koffset_buf = make_buffer(dr, dr->koffset.bytes);
    return dr->kscale_buf && dr->koffset_buf &&
                   clEnqueueWriteBuffer(dr->q, dr->kscale_buf, CL_TRUE, 0, dr->kscale.bytes, dr->kscale.data, 0, NULL,
                                        NULL) == CL_SUCCESS &&
                   clEnqueueWriteBuffer(dr->q, dr->koffset_buf, CL_TRUE, 0, dr->koffset.bytes, dr->koffset.data, 0,
                                        NULL, NULL) == CL_SUCCESS
               ? 0
               : -1;
}

static int setup(driver *dr) {
    const opts *o = &dr->o;
    dr->pocl_affinity = ifa_tool_pin_pocl_workers();
    ifa_status s = ifa_context_create_default(o->device, &dr->ctx);
    if (s != IFA_STATUS_OK) return fail("context", s);
    if (ifa_tool_check_env("ifa-decode", &dr->ctx->facts) != 0) return 2;
    dr->clc = ifa_context_cl_context(dr->ctx);
    cl_int err;
    dr->q = clCreateCommandQueue(dr->clc, ifa_context_device(dr->ctx), CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS) return fail("command queue", IFA_STATUS_OK);
    dr->bnsd = strcmp(o->layout, "BNSD") == 0;
    if (make_bank(&dr->bank, o->dtype, o->dim, o->seed) != 0) return fail("host memory", IFA_STATUS_OK);
    dr->quant = o->kv_dtype == IFA_DTYPE_INT8 || o->kv_dtype == IFA_DTYPE_INT4 || o->scaled;
    int64_t longest = 0;
    for (int i = 0; i < dr->nreqs; ++i) {
        const request *r = &dr->reqs[i];
        const int64_t len = r->prompt_len + (r->prefix_id >= 0 ? o->prefix_len : 0) + r->output_len + 1;
        longest = len > longest ? len : longest;
    }
    /* follow-ups may be longer: room for two of the longest conversations */
    dr->cols = (2 * longest + o->block_size - 1) / o->block_size;
    int64_t nblocks = o->pool_blocks > 0 ? o->pool_blocks : (int64_t)o->slots * ((longest + o->block_size - 1) / o->block_size) * 5 / 4;
    if (nblocks > INT32_MAX || ifa_block_pool_init(&dr->pool, (int32_t)nblocks) != 0) return fail("block pool", IFA_STATUS_OK);
    ifa_tensor pt = layout_tensor(dr, NULL, o->kv_dtype, nblocks, o->block_size, o->kv_heads);
    if (dr->bnsd) pt.shape[1] = o->kv_heads, pt.shape[2] = o->block_size;
    dr->pool_shape.dtype = o->kv_dtype, dr->pool_shape.ndim = pt.ndim;
    memcpy(dr->pool_shape.shape, pt.shape, sizeof pt.shape);
    const int64_t pool_bytes = ifa_tensor_bytes(&pt);
    dr->kpool = pool_buffer(dr, (size_t)pool_bytes);
    dr->vpool = o->latent ? NULL : pool_buffer(dr, (size_t)pool_bytes); /* a latent cache has one pool */
    const int64_t ss[4] = {2, nblocks, o->kv_heads, o->block_size};
    memcpy(dr->scale_shape, ss, sizeof ss);
    const size_t sbytes = (size_t)(2 * nblocks * o->kv_heads * o->block_size) * 4;
    dr->scale = pool_buffer(dr, dr->quant ? sbytes : 8), dr->offset = pool_buffer(dr, dr->quant ? sbytes : 8);
    if (o->kivi && kivi_calibrate(dr) != 0) return fail("calibrating the key scales", IFA_STATUS_OK);
    if (o->sinks) { /* drawn from the run's seed; the same for every step */
        const int64_t n = o->heads;
        if (ifa_host_tensor_alloc(&dr->sinks, IFA_DTYPE_FLOAT32, 1, &n) != 0 ||
            !(dr->sinks_buf = make_buffer(dr, dr->sinks.bytes)))
            return fail("sinks", IFA_STATUS_OK);
        ifa_host_fill_random(&dr->sinks, o->seed * 7 + 5, -2, 4);
        if (clEnqueueWriteBuffer(dr->q, dr->sinks_buf, CL_TRUE, 0, dr->sinks.bytes, dr->sinks.data, 0, NULL, NULL) !=
            CL_SUCCESS)
            return fail("uploading the sinks", IFA_STATUS_OK);
    }
    dr->slot_req = malloc((size_t)o->slots * sizeof *dr->slot_req);
    dr->waiting = malloc((size_t)dr->nreqs * sizeof *dr->waiting);
    dr->finished = malloc((size_t)dr->nreqs * sizeof *dr->finished);
    dr->st.step_us = malloc(1024 * sizeof(double));
    dr->st.attn_us = malloc(1024 * sizeof(double));
    if (!dr->kpool || (!dr->vpool && !o->latent) || !dr->scale || !dr->offset || !dr->slot_req || !dr->waiting || !dr->finished ||
        !dr->st.step_us || !dr->st.attn_us)
        return fail("allocating the cache", IFA_STATUS_OK);
    for (int sl = 0; sl < o->slots; ++sl) dr->slot_req[sl] = -1;
    if (!o->quiet)
        fprintf(stderr, "ifa-decode: %d requests, %d slots, pool %lld blocks of %lld (%.1f MiB per K/V), table %lld "
                "columns, %s %s KV, N %lld N_kv %lld D %lld%s%s%s\n", dr->nreqs, o->slots, (long long)nblocks,
                (long long)o->block_size, (double)pool_bytes / 1048576.0, (long long)dr->cols, o->layout,
                ifa_dtype_name(o->kv_dtype), (long long)o->heads, (long long)o->kv_heads, (long long)o->dim,
                o->window ? ", window" : "", o->sinks ? ", sinks" : "", o->latent ? ", one latent cache" : "");
    return 0;
}

static int run(driver *dr) {
    const opts *o = &dr->o;
    const double start = now_us();
    double last_progress = start;
    int64_t step = 0, cap_steps = 1024;
    for (; step < o->max_steps; ++step) {
        const double t0 = now_us();
        /* admit: preempted requests first, then the trace in order */
        for (int sl = 0; sl < o->slots; ++sl) {
            if (dr->slot_req[sl] >= 0) continue;
            int i = dr->nwaiting > 0 ? dr->waiting[0] : dr->next_req < dr->nreqs ? dr->next_req : -1;
            if (i < 0) break;
            const int got = admit(dr, i, sl, step);
            if (got < 0) return 3;
            if (got == 0) break;
            if (dr->nwaiting > 0) memmove(dr->waiting, dr->waiting + 1, (size_t)--dr->nwaiting * sizeof *dr->waiting);
            else dr->next_req++;
        }
        int active = 0;
        for (int sl = 0; sl < o->slots; ++sl) active += dr->slot_req[sl] >= 0;
        if (active == 0) {
            if (dr->next_req >= dr->nreqs && dr->nwaiting == 0) break;
            fprintf(stderr, "ifa-decode: the pool cannot hold request %d even alone\n",
                    dr->nwaiting ? dr->waiting[0] : dr->next_req);
            return 3;
        }
        const double verify0 = dr->st.verify_us, gen0 = dr->st.gen_us;
        const int64_t built0 = ifa_context_programs_built(dr->ctx);
        const double attn0 = dr->st.attn_dev_us;
        if (decode_step(dr, step) != 0) return 3;
        const double t1 = now_us();
        /* neither verification nor the model's stand-in (drawing K/V rows) is the engine's work */
        const double step_us = t1 - t0 - (dr->st.verify_us - verify0) - (dr->st.gen_us - gen0);
        if (step == cap_steps - 1 || step >= cap_steps) {
            double *m = realloc(dr->st.step_us, (size_t)cap_steps * 2 * sizeof *m);
            if (m) dr->st.step_us = m;
            double *ma = m ? realloc(dr->st.attn_us, (size_t)cap_steps * 2 * sizeof *ma) : NULL;
            if (!ma) return fail("host memory", IFA_STATUS_OK);
            dr->st.attn_us = ma, cap_steps *= 2;
        }
        dr->st.steps_us += step_us;
        if (ifa_context_programs_built(dr->ctx) != built0) /* a kernel variant's first build: not a step's cost */
            dr->st.build_steps++, dr->st.build_us += step_us;
        else
            dr->st.attn_us[dr->st.timed] = dr->st.attn_dev_us - attn0, dr->st.step_us[dr->st.timed++] = step_us;
        dr->st.blocks_sum += (double)dr->pool.in_use;
        if (dr->pool.in_use > dr->st.block_max) dr->st.block_max = dr->pool.in_use;
        if (!o->quiet && t1 - last_progress > 1e6) {
            last_progress = t1;
            fprintf(stderr, "step %lld | active %d | done %d/%d | blocks %lld/%d | evictions %lld | %.0f tokens/s of wall "
                            "time (prefill, checks and builds included)\n",
                    (long long)step, active, dr->nfinished, dr->nreqs, (long long)dr->pool.in_use, dr->pool.nblocks,
                    (long long)dr->pool.evictions, (double)dr->st.tokens / ((t1 - start) * 1e-6));
        }
    }
    dr->st.steps = step;
    dr->st.wall_us = now_us() - start;
    return 0;
}

/* The run's figures, named for what each measures: what the text report and --json's object both print. */
typedef struct figures {
    int64_t steps, timed;
    double serve_s, wall_s, steps_per_s, tokens_per_s_steps, tokens_per_s_wall, p50_us, p99_us;
    double attn_us_mean, attn_us_p50, append_us_mean, kv_mb_per_step, attn_gbs, plan_share, host_share, blocks_mean;
} figures;

static figures figures_of(const driver *dr) {
    const stats *s = &dr->st;
    const int64_t n = s->steps, m = s->timed;
    ifa_bench_sort(s->step_us, m);
    ifa_bench_sort(s->attn_us, m);
    figures f = {.steps = n, .timed = m, .serve_s = s->steps_us * 1e-6, .wall_s = s->wall_us * 1e-6};
    f.steps_per_s = (double)n / f.serve_s;
    f.tokens_per_s_steps = (double)s->tokens / f.serve_s, f.tokens_per_s_wall = (double)s->tokens / f.wall_s;
    f.p50_us = m ? s->step_us[m / 2] : 0, f.p99_us = m ? s->step_us[(m * 99) / 100] : 0;
    f.attn_us_mean = n ? s->attn_dev_us / (double)n : 0, f.attn_us_p50 = m ? s->attn_us[m / 2] : 0;
    f.append_us_mean = n ? s->append_dev_us / (double)n : 0;
    f.kv_mb_per_step = n ? s->kv_bytes / (double)n * 1e-6 : 0;
    f.attn_gbs = s->attn_dev_us > 0 ? s->kv_bytes / (s->attn_dev_us * 1e-6) * 1e-9 : 0;
    f.plan_share = s->plan_us / s->steps_us, f.host_share = (s->steps_us - s->wait_us) / s->steps_us;
    f.blocks_mean = n ? s->blocks_sum / (double)n : 0;
    return f;
}

/* --json: the figures as one object on stdout; the names carry their units and what they count. */
static void report_json(const driver *dr, const figures *f) {
    const stats *s = &dr->st;
    cJSON *j = cJSON_CreateObject();
    const struct {
        const char *name;
        double value;
    } rows[] = {
        {"requests", dr->nreqs}, {"requests_finished", dr->nfinished}, {"steps", (double)f->steps},
        {"serving_s", f->serve_s}, {"wall_s", f->wall_s}, {"steps_per_s", f->steps_per_s},
        {"tokens_generated", (double)s->tokens},
        {"tokens_per_s_decode_steps", f->tokens_per_s_steps}, {"tokens_per_s_wall", f->tokens_per_s_wall},
        {"prompt_tokens_prefilled", (double)s->prefill_tokens}, {"prompt_tokens_reused", (double)s->reused_tokens},
        {"step_us_p50", f->p50_us}, {"step_us_p99", f->p99_us}, {"steps_timed", (double)f->timed},
        {"steps_that_built", (double)s->build_steps}, {"build_ms", s->build_us * 1e-3},
        {"attention_calls_that_built", (double)s->attn_build_steps},
        {"prepared_kernel_sets", (double)s->prepared_sets}, {"prepared_programs", (double)s->prepared_programs},
        {"prepare_ms", s->prepare_us * 1e-3}, {"planning_share", f->plan_share}, {"host_share", f->host_share},
        {"attention_device_us_mean", f->attn_us_mean}, {"attention_device_us_p50", f->attn_us_p50},
        {"decode_append_device_us_mean", f->append_us_mean}, {"prefill_append_device_ms", s->prefill_dev_us * 1e-3},
        {"model_stand_in_ms", s->gen_us * 1e-3}, {"kv_read_mb_per_step", f->kv_mb_per_step},
        {"attention_gb_per_s", f->attn_gbs}, {"blocks_mean", f->blocks_mean}, {"blocks_max", (double)s->block_max},
        {"pool_blocks", dr->pool.nblocks}, {"evictions", (double)dr->pool.evictions},
        {"prefix_hits", (double)dr->pool.hits}, {"preemptions", (double)s->preemptions},
        {"verified_steps", (double)s->verified_steps}, {"verify_failures", dr->verify_failures},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) cJSON_AddNumberToObject(j, rows[i].name, rows[i].value);
    if (dr->o.draft > 0) {
        cJSON_AddNumberToObject(j, "draft_tokens_verified", (double)s->verified_tokens);
        cJSON_AddNumberToObject(j, "draft_request_steps", (double)s->request_steps);
    }
    cJSON_AddStringToObject(j, "kv_pools", dr->o.plain_buffers ? "clCreateBuffer" : "ifa_buffer_create");
    if (dr->pocl_affinity) cJSON_AddStringToObject(j, "pocl_affinity", dr->pocl_affinity);
    char *text = cJSON_PrintUnformatted(j);
    if (text) puts(text);
    cJSON_free(text);
    cJSON_Delete(j);
}

static void report(driver *dr) {
    const stats *s = &dr->st;
    const figures f = figures_of(dr);
    if (dr->o.json) {
        report_json(dr, &f);
        return;
    }
    const int64_t n = f.steps, m = f.timed;
    printf("requests finished    %d of %d\n", dr->nfinished, dr->nreqs);
    printf("steps                %lld (%.1f steps/s over %.2f s of serving; %.2f s wall)\n", (long long)n,
           f.steps_per_s, f.serve_s, f.wall_s);
    printf("tokens generated     %lld (%.1f tokens/s over the decode steps' time, %.1f over the wall time)\n",
           (long long)s->tokens, f.tokens_per_s_steps, f.tokens_per_s_wall);
    cl_device_type type = 0;
    clGetDeviceInfo(ifa_context_device(dr->ctx), CL_DEVICE_TYPE, sizeof type, &type, NULL);
    if (type & CL_DEVICE_TYPE_CPU) /* PoCL's workers: a GPU's driver has none */
        printf("PoCL workers         POCL_AFFINITY=%s (ifa-decode sets 1, pinned one per core, unless given)\n",
               dr->pocl_affinity);
    printf("K/V pools            %s\n", dr->o.plain_buffers ? "clCreateBuffer (--plain-buffers)"
                                                             : "ifa_buffer_create (huge pages advised on a CPU device)");
    if (dr->o.draft > 0 && s->request_steps > 0)
        printf("speculative steps    %.2f tokens per request and step verified, %.2f accepted (%.0f %%)\n",
               (double)s->verified_tokens / (double)s->request_steps, (double)s->tokens / (double)s->request_steps,
               100.0 * (double)s->tokens / (double)s->verified_tokens);
    printf("prompt tokens        %lld prefilled, %lld reused from cached blocks\n", (long long)s->prefill_tokens,
           (long long)s->reused_tokens);
    printf("step latency         p50 %.1f us, p99 %.1f us over %lld steps (%lld steps that built kernels: %.1f ms)\n",
           f.p50_us, f.p99_us, (long long)m, (long long)s->build_steps, s->build_us * 1e-3);
    if (dr->o.prepare)
        printf("prepared kernels     %lld kernel sets (%lld programs built) in %.1f ms before the first attention; "
               "%lld attention calls built one after\n", (long long)s->prepared_sets, (long long)s->prepared_programs,
               s->prepare_us * 1e-3, (long long)s->attn_build_steps);
    else
        printf("attention builds     %lld attention calls built kernels\n", (long long)s->attn_build_steps);
    printf("planning             %.1f %% of the step time (%.1f us per step)\n", 100 * f.plan_share,
           n ? s->plan_us / (double)n : 0);
    printf("host work            %.1f %% of the step time (all but waiting for the attention and prefill appends)\n",
           100 * f.host_share);
    /* the mean holds first launches (a GPU's module load, PoCL's code generation) and, before 2026-11-27,
     * builds between a run's launches; the median over the steps that built nothing is the kernels' own */
    printf("device time          attention %.1f us per step (p50 %.1f us over the steps that built nothing), decode append "
           "%.1f us per step, prefill appends %.1f ms in all\n", f.attn_us_mean, f.attn_us_p50, f.append_us_mean,
           s->prefill_dev_us * 1e-3);
    printf("model stand-in       %.1f ms drawing K/V rows and queries on the host (not in the step times)\n",
           s->gen_us * 1e-3);
    printf("KV read per step     %.3f MB, %.2f GB/s achieved by the attention kernels\n",
           f.kv_mb_per_step, f.attn_gbs);
    printf("blocks in use        mean %.1f, max %lld of %d; evictions %lld; prefix hits %lld; preemptions %lld\n",
           f.blocks_mean, (long long)s->block_max, dr->pool.nblocks, (long long)dr->pool.evictions,
           (long long)dr->pool.hits, (long long)s->preemptions);
    if (dr->o.verify > 0)
        printf("verified steps       %lld, %lld failures\n", (long long)s->verified_steps, (long long)dr->verify_failures);
}

static void teardown(driver *dr) {
    cl_mem bufs[] = {dr->kpool, dr->vpool, dr->scale, dr->offset,    dr->staging_k,    dr->staging_v,
                     dr->query, dr->out,   dr->ws,    dr->sinks_buf, dr->kscale_buf,   dr->koffset_buf};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; ++i)
        if (bufs[i]) clReleaseMemObject(bufs[i]);
    if (dr->q) clReleaseCommandQueue(dr->q);
    ifa_context_destroy(dr->ctx);
    for (int i = 0; i < dr->nreqs; ++i) request_free(&dr->reqs[i]);
    free(dr->reqs), free(dr->waiting), free(dr->slot_req), free(dr->finished), free(dr->st.step_us),
        free(dr->st.attn_us);
    ifa_block_pool_free(&dr->pool);
    ifa_host_tensor_free(&dr->bank);
    ifa_host_tensor_free(&dr->sinks);
    ifa_host_tensor_free(&dr->kscale), ifa_host_tensor_free(&dr->koffset);
}

int main(int argc, char **argv) {
    if (ifa_arg_help(argc, argv)) return usage(stdout);
    driver dr;
    memset(&dr, 0, sizeof dr);
    const int parsed = parse_args(argc, argv, &dr.o);
    if (parsed == -1) return usage(stderr);
    if (parsed != 0) return 2;
    ifa_rng_seed(&dr.rng, dr.o.seed);
    if (load_trace(&dr) != 0) {
        fprintf(stderr, "ifa-decode: no requests\n");
        return 2;
    }
    int rc = setup(&dr);
    if (rc == 0) rc = run(&dr);
    if (rc == 0) {
        report(&dr);
        if (dr.verify_failures > 0) rc = 1;
        else if (dr.nfinished < dr.nreqs) {
            fprintf(stderr, "ifa-decode: stopped at --max-steps with %d requests unfinished\n", dr.nreqs - dr.nfinished);
        }
    }
    teardown(&dr);
    return rc;
}
