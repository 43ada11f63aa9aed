/* CLBlast calls and their statuses. */
#include "templates/blas.h"

#include <clblast_c.h>

#include "op_host/runtime/cl_status.h"
#include "core/status.h"

/* CLBlast's own codes (below the OpenCL range), as its header explains them. */
static const char *clblast_meaning(int code) {
    switch (code) {
    case CLBlastNotImplemented: return "routine or functionality not implemented";
    case CLBlastInvalidMatrixA: return "matrix A is not a valid OpenCL buffer";
    case CLBlastInvalidMatrixB: return "matrix B is not a valid OpenCL buffer";
    case CLBlastInvalidMatrixC: return "matrix C is not a valid OpenCL buffer";
    case CLBlastInvalidDimension: return "M, N and K must be larger than zero";
    case CLBlastInvalidLeadDimA: return "the leading dimension of A is too small";
    case CLBlastInvalidLeadDimB: return "the leading dimension of B is too small";
    case CLBlastInvalidLeadDimC: return "the leading dimension of C is too small";
    case CLBlastInsufficientMemoryA: return "matrix A's buffer is too small";
    case CLBlastInsufficientMemoryB: return "matrix B's buffer is too small";
    case CLBlastInsufficientMemoryC: return "matrix C's buffer is too small";
    case CLBlastInsufficientMemoryTemp: return "the temporary buffer is too small";
    case CLBlastInvalidBatchCount: return "the batch count must be positive";
    case CLBlastInvalidLocalMemUsage: return "not enough local memory on this device";
    case CLBlastNoHalfPrecision: return "the device has no half precision";
    case CLBlastNoDoublePrecision: return "the device has no double precision";
    case CLBlastUnknownError: return "unknown error";
    case CLBlastUnexpectedError: return "unexpected error";
    default: return "CLBlast error";
    }
}

ifa_status ifa__blas_status(int code, const char *call, const char *what) {
    if (code == CLBlastSuccess) return IFA_STATUS_OK;
    if (code > -1000) return ifa__fail_cl((cl_int)code, call, "CLBlast, %s", what);
    return ifa__fail(IFA_STATUS_BLAS_ERROR, "%s (%s) failed with CLBlast status %d: %s", call, what, code,
                     clblast_meaning(code));
}

ifa_status ifa__sgemm_batched(const ifa__gemm *g, cl_command_queue queue, cl_event *event, const char *what) {
    const CLBlastStatusCode st = CLBlastSgemmStridedBatched(
        CLBlastLayoutRowMajor, CLBlastTransposeNo, g->trans_b ? CLBlastTransposeYes : CLBlastTransposeNo, g->m, g->n,
        g->k, 1.0f, g->a, g->a_off, g->a_ld, g->a_stride, g->b, g->b_off, g->b_ld, g->b_stride, g->beta, g->c,
        g->c_off, g->c_ld, g->c_stride, g->batch, &queue, event);
    return ifa__blas_status(st, "CLBlastSgemmStridedBatched", what);
}
