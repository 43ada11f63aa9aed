/* The tools' shared pieces: .npy files, the JSON case loader, half/bf16 conversions, and the host work split
 * (random fills and the float64 reference over several threads), the strict option values. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/args.h"
#include "common/bench_variants.h"
#include "common/block_pool.h"
#include "common/case.h"
#include "common/half.h"
#include "common/npy.h"
#include "common/parallel.h"
#include "common/pin.h"
#include "common/poison.h"
#include "common/reference.h"
#include "common/rng.h"
#include "test_util.h"

static char dir[256];

static void make_dir(void) {
    if (dir[0]) return;
    snprintf(dir, sizeof dir, "/tmp/ifa_test_tools_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static const char *path_in(const char *name) {
    static char p[512];
    make_dir();
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static void write_bytes(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    fclose(f);
}

START_TEST(npy_round_trip_every_dtype) {
    for (int d = 0; d < IFA_DTYPE_COUNT_; ++d) {
        ifa_host_tensor t, back;
        int64_t shape[3] = {2, 3, 5};
        ck_assert_int_eq(ifa_host_tensor_alloc(&t, (ifa_dtype)d, 3, shape), 0);
        ifa_host_fill_random(&t, 7, 0, 2);
        if (d == IFA_DTYPE_INT4) ifa_host_fill_random(&t, 7, -8.99, 7.99); /* the whole range, negatives too */
        const char *p = path_in("rt.npy");
        ck_assert_int_eq(ifa_npy_write(p, &t), 0);
        char err[256];
        const ifa_dtype marked = d == IFA_DTYPE_BFLOAT16 || d == IFA_DTYPE_INT4 || d == IFA_DTYPE_FLOAT8_E4M3 ||
                                         d == IFA_DTYPE_FLOAT8_E5M2
                                     ? (ifa_dtype)d
                                     : IFA_DTYPE_COUNT_;
        ck_assert_msg(ifa_npy_read(p, marked, &back, err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(back.dtype, d);
        ck_assert_int_eq(back.ndim, 3);
        ck_assert_mem_eq(back.shape, t.shape, 3 * sizeof(int64_t));
        ck_assert_mem_eq(back.data, t.data, t.bytes);
        ifa_host_tensor_free(&t);
        ifa_host_tensor_free(&back);
    }
}
END_TEST

/* A file with that header and data_bytes bytes of value fill, read as marked, fails with needle. */
static void expect_npy_error_as(const char *header_text, size_t data_bytes, unsigned char fill, ifa_dtype marked,
                                const char *needle) {
    unsigned char buf[512] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    size_t h = strlen(header_text);
    buf[8] = (unsigned char)h, buf[9] = 0;
    memcpy(buf + 10, header_text, h);
    memset(buf + 10 + h, fill, data_bytes);
    const char *p = path_in("bad.npy");
    write_bytes(p, buf, 10 + h + data_bytes);
    ifa_host_tensor t;
    char err[256] = "";
    ck_assert_int_eq(ifa_npy_read(p, marked, &t, err, sizeof err), -1);
    ck_assert_msg(strstr(err, needle), "error \"%s\" lacks \"%s\"", err, needle);
}

static void expect_npy_error(const char *header_text, size_t data_bytes, const char *needle) {
    expect_npy_error_as(header_text, data_bytes, 0, IFA_DTYPE_COUNT_, needle);
}

START_TEST(npy_rejects_malformed) {
    expect_npy_error("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }\n", 8, "Fortran");
    expect_npy_error("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", 8, "unsupported dtype");
    expect_npy_error("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }\n", 16, "unsupported dtype");
    expect_npy_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", 8, "shorter");
    expect_npy_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", 8, "longer");
    expect_npy_error("{'descr': '<f4', 'fortran_order': False, }\n", 8, "no shape");
    expect_npy_error("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }\n", 8, "malformed shape");
    expect_npy_error("{'descr': '<f4', 'fortran_order': False, 'shape': (4000000000, 4000000000, 4000000000), }\n", 8,
                     "too large");
    expect_npy_error("{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }\n", 4, "bfloat16");
    expect_npy_error_as("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 8, 0, IFA_DTYPE_BFLOAT16,
                        "marked bfloat16");
    expect_npy_error_as("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 8, 0, IFA_DTYPE_INT4,
                        "marked int4");
    expect_npy_error_as("{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }\n", 3, 8, IFA_DTYPE_INT4,
                        "element 0 is 8, outside int4's [-8, 7]");
    expect_npy_error_as("{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }\n", 3, 0xf7, IFA_DTYPE_INT4,
                        "element 0 is -9");
    /* the header as the Python literal it is: no space after the colon is still True, a key twice or an unknown
     * key is refused, a claimed size past the file's is refused before any allocation (8 GB for a 4 KB file), a
     * product past 2^63 is refused, not wrapped */
    expect_npy_error("{'descr': '<f4', 'fortran_order':True, 'shape': (2,), }\n", 8, "Fortran");
    expect_npy_error("{'descr':'<f4','fortran_order':False,'shape':(2,),'shape':(2,)}\n", 8, "names a key twice");
    expect_npy_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}\n", 8, "a key other than");
    expect_npy_error("{'descr': '<f4', 'shape': (2,), }\n", 8, "no 'fortran_order'");
    expect_npy_error("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }\n", 8, "neither True nor False");
    expect_npy_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } junk\n", 8, "text after");
    expect_npy_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2000000000,), }\n", 8,
                     "data shorter than the shape says (8000000000 bytes, the file holds 8)");
    expect_npy_error("{'descr': '<f4', 'fortran_order': False, 'shape': (576460752303423487,), }\n", 8,
                     "data shorter than the shape says (2305843009213693948 bytes");
    expect_npy_error("{'descr': '<f4', 'fortran_order': False, 'shape': (576460752303423487, 16), }\n", 8,
                     "its bytes pass 2^63");
    expect_npy_error("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }\n", 8,
                     "past 2^63");
    expect_npy_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 9, "data longer");
    {
        /* no space after the colons, keys in another order, double quotes: read as NumPy would */
        static const char ok[] = "\x93NUMPY\x01\x00\x37\x00{\"shape\":(2,),\"fortran_order\":False,\"descr\":\"<f4\"}    \n"
                                 "\x00\x00\x80\x3f\x00\x00\x00\x40";
        write_bytes(path_in("ok.npy"), ok, sizeof ok - 1);
        ifa_host_tensor t;
        char err[256] = "";
        ck_assert_msg(ifa_npy_read(path_in("ok.npy"), IFA_DTYPE_COUNT_, &t, err, sizeof err) == 0, "%s", err);
        ck_assert(t.ndim == 1 && t.shape[0] == 2 && ifa_host_get(&t, 0) == 1.0 && ifa_host_get(&t, 1) == 2.0);
        ifa_host_tensor_free(&t);
    }
    {
        /* a folder and a FIFO are not regular files (a FIFO blocked in fopen forever) */
        ifa_host_tensor t;
        char err[256] = "";
        ck_assert_int_eq(ifa_npy_read((make_dir(), dir), IFA_DTYPE_COUNT_, &t, err, sizeof err), -1);
        ck_assert_msg(strstr(err, "not a regular file"), "%s", err);
        const char *fifo = path_in("fifo.npy");
        unlink(fifo);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        ck_assert_int_eq(ifa_npy_read(fifo, IFA_DTYPE_COUNT_, &t, err, sizeof err), -1);
        ck_assert_msg(strstr(err, "not a regular file"), "%s", err);
        unlink(fifo);
    }
    static const char zip[] = "PK\x03\x04 not npy";
    write_bytes(path_in("magic.npy"), zip, sizeof zip - 1);
    ifa_host_tensor t;
    char err[256];
    ck_assert_int_eq(ifa_npy_read(path_in("magic.npy"), IFA_DTYPE_COUNT_, &t, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "bad magic"));
    static const char short_header[] = "\x93NUMPY\x01\x00\x40";
    write_bytes(path_in("short.npy"), short_header, sizeof short_header - 1);
    ck_assert_int_eq(ifa_npy_read(path_in("short.npy"), IFA_DTYPE_COUNT_, &t, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "truncated"));
}
END_TEST

