/*
 * softdpu-uromd: the UROM offload service.
 *
 * Start-up order: options (libdoca_argp) -> run directory -> pid file lock (refuse when a live
 * daemon holds it) -> run directory lock -> worker binary, old worker logs capped (logcap.c) ->
 * plugin scan (child process, before the secret is in memory; --plugin-path, UROM_PLUGIN_PATH
 * or the plugin directory; none found: a WARNING, also in the status) -> secret ->
 * daemon mode (double fork,
 * setsid, log to <run dir>/uromd.log) -> pid file content -> signals (signalfd) -> UCP listener
 * -> uromd.port / uromd.listen -> "ready" to the launcher -> event loop.
 *
 * In daemon mode the launching process waits (bounded) until the daemon is ready or failed,
 * prints the daemon's warnings and errors of that phase on its own stderr, and exits 0 or 1,
 * so `softdpu-uromd` without -f (and `softdpu service start`) report failures directly.
 *
 * The event loop blocks in epoll on the UCP wakeup fd, the signalfd and the workers' control
 * sockets, with a timeout no longer than the next deadline (worker ready/exit, handshake).
 * SIGTERM/SIGINT: SW_EXIT to every worker, wait up to 2 s, SIGKILL the rest, reap, close host
 * connections, remove the pid/port/listen/secret-path files that are still the ones it wrote
 * (same device and inode), exit 0. The run directory is locked (uromd.lock) for the daemon's
 * life: one daemon per run directory, whatever its --pid-file.
 * SIGHUP: reopen <run dir>/uromd.log (daemon mode; after a rotation renamed it).
 * With NOTIFY_SOCKET (systemd Type=notify), READY=1 once listening and STOPPING=1 at shutdown,
 * sent by hand (no libsystemd).
 * Exit status: 0 ok, 1 failure to start or run, 2 bad command line.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "doca_argp.h"
#include "doca_log.h"
#include "sdp_build_config.h"
#include "sdp_config.h"
#include "sdp_log.h"
#include "uromd.h"
#include "uromd_paths.h"

SDP_LOG_COMPONENT("uromd");

#define UROMD_EXIT_OK 0
#define UROMD_EXIT_FAIL 1
#define UROMD_EXIT_USAGE 2
/* How long the launcher waits for the daemon to report ready. */
#define UROMD_LAUNCH_TIMEOUT_MS 30000
#define UROMD_READY_MARK '\001'

/* Write end of the readiness pipe in daemon mode until ready (-1 otherwise). */
static int uromd_ready_fd = -1;
/* The stderr SDK backend (quieted in daemon mode, whose log goes to <run dir>/uromd.log). */
static struct doca_log_backend *uromd_stderr_be;
static char uromd_launch_log_buf[2048];

uint64_t uromd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- options ------------------------------------------------------------------------------ */

