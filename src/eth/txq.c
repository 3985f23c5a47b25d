/*
 * libdoca_eth: the send queue context (doca_eth_txq.h) and its CPU data path
 * (doca_eth_txq_cpu_data_path.h, send tasks and batch send tasks).
 *
 * A submitted send task goes to the backend at once (tx_burst copies the frame). When the
 * backend is full, the task waits in the queue's backlog, in order, and doca_pe_progress()
 * retries; tasks still waiting when the queue stops complete with DOCA_ERROR_IO_FAILED.
 *
 * A batch send task (sdp_task_batch.h) goes the same way as one backlog entry: its frames go
 * to the backend in bursts, in order; when the backend is full the rest of the batch waits in
 * the backlog, and nothing submitted later overtakes it. A frame that cannot be sent (no
 * buffer, shorter than an Ethernet header, longer than SDP_ETH_MAX_FRAME) gets its own error
 * status and the rest of the batch is still sent. Batches are pooled per queue, so a freed
 * batch stays readable and a second free or submit of it is refused.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdlib.h>
#include <string.h>

#include "doca_buf.h"
#include "doca_eth_txq_gpu_data_path.h"
#include "sdp_eth_int.h"
#include "sdp_log.h"
#include "softdpu/sdp_pkt.h"
#include "sdp_provider.h"
#include "sdp_task_batch.h"

SDP_LOG_COMPONENT("eth_txq");

#define TXQ_MIN_FRAME 14  /* an Ethernet header */
#define TXQ_BATCH_MAX 128 /* DOCA_TASK_BATCH_MAX_TASKS_NUMBER_128 */

struct doca_eth_txq_task_send;
struct txq_batch;

/* An entry of the backlog: a send task or a batch send task (exactly one is set). */
struct txq_item {
	sdp_list_link_t link; /* in txq->backlog */
	struct doca_eth_txq_task_send *send;
	struct txq_batch *batch;
};

struct doca_eth_txq {
	struct doca_ctx ctx; /* first: the context base */
	struct doca_dev *dev;
	uint32_t max_burst_size;
	uint8_t l3_csum;
	uint8_t l4_csum;
	doca_eth_txq_task_send_completion_cb_t send_ok_cb;
	doca_eth_txq_task_send_completion_cb_t send_err_cb;
	uint32_t task_send_num;
	uint32_t num_send; /* send tasks allocated and not freed */
	/* batch send tasks (batch_max 0: not configured) */
	doca_eth_txq_task_batch_send_completion_cb_t batch_ok_cb;
	doca_eth_txq_task_batch_send_completion_cb_t batch_err_cb;
	uint16_t batch_max;	      /* tasks per batch at most: 16, 32, 64 or 128 */
	uint16_t batch_num;	      /* batches the application may hold */
	uint16_t batch_held;	      /* batches allocated and not freed */
	struct txq_batch *batch_pool; /* freed batches (all of batch_max tasks) */
	int has_queue_id;
	uint16_t queue_id;
	struct sdp_eth_dport *dport; /* while started */
	sdp_list_link_t backlog; /* txq_items the backend had no room for (application thread) */
	uint8_t *stage;		 /* checksum offload: the frame as sent (dport->tx_lock) */
	struct sdp_eth_txq_counters counters; /* application thread; read by get_counters */
	/* GPU data path (issue 5) */
	struct sdp_eth_gpu_txq *gpu_tx; /* while started on the GPU */
	int wait_on_time, completion_on_gpu, uar_on_cpu;
	doca_eth_txq_gpu_event_error_send_packet_cb_t ev_error_cb;
	doca_eth_txq_gpu_event_notify_send_packet_cb_t ev_notify_cb;
	union doca_data ev_error_ud, ev_notify_ud;
};

/* The events handed to the GPU send queue's callbacks (valid during the callback). */
struct doca_eth_txq_gpu_event_error_send_packet {
	uint16_t position;
};
struct doca_eth_txq_gpu_event_notify_send_packet {
	uint16_t position;
	uint64_t timestamp;
};

struct doca_eth_txq_task_send {
	struct doca_task task; /* first */
	struct doca_eth_txq *txq;
	struct doca_buf *pkt;
	struct txq_item item;
};

struct txq_batch {
	struct doca_task_batch batch; /* first */
	struct doca_eth_txq *txq;
	struct doca_buf **pkts; /* batch_max entries; the application fills tasks_num */
	uint16_t next;		/* while submitted: frames handled so far */
	struct txq_item item;
	struct txq_batch *pool_next; /* in txq->batch_pool while freed */
	/* followed by the arrays: pkts, task user data, statuses (batch_max each) */
};

/* The frame a packet buffer holds: DOCA_SUCCESS, or DOCA_ERROR_INVALID_VALUE when it is none. */
static doca_error_t pkt_frame(const struct doca_buf *pkt, void **data_p, size_t *len_p)
{
	void *data = NULL;
	size_t len = 0;

	if (pkt == NULL || doca_buf_get_data(pkt, &data) != DOCA_SUCCESS ||
	    doca_buf_get_data_len(pkt, &len) != DOCA_SUCCESS || len < TXQ_MIN_FRAME ||
	    len > SDP_ETH_MAX_FRAME) {
		*len_p = len;
		return DOCA_ERROR_INVALID_VALUE;
	}
	*data_p = data;
	*len_p = len;
	return DOCA_SUCCESS;
}

