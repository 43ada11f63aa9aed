#define _POSIX_C_SOURCE 200809L /* open, fstat, fdopen */
#include "common/case.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_strict.h"
#include "common/npy.h"
#include "common/poison.h"
#include "common/rng.h"

#define FAIL(...)                             \
    do {                                      \
        snprintf(err, err_size, __VA_ARGS__); \
        return -1;                            \
    } while (0)

int ifa_case_no_memory(const char *err) { return strncmp(err, IFA_CASE_NO_MEMORY, strlen(IFA_CASE_NO_MEMORY)) == 0; }

int ifa_case_load_tensor(const cJSON *j, const char *name, const char *base, ifa_host_tensor *t, char *err, size_t err_size) {
    if (!j) FAIL("inputs.%s is missing", name);
    const char *file = cJSON_IsString(j) ? j->valuestring : NULL;
    const cJSON *dt = cJSON_IsObject(j) ? cJSON_GetObjectItemCaseSensitive(j, "dtype") : NULL;
    if (cJSON_IsObject(j) && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "file")))
        file = cJSON_GetObjectItemCaseSensitive(j, "file")->valuestring;
    if (file) {
        char path[4096];
        if (file[0] == '/' || !base || !*base)
            snprintf(path, sizeof path, "%s", file);
        else
            snprintf(path, sizeof path, "%s/%s", base, file);
        /* the dtypes NumPy lacks, whose files hold other NumPy dtypes (npy.h) */
        ifa_dtype marked = IFA_DTYPE_COUNT_;
        if (dt && (!cJSON_IsString(dt) || ifa_dtype_from_name(dt->valuestring, &marked) != 0 ||
                   (marked != IFA_DTYPE_BFLOAT16 && marked != IFA_DTYPE_INT4 && marked != IFA_DTYPE_FLOAT8_E4M3 &&
                    marked != IFA_DTYPE_FLOAT8_E5M2)))
            FAIL("inputs.%s: \"dtype\" beside a file may only be \"bfloat16\", \"int4\", \"float8_e4m3fn\" or "
                 "\"float8_e5m2\"", name);
        return ifa_npy_read(path, marked, t, err, err_size);
    }
    if (!cJSON_IsObject(j)) FAIL("inputs.%s must be a file name or an object", name);
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(j, "shape");
    const cJSON *rnd = cJSON_GetObjectItemCaseSensitive(j, "random");
    if (!cJSON_IsArray(shape)) FAIL("inputs.%s.shape must be an array of positive integers", name);
    if (!cJSON_IsString(dt)) FAIL("inputs.%s.dtype must be a string such as \"float16\"", name);
    ifa_dtype dtype;
    if (ifa_dtype_from_name(dt->valuestring, &dtype) != 0) FAIL("inputs.%s.dtype \"%.32s\" is not a dtype", name, dt->valuestring);
    int n = cJSON_GetArraySize(shape);
    if (n < 1 || n > IFA_MAX_DIMS) FAIL("inputs.%s.shape must have 1 to %d dimensions", name, IFA_MAX_DIMS);
    int64_t dims[IFA_MAX_DIMS];
    double numel = 1;
    const cJSON *d = shape->child;
    for (int i = 0; i < n; ++i, d = d->next) {
        if (!cJSON_IsNumber(d) || d->valuedouble < 1 || d->valuedouble > 1e12 || d->valuedouble != floor(d->valuedouble))
            FAIL("inputs.%s.shape[%d] must be a positive integer", name, i);
        dims[i] = (int64_t)d->valuedouble;
        numel *= d->valuedouble;
    }
    /* $IFA_CASE_MAX_ELEMENTS lowers the limit (the fuzz targets do, so a hostile case cannot ask for gigabytes) */
    const char *cap_env = getenv("IFA_CASE_MAX_ELEMENTS");
    const double cap = cap_env && atof(cap_env) >= 1 ? atof(cap_env) : 4e9;
    if (numel > cap) FAIL("inputs.%s has %.0f elements; generated tensors are limited to %.0f", name, numel, cap);
    if (!cJSON_IsObject(rnd)) FAIL("inputs.%s needs \"random\": {\"seed\": N} (or a file)", name);
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(rnd, "seed");
    const cJSON *lo = cJSON_GetObjectItemCaseSensitive(rnd, "low"), *hi = cJSON_GetObjectItemCaseSensitive(rnd, "high");
    if (!cJSON_IsNumber(seed) || seed->valuedouble < 0 || seed->valuedouble > 9e15 ||
        seed->valuedouble != floor(seed->valuedouble))
        FAIL("inputs.%s.random.seed must be an integer in [0, 9e15]", name);
    double low = cJSON_IsNumber(lo) ? lo->valuedouble : -1.0, high = cJSON_IsNumber(hi) ? hi->valuedouble : 1.0;
    if (!isfinite(low) || !isfinite(high) || low > high) FAIL("inputs.%s.random: need finite low <= high", name);
    /* "neg_inf": a fraction of the elements -inf (a float tensor: LSEs of rows that saw no key) */
    const cJSON *ninf = cJSON_GetObjectItemCaseSensitive(rnd, "neg_inf");
    if (ninf && (!cJSON_IsNumber(ninf) || !(ninf->valuedouble >= 0 && ninf->valuedouble <= 1)))
        FAIL("inputs.%s.random.neg_inf must be a fraction in [0, 1]", name);
    if (ninf && dtype != IFA_DTYPE_FLOAT32 && dtype != IFA_DTYPE_FLOAT16 && dtype != IFA_DTYPE_BFLOAT16)
        FAIL("inputs.%s.random.neg_inf needs a float32, float16 or bfloat16 tensor", name);
    if (ifa_host_tensor_alloc(t, dtype, n, dims) != 0) FAIL(IFA_CASE_NO_MEMORY "inputs.%s of %.0f elements", name, numel);
    ifa_host_fill_random(t, (uint64_t)seed->valuedouble, low, high);
    if (ninf && ninf->valuedouble > 0) {
        ifa_rng r;
        ifa_rng_seed(&r, (uint64_t)seed->valuedouble * 0x9E3779B97F4A7C15ull + 5);
        for (int64_t i = 0; i < ifa_host_tensor_numel(t); ++i)
            if (ifa_rng_uniform(&r, 0, 1) < ninf->valuedouble) ifa_host_set(t, i, -INFINITY);
    }
    return 0;
}

