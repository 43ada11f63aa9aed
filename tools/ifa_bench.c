#define _POSIX_C_SOURCE 200809L /* clock_gettime, sysconf */
/* ifa-bench: device time of IncreFlashAttention per shape, against the device's own read bandwidth and a
 * peer's published times. docs/performance.md explains the method and holds the results.
 *
 * For each shape: random inputs, a correctness check against the float64 reference (unless --no-check),
 * warm-up runs, then the median over --runs of device time from OpenCL profiling events, first kernel start
 * to last kernel end. When K and V are smaller than twice the last-level cache, the runs rotate over copies
 * of them (placed one after another) so that each run reads data the previous runs did not touch. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/args.h"
#include "common/bench_shapes.h"
#include "common/bench_variants.h"
#include "common/env_check.h"
#include "common/pin.h"
#include "common/reference.h"
#include "common/rng.h"
#include "common/runner.h"
#include "common/stream_buffer.h"
#include "op_host/runtime/buffer.h"
#include "op_host/runtime/context.h"
#include "op_host/runtime/tensor_check.h"
#include "tiling/planner.h"
#include "tiling/tuning_table.h"

static int usage(FILE *f) {
    fprintf(f,
            "usage: ifa-bench (--shapes FILE.csv | --shape B,N,N_kv,D,S [--shape ...]) [--device SEL]\n"
            "                 [--dtype float16] [--kv-dtype T] [--layout BNSD] [--warmup 3] [--runs 20]\n"
            "                 [--rotate auto|N] [--peers FILE.csv] [--csv OUT.csv] [--no-check] [--prefix P]\n"
            "                 [--template auto|all_vector|cv | --compare-templates] [--window W] [--sinks] [--alibi]\n"
            "                 [--value-dim DV [--value-is-key]] [--scales channel|token|kivi|tensor] [--query-len T]\n"
            "                 [--rope neox|gptj [--rope-offset R]]\n"
            "                 [--lengths L1,L2,..|random[:SEED]] [--block-size P [--blocks-in-order]]\n"
            "                 [--plain-buffers] [--bw-each-row] [--variant SPEC --variant SPEC ... [--rounds 5]]\n"
            "--compare-templates: each shape runs forced to all_vector and to cv; a row gives both times, the winner, by\n"
            "how much, and whether the planner's own choice (template_mode auto) is the winner.\n"
            "--prefix P: each shape runs with a shared prefix of P rows (read once per KV head) and again with the\n"
            "prefix copied into every sequence (S + P rows each), so the two rows show what the cascade saves.\n"
            "--window W: sliding-window attention over each sequence's last W positions (KV bytes and GB/s count those\n"
            "rows only); --sinks: a sink logit per query head (gpt-oss); --alibi: ALiBi slopes 2^(-8(h+1)/N) per query head.\n"
            "--value-dim DV: value_head_dim D_v (the first DV of D value columns; KV bytes count those); --value-is-key:\n"
            "the key tensor is also the value (DeepSeek's MLA: --shape B,N,1,576,S --value-dim 512 --value-is-key; KV\n"
            "bytes are the one latent cache's).\n"
            "--rope: the op rotates the query (theta 1e4, each sequence's own positions); --rope-offset R: from dim R\n"
            "(MLA's trailing 64: --rope gptj --rope-offset 512).\n"
            "--scales: int8/int4 KV's scale forms, all with offsets: channel (default; float16 (2, N_kv, D)), token\n"
            "(antiquant_mode 2, float32 (2, B, N_kv, S)) or kivi (the key's per channel, the value's per head and token,\n"
            "separate tensors) or tensor (float16 (2): one scale for the key, one for the value; float8 KV too, which has\n"
            "no scales otherwise); per-token scales count in the KV bytes and rotate with the K/V copies.\n");
    fprintf(f, /* two literals: one would pass the 4095 characters C11 promises */
            "--query-len T: T query tokens per sequence, causal among themselves (speculative decoding's verification).\n"
            "--lengths: each sequence's actual length (actual_seq_lengths; the cache holds S rows): B values (or one for\n"
            "all) in [0, S], or random[:SEED], each drawn uniformly in [1, S] (seed 1 unless given). KV bytes count the rows\n"
            "the op reads. Rows with either option name no peer (the peers' figures are for T = 1 and full lengths).\n"
            "--bw-each-row: the streaming reference measured again after each row's runs; that row's pct_bw is against\n"
            "it and the CSV's bw_GBps gives it (a machine whose bandwidth moves from minute to minute: a VM beside\n"
            "busy neighbours).\n"
            "--plain-buffers: K/V (and the bandwidth reference) in clCreateBuffer's buffers instead of ifa_buffer_create's\n"
            "(on a CPU device: whole 2 MiB pages advised for transparent huge pages, starting the tuning row's\n"
            "buffer_offset past the boundary).\n"
            "--block-size P: paged K/V (1 to 512 rows a block): K and V are pools of ceil(S / P) blocks per sequence,\n"
            "named by a block table in a seeded shuffle (an engine's cache after requests came and went), or in pool\n"
            "order with --blocks-in-order. KV bytes count the rows read; a peer's figure, if any, is for its contiguous\n"
            "cache.\n"
            "--variant SPEC (up to 8): each shape runs in each variant, in --rounds alternating rounds (a noisy machine's\n"
            "drift falls on all of them); SPEC is [BSH:|BSND:|BNSD:] then IFA_TUNING entries added after the environment's\n"
            "(\"BSND:prefetch_rows=4\", \"BNSD:\", \"default\"), and last, optionally, kernels=DIR: that variant's kernels\n"
            "built from DIR's sources (IFA_KERNEL_DIR; a kernel change against the sources before it in one process).\n"
            "A row per variant: the median, lowest and highest of its\n"
            "rounds, and against the first variant the median per-round ratio (vs_first) and the rounds it was faster;\n"
            "tail_us: the median over the rounds of the time after the main kernel (a split plan's combine).\n"
            "FILE.csv: the format of docs/bench/peers/*.csv (B,N,N_kv,D,S_kv,... or D,nh_kv,gqa,kv,type_KV,...).\n"
            "--help: this text.\n");
    return f == stdout ? 0 : 2;
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/* Event time span in µs, from start of a to end of b. */
static double span_us(cl_event a, cl_event b) {
    cl_ulong t0 = 0, t1 = 0;
    if (clGetEventProfilingInfo(a, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) != CL_SUCCESS ||
        clGetEventProfilingInfo(b, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) != CL_SUCCESS)
        return NAN;
    return (double)(t1 - t0) * 1e-3;
}

/* The bytes a run should not find in cache: the larger of the device's reported global-memory cache
 * (*device_cache) and, on a CPU, the host's last-level cache as the C library reports it (in a VM this can
 * be the whole socket's L3, larger than the guest's: the larger value only rotates more copies). */
static int64_t last_level_cache(const ifa_context *ctx, int64_t *device_cache) {
    cl_ulong cl = 0;
    clGetDeviceInfo(ctx->device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof cl, &cl, NULL);
    int64_t llc = *device_cache = (int64_t)cl;
#ifdef _SC_LEVEL3_CACHE_SIZE
    if (ifa__vendor_is_cpu(ctx->facts.vendor)) {
        long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
        if (l3 > llc) llc = l3;
    }
#endif
    return llc;
}

/* Read bandwidth (GB/s) of a streaming kernel over `bytes` (the best of 7 runs after a warm-up): on a CPU
 * each work-item sums one contiguous range, with 4, 64 and 256 work-items per compute unit, each with and
 * without a software prefetch 4 KiB ahead, keeping the best (PoCL runs many work-items of a group side by
 * side, so a core then streams several ranges at once: on a 2-core AVX2 VM 4 per unit read 18-21 GB/s, 256
 * per unit 31-38, as a C loop over 8-16 ranges per thread does, 33-34; the fused kernel prefetches, and on
 * the AVX-512 VM read up to 1.3x the reference without it: docs/performance.md, Zen 4, 2026-11-25); on a GPU
 * consecutive work-items read consecutive 64-byte vectors. */
static const char *const stream_src =
    "__kernel void stream_read(__global const float16 *x, ulong n4, __global float *out) {\n"
    "    float16 s = 0.0f;\n"
    "#if CONTIG\n"
    "    const ulong per = (n4 + get_global_size(0) - 1) / get_global_size(0), i0 = get_global_id(0) * per;\n"
    "    const ulong end = min(n4, i0 + per);\n"
    "    for (ulong i = i0; i < end; ++i) {\n"
    "#if PF && defined(__clang__)\n"
    "        if (i + PF < end) __builtin_prefetch(x + i + PF, 0, 2);\n"
    "#endif\n"
    "        s += x[i];\n"
    "    }\n"
    "#else\n"
    "    for (ulong i = get_global_id(0); i < n4; i += get_global_size(0)) s += x[i];\n"
    "#endif\n"
    "    out[get_global_id(0)] = s.s0 + s.s1 + s.s2 + s.s3 + s.s4 + s.s5 + s.s6 + s.s7 + s.s8 + s.s9 + s.sa + s.sb + s.sc\n"
    "                            + s.sd + s.se + s.sf;\n"
    "}\n";

