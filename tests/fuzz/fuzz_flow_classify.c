/*
 * libFuzzer target for DOCA Flow's software classifier (sdp_flow_classify and its frame parser
 * flow_parse in src/flow/classify.c): every frame a software NIC receives from its wire goes
 * through it, so its bytes are anyone's. The target starts one flow port on the host device
 * softdpu0 with a pipeline shaped like the GPU packet processing application's (a root control
 * pipe sending IPv4 UDP to an RSS pipe, IPv4 ICMP to one queue, IPv4 TCP with SYN to a CPU
 * pipe, other IPv4 TCP to a session pipe of exact 5-tuples missing to the CPU pipe, IPv6 to an
 * RSS pipe) and classifies the input as one frame.
 *
 * Properties checked beyond "no crash": the verdict is FORWARD or MISS (the root pipe exists);
 * it and the queue equal those of an independent reading of the frame here (Ethernet, at most
 * one VLAN tag, IPv4 with a version of 4 and a header length of 20 bytes or more that fits, or
 * IPv6 with a version of 6 and its 40 bytes; TCP needs 20 bytes, UDP 8, ICMP 4, and a non-first
 * IPv4 fragment has no transport header): UDP to queues 1-4, ICMP to 10, TCP with SYN to 7, the
 * session 10.0.0.1:1000 -> 10.0.0.2:80 without SYN to 5-6, other TCP to 7, IPv6 to 8-9, the rest
 * MISS; the same frame classified twice gets the same answer (RSS is a function of the frame).
 *
 * Needs the host provider: SOFTDPU_PROVIDER_PATH=<build>/src/providers/host (the `fuzz` suite
 * sets it). With -DSDP_FUZZ_MAIN this file has its own main() (tests/fuzz/fuzz_main.h).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doca_dev.h"
#include "doca_flow.h"
#include "doca_log.h"
#include "sdp_flow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                   \
	do {                                                                                       \
		if ((x) != DOCA_SUCCESS) {                                                         \
			fprintf(stderr, "fuzz_flow_classify: %s failed\n", #x);                    \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static struct doca_flow_port *port;
static uint16_t udp_q[4] = {1, 2, 3, 4}, sess_q[2] = {5, 6}, cpu_q = 7, v6_q[2] = {8, 9},
		icmp_q = 10;

static struct doca_dev *open_dev(const char *ibdev)
{
	struct doca_devinfo **list = NULL;
	struct doca_dev *dev = NULL;
	uint32_t n = 0;

	CHECK(doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n && dev == NULL; i++) {
		char name[DOCA_DEVINFO_IBDEV_NAME_SIZE] = "";
		doca_error_t st;

		if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) != DOCA_SUCCESS ||
		    strcmp(name, ibdev) != 0)
			continue;
		st = doca_dev_open(list[i], &dev);
		if (st != DOCA_SUCCESS) {
			fprintf(stderr, "fuzz_flow_classify: doca_dev_open(%s): %s\n", name,
				doca_error_get_name(st));
			dev = NULL;
		}
	}
	doca_devinfo_destroy_list(list);
	if (dev == NULL) {
		fprintf(stderr,
			"fuzz_flow_classify: no device %s among %u (set SOFTDPU_PROVIDER_PATH to "
			"the build's src/providers/host)\n",
			ibdev, n);
		abort();
	}
	return dev;
}

static struct doca_flow_pipe *pipe_new(const char *name, enum doca_flow_pipe_type type, bool root,
				       const struct doca_flow_match *match,
				       const struct doca_flow_fwd *fwd,
				       const struct doca_flow_fwd *miss)
{
	struct doca_flow_pipe_cfg *cfg = NULL;
	struct doca_flow_pipe *pipe = NULL;

	CHECK(doca_flow_pipe_cfg_create(&cfg, port));
	CHECK(doca_flow_pipe_cfg_set_name(cfg, name));
	CHECK(doca_flow_pipe_cfg_set_type(cfg, type));
	CHECK(doca_flow_pipe_cfg_set_is_root(cfg, root));
	if (match != NULL)
		CHECK(doca_flow_pipe_cfg_set_match(cfg, match, NULL));
	CHECK(doca_flow_pipe_create(cfg, fwd, miss, &pipe));
	CHECK(doca_flow_pipe_cfg_destroy(cfg));
	return pipe;
}

static void ctrl_entry(struct doca_flow_pipe *root, const struct doca_flow_match *m,
		       const struct doca_flow_match *mask, uint32_t prio,
		       struct doca_flow_pipe *next)
{
	struct doca_flow_fwd fwd = {.type = DOCA_FLOW_FWD_PIPE, .next_pipe = next};
	struct doca_flow_pipe_entry *e = NULL;

	CHECK(doca_flow_pipe_control_add_entry(0, root, m, mask, NULL, NULL, NULL, NULL, NULL, prio,
					       &fwd, NULL, &e));
}

static struct doca_flow_fwd rss(uint16_t *queues, uint32_t n, uint32_t flags)
{
	return (struct doca_flow_fwd){
		.type = DOCA_FLOW_FWD_RSS,
		.rss_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED,
		.rss = {.outer_flags = flags, .queues_array = queues, .nr_queues = n}};
}

static void setup(void)
{
	struct doca_flow_fwd drop = {.type = DOCA_FLOW_FWD_DROP};
	struct doca_flow_fwd udp_fwd = rss(udp_q, 4, DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_UDP);
	struct doca_flow_fwd sess_fwd = rss(sess_q, 2, DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_TCP);
	struct doca_flow_fwd cpu_fwd = rss(&cpu_q, 1, DOCA_FLOW_RSS_IPV4);
	struct doca_flow_fwd v6_fwd =
		rss(v6_q, 2, DOCA_FLOW_RSS_IPV6 | DOCA_FLOW_RSS_TCP | DOCA_FLOW_RSS_UDP);
	struct doca_flow_fwd icmp_fwd = rss(&icmp_q, 1, DOCA_FLOW_RSS_IPV4);
	struct doca_flow_match udp_m = {.parser_meta = {.outer_l3_type = DOCA_FLOW_L3_META_IPV4,
							.outer_l4_type = DOCA_FLOW_L4_META_UDP}};
	struct doca_flow_match tcp_m = {.parser_meta = {.outer_l3_type = DOCA_FLOW_L3_META_IPV4,
							.outer_l4_type = DOCA_FLOW_L4_META_TCP}};
	struct doca_flow_match icmp_m = {.parser_meta = {.outer_l3_type = DOCA_FLOW_L3_META_IPV4,
							 .outer_l4_type = DOCA_FLOW_L4_META_ICMP}};
	struct doca_flow_match v6_m = {.parser_meta = {.outer_l3_type = DOCA_FLOW_L3_META_IPV6}};
	struct doca_flow_match sess_tmpl = {
		.parser_meta = {.outer_l3_type = DOCA_FLOW_L3_META_IPV4,
				.outer_l4_type = DOCA_FLOW_L4_META_TCP},
		.outer = {.l3_type = DOCA_FLOW_L3_TYPE_IP4,
			  .ip4 = {.src_ip = 0xffffffff, .dst_ip = 0xffffffff},
			  .l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_TCP,
			  .tcp.l4_port = {.src_port = 0xffff, .dst_port = 0xffff}}};
	struct doca_flow_match sess = sess_tmpl, syn = tcp_m,
			       syn_mask = {.parser_meta = {.outer_l3_type = UINT32_MAX,
							   .outer_l4_type = UINT32_MAX}};
	struct doca_flow_pipe *udp_p, *cpu_p, *sess_p, *icmp_p, *v6_p, *root;
	struct doca_flow_pipe_entry *e = NULL;
	struct doca_flow_port_cfg *pcfg = NULL;
	struct doca_flow_cfg *cfg = NULL;
	struct doca_flow_fwd to_cpu;
	struct doca_dev *dev;

	dev = open_dev("softdpu0"); /* what goes wrong listing devices is logged */
	(void)doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
	CHECK(doca_flow_cfg_create(&cfg));
	CHECK(doca_flow_cfg_set_pipe_queues(cfg, 1));
	CHECK(doca_flow_cfg_set_mode_args(cfg, "vnf,hws"));
	CHECK(doca_flow_init(cfg));
	CHECK(doca_flow_cfg_destroy(cfg));
	CHECK(doca_flow_port_cfg_create(&pcfg));
	CHECK(doca_flow_port_cfg_set_port_id(pcfg, 0));
	CHECK(doca_flow_port_cfg_set_dev(pcfg, dev));
	CHECK(doca_flow_port_start(pcfg, &port));
	CHECK(doca_flow_port_cfg_destroy(pcfg));

	udp_p = pipe_new("UDP", DOCA_FLOW_PIPE_BASIC, false, &udp_m, &udp_fwd, &drop);
	cpu_p = pipe_new("TCP_CPU", DOCA_FLOW_PIPE_BASIC, false, &tcp_m, &cpu_fwd, &drop);
	to_cpu = (struct doca_flow_fwd){.type = DOCA_FLOW_FWD_PIPE, .next_pipe = cpu_p};
	sess_p = pipe_new("SESSION", DOCA_FLOW_PIPE_BASIC, false, &sess_tmpl, &sess_fwd, &to_cpu);
	icmp_p = pipe_new("ICMP", DOCA_FLOW_PIPE_BASIC, false, &icmp_m, &icmp_fwd, &drop);
	v6_p = pipe_new("IPV6", DOCA_FLOW_PIPE_BASIC, false, &v6_m, &v6_fwd, &drop);
	CHECK(doca_flow_pipe_basic_add_entry(0, udp_p, NULL, 0, NULL, NULL, NULL,
					     DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, NULL, &e));
	CHECK(doca_flow_pipe_basic_add_entry(0, cpu_p, NULL, 0, NULL, NULL, NULL,
					     DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, NULL, &e));
	CHECK(doca_flow_pipe_basic_add_entry(0, icmp_p, NULL, 0, NULL, NULL, NULL,
					     DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, NULL, &e));
	CHECK(doca_flow_pipe_basic_add_entry(0, v6_p, NULL, 0, NULL, NULL, NULL,
					     DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, NULL, &e));
	sess.outer.ip4.src_ip = htonl(0x0a000001);
	sess.outer.ip4.dst_ip = htonl(0x0a000002);
	sess.outer.tcp.l4_port.src_port = htons(1000);
	sess.outer.tcp.l4_port.dst_port = htons(80);
	CHECK(doca_flow_pipe_basic_add_entry(0, sess_p, &sess, 0, NULL, NULL, NULL,
					     DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, NULL, &e));
	CHECK(doca_flow_entries_process(port, 0, 0, 0));

	root = pipe_new("ROOT", DOCA_FLOW_PIPE_CONTROL, true, NULL, NULL, NULL);
	ctrl_entry(root, &udp_m, NULL, 0, udp_p);
	ctrl_entry(root, &icmp_m, NULL, 0, icmp_p);
	ctrl_entry(root, &v6_m, NULL, 0, v6_p);
	ctrl_entry(root, &tcp_m, NULL, 3, sess_p);
	syn.outer.tcp.flags = DOCA_FLOW_MATCH_TCP_FLAG_SYN;
	syn_mask.outer.tcp.flags = DOCA_FLOW_MATCH_TCP_FLAG_SYN;
	ctrl_entry(root, &syn, &syn_mask, 1, cpu_p);
	CHECK(doca_flow_entries_process(port, 0, 0, 0));
}

