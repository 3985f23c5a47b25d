/*
 * libdoca_eth: the receive queue's CPU data path (doca_eth_rxq_cpu_data_path.h): the consumers
 * of its ring on the doca_pe_progress thread (REGULAR receive tasks, MANAGED_MEMPOOL batch
 * events), event-mode arming, and the task and event API.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doca_buf.h"
#include "doca_buf_inventory.h"
#include "sdp_buf.h"
#include "sdp_eth_int.h"
#include "sdp_log.h"
#include "softdpu/sdp_pkt.h"

SDP_LOG_COMPONENT("eth_rxq");

#define RXQ_POLL_MAX 64u /* frames one progress call takes per pass */
#define RXQ_SPIN 64u	 /* sdp_ring_rx_poll's wait for an entry being overwritten */

/* ---- consumers (the doca_pe_progress thread) ----------------------------------------------- */

/* Slots released: wake the engine if it holds the backend for this ring. */
static void ring_released(struct doca_eth_rxq *rxq)
{
	if (rxq->overflow == SDP_ETH_OVERFLOW_BACKPRESSURE && sdp_ring_rx_is_full(rxq->ring))
		sdp_eth_dport_kick(rxq->dport);
}

/* REGULAR: one frame into the next waiting task. */

/*
 * What a NIC's completion says of a delivered frame's checksums, verified here since the
 * software NIC has no hardware to do it, when the application asks (a verification costs a pass
 * over the frame; a receive path that never asks pays nothing), from the frame as received: l3_ok 0 for IPv4 with a wrong header checksum, l4_ok 0
 * for TCP or UDP with a wrong checksum (a UDP checksum 0 over IPv4 is "none"), 1 otherwise (not
 * IP, other protocols, nothing found wrong). A checksum a local sender left to offload
 * (CSUM_PARTIAL: the frame never crossed a wire), a truncated frame and a first fragment (its
 * checksum covers bytes not here) are not checked. A backend's own verdict (CSUM_BAD) stands.
 */
static void csum_verdict(const uint8_t *f, uint32_t len, uint32_t flags, uint8_t *l3_ok,
			 uint8_t *l4_ok)
{
	struct sdp_pkt_info in;
	const uint8_t *l4;
	int ok = 1;

	*l3_ok = (flags & SDP_RING_CQE_F_L3_CSUM_BAD) == 0;
	*l4_ok = (flags & SDP_RING_CQE_F_L4_CSUM_BAD) == 0;
	if (f == NULL || (flags & (SDP_RING_CQE_F_CSUM_PARTIAL | SDP_RING_CQE_F_TRUNCATED)) != 0 ||
	    !sdp_pkt_parse(f, len, &in))
		return;
	if (in.ip_ver == 4) {
		if (!sdp_pkt_ip4_csum_ok(f + in.l3_off)) {
			*l3_ok = 0;
			return; /* a header not to be trusted: its lengths neither */
		}
		if ((sdp_pkt_get16(f + in.l3_off + SDP_PKT_IP4_FRAG) & SDP_PKT_IP4_MF) != 0)
			return;
	}
	if (in.l4_off == 0)
		return;
	l4 = f + in.l4_off;
	if (in.proto == SDP_PKT_PROTO_UDP && in.l4_len >= SDP_PKT_UDP_HLEN)
		ok = (in.ip_ver == 4 && sdp_pkt_get16(l4 + SDP_PKT_UDP_CSUM) == 0) ||
		     sdp_pkt_l4_csum_ok(l4, in.l4_len, sdp_pkt_info_pseudo_sum(f, &in));
	else if (in.proto == SDP_PKT_PROTO_TCP && in.l4_len >= SDP_PKT_TCP_HLEN)
		ok = sdp_pkt_l4_csum_ok(l4, in.l4_len, sdp_pkt_info_pseudo_sum(f, &in));
	if (!ok)
		*l4_ok = 0;
}
static void fill_task(struct doca_eth_rxq *rxq, const struct sdp_ring_cqe *cqe, const void *slot)
{
	struct doca_eth_rxq_task_recv *task =
		sdp_container_of(rxq->waiting.next, struct doca_eth_rxq_task_recv, link);
	doca_error_t status = DOCA_SUCCESS;
	void *head;
	size_t cap;
	uint32_t len = cqe->len;

	sdp_list_del(&task->link);
	rxq->nwaiting--;
	task->frame = NULL;
	/* the buf's fields straight (sdp_buf.h): this runs per received frame */
	if (task->pkt == NULL || task->pkt->refcount == 0) {
		/* the buffer died under the task: nothing to store into */
		sdp_warn("eth_rxq %p: receive task %p has no usable buffer", (void *)rxq,
			 (void *)task);
		sdp_task_complete(&task->task, DOCA_ERROR_INVALID_VALUE);
		return;
	}
	head = task->pkt->head;
	cap = task->pkt->len;
	if (cap > rxq->max_packet_size)
		cap = rxq->max_packet_size;
	if ((cqe->flags & SDP_RING_CQE_F_TRUNCATED) != 0 || len > cap || cqe->wire_len > len) {
		rxq->truncated++;
		status = DOCA_ERROR_TOO_BIG;
		if (len > cap)
			len = (uint32_t)cap;
	}
	memcpy(head, slot, len);
	task->pkt->data = head;
	task->pkt->data_len = len;
	task->frame = head;
	task->frame_len = len;
	task->cqe_flags = cqe->flags;
	if (status == DOCA_SUCCESS) {
		rxq->packets++;
		rxq->bytes += len;
	}
	sdp_task_complete(&task->task, status);
}