/*
 * Hand n frames to the backend in order; returns how many it took (fewer: it is full now).
 * With the checksum offloads the application's buffers stay as they are: the checksums go into
 * a copy, one frame at a time.
 */
static uint16_t txq_tx(struct doca_eth_txq *txq, struct sdp_pkt *pkts, uint16_t n)
{
	struct sdp_eth_dport *dport = txq->dport;
	uint16_t taken = 0;

	pthread_mutex_lock(&dport->tx_lock);
	if (txq->l3_csum || txq->l4_csum) {
		for (; taken < n; taken++) {
			struct sdp_pkt one = pkts[taken];

			memcpy(txq->stage, one.data, one.len);
			sdp_pkt_csum_fill(txq->stage, one.len, txq->l3_csum, txq->l4_csum);
			one.data = txq->stage;
			if (dport->ops->tx_burst(dport->port, 0, &one, 1) == 0)
				break;
		}
	} else {
		taken = dport->ops->tx_burst(dport->port, 0, pkts, n);
	}
	for (uint16_t i = 0; i < taken; i++)
		sdp_eth_dport_count_tx(dport, pkts[i].len);
	pthread_mutex_unlock(&dport->tx_lock);
	for (uint16_t i = 0; i < taken; i++) {
		txq->counters.packets++;
		txq->counters.bytes += pkts[i].len;
	}
	return taken;
}

/* Hand one frame to the backend: 1 taken, 0 full now. */
static int send_one(struct doca_eth_txq *txq, struct doca_eth_txq_task_send *t)
{
	struct sdp_pkt pkt = {0};
	void *data = NULL;
	size_t len = 0;

	(void)doca_buf_get_data(t->pkt, &data);
	(void)doca_buf_get_data_len(t->pkt, &len);
	pkt.data = data;
	pkt.len = (uint32_t)len;
	return txq_tx(txq, &pkt, 1) == 1;
}

/*
 * Send the batch's frames from b->next on, in bursts of the valid frames between bad ones.
 * Returns 1 when every frame has its status, 0 when the backend is full (b->next says where
 * to go on).
 */
static int batch_push(struct doca_eth_txq *txq, struct txq_batch *b)
{
	struct doca_task_batch *batch = &b->batch;
	struct sdp_pkt pkts[TXQ_BATCH_MAX];

	while (b->next < batch->tasks_num) {
		uint16_t first = b->next, n = 0, taken;

		while (first + n < batch->tasks_num) {
			void *data = NULL;
			size_t len = 0;

			if (pkt_frame(b->pkts[first + n], &data, &len) != DOCA_SUCCESS)
				break;
			memset(&pkts[n], 0, sizeof(pkts[n]));
			pkts[n].data = data;
			pkts[n].len = (uint32_t)len;
			n++;
		}
		if (n == 0) {
			void *data = NULL;
			size_t len = 0;

			(void)pkt_frame(b->pkts[first], &data, &len);
			if (b->pkts[first] == NULL)
				sdp_error("eth_txq %p: batch %p task %u has no packet buffer",
					  (void *)txq, (void *)b, first);
			else
				sdp_error("eth_txq %p: batch %p task %u needs a frame of %u to %u "
					  "bytes (has %zu)",
					  (void *)txq, (void *)b, first, TXQ_MIN_FRAME,
					  SDP_ETH_MAX_FRAME, len);
			batch->status[first] = DOCA_ERROR_INVALID_VALUE;
			txq->counters.errors++;
			b->next++;
			continue;
		}
		taken = txq_tx(txq, pkts, n);
		b->next += taken;
		if (taken < n)
			return 0;
	}
	return 1;
}

/* Send what waits in the backlog, in order, while the backend takes it. */
static int backlog_push(struct doca_eth_txq *txq)
{
	int done = 0;

	while (!sdp_list_is_empty(&txq->backlog)) {
		struct txq_item *it = sdp_container_of(txq->backlog.next, struct txq_item, link);

		if (it->send != NULL) {
			if (!send_one(txq, it->send))
				break;
			sdp_list_del(&it->link);
			sdp_task_complete(&it->send->task, DOCA_SUCCESS);
		} else {
			uint16_t before = it->batch->next;

			if (!batch_push(txq, it->batch)) {
				done |= it->batch->next != before;
				break;
			}
			sdp_list_del(&it->link);
			sdp_task_batch_complete(&it->batch->batch);
		}
		done = 1;
	}
	return done;
}

/* ---- context ops ---------------------------------------------------------------------------- */

static void gpu_error_cb(void *arg, uint32_t pos)
{
	struct doca_eth_txq *txq = arg;
	struct doca_eth_txq_gpu_event_error_send_packet ev = {.position = (uint16_t)pos};

	txq->ev_error_cb(&ev, txq->ev_error_ud);
}

static void gpu_notify_cb(void *arg, uint32_t pos, uint64_t ts_ns)
{
	struct doca_eth_txq *txq = arg;
	struct doca_eth_txq_gpu_event_notify_send_packet ev = {.position = (uint16_t)pos,
							       .timestamp = ts_ns};

	txq->ev_notify_cb(&ev, txq->ev_notify_ud);
}

