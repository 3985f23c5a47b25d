/*
 * softdpu: DOCA logging (application and SDK backends).
 *
 * Two streams of messages exist. Application messages come from DOCA_LOG_* in the program (each
 * translation unit names its source with DOCA_LOG_REGISTER). SDK messages come from softdpu's
 * own libraries. Each stream goes to its own set of backends: a backend created by a *_sdk
 * function receives SDK messages only, any other backend application messages only.
 *
 * Levels: a smaller number is more severe. A backend for application messages prints a message
 * whose level lies between its upper limit (the most severe level it shows, CRIT by default)
 * and its lower limit (the most verbose level it shows, the global lower limit, INFO by default).
 * A backend for SDK messages prints every message at or more severe than its SDK level (the
 * global SDK limit, INFO by default).
 *
 * Each record is one line written with a single write:
 *   [2025-01-31 12:00:00.123456][pid][LEVEL][source][file.c:42][function] message
 * SDK records name their source "softdpu::<component>".
 *
 * softdpu specifics (extensions of DOCA's behaviour):
 *  - Until the program creates its first SDK backend, SDK messages at WARNING and worse go to
 *    stderr, so a program that configured nothing still sees why a call failed. Likewise,
 *    until the first application backend exists, application messages at WARNING and worse go
 *    to stderr. These fallbacks never show more than the global limit allows.
 *  - The environment variable DOCA_LOG_LEVEL (a level number 10..70 or a name: disable, crit,
 *    error, warning or warn, info, debug, trace; case does not matter) sets both the global
 *    lower limit for application messages and the global SDK limit when the library loads, and
 *    the fallbacks above then show that level too. A bad value is reported on stderr and the
 *    defaults stay. Calls the program makes later take precedence.
 *  - DOCA_LOG_TRC is always compiled in; DOCA_LOGGING_ALLOW_TRACE is accepted and changes
 *    nothing.
 *  - A buffer backend truncates a record longer than its capacity (minus the terminating NUL)
 *    rather than dropping it; the flush handler is called once per record.
 *  - Messages logged from inside a flush handler are dropped (no recursion into the logger).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_LOG_H_
#define DOCA_LOG_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Room for a source name, terminating NUL included; longer names are truncated. */
#define DOCA_LOGGER_NAME_SIZE 256

/* Verbosity levels, from quiet to chatty. */
enum doca_log_level {
	DOCA_LOG_LEVEL_DISABLE = 10,
	DOCA_LOG_LEVEL_CRIT = 20,
	DOCA_LOG_LEVEL_ERROR = 30,
	DOCA_LOG_LEVEL_WARNING = 40,
	DOCA_LOG_LEVEL_INFO = 50,
	DOCA_LOG_LEVEL_DEBUG = 60,
	DOCA_LOG_LEVEL_TRACE = 70,
};

/* A destination for log records. Backends live until the process exits. */
struct doca_log_backend;

/* Called by a buffer backend after it wrote one NUL-terminated record into its buffer. */
typedef void (*log_flush_callback)(char *buf);

/* How many application backends may be created (doca_log_backend_create_standard uses two). */
DOCA_EXPERIMENTAL
uint32_t doca_log_get_max_num_backends(void);

/* How many SDK backends may be created. */
DOCA_EXPERIMENTAL
uint32_t doca_log_get_max_num_backends_sdk(void);

/*
 * Set the most verbose level an application backend prints. INVALID_VALUE for a bad backend or
 * level; NOT_PERMITTED for an SDK backend or when a strict limit forbids the change.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_lower_limit(struct doca_log_backend *backend,
						    uint32_t level);

/* Set the most severe level an application backend prints (same errors as the lower limit). */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_upper_limit(struct doca_log_backend *backend,
						    uint32_t upper_limit);

/*
 * Freeze the current lower limit as the most verbose the backend may ever print: later direct
 * or global changes may make it quieter, never chattier.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_lower_limit_strict(struct doca_log_backend *backend);

/*
 * Freeze the current upper limit as the most severe the backend may ever print: later changes
 * may only move it towards less severe levels.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_upper_limit_strict(struct doca_log_backend *backend);

/* Set the lower limit of every application backend and the default of new ones (INFO). */
DOCA_EXPERIMENTAL
doca_error_t doca_log_level_set_global_lower_limit(uint32_t level);

