/*
 * bench/urom_rma: worker-executed puts and gets into host memory, as a DOCA program sets them
 * up: a service and worker context (plugin worker_rmabench, bench/urom_rma/), a host buffer
 * exported with softdpu's one-call extension (sdp_urom_domain_export_buffer) into a domain of
 * one member, and one command per size that makes the worker run the whole measurement: N
 * transfers of that size between its own buffer and the host buffer, W in flight, then a flush.
 * The time is taken inside the worker (first issue to flush completion), so it is the
 * worker's RMA bandwidth, not the command's round trip.
 *
 *   urom_rma [-s min_size] [-S max_size] [-b bytes_per_size] [-w window]
 *
 * Every PUT's bytes are checked in the host buffer afterwards; every GET's bytes are checked by
 * the worker (the host wrote the pattern first). Prints one line per size and operation:
 *   put size=<bytes> iters=<n> MiBps=<MiB/s, as ucx_perftest's "MB/s"> us_per_op=<µs>
 * The service is found as any host program finds it (SOFTDPU_UROM_SERVICE_ADDR, ...);
 * bench/urom_rma.sh starts a private daemon and runs ucx_perftest next to it.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "doca_buf.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_error.h"
#include "doca_pe.h"
#include "doca_urom.h"
#include "softdpu/urom_mem.h"
#include "urom_rma/rmabench.h"

#define DOMAIN_ID 1

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double mibps(size_t size, struct rmabench_notify n)
{
	return (double)size * (double)n.done / 1048576.0 / ((double)n.ns / 1e9);
}

static void die(const char *what, doca_error_t st)
{
	fprintf(stderr, "urom_rma: %s: %s\n", what, doca_error_get_name(st));
	exit(1);
}

/* Progress pe until ctx leaves STARTING/STOPPING or 30 s pass. */
static enum doca_ctx_states wait_state(struct doca_ctx *ctx, struct doca_pe *pe,
				       enum doca_ctx_states want)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_IDLE;
	double deadline = now_s() + 30;

	while (doca_ctx_get_state(ctx, &st) == DOCA_SUCCESS && st != want && now_s() < deadline)
		doca_pe_progress(pe);
	return st;
}

/* A one-member OOB: the allgather is a copy. */
static doca_error_t oob_allgather(void *sbuf, void *rbuf, size_t len, void *info, void **req)
{
	(void)info;
	memcpy(rbuf, sbuf, len);
	*req = rbuf;
	return DOCA_SUCCESS;
}

static doca_error_t oob_req(void *req)
{
	(void)req;
	return DOCA_SUCCESS;
}

struct result {
	int done;
	doca_error_t status;
	struct rmabench_notify n;
};

static void cmd_cb(struct doca_urom_worker_cmd_task *task, union doca_data tud, union doca_data cud)
{
	struct result *res = *(struct result **)doca_urom_worker_cmd_task_get_user_data(task);
	struct doca_buf *resp = doca_urom_worker_cmd_task_get_response(task);
	void *data = NULL;
	size_t len = 0;

	(void)tud, (void)cud;
	res->status = doca_task_get_status(doca_urom_worker_cmd_task_as_task(task));
	if (resp != NULL && doca_buf_get_data(resp, &data) == DOCA_SUCCESS &&
	    doca_buf_get_data_len(resp, &len) == DOCA_SUCCESS && len == sizeof(res->n))
		memcpy(&res->n, data, sizeof(res->n));
	else if (res->status == DOCA_SUCCESS)
		res->status = DOCA_ERROR_UNEXPECTED;
	res->done = 1;
	(void)doca_urom_worker_cmd_task_release(task);
}

