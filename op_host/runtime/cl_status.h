/* Internal: turning a failed OpenCL call into an ifa status and last-error message. */
#ifndef IFA_OP_HOST_RUNTIME_CL_STATUS_H
#define IFA_OP_HOST_RUNTIME_CL_STATUS_H

#include "ifa/ifa.h"
#include "core/status.h"

/* Records a failed OpenCL call (its name, code and symbolic name, and context text) and returns the ifa
 * status it maps to: OUT_OF_MEMORY for allocation failures, BUILD_FAILED for build errors, else OPENCL_ERROR. */
ifa_status ifa__fail_cl(cl_int err, const char *call, const char *fmt, ...) IFA__PRINTF(3, 4);
/* Symbolic name of an OpenCL error code ("CL_OUT_OF_RESOURCES"); "CL_UNKNOWN_ERROR" if not known. */
const char *ifa__cl_error_name(cl_int err);

#endif
