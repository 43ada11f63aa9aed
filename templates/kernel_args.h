/* Internal: a kernel's arguments on the host, generated from its table in op_kernel/ifa_kernel_args.h: a struct
 * with one field per argument, named as the kernel names it, and the ifa__karg list that ifa__enqueue sets in
 * the kernel's order. A launch fills the struct by name and never writes a position. */
#ifndef IFA_TEMPLATES_KERNEL_ARGS_H
#define IFA_TEMPLATES_KERNEL_ARGS_H

#include "op_host/runtime/launch.h"
#include "op_kernel/ifa_kernel_args.h"

#define IFA__CL_ulong cl_ulong
#define IFA__CL_long cl_long
#define IFA__CL_int cl_int
#define IFA__CL_float cl_float
#define IFA__KFIELD_B(s, T, name) cl_mem name;
#define IFA__KFIELD_V(s, T, name) IFA__CL_##T name;
#define IFA__KARG(s, T, name) {sizeof (s).name, &(s).name},

/* The struct type of table's arguments. */
#define IFA__KARGS_STRUCT(table) struct { table(IFA__KFIELD_B, IFA__KFIELD_V, ~) }

/* The initialiser of an ifa__karg array over s, a struct of IFA__KARGS_STRUCT(table), in the kernel's order. */
#define IFA__KARGS_LIST(table, s) {table(IFA__KARG, IFA__KARG, s)}

/* The number of entries in an ifa__karg array. */
#define IFA__NKARGS(list) ((cl_uint)(sizeof(list) / sizeof((list)[0])))

#endif
