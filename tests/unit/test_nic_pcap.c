/*
 * The pcap software NIC (src/providers/pcap): declarations (good and refused, with the reason in
 * the log), the device list, and the Ethernet port: a pcap file this test writes is replayed once
 * and looped, flat out, at recorded timing and at a given rate, and compared byte for byte;
 * transmitted frames are read back from the tx file byte for byte; wait-on-time and the bad
 * arguments of the port ops.
 *
 * Needs SOFTDPU_PROVIDER_PATH to name the pcap module's directory (meson sets it). Everything it
 * creates lives in a mkdtemp directory removed at the end.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "doca_dev.h"
#include "doca_log.h"
#include "sdp_provider.h"
#include "sdp_provider_eth.h"
#include "t_helpers.h"

#define NFRAMES 20
#define GAP_NS 1000000ull /* recorded gap between frames: 1 ms */
#define BUF 2048

static char g_dir[64];
static char g_rx[128], g_rx2[128], g_tx[128], g_tx2[128], g_text[128], g_missing[128];
static uint8_t g_frames[NFRAMES][BUF];
static uint32_t g_lens[NFRAMES];

/* Warnings and errors of the library, for checking that a refusal says why. */
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

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Frame i: Ethernet/IPv4-looking header and a payload that tells it apart from the others. */
static void make_frames(void)
{
	for (uint32_t i = 0; i < NFRAMES; i++) {
		uint8_t *f = g_frames[i];

		g_lens[i] = 60 + i * 73; /* 60 .. 1447 bytes */
		for (uint32_t b = 0; b < g_lens[i]; b++)
			f[b] = (uint8_t)(b * 7 + i * 31 + 1);
		memcpy(f, "\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02\x08\x00", 14);
		f[14] = (uint8_t)i;
	}
}

static int write_pcap(const char *path, uint32_t n)
{
	pcap_t *dead =
		pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
	pcap_dumper_t *d;

	if (dead == NULL)
		return -1;
	d = pcap_dump_open(dead, path);
	if (d == NULL) {
		fprintf(stderr, "pcap_dump_open %s: %s\n", path, pcap_geterr(dead));
		pcap_close(dead);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct pcap_pkthdr h;
		uint64_t ts = 1700000000ull * 1000000000ull + i * GAP_NS;

		h.ts.tv_sec = (time_t)(ts / 1000000000ull);
		h.ts.tv_usec = (suseconds_t)(ts % 1000000000ull);
		h.caplen = g_lens[i];
		h.len = g_lens[i];
		pcap_dump((u_char *)d, &h, g_frames[i]);
	}
	pcap_dump_close(d);
	pcap_close(dead);
	return 0;
}

/* ---- device and port helpers ----------------------------------------------------------------- */

static struct doca_devinfo **g_list;
static uint32_t g_nb;

static struct doca_devinfo *find_dev(const char *name)
{
	char buf[DOCA_DEVINFO_IBDEV_NAME_SIZE];

	for (uint32_t i = 0; i < g_nb; i++)
		if (doca_devinfo_get_ibdev_name(g_list[i], buf, sizeof(buf)) == DOCA_SUCCESS &&
		    strcmp(buf, name) == 0)
			return g_list[i];
	return NULL;
}

struct port {
	struct doca_dev *dev;
	const struct sdp_eth_port_ops *ops;
	struct sdp_eth_port *p;
	struct sdp_eth_port_info info;
};

