/*
 * The CUDA runtime side of the GPUNetIO samples' helpers (gpunetio_common.h): GPU selection by
 * PCIe address, non-blocking streams, bounded waits for a persistent kernel.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>
#include <unistd.h>

#include <doca_log.h>

#include "gpunetio_common.h"

DOCA_LOG_REGISTER(GPUNETIO_CUDA);

extern "C" doca_error_t sample_cuda_init(char *gpu_pcie, size_t len, int *cc_major)
{
	cudaDeviceProp prop;
	cudaError_t e;
	int dev = 0;

	if (access("/dev/nvidiactl", F_OK) != 0) {
		DOCA_LOG_ERR(
			"no NVIDIA driver (/dev/nvidiactl is missing): this sample needs a GPU");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (gpu_pcie[0] == '\0') {
		e = cudaDeviceGetPCIBusId(gpu_pcie, (int)len, 0);
	} else {
		e = cudaDeviceGetByPCIBusId(&dev, gpu_pcie);
	}
	if (e == cudaSuccess)
		e = cudaSetDevice(dev);
	if (e == cudaSuccess)
		e = cudaFree(0); /* makes the primary context current */
	if (e == cudaSuccess)
		e = cudaGetDeviceProperties(&prop, dev);
	if (e != cudaSuccess) {
		DOCA_LOG_ERR("CUDA: GPU %s: %s", gpu_pcie[0] ? gpu_pcie : "0",
			     cudaGetErrorString(e));
		return DOCA_ERROR_DRIVER;
	}
	*cc_major = prop.major;
	DOCA_LOG_INFO("GPU %s: %s, compute capability %d.%d", gpu_pcie, prop.name, prop.major,
		      prop.minor);
	return DOCA_SUCCESS;
}

extern "C" doca_error_t sample_cuda_stream_create(void **stream)
{
	cudaStream_t s;
	cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);

	if (e != cudaSuccess) {
		DOCA_LOG_ERR("cudaStreamCreateWithFlags: %s", cudaGetErrorString(e));
		return DOCA_ERROR_DRIVER;
	}
	*stream = (void *)s;
	return DOCA_SUCCESS;
}

extern "C" doca_error_t sample_cuda_stream_wait(void *stream, double timeout_s)
{
	double end = sample_now_s() + timeout_s;

	for (;;) {
		cudaError_t e = cudaStreamQuery((cudaStream_t)stream);

		if (e == cudaSuccess)
			return DOCA_SUCCESS;
		if (e != cudaErrorNotReady) {
			DOCA_LOG_ERR("CUDA kernel failed: %s", cudaGetErrorString(e));
			return DOCA_ERROR_DRIVER;
		}
		if (sample_now_s() > end) {
			DOCA_LOG_ERR("the kernel did not finish within %.1f s", timeout_s);
			return DOCA_ERROR_TIME_OUT;
		}
		usleep(1000);
	}
}

extern "C" void sample_cuda_stream_destroy(void *stream)
{
	if (stream != nullptr)
		(void)cudaStreamDestroy((cudaStream_t)stream);
}

extern "C" doca_error_t sample_cuda_copy_to_gpu(void *stream, void *dst_gpu, const void *src,
						size_t size)
{
	cudaError_t e =
		cudaMemcpyAsync(dst_gpu, src, size, cudaMemcpyHostToDevice, (cudaStream_t)stream);

	if (e == cudaSuccess)
		e = cudaStreamSynchronize((cudaStream_t)stream);
	if (e != cudaSuccess) {
		DOCA_LOG_ERR("copying packets to the GPU: %s", cudaGetErrorString(e));
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}
