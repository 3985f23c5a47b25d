/*
 * The afpacket software NIC over a veth pair (run by test_nic_afpacket.sh, which creates two
 * network namespaces and the pair, and runs this program inside the first one):
 *
 *   test_nic_afpacket <ifa> <ifb> <netns b> <ip a>
 *
 * The port sits on <ifa>; the far end is a raw AF_PACKET socket on <ifb>, opened inside <netns b>
 * (setns), plus a UDP socket there for kernel-built traffic. Checked: the device list (name,
 * interface, synthetic PCI address, link), MAC and MTU, TX and RX frame for frame and byte for
 * byte with exact counts, no echo of the port's own TX, fanout over 2 RX queues (every frame
 * once, a flow always on one queue, both queues used), TP_STATUS_CSUMNOTREADY reported as
 * SDP_PKT_F_CSUM_PARTIAL, a VLAN tag taken out by the kernel put back, truncation, wait-on-time
 * sends, link down/up, port drops of full rings counted exactly (stats), NOT_PERMITTED without
 * CAP_NET_RAW, bad arguments.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "doca_dev.h"
#include "doca_log.h"
#include "sdp_provider.h"
#include "sdp_provider_eth.h"
#include "softdpu/sdp_pkt.h"
#include "t_helpers.h"
#include "t_netns.h"

#define BUF 2048
#define NTX 200	   /* frames the port sends */
#define NFLOWS 100 /* flows the peer sends, two frames each */
#define NRX (2 * NFLOWS)
#define UDP_PORT 40123

static const char *g_ifa, *g_ifb, *g_nsb, *g_ipa;
static struct doca_devinfo **g_list;
static uint32_t g_nb;
static int g_peer = -1;	    /* raw socket on ifb (netns b) */
static int g_peer_udp = -1; /* UDP socket in netns b */
static uint8_t g_mac_a[6];
static char g_log[65536];
static size_t g_log_len;
static char g_log_line[1024];

static void log_flush(char *buf)
{
	size_t n = strlen(buf);

	if (g_log_len + n + 1 < sizeof(g_log)) {
		memcpy(g_log + g_log_len, buf, n);
		g_log_len += n;
		g_log[g_log_len] = '\0';
	}
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct doca_devinfo *find_dev(const char *name)
{
	char buf[DOCA_DEVINFO_IBDEV_NAME_SIZE];

	for (uint32_t i = 0; i < g_nb; i++)
		if (doca_devinfo_get_ibdev_name(g_list[i], buf, sizeof(buf)) == DOCA_SUCCESS &&
		    strcmp(buf, name) == 0)
			return g_list[i];
	return NULL;
}

/* ---- frames ---------------------------------------------------------------------------------- */

/*
 * An Ethernet/IPv4/UDP frame of `len` bytes to a MAC no interface has (the kernels drop it as
 * "other host"; packet sockets still see it). Flow `flow` sets the UDP source port; `tag`
 * (direction) and `seq` go into the payload so every frame is unique.
 */
static void make_frame(uint8_t *f, uint32_t len, const uint8_t src_mac[6], uint32_t flow,
		       uint8_t tag, uint32_t seq)
{
	struct sdp_pkt_udp4 h = {.dst_mac = {0x02, 0x53, 0x44, 0x50, 0x00, 0x99},
				 .src_ip = {10, 99, (uint8_t)(flow >> 8), (uint8_t)flow},
				 .dst_ip = {10, 98, 0, 1},
				 .sport = (uint16_t)(10000 + flow),
				 .dport = 12345};

	memcpy(h.src_mac, src_mac, 6);
	sdp_pkt_udp4_build(f, len, &h);
	for (uint32_t i = SDP_PKT_UDP4_PAYLOAD; i < len; i++)
		f[i] = (uint8_t)(i * 13 + seq * 7 + tag);
	f[42] = tag;
	memcpy(f + 43, &seq, sizeof(seq));
	sdp_pkt_csum_fill(f, len, 1, 0); /* no UDP checksum (allowed over IPv4) */
}

static uint32_t frame_len(uint32_t seq)
{
	return 60 + (seq * 37) % (1514 - 60 + 1);
}

/* ---- the far end ------------------------------------------------------------------------------ */

/* Open the peer's sockets inside netns b, then come back. */
static int peer_open(void)
{
	char path[256];
	struct sockaddr_ll sll;
	int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), nsb, one = 1, rc = -1;
	int rcvbuf = 16 << 20; /* every frame the port sends stays queued until read */

	snprintf(path, sizeof(path), "/run/netns/%s", g_nsb);
	nsb = open(path, O_RDONLY | O_CLOEXEC);
	if (self < 0 || nsb < 0 || setns(nsb, CLONE_NEWNET) != 0) {
		t_fail("expected to enter netns %s: %s", g_nsb, strerror(errno));
		goto out;
	}
	g_peer = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	g_peer_udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)if_nametoindex(g_ifb);
	if (g_peer < 0 || g_peer_udp < 0 || sll.sll_ifindex == 0 ||
	    setsockopt(g_peer, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) != 0 ||
	    setsockopt(g_peer, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) != 0 ||
	    bind(g_peer, (struct sockaddr *)&sll, sizeof(sll)) != 0)
		t_fail("expected a raw socket on %s in %s: %s", g_ifb, g_nsb, strerror(errno));
	else
		rc = 0;
	if (setns(self, CLONE_NEWNET) != 0) {
		t_fail("expected to come back from netns %s: %s", g_nsb, strerror(errno));
		rc = -1;
	}
