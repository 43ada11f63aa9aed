#include "common/bench_shapes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { COL_B, COL_N, COL_NKV, COL_D, COL_S, COL_US, COL_GQA, COL_TYPE, COL_COUNT };

/* Splits line at commas in place (at most max fields). */
static int split(char *line, char **f, int max) {
    int n = 0;
    for (char *p = line; n < max;) {
        f[n++] = p;
        char *c = strchr(p, ',');
        if (!c) break;
        *c = '\0';
        p = c + 1;
    }
    for (int i = 0; i < n; ++i) f[i][strcspn(f[i], "\r\n")] = '\0';
    return n;
}

static int column(const char *name) {
    static const struct {
        const char *name;
        int col;
    } names[] = {{"B", COL_B},      {"N", COL_N},   {"N_kv", COL_NKV},        {"nh_kv", COL_NKV},
                 {"D", COL_D},      {"S_kv", COL_S}, {"kv", COL_S},           {"us", COL_US},
                 {"us_per_run", COL_US}, {"gqa", COL_GQA}, {"type_KV", COL_TYPE}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (strcmp(name, names[i].name) == 0) return names[i].col;
    return -1;
}

int ifa_bench_shapes_device(const char *path, char *out, size_t size) {
    static const char tag[] = "# device:";
    FILE *f = fopen(path, "r");
    char line[1024];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        if (strncmp(line, tag, sizeof tag - 1) != 0) continue;
        const char *v = line + sizeof tag - 1;
        while (*v == ' ' || *v == '\t') ++v;
        size_t n = strcspn(v, "\r\n");
        while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t')) --n;
        snprintf(out, size, "%.*s", (int)n, v);
        found = 1;
    }
    if (f) fclose(f);
    return found;
}

int ifa_bench_shapes_load(const char *path, ifa_bench_shape **out, int *count, char *err, size_t err_size) {
    *out = NULL, *count = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, err_size, "%s: cannot open", path);
        return -1;
    }
    char line[1024];
    int map[64], ncols = 0, have_header = 0, lineno = 0, rc = 0;
    while (fgets(line, sizeof line, f)) {
        ++lineno;
        if (line[0] == '#' || line[0] == '\n' || line[0] == '\r') continue;
        char *fields[64];
        int n = split(line, fields, 64);
        if (!have_header) {
            int seen[COL_COUNT] = {0};
            for (int i = 0; i < n; ++i) {
                map[i] = column(fields[i]);
                if (map[i] >= 0) seen[map[i]] = 1;
            }
            ncols = n;
            have_header = 1;
            if (!seen[COL_D] || !seen[COL_S] || !seen[COL_NKV] || (!seen[COL_N] && !seen[COL_GQA])) {
                snprintf(err, err_size, "%s:%d: the header needs D, S_kv (or kv), N_kv (or nh_kv) and N (or gqa)", path,
                         lineno);
                rc = -1;
                break;
            }
            continue;
        }
        ifa_bench_shape s = {1, 0, 0, 0, 0, "f16", 0};
        int64_t gqa = 0;
        for (int i = 0; i < n && i < ncols; ++i) {
            char *end;
            const double v = strtod(fields[i], &end);
            const int num = end != fields[i];
            switch (map[i]) {
            case COL_B: s.b = (int64_t)v; break;
            case COL_N: s.n = (int64_t)v; break;
            case COL_NKV: s.nkv = (int64_t)v; break;
            case COL_D: s.d = (int64_t)v; break;
            case COL_S: s.s = (int64_t)v; break;
            case COL_US: s.us = num ? v : 0; break;
            case COL_GQA: gqa = (int64_t)v; break;
            case COL_TYPE: snprintf(s.kv_type, sizeof s.kv_type, "%s", fields[i]); break;
            default: break;
            }
        }
        if (s.n == 0) s.n = s.nkv * gqa;
        if (s.b < 1 || s.n < 1 || s.nkv < 1 || s.d < 1 || s.s < 1) {
            snprintf(err, err_size, "%s:%d: a size is missing or not positive", path, lineno);
            rc = -1;
            break;
        }
        ifa_bench_shape *grown = realloc(*out, sizeof **out * (size_t)(*count + 1));
        if (!grown) {
            snprintf(err, err_size, "out of memory");
            rc = -1;
            break;
        }
        *out = grown;
        (*out)[(*count)++] = s;
    }
    fclose(f);
    if (rc == 0 && *count == 0) {
        snprintf(err, err_size, "%s: no shapes", path);
        rc = -1;
    }
    if (rc != 0) {
        free(*out);
        *out = NULL, *count = 0;
    }
    return rc;
}

const ifa_bench_shape *ifa_bench_shapes_find(const ifa_bench_shape *list, int count, const ifa_bench_shape *s) {
    for (int i = 0; i < count; ++i) {
        const ifa_bench_shape *p = &list[i];
        if (p->b == s->b && p->n == s->n && p->nkv == s->nkv && p->d == s->d && p->s == s->s &&
            strcmp(p->kv_type, s->kv_type) == 0)
            return p;
    }
    return NULL;
}
