#define _POSIX_C_SOURCE 200809L /* open, fstat, fdopen */
#include "common/npy.h"
#include "common/case.h"
#include "op_host/runtime/tensor_check.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
    const char *descr;
    ifa_dtype dtype;
} descrs[] = {{"<f4", IFA_DTYPE_FLOAT32}, {"<f2", IFA_DTYPE_FLOAT16}, {"<u2", IFA_DTYPE_BFLOAT16},
              {"|i1", IFA_DTYPE_INT8},    {"|u1", IFA_DTYPE_UINT8},   {"<i4", IFA_DTYPE_INT32},
              {"<i8", IFA_DTYPE_INT64},   {"|b1", IFA_DTYPE_BOOL}};

int ifa_npy_write(const char *path, const ifa_host_tensor *t) {
    const int int4 = t->dtype == IFA_DTYPE_INT4;
    /* float8 has no NumPy dtype: its bytes as '|u1', read back marked "float8_e4m3fn" or "float8_e5m2" */
    const int fp8 = ifa__is_float8(t->dtype);
    const char *descr = int4 ? "|i1" : fp8 ? "|u1" : NULL;
    for (size_t i = 0; !int4 && i < sizeof descrs / sizeof descrs[0]; ++i)
        if (descrs[i].dtype == t->dtype) descr = descrs[i].descr;
    if (!descr) return -1;
    char header[512];
    int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < t->ndim; ++i) n += snprintf(header + n, sizeof header - (size_t)n, "%lld,%s", (long long)t->shape[i], i + 1 < t->ndim ? " " : "");
    n += snprintf(header + n, sizeof header - (size_t)n, "), }");
    int total = 10 + n + 1;
    int pad = (64 - total % 64) % 64;
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
    pre[8] = (unsigned char)((n + pad + 1) & 0xff);
    pre[9] = (unsigned char)((n + pad + 1) >> 8);
    int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(header, 1, (size_t)n, f) == (size_t)n;
    for (int i = 0; ok && i < pad; ++i) ok = fputc(' ', f) != EOF;
    ok = ok && fputc('\n', f) != EOF;
    if (int4)
        for (int64_t i = 0; ok && i < ifa_host_tensor_numel(t); ++i) ok = fputc((int)(int8_t)ifa_host_get(t, i) & 0xff, f) != EOF;
    else
        ok = ok && fwrite(t->data, 1, t->bytes, f) == t->bytes;
    return fclose(f) == 0 && ok ? 0 : -1;
}

#define FAIL(...)                                 \
    do {                                          \
        snprintf(err, err_size, __VA_ARGS__);     \
        goto fail;                                \
    } while (0)

/* The header's dict, read as the Python literal NumPy writes: the keys 'descr' (a string), 'fortran_order' (True or
 * False) and 'shape' (a tuple of non-negative integers), each exactly once, in any order, then spaces to the end
 * (NumPy pads with spaces and ends with a newline). */
typedef struct npy_header {
    char descr[16];
    int fortran;
    int ndim;
    int64_t shape[IFA_MAX_DIMS];
} npy_header;

static const char *skip_spaces(const char *s) {
    while (*s == ' ' || *s == '\t') ++s;
    return s;
}

/* A quoted string (either quote) into out (n bytes); the text after it, or NULL. */
static const char *read_string(const char *s, char *out, size_t n) {
    const char q = *s;
    if (q != '\'' && q != '"') return NULL;
    const char *e = strchr(s + 1, q);
    if (!e || (size_t)(e - s - 1) >= n) return NULL;
    memcpy(out, s + 1, (size_t)(e - s - 1));
    out[e - s - 1] = '\0';
    return e + 1;
}

