#define _POSIX_C_SOURCE 200809L /* mkstemp, unlink */
/* libFuzzer target: the .npy reader (tools/common/npy.c) on arbitrary file contents, read under each mark (none,
 * bfloat16, int4, both float8s). It must return a tensor or a message, never crash, hang, leak, trip a sanitizer
 * or allocate what the file cannot hold (the header's claimed size is checked against the file's first). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/npy.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    snprintf(path, sizeof path, "/tmp/ifa_fuzz_npy_XXXXXX");
    const int fd = mkstemp(path);
    if (fd < 0) abort(); /* the harness itself, before any input */
    close(fd);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    const int ok = fwrite(data, 1, size, f) == size;
    if (fclose(f) != 0 || !ok) return 0;
    static const ifa_dtype marks[] = {IFA_DTYPE_COUNT_, IFA_DTYPE_BFLOAT16, IFA_DTYPE_INT4, IFA_DTYPE_FLOAT8_E4M3,
                                      IFA_DTYPE_FLOAT8_E5M2};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; ++i) {
        ifa_host_tensor t;
        char err[512];
        if (ifa_npy_read(path, marks[i], &t, err, sizeof err) == 0) ifa_host_tensor_free(&t);
    }
    return 0;
}
