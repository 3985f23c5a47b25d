/*
 * Integration: the service's network-facing port against bytes from someone who does not know
 * the secret, and its restart on the same port. Against a real softdpu-uromd:
 *   - the inputs that used to abort it inside UCX's connection manager (17, 24 and 40 zero
 *     bytes; an 8-byte little-endian length followed by more data) and frames that announce
 *     512 MiB or just more than a peer may send before authenticating: each connection is
 *     closed, the daemon lives on, and its peak memory stays small (nothing announced is
 *     allocated before authentication);
 *   - random byte strings (half of them behind a valid header start) for a bounded time;
 *   - idle connections that never speak (more than the pre-authentication limit): a real host
 *     still gets in;
 *   - a flood of rejected connections that never read, against a daemon with few descriptors
 *     (RLIMIT_NOFILE 48): the daemon neither spins (CPU over a quiet second) nor fills its log
 *     (warnings about unauthenticated peers are limited), and a host gets in afterwards;
 *   - afterwards `softdpu service status` (the CLI) and a real host context still work;
 *   - the TCP ports a worker process listens on (UCX's TCP transport, reached only through
 *     the worker address the service hands out after authentication) get the same junk: the
 *     worker lives on and still runs commands;
 *   - stop with a host connected, then a new daemon on the same port at once (SO_REUSEADDR:
 *     no "address in use" for a minute of TIME-WAIT).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "sdp_urom_proto.h"
#include "t_urom.h"
#include "t_uromd.h"
#include "worker_graph.h"

#define JUNK_SECONDS 3
#define IDLE_CONNS 80		 /* more than the service's pre-authentication limit (64) */
#define UROMD_PEER_WARN_LIMIT 10 /* the service's UROMD_PEER_WARN_PER_S */

static struct t_uromd d;

static int tcp_connect(uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		t_fail("connect to 127.0.0.1:%u: %s", port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* True when the peer closes the connection (EOF or reset) within timeout_ms; input dropped. */
static int closed_by_peer(int fd, int timeout_ms)
{
	int64_t deadline = t_now_ms() + timeout_ms;
	char buf[512];

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int64_t left = deadline - t_now_ms();
		ssize_t n;

		if (left <= 0)
			return 0;
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return 1;
		if (n < 0 && errno != EINTR)
			return 1;
	}
}

/* Send bytes on a fresh connection; expect the service to close it. */
static void expect_closed(const char *what, const void *bytes, size_t len)
{
	int fd = tcp_connect(d.port);

	if (fd < 0)
		return;
	if (send(fd, bytes, len, MSG_NOSIGNAL) != (ssize_t)len)
		t_fail("%s: send failed: %s", what, strerror(errno));
	if (!closed_by_peer(fd, 5000))
		t_fail("%s: the service did not close the connection within 5 s", what);
	close(fd);
	if (!t_uromd_alive(&d))
		t_fail("%s: the daemon died", what);
}

/* A header as the wire format lays it out (little-endian), with any body length. */
static void put_hdr(uint8_t *b, uint16_t type, uint32_t body_len)
{
	uint32_t magic = SDP_UROM_MAGIC;

	memset(b, 0, SDP_UROM_HDR_LEN);
	for (int i = 0; i < 4; i++) {
		b[i] = (uint8_t)(magic >> (8 * i));
		b[16 + i] = (uint8_t)(body_len >> (8 * i));
	}
	b[4] = SDP_UROM_PROTO_VERSION;
	b[6] = (uint8_t)type;
}

/* Peak resident memory of the daemon in KiB (VmHWM), -1 when unreadable. */
static long daemon_hwm_kib(void)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)d.pid);
	if (t_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "VmHWM:");
	return p != NULL ? strtol(p + 6, NULL, 10) : -1;
}

static void test_named_inputs(void)
{
	uint8_t zeros[40] = {0}, b[256];
	long hwm0 = daemon_hwm_kib(), hwm1;

	expect_closed("17 zero bytes", zeros, 17);
	expect_closed("24 zero bytes", zeros, 24);
	expect_closed("40 zero bytes", zeros, 40);
	/* An 8-byte little-endian length, then data. */
	memset(b, 0xab, sizeof(b));
	b[0] = 0x00;
	b[1] = 0x01;
	memset(b + 2, 0, 6);
	expect_closed("8-byte length + data", b, 72);
	/* A valid header start announcing 512 MiB, then some of it. */
	put_hdr(b, SDP_UROM_MSG_HELLO, 512u << 20);
	expect_closed("HELLO announcing 512 MiB", b, sizeof(b));
	put_hdr(b, SDP_UROM_MSG_SPAWN, 0xffffffffu);
	expect_closed("SPAWN announcing 4 GiB", b, sizeof(b));
	/* Just over what a peer may send before it has authenticated. */
	put_hdr(b, SDP_UROM_MSG_HELLO, 2048);
	expect_closed("HELLO of 2 KiB before authentication", b, sizeof(b));
	hwm1 = daemon_hwm_kib();
	if (hwm0 > 0 && hwm1 > 0 && hwm1 - hwm0 > 16 * 1024)
		t_fail("the daemon's peak memory grew by %ld KiB on junk", hwm1 - hwm0);
}