static doca_error_t opt_str(char **dst, const char *value)
{
	char *copy = strdup(value);

	if (copy == NULL) {
		sdp_error("out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	free(*dst);
	*dst = copy;
	return DOCA_SUCCESS;
}

static doca_error_t opt_max_msg_size(void *param, void *config)
{
	struct uromd_config *cfg = config;
	int v = *(int *)param;

	if (v < UROMD_MIN_MSG_SIZE || (unsigned int)v > UROMD_MAX_MSG_SIZE) {
		sdp_error("-m/--max-msg-size %d: expected %d..%u bytes", v, UROMD_MIN_MSG_SIZE,
			  UROMD_MAX_MSG_SIZE);
		return DOCA_ERROR_INVALID_VALUE;
	}
	cfg->max_msg_size = (uint64_t)v;
	return DOCA_SUCCESS;
}

static doca_error_t opt_max_workers(void *param, void *config)
{
	struct uromd_config *cfg = config;
	int v = *(int *)param;

	if (v < 0 || v > 65536) {
		sdp_error("--max-workers %d: expected 0 (no limit) .. 65536", v);
		return DOCA_ERROR_INVALID_VALUE;
	}
	cfg->max_workers = (uint32_t)v;
	return DOCA_SUCCESS;
}

static doca_error_t opt_listen(void *param, void *config)
{
	return opt_str(&((struct uromd_config *)config)->listen, param);
}

static doca_error_t opt_cpuset(void *param, void *config)
{
	struct uromd_cpuset set;

	if (uromd_cpuset_parse(param, &set) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE; /* logged */
	return opt_str(&((struct uromd_config *)config)->cpuset_str, param);
}

static doca_error_t opt_plugin_path(void *param, void *config)
{
	return opt_str(&((struct uromd_config *)config)->plugin_path, param);
}

static doca_error_t opt_foreground(void *param, void *config)
{
	((struct uromd_config *)config)->foreground = *(bool *)param;
	return DOCA_SUCCESS;
}

static doca_error_t opt_allow_loader_env(void *param, void *config)
{
	((struct uromd_config *)config)->allow_loader_env = *(bool *)param;
	return DOCA_SUCCESS;
}

static doca_error_t opt_pid_file(void *param, void *config)
{
	return opt_str(&((struct uromd_config *)config)->pid_file, param);
}

static doca_error_t opt_secret_file(void *param, void *config)
{
	return opt_str(&((struct uromd_config *)config)->secret_file, param);
}

static doca_error_t opt_run_dir(void *param, void *config)
{
	return opt_str(&((struct uromd_config *)config)->run_dir, param);
}

static doca_error_t opt_plugin_dir(void *param, void *config)
{
	return opt_str(&((struct uromd_config *)config)->plugin_dir, param);
}

static doca_error_t opt_max_worker_logs(void *param, void *config)
{
	struct uromd_config *cfg = config;
	int v = *(int *)param;

	if (v < 0 || v > UROMD_MAX_WORKER_LOGS_LIMIT) {
		sdp_error("--max-worker-logs %d: expected 0 .. %d", v, UROMD_MAX_WORKER_LOGS_LIMIT);
		return DOCA_ERROR_INVALID_VALUE;
	}
	cfg->max_worker_logs = (uint32_t)v;
	return DOCA_SUCCESS;
}

/* The liveness bound: 0 (off) or UROMD_MIN_WORKER_TIMEOUT_MS .. UROMD_MAX_WORKER_TIMEOUT_MS. */
static doca_error_t uromd_check_worker_timeout(const char *what, uint64_t v)
{
	if (v == 0 || (v >= UROMD_MIN_WORKER_TIMEOUT_MS && v <= UROMD_MAX_WORKER_TIMEOUT_MS))
		return DOCA_SUCCESS;
	sdp_error("%s %" PRIu64 ": expected 0 (off) or %d .. %d milliseconds", what, v,
		  UROMD_MIN_WORKER_TIMEOUT_MS, UROMD_MAX_WORKER_TIMEOUT_MS);
	return DOCA_ERROR_INVALID_VALUE;
}

static doca_error_t opt_worker_timeout(void *param, void *config)
{
	struct uromd_config *cfg = config;
	int v = *(int *)param;

	if (v < 0) {
		sdp_error("--worker-timeout %d: expected 0 (off) or %d .. %d milliseconds", v,
			  UROMD_MIN_WORKER_TIMEOUT_MS, UROMD_MAX_WORKER_TIMEOUT_MS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (uromd_check_worker_timeout("--worker-timeout", (uint64_t)v) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	cfg->worker_timeout_ms = (uint32_t)v;
	return DOCA_SUCCESS;
}

static doca_error_t opt_register(const char *short_name, const char *long_name,
				 const char *arguments, const char *description,
				 enum doca_argp_type type, doca_argp_param_cb_t cb)
{
	struct doca_argp_param *param;
	doca_error_t status;

	status = doca_argp_param_create(&param);
	if (status != DOCA_SUCCESS)
		return status;
	if (short_name != NULL)
		doca_argp_param_set_short_name(param, short_name);
	doca_argp_param_set_long_name(param, long_name);
	if (arguments != NULL)
		doca_argp_param_set_arguments(param, arguments);
	doca_argp_param_set_description(param, description);
	doca_argp_param_set_callback(param, cb);
	doca_argp_param_set_type(param, type);
	return doca_argp_register_param(param);
}

/* Split host:port ([v6]:port allowed; empty host = every interface). */
static doca_error_t uromd_parse_listen(struct uromd_config *cfg)
{
	const char *s = cfg->listen, *colon = strrchr(s, ':');
	char *end;
	unsigned long port;
	size_t hlen;

	if (colon == NULL || colon[1] == '\0')
		goto err_bad;
	port = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || port > 65535 || !(colon[1] >= '0' && colon[1] <= '9'))
		goto err_bad;
	hlen = (size_t)(colon - s);
	if (hlen >= 2 && s[0] == '[' && s[hlen - 1] == ']') {
		s++;
		hlen -= 2;
	}
	cfg->listen_host = strndup(s, hlen);
	if (cfg->listen_host == NULL) {
		sdp_error("out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	cfg->listen_port = (uint16_t)port;
	return DOCA_SUCCESS;

err_bad:
	sdp_error("--listen %s: expected host:port (port 0..65535, 0 = any free port)",
		  cfg->listen);
	return DOCA_ERROR_INVALID_VALUE;
}

static doca_error_t uromd_parse_args(struct uromd *d, int argc, char **argv)
{
	uint32_t app_before = doca_log_level_get_global_lower_limit();
	uint32_t sdk_before = doca_log_level_get_global_sdk_limit();
	uint32_t app_after, sdk_after, level;
	doca_error_t status;

	d->cfg.max_msg_size = UROMD_DEFAULT_MSG_SIZE;
	d->cfg.max_worker_logs = UROMD_DEFAULT_MAX_WORKER_LOGS;
	{
		uint64_t t = UROMD_DEFAULT_WORKER_TIMEOUT_MS;

		/* SOFTDPU_UROM_WORKER_TIMEOUT_MS; --worker-timeout overrides it */
		status = sdp_config_get_uint(SDP_CFG_UROM_WORKER_TIMEOUT_MS, &t);
		if (status == DOCA_ERROR_NOT_FOUND)
			t = UROMD_DEFAULT_WORKER_TIMEOUT_MS;
		else if (status != DOCA_SUCCESS ||
			 uromd_check_worker_timeout("SOFTDPU_UROM_WORKER_TIMEOUT_MS", t) !=
				 DOCA_SUCCESS)
			return DOCA_ERROR_INVALID_VALUE;
		d->cfg.worker_timeout_ms = (uint32_t)t;
	}
	status = doca_argp_init("softdpu-uromd", &d->cfg);
	if (status != DOCA_SUCCESS)
		return status;
	if ((status = opt_register("m", "max-msg-size", "<bytes>",
				   "Maximum UROM message size (default 4096)", DOCA_ARGP_TYPE_INT,
				   opt_max_msg_size)) != DOCA_SUCCESS ||
	    (status = opt_register(NULL, "listen", "<host:port>",
				   "Service address (default " SDP_UROM_DEFAULT_ADDR
				   "; port 0 = any, written "
				   "to <run dir>/uromd.port)",
				   DOCA_ARGP_TYPE_STRING, opt_listen)) != DOCA_SUCCESS ||
	    (status = opt_register(NULL, "max-workers", "<n>",
				   "Most workers the service runs at once (default 0 = no limit)",
				   DOCA_ARGP_TYPE_INT, opt_max_workers)) != DOCA_SUCCESS ||
	    (status = opt_register(NULL, "cpuset", "<list>",
				   "CPUs workers may use, like 0-7,9 (default: every CPU here)",
				   DOCA_ARGP_TYPE_STRING, opt_cpuset)) != DOCA_SUCCESS ||
	    (status = opt_register(NULL, "plugin-path", "<dir;dir>",
				   "Plugin directories (default UROM_PLUGIN_PATH, else the plugin "
				   "directory)",
				   DOCA_ARGP_TYPE_STRING, opt_plugin_path)) != DOCA_SUCCESS ||
	    (status = opt_register(NULL, "plugin-dir", "<dir>",
				   "Plugin directory used without --plugin-path and "
				   "UROM_PLUGIN_PATH (default " SDP_UROM_PLUGIN_DIR ")",
				   DOCA_ARGP_TYPE_STRING, opt_plugin_dir)) != DOCA_SUCCESS ||
	    (status = opt_register(NULL, "max-worker-logs", "<n>",
				   "Logs of gone workers kept in the run directory, oldest removed "
				   "first (default 64)",
				   DOCA_ARGP_TYPE_INT, opt_max_worker_logs)) != DOCA_SUCCESS ||
	    (status = opt_register(NULL, "worker-timeout", "<ms>",
				   "A worker silent this long is unresponsive: killed, its hosts "
				   "told (default SOFTDPU_UROM_WORKER_TIMEOUT_MS, 3000; 0 = off)",
				   DOCA_ARGP_TYPE_INT, opt_worker_timeout)) != DOCA_SUCCESS ||
	    (status = opt_register("f", "foreground", NULL,
				   "Stay in the foreground, log to stderr (default: daemon mode)",
				   DOCA_ARGP_TYPE_BOOLEAN, opt_foreground)) != DOCA_SUCCESS ||
	    (status = opt_register(NULL, "allow-loader-env", NULL,
				   "Let hosts set loader variables (LD_PRELOAD, LD_LIBRARY_PATH, "
				   "GCONV_PATH, ...) in the environment of workers they spawn "
				   "(default: such a spawn is refused)",
				   DOCA_ARGP_TYPE_BOOLEAN, opt_allow_loader_env)) != DOCA_SUCCESS ||
	    (status = opt_register(NULL, "pid-file", "<path>",
				   "Pid file (default <run dir>/uromd.pid)", DOCA_ARGP_TYPE_STRING,
				   opt_pid_file)) != DOCA_SUCCESS ||
	    (status = opt_register(NULL, "secret-file", "<path>",
				   "Service secret (default SOFTDPU_UROM_SECRET_FILE or the "
				   "documented default path)",
				   DOCA_ARGP_TYPE_STRING, opt_secret_file)) != DOCA_SUCCESS ||
	    (status = opt_register(NULL, "run-dir", "<dir>",
				   "Run directory (default SOFTDPU_UROM_RUN_DIR, for root "
				   "/run/softdpu, else $XDG_RUNTIME_DIR/softdpu or "
				   "/tmp/softdpu-<uid>)",
				   DOCA_ARGP_TYPE_STRING, opt_run_dir)) != DOCA_SUCCESS) {
		doca_argp_destroy();
		return status;
	}
	status = doca_argp_start(argc, argv);
	doca_argp_destroy();
	if (status != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;

	/* Everything the service logs is SDK logging: -l and --sdk-log-level both set its level;
	 * given both, the more verbose one wins. */
	app_after = doca_log_level_get_global_lower_limit();
	sdk_after = doca_log_level_get_global_sdk_limit();
	if (app_after != app_before && sdk_after != sdk_before)
		level = app_after > sdk_after ? app_after : sdk_after;
	else if (app_after != app_before)
		level = app_after;
	else
		level = sdk_after;
	doca_log_level_set_global_sdk_limit(level);
	d->cfg.log_level = level;

	if (d->cfg.listen == NULL && opt_str(&d->cfg.listen, SDP_UROM_DEFAULT_ADDR) != DOCA_SUCCESS)
		return DOCA_ERROR_NO_MEMORY;
	return uromd_parse_listen(&d->cfg);
}

static void uromd_config_fini(struct uromd_config *cfg)
{
	free(cfg->listen);
	free(cfg->listen_host);
	free(cfg->cpuset_str);
	free(cfg->plugin_path);
	free(cfg->plugin_dir);
	free(cfg->pid_file);
	free(cfg->secret_file);
	free(cfg->run_dir);
}

/* ---- files -------------------------------------------------------------------------------- */

static doca_error_t uromd_pid_write(int fd, const char *path)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());

	if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)len, 0) != len) {
		sdp_error("failed to write pid file %s: %m", path);
		return DOCA_ERROR_IO_FAILED;
	}
	return DOCA_SUCCESS;
}

/* Create the pid file, lock it and write this process's pid. -1 (errno set) when it exists. */
static int uromd_pid_create(const char *path, int *fd_p, doca_error_t *status_p)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

	if (fd < 0)
		return -1;
	/* Nobody else locks a file without a pid in it (sdp_uromd_pid_file_claim refuses it). */
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		sdp_error("failed to lock the pid file %s just created: %m", path);
		close(fd);
		*status_p = DOCA_ERROR_IN_USE;
		return 0;
	}
	*status_p = uromd_pid_write(fd, path);
	if (*status_p != DOCA_SUCCESS) {
		unlink(path); /* ours: just created */
		close(fd);
		return 0;
	}
	*fd_p = fd;
	return 0;
}

/*
 * Lock the pid file (see uromd_paths.h): a new one is created, a stale one of softdpu's taken
 * over; a live daemon's, or a file that is not a pid file, is refused and left as it is. The
 * pid is written at once (rewritten by the daemon process after daemonizing), so the file never
 * stays without a pid. Returns the locked fd.
 */
static doca_error_t uromd_pid_lock(const char *path, int *fd_p)
{
	doca_error_t status = DOCA_ERROR_AGAIN;
	pid_t old = 0;
	int fd = -1;

	/* Twice at most: a stale file removed by `softdpu service stop` meanwhile. */
	for (int tries = 0; tries < 2 && status == DOCA_ERROR_AGAIN; tries++) {
		if (uromd_pid_create(path, fd_p, &status) == 0)
			return status;
		if (errno != EEXIST) {
			int err = errno;

			sdp_error("failed to create pid file %s: %s", path, strerror(err));
			return err == EACCES || err == EPERM ? DOCA_ERROR_NOT_PERMITTED :
							       DOCA_ERROR_IO_FAILED;
		}
		status = sdp_uromd_pid_file_claim(path, O_RDWR, &fd, &old);
		if (status == DOCA_ERROR_NOT_FOUND) {
			if (tries == 1)
				sdp_error("pid file %s keeps appearing and vanishing; try again",
					  path);
			status = DOCA_ERROR_AGAIN;
		}
	}
	if (status != DOCA_SUCCESS)
		return status; /* logged */
	sdp_warn("pid file %s names pid %d, which is not a running softdpu-uromd; replacing it",
		 path, (int)old);
	status = uromd_pid_write(fd, path);
	if (status != DOCA_SUCCESS) {
		close(fd);
		return status;
	}
	*fd_p = fd;
	return DOCA_SUCCESS;
}

/*
 * Which file a path named when this daemon last wrote it (so that it removes only its own): its
 * device and inode, and its change time (a file made after ours was removed may get our freed
 * inode number).
 */
struct uromd_file_id {
	int valid;
	dev_t dev;
	ino_t ino;
	struct timespec ctime;
};

/* 1 when path (not followed) is the file id recorded. */
static int uromd_file_is(const char *path, const struct uromd_file_id *id)
{
	struct stat st;

	return id->valid && lstat(path, &st) == 0 && st.st_dev == id->dev && st.st_ino == id->ino &&
	       st.st_ctim.tv_sec == id->ctime.tv_sec && st.st_ctim.tv_nsec == id->ctime.tv_nsec;
}

/* Remove path if it is still the file this daemon wrote (someone may have replaced it). */
static void uromd_unlink_own(const char *path, struct uromd_file_id *id)
{
	int ours = uromd_file_is(path, id);

	if (!id->valid)
		return;
	id->valid = 0;
	if (!ours) {
		sdp_info("%s is no longer the file this daemon wrote; left in place", path);
		return;
	}
	if (unlink(path) != 0 && errno != ENOENT)
		sdp_warn("failed to remove %s: %m", path);
}

/* Record which file fd is in *id. */
static void uromd_file_id_of(int fd, struct uromd_file_id *id)
{
	struct stat st;

	id->valid = fstat(fd, &st) == 0;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->ctime = st.st_ctim;
}

/* Write a small file atomically (temp file + rename); *id records the file written. */
static doca_error_t uromd_write_file(const char *path, const char *text, struct uromd_file_id *id)
{
	char tmp[PATH_MAX + 16];
	size_t len = strlen(text);
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		sdp_error("failed to create %s: %m", tmp);
		return DOCA_ERROR_IO_FAILED;
	}
	if (write(fd, text, len) != (ssize_t)len) {
		sdp_error("failed to write %s: %m", tmp);
		close(fd);
		unlink(tmp);
		return DOCA_ERROR_IO_FAILED;
	}
	if (rename(tmp, path) != 0) {
		sdp_error("failed to rename %s to %s: %m", tmp, path);
		close(fd);
		unlink(tmp);
		return DOCA_ERROR_IO_FAILED;
	}
	uromd_file_id_of(fd, id); /* after the rename, which changes its ctime */
	close(fd);
	return DOCA_SUCCESS;
}

