/* Internal: the split counters of the fused combine (ifa_attention_end.clh, FUSED), one buffer per in-order queue. */
#ifndef IFA_OP_HOST_RUNTIME_COUNTERS_H
#define IFA_OP_HOST_RUNTIME_COUNTERS_H

#include "op_host/runtime/context.h"

/* Sets *out to a buffer of at least n int32 counters, all 0 between runs, that only runs on queue use (the
 * fused combine's last split sets each counter back to 0, so an in-order queue's runs can share them), or to
 * NULL when queue executes out of order (two runs on it may overlap: the caller launches the combine kernel
 * instead). The buffer belongs to ctx; it stays valid for the commands enqueued with it even if a later call
 * replaces it. Fails only when OpenCL does (querying the queue, allocating the buffer). */
ifa_status ifa__combine_counters(ifa_context *ctx, cl_command_queue queue, int64_t n, cl_mem *out);

/* Releases every counter buffer of ctx (context destruction). */
void ifa__combine_counters_clear(ifa_context *ctx);

#endif
