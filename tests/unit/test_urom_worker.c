/*
 * softdpu-urom-worker as a process: the test plays the service on the control socketpair
 * (SW_READY, SW_ADD_HOST, SW_DEL_HOST, SW_EXIT) and a host over UCP (W_CONNECT with a good and
 * a bad token, W_CMD loopbacks through worker_graph.so, commands for a plugin the worker does not
 * run, malformed commands, a foreign protocol version, several commands in one active message
 * and one with a torn header behind a whole command), then checks how the worker exits: after
 * SW_EXIT once no host remains, when the control socket closes, and at start-up when a plugin
 * cannot be loaded.
 *
 * usage: test_urom_worker <softdpu-urom-worker> <worker_graph.so> <wrong_api_version.so>
 *                         <urom_sparse_plugin.so>
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "doca_urom_plugin.h"
#include "sdp_ucx.h"
#include "sdp_urom_proto.h"
#include "t_helpers.h"
#include "worker_graph.h"

#define WAIT_MS 10000
#define GRAPH_ID 0x2ull
#define SPARSE_ID 0x4ull
#define MSG_SIZE 4096

static const char *worker_bin, *graph_so, *bad_so, *sparse_so;
static const char *extra_plugin_arg; /* a second PATH:ID for the next spawn, or NULL */

/* ---- the worker process and its control socket ---- */

/*
 * True when /proc/<pid>/cmdline holds the argument want exactly: the worker must leave its
 * argv intact, so ps shows each plugin as PATH:ID.
 */
static int cmdline_has_arg(pid_t pid, const char *want)
{
	static char buf[65536];
	char path[64];
	size_t len = 0, off;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	for (off = 0; off < len; off += strlen(buf + off) + 1)
		if (strcmp(buf + off, want) == 0)
			return 1;
	return 0;
}

struct proc {
	pid_t pid;
	int ctrl;   /* our end of the socketpair */
	int reaped; /* waitpid collected it */
};

static int spawn_worker(struct proc *p, const char *plugin_arg, const char *msg_size)
{
	char fd_arg[16];
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0) {
		t_fail("socketpair: %m");
		return -1;
	}
	(void)fcntl(sv[0], F_SETFD, FD_CLOEXEC);
	p->reaped = 0;
	p->pid = fork();
	if (p->pid < 0) {
		t_fail("fork: %m");
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (p->pid == 0) {
		snprintf(fd_arg, sizeof(fd_arg), "%d", sv[1]);
		execl(worker_bin, worker_bin, "--ctrl-fd", fd_arg, "--worker-id", "7",
		      "--max-msg-size", msg_size, "-l", "debug", plugin_arg, extra_plugin_arg,
		      (char *)NULL);
		fprintf(stderr, "exec %s: %m\n", worker_bin);
		_exit(127);
	}
	close(sv[1]);
	p->ctrl = sv[0];
	return 0;
}

/* Wait (bounded, sleeping) for the worker to exit; its wait status, or -1 on timeout. */
static int wait_exit(struct proc *p, int timeout_ms)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = 10 * 1000 * 1000};
	int wstatus, waited;

	for (waited = 0;; waited += 10) {
		if (waitpid(p->pid, &wstatus, WNOHANG) == p->pid) {
			p->reaped = 1;
			return wstatus;
		}
		if (waited >= timeout_ms)
			return -1;
		nanosleep(&ts, NULL);
	}
}

static void kill_worker(struct proc *p)
{
	if (!p->reaped && wait_exit(p, 0) == -1) {
		kill(p->pid, SIGKILL);
		(void)wait_exit(p, WAIT_MS);
	}
}

static int ctrl_send(struct proc *p, const struct sdp_urom_msg *msg)
{
	uint8_t buf[1024];
	size_t len = 0;

	T_OK(sdp_urom_msg_pack(msg, buf, sizeof(buf), &len));
	if (send(p->ctrl, buf, len, MSG_NOSIGNAL) != (ssize_t)len) {
		t_fail("send on the control socket: %m");
		return -1;
	}
	return 0;
}

