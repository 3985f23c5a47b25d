/*
 * softdpu-uromd: run directory and pid file helpers (see uromd_paths.h).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "uromd_paths.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sdp_build_config.h"
#include "sdp_config.h"
#include "sdp_log.h"

SDP_LOG_COMPONENT("uromd");

doca_error_t sdp_uromd_abs_path(const char *path, char *buf, size_t size)
{
	char cwd[4096];
	int n;

	if (path == NULL || *path == '\0') {
		sdp_error("empty path");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (path[0] == '/') {
		n = snprintf(buf, size, "%s", path);
	} else {
		if (getcwd(cwd, sizeof(cwd)) == NULL) {
			sdp_error("getcwd failed: %m");
			return DOCA_ERROR_OPERATING_SYSTEM;
		}
		n = snprintf(buf, size, "%s/%s", cwd, path);
	}
	if (n < 0 || (size_t)n >= size) {
		sdp_error("path %s is too long", path);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t sdp_uromd_run_dir(const char *given, char *buf, size_t size)
{
	const char *env = sdp_config_get_string(SDP_CFG_UROM_RUN_DIR);
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char tmp[128];

	if (given != NULL && *given != '\0')
		return sdp_uromd_abs_path(given, buf, size);
	if (env != NULL && *env != '\0')
		return sdp_uromd_abs_path(env, buf, size);
	/* root: the system service's directory (the systemd unit's RuntimeDirectory). */
	if (getuid() == 0)
		return sdp_uromd_abs_path(SDP_UROMD_ROOT_RUN_DIR, buf, size);
	if (xdg != NULL && xdg[0] == '/') {
		if ((size_t)snprintf(buf, size, "%s/softdpu", xdg) >= size) {
			sdp_error("XDG_RUNTIME_DIR %s is too long", xdg);
			return DOCA_ERROR_INVALID_VALUE;
		}
		return DOCA_SUCCESS;
	}
	snprintf(tmp, sizeof(tmp), "/tmp/softdpu-%u", (unsigned int)getuid());
	return sdp_uromd_abs_path(tmp, buf, size);
}

