/*
 * CUDA toolchain smoke test: one kernel fills a device array, the host reads it back and checks
 * every element. Exits 77 (skip) where no NVIDIA driver or GPU is present, so it is harmless on
 * CPU-only machines; on a GPU machine it proves nvcc's targets and the runtime work together.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>
#include <unistd.h>

#define SMOKE_N 4096
#define SMOKE_SEED 0x5d9u

static __global__ void smoke_fill(unsigned int *out, unsigned int n, unsigned int seed)
{
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = i * 2654435761u ^ seed;
}

static int smoke_skip(const char *why)
{
	std::printf("SKIP: %s\n", why);
	return 77;
}

int main(void)
{
	unsigned int *dev = nullptr;
	unsigned int *host = nullptr;
	cudaError_t err;
	int ndev = 0, bad = 0, ret = 1;

	if (access("/dev/nvidiactl", F_OK) != 0)
		return smoke_skip("no NVIDIA driver (/dev/nvidiactl is missing)");

	err = cudaGetDeviceCount(&ndev);
	if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver || ndev == 0)
		return smoke_skip("the CUDA runtime sees no usable GPU");
	if (err != cudaSuccess) {
		std::fprintf(stderr, "FAIL cudaGetDeviceCount: %s\n", cudaGetErrorString(err));
		return 1;
	}

	host = static_cast<unsigned int *>(std::calloc(SMOKE_N, sizeof(*host)));
	if (host == nullptr) {
		std::fprintf(stderr, "FAIL: out of host memory\n");
		return 1;
	}

	err = cudaMalloc(&dev, SMOKE_N * sizeof(*dev));
	if (err != cudaSuccess) {
		std::fprintf(stderr, "FAIL cudaMalloc: %s\n", cudaGetErrorString(err));
		goto out_host;
	}

	smoke_fill<<<(SMOKE_N + 255) / 256, 256>>>(dev, SMOKE_N, SMOKE_SEED);
	err = cudaGetLastError();
	if (err == cudaSuccess)
		err = cudaDeviceSynchronize();
	if (err != cudaSuccess) {
		std::fprintf(stderr,
			     "FAIL kernel launch: %s (is this GPU covered by sm_80/sm_90?)\n",
			     cudaGetErrorString(err));
		goto out_dev;
	}

	err = cudaMemcpy(host, dev, SMOKE_N * sizeof(*host), cudaMemcpyDeviceToHost);
	if (err != cudaSuccess) {
		std::fprintf(stderr, "FAIL cudaMemcpy: %s\n", cudaGetErrorString(err));
		goto out_dev;
	}

	for (unsigned int i = 0; i < SMOKE_N; i++) {
		unsigned int want = i * 2654435761u ^ SMOKE_SEED;

		if (host[i] != want && bad++ < 5)
			std::fprintf(stderr, "FAIL element %u: expected %#x, got %#x\n", i, want,
				     host[i]);
	}
	if (bad == 0) {
		std::printf("cuda_smoke: %d GPU(s), %d elements checked\n", ndev, SMOKE_N);
		ret = 0;
	}

out_dev:
	cudaFree(dev);
out_host:
	std::free(host);
	return ret;
}
