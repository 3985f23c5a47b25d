/*
 * gpunetio_simple_send: the persistent send kernels. Every thread sends its own packet (already
 * in GPU memory) once per round; the completions of the NOTIFY-flagged sends bound the number
 * of descriptors in flight; thread 0 publishes the totals. Both stop at the CPU's exit flag or
 * at a completion error (which they report and turn into the exit flag).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <cuda_runtime.h>

#include <doca_gpunetio_dev_eth_txq.cuh>
#include <doca_log.h>

#include "gpunetio_simple_send.h"

DOCA_LOG_REGISTER(GPUNETIO_SIMPLE_SEND_KERNEL);

static __device__ void report_error(uint32_t err, uint32_t *exit_cond, struct tx_stats *stats)
{
	printf("send completion failed: error %u\n", err);
	DOCA_GPUNETIO_VOLATILE(stats->error) = err;
	__threadfence_system();
	DOCA_GPUNETIO_VOLATILE(*exit_cond) = 1;
}

/* Several blocks share the queue; doca_gpu_dev_eth_txq_send does the reservation. */
template <enum doca_gpu_dev_eth_exec_scope scope>
__global__ void send_shared_qp(struct doca_gpu_eth_txq *txq, uint64_t pkt_addr, uint32_t mkey_be,
			       uint32_t pkt_size, uint32_t *exit_cond, struct tx_stats *stats)
{
	__shared__ uint32_t stop, err;
	const uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
	const uint64_t addr = pkt_addr + (uint64_t)tid * MBUF_SIZE;
	enum doca_gpu_eth_send_flags flags = DOCA_GPUNETIO_ETH_SEND_FLAG_NONE;
	uint32_t num_cqe;
	doca_gpu_dev_eth_ticket_t ticket;

	/* who asks for a completion: every thread, the last lane of each warp, the last thread */
	if (scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD) {
		flags = DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY;
		num_cqe = blockDim.x;
	} else if (scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP) {
		if (doca_gpu_dev_eth_get_lane_id() == DOCA_GPUNETIO_ETH_WARP_SIZE - 1)
			flags = DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY;
		num_cqe = blockDim.x / DOCA_GPUNETIO_ETH_WARP_SIZE;
	} else {
		if (threadIdx.x == blockDim.x - 1)
			flags = DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY;
		num_cqe = 1;
	}
	if (threadIdx.x == 0)
		err = 0;
	for (;;) {
		if (threadIdx.x == 0)
			stop = DOCA_GPUNETIO_VOLATILE(*exit_cond);
		__syncthreads();
		if (stop != 0 || err != 0)
			break;
		doca_gpu_dev_eth_txq_send<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
					  DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
					  DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO, scope>(
			txq, addr, mkey_be, pkt_size, flags, &ticket);
		__syncthreads();
		if (threadIdx.x == 0) {
			uint32_t left = num_cqe;

			/* each blocking poll is bounded: retry (a slow receiver) until the exit flag */
			while (left > 0 && DOCA_GPUNETIO_VOLATILE(*exit_cond) == 0) {
				uint32_t done = 0;
				doca_error_t ret = doca_gpu_dev_eth_txq_poll_completion<
					DOCA_GPUNETIO_ETH_CQ_POLL_LAST>(
					txq, left, DOCA_GPUNETIO_ETH_WAIT_FLAG_B, &done);

				left -= done;
				atomicAdd((unsigned long long *)&stats->completions, done);
				if (ret != DOCA_SUCCESS && ret != DOCA_ERROR_TIME_OUT) {
					err = (uint32_t)ret;
					report_error(err, exit_cond, stats);
					break;
				}
			}
			atomicAdd((unsigned long long *)&stats->packets, blockDim.x);
			__threadfence_system();
		}
		__syncthreads();
	}
}

