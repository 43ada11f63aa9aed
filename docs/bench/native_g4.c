/* A yardstick, not part of the library: decode attention for G = 4 query heads per KV head, D = 128, fp16 K/V,
 * written directly in C with AVX2/F16C/FMA intrinsics at the tile shapes a 16-register core allows, to tell whether
 * ifa's G = 4 rows (the peer file's D = 128 GQA-4 rows) are limited by the kernel PoCL builds or by the machine
 * (docs/performance.md, Zen 3, 2026-11-28; native_g1.c is the G = 1 one).
 *
 *   gcc -O3 -march=haswell -ffast-math -o /tmp/native_g4 docs/bench/native_g4.c -lm -lpthread
 *   /tmp/native_g4 S KV_HEADS THREADS COPIES [PREFETCH]
 *
 * Per KV head and 64-row chunk: the scores of 2 key rows x 4 query heads a tile (8 accumulators, each key vector
 * converted once for the 4 heads), reduced by a transposing add; the softmax with -ffast-math's vector expf
 * (glibc's libmvec); P.V in tiles of 4 query heads x 2 value vectors (8 accumulators, 4 broadcasts and 2
 * conversions per 8 FMAs, the kernel's shape on AVX2). Runs 200 times over KV_HEADS heads of S rows (heads split
 * over THREADS threads), rotating over COPIES copies of K and V (cold when COPIES x the KV bytes exceed the
 * last-level cache); prints the best and the median wall time (the first 5 runs dropped). PREFETCH > 0: each score
 * row prefetches the key row PREFETCH rows ahead and its own value row into L2 (the kernel's default form). */
#define _GNU_SOURCE
#include <immintrin.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define D 128
#define G 4
#define CHUNK 64
#define RUNS 200
#define SKIP 5

static int S, HEADS, THREADS, COPIES, PREFETCH;
static size_t copy_elems;
static uint16_t *K, *V;
static float *Q, *O;
static double times[RUNS];
static pthread_barrier_t barrier;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static __m256 load_half8(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }

static void prefetch_row(const uint16_t *row) {
    for (int l = 0; l < D * 2; l += 64) _mm_prefetch((const char *)row + l, _MM_HINT_T1);
}

/* lanes: a0..a3's sums, then a4..a7's */
static __m256 reduce8(const __m256 *a) {
    const __m256 b0 = _mm256_hadd_ps(a[0], a[1]), b1 = _mm256_hadd_ps(a[2], a[3]);
    const __m256 b2 = _mm256_hadd_ps(a[4], a[5]), b3 = _mm256_hadd_ps(a[6], a[7]);
    const __m256 c0 = _mm256_hadd_ps(b0, b1), c1 = _mm256_hadd_ps(b2, b3);
    return _mm256_add_ps(_mm256_permute2f128_ps(c0, c1, 0x20), _mm256_permute2f128_ps(c0, c1, 0x31));
}

/* One KV head's G query rows over S rows: out[h] = softmax(q_h . k^T * scale) . v */
static void head(const uint16_t *k, const uint16_t *v, const float *q, float *out) {
    float acc[G][D] __attribute__((aligned(32))) = {{0}};
    float m[G], l[G], sc[G][CHUNK] __attribute__((aligned(32)));
    for (int h = 0; h < G; h++) m[h] = -INFINITY, l[h] = 0;
    for (int c = 0; c < S; c += CHUNK) {
        float tile[CHUNK / 2][8] __attribute__((aligned(32)));
        for (int j = 0; j < CHUNK; j += 2) {
            const uint16_t *k0 = k + (size_t)(c + j) * D, *k1 = k0 + D;
            if (PREFETCH > 0) {
                if (c + j + PREFETCH < S) prefetch_row(k0 + (size_t)PREFETCH * D), prefetch_row(k1 + (size_t)PREFETCH * D);
                prefetch_row(v + (size_t)(c + j) * D), prefetch_row(v + (size_t)(c + j + 1) * D);
            }
            __m256 a[8];
            for (int i = 0; i < 8; i++) a[i] = _mm256_setzero_ps();
            for (int x = 0; x < D / 8; x++) {
                const __m256 v0 = load_half8(k0 + 8 * x), v1 = load_half8(k1 + 8 * x);
                for (int h = 0; h < G; h++) {
                    const __m256 qq = _mm256_loadu_ps(q + h * D + 8 * x);
                    a[h] = _mm256_fmadd_ps(qq, v0, a[h]), a[4 + h] = _mm256_fmadd_ps(qq, v1, a[4 + h]);
                }
            }
            _mm256_store_ps(tile[j / 2], reduce8(a));
        }
        for (int h = 0; h < G; h++) {
            float mx = -INFINITY;
            for (int j = 0; j < CHUNK; j++) mx = fmaxf(mx, sc[h][j] = tile[j / 2][(j & 1) * 4 + h] * 0.088f);
            const float m_new = fmaxf(m[h], mx), alpha = expf(m[h] - m_new);
            float sum = 0;
            for (int j = 0; j < CHUNK; j++) sc[h][j] = expf(sc[h][j] - m_new);
            for (int j = 0; j < CHUNK; j++) sum += sc[h][j];
            m[h] = m_new, l[h] = l[h] * alpha + sum;
            for (int d = 0; d < D; d++) acc[h][d] *= alpha;
        }
        for (int x0 = 0; x0 < D / 8; x0 += 2) {
            __m256 a[G][2];
            for (int h = 0; h < G; h++)
                a[h][0] = _mm256_load_ps(acc[h] + 8 * x0), a[h][1] = _mm256_load_ps(acc[h] + 8 * x0 + 8);
            const uint16_t *vr = v + (size_t)c * D + 8 * x0;
            for (int j = 0; j < CHUNK; j++, vr += D) {
                const __m256 v0 = load_half8(vr), v1 = load_half8(vr + 8);
                for (int h = 0; h < G; h++) {
                    const __m256 p = _mm256_broadcast_ss(&sc[h][j]);
                    a[h][0] = _mm256_fmadd_ps(p, v0, a[h][0]), a[h][1] = _mm256_fmadd_ps(p, v1, a[h][1]);
                }
            }
            for (int h = 0; h < G; h++)
                _mm256_store_ps(acc[h] + 8 * x0, a[h][0]), _mm256_store_ps(acc[h] + 8 * x0 + 8, a[h][1]);
        }
    }
    for (int h = 0; h < G; h++)
        for (int d = 0; d < D; d++) out[h * D + d] = acc[h][d] / l[h];
}

