/* The status table's names and messages, and the thread-local last-error string. */
#include "core/status.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[2048];

const char *ifa_status_name(ifa_status status) {
    switch (status) {
#define IFA_STATUS_ROW(name, value, message) \
    case IFA_STATUS_##name: return #name;
#include "ifa/status_table.h"
#undef IFA_STATUS_ROW
    default: return "UNKNOWN_STATUS";
    }
}

const char *ifa_status_message(ifa_status status) {
    switch (status) {
#define IFA_STATUS_ROW(name, value, message) \
    case IFA_STATUS_##name: return message;
#include "ifa/status_table.h"
#undef IFA_STATUS_ROW
    default: return "unknown status code";
    }
}

const char *ifa_last_error(void) { return last_error; }

static void vset(ifa_status status, const char *fmt, va_list ap) {
    int n = snprintf(last_error, sizeof last_error, "%s: ", ifa_status_name(status));
    if (n < 0 || (size_t)n >= sizeof last_error) return;
    vsnprintf(last_error + n, sizeof last_error - (size_t)n, fmt, ap);
}

ifa_status ifa__fail(ifa_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vset(status, fmt, ap);
    va_end(ap);
    return status;
}
