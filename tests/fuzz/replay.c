/*
 * Driver for the UROM wire-format fuzz target without libFuzzer: feeds the files named on the
 * command line (a corpus, crash reproducers) and/or N generated inputs to
 * LLVMFuzzerTestOneInput(). Generated inputs are reproducible (seeded): valid messages of every
 * type, then the same with random bytes changed, cut or extended, and plain noise behind a
 * valid-looking header. A failing property aborts (the fuzz target decides), so a crash here
 * names the iteration and the seed printed before it.
 *
 *   fuzz_urom_proto_replay [--random N] [--seed S] [FILE...]
 *   fuzz_urom_frame_replay [--random N] [--stream K] [--seed S] [FILE...]
 *
 * With --stream K (the frame target) each generated input is two control bytes followed by up
 * to K generated inputs back to back, as they would follow each other on a connection.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdp_urom_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static const uint16_t types[] = {
	SDP_UROM_MSG_HELLO,
	SDP_UROM_MSG_CHALLENGE,
	SDP_UROM_MSG_AUTH,
	SDP_UROM_MSG_WELCOME,
	SDP_UROM_MSG_REJECT,
	SDP_UROM_MSG_VERSION_REJECT,
	SDP_UROM_MSG_SPAWN,
	SDP_UROM_MSG_SPAWN_REPLY,
	SDP_UROM_MSG_RELEASE,
	SDP_UROM_MSG_RELEASE_REPLY,
	SDP_UROM_MSG_GID_QUERY,
	SDP_UROM_MSG_GID_REPLY,
	SDP_UROM_MSG_STATUS_QUERY,
	SDP_UROM_MSG_STATUS_REPLY,
	SDP_UROM_MSG_WORKER_EXIT,
	SDP_UROM_MSG_W_CONNECT,
	SDP_UROM_MSG_W_CONNECT_REPLY,
	SDP_UROM_MSG_W_CMD,
	SDP_UROM_MSG_W_NOTIF,
	SDP_UROM_MSG_W_DISCONNECT,
	SDP_UROM_MSG_SW_READY,
	SDP_UROM_MSG_SW_ADD_HOST,
	SDP_UROM_MSG_SW_DEL_HOST,
	SDP_UROM_MSG_SW_EXIT,
	SDP_UROM_MSG_W_DOMAIN_ADDR,
	SDP_UROM_MSG_W_DOMAIN_ADDR_REPLY,
	SDP_UROM_MSG_W_DOMAIN_MEMBER,
	SDP_UROM_MSG_W_DOMAIN_COMMIT,
	SDP_UROM_MSG_W_DOMAIN_CLEAR,
	SDP_UROM_MSG_W_DOMAIN_REPLY,
	SDP_UROM_MSG_SW_STATS,
};
#define NUM_TYPES (sizeof(types) / sizeof(types[0]))

static uint8_t pool[512];
/* Printable ASCII (SW_STATS strings must be), filled in main. */
static uint8_t text_pool[2048];

static struct sdp_urom_bytes some_text(uint32_t max)
{
	struct sdp_urom_bytes b;

	/* Mostly short, now and then right at or near the bound. */
	b.len = rnd() % 8 == 0 ? max - (uint32_t)(rnd() % 2) : (uint32_t)(rnd() % 48);
	b.data = text_pool + rnd() % (sizeof(text_pool) - max);
	return b;
}

static struct sdp_urom_bytes some_bytes(void)
{
	struct sdp_urom_bytes b;

	b.len = (uint32_t)(rnd() % 64);
	b.data = pool + rnd() % (sizeof(pool) - 64);
	return b;
}

/* A valid domain member record (sdp_urom_dom_member_pack) with random contents. */
static size_t make_member(uint8_t *buf, size_t cap)
{
	static struct sdp_urom_dom_member m;
	struct sdp_urom_dom_seg segs[4];
	size_t len = 0;
	uint32_t i;

	memset(&m, 0, sizeof(m));
	m.id = rnd();
	m.num_addrs = (uint32_t)(rnd() % 4);
	for (i = 0; i < m.num_addrs; i++) {
		snprintf(m.addrs[i].name, SDP_UROM_NAME_MAX, "plugin%u", i);
		m.addrs[i].addr = some_bytes();
		if (m.addrs[i].addr.len == 0)
			m.addrs[i].addr.len = 1;
	}
	m.num_segs = (uint32_t)(rnd() % 5);
	for (i = 0; i < m.num_segs; i++) {
		segs[i].va = rnd() >> 1;
		segs[i].len = 1 + rnd() % 4096;
		segs[i].memh = some_bytes();
		segs[i].mkey = some_bytes();
	}
	if (sdp_urom_dom_member_pack(&m, segs, buf, cap, &len) != DOCA_SUCCESS) {
		fprintf(stderr, "replay: cannot pack a valid member record\n");
		exit(1);
	}
	return len;
}

