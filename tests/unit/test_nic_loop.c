/*
 * The `loop` provider: declarations (good and refused, with reasons), its devices in the device
 * list, and its Ethernet port: round trips checked byte for byte in both directions, per-queue
 * order, a full wire (short tx_burst, tx_fd, nothing lost), rx_fd waking a poll(), truncation,
 * link state, the frames a port without RX queues loses (stats), and the bad-argument paths.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doca_dev.h"
#include "sdp_provider.h"
#include "sdp_provider_eth.h"
#include "t_helpers.h"
#include "t_nic.h"

#define DEPTH 8
#define MAX_FRAME (1500 + 18)

static char g_a[32], g_b[32]; /* the good pair, unique per run */
static const struct sdp_eth_port_ops *g_ops;

/* Frame i of (direction, queue): a length from 60 to MAX_FRAME and bytes only it has. */
static uint32_t frame_len(int dir, int q, uint32_t i)
{
	return 60 + (i * 97 + (uint32_t)q * 31 + (uint32_t)dir * 7) % (MAX_FRAME - 60 + 1);
}

static void frame_fill(uint8_t *buf, int dir, int q, uint32_t i)
{
	uint32_t len = frame_len(dir, q, i);

	for (uint32_t k = 0; k < len; k++)
		buf[k] = (uint8_t)(k * 13 + i * 7 + (uint32_t)q * 101 + (uint32_t)dir * 53);
	/* the first bytes carry the identity, so a misordered frame is named in the message */
	buf[0] = (uint8_t)dir;
	buf[1] = (uint8_t)q;
	memcpy(buf + 2, &i, sizeof(i));
}

/* Send frames [first, first + n) of (dir, q) from port; returns how many were taken. */
static uint16_t send_frames(struct sdp_eth_port *port, int dir, int q, uint32_t first, uint16_t n)
{
	static uint8_t bufs[64][MAX_FRAME];
	struct sdp_pkt pkts[64];

	for (uint16_t j = 0; j < n; j++) {
		frame_fill(bufs[j], dir, q, first + j);
		pkts[j] = (struct sdp_pkt){.data = bufs[j], .len = frame_len(dir, q, first + j)};
	}
	return g_ops->tx_burst(port, (uint16_t)q, pkts, n);
}

/*
 * Receive up to max frames from port's RX queue rxq and check each is the next frame expected
 * of (dir, its queue): next[] holds the next index per sending queue. Returns the count.
 */
static uint16_t recv_check(struct sdp_eth_port *port, uint16_t rxq, int dir, uint32_t *next,
			   uint16_t max)
{
	static uint8_t bufs[64][MAX_FRAME], want[MAX_FRAME];
	struct sdp_pkt pkts[64];
	uint16_t got;

	for (uint16_t j = 0; j < max; j++)
		pkts[j] = (struct sdp_pkt){.data = bufs[j], .cap = MAX_FRAME, .flags = 0xff};
	got = g_ops->rx_burst(port, rxq, pkts, max);
	for (uint16_t j = 0; j < got; j++) {
		int q = bufs[j][1];
		uint32_t i;

		memcpy(&i, bufs[j] + 2, sizeof(i));
		if (bufs[j][0] != dir || q > 3 || i != next[q]) {
			t_fail("rx queue %u: got frame (dir %d, queue %d, #%u), expected dir %d, "
			       "queue %d #%u",
			       rxq, bufs[j][0], q, i, dir, q, q <= 3 ? next[q] : 0);
			continue;
		}
		frame_fill(want, dir, q, i);
		T_EQ_INT(pkts[j].len, frame_len(dir, q, i));
		T_EQ_INT(pkts[j].wire_len, frame_len(dir, q, i));
		T_EQ_INT(pkts[j].flags, 0);
		T_TRUE(pkts[j].ts_ns != 0);
		if (memcmp(bufs[j], want, frame_len(dir, q, i)) != 0)
			t_fail("frame (dir %d, queue %d, #%u) differs from what was sent", dir, q,
			       i);
		next[q]++;
	}
	return got;
}

