/* The tools' strict option values (args.h). */
#include "common/args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a whole decimal integer: strtoll would take leading spaces, a '+' and stop at junk */
static int whole_int(const char *val, long long *out) {
    if (!val) return -1;
    const char *p = val + (*val == '-');
    if (*p < '0' || *p > '9') return -1;
    for (const char *c = p; *c; ++c)
        if (*c < '0' || *c > '9') return -1;
    errno = 0;
    const long long v = strtoll(val, NULL, 10);
    if (errno == ERANGE) return -1;
    *out = v;
    return 0;
}

static void bounds_text(char *buf, size_t size, long long lo, long long hi) {
    if (hi == IFA_ARG_NO_MAX)
        snprintf(buf, size, ">= %lld", lo);
    else
        snprintf(buf, size, "in [%lld, %lld]", lo, hi);
}

int ifa_arg_int(const char *tool, const char *opt, const char *val, long long lo, long long hi, long long *out) {
    long long v;
    if (whole_int(val, &v) == 0 && v >= lo && v <= hi) {
        *out = v;
        return 0;
    }
    char rule[64];
    bounds_text(rule, sizeof rule, lo, hi);
    fprintf(stderr, "%s: %s %s: want an integer %s\n", tool, opt, val ? val : "(missing)", rule);
    return -1;
}

int ifa_arg_int32(const char *tool, const char *opt, const char *val, int lo, int hi, int *out) {
    long long v;
    if (ifa_arg_int(tool, opt, val, lo, hi, &v) != 0) return -1;
    *out = (int)v;
    return 0;
}

int ifa_arg_int64(const char *tool, const char *opt, const char *val, long long lo, long long hi, int64_t *out) {
    long long v;
    if (ifa_arg_int(tool, opt, val, lo, hi, &v) != 0) return -1;
    *out = v;
    return 0;
}

int ifa_arg_u64(const char *tool, const char *opt, const char *val, unsigned long long *out) {
    int ok = val && *val;
    for (const char *c = val; ok && *c; ++c) ok = *c >= '0' && *c <= '9';
    if (ok) {
        errno = 0;
        const unsigned long long v = strtoull(val, NULL, 10);
        if (errno != ERANGE) {
            *out = v;
            return 0;
        }
    }
    fprintf(stderr, "%s: %s %s: want an unsigned integer below 2^64\n", tool, opt, val ? val : "(missing)");
    return -1;
}

int ifa_arg_real(const char *tool, const char *opt, const char *val, double lo, double hi, double *out) {
    if (val && *val) {
        char *end;
        errno = 0;
        const double v = strtod(val, &end);
        if (*end == '\0' && errno != ERANGE && isfinite(v) && v >= lo && v <= hi) {
            *out = v;
            return 0;
        }
    }
    fprintf(stderr, "%s: %s %s: want a number in [%g, %g]\n", tool, opt, val ? val : "(missing)", lo, hi);
    return -1;
}

int ifa_arg_dtype(const char *tool, const char *opt, const char *val, ifa_dtype *out) {
    if (val && ifa_dtype_from_name(val, out) == 0) return 0;
    fprintf(stderr, "%s: %s %s: want a dtype (", tool, opt, val ? val : "(missing)");
    for (int i = 0; i < IFA_DTYPE_COUNT_; ++i) fprintf(stderr, "%s%s", i ? ", " : "", ifa_dtype_name((ifa_dtype)i));
    fprintf(stderr, ")\n");
    return -1;
}

int ifa_arg_choice(const char *tool, const char *opt, const char *val, const char *const *names, int n, int *out) {
    for (int i = 0; val && i < n; ++i) {
        if (strcmp(val, names[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    fprintf(stderr, "%s: %s %s: want one of ", tool, opt, val ? val : "(missing)");
    for (int i = 0; i < n; ++i) fprintf(stderr, "%s%s", i ? ", " : "", names[i]);
    fprintf(stderr, "\n");
    return -1;
}

int ifa_arg_int_list(const char *tool, const char *opt, const char *val, const char *what, int n, long long lo,
                     long long *out) {
    long long v[16];
    int k = 0, ok = val != NULL && n > 0 && n <= 16;
    for (const char *p = val; ok && k < n; ++k) {
        char item[24];
        size_t len = 0;
        while (p[len] && p[len] != ',') ++len;
        ok = len > 0 && len < sizeof item;
        if (!ok) break;
        for (size_t j = 0; j < len; ++j) item[j] = p[j];
        item[len] = '\0';
        ok = whole_int(item, &v[k]) == 0 && v[k] >= lo;
        /* a comma after every item but the last, nothing after the last */
        p += len;
        if (ok) ok = k + 1 < n ? *p == ',' : *p == '\0';
        if (*p == ',') ++p;
    }
    if (ok && k == n) {
        for (int i = 0; i < n; ++i) out[i] = v[i];
        return 0;
    }
    fprintf(stderr, "%s: %s %s: want %s: %d integers >= %lld, separated by commas\n", tool, opt,
            val ? val : "(missing)", what, n, lo);
    return -1;
}

int ifa_arg_help(int argc, char **argv) {
    for (int i = 1; i < argc; ++i)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
    return 0;
}

void ifa_arg_unknown(const char *tool, const char *arg) {
    fprintf(stderr, "%s: %s: not an option of %s, or its value is missing\n", tool, arg, tool);
}