/* A valid host record of up to three member records, sometimes zero-padded. */
static size_t make_host(uint8_t *buf, size_t cap)
{
	static uint8_t recs[3][2048];
	struct sdp_urom_bytes members[3];
	uint32_t n = (uint32_t)(rnd() % 4), i;
	size_t len = 0, pad = rnd() % 3 == 0 ? rnd() % 32 : 0;

	for (i = 0; i < n; i++) {
		members[i].data = recs[i];
		members[i].len = (uint32_t)make_member(recs[i], sizeof(recs[i]));
	}
	if (sdp_urom_dom_host_pack(members, n, buf, cap, &len) != DOCA_SUCCESS) {
		fprintf(stderr, "replay: cannot pack a valid host record\n");
		exit(1);
	}
	if (len + pad <= cap) {
		memset(buf + len, 0, pad);
		len += pad;
	}
	return len;
}

/* A valid message of a random type with random field values (or, 1 in 8, a domain record). */
static size_t make_valid(uint8_t *buf, size_t cap)
{
	static uint8_t ids[8 * 8];
	struct sdp_urom_msg m;
	size_t len = 0;
	uint32_t i;

	switch (rnd() % 16) {
	case 0:
		return make_member(buf, cap);
	case 1:
		return make_host(buf, cap);
	default:
		break;
	}
	memset(&m, 0, sizeof(m));
	for (i = 0; i < sizeof(m.u); i++)
		((uint8_t *)&m.u)[i] = (uint8_t)rnd();
	m.hdr.type = types[rnd() % NUM_TYPES];
	m.hdr.req_id = rnd();
	/* status fields hold a doca_error_t (the parser refuses anything else) */
	m.u.reject.status = (uint32_t)(rnd() % 32);
	m.u.spawn_reply.status = (uint32_t)(rnd() % 32);
	m.u.release_reply.status = (uint32_t)(rnd() % 32);
	m.u.gid_reply.status = (uint32_t)(rnd() % 32);
	m.u.w_connect_reply.status = (uint32_t)(rnd() % 32);
	m.u.w_domain_addr_reply.status = (uint32_t)(rnd() % 32);
	m.u.w_domain_reply.status = (uint32_t)(rnd() % 32);
	m.u.sw_ready.status = (uint32_t)(rnd() % 32);
	switch (m.hdr.type) {
	case SDP_UROM_MSG_HELLO:
		m.u.hello.hostname = some_bytes();
		break;
	case SDP_UROM_MSG_WELCOME:
		m.u.welcome.service_version = some_bytes();
		m.u.welcome.num_plugins = (uint32_t)(rnd() % 5);
		for (i = 0; i < m.u.welcome.num_plugins; i++)
			snprintf(m.u.welcome.plugins[i].name, SDP_UROM_NAME_MAX, "p%u", i);
		break;
	case SDP_UROM_MSG_REJECT:
		m.u.reject.reason = some_bytes();
		break;
	case SDP_UROM_MSG_VERSION_REJECT:
		m.u.version_reject.software = some_bytes();
		break;
	case SDP_UROM_MSG_SPAWN:
		m.u.spawn.num_env = (uint32_t)(rnd() % 4);
		for (i = 0; i < m.u.spawn.num_env; i++)
			m.u.spawn.env[i] = some_bytes();
		break;
	case SDP_UROM_MSG_SPAWN_REPLY:
		m.u.spawn_reply.reason = some_bytes();
		m.u.spawn_reply.worker_addr = some_bytes();
		break;
	case SDP_UROM_MSG_GID_REPLY:
		m.u.gid_reply.count = (uint32_t)(rnd() % 8);
		m.u.gid_reply.ids = ids;
		break;
	case SDP_UROM_MSG_STATUS_REPLY:
		m.u.status_reply.json = some_bytes();
		break;
	case SDP_UROM_MSG_W_CONNECT_REPLY:
		m.u.w_connect_reply.reason = some_bytes();
		break;
	case SDP_UROM_MSG_W_CMD:
		m.u.w_cmd.cmd = some_bytes();
		break;
	case SDP_UROM_MSG_W_NOTIF:
		m.u.w_notif.notif = some_bytes();
		break;
	case SDP_UROM_MSG_SW_READY:
		m.u.sw_ready.worker_addr = some_bytes();
		break;
	case SDP_UROM_MSG_W_DOMAIN_ADDR_REPLY:
		m.u.w_domain_addr_reply.record = some_bytes();
		break;
	case SDP_UROM_MSG_W_DOMAIN_MEMBER:
		m.u.w_domain_member.record = some_bytes();
		break;
	case SDP_UROM_MSG_W_DOMAIN_REPLY:
		m.u.w_domain_reply.reason = some_bytes();
		break;
	case SDP_UROM_MSG_SW_STATS:
		/* Counts that agree (refused <= received, ...), sometimes equal, else random. */
		if (m.u.sw_stats.cmds_refused > m.u.sw_stats.cmds)
			m.u.sw_stats.cmds_refused = rnd() % 2 ? m.u.sw_stats.cmds : 0;
		if (m.u.sw_stats.notifs_error > m.u.sw_stats.notifs)
			m.u.sw_stats.notifs_error = m.u.sw_stats.notifs >> (rnd() % 64);
		if (m.u.sw_stats.hosts_connected > m.u.sw_stats.hosts_total)
			m.u.sw_stats.hosts_connected = m.u.sw_stats.hosts_total;
		m.u.sw_stats.ucx_version = some_text(SDP_UROM_STATS_VERSION_MAX);
		m.u.sw_stats.ucx_tls = some_text(SDP_UROM_STATS_STR_MAX);
		m.u.sw_stats.ucx_net_devices = some_text(SDP_UROM_STATS_STR_MAX);
		m.u.sw_stats.ucx_resources = some_text(SDP_UROM_STATS_STR_MAX);
		break;
	default:
		break;
	}
	if (sdp_urom_msg_pack(&m, buf, cap, &len) != DOCA_SUCCESS) {
		fprintf(stderr, "replay: cannot pack a valid %s message\n",
			sdp_urom_msg_type_name(m.hdr.type));
		exit(1);
	}
	return len;
}

