/*
 * Unit test: the UROM wire format. Every message type round-trips field by field; every
 * truncation, bad magic, trailing byte, oversized count and unknown type is refused with
 * INVALID_VALUE; another protocol version gives NOT_SUPPORTED with the header filled; 100k random
 * and mutated buffers never crash, and whatever parses packs back to the same bytes. SW_STATS:
 * counts that contradict each other, strings too long or not printable, and lengths that do not
 * match the body are refused by both pack and unpack; the bounds themselves are accepted.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doca_log.h"
#include "sdp_urom_proto.h"
#include "t_helpers.h"

static const uint16_t all_types[] = {
	SDP_UROM_MSG_HELLO,	    SDP_UROM_MSG_CHALLENGE,	  SDP_UROM_MSG_AUTH,
	SDP_UROM_MSG_WELCOME,	    SDP_UROM_MSG_REJECT,	  SDP_UROM_MSG_VERSION_REJECT,
	SDP_UROM_MSG_SPAWN,	    SDP_UROM_MSG_SPAWN_REPLY,	  SDP_UROM_MSG_RELEASE,
	SDP_UROM_MSG_RELEASE_REPLY, SDP_UROM_MSG_GID_QUERY,	  SDP_UROM_MSG_GID_REPLY,
	SDP_UROM_MSG_STATUS_QUERY,  SDP_UROM_MSG_STATUS_REPLY,	  SDP_UROM_MSG_WORKER_EXIT,
	SDP_UROM_MSG_W_CONNECT,	    SDP_UROM_MSG_W_CONNECT_REPLY, SDP_UROM_MSG_W_CMD,
	SDP_UROM_MSG_W_NOTIF,	    SDP_UROM_MSG_W_DISCONNECT,	  SDP_UROM_MSG_SW_READY,
	SDP_UROM_MSG_SW_ADD_HOST,   SDP_UROM_MSG_SW_DEL_HOST,	  SDP_UROM_MSG_SW_EXIT,
	SDP_UROM_MSG_SW_STATS,
};
#define NUM_TYPES (sizeof(all_types) / sizeof(all_types[0]))

/* Byte strings the filled messages point to. */
static uint8_t blob[4096];
static uint8_t gid_ids[3 * 8];

static struct sdp_urom_bytes text(const char *s)
{
	struct sdp_urom_bytes b = {(const uint8_t *)s, (uint32_t)strlen(s)};

	return b;
}

static struct sdp_urom_bytes bytes(size_t off, uint32_t len)
{
	struct sdp_urom_bytes b = {blob + off, len};

	return b;
}

static void fill_array(uint8_t *a, size_t n, uint8_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		a[i] = (uint8_t)(seed + i * 7);
}

