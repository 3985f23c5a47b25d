/*
 * libdoca_eth on afpacket devices over a veth pair (run by test_eth_afpacket.sh, which creates
 * two network namespaces and the pair, and runs this program inside the first one):
 *
 *   test_eth_afpacket <ifa> <ifb> <netns b> <mac a> <mac b>
 *
 * The program forks: the child enters <netns b> (setns) before it touches softdpu, declares an
 * afpacket device on <ifb> and receives with a REGULAR receive queue (tasks re-submitted from
 * their callback); the parent stays in the first namespace, declares an afpacket device on <ifa>
 * and, once the child says its queue runs, sends NFRAMES Ethernet/IPv4/UDP frames of varied
 * sizes with a send queue. The child checks that exactly those frames arrive (told apart from any
 * stray kernel traffic by a magic in the payload), each once, in order, byte for byte, and the
 * queue's counters; the parent checks its send completions and counters. Both wait bounded; the
 * parent kills a child that overstays.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_eth_rxq.h"
#include "doca_eth_txq.h"
#include "doca_pe.h"
#include "softdpu/eth.h"
#include "softdpu/sdp_pkt.h"
#include "t_eth.h"
#include "t_helpers.h"
#include "t_nic.h"

#define NFRAMES 500
#define MAXF 1400
#define MAGIC 0x53445045u /* "SDPE" */
#define NB_TASKS 32
#define TX_SLOTS 32
#define RX_DEADLINE_S 20.0

static const char *g_ifa, *g_ifb, *g_nsb;
static uint8_t g_mac_a[6], g_mac_b[6];
static uint32_t g_pid_tag; /* the parent's pid: frames of another run are not ours */

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

/* Frame i: a to b, IPv4/UDP with valid checksums; payload MAGIC, the run's tag, i, a pattern. */
static uint32_t make_frame(uint8_t *f, uint32_t i)
{
	uint32_t len = 60 + (i * 263) % (MAXF - 60 + 1);
	struct sdp_pkt_udp4 h = {.src_ip = {10, 254, 0, 1},
				 .dst_ip = {10, 254, 0, 2},
				 .sport = (uint16_t)(40000 + i % 64),
				 .dport = 40999,
				 .ip_id = (uint16_t)i,
				 .ip_frag = SDP_PKT_IP4_DF};
	uint8_t *pl = f + SDP_PKT_UDP4_PAYLOAD;

	memcpy(h.dst_mac, g_mac_b, 6);
	memcpy(h.src_mac, g_mac_a, 6);
	sdp_pkt_udp4_build(f, len, &h);
	sdp_pkt_put32(pl, MAGIC);
	sdp_pkt_put32(pl + 4, g_pid_tag);
	sdp_pkt_put32(pl + 8, i);
	for (uint32_t k = 12; k < len - SDP_PKT_UDP4_PAYLOAD; k++)
		pl[k] = (uint8_t)(k * 3 + i * 7);
	sdp_pkt_csum_fill(f, len, 1, 1);
	return len;
}

static struct doca_devinfo **g_list;

/* Declare the afpacket device on iface, list it and open it (NULL after a reported failure). */
static struct doca_dev *open_afpacket(const char *iface, const char *name)
{
	struct doca_devinfo *di;
	struct doca_dev *dev = NULL;
	char decl[128];
	uint32_t n = 0;

