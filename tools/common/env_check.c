/* The tools' check of IFA_TUNING and IFA_DEVICE_FACTS (env_check.h). */
#include "common/env_check.h"

#include <stdio.h>
#include <stdlib.h>

#include "tiling/tuning_table.h"

int ifa_tool_check_tuning_env(const char *tool) {
    char why[400];
    const char *tuning = getenv("IFA_TUNING");
    ifa_tuning scratch = {0}; /* the parser checks each entry against its field's range, whatever the row */
    if (tuning && ifa__tuning_apply(&scratch, tuning, why, sizeof why) != 0) {
        fprintf(stderr, "%s: IFA_TUNING: %s\n", tool, why);
        return -1;
    }
    return 0;
}

int ifa_tool_check_facts_env(const char *tool, const ifa_device_facts *device) {
    char why[400];
    const char *facts = getenv("IFA_DEVICE_FACTS");
    ifa_device_facts e = *device;
    if (facts && ifa__device_facts_apply(&e, device, facts, why, sizeof why) != 0) {
        fprintf(stderr, "%s: IFA_DEVICE_FACTS: %s\n", tool, why);
        return -1;
    }
    return 0;
}

int ifa_tool_check_env(const char *tool, const ifa_device_facts *device) {
    return ifa_tool_check_tuning_env(tool) != 0 || ifa_tool_check_facts_env(tool, device) != 0 ? -1 : 0;
}
