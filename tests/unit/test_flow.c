/*
 * DOCA Flow with softdpu's software classifier: the setup sequences of the GPUNetIO samples and
 * of the GPU packet processing application, fed with hand-built frames, and every documented
 * error path.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "doca_dev.h"
#include "doca_flow.h"
#include "sdp_flow.h"
#include "softdpu/flow.h"
#include "softdpu/sdp_pkt.h"
#include "t_helpers.h"
#include "t_refusal.h"

/* ---- frames ------------------------------------------------------------------------------------ */

struct t_frame {
	uint8_t b[128];
	uint32_t len;
};

struct t_flow {
	uint32_t src_ip, dst_ip; /* host order */
	uint16_t sport, dport;
	uint8_t proto;
	uint8_t tcp_flags;
	uint16_t vlan; /* nonzero: one 802.1Q tag with this id */
	int ip6;
};

/* Ethernet (+VLAN) / IPv4 or IPv6 / TCP, UDP or ICMP, with a small payload. */
static void t_build(struct t_frame *f, const struct t_flow *fl)
{
	static const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x01}, src[6] = {0x02, 0, 0, 0, 0, 0x02};
	uint8_t *p = f->b;
	uint32_t l4len = fl->proto == IPPROTO_TCP ? SDP_PKT_TCP_HLEN : SDP_PKT_UDP_HLEN;
	uint32_t off = SDP_PKT_ETH_HLEN;
	uint16_t type = fl->ip6 ? SDP_PKT_ETHERTYPE_IPV6 : SDP_PKT_ETHERTYPE_IPV4;
	uint8_t a[16] = {0}, b[16] = {0};

	memset(f, 0, sizeof(*f));
	if (fl->vlan != 0) {
		sdp_pkt_eth_build(p, dst, src, SDP_PKT_ETHERTYPE_VLAN);
		sdp_pkt_put16(p + off, fl->vlan);
		sdp_pkt_put16(p + off + 2, type);
		off += SDP_PKT_VLAN_HLEN;
	} else {
		sdp_pkt_eth_build(p, dst, src, type);
	}
	if (!fl->ip6) {
		sdp_pkt_put32(a, fl->src_ip);
		sdp_pkt_put32(b, fl->dst_ip);
		sdp_pkt_ip4_build(p + off, (uint16_t)(SDP_PKT_IP4_HLEN + l4len + 8), 0, 0,
				  fl->proto, a, b);
		off += SDP_PKT_IP4_HLEN;
	} else {
		sdp_pkt_put32(a + 12, fl->src_ip); /* low words of the addresses */
		sdp_pkt_put32(b + 12, fl->dst_ip);
		sdp_pkt_ip6_build(p + off, (uint16_t)(l4len + 8), fl->proto, a, b);
		off += SDP_PKT_IP6_HLEN;
	}
	if (fl->proto == IPPROTO_TCP) {
		sdp_pkt_tcp_build(p + off, fl->sport, fl->dport, 0, 0, fl->tcp_flags, 0);
	} else if (fl->proto == IPPROTO_UDP) {
		sdp_pkt_udp_build(p + off, fl->sport, fl->dport, 16);
	} else {
		p[off] = 8; /* echo request */
		sdp_pkt_put16(p + off + 4, fl->sport);
	}
	f->len = off + l4len + 8;
}

static void t_build_arp(struct t_frame *f)
{
	memset(f, 0, sizeof(*f));
	memset(f->b, 0xff, 6);
	sdp_pkt_put16(f->b + SDP_PKT_ETH_TYPE, SDP_PKT_ETHERTYPE_ARP);
	f->len = 60;
}

static const char *t_verdict_name(int v)
{
	switch (v) {
	case SDP_FLOW_FORWARD:
		return "FORWARD";
	case SDP_FLOW_DROP:
		return "DROP";
	case SDP_FLOW_NO_RULES:
		return "NO_RULES";
	case SDP_FLOW_MISS:
		return "MISS";
	default:
		return "?";
	}
}

/* Classify a flow's frame; expect a verdict and, for FORWARD, a queue (-1: any). */
#define T_CLASSIFY(port, flow, want_verdict, want_queue)                                           \
	do {                                                                                       \
		struct t_frame t_f_;                                                               \
		uint16_t t_q_ = 0xffff;                                                            \
		int t_wq_ = (want_queue);                                                          \
		int t_v_;                                                                          \
		t_build(&t_f_, (flow));                                                            \
		t_v_ = sdp_flow_classify((port), t_f_.b, t_f_.len, &t_q_);                         \
		if (t_v_ != (want_verdict))                                                        \
			t_fail("classify %s: expected %s, got %s", #flow,                          \
			       t_verdict_name(want_verdict), t_verdict_name(t_v_));                \
		else if (t_v_ == SDP_FLOW_FORWARD && t_wq_ >= 0 && t_q_ != t_wq_)                  \
			t_fail("classify %s: expected queue %d, got %u", #flow, t_wq_, t_q_);      \
	} while (0)

static int t_classify_q(struct doca_flow_port *port, const struct t_flow *fl, uint16_t *q)
{
	struct t_frame f;

	t_build(&f, fl);
	return sdp_flow_classify(port, f.b, f.len, q);
}

/* ---- devices --------------------------------------------------------------------------------- */

static struct doca_dev *t_open_dev(const char *ibdev)
{
	struct doca_devinfo **list = NULL;
	struct doca_dev *dev = NULL;
	uint32_t n = 0;

	if (doca_devinfo_create_list(&list, &n) != DOCA_SUCCESS)
		return NULL;
	for (uint32_t i = 0; i < n && dev == NULL; i++) {
		char name[DOCA_DEVINFO_IBDEV_NAME_SIZE] = "";

		if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) == DOCA_SUCCESS &&
		    strcmp(name, ibdev) == 0 && doca_dev_open(list[i], &dev) != DOCA_SUCCESS)
			dev = NULL;
	}
	doca_devinfo_destroy_list(list);
	return dev;
}

/* ---- helpers for the sample setups ------------------------------------------------------------ */

static struct doca_flow_port *t_port_start(struct doca_dev *dev, uint16_t id)
{
	struct doca_flow_port_cfg *pcfg = NULL;
	struct doca_flow_port *port = NULL;

	T_OK(doca_flow_port_cfg_create(&pcfg));
	T_OK(doca_flow_port_cfg_set_port_id(pcfg, id));
	T_OK(doca_flow_port_cfg_set_dev(pcfg, dev));
	T_OK(doca_flow_port_start(pcfg, &port));
	T_OK(doca_flow_port_cfg_destroy(pcfg));
	return port;
}

static struct doca_flow_pipe *
t_pipe(struct doca_flow_port *port, const char *name, enum doca_flow_pipe_type type, bool root,
       const struct doca_flow_match *match, const struct doca_flow_match *mask,
       const struct doca_flow_fwd *fwd, const struct doca_flow_fwd *fwd_miss)
{
	struct doca_flow_monitor mon = {.counter_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED};
	struct doca_flow_pipe_cfg *cfg = NULL;
	struct doca_flow_pipe *pipe = NULL;

	T_OK(doca_flow_pipe_cfg_create(&cfg, port));
	T_OK(doca_flow_pipe_cfg_set_name(cfg, name));
	T_OK(doca_flow_pipe_cfg_set_type(cfg, type));
	T_OK(doca_flow_pipe_cfg_set_is_root(cfg, root));
	if (match != NULL)
		T_OK(doca_flow_pipe_cfg_set_match(cfg, match, mask));
	T_OK(doca_flow_pipe_cfg_set_monitor(cfg, &mon));
	T_OK(doca_flow_pipe_create(cfg, fwd, fwd_miss, &pipe));
	T_OK(doca_flow_pipe_cfg_destroy(cfg));
	return pipe;
}

static doca_error_t t_ctrl_entry(struct doca_flow_pipe *root, const struct doca_flow_match *m,
				 const struct doca_flow_match *mask, uint32_t prio,
				 struct doca_flow_pipe *next, struct doca_flow_pipe_entry **e)
{
	struct doca_flow_fwd fwd = {.type = DOCA_FLOW_FWD_PIPE, .next_pipe = next};

	return doca_flow_pipe_control_add_entry(0, root, m, mask, NULL, NULL, NULL, NULL, NULL,
						prio, &fwd, NULL, e);
}

static uint64_t t_entry_pkts(const struct doca_flow_pipe_entry *e)
{
	uint64_t pkts = 0;

	T_OK(sdp_flow_entry_get_hits(e, &pkts, NULL));
	return pkts;
}

/* ---- configuration ----------------------------------------------------------------------------- */

