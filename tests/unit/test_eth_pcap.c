/*
 * libdoca_eth on pcap devices. RX: the test writes a pcap file of 100 frames of varied sizes
 * (60 to 1514 bytes) and contents; a pcap device replays it flat out (speed=max) and a REGULAR
 * receive queue with fewer tasks than frames (re-submitted from the callback) gets every frame,
 * in order, byte for byte, and nothing else; the queue's counters agree. TX: a send queue on a
 * second pcap device records 64 frames into its tx file; after the queue stops (the port closes
 * and flushes) the file read back with pcap_open_offline holds exactly those frames, in order,
 * byte for byte. A frame too short for Ethernet and a frame too long are refused. The files live
 * in /tmp with the pid in their names and are removed.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <pcap/pcap.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_eth_rxq.h"
#include "doca_eth_txq.h"
#include "doca_pe.h"
#include "softdpu/eth.h"
#include "t_eth.h"
#include "t_helpers.h"
#include "t_nic.h"

#define RX_FRAMES 100
#define TX_FRAMES 64
#define NB_TASKS 16
#define TX_SLOTS 8
#define MAXF 1514

static uint8_t g_rx_frames[RX_FRAMES][MAXF];
static uint32_t g_rx_lens[RX_FRAMES];
static uint8_t g_tx_frames[TX_FRAMES][MAXF];
static uint32_t g_tx_lens[TX_FRAMES];
static char g_rx_path[128], g_tx_path[128];

/* Frame i of a set (seed tells the sets apart): an Ethernet header, a number, a pattern. */
static uint32_t make_frame(uint8_t *f, uint32_t i, uint32_t seed)
{
	uint32_t len;

	/* sizes: the smallest, the largest, and a spread between them */
	if (i == 0)
		len = 60;
	else if (i == 1)
		len = MAXF;
	else
		len = 60 + (i * 337 + seed * 13) % (MAXF - 60 + 1);
	for (uint32_t k = 0; k < len; k++)
		f[k] = (uint8_t)(k * 11 + i * 37 + seed * 101 + (k >> 8));
	memcpy(f, "\x02\x50\x43\x41\x50\x01\x02\x50\x43\x41\x50\x02", 12);
	f[12] = 0x88; /* a local experimental ethertype */
	f[13] = 0xb5;
	f[14] = (uint8_t)seed;
	f[15] = (uint8_t)(i >> 8);
	f[16] = (uint8_t)i;
	return len;
}

/*
 * Frames 2-7 of the receive set are IPv4 with known checksums, for the verdicts a REGULAR task
 * reports (doca_eth_rxq_task_recv_get_l3_ok / _get_l4_ok): UDP right; UDP wrong; TCP with a
 * wrong header checksum (the header untrusted: l4 not judged); TCP right; TCP wrong; UDP with
 * checksum 0 (none). Every other frame is not IP: nothing to be wrong.
 */
#define CSUM_FIRST 2
#define CSUM_LAST 7

static uint32_t make_csum_frame(uint8_t *f, uint32_t i)
{
	const uint32_t len = 60 + i * 40, l4 = SDP_PKT_ETH_HLEN + SDP_PKT_IP4_HLEN;
	const int tcp = i == 4 || i == 5 || i == 6;
	static const uint8_t dst[6] = {2, 0x50, 0x43, 0x41, 0x50, 1},
			     src[6] = {2, 0x50, 0x43, 0x41, 0x50, 2};
	static const uint8_t sip[4] = {10, 9, 8, 1}, dip[4] = {10, 9, 8, 2};
	uint8_t *ip = f + SDP_PKT_ETH_HLEN, *t = f + l4;

	memset(f, 0, len);
	for (uint32_t k = l4; k < len; k++)
		f[k] = (uint8_t)(k * 7 + i);
	sdp_pkt_eth_build(f, dst, src, SDP_PKT_ETHERTYPE_IPV4);
	sdp_pkt_ip4_build(ip, (uint16_t)(len - SDP_PKT_ETH_HLEN), (uint16_t)i, SDP_PKT_IP4_DF,
			  tcp ? SDP_PKT_PROTO_TCP : SDP_PKT_PROTO_UDP, sip, dip);
	sdp_pkt_ip4_csum_set(ip);
	if (tcp) {
		sdp_pkt_tcp_build(t, 1000, 80, 1, 0, 0x02, 1024);
		sdp_pkt_tcp_csum_set(t, len - l4,
				     sdp_pkt_pseudo_sum(ip, 4, SDP_PKT_PROTO_TCP, len - l4));
	} else {
		sdp_pkt_udp_build(t, 1000, 53, (uint16_t)(len - l4));
		if (i != 7)
			sdp_pkt_udp_csum_set(
				t, len - l4,
				sdp_pkt_pseudo_sum(ip, 4, SDP_PKT_PROTO_UDP, len - l4));
	}
	if (i == 3 || i == 6)
		f[len - 1] ^= 0x5a; /* the payload changed after the checksum */
	if (i == 4)
		ip[SDP_PKT_IP4_TTL]--; /* the header changed after its checksum */
	return len;
}

