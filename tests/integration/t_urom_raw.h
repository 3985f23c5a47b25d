/*
 * A raw UROM peer for integration tests: speaks the wire format (src/urom/proto) on the
 * service's control channel (src/urom/common/sdp_urom_chan.h, plain TCP) directly, without libdoca_urom, so a test can send what
 * the host library never would (another protocol version, a status query) and check what the
 * daemon answers. Single-threaded; every receive is bounded.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef T_UROM_RAW_H_
#define T_UROM_RAW_H_

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "sdp_urom_chan.h"
#include "sdp_urom_auth.h"
#include "sdp_urom_proto.h"
#include "t_helpers.h"

#define T_RAW_BUF 65536

struct t_raw {
	struct sdp_urom_chan chan;
	int chan_ok;
	int ep_failed; /* the connection closed or failed */
	int got;       /* a message is in buf */
	size_t len;
	uint8_t buf[T_RAW_BUF]; /* the last message received */
	uint8_t nonce[SDP_UROM_NONCE_LEN];
	uint64_t next_req;
};

static inline int t_raw_frame_cb(void *arg, const uint8_t *data, size_t len)
{
	struct t_raw *r = (struct t_raw *)arg;

	if (len > sizeof(r->buf)) {
		t_fail("raw peer: message of %zu bytes exceeds the test buffer", len);
		return 1;
	}
	memcpy(r->buf, data, len);
	r->len = len;
	r->got = 1;
	return 1; /* one at a time */
}

/* Connect to 127.0.0.1:port. DOCA_SUCCESS or NOT_CONNECTED. */
static inline doca_error_t t_raw_connect(struct t_raw *r, uint16_t port)
{
	struct sockaddr_in sa;
	char why[128];
	doca_error_t st;
	int fd = -1;

	memset(r, 0, sizeof(*r));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	st = sdp_urom_chan_connect((const struct sockaddr *)&sa, sizeof(sa), 5000, &fd, why,
				   sizeof(why));
	if (st != DOCA_SUCCESS)
		return st;
	st = sdp_urom_chan_init(&r->chan, fd, T_RAW_BUF);
	if (st != DOCA_SUCCESS) {
		close(fd);
		return st;
	}
	r->chan_ok = 1;
	return DOCA_SUCCESS;
}

static inline void t_raw_close(struct t_raw *r)
{
	if (r->chan_ok)
		sdp_urom_chan_fini(&r->chan);
	memset(r, 0, sizeof(*r));
}

/* Send raw bytes, whatever they are (junk, half a frame). */
static inline doca_error_t t_raw_send_bytes(struct t_raw *r, const void *data, size_t len)
{
	const uint8_t *p = (const uint8_t *)data;

	while (len > 0) {
		ssize_t n = send(r->chan.fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			struct pollfd pf = {.fd = r->chan.fd, .events = POLLOUT};

			if (poll(&pf, 1, 5000) <= 0)
				return DOCA_ERROR_TIME_OUT;
			continue;
		}
		if (n < 0)
			return DOCA_ERROR_NOT_CONNECTED;
		p += n;
		len -= (size_t)n;
	}
	return DOCA_SUCCESS;
}

/*
 * Pack and send msg. wire_version != 0 overwrites the header's protocol version on the wire
 * (the u16 after the magic), to play a peer of another version.
 */
static inline doca_error_t t_raw_send(struct t_raw *r, struct sdp_urom_msg *msg,
				      uint16_t wire_version)
{
	static uint8_t out[T_RAW_BUF];
	size_t len = 0;
	doca_error_t st;

	msg->hdr.req_id = ++r->next_req;
	st = sdp_urom_msg_pack(msg, out, sizeof(out), &len);
	if (st != DOCA_SUCCESS)
		return st;
	if (wire_version != 0) {
		out[4] = (uint8_t)(wire_version & 0xff);
		out[5] = (uint8_t)(wire_version >> 8);
	}
	r->got = 0;
	return t_raw_send_bytes(r, out, len);
}

/*
 * Wait (bounded) for the next message and unpack it into msg (pointers into r->buf).
 * TIME_OUT when nothing came, NOT_CONNECTED when the service closed the connection; unpack's
 * status otherwise (NOT_SUPPORTED = other version, with msg->hdr filled).
 */
static inline doca_error_t t_raw_recv(struct t_raw *r, struct sdp_urom_msg *msg, int timeout_ms)
{
	struct timespec t0, t;
	doca_error_t st;
	int made;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r->got = 0;
	for (;;) {
		long left;

		st = sdp_urom_chan_read(&r->chan, t_raw_frame_cb, r, &made);
		if (r->got)
			break;
		if (st != DOCA_SUCCESS) {
			r->ep_failed = 1;
			return DOCA_ERROR_NOT_CONNECTED;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		left = timeout_ms -
		       ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0)
			return DOCA_ERROR_TIME_OUT;
		(void)sdp_urom_chan_wait(&r->chan, (int)left);
	}
	r->got = 0;
	return sdp_urom_msg_unpack(r->buf, r->len, msg);
}

