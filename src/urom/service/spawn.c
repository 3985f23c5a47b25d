/*
 * softdpu-uromd: worker processes.
 *
 * A worker is softdpu-urom-worker started with fork + execve:
 *   softdpu-urom-worker --ctrl-fd 3 --worker-id ID --max-msg-size M -l LEVEL so_path:id ...
 * fd 3 is the worker's end of a SOCK_SEQPACKET socketpair (the control channel: SW_READY and
 * SW_STATS from the worker; SW_ADD_HOST, SW_DEL_HOST, SW_EXIT from the service). Its stdin is
 * /dev/null, its stdout and stderr go to <run dir>/worker-<id>-<pid>.log, one file per process:
 * an id released and asked for again while its old process still exits runs in two processes
 * for a moment, and their logs must not mix (the file is opened before fork under a name with a
 * per-daemon spawn number, then renamed once the pid is known). It holds no other descriptor: the
 * child closes everything else before execve (close_range, else a loop up to the descriptor
 * limit), the service's listener and host connections included. It runs in its own process group
 * (a Ctrl-C on a foreground service does not reach it), pinned with sched_setaffinity to the
 * CPUs it asked for that exist, with the environment of the service plus the requested
 * variables (loader variables refused unless --allow-loader-env: spawn_env_is_loader), plus
 * UCX_NET_DEVICES limited to the listen address's interface when nobody set it (main.c).
 * Everything the child needs is prepared before fork: between fork and execve it only calls
 * async-signal-safe functions (UCX may run threads in the service).
 *
 * Each host connection using the worker is an owner with its own dest_id and token. The
 * SPAWN_REPLY carries the worker's UCP address, so it goes out once SW_READY arrived. When the
 * last owner goes, the service sends SW_EXIT and kills the worker if it has not exited after
 * UROMD_WORKER_EXIT_MS. When a worker dies, every owner is told (WORKER_EXIT) and the worker is
 * forgotten; its log file stays for debugging. A broken control link kills the worker at once
 * (SIGKILL, reaped as any death): a control message the service cannot send (the socket full,
 * so it is never silently lost; the SPAWN in progress is refused with IO_FAILED), or one the
 * worker must not send (anything but one SW_READY and then SW_STATS, at most
 * UROMD_STATS_PER_S_MAX a second; the last SW_STATS is kept for the status). At most
 * CTRL_MSGS_PER_EVENT messages are read per event, so no worker holds the single-threaded
 * service.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "sdp_log.h"
#include "uromd.h"

SDP_LOG_COMPONENT("uromd");

extern char **environ;

#define CTRL_BUF_SIZE 65536
/* Control messages read per epoll event (a worker cannot hold the service in its loop). */
#define CTRL_MSGS_PER_EVENT 64
/* The worker's end of its control socket (--ctrl-fd), right after stdin, stdout and stderr. */
#define SPAWN_CTRL_FD 3

static void spawn_set_reason(struct sdp_urom_bytes *field, const char *reason)
{
	field->data = (const uint8_t *)reason;
	field->len = (uint32_t)strlen(reason);
}

/* Reply to a SPAWN request with an error; the cause is logged by the caller. */
static void spawn_reply_error(struct uromd *d, struct uromd_conn *conn, uint64_t req_id,
			      uint64_t worker_id, doca_error_t status, const char *reason)
{
	struct sdp_urom_msg msg;

	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_SPAWN_REPLY;
	msg.hdr.req_id = req_id;
	msg.u.spawn_reply.status = (uint32_t)status;
	msg.u.spawn_reply.worker_id = worker_id;
	spawn_set_reason(&msg.u.spawn_reply.reason, reason);
	uromd_conn_send(d, conn, &msg);
}

static void spawn_reply_ok(struct uromd *d, struct uromd_worker *w, struct uromd_owner *o)
{
	struct sdp_urom_msg msg;

	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_SPAWN_REPLY;
	msg.hdr.req_id = o->req_id;
	msg.u.spawn_reply.status = DOCA_SUCCESS;
	msg.u.spawn_reply.worker_id = w->id;
	msg.u.spawn_reply.dest_id = o->dest_id;
	msg.u.spawn_reply.pid = (uint32_t)w->pid;
	memcpy(msg.u.spawn_reply.token, o->token, SDP_UROM_TOKEN_LEN);
	msg.u.spawn_reply.worker_addr.data = w->addr;
	msg.u.spawn_reply.worker_addr.len = (uint32_t)w->addr_len;
	o->reply_pending = 0;
	uromd_conn_send(d, o->conn, &msg);
}

static void spawn_ctrl_close(struct uromd *d, struct uromd_worker *w)
{
	if (w->ctrl_fd < 0)
		return;
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, w->ctrl_fd, NULL);
	close(w->ctrl_fd);
	w->ctrl_fd = -1;
}

/*
 * The control link to w is broken (a message could not be sent, or the worker sent one it
 * must not): the worker is killed at once and reaped as usual, its hosts told as for any
 * death. The caller has logged why, once.
 */
static void spawn_worker_broken(struct uromd *d, struct uromd_worker *w)
{
	if (w->broken || w->state == UROMD_WORKER_DEAD)
		return;
	w->broken = 1;
	spawn_ctrl_close(d, w);
	kill(w->pid, SIGKILL);
	w->state = UROMD_WORKER_EXITING;
	w->deadline_ms = 0;
}

/*
 * Send one control message to a worker. A message that cannot be sent (its socket full: the
 * worker does not read it) is not dropped quietly: the link is broken and the worker killed
 * (logged once). IO_FAILED then, or when the link is closed already.
 */
static doca_error_t spawn_ctrl_send(struct uromd *d, struct uromd_worker *w,
				    struct sdp_urom_msg *msg)
{
	uint8_t buf[256];
	size_t len = 0;
	doca_error_t status;
	ssize_t n;

	if (w->ctrl_fd < 0)
		return DOCA_ERROR_IO_FAILED;
	status = sdp_urom_msg_pack(msg, buf, sizeof(buf), &len);
	if (status != DOCA_SUCCESS) {
		sdp_error("worker %" PRIu64 ": failed to pack %s: %s", w->id,
			  sdp_urom_msg_type_name(msg->hdr.type), doca_error_get_name(status));
		return status;
	}
	do
		n = send(w->ctrl_fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)len)
		return DOCA_SUCCESS;
	sdp_error("worker %" PRIu64 " pid %d: failed to send %s on its control socket (%s): "
		  "killing the worker",
		  w->id, (int)w->pid, sdp_urom_msg_type_name(msg->hdr.type),
		  n < 0 ? strerror(errno) : "short send");
	spawn_worker_broken(d, w);
	return DOCA_ERROR_IO_FAILED;
}

