/* Cases of any registered op, read through the op's registry definition: each input named there is a tensor
 * (as in every case file), each attribute is read by its declared type (an int_list may be a JSON array of
 * integers or of equally long rows, which are flattened: a block_table). ifa-run uses it for the ops that
 * have no case type of their own (KVCacheAppend). */
#ifndef IFA_TOOLS_GENERIC_CASE_H
#define IFA_TOOLS_GENERIC_CASE_H

#include "common/host_tensor.h"
#include "ifa/registry.h"

#define IFA_GENERIC_MAX 32

typedef struct ifa_generic_case {
    const ifa_op_def *def;
    ifa_host_tensor inputs[IFA_GENERIC_MAX]; /* def->inputs order; data NULL when absent */
    ifa_named_attr attrs[IFA_GENERIC_MAX];
    int32_t num_attrs;
    void *owned[IFA_GENERIC_MAX];            /* the attributes' strings and lists */
    int64_t cache_base_bytes;                /* > 0: key_cache and value_cache start this many bytes into buffers of
                                              * that many more bytes (only their own bytes written; read back from
                                              * there): index arithmetic past 2^31 bytes; 0: at offset 0 */
} ifa_generic_case;

/* Parses a case of the op it names; relative .npy paths resolve against base_dir. 0, or -1 with a message
 * naming the field in err. */
int ifa_generic_case_parse(const char *json, const char *base_dir, ifa_generic_case *c, char *err, size_t err_size);
void ifa_generic_case_free(ifa_generic_case *c);
/* The attribute named name, or NULL. */
const ifa_named_attr *ifa_generic_case_attr(const ifa_generic_case *c, const char *name);
/* The input named name, or NULL when absent. */
const ifa_host_tensor *ifa_generic_case_input(const ifa_generic_case *c, const char *name);

#endif
