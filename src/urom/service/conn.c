/*
 * softdpu-uromd: host connections.
 *
 * The service listens with a UCP listener. Each accepted endpoint is a connection that must
 * first authenticate (sdp_urom_auth.h):
 *   HELLO (versions, client nonce, who) -> CHALLENGE (server nonce, service MAC)
 *   AUTH (host MAC)                      -> WELCOME (message size, cpuset, plugins)
 * A host speaking another protocol version gets VERSION_REJECT (both versions are logged); a
 * host whose MAC is wrong gets REJECT(DOCA_ERROR_AUTHENTICATION) and is logged with its
 * address; either way the connection is closed shortly after and nothing is spawned for it.
 * Authenticated connections send SPAWN, RELEASE, GID_QUERY and STATUS_QUERY (the softdpu CLI
 * uses the same handshake). UCX callbacks only record what happened; endpoints are closed by
 * the event loop (uromd_conn_timers), never from inside a callback.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdp_build_config.h"
#include "sdp_log.h"
#include "uromd.h"

SDP_LOG_COMPONENT("uromd");

static const char uromd_software[] = "softdpu " SOFTDPU_VERSION;

void uromd_conn_send(struct uromd *d, struct uromd_conn *conn, struct sdp_urom_msg *msg)
{
	size_t cap, len = 0;
	doca_error_t status;
	void *buf;

	if (conn->state == UROMD_CONN_DOOMED && conn->peer_failed)
		return;
	cap = sdp_urom_msg_packed_size(msg);
	buf = malloc(cap ? cap : 1);
	if (buf == NULL) {
		sdp_error("host %s: out of memory packing %s", conn->peer,
			  sdp_urom_msg_type_name(msg->hdr.type));
		goto err_doom;
	}
	status = sdp_urom_msg_pack(msg, buf, cap, &len);
	if (status != DOCA_SUCCESS) {
		sdp_error("host %s: failed to pack %s: %s", conn->peer,
			  sdp_urom_msg_type_name(msg->hdr.type), doca_error_get_name(status));
		free(buf);
		goto err_doom;
	}
	status = sdp_ucx_send(&d->ucx, conn->ep, buf, len);
	free(buf);
	if (status != DOCA_SUCCESS)
		goto err_doom; /* logged by sdp_ucx_send */
	return;

err_doom:
	conn->state = UROMD_CONN_DOOMED;
	conn->deadline_ms = uromd_now_ms();
}

static void conn_doom(struct uromd_conn *conn)
{
	conn->state = UROMD_CONN_DOOMED;
	conn->deadline_ms = uromd_now_ms() + UROMD_LINGER_MS;
}

static void conn_reject(struct uromd *d, struct uromd_conn *conn, uint64_t req_id,
			doca_error_t status, const char *reason)
{
	struct sdp_urom_msg msg;

	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_REJECT;
	msg.hdr.req_id = req_id;
	msg.u.reject.status = (uint32_t)status;
	msg.u.reject.reason.data = (const uint8_t *)reason;
	msg.u.reject.reason.len = (uint32_t)strlen(reason);
	uromd_conn_send(d, conn, &msg);
	conn_doom(conn);
}

static void conn_version_reject(struct uromd *d, struct uromd_conn *conn, uint64_t req_id)
{
	struct sdp_urom_msg msg;

	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_VERSION_REJECT;
	msg.hdr.req_id = req_id;
	msg.u.version_reject.version = SDP_UROM_PROTO_VERSION;
	msg.u.version_reject.software.data = (const uint8_t *)uromd_software;
	msg.u.version_reject.software.len = (uint32_t)strlen(uromd_software);
	uromd_conn_send(d, conn, &msg);
	conn_doom(conn);
}

static struct uromd_conn *conn_find(struct uromd *d, ucp_ep_h ep)
{
	for (struct uromd_conn *c = d->conns; c != NULL; c = c->next)
		if (c->ep == ep)
			return c;
	return NULL;
}