/* Receive one control message into buf (unpacked pointers point into it). */
static int ctrl_recv(struct proc *p, struct sdp_urom_msg *msg, uint8_t *buf, size_t cap)
{
	struct pollfd pfd = {.fd = p->ctrl, .events = POLLIN};
	ssize_t n;

	if (poll(&pfd, 1, WAIT_MS) != 1) {
		t_fail("no control message from the worker within %d ms", WAIT_MS);
		return -1;
	}
	n = recv(p->ctrl, buf, cap, 0);
	if (n <= 0) {
		t_fail("control socket: recv returned %zd (%m)", n);
		return -1;
	}
	if (sdp_urom_msg_unpack(buf, (size_t)n, msg) != DOCA_SUCCESS) {
		t_fail("malformed control message of %zd bytes", n);
		return -1;
	}
	return 0;
}

static void add_host(struct proc *p, uint64_t dest_id, uint8_t fill)
{
	struct sdp_urom_msg msg;

	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_SW_ADD_HOST;
	msg.u.sw_add_host.dest_id = dest_id;
	memset(msg.u.sw_add_host.token, fill, SDP_UROM_TOKEN_LEN);
	(void)ctrl_send(p, &msg);
}

static void simple_ctrl(struct proc *p, uint16_t type, uint64_t dest_id)
{
	struct sdp_urom_msg msg;

	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = type;
	msg.u.sw_del_host.dest_id = dest_id;
	(void)ctrl_send(p, &msg);
}

/* ---- the host side over UCP ---- */

#define HOST_QUEUE 64

struct host {
	ucp_context_h context;
	struct sdp_ucx_worker w;
	ucp_ep_h ep;
	uint8_t *queue[HOST_QUEUE];
	size_t queue_len[HOST_QUEUE];
	unsigned head, tail;
	volatile int flag;
	uint8_t *cur;	/* active message the last message returned came in */
	size_t cur_len; /* its length */
	size_t cur_off; /* where its next message starts (protocol 2: several per message) */
};

static void host_recv(void *arg, ucp_ep_h reply_ep, const void *data, size_t len)
{
	struct host *h = arg;
	uint8_t *copy;

	(void)reply_ep;
	if (h->tail - h->head == HOST_QUEUE) {
		fprintf(stderr, "host queue full, message dropped\n");
		return;
	}
	copy = malloc(len);
	if (copy == NULL)
		return;
	memcpy(copy, data, len);
	h->queue[h->tail % HOST_QUEUE] = copy;
	h->queue_len[h->tail % HOST_QUEUE] = len;
	h->tail++;
	h->flag = 1;
}

static int host_init(struct host *h, const void *addr, size_t addr_len)
{
	memset(h, 0, sizeof(*h));
	if (sdp_ucx_context_create(NULL, &h->context) != DOCA_SUCCESS)
		return -1;
	if (sdp_ucx_worker_init(&h->w, h->context, UCS_THREAD_MODE_SINGLE, host_recv, h) !=
	    DOCA_SUCCESS)
		return -1;
	/* As libdoca_urom connects: no UCP error handling (shared memory). */
	if (sdp_ucx_ep_connect_addr(&h->w, addr, addr_len, UCP_ERR_HANDLING_MODE_NONE, NULL, NULL,
				    &h->ep) != DOCA_SUCCESS)
		return -1;
	return 0;
}

static void host_fini(struct host *h)
{
	while (h->head != h->tail)
		free(h->queue[h->head++ % HOST_QUEUE]);
	free(h->cur);
	h->cur = NULL;
	if (h->ep != NULL)
		sdp_ucx_ep_close(&h->w, h->ep, 1000);
	if (h->w.worker != NULL)
		sdp_ucx_worker_fini(&h->w);
	if (h->context != NULL)
		sdp_ucx_context_destroy(h->context);
}

static void host_send(struct host *h, const struct sdp_urom_msg *msg)
{
	uint8_t buf[MSG_SIZE + 256];
	size_t len = 0;

	T_OK(sdp_urom_msg_pack(msg, buf, sizeof(buf), &len));
	T_OK(sdp_ucx_send(&h->w, h->ep, buf, len));
}

