/*
 * softdpu-uromd over its wire protocol, without libdoca_urom: start a private daemon (port 0,
 * temporary run dir and secret), then as a raw host check the handshake (good secret, bad
 * secret, other protocol version), the WELCOME contents, spawn rules (an empty plugin mask, id
 * ANY, fixed id, attach with a second dest id, env on a running id, env with a space, cpuset
 * outside the service's, --max-workers), gid queries, release (the worker exits), worker death (WORKER_EXIT to every
 * owner, the service survives), the status document, and an orderly SIGTERM shutdown that
 * removes the pid and port files.
 *   test_uromd <softdpu-uromd> <softdpu-urom-worker> <plugin dir holding worker_graph.so>
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sdp_urom_chan.h"
#include "sdp_urom_auth.h"
#include "sdp_urom_proto.h"
#include "t_helpers.h"

#define MAX_QUEUED 16
#define WAIT_MS 10000

struct host {
	struct sdp_urom_chan chan;
	int chan_ok;
	int failed;
	size_t nq;
	uint8_t *q[MAX_QUEUED];
	size_t qlen[MAX_QUEUED];
	uint8_t *cur; /* the message last returned by host_recv */
	uint8_t nonce[SDP_UROM_NONCE_LEN];
	uint64_t req;
};

static char tmpdir[] = "/tmp/test_uromd.XXXXXX";
static char run_dir[128], secret_file[128], port_file[256], pid_file[256], log_file[256];
static pid_t daemon_pid;
static uint16_t port;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap(int ms)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ms * 1000000L};

	nanosleep(&ts, NULL);
}

static int host_frame_cb(void *arg, const uint8_t *data, size_t len)
{
	struct host *h = arg;

	if (h->nq == MAX_QUEUED) {
		t_fail("more than %d messages queued", MAX_QUEUED);
		return 1;
	}
	h->q[h->nq] = malloc(len);
	if (h->q[h->nq] == NULL)
		return 1;
	memcpy(h->q[h->nq], data, len);
	h->qlen[h->nq++] = len;
	return 0;
}

static int host_connect(struct host *h)
{
	struct sockaddr_in sa;
	char why[128];
	int fd = -1;

	memset(h, 0, sizeof(*h));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (sdp_urom_chan_connect((struct sockaddr *)&sa, sizeof(sa), WAIT_MS, &fd, why,
				  sizeof(why)) != DOCA_SUCCESS) {
		t_fail("connect to port %u: %s", port, why);
		return -1;
	}
	if (sdp_urom_chan_init(&h->chan, fd, 1u << 20) != DOCA_SUCCESS) {
		close(fd);
		return -1;
	}
	h->chan_ok = 1;
	return 0;
}

static void host_close(struct host *h)
{
	if (h->chan_ok)
		sdp_urom_chan_fini(&h->chan);
	for (size_t i = 0; i < h->nq; i++)
		free(h->q[i]);
	free(h->cur);
	memset(h, 0, sizeof(*h));
}

/* Bytes as they are (a frame, junk, half a frame). */
static doca_error_t host_send_raw(struct host *h, const void *buf, size_t len)
{
	return send(h->chan.fd, buf, len, MSG_NOSIGNAL) == (ssize_t)len ? DOCA_SUCCESS :
									  DOCA_ERROR_IO_FAILED;
}

static doca_error_t host_send(struct host *h, struct sdp_urom_msg *msg)
{
	uint8_t buf[8192];
	size_t len = 0;
	doca_error_t status;

	if (msg->hdr.req_id == 0)
		msg->hdr.req_id = ++h->req;
	status = sdp_urom_msg_pack(msg, buf, sizeof(buf), &len);
	if (status != DOCA_SUCCESS)
		return status;
	return host_send_raw(h, buf, len);
}

/*
 * Next message (in arrival order) into msg; INVALID_VALUE if it did not unpack,
 * CONNECTION_RESET when the service closed the connection first.
 */