static int port_open(const char *name, struct port *port)
{
	struct sdp_eth_port_cfg cfg = {.nb_rxq = 1, .nb_txq = 1, .ring_size = 256};
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
	if (port->ops == NULL) {
		t_fail("expected provider pcap to have eth ops");
		doca_dev_close(port->dev);
		return -1;
	}
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

/* Receive up to `want` frames into out[] (cap BUF each), waiting on rx_fd at most timeout_ms. */
static uint32_t rx_frames(struct port *port, uint8_t (*out)[BUF], struct sdp_pkt *pkts,
			  uint32_t want, int timeout_ms)
{
	uint64_t deadline = now_ns(CLOCK_MONOTONIC) + (uint64_t)timeout_ms * 1000000ull;
	uint32_t got = 0;
	int fd = port->ops->rx_fd(port->p, 0);

	if (fd < 0) {
		t_fail("expected an rx fd, got %d", fd);
		return 0;
	}
	while (got < want) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		uint16_t n = (uint16_t)(want - got > 8 ? 8 : want - got);

		for (uint16_t i = 0; i < n; i++) {
			pkts[got + i].data = out[got + i];
			pkts[got + i].cap = BUF;
		}
		got += port->ops->rx_burst(port->p, 0, &pkts[got], n);
		if (got >= want || now >= deadline)
			break;
		/* sleep until the port says a frame is due (bounded) */
		poll(&pfd, 1, (int)((deadline - now) / 1000000ull) + 1);
	}
	return got;
}

/* Frame k of a replay must be frame k % NFRAMES of the file, byte for byte. */
static void check_replay(const uint8_t (*out)[BUF], const struct sdp_pkt *pkts, uint32_t n,
			 const char *what)
{
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = k % NFRAMES;

		if (pkts[k].len != g_lens[i] || pkts[k].wire_len != g_lens[i] ||
		    memcmp(out[k], g_frames[i], g_lens[i]) != 0 || pkts[k].flags != 0) {
			t_fail("%s: frame %u: expected file frame %u (%u bytes, flags 0), got %u "
			       "bytes (wire %u, flags 0x%x)%s",
			       what, k, i, g_lens[i], pkts[k].len, pkts[k].wire_len, pkts[k].flags,
			       pkts[k].len == g_lens[i] ? " with other bytes" : "");
			return;
		}
	}
}

static int fd_readable(int fd, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	return poll(&pfd, 1, timeout_ms) > 0;
}

static uint8_t (*g_out)[BUF];
static struct sdp_pkt *g_pkts;

/* ---- scenarios ------------------------------------------------------------------------------- */

static void test_list(void)
{
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE], iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
	const char *good[] = {"ponce", "ploop", "precorded", "ppps", "ptx", "prxtx", "pgone"};
	const char *bad[] = {"pmissing", "pbadkey", "pnothing", "pbadspeed", "pnotpcap", "plooptx"};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct doca_devinfo *di = find_dev(good[i]);

		if (di == NULL) {
			t_fail("expected device %s in the list", good[i]);
			continue;
		}
		T_OK(doca_devinfo_get_pci_addr_str(di, pci));
		if (strncmp(pci, "ffff:03:", 8) != 0)
			t_fail("device %s: expected a PCI address on ffff:03, got %s", good[i],
			       pci);
		T_OK(doca_devinfo_get_iface_name(di, iface, sizeof(iface)));
		T_EQ_STR(iface, good[i]);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (find_dev(bad[i]) != NULL)
			t_fail("expected declaration %s to be refused, but it is listed", bad[i]);

	/* the reasons are in the log, and the refusals among the provider issues */
	T_TRUE(strstr(g_log, g_missing) != NULL && strstr(g_log, "No such file") != NULL);
	T_TRUE(strstr(g_log, "unknown key 'colour'") != NULL);
	T_TRUE(strstr(g_log, "needs rx=<file>") != NULL);
	T_TRUE(strstr(g_log, "speed must be recorded, max or a rate") != NULL);
	T_TRUE(strstr(g_log, "is not a readable pcap file") != NULL);
	T_TRUE(strstr(g_log, "loop= and speed= describe the replay") != NULL);
	{
		const struct sdp_provider_issue *issues;
		size_t n = sdp_provider_get_issues(&issues), refused = 0, not_found = 0;

		for (size_t i = 0; i < n; i++) {
			refused += strstr(issues[i].reason, "refused by provider 'pcap'") != NULL;
			not_found += strstr(issues[i].reason, "DOCA_ERROR_NOT_FOUND") != NULL;
		}
		T_EQ_INT(refused, 6);
		T_EQ_INT(not_found, 1);
	}
}

