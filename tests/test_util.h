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
/* tcase_create with a teardown that undoes the pushes a failed test left (it leaves past its pops): every
 * suite's test cases come from here, so one failure stays one. */
TCase *test_tcase_create(const char *name);
/* Adds loop test tf's cases [s, e) to t. With IFA_TEST_SAMPLE=k (k > 1; a ctest run that repeats a suite under
 * another kernel shape's tuning) only ceil((e - s) / k) of them: those that together reach the most residues
 * of the case index (i % 2 .. i % 8) and blocks of it (i / 3, i / 4, ...), which the cases decode into
 * layouts, dtypes, split modes and variants, so that no value a case index selects is dropped the way every
 * k-th case would drop it (i % 2 == 1 with k = 2). IFA_TEST_SEED=N rotates which cases win the ties. */
void test_add_loop(TCase *t, const TTest *tf, int s, int e);
/* The choice behind test_add_loop: picked[j] (e - s bytes) set for each case s + j kept of [s, e) when every k-th
 * is asked for with IFA_TEST_SEED salt; returns how many (ceil((e - s) / k); all with k <= 1), -1 without memory. */
int test_sample_cases(int s, int e, int k, unsigned long long salt, char *picked);
/* Runs suite s without forking (OpenCL state does not survive fork) and returns the process exit code. */
int test_run_suite(Suite *s);

#endif