	snprintf(decl, sizeof(decl), "afpacket:iface=%s,name=%s", iface, name);
	setenv("SOFTDPU_DEVICES", decl, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	unsetenv("SOFTDPU_ETH_OVERFLOW");
	t_log_capture();
	T_OK(doca_devinfo_create_list(&g_list, &n));
	if (g_list == NULL)
		return NULL;
	di = t_find_dev(g_list, n, name);
	if (di == NULL) {
		t_fail("afpacket device %s on %s is not listed; the log:\n%s", name, iface, t_log);
		return NULL;
	}
	T_OK(doca_dev_open(di, &dev));
	return dev;
}

/* ---- the receiving side (child, in netns b) ------------------------------------------------- */

struct rx_state {
	uint32_t next; /* our frames arrive in sending order */
	uint64_t ours;
	uint64_t stray; /* frames without our magic and tag (kernel traffic) */
	uint64_t wrong;
};

static void on_frame(struct t_eth_rx *rx, const uint8_t *f, size_t len)
{
	struct rx_state *s = rx->user;
	uint8_t want[MAXF];
	uint32_t i, wlen;

	if (len < 54 || sdp_pkt_get16(f + SDP_PKT_ETH_TYPE) != SDP_PKT_ETHERTYPE_IPV4 ||
	    f[SDP_PKT_UDP4_IP + SDP_PKT_IP4_PROTO] != SDP_PKT_PROTO_UDP ||
	    sdp_pkt_get32(f + 42) != MAGIC || sdp_pkt_get32(f + 46) != g_pid_tag) {
		s->stray++;
		return;
	}
	i = sdp_pkt_get32(f + 50);
	s->ours++;
	if (i != s->next) {
		if (s->wrong++ < 5)
			t_fail("frame %u arrived where frame %u was expected", i, s->next);
	} else {
		wlen = make_frame(want, i);
		if (len != wlen || memcmp(f, want, len) != 0) {
			if (s->wrong++ < 5)
				t_fail("frame %u: %zu bytes received differ from the %u sent", i,
				       len, wlen);
		}
	}
	s->next = i + 1;
}

static int child_main(int ready_fd)
{
	struct rx_state st = {0};
	struct sdp_eth_rxq_counters rc = {0};
	struct sdp_eth_port_counters pc = {0};
	struct doca_dev *dev = NULL;
	struct doca_pe *pe = NULL;
	struct t_eth_mem mem;
	struct t_eth_rx rx;
	char path[128], name[32];
	double end;
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", g_nsb);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
		t_fail("cannot enter netns %s: %s", g_nsb, strerror(errno));
		return 1;
	}
	close(fd);
	snprintf(name, sizeof(name), "eab%u", g_pid_tag);
	dev = open_afpacket(g_ifb, name);
	if (dev == NULL)
		goto out_list;
	T_OK(doca_pe_create(&pe));
	if (t_eth_mem_init(&mem, (size_t)NB_TASKS * T_ETH_SLOT, &dev, 1, NB_TASKS) != 0)
		goto out_mem;
	if (t_eth_rx_init(&rx, pe, dev, &mem, 0, NB_TASKS, T_ETH_SLOT) != 0)
		goto out_rx;
	rx.user = &st;
	rx.on_frame = on_frame;
	t_eth_rx_start(&rx);
	/* the queue runs: its socket sees what arrives from now on */
	if (write(ready_fd, "r", 1) != 1)
		t_fail("cannot tell the sender that the queue runs: %s", strerror(errno));
	close(ready_fd);
	ready_fd = -1;
	end = t_eth_now() + RX_DEADLINE_S;
	while (st.ours < NFRAMES && t_eth_now() < end)
		t_eth_step(pe);
	t_eth_progress_for(pe, 0.3); /* nothing more of ours may come */
	printf("receiver: %llu of our frames, %llu stray frames\n", (unsigned long long)st.ours,
	       (unsigned long long)st.stray);
	T_EQ_INT(st.ours, NFRAMES);
	T_EQ_INT(st.next, NFRAMES);
	T_EQ_INT(st.wrong, 0);
	T_EQ_INT(rx.errors, 0);
	T_EQ_INT(rx.resubmit_failed, 0);
	T_OK(sdp_eth_rxq_get_counters(rx.rxq, &rc));
	T_EQ_INT(rc.packets, st.ours + st.stray);
	T_EQ_INT(rc.drops, 0);
	T_EQ_INT(rc.overwrites, 0);
	T_EQ_INT(rc.truncated, 0);
	T_OK(sdp_eth_dev_get_port_counters(dev, &pc));
	T_EQ_INT(pc.rx_packets, st.ours + st.stray);
	T_EQ_INT(pc.rx_port_drops, 0);
	T_EQ_INT(pc.rx_unsteered, 0);
out_rx:
	t_eth_rx_fini(&rx);
out_mem:
	t_eth_mem_fini(&mem);
	T_OK(doca_pe_destroy(pe));
	T_OK(doca_dev_close(dev));
out_list:
	if (g_list != NULL)
		T_OK(doca_devinfo_destroy_list(g_list));
	if (ready_fd >= 0)
		close(ready_fd);
	return t_failures ? 1 : 0;
}

