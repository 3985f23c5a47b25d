/*
 * Batch send tasks of libdoca_eth (doca_eth_txq_task_batch_send_*, doca_task_batch_submit,
 * doca_task_batch_free) on loop devices joined by a 16-frame wire, so that big batches wait in
 * the send queue's backlog and are retried:
 * - batches of 1, 16 and 128 frames, each frame checked byte for byte and in order by the
 *   receiver, the callback's arguments (batch, count, user data, arrays) checked exactly, and a
 *   batch resubmitted after its callback;
 * - batches and single send tasks submitted back to back keep their order on the wire and in
 *   the callbacks;
 * - event mode: a batch waiting behind the full wire (the receiver's tasks used up), its queue
 *   on a PE whose program sleeps on the PE's handle while a thread progresses the receiver,
 *   completes without a 2 s sleep that no wake-up ended (the queue's retry timer);
 * - the checksum offloads fill the IPv4 and UDP checksums of a UDP frame inside a batch (the
 *   sender's buffer untouched);
 * - a frame shorter than an Ethernet header, and a missing buffer, fail alone (error callback,
 *   their status INVALID_VALUE) while the rest of the batch is sent;
 * - NO_MEMORY past num_task_batches, INVALID_VALUE for tasks_num 0 or above the maximum and for
 *   bad configurations, BAD_STATE before start, while stopping and after stop, for a second
 *   submission and for a freed batch;
 * - stop with batches and a task waiting behind a full wire: all complete through the error
 *   callbacks, in order, the frames already sent with DOCA_SUCCESS and the rest IO_FAILED.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "doca_buf.h"
#include "doca_buf_inventory.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_eth_rxq.h"
#include "doca_eth_rxq_cpu_data_path.h"
#include "doca_eth_txq.h"
#include "doca_eth_txq_cpu_data_path.h"
#include "doca_mmap.h"
#include "doca_pe.h"
#include "softdpu/eth.h"
#include "t_helpers.h"
#include "t_nic.h"

#define SLOT 2048
#define NSEND 512 /* send slots: one per frame id */
#define NRECV 32  /* receive tasks, resubmitted from their callback */
#define WIRE_DEPTH 16
#define STOP_DEPTH 8
#define CTX_UD 0xc7c7u

static uint8_t g_mem[(NSEND + NRECV) * SLOT];
static struct doca_buf_inventory *g_inv;
static struct doca_mmap *g_mmap;
static struct doca_buf *g_send[NSEND];
static uint32_t g_next_id;	       /* next frame id to build */
static uint32_t g_udp_id = UINT32_MAX; /* this frame is UDP/IPv4, its checksums left zero */
static int g_udp_seen;

/* receiver */
static uint32_t g_rx_ids[NSEND];
static int g_rx_n, g_rx_bad;
static struct doca_buf *g_recv_bufs[NRECV];

/* what the callbacks saw, in order */
#define MAX_EVENTS 64
struct event {
	int is_batch;
	int ok;			   /* success callback */
	uint64_t ud;		   /* batch or task user data */
	struct doca_task_batch *b; /* batch */
	uint16_t n;
	uint64_t ctx_ud;
	uint64_t task_ud[128];
	struct doca_buf *pkts[128];
	doca_error_t status[128];
	union doca_data *ud_array;
	struct doca_buf **pkt_array;
};
static struct event g_ev[MAX_EVENTS];
static int g_nev;
static int g_keep; /* callbacks keep the batch instead of freeing it */

static uint32_t frame_len(uint32_t id)
{
	return 60 + (id * 131) % (1514 - 60 + 1);
}

/* Frame id: its id in the UDP payload (frame g_udp_id: an Ethernet/IPv4/UDP frame). */
static void frame_fill(uint8_t *buf, uint32_t id)
{
	t_frame_fill(buf, frame_len(id), id, id == g_udp_id);
	memcpy(buf + SDP_PKT_UDP4_PAYLOAD, &id, sizeof(id));
}

/* A new frame in its own send slot; its buffer. */
static struct doca_buf *frame_new(uint32_t *id_p)
{
	uint32_t id = g_next_id++;
	uint8_t *p = g_mem + (size_t)id * SLOT;

	if (id >= NSEND) {
		t_fail("test bug: out of send slots");
		exit(1);
	}
	frame_fill(p, id);
	T_OK(doca_buf_inventory_buf_get_by_data(g_inv, g_mmap, p, frame_len(id), &g_send[id]));
	if (id_p != NULL)
		*id_p = id;
	return g_send[id];
}

static void recv_ok(struct doca_eth_rxq_task_recv *task, union doca_data task_user_data,
		    union doca_data ctx_user_data)
{
	struct doca_buf *pkt = NULL;
	uint8_t want[SLOT];
	void *data = NULL;
	size_t len = 0;
	uint32_t id = UINT32_MAX;

	(void)task_user_data;
	(void)ctx_user_data;
	T_OK(doca_eth_rxq_task_recv_get_pkt(task, &pkt));
	T_OK(doca_buf_get_data(pkt, &data));
	T_OK(doca_buf_get_data_len(pkt, &len));
	if (len >= 46)
		memcpy(&id, (uint8_t *)data + 42, sizeof(id));
	if (id >= NSEND || len != frame_len(id)) {
		t_fail("received a frame of %zu bytes with id %u", len, id);
		g_rx_bad++;
	} else {
		frame_fill(want, id);
		if (id == g_udp_id) {
			g_udp_seen++;
			if (!t_udp_offload_ok(data, want, (uint32_t)len)) {
				t_fail("UDP frame %u: checksums wrong or other bytes changed", id);
				g_rx_bad++;
			}
		} else if (memcmp(want, data, len) != 0) {
			t_fail("frame %u differs from what was sent", id);
			g_rx_bad++;
		}
	}
	if (g_rx_n < NSEND)
		g_rx_ids[g_rx_n++] = id;
	/* the task goes on receiving into the same buffer */
	T_OK(doca_buf_reset_data_len(pkt));
	T_OK(doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(task)));
}

