/*
 * softdpu: the UROM wire format (see sdp_urom_proto.h for the framing and the rules).
 *
 * One table-free encoder and one decoder per message type. The encoder writes through a cursor
 * that keeps counting past the end of the buffer, so the same code computes the packed size,
 * detects TOO_BIG and fills the buffer. The decoder reads through a cursor that refuses any read
 * past the body and remembers the first failure, so each field costs one line and nothing can
 * run beyond `len`.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_urom_proto.h"

#include "sdp_urom_wire.h"

#include <stdio.h>
#include <string.h>

#include "sdp_log.h"

SDP_LOG_COMPONENT("urom_proto");

/* ---- encoding ---- */

struct sdp_wr {
	uint8_t *buf; /* NULL when only sizing */
	size_t cap;
	size_t pos;	 /* bytes the message needs so far (may exceed cap) */
	const char *bad; /* first invalid field, NULL while valid */
};

static void wr_raw(struct sdp_wr *w, const void *src, size_t n)
{
	if (w->buf != NULL && n <= w->cap && w->pos <= w->cap - n && n > 0)
		memcpy(w->buf + w->pos, src, n);
	w->pos += n;
}

static void wr_le(struct sdp_wr *w, uint64_t v, size_t n)
{
	uint8_t b[8];
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	wr_raw(w, b, n);
}

static void wr_u16(struct sdp_wr *w, uint16_t v)
{
	wr_le(w, v, 2);
}

static void wr_u32(struct sdp_wr *w, uint32_t v)
{
	wr_le(w, v, 4);
}

static void wr_u64(struct sdp_wr *w, uint64_t v)
{
	wr_le(w, v, 8);
}

static void wr_bytes(struct sdp_wr *w, const struct sdp_urom_bytes *b, const char *field)
{
	if (b->len > 0 && b->data == NULL) {
		if (w->bad == NULL)
			w->bad = field;
		return;
	}
	wr_u32(w, b->len);
	wr_raw(w, b->data, b->len);
}

/* A status field: a doca_error_t (DOCA_SUCCESS .. DOCA_ERROR_DEVICE_FATAL_ERROR), else refused. */
static void wr_status(struct sdp_wr *w, uint32_t v, const char *field)
{
	if (v > DOCA_ERROR_DEVICE_FATAL_ERROR && w->bad == NULL)
		w->bad = field;
	wr_u32(w, v);
}

static void wr_cpuset(struct sdp_wr *w, const uint64_t *words)
{
	int i;

	for (i = 0; i < SDP_UROM_CPUSET_WORDS; i++)
		wr_u64(w, words[i]);
}

static void wr_invalid(struct sdp_wr *w, const char *field)
{
	if (w->bad == NULL)
		w->bad = field;
}

/* 1 when b holds at most max bytes, all printable ASCII (SW_STATS strings). */
static int urom_printable(const struct sdp_urom_bytes *b, uint32_t max)
{
	if (b->len > max || (b->len > 0 && b->data == NULL))
		return 0;
	for (uint32_t i = 0; i < b->len; i++)
		if (b->data[i] < 0x20 || b->data[i] > 0x7e)
			return 0;
	return 1;
}

/* The ordering relations between SW_STATS counts; the first one broken, or NULL. */
static const char *urom_stats_bad(const struct sdp_urom_msg *msg)
{
	const typeof(msg->u.sw_stats) *st = &msg->u.sw_stats;

	if (st->cmds_refused > st->cmds)
		return "sw_stats.cmds_refused (more than cmds)";
	if (st->notifs_error > st->notifs)
		return "sw_stats.notifs_error (more than notifs)";
	if (st->hosts_connected > st->hosts_total)
		return "sw_stats.hosts_connected (more than hosts_total)";
	if (!urom_printable(&st->ucx_version, SDP_UROM_STATS_VERSION_MAX))
		return "sw_stats.ucx_version";
	if (!urom_printable(&st->ucx_tls, SDP_UROM_STATS_STR_MAX))
		return "sw_stats.ucx_tls";
	if (!urom_printable(&st->ucx_net_devices, SDP_UROM_STATS_STR_MAX))
		return "sw_stats.ucx_net_devices";
	if (!urom_printable(&st->ucx_resources, SDP_UROM_STATS_STR_MAX))
		return "sw_stats.ucx_resources";
	return NULL;
}

