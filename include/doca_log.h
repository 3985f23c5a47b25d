/*
 * softdpu: DOCA logging (application and SDK backends).
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

struct doca_log_backend;

/* Register a named log source (used through DOCA_LOG_REGISTER). */
DOCA_EXPERIMENTAL
doca_error_t doca_log_register_source(const char *source_name, int *source);

DOCA_EXPERIMENTAL
doca_error_t doca_log_unregister_source(int source);

/* Emit one application message from a registered source. */
DOCA_EXPERIMENTAL
doca_error_t doca_log(uint32_t level, int source, const char *fname, int line, const char *func,
		      const char *format, ...) __attribute__((format(printf, 6, 7)));

/* Create the standard application backend: stdout up to INFO, stderr from WARNING. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_standard(void);

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_file_sdk(FILE *fptr, struct doca_log_backend **backend);

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_sdk_level(struct doca_log_backend *backend, uint32_t level);

/*
 * Declare the log source of a translation unit. The source name is stringised, so token
 * sequences such as UROM::SAMPLES::COMMON are accepted.
 */
#define DOCA_LOG_REGISTER(source)                                                                  \
	static int log_source;                                                                     \
	__attribute__((constructor(101), used)) static void doca_log_register_this_source(void)  \
	{                                                                                          \
		doca_log_register_source(#source, &log_source);                                    \
	}

#define DOCA_LOG(level, format, ...)                                                               \
	doca_log(DOCA_LOG_LEVEL_##level, log_source, __FILE__, __LINE__, __func__, format,          \
		 ##__VA_ARGS__)

#define DOCA_LOG_CRIT(format, ...) DOCA_LOG(CRIT, format, ##__VA_ARGS__)
#define DOCA_LOG_ERR(format, ...) DOCA_LOG(ERROR, format, ##__VA_ARGS__)
#define DOCA_LOG_WARN(format, ...) DOCA_LOG(WARNING, format, ##__VA_ARGS__)
#define DOCA_LOG_INFO(format, ...) DOCA_LOG(INFO, format, ##__VA_ARGS__)
#define DOCA_LOG_DBG(format, ...) DOCA_LOG(DEBUG, format, ##__VA_ARGS__)
#define DOCA_LOG_TRC(format, ...) DOCA_LOG(TRACE, format, ##__VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif /* DOCA_LOG_H_ */
