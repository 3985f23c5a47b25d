/*
 * softdpu: the DOCA API level this implementation provides.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_VERSION_H_
#define DOCA_VERSION_H_

#include <stddef.h>

#include "doca_compat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* softdpu implements the DOCA 3.3.0 API. */
#define DOCA_VERSION_MAJOR 3
#define DOCA_VERSION_MINOR 3
#define DOCA_VERSION_PATCH 0
#define DOCA_VERSION_STRING "3.3.0"

/* One number per (major, minor, patch), ordered like the versions themselves. */
#define DOCA_VERSION_CALC_EXACT(major, minor, patch)                                               \
	((size_t)(((size_t)(major) << 24) | ((size_t)(minor) << 16) | (size_t)(patch)))
#define DOCA_VERSION_EXACT                                                                         \
	DOCA_VERSION_CALC_EXACT(DOCA_VERSION_MAJOR, DOCA_VERSION_MINOR, DOCA_VERSION_PATCH)

/*
 * "Official" release numbers scale the patch by 1000 (DOCA's convention), so a release and its
 * builds compare as DOCA does. Compile-time comparisons use these.
 */
#define DOCA_VERSION_CALC(major, minor, patch)                                                     \
	((size_t)(((size_t)(major) << 24) | ((size_t)(minor) << 16) | ((size_t)(patch)*1000)))
#define DOCA_VERSION_OFFICIAL                                                                      \
	DOCA_VERSION_CALC(DOCA_VERSION_MAJOR, DOCA_VERSION_MINOR, DOCA_VERSION_PATCH)

/* Is (major, minor, patch) the API level of these headers / not newer than it? */
#define DOCA_VERSION_EQ_CURRENT(major, minor, patch)                                               \
	(DOCA_VERSION_CALC(major, minor, patch) == DOCA_VERSION_OFFICIAL)
#define DOCA_VERSION_LTE_CURRENT(major, minor, patch)                                              \
	(DOCA_VERSION_CALC(major, minor, patch) <= DOCA_VERSION_OFFICIAL)

/* Version of the headers a program was compiled with. */
static inline const char *doca_version(void)
{
	return DOCA_VERSION_STRING;
}

/* Version of the library the program runs with. */
DOCA_EXPERIMENTAL
const char *doca_version_runtime(void);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_VERSION_H_ */
