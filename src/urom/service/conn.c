/*
 * softdpu-uromd: host connections.
 *
 * The service listens on its own TCP socket (sdp_urom_chan.h), never with UCX's connection
 * manager: every byte a peer sends goes through the fuzzed frame reassembler and message parser
 * first, and frames are bounded by SDP_UROM_FRAME_PREAUTH_MAX until the peer has
 * authenticated (then by its negotiated message size, at least SDP_UROM_CTRL_FRAME_MIN). Bytes
 * that are not a UROM frame close the connection at once. Each accepted connection must first
 * authenticate (sdp_urom_auth.h):
 *   HELLO (versions, client nonce, who) -> CHALLENGE (server nonce, service MAC)
 *   AUTH (host MAC)                      -> WELCOME (message size, cpuset, plugins)
 * A host speaking another protocol version gets VERSION_REJECT (both versions are logged); a
 * host whose MAC is wrong gets REJECT(DOCA_ERROR_AUTHENTICATION) and is logged with its
 * address; either way the connection is closed shortly after and nothing is spawned for it.
 * Authenticated connections send SPAWN, RELEASE, GID_QUERY and STATUS_QUERY (the softdpu CLI
 * uses the same handshake). Only authenticated hosts learn a worker's UCX address (SPAWN_REPLY)
 * and create UCX endpoints from it; the service itself speaks no UCX. A doomed connection
 * flushes its last reply, shuts its sending side and is closed by the event loop
 * (uromd_conn_timers) when the peer closes or the linger time is over.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sdp_build_config.h"
#include "sdp_log.h"
#include "uromd.h"

SDP_LOG_COMPONENT("uromd");

static const char uromd_software[] = "softdpu " SOFTDPU_VERSION;

/*
 * Whether a warning about conn may be logged: always for an authenticated host; for a peer that
 * has not authenticated at most UROMD_PEER_WARN_PER_S a second (a flood of junk must not fill
 * the log), the dropped ones counted and reported when the next second begins.
 */
/* A second of warnings is over: report what it did not log, start the next. */
static void peer_warn_roll(struct uromd *d, uint64_t now)
{
	if (now - d->peer_warn_window_ms < 1000)
		return;
	if (d->peer_warn_dropped > 0)
		sdp_warn("%" PRIu64
			 " more warnings about unauthenticated peers not logged (at most "
			 "%d a second)",
			 d->peer_warn_dropped, UROMD_PEER_WARN_PER_S);
	d->peer_warn_window_ms = now;
	d->peer_warn_count = 0;
	d->peer_warn_dropped = 0;
}

static int peer_warn_ok(struct uromd *d, const struct uromd_conn *conn)
{
	if (conn != NULL && !conn->preauth)
		return 1;
	peer_warn_roll(d, uromd_now_ms());
	if (d->peer_warn_count < UROMD_PEER_WARN_PER_S) {
		d->peer_warn_count++;
		return 1;
	}
	d->peer_warn_dropped++;
	return 0;
}

/* The connection is over for good: close at the next timer run. */
static void conn_fail(struct uromd_conn *conn)
{
	conn->peer_failed = 1;
	conn->state = UROMD_CONN_DOOMED;
	conn->deadline_ms = uromd_now_ms();
}

/* Keep EPOLLOUT in the set exactly while output is queued. */
static void conn_update_events(struct uromd *d, struct uromd_conn *conn)
{
	struct epoll_event ev;
	int want = sdp_urom_chan_out_pending(&conn->chan);

	if (want == conn->want_out || conn->chan.fd < 0)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | (want ? EPOLLOUT : 0);
	ev.data.ptr = conn;
	if (epoll_ctl(d->epfd, EPOLL_CTL_MOD, conn->chan.fd, &ev) != 0) {
		sdp_error("host %s: epoll_ctl failed: %m; closing the connection", conn->peer);
		conn_fail(conn);
		return;
	}
	conn->want_out = want;
}

