/* ifa_buffer_create's placement rule, for the tools that report it. */
#ifndef IFA_OP_HOST_RUNTIME_BUFFER_H
#define IFA_OP_HOST_RUNTIME_BUFFER_H

#include <stddef.h>
#include <stdint.h>

/* Bytes from a 2 MiB boundary to where ifa_buffer_create starts a CPU device's buffer for this vendor: the
 * tuning row's buffer_offset (IFA_TUNING included) within one huge page, rounded down to a multiple of 128. */
size_t ifa__buffer_start(int32_t vendor);

#endif
