#include "common/merge_case.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/case.h"
#include "common/json_strict.h"

int ifa_merge_case_parse(const char *json, const char *base, ifa_merge_case *c, char *err, size_t err_size) {
    memset(c, 0, sizeof *c);
    static const char *const top[] = {"op", "attrs", "inputs"};
    cJSON *root = ifa_json_parse_case(json, top, sizeof top / sizeof *top, err, err_size);
    if (!root) return -1;
    int rc = -1;
    const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(root, "attrs");
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(root, "inputs");
    const cJSON *it;
    if (!cJSON_IsObject(inputs) || (attrs && !cJSON_IsObject(attrs))) {
        snprintf(err, err_size, "\"inputs\" must be an object (and \"attrs\", if given)");
        goto done;
    }
    cJSON_ArrayForEach(it, attrs) {
        if (strcmp(it->string, "merged_lse_flag") != 0 && strcmp(it->string, "out_dtype") != 0) {
            snprintf(err, err_size, "attrs.%.64s is not an attribute of MergeAttentionStates", it->string);
            goto done;
        }
    }
    cJSON_ArrayForEach(it, inputs) {
        if (strcmp(it->string, "partial_outputs") != 0 && strcmp(it->string, "partial_lses") != 0) {
            snprintf(err, err_size, "inputs.%.64s is not an input of MergeAttentionStates", it->string);
            goto done;
        }
    }
    const cJSON *flag = attrs ? cJSON_GetObjectItemCaseSensitive(attrs, "merged_lse_flag") : NULL;
    if (flag && !cJSON_IsBool(flag)) {
        snprintf(err, err_size, "attrs.merged_lse_flag must be true or false");
        goto done;
    }
    c->lse_flag = flag ? cJSON_IsTrue(flag) : 1;
    if (ifa_case_load_tensor(cJSON_GetObjectItemCaseSensitive(inputs, "partial_outputs"), "partial_outputs", base,
                             &c->partial_outputs, err, err_size) ||
        ifa_case_load_tensor(cJSON_GetObjectItemCaseSensitive(inputs, "partial_lses"), "partial_lses", base,
                             &c->partial_lses, err, err_size))
        goto done;
    c->out_dtype = c->partial_outputs.dtype;
    const cJSON *odt = attrs ? cJSON_GetObjectItemCaseSensitive(attrs, "out_dtype") : NULL;
    if (odt && (!cJSON_IsString(odt) || ifa_dtype_from_name(odt->valuestring, &c->out_dtype) != 0)) {
        snprintf(err, err_size, "attrs.out_dtype must name a dtype such as \"float16\"");
        goto done;
    }
    if (c->partial_outputs.ndim < 2) {
        snprintf(err, err_size, "inputs.partial_outputs must have rank >= 2 (P, rows..., D)");
        goto done;
    }
    rc = 0;
done:
    cJSON_Delete(root);
    if (rc != 0) ifa_merge_case_free(c);
    return rc;
}

void ifa_merge_case_free(ifa_merge_case *c) {
    ifa_host_tensor_free(&c->partial_outputs);
    ifa_host_tensor_free(&c->partial_lses);
}

void ifa_merge_result_free(ifa_merge_result *r) {
    ifa_host_tensor_free(&r->out);
    ifa_host_tensor_free(&r->lse);
}

static void describe(ifa_tensor *t, const ifa_host_tensor *h, cl_mem m) {
    memset(t, 0, sizeof *t);
    t->buffer = m, t->dtype = h->dtype, t->ndim = h->ndim;
    memcpy(t->shape, h->shape, sizeof t->shape);
}

