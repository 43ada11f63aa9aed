/* The buffers the timing tools put K/V in, one rule for ifa-bench and ifa-decode. */
#ifndef IFA_TOOLS_STREAM_BUFFER_H
#define IFA_TOOLS_STREAM_BUFFER_H

#include "ifa/ifa.h"

/* A buffer of bytes (> 0) for data the kernels stream: ifa_buffer_create's (on a CPU device huge-page memory
 * at the tuning row's start), or with plain (the tools' --plain-buffers) clCreateBuffer's, as most callers
 * make them. NULL on failure, with the reason on stderr after the tool's name. */
cl_mem ifa_tool_stream_buffer(ifa_context *ctx, cl_mem_flags flags, size_t bytes, int plain, const char *tool);

#endif
