/*
 * bench/urom_cmd: worker_graph loopback commands through a running softdpu-uromd and its worker,
 * as a DOCA application sees them (doca_urom service + worker contexts, the graph plugin's host
 * half, doca_pe_progress).
 *
 *   round trip: 1 command in flight, N iterations after a warm-up; median and mean in µs
 *   rate:       up to Q commands in flight (max_inflight_tasks = Q), M commands; commands/s
 *   rate, batched: the same, each window of commands submitted without
 *               DOCA_TASK_SUBMIT_FLAG_FLUSH and sent with one doca_ctx_flush_tasks() (one
 *               active message per window: docs/architecture.md, "UROM")
 *
 * The service is found as any host program finds it (SOFTDPU_UROM_SERVICE_ADDR, the secret
 * file ...); bench/urom_cmd.sh starts a private daemon and runs ucx_perftest next to it.
 * Polls the PE without sleeping while it measures (as ucx_perftest does).
 *
 *   urom_cmd [-n roundtrip_iters] [-w warmup] [-m rate_cmds] [-q inflight]
 *
 * Prints one "key=value" line per figure on stdout.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_error.h"
#include "doca_pe.h"
#include "doca_urom.h"
#include "urom_graph.h"

static long n_done;
static long n_err;
static uint64_t last_value;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void done_cb(doca_error_t result, union doca_data cookie, uint64_t data)
{
	if (result != DOCA_SUCCESS || data != cookie.u64)
		n_err++;
	last_value = data;
	n_done++;
}

/* Poll until n_done reaches want; gives up (with a message) after 10 s without it. */
static int poll_until(struct doca_pe *pe, long want)
{
	double deadline = 0;
	unsigned int spins = 0;

	while (n_done < want) {
		doca_pe_progress(pe);
		if ((++spins & 4095) == 0) {
			if (deadline == 0)
				deadline = now_us() + 10e6;
			else if (now_us() > deadline) {
				fprintf(stderr, "urom_cmd: no completion for 10 s\n");
				return -1;
			}
		}
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int wait_state(struct doca_pe *pe, struct doca_ctx *ctx, enum doca_ctx_states want)
{
	enum doca_ctx_states st;
	double deadline = now_us() + 10e6;

	while (now_us() < deadline) {
		if (doca_ctx_get_state(ctx, &st) != DOCA_SUCCESS)
			return -1;
		if (st == want)
			return 0;
		doca_pe_progress(pe);
	}
	return -1;
}

static int check(doca_error_t st, const char *what)
{
	if (st == DOCA_SUCCESS)
		return 0;
	fprintf(stderr, "urom_cmd: %s: %s\n", what, doca_error_get_name(st));
	return -1;
}

int main(int argc, char **argv)
{
	long iters = 20000, warmup = 2000, rate_cmds = 200000, i, submitted;
	uint32_t inflight = 128;
	const struct doca_urom_service_plugin_info *plugins;
	struct doca_urom_service *svc = NULL;
	struct doca_urom_worker *w = NULL;
	struct doca_devinfo **list = NULL;
	struct doca_dev *dev = NULL;
	struct doca_pe *pe = NULL;
	uint64_t graph_id = 0;
	size_t n_plugins = 0, k;
	uint32_t n_devs = 0;
	double *lat, t0, t1, sum = 0;
	doca_error_t st;
	int opt, rc = 1;

	while ((opt = getopt(argc, argv, "n:w:m:q:")) != -1) {
		switch (opt) {
		case 'n':
			iters = atol(optarg);
			break;
		case 'w':
			warmup = atol(optarg);
			break;
		case 'm':
			rate_cmds = atol(optarg);
			break;
		case 'q':
			inflight = (uint32_t)atol(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-n iters] [-w warmup] [-m rate_cmds] [-q inflight]\n",
				argv[0]);
			return 2;
		}
	}
	if (iters < 1 || warmup < 0 || rate_cmds < 1 || inflight < 1 ||
	    (inflight & (inflight - 1)) != 0) {
		fprintf(stderr, "urom_cmd: bad arguments (inflight must be a power of two)\n");
		return 2;
	}
	lat = calloc((size_t)iters, sizeof(*lat));
	if (lat == NULL)
		return 1;

	if (check(doca_pe_create(&pe), "doca_pe_create") ||
	    check(doca_urom_service_create(&svc), "doca_urom_service_create") ||
	    check(doca_pe_connect_ctx(pe, doca_urom_service_as_ctx(svc)), "connect service"))
		goto out;
	if (doca_devinfo_create_list(&list, &n_devs) == DOCA_SUCCESS) {
		if (n_devs > 0 && doca_dev_open(list[0], &dev) != DOCA_SUCCESS)
			dev = NULL;
		doca_devinfo_destroy_list(list);
		if (dev != NULL && check(doca_urom_service_set_dev(svc, dev), "set_dev"))
			goto out;
	}
	if (check(doca_urom_service_set_max_workers(svc, 1), "set_max_workers") ||
	    check(doca_ctx_start(doca_urom_service_as_ctx(svc)), "service start") ||
	    check(doca_urom_service_get_plugins_list(svc, &plugins, &n_plugins), "plugins list"))
		goto out;
	for (k = 0; k < n_plugins; k++)
		if (strcmp(plugins[k].plugin_name, "worker_graph") == 0) {
			graph_id = plugins[k].id;
			if (check(urom_graph_init(plugins[k].id, plugins[k].version),
				  "urom_graph_init"))
				goto out;
		}
	if (graph_id == 0) {
		fprintf(stderr, "urom_cmd: the service has no worker_graph plugin\n");
		goto out;
	}
	if (check(doca_urom_worker_create(&w), "worker create") ||
	    check(doca_urom_worker_set_service(w, svc), "set_service") ||
	    check(doca_pe_connect_ctx(pe, doca_urom_worker_as_ctx(w)), "connect worker") ||
	    check(doca_urom_worker_set_id(w, DOCA_UROM_WORKER_ID_ANY), "set_id") ||
	    check(doca_urom_worker_set_max_inflight_tasks(w, inflight), "set_max_inflight") ||
	    check(doca_urom_worker_set_plugins(w, graph_id), "set_plugins"))
		goto out;
	st = doca_ctx_start(doca_urom_worker_as_ctx(w));
	if (st != DOCA_ERROR_IN_PROGRESS && check(st, "worker start"))
		goto out;
	if (wait_state(pe, doca_urom_worker_as_ctx(w), DOCA_CTX_STATE_RUNNING) != 0) {
		fprintf(stderr, "urom_cmd: worker did not reach RUNNING\n");
		goto out;
	}

	/* Round trip, one in flight. */
	for (i = -warmup; i < iters; i++) {
		union doca_data cookie = {.u64 = (uint64_t)(i + warmup) * 2654435761u + 1};
		long want = n_done + 1;

		t0 = now_us();
		if (check(urom_graph_task_loopback(w, cookie, cookie.u64, done_cb), "loopback"))
			goto stop;
		if (poll_until(pe, want) != 0)
			goto stop;
		t1 = now_us();
		if (i >= 0)
			lat[i] = t1 - t0;
	}
	for (i = 0; i < iters; i++)
		sum += lat[i];
	qsort(lat, (size_t)iters, sizeof(*lat), cmp_double);
	printf("roundtrip_iters=%ld\n", iters);
	printf("roundtrip_min_us=%.3f\n", lat[0]);
	printf("roundtrip_p10_us=%.3f\n", lat[iters / 10]);
	printf("roundtrip_median_us=%.3f\n", lat[iters / 2]);
	printf("roundtrip_p90_us=%.3f\n", lat[iters - 1 - iters / 10]);
	printf("roundtrip_mean_us=%.3f\n", sum / (double)iters);

	/* Rate, up to `inflight` in flight: each submitted alone, then batched. */
	for (int batched = 0; batched <= 1; batched++) {
		uint32_t flags = batched ? DOCA_TASK_SUBMIT_FLAG_NONE : DOCA_TASK_SUBMIT_FLAG_FLUSH;

		n_done = 0;
		submitted = 0;
		t0 = now_us();
		while (n_done < rate_cmds) {
			long before = submitted;

			while (submitted < rate_cmds && submitted - n_done < (long)inflight) {
				union doca_data cookie = {.u64 = (uint64_t)submitted};

				st = urom_graph_task_loopback_ex(w, cookie, cookie.u64, done_cb,
								 flags);
				if (st == DOCA_ERROR_AGAIN)
					break;
				if (check(st, "loopback (rate)"))
					goto stop;
				submitted++;
			}
			if (batched && submitted != before)
				doca_ctx_flush_tasks(doca_urom_worker_as_ctx(w));
			if (poll_until(pe, n_done + 1) != 0)
				goto stop;
		}
		t1 = now_us();
		if (!batched) {
			printf("rate_inflight=%u\n", inflight);
			printf("rate_cmds=%ld\n", rate_cmds);
		}
		printf("%s=%.0f\n", batched ? "rate_batched_cps" : "rate_cps",
		       (double)rate_cmds / ((t1 - t0) / 1e6));
	}
	printf("errors=%ld\n", n_err);
	rc = n_err == 0 ? 0 : 1;
stop:
	doca_ctx_stop(doca_urom_worker_as_ctx(w));
	wait_state(pe, doca_urom_worker_as_ctx(w), DOCA_CTX_STATE_IDLE);
out:
	if (w != NULL)
		doca_urom_worker_destroy(w);
	if (svc != NULL) {
		doca_ctx_stop(doca_urom_service_as_ctx(svc));
		wait_state(pe, doca_urom_service_as_ctx(svc), DOCA_CTX_STATE_IDLE);
		doca_urom_service_destroy(svc);
	}
	if (pe != NULL)
		doca_pe_destroy(pe);
	if (dev != NULL)
		doca_dev_close(dev);
	free(lat);
	return rc;
}
