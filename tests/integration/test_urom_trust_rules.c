/*
 * Integration: the trust rules of the UROM service (docs/urom-service.md, "Trust boundary"),
 * each against a real softdpu-uromd, each negative case bounded:
 *   - secret file: group- or world-readable, owned by another user (root included: root gets
 *     no exception) or a symbolic link is refused by the host library's loader, by the CLI and
 *     by the service at start (exit 1), the cause logged once;
 *   - replay: a real host's HELLO and AUTH, captured by a TCP relay between the host library
 *     and the service, replayed on a new connection, are refused (the new CHALLENGE carries a
 *     new server nonce: the old AUTH MAC no longer matches);
 *   - another uid: a host running as uid 65534 (a forked child after setresuid; needs root)
 *     cannot attach to root's worker, root cannot attach to its worker, and a HELLO that
 *     claims another uid over a local socket gets the kernel's uid instead;
 *   - plugin scan: plugin files and directories writable by group or others, or owned by a
 *     user other than root and the service's, are skipped with the reason in "skipped";
 *   - spawn environment: /proc/<worker>/environ holds the service's variables and the host's
 *     requested ones (which win), UCX_NET_DEVICES=lo; loader variables asked by a host are
 *     refused with NOT_PERMITTED.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "t_urom.h"
#include "t_urom_raw.h"
#include "t_uromd.h"

#define OTHER_UID 65534
#define ATTACH_ID_ROOT 0x7457001ull
#define ATTACH_ID_OTHER 0x7457002ull

static struct t_uromd d;
static uint8_t secret[SDP_UROM_SECRET_LEN];
static char tmp[PATH_MAX];

/* ---- helpers ---- */

static int write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, data, len) == (ssize_t)len && fchmod(fd, mode) == 0;
	close(fd);
	return ok ? 0 : -1;
}

static int copy_file(const char *from, const char *to, mode_t mode)
{
	static char buf[8 << 20];
	ssize_t n = t_read_file(from, buf, sizeof(buf));

	return n > 0 ? write_file(to, buf, (size_t)n, mode) : -1;
}

/* Occurrences of needle in text. */
static int count_in(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* Handshake like t_raw_handshake, with the uid the HELLO claims. */
static doca_error_t raw_handshake_uid(struct t_raw *r, uint32_t uid, struct sdp_urom_msg *msg)
{
	uint8_t snonce[SDP_UROM_NONCE_LEN];
	doca_error_t st;

	t_raw_hello(r, msg, SDP_UROM_PROTO_VERSION, SDP_UROM_PROTO_VERSION);
	msg->u.hello.uid = uid;
	st = t_raw_send(r, msg, 0);
	if (st == DOCA_SUCCESS)
		st = t_raw_recv(r, msg, 5000);
	if (st != DOCA_SUCCESS)
		return st;
	if (msg->hdr.type != SDP_UROM_MSG_CHALLENGE)
		return DOCA_ERROR_UNEXPECTED;
	memcpy(snonce, msg->u.challenge.nonce, sizeof(snonce));
	memset(msg, 0, sizeof(*msg));
	msg->hdr.type = SDP_UROM_MSG_AUTH;
	sdp_urom_auth_mac(secret, "host", snonce, r->nonce, msg->u.auth.mac);
	st = t_raw_send(r, msg, 0);
	if (st == DOCA_SUCCESS)
		st = t_raw_recv(r, msg, 5000);
	if (st != DOCA_SUCCESS)
		return st;
	if (msg->hdr.type == SDP_UROM_MSG_REJECT)
		return (doca_error_t)msg->u.reject.status;
	return msg->hdr.type == SDP_UROM_MSG_WELCOME ? DOCA_SUCCESS : DOCA_ERROR_UNEXPECTED;
}

/* Connect and authenticate to port; the graph plugin's id in *graph. */
static doca_error_t raw_open(struct t_raw *r, uint16_t port, uint32_t uid, uint64_t *graph)
{
	struct sdp_urom_msg msg;
	doca_error_t st = t_raw_connect(r, port);

	if (st == DOCA_SUCCESS)
		st = raw_handshake_uid(r, uid, &msg);
	if (st != DOCA_SUCCESS)
		return st;
	*graph = 0;
	for (uint32_t i = 0; i < msg.u.welcome.num_plugins; i++)
		if (strcmp(msg.u.welcome.plugins[i].name, "worker_graph") == 0)
			*graph = msg.u.welcome.plugins[i].id;
	return *graph != 0 ? DOCA_SUCCESS : DOCA_ERROR_NOT_FOUND;
}

/* SPAWN over r; the reply's status, its pid in *pid (0 if refused), token in tok. */
static doca_error_t raw_spawn(struct t_raw *r, uint64_t id, uint64_t plugins, const char **env,
			      pid_t *pid, uint8_t tok[SDP_UROM_TOKEN_LEN])
{
	struct sdp_urom_msg msg;
	doca_error_t st;

	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_SPAWN;
	msg.u.spawn.worker_id = id;
	msg.u.spawn.plugins = plugins;
	for (size_t i = 0; env != NULL && env[i] != NULL; i++) {
		msg.u.spawn.env[i].data = (const uint8_t *)env[i];
		msg.u.spawn.env[i].len = (uint32_t)strlen(env[i]);
		msg.u.spawn.num_env++;
	}
	*pid = 0;
	st = t_raw_send(r, &msg, 0);
	if (st == DOCA_SUCCESS)
		st = t_raw_recv(r, &msg, 15000);
	if (st != DOCA_SUCCESS)
		return st;
	if (msg.hdr.type != SDP_UROM_MSG_SPAWN_REPLY)
		return DOCA_ERROR_UNEXPECTED;
	if (tok != NULL)
		memcpy(tok, msg.u.spawn_reply.token, SDP_UROM_TOKEN_LEN);
	if (msg.u.spawn_reply.status == DOCA_SUCCESS)
		*pid = (pid_t)msg.u.spawn_reply.pid;
	return (doca_error_t)msg.u.spawn_reply.status;
}

static int all_zero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != 0)
			return 0;
	return 1;
}

