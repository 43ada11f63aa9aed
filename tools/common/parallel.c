#define _POSIX_C_SOURCE 200809L /* sysconf */
#include "common/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct job {
    ifa_parallel_fn fn;
    void *ctx;
    int64_t lo, hi;
} job;

static void *run_job(void *p) {
    const job *j = p;
    j->fn(j->ctx, j->lo, j->hi);
    return NULL;
}

static int threads = 1;
static atomic_int forced; /* ifa_parallel_set_threads's count, 0 when none */
static pthread_once_t threads_once = PTHREAD_ONCE_INIT;

static void read_threads(void) {
    int t = 0;
    const char *env = getenv("IFA_HOST_THREADS");
    if (env && *env) {
        char *end = NULL;
        const long v = strtol(env, &end, 10);
        if (end && *end == '\0' && v >= 1 && v <= 256) t = (int)v;
    }
    if (t == 0) {
        const long cores = sysconf(_SC_NPROCESSORS_ONLN);
        t = cores < 1 ? 1 : cores > 64 ? 64 : (int)cores;
    }
    threads = t;
}

int ifa_parallel_threads(void) {
    const int f = atomic_load(&forced);
    if (f > 0) return f;
    /* the tests' threads may ask at once */
    if (pthread_once(&threads_once, read_threads) != 0) return 1;
    return threads;
}

void ifa_parallel_set_threads(int t) { atomic_store(&forced, t >= 0 && t <= 256 ? t : 0); }

void ifa_parallel_for(int64_t n, int64_t grain, ifa_parallel_fn fn, void *ctx) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    const int64_t blocks = (n + grain - 1) / grain;
    int64_t t = ifa_parallel_threads();
    if (t > blocks) t = blocks;
    if (t <= 1) {
        fn(ctx, 0, n);
        return;
    }
    job jobs[256];
    pthread_t ids[256];
    int started[256];
    for (int64_t i = 0; i < t; ++i) {
        /* thread i takes blocks [i·blocks/t, (i+1)·blocks/t): counts differ by at most one block */
        jobs[i] = (job){fn, ctx, i * blocks / t * grain, (i + 1) * blocks / t * grain};
        if (jobs[i].hi > n) jobs[i].hi = n;
    }
    for (int64_t i = 1; i < t; ++i) started[i] = pthread_create(&ids[i], NULL, run_job, &jobs[i]) == 0;
    run_job(&jobs[0]);
    for (int64_t i = 1; i < t; ++i) {
        if (started[i])
            pthread_join(ids[i], NULL);
        else
            run_job(&jobs[i]);
    }
}
