/* A plan is kept, compared and hashed as bytes (the plan domain's signatures, an engine's own plan cache; the
 * run's checks compare fields), so its structs must hold no padding the compiler adds unseen: bytes there are
 * whatever a copy left (a pointer's bytes, seen in a struct of device facts at -O1), and two equal plans could
 * differ in them.
 * This file is built with -Wpadded (CMakeLists.txt; -Werror makes it an error): a field that leaves a gap in
 * ifa_problem or ifa_plan fails the build, and the gap is closed with a reserved field that the planner's check
 * requires to be 0 (reserved1), or with a 32-bit field of use (the plan's shape). The asserts say the same for compilers without -Wpadded. */
#include <stddef.h>

#include "ifa/plan.h"

_Static_assert(offsetof(ifa_problem, reserved1) + sizeof(int32_t) == offsetof(ifa_problem, q_lengths_hash),
               "ifa_problem: hidden padding after reserved1");
_Static_assert(offsetof(ifa_plan, shape) + sizeof(int32_t) == offsetof(ifa_plan, ws_cv_q_offset),
               "ifa_plan: hidden padding after shape");