/*
 * Lock the run directory for this daemon's life: an exclusive flock on <run dir>/uromd.lock
 * (created 0600, never removed: removing a lock file races with its next user). The pid file
 * alone does not protect the run directory: two daemons with different --pid-file values would
 * overwrite and remove each other's uromd.port, uromd.listen and uromd.secret-path. The lock
 * file holds the holder's pid (for the refusal's message). Returns the locked fd.
 */
static doca_error_t uromd_run_dir_lock(const char *run_dir, const char *path, int *fd_p)
{
	char buf[SDP_UROMD_PID_FILE_MAX];
	struct stat st;
	pid_t pid = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0) {
		sdp_error("failed to open the run directory's lock file %s: %m", path);
		return errno == EACCES || errno == EPERM ? DOCA_ERROR_NOT_PERMITTED :
							   DOCA_ERROR_IO_FAILED;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		sdp_error("the run directory's lock file %s is not a regular file", path);
		close(fd);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int err = errno;

		if (err != EWOULDBLOCK) {
			sdp_error("failed to lock %s: %s", path, strerror(err));
			close(fd);
			return DOCA_ERROR_IO_FAILED;
		}
		n = pread(fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0 || !sdp_uromd_pid_parse(buf, (size_t)n, &pid))
			pid = 0;
		close(fd);
		if (pid > 0)
			sdp_error("softdpu-uromd is already running in run directory %s (pid %d, "
				  "lock %s): one daemon per run directory (give this one another "
				  "--run-dir)",
				  run_dir, (int)pid, path);
		else
			sdp_error("softdpu-uromd is already running in run directory %s (lock %s "
				  "held): one daemon per run directory (give this one another "
				  "--run-dir)",
				  run_dir, path);
		return DOCA_ERROR_IN_USE;
	}
	*fd_p = fd;
	return uromd_pid_write(fd, path);
}