/* ---- a. secret files ---- */

/* Run softdpu-uromd -f with secret file path; its exit status, its output in out. */
static int uromd_start_with_secret(const char *path, char *out, size_t size)
{
	char run[PATH_MAX + 8], log[PATH_MAX + 8];
	const char *bin = getenv("SDP_TEST_UROMD");
	int status = -1;
	pid_t pid;

	snprintf(run, sizeof(run), "%s/run-bad", tmp);
	snprintf(log, sizeof(log), "%s/bad.log", tmp);
	pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(bin, bin, "-f", "--listen", "127.0.0.1:0", "--run-dir", run, "--secret-file",
		      path, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || !t_wait_child(pid, 20000, &status)) {
		if (pid > 0)
			kill(pid, SIGKILL), t_wait_child(pid, 5000, &status);
		return -1;
	}
	out[0] = '\0';
	(void)t_read_file(log, out, size);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* `softdpu service status` with secret file path: exit status, output in out. */
static int cli_status_with_secret(const char *path, char *out, size_t size)
{
	char cmd[4 * PATH_MAX];
	size_t n;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "timeout 20 '%s' service status --run-dir '%s' --secret-file '%s' --addr %s 2>&1",
		 getenv("SDP_TEST_CLI"), d.run_dir, path, d.addr);
	p = popen(cmd, "r");
	if (p == NULL)
		return -1;
	n = fread(out, 1, size - 1, p);
	out[n] = '\0';
	return WEXITSTATUS(pclose(p));
}