static doca_error_t host_recv(struct host *h, struct sdp_urom_msg *msg, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	doca_error_t status;
	int made;

	while (h->nq == 0) {
		int64_t left = deadline - now_ms();

		if (h->failed)
			return DOCA_ERROR_CONNECTION_RESET;
		if (left <= 0)
			return DOCA_ERROR_TIME_OUT;
		if (sdp_urom_chan_read(&h->chan, host_frame_cb, h, &made) != DOCA_SUCCESS)
			h->failed = 1;
		else if (h->nq == 0)
			(void)sdp_urom_chan_wait(&h->chan, (int)left);
	}
	free(h->cur);
	h->cur = h->q[0];
	status = sdp_urom_msg_unpack(h->cur, h->qlen[0], msg);
	memmove(h->q, h->q + 1, (h->nq - 1) * sizeof(h->q[0]));
	memmove(h->qlen, h->qlen + 1, (h->nq - 1) * sizeof(h->qlen[0]));
	h->nq--;
	return status;
}

static void host_hello(struct host *h, uint16_t min_v, uint16_t max_v, uint64_t msg_size,
		       uint32_t max_workers)
{
	struct sdp_urom_msg msg;

	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_HELLO;
	msg.u.hello.min_version = min_v;
	msg.u.hello.max_version = max_v;
	sdp_urom_random(h->nonce, sizeof(h->nonce));
	memcpy(msg.u.hello.nonce, h->nonce, sizeof(h->nonce));
	msg.u.hello.pid = (uint32_t)getpid();
	msg.u.hello.uid = (uint32_t)getuid();
	msg.u.hello.hostname.data = (const uint8_t *)"testhost";
	msg.u.hello.hostname.len = 8;
	msg.u.hello.max_msg_size = msg_size;
	msg.u.hello.max_workers = max_workers;
	T_OK(host_send(h, &msg));
}

/* Full handshake with `secret`; the WELCOME (or the answer instead) in *out. */
static doca_error_t host_handshake(struct host *h, const uint8_t *secret, uint64_t msg_size,
				   uint32_t max_workers, struct sdp_urom_msg *out)
{
	uint8_t server_nonce[SDP_UROM_NONCE_LEN];
	struct sdp_urom_msg msg;
	doca_error_t status;

	if (host_connect(h) != 0)
		return DOCA_ERROR_NOT_CONNECTED;
	host_hello(h, SDP_UROM_PROTO_VERSION, SDP_UROM_PROTO_VERSION, msg_size, max_workers);
	status = host_recv(h, &msg, WAIT_MS);
	if (status != DOCA_SUCCESS)
		return status;
	T_EQ_INT(msg.hdr.type, SDP_UROM_MSG_CHALLENGE);
	memcpy(server_nonce, msg.u.challenge.nonce, sizeof(server_nonce));
	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_AUTH;
	sdp_urom_auth_mac(secret, "host", server_nonce, h->nonce, msg.u.auth.mac);
	T_OK(host_send(h, &msg));
	return host_recv(h, out, WAIT_MS);
}

static void spawn_msg(struct sdp_urom_msg *msg, uint64_t id, uint32_t gid, uint64_t plugins)
{
	memset(msg, 0, sizeof(*msg));
	msg->hdr.type = SDP_UROM_MSG_SPAWN;
	msg->u.spawn.worker_id = id;
	msg->u.spawn.gid = gid;
	msg->u.spawn.plugins = plugins;
}

/* Send SPAWN and wait for its reply (skipping unsolicited messages). */
static doca_error_t spawn(struct host *h, struct sdp_urom_msg *req, struct sdp_urom_msg *reply)
{
	doca_error_t status;

	req->hdr.req_id = 0;
	status = host_send(h, req);
	if (status != DOCA_SUCCESS)
		return status;
	do {
		status = host_recv(h, reply, 20000);
		if (status != DOCA_SUCCESS)
			return status;
	} while (reply->hdr.type != SDP_UROM_MSG_SPAWN_REPLY);
	if (reply->hdr.req_id != req->hdr.req_id)
		t_fail("spawn reply for req %lu, expected %lu", (unsigned long)reply->hdr.req_id,
		       (unsigned long)req->hdr.req_id);
	return (doca_error_t)reply->u.spawn_reply.status;
}