static void test_replay_once(void)
{
	struct port port;
	uint32_t got;

	if (port_open("ponce", &port) != 0)
		return;
	T_EQ_INT(port.info.nb_rxq, 1);
	T_EQ_INT(port.info.nb_txq, 1);
	T_EQ_INT(port.info.has_rx_fd, 1);
	T_TRUE(port.info.mtu >= 1500);
	T_TRUE(port.info.mac[0] == 0x02);
	T_EQ_INT(port.ops->link_up(port.p), 1);
	T_TRUE(fd_readable(port.ops->rx_fd(port.p, 0), 0));

	got = rx_frames(&port, g_out, g_pkts, NFRAMES + 5, 300);
	T_EQ_INT(got, NFRAMES);
	check_replay((const uint8_t(*)[BUF])g_out, g_pkts, got, "once");
	/* the end: no more frames and the fd goes quiet */
	T_EQ_INT(port.ops->rx_burst(port.p, 0, g_pkts, 8), 0);
	T_TRUE(!fd_readable(port.ops->rx_fd(port.p, 0), 20));
	port_close(&port);

	/* every port open replays the file from its start */
	if (port_open("ponce", &port) != 0)
		return;
	got = rx_frames(&port, g_out, g_pkts, 3, 300);
	T_EQ_INT(got, 3);
	check_replay((const uint8_t(*)[BUF])g_out, g_pkts, got, "once, reopened");

	/* a buffer smaller than the frame: cut, flagged, wire length kept */
	{
		uint8_t small[32];
		struct sdp_pkt pkt = {.data = small, .cap = sizeof(small)};

		T_EQ_INT(port.ops->rx_burst(port.p, 0, &pkt, 1), 1);
		T_EQ_INT(pkt.len, 32);
		T_EQ_INT(pkt.wire_len, g_lens[3]);
		T_EQ_INT(pkt.flags, SDP_PKT_F_TRUNCATED);
		T_TRUE(memcmp(small, g_frames[3], 32) == 0);
	}
	port_close(&port);
}

static void test_replay_loop(void)
{
	const uint32_t want = 3 * NFRAMES + 7;
	struct port port;
	uint32_t got;

	if (port_open("ploop", &port) != 0)
		return;
	got = rx_frames(&port, g_out, g_pkts, want, 1000);
	T_EQ_INT(got, want);
	check_replay((const uint8_t(*)[BUF])g_out, g_pkts, got, "loop");
	T_TRUE(fd_readable(port.ops->rx_fd(port.p, 0), 0)); /* a loop never ends */
	port_close(&port);
}

/* Recorded timing (1 ms gaps) and a given rate (1000 frames/s) take >= 19 ms for 20 frames. */
static void test_replay_timed(const char *name)
{
	struct port port;
	uint64_t t0, dt;
	uint32_t got;

	t0 = now_ns(CLOCK_MONOTONIC);
	if (port_open(name, &port) != 0)
		return;
	got = rx_frames(&port, g_out, g_pkts, NFRAMES, 2000);
	dt = now_ns(CLOCK_MONOTONIC) - t0;
	T_EQ_INT(got, NFRAMES);
	check_replay((const uint8_t(*)[BUF])g_out, g_pkts, got, name);
	if (dt < (NFRAMES - 1) * GAP_NS)
		t_fail("%s: expected %u frames to take at least %llu ns, took %llu", name, NFRAMES,
		       (unsigned long long)((NFRAMES - 1) * GAP_NS), (unsigned long long)dt);
	/* frames come when due: a burst right after the open gets only those due by then */
	port_close(&port);
	t0 = now_ns(CLOCK_MONOTONIC);
	if (port_open(name, &port) != 0)
		return;
	got = port.ops->rx_burst(port.p, 0, g_pkts, NFRAMES);
	dt = now_ns(CLOCK_MONOTONIC) - t0;
	T_TRUE(got >= 1);
	if (got > dt / GAP_NS + 1)
		t_fail("%s: expected at most %llu frames due %llu ns after the open, got %u", name,
		       (unsigned long long)(dt / GAP_NS + 1), (unsigned long long)dt, got);
	port_close(&port);
}