/* Reads the integer obj.name (obj is attrs or inputs, named `where` in messages); absent leaves *out. */
static int get_int_in(const cJSON *obj, const char *where, const char *name, int64_t *out, char *err, size_t err_size) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!j) return 0;
    if (!cJSON_IsNumber(j) || j->valuedouble != floor(j->valuedouble) || fabs(j->valuedouble) > 9e15)
        FAIL("%s.%s must be an integer", where, name);
    *out = (int64_t)j->valuedouble;
    return 0;
}

/* Reads the number attrs.name; absent leaves *out. */
static int get_number(const cJSON *attrs, const char *name, double *out, char *err, size_t err_size) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(attrs, name);
    if (!j) return 0;
    if (!cJSON_IsNumber(j)) FAIL("attrs.%s must be a number", name);
    *out = j->valuedouble;
    return 0;
}

/* Reads the string attrs.name into out (size bytes); absent leaves out. choices names the values for the
 * message (the op itself judges the value). */
static int get_string(const cJSON *attrs, const char *name, const char *choices, char *out, size_t size, char *err,
                      size_t err_size) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(attrs, name);
    if (!j) return 0;
    if (!cJSON_IsString(j) || strlen(j->valuestring) >= size) FAIL("attrs.%s must be %s", name, choices);
    strcpy(out, j->valuestring);
    return 0;
}

