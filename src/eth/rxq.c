/*
 * libdoca_eth: the receive queue context (doca_eth_rxq.h): create/destroy, setters,
 * capabilities, the context ops (start/stop: the ring, the engine port), softdpu's extensions.
 * The CPU data path (doca_eth_rxq_cpu_data_path.h) is rxq_cpu.c, the GPU one rxq_gpu.c.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "doca_buf.h"
#include "doca_buf_inventory.h"
#include "doca_mmap.h"
#include "sdp_buf.h"
#include "sdp_eth_int.h"
#include "sdp_log.h"
#include "sdp_provider.h"

SDP_LOG_COMPONENT("eth_rxq");

#define RXQ_MAX_PACKET SDP_ETH_MAX_FRAME
#define RXQ_DEF_MIN_SLOTS 64u /* default ring: max_burst_size rounded up, within these */
#define RXQ_DEF_MAX_SLOTS 4096u

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
	.progress = sdp_eth_rxq_progress, /* rxq_cpu.c */
	.arm = sdp_eth_rxq_arm,
};

/* ---- create / destroy / setters ------------------------------------------------------------- */

doca_error_t doca_eth_rxq_create(struct doca_dev *dev, uint32_t max_burst_size,
				 uint32_t max_packet_size, struct doca_eth_rxq **eth_rxq)
{
	struct doca_eth_rxq *rxq;

	if (dev == NULL || eth_rxq == NULL) {
		sdp_error("NULL %s", dev == NULL ? "device" : "output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (sdp_dev_get_eth_ops(dev) == NULL) {
		sdp_error("device %p has no Ethernet port", (void *)dev);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (max_burst_size == 0 || max_burst_size > SDP_ETH_DEF_MAX_BURST * 64u) {
		sdp_error("max_burst_size %u is not from 1 to %u", max_burst_size,
			  SDP_ETH_DEF_MAX_BURST * 64u);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (max_packet_size == 0 || max_packet_size > RXQ_MAX_PACKET) {
		sdp_error("max_packet_size %u is not from 1 to %u", max_packet_size,
			  RXQ_MAX_PACKET);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rxq = calloc(1, sizeof(*rxq));
	if (rxq == NULL) {
		sdp_error("out of memory");
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
		sdp_error("NULL queue");
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
		sdp_error("%s", buf_size == NULL	? "NULL buf_size" :
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
		sdp_error("unknown type %d", (int)type);
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
		sdp_error("%llu bytes do not fit 32 bits", (unsigned long long)size);
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
		sdp_error("NULL queue");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (eth_rxq->ctx.state != DOCA_CTX_STATE_RUNNING || eth_rxq->dport == NULL) {
		sdp_error("eth_rxq %p is %s, expected RUNNING", (void *)eth_rxq,
			  sdp_ctx_state_name(eth_rxq->ctx.state));
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
		sdp_error("NULL or bad devinfo");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (data_path_type != DOCA_ETH_RXQ_DATA_PATH_TYPE_CPU &&
	    data_path_type != DOCA_ETH_RXQ_DATA_PATH_TYPE_GPU) {
		sdp_error("unknown data path type %d", (int)data_path_type);
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
		sdp_error("NULL or bad argument");
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
		sdp_error("NULL or bad argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!sdp_eth_devinfo_has_port(devinfo))
		return DOCA_ERROR_NOT_SUPPORTED;
	*max_packet_size = RXQ_MAX_PACKET;
	return DOCA_SUCCESS;
}

/* ---- softdpu extension ---------------------------------------------------------------------- */

doca_error_t sdp_eth_rxq_get_counters(const struct doca_eth_rxq *eth_rxq,
				      struct sdp_eth_rxq_counters *counters)
{
	struct sdp_ring_counters c = {0};

	if (eth_rxq == NULL || counters == NULL) {
		sdp_error("NULL argument");
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
