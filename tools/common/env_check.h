/* The tools' check of the planner's overrides (IFA_TUNING's and IFA_DEVICE_FACTS's forms) before they run anything
 * under them. The library skips a bad entry silently, as it must (it has no channel for a warning), so a benchmark or
 * soak asked for "chunk_row=64" would time the tuning row's own plans: a tool checks what it was given first. */
#ifndef IFA_TOOLS_ENV_CHECK_H
#define IFA_TOOLS_ENV_CHECK_H

#include "tiling/device_facts.h"

/* Reads spec (IFA_TUNING's form; NULL: nothing to check) with the planner's own parser. Returns 0 when every entry
 * applies; otherwise prints "TOOL: WHAT: the first skipped entry and its rule" to stderr, followed, for an entry
 * that names no tuning key, by " (device facts: FACTS_WHERE)" when facts_where is not NULL, and returns -1. */
int ifa_tool_check_tuning(const char *tool, const char *what, const char *spec, const char *facts_where);

/* The same for spec in IFA_DEVICE_FACTS's form, against device (the facts of the device or profile the tool plans
 * for): "TOOL: WHAT: the first skipped entry and the rules". */
int ifa_tool_check_facts(const char *tool, const char *what, const char *spec, const ifa_device_facts *device);

/* The environment's IFA_TUNING, then IFA_DEVICE_FACTS against device: 0, or -1 after the first one's message. */
int ifa_tool_check_env(const char *tool, const ifa_device_facts *device);

#endif
