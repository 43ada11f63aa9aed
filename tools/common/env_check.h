/* The tools' check of the planner's environment overrides before they run anything under them. */
#ifndef IFA_TOOLS_ENV_CHECK_H
#define IFA_TOOLS_ENV_CHECK_H

#include "tiling/device_facts.h"

/* Reads IFA_TUNING with the planner's own parser. The library skips a bad entry silently, as it must (it has no
 * channel for a warning), so a benchmark or soak asked for "chunk_row=64" would time the tuning row's own plans: a
 * tool calls this first. Returns 0 when it is absent or all its entries apply; otherwise prints "TOOL: IFA_TUNING:
 * the first skipped entry and its rule" to stderr and returns -1. */
int ifa_tool_check_tuning_env(const char *tool);

/* The same for IFA_DEVICE_FACTS, against device (the facts of the device or profile the tool plans for). */
int ifa_tool_check_facts_env(const char *tool, const ifa_device_facts *device);

/* Both: 0, or -1 after the first one's message. */
int ifa_tool_check_env(const char *tool, const ifa_device_facts *device);

#endif