static void run_one(const uint8_t *data, size_t len)
{
	/* An exact-size heap copy, so a sanitizer sees any read past the end. */
	uint8_t *copy = malloc(len > 0 ? len : 1);

	if (copy == NULL) {
		fprintf(stderr, "replay: out of memory\n");
		exit(1);
	}
	memcpy(copy, data, len);
	LLVMFuzzerTestOneInput(copy, len);
	free(copy);
}

static int run_file(const char *path)
{
	static uint8_t buf[1 << 20];
	size_t len;
	FILE *f = fopen(path, "rb");

	if (f == NULL) {
		perror(path);
		return 1;
	}
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	run_one(buf, len);
	return 0;
}

/* Input number i of the generated set into buf (up to 8 KiB): its length. */
static size_t gen_input(unsigned long i, uint8_t *buf, size_t cap)
{
	unsigned long j, flips;
	size_t len;

	switch (i % 4) {
	case 0: /* valid */
		len = make_valid(buf, cap);
		break;
	case 1: /* valid, a few bytes changed */
	case 2: /* valid, changed and cut or extended */
		len = make_valid(buf, cap);
		flips = 1 + rnd() % 4;
		for (j = 0; j < flips; j++)
			buf[rnd() % len] = (uint8_t)rnd();
		if (i % 4 == 2) {
			size_t newlen = (size_t)(rnd() % (len + 16));

			for (j = len; j < newlen; j++)
				buf[j] = (uint8_t)rnd();
			len = newlen;
		}
		break;
	default: /* noise behind a plausible header */
		len = (size_t)(rnd() % 300);
		for (j = 0; j < len; j++)
			buf[j] = (uint8_t)rnd();
		if (len >= SDP_UROM_HDR_LEN) {
			uint32_t body = (uint32_t)(len - SDP_UROM_HDR_LEN);
			uint16_t type = types[rnd() % NUM_TYPES];

			memcpy(buf, "SURM", 4);
			buf[4] = SDP_UROM_PROTO_VERSION;
			buf[5] = 0;
			buf[6] = (uint8_t)type;
			buf[7] = (uint8_t)(type >> 8);
			for (j = 0; j < 4; j++)
				buf[16 + j] = (uint8_t)(body >> (8 * j));
		}
		break;
	}
	return len;
}

int main(int argc, char **argv)
{
	static uint8_t buf[8192], stream_buf[4 * 8192 + 2];
	unsigned long n = 0, i, stream = 0;
	uint64_t seed = 0x5eed5eed12345678ull;
	size_t len;
	int a, errors = 0;

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--random") == 0 && a + 1 < argc)
			n = strtoul(argv[++a], NULL, 0);
		else if (strcmp(argv[a], "--seed") == 0 && a + 1 < argc)
			seed = strtoull(argv[++a], NULL, 0);
		else if (strcmp(argv[a], "--stream") == 0 && a + 1 < argc)
			stream = strtoul(argv[++a], NULL, 0);
		else
			errors += run_file(argv[a]);
	}
	if (stream > 4)
		stream = 4;
	rng = seed ? seed : 1;
	for (i = 0; i < sizeof(pool); i++)
		pool[i] = (uint8_t)rnd();
	for (i = 0; i < sizeof(text_pool); i++)
		text_pool[i] = (uint8_t)(0x20 + rnd() % 95);
	printf("replay: %lu generated inputs, seed 0x%llx\n", n, (unsigned long long)seed);
	fflush(stdout);
	for (i = 0; i < n; i++) {
		if (stream == 0) {
			len = gen_input(i, buf, sizeof(buf));
			run_one(buf, len);
			continue;
		}
		/* Two control bytes (chunk size, bound), then up to `stream` inputs in a row. */
		stream_buf[0] = (uint8_t)rnd();
		stream_buf[1] = (uint8_t)rnd();
		len = 2;
		for (unsigned long k = 1 + rnd() % stream; k > 0; k--) {
			size_t piece = gen_input(i + k, buf, sizeof(buf));

			memcpy(stream_buf + len, buf, piece);
			len += piece;
		}
		run_one(stream_buf, len);
	}
	printf("replay: done\n");
	return errors ? 1 : 0;
}
