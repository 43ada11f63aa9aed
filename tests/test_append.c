/* KVCacheAppend: the new rows land where the attention op reads them (contiguous and paged, every layout),
 * converted exactly (float caches) or quantised within the documented bound with the documented scales
 * (int8/int4, symmetric and asymmetric); nothing else in the cache or the scales changes; append-then-attend
 * equals the float64 reference on what the cache holds and, within the storage precision, on the original
 * rows; every invalid argument has its own error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/kv_quant.h"
#include "common/reference.h"
#include "common/rng.h"
#include "common/runner.h"
#include "test_util.h"
#include "op_host/runtime/tensor_check.h"

typedef struct aspec {
    const char *layout;
    ifa_dtype src, cache;
    int asym;           /* int8/int4 caches: with antiquant_offset; a float8 cache: with scales */
    int64_t b, nkv, d;
    int64_t cap;        /* positions per sequence: S_max, or block_table_cols * block_size */
    int64_t block_size; /* 0: contiguous */
    int rope;           /* ifa_rope_mode of the new keys */
    int64_t rope_dim;   /* 0: D - rope_offset */
    int64_t rope_offset; /* the first rotated dim */
    int64_t rope_pos0;  /* > 0: batch b's row p sits at rotary position rope_pos0 + 7b + p (explicit
                         * rope_positions), else at p (the default) */
    int key_only;       /* appends without value rows and value_cache (one latent cache) */
    int far;            /* 1: key_cache and value_cache end at the end of the largest buffer the device allocates
                         * (ifa_case_far_base), a guard of 4 KiB of 0xa5 before each that no write may touch */
    int kivi;           /* the separate form: keys quantised with given per-channel scales (float16 (N_kv, D),
                         * offsets with asym in an integer cache), values per token and head into
                         * value_antiquant_scale (mode 2, or 3 paged) */
    uint64_t seed;
} aspec;

/* A cache on the device with its host mirror before the appends (for the untouched-bytes check) and the
 * original float64 value of every row written so far (for the round trip). */
typedef struct cache {
    aspec p;
    int bnsd, quant, bits, fp8; /* quant: scales per token and head (int8, int4; float8 with asym) */
    int offsets;                /* antiquant_offset written too (int8/int4 with asym) */
    int64_t units, rows; /* units x rows: (B, S_max) or (num_blocks, block_size) */
    int32_t *table;      /* paged: B x cols, shuffled ids, wild ids past what the test uses */
    int64_t cols;
    ifa_host_tensor kc, vc, sc, of;     /* the initial contents (kivi: sc, of the value's (units, N_kv, rows)) */
    ifa_host_tensor gs, go;             /* kivi: the key's given scales and offsets */
    cl_mem bufs[6];                     /* kc, vc, sc, of, gs, go (NULL where absent) */
    size_t base;                        /* kc's and vc's byte offset in their buffers (far; 0 otherwise) */
    double *orig;                       /* (2, B, cap, N_kv, D) float64 rows as appended, NaN before */
    int64_t *len;                       /* rows appended per batch */
} cache;

static int is_bnsd(const char *l) { return strcmp(l, "BNSD") == 0; }

static cl_mem upload(const ifa_host_tensor *t) {
    cl_int err;
    cl_mem m = clCreateBuffer(ifa_context_cl_context(test_ctx()), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, t->bytes,
                              t->data, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    return m;
}

static void download(cl_mem m, ifa_host_tensor *t) {
    ck_assert_int_eq(clEnqueueReadBuffer(test_queue(), m, CL_TRUE, 0, t->bytes, t->data, 0, NULL, NULL), CL_SUCCESS);
}

#define GUARD_BYTES 4096
/* t at byte base of a buffer of base + its bytes (base 0: upload), GUARD_BYTES of 0xa5 before it; the rest is
 * never written, so a CPU device's pages there are never committed. */
static cl_mem upload_at(const ifa_host_tensor *t, size_t base) {
    if (!base) return upload(t);
    static unsigned char guard[GUARD_BYTES];
    memset(guard, 0xa5, sizeof guard);
    cl_mem m = NULL;
    ck_assert_int_eq(ifa_case_buffer_at(ifa_context_cl_context(test_ctx()), test_queue(), t->data, t->bytes, base, &m),
                     IFA_STATUS_OK);
    ck_assert_int_eq(clEnqueueWriteBuffer(test_queue(), m, CL_TRUE, base - GUARD_BYTES, GUARD_BYTES, guard, 0, NULL,
                                          NULL), CL_SUCCESS);
    return m;
}

static void download_at(cl_mem m, size_t base, ifa_host_tensor *t) {
    ck_assert_int_eq(clEnqueueReadBuffer(test_queue(), m, CL_TRUE, base, t->bytes, t->data, 0, NULL, NULL), CL_SUCCESS);
}

static void copy_tensor(const ifa_host_tensor *from, ifa_host_tensor *to) {
    ck_assert_int_eq(ifa_host_tensor_alloc(to, from->dtype, from->ndim, from->shape), 0);
    memcpy(to->data, from->data, from->bytes);
}

/* Describes host tensor h as a device tensor in buffer m. */
static ifa_tensor desc(const ifa_host_tensor *h, cl_mem m) {
    ifa_tensor t;
    memset(&t, 0, sizeof t);
    t.buffer = m, t.dtype = h->dtype, t.ndim = h->ndim;
    memcpy(t.shape, h->shape, sizeof t.shape);
    return t;
}

static void cache_init(cache *c, const aspec *p) {
    memset(c, 0, sizeof *c);
    c->p = *p;
    c->bnsd = is_bnsd(p->layout);
    c->fp8 = ifa__is_float8(p->cache);
    c->quant = p->cache == IFA_DTYPE_INT8 || p->cache == IFA_DTYPE_INT4 || (c->fp8 && (p->asym || p->kivi));
    c->offsets = c->quant && p->asym && !c->fp8;
    c->bits = p->cache == IFA_DTYPE_INT4 ? 4 : 8;
    if (p->block_size) {
        c->cols = p->cap / p->block_size;
        c->units = p->b * c->cols + 3, c->rows = p->block_size;
        /* each batch owns cols distinct blocks, shuffled over the pool; the last column is wild and never used
         * by the tests that stay below cap - block_size (validation covers what happens beyond) */
        ifa_rng rng;
        ifa_rng_seed(&rng, p->seed * 5 + 1);
        int64_t *perm = ifa_rng_permutation(&rng, c->units);
        c->table = malloc((size_t)(p->b * c->cols) * sizeof *c->table);
        ck_assert(perm && c->table);
        for (int64_t i = 0; i < p->b * c->cols; ++i) c->table[i] = (int32_t)perm[i];
        free(perm);
    } else {
        c->units = p->b, c->rows = p->cap;
    }
    int64_t sh[4];
    int32_t nd;
    if (c->bnsd) nd = 4, sh[0] = c->units, sh[1] = p->nkv, sh[2] = c->rows, sh[3] = p->d;
    else if (strcmp(p->layout, "BSND") == 0) nd = 4, sh[0] = c->units, sh[1] = c->rows, sh[2] = p->nkv, sh[3] = p->d;
    else nd = 3, sh[0] = c->units, sh[1] = c->rows, sh[2] = p->nkv * p->d;
    ck_assert_int_eq(ifa_host_tensor_alloc(&c->kc, p->cache, nd, sh), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&c->vc, p->cache, nd, sh), 0);
    /* never-written contents: NaN for floats (float8 too), 0x5a bytes for integers (no NaN there) */
    const int integer = c->quant && !c->fp8;
    for (int64_t i = 0; !integer && i < ifa_host_tensor_numel(&c->kc); ++i)
        ifa_host_set(&c->kc, i, NAN), ifa_host_set(&c->vc, i, NAN);
    if (integer) memset(c->kc.data, 0x5a, c->kc.bytes), memset(c->vc.data, 0x5a, c->vc.bytes);
    if (p->far) {
        c->base = (size_t)ifa_case_far_base(ifa_context_device(test_ctx()), c->kc.bytes);
        ck_assert_msg(c->base > 0, "the device allocates no buffer past the cache");
    }
    c->bufs[0] = upload_at(&c->kc, c->base), c->bufs[1] = upload_at(&c->vc, c->base);
    if (p->kivi) {
        /* the key's given scales cover [-8, 8] and a little more per channel (rotated rows reach 5·√2), so no
         * key saturates: (q + o)·s spans [lo, hi] */
        const int64_t gsh[2] = {p->nkv, p->d};
        ck_assert_int_eq(ifa_host_tensor_alloc(&c->gs, IFA_DTYPE_FLOAT16, 2, gsh), 0);
        ck_assert_int_eq(ifa_host_tensor_alloc(&c->go, IFA_DTYPE_FLOAT16, 2, gsh), 0);
        ifa_rng rng;
        ifa_rng_seed(&rng, p->seed * 5 + 3);
        const double qmin = c->fp8 ? -ifa_dtype_max(p->cache) : p->cache == IFA_DTYPE_INT4 ? -8 : -128;
        const double qmax = c->fp8 ? ifa_dtype_max(p->cache) : p->cache == IFA_DTYPE_INT4 ? 7 : 127;
        for (int64_t i = 0; i < p->nkv * p->d; ++i) {
            const double lo = -8 - ifa_rng_uniform(&rng, 0, 1), hi = 8 + ifa_rng_uniform(&rng, 0, 1);
            if (c->offsets) {
                ifa_host_set(&c->gs, i, (hi - lo) / (qmax - qmin));
                ifa_host_set(&c->go, i, lo / ifa_host_get(&c->gs, i) - qmin);
            } else {
                ifa_host_set(&c->gs, i, fmax(-lo, hi) / qmax);
            }
        }
        c->bufs[4] = upload(&c->gs);
        if (c->offsets) c->bufs[5] = upload(&c->go);
    }
    if (c->quant) {
        const int64_t ssh[4] = {2, c->units, p->nkv, c->rows};
        ck_assert_int_eq(p->kivi ? ifa_host_tensor_alloc(&c->sc, IFA_DTYPE_FLOAT32, 3, ssh + 1)
                                 : ifa_host_tensor_alloc(&c->sc, IFA_DTYPE_FLOAT32, 4, ssh), 0);
        for (int64_t i = 0; i < ifa_host_tensor_numel(&c->sc); ++i) ifa_host_set(&c->sc, i, NAN);
        c->bufs[2] = upload(&c->sc);
        if (c->offsets) copy_tensor(&c->sc, &c->of), c->bufs[3] = upload(&c->of);
    }
    const size_t n = (size_t)(2 * p->b * p->cap * p->nkv * p->d);
    c->orig = malloc(n * sizeof *c->orig);
    c->len = calloc((size_t)p->b, sizeof *c->len);
    ck_assert(c->orig && c->len);
    for (size_t i = 0; i < n; ++i) c->orig[i] = NAN;
}