/* Read a pcap file back: frames must be exact copies of the frame numbers in want[]. */
static void check_tx_file(const char *path, const uint32_t *want, uint32_t n)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *p =
		pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	struct pcap_pkthdr *h;
	const u_char *data;
	uint32_t k = 0;

	if (p == NULL) {
		t_fail("expected to read %s back, got: %s", path, errbuf);
		return;
	}
	T_EQ_INT(pcap_datalink(p), DLT_EN10MB);
	while (pcap_next_ex(p, &h, &data) == 1) {
		if (k < n) {
			uint32_t i = want[k];

			if (h->caplen != g_lens[i] || h->len != g_lens[i] ||
			    memcmp(data, g_frames[i], g_lens[i]) != 0)
				t_fail("%s: record %u: expected frame %u (%u bytes), got %u/%u "
				       "bytes%s",
				       path, k, i, g_lens[i], h->caplen, h->len,
				       h->caplen == g_lens[i] ? " with other bytes" : "");
		}
		k++;
	}
	T_EQ_INT(k, n);
	pcap_close(p);
}

static void test_tx(void)
{
	struct sdp_pkt pkts[NFRAMES];
	uint32_t order[NFRAMES + 5];
	struct port port;

	/* tx only: 10 frames, flushed at port close */
	if (port_open("ptx", &port) != 0)
		return;
	T_EQ_INT(port.ops->rx_burst(port.p, 0, g_pkts, 8), 0); /* nothing to replay */
	T_TRUE(!fd_readable(port.ops->rx_fd(port.p, 0), 0));
	for (uint32_t i = 0; i < 10; i++) {
		pkts[i] = (struct sdp_pkt){.data = g_frames[i], .len = g_lens[i]};
		order[i] = i;
	}
	T_EQ_INT(port.ops->tx_burst(port.p, 0, pkts, 4), 4);
	T_EQ_INT(port.ops->tx_burst(port.p, 0, pkts + 4, 6), 6);
	T_EQ_INT(port.ops->tx_burst(port.p, 1, pkts, 1), 0); /* no such queue */
	port.ops->port_close(port.p);
	check_tx_file(g_tx, order, 10);

	/* a second port of the still open device keeps adding to the file */
	{
		struct sdp_eth_port_cfg cfg = {.nb_rxq = 0, .nb_txq = 1, .ring_size = 64};

		T_OK(port.ops->port_open(sdp_dev_get_priv(port.dev), &cfg, &port.p, &port.info));
		T_EQ_INT(port.info.nb_rxq, 0);
		for (uint32_t i = 0; i < 5; i++) {
			pkts[i] = (struct sdp_pkt){.data = g_frames[19 - i], .len = g_lens[19 - i]};
			order[10 + i] = 19 - i;
		}
		T_EQ_INT(port.ops->tx_burst(port.p, 0, pkts, 5), 5);
		/* a frame of no length is taken and discarded, not recorded */
		pkts[0].len = 0;
		T_EQ_INT(port.ops->tx_burst(port.p, 0, pkts, 1), 1);
		port.ops->port_close(port.p);
	}
	check_tx_file(g_tx, order, 15);
	T_OK(doca_dev_close(port.dev));
	check_tx_file(g_tx, order, 15);

	/* rx and tx on one port: what is replayed is sent back and recorded */
	if (port_open("prxtx", &port) != 0)
		return;
	{
		uint32_t got = rx_frames(&port, g_out, g_pkts, NFRAMES, 500);
		uint16_t sent = 0;

		T_EQ_INT(got, NFRAMES);
		for (uint32_t i = 0; i < got; i++) {
			g_pkts[i].ts_ns = 0;
			order[i] = i;
		}
		for (int tries = 0; sent < got && tries < 10; tries++)
			sent += port.ops->tx_burst(port.p, 0, g_pkts + sent,
						   (uint16_t)(got - sent));
		T_EQ_INT(sent, NFRAMES);
	}
	port_close(&port);
	check_tx_file(g_tx2, order, NFRAMES);
}

