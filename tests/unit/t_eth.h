/*
 * Helpers the libdoca_eth backend tests share (test_eth_gen, test_eth_pcap, test_eth_steer,
 * tests/integration/test_eth_afpacket): one mmap and buffer inventory over a test's memory, a
 * receive queue of REGULAR tasks that re-submits each task from its completion callback and hands
 * every frame to the test, a send queue that copies frames into a small pool of slots, and
 * bounded progress loops that sleep when the PE has nothing to do.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef T_ETH_H_
#define T_ETH_H_

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
#include "t_helpers.h"

#define T_ETH_SLOT 2048u /* bytes of one buffer (a frame up to 1514 bytes and room to spare) */

static __attribute__((unused)) double t_eth_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One doca_pe_progress; 200 us of sleep when it did nothing. */
static __attribute__((unused)) void t_eth_step(struct doca_pe *pe)
{
	if (!doca_pe_progress(pe)) {
		struct timespec nap = {0, 200 * 1000};

		nanosleep(&nap, NULL);
	}
}

/* Progress until *counter reaches want or timeout_s pass; returns 1 when it got there. */
static __attribute__((unused)) int t_eth_progress_until(struct doca_pe *pe, const uint64_t *counter,
							uint64_t want, double timeout_s)
{
	double end = t_eth_now() + timeout_s;

	while (*counter < want) {
		if (t_eth_now() > end)
			return 0;
		t_eth_step(pe);
	}
	return 1;
}

/* Progress for secs seconds (lets late, unexpected frames show up). */
static __attribute__((unused)) void t_eth_progress_for(struct doca_pe *pe, double secs)
{
	double end = t_eth_now() + secs;

	while (t_eth_now() < end)
		t_eth_step(pe);
}

/* Progress until ctx is IDLE (after doca_ctx_stop), at most 5 s. */
static __attribute__((unused)) void t_eth_wait_idle(struct doca_pe *pe, struct doca_ctx *ctx)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;
	double end = t_eth_now() + 5;

	while (t_eth_now() < end) {
		T_OK(doca_ctx_get_state(ctx, &st));
		if (st == DOCA_CTX_STATE_IDLE)
			return;
		t_eth_step(pe);
	}
	t_fail("context did not reach IDLE within 5 s (state %d)", (int)st);
}

/* ---- memory: one started mmap and a buffer inventory over an aligned allocation ------------- */

struct t_eth_mem {
	uint8_t *base;
	size_t size;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
};

/* size bytes, registered for the ndevs devices; 0 on success (failures are reported). */
static __attribute__((unused)) int t_eth_mem_init(struct t_eth_mem *m, size_t size,
						  struct doca_dev *const *devs, int ndevs,
						  size_t nb_bufs)
{
	memset(m, 0, sizeof(*m));
	m->size = (size + 4095) & ~(size_t)4095;
	m->base = aligned_alloc(4096, m->size);
	if (m->base == NULL) {
		t_fail("out of memory (%zu bytes)", m->size);
		return -1;
	}
	memset(m->base, 0, m->size);
	T_OK(doca_mmap_create(&m->mmap));
	if (m->mmap == NULL)
		return -1;
	T_OK(doca_mmap_set_memrange(m->mmap, m->base, m->size));
	for (int i = 0; i < ndevs; i++)
		T_OK(doca_mmap_add_dev(m->mmap, devs[i]));
	T_OK(doca_mmap_start(m->mmap));
	T_OK(doca_buf_inventory_create(nb_bufs, &m->inv));
	if (m->inv == NULL)
		return -1;
	T_OK(doca_buf_inventory_start(m->inv));
	return 0;
}

static __attribute__((unused)) void t_eth_mem_fini(struct t_eth_mem *m)
{
	if (m->inv != NULL)
		T_OK(doca_buf_inventory_destroy(m->inv));
	if (m->mmap != NULL)
		T_OK(doca_mmap_destroy(m->mmap));
	free(m->base);
	memset(m, 0, sizeof(*m));
}

/* ---- a receive queue of REGULAR tasks, each re-submitted from its completion callback ------- */

struct t_eth_rx;
typedef void (*t_eth_frame_func_t)(struct t_eth_rx *rx, const uint8_t *frame, size_t len);