out:
	if (nsb >= 0)
		close(nsb);
	if (self >= 0)
		close(self);
	return rc;
}

/* One frame from the peer socket within timeout_ms, or -1. */
static ssize_t peer_recv(uint8_t *buf, size_t cap, int timeout_ms)
{
	struct pollfd pfd = {.fd = g_peer, .events = POLLIN};

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return -1;
	return recv(g_peer, buf, cap, MSG_DONTWAIT | MSG_TRUNC);
}

/* ---- the port -------------------------------------------------------------------------------- */

struct port {
	struct doca_dev *dev;
	const struct sdp_eth_port_ops *ops;
	struct sdp_eth_port *p;
	struct sdp_eth_port_info info;
};

static int port_open(const char *name, uint16_t nb_rxq, struct port *port)
{
	struct sdp_eth_port_cfg cfg = {.nb_rxq = nb_rxq, .nb_txq = 1, .ring_size = 512};
	struct doca_devinfo *di = find_dev(name);
	doca_error_t st;

	memset(port, 0, sizeof(*port));
	if (di == NULL) {
		t_fail("expected device %s in the list", name);
		return -1;
	}
	T_OK(doca_dev_open(di, &port->dev));
	if (port->dev == NULL)
		return -1;
	port->ops = sdp_dev_get_provider_ops(port->dev)->eth;
	st = port->ops->port_open(sdp_dev_get_priv(port->dev), &cfg, &port->p, &port->info);
	if (st != DOCA_SUCCESS) {
		t_fail("port_open %s: expected DOCA_SUCCESS, got %s", name,
		       doca_error_get_name(st));
		doca_dev_close(port->dev);
		return -1;
	}
	return 0;
}

static void port_close(struct port *port)
{
	port->ops->port_close(port->p);
	T_OK(doca_dev_close(port->dev));
}

/* Drain every RX queue for quiet_ms after the last frame (at most max_ms); counts per queue. */
static uint32_t port_rx(struct port *port, uint8_t (*out)[BUF], struct sdp_pkt *pkts,
			uint16_t *queue_of, uint32_t cap, uint32_t want, int max_ms, int quiet_ms)
{
	uint64_t end = now_ms() + (uint64_t)max_ms, quiet_end = 0;
	struct pollfd pfd[2];
	uint32_t got = 0;
	uint16_t nq = port->info.nb_rxq;

	for (uint16_t q = 0; q < nq; q++) {
		pfd[q].fd = port->ops->rx_fd(port->p, q);
		pfd[q].events = POLLIN;
	}
	for (;;) {
		uint64_t now = now_ms();

		for (uint16_t q = 0; q < nq; q++) {
			uint16_t n, room = (uint16_t)(cap - got > 32 ? 32 : cap - got);

			for (uint16_t i = 0; i < room; i++) {
				pkts[got + i].data = out[got + i];
				pkts[got + i].cap = BUF;
			}
			n = port->ops->rx_burst(port->p, q, &pkts[got], room);
			for (uint16_t i = 0; i < n; i++)
				queue_of[got + i] = q;
			got += n;
		}
		if (got >= cap || now >= end)
			break;
		if (got >= want) {
			if (quiet_end == 0)
				quiet_end = now + (uint64_t)quiet_ms;
			if (now >= quiet_end)
				break;
		}
		poll(pfd, nq, 5);
	}
	return got;
}

/* ---- scenarios ------------------------------------------------------------------------------- */

