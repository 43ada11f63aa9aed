/* ifa status codes (generated from status_table.h) and this thread's last-error message. No OpenCL here,
 * so the planner (tiling/) can report errors without OpenCL headers. */
#ifndef IFA_STATUS_H
#define IFA_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define IFA_API __attribute__((visibility("default")))
#else
#define IFA_API
#endif

typedef enum ifa_status {
#define IFA_STATUS_ROW(name, value, message) IFA_STATUS_##name = value,
#include "ifa/status_table.h"
#undef IFA_STATUS_ROW
    IFA_STATUS_COUNT_
} ifa_status;

/* Short upper-case name of a status ("SHAPE_MISMATCH"); "UNKNOWN_STATUS" for values outside the table. */
IFA_API const char *ifa_status_name(ifa_status status);
/* Generic one-line description of a status; never NULL. */
IFA_API const char *ifa_status_message(ifa_status status);
/* This thread's message for the most recent failing call ("" if none yet), "NAME: what broke which rule";
 * valid until this thread's next failing ifa call. */
IFA_API const char *ifa_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