static int write_rx_pcap(void)
{
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *d;

	if (dead == NULL) {
		t_fail("pcap_open_dead failed");
		return -1;
	}
	d = pcap_dump_open(dead, g_rx_path);
	if (d == NULL) {
		t_fail("pcap_dump_open %s: %s", g_rx_path, pcap_geterr(dead));
		pcap_close(dead);
		return -1;
	}
	for (uint32_t i = 0; i < RX_FRAMES; i++) {
		struct pcap_pkthdr h = {.ts = {.tv_sec = 1700000000, .tv_usec = (suseconds_t)i},
					.caplen = g_rx_lens[i],
					.len = g_rx_lens[i]};

		pcap_dump((u_char *)d, &h, g_rx_frames[i]);
	}
	pcap_dump_close(d);
	pcap_close(dead);
	return 0;
}

struct rx_check {
	uint32_t next; /* index of the frame expected next */
	uint32_t wrong;
};

static void on_frame(struct t_eth_rx *rx, const uint8_t *f, size_t len)
{
	struct rx_check *c = rx->user;

	if (c->next >= RX_FRAMES) {
		if (c->wrong++ < 5)
			t_fail("frame %u of %zu bytes beyond the %d the file holds", c->next, len,
			       RX_FRAMES);
	} else if (len != g_rx_lens[c->next] || memcmp(f, g_rx_frames[c->next], len) != 0) {
		/* bytes 15-16 carry the frame's number in the file: say which one came */
		if (c->wrong++ < 5)
			t_fail("received frame %u (%zu bytes, numbered %d) differs from frame %u of "
			       "the file (%u bytes)",
			       c->next, len, len >= 17 ? f[15] << 8 | f[16] : -1, c->next,
			       g_rx_lens[c->next]);
	}
	c->next++;
}

static void test_rx(struct doca_devinfo *di)
{
	static uint8_t l3_ok[RX_FRAMES], l4_ok[RX_FRAMES];
	struct rx_check chk = {0};
	struct sdp_eth_rxq_counters rc = {0};
	struct sdp_eth_port_counters pc = {0};
	struct doca_dev *dev = NULL;
	struct doca_pe *pe = NULL;
	struct t_eth_mem mem;
	struct t_eth_rx rx;
	uint64_t bytes = 0;

	for (int i = 0; i < RX_FRAMES; i++)
		bytes += g_rx_lens[i];
	T_OK(doca_dev_open(di, &dev));
	if (dev == NULL)
		return;
	T_OK(doca_pe_create(&pe));
	if (t_eth_mem_init(&mem, (size_t)NB_TASKS * T_ETH_SLOT, &dev, 1, NB_TASKS) != 0)
		goto out_mem;
	if (t_eth_rx_init(&rx, pe, dev, &mem, 0, NB_TASKS, T_ETH_SLOT) != 0)
		goto out_rx;
	rx.user = &chk;
	rx.on_frame = on_frame;
	rx.l3_ok = l3_ok;
	rx.l4_ok = l4_ok;
	rx.verdicts_cap = RX_FRAMES;
	t_eth_rx_start(&rx);
	if (!t_eth_progress_until(pe, &rx.received, RX_FRAMES, 10))
		t_fail("received %llu of %d frames within 10 s", (unsigned long long)rx.received,
		       RX_FRAMES);
	t_eth_progress_for(pe, 0.2); /* the replay is over: nothing more */
	T_EQ_INT(rx.received, RX_FRAMES);
	T_EQ_INT(chk.next, RX_FRAMES);
	T_EQ_INT(chk.wrong, 0);
	for (uint32_t i = 0; i < RX_FRAMES; i++) {
		uint8_t w3 = i == 4 ? 0 : 1, w4 = i == 3 || i == 6 ? 0 : 1;

		if (l3_ok[i] != w3 || l4_ok[i] != w4)
			t_fail("frame %u: l3_ok %u l4_ok %u, want %u %u", i, l3_ok[i], l4_ok[i], w3,
			       w4);
	}
	T_EQ_INT(rx.errors, 0);
	T_EQ_INT(rx.resubmit_failed, 0);
	T_OK(sdp_eth_rxq_get_counters(rx.rxq, &rc));
	T_EQ_INT(rc.packets, RX_FRAMES);
	T_EQ_INT(rc.bytes, bytes);
	T_EQ_INT(rc.drops, 0);
	T_EQ_INT(rc.overwrites, 0);
	T_EQ_INT(rc.truncated, 0);
	T_OK(sdp_eth_dev_get_port_counters(dev, &pc));
	T_EQ_INT(pc.rx_packets, RX_FRAMES);
	T_EQ_INT(pc.rx_bytes, bytes);
	T_EQ_INT(pc.rx_unsteered, 0);
	T_EQ_INT(pc.rx_port_drops, 0);
out_rx:
	t_eth_rx_fini(&rx);
	T_EQ_INT(rx.flushed, NB_TASKS);
out_mem:
	t_eth_mem_fini(&mem);
	T_OK(doca_pe_destroy(pe));
	T_OK(doca_dev_close(dev));
}