/* The runtime's own host time to enqueue a kernel (the streaming kernel over 0 bytes, 3 arguments): median
 * of 41 enqueues each after the device went idle (idle) and of 41 enqueued back to back (busy), without events
 * (as ifa's run enqueues). The floor under ifa's host times, which add their own work to one or more such
 * enqueues. Then the same kernels' device time, start to end by profiling events (dev_idle_us, dev_busy_us):
 * the floor under every kernel's device time (items work-items that each store one float and read nothing). */
typedef struct enqueue_floor {
    double idle_us, busy_us, dev_idle_us, dev_busy_us;
} enqueue_floor;

static void measure_enqueue(cl_command_queue q, cl_kernel k, size_t items, enqueue_floor *f) {
    enum { N = 41 };
    double t[N];
    cl_event ev[N];
    const cl_ulong none = 0;
    f->idle_us = f->busy_us = f->dev_idle_us = f->dev_busy_us = NAN;
    if (clSetKernelArg(k, 1, sizeof none, &none) != CL_SUCCESS) return;
    /* passes 0 and 1 time the host's enqueue (idle, busy), 2 and 3 the device's span from events */
    for (int pass = 0; pass < 4; ++pass) {
        const int busy = pass & 1, dev = pass >> 1;
        int n = 0;
        cl_int err = CL_SUCCESS;
        while (n < N) {
            const double t0 = now_us();
            err = clEnqueueNDRangeKernel(q, k, 1, NULL, &items, NULL, 0, NULL, dev ? &ev[n] : NULL);
            t[n] = now_us() - t0;
            if (err != CL_SUCCESS) break;
            ++n;
            if (!busy) clFinish(q);
        }
        clFinish(q);
        for (int i = 0; dev && i < n; ++i) {
            t[i] = span_us(ev[i], ev[i]);
            clReleaseEvent(ev[i]);
        }
        if (err != CL_SUCCESS) return;
        *(dev ? (busy ? &f->dev_busy_us : &f->dev_idle_us) : (busy ? &f->busy_us : &f->idle_us)) =
            ifa_bench_median(t, N);
    }
}

/* The kernel's transparent-huge-page mode (the bracketed word of /sys/kernel/mm/transparent_hugepage/enabled:
 * always, madvise or never), "unknown" where there is no such file. */
static const char *thp_mode(char *buf, size_t size) {
    snprintf(buf, size, "unknown");
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[128];
    if (f && fgets(line, sizeof line, f)) {
        const char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;
        if (b) snprintf(buf, size, "%.*s", (int)(b - a - 1), a + 1);
    }
    if (f) fclose(f);
    return buf;
}

/* --plain-buffers: K/V and the bandwidth reference in clCreateBuffer's buffers (ifa_tool_stream_buffer) */
static int plain_buffers;
/* --bw-each-row: the reference again after each row (its pct_bw and bw_GBps) */
static int bw_each_row;
static cl_mem stream_buffer(ifa_context *ctx, cl_mem_flags flags, size_t bytes) {
    return ifa_tool_stream_buffer(ctx, flags, bytes, plain_buffers, "ifa-bench");
}

/* The streaming reference over bytes (the kernel above), and into *enq, when enq is not NULL, the runtime's
 * enqueue floor (measured once per process: --bw-each-row's later references pass NULL). */
static double measure_bandwidth(ifa_context *ctx, cl_command_queue q, int64_t bytes, enqueue_floor *enq) {
    /* IFA_BENCH_BW_DETAIL=1: each configuration's figure to stderr (which of them a fast minute favours) */
    const char *detail = getenv("IFA_BENCH_BW_DETAIL");
    const int bw_detail = detail && *detail && strcmp(detail, "0") != 0;
    const int contig = ifa__vendor_is_cpu(ctx->facts.vendor);
    const size_t cu = (size_t)ctx->facts.compute_units;
    const size_t counts[3] = {contig ? cu * 4 : cu * 2048, cu * 64, cu * 256}, shapes = contig ? 3 : 1;
    const size_t most = counts[shapes - 1];
    const int variants = contig ? 2 : 1; /* without and with the prefetch (64 vectors: 4 KiB ahead) */
    cl_int err;
    const char *src = stream_src;
    double gbps = NAN;
    cl_program prog[2] = {NULL, NULL};
    cl_kernel k[2] = {NULL, NULL};
    cl_mem x = NULL, out = NULL;
    for (int v = 0; v < variants; ++v) {
        char opts[48];
        snprintf(opts, sizeof opts, "-D CONTIG=%d -D PF=%d", contig, v ? 64 : 0);
        prog[v] = clCreateProgramWithSource(ctx->cl_ctx, 1, &src, NULL, &err);
        if (!prog[v] || clBuildProgram(prog[v], 1, &ctx->device, opts, NULL, NULL) != CL_SUCCESS) goto done;
        k[v] = clCreateKernel(prog[v], "stream_read", &err);
        if (!k[v]) goto done;
    }
    x = stream_buffer(ctx, CL_MEM_READ_WRITE, (size_t)bytes);
    out = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, most * sizeof(float), NULL, &err);
    if (!x || !out) goto done;
    const float one = 1.0f;
    clEnqueueFillBuffer(q, x, &one, sizeof one, 0, (size_t)bytes, 0, NULL, NULL);
    cl_ulong n4 = (cl_ulong)bytes / 64; /* float16 vectors */
    for (int v = 0; v < variants; ++v) {
        clSetKernelArg(k[v], 0, sizeof x, &x);
        clSetKernelArg(k[v], 1, sizeof n4, &n4);
        clSetKernelArg(k[v], 2, sizeof out, &out);
        for (size_t s = 0; s < shapes; ++s) {
            double best = INFINITY; /* of 7 runs after a warm-up */
            for (int i = 0; i < 8; ++i) {
                cl_event ev;
                if (clEnqueueNDRangeKernel(q, k[v], 1, NULL, &counts[s], NULL, 0, NULL, &ev) != CL_SUCCESS) goto done;
                clWaitForEvents(1, &ev);
                if (i > 0) best = fmin(best, span_us(ev, ev));
                clReleaseEvent(ev);
            }
            const double g = (double)bytes / best * 1e-3;
            if (!(gbps >= g)) gbps = g;
            if (bw_detail)
                fprintf(stderr, "ifa-bench: reference %zu ranges, prefetch %s: %.1f GB/s\n", counts[s], v ? "4 KiB" : "none", g);
        }
    }
    /* on a GPU one work-group's worth of work-items a compute unit: the floor of a launch as small as a decode
     * step's (the bandwidth shape's 2048 a unit would time their stores) */
    if (enq) measure_enqueue(q, k[0], contig ? counts[0] : cu * 128, enq);
done:
    for (int v = 0; v < 2; ++v) {
        if (k[v]) clReleaseKernel(k[v]);
        if (prog[v]) clReleaseProgram(prog[v]);
    }
    if (x) clReleaseMemObject(x);
    if (out) clReleaseMemObject(out);
    return gbps;
}

typedef struct options {
    const char *layout;
    ifa_dtype q, kv;
    int warmup, runs, rotate, check;
    int64_t prefix; /* > 0: each shape also runs with a shared prefix of this many rows, and copied into each sequence */
    const char *template_mode; /* NULL: the planner's choice */
    int compare;               /* --compare-templates */
    int64_t window;            /* > 0: sliding-window attention over the last window positions */
    int sinks;                 /* a sink logit per query head */
    int alibi;                 /* ALiBi slopes (N) */
    const char *rope;          /* --rope neox|gptj: the op rotates the query (theta 1e4, the default positions) */
    int64_t rope_offset;       /* --rope-offset: the first rotated dim (MLA's trailing 64: 512) */
    int64_t value_dim;         /* value_head_dim, 0: D */
    int value_is_key;          /* the key buffer is also the value (MLA) */
    int scales;                /* int8/int4 KV: SCALES_CHANNEL, SCALES_TOKEN or SCALES_KIVI */
    int64_t query_len;         /* query tokens per sequence (S1), causal */
    const char *lengths;       /* --lengths, NULL: every sequence S rows */
    int64_t block_size;        /* > 0: paged K/V, pools of blocks of this many rows */
    int blocks_in_order;       /* paged: block_table names the pool's blocks in order, else a seeded shuffle */
    ifa_bench_variant variants[IFA_BENCH_MAX_VARIANTS]; /* --variant, in the order given */
    int nvariants, rounds;                              /* --rounds: alternating rounds of the variants */
} options;

