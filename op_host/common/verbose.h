/* Internal: IFA_VERBOSE=1 makes every run print one line to stderr with the template, the tiling key, the kernel
 * shape and why each shape the planner weighed before it was passed over, and the call as an ifa-run case (random inputs of the same shapes and dtypes), so it can be replayed. */
#ifndef IFA_OP_HOST_COMMON_VERBOSE_H
#define IFA_OP_HOST_COMMON_VERBOSE_H

#include "ifa/ifa.h"
#include "tiling/device_facts.h"

/* Prints the line if IFA_VERBOSE is set to a non-empty value other than "0" (read at the process's first
 * call of any op); facts: the device's own (IFA_DEVICE_FACTS applied here, as the planner applied it). */
void ifa__verbose_run(const ifa_plan *plan, const ifa_device_facts *facts, const ifa_incre_flash_attention_args *args);
/* The same for a KVCacheAppend run (validated args; B = key's first dimension). */
void ifa__verbose_append(const ifa_kv_cache_append_args *args);
/* The same for a MergeAttentionStates run (validated args). */
void ifa__verbose_merge(const ifa_merge_attention_states_args *args);

#endif
