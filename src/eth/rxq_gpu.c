/*
 * libdoca_eth: the receive queue's GPU data path (doca_eth_rxq_gpu_data_path.h, and
 * doca_eth_rxq_get_gpu_handle of doca_eth_rxq.h): the handle and the GPU setters. The engine
 * side of GPU queues (rings in GPU-visible memory) is gpu.c.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "doca_eth_rxq_gpu_data_path.h"
#include "sdp_eth_int.h"
#include "sdp_log.h"

SDP_LOG_COMPONENT("eth_rxq");

doca_error_t doca_eth_rxq_get_gpu_handle(const struct doca_eth_rxq *eth_rxq,
					 struct doca_gpu_eth_rxq **eth_rxq_ext)
{
	if (eth_rxq == NULL || eth_rxq_ext == NULL) {
		sdp_error("NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (eth_rxq->ctx.state != DOCA_CTX_STATE_RUNNING) {
		sdp_error("eth_rxq %p is %s, expected RUNNING", (const void *)eth_rxq,
			  sdp_ctx_state_name(eth_rxq->ctx.state));
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
