#define _POSIX_C_SOURCE 200809L /* setenv */
#include "common/pin.h"

#include <stdlib.h>

const char *ifa_tool_pin_pocl_workers(void) {
    const char *given = getenv("POCL_AFFINITY");
    if (given) return given;
    /* setenv fails only without memory; the tool then runs unpinned and its header says so */
    if (setenv("POCL_AFFINITY", "1", 0) != 0) return "unset";
    return "1";
}
