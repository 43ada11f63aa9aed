#define _POSIX_C_SOURCE 200809L /* setenv */
#include "common/bench_variants.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiling/tuning_table.h"

int ifa_bench_variant_parse(const char *spec, ifa_bench_variant *v, char *err, size_t err_size) {
    memset(v, 0, sizeof *v);
    static const char *const layouts[] = {"BSH", "BSND", "BNSD"};
    const char *colon = strchr(spec, ':');
    if (colon) {
        size_t i = 0, n = (size_t)(colon - spec);
        while (i < 3 && !(n == strlen(layouts[i]) && strncmp(spec, layouts[i], n) == 0)) ++i;
        if (i == 3) {
            snprintf(err, err_size, "variant \"%s\": the part before ':' must be BSH, BSND or BNSD", spec);
            return -1;
        }
        snprintf(v->layout, sizeof v->layout, "%s", layouts[i]);
        spec = colon + 1;
    }
    if (strcmp(spec, "default") == 0) spec = "";
    /* kernels=DIR closes the spec (a directory's name may hold commas); the tuning entries are what precedes it */
    const char *kdir = strncmp(spec, "kernels=", 8) == 0 ? spec : strstr(spec, ",kernels=");
    const size_t n = kdir ? (size_t)(kdir - spec) : strlen(spec);
    if (n >= sizeof v->tuning) {
        snprintf(err, err_size, "variant \"%.40s...\": tuning entries longer than %zu characters", spec,
                 sizeof v->tuning - 1);
        return -1;
    }
    if (kdir) {
        const char *dir = strchr(kdir, '=') + 1;
        if (!*dir || strlen(dir) >= sizeof v->kernels) {
            snprintf(err, err_size, "variant \"%.60s\": kernels= needs a directory of fewer than %zu characters", spec,
                     sizeof v->kernels);
            return -1;
        }
        snprintf(v->kernels, sizeof v->kernels, "%s", dir);
    }
    char entries[sizeof v->tuning];
    memcpy(entries, spec, n);
    entries[n] = '\0';
    spec = entries;
    /* checked on a scratch row: IFA_TUNING itself skips a bad entry silently, which would compare a
     * configuration with itself */
    ifa_tuning scratch = ifa__tuning_for(0);
    char why[200] = "";
    if (ifa__tuning_apply(&scratch, spec, why, sizeof why) != 0) {
        snprintf(err, err_size, "variant \"%s\": %s", spec, why);
        return -1;
    }
    snprintf(v->tuning, sizeof v->tuning, "%s", spec);
    return 0;
}

int ifa_bench_variant_apply(const char *base, const ifa_bench_variant *v) {
    char env[1024];
    const int has_base = base && *base, has_own = v->tuning[0] != 0;
    if (!has_base && !has_own) return unsetenv("IFA_TUNING") == 0 ? 0 : -1;
    const int n = snprintf(env, sizeof env, "%s%s%s", has_base ? base : "", has_base && has_own ? "," : "", v->tuning);
    if (n < 0 || (size_t)n >= sizeof env) return -1;
    return setenv("IFA_TUNING", env, 1) == 0 ? 0 : -1;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void ifa_bench_sort(double *v, int64_t n) {
    if (n > 1) qsort(v, (size_t)n, sizeof *v, cmp_double);
}

double ifa_bench_median(double *v, int n) {
    if (n < 1) return NAN; /* no rounds: no median (and no read before v) */
    ifa_bench_sort(v, n);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double ifa_bench_column_median(const double *v, int rounds, int nv, int i) {
    double col[64];
    for (int r = 0; r < rounds; ++r) col[r] = v[r * nv + i];
    return ifa_bench_median(col, rounds);
}

void ifa_bench_variant_stats_of(const double *us, int rounds, int nv, int i, ifa_bench_variant_stats *s) {
    double own[64], ratio[64];
    s->wins = 0;
    for (int r = 0; r < rounds; ++r) {
        own[r] = us[r * nv + i];
        ratio[r] = own[r] / us[r * nv];
        s->wins += own[r] < us[r * nv];
    }
    s->vs_first = ifa_bench_median(ratio, rounds);
    s->median_us = ifa_bench_median(own, rounds);
    s->low_us = own[0], s->high_us = own[rounds - 1];
}