static void *worker(void *arg) {
    const long t = (long)arg;
    for (int r = 0; r < RUNS; r++) {
        pthread_barrier_wait(&barrier);
        const double t0 = now();
        const size_t base = (size_t)(r % COPIES) * copy_elems;
        for (int h = t; h < HEADS; h += THREADS)
            head(K + base + (size_t)h * S * D, V + base + (size_t)h * S * D, Q + h * G * D, O + h * G * D);
        pthread_barrier_wait(&barrier);
        if (t == 0) times[r] = now() - t0;
    }
    return NULL;
}

static int by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s S KV_HEADS THREADS COPIES [PREFETCH]\n", argv[0]);
        return 2;
    }
    S = atoi(argv[1]), HEADS = atoi(argv[2]), THREADS = atoi(argv[3]), COPIES = atoi(argv[4]);
    PREFETCH = argc > 5 ? atoi(argv[5]) : 0;
    if (S < CHUNK || S % CHUNK || HEADS < 1 || THREADS < 1 || THREADS > 64 || COPIES < 1) {
        fprintf(stderr, "S must be a multiple of %d; KV_HEADS, THREADS (<= 64) and COPIES positive\n", CHUNK);
        return 2;
    }
    copy_elems = (size_t)HEADS * S * D;
    K = aligned_alloc(64, copy_elems * 2 * COPIES), V = aligned_alloc(64, copy_elems * 2 * COPIES);
    Q = malloc(sizeof(float) * HEADS * G * D), O = malloc(sizeof(float) * HEADS * G * D);
    if (!K || !V || !Q || !O) return 1;
    for (size_t i = 0; i < copy_elems * COPIES; i++) /* halves in [1, 2) and [0.5, 1) */
        K[i] = 0x3c00 | (uint16_t)(rand() & 0x3ff), V[i] = 0x3800 | (uint16_t)(rand() & 0x3ff);
    for (int i = 0; i < HEADS * G * D; i++) Q[i] = (float)(rand() % 100) / 100;
    pthread_barrier_init(&barrier, NULL, (unsigned)THREADS);
    pthread_t th[64];
    for (long t = 1; t < THREADS; t++) pthread_create(&th[t], NULL, worker, (void *)t);
    worker(0);
    for (int t = 1; t < THREADS; t++) pthread_join(th[t], NULL);
    /* head 0 of the last run's copy against a float64 reference, so the yardstick computes the real thing */
    const size_t base = (size_t)((RUNS - 1) % COPIES) * copy_elems;
    double err = 0;
    for (int h = 0; h < G; h++) {
        double mx = -INFINITY, l = 0, o[D] = {0};
        double *s = malloc(sizeof(double) * S);
        for (int j = 0; j < S; j++) {
            double dot = 0;
            for (int d = 0; d < D; d++) dot += (double)Q[h * D + d] * _cvtsh_ss(K[base + (size_t)j * D + d]);
            s[j] = dot * 0.088f, mx = fmax(mx, s[j]);
        }
        for (int j = 0; j < S; j++) {
            const double p = exp(s[j] - mx);
            l += p;
            for (int d = 0; d < D; d++) o[d] += p * _cvtsh_ss(V[base + (size_t)j * D + d]);
        }
        for (int d = 0; d < D; d++) err = fmax(err, fabs(O[h * D + d] - o[d] / l) / fabs(o[d] / l));
        free(s);
    }
    printf("head 0 against float64: max relative error %.2e\n", err);
    qsort(times + SKIP, RUNS - SKIP, sizeof(double), by_value);
    const double bytes = copy_elems * 4.0, best = times[SKIP], median = times[SKIP + (RUNS - SKIP) / 2];
    printf("S=%d kv_heads=%d G=%d threads=%d copies=%d prefetch=%d: best %.1f us (%.1f GB/s), median %.1f us "
           "(%.1f GB/s); out[0]=%f\n",
           S, HEADS, G, THREADS, COPIES, PREFETCH, best * 1e6, bytes / best / 1e9, median * 1e6, bytes / median / 1e9,
           O[0]);
    return 0;
}
