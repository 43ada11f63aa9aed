/* The host planner: from a validated problem and device facts to a plan. Pure C, no OpenCL. */
#ifndef IFA_TILING_PLANNER_H
#define IFA_TILING_PLANNER_H

#include "ifa/plan.h"
#include "ifa/status.h"
#include "tiling/device_facts.h"

/* Alignment of every workspace region, in bytes. */
#define IFA_WORKSPACE_ALIGN 256

/* Balanced units: where unit u's stretch of the cost line [0, total) starts, floor(u * total / units)
 * without overflowing 64 bits. ifa_all_vector.cl and ifa_combine.cl compute the same (ifa_unit_start). */
static inline int64_t ifa__unit_start(int64_t total, int64_t units, int64_t u) {
    return total / units * u + total % units * u / units;
}

/* Local memory (bytes) the all-vector kernel needs for heads_per_group heads, head dim d and chunk rows. */
int64_t ifa__all_vector_local_bytes(int64_t heads_per_group, int64_t head_dim, int64_t chunk_rows);

/* Plans problem p (already validated) for device dev. DEVICE_LIMIT if the device cannot hold even one
 * query head's working set in local memory. */
ifa_status ifa__plan_make(const ifa_problem *p, const ifa_device_facts *dev, ifa_plan *plan);

/* Checks a plan handed back by a caller: magic, version, a legal key that matches the plan's fields, and
 * sizes that are in range. INVALID_PLAN with the broken rule otherwise. */
ifa_status ifa__plan_check(const ifa_plan *plan);

#endif