static void test_cfg(struct doca_dev *dev)
{
	struct doca_flow_cfg *cfg = NULL;
	struct doca_flow_port_cfg *pcfg = NULL;
	struct doca_flow_port *port = NULL;

	T_STATUS(doca_flow_cfg_create(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_cfg_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_init(NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_flow_cfg_create(&cfg));
	T_STATUS(doca_flow_cfg_set_pipe_queues(NULL, 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_cfg_set_pipe_queues(cfg, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_cfg_set_nr_counters(NULL, 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_cfg_set_mode_args(NULL, "vnf"), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_cfg_set_mode_args(cfg, NULL), DOCA_ERROR_INVALID_VALUE);
	/* no mode yet */
	T_STATUS(doca_flow_init(cfg), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_cfg_set_mode_args(cfg, ""), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_cfg_set_mode_args(cfg, "bogus"), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_cfg_set_mode_args(cfg, "hws"), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_cfg_set_mode_args(cfg, "vnf,bogus"), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_cfg_set_mode_args(cfg, "switch"), DOCA_ERROR_NOT_SUPPORTED);
	T_STATUS(doca_flow_init(cfg), DOCA_ERROR_INVALID_VALUE); /* refused modes left no mode */
	T_OK(doca_flow_cfg_set_mode_args(cfg, "vnf"));
	T_OK(doca_flow_cfg_set_mode_args(cfg, "vnf,hws,isolated,use_doca_eth"));
	T_OK(doca_flow_cfg_set_mode_args(cfg, "vnf,hws"));
	T_OK(doca_flow_cfg_set_pipe_queues(cfg, 2));
	T_OK(doca_flow_cfg_set_nr_counters(cfg, 524228));

	/* ports need an initialised DOCA Flow and a device */
	T_STATUS(doca_flow_port_cfg_create(NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_flow_port_cfg_create(&pcfg));
	T_STATUS(doca_flow_port_cfg_set_dev(pcfg, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_port_cfg_set_dev(NULL, dev), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_port_cfg_set_port_id(NULL, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_port_start(pcfg, &port), DOCA_ERROR_INVALID_VALUE); /* no dev */
	T_OK(doca_flow_port_cfg_set_dev(pcfg, dev));
	T_STATUS(doca_flow_port_start(NULL, &port), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_port_start(pcfg, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_port_start(pcfg, &port), DOCA_ERROR_BAD_STATE); /* not initialised */
	T_TRUE(port == NULL);

	T_OK(doca_flow_init(cfg));
	T_STATUS(doca_flow_init(cfg), DOCA_ERROR_BAD_STATE);
	/* the samples destroy the cfg right after init */
	T_OK(doca_flow_cfg_destroy(cfg));
	T_OK(doca_flow_port_start(pcfg, &port));
	T_TRUE(port != NULL);
	/* one port per device and per id */
	T_STATUS(doca_flow_port_start(pcfg, &port), DOCA_ERROR_ALREADY_EXIST);
	/* the port holds the device */
	T_STATUS(doca_dev_close(dev), DOCA_ERROR_IN_USE);
	T_STATUS(doca_flow_port_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_flow_port_stop(port));
	T_STATUS(doca_flow_port_stop(port), DOCA_ERROR_INVALID_VALUE); /* already stopped */
	T_STATUS(doca_flow_port_cfg_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_flow_port_cfg_destroy(pcfg));
	doca_flow_destroy();
	doca_flow_destroy(); /* twice is harmless */
}

static void t_init(uint16_t queues, const char *mode)
{
	struct doca_flow_cfg *cfg = NULL;

	T_OK(doca_flow_cfg_create(&cfg));
	T_OK(doca_flow_cfg_set_pipe_queues(cfg, queues));
	T_OK(doca_flow_cfg_set_mode_args(cfg, mode));
	T_OK(doca_flow_cfg_set_nr_counters(cfg, 524228));
	T_OK(doca_flow_init(cfg));
	T_OK(doca_flow_cfg_destroy(cfg));
}

/* ---- gpunetio_simple_receive: a root control pipe sending UDP to a basic RSS pipe ------------- */

static void test_simple_receive(struct doca_dev *dev)
{
	uint16_t rxq_id = 0;
	struct doca_flow_match udp_match = {
		.parser_meta = {.outer_l3_type = DOCA_FLOW_L3_META_IPV4,
				.outer_l4_type = DOCA_FLOW_L4_META_UDP}};
	struct doca_flow_fwd fwd = {.type = DOCA_FLOW_FWD_RSS,
				    .rss_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED,
				    .rss = {.outer_flags = DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_UDP,
					    .queues_array = &rxq_id,
					    .nr_queues = 1}};
	struct doca_flow_fwd miss = {.type = DOCA_FLOW_FWD_DROP};
	struct doca_flow_match root_udp = {
		.outer = {.l3_type = DOCA_FLOW_L3_TYPE_IP4, .ip4.next_proto = IPPROTO_UDP}};
	struct doca_flow_pipe *udp_pipe, *root;
	struct doca_flow_pipe_entry *e_udp = NULL, *e_root = NULL;
	struct doca_flow_port *port;
	struct t_flow udp = {0x0a000001, 0x0a000002, 1000, 2000, IPPROTO_UDP, 0, 0, 0};
	struct t_flow tcp = {0x0a000001, 0x0a000002, 1000, 80, IPPROTO_TCP, 0x10, 0, 0};
	struct t_frame arp;
	uint64_t hits = 0, misses = 0;
	uint16_t q;

	t_init(1, "vnf");
	port = t_port_start(dev, 0);
	/* no root pipe yet: the engine's default */
	T_CLASSIFY(port, &udp, SDP_FLOW_NO_RULES, -1);

	udp_pipe = t_pipe(port, "GPU_RXQ_UDP_PIPE", DOCA_FLOW_PIPE_BASIC, false, &udp_match, NULL,
			  &fwd, &miss);
	T_OK(doca_flow_pipe_basic_add_entry(0, udp_pipe, NULL, 0, NULL, NULL, NULL, 0, NULL,
					    &e_udp));
	root = t_pipe(port, "ROOT_PIPE", DOCA_FLOW_PIPE_CONTROL, true, NULL, NULL, NULL, NULL);
	T_OK(t_ctrl_entry(root, &root_udp, NULL, 0, udp_pipe, &e_root));
	T_OK(doca_flow_entries_process(port, 0, 0, 0));

	/* UDP to the queue id, TCP misses the root (no miss action), non-IP too */
	rxq_id = 7; /* the pipe copied the queue array */
	for (int i = 0; i < 5; i++)
		T_CLASSIFY(port, &udp, SDP_FLOW_FORWARD, 0);
	T_CLASSIFY(port, &tcp, SDP_FLOW_MISS, -1);
	t_build_arp(&arp);
	T_EQ_INT(sdp_flow_classify(port, arp.b, arp.len, &q), SDP_FLOW_MISS);
	/* a VLAN tag does not hide the UDP packet; IPv6 UDP is not IPv4 */
	udp.vlan = 5;
	T_CLASSIFY(port, &udp, SDP_FLOW_FORWARD, 0);
	udp.vlan = 0;
	udp.ip6 = 1;
	T_CLASSIFY(port, &udp, SDP_FLOW_MISS, -1);
	udp.ip6 = 0;

	T_EQ_INT(t_entry_pkts(e_udp), 6);
	T_EQ_INT(t_entry_pkts(e_root), 6);
	T_OK(sdp_flow_pipe_get_hits(root, &hits, &misses));
	T_EQ_INT(hits, 6);
	T_EQ_INT(misses, 3);
	T_OK(sdp_flow_pipe_get_hits(udp_pipe, &hits, NULL));
	T_EQ_INT(hits, 6);
	T_STATUS(sdp_flow_pipe_get_hits(NULL, &hits, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_flow_entry_get_hits(NULL, &hits, NULL), DOCA_ERROR_INVALID_VALUE);

	/* the engine's view: the port of this device, kept valid past port_stop */
	{
		struct doca_flow_port *eng = sdp_flow_port_get(dev);

		T_TRUE(eng == port);
		T_OK(doca_flow_pipe_remove_entry(0, DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, e_root));
		T_CLASSIFY(port, &udp, SDP_FLOW_MISS, -1);
		doca_flow_pipe_destroy(root);
		T_CLASSIFY(port, &udp, SDP_FLOW_NO_RULES, -1);
		doca_flow_pipe_destroy(udp_pipe);
		T_OK(doca_flow_port_stop(port));
		if (eng != NULL) {
			T_CLASSIFY(eng, &udp, SDP_FLOW_NO_RULES, -1);
			sdp_flow_port_put(eng);
		}
		T_TRUE(sdp_flow_port_get(dev) == NULL);
	}
	doca_flow_destroy();
}

/* ---- the GPU packet processing application's steering ------------------------------------------ */

#define T_MAXQ 4
enum {
	T_UDP_Q0 = 0,
	T_TCP_Q0 = 4,
	T_HTTP_Q0 = 8,
	T_TCPCPU_Q0 = 12,
	T_ICMP_Q = 16
};

static int t_in_range(uint16_t q, int first, int n)
{
	return q >= first && q < first + n;
}

static void test_gpu_packet_processing(struct doca_dev *dev)
{
	uint16_t udp_q[T_MAXQ], tcp_q[T_MAXQ], cpu_q[T_MAXQ], icmp_q = T_ICMP_Q;
	struct doca_flow_fwd udp_fwd = {
		.type = DOCA_FLOW_FWD_RSS,
		.rss_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED,
		.rss = {.outer_flags = DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_UDP,
			.queues_array = udp_q,
			.nr_queues = T_MAXQ}};
	struct doca_flow_fwd tcp_fwd = udp_fwd, cpu_fwd = udp_fwd, icmp_fwd = udp_fwd;
	struct doca_flow_fwd drop = {.type = DOCA_FLOW_FWD_DROP};
	struct doca_flow_match udp_m = {.parser_meta = {.outer_l3_type = DOCA_FLOW_L3_META_IPV4,
							.outer_l4_type = DOCA_FLOW_L4_META_UDP}};
	struct doca_flow_match tcp_m = {.parser_meta = {.outer_l3_type = DOCA_FLOW_L3_META_IPV4,
							.outer_l4_type = DOCA_FLOW_L4_META_TCP}};
	struct doca_flow_match icmp_m = {.parser_meta = {.outer_l3_type = DOCA_FLOW_L3_META_IPV4,
							 .outer_l4_type = DOCA_FLOW_L4_META_ICMP}};
	/* established sessions: per-entry addresses and ports */
	struct doca_flow_match session_tmpl = {
		.parser_meta = {.outer_l3_type = DOCA_FLOW_L3_META_IPV4,
				.outer_l4_type = DOCA_FLOW_L4_META_TCP},
		.outer = {.l3_type = DOCA_FLOW_L3_TYPE_IP4,
			  .ip4 = {.src_ip = 0xffffffff, .dst_ip = 0xffffffff},
			  .l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_TCP,
			  .tcp.l4_port = {.src_port = 0xffff, .dst_port = 0xffff}}};
	struct doca_flow_pipe *udp_pipe, *tcp_gpu_pipe, *tcp_cpu_pipe, *icmp_pipe, *root;
	struct doca_flow_pipe_entry *e, *e_session = NULL, *e_flags[3] = {NULL, NULL, NULL};
	struct doca_flow_fwd to_cpu;
	struct doca_flow_port *port;
	uint8_t flags[3] = {DOCA_FLOW_MATCH_TCP_FLAG_SYN, DOCA_FLOW_MATCH_TCP_FLAG_FIN,
			    DOCA_FLOW_MATCH_TCP_FLAG_RST};
	unsigned int per_q[T_MAXQ] = {0};
	struct t_flow fl;
	uint16_t q, q2;
	uint64_t hits = 0, misses = 0;

	for (int i = 0; i < T_MAXQ; i++) {
		udp_q[i] = (uint16_t)(T_UDP_Q0 + i);
		tcp_q[i] = (uint16_t)(T_TCP_Q0 + i);
		cpu_q[i] = (uint16_t)(T_TCPCPU_Q0 + i);
	}
	tcp_fwd.rss.queues_array = tcp_q;
	tcp_fwd.rss.outer_flags = DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_TCP;
	cpu_fwd.rss.queues_array = cpu_q;
	cpu_fwd.rss.outer_flags = DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_TCP;
	icmp_fwd.rss.queues_array = &icmp_q;
	icmp_fwd.rss.nr_queues = 1;
	icmp_fwd.rss.outer_flags = DOCA_FLOW_RSS_IPV4;

	t_init(T_MAXQ, "vnf,hws");
	port = t_port_start(dev, 0);
	udp_pipe =
		t_pipe(port, "UDP_GPU", DOCA_FLOW_PIPE_BASIC, false, &udp_m, NULL, &udp_fwd, &drop);
	tcp_cpu_pipe =
		t_pipe(port, "TCP_CPU", DOCA_FLOW_PIPE_BASIC, false, &tcp_m, NULL, &cpu_fwd, &drop);
	to_cpu = (struct doca_flow_fwd){.type = DOCA_FLOW_FWD_PIPE, .next_pipe = tcp_cpu_pipe};
	tcp_gpu_pipe = t_pipe(port, "TCP_GPU", DOCA_FLOW_PIPE_BASIC, false, &session_tmpl, NULL,
			      &tcp_fwd, &to_cpu);
	icmp_pipe = t_pipe(port, "ICMP_GPU", DOCA_FLOW_PIPE_BASIC, false, &icmp_m, NULL, &icmp_fwd,
			   &drop);
	T_OK(doca_flow_pipe_basic_add_entry(0, udp_pipe, NULL, 0, NULL, NULL, NULL,
					    DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, NULL, &e));
	T_OK(doca_flow_pipe_basic_add_entry(1, tcp_cpu_pipe, NULL, 0, NULL, NULL, NULL,
					    DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, NULL, &e));
	T_OK(doca_flow_pipe_basic_add_entry(2, icmp_pipe, NULL, 0, NULL, NULL, NULL,
					    DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, NULL, &e));
	for (uint16_t i = 0; i < T_MAXQ; i++)
		T_OK(doca_flow_entries_process(port, i, 0, 0));

	root = t_pipe(port, "ROOT", DOCA_FLOW_PIPE_CONTROL, true, NULL, NULL, NULL, NULL);
	T_OK(t_ctrl_entry(root, &udp_m, NULL, 0, udp_pipe, &e));
	T_OK(t_ctrl_entry(root, &icmp_m, NULL, 0, icmp_pipe, &e));
	/* TCP by flags first (priority 1), the rest of TCP later (priority 3), in any order */
	T_OK(t_ctrl_entry(root, &tcp_m, NULL, 3, tcp_gpu_pipe, &e));
	for (int i = 0; i < 3; i++) {
		struct doca_flow_match m = tcp_m,
				       mask = {.parser_meta = {.outer_l3_type = UINT32_MAX,
							       .outer_l4_type = UINT32_MAX}};

		m.outer.tcp.flags = flags[i];
		mask.outer.tcp.flags = flags[i];
		T_OK(t_ctrl_entry(root, &m, &mask, 1, tcp_cpu_pipe, &e_flags[i]));
	}
	T_OK(doca_flow_entries_process(port, 0, 0, 0));

	/* UDP: RSS over the 4 UDP queues; every flow always to the same queue */
	for (uint32_t i = 0; i < 256; i++) {
		fl = (struct t_flow){0x0a000000 + i,
				     0x0a0000fe,
				     (uint16_t)(1024 + i * 7),
				     53,
				     IPPROTO_UDP,
				     0,
				     0,
				     0};
		T_EQ_INT(t_classify_q(port, &fl, &q), SDP_FLOW_FORWARD);
		T_TRUE(t_in_range(q, T_UDP_Q0, T_MAXQ));
		T_EQ_INT(t_classify_q(port, &fl, &q2), SDP_FLOW_FORWARD);
		T_EQ_INT(q2, q);
		if (t_in_range(q, T_UDP_Q0, T_MAXQ))
			per_q[q - T_UDP_Q0]++;
	}
	for (int i = 0; i < T_MAXQ; i++)
		if (per_q[i] < 256 / T_MAXQ / 2)
			t_fail("RSS: queue %d got %u of 256 flows, expected about 64", i, per_q[i]);

	/* ICMP to its single queue */
	fl = (struct t_flow){0x0a000001, 0x0a000002, 77, 0, IPPROTO_ICMP, 0, 0, 0};
	T_CLASSIFY(port, &fl, SDP_FLOW_FORWARD, T_ICMP_Q);

	/* TCP of an unknown session: SYN and plain ACK both end on a CPU queue */
	fl = (struct t_flow){
		0x0a000001, 0x0a000002, 40000, 80, IPPROTO_TCP, DOCA_FLOW_MATCH_TCP_FLAG_SYN, 0, 0};
	T_EQ_INT(t_classify_q(port, &fl, &q), SDP_FLOW_FORWARD);
	T_TRUE(t_in_range(q, T_TCPCPU_Q0, T_MAXQ));
	fl.tcp_flags = DOCA_FLOW_MATCH_TCP_FLAG_ACK;
	T_EQ_INT(t_classify_q(port, &fl, &q), SDP_FLOW_FORWARD);
	T_TRUE(t_in_range(q, T_TCPCPU_Q0, T_MAXQ));
	T_OK(sdp_flow_pipe_get_hits(tcp_gpu_pipe, &hits, &misses));
	T_EQ_INT(hits, 0);
	T_EQ_INT(misses, 1);

	/* the CPU thread offloads the session to the GPU queues */
	{
		struct doca_flow_match s = {0};

		s.outer.ip4.src_ip = htonl(0x0a000001);
		s.outer.ip4.dst_ip = htonl(0x0a000002);
		s.outer.tcp.l4_port.src_port = htons(40000);
		s.outer.tcp.l4_port.dst_port = htons(80);
		T_OK(doca_flow_pipe_basic_add_entry(1, tcp_gpu_pipe, &s, 0, NULL, NULL, NULL,
						    DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, NULL,
						    &e_session));
		T_OK(doca_flow_entries_process(port, 1, 0, 0));
	}
	T_EQ_INT(t_classify_q(port, &fl, &q), SDP_FLOW_FORWARD);
	T_TRUE(t_in_range(q, T_TCP_Q0, T_MAXQ));
	/* SYN/FIN/RST of the session still go to the CPU (higher priority) */
	for (int i = 0; i < 3; i++) {
		fl.tcp_flags = (uint8_t)(flags[i] | DOCA_FLOW_MATCH_TCP_FLAG_ACK);
		T_EQ_INT(t_classify_q(port, &fl, &q), SDP_FLOW_FORWARD);
		T_TRUE(t_in_range(q, T_TCPCPU_Q0, T_MAXQ));
		if (e_flags[i] != NULL)
			T_EQ_INT(t_entry_pkts(e_flags[i]), i == 0 ? 2 : 1);
	}
	/* another port of the same hosts is another session */
	fl.tcp_flags = DOCA_FLOW_MATCH_TCP_FLAG_ACK;
	fl.dport = 81;
	T_EQ_INT(t_classify_q(port, &fl, &q), SDP_FLOW_FORWARD);
	T_TRUE(t_in_range(q, T_TCPCPU_Q0, T_MAXQ));
	fl.dport = 80;
	if (e_session != NULL) {
		T_EQ_INT(t_entry_pkts(e_session), 1);
		/* session closed: back to the CPU */
		T_OK(doca_flow_pipe_remove_entry(1, DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, e_session));
	}
	T_EQ_INT(t_classify_q(port, &fl, &q), SDP_FLOW_FORWARD);
	T_TRUE(t_in_range(q, T_TCPCPU_Q0, T_MAXQ));

	/* entries on the wrong pipe type, bad queues, bad flags */
	T_STATUS(doca_flow_pipe_basic_add_entry(0, root, NULL, 0, NULL, NULL, NULL, 0, NULL, &e),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(t_ctrl_entry(udp_pipe, &udp_m, NULL, 0, icmp_pipe, &e), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_pipe_basic_add_entry(T_MAXQ, udp_pipe, NULL, 0, NULL, NULL, NULL, 0,
						NULL, &e),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_pipe_basic_add_entry(0, udp_pipe, NULL, 0, NULL, NULL, NULL,
						DOCA_FLOW_ENTRY_FLAGS_NO_WAIT |
							DOCA_FLOW_ENTRY_FLAGS_WAIT_FOR_BATCH,
						NULL, &e),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_pipe_basic_add_entry(0, udp_pipe, NULL, 0, NULL, NULL, NULL, 1u << 7,
						NULL, &e),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(
		doca_flow_pipe_basic_add_entry(0, udp_pipe, NULL, 1, NULL, NULL, NULL, 0, NULL, &e),
		DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_pipe_basic_add_entry(0, NULL, NULL, 0, NULL, NULL, NULL, 0, NULL, &e),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_pipe_basic_add_entry(0, udp_pipe, NULL, 0, NULL, NULL, NULL, 0, NULL,
						NULL),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_pipe_remove_entry(0, 0, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_entries_process(NULL, 0, 0, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_entries_process(port, T_MAXQ, 0, 0), DOCA_ERROR_INVALID_VALUE);
	/* a control entry needs a forward; a second root is refused */
	T_STATUS(doca_flow_pipe_control_add_entry(0, root, &udp_m, NULL, NULL, NULL, NULL, NULL,
						  NULL, 0, NULL, NULL, &e),
		 DOCA_ERROR_INVALID_VALUE);
	{
		struct doca_flow_pipe_cfg *cfg = NULL;
		struct doca_flow_pipe *p = NULL;

		T_OK(doca_flow_pipe_cfg_create(&cfg, port));
		T_OK(doca_flow_pipe_cfg_set_type(cfg, DOCA_FLOW_PIPE_CONTROL));
		T_OK(doca_flow_pipe_cfg_set_is_root(cfg, true));
		T_STATUS(doca_flow_pipe_create(cfg, NULL, NULL, &p), DOCA_ERROR_ALREADY_EXIST);
		T_OK(doca_flow_pipe_cfg_set_is_root(cfg, false));
		T_STATUS(doca_flow_pipe_create(cfg, &drop, NULL, &p), DOCA_ERROR_INVALID_VALUE);
		T_TRUE(p == NULL);
		T_OK(doca_flow_pipe_cfg_destroy(cfg));
	}
	/* port stop takes the pipes and entries with it (as the application does) */
	T_OK(doca_flow_port_stop(port));
	doca_flow_destroy();
}

/* ---- RSS details, WAIT_FOR_BATCH, field matching ----------------------------------------------- */

static void test_rss_and_fields(struct doca_dev *dev)
{
	uint16_t qs[4] = {20, 21, 22, 23};
	struct doca_flow_fwd sym = {
		.type = DOCA_FLOW_FWD_RSS,
		.rss = {.outer_flags = DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_TCP,
			.queues_array = qs,
			.nr_queues = 4,
			.rss_hash_func = DOCA_FLOW_RSS_HASH_FUNCTION_SYMMETRIC_TOEPLITZ}};
	struct doca_flow_fwd one = {.type = DOCA_FLOW_FWD_RSS,
				    .rss_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED,
				    .rss = {.queues_array = &qs[3], .nr_queues = 1}};
	struct doca_flow_fwd drop = {.type = DOCA_FLOW_FWD_DROP};
	struct doca_flow_match tcp = {.outer = {.l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_TCP}};
	struct doca_flow_match v6 = {.parser_meta = {.outer_l3_type = DOCA_FLOW_L3_META_IPV6}};
	struct doca_flow_match dport = {.outer = {.l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_TRANSPORT,
						  .transport.dst_port = htons(4791)}};
	struct doca_flow_match vlan = {
		.outer = {.l2_valid_headers = DOCA_FLOW_L2_VALID_HEADER_VLAN_0,
			  .eth_vlan[0].tci = htons(42)}};
	struct doca_flow_match dst = {
		.outer = {.l3_type = DOCA_FLOW_L3_TYPE_IP4, .ip4.dst_ip = htonl(0xc0a80000)}};
	struct doca_flow_match dst_mask = {.outer = {.ip4.dst_ip = htonl(0xffff0000)}};
	struct doca_flow_pipe *root, *batch;
	struct doca_flow_pipe_entry *e, *pending = NULL;
	struct doca_flow_port *port;
	struct t_flow a = {0x0a000001, 0x0a000002, 1234, 80, IPPROTO_TCP, 0x10, 0, 0};
	struct t_flow b = {0x0a000002, 0x0a000001, 80, 1234, IPPROTO_TCP, 0x10, 0, 0};
	uint16_t qa = 0, qb = 0;

	t_init(2, "vnf");
	port = t_port_start(dev, 3);
	root = t_pipe(port, "root", DOCA_FLOW_PIPE_CONTROL, true, NULL, NULL, NULL, &drop);
	/* priorities: lower first; equal priorities in the order added */
	T_OK(doca_flow_pipe_control_add_entry(0, root, &vlan, NULL, NULL, NULL, NULL, NULL, NULL, 0,
					      &one, NULL, &e));
	T_OK(doca_flow_pipe_control_add_entry(0, root, &dst, &dst_mask, NULL, NULL, NULL, NULL,
					      NULL, 1, &drop, NULL, &e));
	T_OK(doca_flow_pipe_control_add_entry(0, root, &dport, NULL, NULL, NULL, NULL, NULL, NULL,
					      2, &one, NULL, &e));
	T_OK(doca_flow_pipe_control_add_entry(0, root, &v6, NULL, NULL, NULL, NULL, NULL, NULL, 2,
					      &one, NULL, &e));
	T_OK(doca_flow_pipe_control_add_entry(0, root, &tcp, NULL, NULL, NULL, NULL, NULL, NULL, 5,
					      &sym, NULL, &e));

	/* symmetric Toeplitz: both directions of a connection on one queue */
	T_EQ_INT(t_classify_q(port, &a, &qa), SDP_FLOW_FORWARD);
	T_EQ_INT(t_classify_q(port, &b, &qb), SDP_FLOW_FORWARD);
	T_TRUE(qa >= 20 && qa <= 23);
	T_EQ_INT(qb, qa);
	/* VLAN 42 wins over the TCP rule; another VLAN id does not */
	a.vlan = 42;
	T_CLASSIFY(port, &a, SDP_FLOW_FORWARD, 23);
	a.vlan = 43;
	T_CLASSIFY(port, &a, SDP_FLOW_FORWARD, qa);
	a.vlan = 0;
	/* a masked destination prefix drops (192.168.0.0/16) */
	a.dst_ip = 0xc0a80105;
	T_CLASSIFY(port, &a, SDP_FLOW_DROP, -1);
	a.dst_ip = 0xc0a90105;
	T_CLASSIFY(port, &a, SDP_FLOW_FORWARD, -1);
	/* transport port match: UDP or TCP, not ICMP */
	a = (struct t_flow){0x0a000001, 0x0a000002, 5, 4791, IPPROTO_UDP, 0, 0, 0};
	T_CLASSIFY(port, &a, SDP_FLOW_FORWARD, 23);
	a.proto = IPPROTO_ICMP;			 /* ident 5, no ports */
	T_CLASSIFY(port, &a, SDP_FLOW_DROP, -1); /* root miss action: drop */
	/* IPv6 by parser meta */
	a = (struct t_flow){1, 2, 7, 8, IPPROTO_UDP, 0, 0, 1};
	T_CLASSIFY(port, &a, SDP_FLOW_FORWARD, 23);
	/* truncated frames never crash and never match TCP fields */
	{
		struct t_frame f;
		uint16_t q;

		t_build(&f, &b);
		for (uint32_t len = 0; len < f.len; len++) {
			int v = sdp_flow_classify(port, f.b, len, &q);

			T_TRUE(v == SDP_FLOW_DROP || v == SDP_FLOW_FORWARD);
		}
		T_EQ_INT(sdp_flow_classify(port, NULL, 0, &q), SDP_FLOW_DROP);
	}

	/* WAIT_FOR_BATCH: the entry works only after entries_process on its queue */
	batch = t_pipe(port, "batch", DOCA_FLOW_PIPE_BASIC, false, NULL, NULL, &one, NULL);
	T_OK(doca_flow_pipe_control_add_entry(
		0, root, &v6, NULL, NULL, NULL, NULL, NULL, NULL, 0,
		&(struct doca_flow_fwd){.type = DOCA_FLOW_FWD_PIPE, .next_pipe = batch}, NULL, &e));
	T_CLASSIFY(port, &a, SDP_FLOW_DROP, -1); /* batch pipe empty: its miss is a drop */
	T_OK(doca_flow_pipe_basic_add_entry(1, batch, NULL, 0, NULL, NULL, NULL,
					    DOCA_FLOW_ENTRY_FLAGS_WAIT_FOR_BATCH, NULL, &pending));
	T_CLASSIFY(port, &a, SDP_FLOW_DROP, -1);
	T_OK(doca_flow_entries_process(port, 0, 100, 0)); /* another queue: nothing */
	T_CLASSIFY(port, &a, SDP_FLOW_DROP, -1);
	T_OK(doca_flow_entries_process(port, 1, 100, 0));
	T_CLASSIFY(port, &a, SDP_FLOW_FORWARD, 23);
	/* destroying a pipe others forward to turns those forwards into drops */
	doca_flow_pipe_destroy(batch);
	T_CLASSIFY(port, &a, SDP_FLOW_DROP, -1);

	/* doca_flow_destroy stops what is still started */
	doca_flow_destroy();
	T_TRUE(sdp_flow_port_get(dev) == NULL);
}

/* ---- basic pipes: per-entry fields, masks, own forwards, batches ------------------------------- */

static void test_basic_templates(struct doca_dev *dev)
{
	uint16_t q30 = 30, q32 = 32, q33 = 33;
	struct doca_flow_fwd f30 = {.type = DOCA_FLOW_FWD_RSS,
				    .rss = {.queues_array = &q30, .nr_queues = 1}};
	struct doca_flow_fwd f32 = f30, f33 = f30, drop = {.type = DOCA_FLOW_FWD_DROP};
	struct doca_flow_match by_dport = {.outer = {.l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_UDP,
						     .udp.l4_port.dst_port = 0xffff}};
	struct doca_flow_match by_net = {.outer.ip4.dst_ip = 0xffffffff};
	struct doca_flow_match net_mask = {.outer.ip4.dst_ip = htonl(0xffffff00)};
	struct doca_flow_match em = {0};
	struct doca_flow_pipe *root, *masked;
	struct doca_flow_pipe_entry *e, *e53 = NULL;
	struct doca_flow_port *port;
	struct doca_flow_fwd miss;
	struct t_flow fl = {0x0a000001, 0x0a010203, 1111, 53, IPPROTO_UDP, 0, 0, 0};

	f32.rss.queues_array = &q32;
	f33.rss.queues_array = &q33;
	t_init(1, "vnf");
	port = t_port_start(dev, 9);
	masked = t_pipe(port, "masked", DOCA_FLOW_PIPE_BASIC, false, &by_net, &net_mask, &f33,
			&drop);
	miss = (struct doca_flow_fwd){.type = DOCA_FLOW_FWD_PIPE, .next_pipe = masked};
	/* a basic pipe may be the root */
	root = t_pipe(port, "by_dport", DOCA_FLOW_PIPE_BASIC, true, &by_dport, NULL, &f30, &miss);

	em.outer.udp.l4_port.dst_port = htons(53);
	T_OK(doca_flow_pipe_basic_add_entry(0, root, &em, 0, NULL, NULL, &f32, 0, NULL, &e53));
	em.outer.udp.l4_port.dst_port = htons(5353);
	T_OK(doca_flow_pipe_basic_add_entry(0, root, &em, 0, NULL, NULL, NULL, 0, NULL, &e));
	em = (struct doca_flow_match){.outer.ip4.dst_ip = htonl(0x0a010200)};
	T_OK(doca_flow_pipe_basic_add_entry(0, masked, &em, 0, NULL, NULL, NULL, 0, NULL, &e));

	T_CLASSIFY(port, &fl, SDP_FLOW_FORWARD, 32); /* the entry's own forward */
	fl.dport = 5353;
	T_CLASSIFY(port, &fl, SDP_FLOW_FORWARD, 30); /* the pipe's forward */
	fl.dport = 80;
	T_CLASSIFY(port, &fl, SDP_FLOW_FORWARD, 33); /* miss -> masked pipe, 10.1.2.0/24 */
	fl.dst_ip = 0x0a010301;
	T_CLASSIFY(port, &fl, SDP_FLOW_DROP, -1);
	fl = (struct t_flow){0x0a000001, 0x0a0102fe, 1111, 53, IPPROTO_TCP, 0x02, 0, 0};
	T_CLASSIFY(port, &fl, SDP_FLOW_FORWARD, 33); /* TCP to port 53 is not the UDP rule */
	if (e53 != NULL)
		T_EQ_INT(t_entry_pkts(e53), 1);

	/* WAIT_FOR_BATCH entries, processed a bounded number at a time */
	fl = (struct t_flow){0x0a000001, 0x0a000009, 1111, 7, IPPROTO_UDP, 0, 0, 0};
	em = (struct doca_flow_match){0};
	em.outer.udp.l4_port.dst_port = htons(7);
	T_OK(doca_flow_pipe_basic_add_entry(0, root, &em, 0, NULL, NULL, NULL,
					    DOCA_FLOW_ENTRY_FLAGS_WAIT_FOR_BATCH, NULL, &e));
	em.outer.udp.l4_port.dst_port = htons(9);
	T_OK(doca_flow_pipe_basic_add_entry(0, root, &em, 0, NULL, NULL, NULL,
					    DOCA_FLOW_ENTRY_FLAGS_WAIT_FOR_BATCH, NULL, &e));
	T_CLASSIFY(port, &fl, SDP_FLOW_DROP, -1);
	T_OK(doca_flow_entries_process(port, 0, 0, 1));
	T_CLASSIFY(port, &fl, SDP_FLOW_FORWARD, 30);
	fl.dport = 9;
	T_CLASSIFY(port, &fl, SDP_FLOW_DROP, -1);
	/* a waiting entry can be removed; then processing has nothing to apply */
	T_OK(doca_flow_pipe_remove_entry(0, 0, e));
	T_OK(doca_flow_entries_process(port, 0, 0, 0));
	T_CLASSIFY(port, &fl, SDP_FLOW_DROP, -1);

	T_OK(doca_flow_port_stop(port));
	doca_flow_destroy();
}

/* ---- many exact-match entries (the TCP session table of the application) ---------------------- */

#define T_SESSIONS 3000

static void test_many_sessions(struct doca_dev *dev)
{
	static struct doca_flow_pipe_entry *ents[T_SESSIONS];
	static uint16_t qids[T_SESSIONS];
	struct doca_flow_match tmpl = {
		.outer = {.l3_type = DOCA_FLOW_L3_TYPE_IP4,
			  .ip4 = {.src_ip = 0xffffffff, .dst_ip = 0xffffffff},
			  .l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_TCP,
			  .tcp.l4_port = {.src_port = 0xffff, .dst_port = 0xffff}}};
	struct doca_flow_fwd drop = {.type = DOCA_FLOW_FWD_DROP};
	struct doca_flow_pipe *pipe;
	struct doca_flow_port *port;
	int wrong = 0;

	t_init(1, "vnf");
	port = t_port_start(dev, 0);
	pipe = t_pipe(port, "sessions", DOCA_FLOW_PIPE_BASIC, true, &tmpl, NULL, NULL, &drop);
	for (int i = 0; i < T_SESSIONS; i++) {
		struct doca_flow_match m = {0};
		struct doca_flow_fwd f = {.type = DOCA_FLOW_FWD_RSS,
					  .rss = {.queues_array = &qids[i], .nr_queues = 1}};

		qids[i] = (uint16_t)(i % 50);
		m.outer.ip4.src_ip = htonl(0x0a000000u + (uint32_t)i);
		m.outer.ip4.dst_ip = htonl(0x0a640001u);
		m.outer.tcp.l4_port.src_port = htons((uint16_t)(10000 + i));
		m.outer.tcp.l4_port.dst_port = htons(80);
		ents[i] = NULL;
		T_OK(doca_flow_pipe_basic_add_entry(0, pipe, &m, 0, NULL, NULL, &f,
						    DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, NULL, &ents[i]));
	}
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < T_SESSIONS; i++) {
			struct t_flow fl = {0x0a000000u + (uint32_t)i,
					    0x0a640001u,
					    (uint16_t)(10000 + i),
					    80,
					    IPPROTO_TCP,
					    0x10,
					    0,
					    0};
			int removed = pass == 1 && i % 2 == 0;
			uint16_t q = 0xffff;
			int v = t_classify_q(port, &fl, &q);

			if (removed ? v != SDP_FLOW_DROP : (v != SDP_FLOW_FORWARD || q != i % 50))
				wrong++;
		}
		if (pass == 0)
			for (int i = 0; i < T_SESSIONS; i += 2)
				if (ents[i] != NULL)
					T_OK(doca_flow_pipe_remove_entry(0, 0, ents[i]));
	}
	T_EQ_INT(wrong, 0);
	if (ents[1] != NULL)
		T_EQ_INT(t_entry_pkts(ents[1]), 2);
	/* an unknown session misses */
	{
		struct t_flow fl = {0x0b000000, 0x0a640001, 10000, 80, IPPROTO_TCP, 0x10, 0, 0};

		T_CLASSIFY(port, &fl, SDP_FLOW_DROP, -1);
	}
	T_OK(doca_flow_port_stop(port));
	doca_flow_destroy();
}

/* ---- what the classifier cannot honour, and lifecycle errors ----------------------------------- */

static doca_error_t t_try_pipe(struct doca_flow_port *port, enum doca_flow_pipe_type type,
			       const struct doca_flow_match *match,
			       const struct doca_flow_monitor *mon, const struct doca_flow_fwd *fwd)
{
	struct doca_flow_pipe_cfg *cfg = NULL;
	struct doca_flow_pipe *pipe = NULL;
	doca_error_t status;

	T_OK(doca_flow_pipe_cfg_create(&cfg, port));
	T_OK(doca_flow_pipe_cfg_set_type(cfg, type));
	if (match != NULL)
		T_OK(doca_flow_pipe_cfg_set_match(cfg, match, NULL));
	if (mon != NULL)
		T_OK(doca_flow_pipe_cfg_set_monitor(cfg, mon));
	status = doca_flow_pipe_create(cfg, fwd, NULL, &pipe);
	if (status == DOCA_SUCCESS)
		doca_flow_pipe_destroy(pipe);
	else if (pipe != NULL)
		t_fail("pipe_create failed with %s but set the pipe", doca_error_get_name(status));
	T_OK(doca_flow_pipe_cfg_destroy(cfg));
	return status;
}

static void test_unsupported_and_states(struct doca_dev *dev, struct doca_dev *dev2)
{
	uint16_t q = 1;
	struct doca_flow_fwd rss = {
		.type = DOCA_FLOW_FWD_RSS,
		.rss = {.outer_flags = DOCA_FLOW_RSS_IPV4, .queues_array = &q, .nr_queues = 1}};
	struct doca_flow_fwd fwd;
	struct doca_flow_match m;
	struct doca_flow_monitor mon;
	struct doca_flow_port *port, *port2;
	struct doca_flow_pipe *basic, *other, *ctrl;
	struct doca_flow_pipe_cfg *cfg = NULL, *stale = NULL;
	struct doca_flow_pipe_entry *e = NULL;
	uint64_t actions_storage[8] = {0};
	const struct doca_flow_actions *actions = (const struct doca_flow_actions *)actions_storage;
	const struct doca_flow_match_condition *cond =
		(const struct doca_flow_match_condition *)actions_storage;

	t_init(1, "vnf");
	port = t_port_start(dev, 0);
	port2 = t_port_start(dev2, 1);

	/* pipe types and forwards the software classifier does not have */
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_LPM, NULL, NULL, NULL), DOCA_ERROR_NOT_SUPPORTED);
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_HASH, NULL, NULL, NULL), DOCA_ERROR_NOT_SUPPORTED);
	fwd = (struct doca_flow_fwd){.type = DOCA_FLOW_FWD_PORT, .port_id = 1};
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, NULL, NULL, &fwd),
		 DOCA_ERROR_NOT_SUPPORTED);
	fwd = rss;
	fwd.rss_type = DOCA_FLOW_RESOURCE_TYPE_SHARED;
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, NULL, NULL, &fwd),
		 DOCA_ERROR_NOT_SUPPORTED);
	fwd = rss;
	fwd.rss.inner_flags = DOCA_FLOW_RSS_IPV4;
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, NULL, NULL, &fwd),
		 DOCA_ERROR_NOT_SUPPORTED);
	fwd = rss;
	fwd.rss.outer_flags |= DOCA_FLOW_RSS_ESP;
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, NULL, NULL, &fwd),
		 DOCA_ERROR_NOT_SUPPORTED);
	/* bad RSS and forward values */
	fwd = rss;
	fwd.rss.nr_queues = 0;
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, NULL, NULL, &fwd),
		 DOCA_ERROR_INVALID_VALUE);
	fwd = rss;
	fwd.rss.queues_array = NULL;
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, NULL, NULL, &fwd),
		 DOCA_ERROR_INVALID_VALUE);
	fwd = rss;
	fwd.rss.outer_flags = 1u << 20;
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, NULL, NULL, &fwd),
		 DOCA_ERROR_INVALID_VALUE);
	fwd = (struct doca_flow_fwd){.type = (enum doca_flow_fwd_type)42};
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, NULL, NULL, &fwd),
		 DOCA_ERROR_INVALID_VALUE);
	fwd = (struct doca_flow_fwd){.type = DOCA_FLOW_FWD_PIPE, .next_pipe = NULL};
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, NULL, NULL, &fwd),
		 DOCA_ERROR_INVALID_VALUE);

	/* monitors: counters yes, meters, shared counters and aging no */
	mon = (struct doca_flow_monitor){.meter_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED};
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, NULL, &mon, &rss),
		 DOCA_ERROR_NOT_SUPPORTED);
	mon = (struct doca_flow_monitor){.counter_type = DOCA_FLOW_RESOURCE_TYPE_SHARED};
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, NULL, &mon, &rss),
		 DOCA_ERROR_NOT_SUPPORTED);
	mon = (struct doca_flow_monitor){.aging_sec = 10};
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, NULL, &mon, &rss),
		 DOCA_ERROR_NOT_SUPPORTED);
	mon = (struct doca_flow_monitor){.counter_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED};
	T_OK(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, NULL, &mon, &rss));

	/* match fields the classifier does not implement */
	m = (struct doca_flow_match){.tun = {.type = DOCA_FLOW_TUN_VXLAN}};
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, &m, NULL, &rss), DOCA_ERROR_NOT_SUPPORTED);
	m = (struct doca_flow_match){.inner = {.l3_type = DOCA_FLOW_L3_TYPE_IP4}};
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, &m, NULL, &rss), DOCA_ERROR_NOT_SUPPORTED);
	m = (struct doca_flow_match){.meta = {.pkt_meta = 1}};
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, &m, NULL, &rss), DOCA_ERROR_NOT_SUPPORTED);
	m = (struct doca_flow_match){.parser_meta = {.outer_l4_checksum_ok = 1}};
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, &m, NULL, &rss), DOCA_ERROR_NOT_SUPPORTED);
	m = (struct doca_flow_match){.outer = {.eth_vlan[1].tci = 0xffff}};
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, &m, NULL, &rss), DOCA_ERROR_NOT_SUPPORTED);
	m = (struct doca_flow_match){.outer = {.l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_ROCE_V2}};
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, &m, NULL, &rss), DOCA_ERROR_NOT_SUPPORTED);
	/* a TCP-only field on a UDP match */
	m = (struct doca_flow_match){.outer = {.l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_UDP,
					       .tcp.flags = DOCA_FLOW_MATCH_TCP_FLAG_SYN}};
	T_STATUS(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, &m, NULL, &rss), DOCA_ERROR_NOT_SUPPORTED);
	/* what it does implement */
	m = (struct doca_flow_match){
		.outer = {.l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_ICMP, .icmp.type = 8}};
	T_OK(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, &m, NULL, &rss));
	m = (struct doca_flow_match){
		.outer = {.l3_type = DOCA_FLOW_L3_TYPE_IP6, .ip6.dst_ip = {1, 2, 3, 4}}};
	T_OK(t_try_pipe(port, DOCA_FLOW_PIPE_BASIC, &m, NULL, &rss));

	/* entries: actions, conditions, unsupported fields */
	basic = t_pipe(port, "basic", DOCA_FLOW_PIPE_BASIC, false, NULL, NULL, &rss, NULL);
	ctrl = t_pipe(port, "ctrl", DOCA_FLOW_PIPE_CONTROL, true, NULL, NULL, NULL, NULL);
	T_STATUS(
		doca_flow_pipe_basic_add_entry(0, basic, NULL, 0, actions, NULL, NULL, 0, NULL, &e),
		DOCA_ERROR_NOT_SUPPORTED);
	T_STATUS(doca_flow_pipe_control_add_entry(0, ctrl, NULL, NULL, cond, NULL, NULL, NULL, NULL,
						  0, &rss, NULL, &e),
		 DOCA_ERROR_NOT_SUPPORTED);
	T_STATUS(doca_flow_pipe_control_add_entry(0, ctrl, NULL, NULL, NULL, actions, NULL, NULL,
						  NULL, 0, &rss, NULL, &e),
		 DOCA_ERROR_NOT_SUPPORTED);
	m = (struct doca_flow_match){.tun = {.type = DOCA_FLOW_TUN_GRE}};
	T_STATUS(doca_flow_pipe_control_add_entry(0, ctrl, &m, NULL, NULL, NULL, NULL, NULL, NULL,
						  0, &rss, NULL, &e),
		 DOCA_ERROR_NOT_SUPPORTED);
	T_STATUS(doca_flow_pipe_basic_add_entry(0, basic, &m, 0, NULL, NULL, NULL, 0, NULL, &e),
		 DOCA_ERROR_NOT_SUPPORTED);
	mon = (struct doca_flow_monitor){.aging_sec = 1};
	T_STATUS(doca_flow_pipe_basic_add_entry(0, basic, NULL, 0, NULL, &mon, NULL, 0, NULL, &e),
		 DOCA_ERROR_NOT_SUPPORTED);
	T_TRUE(e == NULL);
	/* forwards to a pipe of another port, or to itself */
	other = t_pipe(port2, "other", DOCA_FLOW_PIPE_BASIC, false, NULL, NULL, &rss, NULL);
	fwd = (struct doca_flow_fwd){.type = DOCA_FLOW_FWD_PIPE, .next_pipe = other};
	T_STATUS(doca_flow_pipe_control_add_entry(0, ctrl, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
						  0, &fwd, NULL, &e),
		 DOCA_ERROR_INVALID_VALUE);
	fwd.next_pipe = ctrl;
	T_STATUS(doca_flow_pipe_control_add_entry(0, ctrl, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
						  0, &fwd, NULL, &e),
		 DOCA_ERROR_INVALID_VALUE);
	/* the pipe objects are still usable after all those refusals */
	T_OK(doca_flow_pipe_control_add_entry(
		0, ctrl, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0,
		&(struct doca_flow_fwd){.type = DOCA_FLOW_FWD_PIPE, .next_pipe = basic}, NULL, &e));
	T_OK(doca_flow_pipe_basic_add_entry(0, basic, NULL, 0, NULL, NULL, NULL, 0, NULL, &e));
	{
		struct t_flow fl = {1, 2, 3, 4, IPPROTO_UDP, 0, 0, 0};

		T_CLASSIFY(port, &fl, SDP_FLOW_FORWARD, 1);
		/* port 1 has no root pipe */
		T_CLASSIFY(port2, &fl, SDP_FLOW_NO_RULES, -1);
	}

	/* pipe configuration arguments */
	T_STATUS(doca_flow_pipe_cfg_create(NULL, port), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_pipe_cfg_create(&cfg, NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_flow_pipe_cfg_create(&cfg, port));
	T_STATUS(doca_flow_pipe_cfg_set_name(cfg, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_pipe_cfg_set_name(NULL, "x"), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_pipe_cfg_set_type(NULL, DOCA_FLOW_PIPE_BASIC), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_pipe_cfg_set_type(cfg, (enum doca_flow_pipe_type)99),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_pipe_cfg_set_is_root(NULL, true), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_pipe_cfg_set_match(cfg, NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_pipe_cfg_set_match(NULL, &m, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_pipe_cfg_set_monitor(cfg, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_pipe_cfg_set_monitor(NULL, &mon), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_pipe_cfg_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_pipe_create(NULL, NULL, NULL, &basic), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_flow_pipe_create(cfg, NULL, NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_flow_pipe_cfg_destroy(cfg));
	doca_flow_pipe_destroy(NULL); /* logged, harmless */

	/* a pipe on a stopped port */
	T_OK(doca_flow_pipe_cfg_create(&stale, port2));
	T_OK(doca_flow_port_stop(port2));
	{
		struct doca_flow_pipe *p = NULL;

		T_STATUS(doca_flow_pipe_create(stale, &rss, NULL, &p), DOCA_ERROR_BAD_STATE);
		T_TRUE(p == NULL);
		T_STATUS(doca_flow_pipe_cfg_create(&cfg, port2), DOCA_ERROR_BAD_STATE);
		T_STATUS(doca_flow_entries_process(port2, 0, 0, 0), DOCA_ERROR_BAD_STATE);
	}
	T_OK(doca_flow_pipe_cfg_destroy(stale));
	T_OK(doca_flow_port_stop(port));
	doca_flow_destroy();
	/* entries need an initialised DOCA Flow */
	T_STATUS(doca_flow_entries_process(port, 0, 0, 0), DOCA_ERROR_BAD_STATE);
}

/* ---- readers while the rules change ------------------------------------------------------------- */

struct t_reader {
	struct doca_flow_port *port;
	unsigned int forwarded;
	unsigned int other;
};

static void *t_reader_main(void *arg)
{
	struct t_reader *r = arg;
	struct t_flow fl = {0x0a000001, 0x0a000002, 1, 2, IPPROTO_UDP, 0, 0, 0};

	for (int i = 0; i < 20000; i++) {
		uint16_t q = 0;

		fl.sport = (uint16_t)i;
		if (t_classify_q(r->port, &fl, &q) == SDP_FLOW_FORWARD && q < 4)
			r->forwarded++;
		else
			r->other++;
	}
	return NULL;
}

static void test_concurrent(struct doca_dev *dev)
{
	uint16_t qs[4] = {0, 1, 2, 3};
	struct doca_flow_fwd rss = {.type = DOCA_FLOW_FWD_RSS,
				    .rss = {.outer_flags = DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_UDP,
					    .queues_array = qs,
					    .nr_queues = 4}};
	struct doca_flow_match udp = {.parser_meta = {.outer_l4_type = DOCA_FLOW_L4_META_UDP}};
	struct t_reader rd[2];
	pthread_t th[2];
	struct doca_flow_port *port;
	struct doca_flow_pipe *root;

	t_init(1, "vnf");
	port = t_port_start(dev, 0);
	root = t_pipe(port, "root", DOCA_FLOW_PIPE_CONTROL, true, NULL, NULL, NULL, NULL);
	for (int i = 0; i < 2; i++) {
		rd[i] = (struct t_reader){port, 0, 0};
		T_EQ_INT(pthread_create(&th[i], NULL, t_reader_main, &rd[i]), 0);
	}
	for (int i = 0; i < 300; i++) {
		struct doca_flow_pipe_entry *e = NULL;

		T_OK(doca_flow_pipe_control_add_entry(0, root, &udp, NULL, NULL, NULL, NULL, NULL,
						      NULL, (uint32_t)i % 3, &rss, NULL, &e));
		if (e != NULL && i % 2 == 0)
			T_OK(doca_flow_pipe_remove_entry(0, 0, e));
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		T_EQ_INT(rd[i].forwarded + rd[i].other, 20000);
	}
	/* with 150 entries left, everything is forwarded */
	{
		struct t_flow fl = {1, 2, 3, 4, IPPROTO_UDP, 0, 0, 0};

		T_CLASSIFY(port, &fl, SDP_FLOW_FORWARD, -1);
	}
	T_OK(doca_flow_port_stop(port));
	doca_flow_destroy();
}

/* ---- refusals are logged once, by the API call made ------------------------------------------- */

static void test_refusal_records(struct doca_dev *dev)
{
	struct doca_flow_fwd drop = {.type = DOCA_FLOW_FWD_DROP};
	struct doca_log_backend *be = t_refusal_capture();
	struct doca_flow_pipe_entry *e = NULL;
	struct doca_flow_cfg *cfg = NULL;
	struct doca_flow_port *port;
	struct doca_flow_pipe *basic;
	char stopped[64];

	T_STATUS(doca_flow_cfg_create(NULL), DOCA_ERROR_INVALID_VALUE);
	T_REFUSAL("doca_flow_cfg_create", "NULL cfg");
	T_OK(doca_flow_cfg_create(&cfg));
	T_STATUS(doca_flow_cfg_set_mode_args(cfg, NULL), DOCA_ERROR_INVALID_VALUE);
	T_REFUSAL("doca_flow_cfg_set_mode_args", "NULL mode_args");
	T_STATUS(doca_flow_cfg_set_pipe_queues(cfg, 0), DOCA_ERROR_INVALID_VALUE);
	T_REFUSAL("doca_flow_cfg_set_pipe_queues", "pipe_queues 0 is not from 1 to");
	T_OK(doca_flow_cfg_destroy(cfg));

	t_init(1, "vnf");
	port = t_port_start(dev, 0);
	basic = t_pipe(port, "refusals", DOCA_FLOW_PIPE_BASIC, false, NULL, NULL, &drop, NULL);
	/* found by the helpers the add_entry calls share: the record names the call made */
	T_STATUS(doca_flow_pipe_basic_add_entry(0, NULL, NULL, 0, NULL, NULL, NULL, 0, NULL, &e),
		 DOCA_ERROR_INVALID_VALUE);
	T_REFUSAL("doca_flow_pipe_basic_add_entry", "NULL pipe");
	T_STATUS(doca_flow_pipe_basic_add_entry(0, basic, NULL, 0, NULL, NULL, NULL, 0, NULL, NULL),
		 DOCA_ERROR_INVALID_VALUE);
	T_REFUSAL("doca_flow_pipe_basic_add_entry", "NULL entry");
	T_STATUS(doca_flow_pipe_basic_add_entry(3, basic, NULL, 0, NULL, NULL, NULL, 0, NULL, &e),
		 DOCA_ERROR_INVALID_VALUE);
	T_REFUSAL("doca_flow_pipe_basic_add_entry", "pipe_queue 3 out of range");
	T_STATUS(doca_flow_pipe_control_add_entry(0, basic, NULL, NULL, NULL, NULL, NULL, NULL,
						  NULL, 0, &drop, NULL, &e),
		 DOCA_ERROR_INVALID_VALUE);
	T_REFUSAL("doca_flow_pipe_control_add_entry", "pipe refusals is not a control pipe");
	T_STATUS(doca_flow_pipe_remove_entry(0, 0, NULL), DOCA_ERROR_INVALID_VALUE);
	T_REFUSAL("doca_flow_pipe_remove_entry", "NULL entry");
	T_STATUS(doca_flow_entries_process(port, 0, 0, 0), DOCA_SUCCESS);
	T_TRUE(t_refusal_reset() == 0);
	T_OK(doca_flow_port_stop(port));
	snprintf(stopped, sizeof(stopped), "port %p is not started", (void *)port);
	T_STATUS(doca_flow_port_stop(port), DOCA_ERROR_INVALID_VALUE);
	T_REFUSAL("doca_flow_port_stop", stopped);
	T_STATUS(doca_flow_entries_process(port, 0, 0, 0), DOCA_ERROR_BAD_STATE);
	T_REFUSAL("doca_flow_entries_process", stopped);
	doca_flow_destroy();
	/* basic is gone with its port; the state check refuses it before looking at it */
	T_STATUS(doca_flow_pipe_basic_add_entry(0, basic, NULL, 0, NULL, NULL, NULL, 0, NULL, &e),
		 DOCA_ERROR_BAD_STATE);
	T_REFUSAL("doca_flow_pipe_basic_add_entry", "DOCA Flow is not initialised");
	T_TRUE(e == NULL);
	if (be != NULL)
		T_OK(doca_log_backend_set_sdk_level(be, DOCA_LOG_LEVEL_DISABLE));
}

/* ---- the steering summary (a backend that leaves frames to the host: afxdp) ------------------- */

static int g_changes;

static void t_change_cb(void)
{
	__atomic_add_fetch(&g_changes, 1, __ATOMIC_RELAXED);
}

/* 1 when the summary holds exactly this key. */
static int t_has_key(const struct sdp_eth_steer *s, uint16_t et, uint8_t proto, uint16_t port)
{
	for (uint32_t i = 0; i < s->nb_keys; i++)
		if (s->keys[i].ethertype == et && s->keys[i].ip_proto == proto &&
		    s->keys[i].dst_port == port)
			return 1;
	return 0;
}

static void test_steer_summary(struct doca_dev *dev)
{
	uint16_t q0 = 0;
	struct doca_flow_fwd rss = {
		.type = DOCA_FLOW_FWD_RSS,
		.rss_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED,
		.rss = {.outer_flags = DOCA_FLOW_RSS_IPV4, .queues_array = &q0, .nr_queues = 1}};
	struct doca_flow_fwd drop = {.type = DOCA_FLOW_FWD_DROP};
	struct doca_flow_match any = {0};
	struct doca_flow_match udp_port = {.outer = {.l3_type = DOCA_FLOW_L3_TYPE_IP4,
						     .l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_UDP,
						     .udp.l4_port.dst_port = htons(4000)}};
	struct doca_flow_match udp_port_mask = {.outer = {.l3_type = UINT32_MAX,
							  .l4_type_ext = UINT32_MAX,
							  .udp.l4_port.dst_port = UINT16_MAX}};
	struct doca_flow_match icmp = {.parser_meta = {.outer_l4_type = DOCA_FLOW_L4_META_ICMP}};
	struct doca_flow_match tcp6 = {
		.outer = {.l3_type = DOCA_FLOW_L3_TYPE_IP6, .ip6.next_proto = IPPROTO_TCP}};
	struct doca_flow_match tcp6_mask = {
		.outer = {.l3_type = UINT32_MAX, .ip6.next_proto = UINT8_MAX}};
	struct doca_flow_pipe *sink, *root;
	struct doca_flow_pipe_entry *e1 = NULL, *e2 = NULL, *e3 = NULL;
	struct doca_flow_port *port;
	struct sdp_eth_steer s;
	uint64_t gen;

	sdp_flow_set_change_cb(t_change_cb);
	/* no flow port: every frame (the engine's default queue takes them) */
	sdp_flow_steer_summary(dev, &s);
	T_EQ_INT(s.all, 1);
	T_EQ_INT(s.nb_keys, 0);
	t_init(1, "vnf");
	gen = sdp_flow_generation();
	g_changes = 0;
	port = t_port_start(dev, 0);
	T_TRUE(sdp_flow_generation() != gen);
	T_TRUE(g_changes >= 1);
	sdp_flow_steer_summary(dev, &s);
	T_EQ_INT(s.all, 1); /* no root pipe yet */
	sink = t_pipe(port, "SINK", DOCA_FLOW_PIPE_BASIC, false, NULL, NULL, &rss, NULL);
	root = t_pipe(port, "ROOT", DOCA_FLOW_PIPE_CONTROL, true, NULL, NULL, NULL, NULL);
	sdp_flow_steer_summary(dev, &s);
	T_EQ_INT(s.all, 0); /* a root without entries wants nothing: the host keeps every frame */
	T_EQ_INT(s.nb_keys, 0);

	gen = sdp_flow_generation();
	T_OK(t_ctrl_entry(root, &udp_port, &udp_port_mask, 0, sink, &e1));
	T_OK(t_ctrl_entry(root, &icmp, &icmp, 1, sink, &e2));
	T_OK(t_ctrl_entry(root, &tcp6, &tcp6_mask, 2, sink, &e3));
	T_TRUE(sdp_flow_generation() != gen);
	sdp_flow_steer_summary(dev, &s);
	T_EQ_INT(s.all, 0);
	T_TRUE(t_has_key(&s, SDP_PKT_ETHERTYPE_IPV4, IPPROTO_UDP, 4000));
	/* ICMP of either IP version (the rule names no version) */
	T_TRUE(t_has_key(&s, SDP_PKT_ETHERTYPE_IPV4, IPPROTO_ICMP, 0));
	T_TRUE(t_has_key(&s, SDP_PKT_ETHERTYPE_IPV6, IPPROTO_ICMPV6, 0));
	T_TRUE(t_has_key(&s, SDP_PKT_ETHERTYPE_IPV6, IPPROTO_TCP, 0));
	T_EQ_INT(s.nb_keys, 4);

	/* an entry that matches everything: every frame */
	T_OK(doca_flow_pipe_remove_entry(0, DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, e3));
	T_OK(t_ctrl_entry(root, &any, NULL, 3, sink, &e3));
	sdp_flow_steer_summary(dev, &s);
	T_EQ_INT(s.all, 0);
	T_TRUE(t_has_key(&s, 0, 0, 0));
	T_OK(doca_flow_pipe_remove_entry(0, DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, e3));
	T_OK(doca_flow_pipe_remove_entry(0, DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, e2));
	T_OK(doca_flow_pipe_remove_entry(0, DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, e1));
	sdp_flow_steer_summary(dev, &s);
	T_EQ_INT(s.nb_keys, 0);
	doca_flow_pipe_destroy(root);

	/* a root with a miss action wants every frame */
	root = t_pipe(port, "ROOT_MISS", DOCA_FLOW_PIPE_BASIC, true, &any, NULL, &rss, &drop);
	sdp_flow_steer_summary(dev, &s);
	T_EQ_INT(s.all, 1);
	doca_flow_pipe_destroy(root);
	doca_flow_pipe_destroy(sink);
	g_changes = 0;
	T_OK(doca_flow_port_stop(port));
	T_TRUE(g_changes >= 1);
	sdp_flow_steer_summary(dev, &s);
	T_EQ_INT(s.all, 1);
	doca_flow_destroy();
	sdp_flow_set_change_cb(NULL);
}

int main(void)
{
	struct doca_dev *dev = t_open_dev("softdpu0");
	struct doca_dev *dev2 = t_open_dev("mlx5_0");

	if (dev == NULL || dev2 == NULL)
		T_SKIP("the host devices softdpu0 and mlx5_0 are not listed (providers not found)");
	test_cfg(dev);
	test_simple_receive(dev);
	test_gpu_packet_processing(dev);
	test_rss_and_fields(dev);
	test_basic_templates(dev);
	test_many_sessions(dev);
	test_unsupported_and_states(dev, dev2);
	test_concurrent(dev);
	test_refusal_records(dev);
	test_steer_summary(dev);
	T_OK(doca_dev_close(dev2));
	T_OK(doca_dev_close(dev));
	T_DONE();
}