static int progress_regular(struct doca_eth_rxq *rxq)
{
	int did = 0;

	while (rxq->nwaiting > 0) {
		uint32_t want = rxq->nwaiting < RXQ_POLL_MAX ? rxq->nwaiting : RXQ_POLL_MAX;
		uint32_t first = 0, n;

		n = sdp_ring_rx_poll(rxq->ring, want, RXQ_SPIN, &first);
		if (n == 0)
			break;
		for (uint32_t i = 0; i < n; i++)
			fill_task(rxq, sdp_ring_rx_cqe(rxq->ring, first + i),
				  sdp_ring_rx_slot(rxq->ring, first + i));
		(void)sdp_ring_rx_release(rxq->ring, first + n);
		ring_released(rxq);
		did = 1;
	}
	return did;
}

/* MANAGED_MEMPOOL: batches of events over the ring's slots, handed back after the handler. */
static int progress_managed(struct doca_eth_rxq *rxq)
{
	int did = 0;

	while (sdp_ring_rx_pending(rxq->ring) >= rxq->batch_min) {
		uint32_t first = 0, n, k = 0;
		struct doca_buf **array;

		n = sdp_ring_rx_poll(rxq->ring, rxq->batch_max, RXQ_SPIN, &first);
		if (n == 0)
			break;
		did = 1;
		for (uint32_t i = 0; i < n; i++) {
			const struct sdp_ring_cqe *cqe = sdp_ring_rx_cqe(rxq->ring, first + i);
			struct doca_buf *buf;

			if ((cqe->flags & SDP_RING_CQE_F_TRUNCATED) != 0 ||
			    cqe->wire_len > cqe->len || cqe->len > rxq->max_packet_size) {
				rxq->truncated++; /* as a NIC drops what exceeds its MTU */
				continue;
			}
			if (doca_buf_inventory_buf_get_by_data(
				    rxq->inv, rxq->mmap, sdp_ring_rx_slot(rxq->ring, first + i),
				    cqe->len, &buf) != DOCA_SUCCESS) {
				sdp_warn("eth_rxq %p: no buffer for a received packet",
					 (void *)rxq);
				continue;
			}
			rxq->batch_bufs[k++] = buf;
			rxq->packets++;
			rxq->bytes += cqe->len;
		}
		if (k > 0) {
			array = malloc(sizeof(*array) * k);
			if (array == NULL) {
				sdp_error("eth_rxq %p: out of memory for a batch of %u packets",
					  (void *)rxq, k);
				rxq->batch_err_cb(&rxq->batch_event, 0, rxq->batch_user_data,
						  DOCA_ERROR_NO_MEMORY, NULL);
			} else {
				memcpy(array, rxq->batch_bufs, sizeof(*array) * k);
				rxq->batch_ok_cb(&rxq->batch_event, (uint16_t)k,
						 rxq->batch_user_data, DOCA_SUCCESS, array);
			}
			for (uint32_t i = 0; i < k; i++)
				(void)doca_buf_dec_refcount(rxq->batch_bufs[i], NULL);
		}
		(void)sdp_ring_rx_release(rxq->ring, first + n);
		ring_released(rxq);
		if (rxq->ctx.state != DOCA_CTX_STATE_RUNNING)
			break; /* the handler stopped the queue */
	}
	return did;
}

