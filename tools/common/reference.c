#include "common/reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Flat index of element (b, s, n, d) of a (B, S, N·D) / (B, S, N, D) / (B, N, S, D) tensor. */
static int64_t at(int bnsd, int64_t S, int64_t N, int64_t D, int64_t b, int64_t s, int64_t n, int64_t d) {
    return bnsd ? ((b * N + n) * S + s) * D + d : ((b * S + s) * N + n) * D + d;
}

int ifa_reference_ifa(const ifa_host_tensor *q, const ifa_host_tensor *k, const ifa_host_tensor *v, const char *layout,
                      int64_t N, int64_t Nkv, double scale, const int64_t *lens, int64_t nlens, double *out,
                      double *lse, double *score_bound) {
    if (Nkv == 0) Nkv = N;
    const int bnsd = strcmp(layout, "BNSD") == 0;
    const int64_t B = q->shape[0];
    const int64_t D = ifa_host_tensor_numel(q) / (B * N);
    const int64_t S = bnsd ? k->shape[2] : k->shape[1];
    if (N % Nkv || ifa_host_tensor_numel(k) != B * S * Nkv * D || ifa_host_tensor_numel(v) != B * S * Nkv * D) return -1;
    const int64_t G = N / Nkv;
    double *s = malloc((size_t)(S ? S : 1) * sizeof *s);
    if (!s) return -1;
    for (int64_t b = 0; b < B; ++b) {
        const int64_t len = lens == NULL ? S : nlens == 1 ? lens[0] : lens[b];
        for (int64_t h = 0; h < N; ++h) {
            const int64_t kh = h / G;
            double m = -INFINITY, bound = 0;
            for (int64_t j = 0; j < len; ++j) {
                double dot = 0, mag = 0;
                for (int64_t d = 0; d < D; ++d) {
                    double x = ifa_host_get(q, at(bnsd, 1, N, D, b, 0, h, d)) * ifa_host_get(k, at(bnsd, S, Nkv, D, b, j, kh, d));
                    dot += x;
                    mag += fabs(x);
                }
                s[j] = dot * scale;
                if (s[j] > m) m = s[j];
                if (mag * fabs(scale) > bound) bound = mag * fabs(scale);
            }
            double l = 0;
            for (int64_t j = 0; j < len; ++j) l += exp(s[j] - m);
            double *o = out + (b * N + h) * D;
            for (int64_t d = 0; d < D; ++d) {
                double acc = 0;
                for (int64_t j = 0; j < len; ++j) acc += exp(s[j] - m) * ifa_host_get(v, at(bnsd, S, Nkv, D, b, j, kh, d));
                o[d] = len > 0 ? acc / l : 0.0;
            }
            if (lse) lse[b * N + h] = len > 0 ? m + log(l) : -INFINITY;
            if (score_bound) score_bound[b * N + h] = bound;
        }
    }
    free(s);
    return 0;
}
