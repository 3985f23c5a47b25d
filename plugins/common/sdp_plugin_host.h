/*
 * softdpu plugin helpers for host halves (header only, no UCX): the bounded wait on a PE that
 * every host half's blocking helpers share, and the check of a notification's status.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_PLUGIN_HOST_H_
#define SDP_PLUGIN_HOST_H_

#include <poll.h>
#include <stdint.h>
#include <time.h>

#include <doca_pe.h>

static inline int64_t sdp_plugin_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * One step of a PE: progress; when nothing happened, sleep on its notification handle (at most
 * 2 ms, so a caller's deadline is never overslept by more than that) and progress again.
 */
static inline void sdp_plugin_pe_step(struct doca_pe *pe)
{
	doca_notification_handle_t h;

	if (doca_pe_progress(pe))
		return;
	if (doca_pe_get_notification_handle(pe, &h) == DOCA_SUCCESS &&
	    doca_pe_request_notification(pe) == DOCA_SUCCESS) {
		struct pollfd p = {.fd = (int)h, .events = POLLIN};

		if (poll(&p, 1, 2) > 0)
			(void)doca_pe_clear_notification(pe, h);
	} else {
		struct timespec ts = {0, 1000000};

		nanosleep(&ts, NULL);
	}
	(void)doca_pe_progress(pe);
}

/*
 * The status a worker's notification carries, as the application may see it: a doca_error_t
 * (DOCA_SUCCESS .. DOCA_ERROR_DEVICE_FATAL_ERROR), else DOCA_ERROR_INVALID_VALUE with *bad set
 * (the caller logs it): a worker's bytes never hand the application a value outside the enum.
 */
static inline doca_error_t sdp_plugin_notif_status(int64_t raw, int *bad)
{
	*bad = raw < DOCA_SUCCESS || raw > DOCA_ERROR_DEVICE_FATAL_ERROR;
	return *bad ? DOCA_ERROR_INVALID_VALUE : (doca_error_t)raw;
}

#endif /* SDP_PLUGIN_HOST_H_ */
