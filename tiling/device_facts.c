/* Device facts as the planner uses them (device_facts.h): the device's, with IFA_DEVICE_FACTS's overrides. */
#include "tiling/device_facts.h"

#include <stdlib.h>
#include <string.h>

ifa_device_facts ifa__device_facts_effective(const ifa_device_facts *f) {
    ifa_device_facts e = *f;
    const char *env = getenv("IFA_DEVICE_FACTS");
    for (const char *s = env; s && *s;) {
        const char *eq = strchr(s, '=');
        if (!eq) break;
        char *end;
        const long long v = strtoll(eq + 1, &end, 10);
        const size_t n = (size_t)(eq - s);
        const int number = end != eq + 1 && v >= 1 && v <= (1LL << 40);
        if (number && n == 13 && strncmp(s, "compute_units", n) == 0 && v <= (1 << 20)) e.compute_units = (int32_t)v;
        if (number && n == 18 && strncmp(s, "native_float_width", n) == 0 && v <= 16 && (v & (v - 1)) == 0)
            e.native_float_width = (int32_t)v;
        if (number && n == 15 && strncmp(s, "local_mem_bytes", n) == 0 && v <= f->local_mem_bytes)
            e.local_mem_bytes = v;
        if (number && n == 19 && strncmp(s, "max_work_group_size", n) == 0 && v <= f->max_work_group_size)
            e.max_work_group_size = (int32_t)v;
        if (number && n == 6 && strncmp(s, "vendor", n) == 0 && v < IFA_VENDOR_COUNT_ && ifa__vendor_is_cpu(f->vendor) &&
            ifa__vendor_is_cpu((int32_t)v))
            e.vendor = (int32_t)v;
        const char *comma = strchr(s, ',');
        if (!comma) break;
        s = comma + 1;
    }
    return e;
}
