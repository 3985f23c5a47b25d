/*
 * libdoca_eth: the send queue context (doca_eth_txq.h) and its CPU data path
 * (doca_eth_txq_cpu_data_path.h, send tasks).
 *
 * A submitted send task goes to the backend at once (tx_burst copies the frame). When the
 * backend is full, the task waits in the queue's backlog, in order, and doca_pe_progress()
 * retries; tasks still waiting when the queue stops complete with DOCA_ERROR_IO_FAILED.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdlib.h>
#include <string.h>

#include "doca_buf.h"
#include "sdp_eth_int.h"
#include "sdp_log.h"
#include "sdp_provider.h"

SDP_LOG_COMPONENT("eth_txq");

#define TXQ_MIN_FRAME 14 /* an Ethernet header */

struct doca_eth_txq {
	struct doca_ctx ctx; /* first: the context base */
	struct doca_dev *dev;
	uint32_t max_burst_size;
	uint8_t l3_csum;
	uint8_t l4_csum;
	doca_eth_txq_task_send_completion_cb_t send_ok_cb;
	doca_eth_txq_task_send_completion_cb_t send_err_cb;
	uint32_t task_send_num;
	int has_queue_id;
	uint16_t queue_id;
	struct sdp_eth_dport *dport; /* while started */
	sdp_list_link_t backlog;     /* tasks the backend had no room for (application thread) */
	uint8_t *stage;		     /* checksum offload: the frame as sent (dport->tx_lock) */
	struct sdp_eth_txq_counters counters; /* application thread; read by get_counters */
};

struct doca_eth_txq_task_send {
	struct doca_task task; /* first */
	struct doca_eth_txq *txq;
	struct doca_buf *pkt;
	sdp_list_link_t link; /* in txq->backlog */
};

/* Hand one frame to the backend: 1 taken, 0 full now. */
static int send_one(struct doca_eth_txq *txq, struct doca_eth_txq_task_send *t)
{
	struct sdp_eth_dport *dport = txq->dport;
	struct sdp_pkt pkt = {0};
	void *data = NULL;
	size_t len = 0;
	uint16_t taken;

	(void)doca_buf_get_data(t->pkt, &data);
	(void)doca_buf_get_data_len(t->pkt, &len);
	pkt.data = data;
	pkt.len = (uint32_t)len;
	pthread_mutex_lock(&dport->tx_lock);
	if (txq->l3_csum || txq->l4_csum) {
		/* the application's buffer stays as it is: checksums go into the copy sent */
		memcpy(txq->stage, data, len);
		sdp_eth_csum_fill(txq->stage, (uint32_t)len, txq->l3_csum, txq->l4_csum);
		pkt.data = txq->stage;
	}
	taken = dport->ops->tx_burst(dport->port, 0, &pkt, 1);
	pthread_mutex_unlock(&dport->tx_lock);
	if (taken == 0)
		return 0;
	txq->counters.packets++;
	txq->counters.bytes += len;
	return 1;
}

/* Send what waits in the backlog, in order, while the backend takes it. */
static int backlog_push(struct doca_eth_txq *txq)
{
	int done = 0;

	while (!sdp_list_is_empty(&txq->backlog)) {
		struct doca_eth_txq_task_send *t =
			sdp_container_of(txq->backlog.next, struct doca_eth_txq_task_send, link);

		if (!send_one(txq, t))
			break;
		sdp_list_del(&t->link);
		sdp_task_complete(&t->task, DOCA_SUCCESS);
		done = 1;
	}
	return done;
}

/* ---- context ops ---------------------------------------------------------------------------- */

static doca_error_t txq_start(struct doca_ctx *ctx)
{
	struct doca_eth_txq *txq = (struct doca_eth_txq *)ctx;

	if (ctx->gpu != NULL) {
		sdp_error("eth_txq %p: the GPU data path is not available yet", (void *)txq);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (txq->task_send_num == 0) {
		sdp_error("eth_txq %p: started without doca_eth_txq_task_send_set_conf()",
			  (void *)txq);
		return DOCA_ERROR_BAD_STATE;
	}
	txq->has_queue_id = 0;
	return sdp_eth_dport_get(txq->dev, &txq->dport);
}

static doca_error_t txq_stop(struct doca_ctx *ctx)
{
	struct doca_eth_txq *txq = (struct doca_eth_txq *)ctx;
	struct doca_eth_txq_task_send *t, *tmp;

	if (txq->dport == NULL)
		return DOCA_SUCCESS;
	sdp_list_for_each_safe(t, tmp, &txq->backlog, link) {
		sdp_list_del(&t->link);
		txq->counters.errors++;
		sdp_task_complete(&t->task, DOCA_ERROR_IO_FAILED);
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
	return backlog_push(txq);
}

static const struct sdp_ctx_ops txq_ctx_ops = {
	.name = "eth_txq",
	.start = txq_start,
	.stop = txq_stop,
	.progress = txq_progress,
};

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
	/* the GPU data path arrives with GPUNetIO (issue 5) */
	if (type == DOCA_ETH_TXQ_TYPE_REGULAR && data_path_type == DOCA_ETH_TXQ_DATA_PATH_TYPE_CPU)
		return DOCA_SUCCESS;
	return DOCA_ERROR_NOT_SUPPORTED;
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
	sdp_list_add_tail(&txq->backlog, &t->link);
	return DOCA_SUCCESS;
}

static void send_free(struct doca_task *task)
{
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
	if (eth_txq->ctx.num_allocated >= eth_txq->task_send_num) {
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
	sdp_list_head_init(&t->link);
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

/* ---- softdpu extension ---------------------------------------------------------------------- */

doca_error_t sdp_eth_txq_get_counters(const struct doca_eth_txq *eth_txq,
				      struct sdp_eth_txq_counters *counters)
{
	if (eth_txq == NULL || counters == NULL) {
		sdp_error("sdp_eth_txq_get_counters: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*counters = eth_txq->counters;
	return DOCA_SUCCESS;
}
