/* The input layouts' names. */
#include "core/layout.h"

#include <string.h>

static const char *const layout_names[IFA_LAYOUT_COUNT_] = {"BSH", "BSND", "BNSD"};

int ifa__layout_from_name(const char *name, ifa_layout *out) {
    for (int i = 0; name && i < IFA_LAYOUT_COUNT_; ++i) {
        if (strcmp(name, layout_names[i]) == 0) {
            *out = (ifa_layout)i;
            return 0;
        }
    }
    return -1;
}

const char *ifa__layout_name(ifa_layout layout) {
    return (int)layout >= 0 && layout < IFA_LAYOUT_COUNT_ ? layout_names[layout] : "invalid";
}
