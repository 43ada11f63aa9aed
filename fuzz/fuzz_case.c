#define _POSIX_C_SOURCE 200809L /* setenv */
/* libFuzzer target: the JSON case loaders (tools/common/case.c, merge_case.c, generic_case.c) on arbitrary bytes,
 * up to 1 MiB (scripts/fuzz: long arrays, deep nesting). It must
 * return a case or a message, never crash, hang, leak or trip a sanitizer. File inputs resolve against a
 * folder that does not exist, and generated tensors are capped at 4096 elements. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/case.h"
#include "common/generic_case.h"
#include "common/merge_case.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    setenv("IFA_CASE_MAX_ELEMENTS", "4096", 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char err[1024];
    ifa_case c;
    if (ifa_case_parse(text, "/nonexistent-ifa-fuzz", &c, err, sizeof err) == 0) ifa_case_free(&c);
    ifa_merge_case m;
    if (ifa_merge_case_parse(text, "/nonexistent-ifa-fuzz", &m, err, sizeof err) == 0) ifa_merge_case_free(&m);
    ifa_generic_case g;
    if (ifa_generic_case_parse(text, "/nonexistent-ifa-fuzz", &g, err, sizeof err) == 0) ifa_generic_case_free(&g);
    free(text);
    return 0;
}