static void cache_free(cache *c) {
    for (int i = 0; i < 6; ++i)
        if (c->bufs[i]) clReleaseMemObject(c->bufs[i]);
    ifa_host_tensor_free(&c->kc), ifa_host_tensor_free(&c->vc), ifa_host_tensor_free(&c->sc);
    ifa_host_tensor_free(&c->of), ifa_host_tensor_free(&c->gs), ifa_host_tensor_free(&c->go);
    free(c->table), free(c->orig), free(c->len);
}

static double *orig_at(const cache *c, int half, int64_t b, int64_t pos, int64_t n) {
    const aspec *p = &c->p;
    return c->orig + (((half * p->b + b) * p->cap + pos) * p->nkv + n) * p->d;
}

static double amax_of(const double *x, int64_t n) {
    double m = 0;
    for (int64_t i = 0; i < n; ++i) m = fmax(m, fabs(x[i]));
    return m;
}

/* Batch b's rotary position of its row 0. */
static int64_t rope_base(const cache *c, int64_t b) { return c->p.rope_pos0 > 0 ? c->p.rope_pos0 + 7 * b : 0; }

/* The value a row of the cache should hold: the original, and for a key with RoPE, rotated in float64 at its
 * position. x gets D values. */
static void expected_row(const cache *c, int half, int64_t b, int64_t pos, int64_t n, double *x) {
    memcpy(x, orig_at(c, half, b, pos, n), (size_t)c->p.d * sizeof *x);
    if (half == 0 && c->p.rope)
        ck_assert_int_eq(ifa_reference_rope(c->p.rope == IFA_ROPE_NEOX ? "neox" : "gptj", 0, c->p.rope_dim, c->p.rope_offset, NULL, NULL,
                                            rope_base(c, b) + pos, x, c->p.d), 0);
}

/* (unit, row) of position pos of batch b. */
static void locate(const cache *c, int64_t b, int64_t pos, int64_t *u, int64_t *r) {
    if (!c->table) {
        *u = b, *r = pos;
        return;
    }
    *u = c->table[b * c->cols + pos / c->p.block_size], *r = pos % c->p.block_size;
}

/* The args of an append of rows (new K/V, host) to batches [b0, b0 + B) at their current lengths; news (B
 * values, NULL: all) the rows each batch writes (new_seq_lengths). */
static ifa_status append_some(cache *c, int64_t b0, const ifa_host_tensor *kn, const ifa_host_tensor *vn,
                              const int64_t *news) {
    ifa_tensor t[8];
    cl_mem kb = upload(kn), vb = vn ? upload(vn) : NULL;
    t[0] = desc(kn, kb), t[2] = desc(&c->kc, c->bufs[0]), t[3] = desc(&c->vc, c->bufs[1]);
    t[2].offset = t[3].offset = c->base;
    if (vn) t[1] = desc(vn, vb);
    if (c->quant) t[4] = desc(&c->sc, c->bufs[2]);
    if (c->offsets) t[5] = desc(&c->of, c->bufs[3]);
    ifa_kv_cache_append_args a;
    ifa_kv_cache_append_args_init(&a);
    a.key = &t[0], a.value = vn ? &t[1] : NULL, a.key_cache = &t[2], a.value_cache = vn ? &t[3] : NULL;
    a.antiquant_scale = c->quant ? &t[4] : NULL, a.antiquant_offset = c->offsets ? &t[5] : NULL;
    if (c->p.kivi) {
        t[6] = desc(&c->gs, c->bufs[4]);
        if (c->offsets) t[7] = desc(&c->go, c->bufs[5]);
        a.key_antiquant_scale = &t[6], a.key_antiquant_offset = c->offsets ? &t[7] : NULL;
        a.value_antiquant_scale = a.antiquant_scale, a.value_antiquant_offset = a.antiquant_offset;
        a.antiquant_scale = a.antiquant_offset = NULL;
        a.key_antiquant_mode = 0, a.value_antiquant_mode = c->p.block_size ? 3 : 2;
    }
    a.input_layout = c->p.layout, a.num_key_value_heads = c->p.nkv;
    const int64_t nb = kn->shape[0];
    int64_t rope_pos[64];
    if (c->p.rope) {
        a.rope_mode = c->p.rope == IFA_ROPE_NEOX ? "neox" : "gptj", a.rope_dim = c->p.rope_dim;
        a.rope_offset = c->p.rope_offset;
        for (int64_t b = 0; c->p.rope_pos0 > 0 && b < nb; ++b) rope_pos[b] = rope_base(c, b0 + b) + c->len[b0 + b];
        if (c->p.rope_pos0 > 0) a.rope_positions = rope_pos, a.rope_positions_count = nb;
    }
    a.cache_seq_lengths = c->len + b0, a.cache_seq_lengths_count = nb;
    if (news) a.new_seq_lengths = news, a.new_seq_lengths_count = nb;
    if (c->table) a.block_table = c->table + b0 * c->cols, a.block_table_cols = c->cols, a.block_size = c->p.block_size;
    size_t ws_bytes = 0;
    ifa_status st = ifa_kv_cache_append_get_workspace_size(test_ctx(), &a, &ws_bytes);
    cl_mem ws = NULL;
    if (st == IFA_STATUS_OK) {
        const int64_t rd = c->p.rope ? (c->p.rope_dim ? c->p.rope_dim : c->p.d - c->p.rope_offset) : 0;
        ck_assert_uint_eq(ws_bytes, (size_t)(nb * (c->bnsd ? kn->shape[2] : kn->shape[1])) * 16 + 4 * (size_t)rd);
        cl_int err;
        ws = clCreateBuffer(ifa_context_cl_context(test_ctx()), CL_MEM_READ_WRITE, ws_bytes, NULL, &err);
        ck_assert_int_eq(err, CL_SUCCESS);
        st = ifa_kv_cache_append_run(test_ctx(), &a, ws, 0, test_queue(), 0, NULL, NULL);
        ck_assert_int_eq(clFinish(test_queue()), CL_SUCCESS);
    }
    if (ws) clReleaseMemObject(ws);
    clReleaseMemObject(kb);
    if (vb) clReleaseMemObject(vb);
    return st;
}

static ifa_status append(cache *c, int64_t b0, const ifa_host_tensor *kn, const ifa_host_tensor *vn) {
    return append_some(c, b0, kn, vn, NULL);
}

/* Random new rows for nb batches and s1 tokens in the layout, each (token, head) row with its own centre
 * and spread, so asymmetric ranges and tiny rows (a spread of 0 gives a constant row) are both exercised. */
static void new_rows(const cache *c, int64_t nb, int64_t s1, uint64_t seed, ifa_host_tensor *kn, ifa_host_tensor *vn) {
    const aspec *p = &c->p;
    int64_t sh[4];
    int32_t nd;
    if (c->bnsd) nd = 4, sh[0] = nb, sh[1] = p->nkv, sh[2] = s1, sh[3] = p->d;
    else if (strcmp(p->layout, "BSND") == 0) nd = 4, sh[0] = nb, sh[1] = s1, sh[2] = p->nkv, sh[3] = p->d;
    else nd = 3, sh[0] = nb, sh[1] = s1, sh[2] = p->nkv * p->d;
    ck_assert_int_eq(ifa_host_tensor_alloc(kn, p->src, nd, sh), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(vn, p->src, nd, sh), 0);
    ifa_rng rng;
    ifa_rng_seed(&rng, seed);
    for (int half = 0; half < 2; ++half)
        for (int64_t b = 0; b < nb; ++b)
            for (int64_t i = 0; i < s1; ++i)
                for (int64_t n = 0; n < p->nkv; ++n) {
                    const int64_t kind = ifa_rng_int(&rng, 0, 15);
                    const double centre = kind < 4 || kind == 15 ? ifa_rng_uniform(&rng, -3, 3) : 0;
                    const double spread = kind == 15 ? 0 : ifa_rng_uniform(&rng, 0.05, 2);
                    for (int64_t d = 0; d < p->d; ++d)
                        ifa_host_set(half ? vn : kn, ifa_kv_cache_at(c->bnsd, s1, p->nkv, p->d, b, i, n, d),
                                     centre + spread * ifa_rng_uniform(&rng, -1, 1));
                }
}

/* Appends s1 rows to batches [b0, b0 + nb), of which batch b writes news[b] (NULL: all), and records the
 * original values of the written ones. */
static void append_ok_some(cache *c, int64_t b0, int64_t nb, int64_t s1, uint64_t seed, const int64_t *news) {
    ifa_host_tensor kn, vn;
    new_rows(c, nb, s1, seed, &kn, &vn);
    const ifa_status st = append_some(c, b0, &kn, c->p.key_only ? NULL : &vn, news);
    ck_assert_msg(st == IFA_STATUS_OK, "append: %s", ifa_last_error());
    for (int half = 0; half < (c->p.key_only ? 1 : 2); ++half)
        for (int64_t b = 0; b < nb; ++b)
            for (int64_t i = 0; i < (news ? news[b] : s1); ++i)
                for (int64_t n = 0; n < c->p.nkv; ++n)
                    for (int64_t d = 0; d < c->p.d; ++d)
                        orig_at(c, half, b0 + b, c->len[b0 + b] + i, n)[d] =
                            ifa_host_get(half ? &vn : &kn, ifa_kv_cache_at(c->bnsd, s1, c->p.nkv, c->p.d, b, i, n, d));
    for (int64_t b = 0; b < nb; ++b) c->len[b0 + b] += news ? news[b] : s1;
    ifa_host_tensor_free(&kn), ifa_host_tensor_free(&vn);
}

