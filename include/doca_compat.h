/*
 * softdpu: DOCA-compatible API stability markers and struct-version helpers.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_COMPAT_H_
#define DOCA_COMPAT_H_

/*
 * Headers that DOCA programs receive through this one (they rely on it):
 * memcpy/strncpy, calloc/free and assert.
 */
#ifndef DOCA_COMPAT_HELPERS
#define DOCA_COMPAT_HELPERS 1
#endif

#if DOCA_COMPAT_HELPERS
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define DOCA_USED __attribute__((used))
#define DOCA_VISIBLE __attribute__((visibility("default")))

/* Symbols that are part of the stable API. */
#define DOCA_STABLE DOCA_VISIBLE DOCA_USED

/*
 * Experimental symbols: a consumer must define DOCA_ALLOW_EXPERIMENTAL_API, otherwise every use
 * warns. With the macro defined they carry no diagnostic at all.
 */
#ifdef DOCA_ALLOW_EXPERIMENTAL_API
#define DOCA_EXPERIMENTAL DOCA_VISIBLE DOCA_USED
#else
#define DOCA_EXPERIMENTAL                                                                          \
	__attribute__((deprecated("Symbol is defined as experimental"))) DOCA_VISIBLE DOCA_USED
#endif

#ifdef DOCA_ALLOW_DEPRECATED_API
#define DOCA_DEPRECATED DOCA_VISIBLE DOCA_USED
#else
#define DOCA_DEPRECATED __attribute__((deprecated("Symbol is deprecated"))) DOCA_VISIBLE DOCA_USED
#endif

#if DOCA_COMPAT_HELPERS
/* Versioned public structs start with this member; see DOCA_STRUCT_CTOR. */
#define DOCA_STRUCT_START size_t __doca_api_version
#define DOCA_STRUCT_GET_VERSION(ptr) ((ptr)->__doca_api_version)
#define DOCA_STRUCT_CTOR(x) ((x).__doca_api_version = DOCA_VERSION_EXACT)
#define DOCA_STRUCT_MEMSET_CTOR(x)                                                                 \
	do {                                                                                       \
		memset(&(x), 0, sizeof(x));                                                        \
		DOCA_STRUCT_CTOR(x);                                                               \
	} while (0)
#endif

#ifdef __cplusplus
}
#endif

#if DOCA_COMPAT_HELPERS
#include "doca_version.h"
#endif

#endif /* DOCA_COMPAT_H_ */
