/* ifa-bench's --variant: configurations of one shape compared in alternating rounds; the tools' sort and median
 * of times. */
#ifndef IFA_TOOLS_BENCH_VARIANTS_H
#define IFA_TOOLS_BENCH_VARIANTS_H

#include <stddef.h>
#include <stdint.h>

#define IFA_BENCH_MAX_VARIANTS 8

typedef struct ifa_bench_variant {
    char layout[8];   /* "BSH", "BSND" or "BNSD"; "" keeps --layout */
    char tuning[240]; /* IFA_TUNING entries added after the environment's; "" adds none */
    char kernels[256]; /* a directory of kernel sources (IFA_KERNEL_DIR) for this variant's builds; "" keeps
                          the environment's (or the embedded ones) */
} ifa_bench_variant;

/* Parses a --variant SPEC: an optional layout and colon, then IFA_TUNING entries ("BSND:prefetch_rows=4",
 * "BNSD:", "chunk_rows=32", "" or "default" for the tuning row as it is), then optionally, last,
 * "kernels=DIR" (the rest of SPEC is the directory: a kernel change against the sources before it, timed in
 * the same process and rounds). Every other entry must name a field of the tuning row with a value in its
 * range. Returns 0, or -1 with the rule broken in err. */
int ifa_bench_variant_parse(const char *spec, ifa_bench_variant *v, char *err, size_t err_size);

/* Sets IFA_TUNING to base (the environment's IFA_TUNING when the tool started; NULL if none) followed by v's
 * entries, so that v's entries win; unsets it when both are empty. Returns 0, or -1 when the environment
 * cannot be set. */
int ifa_bench_variant_apply(const char *base, const ifa_bench_variant *v);

/* Sorts v[0..n) ascending (the tools' times: ifa-run's runs, ifa-decode's steps). */
void ifa_bench_sort(double *v, int64_t n);

/* The median of v[0..n) (the mean of the middle two when n is even; NaN for n < 1), sorting v in place: ifa-bench's
 * times, a run's and a variant's rounds alike. */
double ifa_bench_median(double *v, int n);

/* One variant's figures over the rounds: the median, lowest and highest of its rounds' times, and against
 * variant 0 run in the same rounds, the median of the per-round ratios (its time / variant 0's) and the
 * rounds in which it was faster. */
typedef struct ifa_bench_variant_stats {
    double median_us, low_us, high_us, vs_first;
    int wins;
} ifa_bench_variant_stats;

/* The median of variant i's column of v (rounds x nv figures, round-major; rounds in [1, 64]): a variant's
 * tail times over the rounds. */
double ifa_bench_column_median(const double *v, int rounds, int nv, int i);

/* The statistics of variant i from us (rounds x nv times, round-major); rounds in [1, 64], i in [0, nv). */
void ifa_bench_variant_stats_of(const double *us, int rounds, int nv, int i, ifa_bench_variant_stats *s);

#endif