static void recv_err(struct doca_eth_rxq_task_recv *task, union doca_data task_user_data,
		     union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	doca_task_free(doca_eth_rxq_task_recv_as_doca_task(task));
}

static struct event *event_new(void)
{
	if (g_nev >= MAX_EVENTS) {
		t_fail("test bug: too many callbacks");
		exit(1);
	}
	memset(&g_ev[g_nev], 0, sizeof(g_ev[0]));
	return &g_ev[g_nev++];
}

static void batch_cb(int ok, struct doca_task_batch *task_batch, uint16_t tasks_num,
		     union doca_data ctx_user_data, union doca_data task_batch_user_data,
		     union doca_data *task_user_data_array, struct doca_buf **pkt_array,
		     doca_error_t *status_array)
{
	struct event *e = event_new();

	e->is_batch = 1;
	e->ok = ok;
	e->b = task_batch;
	e->n = tasks_num;
	e->ud = task_batch_user_data.u64;
	e->ctx_ud = ctx_user_data.u64;
	e->ud_array = task_user_data_array;
	e->pkt_array = pkt_array;
	for (uint16_t i = 0; i < tasks_num && i < 128; i++) {
		e->task_ud[i] = task_user_data_array[i].u64;
		e->pkts[i] = pkt_array[i];
		e->status[i] = status_array[i];
	}
	if (!g_keep)
		doca_task_batch_free(task_batch);
}

static void batch_ok(struct doca_task_batch *task_batch, uint16_t tasks_num,
		     union doca_data ctx_user_data, union doca_data task_batch_user_data,
		     union doca_data *task_user_data_array, struct doca_buf **pkt_array,
		     doca_error_t *status_array)
{
	batch_cb(1, task_batch, tasks_num, ctx_user_data, task_batch_user_data,
		 task_user_data_array, pkt_array, status_array);
}

static void batch_err(struct doca_task_batch *task_batch, uint16_t tasks_num,
		      union doca_data ctx_user_data, union doca_data task_batch_user_data,
		      union doca_data *task_user_data_array, struct doca_buf **pkt_array,
		      doca_error_t *status_array)
{
	batch_cb(0, task_batch, tasks_num, ctx_user_data, task_batch_user_data,
		 task_user_data_array, pkt_array, status_array);
}

static void send_cb(int ok, struct doca_eth_txq_task_send *task, union doca_data task_user_data,
		    union doca_data ctx_user_data)
{
	struct event *e = event_new();

	e->ok = ok;
	e->ud = task_user_data.u64;
	e->ctx_ud = ctx_user_data.u64;
	e->status[0] = doca_task_get_status(doca_eth_txq_task_send_as_doca_task(task));
	doca_task_free(doca_eth_txq_task_send_as_doca_task(task));
}

static void send_ok(struct doca_eth_txq_task_send *task, union doca_data task_user_data,
		    union doca_data ctx_user_data)
{
	send_cb(1, task, task_user_data, ctx_user_data);
}

static void send_err(struct doca_eth_txq_task_send *task, union doca_data task_user_data,
		     union doca_data ctx_user_data)
{
	send_cb(0, task, task_user_data, ctx_user_data);
}

/* Progress until *counter reaches want or 5 s pass; sleeps 1 ms when idle. */
static void progress_until(struct doca_pe *pe, const int *counter, int want)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (*counter < want) {
		if (!doca_pe_progress(pe)) {
			struct timespec ms = {0, 1000000};

			nanosleep(&ms, NULL);
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 5)
			break;
	}
}

/* Progress for ms milliseconds. */
static void progress_for(struct doca_pe *pe, int ms)
{
	for (int k = 0; k < ms; k++)
		if (!doca_pe_progress(pe))
			usleep(1000);
}

/* Progress until the backend took want frames of txq (10 s at most); its counters then. */
static void wait_txq_packets(struct doca_pe *pe, struct doca_eth_txq *txq, uint64_t want,
			     struct sdp_eth_txq_counters *tc)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		T_OK(sdp_eth_txq_get_counters(txq, tc));
		if (tc->packets >= want)
			return;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= 10)
			break;
		if (!doca_pe_progress(pe))
			usleep(1000);
	}
	t_fail("the backend took %llu frames in 10 s, expected %llu",
	       (unsigned long long)tc->packets, (unsigned long long)want);
}

static void wait_idle(struct doca_pe *pe, struct doca_ctx *ctx)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;

	for (int k = 0; k < 5000; k++) {
		T_OK(doca_ctx_get_state(ctx, &st));
		if (st == DOCA_CTX_STATE_IDLE)
			return;
		if (!doca_pe_progress(pe))
			usleep(1000);
	}
	t_fail("context did not reach IDLE (state %d)", (int)st);
}

/*
 * The receiver's PE, progressed by a thread from when go is set until g_rx_n reaches stop_at
 * (10 s at most in all).
 */
struct rx_pump {
	struct doca_pe *pe;
	int stop_at;
	atomic_int go;
};

