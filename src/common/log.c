/* placeholder, replaced by the full logging implementation */
#include <stdarg.h>
#include <stdio.h>

#include "sdp_log.h"

int sdp_log_sdk_enabled(uint32_t level)
{
	return level <= DOCA_LOG_LEVEL_WARNING;
}

void sdp_log_sdk(uint32_t level, const char *component, const char *file, int line,
		 const char *func, const char *fmt, ...)
{
	va_list ap;

	(void)level;
	(void)file;
	(void)line;
	fprintf(stderr, "softdpu::%s %s: ", component, func);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
