/* Internal: the input layouts' names (the input_layout attribute of both ops). */
#ifndef IFA_CORE_LAYOUT_H
#define IFA_CORE_LAYOUT_H

#include "ifa/plan.h"

/* Parses an input_layout string; returns 0 and sets *out, or -1. */
int ifa__layout_from_name(const char *name, ifa_layout *out);
/* Name of a layout ("BSH"); "invalid" outside the enum. */
const char *ifa__layout_name(ifa_layout layout);

#endif