static void test_random_junk(void)
{
	int64_t end = t_now_ms() + JUNK_SECONDS * 1000;
	uint64_t rnd = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	static uint8_t buf[4096];
	long rounds = 0;

	while (t_now_ms() < end && t_failures == 0) {
		size_t len, i;
		int fd;

		rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
		len = 1 + (size_t)((rnd >> 33) % sizeof(buf));
		for (i = 0; i < len; i++) {
			rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
			buf[i] = (uint8_t)(rnd >> 56);
		}
		/* Half behind a real magic and version: the parser's deeper paths. */
		if ((rnd >> 20) & 1 && len >= 6) {
			uint32_t m = SDP_UROM_MAGIC;

			for (i = 0; i < 4; i++)
				buf[i] = (uint8_t)(m >> (8 * i));
			buf[4] = SDP_UROM_PROTO_VERSION;
			buf[5] = 0;
		}
		fd = tcp_connect(d.port);
		if (fd < 0)
			break;
		(void)send(fd, buf, len, MSG_NOSIGNAL);
		/* Our side closes: the service must drop the connection and its state. */
		close(fd);
		rounds++;
		if (rounds % 64 == 0 && !t_uromd_alive(&d)) {
			t_fail("the daemon died after %ld random inputs", rounds);
			return;
		}
	}
	printf("# %ld random inputs in %d s\n", rounds, JUNK_SECONDS);
	T_TRUE(rounds > 0);
	T_TRUE(t_uromd_alive(&d));
}

/* Connections that never speak cannot lock hosts out. */
static void test_idle_conns(void)
{
	int fds[IDLE_CONNS], n = 0;
	struct t_svc s;

	for (int i = 0; i < IDLE_CONNS; i++) {
		fds[n] = tcp_connect(d.port);
		if (fds[n] >= 0)
			n++;
	}
	T_EQ_INT(n, IDLE_CONNS);
	T_OK(t_svc_open(&s, 0));
	t_svc_close(&s);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	T_TRUE(t_uromd_alive(&d));
}

/* utime + stime of pid in clock ticks, -1 when unreadable. */
static long proc_cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (t_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (p == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (long)(ut + st);
}

/*
 * A daemon with 48 descriptors, flooded with connections that send a framed but malformed
 * HELLO (each is answered with REJECT and lingers) and never read: accept runs out of
 * descriptors. The daemon must not spin on its readable listener nor log each failure.
 */
static void test_flood_few_fds(void)
{
	enum {
		FLOOD = 200
	};
	struct rlimit old, lim = {.rlim_cur = 48, .rlim_max = 48};
	static struct t_uromd f;
	static int fds[FLOOD];
	uint8_t hello[SDP_UROM_HDR_LEN];
	long cpu0, cpu1, lines0, lines1, hz = sysconf(_SC_CLK_TCK);
	int64_t t0;
	struct t_svc s;
	int n = 0;

	T_EQ_INT(getrlimit(RLIMIT_NOFILE, &old), 0);
	lim.rlim_max = old.rlim_max;
	T_EQ_INT(setrlimit(RLIMIT_NOFILE, &lim), 0);
	if (t_uromd_start(&f, NULL) != 0) {
		setrlimit(RLIMIT_NOFILE, &old);
		t_fail("daemon with 48 descriptors did not start");
		return;
	}
	T_EQ_INT(setrlimit(RLIMIT_NOFILE, &old), 0);
	put_hdr(hello, SDP_UROM_MSG_HELLO, 0);
	for (int i = 0; i < FLOOD; i++) {
		struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(f.port)};
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (fd < 0)
			break;
		/* Non-blocking: the backlog fills while the daemon cannot accept. */
		(void)connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		(void)send(fd, hello, sizeof(hello), MSG_NOSIGNAL);
		fds[n++] = fd;
	}
	/* Let the daemon chew on it, then watch one quiet second. */
	t0 = t_now_ms();
	while (t_now_ms() - t0 < 500)
		t_sleep_ms(50);
	cpu0 = proc_cpu_ticks(f.pid);
	lines0 = t_uromd_log_count(&f, "\n");
	t0 = t_now_ms();
	while (t_now_ms() - t0 < 1000)
		t_sleep_ms(50);
	cpu1 = proc_cpu_ticks(f.pid);
	lines1 = t_uromd_log_count(&f, "\n");
	printf("# flood of %d: daemon CPU %ld ticks (of %ld) and %ld log lines in the quiet "
	       "second\n",
	       n, cpu1 - cpu0, hz, lines1 - lines0);
	T_TRUE(cpu0 >= 0 && cpu1 >= 0);
	if (cpu1 - cpu0 > hz / 2)
		t_fail("the daemon spun: %ld of %ld ticks in one second", cpu1 - cpu0, hz);
	if (lines1 - lines0 > 4 * UROMD_PEER_WARN_LIMIT)
		t_fail("the daemon logged %ld lines in one second", lines1 - lines0);
	T_TRUE(t_uromd_alive(&f));
	for (int i = 0; i < n; i++)
		close(fds[i]);
	/* Descriptors come back: a real host gets in (bounded by the service's own timers). */
	{
		doca_error_t st = DOCA_ERROR_NOT_CONNECTED;

		t0 = t_now_ms();
		while (st != DOCA_SUCCESS && t_now_ms() - t0 < 5000) {
			st = t_svc_open(&s, 0);
			if (st != DOCA_SUCCESS) {
				t_svc_close(&s);
				t_sleep_ms(100);
			}
		}
		T_OK(st);
		t_svc_close(&s);
	}
	t_uromd_stop(&f);
	t_uromd_export_env(&d); /* the first daemon's address for what follows */
}

