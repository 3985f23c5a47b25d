/*
 * bench/urom_rma_atomic: worker_rma's atomic rate and active-message latency, two ranks
 * (processes, each with its own PE, service context, worker and domain over softdpu's TCP OOB
 * on loopback; each exports a 4 KiB buffer into the domain).
 *
 *   urom_rma_atomic [-n iters] [-w warmup] [-W window] [-d dest] [-s am_size]
 *
 * 1. Fetch-add rate: rank 0 issues 64-bit FADDs of 1 on the word of member dest (1: the peer's,
 *    0: its own), window commands in flight (max_inflight_tasks), from the first submission to
 *    the last completion. Every fetched value 0 .. warmup + iters - 1 must come back once and
 *    the word must end at warmup + iters.
 * 2. AM ping-pong: rank 0 posts the receive of the pong, sends an AM (handler 1, am_size bytes
 *    of payload, no header) to rank 1, which receives it and answers with handler 2. Each AM
 *    goes host -> worker (command), worker -> worker (UCX AM), worker -> host (notification).
 *    Every payload byte is checked.
 * Both ranks poll their PE without sleeping while they measure (as ucx_perftest does). Prints
 * key=value lines (rank 0): fadd_ops_per_s, am_roundtrip_mean_us, am_oneway_mean_us,
 * am_oneway_median_us. The service is found as any host program finds it.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "doca_ctx.h"
#include "doca_error.h"
#include "doca_pe.h"
#include "doca_urom.h"
#include "softdpu/urom_mem.h"
#include "softdpu/urom_oob.h"
#include "urom_rma.h"

#define BUF 4096
#define AM_CAP 1024

static long iters = 100000, warmup = 1000, am_iters = 20000;
static uint32_t window = 16;
static uint64_t dest = 1;
static size_t am_size = 8;
static const char secret[] = "bench urom_rma_atomic shared secret";

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
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

/* ---- fetch-add rate ---- */

static struct {
	long done, bad;
	uint8_t *seen;
	long total;
} fa;

static void fadd_cb(doca_error_t result, union doca_data cookie, uint64_t value)
{
	(void)cookie;
	if (result != DOCA_SUCCESS || value >= (uint64_t)fa.total || fa.seen[value]++ != 0)
		fa.bad++;
	fa.done++;
}

static int fadd_run(struct doca_urom_worker *w, struct doca_pe *pe, uint64_t va)
{
	union doca_data c = {.u64 = 0};
	long issued = 0;
	double t0 = 0, deadline = now_us() + 120e6;
	doca_error_t st;

	fa.total = warmup + iters;
	fa.seen = calloc((size_t)fa.total, 1);
	if (fa.seen == NULL)
		return -1;
	while (fa.done < fa.total && now_us() < deadline) {
		if (fa.done == warmup && t0 == 0)
			t0 = now_us();
		while (issued < fa.total && issued - fa.done < window) {
			/* warmup drains before the timed part starts */
			if (issued == warmup && fa.done < warmup)
				break;
			st = urom_rma_atomic(w, c, UROM_RMA_ATOMIC_FADD, 8, dest, va, 1, 0,
					     fadd_cb);
			if (st == DOCA_ERROR_AGAIN)
				break;
			if (st != DOCA_SUCCESS)
				return -1;
			issued++;
		}
		doca_pe_progress(pe);
	}
	if (fa.done != fa.total || fa.bad != 0) {
		fprintf(stderr, "urom_rma_atomic: %ld of %ld fetch-adds done, %ld bad\n", fa.done,
			fa.total, fa.bad);
		return -1;
	}
	printf("fadd_ops_per_s=%.0f\n", (double)iters / ((now_us() - t0) / 1e6));
	printf("fadd_iters=%ld window=%u dest=%lu\n", iters, window, (unsigned long)dest);
	free(fa.seen);
	return 0;
}

/* ---- AM ping-pong ---- */

struct am_wait {
	int done, bad;
	size_t len;
	uint8_t data[AM_CAP];
};

static void am_sent(doca_error_t result, union doca_data cookie)
{
	struct am_wait *a = cookie.ptr;

	a->bad |= result != DOCA_SUCCESS;
	a->done = 1;
}

