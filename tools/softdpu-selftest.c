/*
 * softdpu-selftest: what this softdpu is and what it sees. Prints softdpu's version, the DOCA
 * API level of the headers it was built with, the runtime version of libdoca_common and every
 * device doca_devinfo_create_list() finds; --json prints the same facts as one JSON object,
 * --vars lists every softdpu configuration variable with its help.
 *
 * Exit status: 0 when the library answered every question, 1 when a query failed (the library
 * logged why), 2 on bad usage.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdp_build_config.h"
#if SDP_HAVE_JSONC
#include <json-c/json.h>
#endif

#include "doca_dev.h"
#include "doca_error.h"
#include "doca_version.h"
#include "softdpu/gpunetio.h"
#include "softdpu/version.h"
#include "sdp_config.h"

struct selftest_dev {
	char ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	char iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	const char *func_type;
};

static void usage(FILE *stream, const char *prog)
{
	fprintf(stream,
		"Usage: %s [--json | --vars | --help]\n"
		"\n"
		"Print softdpu's version, the DOCA API level, the library's runtime version and the\n"
		"devices doca_devinfo_create_list() finds (ibdev name, interface, PCI address).\n"
		"\n"
		"  -j, --json   the same facts as one JSON object on stdout\n"
		"  -V, --vars   list every softdpu configuration variable with its default, current\n"
		"               value and help\n"
		"  -h, --help   this text\n",
		prog);
}

static const char *func_type_name(enum doca_pci_func_type type)
{
	switch (type) {
	case DOCA_PCI_FUNC_TYPE_PF:
		return "PF";
	case DOCA_PCI_FUNC_TYPE_VF:
		return "VF";
	case DOCA_PCI_FUNC_TYPE_SF:
		return "SF";
	}
	return "unknown";
}

/* Read one devinfo's facts; every failure is reported with the device's index. */
static doca_error_t read_devinfo(const struct doca_devinfo *info, uint32_t idx,
				 struct selftest_dev *out)
{
	enum doca_pci_func_type type;
	doca_error_t ret;

	ret = doca_devinfo_get_ibdev_name(info, out->ibdev, sizeof(out->ibdev));
	if (ret != DOCA_SUCCESS) {
		fprintf(stderr, "device %u: doca_devinfo_get_ibdev_name: %s\n", idx,
			doca_error_get_descr(ret));
		return ret;
	}
	ret = doca_devinfo_get_iface_name(info, out->iface, sizeof(out->iface));
	if (ret != DOCA_SUCCESS) {
		fprintf(stderr, "device %u (%s): doca_devinfo_get_iface_name: %s\n", idx,
			out->ibdev, doca_error_get_descr(ret));
		return ret;
	}
	ret = doca_devinfo_get_pci_addr_str(info, out->pci);
	if (ret != DOCA_SUCCESS) {
		fprintf(stderr, "device %u (%s): doca_devinfo_get_pci_addr_str: %s\n", idx,
			out->ibdev, doca_error_get_descr(ret));
		return ret;
	}
	ret = doca_devinfo_get_pci_func_type(info, &type);
	if (ret != DOCA_SUCCESS) {
		fprintf(stderr, "device %u (%s): doca_devinfo_get_pci_func_type: %s\n", idx,
			out->ibdev, doca_error_get_descr(ret));
		return ret;
	}
	out->func_type = func_type_name(type);
	return DOCA_SUCCESS;
}

#if !SDP_HAVE_JSONC
/* gpu_only builds may lack json-c: the JSON is written by hand there. */
/* A JSON string literal: quotes, backslashes and control characters escaped. */
static void json_str(FILE *f, const char *s)
{
	const unsigned char *p;

	fputc('"', f);
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}
#endif

/* GPUs GPUNetIO could use (libdoca_gpunetio's capability query; CUDA is loaded at run time). */
static struct sdp_gpu_cap g_gpus[16];
static int g_ngpus;
static const char *g_gpu_error;

static void query_gpus(void)
{
	const char *reason = NULL;
	int n = 0;

	if (sdp_gpu_cap_count(&n, &reason) != DOCA_SUCCESS) {
		g_gpu_error = reason != NULL ? reason : "CUDA is not available";
		return;
	}
	for (int i = 0; i < n && g_ngpus < (int)(sizeof(g_gpus) / sizeof(g_gpus[0])); i++)
		if (sdp_gpu_cap_query(i, &g_gpus[g_ngpus]) == DOCA_SUCCESS)
			g_ngpus++;
}

static void print_gpus_text(void)
{
	if (g_gpu_error != NULL) {
		printf("gpus:                 none (%s)\n", g_gpu_error);
		return;
	}
	printf("gpus:                 %d\n", g_ngpus);
	for (int i = 0; i < g_ngpus; i++)
		printf("  %-13s %-28s cc %d.%d%s  GPUNetIO: %s%s%s\n", g_gpus[i].bus_id,
		       g_gpus[i].name[0] ? g_gpus[i].name : "-", g_gpus[i].cc_major,
		       g_gpus[i].cc_minor, g_gpus[i].cc_overridden ? " (overridden)" : "",
		       g_gpus[i].supported ? "supported" : "not supported",
		       g_gpus[i].supported ? "" : ": ", g_gpus[i].reason);
}

