/*
 * The pid file protocol of softdpu-uromd and the `softdpu` CLI (src/urom/service/uromd_paths.c)
 * on paths that are not pid files: a FIFO, a device (/dev/null), a directory and a symbolic
 * link are refused with DOCA_ERROR_INVALID_VALUE, logged naming what they are, and never
 * opened (the type is checked first: opening a device can act on it, /dev/watchdog arms
 * itself); a stale pid file is still taken over and removed.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doca_log.h"
#include "t_helpers.h"
#include "t_log_capture.h"
#include "t_inotify.h"
#include "uromd_paths.h"

/* Every pid file call refuses path with INVALID_VALUE, logging `what`; watch: -1 or inotify. */
static void check_refused(const char *path, const char *what, int watch)
{
	pid_t pid = 0;
	int fd = -1, locked = 0;

	t_log_reset();
	T_STATUS(sdp_uromd_pid_file_check(path, &pid, &locked), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_uromd_pid_file_claim(path, O_RDWR, &fd, &pid), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_uromd_pid_file_claim(path, O_RDONLY, &fd, &pid), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_uromd_pid_file_remove_stale(path, &pid), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(fd, -1);
	if (strstr(t_log, what) == NULL || strstr(t_log, path) == NULL)
		t_fail("%s: the log does not say \"%s\": %s", path, what, t_log);
	if (watch >= 0 && t_was_opened(watch))
		t_fail("%s (%s) was opened", path, what);
}

int main(void)
{
	char dir[] = "/tmp/test_uromd_paths.XXXXXX", path[128], link[128];
	struct stat st;
	pid_t pid = 0;
	int watch, fd = -1, locked = 1;
	FILE *f;

	(void)t_log_capture_level(DOCA_LOG_LEVEL_ERROR);
	if (mkdtemp(dir) == NULL) {
		t_fail("mkdtemp failed");
		T_DONE();
	}

	/* A FIFO: opening it O_RDWR would not block, so whether it was opened is watched. */
	snprintf(path, sizeof(path), "%s/fifo", dir);
	T_EQ_INT(mkfifo(path, 0600), 0);
	watch = t_watch_open(path);
	check_refused(path, "is a FIFO", watch);
	close(watch);
	T_EQ_INT(lstat(path, &st), 0);
	T_TRUE(S_ISFIFO(st.st_mode));
	unlink(path);

	/* A device (others may open /dev/null meanwhile: only the refusal is checked). */
	check_refused("/dev/null", "is a device", -1);
	T_EQ_INT(stat("/dev/null", &st), 0);
	T_TRUE(S_ISCHR(st.st_mode));

	/* A directory and a symbolic link (to a valid stale pid file: still refused). */
	check_refused(dir, "is a directory", -1);
	snprintf(path, sizeof(path), "%s/uromd.pid", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	f = fopen(path, "w");
	if (f != NULL) {
		fprintf(f, "%d\n", 999999999); /* above any pid_max: no such process */
		fclose(f);
	}
	T_EQ_INT(symlink(path, link), 0);
	watch = t_watch_open(path);
	check_refused(link, "is a symbolic link", watch);
	close(watch);
	unlink(link);

	/* Absent: NOT_FOUND. A stale regular pid file: checked, claimed, removed. */
	T_STATUS(sdp_uromd_pid_file_check(link, &pid, &locked), DOCA_ERROR_NOT_FOUND);
	T_OK(sdp_uromd_pid_file_check(path, &pid, &locked));
	T_EQ_INT(pid, 999999999);
	T_EQ_INT(locked, 0);
	T_OK(sdp_uromd_pid_file_claim(path, O_RDWR, &fd, &pid));
	T_TRUE(fd >= 0);
	if (fd >= 0)
		close(fd);
	T_OK(sdp_uromd_pid_file_remove_stale(path, &pid));
	T_TRUE(access(path, F_OK) != 0);
	rmdir(dir);
	T_DONE();
}
