/*
 * DOCA Flow steering through libdoca_eth on two loop devices. The receiving device has four
 * REGULAR receive queues: a default one (started first, so frames no rule takes go there) and
 * three with applied queue ids; a root control pipe on its flow port sends IPv4/UDP to the first
 * id, IPv4/TCP to the second, IPv4/ICMP to the third, and (at a higher priority) drops UDP to
 * port 9. A known mix is sent from the other device: 37 UDP, 23 TCP, 11 ICMP, 5 ARP and 3 UDP
 * frames to port 9, interleaved. Checked: exact per-queue counts, every frame on the queue of
 * its protocol (the IPv4 protocol byte or the ARP ethertype of what arrived), every frame
 * exactly once and byte for byte as sent, the dropped ones nowhere; the entries' hit counters,
 * the queues' and the port's counters (unsteered == the dropped frames). Also the bad arguments
 * and states of doca_eth_rxq_apply_queue_id.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_eth_rxq.h"
#include "doca_flow.h"
#include "doca_pe.h"
#include "softdpu/eth.h"
#include "softdpu/flow.h"
#include "softdpu/sdp_pkt.h"
#include "t_eth.h"
#include "t_helpers.h"
#include "t_nic.h"

enum kind {
	K_UDP,
	K_TCP,
	K_ICMP,
	K_ARP,
	K_DROP,
	K_NUM
};

static const int g_want[K_NUM] = {37, 23, 11, 5, 3};
static const char *const g_kind_name[K_NUM] = {"UDP", "TCP", "ICMP", "ARP", "UDP port 9"};

#define NFRAMES (37 + 23 + 11 + 5 + 3)
#define MAXF 700
#define MAGIC 0x53544552u /* "STER" */
#define NB_TASKS 8
#define TX_SLOTS 16
#define Q_UDP 11
#define Q_TCP 22
#define Q_ICMP 33

enum rxq_idx {
	R_DEFAULT,
	R_UDP,
	R_TCP,
	R_ICMP,
	R_NUM
};

static uint8_t g_frames[NFRAMES][MAXF];
static uint32_t g_lens[NFRAMES];
static enum kind g_kinds[NFRAMES];
static uint8_t g_seen[NFRAMES];

struct rxq_check {
	enum kind accepts[2]; /* the kinds this queue may get (the default queue: ARP only) */
	uint64_t got;
	uint64_t wrong;
};

/* Frame i of kind k; its last 8 bytes are MAGIC and i. */
static void make_frame(uint32_t i, enum kind k)
{
	uint8_t *f = g_frames[i], *ip = f + SDP_PKT_UDP4_IP, *l4 = f + SDP_PKT_UDP4_UDP;
	uint32_t len = 64 + (i * 53) % (MAXF - 64);

	for (uint32_t b = 0; b < len; b++)
		f[b] = (uint8_t)(b * 5 + i * 17 + 9);
	memcpy(f, "\x02\x53\x54\x45\x52\x02\x02\x53\x54\x45\x52\x01", 12);
	if (k == K_ARP) {
		sdp_pkt_put16(f + SDP_PKT_ETH_TYPE, SDP_PKT_ETHERTYPE_ARP);
		/* Ethernet/IPv4 who-has */
		memcpy(f + 14, "\x00\x01\x08\x00\x06\x04\x00\x01", 8);
		memcpy(f + 22, f + 6, 6);
		memcpy(f + 28, "\x0a\x01\x01\x01", 4);
		memset(f + 32, 0, 6);
		memcpy(f + 38, "\x0a\x01\x01\x02", 4);
	} else {
		uint8_t proto = k == K_TCP  ? SDP_PKT_PROTO_TCP :
				k == K_ICMP ? SDP_PKT_PROTO_ICMP :
					      SDP_PKT_PROTO_UDP;

		sdp_pkt_put16(f + SDP_PKT_ETH_TYPE, SDP_PKT_ETHERTYPE_IPV4);
		sdp_pkt_ip4_build(ip, (uint16_t)(len - SDP_PKT_ETH_HLEN), (uint16_t)i,
				  SDP_PKT_IP4_DF, proto, "\x0a\x01\x01\x01", "\x0a\x01\x01\x02");
		sdp_pkt_ip4_csum_set(ip);
		if (k == K_UDP || k == K_DROP) { /* no UDP checksum (allowed over IPv4) */
			sdp_pkt_udp_build(l4, (uint16_t)(10000 + i), k == K_DROP ? 9 : 5001,
					  (uint16_t)(len - SDP_PKT_UDP4_UDP));
		} else if (k == K_TCP) { /* PSH ACK */
			sdp_pkt_tcp_build(l4, (uint16_t)(20000 + i), 80, i, 0, 0x18, 65535);
		} else {
			l4[0] = 8; /* echo request */
			l4[1] = 0;
		}
	}
	sdp_pkt_put32(f + len - 8, MAGIC);
	sdp_pkt_put32(f + len - 4, i);
	g_lens[i] = len;
	g_kinds[i] = k;
}

