/* Internal: the argument checks every op shares. Each failure returns its status with a message naming
 * the argument (name) and the rule. */
#ifndef IFA_OP_HOST_TENSOR_CHECK_H
#define IFA_OP_HOST_TENSOR_CHECK_H

#include "ifa/ifa.h"
#include "op_host/status.h"

/* "(2, 1, 128)" into buf (n bytes); returns buf. */
const char *ifa__shape_str(const ifa_tensor *t, char *buf, size_t n);
/* A descriptor's own rules: rank in [1, 8], dimensions >= 1, byte counts that fit 64 bits, a known dtype and
 * an offset that is a multiple of the element size. */
ifa_status ifa__check_descriptor(const ifa_tensor *t, const char *name);
/* t names a valid cl_mem holding offset + its bytes. */
ifa_status ifa__check_buffer(const ifa_tensor *t, const char *name);

#endif