static struct rmabench_notify run(struct doca_urom_worker *w, struct doca_pe *pe, uint64_t plugin,
				  const struct rmabench_cmd *c)
{
	struct doca_urom_worker_cmd_task *task;
	struct result res = {0};
	struct doca_buf *payload;
	void *p = NULL;
	doca_error_t st;
	double deadline;

	st = doca_urom_worker_cmd_task_allocate_init(w, plugin, &task);
	if (st != DOCA_SUCCESS)
		die("task allocate", st);
	payload = doca_urom_worker_cmd_task_get_payload(task);
	(void)doca_buf_get_data(payload, &p);
	memcpy(p, c, sizeof(*c));
	(void)doca_buf_set_data(payload, p, sizeof(*c));
	*(struct result **)doca_urom_worker_cmd_task_get_user_data(task) = &res;
	doca_urom_worker_cmd_task_set_cb(task, cmd_cb);
	st = doca_task_submit(doca_urom_worker_cmd_task_as_task(task));
	if (st != DOCA_SUCCESS)
		die("task submit", st);
	deadline = now_s() + 120;
	while (!res.done && now_s() < deadline)
		doca_pe_progress(pe);
	if (!res.done)
		die("the worker did not answer within 120 s", DOCA_ERROR_TIME_OUT);
	if (res.status != DOCA_SUCCESS || res.n.status != DOCA_SUCCESS)
		die("run", res.status != DOCA_SUCCESS ? res.status : (doca_error_t)res.n.status);
	return res.n;
}

