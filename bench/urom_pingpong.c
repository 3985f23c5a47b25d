/*
 * bench/urom_pingpong: ping-pong latency through two UROM workers (the worker_sandbox plugin),
 * as DOCA's ping-pong does it but repeated: two ranks (threads of this process, each with its
 * own PE, service context, worker and domain over softdpu's TCP OOB on loopback). Rank 0 posts
 * the receive of the pong, then sends the ping (tag send to domain member 1); rank 1 receives
 * it and sends the pong back. Each message goes host -> worker (command), worker -> worker
 * (UCX tag), worker -> host (notification). Both ranks poll their PE without sleeping while
 * they measure (as ucx_perftest does).
 *
 *   urom_pingpong [-n iters] [-w warmup] [-s size]
 *
 * Prints key=value lines: roundtrip_mean_us, oneway_mean_us (half the round trip, comparable
 * with ucx_perftest -t tag_lat's one-way latency), roundtrip_median_us. Every message's bytes
 * and tag are checked. The service is found as any host program finds it.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "doca_ctx.h"
#include "doca_error.h"
#include "doca_pe.h"
#include "doca_urom.h"
#include "softdpu/urom_oob.h"
#include "urom_sandbox.h"

static long iters = 10000, warmup = 200;
static size_t msg_size = 8;
static uint16_t oob_port;
static struct sdp_urom_oob *root_oob;
static const char secret[] = "bench urom_pingpong shared secret";
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int port_ready;

struct rank {
	uint32_t rank;
	int failed;
	double *rt_us;
};

struct pending {
	int send_done, recv_done, bad;
	uint8_t data[1024];
	uint64_t len;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void send_cb(doca_error_t result, union doca_data cookie, union doca_data context,
		    ucs_status_t status)
{
	struct pending *p = cookie.ptr;

	(void)context;
	if (result != DOCA_SUCCESS || status != UCS_OK)
		p->bad = 1;
	p->send_done = 1;
}

static void recv_cb(doca_error_t result, union doca_data cookie, union doca_data context,
		    void *buffer, uint64_t count, uint64_t sender_tag, ucs_status_t status)
{
	struct pending *p = cookie.ptr;

	(void)context, (void)sender_tag;
	if (result != DOCA_SUCCESS || status != UCS_OK || buffer == NULL || count > sizeof(p->data))
		p->bad = 1;
	else
		memcpy(p->data, buffer, count);
	p->len = count;
	p->recv_done = 1;
}

static int spin(struct doca_pe *pe, int *flag)
{
	double deadline = now_us() + 10e6;

	while (!*flag) {
		doca_pe_progress(pe);
		if (now_us() > deadline)
			return -1;
	}
	return 0;
}

static enum doca_ctx_states wait_state(struct doca_ctx *ctx, struct doca_pe *pe,
				       enum doca_ctx_states want)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_IDLE;
	double deadline = now_us() + 30e6;

	while (doca_ctx_get_state(ctx, &st) == DOCA_SUCCESS && st != want && now_us() < deadline)
		doca_pe_progress(pe);
	return st;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void *rank_main(void *arg)
{
	struct rank *r = arg;
	struct sdp_urom_oob_params op = {.rank = r->rank,
					 .size = 2,
					 .secret = secret,
					 .secret_len = sizeof(secret),
					 .timeout_ms = 30000};
	const struct doca_urom_service_plugin_info *plugins;
	struct doca_urom_domain_oob_coll coll;
	struct doca_urom_service *svc = NULL;
	struct doca_urom_worker *w = NULL;
	struct doca_urom_domain *dom = NULL;
	struct sdp_urom_oob *oob = NULL;
	uint64_t id = r->rank, plugin = 0, peer = 1 - r->rank;
	uint8_t msg[1024];
	struct doca_pe *pe;
	char root[64];
	size_t n = 0, i;
	long k;

	if (r->rank == 0) {
		op.root = "127.0.0.1:0";
		if (sdp_urom_oob_create(&op, &oob) != DOCA_SUCCESS)
			goto fail;
		pthread_mutex_lock(&mu);
		oob_port = sdp_urom_oob_port(oob);
		port_ready = 1;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
	} else {
		pthread_mutex_lock(&mu);
		while (!port_ready)
			pthread_cond_wait(&cv, &mu);
		pthread_mutex_unlock(&mu);
		snprintf(root, sizeof(root), "127.0.0.1:%u", oob_port);
		op.root = root;
		if (sdp_urom_oob_create(&op, &oob) != DOCA_SUCCESS)
			goto fail;
	}
	if (doca_pe_create(&pe) != DOCA_SUCCESS || doca_urom_service_create(&svc) != DOCA_SUCCESS ||
	    doca_pe_connect_ctx(pe, doca_urom_service_as_ctx(svc)) != DOCA_SUCCESS ||
	    doca_ctx_start(doca_urom_service_as_ctx(svc)) != DOCA_SUCCESS ||
	    doca_urom_service_get_plugins_list(svc, &plugins, &n) != DOCA_SUCCESS)
		goto fail;
	for (i = 0; i < n; i++)
		if (strcmp(plugins[i].plugin_name, "worker_sandbox") == 0) {
			plugin = plugins[i].id;
			if (urom_sandbox_init(plugins[i].id, plugins[i].version) != DOCA_SUCCESS)
				goto fail;
		}
	if (plugin == 0 || doca_urom_worker_create(&w) != DOCA_SUCCESS ||
	    doca_urom_worker_set_service(w, svc) != DOCA_SUCCESS ||
	    doca_pe_connect_ctx(pe, doca_urom_worker_as_ctx(w)) != DOCA_SUCCESS ||
	    doca_urom_worker_set_id(w, DOCA_UROM_WORKER_ID_ANY) != DOCA_SUCCESS ||
	    doca_urom_worker_set_max_inflight_tasks(w, 16) != DOCA_SUCCESS ||
	    doca_urom_worker_set_plugins(w, plugin) != DOCA_SUCCESS)
		goto fail;
	(void)doca_ctx_start(doca_urom_worker_as_ctx(w));
	if (wait_state(doca_urom_worker_as_ctx(w), pe, DOCA_CTX_STATE_RUNNING) !=
	    DOCA_CTX_STATE_RUNNING)
		goto fail;
	sdp_urom_oob_coll(oob, &coll);
	if (doca_urom_domain_create(&dom) != DOCA_SUCCESS ||
	    doca_pe_connect_ctx(pe, doca_urom_domain_as_ctx(dom)) != DOCA_SUCCESS ||
	    doca_urom_domain_set_oob(dom, &coll) != DOCA_SUCCESS ||
	    doca_urom_domain_set_workers(dom, &id, &w, 1) != DOCA_SUCCESS)
		goto fail;
	(void)doca_ctx_start(doca_urom_domain_as_ctx(dom));
	if (wait_state(doca_urom_domain_as_ctx(dom), pe, DOCA_CTX_STATE_RUNNING) !=
	    DOCA_CTX_STATE_RUNNING)
		goto fail;

	for (k = 0; k < warmup + iters; k++) {
		struct pending p = {0};
		union doca_data c = {.ptr = &p};
		double t0 = now_us();

		for (i = 0; i < msg_size; i++)
			msg[i] = (uint8_t)(k + i + r->rank);
		if (r->rank == 0) {
			if (urom_sandbox_tag_task_recv(w, c, 1, 0, msg_size, 2, 0xff, 0, recv_cb) !=
				    DOCA_SUCCESS ||
			    urom_sandbox_tag_task_send(w, c, 2, peer, (uint64_t)(uintptr_t)msg,
						       msg_size, 1, 0, send_cb) != DOCA_SUCCESS ||
			    spin(pe, &p.send_done) || spin(pe, &p.recv_done))
				goto fail;
		} else {
			if (urom_sandbox_tag_task_recv(w, c, 1, 0, msg_size, 1, 0xff, 0, recv_cb) !=
				    DOCA_SUCCESS ||
			    spin(pe, &p.recv_done))
				goto fail;
			/* the pong carries rank 1's pattern for this k */
			if (urom_sandbox_tag_task_send(w, c, 2, peer, (uint64_t)(uintptr_t)msg,
						       msg_size, 2, 0, send_cb) != DOCA_SUCCESS ||
			    spin(pe, &p.send_done))
				goto fail;
		}
		if (p.bad || p.len != msg_size)
			goto fail;
		for (i = 0; i < msg_size; i++)
			if (p.data[i] != (uint8_t)(k + i + (1 - r->rank)))
				goto fail;
		if (r->rank == 0 && k >= warmup)
			r->rt_us[k - warmup] = now_us() - t0;
	}
	goto out;