doca_error_t sdp_uromd_run_dir_create(const char *dir)
{
	char path[4096];
	struct stat st;
	size_t len;

	len = strlen(dir);
	if (len == 0 || len >= sizeof(path)) {
		sdp_error("run directory \"%s\": bad length", dir);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(path, dir, len + 1);
	/* Parents first (mode 0700 too), then the directory itself. */
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST) {
			sdp_error("failed to create directory %s: %m", path);
			return errno == EACCES || errno == EPERM ? DOCA_ERROR_NOT_PERMITTED :
								   DOCA_ERROR_OPERATING_SYSTEM;
		}
		*p = '/';
	}
	if (mkdir(path, 0700) != 0 && errno != EEXIST) {
		sdp_error("failed to create run directory %s: %m", path);
		return errno == EACCES || errno == EPERM ? DOCA_ERROR_NOT_PERMITTED :
							   DOCA_ERROR_OPERATING_SYSTEM;
	}
	if (lstat(path, &st) != 0) {
		sdp_error("failed to stat run directory %s: %m", path);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	if (!S_ISDIR(st.st_mode)) {
		sdp_error("run directory %s is not a directory", path);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (st.st_uid != getuid()) {
		sdp_error("run directory %s belongs to uid %u, not to this user (uid %u)", path,
			  (unsigned int)st.st_uid, (unsigned int)getuid());
		return DOCA_ERROR_NOT_PERMITTED;
	}
	return DOCA_SUCCESS;
}

int sdp_uromd_pid_parse(const char *buf, size_t len, pid_t *pid_p)
{
	long pid = 0;
	size_t i;

	/* Exactly what the daemon writes: 1 to 10 digits, no leading zero, one newline. */
	if (len < 2 || len > 11 || buf[len - 1] != '\n' || buf[0] == '0')
		return 0;
	for (i = 0; i + 1 < len; i++) {
		if (buf[i] < '0' || buf[i] > '9')
			return 0;
		pid = pid * 10 + (buf[i] - '0');
	}
	if (pid > INT_MAX)
		return 0;
	*pid_p = (pid_t)pid;
	return 1;
}

int sdp_uromd_pid_is_uromd(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "pid (comm) state ...": comm is at most 15 bytes of the program name. */
	p = strrchr(buf, ')');
	if (p == NULL || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return 0;
	*p = '\0';
	p = strchr(buf, '(');
	return p != NULL && strcmp(p + 1, "softdpu-uromd") == 0;
}

static void pid_file_not_regular(const char *path, const char *what)
{
	sdp_error("pid file %s is %s, not a pid file softdpu-uromd wrote; left untouched", path,
		  what);
}

/* The kind of file st describes, for a message. */
static const char *pid_file_kind(const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return "a symbolic link";
	if (S_ISDIR(st->st_mode))
		return "a directory";
	if (S_ISFIFO(st->st_mode))
		return "a FIFO";
	if (S_ISSOCK(st->st_mode))
		return "a socket";
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		return "a device";
	return "not a regular file";
}

static doca_error_t pid_file_errno_status(int err)
{
	return err == EACCES || err == EPERM ? DOCA_ERROR_NOT_PERMITTED : DOCA_ERROR_IO_FAILED;
}

/*
 * Open path and read at most size - 1 bytes of it. Only a regular file is opened: its type is
 * checked (lstat) before the open, so a device, FIFO or symbolic link given as the pid file is
 * never opened (opening a device can act: /dev/watchdog arms the watchdog), and the file opened
 * is checked to be the one looked at.
 */
static doca_error_t pid_file_open_read(const char *path, int flags, int *fd_p, char *buf,
				       size_t size, size_t *len_p)
{
	struct stat st_path, st;
	ssize_t n;
	int fd;

	if (lstat(path, &st_path) != 0) {
		int err = errno;

		if (err == ENOENT)
			return DOCA_ERROR_NOT_FOUND;
		sdp_error("failed to look at pid file %s: %s", path, strerror(err));
		return pid_file_errno_status(err);
	}
	if (!S_ISREG(st_path.st_mode)) {
		pid_file_not_regular(path, pid_file_kind(&st_path));
		return DOCA_ERROR_INVALID_VALUE;
	}
	fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		if (err == ENOENT)
			return DOCA_ERROR_NOT_FOUND; /* removed meanwhile */
		if (err == ELOOP) {
			pid_file_not_regular(path, "a symbolic link");
			return DOCA_ERROR_INVALID_VALUE;
		}
		sdp_error("failed to open pid file %s: %s", path, strerror(err));
		return pid_file_errno_status(err);
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != st_path.st_dev ||
	    st.st_ino != st_path.st_ino) {
		sdp_error("pid file %s was replaced while being opened; left untouched, try again",
			  path);
		close(fd);
		return DOCA_ERROR_AGAIN;
	}
	n = pread(fd, buf, size - 1, 0);
	if (n < 0) {
		sdp_error("failed to read pid file %s: %m", path);
		close(fd);
		return DOCA_ERROR_IO_FAILED;
	}
	buf[n] = '\0';
	*len_p = (size_t)n;
	*fd_p = fd;
	return DOCA_SUCCESS;
}

static void pid_file_not_ours(const char *path)
{
	sdp_error("%s does not hold a pid as softdpu-uromd writes it (one decimal number and a "
		  "newline): not a softdpu pid file, left untouched (remove it yourself or pick "
		  "another --pid-file)",
		  path);
}

doca_error_t sdp_uromd_pid_file_check(const char *path, pid_t *pid_p, int *locked_p)
{
	char buf[SDP_UROMD_PID_FILE_MAX];
	size_t len = 0;
	pid_t pid = 0;
	doca_error_t status;
	int fd, locked = 0;

	status = pid_file_open_read(path, O_RDONLY, &fd, buf, sizeof(buf), &len);
	if (status != DOCA_SUCCESS)
		return status;
	if (flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK)
		locked = 1;
	close(fd);
	/* A daemon writes its pid right after taking the lock: a locked empty file is starting. */
	if (!sdp_uromd_pid_parse(buf, len, &pid) && !(locked && len == 0)) {
		pid_file_not_ours(path);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*pid_p = pid;
	*locked_p = locked;
	return DOCA_SUCCESS;
}

doca_error_t sdp_uromd_pid_file_claim(const char *path, int flags, int *fd_p, pid_t *old_pid_p)
{
	char buf[SDP_UROMD_PID_FILE_MAX];
	struct stat st_fd, st_path;
	size_t len = 0;
	pid_t pid = 0;
	doca_error_t status;
	int fd;

	*old_pid_p = 0;
	status = pid_file_open_read(path, flags, &fd, buf, sizeof(buf), &len);
	if (status != DOCA_SUCCESS)
		return status;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int err = errno;

		close(fd);
		if (err != EWOULDBLOCK) {
			sdp_error("failed to lock pid file %s: %s", path, strerror(err));
			return DOCA_ERROR_IO_FAILED;
		}
		*old_pid_p = sdp_uromd_pid_parse(buf, len, &pid) ? pid : 0;
		sdp_error("softdpu-uromd is already running (pid %d, pid file %s)", (int)*old_pid_p,
			  path);
		return DOCA_ERROR_IN_USE;
	}
	/* Read again under the lock: the holder may have written it meanwhile. */
	len = 0;
	{
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

		len = n > 0 ? (size_t)n : 0;
	}
	if (!sdp_uromd_pid_parse(buf, len, &pid)) {
		close(fd);
		pid_file_not_ours(path);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*old_pid_p = pid;
	if (sdp_uromd_pid_is_uromd(pid)) {
		close(fd);
		sdp_error(
			"pid file %s names pid %d, a running softdpu-uromd that does not hold its "
			"lock; left untouched",
			path, (int)pid);
		return DOCA_ERROR_IN_USE;
	}
	/* Still the file at path (a stop may have removed it between open and flock)? */
	if (fstat(fd, &st_fd) != 0 || stat(path, &st_path) != 0 || st_fd.st_dev != st_path.st_dev ||
	    st_fd.st_ino != st_path.st_ino) {
		close(fd);
		sdp_error("pid file %s was replaced or removed meanwhile; try again", path);
		return DOCA_ERROR_AGAIN;
	}
	*fd_p = fd;
	return DOCA_SUCCESS;
}

doca_error_t sdp_uromd_pid_file_remove_stale(const char *path, pid_t *old_pid_p)
{
	doca_error_t status;
	int fd = -1;

	status = sdp_uromd_pid_file_claim(path, O_RDONLY, &fd, old_pid_p);
	if (status != DOCA_SUCCESS)
		return status;
	/* Unlinked while we hold the lock: a daemon starting meanwhile cannot take it over. */
	if (unlink(path) != 0) {
		int err = errno;

		sdp_error("failed to remove the stale pid file %s: %s", path, strerror(err));
		close(fd);
		return err == EACCES || err == EPERM ? DOCA_ERROR_NOT_PERMITTED :
						       DOCA_ERROR_IO_FAILED;
	}
	close(fd);
	return DOCA_SUCCESS;
}

/* Where the running program is installed: its directory minus the bindir part ("bin"), i.e. the
 * prefix it runs from; 0 when it does not run from a <something>/<bindir>. */
static int install_root(char *buf, size_t size)
{
	const char *bindir = SDP_BINDIR_REL;
	char self[PATH_MAX];
	size_t blen = strlen(bindir), len;
	ssize_t n;
	char *slash;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 0;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash == NULL)
		return 0;
	*slash = '\0'; /* the program's directory */
	len = strlen(self);
	if (blen == 0 || bindir[0] == '/' || bindir[0] == '.' || len <= blen ||
	    strcmp(self + len - blen, bindir) != 0 || self[len - blen - 1] != '/')
		return 0;
	self[len - blen - 1] = '\0';
	return (size_t)snprintf(buf, size, "%s", self) < size;
}

int sdp_uromd_install_path(const char *installed, char *buf, size_t size)
{
	const char *prefix = SDP_PREFIX;
	size_t plen = strlen(prefix);
	char root[PATH_MAX];
	struct stat st;

	/* Under the prefix and this program runs from another one: the same path there. */
	if (strncmp(installed, prefix, plen) == 0 && installed[plen] == '/' &&
	    install_root(root, sizeof(root)) && strcmp(root, prefix) != 0 &&
	    (size_t)snprintf(buf, size, "%s%s", root, installed + plen) < size &&
	    stat(buf, &st) == 0)
		return 1;
	if ((size_t)snprintf(buf, size, "%s", installed) >= size) {
		buf[0] = '\0';
		return 0;
	}
	return 0;
}
