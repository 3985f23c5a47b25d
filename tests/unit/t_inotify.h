/*
 * Whether a file was opened: an inotify watch for IN_OPEN on one path (tests that a path of the
 * wrong kind, a FIFO say, is refused without being opened). Header only.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef T_INOTIFY_H_
#define T_INOTIFY_H_

#include <stdint.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "t_helpers.h"

/* Watch path for opens; the inotify fd (non-blocking), or -1 after a test failure. */
static inline int t_watch_open(const char *path)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	if (fd < 0 || inotify_add_watch(fd, path, IN_OPEN) < 0) {
		t_fail("cannot watch %s with inotify", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* 1 when the watched path was opened since t_watch_open (or the last call); closes nothing. */
static inline int t_was_opened(int fd)
{
	uint8_t buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	return fd >= 0 && read(fd, buf, sizeof(buf)) > 0;
}

#endif /* T_INOTIFY_H_ */