/* The dict into h; NULL, or what is wrong with it. */
static const char *parse_header(const char *s, npy_header *h) {
    int seen[3] = {0, 0, 0}; /* descr, fortran_order, shape */
    s = skip_spaces(s);
    if (*s++ != '{') return "the header is not a dict";
    for (;;) {
        s = skip_spaces(s);
        if (*s == '}') break;
        char key[32];
        if (!(s = read_string(s, key, sizeof key))) return "a key of the header is not a short quoted string";
        s = skip_spaces(s);
        if (*s++ != ':') return "a key of the header has no ':'";
        s = skip_spaces(s);
        const int k = strcmp(key, "descr") == 0 ? 0 : strcmp(key, "fortran_order") == 0 ? 1
                      : strcmp(key, "shape") == 0 ? 2 : -1;
        if (k < 0) return "the header has a key other than 'descr', 'fortran_order' and 'shape'";
        if (seen[k]++) return "the header names a key twice";
        if (k == 0) {
            if (!(s = read_string(s, h->descr, sizeof h->descr))) return "'descr' is not a short quoted string";
        } else if (k == 1) {
            if (strncmp(s, "True", 4) == 0) h->fortran = 1, s += 4;
            else if (strncmp(s, "False", 5) == 0) h->fortran = 0, s += 5;
            else return "'fortran_order' is neither True nor False";
        } else {
            if (*s++ != '(') return "malformed shape: not a tuple";
            h->ndim = 0;
            for (;;) {
                s = skip_spaces(s);
                if (*s == ')') break;
                if (*s < '0' || *s > '9') return "malformed shape: want non-negative integers";
                int64_t v = 0;
                for (; *s >= '0' && *s <= '9'; ++s) {
                    if (v > (INT64_MAX - (*s - '0')) / 10) return "malformed shape: a dimension past 2^63";
                    v = v * 10 + (*s - '0');
                }
                if (h->ndim == IFA_MAX_DIMS) return "more dimensions than the tools take";
                h->shape[h->ndim++] = v;
                s = skip_spaces(s);
                if (*s == ',') ++s;
                else if (*s != ')') return "malformed shape: want ',' or ')' after a dimension";
            }
            ++s;
        }
        s = skip_spaces(s);
        if (*s == ',') ++s;
        else if (*s != '}') return "want ',' or '}' after a value of the header";
    }
    s = skip_spaces(s + 1);
    if (*s == '\n') ++s;
    if (*s) return "text after the header's dict";
    if (!seen[0]) return "the header has no 'descr'";
    if (!seen[1]) return "the header has no 'fortran_order'";
    if (!seen[2]) return "the header has no shape";
    return NULL;
}