/* Set the upper limit of every application backend and the default of new ones (CRIT). */
DOCA_EXPERIMENTAL
doca_error_t doca_log_level_set_global_upper_limit(uint32_t upper_limit);

DOCA_EXPERIMENTAL
uint32_t doca_log_level_get_global_lower_limit(void);

DOCA_EXPERIMENTAL
uint32_t doca_log_level_get_global_upper_limit(void);

/*
 * Register a named log source (normally through DOCA_LOG_REGISTER). Registering a name twice
 * returns the same identifier. INVALID_VALUE for NULL arguments, NO_MEMORY when out of memory.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_log_register_source(const char *source_name, int *source);

/* Drop one registration of a source; INVALID_VALUE for an identifier that is not registered. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_unregister_source(int source);

/* Application backend writing to a FILE stream the program keeps open. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_file(FILE *fptr, struct doca_log_backend **backend);

/* Application backend writing to a file descriptor the program keeps open. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_fd(int fd, struct doca_log_backend **backend);

/*
 * Application backend that writes each record, NUL-terminated, at the start of buf (capacity
 * bytes) and then calls handler(buf).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_buf(char *buf, size_t capacity,
					      log_flush_callback handler,
					      struct doca_log_backend **backend);

/* Application backend sending records to syslog under the given name. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_syslog(const char *name,
						 struct doca_log_backend **backend);

/* Set the most verbose level an SDK backend prints (NOT_PERMITTED for application backends). */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_sdk_level(struct doca_log_backend *backend, uint32_t level);

/* The SDK counterparts of the backends above. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_file_sdk(FILE *fptr, struct doca_log_backend **backend);

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_fd_sdk(int fd, struct doca_log_backend **backend);

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_buf_sdk(char *buf, size_t capacity,
						  log_flush_callback handler,
						  struct doca_log_backend **backend);

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_syslog_sdk(const char *name,
						     struct doca_log_backend **backend);

/* Set the level of every SDK backend and the default of new ones (INFO). */
DOCA_EXPERIMENTAL
doca_error_t doca_log_level_set_global_sdk_limit(uint32_t level);

DOCA_EXPERIMENTAL
uint32_t doca_log_level_get_global_sdk_limit(void);

/*
 * The usual application setup: one backend on stdout for the global lower limit up to INFO and
 * one on stderr for WARNING up to the global upper limit. It takes two application backends.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_standard(void);

/*
 * Emit one application message; prefer the DOCA_LOG_* macros. INVALID_VALUE for an unknown
 * source, a level outside CRIT..TRACE or a NULL format.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_log(uint32_t level, int source, const char *fname, int line, const char *func,
		      const char *format, ...) __attribute__((format(printf, 6, 7)));

/* level is a full level name, e.g. DOCA_LOG(DOCA_LOG_LEVEL_INFO, "x=%d", x). */
#define DOCA_LOG(level, format, ...)                                                               \
	doca_log(level, log_source, __FILE__, __LINE__, __func__, format, ##__VA_ARGS__)

#define DOCA_LOG_CRIT(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_CRIT, format, ##__VA_ARGS__)
#define DOCA_LOG_ERR(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_ERROR, format, ##__VA_ARGS__)
#define DOCA_LOG_WARN(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_WARNING, format, ##__VA_ARGS__)
#define DOCA_LOG_INFO(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_INFO, format, ##__VA_ARGS__)
#define DOCA_LOG_DBG(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_DEBUG, format, ##__VA_ARGS__)
#define DOCA_LOG_TRC(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_TRACE, format, ##__VA_ARGS__)

/*
 * Declare the log source of a translation unit, at file scope. The source name is stringised,
 * so token sequences such as UROM::SAMPLES::COMMON work. Registration runs before main() (and
 * before the program's other constructors), so constructors may log too.
 */
#define DOCA_LOG_REGISTER(source)                                                                  \
	static int log_source;                                                                     \
	__attribute__((constructor(101), used)) static void sdp_log_source_ctor(void)              \
	{                                                                                          \
		doca_log_register_source(#source, &log_source);                                    \
	}

#ifdef __cplusplus
}
#endif

#endif /* DOCA_LOG_H_ */