/* A send task over buf (a frame of a size no wire takes) is refused at submit. */
static void refused_send(struct t_eth_tx *tx, struct doca_buf *buf)
{
	struct doca_eth_txq_task_send *task = NULL;

	T_OK(doca_eth_txq_task_send_allocate_init(tx->txq, buf, (union doca_data){0}, &task));
	if (task == NULL)
		return;
	T_STATUS(doca_task_submit(doca_eth_txq_task_send_as_doca_task(task)),
		 DOCA_ERROR_INVALID_VALUE);
	doca_task_free(doca_eth_txq_task_send_as_doca_task(task));
}

static void test_tx(struct doca_devinfo *di)
{
	struct sdp_eth_txq_counters tc = {0};
	struct sdp_eth_port_counters pc = {0};
	struct doca_eth_txq_task_send *task = NULL;
	struct doca_buf *buf = NULL;
	struct doca_dev *dev = NULL;
	struct doca_pe *pe = NULL;
	struct t_eth_mem mem;
	struct t_eth_tx tx;
	struct pcap_pkthdr *h;
	const u_char *data;
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *in;
	uint64_t bytes = 0;
	uint32_t k = 0;
	int r;

	T_OK(doca_dev_open(di, &dev));
	if (dev == NULL)
		return;
	T_OK(doca_pe_create(&pe));
	/* TX_SLOTS send slots, then one slot for the refused frames */
	if (t_eth_mem_init(&mem, (size_t)(TX_SLOTS + 1) * T_ETH_SLOT + 16384, &dev, 1,
			   TX_SLOTS + 2) != 0)
		goto out_mem;
	if (t_eth_tx_init(&tx, pe, dev, &mem, 0, TX_SLOTS) != 0)
		goto out_tx;
	/* a frame shorter than an Ethernet header and one above 9216 bytes are refused */
	T_OK(doca_buf_inventory_buf_get_by_data(mem.inv, mem.mmap, mem.base + TX_SLOTS * T_ETH_SLOT,
						13, &buf));
	T_STATUS(doca_eth_txq_task_send_allocate_init(NULL, buf, (union doca_data){0}, &task),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_txq_task_send_allocate_init(tx.txq, buf, (union doca_data){0}, NULL),
		 DOCA_ERROR_INVALID_VALUE);
	refused_send(&tx, buf);
	T_OK(doca_buf_dec_refcount(buf, NULL));
	buf = NULL;
	T_OK(doca_buf_inventory_buf_get_by_data(mem.inv, mem.mmap, mem.base + TX_SLOTS * T_ETH_SLOT,
						9217, &buf));
	refused_send(&tx, buf);
	T_OK(doca_buf_dec_refcount(buf, NULL));

	for (uint32_t i = 0; i < TX_FRAMES; i++) {
		bytes += g_tx_lens[i];
		if (t_eth_tx_send(&tx, g_tx_frames[i], g_tx_lens[i]) != 0)
			break;
	}
	{
		uint64_t want = tx.submitted;

		/* completions of every send, then the counters while the port is open */
		T_TRUE(t_eth_progress_until(pe, &tx.completed, want, 5));
	}
	T_EQ_INT(tx.submitted, TX_FRAMES);
	T_EQ_INT(tx.completed, TX_FRAMES);
	T_EQ_INT(tx.errors, 0);
	T_OK(sdp_eth_txq_get_counters(tx.txq, &tc));
	T_EQ_INT(tc.packets, TX_FRAMES);
	T_EQ_INT(tc.bytes, bytes);
	T_EQ_INT(tc.errors, 0);
	T_OK(sdp_eth_dev_get_port_counters(dev, &pc));
	T_EQ_INT(pc.tx_packets, TX_FRAMES);
	T_EQ_INT(pc.tx_bytes, bytes);
	T_EQ_INT(pc.rx_packets, 0);
out_tx:
	t_eth_tx_fini(&tx); /* stops the queue: the port closes and flushes the file */
out_mem:
	t_eth_mem_fini(&mem);
	T_OK(doca_pe_destroy(pe));
	T_OK(doca_dev_close(dev));

	in = pcap_open_offline(g_tx_path, err);
	if (in == NULL) {
		t_fail("pcap_open_offline %s: %s", g_tx_path, err);
		return;
	}
	T_EQ_INT(pcap_datalink(in), DLT_EN10MB);
	while ((r = pcap_next_ex(in, &h, &data)) == 1) {
		if (k < TX_FRAMES && (h->caplen != g_tx_lens[k] || h->len != g_tx_lens[k] ||
				      memcmp(data, g_tx_frames[k], g_tx_lens[k]) != 0))
			t_fail("recorded frame %u (%u of %u bytes) differs from sent frame %u (%u "
			       "bytes)",
			       k, h->caplen, h->len, k, g_tx_lens[k]);
		k++;
	}
	T_EQ_INT(r, PCAP_ERROR_BREAK); /* the end of the file, not an error */
	T_EQ_INT(k, TX_FRAMES);
	pcap_close(in);
}

