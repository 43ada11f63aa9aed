/* Device facts as the planner uses them (device_facts.h): the device's, with IFA_DEVICE_FACTS's overrides. */
#include "tiling/device_facts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ifa__device_facts_apply(ifa_device_facts *e, const ifa_device_facts *f, const char *spec, char *err,
                            size_t err_size) {
    int bad = 0;
    for (const char *s = spec; s && *s;) {
        const char *eq = strchr(s, '='), *comma = strchr(s, ',');
        const char *stop = comma ? comma : s + strlen(s);
        int taken = 0;
        if (eq) {
            char *end;
            const long long v = strtoll(eq + 1, &end, 10);
            const size_t n = (size_t)(eq - s);
            const int number = end != eq + 1 && v >= 1 && v <= (1LL << 40);
            if (number && n == 13 && strncmp(s, "compute_units", n) == 0 && v <= (1 << 20))
                e->compute_units = (int32_t)v, taken = 1;
            if (number && n == 18 && strncmp(s, "native_float_width", n) == 0 && v <= 16 && (v & (v - 1)) == 0)
                e->native_float_width = (int32_t)v, taken = 1;
            if (number && n == 15 && strncmp(s, "local_mem_bytes", n) == 0 && v <= f->local_mem_bytes)
                e->local_mem_bytes = v, taken = 1;
            if (number && n == 19 && strncmp(s, "max_work_group_size", n) == 0 && v <= f->max_work_group_size)
                e->max_work_group_size = (int32_t)v, taken = 1;
            if (number && n == 6 && strncmp(s, "vendor", n) == 0 && v < IFA_VENDOR_COUNT_ &&
                ifa__vendor_is_cpu(f->vendor) && ifa__vendor_is_cpu((int32_t)v))
                e->vendor = (int32_t)v, taken = 1;
        }
        if (!taken && !bad++ && err && err_size) /* the first skipped entry only */
            snprintf(err, err_size, "\"%.*s\" is not key=integer with a key and a value this device takes "
                     "(compute_units >= 1, native_float_width a power of 2 up to 16, local_mem_bytes and "
                     "max_work_group_size up to the device's, vendor 2 or 3 on a CPU)", (int)(stop - s), s);
        if (!eq || !comma) break; /* with no '=' left, the rest is skipped as before */
        s = comma + 1;
    }
    return bad ? -1 : 0;
}

ifa_device_facts ifa__device_facts_effective(const ifa_device_facts *f) {
    ifa_device_facts e = *f;
    (void)ifa__device_facts_apply(&e, f, getenv("IFA_DEVICE_FACTS"), NULL, 0);
    return e;
}
