/*
 * softdpu internal: the small UCX layer shared by libdoca_urom, softdpu-uromd and
 * softdpu-urom-worker. UCX 1.13 API only.
 *
 * One message = one UCP active message (SDP_UROM_AM_ID) carrying bytes packed by
 * src/urom/proto. Receives are delivered whole to the worker's callback (eager data directly,
 * rendezvous data after ucp_am_recv_data_nbx completes). Sends copy the bytes, so the caller's
 * buffer is free on return; completion and errors of sends are handled inside.
 *
 * No UCP listener, no sockaddr endpoint: UCX's connection manager parses bytes from anyone who
 * reaches its port (it asserts on 17 zero bytes), so softdpu's only listening port is its own
 * control channel (sdp_urom_chan.h). Endpoints are made from worker addresses that an
 * authenticated peer handed out (ucp_ep_create with REMOTE_ADDRESS); hosts talk to workers
 * without UCP error handling, so same-host traffic uses shared memory (see
 * sdp_ucx_ep_connect_addr). sdp_ucx_context_create() pins UCX's NET_DEVICES in our own UCP
 * config when the caller passes devices (the service file's net,devs) and the user did not set
 * UCX_NET_DEVICES.
 *
 * Receive bound: a message longer than the worker's max_recv (sdp_ucx_worker_set_max_recv,
 * SDP_UCX_MAX_RECV_DEFAULT) is dropped before anything is allocated for it, with a warning;
 * a rendezvous one is released unread.
 *
 * Threads: a struct sdp_ucx_worker is used by one thread at a time; callers that share one
 * across threads serialise with their own lock (UCS_THREAD_MODE_SERIALIZED).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_UCX_H_
#define SDP_UCX_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <ucp/api/ucp.h>

#include "doca_error.h"

/*
 * Callbacks: UCX's own callbacks only queue events; the functions below run the caller's
 * callbacks from sdp_ucx_worker_progress() (and so from sdp_ucx_worker_wait()) after
 * ucp_worker_progress() has returned, in this order: messages (in arrival order), endpoint
 * errors. A callback may send, close endpoints or wait; it must not call sdp_ucx_worker_fini()
 * on its own worker.
 */

/* The largest message a worker accepts unless told otherwise (64 MiB of payload + headers). */
#define SDP_UCX_MAX_RECV_DEFAULT ((64u << 20) + (64u << 10))

/* Deliver one whole received message. reply_ep is the sender's endpoint (may be NULL). */
typedef void (*sdp_ucx_recv_func_t)(void *arg, ucp_ep_h reply_ep, const void *data, size_t len);

/* An endpoint failed (peer died, connection reset). Called from progress. */
typedef void (*sdp_ucx_ep_error_func_t)(void *arg, ucp_ep_h ep, ucs_status_t status);

struct sdp_ucx_worker {
	ucp_context_h context; /* not owned */
	ucp_worker_h worker;
	int efd; /* ucp_worker_get_efd, for epoll / PE notification */
	sdp_ucx_recv_func_t recv_cb;
	void *recv_arg;
	size_t max_recv; /* longer messages are dropped unread */
	void *priv;	 /* implementation state (pending rendezvous receives, ...) */
};

/*
 * Create a UCP context with AM + WAKEUP features. net_devices: value for NET_DEVICES when the
 * user did not set UCX_NET_DEVICES (NULL = leave UCX's default). Logs the cause on failure.
 */
doca_error_t sdp_ucx_context_create(const char *net_devices, ucp_context_h *context_p);
void sdp_ucx_context_destroy(ucp_context_h context);

doca_error_t sdp_ucx_worker_init(struct sdp_ucx_worker *w, ucp_context_h context,
				 ucs_thread_mode_t mode, sdp_ucx_recv_func_t recv_cb,
				 void *recv_arg);
void sdp_ucx_worker_fini(struct sdp_ucx_worker *w);

/* Messages longer than max_recv bytes are dropped from now on (default SDP_UCX_MAX_RECV_DEFAULT). */
void sdp_ucx_worker_set_max_recv(struct sdp_ucx_worker *w, size_t max_recv);

/* Progress once; nonzero if anything happened (a message delivered, a send completed ...). */
int sdp_ucx_worker_progress(struct sdp_ucx_worker *w);

/*
 * Arm the wakeup fd before sleeping on it: DOCA_SUCCESS = armed (poll w->efd),
 * DOCA_ERROR_AGAIN = events pending, progress first.
 */
doca_error_t sdp_ucx_worker_arm(struct sdp_ucx_worker *w);

/*
 * Progress until *flag becomes nonzero or timeout_ms passes, sleeping on the wakeup fd in
 * between (no busy spin). DOCA_ERROR_TIME_OUT on timeout.
 */
doca_error_t sdp_ucx_worker_wait(struct sdp_ucx_worker *w, volatile int *flag, int timeout_ms);

/* The worker's UCP address (malloc'd copy, free() it). */
doca_error_t sdp_ucx_worker_address(struct sdp_ucx_worker *w, void **addr_p, size_t *len_p);

/*
 * Connect to a worker address. err_mode UCP_ERR_HANDLING_MODE_PEER: UCX watches the peer and a
 * failure reaches err_cb (may be NULL); UCX 1.13's shared-memory transports (posix, sysv, cma)
 * do not offer that, so such an endpoint uses only TCP, even to a process of this host.
 * UCP_ERR_HANDLING_MODE_NONE: no peer watching (err_cb is never called), so same-host traffic
 * rides shared memory; the caller must learn of the peer's death some other way. Sending to a
 * dead peer then neither fails nor blocks: the message stays queued until the endpoint is
 * closed (sdp_ucx_ep_close() gives up after its bound and closes it by force).
 */
doca_error_t sdp_ucx_ep_connect_addr(struct sdp_ucx_worker *w, const void *addr, size_t len,
				     ucp_err_handling_mode_t err_mode,
				     sdp_ucx_ep_error_func_t err_cb, void *err_arg, ucp_ep_h *ep_p);

/*
 * Send one message (always with UCP_AM_SEND_FLAG_REPLY so the receiver gets a reply endpoint).
 * It goes out at once from data when UCX can (UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL), else from a
 * copy: either way data is free on return. DOCA_ERROR_IO_FAILED when UCX refuses it at once, DOCA_ERROR_NOT_CONNECTED when
 * the endpoint already reported an error.
 */
doca_error_t sdp_ucx_send(struct sdp_ucx_worker *w, ucp_ep_h ep, const void *data, size_t len);

/*
 * Close an endpoint created by this layer: flush within timeout_ms and close it gracefully, or
 * force-close it when the flush fails or times out (or the endpoint already failed). Never
 * blocks much longer (a forced close gets at most 200 ms more). Queued messages from that
 * endpoint are dropped. Not for reply endpoints handed to the receive callback (UCX owns those).
 * sdp_ucx_worker_fini() force-closes the endpoints still open.
 */
void sdp_ucx_ep_close(struct sdp_ucx_worker *w, ucp_ep_h ep, int timeout_ms);

#endif /* SDP_UCX_H_ */