/* `softdpu service status --json` against the daemon: exit 0 and "running": true. */
static void test_cli_status(void)
{
	const char *cli = getenv("SDP_TEST_CLI");
	char cmd[4 * PATH_MAX], out[8192];
	FILE *p;
	size_t n;
	int rc;

	if (cli == NULL) {
		t_fail("SDP_TEST_CLI is not set");
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "'%s' service status --json --run-dir '%s' --secret-file '%s' --addr %s 2>&1", cli,
		 d.run_dir, d.secret_file, d.addr);
	p = popen(cmd, "r");
	if (p == NULL) {
		t_fail("popen %s: %s", cli, strerror(errno));
		return;
	}
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	rc = pclose(p);
	if (rc != 0 || strstr(out, "\"running\":true") == NULL)
		t_fail("softdpu service status: exit %d, output:\n%s", rc, out);
}

static void test_worker_ports(struct t_svc *s)
{
	struct t_worker_cfg c = {.id = DOCA_UROM_WORKER_ID_ANY};
	static const uint8_t zeros[40];
	struct doca_urom_worker *w = NULL;
	static struct t_loop loop;
	struct t_listener ls[16];
	pid_t pid;
	int n;

	T_OK(t_svc_find_graph(s));
	c.plugins = s->graph_id;
	T_OK(t_worker_start(s, s->pe, &c, &w));
	if (t_uromd_worker_pids(&d, &pid, 1) != 1) {
		t_fail("no worker process");
		t_worker_close(s, s->pe, w);
		return;
	}
	n = t_proc_tcp_listeners(pid, ls, 16);
	printf("# worker %d listens on %d TCP port(s)\n", (int)pid, n);
	for (int i = 0; i < n; i++) {
		static const size_t lens[] = {17, 24, 40};

		for (size_t k = 0; k < 3; k++) {
			int fd = tcp_connect(ls[i].port);

			if (fd < 0)
				continue;
			(void)send(fd, zeros, lens[k], MSG_NOSIGNAL);
			close(fd);
		}
	}
	/* The worker still works for its host. */
	t_loop_init(&loop, 4);
	T_OK(t_loop_one(&loop, w, s->pe, NULL, 0));
	T_TRUE(t_pid_alive(pid));
	t_loop_fini(&loop);
	t_worker_close(s, s->pe, w);
}

static void test_restart_same_port(void)
{
	char listen[32];
	const char *args[] = {"--listen", listen, NULL};
	struct t_svc s;
	uint16_t port;

	/* A host is connected when the service stops: the service closes first (TIME-WAIT). */
	T_OK(t_svc_open(&s, 0));
	port = d.port;
	T_EQ_INT(t_uromd_stop(&d), 0);
	t_svc_close(&s);
	snprintf(listen, sizeof(listen), "127.0.0.1:%u", port);
	if (t_uromd_start(&d, args) != 0) {
		t_fail("restart on port %u failed", port);
		return;
	}
	T_EQ_INT(d.port, port);
	T_OK(t_svc_open(&s, 0));
	t_svc_close(&s);
}

int main(void)
{
	struct t_svc s;

	if (t_uromd_start(&d, NULL) != 0) {
		t_fail("daemon did not start");
		T_DONE();
	}
	test_named_inputs();
	test_random_junk();
	test_idle_conns();
	test_flood_few_fds();
	test_cli_status();
	/* A real host after all that, and its worker's own ports. */
	T_OK(t_svc_open(&s, 0));
	test_worker_ports(&s);
	t_svc_close(&s);
	test_restart_same_port();
	if (t_failures != 0)
		t_print_log_tail("daemon log", d.log_file, 4000);
	t_uromd_stop(&d);
	T_DONE();
}