static void append_ok(cache *c, int64_t b0, int64_t nb, int64_t s1, uint64_t seed) {
    append_ok_some(c, b0, nb, s1, seed, NULL);
}

/* Reads the cache back and checks every written row against its original, then that every other byte of
 * the cache, the scales and the offsets is as it was before the first append. */
static void check_cache(const cache *c) {
    const aspec *p = &c->p;
    ifa_host_tensor got[6], want[6];
    const ifa_host_tensor *init[6] = {&c->kc, &c->vc, &c->sc, &c->of, &c->gs, &c->go};
    for (int i = 0; i < 6; ++i) {
        memset(&got[i], 0, sizeof got[i]), memset(&want[i], 0, sizeof want[i]);
        if (!c->bufs[i]) continue;
        copy_tensor(init[i], &got[i]), copy_tensor(init[i], &want[i]);
        download_at(c->bufs[i], i < 2 ? c->base : 0, &got[i]);
        if (i < 2 && c->base) { /* nothing written before the cache */
            unsigned char guard[GUARD_BYTES];
            ck_assert_int_eq(clEnqueueReadBuffer(test_queue(), c->bufs[i], CL_TRUE, c->base - GUARD_BYTES, GUARD_BYTES,
                                                 guard, 0, NULL, NULL), CL_SUCCESS);
            for (int g = 0; g < GUARD_BYTES; ++g)
                ck_assert_msg(guard[g] == 0xa5, "%s cache byte %d before it written", i ? "value" : "key",
                              g - GUARD_BYTES);
        }
    }
    double *x = malloc((size_t)p->d * sizeof *x);
    ck_assert_ptr_nonnull(x);
    ifa_host_tensor one;
    ck_assert_int_eq(ifa_host_tensor_alloc(&one, p->cache, 1, (int64_t[]){2}), 0);
    for (int half = 0; half < (p->key_only ? 1 : 2); ++half)
        for (int64_t b = 0; b < p->b; ++b)
            for (int64_t pos = 0; pos < c->len[b]; ++pos)
                for (int64_t n = 0; n < p->nkv; ++n) {
                    int64_t u, r;
                    locate(c, b, pos, &u, &r);
                    expected_row(c, half, b, pos, n, x);
                    /* kivi: the value's scales have no half; the key's are given, per channel (below) */
                    const int64_t si = (((p->kivi ? 0 : half) * c->units + u) * p->nkv + n) * c->rows + r;
                    const int given = p->kivi && half == 0;
                    double scale = 1, offset = 0, amax = 0;
                    if (c->quant && !given) {
                        double rs, ro = 0;
                        if (c->fp8)
                            ifa_kv_fp8_scale(p->cache, x, p->d, &rs);
                        else
                            ifa_kv_quant_params(x, p->d, c->bits, p->asym, &rs, &ro);
                        scale = ifa_host_get(&got[2], si), offset = c->offsets ? ifa_host_get(&got[3], si) : 0;
                        ck_assert_msg(fabs(scale - rs) <= 8 * 0x1p-24 * rs, "b %lld pos %lld n %lld: scale %.9g, want %.9g",
                                      (long long)b, (long long)pos, (long long)n, scale, rs);
                        ck_assert_msg(fabs(offset - ro) <= 8 * 0x1p-24 * (fabs(ro) + 128),
                                      "b %lld pos %lld n %lld: offset %.9g, want %.9g", (long long)b, (long long)pos,
                                      (long long)n, offset, ro);
                        /* key-only: the key's scale and offset in the value half too */
                        for (int64_t at = si; at <= si + (p->key_only ? c->units * p->nkv * c->rows : 0);
                             at += c->units * p->nkv * c->rows) {
                            ifa_host_set(&want[2], at, scale);
                            if (c->offsets) ifa_host_set(&want[3], at, offset);
                        }
                        for (int64_t d = 0; d < p->d; ++d) amax = fmax(amax, fabs(x[d]));
                    }
                    /* a rotated key is the fp32 rotation of the stored rows: a few ulps of the row off the float64 one */
                    const double rot = half == 0 && p->rope ? 16 * 0x1p-24 * amax_of(x, p->d) : 0;
                    const double bound = ifa_kv_quant_bound(scale, offset, amax) + rot;
                    for (int64_t d = 0; d < p->d; ++d) {
                        const int64_t e = ifa_kv_cache_at(c->bnsd, c->rows, p->nkv, p->d, u, r, n, d);
                        const double g = ifa_host_get(&got[half], e);
                        if (given) { /* x / s_d - o_d rounded with the channel's given scale and offset */
                            const double s = ifa_host_get(&c->gs, n * p->d + d);
                            const double o = c->offsets ? ifa_host_get(&c->go, n * p->d + d) : 0;
                            const double lim = c->fp8 ? ifa_kv_fp8_bound(p->cache, s, x[d]) + rot
                                                      : ifa_kv_quant_bound(s, o, fabs(x[d])) + rot;
                            ck_assert_msg(fabs((g + o) * s - x[d]) <= lim,
                                          "b %lld pos %lld n %lld d %lld: given scale %.9g offset %.9g: q %g, x %.9g "
                                          "(bound %.3g)", (long long)b, (long long)pos, (long long)n, (long long)d, s, o,
                                          g, x[d], lim);
                        } else if (c->fp8 && c->quant) { /* x / scale rounded to float8 */
                            const double fb = ifa_kv_fp8_bound(p->cache, scale, x[d]) + rot;
                            ck_assert_msg(fabs(g * scale - x[d]) <= fb,
                                          "b %lld pos %lld n %lld d %lld: float8 %g x scale %.9g, x %.9g (bound %.3g)",
                                          (long long)b, (long long)pos, (long long)n, (long long)d, g, scale, x[d], fb);
                        } else if (c->quant) {
                            ck_assert_msg(fabs((g + offset) * scale - x[d]) <= bound,
                                          "b %lld pos %lld n %lld d %lld: q %g dequantises to %.9g, x %.9g (bound %.3g)",
                                          (long long)b, (long long)pos, (long long)n, (long long)d, g,
                                          (g + offset) * scale, x[d], bound);
                        } else {
                            /* exact, or with RoPE within the fp32 rotation and one rounding to the cache dtype */
                            ifa_host_set(&one, 0, x[d]);
                            const double want = ifa_host_get(&one, 0);
                            const double tol = rot + ifa_kv_round_bound(p->cache, x[d]);
                            ck_assert_msg(rot > 0 ? fabs(g - x[d]) <= tol : g == want,
                                          "b %lld pos %lld n %lld d %lld: %.9g, want %.9g", (long long)b, (long long)pos,
                                          (long long)n, (long long)d, g, rot > 0 ? x[d] : want);
                        }
                        ifa_host_set(&want[half], e, g);
                    }
                }
    for (int i = 0; i < 6; ++i) {
        if (!c->bufs[i]) continue;
        ck_assert_msg(memcmp(got[i].data, want[i].data, got[i].bytes) == 0, "tensor %d changed outside the new rows", i);
        ifa_host_tensor_free(&got[i]), ifa_host_tensor_free(&want[i]);
    }
    ifa_host_tensor_free(&one);
    free(x);
}

/* An IncreFlashAttention case over what the cache holds (read back): n query heads of sq tokens (random), the
 * cache's lengths, scales (antiquant_mode 2, or 3 paged) and block table; a key-only cache is its own value
 * (value_is_key, the value a host copy of the key). */
static void attend_case(const cache *c, int64_t n, int64_t sq, ifa_case *k) {
    const aspec *p = &c->p;
    ifa_case_init(k);
    copy_tensor(&c->kc, &k->key), download_at(c->bufs[0], c->base, &k->key);
    if (p->key_only) copy_tensor(&k->key, &k->value), k->value_is_key = 1;
    else copy_tensor(&c->vc, &k->value), download_at(c->bufs[1], c->base, &k->value);
    if (p->kivi) { /* the separate form: the key's given scales, the value's as written */
        copy_tensor(&c->gs, &k->key_antiquant_scale);
        if (c->offsets) copy_tensor(&c->go, &k->key_antiquant_offset);
        copy_tensor(&c->sc, &k->value_antiquant_scale), download(c->bufs[2], &k->value_antiquant_scale);
        if (c->offsets) copy_tensor(&c->of, &k->value_antiquant_offset), download(c->bufs[3], &k->value_antiquant_offset);
        k->key_antiquant_mode = 0, k->value_antiquant_mode = p->block_size ? 3 : 2;
    } else if (c->quant) {
        copy_tensor(&c->sc, &k->antiquant_scale), download(c->bufs[2], &k->antiquant_scale);
        if (c->offsets) copy_tensor(&c->of, &k->antiquant_offset), download(c->bufs[3], &k->antiquant_offset);
        k->antiquant_mode = p->block_size ? 3 : 2;
    }
    int64_t qs[4];
    int32_t qnd;
    if (c->bnsd) qnd = 4, qs[0] = p->b, qs[1] = n, qs[2] = sq, qs[3] = p->d;
    else if (strcmp(p->layout, "BSND") == 0) qnd = 4, qs[0] = p->b, qs[1] = sq, qs[2] = n, qs[3] = p->d;
    else qnd = 3, qs[0] = p->b, qs[1] = sq, qs[2] = n * p->d;
    ck_assert_int_eq(ifa_host_tensor_alloc(&k->query, p->src, qnd, qs), 0);
    ifa_host_fill_random(&k->query, p->seed * 3 + 20, -1, 1);
    k->lengths = malloc((size_t)p->b * sizeof *k->lengths);
    ck_assert_ptr_nonnull(k->lengths);
    memcpy(k->lengths, c->len, (size_t)p->b * sizeof *k->lengths), k->lengths_count = p->b;
    k->num_heads = n, k->num_key_value_heads = p->nkv, k->scale_value = 1.0 / sqrt((double)p->d);
    strcpy(k->input_layout, p->layout);
    k->softmax_lse_flag = 1;
    if (p->block_size) {
        k->block_table = malloc((size_t)(p->b * c->cols) * sizeof *k->block_table);
        ck_assert_ptr_nonnull(k->block_table);
        memcpy(k->block_table, c->table, (size_t)(p->b * c->cols) * sizeof *k->block_table);
        k->block_table_cols = c->cols, k->block_size = p->block_size;
    }
}