static void am_got(doca_error_t result, union doca_data cookie, uint64_t handler, const void *hdr,
		   size_t hdr_len, const void *payload, size_t len, uint64_t sender,
		   uint64_t dropped)
{
	struct am_wait *a = cookie.ptr;

	(void)hdr, (void)handler, (void)sender, (void)dropped;
	if (result != DOCA_SUCCESS || hdr_len != 0 || len > AM_CAP)
		a->bad = 1;
	else
		memcpy(a->data, payload, len);
	a->len = len;
	a->done = 1;
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

static int am_run(uint32_t rank, struct doca_urom_worker *w, struct doca_pe *pe)
{
	uint64_t peer = 1 - rank;
	uint8_t msg[AM_CAP];
	double *rt = rank == 0 ? calloc((size_t)am_iters, sizeof(double)) : NULL, sum = 0;
	long k;
	size_t i;

	if (rank == 0 && rt == NULL)
		return -1;
	for (k = 0; k < warmup + am_iters; k++) {
		struct am_wait s = {0}, r = {0};
		union doca_data cs = {.ptr = &s}, cr = {.ptr = &r};
		double t0 = now_us();

		for (i = 0; i < am_size; i++)
			msg[i] = (uint8_t)(k + i + rank);
		if (urom_rma_am_recv(w, cr, rank == 0 ? 2 : 1, am_got) != DOCA_SUCCESS)
			goto fail;
		if (rank == 0 && (urom_rma_am_send(w, cs, peer, 1, NULL, 0, msg, am_size,
						   am_sent) != DOCA_SUCCESS ||
				  spin(pe, &s.done) || spin(pe, &r.done)))
			goto fail;
		if (rank == 1 && (spin(pe, &r.done) ||
				  urom_rma_am_send(w, cs, peer, 2, NULL, 0, msg, am_size,
						   am_sent) != DOCA_SUCCESS ||
				  spin(pe, &s.done)))
			goto fail;
		if (s.bad || r.bad || r.len != am_size)
			goto fail;
		for (i = 0; i < am_size; i++)
			if (r.data[i] != (uint8_t)(k + i + peer))
				goto fail;
		if (rank == 0 && k >= warmup)
			rt[k - warmup] = now_us() - t0;
	}
	if (rank == 0) {
		for (k = 0; k < am_iters; k++)
			sum += rt[k];
		qsort(rt, (size_t)am_iters, sizeof(double), cmp_double);
		printf("am_roundtrip_mean_us=%.3f\n", sum / (double)am_iters);
		printf("am_oneway_mean_us=%.3f\n", sum / (double)am_iters / 2);
		printf("am_oneway_median_us=%.3f\n", rt[am_iters / 2] / 2);
		printf("am_size=%zu am_iters=%ld\n", am_size, am_iters);
	}
	free(rt);
	return 0;
fail:
	fprintf(stderr, "urom_rma_atomic: rank %u: AM ping-pong failed at %ld\n", rank, k);
	free(rt);
	return -1;
}

static int barrier(struct sdp_urom_oob *oob, int ok)
{
	int all[2] = {0, 0};

	if (sdp_urom_oob_allgather(oob, &ok, all, sizeof(ok)) != DOCA_SUCCESS)
		return 0;
	return all[0] && all[1];
}

static int rank_main(uint32_t rank, uint16_t port, struct sdp_urom_oob *oob)
{
	struct sdp_urom_oob_params op = {.rank = rank,
					 .size = 2,
					 .secret = secret,
					 .secret_len = sizeof(secret),
					 .timeout_ms = 30000};
	const struct doca_urom_service_plugin_info *plugins;
	struct doca_urom_domain_oob_coll coll;
	struct doca_urom_service *svc = NULL;
	struct doca_urom_worker *w = NULL;
	struct doca_urom_domain *dom = NULL;
	struct sdp_urom_mem *mem = NULL;
	uint64_t id = rank, plugin = 0, my_va, vas[2];
	struct doca_pe *pe = NULL;
	uint64_t *buf = aligned_alloc(4096, BUF);
	char root[64];
	size_t n = 0, i;
	int ok = 0;

	if (buf == NULL)
		return 1;
	memset(buf, 0, BUF);
	snprintf(root, sizeof(root), "127.0.0.1:%u", port);
	op.root = root;
	if (oob == NULL && sdp_urom_oob_create(&op, &oob) != DOCA_SUCCESS)
		goto out;
	if (doca_pe_create(&pe) != DOCA_SUCCESS || doca_urom_service_create(&svc) != DOCA_SUCCESS ||
	    doca_pe_connect_ctx(pe, doca_urom_service_as_ctx(svc)) != DOCA_SUCCESS ||
	    doca_ctx_start(doca_urom_service_as_ctx(svc)) != DOCA_SUCCESS ||
	    doca_urom_service_get_plugins_list(svc, &plugins, &n) != DOCA_SUCCESS)
		goto out;
	for (i = 0; i < n; i++)
		if (strcmp(plugins[i].plugin_name, "worker_rma") == 0) {
			plugin = plugins[i].id;
			if (urom_rma_init(plugins[i].id, plugins[i].version) != DOCA_SUCCESS)
				goto out;
		}
	urom_rma_set_local_id(rank);
	if (plugin == 0 || doca_urom_worker_create(&w) != DOCA_SUCCESS ||
	    doca_urom_worker_set_service(w, svc) != DOCA_SUCCESS ||
	    doca_pe_connect_ctx(pe, doca_urom_worker_as_ctx(w)) != DOCA_SUCCESS ||
	    doca_urom_worker_set_id(w, DOCA_UROM_WORKER_ID_ANY) != DOCA_SUCCESS ||
	    doca_urom_worker_set_max_inflight_tasks(w, window) != DOCA_SUCCESS ||
	    doca_urom_worker_set_plugins(w, plugin) != DOCA_SUCCESS)
		goto out;
	(void)doca_ctx_start(doca_urom_worker_as_ctx(w));
	if (wait_state(doca_urom_worker_as_ctx(w), pe, DOCA_CTX_STATE_RUNNING) !=
	    DOCA_CTX_STATE_RUNNING)
		goto out;
	sdp_urom_oob_coll(oob, &coll);
	if (doca_urom_domain_create(&dom) != DOCA_SUCCESS ||
	    doca_pe_connect_ctx(pe, doca_urom_domain_as_ctx(dom)) != DOCA_SUCCESS ||
	    doca_urom_domain_set_oob(dom, &coll) != DOCA_SUCCESS ||
	    doca_urom_domain_set_workers(dom, &id, &w, 1) != DOCA_SUCCESS ||
	    doca_urom_domain_set_buffers_count(dom, 1) != DOCA_SUCCESS ||
	    sdp_urom_domain_export_buffer(dom, buf, BUF, &mem) != DOCA_SUCCESS)
		goto out;
	(void)doca_ctx_start(doca_urom_domain_as_ctx(dom));
	if (wait_state(doca_urom_domain_as_ctx(dom), pe, DOCA_CTX_STATE_RUNNING) !=
	    DOCA_CTX_STATE_RUNNING)
		goto out;
	my_va = (uint64_t)(uintptr_t)buf;
	if (sdp_urom_oob_allgather(oob, &my_va, vas, sizeof(my_va)) != DOCA_SUCCESS)
		goto out;

	ok = rank != 0 || fadd_run(w, pe, vas[dest]) == 0;
	ok = barrier(oob, ok);
	if (ok && rank == dest && buf[0] != (uint64_t)(warmup + iters)) {
		fprintf(stderr, "urom_rma_atomic: the word is %lu, expected %ld\n",
			(unsigned long)buf[0], warmup + iters);
		ok = 0;
	}
	ok = barrier(oob, ok);
	if (ok)
		ok = am_run(rank, w, pe) == 0;
	ok = barrier(oob, ok);
out:
	if (!ok)
		fprintf(stderr, "urom_rma_atomic: rank %u failed\n", rank);
	if (dom != NULL) {
		(void)doca_ctx_stop(doca_urom_domain_as_ctx(dom));
		(void)doca_urom_domain_destroy(dom);
	}
	if (mem != NULL)
		(void)sdp_urom_mem_unexport(mem);
	if (w != NULL) {
		(void)doca_ctx_stop(doca_urom_worker_as_ctx(w));
		(void)wait_state(doca_urom_worker_as_ctx(w), pe, DOCA_CTX_STATE_IDLE);
		(void)doca_urom_worker_destroy(w);
	}
	if (svc != NULL) {
		(void)doca_ctx_stop(doca_urom_service_as_ctx(svc));
		(void)doca_urom_service_destroy(svc);
	}
	if (pe != NULL)
		(void)doca_pe_destroy(pe);
	if (oob != NULL)
		(void)sdp_urom_oob_destroy(oob);
	free(buf);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct sdp_urom_oob_params op = {.root = "127.0.0.1:0",
					 .rank = 0,
					 .size = 2,
					 .secret = secret,
					 .secret_len = sizeof(secret),
					 .timeout_ms = 30000};
	struct sdp_urom_oob *root = NULL;
	pid_t pids[2];
	int opt, rc = 0;

	while ((opt = getopt(argc, argv, "n:w:W:d:s:a:")) != -1) {
		switch (opt) {
		case 'n':
			iters = strtol(optarg, NULL, 0);
			break;
		case 'a':
			am_iters = strtol(optarg, NULL, 0);
			break;
		case 'w':
			warmup = strtol(optarg, NULL, 0);
			break;
		case 'W':
			window = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'd':
			dest = strtoull(optarg, NULL, 0);
			break;
		case 's':
			am_size = strtoull(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-n iters] [-a am_iters] [-w warmup] [-W window] "
				"[-d dest 0|1] [-s am_size]\n",
				argv[0]);
			return 2;
		}
	}
	if (iters <= 0 || am_iters <= 0 || warmup < 0 || window == 0 || dest > 1 ||
	    am_size > AM_CAP)
		return 2;
	if (sdp_urom_oob_create(&op, &root) != DOCA_SUCCESS)
		return 1;
	fflush(stdout);
	for (uint32_t r = 0; r < 2; r++) {
		pids[r] = fork();
		if (pids[r] == 0) {
			int st = rank_main(r, sdp_urom_oob_port(root), r == 0 ? root : NULL);

			fflush(stdout);
			_exit(st);
		}
	}
	(void)sdp_urom_oob_destroy(root);
	for (int r = 0; r < 2; r++) {
		int st = -1;

		if (pids[r] < 0 || waitpid(pids[r], &st, 0) != pids[r] || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			rc = 1;
	}
	return rc;
}
