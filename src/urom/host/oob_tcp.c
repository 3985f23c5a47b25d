/*
 * libdoca_urom, softdpu extension: the TCP out-of-band allgather of include/softdpu/urom_oob.h
 * (docs/urom-oob.md).
 *
 * Star topology. Rank 0 listens; every other rank connects to it, and the two authenticate each
 * other (sdp_urom_oob_wire.h says how) before a byte of data is taken. For allgather number k
 * each rank sends its contribution (DATA) to rank 0, which writes it straight into its receive
 * buffer at the rank's place; once all are in, rank 0 sends the whole buffer (RESULT) to every
 * rank. Frames are parsed only by sdp_urom_oob_wire.c, against what the connection's state
 * expects next, so an unauthenticated peer can make the reader hold one small control frame
 * and nothing more.
 *
 * No threads: all sockets are non-blocking and move only inside oob_progress(), which the
 * request test (poll timeout 0) and the blocking calls (a bounded poll timeout) run. The
 * reading side of a connection is polled only while the state says which frame may come, so a
 * fast rank's next DATA waits in the kernel until rank 0 has posted that allgather.
 *
 * Failure is for the whole group and for good (oob_fail): the request in progress fails, later
 * ones fail at once; rank 0 sends FAIL with the status to every authenticated rank whose output
 * is idle and shuts the connections down (FIN), so the others fail without waiting for their
 * own timeout; a rank that fails for its own reason (a timeout) tells rank 0 the same way.
 * Descriptors are closed by sdp_urom_oob_destroy().
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "softdpu/urom_oob.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <sodium.h>

#include "doca_urom.h"
#include "sdp_config.h"
#include "sdp_log.h"
#include "sdp_urom_auth.h"
#include "sdp_urom_chan.h"
#include "sdp_urom_host.h"
#include "sdp_urom_oob_wire.h"

SDP_LOG_COMPONENT("urom_oob");

/* Addresses of rank 0 a rank tries, in turn. */
#define OOB_MAX_ADDRS 4
/* Longest handshake rank 0 waits for on one connection (or the timeout, if shorter). */
#define OOB_HANDSHAKE_MS 10000
/* Connections rank 0 holds that have not authenticated: the ranks still missing, plus this. */
#define OOB_PREAUTH_SLACK 16
#define OOB_PREAUTH_CAP 1024
/* Pauses between a rank's connection attempts. */
#define OOB_RETRY_MIN_MS 10
#define OOB_RETRY_MAX_MS 250
/* How long rank 0 stops accepting after accept() ran out of descriptors. */
#define OOB_ACCEPT_PAUSE_MS 100
/* Refusals logged per second; the rest are counted and reported with the next one. */
#define OOB_REFUSALS_PER_SEC 8
/* Work per connection and call, so one peer cannot hold a progress call. */
#define OOB_READS_PER_CALL 64
#define OOB_ACCEPTS_PER_CALL 64

enum oob_phase {
	OOB_NEW,	/* nothing started */
	OOB_CONNECTING, /* connect_deadline runs */
	OOB_READY,	/* rank 0: every rank joined; other ranks: joined rank 0 */
	OOB_FAILED,	/* fail_status says why, for good */
};

enum conn_state {
	CONN_FREE,
	/* rank 0's connections */
	CONN_WAIT_HELLO, /* accepted, nothing known */
	CONN_WAIT_AUTH,	 /* CHALLENGE sent */
	CONN_READY,	 /* an authenticated rank */
	/* the other ranks' connection to rank 0 */
	CONN_RETRY,	     /* no socket; next attempt at retry_at */
	CONN_CONNECTING,     /* connect() in progress */
	CONN_WAIT_CHALLENGE, /* HELLO sent */
	CONN_WAIT_ACCEPT,    /* AUTH sent */
	CONN_UP,	     /* joined */
	/* either side, after the group failed: shut down, closed by destroy */
	CONN_SHUT,
};

struct conn {
	int fd;
	enum conn_state state;
	uint32_t rank; /* rank 0: claimed in HELLO, authenticated once READY */
	uint32_t size; /* claimed in HELLO */
	uint8_t my_nonce[SDP_UROM_OOB_NONCE_LEN];
	uint8_t peer_nonce[SDP_UROM_OOB_NONCE_LEN];
	struct sdp_urom_oob_rx rx;
	/* Output: a packed control frame or a DATA/RESULT header, then out_body. */
	uint8_t out_hdr[SDP_UROM_OOB_PREAUTH_MAX];
	size_t out_hdr_len;
	const uint8_t *out_body;
	size_t out_body_len;
	size_t out_off;	   /* bytes of header + body written */
	uint64_t deadline; /* rank 0: end of the handshake */
	uint64_t since;	   /* rank 0: accept order (the oldest is evicted first) */
	int got_data;	   /* rank 0: this rank's DATA of the current allgather is in */
	int result_sent;   /* rank 0: its RESULT is written */
	char peer[64];	   /* the peer's address, for messages */
};

struct oob_req {
	struct sdp_urom_oob *oob;
	uint32_t seq;
	uint8_t *rbuf;
	size_t msglen;
	uint64_t deadline;
	int done; /* status holds the outcome */
	doca_error_t status;
	uint32_t received; /* rank 0: contributions in, its own included */
	int sending;	   /* rank 0: RESULT queued to every rank */
	int data_queued;   /* other ranks: DATA queued */
};

struct refusal_limit {
	uint64_t window; /* start of the current second */
	unsigned int logged;
	unsigned int suppressed;
};

struct sdp_urom_oob {
	uint32_t rank;
	uint32_t size;
	int timeout_ms;
	uint8_t key[SDP_UROM_SECRET_LEN]; /* derived from the secret */
	char root[SDP_UROM_ADDR_HOST_MAX + 16];
	struct sockaddr_storage addrs[OOB_MAX_ADDRS];
	socklen_t addr_lens[OOB_MAX_ADDRS];
	unsigned int n_addrs;
	unsigned int next_addr;
	uint16_t port;
	enum oob_phase phase;
	uint64_t connect_deadline;
	doca_error_t fail_status;
	uint32_t seq;		  /* number of the next allgather */
	struct oob_req *req;	  /* the allgather in progress, NULL between and after failure */
	unsigned int outstanding; /* requests not yet freed */
	struct conn *conns;	  /* rank 0: ncap slots; other ranks: one, to rank 0 */
	size_t ncap;
	struct pollfd *pfd; /* ncap + 1 (the listener) */
	struct conn **pconn;
	/* rank 0 */
	int listen_fd;
	uint64_t accept_pause_until;
	struct conn **by_rank; /* authenticated connections by rank */
	uint32_t n_ready;
	unsigned int n_preauth;
	unsigned int preauth_max;
	uint64_t accepted; /* connections accepted so far */
	struct refusal_limit refusals;
	/* other ranks */
	uint64_t retry_at;
	unsigned int backoff_ms;
	char last_err[128]; /* why the last attempt to join failed */
	uint8_t *tx;	    /* copy of this rank's contribution */
	size_t tx_cap;
};

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* ---- logging refusals of unauthenticated peers, rate-limited --------------------------------- */

static void __attribute__((format(printf, 2, 3)))
refuse_log(struct sdp_urom_oob *oob, const char *fmt, ...)
{
	struct refusal_limit *rl = &oob->refusals;
	uint64_t now = sdp_urom_now_ms();
	char msg[256];
	va_list ap;

	if (now - rl->window >= 1000) {
		rl->window = now;
		rl->logged = 0;
	}
	if (rl->logged >= OOB_REFUSALS_PER_SEC) {
		rl->suppressed++;
		return;
	}
	rl->logged++;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (rl->suppressed > 0) {
		sdp_warn("oob rank %u/%u: %s (and %u refusals not logged before it)", oob->rank,
			 oob->size, msg, rl->suppressed);
		rl->suppressed = 0;
	} else {
		sdp_warn("oob rank %u/%u: %s", oob->rank, oob->size, msg);
	}
}

/* ---- keys and MACs ----------------------------------------------------------------------------- */

static void derive_key(const void *secret, size_t len, uint8_t key[SDP_UROM_SECRET_LEN])
{
	static const char label[] = "softdpu urom oob key 1";
	crypto_auth_hmacsha256_state st;

	crypto_auth_hmacsha256_init(&st, secret, len);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)label, sizeof(label));
	crypto_auth_hmacsha256_final(&st, key);
	sodium_memzero(&st, sizeof(st));
}

