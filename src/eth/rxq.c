/*
 * libdoca_eth: the receive queue context (doca_eth_rxq.h) and its CPU data path
 * (doca_eth_rxq_cpu_data_path.h, REGULAR receive tasks).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdlib.h>
#include <string.h>

#include "doca_buf.h"
#include "doca_mmap.h"
#include "sdp_buf.h"
#include "sdp_eth_int.h"
#include "sdp_log.h"
#include "sdp_provider.h"

SDP_LOG_COMPONENT("eth_rxq");

#define RXQ_MAX_PACKET SDP_ETH_MAX_FRAME

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

/* ---- context ops ---------------------------------------------------------------------------- */

static doca_error_t rxq_start(struct doca_ctx *ctx)
{
	struct doca_eth_rxq *rxq = (struct doca_eth_rxq *)ctx;
	doca_error_t status;

	if (ctx->gpu != NULL) {
		sdp_error("eth_rxq %p: the GPU data path is not available yet", (void *)rxq);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (rxq->type != DOCA_ETH_RXQ_TYPE_REGULAR) {
		sdp_error("eth_rxq %p: type %s does not run on the CPU data path%s", (void *)rxq,
			  type_name(rxq->type),
			  rxq->type == DOCA_ETH_RXQ_TYPE_CYCLIC ? " (GPU data path only)" :
								  " of softdpu yet");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (rxq->task_recv_num == 0) {
		sdp_error("eth_rxq %p: REGULAR queue started without "
			  "doca_eth_rxq_task_recv_set_conf()",
			  (void *)rxq);
		return DOCA_ERROR_BAD_STATE;
	}
	status = sdp_eth_dport_get(rxq->dev, &rxq->dport);
	if (status != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&rxq->dport->lock);
	rxq->has_queue_id = 0;
	sdp_list_add_tail(&rxq->dport->rxqs, &rxq->dport_link);
	pthread_mutex_unlock(&rxq->dport->lock);
	return DOCA_SUCCESS;
}

static doca_error_t rxq_stop(struct doca_ctx *ctx)
{
	struct doca_eth_rxq *rxq = (struct doca_eth_rxq *)ctx;
	struct sdp_eth_dport *dport = rxq->dport;
	struct doca_eth_rxq_task_recv *task, *tmp;
	sdp_list_link_t flushed;

	if (dport == NULL)
		return DOCA_SUCCESS;
	sdp_list_head_init(&flushed);
	pthread_mutex_lock(&dport->lock);
	sdp_list_del(&rxq->dport_link);
	dport->waiting -= sdp_list_length(&rxq->waiting);
	sdp_list_splice_tail(&flushed, &rxq->waiting);
	sdp_list_head_init(&rxq->waiting);
	rxq->has_queue_id = 0;
	pthread_mutex_unlock(&dport->lock);
	sdp_list_for_each_safe(task, tmp, &flushed, link) {
		sdp_list_del(&task->link);
		sdp_task_complete(&task->task, DOCA_ERROR_IO_FAILED);
	}
	rxq->dport = NULL;
	sdp_eth_dport_put(dport);
	return DOCA_SUCCESS;
}

static const struct sdp_ctx_ops rxq_ctx_ops = {
	.name = "eth_rxq",
	.start = rxq_start,
	.stop = rxq_stop,
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
	/* as DOCA: CYCLIC is the GPU data path's type; the CPU data path takes the others
	 * (softdpu runs REGULAR; MANAGED_MEMPOOL and the GPU data path arrive later) */
	if (data_path_type == DOCA_ETH_RXQ_DATA_PATH_TYPE_CPU && type == DOCA_ETH_RXQ_TYPE_REGULAR)
		return DOCA_SUCCESS;
	return DOCA_ERROR_NOT_SUPPORTED;
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
	pthread_mutex_lock(&dport->lock);
	sdp_list_add_tail(&t->rxq->waiting, &t->link);
	dport->waiting++;
	pthread_mutex_unlock(&dport->lock);
	sdp_eth_dport_kick(dport);
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

/* ---- softdpu extension ---------------------------------------------------------------------- */

doca_error_t sdp_eth_rxq_get_counters(const struct doca_eth_rxq *eth_rxq,
				      struct sdp_eth_rxq_counters *counters)
{
	struct sdp_eth_dport *dport;

	if (eth_rxq == NULL || counters == NULL) {
		sdp_error("sdp_eth_rxq_get_counters: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* the application thread owns start/stop, so dport cannot go away under us */
	dport = eth_rxq->dport;
	if (dport != NULL)
		pthread_mutex_lock(&dport->lock);
	*counters = eth_rxq->counters;
	if (dport != NULL)
		pthread_mutex_unlock(&dport->lock);
	return DOCA_SUCCESS;
}
