/*
 * doca_caps: a compatible subset of DOCA's capability tool, answered by softdpu.
 *
 *   doca_caps --version        softdpu's version, the DOCA API level, UCX, CUDA driver/runtime
 *   doca_caps --list-devs      every device doca_devinfo_create_list() finds
 *   doca_caps [-d DEV]         the Ethernet queue capabilities of every device (or of DEV)
 *   --json                     exactly one JSON document on stdout (docs/schemas/doca_caps.schema.json)
 *
 * Exit status: 0 ok, 1 a query failed or the device is unknown, 2 bad usage (docs/tools.md).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "sdp_tool_info.h"

#define EXIT_USAGE 2

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: doca_caps [--version | --list-devs | -d <dev>] [--json]\n"
		"\n"
		"softdpu's answer to DOCA's capability tool.\n"
		"  -v, --version        softdpu's version, the DOCA API level, UCX and CUDA versions\n"
		"  -l, --list-devs      the devices doca_devinfo_create_list() finds (name, PCI\n"
		"                       address, backend, interface, MAC, link)\n"
		"  -d, --dev <name|pci> only this device (ibdev name, interface name or PCI address)\n"
		"                       (default, without --version/--list-devs: the capabilities of\n"
		"                       every device)\n"
		"  -j, --json           one JSON document on stdout\n"
		"  -h, --help           this text\n"
		"Exit status: 0 ok, 1 failure (unknown device, failed query), 2 bad usage.\n");
}

static const char *jstr(struct json_object *o, const char *key)
{
	const char *s = sdp_info_str(o, key);

	return s != NULL ? s : "-";
}

static struct json_object *jget(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return o != NULL && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static void print_versions_text(struct json_object *v)
{
	char buf[512];

	printf("softdpu:          %s\n", jstr(v, "softdpu"));
	printf("DOCA API level:   %s (libdoca_common answers %s)\n", jstr(v, "doca_api"),
	       jstr(v, "doca_runtime"));
	printf("UCX:              %s\n", sdp_info_present_str(jget(v, "ucx"), buf, sizeof(buf)));
	printf("CUDA driver:      %s\n",
	       sdp_info_present_str(jget(v, "cuda_driver"), buf, sizeof(buf)));
	printf("CUDA runtime:     %s",
	       sdp_info_present_str(jget(v, "cuda_runtime"), buf, sizeof(buf)));
	if (sdp_info_str(jget(v, "cuda_runtime"), "library") != NULL)
		printf(" (%s)", sdp_info_str(jget(v, "cuda_runtime"), "library"));
	printf("\nCUDA toolkit:     %s\n",
	       sdp_info_present_str(jget(v, "cuda_toolkit"), buf, sizeof(buf)));
}

static void print_dev_line(struct json_object *d)
{
	struct json_object *mac = jget(d, "mac");

	printf("%-16s pci %-13s backend %-9s iface %-12s link %-4s mac %s", jstr(d, "name"),
	       jstr(d, "pci_addr"), jstr(d, "backend"), jstr(d, "iface"), jstr(d, "link"),
	       mac != NULL ? json_object_get_string(mac) : "-");
	if (mac == NULL)
		printf(" (%s)", jstr(d, "mac_reason"));
	printf("\n");
}

static void print_num(struct json_object *o, const char *key)
{
	struct json_object *v = jget(o, key);

	if (v != NULL)
		printf("%s", json_object_get_string(v));
	else
		printf("not supported");
}

static void print_types(struct json_object *q)
{
	struct json_object *types = jget(q, "types");
	int any = 0;

	for (size_t i = 0; types != NULL && i < json_object_array_length(types); i++) {
		struct json_object *t = json_object_array_get_idx(types, i);

		if (!json_object_get_boolean(jget(t, "supported")))
			continue;
		printf("%s%s/%s", any ? ", " : "", jstr(t, "type"), jstr(t, "data_path"));
		any = 1;
	}
	if (!any)
		printf("none");
}

static void print_caps_text(struct json_object *d)
{
	struct json_object *caps = jget(d, "caps"), *rxq = jget(caps, "rxq"),
			   *txq = jget(caps, "txq");

	print_dev_line(d);
	if (!json_object_get_boolean(jget(caps, "ethernet"))) {
		printf("  ethernet queues: not supported\n");
		return;
	}
	printf("  rxq types:      ");
	print_types(rxq);
	printf("\n  rxq max burst:  ");
	print_num(rxq, "max_burst_size");
	printf(", max packet ");
	print_num(rxq, "max_packet_size");
	printf("\n  txq types:      ");
	print_types(txq);
	printf("\n  txq max burst:  ");
	print_num(txq, "max_burst_size");
	printf("\n  checksum:       L3 %s, L4 %s (send)\n",
	       json_object_get_boolean(jget(txq, "l3_checksum_offload")) ? "yes" : "no",
	       json_object_get_boolean(jget(txq, "l4_checksum_offload")) ? "yes" : "no");
	printf("  wait on time:   %s\n",
	       jget(txq, "wait_on_time") != NULL ? jstr(txq, "wait_on_time") : "not supported");
}

static int fail_doc(int json, const char *msg, int status)
{
	fprintf(stderr, "doca_caps: %s\n", msg);
	if (json) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "tool", json_object_new_string("doca_caps"));
		json_object_object_add(o, "error", json_object_new_string(msg));
		json_object_object_add(o, "exit_status", json_object_new_int(status));
		sdp_info_print_json(stdout, o);
		json_object_put(o);
	}
	return status;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"version", no_argument, NULL, 'v'},   {"list-devs", no_argument, NULL, 'l'},
		{"dev", required_argument, NULL, 'd'}, {"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},      {NULL, 0, NULL, 0},
	};
	int version = 0, list = 0, json = 0, opt, rc = EXIT_SUCCESS;
	struct json_object *doc, *devs = NULL, *vers = NULL;
	const char *select = NULL;
	char err[512];

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "-j") == 0)
			json = 1;
	opterr = 1;
	while ((opt = getopt_long(argc, argv, "vld:jh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'v':
			version = 1;
			break;
		case 'l':
			list = 1;
			break;
		case 'd':
			select = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			usage(stdout);
			return EXIT_SUCCESS;
		default:
			return fail_doc(json, "bad usage (doca_caps --help lists the options)",
					EXIT_USAGE);
		}
	}
	if (optind < argc) {
		snprintf(err, sizeof(err), "unexpected argument '%s'", argv[optind]);
		return fail_doc(json, err, EXIT_USAGE);
	}
	if (version && (list || select != NULL))
		return fail_doc(json, "--version takes no other option but --json", EXIT_USAGE);

	doc = json_object_new_object();
	if (doc == NULL)
		return fail_doc(json, "out of memory", EXIT_FAILURE);
	json_object_object_add(doc, "tool", json_object_new_string("doca_caps"));
	if (version || !list) {
		vers = sdp_info_versions();
		json_object_object_add(doc, "versions", vers);
	}
	if (!version) {
		devs = sdp_info_devices(select, !list, err, sizeof(err));
		if (devs == NULL) {
			json_object_put(doc);
			return fail_doc(json, err, EXIT_FAILURE);
		}
		json_object_object_add(doc, "devices", devs);
	}

	if (json) {
		if (sdp_info_print_json(stdout, doc) != 0)
			rc = EXIT_FAILURE;
	} else {
		if (vers != NULL)
			print_versions_text(vers);
		if (devs != NULL && vers != NULL)
			printf("devices:          %zu\n", json_object_array_length(devs));
		for (size_t i = 0; devs != NULL && i < json_object_array_length(devs); i++) {
			if (list)
				print_dev_line(json_object_array_get_idx(devs, i));
			else
				print_caps_text(json_object_array_get_idx(devs, i));
		}
		if (fflush(stdout) != 0)
			rc = EXIT_FAILURE;
	}
	json_object_put(doc);
	return rc;
}
