/*
 * libFuzzer target for the service's own listener and handshake (issue 15): softdpu-uromd's
 * connection code (conn.c) with its request handlers (spawn.c, status.c) linked for real, on a
 * loopback listener of its own, driven the way the daemon's event loop drives it. Each input is
 * one host connection: accepted by uromd_conn_accept, then fed the input's bytes, each chunk
 * followed by uromd_conn_event; the replies are read back on the host's side.
 *
 * Input: byte 0 picks where the bytes go in (bits 0-1) and how (bits 2-4):
 *   mode 0  right after the accept (an unauthenticated peer's first bytes);
 *   mode 1  after a valid HELLO (the bytes stand in for the AUTH);
 *   mode 2  after the whole handshake (HELLO, CHALLENGE, AUTH with the right MAC, WELCOME):
 *           SPAWN / RELEASE / GID_QUERY / STATUS_QUERY and anything else an authenticated host
 *           may send, against three fake workers: a ready one of this uid (attach), a ready one
 *           of another uid (refused), a starting one; a SPAWN of a new worker goes as far as
 *           fork, which this target makes fail;
 *   mode 3  as 2, the HELLO asking for at most one worker;
 *   bit 2   the bytes in pieces of 1 to 16 bytes (a frame split over reads) instead of whole;
 *   bit 3   the handshake deadline passes before the host closes;
 *   bit 4   the host closes before the service has read everything.
 * Checked beyond "no crash" (ASan + UBSan): before the handshake completes the service answers
 * only CHALLENGE, REJECT or VERSION_REJECT (an unauthenticated peer learns nothing: no WELCOME,
 * no worker address or token, no status); a REJECT's status is an error; every reply is a
 * well-formed UROM message; after the host closes, every connection, its pre-auth count and
 * its owners and "gone" records are gone, no file descriptor is left open, and no log file of a
 * failed spawn stays in the run directory.
 *
 * With -DSDP_FUZZ_MAIN this file has its own main() (tests/fuzz/fuzz_main.h): the replay test,
 * whose generator makes well-formed requests too.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "doca_log.h"
#include "uromd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* spawn.c's fork: always fails here (ENOMEM, as the kernel says when it cannot). */
pid_t __wrap_fork(void);
pid_t __wrap_fork(void)
{
	errno = ENOMEM;
	return -1;
}

/* main.c's clock, which this target does not link. */
uint64_t uromd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

#define FZ_NO_PID 0x7ffffff0 /* above any pid_max: kill() of it is ESRCH */
#define FZ_MAX_ROUNDS 4096

static struct uromd fz_d;
static struct uromd_plugin fz_plugins[2];
static int fz_ready;
static int fz_worker_peer[3] = {-1, -1, -1};

static void fz_die(const char *what)
{
	fprintf(stderr, "fuzz_uromd_conn: %s\n", what);
	abort();
}

static void fz_cleanup(void)
{
	if (fz_d.listen_fd >= 0)
		close(fz_d.listen_fd);
	rmdir(fz_d.run_dir);
}

static void fz_workers_free(void)
{
	struct uromd_worker *w = fz_d.workers, *next;

	for (; w != NULL; w = next) {
		next = w->next;
		if (w->ctrl_fd >= 0)
			close(w->ctrl_fd);
		free(w->owners);
		free(w->addr);
		free(w->log_path);
		free(w->stats);
		free(w);
	}
	fz_d.workers = NULL;
	for (int i = 0; i < 3; i++)
		if (fz_worker_peer[i] >= 0) {
			close(fz_worker_peer[i]);
			fz_worker_peer[i] = -1;
		}
}

