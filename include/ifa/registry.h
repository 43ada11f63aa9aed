/* ifa's op registry: every op of the package described as data (inputs, outputs, attributes, legal dtypes)
 * and callable generically with named tensors and attributes, so that a framework binding is written once
 * for all ops (python/ifa/ is one). docs/registry.md documents each op's definition as JSON.
 *
 * A generic call names device tensors (ifa_named_tensor) and attributes (ifa_named_attr). Host arrays of the
 * typed APIs (actual_seq_lengths, block_table, rope_positions, ...) are INT_LIST attributes here. Names not
 * in the op's definition, and attributes of the wrong type, are INVALID_ATTRIBUTE naming them. */
#ifndef IFA_REGISTRY_H
#define IFA_REGISTRY_H

#include "ifa/ifa.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ifa_attr_type {
    IFA_ATTR_INT = 0,      /* int64 */
    IFA_ATTR_FLOAT = 1,    /* double */
    IFA_ATTR_STRING = 2,
    IFA_ATTR_BOOL = 3,     /* int64 0 or 1 */
    IFA_ATTR_INT_LIST = 4  /* int64 array (host data the op reads at call time) */
} ifa_attr_type;

/* A tensor input or output: legal dtypes as a bit mask (bit d = ifa_dtype d), rank range, whether it is
 * required. in_place: an input the op writes (KVCacheAppend's caches). */
typedef struct ifa_tensor_def {
    const char *name;
    int32_t required;
    uint32_t dtypes;
    int32_t min_rank, max_rank;
    int32_t in_place;
    const char *doc;
} ifa_tensor_def;

typedef struct ifa_attr_def {
    const char *name;
    ifa_attr_type type;
    int32_t required;
    const char *default_value; /* as text ("1.0", "BSH", "[]"), NULL for none */
    const char *doc;
} ifa_attr_def;

/* One legal dtype combination: the dtype of each named tensor in it (-1 for "any legal"). */
typedef struct ifa_dtype_combo {
    const char *names[6];
    int32_t dtypes[6];
} ifa_dtype_combo;

typedef struct ifa_op_def {
    const char *name;
    const char *doc;
    const ifa_tensor_def *inputs;
    int32_t num_inputs;
    const ifa_tensor_def *outputs;
    int32_t num_outputs;
    const ifa_attr_def *attrs;
    int32_t num_attrs;
    const ifa_dtype_combo *combos; /* the main dtype combinations (docs); the op's checks are the authority */
    int32_t num_combos;
} ifa_op_def;

typedef struct ifa_named_tensor {
    const char *name;
    ifa_tensor tensor;
} ifa_named_tensor;

typedef struct ifa_named_attr {
    const char *name;
    ifa_attr_type type;
    int64_t i;             /* INT, BOOL */
    double f;              /* FLOAT */
    const char *s;         /* STRING */
    const int64_t *list;   /* INT_LIST */
    int64_t list_len;
} ifa_named_attr;

/* The arguments of one generic call: its tensors (inputs and outputs alike) and attributes. */
typedef struct ifa_op_call {
    const ifa_named_tensor *tensors;
    int32_t num_tensors;
    const ifa_named_attr *attrs;
    int32_t num_attrs;
} ifa_op_call;

/* Number of registered ops, and the i-th (NULL outside [0, count)). */
IFA_API int32_t ifa_op_count(void);
IFA_API const ifa_op_def *ifa_op_at(int32_t i);
/* The op named name: OK and *def, or INVALID_ATTRIBUTE naming the ops there are. */
IFA_API ifa_status ifa_op_find(const char *name, const ifa_op_def **def);
/* The definition as JSON text (malloc'd, release with ifa_free); NULL when out of memory. */
IFA_API char *ifa_op_def_json(const ifa_op_def *def);
/* Releases memory the library returned. */
IFA_API void ifa_free(void *p);
/* sizeof(ifa_plan), for bindings that hold plans as opaque bytes. */
IFA_API size_t ifa_plan_size(void);

/* Infers the outputs' dtypes and shapes from the call's inputs and attributes (buffers may be NULL), so
 * that a framework can allocate them before planning: outputs[i] (def->num_outputs of them) gets the i-th
 * output's dtype, ndim and shape, or ndim 0 when the call does not produce it (an optional output that the
 * attributes turn off). Ops that write in place have no outputs. */
IFA_API ifa_status ifa_op_infer(const ifa_op_def *def, const ifa_op_call *call, ifa_tensor *outputs);

/* Phase 1 of any op: validates and plans; *plan receives the op's plan (IncreFlashAttention's; other ops
 * leave it zeroed) and *workspace_bytes what run needs. */
IFA_API ifa_status ifa_op_get_workspace_size(ifa_context *ctx, const ifa_op_def *def, const ifa_op_call *call,
                                             ifa_plan *plan, size_t *workspace_bytes);
/* Before serving, any op: IncreFlashAttention builds the kernels of its steps up to the call's batch size and
 * lengths (ifa_incre_flash_attention_prepare: on a CPU device with queue each also launched once); the other
 * ops' kernels follow the call's dtypes and attributes alone, so their first run builds the only one (validated
 * here, *variants 0). queue and variants may be NULL. */
IFA_API ifa_status ifa_op_prepare(ifa_context *ctx, const ifa_op_def *def, const ifa_op_call *call,
                                  cl_command_queue queue, int64_t *variants);
/* Phase 2 of any op, with the plan of phase 1 and a workspace of its size; as the typed run functions. */
IFA_API ifa_status ifa_op_run(ifa_context *ctx, const ifa_op_def *def, const ifa_op_call *call, const ifa_plan *plan,
                              cl_mem workspace, size_t workspace_offset, cl_command_queue queue,
                              cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event);

#ifdef __cplusplus
}
#endif
#endif