static void test_list(void)
{
	struct doca_devinfo *di = find_dev("afa");
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE], iface[DOCA_DEVINFO_IFACE_NAME_SIZE];

	if (di == NULL) {
		t_fail("expected device afa in the list");
		return;
	}
	T_OK(doca_devinfo_get_iface_name(di, iface, sizeof(iface)));
	T_EQ_STR(iface, g_ifa);
	T_OK(doca_devinfo_get_pci_addr_str(di, pci));
	if (strncmp(pci, "ffff:04:", 8) != 0)
		t_fail("afa on veth: expected a synthetic address on ffff:04, got %s", pci);
	T_EQ_INT(sdp_devinfo_get_attr(di)->link_up, 1);
	di = find_dev("aflo");
	T_TRUE(di != NULL);
	if (di != NULL) {
		T_OK(doca_devinfo_get_pci_addr_str(di, pci));
		T_TRUE(strncmp(pci, "ffff:04:", 8) == 0);
		T_OK(doca_devinfo_get_iface_name(di, iface, sizeof(iface)));
		T_EQ_STR(iface, "lo");
	}
	T_TRUE(find_dev("afa1") != NULL);
	T_TRUE(find_dev("afnone") == NULL);
	T_TRUE(strstr(g_log, "nosuch0") != NULL && strstr(g_log, "left out") != NULL);
	T_TRUE(find_dev("afbad") == NULL);
	T_TRUE(strstr(g_log, "is not a Linux interface name") != NULL);
	T_TRUE(strstr(g_log, "needs iface=") != NULL);
	T_TRUE(strstr(g_log, "queues=99 is not a number") != NULL);
}

static void test_tx(struct port *port, uint8_t (*out)[BUF], struct sdp_pkt *pkts,
		    uint16_t *queue_of)
{
	static uint8_t frames[NTX][BUF];
	static uint8_t buf[BUF + 64];
	struct sdp_pkt tx[NTX];
	uint32_t sent = 0, got = 0, bad = 0;
	uint64_t end = now_ms() + 5000;

	for (uint32_t i = 0; i < NTX; i++) {
		make_frame(frames[i], frame_len(i), g_mac_a, i, 0xa1, i);
		tx[i] = (struct sdp_pkt){.data = frames[i], .len = frame_len(i)};
	}
	while (sent < NTX && now_ms() < end) {
		struct pollfd pfd = {.fd = port->ops->tx_fd(port->p, 0), .events = POLLIN};
		uint16_t n = (uint16_t)(NTX - sent > 32 ? 32 : NTX - sent);
		uint16_t k = port->ops->tx_burst(port->p, 0, &tx[sent], n);

		sent += k;
		if (k < n)
			poll(&pfd, 1, 10); /* ring full: wait for room (bounded) */
	}
	T_EQ_INT(sent, NTX);
	/* the far end sees exactly these frames, in order, byte for byte */
	for (;;) {
		ssize_t n = peer_recv(buf, sizeof(buf), got < NTX ? 2000 : 150);

		if (n < 0)
			break;
		if (got < NTX &&
		    ((size_t)n != frame_len(got) || memcmp(buf, frames[got], (size_t)n) != 0)) {
			if (bad++ == 0)
				t_fail("peer frame %u: expected %u bytes equal to sent frame %u, "
				       "got %zd bytes",
				       got, frame_len(got), got, n);
		}
		got++;
	}
	T_EQ_INT(got, NTX);
	T_EQ_INT(bad, 0);
	/* PACKET_IGNORE_OUTGOING: the port does not receive what it sent */
	T_EQ_INT(port_rx(port, out, pkts, queue_of, 64, 0, 300, 100), 0);
}