static void fz_worker_add(int i, uint64_t id, uint32_t uid, enum uromd_worker_state state)
{
	struct uromd_worker *w = calloc(1, sizeof(*w));
	int sv[2];

	if (w == NULL ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0)
		fz_die("cannot make a fake worker");
	w->id = id;
	w->gid = 7;
	w->pid = FZ_NO_PID;
	w->plugins = fz_plugins[0].id | (i == 0 ? fz_plugins[1].id : 0);
	w->uid = uid;
	w->ctrl_fd = sv[0];
	fz_worker_peer[i] = sv[1];
	w->ready_seen = state == UROMD_WORKER_READY;
	w->state = state;
	w->heard_ms = uromd_now_ms();
	if (state == UROMD_WORKER_READY) {
		w->addr = malloc(16);
		if (w->addr == NULL)
			fz_die("out of memory");
		memcpy(w->addr, "fake-ucp-address", 16);
		w->addr_len = 16;
	}
	w->next = fz_d.workers;
	fz_d.workers = w;
}

static void fz_workers_reset(void)
{
	fz_workers_free();
	fz_worker_add(0, 5, (uint32_t)getuid(), UROMD_WORKER_READY);
	fz_worker_add(1, 6, (uint32_t)getuid() == 65534 ? 65533 : 65534, UROMD_WORKER_READY);
	fz_worker_add(2, 9, (uint32_t)getuid(), UROMD_WORKER_STARTING);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	const char *tmp = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	if (fz_ready)
		return 0;
	if (getenv("SDP_FUZZ_VERBOSE") == NULL) {
		(void)doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
		(void)doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_DISABLE);
	}
	memset(&fz_d, 0, sizeof(fz_d));
	fz_d.listen_fd = -1;
	snprintf(fz_d.run_dir, sizeof(fz_d.run_dir), "%s/softdpu-fuzz-uromd.XXXXXX",
		 tmp ? tmp : "/tmp");
	if (mkdtemp(fz_d.run_dir) == NULL)
		fz_die("mkdtemp");
	atexit(fz_cleanup);
	/* an executable that exists: spawn of a new worker goes on to fork */
	snprintf(fz_d.worker_bin, sizeof(fz_d.worker_bin), "/bin/true");
	fz_d.cfg.listen = (char *)"127.0.0.1:0";
	fz_d.cfg.listen_host = (char *)"127.0.0.1";
	fz_d.plugin_list = (char *)"/nonexistent/plugins";
	fz_d.plugin_list_from = "the fuzz target";
	fz_d.cfg.max_msg_size = UROMD_DEFAULT_MSG_SIZE;
	fz_d.cfg.max_workers = 8;
	fz_d.cfg.log_level = 30;
	sdp_urom_random(fz_d.secret, sizeof(fz_d.secret));
	for (int c = 0; c < 8; c++) {
		fz_d.cpuset.bits[0] |= 1ull << c;
		fz_d.present.bits[0] |= 1ull << c;
	}
	fz_plugins[0].id = 1;
	fz_plugins[0].version = 1;
	snprintf(fz_plugins[0].name, sizeof(fz_plugins[0].name), "worker_fuzz_a");
	fz_plugins[1].id = 2;
	fz_plugins[1].version = 3;
	snprintf(fz_plugins[1].name, sizeof(fz_plugins[1].name), "worker_fuzz_b");
	fz_d.scan.plugins = fz_plugins;
	fz_d.scan.num_plugins = 2;
	fz_d.start_ms = uromd_now_ms();
	fz_d.next_dest_id = 1;
	fz_d.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (fz_d.epfd < 0)
		fz_die("epoll_create1");
	if (sdp_urom_chan_listen((struct sockaddr *)&sa, sizeof(sa), &fz_d.listen_fd,
				 &fz_d.bound_port) != DOCA_SUCCESS)
		fz_die("cannot listen on loopback");
	fz_ready = 1;
	return 0;
}

/* The host's side: its channel and what it has learnt. */
struct fz_host {
	struct sdp_urom_chan chan;
	int authed; /* WELCOME seen */
	int challenged;
	uint8_t client_nonce[SDP_UROM_NONCE_LEN];
	uint8_t server_nonce[SDP_UROM_NONCE_LEN];
	uint8_t svc_mac[SDP_UROM_MAC_LEN];
	int replies;
};