/* The MAC one side sends: the label names the side, the rank and the group size. */
static void oob_mac(const struct sdp_urom_oob *oob, const char *side, uint32_t rank, uint32_t size,
		    const uint8_t *a, const uint8_t *b, uint8_t mac[SDP_UROM_OOB_MAC_LEN])
{
	char label[64];

	snprintf(label, sizeof(label), "softdpu-oob %s %u/%u", side, rank, size);
	sdp_urom_auth_mac(oob->key, label, a, b, mac);
}

static int oob_mac_ok(const struct sdp_urom_oob *oob, const char *side, uint32_t rank,
		      uint32_t size, const uint8_t *a, const uint8_t *b, const uint8_t *got)
{
	uint8_t want[SDP_UROM_OOB_MAC_LEN];
	int equal;

	oob_mac(oob, side, rank, size, a, b, want);
	equal = sodium_memcmp(want, got, SDP_UROM_OOB_MAC_LEN) == 0;
	sodium_memzero(want, sizeof(want));
	return equal;
}

/* ---- connections ------------------------------------------------------------------------------- */

static void conn_reset(struct conn *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->state = CONN_FREE;
	sdp_urom_oob_rx_init(&c->rx);
}

static int conn_out_pending(const struct conn *c)
{
	return c->out_off < c->out_hdr_len + c->out_body_len;
}

static int conn_preauth(const struct conn *c)
{
	return c->state == CONN_WAIT_HELLO || c->state == CONN_WAIT_AUTH;
}

/* Close a connection of rank 0 that never became a rank (or one that must go). */
static void conn_close(struct sdp_urom_oob *oob, struct conn *c)
{
	if (conn_preauth(c) && oob->n_preauth > 0)
		oob->n_preauth--;
	if (c->state == CONN_READY && oob->by_rank != NULL && oob->by_rank[c->rank] == c) {
		oob->by_rank[c->rank] = NULL;
		oob->n_ready--;
	}
	if (c->fd >= 0)
		close(c->fd);
	conn_reset(c);
}

/*
 * Write what the socket takes of the queued output. DOCA_SUCCESS when all is out,
 * DOCA_ERROR_AGAIN when some is left, DOCA_ERROR_CONNECTION_RESET when the peer is gone,
 * DOCA_ERROR_IO_FAILED (cause in errbuf) otherwise.
 */
static doca_error_t conn_flush(struct conn *c, char *errbuf, size_t errbuf_size)
{
	while (conn_out_pending(c)) {
		struct iovec iov[2];
		struct msghdr mh;
		int n_iov = 0;
		ssize_t n;

		memset(&mh, 0, sizeof(mh));
		if (c->out_off < c->out_hdr_len) {
			iov[n_iov].iov_base = c->out_hdr + c->out_off;
			iov[n_iov].iov_len = c->out_hdr_len - c->out_off;
			n_iov++;
			if (c->out_body_len > 0) {
				iov[n_iov].iov_base = (void *)c->out_body;
				iov[n_iov].iov_len = c->out_body_len;
				n_iov++;
			}
		} else {
			size_t off = c->out_off - c->out_hdr_len;

			iov[n_iov].iov_base = (void *)(c->out_body + off);
			iov[n_iov].iov_len = c->out_body_len - off;
			n_iov++;
		}
		mh.msg_iov = iov;
		mh.msg_iovlen = (size_t)n_iov;
		n = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			int err = errno;

			if (err == EINTR)
				continue;
			if (err == EAGAIN || err == EWOULDBLOCK)
				return DOCA_ERROR_AGAIN;
			snprintf(errbuf, errbuf_size, "%s", strerror(err));
			return err == EPIPE || err == ECONNRESET || err == ENOTCONN ?
				       DOCA_ERROR_CONNECTION_RESET :
				       DOCA_ERROR_IO_FAILED;
		}
		c->out_off += (size_t)n;
	}
	return DOCA_SUCCESS;
}

/* Queue a control frame (the output must be idle). */
static void conn_queue_ctrl(struct conn *c, const struct sdp_urom_oob_msg *msg)
{
	c->out_hdr_len = sdp_urom_oob_pack(msg, 0, c->out_hdr, sizeof(c->out_hdr));
	c->out_body = NULL;
	c->out_body_len = 0;
	c->out_off = 0;
}

/* Queue a DATA or RESULT header and its body (the output must be idle). */
static void conn_queue_payload(struct conn *c, uint16_t type, uint32_t seq, const uint8_t *body,
			       size_t len)
{
	struct sdp_urom_oob_msg msg;

	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = type;
	msg.hdr.seq = seq;
	c->out_hdr_len = sdp_urom_oob_pack(&msg, len, c->out_hdr, sizeof(c->out_hdr));
	c->out_body = body;
	c->out_body_len = len;
	c->out_off = 0;
}