/* A message of `type` with every field set to a distinct non-zero value. */
static void fill(uint16_t type, struct sdp_urom_msg *m)
{
	int i;

	memset(m, 0, sizeof(*m));
	m->hdr.type = type;
	m->hdr.req_id = 0x1122334455667788ull + type;
	switch (type) {
	case SDP_UROM_MSG_HELLO:
		m->u.hello.min_version = 1;
		m->u.hello.max_version = 3;
		fill_array(m->u.hello.nonce, SDP_UROM_NONCE_LEN, 1);
		m->u.hello.pid = 4242;
		m->u.hello.uid = 1000;
		m->u.hello.hostname = bytes(0, 9);
		m->u.hello.max_msg_size = 4096;
		m->u.hello.max_workers = 17;
		break;
	case SDP_UROM_MSG_CHALLENGE:
		fill_array(m->u.challenge.nonce, SDP_UROM_NONCE_LEN, 2);
		fill_array(m->u.challenge.mac, SDP_UROM_MAC_LEN, 3);
		break;
	case SDP_UROM_MSG_AUTH:
		fill_array(m->u.auth.mac, SDP_UROM_MAC_LEN, 4);
		break;
	case SDP_UROM_MSG_WELCOME:
		m->u.welcome.max_msg_size = 2048;
		for (i = 0; i < SDP_UROM_CPUSET_WORDS; i++)
			m->u.welcome.cpuset[i] = 0xf0f0f0f000000000ull + (uint64_t)i;
		m->u.welcome.service_version = bytes(10, 13);
		m->u.welcome.num_plugins = 3;
		for (i = 0; i < 3; i++) {
			m->u.welcome.plugins[i].id = 1ull << i;
			m->u.welcome.plugins[i].version = 0x100 + (uint64_t)i;
			snprintf(m->u.welcome.plugins[i].name, SDP_UROM_NAME_MAX, "plugin_%d", i);
		}
		/* The longest name that fits (47 characters + NUL). */
		memset(m->u.welcome.plugins[2].name, 'z', SDP_UROM_NAME_MAX - 1);
		m->u.welcome.plugins[2].name[SDP_UROM_NAME_MAX - 1] = '\0';
		break;
	case SDP_UROM_MSG_REJECT:
		m->u.reject.status = DOCA_ERROR_AUTHENTICATION;
		m->u.reject.reason = bytes(30, 20);
		break;
	case SDP_UROM_MSG_VERSION_REJECT:
		m->u.version_reject.version = 9;
		m->u.version_reject.software = bytes(50, 12);
		break;
	case SDP_UROM_MSG_SPAWN:
		m->u.spawn.worker_id = 0xffffffffffffffffull;
		m->u.spawn.gid = 5;
		m->u.spawn.plugins = 0x5;
		m->u.spawn.has_cpuset = 1;
		for (i = 0; i < SDP_UROM_CPUSET_WORDS; i++)
			m->u.spawn.cpuset[i] = (uint64_t)i * 3 + 1;
		m->u.spawn.num_env = 3;
		m->u.spawn.env[0] = bytes(70, 7);
		m->u.spawn.env[1] = bytes(80, 0);
		m->u.spawn.env[2] = bytes(90, 11);
		break;
	case SDP_UROM_MSG_SPAWN_REPLY:
		m->u.spawn_reply.status = DOCA_SUCCESS;
		m->u.spawn_reply.reason = bytes(100, 3);
		m->u.spawn_reply.worker_id = 77;
		m->u.spawn_reply.dest_id = 0xabcdef;
		m->u.spawn_reply.pid = 31337;
		fill_array(m->u.spawn_reply.token, SDP_UROM_TOKEN_LEN, 5);
		m->u.spawn_reply.worker_addr = bytes(200, 300);
		break;
	case SDP_UROM_MSG_RELEASE:
		m->u.release.worker_id = 12;
		m->u.release.dest_id = 34;
		break;
	case SDP_UROM_MSG_RELEASE_REPLY:
		m->u.release_reply.status = DOCA_ERROR_NOT_FOUND;
		break;
	case SDP_UROM_MSG_GID_QUERY:
		m->u.gid_query.gid = 0xdeadbeef;
		break;
	case SDP_UROM_MSG_GID_REPLY:
		m->u.gid_reply.status = DOCA_SUCCESS;
		m->u.gid_reply.count = 3;
		for (i = 0; i < 3; i++) {
			uint64_t v = 0x0102030405060708ull * (uint64_t)(i + 1);
			int b;

			for (b = 0; b < 8; b++)
				gid_ids[i * 8 + b] = (uint8_t)(v >> (8 * b));
		}
		m->u.gid_reply.ids = gid_ids;
		break;
	case SDP_UROM_MSG_STATUS_QUERY:
		m->u.status_query.flags = 3;
		break;
	case SDP_UROM_MSG_STATUS_REPLY:
		m->u.status_reply.json = bytes(600, 1000);
		break;
	case SDP_UROM_MSG_WORKER_EXIT:
		m->u.worker_exit.worker_id = 99;
		m->u.worker_exit.exit_status = -9;
		break;
	case SDP_UROM_MSG_W_CONNECT:
		m->u.w_connect.dest_id = 555;
		fill_array(m->u.w_connect.token, SDP_UROM_TOKEN_LEN, 6);
		break;
	case SDP_UROM_MSG_W_CONNECT_REPLY:
		m->u.w_connect_reply.status = DOCA_ERROR_AUTHENTICATION;
		m->u.w_connect_reply.reason = bytes(1700, 5);
		break;
	case SDP_UROM_MSG_W_CMD:
		m->u.w_cmd.dest_id = 556;
		m->u.w_cmd.cmd = bytes(1800, 64);
		break;
	case SDP_UROM_MSG_W_NOTIF:
		m->u.w_notif.dest_id = 557;
		m->u.w_notif.notif = bytes(1900, 40);
		break;
	case SDP_UROM_MSG_W_DISCONNECT:
		m->u.w_disconnect.dest_id = 558;
		break;
	case SDP_UROM_MSG_SW_READY:
		m->u.sw_ready.pid = 2024;
		m->u.sw_ready.status = DOCA_ERROR_NOT_FOUND;
		m->u.sw_ready.worker_addr = bytes(2000, 250);
		break;
	case SDP_UROM_MSG_SW_ADD_HOST:
		m->u.sw_add_host.dest_id = 559;
		fill_array(m->u.sw_add_host.token, SDP_UROM_TOKEN_LEN, 7);
		break;
	case SDP_UROM_MSG_SW_DEL_HOST:
		m->u.sw_del_host.dest_id = 560;
		break;
	case SDP_UROM_MSG_SW_EXIT:
		break;
	case SDP_UROM_MSG_SW_STATS:
		m->u.sw_stats.uptime_ms = 0x0102030405060708ull;
		m->u.sw_stats.cmds = 1000;
		m->u.sw_stats.cmd_bytes = 0x1122334455ull;
		m->u.sw_stats.cmds_refused = 7;
		m->u.sw_stats.notifs = 999;
		m->u.sw_stats.notif_bytes = 0x2233445566ull;
		m->u.sw_stats.notifs_error = 8;
		m->u.sw_stats.notifs_dropped = 9;
		m->u.sw_stats.connects_refused = 10;
		m->u.sw_stats.domains_committed = 11;
		m->u.sw_stats.hosts_connected = 3;
		m->u.sw_stats.hosts_total = 0x80000001u;
		m->u.sw_stats.ucx_version = text("1.13.1");
		m->u.sw_stats.ucx_tls = text("default");
		m->u.sw_stats.ucx_net_devices = text("lo");
		m->u.sw_stats.ucx_resources = text("self/memory0,tcp/lo,sysv/memory");
		break;
	}
}