static void *rx_pump_run(void *arg)
{
	struct rx_pump *pump = arg;
	double deadline = t_now() + 10.0;

	while (!atomic_load(&pump->go) && t_now() < deadline) {
		struct timespec us = {0, 100000};

		nanosleep(&us, NULL);
	}
	while (g_rx_n < pump->stop_at && t_now() < deadline)
		if (!doca_pe_progress(pump->pe)) {
			struct timespec us = {0, 100000};

			nanosleep(&us, NULL); /* a receiver with nothing to do yields */
		}
	return NULL;
}

/*
 * Allocate a batch of n new frames (task user data 1000 + id), submit it; returns the batch
 * and the first frame id.
 */
static struct doca_task_batch *batch_send(struct doca_eth_txq *txq, uint16_t n, uint64_t ud,
					  uint32_t *first_p)
{
	struct doca_task_batch *b = NULL;
	struct doca_buf **pkts = NULL;
	union doca_data *uds = NULL;
	uint32_t id = 0;

	T_OK(doca_eth_txq_task_batch_send_allocate(txq, n, (union doca_data){.u64 = ud}, &pkts,
						   &uds, &b));
	if (b == NULL)
		return NULL;
	for (uint16_t i = 0; i < n; i++) {
		T_TRUE(pkts[i] == NULL && uds[i].u64 == 0); /* fresh arrays */
		pkts[i] = frame_new(&id);
		uds[i].u64 = 1000 + id;
		if (i == 0 && first_p != NULL)
			*first_p = id;
	}
	T_OK(doca_task_batch_submit(b));
	return b;
}

/* The event of a batch that sent frames first..first+n-1, all fine. */
static void check_batch_event(const struct event *e, struct doca_task_batch *b, uint16_t n,
			      uint64_t ud, uint32_t first)
{
	T_EQ_INT(e->is_batch, 1);
	T_EQ_INT(e->ok, 1);
	T_TRUE(e->b == b);
	T_EQ_INT(e->n, n);
	T_EQ_INT(e->ud, ud);
	T_EQ_INT(e->ctx_ud, CTX_UD);
	for (uint16_t i = 0; i < n; i++) {
		if (e->task_ud[i] != 1000 + first + i || e->pkts[i] != g_send[first + i] ||
		    e->status[i] != DOCA_SUCCESS) {
			t_fail("batch of %u, task %u: user data %llu, buffer %p, status %s", n, i,
			       (unsigned long long)e->task_ud[i], (void *)e->pkts[i],
			       doca_error_get_name(e->status[i]));
			break;
		}
	}
}

/* The receiver got exactly the ids first.. in order (from position *pos on). */
static void check_rx(int *pos, uint32_t first, int n)
{
	for (int k = 0; k < n; k++) {
		if (*pos + k >= g_rx_n) {
			t_fail("frame %u not received (%d received)", first + k, g_rx_n);
			break;
		}
		if (g_rx_ids[*pos + k] != first + (uint32_t)k) {
			t_fail("position %d: frame %u received, %u expected", *pos + k,
			       g_rx_ids[*pos + k], first + k);
			break;
		}
	}
	*pos += n;
}

static struct doca_devinfo *find_dev(struct doca_devinfo **list, uint32_t n, const char *name)
{
	struct doca_devinfo *d = t_find_dev(list, n, name);

	if (d == NULL)
		t_fail("loop device %s is not listed", name);
	return d;
}