static void conn_handle_hello(struct uromd *d, struct uromd_conn *conn,
			      const struct sdp_urom_msg *msg)
{
	struct sdp_urom_msg reply;
	size_t hn;

	if (msg->u.hello.min_version > SDP_UROM_PROTO_VERSION ||
	    msg->u.hello.max_version < SDP_UROM_PROTO_VERSION) {
		sdp_warn(
			"host %s speaks UROM protocol versions %u..%u, this service speaks %u (%s); "
			"rejected",
			conn->peer, msg->u.hello.min_version, msg->u.hello.max_version,
			SDP_UROM_PROTO_VERSION, uromd_software);
		conn_version_reject(d, conn, msg->hdr.req_id);
		return;
	}
	memcpy(conn->client_nonce, msg->u.hello.nonce, SDP_UROM_NONCE_LEN);
	conn->pid = msg->u.hello.pid;
	conn->uid = msg->u.hello.uid;
	hn = msg->u.hello.hostname.len < sizeof(conn->hostname) - 1 ? msg->u.hello.hostname.len :
								      sizeof(conn->hostname) - 1;
	memcpy(conn->hostname, msg->u.hello.hostname.data, hn);
	conn->hostname[hn] = '\0';
	for (size_t i = 0; i < hn; i++)
		if ((unsigned char)conn->hostname[i] < 0x20 || conn->hostname[i] == '"' ||
		    conn->hostname[i] == '\\' || (unsigned char)conn->hostname[i] >= 0x7f)
			conn->hostname[i] = '?';
	conn->max_msg_size = d->cfg.max_msg_size;
	if (msg->u.hello.max_msg_size != 0 && msg->u.hello.max_msg_size < conn->max_msg_size)
		conn->max_msg_size = msg->u.hello.max_msg_size;
	conn->max_workers = msg->u.hello.max_workers;
	sdp_urom_random(conn->server_nonce, sizeof(conn->server_nonce));

	memset(&reply, 0, sizeof(reply));
	reply.hdr.type = SDP_UROM_MSG_CHALLENGE;
	reply.hdr.req_id = msg->hdr.req_id;
	memcpy(reply.u.challenge.nonce, conn->server_nonce, SDP_UROM_NONCE_LEN);
	sdp_urom_auth_mac(d->secret, "svc", conn->client_nonce, conn->server_nonce,
			  reply.u.challenge.mac);
	conn->state = UROMD_CONN_AUTH;
	uromd_conn_send(d, conn, &reply);
}

static void conn_handle_auth(struct uromd *d, struct uromd_conn *conn,
			     const struct sdp_urom_msg *msg)
{
	struct sdp_urom_msg reply;

	if (sdp_urom_auth_verify(d->secret, "host", conn->server_nonce, conn->client_nonce,
				 msg->u.auth.mac) != DOCA_SUCCESS) {
		sdp_warn("host %s (hostname %s, pid %u, uid %u) failed authentication: its secret "
			 "differs from this service's; rejected",
			 conn->peer, conn->hostname, conn->pid, conn->uid);
		conn_reject(
			d, conn, msg->hdr.req_id, DOCA_ERROR_AUTHENTICATION,
			"authentication failed: the host's secret does not match the service's");
		return;
	}
	memset(&reply, 0, sizeof(reply));
	reply.hdr.type = SDP_UROM_MSG_WELCOME;
	reply.hdr.req_id = msg->hdr.req_id;
	reply.u.welcome.max_msg_size = conn->max_msg_size;
	memcpy(reply.u.welcome.cpuset, d->cpuset.bits, sizeof(reply.u.welcome.cpuset));
	reply.u.welcome.service_version.data = (const uint8_t *)uromd_software;
	reply.u.welcome.service_version.len = (uint32_t)strlen(uromd_software);
	reply.u.welcome.num_plugins = (uint32_t)d->scan.num_plugins;
	for (size_t i = 0; i < d->scan.num_plugins; i++) {
		reply.u.welcome.plugins[i].id = d->scan.plugins[i].id;
		reply.u.welcome.plugins[i].version = d->scan.plugins[i].version;
		memcpy(reply.u.welcome.plugins[i].name, d->scan.plugins[i].name, SDP_UROM_NAME_MAX);
	}
	conn->state = UROMD_CONN_READY;
	conn->deadline_ms = 0;
	sdp_debug("host %s (hostname %s, pid %u) authenticated, message size %" PRIu64, conn->peer,
		  conn->hostname, conn->pid, conn->max_msg_size);
	uromd_conn_send(d, conn, &reply);
}

