/*
 * `softdpu env [--json] [--run-dir D] [--secret-file F] [--addr H:P] [--timeout-ms N]`: this
 * host's environment in one document (docs/tools.md, docs/schemas/env.schema.json): softdpu's
 * version and DOCA API level, UCX (version, transports and devices), Open MPI, CUDA driver and
 * runtime, the devices, the GPUs with their GPUDirect facts, hugepages, and whether the UROM
 * service configured for this host answers (its version and plugins). What cannot be read is
 * reported as missing with the cause, never guessed.
 *
 * Also defines what `softdpu caps` shares with it (sdp_cli_info.h).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "sdp_cli.h"
#include "sdp_cli_info.h"
#include "sdp_tool_info.h"

/* ---- shared with cli_caps.c --------------------------------------------------------------- */

enum {
	OPT_RUN_DIR = 256,
	OPT_SECRET_FILE,
	OPT_ADDR,
	OPT_TIMEOUT_MS,
	OPT_JSON
};

int sdp_cli_info_parse(int argc, char **argv, int with_dev, struct sdp_cli_info_opts *o,
		       void (*usage)(FILE *), const char **err_p)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, OPT_JSON},
		{"run-dir", required_argument, NULL, OPT_RUN_DIR},
		{"secret-file", required_argument, NULL, OPT_SECRET_FILE},
		{"addr", required_argument, NULL, OPT_ADDR},
		{"timeout-ms", required_argument, NULL, OPT_TIMEOUT_MS},
		{"dev", required_argument, NULL, 'd'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt;

	memset(o, 0, sizeof(*o));
	o->timeout_ms = SDP_CLI_INFO_TIMEOUT_MS;
	*err_p = NULL;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--json") == 0)
			o->json = 1;
	optind = 0; /* GNU: start over (softdpu.c may have parsed before) */
	while ((opt = getopt_long(argc, argv, with_dev ? "+d:h" : "+h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_RUN_DIR:
			o->run_dir = optarg;
			break;
		case OPT_SECRET_FILE:
			o->secret_file = optarg;
			break;
		case OPT_ADDR:
			o->addr = optarg;
			break;
		case OPT_TIMEOUT_MS: {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (end == optarg || *end != '\0' || v < 1 || v > 600000) {
				*err_p = "--timeout-ms takes 1 to 600000";
				return -1;
			}
			o->timeout_ms = (int)v;
			break;
		}
		case 'd':
			if (!with_dev)
				goto bad;
			o->dev = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			goto bad;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "softdpu %s: unexpected argument '%s'\n", argv[0], argv[optind]);
		*err_p = "unexpected argument (see --help)";
		return -1;
	}
	return 0;
bad:
	*err_p = "bad usage (see --help)";
	return -1;
}

int sdp_cli_info_fail(const struct sdp_cli_info_opts *o, FILE *json_out, const char *cmd,
		      const char *msg, int status)
{
	fprintf(stderr, "softdpu %s: %s\n", cmd, msg);
	if (o->json) {
		struct json_object *d = json_object_new_object();

		json_object_object_add(d, "error", json_object_new_string(msg));
		json_object_object_add(d, "exit_status", json_object_new_int(status));
		sdp_info_print_json(json_out, d);
		json_object_put(d);
	}
	return status;
}

static struct json_object *not_answering(const char *reason)
{
	struct json_object *s = json_object_new_object();

	json_object_object_add(s, "answering", json_object_new_boolean(0));
	json_object_object_add(s, "reason", json_object_new_string(reason));
	return s;
}

/* Copy key from the status document (a reference to the same value) when present. */
static void copy_key(struct json_object *to, struct json_object *from, const char *key)
{
	struct json_object *v;

	if (json_object_object_get_ex(from, key, &v))
		json_object_object_add(to, key, json_object_get(v));
}

struct json_object *sdp_cli_service_info(const struct sdp_cli_info_opts *o)
{
	static const char *const keys[] = {"version", "doca_api", "protocol",
					   "pid",     "listen",	  "run_dir"};
	struct json_object *root, *s, *plugins, *arr, *skipped;
	char err[512] = "", *json = NULL;

	if (sdp_cli_service_status(o->run_dir, o->secret_file, o->addr, o->timeout_ms, &json, err,
				   sizeof(err)) != 0)
		return not_answering(err[0] != '\0' ? err : "the status query failed");
	root = json_tokener_parse(json);
	free(json);
	if (root == NULL || !json_object_is_type(root, json_type_object)) {
		json_object_put(root);
		return not_answering("the service answered a status document that is not JSON");
	}
	s = json_object_new_object();
	json_object_object_add(s, "answering", json_object_new_boolean(1));
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		copy_key(s, root, keys[i]);
	arr = json_object_new_array();
	if (json_object_object_get_ex(root, "plugins", &plugins) &&
	    json_object_is_type(plugins, json_type_array))
		for (size_t i = 0; i < json_object_array_length(plugins); i++) {
			struct json_object *p = json_object_array_get_idx(plugins, i);
			struct json_object *e = json_object_new_object();

			copy_key(e, p, "name");
			copy_key(e, p, "version");
			copy_key(e, p, "id");
			copy_key(e, p, "path");
			json_object_array_add(arr, e);
		}
	json_object_object_add(s, "plugins", arr);
	if (json_object_object_get_ex(root, "skipped", &skipped))
		json_object_object_add(s, "skipped", json_object_get(skipped));
	json_object_put(root);
	return s;
}

void sdp_cli_info_print_service(FILE *out, struct json_object *svc)
{
	struct json_object *v, *plugins = NULL;

	if (json_object_object_get_ex(svc, "answering", &v) && !json_object_get_boolean(v)) {
		fprintf(out, "UROM service:   not answering (%s)\n",
			sdp_info_str(svc, "reason") ?: "unknown cause");
		return;
	}
	json_object_object_get_ex(svc, "plugins", &plugins);
	fprintf(out, "UROM service:   answering at %s (softdpu-uromd %s), %zu plugins\n",
		sdp_info_str(svc, "listen") ?: "?", sdp_info_str(svc, "version") ?: "?",
		plugins != NULL ? json_object_array_length(plugins) : 0);
	for (size_t i = 0; plugins != NULL && i < json_object_array_length(plugins); i++) {
		struct json_object *p = json_object_array_get_idx(plugins, i), *id = NULL,
				   *ver = NULL;

		json_object_object_get_ex(p, "id", &id);
		json_object_object_get_ex(p, "version", &ver);
		fprintf(out, "  %-20s version %s  id %s\n", sdp_info_str(p, "name") ?: "?",
			ver != NULL ? json_object_get_string(ver) : "?",
			id != NULL ? json_object_get_string(id) : "?");
	}
}

/* ---- softdpu env -------------------------------------------------------------------------- */

static void env_usage(FILE *out)
{
	fprintf(out,
		"Usage: softdpu env [--json] [--run-dir <dir>] [--secret-file <file>]\n"
		"                   [--addr <host:port>] [--timeout-ms <ms>]\n"
		"\n"
		"softdpu's version and DOCA API level, UCX, Open MPI, CUDA, the devices, GPUs,\n"
		"hugepages and the UROM service of this host; --json: one JSON document\n"
		"(docs/schemas/env.schema.json). The service options are those of\n"
		"`softdpu service status`. Exit status: 0 ok (missing pieces are reported,\n"
		"not failures), 1 the device list could not be read, 2 bad usage.\n");
}

static struct json_object *jget(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return o != NULL && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static void print_env_text(struct json_object *doc)
{
	struct json_object *v = jget(doc, "versions"), *ucx = jget(doc, "ucx"),
			   *gpus = jget(doc, "gpus"), *hp = jget(doc, "hugepages"),
			   *devs = jget(doc, "devices"), *pm;
	char buf[512];

	printf("softdpu:        %s (DOCA API %s)\n", sdp_info_str(v, "softdpu") ?: "?",
	       sdp_info_str(v, "doca_api") ?: "?");
	printf("UCX:            %s", sdp_info_present_str(ucx, buf, sizeof(buf)));
	if (jget(ucx, "transports") != NULL) {
		struct json_object *t = jget(ucx, "transports");

		printf(" (transports:");
		for (size_t i = 0; i < json_object_array_length(t); i++)
			printf(" %s", json_object_get_string(json_object_array_get_idx(t, i)));
		printf(")");
	}
	printf("\nOpen MPI:       %s", sdp_info_present_str(jget(doc, "mpi"), buf, sizeof(buf)));
	if (sdp_info_str(jget(doc, "mpi"), "path") != NULL)
		printf(" (%s)", sdp_info_str(jget(doc, "mpi"), "path"));
	printf("\nCUDA driver:    %s\n",
	       sdp_info_present_str(jget(v, "cuda_driver"), buf, sizeof(buf)));
	printf("CUDA runtime:   %s",
	       sdp_info_present_str(jget(v, "cuda_runtime"), buf, sizeof(buf)));
	if (sdp_info_str(jget(v, "cuda_runtime"), "library") != NULL)
		printf(" (%s)", sdp_info_str(jget(v, "cuda_runtime"), "library"));
	printf("\n");
	if (!json_object_get_boolean(jget(gpus, "present"))) {
		printf("GPUs:           none (%s)\n", sdp_info_str(gpus, "reason") ?: "?");
	} else {
		struct json_object *l = jget(gpus, "list");

		printf("GPUs:           %zu\n", json_object_array_length(l));
		for (size_t i = 0; i < json_object_array_length(l); i++) {
			struct json_object *g = json_object_array_get_idx(l, i);
			struct json_object *mem = jget(g, "memory_bytes");
			struct json_object *db = jget(g, "dmabuf_supported");
			char mib[32] = "?";

			if (mem != NULL)
				snprintf(mib, sizeof(mib), "%lld",
					 (long long)(json_object_get_int64(mem) >> 20));
			printf("  %s %s cc %s, %s MiB, dma-buf %s, GPUNetIO %s\n",
			       sdp_info_str(g, "pci_bus_id") ?: "?", sdp_info_str(g, "name") ?: "?",
			       sdp_info_str(g, "compute_capability") ?: "?", mib,
			       db == NULL		   ? "unknown" :
			       json_object_get_boolean(db) ? "yes" :
							     "no",
			       json_object_get_boolean(jget(g, "gpunetio_supported")) ?
				       "supported" :
				       "not supported");
		}
	}
	printf("NVIDIA module:  %s\n",
	       sdp_info_present_str(jget(gpus, "kernel_module"), buf, sizeof(buf)));
	pm = jget(gpus, "nvidia_peermem");
	if (json_object_get_boolean(jget(pm, "present")))
		printf("nvidia_peermem: %s\n",
		       json_object_get_boolean(jget(pm, "loaded")) ? "loaded" : "not loaded");
	else
		printf("nvidia_peermem: unknown (%s)\n", sdp_info_str(pm, "reason") ?: "?");
	if (json_object_get_boolean(jget(jget(hp, "meminfo"), "present"))) {
		struct json_object *m = jget(hp, "meminfo");

		printf("hugepages:      %s free of %s (default size %s kB)\n",
		       json_object_get_string(jget(m, "free")),
		       json_object_get_string(jget(m, "total")),
		       json_object_get_string(jget(m, "default_size_kb")));
	} else {
		printf("hugepages:      unknown (%s)\n",
		       sdp_info_str(jget(hp, "meminfo"), "reason") ?: "?");
	}
	if (devs != NULL) {
		printf("devices:        %zu\n", json_object_array_length(devs));
		for (size_t i = 0; i < json_object_array_length(devs); i++) {
			struct json_object *d = json_object_array_get_idx(devs, i);

			printf("  %-16s pci %s backend %s iface %s link %s mac %s\n",
			       sdp_info_str(d, "name") ?: "?", sdp_info_str(d, "pci_addr") ?: "?",
			       sdp_info_str(d, "backend") ?: "?", sdp_info_str(d, "iface") ?: "?",
			       sdp_info_str(d, "link") ?: "?", sdp_info_str(d, "mac") ?: "-");
		}
	} else {
		printf("devices:        error: %s\n", sdp_info_str(doc, "devices_error") ?: "?");
	}
	sdp_cli_info_print_service(stdout, jget(doc, "service"));
}

int sdp_cli_env(int argc, char **argv, FILE *json_out)
{
	struct sdp_cli_info_opts o;
	struct json_object *doc, *devs;
	const char *why;
	char err[512];
	int r, rc = SDP_CLI_EXIT_OK;

	r = sdp_cli_info_parse(argc, argv, 0, &o, env_usage, &why);
	if (r > 0)
		return SDP_CLI_EXIT_OK;
	if (r < 0)
		return sdp_cli_info_fail(&o, json_out, "env", why, SDP_CLI_EXIT_USAGE);

	doc = json_object_new_object();
	if (doc == NULL)
		return sdp_cli_info_fail(&o, json_out, "env", "out of memory", SDP_CLI_EXIT_FAIL);
	json_object_object_add(doc, "versions", sdp_info_versions());
	json_object_object_add(doc, "ucx", sdp_info_ucx());
	json_object_object_add(doc, "mpi", sdp_info_mpi());
	devs = sdp_info_devices(NULL, 0, err, sizeof(err));
	if (devs == NULL) {
		json_object_object_add(doc, "devices", json_object_new_array());
		json_object_object_add(doc, "devices_error", json_object_new_string(err));
		fprintf(stderr, "softdpu env: %s\n", err);
		rc = SDP_CLI_EXIT_FAIL;
	} else {
		json_object_object_add(doc, "devices", devs);
	}
	json_object_object_add(doc, "gpus", sdp_info_gpus());
	json_object_object_add(doc, "hugepages", sdp_info_hugepages());
	json_object_object_add(doc, "service", sdp_cli_service_info(&o));

	if (o.json) {
		if (sdp_info_print_json(json_out, doc) != 0)
			rc = SDP_CLI_EXIT_FAIL;
	} else {
		print_env_text(doc);
		if (fflush(stdout) != 0)
			rc = SDP_CLI_EXIT_FAIL;
	}
	json_object_put(doc);
	return rc;
}