/* Stop with two batches and a send task waiting behind a full wire no one drains. */
static void test_stop_pending(struct doca_pe *pe, struct doca_dev *dev_c, struct doca_dev *dev_d)
{
	struct doca_eth_txq *txq = NULL, *sink = NULL;
	struct doca_eth_txq_task_send *st = NULL;
	struct doca_task_batch *b1, *b2, *b3 = NULL;
	struct doca_buf **pkts = NULL;
	union doca_data *uds = NULL;
	struct sdp_eth_txq_counters tc;
	uint32_t first1 = 0, first2 = 0, id = 0;
	size_t inflight = 0;
	doca_error_t rc;
	int ev0 = g_nev;

	T_OK(doca_eth_txq_create(dev_c, 64, &txq));
	T_OK(doca_eth_txq_task_batch_send_set_conf(txq, DOCA_TASK_BATCH_MAX_TASKS_NUMBER_64, 3,
						   batch_ok, batch_err));
	T_OK(doca_eth_txq_task_send_set_conf(txq, send_ok, send_err, 2));
	T_OK(doca_ctx_set_user_data(doca_eth_txq_as_doca_ctx(txq),
				    (union doca_data){.u64 = CTX_UD}));
	T_OK(doca_pe_connect_ctx(pe, doca_eth_txq_as_doca_ctx(txq)));
	T_OK(doca_ctx_start(doca_eth_txq_as_doca_ctx(txq)));
	/* a send queue on the peer opens its port: the wire is up, but nothing drains it */
	T_OK(doca_eth_txq_create(dev_d, 8, &sink));
	T_OK(doca_eth_txq_task_batch_send_set_conf(sink, DOCA_TASK_BATCH_MAX_TASKS_NUMBER_16, 1,
						   batch_ok, batch_err));
	T_OK(doca_pe_connect_ctx(pe, doca_eth_txq_as_doca_ctx(sink)));
	T_OK(doca_ctx_start(doca_eth_txq_as_doca_ctx(sink)));

	b1 = batch_send(txq, 64, 21, &first1);
	T_OK(doca_eth_txq_task_send_allocate_init(txq, frame_new(&id), (union doca_data){.u64 = 22},
						  &st));
	T_OK(doca_task_submit(doca_eth_txq_task_send_as_doca_task(st)));
	b2 = batch_send(txq, 4, 23, &first2);
	/* the third batch is kept by the application: stop waits for it */
	T_OK(doca_eth_txq_task_batch_send_allocate(txq, 2, (union doca_data){.u64 = 24}, &pkts,
						   &uds, &b3));
	/* the wire takes STOP_DEPTH frames (the engine's thread sends them), then stays full */
	wait_txq_packets(pe, txq, STOP_DEPTH, &tc);
	progress_for(pe, 30);
	T_EQ_INT(g_nev, ev0); /* nothing completes: the wire stays full */
	T_OK(doca_ctx_get_num_inflight_tasks(doca_eth_txq_as_doca_ctx(txq), &inflight));
	T_EQ_INT(inflight, 3);
	T_OK(sdp_eth_txq_get_counters(txq, &tc));
	T_EQ_INT(tc.packets, STOP_DEPTH);

	rc = doca_ctx_stop(doca_eth_txq_as_doca_ctx(txq));
	T_EQ_INT(rc, DOCA_ERROR_IN_PROGRESS);
	progress_until(pe, &g_nev, ev0 + 3);
	T_EQ_INT(g_nev, ev0 + 3);
	if (g_nev == ev0 + 3) {
		const struct event *e1 = &g_ev[ev0], *e2 = &g_ev[ev0 + 1], *e3 = &g_ev[ev0 + 2];
		int good = 0, failed = 0;

		/* in submission order, all through the error callbacks */
		T_TRUE(e1->is_batch && e1->b == b1 && e1->ud == 21 && !e1->ok && e1->n == 64);
		for (int i = 0; i < 64; i++) {
			if (i < STOP_DEPTH && e1->status[i] == DOCA_SUCCESS)
				good++;
			if (i >= STOP_DEPTH && e1->status[i] == DOCA_ERROR_IO_FAILED)
				failed++;
			T_TRUE(e1->task_ud[i] == 1000 + first1 + (uint32_t)i);
		}
		T_EQ_INT(good, STOP_DEPTH);
		T_EQ_INT(failed, 64 - STOP_DEPTH);
		T_TRUE(!e2->is_batch && e2->ud == 22 && !e2->ok);
		T_EQ_INT(e2->status[0], DOCA_ERROR_IO_FAILED);
		T_TRUE(e3->is_batch && e3->b == b2 && e3->ud == 23 && !e3->ok && e3->n == 4);
		for (int i = 0; i < 4; i++)
			T_EQ_INT(e3->status[i], DOCA_ERROR_IO_FAILED);
	}
	T_OK(sdp_eth_txq_get_counters(txq, &tc));
	T_EQ_INT(tc.packets, STOP_DEPTH);
	T_EQ_INT(tc.errors, 64 - STOP_DEPTH + 1 + 4);

	/* STOPPING: the kept batch cannot be submitted, no batch can be allocated */
	if (b3 != NULL) {
		pkts[0] = g_send[first2];
		pkts[1] = g_send[first2 + 1];
		T_STATUS(doca_task_batch_submit(b3), DOCA_ERROR_BAD_STATE);
	}
	T_STATUS(doca_eth_txq_task_batch_send_allocate(txq, 1, (union doca_data){0}, &pkts, &uds,
						       &b3),
		 DOCA_ERROR_BAD_STATE);
	progress_for(pe, 10);
	{
		enum doca_ctx_states st_now = DOCA_CTX_STATE_IDLE;

		T_OK(doca_ctx_get_state(doca_eth_txq_as_doca_ctx(txq), &st_now));
		T_EQ_INT(st_now, DOCA_CTX_STATE_STOPPING); /* the kept batch holds it */
	}
	doca_task_batch_free(b3);
	wait_idle(pe, doca_eth_txq_as_doca_ctx(txq));
	/* after stop */
	T_STATUS(doca_eth_txq_task_batch_send_allocate(txq, 1, (union doca_data){0}, &pkts, &uds,
						       &b3),
		 DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_task_batch_submit(b3), DOCA_ERROR_BAD_STATE); /* freed (pooled) */

	T_OK(doca_ctx_stop(doca_eth_txq_as_doca_ctx(sink)));
	T_OK(doca_eth_txq_destroy(sink));
	T_OK(doca_eth_txq_destroy(txq));
}