static void conn_handle_gid_query(struct uromd *d, struct uromd_conn *conn,
				  const struct sdp_urom_msg *msg)
{
	struct sdp_urom_msg reply;
	uint8_t *ids = NULL;
	uint32_t count = 0;
	size_t n = 0;

	for (struct uromd_worker *w = d->workers; w != NULL; w = w->next)
		if (w->state == UROMD_WORKER_STARTING || w->state == UROMD_WORKER_READY)
			n++;
	if (n > SDP_UROM_MAX_WORKERS_REPLY)
		n = SDP_UROM_MAX_WORKERS_REPLY;
	ids = malloc(n * 8 + 1);
	memset(&reply, 0, sizeof(reply));
	reply.hdr.type = SDP_UROM_MSG_GID_REPLY;
	reply.hdr.req_id = msg->hdr.req_id;
	if (ids == NULL) {
		sdp_error("host %s: out of memory answering a gid query", conn->peer);
		reply.u.gid_reply.status = DOCA_ERROR_NO_MEMORY;
		uromd_conn_send(d, conn, &reply);
		return;
	}
	for (struct uromd_worker *w = d->workers; w != NULL && count < n; w = w->next) {
		if ((w->state != UROMD_WORKER_STARTING && w->state != UROMD_WORKER_READY) ||
		    w->gid != msg->u.gid_query.gid)
			continue;
		for (int b = 0; b < 8; b++)
			ids[count * 8 + (uint32_t)b] = (uint8_t)(w->id >> (8 * b));
		count++;
	}
	reply.u.gid_reply.status = DOCA_SUCCESS;
	reply.u.gid_reply.count = count;
	reply.u.gid_reply.ids = ids;
	sdp_debug("host %s: gid %u has %u worker(s)", conn->peer, msg->u.gid_query.gid, count);
	uromd_conn_send(d, conn, &reply);
	free(ids);
}

static void conn_handle_status_query(struct uromd *d, struct uromd_conn *conn,
				     const struct sdp_urom_msg *msg)
{
	struct sdp_urom_msg reply;
	char *json = NULL;
	size_t len = 0;

	memset(&reply, 0, sizeof(reply));
	if (uromd_status_json(d, &json, &len) != DOCA_SUCCESS) {
		conn_reject(d, conn, msg->hdr.req_id, DOCA_ERROR_NO_MEMORY,
			    "out of memory building the status");
		return;
	}
	reply.hdr.type = SDP_UROM_MSG_STATUS_REPLY;
	reply.hdr.req_id = msg->hdr.req_id;
	reply.u.status_reply.json.data = (const uint8_t *)json;
	reply.u.status_reply.json.len = (uint32_t)len;
	uromd_conn_send(d, conn, &reply);
	free(json);
}

static void conn_recv(void *arg, ucp_ep_h reply_ep, const void *data, size_t len)
{
	struct uromd *d = arg;
	struct uromd_conn *conn = conn_find(d, reply_ep);
	struct sdp_urom_msg msg;
	doca_error_t status;

	if (conn == NULL) {
		sdp_debug("dropping a %zu-byte message from an unknown endpoint", len);
		return;
	}
	if (conn->state == UROMD_CONN_DOOMED)
		return;
	status = sdp_urom_msg_unpack(data, len, &msg);
	if (status == DOCA_ERROR_NOT_SUPPORTED) {
		sdp_warn("host %s speaks UROM protocol version %u, this service speaks %u (%s); "
			 "rejected",
			 conn->peer, msg.hdr.version, SDP_UROM_PROTO_VERSION, uromd_software);
		conn_version_reject(d, conn, msg.hdr.req_id);
		return;
	}
	if (status != DOCA_SUCCESS) {
		sdp_warn("host %s sent a malformed message (%zu bytes); closing the connection",
			 conn->peer, len);
		conn_reject(d, conn, 0, DOCA_ERROR_INVALID_VALUE, "malformed message");
		return;
	}
	sdp_trace("host %s: %s req %" PRIu64, conn->peer, sdp_urom_msg_type_name(msg.hdr.type),
		  msg.hdr.req_id);

	switch (conn->state) {
	case UROMD_CONN_HELLO:
		if (msg.hdr.type == SDP_UROM_MSG_HELLO) {
			conn_handle_hello(d, conn, &msg);
			return;
		}
		break;
	case UROMD_CONN_AUTH:
		if (msg.hdr.type == SDP_UROM_MSG_AUTH) {
			conn_handle_auth(d, conn, &msg);
			return;
		}
		break;
	case UROMD_CONN_READY:
		switch (msg.hdr.type) {
		case SDP_UROM_MSG_SPAWN:
			uromd_worker_spawn_request(d, conn, &msg);
			return;
		case SDP_UROM_MSG_RELEASE:
			uromd_worker_release_request(d, conn, &msg);
			return;
		case SDP_UROM_MSG_GID_QUERY:
			conn_handle_gid_query(d, conn, &msg);
			return;
		case SDP_UROM_MSG_STATUS_QUERY:
			conn_handle_status_query(d, conn, &msg);
			return;
		default:
			break;
		}
		break;
	case UROMD_CONN_DOOMED:
		return;
	}
	sdp_warn("host %s sent %s out of turn; closing the connection", conn->peer,
		 sdp_urom_msg_type_name(msg.hdr.type));
	conn_reject(d, conn, msg.hdr.req_id,
		    conn->state == UROMD_CONN_READY ? DOCA_ERROR_NOT_SUPPORTED :
						      DOCA_ERROR_NOT_PERMITTED,
		    "unexpected message");
}

