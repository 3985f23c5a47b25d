/*
 * softdpu-uromd: run directory and pid file helpers (see uromd_paths.h).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "uromd_paths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

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

doca_error_t sdp_uromd_pid_file_check(const char *path, pid_t *pid_p, int *locked_p)
{
	char buf[32];
	ssize_t n;
	long pid = 0;
	int fd, locked = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return DOCA_ERROR_NOT_FOUND;
		sdp_error("failed to open pid file %s: %m", path);
		return errno == EACCES ? DOCA_ERROR_NOT_PERMITTED : DOCA_ERROR_IO_FAILED;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		pid = strtol(buf, NULL, 10);
		if (pid < 0)
			pid = 0;
	}
	if (flock(fd, LOCK_SH | LOCK_NB) != 0) {
		if (errno == EWOULDBLOCK)
			locked = 1;
	}
	close(fd);
	*pid_p = (pid_t)pid;
	*locked_p = locked;
	return DOCA_SUCCESS;
}