static int fz_host_frame(void *arg, const uint8_t *data, size_t len)
{
	struct fz_host *h = arg;
	struct sdp_urom_msg msg;

	if (sdp_urom_msg_unpack(data, len, &msg) != DOCA_SUCCESS)
		fz_die("the service sent a malformed message");
	h->replies++;
	switch (msg.hdr.type) {
	case SDP_UROM_MSG_CHALLENGE:
		if (h->authed)
			fz_die("CHALLENGE after WELCOME");
		h->challenged = 1;
		memcpy(h->server_nonce, msg.u.challenge.nonce, SDP_UROM_NONCE_LEN);
		memcpy(h->svc_mac, msg.u.challenge.mac, SDP_UROM_MAC_LEN);
		return 0;
	case SDP_UROM_MSG_REJECT:
		if (msg.u.reject.status == DOCA_SUCCESS || msg.u.reject.status > 31)
			fz_die("REJECT with a status that is not an error");
		return 0;
	case SDP_UROM_MSG_VERSION_REJECT:
		return 0;
	case SDP_UROM_MSG_WELCOME:
		if (h->authed || !h->challenged)
			fz_die("WELCOME out of turn");
		h->authed = 1;
		return 0;
	case SDP_UROM_MSG_SPAWN_REPLY:
	case SDP_UROM_MSG_RELEASE_REPLY:
	case SDP_UROM_MSG_GID_REPLY:
	case SDP_UROM_MSG_STATUS_REPLY:
		if (!h->authed)
			fz_die("an unauthenticated peer got an answer only hosts get");
		if (msg.hdr.type == SDP_UROM_MSG_SPAWN_REPLY && msg.u.spawn_reply.status != 0 &&
		    msg.u.spawn_reply.worker_addr.len != 0)
			fz_die("a refused SPAWN carries a worker address");
		return 0;
	default:
		fz_die("the service sent a message type it never sends to hosts");
	}
	return 0;
}

/* Read whatever the service sent (without waiting). */
static void fz_host_read(struct fz_host *h)
{
	int made = 0;

	(void)sdp_urom_chan_read(&h->chan, fz_host_frame, h, &made);
}

static struct uromd_conn *fz_find_conn(void)
{
	return fz_d.conns;
}

/*
 * Let the service handle what its socket has, as its (level-triggered) event loop would: the
 * events poll reports now, until there are none.
 */
static void fz_service_round(struct uromd_conn *conn)
{
	for (int i = 0; i < 64 && !conn->peer_failed; i++) {
		struct pollfd p = {.fd = conn->chan.fd,
				   .events = (short)(POLLIN | (conn->want_out ? POLLOUT : 0))};
		uint32_t ev = 0;

		if (poll(&p, 1, 0) <= 0)
			return;
		if (p.revents & POLLIN)
			ev |= EPOLLIN;
		if (p.revents & POLLOUT)
			ev |= EPOLLOUT;
		if (p.revents & POLLHUP)
			ev |= EPOLLHUP;
		if (p.revents & POLLERR)
			ev |= EPOLLERR;
		if (ev == 0)
			return;
		uromd_conn_event(&fz_d, conn, ev);
	}
}

static void fz_host_send(struct fz_host *h, struct uromd_conn *conn, const struct sdp_urom_msg *m)
{
	if (sdp_urom_chan_send(&h->chan, m) != DOCA_SUCCESS ||
	    sdp_urom_chan_flush(&h->chan) != DOCA_SUCCESS)
		fz_die("the host cannot send");
	fz_service_round(conn);
	fz_host_read(h);
}