static void conn_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
	struct uromd_conn *conn = arg;

	(void)ep;
	sdp_debug("host %s: connection closed (%s)", conn->peer, ucs_status_string(status));
	conn->peer_failed = 1;
	conn->state = UROMD_CONN_DOOMED;
	conn->deadline_ms = uromd_now_ms();
}

static void conn_request(void *arg, ucp_conn_request_h request)
{
	struct uromd *d = arg;
	ucp_conn_request_attr_t attr;
	struct uromd_conn *conn;
	char host[64] = "?";
	int port = 0;

	memset(&attr, 0, sizeof(attr));
	attr.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
	if (ucp_conn_request_query(request, &attr) == UCS_OK) {
		if (attr.client_address.ss_family == AF_INET) {
			const struct sockaddr_in *in = (const void *)&attr.client_address;

			inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
			port = ntohs(in->sin_port);
		} else if (attr.client_address.ss_family == AF_INET6) {
			const struct sockaddr_in6 *in6 = (const void *)&attr.client_address;

			inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
			port = ntohs(in6->sin6_port);
		}
	}
	if (d->stopping) {
		sdp_debug("connection request from %s:%d refused: shutting down", host, port);
		sdp_ucx_conn_reject(&d->ucx, request);
		return;
	}
	conn = calloc(1, sizeof(*conn));
	if (conn == NULL) {
		sdp_error("connection request from %s:%d refused: out of memory", host, port);
		sdp_ucx_conn_reject(&d->ucx, request);
		return;
	}
	snprintf(conn->peer, sizeof(conn->peer), "%s:%d", host, port);
	snprintf(conn->hostname, sizeof(conn->hostname), "?");
	if (sdp_ucx_ep_accept(&d->ucx, request, conn_ep_error, conn, &conn->ep) != DOCA_SUCCESS) {
		free(conn); /* logged by sdp_ucx_ep_accept */
		return;
	}
	conn->state = UROMD_CONN_HELLO;
	conn->deadline_ms = uromd_now_ms() + UROMD_HANDSHAKE_MS;
	conn->next = d->conns;
	d->conns = conn;
	sdp_debug("host %s connected", conn->peer);
}

static void conn_close(struct uromd *d, struct uromd_conn *conn)
{
	struct uromd_conn **pp;

	for (pp = &d->conns; *pp != NULL; pp = &(*pp)->next)
		if (*pp == conn) {
			*pp = conn->next;
			break;
		}
	uromd_worker_drop_conn(d, conn);
	sdp_ucx_ep_close(&d->ucx, conn->ep, conn->peer_failed ? 0 : 100);
	free(conn);
}