int sdp_eth_rxq_progress(struct doca_ctx *ctx)
{
	struct doca_eth_rxq *rxq = (struct doca_eth_rxq *)ctx;

	if (rxq->ring == NULL || rxq->gpu_rx != NULL || ctx->state != DOCA_CTX_STATE_RUNNING)
		return 0;
	if (atomic_load_explicit(&rxq->ev_signaled, memory_order_relaxed)) {
		uint64_t v;

		atomic_store(&rxq->ev_signaled, 0);
		if (read(rxq->ev_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			sdp_warn("eth_rxq %p: reading its eventfd failed: %m", (void *)rxq);
	}
	if (rxq->type == DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL)
		return progress_managed(rxq);
	return progress_regular(rxq);
}

/* Event mode: ask the engine for a wake-up unless frames already wait. */
int sdp_eth_rxq_arm(struct doca_ctx *ctx)
{
	struct doca_eth_rxq *rxq = (struct doca_eth_rxq *)ctx;
	uint32_t pending;

	if (rxq->ring == NULL || rxq->gpu_rx != NULL || ctx->state != DOCA_CTX_STATE_RUNNING)
		return 0;
	atomic_store(&rxq->want_wake, 1);
	pending = sdp_ring_rx_pending(rxq->ring); /* after the store: the engine sees one or the
						     other */
	if (rxq->type == DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL)
		return pending >= rxq->batch_min;
	return pending > 0 && rxq->nwaiting > 0;
}

/* ---- receive tasks -------------------------------------------------------------------------- */

static doca_error_t recv_submit(struct doca_task *task)
{
	struct doca_eth_rxq_task_recv *t = (struct doca_eth_rxq_task_recv *)task;
	struct sdp_eth_dport *dport = t->rxq->dport;

	if (t->pkt == NULL) {
		sdp_error("eth_rxq %p: receive task %p has no packet buffer", (void *)t->rxq,
			  (void *)t);
		return DOCA_ERROR_INVALID_VALUE;
	}
	(void)dport;
	sdp_list_add_tail(&t->rxq->waiting, &t->link);
	t->rxq->nwaiting++;
	return DOCA_SUCCESS;
}

static doca_error_t recv_validate(const struct doca_task *task)
{
	const struct doca_eth_rxq_task_recv *t = (const struct doca_eth_rxq_task_recv *)task;

	if (t->pkt == NULL) {
		sdp_error("eth_rxq %p: receive task %p has no packet buffer", (void *)t->rxq,
			  (const void *)t);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static void recv_free(struct doca_task *task)
{
	free(task);
}

static const struct sdp_task_ops recv_task_ops = {
	.name = "eth_rxq_recv",
	.submit = recv_submit,
	.validate = recv_validate,
	.free = recv_free,
};

/* The core calls one generic callback type; this hands the task to the application's. */
static void recv_done(struct doca_task *task, union doca_data task_user_data,
		      union doca_data ctx_user_data)
{
	struct doca_eth_rxq_task_recv *t = (struct doca_eth_rxq_task_recv *)task;
	doca_eth_rxq_task_recv_completion_cb_t cb =
		task->status == DOCA_SUCCESS ? t->rxq->recv_ok_cb : t->rxq->recv_err_cb;

	cb(t, task_user_data, ctx_user_data);
}

doca_error_t doca_eth_rxq_task_recv_set_conf(
	struct doca_eth_rxq *eth_rxq, doca_eth_rxq_task_recv_completion_cb_t task_completion_cb,
	doca_eth_rxq_task_recv_completion_cb_t task_error_cb, uint32_t task_recv_num)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_rxq ? &eth_rxq->ctx : NULL, "task_recv_set_conf");

	if (status != DOCA_SUCCESS)
		return status;
	if (task_completion_cb == NULL || task_error_cb == NULL || task_recv_num == 0) {
		sdp_error("eth_rxq %p: task_recv_set_conf needs both callbacks and a nonzero "
			  "task count",
			  (void *)eth_rxq);
		return DOCA_ERROR_INVALID_VALUE;
	}
	eth_rxq->recv_ok_cb = task_completion_cb;
	eth_rxq->recv_err_cb = task_error_cb;
	eth_rxq->task_recv_num = task_recv_num;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_rxq_task_recv_allocate_init(struct doca_eth_rxq *eth_rxq,
						  struct doca_buf *pkt, union doca_data user_data,
						  struct doca_eth_rxq_task_recv **task_recv)
{
	struct doca_eth_rxq_task_recv *t;
	doca_error_t status;

	if (eth_rxq == NULL || pkt == NULL || task_recv == NULL) {
		sdp_error("NULL %s", eth_rxq == NULL ? "queue" :
				     pkt == NULL     ? "packet buffer" :
						       "output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_ctx_check_running(&eth_rxq->ctx, "task_recv_allocate_init");
	if (status != DOCA_SUCCESS)
		return status;
	if (eth_rxq->ctx.num_allocated >= eth_rxq->task_recv_num) {
		sdp_error("eth_rxq %p: all %u receive tasks are allocated", (void *)eth_rxq,
			  eth_rxq->task_recv_num);
		return DOCA_ERROR_NO_MEMORY;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		sdp_error("eth_rxq %p: out of memory for a receive task", (void *)eth_rxq);
		return DOCA_ERROR_NO_MEMORY;
	}
	sdp_task_init(&t->task, &recv_task_ops, &eth_rxq->ctx, recv_done, recv_done);
	t->task.user_data = user_data;
	t->rxq = eth_rxq;
	t->pkt = pkt;
	sdp_list_head_init(&t->link);
	*task_recv = t;
	return DOCA_SUCCESS;
}

struct doca_task *doca_eth_rxq_task_recv_as_doca_task(struct doca_eth_rxq_task_recv *task_recv)
{
	return task_recv != NULL ? &task_recv->task : NULL;
}

void doca_eth_rxq_task_recv_set_pkt(struct doca_eth_rxq_task_recv *task_recv, struct doca_buf *pkt)
{
	if (task_recv == NULL) {
		sdp_error("NULL task");
		return;
	}
	if (task_recv->task.state == SDP_TASK_SUBMITTED) {
		sdp_error("task %p is submitted", (void *)task_recv);
		return;
	}
	task_recv->pkt = pkt;
	task_recv->frame = NULL; /* the frame received into the old buffer is not this one's */
}

doca_error_t doca_eth_rxq_task_recv_get_pkt(const struct doca_eth_rxq_task_recv *task_recv,
					    struct doca_buf **pkt)
{
	if (task_recv == NULL || pkt == NULL) {
		sdp_error("NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*pkt = task_recv->pkt;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_rxq_task_recv_get_l3_ok(const struct doca_eth_rxq_task_recv *task_recv,
					      uint8_t *l3_ok)
{
	uint8_t l4;

	if (task_recv == NULL || l3_ok == NULL) {
		sdp_error("task_recv_get_l3_ok: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	csum_verdict(task_recv->frame, task_recv->frame_len, task_recv->cqe_flags, l3_ok, &l4);
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_rxq_task_recv_get_l4_ok(const struct doca_eth_rxq_task_recv *task_recv,
					      uint8_t *l4_ok)
{
	uint8_t l3;

	if (task_recv == NULL || l4_ok == NULL) {
		sdp_error("task_recv_get_l4_ok: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	csum_verdict(task_recv->frame, task_recv->frame_len, task_recv->cqe_flags, &l3, l4_ok);
	return DOCA_SUCCESS;
}

/* ---- managed-mempool batch events ----------------------------------------------------------- */

doca_error_t doca_eth_rxq_event_batch_managed_recv_register(
	struct doca_eth_rxq *eth_rxq, enum doca_event_batch_events_number events_number_max,
	enum doca_event_batch_events_number events_number_min, union doca_data user_data,
	doca_eth_rxq_event_batch_managed_recv_handler_cb_t success_event_batch_handler,
	doca_eth_rxq_event_batch_managed_recv_handler_cb_t error_event_batch_handler)
{
	doca_error_t status = sdp_ctx_check_idle(eth_rxq ? &eth_rxq->ctx : NULL,
						 "event_batch_managed_recv_register");

	if (status != DOCA_SUCCESS)
		return status;
	if (success_event_batch_handler == NULL || error_event_batch_handler == NULL ||
	    (unsigned int)events_number_max > DOCA_EVENT_BATCH_EVENTS_NUMBER_128 ||
	    (unsigned int)events_number_min > (unsigned int)events_number_max) {
		sdp_error("eth_rxq %p: event_batch_managed_recv_register needs both handlers and "
			  "1 <= events_number_min <= events_number_max <= 128",
			  (void *)eth_rxq);
		return DOCA_ERROR_INVALID_VALUE;
	}
	eth_rxq->batch_max = 1u << events_number_max;
	eth_rxq->batch_min = 1u << events_number_min;
	eth_rxq->batch_user_data = user_data;
	eth_rxq->batch_ok_cb = success_event_batch_handler;
	eth_rxq->batch_err_cb = error_event_batch_handler;
	eth_rxq->batch_event.rxq = eth_rxq;
	eth_rxq->batch_registered = 1;
	return DOCA_SUCCESS;
}

struct doca_ctx *doca_eth_rxq_event_batch_managed_recv_get_ctx(
	const struct doca_eth_rxq_event_batch_managed_recv *event_batch_managed_recv)
{
	if (event_batch_managed_recv == NULL || event_batch_managed_recv->rxq == NULL)
		return NULL;
	return &event_batch_managed_recv->rxq->ctx;
}

void doca_eth_rxq_event_batch_managed_recv_pkt_array_free(struct doca_buf **pkt_array)
{
	free(pkt_array);
}