static doca_error_t spawn_ctrl_simple(struct uromd *d, struct uromd_worker *w, uint16_t type,
				      uint64_t dest_id, const uint8_t *token)
{
	struct sdp_urom_msg msg;

	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = type;
	if (type == SDP_UROM_MSG_SW_ADD_HOST) {
		msg.u.sw_add_host.dest_id = dest_id;
		memcpy(msg.u.sw_add_host.token, token, SDP_UROM_TOKEN_LEN);
	} else if (type == SDP_UROM_MSG_SW_DEL_HOST) {
		msg.u.sw_del_host.dest_id = dest_id;
	}
	return spawn_ctrl_send(d, w, &msg);
}

/* Ask a worker to exit; it is killed if still alive after UROMD_WORKER_EXIT_MS. */
static void spawn_worker_exit(struct uromd *d, struct uromd_worker *w)
{
	if (w->state == UROMD_WORKER_EXITING || w->state == UROMD_WORKER_DEAD)
		return;
	sdp_debug("worker %" PRIu64 " pid %d: no host left, asking it to exit", w->id, (int)w->pid);
	if (spawn_ctrl_simple(d, w, SDP_UROM_MSG_SW_EXIT, 0, NULL) != DOCA_SUCCESS)
		return; /* killed */
	w->state = UROMD_WORKER_EXITING;
	w->deadline_ms = uromd_now_ms() + UROMD_WORKER_EXIT_MS;
}

struct uromd_worker *uromd_worker_find(struct uromd *d, uint64_t id)
{
	/* A worker told to exit takes no new hosts: a request for its id starts a new process. */
	for (struct uromd_worker *w = d->workers; w != NULL; w = w->next)
		if (w->id == id &&
		    (w->state == UROMD_WORKER_STARTING || w->state == UROMD_WORKER_READY))
			return w;
	return NULL;
}

size_t uromd_worker_count_live(const struct uromd *d)
{
	size_t n = 0;

	for (const struct uromd_worker *w = d->workers; w != NULL; w = w->next)
		if (w->state == UROMD_WORKER_STARTING || w->state == UROMD_WORKER_READY)
			n++;
	return n;
}

static size_t spawn_conn_worker_count(const struct uromd *d, const struct uromd_conn *conn)
{
	size_t n = 0;

	for (const struct uromd_worker *w = d->workers; w != NULL; w = w->next) {
		if (w->state == UROMD_WORKER_DEAD)
			continue;
		for (size_t i = 0; i < w->num_owners; i++)
			if (w->owners[i].conn == conn) {
				n++;
				break;
			}
	}
	return n;
}

static int spawn_conn_owns(const struct uromd_worker *w, const struct uromd_conn *conn)
{
	for (size_t i = 0; i < w->num_owners; i++)
		if (w->owners[i].conn == conn)
			return 1;
	return 0;
}

/*
 * Add conn as an owner of w and tell the worker (SW_ADD_HOST). NO_MEMORY; IO_FAILED when the
 * worker could not be told (its link is broken: it is being killed, logged). Either way no
 * owner is left added.
 */
static doca_error_t spawn_owner_add(struct uromd *d, struct uromd_worker *w,
				    struct uromd_conn *conn, uint64_t req_id,
				    struct uromd_owner **o_p)
{
	struct uromd_owner *o;

	if (w->num_owners == w->cap_owners) {
		size_t ncap = w->cap_owners ? w->cap_owners * 2 : 4;
		struct uromd_owner *no = realloc(w->owners, ncap * sizeof(*no));

		if (no == NULL)
			return DOCA_ERROR_NO_MEMORY;
		w->owners = no;
		w->cap_owners = ncap;
	}
	o = &w->owners[w->num_owners++];
	memset(o, 0, sizeof(*o));
	o->conn = conn;
	o->dest_id = d->next_dest_id++;
	o->req_id = req_id;
	o->reply_pending = 1;
	sdp_urom_random(o->token, sizeof(o->token));
	/* Queued in the socket even before SW_READY: the worker reads it once it runs. */
	if (spawn_ctrl_simple(d, w, SDP_UROM_MSG_SW_ADD_HOST, o->dest_id, o->token) !=
	    DOCA_SUCCESS) {
		sodium_memzero(o, sizeof(*o));
		w->num_owners--;
		return DOCA_ERROR_IO_FAILED;
	}
	*o_p = o;
	return DOCA_SUCCESS;
}

static int spawn_env_valid(const struct sdp_urom_bytes *e, char *why, size_t why_size)
{
	const char *eq = memchr(e->data, '=', e->len);

	if (eq == NULL || eq == (const char *)e->data) {
		snprintf(why, why_size, "environment entry \"%.*s\" is not NAME=value", (int)e->len,
			 (const char *)e->data);
		return 0;
	}
	for (uint32_t i = 0; i < e->len; i++) {
		unsigned char c = e->data[i];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\0') {
			snprintf(why, why_size,
				 "environment entry \"%.*s\" contains a space or control character",
				 (int)e->len, (const char *)e->data);
			return 0;
		}
	}
	return 1;
}

/*
 * Variables through which a host could make a worker load code or data of its choosing: the
 * dynamic loader's (every LD_* name) and the ones glibc removes for secure-execution programs
 * (its unsecvars list, MALLOC_* as a prefix; TMPDIR, also on that list, is left to hosts: it
 * loads nothing), plus the module paths of the libraries a worker runs (UCX, softdpu's device
 * providers). A SPAWN setting one is refused unless the service runs with --allow-loader-env.
 * docs/urom-service.md lists them.
 */
static const char *const spawn_loader_prefixes[] = {"LD_", "MALLOC_"};
static const char *const spawn_loader_names[] = {
	"GCONV_PATH",
	"GETCONF_DIR",
	"GLIBC_TUNABLES",
	"HOSTALIASES",
	"LOCALDOMAIN",
	"LOCPATH",
	"NIS_PATH",
	"NLSPATH",
	"RESOLV_HOST_CONF",
	"RES_OPTIONS",
	"TZDIR",
	"UCX_MODULE_DIR",
	"SOFTDPU_PROVIDER_PATH",
};

/* 1 when the NAME=value entry e (already valid) sets a loader variable. */
static int spawn_env_is_loader(const struct sdp_urom_bytes *e)
{
	size_t name_len = (size_t)((const uint8_t *)memchr(e->data, '=', e->len) - e->data);

	for (size_t i = 0; i < sizeof(spawn_loader_prefixes) / sizeof(spawn_loader_prefixes[0]);
	     i++) {
		size_t plen = strlen(spawn_loader_prefixes[i]);

		if (name_len >= plen && memcmp(e->data, spawn_loader_prefixes[i], plen) == 0)
			return 1;
	}
	for (size_t i = 0; i < sizeof(spawn_loader_names) / sizeof(spawn_loader_names[0]); i++)
		if (strlen(spawn_loader_names[i]) == name_len &&
		    memcmp(e->data, spawn_loader_names[i], name_len) == 0)
			return 1;
	return 0;
}