/* --lengths for a shape of b sequences of at most s rows into out (b values): "random[:SEED]" draws each in
 * [1, s]; a comma list gives b values, or one for all, each in [0, s]. Returns 0, or -1 with a message. */
static int bench_lengths(const char *spec, int64_t b, int64_t s, int64_t *out) {
    if (strncmp(spec, "random", 6) == 0 && (spec[6] == 0 || spec[6] == ':')) {
        char *end = NULL;
        const unsigned long long seed = spec[6] ? strtoull(spec + 7, &end, 10) : 1;
        if (spec[6] && (end == spec + 7 || *end)) goto bad;
        ifa_rng r;
        ifa_rng_seed(&r, seed);
        for (int64_t i = 0; i < b; ++i) out[i] = ifa_rng_int(&r, 1, s);
        return 0;
    }
    int64_t n = 0;
    for (const char *p = spec; *p; ++n) {
        char *end = NULL;
        const long long v = strtoll(p, &end, 10);
        if (end == p || v < 0 || v > s || n >= b || (*end && *end != ',')) goto bad;
        out[n] = v;
        p = *end ? end + 1 : end;
    }
    if (n == 1)
        for (int64_t i = 1; i < b; ++i) out[i] = out[0];
    else if (n != b)
        goto bad;
    return 0;
bad:
    fprintf(stderr, "ifa-bench: --lengths %s: want %lld values (or one) in [0, %lld], or random[:SEED]\n", spec,
            (long long)b, (long long)s);
    return -1;
}

/* Paged K/V for a shape of b sequences of cols blocks of p rows: c's block table (b x cols) names every pool
 * block once, in order or in a seeded shuffle (an engine's cache after requests came and went). Returns 0,
 * or -1 with a message. */
static int paged_table(ifa_case *c, int64_t b, int64_t cols, int64_t p, int in_order) {
    const int64_t n = b * cols;
    ifa_rng r;
    ifa_rng_seed(&r, 9);
    int64_t *perm = in_order || n > INT32_MAX ? NULL : ifa_rng_permutation(&r, n);
    if (n > INT32_MAX || (!in_order && !perm) || !(c->block_table = malloc(sizeof *c->block_table * (size_t)n))) {
        free(perm);
        fprintf(stderr, "ifa-bench: cannot make a block table of %lld blocks\n", (long long)n);
        return -1;
    }
    for (int64_t i = 0; i < n; ++i) c->block_table[i] = (int32_t)(perm ? perm[i] : i);
    free(perm);
    c->block_table_cols = cols, c->block_size = p;
    return 0;
}

/* --scales: the quantised KV's scale forms. channel: antiquant_mode 0, float16 (2, N_kv, D) with offsets;
 * token: antiquant_mode 2, float32 (2, B, N_kv, S) with offsets; kivi: the separate form, the key's per
 * channel (N_kv, D) float16 and the value's per head and token (B, N_kv, S) float32, both with offsets; tensor:
 * antiquant_mode 0, float16 (2) with offsets, for float8 K/V too (vLLM's k_scale and v_scale; float8 has no
 * scales under the other forms). */
enum { SCALES_CHANNEL, SCALES_TOKEN, SCALES_KIVI, SCALES_TENSOR };

typedef struct row_result {
    double us, best_us, host_us, host_busy_us, plan_us, gbps;
    double mean_len; /* the sequences' mean actual length */
    double tail_us;  /* median device time after the first kernel's end: the combine and the gaps between kernels */
    int64_t kv_bytes;
    int copies;
    int pass; /* 1 pass, 0 fail, -1 not checked */
    ifa_plan plan;
} row_result;