/* ---- the sending side (parent, in netns a) -------------------------------------------------- */

static void send_all(void)
{
	static uint8_t frame[MAXF];
	struct sdp_eth_txq_counters tc = {0};
	struct doca_dev *dev = NULL;
	struct doca_pe *pe = NULL;
	struct t_eth_mem mem;
	struct t_eth_tx tx;
	char name[32];
	uint64_t bytes = 0;

	snprintf(name, sizeof(name), "eaa%u", g_pid_tag);
	dev = open_afpacket(g_ifa, name);
	if (dev == NULL)
		goto out_list;
	T_OK(doca_pe_create(&pe));
	if (t_eth_mem_init(&mem, (size_t)TX_SLOTS * T_ETH_SLOT, &dev, 1, TX_SLOTS) != 0)
		goto out_mem;
	if (t_eth_tx_init(&tx, pe, dev, &mem, 0, TX_SLOTS) != 0)
		goto out_tx;
	for (uint32_t i = 0; i < NFRAMES; i++) {
		uint32_t len = make_frame(frame, i);

		bytes += len;
		if (t_eth_tx_send(&tx, frame, len) != 0)
			break;
	}
	T_TRUE(t_eth_progress_until(pe, &tx.completed, NFRAMES, 10));
	T_EQ_INT(tx.submitted, NFRAMES);
	T_EQ_INT(tx.completed, NFRAMES);
	T_EQ_INT(tx.errors, 0);
	T_OK(sdp_eth_txq_get_counters(tx.txq, &tc));
	T_EQ_INT(tc.packets, NFRAMES);
	T_EQ_INT(tc.bytes, bytes);
	T_EQ_INT(tc.errors, 0);
out_tx:
	t_eth_tx_fini(&tx);
out_mem:
	t_eth_mem_fini(&mem);
	T_OK(doca_pe_destroy(pe));
	T_OK(doca_dev_close(dev));
out_list:
	if (g_list != NULL)
		T_OK(doca_devinfo_destroy_list(g_list));
}

int main(int argc, char **argv)
{
	struct pollfd pfd;
	int pipefd[2], status = 0;
	pid_t child, w = 0;
	double end;
	char c;

	if (argc != 6 || parse_mac(argv[4], g_mac_a) != 0 || parse_mac(argv[5], g_mac_b) != 0) {
		fprintf(stderr, "usage: %s <ifa> <ifb> <netns b> <mac a> <mac b> (see the .sh)\n",
			argv[0]);
		return T_EXIT_FAIL;
	}
	if (getenv("SOFTDPU_PROVIDER_PATH") == NULL)
		T_SKIP("SOFTDPU_PROVIDER_PATH is not set (run through meson test)");
	g_ifa = argv[1];
	g_ifb = argv[2];
	g_nsb = argv[3];
	g_pid_tag = (uint32_t)getpid();
	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		perror("pipe2");
		return T_EXIT_FAIL;
	}
	fflush(NULL);
	child = fork();
	if (child < 0) {
		perror("fork");
		return T_EXIT_FAIL;
	}
	if (child == 0) {
		int r;

		close(pipefd[0]);
		r = child_main(pipefd[1]);
		fflush(NULL);
		_exit(r);
	}
	close(pipefd[1]);

	/* wait (bounded) until the receiver runs */
	pfd = (struct pollfd){.fd = pipefd[0], .events = POLLIN};
	if (poll(&pfd, 1, 10000) != 1 || read(pipefd[0], &c, 1) != 1) {
		t_fail("the receiver did not start its queue within 10 s");
	} else {
		send_all();
	}
	close(pipefd[0]);

	end = t_eth_now() + RX_DEADLINE_S + 10;
	while ((w = waitpid(child, &status, WNOHANG)) == 0 && t_eth_now() < end)
		usleep(20000);
	if (w == 0) {
		t_fail("the receiver did not finish in time: killed");
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
	} else if (w < 0) {
		t_fail("waitpid: %s", strerror(errno));
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		t_fail("the receiver failed (status 0x%x)", status);
	}
	T_DONE();
}