/* Check the requested environment: INVALID_VALUE / NOT_PERMITTED with *why filled in. */
static doca_error_t spawn_env_check(const struct uromd *d, const struct sdp_urom_msg *req,
				    char *why, size_t why_size)
{
	for (uint32_t i = 0; i < req->u.spawn.num_env; i++) {
		const struct sdp_urom_bytes *e = &req->u.spawn.env[i];

		if (!spawn_env_valid(e, why, why_size))
			return DOCA_ERROR_INVALID_VALUE;
		if (!d->cfg.allow_loader_env && spawn_env_is_loader(e)) {
			snprintf(
				why, why_size,
				"environment entry \"%.*s\" sets a loader variable, which this "
				"service does not let hosts set (softdpu-uromd --allow-loader-env)",
				(int)e->len, (const char *)e->data);
			return DOCA_ERROR_NOT_PERMITTED;
		}
	}
	return DOCA_SUCCESS;
}

static void spawn_free_strv(char **v)
{
	if (v == NULL)
		return;
	for (size_t i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/* 1 when the request sets the variable name (name_len bytes, not NUL-terminated). */
static int spawn_req_sets(const struct sdp_urom_msg *req, const char *name, size_t name_len)
{
	for (uint32_t j = 0; j < req->u.spawn.num_env; j++) {
		const struct sdp_urom_bytes *e = &req->u.spawn.env[j];

		if (e->len > name_len && e->data[name_len] == '=' &&
		    memcmp(e->data, name, name_len) == 0)
			return 1;
	}
	return 0;
}

#define SPAWN_NET_DEVICES "UCX_NET_DEVICES"

/*
 * environ plus the requested NAME=value entries (which replace variables of the same name),
 * plus UCX_NET_DEVICES=<the listen address's interface> unless the request sets it
 * (d->worker_net_devices is set only when the service's own is unset or empty).
 */
static char **spawn_build_env(const struct uromd *d, const struct sdp_urom_msg *req)
{
	const size_t net_len = strlen(SPAWN_NET_DEVICES);
	int add_net = d->worker_net_devices[0] != '\0' &&
		      !spawn_req_sets(req, SPAWN_NET_DEVICES, net_len);
	size_t n_env = 0, n = 0;
	char **envp;

	while (environ != NULL && environ[n_env] != NULL)
		n_env++;
	envp = calloc(n_env + req->u.spawn.num_env + 2, sizeof(*envp));
	if (envp == NULL)
		return NULL;
	for (size_t i = 0; i < n_env; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t name_len = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);

		if (spawn_req_sets(req, environ[i], name_len) ||
		    (add_net && name_len == net_len &&
		     memcmp(environ[i], SPAWN_NET_DEVICES, net_len) == 0))
			continue;
		envp[n] = strdup(environ[i]);
		if (envp[n++] == NULL)
			goto err_free;
	}
	for (uint32_t j = 0; j < req->u.spawn.num_env; j++) {
		envp[n] = strndup((const char *)req->u.spawn.env[j].data, req->u.spawn.env[j].len);
		if (envp[n++] == NULL)
			goto err_free;
	}
	if (add_net &&
	    asprintf(&envp[n++], "%s=%s", SPAWN_NET_DEVICES, d->worker_net_devices) < 0) {
		envp[n - 1] = NULL; /* asprintf leaves its pointer undefined on failure */
		goto err_free;
	}
	return envp;

err_free:
	spawn_free_strv(envp);
	return NULL;
}

static char **spawn_build_argv(const struct uromd *d, const struct uromd_worker *w, int child_fd)
{
	size_t n = 0, max = 12 + d->scan.num_plugins;
	char **argv = calloc(max, sizeof(*argv));

	if (argv == NULL)
		return NULL;
	if ((argv[n++] = strdup(d->worker_bin)) == NULL ||
	    (argv[n++] = strdup("--ctrl-fd")) == NULL || asprintf(&argv[n++], "%d", child_fd) < 0 ||
	    (argv[n++] = strdup("--worker-id")) == NULL ||
	    asprintf(&argv[n++], "%" PRIu64, w->id) < 0 ||
	    (argv[n++] = strdup("--max-msg-size")) == NULL ||
	    asprintf(&argv[n++], "%" PRIu64, d->cfg.max_msg_size) < 0 ||
	    (argv[n++] = strdup("-l")) == NULL ||
	    asprintf(&argv[n++], "%u", d->cfg.log_level) < 0 ||
	    (argv[n++] = strdup("--heartbeat-ms")) == NULL ||
	    asprintf(&argv[n++], "%u", d->cfg.worker_timeout_ms / UROMD_HEARTBEATS_PER_TIMEOUT) < 0)
		goto err_free;
	for (size_t i = 0; i < d->scan.num_plugins; i++) {
		const struct uromd_plugin *p = &d->scan.plugins[i];

		if (!(w->plugins & p->id))
			continue;
		if (asprintf(&argv[n++], "%s:%" PRIu64, p->path, p->id) < 0)
			goto err_free;
	}
	return argv;

err_free:
	/* asprintf leaves its pointer undefined on failure */
	argv[n - 1] = NULL;
	spawn_free_strv(argv);
	return NULL;
}

/* Close every descriptor from low up (async-signal-safe; max_fd bounds the fallback loop). */
static void spawn_close_from(int low, int max_fd)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned int)low, ~0U, 0) == 0)
		return;
#endif
	for (int fd = low; fd < max_fd; fd++)
		close(fd);
}

/* The bound of the fallback loop: the descriptor limit (every fd of the service is below it). */
static int spawn_max_fd(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > INT_MAX)
		return 1 << 20; /* Linux's default NR_OPEN */
	return (int)rl.rlim_cur;
}

/*
 * Give the log file its final name, worker-<id>-<pid>.log (replacing a file of that name an
 * earlier process with the same pid left). On failure the spawn-numbered name stays: it is
 * unique too.
 */
static void spawn_log_name_pid(struct uromd_worker *w, const char *run_dir)
{
	char *path;

	if (asprintf(&path, "%s/worker-%" PRIu64 "-%d.log", run_dir, w->id, (int)w->pid) < 0) {
		sdp_warn("worker %" PRIu64 " pid %d: out of memory naming its log; it stays %s",
			 w->id, (int)w->pid, w->log_path);
		return;
	}
	if (rename(w->log_path, path) != 0) {
		sdp_warn("worker %" PRIu64 " pid %d: failed to rename its log %s to %s: %m", w->id,
			 (int)w->pid, w->log_path, path);
		free(path);
		return;
	}
	free(w->log_path);
	w->log_path = path;
}