struct late_sender {
	struct sdp_eth_port *port;
	uint16_t taken;
};

static void *late_send(void *arg)
{
	struct late_sender *ls = arg;

	usleep(100 * 1000);
	ls->taken = send_frames(ls->port, 0, 0, 1000, 1);
	return NULL;
}

/*
 * A sender thread pushes STREAM frames through a full-prone wire, sleeping on tx_fd when it is
 * short, while this thread sleeps on rx_fd and checks every frame in order: the wake-ups must
 * never be lost (a lost one shows as a poll timeout) and never spin (bounded count of wake-ups
 * that found nothing).
 */
#define STREAM 20000

struct streamer {
	struct sdp_eth_port *port;
	uint32_t sent;
	uint32_t stalls; /* tx_fd polls that timed out */
};

static void *stream_send(void *arg)
{
	struct streamer *st = arg;

	while (st->sent < STREAM) {
		uint16_t want = (uint16_t)(STREAM - st->sent < 16 ? STREAM - st->sent : 16);
		uint16_t k = send_frames(st->port, 0, 0, st->sent, want);

		st->sent += k;
		if (k < want && !t_readable(g_ops->tx_fd(st->port, 0), 2000) && ++st->stalls > 3)
			break;
	}
	return NULL;
}

static void test_stream(struct sdp_eth_port *tx, struct sdp_eth_port *rx)
{
	struct streamer st = {.port = tx};
	uint32_t next[4] = {0}, empty_wakeups = 0, wakeups = 0, timeouts = 0;
	pthread_t th;

	T_EQ_INT(pthread_create(&th, NULL, stream_send, &st), 0);
	while (next[0] < STREAM && timeouts < 3) {
		uint16_t got;

		if (!t_readable(g_ops->rx_fd(rx, 0), 2000)) {
			timeouts++;
			continue;
		}
		wakeups++;
		got = recv_check(rx, 0, 0, next, 7);
		empty_wakeups += got == 0;
	}
	pthread_join(th, NULL);
	T_EQ_INT(next[0], STREAM);
	T_EQ_INT(st.sent, STREAM);
	T_EQ_INT(timeouts, 0);
	T_EQ_INT(st.stalls, 0);
	/* a readable rx_fd with nothing behind it is rare (a race), never a loop */
	if (empty_wakeups > wakeups / 2 + 10)
		t_fail("%u of %u rx wake-ups found no frame", empty_wakeups, wakeups);
}

static void test_decls(struct doca_devinfo **list, uint32_t n)
{
	static const char *const refused[] = {"lx",	"lnopeer", "lmiss", "lself", "ldepth",
					      "lthird", "lk",	   "ll",    "lmac"};
	const struct sdp_provider_issue *issues;
	size_t num_issues = sdp_provider_get_issues(&issues);
	char name[64];

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		snprintf(name, sizeof(name), "%s%d", refused[i], (int)getpid());
		if (t_find_dev(list, n, name) != NULL)
			t_fail("device %s is listed but its declaration is bad", name);
	}
	/* decl_check refusals are issues of the core, with the reason in the log */
	T_LOGGED("SOFTDPU_DEVICES entry 3", "unknown key 'colour'", "keys: name peer mac");
	T_LOGGED("SOFTDPU_DEVICES entry 4", "needs peer=<device name>");
	T_LOGGED("SOFTDPU_DEVICES entry 6", "cannot be its own peer");
	T_LOGGED("SOFTDPU_DEVICES entry 7", "depth=0 is not a number from 1 to 4096");
	T_LOGGED("SOFTDPU_DEVICES entry 11", "mac=01:00:5e:00:00:01 is not a unicast MAC");
	T_LOGGED("SOFTDPU_DEVICES entry 12", "queues=65 is not a number from 1 to 64");
	/* enumerate refusals: the pairing is known only once every declaration is read */
	snprintf(name, sizeof(name), "its peer lnone%d is not declared", (int)getpid());
	T_LOGGED("SOFTDPU_DEVICES entry 5", name);
	T_LOGGED("SOFTDPU_DEVICES entry 8", "is joined to");
	T_LOGGED("SOFTDPU_DEVICES entry 9", "says queues=2 but its peer");
	T_LOGGED("SOFTDPU_DEVICES entry 10", "says queues=3 but its peer");
	{
		int seen[13] = {0};

		for (size_t i = 0; i < num_issues; i++) {
			int e;

			if (sscanf(issues[i].where, "SOFTDPU_DEVICES entry %d", &e) == 1 && e > 0 &&
			    e < 13 && strstr(issues[i].reason, "refused by provider 'loop'"))
				seen[e] = 1;
		}
		T_TRUE(seen[3] && seen[4] && seen[6] && seen[7] && seen[11] && seen[12]);
		T_TRUE(!seen[1] && !seen[2]);
	}
}