/* inputs.<name>, when present: a non-empty array of integers into a malloc'd *out of *count values. */
static int get_int_array(const cJSON *inputs, const char *name, int64_t **out, int64_t *count, char *err,
                         size_t err_size) {
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(inputs, name);
    if (!arr) return 0;
    const int n = cJSON_GetArraySize(arr);
    if (!cJSON_IsArray(arr) || n < 1) {
        snprintf(err, err_size, "inputs.%s must be a non-empty array of integers", name);
        return -1;
    }
    if (!(*out = malloc((size_t)n * sizeof **out))) {
        snprintf(err, err_size, IFA_CASE_NO_MEMORY "inputs.%s of %d values", name, n);
        return -1;
    }
    *count = n;
    /* along the list (cJSON_GetArrayItem walks from the head each time: 200,000 lengths took 95 s) */
    const cJSON *v = arr->child;
    for (int i = 0; i < n; ++i, v = v->next) {
        if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || fabs(v->valuedouble) > 9e15) {
            snprintf(err, err_size, "inputs.%s[%d] must be an integer", name, i);
            return -1;
        }
        (*out)[i] = (int64_t)v->valuedouble;
    }
    return 0;
}

static int get_int(const cJSON *attrs, const char *name, int64_t *out, char *err, size_t err_size) {
    return get_int_in(attrs, "attrs", name, out, err, err_size);
}

/* block_table: an array of equally long arrays of int32 ids, or an int32 (B, cols) tensor (.npy), one row per
 * batch of the (already loaded) query: the op reads B rows of the host array. */
static int load_block_table(const cJSON *j, const char *base, ifa_case *c, char *err, size_t err_size) {
    const int64_t batch = c->query.shape[0];
    if (!cJSON_IsArray(j)) {
        ifa_host_tensor t;
        if (ifa_case_load_tensor(j, "block_table", base, &t, err, err_size)) return -1;
        if (t.dtype != IFA_DTYPE_INT32 || t.ndim != 2) {
            ifa_host_tensor_free(&t);
            FAIL("inputs.block_table must be an int32 tensor of rank 2 (B, max_blocks_per_seq)");
        }
        if (t.shape[0] != batch) {
            ifa_host_tensor_free(&t);
            FAIL("inputs.block_table has %lld rows; it needs one per batch (B = %lld)", (long long)t.shape[0],
                 (long long)batch);
        }
        c->block_table = t.data; /* the tensor's storage becomes the case's */
        c->block_table_cols = t.shape[1];
        return 0;
    }
    const int rows = cJSON_GetArraySize(j);
    const cJSON *first = cJSON_GetArrayItem(j, 0);
    const int cols = cJSON_IsArray(first) ? cJSON_GetArraySize(first) : 0;
    if (rows < 1 || cols < 1 || (int64_t)rows * cols > (1 << 26))
        FAIL("inputs.block_table must be a non-empty array of non-empty arrays of block ids");
    if (rows != batch)
        FAIL("inputs.block_table has %d rows; it needs one per batch (B = %lld)", rows, (long long)batch);
    if (!(c->block_table = malloc((size_t)rows * (size_t)cols * sizeof *c->block_table)))
        FAIL(IFA_CASE_NO_MEMORY "inputs.block_table of %d x %d ids", rows, cols);
    c->block_table_cols = cols;
    const cJSON *row = j->child;
    for (int r = 0; r < rows; ++r, row = row->next) {
        if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != cols)
            FAIL("inputs.block_table[%d] must be an array of %d block ids, like row 0", r, cols);
        const cJSON *v = row->child;
        for (int k = 0; k < cols; ++k, v = v->next) {
            if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || fabs(v->valuedouble) > 2147483647.0)
                FAIL("inputs.block_table[%d][%d] must be an int32", r, k);
            c->block_table[(size_t)r * cols + k] = (int32_t)v->valuedouble;
        }
    }
    return 0;
}