/* Benchmarks one shape. Returns 0, or -1 with a message on stderr. */
static int bench_shape(ifa_context *ctx, cl_command_queue queue, const ifa_bench_shape *sh, const options *o,
                       ifa_dtype kv, int64_t prefix, int64_t llc, row_result *res) {
    memset(res, 0, sizeof *res);
    const int quantised = kv == IFA_DTYPE_INT8 || kv == IFA_DTYPE_INT4;
    /* K/V with scale tensors: the integer types, float8 with per-tensor ones */
    const int scaled = quantised || (o->scales == SCALES_TENSOR && ifa__is_float8(kv));
    ifa_case c;
    ifa_case_init(&c);
    int bnsd = strcmp(o->layout, "BNSD") == 0, bsh = strcmp(o->layout, "BSH") == 0;
    const int64_t T = o->query_len > 0 ? o->query_len : 1;
    int64_t qs[4] = {sh->b, bnsd ? sh->n : T, bnsd ? T : sh->n, sh->d};
    int64_t ks[4] = {sh->b, bnsd ? sh->nkv : sh->s, bnsd ? sh->s : sh->nkv, sh->d};
    int64_t qs3[3] = {sh->b, T, sh->n * sh->d}, ks3[3] = {sh->b, sh->s, sh->nkv * sh->d};
    /* paged: each sequence owns ceil(S / P) blocks of a pool; K/V are the pools (num_blocks, P, ...) */
    const int64_t P = o->block_size, cols = P > 0 ? (sh->s + P - 1) / P : 0;
    if (P > 0) {
        ks[0] = ks3[0] = sh->b * cols;
        ks[bnsd ? 2 : 1] = ks3[1] = P;
        if (paged_table(&c, sh->b, cols, P, o->blocks_in_order) != 0) {
            ifa_case_free(&c);
            return -1;
        }
    }
    if (o->lengths || P > 0) {
        c.lengths = malloc(sizeof *c.lengths * (size_t)sh->b);
        c.lengths_count = sh->b;
        if (!c.lengths || (o->lengths && bench_lengths(o->lengths, sh->b, sh->s, c.lengths) != 0)) {
            ifa_case_free(&c);
            return -1;
        }
        for (int64_t i = 0; !o->lengths && i < sh->b; ++i) c.lengths[i] = sh->s; /* paged needs them: all full */
    }
    /* quantised KV: the scale tensors of --scales, each a scale and an offset */
    const int64_t aqs[3] = {2, sh->nkv, sh->d}, ats[4] = {2, sh->b, sh->nkv, sh->s}, tensor1[1] = {2};
    ifa_host_tensor *qt[4] = {&c.antiquant_scale, &c.antiquant_offset, NULL, NULL};
    if (scaled && o->scales == SCALES_KIVI) {
        qt[0] = &c.key_antiquant_scale, qt[1] = &c.key_antiquant_offset;
        qt[2] = &c.value_antiquant_scale, qt[3] = &c.value_antiquant_offset;
        c.value_antiquant_mode = 2;
    }
    if (scaled && o->scales == SCALES_TOKEN) c.antiquant_mode = 2;
    int qbad = 0;
    for (int i = 0; scaled && i < 4; ++i) {
        if (!qt[i]) continue;
        const int kivi = o->scales == SCALES_KIVI, token = o->scales == SCALES_TOKEN || (kivi && i >= 2);
        /* the separate form's tensors drop the leading 2 */
        if (o->scales == SCALES_TENSOR)
            qbad |= ifa_host_tensor_alloc(qt[i], IFA_DTYPE_FLOAT16, 1, tensor1) != 0;
        else
            qbad |= ifa_host_tensor_alloc(qt[i], token ? IFA_DTYPE_FLOAT32 : IFA_DTYPE_FLOAT16, (token ? 4 : 3) - kivi,
                                          (token ? ats : aqs) + kivi) != 0;
    }
    if (ifa_host_tensor_alloc(&c.query, o->q, bsh ? 3 : 4, bsh ? qs3 : qs) ||
        ifa_host_tensor_alloc(&c.key, kv, bsh ? 3 : 4, bsh ? ks3 : ks) ||
        ifa_host_tensor_alloc(&c.value, kv, bsh ? 3 : 4, bsh ? ks3 : ks) || qbad) {
        fprintf(stderr, "ifa-bench: out of host memory\n");
        ifa_case_free(&c);
        return -1;
    }
    ifa_host_fill_random(&c.query, 1, -1, 1);
    const double range = kv == IFA_DTYPE_INT8 ? 128 : kv == IFA_DTYPE_INT4 ? 8 : 1;
    ifa_host_fill_random(&c.key, 2, -range, range);
    ifa_host_fill_random(&c.value, 3, -range, range);
    c.value_head_dim = o->value_dim, c.value_is_key = o->value_is_key;
    if (o->value_is_key) memcpy(c.value.data, c.key.data, c.key.bytes); /* the reference reads c.value */
    for (int i = 0; scaled && i < 4; ++i)
        if (qt[i]) ifa_host_fill_random(qt[i], 4 + (uint64_t)i, i % 2 ? -1 : 0.5 / range, i % 2 ? 1 : 1.5 / range);
    c.num_heads = sh->n, c.num_key_value_heads = sh->nkv, c.scale_value = 1.0 / sqrt((double)sh->d);
    c.window = o->window;
    if (o->sinks) {
        const int64_t ns[1] = {sh->n};
        if (ifa_host_tensor_alloc(&c.sinks, IFA_DTYPE_FLOAT32, 1, ns) != 0) {
            ifa_case_free(&c);
            return -1;
        }
        ifa_host_fill_random(&c.sinks, 8, -4, 6);
    }
    if (o->alibi) {
        const int64_t ns[1] = {sh->n};
        if (ifa_host_tensor_alloc(&c.alibi_slopes, IFA_DTYPE_FLOAT32, 1, ns) != 0) {
            ifa_case_free(&c);
            return -1;
        }
        for (int64_t hh = 0; hh < sh->n; ++hh) ifa_host_set(&c.alibi_slopes, hh, exp2(-8.0 * (double)(hh + 1) / (double)sh->n));
    }
    if (o->rope) snprintf(c.rope_mode, sizeof c.rope_mode, "%s", o->rope), c.rope_offset = o->rope_offset;
    snprintf(c.input_layout, sizeof c.input_layout, "%s", o->layout);
    if (o->template_mode) snprintf(c.template_mode, sizeof c.template_mode, "%s", o->template_mode);
    if (prefix > 0) {
        int64_t ps[4] = {1, bnsd ? sh->nkv : prefix, bnsd ? prefix : sh->nkv, sh->d}, ps3[3] = {1, prefix, sh->nkv * sh->d};
        if (ifa_host_tensor_alloc(&c.key_shared_prefix, kv, bsh ? 3 : 4, bsh ? ps3 : ps) ||
            ifa_host_tensor_alloc(&c.value_shared_prefix, kv, bsh ? 3 : 4, bsh ? ps3 : ps)) {
            ifa_case_free(&c);
            return -1;
        }
        ifa_host_fill_random(&c.key_shared_prefix, 6, -1, 1);
        ifa_host_fill_random(&c.value_shared_prefix, 7, -1, 1);
    }
    /* bytes the op must read: the K and V rows each sequence's blocks read (the planner's span: a window's rows
     * before the first causal query token's; the rest is never read), the shared prefix once */
    double rows = 0, total_len = 0;
    for (int64_t i = 0; i < sh->b; ++i) {
        const int64_t L = c.lengths ? c.lengths[i] : sh->s;
        rows += (double)ifa__kv_span(L, o->window, T - 1), total_len += (double)L;
    }
    res->mean_len = total_len / (double)sh->b;
    /* the rows read out of the logical (B, S) rows (per-token scales) and of the rows K and V hold (a pool's
     * last block of each sequence may hold rows past S) */
    const double seen_logical = rows / ((double)sh->b * (double)sh->s);
    const double seen = P > 0 ? rows / ((double)sh->b * (double)cols * (double)P) : seen_logical;
    /* a value's first D_v columns; none beside the key when the key is the value */
    const double value_part = o->value_is_key ? 0.0 : o->value_dim > 0 ? (double)o->value_dim / (double)sh->d : 1.0;
    /* per-token scales and offsets are read like the rows they scale */
    int64_t token_scale_bytes = 0;
    for (int i = 0; scaled && i < 4; ++i)
        if (qt[i] && qt[i]->dtype == IFA_DTYPE_FLOAT32) token_scale_bytes += (int64_t)qt[i]->bytes;
    res->kv_bytes = (int64_t)(((double)c.key.bytes + (double)c.value.bytes * value_part) * seen +
                              (double)token_scale_bytes * seen_logical) +
                    (int64_t)(c.key_shared_prefix.bytes + c.value_shared_prefix.bytes);

    int rc = -1;
    if (o->check) {
        c.kv_from_buffer_create = !plain_buffers; /* the kind of buffers the runs below read */
        ifa_case_result r;
        ifa_status st = ifa_case_run(ctx, queue, &c, NULL, NULL, &r);
        ifa_case_check chk;
        if (st != IFA_STATUS_OK) {
            fprintf(stderr, "ifa-bench: %s\n", r.error);
            ifa_case_free(&c);
            return -1;
        }
        res->pass = ifa_case_check_result(&c, &r, &chk) == 0 && chk.pass;
        ifa_case_result_free(&r);
    } else {
        res->pass = -1;
    }

    /* copies of K and V, so that consecutive runs read memory the cache has not kept */
    int copies = o->rotate > 0 ? o->rotate : 1;
    if (o->rotate <= 0 && res->kv_bytes < 2 * llc) copies = (int)((2 * llc + res->kv_bytes - 1) / res->kv_bytes) + 1;
    /* stay within 1 GiB of buffers (whole copies, though a window reads only its rows of each) */
    const int64_t copy_bytes = (int64_t)(c.key.bytes + (o->value_is_key ? 0 : c.value.bytes) + c.key_shared_prefix.bytes +
                                         c.value_shared_prefix.bytes) + token_scale_bytes;
    while (copies > 1 && (int64_t)copies * copy_bytes > ((int64_t)1 << 30)) --copies;
    res->copies = copies;

    cl_int err;
    cl_context cl = ctx->cl_ctx;
    const size_t kb = c.key.bytes;
    cl_mem bq = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, c.query.bytes, c.query.data, &err);
    cl_mem bo = NULL;
    if (ifa_buffer_create(ctx, CL_MEM_READ_WRITE, c.query.bytes, &bo) != IFA_STATUS_OK) bo = NULL;
    cl_mem bk = stream_buffer(ctx, CL_MEM_READ_ONLY, kb * (size_t)copies);
    cl_mem bv = o->value_is_key ? bk : stream_buffer(ctx, CL_MEM_READ_ONLY, kb * (size_t)copies);
    if (o->value_is_key && bv) clRetainMemObject(bv); /* released once for each name below */
    cl_mem ws = NULL, bkp = NULL, bvp = NULL, bsk = NULL, bal = NULL;
    cl_mem bq4[4] = {NULL, NULL, NULL, NULL}; /* the scale tensors, `copies` copies each (rotated with K/V) */
    const size_t pb = c.key_shared_prefix.bytes;
    if (prefix > 0) {
        bkp = stream_buffer(ctx, CL_MEM_READ_ONLY, pb * (size_t)copies);
        bvp = stream_buffer(ctx, CL_MEM_READ_ONLY, pb * (size_t)copies);
    }
    int qmissing = 0;
    for (int i = 0; scaled && i < 4; ++i)
        if (qt[i]) qmissing |= !(bq4[i] = stream_buffer(ctx, CL_MEM_READ_ONLY, qt[i]->bytes * (size_t)copies));
    if (o->sinks)
        bsk = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, c.sinks.bytes, c.sinks.data, &err);
    if (o->alibi)
        bal = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, c.alibi_slopes.bytes, c.alibi_slopes.data, &err);
    double *t = malloc(sizeof(double) * (size_t)o->runs), *h = malloc(sizeof(double) * (size_t)o->runs);
    double *tail = malloc(sizeof(double) * (size_t)o->runs);
    double plan_t[101];
    if (!bq || !bo || !bk || !bv || !t || !h || !tail || qmissing || (prefix > 0 && (!bkp || !bvp)) ||
        (o->sinks && !bsk) || (o->alibi && !bal)) {
        fprintf(stderr, "ifa-bench: cannot allocate %d copies of %lld bytes of K/V\n", copies, (long long)res->kv_bytes);
        goto done;
    }
    for (int i = 0; i < copies; ++i) {
        clEnqueueWriteBuffer(queue, bk, CL_FALSE, kb * (size_t)i, kb, c.key.data, 0, NULL, NULL);
        if (!o->value_is_key) clEnqueueWriteBuffer(queue, bv, CL_FALSE, kb * (size_t)i, kb, c.value.data, 0, NULL, NULL);
        for (int j = 0; j < 4; ++j)
            if (bq4[j]) clEnqueueWriteBuffer(queue, bq4[j], CL_FALSE, qt[j]->bytes * (size_t)i, qt[j]->bytes, qt[j]->data, 0, NULL, NULL);
        if (prefix > 0) {
            clEnqueueWriteBuffer(queue, bkp, CL_FALSE, pb * (size_t)i, pb, c.key_shared_prefix.data, 0, NULL, NULL);
            clEnqueueWriteBuffer(queue, bvp, CL_FALSE, pb * (size_t)i, pb, c.value_shared_prefix.data, 0, NULL, NULL);
        }
    }
    clFinish(queue);
    ifa_tensor tq = {bq, 0, o->q, c.query.ndim, {0}}, to = {bo, 0, o->q, c.query.ndim, {0}};
    ifa_tensor tk = {bk, 0, kv, c.key.ndim, {0}}, tv = {bv, 0, kv, c.key.ndim, {0}};
    ifa_tensor tqs[4];
    for (int i = 0; i < 4; ++i) {
        memset(&tqs[i], 0, sizeof tqs[i]);
        if (!qt[i] || !qt[i]->data) continue;
        tqs[i].buffer = bq4[i], tqs[i].dtype = qt[i]->dtype, tqs[i].ndim = qt[i]->ndim;
        memcpy(tqs[i].shape, qt[i]->shape, sizeof tqs[i].shape);
    }
    memcpy(tq.shape, c.query.shape, sizeof tq.shape);
    ifa_case_out_shape(&c, to.shape);
    memcpy(tk.shape, c.key.shape, sizeof tk.shape), memcpy(tv.shape, c.key.shape, sizeof tv.shape);
    ifa_incre_flash_attention_args a;
    ifa_incre_flash_attention_args_init(&a);
    a.query = &tq, a.key = &tk, a.value = &tv, a.attention_out = &to;
    a.num_heads = sh->n, a.num_key_value_heads = sh->nkv, a.scale_value = c.scale_value, a.input_layout = o->layout;
    if (scaled && o->scales == SCALES_KIVI) {
        a.key_antiquant_scale = &tqs[0], a.key_antiquant_offset = &tqs[1];
        a.value_antiquant_scale = &tqs[2], a.value_antiquant_offset = &tqs[3], a.value_antiquant_mode = 2;
    } else if (scaled) {
        a.antiquant_scale = &tqs[0], a.antiquant_offset = &tqs[1], a.antiquant_mode = c.antiquant_mode;
    }
    a.template_mode = o->template_mode;
    a.window = o->window;
    a.rope_mode = o->rope, a.rope_offset = o->rope_offset;
    a.value_head_dim = o->value_dim;
    a.actual_seq_lengths = c.lengths, a.actual_seq_lengths_count = c.lengths_count;
    a.block_table = c.block_table, a.block_table_cols = c.block_table_cols, a.block_size = c.block_size;
    if (o->value_is_key) a.value = &tk;
    ifa_tensor tsk = {bsk, 0, IFA_DTYPE_FLOAT32, 1, {sh->n}};
    if (o->sinks) a.sinks = &tsk;
    ifa_tensor tal = {bal, 0, IFA_DTYPE_FLOAT32, 1, {sh->n}};
    if (o->alibi) a.alibi_slopes = &tal;
    ifa_tensor tkp = {bkp, 0, kv, c.key_shared_prefix.ndim, {0}}, tvp = tkp;
    memcpy(tkp.shape, c.key_shared_prefix.shape, sizeof tkp.shape), memcpy(tvp.shape, tkp.shape, sizeof tvp.shape);
    tvp.buffer = bvp;
    if (prefix > 0) a.key_shared_prefix = &tkp, a.value_shared_prefix = &tvp;
    size_t ws_bytes = 0;
    for (int i = 0; i < 101; ++i) {
        const double t0 = now_us();
        ifa_status st = ifa_incre_flash_attention_get_workspace_size(ctx, &a, &res->plan, &ws_bytes);
        plan_t[i] = now_us() - t0;
        if (st != IFA_STATUS_OK) {
            fprintf(stderr, "ifa-bench: %s\n", ifa_last_error());
            goto done;
        }
    }
    res->plan_us = ifa_bench_median(plan_t, 101);
    if (ws_bytes && ifa_buffer_create(ctx, CL_MEM_READ_WRITE, ws_bytes, &ws) != IFA_STATUS_OK) {
        fprintf(stderr, "ifa-bench: the workspace: %s\n", ifa_last_error());
        goto done;
    }
    for (int i = -o->warmup; i < o->runs; ++i) {
        const int copy = (i + o->warmup) % copies;
        tk.offset = tv.offset = kb * (size_t)copy;
        for (int j = 0; j < 4; ++j)
            if (bq4[j]) tqs[j].offset = qt[j]->bytes * (size_t)copy;
        tkp.offset = tvp.offset = pb * (size_t)copy;
        cl_event first = NULL, last = NULL;
        const double t0 = now_us();
        ifa_status st = ifa_incre_flash_attention_run_profiled(ctx, &res->plan, &a, ws, 0, queue, 0, NULL, &first, &last);
        const double host = now_us() - t0;
        if (st != IFA_STATUS_OK) {
            fprintf(stderr, "ifa-bench: %s\n", ifa_last_error());
            goto done;
        }
        clWaitForEvents(1, &last);
        if (i >= 0) t[i] = span_us(first, last), h[i] = host, tail[i] = t[i] - span_us(first, first);
        clReleaseEvent(first);
        clReleaseEvent(last);
    }
    res->us = ifa_bench_median(t, o->runs);
    res->best_us = t[0]; /* median sorted t */
    res->host_us = ifa_bench_median(h, o->runs);
    res->tail_us = ifa_bench_median(tail, o->runs);
    /* the same calls back to back without waiting, as an engine enqueues a step's layers: the device is busy,
     * so the host time is ifa's and the runtime's enqueue work, without waking idle device threads */
    for (int i = 0; i < o->runs; ++i) {
        const int copy = i % copies;
        tk.offset = tv.offset = kb * (size_t)copy;
        for (int j = 0; j < 4; ++j)
            if (bq4[j]) tqs[j].offset = qt[j]->bytes * (size_t)copy;
        tkp.offset = tvp.offset = pb * (size_t)copy;
        const double t0 = now_us();
        ifa_status st = ifa_incre_flash_attention_run(ctx, &res->plan, &a, ws, 0, queue, 0, NULL, NULL);
        h[i] = now_us() - t0;
        if (st != IFA_STATUS_OK) {
            fprintf(stderr, "ifa-bench: %s\n", ifa_last_error());
            clFinish(queue);
            goto done;
        }
    }
    clFinish(queue);
    res->host_busy_us = ifa_bench_median(h, o->runs);
    res->gbps = (double)res->kv_bytes / res->us * 1e-3;
    rc = 0;