static int uromd_is_executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* 1 when dir lies in this build's tree (SDP_BUILD_ROOT): the service runs uninstalled. */
static int uromd_in_build_tree(const char *dir)
{
	size_t len = strlen(SDP_BUILD_ROOT);

	return strncmp(dir, SDP_BUILD_ROOT, len) == 0 && (dir[len] == '/' || dir[len] == '\0');
}

/*
 * SOFTDPU_UROM_WORKER_BIN, else the build tree's worker when this is the build tree's service
 * (src/urom/{service,worker}), else the installed one (<libexecdir>/softdpu, fixed at build
 * time; in a relocated or DESTDIR-staged install, the one of the prefix this program runs from),
 * else next to this program, else on PATH.
 */
static void uromd_find_worker(struct uromd *d)
{
	const char *bin = sdp_config_get_string(SDP_CFG_UROM_WORKER_BIN);
	const char *name = "softdpu-urom-worker", *path_env;
	char self[PATH_MAX], cand[PATH_MAX + 64];
	ssize_t n;

	if (bin != NULL && *bin != '\0') {
		if (strchr(bin, '/') != NULL) {
			if (sdp_uromd_abs_path(bin, d->worker_bin, sizeof(d->worker_bin)) !=
			    DOCA_SUCCESS)
				d->worker_bin[0] = '\0';
			goto check;
		}
		name = bin;
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n > 0) {
			char *slash;

			self[n] = '\0';
			slash = strrchr(self, '/');
			if (slash != NULL) {
				*slash = '\0';
				snprintf(cand, sizeof(cand), "%s/../worker/%s", self, name);
				if (uromd_in_build_tree(self) && uromd_is_executable(cand)) {
					snprintf(d->worker_bin, sizeof(d->worker_bin), "%s", cand);
					goto check;
				}
				sdp_uromd_install_path(SDP_UROM_WORKER_INSTALLED, cand,
						       sizeof(cand));
				if (cand[0] != '\0' && uromd_is_executable(cand)) {
					snprintf(d->worker_bin, sizeof(d->worker_bin), "%s", cand);
					goto check;
				}
				snprintf(cand, sizeof(cand), "%s/%s", self, name);
				if (uromd_is_executable(cand)) {
					snprintf(d->worker_bin, sizeof(d->worker_bin), "%s", cand);
					goto check;
				}
			}
		}
	}
	path_env = getenv("PATH");
	if (path_env != NULL) {
		char *copy = strdup(path_env), *save = NULL;

		for (char *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir != NULL;
		     dir = strtok_r(NULL, ":", &save)) {
			snprintf(cand, sizeof(cand), "%s/%s", dir, name);
			if (uromd_is_executable(cand)) {
				snprintf(d->worker_bin, sizeof(d->worker_bin), "%s", cand);
				break;
			}
		}
		free(copy);
	}
