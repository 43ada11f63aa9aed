/* The tools' check of IFA_TUNING and IFA_DEVICE_FACTS entries (env_check.h). */
#include "common/env_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiling/tuning_table.h"

int ifa_tool_check_tuning(const char *tool, const char *what, const char *spec, const char *facts_where) {
    char why[400];
    ifa_tuning scratch = {0}; /* the parser checks each entry against its field's range, whatever the row */
    if (!spec || ifa__tuning_apply(&scratch, spec, why, sizeof why) == 0) return 0;
    fprintf(stderr, "%s: %s: %s", tool, what, why);
    if (facts_where && strstr(why, "is not key=value")) fprintf(stderr, " (device facts: %s)", facts_where);
    fprintf(stderr, "\n");
    return -1;
}

int ifa_tool_check_facts(const char *tool, const char *what, const char *spec, const ifa_device_facts *device) {
    char why[400];
    ifa_device_facts e = *device;
    if (!spec || ifa__device_facts_apply(&e, device, spec, why, sizeof why) == 0) return 0;
    fprintf(stderr, "%s: %s: %s\n", tool, what, why);
    return -1;
}

int ifa_tool_check_env(const char *tool, const ifa_device_facts *device) {
    return ifa_tool_check_tuning(tool, "IFA_TUNING", getenv("IFA_TUNING"), NULL) != 0 ||
                   ifa_tool_check_facts(tool, "IFA_DEVICE_FACTS", getenv("IFA_DEVICE_FACTS"), device) != 0
               ? -1
               : 0;
}