done:
    free(t);
    free(h);
    free(tail);
    cl_mem all[] = {bq, bo, bk, bv, ws, bq4[0], bq4[1], bq4[2], bq4[3], bkp, bvp, bsk, bal};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
        if (all[i]) clReleaseMemObject(all[i]);
    ifa_case_free(&c);
    return rc;
}

/* --compare-templates: sh forced to each template, and the planner's own choice for it. Prints (and writes to
 * csv) one row; returns -1 when a run failed, else 1 if the planner picked the winner, 0 if not. */
static int compare_templates(ifa_context *ctx, cl_command_queue queue, const ifa_bench_shape *sh, const options *o,
                             ifa_dtype kv, int64_t llc, FILE *csv) {
    options forced = *o;
    row_result r[2];
    static const char *const names[2] = {"all_vector", "cv"};
    for (int t = 0; t < 2; ++t) {
        forced.template_mode = names[t];
        if (bench_shape(ctx, queue, sh, &forced, kv, 0, llc, &r[t]) != 0 || r[t].pass == 0) return -1;
    }
    ifa_problem p = r[0].plan.problem;
    p.template_request = 0;
    ifa_plan own;
    if (ifa__plan_make(&p, &ctx->facts, &own) != IFA_STATUS_OK) {
        fprintf(stderr, "ifa-bench: %s\n", ifa_last_error());
        return -1;
    }
    const int winner = r[1].us < r[0].us; /* 1: cv */
    const int chosen = own.template_id == IFA_TEMPLATE_CV;
    char line[320];
    snprintf(line, sizeof line, "%lld,%lld,%lld,%lld,%lld,%lld,%s,%.1f,%.2f,%.2f,%s,%.2f,%s,%s,%s",
             (long long)sh->b, (long long)sh->n, (long long)sh->nkv, (long long)(sh->n / sh->nkv), (long long)sh->d,
             (long long)sh->s, ifa_dtype_name(kv), (double)r[0].kv_bytes / 1e6, r[0].us, r[1].us, names[winner],
             winner ? r[0].us / r[1].us : r[1].us / r[0].us, names[chosen], chosen == winner ? "yes" : "NO",
             r[0].pass < 0 ? "skipped" : "pass");
    printf("%s\n", line);
    fflush(stdout);
    if (csv) {
        fprintf(csv, "%s\n", line);
        fflush(csv);
    }
    return chosen == winner;
}

/* IFA_KERNEL_DIR = dir for the builds that follow, or unset with NULL; 0, or -1 when the environment cannot be set */
static int set_kernel_dir(const char *dir) { return dir ? setenv("IFA_KERNEL_DIR", dir, 1) : unsetenv("IFA_KERNEL_DIR"); }

/* --variant: the variants of sh in o->rounds rounds, each round running every variant once (starting one later
 * each round, so that none always follows the same one); the reference check in the first round only. Prints
 * (and writes to csv) a row per variant; returns the number of failed runs or checks. */
