/* The JSON case format of ifa-run (docs/case-format.md):
 * {"op": "IncreFlashAttention", "attrs": {...}, "inputs": {"query": ..., "key": ..., "value": ...,
 *  "actual_seq_lengths": [..]}}; a tensor is "file.npy", {"file": "file.npy", "dtype": "bfloat16"} or
 * {"shape": [..], "dtype": "float16", "random": {"seed": 1, "low": -1, "high": 1}}. */
#ifndef IFA_TOOLS_CASE_H
#define IFA_TOOLS_CASE_H

#include "common/runner.h"

/* Parses JSON text; relative .npy paths are resolved against base_dir. Returns 0, or -1 with a message
 * naming the field in err. */
int ifa_case_parse(const char *json, const char *base_dir, ifa_case *c, char *err, size_t err_size);
/* Reads and parses a case file. */
int ifa_case_load(const char *path, ifa_case *c, char *err, size_t err_size);

#endif
