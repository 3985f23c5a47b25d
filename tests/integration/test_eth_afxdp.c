/*
 * libdoca_eth and DOCA Flow on an afxdp device over a veth pair (run by test_eth_afxdp.sh, which
 * creates two network namespaces and the pair, and runs this program inside the first one):
 *
 *   test_eth_afxdp <ifa> <netns b> <ip a> <ip b>
 *
 * A receive queue (REGULAR tasks) on an afxdp device on <ifa> and a flow port whose root pipe
 * sends UDP to STEER_PORT to it; the peer, in <netns b>, sends UDP to STEER_PORT and to
 * HOST_PORT and pings <ip a>. Checked: once the engine has applied the rules' summary (a bounded
 * wait for the first steered datagram), exactly the STEER_PORT datagrams reach the queue and
 * none reaches the host's socket on that port; the HOST_PORT datagrams reach the host's socket;
 * every ping is answered by the kernel; the port counters count what the program left to the
 * host. Then the entry goes: the summary is empty and everything goes to the host again.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_eth_rxq.h"
#include "doca_flow.h"
#include "doca_pe.h"
#include "softdpu/eth.h"
#include "softdpu/sdp_pkt.h"
#include "t_eth.h"
#include "t_helpers.h"
#include "t_netns.h"
#include "t_nic.h"

#define STEER_PORT 40123
#define HOST_PORT 40124
#define NDGRAM 100
#define NB_TASKS 64
#define QID 5
#define MAGIC 0x53444558u /* "SDEX" */

static const char *g_ifa, *g_nsb, *g_ipa, *g_ipb;
static int g_peer_udp = -1, g_peer_icmp = -1;
static uint32_t g_steered; /* datagrams of ours to STEER_PORT seen by the queue */
static uint32_t g_other;   /* frames of ours to another port seen by the queue */

static void on_frame(struct t_eth_rx *rx, const uint8_t *f, size_t len)
{
	(void)rx;
	if (len < SDP_PKT_UDP4_PAYLOAD + 8 || sdp_pkt_get16(f + 12) != SDP_PKT_ETHERTYPE_IPV4 ||
	    f[23] != IPPROTO_UDP || sdp_pkt_get32(f + SDP_PKT_UDP4_PAYLOAD) != MAGIC)
		return;
	if (sdp_pkt_get16(f + 36) == STEER_PORT)
		g_steered++;
	else
		g_other++;
}

static int peer_open(void *arg)
{
	(void)arg;
	g_peer_udp = t_udp_socket(g_ipb, 0);
	g_peer_icmp = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
	if (g_peer_icmp < 0)
		t_fail("expected a raw ICMP socket in %s: %s", g_nsb, strerror(errno));
	return g_peer_udp >= 0 && g_peer_icmp >= 0 ? 0 : -1;
}

static int g_pings;

static int peer_traffic(void *arg)
{
	(void)arg;
	for (uint32_t i = 0; i < NDGRAM; i++) {
		t_udp_send(g_peer_udp, g_ipa, STEER_PORT, MAGIC, i);
		t_udp_send(g_peer_udp, g_ipa, HOST_PORT, MAGIC, i);
	}
	g_pings = t_pings(g_peer_icmp, g_ipa, 0x5d59, 5);
	return 0;
}

/* Progress the PE until the queue saw a steered datagram (one sent every 20 ms), 5 s at most. */
static int wait_steered(struct doca_pe *pe)
{
	for (uint64_t end = t_ns_now_ms() + 5000, next = 0; t_ns_now_ms() < end;) {
		if (g_steered > 0)
			return 0;
		if (t_ns_now_ms() >= next) {
			t_udp_send(g_peer_udp, g_ipa, STEER_PORT, MAGIC, 999999);
			next = t_ns_now_ms() + 20;
		}
		t_eth_step(pe);
	}
	return -1;
}

static struct doca_flow_pipe_entry *add_udp_entry(struct doca_flow_pipe *root, uint16_t *queue)
{
	struct doca_flow_match m = {.parser_meta = {.outer_l3_type = DOCA_FLOW_L3_META_IPV4,
						    .outer_l4_type = DOCA_FLOW_L4_META_UDP},
				    .outer = {.l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_UDP,
					      .udp.l4_port.dst_port = htons(STEER_PORT)}};
	struct doca_flow_fwd fwd = {.type = DOCA_FLOW_FWD_RSS,
				    .rss_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED,
				    .rss = {.queues_array = queue, .nr_queues = 1}};
	struct doca_flow_pipe_entry *e = NULL;

	T_OK(doca_flow_pipe_control_add_entry(0, root, &m, NULL, NULL, NULL, NULL, NULL, NULL, 0,
					      &fwd, NULL, &e));
	return e;
}

