/*
 * softdpu-uromd: where the service keeps its files, shared with the `softdpu` CLI (which
 * compiles uromd_paths.c too) so both agree on the run directory and the pid file protocol.
 *
 * Run directory: --run-dir, else SOFTDPU_UROM_RUN_DIR, else $XDG_RUNTIME_DIR/softdpu, else
 * /tmp/softdpu-<uid>. It holds uromd.pid (the daemon's pid, flock'ed by the daemon for its
 * whole life), uromd.port (the bound port, one decimal line), uromd.listen (host:port the
 * daemon listens on), worker-<id>-<pid>.log and, in daemon mode, uromd.log.
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

/* The run directory for `given` (NULL = the defaults above), as an absolute path. Not created.
 * INVALID_VALUE (logged) when it does not fit. */
doca_error_t sdp_uromd_run_dir(const char *given, char *buf, size_t size);

/* Make path absolute against the current directory (into buf). */
doca_error_t sdp_uromd_abs_path(const char *path, char *buf, size_t size);

/* Create the run directory (mode 0700, parents as needed); refuse one that is not a directory
 * or belongs to another user. */
doca_error_t sdp_uromd_run_dir_create(const char *dir);

/*
 * Look at a pid file: *pid_p receives the pid it names (0 if none) and *locked_p whether a
 * live process holds its lock (= a running daemon). NOT_FOUND (not logged) when the file does
 * not exist.
 */
doca_error_t sdp_uromd_pid_file_check(const char *path, pid_t *pid_p, int *locked_p);

#endif /* SDP_UROMD_PATHS_H_ */