/*
 * The child between fork and execve (async-signal-safe calls only): stdin, stdout/stderr and
 * the control socket become fds 0, 1, 2 and SPAWN_CTRL_FD, and every other descriptor is
 * closed, so a worker holds none of the service's (its listener, host connections, other
 * workers' control sockets, the epoll and signal fds), whether or not they are close-on-exec.
 */
static void __attribute__((noreturn))
spawn_child_exec(int nullfd, int logfd, int ctrl_fd, int max_fd, const cpu_set_t *cs, char **argv,
		 char **envp)
{
	static const char dup_msg[] = "softdpu-uromd: failed to set up the worker's descriptors\n";
	static const char exec_msg[] = "softdpu-uromd: execve of the worker binary failed\n";
	const int low = SPAWN_CTRL_FD + 1;
	struct sigaction sa;
	sigset_t none;
	int n, l, c;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGPIPE, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	/* Out of the way first: any of them may be 0..3 when the service started without them. */
	n = fcntl(nullfd, F_DUPFD, low);
	l = fcntl(logfd, F_DUPFD, low);
	c = fcntl(ctrl_fd, F_DUPFD, low);
	if (n < 0 || l < 0 || c < 0 || dup2(n, 0) < 0 || dup2(l, 1) < 0 || dup2(l, 2) < 0 ||
	    dup2(c, SPAWN_CTRL_FD) < 0) {
		if (write(2, dup_msg, sizeof(dup_msg) - 1) < 0)
			_exit(127);
		_exit(127);
	}
	spawn_close_from(low, max_fd);
	sched_setaffinity(0, sizeof(*cs), cs);
	execve(argv[0], argv, envp);
	if (write(2, exec_msg, sizeof(exec_msg) - 1) < 0)
		_exit(127);
	_exit(127);
}

/* Fork and exec the worker process; w->pid and w->ctrl_fd on success. */
static doca_error_t spawn_process(struct uromd *d, struct uromd_worker *w,
				  const struct sdp_urom_msg *req)
{
	struct uromd_cpuset want, pin;
	struct epoll_event ev;
	char **argv = NULL, **envp = NULL;
	int sv[2], logfd, nullfd, max_fd = spawn_max_fd();
	doca_error_t status;
	cpu_set_t cs;
	pid_t pid;

	/* CPUs: the requested set (or the service's), restricted to CPUs that exist here. */
	want = d->cpuset;
	if (req->u.spawn.has_cpuset)
		memcpy(want.bits, req->u.spawn.cpuset, sizeof(want.bits));
	uromd_cpuset_and(&want, &d->present, &pin);
	if (!uromd_cpuset_is_subset(&want, &d->present)) {
		char a[256], b[256];

		uromd_cpuset_format(&want, a, sizeof(a));
		uromd_cpuset_format(&d->present, b, sizeof(b));
		sdp_warn("worker %" PRIu64 ": cpuset %s names CPUs this machine lacks (it has %s); "
			 "pinning to the ones that exist",
			 w->id, a, b);
	}
	if (uromd_cpuset_empty(&pin))
		pin = d->present;
	CPU_ZERO(&cs);
	for (int c = 0; c < UROMD_MAX_CPUS && c < CPU_SETSIZE; c++)
		if ((pin.bits[c / 64] >> (c % 64)) & 1)
			CPU_SET(c, &cs);

	if (asprintf(&w->log_path, "%s/worker-%" PRIu64 "-spawn%" PRIu64 ".log", d->run_dir, w->id,
		     ++d->next_spawn_seq) < 0) {
		w->log_path = NULL;
		sdp_error("worker %" PRIu64 ": out of memory", w->id);
		return DOCA_ERROR_NO_MEMORY;
	}
	logfd = open(w->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	if (logfd < 0) {
		sdp_error("worker %" PRIu64 ": failed to open its log file %s: %m", w->id,
			  w->log_path);
		return DOCA_ERROR_IO_FAILED;
	}
	nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nullfd < 0) {
		sdp_error("failed to open /dev/null: %m");
		status = DOCA_ERROR_OPERATING_SYSTEM;
		goto err_close_log;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		sdp_error("worker %" PRIu64 ": socketpair failed: %m", w->id);
		status = DOCA_ERROR_OPERATING_SYSTEM;
		goto err_close_null;
	}
	argv = spawn_build_argv(d, w, SPAWN_CTRL_FD);
	envp = spawn_build_env(d, req);
	if (argv == NULL || envp == NULL) {
		sdp_error("worker %" PRIu64 ": out of memory building its command line", w->id);
		status = DOCA_ERROR_NO_MEMORY;
		goto err_free;
	}

	pid = fork();
	if (pid < 0) {
		sdp_error("worker %" PRIu64 ": fork failed: %m", w->id);
		status = DOCA_ERROR_OPERATING_SYSTEM;
		goto err_free;
	}
	if (pid == 0)
		spawn_child_exec(nullfd, logfd, sv[1], max_fd, &cs, argv, envp);
	close(sv[1]);
	w->pid = pid;
	spawn_log_name_pid(w, d->run_dir);
	w->ctrl_fd = sv[0];
	fcntl(w->ctrl_fd, F_SETFL, fcntl(w->ctrl_fd, F_GETFL) | O_NONBLOCK);
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = w;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, w->ctrl_fd, &ev) != 0) {
		/* Without the socket we still reap it; make it go away. */
		sdp_error("worker %" PRIu64 " pid %d: epoll_ctl failed: %m", w->id, (int)pid);
		close(w->ctrl_fd);
		w->ctrl_fd = -1;
		kill(pid, SIGKILL);
		w->state = UROMD_WORKER_EXITING;
	}
	sdp_info("worker %" PRIu64 " (gid %u, plugins %#" PRIx64 ") spawned: pid %d, log %s", w->id,
		 w->gid, w->plugins, (int)pid, w->log_path);
	spawn_free_strv(argv);
	spawn_free_strv(envp);
	close(nullfd);
	close(logfd);
	return DOCA_SUCCESS;

err_free:
	spawn_free_strv(argv);
	spawn_free_strv(envp);
	close(sv[0]);
	close(sv[1]);
err_close_null:
	close(nullfd);
err_close_log:
	/* No child ever wrote to it: the empty log this call created goes too. */
	unlink(w->log_path);
	close(logfd);
	return status;
}

static void spawn_worker_free(struct uromd_worker *w)
{
	/* The owners' tokens are credentials for the worker: not left in freed memory. */
	if (w->owners != NULL)
		sodium_memzero(w->owners, w->cap_owners * sizeof(*w->owners));
	free(w->owners);
	free(w->addr);
	free(w->log_path);
	free(w->stats);
	free(w);
}

