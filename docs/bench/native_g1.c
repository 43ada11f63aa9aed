/* A yardstick, not part of the library: decode attention for G = 1, D = 128, fp16 K/V, written directly in C
 * with AVX2/F16C/FMA intrinsics, the way a hand-tuned CPU kernel would do it (q in 16 registers, 64-row chunks,
 * scores, online softmax, P.V into 16 accumulators), to tell whether ifa's G = 1 rows are limited by the kernel
 * PoCL builds or by the machine (docs/performance.md, Zen 3, 2026-11-23).
 *
 *   gcc -O3 -march=haswell -o /tmp/native_g1 docs/bench/native_g1.c -lm -lpthread
 *   /tmp/native_g1 S HEADS THREADS COPIES [PREFETCH [RANGES]]
 *
 * Runs 200 times over HEADS heads of S rows (heads split over THREADS threads), rotating over COPIES copies of
 * K and V so that every run reads cold data when COPIES x the KV bytes exceed the last-level cache; prints the
 * best and the median wall time (the first 5 runs dropped). PREFETCH > 0: prefetch each K and V row that many
 * rows ahead into L1; -1 / -2: prefetch the next chunk's K and V rows into L1 / L2 during the scores.
 * RANGES > 1 (up to 16): each head read as that many ranges of S / RANGES rows, a chunk of each in turn, each with
 * its own running softmax, merged at the end: RANGES x 2 streams in flight per thread (Zen 4, 2026-11-26: no
 * faster than 1 on the Zen 4 VM, in its slow and its fast minutes). */
#define _GNU_SOURCE
#include <immintrin.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define D 128
#define CHUNK 64
#define RUNS 200
#define SKIP 5

static int S, HEADS, THREADS, COPIES, PREFETCH, RANGES = 1;
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

static float hsum(__m256 v) {
    __m128 a = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    a = _mm_add_ps(a, _mm_movehl_ps(a, a));
    return _mm_cvtss_f32(_mm_add_ss(a, _mm_movehdup_ps(a)));
}

static __m256 load_half8(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }

static void prefetch_row(const uint16_t *row, int l2) {
    for (int l = 0; l < D * 2; l += 64) {
        if (l2)
            _mm_prefetch((const char *)row + l, _MM_HINT_T1);
        else
            _mm_prefetch((const char *)row + l, _MM_HINT_T0);
    }
}

/* The chunk of 64 rows at c (of a range ending at end) into the running state (m, l, acc) */
static void chunk(const uint16_t *k, const uint16_t *v, const __m256 *qv, int c, int end, float *m, float *l,
                  __m256 *acc) {
    float mx = -INFINITY, sc[CHUNK];
    for (int j = 0; j < CHUNK; j++) {
        const uint16_t *kr = k + (size_t)(c + j) * D;
        if (PREFETCH > 0) prefetch_row(kr + (size_t)PREFETCH * D, 0);
        if (PREFETCH < 0 && c + CHUNK < end) {
            prefetch_row(kr + (size_t)CHUNK * D, PREFETCH == -2);
            prefetch_row(v + (size_t)(c + CHUNK + j) * D, PREFETCH == -2);
        }
        __m256 d0 = _mm256_setzero_ps(), d1 = _mm256_setzero_ps();
        for (int x = 0; x < D / 8; x += 2) {
            d0 = _mm256_fmadd_ps(qv[x], load_half8(kr + 8 * x), d0);
            d1 = _mm256_fmadd_ps(qv[x + 1], load_half8(kr + 8 * x + 8), d1);
        }
        sc[j] = hsum(_mm256_add_ps(d0, d1)) * 0.088f;
        mx = fmaxf(mx, sc[j]);
    }
    const float m_new = fmaxf(*m, mx), alpha = expf(*m - m_new);
    float sum = 0;
    for (int j = 0; j < CHUNK; j++) sum += sc[j] = expf(sc[j] - m_new);
    *m = m_new, *l = *l * alpha + sum;
    __m256 a[D / 8];
    for (int i = 0; i < D / 8; i++) a[i] = _mm256_mul_ps(acc[i], _mm256_set1_ps(alpha));
    for (int j = 0; j < CHUNK; j++) {
        const uint16_t *vr = v + (size_t)(c + j) * D;
        if (PREFETCH > 0) prefetch_row(vr + (size_t)PREFETCH * D, 0);
        const __m256 p = _mm256_set1_ps(sc[j]);
        for (int x = 0; x < D / 8; x++) a[x] = _mm256_fmadd_ps(p, load_half8(vr + 8 * x), a[x]);
    }
    for (int i = 0; i < D / 8; i++) acc[i] = a[i];
}