void uromd_conn_send(struct uromd *d, struct uromd_conn *conn, struct sdp_urom_msg *msg)
{
	doca_error_t status;

	if (conn->peer_failed)
		return;
	status = sdp_urom_chan_send(&conn->chan, msg);
	if (status != DOCA_SUCCESS) {
		if (status != DOCA_ERROR_NOT_CONNECTED) /* else the peer just left */
			sdp_warn("host %s: %s not sent (%s); closing the connection", conn->peer,
				 sdp_urom_msg_type_name(msg->hdr.type),
				 doca_error_get_name(status));
		conn_fail(conn);
		return;
	}
	conn_update_events(d, conn);
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

static void conn_handle_hello(struct uromd *d, struct uromd_conn *conn,
			      const struct sdp_urom_msg *msg)
{
	struct sdp_urom_msg reply;
	size_t hn;

	if (msg->u.hello.min_version > SDP_UROM_PROTO_VERSION ||
	    msg->u.hello.max_version < SDP_UROM_PROTO_VERSION) {
		if (peer_warn_ok(d, conn))
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

/*
 * The uid owning the peer's end of a local TCP connection, from the kernel's socket table: one
 * exact lookup through NETLINK_SOCK_DIAG (the socket whose source is our peer and whose
 * destination is us), else, where sock_diag is missing, a scan of /proc/net/tcp or tcp6 (its
 * cost grows with every socket of the machine). 0 when found, -1 when the peer is not a socket
 * of this machine (network namespace) or neither can be read: then only the uid the HELLO
 * claims is known.
 */
static int conn_peer_uid_diag(const struct sockaddr_storage *peer,
			      const struct sockaddr_storage *us, uint32_t *uid_p)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} q;
	struct sockaddr_nl nl = {.nl_family = AF_NETLINK};
	union {
		struct nlmsghdr nlh;
		uint8_t raw[8192];
	} buf;
	struct timeval tv = {.tv_sec = 1};
	int fd, found = -1;
	ssize_t n;

	memset(&q, 0, sizeof(q));
	q.nlh.nlmsg_len = sizeof(q);
	q.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	q.nlh.nlmsg_flags = NLM_F_REQUEST;
	q.req.sdiag_family = (uint8_t)peer->ss_family;
	q.req.sdiag_protocol = IPPROTO_TCP;
	q.req.idiag_states = ~0u;
	q.req.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
	q.req.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (peer->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)peer;
		const struct sockaddr_in *b = (const struct sockaddr_in *)us;

		q.req.id.idiag_sport = a->sin_port;
		q.req.id.idiag_dport = b->sin_port;
		memcpy(q.req.id.idiag_src, &a->sin_addr, 4);
		memcpy(q.req.id.idiag_dst, &b->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)peer;
		const struct sockaddr_in6 *b = (const struct sockaddr_in6 *)us;

		q.req.id.idiag_sport = a->sin6_port;
		q.req.id.idiag_dport = b->sin6_port;
		memcpy(q.req.id.idiag_src, &a->sin6_addr, 16);
		memcpy(q.req.id.idiag_dst, &b->sin6_addr, 16);
	}
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -2;
	/* bounded: the kernel answers at once, or not at all */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (sendto(fd, &q, sizeof(q), 0, (struct sockaddr *)&nl, sizeof(nl)) !=
	    (ssize_t)sizeof(q)) {
		close(fd);
		return -2;
	}
	n = recv(fd, &buf, sizeof(buf), 0);
	close(fd);
	if (n < (ssize_t)sizeof(struct nlmsghdr))
		return -2;
	for (struct nlmsghdr *h = &buf.nlh; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
		const struct inet_diag_msg *m;

		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			/* ENOENT: no such socket here (another namespace or host) */
			if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error == -ENOENT)
				return -1;
			return -2;
		}
		if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
			continue;
		m = NLMSG_DATA(h);
		if (m->idiag_state != TCP_ESTABLISHED && m->idiag_state != TCP_CLOSE_WAIT)
			continue;
		*uid_p = m->idiag_uid;
		found = 0;
		break;
	}
	return found == 0 ? 0 : -1;
}

