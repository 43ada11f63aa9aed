/* Shared by the Check suites: one OpenCL context and profiling queue per test process, and helpers to
 * run a suite with the summary line Check prints. */
#ifndef IFA_TESTS_TEST_UTIL_H
#define IFA_TESTS_TEST_UTIL_H

#include <check.h>

#include "ifa/ifa.h"

/* The process-wide context on the default device ($IFA_DEVICE or the first one); created on first use,
 * the test fails if there is none. */
ifa_context *test_ctx(void);
cl_command_queue test_queue(void);
/* Appends extra to IFA_TUNING (which starts as the kernel shape a ctest entry chose), so a test's own
 * overrides apply on top; test_tuning_pop restores the value before the matching push. Pushes nest (up to 8):
 * a case's override stays under check()'s own replans. */
void test_tuning_push(const char *extra);
void test_tuning_pop(void);
/* Runs suite s without forking (OpenCL state does not survive fork) and returns the process exit code. */
int test_run_suite(Suite *s);

#endif