static doca_error_t txq_gpu_start(struct doca_eth_txq *txq)
{
	struct sdp_eth_gpu_txq_cfg cfg = {
		.ctx = &txq->ctx,
		.gpu = txq->ctx.gpu,
		.max_burst_size = txq->max_burst_size,
		.l3_csum = txq->l3_csum,
		.l4_csum = txq->l4_csum,
		.wait_on_time = txq->wait_on_time,
		.completion_on_gpu = txq->completion_on_gpu,
		.nic_handler = txq->uar_on_cpu ? 1u /* NIC_HANDLER_CPU_PROXY */ :
						 2u /* NIC_HANDLER_GPU_SM_DB */,
		.notify_cb = txq->ev_notify_cb != NULL ? gpu_notify_cb : NULL,
		.error_cb = txq->ev_error_cb != NULL ? gpu_error_cb : NULL,
		.txq = txq,
	};
	doca_error_t status;

	if ((txq->ev_notify_cb != NULL || txq->ev_error_cb != NULL) && !txq->completion_on_gpu &&
	    sdp_ctx_get_pe(&txq->ctx) == NULL) {
		sdp_error("eth_txq %p: send events need the queue connected to a doca_pe",
			  (void *)txq);
		return DOCA_ERROR_BAD_STATE;
	}
	status = sdp_eth_dport_get(txq->dev, &txq->dport);
	if (status != DOCA_SUCCESS)
		return status;
	status = sdp_eth_gpu_txq_start(&cfg, txq->dport, &txq->gpu_tx);
	if (status != DOCA_SUCCESS) {
		sdp_eth_dport_put(txq->dport);
		txq->dport = NULL;
	}
	txq->has_queue_id = 0;
	return status;
}