/* float8 e4m3fn: every code decodes and encodes back; round to nearest even at ties, in the subnormals
 * and across the subnormal/normal boundary; saturation at 448; NaN. */
START_TEST(float8_conversions) {
    for (int b = 0; b < 256; ++b) {
        const double v = ifa_e4m3_to_double((uint8_t)b);
        if ((b & 0x7f) == 0x7f) {
            ck_assert(isnan(v));
            continue;
        }
        ck_assert_msg(ifa_double_to_e4m3(v) == b, "code 0x%02x", b); /* -0 (0x80) included */
    }
    ck_assert_double_eq(ifa_e4m3_to_double(0x38), 1.0);
    ck_assert_double_eq(ifa_e4m3_to_double(0x7e), 448.0);
    ck_assert_double_eq(ifa_e4m3_to_double(0x01), 0x1p-9);
    ck_assert_double_eq(ifa_e4m3_to_double(0x08), 0x1p-6);
    ck_assert_double_eq(ifa_e4m3_to_double(0xb9), -1.125);
    ck_assert_uint_eq(ifa_double_to_e4m3(1.0625), 0x38);        /* tie between 1 and 1.125: even */
    ck_assert_uint_eq(ifa_double_to_e4m3(1.1875), 0x3a);        /* tie between 1.125 and 1.25: even */
    ck_assert_uint_eq(ifa_double_to_e4m3(1.07), 0x39);
    ck_assert_uint_eq(ifa_double_to_e4m3(0x1p-10), 0x00);       /* half the smallest subnormal: even, 0 */
    ck_assert_uint_eq(ifa_double_to_e4m3(3 * 0x1p-10), 0x02);   /* 1.5 steps: even */
    ck_assert_uint_eq(ifa_double_to_e4m3(15 * 0x1p-10), 0x08);  /* 7.5 steps: up to the smallest normal */
    ck_assert_uint_eq(ifa_double_to_e4m3(-0x1p-6 * 1.0625), 0x88);
    ck_assert_uint_eq(ifa_double_to_e4m3(464), 0x7e);           /* past 448: saturates (no infinity) */
    ck_assert_uint_eq(ifa_double_to_e4m3(-1e9), 0xfe);
    ck_assert_uint_eq(ifa_double_to_e4m3(INFINITY), 0x7e);
    ck_assert_uint_eq(ifa_double_to_e4m3(NAN), 0x7f);
    ck_assert_uint_eq(ifa_double_to_e4m3(-0.0), 0x80);
}
END_TEST

/* float8 e5m2: every code decodes (as the binary16 it is the upper byte of) and every finite one encodes
 * back; ties to even straight from the value (never through binary16, which would round twice); saturation
 * at 57344, infinities included; NaN. */
START_TEST(float8_e5m2_conversions) {
    for (int b = 0; b < 256; ++b) {
        const double v = ifa_e5m2_to_double((uint8_t)b);
        const double h = ifa_half_to_float((uint16_t)(b << 8));
        ck_assert_msg(isnan(v) ? isnan(h) : v == h, "code 0x%02x: %g, binary16 %g", b, v, h);
        if ((b & 0x7c) == 0x7c) {
            ck_assert((b & 3) ? isnan(v) : isinf(v));
            continue;
        }
        ck_assert_msg(ifa_double_to_e5m2(v) == b, "code 0x%02x", b); /* -0 (0x80) included */
    }
    ck_assert_double_eq(ifa_e5m2_to_double(0x3c), 1.0);
    ck_assert_double_eq(ifa_e5m2_to_double(0x7b), 57344.0);
    ck_assert_double_eq(ifa_e5m2_to_double(0x01), 0x1p-16);
    ck_assert_double_eq(ifa_e5m2_to_double(0x04), 0x1p-14);
    ck_assert_double_eq(ifa_e5m2_to_double(0xbd), -1.25);
    ck_assert_uint_eq(ifa_double_to_e5m2(1.125), 0x3c);                /* tie between 1 and 1.25: even */
    ck_assert_uint_eq(ifa_double_to_e5m2(1.375), 0x3e);                /* tie between 1.25 and 1.5: even */
    ck_assert_uint_eq(ifa_double_to_e5m2(1.125 + 0x1p-11), 0x3d);      /* via binary16 (1.125) it would be 1 */
    ck_assert_uint_eq(ifa_double_to_e5m2(0x1p-17), 0x00);              /* half the smallest subnormal: even */
    ck_assert_uint_eq(ifa_double_to_e5m2(3 * 0x1p-17), 0x02);          /* 1.5 steps: even */
    ck_assert_uint_eq(ifa_double_to_e5m2(7 * 0x1p-17), 0x04);          /* 3.5 steps: up to the smallest normal */
    ck_assert_uint_eq(ifa_double_to_e5m2(-0x1p-14 * 1.125), 0x84);     /* tie: even */
    ck_assert_uint_eq(ifa_double_to_e5m2(61440), 0x7b);                /* past 57344: saturates */
    ck_assert_uint_eq(ifa_double_to_e5m2(-1e9), 0xfb);
    ck_assert_uint_eq(ifa_double_to_e5m2(INFINITY), 0x7b);
    ck_assert_uint_eq(ifa_double_to_e5m2(NAN), 0x7f);
    ck_assert_uint_eq(ifa_double_to_e5m2(-0.0), 0x80);
}
END_TEST

/* ifa_dtype_max against each format's codes: the largest finite value any code decodes to (so the table in
 * core/dtype.c and the host conversions cannot drift apart), and the integer formats' ranges. */
START_TEST(dtype_max_is_the_largest_finite_code) {
    double e4m3 = 0, e5m2 = 0, f16 = 0;
    for (int b = 0; b < 256; ++b) {
        const double a = ifa_e4m3_to_double((uint8_t)b), c = ifa_e5m2_to_double((uint8_t)b);
        if (isfinite(a)) e4m3 = fmax(e4m3, a);
        if (isfinite(c)) e5m2 = fmax(e5m2, c);
    }
    for (uint32_t h = 0; h < 0x10000; ++h) {
        const double v = ifa_half_to_float((uint16_t)h);
        if (isfinite(v)) f16 = fmax(f16, v);
    }
    ck_assert_double_eq(ifa_dtype_max(IFA_DTYPE_FLOAT8_E4M3), e4m3);
    ck_assert_double_eq(ifa_dtype_max(IFA_DTYPE_FLOAT8_E5M2), e5m2);
    ck_assert_double_eq(ifa_dtype_max(IFA_DTYPE_FLOAT16), f16);
    ck_assert_double_eq(ifa_dtype_max(IFA_DTYPE_BFLOAT16), ifa_bf16_to_float(0x7f7f));
    ck_assert(isinf(ifa_bf16_to_float(0x7f80)));
    ck_assert_double_eq(ifa_dtype_max(IFA_DTYPE_FLOAT32), FLT_MAX);
    ck_assert_double_eq(ifa_dtype_max(IFA_DTYPE_INT8), INT8_MAX);
    ck_assert_double_eq(ifa_dtype_max(IFA_DTYPE_UINT8), UINT8_MAX);
    ck_assert_double_eq(ifa_dtype_max(IFA_DTYPE_INT32), INT32_MAX);
    ck_assert_double_eq(ifa_dtype_max(IFA_DTYPE_INT64), (double)INT64_MAX);
    ck_assert_double_eq(ifa_dtype_max(IFA_DTYPE_INT4), 7);
    ck_assert_double_eq(ifa_dtype_max(IFA_DTYPE_BOOL), 1);
    ck_assert_double_eq(ifa_dtype_max(IFA_DTYPE_COUNT_), 0);
    ck_assert_double_eq(ifa_dtype_max((ifa_dtype)-1), 0);
}
END_TEST