/* One block prepares descriptors itself and rings the doorbell once per round. */
__global__ void send_own_qp(struct doca_gpu_eth_txq *txq, uint64_t pkt_addr, uint32_t mkey_be,
			    uint32_t pkt_size, uint32_t *exit_cond, struct tx_stats *stats)
{
	__shared__ uint32_t stop, err;
	const uint64_t addr = pkt_addr + (uint64_t)threadIdx.x * MBUF_SIZE;
	const bool last = threadIdx.x == blockDim.x - 1;
	uint64_t wqe_idx = 0, cqe_idx = 0, posted = 0;

	if (threadIdx.x == 0)
		err = 0;
	for (;;) {
		uint64_t my_idx = wqe_idx + threadIdx.x;
		struct doca_gpu_dev_eth_txq_wqe *wqe;

		if (threadIdx.x == 0)
			stop = DOCA_GPUNETIO_VOLATILE(*exit_cond);
		__syncthreads();
		if (stop != 0 || err != 0)
			break;
		wqe = doca_gpu_dev_eth_txq_get_wqe_ptr(txq, my_idx);
		(void)doca_gpu_dev_eth_txq_wqe_prepare_send(
			txq, wqe, my_idx, addr, mkey_be, pkt_size,
			last ? DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY :
			       DOCA_GPUNETIO_ETH_SEND_FLAG_NONE);
		__syncthreads();
		if (last) {
			doca_error_t ret;

			doca_gpu_dev_eth_txq_submit(txq, wqe_idx + blockDim.x);
			do /* each blocking poll is bounded: retry until the exit flag */
				ret = doca_gpu_dev_eth_txq_poll_completion_at<
					DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
					DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA>(
					txq, cqe_idx, DOCA_GPUNETIO_ETH_WAIT_FLAG_B);
			while (ret == DOCA_ERROR_TIME_OUT &&
			       DOCA_GPUNETIO_VOLATILE(*exit_cond) == 0);
			if (ret == DOCA_ERROR_TIME_OUT) {
				/* stopped while waiting: not an error */
			} else if (ret != DOCA_SUCCESS) {
				err = (uint32_t)ret;
				report_error(err, exit_cond, stats);
			} else {
				cqe_idx++;
				posted += blockDim.x;
				DOCA_GPUNETIO_VOLATILE(stats->completions) = cqe_idx;
				DOCA_GPUNETIO_VOLATILE(stats->packets) = posted;
				__threadfence_system();
			}
		}
		wqe_idx += blockDim.x;
		__syncthreads();
	}
}

extern "C" doca_error_t kernel_send_packets(void *stream, struct doca_gpu_eth_txq *txq_gpu,
					    uint64_t pkt_addr, uint32_t mkey_be, uint32_t pkt_size,
					    uint32_t threads, bool shared_qp,
					    enum doca_gpu_dev_eth_exec_scope scope,
					    uint32_t *exit_cond, struct tx_stats *stats)
{
	cudaStream_t s = (cudaStream_t)stream;
	uint32_t per_block = threads / SHARED_QP_BLOCKS;
	cudaError_t e;

	if (!shared_qp)
		send_own_qp<<<1, threads, 0, s>>>(txq_gpu, pkt_addr, mkey_be, pkt_size, exit_cond,
						  stats);
	else if (scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD)
		send_shared_qp<DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>
			<<<SHARED_QP_BLOCKS, per_block, 0, s>>>(txq_gpu, pkt_addr, mkey_be,
								pkt_size, exit_cond, stats);
	else if (scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP)
		send_shared_qp<DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP>
			<<<SHARED_QP_BLOCKS, per_block, 0, s>>>(txq_gpu, pkt_addr, mkey_be,
								pkt_size, exit_cond, stats);
	else
		send_shared_qp<DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK>
			<<<SHARED_QP_BLOCKS, per_block, 0, s>>>(txq_gpu, pkt_addr, mkey_be,
								pkt_size, exit_cond, stats);
	e = cudaGetLastError();
	if (e != cudaSuccess) {
		DOCA_LOG_ERR("launching the send kernel: %s", cudaGetErrorString(e));
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}