/* Fill a HELLO as the host library would; versions given explicitly. */
static inline void t_raw_hello(struct t_raw *r, struct sdp_urom_msg *msg, uint16_t min_v,
			       uint16_t max_v)
{
	static const char host[] = "t_urom_raw";

	memset(msg, 0, sizeof(*msg));
	msg->hdr.type = SDP_UROM_MSG_HELLO;
	msg->u.hello.min_version = min_v;
	msg->u.hello.max_version = max_v;
	sdp_urom_random(r->nonce, sizeof(r->nonce));
	memcpy(msg->u.hello.nonce, r->nonce, sizeof(r->nonce));
	msg->u.hello.pid = (uint32_t)getpid();
	msg->u.hello.uid = (uint32_t)getuid();
	msg->u.hello.hostname.data = (const uint8_t *)host;
	msg->u.hello.hostname.len = (uint32_t)strlen(host);
	msg->u.hello.max_msg_size = 4096;
	msg->u.hello.max_workers = 0;
}

/*
 * The full handshake with a secret: HELLO, CHALLENGE (verified), AUTH, then WELCOME. Returns
 * DOCA_SUCCESS on WELCOME, the REJECT's status, AUTHENTICATION when the service's MAC is wrong,
 * or a transport error. msg holds the last message received.
 */
static inline doca_error_t t_raw_handshake(struct t_raw *r,
					   const uint8_t secret[SDP_UROM_SECRET_LEN],
					   struct sdp_urom_msg *msg)
{
	uint8_t snonce[SDP_UROM_NONCE_LEN];
	doca_error_t st;

	t_raw_hello(r, msg, SDP_UROM_PROTO_VERSION, SDP_UROM_PROTO_VERSION);
	st = t_raw_send(r, msg, 0);
	if (st == DOCA_SUCCESS)
		st = t_raw_recv(r, msg, 5000);
	if (st != DOCA_SUCCESS)
		return st;
	if (msg->hdr.type == SDP_UROM_MSG_REJECT)
		return (doca_error_t)msg->u.reject.status;
	if (msg->hdr.type != SDP_UROM_MSG_CHALLENGE)
		return DOCA_ERROR_UNEXPECTED;
	st = sdp_urom_auth_verify(secret, "svc", r->nonce, msg->u.challenge.nonce,
				  msg->u.challenge.mac);
	if (st != DOCA_SUCCESS)
		return st;
	memcpy(snonce, msg->u.challenge.nonce, sizeof(snonce));
	memset(msg, 0, sizeof(*msg));
	msg->hdr.type = SDP_UROM_MSG_AUTH;
	sdp_urom_auth_mac(secret, "host", snonce, r->nonce, msg->u.auth.mac);
	st = t_raw_send(r, msg, 0);
	if (st == DOCA_SUCCESS)
		st = t_raw_recv(r, msg, 5000);
	if (st != DOCA_SUCCESS)
		return st;
	if (msg->hdr.type == SDP_UROM_MSG_REJECT)
		return (doca_error_t)msg->u.reject.status;
	return msg->hdr.type == SDP_UROM_MSG_WELCOME ? DOCA_SUCCESS : DOCA_ERROR_UNEXPECTED;
}

/*
 * Ask the daemon on port (secret in secret_file) for its status JSON; copies it into json
 * (NUL-terminated). DOCA_SUCCESS or why not.
 */
static inline doca_error_t t_raw_status(uint16_t port, const char *secret_file, char *json,
					size_t size)
{
	static struct t_raw r; /* large: keep it off the stack */
	uint8_t secret[SDP_UROM_SECRET_LEN];
	struct sdp_urom_msg msg;
	doca_error_t st;

	st = sdp_urom_secret_load(secret_file, secret);
	if (st != DOCA_SUCCESS)
		return st;
	st = t_raw_connect(&r, port);
	if (st == DOCA_SUCCESS)
		st = t_raw_handshake(&r, secret, &msg);
	if (st == DOCA_SUCCESS) {
		memset(&msg, 0, sizeof(msg));
		msg.hdr.type = SDP_UROM_MSG_STATUS_QUERY;
		st = t_raw_send(&r, &msg, 0);
	}
	if (st == DOCA_SUCCESS)
		st = t_raw_recv(&r, &msg, 5000);
	if (st == DOCA_SUCCESS && msg.hdr.type != SDP_UROM_MSG_STATUS_REPLY)
		st = DOCA_ERROR_UNEXPECTED;
	if (st == DOCA_SUCCESS) {
		size_t n = msg.u.status_reply.json.len;

		if (n >= size)
			n = size - 1;
		memcpy(json, msg.u.status_reply.json.data, n);
		json[n] = '\0';
	}
	t_raw_close(&r);
	return st;
}

/* Number of entries of the top-level "workers" array of a status JSON; -1 if there is none. */
static inline int t_status_num_workers(const char *json)
{
	struct json_object *root = json_tokener_parse(json), *workers;
	int n = -1;

	if (root == NULL)
		return -1;
	if (json_object_object_get_ex(root, "workers", &workers) &&
	    json_object_is_type(workers, json_type_array))
		n = (int)json_object_array_length(workers);
	json_object_put(root);
	return n;
}

#endif /* T_UROM_RAW_H_ */