static int conn_peer_kernel_uid(const struct uromd_conn *conn, uint32_t *uid_p)
{
	struct sockaddr_storage us, peer;
	socklen_t ul = sizeof(us), pl = sizeof(peer);
	char want_local[64], want_rem[64], line[512];
	const char *table;
	int found = -1;
	FILE *f;

	if (getsockname(conn->chan.fd, (struct sockaddr *)&us, &ul) != 0 ||
	    getpeername(conn->chan.fd, (struct sockaddr *)&peer, &pl) != 0 ||
	    us.ss_family != peer.ss_family ||
	    (peer.ss_family != AF_INET && peer.ss_family != AF_INET6))
		return -1;
	if (peer.ss_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&peer)->sin6_addr) &&
	    IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&us)->sin6_addr)) {
		/* an IPv4 peer on a dual-stack listener: its own socket is an AF_INET one */
		struct sockaddr_storage p4, u4;
		const struct sockaddr_in6 *pp = (const struct sockaddr_in6 *)&peer;
		const struct sockaddr_in6 *uu = (const struct sockaddr_in6 *)&us;
		struct sockaddr_in *a = (struct sockaddr_in *)&p4, *b = (struct sockaddr_in *)&u4;

		memset(&p4, 0, sizeof(p4));
		memset(&u4, 0, sizeof(u4));
		a->sin_family = b->sin_family = AF_INET;
		a->sin_port = pp->sin6_port;
		b->sin_port = uu->sin6_port;
		memcpy(&a->sin_addr, &pp->sin6_addr.s6_addr[12], 4);
		memcpy(&b->sin_addr, &uu->sin6_addr.s6_addr[12], 4);
		found = conn_peer_uid_diag(&p4, &u4, uid_p);
		if (found == 0)
			return 0;
	}
	found = conn_peer_uid_diag(&peer, &us, uid_p);
	if (found != -2)
		return found;
	found = -1;
	if (peer.ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&peer;
		const struct sockaddr_in *b = (const struct sockaddr_in *)&us;

		/* The kernel prints the address word as stored (network order) in %08X. */
		snprintf(want_local, sizeof(want_local), "%08X:%04X",
			 (unsigned int)a->sin_addr.s_addr, (unsigned int)ntohs(a->sin_port));
		snprintf(want_rem, sizeof(want_rem), "%08X:%04X", (unsigned int)b->sin_addr.s_addr,
			 (unsigned int)ntohs(b->sin_port));
		table = "/proc/net/tcp";
	} else if (peer.ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&peer;
		const struct sockaddr_in6 *b = (const struct sockaddr_in6 *)&us;
		uint32_t wa[4], wb[4];

		memcpy(wa, &a->sin6_addr, sizeof(wa));
		memcpy(wb, &b->sin6_addr, sizeof(wb));
		snprintf(want_local, sizeof(want_local), "%08X%08X%08X%08X:%04X", wa[0], wa[1],
			 wa[2], wa[3], (unsigned int)ntohs(a->sin6_port));
		snprintf(want_rem, sizeof(want_rem), "%08X%08X%08X%08X:%04X", wb[0], wb[1], wb[2],
			 wb[3], (unsigned int)ntohs(b->sin6_port));
		table = "/proc/net/tcp6";
	} else {
		return -1;
	}
	f = fopen(table, "re");
	if (f == NULL)
		return -1;
	while (found != 0 && fgets(line, sizeof(line), f) != NULL) {
		char local[64], rem[64], st[8];
		unsigned int uid;

		/* sl local rem st tx:rx tr:when retrnsmt uid ...; st 01 = ESTABLISHED */
		if (sscanf(line, " %*s %63s %63s %7s %*s %*s %*s %u", local, rem, st, &uid) == 4 &&
		    strcmp(st, "01") == 0 && strcmp(local, want_local) == 0 &&
		    strcmp(rem, want_rem) == 0) {
			*uid_p = uid;
			found = 0;
		}
	}
	fclose(f);
	return found;
}