/* The body of msg; returns 0 for an unknown type. */
static int urom_body_write(struct sdp_wr *w, const struct sdp_urom_msg *msg)
{
	const typeof(msg->u) *u = &msg->u;
	uint32_t i;
	size_t nlen;

	switch (msg->hdr.type) {
	case SDP_UROM_MSG_HELLO:
		wr_u16(w, u->hello.min_version);
		wr_u16(w, u->hello.max_version);
		wr_raw(w, u->hello.nonce, SDP_UROM_NONCE_LEN);
		wr_u32(w, u->hello.pid);
		wr_u32(w, u->hello.uid);
		wr_bytes(w, &u->hello.hostname, "hello.hostname");
		wr_u64(w, u->hello.max_msg_size);
		wr_u32(w, u->hello.max_workers);
		break;
	case SDP_UROM_MSG_CHALLENGE:
		wr_raw(w, u->challenge.nonce, SDP_UROM_NONCE_LEN);
		wr_raw(w, u->challenge.mac, SDP_UROM_MAC_LEN);
		break;
	case SDP_UROM_MSG_AUTH:
		wr_raw(w, u->auth.mac, SDP_UROM_MAC_LEN);
		break;
	case SDP_UROM_MSG_WELCOME:
		wr_u64(w, u->welcome.max_msg_size);
		wr_cpuset(w, u->welcome.cpuset);
		wr_bytes(w, &u->welcome.service_version, "welcome.service_version");
		if (u->welcome.num_plugins > SDP_UROM_MAX_PLUGINS) {
			wr_invalid(w, "welcome.num_plugins");
			break;
		}
		wr_u32(w, u->welcome.num_plugins);
		for (i = 0; i < u->welcome.num_plugins; i++) {
			const struct sdp_urom_plugin_desc *p = &u->welcome.plugins[i];

			nlen = strnlen(p->name, SDP_UROM_NAME_MAX);
			if (nlen == SDP_UROM_NAME_MAX) {
				wr_invalid(w, "welcome.plugins[].name");
				break;
			}
			wr_u64(w, p->id);
			wr_u64(w, p->version);
			wr_u32(w, (uint32_t)nlen);
			wr_raw(w, p->name, nlen);
		}
		break;
	case SDP_UROM_MSG_REJECT:
		wr_status(w, u->reject.status, "reject.status");
		wr_bytes(w, &u->reject.reason, "reject.reason");
		break;
	case SDP_UROM_MSG_VERSION_REJECT:
		wr_u16(w, u->version_reject.version);
		wr_bytes(w, &u->version_reject.software, "version_reject.software");
		break;
	case SDP_UROM_MSG_SPAWN:
		wr_u64(w, u->spawn.worker_id);
		wr_u32(w, u->spawn.gid);
		wr_u64(w, u->spawn.plugins);
		wr_u32(w, u->spawn.has_cpuset);
		wr_cpuset(w, u->spawn.cpuset);
		if (u->spawn.num_env > SDP_UROM_MAX_ENV) {
			wr_invalid(w, "spawn.num_env");
			break;
		}
		wr_u32(w, u->spawn.num_env);
		for (i = 0; i < u->spawn.num_env; i++)
			wr_bytes(w, &u->spawn.env[i], "spawn.env[]");
		break;
	case SDP_UROM_MSG_SPAWN_REPLY:
		wr_status(w, u->spawn_reply.status, "spawn_reply.status");
		wr_bytes(w, &u->spawn_reply.reason, "spawn_reply.reason");
		wr_u64(w, u->spawn_reply.worker_id);
		wr_u64(w, u->spawn_reply.dest_id);
		wr_u32(w, u->spawn_reply.pid);
		wr_raw(w, u->spawn_reply.token, SDP_UROM_TOKEN_LEN);
		wr_bytes(w, &u->spawn_reply.worker_addr, "spawn_reply.worker_addr");
		break;
	case SDP_UROM_MSG_RELEASE:
		wr_u64(w, u->release.worker_id);
		wr_u64(w, u->release.dest_id);
		break;
	case SDP_UROM_MSG_RELEASE_REPLY:
		wr_status(w, u->release_reply.status, "release_reply.status");
		break;
	case SDP_UROM_MSG_GID_QUERY:
		wr_u32(w, u->gid_query.gid);
		break;
	case SDP_UROM_MSG_GID_REPLY:
		if (u->gid_reply.count > SDP_UROM_MAX_WORKERS_REPLY ||
		    (u->gid_reply.count > 0 && u->gid_reply.ids == NULL)) {
			wr_invalid(w, "gid_reply.count/ids");
			break;
		}
		wr_status(w, u->gid_reply.status, "gid_reply.status");
		wr_u32(w, u->gid_reply.count);
		wr_raw(w, u->gid_reply.ids, (size_t)u->gid_reply.count * 8);
		break;
	case SDP_UROM_MSG_STATUS_QUERY:
		wr_u32(w, u->status_query.flags);
		break;
	case SDP_UROM_MSG_STATUS_REPLY:
		wr_bytes(w, &u->status_reply.json, "status_reply.json");
		break;
	case SDP_UROM_MSG_WORKER_EXIT:
		wr_u64(w, u->worker_exit.worker_id);
		wr_u32(w, (uint32_t)u->worker_exit.exit_status);
		break;
	case SDP_UROM_MSG_W_CONNECT:
		wr_u64(w, u->w_connect.dest_id);
		wr_raw(w, u->w_connect.token, SDP_UROM_TOKEN_LEN);
		break;
	case SDP_UROM_MSG_W_CONNECT_REPLY:
		wr_status(w, u->w_connect_reply.status, "w_connect_reply.status");
		wr_bytes(w, &u->w_connect_reply.reason, "w_connect_reply.reason");
		break;
	case SDP_UROM_MSG_W_CMD:
		wr_u64(w, u->w_cmd.dest_id);
		wr_bytes(w, &u->w_cmd.cmd, "w_cmd.cmd");
		break;
	case SDP_UROM_MSG_W_NOTIF:
		wr_u64(w, u->w_notif.dest_id);
		wr_bytes(w, &u->w_notif.notif, "w_notif.notif");
		break;
	case SDP_UROM_MSG_W_DISCONNECT:
		wr_u64(w, u->w_disconnect.dest_id);
		break;
	case SDP_UROM_MSG_W_DOMAIN_ADDR:
		wr_u64(w, u->w_domain_addr.dest_id);
		break;
	case SDP_UROM_MSG_W_DOMAIN_ADDR_REPLY:
		wr_status(w, u->w_domain_addr_reply.status, "w_domain_addr_reply.status");
		wr_bytes(w, &u->w_domain_addr_reply.record, "w_domain_addr_reply.record");
		break;
	case SDP_UROM_MSG_W_DOMAIN_MEMBER:
		wr_u64(w, u->w_domain_member.dest_id);
		wr_u64(w, u->w_domain_member.domain_key);
		wr_bytes(w, &u->w_domain_member.record, "w_domain_member.record");
		break;
	case SDP_UROM_MSG_W_DOMAIN_COMMIT:
		wr_u64(w, u->w_domain_commit.dest_id);
		wr_u64(w, u->w_domain_commit.domain_key);
		wr_u32(w, u->w_domain_commit.num_members);
		break;
	case SDP_UROM_MSG_W_DOMAIN_CLEAR:
		wr_u64(w, u->w_domain_clear.dest_id);
		wr_u64(w, u->w_domain_clear.domain_key);
		break;
	case SDP_UROM_MSG_W_DOMAIN_REPLY:
		wr_status(w, u->w_domain_reply.status, "w_domain_reply.status");
		wr_bytes(w, &u->w_domain_reply.reason, "w_domain_reply.reason");
		break;
	case SDP_UROM_MSG_SW_READY:
		wr_u32(w, u->sw_ready.pid);
		wr_status(w, u->sw_ready.status, "sw_ready.status");
		wr_bytes(w, &u->sw_ready.worker_addr, "sw_ready.worker_addr");
		break;
	case SDP_UROM_MSG_SW_ADD_HOST:
		wr_u64(w, u->sw_add_host.dest_id);
		wr_raw(w, u->sw_add_host.token, SDP_UROM_TOKEN_LEN);
		break;
	case SDP_UROM_MSG_SW_DEL_HOST:
		wr_u64(w, u->sw_del_host.dest_id);
		break;
	case SDP_UROM_MSG_SW_EXIT:
		break;
	case SDP_UROM_MSG_SW_STATS: {
		const char *bad = urom_stats_bad(msg);

		if (bad != NULL) {
			wr_invalid(w, bad);
			break;
		}
		wr_u64(w, u->sw_stats.uptime_ms);
		wr_u64(w, u->sw_stats.cmds);
		wr_u64(w, u->sw_stats.cmd_bytes);
		wr_u64(w, u->sw_stats.cmds_refused);
		wr_u64(w, u->sw_stats.notifs);
		wr_u64(w, u->sw_stats.notif_bytes);
		wr_u64(w, u->sw_stats.notifs_error);
		wr_u64(w, u->sw_stats.notifs_dropped);
		wr_u64(w, u->sw_stats.connects_refused);
		wr_u64(w, u->sw_stats.domains_committed);
		wr_u32(w, u->sw_stats.hosts_connected);
		wr_u32(w, u->sw_stats.hosts_total);
		wr_bytes(w, &u->sw_stats.ucx_version, "sw_stats.ucx_version");
		wr_bytes(w, &u->sw_stats.ucx_tls, "sw_stats.ucx_tls");
		wr_bytes(w, &u->sw_stats.ucx_net_devices, "sw_stats.ucx_net_devices");
		wr_bytes(w, &u->sw_stats.ucx_resources, "sw_stats.ucx_resources");
		break;
	}
	default:
		return 0;
	}
	return 1;
}

