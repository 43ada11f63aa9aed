/* How the timing tools ask PoCL to place its CPU worker threads. */
#ifndef IFA_TOOLS_PIN_H
#define IFA_TOOLS_PIN_H

/* Sets POCL_AFFINITY=1 (PoCL's CPU driver pins worker thread i to core i) unless the environment already
 * gives POCL_AFFINITY, in which case that value stands. Without pinning, the Linux scheduler sometimes puts
 * both workers of a 2-core VM on one core, and a two-thread run then takes the one-thread time: the bimodal
 * "noise" seen without pinning (docs/performance.md, Xeon, 2026-11-25). Call before the process's first
 * OpenCL call, since PoCL reads the variable when it sets up its devices; other drivers ignore it.
 * Returns the value in force afterwards, for the tool's header line; never NULL. */
const char *ifa_tool_pin_pocl_workers(void);

#endif