static void test_rx_fanout(struct port *port, uint8_t (*out)[BUF], struct sdp_pkt *pkts,
			   uint16_t *queue_of)
{
	static uint8_t frames[NRX][BUF];
	uint8_t peer_mac[6] = {0x02, 0x53, 0x44, 0x50, 0x00, 0xbb};
	int seen[NRX] = {0}, flow_q[NFLOWS];
	uint32_t per_q[2] = {0, 0}, got, bad = 0;

	for (uint32_t s = 0; s < NRX; s++) {
		uint32_t flow = s % NFLOWS;

		make_frame(frames[s], frame_len(s + 7), peer_mac, flow, 0xb2, s);
		if (send(g_peer, frames[s], frame_len(s + 7), 0) != (ssize_t)frame_len(s + 7))
			t_fail("peer send of frame %u: %s", s, strerror(errno));
	}
	got = port_rx(port, out, pkts, queue_of, NRX + 16, NRX, 5000, 200);
	T_EQ_INT(got, NRX);
	for (uint32_t f = 0; f < NFLOWS; f++)
		flow_q[f] = -1;
	for (uint32_t k = 0; k < got && k < NRX + 16; k++) {
		uint32_t s;

		if (pkts[k].len < 47 || out[k][42] != 0xb2) {
			if (bad++ == 0)
				t_fail("rx frame %u: expected a peer frame, got %u bytes", k,
				       pkts[k].len);
			continue;
		}
		memcpy(&s, out[k] + 43, sizeof(s));
		if (s >= NRX || seen[s]++ || pkts[k].len != frame_len(s + 7) ||
		    pkts[k].wire_len != pkts[k].len ||
		    memcmp(out[k], frames[s], pkts[k].len) != 0 ||
		    (pkts[k].flags & ~SDP_PKT_F_CSUM_PARTIAL) != 0) {
			if (bad++ == 0)
				t_fail("rx frame %u (seq %u): expected a first, exact copy of the "
				       "sent frame, got %u bytes, flags 0x%x",
				       k, s, pkts[k].len, pkts[k].flags);
			continue;
		}
		per_q[queue_of[k]]++;
		if (flow_q[s % NFLOWS] < 0)
			flow_q[s % NFLOWS] = queue_of[k];
		else if (flow_q[s % NFLOWS] != queue_of[k] && bad++ == 0)
			t_fail("flow %u: expected both frames on queue %d, one came on %u",
			       s % NFLOWS, flow_q[s % NFLOWS], queue_of[k]);
	}
	T_EQ_INT(bad, 0);
	T_EQ_INT(per_q[0] + per_q[1], NRX);
	if (per_q[0] == 0 || per_q[1] == 0)
		t_fail("fanout: expected both queues to get frames, got %u and %u", per_q[0],
		       per_q[1]);
	printf("fanout: %u frames on queue 0, %u on queue 1\n", per_q[0], per_q[1]);
}

