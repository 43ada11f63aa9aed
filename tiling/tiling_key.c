/* The tiling key table. Digit values follow the public enums (ifa_layout, ifa_dtype, ifa_template), except
 * that float8_e5m2 (ifa_dtype 10, beyond a digit) takes dtype digit 4, uint8's, which no tensor of the op has. */
#include "tiling/tiling_key.h"

#include <inttypes.h>
#include <stddef.h>

#include "core/status.h"

/* ifa_dtype's code for float8_e5m2 (include/ifa/ifa.h; the tiling sees dtypes as integer codes) */
#define IFA__DTYPE_FLOAT8_E5M2 10

static const char *const layout_names[10] = {"BSH", "BSND", "BNSD"};
static const char *const dtype_names[10] = {"float32", "float16", "bfloat16", "int8", "float8_e5m2",
                                            NULL,      NULL,      NULL,       "int4", "float8_e4m3fn"};
static const char *const template_names[10] = {NULL, "all_vector", "cv"};
static const char *const flag_names[10] = {"off", "on"};
static const char *const lengths_names[10] = {"full", "uniform", "per_batch"};
static const char *const split_names[10] = {"none", "partial_rowmax", "global_rowmax", "balanced_units"};
static const char *const antiquant_names[10] = {"none", "per_channel", "per_tensor", "per_token", "per_head_per_token",
                                                    "paged_head_token"};
/* the value's scale form when it differs from the key's (separate key/value antiquant), else 0 */
static const char *const v_antiquant_names[10] = {"as_key", "per_channel", "per_tensor", "per_token",
                                                  "per_head_per_token", "paged_head_token"};
static const char *const mode_names[10] = {NULL, "plain", "shared_prefix"};
static const char *const rope_names[10] = {"none", "neox", "gptj", "neox_tables", "gptj_tables"};
/* ifa_kernel_shape (include/ifa/plan.h) */
static const char *const shape_names[10] = {"none",  "vector", "work_group", "wide_loads", "key_tile",
                                            "lanes", "matrix", "matrix_t",   "latent_tile"};

#define BITS(...) (int32_t)(__VA_ARGS__)
static const ifa_key_field fields[IFA_KEY_FIELD_COUNT_] = {
    [IFA_KEY_LAYOUT] = {"layout", 0, BITS(1 << 0 | 1 << 1 | 1 << 2), layout_names},
    [IFA_KEY_Q_DTYPE] = {"q_dtype", 1, BITS(1 << 0 | 1 << 1 | 1 << 2), dtype_names},
    [IFA_KEY_KV_DTYPE] = {"kv_dtype", 2, BITS(1 << 0 | 1 << 1 | 1 << 2 | 1 << 3 | 1 << 4 | 1 << 8 | 1 << 9),
                           dtype_names},
    [IFA_KEY_OUT_DTYPE] = {"out_dtype", 3, BITS(1 << 0 | 1 << 1 | 1 << 2 | 1 << 3), dtype_names},
    [IFA_KEY_TEMPLATE] = {"template", 4, BITS(1 << 1 | 1 << 2), template_names},
    [IFA_KEY_LSE] = {"softmax_lse", 5, BITS(1 << 0 | 1 << 1), flag_names},
    [IFA_KEY_LENGTHS] = {"lengths", 6, BITS(1 << 0 | 1 << 1 | 1 << 2), lengths_names},
    [IFA_KEY_SPLIT_KV] = {"split_kv", 7, BITS(1 << 0 | 1 << 1 | 1 << 2 | 1 << 3), split_names},
    [IFA_KEY_PAGED] = {"paged_kv", 8, BITS(1 << 0 | 1 << 1), flag_names},
    [IFA_KEY_ANTIQUANT] = {"antiquant", 9, BITS(1 << 0 | 1 << 1 | 1 << 2 | 1 << 3 | 1 << 4 | 1 << 5),
                           antiquant_names},
    [IFA_KEY_MODE] = {"mode", 10, BITS(1 << 1 | 1 << 2), mode_names},
    [IFA_KEY_ROPE] = {"rope", 11, BITS(1 << 0 | 1 << 1 | 1 << 2 | 1 << 3 | 1 << 4), rope_names},
    [IFA_KEY_V_ANTIQUANT] = {"value_antiquant", 12, BITS(1 << 0 | 1 << 1 | 1 << 2 | 1 << 3 | 1 << 4 | 1 << 5),
                             v_antiquant_names},
    [IFA_KEY_SHAPE] = {"shape", 13, BITS(1 << 0 | 1 << 1 | 1 << 2 | 1 << 3 | 1 << 4 | 1 << 5 | 1 << 6 | 1 << 7 | 1 << 8),
                       shape_names},
};

static uint64_t pow10u(int e) {
    uint64_t p = 1;
    while (e-- > 0) p *= 10;
    return p;
}

const ifa_key_field *ifa__key_fields(void) { return fields; }

int32_t ifa__key_dtype_digit(int32_t dtype) { return dtype == IFA__DTYPE_FLOAT8_E5M2 ? 4 : dtype; }

ifa_status ifa__key_encode(const int32_t values[IFA_KEY_FIELD_COUNT_], uint64_t *key) {
    uint64_t k = 0;
    for (int i = 0; i < IFA_KEY_FIELD_COUNT_; ++i) {
        int32_t v = values[i];
        if (v < 0 || v > 9 || !(fields[i].legal_mask >> v & 1))
            return ifa__fail(IFA_STATUS_INVALID_PLAN, "tiling key field %s = %d is not legal in this build", fields[i].name,
                             (int)v);
        k += (uint64_t)v * pow10u(fields[i].digit);
    }
    *key = k;
    return IFA_STATUS_OK;
}

ifa_status ifa__key_decode(uint64_t key, int32_t values[IFA_KEY_FIELD_COUNT_]) {
    uint64_t rest = key;
    for (int i = 0; i < IFA_KEY_FIELD_COUNT_; ++i) {
        uint64_t p = pow10u(fields[i].digit);
        int32_t v = (int32_t)(key / p % 10);
        values[i] = v;
        rest -= (uint64_t)v * p;
        if (!(fields[i].legal_mask >> v & 1))
            return ifa__fail(IFA_STATUS_INVALID_PLAN, "tiling key %" PRIu64 ": field %s (digit %d) = %d is not legal",
                             key, fields[i].name, (int)fields[i].digit, (int)v);
    }
    if (rest != 0)
        return ifa__fail(IFA_STATUS_INVALID_PLAN, "tiling key %" PRIu64 " has digits beyond the declared fields", key);
    return IFA_STATUS_OK;
}