/* Next message from the worker within timeout_ms; 0 on success, -1 when none came. */
static int host_next(struct host *h, struct sdp_urom_msg *msg, int timeout_ms)
{
	size_t n = 0;

	if (h->cur == NULL || h->cur_off == h->cur_len) {
		if (h->head == h->tail) {
			h->flag = 0;
			if (sdp_ucx_worker_wait(&h->w, &h->flag, timeout_ms) != DOCA_SUCCESS)
				return -1;
		}
		free(h->cur);
		h->cur = h->queue[h->head % HOST_QUEUE];
		h->cur_len = h->queue_len[h->head % HOST_QUEUE];
		h->cur_off = 0;
		h->head++;
	}
	if (sdp_urom_msg_next(h->cur + h->cur_off, h->cur_len - h->cur_off, &n, NULL, 0) !=
	    DOCA_SUCCESS) {
		t_fail("malformed active message from the worker");
		h->cur_off = h->cur_len;
		memset(&msg->hdr, 0, sizeof(msg->hdr));
		return 0;
	}
	if (sdp_urom_msg_unpack(h->cur + h->cur_off, n, msg) != DOCA_SUCCESS) {
		/* A reply in another protocol version still has a readable header. */
		if (msg->hdr.type != SDP_UROM_MSG_VERSION_REJECT)
			t_fail("malformed message from the worker");
	}
	h->cur_off += n;
	return 0;
}

static void host_connect(struct host *h, uint64_t dest_id, uint8_t fill, doca_error_t want)
{
	struct sdp_urom_msg msg;

	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_W_CONNECT;
	msg.hdr.req_id = 1000 + dest_id;
	msg.u.w_connect.dest_id = dest_id;
	memset(msg.u.w_connect.token, fill, SDP_UROM_TOKEN_LEN);
	host_send(h, &msg);

	if (host_next(h, &msg, WAIT_MS) != 0) {
		t_fail("no W_CONNECT_REPLY for dest %lu", (unsigned long)dest_id);
		return;
	}
	T_EQ_INT(msg.hdr.type, SDP_UROM_MSG_W_CONNECT_REPLY);
	T_EQ_INT(msg.hdr.req_id, 1000 + dest_id);
	T_STATUS((doca_error_t)msg.u.w_connect_reply.status, want);
}

/*
 * Pack one command (urom_worker_cmd header + payload; cmd_len may lie, for negative tests) as
 * a W_CMD into buf; returns its length.
 */
static size_t host_cmd_pack(uint8_t *buf, size_t cap, uint64_t dest_id, uint64_t type,
			    uint64_t context, const void *payload, size_t payload_len,
			    uint64_t cmd_len)
{
	uint8_t cmd[MSG_SIZE];
	struct urom_worker_cmd hdr = {.type = type, .urom_context = context, .len = cmd_len};
	struct sdp_urom_msg msg;
	size_t len = 0;

	memcpy(cmd, &hdr, sizeof(hdr));
	memcpy(cmd + sizeof(hdr), payload, payload_len);
	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_W_CMD;
	msg.u.w_cmd.dest_id = dest_id;
	msg.u.w_cmd.cmd.data = cmd;
	msg.u.w_cmd.cmd.len = (uint32_t)(sizeof(hdr) + payload_len);
	T_OK(sdp_urom_msg_pack(&msg, buf, cap, &len));
	return len;
}

/* Send one command, alone in its active message. */
static void host_cmd(struct host *h, uint64_t dest_id, uint64_t type, uint64_t context,
		     const void *payload, size_t payload_len, uint64_t cmd_len)
{
	uint8_t buf[MSG_SIZE + 256];
	size_t len = host_cmd_pack(buf, sizeof(buf), dest_id, type, context, payload, payload_len,
				   cmd_len);

	T_OK(sdp_ucx_send(&h->w, h->ep, buf, len));
}

static void host_loopback(struct host *h, uint64_t dest_id, uint64_t context, uint64_t value)
{
	struct urom_worker_graph_cmd gcmd;

	memset(&gcmd, 0, sizeof(gcmd));
	gcmd.type = UROM_WORKER_CMD_GRAPH_LOOPBACK;
	gcmd.loopback.data = value;
	host_cmd(h, dest_id, GRAPH_ID, context, &gcmd, sizeof(gcmd), sizeof(gcmd));
}