int main(int argc, char **argv)
{
	size_t min_size = 8, max_size = 4u << 20, per_size = 256u << 20, window = 16;
	const struct doca_urom_service_plugin_info *plugins;
	struct doca_urom_domain_oob_coll oob = {0};
	struct doca_urom_service *svc;
	struct doca_urom_worker *w;
	struct doca_urom_domain *dom;
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	struct sdp_urom_mem *mem = NULL;
	uint64_t plugin = 0, id = DOMAIN_ID;
	struct doca_pe *pe;
	uint32_t ndev = 0;
	size_t nplug = 0, i, size;
	uint8_t *buf;
	doca_error_t st;
	int opt;

	while ((opt = getopt(argc, argv, "s:S:b:w:")) != -1) {
		switch (opt) {
		case 's':
			min_size = strtoull(optarg, NULL, 0);
			break;
		case 'S':
			max_size = strtoull(optarg, NULL, 0);
			break;
		case 'b':
			per_size = strtoull(optarg, NULL, 0);
			break;
		case 'w':
			window = strtoull(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-s min] [-S max] [-b bytes per size] [-w window]\n",
				argv[0]);
			return 2;
		}
	}
	if (min_size == 0 || max_size < min_size || window == 0)
		return 2;
	buf = aligned_alloc(4096, (max_size + 4095) & ~(size_t)4095);
	if (buf == NULL)
		return 1;
	memset(buf, 0, max_size);

	if ((st = doca_pe_create(&pe)) != DOCA_SUCCESS)
		die("pe", st);
	if (doca_devinfo_create_list(&list, &ndev) == DOCA_SUCCESS) {
		if (ndev > 0)
			(void)doca_dev_open(list[0], &dev);
		doca_devinfo_destroy_list(list);
	}
	if ((st = doca_urom_service_create(&svc)) != DOCA_SUCCESS ||
	    (st = doca_pe_connect_ctx(pe, doca_urom_service_as_ctx(svc))) != DOCA_SUCCESS ||
	    (dev != NULL && (st = doca_urom_service_set_dev(svc, dev)) != DOCA_SUCCESS) ||
	    (st = doca_ctx_start(doca_urom_service_as_ctx(svc))) != DOCA_SUCCESS)
		die("service start", st);
	if ((st = doca_urom_service_get_plugins_list(svc, &plugins, &nplug)) != DOCA_SUCCESS)
		die("plugins list", st);
	for (i = 0; i < nplug; i++)
		if (strcmp(plugins[i].plugin_name, "worker_rmabench") == 0)
			plugin = plugins[i].id;
	if (plugin == 0)
		die("no worker_rmabench plugin", DOCA_ERROR_NOT_FOUND);

	if ((st = doca_urom_worker_create(&w)) != DOCA_SUCCESS ||
	    (st = doca_urom_worker_set_service(w, svc)) != DOCA_SUCCESS ||
	    (st = doca_pe_connect_ctx(pe, doca_urom_worker_as_ctx(w))) != DOCA_SUCCESS ||
	    (st = doca_urom_worker_set_id(w, DOCA_UROM_WORKER_ID_ANY)) != DOCA_SUCCESS ||
	    (st = doca_urom_worker_set_max_inflight_tasks(w, 4)) != DOCA_SUCCESS ||
	    (st = doca_urom_worker_set_plugins(w, plugin)) != DOCA_SUCCESS)
		die("worker setup", st);
	st = doca_ctx_start(doca_urom_worker_as_ctx(w));
	if (st != DOCA_ERROR_IN_PROGRESS && st != DOCA_SUCCESS)
		die("worker start", st);
	if (wait_state(doca_urom_worker_as_ctx(w), pe, DOCA_CTX_STATE_RUNNING) !=
	    DOCA_CTX_STATE_RUNNING)
		die("worker not RUNNING", DOCA_ERROR_TIME_OUT);

	oob.allgather = oob_allgather;
	oob.req_test = oob_req;
	oob.req_free = oob_req;
	oob.n_oob_indexes = 1;
	if ((st = doca_urom_domain_create(&dom)) != DOCA_SUCCESS ||
	    (st = doca_pe_connect_ctx(pe, doca_urom_domain_as_ctx(dom))) != DOCA_SUCCESS ||
	    (st = doca_urom_domain_set_oob(dom, &oob)) != DOCA_SUCCESS ||
	    (st = doca_urom_domain_set_workers(dom, &id, &w, 1)) != DOCA_SUCCESS ||
	    (st = doca_urom_domain_set_buffers_count(dom, 1)) != DOCA_SUCCESS ||
	    (st = sdp_urom_domain_export_buffer(dom, buf, max_size, &mem)) != DOCA_SUCCESS)
		die("domain setup", st);
	st = doca_ctx_start(doca_urom_domain_as_ctx(dom));
	if (st != DOCA_ERROR_IN_PROGRESS && st != DOCA_SUCCESS)
		die("domain start", st);
	if (wait_state(doca_urom_domain_as_ctx(dom), pe, DOCA_CTX_STATE_RUNNING) !=
	    DOCA_CTX_STATE_RUNNING)
		die("domain not RUNNING", DOCA_ERROR_TIME_OUT);

	for (size = min_size; size <= max_size; size *= 2) {
		uint64_t iters = per_size / size;
		struct rmabench_cmd c = {.dest = DOMAIN_ID,
					 .va = (uint64_t)(uintptr_t)buf,
					 .size = size,
					 .window = window};
		struct rmabench_notify n;
		size_t k, bad = 0;

		if (iters < 100)
			iters = 100;
		if (iters > 200000)
			iters = 200000;
		c.iters = iters;
		/* warm-up, then the measured PUT */
		c.op = RMABENCH_PUT;
		c.iters = iters / 10 + 1;
		c.seed = size + 1;
		(void)run(w, pe, plugin, &c);
		c.iters = iters;
		c.seed = size + 2;
		n = run(w, pe, plugin, &c);
		for (k = 0; k < size; k++)
			bad += buf[k] != rmabench_byte(c.seed, k);
		if (bad)
			die("PUT bytes differ in host memory", DOCA_ERROR_UNEXPECTED);
		printf("put size=%zu iters=%lu MiBps=%.1f us_per_op=%.3f\n", size,
		       (unsigned long)n.done, mibps(size, n), (double)n.ns / 1e3 / (double)n.done);
		/* GET: the host writes the pattern, the worker checks what it read */
		c.op = RMABENCH_GET;
		c.seed = size + 3;
		for (k = 0; k < size; k++)
			buf[k] = rmabench_byte(c.seed, k);
		c.iters = iters / 10 + 1;
		(void)run(w, pe, plugin, &c);
		c.iters = iters;
		n = run(w, pe, plugin, &c);
		if (n.bad)
			die("GET bytes differ in the worker", DOCA_ERROR_UNEXPECTED);
		printf("get size=%zu iters=%lu MiBps=%.1f us_per_op=%.3f\n", size,
		       (unsigned long)n.done, mibps(size, n), (double)n.ns / 1e3 / (double)n.done);
		fflush(stdout);
	}

	(void)doca_ctx_stop(doca_urom_domain_as_ctx(dom));
	(void)doca_urom_domain_destroy(dom);
	(void)sdp_urom_mem_unexport(mem);
	(void)doca_ctx_stop(doca_urom_worker_as_ctx(w));
	(void)wait_state(doca_urom_worker_as_ctx(w), pe, DOCA_CTX_STATE_IDLE);
	(void)doca_urom_worker_destroy(w);
	(void)doca_ctx_stop(doca_urom_service_as_ctx(svc));
	(void)wait_state(doca_urom_service_as_ctx(svc), pe, DOCA_CTX_STATE_IDLE);
	(void)doca_urom_service_destroy(svc);
	(void)doca_pe_destroy(pe);
	if (dev != NULL)
		(void)doca_dev_close(dev);
	free(buf);
	return 0;
}