static void conn_handle_auth(struct uromd *d, struct uromd_conn *conn,
			     const struct sdp_urom_msg *msg)
{
	struct sdp_urom_msg reply;

	if (sdp_urom_auth_verify(d->secret, "host", conn->server_nonce, conn->client_nonce,
				 msg->u.auth.mac) != DOCA_SUCCESS) {
		if (peer_warn_ok(d, conn))
			sdp_warn(
				"host %s (hostname %s, pid %u, uid %u) failed authentication: its secret "
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
	{
		uint32_t kuid;

		/* Attach rights go by uid (spawn.c): a local peer's is the kernel's, not its word. */
		if (conn_peer_kernel_uid(conn, &kuid) == 0) {
			if (kuid != conn->uid)
				sdp_warn(
					"host %s (hostname %s, pid %u) claims uid %u but its socket "
					"belongs to uid %u; using %u",
					conn->peer, conn->hostname, conn->pid, conn->uid, kuid,
					kuid);
			conn->uid = kuid;
			conn->uid_verified = 1;
		}
	}
	conn->state = UROMD_CONN_READY;
	conn->deadline_ms = 0;
	conn->preauth = 0;
	d->num_preauth--;
	sdp_urom_chan_set_max_frame(&conn->chan, conn->max_msg_size > SDP_UROM_CTRL_FRAME_MIN ?
							 conn->max_msg_size :
							 SDP_UROM_CTRL_FRAME_MIN);
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

/* One whole frame from a host (the chan callback); nonzero stops reading. */
static int conn_frame(void *arg, const uint8_t *data, size_t len)
{
	struct uromd_conn *conn = arg;
	struct uromd *d = conn->d;
	struct sdp_urom_msg msg;
	doca_error_t status;
	char why[160];

	if (conn->state == UROMD_CONN_DOOMED)
		return 0; /* lingering: input is read and dropped */
	status = sdp_urom_msg_unpack_why(data, len, &msg, why, sizeof(why));
	if (status == DOCA_ERROR_NOT_SUPPORTED) {
		if (peer_warn_ok(d, conn))
			sdp_warn(
				"host %s speaks UROM protocol version %u, this service speaks %u (%s); "
				"rejected",
				conn->peer, msg.hdr.version, SDP_UROM_PROTO_VERSION,
				uromd_software);
		conn_version_reject(d, conn, msg.hdr.req_id);
		return 0;
	}
	if (status != DOCA_SUCCESS) {
		if (peer_warn_ok(d, conn))
			sdp_warn("host %s sent a malformed message (%s); closing the connection",
				 conn->peer, why);
		conn_reject(d, conn, 0, DOCA_ERROR_INVALID_VALUE, "malformed message");
		return 0;
	}
	sdp_trace("host %s: %s req %" PRIu64, conn->peer, sdp_urom_msg_type_name(msg.hdr.type),
		  msg.hdr.req_id);

	switch (conn->state) {
	case UROMD_CONN_HELLO:
		if (msg.hdr.type == SDP_UROM_MSG_HELLO) {
			conn_handle_hello(d, conn, &msg);
			return 0;
		}
		break;
	case UROMD_CONN_AUTH:
		if (msg.hdr.type == SDP_UROM_MSG_AUTH) {
			conn_handle_auth(d, conn, &msg);
			return 0;
		}
		break;
	case UROMD_CONN_READY:
		switch (msg.hdr.type) {
		case SDP_UROM_MSG_SPAWN:
			uromd_worker_spawn_request(d, conn, &msg);
			return 0;
		case SDP_UROM_MSG_RELEASE:
			uromd_worker_release_request(d, conn, &msg);
			return 0;
		case SDP_UROM_MSG_GID_QUERY:
			conn_handle_gid_query(d, conn, &msg);
			return 0;
		case SDP_UROM_MSG_STATUS_QUERY:
			conn_handle_status_query(d, conn, &msg);
			return 0;
		default:
			break;
		}
		break;
	case UROMD_CONN_DOOMED:
		return 0;
	}
	if (peer_warn_ok(d, conn))
		sdp_warn("host %s sent %s out of turn; closing the connection", conn->peer,
			 sdp_urom_msg_type_name(msg.hdr.type));
	conn_reject(d, conn, msg.hdr.req_id,
		    conn->state == UROMD_CONN_READY ? DOCA_ERROR_NOT_SUPPORTED :
						      DOCA_ERROR_NOT_PERMITTED,
		    "unexpected message");
	return 0;
}

/* A doomed connection whose last reply is out: shut our side, wait for the peer to close. */
static void conn_shut_if_flushed(struct uromd_conn *conn)
{
	if (conn->state != UROMD_CONN_DOOMED || conn->shut || conn->peer_failed ||
	    sdp_urom_chan_out_pending(&conn->chan))
		return;
	(void)shutdown(conn->chan.fd, SHUT_WR);
	conn->shut = 1;
}

void uromd_conn_event(struct uromd *d, struct uromd_conn *conn, uint32_t events)
{
	doca_error_t status;
	int made = 0;

	if (conn->peer_failed)
		return;
	if (events & EPOLLOUT) {
		status = sdp_urom_chan_flush(&conn->chan);
		if (status == DOCA_ERROR_NOT_CONNECTED) {
			sdp_debug("host %s: connection closed while sending", conn->peer);
			conn_fail(conn);
			return;
		}
		conn_update_events(d, conn);
	}
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
		status = sdp_urom_chan_read(&conn->chan, conn_frame, conn, &made);
		if (status == DOCA_ERROR_INVALID_VALUE) {
			/* Not a UROM stream (junk, a scanner, an oversized frame): no reply. */
			if (conn->state != UROMD_CONN_DOOMED && peer_warn_ok(d, conn))
				sdp_warn("host %s sent bytes that are not a UROM frame of at most "
					 "%zu bytes; closing the connection",
					 conn->peer, conn->chan.rx.max_frame);
			conn_fail(conn);
			return;
		}
		if (status != DOCA_SUCCESS) {
			sdp_debug("host %s: connection closed (%s)", conn->peer,
				  doca_error_get_name(status));
			conn_fail(conn);
			return;
		}
	}
	conn_shut_if_flushed(conn);
}

static void conn_close(struct uromd *d, struct uromd_conn *conn)
{
	struct uromd_conn **pp;

	for (pp = &d->conns; *pp != NULL; pp = &(*pp)->next)
		if (*pp == conn) {
			*pp = conn->next;
			break;
		}
	d->num_conns--;
	if (conn->preauth)
		d->num_preauth--;
	uromd_worker_drop_conn(d, conn);
	if (conn->chan.fd >= 0)
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, conn->chan.fd, NULL);
	sdp_urom_chan_fini(&conn->chan);
	free(conn);
}

/*
 * The pre-authentication table is full: drop the connection that has waited longest (the one
 * whose handshake deadline comes first), so connections that never speak cannot keep a real
 * host out.
 */
static void conn_evict_oldest_preauth(struct uromd *d)
{
	struct uromd_conn *oldest = NULL;

	/*
	 * Lingering rejected ones first (they were answered already), then the one whose handshake
	 * deadline comes first. Either way it still holds a descriptor and counts in num_preauth.
	 */
	for (struct uromd_conn *c = d->conns; c != NULL; c = c->next) {
		int doomed = c->state == UROMD_CONN_DOOMED, odoomed;

		if (!c->preauth || c->peer_failed)
			continue;
		odoomed = oldest != NULL && oldest->state == UROMD_CONN_DOOMED;
		if (oldest == NULL || (doomed && !odoomed) ||
		    (doomed == odoomed && c->deadline_ms < oldest->deadline_ms))
			oldest = c;
	}
	if (oldest == NULL)
		return;
	sdp_debug("host %s: dropped unauthenticated, %zu connections wait to authenticate",
		  oldest->peer, d->num_preauth);
	/* Closed by the timers, never here: the epoll batch in hand may still name it. */
	oldest->preauth = 0;
	d->num_preauth--;
	conn_fail(oldest);
}

/* Stop watching the listener for UROMD_ACCEPT_PAUSE_MS (uromd_conn_timers resumes). */
static void conn_accept_pause(struct uromd *d)
{
	if (d->listen_resume_ms != 0 || d->listen_fd < 0)
		return;
	if (epoll_ctl(d->epfd, EPOLL_CTL_DEL, d->listen_fd, NULL) != 0) {
		sdp_error("epoll_ctl(listening socket) failed: %m");
		return;
	}
	d->listen_resume_ms = uromd_now_ms() + UROMD_ACCEPT_PAUSE_MS;
}

static void conn_accept_resume(struct uromd *d)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = &d->listen_kind;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->listen_fd, &ev) != 0) {
		sdp_error("epoll_ctl(listening socket) failed: %m; retrying in %d ms",
			  UROMD_ACCEPT_PAUSE_MS);
		d->listen_resume_ms = uromd_now_ms() + UROMD_ACCEPT_PAUSE_MS;
		return;
	}
	d->listen_resume_ms = 0;
}