/* One head: out = softmax(q . k^T * scale) . v over S rows, read as RANGES interleaved ranges of S / RANGES rows,
 * a chunk of each in turn (1: the rows in order); the caller's data are valid random fp16. */
static void head(const uint16_t *k, const uint16_t *v, const float *q, float *out) {
    __m256 qv[D / 8];
    for (int i = 0; i < D / 8; i++) qv[i] = _mm256_loadu_ps(q + 8 * i);
    __m256 acc[16][D / 8];
    float m[16], l[16];
    const int per = S / RANGES;
    for (int r = 0; r < RANGES; r++) {
        m[r] = -INFINITY, l[r] = 0;
        for (int i = 0; i < D / 8; i++) acc[r][i] = _mm256_setzero_ps();
    }
    for (int c = 0; c < per; c += CHUNK)
        for (int r = 0; r < RANGES; r++) chunk(k, v, qv, r * per + c, (r + 1) * per, &m[r], &l[r], acc[r]);
    float mx = -INFINITY, lt = 0;
    for (int r = 0; r < RANGES; r++) mx = fmaxf(mx, m[r]);
    __m256 o[D / 8];
    for (int i = 0; i < D / 8; i++) o[i] = _mm256_setzero_ps();
    for (int r = 0; r < RANGES; r++) {
        const float f = expf(m[r] - mx);
        lt += l[r] * f;
        for (int i = 0; i < D / 8; i++) o[i] = _mm256_fmadd_ps(acc[r][i], _mm256_set1_ps(f), o[i]);
    }
    for (int i = 0; i < D / 8; i++) _mm256_storeu_ps(out + 8 * i, _mm256_mul_ps(o[i], _mm256_set1_ps(1 / lt)));
}

static void *worker(void *arg) {
    const long t = (long)arg;
    for (int r = 0; r < RUNS; r++) {
        pthread_barrier_wait(&barrier);
        const double t0 = now();
        const size_t base = (size_t)(r % COPIES) * copy_elems;
        for (int h = t; h < HEADS; h += THREADS)
            head(K + base + (size_t)h * S * D, V + base + (size_t)h * S * D, Q + h * D, O + h * D);
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
        fprintf(stderr, "usage: %s S HEADS THREADS COPIES [PREFETCH [RANGES]]\n", argv[0]);
        return 2;
    }
    S = atoi(argv[1]), HEADS = atoi(argv[2]), THREADS = atoi(argv[3]), COPIES = atoi(argv[4]);
    PREFETCH = argc > 5 ? atoi(argv[5]) : 0;
    RANGES = argc > 6 ? atoi(argv[6]) : 1;
    if (RANGES < 1 || RANGES > 16 || S % (RANGES * CHUNK)) {
        fprintf(stderr, "RANGES must be 1 to 16 and divide S into multiples of %d rows\n", CHUNK);
        return 2;
    }
    if (S < CHUNK || S % CHUNK || HEADS < 1 || THREADS < 1 || THREADS > 64 || COPIES < 1) {
        fprintf(stderr, "S must be a multiple of %d; HEADS, THREADS (<= 64) and COPIES positive\n", CHUNK);
        return 2;
    }
    copy_elems = (size_t)HEADS * S * D;
    K = aligned_alloc(64, copy_elems * 2 * COPIES), V = aligned_alloc(64, copy_elems * 2 * COPIES);
    Q = malloc(sizeof(float) * HEADS * D), O = malloc(sizeof(float) * HEADS * D);
    if (!K || !V || !Q || !O) return 1;
    for (size_t i = 0; i < copy_elems * COPIES; i++) /* halves in [1, 2) and [0.5, 1) */
        K[i] = 0x3c00 | (uint16_t)(rand() & 0x3ff), V[i] = 0x3800 | (uint16_t)(rand() & 0x3ff);
    for (int i = 0; i < HEADS * D; i++) Q[i] = (float)(rand() % 100) / 100;
    pthread_barrier_init(&barrier, NULL, (unsigned)THREADS);
    pthread_t th[64];
    for (long t = 1; t < THREADS; t++) pthread_create(&th[t], NULL, worker, (void *)t);
    worker(0);
    for (int t = 1; t < THREADS; t++) pthread_join(th[t], NULL);
    qsort(times + SKIP, RUNS - SKIP, sizeof(double), by_value);
    const double bytes = copy_elems * 4.0, best = times[SKIP], median = times[SKIP + (RUNS - SKIP) / 2];
    printf("S=%d heads=%d threads=%d copies=%d prefetch=%d: best %.1f us (%.1f GB/s), median %.1f us (%.1f GB/s); "
           "out[0]=%f\n",
           S, HEADS, THREADS, COPIES, PREFETCH, best * 1e6, bytes / best / 1e9, median * 1e6, bytes / median / 1e9,
           O[0]);
    return 0;
}