ifa_status ifa_merge_case_run(ifa_context *ctx, cl_command_queue queue, const ifa_merge_case *c, ifa_merge_result *r) {
    memset(r, 0, sizeof *r);
    const ifa_host_tensor *po = &c->partial_outputs, *pl = &c->partial_lses;
    const int lse_rank = po->ndim > 2 ? po->ndim - 2 : 1;
    int64_t lse_shape[IFA_MAX_DIMS] = {1};
    for (int i = 0; i < po->ndim - 2; ++i) lse_shape[i] = po->shape[i + 1];
    if (ifa_host_tensor_alloc(&r->out, c->out_dtype, po->ndim - 1, po->shape + 1) != 0 ||
        (c->lse_flag && ifa_host_tensor_alloc(&r->lse, IFA_DTYPE_FLOAT32, lse_rank, lse_shape) != 0)) {
        snprintf(r->error, sizeof r->error, "host memory for the merged output: out of memory");
        return IFA_STATUS_OUT_OF_MEMORY;
    }
    for (int64_t i = 0; i < ifa_host_tensor_numel(&r->out); ++i) ifa_host_set(&r->out, i, NAN);
    for (int64_t i = 0; c->lse_flag && i < ifa_host_tensor_numel(&r->lse); ++i) ifa_host_set(&r->lse, i, NAN);
    cl_context cl = ifa_context_cl_context(ctx);
    const ifa_host_tensor *hosts[4] = {po, pl, &r->out, c->lse_flag ? &r->lse : NULL};
    cl_mem m[4] = {NULL};
    ifa_tensor t[4];
    ifa_status st = IFA_STATUS_OK;
    for (int i = 0; i < 4; ++i) {
        if (!hosts[i]) continue;
        cl_int err;
        m[i] = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, hosts[i]->bytes ? hosts[i]->bytes : 1,
                              hosts[i]->data, &err);
        if (!m[i]) {
            st = IFA_STATUS_OUT_OF_MEMORY;
            snprintf(r->error, sizeof r->error, "a buffer of %zu bytes: OpenCL error %d", hosts[i]->bytes, (int)err);
            break;
        }
        describe(&t[i], hosts[i], m[i]);
    }
    ifa_merge_attention_states_args a = {&t[0], &t[1], &t[2], c->lse_flag ? &t[3] : NULL};
    size_t ws;
    cl_event ev = NULL;
    if (st == IFA_STATUS_OK) st = ifa_merge_attention_states_get_workspace_size(ctx, &a, &ws);
    if (st == IFA_STATUS_OK) st = ifa_merge_attention_states_run(ctx, &a, queue, 0, NULL, &ev);
    if (st != IFA_STATUS_OK && !r->error[0]) snprintf(r->error, sizeof r->error, "%s", ifa_last_error());
    if (st == IFA_STATUS_OK) {
        cl_int err = clEnqueueReadBuffer(queue, m[2], CL_TRUE, 0, r->out.bytes, r->out.data, 1, &ev, NULL);
        if (err == CL_SUCCESS && m[3]) err = clEnqueueReadBuffer(queue, m[3], CL_TRUE, 0, r->lse.bytes, r->lse.data, 1, &ev, NULL);
        if (err != CL_SUCCESS) st = IFA_STATUS_OPENCL_ERROR;
        clReleaseEvent(ev);
    }
    for (int i = 0; i < 4; ++i)
        if (m[i]) clReleaseMemObject(m[i]);
    return st;
}

void ifa_merge_case_check(const ifa_merge_case *c, ifa_merge_result *r) {
    const ifa_host_tensor *po = &c->partial_outputs, *pl = &c->partial_lses;
    const int64_t parts = po->shape[0], dim = po->shape[po->ndim - 1];
    const int64_t rows = ifa_host_tensor_numel(po) / (parts * dim);
    double num = 0, den = 0;
    r->nonfinite = r->lse_bad = 0;
    for (int64_t row = 0; row < rows; ++row) {
        double m = -INFINITY, l = 0;
        for (int64_t i = 0; i < parts; ++i) m = fmax(m, ifa_host_get(pl, i * rows + row));
        for (int64_t i = 0; i < parts; ++i) {
            const double li = ifa_host_get(pl, i * rows + row);
            if (li != -INFINITY) l += exp(li - m);
        }
        for (int64_t d = 0; d < dim; ++d) {
            double acc = 0;
            for (int64_t i = 0; i < parts; ++i) {
                const double li = ifa_host_get(pl, i * rows + row);
                if (li != -INFINITY) acc += exp(li - m) * ifa_host_get(po, (i * rows + row) * dim + d);
            }
            /* a sum of 0: every part -inf; a NaN sum (a NaN or +inf lse) makes the row NaN (docs/op.md,
             * "Non-finite values"; NaN accepted where the merge is infinite, as ifa_case_check_result does) */
            const double want = l != 0 ? acc / l : 0, got = ifa_host_get(&r->out, row * dim + d);
            if (!isfinite(got) || !isfinite(want)) {
                if (!(isnan(got) ? !isfinite(want) : got == want)) r->nonfinite++;
                continue;
            }
            num += (got - want) * (got - want), den += want * want;
        }
        if (c->lse_flag) {
            const double want = l != 0 ? m + log(l) : -INFINITY, got = ifa_host_get(&r->lse, row);
            if (!isfinite(want) || !isfinite(got) ? !(isnan(got) ? isnan(want) : got == want)
                                                   : !(fabs(got - want) <= 1e-5 * fmax(1.0, fabs(want))))
                r->lse_bad++;
        }
    }
    r->rel_l2 = den > 0 ? sqrt(num / den) : (num > 0 ? INFINITY : 0);
    r->tolerance = ifa_case_tolerance(c->out_dtype);
    r->pass = r->nonfinite == 0 && r->lse_bad == 0 && r->rel_l2 <= r->tolerance;
}