struct t_eth_rx {
	struct doca_eth_rxq *rxq;
	struct doca_pe *pe;
	struct doca_buf **bufs;
	uint32_t nb_tasks;
	int resubmit;		     /* 1: re-submit each task after its frame is handled */
	t_eth_frame_func_t on_frame; /* called for each received frame (may be NULL) */
	void *user;		     /* the test's own */
	uint64_t received;	     /* successful completions */
	uint64_t errors;	     /* error completions other than the stop flush */
	uint64_t flushed;	     /* tasks completed with IO_FAILED (the stop flush) */
	uint64_t resubmit_failed;    /* doca_task_submit refusals from the callback */
	doca_error_t last_err;
	uint8_t *l3_ok, *l4_ok; /* when set: each received frame's checksum verdicts, in order */
	uint32_t verdicts_cap;	/* entries of l3_ok and l4_ok */
};

static void t_eth_rx_ok(struct doca_eth_rxq_task_recv *task, union doca_data task_user_data,
			union doca_data ctx_user_data)
{
	struct t_eth_rx *rx = task_user_data.ptr;
	struct doca_task *t = doca_eth_rxq_task_recv_as_doca_task(task);
	struct doca_buf *pkt = NULL;
	void *data = NULL;
	size_t len = 0;

	(void)ctx_user_data;
	rx->received++;
	if (doca_eth_rxq_task_recv_get_pkt(task, &pkt) != DOCA_SUCCESS || pkt == NULL ||
	    doca_buf_get_data(pkt, &data) != DOCA_SUCCESS ||
	    doca_buf_get_data_len(pkt, &len) != DOCA_SUCCESS) {
		t_fail("a completed receive task has no readable packet buffer");
		doca_task_free(t);
		return;
	}
	if (rx->l3_ok != NULL && rx->received <= rx->verdicts_cap) {
		T_OK(doca_eth_rxq_task_recv_get_l3_ok(task, &rx->l3_ok[rx->received - 1]));
		T_OK(doca_eth_rxq_task_recv_get_l4_ok(task, &rx->l4_ok[rx->received - 1]));
	}
	if (rx->on_frame != NULL)
		rx->on_frame(rx, data, len);
	if (!rx->resubmit) {
		doca_task_free(t);
		return;
	}
	T_OK(doca_buf_reset_data_len(pkt));
	if (doca_task_submit(t) != DOCA_SUCCESS) {
		rx->resubmit_failed++;
		doca_task_free(t);
	}
}

static void t_eth_rx_err(struct doca_eth_rxq_task_recv *task, union doca_data task_user_data,
			 union doca_data ctx_user_data)
{
	struct t_eth_rx *rx = task_user_data.ptr;
	struct doca_task *t = doca_eth_rxq_task_recv_as_doca_task(task);
	doca_error_t st = doca_task_get_status(t);

	(void)ctx_user_data;
	if (st == DOCA_ERROR_IO_FAILED) {
		rx->flushed++;
	} else {
		rx->errors++;
		rx->last_err = st;
	}
	doca_task_free(t);
}

/*
 * Create the queue on dev (IDLE, connected to pe), with nb_tasks tasks over consecutive
 * T_ETH_SLOT buffers of m starting at byte offset off. 0 on success.
 */
static __attribute__((unused)) int t_eth_rx_init(struct t_eth_rx *rx, struct doca_pe *pe,
						 struct doca_dev *dev, struct t_eth_mem *m,
						 size_t off, uint32_t nb_tasks,
						 uint32_t max_packet_size)
{
	memset(rx, 0, sizeof(*rx));
	rx->pe = pe;
	rx->nb_tasks = nb_tasks;
	rx->resubmit = 1;
	rx->bufs = calloc(nb_tasks, sizeof(*rx->bufs));
	if (rx->bufs == NULL || off + (size_t)nb_tasks * T_ETH_SLOT > m->size) {
		t_fail("receive queue of %u tasks does not fit", nb_tasks);
		return -1;
	}
	for (uint32_t i = 0; i < nb_tasks; i++)
		T_OK(doca_buf_inventory_buf_get_by_addr(m->inv, m->mmap,
							m->base + off + (size_t)i * T_ETH_SLOT,
							T_ETH_SLOT, &rx->bufs[i]));
	T_OK(doca_eth_rxq_create(dev, nb_tasks, max_packet_size, &rx->rxq));
	if (rx->rxq == NULL)
		return -1;
	T_OK(doca_eth_rxq_set_type(rx->rxq, DOCA_ETH_RXQ_TYPE_REGULAR));
	T_OK(doca_eth_rxq_task_recv_set_conf(rx->rxq, t_eth_rx_ok, t_eth_rx_err, nb_tasks));
	T_OK(doca_pe_connect_ctx(pe, doca_eth_rxq_as_doca_ctx(rx->rxq)));
	return 0;
}

