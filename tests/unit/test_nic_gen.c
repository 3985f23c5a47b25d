/*
 * The `gen` provider: declarations (good and refused, with reasons), its devices in the device
 * list, generated traffic checked frame by frame (headers, IPv4 and UDP checksums recomputed
 * here, payload check, fill, flows) and exactly once by sequence number, the rate limit (never
 * ahead of it, not 3x behind; the timer fd never wakes thrice in a row without a frame),
 * truncation, and the TX sink's counters through the module's exported query.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doca_dev.h"
#include "sdp_gen_payload.h"
#include "sdp_provider.h"
#include "sdp_provider_eth.h"
#include "softdpu/sdp_pkt.h"
#include "t_helpers.h"
#include "t_nic.h"

#define FLAT_COUNT 1000
#define FLAT_SIZE 128
#define FLAT_FLOWS 4
#define FLAT_SPORT 2000
#define RATE 1000
#define RATE_COUNT 300

static char g_flat[32], g_rate[32], g_jumbo[32];
static const struct sdp_eth_port_ops *g_ops;
static sdp_gen_sink_counters_func_t g_counters;

/*
 * Check one generated frame completely; returns its sequence number, or UINT64_MAX after a
 * failure (reported).
 */
static uint64_t check_frame(const uint8_t *f, uint32_t len, uint32_t size, uint32_t flows,
			    uint16_t sport, const uint8_t mac[6])
{
	const uint8_t *ip = f + 14, *udp = ip + 20, *pl = udp + 8;
	uint32_t pl_len = size - SDP_GEN_L2L3L4_LEN;
	uint64_t seq;
	uint16_t flow;
	int l3_ok, l4_ok;

	if (len != size) {
		t_fail("frame of %u bytes, expected %u", len, size);
		return UINT64_MAX;
	}
	if (memcmp(f, mac, 6) != 0 || sdp_pkt_get16(f + 12) != 0x0800 || ip[0] != 0x45 ||
	    ip[9] != 17 || sdp_pkt_get16(ip + 2) != size - 14 ||
	    sdp_pkt_get16(udp + 4) != size - 34 || sdp_pkt_get16(udp + 2) != 5001) {
		t_fail("frame headers: dst mac %02x:..:%02x, type %04x, ip %02x proto %u len %u, "
		       "udp len %u dport %u",
		       f[0], f[5], sdp_pkt_get16(f + 12), ip[0], ip[9], sdp_pkt_get16(ip + 2),
		       sdp_pkt_get16(udp + 4), sdp_pkt_get16(udp + 2));
		return UINT64_MAX;
	}
	sdp_pkt_csum_check(f, len, &l3_ok, &l4_ok);
	if (!l3_ok) {
		t_fail("IPv4 header checksum wrong");
		return UINT64_MAX;
	}
	if (sdp_pkt_get16(udp + SDP_PKT_UDP_CSUM) == 0 || !l4_ok) {
		t_fail("UDP checksum %04x wrong", sdp_pkt_get16(udp + 6));
		return UINT64_MAX;
	}
	if (((uint32_t)sdp_pkt_get16(pl + SDP_GEN_OFF_MAGIC) << 16 |
	     sdp_pkt_get16(pl + SDP_GEN_OFF_MAGIC + 2)) != SDP_GEN_MAGIC) {
		t_fail("no gen magic");
		return UINT64_MAX;
	}
	if (((uint32_t)sdp_pkt_get16(pl) << 16 | sdp_pkt_get16(pl + 2)) !=
	    sdp_gen_check(pl + SDP_GEN_OFF_MAGIC, pl_len - SDP_GEN_OFF_MAGIC)) {
		t_fail("payload check wrong");
		return UINT64_MAX;
	}
	seq = 0;
	for (int i = 0; i < 8; i++)
		seq = seq << 8 | pl[SDP_GEN_OFF_SEQ + i];
	flow = sdp_pkt_get16(pl + SDP_GEN_OFF_FLOW);
	if (flow != seq % flows || sdp_pkt_get16(udp) != sport + flow ||
	    sdp_pkt_get16(ip + 4) != (uint16_t)seq) {
		t_fail("seq %llu: flow %u, sport %u, ip id %u; expected flow %llu",
		       (unsigned long long)seq, flow, sdp_pkt_get16(udp), sdp_pkt_get16(ip + 4),
		       (unsigned long long)(seq % flows));
		return UINT64_MAX;
	}
	for (uint32_t k = SDP_GEN_HDR_LEN; k < pl_len; k++) {
		if (pl[k] != (uint8_t)(seq + k)) {
			t_fail("seq %llu: fill byte %u is %u, expected %u", (unsigned long long)seq,
			       k, pl[k], (uint8_t)(seq + k));
			return UINT64_MAX;
		}
	}
	return seq;
}