void uromd_worker_spawn_request(struct uromd *d, struct uromd_conn *conn,
				const struct sdp_urom_msg *req)
{
	uint64_t req_id = req->hdr.req_id, id = req->u.spawn.worker_id, known = 0;
	struct uromd_worker *w;
	struct uromd_owner *o;
	char why[PATH_MAX + 1024];
	doca_error_t status;

	for (size_t i = 0; i < d->scan.num_plugins; i++)
		known |= d->scan.plugins[i].id;
	if (req->u.spawn.plugins == 0) {
		snprintf(why, sizeof(why),
			 "empty plugin mask: a worker runs at least one plugin (the service has "
			 "%#" PRIx64 ")",
			 known);
		status = DOCA_ERROR_INVALID_VALUE;
		goto err_reply;
	}
	if (req->u.spawn.plugins & ~known) {
		snprintf(why, sizeof(why),
			 "plugin mask %#" PRIx64
			 " names plugins this service does not have (it has "
			 "%#" PRIx64 ")",
			 req->u.spawn.plugins, known);
		status = DOCA_ERROR_INVALID_VALUE;
		goto err_reply;
	}
	status = spawn_env_check(d, req, why, sizeof(why));
	if (status != DOCA_SUCCESS)
		goto err_reply;
	if (req->u.spawn.has_cpuset) {
		struct uromd_cpuset want;

		memcpy(want.bits, req->u.spawn.cpuset, sizeof(want.bits));
		if (uromd_cpuset_empty(&want) || !uromd_cpuset_is_subset(&want, &d->cpuset)) {
			char a[256], b[256];

			uromd_cpuset_format(&want, a, sizeof(a));
			uromd_cpuset_format(&d->cpuset, b, sizeof(b));
			snprintf(
				why, sizeof(why),
				"cpuset \"%s\" is not a non-empty subset of the service's cpuset %s",
				a, b);
			status = DOCA_ERROR_INVALID_VALUE;
			goto err_reply;
		}
	}

	w = id != UROMD_WORKER_ID_ANY ? uromd_worker_find(d, id) : NULL;
	if (conn->max_workers != 0 && (w == NULL || !spawn_conn_owns(w, conn)) &&
	    spawn_conn_worker_count(d, conn) >= conn->max_workers) {
		snprintf(why, sizeof(why),
			 "this host connection already uses %u workers, its limit "
			 "(doca_urom_service_set_max_workers)",
			 conn->max_workers);
		status = DOCA_ERROR_FULL;
		goto err_reply;
	}

	if (w != NULL) {
		/* A worker serves one user: another uid's host gets no token for it. */
		if (conn->uid != w->uid) {
			snprintf(why, sizeof(why),
				 "worker %" PRIu64
				 " (pid %d) was spawned by uid %u; this host runs as uid %u%s, and "
				 "a worker takes hosts of its own uid only",
				 id, (int)w->pid, w->uid, conn->uid,
				 conn->uid_verified ? "" : " (as it claims: not a local socket)");
			status = DOCA_ERROR_NOT_PERMITTED;
			goto err_reply;
		}
		if (req->u.spawn.num_env != 0) {
			snprintf(why, sizeof(why),
				 "worker %" PRIu64
				 " already runs (pid %d): an environment can only be "
				 "given when a worker is spawned",
				 id, (int)w->pid);
			status = DOCA_ERROR_BAD_STATE;
			goto err_reply;
		}
		if (req->u.spawn.plugins & ~w->plugins) {
			snprintf(why, sizeof(why),
				 "worker %" PRIu64 " runs plugins %#" PRIx64
				 ", the request needs %#" PRIx64,
				 id, w->plugins, req->u.spawn.plugins);
			status = DOCA_ERROR_NOT_SUPPORTED;
			goto err_reply;
		}
		if (w->gid != req->u.spawn.gid)
			sdp_warn("host %s attaches to worker %" PRIu64
				 " of gid %u asking gid %u; the "
				 "worker keeps gid %u",
				 conn->peer, id, w->gid, req->u.spawn.gid, w->gid);
		status = spawn_owner_add(d, w, conn, req_id, &o);
		if (status == DOCA_ERROR_IO_FAILED) {
			spawn_reply_error(d, conn, req_id, id, status,
					  "the service's control link to the worker failed; the "
					  "worker was killed");
			return; /* logged by spawn_ctrl_send */
		}
		if (status != DOCA_SUCCESS) {
			snprintf(why, sizeof(why), "out of memory");
			goto err_reply;
		}
		sdp_info("host %s attached to worker %" PRIu64 " (pid %d) as dest %" PRIu64,
			 conn->peer, w->id, (int)w->pid, o->dest_id);
		if (w->state == UROMD_WORKER_READY)
			spawn_reply_ok(d, w, o);
		return;
	}

	if (d->cfg.max_workers != 0 && uromd_worker_count_live(d) >= d->cfg.max_workers) {
		snprintf(why, sizeof(why), "the service already runs %u workers, its --max-workers",
			 d->cfg.max_workers);
		status = DOCA_ERROR_FULL;
		goto err_reply;
	}
	if (access(d->worker_bin, X_OK) != 0) {
		snprintf(why, sizeof(why), "the worker binary %s cannot be run: %s", d->worker_bin,
			 strerror(errno));
		status = DOCA_ERROR_NOT_FOUND;
		goto err_reply;
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL) {
		snprintf(why, sizeof(why), "out of memory");
		status = DOCA_ERROR_NO_MEMORY;
		goto err_reply;
	}
	if (id == UROMD_WORKER_ID_ANY) {
		do
			id = UROMD_ANY_ID_BASE + d->next_any_id++;
		while (uromd_worker_find(d, id) != NULL);
	}
	w->id = id;
	w->gid = req->u.spawn.gid;
	w->plugins = req->u.spawn.plugins;
	w->uid = conn->uid;
	w->ctrl_fd = -1;
	w->state = UROMD_WORKER_STARTING;
	status = spawn_process(d, w, req);
	if (status != DOCA_SUCCESS) {
		spawn_worker_free(w);
		snprintf(why, sizeof(why), "failed to start the worker process: %s",
			 doca_error_get_name(status));
		spawn_reply_error(d, conn, req_id, id, status, why);
		return; /* logged by spawn_process */
	}
	if (w->state == UROMD_WORKER_STARTING)
		w->deadline_ms = uromd_now_ms() + UROMD_WORKER_READY_MS;
	w->next = d->workers;
	d->workers = w;
	status = spawn_owner_add(d, w, conn, req_id, &o);
	if (status == DOCA_ERROR_IO_FAILED) {
		spawn_reply_error(d, conn, req_id, id, status,
				  "the service's control link to the worker failed; the worker "
				  "was killed");
	} else if (status != DOCA_SUCCESS) {
		sdp_error("worker %" PRIu64 ": out of memory recording its host", w->id);
		spawn_reply_error(d, conn, req_id, id, DOCA_ERROR_NO_MEMORY, "out of memory");
		spawn_worker_exit(d, w);
	}
	return;

err_reply:
	if (id == UROMD_WORKER_ID_ANY)
		sdp_warn("host %s: spawn of a worker (id ANY) refused: %s", conn->peer, why);
	else
		sdp_warn("host %s: spawn of worker %" PRIu64 " refused: %s", conn->peer, id, why);
	spawn_reply_error(d, conn, req_id, id, status, why);
}