static const char *const layouts[] = {"BSH", "BSND", "BNSD"};
static const ifa_dtype caches[] = {IFA_DTYPE_FLOAT16, IFA_DTYPE_BFLOAT16, IFA_DTYPE_FLOAT32, IFA_DTYPE_INT8,
                                   IFA_DTYPE_INT4};
/* case i's cache: one of the five by (i / 2) % 5 below first_fp8, float8 e4m3fn for n_fp8 cases from there and
 * e5m2 after them (each format's cases were appended, so the earlier ones keep their indices and parameters) */
static ifa_dtype cache_of(int i, int first_fp8, int n_fp8) {
    return i >= first_fp8 + n_fp8 ? IFA_DTYPE_FLOAT8_E5M2 : i >= first_fp8 ? IFA_DTYPE_FLOAT8_E4M3 : caches[(i / 2) % 5];
}
static const ifa_dtype srcs[] = {IFA_DTYPE_FLOAT16, IFA_DTYPE_BFLOAT16, IFA_DTYPE_FLOAT32};

/* Every layout x cache dtype x (contiguous, paged), symmetric and asymmetric (float8: with and without
 * scales): a prefill per batch (ragged),
 * then decode steps of 1 and of 3 tokens for all batches at their own lengths. */
START_TEST(append_rows) {
    const int paged = _i % 2;
    aspec p = {.layout = layouts[_i % 3], .src = srcs[_i % 3], .cache = cache_of(_i, 30, 6), .asym = _i >= 30 ? _i % 3 != 0 : (_i / 10) % 2,
               .b = 3, .nkv = 2, .d = _i % 4 == 3 ? 40 : 64, .cap = 96, .block_size = paged ? (_i % 3 ? 16 : 5) : 0,
               .seed = 7000 + (uint64_t)_i};
    if (paged && p.block_size == 5) p.cap = 95;
    cache c;
    cache_init(&c, &p);
    for (int64_t b = 0; b < p.b; ++b)
        if (paged) append_ok(&c, b, 1, 10 + 7 * b, p.seed * 3 + (uint64_t)b); /* B = 1 calls with that row */
    if (!paged) append_ok(&c, 0, p.b, 12, p.seed * 3);
    append_ok(&c, 0, p.b, 1, p.seed * 3 + 10);
    append_ok(&c, 0, p.b, 3, p.seed * 3 + 11);
    check_cache(&c);
    cache_free(&c);
}
END_TEST

/* RoPE on the appended keys (never the values): both modes, partial rope_dim, every layout and cache dtype,
 * contiguous and paged, default positions and positions near 2^20, rows rotated before quantisation; a
 * rotated part away from the front (rope_offset): the trailing 16 or 32 (the CPU shape's vector path, but for
 * neox's 16; DeepSeek's MLA key rotates its trailing 64) and 32 dims from 10 (element by element). */
START_TEST(append_rows_rope) {
    const int paged = _i % 2;
    aspec p = {.layout = layouts[_i % 3], .src = srcs[_i % 3], .cache = cache_of(_i, 20, 4), .asym = (_i / 4) % 2,
               .b = 3, .nkv = 2, .d = 64, .cap = 96, .block_size = paged ? 16 : 0, .rope = 1 + (_i / 3) % 2,
               .rope_dim = _i % 5 == 0 ? 16 : 0, .rope_pos0 = _i >= 10 ? (1 << 20) - 40 : 0, .seed = 7400 + (uint64_t)_i};
    if (_i >= 28) /* 16 dims from 48 and 32 from 32 (vectors, but for neox's 16), 32 from 10 */
        p.cache = caches[_i % 5], p.rope_dim = _i % 4 == 0 ? 16 : 32, p.rope_offset = _i % 2 ? 10 : 64 - p.rope_dim;
    cache c;
    cache_init(&c, &p);
    append_ok(&c, 0, p.b, 12, p.seed * 3);
    append_ok(&c, 0, p.b, 1, p.seed * 3 + 1);
    append_ok(&c, 0, p.b, 2, p.seed * 3 + 2);
    check_cache(&c);
    cache_free(&c);
}
END_TEST

/* A new row holding a NaN or an infinity gets a NaN scale (and offset), so attention over it is visibly NaN
 * instead of silently wrong; the call's other rows are quantised as usual. int8 and int4, symmetric and
 * asymmetric, D = 64 (the CPU shape's 16-wide path) and D = 40 (element by element). */
START_TEST(append_nonfinite_row) {
    static const double bad[] = {NAN, INFINITY, -INFINITY};
    const aspec p = {.layout = "BSND", .src = IFA_DTYPE_FLOAT16, .cache = _i % 2 ? IFA_DTYPE_INT4 : IFA_DTYPE_INT8,
                     .asym = (_i / 2) % 2, .b = 2, .nkv = 2, .d = (_i / 4) % 2 ? 40 : 64, .cap = 8,
                     .seed = 7500 + (uint64_t)_i};
    cache c;
    cache_init(&c, &p);
    ifa_host_tensor kn, vn, sc, of;
    new_rows(&c, p.b, 1, p.seed, &kn, &vn);
    /* batch 1: one element of key head 0 and one of value head 1 */
    ifa_host_set(&kn, ifa_kv_cache_at(0, 1, p.nkv, p.d, 1, 0, 0, 5), bad[_i / 8]);
    ifa_host_set(&vn, ifa_kv_cache_at(0, 1, p.nkv, p.d, 1, 0, 1, p.d - 1), bad[_i / 8]);
    ck_assert_msg(append(&c, 0, &kn, &vn) == IFA_STATUS_OK, "append: %s", ifa_last_error());
    copy_tensor(&c.sc, &sc), download(c.bufs[2], &sc);
    if (p.asym) copy_tensor(&c.of, &of), download(c.bufs[3], &of);
    double x[64];
    for (int half = 0; half < 2; ++half)
        for (int64_t b = 0; b < p.b; ++b)
            for (int64_t n = 0; n < p.nkv; ++n) {
                const int64_t si = ((half * c.units + b) * p.nkv + n) * c.rows; /* position 0 of batch b */
                const double scale = ifa_host_get(&sc, si), offset = p.asym ? ifa_host_get(&of, si) : 0;
                if (b == 1 && n == half) {
                    ck_assert_msg(isnan(scale) && (!p.asym || isnan(offset)), "half %d: row with %g: scale %g, offset %g",
                                  half, bad[_i / 8], scale, offset);
                    continue;
                }
                for (int64_t d = 0; d < p.d; ++d)
                    x[d] = ifa_host_get(half ? &vn : &kn, ifa_kv_cache_at(0, 1, p.nkv, p.d, b, 0, n, d));
                double rs, ro;
                ifa_kv_quant_params(x, p.d, c.bits, p.asym, &rs, &ro);
                ck_assert_msg(fabs(scale - rs) <= 8 * 0x1p-24 * rs && fabs(offset - ro) <= 8 * 0x1p-24 * (fabs(ro) + 128),
                              "half %d b %lld n %lld: scale %.9g offset %.9g, want %.9g %.9g", half, (long long)b,
                              (long long)n, scale, offset, rs, ro);
            }
    ifa_host_tensor_free(&kn), ifa_host_tensor_free(&vn), ifa_host_tensor_free(&sc);
    if (p.asym) ifa_host_tensor_free(&of);
    cache_free(&c);
}
END_TEST

/* Attention over the appended cache, on the same device buffers, against the float64 reference on what the
 * cache holds (the usual output tolerance) and on the original rows (plus the storage precision). Cases 46-51
 * keep the caches at the end of the largest buffer the device allocates (int4, int8, float16, float8, bfloat16;
 * contiguous and paged): append and attention index past 2^31 bytes (int4 nibbles near 2^32 on PoCL, float16
 * elements past 2^32 on a card), and no byte before the caches is written. */