int main(int argc, char **argv)
{
	struct doca_devinfo **list = NULL;
	struct doca_devinfo *di;
	struct doca_dev *dev = NULL;
	struct doca_pe *pe = NULL;
	struct t_eth_mem mem;
	struct t_eth_rx rx;
	struct doca_flow_cfg *cfg = NULL;
	struct doca_flow_port_cfg *pcfg = NULL;
	struct doca_flow_pipe_cfg *pipe_cfg = NULL;
	struct doca_flow_port *port = NULL;
	struct doca_flow_pipe *root = NULL;
	struct doca_flow_pipe_entry *e;
	struct sdp_eth_port_counters c0, c1;
	uint16_t queue = QID;
	char decl[128];
	uint32_t n = 0, host_steer, host_other;
	int hs_steer, hs_other;

	if (argc != 5) {
		fprintf(stderr, "usage: %s <ifa> <netns b> <ip a> <ip b> (see the .sh)\n", argv[0]);
		return T_EXIT_FAIL;
	}
	g_ifa = argv[1];
	g_nsb = argv[2];
	g_ipa = argv[3];
	g_ipb = argv[4];
	snprintf(decl, sizeof(decl), "afxdp:iface=%s,name=xe", g_ifa);
	T_OK(t_nic_list(decl, &list, &n));
	di = list != NULL ? t_find_dev(list, n, "xe") : NULL;
	if (di == NULL) {
		t_fail("expected device xe in the list; log:\n%s", t_log);
		T_DONE();
	}
	T_OK(doca_dev_open(di, &dev));
	T_OK(doca_pe_create(&pe));
	hs_steer = t_udp_socket(g_ipa, STEER_PORT);
	hs_other = t_udp_socket(g_ipa, HOST_PORT);
	if (dev == NULL || pe == NULL || hs_steer < 0 || hs_other < 0 ||
	    t_in_netns(g_nsb, peer_open, NULL) != 0 ||
	    t_eth_mem_init(&mem, (size_t)NB_TASKS * T_ETH_SLOT, &dev, 1, NB_TASKS) != 0 ||
	    t_eth_rx_init(&rx, pe, dev, &mem, 0, NB_TASKS, 2048) != 0)
		T_DONE();
	rx.on_frame = on_frame;
	t_eth_rx_start(&rx);
	T_OK(doca_eth_rxq_apply_queue_id(rx.rxq, QID));

	T_OK(doca_flow_cfg_create(&cfg));
	T_OK(doca_flow_cfg_set_pipe_queues(cfg, 1));
	T_OK(doca_flow_cfg_set_mode_args(cfg, "vnf,hws"));
	T_OK(doca_flow_init(cfg));
	T_OK(doca_flow_cfg_destroy(cfg));
	T_OK(doca_flow_port_cfg_create(&pcfg));
	T_OK(doca_flow_port_cfg_set_port_id(pcfg, 0));
	T_OK(doca_flow_port_cfg_set_dev(pcfg, dev));
	T_OK(doca_flow_port_start(pcfg, &port));
	T_OK(doca_flow_port_cfg_destroy(pcfg));
	T_OK(doca_flow_pipe_cfg_create(&pipe_cfg, port));
	T_OK(doca_flow_pipe_cfg_set_name(pipe_cfg, "ROOT"));
	T_OK(doca_flow_pipe_cfg_set_type(pipe_cfg, DOCA_FLOW_PIPE_CONTROL));
	T_OK(doca_flow_pipe_cfg_set_is_root(pipe_cfg, true));
	T_OK(doca_flow_pipe_create(pipe_cfg, NULL, NULL, &root));
	T_OK(doca_flow_pipe_cfg_destroy(pipe_cfg));
	e = add_udp_entry(root, &queue);
	T_OK(doca_flow_entries_process(port, 0, 0, 0));

	/* the engine applies the summary on its own thread: wait for the first steered datagram */
	if (wait_steered(pe) != 0) {
		t_fail("no UDP datagram to port %d reached the queue within 5 s; log:\n%s",
		       STEER_PORT, t_log);
		goto out;
	}
	t_eth_progress_for(pe, 0.1);
	(void)t_udp_drain(hs_steer, MAGIC, 50);
	g_steered = 0;
	T_OK(sdp_eth_dev_get_port_counters(dev, &c0));

	t_in_netns(g_nsb, peer_traffic, NULL);
	T_EQ_INT(g_pings, 5); /* the kernel answered: the echo requests reached it */
	for (uint64_t end = t_ns_now_ms() + 5000; g_steered < NDGRAM && t_ns_now_ms() < end;)
		t_eth_step(pe);
	host_other = t_udp_count(hs_other, MAGIC, NDGRAM, 5000);
	t_eth_progress_for(pe, 0.2); /* a late duplicate would show now */
	host_steer = t_udp_drain(hs_steer, MAGIC, 50);
	T_EQ_INT(g_steered, NDGRAM);
	T_EQ_INT(g_other, 0);
	T_EQ_INT(host_other, NDGRAM);
	T_EQ_INT(host_steer, 0);
	T_OK(sdp_eth_dev_get_port_counters(dev, &c1));
	T_TRUE(c1.rx_steered_kernel - c0.rx_steered_kernel >= NDGRAM + 5);
	T_EQ_INT(c1.rx_invalid_descs, 0);

	/* the entry goes: nothing is wanted, the host gets the STEER_PORT datagrams back */
	T_OK(doca_flow_pipe_remove_entry(0, DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, e));
	{
		uint32_t got = 0;

		for (uint64_t end = t_ns_now_ms() + 5000, next = 0;
		     got == 0 && t_ns_now_ms() < end;) {
			if (t_ns_now_ms() >= next) {
				t_udp_send(g_peer_udp, g_ipa, STEER_PORT, MAGIC, 7);
				next = t_ns_now_ms() + 20;
			}
			t_eth_step(pe);
			got = t_udp_count(hs_steer, MAGIC, 1, 5);
		}
		T_EQ_INT(got, 1);
	}
out:
	doca_flow_pipe_destroy(root);
	T_OK(doca_flow_port_stop(port));
	doca_flow_destroy();
	t_eth_rx_fini(&rx);
	t_eth_mem_fini(&mem);
	T_OK(doca_pe_destroy(pe));
	T_OK(doca_dev_close(dev));
	T_OK(doca_devinfo_destroy_list(list));
	close(hs_steer);
	close(hs_other);
	close(g_peer_udp);
	close(g_peer_icmp);
	T_DONE();
}