static void fz_handshake(struct fz_host *h, struct uromd_conn *conn, int mode)
{
	struct sdp_urom_msg m;

	memset(&m, 0, sizeof(m));
	m.hdr.type = SDP_UROM_MSG_HELLO;
	m.hdr.req_id = 1;
	m.u.hello.min_version = SDP_UROM_PROTO_VERSION;
	m.u.hello.max_version = SDP_UROM_PROTO_VERSION;
	sdp_urom_random(h->client_nonce, sizeof(h->client_nonce));
	memcpy(m.u.hello.nonce, h->client_nonce, SDP_UROM_NONCE_LEN);
	m.u.hello.pid = (uint32_t)getpid();
	m.u.hello.uid = (uint32_t)getuid() + 1; /* a lie the kernel's table corrects */
	m.u.hello.hostname.data = (const uint8_t *)"fuzz\x01host";
	m.u.hello.hostname.len = 10;
	m.u.hello.max_workers = mode == 3 ? 1 : 0;
	fz_host_send(h, conn, &m);
	if (!h->challenged || conn->state != UROMD_CONN_AUTH)
		fz_die("no CHALLENGE for a valid HELLO");
	if (sdp_urom_auth_verify(fz_d.secret, "svc", h->client_nonce, h->server_nonce,
				 h->svc_mac) != DOCA_SUCCESS)
		fz_die("the CHALLENGE's MAC is wrong");
	if (mode < 2)
		return;
	memset(&m, 0, sizeof(m));
	m.hdr.type = SDP_UROM_MSG_AUTH;
	m.hdr.req_id = 2;
	sdp_urom_auth_mac(fz_d.secret, "host", h->server_nonce, h->client_nonce, m.u.auth.mac);
	fz_host_send(h, conn, &m);
	if (!h->authed || conn->state != UROMD_CONN_READY)
		fz_die("no WELCOME for the right AUTH");
	/* the uid is the kernel's word for a local peer, not the HELLO's */
	if (!conn->uid_verified || conn->uid != (uint32_t)getuid())
		fz_die("the service did not find this host's uid in the kernel's socket table");
}

/* The lowest free descriptor: the same before and after an input, or one was left open. */
static int fz_low_fd(void)
{
	int fd = dup(0);

	if (fd < 0)
		fz_die("dup");
	close(fd);
	return fd;
}

