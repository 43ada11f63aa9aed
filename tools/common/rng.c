#include "common/rng.h"

#include <stdlib.h>

static uint64_t salt;

void ifa_rng_set_salt(uint64_t s) { salt = s; }

void ifa_rng_seed(ifa_rng *r, uint64_t seed) {
    /* the salt moves every seed to another stream (an odd multiplier keeps distinct salts distinct) */
    seed ^= salt * 0x100000001b3ull;
    r->state = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
}

void ifa_rng_advance(ifa_rng *r, uint64_t n) { r->state += n * 0x9e3779b97f4a7c15ull; }

uint64_t ifa_rng_next(ifa_rng *r) {
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double ifa_rng_uniform(ifa_rng *r, double lo, double hi) {
    return lo + (hi - lo) * ((double)(ifa_rng_next(r) >> 11) * (1.0 / 9007199254740992.0));
}

int64_t ifa_rng_int(ifa_rng *r, int64_t lo, int64_t hi) {
    uint64_t span = (uint64_t)(hi - lo) + 1;
    return span == 0 ? (int64_t)ifa_rng_next(r) : lo + (int64_t)(ifa_rng_next(r) % span);
}

int64_t *ifa_rng_permutation(ifa_rng *r, int64_t n) {
    int64_t *perm = malloc((size_t)(n > 0 ? n : 1) * sizeof *perm);
    if (!perm) return NULL;
    for (int64_t i = 0; i < n; ++i) perm[i] = i;
    for (int64_t i = n - 1; i > 0; --i) {
        const int64_t j = ifa_rng_int(r, 0, i), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    return perm;
}
