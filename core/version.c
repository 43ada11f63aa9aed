/* The loaded library's version (include/ifa/version.h). */
#include "ifa/version.h"

#define IFA__STR(x) #x
#define IFA__XSTR(x) IFA__STR(x)

uint32_t ifa_version(void) { return IFA_VERSION; }

const char *ifa_version_string(void) {
    return IFA__XSTR(IFA_VERSION_MAJOR) "." IFA__XSTR(IFA_VERSION_MINOR) "." IFA__XSTR(IFA_VERSION_PATCH);
}