#define EQ_U(f) T_EQ_INT(got->u.f, want->u.f)
#define EQ_MEM(f, n)                                                                               \
	do {                                                                                       \
		if (memcmp(got->u.f, want->u.f, n) != 0)                                           \
			t_fail("%s: field " #f " differs after the round trip", name);             \
	} while (0)
#define EQ_BYTES(f)                                                                                \
	do {                                                                                       \
		T_EQ_INT(got->u.f.len, want->u.f.len);                                             \
		if (got->u.f.len == want->u.f.len && want->u.f.len > 0 &&                          \
		    (got->u.f.data == NULL ||                                                      \
		     memcmp(got->u.f.data, want->u.f.data, want->u.f.len)))                        \
			t_fail("%s: bytes of " #f " differ after the round trip", name);           \
	} while (0)

/* Field-by-field comparison of a decoded message with the one that was packed. */
static void compare(const struct sdp_urom_msg *want, const struct sdp_urom_msg *got)
{
	const char *name = sdp_urom_msg_type_name(want->hdr.type);
	uint32_t i;

	T_EQ_INT(got->hdr.magic, SDP_UROM_MAGIC);
	T_EQ_INT(got->hdr.version, SDP_UROM_PROTO_VERSION);
	T_EQ_INT(got->hdr.type, want->hdr.type);
	T_EQ_INT(got->hdr.req_id, want->hdr.req_id);
	switch (want->hdr.type) {
	case SDP_UROM_MSG_HELLO:
		EQ_U(hello.min_version);
		EQ_U(hello.max_version);
		EQ_MEM(hello.nonce, SDP_UROM_NONCE_LEN);
		EQ_U(hello.pid);
		EQ_U(hello.uid);
		EQ_BYTES(hello.hostname);
		EQ_U(hello.max_msg_size);
		EQ_U(hello.max_workers);
		break;
	case SDP_UROM_MSG_CHALLENGE:
		EQ_MEM(challenge.nonce, SDP_UROM_NONCE_LEN);
		EQ_MEM(challenge.mac, SDP_UROM_MAC_LEN);
		break;
	case SDP_UROM_MSG_AUTH:
		EQ_MEM(auth.mac, SDP_UROM_MAC_LEN);
		break;
	case SDP_UROM_MSG_WELCOME:
		EQ_U(welcome.max_msg_size);
		EQ_MEM(welcome.cpuset, sizeof(want->u.welcome.cpuset));
		EQ_BYTES(welcome.service_version);
		EQ_U(welcome.num_plugins);
		for (i = 0; i < want->u.welcome.num_plugins; i++) {
			EQ_U(welcome.plugins[i].id);
			EQ_U(welcome.plugins[i].version);
			T_EQ_STR(got->u.welcome.plugins[i].name, want->u.welcome.plugins[i].name);
		}
		break;
	case SDP_UROM_MSG_REJECT:
		EQ_U(reject.status);
		EQ_BYTES(reject.reason);
		break;
	case SDP_UROM_MSG_VERSION_REJECT:
		EQ_U(version_reject.version);
		EQ_BYTES(version_reject.software);
		break;
	case SDP_UROM_MSG_SPAWN:
		EQ_U(spawn.worker_id);
		EQ_U(spawn.gid);
		EQ_U(spawn.plugins);
		EQ_U(spawn.has_cpuset);
		EQ_MEM(spawn.cpuset, sizeof(want->u.spawn.cpuset));
		EQ_U(spawn.num_env);
		for (i = 0; i < want->u.spawn.num_env; i++)
			EQ_BYTES(spawn.env[i]);
		break;
	case SDP_UROM_MSG_SPAWN_REPLY:
		EQ_U(spawn_reply.status);
		EQ_BYTES(spawn_reply.reason);
		EQ_U(spawn_reply.worker_id);
		EQ_U(spawn_reply.dest_id);
		EQ_U(spawn_reply.pid);
		EQ_MEM(spawn_reply.token, SDP_UROM_TOKEN_LEN);
		EQ_BYTES(spawn_reply.worker_addr);
		break;
	case SDP_UROM_MSG_RELEASE:
		EQ_U(release.worker_id);
		EQ_U(release.dest_id);
		break;
	case SDP_UROM_MSG_RELEASE_REPLY:
		EQ_U(release_reply.status);
		break;
	case SDP_UROM_MSG_GID_QUERY:
		EQ_U(gid_query.gid);
		break;
	case SDP_UROM_MSG_GID_REPLY:
		EQ_U(gid_reply.status);
		EQ_U(gid_reply.count);
		for (i = 0; i < want->u.gid_reply.count; i++)
			T_EQ_INT(sdp_urom_gid_reply_id(got, i), sdp_urom_gid_reply_id(want, i));
		T_EQ_INT(sdp_urom_gid_reply_id(got, 1), 0x0102030405060708ull * 2);
		T_EQ_INT(sdp_urom_gid_reply_id(got, 3), 0); /* out of range */
		break;
	case SDP_UROM_MSG_STATUS_QUERY:
		EQ_U(status_query.flags);
		break;
	case SDP_UROM_MSG_STATUS_REPLY:
		EQ_BYTES(status_reply.json);
		break;
	case SDP_UROM_MSG_WORKER_EXIT:
		EQ_U(worker_exit.worker_id);
		EQ_U(worker_exit.exit_status);
		break;
	case SDP_UROM_MSG_W_CONNECT:
		EQ_U(w_connect.dest_id);
		EQ_MEM(w_connect.token, SDP_UROM_TOKEN_LEN);
		break;
	case SDP_UROM_MSG_W_CONNECT_REPLY:
		EQ_U(w_connect_reply.status);
		EQ_BYTES(w_connect_reply.reason);
		break;
	case SDP_UROM_MSG_W_CMD:
		EQ_U(w_cmd.dest_id);
		EQ_BYTES(w_cmd.cmd);
		break;
	case SDP_UROM_MSG_W_NOTIF:
		EQ_U(w_notif.dest_id);
		EQ_BYTES(w_notif.notif);
		break;
	case SDP_UROM_MSG_W_DISCONNECT:
		EQ_U(w_disconnect.dest_id);
		break;
	case SDP_UROM_MSG_SW_READY:
		EQ_U(sw_ready.pid);
		EQ_U(sw_ready.status);
		EQ_BYTES(sw_ready.worker_addr);
		break;
	case SDP_UROM_MSG_SW_ADD_HOST:
		EQ_U(sw_add_host.dest_id);
		EQ_MEM(sw_add_host.token, SDP_UROM_TOKEN_LEN);
		break;
	case SDP_UROM_MSG_SW_DEL_HOST:
		EQ_U(sw_del_host.dest_id);
		break;
	case SDP_UROM_MSG_SW_EXIT:
		break;
	case SDP_UROM_MSG_SW_STATS:
		EQ_U(sw_stats.uptime_ms);
		EQ_U(sw_stats.cmds);
		EQ_U(sw_stats.cmd_bytes);
		EQ_U(sw_stats.cmds_refused);
		EQ_U(sw_stats.notifs);
		EQ_U(sw_stats.notif_bytes);
		EQ_U(sw_stats.notifs_error);
		EQ_U(sw_stats.notifs_dropped);
		EQ_U(sw_stats.connects_refused);
		EQ_U(sw_stats.domains_committed);
		EQ_U(sw_stats.hosts_connected);
		EQ_U(sw_stats.hosts_total);
		EQ_BYTES(sw_stats.ucx_version);
		EQ_BYTES(sw_stats.ucx_tls);
		EQ_BYTES(sw_stats.ucx_net_devices);
		EQ_BYTES(sw_stats.ucx_resources);
		break;
	default:
		t_fail("no comparison for type %u", want->hdr.type);
	}
}

static void put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint8_t buf[8192];

static void test_roundtrip_and_truncation(void)
{
	struct sdp_urom_msg m, out;
	size_t len, cut, i;
	uint8_t *copy;

	for (i = 0; i < NUM_TYPES; i++) {
		const char *name = sdp_urom_msg_type_name(all_types[i]);

		fill(all_types[i], &m);
		T_OK(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len));
		T_EQ_INT(sdp_urom_msg_packed_size(&m), len);
		T_EQ_INT(get_u32(buf + 16), len - SDP_UROM_HDR_LEN);
		/* An exact-size heap copy, so ASan catches any read past the end. */
		copy = malloc(len);
		memcpy(copy, buf, len);
		memset(&out, 0xa5, sizeof(out));
		T_OK(sdp_urom_msg_unpack(copy, len, &out));
		compare(&m, &out);
		T_EQ_STR(sdp_urom_msg_type_name(out.hdr.type), name);

		/* Every truncation: as is (length mismatch) and with body_len adjusted. */
		for (cut = 0; cut < len; cut++) {
			uint8_t *t = malloc(cut > 0 ? cut : 1);

			memcpy(t, copy, cut);
			memset(&out, 0, sizeof(out));
			out.hdr.type = 0xbeef;
			if (sdp_urom_msg_unpack(t, cut, &out) != DOCA_ERROR_INVALID_VALUE)
				t_fail("%s truncated to %zu of %zu bytes: expected INVALID_VALUE",
				       name, cut, len);
			if (out.hdr.type != 0xbeef)
				t_fail("%s truncated to %zu bytes: output written on failure", name,
				       cut);
			if (cut >= SDP_UROM_HDR_LEN) {
				put_u32(t + 16, (uint32_t)(cut - SDP_UROM_HDR_LEN));
				if (sdp_urom_msg_unpack(t, cut, &out) != DOCA_ERROR_INVALID_VALUE)
					t_fail("%s truncated to %zu of %zu bytes with a matching "
					       "body length: expected INVALID_VALUE",
					       name, cut, len);
			}
			free(t);
		}

		/* One trailing byte, with and without a matching body length. */
		memcpy(buf, copy, len);
		buf[len] = 0;
		T_STATUS(sdp_urom_msg_unpack(buf, len + 1, &out), DOCA_ERROR_INVALID_VALUE);
		put_u32(buf + 16, (uint32_t)(len + 1 - SDP_UROM_HDR_LEN));
		T_STATUS(sdp_urom_msg_unpack(buf, len + 1, &out), DOCA_ERROR_INVALID_VALUE);

		/* Bad magic. */
		memcpy(buf, copy, len);
		buf[0] ^= 0x01;
		T_STATUS(sdp_urom_msg_unpack(buf, len, &out), DOCA_ERROR_INVALID_VALUE);

		/* Another protocol version: NOT_SUPPORTED and the header for the reply. */
		memcpy(buf, copy, len);
		put_u16(buf + 4, SDP_UROM_PROTO_VERSION + 1);
		memset(&out, 0, sizeof(out));
		T_STATUS(sdp_urom_msg_unpack(buf, len, &out), DOCA_ERROR_NOT_SUPPORTED);
		T_EQ_INT(out.hdr.magic, SDP_UROM_MAGIC);
		T_EQ_INT(out.hdr.version, SDP_UROM_PROTO_VERSION + 1);
		T_EQ_INT(out.hdr.type, all_types[i]);
		T_EQ_INT(out.hdr.req_id, m.hdr.req_id);
		if (all_types[i] == SDP_UROM_MSG_VERSION_REJECT) {
			T_EQ_INT(out.u.version_reject.version, 9);
			T_EQ_INT(out.u.version_reject.software.len, 12);
		}

		/* Too small a buffer: TOO_BIG and the size needed. */
		{
			size_t need = 0;

			T_STATUS(sdp_urom_msg_pack(&m, buf, len - 1, &need), DOCA_ERROR_TOO_BIG);
			T_EQ_INT(need, len);
			need = 0;
			T_STATUS(sdp_urom_msg_pack(&m, NULL, 0, &need), DOCA_ERROR_TOO_BIG);
			T_EQ_INT(need, len);
		}
		free(copy);
	}
}

static void test_bad_input(void)
{
	struct sdp_urom_msg m, out;
	size_t len = 12345, off;

	/* Arguments. */
	fill(SDP_UROM_MSG_AUTH, &m);
	T_STATUS(sdp_urom_msg_pack(NULL, buf, sizeof(buf), &len), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_msg_pack(&m, buf, sizeof(buf), NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_msg_pack(&m, NULL, 10, &len), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(len, 12345);
	T_STATUS(sdp_urom_msg_unpack(NULL, 20, &out), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_msg_unpack(buf, 20, NULL), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(sdp_urom_msg_packed_size(NULL), 0);

	/* Unknown types, on both sides. */
	m.hdr.type = 200;
	T_STATUS(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(sdp_urom_msg_packed_size(&m), 0);
	fill(SDP_UROM_MSG_SW_EXIT, &m);
	T_OK(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len));
	T_EQ_INT(len, SDP_UROM_HDR_LEN);
	put_u16(buf + 6, 200);
	T_STATUS(sdp_urom_msg_unpack(buf, len, &out), DOCA_ERROR_INVALID_VALUE);
	put_u16(buf + 6, 0);
	T_STATUS(sdp_urom_msg_unpack(buf, len, &out), DOCA_ERROR_INVALID_VALUE);
	T_EQ_STR(sdp_urom_msg_type_name(200), "UNKNOWN");
	T_EQ_STR(sdp_urom_msg_type_name(SDP_UROM_MSG_W_CMD), "W_CMD");

	/* Counts over the limits are refused by pack ... */
	fill(SDP_UROM_MSG_WELCOME, &m);
	m.u.welcome.num_plugins = SDP_UROM_MAX_PLUGINS + 1;
	T_STATUS(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len), DOCA_ERROR_INVALID_VALUE);
	fill(SDP_UROM_MSG_SPAWN, &m);
	m.u.spawn.num_env = SDP_UROM_MAX_ENV + 1;
	T_STATUS(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len), DOCA_ERROR_INVALID_VALUE);
	fill(SDP_UROM_MSG_GID_REPLY, &m);
	m.u.gid_reply.count = SDP_UROM_MAX_WORKERS_REPLY + 1;
	T_STATUS(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len), DOCA_ERROR_INVALID_VALUE);
	m.u.gid_reply.count = 2;
	m.u.gid_reply.ids = NULL;
	T_STATUS(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len), DOCA_ERROR_INVALID_VALUE);
	fill(SDP_UROM_MSG_W_CMD, &m);
	m.u.w_cmd.cmd.data = NULL; /* length without data */
	T_STATUS(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len), DOCA_ERROR_INVALID_VALUE);
	fill(SDP_UROM_MSG_WELCOME, &m);
	memset(m.u.welcome.plugins[1].name, 'x', SDP_UROM_NAME_MAX); /* not terminated */
	T_STATUS(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len), DOCA_ERROR_INVALID_VALUE);

	/* ... and by unpack when they arrive on the wire. */
	fill(SDP_UROM_MSG_WELCOME, &m);
	T_OK(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len));
	off = SDP_UROM_HDR_LEN + 8 + 8 * SDP_UROM_CPUSET_WORDS + 4 +
	      m.u.welcome.service_version.len;
	T_EQ_INT(get_u32(buf + off), 3);
	put_u32(buf + off, SDP_UROM_MAX_PLUGINS + 1);
	T_STATUS(sdp_urom_msg_unpack(buf, len, &out), DOCA_ERROR_INVALID_VALUE);
	put_u32(buf + off, 0xffffffffu);
	T_STATUS(sdp_urom_msg_unpack(buf, len, &out), DOCA_ERROR_INVALID_VALUE);
	put_u32(buf + off, 3);
	/* first plugin's name length: 48 (no room for the NUL) */
	T_EQ_INT(get_u32(buf + off + 4 + 16), 8);
	put_u32(buf + off + 4 + 16, SDP_UROM_NAME_MAX);
	T_STATUS(sdp_urom_msg_unpack(buf, len, &out), DOCA_ERROR_INVALID_VALUE);
	put_u32(buf + off + 4 + 16, 8);
	buf[off + 4 + 20 + 3] = '\0'; /* embedded NUL */
	T_STATUS(sdp_urom_msg_unpack(buf, len, &out), DOCA_ERROR_INVALID_VALUE);

	fill(SDP_UROM_MSG_SPAWN, &m);
	T_OK(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len));
	off = SDP_UROM_HDR_LEN + 8 + 4 + 8 + 4 + 8 * SDP_UROM_CPUSET_WORDS;
	T_EQ_INT(get_u32(buf + off), 3);
	put_u32(buf + off, SDP_UROM_MAX_ENV + 1);
	T_STATUS(sdp_urom_msg_unpack(buf, len, &out), DOCA_ERROR_INVALID_VALUE);
	put_u32(buf + off, 4); /* one more than present */
	T_STATUS(sdp_urom_msg_unpack(buf, len, &out), DOCA_ERROR_INVALID_VALUE);

	fill(SDP_UROM_MSG_GID_REPLY, &m);
	T_OK(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len));
	off = SDP_UROM_HDR_LEN + 4;
	put_u32(buf + off, SDP_UROM_MAX_WORKERS_REPLY + 1);
	T_STATUS(sdp_urom_msg_unpack(buf, len, &out), DOCA_ERROR_INVALID_VALUE);
	put_u32(buf + off, 0x20000000u); /* count * 8 would overflow 32 bits */
	T_STATUS(sdp_urom_msg_unpack(buf, len, &out), DOCA_ERROR_INVALID_VALUE);

	/* A byte string whose length runs past the end. */
	fill(SDP_UROM_MSG_W_CMD, &m);
	T_OK(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len));
	put_u32(buf + SDP_UROM_HDR_LEN + 8, 0xffffffffu);
	T_STATUS(sdp_urom_msg_unpack(buf, len, &out), DOCA_ERROR_INVALID_VALUE);

	/* Other-version VERSION_REJECT with a garbled body: still NOT_SUPPORTED, body zeroed. */
	fill(SDP_UROM_MSG_VERSION_REJECT, &m);
	T_OK(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len));
	put_u16(buf + 4, 7);
	put_u32(buf + SDP_UROM_HDR_LEN + 2, 1000);
	T_STATUS(sdp_urom_msg_unpack(buf, len, &out), DOCA_ERROR_NOT_SUPPORTED);
	T_EQ_INT(out.hdr.version, 7);
	T_EQ_INT(out.u.version_reject.version, 0);

	/* Zero-length byte strings round-trip. */
	fill(SDP_UROM_MSG_STATUS_REPLY, &m);
	m.u.status_reply.json.data = NULL;
	m.u.status_reply.json.len = 0;
	T_OK(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len));
	T_OK(sdp_urom_msg_unpack(buf, len, &out));
	T_EQ_INT(out.u.status_reply.json.len, 0);
}