/* UDP built by netns b's kernel leaves the checksum to "hardware": not an error. */
static void test_csum_partial(struct port *port, uint8_t (*out)[BUF], struct sdp_pkt *pkts,
			      uint16_t *queue_of)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(UDP_PORT)};
	int sink = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	const char msg[] = "softdpu csum partial";
	uint32_t got;

	/* a listener in netns a, so its kernel answers with no ICMP */
	inet_pton(AF_INET, g_ipa, &to.sin_addr);
	if (sink < 0 || bind(sink, (struct sockaddr *)&to, sizeof(to)) != 0) {
		t_fail("expected a UDP socket on %s:%d: %s", g_ipa, UDP_PORT, strerror(errno));
		if (sink >= 0)
			close(sink);
		return;
	}
	if (sendto(g_peer_udp, msg, sizeof(msg), 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		t_fail("UDP send from netns b: %s", strerror(errno));
	got = port_rx(port, out, pkts, queue_of, 16, 1, 3000, 200);
	T_EQ_INT(got, 1);
	if (got == 1) {
		T_EQ_INT(pkts[0].len, 14 + 20 + 8 + sizeof(msg));
		T_TRUE(memcmp(out[0] + 42, msg, sizeof(msg)) == 0);
		T_EQ_INT(pkts[0].flags, SDP_PKT_F_CSUM_PARTIAL);
	}
	{
		char buf[64];

		T_EQ_INT(recv(sink, buf, sizeof(buf), MSG_DONTWAIT), sizeof(msg));
	}
	close(sink);
}

/* Receive one frame on any RX queue into buf (cap bytes) within timeout_ms: 1, or 0 if none. */
static int port_rx_one(struct port *port, uint8_t *buf, uint32_t cap, struct sdp_pkt *pkt,
		       int timeout_ms)
{
	uint64_t end = now_ms() + (uint64_t)timeout_ms;

	do {
		for (uint16_t q = 0; q < port->info.nb_rxq; q++) {
			pkt->data = buf;
			pkt->cap = cap;
			if (port->ops->rx_burst(port->p, q, pkt, 1) == 1)
				return 1;
		}
		usleep(2000);
	} while (now_ms() < end);
	return 0;
}

/*
 * A VLAN tag the kernel takes out of a received frame is put back; a frame longer than the
 * buffer is cut and flagged with its real length kept.
 */
static void test_vlan_and_truncation(struct port *port)
{
	uint8_t frame[200], tagged[204], buf[256];
	uint8_t peer_mac[6] = {0x02, 0x53, 0x44, 0x50, 0x00, 0xbb};
	struct sdp_pkt pkt;

	make_frame(frame, sizeof(frame), peer_mac, 7, 0xc3, 1);
	memcpy(tagged, frame, 12);
	tagged[12] = 0x81, tagged[13] = 0x00, tagged[14] = 0x00, tagged[15] = 0x64; /* VLAN 100 */
	memcpy(tagged + 16, frame + 12, sizeof(frame) - 12);
	if (send(g_peer, tagged, sizeof(tagged), 0) != (ssize_t)sizeof(tagged))
		t_fail("peer send of a tagged frame: %s", strerror(errno));
	if (!port_rx_one(port, buf, sizeof(buf), &pkt, 2000)) {
		t_fail("expected the tagged frame at the port");
	} else {
		T_EQ_INT(pkt.len, sizeof(tagged));
		T_EQ_INT(pkt.wire_len, sizeof(tagged));
		T_EQ_INT(pkt.flags, 0);
		T_TRUE(memcmp(buf, tagged, sizeof(tagged)) == 0);
	}

	if (send(g_peer, frame, sizeof(frame), 0) != (ssize_t)sizeof(frame))
		t_fail("peer send: %s", strerror(errno));
	if (!port_rx_one(port, buf, 40, &pkt, 2000)) {
		t_fail("expected a frame at the port");
	} else {
		T_EQ_INT(pkt.len, 40);
		T_EQ_INT(pkt.wire_len, sizeof(frame));
		T_EQ_INT(pkt.flags, SDP_PKT_F_TRUNCATED);
		T_TRUE(memcmp(buf, frame, 40) == 0);
	}
}

/* A frame with a send time 30 ms ahead leaves at that time: tx_fd fires, then it goes. */
static void test_wait_on_time(struct port *port)
{
	uint8_t frame[128], buf[256];
	struct sdp_pkt pkt = {.data = frame, .len = sizeof(frame)};
	struct pollfd pfd = {.fd = port->ops->tx_fd(port->p, 0), .events = POLLIN};
	struct timespec ts;
	ssize_t n;

	make_frame(frame, sizeof(frame), g_mac_a, 3, 0xd4, 9);
	clock_gettime(CLOCK_REALTIME, &ts);
	pkt.ts_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + 30000000ull;
	T_EQ_INT(port->ops->tx_burst(port->p, 0, &pkt, 1), 0);
	T_EQ_INT(peer_recv(buf, sizeof(buf), 10), -1);
	T_EQ_INT(poll(&pfd, 1, 2000), 1);
	clock_gettime(CLOCK_REALTIME, &ts);
	if ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec < pkt.ts_ns)
		t_fail("expected tx_fd to fire at the send time, not before");
	T_EQ_INT(port->ops->tx_burst(port->p, 0, &pkt, 1), 1);
	n = peer_recv(buf, sizeof(buf), 2000);
	T_EQ_INT(n, sizeof(frame));
	T_TRUE(n == sizeof(frame) && memcmp(buf, frame, sizeof(frame)) == 0);
	/* nothing pending: tx_fd is quiet again */
	T_EQ_INT(poll(&pfd, 1, 0), 0);
}

static int set_link(const char *ifname, int up)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = -1;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		if (up)
			ifr.ifr_flags |= IFF_UP;
		else
			ifr.ifr_flags &= ~IFF_UP;
		rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

