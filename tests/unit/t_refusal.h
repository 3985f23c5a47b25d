/*
 * Check that a refused call logs its cause once, in one SDK record that names the call made
 * ("[func] cause") and no hand-written "func: " prefix: t_refusal_capture() once, then after
 * each refused call T_REFUSAL(func, cause). Each check empties the capture for the next call.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef T_REFUSAL_H_
#define T_REFUSAL_H_

#include <stdio.h>
#include <string.h>

#include "doca_log.h"
#include "t_helpers.h"
#include "t_log_capture.h"

/* Capture the SDK records of level WARNING and more severe; returns the backend. */
static __attribute__((unused)) struct doca_log_backend *t_refusal_capture(void)
{
	return t_log_capture_level(DOCA_LOG_LEVEL_WARNING);
}

/* How many records came since the last check (and forget them). */
static __attribute__((unused)) int t_refusal_reset(void)
{
	int nb = t_log_nb;

	t_log_reset();
	return nb;
}

#define T_REFUSAL(func, cause) t_refusal(__FILE__, __LINE__, func, cause)
static __attribute__((unused)) void t_refusal(const char *file, int line, const char *func,
					      const char *cause)
{
	const char *first = strstr(t_log, func);
	char want[256];

	snprintf(want, sizeof(want), "[%s] %s", func, cause);
	if (t_log_nb != 1 || strstr(t_log, want) == NULL ||
	    strstr(first + strlen(func), func) != NULL) {
		fprintf(stderr,
			"FAIL %s:%d: expected one record \"%s\" naming %s once, got %d:\n%s", file,
			line, want, func, t_log_nb, t_log);
		t_failures++;
	}
	t_refusal_reset();
}

#endif /* T_REFUSAL_H_ */
