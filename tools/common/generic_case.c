#include "common/generic_case.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/case.h"
#include "common/json_strict.h"

#define FAIL(...)                                                                                              \
    do {                                                                                                       \
        snprintf(err, err_size, __VA_ARGS__);                                                                  \
        goto done;                                                                                             \
    } while (0)

static int is_int(const cJSON *v) {
    return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) <= 9e15;
}

/* attrs.<name> or inputs.<name> as an int list: integers, or rows of integers of one length (flattened). */
static int64_t *int_list(const cJSON *j, const char *name, int64_t *len, char *err, size_t err_size) {
    int64_t *v = NULL;
    const int n = cJSON_GetArraySize(j);
    const cJSON *first = cJSON_GetArrayItem(j, 0);
    const int rows = cJSON_IsArray(first) ? n : 1, cols = cJSON_IsArray(first) ? cJSON_GetArraySize(first) : n;
    if (!cJSON_IsArray(j) || n < 1 || cols < 1) FAIL("%s must be a non-empty array of integers (or of rows)", name);
    if (!(v = malloc((size_t)rows * (size_t)cols * sizeof *v))) FAIL(IFA_CASE_NO_MEMORY "%s of %d x %d", name, rows, cols);
    /* along the lists (cJSON_GetArrayItem walks from the head each time: quadratic) */
    const cJSON *row = cJSON_IsArray(first) ? first : j;
    for (int r = 0; r < rows; ++r, row = row->next) {
        if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != cols) FAIL("%s[%d] must be a row of %d integers", name, r, cols);
        const cJSON *x = row->child;
        for (int k = 0; k < cols; ++k, x = x->next) {
            if (!is_int(x)) FAIL("%s: element %d of row %d must be an integer", name, k, r);
            v[(int64_t)r * cols + k] = (int64_t)x->valuedouble;
        }
    }
    *len = (int64_t)rows * cols;
    return v;
done:
    free(v);
    return NULL;
}

