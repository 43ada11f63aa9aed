#include "common/json_strict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_name(const void *a, const void *b) {
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* The first key that object j (at path) or an object inside it holds twice: 0, or -1 with the message (1 with no
 * memory for the check). */
static int check_keys(const cJSON *j, const char *path, char *err, size_t err_size) {
    if (!cJSON_IsObject(j) && !cJSON_IsArray(j)) return 0;
    size_t n = 0;
    for (const cJSON *c = j->child; c; c = c->next) ++n;
    if (cJSON_IsObject(j) && n > 1) {
        const cJSON **keys = malloc(n * sizeof *keys);
        if (!keys) {
            snprintf(err, err_size, "out of memory checking the keys of %s", path);
            return -1;
        }
        size_t i = 0;
        for (const cJSON *c = j->child; c; c = c->next) keys[i++] = c;
        qsort(keys, n, sizeof *keys, by_name);
        for (i = 1; i < n && strcmp(keys[i - 1]->string, keys[i]->string) != 0; ++i) {
        }
        if (i < n) {
            snprintf(err, err_size, "%s has the key \"%.64s\" twice", path, keys[i]->string);
            free(keys);
            return -1;
        }
        free(keys);
    }
    size_t k = 0;
    for (const cJSON *c = j->child; c; c = c->next, ++k) {
        char sub[256];
        if (cJSON_IsObject(j))
            snprintf(sub, sizeof sub, "%s.%.64s", path, c->string);
        else
            snprintf(sub, sizeof sub, "%s[%zu]", path, k);
        if (check_keys(c, sub, err, err_size) != 0) return -1;
    }
    return 0;
}

const char *ifa_json_nearest(const char *s, const char *const *names, size_t n) {
    const size_t ls = strlen(s);
    const char *best = NULL;
    size_t best_d = ls / 2 + 1;
    for (size_t k = 0; k < n; ++k) {
        /* Levenshtein distance with one row of the table (names are short; s is cut at 64 characters) */
        const size_t la = ls < 64 ? ls : 64, lb = strlen(names[k]) < 64 ? strlen(names[k]) : 64;
        size_t row[65];
        for (size_t j = 0; j <= lb; ++j) row[j] = j;
        for (size_t i = 1; i <= la; ++i) {
            size_t diag = row[0];
            row[0] = i;
            for (size_t j = 1; j <= lb; ++j) {
                const size_t up = row[j];
                const size_t sub = diag + (s[i - 1] != names[k][j - 1]);
                row[j] = sub < up + 1 ? sub : up + 1;
                if (row[j - 1] + 1 < row[j]) row[j] = row[j - 1] + 1;
                diag = up;
            }
        }
        if (row[lb] < best_d) best_d = row[lb], best = names[k];
    }
    return best;
}

cJSON *ifa_json_parse_case(const char *text, const char *const *top_keys, size_t ntop, char *err, size_t err_size) {
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 0);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        snprintf(err, err_size, "case is not valid JSON (at byte %lld, near: %.40s)",
                 at ? (long long)(at - text) : -1LL, at ? at : "?");
        return NULL;
    }
    while (end && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')) ++end;
    if (end && *end) {
        snprintf(err, err_size, "text after the case's object at byte %lld (near: %.40s); one case per file (a .jsonl "
                 "file holds one per line)", (long long)(end - text), end);
        cJSON_Delete(root);
        return NULL;
    }
    if (!cJSON_IsObject(root)) {
        snprintf(err, err_size, "a case must be a JSON object");
        cJSON_Delete(root);
        return NULL;
    }
    if (check_keys(root, "case", err, err_size) != 0) {
        cJSON_Delete(root);
        return NULL;
    }
    for (const cJSON *c = root->child; top_keys && c; c = c->next) {
        size_t i = 0;
        while (i < ntop && strcmp(top_keys[i], c->string) != 0) ++i;
        if (i < ntop) continue;
        const char *near = ifa_json_nearest(c->string, top_keys, ntop);
        int w = snprintf(err, err_size, "the case has the unknown key \"%.64s\"", c->string);
        if (near && w >= 0 && (size_t)w < err_size) snprintf(err + w, err_size - (size_t)w, " (did you mean \"%s\"?)", near);
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}