static void test_link(struct port *port)
{
	uint8_t frame[100], buf[256];
	uint8_t peer_mac[6] = {0x02, 0x53, 0x44, 0x50, 0x00, 0xbb};

	T_EQ_INT(port->ops->link_up(port->p), 1);
	if (set_link(g_ifa, 0) != 0) {
		t_fail("expected to take %s down: %s", g_ifa, strerror(errno));
		return;
	}
	T_EQ_INT(port->ops->link_up(port->p), 0);
	/* a port without link takes what it is given and drops it */
	{
		struct sdp_pkt tx[5];

		make_frame(frame, sizeof(frame), g_mac_a, 12, 0xe6, 4);
		for (int i = 0; i < 5; i++)
			tx[i] = (struct sdp_pkt){.data = frame, .len = sizeof(frame)};
		T_EQ_INT(port->ops->tx_burst(port->p, 0, tx, 5), 5);
		T_EQ_INT(port->ops->tx_burst(port->p, 0, tx, 5), 5);
		T_TRUE(strstr(g_log, "frames are dropped until it works again") != NULL);
	}
	T_EQ_INT(set_link(g_ifa, 1), 0);
	/* carrier comes back asynchronously: bounded wait */
	for (int i = 0; i < 200 && port->ops->link_up(port->p) != 1; i++)
		usleep(10000);
	T_EQ_INT(port->ops->link_up(port->p), 1);

	/*
	 * The kernel flags the RX sockets with ENETDOWN when the link drops; once a burst has
	 * seen it, rx_fd must not stay readable (an engine sleeping on it would spin).
	 */
	for (uint16_t q = 0; q < port->info.nb_rxq; q++) {
		struct pollfd pfd = {.fd = port->ops->rx_fd(port->p, q), .events = POLLIN};
		struct sdp_pkt pkt = {.data = buf, .cap = sizeof(buf)};

		T_EQ_INT(port->ops->rx_burst(port->p, q, &pkt, 1), 0);
		T_EQ_INT(poll(&pfd, 1, 0), 0);
	}
	/* and traffic flows again, both ways, without the frames dropped while down */
	make_frame(frame, sizeof(frame), g_mac_a, 13, 0xe7, 5);
	{
		struct sdp_pkt tx = {.data = frame, .len = sizeof(frame)};
		ssize_t n;

		T_EQ_INT(port->ops->tx_burst(port->p, 0, &tx, 1), 1);
		n = peer_recv(buf, sizeof(buf), 2000);
		T_EQ_INT(n, sizeof(frame));
		T_TRUE(n == sizeof(frame) && memcmp(buf, frame, sizeof(frame)) == 0);
		T_EQ_INT(peer_recv(buf, sizeof(buf), 100), -1);
	}
	make_frame(frame, sizeof(frame), peer_mac, 11, 0xe5, 3);
	if (send(g_peer, frame, sizeof(frame), 0) != (ssize_t)sizeof(frame))
		t_fail("peer send after link up: %s", strerror(errno));
	{
		struct sdp_pkt pkt;

		T_EQ_INT(port_rx_one(port, buf, sizeof(buf), &pkt, 2000), 1);
		T_TRUE(pkt.len == sizeof(frame) && memcmp(buf, frame, sizeof(frame)) == 0);
	}
}

/*
 * Port drops: afdrop has 2 RX queues of the smallest ring (4 blocks of 128 KiB each, a few
 * hundred full-size frames). The peer sends NDROP frames nobody reads, so the kernel drops what
 * does not fit; stats() counts them over both queues, and every frame is either received or
 * counted: received + drops == NDROP exactly (the veth carries nothing else). Reading the stats
 * again after a drain and a few more frames keeps the total (the kernel resets its own at each
 * read).
 */
#define NDROP 3000
#define DROP_LEN 1514

static uint32_t drain_tagged(struct port *port, uint8_t tag, uint8_t *seen, uint32_t nseen,
			     uint32_t want, int max_ms, uint32_t per_q[2])
{
	static uint8_t buf[32][BUF];
	struct sdp_pkt pkts[32];
	uint64_t end = now_ms() + (uint64_t)max_ms, quiet_end = 0;
	uint32_t got = 0, bad = 0;

	for (;;) {
		uint64_t now = now_ms();
		uint32_t pass = 0;

		for (uint16_t q = 0; q < port->info.nb_rxq; q++) {
			uint16_t n;

			for (int i = 0; i < 32; i++)
				pkts[i] = (struct sdp_pkt){.data = buf[i], .cap = BUF};
			n = port->ops->rx_burst(port->p, q, pkts, 32);
			pass += n;
			for (uint16_t i = 0; i < n; i++) {
				uint32_t s;

				memcpy(&s, buf[i] + 43, sizeof(s));
				if (pkts[i].len != DROP_LEN || buf[i][42] != tag || s >= nseen ||
				    seen[s]++) {
					if (bad++ == 0)
						t_fail("drop test: expected each tagged frame once, "
						       "got %u bytes, tag 0x%x, seq %u",
						       pkts[i].len, buf[i][42], s);
					continue;
				}
				got++;
				per_q[q]++;
			}
		}
		if (now >= end)
			break;
		if (got >= want) {
			if (quiet_end == 0)
				quiet_end = now + 100;
			if (now >= quiet_end)
				break;
		}
		if (pass == 0)
			usleep(2000);
	}
	return got;
}