/* Accept one waiting connection; nonzero while there may be more. */
static int conn_accept_one(struct uromd *d)
{
	struct sockaddr_storage ss;
	socklen_t ss_len = sizeof(ss);
	struct epoll_event ev;
	struct uromd_conn *conn;
	char peer[96];
	int fd;

	fd = accept4(d->listen_fd, (struct sockaddr *)&ss, &ss_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		if (errno != EMFILE && errno != ENFILE && errno != ENOBUFS && errno != ENOMEM) {
			/*
			 * EINTR, ECONNABORTED, and the network errors of a pending connection that
			 * Linux passes out of accept (ENETDOWN, EPROTO, EHOSTUNREACH ...) or EPERM
			 * from a firewall rule: that one connection is lost, try the next.
			 */
			if (errno != EINTR && errno != ECONNABORTED && peer_warn_ok(d, NULL))
				sdp_warn("accept on the service port failed: %m");
			return 1;
		}
		/*
		 * EMFILE and friends: the listener stays readable, so waiting on it would spin.
		 * Leave the epoll set for a while and free a descriptor held by a peer that has
		 * not authenticated.
		 */
		if (peer_warn_ok(d, NULL))
			sdp_warn("accept on the service port failed: %m; not accepting for %d ms",
				 UROMD_ACCEPT_PAUSE_MS);
		conn_accept_pause(d);
		if (d->num_preauth > 0)
			conn_evict_oldest_preauth(d);
		return 0;
	}
	sdp_urom_sockaddr_str((struct sockaddr *)&ss, peer, sizeof(peer));
	if (d->stopping || d->num_conns >= UROMD_MAX_CONNS) {
		if (!d->stopping && peer_warn_ok(d, NULL))
			sdp_warn("connection from %s refused: %zu connections, at most %d", peer,
				 d->num_conns, UROMD_MAX_CONNS);
		close(fd);
		return 1;
	}
	if (d->num_preauth >= UROMD_MAX_PREAUTH_CONNS)
		conn_evict_oldest_preauth(d); /* silent peers cannot lock hosts out */
	conn = calloc(1, sizeof(*conn));
	if (conn == NULL) {
		sdp_error("connection from %s refused: out of memory", peer);
		close(fd);
		return 1;
	}
	conn->ev_kind = UROMD_EV_CONN;
	conn->d = d;
	snprintf(conn->peer, sizeof(conn->peer), "%s", peer);
	snprintf(conn->hostname, sizeof(conn->hostname), "?");
	if (sdp_urom_chan_init(&conn->chan, fd, SDP_UROM_FRAME_PREAUTH_MAX) != DOCA_SUCCESS) {
		close(fd); /* logged */
		free(conn);
		return 1;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = conn;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		sdp_error("connection from %s refused: epoll_ctl failed: %m", peer);
		sdp_urom_chan_fini(&conn->chan);
		free(conn);
		return 1;
	}
	conn->state = UROMD_CONN_HELLO;
	conn->preauth = 1;
	conn->deadline_ms = uromd_now_ms() + UROMD_HANDSHAKE_MS;
	conn->next = d->conns;
	d->conns = conn;
	d->num_conns++;
	d->num_preauth++;
	sdp_debug("host %s connected", conn->peer);
	return 1;
}