static uint32_t be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t be32(const uint8_t *p)
{
	return be16(p) << 16 | be16(p + 2);
}

enum want {
	W_MISS,
	W_UDP,
	W_ICMP,
	W_SESS,
	W_CPU,
	W_V6,
	W_NUM
};

/* How many inputs met each rule (the replay checks its generator reached all). */
static unsigned long fuzz_seen[W_NUM];

/* The independent reading of the frame: which rule it must meet. */
static enum want expect(const uint8_t *f, size_t len)
{
	size_t off = 14, avail, ihl;
	uint32_t type;
	const uint8_t *ip, *l4;
	uint8_t proto;

	if (len < 14)
		return W_MISS;
	type = be16(f + 12);
	if (type == 0x8100 || type == 0x88a8) {
		if (len < 18)
			return W_MISS;
		type = be16(f + 16);
		off = 18;
	}
	ip = f + off;
	if (type == 0x86dd)
		return len >= off + 40 && ip[0] >> 4 == 6 ? W_V6 : W_MISS;
	if (type != 0x0800 || len < off + 20 || ip[0] >> 4 != 4)
		return W_MISS;
	ihl = (size_t)(ip[0] & 0xf) * 4;
	if (ihl < 20 || len < off + ihl || (be16(ip + 6) & 0x1fff) != 0)
		return W_MISS;
	proto = ip[9];
	l4 = ip + ihl;
	avail = len - off - ihl;
	if (proto == 17)
		return avail >= 8 ? W_UDP : W_MISS;
	if (proto == 1)
		return avail >= 4 ? W_ICMP : W_MISS;
	if (proto != 6 || avail < 20)
		return W_MISS;
	if (l4[13] & 0x02)
		return W_CPU;
	if (be32(ip + 12) == 0x0a000001 && be32(ip + 16) == 0x0a000002 && be16(l4) == 1000 &&
	    be16(l4 + 2) == 80)
		return W_SESS;
	return W_CPU;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint16_t q = 0xffff, q2 = 0xffff;
	enum want w;
	int v, v2;

