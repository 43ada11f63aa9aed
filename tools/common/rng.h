/* A small seeded generator (splitmix64) for reproducible test inputs. */
#ifndef IFA_TOOLS_RNG_H
#define IFA_TOOLS_RNG_H

#include <stdint.h>

typedef struct ifa_rng {
    uint64_t state;
} ifa_rng;

/* Mixes salt into every later ifa_rng_seed (0, the default: seeds are used as given). The test suites set it
 * from IFA_TEST_SEED to draw other inputs than the committed seeds; the tools never set it, so a case's
 * "random": {"seed": N} stays reproducible. Set it before any thread draws. */
void ifa_rng_set_salt(uint64_t salt);
/* Seeds the generator; the same seed (and salt) gives the same sequence on every machine. */
void ifa_rng_seed(ifa_rng *r, uint64_t seed);
/* Moves the generator n draws ahead, as n calls of ifa_rng_next would (splitmix64's state is a counter): a
 * range of a long sequence can be drawn on its own, with the same values. */
void ifa_rng_advance(ifa_rng *r, uint64_t n);
/* Next 64 random bits. */
uint64_t ifa_rng_next(ifa_rng *r);
/* Uniform double in [lo, hi). */
double ifa_rng_uniform(ifa_rng *r, double lo, double hi);
/* Uniform integer in [lo, hi] (hi >= lo). */
int64_t ifa_rng_int(ifa_rng *r, int64_t lo, int64_t hi);
/* A uniform random permutation of 0 .. n-1 (Fisher-Yates, n - 1 draws of ifa_rng_int); malloc'd, NULL when out
 * of memory. A shuffled block table is a pool's permutation. */
int64_t *ifa_rng_permutation(ifa_rng *r, int64_t n);

#endif
