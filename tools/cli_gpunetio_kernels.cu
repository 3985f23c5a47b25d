/*
 * The GPU side of `softdpu ladder gpunetio` and `softdpu rollback gpunetio` (cli_gpunetio.h):
 * GPU selection, streams, and the persistent kernels (receive until a stop flag; send one
 * frame). Compiled only when CUDA is enabled (tools/meson.build); cli_gpunetio.c answers
 * "built without CUDA" otherwise.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>
#include <unistd.h>

#include <doca_gpunetio_dev_eth_rxq.cuh>
#include <doca_gpunetio_dev_eth_txq.cuh>

#include "cli_gpunetio.h"

#define RX_MAX 32

extern "C" int cg_cuda_built(void)
{
	return 1;
}

extern "C" int cg_gpu_available(char *why, size_t len)
{
	cudaError_t e;
	int n = 0;

	if (access("/dev/nvidiactl", F_OK) != 0) {
		snprintf(why, len, "no NVIDIA driver (/dev/nvidiactl is missing)");
		return 0;
	}
	e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess) {
		snprintf(why, len, "no usable CUDA driver: %s", cudaGetErrorString(e));
		return 0;
	}
	if (n == 0) {
		snprintf(why, len, "no GPU visible to CUDA");
		return 0;
	}
	why[0] = '\0';
	return 1;
}

extern "C" void cg_cuda_versions(int *driver, int *runtime)
{
	*driver = 0;
	*runtime = 0;
	if (access("/dev/nvidiactl", F_OK) == 0)
		(void)cudaDriverGetVersion(driver);
	(void)cudaRuntimeGetVersion(runtime);
}

extern "C" doca_error_t cg_gpu_select(int ordinal, char *bus, size_t len)
{
	cudaError_t e = cudaSetDevice(ordinal);

	if (e == cudaSuccess)
		e = cudaFree(0);
	if (e == cudaSuccess)
		e = cudaDeviceGetPCIBusId(bus, (int)len, ordinal);
	if (e != cudaSuccess) {
		snprintf(bus, len, "%s", cudaGetErrorString(e));
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}

extern "C" doca_error_t cg_stream_create(void **stream)
{
	cudaStream_t s;

	if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
		return DOCA_ERROR_DRIVER;
	*stream = (void *)s;
	return DOCA_SUCCESS;
}

extern "C" void cg_stream_destroy(void *stream)
{
	if (stream != nullptr)
		(void)cudaStreamDestroy((cudaStream_t)stream);
}

extern "C" int cg_stream_done(void *stream, char *why, size_t len)
{
	cudaError_t e = cudaStreamQuery((cudaStream_t)stream);

	if (e == cudaSuccess)
		return 1;
	if (e == cudaErrorNotReady)
		return 0;
	snprintf(why, len, "%s", cudaGetErrorString(e));
	return -1;
}

extern "C" doca_error_t cg_copy_to_gpu(void *dst_gpu, const void *src, size_t len)
{
	return cudaMemcpy(dst_gpu, src, len, cudaMemcpyHostToDevice) == cudaSuccess ?
		       DOCA_SUCCESS :
		       DOCA_ERROR_DRIVER;
}

__global__ void cg_rx_kernel(struct doca_gpu_eth_rxq *rxq, uint32_t *stop, struct cg_rx_stats *st)
{
	__shared__ uint64_t first;
	__shared__ uint32_t n, quit;
	__shared__ struct doca_gpu_dev_eth_rxq_attr attr[RX_MAX];

	for (;;) {
		doca_error_t ret;

		if (threadIdx.x == 0)
			quit = DOCA_GPUNETIO_VOLATILE(*stop);
		__syncthreads();
		if (quit)
			break;
		ret = doca_gpu_dev_eth_rxq_recv<
			DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK, DOCA_GPUNETIO_ETH_MCST_DISABLED,
			DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO, DOCA_GPUNETIO_ETH_RX_ATTR_ALL>(
			rxq, RX_MAX, 1000000, &first, &n, attr);
		if (threadIdx.x == 0) {
			uint64_t bytes = 0;

			if (ret != DOCA_SUCCESS) {
				st->error = (uint32_t)ret;
				__threadfence_system();
				DOCA_GPUNETIO_VOLATILE(*stop) = 1;
			}
			if (n > 0 && st->packets == 0) {
				const uint8_t *p =
					(const uint8_t *)doca_gpu_dev_eth_rxq_get_pkt_addr(rxq,
											   first);
				uint32_t l = attr[0].bytes < sizeof(st->first) ? attr[0].bytes :
										 sizeof(st->first);

				st->first_len = attr[0].bytes;
				for (uint32_t k = 0; k < l; k++)
					st->first[k] = p[k];
			}
			for (uint32_t k = 0; k < n; k++)
				bytes += attr[k].bytes;
			st->bytes += bytes;
			st->calls++;
			__threadfence_system();
			DOCA_GPUNETIO_VOLATILE(st->packets) = st->packets + n;
			__threadfence_system();
		}
		__syncthreads();
	}
}

extern "C" doca_error_t cg_rx_kernel_launch(void *stream, struct doca_gpu_eth_rxq *rxq,
					    uint32_t *stop_gpu, struct cg_rx_stats *stats_gpu)
{
	cg_rx_kernel<<<1, 32, 0, (cudaStream_t)stream>>>(rxq, stop_gpu, stats_gpu);
	return cudaGetLastError() == cudaSuccess ? DOCA_SUCCESS : DOCA_ERROR_DRIVER;
}

__global__ void cg_tx_kernel(struct doca_gpu_eth_txq *txq, uint64_t addr, uint32_t mkey_be,
			     uint32_t len, struct cg_tx_stats *st)
{
	doca_gpu_dev_eth_ticket_t ticket = 0;
	doca_error_t ret = DOCA_ERROR_TIME_OUT;
	uint32_t done = 0;

	if (threadIdx.x != 0)
		return;
	doca_gpu_dev_eth_txq_send<
		DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
		DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO, DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>(
		txq, addr, mkey_be, len, DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY, &ticket);
	for (int i = 0; i < 50 && ret == DOCA_ERROR_TIME_OUT; i++)
		ret = doca_gpu_dev_eth_txq_poll_completion<DOCA_GPUNETIO_ETH_CQ_POLL_LAST>(
			txq, 1, DOCA_GPUNETIO_ETH_WAIT_FLAG_B, &done);
	st->completed = done;
	st->status = (int32_t)ret;
	__threadfence_system();
}

extern "C" doca_error_t cg_tx_kernel_launch(void *stream, struct doca_gpu_eth_txq *txq,
					    void *frame_gpu, uint32_t mkey_be, uint32_t len,
					    struct cg_tx_stats *stats_gpu)
{
	cg_tx_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(txq, (uint64_t)(uintptr_t)frame_gpu,
							mkey_be, len, stats_gpu);
	return cudaGetLastError() == cudaSuccess ? DOCA_SUCCESS : DOCA_ERROR_DRIVER;
}
