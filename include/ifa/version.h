/* The library's version: the one place it is written (CMakeLists.txt reads these three lines for the
 * project, the shared library's soname and the package files). An engine compiles against IFA_VERSION and
 * can compare it with ifa_version() at run time to catch a libifa.so of another release on the loader path. */
#ifndef IFA_VERSION_H
#define IFA_VERSION_H

#include "ifa/status.h"

#include <stdint.h>

#define IFA_VERSION_MAJOR 0
#define IFA_VERSION_MINOR 1
#define IFA_VERSION_PATCH 0
/* major * 10000 + minor * 100 + patch */
#define IFA_VERSION (IFA_VERSION_MAJOR * 10000 + IFA_VERSION_MINOR * 100 + IFA_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library actually loaded, as IFA_VERSION encodes it. Releases 0.x keep neither ABI
 * nor plan compatibility across minor versions (the soname carries major.minor). */
IFA_API uint32_t ifa_version(void);
/* The same as "major.minor.patch"; a static string, never NULL. */
IFA_API const char *ifa_version_string(void);

#ifdef __cplusplus
}
#endif
#endif
