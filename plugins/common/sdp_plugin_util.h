/*
 * softdpu plugin helper: the few lines every softdpu plugin with a UCP worker of its own wrote
 * again (header only; the plugins' meson dependency sdp_plugin_mem_dep carries its directory).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_PLUGIN_UTIL_H_
#define SDP_PLUGIN_UTIL_H_

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <ucp/api/ucp.h>

#include <doca_error.h>
#include <doca_urom_plugin.h>

#include "sdp_ucx_am.h"
#include "sdp_ucx_tls.h"

/*
 * A notif_pack op for plugins whose notification is its header and len bytes, copied as they
 * are: DOCA_ERROR_TOO_BIG when *len (the capacity) is short, else *len = bytes written.
 */
static inline doca_error_t sdp_plugin_notif_copy(struct urom_worker_notify *notif, size_t *len,
						 void *packed)
{
	size_t need = offsetof(struct urom_worker_notify, plugin_notif) + notif->len;

	if (*len < need)
		return DOCA_ERROR_TOO_BIG;
	memcpy(packed, notif, need);
	*len = need;
	return DOCA_SUCCESS;
}

/*
 * The error handling of a plugin's endpoints to peers (owners' export workers, other members'
 * workers): peer error handling exactly where UCX_TLS rules shared memory out (sdp_ucx_tls.h,
 * which the host library's endpoint to its worker follows as well).
 */
static inline ucp_err_handling_mode_t sdp_plugin_err_mode(void)
{
	return sdp_ucx_tls_err_mode(getenv("UCX_TLS"));
}

/* A progress op's last step: hand the completed notifications over, EMPTY when there is none. */
static inline doca_error_t sdp_plugin_take_done(ucs_list_link_t *done, ucs_list_link_t *notif_list)
{
	if (ucs_list_is_empty(done))
		return DOCA_ERROR_EMPTY;
	ucs_list_splice_tail(notif_list, done);
	ucs_list_head_init(done);
	return DOCA_SUCCESS;
}

/* softdpu_plugin_wakeup_fd (softdpu/urom_plugin.h) for a plugin's UCP worker. */
static inline doca_error_t sdp_plugin_ucp_wakeup_fd(ucp_worker_h worker, int *fd)
{
	return ucp_worker_get_efd(worker, fd) == UCS_OK ? DOCA_SUCCESS : DOCA_ERROR_DRIVER;
}

/* softdpu_plugin_arm's answer for a plugin's UCP worker: armed, AGAIN (events pending), DRIVER. */
static inline doca_error_t sdp_plugin_ucp_arm(ucp_worker_h worker)
{
	ucs_status_t st = ucp_worker_arm(worker);

	return st == UCS_OK	  ? DOCA_SUCCESS :
	       st == UCS_ERR_BUSY ? DOCA_ERROR_AGAIN :
				    DOCA_ERROR_DRIVER;
}

#endif /* SDP_PLUGIN_UTIL_H_ */