/* Encode header + body; returns DOCA_SUCCESS with w->pos = size needed (fits or not). */
static doca_error_t urom_encode(struct sdp_wr *w, const struct sdp_urom_msg *msg)
{
	size_t body_len;
	struct sdp_wr sizing = {.buf = NULL, .cap = 0, .pos = 0, .bad = NULL};
	const struct sdp_urom_bytes *b =
		msg->hdr.type == SDP_UROM_MSG_W_CMD   ? &msg->u.w_cmd.cmd :
		msg->hdr.type == SDP_UROM_MSG_W_NOTIF ? &msg->u.w_notif.notif :
							NULL;

	if (b != NULL && (b->len == 0 || b->data != NULL)) {
		/* A command or a notification, once per task: sized without a sizing pass. */
		sizing.pos = 8 + 4 + (size_t)b->len;
	} else if (!urom_body_write(&sizing, msg)) {
		sdp_error("cannot pack a message of unknown type %u", msg->hdr.type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (sizing.bad != NULL) {
		sdp_error("cannot pack %s: field %s is out of range",
			  sdp_urom_msg_type_name(msg->hdr.type), sizing.bad);
		return DOCA_ERROR_INVALID_VALUE;
	}
	body_len = sizing.pos;
	if (body_len > UINT32_MAX - SDP_UROM_HDR_LEN) {
		sdp_error("cannot pack %s: body of %zu bytes is too long",
			  sdp_urom_msg_type_name(msg->hdr.type), body_len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	wr_u32(w, SDP_UROM_MAGIC);
	wr_u16(w, SDP_UROM_PROTO_VERSION);
	wr_u16(w, msg->hdr.type);
	wr_u64(w, msg->hdr.req_id);
	wr_u32(w, (uint32_t)body_len);
	if (w->pos + body_len > w->cap) {
		/* Does not fit: only the size is wanted. */
		w->pos += body_len;
		return DOCA_SUCCESS;
	}
	urom_body_write(w, msg);
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_msg_pack(const struct sdp_urom_msg *msg, void *buf, size_t cap, size_t *len_p)
{
	struct sdp_wr w = {.buf = buf, .cap = buf != NULL ? cap : 0, .pos = 0, .bad = NULL};
	doca_error_t status;

	if (msg == NULL || len_p == NULL || (buf == NULL && cap > 0)) {
		sdp_error("invalid argument: msg %p, buf %p, cap %zu, len_p %p", (const void *)msg,
			  buf, cap, (void *)len_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = urom_encode(&w, msg);
	if (status != DOCA_SUCCESS)
		return status;
	if (w.pos > w.cap) {
		sdp_debug("%s needs %zu bytes, buffer has %zu",
			  sdp_urom_msg_type_name(msg->hdr.type), w.pos, w.cap);
		*len_p = w.pos;
		return DOCA_ERROR_TOO_BIG;
	}
	*len_p = w.pos;
	return DOCA_SUCCESS;
}

size_t sdp_urom_msg_packed_size(const struct sdp_urom_msg *msg)
{
	struct sdp_wr w = {.buf = NULL, .cap = 0, .pos = 0, .bad = NULL};

	if (msg == NULL || urom_encode(&w, msg) != DOCA_SUCCESS)
		return 0;
	return w.pos;
}

/* ---- decoding ---- */

struct sdp_rd {
	const uint8_t *p;
	size_t left;
	const char *bad; /* first field that did not fit or was out of range */
};

static const uint8_t *rd_raw(struct sdp_rd *r, size_t n, const char *field)
{
	const uint8_t *p;

	if (r->bad != NULL)
		return NULL;
	if (n > r->left) {
		r->bad = field;
		return NULL;
	}
	p = r->p;
	r->p += n;
	r->left -= n;
	return p;
}

static uint64_t rd_le(struct sdp_rd *r, size_t n, const char *field)
{
	const uint8_t *p = rd_raw(r, n, field);
	uint64_t v = 0;
	size_t i;

	if (p == NULL)
		return 0;
	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* The u32 at offset off of what is left, without consuming it (the caller checked the bounds). */
static uint32_t urom_peek_u32(const struct sdp_rd *r, size_t off)
{
	struct sdp_rd peek = {.p = r->p + off, .left = r->left - off, .bad = NULL};

	return (uint32_t)rd_le(&peek, 4, "peek");
}

static uint16_t rd_u16(struct sdp_rd *r, const char *field)
{
	return (uint16_t)rd_le(r, 2, field);
}

static uint32_t rd_u32(struct sdp_rd *r, const char *field)
{
	return (uint32_t)rd_le(r, 4, field);
}

/*
 * A status field: bytes from a peer never give a caller a value outside doca_error_t, so a
 * larger one makes the message malformed.
 */
static uint32_t rd_status(struct sdp_rd *r, const char *field)
{
	uint32_t v = rd_u32(r, field);

	if (v > DOCA_ERROR_DEVICE_FATAL_ERROR && r->bad == NULL)
		r->bad = field;
	return v;
}

static uint64_t rd_u64(struct sdp_rd *r, const char *field)
{
	return rd_le(r, 8, field);
}

static void rd_copy(struct sdp_rd *r, void *dst, size_t n, const char *field)
{
	const uint8_t *p = rd_raw(r, n, field);

	if (p != NULL)
		memcpy(dst, p, n);
}

static void rd_bytes(struct sdp_rd *r, struct sdp_urom_bytes *b, const char *field)
{
	uint32_t len = rd_u32(r, field);
	const uint8_t *p = rd_raw(r, len, field);

	b->data = p;
	b->len = p != NULL ? len : 0;
}

static void rd_cpuset(struct sdp_rd *r, uint64_t *words, const char *field)
{
	int i;

	for (i = 0; i < SDP_UROM_CPUSET_WORDS; i++)
		words[i] = rd_u64(r, field);
}

static void rd_invalid(struct sdp_rd *r, const char *field)
{
	if (r->bad == NULL)
		r->bad = field;
}

/* Decode the body into msg->u; returns 0 for an unknown type. Failures land in r->bad. */
static int urom_body_read(struct sdp_rd *r, struct sdp_urom_msg *msg)
{
	typeof(msg->u) *u = &msg->u;
	uint32_t i, n;

	switch (msg->hdr.type) {
	case SDP_UROM_MSG_HELLO:
		u->hello.min_version = rd_u16(r, "hello.min_version");
		u->hello.max_version = rd_u16(r, "hello.max_version");
		rd_copy(r, u->hello.nonce, SDP_UROM_NONCE_LEN, "hello.nonce");
		u->hello.pid = rd_u32(r, "hello.pid");
		u->hello.uid = rd_u32(r, "hello.uid");
		rd_bytes(r, &u->hello.hostname, "hello.hostname");
		u->hello.max_msg_size = rd_u64(r, "hello.max_msg_size");
		u->hello.max_workers = rd_u32(r, "hello.max_workers");
		break;
	case SDP_UROM_MSG_CHALLENGE:
		rd_copy(r, u->challenge.nonce, SDP_UROM_NONCE_LEN, "challenge.nonce");
		rd_copy(r, u->challenge.mac, SDP_UROM_MAC_LEN, "challenge.mac");
		break;
	case SDP_UROM_MSG_AUTH:
		rd_copy(r, u->auth.mac, SDP_UROM_MAC_LEN, "auth.mac");
		break;
	case SDP_UROM_MSG_WELCOME:
		u->welcome.max_msg_size = rd_u64(r, "welcome.max_msg_size");
		rd_cpuset(r, u->welcome.cpuset, "welcome.cpuset");
		rd_bytes(r, &u->welcome.service_version, "welcome.service_version");
		n = rd_u32(r, "welcome.num_plugins");
		if (n > SDP_UROM_MAX_PLUGINS) {
			rd_invalid(r, "welcome.num_plugins (too many)");
			break;
		}
		u->welcome.num_plugins = n;
		for (i = 0; i < n && r->bad == NULL; i++) {
			struct sdp_urom_plugin_desc *p = &u->welcome.plugins[i];
			const uint8_t *name;
			uint32_t nlen;

			p->id = rd_u64(r, "welcome.plugins[].id");
			p->version = rd_u64(r, "welcome.plugins[].version");
			nlen = rd_u32(r, "welcome.plugins[].name");
			if (nlen >= SDP_UROM_NAME_MAX) {
				rd_invalid(r, "welcome.plugins[].name (too long)");
				break;
			}
			name = rd_raw(r, nlen, "welcome.plugins[].name");
			if (name == NULL)
				break;
			if (memchr(name, '\0', nlen) != NULL) {
				rd_invalid(r, "welcome.plugins[].name (embedded NUL)");
				break;
			}
			memcpy(p->name, name, nlen);
			p->name[nlen] = '\0';
		}
		break;
	case SDP_UROM_MSG_REJECT:
		u->reject.status = rd_status(r, "reject.status");
		rd_bytes(r, &u->reject.reason, "reject.reason");
		break;
	case SDP_UROM_MSG_VERSION_REJECT:
		u->version_reject.version = rd_u16(r, "version_reject.version");
		rd_bytes(r, &u->version_reject.software, "version_reject.software");
		break;
	case SDP_UROM_MSG_SPAWN:
		u->spawn.worker_id = rd_u64(r, "spawn.worker_id");
		u->spawn.gid = rd_u32(r, "spawn.gid");
		u->spawn.plugins = rd_u64(r, "spawn.plugins");
		u->spawn.has_cpuset = rd_u32(r, "spawn.has_cpuset");
		rd_cpuset(r, u->spawn.cpuset, "spawn.cpuset");
		n = rd_u32(r, "spawn.num_env");
		if (n > SDP_UROM_MAX_ENV) {
			rd_invalid(r, "spawn.num_env (too many)");
			break;
		}
		u->spawn.num_env = n;
		for (i = 0; i < n; i++)
			rd_bytes(r, &u->spawn.env[i], "spawn.env[]");
		break;
	case SDP_UROM_MSG_SPAWN_REPLY:
		u->spawn_reply.status = rd_status(r, "spawn_reply.status");
		rd_bytes(r, &u->spawn_reply.reason, "spawn_reply.reason");
		u->spawn_reply.worker_id = rd_u64(r, "spawn_reply.worker_id");
		u->spawn_reply.dest_id = rd_u64(r, "spawn_reply.dest_id");
		u->spawn_reply.pid = rd_u32(r, "spawn_reply.pid");
		rd_copy(r, u->spawn_reply.token, SDP_UROM_TOKEN_LEN, "spawn_reply.token");
		rd_bytes(r, &u->spawn_reply.worker_addr, "spawn_reply.worker_addr");
		break;
	case SDP_UROM_MSG_RELEASE:
		u->release.worker_id = rd_u64(r, "release.worker_id");
		u->release.dest_id = rd_u64(r, "release.dest_id");
		break;
	case SDP_UROM_MSG_RELEASE_REPLY:
		u->release_reply.status = rd_status(r, "release_reply.status");
		break;
	case SDP_UROM_MSG_GID_QUERY:
		u->gid_query.gid = rd_u32(r, "gid_query.gid");
		break;
	case SDP_UROM_MSG_GID_REPLY:
		u->gid_reply.status = rd_status(r, "gid_reply.status");
		n = rd_u32(r, "gid_reply.count");
		if (n > SDP_UROM_MAX_WORKERS_REPLY) {
			rd_invalid(r, "gid_reply.count (too many)");
			break;
		}
		u->gid_reply.ids = rd_raw(r, (size_t)n * 8, "gid_reply.ids");
		u->gid_reply.count = u->gid_reply.ids != NULL ? n : 0;
		break;
	case SDP_UROM_MSG_STATUS_QUERY:
		u->status_query.flags = rd_u32(r, "status_query.flags");
		break;
	case SDP_UROM_MSG_STATUS_REPLY:
		rd_bytes(r, &u->status_reply.json, "status_reply.json");
		break;
	case SDP_UROM_MSG_WORKER_EXIT:
		u->worker_exit.worker_id = rd_u64(r, "worker_exit.worker_id");
		u->worker_exit.exit_status = (int32_t)rd_u32(r, "worker_exit.exit_status");
		break;
	case SDP_UROM_MSG_W_CONNECT:
		u->w_connect.dest_id = rd_u64(r, "w_connect.dest_id");
		rd_copy(r, u->w_connect.token, SDP_UROM_TOKEN_LEN, "w_connect.token");
		break;
	case SDP_UROM_MSG_W_CONNECT_REPLY:
		u->w_connect_reply.status = rd_status(r, "w_connect_reply.status");
		rd_bytes(r, &u->w_connect_reply.reason, "w_connect_reply.reason");
		break;
	case SDP_UROM_MSG_W_CMD:
		u->w_cmd.dest_id = rd_u64(r, "w_cmd.dest_id");
		rd_bytes(r, &u->w_cmd.cmd, "w_cmd.cmd");
		break;
	case SDP_UROM_MSG_W_NOTIF:
		u->w_notif.dest_id = rd_u64(r, "w_notif.dest_id");
		rd_bytes(r, &u->w_notif.notif, "w_notif.notif");
		break;
	case SDP_UROM_MSG_W_DISCONNECT:
		u->w_disconnect.dest_id = rd_u64(r, "w_disconnect.dest_id");
		break;
	case SDP_UROM_MSG_W_DOMAIN_ADDR:
		u->w_domain_addr.dest_id = rd_u64(r, "w_domain_addr.dest_id");
		break;
	case SDP_UROM_MSG_W_DOMAIN_ADDR_REPLY:
		u->w_domain_addr_reply.status = rd_status(r, "w_domain_addr_reply.status");
		rd_bytes(r, &u->w_domain_addr_reply.record, "w_domain_addr_reply.record");
		break;
	case SDP_UROM_MSG_W_DOMAIN_MEMBER:
		u->w_domain_member.dest_id = rd_u64(r, "w_domain_member.dest_id");
		u->w_domain_member.domain_key = rd_u64(r, "w_domain_member.domain_key");
		rd_bytes(r, &u->w_domain_member.record, "w_domain_member.record");
		break;
	case SDP_UROM_MSG_W_DOMAIN_COMMIT:
		u->w_domain_commit.dest_id = rd_u64(r, "w_domain_commit.dest_id");
		u->w_domain_commit.domain_key = rd_u64(r, "w_domain_commit.domain_key");
		u->w_domain_commit.num_members = rd_u32(r, "w_domain_commit.num_members");
		break;
	case SDP_UROM_MSG_W_DOMAIN_CLEAR:
		u->w_domain_clear.dest_id = rd_u64(r, "w_domain_clear.dest_id");
		u->w_domain_clear.domain_key = rd_u64(r, "w_domain_clear.domain_key");
		break;
	case SDP_UROM_MSG_W_DOMAIN_REPLY:
		u->w_domain_reply.status = rd_status(r, "w_domain_reply.status");
		rd_bytes(r, &u->w_domain_reply.reason, "w_domain_reply.reason");
		break;
	case SDP_UROM_MSG_SW_READY:
		u->sw_ready.pid = rd_u32(r, "sw_ready.pid");
		u->sw_ready.status = rd_status(r, "sw_ready.status");
		rd_bytes(r, &u->sw_ready.worker_addr, "sw_ready.worker_addr");
		break;
	case SDP_UROM_MSG_SW_ADD_HOST:
		u->sw_add_host.dest_id = rd_u64(r, "sw_add_host.dest_id");
		rd_copy(r, u->sw_add_host.token, SDP_UROM_TOKEN_LEN, "sw_add_host.token");
		break;
	case SDP_UROM_MSG_SW_DEL_HOST:
		u->sw_del_host.dest_id = rd_u64(r, "sw_del_host.dest_id");
		break;
	case SDP_UROM_MSG_SW_EXIT:
		break;
	case SDP_UROM_MSG_SW_STATS: {
		const char *bad;

		u->sw_stats.uptime_ms = rd_u64(r, "sw_stats.uptime_ms");
		u->sw_stats.cmds = rd_u64(r, "sw_stats.cmds");
		u->sw_stats.cmd_bytes = rd_u64(r, "sw_stats.cmd_bytes");
		u->sw_stats.cmds_refused = rd_u64(r, "sw_stats.cmds_refused");
		u->sw_stats.notifs = rd_u64(r, "sw_stats.notifs");
		u->sw_stats.notif_bytes = rd_u64(r, "sw_stats.notif_bytes");
		u->sw_stats.notifs_error = rd_u64(r, "sw_stats.notifs_error");
		u->sw_stats.notifs_dropped = rd_u64(r, "sw_stats.notifs_dropped");
		u->sw_stats.connects_refused = rd_u64(r, "sw_stats.connects_refused");
		u->sw_stats.domains_committed = rd_u64(r, "sw_stats.domains_committed");
		u->sw_stats.hosts_connected = rd_u32(r, "sw_stats.hosts_connected");
		u->sw_stats.hosts_total = rd_u32(r, "sw_stats.hosts_total");
		rd_bytes(r, &u->sw_stats.ucx_version, "sw_stats.ucx_version");
		rd_bytes(r, &u->sw_stats.ucx_tls, "sw_stats.ucx_tls");
		rd_bytes(r, &u->sw_stats.ucx_net_devices, "sw_stats.ucx_net_devices");
		rd_bytes(r, &u->sw_stats.ucx_resources, "sw_stats.ucx_resources");
		bad = r->bad == NULL ? urom_stats_bad(msg) : NULL;
		if (bad != NULL)
			rd_invalid(r, bad);
		break;
	}
	default:
		return 0;
	}
	return 1;
}

#define SDP_UROM_MEMBER_SIZE(m) sizeof(((struct sdp_urom_msg *)0)->u.m)

/*
 * Bytes of the union member a type uses. The union is several kilobytes (welcome, spawn), so
 * unpack clears and copies only this much: a command or notification costs tens of bytes, not
 * kilobytes, twice, on every hop.
 */
static size_t urom_body_size(uint16_t type)
{
	switch (type) {
	case SDP_UROM_MSG_HELLO:
		return SDP_UROM_MEMBER_SIZE(hello);
	case SDP_UROM_MSG_CHALLENGE:
		return SDP_UROM_MEMBER_SIZE(challenge);
	case SDP_UROM_MSG_AUTH:
		return SDP_UROM_MEMBER_SIZE(auth);
	case SDP_UROM_MSG_WELCOME:
		return SDP_UROM_MEMBER_SIZE(welcome);
	case SDP_UROM_MSG_REJECT:
		return SDP_UROM_MEMBER_SIZE(reject);
	case SDP_UROM_MSG_VERSION_REJECT:
		return SDP_UROM_MEMBER_SIZE(version_reject);
	case SDP_UROM_MSG_SPAWN:
		return SDP_UROM_MEMBER_SIZE(spawn);
	case SDP_UROM_MSG_SPAWN_REPLY:
		return SDP_UROM_MEMBER_SIZE(spawn_reply);
	case SDP_UROM_MSG_RELEASE:
		return SDP_UROM_MEMBER_SIZE(release);
	case SDP_UROM_MSG_RELEASE_REPLY:
		return SDP_UROM_MEMBER_SIZE(release_reply);
	case SDP_UROM_MSG_GID_QUERY:
		return SDP_UROM_MEMBER_SIZE(gid_query);
	case SDP_UROM_MSG_GID_REPLY:
		return SDP_UROM_MEMBER_SIZE(gid_reply);
	case SDP_UROM_MSG_STATUS_QUERY:
		return SDP_UROM_MEMBER_SIZE(status_query);
	case SDP_UROM_MSG_STATUS_REPLY:
		return SDP_UROM_MEMBER_SIZE(status_reply);
	case SDP_UROM_MSG_WORKER_EXIT:
		return SDP_UROM_MEMBER_SIZE(worker_exit);
	case SDP_UROM_MSG_W_CONNECT:
		return SDP_UROM_MEMBER_SIZE(w_connect);
	case SDP_UROM_MSG_W_CONNECT_REPLY:
		return SDP_UROM_MEMBER_SIZE(w_connect_reply);
	case SDP_UROM_MSG_W_CMD:
		return SDP_UROM_MEMBER_SIZE(w_cmd);
	case SDP_UROM_MSG_W_NOTIF:
		return SDP_UROM_MEMBER_SIZE(w_notif);
	case SDP_UROM_MSG_W_DISCONNECT:
		return SDP_UROM_MEMBER_SIZE(w_disconnect);
	case SDP_UROM_MSG_W_DOMAIN_ADDR:
		return SDP_UROM_MEMBER_SIZE(w_domain_addr);
	case SDP_UROM_MSG_W_DOMAIN_ADDR_REPLY:
		return SDP_UROM_MEMBER_SIZE(w_domain_addr_reply);
	case SDP_UROM_MSG_W_DOMAIN_MEMBER:
		return SDP_UROM_MEMBER_SIZE(w_domain_member);
	case SDP_UROM_MSG_W_DOMAIN_COMMIT:
		return SDP_UROM_MEMBER_SIZE(w_domain_commit);
	case SDP_UROM_MSG_W_DOMAIN_CLEAR:
		return SDP_UROM_MEMBER_SIZE(w_domain_clear);
	case SDP_UROM_MSG_W_DOMAIN_REPLY:
		return SDP_UROM_MEMBER_SIZE(w_domain_reply);
	case SDP_UROM_MSG_SW_READY:
		return SDP_UROM_MEMBER_SIZE(sw_ready);
	case SDP_UROM_MSG_SW_ADD_HOST:
		return SDP_UROM_MEMBER_SIZE(sw_add_host);
	case SDP_UROM_MSG_SW_DEL_HOST:
		return SDP_UROM_MEMBER_SIZE(sw_del_host);
	case SDP_UROM_MSG_SW_STATS:
		return SDP_UROM_MEMBER_SIZE(sw_stats);
	default:
		return sizeof(((struct sdp_urom_msg *)0)->u);
	}
}

doca_error_t sdp_urom_msg_next(const void *buf, size_t len, size_t *msg_len, char *why,
			       size_t why_size)
{
	struct sdp_rd r = {.p = buf, .left = len, .bad = NULL};
	uint32_t magic, body_len;

	if (buf == NULL || msg_len == NULL) {
		sdp_error("invalid argument: buf %p, msg_len %p", buf, (void *)msg_len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (len < SDP_UROM_HDR_LEN) {
		sdp_wire_why(why, why_size, "%zu bytes left, fewer than the %d-byte header", len,
			     SDP_UROM_HDR_LEN);
		return DOCA_ERROR_INVALID_VALUE;
	}
	magic = rd_u32(&r, "magic");
	(void)rd_u16(&r, "version");
	(void)rd_u16(&r, "type");
	(void)rd_u64(&r, "req_id");
	body_len = rd_u32(&r, "body_len");
	if (magic != SDP_UROM_MAGIC) {
		sdp_wire_why(why, why_size, "message has bad magic 0x%08x (expected 0x%08x)", magic,
			     SDP_UROM_MAGIC);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (body_len > r.left) {
		sdp_wire_why(why, why_size,
			     "header announces a %u-byte body, only %zu bytes follow", body_len,
			     r.left);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*msg_len = SDP_UROM_HDR_LEN + (size_t)body_len;
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_msg_unpack_why(const void *buf, size_t len, struct sdp_urom_msg *msg,
				     char *why, size_t why_size)
{
	struct sdp_rd r = {.p = buf, .left = len, .bad = NULL};
	struct sdp_urom_msg out;
	size_t body_size;

	if (buf == NULL || msg == NULL) {
		sdp_error("invalid argument: buf %p, msg %p", buf, (void *)msg);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (len < SDP_UROM_HDR_LEN) {
		sdp_wire_why(why, why_size,
			     "message of %zu bytes is shorter than the %d-byte header", len,
			     SDP_UROM_HDR_LEN);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memset(&out.hdr, 0, sizeof(out.hdr));
	out.hdr.magic = rd_u32(&r, "magic");
	out.hdr.version = rd_u16(&r, "version");
	out.hdr.type = rd_u16(&r, "type");
	out.hdr.req_id = rd_u64(&r, "req_id");
	out.hdr.body_len = rd_u32(&r, "body_len");
	if (out.hdr.magic != SDP_UROM_MAGIC) {
		sdp_wire_why(why, why_size, "message has bad magic 0x%08x (expected 0x%08x)",
			     out.hdr.magic, SDP_UROM_MAGIC);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (out.hdr.version != SDP_UROM_PROTO_VERSION) {
		/*
		 * Another protocol version: the body layout is unknown, except VERSION_REJECT whose
		 * layout every version keeps. Not logged: the caller logs both versions with its
		 * peer's name.
		 */
		memset(&out.u, 0, sizeof(out.u));
		if (out.hdr.type == SDP_UROM_MSG_VERSION_REJECT && out.hdr.body_len == r.left) {
			struct sdp_rd body = r;

			urom_body_read(&body, &out);
			if (body.bad != NULL || body.left != 0)
				memset(&out.u, 0, sizeof(out.u));
		}
		*msg = out;
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (out.hdr.body_len != r.left) {
		sdp_wire_why(why, why_size,
			     "%s message: header announces a %u-byte body, %zu bytes follow",
			     sdp_urom_msg_type_name(out.hdr.type), out.hdr.body_len, r.left);
		return DOCA_ERROR_INVALID_VALUE;
	}
	body_size = urom_body_size(out.hdr.type);
	memset(&out.u, 0, body_size);
	if ((out.hdr.type == SDP_UROM_MSG_W_CMD || out.hdr.type == SDP_UROM_MSG_W_NOTIF) &&
	    r.left >= 12 && urom_peek_u32(&r, 8) == r.left - 12) {
		/* A command or a notification, once per task: both fields read in one step. */
		uint64_t dest_id = rd_u64(&r, "dest_id");
		struct sdp_urom_bytes b = {.data = r.p + 4, .len = (uint32_t)(r.left - 4)};

		if (out.hdr.type == SDP_UROM_MSG_W_CMD) {
			out.u.w_cmd.dest_id = dest_id;
			out.u.w_cmd.cmd = b;
		} else {
			out.u.w_notif.dest_id = dest_id;
			out.u.w_notif.notif = b;
		}
		memcpy(msg, &out, offsetof(struct sdp_urom_msg, u) + body_size);
		return DOCA_SUCCESS;
	}
	if (!urom_body_read(&r, &out)) {
		sdp_wire_why(why, why_size, "message of unknown type %u", out.hdr.type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (r.bad != NULL) {
		sdp_wire_why(why, why_size, "malformed %s message of %zu bytes: field %s",
			     sdp_urom_msg_type_name(out.hdr.type), len, r.bad);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (r.left != 0) {
		sdp_wire_why(why, why_size, "malformed %s message: %zu trailing bytes",
			     sdp_urom_msg_type_name(out.hdr.type), r.left);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(msg, &out, offsetof(struct sdp_urom_msg, u) + body_size);
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_msg_unpack(const void *buf, size_t len, struct sdp_urom_msg *msg)
{
	return sdp_urom_msg_unpack_why(buf, len, msg, NULL, 0);
}

uint64_t sdp_urom_gid_reply_id(const struct sdp_urom_msg *msg, uint32_t i)
{
	const uint8_t *p;
	uint64_t v = 0;
	int b;

	if (msg == NULL || msg->hdr.type != SDP_UROM_MSG_GID_REPLY || i >= msg->u.gid_reply.count ||
	    msg->u.gid_reply.ids == NULL)
		return 0;
	p = msg->u.gid_reply.ids + (size_t)i * 8;
	for (b = 0; b < 8; b++)
		v |= (uint64_t)p[b] << (8 * b);
	return v;
}

const char *sdp_urom_msg_type_name(uint16_t type)
{
	switch (type) {
	case SDP_UROM_MSG_HELLO:
		return "HELLO";
	case SDP_UROM_MSG_CHALLENGE:
		return "CHALLENGE";
	case SDP_UROM_MSG_AUTH:
		return "AUTH";
	case SDP_UROM_MSG_WELCOME:
		return "WELCOME";
	case SDP_UROM_MSG_REJECT:
		return "REJECT";
	case SDP_UROM_MSG_VERSION_REJECT:
		return "VERSION_REJECT";
	case SDP_UROM_MSG_SPAWN:
		return "SPAWN";
	case SDP_UROM_MSG_SPAWN_REPLY:
		return "SPAWN_REPLY";
	case SDP_UROM_MSG_RELEASE:
		return "RELEASE";
	case SDP_UROM_MSG_RELEASE_REPLY:
		return "RELEASE_REPLY";
	case SDP_UROM_MSG_GID_QUERY:
		return "GID_QUERY";
	case SDP_UROM_MSG_GID_REPLY:
		return "GID_REPLY";
	case SDP_UROM_MSG_STATUS_QUERY:
		return "STATUS_QUERY";
	case SDP_UROM_MSG_STATUS_REPLY:
		return "STATUS_REPLY";
	case SDP_UROM_MSG_WORKER_EXIT:
		return "WORKER_EXIT";
	case SDP_UROM_MSG_W_CONNECT:
		return "W_CONNECT";
	case SDP_UROM_MSG_W_CONNECT_REPLY:
		return "W_CONNECT_REPLY";
	case SDP_UROM_MSG_W_CMD:
		return "W_CMD";
	case SDP_UROM_MSG_W_NOTIF:
		return "W_NOTIF";
	case SDP_UROM_MSG_W_DISCONNECT:
		return "W_DISCONNECT";
	case SDP_UROM_MSG_W_DOMAIN_ADDR:
		return "W_DOMAIN_ADDR";
	case SDP_UROM_MSG_W_DOMAIN_ADDR_REPLY:
		return "W_DOMAIN_ADDR_REPLY";
	case SDP_UROM_MSG_W_DOMAIN_MEMBER:
		return "W_DOMAIN_MEMBER";
	case SDP_UROM_MSG_W_DOMAIN_COMMIT:
		return "W_DOMAIN_COMMIT";
	case SDP_UROM_MSG_W_DOMAIN_CLEAR:
		return "W_DOMAIN_CLEAR";
	case SDP_UROM_MSG_W_DOMAIN_REPLY:
		return "W_DOMAIN_REPLY";
	case SDP_UROM_MSG_SW_READY:
		return "SW_READY";
	case SDP_UROM_MSG_SW_ADD_HOST:
		return "SW_ADD_HOST";
	case SDP_UROM_MSG_SW_DEL_HOST:
		return "SW_DEL_HOST";
	case SDP_UROM_MSG_SW_EXIT:
		return "SW_EXIT";
	case SDP_UROM_MSG_SW_STATS:
		return "SW_STATS";
	default:
		return "UNKNOWN";
	}
}

/* ---- domain records ---- */

static int dom_blob_ok(const struct sdp_urom_bytes *b, int may_be_empty)
{
	if (b->len > SDP_UROM_DOM_MAX_BLOB || (b->len > 0 && b->data == NULL))
		return 0;
	return may_be_empty || b->len > 0;
}

static void dom_member_write(struct sdp_wr *w, const struct sdp_urom_dom_member *m,
			     const struct sdp_urom_dom_seg *segs)
{
	uint32_t i, j;

	if (m->num_addrs > SDP_UROM_MAX_PLUGINS) {
		wr_invalid(w, "num_addrs");
		return;
	}
	if (m->num_segs > SDP_UROM_DOM_MAX_SEGS || (m->num_segs > 0 && segs == NULL)) {
		wr_invalid(w, "num_segs");
		return;
	}
	wr_u32(w, SDP_UROM_DOM_MAGIC);
	wr_u16(w, SDP_UROM_DOM_VERSION);
	wr_u16(w, 0);
	wr_u64(w, m->id);
	wr_u32(w, m->num_addrs);
	for (i = 0; i < m->num_addrs; i++) {
		const struct sdp_urom_dom_addr *a = &m->addrs[i];
		size_t nlen = strnlen(a->name, SDP_UROM_NAME_MAX);

		if (nlen == 0 || nlen == SDP_UROM_NAME_MAX || !dom_blob_ok(&a->addr, 0)) {
			wr_invalid(w, "addrs[]");
			return;
		}
		for (j = 0; j < i; j++)
			if (strcmp(m->addrs[j].name, a->name) == 0) {
				wr_invalid(w, "addrs[].name (duplicate)");
				return;
			}
		wr_u32(w, (uint32_t)nlen);
		wr_raw(w, a->name, nlen);
		wr_bytes(w, &a->addr, "addrs[].addr");
	}
	wr_u32(w, m->num_segs);
	for (i = 0; i < m->num_segs; i++) {
		const struct sdp_urom_dom_seg *g = &segs[i];

		if (g->len == 0 || g->va + g->len < g->va || !dom_blob_ok(&g->memh, 1) ||
		    !dom_blob_ok(&g->mkey, 1)) {
			wr_invalid(w, "segs[]");
			return;
		}
		wr_u64(w, g->va);
		wr_u64(w, g->len);
		wr_bytes(w, &g->memh, "segs[].memh");
		wr_bytes(w, &g->mkey, "segs[].mkey");
	}
}

static doca_error_t dom_finish(struct sdp_wr *w, const char *what, size_t max, size_t *len_p)
{
	if (w->bad != NULL) {
		sdp_error("cannot pack a domain %s: field %s is out of range", what, w->bad);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (w->pos > max) {
		sdp_error("cannot pack a domain %s of %zu bytes: the limit is %zu", what, w->pos,
			  max);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*len_p = w->pos;
	return w->pos > w->cap ? DOCA_ERROR_TOO_BIG : DOCA_SUCCESS;
}

doca_error_t sdp_urom_dom_member_pack(const struct sdp_urom_dom_member *m,
				      const struct sdp_urom_dom_seg *segs, void *buf, size_t cap,
				      size_t *len_p)
{
	struct sdp_wr w = {.buf = buf, .cap = buf != NULL ? cap : 0, .pos = 0, .bad = NULL};

	if (m == NULL || len_p == NULL) {
		sdp_error("invalid argument: member %p, len_p %p", (const void *)m, (void *)len_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	dom_member_write(&w, m, segs);
	return dom_finish(&w, "member record", SDP_UROM_DOM_MAX_RECORD, len_p);
}

/* One segment at r; 0 (r->bad set) when malformed. */
static int dom_seg_read(struct sdp_rd *r, struct sdp_urom_dom_seg *g)
{
	g->va = rd_u64(r, "segs[].va");
	g->len = rd_u64(r, "segs[].len");
	rd_bytes(r, &g->memh, "segs[].memh");
	rd_bytes(r, &g->mkey, "segs[].mkey");
	if (r->bad != NULL)
		return 0;
	if (g->len == 0 || g->va + g->len < g->va) {
		rd_invalid(r, "segs[].len (empty or wraps)");
		return 0;
	}
	if (g->memh.len > SDP_UROM_DOM_MAX_BLOB || g->mkey.len > SDP_UROM_DOM_MAX_BLOB) {
		rd_invalid(r, "segs[].memh/mkey (too long)");
		return 0;
	}
	return 1;
}

doca_error_t sdp_urom_dom_member_unpack_why(const void *buf, size_t len,
					    struct sdp_urom_dom_member *m, char *why,
					    size_t why_size)
{
	struct sdp_rd r = {.p = buf, .left = len, .bad = NULL};
	struct sdp_urom_dom_member out;
	struct sdp_urom_dom_seg g;
	uint32_t magic, version, flags, i, j;
	const uint8_t *segs_start;

	if (buf == NULL || m == NULL) {
		sdp_wire_why(why, why_size, "no record");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (len > SDP_UROM_DOM_MAX_RECORD) {
		sdp_wire_why(why, why_size, "member record of %zu bytes is over the %u-byte limit",
			     len, SDP_UROM_DOM_MAX_RECORD);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memset(&out, 0, offsetof(struct sdp_urom_dom_member, addrs));
	magic = rd_u32(&r, "magic");
	version = rd_u16(&r, "version");
	flags = rd_u16(&r, "flags");
	if (r.bad == NULL &&
	    (magic != SDP_UROM_DOM_MAGIC || version != SDP_UROM_DOM_VERSION || flags != 0)) {
		sdp_wire_why(why, why_size,
			     "not a version %d member record (magic 0x%08x, version %u, flags %#x)",
			     SDP_UROM_DOM_VERSION, magic, version, flags);
		return DOCA_ERROR_INVALID_VALUE;
	}
	out.id = rd_u64(&r, "id");
	out.num_addrs = rd_u32(&r, "num_addrs");
	if (r.bad == NULL && out.num_addrs > SDP_UROM_MAX_PLUGINS)
		rd_invalid(&r, "num_addrs (too many)");
	for (i = 0; r.bad == NULL && i < out.num_addrs; i++) {
		struct sdp_urom_dom_addr *a = &out.addrs[i];
		uint32_t nlen = rd_u32(&r, "addrs[].name");
		const uint8_t *name;

		if (r.bad == NULL && (nlen == 0 || nlen >= SDP_UROM_NAME_MAX)) {
			rd_invalid(&r, "addrs[].name (empty or too long)");
			break;
		}
		name = rd_raw(&r, nlen, "addrs[].name");
		if (name == NULL)
			break;
		if (memchr(name, '\0', nlen) != NULL) {
			rd_invalid(&r, "addrs[].name (embedded NUL)");
			break;
		}
		memcpy(a->name, name, nlen);
		a->name[nlen] = '\0';
		rd_bytes(&r, &a->addr, "addrs[].addr");
		if (r.bad == NULL && (a->addr.len == 0 || a->addr.len > SDP_UROM_DOM_MAX_BLOB)) {
			rd_invalid(&r, "addrs[].addr (empty or too long)");
			break;
		}
		for (j = 0; r.bad == NULL && j < i; j++)
			if (strcmp(out.addrs[j].name, a->name) == 0)
				rd_invalid(&r, "addrs[].name (duplicate)");
	}
	out.num_segs = rd_u32(&r, "num_segs");
	if (r.bad == NULL && out.num_segs > SDP_UROM_DOM_MAX_SEGS)
		rd_invalid(&r, "num_segs (too many)");
	segs_start = r.p;
	for (i = 0; r.bad == NULL && i < out.num_segs; i++)
		if (!dom_seg_read(&r, &g))
			break;
	if (r.bad != NULL) {
		sdp_wire_why(why, why_size, "malformed member record of %zu bytes: field %s", len,
			     r.bad);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (r.left != 0) {
		sdp_wire_why(why, why_size, "malformed member record: %zu trailing bytes", r.left);
		return DOCA_ERROR_INVALID_VALUE;
	}
	out.segs_raw = segs_start;
	out.segs_len = (size_t)(r.p - segs_start);
	memcpy(m, &out, offsetof(struct sdp_urom_dom_member, addrs));
	memcpy(m->addrs, out.addrs, out.num_addrs * sizeof(out.addrs[0]));
	m->num_segs = out.num_segs;
	m->segs_raw = out.segs_raw;
	m->segs_len = out.segs_len;
	return DOCA_SUCCESS;
}

int sdp_urom_dom_seg_next(const struct sdp_urom_dom_member *m, size_t *pos,
			  struct sdp_urom_dom_seg *seg)
{
	struct sdp_rd r;

	if (m == NULL || pos == NULL || seg == NULL || m->segs_raw == NULL || *pos >= m->segs_len)
		return 0;
	r.p = m->segs_raw + *pos;
	r.left = m->segs_len - *pos;
	r.bad = NULL;
	if (!dom_seg_read(&r, seg))
		return 0;
	*pos = (size_t)(r.p - m->segs_raw);
	return 1;
}

doca_error_t sdp_urom_dom_host_pack(const struct sdp_urom_bytes *members, uint32_t count, void *buf,
				    size_t cap, size_t *len_p)
{
	struct sdp_wr w = {.buf = buf, .cap = buf != NULL ? cap : 0, .pos = 0, .bad = NULL};
	uint32_t i;

	if ((members == NULL && count > 0) || len_p == NULL) {
		sdp_error("invalid argument: members %p, len_p %p", (const void *)members,
			  (void *)len_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (count > SDP_UROM_DOM_MAX_MEMBERS)
		wr_invalid(&w, "count");
	wr_u32(&w, SDP_UROM_DOMH_MAGIC);
	wr_u16(&w, SDP_UROM_DOM_VERSION);
	wr_u16(&w, 0);
	wr_u32(&w, count);
	for (i = 0; i < count && w.bad == NULL; i++) {
		if (members[i].len == 0 || members[i].len > SDP_UROM_DOM_MAX_RECORD)
			wr_invalid(&w, "members[]");
		wr_bytes(&w, &members[i], "members[]");
	}
	return dom_finish(&w, "host record", SDP_UROM_DOM_MAX_HOST, len_p);
}

doca_error_t sdp_urom_dom_host_unpack_why(const void *buf, size_t len, uint32_t *count,
					  const uint8_t **raw, size_t *raw_len, char *why,
					  size_t why_size)
{
	struct sdp_rd r = {.p = buf, .left = len, .bad = NULL};
	struct sdp_urom_bytes b;
	uint32_t magic, version, flags, n, i;
	const uint8_t *start;
	size_t k;

	if (buf == NULL || count == NULL || raw == NULL || raw_len == NULL) {
		sdp_wire_why(why, why_size, "no record");
		return DOCA_ERROR_INVALID_VALUE;
	}
	magic = rd_u32(&r, "magic");
	version = rd_u16(&r, "version");
	flags = rd_u16(&r, "flags");
	n = rd_u32(&r, "count");
	if (r.bad == NULL &&
	    (magic != SDP_UROM_DOMH_MAGIC || version != SDP_UROM_DOM_VERSION || flags != 0)) {
		sdp_wire_why(why, why_size,
			     "not a version %d host record (magic 0x%08x, version %u, flags %#x)",
			     SDP_UROM_DOM_VERSION, magic, version, flags);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (r.bad == NULL && n > SDP_UROM_DOM_MAX_MEMBERS)
		rd_invalid(&r, "count (too many)");
	start = r.p;
	for (i = 0; r.bad == NULL && i < n; i++) {
		rd_bytes(&r, &b, "members[]");
		if (r.bad == NULL && (b.len == 0 || b.len > SDP_UROM_DOM_MAX_RECORD))
			rd_invalid(&r, "members[] (empty or too long)");
	}
	if (r.bad != NULL) {
		sdp_wire_why(why, why_size, "malformed host record of %zu bytes: field %s", len,
			     r.bad);
		return DOCA_ERROR_INVALID_VALUE;
	}
	for (k = 0; k < r.left; k++)
		if (r.p[k] != 0) {
			sdp_wire_why(why, why_size, "malformed host record: %zu trailing bytes",
				     r.left);
			return DOCA_ERROR_INVALID_VALUE;
		}
	*count = n;
	*raw = start;
	*raw_len = (size_t)(r.p - start);
	return DOCA_SUCCESS;
}

int sdp_urom_dom_host_next(const uint8_t *raw, size_t raw_len, size_t *pos,
			   struct sdp_urom_bytes *member)
{
	struct sdp_rd r;

	if (raw == NULL || pos == NULL || member == NULL || *pos >= raw_len)
		return 0;
	r.p = raw + *pos;
	r.left = raw_len - *pos;
	r.bad = NULL;
	rd_bytes(&r, member, "members[]");
	if (r.bad != NULL || member->len == 0)
		return 0;
	*pos = (size_t)(r.p - raw);
	return 1;
}
