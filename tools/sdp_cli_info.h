/*
 * What `softdpu env` (tools/cli_env.c, which defines these) and `softdpu caps`
 * (tools/cli_caps.c) share: their service options and the UROM service's facts.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_CLI_INFO_H_
#define SDP_CLI_INFO_H_

#include <stdio.h>

#include <json-c/json.h>

/* How long the status query may take, unless --timeout-ms says otherwise. */
#define SDP_CLI_INFO_TIMEOUT_MS 5000

struct sdp_cli_info_opts {
	int json;
	const char *run_dir, *secret_file, *addr; /* NULL: `softdpu service status`'s defaults */
	int timeout_ms;
	const char *dev; /* caps only: -d/--dev */
};

/*
 * Parse `<cmd> [--json] [--run-dir D] [--secret-file F] [--addr H:P] [--timeout-ms N]` (and,
 * with with_dev, `-d/--dev NAME|PCI`). 0 to go on, 1 after --help (usage printed on stdout),
 * -1 on bad usage with *err_p the cause (the caller reports it: sdp_cli_info_fail).
 */
int sdp_cli_info_parse(int argc, char **argv, int with_dev, struct sdp_cli_info_opts *o,
		       void (*usage)(FILE *), const char **err_p);

/*
 * The UROM service configured for this host: {"answering": true, version, doca_api, protocol,
 * pid, listen, run_dir, "plugins": [{name, version, id, path}], "skipped": [{path, reason}]}
 * or {"answering": false, "reason": "<the real cause>"}.
 */
struct json_object *sdp_cli_service_info(const struct sdp_cli_info_opts *o);

/* With --json: {"error": msg, "exit_status": status} on json_out. Returns status. */
int sdp_cli_info_fail(const struct sdp_cli_info_opts *o, FILE *json_out, const char *cmd,
		      const char *msg, int status);

/* Short text of a service object: "answering at H:P (softdpu-uromd V), N plugins: ..." */
void sdp_cli_info_print_service(FILE *out, struct json_object *svc);

#endif /* SDP_CLI_INFO_H_ */
