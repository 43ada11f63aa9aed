#include "common/npy.h"
#include "op_host/tensor_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int ifa_npy_read(const char *path, ifa_dtype marked, ifa_host_tensor *t, char *err, size_t err_size) {
    memset(t, 0, sizeof *t);
    char *header = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_size, "%s: cannot open", path);
        return -1;
    }
    unsigned char pre[12];
    if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0) FAIL("%s: not a .npy file (bad magic)", path);
    size_t hlen;
    if (pre[6] == 1) {
        if (fread(pre + 8, 1, 2, f) != 2) FAIL("%s: truncated header", path);
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    } else if (pre[6] == 2 || pre[6] == 3) {
        if (fread(pre + 8, 1, 4, f) != 4) FAIL("%s: truncated header", path);
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    } else {
        FAIL("%s: unsupported .npy version %d", path, pre[6]);
    }
    if (hlen > 65536) FAIL("%s: header of %zu bytes is implausibly long", path, hlen);
    header = malloc(hlen + 1);
    if (!header || fread(header, 1, hlen, f) != hlen) FAIL("%s: truncated header", path);
    header[hlen] = '\0';
    if (strstr(header, "'fortran_order': True")) FAIL("%s: Fortran order is not supported; save C order", path);
    const char *d = strstr(header, "'descr':");
    ifa_dtype dtype = IFA_DTYPE_COUNT_;
    for (size_t i = 0; d && i < sizeof descrs / sizeof descrs[0]; ++i) {
        char want[16];
        snprintf(want, sizeof want, "'%s'", descrs[i].descr);
        if (strstr(d, want) == strchr(d + 8, '\'')) dtype = descrs[i].dtype;
    }
    if (dtype == IFA_DTYPE_COUNT_) FAIL("%s: unsupported dtype (supported: <f4 <f2 <u2 |i1 |u1 <i4 <i8 |b1)", path);
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
    const char *s = strstr(header, "'shape':");
    s = s ? strchr(s, '(') : NULL;
    if (!s) FAIL("%s: header has no shape", path);
    int64_t shape[IFA_MAX_DIMS];
    int ndim = 0;
    ++s;
    while (*s && *s != ')') {
        while (*s == ' ' || *s == ',') ++s;
        if (*s == ')') break;
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s || v < 0) FAIL("%s: malformed shape", path);
        if (ndim == IFA_MAX_DIMS) FAIL("%s: more than %d dimensions", path, IFA_MAX_DIMS);
        shape[ndim++] = v;
        s = end;
    }
    if (*s != ')') FAIL("%s: malformed shape", path);
    if (ifa_host_tensor_alloc(t, dtype, ndim, shape) != 0) FAIL("%s: shape too large", path);
    if (fread(t->data, 1, t->bytes, f) != t->bytes) FAIL("%s: data shorter than the shape says (%zu bytes)", path, t->bytes);
    if (fgetc(f) != EOF) FAIL("%s: data longer than the shape says", path);
    if (marked == IFA_DTYPE_INT4) {
        ifa_host_tensor packed;
        if (ifa_host_tensor_alloc(&packed, IFA_DTYPE_INT4, ndim, shape) != 0) FAIL("%s: shape too large", path);
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