int ifa_case_parse(const char *json, const char *base, ifa_case *c, char *err, size_t err_size) {
    ifa_case_init(c);
    static const char *const top[] = {"op", "attrs", "inputs", "poison_unread"};
    cJSON *root = ifa_json_parse_case(json, top, sizeof top / sizeof *top, err, err_size);
    if (!root) return -1;
    int rc = -1;
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(root, "op");
    const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(root, "attrs");
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(root, "inputs");
    static const char *const known_attrs[] = {"num_heads",        "scale_value", "input_layout", "num_key_value_heads",
                                              "softmax_lse_flag", "softcap",     "window",       "block_size",
                                              "antiquant_mode",   "rope_mode",   "rope_theta",   "rope_dim",
                                              "template_mode",    "value_head_dim", "key_antiquant_mode",
                                              "value_antiquant_mode", "rope_offset"};
    static const char *const known_inputs[] = {"query",          "key",       "value",           "actual_seq_lengths",
                                               "atten_mask",     "pse_shift", "kv_padding_size", "block_table",
                                               "antiquant_scale", "antiquant_offset", "quant_scale2", "quant_offset2",
                                               "key_shared_prefix", "value_shared_prefix", "actual_shared_prefix_len",
                                               "rope_positions", "rope_cos", "rope_sin", "sinks",
                                               "alibi_slopes", "actual_seq_lengths_q", "key_antiquant_scale",
                                               "key_antiquant_offset", "value_antiquant_scale", "value_antiquant_offset"};
    const cJSON *it;
    if (!cJSON_IsString(op) || strcmp(op->valuestring, "IncreFlashAttention") != 0) {
        snprintf(err, err_size, "\"op\" must be \"IncreFlashAttention\"");
        goto done;
    }
    if (!cJSON_IsObject(attrs) || !cJSON_IsObject(inputs)) {
        snprintf(err, err_size, "\"attrs\" and \"inputs\" must be objects");
        goto done;
    }
    cJSON_ArrayForEach(it, attrs) {
        size_t i = 0;
        while (i < sizeof known_attrs / sizeof *known_attrs && strcmp(known_attrs[i], it->string)) ++i;
        if (i == sizeof known_attrs / sizeof *known_attrs) {
            const char *near = ifa_json_nearest(it->string, known_attrs, i);
            snprintf(err, err_size, "attrs.%.64s is not an attribute of IncreFlashAttention%s%s%s", it->string,
                     near ? " (did you mean \"" : "", near ? near : "", near ? "\"?)" : "");
            goto done;
        }
    }
    cJSON_ArrayForEach(it, inputs) {
        size_t i = 0;
        while (i < sizeof known_inputs / sizeof *known_inputs && strcmp(known_inputs[i], it->string)) ++i;
        if (i == sizeof known_inputs / sizeof *known_inputs) {
            const char *near = ifa_json_nearest(it->string, known_inputs, i);
            snprintf(err, err_size, "inputs.%.64s is not an input of IncreFlashAttention%s%s%s", it->string,
                     near ? " (did you mean \"" : "", near ? near : "", near ? "\"?)" : "");
            goto done;
        }
    }
    if (get_int(attrs, "num_heads", &c->num_heads, err, err_size) ||
        get_int(attrs, "num_key_value_heads", &c->num_key_value_heads, err, err_size) ||
        get_int(attrs, "window", &c->window, err, err_size) || get_int(attrs, "block_size", &c->block_size, err, err_size) ||
        get_int(attrs, "antiquant_mode", &c->antiquant_mode, err, err_size) ||
        get_int(attrs, "key_antiquant_mode", &c->key_antiquant_mode, err, err_size) ||
        get_int(attrs, "value_antiquant_mode", &c->value_antiquant_mode, err, err_size) ||
        get_int(attrs, "value_head_dim", &c->value_head_dim, err, err_size))
        goto done;
    if (get_number(attrs, "softcap", &c->softcap, err, err_size) ||
        get_number(attrs, "scale_value", &c->scale_value, err, err_size))
        goto done;
    if (cJSON_GetObjectItemCaseSensitive(inputs, "kv_padding_size")) {
        if (get_int_in(inputs, "inputs", "kv_padding_size", &c->kv_padding_size, err, err_size)) goto done;
        c->has_kv_padding = 1;
    }
    if (!cJSON_GetObjectItemCaseSensitive(attrs, "num_heads")) {
        snprintf(err, err_size, "attrs.num_heads is required");
        goto done;
    }
    if (get_string(attrs, "input_layout", "\"BSH\", \"BSND\" or \"BNSD\"", c->input_layout, sizeof c->input_layout,
                   err, err_size))
        goto done;
    const cJSON *lse = cJSON_GetObjectItemCaseSensitive(attrs, "softmax_lse_flag");
    if (lse) {
        if (!cJSON_IsBool(lse)) {
            snprintf(err, err_size, "attrs.softmax_lse_flag must be true or false");
            goto done;
        }
        c->softmax_lse_flag = cJSON_IsTrue(lse);
    }
    /* "value": "key" passes the key tensor itself as the value (multi-head latent attention's one cache) */
    const cJSON *value = cJSON_GetObjectItemCaseSensitive(inputs, "value");
    c->value_is_key = cJSON_IsString(value) && strcmp(value->valuestring, "key") == 0;
    if (ifa_case_load_tensor(cJSON_GetObjectItemCaseSensitive(inputs, "query"), "query", base, &c->query, err, err_size) ||
        ifa_case_load_tensor(cJSON_GetObjectItemCaseSensitive(inputs, "key"), "key", base, &c->key, err, err_size))
        goto done;
    if (c->value_is_key ? ifa_host_tensor_copy(&c->value, &c->key) != 0
                        : ifa_case_load_tensor(value, "value", base, &c->value, err, err_size) != 0) {
        if (c->value_is_key) snprintf(err, err_size, IFA_CASE_NO_MEMORY "value, a copy of the key");
        goto done;
    }
    const cJSON *mask = cJSON_GetObjectItemCaseSensitive(inputs, "atten_mask");
    const cJSON *pse = cJSON_GetObjectItemCaseSensitive(inputs, "pse_shift");
    const cJSON *sinks = cJSON_GetObjectItemCaseSensitive(inputs, "sinks");
    const cJSON *alibi = cJSON_GetObjectItemCaseSensitive(inputs, "alibi_slopes");
    const cJSON *aqs = cJSON_GetObjectItemCaseSensitive(inputs, "antiquant_scale");
    const cJSON *aqo = cJSON_GetObjectItemCaseSensitive(inputs, "antiquant_offset");
    if ((mask && ifa_case_load_tensor(mask, "atten_mask", base, &c->atten_mask, err, err_size)) ||
        (pse && ifa_case_load_tensor(pse, "pse_shift", base, &c->pse_shift, err, err_size)) ||
        (sinks && ifa_case_load_tensor(sinks, "sinks", base, &c->sinks, err, err_size)) ||
        (alibi && ifa_case_load_tensor(alibi, "alibi_slopes", base, &c->alibi_slopes, err, err_size)) ||
        (aqs && ifa_case_load_tensor(aqs, "antiquant_scale", base, &c->antiquant_scale, err, err_size)) ||
        (aqo && ifa_case_load_tensor(aqo, "antiquant_offset", base, &c->antiquant_offset, err, err_size)))
        goto done;
    /* the separate form's four tensors */
    static const char *const side_names[4] = {"key_antiquant_scale", "key_antiquant_offset", "value_antiquant_scale",
                                              "value_antiquant_offset"};
    ifa_host_tensor *const sides[4] = {&c->key_antiquant_scale, &c->key_antiquant_offset, &c->value_antiquant_scale,
                                       &c->value_antiquant_offset};
    for (int i = 0; i < 4; ++i) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(inputs, side_names[i]);
        if (t && ifa_case_load_tensor(t, side_names[i], base, sides[i], err, err_size)) goto done;
    }
    const cJSON *kps = cJSON_GetObjectItemCaseSensitive(inputs, "key_shared_prefix");
    const cJSON *vps = cJSON_GetObjectItemCaseSensitive(inputs, "value_shared_prefix");
    if ((kps && ifa_case_load_tensor(kps, "key_shared_prefix", base, &c->key_shared_prefix, err, err_size)) ||
        (vps && ifa_case_load_tensor(vps, "value_shared_prefix", base, &c->value_shared_prefix, err, err_size)))
        goto done;
    if (cJSON_GetObjectItemCaseSensitive(inputs, "actual_shared_prefix_len")) {
        if (get_int_in(inputs, "inputs", "actual_shared_prefix_len", &c->prefix_len, err, err_size)) goto done;
        c->has_prefix_len = 1;
    }
    const cJSON *q2s = cJSON_GetObjectItemCaseSensitive(inputs, "quant_scale2");
    const cJSON *q2o = cJSON_GetObjectItemCaseSensitive(inputs, "quant_offset2");
    if ((q2s && ifa_case_load_tensor(q2s, "quant_scale2", base, &c->quant_scale2, err, err_size)) ||
        (q2o && ifa_case_load_tensor(q2o, "quant_offset2", base, &c->quant_offset2, err, err_size)))
        goto done;
    const cJSON *table = cJSON_GetObjectItemCaseSensitive(inputs, "block_table");
    if (table && load_block_table(table, base, c, err, err_size)) goto done;
    if (get_int_array(inputs, "actual_seq_lengths", &c->lengths, &c->lengths_count, err, err_size) ||
        get_int_array(inputs, "actual_seq_lengths_q", &c->q_lengths, &c->q_lengths_count, err, err_size) ||
        get_int_array(inputs, "rope_positions", &c->rope_positions, &c->rope_positions_count, err, err_size))
        goto done;
    if (get_string(attrs, "rope_mode", "\"none\", \"neox\" or \"gptj\"", c->rope_mode, sizeof c->rope_mode, err,
                   err_size) ||
        get_string(attrs, "template_mode", "\"auto\", \"all_vector\" or \"cv\"", c->template_mode,
                   sizeof c->template_mode, err, err_size))
        goto done;
    if (get_number(attrs, "rope_theta", &c->rope_theta, err, err_size) ||
        get_int(attrs, "rope_dim", &c->rope_dim, err, err_size) ||
        get_int(attrs, "rope_offset", &c->rope_offset, err, err_size))
        goto done;
    const cJSON *rc_t = cJSON_GetObjectItemCaseSensitive(inputs, "rope_cos");
    const cJSON *rs_t = cJSON_GetObjectItemCaseSensitive(inputs, "rope_sin");
    if ((rc_t && ifa_case_load_tensor(rc_t, "rope_cos", base, &c->rope_cos, err, err_size)) ||
        (rs_t && ifa_case_load_tensor(rs_t, "rope_sin", base, &c->rope_sin, err, err_size)))
        goto done;
    const cJSON *poison = cJSON_GetObjectItemCaseSensitive(root, "poison_unread");
    if (poison && !cJSON_IsBool(poison)) {
        snprintf(err, err_size, "poison_unread must be true or false");
        goto done;
    }
    /* best effort: shapes that do not fit together are left for the op to refuse with its own message */
    if (cJSON_IsTrue(poison)) (void)ifa_case_poison_unread(c);
    rc = 0;