uint64_t uromd_conn_timers(struct uromd *d, uint64_t now)
{
	struct uromd_conn *conn = d->conns, *next;
	uint64_t deadline = 0;

	for (; conn != NULL; conn = next) {
		next = conn->next;
		if (conn->deadline_ms == 0)
			continue;
		if (now < conn->deadline_ms) {
			if (deadline == 0 || conn->deadline_ms < deadline)
				deadline = conn->deadline_ms;
			continue;
		}
		if (conn->state == UROMD_CONN_DOOMED) {
			conn_close(d, conn);
			/* closing progresses UCX: the list may have changed, start over */
			next = d->conns;
			deadline = 0;
			continue;
		}
		sdp_warn("host %s did not complete the handshake within %d ms; closing", conn->peer,
			 UROMD_HANDSHAKE_MS);
		conn->state = UROMD_CONN_DOOMED;
		conn->deadline_ms = now;
		next = d->conns;
		deadline = 0;
	}
	return deadline;
}

void uromd_conn_close_all(struct uromd *d)
{
	while (d->conns != NULL)
		conn_close(d, d->conns);
}

/* The network interface that holds addr (for NET_DEVICES); NULL for a wildcard address or
 * one no interface holds (UCX then uses its defaults). */
static char *conn_iface_of(const struct sockaddr *sa)
{
	struct ifaddrs *ifa_list, *ifa;
	char *name = NULL;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		if (in->sin_addr.s_addr == htonl(INADDR_ANY))
			return NULL;
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		if (IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr))
			return NULL;
	} else {
		return NULL;
	}
	if (getifaddrs(&ifa_list) != 0) {
		sdp_warn("getifaddrs failed: %m; UCX picks its network devices itself");
		return NULL;
	}
	for (ifa = ifa_list; ifa != NULL && name == NULL; ifa = ifa->ifa_next) {
		if (ifa->ifa_addr == NULL || ifa->ifa_addr->sa_family != sa->sa_family)
			continue;
		if (sa->sa_family == AF_INET &&
		    ((const struct sockaddr_in *)(const void *)ifa->ifa_addr)->sin_addr.s_addr ==
			    ((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr)
			name = strdup(ifa->ifa_name);
		else if (sa->sa_family == AF_INET6 &&
			 memcmp(&((const struct sockaddr_in6 *)(const void *)ifa->ifa_addr)
					 ->sin6_addr,
				&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
				sizeof(struct in6_addr)) == 0)
			name = strdup(ifa->ifa_name);
	}
	freeifaddrs(ifa_list);
	if (name == NULL && sa->sa_family == AF_INET &&
	    (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >> 24) == 127)
		name = strdup("lo");
	return name;
}

doca_error_t uromd_conn_listen(struct uromd *d)
{
	struct addrinfo hints, *ai = NULL;
	char port[16], *net_devices;
	doca_error_t status;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(port, sizeof(port), "%u", d->cfg.listen_port);
	rc = getaddrinfo(d->cfg.listen_host[0] ? d->cfg.listen_host : NULL, port, &hints, &ai);
	if (rc != 0) {
		sdp_error("listen address %s: %s", d->cfg.listen, gai_strerror(rc));
		return DOCA_ERROR_INVALID_VALUE;
	}

	/* Pin UCX to the interface of the listen address unless the user chose (UCX trap). */
	net_devices = conn_iface_of(ai->ai_addr);
	status = sdp_ucx_context_create(net_devices, &d->ucp_ctx);
	free(net_devices);
	if (status != DOCA_SUCCESS)
		goto err_free_ai;
	status = sdp_ucx_worker_init(&d->ucx, d->ucp_ctx, UCS_THREAD_MODE_SINGLE, conn_recv, d);
	if (status != DOCA_SUCCESS)
		goto err_destroy_ctx;
	status = sdp_ucx_listen(&d->ucx, ai->ai_addr, ai->ai_addrlen, conn_request, d, &d->listener,
				&d->bound_port);
	if (status != DOCA_SUCCESS)
		goto err_fini_worker;
	d->ucx_ready = 1;
	freeaddrinfo(ai);
	return DOCA_SUCCESS;

err_fini_worker:
	sdp_ucx_worker_fini(&d->ucx);
err_destroy_ctx:
	sdp_ucx_context_destroy(d->ucp_ctx);
	d->ucp_ctx = NULL;
err_free_ai:
	freeaddrinfo(ai);
	return status;
}
