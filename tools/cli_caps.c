/*
 * `softdpu caps [--json] [-d DEV] [--run-dir D] [--secret-file F] [--addr H:P]
 * [--timeout-ms N]`: one capability snapshot (docs/tools.md, docs/schemas/caps.schema.json):
 * the Ethernet queue capabilities of every device (what doca_caps prints), the GPUs, and the
 * plugins (name, version, id) of the running UROM service, or the cause they could not be read.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "sdp_cli.h"
#include "sdp_cli_info.h"
#include "sdp_tool_info.h"

static void caps_usage(FILE *out)
{
	fprintf(out,
		"Usage: softdpu caps [--json] [-d <dev>] [--run-dir <dir>] [--secret-file <file>]\n"
		"                    [--addr <host:port>] [--timeout-ms <ms>]\n"
		"\n"
		"Capabilities of the devices (Ethernet queue types, data paths, offloads, burst\n"
		"and packet sizes), of the GPUs, and the plugins of the running UROM service;\n"
		"--json: one JSON document (docs/schemas/caps.schema.json). -d keeps one device\n"
		"(ibdev name, interface name or PCI address). Exit status: 0 ok (a service\n"
		"that does not answer is reported, not a failure), 1 unknown device or failed\n"
		"query, 2 bad usage.\n");
}

static struct json_object *jget(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return o != NULL && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static void print_supported(struct json_object *q)
{
	struct json_object *types = jget(q, "types");
	int any = 0;

	for (size_t i = 0; types != NULL && i < json_object_array_length(types); i++) {
		struct json_object *t = json_object_array_get_idx(types, i);

		if (json_object_get_boolean(jget(t, "supported"))) {
			printf("%s%s/%s", any ? ", " : "", sdp_info_str(t, "type") ?: "?",
			       sdp_info_str(t, "data_path") ?: "?");
			any = 1;
		}
	}
	printf("%s", any ? "" : "none");
}

static void print_caps_text(struct json_object *doc)
{
	struct json_object *devs = jget(doc, "devices"), *gpus = jget(doc, "gpus");

	printf("devices:        %zu\n", json_object_array_length(devs));
	for (size_t i = 0; i < json_object_array_length(devs); i++) {
		struct json_object *d = json_object_array_get_idx(devs, i);
		struct json_object *c = jget(d, "caps"), *rxq = jget(c, "rxq"),
				   *txq = jget(c, "txq");

		printf("  %-16s %s (%s)", sdp_info_str(d, "name") ?: "?",
		       sdp_info_str(d, "pci_addr") ?: "?", sdp_info_str(d, "backend") ?: "?");
		if (!json_object_get_boolean(jget(c, "ethernet"))) {
			printf(": no Ethernet queues\n");
			continue;
		}
		printf("\n    rxq: ");
		print_supported(rxq);
		printf("; max burst %s, max packet %s\n",
		       json_object_get_string(jget(rxq, "max_burst_size")),
		       json_object_get_string(jget(rxq, "max_packet_size")));
		printf("    txq: ");
		print_supported(txq);
		printf("; max burst %s; checksum L3 %s, L4 %s; wait on time %s\n",
		       json_object_get_string(jget(txq, "max_burst_size")),
		       json_object_get_boolean(jget(txq, "l3_checksum_offload")) ? "yes" : "no",
		       json_object_get_boolean(jget(txq, "l4_checksum_offload")) ? "yes" : "no",
		       sdp_info_str(txq, "wait_on_time") ?: "not supported");
	}
	if (!json_object_get_boolean(jget(gpus, "present"))) {
		printf("GPUs:           none (%s)\n", sdp_info_str(gpus, "reason") ?: "?");
	} else {
		struct json_object *l = jget(gpus, "list");

		printf("GPUs:           %zu\n", json_object_array_length(l));
		for (size_t i = 0; i < json_object_array_length(l); i++) {
			struct json_object *g = json_object_array_get_idx(l, i);

			printf("  %s cc %s: GPUNetIO %s%s%s\n",
			       sdp_info_str(g, "pci_bus_id") ?: "?",
			       sdp_info_str(g, "compute_capability") ?: "?",
			       json_object_get_boolean(jget(g, "gpunetio_supported")) ?
				       "supported" :
				       "not supported",
			       json_object_get_boolean(jget(g, "gpunetio_supported")) ? "" : ": ",
			       json_object_get_boolean(jget(g, "gpunetio_supported")) ? "" :
			       sdp_info_str(g, "gpunetio_reason")		      ?:
											"?");
		}
	}
	sdp_cli_info_print_service(stdout, jget(doc, "service"));
}

int sdp_cli_caps(int argc, char **argv, FILE *json_out)
{
	struct sdp_cli_info_opts o;
	struct json_object *doc, *devs;
	const char *why;
	char err[512];
	int r, rc = SDP_CLI_EXIT_OK;

	r = sdp_cli_info_parse(argc, argv, 1, &o, caps_usage, &why);
	if (r > 0)
		return SDP_CLI_EXIT_OK;
	if (r < 0)
		return sdp_cli_info_fail(&o, json_out, "caps", why, SDP_CLI_EXIT_USAGE);

	devs = sdp_info_devices(o.dev, 1, err, sizeof(err));
	if (devs == NULL)
		return sdp_cli_info_fail(&o, json_out, "caps", err, SDP_CLI_EXIT_FAIL);
	doc = json_object_new_object();
	if (doc == NULL) {
		json_object_put(devs);
		return sdp_cli_info_fail(&o, json_out, "caps", "out of memory", SDP_CLI_EXIT_FAIL);
	}
	json_object_object_add(doc, "versions", sdp_info_versions());
	json_object_object_add(doc, "devices", devs);
	json_object_object_add(doc, "gpus", sdp_info_gpus());
	json_object_object_add(doc, "service", sdp_cli_service_info(&o));

	if (o.json) {
		if (sdp_info_print_json(json_out, doc) != 0)
			rc = SDP_CLI_EXIT_FAIL;
	} else {
		print_caps_text(doc);
		if (fflush(stdout) != 0)
			rc = SDP_CLI_EXIT_FAIL;
	}
	json_object_put(doc);
	return rc;
}