	if (port == NULL)
		setup();
	if (size > 65535)
		return 0;
	v = sdp_flow_classify(port, data, (uint32_t)size, &q);
	v2 = sdp_flow_classify(port, data, (uint32_t)size, &q2);
	if (v != v2 || (v == SDP_FLOW_FORWARD && q != q2))
		abort(); /* not a function of the frame */
	w = expect(data, size);
	fuzz_seen[w]++;
	switch (w) {
	case W_MISS:
		if (v != SDP_FLOW_MISS)
			abort();
		return 0;
	case W_UDP:
		if (v != SDP_FLOW_FORWARD || q < udp_q[0] || q > udp_q[3])
			abort();
		return 0;
	case W_ICMP:
		if (v != SDP_FLOW_FORWARD || q != icmp_q)
			abort();
		return 0;
	case W_SESS:
		if (v != SDP_FLOW_FORWARD || (q != sess_q[0] && q != sess_q[1]))
			abort();
		return 0;
	case W_CPU:
		if (v != SDP_FLOW_FORWARD || q != cpu_q)
			abort();
		return 0;
	case W_V6:
		if (v != SDP_FLOW_FORWARD || (q != v6_q[0] && q != v6_q[1]))
			abort();
		return 0;
	case W_NUM:
		break;
	}
	abort();
}