static void test_listing(struct doca_devinfo **list, uint32_t n, char pci_a[], char pci_b[])
{
	struct doca_devinfo *a = t_find_dev(list, n, g_a), *b = t_find_dev(list, n, g_b);
	char buf[64];

	T_TRUE(a != NULL && b != NULL);
	if (a == NULL || b == NULL)
		return;
	T_OK(doca_devinfo_get_iface_name(a, buf, sizeof(buf)));
	T_EQ_STR(buf, g_a);
	T_OK(doca_devinfo_get_iface_name(b, buf, sizeof(buf)));
	T_EQ_STR(buf, g_b);
	T_OK(doca_devinfo_get_pci_addr_str(a, pci_a));
	T_OK(doca_devinfo_get_pci_addr_str(b, pci_b));
	T_TRUE(strncmp(pci_a, "ffff:01:", 8) == 0);
	T_TRUE(strncmp(pci_b, "ffff:01:", 8) == 0);
	T_TRUE(strcmp(pci_a, pci_b) != 0);
	T_OK(doca_devinfo_is_equal_pci_addr(a, pci_a, (uint8_t[]){0}));
	{
		uint8_t eq = 0;

		T_OK(doca_devinfo_is_equal_pci_addr(a, "ffff:00:00.0", &eq));
		T_EQ_INT(eq, 0);
		T_OK(doca_devinfo_is_equal_pci_addr(a, pci_a, &eq));
		T_EQ_INT(eq, 1);
	}
	T_EQ_STR(sdp_devinfo_get_provider_name(a), "loop");
	T_EQ_INT(sdp_devinfo_get_attr(a)->link_up, 1);
	T_EQ_INT(sdp_devinfo_get_attr(b)->link_up, 1);
	{
		enum doca_pci_func_type type;

		T_OK(doca_devinfo_get_pci_func_type(a, &type));
		T_EQ_INT(type, DOCA_PCI_FUNC_TYPE_PF);
	}
}

