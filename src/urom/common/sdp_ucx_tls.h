/*
 * softdpu UROM: which UCP error handling an endpoint to a peer gets, from UCX_TLS (header only,
 * UCX's types; used by the host library and by softdpu's plugins).
 *
 * UCX 1.13 leaves shared memory out of an endpoint with peer error handling, so while shared
 * memory may carry the traffic our endpoints have none; but then a transport error on one (a
 * peer lost over TCP: a link down for longer than the sender waits, a dead host or process)
 * makes UCX abort the process (ucs_fatal "unexpected error"), the host that owns the memory or
 * the task included. So: UCP_ERR_HANDLING_MODE_PEER whenever UCX_TLS rules shared memory out
 * ("tcp", "rc,ud", "^sm"), UCP_ERR_HANDLING_MODE_NONE otherwise (unset, "all", "sm",
 * "tcp,cma"): with TCP only there is nothing to lose by asking UCX to watch the peer.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_UCX_TLS_H_
#define SDP_UCX_TLS_H_

#include <string.h>

#include <ucp/api/ucp.h>

/* tls: UCX_TLS's value (NULL: unset). */
static inline ucp_err_handling_mode_t sdp_ucx_tls_err_mode(const char *tls)
{
	static const char *const shm[] = {"all",  "sm",	   "shm", "mm",	  "posix",
					  "sysv", "xpmem", "cma", "knem", NULL};
	const char *p;
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

#endif /* SDP_UCX_TLS_H_ */
