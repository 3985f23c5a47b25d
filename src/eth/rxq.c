/*
 * libdoca_eth: the receive queue context (doca_eth_rxq.h) and its CPU data path
 * (doca_eth_rxq_cpu_data_path.h, REGULAR receive tasks).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "doca_buf.h"
#include "doca_buf_inventory.h"
#include "doca_eth_rxq_gpu_data_path.h"
#include "doca_mmap.h"
#include "sdp_buf.h"
#include "sdp_eth_int.h"
#include "sdp_log.h"
#include "sdp_provider.h"

SDP_LOG_COMPONENT("eth_rxq");

#define RXQ_MAX_PACKET SDP_ETH_MAX_FRAME
#define RXQ_DEF_MIN_SLOTS 64u /* default ring: max_burst_size rounded up, within these */
#define RXQ_DEF_MAX_SLOTS 4096u
#define RXQ_POLL_MAX 64u /* frames one progress call takes per pass */
#define RXQ_SPIN 64u	 /* sdp_ring_rx_poll's wait for an entry being overwritten */

static const char *type_name(enum doca_eth_rxq_type type)
{
	switch (type) {
	case DOCA_ETH_RXQ_TYPE_CYCLIC:
		return "CYCLIC";
	case DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL:
		return "MANAGED_MEMPOOL";
	case DOCA_ETH_RXQ_TYPE_REGULAR:
		return "REGULAR";
	}
	return "unknown";
}

/* ---- the ring -------------------------------------------------------------------------------- */

static uint32_t pow2_ceil(uint32_t v)
{
	uint32_t p = 1;

	while (p < v && p < SDP_RING_MAX_ENTRIES)
		p <<= 1;
	return p;
}

static uint32_t slot_size_of(const struct doca_eth_rxq *rxq)
{
	return (rxq->max_packet_size + SDP_RING_ALIGN - 1) & ~(SDP_RING_ALIGN - 1);
}

/*
 * Lay out the queue's ring: in our own memory (REGULAR), or inside the pkt_buf range
 * (MANAGED_MEMPOOL: its buffers are the application's mmap), as many slots as fit there.
 */