static void test_decls(struct doca_devinfo **list, uint32_t n)
{
	static const char *const refused[] = {"gsmall", "gbig", "gkey", "gport", "gip", "gbadrate"};
	char name[64];
	const struct sdp_provider_issue *issues;
	size_t num = sdp_provider_get_issues(&issues);
	int seen = 0;

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		snprintf(name, sizeof(name), "%s%d", refused[i], (int)getpid());
		if (t_find_dev(list, n, name) != NULL)
			t_fail("device %s is listed but its declaration is bad", name);
	}
	T_LOGGED("SOFTDPU_DEVICES entry 4", "size=59 is not a number from 60 to 9000");
	T_LOGGED("SOFTDPU_DEVICES entry 5", "size=9001 is not a number from 60 to 9000");
	T_LOGGED("SOFTDPU_DEVICES entry 6", "unknown key 'colour'");
	T_LOGGED("SOFTDPU_DEVICES entry 7", "sport=65535 with flows=2 runs past UDP port 65535");
	T_LOGGED("SOFTDPU_DEVICES entry 8", "src=10.0.1 is not an IPv4 address");
	T_LOGGED("SOFTDPU_DEVICES entry 9", "rate=fast is not a number");
	T_LOGGED("SOFTDPU_DEVICES entry 10", "needs name=<device name>");
	for (size_t i = 0; i < num; i++) {
		int e;

		if (sscanf(issues[i].where, "SOFTDPU_DEVICES entry %d", &e) == 1 &&
		    strstr(issues[i].reason, "refused by provider 'gen'") != NULL)
			seen |= 1 << e;
	}
	T_EQ_INT(seen, 0x7f0); /* entries 4 to 10, not the good 1 to 3 */
}

static void test_listing(struct doca_devinfo **list, uint32_t n)
{
	const char *names[] = {g_flat, g_rate, g_jumbo};
	char pci[3][DOCA_DEVINFO_PCI_ADDR_SIZE];
	char buf[64];

	for (int i = 0; i < 3; i++) {
		struct doca_devinfo *d = t_find_dev(list, n, names[i]);

		T_TRUE(d != NULL);
		if (d == NULL)
			return;
		T_OK(doca_devinfo_get_iface_name(d, buf, sizeof(buf)));
		T_EQ_STR(buf, names[i]);
		T_OK(doca_devinfo_get_pci_addr_str(d, pci[i]));
		T_TRUE(strncmp(pci[i], "ffff:02:", 8) == 0);
		T_EQ_STR(sdp_devinfo_get_provider_name(d), "gen");
		T_EQ_INT(sdp_devinfo_get_attr(d)->link_up, 1);
	}
	T_TRUE(strcmp(pci[0], pci[1]) != 0 && strcmp(pci[0], pci[2]) != 0 &&
	       strcmp(pci[1], pci[2]) != 0);
}

