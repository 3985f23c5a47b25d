/*
 * GPU test: DOCA buffer arrays on the GPU (doca_buf_arr_get_gpu_handle and
 * doca_gpunetio_dev_buf.cuh). An array of N elements of E bytes over an mmap of device memory:
 * a kernel takes every element by index, writes its index and address into it through the
 * address the device API gives, and checks the mkey (the mmap's, for its device: the first
 * device softdpu lists); the host reads the memory back and checks
 * every element. Past the end get_buf gives NULL (address 0, mkey 0). An array over host memory
 * that is not the GPU's is refused at start (INVALID_VALUE); after stop a kernel holding the old
 * handle gets NULL bufs. Exits 77 only when /dev/nvidiactl is absent.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#include "doca_buf_array.h"
#include "doca_dev.h"
#include "doca_gpunetio.h"
#include "doca_gpunetio_dev_buf.cuh"
#include "doca_mmap.h"

#include "gpu_check.h"

#define N 4096u
#define E 256u

struct out {
	uint32_t bad_addr; /* elements whose address was not base + i * E */
	uint32_t null_past_end;
	uint32_t mkey;
	uint32_t after_stop_null;
};

static __global__ void touch(const struct doca_gpu_buf_arr *arr, uint64_t base, struct out *o)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < N;
	     i += gridDim.x * blockDim.x) {
		struct doca_gpu_buf *b = nullptr;
		uintptr_t addr = 0;
		uint32_t mkey = 0;

		doca_gpu_dev_buf_get_buf(arr, i, &b);
		doca_gpu_dev_buf_get_addr(b, &addr);
		doca_gpu_dev_buf_get_mkey(b, &mkey);
		if (addr != base + (uint64_t)i * E) {
			atomicAdd(&o->bad_addr, 1u);
			continue;
		}
		((uint64_t *)addr)[0] = i;
		((uint64_t *)addr)[1] = addr;
		if (i == 0)
			o->mkey = mkey;
	}
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		struct doca_gpu_buf *b = (struct doca_gpu_buf *)1;
		uintptr_t addr = 1;
		uint32_t mkey = 1;

		doca_gpu_dev_buf_get_buf(arr, N, &b);
		doca_gpu_dev_buf_get_addr(b, &addr);
		doca_gpu_dev_buf_get_mkey(b, &mkey);
		o->null_past_end = b == nullptr && addr == 0 && mkey == 0;
	}
}

static __global__ void after_stop(const struct doca_gpu_buf_arr *arr, struct out *o)
{
	struct doca_gpu_buf *b = (struct doca_gpu_buf *)1;

	doca_gpu_dev_buf_get_buf(arr, 0, &b);
	o->after_stop_null = b == nullptr;
}

/* The first device that opens (the test environment's providers always list one). */
static struct doca_dev *open_any_dev(void)
{
	struct doca_devinfo **list = nullptr;
	struct doca_dev *dev = nullptr;
	uint32_t n = 0;

	CHECK(doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n && dev == nullptr; i++)
		if (doca_dev_open(list[i], &dev) != DOCA_SUCCESS)
			dev = nullptr;
	if (list != nullptr)
		CHECK(doca_devinfo_destroy_list(list));
	if (dev == nullptr) {
		FAIL("no device opens (%u listed)", n);
		std::exit(1);
	}
	return dev;
}

int main(void)
{
	struct doca_dev *dev = nullptr;
	uint32_t mkey = 0;
	struct doca_gpu *gpu = nullptr;
	struct doca_mmap *mmap = nullptr, *hmmap = nullptr;
	struct doca_buf_arr *arr = nullptr, *harr = nullptr;
	struct doca_gpu_buf_arr *h = nullptr;
	struct out *o = nullptr;
	void *mem = nullptr;
	std::vector<uint64_t> back((size_t)N * E / 8);
	static uint8_t host_mem[N * E];
	char bus[32];

	gpu_check_require_driver();
	CHECK_CUDA(cudaSetDevice(0));
	CHECK_CUDA(cudaDeviceGetPCIBusId(bus, sizeof(bus), 0));
	CHECK(doca_gpu_create(bus, &gpu));
	CHECK(doca_gpu_mem_alloc(gpu, (size_t)N * E, 0, DOCA_GPU_MEM_TYPE_GPU, &mem, nullptr));
	CHECK_CUDA(cudaHostAlloc((void **)&o, sizeof(*o), cudaHostAllocMapped));
	std::memset(o, 0, sizeof(*o));

	dev = open_any_dev();
	CHECK(doca_mmap_create(&mmap));
	CHECK(doca_mmap_add_dev(mmap, dev));
	CHECK(doca_mmap_set_memrange(mmap, mem, (size_t)N * E));
	CHECK(doca_mmap_start(mmap));
	CHECK(doca_mmap_get_mkey(mmap, dev, &mkey));
	CHECK(doca_buf_arr_create(N, &arr));
	CHECK(doca_buf_arr_set_target_gpu(arr, gpu));
	CHECK(doca_buf_arr_set_params(arr, mmap, E, 0));
	CHECK(doca_buf_arr_start(arr));
	CHECK(doca_buf_arr_get_gpu_handle(arr, &h));
	touch<<<16, 128>>>(h, (uint64_t)(uintptr_t)mem, o);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaDeviceSynchronize());
	CHECK_CUDA(cudaMemcpy(back.data(), mem, (size_t)N * E, cudaMemcpyDeviceToHost));
	{
		uint32_t wrong = 0;

		for (uint32_t i = 0; i < N; i++) {
			uint64_t *e = back.data() + (size_t)i * E / 8;

			if (e[0] != i || e[1] != (uint64_t)(uintptr_t)mem + (uint64_t)i * E)
				wrong++;
		}
		if (o->bad_addr != 0 || wrong != 0)
			FAIL("%u addresses wrong on the GPU, %u elements wrong in memory",
			     o->bad_addr, wrong);
		else
			std::printf("%u elements of %u bytes reached by index from a kernel\n", N,
				    E);
	}
	if (!o->null_past_end)
		FAIL("get_buf past the end did not give NULL / 0 / 0");
	if (o->mkey == 0 || o->mkey != mkey)
		FAIL("element mkey %#x, the mmap's is %#x", o->mkey, mkey);

	/* host memory that is not the GPU's: refused at start */
	CHECK(doca_mmap_create(&hmmap));
	CHECK(doca_mmap_set_memrange(hmmap, host_mem, sizeof(host_mem)));
	CHECK(doca_mmap_start(hmmap));
	CHECK(doca_buf_arr_create(N, &harr));
	CHECK(doca_buf_arr_set_target_gpu(harr, gpu));
	CHECK(doca_buf_arr_set_params(harr, hmmap, E, 0));
	CHECK_STATUS(doca_buf_arr_start(harr), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_buf_arr_destroy(harr));
	CHECK(doca_mmap_stop(hmmap));
	CHECK(doca_mmap_destroy(hmmap));

	/* stopped: the old handle gives NULL bufs */
	CHECK(doca_buf_arr_stop(arr));
	after_stop<<<1, 1>>>(h, o);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaDeviceSynchronize());
	if (!o->after_stop_null)
		FAIL("a stopped array's handle still gave a buf");
	CHECK(doca_buf_arr_destroy(arr));
	CHECK(doca_mmap_stop(mmap));
	CHECK(doca_mmap_destroy(mmap));
	CHECK(doca_dev_close(dev));
	CHECK(doca_gpu_mem_free(gpu, mem));
	CHECK_CUDA(cudaFreeHost(o));
	CHECK(doca_gpu_destroy(gpu));
	std::printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