static doca_error_t txq_start(struct doca_ctx *ctx)
{
	struct doca_eth_txq *txq = (struct doca_eth_txq *)ctx;

	if (ctx->gpu != NULL)
		return txq_gpu_start(txq);
	if (txq->wait_on_time) {
		sdp_error("eth_txq %p: wait-on-time runs on the GPU data path only", (void *)txq);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (txq->task_send_num == 0 && txq->batch_max == 0) {
		sdp_error("eth_txq %p: started without doca_eth_txq_task_send_set_conf() or "
			  "doca_eth_txq_task_batch_send_set_conf()",
			  (void *)txq);
		return DOCA_ERROR_BAD_STATE;
	}
	txq->has_queue_id = 0;
	return sdp_eth_dport_get(txq->dev, &txq->dport);
}

static doca_error_t txq_stop(struct doca_ctx *ctx)
{
	struct doca_eth_txq *txq = (struct doca_eth_txq *)ctx;
	struct txq_item *it, *tmp;

	if (txq->dport == NULL)
		return DOCA_SUCCESS;
	if (txq->gpu_tx != NULL) {
		struct sdp_eth_txq_counters c = {0};

		(void)sdp_eth_gpu_txq_progress(txq->gpu_tx); /* last events */
		sdp_eth_gpu_txq_counters(txq->gpu_tx, &c);
		txq->counters.packets += c.packets;
		txq->counters.bytes += c.bytes;
		txq->counters.errors += c.errors;
		sdp_eth_gpu_txq_stop(txq->gpu_tx);
		txq->gpu_tx = NULL;
	}
	/* in order: a batch's callback comes before those of tasks submitted after it */
	sdp_list_for_each_safe(it, tmp, &txq->backlog, link) {
		sdp_list_del(&it->link);
		if (it->send != NULL) {
			txq->counters.errors++;
			sdp_task_complete(&it->send->task, DOCA_ERROR_IO_FAILED);
			continue;
		}
		for (uint16_t i = it->batch->next; i < it->batch->batch.tasks_num; i++) {
			it->batch->batch.status[i] = DOCA_ERROR_IO_FAILED;
			txq->counters.errors++;
		}
		it->batch->next = it->batch->batch.tasks_num;
		sdp_task_batch_complete(&it->batch->batch);
	}
	sdp_eth_dport_put(txq->dport);
	txq->dport = NULL;
	return DOCA_SUCCESS;
}

static int txq_progress(struct doca_ctx *ctx)
{
	struct doca_eth_txq *txq = (struct doca_eth_txq *)ctx;

	if (txq->dport == NULL || ctx->state != DOCA_CTX_STATE_RUNNING)
		return 0;
	if (txq->gpu_tx != NULL)
		return sdp_eth_gpu_txq_progress(txq->gpu_tx);
	return backlog_push(txq);
}

static const struct sdp_ctx_ops txq_ctx_ops = {
	.name = "eth_txq",
	.start = txq_start,
	.stop = txq_stop,
	.progress = txq_progress,
};

/* Free the pooled batches (IDLE: the application holds none). */
static void batch_pool_drain(struct doca_eth_txq *txq)
{
	while (txq->batch_pool != NULL) {
		struct txq_batch *b = txq->batch_pool;

		txq->batch_pool = b->pool_next;
		free(b);
	}
}

/* ---- create / destroy / setters ------------------------------------------------------------- */

doca_error_t doca_eth_txq_create(struct doca_dev *dev, uint32_t max_burst_size,
				 struct doca_eth_txq **eth_txq)
{
	struct doca_eth_txq *txq;

	if (dev == NULL || eth_txq == NULL) {
		sdp_error("doca_eth_txq_create: NULL %s",
			  dev == NULL ? "device" : "output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (sdp_dev_get_eth_ops(dev) == NULL) {
		sdp_error("doca_eth_txq_create: device %p has no Ethernet port", (void *)dev);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (max_burst_size == 0 || max_burst_size > SDP_ETH_DEF_MAX_BURST * 64u) {
		sdp_error("doca_eth_txq_create: max_burst_size %u is not from 1 to %u",
			  max_burst_size, SDP_ETH_DEF_MAX_BURST * 64u);
		return DOCA_ERROR_INVALID_VALUE;
	}
	txq = calloc(1, sizeof(*txq));
	if (txq == NULL)
		goto err_nomem;
	txq->stage = malloc(SDP_ETH_MAX_FRAME);
	if (txq->stage == NULL)
		goto err_free;
	sdp_ctx_init(&txq->ctx, &txq_ctx_ops);
	txq->dev = dev;
	txq->max_burst_size = max_burst_size;
	sdp_list_head_init(&txq->backlog);
	sdp_dev_hold(dev);
	*eth_txq = txq;
	return DOCA_SUCCESS;

err_free:
	free(txq);
err_nomem:
	sdp_error("doca_eth_txq_create: out of memory");
	return DOCA_ERROR_NO_MEMORY;
}

doca_error_t doca_eth_txq_destroy(struct doca_eth_txq *eth_txq)
{
	doca_error_t status;

	if (eth_txq == NULL) {
		sdp_error("doca_eth_txq_destroy: NULL queue");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_ctx_fini(&eth_txq->ctx);
	if (status != DOCA_SUCCESS)
		return status;
	batch_pool_drain(eth_txq);
	sdp_dev_release(eth_txq->dev);
	free(eth_txq->stage);
	free(eth_txq);
	return DOCA_SUCCESS;
}

struct doca_ctx *doca_eth_txq_as_doca_ctx(struct doca_eth_txq *eth_txq)
{
	return eth_txq != NULL ? &eth_txq->ctx : NULL;
}

doca_error_t doca_eth_txq_set_type(struct doca_eth_txq *eth_txq, enum doca_eth_txq_type type)
{
	doca_error_t status = sdp_ctx_check_idle(eth_txq ? &eth_txq->ctx : NULL, "set_type");

	if (status != DOCA_SUCCESS)
		return status;
	if (type != DOCA_ETH_TXQ_TYPE_REGULAR) {
		sdp_error("eth_txq %p: unknown type %d", (void *)eth_txq, (int)type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_set_max_burst_size(struct doca_eth_txq *eth_txq, uint32_t max_burst_size)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_txq ? &eth_txq->ctx : NULL, "set_max_burst_size");

	if (status != DOCA_SUCCESS)
		return status;
	if (max_burst_size == 0 || max_burst_size > SDP_ETH_DEF_MAX_BURST * 64u) {
		sdp_error("eth_txq %p: max_burst_size %u is not from 1 to %u", (void *)eth_txq,
			  max_burst_size, SDP_ETH_DEF_MAX_BURST * 64u);
		return DOCA_ERROR_INVALID_VALUE;
	}
	eth_txq->max_burst_size = max_burst_size;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_set_l3_chksum_offload(struct doca_eth_txq *eth_txq,
						uint8_t enable_l3_chksum)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_txq ? &eth_txq->ctx : NULL, "set_l3_chksum_offload");

	if (status != DOCA_SUCCESS)
		return status;
	eth_txq->l3_csum = enable_l3_chksum != 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_set_l4_chksum_offload(struct doca_eth_txq *eth_txq,
						uint8_t enable_l4_chksum)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_txq ? &eth_txq->ctx : NULL, "set_l4_chksum_offload");

	if (status != DOCA_SUCCESS)
		return status;
	eth_txq->l4_csum = enable_l4_chksum != 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_apply_queue_id(struct doca_eth_txq *eth_txq, uint16_t queue_id)
{
	if (eth_txq == NULL) {
		sdp_error("apply_queue_id: NULL queue");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (eth_txq->ctx.state != DOCA_CTX_STATE_RUNNING) {
		sdp_error("eth_txq %p: apply_queue_id needs a RUNNING queue (it is %s)",
			  (void *)eth_txq, sdp_ctx_state_name(eth_txq->ctx.state));
		return DOCA_ERROR_BAD_STATE;
	}
	eth_txq->has_queue_id = 1;
	eth_txq->queue_id = queue_id;
	return DOCA_SUCCESS;
}

/* ---- capabilities --------------------------------------------------------------------------- */

static doca_error_t check_devinfo(const struct doca_devinfo *devinfo, const char *what)
{
	if (devinfo == NULL || sdp_devinfo_get_attr(devinfo) == NULL) {
		sdp_error("%s: NULL or bad devinfo", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return sdp_eth_devinfo_has_port(devinfo) ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_eth_txq_cap_is_type_supported(const struct doca_devinfo *devinfo,
						enum doca_eth_txq_type type,
						enum doca_eth_txq_data_path_type data_path_type)
{
	doca_error_t status = check_devinfo(devinfo, "txq cap_is_type_supported");

	if (status != DOCA_SUCCESS)
		return status;
	if (data_path_type != DOCA_ETH_TXQ_DATA_PATH_TYPE_CPU &&
	    data_path_type != DOCA_ETH_TXQ_DATA_PATH_TYPE_GPU) {
		sdp_error("txq cap_is_type_supported: unknown data path type %d",
			  (int)data_path_type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* REGULAR on both data paths (the GPU one through the engine, docs/gpunetio.md) */
	return type == DOCA_ETH_TXQ_TYPE_REGULAR ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_eth_txq_cap_get_max_burst_size(const struct doca_devinfo *devinfo,
						 uint32_t max_send_buf_list_len,
						 uint16_t max_lso_header_size,
						 uint32_t *max_burst_size)
{
	doca_error_t status;

	(void)max_lso_header_size; /* no LSO yet: the burst does not depend on it */
	if (max_burst_size == NULL || max_send_buf_list_len > 1) {
		sdp_error("txq cap_get_max_burst_size: %s",
			  max_burst_size == NULL ? "NULL output" :
						   "buffer lists longer than 1 are not supported");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = check_devinfo(devinfo, "txq cap_get_max_burst_size");
	if (status != DOCA_SUCCESS)
		return status;
	*max_burst_size = SDP_ETH_DEF_MAX_BURST * 64u;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_cap_is_l3_chksum_offload_supported(const struct doca_devinfo *devinfo)
{
	return check_devinfo(devinfo, "cap_is_l3_chksum_offload_supported");
}

doca_error_t doca_eth_txq_cap_is_l4_chksum_offload_supported(const struct doca_devinfo *devinfo)
{
	return check_devinfo(devinfo, "cap_is_l4_chksum_offload_supported");
}

/* ---- send tasks ----------------------------------------------------------------------------- */

static doca_error_t send_validate(const struct doca_task *task)
{
	const struct doca_eth_txq_task_send *t = (const struct doca_eth_txq_task_send *)task;
	size_t len = 0;

	if (t->pkt == NULL || doca_buf_get_data_len(t->pkt, &len) != DOCA_SUCCESS ||
	    len < TXQ_MIN_FRAME || len > SDP_ETH_MAX_FRAME) {
		sdp_error("eth_txq %p: send task %p needs a frame of %u to %u bytes (has %zu)",
			  (void *)t->txq, (const void *)t, TXQ_MIN_FRAME, SDP_ETH_MAX_FRAME, len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t send_submit(struct doca_task *task)
{
	struct doca_eth_txq_task_send *t = (struct doca_eth_txq_task_send *)task;
	struct doca_eth_txq *txq = t->txq;
	doca_error_t status = send_validate(task);

	if (status != DOCA_SUCCESS)
		return status;
	/* keep the order: nothing overtakes what already waits */
	if (sdp_list_is_empty(&txq->backlog) && send_one(txq, t)) {
		sdp_task_complete(task, DOCA_SUCCESS);
		return DOCA_SUCCESS;
	}
	sdp_list_add_tail(&txq->backlog, &t->item.link);
	return DOCA_SUCCESS;
}

static void send_free(struct doca_task *task)
{
	struct doca_eth_txq_task_send *t = (struct doca_eth_txq_task_send *)task;

	t->txq->num_send--;
	free(task);
}

static const struct sdp_task_ops send_task_ops = {
	.name = "eth_txq_send",
	.submit = send_submit,
	.validate = send_validate,
	.free = send_free,
};

static void send_done(struct doca_task *task, union doca_data task_user_data,
		      union doca_data ctx_user_data)
{
	struct doca_eth_txq_task_send *t = (struct doca_eth_txq_task_send *)task;
	doca_eth_txq_task_send_completion_cb_t cb =
		task->status == DOCA_SUCCESS ? t->txq->send_ok_cb : t->txq->send_err_cb;

	cb(t, task_user_data, ctx_user_data);
}

doca_error_t doca_eth_txq_task_send_set_conf(
	struct doca_eth_txq *eth_txq, doca_eth_txq_task_send_completion_cb_t task_completion_cb,
	doca_eth_txq_task_send_completion_cb_t task_error_cb, uint32_t task_send_num)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_txq ? &eth_txq->ctx : NULL, "task_send_set_conf");

	if (status != DOCA_SUCCESS)
		return status;
	if (task_completion_cb == NULL || task_error_cb == NULL || task_send_num == 0) {
		sdp_error("eth_txq %p: task_send_set_conf needs both callbacks and a nonzero "
			  "task count",
			  (void *)eth_txq);
		return DOCA_ERROR_INVALID_VALUE;
	}
	eth_txq->send_ok_cb = task_completion_cb;
	eth_txq->send_err_cb = task_error_cb;
	eth_txq->task_send_num = task_send_num;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_task_send_allocate_init(struct doca_eth_txq *eth_txq,
						  struct doca_buf *pkt, union doca_data user_data,
						  struct doca_eth_txq_task_send **task_send)
{
	struct doca_eth_txq_task_send *t;
	doca_error_t status;

	if (eth_txq == NULL || pkt == NULL || task_send == NULL) {
		sdp_error("task_send_allocate_init: NULL %s", eth_txq == NULL ? "queue" :
							      pkt == NULL     ? "packet buffer" :
										"output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_ctx_check_running(&eth_txq->ctx, "task_send_allocate_init");
	if (status != DOCA_SUCCESS)
		return status;
	if (eth_txq->task_send_num == 0) {
		sdp_error("eth_txq %p: send tasks are not configured "
			  "(doca_eth_txq_task_send_set_conf)",
			  (void *)eth_txq);
		return DOCA_ERROR_BAD_STATE;
	}
	if (eth_txq->num_send >= eth_txq->task_send_num) {
		sdp_error("eth_txq %p: all %u send tasks are allocated", (void *)eth_txq,
			  eth_txq->task_send_num);
		return DOCA_ERROR_NO_MEMORY;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		sdp_error("eth_txq %p: out of memory for a send task", (void *)eth_txq);
		return DOCA_ERROR_NO_MEMORY;
	}
	sdp_task_init(&t->task, &send_task_ops, &eth_txq->ctx, send_done, send_done);
	t->task.user_data = user_data;
	t->txq = eth_txq;
	t->pkt = pkt;
	sdp_list_head_init(&t->item.link);
	t->item.send = t;
	eth_txq->num_send++;
	*task_send = t;
	return DOCA_SUCCESS;
}

struct doca_task *doca_eth_txq_task_send_as_doca_task(struct doca_eth_txq_task_send *task_send)
{
	return task_send != NULL ? &task_send->task : NULL;
}

void doca_eth_txq_task_send_set_pkt(struct doca_eth_txq_task_send *task_send, struct doca_buf *pkt)
{
	if (task_send == NULL) {
		sdp_error("task_send_set_pkt: NULL task");
		return;
	}
	if (task_send->task.state == SDP_TASK_SUBMITTED) {
		sdp_error("task_send_set_pkt: task %p is submitted", (void *)task_send);
		return;
	}
	task_send->pkt = pkt;
}

doca_error_t doca_eth_txq_task_send_get_pkt(const struct doca_eth_txq_task_send *task_send,
					    struct doca_buf **pkt)
{
	if (task_send == NULL || pkt == NULL) {
		sdp_error("task_send_get_pkt: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*pkt = task_send->pkt;
	return DOCA_SUCCESS;
}

/* ---- batch send tasks ----------------------------------------------------------------------- */

static doca_error_t batch_submit(struct doca_task_batch *batch)
{
	struct txq_batch *b = (struct txq_batch *)batch;
	struct doca_eth_txq *txq = b->txq;

	b->next = 0;
	for (uint16_t i = 0; i < batch->tasks_num; i++)
		batch->status[i] = DOCA_SUCCESS;
	/* keep the order: nothing overtakes what already waits */
	if (sdp_list_is_empty(&txq->backlog) && batch_push(txq, b)) {
		sdp_task_batch_complete(batch);
		return DOCA_SUCCESS;
	}
	sdp_list_add_tail(&txq->backlog, &b->item.link);
	return DOCA_SUCCESS;
}

static void batch_deliver(struct doca_task_batch *batch, union doca_data ctx_user_data)
{
	struct txq_batch *b = (struct txq_batch *)batch;
	doca_eth_txq_task_batch_send_completion_cb_t cb =
		sdp_task_batch_get_status(batch) == DOCA_SUCCESS ? b->txq->batch_ok_cb :
								   b->txq->batch_err_cb;

	cb(batch, batch->tasks_num, ctx_user_data, batch->user_data, batch->task_user_data, b->pkts,
	   batch->status);
}

static void batch_free(struct doca_task_batch *batch)
{
	struct txq_batch *b = (struct txq_batch *)batch;
	struct doca_eth_txq *txq = b->txq;

	txq->batch_held--;
	b->pool_next = txq->batch_pool;
	txq->batch_pool = b;
}

static const struct sdp_task_batch_ops batch_send_ops = {
	.name = "eth_txq_batch_send",
	.submit = batch_submit,
	.deliver = batch_deliver,
	.free = batch_free,
};

doca_error_t doca_eth_txq_task_batch_send_set_conf(
	struct doca_eth_txq *eth_txq, enum doca_task_batch_max_tasks_number max_tasks_number,
	uint16_t num_task_batches,
	doca_eth_txq_task_batch_send_completion_cb_t success_completion_cb,
	doca_eth_txq_task_batch_send_completion_cb_t error_completion_cb)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_txq ? &eth_txq->ctx : NULL, "task_batch_send_set_conf");
	uint16_t max = sdp_task_batch_max_tasks(max_tasks_number);

	if (status != DOCA_SUCCESS)
		return status;
	if (max == 0 || num_task_batches == 0 || success_completion_cb == NULL ||
	    error_completion_cb == NULL) {
		sdp_error("eth_txq %p: task_batch_send_set_conf needs a known batch size (got %d), "
			  "a nonzero batch count (got %u) and both callbacks",
			  (void *)eth_txq, (int)max_tasks_number, num_task_batches);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (max != eth_txq->batch_max)
		batch_pool_drain(eth_txq); /* pooled batches have arrays of the old size */
	eth_txq->batch_max = max;
	eth_txq->batch_num = num_task_batches;
	eth_txq->batch_ok_cb = success_completion_cb;
	eth_txq->batch_err_cb = error_completion_cb;
	return DOCA_SUCCESS;
}

/* A batch of batch_max tasks with its arrays, from the pool or new; NULL without memory. */
static struct txq_batch *batch_get(struct doca_eth_txq *txq)
{
	struct txq_batch *b = txq->batch_pool;
	size_t max = txq->batch_max;

	if (b != NULL) {
		txq->batch_pool = b->pool_next;
		return b;
	}
	b = calloc(1, sizeof(*b) + max * (sizeof(struct doca_buf *) + sizeof(union doca_data) +
					  sizeof(doca_error_t)));
	if (b == NULL)
		return NULL;
	b->txq = txq;
	b->pkts = (struct doca_buf **)(b + 1);
	b->batch.task_user_data = (union doca_data *)(b->pkts + max);
	b->batch.status = (doca_error_t *)(b->batch.task_user_data + max);
	sdp_list_head_init(&b->item.link);
	b->item.batch = b;
	return b;
}

doca_error_t doca_eth_txq_task_batch_send_allocate(struct doca_eth_txq *eth_txq, uint16_t tasks_num,
						   union doca_data task_batch_user_data,
						   struct doca_buf ***pkt_array,
						   union doca_data **task_user_data_array,
						   struct doca_task_batch **task_batch)
{
	struct txq_batch *b;
	doca_error_t status;

	if (eth_txq == NULL || pkt_array == NULL || task_user_data_array == NULL ||
	    task_batch == NULL) {
		sdp_error("task_batch_send_allocate: NULL %s",
			  eth_txq == NULL	       ? "queue" :
			  pkt_array == NULL	       ? "pkt_array output" :
			  task_user_data_array == NULL ? "task_user_data_array output" :
							 "task_batch output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_ctx_check_running(&eth_txq->ctx, "task_batch_send_allocate");
	if (status != DOCA_SUCCESS)
		return status;
	if (eth_txq->batch_max == 0) {
		sdp_error("eth_txq %p: batch send tasks are not configured "
			  "(doca_eth_txq_task_batch_send_set_conf)",
			  (void *)eth_txq);
		return DOCA_ERROR_BAD_STATE;
	}
	if (tasks_num == 0 || tasks_num > eth_txq->batch_max) {
		sdp_error("eth_txq %p: a batch of %u send tasks; from 1 to %u are possible",
			  (void *)eth_txq, tasks_num, eth_txq->batch_max);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (eth_txq->batch_held >= eth_txq->batch_num) {
		sdp_error("eth_txq %p: all %u batch send tasks are allocated", (void *)eth_txq,
			  eth_txq->batch_num);
		return DOCA_ERROR_NO_MEMORY;
	}
	b = batch_get(eth_txq);
	if (b == NULL) {
		sdp_error("eth_txq %p: out of memory for a batch of %u send tasks", (void *)eth_txq,
			  eth_txq->batch_max);
		return DOCA_ERROR_NO_MEMORY;
	}
	sdp_task_batch_init(&b->batch, &batch_send_ops, &eth_txq->ctx, tasks_num,
			    eth_txq->batch_max, task_batch_user_data, b->batch.task_user_data,
			    b->batch.status);
	memset(b->pkts, 0, sizeof(*b->pkts) * eth_txq->batch_max);
	b->next = 0;
	eth_txq->batch_held++;
	*pkt_array = b->pkts;
	*task_user_data_array = b->batch.task_user_data;
	*task_batch = &b->batch;
	return DOCA_SUCCESS;
}

/* ---- softdpu extension ---------------------------------------------------------------------- */

doca_error_t sdp_eth_txq_get_counters(const struct doca_eth_txq *eth_txq,
				      struct sdp_eth_txq_counters *counters)
{
	if (eth_txq == NULL || counters == NULL) {
		sdp_error("sdp_eth_txq_get_counters: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*counters = eth_txq->counters;
	if (eth_txq->gpu_tx != NULL)
		sdp_eth_gpu_txq_counters(eth_txq->gpu_tx, counters);
	return DOCA_SUCCESS;
}

/* ---- GPU data path (doca_eth_txq_gpu_data_path.h, wait-on-time) ----------------------------- */

doca_error_t doca_eth_txq_get_gpu_handle(const struct doca_eth_txq *eth_txq,
					 struct doca_gpu_eth_txq **eth_txq_ext)
{
	if (eth_txq == NULL || eth_txq_ext == NULL) {
		sdp_error("doca_eth_txq_get_gpu_handle: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (eth_txq->ctx.state != DOCA_CTX_STATE_RUNNING) {
		sdp_error("eth_txq %p: get_gpu_handle needs a RUNNING queue (it is %s)",
			  (const void *)eth_txq, sdp_ctx_state_name(eth_txq->ctx.state));
		return DOCA_ERROR_BAD_STATE;
	}
	if (eth_txq->gpu_tx == NULL) {
		sdp_error("eth_txq %p: get_gpu_handle on a CPU data path queue",
			  (const void *)eth_txq);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	*eth_txq_ext = sdp_eth_gpu_txq_handle(eth_txq->gpu_tx);
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_set_wait_on_time_offload(struct doca_eth_txq *eth_txq)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_txq ? &eth_txq->ctx : NULL, "set_wait_on_time_offload");

	if (status == DOCA_SUCCESS)
		eth_txq->wait_on_time = 1;
	return status;
}

doca_error_t doca_eth_txq_cap_get_wait_on_time_offload_supported(
	const struct doca_devinfo *devinfo, enum doca_eth_wait_on_time_type *wait_on_time_mode)
{
	doca_error_t status = check_devinfo(devinfo, "cap_get_wait_on_time_offload_supported");

	if (status != DOCA_SUCCESS)
		return status;
	if (wait_on_time_mode == NULL) {
		sdp_error("cap_get_wait_on_time_offload_supported: NULL output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* the engine holds each descriptor until its time (CLOCK_REALTIME) */
	*wait_on_time_mode = DOCA_ETH_WAIT_ON_TIME_TYPE_NATIVE;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_calculate_timestamp(struct doca_eth_txq *eth_txq, uint64_t timestamp_ns,
					      uint64_t *wait_on_time_value)
{
	uint64_t v;

	if (eth_txq == NULL || wait_on_time_value == NULL) {
		sdp_error("doca_eth_txq_calculate_timestamp: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (eth_txq->ctx.state != DOCA_CTX_STATE_RUNNING || !eth_txq->wait_on_time) {
		sdp_error("eth_txq %p: calculate_timestamp needs a RUNNING queue with wait-on-time",
			  (void *)eth_txq);
		return DOCA_ERROR_BAD_STATE;
	}
	/* DOCA's format: seconds in the high 32 bits, nanoseconds in the low ones, big-endian */
	v = (timestamp_ns / 1000000000ull) << 32 | (timestamp_ns % 1000000000ull);
	*wait_on_time_value = __builtin_bswap64(v);
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_gpu_set_completion_on_gpu(struct doca_eth_txq *eth_txq)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_txq ? &eth_txq->ctx : NULL, "gpu_set_completion_on_gpu");

	if (status == DOCA_SUCCESS)
		eth_txq->completion_on_gpu = 1;
	return status;
}

doca_error_t doca_eth_txq_gpu_set_uar_on_cpu(struct doca_eth_txq *eth_txq)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_txq ? &eth_txq->ctx : NULL, "gpu_set_uar_on_cpu");

	if (status == DOCA_SUCCESS)
		eth_txq->uar_on_cpu = 1;
	return status;
}

doca_error_t doca_eth_txq_gpu_set_sq_mem_type(struct doca_eth_txq *eth_txq,
					      enum doca_gpu_mem_type mem_type)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_txq ? &eth_txq->ctx : NULL, "gpu_set_sq_mem_type");

	if (status != DOCA_SUCCESS)
		return status;
	if (mem_type != DOCA_GPU_MEM_TYPE_GPU && mem_type != DOCA_GPU_MEM_TYPE_GPU_CPU &&
	    mem_type != DOCA_GPU_MEM_TYPE_CPU_GPU) {
		sdp_error("eth_txq %p: unknown memory type %d", (void *)eth_txq, (int)mem_type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_gpu_cpu_proxy_progress(struct doca_eth_txq *txq)
{
	if (txq == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	/* called in a busy loop: no logging; the engine rings nothing and drains on its own */
	return txq->ctx.state == DOCA_CTX_STATE_RUNNING && txq->gpu_tx != NULL ?
		       DOCA_SUCCESS :
		       DOCA_ERROR_BAD_STATE;
}

doca_error_t doca_eth_txq_gpu_event_error_send_packet_register(
	struct doca_eth_txq *eth_txq,
	doca_eth_txq_gpu_event_error_send_packet_cb_t event_error_send_packet_cb,
	union doca_data event_user_data)
{
	doca_error_t status = sdp_ctx_check_idle(eth_txq ? &eth_txq->ctx : NULL,
						 "gpu_event_error_send_packet_register");

	if (status != DOCA_SUCCESS)
		return status;
	if (event_error_send_packet_cb == NULL) {
		sdp_error("eth_txq %p: NULL error event callback", (void *)eth_txq);
		return DOCA_ERROR_INVALID_VALUE;
	}
	eth_txq->ev_error_cb = event_error_send_packet_cb;
	eth_txq->ev_error_ud = event_user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_gpu_event_notify_send_packet_register(
	struct doca_eth_txq *eth_txq,
	doca_eth_txq_gpu_event_notify_send_packet_cb_t event_notify_send_packet_cb,
	union doca_data event_user_data)
{
	doca_error_t status = sdp_ctx_check_idle(eth_txq ? &eth_txq->ctx : NULL,
						 "gpu_event_notify_send_packet_register");

	if (status != DOCA_SUCCESS)
		return status;
	if (event_notify_send_packet_cb == NULL) {
		sdp_error("eth_txq %p: NULL notify event callback", (void *)eth_txq);
		return DOCA_ERROR_INVALID_VALUE;
	}
	eth_txq->ev_notify_cb = event_notify_send_packet_cb;
	eth_txq->ev_notify_ud = event_user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_gpu_event_error_send_packet_get_position(
	const struct doca_eth_txq_gpu_event_error_send_packet *event_error, uint16_t *packet_index)
{
	if (event_error == NULL || packet_index == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*packet_index = event_error->position;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_gpu_event_notify_send_packet_get_position(
	const struct doca_eth_txq_gpu_event_notify_send_packet *event_notify,
	uint16_t *packet_index)
{
	if (event_notify == NULL || packet_index == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*packet_index = event_notify->position;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_gpu_event_notify_send_packet_get_timestamp(
	const struct doca_eth_txq_gpu_event_notify_send_packet *event_notify,
	uint64_t *packet_timestamp)
{
	if (event_notify == NULL || packet_timestamp == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*packet_timestamp = event_notify->timestamp;
	return DOCA_SUCCESS;
}