/* The kind of a received frame, from its own bytes (the protocol byte or the ethertype). */
static int kind_of(const uint8_t *f, size_t len)
{
	if (len < 34)
		return -1;
	if (f[12] == 0x08 && f[13] == 0x06)
		return K_ARP;
	if (f[12] != 0x08 || f[13] != 0x00)
		return -1;
	switch (f[23]) {
	case 17:
		return f[36] == 0 && f[37] == 9 ? K_DROP : K_UDP;
	case 6:
		return K_TCP;
	case 1:
		return K_ICMP;
	}
	return -1;
}

static void on_frame(struct t_eth_rx *rx, const uint8_t *f, size_t len)
{
	struct rxq_check *c = rx->user;
	int k = kind_of(f, len);
	uint32_t i;

	c->got++;
	if (k != (int)c->accepts[0] && k != (int)c->accepts[1]) {
		if (c->wrong++ < 5)
			t_fail("a frame of kind %s (IPv4 protocol %u) reached the %s queue",
			       k < 0 ? "unknown" : g_kind_name[k], len > 23 ? f[23] : 0,
			       g_kind_name[c->accepts[0]]);
		return;
	}
	i = len >= 8 ? sdp_pkt_get32(f + len - 4) : UINT32_MAX;
	if (len < 8 || sdp_pkt_get32(f + len - 8) != MAGIC || i >= NFRAMES || len != g_lens[i] ||
	    memcmp(f, g_frames[i], len) != 0) {
		if (c->wrong++ < 5)
			t_fail("a %s frame of %zu bytes is not one that was sent", g_kind_name[k],
			       len);
		return;
	}
	if (g_seen[i]++ != 0 && c->wrong++ < 5)
		t_fail("frame %u arrived twice", i);
}

static struct doca_flow_pipe_entry *add_entry(struct doca_flow_pipe *root, enum kind k,
					      uint16_t *queue, uint32_t prio)
{
	struct doca_flow_match m;
	struct doca_flow_fwd fwd;
	struct doca_flow_pipe_entry *e = NULL;

	memset(&m, 0, sizeof(m));
	memset(&fwd, 0, sizeof(fwd));
	m.parser_meta.outer_l3_type = DOCA_FLOW_L3_META_IPV4;
	m.parser_meta.outer_l4_type = k == K_TCP  ? DOCA_FLOW_L4_META_TCP :
				      k == K_ICMP ? DOCA_FLOW_L4_META_ICMP :
						    DOCA_FLOW_L4_META_UDP;
	if (k == K_DROP) {
		m.outer.l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_UDP;
		m.outer.udp.l4_port.dst_port = htons(9);
		fwd.type = DOCA_FLOW_FWD_DROP;
	} else {
		fwd.type = DOCA_FLOW_FWD_RSS;
		fwd.rss_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED;
		fwd.rss.queues_array = queue;
		fwd.rss.nr_queues = 1;
	}
	T_OK(doca_flow_pipe_control_add_entry(0, root, &m, NULL, NULL, NULL, NULL, NULL, NULL, prio,
					      &fwd, NULL, &e));
	return e;
}

static uint64_t entry_hits(const struct doca_flow_pipe_entry *e)
{
	uint64_t pkts = 0;

	if (e != NULL)
		T_OK(sdp_flow_entry_get_hits(e, &pkts, NULL));
	return pkts;
}

