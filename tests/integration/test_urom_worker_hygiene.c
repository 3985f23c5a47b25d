/*
 * Integration: what a worker process gets from the service, against a real daemon.
 *  - Descriptors: a worker holds none of the daemon's sockets or pipes (its listener, the host
 *    connections, other workers' control sockets): its fd 3 is its own control socket and
 *    nothing it shares with the daemon is open in it.
 *  - Environment: a host may not set loader variables (LD_PRELOAD, GCONV_PATH, MALLOC_*, ...)
 *    for a worker: the spawn is refused with DOCA_ERROR_NOT_PERMITTED, logged once by the
 *    service, unless the daemon runs with --allow-loader-env (logged at its start); then the
 *    worker runs with them.
 *  - A worker that dies and is then stopped by its host leaves no warning in the service's log
 *    (the host's RELEASE of a worker the service reported dead is expected, not a mistake).
 *  - A daemon listening on 127.0.0.1 whose environment lacks UCX_NET_DEVICES gives its workers
 *    UCX_NET_DEVICES=lo: their UCX TCP listeners are bound to loopback only (they used to
 *    listen on every interface). Nothing is sent to any address but loopback.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <dirent.h>

#include "softdpu/urom.h"
#include "t_urom.h"
#include "t_uromd.h"

#define T_PRELOAD "LD_PRELOAD=/nonexistent/sdp-test-preload.so"

static struct t_uromd d;
static struct t_svc s;
static struct t_loop loop;

static struct t_worker_cfg graph_cfg(void)
{
	struct t_worker_cfg c = {
		.id = DOCA_UROM_WORKER_ID_ANY, .plugins = s.graph_id, .max_inflight = 16};

	return c;
}

static int log_count(const char *needle)
{
	return t_uromd_log_count(&d, needle);
}

/* The "socket:[ino]" / "pipe:[ino]" targets of pid's descriptors (count returned, at most max). */
static int shared_kind_fds(pid_t pid, char names[][64], int fds[], int max)
{
	char dir_path[64], link_path[PATH_MAX], target[64];
	struct dirent *de;
	DIR *dir;
	int n = 0;

	snprintf(dir_path, sizeof(dir_path), "/proc/%d/fd", (int)pid);
	dir = opendir(dir_path);
	if (dir == NULL) {
		t_fail("cannot list %s", dir_path);
		return 0;
	}
	while ((de = readdir(dir)) != NULL && n < max) {
		ssize_t len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(link_path, sizeof(link_path), "%s/%s", dir_path, de->d_name);
		len = readlink(link_path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (strncmp(target, "socket:", 7) != 0 && strncmp(target, "pipe:", 5) != 0)
			continue;
		snprintf(names[n], sizeof(names[n]), "%s", target);
		fds[n++] = atoi(de->d_name);
	}
	closedir(dir);
	return n;
}

/* No socket or pipe of the daemon is open in the worker; its fd 3 is a socket of its own. */
static void check_worker_fds(pid_t worker)
{
	static char dn[1024][64], wn[1024][64];
	static int dfd[1024], wfd[1024];
	int nd = shared_kind_fds(d.pid, dn, dfd, 1024), nw = shared_kind_fds(worker, wn, wfd, 1024);
	int have_ctrl = 0;

	T_TRUE(nd > 0); /* the daemon listens and has our connection */
	for (int i = 0; i < nw; i++) {
		if (wfd[i] == 3 && strncmp(wn[i], "socket:", 7) == 0)
			have_ctrl = 1;
		for (int j = 0; j < nd; j++)
			if (strcmp(wn[i], dn[j]) == 0)
				t_fail("worker %d holds the daemon's %s (its fd %d, the daemon's fd %d)",
				       (int)worker, wn[i], wfd[i], dfd[j]);
	}
	if (!have_ctrl)
		t_fail("worker %d: fd 3 is not its control socket", (int)worker);
}

static void test_fds(void)
{
	struct t_worker_cfg cfg = graph_cfg();
	struct doca_urom_worker *w1 = NULL, *w2 = NULL;
	uint32_t pid1 = 0, pid2 = 0;

	/* Two workers: the second must not hold the first's control socket either. */
	T_OK(t_worker_start(&s, s.pe, &cfg, &w1));
	T_OK(t_worker_start(&s, s.pe, &cfg, &w2));
	T_OK(sdp_urom_worker_get_pid(w1, &pid1));
	T_OK(sdp_urom_worker_get_pid(w2, &pid2));
	if (pid1 > 0 && pid2 > 0) {
		check_worker_fds((pid_t)pid1);
		check_worker_fds((pid_t)pid2);
	}
	T_OK(t_loop_one(&loop, w2, s.pe, NULL, 0));
	t_worker_close(&s, s.pe, w1);
	t_worker_close(&s, s.pe, w2);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
}

/* Spawn with one environment entry; returns the outcome, the worker's pid in *pid_p. */
static doca_error_t spawn_env(const char *entry, struct doca_urom_worker **w_p, uint32_t *pid_p)
{
	struct t_worker_cfg cfg = graph_cfg();
	char *env[1] = {(char *)entry};
	doca_error_t st;

	cfg.env = env;
	cfg.env_count = 1;
	*pid_p = 0;
	st = t_worker_start(&s, s.pe, &cfg, w_p);
	if (st == DOCA_SUCCESS)
		T_OK(sdp_urom_worker_get_pid(*w_p, pid_p));
	return st;
}

static void test_loader_env_refused(void)
{
	static const char *const refused[] = {T_PRELOAD,
					      "LD_LIBRARY_PATH=/nonexistent",
					      "LD_AUDIT=/nonexistent.so",
					      "GCONV_PATH=/nonexistent",
					      "MALLOC_CHECK_=3",
					      "GLIBC_TUNABLES=glibc.malloc.check=3"};
	struct doca_urom_worker *w = NULL;
	uint32_t pid = 0;

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		doca_error_t st = spawn_env(refused[i], &w, &pid);

		t_expect_refused(st, w, DOCA_ERROR_NOT_PERMITTED, refused[i]);
		t_worker_close(&s, s.pe, w);
		w = NULL;
		/* Logged once by the service, naming the entry. */
		T_EQ_INT(log_count(refused[i]), 1);
	}
	T_EQ_INT(t_uromd_worker_pids(&d, NULL, 0), 0);
	/* Other variables still pass. */
	T_OK(spawn_env("SDP_TEST_HYGIENE=1", &w, &pid));
	if (pid > 0)
		T_TRUE(t_proc_file_has((pid_t)pid, "environ", "SDP_TEST_HYGIENE=1"));
	t_worker_close(&s, s.pe, w);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
}