static int pid_gone(pid_t pid, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	char path[64], buf[512];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	while (now_ms() < deadline) {
		FILE *f = fopen(path, "r");
		char *p;

		if (f == NULL)
			return 1;
		p = fgets(buf, sizeof(buf), f);
		fclose(f);
		p = p ? strrchr(buf, ')') : NULL;
		if (p != NULL && (p[2] == 'Z' || p[2] == 'X'))
			return 1;
		nap(20);
	}
	return 0;
}

static struct json_object *status_json(struct host *h)
{
	struct sdp_urom_msg msg;
	struct json_object *root;
	char *text;

	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_STATUS_QUERY;
	T_OK(host_send(h, &msg));
	do {
		if (host_recv(h, &msg, WAIT_MS) != DOCA_SUCCESS)
			return NULL;
	} while (msg.hdr.type != SDP_UROM_MSG_STATUS_REPLY);
	text = strndup((const char *)msg.u.status_reply.json.data, msg.u.status_reply.json.len);
	root = text ? json_tokener_parse(text) : NULL;
	if (root == NULL)
		t_fail("status is not JSON: %s", text ? text : "(null)");
	free(text);
	return root;
}

static size_t json_array_len(struct json_object *root, const char *key)
{
	struct json_object *v;

	if (root == NULL || !json_object_object_get_ex(root, key, &v))
		return (size_t)-1;
	return json_object_array_length(v);
}

static int start_daemon(const char *uromd, const char *worker, const char *plugin_dir)
{
	int64_t deadline = now_ms() + 10000;
	char buf[32];

	if (mkdtemp(tmpdir) == NULL)
		return -1;
	snprintf(run_dir, sizeof(run_dir), "%s/run", tmpdir);
	snprintf(secret_file, sizeof(secret_file), "%s/secret", tmpdir);
	snprintf(port_file, sizeof(port_file), "%s/uromd.port", run_dir);
	snprintf(pid_file, sizeof(pid_file), "%s/uromd.pid", run_dir);
	snprintf(log_file, sizeof(log_file), "%s/daemon.log", tmpdir);
	setenv("SOFTDPU_UROM_WORKER_BIN", worker, 1);
	setenv("UCX_NET_DEVICES", "lo", 1);
	daemon_pid = fork();
	if (daemon_pid == 0) {
		int fd = open(log_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fd, 1);
		dup2(fd, 2);
		execl(uromd, uromd, "-f", "--listen", "127.0.0.1:0", "--run-dir", run_dir,
		      "--secret-file", secret_file, "--max-workers", "2", "--cpuset", "0",
		      "--plugin-path", plugin_dir, "-l", "60", (char *)NULL);
		_exit(127);
	}
	while (now_ms() < deadline) {
		FILE *f = fopen(port_file, "r");

		if (f != NULL) {
			if (fgets(buf, sizeof(buf), f) != NULL)
				port = (uint16_t)atoi(buf);
			fclose(f);
			if (port != 0)
				return 0;
		}
		if (waitpid(daemon_pid, NULL, WNOHANG) == daemon_pid) {
			daemon_pid = 0;
			return -1;
		}
		nap(20);
	}
	return -1;
}