int ifa_generic_case_parse(const char *json, const char *base, ifa_generic_case *c, char *err, size_t err_size) {
    memset(c, 0, sizeof *c);
    int rc = -1;
    static const char *const top[] = {"op", "attrs", "inputs"};
    cJSON *root = ifa_json_parse_case(json, top, sizeof top / sizeof *top, err, err_size);
    if (!root) return -1;
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(root, "op");
    const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(root, "attrs");
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(root, "inputs");
    if (!cJSON_IsString(op) || ifa_op_find(op->valuestring, &c->def) != IFA_STATUS_OK) FAIL("\"op\" names no ifa op");
    if (!cJSON_IsObject(inputs) || (attrs && !cJSON_IsObject(attrs)))
        FAIL("\"inputs\" must be an object (and \"attrs\", if given)");
    const ifa_op_def *d = c->def;
    if (d->num_inputs > IFA_GENERIC_MAX || d->num_attrs > IFA_GENERIC_MAX) FAIL("%s has too many inputs", d->name);
    const cJSON *it;
    /* every field must be an input (a tensor), or an attribute given in attrs or, for host arrays, inputs */
    cJSON_ArrayForEach(it, inputs) {
        int known = 0;
        for (int i = 0; i < d->num_inputs; ++i) known |= strcmp(d->inputs[i].name, it->string) == 0;
        for (int i = 0; i < d->num_attrs; ++i)
            known |= d->attrs[i].type == IFA_ATTR_INT_LIST && strcmp(d->attrs[i].name, it->string) == 0;
        if (!known) FAIL("inputs.%.64s is not an input of %s", it->string, d->name);
    }
    cJSON_ArrayForEach(it, attrs) {
        int known = 0;
        for (int i = 0; i < d->num_attrs; ++i) known |= strcmp(d->attrs[i].name, it->string) == 0;
        if (!known) FAIL("attrs.%.64s is not an attribute of %s", it->string, d->name);
    }
    for (int i = 0; i < d->num_inputs; ++i) {
        const cJSON *j = cJSON_GetObjectItemCaseSensitive(inputs, d->inputs[i].name);
        if (!j && d->inputs[i].required) FAIL("inputs.%s is required", d->inputs[i].name);
        if (j && ifa_case_load_tensor(j, d->inputs[i].name, base, &c->inputs[i], err, err_size)) goto done;
    }
    for (int i = 0; i < d->num_attrs; ++i) {
        const ifa_attr_def *ad = &d->attrs[i];
        const cJSON *j = attrs ? cJSON_GetObjectItemCaseSensitive(attrs, ad->name) : NULL;
        if (!j && ad->type == IFA_ATTR_INT_LIST) j = cJSON_GetObjectItemCaseSensitive(inputs, ad->name);
        if (!j) {
            if (ad->required) FAIL("attrs.%s is required", ad->name);
            continue;
        }
        ifa_named_attr *a = &c->attrs[c->num_attrs];
        a->name = ad->name, a->type = ad->type;
        switch (ad->type) {
        case IFA_ATTR_INT:
            if (!is_int(j)) FAIL("attrs.%s must be an integer", ad->name);
            a->i = (int64_t)j->valuedouble;
            break;
        case IFA_ATTR_FLOAT:
            if (!cJSON_IsNumber(j)) FAIL("attrs.%s must be a number", ad->name);
            a->f = j->valuedouble;
            break;
        case IFA_ATTR_BOOL:
            if (!cJSON_IsBool(j)) FAIL("attrs.%s must be true or false", ad->name);
            a->i = cJSON_IsTrue(j);
            break;
        case IFA_ATTR_STRING: {
            if (!cJSON_IsString(j)) FAIL("attrs.%s must be a string", ad->name);
            char *s = malloc(strlen(j->valuestring) + 1);
            if (!s) FAIL(IFA_CASE_NO_MEMORY "attrs.%s", ad->name);
            strcpy(s, j->valuestring);
            a->s = s, c->owned[c->num_attrs] = s;
            break;
        }
        default: {
            int64_t *v = int_list(j, ad->name, &a->list_len, err, err_size);
            if (!v) goto done;
            a->list = v, c->owned[c->num_attrs] = v;
            /* a block table given as rows also says its columns */
            const cJSON *first = cJSON_GetArrayItem(j, 0);
            if (strcmp(ad->name, "block_table") == 0 && cJSON_IsArray(first) && c->num_attrs + 1 < IFA_GENERIC_MAX &&
                !(attrs && cJSON_GetObjectItemCaseSensitive(attrs, "block_table_cols"))) {
                c->num_attrs++;
                c->attrs[c->num_attrs] = (ifa_named_attr){.name = "block_table_cols", .type = IFA_ATTR_INT,
                                                          .i = cJSON_GetArraySize(first)};
            }
            break;
        }
        }
        c->num_attrs++;
    }
    rc = 0;
done:
    cJSON_Delete(root);
    if (rc != 0) ifa_generic_case_free(c);
    return rc;
}

void ifa_generic_case_free(ifa_generic_case *c) {
    for (int i = 0; i < IFA_GENERIC_MAX; ++i) {
        ifa_host_tensor_free(&c->inputs[i]);
        free(c->owned[i]);
    }
    memset(c, 0, sizeof *c);
}

const ifa_named_attr *ifa_generic_case_attr(const ifa_generic_case *c, const char *name) {
    for (int i = 0; i < c->num_attrs; ++i)
        if (strcmp(c->attrs[i].name, name) == 0) return &c->attrs[i];
    return NULL;
}

const ifa_host_tensor *ifa_generic_case_input(const ifa_generic_case *c, const char *name) {
    for (int i = 0; c->def && i < c->def->num_inputs; ++i)
        if (strcmp(c->def->inputs[i].name, name) == 0) return c->inputs[i].data ? &c->inputs[i] : NULL;
    return NULL;
}