static void set_nodelay(int fd)
{
	int one = 1;

	/* Only latency depends on it: a failure changes nothing else. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* ---- failure ----------------------------------------------------------------------------------- */

/* Tell the peer why (when its stream is between frames) and shut the connection down. */
static void conn_shut(struct conn *c, doca_error_t status, int notify)
{
	if (c->fd < 0) {
		c->state = CONN_SHUT;
		return;
	}
	if (notify && !conn_out_pending(c)) {
		struct sdp_urom_oob_msg msg;
		uint8_t buf[SDP_UROM_OOB_PREAUTH_MAX];
		size_t len;

		memset(&msg, 0, sizeof(msg));
		msg.hdr.type = SDP_UROM_OOB_FAIL;
		msg.u.fail.status = (uint32_t)status;
		len = sdp_urom_oob_pack(&msg, 0, buf, sizeof(buf));
		/* Best effort: a peer that does not read sees the close instead. */
		if (len > 0)
			(void)send(c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	(void)shutdown(c->fd, SHUT_WR);
	c->state = CONN_SHUT;
}

/*
 * The group failed (the caller logged why): the request in progress ends with status, later
 * ones fail at once, and the peers hear of it (notify: with a FAIL frame first).
 */
static void oob_fail(struct sdp_urom_oob *oob, doca_error_t status, int notify)
{
	size_t i;

	if (oob->phase == OOB_FAILED)
		return;
	oob->phase = OOB_FAILED;
	oob->fail_status = status;
	if (oob->req != NULL) {
		oob->req->done = 1;
		oob->req->status = status;
		oob->req = NULL;
	}
	if (oob->listen_fd >= 0) {
		close(oob->listen_fd);
		oob->listen_fd = -1;
	}
	for (i = 0; i < oob->ncap; i++) {
		struct conn *c = &oob->conns[i];

		switch (c->state) {
		case CONN_READY:
		case CONN_UP:
			conn_shut(c, status, notify);
			break;
		case CONN_FREE:
		case CONN_SHUT:
			break;
		default: /* not authenticated: nothing to tell */
			if (c->fd >= 0)
				close(c->fd);
			c->fd = -1;
			c->state = CONN_SHUT;
			break;
		}
	}
	oob->n_preauth = 0;
	sdp_debug("oob rank %u/%u: failed with %s", oob->rank, oob->size,
		  doca_error_get_name(status));
}

/* ---- rank 0 ------------------------------------------------------------------------------------ */

static void root_refuse(struct sdp_urom_oob *oob, struct conn *c, const char *why)
{
	refuse_log(oob, "refused connection from %s: %s", c->peer, why);
	conn_close(oob, c);
}

static struct conn *root_oldest_preauth(struct sdp_urom_oob *oob)
{
	struct conn *oldest = NULL;
	size_t i;

	for (i = 0; i < oob->ncap; i++) {
		struct conn *c = &oob->conns[i];

		if (conn_preauth(c) && (oldest == NULL || c->since < oldest->since))
			oldest = c;
	}
	return oldest;
}

static void root_add_conn(struct sdp_urom_oob *oob, int fd, const struct sockaddr *sa, uint64_t now)
{
	struct conn *c = NULL;
	size_t i;

	if (oob->n_preauth >= oob->preauth_max) {
		struct conn *oldest = root_oldest_preauth(oob);

		if (oldest != NULL) {
			char why[96];

			snprintf(why, sizeof(why),
				 "%u connections have not authenticated: dropping the oldest",
				 oob->n_preauth);
			root_refuse(oob, oldest, why);
		}
	}
	for (i = 0; i < oob->ncap && c == NULL; i++)
		if (oob->conns[i].state == CONN_FREE)
			c = &oob->conns[i];
	if (c == NULL) { /* cannot happen: ranks + pre-auth slots */
		sdp_crit("oob rank 0: no connection slot free");
		close(fd);
		return;
	}
	conn_reset(c);
	c->fd = fd;
	c->state = CONN_WAIT_HELLO;
	c->since = oob->accepted++;
	c->deadline = now + (uint64_t)(oob->timeout_ms < OOB_HANDSHAKE_MS ? oob->timeout_ms :
									    OOB_HANDSHAKE_MS);
	sdp_urom_sockaddr_str(sa, c->peer, sizeof(c->peer));
	set_nodelay(fd);
	oob->n_preauth++;
	sdp_debug("oob rank 0: connection from %s", c->peer);
}

static void root_accept(struct sdp_urom_oob *oob, uint64_t now)
{
	for (int i = 0; i < OOB_ACCEPTS_PER_CALL && oob->listen_fd >= 0; i++) {
		struct sockaddr_storage sa;
		socklen_t len = sizeof(sa);
		int fd = accept4(oob->listen_fd, (struct sockaddr *)&sa, &len,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			root_add_conn(oob, fd, (struct sockaddr *)&sa, now);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		/* Out of descriptors or memory: the listener stays readable, so pause it. */
		refuse_log(oob, "accept on port %u failed: %s", oob->port, strerror(errno));
		oob->accept_pause_until = now + OOB_ACCEPT_PAUSE_MS;
		return;
	}
}

static void root_got_hello(struct sdp_urom_oob *oob, struct conn *c,
			   const struct sdp_urom_oob_msg *msg)
{
	struct sdp_urom_oob_msg reply;
	doca_error_t st;
	char err[96];

	c->rank = msg->u.hello.rank;
	c->size = msg->u.hello.size;
	memcpy(c->peer_nonce, msg->u.hello.nonce, SDP_UROM_OOB_NONCE_LEN);
	sdp_urom_random(c->my_nonce, SDP_UROM_OOB_NONCE_LEN);
	memset(&reply, 0, sizeof(reply));
	reply.hdr.type = SDP_UROM_OOB_CHALLENGE;
	memcpy(reply.u.challenge.nonce, c->my_nonce, SDP_UROM_OOB_NONCE_LEN);
	oob_mac(oob, "root", c->rank, c->size, c->peer_nonce, c->my_nonce, reply.u.challenge.mac);
	conn_queue_ctrl(c, &reply);
	c->state = CONN_WAIT_AUTH;
	st = conn_flush(c, err, sizeof(err));
	if (st != DOCA_SUCCESS && st != DOCA_ERROR_AGAIN)
		root_refuse(oob, c, err);
}

/* Tell an authenticated but unwanted rank why, and close. */
static void root_reject(struct sdp_urom_oob *oob, struct conn *c, doca_error_t status,
			const char *why)
{
	struct sdp_urom_oob_msg msg;
	char err[96];

	/* Logged first: the rank may look at the log once it has the answer. */
	refuse_log(oob, "refused connection from %s: %s", c->peer, why);
	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_OOB_REJECT;
	msg.u.reject.status = (uint32_t)status;
	conn_queue_ctrl(c, &msg);
	(void)conn_flush(c, err, sizeof(err)); /* small: an idle socket takes it at once */
	conn_close(oob, c);
}

static void root_got_auth(struct sdp_urom_oob *oob, struct conn *c,
			  const struct sdp_urom_oob_msg *msg)
{
	struct sdp_urom_oob_msg reply;
	char why[128], err[96];
	doca_error_t st;

	if (!oob_mac_ok(oob, "rank", c->rank, c->size, c->my_nonce, c->peer_nonce,
			msg->u.auth.mac)) {
		snprintf(why, sizeof(why),
			 "rank %u does not prove the shared secret (wrong secret)", c->rank);
		root_refuse(oob, c, why);
		return;
	}
	if (c->size != oob->size) {
		snprintf(why, sizeof(why), "rank %u belongs to a group of %u ranks, not %u",
			 c->rank, c->size, oob->size);
		root_reject(oob, c, DOCA_ERROR_INVALID_VALUE, why);
		return;
	}
	if (oob->by_rank[c->rank] != NULL) {
		snprintf(why, sizeof(why), "rank %u has joined already (from %s)", c->rank,
			 oob->by_rank[c->rank]->peer);
		root_reject(oob, c, DOCA_ERROR_ALREADY_EXIST, why);
		return;
	}
	memset(&reply, 0, sizeof(reply));
	reply.hdr.type = SDP_UROM_OOB_ACCEPT;
	conn_queue_ctrl(c, &reply);
	st = conn_flush(c, err, sizeof(err));
	if (st != DOCA_SUCCESS && st != DOCA_ERROR_AGAIN) {
		root_refuse(oob, c, err);
		return;
	}
	oob->n_preauth--;
	c->state = CONN_READY;
	c->got_data = 0;
	c->result_sent = 0;
	oob->by_rank[c->rank] = c;
	oob->n_ready++;
	sdp_debug("oob rank 0: rank %u joined from %s (%u of %u)", c->rank, c->peer,
		  oob->n_ready + 1, oob->size);
	if (oob->n_ready == oob->size - 1) {
		/* Everybody is here: nobody else may connect. */
		close(oob->listen_fd);
		oob->listen_fd = -1;
		oob->phase = OOB_READY;
	}
}

/* What rank 0 accepts next on c; types 0 when it must not read c now. */
static void root_expect(const struct sdp_urom_oob *oob, const struct conn *c,
			struct sdp_urom_oob_expect *ex)
{
	const struct oob_req *req = oob->req;

	memset(ex, 0, sizeof(*ex));
	switch (c->state) {
	case CONN_WAIT_HELLO:
		ex->types = SDP_UROM_OOB_BIT(SDP_UROM_OOB_HELLO);
		break;
	case CONN_WAIT_AUTH:
		if (!conn_out_pending(c))
			ex->types = SDP_UROM_OOB_BIT(SDP_UROM_OOB_AUTH);
		break;
	case CONN_READY:
		if (req == NULL || c->result_sent)
			break;
		ex->types = SDP_UROM_OOB_BIT(SDP_UROM_OOB_FAIL);
		if (!c->got_data) {
			ex->types |= SDP_UROM_OOB_BIT(SDP_UROM_OOB_DATA);
			ex->seq = req->seq;
			ex->payload_len = req->msglen;
			ex->payload = req->rbuf + (size_t)c->rank * req->msglen;
		}
		break;
	default:
		break;
	}
}

/* ---- the other ranks --------------------------------------------------------------------------- */

static void up_retry(struct sdp_urom_oob *oob, struct conn *c, uint64_t now, const char *why)
{
	if (c->fd >= 0)
		close(c->fd);
	conn_reset(c);
	c->state = CONN_RETRY;
	snprintf(oob->last_err, sizeof(oob->last_err), "%s", why);
	oob->retry_at = now + oob->backoff_ms;
	oob->backoff_ms =
		oob->backoff_ms * 2 > OOB_RETRY_MAX_MS ? OOB_RETRY_MAX_MS : oob->backoff_ms * 2;
	sdp_debug("oob rank %u/%u: cannot join rank 0 at %s yet: %s", oob->rank, oob->size,
		  oob->root, why);
}

static void up_send_hello(struct sdp_urom_oob *oob, struct conn *c, uint64_t now)
{
	struct sdp_urom_oob_msg msg;
	doca_error_t st;
	char err[96];

	sdp_urom_random(c->my_nonce, SDP_UROM_OOB_NONCE_LEN);
	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_OOB_HELLO;
	msg.u.hello.rank = oob->rank;
	msg.u.hello.size = oob->size;
	memcpy(msg.u.hello.nonce, c->my_nonce, SDP_UROM_OOB_NONCE_LEN);
	conn_queue_ctrl(c, &msg);
	c->state = CONN_WAIT_CHALLENGE;
	st = conn_flush(c, err, sizeof(err));
	if (st != DOCA_SUCCESS && st != DOCA_ERROR_AGAIN)
		up_retry(oob, c, now, err);
}

static void up_connect(struct sdp_urom_oob *oob, struct conn *c, uint64_t now)
{
	unsigned int i = oob->next_addr++ % oob->n_addrs;
	const struct sockaddr *sa = (const struct sockaddr *)&oob->addrs[i];
	int fd;

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		sdp_error("oob rank %u/%u: failed to create a socket: %m", oob->rank, oob->size);
		oob_fail(oob, DOCA_ERROR_OPERATING_SYSTEM, 0);
		return;
	}
	set_nodelay(fd);
	c->fd = fd;
	sdp_urom_sockaddr_str(sa, c->peer, sizeof(c->peer));
	if (connect(fd, sa, oob->addr_lens[i]) == 0) {
		up_send_hello(oob, c, now);
	} else if (errno == EINPROGRESS || errno == EINTR) {
		c->state = CONN_CONNECTING;
	} else {
		up_retry(oob, c, now, strerror(errno));
	}
}

static void up_connected(struct sdp_urom_oob *oob, struct conn *c, uint64_t now)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		err = errno;
	if (err != 0)
		up_retry(oob, c, now, strerror(err));
	else
		up_send_hello(oob, c, now);
}

static void up_got_challenge(struct sdp_urom_oob *oob, struct conn *c,
			     const struct sdp_urom_oob_msg *msg, uint64_t now)
{
	struct sdp_urom_oob_msg reply;
	doca_error_t st;
	char err[96];

	memcpy(c->peer_nonce, msg->u.challenge.nonce, SDP_UROM_OOB_NONCE_LEN);
	if (!oob_mac_ok(oob, "root", oob->rank, oob->size, c->my_nonce, c->peer_nonce,
			msg->u.challenge.mac)) {
		sdp_error("oob rank %u/%u: rank 0 at %s does not prove the shared secret (the "
			  "secrets differ)",
			  oob->rank, oob->size, c->peer);
		oob_fail(oob, DOCA_ERROR_AUTHENTICATION, 0);
		return;
	}
	memset(&reply, 0, sizeof(reply));
	reply.hdr.type = SDP_UROM_OOB_AUTH;
	oob_mac(oob, "rank", oob->rank, oob->size, c->peer_nonce, c->my_nonce, reply.u.auth.mac);
	conn_queue_ctrl(c, &reply);
	c->state = CONN_WAIT_ACCEPT;
	st = conn_flush(c, err, sizeof(err));
	if (st != DOCA_SUCCESS && st != DOCA_ERROR_AGAIN)
		up_retry(oob, c, now, err);
}

static void up_expect(const struct sdp_urom_oob *oob, const struct conn *c,
		      struct sdp_urom_oob_expect *ex)
{
	const struct oob_req *req = oob->req;

	memset(ex, 0, sizeof(*ex));
	switch (c->state) {
	case CONN_WAIT_CHALLENGE:
		if (!conn_out_pending(c))
			ex->types = SDP_UROM_OOB_BIT(SDP_UROM_OOB_CHALLENGE);
		break;
	case CONN_WAIT_ACCEPT:
		if (!conn_out_pending(c))
			ex->types = SDP_UROM_OOB_BIT(SDP_UROM_OOB_ACCEPT) |
				    SDP_UROM_OOB_BIT(SDP_UROM_OOB_REJECT);
		break;
	case CONN_UP:
		if (req == NULL)
			break;
		ex->types =
			SDP_UROM_OOB_BIT(SDP_UROM_OOB_RESULT) | SDP_UROM_OOB_BIT(SDP_UROM_OOB_FAIL);
		ex->seq = req->seq;
		ex->payload_len = req->msglen * oob->size;
		ex->payload = req->rbuf;
		break;
	default:
		break;
	}
}

/* ---- reading ----------------------------------------------------------------------------------- */

static void conn_expect(const struct sdp_urom_oob *oob, const struct conn *c,
			struct sdp_urom_oob_expect *ex)
{
	if (oob->rank == 0)
		root_expect(oob, c, ex);
	else
		up_expect(oob, c, ex);
}

/* A frame arrived on one of rank 0's connections. */
static void root_frame(struct sdp_urom_oob *oob, struct conn *c, const struct sdp_urom_oob_msg *msg)
{
	switch (msg->hdr.type) {
	case SDP_UROM_OOB_HELLO:
		root_got_hello(oob, c, msg);
		break;
	case SDP_UROM_OOB_AUTH:
		root_got_auth(oob, c, msg);
		break;
	case SDP_UROM_OOB_DATA:
		c->got_data = 1;
		oob->req->received++;
		break;
	case SDP_UROM_OOB_FAIL:
		sdp_error("oob rank 0/%u: allgather %u: rank %u failed with %s", oob->size,
			  oob->req != NULL ? oob->req->seq : oob->seq, c->rank,
			  doca_error_get_name((doca_error_t)msg->u.fail.status));
		oob_fail(oob, (doca_error_t)msg->u.fail.status, 1);
		break;
	default:
		break;
	}
}

/* A frame arrived from rank 0. */
static void up_frame(struct sdp_urom_oob *oob, struct conn *c, const struct sdp_urom_oob_msg *msg,
		     uint64_t now)
{
	switch (msg->hdr.type) {
	case SDP_UROM_OOB_CHALLENGE:
		up_got_challenge(oob, c, msg, now);
		break;
	case SDP_UROM_OOB_ACCEPT:
		c->state = CONN_UP;
		oob->phase = OOB_READY;
		sdp_debug("oob rank %u/%u: joined rank 0 at %s", oob->rank, oob->size, c->peer);
		break;
	case SDP_UROM_OOB_REJECT:
		sdp_error("oob rank %u/%u: rank 0 at %s refused this rank: %s", oob->rank,
			  oob->size, c->peer,
			  doca_error_get_name((doca_error_t)msg->u.reject.status));
		oob_fail(oob, (doca_error_t)msg->u.reject.status, 0);
		break;
	case SDP_UROM_OOB_RESULT:
		oob->req->done = 1;
		oob->req->status = DOCA_SUCCESS;
		oob->req = NULL;
		break;
	case SDP_UROM_OOB_FAIL:
		sdp_error("oob rank %u/%u: allgather %u: the group failed: %s", oob->rank,
			  oob->size, oob->req != NULL ? oob->req->seq : oob->seq,
			  doca_error_get_name((doca_error_t)msg->u.fail.status));
		oob_fail(oob, (doca_error_t)msg->u.fail.status, 0);
		break;
	default:
		break;
	}
}

/*
 * The peer closed, reset, or sent what its state forbids (why says which). Before
 * authentication only that connection goes; after it the group fails.
 */
static void conn_lost(struct sdp_urom_oob *oob, struct conn *c, doca_error_t status,
		      const char *why, uint64_t now)
{
	uint32_t seq = oob->req != NULL ? oob->req->seq : oob->seq;

	char what[160];

	switch (c->state) {
	case CONN_WAIT_HELLO:
	case CONN_WAIT_AUTH:
		snprintf(what, sizeof(what), "%s before authenticating", why);
		root_refuse(oob, c, what);
		break;
	case CONN_CONNECTING:
	case CONN_WAIT_CHALLENGE:
	case CONN_WAIT_ACCEPT:
		/* rank 0 may have dropped an attempt of ours, or it is not rank 0 at all */
		if (status != DOCA_ERROR_CONNECTION_RESET)
			refuse_log(oob, "rank 0 at %s: %s", c->peer, why);
		up_retry(oob, c, now, why);
		break;
	case CONN_READY:
		sdp_error("oob rank 0/%u: allgather %u: rank %u (%s): %s", oob->size, seq, c->rank,
			  c->peer, why);
		oob_fail(oob, status, 1);
		break;
	case CONN_UP:
		sdp_error("oob rank %u/%u: allgather %u: rank 0 (%s): %s", oob->rank, oob->size,
			  seq, c->peer, why);
		oob_fail(oob, status, 1);
		break;
	default:
		break;
	}
}

/* Read what c holds, as far as its state allows, handing each complete frame on. */
static void conn_read(struct sdp_urom_oob *oob, struct conn *c, uint64_t now)
{
	for (int i = 0; i < OOB_READS_PER_CALL; i++) {
		struct sdp_urom_oob_expect ex;
		struct sdp_urom_oob_msg msg;
		enum conn_state before = c->state;
		doca_error_t st;
		uint8_t *space;
		size_t room;
		ssize_t n;

		if (oob->phase == OOB_FAILED)
			return;
		conn_expect(oob, c, &ex);
		if (ex.types == 0 || sdp_urom_oob_rx_space(&c->rx, &space, &room) != DOCA_SUCCESS)
			return;
		n = recv(c->fd, space, room, MSG_DONTWAIT);
		if (n == 0) {
			conn_lost(oob, c, DOCA_ERROR_CONNECTION_RESET, "connection closed", now);
			return;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			conn_lost(oob, c,
				  errno == ECONNRESET ? DOCA_ERROR_CONNECTION_RESET :
							DOCA_ERROR_IO_FAILED,
				  strerror(errno), now);
			return;
		}
		st = sdp_urom_oob_rx_commit(&c->rx, (size_t)n, &ex, &msg);
		if (st == DOCA_ERROR_AGAIN)
			continue;
		if (st != DOCA_SUCCESS) {
			conn_lost(oob, c, DOCA_ERROR_INVALID_VALUE, c->rx.why, now);
			return;
		}
		if (oob->rank == 0)
			root_frame(oob, c, &msg);
		else
			up_frame(oob, c, &msg, now);
		if (c->state != before && c->state != CONN_READY && c->state != CONN_UP)
			return; /* closed, refused, retrying: nothing more from this socket */
	}
}

/* ---- progress ---------------------------------------------------------------------------------- */

static void oob_start(struct sdp_urom_oob *oob, uint64_t now)
{
	if (oob->phase != OOB_NEW)
		return;
	oob->phase = OOB_CONNECTING;
	oob->connect_deadline = now + (uint64_t)oob->timeout_ms;
	if (oob->rank != 0) {
		oob->conns[0].state = CONN_RETRY;
		oob->retry_at = now;
		oob->backoff_ms = OOB_RETRY_MIN_MS;
		snprintf(oob->last_err, sizeof(oob->last_err), "no attempt yet");
	}
}

/* Append up to `max` missing ranks of the current allgather (or of joining) to buf. */
static void root_missing(const struct sdp_urom_oob *oob, char *buf, size_t size)
{
	size_t len = 0;
	unsigned int listed = 0, missing = 0;

	buf[0] = '\0';
	for (uint32_t r = 1; r < oob->size; r++) {
		const struct conn *c = oob->by_rank[r];
		int n;

		if (c != NULL && (oob->req == NULL || c->got_data))
			continue;
		missing++;
		if (listed >= 8 || len >= size)
			continue;
		n = snprintf(buf + len, size - len, "%s%u%s", listed ? ", " : "", r,
			     c == NULL ? " (not joined)" : "");
		if (n > 0)
			len += (size_t)n;
		listed++;
	}
	if (missing > listed && len < size)
		snprintf(buf + len, size - len, " and %u more", missing - listed);
}

static void oob_check_deadlines(struct sdp_urom_oob *oob, uint64_t now)
{
	char missing[192];

	if (oob->req != NULL && now >= oob->req->deadline) {
		if (oob->rank == 0) {
			root_missing(oob, missing, sizeof(missing));
			sdp_error("oob rank 0/%u: allgather %u timed out after %d ms: no data from "
				  "rank %s",
				  oob->size, oob->req->seq, oob->timeout_ms, missing);
		} else if (oob->phase == OOB_CONNECTING) {
			sdp_error("oob rank %u/%u: allgather %u timed out after %d ms: cannot join "
				  "rank 0 at %s (%s)",
				  oob->rank, oob->size, oob->req->seq, oob->timeout_ms, oob->root,
				  oob->last_err);
		} else {
			sdp_error("oob rank %u/%u: allgather %u timed out after %d ms: no result "
				  "from rank 0",
				  oob->rank, oob->size, oob->req->seq, oob->timeout_ms);
		}
		oob_fail(oob, DOCA_ERROR_TIME_OUT, 1);
		return;
	}
	if (oob->phase == OOB_CONNECTING && now >= oob->connect_deadline) {
		if (oob->rank == 0) {
			root_missing(oob, missing, sizeof(missing));
			sdp_error("oob rank 0/%u: ranks not joined within %d ms: %s", oob->size,
				  oob->timeout_ms, missing);
		} else {
			sdp_error("oob rank %u/%u: cannot join rank 0 at %s within %d ms (%s)",
				  oob->rank, oob->size, oob->root, oob->timeout_ms, oob->last_err);
		}
		oob_fail(oob, DOCA_ERROR_TIME_OUT, 1);
		return;
	}
	if (oob->rank == 0) {
		for (size_t i = 0; i < oob->ncap; i++) {
			struct conn *c = &oob->conns[i];

			if (conn_preauth(c) && now >= c->deadline)
				root_refuse(oob, c, "did not authenticate in time");
		}
	} else if (oob->conns[0].state == CONN_RETRY && now >= oob->retry_at) {
		up_connect(oob, &oob->conns[0], now);
	}
}

/* Start what the state allows: rank 0's RESULTs, another rank's DATA; complete rank 0's request. */
static void oob_advance(struct sdp_urom_oob *oob)
{
	struct oob_req *req = oob->req;
	char err[96];

	if (req == NULL || oob->phase == OOB_FAILED)
		return;
	if (oob->rank != 0) {
		struct conn *c = &oob->conns[0];

		if (c->state == CONN_UP && !req->data_queued) {
			conn_queue_payload(c, SDP_UROM_OOB_DATA, req->seq, oob->tx, req->msglen);
			req->data_queued = 1;
		}
		if (c->state == CONN_UP && conn_out_pending(c)) {
			doca_error_t st = conn_flush(c, err, sizeof(err));

			if (st != DOCA_SUCCESS && st != DOCA_ERROR_AGAIN)
				conn_lost(oob, c, st, err, 0);
		}
		return;
	}
	if (!req->sending && req->received == oob->size) {
		for (uint32_t r = 1; r < oob->size; r++)
			conn_queue_payload(oob->by_rank[r], SDP_UROM_OOB_RESULT, req->seq,
					   req->rbuf, req->msglen * oob->size);
		req->sending = 1;
	}
	if (!req->sending)
		return;
	for (uint32_t r = 1; r < oob->size && oob->phase != OOB_FAILED; r++) {
		struct conn *c = oob->by_rank[r];
		doca_error_t st;

		if (c->result_sent)
			continue;
		st = conn_flush(c, err, sizeof(err));
		if (st == DOCA_SUCCESS)
			c->result_sent = 1;
		else if (st != DOCA_ERROR_AGAIN)
			conn_lost(oob, c, st, err, 0);
	}
	if (oob->phase == OOB_FAILED)
		return;
	for (uint32_t r = 1; r < oob->size; r++)
		if (!oob->by_rank[r]->result_sent)
			return;
	req->done = 1;
	req->status = DOCA_SUCCESS;
	oob->req = NULL;
}

/* The poll set for now; *next_p lowered to the earliest time something is due. */
static nfds_t oob_poll_set(struct sdp_urom_oob *oob, uint64_t now, uint64_t *next_p)
{
	nfds_t n = 0;

	if (oob->phase == OOB_CONNECTING)
		*next_p = min_u64(*next_p, oob->connect_deadline);
	if (oob->req != NULL)
		*next_p = min_u64(*next_p, oob->req->deadline);
	if (oob->listen_fd >= 0) {
		if (now >= oob->accept_pause_until) {
			oob->pfd[n].fd = oob->listen_fd;
			oob->pfd[n].events = POLLIN;
			oob->pconn[n] = NULL;
			n++;
		} else {
			*next_p = min_u64(*next_p, oob->accept_pause_until);
		}
	}
	for (size_t i = 0; i < oob->ncap; i++) {
		struct conn *c = &oob->conns[i];
		struct sdp_urom_oob_expect ex;
		short events = 0;

		if (c->state == CONN_RETRY)
			*next_p = min_u64(*next_p, oob->retry_at);
		if (conn_preauth(c))
			*next_p = min_u64(*next_p, c->deadline);
		if (c->fd < 0 || c->state == CONN_SHUT || c->state == CONN_FREE)
			continue;
		if (c->state == CONN_CONNECTING) {
			events = POLLOUT;
		} else {
			conn_expect(oob, c, &ex);
			if (ex.types != 0)
				events |= POLLIN;
			if (conn_out_pending(c))
				events |= POLLOUT;
		}
		if (events == 0)
			continue;
		oob->pfd[n].fd = c->fd;
		oob->pfd[n].events = events;
		oob->pfd[n].revents = 0;
		oob->pconn[n] = c;
		n++;
	}
	return n;
}

/*
 * Move every socket as far as it goes, sleeping in poll() for at most wait_ms (0: not at all)
 * and never past the next deadline. Failures end in oob_fail().
 */
static void oob_progress(struct sdp_urom_oob *oob, int wait_ms)
{
	uint64_t now = sdp_urom_now_ms(), next = UINT64_MAX;
	struct oob_req *req = oob->req;
	enum oob_phase phase;
	int rc, timeout;
	nfds_t n;

	if (oob->phase == OOB_FAILED || oob->size == 1)
		return;
	oob_start(oob, now);
	phase = oob->phase;
	oob_check_deadlines(oob, now);
	oob_advance(oob);
	/* Do not sleep when what the caller waits for just happened (or failed). */
	if (oob->phase != phase || oob->req != req)
		return;
	n = oob_poll_set(oob, now, &next);
	timeout = wait_ms;
	if (next <= now)
		timeout = 0;
	else if (next - now < (uint64_t)timeout)
		timeout = (int)(next - now);
	rc = poll(oob->pfd, n, timeout);
	if (rc < 0) {
		if (errno == EINTR)
			return;
		sdp_error("oob rank %u/%u: poll failed: %m", oob->rank, oob->size);
		oob_fail(oob, DOCA_ERROR_OPERATING_SYSTEM, 1);
		return;
	}
	now = sdp_urom_now_ms();
	for (nfds_t i = 0; i < n && rc > 0 && oob->phase != OOB_FAILED; i++) {
		struct conn *c = oob->pconn[i];
		short rev = oob->pfd[i].revents;
		char err[96] = "";

		/* A slot closed (and perhaps reused) by an earlier entry has other news. */
		if (rev == 0 || (c != NULL && c->fd != oob->pfd[i].fd))
			continue;
		if (c == NULL) {
			root_accept(oob, now);
			continue;
		}
		if (c->state == CONN_CONNECTING) {
			up_connected(oob, c, now);
			continue;
		}
		/* Read first: a RESULT just written must not let the next frame in (root_expect). */
		if (rev & (POLLIN | POLLHUP | POLLERR))
			conn_read(oob, c, now);
		if (oob->phase == OOB_FAILED || c->fd < 0 || c->state == CONN_RETRY)
			continue;
		if ((rev & (POLLOUT | POLLHUP | POLLERR)) && conn_out_pending(c) &&
		    c->state != CONN_READY && c->state != CONN_UP) {
			doca_error_t st = conn_flush(c, err, sizeof(err));

			if (st != DOCA_SUCCESS && st != DOCA_ERROR_AGAIN)
				conn_lost(oob, c, st, err, now);
		}
	}
	/* RESULT and DATA output, and completion. */
	oob_advance(oob);
}

/* ---- requests ---------------------------------------------------------------------------------- */

static doca_error_t oob_post(struct sdp_urom_oob *oob, const void *sbuf, void *rbuf, size_t msglen,
			     struct oob_req **req_p)
{
	struct oob_req *req;
	doca_error_t status;

	if (oob->phase == OOB_FAILED) {
		sdp_error("oob rank %u/%u: allgather %u refused: the group failed earlier (%s)",
			  oob->rank, oob->size, oob->seq, doca_error_get_name(oob->fail_status));
		return oob->fail_status;
	}
	if (oob->req != NULL) {
		sdp_error("oob rank %u/%u: allgather %u refused: allgather %u is still in progress",
			  oob->rank, oob->size, oob->seq, oob->req->seq);
		return DOCA_ERROR_BAD_STATE;
	}
	/* From here on a refusal fails the group: the other ranks would wait for us. */
	if (msglen > SDP_UROM_OOB_MAX_BYTES / oob->size) {
		sdp_error("oob rank %u/%u: allgather %u of %zu bytes per rank: more than %u bytes "
			  "in all",
			  oob->rank, oob->size, oob->seq, msglen, SDP_UROM_OOB_MAX_BYTES);
		status = DOCA_ERROR_INVALID_VALUE;
		goto err_fail;
	}
	if (msglen > 0 && (sbuf == NULL || rbuf == NULL)) {
		sdp_error("oob rank %u/%u: allgather %u of %zu bytes: sbuf %p, rbuf %p", oob->rank,
			  oob->size, oob->seq, msglen, sbuf, rbuf);
		status = DOCA_ERROR_INVALID_VALUE;
		goto err_fail;
	}
	req = calloc(1, sizeof(*req));
	if (req == NULL) {
		sdp_error("oob rank %u/%u: failed to allocate a request", oob->rank, oob->size);
		status = DOCA_ERROR_NO_MEMORY;
		goto err_fail;
	}
	if (oob->rank != 0 && msglen > oob->tx_cap) {
		uint8_t *tx = realloc(oob->tx, msglen);

		if (tx == NULL) {
			sdp_error("oob rank %u/%u: failed to allocate %zu bytes", oob->rank,
				  oob->size, msglen);
			status = DOCA_ERROR_NO_MEMORY;
			goto err_free_req;
		}
		oob->tx = tx;
		oob->tx_cap = msglen;
	}
	req->oob = oob;
	req->seq = oob->seq++;
	req->rbuf = rbuf;
	req->msglen = msglen;
	req->deadline = sdp_urom_now_ms() + (uint64_t)oob->timeout_ms;
	req->status = DOCA_ERROR_IN_PROGRESS;
	oob->outstanding++;
	if (oob->rank == 0) {
		if (msglen > 0)
			memmove(rbuf, sbuf, msglen);
		req->received = 1;
		for (size_t i = 0; i < oob->ncap; i++) {
			oob->conns[i].got_data = 0;
			oob->conns[i].result_sent = 0;
		}
	} else if (msglen > 0) {
		memcpy(oob->tx, sbuf, msglen);
	}
	if (oob->size == 1) {
		req->done = 1;
		req->status = DOCA_SUCCESS;
	} else {
		oob->req = req;
		sdp_trace("oob rank %u/%u: allgather %u of %zu bytes", oob->rank, oob->size,
			  req->seq, msglen);
	}
	*req_p = req;
	return DOCA_SUCCESS;

err_free_req:
	free(req);
err_fail:
	oob_fail(oob, status, 1);
	return status;
}

static doca_error_t oob_req_free(struct oob_req *req)
{
	struct sdp_urom_oob *oob = req->oob;

	if (oob->req == req) {
		sdp_warn("oob rank %u/%u: allgather %u freed before it completed: this rank leaves "
			 "the group",
			 oob->rank, oob->size, req->seq);
		oob_fail(oob, DOCA_ERROR_CONNECTION_ABORTED, 0);
	}
	oob->outstanding--;
	free(req);
	return DOCA_SUCCESS;
}

/* Wait for req (bounded by its deadline, which oob_progress enforces). */
static doca_error_t oob_req_wait(struct sdp_urom_oob *oob, struct oob_req *req)
{
	while (!req->done) {
		uint64_t now = sdp_urom_now_ms();
		uint64_t left = req->deadline > now ? req->deadline - now : 0;

		oob_progress(oob, (int)min_u64(left + 1, (uint64_t)oob->timeout_ms));
	}
	return req->status;
}

/* ---- the callbacks of struct doca_urom_domain_oob_coll ----------------------------------------- */

static doca_error_t coll_allgather(void *sbuf, void *rbuf, size_t msglen, void *coll_info,
				   void **req_p)
{
	struct sdp_urom_oob *oob = coll_info;
	struct oob_req *req;
	doca_error_t status;

	if (oob == NULL || req_p == NULL) {
		sdp_error("invalid argument: coll_info %p, req %p", coll_info, (void *)req_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = oob_post(oob, sbuf, rbuf, msglen, &req);
	if (status != DOCA_SUCCESS)
		return status;
	/* Send what can go at once; never waits. */
	oob_progress(oob, 0);
	*req_p = req;
	return DOCA_SUCCESS;
}

static doca_error_t coll_req_test(void *req_v)
{
	struct oob_req *req = req_v;

	if (req == NULL) {
		sdp_error("invalid argument: req NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!req->done)
		oob_progress(req->oob, 0);
	return req->done ? req->status : DOCA_ERROR_IN_PROGRESS;
}

static doca_error_t coll_req_free(void *req_v)
{
	if (req_v == NULL) {
		sdp_error("invalid argument: req NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return oob_req_free(req_v);
}

/* ---- public API -------------------------------------------------------------------------------- */

/* "host:port", "[v6]:port", "host" or "host:0" (port 0: rank 0 lets the system choose). */
static doca_error_t parse_root(const char *root, char *host, size_t host_size, uint16_t *port_p)
{
	char copy[SDP_UROM_ADDR_HOST_MAX + 16];
	size_t len = strlen(root);
	const char *colon = strchr(root, ':');
	int one_colon = colon != NULL && strchr(colon + 1, ':') == NULL;

	if (len >= sizeof(copy))
		return DOCA_ERROR_INVALID_VALUE;
	memcpy(copy, root, len + 1);
	/* sdp_urom_hostport_parse() wants a port in 1..65535: take ":0" off first. */
	if (len > 2 && strcmp(copy + len - 2, ":0") == 0 && (copy[0] == '[' || one_colon))
		copy[len - 2] = '\0';
	return sdp_urom_hostport_parse(copy, 0, host, host_size, port_p);
}

static doca_error_t oob_resolve(struct sdp_urom_oob *oob, const char *root)
{
	struct addrinfo hints, *res = NULL, *ai;
	char host[SDP_UROM_ADDR_HOST_MAX], port_str[8];
	uint16_t port;
	int rc;

	if (parse_root(root, host, sizeof(host), &port) != DOCA_SUCCESS) {
		sdp_error("oob rank %u/%u: root address '%s' is not host:port or [v6addr]:port",
			  oob->rank, oob->size, root);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (port == 0 && oob->rank != 0) {
		sdp_error("oob rank %u/%u: root address '%s' has no port (only rank 0 may let the "
			  "system choose it)",
			  oob->rank, oob->size, root);
		return DOCA_ERROR_INVALID_VALUE;
	}
	snprintf(port_str, sizeof(port_str), "%u", port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	rc = getaddrinfo(host, port_str, &hints, &res);
	if (rc != 0) {
		sdp_error("oob rank %u/%u: cannot resolve root address %s: %s", oob->rank,
			  oob->size, root, rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return DOCA_ERROR_INVALID_VALUE;
	}
	for (ai = res; ai != NULL && oob->n_addrs < OOB_MAX_ADDRS; ai = ai->ai_next) {
		if (ai->ai_addrlen > sizeof(oob->addrs[0]))
			continue;
		memcpy(&oob->addrs[oob->n_addrs], ai->ai_addr, ai->ai_addrlen);
		oob->addr_lens[oob->n_addrs] = ai->ai_addrlen;
		oob->n_addrs++;
	}
	freeaddrinfo(res);
	if (oob->n_addrs == 0) {
		sdp_error("oob rank %u/%u: root address %s resolves to no usable address",
			  oob->rank, oob->size, root);
		return DOCA_ERROR_INVALID_VALUE;
	}
	oob->port = port;
	return DOCA_SUCCESS;
}

static doca_error_t check_params(const struct sdp_urom_oob_params *p)
{
	if (p->size == 0 || p->size > SDP_UROM_OOB_MAX_RANKS) {
		sdp_error("invalid group size %u (1 to %u)", p->size, SDP_UROM_OOB_MAX_RANKS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (p->rank >= p->size) {
		sdp_error("invalid rank %u of a group of %u", p->rank, p->size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (p->size == 1) {
		if (p->secret != NULL && p->secret_len < SDP_UROM_OOB_SECRET_MIN) {
			sdp_error("secret of %zu bytes: at least %d needed", p->secret_len,
				  SDP_UROM_OOB_SECRET_MIN);
			return DOCA_ERROR_INVALID_VALUE;
		}
		return DOCA_SUCCESS;
	}
	if (p->root == NULL || p->root[0] == '\0') {
		sdp_error("rank %u of %u: no root address", p->rank, p->size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (p->secret == NULL || p->secret_len < SDP_UROM_OOB_SECRET_MIN) {
		sdp_error("rank %u of %u: secret %p of %zu bytes: at least %d bytes needed",
			  p->rank, p->size, p->secret, p->secret_len, SDP_UROM_OOB_SECRET_MIN);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t oob_alloc_conns(struct sdp_urom_oob *oob)
{
	size_t i;

	if (oob->rank == 0) {
		uint32_t missing = oob->size - 1;

		oob->preauth_max =
			(missing < OOB_PREAUTH_CAP ? missing : OOB_PREAUTH_CAP) + OOB_PREAUTH_SLACK;
		oob->ncap = (size_t)missing + oob->preauth_max;
		oob->by_rank = calloc(oob->size, sizeof(*oob->by_rank));
		if (oob->by_rank == NULL)
			return DOCA_ERROR_NO_MEMORY;
	} else {
		oob->ncap = 1;
	}
	oob->conns = calloc(oob->ncap, sizeof(*oob->conns));
	oob->pfd = calloc(oob->ncap + 1, sizeof(*oob->pfd));
	oob->pconn = calloc(oob->ncap + 1, sizeof(*oob->pconn));
	if (oob->conns == NULL || oob->pfd == NULL || oob->pconn == NULL)
		return DOCA_ERROR_NO_MEMORY;
	for (i = 0; i < oob->ncap; i++)
		conn_reset(&oob->conns[i]);
	return DOCA_SUCCESS;
}

static void oob_free(struct sdp_urom_oob *oob)
{
	size_t i;

	for (i = 0; oob->conns != NULL && i < oob->ncap; i++)
		if (oob->conns[i].fd >= 0)
			close(oob->conns[i].fd);
	if (oob->listen_fd >= 0)
		close(oob->listen_fd);
	free(oob->conns);
	free(oob->pfd);
	free(oob->pconn);
	free(oob->by_rank);
	free(oob->tx);
	sodium_memzero(oob->key, sizeof(oob->key));
	free(oob);
}

doca_error_t sdp_urom_oob_create(const struct sdp_urom_oob_params *params,
				 struct sdp_urom_oob **oob_p)
{
	struct sdp_urom_oob *oob;
	doca_error_t status;

	if (params == NULL || oob_p == NULL) {
		sdp_error("invalid argument: params %p, oob %p", (const void *)params,
			  (void *)oob_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = check_params(params);
	if (status != DOCA_SUCCESS)
		return status;
	if (sodium_init() < 0) {
		sdp_crit("libsodium failed to initialise");
		return DOCA_ERROR_INITIALIZATION;
	}
	oob = calloc(1, sizeof(*oob));
	if (oob == NULL) {
		sdp_error("failed to allocate an oob of %zu bytes", sizeof(*oob));
		return DOCA_ERROR_NO_MEMORY;
	}
	oob->listen_fd = -1;
	oob->rank = params->rank;
	oob->size = params->size;
	oob->timeout_ms =
		params->timeout_ms > 0 ? params->timeout_ms : SDP_UROM_OOB_DEFAULT_TIMEOUT_MS;
	oob->phase = oob->size == 1 ? OOB_READY : OOB_NEW;
	if (params->secret != NULL)
		derive_key(params->secret, params->secret_len, oob->key);
	if (oob->size == 1) {
		*oob_p = oob;
		return DOCA_SUCCESS;
	}
	snprintf(oob->root, sizeof(oob->root), "%s", params->root);
	status = oob_alloc_conns(oob);
	if (status != DOCA_SUCCESS) {
		sdp_error("oob rank %u/%u: failed to allocate its connection table", oob->rank,
			  oob->size);
		goto err_free_oob;
	}
	status = oob_resolve(oob, params->root);
	if (status != DOCA_SUCCESS)
		goto err_free_oob;
	if (oob->rank == 0) {
		status = sdp_urom_chan_listen((const struct sockaddr *)&oob->addrs[0],
					      oob->addr_lens[0], &oob->listen_fd, &oob->port);
		if (status != DOCA_SUCCESS)
			goto err_free_oob;
		sdp_debug("oob rank 0/%u: listening on port %u", oob->size, oob->port);
	}
	*oob_p = oob;
	return DOCA_SUCCESS;

err_free_oob:
	oob_free(oob);
	return status;
}

/* SOFTDPU_OOB_SECRET_FILE: the whole content of a private regular file. */
static doca_error_t read_secret_file(const char *name, const char *path, uint8_t *buf,
				     size_t *len_p)
{
	struct stat st;
	doca_error_t status;
	size_t got = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		int err = errno;

		sdp_error("%s=%s: cannot open it: %s", name, path, strerror(err));
		return err == ENOENT		     ? DOCA_ERROR_NOT_FOUND :
		       err == EACCES || err == ELOOP ? DOCA_ERROR_NOT_PERMITTED :
						       DOCA_ERROR_INVALID_VALUE;
	}
	if (fstat(fd, &st) != 0) {
		sdp_error("%s=%s: cannot stat it: %m", name, path);
		status = DOCA_ERROR_IO_FAILED;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		sdp_error("%s=%s: not a regular file", name, path);
		status = DOCA_ERROR_INVALID_VALUE;
		goto out_close;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		sdp_error("%s=%s: owned by uid %u with mode %04o: it must belong to this user "
			  "(uid %u) and be closed to group and others (chmod 600)",
			  name, path, (unsigned int)st.st_uid, (unsigned int)(st.st_mode & 07777),
			  (unsigned int)geteuid());
		status = DOCA_ERROR_NOT_PERMITTED;
		goto out_close;
	}
	if (st.st_size < SDP_UROM_OOB_SECRET_MIN || st.st_size > SDP_UROM_OOB_SECRET_FILE_MAX) {
		sdp_error("%s=%s: %lld bytes, expected %d to %d", name, path, (long long)st.st_size,
			  SDP_UROM_OOB_SECRET_MIN, SDP_UROM_OOB_SECRET_FILE_MAX);
		status = DOCA_ERROR_INVALID_VALUE;
		goto out_close;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			sdp_error("%s=%s: cannot read it: %m", name, path);
			status = DOCA_ERROR_IO_FAILED;
			goto out_close;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got < SDP_UROM_OOB_SECRET_MIN) {
		sdp_error("%s=%s: only %zu bytes could be read", name, path, got);
		status = DOCA_ERROR_INVALID_VALUE;
		goto out_close;
	}
	*len_p = got;
	status = DOCA_SUCCESS;
out_close:
	close(fd);
	return status;
}

/* A required unsigned variable; NOT_FOUND / INVALID_VALUE logged once with its name. */
static doca_error_t env_uint(enum sdp_config_id id, uint64_t max, uint64_t *value_p)
{
	uint64_t v;
	doca_error_t status = sdp_config_get_uint(id, &v);

	if (status == DOCA_ERROR_NOT_FOUND) {
		sdp_error("%s is not set", sdp_config_name(id));
		return status;
	}
	if (status != DOCA_SUCCESS)
		return status; /* the registry named the variable and its value */
	if (v > max) {
		sdp_error("%s=%llu is out of range (at most %llu)", sdp_config_name(id),
			  (unsigned long long)v, (unsigned long long)max);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*value_p = v;
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_oob_from_env(struct sdp_urom_oob **oob_p)
{
	struct sdp_urom_oob_params p;
	uint8_t secret[SDP_UROM_OOB_SECRET_FILE_MAX];
	uint64_t rank, size, timeout = SDP_UROM_OOB_DEFAULT_TIMEOUT_MS;
	const char *root, *path;
	size_t secret_len = 0;
	doca_error_t status;

	if (oob_p == NULL) {
		sdp_error("invalid argument: oob NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = env_uint(SDP_CFG_OOB_SIZE, SDP_UROM_OOB_MAX_RANKS, &size);
	if (status != DOCA_SUCCESS)
		return status;
	if (size == 0) {
		sdp_error("%s=0: a group has at least one rank", sdp_config_name(SDP_CFG_OOB_SIZE));
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = env_uint(SDP_CFG_OOB_RANK, UINT32_MAX, &rank);
	if (status != DOCA_SUCCESS)
		return status;
	if (rank >= size) {
		sdp_error("%s=%llu is out of range: %s is %llu", sdp_config_name(SDP_CFG_OOB_RANK),
			  (unsigned long long)rank, sdp_config_name(SDP_CFG_OOB_SIZE),
			  (unsigned long long)size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_config_get_uint(SDP_CFG_OOB_TIMEOUT_MS, &timeout);
	if (status == DOCA_ERROR_INVALID_VALUE)
		return status; /* the registry named it */
	if (status == DOCA_ERROR_NOT_FOUND || timeout == 0)
		timeout = SDP_UROM_OOB_DEFAULT_TIMEOUT_MS;
	if (timeout > INT32_MAX) {
		sdp_error("%s=%llu is out of range (at most %d)",
			  sdp_config_name(SDP_CFG_OOB_TIMEOUT_MS), (unsigned long long)timeout,
			  INT32_MAX);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memset(&p, 0, sizeof(p));
	p.rank = (uint32_t)rank;
	p.size = (uint32_t)size;
	p.timeout_ms = (int)timeout;
	if (size > 1) {
		root = sdp_config_get_string(SDP_CFG_OOB_ROOT);
		if (root == NULL || root[0] == '\0') {
			sdp_error("%s is not set", sdp_config_name(SDP_CFG_OOB_ROOT));
			return DOCA_ERROR_NOT_FOUND;
		}
		path = sdp_config_get_string(SDP_CFG_OOB_SECRET_FILE);
		if (path == NULL || path[0] == '\0') {
			sdp_error("%s is not set", sdp_config_name(SDP_CFG_OOB_SECRET_FILE));
			return DOCA_ERROR_NOT_FOUND;
		}
		status = read_secret_file(sdp_config_name(SDP_CFG_OOB_SECRET_FILE), path, secret,
					  &secret_len);
		if (status != DOCA_SUCCESS)
			goto out;
		p.root = root;
		p.secret = secret;
		p.secret_len = secret_len;
	}
	status = sdp_urom_oob_create(&p, oob_p);
out:
	sodium_memzero(secret, sizeof(secret));
	return status;
}

void sdp_urom_oob_coll(struct sdp_urom_oob *oob, struct doca_urom_domain_oob_coll *coll)
{
	if (oob == NULL || coll == NULL) {
		sdp_error("invalid argument: oob %p, coll %p", (void *)oob, (void *)coll);
		return;
	}
	coll->allgather = coll_allgather;
	coll->req_test = coll_req_test;
	coll->req_free = coll_req_free;
	coll->coll_info = oob;
	coll->n_oob_indexes = oob->size;
	coll->oob_index = oob->rank;
}

uint16_t sdp_urom_oob_port(const struct sdp_urom_oob *oob)
{
	return oob != NULL ? oob->port : 0;
}

doca_error_t sdp_urom_oob_wait_ready(struct sdp_urom_oob *oob, int timeout_ms)
{
	uint64_t end;

	if (oob == NULL) {
		sdp_error("invalid argument: oob NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	end = sdp_urom_now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : oob->timeout_ms);
	for (;;) {
		uint64_t now;

		if (oob->phase == OOB_FAILED)
			return oob->fail_status;
		if (oob->phase == OOB_READY)
			return DOCA_SUCCESS;
		now = sdp_urom_now_ms();
		if (now >= end && oob->phase != OOB_NEW)
			return DOCA_ERROR_TIME_OUT;
		oob_progress(oob, now < end ? (int)(end - now) : 0);
	}
}

doca_error_t sdp_urom_oob_allgather(struct sdp_urom_oob *oob, const void *sbuf, void *rbuf,
				    size_t len)
{
	struct oob_req *req;
	doca_error_t status;

	if (oob == NULL) {
		sdp_error("invalid argument: oob NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = oob_post(oob, sbuf, rbuf, len, &req);
	if (status != DOCA_SUCCESS)
		return status;
	status = oob_req_wait(oob, req);
	(void)oob_req_free(req);
	return status;
}

doca_error_t sdp_urom_oob_destroy(struct sdp_urom_oob *oob)
{
	if (oob == NULL) {
		sdp_error("invalid argument: oob NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (oob->outstanding > 0) {
		sdp_error("oob rank %u/%u: %u requests not freed", oob->rank, oob->size,
			  oob->outstanding);
		return DOCA_ERROR_IN_USE;
	}
	sdp_debug("oob rank %u/%u: destroyed", oob->rank, oob->size);
	oob_free(oob);
	return DOCA_SUCCESS;
}