done:
    cJSON_Delete(root);
    if (rc != 0) ifa_case_free(c);
    return rc;
}

char *ifa_case_read_file(const char *path, char *base, size_t base_size, char *err, size_t err_size) {
    /* a FIFO or a device would block or never end: regular files only, checked on the descriptor read */
    const int fd = open(path, O_RDONLY | O_NONBLOCK);
    struct stat st;
    if (fd < 0) {
        snprintf(err, err_size, "%s: cannot open", path);
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, err_size, "%s: %s", path, S_ISDIR(st.st_mode) ? "a folder, not a case file" : "not a regular file");
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        snprintf(err, err_size, "%s: cannot open", path);
        close(fd);
        return NULL;
    }
    char *text = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    if (n < 0 || n > (16 << 20) || fseek(f, 0, SEEK_SET) != 0 || !(text = malloc((size_t)n + 1)) ||
        fread(text, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(text);
        snprintf(err, err_size, "%s: cannot read (or larger than 16 MiB)", path);
        return NULL;
    }
    fclose(f);
    text[n] = '\0';
    snprintf(base, base_size, "%s", path);
    char *slash = strrchr(base, '/');
    if (slash) *slash = '\0'; else snprintf(base, base_size, ".");
    return text;
}

int ifa_case_load(const char *path, ifa_case *c, char *err, size_t err_size) {
    ifa_case_init(c);
    char base[4096];
    char *text = ifa_case_read_file(path, base, sizeof base, err, err_size);
    if (!text) return -1;
    int rc = ifa_case_parse(text, base, c, err, err_size);
    free(text);
    return rc;
}