static doca_error_t ring_create(struct doca_eth_rxq *rxq)
{
	uint32_t slot_size = slot_size_of(rxq);
	uint32_t nb = rxq->ring_slots_req;
	enum sdp_ring_mode mode = rxq->overflow == SDP_ETH_OVERFLOW_CYCLIC ?
					  SDP_RING_MODE_CYCLIC :
					  SDP_RING_MODE_BACKPRESSURE;
	uint64_t need = 0;
	void *mem;

	if (rxq->type == DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL) {
		uint8_t *base;
		size_t len;
		uint64_t skip, avail;

		if (rxq->mmap == NULL) {
			sdp_error("eth_rxq %p: MANAGED_MEMPOOL queue started without "
				  "doca_eth_rxq_set_pkt_buf()",
				  (void *)rxq);
			return DOCA_ERROR_BAD_STATE;
		}
		if (sdp_mmap_range(rxq->mmap, (void **)&base, &len) != DOCA_SUCCESS)
			return DOCA_ERROR_BAD_STATE;
		base += rxq->mmap_offset;
		skip = (SDP_RING_ALIGN - ((uintptr_t)base & (SDP_RING_ALIGN - 1))) &
		       (SDP_RING_ALIGN - 1);
		avail = rxq->mmap_len > skip ? rxq->mmap_len - skip : 0;
		if (nb == 0) {
			nb = SDP_RING_MAX_ENTRIES;
			while (nb > 0 &&
			       (sdp_ring_rx_mem_size(nb, slot_size, &need) != DOCA_SUCCESS ||
				need > avail))
				nb >>= 1;
		}
		if (nb == 0 || sdp_ring_rx_mem_size(nb, slot_size, &need) != DOCA_SUCCESS ||
		    need > avail) {
			sdp_error("eth_rxq %p: the packet buffer (%u bytes) is too small for %s "
				  "packets of %u bytes (see doca_eth_rxq_estimate_packet_buf_size)",
				  (void *)rxq, rxq->mmap_len, nb == 0 ? "any" : "the requested",
				  rxq->max_packet_size);
			return DOCA_ERROR_INVALID_VALUE;
		}
		mem = base + skip;
		rxq->ring_alloc = NULL;
	} else {
		if (nb == 0) {
			nb = pow2_ceil(rxq->max_burst_size);
			nb = nb < RXQ_DEF_MIN_SLOTS ? RXQ_DEF_MIN_SLOTS :
			     nb > RXQ_DEF_MAX_SLOTS ? RXQ_DEF_MAX_SLOTS :
						      nb;
		}
		if (sdp_ring_rx_mem_size(nb, slot_size, &need) != DOCA_SUCCESS) {
			sdp_error("eth_rxq %p: no ring of %u slots of %u bytes", (void *)rxq, nb,
				  slot_size);
			return DOCA_ERROR_INVALID_VALUE;
		}
		mem = aligned_alloc(SDP_RING_ALIGN, need);
		if (mem == NULL) {
			sdp_error("eth_rxq %p: out of memory for a ring of %llu bytes", (void *)rxq,
				  (unsigned long long)need);
			return DOCA_ERROR_NO_MEMORY;
		}
		rxq->ring_alloc = mem;
	}
	if (sdp_ring_rx_init(mem, need, nb, slot_size, mode, 0, &rxq->ring) != DOCA_SUCCESS) {
		sdp_error("eth_rxq %p: laying out the ring failed", (void *)rxq);
		free(rxq->ring_alloc);
		rxq->ring_alloc = NULL;
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static void ring_destroy(struct doca_eth_rxq *rxq)
{
	struct sdp_ring_counters c;

	if (rxq->ring == NULL)
		return;
	sdp_ring_rx_counters(rxq->ring, &c);
	rxq->ring_acc.packets += c.packets;
	rxq->ring_acc.bytes += c.bytes;
	rxq->ring_acc.drops += c.drops;
	rxq->ring_acc.overwrites += c.overwrites;
	rxq->ring_acc.ring_full += c.ring_full;
	rxq->ring_acc.csum_errors += c.csum_errors;
	rxq->ring = NULL;
	free(rxq->ring_alloc);
	rxq->ring_alloc = NULL;
}

/* Slots released: wake the engine if it holds the backend for this ring. */
static void ring_released(struct doca_eth_rxq *rxq)
{
	if (rxq->overflow == SDP_ETH_OVERFLOW_BACKPRESSURE && sdp_ring_rx_is_full(rxq->ring))
		sdp_eth_dport_kick(rxq->dport);
}

/* ---- consumers (the doca_pe_progress thread) ----------------------------------------------- */

/* REGULAR: one frame into the next waiting task. */
static void fill_task(struct doca_eth_rxq *rxq, const struct sdp_ring_cqe *cqe, const void *slot)
{
	struct doca_eth_rxq_task_recv *task =
		sdp_container_of(rxq->waiting.next, struct doca_eth_rxq_task_recv, link);
	doca_error_t status = DOCA_SUCCESS;
	void *head = NULL;
	size_t cap = 0;
	uint32_t len = cqe->len;

	sdp_list_del(&task->link);
	rxq->nwaiting--;
	if (doca_buf_get_head(task->pkt, &head) != DOCA_SUCCESS ||
	    doca_buf_get_len(task->pkt, &cap) != DOCA_SUCCESS) {
		/* the buffer died under the task: nothing to store into */
		sdp_warn("eth_rxq %p: receive task %p has no usable buffer", (void *)rxq,
			 (void *)task);
		sdp_task_complete(&task->task, DOCA_ERROR_INVALID_VALUE);
		return;
	}
	if (cap > rxq->max_packet_size)
		cap = rxq->max_packet_size;
	if ((cqe->flags & SDP_RING_CQE_F_TRUNCATED) != 0 || len > cap || cqe->wire_len > len) {
		rxq->truncated++;
		status = DOCA_ERROR_TOO_BIG;
		if (len > cap)
			len = (uint32_t)cap;
	}
	memcpy(head, slot, len);
	(void)doca_buf_set_data(task->pkt, head, len);
	task->l3_ok = (cqe->flags & SDP_RING_CQE_F_L3_CSUM_BAD) == 0;
	task->l4_ok = (cqe->flags & SDP_RING_CQE_F_L4_CSUM_BAD) == 0;
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

static int rxq_progress(struct doca_ctx *ctx)
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
static int rxq_arm(struct doca_ctx *ctx)
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

/* ---- context ops ---------------------------------------------------------------------------- */

static void rxq_release_started(struct doca_eth_rxq *rxq)
{
	struct doca_pe *pe = sdp_ctx_get_pe(&rxq->ctx);

	if (rxq->ev_fd >= 0) {
		if (pe != NULL)
			sdp_pe_del_event_fd(pe, rxq->ev_fd);
		close(rxq->ev_fd);
		rxq->ev_fd = -1;
	}
	if (rxq->inv != NULL) {
		(void)doca_buf_inventory_stop(rxq->inv);
		(void)doca_buf_inventory_destroy(rxq->inv);
		rxq->inv = NULL;
	}
	free(rxq->batch_bufs);
	rxq->batch_bufs = NULL;
	ring_destroy(rxq);
	sdp_eth_gpu_rxq_stop(rxq); /* after: the GPU path's ring is in its memory */
}

static doca_error_t rxq_start(struct doca_ctx *ctx)
{
	struct doca_eth_rxq *rxq = (struct doca_eth_rxq *)ctx;
	struct doca_pe *pe = sdp_ctx_get_pe(ctx);
	doca_error_t status;

	if (ctx->gpu != NULL) {
		/* the GPU data path: the consumer is a kernel (gpu.c) */
		if (rxq->overflow == SDP_ETH_OVERFLOW_DEFAULT)
			rxq->overflow = SDP_ETH_OVERFLOW_CYCLIC;
		status = sdp_eth_gpu_rxq_start(rxq);
		if (status != DOCA_SUCCESS)
			return status;
		goto attach;
	}
	switch (rxq->type) {
	case DOCA_ETH_RXQ_TYPE_REGULAR:
		if (rxq->task_recv_num == 0) {
			sdp_error("eth_rxq %p: REGULAR queue started without "
				  "doca_eth_rxq_task_recv_set_conf()",
				  (void *)rxq);
			return DOCA_ERROR_BAD_STATE;
		}
		break;
	case DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL:
		if (!rxq->batch_registered) {
			sdp_error("eth_rxq %p: MANAGED_MEMPOOL queue started without "
				  "doca_eth_rxq_event_batch_managed_recv_register()",
				  (void *)rxq);
			return DOCA_ERROR_BAD_STATE;
		}
		break;
	default:
		sdp_error("eth_rxq %p: type %s runs on the GPU data path only", (void *)rxq,
			  type_name(rxq->type));
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (rxq->overflow == SDP_ETH_OVERFLOW_DEFAULT)
		rxq->overflow = rxq->type == DOCA_ETH_RXQ_TYPE_CYCLIC ?
					SDP_ETH_OVERFLOW_CYCLIC :
					SDP_ETH_OVERFLOW_BACKPRESSURE;
	status = ring_create(rxq);
	if (status != DOCA_SUCCESS)
		goto err;
	if (rxq->type == DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL) {
		rxq->batch_bufs = calloc(rxq->batch_max, sizeof(*rxq->batch_bufs));
		status = rxq->batch_bufs == NULL ?
				 DOCA_ERROR_NO_MEMORY :
				 doca_buf_inventory_create(rxq->batch_max, &rxq->inv);
		if (status == DOCA_SUCCESS)
			status = doca_buf_inventory_start(rxq->inv);
		if (status != DOCA_SUCCESS) {
			sdp_error("eth_rxq %p: no buffers for batches of %u packets: %s",
				  (void *)rxq, rxq->batch_max, doca_error_get_descr(status));
			goto err;
		}
	}
	rxq->ev_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (rxq->ev_fd < 0) {
		sdp_error("eth_rxq %p: eventfd failed: %m", (void *)rxq);
		status = DOCA_ERROR_OPERATING_SYSTEM;
		goto err;
	}
	atomic_store(&rxq->want_wake, 0);
	atomic_store(&rxq->ev_signaled, 0);
	if (pe != NULL) {
		status = sdp_pe_add_event_fd(pe, rxq->ev_fd);
		if (status != DOCA_SUCCESS)
			goto err;
	}
attach:
	status = sdp_eth_dport_get(rxq->dev, &rxq->dport);
	if (status != DOCA_SUCCESS)
		goto err;
	pthread_mutex_lock(&rxq->dport->lock);
	rxq->has_queue_id = 0;
	rxq->eng_touched = 0;
	sdp_list_add_tail(&rxq->dport->rxqs, &rxq->dport_link);
	pthread_mutex_unlock(&rxq->dport->lock);
	sdp_eth_dport_kick(rxq->dport);
	return DOCA_SUCCESS;

err:
	rxq_release_started(rxq);
	return status;
}

static doca_error_t rxq_stop(struct doca_ctx *ctx)
{
	struct doca_eth_rxq *rxq = (struct doca_eth_rxq *)ctx;
	struct sdp_eth_dport *dport = rxq->dport;
	struct doca_eth_rxq_task_recv *task, *tmp;

	if (dport == NULL)
		return DOCA_SUCCESS;
	pthread_mutex_lock(&dport->lock);
	sdp_list_del(&rxq->dport_link);
	rxq->has_queue_id = 0;
	pthread_mutex_unlock(&dport->lock);
	/* the engine no longer sees the ring: frames still in it are dropped with it */
	sdp_list_for_each_safe(task, tmp, &rxq->waiting, link) {
		sdp_list_del(&task->link);
		sdp_task_complete(&task->task, DOCA_ERROR_IO_FAILED);
	}
	sdp_list_head_init(&rxq->waiting);
	rxq->nwaiting = 0;
	sdp_eth_dport_kick(dport); /* a full ring of this queue may have held the engine */
	rxq->dport = NULL;
	sdp_eth_dport_put(dport);
	rxq_release_started(rxq);
	return DOCA_SUCCESS;
}

static const struct sdp_ctx_ops rxq_ctx_ops = {
	.name = "eth_rxq",
	.start = rxq_start,
	.stop = rxq_stop,
	.progress = rxq_progress,
	.arm = rxq_arm,
};

/* ---- create / destroy / setters ------------------------------------------------------------- */

doca_error_t doca_eth_rxq_create(struct doca_dev *dev, uint32_t max_burst_size,
				 uint32_t max_packet_size, struct doca_eth_rxq **eth_rxq)
{
	struct doca_eth_rxq *rxq;

	if (dev == NULL || eth_rxq == NULL) {
		sdp_error("doca_eth_rxq_create: NULL %s",
			  dev == NULL ? "device" : "output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (sdp_dev_get_eth_ops(dev) == NULL) {
		sdp_error("doca_eth_rxq_create: device %p has no Ethernet port", (void *)dev);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (max_burst_size == 0 || max_burst_size > SDP_ETH_DEF_MAX_BURST * 64u) {
		sdp_error("doca_eth_rxq_create: max_burst_size %u is not from 1 to %u",
			  max_burst_size, SDP_ETH_DEF_MAX_BURST * 64u);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (max_packet_size == 0 || max_packet_size > RXQ_MAX_PACKET) {
		sdp_error("doca_eth_rxq_create: max_packet_size %u is not from 1 to %u",
			  max_packet_size, RXQ_MAX_PACKET);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rxq = calloc(1, sizeof(*rxq));
	if (rxq == NULL) {
		sdp_error("doca_eth_rxq_create: out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	sdp_ctx_init(&rxq->ctx, &rxq_ctx_ops);
	rxq->dev = dev;
	rxq->type = DOCA_ETH_RXQ_TYPE_REGULAR;
	rxq->max_burst_size = max_burst_size;
	rxq->max_packet_size = max_packet_size;
	sdp_list_head_init(&rxq->waiting);
	sdp_list_head_init(&rxq->dport_link);
	rxq->ev_fd = -1;
	sdp_dev_hold(dev);
	*eth_rxq = rxq;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_rxq_destroy(struct doca_eth_rxq *eth_rxq)
{
	doca_error_t status;

	if (eth_rxq == NULL) {
		sdp_error("doca_eth_rxq_destroy: NULL queue");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_ctx_fini(&eth_rxq->ctx);
	if (status != DOCA_SUCCESS)
		return status;
	if (eth_rxq->mmap != NULL)
		sdp_mmap_unref(eth_rxq->mmap);
	sdp_dev_release(eth_rxq->dev);
	free(eth_rxq);
	return DOCA_SUCCESS;
}

struct doca_ctx *doca_eth_rxq_as_doca_ctx(struct doca_eth_rxq *eth_rxq)
{
	return eth_rxq != NULL ? &eth_rxq->ctx : NULL;
}

doca_error_t doca_eth_rxq_set_type(struct doca_eth_rxq *eth_rxq, enum doca_eth_rxq_type type)
{
	doca_error_t status = sdp_ctx_check_idle(eth_rxq ? &eth_rxq->ctx : NULL, "set_type");

	if (status != DOCA_SUCCESS)
		return status;
	if (type != DOCA_ETH_RXQ_TYPE_CYCLIC && type != DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL &&
	    type != DOCA_ETH_RXQ_TYPE_REGULAR) {
		sdp_error("eth_rxq %p: unknown type %d", (void *)eth_rxq, (int)type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	eth_rxq->type = type;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_rxq_set_max_burst_size(struct doca_eth_rxq *eth_rxq, uint32_t max_burst_size)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_rxq ? &eth_rxq->ctx : NULL, "set_max_burst_size");

	if (status != DOCA_SUCCESS)
		return status;
	if (max_burst_size == 0 || max_burst_size > SDP_ETH_DEF_MAX_BURST * 64u) {
		sdp_error("eth_rxq %p: max_burst_size %u is not from 1 to %u", (void *)eth_rxq,
			  max_burst_size, SDP_ETH_DEF_MAX_BURST * 64u);
		return DOCA_ERROR_INVALID_VALUE;
	}
	eth_rxq->max_burst_size = max_burst_size;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_rxq_set_max_packet_size(struct doca_eth_rxq *eth_rxq,
					      uint32_t max_packet_size)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_rxq ? &eth_rxq->ctx : NULL, "set_max_packet_size");

	if (status != DOCA_SUCCESS)
		return status;
	if (max_packet_size == 0 || max_packet_size > RXQ_MAX_PACKET) {
		sdp_error("eth_rxq %p: max_packet_size %u is not from 1 to %u", (void *)eth_rxq,
			  max_packet_size, RXQ_MAX_PACKET);
		return DOCA_ERROR_INVALID_VALUE;
	}
	eth_rxq->max_packet_size = max_packet_size;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_rxq_set_pkt_buf(struct doca_eth_rxq *eth_rxq, struct doca_mmap *mmap,
				      uint32_t mmap_offset, uint32_t mmap_len)
{
	doca_error_t status = sdp_ctx_check_idle(eth_rxq ? &eth_rxq->ctx : NULL, "set_pkt_buf");
	void *addr;
	size_t len;

	if (status != DOCA_SUCCESS)
		return status;
	if (mmap == NULL || mmap_len == 0) {
		sdp_error("eth_rxq %p: set_pkt_buf with %s", (void *)eth_rxq,
			  mmap == NULL ? "a NULL mmap" : "an empty range");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!sdp_mmap_is_started(mmap)) {
		sdp_error("eth_rxq %p: set_pkt_buf with an mmap that is not started",
			  (void *)eth_rxq);
		return DOCA_ERROR_BAD_STATE;
	}
	if (sdp_mmap_range(mmap, &addr, &len) != DOCA_SUCCESS ||
	    (uint64_t)mmap_offset + mmap_len > len) {
		sdp_error("eth_rxq %p: set_pkt_buf range [%u, +%u) lies outside the mmap",
			  (void *)eth_rxq, mmap_offset, mmap_len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_mmap_ref(mmap);
	if (status != DOCA_SUCCESS)
		return status;
	if (eth_rxq->mmap != NULL)
		sdp_mmap_unref(eth_rxq->mmap);
	eth_rxq->mmap = mmap;
	eth_rxq->mmap_offset = mmap_offset;
	eth_rxq->mmap_len = mmap_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_rxq_estimate_packet_buf_size(enum doca_eth_rxq_type type, uint32_t rate,
						   uint16_t pkt_max_time, uint32_t max_packet_size,
						   uint32_t max_burst_size,
						   uint8_t log_max_lro_pkt_sz, uint16_t head_size,
						   uint16_t tail_size, uint32_t *buf_size)
{
	uint64_t stride, packets, size;

	if (buf_size == NULL || max_packet_size == 0 || max_burst_size == 0 ||
	    log_max_lro_pkt_sz > 16) {
		sdp_error("estimate_packet_buf_size: %s",
			  buf_size == NULL	  ? "NULL buf_size" :
			  log_max_lro_pkt_sz > 16 ? "log_max_lro_pkt_sz above 16" :
						    "zero packet or burst size");
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* every packet slot holds head room, the largest packet (or LRO packet) and tail room */
	stride = (uint64_t)head_size + max_packet_size + tail_size;
	if (log_max_lro_pkt_sz > 0 && (1ull << log_max_lro_pkt_sz) > max_packet_size)
		stride = (uint64_t)head_size + (1ull << log_max_lro_pkt_sz) + tail_size;
	stride = (stride + 63) & ~63ull; /* cache-line aligned slots */
	switch (type) {
	case DOCA_ETH_RXQ_TYPE_CYCLIC:
	case DOCA_ETH_RXQ_TYPE_REGULAR:
		packets = max_burst_size;
		break;
	case DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL:
		/* what arrives at `rate` MB/s while a packet may be held pkt_max_time us,
		 * at least one burst */
		packets = ((uint64_t)rate * pkt_max_time + max_packet_size - 1) / max_packet_size;
		if (packets < max_burst_size)
			packets = max_burst_size;
		break;
	default:
		sdp_error("estimate_packet_buf_size: unknown type %d", (int)type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	size = stride * packets;
	if (type == DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL) {
		/* softdpu keeps the queue's ring there too: a power of two of slots, a completion
		 * entry each, the ring header and the alignment of the block */
		packets = pow2_ceil((
			uint32_t)(packets > SDP_RING_MAX_ENTRIES ? SDP_RING_MAX_ENTRIES : packets));
		size = stride * packets + sizeof(struct sdp_ring_cqe) * packets +
		       sizeof(struct sdp_ring_hdr) + 2 * SDP_RING_ALIGN;
	}
	if (size > UINT32_MAX) {
		sdp_error("estimate_packet_buf_size: %llu bytes do not fit 32 bits",
			  (unsigned long long)size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*buf_size = (uint32_t)size;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_rxq_apply_queue_id(struct doca_eth_rxq *eth_rxq, uint16_t queue_id)
{
	struct doca_eth_rxq *other;
	doca_error_t status = DOCA_SUCCESS;

	if (eth_rxq == NULL) {
		sdp_error("apply_queue_id: NULL queue");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (eth_rxq->ctx.state != DOCA_CTX_STATE_RUNNING || eth_rxq->dport == NULL) {
		sdp_error("eth_rxq %p: apply_queue_id needs a RUNNING queue (it is %s)",
			  (void *)eth_rxq, sdp_ctx_state_name(eth_rxq->ctx.state));
		return DOCA_ERROR_BAD_STATE;
	}
	pthread_mutex_lock(&eth_rxq->dport->lock);
	sdp_list_for_each(other, &eth_rxq->dport->rxqs, dport_link) {
		if (other != eth_rxq && other->has_queue_id && other->queue_id == queue_id) {
			sdp_error("eth_rxq %p: queue id %u is taken by eth_rxq %p on this device",
				  (void *)eth_rxq, queue_id, (void *)other);
			status = DOCA_ERROR_IN_USE;
			break;
		}
	}
	if (status == DOCA_SUCCESS) {
		eth_rxq->has_queue_id = 1;
		eth_rxq->queue_id = queue_id;
	}
	pthread_mutex_unlock(&eth_rxq->dport->lock);
	return status;
}

/* ---- capabilities --------------------------------------------------------------------------- */

doca_error_t doca_eth_rxq_cap_is_type_supported(const struct doca_devinfo *devinfo,
						enum doca_eth_rxq_type type,
						enum doca_eth_rxq_data_path_type data_path_type)
{
	if (devinfo == NULL || sdp_devinfo_get_attr(devinfo) == NULL) {
		sdp_error("cap_is_type_supported: NULL or bad devinfo");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (data_path_type != DOCA_ETH_RXQ_DATA_PATH_TYPE_CPU &&
	    data_path_type != DOCA_ETH_RXQ_DATA_PATH_TYPE_GPU) {
		sdp_error("cap_is_type_supported: unknown data path type %d", (int)data_path_type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!sdp_eth_devinfo_has_port(devinfo))
		return DOCA_ERROR_NOT_SUPPORTED;
	/* as DOCA: CYCLIC is the GPU data path's type; the CPU data path takes the others */
	if (data_path_type == DOCA_ETH_RXQ_DATA_PATH_TYPE_GPU)
		return type == DOCA_ETH_RXQ_TYPE_CYCLIC ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
	return type == DOCA_ETH_RXQ_TYPE_REGULAR || type == DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL ?
		       DOCA_SUCCESS :
		       DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_eth_rxq_cap_get_max_burst_size(const struct doca_devinfo *devinfo,
						 uint32_t *max_burst_size)
{
	if (devinfo == NULL || max_burst_size == NULL || sdp_devinfo_get_attr(devinfo) == NULL) {
		sdp_error("cap_get_max_burst_size: NULL or bad argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!sdp_eth_devinfo_has_port(devinfo))
		return DOCA_ERROR_NOT_SUPPORTED;
	*max_burst_size = SDP_ETH_DEF_MAX_BURST * 64u;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_rxq_cap_get_max_packet_size(const struct doca_devinfo *devinfo,
						  uint32_t *max_packet_size)
{
	if (devinfo == NULL || max_packet_size == NULL || sdp_devinfo_get_attr(devinfo) == NULL) {
		sdp_error("cap_get_max_packet_size: NULL or bad argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!sdp_eth_devinfo_has_port(devinfo))
		return DOCA_ERROR_NOT_SUPPORTED;
	*max_packet_size = RXQ_MAX_PACKET;
	return DOCA_SUCCESS;
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
		sdp_error("task_recv_allocate_init: NULL %s", eth_rxq == NULL ? "queue" :
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
		sdp_error("task_recv_set_pkt: NULL task");
		return;
	}
	if (task_recv->task.state == SDP_TASK_SUBMITTED) {
		sdp_error("task_recv_set_pkt: task %p is submitted", (void *)task_recv);
		return;
	}
	task_recv->pkt = pkt;
}

doca_error_t doca_eth_rxq_task_recv_get_pkt(const struct doca_eth_rxq_task_recv *task_recv,
					    struct doca_buf **pkt)
{
	if (task_recv == NULL || pkt == NULL) {
		sdp_error("task_recv_get_pkt: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*pkt = task_recv->pkt;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_rxq_task_recv_get_l3_ok(const struct doca_eth_rxq_task_recv *task_recv,
					      uint8_t *l3_ok)
{
	if (task_recv == NULL || l3_ok == NULL) {
		sdp_error("task_recv_get_l3_ok: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*l3_ok = task_recv->l3_ok;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_rxq_task_recv_get_l4_ok(const struct doca_eth_rxq_task_recv *task_recv,
					      uint8_t *l4_ok)
{
	if (task_recv == NULL || l4_ok == NULL) {
		sdp_error("task_recv_get_l4_ok: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*l4_ok = task_recv->l4_ok;
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

/* ---- softdpu extension ---------------------------------------------------------------------- */

doca_error_t sdp_eth_rxq_get_counters(const struct doca_eth_rxq *eth_rxq,
				      struct sdp_eth_rxq_counters *counters)
{
	struct sdp_ring_counters c = {0};

	if (eth_rxq == NULL || counters == NULL) {
		sdp_error("sdp_eth_rxq_get_counters: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* the application thread owns start/stop, so the ring cannot go away under us */
	if (eth_rxq->ring != NULL)
		sdp_ring_rx_counters(eth_rxq->ring, &c);
	*counters = (struct sdp_eth_rxq_counters){
		.packets = eth_rxq->packets,
		.bytes = eth_rxq->bytes,
		.ring_packets = eth_rxq->ring_acc.packets + c.packets,
		.drops = eth_rxq->ring_acc.drops + c.drops,
		.overwrites = eth_rxq->ring_acc.overwrites + c.overwrites,
		.ring_full = eth_rxq->ring_acc.ring_full + c.ring_full,
		.truncated = eth_rxq->truncated,
		.csum_bad = eth_rxq->ring_acc.csum_errors + c.csum_errors,
	};
	return DOCA_SUCCESS;
}

doca_error_t sdp_eth_rxq_set_overflow(struct doca_eth_rxq *eth_rxq, enum sdp_eth_overflow mode)
{
	doca_error_t status = sdp_ctx_check_idle(eth_rxq ? &eth_rxq->ctx : NULL, "set_overflow");

	if (status != DOCA_SUCCESS)
		return status;
	if (mode != SDP_ETH_OVERFLOW_DEFAULT && mode != SDP_ETH_OVERFLOW_BACKPRESSURE &&
	    mode != SDP_ETH_OVERFLOW_CYCLIC) {
		sdp_error("eth_rxq %p: unknown overflow mode %d", (void *)eth_rxq, (int)mode);
		return DOCA_ERROR_INVALID_VALUE;
	}
	eth_rxq->overflow = mode;
	return DOCA_SUCCESS;
}

doca_error_t sdp_eth_rxq_set_ring_size(struct doca_eth_rxq *eth_rxq, uint32_t nb_slots)
{
	doca_error_t status = sdp_ctx_check_idle(eth_rxq ? &eth_rxq->ctx : NULL, "set_ring_size");

	if (status != DOCA_SUCCESS)
		return status;
	if (sdp_ring_log2_entries(nb_slots) < 0) {
		sdp_error("eth_rxq %p: ring size %u is not a power of two from 1 to %u",
			  (void *)eth_rxq, nb_slots, SDP_RING_MAX_ENTRIES);
		return DOCA_ERROR_INVALID_VALUE;
	}
	eth_rxq->ring_slots_req = nb_slots;
	return DOCA_SUCCESS;
}

/* ---- GPU data path (doca_eth_rxq_gpu_data_path.h) ------------------------------------------- */

doca_error_t doca_eth_rxq_get_gpu_handle(const struct doca_eth_rxq *eth_rxq,
					 struct doca_gpu_eth_rxq **eth_rxq_ext)
{
	if (eth_rxq == NULL || eth_rxq_ext == NULL) {
		sdp_error("doca_eth_rxq_get_gpu_handle: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (eth_rxq->ctx.state != DOCA_CTX_STATE_RUNNING) {
		sdp_error("eth_rxq %p: get_gpu_handle needs a RUNNING queue (it is %s)",
			  (const void *)eth_rxq, sdp_ctx_state_name(eth_rxq->ctx.state));
		return DOCA_ERROR_BAD_STATE;
	}
	if (eth_rxq->gpu_rx == NULL) {
		sdp_error("eth_rxq %p: get_gpu_handle on a CPU data path queue",
			  (const void *)eth_rxq);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	*eth_rxq_ext = sdp_eth_gpu_rxq_handle(eth_rxq);
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_rxq_gpu_enable_mcst_qp(struct doca_eth_rxq *eth_rxq)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_rxq ? &eth_rxq->ctx : NULL, "gpu_enable_mcst_qp");

	if (status == DOCA_SUCCESS)
		eth_rxq->gpu_mcst = 1;
	return status;
}

doca_error_t doca_eth_rxq_gpu_set_uar_on_cpu(struct doca_eth_rxq *eth_rxq)
{
	return sdp_ctx_check_idle(eth_rxq ? &eth_rxq->ctx : NULL, "gpu_set_uar_on_cpu");
}

doca_error_t doca_eth_rxq_gpu_set_rq_mem_type(struct doca_eth_rxq *eth_rxq,
					      enum doca_gpu_mem_type mem_type)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_rxq ? &eth_rxq->ctx : NULL, "gpu_set_rq_mem_type");

	if (status != DOCA_SUCCESS)
		return status;
	if (mem_type != DOCA_GPU_MEM_TYPE_GPU && mem_type != DOCA_GPU_MEM_TYPE_GPU_CPU &&
	    mem_type != DOCA_GPU_MEM_TYPE_CPU_GPU) {
		sdp_error("eth_rxq %p: unknown memory type %d", (void *)eth_rxq, (int)mem_type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_rxq_gpu_cpu_proxy_progress(struct doca_eth_rxq *eth_rxq)
{
	if (eth_rxq == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	/* called in a busy loop: no logging; the engine drains on its own */
	return eth_rxq->ctx.state == DOCA_CTX_STATE_RUNNING && eth_rxq->gpu_rx != NULL ?
		       DOCA_SUCCESS :
		       DOCA_ERROR_BAD_STATE;
}