void uromd_conn_accept(struct uromd *d)
{
	/* A bounded batch: the loop comes back while the socket stays readable. */
	for (int i = 0; i < 64 && conn_accept_one(d); i++)
		;
}

uint64_t uromd_conn_timers(struct uromd *d, uint64_t now)
{
	struct uromd_conn *conn = d->conns, *next;
	uint64_t deadline = 0;

	if (d->listen_resume_ms != 0 && now >= d->listen_resume_ms)
		conn_accept_resume(d);
	if (d->listen_resume_ms != 0)
		deadline = d->listen_resume_ms;
	/* The count of warnings not logged is reported when their second is over. */
	if (d->peer_warn_dropped > 0) {
		peer_warn_roll(d, now);
		if (d->peer_warn_dropped > 0 &&
		    (deadline == 0 || d->peer_warn_window_ms + 1000 < deadline))
			deadline = d->peer_warn_window_ms + 1000;
	}

	for (; conn != NULL; conn = next) {
		next = conn->next;
		if (conn->deadline_ms == 0)
			continue;
		if (conn->state == UROMD_CONN_DOOMED &&
		    (now >= conn->deadline_ms || conn->peer_failed)) {
			conn_close(d, conn);
			continue;
		}
		if (now < conn->deadline_ms) {
			if (deadline == 0 || conn->deadline_ms < deadline)
				deadline = conn->deadline_ms;
			continue;
		}
		if (peer_warn_ok(d, conn))
			sdp_warn("host %s did not complete the handshake within %d ms; closing",
				 conn->peer, UROMD_HANDSHAKE_MS);
		conn_fail(conn);
		deadline = now;
	}
	return deadline;
}

void uromd_conn_close_all(struct uromd *d)
{
	while (d->conns != NULL)
		conn_close(d, d->conns);
}

doca_error_t uromd_conn_listen(struct uromd *d)
{
	struct addrinfo hints, *ai = NULL;
	struct epoll_event ev;
	doca_error_t status;
	char port[16];
	int rc;

	d->listen_fd = -1;
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
	status = sdp_urom_chan_listen(ai->ai_addr, ai->ai_addrlen, &d->listen_fd, &d->bound_port);
	freeaddrinfo(ai);
	if (status != DOCA_SUCCESS)
		return status;
	d->listen_kind = UROMD_EV_LISTENER;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = &d->listen_kind;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->listen_fd, &ev) != 0) {
		sdp_error("epoll_ctl(listening socket) failed: %m");
		uromd_conn_listen_close(d);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	return DOCA_SUCCESS;
}

void uromd_conn_listen_close(struct uromd *d)
{
	if (d->listen_fd < 0)
		return;
	if (d->listen_resume_ms == 0)
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, d->listen_fd, NULL);
	close(d->listen_fd);
	d->listen_fd = -1;
}