START_TEST(half_conversions) {
    ck_assert_uint_eq(ifa_float_to_half(1.0f), 0x3c00);
    ck_assert_uint_eq(ifa_float_to_half(-2.0f), 0xc000);
    ck_assert_uint_eq(ifa_float_to_half(65504.0f), 0x7bff);
    ck_assert_uint_eq(ifa_float_to_half(65520.0f), 0x7c00); /* rounds to inf */
    ck_assert_uint_eq(ifa_float_to_half(1.0f + 0x1p-11f), 0x3c00); /* tie to even */
    ck_assert_uint_eq(ifa_float_to_half(1.0f + 3 * 0x1p-11f), 0x3c02);
    ck_assert_uint_eq(ifa_float_to_half(0x1p-24f), 0x0001); /* smallest subnormal */
    ck_assert(isnan(ifa_half_to_float(ifa_float_to_half(NAN))));
    for (uint32_t h = 0; h < 0x7c00; ++h) ck_assert_uint_eq(ifa_float_to_half(ifa_half_to_float((uint16_t)h)), h);
    ck_assert_uint_eq(ifa_float_to_bf16(1.0f), 0x3f80);
    ck_assert_uint_eq(ifa_float_to_bf16(1.0f + 0x1p-8f), 0x3f80); /* tie to even */
    ck_assert_uint_eq(ifa_float_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);
    ck_assert(isnan(ifa_bf16_to_float(ifa_float_to_bf16(NAN))));
}
END_TEST

/* A case whose tensors are .npy files (bf16 key and value marked beside the file), run and checked. */
START_TEST(case_with_npy_inputs_runs) {
    ifa_host_tensor q, k;
    int64_t qs[4] = {2, 4, 1, 32}, ks[4] = {2, 2, 50, 32};
    ck_assert_int_eq(ifa_host_tensor_alloc(&q, IFA_DTYPE_FLOAT32, 4, qs), 0);
    ck_assert_int_eq(ifa_host_tensor_alloc(&k, IFA_DTYPE_BFLOAT16, 4, ks), 0);
    ifa_host_fill_random(&q, 11, -1, 1);
    ifa_host_fill_random(&k, 12, -1, 1);
    ck_assert_int_eq(ifa_npy_write(path_in("q.npy"), &q), 0);
    ck_assert_int_eq(ifa_npy_write(path_in("k.npy"), &k), 0);
    ifa_host_fill_random(&k, 13, -1, 1);
    ck_assert_int_eq(ifa_npy_write(path_in("v.npy"), &k), 0);
    const char *json =
        "{\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": 4, \"num_key_value_heads\": 2, "
        "\"input_layout\": \"BNSD\", \"scale_value\": 0.2, \"softmax_lse_flag\": true}, \"inputs\": {\"query\": \"q.npy\", "
        "\"key\": {\"file\": \"k.npy\", \"dtype\": \"bfloat16\"}, \"value\": {\"file\": \"v.npy\", \"dtype\": \"bfloat16\"}, "
        "\"actual_seq_lengths\": [50, 3]}}";
    ifa_case c;
    char err[256];
    ck_assert_msg(ifa_case_parse(json, dir, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(c.key.dtype, IFA_DTYPE_BFLOAT16);
    ck_assert_int_eq(c.lengths_count, 2);
    ifa_case_result r;
    ck_assert_msg(ifa_case_run(test_ctx(), test_queue(), &c, NULL, NULL, &r) == IFA_STATUS_OK, "%s", ifa_last_error());
    ifa_case_check chk;
    ck_assert_int_eq(ifa_case_check_result(&c, &r, &chk), 0);
    ck_assert_msg(chk.pass, "rel_l2 %.3g", chk.rel_l2);
    ifa_case_result_free(&r);
    ifa_case_free(&c);
    ifa_host_tensor_free(&q);
    ifa_host_tensor_free(&k);
}
END_TEST

/* Every input and attribute of the op in a case: a paged pool with its block table in an int32 .npy, a
 * per-token mask, a bias, soft-cap and window, S1 = 3; parsed into the fields, run and checked. */
START_TEST(case_with_every_input_runs) {
    ifa_host_tensor table;
    int64_t ts[2] = {2, 3};
    ck_assert_int_eq(ifa_host_tensor_alloc(&table, IFA_DTYPE_INT32, 2, ts), 0);
    static const int32_t ids[6] = {4, 0, 2, 3, -1, -1};
    memcpy(table.data, ids, sizeof ids);
    ck_assert_int_eq(ifa_npy_write(path_in("table.npy"), &table), 0);
    ifa_host_tensor_free(&table);
    const char *json =
        "{\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": 4, \"num_key_value_heads\": 2, "
        "\"input_layout\": \"BSND\", \"softcap\": 2.5, \"window\": 9, \"block_size\": 8, \"softmax_lse_flag\": true}, "
        "\"inputs\": {\"query\": {\"shape\": [2, 3, 4, 16], \"dtype\": \"float16\", \"random\": {\"seed\": 1}}, "
        "\"key\": {\"shape\": [5, 8, 2, 16], \"dtype\": \"float16\", \"random\": {\"seed\": 2}}, "
        "\"value\": {\"shape\": [5, 8, 2, 16], \"dtype\": \"float16\", \"random\": {\"seed\": 3}}, "
        "\"atten_mask\": {\"shape\": [2, 1, 3, 24], \"dtype\": \"int8\", \"random\": {\"seed\": 4, \"low\": 0, \"high\": 1.5}}, "
        "\"pse_shift\": {\"shape\": [2, 4, 3, 24], \"dtype\": \"float16\", \"random\": {\"seed\": 5}}, "
        "\"block_table\": \"table.npy\", \"actual_seq_lengths\": [20, 5]}}";
    ifa_case c;
    char err[256];
    ck_assert_msg(ifa_case_parse(json, dir, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(c.block_table_cols, 3);
    ck_assert_int_eq(c.block_table[3], 3);
    ck_assert_int_eq(c.block_size, 8);
    ck_assert_int_eq(c.window, 9);
    ck_assert(c.softcap == 2.5);
    ck_assert_int_eq(c.atten_mask.ndim, 4);
    ck_assert_int_eq(ifa_case_seq_q(&c), 3);
    ifa_case_result r;
    ck_assert_msg(ifa_case_run(test_ctx(), test_queue(), &c, NULL, NULL, &r) == IFA_STATUS_OK, "%s", ifa_last_error());
    ck_assert_int_eq(r.plan.problem.paged, 1);
    ck_assert_int_eq(r.plan.problem.mask_kind, IFA_MASK_PER_TOKEN);
    ifa_case_check chk;
    ck_assert_int_eq(ifa_case_check_result(&c, &r, &chk), 0);
    ck_assert_msg(chk.pass, "rel_l2 %.3g lse_bad %lld", chk.rel_l2, (long long)chk.lse_bad);
    ifa_case_result_free(&r);
    ifa_case_free(&c);
}
END_TEST

START_TEST(case_rejects_bad_fields) {
    static const struct {
        const char *json, *needle;
    } bad[] = {
        {"[1, 2]", "a case must be a JSON object"},
        /* strict JSON: nothing after the case, no key twice, no unknown key (the nearest known one named) */
        {"{\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": 2}, \"inputs\": {}} {}",
         "text after the case's object at byte 71"},
        {"{\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": 2, \"num_heads\": 3}, \"inputs\": {}}",
         "case.attrs has the key \"num_heads\" twice"},
        {"{\"op\": \"IncreFlashAttention\", \"atrs\": {\"num_heads\": 2}, \"inputs\": {}}",
         "the case has the unknown key \"atrs\" (did you mean \"attrs\"?)"},
        {"{\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_head\": 2}, \"inputs\": {}}",
         "attrs.num_head is not an attribute of IncreFlashAttention (did you mean \"num_heads\"?)"},
        {"{\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": 1.5}, \"inputs\": {}}", "attrs.num_heads must be an integer"},
        {"{\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": 2, \"softmax_lse_flag\": 1}, \"inputs\": {}}", "softmax_lse_flag"},
        {"{\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": 2}, \"inputs\": {\"mask\": 1}}", "inputs.mask"},
        {"{\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": 2}, \"inputs\": {}}", "inputs.query is missing"},
        {"{\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": 2}, \"inputs\": {\"query\": {\"shape\": [0], "
         "\"dtype\": \"float16\", \"random\": {\"seed\": 1}}}}", "shape[0] must be a positive integer"},
        {"{\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": 2}, \"inputs\": {\"query\": {\"shape\": [100000, "
         "100000, 100000], \"dtype\": \"float16\", \"random\": {\"seed\": 1}}}}", "limited"},
        {"{\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": 2}, \"inputs\": {\"query\": {\"shape\": [2], "
         "\"dtype\": \"float16\"}}}", "random"},
        {"{\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": 2}, \"inputs\": {\"query\": {\"file\": \"q.npy\", "
         "\"dtype\": \"float16\"}}}", "may only be \"bfloat16\""},
        {"{\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": 2, \"window\": 0.5}, \"inputs\": {}}",
         "attrs.window must be an integer"},
        {"{\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": 2}, \"inputs\": {\"block_table\": [[1, 2], [3]]}}",
         "inputs.query is missing"}, /* tensors load first */
        {"{\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": 2}, \"inputs\": {\"kv_padding_size\": \"4\"}}",
         "inputs.kv_padding_size must be an integer"},
        /* the op reads one table row per batch of the host array: fewer rows would be read past its end */
        {"{\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": 1, \"block_size\": 4}, \"inputs\": {"
         "\"query\": {\"shape\": [2, 1, 4], \"dtype\": \"float16\", \"random\": {\"seed\": 1}}, "
         "\"key\": {\"shape\": [3, 4, 4], \"dtype\": \"float16\", \"random\": {\"seed\": 2}}, "
         "\"value\": {\"shape\": [3, 4, 4], \"dtype\": \"float16\", \"random\": {\"seed\": 3}}, "
         "\"block_table\": [[0]], \"actual_seq_lengths\": [4, 4]}}",
         "inputs.block_table has 1 rows; it needs one per batch (B = 2)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        ifa_case c;
        char err[256] = "";
        ck_assert_int_eq(ifa_case_parse(bad[i].json, "/tmp", &c, err, sizeof err), -1);
        ck_assert_msg(strstr(err, bad[i].needle), "case %zu: error \"%s\" lacks \"%s\"", i, err, bad[i].needle);
    }
}
END_TEST

