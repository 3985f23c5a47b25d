/*
 * gpunetio_send_wait_time: one block posts NUM_BURST_SEND bursts, each held by the queue until
 * its send time (doca_gpu_dev_eth_txq_wait_send, block scope; the last thread of each burst asks
 * for a completion), then thread 0 polls the completions, bounded by a time limit.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <cuda_runtime.h>

#include <doca_gpunetio_dev_eth_txq.cuh>
#include <doca_log.h>

#include "gpunetio_send_wait_time.h"

DOCA_LOG_REGISTER(GPUNETIO_SEND_WAIT_TIME_KERNEL);

static __device__ uint64_t now_ns(void)
{
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__global__ void send_wait_time(struct doca_gpu_eth_txq *txq, uint64_t *wait_on_time,
			       uint64_t pkt_addr, uint32_t mkey_be, uint64_t timeout_ns,
			       struct wt_result *result)
{
	doca_gpu_dev_eth_ticket_t ticket;
	enum doca_gpu_eth_send_flags flags = threadIdx.x == blockDim.x - 1 ?
						     DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY :
						     DOCA_GPUNETIO_ETH_SEND_FLAG_NONE;

	for (uint32_t b = 0; b < NUM_BURST_SEND; b++) {
		uint64_t addr =
			pkt_addr + (uint64_t)(b * NUM_PACKETS_X_BURST + threadIdx.x) * PACKET_SIZE;

		doca_gpu_dev_eth_txq_wait_send<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA,
					       DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA,
					       DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
					       DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK>(
			txq, DOCA_GPUNETIO_VOLATILE(wait_on_time[b]), addr, mkey_be, PACKET_SIZE,
			flags, &ticket);
	}
	if (threadIdx.x == 0) {
		uint64_t end = now_ns() + timeout_ns;
		uint32_t got = 0;

		/* each blocking poll is itself bounded; repeat until all or the time limit */
		while (got < NUM_BURST_SEND && now_ns() < end) {
			uint32_t done = 0;
			doca_error_t ret = doca_gpu_dev_eth_txq_poll_completion<
				DOCA_GPUNETIO_ETH_CQ_POLL_LAST,
				DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA,
				DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA>(
				txq, 1, DOCA_GPUNETIO_ETH_WAIT_FLAG_B, &done);

			if (ret != DOCA_SUCCESS && ret != DOCA_ERROR_TIME_OUT &&
			    ret != DOCA_ERROR_AGAIN) {
				printf("send completion failed: error %d\n", (int)ret);
				result->error = (uint32_t)ret;
				break;
			}
			if (ret == DOCA_SUCCESS)
				got += done;
		}
		result->completions = got;
		__threadfence_system();
	}
}

extern "C" doca_error_t kernel_send_wait_time(void *stream, struct doca_gpu_eth_txq *txq_gpu,
					      uint64_t *wait_on_time, uint64_t pkt_addr,
					      uint32_t mkey_be, uint64_t timeout_ns,
					      struct wt_result *result)
{
	cudaError_t e;

	send_wait_time<<<1, NUM_PACKETS_X_BURST, 0, (cudaStream_t)stream>>>(
		txq_gpu, wait_on_time, pkt_addr, mkey_be, timeout_ns, result);
	e = cudaGetLastError();
	if (e != cudaSuccess) {
		DOCA_LOG_ERR("launching the kernel: %s", cudaGetErrorString(e));
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}