/* A frame with a send time 30 ms ahead waits for it; tx_fd says when. */
static void test_wait_on_time(void)
{
	struct port port;
	struct sdp_pkt pkt = {.data = g_frames[0], .len = g_lens[0]};
	uint64_t t0;
	int fd;

	if (port_open("ptx", &port) != 0)
		return;
	fd = port.ops->tx_fd(port.p, 0);
	T_TRUE(fd >= 0);
	T_EQ_INT(port.ops->tx_fd(port.p, 3), -1);
	t0 = now_ns(CLOCK_REALTIME);
	pkt.ts_ns = t0 + 30000000ull;
	T_EQ_INT(port.ops->tx_burst(port.p, 0, &pkt, 1), 0);
	T_TRUE(fd_readable(fd, 1000));
	if (now_ns(CLOCK_REALTIME) < pkt.ts_ns)
		t_fail("expected tx_fd to fire at the send time, it fired %llu ns early",
		       (unsigned long long)(pkt.ts_ns - now_ns(CLOCK_REALTIME)));
	T_EQ_INT(port.ops->tx_burst(port.p, 0, &pkt, 1), 1);
	port_close(&port);
	/* the device's file was created again by this open: one frame */
	{
		uint32_t order[1] = {0};

		check_tx_file(g_tx, order, 1);
	}
}