START_TEST(append_then_attend) {
    const int paged = _i % 2;
    aspec p = {.layout = layouts[_i % 3], .src = _i % 3 == 1 ? IFA_DTYPE_BFLOAT16 : IFA_DTYPE_FLOAT16,
               .cache = cache_of(_i, 30, 6), .asym = _i >= 30 ? _i % 3 != 0 : _i % 4 < 2, .b = 3, .nkv = 2, .d = 64,
               .cap = 320, .block_size = paged ? 32 : 0, .seed = 7100 + (uint64_t)_i};
    if (_i >= 20 && (_i < 30 || _i % 3)) /* RoPE: both modes, partial dims, default and large explicit positions */
        p.rope = 1 + _i % 2, p.rope_dim = _i % 3 == 0 ? 32 : 0, p.rope_pos0 = _i % 4 >= 2 ? (1 << 20) - 500 : 0;
    if (_i >= 42 && _i < 46) /* the trailing dims rotate, as MLA's keys */
        p.cache = _i % 2 ? IFA_DTYPE_INT8 : IFA_DTYPE_FLOAT16, p.rope = 1 + _i / 2 % 2, p.rope_dim = p.rope == 1 ? 32 : 16,
        p.rope_offset = 64 - p.rope_dim;
    if (_i >= 46) { /* the caches at the end of the largest buffer the device allocates */
        static const ifa_dtype far_caches[] = {IFA_DTYPE_INT4, IFA_DTYPE_INT4, IFA_DTYPE_INT8, IFA_DTYPE_FLOAT16,
                                               IFA_DTYPE_FLOAT8_E4M3, IFA_DTYPE_BFLOAT16};
        p.far = 1, p.cache = far_caches[_i - 46];
    }
    const int64_t n = 8, sq = _i >= 10 ? 2 : 1;
    cache c;
    cache_init(&c, &p);
    if (paged)
        for (int64_t b = 0; b < p.b; ++b) append_ok(&c, b, 1, 150 + 61 * b, p.seed * 3 + (uint64_t)b);
    else
        append_ok(&c, 0, p.b, 200, p.seed * 3);
    append_ok(&c, 0, p.b, sq, p.seed * 3 + 9); /* this step's own tokens */
    if (p.far) check_cache(&c); /* the rows, every other byte and the guard before the caches */

    /* the reference case reads what the cache holds */
    ifa_case k;
    attend_case(&c, n, sq, &k);
    if (p.rope) { /* the query at the positions of this step's keys */
        strcpy(k.rope_mode, p.rope == IFA_ROPE_NEOX ? "neox" : "gptj"), k.rope_dim = p.rope_dim;
        k.rope_offset = p.rope_offset;
        if (p.rope_pos0 > 0) {
            k.rope_positions = malloc((size_t)p.b * sizeof *k.rope_positions);
            ck_assert_ptr_nonnull(k.rope_positions);
            for (int64_t b = 0; b < p.b; ++b) k.rope_positions[b] = rope_base(&c, b) + c.len[b] - sq;
            k.rope_positions_count = p.b;
        }
    }

    /* the op runs on the cache's own buffers */
    ifa_case_result r;
    memset(&r, 0, sizeof r);
    copy_tensor(&k.query, &r.out);
    for (int64_t i = 0; i < ifa_host_tensor_numel(&r.out); ++i) ifa_host_set(&r.out, i, NAN);
    const int64_t ls[3] = {p.b, n, sq};
    ck_assert_int_eq(ifa_host_tensor_alloc(&r.lse, IFA_DTYPE_FLOAT32, 3, ls), 0);
    for (int64_t i = 0; i < ifa_host_tensor_numel(&r.lse); ++i) ifa_host_set(&r.lse, i, NAN);
    cl_mem bufs[IFA_CASE_TENSORS] = {0};
    bufs[0] = upload(&k.query), bufs[1] = c.bufs[0], bufs[2] = c.bufs[1], bufs[3] = upload(&r.out);
    bufs[4] = upload(&r.lse), bufs[7] = c.bufs[2], bufs[8] = c.bufs[3];
    ifa_case_tensors t;
    ifa_incre_flash_attention_args a;
    ifa_case_describe(&k, &r.out, &r.lse, bufs, &t, &a);
    t.key.offset = t.value.offset = c.base;
    size_t ws_bytes = 0;
    ck_assert_msg(ifa_incre_flash_attention_get_workspace_size(test_ctx(), &a, &r.plan, &ws_bytes) == IFA_STATUS_OK,
                  "%s", ifa_last_error());
    cl_int err;
    cl_mem ws = clCreateBuffer(ifa_context_cl_context(test_ctx()), CL_MEM_READ_WRITE, ws_bytes ? ws_bytes : 8, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_msg(ifa_incre_flash_attention_run(test_ctx(), &r.plan, &a, ws, 0, test_queue(), 0, NULL, NULL) ==
                      IFA_STATUS_OK, "%s", ifa_last_error());
    download(bufs[3], &r.out), download(bufs[4], &r.lse);
    clReleaseMemObject(ws), clReleaseMemObject(bufs[0]), clReleaseMemObject(bufs[3]), clReleaseMemObject(bufs[4]);

    ifa_case_check chk;
    ck_assert_int_eq(ifa_case_check_result(&k, &r, &chk), 0);
    ck_assert_msg(chk.pass, "%s cache %s: vs the cache's contents rel_l2 %.3g (tol %.0e), nonfinite %lld, lse_bad %lld",
                  p.layout, ifa_dtype_name(p.cache), chk.rel_l2, chk.tolerance, (long long)chk.nonfinite,
                  (long long)chk.lse_bad);

    /* the storage error: the cache's values (dequantised) against the original rows, relative L2 */
    double num = 0, den = 0;
    for (int half = 0; half < 2; ++half)
        for (int64_t b = 0; b < p.b; ++b)
            for (int64_t pos = 0; pos < c.len[b]; ++pos)
                for (int64_t h = 0; h < p.nkv; ++h) {
                    int64_t u, row;
                    locate(&c, b, pos, &u, &row);
                    const int64_t si = ((half * c.units + u) * p.nkv + h) * c.rows + row;
                    const double sc = c.quant ? ifa_host_get(&k.antiquant_scale, si) : 1;
                    const double of = c.offsets ? ifa_host_get(&k.antiquant_offset, si) : 0;
                    double xr[512];
                    expected_row(&c, half, b, pos, h, xr);
                    for (int64_t d = 0; d < p.d; ++d) {
                        const double x = xr[d];
                        const double y = (ifa_host_get(half ? &k.value : &k.key,
                                                       ifa_kv_cache_at(c.bnsd, c.rows, p.nkv, p.d, u, row, h, d)) + of) * sc;
                        num += (y - x) * (y - x), den += x * x;
                    }
                }
    const double storage = sqrt(num / den);
    /* which the storage precision bounds on its own (so that a wrong row cannot widen the tolerance below):
     * one rounding for float caches, at most 1/(2^bits - 1) of a row's largest value per element quantised */
    const double storage_limit = c.fp8 ? (p.cache == IFA_DTYPE_FLOAT8_E5M2 ? 0x1p-3 : 0x1p-4) /* half a step */
                                 : c.quant ? 2.0 / ((1 << c.bits) - 1)
                                 : p.cache == IFA_DTYPE_FLOAT32 ? 1e-6 : p.cache == IFA_DTYPE_FLOAT16 ? 0x1p-11 : 0x1p-8;
    ck_assert_msg(storage <= storage_limit, "%s cache %s: the cache holds rows %.3g (relative L2) off the original "
                  "(limit %.3g)", p.layout, ifa_dtype_name(p.cache), storage, storage_limit);

    /* the same case over float32 K/V holding the original rows, without antiquant; ref_cache and ref_orig are
     * the float64 outputs over the two, whose distance is what storage alone costs */
    const size_t nout = (size_t)ifa_host_tensor_numel(&r.out);
    double *ref_cache = malloc(nout * sizeof *ref_cache), *ref_orig = malloc(nout * sizeof *ref_orig);
    ck_assert(ref_cache && ref_orig);
    ck_assert_int_eq(ifa_reference_ifa(&k, ref_cache, NULL, NULL), 0);
    ifa_host_tensor_free(&k.antiquant_scale), ifa_host_tensor_free(&k.antiquant_offset);
    k.antiquant_mode = 0;
    for (int half = 0; half < 2; ++half) {
        ifa_host_tensor *kv = half ? &k.value : &k.key, f;
        ck_assert_int_eq(ifa_host_tensor_alloc(&f, IFA_DTYPE_FLOAT32, kv->ndim, kv->shape), 0);
        for (int64_t i = 0; i < ifa_host_tensor_numel(&f); ++i) ifa_host_set(&f, i, NAN);
        for (int64_t b = 0; b < p.b; ++b)
            for (int64_t pos = 0; pos < c.len[b]; ++pos)
                for (int64_t h = 0; h < p.nkv; ++h) {
                    int64_t u, row;
                    locate(&c, b, pos, &u, &row);
                    double xr[512];
                    expected_row(&c, half, b, pos, h, xr);
                    for (int64_t d = 0; d < p.d; ++d)
                        ifa_host_set(&f, ifa_kv_cache_at(c.bnsd, c.rows, p.nkv, p.d, u, row, h, d), xr[d]);
                }
        ifa_host_tensor_free(kv);
        *kv = f;
    }
    const double tol_cache = chk.tolerance; /* the first check's: the op against ref_cache */
    ck_assert_int_eq(ifa_case_check_result(&k, &r, &chk), 0);
    ck_assert_int_eq(ifa_reference_ifa(&k, ref_orig, NULL, NULL), 0);
    double dist = 0, n_cache = 0, n_orig = 0;
    for (size_t i = 0; i < nout; ++i)
        dist += (ref_cache[i] - ref_orig[i]) * (ref_cache[i] - ref_orig[i]), n_cache += ref_cache[i] * ref_cache[i],
            n_orig += ref_orig[i] * ref_orig[i];
    /* errors in K move the weights and errors in V the values: against the original rows the op may be off
     * by what storage costs the exact outputs (d) plus its own tolerance against the cache's: |op - orig| <=
     * |op - cache| + |cache - orig| (the factor over the storage's own error was 1.1x to 3.6x over seeds) */
    const double d = sqrt(dist / n_orig), tol = tol_cache * sqrt(n_cache / n_orig) + d;
    ck_assert_msg(chk.nonfinite == 0 && chk.rel_l2 <= tol * (1 + 1e-9),
                  "%s cache %s: vs the original rows rel_l2 %.3g (bound %.3g: storage moves the exact outputs by %.3g, "
                  "storage error %.3g)", p.layout, ifa_dtype_name(p.cache), chk.rel_l2, tol, d, storage);
    free(ref_cache), free(ref_orig);
    ifa_case_result_free(&r);
    ifa_case_free(&k);
    cache_free(&c);
}
END_TEST

/* Runs attention case k (what the cache of spec p holds) and checks it against the float64 reference; frees k. */
static void attend_check(const aspec *p, ifa_case *k) {
    ifa_case_result r;
    const ifa_status st = ifa_case_run(test_ctx(), test_queue(), k, NULL, NULL, &r);
    ck_assert_msg(st == IFA_STATUS_OK, "%s", ifa_last_error());
    ifa_case_check chk;
    ck_assert_int_eq(ifa_case_check_result(k, &r, &chk), 0);
    ck_assert_msg(chk.pass, "%s cache %s: rel_l2 %.3g (tol %.0e), nonfinite %lld, lse_bad %lld", p->layout,
                  ifa_dtype_name(p->cache), chk.rel_l2, chk.tolerance, (long long)chk.nonfinite, (long long)chk.lse_bad);
    ifa_case_result_free(&r);
    ifa_case_free(k);
}

/* A key-only append (value and value_cache NULL: one latent cache, multi-head latent attention) into a bf16,
 * int8 (asymmetric) or float8 cache, contiguous or paged, over two steps: the key rows land as in a full
 * append, the value cache is untouched, and each row's scale and offset land in both halves of the scale
 * tensors (check_cache); then IncreFlashAttention with the key cache as the value and value_head_dim
 * reads it back equal to the float64 reference on what the cache holds. */
START_TEST(key_only_append_then_attend) {
    static const ifa_dtype kinds[] = {IFA_DTYPE_BFLOAT16, IFA_DTYPE_INT8, IFA_DTYPE_FLOAT8_E4M3};
    const int paged = _i % 2;
    aspec p = {.layout = layouts[_i % 3], .src = IFA_DTYPE_FLOAT16, .cache = kinds[_i / 2 % 3], .asym = 1, .b = 2,
               .nkv = 1, .d = 72, .cap = 192, .block_size = paged ? 32 : 0, .key_only = 1, .seed = 7400 + (uint64_t)_i};
    cache c;
    cache_init(&c, &p);
    append_ok(&c, 0, p.b, 100, p.seed * 3);
    append_ok(&c, 0, p.b, 1, p.seed * 3 + 1); /* this step's token */
    check_cache(&c);
    ifa_case k;
    attend_case(&c, 8, 1, &k); /* the key cache as its own value */
    k.value_head_dim = 64;
    attend_check(&p, &k);
    cache_free(&c);
}
END_TEST

/* The separate form (KIVI's pairing): keys quantised with given per-channel scales (and zero points in an
 * integer cache), values online per token and head into value_antiquant_scale, in int8, int4 and float8
 * caches, contiguous and paged, with RoPE on the keys in some: every key within half a step of its channel's
 * scale, every value row as in the (2, ...) form, nothing else written (the given scales included); then
 * IncreFlashAttention with key_antiquant_mode 0 and value_antiquant_mode 2 or 3 reads the cache equal to the
 * float64 reference on what it holds. */
START_TEST(kivi_append_then_attend) {
    static const ifa_dtype kinds[] = {IFA_DTYPE_INT8, IFA_DTYPE_INT4, IFA_DTYPE_FLOAT8_E4M3, IFA_DTYPE_FLOAT8_E5M2};
    const int paged = _i % 2;
    aspec p = {.layout = layouts[_i % 3], .src = _i % 3 == 1 ? IFA_DTYPE_BFLOAT16 : IFA_DTYPE_FLOAT16,
               .cache = kinds[_i / 2 % 4], .asym = _i % 3 != 2, .b = 3, .nkv = 2, .d = _i % 5 == 4 ? 40 : 64,
               .cap = 160, .block_size = paged ? 16 : 0, .rope = _i >= 8 ? 1 + _i % 2 : 0, .kivi = 1,
               .seed = 7700 + (uint64_t)_i};
    cache c;
    cache_init(&c, &p);
    append_ok(&c, 0, p.b, 90, p.seed * 3);
    append_ok(&c, 0, p.b, 1, p.seed * 3 + 1);
    check_cache(&c);
    ifa_case k;
    attend_case(&c, 8, 1, &k);
    attend_check(&p, &k);
    cache_free(&c);
}
END_TEST

/* Speculative decoding's ragged steps: S1 = 3 new rows per batch of which each batch writes its own count
 * (new_seq_lengths; 0 for an idle slot), over two steps, into a float16, int8 (asymmetric, per-token scales
 * with the pages) or float8 cache, contiguous or paged: the written rows land, nothing else changes
 * (check_cache: every other byte of cache, scales and offsets). Then IncreFlashAttention with
 * actual_seq_lengths_q = the last step's counts (the query's padding tokens NaN) reads it back equal to the
 * float64 reference on what the cache holds. */
START_TEST(ragged_append_then_attend) {
    static const ifa_dtype kinds[] = {IFA_DTYPE_FLOAT16, IFA_DTYPE_INT8, IFA_DTYPE_FLOAT8_E5M2};
    static const int64_t step1[] = {3, 0, 1}, step2[] = {1, 2, 0};
    const int paged = _i % 2;
    aspec p = {.layout = layouts[_i % 3], .src = IFA_DTYPE_FLOAT16, .cache = kinds[_i / 2 % 3], .asym = 1, .b = 3,
               .nkv = 2, .d = 64, .cap = 160, .block_size = paged ? 16 : 0, .rope = _i >= 3 ? IFA_ROPE_NEOX : 0,
               .seed = 7500 + (uint64_t)_i};
    cache c;
    cache_init(&c, &p);
    append_ok(&c, 0, p.b, 40, p.seed * 3);
    append_ok_some(&c, 0, p.b, 3, p.seed * 3 + 1, step1);
    append_ok_some(&c, 0, p.b, 3, p.seed * 3 + 2, step2);
    ck_assert_int_eq(c.len[0], 44);
    ck_assert_int_eq(c.len[1], 42);
    ck_assert_int_eq(c.len[2], 41);
    check_cache(&c);
    ifa_case k;
    attend_case(&c, 8, 3, &k);
    k.q_lengths = malloc(sizeof step2);
    ck_assert_ptr_nonnull(k.q_lengths);
    memcpy(k.q_lengths, step2, sizeof step2), k.q_lengths_count = p.b;
    if (p.rope) strcpy(k.rope_mode, "neox"); /* the query at the same default positions as the appended keys */
    for (int64_t b = 0; b < p.b; ++b) /* the padding tokens are never read */
        for (int64_t t = step2[b]; t < 3; ++t)
            for (int64_t h = 0; h < 8; ++h)
                for (int64_t d = 0; d < p.d; ++d)
                    ifa_host_set(&k.query, ifa_case_at(c.bnsd, 3, 8, p.d, b, t, h, d), NAN);
    attend_check(&p, &k);
    cache_free(&c);
}
END_TEST

/* ---- invalid arguments ---------------------------------------------------------------------------- */

/* A valid planning-only BSH append: B = 2, S1 = 2, N_kv = 2, D = 16 into an int8 cache of S_max 8 (or a
 * paged pool of 6 blocks of 4 rows, 2 columns per batch). */
typedef struct afix {
    ifa_tensor k, v, kc, vc, sc, of, rc, rs, gs, go, vs, vo;
    int64_t lens[2];
    int32_t table[4];
    ifa_kv_cache_append_args a;
} afix;

static void tdesc(ifa_tensor *t, ifa_dtype dt, int nd, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
    memset(t, 0, sizeof *t);
    t->dtype = dt, t->ndim = nd;
    t->shape[0] = d0, t->shape[1] = d1, t->shape[2] = d2, t->shape[3] = d3;
}

static void afix_setup(afix *f) {
    tdesc(&f->k, IFA_DTYPE_FLOAT16, 3, 2, 2, 32, 0), f->v = f->k;
    tdesc(&f->kc, IFA_DTYPE_INT8, 3, 2, 8, 32, 0), f->vc = f->kc;
    tdesc(&f->sc, IFA_DTYPE_FLOAT32, 4, 2, 2, 2, 8), f->of = f->sc;
    f->lens[0] = 6, f->lens[1] = 0;
    ifa_kv_cache_append_args_init(&f->a);
    f->a.key = &f->k, f->a.value = &f->v, f->a.key_cache = &f->kc, f->a.value_cache = &f->vc;
    f->a.antiquant_scale = &f->sc, f->a.antiquant_offset = &f->of;
    f->a.num_key_value_heads = 2, f->a.cache_seq_lengths = f->lens, f->a.cache_seq_lengths_count = 2;
}

static void afix_paged(afix *f) {
    afix_setup(f);
    tdesc(&f->kc, IFA_DTYPE_INT8, 3, 6, 4, 32, 0), f->vc = f->kc;
    tdesc(&f->sc, IFA_DTYPE_FLOAT32, 4, 2, 6, 2, 4), f->of = f->sc;
    const int32_t table[4] = {5, 1, 2, 0};
    memcpy(f->table, table, sizeof table);
    f->a.block_table = f->table, f->a.block_table_cols = 2, f->a.block_size = 4;
}

/* The separate form on the contiguous int8 fixture: the key's scales given per channel (N_kv, D) in float16 with
 * offsets, the value's written per token and head (B, N_kv, S_max) with offsets. */
static void afix_separate(afix *f) {
    afix_setup(f);
    tdesc(&f->gs, IFA_DTYPE_FLOAT16, 2, 2, 16, 0, 0), f->go = f->gs;
    tdesc(&f->vs, IFA_DTYPE_FLOAT32, 3, 2, 2, 8, 0), f->vo = f->vs;
    f->a.antiquant_scale = f->a.antiquant_offset = NULL;
    f->a.key_antiquant_scale = &f->gs, f->a.key_antiquant_offset = &f->go;
    f->a.value_antiquant_scale = &f->vs, f->a.value_antiquant_offset = &f->vo, f->a.value_antiquant_mode = 2;
}

static void aexpect(const afix *f, ifa_status want, const char *needle) {
    size_t ws = 0;
    const ifa_status st = ifa_kv_cache_append_get_workspace_size(test_ctx(), &f->a, &ws);
    ck_assert_msg(st == want, "got %s (%s), want %s", ifa_status_name(st), ifa_last_error(), ifa_status_name(want));
    if (want == IFA_STATUS_OK) {
        /* 16 bytes per new token, then the inverse frequencies when RoPE computes its angles (D = 16) */
        ck_assert_uint_eq(ws, 2 * 2 * 16 + (f->a.rope_mode && !f->a.rope_cos ? 4 * 16 : 0));
        return;
    }
    ck_assert_msg(strstr(ifa_last_error(), needle), "message \"%s\" lacks \"%s\"", ifa_last_error(), needle);
}

START_TEST(append_rules) {
    afix f;
    afix_setup(&f);
    aexpect(&f, IFA_STATUS_OK, NULL);
    size_t ws;
    ck_assert_int_eq(ifa_kv_cache_append_get_workspace_size(test_ctx(), NULL, &ws), IFA_STATUS_NULL_ARGUMENT);
    ck_assert_int_eq(ifa_kv_cache_append_get_workspace_size(NULL, &f.a, &ws), IFA_STATUS_NULL_ARGUMENT);
    ck_assert_int_eq(ifa_kv_cache_append_get_workspace_size(test_ctx(), &f.a, NULL), IFA_STATUS_NULL_ARGUMENT);
    ck_assert_int_eq(ifa_kv_cache_append_run(test_ctx(), &f.a, NULL, 0, test_queue(), 2, NULL, NULL),
                     IFA_STATUS_NULL_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ifa_last_error(), "event_wait_list is NULL with num_events_in_wait_list = 2"));
    afix_setup(&f), f.a.value_cache = NULL;
    aexpect(&f, IFA_STATUS_NULL_ARGUMENT, "value_cache is NULL but value is given; a key-only append (one latent "
                                          "cache, multi-head latent attention) leaves both NULL");
    afix_setup(&f), f.a.value = NULL;
    aexpect(&f, IFA_STATUS_NULL_ARGUMENT, "value is NULL but value_cache is given");
    afix_setup(&f), f.a.value = NULL, f.a.value_cache = NULL; /* key-only */
    aexpect(&f, IFA_STATUS_OK, NULL);
    afix_setup(&f), f.a.key_cache = NULL;
    aexpect(&f, IFA_STATUS_NULL_ARGUMENT, "key_cache is NULL");
    afix_setup(&f), f.a.input_layout = "SBH";
    aexpect(&f, IFA_STATUS_INVALID_LAYOUT, "input_layout \"SBH\" is not one of BSH, BSND, BNSD");
    afix_setup(&f), f.a.num_key_value_heads = 0;
    aexpect(&f, IFA_STATUS_INVALID_HEADS, "num_key_value_heads = 0 is outside [1, 256]");
    afix_setup(&f), f.a.input_layout = "BNSD";
    aexpect(&f, IFA_STATUS_INVALID_RANK, "key has rank 3; input_layout BNSD needs rank 4 (B, N_kv, S1, D)");
    afix_setup(&f), f.a.num_key_value_heads = 3;
    aexpect(&f, IFA_STATUS_SHAPE_MISMATCH, "key's last dimension 32 is not a multiple of num_key_value_heads = 3");
    afix_setup(&f), f.k.shape[2] = f.v.shape[2] = 2 * 577;
    aexpect(&f, IFA_STATUS_INVALID_HEAD_DIM, "D = 577 is outside [1, 576]");
    afix_setup(&f), f.v.shape[1] = 3;
    aexpect(&f, IFA_STATUS_SHAPE_MISMATCH, "value has shape (2, 3, 32); it must be key's shape (2, 2, 32)");
    afix_setup(&f), f.k.dtype = f.v.dtype = IFA_DTYPE_INT8;
    aexpect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "key has dtype int8; new rows are float32, float16 or bfloat16");
    afix_setup(&f), f.v.dtype = IFA_DTYPE_FLOAT32;
    aexpect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "value has dtype float32; it must be key's float16");
    afix_setup(&f), f.kc.shape[0] = f.vc.shape[0] = 3;
    aexpect(&f, IFA_STATUS_SHAPE_MISMATCH, "key_cache has shape (3, 8, 32); a contiguous BSH cache with B = 2");
    afix_setup(&f), f.vc.shape[1] = 9;
    aexpect(&f, IFA_STATUS_SHAPE_MISMATCH, "value_cache has shape (2, 9, 32); it must be key_cache's shape (2, 8, 32)");
    afix_setup(&f), f.kc.dtype = f.vc.dtype = IFA_DTYPE_INT32;
    aexpect(&f, IFA_STATUS_UNSUPPORTED_DTYPE,
            "key_cache has dtype int32; a cache is float32, float16, bfloat16, float8_e4m3fn, float8_e5m2, int8 or int4");
    afix_setup(&f), f.vc.dtype = IFA_DTYPE_INT4;
    aexpect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "value_cache has dtype int4; it must be key_cache's int8");
    afix_setup(&f), f.kc.dtype = f.vc.dtype = IFA_DTYPE_INT4, f.k.shape[2] = f.v.shape[2] = f.kc.shape[2] =
        f.vc.shape[2] = 2 * 15;
    aexpect(&f, IFA_STATUS_INVALID_HEAD_DIM, "an int4 cache packs two values per byte along D; D = 15 must be even");
    /* float8: a scale or none, never an offset */
    static const char *const fp8_offset_rule[2] = {
        "antiquant_offset is given but key_cache has dtype float8_e4m3fn; a float8 cache is scaled symmetrically "
        "(max|x| / 448)",
        "antiquant_offset is given but key_cache has dtype float8_e5m2; a float8 cache is scaled symmetrically "
        "(max|x| / 57344)"};
    for (int i = 0; i < 2; ++i) {
        afix_setup(&f), f.kc.dtype = f.vc.dtype = i ? IFA_DTYPE_FLOAT8_E5M2 : IFA_DTYPE_FLOAT8_E4M3;
        aexpect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, fp8_offset_rule[i]);
        f.a.antiquant_offset = NULL;
        aexpect(&f, IFA_STATUS_OK, NULL);
        f.a.antiquant_scale = NULL;
        aexpect(&f, IFA_STATUS_OK, NULL);
    }
    /* scales */
    afix_setup(&f), f.kc.dtype = f.vc.dtype = IFA_DTYPE_FLOAT16;
    aexpect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "antiquant_scale is given but key_cache has dtype float16");
    f.a.antiquant_scale = f.a.antiquant_offset = NULL;
    aexpect(&f, IFA_STATUS_OK, NULL);
    afix_setup(&f), f.a.antiquant_scale = NULL;
    aexpect(&f, IFA_STATUS_NULL_ARGUMENT, "antiquant_scale is NULL but key_cache has dtype int8");
    afix_setup(&f), f.sc.shape[3] = 7;
    aexpect(&f, IFA_STATUS_SHAPE_MISMATCH, "antiquant_scale has shape (2, 2, 2, 7); a contiguous cache takes (2, B, "
                                           "N_kv, S_max) = (2, 2, 2, 8)");
    afix_setup(&f), f.sc.dtype = IFA_DTYPE_FLOAT16;
    aexpect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "antiquant_scale has dtype float16; it must be float32");
    afix_setup(&f), f.of.shape[1] = 1;
    aexpect(&f, IFA_STATUS_SHAPE_MISMATCH, "antiquant_offset has shape (2, 1, 2, 8); it must be the scale's shape");
    afix_setup(&f), f.of.dtype = IFA_DTYPE_BFLOAT16;
    aexpect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "antiquant_offset has dtype bfloat16; it must be the scale's float32");
    afix_setup(&f), f.a.antiquant_offset = NULL; /* symmetric */
    aexpect(&f, IFA_STATUS_OK, NULL);
    /* the separate form: each side given (mode 0) or written (2 contiguous, 3 paged), never beside antiquant_scale */
    afix_separate(&f);
    aexpect(&f, IFA_STATUS_OK, NULL);
    f.a.key_antiquant_mode = 2, f.gs = f.vs, f.go = f.vo; /* both written */
    aexpect(&f, IFA_STATUS_OK, NULL);
    afix_separate(&f), f.a.value_antiquant_mode = 0, f.vs = f.gs, f.vo = f.go; /* both given */
    aexpect(&f, IFA_STATUS_OK, NULL);
    afix_separate(&f), tdesc(&f.gs, IFA_DTYPE_BFLOAT16, 1, 1, 0, 0, 0), f.a.key_antiquant_offset = NULL; /* per tensor */
    aexpect(&f, IFA_STATUS_OK, NULL);
    afix_separate(&f), f.a.antiquant_scale = &f.sc;
    aexpect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "antiquant_scale/offset and key_/value_antiquant tensors are two forms of "
                                              "the same scales; give one");
    afix_separate(&f), f.a.value = NULL, f.a.value_cache = NULL;
    aexpect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "a key-only append (value NULL) writes antiquant_scale's (2, ...) form");
    afix_separate(&f), f.a.key_antiquant_scale = NULL;
    aexpect(&f, IFA_STATUS_NULL_ARGUMENT, "key_antiquant_scale is NULL; the separate form needs the key's and the "
                                          "value's scales (an offset alone is not enough)");
    afix_separate(&f), f.a.value_antiquant_scale = f.a.value_antiquant_offset = NULL;
    aexpect(&f, IFA_STATUS_NULL_ARGUMENT, "value_antiquant_scale is NULL");
    afix_separate(&f), f.a.value_antiquant_mode = 1;
    aexpect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "value_antiquant_mode = 1 is not 0 (scales given per tensor or channel), "
                                              "2 (written per head and token, contiguous) or 3 (written with the pages)");
    afix_separate(&f), f.a.value_antiquant_mode = 3;
    aexpect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "value_antiquant_mode = 3 but the cache is contiguous; written scales take "
                                              "mode 2 there");
    afix_separate(&f), f.vs.shape[2] = 7, f.vo = f.vs;
    aexpect(&f, IFA_STATUS_SHAPE_MISMATCH, "value_antiquant_scale has shape (2, 2, 7); value_antiquant_mode 2 takes (B, "
                                           "N_kv, S_max) = (2, 2, 8)");
    afix_separate(&f), f.vs.dtype = f.vo.dtype = IFA_DTYPE_FLOAT16;
    aexpect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "value_antiquant_scale has dtype float16; written scales are float32");
    afix_separate(&f), f.gs.shape[1] = 15, f.go = f.gs;
    aexpect(&f, IFA_STATUS_SHAPE_MISMATCH, "key_antiquant_scale has shape (2, 15); key_antiquant_mode 0 (given scales) "
                                           "takes (1) per tensor or (N_kv, 1, D), (N_kv, D), (N_kv·D) per channel with "
                                           "N_kv = 2, D = 16");
    afix_separate(&f), f.gs.dtype = f.go.dtype = IFA_DTYPE_INT8;
    aexpect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "key_antiquant_scale has dtype int8; given scales are float32, float16 or "
                                              "bfloat16");
    afix_separate(&f), f.go.dtype = IFA_DTYPE_FLOAT32;
    aexpect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "key_antiquant_offset has dtype float32; it must be the scale's float16");
    afix_separate(&f), f.kc.dtype = f.vc.dtype = IFA_DTYPE_FLOAT8_E4M3;
    aexpect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "key_antiquant_offset is given but key_cache has dtype float8_e4m3fn; a "
                                              "float8 cache is scaled without offsets");
    f.a.key_antiquant_offset = f.a.value_antiquant_offset = NULL;
    aexpect(&f, IFA_STATUS_OK, NULL);
    afix_separate(&f), f.kc.dtype = f.vc.dtype = IFA_DTYPE_BFLOAT16;
    aexpect(&f, IFA_STATUS_UNSUPPORTED_DTYPE, "key_/value_antiquant tensors are given but key_cache has dtype bfloat16");
    afix_setup(&f), f.a.key_antiquant_mode = 2;
    aexpect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "key_antiquant_mode = 2 is given without key_/value_antiquant_scale");
    /* paged: written scales in mode 3, (num_blocks, N_kv, block_size) */
    afix_paged(&f), f.a.antiquant_scale = f.a.antiquant_offset = NULL;
    tdesc(&f.gs, IFA_DTYPE_FLOAT32, 1, 32, 0, 0, 0), tdesc(&f.vs, IFA_DTYPE_FLOAT32, 3, 6, 2, 4, 0);
    f.a.key_antiquant_scale = &f.gs, f.a.value_antiquant_scale = &f.vs, f.a.value_antiquant_mode = 3;
    aexpect(&f, IFA_STATUS_OK, NULL);
    f.a.value_antiquant_mode = 2;
    aexpect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "value_antiquant_mode = 2 but the cache is paged; written scales take mode "
                                              "3 there");
    /* lengths */
    afix_setup(&f), f.a.cache_seq_lengths = NULL;
    aexpect(&f, IFA_STATUS_NULL_ARGUMENT, "cache_seq_lengths is NULL");
    afix_setup(&f), f.a.cache_seq_lengths_count = 3;
    aexpect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "cache_seq_lengths has 3 values; it needs 1 or B = 2");
    afix_setup(&f), f.lens[0] = 7;
    aexpect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "cache_seq_lengths[0] = 7: the 2 new rows go at positions [7, 9), but "
                                                "the cache (S_max) holds 8 positions");
    afix_setup(&f), f.lens[1] = -1;
    aexpect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "cache_seq_lengths[1] = -1");
    afix_setup(&f), f.a.block_size = 4;
    aexpect(&f, IFA_STATUS_NULL_ARGUMENT, "block_table is NULL but block_size = 4 asks for a paged cache");
    /* paged */
    afix_paged(&f);
    aexpect(&f, IFA_STATUS_OK, NULL);
    afix_paged(&f), f.a.block_size = 0;
    aexpect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "block_size = 0 is outside [1, 512]");
    afix_paged(&f), f.kc.shape[1] = f.vc.shape[1] = 8;
    aexpect(&f, IFA_STATUS_SHAPE_MISMATCH, "key_cache has shape (6, 8, 32); a paged BSH cache");
    afix_paged(&f), f.sc.shape[1] = 2;
    aexpect(&f, IFA_STATUS_SHAPE_MISMATCH, "a paged cache takes (2, num_blocks, N_kv, block_size) = (2, 6, 2, 4)");
    afix_paged(&f), f.lens[0] = 7;
    aexpect(&f, IFA_STATUS_INVALID_BLOCK_TABLE, "cache_seq_lengths[0] = 7: the 2 new rows go at positions [7, 9), but "
                                                "the batch's block_table row holds 8 positions");
    afix_paged(&f), f.a.block_table_cols = 0;
    aexpect(&f, IFA_STATUS_INVALID_BLOCK_TABLE, "block_table_cols = 0 is outside");
    afix_paged(&f), f.table[1] = 6;
    aexpect(&f, IFA_STATUS_INVALID_BLOCK_TABLE, "block_table[0][1] = 6 is outside the pool's blocks [0, 6) (position 6 of "
                                                "batch 0)");
    afix_paged(&f), f.table[3] = -2; /* batch 1 writes positions 0 and 1: column 1 is never used */
    aexpect(&f, IFA_STATUS_OK, NULL);
    afix_paged(&f), f.table[2] = 1, f.lens[1] = 2; /* batch 1 appends into batch 0's block 1 at rows 2, 3 */
    aexpect(&f, IFA_STATUS_INVALID_BLOCK_TABLE, "row 2 of block 1 would be written by batch 0 and batch 1: two sequences "
                                                "append into one shared block");
    afix_paged(&f), f.table[2] = 1, f.lens[1] = 0; /* the same block, other rows: allowed */
    aexpect(&f, IFA_STATUS_OK, NULL);
    /* new_seq_lengths: 1 or B values in [0, S1]; only the rows written need room, blocks and distinct cells */
    int64_t news[3] = {1, 0, 2};
    afix_setup(&f), f.a.new_seq_lengths = news, f.a.new_seq_lengths_count = 2;
    aexpect(&f, IFA_STATUS_OK, NULL);
    f.lens[0] = 7; /* one row at position 7 of 8 */
    aexpect(&f, IFA_STATUS_OK, NULL);
    news[0] = 2;
    aexpect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "cache_seq_lengths[0] = 7: the 2 new rows go at positions [7, 9)");
    news[0] = 3;
    aexpect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "new_seq_lengths[0] = 3 is outside [0, S1 = 2]");
    news[0] = -1;
    aexpect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "new_seq_lengths[0] = -1 is outside [0, S1 = 2]");
    news[0] = 1, f.a.new_seq_lengths_count = 3;
    aexpect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "new_seq_lengths has 3 values; it needs 1 or B = 2");
    f.a.new_seq_lengths_count = 0;
    aexpect(&f, IFA_STATUS_INVALID_SEQ_LENGTHS, "new_seq_lengths is non-NULL with new_seq_lengths_count 0");
    f.a.new_seq_lengths = NULL, f.a.new_seq_lengths_count = 2;
    aexpect(&f, IFA_STATUS_NULL_ARGUMENT, "new_seq_lengths is NULL but new_seq_lengths_count is 2");
    afix_paged(&f), f.table[2] = 1, f.lens[1] = 2, f.a.new_seq_lengths = news, f.a.new_seq_lengths_count = 2;
    news[0] = 2, news[1] = 0; /* batch 1 would share batch 0's cells but writes none */
    aexpect(&f, IFA_STATUS_OK, NULL);
    afix_paged(&f), f.table[1] = 6, f.a.new_seq_lengths = news, f.a.new_seq_lengths_count = 1, news[0] = 0;
    aexpect(&f, IFA_STATUS_OK, NULL); /* no row written: no block looked at */
    /* RoPE of the new keys: the attributes' rules are shared with IncreFlashAttention (test_validation.c's
     * rope_rules); here the positions, whose default is cache_seq_lengths */
    afix_setup(&f), f.a.rope_mode = "gptj";
    aexpect(&f, IFA_STATUS_OK, NULL);
    f.a.rope_dim = 34;
    aexpect(&f, IFA_STATUS_INVALID_ATTRIBUTE, "rope_dim = 34 exceeds the head dimension D = 16");
    f.a.rope_dim = 0;
    int64_t pos[2] = {3, -1};
    f.a.rope_positions = pos, f.a.rope_positions_count = 2;
    aexpect(&f, IFA_STATUS_INVALID_POSITION, "rope_positions[1] = -1 is negative");
    pos[1] = (1 << 24) - 1; /* its second row would sit at 2^24 */
    aexpect(&f, IFA_STATUS_INVALID_POSITION, "rope_positions[1] = 16777215 puts the last of 2 tokens at or past 2^24");
    f.a.rope_positions = NULL, f.a.rope_positions_count = 0;
    tdesc(&f.rc, IFA_DTYPE_FLOAT32, 2, 8, 8, 0, 0), f.rs = f.rc; /* rows 0..7: batch 0 writes positions 6 and 7 */
    f.a.rope_cos = &f.rc, f.a.rope_sin = &f.rs;
    aexpect(&f, IFA_STATUS_OK, NULL);
    f.lens[0] = 7, f.kc.shape[1] = f.vc.shape[1] = f.sc.shape[3] = f.of.shape[3] = 9;
    aexpect(&f, IFA_STATUS_INVALID_POSITION, "batch 0's default rope position (cache_seq_lengths) = 7 needs "
                                             "rope_cos/rope_sin rows up to 8; the tables have 8");
}
END_TEST

