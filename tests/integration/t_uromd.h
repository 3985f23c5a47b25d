/*
 * Integration test harness: run the real offload service (softdpu-uromd from the build tree) as
 * a separate process, one private instance per test, and tear it down checking that it exited
 * cleanly and left no worker process behind (liburing / libuv style helpers, header only).
 *
 * Each instance gets its own temporary directory (mkdtemp) holding the run directory, the
 * secret file and the daemon's own log, and listens on 127.0.0.1 with a port the kernel picks;
 * so tests run in parallel. After t_uromd_start() the test process's environment points the
 * host library at that instance (SOFTDPU_UROM_SERVICE_ADDR, SOFTDPU_UROM_SECRET_FILE,
 * SOFTDPU_UROM_RUN_DIR, UCX_NET_DEVICES=lo).
 *
 * meson passes the paths through the environment (tests/integration/meson.build):
 *   SDP_TEST_UROMD            the daemon binary
 *   SOFTDPU_UROM_WORKER_BIN   the worker binary (registry variable, read by the daemon)
 *   UROM_PLUGIN_PATH          the directory of the built worker_graph.so
 *   SDP_TEST_BAD_PLUGINS      the directory of the discovery test's plugin fixtures
 *
 * Every wait is bounded and sleeps (the machine has two shared cores).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef T_UROMD_H_
#define T_UROMD_H_

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "t_helpers.h"

#define T_UROMD_START_TIMEOUT_MS 10000
#define T_UROMD_STOP_TIMEOUT_MS 10000
#define T_UROMD_MAX_PIDS 64

struct t_uromd {
	pid_t pid;			/* the daemon, 0 when not running */
	uint16_t port;			/* the port it listens on */
	char addr[64];			/* "127.0.0.1:<port>" */
	char tmp_dir[PATH_MAX];		/* removed by t_uromd_stop */
	char run_dir[PATH_MAX + 8];	/* <tmp>/run */
	char secret_file[PATH_MAX + 8]; /* <tmp>/secret */
	char log_file[PATH_MAX + 16];	/* the daemon's stdout and stderr */
	int status;			/* wait() status once it exited */
};

/* Milliseconds on the monotonic clock. */
static inline int64_t t_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void t_sleep_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Read a whole small file into buf (NUL-terminated); bytes read or -1. */
static inline ssize_t t_read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, total = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((size_t)total + 1 < size) {
		n = read(fd, buf + total, size - 1 - (size_t)total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		total += n;
	}
	close(fd);
	buf[total] = '\0';
	return total;
}

/* Print the last `max` bytes of a log file to stderr (to explain a failure). */
static inline void t_print_log_tail(const char *what, const char *path, size_t max)
{
	static char buf[65536];
	ssize_t n = t_read_file(path, buf, sizeof(buf));

	if (n < 0)
		return;
	fprintf(stderr, "---- %s (%s), last bytes ----\n%s\n---- end ----\n", what, path,
		(size_t)n > max ? buf + n - max : buf);
}

