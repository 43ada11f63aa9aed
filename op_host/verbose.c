#define _POSIX_C_SOURCE 200809L /* flockfile */
#include "op_host/verbose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_host/ifa_check.h"

static void tensor_json(FILE *f, const char *name, const ifa_tensor *t, int seed) {
    fprintf(f, "\"%s\": {\"shape\": [", name);
    for (int i = 0; i < t->ndim; ++i) fprintf(f, i ? ", %lld" : "%lld", (long long)t->shape[i]);
    fprintf(f, "], \"dtype\": \"%s\", \"random\": {\"seed\": %d}}", ifa_dtype_name(t->dtype), seed);
}

void ifa__verbose_run(const ifa_plan *plan, const ifa_incre_flash_attention_args *a) {
    const char *v = getenv("IFA_VERBOSE");
    if (!v || !*v || strcmp(v, "0") == 0) return;
    const ifa_problem *p = &plan->problem;
    float scale;
    memcpy(&scale, &p->scale_bits, sizeof scale);
    flockfile(stderr);
    fprintf(stderr,
            "ifa_verbose: op=IncreFlashAttention template=%s tiling_key=%llu work_group_size=%d chunk_rows=%d "
            "heads_per_group=%d workspace=%lld case={\"op\": \"IncreFlashAttention\", \"attrs\": {\"num_heads\": %lld, "
            "\"num_key_value_heads\": %lld, \"scale_value\": %.9g, \"input_layout\": \"%s\", \"softmax_lse_flag\": %s}, "
            "\"inputs\": {",
            plan->template_id == IFA_TEMPLATE_ALL_VECTOR ? "all_vector" : "cv", (unsigned long long)plan->tiling_key,
            (int)plan->work_group_size, (int)plan->chunk_rows, (int)plan->heads_per_group,
            (long long)plan->workspace_bytes, (long long)p->num_heads, (long long)p->num_kv_heads, (double)scale,
            ifa__layout_name((ifa_layout)p->layout), p->has_lse ? "true" : "false");
    tensor_json(stderr, "query", a->query, 1);
    fputs(", ", stderr);
    tensor_json(stderr, "key", a->key, 2);
    fputs(", ", stderr);
    tensor_json(stderr, "value", a->value, 3);
    if (a->actual_seq_lengths_count > 0) {
        fputs(", \"actual_seq_lengths\": [", stderr);
        for (int64_t i = 0; i < a->actual_seq_lengths_count; ++i)
            fprintf(stderr, i ? ", %lld" : "%lld", (long long)a->actual_seq_lengths[i]);
        fputc(']', stderr);
    }
    fputs("}}\n", stderr);
    funlockfile(stderr);
}