/* Expect one W_NOTIF; returns its payload length (or -1) and the header in *notif. */
static long host_notif(struct host *h, uint64_t dest_id, struct urom_worker_notify *notif,
		       void *payload, size_t cap)
{
	struct sdp_urom_msg msg;

	if (host_next(h, &msg, WAIT_MS) != 0) {
		t_fail("no notification within %d ms", WAIT_MS);
		return -1;
	}
	T_EQ_INT(msg.hdr.type, SDP_UROM_MSG_W_NOTIF);
	if (msg.hdr.type != SDP_UROM_MSG_W_NOTIF)
		return -1;
	T_EQ_INT(msg.u.w_notif.dest_id, dest_id);
	if (msg.u.w_notif.notif.len < sizeof(*notif)) {
		t_fail("notification of %u bytes, shorter than its header",
		       msg.u.w_notif.notif.len);
		return -1;
	}
	memcpy(notif, msg.u.w_notif.notif.data, sizeof(*notif));
	T_EQ_INT(notif->len, msg.u.w_notif.notif.len - sizeof(*notif));
	if (notif->len > cap)
		return -1;
	memcpy(payload, msg.u.w_notif.notif.data + sizeof(*notif), notif->len);
	return (long)notif->len;
}

static void expect_loopback(struct host *h, uint64_t dest_id, uint64_t context, uint64_t value)
{
	struct urom_worker_notify_graph gnotif;
	struct urom_worker_notify notif;

	memset(&gnotif, 0, sizeof(gnotif));
	T_EQ_INT(host_notif(h, dest_id, &notif, &gnotif, sizeof(gnotif)), sizeof(gnotif));
	T_EQ_INT(notif.type, GRAPH_ID);
	T_EQ_INT(notif.urom_context, context);
	T_STATUS(notif.status, DOCA_SUCCESS);
	T_EQ_INT(gnotif.type, UROM_WORKER_NOTIFY_GRAPH_LOOPBACK);
	T_TRUE(gnotif.loopback.data == value);
}

static void expect_error(struct host *h, uint64_t dest_id, uint64_t type, uint64_t context,
			 doca_error_t want)
{
	struct urom_worker_notify notif;
	uint8_t payload[64];

	T_EQ_INT(host_notif(h, dest_id, &notif, payload, sizeof(payload)), 0);
	T_EQ_INT(notif.type, type);
	T_EQ_INT(notif.urom_context, context);
	T_STATUS(notif.status, want);
}

/* ---- scenarios ---- */

static int start_ready_size(struct proc *p, const char *plugin_arg, const char *msg_size,
			    struct sdp_urom_msg *ready, uint8_t *buf, size_t cap)
{
	if (spawn_worker(p, plugin_arg, msg_size) != 0)
		return -1;
	if (ctrl_recv(p, ready, buf, cap) != 0) {
		kill_worker(p);
		close(p->ctrl);
		return -1;
	}
	T_EQ_INT(ready->hdr.type, SDP_UROM_MSG_SW_READY);
	T_EQ_INT(ready->u.sw_ready.pid, p->pid);
	return 0;
}

static int start_ready(struct proc *p, const char *plugin_arg, struct sdp_urom_msg *ready,
		       uint8_t *buf, size_t cap)
{
	return start_ready_size(p, plugin_arg, "4096", ready, buf, cap);
}

