/*
 * softdpu extension (not part of DOCA): which softdpu a program runs with.
 *
 * doca_version_runtime() answers in DOCA's terms (the DOCA API level the library implements);
 * these answer in softdpu's own.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SOFTDPU_VERSION_H_
#define SOFTDPU_VERSION_H_

#include "doca_compat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* softdpu's own version of the libdoca_common the program runs with, e.g. "0.1.0". */
DOCA_STABLE
const char *sdp_version(void);

/* The DOCA API level that library implements, e.g. "3.3.0" (same as doca_version_runtime()). */
DOCA_STABLE
const char *sdp_doca_api_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_VERSION_H_ */
