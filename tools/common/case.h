/* The JSON case format of ifa-run (docs/case-format.md):
 * {"op": "IncreFlashAttention", "attrs": {...}, "inputs": {"query": ..., "key": ..., "value": ...,
 *  "actual_seq_lengths": [..]}}; a tensor is "file.npy", {"file": "file.npy", "dtype": "bfloat16"} or
 * {"shape": [..], "dtype": "float16", "random": {"seed": 1, "low": -1, "high": 1}}. */
#ifndef IFA_TOOLS_CASE_H
#define IFA_TOOLS_CASE_H

#include <cjson/cJSON.h>

#include "common/runner.h"

/* Every loader's message for memory it could not get begins with this (ifa_case_no_memory tells): a resource
 * failure (ifa-run exit 3), where any other message is a bad case (exit 2). */
#define IFA_CASE_NO_MEMORY "out of memory: "
int ifa_case_no_memory(const char *err);

/* Parses JSON text; relative .npy paths are resolved against base_dir. Returns 0, or -1 with a message
 * naming the field in err. */
int ifa_case_parse(const char *json, const char *base_dir, ifa_case *c, char *err, size_t err_size);
/* Loads the tensor a case field describes (a .npy path relative to base_dir, or a generated one); name
 * labels errors ("inputs.NAME ..."). Returns 0, or -1 with the message in err. */
int ifa_case_load_tensor(const cJSON *j, const char *name, const char *base_dir, ifa_host_tensor *t, char *err,
                         size_t err_size);
/* Reads a case file (at most 16 MiB) into a malloc'd NUL-terminated string and its folder into base; NULL
 * with a message in err on failure. */
char *ifa_case_read_file(const char *path, char *base, size_t base_size, char *err, size_t err_size);
/* Reads and parses a case file. */
int ifa_case_load(const char *path, ifa_case *c, char *err, size_t err_size);

#endif
