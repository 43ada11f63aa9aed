/* Benchmark shape lists in the CSV formats of docs/bench/peers/: a header row names the columns, lines
 * starting with '#' are comments. Columns understood: B (default 1), N, N_kv, D, S_kv, us (PyTorch file);
 * D, nh_kv, gqa, kv, type_KV, us_per_run (ggml file: B = 1, N = nh_kv·gqa, N_kv = nh_kv). */
#ifndef IFA_TOOLS_BENCH_SHAPES_H
#define IFA_TOOLS_BENCH_SHAPES_H

#include <stddef.h>
#include <stdint.h>

typedef struct ifa_bench_shape {
    int64_t b, n, nkv, d, s;
    char kv_type[16]; /* "f16" unless the file says otherwise (e.g. "q8_0") */
    double us;        /* the file's time per run in µs, 0 if it has none */
} ifa_bench_shape;

/* Reads a shape file into a malloc'd array. Returns 0, or -1 with a message in err. */
int ifa_bench_shapes_load(const char *path, ifa_bench_shape **out, int *count, char *err, size_t err_size);

/* The device a shape file's times were measured on: its "# device: NAME" comment line (the OpenCL device name, as
 * ifa-bench prints it) into out. 1 when the file has one, 0 when not (or it cannot be read). */
int ifa_bench_shapes_device(const char *path, char *out, size_t size);

/* The first entry of list with s's sizes and KV type, or NULL. */
const ifa_bench_shape *ifa_bench_shapes_find(const ifa_bench_shape *list, int count, const ifa_bench_shape *s);

#endif