int main(void)
{
	static const uint16_t qids[R_NUM] = {0, Q_UDP, Q_TCP, Q_ICMP};
	static const enum kind accepts[R_NUM][2] = {
		{K_ARP, K_ARP}, {K_UDP, K_UDP}, {K_TCP, K_TCP}, {K_ICMP, K_ICMP}};
	uint16_t q_udp = Q_UDP, q_tcp = Q_TCP, q_icmp = Q_ICMP;
	struct doca_devinfo **list = NULL, *da, *db;
	struct doca_dev *dev_a = NULL, *dev_b = NULL;
	struct doca_flow_cfg *cfg = NULL;
	struct doca_flow_port_cfg *pcfg = NULL;
	struct doca_flow_pipe_cfg *pipe_cfg = NULL;
	struct doca_flow_port *port = NULL;
	struct doca_flow_pipe *root = NULL;
	struct doca_flow_pipe_entry *e[K_NUM] = {0};
	struct sdp_eth_rxq_counters rc = {0};
	struct sdp_eth_port_counters pc = {0};
	struct rxq_check chk[R_NUM];
	struct t_eth_rx rx[R_NUM];
	struct t_eth_tx tx;
	struct t_eth_mem mem;
	struct doca_pe *pe = NULL;
	char decls[256], na[32], nb[32];
	int counts[K_NUM] = {0};
	uint64_t total = 0, want_rx = NFRAMES - 3;
	uint32_t n = 0;
	double end;

	snprintf(na, sizeof(na), "esa%d", (int)getpid());
	snprintf(nb, sizeof(nb), "esb%d", (int)getpid());
	snprintf(decls, sizeof(decls), "loop:name=%s,peer=%s;loop:name=%s,peer=%s", na, nb, nb, na);
	setenv("SOFTDPU_DEVICES", decls, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	unsetenv("SOFTDPU_ETH_OVERFLOW");
	t_log_capture();

	/* the mix, interleaved: frame i's kind walks the kinds until each has its count */
	for (uint32_t i = 0, k = 0; i < NFRAMES; i++) {
		while (counts[k % K_NUM] == g_want[k % K_NUM])
			k++;
		make_frame(i, (enum kind)(k % K_NUM));
		counts[k % K_NUM]++;
		k += 1 + i % 3;
	}

	T_OK(doca_devinfo_create_list(&list, &n));
	if (list == NULL)
		T_DONE();
	da = t_find_dev(list, n, na);
	db = t_find_dev(list, n, nb);
	if (da == NULL || db == NULL) {
		t_fail("loop devices %s/%s are not listed", na, nb);
		T_OK(doca_devinfo_destroy_list(list));
		T_DONE();
	}
	T_OK(doca_dev_open(da, &dev_a));
	T_OK(doca_dev_open(db, &dev_b));
	T_OK(doca_pe_create(&pe));
	{
		struct doca_dev *devs[2] = {dev_a, dev_b};

		if (t_eth_mem_init(&mem, (size_t)(R_NUM * NB_TASKS + TX_SLOTS) * T_ETH_SLOT, devs,
				   2, R_NUM * NB_TASKS + TX_SLOTS) != 0)
			goto out_mem;
	}

	/* the receive queues: the default one first */
	memset(rx, 0, sizeof(rx));
	for (int r = 0; r < R_NUM; r++) {
		chk[r] = (struct rxq_check){.accepts = {accepts[r][0], accepts[r][1]}};
		if (t_eth_rx_init(&rx[r], pe, dev_b, &mem, (size_t)r * NB_TASKS * T_ETH_SLOT,
				  NB_TASKS, T_ETH_SLOT) != 0)
			goto out_rx;
		rx[r].user = &chk[r];
		rx[r].on_frame = on_frame;
		if (r == R_UDP) /* IDLE: no id yet */
			T_STATUS(doca_eth_rxq_apply_queue_id(rx[r].rxq, Q_UDP),
				 DOCA_ERROR_BAD_STATE);
		t_eth_rx_start(&rx[r]);
		if (r != R_DEFAULT)
			T_OK(doca_eth_rxq_apply_queue_id(rx[r].rxq, qids[r]));
	}
	T_STATUS(doca_eth_rxq_apply_queue_id(NULL, 5), DOCA_ERROR_INVALID_VALUE);
	/* the default queue cannot take an id another running queue has */
	T_STATUS(doca_eth_rxq_apply_queue_id(rx[R_DEFAULT].rxq, Q_TCP), DOCA_ERROR_IN_USE);

	/* the flow port and its root control pipe */
	T_OK(doca_flow_cfg_create(&cfg));
	T_OK(doca_flow_cfg_set_pipe_queues(cfg, 1));
	T_OK(doca_flow_cfg_set_mode_args(cfg, "vnf,hws"));
	T_OK(doca_flow_init(cfg));
	T_OK(doca_flow_cfg_destroy(cfg));
	T_OK(doca_flow_port_cfg_create(&pcfg));
	T_OK(doca_flow_port_cfg_set_port_id(pcfg, 0));
	T_OK(doca_flow_port_cfg_set_dev(pcfg, dev_b));
	T_OK(doca_flow_port_start(pcfg, &port));
	T_OK(doca_flow_port_cfg_destroy(pcfg));
	if (port == NULL)
		goto out_flow;
	T_OK(doca_flow_pipe_cfg_create(&pipe_cfg, port));
	T_OK(doca_flow_pipe_cfg_set_name(pipe_cfg, "STEER"));
	T_OK(doca_flow_pipe_cfg_set_type(pipe_cfg, DOCA_FLOW_PIPE_CONTROL));
	T_OK(doca_flow_pipe_cfg_set_is_root(pipe_cfg, true));
	T_OK(doca_flow_pipe_create(pipe_cfg, NULL, NULL, &root));
	T_OK(doca_flow_pipe_cfg_destroy(pipe_cfg));
	if (root == NULL)
		goto out_flow;
	e[K_DROP] = add_entry(root, K_DROP, NULL, 0);
	e[K_UDP] = add_entry(root, K_UDP, &q_udp, 1);
	e[K_TCP] = add_entry(root, K_TCP, &q_tcp, 1);
	e[K_ICMP] = add_entry(root, K_ICMP, &q_icmp, 1);
	T_OK(doca_flow_entries_process(port, 0, 0, 0));

	/* send the mix */
	if (t_eth_tx_init(&tx, pe, dev_a, &mem, (size_t)R_NUM * NB_TASKS * T_ETH_SLOT, TX_SLOTS) !=
	    0)
		goto out_tx;
	for (uint32_t i = 0; i < NFRAMES; i++)
		if (t_eth_tx_send(&tx, g_frames[i], g_lens[i]) != 0)
			break;
	end = t_eth_now() + 10;
	while (t_eth_now() < end) {
		total = 0;
		for (int r = 0; r < R_NUM; r++)
			total += rx[r].received;
		if (total >= want_rx && tx.completed + tx.errors >= NFRAMES)
			break;
		t_eth_step(pe);
	}
	t_eth_progress_for(pe, 0.2); /* nothing more may come */
	T_EQ_INT(tx.completed, NFRAMES);
	T_EQ_INT(tx.errors, 0);
	T_EQ_INT(rx[R_DEFAULT].received, g_want[K_ARP]);
	T_EQ_INT(rx[R_UDP].received, g_want[K_UDP]);
	T_EQ_INT(rx[R_TCP].received, g_want[K_TCP]);
	T_EQ_INT(rx[R_ICMP].received, g_want[K_ICMP]);
	for (int r = 0; r < R_NUM; r++) {
		T_EQ_INT(chk[r].wrong, 0);
		T_EQ_INT(rx[r].errors, 0);
		T_EQ_INT(rx[r].resubmit_failed, 0);
		T_OK(sdp_eth_rxq_get_counters(rx[r].rxq, &rc));
		T_EQ_INT(rc.packets, rx[r].received);
		T_EQ_INT(rc.drops, 0);
		T_EQ_INT(rc.overwrites, 0);
	}
	for (uint32_t i = 0; i < NFRAMES; i++) {
		if (g_seen[i] != (g_kinds[i] == K_DROP ? 0 : 1))
			t_fail("frame %u (%s) arrived %u times", i, g_kind_name[g_kinds[i]],
			       g_seen[i]);
	}
	T_EQ_INT(entry_hits(e[K_UDP]), g_want[K_UDP]);
	T_EQ_INT(entry_hits(e[K_TCP]), g_want[K_TCP]);
	T_EQ_INT(entry_hits(e[K_ICMP]), g_want[K_ICMP]);
	T_EQ_INT(entry_hits(e[K_DROP]), g_want[K_DROP]);
	T_OK(sdp_eth_dev_get_port_counters(dev_b, &pc));
	T_EQ_INT(pc.rx_packets, NFRAMES);
	T_EQ_INT(pc.rx_unsteered, g_want[K_DROP]);
	T_EQ_INT(pc.rx_port_drops, 0);
	T_OK(sdp_eth_dev_get_port_counters(dev_a, &pc));
	T_EQ_INT(pc.tx_packets, NFRAMES);
	T_EQ_INT(pc.rx_packets, 0);
out_tx:
	t_eth_tx_fini(&tx);
out_flow:
	if (root != NULL)
		doca_flow_pipe_destroy(root);
	if (port != NULL)
		T_OK(doca_flow_port_stop(port));
	doca_flow_destroy();
out_rx:
	for (int r = R_NUM - 1; r >= 0; r--)
		t_eth_rx_fini(&rx[r]);
out_mem:
	t_eth_mem_fini(&mem);
	T_OK(doca_pe_destroy(pe));
	T_OK(doca_dev_close(dev_b));
	T_OK(doca_dev_close(dev_a));
	T_OK(doca_devinfo_destroy_list(list));
	T_DONE();
}