/* Parse /proc/<pid>/stat: state letter and parent pid. 0 on success. */
static inline int t_proc_stat(pid_t pid, char *state_p, pid_t *ppid_p)
{
	char path[64], buf[1024], *p;
	int ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (t_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
	if (p == NULL || sscanf(p + 1, " %c %d", state_p, &ppid) != 2)
		return -1;
	*ppid_p = ppid;
	return 0;
}

/* True when pid exists and is not a zombie. */
static inline int t_pid_alive(pid_t pid)
{
	char state;
	pid_t ppid;

	if (t_proc_stat(pid, &state, &ppid) != 0)
		return 0;
	return state != 'Z' && state != 'X';
}

/* True when the NUL-separated file /proc/<pid>/<name> contains needle. */
static inline int t_proc_file_has(pid_t pid, const char *name, const char *needle)
{
	static char buf[262144];
	char path[64];
	ssize_t n, i;
	size_t len = strlen(needle);

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	n = t_read_file(path, buf, sizeof(buf));
	if (n <= 0)
		return 0;
	for (i = 0; i + (ssize_t)len <= n; i++)
		if (memcmp(buf + i, needle, len) == 0)
			return 1;
	return 0;
}

/*
 * Live (non-zombie) processes that belong to this daemon instance: its children, and anything
 * whose command line or environment names its run directory (a worker orphaned by a dying
 * daemon). Returns how many were found, at most max stored in pids.
 */
static inline int t_uromd_worker_pids(const struct t_uromd *d, pid_t *pids, int max)
{
	struct dirent *de;
	int count = 0;
	DIR *dir;

	dir = opendir("/proc");
	if (dir == NULL)
		return 0;
	while ((de = readdir(dir)) != NULL) {
		char *end, state;
		long v = strtol(de->d_name, &end, 10);
		pid_t pid = (pid_t)v, ppid;
		int mine;

		if (*end != '\0' || v <= 0 || pid == getpid() || pid == d->pid)
			continue;
		if (t_proc_stat(pid, &state, &ppid) != 0 || state == 'Z' || state == 'X')
			continue;
		mine = (d->pid > 0 && ppid == d->pid) ||
		       t_proc_file_has(pid, "cmdline", d->run_dir) ||
		       t_proc_file_has(pid, "environ", d->run_dir);
		if (!mine)
			continue;
		if (count < max)
			pids[count] = pid;
		count++;
	}
	closedir(dir);
	return count;
}

/* Wait (bounded) until the daemon has exactly `want` live worker processes; returns the count. */
static inline int t_uromd_wait_workers(const struct t_uromd *d, int want, int timeout_ms)
{
	pid_t pids[T_UROMD_MAX_PIDS];
	int64_t deadline = t_now_ms() + timeout_ms;
	int n;

	for (;;) {
		n = t_uromd_worker_pids(d, pids, T_UROMD_MAX_PIDS);
		if (n == want || t_now_ms() >= deadline)
			return n;
		t_sleep_ms(20);
	}
}

/* Number of open file descriptors of this process. */
static inline int t_count_fds(void)
{
	struct dirent *de;
	int n = 0;
	DIR *dir = opendir("/proc/self/fd");

	if (dir == NULL)
		return -1;
	while ((de = readdir(dir)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(dir);
	return n - 1; /* the directory stream's own fd */
}

/*
 * Wait for a child to exit within timeout_ms, sleeping on a pidfd (or in short naps when the
 * kernel has none). 1 = exited (*status_p set), 0 = still running.
 */
static inline int t_wait_child(pid_t pid, int timeout_ms, int *status_p)
{
	int64_t deadline = t_now_ms() + timeout_ms;
	int pfd = -1;

#ifdef SYS_pidfd_open
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	for (;;) {
		int64_t left;
		pid_t r = waitpid(pid, status_p, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR)) {
			if (pfd >= 0)
				close(pfd);
			return 1;
		}
		left = deadline - t_now_ms();
		if (left <= 0)
			break;
		if (pfd >= 0) {
			struct pollfd p = {.fd = pfd, .events = POLLIN};

			poll(&p, 1, (int)(left < 1000 ? left : 1000));
		} else {
			t_sleep_ms(left < 10 ? (int)left : 10);
		}
	}
	if (pfd >= 0)
		close(pfd);
	return 0;
}

/* Remove a directory tree made of plain files and directories (the instance's tmp dir). */
static inline void t_rm_rf(const char *path)
{
	struct dirent *de;
	DIR *dir = opendir(path);

	if (dir != NULL) {
		while ((de = readdir(dir)) != NULL) {
			char sub[PATH_MAX];
			struct stat st;

			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			if (snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) >=
			    (int)sizeof(sub))
				continue;
			if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
				t_rm_rf(sub);
			else
				unlink(sub);
		}
		closedir(dir);
	}
	rmdir(path);
}

/*
 * Remove what crashed tests left in dir: directories named softdpu-it-<pid>-* whose test process
 * is gone and that are older than a minute (their daemons went down with the test through the
 * parent-death signal; only the directory stays after a crash).
 */
static inline void t_uromd_sweep_stale(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	time_t now = time(NULL);

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char path[PATH_MAX];
		struct stat st;
		long pid;
		char *end;

		if (strncmp(de->d_name, "softdpu-it-", 11) != 0)
			continue;
		pid = strtol(de->d_name + 11, &end, 10);
		if (end == de->d_name + 11 || *end != '-' || pid <= 0)
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || now - st.st_mtime < 60)
			continue;
		t_rm_rf(path);
	}
	closedir(d);
}

