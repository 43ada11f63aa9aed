/* Internal: setting this thread's last-error message while returning a status. */
#ifndef IFA_CORE_STATUS_H
#define IFA_CORE_STATUS_H

#include "ifa/status.h"

#if defined(__GNUC__)
#define IFA__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define IFA__PRINTF(a, b)
#endif

/* Records "NAME: <formatted text>" as this thread's last error and returns status. */
ifa_status ifa__fail(ifa_status status, const char *fmt, ...) IFA__PRINTF(2, 3);
/* Early return on a failed status: the one check macro of the library. */
#define IFA__TRY(expr)                                                                                 \
    do {                                                                                               \
        ifa_status ifa__st_ = (expr);                                                                  \
        if (ifa__st_ != IFA_STATUS_OK) return ifa__st_;                                                \
    } while (0)

#endif