int main(void)
{
	struct doca_devinfo **list = NULL, *rxd, *txd;
	char decls[512], nrx[32], ntx[32];
	uint32_t n = 0;

	if (getenv("SOFTDPU_PROVIDER_PATH") == NULL)
		T_SKIP("SOFTDPU_PROVIDER_PATH is not set (run through meson test)");
	snprintf(g_rx_path, sizeof(g_rx_path), "/tmp/sdp-eth-pcap-%d-rx.pcap", (int)getpid());
	snprintf(g_tx_path, sizeof(g_tx_path), "/tmp/sdp-eth-pcap-%d-tx.pcap", (int)getpid());
	for (uint32_t i = 0; i < RX_FRAMES; i++)
		g_rx_lens[i] = i >= CSUM_FIRST && i <= CSUM_LAST ?
				       make_csum_frame(g_rx_frames[i], i) :
				       make_frame(g_rx_frames[i], i, 1);
	for (uint32_t i = 0; i < TX_FRAMES; i++)
		g_tx_lens[i] = make_frame(g_tx_frames[i], i, 2);
	if (write_rx_pcap() != 0)
		goto out;
	/* the tx file must not exist before the device creates it */
	unlink(g_tx_path);
	snprintf(nrx, sizeof(nrx), "epr%d", (int)getpid());
	snprintf(ntx, sizeof(ntx), "ept%d", (int)getpid());
	snprintf(decls, sizeof(decls), "pcap:name=%s,rx=%s,speed=max;pcap:name=%s,tx=%s", nrx,
		 g_rx_path, ntx, g_tx_path);
	setenv("SOFTDPU_DEVICES", decls, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	unsetenv("SOFTDPU_ETH_OVERFLOW");
	t_log_capture();

	T_OK(doca_devinfo_create_list(&list, &n));
	if (list == NULL)
		goto out;
	rxd = t_find_dev(list, n, nrx);
	txd = t_find_dev(list, n, ntx);
	if (rxd == NULL || txd == NULL) {
		t_fail("pcap devices %s/%s are not listed; the log:\n%s", nrx, ntx, t_log);
	} else {
		test_rx(rxd);
		test_tx(txd);
	}
	T_OK(doca_devinfo_destroy_list(list));
out:
	unlink(g_rx_path);
	unlink(g_tx_path);
	T_DONE();
}