/* xorshift64*: reproducible randomness. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* Parse; whatever parses must pack back to exactly the same bytes. */
static void check_one(const uint8_t *data, size_t len, unsigned long iter)
{
	static uint8_t again[8192];
	struct sdp_urom_msg out;
	doca_error_t status;
	size_t len2;

	status = sdp_urom_msg_unpack(data, len, &out);
	if (status == DOCA_SUCCESS) {
		if (sdp_urom_msg_pack(&out, again, sizeof(again), &len2) != DOCA_SUCCESS ||
		    len2 != len || memcmp(again, data, len) != 0)
			t_fail("iteration %lu: a %zu-byte %s message parsed but packs differently",
			       iter, len, sdp_urom_msg_type_name(out.hdr.type));
	} else if (status != DOCA_ERROR_INVALID_VALUE && status != DOCA_ERROR_NOT_SUPPORTED) {
		t_fail("iteration %lu: unexpected status %s", iter, doca_error_get_name(status));
	}
}

static void test_random(void)
{
	struct sdp_urom_msg m;
	unsigned long iter, parsed = 0;
	size_t len, i, flips;
	uint8_t *data;

	for (iter = 0; iter < 100000; iter++) {
		uint64_t r = rnd();

		if (iter % 2 == 0) {
			/* Pure noise behind a plausible header half of the time. */
			len = (size_t)(rnd() % 512);
			data = malloc(len > 0 ? len : 1);
			for (i = 0; i < len; i++)
				data[i] = (uint8_t)rnd();
			if (len >= SDP_UROM_HDR_LEN && (r & 1)) {
				put_u32(data, SDP_UROM_MAGIC);
				put_u16(data + 4, SDP_UROM_PROTO_VERSION);
				put_u16(data + 6, all_types[rnd() % NUM_TYPES]);
				put_u32(data + 16, (uint32_t)(len - SDP_UROM_HDR_LEN));
			}
		} else {
			/* A valid message with a few bytes changed, maybe cut or extended. */
			fill(all_types[rnd() % NUM_TYPES], &m);
			if (sdp_urom_msg_pack(&m, buf, sizeof(buf), &len) != DOCA_SUCCESS) {
				t_fail("iteration %lu: cannot pack a valid message", iter);
				continue;
			}
			flips = (size_t)(rnd() % 4);
			for (i = 0; i < flips; i++) {
				/* Mostly the body; now and then the header. */
				if (len > SDP_UROM_HDR_LEN && rnd() % 8 != 0)
					buf[SDP_UROM_HDR_LEN + rnd() % (len - SDP_UROM_HDR_LEN)] =
						(uint8_t)rnd();
				else
					buf[rnd() % len] = (uint8_t)rnd();
			}
			if (r & 2)
				len = (size_t)(rnd() % (len + 1));
			data = malloc(len > 0 ? len : 1);
			memcpy(data, buf, len);
		}
		check_one(data, len, iter);
		if (sdp_urom_msg_unpack(data, len, &m) == DOCA_SUCCESS)
			parsed++;
		free(data);
	}
	/* The mutated half must often still parse, or the test would exercise nothing. */
	T_TRUE(parsed > 1000);
}