#ifdef SDP_FUZZ_MAIN
static int fuzz_done(unsigned long n)
{
	int bad = 0;

	printf("replay: MISS %lu, UDP %lu, ICMP %lu, session %lu, CPU %lu, IPv6 %lu\n",
	       fuzz_seen[W_MISS], fuzz_seen[W_UDP], fuzz_seen[W_ICMP], fuzz_seen[W_SESS],
	       fuzz_seen[W_CPU], fuzz_seen[W_V6]);
	for (int w = 0; w < W_NUM && n >= 10000; w++)
		bad |= fuzz_seen[w] == 0;
	return bad;
}
#define FUZZ_MAIN_DONE(n) fuzz_done(n)
#include "fuzz_main.h"

/* Frames of every kind the pipeline tells apart, then sometimes cut or with a byte changed. */
static size_t fuzz_generate(uint8_t *buf, size_t cap)
{
	uint64_t r = fuzz_rnd();
	size_t off = 14, len, ihl = 20;
	uint8_t *ip;

	(void)cap;
	memset(buf, 0, 160);
	for (int i = 0; i < 12; i++)
		buf[i] = (uint8_t)fuzz_rnd();
	if (r % 4 == 0) {
		buf[12] = 0x81;
		buf[14] = (uint8_t)fuzz_rnd();
		off = 18;
		if (r % 16 == 0) { /* a second tag */
			buf[16] = 0x81;
			off = 22;
		}
	}
	ip = buf + off;
	if ((r >> 4) % 5 == 0) { /* IPv6 */
		buf[off - 2] = 0x86;
		buf[off - 1] = 0xdd;
		ip[0] = 0x60;
		ip[6] = (uint8_t)((const uint8_t[]){6, 17, 58, 0})[(r >> 8) % 4];
		len = off + 40 + fuzz_rnd() % 40;
	} else {
		buf[off - 2] = 0x08;
		buf[off - 1] = 0x00;
		if ((r >> 12) % 4 == 0)
			ihl = 20 + 4 * (fuzz_rnd() % 11);
		ip[0] = (uint8_t)(0x40 | ihl / 4);
		ip[9] = (uint8_t)((const uint8_t[]){6, 6, 17, 1, 47})[(r >> 16) % 5];
		if ((r >> 20) % 8 == 0)
			ip[6] = (uint8_t)fuzz_rnd(); /* fragment bits */
		if ((r >> 24) % 2 == 0) {	     /* the session */
			memcpy(ip + 12, (const uint8_t[]){10, 0, 0, 1, 10, 0, 0, 2}, 8);
			memcpy(ip + ihl, (const uint8_t[]){0x03, 0xe8, 0x00, 0x50}, 4);
		}
		ip[ihl + 13] = (uint8_t)((fuzz_rnd() % 2) ? 0x10 : fuzz_rnd());
		len = off + ihl + fuzz_rnd() % 40;
	}
	if (len > 160)
		len = 160;
	if (fuzz_rnd() % 4 == 0)
		len = fuzz_rnd() % (len + 1); /* cut */
	if (fuzz_rnd() % 4 == 0 && len > 0)
		buf[fuzz_rnd() % len] = (uint8_t)fuzz_rnd();
	return len;
}
#endif