static void test_rx_drops(void)
{
	static uint8_t frame[DROP_LEN];
	static uint8_t seen[NDROP + 10];
	uint8_t peer_mac[6] = {0x02, 0x53, 0x44, 0x50, 0x00, 0xbb};
	struct sdp_eth_port_stats st0, st1, st2, st3;
	uint32_t got, sent = 0, per_q[2] = {0, 0};
	struct port port;

	if (port_open("afdrop", 2, &port) != 0)
		return;
	T_EQ_INT(port.info.nb_rxq, 2);
	if (port.ops->stats == NULL) {
		t_fail("expected afpacket to have the stats op");
		port_close(&port);
		return;
	}
	memset(&st0, 0xff, sizeof(st0));
	port.ops->stats(port.p, &st0);
	T_EQ_INT(st0.rx_drops, 0);
	for (uint32_t s = 0; s < NDROP; s++) {
		make_frame(frame, DROP_LEN, peer_mac, s % 64, 0xf1, s);
		if (send(g_peer, frame, DROP_LEN, 0) == DROP_LEN)
			sent++;
		if (s % 100 == 99)
			usleep(1000); /* let the receiving softirq keep up: no backlog drops */
	}
	T_EQ_INT(sent, NDROP);
	usleep(20000);
	port.ops->stats(port.p, &st1);
	if (st1.rx_drops == 0)
		t_fail("expected drops after %u frames into two rings nobody read", sent);
	got = drain_tagged(&port, 0xf1, seen, NDROP + 10, (uint32_t)(NDROP - st1.rx_drops), 3000,
			   per_q);
	port.ops->stats(port.p, &st2);
	printf("drops: %u sent, %u received (%u + %u), %llu dropped\n", sent, got, per_q[0],
	       per_q[1], (unsigned long long)st2.rx_drops);
	T_TRUE(per_q[0] > 0 && per_q[1] > 0); /* so both rings filled: drops from both count */
	T_TRUE(st2.rx_drops >= st1.rx_drops);
	T_EQ_INT(got + st2.rx_drops, sent);

	/* room again: 10 more frames all arrive, and the total stays what it was */
	for (uint32_t s = NDROP; s < NDROP + 10; s++) {
		make_frame(frame, DROP_LEN, peer_mac, s % 64, 0xf1, s);
		if (send(g_peer, frame, DROP_LEN, 0) != DROP_LEN)
			t_fail("peer send: %s", strerror(errno));
	}
	T_EQ_INT(drain_tagged(&port, 0xf1, seen, NDROP + 10, 10, 3000, per_q), 10);
	port.ops->stats(port.p, &st3);
	T_EQ_INT(st3.rx_drops, st2.rx_drops);
	port.ops->stats(NULL, &st3);
	T_EQ_INT(st3.rx_drops, 0);
	port.ops->stats(port.p, NULL);
	port_close(&port);
}

/* Without CAP_NET_RAW in the effective set, port_open fails with NOT_PERMITTED and says why. */
static void test_no_cap(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2], saved[2];
	struct sdp_eth_port_cfg cfg = {.nb_rxq = 1, .nb_txq = 1, .ring_size = 64};
	struct sdp_eth_port_info info;
	struct sdp_eth_port *p = NULL;
	struct doca_devinfo *di = find_dev("afa1");
	struct doca_dev *dev;

	if (di == NULL || doca_dev_open(di, &dev) != DOCA_SUCCESS) {
		t_fail("expected to open afa1");
		return;
	}
	if (syscall(SYS_capget, &hdr, saved) != 0) {
		t_fail("capget: %s", strerror(errno));
		goto out;
	}
	memcpy(data, saved, sizeof(data));
	data[CAP_NET_RAW / 32].effective &= ~(1u << (CAP_NET_RAW % 32));
	if (syscall(SYS_capset, &hdr, data) != 0) {
		t_fail("capset: %s", strerror(errno));
		goto out;
	}
	g_log_len = 0;
	g_log[0] = '\0';
	T_STATUS(sdp_dev_get_provider_ops(dev)->eth->port_open(sdp_dev_get_priv(dev), &cfg, &p,
							       &info),
		 DOCA_ERROR_NOT_PERMITTED);
	T_TRUE(p == NULL);
	T_TRUE(strstr(g_log, "CAP_NET_RAW") != NULL);
	if (syscall(SYS_capset, &hdr, saved) != 0)
		t_fail("capset (restore): %s", strerror(errno));
out:
	T_OK(doca_dev_close(dev));
}