/*
 * SW_STATS bytes as a worker of another mind could send them: no checks at all. counts: the ten
 * u64 counters in wire order; strs/lens: the four strings with the lengths their headers claim
 * (a claim past the real bytes is a malformed length). Returns the length.
 */
static size_t raw_stats(uint8_t *p, const uint64_t counts[10], uint32_t connected, uint32_t total,
			const char *const strs[4], const uint32_t lens[4])
{
	size_t pos = SDP_UROM_HDR_LEN;
	int i, b;

	for (i = 0; i < 10; i++)
		for (b = 0; b < 8; b++)
			p[pos++] = (uint8_t)(counts[i] >> (8 * b));
	put_u32(p + pos, connected);
	put_u32(p + pos + 4, total);
	pos += 8;
	for (i = 0; i < 4; i++) {
		size_t n = strlen(strs[i]);

		put_u32(p + pos, lens[i]);
		memcpy(p + pos + 4, strs[i], n);
		pos += 4 + n;
	}
	put_u32(p, SDP_UROM_MAGIC);
	put_u16(p + 4, SDP_UROM_PROTO_VERSION);
	put_u16(p + 6, SDP_UROM_MSG_SW_STATS);
	memset(p + 8, 0, 8);
	put_u32(p + 16, (uint32_t)(pos - SDP_UROM_HDR_LEN));
	return pos;
}