int ifa_npy_read(const char *path, ifa_dtype marked, ifa_host_tensor *t, char *err, size_t err_size) {
    memset(t, 0, sizeof *t);
    char *header = NULL;
    /* a FIFO or device would block or never end: only regular files, checked on the descriptor that is read */
    const int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) {
        snprintf(err, err_size, "%s: cannot open", path);
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, err_size, "%s: not a regular file", path);
        close(fd);
        return -1;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        snprintf(err, err_size, "%s: cannot open", path);
        close(fd);
        return -1;
    }
    unsigned char pre[12];
    if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0) FAIL("%s: not a .npy file (bad magic)", path);
    size_t hlen, pre_len = 10;
    if (pre[6] == 1) {
        if (fread(pre + 8, 1, 2, f) != 2) FAIL("%s: truncated header", path);
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    } else if (pre[6] == 2 || pre[6] == 3) {
        if (fread(pre + 8, 1, 4, f) != 4) FAIL("%s: truncated header", path);
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
        pre_len = 12;
    } else {
        FAIL("%s: unsupported .npy version %d", path, pre[6]);
    }
    if (hlen > 65536) FAIL("%s: header of %zu bytes is implausibly long", path, hlen);
    header = malloc(hlen + 1);
    if (!header) FAIL(IFA_CASE_NO_MEMORY "%s: the header", path);
    if (fread(header, 1, hlen, f) != hlen) FAIL("%s: truncated header", path);
    header[hlen] = '\0';
    if (strlen(header) != hlen) FAIL("%s: a NUL byte in the header", path);
    npy_header h;
    memset(&h, 0, sizeof h);
    const char *bad = parse_header(header, &h);
    if (bad) FAIL("%s: %s", path, bad);
    if (h.fortran) FAIL("%s: Fortran order is not supported; save C order", path);
    ifa_dtype dtype = IFA_DTYPE_COUNT_;
    for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; ++i)
        if (strcmp(h.descr, descrs[i].descr) == 0) dtype = descrs[i].dtype;
    if (dtype == IFA_DTYPE_COUNT_)
        FAIL("%s: unsupported dtype '%s' (supported: <f4 <f2 <u2 |i1 |u1 <i4 <i8 |b1)", path, h.descr);
    if (dtype == IFA_DTYPE_BFLOAT16 && marked != IFA_DTYPE_BFLOAT16)
        FAIL("%s: '<u2' data must be marked \"dtype\": \"bfloat16\" in the case", path);
    if (dtype != IFA_DTYPE_BFLOAT16 && marked == IFA_DTYPE_BFLOAT16)
        FAIL("%s: marked bfloat16 but stored as another dtype than '<u2'", path);
    if (dtype != IFA_DTYPE_INT8 && marked == IFA_DTYPE_INT4)
        FAIL("%s: marked int4 but stored as another dtype than '|i1' (one value per element)", path);
    if (ifa__is_float8(marked)) {
        if (dtype != IFA_DTYPE_UINT8)
            FAIL("%s: marked %s but stored as another dtype than '|u1' (its bytes)", path, ifa_dtype_name(marked));
        dtype = marked; /* the same bytes, read as float8 */
    }
    /* the data's bytes from the shape, overflow-checked, against the file's size before anything is allocated */
    const int64_t item = (int64_t)ifa_dtype_size(dtype == IFA_DTYPE_INT4 ? IFA_DTYPE_INT8 : dtype);
    int64_t want = item;
    for (int i = 0; i < h.ndim; ++i) {
        if (h.shape[i] && want > INT64_MAX / h.shape[i]) FAIL("%s: shape too large (its bytes pass 2^63)", path);
        want *= h.shape[i];
    }
    const int64_t have = (int64_t)st.st_size - (int64_t)(pre_len + hlen);
    if (have < want) FAIL("%s: data shorter than the shape says (%lld bytes, the file holds %lld)", path, (long long)want,
                          (long long)have);
    if (have > want) FAIL("%s: data longer than the shape says (%lld bytes, the file holds %lld)", path, (long long)want,
                          (long long)have);
    if (ifa_host_tensor_alloc(t, dtype, h.ndim, h.shape) != 0) FAIL(IFA_CASE_NO_MEMORY "%s: %lld bytes", path, (long long)want);
    if (fread(t->data, 1, t->bytes, f) != t->bytes) FAIL("%s: data shorter than the shape says (%zu bytes)", path, t->bytes);
    if (fgetc(f) != EOF) FAIL("%s: data longer than the shape says", path);
    if (marked == IFA_DTYPE_INT4) {
        ifa_host_tensor packed;
        if (ifa_host_tensor_alloc(&packed, IFA_DTYPE_INT4, h.ndim, h.shape) != 0)
            FAIL(IFA_CASE_NO_MEMORY "%s: the packed int4 tensor", path);
        for (int64_t i = 0; i < ifa_host_tensor_numel(t); ++i) {
            const int v = ((const int8_t *)t->data)[i];
            if (v < -8 || v > 7) {
                ifa_host_tensor_free(&packed);
                FAIL("%s: element %lld is %d, outside int4's [-8, 7]", path, (long long)i, v);
            }
            ifa_host_set(&packed, i, v);
        }
        ifa_host_tensor_free(t);
        *t = packed;
    }
    free(header);
    fclose(f);
    return 0;
fail:
    free(header);
    ifa_host_tensor_free(t);
    fclose(f);
    return -1;
}