/* Remove owner i of w (telling the worker); the last one makes the worker exit. */
static void spawn_owner_remove(struct uromd *d, struct uromd_worker *w, size_t i)
{
	/* A failure kills the worker (its other hosts get WORKER_EXIT): the host stays unknown. */
	if (w->ctrl_fd >= 0)
		(void)spawn_ctrl_simple(d, w, SDP_UROM_MSG_SW_DEL_HOST, w->owners[i].dest_id, NULL);
	w->owners[i] = w->owners[--w->num_owners];
	sodium_memzero(&w->owners[w->num_owners], sizeof(w->owners[0]));
	if (w->num_owners == 0)
		spawn_worker_exit(d, w);
}

/* Remember that conn used worker w (dest dest_id) when it died (see struct uromd_gone). */
static void spawn_gone_add(struct uromd *d, struct uromd_conn *conn, uint64_t worker_id,
			   uint64_t dest_id)
{
	if (d->num_gone == UROMD_GONE_MAX) {
		memmove(d->gone, d->gone + 1, (d->num_gone - 1) * sizeof(*d->gone));
		d->num_gone--;
	}
	if (d->num_gone == d->cap_gone) {
		size_t ncap = d->cap_gone ? d->cap_gone * 2 : 8;
		struct uromd_gone *ng = realloc(d->gone, ncap * sizeof(*ng));

		if (ng == NULL)
			return; /* its RELEASE is then answered NOT_FOUND, with a warning */
		d->gone = ng;
		d->cap_gone = ncap;
	}
	d->gone[d->num_gone].conn = conn;
	d->gone[d->num_gone].worker_id = worker_id;
	d->gone[d->num_gone].dest_id = dest_id;
	d->num_gone++;
}

/* Forget entry i of d->gone (the array goes when empty). */
static void spawn_gone_remove(struct uromd *d, size_t i)
{
	/* In order: the oldest is dropped first when the list is full. */
	memmove(d->gone + i, d->gone + i + 1, (d->num_gone - i - 1) * sizeof(*d->gone));
	if (--d->num_gone == 0) {
		free(d->gone);
		d->gone = NULL;
		d->cap_gone = 0;
	}
}

/*
 * conn's RELEASE of (worker_id, dest_id): a live worker that has this owner (running, or
 * exiting but not reaped yet), else a dead one it was told about. NOT_FOUND otherwise.
 */
static doca_error_t spawn_release(struct uromd *d, struct uromd_conn *conn, uint64_t worker_id,
				  uint64_t dest_id)
{
	for (struct uromd_worker *w = d->workers; w != NULL; w = w->next) {
		if (w->id != worker_id || w->state == UROMD_WORKER_DEAD)
			continue;
		for (size_t i = 0; i < w->num_owners; i++) {
			if (w->owners[i].conn == conn && w->owners[i].dest_id == dest_id) {
				sdp_info("host %s released worker %" PRIu64 " (dest %" PRIu64 ")",
					 conn->peer, w->id, dest_id);
				spawn_owner_remove(d, w, i);
				return DOCA_SUCCESS;
			}
		}
	}
	for (size_t i = 0; i < d->num_gone; i++) {
		if (d->gone[i].conn == conn && d->gone[i].worker_id == worker_id &&
		    d->gone[i].dest_id == dest_id) {
			sdp_debug("host %s released worker %" PRIu64 " (dest %" PRIu64
				  "), which had died already",
				  conn->peer, worker_id, dest_id);
			spawn_gone_remove(d, i);
			return DOCA_SUCCESS;
		}
	}
	return DOCA_ERROR_NOT_FOUND;
}

void uromd_worker_release_request(struct uromd *d, struct uromd_conn *conn,
				  const struct sdp_urom_msg *req)
{
	struct sdp_urom_msg msg;
	doca_error_t status;

	status = spawn_release(d, conn, req->u.release.worker_id, req->u.release.dest_id);
	if (status != DOCA_SUCCESS)
		sdp_warn("host %s released worker %" PRIu64 " dest %" PRIu64
			 ", which it does not use",
			 conn->peer, req->u.release.worker_id, req->u.release.dest_id);
	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_RELEASE_REPLY;
	msg.hdr.req_id = req->hdr.req_id;
	msg.u.release_reply.status = (uint32_t)status;
	uromd_conn_send(d, conn, &msg);
}

void uromd_worker_drop_conn(struct uromd *d, struct uromd_conn *conn)
{
	for (size_t i = 0; i < d->num_gone;) {
		if (d->gone[i].conn == conn)
			spawn_gone_remove(d, i);
		else
			i++;
	}
	for (struct uromd_worker *w = d->workers; w != NULL; w = w->next) {
		size_t i = 0;

		while (i < w->num_owners) {
			if (w->owners[i].conn == conn)
				spawn_owner_remove(d, w, i);
			else
				i++;
		}
	}
}

static void spawn_handle_ready(struct uromd *d, struct uromd_worker *w,
			       const struct sdp_urom_msg *msg)
{
	if (w->ready_seen) {
		sdp_error("worker %" PRIu64 " pid %d: SW_READY again on its control socket: a "
			  "broken worker, killing it",
			  w->id, (int)w->pid);
		spawn_worker_broken(d, w);
		return;
	}
	w->ready_seen = 1;
	if (w->state != UROMD_WORKER_STARTING) {
		/*
		 * Told to exit before it was ready (its last host left, or its ready deadline
		 * passed): the one SW_READY it sends on the way is no fault. It exits on SW_EXIT.
		 */
		sdp_debug("worker %" PRIu64 " pid %d: ready while exiting; ignored", w->id,
			  (int)w->pid);
		return;
	}
	if (msg->u.sw_ready.status != DOCA_SUCCESS) {
		doca_error_t status = (doca_error_t)msg->u.sw_ready.status;

		sdp_error("worker %" PRIu64 " pid %d failed to start: %s (see %s)", w->id,
			  (int)w->pid, doca_error_get_name(status), w->log_path);
		for (size_t i = 0; i < w->num_owners; i++)
			if (w->owners[i].reply_pending) {
				w->owners[i].reply_pending = 0;
				spawn_reply_error(d, w->owners[i].conn, w->owners[i].req_id, w->id,
						  status, "the worker failed to load its plugins");
			}
		w->num_owners = 0;
		spawn_worker_exit(d, w);
		return;
	}
	free(w->addr);
	w->addr = malloc(msg->u.sw_ready.worker_addr.len ? msg->u.sw_ready.worker_addr.len : 1);
	if (w->addr == NULL) {
		sdp_error("worker %" PRIu64 ": out of memory", w->id);
		spawn_worker_exit(d, w);
		return;
	}
	memcpy(w->addr, msg->u.sw_ready.worker_addr.data, msg->u.sw_ready.worker_addr.len);
	w->addr_len = msg->u.sw_ready.worker_addr.len;
	w->state = UROMD_WORKER_READY;
	w->deadline_ms = 0;
	w->heard_ms = uromd_now_ms();
	sdp_debug("worker %" PRIu64 " pid %d ready (address %zu bytes)", w->id, (int)w->pid,
		  w->addr_len);
	for (size_t i = 0; i < w->num_owners; i++)
		if (w->owners[i].reply_pending)
			spawn_reply_ok(d, w, &w->owners[i]);
}

