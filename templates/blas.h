/* Internal: the matrix products of the cv template through CLBlast, and CLBlast's status codes turned into
 * ifa statuses with messages (CLBlast reports errors by code; it never aborts the caller). */
#ifndef IFA_TEMPLATES_BLAS_H
#define IFA_TEMPLATES_BLAS_H

#include "ifa/ifa.h"

/* C_e = A_e x op(B_e) + beta x C_e for every e < batch, row-major fp32, with op(B) = B^T when trans_b.
 * Offsets, leading dimensions and strides (between consecutive e) are in floats. */
typedef struct ifa__gemm {
    size_t m, n, k;
    int trans_b;
    cl_mem a;
    size_t a_off, a_ld, a_stride;
    cl_mem b;
    size_t b_off, b_ld, b_stride;
    float beta;
    cl_mem c;
    size_t c_off, c_ld, c_stride;
    size_t batch;
} ifa__gemm;

/* Enqueues g on queue (after everything enqueued before it: CLBlast takes no wait list, so queue must be
 * in order). event (may be NULL) receives the last kernel's event. what names the product in messages. */
ifa_status ifa__sgemm_batched(const ifa__gemm *g, cl_command_queue queue, cl_event *event, const char *what);

/* The ifa status for CLBlast status code (0 is OK), recording a message that names call, what, the code
 * and CLBlast's meaning of it: OpenCL codes map as ifa__fail_cl maps them (OUT_OF_MEMORY, BUILD_FAILED,
 * OPENCL_ERROR), CLBlast's own codes to BLAS_ERROR. */
ifa_status ifa__blas_status(int code, const char *call, const char *what);

#endif