/* The sink's counters query, from the loaded module. */
static void find_counters(void)
{
	for (size_t i = 0; sdp_provider_get_name(i) != NULL; i++) {
		void *h;

		if (strcmp(sdp_provider_get_name(i), "gen") != 0)
			continue;
		h = dlopen(sdp_provider_get_path(i), RTLD_NOW | RTLD_NOLOAD);
		T_TRUE(h != NULL);
		if (h == NULL)
			return;
		*(void **)&g_counters = dlsym(h, SDP_GEN_SINK_COUNTERS_SYMBOL);
		T_TRUE(g_counters != NULL);
		dlclose(h); /* the core keeps its own reference */
	}
}

static void test_flat(struct doca_dev *dev, struct doca_dev *other)
{
	struct sdp_eth_port_cfg cfg = {.nb_rxq = 4, .nb_txq = 2, .ring_size = 64};
	static uint8_t frames[FLAT_COUNT][FLAT_SIZE];
	static uint8_t seen[FLAT_COUNT];
	struct sdp_gen_sink_counters c0, c;
	struct sdp_eth_port_info info;
	struct sdp_eth_port *port = NULL, *p2 = NULL;
	struct sdp_pkt pkts[32];
	uint32_t got = 0, dup = 0;
	double deadline = t_now() + 20;

	T_STATUS(g_ops->port_open(NULL, &cfg, &port, &info), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(g_ops->port_open(sdp_dev_get_priv(dev), &(struct sdp_eth_port_cfg){0}, &port,
				  &info),
		 DOCA_ERROR_INVALID_VALUE);
	T_OK(g_ops->port_open(sdp_dev_get_priv(dev), &cfg, &port, &info));
	if (port == NULL)
		return;
	T_STATUS(g_ops->port_open(sdp_dev_get_priv(dev), &cfg, &p2, &info), DOCA_ERROR_IN_USE);
	T_TRUE(p2 == NULL);
	T_EQ_INT(info.nb_rxq, 1);
	T_EQ_INT(info.nb_txq, 2);
	T_EQ_INT(info.has_rx_fd, 0);
	T_EQ_INT(g_ops->rx_fd(port, 0), -1); /* flat out: no fd, the engine polls */
	T_EQ_INT(g_ops->tx_fd(port, 0), -1);
	T_EQ_INT(g_ops->link_up(port), 1);
	T_EQ_INT(info.mac[0], 0x02);
	T_EQ_INT(info.mac[1], 0x47);

	while (got < FLAT_COUNT && t_now() < deadline) {
		uint16_t k;

		for (int j = 0; j < 32; j++)
			pkts[j] =
				(struct sdp_pkt){.data = frames[got + j < FLAT_COUNT ? got + j : 0],
						 .cap = FLAT_SIZE};
		k = g_ops->rx_burst(port, 0, pkts,
				    (uint16_t)(FLAT_COUNT - got < 32 ? FLAT_COUNT - got : 32));
		for (uint16_t j = 0; j < k; j++) {
			uint64_t seq = check_frame(frames[got + j], pkts[j].len, FLAT_SIZE,
						   FLAT_FLOWS, FLAT_SPORT, info.mac);

			T_EQ_INT(pkts[j].flags, 0);
			T_EQ_INT(pkts[j].wire_len, FLAT_SIZE);
			if (seq >= FLAT_COUNT)
				continue;
			dup += seen[seq];
			seen[seq] = 1;
		}
		got += k;
	}
	T_EQ_INT(got, FLAT_COUNT);
	T_EQ_INT(dup, 0);
	for (uint32_t i = 0; i < FLAT_COUNT; i++)
		if (!seen[i]) {
			t_fail("frame seq %u never received", i);
			break;
		}
	/* count reached: nothing more */
	pkts[0] = (struct sdp_pkt){.data = frames[0], .cap = FLAT_SIZE};
	T_EQ_INT(g_ops->rx_burst(port, 0, pkts, 1), 0);
	T_EQ_INT(g_ops->rx_burst(port, 1, pkts, 1), 0); /* no such queue */

	/* the sink: every generated frame comes back intact on two queues */
	T_OK(g_counters(dev, &c0));
	for (uint32_t i = 0; i < FLAT_COUNT; i += 25) {
		for (int j = 0; j < 25; j++)
			pkts[j] = (struct sdp_pkt){.data = frames[i + j], .len = FLAT_SIZE};
		T_EQ_INT(g_ops->tx_burst(port, (uint16_t)(i / 25 % 2), pkts, 25), 25);
	}
	T_OK(g_counters(dev, &c));
	T_EQ_INT(c.frames - c0.frames, FLAT_COUNT);
	T_EQ_INT(c.bytes - c0.bytes, FLAT_COUNT * FLAT_SIZE);
	T_EQ_INT(c.gen_ok - c0.gen_ok, FLAT_COUNT);
	T_EQ_INT(c.gen_bad - c0.gen_bad, 0);

	/* damaged gen frames count bad; a frame that is not gen traffic counts only as a frame */
	{
		static uint8_t bad[4][FLAT_SIZE], other_frame[64];

		for (int i = 0; i < 4; i++)
			memcpy(bad[i], frames[i], FLAT_SIZE);
		bad[0][FLAT_SIZE - 1] ^= 1;  /* fill (and so the UDP checksum and the check) */
		bad[1][14 + 8] ^= 1;	     /* IPv4 TTL: header checksum */
		bad[2][42 + 0] ^= 0x80;	     /* the payload check itself */
		bad[3][40] = bad[3][41] = 0; /* UDP checksum 0 (none): the payload still checks */
		memset(other_frame, 0xab, sizeof(other_frame));
		for (int i = 0; i < 4; i++)
			pkts[i] = (struct sdp_pkt){.data = bad[i], .len = FLAT_SIZE};
		pkts[4] = (struct sdp_pkt){.data = other_frame, .len = sizeof(other_frame)};
		T_EQ_INT(g_ops->tx_burst(port, 1, pkts, 5), 5);
		T_OK(g_counters(dev, &c0));
		T_EQ_INT(c0.frames - c.frames, 5);
		T_EQ_INT(c0.bytes - c.bytes, 4 * FLAT_SIZE + 64);
		T_EQ_INT(c0.gen_bad - c.gen_bad, 3);
		T_EQ_INT(c0.gen_ok - c.gen_ok, 1);
		T_EQ_INT(g_ops->tx_burst(port, 2, pkts, 1), 0); /* no such queue */
	}
	T_STATUS(g_counters(NULL, &c), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(g_counters(dev, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(g_counters(other, &c), DOCA_ERROR_INVALID_VALUE);

	/* a new port starts again at seq 0 */
	g_ops->port_close(port);
	port = NULL;
	T_OK(g_ops->port_open(sdp_dev_get_priv(dev), &cfg, &port, &info));
	if (port != NULL) {
		pkts[0] = (struct sdp_pkt){.data = frames[0], .cap = FLAT_SIZE};
		T_EQ_INT(g_ops->rx_burst(port, 0, pkts, 1), 1);
		T_EQ_INT(check_frame(frames[0], pkts[0].len, FLAT_SIZE, FLAT_FLOWS, FLAT_SPORT,
				     info.mac),
			 0);
		g_ops->port_close(port);
	}
}

static void test_rate(struct doca_dev *dev)
{
	struct sdp_eth_port_cfg cfg = {.nb_rxq = 1, .nb_txq = 0};
	static uint8_t bufs[64][60];
	static uint8_t seen[RATE_COUNT];
	struct sdp_eth_port_info info;
	struct sdp_eth_port *port = NULL;
	struct sdp_pkt pkts[64];
	uint32_t got = 0, wakeups = 0, idle = 0, idle_max = 0;
	double t0, elapsed, deadline;
	int fd;

	T_OK(g_ops->port_open(sdp_dev_get_priv(dev), &cfg, &port, &info));
	if (port == NULL)
		return;
	T_EQ_INT(info.has_rx_fd, 1);
	T_EQ_INT(info.nb_txq, 0);
	fd = g_ops->rx_fd(port, 0);
	T_TRUE(fd >= 0);
	t0 = t_now();
	deadline = t0 + 20;
	while (got < RATE_COUNT && t_now() < deadline) {
		uint16_t k;

		if (!t_readable(fd, 2000))
			continue;
		wakeups++;
		for (int j = 0; j < 64; j++)
			pkts[j] = (struct sdp_pkt){.data = bufs[j], .cap = 60};
		k = g_ops->rx_burst(port, 0, pkts, 64);
		for (uint16_t j = 0; j < k; j++) {
			uint64_t seq = check_frame(bufs[j], pkts[j].len, 60, 1, 1024, info.mac);

			if (seq < RATE_COUNT) {
				T_EQ_INT(seen[seq], 0);
				seen[seq] = 1;
			}
		}
		got += k;
		/* wakeups in a row that found no frame (see below) */
		idle = k == 0 ? idle + 1 : 0;
		if (idle > idle_max)
			idle_max = idle;
		/* never ahead of the rate: one frame at start, two ticks of burst */
		elapsed = t_now() - t0;
		if (got > 3 + RATE * elapsed * 1.05)
			t_fail("%u frames after %.3f s at %d pps", got, elapsed, RATE);
	}
	elapsed = t_now() - t0;
	T_EQ_INT(got, RATE_COUNT);
	/* 300 frames at 1000 pps take 0.3 s: at least a third of it, whatever the load */
	if (elapsed < 0.1)
		t_fail("%u frames in %.3f s: faster than 3x the rate of %d pps", got, elapsed,
		       RATE);
	/*
	 * Not "one frame per wakeup": rx_burst clears the timer fd before it reads the clock, so a
	 * tick between the two leaves the fd readable for tokens already counted, and the wakeup
	 * after that one may also come before the next whole token. Three in a row cannot: each
	 * wakeup needs a tick after the previous call cleared the fd, so the third comes more than
	 * one tick (one token at this rate, below the cap of two) after the clock read of the call
	 * before them. The fd never spins the engine: at most two wakeups in a row without a frame.
	 */
	T_TRUE(wakeups > 1);
	T_TRUE(idle_max <= 2);
	/* all out: the timer is disarmed, the engine may sleep */
	T_EQ_INT(t_readable(fd, 50), 0);
	pkts[0] = (struct sdp_pkt){.data = bufs[0], .cap = 60};
	T_EQ_INT(g_ops->rx_burst(port, 0, pkts, 1), 0);
	g_ops->port_close(port);
}

static void test_jumbo(struct doca_dev *dev)
{
	struct sdp_eth_port_cfg cfg = {.nb_rxq = 1, .nb_txq = 1};
	static uint8_t big[9000], small[100], want[9000];
	struct sdp_eth_port_info info;
	struct sdp_eth_port *port = NULL;
	struct sdp_pkt pkts[2] = {{.data = big, .cap = sizeof(big)},
				  {.data = small, .cap = sizeof(small)}};

	T_OK(g_ops->port_open(sdp_dev_get_priv(dev), &cfg, &port, &info));
	if (port == NULL)
		return;
	T_TRUE(info.mtu >= 9000 - 14);
	T_EQ_INT(g_ops->rx_burst(port, 0, pkts, 2), 2);
	T_EQ_INT(check_frame(big, pkts[0].len, 9000, 1, 1024, info.mac), 0);
	T_EQ_INT(pkts[0].flags, 0);
	/* frame 1 in a 100-byte buffer: its first 100 bytes, flagged */
	T_EQ_INT(pkts[1].len, sizeof(small));
	T_EQ_INT(pkts[1].wire_len, 9000);
	T_EQ_INT(pkts[1].flags, SDP_PKT_F_TRUNCATED);
	memcpy(want, big, sizeof(want));
	{
		/* the same frame as 0 but seq 1: recheck only the fixed headers and seq */
		uint64_t seq = 0;

		for (int i = 0; i < 8; i++)
			seq = seq << 8 | small[42 + SDP_GEN_OFF_SEQ + i];
		T_EQ_INT(seq, 1);
		T_TRUE(memcmp(small, want, 14) == 0);
	}
	pkts[0] = (struct sdp_pkt){.data = big, .cap = sizeof(big)};
	T_EQ_INT(g_ops->rx_burst(port, 0, pkts, 1), 0); /* count=2 */
	g_ops->port_close(port);
}

int main(void)
{
	struct doca_devinfo **list = NULL;
	struct doca_dev *flat = NULL, *rate = NULL, *jumbo = NULL, *host = NULL;
	char decls[2048];
	uint32_t n = 0;
	int pid = (int)getpid();

	snprintf(g_flat, sizeof(g_flat), "gflat%d", pid);
	snprintf(g_rate, sizeof(g_rate), "grate%d", pid);
	snprintf(g_jumbo, sizeof(g_jumbo), "gjumbo%d", pid);
	snprintf(decls, sizeof(decls),
		 "gen:name=%s,size=%d,flows=%d,count=%d,sport=%d;" /* 1 */
		 "gen:name=%s,rate=%d,count=%d;"		   /* 2 */
		 "gen:name=%s,size=9000,count=2,src=192.168.1.1;"  /* 3 */
		 "gen:name=gsmall%d,size=59;"			   /* 4 */
		 "gen:name=gbig%d,size=9001;"			   /* 5 */
		 "gen:name=gkey%d,colour=red;"			   /* 6 */
		 "gen:name=gport%d,sport=65535,flows=2;"	   /* 7 */
		 "gen:name=gip%d,src=10.0.1;"			   /* 8 */
		 "gen:name=gbadrate%d,rate=fast;"		   /* 9 */
		 "gen:size=64",					   /* 10 */
		 g_flat, FLAT_SIZE, FLAT_FLOWS, FLAT_COUNT, FLAT_SPORT, g_rate, RATE, RATE_COUNT,
		 g_jumbo, pid, pid, pid, pid, pid, pid);
	setenv("SOFTDPU_DEVICES", decls, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	t_log_capture();

	T_OK(doca_devinfo_create_list(&list, &n));
	if (list == NULL)
		T_DONE();
	test_decls(list, n);
	test_listing(list, n);
	find_counters();
	if (t_find_dev(list, n, g_flat) == NULL || t_find_dev(list, n, g_rate) == NULL ||
	    t_find_dev(list, n, g_jumbo) == NULL || g_counters == NULL) {
		doca_devinfo_destroy_list(list);
		T_DONE();
	}
	T_OK(doca_dev_open(t_find_dev(list, n, g_flat), &flat));
	T_OK(doca_dev_open(t_find_dev(list, n, g_rate), &rate));
	T_OK(doca_dev_open(t_find_dev(list, n, g_jumbo), &jumbo));
	if (t_find_dev(list, n, "softdpu0") != NULL)
		T_OK(doca_dev_open(t_find_dev(list, n, "softdpu0"), &host));
	T_OK(doca_devinfo_destroy_list(list));
	if (flat != NULL && rate != NULL && jumbo != NULL && host != NULL) {
		g_ops = sdp_dev_get_eth_ops(flat);
		T_TRUE(g_ops != NULL);
		if (g_ops != NULL) {
			test_flat(flat, host);
			test_rate(rate);
			test_jumbo(jumbo);
		}
	}
	if (host != NULL)
		T_OK(doca_dev_close(host));
	if (flat != NULL)
		T_OK(doca_dev_close(flat));
	if (rate != NULL)
		T_OK(doca_dev_close(rate));
	if (jumbo != NULL)
		T_OK(doca_dev_close(jumbo));
	T_DONE();
}
