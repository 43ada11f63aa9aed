/* How fast one core streams a KV head's rows in BNSD order (a head's rows adjacent) or in BSND's one-head
 * order (a D-element slice every N_kv x D elements), reading K and V as 16-bit values (docs/performance.md,
 * Zen 4, 2026-11-25). order 0 reads each position's K and V slices together; order 1 is the fused kernel's:
 * per chunk of CHUNK positions, a pass over the K slices (prefetching K DIST positions ahead and each V slice
 * as its K is read), then a pass over the V slices. Best of 8 runs over 8 rotated copies (cold).
 * build: gcc -O2 -mavx512f -mavx512bw -o bsnd_stream bsnd_stream.c
 * usage: bsnd_stream S N_KV D DIST LAYOUT(0 BNSD, 1 BSND) ORDER CHUNK */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void prefetch_slice(const uint16_t *p, int d) {
    for (int l = 0; l < d * 2; l += 64) _mm_prefetch((const char *)p + l, _MM_HINT_T1);
}

int main(int argc, char **argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: bsnd_stream S N_KV D DIST LAYOUT ORDER CHUNK\n");
        return 2;
    }
    const int s = atoi(argv[1]), nkv = atoi(argv[2]), d = atoi(argv[3]), dist = atoi(argv[4]), bsnd = atoi(argv[5]),
              order = atoi(argv[6]), chunk = atoi(argv[7]);
    const size_t n = (size_t)s * (size_t)nkv * (size_t)d;
    enum { COPIES = 8 };
    uint16_t *k[COPIES], *v[COPIES];
    for (int c = 0; c < COPIES; ++c) {
        k[c] = aligned_alloc(4096, n * 2), v[c] = aligned_alloc(4096, n * 2);
        if (!k[c] || !v[c]) return 1;
        memset(k[c], c + 1, n * 2), memset(v[c], c + 2, n * 2);
    }
#define OFF(h, p) (bsnd ? ((size_t)(p) * (size_t)nkv + (size_t)(h)) * (size_t)d : ((size_t)(h) * (size_t)s + (size_t)(p)) * (size_t)d)
    double best = 1e30;
    unsigned sum = 0;
    for (int it = 0; it < 2 * COPIES; ++it) {
        const uint16_t *kc = k[it % COPIES], *vc = v[it % COPIES];
        __m512i acc = _mm512_setzero_si512();
        const double t0 = now();
        for (int h = 0; h < nkv; ++h) {
            if (order == 0) {
                for (int p = 0; p < s; ++p) {
                    if (dist > 0 && p + dist < s) prefetch_slice(kc + OFF(h, p + dist), d), prefetch_slice(vc + OFF(h, p + dist), d);
                    for (int x = 0; x < d; x += 32)
                        acc = _mm512_add_epi16(acc, _mm512_add_epi16(_mm512_loadu_si512(kc + OFF(h, p) + x),
                                                                     _mm512_loadu_si512(vc + OFF(h, p) + x)));
                }
                continue;
            }
            for (int c = 0; c < s; c += chunk) {
                const int end = c + chunk < s ? c + chunk : s;
                for (int p = c; p < end; ++p) {
                    if (dist > 0 && p + dist < s) prefetch_slice(kc + OFF(h, p + dist), d);
                    if (dist > 0) prefetch_slice(vc + OFF(h, p), d);
                    for (int x = 0; x < d; x += 32) acc = _mm512_add_epi16(acc, _mm512_loadu_si512(kc + OFF(h, p) + x));
                }
                for (int p = c; p < end; ++p)
                    for (int x = 0; x < d; x += 32) acc = _mm512_add_epi16(acc, _mm512_loadu_si512(vc + OFF(h, p) + x));
            }
        }
        const double t = now() - t0;
        uint16_t out[32];
        _mm512_storeu_si512(out, acc);
        sum += out[0];
        if (it >= COPIES && t < best) best = t;
    }
    printf("S=%d N_kv=%d D=%d dist=%d %s order=%d chunk=%d: %.0f us, %.1f GB/s (%u)\n", s, nkv, d, dist,
           bsnd ? "BSND one head" : "BNSD", order, chunk, best * 1e6, 4.0 * (double)n / best / 1e9, sum & 1u);
    return 0;
}