check:
	if (d->worker_bin[0] == '\0' || !uromd_is_executable(d->worker_bin)) {
		sdp_warn("worker binary %s not found (SOFTDPU_UROM_WORKER_BIN, the build tree, "
			 "%s, next to softdpu-uromd or on PATH): spawning workers will fail",
			 d->worker_bin[0] ? d->worker_bin : name, SDP_UROM_WORKER_INSTALLED);
		if (d->worker_bin[0] == '\0')
			snprintf(d->worker_bin, sizeof(d->worker_bin), "%s", name);
	} else {
		sdp_debug("worker binary %s", d->worker_bin);
	}
}

/*
 * The plugin directories to scan: --plugin-path, else UROM_PLUGIN_PATH, else the plugin
 * directory (--plugin-dir, default <libdir>/softdpu/plugins fixed at build time; in a relocated
 * install, the one of the prefix this program runs from). Recorded for the status document.
 */
static doca_error_t uromd_plugin_list(struct uromd *d)
{
	const char *env = sdp_config_get_string(SDP_CFG_UROM_PLUGIN_PATH), *list;
	char dflt[PATH_MAX + 64];

	if (d->cfg.plugin_path != NULL) {
		list = d->cfg.plugin_path;
		d->plugin_list_from = "--plugin-path";
	} else if (env != NULL && *env != '\0') {
		list = env;
		d->plugin_list_from = "UROM_PLUGIN_PATH";
	} else if (d->cfg.plugin_dir != NULL) {
		list = d->cfg.plugin_dir;
		d->plugin_list_from = "--plugin-dir";
	} else {
		sdp_uromd_install_path(SDP_UROM_PLUGIN_DIR, dflt, sizeof(dflt));
		list = dflt;
		d->plugin_list_from = "the default plugin directory";
	}
	d->plugin_list = strdup(list);
	if (d->plugin_list == NULL) {
		sdp_error("out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	return DOCA_SUCCESS;
}

/* No plugin at all: hosts get workers that can do nothing; said loudly, here and in status. */
static void uromd_warn_no_plugins(struct uromd *d)
{
	if (d->scan.num_plugins != 0)
		return;
	snprintf(d->no_plugins_warning, sizeof(d->no_plugins_warning),
		 "no UROM plugins found in %s (%s, %zu file(s) skipped): workers can be spawned "
		 "but offer no plugin; install plugins there or give --plugin-path, "
		 "UROM_PLUGIN_PATH or --plugin-dir",
		 d->plugin_list[0] ? d->plugin_list : "(no directory)", d->plugin_list_from,
		 d->scan.num_skipped);
	sdp_warn("WARNING: %s", d->no_plugins_warning);
}

/* 1 for an address on the loopback interface (127.0.0.0/8, ::1). */
static int uromd_ip_is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	return sa->sa_family == AF_INET6 &&
	       IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

/*
 * UCX_NET_DEVICES for the workers: a worker's UCX TCP transport listens on every interface it
 * uses, so when the service listens on the loopback interface only and UCX_NET_DEVICES is not
 * set (an empty one counts as not set), workers get UCX_NET_DEVICES=lo and listen no further
 * than the service itself. Other addresses pin nothing: UCX_NET_DEVICES filters RDMA devices
 * too, and the interface holding an address may be an alias UCX does not know (eth0:1).
 */
static void uromd_worker_net_devices(struct uromd *d)
{
	const char *env = getenv("UCX_NET_DEVICES");
	struct addrinfo hints, *ai = NULL;

	d->worker_net_devices[0] = '\0';
	if ((env != NULL && *env != '\0') || d->cfg.listen_host[0] == '\0')
		return;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	/* As the listener resolves it (conn.c), which then reports a failure. */
	if (getaddrinfo(d->cfg.listen_host, NULL, &hints, &ai) != 0)
		return;
	if (uromd_ip_is_loopback(ai->ai_addr))
		snprintf(d->worker_net_devices, sizeof(d->worker_net_devices), "lo");
	freeaddrinfo(ai);
	if (d->worker_net_devices[0] != '\0')
		sdp_debug("workers get UCX_NET_DEVICES=%s (the service listens on %s)",
			  d->worker_net_devices, d->cfg.listen_host);
}

/* ---- daemon mode -------------------------------------------------------------------------- */

/* SDK log records of the start-up phase also go to the launcher (WARNING and worse). */
static void uromd_launch_log_flush(char *buf)
{
	size_t len = strlen(buf);

	if (uromd_ready_fd < 0 || len == 0)
		return;
	if (write(uromd_ready_fd, buf, len) < 0)
		return;
	if (buf[len - 1] != '\n' && write(uromd_ready_fd, "\n", 1) < 0)
		return;
}

/* The launcher side: relay the daemon's start-up messages, exit 0 when it reports ready. */
static void __attribute__((noreturn)) uromd_launcher(int rfd, pid_t child, const char *log_path)
{
	uint64_t deadline = uromd_now_ms() + UROMD_LAUNCH_TIMEOUT_MS;
	int ready = 0, wstatus;
	ssize_t kept = 0;

	for (;;) {
		struct pollfd p = {.fd = rfd, .events = POLLIN};
		uint64_t now = uromd_now_ms();
		char buf[1024];
		ssize_t n;

		if (now >= deadline) {
			sdp_error("the daemon did not report ready within %d s; see %s",
				  UROMD_LAUNCH_TIMEOUT_MS / 1000, log_path);
			break;
		}
		if (poll(&p, 1, (int)(deadline - now)) <= 0)
			continue;
		n = read(rfd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		/* The daemon's records, already formatted: pass them on as they are. */
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == UROMD_READY_MARK)
				ready = 1;
			else
				buf[kept++] = buf[i];
		}
		if (kept > 0 && write(STDERR_FILENO, buf, (size_t)kept) < 0)
			kept = 0;
		kept = 0;
	}
	while (waitpid(child, &wstatus, 0) < 0 && errno == EINTR)
		;
	if (!ready)
		sdp_error("softdpu-uromd failed to start (log %s)", log_path);
	exit(ready ? UROMD_EXIT_OK : UROMD_EXIT_FAIL);
}

/*
 * Daemon mode: the whole log (start-up included) goes to <run dir>/uromd.log from now on; the
 * terminal keeps only warnings and errors.
 */
static void uromd_open_log(struct uromd *d)
{
	struct doca_log_backend *be;
	char *path = d->log_path;
	FILE *f;

	snprintf(d->log_path, sizeof(d->log_path), "%s/%s", d->run_dir, SDP_UROMD_LOG_FILE);
	f = fopen(path, "ae");
	if (f == NULL) {
		sdp_warn("failed to open log file %s: %m", path);
		return;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	/* The stream lives as long as the process: DOCA log backends cannot be destroyed. */
	if (doca_log_backend_create_with_file_sdk(f, &be) != DOCA_SUCCESS) {
		fclose(f);
		return;
	}
	d->log_file = f;
	doca_log_backend_set_sdk_level(uromd_stderr_be, DOCA_LOG_LEVEL_WARNING);
}

/*
 * SIGHUP: reopen <run dir>/uromd.log (after logrotate renamed it). The log's stream and the
 * process's stdout/stderr are pointed at the new file in place (dup3), so the log backend keeps
 * its FILE. Foreground services log to stderr and have nothing to reopen.
 */
static void uromd_reopen_log(struct uromd *d)
{
	int fd;

	if (d->log_file == NULL) {
		sdp_info("SIGHUP: logging to stderr (foreground), no log file to reopen");
		return;
	}
	fd = open(d->log_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		sdp_warn("SIGHUP: failed to reopen log file %s: %m; logging on to the old file",
			 d->log_path);
		return;
	}
	fflush(NULL);
	if (dup3(fd, fileno(d->log_file), O_CLOEXEC) < 0) {
		sdp_warn("SIGHUP: failed to switch to the reopened log file %s: %m", d->log_path);
		close(fd);
		return;
	}
	if (d->log_std) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	close(fd);
	sdp_info("SIGHUP: log file %s reopened", d->log_path);
}

/*
 * systemd's readiness protocol by hand (no libsystemd): one datagram to $NOTIFY_SOCKET (a path,
 * or an abstract name written with a leading '@'). The variable is taken out of the environment
 * at start-up so that workers do not inherit it.
 */
static char uromd_notify_path[108];

static void uromd_notify_init(void)
{
	const char *s = getenv("NOTIFY_SOCKET");

	if (s != NULL && (s[0] == '/' || s[0] == '@') && strlen(s) < sizeof(uromd_notify_path))
		snprintf(uromd_notify_path, sizeof(uromd_notify_path), "%s", s);
	else if (s != NULL)
		sdp_warn("NOTIFY_SOCKET=%s is not a socket path or abstract name; not notifying",
			 s);
	unsetenv("NOTIFY_SOCKET");
}

static void uromd_notify(const char *state)
{
	struct sockaddr_un sa;
	socklen_t len;
	int fd;

	if (uromd_notify_path[0] == '\0')
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, uromd_notify_path, strlen(uromd_notify_path));
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(uromd_notify_path));
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		sdp_warn("failed to notify systemd (%s): socket: %m", state);
		return;
	}
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, len) < 0)
		sdp_warn("failed to notify systemd (%s) at %s: %m", state, uromd_notify_path);
	close(fd);
}

