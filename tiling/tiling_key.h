/* The 64-bit tiling key: one decimal digit per field, declared once in tiling_key.c's table, from which
 * encode, decode, validation and the dump tool's explanation all come. */
#ifndef IFA_TILING_TILING_KEY_H
#define IFA_TILING_TILING_KEY_H

#include <stdint.h>

#include "ifa/status.h"

/* Field indices, in the order of the table. */
typedef enum ifa_key_field_id {
    IFA_KEY_LAYOUT = 0,
    IFA_KEY_Q_DTYPE,
    IFA_KEY_KV_DTYPE,
    IFA_KEY_OUT_DTYPE,
    IFA_KEY_TEMPLATE,
    IFA_KEY_LSE,
    IFA_KEY_LENGTHS,
    IFA_KEY_SPLIT_KV,
    IFA_KEY_PAGED,
    IFA_KEY_ANTIQUANT,
    IFA_KEY_MODE,
    IFA_KEY_ROPE,
    IFA_KEY_V_ANTIQUANT,
    IFA_KEY_SHAPE,
    IFA_KEY_FIELD_COUNT_
} ifa_key_field_id;

typedef struct ifa_key_field {
    const char *name;
    int32_t digit;              /* decimal position: value · 10^digit */
    int32_t legal_mask;         /* bit v set: value v is legal in this build */
    const char *const *names;   /* names of values 0..9 (NULL entries for unused values) */
} ifa_key_field;

/* The declared table (IFA_KEY_FIELD_COUNT_ rows). */
const ifa_key_field *ifa__key_fields(void);

/* The digit a dtype field holds for an ifa_dtype: the enum value, or 4 for float8_e5m2 (10). */
int32_t ifa__key_dtype_digit(int32_t dtype);

/* Packs values[IFA_KEY_FIELD_COUNT_] into *key; INVALID_PLAN with a message naming the field if a value
 * is not legal. */
ifa_status ifa__key_encode(const int32_t values[IFA_KEY_FIELD_COUNT_], uint64_t *key);
/* Unpacks key into values and checks it: every field legal, no digits beyond the table. */
ifa_status ifa__key_decode(uint64_t key, int32_t values[IFA_KEY_FIELD_COUNT_]);

#endif