#if !SDP_HAVE_JSONC
static void print_gpus_json(void)
{
	if (g_gpu_error != NULL) {
		printf(",\n  \"gpus_error\": ");
		json_str(stdout, g_gpu_error);
	}
	printf(",\n  \"gpus\": [");
	for (int i = 0; i < g_ngpus; i++) {
		printf("%s\n    {\"pci_addr\": ", i == 0 ? "" : ",");
		json_str(stdout, g_gpus[i].bus_id);
		printf(", \"name\": ");
		json_str(stdout, g_gpus[i].name);
		printf(", \"cc\": \"%d.%d\", \"cc_overridden\": %s, \"supported\": %s, \"reason\": ",
		       g_gpus[i].cc_major, g_gpus[i].cc_minor,
		       g_gpus[i].cc_overridden ? "true" : "false",
		       g_gpus[i].supported ? "true" : "false");
		json_str(stdout, g_gpus[i].reason);
		printf("}");
	}
	printf("%s]", g_ngpus != 0 ? "\n  " : "");
}
#endif

static void print_text(const struct selftest_dev *devs, uint32_t ndevs, const char *dev_error)
{
	uint32_t i;

	printf("softdpu version:      %s\n", sdp_version());
	printf("DOCA API level:       %s (headers)\n", doca_version());
	printf("library runtime:      %s (libdoca_common)\n", doca_version_runtime());
	print_gpus_text();
	if (dev_error != NULL) {
		printf("devices:              error: %s\n", dev_error);
		return;
	}
	printf("devices:              %u\n", ndevs);
	for (i = 0; i < ndevs; i++)
		printf("  %-16s iface %-12s pci %-13s %s\n", devs[i].ibdev,
		       devs[i].iface[0] != '\0' ? devs[i].iface : "-", devs[i].pci,
		       devs[i].func_type);
}

#if SDP_HAVE_JSONC
static void jadd(struct json_object *o, const char *key, struct json_object *v, int *failed)
{
	if (v == NULL || json_object_object_add(o, key, v) != 0) {
		json_object_put(v);
		*failed = 1;
	}
}

static void jappend(struct json_object *arr, struct json_object *v, int *failed)
{
	if (arr == NULL || v == NULL || json_object_array_add(arr, v) != 0) {
		json_object_put(v);
		*failed = 1;
	}
}