static void test_queues_and_args(void)
{
	struct sdp_eth_port_cfg none = {.nb_rxq = 0, .nb_txq = 0, .ring_size = 64};
	struct sdp_eth_port_info info;
	struct sdp_eth_port *p = NULL;
	struct port port;

	/* afa1 declares no queues=: one RX queue whatever the engine asks */
	if (port_open("afa1", 4, &port) != 0)
		return;
	T_EQ_INT(port.info.nb_rxq, 1);
	T_EQ_INT(port.info.nb_txq, 1);
	T_EQ_INT(port.ops->rx_fd(port.p, 1), -1);
	T_EQ_INT(port.ops->rx_burst(port.p, 1, NULL, 1), 0);
	T_EQ_INT(port.ops->tx_fd(port.p, 1), -1);
	T_STATUS(port.ops->port_open(NULL, &none, &p, &info), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(port.ops->port_open(sdp_dev_get_priv(port.dev), NULL, &p, &info),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(port.ops->port_open(sdp_dev_get_priv(port.dev), &none, NULL, &info),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(port.ops->port_open(sdp_dev_get_priv(port.dev), &none, &p, &info),
		 DOCA_ERROR_INVALID_VALUE);
	T_TRUE(p == NULL);
	port.ops->port_close(NULL);
	port_close(&port);
}

int main(int argc, char **argv)
{
	struct doca_log_backend *sdk;
	char decls[1024];
	uint8_t(*out)[BUF];
	struct sdp_pkt *pkts;
	uint16_t *queue_of;
	struct port port;

	if (argc != 5) {
		fprintf(stderr, "usage: %s <ifa> <ifb> <netns b> <ip a> (see the .sh)\n", argv[0]);
		return T_EXIT_FAIL;
	}
	g_ifa = argv[1];
	g_ifb = argv[2];
	g_nsb = argv[3];
	g_ipa = argv[4];
	snprintf(decls, sizeof(decls),
		 "afpacket:iface=%s,name=afa,queues=2,frames=1024;afpacket:iface=%s,name=afa1;"
		 "afpacket:iface=lo,name=aflo;afpacket:iface=nosuch0,name=afnone;"
		 "afpacket:iface=a/b,name=afbad;afpacket:name=afbad2;"
		 "afpacket:iface=%s,name=afbad3,queues=99;"
		 "afpacket:iface=%s,name=afdrop,queues=2,frames=64",
		 g_ifa, g_ifa, g_ifa, g_ifa);
	setenv("SOFTDPU_DEVICES", decls, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	T_OK(doca_log_backend_create_with_buf_sdk(g_log_line, sizeof(g_log_line), log_flush, &sdk));
	T_OK(doca_log_backend_set_sdk_level(sdk, DOCA_LOG_LEVEL_WARNING));

	out = calloc(NRX + 16, BUF);
	pkts = calloc(NRX + 16, sizeof(*pkts));
	queue_of = calloc(NRX + 16, sizeof(*queue_of));
	if (out == NULL || pkts == NULL || queue_of == NULL || t_iface_mac(g_ifa, g_mac_a) != 0)
		return T_EXIT_FAIL;
	T_OK(doca_devinfo_create_list(&g_list, &g_nb));
	if (g_list == NULL)
		return T_EXIT_FAIL;
	test_list();
	if (peer_open() == 0 && port_open("afa", 2, &port) == 0) {
		T_EQ_INT(port.info.nb_rxq, 2);
		T_EQ_INT(port.info.nb_txq, 1);
		T_EQ_INT(port.info.mtu, 1500);
		T_EQ_INT(port.info.has_rx_fd, 1);
		T_TRUE(memcmp(port.info.mac, g_mac_a, 6) == 0);
		test_tx(&port, out, pkts, queue_of);
		test_rx_fanout(&port, out, pkts, queue_of);
		test_csum_partial(&port, out, pkts, queue_of);
		test_vlan_and_truncation(&port);
		test_wait_on_time(&port);
		test_link(&port);
		port_close(&port);
		test_rx_drops();
	}
	test_no_cap();
	test_queues_and_args();
	T_OK(doca_devinfo_destroy_list(g_list));
	if (g_peer >= 0)
		close(g_peer);
	if (g_peer_udp >= 0)
		close(g_peer_udp);
	free(out);
	free(pkts);
	free(queue_of);
	if (t_failures)
		fprintf(stderr, "library warnings and errors since the last reset:\n%s", g_log);
	T_DONE();
}
