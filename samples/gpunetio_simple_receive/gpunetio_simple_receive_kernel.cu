/*
 * gpunetio_simple_receive: the persistent receive kernel. One block polls one CYCLIC receive
 * queue with doca_gpu_dev_eth_rxq_recv in the chosen execution scope (thread: thread 0 alone;
 * warp: the first warp; block: every thread), every thread checks its share of each batch (an
 * Ethernet/IPv4/UDP frame at least as long as its IPv4 length says) and thread 0 publishes the
 * running totals until the CPU sets the exit flag.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <cuda_runtime.h>

#include <doca_gpunetio_dev_eth_rxq.cuh>
#include <doca_log.h>

#include "gpunetio_simple_receive.h"

DOCA_LOG_REGISTER(GPUNETIO_SIMPLE_RECEIVE_KERNEL);

static __device__ bool frame_ok(const uint8_t *f, uint32_t bytes)
{
	uint32_t ip_len;

	if (bytes < 42 || f[12] != 0x08 || f[13] != 0x00 || (f[14] >> 4) != 4 || f[23] != 17)
		return false;
	ip_len = (uint32_t)f[16] << 8 | f[17];
	return ip_len + 14 <= bytes;
}

/* Whether this thread takes part in a receive call of this scope: thread 0, the first warp, all. */
template <enum doca_gpu_dev_eth_exec_scope scope>
static __device__ bool in_scope()
{
	if (scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD)
		return threadIdx.x == 0;
	if (scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP)
		return threadIdx.x < DOCA_GPUNETIO_ETH_WARP_SIZE;
	return true;
}

template <enum doca_gpu_dev_eth_exec_scope scope>
__global__ void receive_packets(struct doca_gpu_eth_rxq *rxq, uint32_t *exit_cond,
				struct rx_stats *stats)
{
	__shared__ uint64_t first_idx;
	__shared__ uint32_t num_pkts;
	__shared__ struct doca_gpu_dev_eth_rxq_attr attr[MAX_RX_NUM_PKTS];
	__shared__ unsigned long long batch_bytes, batch_bad;
	__shared__ uint32_t rx_error, stop;
	uint64_t tot_pkts = 0, tot_bytes = 0, tot_bad = 0;

	if (threadIdx.x == 0)
		rx_error = 0;
	for (;;) {
		doca_error_t ret = DOCA_SUCCESS;
		uint64_t first;
		uint32_t n, err;

		/* one reader of the flag, so every thread leaves the loop in the same iteration */
		if (threadIdx.x == 0) {
			stop = DOCA_GPUNETIO_VOLATILE(*exit_cond);
			batch_bytes = 0;
			batch_bad = 0;
		}
		__syncthreads();
		if (stop != 0)
			break;
		if (in_scope<scope>())
			ret = doca_gpu_dev_eth_rxq_recv<scope, DOCA_GPUNETIO_ETH_MCST_AUTO,
							DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
							DOCA_GPUNETIO_ETH_RX_ATTR_ALL>(
				rxq, MAX_RX_NUM_PKTS, MAX_RX_TIMEOUT_NS, &first_idx, &num_pkts,
				attr);
		if (ret != DOCA_SUCCESS)
			atomicExch(&rx_error, (uint32_t)ret);
		__syncthreads();
		n = num_pkts;
		first = first_idx;
		err = rx_error;
		__syncthreads(); /* all have read the batch before the next call rewrites it */
		if (err != 0) {
			if (threadIdx.x == 0) {
				printf("receive failed: error %u\n", err);
				stats->error = err;
				__threadfence_system();
				DOCA_GPUNETIO_VOLATILE(*exit_cond) = 1;
			}
			break;
		}
		if (n == 0)
			continue;
		{
			unsigned long long my_bytes = 0, my_bad = 0;

			for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
				const uint8_t *f =
					(const uint8_t *)doca_gpu_dev_eth_rxq_get_pkt_addr(
						rxq, first + i);

				my_bytes += attr[i].bytes;
				if (!frame_ok(f, attr[i].bytes))
					my_bad++;
			}
			atomicAdd(&batch_bytes, my_bytes);
			atomicAdd(&batch_bad, my_bad);
		}
		__syncthreads();
		if (threadIdx.x == 0) {
			tot_pkts += n;
			tot_bytes += batch_bytes;
			tot_bad += batch_bad;
			DOCA_GPUNETIO_VOLATILE(stats->bytes) = tot_bytes;
			DOCA_GPUNETIO_VOLATILE(stats->bad) = tot_bad;
			__threadfence_system();
			DOCA_GPUNETIO_VOLATILE(stats->packets) = tot_pkts;
			__threadfence_system();
		}
	}
}

extern "C" doca_error_t kernel_receive_packets(void *stream, struct doca_gpu_eth_rxq *rxq_gpu,
					       uint32_t *exit_cond, struct rx_stats *stats,
					       enum doca_gpu_dev_eth_exec_scope scope)
{
	cudaStream_t s = (cudaStream_t)stream;
	cudaError_t e;

	if (scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD)
		receive_packets<DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>
			<<<1, CUDA_BLOCK_THREADS, 0, s>>>(rxq_gpu, exit_cond, stats);
	else if (scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP)
		receive_packets<DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP>
			<<<1, CUDA_BLOCK_THREADS, 0, s>>>(rxq_gpu, exit_cond, stats);
	else
		receive_packets<DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK>
			<<<1, CUDA_BLOCK_THREADS, 0, s>>>(rxq_gpu, exit_cond, stats);
	e = cudaGetLastError();
	if (e != cudaSuccess) {
		DOCA_LOG_ERR("launching the receive kernel: %s", cudaGetErrorString(e));
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}
