/*
 * softdpu-uromd: where the service keeps its files, shared with the `softdpu` CLI (which
 * compiles uromd_paths.c too) so both agree on the run directory and the pid file protocol.
 *
 * Run directory: --run-dir, else SOFTDPU_UROM_RUN_DIR, else (root) /run/softdpu, else
 * $XDG_RUNTIME_DIR/softdpu, else /tmp/softdpu-<uid>. It holds uromd.pid (the daemon's pid, flock'ed by the daemon for its
 * whole life), uromd.lock (flock'ed by the daemon: one daemon per run directory), uromd.port (the bound port, one decimal line), uromd.listen (host:port the
 * daemon listens on), uromd.secret-path (the secret file it uses), worker-<id>-<pid>.log and,
 * in daemon mode, uromd.log.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_UROMD_PATHS_H_
#define SDP_UROMD_PATHS_H_

#include <stddef.h>
#include <sys/types.h>

#include "doca_error.h"

#define SDP_UROMD_PID_FILE "uromd.pid"
#define SDP_UROMD_PORT_FILE "uromd.port"
#define SDP_UROMD_LISTEN_FILE "uromd.listen"
#define SDP_UROMD_LOG_FILE "uromd.log"
/* flock'ed by the daemon for its whole life (one daemon per run directory); holds its pid. */
#define SDP_UROMD_LOCK_FILE "uromd.lock"
/* The absolute path of the secret file the daemon uses, one line (for `softdpu service status`). */
#define SDP_UROMD_SECRET_PATH_FILE "uromd.secret-path"

/* root's default run directory (the systemd unit's RuntimeDirectory). */
#define SDP_UROMD_ROOT_RUN_DIR "/run/softdpu"

/*
 * An installed file's path (a build-time absolute path under the configured prefix) as seen by
 * the running program: when the program runs from <root>/<bindir> with <root> not the configured
 * prefix (a relocated or DESTDIR-staged install) and <root><path less prefix> exists, that (1);
 * else the path as given (0). buf holds the result ("" when it does not fit).
 */
int sdp_uromd_install_path(const char *installed, char *buf, size_t size);

/* The run directory for `given` (NULL = the defaults above), as an absolute path. Not created.
 * INVALID_VALUE (logged) when it does not fit. */
doca_error_t sdp_uromd_run_dir(const char *given, char *buf, size_t size);

/* Make path absolute against the current directory (into buf). */
doca_error_t sdp_uromd_abs_path(const char *path, char *buf, size_t size);

/* Create the run directory (mode 0700, parents as needed); refuse one that is not a directory
 * or belongs to another user. */
doca_error_t sdp_uromd_run_dir_create(const char *dir);

/*
 * The pid file protocol. The daemon creates the file (O_EXCL), flocks it for its whole life and
 * writes its pid as one decimal number and a newline; that is the only content a softdpu tool
 * treats as a pid file. A file holding anything else (or a symbolic link, a directory, a device)
 * is never removed, truncated or replaced: every function below refuses it with
 * DOCA_ERROR_INVALID_VALUE, logged, naming the file. An unlocked pid file is stale (and may be
 * replaced or removed) only when the process it names is gone or is not softdpu-uromd.
 */
#define SDP_UROMD_PID_FILE_MAX 32 /* bytes read from a pid file; a valid one has at most 11 */

/* 1 when buf[0..len) is exactly a pid as the daemon writes it ("1234\n"); *pid_p = the pid. */
int sdp_uromd_pid_parse(const char *buf, size_t len, pid_t *pid_p);

/* 1 when pid is a live (not zombie) process whose name is softdpu-uromd. */
int sdp_uromd_pid_is_uromd(pid_t pid);

/*
 * Look at a pid file: *pid_p receives the pid it names (0 while a daemon that holds the lock
 * has not written it yet) and *locked_p whether a live process holds its lock (= a running
 * daemon). NOT_FOUND (not logged) when the file does not exist; INVALID_VALUE (logged) when it
 * is not a pid file (see above; a path that is not a regular file is refused without being
 * opened); AGAIN (logged) when the file was replaced while being opened.
 */
doca_error_t sdp_uromd_pid_file_check(const char *path, pid_t *pid_p, int *locked_p);

/*
 * Take over an existing pid file: open it (flags: O_RDONLY or O_RDWR), lock it exclusively and
 * check that it is stale. DOCA_SUCCESS: *fd_p is the locked file, *old_pid_p the pid it named.
 * NOT_FOUND (not logged): no such file. Logged: IN_USE: a live process holds the lock
 * (*old_pid_p = its pid, 0 if not written yet), or the file names a running softdpu-uromd;
 * INVALID_VALUE: not a pid file; AGAIN: the file changed meanwhile.
 */
doca_error_t sdp_uromd_pid_file_claim(const char *path, int flags, int *fd_p, pid_t *old_pid_p);

/* Remove a stale pid file (claimed as above, unlinked under the lock). Same statuses. */
doca_error_t sdp_uromd_pid_file_remove_stale(const char *path, pid_t *old_pid_p);

#endif /* SDP_UROMD_PATHS_H_ */
