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

static char t_refusal_buf[1024];
static char t_refusal_recs[8192]; /* the records since the last check, one a line */
static int t_refusal_nb;

static void t_refusal_flush(char *buf)
{
	size_t len = strlen(t_refusal_recs);

	snprintf(t_refusal_recs + len, sizeof(t_refusal_recs) - len, "%s\n", buf);
	t_refusal_nb++;
}

/* Capture the SDK records of level WARNING and more severe; returns the backend. */
static __attribute__((unused)) struct doca_log_backend *t_refusal_capture(void)
{
	struct doca_log_backend *be = NULL;

	T_OK(doca_log_backend_create_with_buf_sdk(t_refusal_buf, sizeof(t_refusal_buf),
						  t_refusal_flush, &be));
	if (be != NULL)
		T_OK(doca_log_backend_set_sdk_level(be, DOCA_LOG_LEVEL_WARNING));
	t_refusal_recs[0] = '\0';
	t_refusal_nb = 0;
	return be;
}

/* How many records came since the last check (and forget them). */
static __attribute__((unused)) int t_refusal_reset(void)
{
	int nb = t_refusal_nb;

	t_refusal_recs[0] = '\0';
	t_refusal_nb = 0;
	return nb;
}

#define T_REFUSAL(func, cause) t_refusal(__FILE__, __LINE__, func, cause)
static __attribute__((unused)) void t_refusal(const char *file, int line, const char *func,
					      const char *cause)
{
	const char *first = strstr(t_refusal_recs, func);
	char want[256];

	snprintf(want, sizeof(want), "[%s] %s", func, cause);
	if (t_refusal_nb != 1 || strstr(t_refusal_recs, want) == NULL ||
	    strstr(first + strlen(func), func) != NULL) {
		fprintf(stderr,
			"FAIL %s:%d: expected one record \"%s\" naming %s once, got %d:\n%s", file,
			line, want, func, t_refusal_nb, t_refusal_recs);
		t_failures++;
	}
	t_refusal_reset();
}

#endif /* T_REFUSAL_H_ */
