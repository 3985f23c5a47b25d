/*
 * The afxdp software NIC over a veth pair with two queues a side (run by test_nic_afxdp.sh, which
 * creates two network namespaces and the pair, and runs this program inside the first one):
 *
 *   test_nic_afxdp <ifa> <ifb> <netns b> <ip a> <ip b>
 *
 * The port sits on <ifa>; the far end is a raw AF_PACKET socket on <ifb> and UDP sockets, opened
 * inside <netns b> (setns). Checked: the device list, MAC and MTU; TX and RX frame for frame and
 * byte for byte with exact counts (RX while the port takes every frame); steering by a summary
 * (op steer): UDP to the rule's port reaches the port, UDP to another port and ICMP echo reach
 * the host's stack (a socket of this namespace gets the datagrams, the kernel answers the
 * pings), counted by the program; two queues (frames of 64 flows, each once, both queues
 * used, a flow on one queue); 20 open/close cycles leaving no fd and no XDP program behind; a
 * second port on the same interface refused (IN_USE) without touching the first; zerocopy=on
 * on veth; bad declarations; NOT_PERMITTED without CAP_NET_ADMIN and CAP_BPF/CAP_SYS_ADMIN.
 * Exit 77 (with the reason) where the kernel refuses AF_XDP or XDP itself.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
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

#include <bpf/libbpf.h>

#include "doca_dev.h"
#include "doca_log.h"
#include "sdp_provider.h"
#include "sdp_provider_eth.h"
#include "softdpu/sdp_pkt.h"
#include "t_helpers.h"
#include "t_netns.h"
#include "t_nic.h"

#define BUF 2048
#define NTX 200
#define NRX 200
#define NFLOWS 64
#define STEER_PORT 40123
#define HOST_PORT 40124
#define NSTEER 50
#define MAGIC 0x53445858u /* "SDXX" */
#define AFX_TEST_MAXQ 4

static const char *g_ifa, *g_ifb, *g_nsb, *g_ipa, *g_ipb;
static struct doca_devinfo **g_list;
static uint32_t g_nb;
static int g_peer = -1;	       /* raw socket on ifb (netns b) */
static int g_peer_udp[NFLOWS]; /* UDP sockets in netns b, one per flow */
static int g_peer_icmp = -1;   /* ICMP datagram socket in netns b */
static uint8_t g_mac_a[6], g_mac_b[6];
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

static void log_reset(void)
{
	g_log_len = 0;
	g_log[0] = '\0';
}

static struct doca_devinfo *find_dev(const char *name)
{
	return t_find_dev(g_list, g_nb, name);
}

/* Frame seq: a to b (or b to a when from_b), a local ethertype, MAGIC, seq, a pattern. */
static uint32_t make_frame(uint8_t *f, uint32_t seq, int from_b)
{
	uint32_t len = 60 + (seq * 97) % (1514 - 60 + 1);

	memcpy(f, from_b ? g_mac_a : g_mac_b, 6);
	memcpy(f + 6, from_b ? g_mac_b : g_mac_a, 6);
	f[12] = 0x88;
	f[13] = 0xb5; /* local experimental */
	sdp_pkt_put32(f + 14, MAGIC);
	sdp_pkt_put32(f + 18, seq);
	for (uint32_t i = 22; i < len; i++)
		f[i] = (uint8_t)(i * 5 + seq);
	return len;
}

static int is_ours(const uint8_t *f, size_t len, uint32_t *seq)
{
	if (len < 22 || f[12] != 0x88 || f[13] != 0xb5 || sdp_pkt_get32(f + 14) != MAGIC)
		return 0;
	*seq = sdp_pkt_get32(f + 18);
	return 1;
}

