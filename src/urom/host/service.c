/*
 * libdoca_urom: the service context. Start connects to softdpu-uromd's control port (a plain
 * TCP connection, sdp_urom_chan.h) and runs the versioned, authenticated handshake
 * synchronously (bounded by SOFTDPU_UROM_CONNECT_TIMEOUT_MS); until the service has proved it
 * knows the secret, frames from it are bounded by SDP_UROM_FRAME_PREAUTH_MAX. The connection
 * then carries the SPAWN / RELEASE requests of worker contexts and the gid queries of
 * get-workers-by-gid tasks; UCX endpoints are made only to workers, from the addresses the
 * authenticated service hands out. See sdp_urom_host.h for the locking rules.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>

#include "doca_dev.h"
#include "doca_urom.h"
#include "sdp_ctx.h"
#include "sdp_log.h"
#include "sdp_provider.h"
#include "sdp_urom_auth.h"
#include "sdp_urom_host.h"

SDP_LOG_COMPONENT("urom_service");

static struct doca_urom_service *svc_of(struct doca_ctx *ctx)
{
	return sdp_container_of(ctx, struct doca_urom_service, ctx);
}

/* ---- requests and replies ------------------------------------------------------------------- */

void sdp_urom_req_clear(struct sdp_urom_req *req)
{
	free(req->reply);
	free(req->reply_buf);
	req->reply = NULL;
	req->reply_buf = NULL;
}

void sdp_urom_req_drop_locked(struct sdp_urom_req *req)
{
	if (req->link.next != NULL && !sdp_list_is_empty(&req->link))
		sdp_list_del(&req->link);
	sdp_list_head_init(&req->link);
	sdp_urom_req_clear(req);
}

/* A request got its answer or failed: unqueue it, wake its owner (lock held). */
static void svc_req_finish(struct sdp_urom_req *req, doca_error_t status)
{
	struct doca_pe *pe = req->wake_pe;

	if (!sdp_list_is_empty(&req->link))
		sdp_list_del(&req->link);
	sdp_list_head_init(&req->link);
	req->status = status;
	req->done = 1;
	if (req->done_cb != NULL)
		req->done_cb(req); /* owns req from here */
	if (pe != NULL)
		sdp_pe_signal(pe);
}

static void svc_fail_all_locked(struct doca_urom_service *svc, doca_error_t status, const char *why)
{
	while (!sdp_list_is_empty(&svc->reqs)) {
		struct sdp_urom_req *req =
			sdp_container_of(svc->reqs.next, struct sdp_urom_req, link);

		snprintf(req->reason, sizeof(req->reason), "%s", why);
		svc_req_finish(req, status);
	}
}

static struct sdp_urom_req *svc_find_req(struct doca_urom_service *svc, uint64_t req_id)
{
	struct sdp_urom_req *req;

	sdp_list_for_each(req, &svc->reqs, link)
		if (req->req_id == req_id)
			return req;
	return NULL;
}

doca_error_t sdp_urom_send_msg(struct sdp_ucx_worker *w, ucp_ep_h ep,
			       const struct sdp_urom_msg *msg)
{
	size_t len = sdp_urom_msg_packed_size(msg), used = 0;
	doca_error_t status;
	void *buf;

	buf = malloc(len);
	if (buf == NULL) {
		sdp_error("failed to allocate %zu bytes for a %s message", len,
			  sdp_urom_msg_type_name(msg->hdr.type));
		return DOCA_ERROR_NO_MEMORY;
	}
	status = sdp_urom_msg_pack(msg, buf, len, &used);
	if (status != DOCA_SUCCESS) {
		sdp_error("failed to pack a %s message: %s", sdp_urom_msg_type_name(msg->hdr.type),
			  doca_error_get_name(status));
		free(buf);
		return status;
	}
	status = sdp_ucx_send(w, ep, buf, used);
	free(buf);
	return status;
}

static void svc_conn_failed(struct doca_urom_service *svc, const char *why);

