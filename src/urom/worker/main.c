/*
 * softdpu-urom-worker: command line and logging of a UROM worker process.
 *
 *   softdpu-urom-worker --ctrl-fd N --worker-id ID --max-msg-size M [-l LEVEL] so_path:id ...
 *
 * Started by softdpu-uromd, never by hand: N is the worker's end of a SOCK_SEQPACKET socketpair,
 * each so_path:id names a plugin and the id the service assigned to it. Logs (SDK and the
 * plugins' application logs) go to stderr, which the service points at the worker's log file.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doca_log.h"

#include "sdp_config.h"
#include "sdp_log.h"
#include "urom_worker.h"

SDP_LOG_COMPONENT("urom_worker");

#define SDP_UROM_WORKER_DEFAULT_MSG_SIZE 4096

static void urom_worker_usage(FILE *out)
{
	fprintf(out,
		"usage: softdpu-urom-worker --ctrl-fd N --worker-id ID --max-msg-size BYTES\n"
		"                           [-l LEVEL] [--heartbeat-ms H] PLUGIN.so:ID ...\n"
		"  --ctrl-fd N         control socket inherited from softdpu-uromd\n"
		"  --worker-id ID      this worker's id (for logs)\n"
		"  --max-msg-size M    largest notification sent to a host, header included "
		"(default %d)\n"
		"  -l, --log-level L   log level: 10..70 or disable, crit, error, warning, info, "
		"debug, trace (default info)\n"
		"  --heartbeat-ms H    send SW_STATS at least every H ms, changed or not (the "
		"service's\n"
		"                      liveness check; default 0: only when a counter changed)\n"
		"  -h, --help          this text\n"
		"Started by softdpu-uromd; not meant to be run by hand.\n",
		SDP_UROM_WORKER_DEFAULT_MSG_SIZE);
}

/*
 * Split "path:id" at its last colon (paths may hold colons). The path is a copy (free it):
 * argv stays as given, so /proc/<pid>/cmdline and ps show the plugins with their ids.
 */
static int urom_worker_parse_plugin(const char *arg, struct sdp_urom_worker_plugin_arg *out)
{
	const char *colon = strrchr(arg, ':');
	char *path;
	uint64_t id;

	if (colon == NULL || colon == arg || colon[1] == '\0') {
		fprintf(stderr, "softdpu-urom-worker: plugin \"%s\": expected PATH:ID\n", arg);
		return -1;
	}
	if (sdp_config_parse_uint(colon + 1, &id) != DOCA_SUCCESS || id == 0) {
		fprintf(stderr,
			"softdpu-urom-worker: plugin \"%s\": id \"%s\" is not a nonzero "
			"number\n",
			arg, colon + 1);
		return -1;
	}
	path = strndup(arg, (size_t)(colon - arg));
	if (path == NULL) {
		fprintf(stderr, "softdpu-urom-worker: out of memory\n");
		return -1;
	}
	out->path = path;
	out->id = id;
	return 0;
}

static void urom_worker_free_plugins(struct sdp_urom_worker_params *params)
{
	for (size_t i = 0; i < params->num_plugins; i++)
		free((void *)params->plugins[i].path);
	free((void *)params->plugins);
	params->plugins = NULL;
	params->num_plugins = 0;
}

static int urom_worker_parse_num(const char *opt, const char *value, uint64_t max, uint64_t *out)
{
	uint64_t v;

	if (sdp_config_parse_uint(value, &v) != DOCA_SUCCESS || v > max) {
		fprintf(stderr, "softdpu-urom-worker: %s \"%s\": expected a number up to %lu\n",
			opt, value, (unsigned long)max);
		return -1;
	}
	*out = v;
	return 0;
}

/* Everything to stderr: SDK records and the plugins' application records, at one level. */
static int urom_worker_setup_logs(uint32_t level)
{
	struct doca_log_backend *sdk = NULL, *app = NULL;

	if (doca_log_backend_create_with_file_sdk(stderr, &sdk) != DOCA_SUCCESS ||
	    doca_log_backend_create_with_file(stderr, &app) != DOCA_SUCCESS) {
		fprintf(stderr, "softdpu-urom-worker: cannot create log backends\n");
		return -1;
	}
	if (level == DOCA_LOG_LEVEL_DISABLE) {
		(void)doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
		(void)doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_DISABLE);
		return 0;
	}
	(void)doca_log_level_set_global_sdk_limit(level);
	(void)doca_log_level_set_global_lower_limit(level);
	(void)doca_log_backend_set_sdk_level(sdk, level);
	(void)doca_log_backend_set_level_lower_limit(app, level);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{"ctrl-fd", required_argument, NULL, 'c'},
		{"worker-id", required_argument, NULL, 'w'},
		{"max-msg-size", required_argument, NULL, 'm'},
		{"log-level", required_argument, NULL, 'l'},
		{"heartbeat-ms", required_argument, NULL, 'b'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct sdp_urom_worker_params params;
	struct sdp_urom_worker_plugin_arg *plugins = NULL;
	uint32_t level = DOCA_LOG_LEVEL_INFO;
	uint64_t value;
	doca_error_t status;
	int have_fd = 0, opt, i;

	memset(&params, 0, sizeof(params));
	params.ctrl_fd = -1;
	params.max_msg_size = SDP_UROM_WORKER_DEFAULT_MSG_SIZE;

	while ((opt = getopt_long(argc, argv, "l:h", options, NULL)) != -1) {
		switch (opt) {
		case 'c':
			if (urom_worker_parse_num("--ctrl-fd", optarg, 1 << 20, &value) != 0)
				return 2;
			params.ctrl_fd = (int)value;
			have_fd = 1;
			break;
		case 'w':
			if (urom_worker_parse_num("--worker-id", optarg, UINT64_MAX, &value) != 0)
				return 2;
			params.worker_id = value;
			break;
		case 'm':
			if (urom_worker_parse_num("--max-msg-size", optarg, 1u << 30, &value) != 0)
				return 2;
			params.max_msg_size = (size_t)value;
			break;
		case 'b':
			if (urom_worker_parse_num("--heartbeat-ms", optarg, 3600000, &value) != 0)
				return 2;
			params.heartbeat_ms = (uint32_t)value;
			break;
		case 'l':
			if (sdp_log_parse_level(optarg, &level) != DOCA_SUCCESS) {
				fprintf(stderr, "softdpu-urom-worker: bad log level \"%s\"\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			urom_worker_usage(stdout);
			return 0;
		default:
			urom_worker_usage(stderr);
			return 2;
		}
	}
	if (!have_fd) {
		fprintf(stderr, "softdpu-urom-worker: --ctrl-fd is required\n");
		urom_worker_usage(stderr);
		return 2;
	}

	if (optind < argc) {
		plugins = calloc((size_t)(argc - optind), sizeof(*plugins));
		if (plugins == NULL) {
			fprintf(stderr, "softdpu-urom-worker: out of memory\n");
			return 1;
		}
		params.plugins = plugins;
		for (i = optind; i < argc; i++) {
			if (urom_worker_parse_plugin(argv[i], &plugins[i - optind]) != 0) {
				urom_worker_free_plugins(&params);
				return 2;
			}
			params.num_plugins++;
		}
	}

	if (urom_worker_setup_logs(level) != 0) {
		urom_worker_free_plugins(&params);
		return 1;
	}

	/* A host or the service going away must show up as an error, not kill the worker. */
	signal(SIGPIPE, SIG_IGN);
	status = sdp_urom_worker_run(&params);
	urom_worker_free_plugins(&params);
	return status == DOCA_SUCCESS ? 0 : 1;
}
