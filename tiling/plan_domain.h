/* The plans one op configuration can take over its decode steps, for building their kernels ahead of the first
 * run. Pure C, no OpenCL. */
#ifndef IFA_TILING_PLAN_DOMAIN_H
#define IFA_TILING_PLAN_DOMAIN_H

#include "ifa/plan.h"
#include "ifa/status.h"
#include "tiling/device_facts.h"

/* Called once per distinct signature (ifa__plan_signature) with the first plan found that has it; a status
 * other than OK stops the walk and is returned. */
typedef ifa_status (*ifa__plan_visit)(const ifa_plan *plan, void *user);

/* Plans problem p (validated; its batch the most the steps take) for every batch size 1 .. p->batch and a set of
 * KV lengths up to what p's tensors hold, and visits each distinct signature once. The lengths stay in p's form:
 * per batch where p is per batch (a single batch's one length is uniform, as the argument check makes it, unless
 * per-batch query tokens keep it per batch), else one length for every batch. The planner's choices that decide
 * a kernel build (splits or none, balanced units, KV heads and query heads per work-group, the fused combine,
 * the small grid's wider work-groups) depend on the batch, the longest block's rows and the rows summed; the
 * lengths are the values where those choices can change (multiples of the split floor and of the chunk, each
 * side of them, 3 % steps between) with the rows summed at both ends (one long batch, all as long).
 * tests/test_plan_domain.c draws random steps and finds each plan's signature among those visited. *plans (may be
 * NULL): the plans made; *visited (may be NULL): the signatures visited. */
ifa_status ifa__plan_domain(const ifa_problem *p, const ifa_device_facts *dev, ifa__plan_visit visit, void *user,
                            int64_t *plans, int64_t *visited);

/* plan with every field zeroed that varies with the batch size and the lengths without entering a kernel's
 * build options (sizes, offsets, split counts, the lengths' summary); two plans with equal signatures build the
 * same kernels. A field not listed stays, so a new plan field counts as deciding a build until listed here. */
void ifa__plan_signature(const ifa_plan *plan, ifa_plan *sig);

#endif