static void test_bad_args(void)
{
	struct sdp_eth_port_cfg cfg = {.nb_rxq = 1, .nb_txq = 1, .ring_size = 64};
	struct sdp_eth_port_cfg none = {.nb_rxq = 0, .nb_txq = 0, .ring_size = 64};
	struct sdp_eth_port_info info;
	struct sdp_eth_port *p = (struct sdp_eth_port *)&cfg; /* must stay untouched */
	struct doca_devinfo *di = find_dev("ponce");
	const struct sdp_eth_port_ops *ops;
	struct doca_dev *dev;
	void *priv;

	if (di == NULL || doca_dev_open(di, &dev) != DOCA_SUCCESS) {
		t_fail("expected to open ponce");
		return;
	}
	ops = sdp_dev_get_provider_ops(dev)->eth;
	priv = sdp_dev_get_priv(dev);
	T_STATUS(ops->port_open(NULL, &cfg, &p, &info), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(ops->port_open(priv, NULL, &p, &info), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(ops->port_open(priv, &cfg, NULL, &info), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(ops->port_open(priv, &cfg, &p, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(ops->port_open(priv, &none, &p, &info), DOCA_ERROR_INVALID_VALUE);
	T_TRUE(p == (struct sdp_eth_port *)&cfg);
	T_EQ_INT(ops->rx_burst(NULL, 0, g_pkts, 1), 0);
	T_EQ_INT(ops->tx_burst(NULL, 0, g_pkts, 1), 0);
	T_EQ_INT(ops->rx_fd(NULL, 0), -1);
	T_EQ_INT(ops->tx_fd(NULL, 0), -1);
	ops->port_close(NULL);
	T_OK(doca_dev_close(dev));

	/* the rx file vanished after the declaration was accepted: port_open says so */
	di = find_dev("pgone");
	if (di == NULL || doca_dev_open(di, &dev) != DOCA_SUCCESS) {
		t_fail("expected to open pgone");
		return;
	}
	unlink(g_rx2);
	g_log_len = 0;
	g_log[0] = '\0';
	T_STATUS(sdp_dev_get_provider_ops(dev)->eth->port_open(sdp_dev_get_priv(dev), &cfg, &p,
							       &info),
		 DOCA_ERROR_NOT_FOUND);
	T_TRUE(strstr(g_log, g_rx2) != NULL);
	T_TRUE(p == (struct sdp_eth_port *)&cfg);
	T_OK(doca_dev_close(dev));
}

int main(void)
{
	struct doca_log_backend *sdk;
	char decls[4096];
	int pid = (int)getpid();
	FILE *f;

	if (getenv("SOFTDPU_PROVIDER_PATH") == NULL)
		T_SKIP("SOFTDPU_PROVIDER_PATH is not set (run through meson test)");
	snprintf(g_dir, sizeof(g_dir), "/tmp/sdp_pcap_%d_XXXXXX", pid);
	if (mkdtemp(g_dir) == NULL) {
		fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
		return T_EXIT_FAIL;
	}
	snprintf(g_rx, sizeof(g_rx), "%s/rx.pcap", g_dir);
	snprintf(g_rx2, sizeof(g_rx2), "%s/rx2.pcap", g_dir);
	snprintf(g_tx, sizeof(g_tx), "%s/tx.pcap", g_dir);
	snprintf(g_tx2, sizeof(g_tx2), "%s/tx2.pcap", g_dir);
	snprintf(g_text, sizeof(g_text), "%s/text.pcap", g_dir);
	snprintf(g_missing, sizeof(g_missing), "%s/missing.pcap", g_dir);
	make_frames();
	if (write_pcap(g_rx, NFRAMES) != 0 || write_pcap(g_rx2, NFRAMES) != 0)
		return T_EXIT_FAIL;
	f = fopen(g_text, "w");
	if (f != NULL) {
		fputs("this is not a capture\n", f);
		fclose(f);
	}

	snprintf(decls, sizeof(decls),
		 "pcap:name=ponce,rx=%s,speed=max;"
		 "pcap:name=ploop,rx=%s,loop=1,speed=max;"
		 "pcap:name=precorded,rx=%s,speed=recorded;"
		 "pcap:name=ppps,rx=%s,speed=1000,loop=0;"
		 "pcap:name=ptx,tx=%s;"
		 "pcap:name=prxtx,rx=%s,tx=%s,speed=max;"
		 "pcap:name=pgone,rx=%s;"
		 "pcap:name=pmissing,rx=%s;"
		 "pcap:name=pbadkey,rx=%s,colour=blue;"
		 "pcap:name=pnothing;"
		 "pcap:name=pbadspeed,rx=%s,speed=fast;"
		 "pcap:name=pnotpcap,rx=%s;"
		 "pcap:name=plooptx,tx=%s,loop=1",
		 g_rx, g_rx, g_rx, g_rx, g_tx, g_rx, g_tx2, g_rx2, g_missing, g_rx, g_rx, g_text,
		 g_tx);
	setenv("SOFTDPU_DEVICES", decls, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);

	T_OK(doca_log_backend_create_with_buf_sdk(g_log_line, sizeof(g_log_line), log_flush, &sdk));
	T_OK(doca_log_backend_set_sdk_level(sdk, DOCA_LOG_LEVEL_WARNING));

	g_out = calloc(4 * NFRAMES, BUF);
	g_pkts = calloc(4 * NFRAMES, sizeof(*g_pkts));
	if (g_out == NULL || g_pkts == NULL)
		return T_EXIT_FAIL;
	T_OK(doca_devinfo_create_list(&g_list, &g_nb));
	if (g_list != NULL) {
		test_list();
		test_replay_once();
		test_replay_loop();
		test_replay_timed("precorded");
		test_replay_timed("ppps");
		test_tx();
		test_wait_on_time();
		test_bad_args();
		T_OK(doca_devinfo_destroy_list(g_list));
	}
	free(g_out);
	free(g_pkts);

	unlink(g_rx);
	unlink(g_rx2);
	unlink(g_tx);
	unlink(g_tx2);
	unlink(g_text);
	rmdir(g_dir);
	if (t_failures)
		fprintf(stderr, "library warnings and errors since the last reset:\n%s", g_log);
	T_DONE();
}