static void check_bad_secret(const char *what, const char *path, const char *cause)
{
	static char out[65536];
	uint8_t got[SDP_UROM_SECRET_LEN];
	struct t_svc s;
	int rc;

	/* The loader the host library and the CLI use. */
	if (sdp_urom_secret_load(path, got) != DOCA_ERROR_NOT_PERMITTED)
		t_fail("%s: sdp_urom_secret_load did not refuse it with NOT_PERMITTED", what);
	/* The host library: its service context does not start. */
	setenv("SOFTDPU_UROM_SECRET_FILE", path, 1);
	if (t_svc_open(&s, 0) == DOCA_SUCCESS)
		t_fail("%s: the host library started a service context with it", what);
	t_svc_close(&s);
	setenv("SOFTDPU_UROM_SECRET_FILE", d.secret_file, 1);
	/* The CLI: exit 1, the cause once. */
	rc = cli_status_with_secret(path, out, sizeof(out));
	if (rc != 1 || count_in(out, cause) != 1)
		t_fail("%s: softdpu service status: exit %d, \"%s\" %d times (want exit 1, once):\n%s",
		       what, rc, cause, count_in(out, cause), out);
	/* The service: does not start, exit 1, the cause once. */
	rc = uromd_start_with_secret(path, out, sizeof(out));
	if (rc != 1 || count_in(out, cause) != 1)
		t_fail("%s: softdpu-uromd: exit %d, \"%s\" %d times (want exit 1, once):\n%s", what,
		       rc, cause, count_in(out, cause), out);
	printf("# secret %s: refused by the loader, the host library, the CLI and the service\n",
	       what);
}

static void test_secret_files(void)
{
	char p[PATH_MAX + 32], target[PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s/secret-0640", tmp);
	T_EQ_INT(write_file(p, secret, sizeof(secret), 0640), 0);
	check_bad_secret("mode 0640", p, "has mode 0640");
	snprintf(p, sizeof(p), "%s/secret-0604", tmp);
	T_EQ_INT(write_file(p, secret, sizeof(secret), 0604), 0);
	check_bad_secret("mode 0604", p, "has mode 0604");
	snprintf(p, sizeof(p), "%s/secret-0620", tmp);
	T_EQ_INT(write_file(p, secret, sizeof(secret), 0620), 0);
	check_bad_secret("mode 0620 (group may write)", p, "has mode 0620");
	snprintf(p, sizeof(p), "%s/secret-other", tmp);
	T_EQ_INT(write_file(p, secret, sizeof(secret), 0600), 0);
	if (geteuid() == 0) {
		/* Root reads a secret only of its own: another user's file is refused. */
		T_EQ_INT(chown(p, OTHER_UID, OTHER_UID), 0);
		check_bad_secret("owned by uid 65534", p, "is owned by uid 65534");
	} else {
		printf("# SKIP secret owned by another user: needs root to chown (euid %u)\n",
		       (unsigned int)geteuid());
	}
	snprintf(target, sizeof(target), "%s/secret-target", tmp);
	T_EQ_INT(write_file(target, secret, sizeof(secret), 0600), 0);
	snprintf(p, sizeof(p), "%s/secret-link", tmp);
	T_EQ_INT(symlink(target, p), 0);
	check_bad_secret("symbolic link", p, "cannot open secret file");
	/* The good copy of the same bytes is accepted (the refusals were the file's, not the bytes'). */
	{
		uint8_t got[SDP_UROM_SECRET_LEN];

		T_OK(sdp_urom_secret_load(target, got));
		T_TRUE(memcmp(got, secret, sizeof(got)) == 0);
	}
}

/* ---- b. replay of a captured handshake ---- */

struct relay {
	int lfd;
	uint16_t port, to_port;
	uint8_t up[65536]; /* host -> service bytes */
	size_t up_len;
	uint8_t down[65536]; /* service -> host bytes */
	size_t down_len;
	int ok;
};

static void *relay_main(void *arg)
{
	struct relay *rl = arg;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(rl->to_port)};
	int64_t deadline = t_now_ms() + 20000;
	struct pollfd pf = {.fd = rl->lfd, .events = POLLIN};
	int c, s;

	if (poll(&pf, 1, 20000) != 1)
		return NULL;
	c = accept(rl->lfd, NULL, NULL);
	if (c < 0)
		return NULL;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(c);
		if (s >= 0)
			close(s);
		return NULL;
	}
	rl->ok = 1;
	while (t_now_ms() < deadline) {
		struct pollfd p[2] = {{.fd = c, .events = POLLIN}, {.fd = s, .events = POLLIN}};
		uint8_t buf[4096];
		ssize_t n;

		if (poll(p, 2, 200) <= 0)
			continue;
		if (p[0].revents) {
			n = recv(c, buf, sizeof(buf), 0);
			if (n <= 0)
				break;
			if (rl->up_len + (size_t)n <= sizeof(rl->up))
				memcpy(rl->up + rl->up_len, buf, (size_t)n),
					rl->up_len += (size_t)n;
			(void)send(s, buf, (size_t)n, MSG_NOSIGNAL);
		}
		if (p[1].revents) {
			n = recv(s, buf, sizeof(buf), 0);
			if (n <= 0)
				break;
			if (rl->down_len + (size_t)n <= sizeof(rl->down))
				memcpy(rl->down + rl->down_len, buf, (size_t)n),
					rl->down_len += (size_t)n;
			(void)send(c, buf, (size_t)n, MSG_NOSIGNAL);
		}
	}
	close(c);
	close(s);
	return NULL;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t frame_type(const uint8_t *p)
{
	return (uint16_t)(p[6] | p[7] << 8);
}