/* Double fork; returns in the daemon process with stdout/stderr on the log file. */
static doca_error_t uromd_daemonize(struct uromd *d)
{
	char log_path[PATH_MAX + 32];
	struct doca_log_backend *be;
	int pfd[2], logfd, nullfd;
	pid_t pid;

	snprintf(log_path, sizeof(log_path), "%s/%s", d->run_dir, SDP_UROMD_LOG_FILE);
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		sdp_error("pipe2 failed: %m");
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		sdp_error("fork failed: %m");
		close(pfd[0]);
		close(pfd[1]);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	if (pid > 0) {
		close(pfd[1]);
		sodium_memzero(d->secret, sizeof(d->secret)); /* the launcher needs none */
		uromd_launcher(pfd[0], pid, log_path);
	}
	close(pfd[0]);
	if (setsid() < 0) {
		sdp_error("setsid failed: %m");
		_exit(UROMD_EXIT_FAIL);
	}
	pid = fork();
	if (pid < 0) {
		sdp_error("fork failed: %m");
		_exit(UROMD_EXIT_FAIL);
	}
	if (pid > 0)
		_exit(UROMD_EXIT_OK);

	/* The daemon. */
	uromd_ready_fd = pfd[1];
	if (doca_log_backend_create_with_buf_sdk(uromd_launch_log_buf, sizeof(uromd_launch_log_buf),
						 uromd_launch_log_flush, &be) == DOCA_SUCCESS)
		doca_log_backend_set_sdk_level(be, DOCA_LOG_LEVEL_WARNING);
	logfd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (logfd < 0) {
		sdp_error("failed to open log file %s: %m", log_path);
		return DOCA_ERROR_IO_FAILED;
	}
	nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nullfd >= 0) {
		dup2(nullfd, 0);
		close(nullfd);
	}
	fflush(NULL);
	dup2(logfd, 1);
	dup2(logfd, 2);
	close(logfd);
	d->log_std = 1;
	/* stderr is the log file now, which has its own backend since start-up. */
	doca_log_backend_set_sdk_level(uromd_stderr_be, DOCA_LOG_LEVEL_DISABLE);
	if (chdir("/") != 0)
		sdp_warn("chdir / failed: %m");
	umask(077);
	return DOCA_SUCCESS;
}

