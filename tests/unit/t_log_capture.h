/*
 * The SDK log records a test captures: t_log_capture() (WARNING and more severe) or
 * t_log_capture_level() once, then t_log holds every record since the last t_log_reset(), one a
 * line, and t_log_nb counts them. One capture for every test that checks what the library
 * logged (t_nic.h's T_LOGGED, t_refusal.h's T_REFUSAL, the checks of single tests).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef T_LOG_CAPTURE_H_
#define T_LOG_CAPTURE_H_

#include <string.h>

#include "doca_log.h"
#include "t_helpers.h"

static char t_log[1 << 16];
static size_t t_log_len;
static int t_log_nb;
static char t_log_rec[4096];

static __attribute__((unused)) void t_log_flush(char *buf)
{
	size_t n = strlen(buf);

	t_log_nb++;
	if (t_log_len + n + 1 < sizeof(t_log)) {
		memcpy(t_log + t_log_len, buf, n);
		t_log_len += n;
		t_log[t_log_len++] = '\n';
		t_log[t_log_len] = '\0';
	}
}

/* Forget the records captured so far. */
static __attribute__((unused)) void t_log_reset(void)
{
	t_log[0] = '\0';
	t_log_len = 0;
	t_log_nb = 0;
}

/* Capture the records of `level` and more severe from now on; returns the backend. */
static __attribute__((unused)) struct doca_log_backend *t_log_capture_level(uint32_t level)
{
	struct doca_log_backend *be = NULL;

	T_OK(doca_log_backend_create_with_buf_sdk(t_log_rec, sizeof(t_log_rec), t_log_flush, &be));
	if (be != NULL)
		T_OK(doca_log_backend_set_sdk_level(be, level));
	t_log_reset();
	return be;
}

static __attribute__((unused)) void t_log_capture(void)
{
	(void)t_log_capture_level(DOCA_LOG_LEVEL_WARNING);
}

#endif /* T_LOG_CAPTURE_H_ */