static void test_session(void)
{
	struct urom_worker_graph_cmd gcmd;
	struct sdp_urom_msg ready, msg;
	char plugin_arg[4096], sparse_arg[4096];
	uint8_t buf[8192];
	struct host h;
	struct proc p;
	int wstatus, i;

	/* Two plugins: worker_graph and one that leaves worker_cmd & co. to the runtime's stubs. */
	snprintf(plugin_arg, sizeof(plugin_arg), "%s:%#llx", graph_so, GRAPH_ID);
	snprintf(sparse_arg, sizeof(sparse_arg), "%s:%#llx", sparse_so, SPARSE_ID);
	extra_plugin_arg = sparse_arg;
	if (start_ready(&p, plugin_arg, &ready, buf, sizeof(buf)) != 0)
		return;
	extra_plugin_arg = NULL;
	T_STATUS((doca_error_t)ready.u.sw_ready.status, DOCA_SUCCESS);
	T_TRUE(ready.u.sw_ready.worker_addr.len > 0);
	/* Parsing PATH:ID left argv alone: the running worker still shows both as given. */
	if (!cmdline_has_arg(p.pid, plugin_arg) || !cmdline_has_arg(p.pid, sparse_arg))
		t_fail("/proc/%d/cmdline lacks \"%s\" or \"%s\" (argv modified?)", (int)p.pid,
		       plugin_arg, sparse_arg);

	add_host(&p, 11, 0xa5);
	add_host(&p, 12, 0x5a);
	if (host_init(&h, ready.u.sw_ready.worker_addr.data, ready.u.sw_ready.worker_addr.len) !=
	    0) {
		t_fail("cannot connect a host to the worker's address");
		goto out;
	}

	/* A command before W_CONNECT is dropped: the first answer below is for context 2. */
	host_loopback(&h, 11, 1, 0xdead);

	/* Wrong token, unknown dest id, another dest's token: all refused. */
	host_connect(&h, 11, 0x00, DOCA_ERROR_AUTHENTICATION);
	host_connect(&h, 99, 0xa5, DOCA_ERROR_AUTHENTICATION);
	host_connect(&h, 11, 0x5a, DOCA_ERROR_AUTHENTICATION);
	host_connect(&h, 11, 0xa5, DOCA_SUCCESS);

	host_loopback(&h, 11, 2, 0x0123456789abcdefull);
	expect_loopback(&h, 11, 2, 0x0123456789abcdefull);

	/* dest 12 is announced but not connected: its commands are dropped too. */
	host_loopback(&h, 12, 3, 5);

	/* A plugin id this worker does not run: NOT_SUPPORTED, same context. */
	memset(&gcmd, 0, sizeof(gcmd));
	host_cmd(&h, 11, 0x8, 5, &gcmd, sizeof(gcmd), sizeof(gcmd));
	expect_error(&h, 11, 0x8, 5, DOCA_ERROR_NOT_SUPPORTED);

	/*
	 * The second plugin's worker_cmd is the runtime's stub: it leaves the command, which the
	 * runtime frees and answers NOT_SUPPORTED.
	 */
	host_cmd(&h, 11, SPARSE_ID, 55, &gcmd, sizeof(gcmd), sizeof(gcmd));
	expect_error(&h, 11, SPARSE_ID, 55, DOCA_ERROR_NOT_SUPPORTED);

	/* An unknown graph command: the plugin answers INVALID_VALUE (and frees it once). */
	gcmd.type = 77;
	host_cmd(&h, 11, GRAPH_ID, 6, &gcmd, sizeof(gcmd), sizeof(gcmd));
	expect_error(&h, 11, GRAPH_ID, 6, DOCA_ERROR_INVALID_VALUE);

	/* A header whose len disagrees with the bytes carried: INVALID_VALUE from the runtime. */
	host_cmd(&h, 11, GRAPH_ID, 7, &gcmd, sizeof(gcmd), 1000);
	expect_error(&h, 11, GRAPH_ID, 7, DOCA_ERROR_INVALID_VALUE);

	/* A message in another protocol version: VERSION_REJECT naming the worker's version. */
	{
		uint8_t raw[256];
		size_t len = 0;
		uint16_t v = SDP_UROM_PROTO_VERSION + 1;

		memset(&msg, 0, sizeof(msg));
		msg.hdr.type = SDP_UROM_MSG_W_DISCONNECT;
		msg.u.w_disconnect.dest_id = 11;
		T_OK(sdp_urom_msg_pack(&msg, raw, sizeof(raw), &len));
		memcpy(raw + 4, &v, sizeof(v)); /* version field of the header, little-endian */
		T_OK(sdp_ucx_send(&h.w, h.ep, raw, len));
		if (host_next(&h, &msg, WAIT_MS) == 0)
			T_EQ_INT(msg.hdr.type, SDP_UROM_MSG_VERSION_REJECT);
		else
			t_fail("no VERSION_REJECT");
	}

	/* A stream of loopbacks, answered in order, each with its own value. */
	for (i = 0; i < 200; i++) {
		host_loopback(&h, 11, 1000 + i, 0x5000 + i);
		if (i % 16 == 15) {
			int j;

			for (j = i - 15; j <= i; j++)
				expect_loopback(&h, 11, 1000 + j, 0x5000 + j);
		}
	}
	for (i = 200 - 200 % 16; i < 200; i++)
		expect_loopback(&h, 11, 1000 + i, 0x5000 + i);

	/*
	 * Protocol 2: three loopbacks in one active message, answered in order; then one followed
	 * by a torn header in the same message: the whole one runs, the rest is dropped (logged)
	 * and the worker goes on serving.
	 */
	{
		uint8_t batch[3 * 256];
		size_t len = 0;

		for (i = 0; i < 3; i++) {
			memset(&gcmd, 0, sizeof(gcmd));
			gcmd.type = UROM_WORKER_CMD_GRAPH_LOOPBACK;
			gcmd.loopback.data = 0x7000 + (uint64_t)i;
			len += host_cmd_pack(batch + len, sizeof(batch) - len, 11, GRAPH_ID,
					     3000 + (uint64_t)i, &gcmd, sizeof(gcmd), sizeof(gcmd));
		}
		T_OK(sdp_ucx_send(&h.w, h.ep, batch, len));
		for (i = 0; i < 3; i++)
			expect_loopback(&h, 11, 3000 + (uint64_t)i, 0x7000 + (uint64_t)i);

		gcmd.loopback.data = 0x7100;
		len = host_cmd_pack(batch, sizeof(batch), 11, GRAPH_ID, 3100, &gcmd, sizeof(gcmd),
				    sizeof(gcmd));
		memcpy(batch + len, batch, SDP_UROM_HDR_LEN - 1); /* a header one byte short */
		T_OK(sdp_ucx_send(&h.w, h.ep, batch, len + SDP_UROM_HDR_LEN - 1));
		expect_loopback(&h, 11, 3100, 0x7100);
		host_loopback(&h, 11, 3101, 0x7101);
		expect_loopback(&h, 11, 3101, 0x7101);
	}

	/* SW_EXIT while hosts remain: the worker keeps serving until they are gone. */
	simple_ctrl(&p, SDP_UROM_MSG_SW_EXIT, 0);
	host_loopback(&h, 11, 9, 9);
	expect_loopback(&h, 11, 9, 9);
	T_EQ_INT(wait_exit(&p, 100), -1);

	/* W_DISCONNECT: commands for that dest are dropped again; the token still admits it. */
	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_W_DISCONNECT;
	msg.u.w_disconnect.dest_id = 11;
	host_send(&h, &msg);
	host_connect(&h, 11, 0xa5, DOCA_SUCCESS);
	host_loopback(&h, 11, 10, 10);
	expect_loopback(&h, 11, 10, 10);

	simple_ctrl(&p, SDP_UROM_MSG_SW_DEL_HOST, 11);
	T_EQ_INT(wait_exit(&p, 100), -1); /* dest 12 is still there */
	simple_ctrl(&p, SDP_UROM_MSG_SW_DEL_HOST, 12);
	wstatus = wait_exit(&p, WAIT_MS);
	T_TRUE(wstatus != -1 && WIFEXITED(wstatus));
	if (wstatus != -1 && WIFEXITED(wstatus))
		T_EQ_INT(WEXITSTATUS(wstatus), 0);

	/* Nothing else arrived: the early command and dest 12's were dropped, not answered. */
	T_EQ_INT(host_next(&h, &msg, 50), -1);
out:
	host_fini(&h);
	kill_worker(&p);
	close(p.ctrl);
}