doca_error_t sdp_urom_svc_send_locked(struct doca_urom_service *svc, const struct sdp_urom_msg *msg)
{
	size_t len = sdp_urom_msg_packed_size(msg);
	doca_error_t status;

	if (!svc->chan_ready || svc->conn_lost) {
		sdp_error("the connection to the UROM service at %s is %s", svc->addr_str,
			  !svc->chan_ready ? "closed" : "lost");
		return DOCA_ERROR_NOT_CONNECTED;
	}
	if (len == 0 || len > svc->ctrl_max) {
		sdp_error("a %s message of %zu bytes exceeds the %zu bytes the UROM service at %s "
			  "accepts",
			  sdp_urom_msg_type_name(msg->hdr.type), len, svc->ctrl_max, svc->addr_str);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* Requests are small; the service reads all the time: wait (bounded) for the socket. */
	status = sdp_urom_chan_send_wait(&svc->chan, msg, sdp_urom_connect_timeout_ms());
	if (status == DOCA_ERROR_NOT_CONNECTED || status == DOCA_ERROR_IO_FAILED) {
		svc_conn_failed(svc, status == DOCA_ERROR_IO_FAILED ?
					     "the service does not read its connection" :
					     "the service closed the connection");
		return status == DOCA_ERROR_IO_FAILED ? status : DOCA_ERROR_NOT_CONNECTED;
	}
	return status;
}

doca_error_t sdp_urom_svc_request_locked(struct doca_urom_service *svc, struct sdp_urom_msg *msg,
					 struct sdp_urom_req *req, uint16_t want_type)
{
	doca_error_t status;

	if (!svc->chan_ready || svc->conn_lost) {
		sdp_error("the connection to the UROM service at %s is %s", svc->addr_str,
			  !svc->chan_ready ? "closed" : "lost");
		return DOCA_ERROR_NOT_CONNECTED;
	}
	req->req_id = ++svc->next_req_id;
	req->want_type = want_type;
	req->done = 0;
	req->status = DOCA_SUCCESS;
	req->reason[0] = '\0';
	req->reply = NULL;
	req->reply_buf = NULL;
	msg->hdr.req_id = req->req_id;
	status = sdp_urom_svc_send_locked(svc, msg);
	if (status != DOCA_SUCCESS)
		return status;
	sdp_list_add_tail(&svc->reqs, &req->link);
	atomic_store(&svc->poll_hot, 1); /* the service PE looks at every call until answered */
	return DOCA_SUCCESS;
}

static int svc_frame(void *arg, const uint8_t *data, size_t len);

int sdp_urom_svc_progress_locked(struct doca_urom_service *svc)
{
	doca_error_t status;
	int made = 0;

	if (!svc->chan_ready || svc->conn_lost)
		return 0;
	status = sdp_urom_chan_read(&svc->chan, svc_frame, svc, &made);
	if (status == DOCA_ERROR_INVALID_VALUE)
		svc_conn_failed(svc, "the service sent bytes that are not a UROM frame");
	else if (status != DOCA_SUCCESS)
		svc_conn_failed(svc, "the service closed the connection");
	return made || status != DOCA_SUCCESS;
}

/* Keep a copy of a reply in req (its views point into the copy). */
static doca_error_t svc_req_keep_reply(struct sdp_urom_req *req, const void *data, size_t len)
{
	req->reply_buf = malloc(len ? len : 1);
	req->reply = malloc(sizeof(*req->reply));
	if (req->reply_buf == NULL || req->reply == NULL) {
		sdp_error("failed to allocate %zu bytes for a reply", len);
		sdp_urom_req_clear(req);
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(req->reply_buf, data, len);
	if (sdp_urom_msg_unpack(req->reply_buf, len, req->reply) != DOCA_SUCCESS) {
		/* The same bytes parsed a moment ago: a broken invariant. */
		sdp_crit("a %zu-byte reply no longer parses after copying", len);
		sdp_urom_req_clear(req);
		return DOCA_ERROR_UNEXPECTED;
	}
	return DOCA_SUCCESS;
}

static void copy_reason(char *dst, size_t size, const struct sdp_urom_bytes *b)
{
	size_t n = b->len < size - 1 ? b->len : size - 1;

	memcpy(dst, b->data, n);
	dst[n] = '\0';
}

static int svc_frame(void *arg, const uint8_t *data, size_t len)
{
	struct doca_urom_service *svc = arg;
	struct sdp_urom_msg *msg;
	struct sdp_urom_req *req;
	doca_error_t status;
	char why[160];

	msg = malloc(sizeof(*msg));
	if (msg == NULL) {
		sdp_error("failed to allocate a message of %zu bytes; message dropped",
			  sizeof(*msg));
		return 0;
	}
	status = sdp_urom_msg_unpack_why(data, len, msg, why, sizeof(why));
	if (status == DOCA_ERROR_NOT_SUPPORTED) {
		sdp_error("UROM protocol mismatch: this host library speaks version %u, the "
			  "service at %s speaks version %u",
			  SDP_UROM_PROTO_VERSION, svc->addr_str, msg->hdr.version);
		svc_fail_all_locked(svc, DOCA_ERROR_NOT_SUPPORTED, "protocol version mismatch");
		goto out;
	}
	if (status != DOCA_SUCCESS) {
		sdp_warn("malformed message from the service at %s dropped: %s", svc->addr_str,
			 why);
		goto out;
	}

	sdp_trace("service %s: %s req %lu", svc->addr_str, sdp_urom_msg_type_name(msg->hdr.type),
		  (unsigned long)msg->hdr.req_id);
	if (msg->hdr.type == SDP_UROM_MSG_WORKER_EXIT) {
		struct doca_urom_worker *worker;

		sdp_list_for_each(worker, &svc->workers, svc_link)
			if (worker->phase != SDP_UROM_W_IDLE &&
			    worker->id == msg->u.worker_exit.worker_id)
				sdp_urom_worker_mark_dead(worker, "the service reported its exit");
		goto out;
	}

	req = svc_find_req(svc, msg->hdr.req_id);
	/* a refusal of the handshake step under way (one already answered stays answered) */
	if (req == NULL && svc->handshake && svc->hs_req != NULL && !svc->hs_req->done &&
	    (msg->hdr.type == SDP_UROM_MSG_REJECT || msg->hdr.type == SDP_UROM_MSG_VERSION_REJECT))
		req = svc->hs_req;
	if (req == NULL) {
		sdp_debug("service %s: unexpected %s (req %lu) dropped", svc->addr_str,
			  sdp_urom_msg_type_name(msg->hdr.type), (unsigned long)msg->hdr.req_id);
		goto out;
	}

	switch (msg->hdr.type) {
	case SDP_UROM_MSG_VERSION_REJECT:
		sdp_error("UROM protocol mismatch: this host library speaks version %u, the "
			  "service at %s (%.*s) speaks version %u",
			  SDP_UROM_PROTO_VERSION, svc->addr_str,
			  (int)msg->u.version_reject.software.len,
			  (const char *)msg->u.version_reject.software.data,
			  msg->u.version_reject.version);
		snprintf(req->reason, sizeof(req->reason), "protocol version mismatch");
		svc_req_finish(req, DOCA_ERROR_NOT_SUPPORTED);
		break;
	case SDP_UROM_MSG_REJECT:
		copy_reason(req->reason, sizeof(req->reason), &msg->u.reject.reason);
		status = (doca_error_t)msg->u.reject.status;
		/*
		 * A refusal is an error: never SUCCESS, never IN_PROGRESS (a context start that
		 * returned it would wait in STARTING for ever). The parser already refused values
		 * outside doca_error_t (rd_status).
		 */
		if (status == DOCA_SUCCESS || status == DOCA_ERROR_IN_PROGRESS) {
			sdp_warn("service %s: refusal with status %u, not an error; taken as "
				 "DOCA_ERROR_UNEXPECTED",
				 svc->addr_str, msg->u.reject.status);
			status = DOCA_ERROR_UNEXPECTED;
		}
		svc_req_finish(req, status);
		break;
	default:
		if (msg->hdr.type != req->want_type) {
			sdp_warn("service %s: %s answers request %lu, expected %s; dropped",
				 svc->addr_str, sdp_urom_msg_type_name(msg->hdr.type),
				 (unsigned long)msg->hdr.req_id,
				 sdp_urom_msg_type_name(req->want_type));
			break;
		}
		status = svc_req_keep_reply(req, data, len);
		svc_req_finish(req, status);
		break;
	}
out:
	free(msg);
	return 0;
}

/* The service connection is gone (lock held): fail what waits, tell the worker contexts. */
static void svc_conn_failed(struct doca_urom_service *svc, const char *why)
{
	struct doca_urom_worker *worker;

	if (svc->conn_lost)
		return;
	svc->conn_lost = 1;
	if (svc->handshake) {
		sdp_debug("service %s: connection failed: %s", svc->addr_str, why);
		svc_fail_all_locked(svc, DOCA_ERROR_NOT_CONNECTED, why);
		return;
	}
	sdp_error("connection to the UROM service at %s lost: %s", svc->addr_str, why);
	svc_fail_all_locked(svc, DOCA_ERROR_IO_FAILED, "connection to the service lost");
	/*
	 * Workers die with their service (their control socket closes), and WORKER_EXIT can no
	 * longer reach us: their direct endpoints have no error handling of their own.
	 */
	sdp_list_for_each(worker, &svc->workers, svc_link)
		if (worker->phase != SDP_UROM_W_IDLE)
			sdp_urom_worker_mark_dead(worker, "the connection to the service was lost");
}

/* ---- connect and handshake ------------------------------------------------------------------ */

static doca_error_t svc_resolve(struct doca_urom_service *svc, struct sockaddr_storage *ss,
				socklen_t *ss_len)
{
	struct addrinfo hints, *res = NULL;
	char port[8];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof(port), "%u", svc->addr.port);
	rc = getaddrinfo(svc->addr.host, port, &hints, &res);
	if (rc != 0 || res == NULL) {
		sdp_error("cannot connect to the UROM service at %s (from %s): cannot resolve "
			  "%s: %s",
			  svc->addr_str, svc->addr.origin, svc->addr.host, gai_strerror(rc));
		return DOCA_ERROR_NOT_CONNECTED;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*ss_len = res->ai_addrlen;
	freeaddrinfo(res);
	return DOCA_SUCCESS;
}

/* Send msg as request req and wait (bounded by deadline) for its reply (lock held). */
static doca_error_t svc_handshake_step(struct doca_urom_service *svc, struct sdp_urom_msg *msg,
				       struct sdp_urom_req *req, uint16_t want_type,
				       uint64_t deadline, int timeout_ms)
{
	doca_error_t status;
	uint64_t now;

	svc->hs_req = req;
	status = sdp_urom_svc_request_locked(svc, msg, req, want_type);
	if (status != DOCA_SUCCESS) {
		if (status == DOCA_ERROR_IO_FAILED)
			status = DOCA_ERROR_NOT_CONNECTED;
		goto out;
	}
	while (!req->done) {
		(void)sdp_urom_svc_progress_locked(svc);
		now = sdp_urom_now_ms();
		if (req->done || now >= deadline)
			break;
		(void)sdp_urom_chan_wait(&svc->chan, (int)(deadline - now));
	}
	if (!req->done) {
		sdp_urom_req_drop_locked(req);
		sdp_error("cannot connect to the UROM service at %s (from %s): no %s within %d ms "
			  "(is softdpu-uromd running? SOFTDPU_UROM_CONNECT_TIMEOUT_MS)",
			  svc->addr_str, svc->addr.origin, sdp_urom_msg_type_name(want_type),
			  timeout_ms);
		status = DOCA_ERROR_NOT_CONNECTED;
		goto out;
	}
	status = req->status;
	switch (status) {
	case DOCA_SUCCESS:
		break;
	case DOCA_ERROR_NOT_CONNECTED:
		sdp_error("cannot connect to the UROM service at %s (from %s): %s (is "
			  "softdpu-uromd running?)",
			  svc->addr_str, svc->addr.origin, req->reason);
		break;
	case DOCA_ERROR_NOT_SUPPORTED:
		break; /* both versions were logged when the answer arrived */
	default:
		sdp_error("the UROM service at %s refused the connection: %s (%s)", svc->addr_str,
			  req->reason[0] ? req->reason : "no reason given",
			  doca_error_get_name(status));
		break;
	}
out:
	svc->hs_req = NULL;
	return status;
}

static void svc_store_welcome(struct doca_urom_service *svc, const struct sdp_urom_msg *msg)
{
	uint32_t i;
	size_t n;

	svc->msg_size = msg->u.welcome.max_msg_size;
	if (svc->msg_size > svc->max_msg_size)
		svc->msg_size = svc->max_msg_size;
	UCS_CPU_ZERO(&svc->cpuset);
	for (i = 0; i < SDP_UROM_CPUSET_WORDS &&
		    i < sizeof(svc->cpuset.ucs_bits) / sizeof(svc->cpuset.ucs_bits[0]);
	     i++)
		svc->cpuset.ucs_bits[i] = (ucs_cpu_mask_t)msg->u.welcome.cpuset[i];
	n = msg->u.welcome.service_version.len;
	if (n >= sizeof(svc->service_version))
		n = sizeof(svc->service_version) - 1;
	memcpy(svc->service_version, msg->u.welcome.service_version.data, n);
	svc->service_version[n] = '\0';
	svc->plugins_mask = 0;
	for (i = 0; i < msg->u.welcome.num_plugins; i++) {
		struct doca_urom_service_plugin_info *p = &svc->plugins[i];

		p->id = msg->u.welcome.plugins[i].id;
		p->version = msg->u.welcome.plugins[i].version;
		memcpy(p->plugin_name, msg->u.welcome.plugins[i].name, sizeof(p->plugin_name));
		p->plugin_name[sizeof(p->plugin_name) - 1] = '\0';
		svc->plugins_mask |= p->id;
	}
	svc->num_plugins = msg->u.welcome.num_plugins;
}

static void svc_disconnect(struct doca_urom_service *svc)
{
	if (svc->efd_added) {
		sdp_pe_del_event_fd(sdp_ctx_get_pe(&svc->ctx), svc->chan.fd);
		svc->efd_added = 0;
	}
	pthread_mutex_lock(&svc->lock);
	if (svc->chan_ready) {
		sdp_urom_chan_fini(&svc->chan);
		svc->chan_ready = 0;
	}
	pthread_mutex_unlock(&svc->lock);
	free(svc->plugins);
	svc->plugins = NULL;
	svc->num_plugins = 0;
	svc->plugins_mask = 0;
}

static doca_error_t svc_start(struct doca_ctx *ctx)
{
	struct doca_urom_service *svc = svc_of(ctx);
	uint8_t secret[SDP_UROM_SECRET_LEN], client_nonce[SDP_UROM_NONCE_LEN];
	uint8_t mac[SDP_UROM_MAC_LEN];
	char secret_path[512], why[128];
	doca_error_t status, secret_status;
	struct sockaddr_storage ss;
	struct sdp_urom_msg *msg;
	struct sdp_urom_req req;
	socklen_t ss_len = 0;
	int timeout_ms = sdp_urom_connect_timeout_ms(), fd = -1;
	uint64_t deadline = sdp_urom_now_ms() + (uint64_t)timeout_ms;
	char hostname[256];

	memset(&req, 0, sizeof(req));
	sdp_list_head_init(&req.link);

	status = sdp_urom_addr_resolve(svc->pci_addr[0] ? svc->pci_addr : NULL, &svc->addr);
	if (status != DOCA_SUCCESS)
		return status;
	snprintf(svc->addr_str, sizeof(svc->addr_str),
		 strchr(svc->addr.host, ':') ? "[%s]:%u" : "%s:%u", svc->addr.host, svc->addr.port);

	status = svc_resolve(svc, &ss, &ss_len);
	if (status != DOCA_SUCCESS)
		return status;

	secret_path[0] = '\0';
	msg = calloc(1, sizeof(*msg));
	svc->plugins = calloc(SDP_UROM_MAX_PLUGINS, sizeof(*svc->plugins));
	if (msg == NULL || svc->plugins == NULL) {
		sdp_error("failed to allocate the handshake state");
		status = DOCA_ERROR_NO_MEMORY;
		goto err_free;
	}

	status = sdp_urom_chan_connect((struct sockaddr *)&ss, ss_len, timeout_ms, &fd, why,
				       sizeof(why));
	if (status != DOCA_SUCCESS) {
		sdp_error("cannot connect to the UROM service at %s (from %s): %s (is "
			  "softdpu-uromd running?)",
			  svc->addr_str, svc->addr.origin, why);
		goto err_free;
	}
	pthread_mutex_lock(&svc->lock);
	/* Until the service proves it knows the secret, its frames are bounded tightly. */
	status = sdp_urom_chan_init(&svc->chan, fd, SDP_UROM_FRAME_PREAUTH_MAX);
	if (status != DOCA_SUCCESS) {
		close(fd);
		pthread_mutex_unlock(&svc->lock);
		goto err_free;
	}
	svc->chan_ready = 1;
	svc->conn_lost = 0;
	svc->ctrl_max = SDP_UROM_FRAME_PREAUTH_MAX;
	svc->handshake = 1;

	/* HELLO -> CHALLENGE */
	sdp_urom_random(client_nonce, sizeof(client_nonce));
	if (gethostname(hostname, sizeof(hostname)) != 0)
		strcpy(hostname, "unknown");
	hostname[sizeof(hostname) - 1] = '\0';
	memset(msg, 0, sizeof(*msg));
	msg->hdr.type = SDP_UROM_MSG_HELLO;
	msg->u.hello.min_version = SDP_UROM_PROTO_VERSION;
	msg->u.hello.max_version = SDP_UROM_PROTO_VERSION;
	memcpy(msg->u.hello.nonce, client_nonce, sizeof(client_nonce));
	msg->u.hello.pid = (uint32_t)getpid();
	msg->u.hello.uid = (uint32_t)getuid();
	msg->u.hello.hostname.data = (const uint8_t *)hostname;
	msg->u.hello.hostname.len = (uint32_t)strlen(hostname);
	msg->u.hello.max_msg_size = svc->max_msg_size;
	msg->u.hello.max_workers = svc->max_workers;
	status = svc_handshake_step(svc, msg, &req, SDP_UROM_MSG_CHALLENGE, deadline, timeout_ms);
	if (status != DOCA_SUCCESS)
		goto err_unlock;

	/* Read the secret only now: an unreachable service is reported as such first. */
	secret_status = sdp_urom_secret_path(secret_path, sizeof(secret_path));
	if (secret_status == DOCA_SUCCESS)
		secret_status = sdp_urom_secret_load(secret_path, secret);
	if (secret_status != DOCA_SUCCESS) {
		sdp_error("cannot authenticate to the UROM service at %s: no usable secret at %s "
			  "(%s; SOFTDPU_UROM_SECRET_FILE)",
			  svc->addr_str, secret_path, doca_error_get_name(secret_status));
		status = DOCA_ERROR_AUTHENTICATION;
		goto err_clear_req;
	}
	status = sdp_urom_auth_verify(secret, "svc", client_nonce, req.reply->u.challenge.nonce,
				      req.reply->u.challenge.mac);
	if (status != DOCA_SUCCESS) {
		sdp_error("the UROM service at %s failed to prove it knows the secret of %s",
			  svc->addr_str, secret_path);
		status = DOCA_ERROR_AUTHENTICATION;
		goto err_clear_req;
	}
	sdp_urom_chan_set_max_frame(&svc->chan, SDP_UROM_CHAN_MAX_FROM_SERVICE);

	/* AUTH -> WELCOME */
	sdp_urom_auth_mac(secret, "host", req.reply->u.challenge.nonce, client_nonce, mac);
	memset(msg, 0, sizeof(*msg));
	msg->hdr.type = SDP_UROM_MSG_AUTH;
	memcpy(msg->u.auth.mac, mac, sizeof(mac));
	sdp_urom_req_clear(&req);
	status = svc_handshake_step(svc, msg, &req, SDP_UROM_MSG_WELCOME, deadline, timeout_ms);
	if (status != DOCA_SUCCESS)
		goto err_unlock;
	if (req.reply->u.welcome.max_msg_size < SDP_UROM_MIN_MSG_SIZE) {
		sdp_error("the UROM service at %s offers messages of %lu bytes, fewer than %u",
			  svc->addr_str, (unsigned long)req.reply->u.welcome.max_msg_size,
			  SDP_UROM_MIN_MSG_SIZE);
		status = DOCA_ERROR_NOT_SUPPORTED;
		goto err_clear_req;
	}
	svc_store_welcome(svc, req.reply);
	svc->ctrl_max =
		svc->msg_size > SDP_UROM_CTRL_FRAME_MIN ? svc->msg_size : SDP_UROM_CTRL_FRAME_MIN;
	sdp_urom_req_clear(&req);
	svc->handshake = 0;
	pthread_mutex_unlock(&svc->lock);

	status = sdp_pe_add_event_fd(sdp_ctx_get_pe(ctx), svc->chan.fd);
	if (status != DOCA_SUCCESS)
		goto err_disconnect;
	svc->efd_added = 1;
	free(msg);
	sodium_memzero(secret, sizeof(secret));
	sodium_memzero(mac, sizeof(mac));
	sdp_info("connected to the UROM service %s at %s (from %s): %zu plugin(s), messages "
		 "of %zu bytes",
		 svc->service_version, svc->addr_str, svc->addr.origin, svc->num_plugins,
		 svc->msg_size);
	return DOCA_SUCCESS;

err_clear_req:
	sdp_urom_req_clear(&req);
err_unlock:
	svc->handshake = 0;
	pthread_mutex_unlock(&svc->lock);
err_disconnect:
	svc_disconnect(svc);
err_free:
	sodium_memzero(secret, sizeof(secret));
	sodium_memzero(mac, sizeof(mac));
	free(msg);
	free(svc->plugins);
	svc->plugins = NULL;
	return status;
}

static doca_error_t svc_stop(struct doca_ctx *ctx)
{
	struct doca_urom_service *svc = svc_of(ctx);

	pthread_mutex_lock(&svc->lock);
	if (svc->num_active > 0) {
		size_t n = svc->num_active;

		pthread_mutex_unlock(&svc->lock);
		sdp_error("service %p: %zu worker context(s) using it are not stopped; stop them "
			  "first",
			  (void *)svc, n);
		return DOCA_ERROR_IN_USE;
	}
	/* Outstanding gid queries complete (their tasks with an error) before we go. */
	svc_fail_all_locked(svc, DOCA_ERROR_CONNECTION_ABORTED, "service context stopped");
	pthread_mutex_unlock(&svc->lock);
	svc_disconnect(svc);
	return DOCA_SUCCESS;
}

/*
 * With no reply due, the connection is looked at every SDP_UROM_SVC_POLL_CALLS calls and at most
 * every SDP_UROM_SVC_POLL_MS (a system call each time, on the PE that usually also carries the
 * worker contexts' commands); a sleeping program is woken by the wakeup fd and svc_arm.
 */
static int svc_progress(struct doca_ctx *ctx)
{
	struct doca_urom_service *svc = svc_of(ctx);
	uint64_t now;
	int made;

	if (!atomic_load_explicit(&svc->poll_hot, memory_order_relaxed)) {
		if (++svc->poll_calls < SDP_UROM_SVC_POLL_CALLS)
			return 0;
		svc->poll_calls = 0;
		now = sdp_urom_now_ms();
		if (now - svc->poll_ms < SDP_UROM_SVC_POLL_MS)
			return 0;
		svc->poll_ms = now;
	}
	pthread_mutex_lock(&svc->lock);
	made = sdp_urom_svc_progress_locked(svc);
	if (!made && sdp_list_is_empty(&svc->reqs))
		atomic_store_explicit(&svc->poll_hot, 0, memory_order_relaxed);
	pthread_mutex_unlock(&svc->lock);
	return made;
}

static int svc_arm(struct doca_ctx *ctx)
{
	struct doca_urom_service *svc = svc_of(ctx);
	int pending = 0;

	pthread_mutex_lock(&svc->lock);
	if (svc->chan_ready && !svc->conn_lost) {
		struct pollfd p = {.fd = svc->chan.fd, .events = POLLIN};

		/* Bytes already waiting would wake the PE at once: read them first. */
		pending = sdp_urom_chan_out_pending(&svc->chan) || poll(&p, 1, 0) > 0;
	}
	if (pending) /* events wait: the next progress call must look */
		atomic_store_explicit(&svc->poll_hot, 1, memory_order_relaxed);
	pthread_mutex_unlock(&svc->lock);
	return pending;
}

static const struct sdp_ctx_ops svc_ops = {
	.name = "urom_service",
	.start = svc_start,
	.stop = svc_stop,
	.progress = svc_progress,
	.arm = svc_arm,
};

/* ---- public API ----------------------------------------------------------------------------- */

doca_error_t doca_urom_service_create(struct doca_urom_service **service_ctx)
{
	struct doca_urom_service *svc;

	if (service_ctx == NULL) {
		sdp_error("NULL service_ctx");
		return DOCA_ERROR_INVALID_VALUE;
	}
	svc = calloc(1, sizeof(*svc));
	if (svc == NULL) {
		sdp_error("failed to allocate a service context of %zu bytes", sizeof(*svc));
		return DOCA_ERROR_NO_MEMORY;
	}
	if (pthread_mutex_init(&svc->lock, NULL) != 0) {
		sdp_error("failed to initialise the service lock");
		free(svc);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	sdp_ctx_init(&svc->ctx, &svc_ops);
	svc->max_msg_size = SDP_UROM_DEFAULT_MSG_SIZE;
	sdp_list_head_init(&svc->reqs);
	sdp_list_head_init(&svc->workers);
	atomic_init(&svc->poll_hot, 1);
	*service_ctx = svc;
	sdp_debug("service %p created", (void *)svc);
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_service_destroy(struct doca_urom_service *service_ctx)
{
	struct doca_urom_service *svc = service_ctx;
	size_t attached;
	doca_error_t status;

	if (svc == NULL) {
		sdp_error("NULL service_ctx");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (svc->ctx.state != DOCA_CTX_STATE_IDLE) {
		sdp_error("service %p: cannot destroy, the context is %s (not IDLE)", (void *)svc,
			  sdp_ctx_state_name(svc->ctx.state));
		return DOCA_ERROR_NOT_PERMITTED;
	}
	pthread_mutex_lock(&svc->lock);
	attached = svc->num_workers;
	pthread_mutex_unlock(&svc->lock);
	if (attached > 0) {
		sdp_error("service %p: cannot destroy, %zu worker context(s) still use it; destroy "
			  "them first",
			  (void *)svc, attached);
		return DOCA_ERROR_IN_USE;
	}
	status = sdp_ctx_fini(&svc->ctx);
	if (status != DOCA_SUCCESS)
		return status;
	if (svc->dev != NULL)
		sdp_dev_release(svc->dev);
	pthread_mutex_destroy(&svc->lock);
	sdp_debug("service %p destroyed", (void *)svc);
	free(svc);
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_service_set_max_comm_msg_size(struct doca_urom_service *service_ctx,
						     size_t msg_size)
{
	doca_error_t status;

	if (service_ctx == NULL) {
		sdp_error("NULL service_ctx");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_ctx_check_idle(&service_ctx->ctx, "setting the message size");
	if (status != DOCA_SUCCESS)
		return status;
	if (msg_size < SDP_UROM_MIN_MSG_SIZE || msg_size > SDP_UROM_MAX_MSG_SIZE) {
		sdp_error("message size %zu out of range [%u, %u]", msg_size, SDP_UROM_MIN_MSG_SIZE,
			  SDP_UROM_MAX_MSG_SIZE);
		return DOCA_ERROR_INVALID_VALUE;
	}
	service_ctx->max_msg_size = msg_size;
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_service_set_max_workers(struct doca_urom_service *service_ctx,
					       uint32_t max_workers)
{
	doca_error_t status;

	if (service_ctx == NULL) {
		sdp_error("NULL service_ctx");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_ctx_check_idle(&service_ctx->ctx, "setting the maximum number of workers");
	if (status != DOCA_SUCCESS)
		return status;
	if (max_workers == 0 || (max_workers & (max_workers - 1)) != 0) {
		sdp_error("maximum number of workers %u is not a power of two", max_workers);
		return DOCA_ERROR_INVALID_VALUE;
	}
	service_ctx->max_workers = max_workers;
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_service_set_dev(struct doca_urom_service *service_ctx, struct doca_dev *dev)
{
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	doca_error_t status;

	if (service_ctx == NULL || dev == NULL) {
		sdp_error("invalid argument: service_ctx %p, dev %p", (void *)service_ctx,
			  (void *)dev);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_ctx_check_idle(&service_ctx->ctx, "setting the device");
	if (status != DOCA_SUCCESS)
		return status;
	status = doca_devinfo_get_pci_addr_str(doca_dev_as_devinfo(dev), pci);
	if (status != DOCA_SUCCESS) {
		sdp_error("device %p has no PCI address to look the service up with: %s",
			  (void *)dev, doca_error_get_name(status));
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	sdp_dev_hold(dev);
	if (service_ctx->dev != NULL)
		sdp_dev_release(service_ctx->dev);
	service_ctx->dev = dev;
	snprintf(service_ctx->pci_addr, sizeof(service_ctx->pci_addr), "%s", pci);
	return DOCA_SUCCESS;
}

struct doca_ctx *doca_urom_service_as_ctx(struct doca_urom_service *service_ctx)
{
	if (service_ctx == NULL) {
		sdp_error("NULL service_ctx");
		return NULL;
	}
	return &service_ctx->ctx;
}

doca_error_t
doca_urom_service_get_plugins_list(struct doca_urom_service *service_ctx,
				   const struct doca_urom_service_plugin_info **plugins,
				   size_t *plugins_count)
{
	doca_error_t status;

	if (service_ctx == NULL || plugins == NULL || plugins_count == NULL) {
		sdp_error("invalid argument: service_ctx %p, plugins %p, plugins_count %p",
			  (void *)service_ctx, (void *)plugins, (void *)plugins_count);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_ctx_check_running(&service_ctx->ctx, "listing plugins");
	if (status != DOCA_SUCCESS)
		return status;
	if (service_ctx->num_plugins == 0) {
		sdp_error("the UROM service at %s offers no plugin (UROM_PLUGIN_PATH of the "
			  "service)",
			  service_ctx->addr_str);
		return DOCA_ERROR_NOT_FOUND;
	}
	*plugins = service_ctx->plugins;
	*plugins_count = service_ctx->num_plugins;
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_service_get_cpuset(struct doca_urom_service *service_ctx,
					  doca_cpu_set_t *cpuset)
{
	doca_error_t status;

	if (service_ctx == NULL || cpuset == NULL) {
		sdp_error("invalid argument: service_ctx %p, cpuset %p", (void *)service_ctx,
			  (void *)cpuset);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_ctx_check_running(&service_ctx->ctx, "reading the cpuset");
	if (status != DOCA_SUCCESS)
		return status;
	*cpuset = service_ctx->cpuset;
	return DOCA_SUCCESS;
}
