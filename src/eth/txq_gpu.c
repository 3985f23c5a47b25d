/*
 * libdoca_eth: the send queue's GPU data path (doca_eth_txq_gpu_data_path.h, and
 * doca_eth_txq_get_gpu_handle of doca_eth_txq.h): start and stop of the GPU path, the send
 * events, the GPU setters. The engine side (descriptors sent by the engine thread) is gpu.c.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "doca_eth_txq_gpu_data_path.h"
#include "sdp_eth_int.h"
#include "sdp_log.h"

SDP_LOG_COMPONENT("eth_txq");

/* The events handed to the GPU send queue's callbacks (valid during the callback). */
struct doca_eth_txq_gpu_event_error_send_packet {
	uint16_t position;
};
struct doca_eth_txq_gpu_event_notify_send_packet {
	uint16_t position;
	uint64_t timestamp;
};

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

doca_error_t sdp_eth_txq_gpu_start(struct doca_eth_txq *txq)
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

/* Stop the GPU data path of a send queue (from the context's stop): its last events, its counters. */
void sdp_eth_txq_gpu_stop(struct doca_eth_txq *txq)
{
	struct sdp_eth_txq_counters c = {0};

	(void)sdp_eth_gpu_txq_progress(txq->gpu_tx); /* last events */
	sdp_eth_gpu_txq_counters(txq->gpu_tx, &c);
	txq->counters.packets += c.packets;
	txq->counters.bytes += c.bytes;
	txq->counters.errors += c.errors;
	sdp_eth_gpu_txq_stop(txq->gpu_tx);
	txq->gpu_tx = NULL;
}

/* ---- the API ------------------------------------------------------------------------------- */

doca_error_t doca_eth_txq_get_gpu_handle(const struct doca_eth_txq *eth_txq,
					 struct doca_gpu_eth_txq **eth_txq_ext)
{
	if (eth_txq == NULL || eth_txq_ext == NULL) {
		sdp_error("NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (eth_txq->ctx.state != DOCA_CTX_STATE_RUNNING) {
		sdp_error("eth_txq %p is %s, expected RUNNING", (const void *)eth_txq,
			  sdp_ctx_state_name(eth_txq->ctx.state));
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
