/*
 * The softdpu CLI's subcommands, each in its own file, dispatched by tools/softdpu.c:
 *   softdpu env       tools/cli_env.c        the environment in one document
 *   softdpu caps      tools/cli_caps.c       capability snapshot of devices, GPUs and plugins
 *   softdpu ladder    tools/cli_ladder_urom.c, tools/cli_ladder_gpunetio.c
 *   softdpu rollback  tools/cli_rollback.c
 * argv[0] is the subcommand's name ("env", "caps", "ladder", "rollback"). json_out is where a
 * JSON document goes (with --json fd 1 is stderr and json_out a private copy of the real
 * stdout, so that stdout carries exactly one document). Each returns an exit status:
 * SDP_CLI_EXIT_* below.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_CLI_H_
#define SDP_CLI_H_

#include <stddef.h>
#include <stdio.h>

#define SDP_CLI_EXIT_OK 0
#define SDP_CLI_EXIT_FAIL 1
#define SDP_CLI_EXIT_USAGE 2
#define SDP_CLI_EXIT_NOT_RUNNING 3

int sdp_cli_env(int argc, char **argv, FILE *json_out);
int sdp_cli_caps(int argc, char **argv, FILE *json_out);
/* argv[1] is "urom" or "gpunetio". */
int sdp_cli_ladder_urom(int argc, char **argv, FILE *json_out);
int sdp_cli_ladder_gpunetio(int argc, char **argv, FILE *json_out);
int sdp_cli_rollback(int argc, char **argv, FILE *json_out);

/*
 * Ask the UROM service for its status document (what `softdpu service status --json` prints
 * when one runs), authenticating as any host does. NULL options take the defaults of
 * `softdpu service status` (run directory, the running daemon's secret file, the address in
 * <run dir>/uromd.listen). 0 with *json_p malloc'd; -1 with the cause in err (never guessed:
 * "no service running (no pid file ...)", "cannot reach ...", ...).
 */
int sdp_cli_service_status(const char *run_dir, const char *secret_file, const char *addr,
			   int timeout_ms, char **json_p, char *err, size_t errlen);

#endif /* SDP_CLI_H_ */
