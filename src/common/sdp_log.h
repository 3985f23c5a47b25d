/*
 * softdpu internal: how library code logs (to DOCA's SDK backends).
 *
 * Rules (docs/CodeStyle.md): the function that detects an error logs it once, with the cause
 * (and %m after a failed system call); callers that only propagate the status do not log again.
 * The library never prints with printf.
 *
 * Each .c file names its component once, before including this header or anywhere at file
 * scope:  SDP_LOG_COMPONENT("pe");
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_LOG_H_
#define SDP_LOG_H_

#include <stdint.h>

#include "doca_log.h"

/* Emit one SDK message. component is e.g. "pe"; it is printed as "softdpu::pe". */
void sdp_log_sdk(uint32_t level, const char *component, const char *file, int line,
		 const char *func, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* True when an SDK message of this level would reach at least one backend (cheap). */
int sdp_log_sdk_enabled(uint32_t level);

/*
 * Parse a level given as a number (10, 20, ..., 70) or a name (disable, crit, error, warning or
 * warn, info, debug, trace; any case; surrounding blanks ignored). INVALID_VALUE (not logged)
 * for anything else; *level_p is set only on success. Used for DOCA_LOG_LEVEL.
 */
doca_error_t sdp_log_parse_level(const char *str, uint32_t *level_p);

/* Short upper-case name of a level as records print it ("ERR", "INFO", ...); "?" if invalid. */
const char *sdp_log_level_name(uint32_t level);

#define SDP_LOG_COMPONENT(name) static const char sdp_log_component[] __attribute__((unused)) = name

/*
 * Log as the function func: for a check helper that reports its caller's argument, so the record
 * names the call the user made (e.g. doca_mmap_start) rather than the helper.
 */
#define sdp_log_as(level, func, fmt, ...)                                                          \
	do {                                                                                       \
		if (sdp_log_sdk_enabled(level))                                                    \
			sdp_log_sdk(level, sdp_log_component, __FILE__, __LINE__, func, fmt,       \
				    ##__VA_ARGS__);                                                \
	} while (0)

#define sdp_log(level, fmt, ...) sdp_log_as(level, __func__, fmt, ##__VA_ARGS__)

#define sdp_crit(fmt, ...) sdp_log(DOCA_LOG_LEVEL_CRIT, fmt, ##__VA_ARGS__)
#define sdp_error(fmt, ...) sdp_log(DOCA_LOG_LEVEL_ERROR, fmt, ##__VA_ARGS__)
#define sdp_warn(fmt, ...) sdp_log(DOCA_LOG_LEVEL_WARNING, fmt, ##__VA_ARGS__)
#define sdp_info(fmt, ...) sdp_log(DOCA_LOG_LEVEL_INFO, fmt, ##__VA_ARGS__)
#define sdp_debug(fmt, ...) sdp_log(DOCA_LOG_LEVEL_DEBUG, fmt, ##__VA_ARGS__)
#define sdp_trace(fmt, ...) sdp_log(DOCA_LOG_LEVEL_TRACE, fmt, ##__VA_ARGS__)

#endif /* SDP_LOG_H_ */
