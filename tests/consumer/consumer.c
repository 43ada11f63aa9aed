/* An engine's first contact with an installed ifa: only the public headers and libifa.so; builds as C11
 * and as C++11. It checks that the header and the loaded library agree on the version, that a bad argument
 * comes back as a status with a message, and that one GQA decode step (fp32, BSH, two batches of different
 * lengths) matches a float64 softmax computed here. Exit 0 on pass, 1 on a wrong result, 2 when no OpenCL
 * device can be used. */
#include <ifa/ifa.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 2, N = 4, NKV = 2, D = 64, S = 77 };

static float frand(unsigned *state) {
    *state = *state * 1664525u + 1013904223u;
    return (float)(*state >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
}

/* out[b][h][:] of softmax(q . k^T * scale) . v over the first len[b] rows, in double */
static double max_error(const float *q, const float *k, const float *v, const float *out, const int64_t *len,
                        double scale) {
    double worst = 0;
    for (int b = 0; b < B; ++b)
        for (int h = 0; h < N; ++h) {
            const int kvh = h / (N / NKV);
            const float *qh = q + ((size_t)b * N + h) * D;
            double s[S], m = -INFINITY, l = 0;
            for (int j = 0; j < len[b]; ++j) {
                const float *kj = k + (((size_t)b * S + j) * NKV + kvh) * D;
                double dot = 0;
                for (int d = 0; d < D; ++d) dot += (double)qh[d] * kj[d];
                s[j] = dot * scale;
                m = fmax(m, s[j]);
            }
            for (int j = 0; j < len[b]; ++j) l += s[j] = exp(s[j] - m);
            for (int d = 0; d < D; ++d) {
                double o = 0;
                for (int j = 0; j < len[b]; ++j) o += s[j] * v[(((size_t)b * S + j) * NKV + kvh) * D + d];
                const double got = out[((size_t)b * N + h) * D + d];
                worst = fmax(worst, fabs(got - o / l));
            }
        }
    return worst;
}

int main(void) {
    printf("ifa headers %d.%d.%d, library %s\n", IFA_VERSION_MAJOR, IFA_VERSION_MINOR, IFA_VERSION_PATCH,
           ifa_version_string());
    if (ifa_version() != IFA_VERSION) {
        fprintf(stderr, "FAIL: headers say %d, the loaded library %u\n", IFA_VERSION, ifa_version());
        return 1;
    }
    ifa_context *ctx;
    if (ifa_context_create_default(NULL, &ctx) != IFA_STATUS_OK) {
        fprintf(stderr, "no OpenCL device: %s\n", ifa_last_error());
        return 2;
    }
    cl_context cl = ifa_context_cl_context(ctx);
    cl_int err;
    cl_command_queue queue = clCreateCommandQueue(cl, ifa_context_device(ctx), 0, &err);

    static float q[B * N * D], k[B * S * NKV * D], v[B * S * NKV * D], out[B * N * D];
    unsigned state = 7;
    for (size_t i = 0; i < sizeof q / sizeof q[0]; ++i) q[i] = frand(&state);
    for (size_t i = 0; i < sizeof k / sizeof k[0]; ++i) k[i] = frand(&state), v[i] = frand(&state);
    for (size_t i = 0; i < sizeof out / sizeof out[0]; ++i) out[i] = NAN; /* poison: every value must be written */
    cl_mem qm = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof q, q, &err);
    /* K and V as an engine's cache would be made (docs/api.md; small here, so plain buffers) */
    cl_mem km = NULL, vm = NULL;
    if (ifa_buffer_create(ctx, CL_MEM_READ_ONLY, sizeof k, &km) != IFA_STATUS_OK ||
        ifa_buffer_create(ctx, CL_MEM_READ_ONLY, sizeof v, &vm) != IFA_STATUS_OK ||
        clEnqueueWriteBuffer(queue, km, CL_TRUE, 0, sizeof k, k, 0, NULL, NULL) != CL_SUCCESS ||
        clEnqueueWriteBuffer(queue, vm, CL_TRUE, 0, sizeof v, v, 0, NULL, NULL) != CL_SUCCESS) {
        fprintf(stderr, "FAIL: K/V buffers: %s\n", ifa_last_error());
        return 1;
    }
    cl_mem om = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof out, out, &err);
    if (!queue || !qm || !km || !vm || !om) {
        fprintf(stderr, "FAIL: OpenCL queue or buffer creation failed (%d)\n", err);
        return 1;
    }

    ifa_tensor tq = {qm, 0, IFA_DTYPE_FLOAT32, 3, {B, 1, N * D}};
    ifa_tensor tk = {km, 0, IFA_DTYPE_FLOAT32, 3, {B, S, NKV * D}}, tv = {vm, 0, IFA_DTYPE_FLOAT32, 3, {B, S, NKV * D}};
    ifa_tensor to = {om, 0, IFA_DTYPE_FLOAT32, 3, {B, 1, N * D}};
    const int64_t len[B] = {S, 30};
    ifa_incre_flash_attention_args a;
    ifa_incre_flash_attention_args_init(&a);
    a.query = &tq, a.key = &tk, a.value = &tv, a.attention_out = &to;
    a.num_heads = N, a.num_key_value_heads = 3; /* does not divide N: must be refused */
    a.scale_value = 1 / sqrt((double)D);
    a.actual_seq_lengths = len, a.actual_seq_lengths_count = B;
    ifa_plan plan;
    size_t ws = 0;
    int failed = 0;
    ifa_status st = ifa_incre_flash_attention_get_workspace_size(ctx, &a, &plan, &ws);
    if (st == IFA_STATUS_OK || !strstr(ifa_last_error(), "num_key_value_heads")) {
        fprintf(stderr, "FAIL: num_key_value_heads 3 with 4 heads gave %s: \"%s\"\n", ifa_status_name(st),
                ifa_last_error());
        failed = 1;
    } else
        printf("refused as it should be: %s\n", ifa_last_error());

    a.num_key_value_heads = NKV;
    cl_mem wm = NULL;
    st = ifa_incre_flash_attention_get_workspace_size(ctx, &a, &plan, &ws);
    if (st == IFA_STATUS_OK && ws > 0) wm = clCreateBuffer(cl, CL_MEM_READ_WRITE, ws, NULL, &err);
    if (st == IFA_STATUS_OK) st = ifa_incre_flash_attention_run(ctx, &plan, &a, wm, 0, queue, 0, NULL, NULL);
    if (st == IFA_STATUS_OK &&
        clEnqueueReadBuffer(queue, om, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL) != CL_SUCCESS)
        st = IFA_STATUS_OPENCL_ERROR;
    if (st != IFA_STATUS_OK) {
        fprintf(stderr, "FAIL: %s\n", ifa_last_error());
        failed = 1;
    } else {
        const double e = max_error(q, k, v, out, len, a.scale_value);
        printf("max |ifa - float64| = %.3g (tolerance 1e-5)\n", e);
        if (!(e <= 1e-5)) failed = 1;
    }
    if (wm) clReleaseMemObject(wm);
    clReleaseMemObject(qm), clReleaseMemObject(km), clReleaseMemObject(vm), clReleaseMemObject(om);
    clReleaseCommandQueue(queue);
    ifa_context_destroy(ctx);
    printf("%s\n", failed ? "FAIL" : "PASS");
    return failed;
}
