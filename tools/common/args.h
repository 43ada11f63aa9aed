/* Strict command-line values for the tools: a value is the whole of its argument, inside its rule, or it is
 * refused with a message on stderr naming the tool, the option, the value and the rule ("ifa-bench: --runs 0:
 * want an integer in [1, 1000000]"), so that a typo stops the tool instead of running another benchmark. */
#ifndef IFA_TOOLS_ARGS_H
#define IFA_TOOLS_ARGS_H

#include <stdint.h>

#include "ifa/ifa.h"

/* 1 where argv holds --help or -h: the tool then prints its usage (every option, a line each) to stdout and exits
 * 0. */
int ifa_arg_help(int argc, char **argv);

/* The refusal of an argument a tool does not take (an unknown option, an option without its value, a second path
 * where one is taken): "TOOL: ARG: not an option of TOOL, or its value is missing" on stderr; the tool then prints
 * its usage to stderr and exits 2. */
void ifa_arg_unknown(const char *tool, const char *arg);

/* hi for a value with no upper bound of the tool's own (the op's checks, if any, still apply) */
#define IFA_ARG_NO_MAX 9223372036854775807LL

/* val as a decimal integer in [lo, hi] (an optional '-', digits, nothing after them) into *out: 0. Otherwise
 * (NULL, empty, other characters, out of range) the message "TOOL: OPT VAL: want an integer in [LO, HI]" (or
 * ">= LO" when hi is IFA_ARG_NO_MAX) and -1, *out unchanged. */
int ifa_arg_int(const char *tool, const char *opt, const char *val, long long lo, long long hi, long long *out);

/* ifa_arg_int for an int option (lo and hi within int's range). */
int ifa_arg_int32(const char *tool, const char *opt, const char *val, int lo, int hi, int *out);

/* ifa_arg_int for an int64_t option. */
int ifa_arg_int64(const char *tool, const char *opt, const char *val, long long lo, long long hi, int64_t *out);

/* val as an unsigned decimal integer (digits only; any 64-bit value) into *out: 0; otherwise a message and -1. */
int ifa_arg_u64(const char *tool, const char *opt, const char *val, unsigned long long *out);

/* val as a finite real number in [lo, hi] (strtod's syntax, nothing after it) into *out: 0; otherwise the
 * message "TOOL: OPT VAL: want a number in [LO, HI]" and -1. */
int ifa_arg_real(const char *tool, const char *opt, const char *val, double lo, double hi, double *out);

/* val as a dtype's name or alias (ifa_dtype_from_name) into *out: 0; otherwise a message listing the names and
 * -1. */
int ifa_arg_dtype(const char *tool, const char *opt, const char *val, ifa_dtype *out);

/* val as one of the n names: its index into *out, 0; otherwise a message listing them and -1. */
int ifa_arg_choice(const char *tool, const char *opt, const char *val, const char *const *names, int n, int *out);

/* val as exactly n comma-separated decimal integers, each >= lo, into out[0..n) (what: the list's meaning for
 * the message, e.g. "B,N,N_kv,D,S"): 0; otherwise "TOOL: OPT VAL: want WHAT: N integers >= LO, separated by
 * commas" and -1, out unchanged. */
int ifa_arg_int_list(const char *tool, const char *opt, const char *val, const char *what, int n, long long lo,
                     long long *out);

#endif