/* The service dies: the worker sees its control socket close and exits. */
static void test_ctrl_close(void)
{
	struct sdp_urom_msg ready;
	char plugin_arg[4096];
	uint8_t buf[8192];
	struct proc p;
	int wstatus;

	snprintf(plugin_arg, sizeof(plugin_arg), "%s:%#llx", graph_so, GRAPH_ID);
	if (start_ready(&p, plugin_arg, &ready, buf, sizeof(buf)) != 0)
		return;
	add_host(&p, 1, 1);
	close(p.ctrl);
	wstatus = wait_exit(&p, WAIT_MS);
	T_TRUE(wstatus != -1 && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
	kill_worker(&p);
}

/*
 * A message size that cannot hold the graph notification (32 + 16 bytes): the host gets a
 * header-only TOO_BIG notification instead, with the command's context.
 */
static void test_too_big(void)
{
	struct sdp_urom_msg ready;
	char plugin_arg[4096];
	uint8_t buf[8192];
	struct host h;
	struct proc p;
	int wstatus;

	snprintf(plugin_arg, sizeof(plugin_arg), "%s:%#llx", graph_so, GRAPH_ID);
	if (start_ready_size(&p, plugin_arg, "40", &ready, buf, sizeof(buf)) != 0)
		return;
	add_host(&p, 21, 0x33);
	if (host_init(&h, ready.u.sw_ready.worker_addr.data, ready.u.sw_ready.worker_addr.len) ==
	    0) {
		host_connect(&h, 21, 0x33, DOCA_SUCCESS);
		host_loopback(&h, 21, 0x77, 1);
		expect_error(&h, 21, GRAPH_ID, 0x77, DOCA_ERROR_TOO_BIG);
	} else {
		t_fail("cannot connect a host to the worker's address");
	}
	simple_ctrl(&p, SDP_UROM_MSG_SW_DEL_HOST, 21);
	simple_ctrl(&p, SDP_UROM_MSG_SW_EXIT, 0);
	wstatus = wait_exit(&p, WAIT_MS);
	T_TRUE(wstatus != -1 && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
	host_fini(&h);
	kill_worker(&p);
	close(p.ctrl);
}

/* SIGTERM (the service stopping it) ends the worker cleanly, plugins closed, status 0. */
static void test_sigterm(void)
{
	struct sdp_urom_msg ready;
	char plugin_arg[4096];
	uint8_t buf[8192];
	struct proc p;
	int wstatus;

	snprintf(plugin_arg, sizeof(plugin_arg), "%s:%#llx", graph_so, GRAPH_ID);
	if (start_ready(&p, plugin_arg, &ready, buf, sizeof(buf)) != 0)
		return;
	add_host(&p, 1, 1);
	kill(p.pid, SIGTERM);
	wstatus = wait_exit(&p, WAIT_MS);
	T_TRUE(wstatus != -1 && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
	kill_worker(&p);
	close(p.ctrl);
}

/* A plugin that cannot be loaded: SW_READY carries the cause and the worker exits 1. */
static void test_bad_plugin(const char *plugin_arg, doca_error_t want)
{
	struct sdp_urom_msg ready;
	uint8_t buf[8192];
	struct proc p;
	int wstatus;

	if (start_ready(&p, plugin_arg, &ready, buf, sizeof(buf)) != 0)
		return;
	T_STATUS((doca_error_t)ready.u.sw_ready.status, want);
	T_EQ_INT(ready.u.sw_ready.worker_addr.len, 0);
	wstatus = wait_exit(&p, WAIT_MS);
	T_TRUE(wstatus != -1 && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 1);
	kill_worker(&p);
	close(p.ctrl);
}

/* Bad command lines are refused before anything starts. */
static void test_usage(void)
{
	struct proc p = {0};
	int wstatus;

	p.pid = fork();
	if (p.pid == 0) {
		execl(worker_bin, worker_bin, "--worker-id", "1", (char *)NULL);
		_exit(127);
	}
	wstatus = wait_exit(&p, WAIT_MS);
	T_TRUE(wstatus != -1 && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 2);

	p.pid = fork();
	if (p.pid == 0) {
		execl(worker_bin, worker_bin, "--ctrl-fd", "0", "no_id_here.so", (char *)NULL);
		_exit(127);
	}
	wstatus = wait_exit(&p, WAIT_MS);
	T_TRUE(wstatus != -1 && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 2);
}

int main(int argc, char **argv)
{
	char arg[4096];

	if (argc != 5) {
		fprintf(stderr,
			"usage: %s <softdpu-urom-worker> <worker_graph.so> "
			"<wrong_api_version.so> <urom_sparse_plugin.so>\n",
			argv[0]);
		return T_EXIT_FAIL;
	}
	sparse_so = argv[4];
	worker_bin = argv[1];
	graph_so = argv[2];
	bad_so = argv[3];
	signal(SIGPIPE, SIG_IGN);

	test_usage();
	test_session();
	test_ctrl_close();
	test_sigterm();
	test_too_big();
	snprintf(arg, sizeof(arg), "%s:0x1", bad_so);
	test_bad_plugin(arg, DOCA_ERROR_UNSUPPORTED_VERSION);
	test_bad_plugin("/nonexistent/worker_missing.so:0x1", DOCA_ERROR_NOT_FOUND);
	T_DONE();
}