/* unpack of len bytes of p (an exact heap copy): the status. */
static doca_error_t unpack_copy(const uint8_t *p, size_t len, struct sdp_urom_msg *out)
{
	uint8_t *copy = malloc(len);
	doca_error_t st;

	memcpy(copy, p, len);
	st = sdp_urom_msg_unpack(copy, len, out);
	free(copy);
	return st;
}

static void test_stats_bounds(void)
{
	static char long_str[SDP_UROM_STATS_STR_MAX + 2], long_ver[SDP_UROM_STATS_VERSION_MAX + 2];
	static uint8_t raw[8192];
	const uint64_t ok_counts[10] = {5, 10, 2, 4, 80, 1, 0, 0, 0, 0};
	uint64_t counts[10];
	const char *strs[4] = {"1.13.1", "default", "lo", "tcp/lo"};
	uint32_t lens[4] = {6, 7, 2, 6};
	struct sdp_urom_msg m, out;
	size_t len, need;

	/* The raw builder matches pack: a sane snapshot parses. */
	len = raw_stats(raw, ok_counts, 1, 2, strs, lens);
	T_OK(unpack_copy(raw, len, &out));
	T_EQ_INT(out.u.sw_stats.cmds, 10);
	T_EQ_INT(out.u.sw_stats.cmd_bytes, 2);
	T_EQ_INT(out.u.sw_stats.cmds_refused, 4);
	T_EQ_INT(out.u.sw_stats.notifs, 80);
	T_EQ_INT(out.u.sw_stats.hosts_total, 2);
	T_EQ_INT(out.u.sw_stats.ucx_resources.len, 6);

	/* Counts that contradict each other: refused on the wire. */
	memcpy(counts, ok_counts, sizeof(counts));
	counts[3] = counts[1] + 1; /* cmds_refused > cmds */
	len = raw_stats(raw, counts, 1, 2, strs, lens);
	T_STATUS(unpack_copy(raw, len, &out), DOCA_ERROR_INVALID_VALUE);
	memcpy(counts, ok_counts, sizeof(counts));
	counts[6] = counts[4] + 1; /* notifs_error > notifs */
	len = raw_stats(raw, counts, 1, 2, strs, lens);
	T_STATUS(unpack_copy(raw, len, &out), DOCA_ERROR_INVALID_VALUE);
	len = raw_stats(raw, ok_counts, 3, 2, strs, lens); /* connected > total */
	T_STATUS(unpack_copy(raw, len, &out), DOCA_ERROR_INVALID_VALUE);
	len = raw_stats(raw, ok_counts, UINT32_MAX, UINT32_MAX, strs, lens); /* equal: fine */
	T_OK(unpack_copy(raw, len, &out));

	/* Lengths that do not match the bytes: past the body, or short of it. */
	lens[1] = 8;
	len = raw_stats(raw, ok_counts, 1, 2, strs, lens);
	T_STATUS(unpack_copy(raw, len, &out), DOCA_ERROR_INVALID_VALUE);
	lens[1] = 6;
	len = raw_stats(raw, ok_counts, 1, 2, strs, lens);
	T_STATUS(unpack_copy(raw, len, &out), DOCA_ERROR_INVALID_VALUE);
	lens[1] = UINT32_MAX;
	len = raw_stats(raw, ok_counts, 1, 2, strs, lens);
	T_STATUS(unpack_copy(raw, len, &out), DOCA_ERROR_INVALID_VALUE);
	lens[1] = 7;

	/* Not printable: a newline, DEL, a byte above 0x7e, a NUL. */
	strs[2] = "l\no";
	lens[2] = 3;
	len = raw_stats(raw, ok_counts, 1, 2, strs, lens);
	T_STATUS(unpack_copy(raw, len, &out), DOCA_ERROR_INVALID_VALUE);
	strs[2] = "l\x7f";
	lens[2] = 2;
	len = raw_stats(raw, ok_counts, 1, 2, strs, lens);
	T_STATUS(unpack_copy(raw, len, &out), DOCA_ERROR_INVALID_VALUE);
	strs[2] = "l\xc3\xa9";
	lens[2] = 3;
	len = raw_stats(raw, ok_counts, 1, 2, strs, lens);
	T_STATUS(unpack_copy(raw, len, &out), DOCA_ERROR_INVALID_VALUE);
	strs[2] = "lo";
	lens[2] = 2;
	len = raw_stats(raw, ok_counts, 1, 2, strs, lens);
	raw[len - 4 - 6 - 1] = 0; /* the last byte of net_devices ("lo" -> "l\0") */
	T_STATUS(unpack_copy(raw, len, &out), DOCA_ERROR_INVALID_VALUE);

	/* The bounds: exactly the maximum parses, one more byte does not. */
	memset(long_ver, 'v', SDP_UROM_STATS_VERSION_MAX);
	memset(long_str, 's', SDP_UROM_STATS_STR_MAX);
	strs[0] = long_ver;
	lens[0] = SDP_UROM_STATS_VERSION_MAX;
	strs[3] = long_str;
	lens[3] = SDP_UROM_STATS_STR_MAX;
	len = raw_stats(raw, ok_counts, 1, 2, strs, lens);
	T_OK(unpack_copy(raw, len, &out));
	T_EQ_INT(out.u.sw_stats.ucx_version.len, SDP_UROM_STATS_VERSION_MAX);
	T_EQ_INT(out.u.sw_stats.ucx_resources.len, SDP_UROM_STATS_STR_MAX);
	long_ver[SDP_UROM_STATS_VERSION_MAX] = 'v';
	lens[0] = SDP_UROM_STATS_VERSION_MAX + 1;
	len = raw_stats(raw, ok_counts, 1, 2, strs, lens);
	T_STATUS(unpack_copy(raw, len, &out), DOCA_ERROR_INVALID_VALUE);
	long_ver[SDP_UROM_STATS_VERSION_MAX] = '\0';
	lens[0] = SDP_UROM_STATS_VERSION_MAX;
	long_str[SDP_UROM_STATS_STR_MAX] = 's';
	lens[3] = SDP_UROM_STATS_STR_MAX + 1;
	len = raw_stats(raw, ok_counts, 1, 2, strs, lens);
	T_STATUS(unpack_copy(raw, len, &out), DOCA_ERROR_INVALID_VALUE);
	long_str[SDP_UROM_STATS_STR_MAX] = '\0';

	/* pack refuses what unpack refuses (INVALID_VALUE, nothing sized). */
	fill(SDP_UROM_MSG_SW_STATS, &m);
	T_OK(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len));
	m.u.sw_stats.cmds_refused = m.u.sw_stats.cmds + 1;
	T_STATUS(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(sdp_urom_msg_packed_size(&m), 0);
	fill(SDP_UROM_MSG_SW_STATS, &m);
	m.u.sw_stats.notifs_error = m.u.sw_stats.notifs + 1;
	T_STATUS(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len), DOCA_ERROR_INVALID_VALUE);
	fill(SDP_UROM_MSG_SW_STATS, &m);
	m.u.sw_stats.hosts_connected = m.u.sw_stats.hosts_total + 1;
	T_STATUS(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len), DOCA_ERROR_INVALID_VALUE);
	fill(SDP_UROM_MSG_SW_STATS, &m);
	m.u.sw_stats.ucx_tls = text("rc,\tud");
	T_STATUS(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len), DOCA_ERROR_INVALID_VALUE);
	fill(SDP_UROM_MSG_SW_STATS, &m);
	long_ver[SDP_UROM_STATS_VERSION_MAX] = 'v';
	m.u.sw_stats.ucx_version = text(long_ver);
	need = 0;
	T_STATUS(sdp_urom_msg_pack(&m, NULL, 0, &need), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(need, 0);
	long_ver[SDP_UROM_STATS_VERSION_MAX] = '\0';
	m.u.sw_stats.ucx_version = text(long_ver);
	T_OK(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len));
	fill(SDP_UROM_MSG_SW_STATS, &m);
	m.u.sw_stats.ucx_net_devices.data = NULL; /* length 2, no bytes */
	T_STATUS(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len), DOCA_ERROR_INVALID_VALUE);
	fill(SDP_UROM_MSG_SW_STATS, &m);
	m.u.sw_stats.ucx_resources = text(long_str);
	m.u.sw_stats.ucx_resources.len = SDP_UROM_STATS_STR_MAX + 1;
	T_STATUS(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len), DOCA_ERROR_INVALID_VALUE);
	/* Empty strings are fine. */
	fill(SDP_UROM_MSG_SW_STATS, &m);
	m.u.sw_stats.ucx_tls = text("");
	T_OK(sdp_urom_msg_pack(&m, buf, sizeof(buf), &len));
	T_OK(unpack_copy(buf, len, &out));
	T_EQ_INT(out.u.sw_stats.ucx_tls.len, 0);
	T_EQ_STR(sdp_urom_msg_type_name(SDP_UROM_MSG_SW_STATS), "SW_STATS");
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(blob); i++)
		blob[i] = (uint8_t)(i * 13 + 1);

	/* Unpack logs every malformation it finds: keep these thousands of cases quiet. */
	T_OK(doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE));
	test_roundtrip_and_truncation();
	test_bad_input();
	test_stats_bounds();
	test_random();
	T_DONE();
}