static int compare_variants(ifa_context *ctx, cl_command_queue queue, const ifa_bench_shape *sh, const options *o,
                            ifa_dtype kv, int64_t llc, double bw, const char *base_tuning, FILE *csv) {
    const int nv = o->nvariants;
    double us[64 * IFA_BENCH_MAX_VARIANTS], tails[64 * IFA_BENCH_MAX_VARIANTS];
    row_result first[IFA_BENCH_MAX_VARIANTS];
    int failures = 0, broken = 0;
    /* a variant with its own kernel sources gets its own context (its own program cache) on the same OpenCL
     * context and queue, and IFA_KERNEL_DIR while it runs: its builds read that directory */
    ifa_context *vctx[IFA_BENCH_MAX_VARIANTS] = {0};
    const char *env_dir = getenv("IFA_KERNEL_DIR");
    char base_dir[4096] = "";
    if (env_dir) snprintf(base_dir, sizeof base_dir, "%s", env_dir);
    const char *const base = env_dir ? base_dir : NULL; /* the environment's, kept: setenv may move getenv's */
    for (int i = 0; i < nv && !broken; ++i)
        if (o->variants[i].kernels[0] &&
            ifa_context_create(ifa_context_cl_context(ctx), ifa_context_device(ctx), &vctx[i]) != IFA_STATUS_OK) {
            fprintf(stderr, "ifa-bench: variant %d: %s\n", i + 1, ifa_last_error());
            broken = 1;
        }
    for (int round = 0; round < o->rounds && !broken; ++round)
        for (int k = 0; k < nv && !broken; ++k) {
            const int i = (round + k) % nv;
            options ov = *o;
            if (o->variants[i].layout[0]) ov.layout = o->variants[i].layout;
            ov.check = o->check && round == 0;
            row_result r;
            broken = ifa_bench_variant_apply(base_tuning, &o->variants[i]) != 0 ||
                     set_kernel_dir(vctx[i] ? o->variants[i].kernels : base) != 0 ||
                     bench_shape(vctx[i] ? vctx[i] : ctx, queue, sh, &ov, kv, 0, llc, &r) != 0;
            if (broken) break;
            us[round * nv + i] = r.us;
            tails[round * nv + i] = r.tail_us;
            if (round == 0) first[i] = r, failures += r.pass == 0;
        }
    ifa_bench_variant_apply(base_tuning, &(ifa_bench_variant){"", "", ""}); /* the environment's own again */
    set_kernel_dir(base);
    for (int i = 0; i < nv; ++i) ifa_context_destroy(vctx[i]);
    if (broken) return failures + 1;
    for (int i = 0; i < nv; ++i) {
        ifa_bench_variant_stats st;
        ifa_bench_variant_stats_of(us, o->rounds, nv, i, &st);
        const double gbps = (double)first[i].kv_bytes / st.median_us * 1e-3;
        const ifa_bench_variant *vi = &o->variants[i];
        char label[sizeof vi->tuning + sizeof vi->kernels + 16];
        const char *tuning = vi->tuning[0] ? vi->tuning : vi->kernels[0] ? "" : "default";
        snprintf(label, sizeof label, "%s%s%s%s", tuning, vi->tuning[0] && vi->kernels[0] ? "," : "",
                 vi->kernels[0] ? "kernels=" : "", vi->kernels);
        char line[1024];
        snprintf(line, sizeof line, "%lld,%lld,%lld,%lld,%lld,%s,%.1f,%d,%s,\"%s\",%.2f,%.2f,%.2f,%.1f,%.1f,%.3f,%d,%d,%llu,%s,%.2f,%d,%d",
                 (long long)sh->b, (long long)sh->n, (long long)sh->nkv, (long long)sh->d, (long long)sh->s,
                 ifa_dtype_name(kv), (double)first[i].kv_bytes / 1e6, i + 1,
                 o->variants[i].layout[0] ? o->variants[i].layout : o->layout,
                 label, st.median_us, st.low_us, st.high_us, gbps,
                 100.0 * gbps / bw, st.vs_first, st.wins, o->rounds, (unsigned long long)first[i].plan.tiling_key,
                 first[i].pass < 0 ? "skipped" : first[i].pass ? "pass" : "FAIL",
                 ifa_bench_column_median(tails, o->rounds, nv, i), /* the combine after the main kernel */
                 (int)first[i].plan.max_splits, (int)first[i].plan.units); /* what the variant's plan split into */
        printf("%s\n", line);
        if (csv) fprintf(csv, "%s\n", line);
    }
    fflush(stdout);
    if (csv) fflush(csv);
    return failures;
}

static const char *split_name(int s) {
    static const char *const names[] = {"none", "partial", "global", "balanced"};
    return s >= 0 && s < 4 ? names[s] : "?";
}

/* OUT.json beside OUT.csv (OUT.csv.json for a name without .csv): the run's command, date, device, measured
 * streaming bandwidth, POCL_AFFINITY, peers' file and the device it names (tools/plot_bench.py's legend), as the
 * CSV's rows do not say them. 0, or -1 when it could not be written. */
static int write_sidecar(const char *csv_path, int argc, char **argv, const char *date, const ifa_context *ctx,
                         double bw, const char *pocl_affinity, const char *peers_file, const char *peers_device) {
    char path[4096];
    const size_t n = strlen(csv_path);
    if (n > 4 && strcmp(csv_path + n - 4, ".csv") == 0)
        snprintf(path, sizeof path, "%.*s.json", (int)(n - 4), csv_path);
    else
        snprintf(path, sizeof path, "%s.json", csv_path);
    cJSON *o = cJSON_CreateObject(), *cmd = cJSON_AddArrayToObject(o, "command");
    for (int i = 0; i < argc; ++i) cJSON_AddItemToArray(cmd, cJSON_CreateString(argv[i]));
    cJSON_AddStringToObject(o, "date", date);
    cJSON_AddStringToObject(o, "device", ctx->device_name);
    cJSON_AddNumberToObject(o, "compute_units", ctx->facts.compute_units);
    cJSON_AddNumberToObject(o, "bandwidth_GBps", bw);
    cJSON_AddStringToObject(o, "POCL_AFFINITY", pocl_affinity);
    if (peers_file) {
        cJSON_AddStringToObject(o, "peers", peers_file);
        cJSON_AddStringToObject(o, "peers_device", peers_device); /* "" where the file names none */
        cJSON_AddBoolToObject(o, "peers_same_device", strcmp(peers_device, ctx->device_name) == 0);
    }
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    FILE *f = text ? fopen(path, "w") : NULL;
    int ok = f && fprintf(f, "%s\n", text) > 0;
    if (f && fclose(f) != 0) ok = 0;
    free(text);
    return ok ? 0 : -1;
}

