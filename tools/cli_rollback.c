/*
 * softdpu rollback gpunetio: one full configure -> persistent kernel -> rollback -> re-verify
 * cycle on a device, each step reported (text on stdout, or one JSON object with --json).
 *
 *   configure   the device (a gen device the tool declares, rate 20000 frames/s, or --dev) and
 *               its parent Ethernet queue: a CPU data path receive queue, started first, so it
 *               is the device's default queue and keeps the port open throughout
 *   baseline    the parent's receive rate before anything GPU is attached
 *   attach      the GPU part: doca_gpu, device memory registered with an mmap, a CYCLIC receive
 *               queue on the GPU data path, stop flag, statistics, stream (skipped with the
 *               reason without a GPU or without CUDA in the build)
 *   kernel      the persistent receive kernel, running --hold-ms
 *   stop-flag .. destroy-gpu   the rollback helper's steps (include/softdpu/gpunetio_rollback.h)
 *   reverify    the parent's rate again (retried once; a second miss reports the residual gap)
 *
 * The parent queue stays up through the rollback and is torn down by the tool afterwards.
 * Exit status: 0 every step done or skipped, 1 a step failed (the kernel still running past the
 * deadline, a teardown step, the re-verify), 2 bad usage. docs/gpunetio.md ("Rollback").
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "doca_dev.h"
#include "doca_eth_rxq.h"
#include "doca_gpunetio.h"
#include "sdp_build_config.h"
#include "sdp_cli.h"
#include "softdpu/gpunetio.h"
#include "softdpu/gpunetio_rollback.h"

#include "cli_gpunetio.h"

#define RATE_PPS 20000u

struct rb_opts {
	const char *dev;
	uint32_t deadline_ms, window_ms, hold_ms;
	double tolerance;
	int break_parent, json;
};

struct parent {
	struct cg_rxq q;
	uint32_t window_ms;
	int break_after_baseline; /* --break-parent */
	int measured;		  /* the baseline was measured */
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: softdpu rollback gpunetio [options]\n"
		"  --dev <name>          the device (default: a gen device the tool declares,\n"
		"                        %u frames/s)\n"
		"  --deadline-ms <n>     the declared drain deadline of the kernel (default 5000)\n"
		"  --tolerance <f>       re-verify passes at rate >= baseline * (1 - f) (default 0.2)\n"
		"  --window-ms <n>       each rate measurement's window (default 500)\n"
		"  --hold-ms <n>         how long the persistent kernel runs (default 200)\n"
		"  --break-parent        test aid: the parent queue stops re-posting its receive\n"
		"                        tasks after the baseline, so the re-verify must fail\n"
		"  --json                one JSON object on stdout\n"
		"  --help\n"
		"Exit status: 0 every step done or skipped, 1 a step failed, 2 bad usage.\n",
		RATE_PPS);
}

/* The re-verify callback: drain what waited (50 ms), then count a window. */
static doca_error_t measure(void *user, double *rate)
{
	struct parent *p = user;
	uint64_t n0;
	double t0, t1;

	if (p->break_after_baseline && p->measured)
		p->q.no_repost = 1;
	cg_rxq_progress(&p->q, 0.05, 0);
	n0 = p->q.received;
	t0 = cg_now_s();
	cg_rxq_progress(&p->q, p->window_ms / 1e3, 0);
	t1 = cg_now_s();
	p->measured = 1;
	if (p->q.errors != 0)
		return p->q.last_error;
	*rate = (double)(p->q.received - n0) / (t1 - t0);
	return DOCA_SUCCESS;
}

struct step_out {
	struct json_object *steps;
	int json;
};

static void step(struct step_out *o, const char *name, const char *state, doca_error_t res,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void step(struct step_out *o, const char *name, const char *state, doca_error_t res,
		 const char *fmt, ...)
{
	char what[320] = "";
	struct json_object *s = json_object_new_object();
	va_list ap;

	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(what, sizeof(what), fmt, ap);
		va_end(ap);
	}
	json_object_object_add(s, "name", json_object_new_string(name));
	json_object_object_add(s, "state", json_object_new_string(state));
	json_object_object_add(s, "result", json_object_new_string(doca_error_get_name(res)));
	if (what[0] != '\0')
		json_object_object_add(s, "what", json_object_new_string(what));
	json_object_array_add(o->steps, s);
	if (!o->json)
		printf("%-14s %-8s %s%s%s\n", name, state,
		       res != DOCA_SUCCESS ? doca_error_get_name(res) : "",
		       res != DOCA_SUCCESS && what[0] ? ": " : "", what);
	fflush(stdout);
}

