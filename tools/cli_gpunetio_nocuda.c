/*
 * The GPU side of cli_gpunetio.h in a build without CUDA (tools/meson.build compiles this file
 * instead of cli_gpunetio_kernels.cu): every GPU call says "built without CUDA".
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdio.h>

#include "cli_gpunetio.h"

int cg_cuda_built(void)
{
	return 0;
}

int cg_gpu_available(char *why, size_t len)
{
	snprintf(why, len, "built without CUDA");
	return 0;
}

void cg_cuda_versions(int *driver, int *runtime)
{
	*driver = 0;
	*runtime = 0;
}

doca_error_t cg_gpu_select(int ordinal, char *bus, size_t len)
{
	(void)ordinal;
	(void)bus;
	(void)len;
	return DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t cg_stream_create(void **stream)
{
	*stream = NULL;
	return DOCA_ERROR_NOT_SUPPORTED;
}

void cg_stream_destroy(void *stream)
{
	(void)stream;
}

int cg_stream_done(void *stream, char *why, size_t len)
{
	(void)stream;
	snprintf(why, len, "built without CUDA");
	return -1;
}

doca_error_t cg_copy_to_gpu(void *dst_gpu, const void *src, size_t len)
{
	(void)dst_gpu;
	(void)src;
	(void)len;
	return DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t cg_rx_kernel_launch(void *stream, struct doca_gpu_eth_rxq *rxq, uint32_t *stop_gpu,
				 struct cg_rx_stats *stats_gpu)
{
	(void)stream;
	(void)rxq;
	(void)stop_gpu;
	(void)stats_gpu;
	return DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t cg_tx_kernel_launch(void *stream, struct doca_gpu_eth_txq *txq, void *frame_gpu,
				 uint32_t mkey_be, uint32_t len, struct cg_tx_stats *stats_gpu)
{
	(void)mkey_be;
	(void)stream;
	(void)txq;
	(void)frame_gpu;
	(void)len;
	(void)stats_gpu;
	return DOCA_ERROR_NOT_SUPPORTED;
}