/* Copy a parsed SW_STATS string (printable, bounded by the parser) into dst. */
static void spawn_stats_str(char *dst, size_t size, const struct sdp_urom_bytes *b)
{
	size_t n = b->len < size ? b->len : size - 1;

	if (n > 0)
		memcpy(dst, b->data, n);
	dst[n] = '\0';
}

/*
 * SW_STATS: keep the worker's last snapshot for the status. Only after its SW_READY, and at
 * most UROMD_STATS_PER_S_MAX a second (a worker sends about two): otherwise a broken worker.
 */
static void spawn_handle_stats(struct uromd *d, struct uromd_worker *w,
			       const struct sdp_urom_msg *msg)
{
	const typeof(msg->u.sw_stats) *in = &msg->u.sw_stats;
	struct uromd_worker_stats *st;
	uint64_t now = uromd_now_ms();

	if (!w->ready_seen) {
		sdp_error("worker %" PRIu64 " pid %d: SW_STATS before SW_READY: a broken worker, "
			  "killing it",
			  w->id, (int)w->pid);
		spawn_worker_broken(d, w);
		return;
	}
	if (w->stats == NULL) {
		w->stats = calloc(1, sizeof(*w->stats));
		if (w->stats == NULL) {
			sdp_warn("worker %" PRIu64 ": out of memory for its counters; not shown",
				 w->id);
			return;
		}
	}
	st = w->stats;
	if (now - st->window_ms >= 1000 || st->window_ms == 0) {
		st->window_ms = now;
		st->window_count = 0;
	}
	if (++st->window_count > UROMD_STATS_PER_S_MAX) {
		sdp_error("worker %" PRIu64 " pid %d: more than %d SW_STATS in a second: a broken "
			  "worker, killing it",
			  w->id, (int)w->pid, UROMD_STATS_PER_S_MAX);
		spawn_worker_broken(d, w);
		return;
	}
	st->have = 1;
	st->recv_ms = now;
	st->uptime_ms = in->uptime_ms;
	st->cmds = in->cmds;
	st->cmd_bytes = in->cmd_bytes;
	st->cmds_refused = in->cmds_refused;
	st->notifs = in->notifs;
	st->notif_bytes = in->notif_bytes;
	st->notifs_error = in->notifs_error;
	st->notifs_dropped = in->notifs_dropped;
	st->connects_refused = in->connects_refused;
	st->domains_committed = in->domains_committed;
	st->hosts_connected = in->hosts_connected;
	st->hosts_total = in->hosts_total;
	spawn_stats_str(st->ucx_version, sizeof(st->ucx_version), &in->ucx_version);
	spawn_stats_str(st->ucx_tls, sizeof(st->ucx_tls), &in->ucx_tls);
	spawn_stats_str(st->ucx_net_devices, sizeof(st->ucx_net_devices), &in->ucx_net_devices);
	spawn_stats_str(st->ucx_resources, sizeof(st->ucx_resources), &in->ucx_resources);
}

void uromd_worker_ctrl_event(struct uromd *d, struct uromd_worker *w, uint32_t events)
{
	static uint8_t buf[CTRL_BUF_SIZE];

	(void)events;
	/* Bounded: the epoll set is level-triggered, the loop comes back for the rest. */
	for (int count = 0; w->ctrl_fd >= 0 && count < CTRL_MSGS_PER_EVENT; count++) {
		struct sdp_urom_msg msg;
		doca_error_t status;
		char why[160];
		ssize_t n;

		n = recv(w->ctrl_fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			if (n < 0)
				sdp_warn("worker %" PRIu64 " pid %d: control socket error: %m",
					 w->id, (int)w->pid);
			else
				sdp_debug("worker %" PRIu64 " pid %d closed its control socket",
					  w->id, (int)w->pid);
			spawn_ctrl_close(d, w);
			if (w->state == UROMD_WORKER_STARTING || w->state == UROMD_WORKER_READY) {
				w->state = UROMD_WORKER_EXITING;
				w->deadline_ms = uromd_now_ms() + UROMD_WORKER_EXIT_MS;
			}
			return;
		}
		/* Anything heard counts for liveness; a bad message kills the worker anyway. */
		w->heard_ms = uromd_now_ms();
		/* A worker sends one SW_READY, then SW_STATS: anything else is a broken worker. */
		status = sdp_urom_msg_unpack_why(buf, (size_t)n, &msg, why, sizeof(why));
		if (status != DOCA_SUCCESS) {
			sdp_error("worker %" PRIu64 " pid %d: bad control message (%zd bytes): %s; "
				  "a broken worker, killing it",
				  w->id, (int)w->pid, n,
				  status == DOCA_ERROR_NOT_SUPPORTED ? "another protocol version" :
								       why);
			spawn_worker_broken(d, w);
			return;
		}
		if (msg.hdr.type == SDP_UROM_MSG_SW_STATS) {
			spawn_handle_stats(d, w, &msg);
			continue;
		}
		if (msg.hdr.type != SDP_UROM_MSG_SW_READY) {
			sdp_error("worker %" PRIu64 " pid %d: unexpected control message %s; a "
				  "broken worker, killing it",
				  w->id, (int)w->pid, sdp_urom_msg_type_name(msg.hdr.type));
			spawn_worker_broken(d, w);
			return;
		}
		spawn_handle_ready(d, w, &msg);
	}
}

static void spawn_describe_exit(int wstatus, char *buf, size_t size)
{
	if (WIFEXITED(wstatus))
		snprintf(buf, size, "exited with status %d", WEXITSTATUS(wstatus));
	else if (WIFSIGNALED(wstatus))
		snprintf(buf, size, "killed by signal %d (%s)", WTERMSIG(wstatus),
			 strsignal(WTERMSIG(wstatus)));
	else
		snprintf(buf, size, "ended with wait status %#x", wstatus);
}