static void uromd_report_ready(void)
{
	char mark = UROMD_READY_MARK;

	if (uromd_ready_fd < 0)
		return;
	if (write(uromd_ready_fd, &mark, 1) != 1)
		sdp_warn("failed to tell the launcher the service is ready: %m");
	close(uromd_ready_fd);
	uromd_ready_fd = -1;
}

/* ---- the loop ----------------------------------------------------------------------------- */

static void uromd_signals(struct uromd *d, int sigfd)
{
	struct signalfd_siginfo si;

	while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		if (si.ssi_signo == SIGHUP) {
			uromd_reopen_log(d);
			continue;
		}
		sdp_info("signal %u (%s) from pid %u: shutting down", si.ssi_signo,
			 strsignal((int)si.ssi_signo), si.ssi_pid);
		d->stopping = 1;
	}
	uromd_worker_reap(d);
}

static doca_error_t uromd_loop(struct uromd *d, int sigfd)
{
	enum uromd_ev_kind sig_kind = UROMD_EV_SIGNAL;
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = &sig_kind;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, sigfd, &ev) != 0) {
		sdp_error("epoll_ctl(signalfd) failed: %m");
		return DOCA_ERROR_OPERATING_SYSTEM;
	}

	while (!d->stopping) {
		struct epoll_event evs[64];
		uint64_t now, next = 0, t;
		int timeout = 1000, nev, i;
		int signalled = 0;

		now = uromd_now_ms();
		t = uromd_conn_timers(d, now);
		if (t != 0)
			next = t;
		t = uromd_worker_timers(d, now);
		if (t != 0 && (next == 0 || t < next))
			next = t;
		if (next != 0)
			timeout = next <= now ? 0 : (next - now < 1000 ? (int)(next - now) : 1000);

		nev = epoll_wait(d->epfd, evs, 64, timeout);
		if (nev < 0) {
			if (errno == EINTR)
				continue;
			sdp_error("epoll_wait failed: %m");
			return DOCA_ERROR_OPERATING_SYSTEM;
		}
		/* Control sockets and hosts first: reaping (below) frees workers. */
		for (i = 0; i < nev; i++) {
			enum uromd_ev_kind kind = *(enum uromd_ev_kind *)evs[i].data.ptr;

			switch (kind) {
			case UROMD_EV_WORKER:
				uromd_worker_ctrl_event(d, evs[i].data.ptr, evs[i].events);
				break;
			case UROMD_EV_CONN:
				uromd_conn_event(d, evs[i].data.ptr, evs[i].events);
				break;
			case UROMD_EV_LISTENER:
				uromd_conn_accept(d);
				break;
			case UROMD_EV_SIGNAL:
				signalled = 1;
				break;
			}
		}
		if (signalled)
			uromd_signals(d, sigfd);
	}
	return DOCA_SUCCESS;
}