static void test_loader_env_allowed(void)
{
	struct doca_urom_worker *w = NULL;
	uint32_t pid = 0;

	T_TRUE(log_count("--allow-loader-env") >= 1);
	T_OK(spawn_env(T_PRELOAD, &w, &pid));
	if (pid > 0)
		T_TRUE(t_proc_file_has((pid_t)pid, "environ", T_PRELOAD));
	T_OK(t_loop_one(&loop, w, s.pe, NULL, 1));
	t_worker_close(&s, s.pe, w);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
}

/* A worker killed under its host: the host's later stop (RELEASE) draws no warning. */
static void test_dead_worker_release(void)
{
	struct t_worker_cfg cfg = graph_cfg();
	struct doca_urom_worker *w = NULL;
	uint32_t pid = 0;
	doca_error_t st = DOCA_SUCCESS;

	T_OK(t_worker_start(&s, s.pe, &cfg, &w));
	T_OK(sdp_urom_worker_get_pid(w, &pid));
	if (pid == 0)
		return;
	T_EQ_INT(kill((pid_t)pid, SIGKILL), 0);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
	/* The host learns of the death (WORKER_EXIT): a command fails. */
	{
		int64_t deadline = t_now_ms() + T_WAIT_MS;

		while (t_now_ms() < deadline) {
			st = t_loop_one(&loop, w, s.pe, NULL, 2);
			if (st != DOCA_SUCCESS)
				break;
		}
	}
	T_TRUE(st != DOCA_SUCCESS);
	t_worker_close(&s, s.pe, w);
	T_TRUE(t_uromd_alive(&d));
	/* The service answered the RELEASE (the context went IDLE): check its log now. */
	T_EQ_INT(log_count("which it does not use"), 0);
}

/*
 * Check pid's listening TCP sockets: each bound to loopback (127.0.0.1 or ::1, as /proc writes
 * them). Returns how many it found.
 */
static int check_listeners(pid_t pid)
{
	struct t_listener ls[64];
	int n = t_proc_tcp_listeners(pid, ls, 64);

	for (int i = 0; i < n; i++)
		if (strcmp(ls[i].addr, "0100007F") != 0 &&
		    strcmp(ls[i].addr, "00000000000000000000000001000000") != 0)
			t_fail("worker %d listens on address %s (not loopback)", (int)pid,
			       ls[i].addr);
	return n;
}

/* Worker of a daemon on 127.0.0.1 without UCX_NET_DEVICES: lo only. */
static void test_net_devices(void)
{
	struct t_worker_cfg cfg = graph_cfg();
	struct doca_urom_worker *w = NULL;
	uint32_t pid = 0;
	int n;

	T_TRUE(!t_proc_file_has(d.pid, "environ", "UCX_NET_DEVICES="));
	T_OK(t_worker_start(&s, s.pe, &cfg, &w));
	T_OK(sdp_urom_worker_get_pid(w, &pid));
	if (pid > 0) {
		T_TRUE(t_proc_file_has((pid_t)pid, "environ", "UCX_NET_DEVICES=lo"));
		n = check_listeners((pid_t)pid);
		printf("worker %u: %d UCX TCP listener(s)\n", pid, n);
		T_TRUE(n > 0);
	}
	T_OK(t_loop_one(&loop, w, s.pe, NULL, 3));
	t_worker_close(&s, s.pe, w);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
}

static int open_service_flags(const char *extra[], int flags)
{
	if (t_uromd_start_flags(&d, extra, flags) != 0)
		return -1;
	if (t_svc_open(&s, 0) != DOCA_SUCCESS || t_svc_find_graph(&s) != DOCA_SUCCESS) {
		t_fail("service start or worker_graph lookup failed");
		return -1;
	}
	return 0;
}

static int open_service(const char *extra[])
{
	return open_service_flags(extra, 0);
}

int main(void)
{
	static const char *allow[] = {"--allow-loader-env", NULL};

	t_loop_init(&loop, 64);
	if (open_service(NULL) == 0) {
		test_fds();
		test_loader_env_refused();
		test_dead_worker_release();
	}
	t_svc_close(&s);
	t_uromd_stop(&d);

	if (open_service(allow) == 0)
		test_loader_env_allowed();
	t_svc_close(&s);
	t_uromd_stop(&d);

	if (open_service_flags(NULL, T_UROMD_NO_UCX_NET_DEVICES) == 0)
		test_net_devices();
	t_svc_close(&s);
	t_uromd_stop(&d);
	t_loop_fini(&loop);
	T_DONE();
}