int main(void)
{
	struct doca_devinfo **list = NULL, *da, *db, *dc, *dd;
	struct doca_dev *dev_a = NULL, *dev_b = NULL, *dev_c = NULL, *dev_d = NULL;
	struct doca_eth_rxq *rxq = NULL;
	struct doca_eth_txq *txq = NULL, *txq16 = NULL, *txqc = NULL;
	struct doca_eth_rxq_task_recv *rt = NULL;
	struct doca_eth_txq_task_send *st = NULL;
	struct doca_task_batch *b = NULL, *b1, *b16, *b128, *held[4];
	struct doca_buf **pkts = NULL, *shortbuf = NULL;
	union doca_data *uds = NULL;
	struct sdp_eth_txq_counters tc;
	struct doca_pe *pe = NULL;
	char decls[512], na[32], nb[32], nc[32], nd[32];
	uint32_t n = 0, f1 = 0, f16 = 0, f128 = 0, id = 0;
	int pos = 0, ev, sent = 0;

	snprintf(na, sizeof(na), "ba%d", (int)getpid());
	snprintf(nb, sizeof(nb), "bb%d", (int)getpid());
	snprintf(nc, sizeof(nc), "bc%d", (int)getpid());
	snprintf(nd, sizeof(nd), "bd%d", (int)getpid());
	snprintf(decls, sizeof(decls),
		 "loop:name=%s,peer=%s,depth=%d;loop:name=%s,peer=%s,depth=%d;"
		 "loop:name=%s,peer=%s,depth=%d;loop:name=%s,peer=%s,depth=%d",
		 na, nb, WIRE_DEPTH, nb, na, WIRE_DEPTH, nc, nd, STOP_DEPTH, nd, nc, STOP_DEPTH);
	setenv("SOFTDPU_DEVICES", decls, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	t_log_capture();

	T_OK(doca_devinfo_create_list(&list, &n));
	if (list == NULL)
		T_DONE();
	da = find_dev(list, n, na);
	db = find_dev(list, n, nb);
	dc = find_dev(list, n, nc);
	dd = find_dev(list, n, nd);
	if (da == NULL || db == NULL || dc == NULL || dd == NULL)
		T_DONE();
	T_OK(doca_dev_open(da, &dev_a));
	T_OK(doca_dev_open(db, &dev_b));
	T_OK(doca_dev_open(dc, &dev_c));
	T_OK(doca_dev_open(dd, &dev_d));

	T_OK(doca_mmap_create(&g_mmap));
	T_OK(doca_mmap_set_memrange(g_mmap, g_mem, sizeof(g_mem)));
	T_OK(doca_mmap_add_dev(g_mmap, dev_a));
	T_OK(doca_mmap_add_dev(g_mmap, dev_b));
	T_OK(doca_mmap_add_dev(g_mmap, dev_c));
	T_OK(doca_mmap_start(g_mmap));
	T_OK(doca_buf_inventory_create(NSEND + NRECV + 4, &g_inv));
	T_OK(doca_buf_inventory_start(g_inv));
	T_OK(doca_pe_create(&pe));

	/* ---- the receiver: NRECV tasks that go on receiving ---- */
	T_OK(doca_eth_rxq_create(dev_b, NRECV, SLOT, &rxq));
	T_OK(doca_eth_rxq_set_pkt_buf(rxq, g_mmap, 0, 4096));
	T_OK(doca_eth_rxq_task_recv_set_conf(rxq, recv_ok, recv_err, NRECV));
	T_OK(doca_pe_connect_ctx(pe, doca_eth_rxq_as_doca_ctx(rxq)));
	T_OK(doca_ctx_start(doca_eth_rxq_as_doca_ctx(rxq)));
	for (int i = 0; i < NRECV; i++) {
		T_OK(doca_buf_inventory_buf_get_by_addr(
			g_inv, g_mmap, g_mem + (size_t)(NSEND + i) * SLOT, SLOT, &g_recv_bufs[i]));
		T_OK(doca_eth_rxq_task_recv_allocate_init(rxq, g_recv_bufs[i], (union doca_data){0},
							  &rt));
		T_OK(doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(rt)));
	}

	/* ---- configuration ---- */
	T_OK(doca_eth_txq_create(dev_a, 256, &txq));
	T_STATUS(doca_eth_txq_task_batch_send_set_conf(NULL, DOCA_TASK_BATCH_MAX_TASKS_NUMBER_16, 1,
						       batch_ok, batch_err),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_txq_task_batch_send_set_conf(
			 txq, (enum doca_task_batch_max_tasks_number)4, 1, batch_ok, batch_err),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_txq_task_batch_send_set_conf(txq, DOCA_TASK_BATCH_MAX_TASKS_NUMBER_16, 0,
						       batch_ok, batch_err),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_txq_task_batch_send_set_conf(txq, DOCA_TASK_BATCH_MAX_TASKS_NUMBER_16, 1,
						       NULL, batch_err),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_txq_task_batch_send_set_conf(txq, DOCA_TASK_BATCH_MAX_TASKS_NUMBER_16, 1,
						       batch_ok, NULL),
		 DOCA_ERROR_INVALID_VALUE);
	/* a second call replaces the first (size and count) */
	T_OK(doca_eth_txq_task_batch_send_set_conf(txq, DOCA_TASK_BATCH_MAX_TASKS_NUMBER_32, 1,
						   batch_ok, batch_err));
	T_OK(doca_eth_txq_task_batch_send_set_conf(txq, DOCA_TASK_BATCH_MAX_TASKS_NUMBER_128, 4,
						   batch_ok, batch_err));
	T_OK(doca_eth_txq_task_send_set_conf(txq, send_ok, send_err, 4));
	T_OK(doca_ctx_set_user_data(doca_eth_txq_as_doca_ctx(txq),
				    (union doca_data){.u64 = CTX_UD}));
	T_OK(doca_pe_connect_ctx(pe, doca_eth_txq_as_doca_ctx(txq)));
	/* before start */
	T_STATUS(doca_eth_txq_task_batch_send_allocate(txq, 1, (union doca_data){0}, &pkts, &uds,
						       &b),
		 DOCA_ERROR_BAD_STATE);
	T_TRUE(b == NULL);
	T_STATUS(doca_task_batch_submit(NULL), DOCA_ERROR_INVALID_VALUE);
	doca_task_batch_free(NULL); /* ignored */
	T_OK(doca_ctx_start(doca_eth_txq_as_doca_ctx(txq)));
	T_STATUS(doca_eth_txq_task_batch_send_set_conf(txq, DOCA_TASK_BATCH_MAX_TASKS_NUMBER_16, 1,
						       batch_ok, batch_err),
		 DOCA_ERROR_BAD_STATE);
	/* bad allocations */
	T_STATUS(doca_eth_txq_task_batch_send_allocate(txq, 0, (union doca_data){0}, &pkts, &uds,
						       &b),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_txq_task_batch_send_allocate(txq, 129, (union doca_data){0}, &pkts, &uds,
						       &b),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(
		doca_eth_txq_task_batch_send_allocate(txq, 1, (union doca_data){0}, NULL, &uds, &b),
		DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_txq_task_batch_send_allocate(txq, 1, (union doca_data){0}, &pkts, &uds,
						       NULL),
		 DOCA_ERROR_INVALID_VALUE);
	T_TRUE(b == NULL);

	/* ---- batches of 1, 16 and 128 (the wire holds 16: the big one waits and is retried) */
	g_keep = 1;
	b1 = batch_send(txq, 1, 11, &f1);
	b16 = batch_send(txq, 16, 12, &f16);
	b128 = batch_send(txq, 128, 13, &f128);
	/* submitted: a second submission and a free are refused, nothing changes */
	T_STATUS(doca_task_batch_submit(b128), DOCA_ERROR_BAD_STATE);
	doca_task_batch_free(b128);
	progress_until(pe, &g_nev, 3);
	progress_until(pe, &g_rx_n, 145);
	T_EQ_INT(g_nev, 3);
	T_EQ_INT(g_rx_n, 145);
	T_EQ_INT(g_rx_bad, 0);
	if (g_nev == 3) {
		check_batch_event(&g_ev[0], b1, 1, 11, f1);
		check_batch_event(&g_ev[1], b16, 16, 12, f16);
		check_batch_event(&g_ev[2], b128, 128, 13, f128);
		/* the arrays the callback gets are the batch's own */
		T_TRUE(g_ev[2].pkt_array[127] == g_send[f128 + 127]);
		T_TRUE(g_ev[2].ud_array[127].u64 == 1000 + f128 + 127);
	}
	check_rx(&pos, f1, 145);
	sent += 145;
	/* all 4 batches of the queue: 3 held, one more, then NO_MEMORY */
	T_OK(doca_eth_txq_task_batch_send_allocate(txq, 2, (union doca_data){0}, &pkts, &uds,
						   &held[3]));
	T_STATUS(doca_eth_txq_task_batch_send_allocate(txq, 1, (union doca_data){0}, &pkts, &uds,
						       &b),
		 DOCA_ERROR_NO_MEMORY);
	doca_task_batch_free(held[3]);
	/* resubmitting a batch after its callback: same tasks_num, new frame */
	if (g_nev == 3) {
		g_ev[0].pkt_array[0] = frame_new(&id);
		g_ev[0].ud_array[0].u64 = 1000 + id;
		T_OK(doca_task_batch_submit(b1));
		progress_until(pe, &g_nev, 4);
		T_EQ_INT(g_nev, 4);
		if (g_nev == 4)
			check_batch_event(&g_ev[3], b1, 1, 11, id);
		progress_until(pe, &g_rx_n, sent + 1);
		check_rx(&pos, id, 1);
		sent++;
	}
	doca_task_batch_free(b1);
	doca_task_batch_free(b16);
	doca_task_batch_free(b128);
	/* freed: a second free is ignored, a submission refused */
	doca_task_batch_free(b128);
	T_STATUS(doca_task_batch_submit(b128), DOCA_ERROR_BAD_STATE);
	g_keep = 0;

	/* ---- NO_MEMORY past num_task_batches (4) ---- */
	for (int i = 0; i < 4; i++) {
		held[i] = NULL;
		T_OK(doca_eth_txq_task_batch_send_allocate(txq, 3, (union doca_data){0}, &pkts,
							   &uds, &held[i]));
	}
	T_STATUS(doca_eth_txq_task_batch_send_allocate(txq, 3, (union doca_data){0}, &pkts, &uds,
						       &b),
		 DOCA_ERROR_NO_MEMORY);
	doca_task_batch_free(held[1]);
	T_OK(doca_eth_txq_task_batch_send_allocate(txq, 3, (union doca_data){0}, &pkts, &uds,
						   &held[1]));
	for (int i = 0; i < 4; i++)
		doca_task_batch_free(held[i]);

	/* ---- batches and single tasks back to back keep their order ---- */
	{
		static const int plan[] = {8, 0, 30, 0, 0, 64, 0, 1}; /* 0: a single send task */
		uint32_t first = g_next_id;
		int nplan = (int)(sizeof(plan) / sizeof(plan[0])), frames = 0;

		ev = g_nev;
		for (int k = 0; k < nplan; k++) {
			if (plan[k] > 0) {
				(void)batch_send(txq, (uint16_t)plan[k], 100 + (uint64_t)k, NULL);
				frames += plan[k];
				continue;
			}
			T_OK(doca_eth_txq_task_send_allocate_init(
				txq, frame_new(&id), (union doca_data){.u64 = 100 + (uint64_t)k},
				&st));
			T_OK(doca_task_submit(doca_eth_txq_task_send_as_doca_task(st)));
			frames++;
		}
		progress_until(pe, &g_nev, ev + nplan);
		progress_until(pe, &g_rx_n, sent + frames);
		T_EQ_INT(g_nev, ev + nplan);
		for (int k = 0; k < nplan && ev + k < g_nev; k++) {
			T_EQ_INT(g_ev[ev + k].ud, 100 + k);
			T_EQ_INT(g_ev[ev + k].ok, 1);
			T_EQ_INT(g_ev[ev + k].is_batch, plan[k] > 0);
		}
		T_EQ_INT(g_rx_n, sent + frames);
		check_rx(&pos, first, frames);
		sent += frames;
	}

	/*
	 * ---- event mode: a batch of 128 behind the 16-frame wire, sent from a queue on a PE of
	 * its own whose program sleeps on the PE's handle between progress calls. First the
	 * receiver's PE is left alone until the wire is full and the receive tasks are used up
	 * (the backlog then waits with nothing to wake it but the queue's retry timer); then a
	 * thread progresses the receiver while the program sleeps: the handle must fire while the
	 * backlog waits for room, never a 2 s poll without a wake-up ----
	 */
	{
		struct doca_eth_txq *txq2 = NULL;
		struct doca_pe *pe2 = NULL;
		doca_notification_handle_t h;
		struct rx_pump pump = {.pe = NULL, .stop_at = 0};
		pthread_t thr;
		double deadline;
		uint32_t first = 0;
		int missed = 0, sleeps = 0;

		ev = g_nev;
		T_OK(doca_pe_create(&pe2));
		T_OK(doca_eth_txq_create(dev_a, 256, &txq2));
		T_OK(doca_eth_txq_task_batch_send_set_conf(
			txq2, DOCA_TASK_BATCH_MAX_TASKS_NUMBER_128, 1, batch_ok, batch_err));
		T_OK(doca_ctx_set_user_data(doca_eth_txq_as_doca_ctx(txq2),
					    (union doca_data){.u64 = CTX_UD}));
		T_OK(doca_pe_connect_ctx(pe2, doca_eth_txq_as_doca_ctx(txq2)));
		T_OK(doca_ctx_start(doca_eth_txq_as_doca_ctx(txq2)));
		T_OK(doca_pe_get_notification_handle(pe2, &h));
		(void)batch_send(txq2, 128, 77, &first);
		/* the receiver not progressed: pushes stop once the wire and its tasks are full */
		deadline = t_now() + 10.0;
		for (int quiet = 0; quiet < 200 && t_now() < deadline;)
			quiet = doca_pe_progress(pe2) ? 0 : quiet + 1;
		T_EQ_INT(g_nev, ev); /* the batch waits */
		pump.pe = pe;
		pump.stop_at = sent + 128;
		atomic_init(&pump.go, 0);
		T_EQ_INT(pthread_create(&thr, NULL, rx_pump_run, &pump), 0);
		while (g_nev == ev && t_now() < deadline) {
			struct pollfd p = {.fd = (int)h, .events = POLLIN};

			/* the first sleep starts before the receiver drains anything */
			if (sleeps > 0 && doca_pe_progress(pe2))
				continue;
			T_OK(doca_pe_request_notification(pe2));
			sleeps++;
			atomic_store(&pump.go, 1);
			if (poll(&p, 1, 2000) == 0)
				missed++;
			doca_pe_clear_notification(pe2, h);
		}
		atomic_store(&pump.go, 1); /* (a loop that ended early) */
		T_EQ_INT(pthread_join(thr, NULL), 0);
		if (missed != 0)
			t_fail("event mode: %d of %d sleeps lasted 2 s without a wake-up while the "
			       "backlog waited for the wire",
			       missed, sleeps);
		T_EQ_INT(g_nev, ev + 1);
		if (g_nev == ev + 1)
			T_EQ_INT(g_ev[ev].ud, 77);
		progress_until(pe, &g_rx_n, sent + 128);
		T_EQ_INT(g_rx_n, sent + 128);
		check_rx(&pos, first, 128);
		sent += 128;
		T_OK(doca_ctx_stop(doca_eth_txq_as_doca_ctx(txq2)));
		wait_idle(pe2, doca_eth_txq_as_doca_ctx(txq2));
		T_OK(doca_eth_txq_destroy(txq2));
		T_OK(doca_pe_destroy(pe2));
	}

	/* ---- a frame too short and a missing buffer fail alone ---- */
	{
		uint32_t ids[5];

		ev = g_nev;
		T_OK(doca_buf_inventory_buf_get_by_data(g_inv, g_mmap, g_mem + (NSEND - 1) * SLOT,
							10, &shortbuf));
		T_OK(doca_eth_txq_task_batch_send_allocate(txq, 5, (union doca_data){.u64 = 31},
							   &pkts, &uds, &b));
		for (int i = 0; i < 5; i++) {
			pkts[i] = frame_new(&ids[i]);
			uds[i].u64 = 500 + (uint64_t)i;
		}
		T_OK(doca_buf_dec_refcount(pkts[2], NULL));
		g_send[ids[2]] = NULL;
		pkts[2] = shortbuf; /* 10 bytes: no Ethernet header */
		pkts[4] = NULL;
		T_OK(doca_task_batch_submit(b));
		progress_until(pe, &g_nev, ev + 1);
		progress_until(pe, &g_rx_n, sent + 3);
		T_EQ_INT(g_nev, ev + 1);
		if (g_nev == ev + 1) {
			const struct event *e = &g_ev[ev];

			T_TRUE(e->is_batch && !e->ok && e->n == 5 && e->ud == 31);
			T_EQ_INT(e->status[0], DOCA_SUCCESS);
			T_EQ_INT(e->status[1], DOCA_SUCCESS);
			T_EQ_INT(e->status[2], DOCA_ERROR_INVALID_VALUE);
			T_EQ_INT(e->status[3], DOCA_SUCCESS);
			T_EQ_INT(e->status[4], DOCA_ERROR_INVALID_VALUE);
			T_TRUE(e->pkts[2] == shortbuf && e->pkts[4] == NULL);
			for (int i = 0; i < 5; i++)
				T_EQ_INT(e->task_ud[i], 500 + i);
		}
		T_EQ_INT(g_rx_n, sent + 3);
		check_rx(&pos, ids[0], 2);
		check_rx(&pos, ids[3], 1);
		sent += 3;
		T_LOGGED("task 2 needs a frame of 14 to", "(has 10)");
	}
	T_OK(sdp_eth_txq_get_counters(txq, &tc));
	T_EQ_INT(tc.packets, sent - 128); /* the event-mode batch went through txq2 */
	T_EQ_INT(tc.errors, 2);

	/* ---- checksum offloads: a UDP frame between two others in a batch ---- */
	{
		uint32_t first = 0;

		T_OK(doca_eth_txq_create(dev_a, 16, &txqc));
		T_OK(doca_eth_txq_set_l3_chksum_offload(txqc, 1));
		T_OK(doca_eth_txq_set_l4_chksum_offload(txqc, 1));
		T_OK(doca_eth_txq_task_batch_send_set_conf(
			txqc, DOCA_TASK_BATCH_MAX_TASKS_NUMBER_16, 1, batch_ok, batch_err));
		T_OK(doca_pe_connect_ctx(pe, doca_eth_txq_as_doca_ctx(txqc)));
		T_OK(doca_ctx_start(doca_eth_txq_as_doca_ctx(txqc)));
		ev = g_nev;
		g_udp_id = g_next_id + 1;
		b = batch_send(txqc, 3, 51, &first);
		progress_until(pe, &g_nev, ev + 1);
		progress_until(pe, &g_rx_n, sent + 3);
		T_EQ_INT(g_nev, ev + 1);
		T_TRUE(g_nev == ev + 1 && g_ev[ev].ok && g_ev[ev].n == 3 && g_ev[ev].ud == 51);
		T_EQ_INT(g_udp_seen, 1);
		check_rx(&pos, first, 3);
		sent += 3;
		/* the sender's buffer of the UDP frame is as the application wrote it */
		T_TRUE(g_mem[(size_t)g_udp_id * SLOT + 24] == 0 &&
		       g_mem[(size_t)g_udp_id * SLOT + 25] == 0 &&
		       g_mem[(size_t)g_udp_id * SLOT + 40] == 0 &&
		       g_mem[(size_t)g_udp_id * SLOT + 41] == 0);
		T_OK(doca_ctx_stop(doca_eth_txq_as_doca_ctx(txqc)));
		T_OK(doca_eth_txq_destroy(txqc));
	}

	/* ---- a queue of batches of at most 16, without single send tasks ---- */
	T_OK(doca_eth_txq_create(dev_a, 16, &txq16));
	T_OK(doca_eth_txq_task_batch_send_set_conf(txq16, DOCA_TASK_BATCH_MAX_TASKS_NUMBER_16, 1,
						   batch_ok, batch_err));
	T_OK(doca_pe_connect_ctx(pe, doca_eth_txq_as_doca_ctx(txq16)));
	T_OK(doca_ctx_start(doca_eth_txq_as_doca_ctx(txq16)));
	T_STATUS(doca_eth_txq_task_batch_send_allocate(txq16, 17, (union doca_data){0}, &pkts, &uds,
						       &b),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_txq_task_send_allocate_init(txq16, g_send[0], (union doca_data){0}, &st),
		 DOCA_ERROR_BAD_STATE); /* single send tasks are not configured */
	{
		uint32_t first = 0;

		ev = g_nev;
		b = batch_send(txq16, 16, 41, &first);
		T_STATUS(doca_eth_txq_task_batch_send_allocate(txq16, 1, (union doca_data){0},
							       &pkts, &uds, &b),
			 DOCA_ERROR_NO_MEMORY);
		progress_until(pe, &g_nev, ev + 1);
		progress_until(pe, &g_rx_n, sent + 16);
		T_EQ_INT(g_nev, ev + 1);
		T_TRUE(g_nev == ev + 1 && g_ev[ev].ok && g_ev[ev].n == 16 && g_ev[ev].ud == 41);
		check_rx(&pos, first, 16);
		sent += 16;
	}
	T_OK(doca_ctx_stop(doca_eth_txq_as_doca_ctx(txq16)));
	T_OK(doca_eth_txq_destroy(txq16));

	test_stop_pending(pe, dev_c, dev_d);

	T_OK(doca_ctx_stop(doca_eth_txq_as_doca_ctx(txq)));
	wait_idle(pe, doca_eth_txq_as_doca_ctx(txq));
	T_OK(doca_eth_txq_destroy(txq));
	{
		int rc_stop = doca_ctx_stop(doca_eth_rxq_as_doca_ctx(rxq));

		T_TRUE(rc_stop == DOCA_SUCCESS || rc_stop == DOCA_ERROR_IN_PROGRESS);
	}
	wait_idle(pe, doca_eth_rxq_as_doca_ctx(rxq));
	T_OK(doca_eth_rxq_destroy(rxq));

	for (int i = 0; i < NRECV; i++)
		T_OK(doca_buf_dec_refcount(g_recv_bufs[i], NULL));
	for (uint32_t i = 0; i < g_next_id; i++)
		if (g_send[i] != NULL)
			T_OK(doca_buf_dec_refcount(g_send[i], NULL));
	T_OK(doca_buf_dec_refcount(shortbuf, NULL));
	T_OK(doca_pe_destroy(pe));
	T_OK(doca_buf_inventory_destroy(g_inv));
	T_OK(doca_mmap_destroy(g_mmap));
	T_OK(doca_dev_close(dev_d));
	T_OK(doca_dev_close(dev_c));
	T_OK(doca_dev_close(dev_b));
	T_OK(doca_dev_close(dev_a));
	T_OK(doca_devinfo_destroy_list(list));
	T_DONE();
}