/* Start the queue and submit every task. */
static __attribute__((unused)) void t_eth_rx_start(struct t_eth_rx *rx)
{
	T_OK(doca_ctx_start(doca_eth_rxq_as_doca_ctx(rx->rxq)));
	for (uint32_t i = 0; i < rx->nb_tasks; i++) {
		struct doca_eth_rxq_task_recv *t = NULL;

		if (rx->bufs[i] == NULL)
			continue;
		T_OK(doca_eth_rxq_task_recv_allocate_init(rx->rxq, rx->bufs[i],
							  (union doca_data){.ptr = rx}, &t));
		if (t != NULL)
			T_OK(doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(t)));
	}
}

/* Stop (the waiting tasks come back flushed), then destroy the queue and its buffers. */
static __attribute__((unused)) void t_eth_rx_fini(struct t_eth_rx *rx)
{
	if (rx->rxq != NULL) {
		struct doca_ctx *ctx = doca_eth_rxq_as_doca_ctx(rx->rxq);
		enum doca_ctx_states st = DOCA_CTX_STATE_IDLE;

		T_OK(doca_ctx_get_state(ctx, &st));
		if (st != DOCA_CTX_STATE_IDLE) {
			doca_error_t r = doca_ctx_stop(ctx);

			T_TRUE(r == DOCA_SUCCESS || r == DOCA_ERROR_IN_PROGRESS);
			t_eth_wait_idle(rx->pe, ctx);
		}
		T_OK(doca_eth_rxq_destroy(rx->rxq));
	}
	for (uint32_t i = 0; rx->bufs != NULL && i < rx->nb_tasks; i++)
		if (rx->bufs[i] != NULL)
			T_OK(doca_buf_dec_refcount(rx->bufs[i], NULL));
	free(rx->bufs);
	rx->bufs = NULL;
	rx->rxq = NULL;
}

/* ---- a send queue: frames are copied into one of nb_slots buffers, freed on completion ------ */

struct t_eth_tx {
	struct doca_eth_txq *txq;
	struct doca_pe *pe;
	struct t_eth_mem *mem;
	size_t off; /* byte offset of the slots in mem */
	uint32_t nb_slots;
	uint8_t *busy; /* per slot: a task owns it */
	uint64_t submitted;
	uint64_t completed; /* successful send completions */
	uint64_t errors;    /* error completions */
	doca_error_t last_err;
};

/* A send task is done: its buffer and the task go back (the slot was freed by the caller). */
static void t_eth_tx_release(struct doca_eth_txq_task_send *task)
{
	struct doca_buf *pkt = NULL;

	T_OK(doca_eth_txq_task_send_get_pkt(task, &pkt));
	if (pkt != NULL)
		T_OK(doca_buf_dec_refcount(pkt, NULL));
	doca_task_free(doca_eth_txq_task_send_as_doca_task(task));
}

static void t_eth_tx_ok(struct doca_eth_txq_task_send *task, union doca_data task_user_data,
			union doca_data ctx_user_data)
{
	struct t_eth_tx *tx = ctx_user_data.ptr;

	tx->completed++;
	tx->busy[task_user_data.u64] = 0;
	t_eth_tx_release(task);
}

static void t_eth_tx_err(struct doca_eth_txq_task_send *task, union doca_data task_user_data,
			 union doca_data ctx_user_data)
{
	struct t_eth_tx *tx = ctx_user_data.ptr;

	tx->errors++;
	tx->last_err = doca_task_get_status(doca_eth_txq_task_send_as_doca_task(task));
	tx->busy[task_user_data.u64] = 0;
	t_eth_tx_release(task);
}