static doca_error_t uromd_setup_cpus(struct uromd *d)
{
	cpu_set_t cs;
	char given[1024], present[1024];

	CPU_ZERO(&cs);
	if (sched_getaffinity(0, sizeof(cs), &cs) != 0) {
		sdp_error("sched_getaffinity failed: %m");
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	for (int c = 0; c < UROMD_MAX_CPUS && c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &cs))
			d->present.bits[c / 64] |= 1ULL << (c % 64);
	if (d->cfg.cpuset_str == NULL) {
		d->cpuset = d->present;
		return DOCA_SUCCESS;
	}
	if (uromd_cpuset_parse(d->cfg.cpuset_str, &d->cpuset) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (!uromd_cpuset_is_subset(&d->cpuset, &d->present)) {
		struct uromd_cpuset usable;

		uromd_cpuset_format(&d->cpuset, given, sizeof(given));
		uromd_cpuset_format(&d->present, present, sizeof(present));
		uromd_cpuset_and(&d->cpuset, &d->present, &usable);
		sdp_warn(
			"--cpuset %s names CPUs this machine lacks (this service may use %s): it is "
			"reported to hosts as given, workers are pinned to the CPUs that exist%s",
			given, present,
			uromd_cpuset_empty(&usable) ? " (none of them: all of these)" : "");
	}
	return DOCA_SUCCESS;
}

int main(int argc, char **argv)
{
	struct uromd d;
	char text[PATH_MAX + 64], secret_path[PATH_MAX], lock_path[PATH_MAX + 32];
	struct uromd_file_id pid_id = {0}, port_id = {0}, listen_id = {0}, secret_rec_id = {0};
	int pid_fd = -1, lock_fd = -1, sigfd = -1, rc = UROMD_EXIT_FAIL;
	doca_error_t status;
	sigset_t mask;

	memset(&d, 0, sizeof(d));
	d.epfd = -1;
	d.listen_fd = -1;
	d.next_dest_id = 1;
	d.start_ms = uromd_now_ms();
	if (doca_log_backend_create_with_file_sdk(stderr, &uromd_stderr_be) != DOCA_SUCCESS) {
		sdp_error("cannot create the stderr log backend");
		return UROMD_EXIT_FAIL;
	}
	status = uromd_parse_args(&d, argc, argv);
	if (status != DOCA_SUCCESS) {
		uromd_config_fini(&d.cfg);
		return status == DOCA_ERROR_INVALID_VALUE ? UROMD_EXIT_USAGE : UROMD_EXIT_FAIL;
	}

	/* Paths are made absolute: the daemon changes to / . */
	if (sdp_uromd_run_dir(d.cfg.run_dir, d.run_dir, sizeof(d.run_dir)) != DOCA_SUCCESS ||
	    sdp_uromd_run_dir_create(d.run_dir) != DOCA_SUCCESS)
		goto out;
	uromd_notify_init();
	if (!d.cfg.foreground)
		uromd_open_log(&d);
	if (d.cfg.pid_file != NULL) {
		if (sdp_uromd_abs_path(d.cfg.pid_file, d.pid_path, sizeof(d.pid_path)) !=
		    DOCA_SUCCESS)
			goto out;
	} else {
		snprintf(d.pid_path, sizeof(d.pid_path), "%s/%s", d.run_dir, SDP_UROMD_PID_FILE);
	}
	snprintf(d.port_path, sizeof(d.port_path), "%s/%s", d.run_dir, SDP_UROMD_PORT_FILE);
	snprintf(d.listen_path, sizeof(d.listen_path), "%s/%s", d.run_dir, SDP_UROMD_LISTEN_FILE);
	if (d.cfg.secret_file != NULL)
		status = sdp_uromd_abs_path(d.cfg.secret_file, secret_path, sizeof(secret_path));
	else
		status = sdp_urom_secret_path(secret_path, sizeof(secret_path));
	if (status != DOCA_SUCCESS)
		goto out;
	if (uromd_setup_cpus(&d) != DOCA_SUCCESS)
		goto out;
	uromd_worker_net_devices(&d);

	if (uromd_pid_lock(d.pid_path, &pid_fd) != DOCA_SUCCESS)
		goto out;
	uromd_file_id_of(pid_fd, &pid_id);
	/* After the pid file: a second start with the same pid file says "already running". */
	snprintf(lock_path, sizeof(lock_path), "%s/%s", d.run_dir, SDP_UROMD_LOCK_FILE);
	if (uromd_run_dir_lock(d.run_dir, lock_path, &lock_fd) != DOCA_SUCCESS)
		goto out_unlink;
	uromd_find_worker(&d);
	uromd_worker_logs_prune(&d);
	/* Before the secret is loaded: the scanner child runs plugin code in a copy of us. */
	if (uromd_plugin_list(&d) != DOCA_SUCCESS ||
	    uromd_scan_plugins(d.plugin_list, &d.scan) != DOCA_SUCCESS)
		goto out_unlink;
	uromd_warn_no_plugins(&d);
	if (sdp_urom_secret_load_or_create(secret_path, d.secret) != DOCA_SUCCESS)
		goto out_unlink;
	/* Where the secret is, so that `softdpu service status` finds the one given here. */
	snprintf(text, sizeof(text), "%s\n", secret_path);
	snprintf(d.secret_rec_path, sizeof(d.secret_rec_path), "%s/%s", d.run_dir,
		 SDP_UROMD_SECRET_PATH_FILE);
	if (uromd_write_file(d.secret_rec_path, text, &secret_rec_id) != DOCA_SUCCESS)
		goto out_unlink;

	if (!d.cfg.foreground && uromd_daemonize(&d) != DOCA_SUCCESS)
		goto out_unlink;
	status = uromd_pid_write(pid_fd, d.pid_path);
	uromd_file_id_of(pid_fd, &pid_id); /* the write changed its ctime */
	if (status != DOCA_SUCCESS || uromd_pid_write(lock_fd, lock_path) != DOCA_SUCCESS)
		goto out_unlink;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) != 0) {
		sdp_error("sigprocmask failed: %m");
		goto out_unlink;
	}
	signal(SIGPIPE, SIG_IGN);
	sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sigfd < 0) {
		sdp_error("signalfd failed: %m");
		goto out_unlink;
	}
	d.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d.epfd < 0) {
		sdp_error("epoll_create1 failed: %m");
		goto out_close_sig;
	}
	if (uromd_conn_listen(&d) != DOCA_SUCCESS)
		goto out_close_ep;
	snprintf(text, sizeof(text), "%u\n", d.bound_port);
	if (uromd_write_file(d.port_path, text, &port_id) != DOCA_SUCCESS)
		goto out_close_listen;
	snprintf(text, sizeof(text), "%s:%u\n", d.cfg.listen_host, d.bound_port);
	if (uromd_write_file(d.listen_path, text, &listen_id) != DOCA_SUCCESS)
		goto out_close_listen;
	sdp_info("softdpu-uromd %s (pid %d) listening on %s:%u, %zu plugin(s) from %s, max "
		 "message size %" PRIu64 ", run dir %s, worker %s",
		 SOFTDPU_VERSION, (int)getpid(), d.cfg.listen_host[0] ? d.cfg.listen_host : "*",
		 d.bound_port, d.scan.num_plugins, d.plugin_list, d.cfg.max_msg_size, d.run_dir,
		 d.worker_bin);
	if (d.cfg.allow_loader_env)
		sdp_warn("--allow-loader-env: hosts may set loader variables (LD_PRELOAD, "
			 "LD_LIBRARY_PATH, ...) for the workers they spawn, i.e. make them run "
			 "code of their choosing");
	uromd_report_ready();
	snprintf(text, sizeof(text), "READY=1\nMAINPID=%d\nSTATUS=listening on %s:%u",
		 (int)getpid(), d.cfg.listen_host[0] ? d.cfg.listen_host : "*", d.bound_port);
	uromd_notify(text);

	if (uromd_loop(&d, sigfd) == DOCA_SUCCESS)
		rc = UROMD_EXIT_OK;
	d.stopping = 1;
	uromd_notify("STOPPING=1");
	uromd_worker_shutdown_all(&d, sigfd);
	uromd_conn_close_all(&d);
	sdp_info("softdpu-uromd (pid %d) stopped", (int)getpid());

out_close_listen:
	uromd_unlink_own(d.port_path, &port_id);
	uromd_unlink_own(d.listen_path, &listen_id);
	uromd_conn_listen_close(&d);
out_close_ep:
	close(d.epfd);
out_close_sig:
	close(sigfd);
out_unlink:
	/* Only files still ours: one removed by hand may have been made again by another daemon. */
	uromd_unlink_own(d.secret_rec_path, &secret_rec_id);
	uromd_unlink_own(d.pid_path, &pid_id);
	if (lock_fd >= 0)
		close(lock_fd);
	close(pid_fd);
out:
	sodium_memzero(d.secret, sizeof(d.secret));
	uromd_scan_result_fini(&d.scan);
	free(d.plugin_list);
	uromd_config_fini(&d.cfg);
	return rc;
}
