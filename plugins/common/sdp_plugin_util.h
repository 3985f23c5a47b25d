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
 * workers). UCX 1.13 leaves shared memory out of an endpoint with peer error handling, so while
 * shared memory may carry the traffic the endpoints have none; but then a transport error on
 * one (a peer lost over TCP: a link down for longer than the plugin waits, a dead host) makes
 * UCX abort the process at either end (ucs_fatal "unexpected error"), the host owning the
 * memory included. So: UCP_ERR_HANDLING_MODE_PEER whenever UCX_TLS rules shared memory out
 * ("tcp", "rc,ud", "^sm"), UCP_ERR_HANDLING_MODE_NONE otherwise (unset, "all", "sm", "tcp,cma").
 */
static inline ucp_err_handling_mode_t sdp_plugin_err_mode(void)
{
	static const char *const shm[] = {"all",  "sm",	   "shm", "mm",	  "posix",
					  "sysv", "xpmem", "cma", "knem", NULL};
	const char *tls = getenv("UCX_TLS"), *p;
	int exclude, named = 0;

	if (tls == NULL || *tls == '\0')
		return UCP_ERR_HANDLING_MODE_NONE;
	exclude = *tls == '^';
	for (p = tls + exclude; *p != '\0';) {
		size_t n = strcspn(p, ","), k = strcspn(p, ",:");

		for (int i = 0; shm[i] != NULL; i++)
			if (k == strlen(shm[i]) && strncmp(p, shm[i], k) == 0)
				named |= strcmp(shm[i], "sm") == 0 || strcmp(shm[i], "shm") == 0 ?
						 2 :
						 1;
		p += n + (p[n] == ',');
	}
	/* "^sm" / "^shm" excludes every shared memory transport; a list naming one keeps it */
	if (exclude)
		return named & 2 ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
	return named ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
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