/* One JSON document on stdout (json-c, pretty-printed); 0, or -1 when out of memory. */
static int print_json(const struct selftest_dev *devs, uint32_t ndevs, const char *dev_error)
{
	struct json_object *root = json_object_new_object(), *gpus, *list;
	int failed = root == NULL;

	if (root == NULL)
		return -1;
	jadd(root, "softdpu_version", json_object_new_string(sdp_version()), &failed);
	jadd(root, "doca_api_level", json_object_new_string(doca_version()), &failed);
	jadd(root, "runtime_version", json_object_new_string(doca_version_runtime()), &failed);
	if (g_gpu_error != NULL)
		jadd(root, "gpus_error", json_object_new_string(g_gpu_error), &failed);
	gpus = json_object_new_array();
	for (int i = 0; gpus != NULL && i < g_ngpus; i++) {
		struct json_object *g = json_object_new_object();
		char cc[32];

		snprintf(cc, sizeof(cc), "%d.%d", g_gpus[i].cc_major, g_gpus[i].cc_minor);
		if (g != NULL) {
			jadd(g, "pci_addr", json_object_new_string(g_gpus[i].bus_id), &failed);
			jadd(g, "name", json_object_new_string(g_gpus[i].name), &failed);
			jadd(g, "cc", json_object_new_string(cc), &failed);
			jadd(g, "cc_overridden", json_object_new_boolean(g_gpus[i].cc_overridden),
			     &failed);
			jadd(g, "supported", json_object_new_boolean(g_gpus[i].supported), &failed);
			jadd(g, "reason", json_object_new_string(g_gpus[i].reason), &failed);
		}
		jappend(gpus, g, &failed);
	}
	jadd(root, "gpus", gpus, &failed);
	if (dev_error != NULL)
		jadd(root, "devices_error", json_object_new_string(dev_error), &failed);
	list = json_object_new_array();
	for (uint32_t i = 0; list != NULL && i < ndevs; i++) {
		struct json_object *d = json_object_new_object();

		if (d != NULL) {
			jadd(d, "ibdev_name", json_object_new_string(devs[i].ibdev), &failed);
			jadd(d, "iface_name", json_object_new_string(devs[i].iface), &failed);
			jadd(d, "pci_addr", json_object_new_string(devs[i].pci), &failed);
			jadd(d, "pci_func_type", json_object_new_string(devs[i].func_type),
			     &failed);
		}
		jappend(list, d, &failed);
	}
	jadd(root, "devices", list, &failed);
	if (!failed)
		printf("%s\n", json_object_to_json_string_ext(
				       root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
						     JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	return failed ? -1 : 0;
}

/* --json given with a bad command line: one document naming the error. */
static void print_json_usage_error(const char *error)
{
	struct json_object *root = json_object_new_object();

	if (root == NULL || json_object_object_add(root, "error", json_object_new_string(error)))
		return;
	printf("%s\n", json_object_to_json_string_ext(
			       root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
}
#else
static int print_json(const struct selftest_dev *devs, uint32_t ndevs, const char *dev_error)
{
	uint32_t i;

	printf("{\n  \"softdpu_version\": ");
	json_str(stdout, sdp_version());
	printf(",\n  \"doca_api_level\": ");
	json_str(stdout, doca_version());
	printf(",\n  \"runtime_version\": ");
	json_str(stdout, doca_version_runtime());
	print_gpus_json();
	if (dev_error != NULL) {
		printf(",\n  \"devices_error\": ");
		json_str(stdout, dev_error);
	}
	printf(",\n  \"devices\": [");
	for (i = 0; i < ndevs; i++) {
		printf("%s\n    {\"ibdev_name\": ", i == 0 ? "" : ",");
		json_str(stdout, devs[i].ibdev);
		printf(", \"iface_name\": ");
		json_str(stdout, devs[i].iface);
		printf(", \"pci_addr\": ");
		json_str(stdout, devs[i].pci);
		printf(", \"pci_func_type\": ");
		json_str(stdout, devs[i].func_type);
		printf("}");
	}
	printf("%s]\n}\n", ndevs != 0 ? "\n  " : "");
	return 0;
}

static void print_json_usage_error(const char *error)
{
	printf("{\"error\": ");
	json_str(stdout, error);
	printf("}\n");
}
#endif

/* 1 when argv holds -j or --json (to answer a bad command line in JSON too). */
static int wants_json(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "-j") == 0 || strcmp(argv[i], "--json") == 0)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"vars", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct doca_devinfo **list = NULL;
	struct selftest_dev *devs = NULL;
	const char *dev_error = NULL;
	uint32_t ndevs = 0, i;
	int json = 0, vars = 0, opt;
	char why[512];
	doca_error_t ret;

	while ((opt = getopt_long(argc, argv, "jVh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = 1;
			break;
		case 'V':
			vars = 1;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			if (wants_json(argc, argv))
				print_json_usage_error("bad usage: unknown option (see --help)");
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
		if (json) {
			snprintf(why, sizeof(why), "bad usage: unexpected argument '%s'",
				 argv[optind]);
			print_json_usage_error(why);
		}
		usage(stderr, argv[0]);
		return 2;
	}
	if (json && vars) {
		fprintf(stderr, "%s: --json and --vars cannot be combined\n", argv[0]);
		print_json_usage_error("bad usage: --json and --vars cannot be combined");
		return 2;
	}

	/*
	 * No log backend is created: the library's warnings and errors (a bad variable, a device
	 * that failed to load) reach stderr through its fallback, at the level DOCA_LOG_LEVEL sets,
	 * and never mix into the facts on stdout.
	 */

	if (vars) {
		sdp_config_print(stdout);
		return fflush(stdout) == 0 ? 0 : 1;
	}

	ret = doca_devinfo_create_list(&list, &ndevs);
	if (ret != DOCA_SUCCESS) {
		snprintf(why, sizeof(why), "doca_devinfo_create_list failed: %s (%s)",
			 doca_error_get_name(ret), doca_error_get_descr(ret));
		dev_error = why;
		ndevs = 0;
		list = NULL;
	} else if (ndevs != 0) {
		devs = calloc(ndevs, sizeof(*devs));
		if (devs == NULL) {
			dev_error = "out of memory";
			ret = DOCA_ERROR_NO_MEMORY;
		}
		for (i = 0; devs != NULL && i < ndevs; i++) {
			ret = read_devinfo(list[i], i, &devs[i]);
			if (ret != DOCA_SUCCESS) {
				snprintf(why, sizeof(why), "device %u: %s (%s)", i,
					 doca_error_get_name(ret), doca_error_get_descr(ret));
				dev_error = why;
				break;
			}
		}
		if (dev_error != NULL)
			ndevs = 0;
	}

	query_gpus();
	if (json) {
		if (print_json(devs, ndevs, dev_error) != 0) {
			fprintf(stderr, "%s: out of memory writing the JSON document\n", argv[0]);
			free(devs);
			if (list != NULL)
				doca_devinfo_destroy_list(list);
			return 1;
		}
	} else
		print_text(devs, ndevs, dev_error);

	free(devs);
	if (list != NULL)
		doca_devinfo_destroy_list(list);
	if (fflush(stdout) != 0)
		return 1;
	return dev_error == NULL ? 0 : 1;
}