/* JSON arrays are read along their lists: 400,000 lengths and a 1,000 x 1,000 block table in well under a second
 * each (cJSON_GetArrayItem in a loop took 95 s for 200,000 lengths; the op refuses the case later, not the loader). */
START_TEST(case_arrays_linear) {
    const int n = 400000;
    /* the larger text: 10^6 block ids of up to 3 digits and a comma each, and the brackets of 1,000 rows */
    const size_t room = (size_t)1000 * 1000 * 4 + 1000 * 3 + 4096;
    char *json = malloc(room);
    ck_assert_ptr_nonnull(json);
    for (int form = 0; form < 2; ++form) {
        int w = sprintf(json, "{\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": 2}, \"inputs\": {\"%s\": [",
                        form ? "block_table" : "actual_seq_lengths");
        for (int i = 0; i < (form ? 1000 : n); ++i) {
            if (form) {
                w += sprintf(json + w, "%s[", i ? "," : "");
                for (int k = 0; k < 1000; ++k) w += sprintf(json + w, "%s%d", k ? "," : "", k);
                w += sprintf(json + w, "]");
            } else {
                w += sprintf(json + w, "%s%d", i ? "," : "", i % 1000);
            }
        }
        sprintf(json + w, "], \"query\": {\"shape\": [%d, 1, 2], \"dtype\": \"float16\", \"random\": {\"seed\": 1}}, "
                "\"key\": {\"shape\": [4, 1, 2], \"dtype\": \"float16\", \"random\": {\"seed\": 2}}, "
                "\"value\": {\"shape\": [4, 1, 2], \"dtype\": \"float16\", \"random\": {\"seed\": 3}}}}",
                form ? 1000 : 1);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ifa_case c;
        char err[256] = "";
        ck_assert_msg(ifa_case_parse(json, "/tmp", &c, err, sizeof err) == 0, "form %d: %s", form, err);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        const double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        ck_assert(form ? c.block_table_cols == 1000 && c.block_table[999 * 1000 + 999] == 999
                       : c.lengths_count == n && c.lengths[n - 1] == (n - 1) % 1000);
        ck_assert_msg(s < 5.0, "form %d: %.1f s to read the case", form, s);
        ifa_case_free(&c);
    }
    free(json);
}
END_TEST

/* Runs c, checks it against the reference and frees it. */
static void run_check_free(ifa_case *c) {
    ifa_case_result r;
    ck_assert_msg(ifa_case_run(test_ctx(), test_queue(), c, NULL, NULL, &r) == IFA_STATUS_OK, "%s", ifa_last_error());
    ifa_case_check chk;
    ck_assert_int_eq(ifa_case_check_result(c, &r, &chk), 0);
    ck_assert_msg(chk.pass, "rel_l2 %.3g nonfinite %lld", chk.rel_l2, (long long)chk.nonfinite);
    ifa_case_result_free(&r);
    ifa_case_free(c);
}

/* poison_unread: NaN exactly in the rows no query row may read (contiguous with a window and multi-token
 * causal queries, a paged pool with a spare block, int8 KV's per-token scales, a shared prefix's tail), and
 * the poisoned case still runs and passes. */
/* value_head_dim in case files: "value": "key" passes the key tensor as the value (a copy on the host, the
 * key's buffer on the device), and poison_unread puts NaN in an own value's columns from D_v on, never in the
 * key's; both run and pass the reference check. */