int main(int argc, char **argv) {
    if (ifa_arg_help(argc, argv)) return usage(stdout);
    options o = {.layout = "BNSD", .q = IFA_DTYPE_FLOAT16, .kv = IFA_DTYPE_FLOAT16, .warmup = 3, .runs = 20, .check = 1,
                 .scales = SCALES_CHANNEL, .query_len = 1, .rounds = 5};
    const char *shapes_file = NULL, *peers_file = NULL, *csv_out = NULL, *device = NULL;
    ifa_bench_shape *shapes = NULL;
    int nshapes = 0, kv_set = 0;
    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--no-check") == 0) {
            o.check = 0;
            continue;
        }
        if (strcmp(arg, "--compare-templates") == 0) {
            o.compare = 1;
            continue;
        }
        if (strcmp(arg, "--sinks") == 0) {
            o.sinks = 1;
            continue;
        }
        if (strcmp(arg, "--alibi") == 0) {
            o.alibi = 1;
            continue;
        }
        if (strcmp(arg, "--plain-buffers") == 0) {
            plain_buffers = 1;
            continue;
        }
        if (strcmp(arg, "--bw-each-row") == 0) {
            bw_each_row = 1;
            continue;
        }
        if (strcmp(arg, "--blocks-in-order") == 0) {
            o.blocks_in_order = 1;
            continue;
        }
        if (strcmp(arg, "--value-is-key") == 0) {
            o.value_is_key = 1;
            continue;
        }
        if (!val) {
            free(shapes);
            ifa_arg_unknown("ifa-bench", arg);
            return usage(stderr);
        }
        ++i;
        /* each value whole and in its rule, or a message naming it (the op checks the rest: its own messages) */
        const char *tool = "ifa-bench";
        int bad = 0;
        if (strcmp(arg, "--variant") == 0) {
            char why[320] = "at most 8 variants";
            if (o.nvariants == IFA_BENCH_MAX_VARIANTS || ifa_bench_variant_parse(val, &o.variants[o.nvariants++], why, sizeof why) != 0) {
                fprintf(stderr, "ifa-bench: %s\n", why);
                free(shapes);
                return 2;
            }
        } else if (strcmp(arg, "--rounds") == 0) bad = ifa_arg_int32(tool, arg, val, 1, 64, &o.rounds);
        else if (strcmp(arg, "--shapes") == 0) shapes_file = val;
        else if (strcmp(arg, "--scales") == 0) {
            static const char *const names[] = {"channel", "token", "kivi", "tensor"}; /* the SCALES_ codes' order */
            bad = ifa_arg_choice(tool, arg, val, names, 4, &o.scales);
        }
        else if (strcmp(arg, "--peers") == 0) peers_file = val;
        else if (strcmp(arg, "--csv") == 0) csv_out = val;
        else if (strcmp(arg, "--device") == 0) device = val;
        else if (strcmp(arg, "--layout") == 0) o.layout = val;
        else if (strcmp(arg, "--warmup") == 0) bad = ifa_arg_int32(tool, arg, val, 0, 1000000, &o.warmup);
        else if (strcmp(arg, "--runs") == 0) bad = ifa_arg_int32(tool, arg, val, 1, 1000000, &o.runs);
        else if (strcmp(arg, "--prefix") == 0) bad = ifa_arg_int64(tool, arg, val, 0, IFA_ARG_NO_MAX, &o.prefix);
        else if (strcmp(arg, "--window") == 0) bad = ifa_arg_int64(tool, arg, val, 0, IFA_ARG_NO_MAX, &o.window);
        else if (strcmp(arg, "--value-dim") == 0) bad = ifa_arg_int64(tool, arg, val, 0, IFA_ARG_NO_MAX, &o.value_dim);
        else if (strcmp(arg, "--rope") == 0) o.rope = val;
        else if (strcmp(arg, "--rope-offset") == 0)
            bad = ifa_arg_int64(tool, arg, val, 0, IFA_ARG_NO_MAX, &o.rope_offset);
        else if (strcmp(arg, "--query-len") == 0) bad = ifa_arg_int64(tool, arg, val, 1, IFA_ARG_NO_MAX, &o.query_len);
        else if (strcmp(arg, "--lengths") == 0) o.lengths = val;
        else if (strcmp(arg, "--block-size") == 0) bad = ifa_arg_int64(tool, arg, val, 1, 512, &o.block_size);
        else if (strcmp(arg, "--template") == 0) o.template_mode = val;
        else if (strcmp(arg, "--rotate") == 0) {
            if (strcmp(val, "auto") == 0)
                o.rotate = 0;
            else
                bad = ifa_arg_int32(tool, arg, val, 1, 1000000, &o.rotate); /* or auto */
        } else if (strcmp(arg, "--dtype") == 0) bad = ifa_arg_dtype(tool, arg, val, &o.q);
        else if (strcmp(arg, "--kv-dtype") == 0) {
            bad = ifa_arg_dtype(tool, arg, val, &o.kv);
            kv_set = 1;
        } else if (strcmp(arg, "--shape") == 0) {
            ifa_bench_shape s = {0};
            long long d5[5];
            bad = ifa_arg_int_list(tool, arg, val, "B,N,N_kv,D,S", 5, 0, d5);
            if (!bad) {
                s.b = d5[0], s.n = d5[1], s.nkv = d5[2], s.d = d5[3], s.s = d5[4];
                snprintf(s.kv_type, sizeof s.kv_type, "f16");
                ifa_bench_shape *grown = realloc(shapes, sizeof *shapes * (size_t)(nshapes + 1));
                if (!grown) {
                    free(shapes);
                    return 3;
                }
                shapes = grown;
                shapes[nshapes++] = s;
            }
        } else {
            free(shapes);
            ifa_arg_unknown("ifa-bench", arg);
            return usage(stderr);
        }
        if (bad) {
            free(shapes);
            return 2;
        }
    }
    if (!kv_set) o.kv = o.q;
    /* a shared prefix's copied variant lengthens every sequence, which a list of lengths cannot follow */
    const char *clash = NULL;
    if (o.lengths && o.prefix > 0)
        clash = "--lengths and --prefix do not go together (the prefix's copied variant lengthens every sequence)";
    else if (o.blocks_in_order && !o.block_size)
        clash = "--blocks-in-order needs --block-size";
    else if (o.nvariants && (o.compare || o.prefix > 0))
        clash = "--variant goes with neither --compare-templates nor --prefix";
    else if (strlen(o.layout) > 4)
        clash = "--layout: want BSH, BSND or BNSD";
    if (clash) {
        fprintf(stderr, "ifa-bench: %s\n", clash);
        free(shapes);
        return 2;
    }
    /* the environment's IFA_TUNING: the base every variant's entries follow */
    const char *env_tuning = getenv("IFA_TUNING");
    char *base_tuning = env_tuning ? strdup(env_tuning) : NULL;
    char err[256];
    ifa_bench_shape *peers = NULL;
    int npeers = 0;
    ifa_context *ctx = NULL;
    /* the early exits below free what is held so far (the sanitizer stage's leak check runs the refusals) */
    int early = 0;
    if (shapes_file && ifa_bench_shapes_load(shapes_file, &shapes, &nshapes, err, sizeof err) != 0) {
        fprintf(stderr, "ifa-bench: %s\n", err);
        early = 2;
    } else if (nshapes == 0) {
        early = usage(stderr);
    } else if (peers_file && ifa_bench_shapes_load(peers_file, &peers, &npeers, err, sizeof err) != 0) {
        fprintf(stderr, "ifa-bench: %s\n", err);
        early = 2;
    }
    const char *pocl_affinity = early ? NULL : ifa_tool_pin_pocl_workers();
    if (!early && ifa_context_create_default(device, &ctx) != IFA_STATUS_OK) {
        fprintf(stderr, "ifa-bench: %s\n", ifa_last_error());
        early = 3;
    }
    if (!early && ifa_tool_check_env("ifa-bench", &ctx->facts) != 0) early = 2;
    cl_int cerr;
    cl_command_queue queue = NULL;
    if (!early && !(queue = clCreateCommandQueue(ctx->cl_ctx, ctx->device, CL_QUEUE_PROFILING_ENABLE, &cerr))) {
        fprintf(stderr, "ifa-bench: clCreateCommandQueue failed (%d)\n", (int)cerr);
        early = 3;
    }
    if (early) {
        ifa_context_destroy(ctx);
        free(shapes);
        free(peers);
        free(base_tuning);
        return early;
    }
    /* the peers' device: their rows note "peer-elsewhere" unless it is this run's */
    char peers_device[256] = "";
    if (peers_file) ifa_bench_shapes_device(peers_file, peers_device, sizeof peers_device);
    const int peers_here = strcmp(peers_device, ctx->device_name) == 0;
    int64_t device_cache = 0;
    const int64_t llc = last_level_cache(ctx, &device_cache);
    int64_t bw_bytes = 4 * llc > ((int64_t)256 << 20) ? 4 * llc : ((int64_t)256 << 20);
    if (bw_bytes > ((int64_t)1 << 30)) bw_bytes = (int64_t)1 << 30;
    enqueue_floor enq = {NAN, NAN, NAN, NAN};
    const double bw = measure_bandwidth(ctx, queue, bw_bytes, &enq);
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    printf("# ifa-bench %s, device: %s, %d compute units, global-memory cache %lld MiB; cold runs rotate over copies "
           "of at least 2 x %lld MiB; POCL_AFFINITY=%s (ifa-bench sets 1, PoCL's CPU workers pinned one per core, unless "
           "given)\n",
           date, ctx->device_name, (int)ctx->facts.compute_units, (long long)(device_cache >> 20), (long long)(llc >> 20),
           pocl_affinity);
    char thp[32], bufs[160];
    snprintf(bufs, sizeof bufs,
             "ifa_buffer_create's buffers (on a CPU device whole 2 MiB pages advised for huge pages, starting %zu bytes "
             "past the boundary)",
             ifa__buffer_start(ctx->facts.vendor));
    printf("# K/V and the bandwidth reference in %s; transparent huge pages: %s\n",
           plain_buffers ? "clCreateBuffer's buffers (--plain-buffers)" : bufs, thp_mode(thp, sizeof thp));
    char extras[256] = "";
    int nx = o.window > 0 ? snprintf(extras, sizeof extras, ", window %lld", (long long)o.window) : 0;
    if (o.sinks) nx += snprintf(extras + nx, sizeof extras - (size_t)nx, ", sinks");
    if (o.alibi) nx += snprintf(extras + nx, sizeof extras - (size_t)nx, ", alibi");
    if (o.scales != SCALES_CHANNEL)
        nx += snprintf(extras + nx, sizeof extras - (size_t)nx, ", scales %s",
                       o.scales == SCALES_TOKEN    ? "per token"
                       : o.scales == SCALES_TENSOR ? "per tensor"
                                                   : "kivi (keys per channel)");
    if (o.query_len > 1) nx += snprintf(extras + nx, sizeof extras - (size_t)nx, ", %lld causal query tokens", (long long)o.query_len);
    if (o.lengths) nx += snprintf(extras + nx, sizeof extras - (size_t)nx, ", lengths %.24s", o.lengths);
    if (o.block_size > 0)
        nx += snprintf(extras + nx, sizeof extras - (size_t)nx, ", paged in %lld-row blocks%s", (long long)o.block_size,
                       o.blocks_in_order ? " in order" : " shuffled");
    if (o.value_dim > 0)
        snprintf(extras + nx, sizeof extras - (size_t)nx, ", D_v %lld%s", (long long)o.value_dim,
                 o.value_is_key ? " (value = key)" : "");
    printf("# streaming read bandwidth over %lld MiB: %.1f GB/s%s; layout %s, q %s, kv %s%s; median of %d runs after %d "
           "warm-ups; device time = first kernel start to last kernel end\n",
           (long long)(bw_bytes >> 20), bw,
           ifa__vendor_is_cpu(ctx->facts.vendor) ? " (best of 4, 64 and 256 ranges per compute unit, with and without a prefetch)" : "", o.layout,
           ifa_dtype_name(o.q), ifa_dtype_name(o.kv), extras, o.runs, o.warmup);
    if (o.nvariants)
        printf("# %d variants in %d alternating rounds; a variant's time is the median of its rounds' medians\n", o.nvariants,
               o.rounds);
    if (bw_each_row)
        printf("# --bw-each-row: each row's pct_bw is against the reference measured again after its runs (the CSV's "
               "bw_GBps column)\n");
    printf("# the runtime's enqueue of a 3-argument kernel takes %.1f us of host time after the device idles, %.1f us "
           "while it is busy: the floor under host_run_us and host_busy_us\n",
           enq.idle_us, enq.busy_us);
    printf("# that kernel with one store a work-item spans %.1f us of device time after the device idles, %.1f us back "
           "to back: the floor under each kernel's device time\n",
           enq.dev_idle_us, enq.dev_busy_us);
    FILE *csv = csv_out ? fopen(csv_out, "w") : NULL;
    if (csv_out && !csv) fprintf(stderr, "ifa-bench: cannot write %s\n", csv_out);
    const char *header = o.compare ? "B,N,N_kv,G,D,S_kv,kv_type,kv_MB,all_vector_us,cv_us,winner,by,planner,planner_right,check"
                         : o.nvariants ? "B,N,N_kv,D,S_kv,kv_type,kv_MB,variant,layout,tuning,median_us,low_us,high_us,GBps,pct_bw,"
                                         "vs_first,wins,rounds,tiling_key,check,tail_us,splits,units"
                                   : "B,N,N_kv,D,S_kv,prefix,kv_type,kv_MB,us,best_us,GBps,pct_bw,copies,host_run_us,host_busy_us,plan_us,"
                                     "template,tiling_key,vector_width,split_kv,splits,units,check,peer_us,speedup,S_q,mean_len,tail_us";
    printf("%s\n", header);
    if (csv) {
        /* the CSV holds the header and the rows only, so that csv, NumPy and pandas read it as it is; what the run
         * was lies beside it in OUT.json */
        fprintf(csv, "%s%s\n", header, o.compare || o.nvariants ? "" : ",bw_GBps,note");
        if (write_sidecar(csv_out, argc, argv, date, ctx, bw, pocl_affinity, peers_file, peers_device) != 0)
            fprintf(stderr, "ifa-bench: cannot write the JSON beside %s\n", csv_out);
    }
    int failures = 0, compared = 0, right = 0;
    double log_ratio = 0;
    int nratio = 0;
    for (int i = 0; i < nshapes; ++i) {
        const ifa_bench_shape *sh = &shapes[i];
        fprintf(stderr, "\r[%d/%d] B=%lld N=%lld N_kv=%lld D=%lld S=%lld %s   ", i + 1, nshapes, (long long)sh->b,
                (long long)sh->n, (long long)sh->nkv, (long long)sh->d, (long long)sh->s, sh->kv_type);
        /* the file's KV type: f16 runs --kv-dtype; ggml's q8_0 / q4_0 (blocks of 32 with a scale) run as int8 /
         * int4 with per-channel float16 scale and offset, about the same bytes per value */
        ifa_dtype kv = o.kv;
        if (strcmp(sh->kv_type, "q8_0") == 0) kv = IFA_DTYPE_INT8;
        else if (strcmp(sh->kv_type, "q4_0") == 0) kv = IFA_DTYPE_INT4;
        else if (strcmp(sh->kv_type, "f16") != 0 && strcmp(sh->kv_type, "fp16") != 0 && sh->kv_type[0]) {
            printf("%lld,%lld,%lld,%lld,%lld,,,,,,,,,,,,,,,,,,skipped: KV type %s,,,,,\n", (long long)sh->b,
                   (long long)sh->n, (long long)sh->nkv, (long long)sh->d, (long long)sh->s, sh->kv_type);
            continue;
        }
        if (o.nvariants) {
            failures += compare_variants(ctx, queue, sh, &o, kv, llc, bw, base_tuning, csv);
            continue;
        }
        if (o.compare) {
            const int c = compare_templates(ctx, queue, sh, &o, kv, llc, csv);
            if (c < 0) ++failures;
            else ++compared, right += c;
            continue;
        }
        /* with --prefix: the cascade (prefix shared), then the same keys copied into every sequence */
        for (int variant = 0; variant < (o.prefix > 0 ? 2 : 1); ++variant) {
            ifa_bench_shape run = *sh;
            int64_t prefix = 0;
            char tag[32] = "";
            if (o.prefix > 0 && variant == 0) prefix = o.prefix, snprintf(tag, sizeof tag, "shared:%lld", (long long)o.prefix);
            if (o.prefix > 0 && variant == 1) run.s += o.prefix, snprintf(tag, sizeof tag, "copied:%lld", (long long)o.prefix);
            row_result r;
            if (bench_shape(ctx, queue, &run, &o, kv, prefix, llc, &r) != 0) {
                ++failures;
                continue;
            }
            const double row_bw = bw_each_row ? measure_bandwidth(ctx, queue, bw_bytes, NULL) : bw;
            const ifa_bench_shape *peer =
                o.prefix > 0 || o.query_len > 1 || o.lengths ? NULL : ifa_bench_shapes_find(peers, npeers, sh);
            char peer_us[32] = "", ratio[32] = "";
            if (peer) {
                snprintf(peer_us, sizeof peer_us, "%.2f", peer->us);
                snprintf(ratio, sizeof ratio, "%.3f", peer->us / r.us);
                log_ratio += log(peer->us / r.us);
                ++nratio;
            }
            char line[512];
            snprintf(line, sizeof line,
                     "%lld,%lld,%lld,%lld,%lld,%s,%s,%.1f,%.2f,%.2f,%.1f,%.1f,%d,%.1f,%.1f,%.2f,%s,%llu,%d,%s,%d,%d,%s,%s,%s,%lld,%.1f,%.2f",
                     (long long)run.b, (long long)run.n, (long long)run.nkv, (long long)run.d, (long long)run.s, tag,
                     ifa_dtype_name(kv), (double)r.kv_bytes / 1e6, r.us, r.best_us, r.gbps, 100.0 * r.gbps / row_bw, r.copies,
                     r.host_us, r.host_busy_us, r.plan_us, r.plan.template_id == IFA_TEMPLATE_ALL_VECTOR ? "all_vector" : "cv",
                     (unsigned long long)r.plan.tiling_key, (int)r.plan.vector_width, split_name(r.plan.split_kv),
                     (int)r.plan.max_splits, (int)r.plan.units, r.pass < 0 ? "skipped" : r.pass ? "pass" : "FAIL", peer_us,
                     ratio, (long long)o.query_len, r.mean_len, r.tail_us);
            printf("%s\n", line);
            fflush(stdout);
            if (csv) {
                /* notes: cache-warm, a rate above the streaming reference (K/V read partly from a cache: a row
                 * that fits the last-level cache, or copies too few to rotate it out); peer-elsewhere, a peer time
                 * measured on another device than this run's (the peers' file names it in its "# device:" line) */
                const int warm = r.gbps > row_bw, elsewhere = peer && !peers_here;
                fprintf(csv, "%s,%.1f,%s%s%s\n", line, row_bw, warm ? "cache-warm" : "", warm && elsewhere ? " " : "",
                        elsewhere ? "peer-elsewhere" : "");
                fflush(csv); /* a run stopped by a time limit (a lent GPU's step) keeps the rows it measured */
            }
            if (r.pass == 0) ++failures;
        }
    }
    fprintf(stderr, "\n");
    if (nratio) printf("# geometric-mean speedup over the peer: %.3f (%d rows)\n", exp(log_ratio / nratio), nratio);
    if (o.compare) printf("# the planner chose the faster template on %d of %d rows\n", right, compared);
    if (csv) fclose(csv);
    clReleaseCommandQueue(queue);
    ifa_context_destroy(ctx);
    free(shapes);
    free(peers);
    free(base_tuning);
    return failures ? 1 : 0;
}