/* Create and start a send queue on dev with nb_slots slots of m from byte offset off. */
static __attribute__((unused)) int t_eth_tx_init(struct t_eth_tx *tx, struct doca_pe *pe,
						 struct doca_dev *dev, struct t_eth_mem *m,
						 size_t off, uint32_t nb_slots)
{
	memset(tx, 0, sizeof(*tx));
	tx->pe = pe;
	tx->mem = m;
	tx->off = off;
	tx->nb_slots = nb_slots;
	tx->busy = calloc(nb_slots, 1);
	if (tx->busy == NULL || off + (size_t)nb_slots * T_ETH_SLOT > m->size) {
		t_fail("send queue of %u slots does not fit", nb_slots);
		return -1;
	}
	T_OK(doca_eth_txq_create(dev, nb_slots, &tx->txq));
	if (tx->txq == NULL)
		return -1;
	T_OK(doca_eth_txq_set_type(tx->txq, DOCA_ETH_TXQ_TYPE_REGULAR));
	T_OK(doca_eth_txq_task_send_set_conf(tx->txq, t_eth_tx_ok, t_eth_tx_err, nb_slots));
	T_OK(doca_ctx_set_user_data(doca_eth_txq_as_doca_ctx(tx->txq),
				    (union doca_data){.ptr = tx}));
	T_OK(doca_pe_connect_ctx(pe, doca_eth_txq_as_doca_ctx(tx->txq)));
	T_OK(doca_ctx_start(doca_eth_txq_as_doca_ctx(tx->txq)));
	return 0;
}

/*
 * Send one frame (copied into a free slot; waits, bounded by 5 s, for a slot to free up).
 * Returns 0 when the task was submitted.
 */
static __attribute__((unused)) int t_eth_tx_send(struct t_eth_tx *tx, const void *frame, size_t len)
{
	double end = t_eth_now() + 5;
	struct doca_eth_txq_task_send *task = NULL;
	struct doca_buf *buf = NULL;
	uint8_t *p;
	uint32_t s;

	for (;;) {
		for (s = 0; s < tx->nb_slots; s++)
			if (!tx->busy[s])
				break;
		if (s < tx->nb_slots)
			break;
		if (t_eth_now() > end) {
			t_fail("no send slot came free within 5 s");
			return -1;
		}
		t_eth_step(tx->pe);
	}
	if (len > T_ETH_SLOT) {
		t_fail("frame of %zu bytes is larger than a slot", len);
		return -1;
	}
	p = tx->mem->base + tx->off + (size_t)s * T_ETH_SLOT;
	memcpy(p, frame, len);
	T_OK(doca_buf_inventory_buf_get_by_data(tx->mem->inv, tx->mem->mmap, p, len, &buf));
	if (buf == NULL)
		return -1;
	T_OK(doca_eth_txq_task_send_allocate_init(tx->txq, buf, (union doca_data){.u64 = s},
						  &task));
	if (task == NULL) {
		doca_buf_dec_refcount(buf, NULL);
		return -1;
	}
	tx->busy[s] = 1;
	if (doca_task_submit(doca_eth_txq_task_send_as_doca_task(task)) != DOCA_SUCCESS) {
		t_fail("doca_task_submit of a send task failed");
		tx->busy[s] = 0;
		doca_task_free(doca_eth_txq_task_send_as_doca_task(task));
		doca_buf_dec_refcount(buf, NULL);
		return -1;
	}
	tx->submitted++;
	return 0;
}

/* Wait (bounded) for every submitted send to complete, then stop and destroy the queue. */
static __attribute__((unused)) void t_eth_tx_fini(struct t_eth_tx *tx)
{
	if (tx->txq != NULL) {
		struct doca_ctx *ctx = doca_eth_txq_as_doca_ctx(tx->txq);
		uint64_t done = 0;
		double end = t_eth_now() + 5;

		while ((done = tx->completed + tx->errors) < tx->submitted && t_eth_now() < end)
			t_eth_step(tx->pe);
		if (done < tx->submitted)
			t_fail("%llu of %llu sends did not complete within 5 s",
			       (unsigned long long)(tx->submitted - done),
			       (unsigned long long)tx->submitted);
		T_OK(doca_ctx_stop(ctx));
		t_eth_wait_idle(tx->pe, ctx);
		T_OK(doca_eth_txq_destroy(tx->txq));
	}
	free(tx->busy);
	tx->busy = NULL;
	tx->txq = NULL;
}

#endif /* T_ETH_H_ */