static void test_replay(void)
{
	static struct relay rl;
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	static struct t_raw r;
	struct sdp_urom_msg msg;
	char addr[64];
	pthread_t th;
	struct t_svc s;
	size_t hello_len, auth_len;
	uint8_t old_snonce[SDP_UROM_NONCE_LEN];
	int fails0, fails1;

	memset(&rl, 0, sizeof(rl));
	rl.to_port = d.port;
	rl.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	T_EQ_INT(bind(rl.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	T_EQ_INT(listen(rl.lfd, 1), 0);
	T_EQ_INT(getsockname(rl.lfd, (struct sockaddr *)&sa, &sl), 0);
	rl.port = ntohs(sa.sin_port);
	T_EQ_INT(pthread_create(&th, NULL, relay_main, &rl), 0);
	/* A real host through the relay. */
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", rl.port);
	setenv("SOFTDPU_UROM_SERVICE_ADDR", addr, 1);
	T_OK(t_svc_open(&s, 0));
	t_svc_close(&s);
	setenv("SOFTDPU_UROM_SERVICE_ADDR", d.addr, 1);
	pthread_join(th, NULL);
	close(rl.lfd);
	T_TRUE(rl.ok);
	/* The capture: HELLO, then AUTH (the frames the host sent first). */
	if (rl.up_len < 2 * SDP_UROM_HDR_LEN || frame_type(rl.up) != SDP_UROM_MSG_HELLO) {
		t_fail("capture: no HELLO first (%zu bytes)", rl.up_len);
		return;
	}
	hello_len = SDP_UROM_HDR_LEN + le32(rl.up + 16);
	if (rl.up_len < hello_len + SDP_UROM_HDR_LEN ||
	    frame_type(rl.up + hello_len) != SDP_UROM_MSG_AUTH) {
		t_fail("capture: no AUTH after the HELLO (%zu bytes)", rl.up_len);
		return;
	}
	auth_len = SDP_UROM_HDR_LEN + le32(rl.up + hello_len + 16);
	T_TRUE(hello_len + auth_len <= rl.up_len);
	/* The service's nonce in the captured CHALLENGE. */
	T_OK(sdp_urom_msg_unpack(rl.down, SDP_UROM_HDR_LEN + le32(rl.down + 16), &msg));
	T_EQ_INT(msg.hdr.type, SDP_UROM_MSG_CHALLENGE);
	memcpy(old_snonce, msg.u.challenge.nonce, sizeof(old_snonce));
	printf("# captured HELLO (%zu bytes) and AUTH (%zu bytes) of a real host\n", hello_len,
	       auth_len);

	fails0 = t_uromd_log_count(&d, "failed authentication");
	/* Replay, frame by frame as the host did. */
	T_OK(t_raw_connect(&r, d.port));
	T_OK(t_raw_send_bytes(&r, rl.up, hello_len));
	T_OK(t_raw_recv(&r, &msg, 5000));
	T_EQ_INT(msg.hdr.type, SDP_UROM_MSG_CHALLENGE);
	T_TRUE(memcmp(msg.u.challenge.nonce, old_snonce, sizeof(old_snonce)) != 0);
	T_OK(t_raw_send_bytes(&r, rl.up + hello_len, auth_len));
	T_OK(t_raw_recv(&r, &msg, 5000));
	T_EQ_INT(msg.hdr.type, SDP_UROM_MSG_REJECT);
	T_EQ_INT(msg.u.reject.status, DOCA_ERROR_AUTHENTICATION);
	/* Nothing more is accepted: the service closes the connection. */
	T_EQ_INT(t_raw_recv(&r, &msg, 5000), DOCA_ERROR_NOT_CONNECTED);
	t_raw_close(&r);
	/* Replayed in one piece (HELLO and AUTH back to back): refused the same way. */
	T_OK(t_raw_connect(&r, d.port));
	T_OK(t_raw_send_bytes(&r, rl.up, hello_len + auth_len));
	T_OK(t_raw_recv(&r, &msg, 5000));
	T_EQ_INT(msg.hdr.type, SDP_UROM_MSG_CHALLENGE);
	T_OK(t_raw_recv(&r, &msg, 5000));
	T_EQ_INT(msg.hdr.type, SDP_UROM_MSG_REJECT);
	T_EQ_INT(msg.u.reject.status, DOCA_ERROR_AUTHENTICATION);
	t_raw_close(&r);
	fails1 = t_uromd_log_count(&d, "failed authentication");
	T_EQ_INT(fails1 - fails0, 2);
	printf("# replayed handshake refused twice (REJECT AUTHENTICATION, logged)\n");
}

/* ---- c. another uid cannot attach ---- */

static void test_other_uid(void)
{
	static struct t_raw r, r2;
	int to_child[2], from_child[2], status = 0;
	uint8_t tok[SDP_UROM_TOKEN_LEN];
	uint32_t res[4] = {0};
	uint64_t graph;
	pid_t pid, child;

	if (geteuid() != 0) {
		printf("# SKIP another uid: dropping to uid %d needs root (euid %u)\n", OTHER_UID,
		       (unsigned int)geteuid());
		return;
	}
	T_OK(raw_open(&r, d.port, 0, &graph));
	T_OK(raw_spawn(&r, ATTACH_ID_ROOT, graph, NULL, &pid, tok));
	T_TRUE(pid > 0);
	T_EQ_INT(pipe2(to_child, O_CLOEXEC), 0);
	T_EQ_INT(pipe2(from_child, O_CLOEXEC), 0);
	fflush(stdout);
	child = fork();
	if (child == 0) {
		struct pollfd pf = {.fd = to_child[0], .events = POLLIN};
		static struct t_raw c;
		uint64_t g = 0;
		pid_t p;
		char b;

		if (setgroups(0, NULL) != 0 || setresgid(OTHER_UID, OTHER_UID, OTHER_UID) != 0 ||
		    setresuid(OTHER_UID, OTHER_UID, OTHER_UID) != 0) {
			res[0] = 0xdead;
		} else {
			/* This user knows the secret (in memory from before the drop). */
			res[0] = (uint32_t)raw_open(&c, d.port, OTHER_UID, &g);
			res[1] = (uint32_t)raw_spawn(&c, ATTACH_ID_ROOT, g, NULL, &p, tok);
			res[3] = !all_zero(tok, sizeof(tok));
			res[2] = (uint32_t)raw_spawn(&c, ATTACH_ID_OTHER, g, NULL, &p, NULL);
		}
		(void)write(from_child[1], res, sizeof(res));
		(void)poll(&pf, 1, 30000); /* keep its worker until the parent tried */
		(void)read(to_child[0], &b, 1);
		_exit(0);
	}
	T_TRUE(child > 0);
	close(to_child[0]);
	close(from_child[1]);
	{
		struct pollfd pf = {.fd = from_child[0], .events = POLLIN};

		if (poll(&pf, 1, 40000) != 1 ||
		    read(from_child[0], res, sizeof(res)) != sizeof(res))
			t_fail("the uid %d child did not report", OTHER_UID);
	}
	if (res[0] == 0xdead) {
		t_fail("the child could not drop to uid %d", OTHER_UID);
	} else {
		if (res[0] != DOCA_SUCCESS)
			t_fail("uid %d with the secret: handshake %s", OTHER_UID,
			       doca_error_get_name((doca_error_t)res[0]));
		if (res[1] != DOCA_ERROR_NOT_PERMITTED)
			t_fail("uid %d attaching to root's worker: %s, want NOT_PERMITTED",
			       OTHER_UID, doca_error_get_name((doca_error_t)res[1]));
		if (res[3])
			t_fail("the refused attach carried a token");
		if (res[2] != DOCA_SUCCESS)
			t_fail("uid %d spawning its own worker: %s", OTHER_UID,
			       doca_error_get_name((doca_error_t)res[2]));
		/* Root cannot attach to uid 65534's worker either. */
		T_OK(raw_open(&r2, d.port, 0, &graph));
		T_STATUS(raw_spawn(&r2, ATTACH_ID_OTHER, graph, NULL, &pid, tok),
			 DOCA_ERROR_NOT_PERMITTED);
		T_TRUE(all_zero(tok, sizeof(tok)));
		t_raw_close(&r2);
		/* Claiming uid 65534 over a local socket does not help: the kernel's uid counts. */
		T_OK(raw_open(&r2, d.port, OTHER_UID, &graph));
		T_STATUS(raw_spawn(&r2, ATTACH_ID_OTHER, graph, NULL, &pid, NULL),
			 DOCA_ERROR_NOT_PERMITTED);
		T_OK(raw_spawn(&r2, ATTACH_ID_ROOT, graph, NULL, &pid, NULL));
		t_raw_close(&r2);
		T_TRUE(t_uromd_log_count(&d, "claims uid 65534 but its socket belongs to uid 0") >=
		       1);
		T_TRUE(t_uromd_log_count(&d, "was spawned by uid 0; this host runs as uid 65534") ==
		       1);
		T_TRUE(t_uromd_log_count(&d, "was spawned by uid 65534; this host runs as uid 0") ==
		       2);
		printf("# uid %d: its attach to root's worker refused, root's attach to its worker "
		       "refused, a forged HELLO uid replaced by the kernel's\n",
		       OTHER_UID);
	}
	(void)write(to_child[1], "x", 1);
	close(to_child[1]);
	close(from_child[0]);
	if (!t_wait_child(child, 20000, &status))
		t_fail("the uid %d child did not exit", OTHER_UID);
	t_raw_close(&r);
}

/* ---- d. plugin scan ---- */

/* The "skipped" entry of path in a status document: its reason, or NULL. */
static const char *skipped_reason(struct json_object *root, const char *path)
{
	struct json_object *sk, *e, *v;

	if (!json_object_object_get_ex(root, "skipped", &sk))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(sk); i++) {
		e = json_object_array_get_idx(sk, i);
		if (json_object_object_get_ex(e, "path", &v) &&
		    strcmp(json_object_get_string(v), path) == 0 &&
		    json_object_object_get_ex(e, "reason", &v))
			return json_object_get_string(v);
	}
	return NULL;
}

static void expect_skipped(struct json_object *root, const char *path, const char *why)
{
	const char *r = skipped_reason(root, path);

	if (r == NULL || strstr(r, why) == NULL)
		t_fail("plugin scan: %s: want skipped with \"%s\", got %s", path, why,
		       r != NULL ? r : "not skipped");
}

static void test_plugin_scan(void)
{
	char good[PATH_MAX + 16], ww[PATH_MAX + 16], gw[PATH_MAX + 16], src[PATH_MAX + 32];
	char f[PATH_MAX + 64], plugin_path[3 * PATH_MAX + 64], dirs_src[PATH_MAX];
	static char json[1 << 20];
	const char *args[] = {"--plugin-path", plugin_path, NULL};
	static struct t_uromd s;
	struct json_object *root, *pl, *v;
	int n_ok = 0, found_ok = 0;

	snprintf(dirs_src, sizeof(dirs_src), "%s", getenv("UROM_PLUGIN_PATH"));
	*strchrnul(dirs_src, ';') = '\0';
	snprintf(src, sizeof(src), "%s/worker_graph.so", dirs_src);
	snprintf(good, sizeof(good), "%s/pgood", tmp);
	snprintf(ww, sizeof(ww), "%s/pworld", tmp);
	snprintf(gw, sizeof(gw), "%s/pgroup", tmp);
	T_EQ_INT(mkdir(good, 0755), 0);
	T_EQ_INT(mkdir(ww, 0755), 0);
	T_EQ_INT(mkdir(gw, 0755), 0);
	T_EQ_INT(chmod(ww, 01777), 0); /* sticky or not: others may add files */
	T_EQ_INT(chmod(gw, 0775), 0);
	snprintf(f, sizeof(f), "%s/ok_graph.so", good);
	T_EQ_INT(copy_file(src, f, 0755), 0);
	snprintf(f, sizeof(f), "%s/gw_graph.so", good);
	T_EQ_INT(copy_file(src, f, 0775), 0);
	snprintf(f, sizeof(f), "%s/ow_graph.so", good);
	T_EQ_INT(copy_file(src, f, 0757), 0);
	snprintf(f, sizeof(f), "%s/in_world_dir.so", ww);
	T_EQ_INT(copy_file(src, f, 0755), 0);
	snprintf(f, sizeof(f), "%s/in_group_dir.so", gw);
	T_EQ_INT(copy_file(src, f, 0755), 0);
	if (geteuid() == 0) {
		snprintf(f, sizeof(f), "%s/nobody_graph.so", good);
		T_EQ_INT(copy_file(src, f, 0755), 0);
		T_EQ_INT(chown(f, OTHER_UID, OTHER_UID), 0);
	}
	snprintf(plugin_path, sizeof(plugin_path), "%s;%s;%s", good, ww, gw);
	if (t_uromd_start(&s, args) != 0) {
		t_fail("daemon with plugin path %s did not start", plugin_path);
		t_uromd_export_env(&d);
		return;
	}
	T_OK(t_raw_status(s.port, s.secret_file, json, sizeof(json)));
	root = json_tokener_parse(json);
	T_TRUE(root != NULL);
	if (root != NULL && json_object_object_get_ex(root, "plugins", &pl)) {
		n_ok = (int)json_object_array_length(pl);
		for (int i = 0; i < n_ok; i++)
			if (json_object_object_get_ex(json_object_array_get_idx(pl, i), "name",
						      &v) &&
			    strcmp(json_object_get_string(v), "ok_graph") == 0)
				found_ok = 1;
	}
	T_EQ_INT(n_ok, 1);
	T_TRUE(found_ok);
	if (root != NULL) {
		snprintf(f, sizeof(f), "%s/gw_graph.so", good);
		expect_skipped(root, f, "plugin file writable by its group (mode 0775");
		snprintf(f, sizeof(f), "%s/ow_graph.so", good);
		expect_skipped(root, f, "plugin file writable by others (mode 0757");
		expect_skipped(root, ww, "plugin directory writable by others (mode 1777");
		expect_skipped(root, gw, "plugin directory writable by its group (mode 0775");
		if (geteuid() == 0) {
			snprintf(f, sizeof(f), "%s/nobody_graph.so", good);
			expect_skipped(root, f, "plugin file owned by uid 65534");
		}
		json_object_put(root);
	}
	/* Each logged as a warning once. */
	T_EQ_INT(t_uromd_log_count(&s, "writable by its group (mode 0775"), 2);
	T_EQ_INT(t_uromd_log_count(&s, "none of its files is loaded"), 2);
	if (t_failures != 0)
		t_print_log_tail("plugin scan daemon log", s.log_file, 4000);
	t_uromd_stop(&s);
	t_uromd_export_env(&d);
	printf("# plugin scan: writable or foreign plugin files and directories skipped\n");
}

/* ---- e. spawn environment ---- */

/* Whether the NUL-separated environ of pid holds exactly entry; -1 if unreadable. */
static int environ_has(pid_t pid, const char *entry)
{
	static char buf[1 << 20];
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	n = t_read_file(path, buf, sizeof(buf));
	if (n <= 0)
		return -1;
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
		if (strcmp(buf + i, entry) == 0)
			return 1;
	return 0;
}

/* Whether the environ of pid sets name at all. */
static int environ_sets(pid_t pid, const char *name)
{
	static char buf[1 << 20];
	char path[64];
	size_t len = strlen(name);
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	n = t_read_file(path, buf, sizeof(buf));
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
		if (strncmp(buf + i, name, len) == 0 && buf[i + (ssize_t)len] == '=')
			return 1;
	return 0;
}

static void test_spawn_env(void)
{
	static const char *loader[] = {"LD_PRELOAD=/tmp/x.so", "LD_LIBRARY_PATH=/tmp",
				       "MALLOC_CHECK_=3",      "GCONV_PATH=/tmp",
				       "UCX_MODULE_DIR=/tmp",  "SOFTDPU_PROVIDER_PATH=/tmp"};
	const char *env[] = {"SDP_TRUST_HOST_VAR=h1", "SDP_TRUST_SVC_VAR=from-host",
			     "UCX_LOG_LEVEL=warn", NULL};
	static struct t_raw r;
	uint64_t graph;
	pid_t pid = 0;

	T_OK(raw_open(&r, d.port, 0, &graph));
	for (size_t i = 0; i < sizeof(loader) / sizeof(loader[0]); i++) {
		const char *one[] = {loader[i], NULL};

		if (raw_spawn(&r, DOCA_UROM_WORKER_ID_ANY, graph, one, &pid, NULL) !=
		    DOCA_ERROR_NOT_PERMITTED)
			t_fail("spawn with %s: not refused with NOT_PERMITTED", loader[i]);
	}
	T_OK(raw_spawn(&r, DOCA_UROM_WORKER_ID_ANY, graph, env, &pid, NULL));
	if (pid > 0) {
		/* The service's own variables (set before it started), the host's (they win). */
		T_EQ_INT(environ_has(pid, "SDP_TRUST_SVC_ONLY=s1"), 1);
		T_EQ_INT(environ_has(pid, "SDP_TRUST_HOST_VAR=h1"), 1);
		T_EQ_INT(environ_has(pid, "SDP_TRUST_SVC_VAR=from-host"), 1);
		T_EQ_INT(environ_has(pid, "SDP_TRUST_SVC_VAR=s1"), 0);
		T_EQ_INT(environ_has(pid, "UCX_LOG_LEVEL=warn"), 1);
		T_EQ_INT(environ_has(pid, "UCX_NET_DEVICES=lo"), 1);
		/* What no host asked for and the service does not have stays out. */
		T_EQ_INT(environ_sets(pid, "LD_PRELOAD"), 0);
		T_EQ_INT(environ_sets(pid, "NOTIFY_SOCKET"), 0);
	}
	t_raw_close(&r);
	printf("# spawn environment: loader variables refused, service and host variables in "
	       "/proc/%d/environ\n",
	       (int)pid);
}

int main(void)
{
	snprintf(tmp, sizeof(tmp), "%s/sdp-trust-rules-%d-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	if (mkdtemp(tmp) == NULL) {
		t_fail("mkdtemp: %s", strerror(errno));
		T_DONE();
	}
	/* Variables of the service's own environment (the daemon inherits ours). */
	setenv("SDP_TRUST_SVC_ONLY", "s1", 1);
	setenv("SDP_TRUST_SVC_VAR", "s1", 1);
	unsetenv("LD_PRELOAD");
	unsetenv("NOTIFY_SOCKET");
	if (t_uromd_start(&d, NULL) != 0) {
		t_fail("daemon did not start");
		t_rm_rf(tmp);
		T_DONE();
	}
	T_OK(sdp_urom_secret_load(d.secret_file, secret));
	test_other_uid(); /* first: it forks, before this process runs UCX threads */
	test_spawn_env();
	test_plugin_scan();
	test_replay();
	test_secret_files();
	T_TRUE(t_uromd_alive(&d));
	if (t_failures != 0)
		t_print_log_tail("daemon log", d.log_file, 6000);
	t_uromd_stop(&d);
	t_rm_rf(tmp);
	T_DONE();
}