/* Point the host library of this process at the instance. */
static inline void t_uromd_export_env(const struct t_uromd *d)
{
	setenv("SOFTDPU_UROM_SERVICE_ADDR", d->addr, 1);
	setenv("SOFTDPU_UROM_SECRET_FILE", d->secret_file, 1);
	setenv("SOFTDPU_UROM_RUN_DIR", d->run_dir, 1);
}

/* t_uromd_start_flags: the daemon runs without UCX_NET_DEVICES (this process keeps it). */
#define T_UROMD_NO_UCX_NET_DEVICES 1

extern char **environ;

/*
 * Start a private daemon. extra_args: more command-line arguments (NULL-terminated, or NULL).
 * Returns 0 when it listens (its port file appeared), -1 after logging why not (nothing is left
 * running then).
 */
static inline int t_uromd_start_flags(struct t_uromd *d, const char *extra_args[], int flags)
{
	static char *envp[4096];
	const char *bin = getenv("SDP_TEST_UROMD");
	const char *argv[64];
	char port_file[PATH_MAX + 32], buf[64];
	int argc = 0, i, status, n_env;
	int64_t deadline;
	pid_t parent;

	memset(d, 0, sizeof(*d));
	t_uromd_sweep_stale(getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (bin == NULL || access(bin, X_OK) != 0) {
		fprintf(stderr, "t_uromd_start: SDP_TEST_UROMD (%s) is not an executable\n",
			bin ? bin : "unset");
		return -1;
	}
	snprintf(d->tmp_dir, sizeof(d->tmp_dir), "%s/softdpu-it-%d-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	if (mkdtemp(d->tmp_dir) == NULL) {
		fprintf(stderr, "t_uromd_start: mkdtemp %s: %s\n", d->tmp_dir, strerror(errno));
		return -1;
	}
	snprintf(d->run_dir, sizeof(d->run_dir), "%s/run", d->tmp_dir);
	snprintf(d->secret_file, sizeof(d->secret_file), "%s/secret", d->tmp_dir);
	snprintf(d->log_file, sizeof(d->log_file), "%s/uromd.log", d->tmp_dir);
	snprintf(port_file, sizeof(port_file), "%s/uromd.port", d->run_dir);

	/* The daemon and its workers inherit these; the host library reads them too. */
	setenv("UCX_NET_DEVICES", "lo", 1);
	setenv("SOFTDPU_UROM_RUN_DIR", d->run_dir, 1);
	setenv("SOFTDPU_UROM_SECRET_FILE", d->secret_file, 1);

	argv[argc++] = bin;
	argv[argc++] = "--foreground";
	for (i = 0; extra_args != NULL && extra_args[i] != NULL; i++)
		if (strcmp(extra_args[i], "--listen") == 0)
			break;
	if (extra_args == NULL || extra_args[i] == NULL) { /* else the caller chose */
		argv[argc++] = "--listen";
		argv[argc++] = "127.0.0.1:0";
	}
	argv[argc++] = "--run-dir";
	argv[argc++] = d->run_dir;
	argv[argc++] = "--secret-file";
	argv[argc++] = d->secret_file;
	for (i = 0; extra_args != NULL && extra_args[i] != NULL && argc < 63; i++)
		argv[argc++] = extra_args[i];
	argv[argc] = NULL;
	/* Its environment, built before fork (the child only calls async-signal-safe functions). */
	for (i = 0, n_env = 0; environ[i] != NULL && n_env + 1 < 4096; i++)
		if (!(flags & T_UROMD_NO_UCX_NET_DEVICES) ||
		    strncmp(environ[i], "UCX_NET_DEVICES=", 16) != 0)
			envp[n_env++] = environ[i];
	envp[n_env] = NULL;
	fflush(stdout);
	fflush(stderr);
	parent = getpid();
	d->pid = fork();
	if (d->pid < 0) {
		fprintf(stderr, "t_uromd_start: fork: %s\n", strerror(errno));
		t_rm_rf(d->tmp_dir);
		return -1;
	}
	if (d->pid == 0) {
		int fd;

		/*
		 * A test that crashes must not leave its daemon behind: it gets SIGTERM when the
		 * test dies (and the daemon stops its workers as on any SIGTERM).
		 */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
			_exit(126);
		fd = open(d->log_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execve(bin, (char *const *)argv, envp);
		fprintf(stderr, "execv %s: %s\n", bin, strerror(errno));
		_exit(127);
	}

	deadline = t_now_ms() + T_UROMD_START_TIMEOUT_MS;
	for (;;) {
		unsigned long port;
		char *end;

		if (t_read_file(port_file, buf, sizeof(buf)) > 0) {
			port = strtoul(buf, &end, 10);
			if (end != buf && (*end == '\n' || *end == '\0') && port > 0 &&
			    port < 65536) {
				d->port = (uint16_t)port;
				break;
			}
		}
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			fprintf(stderr, "t_uromd_start: %s exited before listening (status 0x%x)\n",
				bin, status);
			t_print_log_tail("daemon log", d->log_file, 4000);
			d->pid = 0;
			t_rm_rf(d->tmp_dir);
			return -1;
		}
		if (t_now_ms() >= deadline) {
			fprintf(stderr, "t_uromd_start: no %s after %d ms\n", port_file,
				T_UROMD_START_TIMEOUT_MS);
			t_print_log_tail("daemon log", d->log_file, 4000);
			kill(d->pid, SIGKILL);
			t_wait_child(d->pid, 5000, &status);
			d->pid = 0;
			t_rm_rf(d->tmp_dir);
			return -1;
		}
		t_sleep_ms(10);
	}
	snprintf(d->addr, sizeof(d->addr), "127.0.0.1:%u", d->port);
	t_uromd_export_env(d);
	return 0;
}

static inline int t_uromd_start(struct t_uromd *d, const char *extra_args[])
{
	return t_uromd_start_flags(d, extra_args, 0);
}

/* How often needle occurs in the daemon's log (-1 when it cannot be read). */
static inline int t_uromd_log_count(const struct t_uromd *d, const char *needle)
{
	static char buf[1 << 20];
	int n = 0;

	if (t_read_file(d->log_file, buf, sizeof(buf)) < 0)
		return -1;
	for (const char *p = buf; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* A listening TCP socket of a process: its local address as /proc writes it (hex) and port. */
struct t_listener {
	char addr[64];
	uint16_t port;
};

/*
 * The listening TCP sockets pid holds (IPv4 and IPv6, from /proc/<pid>/net/tcp{,6} matched
 * against the socket inodes of its descriptors); at most max, returns how many.
 */
static inline int t_proc_tcp_listeners(pid_t pid, struct t_listener *out, int max)
{
	static const char *const files[] = {"tcp", "tcp6"};
	unsigned long inodes[256];
	char path[64], line[512];
	int ninodes = 0, n = 0;
	struct dirent *de;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (dir == NULL)
		return 0;
	while ((de = readdir(dir)) != NULL && ninodes < 256) {
		char fdpath[400], link[64];
		ssize_t len;

		snprintf(fdpath, sizeof(fdpath), "%s/%s", path, de->d_name);
		len = readlink(fdpath, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (sscanf(link, "socket:[%lu]", &inodes[ninodes]) == 1)
			ninodes++;
	}
	closedir(dir);
	for (size_t t = 0; t < 2; t++) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)pid, files[t]);
		f = fopen(path, "re");
		while (f != NULL && fgets(line, sizeof(line), f) != NULL && n < max) {
			char local[64], state[8], *colon;
			unsigned long ino = 0;

			/* "sl: local:port remote:port st ... inode" */
			if (sscanf(line, " %*s %63s %*s %7s %*s %*s %*s %*s %*s %lu", local, state,
				   &ino) != 3 ||
			    strcmp(state, "0A") != 0)
				continue;
			colon = strchr(local, ':');
			if (colon == NULL)
				continue;
			*colon = '\0';
			for (int i = 0; i < ninodes && n < max; i++)
				if (inodes[i] == ino) {
					snprintf(out[n].addr, sizeof(out[n].addr), "%s", local);
					out[n].port = (uint16_t)strtoul(colon + 1, NULL, 16);
					n++;
				}
		}
		if (f != NULL)
			fclose(f);
	}
	return n;
}

/* True while the daemon process is running. */
static inline int t_uromd_alive(struct t_uromd *d)
{
	if (d->pid <= 0)
		return 0;
	if (waitpid(d->pid, &d->status, WNOHANG) == d->pid) {
		d->pid = -d->pid; /* exited: keep the number for the stop report */
		return 0;
	}
	return 1;
}

/*
 * Stop the daemon: SIGTERM, bounded wait, SIGKILL if needed. Checks (each a test failure) that
 * it exited on its own with status 0, and that no process of this instance is left. Removes the
 * temporary directory. Returns the number of failures it recorded.
 */
static inline int t_uromd_stop(struct t_uromd *d)
{
	pid_t pids[T_UROMD_MAX_PIDS];
	int before = t_failures, n, i;

	if (d->pid == 0 && d->tmp_dir[0] == '\0')
		return 0;
	if (d->pid > 0 && t_uromd_alive(d)) {
		kill(d->pid, SIGTERM);
		if (!t_wait_child(d->pid, T_UROMD_STOP_TIMEOUT_MS, &d->status)) {
			t_fail("daemon %d did not exit within %d ms of SIGTERM; killing it",
			       (int)d->pid, T_UROMD_STOP_TIMEOUT_MS);
			kill(d->pid, SIGKILL);
			t_wait_child(d->pid, 5000, &d->status);
		} else if (!WIFEXITED(d->status) || WEXITSTATUS(d->status) != 0) {
			t_fail("daemon exit: expected status 0 after SIGTERM, got %s %d",
			       WIFEXITED(d->status) ? "exit" : "signal",
			       WIFEXITED(d->status) ? WEXITSTATUS(d->status) : WTERMSIG(d->status));
		}
	} else if (d->pid != 0) {
		t_fail("daemon died before the test stopped it (%s %d)",
		       WIFEXITED(d->status) ? "exit" : "signal",
		       WIFEXITED(d->status) ? WEXITSTATUS(d->status) : WTERMSIG(d->status));
	}
	d->pid = 0;

	/* Workers leave once their daemon is gone; give them a moment, then insist. */
	n = t_uromd_wait_workers(d, 0, 3000);
	if (n > 0) {
		n = t_uromd_worker_pids(d, pids, T_UROMD_MAX_PIDS);
		for (i = 0; i < n && i < T_UROMD_MAX_PIDS; i++) {
			t_fail("worker process %d of the daemon is still alive after its stop",
			       (int)pids[i]);
			kill(pids[i], SIGKILL);
		}
	}
	if (t_failures != before)
		t_print_log_tail("daemon log", d->log_file, 4000);
	t_rm_rf(d->tmp_dir);
	d->tmp_dir[0] = '\0';
	return t_failures - before;
}

#endif /* T_UROMD_H_ */
