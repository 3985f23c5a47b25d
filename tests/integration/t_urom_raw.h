/*
 * A raw UROM peer for integration tests: speaks the wire format (src/urom/proto) over softdpu's
 * UCX layer (src/urom/common/sdp_ucx.h) directly, without libdoca_urom, so a test can send what
 * the host library never would (another protocol version, a status query) and check what the
 * daemon answers. Single-threaded; every receive is bounded.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef T_UROM_RAW_H_
#define T_UROM_RAW_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "sdp_ucx.h"
#include "sdp_urom_auth.h"
#include "sdp_urom_proto.h"
#include "t_helpers.h"

#define T_RAW_BUF 65536

struct t_raw {
	ucp_context_h context;
	struct sdp_ucx_worker w;
	int worker_ok;
	ucp_ep_h ep;
	int ep_failed; /* the endpoint reported an error */
	int got;       /* a message is in buf */
	size_t len;
	uint8_t buf[T_RAW_BUF]; /* the last message received */
	uint8_t nonce[SDP_UROM_NONCE_LEN];
	uint64_t next_req;
};

static inline void t_raw_recv_cb(void *arg, ucp_ep_h reply_ep, const void *data, size_t len)
{
	struct t_raw *r = (struct t_raw *)arg;

	(void)reply_ep;
	if (len > sizeof(r->buf)) {
		t_fail("raw peer: message of %zu bytes exceeds the test buffer", len);
		return;
	}
	memcpy(r->buf, data, len);
	r->len = len;
	r->got = 1;
}

static inline void t_raw_ep_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
	struct t_raw *r = (struct t_raw *)arg;

	(void)ep;
	(void)status;
	r->ep_failed = 1;
}

/* Connect to 127.0.0.1:port. DOCA_SUCCESS or the UCX layer's error. */
static inline doca_error_t t_raw_connect(struct t_raw *r, uint16_t port)
{
	struct sockaddr_in sa;
	doca_error_t st;

	memset(r, 0, sizeof(*r));
	st = sdp_ucx_context_create("lo", &r->context);
	if (st != DOCA_SUCCESS)
		return st;
	st = sdp_ucx_worker_init(&r->w, r->context, UCS_THREAD_MODE_SINGLE, t_raw_recv_cb, r);
	if (st != DOCA_SUCCESS)
		return st;
	r->worker_ok = 1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sdp_ucx_ep_connect_sockaddr(&r->w, (const struct sockaddr *)&sa, sizeof(sa),
					   t_raw_ep_err_cb, r, &r->ep);
}

static inline void t_raw_close(struct t_raw *r)
{
	if (r->ep != NULL)
		sdp_ucx_ep_close(&r->w, r->ep, 1000);
	if (r->worker_ok)
		sdp_ucx_worker_fini(&r->w);
	if (r->context != NULL)
		sdp_ucx_context_destroy(r->context);
	memset(r, 0, sizeof(*r));
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
	return sdp_ucx_send(&r->w, r->ep, out, len);
}

/*
 * Wait (bounded) for the next message and unpack it into msg (pointers into r->buf).
 * TIME_OUT when nothing came; unpack's status otherwise (NOT_SUPPORTED = other version, with
 * msg->hdr filled).
 */
static inline doca_error_t t_raw_recv(struct t_raw *r, struct sdp_urom_msg *msg, int timeout_ms)
{
	doca_error_t st;

	st = sdp_ucx_worker_wait(&r->w, &r->got, timeout_ms);
	if (st != DOCA_SUCCESS)
		return st;
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
