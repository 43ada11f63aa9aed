/* Host-side work split over the machine's cores, for the tools' large fills and the float64 reference. */
#ifndef IFA_TOOLS_PARALLEL_H
#define IFA_TOOLS_PARALLEL_H

#include <stdint.h>

/* Work on items [lo, hi) of a range; ctx is the caller's. Called from several threads at once on disjoint ranges,
 * so it may write only what those items own. */
typedef void (*ifa_parallel_fn)(void *ctx, int64_t lo, int64_t hi);

/* Calls fn over [0, n) in contiguous ranges, one per thread, each at least `grain` items (a range boundary is a
 * multiple of `grain`, so items packed below a byte stay in one range when grain is even), on at most
 * ifa_parallel_threads() threads; the calling thread takes the first range. Blocks until every range is done.
 * Where a thread cannot be started its range runs on the caller, so the work is always done; the result must not
 * depend on how [0, n) was cut (each item's work independent of the others'). */
void ifa_parallel_for(int64_t n, int64_t grain, ifa_parallel_fn fn, void *ctx);

/* The threads ifa_parallel_for may use: the count ifa_parallel_set_threads gave, else IFA_HOST_THREADS when set
 * to 1 .. 256, else the online cores (at most 64; both read once per process). */
int ifa_parallel_threads(void);

/* Makes ifa_parallel_for use t threads (1 .. 256; 0: the environment's or the cores' count again), so that a
 * test can show a result does not depend on the count. */
void ifa_parallel_set_threads(int t);

#endif