static void fz_check_clean(int low_fd)
{
	DIR *dir;
	struct dirent *de;

	if (fz_d.conns != NULL || fz_d.num_conns != 0 || fz_d.num_preauth != 0)
		fz_die("a connection outlived its close");
	if (fz_d.num_gone != 0 || fz_d.gone != NULL)
		fz_die("a gone-worker record outlived its connection");
	for (struct uromd_worker *w = fz_d.workers; w != NULL; w = w->next)
		if (w->num_owners != 0)
			fz_die("a worker still has an owner after its host closed");
	dir = opendir(fz_d.run_dir);
	if (dir == NULL)
		fz_die("opendir(run dir)");
	while ((de = readdir(dir)) != NULL)
		if (de->d_name[0] != '.')
			fz_die("a failed spawn left its log file in the run directory");
	closedir(dir);
	fz_workers_free();
	if (fz_low_fd() != low_fd)
		fz_die("a file descriptor was left open");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct fz_host h;
	struct uromd_conn *conn;
	int fd, mode, pieces, deadline, early_close, low_fd;
	size_t off = 0, piece_seed = 0;

	LLVMFuzzerInitialize(NULL, NULL);
	if (size < 1 || size > 65536)
		return 0;
	mode = data[0] & 3;
	pieces = (data[0] >> 2) & 1;
	deadline = (data[0] >> 3) & 1;
	early_close = (data[0] >> 4) & 1;
	data++;
	size--;
	low_fd = fz_low_fd();
	fz_workers_reset();

	sa.sin_port = htons(fz_d.bound_port);
	/*
	 * Loopback ports are shared with every other process of the machine (parallel fuzz
	 * runs): a moment without a free one (EADDRNOTAVAIL) is waited out, bounded.
	 */
	for (int tries = 0;; tries++) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			fz_die("socket");
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		/*
		 * EINTR (libFuzzer's own timer signals): the connection goes on in the kernel, so
		 * a new socket would leave this one in the listener's queue for the next input;
		 * wait for it instead (POSIX), bounded.
		 */
		if (errno == EINTR) {
			struct pollfd cp = {.fd = fd, .events = POLLOUT};
			int soerr = 0, r = 0;
			socklen_t sl = sizeof(soerr);

			for (int w = 0; w < 10000 && r <= 0; w++)
				r = poll(&cp, 1, 1);
			if (r > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 &&
			    soerr == 0)
				break;
			errno = soerr != 0 ? soerr : ETIMEDOUT;
		}
		if ((errno != EADDRNOTAVAIL && errno != EAGAIN) || tries == 1000) {
			fprintf(stderr, "fuzz_uromd_conn: connect: %s\n", strerror(errno));
			fz_die("cannot connect to the listener");
		}
		close(fd);
		poll(NULL, 0, 1);
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)
		fz_die("fcntl");
	memset(&h, 0, sizeof(h));
	if (sdp_urom_chan_init(&h.chan, fd, 1u << 20) != DOCA_SUCCESS)
		fz_die("chan_init");
	/*
	 * connect() returns once the SYN-ACK is in; the listener may see the final ACK a moment
	 * later when the machine is busy (softirq work deferred): wait for it, bounded, as the
	 * service's epoll loop would.
	 */
	{
		struct pollfd lp = {.fd = fz_d.listen_fd, .events = POLLIN};
		int waited, r = 0;

		/* accept again while nothing came: an interrupted accept loses nothing */
		for (waited = 0; waited < 10000 && fz_find_conn() == NULL; waited++) {
			r = poll(&lp, 1, 1);
			if (r < 0 && errno != EINTR)
				break;
			if (r > 0)
				uromd_conn_accept(&fz_d);
		}
		conn = fz_find_conn();
		if (conn == NULL || conn->next != NULL || fz_d.num_preauth != 1) {
			fprintf(stderr,
				"fuzz_uromd_conn: after %d ms: listener readable %d, %zu "
				"connections, %zu before authentication, accepting paused %d\n",
				waited, r, fz_d.num_conns, fz_d.num_preauth,
				fz_d.listen_resume_ms != 0);
			fz_die("the connection was not accepted");
		}
	}
	if (mode >= 1)
		fz_handshake(&h, conn, mode);

	/* the input, whole or in pieces, each followed by the service's turn */
	for (int round = 0; off < size && round < FZ_MAX_ROUNDS; round++) {
		size_t n = size - off;
		ssize_t w;

		if (conn->peer_failed || conn->state == UROMD_CONN_DOOMED)
			break;
		if (pieces) {
			piece_seed = piece_seed * 31 + data[off];
			n = n < 1 + piece_seed % 16 ? n : 1 + piece_seed % 16;
		}
		w = send(fd, data + off, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				break; /* the service closed on us */
			w = 0;
		}
		off += (size_t)w;
		if (early_close && off >= size / 2)
			break;
		fz_service_round(conn);
		fz_host_read(&h);
	}
	if (!early_close) {
		fz_service_round(conn);
		fz_host_read(&h);
	}
	if (deadline && !conn->peer_failed) {
		(void)uromd_conn_timers(&fz_d, uromd_now_ms() + UROMD_HANDSHAKE_MS + 1);
		if (fz_d.conns != NULL)
			fz_service_round(fz_d.conns);
	}
	/*
	 * The host goes: its FIN first (the service reads the end of the stream), then a reset
	 * (no TIME_WAIT left behind, which would make the service's reading of the kernel's
	 * socket table slower with every input); the service's timers collect the connection.
	 */
	if (fz_d.conns != NULL)
		fz_service_round(fz_d.conns);
	if (fz_d.conns != NULL && fz_d.conns->state != UROMD_CONN_DOOMED) {
		/*
		 * (a doomed connection sends, or will send, the service's own FIN: after both
		 * FINs the host's socket would sit in TIME_WAIT, and a long run would run out of
		 * loopback ports)
		 */
		(void)shutdown(fd, SHUT_WR);
		fz_service_round(fz_d.conns);
	}
	{
		struct linger lg = {.l_onoff = 1, .l_linger = 0};

		(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	sdp_urom_chan_fini(&h.chan);
	if (fz_d.conns != NULL) {
		struct linger lg = {.l_onoff = 1, .l_linger = 0};

		fz_service_round(fz_d.conns);
		/* the service's end too, when it shut its side first */
		if (fz_d.conns->chan.fd >= 0)
			(void)setsockopt(fz_d.conns->chan.fd, SOL_SOCKET, SO_LINGER, &lg,
					 sizeof(lg));
	}
	(void)uromd_conn_timers(&fz_d, uromd_now_ms() + UROMD_LINGER_MS + 1);
	if (fz_d.conns != NULL)
		fz_die("the service kept a connection its host had closed");
	fz_check_clean(low_fd);
	return 0;
}

#ifdef SDP_FUZZ_MAIN
#include "fuzz_main.h"

/* A frame of m (header and body), appended at buf + *pos. */
static void gen_msg(uint8_t *buf, size_t cap, size_t *pos, struct sdp_urom_msg *m)
{
	size_t n = sdp_urom_msg_packed_size(m);

	if (*pos + n > cap)
		return;
	if (sdp_urom_msg_pack(m, buf + *pos, cap - *pos, &n) == DOCA_SUCCESS)
		*pos += n;
}

/* Mostly well-formed requests of an authenticated host, sometimes flipped bytes or junk. */
static size_t fuzz_generate(uint8_t *buf, size_t cap)
{
	static const char *const envs[] = {"A=1", "LD_PRELOAD=/x", "UCX_TLS=tcp", "=x", "B"};
	size_t pos = 1;
	int n = 1 + (int)(fuzz_rnd() % 6);

	buf[0] = (uint8_t)fuzz_rnd();
	for (int i = 0; i < n; i++) {
		struct sdp_urom_msg m;
		struct sdp_urom_bytes env[2];

		memset(&m, 0, sizeof(m));
		m.hdr.req_id = fuzz_rnd() % 100;
		switch (fuzz_rnd() % 6) {
		case 0:
		case 1:
			m.hdr.type = SDP_UROM_MSG_SPAWN;
			m.u.spawn.worker_id = (uint64_t[]){5, 6, 9, 77, UINT64_MAX}[fuzz_rnd() % 5];
			m.u.spawn.gid = (uint32_t)(fuzz_rnd() % 9);
			m.u.spawn.plugins = fuzz_rnd() % 5;
			m.u.spawn.has_cpuset = (uint32_t)(fuzz_rnd() % 2);
			m.u.spawn.cpuset[0] = fuzz_rnd() % 1024;
			m.u.spawn.num_env = (uint32_t)(fuzz_rnd() % 3);
			for (uint32_t k = 0; k < m.u.spawn.num_env; k++) {
				const char *e = envs[fuzz_rnd() % 5];

				env[k].data = (const uint8_t *)e;
				env[k].len = (uint32_t)strlen(e);
				m.u.spawn.env[k] = env[k];
			}
			break;
		case 2:
			m.hdr.type = SDP_UROM_MSG_RELEASE;
			m.u.release.worker_id = (uint64_t[]){5, 6, 9, 77}[fuzz_rnd() % 4];
			m.u.release.dest_id = fuzz_rnd() % 4;
			break;
		case 3:
			m.hdr.type = SDP_UROM_MSG_GID_QUERY;
			m.u.gid_query.gid = (uint32_t)(fuzz_rnd() % 9);
			break;
		case 4:
			m.hdr.type = SDP_UROM_MSG_STATUS_QUERY;
			break;
		default:
			m.hdr.type = (uint16_t)(1 + fuzz_rnd() % 70);
			break;
		}
		gen_msg(buf, cap, &pos, &m);
	}
	if (fuzz_rnd() % 4 == 0 && pos > 1)
		buf[1 + fuzz_rnd() % (pos - 1)] ^= (uint8_t)(1u << (fuzz_rnd() % 8));
	if (fuzz_rnd() % 8 == 0)
		pos = 1 + fuzz_rnd() % pos;
	return pos;
}
#endif