static int peer_open_here(void *arg)
{
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL)};
	int one = 1, rcvbuf = 16 << 20;

	(void)arg;
	g_peer = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	/* (sysfs still shows this process's first namespace: ask the socket layer) */
	if (g_peer < 0 || t_iface_mac(g_ifb, g_mac_b) != 0) {
		t_fail("expected to read the MAC of %s: %s", g_ifb, strerror(errno));
		return -1;
	}
	sll.sll_ifindex = (int)if_nametoindex(g_ifb);
	if (g_peer < 0 || sll.sll_ifindex == 0 ||
	    setsockopt(g_peer, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) != 0 ||
	    setsockopt(g_peer, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) != 0 ||
	    bind(g_peer, (struct sockaddr *)&sll, sizeof(sll)) != 0) {
		t_fail("expected a raw socket on %s: %s", g_ifb, strerror(errno));
		return -1;
	}
	for (int i = 0; i < NFLOWS; i++) {
		g_peer_udp[i] = t_udp_socket(g_ipb, (uint16_t)(41000 + i));
		if (g_peer_udp[i] < 0)
			return -1;
	}
	/* unprivileged ICMP echo sockets need the group range; raw ICMP needs nothing more */
	g_peer_icmp = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
	if (g_peer_icmp < 0) {
		t_fail("expected a raw ICMP socket in %s: %s", g_nsb, strerror(errno));
		return -1;
	}
	return 0;
}

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

static doca_error_t port_open_st(const char *name, uint16_t nq, struct port *port)
{
	struct sdp_eth_port_cfg cfg = {.nb_rxq = nq, .nb_txq = nq, .ring_size = 512};
	struct doca_devinfo *di = find_dev(name);
	doca_error_t st;

	memset(port, 0, sizeof(*port));
	if (di == NULL) {
		t_fail("expected device %s in the list", name);
		return DOCA_ERROR_NOT_FOUND;
	}
	T_OK(doca_dev_open(di, &port->dev));
	if (port->dev == NULL)
		return DOCA_ERROR_NOT_FOUND;
	port->ops = sdp_dev_get_provider_ops(port->dev)->eth;
	st = port->ops->port_open(sdp_dev_get_priv(port->dev), &cfg, &port->p, &port->info);
	if (st != DOCA_SUCCESS) {
		T_TRUE(port->p == NULL);
		doca_dev_close(port->dev);
	}
	return st;
}

static int port_open(const char *name, uint16_t nq, struct port *port)
{
	doca_error_t st = port_open_st(name, nq, port);

	if (st != DOCA_SUCCESS) {
		t_fail("port_open %s: expected DOCA_SUCCESS, got %s; log:\n%s", name,
		       doca_error_get_name(st), g_log);
		return -1;
	}
	return 0;
}

static void port_close(struct port *port)
{
	port->ops->port_close(port->p);
	T_OK(doca_dev_close(port->dev));
}

/*
 * Drain every RX queue until want frames of ours (accept) came and quiet_ms passed, at most
 * max_ms; frames go to out[], their queue to queue_of[]. Returns the frames kept.
 */