static void test_ports(struct doca_dev *dev_a, struct doca_dev *dev_b)
{
	struct sdp_eth_port_cfg cfg = {.nb_rxq = 2, .nb_txq = 2, .ring_size = 64};
	struct sdp_eth_port_cfg none = {0};
	struct sdp_eth_port_info ia, ib;
	struct sdp_eth_port *pa = NULL, *pb = NULL, *px = (struct sdp_eth_port *)&cfg;
	uint32_t next[4] = {0};
	uint16_t got;

	/* bad arguments */
	T_STATUS(g_ops->port_open(NULL, &cfg, &pa, &ia), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(g_ops->port_open(sdp_dev_get_priv(dev_a), NULL, &pa, &ia),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(g_ops->port_open(sdp_dev_get_priv(dev_a), &cfg, NULL, &ia),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(g_ops->port_open(sdp_dev_get_priv(dev_a), &none, &pa, &ia),
		 DOCA_ERROR_INVALID_VALUE);
	T_TRUE(pa == NULL);

	/* A alone: link down, what it sends is lost */
	T_OK(g_ops->port_open(sdp_dev_get_priv(dev_a), &cfg, &pa, &ia));
	if (pa == NULL)
		return;
	T_EQ_INT(ia.nb_rxq, 2);
	T_EQ_INT(ia.nb_txq, 2);
	T_EQ_INT(ia.mtu, 1500);
	T_EQ_INT(ia.has_rx_fd, 1);
	T_TRUE(memcmp(ia.mac, (uint8_t[]){0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x01}, 6) == 0);
	T_STATUS(g_ops->port_open(sdp_dev_get_priv(dev_a), &cfg, &px, &ib), DOCA_ERROR_IN_USE);
	T_TRUE(px == (struct sdp_eth_port *)&cfg);
	T_EQ_INT(g_ops->link_up(pa), 0);
	T_EQ_INT(send_frames(pa, 0, 0, 500, 3), 3);

	/* B asks for 4 RX queues, the wire has 2 */
	cfg.nb_rxq = 4;
	T_OK(g_ops->port_open(sdp_dev_get_priv(dev_b), &cfg, &pb, &ib));
	if (pb == NULL)
		goto close_a;
	T_EQ_INT(ib.nb_rxq, 2);
	T_EQ_INT(ib.nb_txq, 2);
	T_EQ_INT(g_ops->link_up(pa), 1);
	T_EQ_INT(g_ops->link_up(pb), 1);
	T_TRUE(g_ops->rx_fd(pb, 0) >= 0 && g_ops->rx_fd(pb, 1) >= 0);
	T_EQ_INT(g_ops->rx_fd(pb, 2), -1);
	T_EQ_INT(g_ops->tx_fd(pa, 2), -1);
	/* the default MAC: locally administered, unicast, from the name */
	T_EQ_INT(ib.mac[0], 0x02);
	T_EQ_INT(ib.mac[1], 0x4c);
	T_EQ_INT(t_readable(g_ops->rx_fd(pb, 0), 0), 0); /* the frames sent link-down are gone */
	T_EQ_INT(recv_check(pb, 0, 0, next, 8), 0);

	/* round trips, both directions, both queues, in batches; each frame checked */
	for (int dir = 0; dir < 2; dir++) {
		struct sdp_eth_port *tx = dir == 0 ? pa : pb, *rx = dir == 0 ? pb : pa;
		uint32_t sent[2] = {0};

		memset(next, 0, sizeof(next));
		for (int round = 0; round < 40; round++) {
			for (int q = 0; q < 2; q++) {
				uint16_t k = (uint16_t)(1 + (round + q) % DEPTH);

				T_EQ_INT(send_frames(tx, dir, q, sent[q], k), k);
				sent[q] += k;
			}
			for (uint16_t q = 0; q < 2; q++) {
				T_EQ_INT(t_readable(g_ops->rx_fd(rx, q), 1000), 1);
				while (recv_check(rx, q, dir, next, 3) != 0)
					;
				T_EQ_INT(t_readable(g_ops->rx_fd(rx, q), 0), 0);
			}
		}
		T_EQ_INT(next[0], sent[0]);
		T_EQ_INT(next[1], sent[1]);
	}

	/* a full wire: short tx_burst, tx_fd says when there is room, nothing is lost */
	memset(next, 0, sizeof(next));
	T_EQ_INT(send_frames(pa, 0, 0, 0, 20), DEPTH);
	T_EQ_INT(send_frames(pa, 0, 0, DEPTH, 5), 0);
	T_EQ_INT(t_readable(g_ops->tx_fd(pa, 0), 0), 0);
	T_EQ_INT(recv_check(pb, 0, 0, next, 3), 3);
	T_EQ_INT(t_readable(g_ops->tx_fd(pa, 0), 1000), 1);
	T_EQ_INT(send_frames(pa, 0, 0, DEPTH, 12), 3);
	T_EQ_INT(send_frames(pa, 0, 0, DEPTH + 3, 1), 0);
	/* queue 1 is independent of the full queue 0 */
	T_EQ_INT(send_frames(pa, 0, 1, 0, 2), 2);
	T_EQ_INT(recv_check(pb, 1, 0, next, 8), 2);
	{
		uint32_t sent = DEPTH + 3;

		while (next[0] < 20) {
			T_EQ_INT(t_readable(g_ops->rx_fd(pb, 0), 1000), 1);
			got = recv_check(pb, 0, 0, next, 5);
			if (got == 0)
				break;
			if (sent < 20)
				sent += send_frames(pa, 0, 0, sent, (uint16_t)(20 - sent));
		}
		T_EQ_INT(next[0], 20);
		T_EQ_INT(sent, 20);
	}

	test_stream(pa, pb);

	/* rx_fd wakes a poll() that sleeps while another thread sends */
	{
		struct late_sender ls = {.port = pa};
		pthread_t th;
		double t0 = t_now();
		uint32_t nxt[4] = {[0] = 1000};

		T_EQ_INT(pthread_create(&th, NULL, late_send, &ls), 0);
		T_EQ_INT(t_readable(g_ops->rx_fd(pb, 0), 5000), 1);
		T_TRUE(t_now() - t0 < 4.0);
		pthread_join(th, NULL);
		T_EQ_INT(ls.taken, 1);
		T_EQ_INT(recv_check(pb, 0, 0, nxt, 4), 1);
	}

	/* truncation: the engine buffer is smaller than the frame */
	{
		uint8_t small[100], want[MAX_FRAME];
		struct sdp_pkt pkt = {.data = small, .cap = sizeof(small)};

		T_EQ_INT(send_frames(pa, 0, 0, 7, 1), 1);
		T_EQ_INT(g_ops->rx_burst(pb, 0, &pkt, 1), 1);
		frame_fill(want, 0, 0, 7);
		T_EQ_INT(pkt.len, sizeof(small));
		T_EQ_INT(pkt.wire_len, frame_len(0, 0, 7));
		T_EQ_INT(pkt.flags, SDP_PKT_F_TRUNCATED);
		T_TRUE(memcmp(small, want, sizeof(small)) == 0);
	}

	/* bad frames are taken and dropped; bad queues take nothing */
	{
		uint8_t big[MAX_FRAME + 1] = {0};
		struct sdp_pkt bad[3] = {{.data = big, .len = 0},
					 {.data = big, .len = MAX_FRAME + 1},
					 {.data = NULL, .len = 64}};
		struct sdp_pkt rxp = {.data = big, .cap = sizeof(big)};

		T_EQ_INT(g_ops->tx_burst(pa, 0, bad, 3), 3);
		T_EQ_INT(g_ops->rx_burst(pb, 0, &rxp, 1), 0);
		T_EQ_INT(g_ops->tx_burst(pa, 2, bad, 1), 0);
		T_EQ_INT(g_ops->tx_burst(pa, 0, NULL, 1), 0);
		T_EQ_INT(g_ops->rx_burst(pb, 2, &rxp, 1), 0);
		T_EQ_INT(g_ops->rx_burst(NULL, 0, &rxp, 1), 0);
		T_EQ_INT(g_ops->rx_fd(NULL, 0), -1);
		T_EQ_INT(g_ops->link_up(NULL), 0);
		T_EQ_INT(g_ops->tx_burst(pa, 0, bad, 0), 0);
	}

	/* B with one RX queue drains both wire queues, each in its order */
	g_ops->port_close(pb);
	T_EQ_INT(g_ops->link_up(pa), 0);
	cfg.nb_rxq = 1;
	pb = NULL;
	T_OK(g_ops->port_open(sdp_dev_get_priv(dev_b), &cfg, &pb, &ib));
	if (pb == NULL)
		goto close_a;
	T_EQ_INT(ib.nb_rxq, 1);
	memset(next, 0, sizeof(next));
	T_EQ_INT(send_frames(pa, 0, 0, 0, 4), 4);
	T_EQ_INT(send_frames(pa, 0, 1, 0, 5), 5);
	T_EQ_INT(t_readable(g_ops->rx_fd(pb, 0), 1000), 1);
	T_EQ_INT(recv_check(pb, 0, 0, next, 64), 9);
	T_EQ_INT(next[0], 4);
	T_EQ_INT(next[1], 5);
	T_EQ_INT(g_ops->rx_fd(pb, 1), -1);
	/*
	 * The wake-ups follow the rings' edges (the fd is drained only once every ring the queue
	 * reads is empty): readable while a frame waits on either wire queue, after a partial
	 * read too, and not once both are empty.
	 */
	T_EQ_INT(t_readable(g_ops->rx_fd(pb, 0), 0), 0);
	T_EQ_INT(send_frames(pa, 0, 1, 5, 3), 3);
	T_EQ_INT(t_readable(g_ops->rx_fd(pb, 0), 1000), 1);
	T_EQ_INT(recv_check(pb, 0, 0, next, 2), 2);
	T_EQ_INT(t_readable(g_ops->rx_fd(pb, 0), 0), 1);
	T_EQ_INT(send_frames(pa, 0, 0, 4, 1), 1);
	T_EQ_INT(recv_check(pb, 0, 0, next, 64), 2);
	T_EQ_INT(next[0], 5);
	T_EQ_INT(next[1], 8);
	T_EQ_INT(t_readable(g_ops->rx_fd(pb, 0), 0), 0);
	T_EQ_INT(send_frames(pa, 0, 0, 5, 1), 1);
	T_EQ_INT(t_readable(g_ops->rx_fd(pb, 0), 1000), 1);
	T_EQ_INT(recv_check(pb, 0, 0, next, 64), 1);
	T_EQ_INT(t_readable(g_ops->rx_fd(pb, 0), 0), 0);

	/* frames waiting for a port that closes are dropped with the link */
	T_EQ_INT(send_frames(pa, 0, 0, 0, 4), 4);
	g_ops->port_close(pb);
	pb = NULL;
	T_OK(g_ops->port_open(sdp_dev_get_priv(dev_b), &cfg, &pb, &ib));
	if (pb != NULL) {
		memset(next, 0, sizeof(next));
		T_EQ_INT(recv_check(pb, 0, 0, next, 64), 0);
		g_ops->port_close(pb);
	}

	/*
	 * B open without an RX queue: the link is up, and what A sends is lost at B, which counts
	 * it (stats); nothing else a loop port ever loses, so A counts nothing.
	 */
	{
		struct sdp_eth_port_cfg tx_only = {.nb_rxq = 0, .nb_txq = 1, .ring_size = 64};
		struct sdp_eth_port_stats st;

		pb = NULL;
		T_OK(g_ops->port_open(sdp_dev_get_priv(dev_b), &tx_only, &pb, &ib));
		if (pb != NULL && g_ops->stats == NULL)
			t_fail("expected loop to have the stats op");
		if (pb != NULL && g_ops->stats != NULL) {
			T_EQ_INT(ib.nb_rxq, 0);
			T_EQ_INT(g_ops->link_up(pa), 1);
			memset(&st, 0xff, sizeof(st));
			g_ops->stats(pb, &st);
			T_EQ_INT(st.rx_drops, 0);
			T_EQ_INT(send_frames(pa, 0, 0, 0, 3), 3);
			T_EQ_INT(send_frames(pa, 0, 1, 0, 2), 2);
			g_ops->stats(pb, &st);
			T_EQ_INT(st.rx_drops, 5);
			g_ops->stats(pa, &st);
			T_EQ_INT(st.rx_drops, 0);
			g_ops->stats(NULL, &st);
			T_EQ_INT(st.rx_drops, 0);
			g_ops->stats(pb, NULL);
		}
		if (pb != NULL)
			g_ops->port_close(pb);
	}
close_a:
	g_ops->port_close(pa);
	g_ops->port_close(NULL);
}

int main(void)
{
	struct doca_devinfo **list = NULL, **list2 = NULL;
	struct doca_devinfo *host;
	struct doca_dev *dev_a = NULL, *dev_b = NULL, *dev_h = NULL;
	char decls[2048], pci_a[DOCA_DEVINFO_PCI_ADDR_SIZE] = "",
			  pci_b[DOCA_DEVINFO_PCI_ADDR_SIZE] = "";
	uint32_t n = 0, n2 = 0;
	int pid = (int)getpid();

	snprintf(g_a, sizeof(g_a), "la%d", pid);
	snprintf(g_b, sizeof(g_b), "lb%d", pid);
	snprintf(decls, sizeof(decls),
		 "loop:name=%s,peer=%s,mac=02:AA:bb:cc:dd:01,queues=2,depth=%d;" /* 1 */
		 "loop:name=%s,peer=%s,queues=2;"				 /* 2 */
		 "loop:name=lx%d,peer=ly%d,colour=blue;"			 /* 3 */
		 "loop:name=lnopeer%d;"						 /* 4 */
		 "loop:name=lmiss%d,peer=lnone%d;"				 /* 5 */
		 "loop:name=lself%d,peer=lself%d;"				 /* 6 */
		 "loop:name=ldepth%d,peer=la%d,depth=0;"			 /* 7 */
		 "loop:name=lthird%d,peer=%s;"					 /* 8 */
		 "loop:name=lk%d,peer=ll%d,queues=2;"				 /* 9 */
		 "loop:name=ll%d,peer=lk%d,queues=3;"				 /* 10 */
		 "loop:name=lmac%d,peer=la%d,mac=01:00:5e:00:00:01;"		 /* 11 */
		 "loop:name=lq%d,peer=la%d,queues=65",				 /* 12 */
		 g_a, g_b, DEPTH, g_b, g_a, pid, pid, pid, pid, pid, pid, pid, pid, pid, pid, g_a,
		 pid, pid, pid, pid, pid, pid, pid, pid);
	setenv("SOFTDPU_DEVICES", decls, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	t_log_capture();

	T_OK(doca_devinfo_create_list(&list, &n));
	if (list == NULL)
		T_DONE();
	test_decls(list, n);
	test_listing(list, n, pci_a, pci_b);

	/* the addresses are stable from one list to the next */
	T_OK(doca_devinfo_create_list(&list2, &n2));
	if (list2 != NULL) {
		char again[DOCA_DEVINFO_PCI_ADDR_SIZE] = "";
		struct doca_devinfo *a2 = t_find_dev(list2, n2, g_a);

		T_TRUE(a2 != NULL);
		if (a2 != NULL) {
			T_OK(doca_devinfo_get_pci_addr_str(a2, again));
			T_EQ_STR(again, pci_a);
		}
		T_OK(doca_devinfo_destroy_list(list2));
	}

	/* the host device has no Ethernet port; a NULL device has none either */
	T_TRUE(sdp_dev_get_eth_ops(NULL) == NULL);
	host = t_find_dev(list, n, "softdpu0");
	T_TRUE(host != NULL);
	if (host != NULL && doca_dev_open(host, &dev_h) == DOCA_SUCCESS) {
		T_TRUE(sdp_dev_get_eth_ops(dev_h) == NULL);
		T_OK(doca_dev_close(dev_h));
	}

	if (t_find_dev(list, n, g_a) == NULL || t_find_dev(list, n, g_b) == NULL) {
		doca_devinfo_destroy_list(list);
		T_DONE();
	}
	T_OK(doca_dev_open(t_find_dev(list, n, g_a), &dev_a));
	T_OK(doca_dev_open(t_find_dev(list, n, g_b), &dev_b));
	/* the devices outlive the list */
	T_OK(doca_devinfo_destroy_list(list));
	if (dev_a != NULL && dev_b != NULL) {
		g_ops = sdp_dev_get_eth_ops(dev_a);
		T_TRUE(g_ops != NULL && g_ops == sdp_dev_get_eth_ops(dev_b));
		if (g_ops != NULL)
			test_ports(dev_a, dev_b);
	}
	if (dev_a != NULL)
		T_OK(doca_dev_close(dev_a));
	if (dev_b != NULL)
		T_OK(doca_dev_close(dev_b));
	T_DONE();
}