/* How often needle occurs in the daemon's log. */
static int log_count(const char *needle)
{
	static char buf[1 << 20];
	size_t n;
	int count = 0;
	FILE *f = fopen(log_file, "r");

	if (f == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (const char *p = buf; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		count++;
	return count;
}

static void dump_log(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "tail -n 60 %s >&2", log_file);
	if (system(cmd) != 0)
		fprintf(stderr, "(no daemon log)\n");
}

int main(int argc, char **argv)
{
	uint8_t secret[SDP_UROM_SECRET_LEN], wrong[SDP_UROM_SECRET_LEN];
	struct sdp_urom_msg req, rep;
	struct host h, bad;
	struct json_object *st;
	uint64_t any_id, dest7a, dest7b, any_dest, graph = 1;
	pid_t pid7 = 0, pid7b = 0, pid_any = 0;
	int wstatus = 0;
	uint32_t i;

	if (argc != 4)
		T_SKIP("usage: test_uromd <softdpu-uromd> <softdpu-urom-worker> <plugin dir>");
	if (access(argv[2], X_OK) != 0)
		T_SKIP("worker binary %s not built", argv[2]);
	if (start_daemon(argv[1], argv[2], argv[3]) != 0) {
		dump_log();
		t_fail("softdpu-uromd did not start");
		T_DONE();
	}
	T_OK(sdp_urom_secret_load(secret_file, secret));
	T_TRUE(access(pid_file, R_OK) == 0);

	/* Another protocol version: VERSION_REJECT carrying the service's own. */
	T_EQ_INT(host_connect(&bad), 0);
	host_hello(&bad, SDP_UROM_PROTO_VERSION + 5, SDP_UROM_PROTO_VERSION + 9, 0, 0);
	T_OK(host_recv(&bad, &rep, WAIT_MS));
	T_EQ_INT(rep.hdr.type, SDP_UROM_MSG_VERSION_REJECT);
	T_EQ_INT(rep.u.version_reject.version, SDP_UROM_PROTO_VERSION);
	host_close(&bad);

	/* A header of another version (whatever the body): VERSION_REJECT too. */
	T_EQ_INT(host_connect(&bad), 0);
	{
		struct sdp_urom_msg hello;
		uint8_t buf[512];
		size_t len = 0;

		memset(&hello, 0, sizeof(hello));
		hello.hdr.type = SDP_UROM_MSG_HELLO;
		hello.hdr.req_id = 1;
		hello.u.hello.min_version = hello.u.hello.max_version = SDP_UROM_PROTO_VERSION;
		T_OK(sdp_urom_msg_pack(&hello, buf, sizeof(buf), &len));
		buf[4] = (uint8_t)(SDP_UROM_PROTO_VERSION + 1); /* u16 version after the magic */
		buf[5] = 0;
		T_OK(host_send_raw(&bad, buf, len));
	}
	T_OK(host_recv(&bad, &rep, WAIT_MS));
	T_EQ_INT(rep.hdr.type, SDP_UROM_MSG_VERSION_REJECT);
	T_EQ_INT(rep.u.version_reject.version, SDP_UROM_PROTO_VERSION);
	host_close(&bad);

	/* Garbage: not a UROM frame, the connection is closed without a word. */
	T_EQ_INT(host_connect(&bad), 0);
	T_OK(host_send_raw(&bad, "not a UROM message", 18));
	T_EQ_INT(host_recv(&bad, &rep, WAIT_MS), DOCA_ERROR_CONNECTION_RESET);
	host_close(&bad);
	/* A well-framed body that does not parse: REJECT(INVALID_VALUE), connection closed. */
	T_EQ_INT(host_connect(&bad), 0);
	{
		uint8_t frame[SDP_UROM_HDR_LEN + 4] = {
			0x53, 0x55, 0x52, 0x4d, SDP_UROM_PROTO_VERSION, 0, SDP_UROM_MSG_HELLO, 0};

		frame[16] = 4; /* body length 4: far too short for a HELLO */
		T_OK(host_send_raw(&bad, frame, sizeof(frame)));
	}
	T_OK(host_recv(&bad, &rep, WAIT_MS));
	T_EQ_INT(rep.hdr.type, SDP_UROM_MSG_REJECT);
	T_EQ_INT(rep.u.reject.status, DOCA_ERROR_INVALID_VALUE);
	host_close(&bad);
	T_EQ_INT(host_connect(&bad), 0);
	spawn_msg(&req, UINT64_MAX, 0, 0);
	T_OK(host_send(&bad, &req));
	T_OK(host_recv(&bad, &rep, WAIT_MS));
	T_EQ_INT(rep.hdr.type, SDP_UROM_MSG_REJECT);
	T_EQ_INT(rep.u.reject.status, DOCA_ERROR_NOT_PERMITTED);
	host_close(&bad);

	/* Wrong secret: REJECT(AUTHENTICATION); nothing spawned for it. */
	memcpy(wrong, secret, sizeof(wrong));
	wrong[0] ^= 0x5a;
	T_OK(host_handshake(&bad, wrong, 0, 0, &rep));
	T_EQ_INT(rep.hdr.type, SDP_UROM_MSG_REJECT);
	T_EQ_INT(rep.u.reject.status, DOCA_ERROR_AUTHENTICATION);
	spawn_msg(&req, UINT64_MAX, 0, 0);
	host_send(&bad, &req);
	host_close(&bad);

	/* The real host: effective message size is the smaller of both; cpuset as given. */
	T_OK(host_handshake(&h, secret, 1024, 0, &rep));
	T_EQ_INT(rep.hdr.type, SDP_UROM_MSG_WELCOME);
	T_EQ_INT(rep.u.welcome.max_msg_size, 1024);
	T_EQ_INT(rep.u.welcome.cpuset[0], 1);
	T_EQ_INT(rep.u.welcome.num_plugins, 1); /* worker_graph */
	graph = rep.u.welcome.num_plugins == 1 ? rep.u.welcome.plugins[0].id : 1;
	st = status_json(&h);
	T_EQ_INT(json_array_len(st, "workers"), 0);
	json_object_put(st);

	/* Refusals before anything runs. */
	spawn_msg(&req, UINT64_MAX, 0, graph << 1);
	T_STATUS(spawn(&h, &req, &rep), DOCA_ERROR_INVALID_VALUE); /* no such plugin here */
	spawn_msg(&req, UINT64_MAX, 0, 0);
	T_STATUS(spawn(&h, &req, &rep), DOCA_ERROR_INVALID_VALUE); /* a worker without plugins */
	T_TRUE(log_count("empty plugin mask") == 1);
	spawn_msg(&req, 3, 0, graph);
	req.u.spawn.has_cpuset = 1;
	req.u.spawn.cpuset[0] = 0x22; /* CPUs 1 and 5: not in the service's "0" */
	T_STATUS(spawn(&h, &req, &rep), DOCA_ERROR_INVALID_VALUE);
	spawn_msg(&req, 3, 0, graph);
	req.u.spawn.num_env = 1;
	req.u.spawn.env[0].data = (const uint8_t *)"FOO=a b";
	req.u.spawn.env[0].len = 7;
	T_STATUS(spawn(&h, &req, &rep), DOCA_ERROR_INVALID_VALUE);

	/* id ANY: a fresh id, a pid, the worker's address, a token, a dest id. */
	spawn_msg(&req, UINT64_MAX, 0, graph);
	req.u.spawn.has_cpuset = 1;
	req.u.spawn.cpuset[0] = 1;
	req.u.spawn.num_env = 1;
	req.u.spawn.env[0].data = (const uint8_t *)"SDP_TEST_UROMD_ENV=yes";
	req.u.spawn.env[0].len = 22;
	if (spawn(&h, &req, &rep) != DOCA_SUCCESS) {
		t_fail("spawn id ANY failed: %.*s", (int)rep.u.spawn_reply.reason.len,
		       (const char *)rep.u.spawn_reply.reason.data);
		dump_log();
		goto out;
	}
	any_id = rep.u.spawn_reply.worker_id;
	any_dest = rep.u.spawn_reply.dest_id;
	pid_any = (pid_t)rep.u.spawn_reply.pid;
	T_TRUE(any_id != UINT64_MAX);
	T_TRUE(pid_any > 0);
	T_TRUE(rep.u.spawn_reply.worker_addr.len > 0);

	/* A fixed id, then the same id again: same process, another dest id. */
	spawn_msg(&req, 7, 1, graph);
	T_OK(spawn(&h, &req, &rep));
	T_EQ_INT(rep.u.spawn_reply.worker_id, 7);
	pid7 = (pid_t)rep.u.spawn_reply.pid;
	dest7a = rep.u.spawn_reply.dest_id;
	spawn_msg(&req, 7, 1, graph);
	T_OK(spawn(&h, &req, &rep));
	T_EQ_INT(rep.u.spawn_reply.pid, pid7);
	dest7b = rep.u.spawn_reply.dest_id;
	T_TRUE(dest7a != dest7b);
	T_TRUE(dest7a != any_dest);

	/* An environment for a running id, and a third worker over --max-workers 2. */
	spawn_msg(&req, 7, 1, graph);
	req.u.spawn.num_env = 1;
	req.u.spawn.env[0].data = (const uint8_t *)"X=1";
	req.u.spawn.env[0].len = 3;
	T_STATUS(spawn(&h, &req, &rep), DOCA_ERROR_BAD_STATE);
	spawn_msg(&req, 9, 0, graph);
	T_STATUS(spawn(&h, &req, &rep), DOCA_ERROR_FULL);

	/* gid queries. */
	memset(&req, 0, sizeof(req));
	req.hdr.type = SDP_UROM_MSG_GID_QUERY;
	req.u.gid_query.gid = 1;
	T_OK(host_send(&h, &req));
	T_OK(host_recv(&h, &rep, WAIT_MS));
	T_EQ_INT(rep.hdr.type, SDP_UROM_MSG_GID_REPLY);
	T_EQ_INT(rep.u.gid_reply.count, 1);
	if (rep.u.gid_reply.count == 1)
		T_EQ_INT(sdp_urom_gid_reply_id(&rep, 0), 7);
	req.hdr.req_id = 0;
	req.u.gid_query.gid = 5;
	T_OK(host_send(&h, &req));
	T_OK(host_recv(&h, &rep, WAIT_MS));
	T_EQ_INT(rep.u.gid_reply.count, 0);

	/* Status: two workers, worker 7 with two owners and its log file. */
	st = status_json(&h);
	T_EQ_INT(json_array_len(st, "workers"), 2);
	if (st != NULL) {
		struct json_object *workers, *w, *v;

		json_object_object_get_ex(st, "workers", &workers);
		for (i = 0; i < json_object_array_length(workers); i++) {
			w = json_object_array_get_idx(workers, i);
			json_object_object_get_ex(w, "id", &v);
			if (json_object_get_uint64(v) != 7)
				continue;
			T_EQ_INT(json_array_len(w, "owners"), 2);
			json_object_object_get_ex(w, "log", &v);
			T_TRUE(access(json_object_get_string(v), F_OK) == 0);
		}
		json_object_object_get_ex(st, "cpuset", &v);
		T_EQ_STR(json_object_get_string(v), "0");
		json_object_put(st);
	}

	/* Release the ANY worker: it exits; a second release is NOT_FOUND. */
	memset(&req, 0, sizeof(req));
	req.hdr.type = SDP_UROM_MSG_RELEASE;
	req.u.release.worker_id = any_id;
	req.u.release.dest_id = any_dest;
	T_OK(host_send(&h, &req));
	T_OK(host_recv(&h, &rep, WAIT_MS));
	T_EQ_INT(rep.hdr.type, SDP_UROM_MSG_RELEASE_REPLY);
	T_EQ_INT(rep.u.release_reply.status, DOCA_SUCCESS);
	req.hdr.req_id = 0;
	T_OK(host_send(&h, &req));
	T_OK(host_recv(&h, &rep, WAIT_MS));
	T_EQ_INT(rep.u.release_reply.status, DOCA_ERROR_NOT_FOUND);
	T_TRUE(pid_gone(pid_any, 5000));

	/* Worker death: WORKER_EXIT for each of its two owners; the service stays up. */
	kill(pid7, SIGKILL);
	for (i = 0; i < 2; i++) {
		T_OK(host_recv(&h, &rep, WAIT_MS));
		T_EQ_INT(rep.hdr.type, SDP_UROM_MSG_WORKER_EXIT);
		T_EQ_INT(rep.u.worker_exit.worker_id, 7);
		T_TRUE(WIFSIGNALED(rep.u.worker_exit.exit_status));
	}
	st = status_json(&h);
	T_EQ_INT(json_array_len(st, "workers"), 0);
	json_object_put(st);

	/* Id 7 again: a new process. */
	spawn_msg(&req, 7, 1, graph);
	T_OK(spawn(&h, &req, &rep));
	T_TRUE((pid_t)rep.u.spawn_reply.pid != pid7);
	pid7 = (pid_t)rep.u.spawn_reply.pid;
	dest7a = rep.u.spawn_reply.dest_id;

	/*
	 * Id 7 while its old process is still exiting (stopped, so it cannot exit yet): a new
	 * process starts; status lists both, the old one as "exiting", each with its own log file.
	 */
	kill(pid7, SIGSTOP);
	memset(&req, 0, sizeof(req));
	req.hdr.type = SDP_UROM_MSG_RELEASE;
	req.u.release.worker_id = 7;
	req.u.release.dest_id = dest7a;
	T_OK(host_send(&h, &req));
	T_OK(host_recv(&h, &rep, WAIT_MS));
	T_EQ_INT(rep.u.release_reply.status, DOCA_SUCCESS);
	spawn_msg(&req, 7, 1, graph);
	T_OK(spawn(&h, &req, &rep));
	pid7b = (pid_t)rep.u.spawn_reply.pid;
	T_TRUE(pid7b != pid7);
	st = status_json(&h);
	T_EQ_INT(json_array_len(st, "workers"), 2);
	if (st != NULL) {
		struct json_object *workers, *w, *v;
		int seen_old = 0, seen_new = 0;

		json_object_object_get_ex(st, "workers", &workers);
		for (i = 0; i < json_object_array_length(workers); i++) {
			const char *state = "", *log = "";
			char want_log[64];
			pid_t wpid;

			w = json_object_array_get_idx(workers, i);
			json_object_object_get_ex(w, "id", &v);
			T_EQ_INT(json_object_get_uint64(v), 7);
			json_object_object_get_ex(w, "pid", &v);
			wpid = (pid_t)json_object_get_int(v);
			if (json_object_object_get_ex(w, "state", &v))
				state = json_object_get_string(v);
			if (json_object_object_get_ex(w, "log", &v))
				log = json_object_get_string(v);
			snprintf(want_log, sizeof(want_log), "/worker-7-%d.log", (int)wpid);
			if (strlen(log) < strlen(want_log) ||
			    strcmp(log + strlen(log) - strlen(want_log), want_log) != 0 ||
			    access(log, F_OK) != 0)
				t_fail("worker 7 pid %d: log \"%s\", expected an existing "
				       "<run dir>%s",
				       (int)wpid, log, want_log);
			if (wpid == pid7) {
				seen_old = 1;
				T_EQ_STR(state, "exiting");
			} else if (wpid == pid7b) {
				seen_new = 1;
				T_TRUE(strcmp(state, "exiting") != 0);
			}
		}
		T_TRUE(seen_old && seen_new);
		json_object_put(st);
	}
	kill(pid7, SIGCONT);
	T_TRUE(pid_gone(pid7, 5000));
	pid7 = pid7b;

out:
	host_close(&h);
	/* Orderly shutdown: workers stopped, files removed, exit 0. */
	kill(daemon_pid, SIGTERM);
	for (int64_t deadline = now_ms() + 10000; now_ms() < deadline;) {
		if (waitpid(daemon_pid, &wstatus, WNOHANG) == daemon_pid) {
			daemon_pid = 0;
			break;
		}
		nap(20);
	}
	if (daemon_pid != 0) {
		t_fail("softdpu-uromd did not exit within 10 s of SIGTERM");
		kill(daemon_pid, SIGKILL);
		waitpid(daemon_pid, &wstatus, 0);
	} else {
		T_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
	}
	if (pid7 > 0)
		T_TRUE(pid_gone(pid7, 5000));
	T_TRUE(access(pid_file, F_OK) != 0);
	T_TRUE(access(port_file, F_OK) != 0);
	if (t_failures || getenv("SDP_TEST_VERBOSE") != NULL)
		dump_log();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
	T_DONE();
}