START_TEST(latent_value_cases) {
    char err[256];
    ifa_case c;
    const char *as_key =
        "{\"op\": \"IncreFlashAttention\", \"poison_unread\": true, \"attrs\": {\"num_heads\": 2, "
        "\"num_key_value_heads\": 1, \"value_head_dim\": 3}, \"inputs\": {"
        "\"query\": {\"shape\": [2, 1, 8], \"dtype\": \"float16\", \"random\": {\"seed\": 1}}, "
        "\"key\": {\"shape\": [2, 5, 4], \"dtype\": \"float16\", \"random\": {\"seed\": 2}}, "
        "\"value\": \"key\", \"actual_seq_lengths\": [5, 2]}}";
    ck_assert_msg(ifa_case_parse(as_key, dir, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(c.value_is_key, 1);
    ck_assert_int_eq(c.value_head_dim, 3);
    ck_assert_int_eq(ifa_case_value_dim(&c), 3);
    int64_t shape[IFA_MAX_DIMS];
    ifa_case_out_shape(&c, shape);
    ck_assert_int_eq(shape[2], 2 * 3);
    for (int64_t i = 0; i < 40; ++i) {
        const double k = ifa_host_get(&c.key, i), v = ifa_host_get(&c.value, i);
        const int unread_row = i / 4 % 5 >= (i / 20 ? 2 : 5);
        ck_assert_msg(isnan(k) == unread_row && (isnan(v) ? isnan(k) : v == k), "element %lld", (long long)i);
    }
    run_check_free(&c);
    const char *own =
        "{\"op\": \"IncreFlashAttention\", \"poison_unread\": true, \"attrs\": {\"num_heads\": 2, "
        "\"num_key_value_heads\": 1, \"value_head_dim\": 3, \"input_layout\": \"BNSD\"}, \"inputs\": {"
        "\"query\": {\"shape\": [2, 2, 1, 4], \"dtype\": \"bfloat16\", \"random\": {\"seed\": 1}}, "
        "\"key\": {\"shape\": [2, 1, 5, 4], \"dtype\": \"bfloat16\", \"random\": {\"seed\": 2}}, "
        "\"value\": {\"shape\": [2, 1, 5, 4], \"dtype\": \"bfloat16\", \"random\": {\"seed\": 3}}}}";
    ck_assert_msg(ifa_case_parse(own, dir, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(c.value_is_key, 0);
    for (int64_t i = 0; i < 40; ++i) {
        ck_assert_msg(!isnan(ifa_host_get(&c.key, i)), "key element %lld", (long long)i);
        ck_assert_msg(isnan(ifa_host_get(&c.value, i)) == (i % 4 == 3), "value element %lld", (long long)i);
    }
    run_check_free(&c);
}
END_TEST

START_TEST(poison_unread_marks_the_unread_rows) {
    char err[256];
    ifa_case c;
    /* BSH, D = 2, S = 6, S1 = 2 (causal), window 2, lengths [5, 0]: batch 0's earliest token ends at 4 and
     * sees [2, 4), so rows [2, 5) are read; batch 1 reads nothing */
    const char *contiguous =
        "{\"op\": \"IncreFlashAttention\", \"poison_unread\": true, \"attrs\": {\"num_heads\": 1, \"window\": 2}, "
        "\"inputs\": {\"query\": {\"shape\": [2, 2, 2], \"dtype\": \"float16\", \"random\": {\"seed\": 1}}, "
        "\"key\": {\"shape\": [2, 6, 2], \"dtype\": \"float16\", \"random\": {\"seed\": 2}}, "
        "\"value\": {\"shape\": [2, 6, 2], \"dtype\": \"float16\", \"random\": {\"seed\": 3}}, "
        "\"actual_seq_lengths\": [5, 0]}}";
    ck_assert_msg(ifa_case_parse(contiguous, dir, &c, err, sizeof err) == 0, "%s", err);
    for (int64_t b = 0; b < 2; ++b)
        for (int64_t s = 0; s < 6; ++s) {
            const int read = b == 0 && s >= 2 && s < 5;
            ck_assert_msg(isnan(ifa_host_get(&c.key, (b * 6 + s) * 2)) == !read, "key row (%lld, %lld)", (long long)b,
                          (long long)s);
            ck_assert(isnan(ifa_host_get(&c.value, (b * 6 + s) * 2 + 1)) == !read);
        }
    run_check_free(&c);
    /* paged int8 BNSD, blocks of 4, pool of 4 blocks, table [[2, 0], [3, -1]], lengths [6, 3], per-token scales
     * (mode 1, indexed by logical position): pool block 1 is spare, the last row of block 0 and of block 3
     * are past the lengths; scales past each length are poisoned, the int8 values are left as they are */
    const char *paged =
        "{\"op\": \"IncreFlashAttention\", \"poison_unread\": true, \"attrs\": {\"num_heads\": 1, \"block_size\": 4, "
        "\"input_layout\": \"BNSD\", \"antiquant_mode\": 1}, \"inputs\": {"
        "\"query\": {\"shape\": [2, 1, 1, 2], \"dtype\": \"float16\", \"random\": {\"seed\": 1}}, "
        "\"key\": {\"shape\": [4, 1, 4, 2], \"dtype\": \"int8\", \"random\": {\"seed\": 2, \"low\": -128, \"high\": 128}}, "
        "\"value\": {\"shape\": [4, 1, 4, 2], \"dtype\": \"int8\", \"random\": {\"seed\": 3, \"low\": -128, \"high\": 128}}, "
        "\"antiquant_scale\": {\"shape\": [2, 2, 8], \"dtype\": \"float32\", \"random\": {\"seed\": 4, \"low\": 0.01, \"high\": 0.02}}, "
        "\"block_table\": [[2, 0], [3, -1]], \"actual_seq_lengths\": [6, 3]}}";
    ck_assert_msg(ifa_case_parse(paged, dir, &c, err, sizeof err) == 0, "%s", err);
    for (int64_t half = 0; half < 2; ++half)
        for (int64_t b = 0; b < 2; ++b)
            for (int64_t p = 0; p < 8; ++p)
                ck_assert_msg(isnan(ifa_host_get(&c.antiquant_scale, (half * 2 + b) * 8 + p)) == (p >= (b ? 3 : 6)),
                              "scale (%lld, %lld, %lld)", (long long)half, (long long)b, (long long)p);
    run_check_free(&c);
    /* the same pool in float16: rows of the spare block 1 and row 3 of blocks 0 and 3 are NaN */
    const char *paged_f16 =
        "{\"op\": \"IncreFlashAttention\", \"poison_unread\": true, \"attrs\": {\"num_heads\": 1, \"block_size\": 4, "
        "\"input_layout\": \"BNSD\"}, \"inputs\": {"
        "\"query\": {\"shape\": [2, 1, 1, 2], \"dtype\": \"float16\", \"random\": {\"seed\": 1}}, "
        "\"key\": {\"shape\": [4, 1, 4, 2], \"dtype\": \"float16\", \"random\": {\"seed\": 2}}, "
        "\"value\": {\"shape\": [4, 1, 4, 2], \"dtype\": \"float16\", \"random\": {\"seed\": 3}}, "
        "\"key_shared_prefix\": {\"shape\": [1, 1, 5, 2], \"dtype\": \"float16\", \"random\": {\"seed\": 5}}, "
        "\"value_shared_prefix\": {\"shape\": [1, 1, 5, 2], \"dtype\": \"float16\", \"random\": {\"seed\": 6}}, "
        "\"actual_shared_prefix_len\": 3, \"block_table\": [[2, 0], [3, -1]], \"actual_seq_lengths\": [6, 3]}}";
    ck_assert_msg(ifa_case_parse(paged_f16, dir, &c, err, sizeof err) == 0, "%s", err);
    for (int64_t blk = 0; blk < 4; ++blk)
        for (int64_t row = 0; row < 4; ++row) {
            const int read = blk == 2 || (blk == 0 && row < 2) || (blk == 3 && row < 3);
            ck_assert_msg(isnan(ifa_host_get(&c.key, (blk * 4 + row) * 2)) == !read, "pool row (%lld, %lld)",
                          (long long)blk, (long long)row);
        }
    for (int64_t row = 0; row < 5; ++row) ck_assert(isnan(ifa_host_get(&c.value_shared_prefix, row * 2)) == (row >= 3));
    run_check_free(&c);
}
END_TEST

/* The decode driver's block pool: allocation order, publish/lookup sharing, LRU eviction of released
 * published blocks only when no free block is left, and the counters. */
START_TEST(block_pool_lru_and_reuse) {
    ifa_block_pool p;
    ck_assert_int_eq(ifa_block_pool_init(&p, 4), 0);
    const int32_t a = ifa_block_pool_alloc(&p), b = ifa_block_pool_alloc(&p), c = ifa_block_pool_alloc(&p);
    ck_assert_int_eq(a, 0);
    ck_assert_int_eq(b, 1);
    ck_assert_int_eq(c, 2);
    ck_assert_int_eq(ifa_block_pool_publish(&p, a, 111), 0);
    ck_assert_int_eq(ifa_block_pool_publish(&p, b, 222), 0);
    ck_assert_int_eq(ifa_block_pool_publish(&p, c, 111), -1); /* that prefix has a block already */
    ck_assert_int_eq(ifa_block_pool_lookup(&p, 111), a);      /* shared: refcount 2 */
    ck_assert_int_eq(ifa_block_pool_lookup(&p, 333), -1);
    ifa_block_pool_release(&p, a);
    ifa_block_pool_release(&p, b); /* b cached first, then a */
    ifa_block_pool_release(&p, a);
    ifa_block_pool_release(&p, c); /* unpublished: free */
    ck_assert_int_eq(p.in_use, 0);
    ck_assert_int_eq(p.cached, 2);
    ck_assert_int_eq(ifa_block_pool_available(&p), 4);
    /* free blocks go first (c, then 3), then the least recently released cached block (b), then a */
    ck_assert_int_eq(ifa_block_pool_alloc(&p), c);
    ck_assert_int_eq(ifa_block_pool_alloc(&p), 3);
    ck_assert_int_eq(p.evictions, 0);
    ck_assert_int_eq(ifa_block_pool_lookup(&p, 111), a); /* a revived from the cache: b is now the only one */
    ck_assert_int_eq(ifa_block_pool_alloc(&p), b);
    ck_assert_int_eq(p.evictions, 1);
    ck_assert_int_eq(ifa_block_pool_lookup(&p, 222), -1); /* b's prefix went with it */
    ck_assert_int_eq(ifa_block_pool_alloc(&p), -1);
    ck_assert_int_eq(p.hits, 2);
    ifa_block_pool_free(&p);
}
END_TEST

/* The timing tools pin PoCL's workers unless the caller chose: an unset POCL_AFFINITY becomes 1, a given
 * value (0 included) stands and is what the tool reports. */
/* ifa-bench's --variant: the spec's layout and entries, refusals by rule, IFA_TUNING built on the environment's,
 * and the per-round statistics against the first variant. */
START_TEST(bench_variants_parse_apply_and_count) {
    ifa_bench_variant v;
    char err[320];
    ck_assert_int_eq(ifa_bench_variant_parse("BSND:prefetch_rows=4,chunk_rows=32", &v, err, sizeof err), 0);
    ck_assert_str_eq(v.layout, "BSND");
    ck_assert_str_eq(v.tuning, "prefetch_rows=4,chunk_rows=32");
    ck_assert_int_eq(ifa_bench_variant_parse("default", &v, err, sizeof err), 0);
    ck_assert_str_eq(v.layout, "");
    ck_assert_str_eq(v.tuning, "");
    ck_assert_int_eq(ifa_bench_variant_parse("BNSD:", &v, err, sizeof err), 0);
    ck_assert_str_eq(v.layout, "BNSD");
    ck_assert_int_eq(ifa_bench_variant_parse("BND:chunk_rows=32", &v, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "BSH, BSND or BNSD"));
    ck_assert_int_eq(ifa_bench_variant_parse("BSH:chunk_rows=0", &v, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "chunk_rows takes an integer in [1, 1048576]"));
    ck_assert_int_eq(ifa_bench_variant_parse("prefetch_row=4", &v, err, sizeof err), -1);
    /* kernels=DIR closes the spec (a directory's name may hold commas) and is no tuning entry */
    ck_assert_int_eq(ifa_bench_variant_parse("BSND:chunk_rows=32,kernels=/tmp/a,b", &v, err, sizeof err), 0);
    ck_assert_str_eq(v.layout, "BSND");
    ck_assert_str_eq(v.tuning, "chunk_rows=32");
    ck_assert_str_eq(v.kernels, "/tmp/a,b");
    ck_assert_int_eq(ifa_bench_variant_parse("kernels=k", &v, err, sizeof err), 0);
    ck_assert_str_eq(v.tuning, "");
    ck_assert_str_eq(v.kernels, "k");
    ck_assert_int_eq(ifa_bench_variant_parse("default", &v, err, sizeof err), 0);
    ck_assert_str_eq(v.kernels, "");
    ck_assert_int_eq(ifa_bench_variant_parse("chunk_rows=32,kernels=", &v, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "kernels= needs a directory"));
    ck_assert_int_eq(ifa_bench_variant_parse("chunk_rows=0,kernels=k", &v, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "chunk_rows takes an integer"));
    /* the entries' length limit (one check, with kernels=DIR or without) and the directory's; the longest that
     * fits is taken */
    char spec[sizeof v.tuning + sizeof v.kernels + 32];
    memset(spec, 'x', sizeof v.tuning);
    spec[sizeof v.tuning] = '\0';
    ck_assert_int_eq(ifa_bench_variant_parse(spec, &v, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "tuning entries longer than 239 characters"));
    strcpy(spec + sizeof v.tuning, ",kernels=k");
    ck_assert_int_eq(ifa_bench_variant_parse(spec, &v, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "tuning entries longer than 239 characters"));
    int at = snprintf(spec, sizeof spec, "chunk_rows=32,kernels=");
    memset(spec + at, 'd', sizeof v.kernels);
    spec[at + (int)sizeof v.kernels] = '\0';
    ck_assert_int_eq(ifa_bench_variant_parse(spec, &v, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "kernels= needs a directory of fewer than 256 characters"));
    spec[at + (int)sizeof v.kernels - 1] = '\0';
    ck_assert_int_eq(ifa_bench_variant_parse(spec, &v, err, sizeof err), 0);
    ck_assert_uint_eq(strlen(v.kernels), sizeof v.kernels - 1);
    at = snprintf(spec, sizeof spec, "chunk_rows=32,"); /* then empty entries, which the entry check skips */
    memset(spec + at, ',', sizeof v.tuning - 1 - (size_t)at);
    strcpy(spec + sizeof v.tuning - 1, ",kernels=k");
    ck_assert_int_eq(ifa_bench_variant_parse(spec, &v, err, sizeof err), 0);
    ck_assert_uint_eq(strlen(v.tuning), sizeof v.tuning - 1);

    ck_assert_int_eq(ifa_bench_variant_parse("BSND:pv_block=2", &v, err, sizeof err), 0);
    ck_assert_int_eq(ifa_bench_variant_apply("chunk_rows=16", &v), 0);
    ck_assert_str_eq(getenv("IFA_TUNING"), "chunk_rows=16,pv_block=2");
    ck_assert_int_eq(ifa_bench_variant_apply(NULL, &v), 0);
    ck_assert_str_eq(getenv("IFA_TUNING"), "pv_block=2");
    ck_assert_int_eq(ifa_bench_variant_parse("", &v, err, sizeof err), 0);
    ck_assert_int_eq(ifa_bench_variant_apply("chunk_rows=16", &v), 0);
    ck_assert_str_eq(getenv("IFA_TUNING"), "chunk_rows=16");
    ck_assert_int_eq(ifa_bench_variant_apply("", &v), 0);
    ck_assert_ptr_null(getenv("IFA_TUNING"));

    /* 4 rounds x 3 variants: the second is faster in 3 rounds, the third slower in all */
    const double us[] = {100, 90, 120, 110, 99, 130, 90, 95, 100, 100, 80, 150};
    ifa_bench_variant_stats st;
    ifa_bench_variant_stats_of(us, 4, 3, 0, &st);
    ck_assert_double_eq_tol(st.median_us, 100, 1e-12);
    ck_assert_double_eq_tol(st.vs_first, 1, 1e-12);
    ck_assert_int_eq(st.wins, 0);
    ifa_bench_variant_stats_of(us, 4, 3, 1, &st);
    ck_assert_double_eq_tol(st.median_us, 92.5, 1e-12);
    ck_assert_double_eq_tol(st.low_us, 80, 1e-12);
    ck_assert_double_eq_tol(st.high_us, 99, 1e-12);
    ck_assert_double_eq_tol(st.vs_first, 0.5 * (0.9 + 0.9), 1e-12); /* ratios 0.9, 0.9, 1.0556, 0.8 */
    ck_assert_int_eq(st.wins, 3);
    ifa_bench_variant_stats_of(us, 4, 3, 2, &st);
    ck_assert_double_eq_tol(st.vs_first, 0.5 * (120.0 / 100 + 130.0 / 110), 1e-12); /* 1.2, 1.18, 1.11, 1.5 */
    ck_assert_int_eq(st.wins, 0);
}
END_TEST

START_TEST(pin_sets_affinity_unless_given) {
    const char *before = getenv("POCL_AFFINITY");
    char saved[64] = "";
    if (before) snprintf(saved, sizeof saved, "%s", before);
    ck_assert_int_eq(unsetenv("POCL_AFFINITY"), 0);
    ck_assert_str_eq(ifa_tool_pin_pocl_workers(), "1");
    ck_assert_str_eq(getenv("POCL_AFFINITY"), "1");
    ck_assert_int_eq(setenv("POCL_AFFINITY", "0", 1), 0);
    ck_assert_str_eq(ifa_tool_pin_pocl_workers(), "0");
    ck_assert_str_eq(getenv("POCL_AFFINITY"), "0");
    if (before) setenv("POCL_AFFINITY", saved, 1);
    else unsetenv("POCL_AFFINITY");
}
END_TEST

/* The suites' sampled loop cases (IFA_TEST_SAMPLE, tests/test_util.c): ceil(n / k) of n, and with every other
 * case (k = 2) all residues i % 2, i % 3, i % 4 that a loop of 8 or more reaches and every block i / 4 (the
 * indices the cases decode into layouts, dtypes and split modes; taking every k-th case would keep i % 2 == 0
 * only); an offset loop [s, e) alike; every case under some salt; without sampling every case. */
START_TEST(sampled_loop_cases_reach_every_residue) {
    char picked[64];
    for (int n = 1; n <= 60; ++n) {
        ck_assert_int_eq(test_sample_cases(0, n, 1, 0, picked), n);
        for (int j = 0; j < n; ++j) ck_assert_int_eq(picked[j], 1);
        for (int k = 2; k <= 3; ++k) ck_assert_int_eq(test_sample_cases(0, n, k, 0, picked), (n + k - 1) / k);
        if (n < 8) continue;
        for (int s = 0; s <= 3; s += 3) {
            ck_assert_int_eq(test_sample_cases(s, s + n, 2, 0, picked), (n + 1) / 2);
            for (int m = 2; m <= 4; ++m)
                for (int r = 0; r < m; ++r) {
                    int hit = 0;
                    for (int j = 0; j < n; ++j) hit |= picked[j] && (s + j) % m == r;
                    ck_assert_msg(hit, "n %d from %d: no case with i %% %d == %d", n, s, m, r);
                }
            for (int b = s / 4; b <= (s + n - 1) / 4; ++b) {
                int hit = 0;
                for (int j = 0; j < n; ++j) hit |= picked[j] && (s + j) / 4 == b;
                ck_assert_msg(hit, "n %d from %d: no case with i / 4 == %d", n, s, b);
            }
        }
        /* other IFA_TEST_SEEDs, other halves: over seeds 0 .. n - 1 every case runs */
        char any[64] = {0};
        for (unsigned long long salt = 0; salt < (unsigned long long)n; ++salt) {
            ck_assert_int_eq(test_sample_cases(0, n, 2, salt, picked), (n + 1) / 2);
            for (int j = 0; j < n; ++j) any[j] |= picked[j];
        }
        for (int j = 0; j < n; ++j) ck_assert_msg(any[j], "n %d: case %d under no seed below %d", n, j, n);
    }
}
END_TEST

/* ifa_parallel_for: every item of [0, n) in exactly one range, each range starting at a multiple of the grain,
 * under 1 to 9 threads (more threads than ranges too) and n below, at and above a grain. */
typedef struct cover {
    int64_t n, grain;
    unsigned char seen[3000];
    unsigned char bad_start;
} cover;

static void cover_range(void *p, int64_t lo, int64_t hi) {
    cover *c = p;
    if (lo % c->grain || lo < 0 || hi > c->n || lo >= hi) c->bad_start = 1; /* one flag: set, never cleared */
    for (int64_t i = lo; i < hi; ++i) c->seen[i]++;
}

START_TEST(parallel_for_covers_each_item_once) {
    static const int64_t ns[] = {0, 1, 5, 64, 1000, 2999};
    static const int64_t grains[] = {1, 2, 7, 64, 5000};
    for (int t = 1; t <= 9; t += 2) {
        ifa_parallel_set_threads(t);
        ck_assert_int_eq(ifa_parallel_threads(), t);
        for (size_t a = 0; a < sizeof ns / sizeof *ns; ++a)
            for (size_t g = 0; g < sizeof grains / sizeof *grains; ++g) {
                static cover c;
                memset(&c, 0, sizeof c);
                c.n = ns[a], c.grain = grains[g];
                ifa_parallel_for(c.n, c.grain, cover_range, &c);
                ck_assert_msg(!c.bad_start, "threads %d, n %lld, grain %lld: a range off the grain", t, (long long)c.n,
                              (long long)c.grain);
                for (int64_t i = 0; i < c.n; ++i)
                    ck_assert_msg(c.seen[i] == 1, "threads %d, n %lld, grain %lld: item %lld in %d ranges", t,
                                  (long long)c.n, (long long)c.grain, (long long)i, c.seen[i]);
            }
    }
    ifa_parallel_set_threads(0);
    ck_assert_int_ge(ifa_parallel_threads(), 1);
}
END_TEST

/* A random fill is the same bytes on 1, 2, 3 or 8 threads, and element i is draw i of the seed's sequence (what
 * the fill did on one thread before it was split): ifa_rng_advance(n) is n draws. int4 packs two elements a
 * byte, so a range boundary inside a byte would lose one. */
START_TEST(fill_random_same_on_any_thread_count) {
    ifa_rng a, b;
    ifa_rng_seed(&a, 5), ifa_rng_seed(&b, 5);
    for (int i = 0; i < 1000; ++i) (void)ifa_rng_next(&a);
    ifa_rng_advance(&b, 1000);
    ck_assert(ifa_rng_next(&a) == ifa_rng_next(&b));
    static const ifa_dtype dts[] = {IFA_DTYPE_FLOAT16, IFA_DTYPE_BFLOAT16, IFA_DTYPE_FLOAT32, IFA_DTYPE_INT4,
                                    IFA_DTYPE_INT8, IFA_DTYPE_FLOAT8_E5M2};
    const int64_t n[1] = {3 * 65536 + 5}; /* three ranges of 2^16 and a short one */
    for (size_t d = 0; d < sizeof dts / sizeof *dts; ++d) {
        ifa_host_tensor serial, split;
        ck_assert_int_eq(ifa_host_tensor_alloc(&serial, dts[d], 1, n), 0);
        ck_assert_int_eq(ifa_host_tensor_alloc(&split, dts[d], 1, n), 0);
        ifa_rng r;
        ifa_rng_seed(&r, 77);
        for (int64_t i = 0; i < n[0]; ++i) ifa_host_set(&serial, i, ifa_rng_uniform(&r, -9, 9));
        static const int threads[] = {1, 2, 3, 8};
        for (int t = 0; t < 4; ++t) {
            ifa_parallel_set_threads(threads[t]);
            memset(split.data, 0, split.bytes);
            ifa_host_fill_random(&split, 77, -9, 9);
            ck_assert_msg(memcmp(serial.data, split.data, serial.bytes) == 0, "%s on %d threads differs",
                          ifa_dtype_name(dts[d]), threads[t]);
        }
        ifa_host_tensor_free(&serial);
        ifa_host_tensor_free(&split);
    }
    ifa_parallel_set_threads(0);
}
END_TEST

/* The float64 reference gives the same doubles on 1 and 4 threads (its rows cut into several ranges: 16 rows
 * of 4096 keys at D = 128), with per-batch lengths, sinks, soft-cap and a window, output, LSE and score bounds. */
START_TEST(reference_same_on_any_thread_count) {
    const char *json =
        "{\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": 8, \"num_key_value_heads\": 2, "
        "\"input_layout\": \"BNSD\", \"scale_value\": 0.09, \"softcap\": 30, \"window\": 3500}, \"inputs\": {"
        "\"query\": {\"shape\": [2, 8, 1, 128], \"dtype\": \"float16\", \"random\": {\"seed\": 1}}, "
        "\"key\": {\"shape\": [2, 2, 4096, 128], \"dtype\": \"float16\", \"random\": {\"seed\": 2}}, "
        "\"value\": {\"shape\": [2, 2, 4096, 128], \"dtype\": \"float16\", \"random\": {\"seed\": 3}}, "
        "\"sinks\": {\"shape\": [8], \"dtype\": \"float32\", \"random\": {\"seed\": 4, \"low\": -2, \"high\": 2}}, "
        "\"actual_seq_lengths\": [4096, 2999]}}";
    ifa_case c;
    char err[256];
    ck_assert_msg(ifa_case_parse(json, dir, &c, err, sizeof err) == 0, "%s", err);
    enum { ROWS = 16, OUT = ROWS * 128 };
    static double out[2][OUT], lse[2][ROWS], bound[2][ROWS];
    static const int threads[2] = {1, 4};
    for (int i = 0; i < 2; ++i) {
        ifa_parallel_set_threads(threads[i]);
        ck_assert_int_eq(ifa_reference_ifa(&c, out[i], lse[i], bound[i]), 0);
    }
    ifa_parallel_set_threads(0);
    ck_assert(memcmp(out[0], out[1], sizeof out[0]) == 0);
    ck_assert(memcmp(lse[0], lse[1], sizeof lse[0]) == 0);
    ck_assert(memcmp(bound[0], bound[1], sizeof bound[0]) == 0);
    for (int r = 0; r < ROWS; ++r) ck_assert(isfinite(lse[0][r]) && bound[0][r] > 0);
    ifa_case_free(&c);
}
END_TEST

/* stderr into a file while f runs, then the file's text into out */
static void stderr_of(void (*f)(void), char *out, size_t size) {
    const char *path = path_in("stderr.txt");
    fflush(stderr);
    const int saved = dup(2);
    FILE *sink = fopen(path, "w");
    ck_assert_ptr_nonnull(sink);
    dup2(fileno(sink), 2);
    f();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fclose(sink);
    FILE *in = fopen(path, "r");
    const size_t n = fread(out, 1, size - 1, in);
    out[n] = '\0';
    fclose(in);
}

static void refuse_runs(void) {
    int v = 7;
    ck_assert_int_eq(ifa_arg_int32("tool", "--runs", "0", 1, 100, &v), -1);
    ck_assert_int_eq(v, 7);
}
static void refuse_window(void) {
    long long v = 7;
    ck_assert_int_eq(ifa_arg_int("tool", "--window", "-1", 0, IFA_ARG_NO_MAX, &v), -1);
}
static void refuse_dtype(void) {
    ifa_dtype d = IFA_DTYPE_FLOAT16;
    ck_assert_int_eq(ifa_arg_dtype("tool", "--kv-dtype", "f17", &d), -1);
    ck_assert_int_eq(d, IFA_DTYPE_FLOAT16);
}
static void refuse_choice(void) {
    static const char *const names[] = {"channel", "token"};
    int k = 5;
    ck_assert_int_eq(ifa_arg_choice("tool", "--scales", "chan", names, 2, &k), -1);
    ck_assert_int_eq(k, 5);
}
static void refuse_list(void) {
    long long v[5] = {9, 9, 9, 9, 9};
    ck_assert_int_eq(ifa_arg_int_list("tool", "--shape", "1,2,,4,5", "B,N,N_kv,D,S", 5, 0, v), -1);
    ck_assert(v[0] == 9 && v[4] == 9);
}
static void refuse_real(void) {
    double x = 0.5;
    ck_assert_int_eq(ifa_arg_real("tool", "--follow-up", "1.5", 0, 1, &x), -1);
    ck_assert(x == 0.5);
}

/* A value is the whole argument and inside its rule, or refused with a message naming the option, the value and
 * the rule; a refusal leaves the destination as it was. */
START_TEST(strict_args_accept_and_refuse) {
    long long v = 0;
    int i = 0;
    ck_assert_int_eq(ifa_arg_int("t", "--x", "-12", -20, 20, &v), 0);
    ck_assert_int_eq(v, -12);
    ck_assert_int_eq(ifa_arg_int("t", "--x", "9223372036854775807", 0, IFA_ARG_NO_MAX, &v), 0);
    ck_assert(v == 9223372036854775807LL);
    ck_assert_int_eq(ifa_arg_int32("t", "--x", "100", 1, 100, &i), 0);
    ck_assert_int_eq(i, 100);
    /* not whole, out of range or out of long long's: refused */
    const char *bad[] = {"", "5x", " 5", "+5", "1e3", "0x10", "-", "101", "0", "99999999999999999999", NULL};
    char msg[512];
    fflush(stderr);
    const int saved = dup(2), null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    for (int k = 0; k < 11; ++k) {
        i = 42;
        ck_assert_msg(ifa_arg_int32("t", "--x", bad[k], 1, 100, &i) == -1 && i == 42, "\"%s\" taken",
                      bad[k] ? bad[k] : "NULL");
    }
    unsigned long long u = 3;
    ck_assert_int_eq(ifa_arg_u64("t", "--seed", "18446744073709551615", &u), 0);
    ck_assert(u == 18446744073709551615ULL);
    ck_assert_int_eq(ifa_arg_u64("t", "--seed", "18446744073709551616", &u), -1);
    ck_assert_int_eq(ifa_arg_u64("t", "--seed", "-1", &u), -1);
    double x = 0;
    ck_assert_int_eq(ifa_arg_real("t", "--p", "0.25", 0, 1, &x), 0);
    ck_assert(x == 0.25);
    ck_assert_int_eq(ifa_arg_real("t", "--p", "nan", 0, 1, &x), -1);
    ck_assert_int_eq(ifa_arg_real("t", "--p", "0.5q", 0, 1, &x), -1);
    ifa_dtype d;
    ck_assert_int_eq(ifa_arg_dtype("t", "--dtype", "bf16", &d), 0);
    ck_assert_int_eq(d, IFA_DTYPE_BFLOAT16);
    static const char *const names[] = {"channel", "token", "kivi"};
    ck_assert_int_eq(ifa_arg_choice("t", "--scales", "kivi", names, 3, &i), 0);
    ck_assert_int_eq(i, 2);
    long long l5[5];
    ck_assert_int_eq(ifa_arg_int_list("t", "--shape", "1,32,8,128,8192", "B,N,N_kv,D,S", 5, 0, l5), 0);
    ck_assert(l5[0] == 1 && l5[1] == 32 && l5[2] == 8 && l5[3] == 128 && l5[4] == 8192);
    const char *bad_lists[] = {"1,2,3,4", "1,2,3,4,5,6", "1,2,3,4,5,", ",1,2,3,4", "1,2,-3,4,5", "1,2,3,4,5x", ""};
    for (int k = 0; k < 7; ++k)
        ck_assert_msg(ifa_arg_int_list("t", "--shape", bad_lists[k], "B,N,N_kv,D,S", 5, 0, l5) == -1, "\"%s\" taken",
                      bad_lists[k]);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(null);
    /* the messages */
    stderr_of(refuse_runs, msg, sizeof msg);
    ck_assert_str_eq(msg, "tool: --runs 0: want an integer in [1, 100]\n");
    stderr_of(refuse_window, msg, sizeof msg);
    ck_assert_str_eq(msg, "tool: --window -1: want an integer >= 0\n");
    stderr_of(refuse_dtype, msg, sizeof msg);
    ck_assert_msg(strstr(msg, "tool: --kv-dtype f17: want a dtype (float32, float16, bfloat16,") == msg &&
                      strstr(msg, "float8_e5m2)\n"), "%s", msg);
    stderr_of(refuse_choice, msg, sizeof msg);
    ck_assert_str_eq(msg, "tool: --scales chan: want one of channel, token\n");
    stderr_of(refuse_list, msg, sizeof msg);
    ck_assert_str_eq(msg, "tool: --shape 1,2,,4,5: want B,N,N_kv,D,S: 5 integers >= 0, separated by commas\n");
    stderr_of(refuse_real, msg, sizeof msg);
    ck_assert_str_eq(msg, "tool: --follow-up 1.5: want a number in [0, 1]\n");
}
END_TEST

int main(void) {
    Suite *s = suite_create("tools");
    TCase *t = test_tcase_create("tools");
    tcase_add_test(t, npy_round_trip_every_dtype);
    tcase_add_test(t, block_pool_lru_and_reuse);
    tcase_add_test(t, npy_rejects_malformed);
    tcase_add_test(t, half_conversions);
    tcase_add_test(t, float8_conversions);
    tcase_add_test(t, float8_e5m2_conversions);
    tcase_add_test(t, dtype_max_is_the_largest_finite_code);
    tcase_add_test(t, case_with_npy_inputs_runs);
    tcase_add_test(t, case_with_every_input_runs);
    tcase_add_test(t, case_rejects_bad_fields);
    tcase_add_test(t, case_arrays_linear);
    tcase_add_test(t, poison_unread_marks_the_unread_rows);
    tcase_add_test(t, latent_value_cases);
    tcase_add_test(t, pin_sets_affinity_unless_given);
    tcase_add_test(t, bench_variants_parse_apply_and_count);
    tcase_add_test(t, sampled_loop_cases_reach_every_residue);
    tcase_add_test(t, parallel_for_covers_each_item_once);
    tcase_add_test(t, fill_random_same_on_any_thread_count);
    tcase_add_test(t, reference_same_on_any_thread_count);
    tcase_add_test(t, strict_args_accept_and_refuse);
    suite_add_tcase(s, t);
    return test_run_suite(s);
}