static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *v)
{
	char *end;
	unsigned long x = strtoul(s, &end, 10);

	if (*s == '\0' || *end != '\0' || x < lo || x > hi)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

int sdp_cli_rollback(int argc, char **argv, FILE *json_out)
{
	static const struct option opts[] = {{"dev", required_argument, NULL, 'd'},
					     {"deadline-ms", required_argument, NULL, 'D'},
					     {"tolerance", required_argument, NULL, 't'},
					     {"window-ms", required_argument, NULL, 'w'},
					     {"hold-ms", required_argument, NULL, 'H'},
					     {"break-parent", no_argument, NULL, 'B'},
					     {"json", no_argument, NULL, 'j'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct rb_opts o = {
		.deadline_ms = 5000, .window_ms = 500, .hold_ms = 200, .tolerance = 0.2};
	struct step_out so = {0};
	struct parent p = {0};
	struct sdp_gpu_rollback *rb = NULL;
	struct sdp_gpu_rollback_report rep = {0};
	struct cg_gpu_rx g = {0};
	struct doca_dev *dev = NULL;
	struct json_object *doc;
	const char *devname, *layer = "program";
	char gpu_why[160] = "", bus[32] = "", why[256] = "";
	double base = -1;
	doca_error_t s, final = DOCA_SUCCESS;
	int gpu_ok, c, attached = 0;
	char *end;

	if (argc < 2 || strcmp(argv[1], "gpunetio") != 0) {
		if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
			usage(stdout);
			return SDP_CLI_EXIT_OK;
		}
		fprintf(stderr, "softdpu: rollback needs gpunetio\n");
		usage(stderr);
		return SDP_CLI_EXIT_USAGE;
	}
	argc--;
	argv++;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o.dev = optarg;
			break;
		case 'D':
			if (parse_u32(optarg, 1, 3600000, &o.deadline_ms) != 0) {
				fprintf(stderr, "softdpu: --deadline-ms: 1 to 3600000\n");
				return SDP_CLI_EXIT_USAGE;
			}
			break;
		case 'w':
			if (parse_u32(optarg, 10, 60000, &o.window_ms) != 0) {
				fprintf(stderr, "softdpu: --window-ms: 10 to 60000\n");
				return SDP_CLI_EXIT_USAGE;
			}
			break;
		case 'H':
			if (parse_u32(optarg, 0, 600000, &o.hold_ms) != 0) {
				fprintf(stderr, "softdpu: --hold-ms: 0 to 600000\n");
				return SDP_CLI_EXIT_USAGE;
			}
			break;
		case 't':
			o.tolerance = strtod(optarg, &end);
			if (*end != '\0' || !(o.tolerance >= 0 && o.tolerance < 1)) {
				fprintf(stderr, "softdpu: --tolerance: a fraction in [0, 1)\n");
				return SDP_CLI_EXIT_USAGE;
			}
			break;
		case 'B':
			o.break_parent = 1;
			break;
		case 'j':
			o.json = 1;
			break;
		case 'h':
			usage(stdout);
			return SDP_CLI_EXIT_OK;
		default:
			usage(stderr);
			return SDP_CLI_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "softdpu: rollback gpunetio: unexpected argument %s\n",
			argv[optind]);
		return SDP_CLI_EXIT_USAGE;
	}
	so.steps = json_object_new_array();
	so.json = o.json;
	cg_declare_devices(1000, RATE_PPS);
	devname = o.dev != NULL ? o.dev : cg_dev_name("rate");
	gpu_ok = cg_gpu_available(gpu_why, sizeof(gpu_why));
	if (gpu_ok && cg_gpu_select(0, bus, sizeof(bus)) != DOCA_SUCCESS) {
		gpu_ok = 0;
		snprintf(gpu_why, sizeof(gpu_why), "cannot select CUDA device 0: %s", bus);
	}

	/* configure: the device and its parent queue */
	s = cg_open(devname, &dev);
	if (s == DOCA_SUCCESS)
		s = doca_eth_rxq_cap_is_type_supported(doca_dev_as_devinfo(dev),
						       DOCA_ETH_RXQ_TYPE_REGULAR,
						       DOCA_ETH_RXQ_DATA_PATH_TYPE_CPU);
	if (s == DOCA_SUCCESS)
		s = cg_rxq_start(dev, 0, 0, 64, 1, &p.q);
	p.window_ms = o.window_ms;
	p.break_after_baseline = o.break_parent;
	step(&so, "configure", s == DOCA_SUCCESS ? "done" : "failed", s,
	     "device %s, parent: CPU receive queue (REGULAR, 64 tasks)", devname);
	if (s != DOCA_SUCCESS) {
		final = s;
		layer = "device";
		goto out;
	}
	/* baseline: before anything GPU is attached */
	s = measure(&p, &base);
	step(&so, "baseline", s == DOCA_SUCCESS ? "done" : "failed", s,
	     "parent receives %.0f pps (window %u ms)", base, o.window_ms);
	if (s != DOCA_SUCCESS) {
		final = s;
		layer = "queue";
		goto out;
	}

	/* attach the GPU part (its pieces recorded in its rollback plan) and run the kernel */
	if (!gpu_ok) {
		step(&so, "attach", "skipped", DOCA_SUCCESS, "%s", gpu_why);
		step(&so, "kernel", "skipped", DOCA_SUCCESS, "%s", gpu_why);
		s = sdp_gpu_rollback_create(NULL, &rb);
	} else {
		s = cg_gpu_rx_attach(bus, dev, 256, &g, &layer, why, sizeof(why));
		rb = g.rb; /* the plan attach built; cg_gpu_rx_launch adds the kernel to it */
		attached = rb != NULL;
		step(&so, "attach", s == DOCA_SUCCESS ? "done" : "failed", s,
		     "GPU %s: CYCLIC receive queue on the GPU data path, 256 slots%s%s", bus,
		     why[0] ? "; " : "", why);
		if (s == DOCA_SUCCESS) {
			s = cg_gpu_rx_launch(&g, o.deadline_ms, why, sizeof(why));
			if (s == DOCA_SUCCESS) {
				/* the parent keeps receiving while the kernel runs */
				cg_rxq_progress(&p.q, o.hold_ms / 1e3, 0);
				if (g.st_cpu->error != 0) {
					s = (doca_error_t)g.st_cpu->error;
					snprintf(why, sizeof(why), "a receive call failed");
				}
			}
			step(&so, "kernel", s == DOCA_SUCCESS ? "done" : "failed", s,
			     "persistent kernel ran %u ms, %llu receive calls%s%s", o.hold_ms,
			     (unsigned long long)g.st_cpu->calls, why[0] ? "; " : "", why);
			if (s != DOCA_SUCCESS)
				layer = "driver";
		} else {
			step(&so, "kernel", "skipped", DOCA_SUCCESS,
			     "the GPU part is not attached");
		}
		if (s != DOCA_SUCCESS)
			final = s;
		s = DOCA_SUCCESS;
	}
	if (rb == NULL) /* no GPU part at all: the plan only re-verifies */
		s = sdp_gpu_rollback_create(NULL, &rb);
	if (s == DOCA_SUCCESS && rb != NULL)
		s = sdp_gpu_rollback_set_reverify(rb, measure, &p, o.tolerance);
	if (s == DOCA_SUCCESS && rb != NULL)
		s = sdp_gpu_rollback_set_baseline(rb, base);
	if (s != DOCA_SUCCESS && final == DOCA_SUCCESS)
		final = s;

	/* the rollback */
	if (rb != NULL) {
		s = sdp_gpu_rollback_run(rb, &rep);
		for (int k = 0; k < SDP_GPU_ROLLBACK_NB_STEPS; k++) {
			enum sdp_gpu_rollback_step st = (enum sdp_gpu_rollback_step)k;
			char w[200] = "";

			if (st == SDP_GPU_ROLLBACK_DRAIN)
				snprintf(w, sizeof(w), "deadline %u ms, %.1f ms%s", o.deadline_ms,
					 rep.drain_ms,
					 rep.kernel_running ?
						 ": kernel still running, nothing torn "
						 "down (fail closed)" :
						 "");
			else if (st == SDP_GPU_ROLLBACK_STOP_CONTEXTS)
				snprintf(w, sizeof(w), "%u queue(s)", rep.contexts);
			else if (st == SDP_GPU_ROLLBACK_UNREGISTER)
				snprintf(w, sizeof(w), "%u registration(s)", rep.registrations);
			else if (st == SDP_GPU_ROLLBACK_FREE_MEMORY)
				snprintf(w, sizeof(w), "%u allocation(s)", rep.gpu_mem);
			else if (st == SDP_GPU_ROLLBACK_REVERIFY && rep.reverify_attempts > 1)
				snprintf(
					w, sizeof(w),
					"baseline %.0f pps, after %.0f then %.0f pps (retried once), "
					"tolerance %.0f %%: residual gap %.1f %%%s",
					rep.baseline_pps, rep.reverify_pps[0], rep.reverify_pps[1],
					rep.tolerance * 100, rep.residual_gap * 100,
					rep.state[k] == SDP_GPU_ROLLBACK_FAILED ?
						", not retried again" :
						"");
			else if (st == SDP_GPU_ROLLBACK_REVERIFY)
				snprintf(w, sizeof(w),
					 "baseline %.0f pps, after %.0f pps, tolerance %.0f %%",
					 rep.baseline_pps, rep.reverify_pps[0],
					 rep.tolerance * 100);
			if ((st <= SDP_GPU_ROLLBACK_DESTROY_GPU) && !attached)
				snprintf(w, sizeof(w), "%s", gpu_why);
			step(&so, sdp_gpu_rollback_step_name(st),
			     sdp_gpu_rollback_state_name(rep.state[k]), rep.result[k], "%s", w);
		}
		if (s != DOCA_SUCCESS && final == DOCA_SUCCESS) {
			final = s;
			layer = rep.failed_step == SDP_GPU_ROLLBACK_REVERIFY ? "queue" :
				rep.failed_step == SDP_GPU_ROLLBACK_DRAIN    ? "gpu" :
									       "program";
		}
	}
out:
	doc = json_object_new_object();
	json_object_object_add(doc, "action", json_object_new_string("rollback"));
	json_object_object_add(doc, "library", json_object_new_string("gpunetio"));
	json_object_object_add(doc, "ok", json_object_new_boolean(final == DOCA_SUCCESS));
	json_object_object_add(doc, "device", json_object_new_string(devname));
	json_object_object_add(doc, "data_path",
			       json_object_new_string(attached ? "gpu" : "cpu-stand-in"));
	if (!gpu_ok)
		json_object_object_add(doc, "gpu_skip_reason", json_object_new_string(gpu_why));
	json_object_object_add(doc, "deadline_ms", json_object_new_int64(o.deadline_ms));
	json_object_object_add(doc, "tolerance", json_object_new_double(o.tolerance));
	if (rb != NULL) {
		struct json_object *rv = json_object_new_array();

		json_object_object_add(doc, "baseline_pps",
				       json_object_new_double(rep.baseline_pps));
		for (int k = 0; k < rep.reverify_attempts; k++)
			json_object_array_add(rv, json_object_new_double(rep.reverify_pps[k]));
		json_object_object_add(doc, "reverify_pps", rv);
		json_object_object_add(doc, "residual_gap",
				       json_object_new_double(rep.residual_gap));
		json_object_object_add(doc, "kernel_running",
				       json_object_new_boolean(rep.kernel_running));
		json_object_object_add(doc, "drain_ms", json_object_new_double(rep.drain_ms));
	}
	json_object_object_add(doc, "steps", so.steps);
	if (final != DOCA_SUCCESS) {
		json_object_object_add(doc, "error",
				       json_object_new_string(doca_error_get_name(final)));
		json_object_object_add(doc, "layer", json_object_new_string(layer));
	}
	if (o.json) {
		fprintf(json_out, "%s\n",
			json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN));
		fflush(json_out);
	} else {
		printf("rollback gpunetio (%s): %s%s%s\n", attached ? "GPU" : "CPU stand-in",
		       final == DOCA_SUCCESS ? "ok" : "FAILED: ",
		       final == DOCA_SUCCESS ? "" : doca_error_get_name(final),
		       final == DOCA_SUCCESS ? "" : "");
	}
	json_object_put(doc);
	/* a kernel still running: leave the GPU part as the plan left it (fail closed) */
	if (rb != NULL && !(attached && rep.kernel_running)) {
		sdp_gpu_rollback_destroy(rb);
		cg_stream_destroy(g.stream);
	}
	cg_rxq_stop(&p.q);
	if (dev != NULL)
		doca_dev_close(dev);
	return final == DOCA_SUCCESS ? SDP_CLI_EXIT_OK : SDP_CLI_EXIT_FAIL;
}