/* A rejected run writes nothing: the cache, scales and offsets keep their contents. */
START_TEST(append_rejected_writes_nothing) {
    aspec p = {.layout = "BSND", .src = IFA_DTYPE_FLOAT16, .cache = IFA_DTYPE_INT8, .asym = 1, .b = 2, .nkv = 2, .d = 32,
               .cap = 64, .block_size = 8, .seed = 7300};
    cache c;
    cache_init(&c, &p);
    append_ok(&c, 0, p.b, 5, 1);
    ifa_host_tensor kn, vn;
    new_rows(&c, p.b, 4, 2, &kn, &vn);
    const int32_t own = c.table[c.cols];
    c.table[c.cols] = c.table[0]; /* batch 1 would write rows 5..7 of batch 0's first block, as batch 0 does */
    ck_assert_int_eq(append(&c, 0, &kn, &vn), IFA_STATUS_INVALID_BLOCK_TABLE);
    c.table[c.cols] = (int32_t)c.units; /* outside the pool */
    ck_assert_int_eq(append(&c, 0, &kn, &vn), IFA_STATUS_INVALID_BLOCK_TABLE);
    c.table[c.cols] = own;
    c.len[1] = p.cap - 3; /* past the blocks batch 1 owns */
    ck_assert_int_eq(append(&c, 0, &kn, &vn), IFA_STATUS_INVALID_BLOCK_TABLE);
    c.len[1] = 5;
    check_cache(&c);
    ifa_host_tensor_free(&kn), ifa_host_tensor_free(&vn);
    cache_free(&c);
}
END_TEST

Suite *append_suite(void);
Suite *append_suite(void) {
    Suite *s = suite_create("append");
    TCase *t = test_tcase_create("append");
    tcase_set_timeout(t, 600);
    test_add_loop(t, append_rows, 0, 42);
    test_add_loop(t, append_then_attend, 0, 52);
    test_add_loop(t, key_only_append_then_attend, 0, 6);
    test_add_loop(t, ragged_append_then_attend, 0, 6);
    test_add_loop(t, kivi_append_then_attend, 0, 12);
    test_add_loop(t, append_rows_rope, 0, 34);
    test_add_loop(t, append_nonfinite_row, 0, 24);
    tcase_add_test(t, append_rules);
    tcase_add_test(t, append_rejected_writes_nothing);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return test_run_suite(append_suite()); }
