#include "common/stream_buffer.h"

#include <stdio.h>

cl_mem ifa_tool_stream_buffer(ifa_context *ctx, cl_mem_flags flags, size_t bytes, int plain, const char *tool) {
    cl_mem m = NULL;
    if (plain) {
        cl_int err;
        m = clCreateBuffer(ifa_context_cl_context(ctx), flags, bytes, NULL, &err);
        if (!m) fprintf(stderr, "%s: clCreateBuffer of %zu bytes failed (%d)\n", tool, bytes, (int)err);
    } else if (ifa_buffer_create(ctx, flags, bytes, &m) != IFA_STATUS_OK) {
        fprintf(stderr, "%s: %s\n", tool, ifa_last_error());
    }
    return m;
}