static void spawn_worker_died(struct uromd *d, struct uromd_worker *w, int wstatus)
{
	struct uromd_worker **pp;
	char how[128];
	int expected = w->state == UROMD_WORKER_EXITING;

	spawn_describe_exit(wstatus, how, sizeof(how));
	if (expected && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)
		sdp_info("worker %" PRIu64 " pid %d %s", w->id, (int)w->pid, how);
	else
		sdp_warn("worker %" PRIu64 " pid %d %s (log %s)", w->id, (int)w->pid, how,
			 w->log_path);
	w->state = UROMD_WORKER_DEAD;
	spawn_ctrl_close(d, w);
	for (size_t i = 0; i < w->num_owners; i++) {
		struct uromd_owner *o = &w->owners[i];

		if (o->reply_pending) {
			char why[192];

			snprintf(why, sizeof(why), "the worker process %s before it was ready",
				 how);
			spawn_reply_error(d, o->conn, o->req_id, w->id, DOCA_ERROR_IO_FAILED, why);
		} else {
			struct sdp_urom_msg msg;

			memset(&msg, 0, sizeof(msg));
			msg.hdr.type = SDP_UROM_MSG_WORKER_EXIT;
			msg.u.worker_exit.worker_id = w->id;
			msg.u.worker_exit.exit_status = wstatus;
			uromd_conn_send(d, o->conn, &msg);
			spawn_gone_add(d, o->conn, w->id, o->dest_id);
		}
	}
	for (pp = &d->workers; *pp != NULL; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	spawn_worker_free(w);
}

void uromd_worker_reap(struct uromd *d)
{
	int died = 0;

	for (;;) {
		struct uromd_worker *w;
		int wstatus;
		pid_t pid;

		pid = waitpid(-1, &wstatus, WNOHANG);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid <= 0) {
			/* Their logs stay for debugging, up to --max-worker-logs of them. */
			if (died)
				uromd_worker_logs_prune(d);
			return;
		}
		for (w = d->workers; w != NULL; w = w->next)
			if (w->pid == pid)
				break;
		if (w == NULL) {
			sdp_debug("reaped pid %d, not a worker", (int)pid);
			continue;
		}
		spawn_worker_died(d, w, wstatus);
		died = 1;
	}
}

/*
 * Liveness: a ready worker heard nothing from for cfg.worker_timeout_ms (stopped, stuck in a
 * plugin, or its loop no longer turns) is killed and reaped like any death, so its hosts get
 * WORKER_EXIT and their tasks complete with IO_FAILED. Returns its deadline, 0 = none.
 */
static uint64_t spawn_liveness(struct uromd *d, struct uromd_worker *w, uint64_t now)
{
	uint64_t due;

	if (d->cfg.worker_timeout_ms == 0 || w->state != UROMD_WORKER_READY || w->broken)
		return 0;
	due = w->heard_ms + d->cfg.worker_timeout_ms;
	if (now < due)
		return due;
	sdp_error("worker %" PRIu64 " pid %d: unresponsive, nothing heard for %" PRIu64
		  " ms (--worker-timeout %u); killing it (log %s)",
		  w->id, (int)w->pid, now - w->heard_ms, d->cfg.worker_timeout_ms, w->log_path);
	w->unresponsive = 1;
	d->workers_unresponsive++;
	spawn_worker_broken(d, w);
	return 0;
}

uint64_t uromd_worker_timers(struct uromd *d, uint64_t now)
{
	uint64_t next = 0;

	for (struct uromd_worker *w = d->workers; w != NULL; w = w->next) {
		uint64_t live = spawn_liveness(d, w, now);

		if (live != 0 && (next == 0 || live < next))
			next = live;
		if (w->deadline_ms == 0)
			continue;
		if (now >= w->deadline_ms) {
			if (w->state == UROMD_WORKER_STARTING)
				sdp_error("worker %" PRIu64
					  " pid %d did not report ready within %d "
					  "ms; killing it (log %s)",
					  w->id, (int)w->pid, UROMD_WORKER_READY_MS, w->log_path);
			else
				sdp_warn("worker %" PRIu64
					 " pid %d did not exit within %d ms; killing "
					 "it",
					 w->id, (int)w->pid, UROMD_WORKER_EXIT_MS);
			kill(w->pid, SIGKILL);
			w->state = UROMD_WORKER_EXITING;
			w->deadline_ms = 0;
			continue;
		}
		if (next == 0 || w->deadline_ms < next)
			next = w->deadline_ms;
	}
	return next;
}

/* Wait for SIGCHLD on sigfd (bounded) and reap. */
static void spawn_wait_children(struct uromd *d, int sigfd, uint64_t deadline)
{
	while (d->workers != NULL) {
		uint64_t now = uromd_now_ms();
		struct pollfd p = {.fd = sigfd, .events = POLLIN};

		uromd_worker_reap(d);
		if (d->workers == NULL || now >= deadline)
			return;
		if (poll(&p, 1, (int)(deadline - now)) > 0) {
			struct signalfd_siginfo si;

			while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				;
		}
	}
}

void uromd_worker_shutdown_all(struct uromd *d, int sigfd)
{
	if (d->workers == NULL)
		return;
	{
		size_t n = 0;

		for (struct uromd_worker *w = d->workers; w != NULL; w = w->next)
			n++;
		sdp_info("stopping %zu worker(s)", n);
	}
	for (struct uromd_worker *w = d->workers; w != NULL; w = w->next) {
		/* Owners stay: each host gets WORKER_EXIT when its worker is reaped. */
		if (w->state == UROMD_WORKER_STARTING || w->state == UROMD_WORKER_READY) {
			(void)spawn_ctrl_simple(d, w, SDP_UROM_MSG_SW_EXIT, 0, NULL);
			w->state = UROMD_WORKER_EXITING;
		}
	}
	spawn_wait_children(d, sigfd, uromd_now_ms() + UROMD_WORKER_EXIT_MS);
	for (struct uromd_worker *w = d->workers; w != NULL; w = w->next) {
		sdp_warn("worker %" PRIu64 " pid %d did not exit within %d ms; killing it", w->id,
			 (int)w->pid, UROMD_WORKER_EXIT_MS);
		kill(w->pid, SIGKILL);
	}
	spawn_wait_children(d, sigfd, uromd_now_ms() + 2000);
	while (d->workers != NULL) {
		struct uromd_worker *w = d->workers;

		sdp_error("worker %" PRIu64 " pid %d could not be reaped", w->id, (int)w->pid);
		spawn_ctrl_close(d, w);
		d->workers = w->next;
		spawn_worker_free(w);
	}
}