fail:
	r->failed = 1;
	fprintf(stderr, "urom_pingpong: rank %u failed\n", r->rank);
out:
	if (dom != NULL) {
		(void)doca_ctx_stop(doca_urom_domain_as_ctx(dom));
		(void)doca_urom_domain_destroy(dom);
	}
	if (w != NULL) {
		(void)doca_ctx_stop(doca_urom_worker_as_ctx(w));
		(void)wait_state(doca_urom_worker_as_ctx(w), pe, DOCA_CTX_STATE_IDLE);
		(void)doca_urom_worker_destroy(w);
	}
	if (svc != NULL) {
		(void)doca_ctx_stop(doca_urom_service_as_ctx(svc));
		(void)doca_urom_service_destroy(svc);
	}
	if (oob != NULL)
		(void)sdp_urom_oob_destroy(oob);
	return NULL;
}

int main(int argc, char **argv)
{
	struct rank ranks[2] = {{.rank = 0}, {.rank = 1}};
	pthread_t th[2];
	double sum = 0;
	long k;
	int opt;

	while ((opt = getopt(argc, argv, "n:w:s:")) != -1) {
		switch (opt) {
		case 'n':
			iters = strtol(optarg, NULL, 0);
			break;
		case 'w':
			warmup = strtol(optarg, NULL, 0);
			break;
		case 's':
			msg_size = strtoull(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-n iters] [-w warmup] [-s size]\n", argv[0]);
			return 2;
		}
	}
	if (iters <= 0 || warmup < 0 || msg_size == 0 || msg_size > 1024)
		return 2;
	(void)root_oob;
	ranks[0].rt_us = calloc((size_t)iters, sizeof(double));
	if (ranks[0].rt_us == NULL)
		return 1;
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, rank_main, &ranks[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	if (ranks[0].failed || ranks[1].failed)
		return 1;
	for (k = 0; k < iters; k++)
		sum += ranks[0].rt_us[k];
	qsort(ranks[0].rt_us, (size_t)iters, sizeof(double), cmp_double);
	printf("roundtrip_mean_us=%.3f\n", sum / (double)iters);
	printf("roundtrip_median_us=%.3f\n", ranks[0].rt_us[iters / 2]);
	printf("oneway_mean_us=%.3f\n", sum / (double)iters / 2);
	printf("oneway_median_us=%.3f\n", ranks[0].rt_us[iters / 2] / 2);
	printf("size=%zu iters=%ld\n", msg_size, iters);
	free(ranks[0].rt_us);
	return 0;
}
