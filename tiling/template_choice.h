/* Which template computes a problem: the candidates in the order the planner weighs them, each saying
 * whether it can run the problem and why, and the one the plan uses. Pure C, no OpenCL. */
#ifndef IFA_TILING_TEMPLATE_CHOICE_H
#define IFA_TILING_TEMPLATE_CHOICE_H

#include "ifa/plan.h"
#include "ifa/status.h"
#include "tiling/tuning_table.h"

#define IFA_TEMPLATE_CANDIDATES 2

typedef struct ifa_template_candidate {
    int32_t template_id; /* ifa_template */
    int32_t applicable;  /* 1: the template can compute the problem */
    int32_t chosen;      /* 1: the plan uses it */
    char reason[160];    /* why it is (not) applicable and (not) chosen, for ifa-tiling and error messages */
} ifa_template_candidate;

/* Fills out[IFA_TEMPLATE_CANDIDATES] (cv first, then all_vector, which runs every problem) and sets
 * *chosen. A problem whose template_request forces a template gets it, or INVALID_ATTRIBUTE naming
 * template_mode and the reason it cannot run; otherwise cv when it is applicable and the tuning row's rule
 * (G x S1 >= cv_min_rows, cv_min_rows > 0) prefers it, else all_vector. */
ifa_status ifa__template_choose(const ifa_problem *p, const ifa_tuning *t, ifa_template_candidate out[IFA_TEMPLATE_CANDIDATES],
                                int32_t *chosen);

#endif