static uint32_t port_rx(struct port *port, uint8_t (*out)[BUF], uint32_t *lens, uint16_t *queue_of,
			uint32_t cap, uint32_t want, int max_ms, int quiet_ms,
			int (*accept)(const uint8_t *f, uint32_t len))
{
	uint64_t end = t_ns_now_ms() + (uint64_t)max_ms, quiet_end = 0;
	struct pollfd pfd[AFX_TEST_MAXQ];
	struct sdp_pkt pkts[32];
	uint8_t scratch[32][BUF];
	uint32_t got = 0;
	uint16_t nq = port->info.nb_rxq;

	for (uint16_t q = 0; q < nq; q++)
		pfd[q] = (struct pollfd){.fd = port->ops->rx_fd(port->p, q), .events = POLLIN};
	for (;;) {
		uint64_t now = t_ns_now_ms();

		for (uint16_t q = 0; q < nq; q++) {
			uint16_t n;

			for (int i = 0; i < 32; i++)
				pkts[i] = (struct sdp_pkt){.data = scratch[i], .cap = BUF};
			n = port->ops->rx_burst(port->p, q, pkts, 32);
			for (uint16_t i = 0; i < n; i++) {
				if (!accept(scratch[i], pkts[i].len) || got >= cap)
					continue;
				memcpy(out[got], scratch[i], pkts[i].len);
				lens[got] = pkts[i].len;
				queue_of[got++] = q;
			}
		}
		if (now >= end)
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

static int accept_ours(const uint8_t *f, uint32_t len)
{
	uint32_t seq;

	return is_ours(f, len, &seq);
}

/* An IPv4/UDP frame to STEER_PORT or HOST_PORT carrying MAGIC. */
static int accept_udp(const uint8_t *f, uint32_t len)
{
	return len >= SDP_PKT_UDP4_PAYLOAD + 8 && f[12] == 0x08 && f[13] == 0x00 &&
	       f[23] == IPPROTO_UDP && sdp_pkt_get32(f + SDP_PKT_UDP4_PAYLOAD) == MAGIC;
}

/* ---- scenarios ------------------------------------------------------------------------------- */

static void test_list(void)
{
	struct doca_devinfo *di = find_dev("xa");
	char iface[DOCA_DEVINFO_IFACE_NAME_SIZE];

	if (di == NULL) {
		t_fail("expected device xa in the list; log:\n%s", g_log);
		return;
	}
	T_OK(doca_devinfo_get_iface_name(di, iface, sizeof(iface)));
	T_TRUE(strcmp(iface, g_ifa) == 0);
	T_TRUE(find_dev("xnone") == NULL); /* no such interface: left out */
	/* refused declarations */
	T_TRUE(find_dev("xbadframes") == NULL);
	T_TRUE(find_dev("xbadmode") == NULL);
	T_TRUE(find_dev("xbadzc") == NULL);
	T_TRUE(find_dev("xbadq") == NULL);
}

/* The port sends NTX frames; the peer gets each once, in order, byte for byte. */
static void test_tx(struct port *port)
{
	uint8_t f[BUF], got[BUF];
	uint32_t seen = 0, next = 0, bad = 0;
	struct sdp_pkt pkt;
	uint64_t end;

	for (uint32_t i = 0; i < NTX; i++) {
		uint64_t dl = t_ns_now_ms() + 5000;

		pkt = (struct sdp_pkt){.data = f, .len = make_frame(f, i, 0)};
		while (port->ops->tx_burst(port->p, (uint16_t)(i % port->info.nb_txq), &pkt, 1) !=
		       1) {
			struct pollfd pfd = {.fd = port->ops->tx_fd(port->p, 0), .events = POLLIN};

			if (t_ns_now_ms() > dl) {
				t_fail("tx_burst took no frame for 5 s at frame %u", i);
				return;
			}
			poll(&pfd, 1, 1);
		}
	}
	end = t_ns_now_ms() + 10000;
	while (seen < NTX && t_ns_now_ms() < end) {
		ssize_t n = peer_recv(got, sizeof(got), 200);
		uint32_t seq;

		if (n < 0 || !is_ours(got, (size_t)n, &seq))
			continue;
		if (seq >= NTX || (uint32_t)n != make_frame(f, seq, 0) || memcmp(got, f, n) != 0)
			bad++;
		if (port->info.nb_txq == 1 && seq != next)
			bad++;
		next = seq + 1;
		seen++;
	}
	T_EQ_INT(seen, NTX);
	T_EQ_INT(bad, 0);
}

/* The peer sends NRX frames; the port (taking every frame) gets each once, byte for byte. */
static void test_rx(struct port *port, uint8_t (*out)[BUF], uint32_t *lens, uint16_t *queue_of)
{
	uint8_t f[BUF], seen[NRX] = {0};
	uint32_t got, bad = 0, dup = 0;

	for (uint32_t i = 0; i < NRX; i++) {
		uint32_t len = make_frame(f, i, 1);

		if (send(g_peer, f, len, 0) != (ssize_t)len)
			t_fail("peer send %u: %s", i, strerror(errno));
	}
	got = port_rx(port, out, lens, queue_of, NRX + 16, NRX, 10000, 200, accept_ours);
	T_EQ_INT(got, NRX);
	for (uint32_t i = 0; i < got; i++) {
		uint32_t seq;

		if (!is_ours(out[i], lens[i], &seq) || seq >= NRX) {
			bad++;
			continue;
		}
		if (seen[seq]++)
			dup++;
		if (lens[i] != make_frame(f, seq, 1) || memcmp(out[i], f, lens[i]) != 0)
			bad++;
	}
	T_EQ_INT(bad, 0);
	T_EQ_INT(dup, 0);
}

static int g_steer_pings; /* replies seen by the peer (set inside netns b) */

static void udp_send(int flow, uint16_t port, uint32_t seq)
{
	t_udp_send(g_peer_udp[flow], g_ipa, port, MAGIC, seq);
}

static int nsb_steer_traffic(void *arg)
{
	(void)arg;
	for (uint32_t i = 0; i < NSTEER; i++) {
		udp_send((int)(i % NFLOWS), STEER_PORT, i);
		udp_send((int)(i % NFLOWS), HOST_PORT, 1000 + i);
	}
	g_steer_pings = t_pings(g_peer_icmp, g_ipa, 0x5d58, 5);
	return 0;
}

/*
 * Steering: only UDP to STEER_PORT reaches the port; UDP to HOST_PORT reaches a socket of this
 * namespace, pings are answered by the kernel, and the program counts what it passed.
 */
static void test_steer(struct port *port, uint8_t (*out)[BUF], uint32_t *lens, uint16_t *queue_of)
{
	struct sdp_eth_steer s = {.all = 0, .nb_keys = 1};
	struct sdp_eth_port_stats st0, st1;
	uint32_t got, host, wrong = 0;
	int hs = t_udp_socket(g_ipa, HOST_PORT);

	s.keys[0] = (struct sdp_eth_steer_key){
		.ethertype = 0x0800, .ip_proto = IPPROTO_UDP, .dst_port = STEER_PORT};
	if (hs < 0)
		return;
	T_OK(port->ops->steer(port->p, &s));
	port->ops->stats(port->p, &st0);
	t_in_netns(g_nsb, nsb_steer_traffic, NULL);
	T_EQ_INT(g_steer_pings, 5); /* the kernel answered: the requests reached it */
	got = port_rx(port, out, lens, queue_of, NSTEER + 16, NSTEER, 5000, 200, accept_udp);
	T_EQ_INT(got, NSTEER);
	for (uint32_t i = 0; i < got; i++)
		if (sdp_pkt_get16(out[i] + 36) != STEER_PORT)
			wrong++;
	T_EQ_INT(wrong, 0);
	host = t_udp_count(hs, MAGIC, NSTEER, 5000);
	T_EQ_INT(host, NSTEER);
	port->ops->stats(port->p, &st1);
	/* NSTEER datagrams and 5 echo requests at least went to the stack */
	T_TRUE(st1.rx_steered_kernel - st0.rx_steered_kernel >= NSTEER + 5);
	T_EQ_INT(st1.rx_invalid_descs, 0);
	close(hs);
	/* back to every frame */
	s.all = 1;
	s.nb_keys = 0;
	T_OK(port->ops->steer(port->p, &s));
	T_STATUS(port->ops->steer(port->p, NULL), DOCA_ERROR_INVALID_VALUE);
}

static int nsb_flows(void *arg)
{
	(void)arg;
	for (uint32_t i = 0; i < 2 * NFLOWS; i++)
		udp_send((int)(i % NFLOWS), STEER_PORT, i);
	return 0;
}

/* Two queues: the frames of NFLOWS flows each arrive once, a flow on one queue, both used. */
static void test_queues(uint8_t (*out)[BUF], uint32_t *lens, uint16_t *queue_of)
{
	uint32_t got, per_q[2] = {0, 0}, split = 0;
	int flow_q[NFLOWS];
	uint8_t seen[2 * NFLOWS] = {0};
	uint32_t dup = 0;
	struct port port;

	if (port_open("xq", 2, &port) != 0)
		return;
	T_EQ_INT(port.info.nb_rxq, 2);
	T_EQ_INT(port.info.nb_txq, 2);
	t_in_netns(g_nsb, nsb_flows, NULL);
	got = port_rx(&port, out, lens, queue_of, 2 * NFLOWS + 16, 2 * NFLOWS, 5000, 200,
		      accept_udp);
	T_EQ_INT(got, 2 * NFLOWS);
	for (int i = 0; i < NFLOWS; i++)
		flow_q[i] = -1;
	for (uint32_t i = 0; i < got; i++) {
		uint32_t seq = sdp_pkt_get32(out[i] + SDP_PKT_UDP4_PAYLOAD + 4);
		int flow = sdp_pkt_get16(out[i] + 34) - 41000;

		if (seq >= 2 * NFLOWS || flow < 0 || flow >= NFLOWS) {
			dup++;
			continue;
		}
		if (seen[seq]++)
			dup++;
		per_q[queue_of[i]]++;
		if (flow_q[flow] >= 0 && flow_q[flow] != queue_of[i])
			split++;
		flow_q[flow] = queue_of[i];
	}
	T_EQ_INT(dup, 0);
	T_EQ_INT(split, 0);
	T_TRUE(per_q[0] > 0 && per_q[1] > 0);
	test_tx(&port); /* both TX queues send */
	port_close(&port);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (d == NULL)
		return -1;
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

static uint32_t xdp_prog_id(const char *ifname)
{
	uint32_t id = 0;

	if (bpf_xdp_query_id((int)if_nametoindex(ifname), 0, &id) != 0)
		return UINT32_MAX;
	return id;
}

/* 20 open/close cycles: no fd and no XDP program left behind; a frame each time. */
static void test_cycles(void)
{
	int fds0 = count_fds();
	uint32_t lost = 0;

	for (int c = 0; c < 20; c++) {
		struct port port;
		uint8_t f[BUF], got[BUF];
		struct sdp_pkt pkt;
		int ok = 0;

		if (port_open("xa", 1, &port) != 0)
			return;
		T_TRUE(xdp_prog_id(g_ifa) != 0);
		pkt = (struct sdp_pkt){.data = f, .len = make_frame(f, 5000 + (uint32_t)c, 0)};
		T_EQ_INT(port.ops->tx_burst(port.p, 0, &pkt, 1), 1);
		for (uint64_t end = t_ns_now_ms() + 2000; !ok && t_ns_now_ms() < end;) {
			ssize_t n = peer_recv(got, sizeof(got), 100);
			uint32_t seq;

			ok = n > 0 && is_ours(got, (size_t)n, &seq) && seq == 5000 + (uint32_t)c;
		}
		lost += !ok;
		port_close(&port);
		T_EQ_INT(xdp_prog_id(g_ifa), 0);
	}
	T_EQ_INT(lost, 0);
	T_EQ_INT(count_fds(), fds0);
}

/* A second port on the interface is refused and the first keeps working; zerocopy=on. */
static void test_in_use_and_zc(void)
{
	struct port a, b;
	doca_error_t st;

	if (port_open("xa", 1, &a) != 0)
		return;
	log_reset();
	T_STATUS(port_open_st("xa2", 1, &b), DOCA_ERROR_IN_USE);
	T_TRUE(strstr(g_log, "already runs an XDP program") != NULL);
	T_TRUE(xdp_prog_id(g_ifa) != 0);
	test_tx(&a); /* still ours and working */
	port_close(&a);
	T_EQ_INT(xdp_prog_id(g_ifa), 0);
	/* veth has no zero-copy AF_XDP: zerocopy=on fails and says so (where it has, it works) */
	log_reset();
	st = port_open_st("xzc", 1, &b);
	if (st == DOCA_SUCCESS) {
		port_close(&b);
	} else {
		T_EQ_INT(st, DOCA_ERROR_NOT_SUPPORTED);
		T_TRUE(strstr(g_log, "zerocopy=on") != NULL);
	}
	T_EQ_INT(xdp_prog_id(g_ifa), 0);
}

/* Without CAP_NET_ADMIN, CAP_BPF and CAP_SYS_ADMIN: NOT_PERMITTED and the reason. */
static void test_no_cap(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2], saved[2];
	static const int caps[] = {CAP_NET_ADMIN, CAP_SYS_ADMIN, 39 /* CAP_BPF */};
	struct port p;

	if (syscall(SYS_capget, &hdr, saved) != 0) {
		t_fail("capget: %s", strerror(errno));
		return;
	}
	memcpy(data, saved, sizeof(data));
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		data[caps[i] / 32].effective &= ~(1u << (caps[i] % 32));
	if (syscall(SYS_capset, &hdr, data) != 0) {
		t_fail("capset: %s", strerror(errno));
		return;
	}
	log_reset();
	T_STATUS(port_open_st("xa", 1, &p), DOCA_ERROR_NOT_PERMITTED);
	T_TRUE(strstr(g_log, "CAP_") != NULL);
	if (syscall(SYS_capset, &hdr, saved) != 0)
		t_fail("capset (restore): %s", strerror(errno));
	T_EQ_INT(xdp_prog_id(g_ifa), 0);
}

int main(int argc, char **argv)
{
	struct doca_log_backend *sdk;
	char decls[1024];
	uint8_t(*out)[BUF];
	uint32_t *lens;
	uint16_t *queue_of;
	struct port port;
	doca_error_t st;

	if (argc != 6) {
		fprintf(stderr, "usage: %s <ifa> <ifb> <netns b> <ip a> <ip b> (see the .sh)\n",
			argv[0]);
		return T_EXIT_FAIL;
	}
	g_ifa = argv[1];
	g_ifb = argv[2];
	g_nsb = argv[3];
	g_ipa = argv[4];
	g_ipb = argv[5];
	for (int i = 0; i < NFLOWS; i++)
		g_peer_udp[i] = -1;
	snprintf(decls, sizeof(decls),
		 "afxdp:iface=%s,name=xa,frames=512;afxdp:iface=%s,name=xa2;"
		 "afxdp:iface=%s,name=xq,queues=2,mode=native,zerocopy=off;"
		 "afxdp:iface=%s,name=xzc,zerocopy=on;afxdp:iface=nosuch0,name=xnone;"
		 "afxdp:iface=%s,name=xbadframes,frames=100;afxdp:iface=%s,name=xbadmode,mode=fast;"
		 "afxdp:iface=%s,name=xbadzc,zerocopy=maybe;afxdp:iface=%s,name=xbadq,queues=99",
		 g_ifa, g_ifa, g_ifa, g_ifa, g_ifa, g_ifa, g_ifa, g_ifa);
	setenv("SOFTDPU_DEVICES", decls, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	T_OK(doca_log_backend_create_with_buf_sdk(g_log_line, sizeof(g_log_line), log_flush, &sdk));
	T_OK(doca_log_backend_set_sdk_level(sdk, DOCA_LOG_LEVEL_WARNING));

	out = calloc(2 * NFLOWS + NRX + 32, BUF);
	lens = calloc(2 * NFLOWS + NRX + 32, sizeof(*lens));
	queue_of = calloc(2 * NFLOWS + NRX + 32, sizeof(*queue_of));
	if (out == NULL || lens == NULL || queue_of == NULL || t_iface_mac(g_ifa, g_mac_a) != 0)
		return T_EXIT_FAIL;
	T_OK(doca_devinfo_create_list(&g_list, &g_nb));
	if (g_list == NULL)
		return T_EXIT_FAIL;
	test_list();
	if (t_in_netns(g_nsb, peer_open_here, NULL) != 0)
		return T_EXIT_FAIL;
	st = port_open_st("xa", 1, &port);
	if (st == DOCA_ERROR_NOT_SUPPORTED && strstr(g_log, "AF_XDP") != NULL) {
		printf("SKIP: this kernel refuses AF_XDP or XDP on veth:\n%s", g_log);
		return T_EXIT_SKIP;
	}
	if (st != DOCA_SUCCESS) {
		t_fail("port_open xa: %s; log:\n%s", doca_error_get_name(st), g_log);
	} else {
		T_EQ_INT(port.info.nb_rxq, 2); /* every queue of the veth, whatever was asked */
		T_EQ_INT(port.info.nb_txq, 1);
		T_EQ_INT(port.info.mtu, 1500);
		T_EQ_INT(port.info.has_rx_fd, 1);
		T_TRUE(memcmp(port.info.mac, g_mac_a, 6) == 0);
		test_tx(&port);
		test_rx(&port, out, lens, queue_of);
		test_steer(&port, out, lens, queue_of);
		port_close(&port);
		test_queues(out, lens, queue_of);
		test_cycles();
		test_in_use_and_zc();
		test_no_cap();
	}
	T_OK(doca_devinfo_destroy_list(g_list));
	if (g_peer >= 0)
		close(g_peer);
	for (int i = 0; i < NFLOWS; i++)
		if (g_peer_udp[i] >= 0)
			close(g_peer_udp[i]);
	if (g_peer_icmp >= 0)
		close(g_peer_icmp);
	free(out);
	free(lens);
	free(queue_of);
	if (t_failures)
		fprintf(stderr, "library warnings and errors since the last reset:\n%s", g_log);
	T_DONE();
}
