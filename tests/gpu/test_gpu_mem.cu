/*
 * GPU test: libdoca_gpunetio's GPU handle and memory on a real GPU. Creates the handle of CUDA
 * device 0 from its PCIe address (long and short forms), allocates every memory type with
 * alignments 0 (host page), 4096 and 65536, writes through one side, lets a kernel increment
 * every byte through the GPU pointer on a non-blocking stream, and checks every byte from the
 * other side. Checks the GPU_CPU fallback warning (once per handle), destroy refused while
 * memory lives, frees of unknown pointers, dma-buf export (works, or NOT_SUPPORTED as the handle
 * said), a handle created on a thread without a current context (primary context retained), and
 * the compute-capability override (7.5 refused, by call and by environment variable).
 * Exits 77 only when /dev/nvidiactl is absent; any other CUDA failure is a failure.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>
#include <pthread.h>
#include <unistd.h>

#include "doca_gpunetio.h"
#include "doca_log.h"
#include "softdpu/gpunetio.h"

#include "gpu_check.h"

/* What the SDK backend printed (the GPU_CPU fallback warning is counted). */
static char sdk_buf[4096];
static char sdk_log[1 << 16];
static size_t sdk_log_len;

static void sdk_flush(char *buf)
{
	size_t n = std::strlen(buf);

	if (n > sizeof(sdk_log) - 1 - sdk_log_len)
		n = sizeof(sdk_log) - 1 - sdk_log_len;
	std::memcpy(sdk_log + sdk_log_len, buf, n);
	sdk_log_len += n;
	sdk_log[sdk_log_len] = '\0';
}

static int log_count(const char *needle)
{
	const char *p = sdk_log;
	int n = 0;

	while ((p = std::strstr(p, needle)) != nullptr) {
		n++;
		p += std::strlen(needle);
	}
	return n;
}

static __global__ void inc_bytes(unsigned char *p, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (; i < n; i += stride)
		p[i] = (unsigned char)(p[i] + 1);
}

static unsigned char pattern(size_t i, unsigned int seed)
{
	return (unsigned char)((i * 131u) ^ (i >> 8) ^ seed);
}

static cudaStream_t stream;

static void run_inc(void *gpu_ptr, size_t n)
{
	inc_bytes<<<64, 256, 0, stream>>>(static_cast<unsigned char *>(gpu_ptr), n);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaStreamSynchronize(stream));
}

/* One allocation of each type and alignment, checked byte for byte. */
static void test_types(struct doca_gpu *gpu)
{
	static const enum doca_gpu_mem_type types[] = {
		DOCA_GPU_MEM_TYPE_GPU, DOCA_GPU_MEM_TYPE_GPU_CPU, DOCA_GPU_MEM_TYPE_CPU_GPU};
	static const size_t aligns[] = {0, 4096, 65536};
	const size_t size = 3 * 65536 + 123; /* not a multiple of anything */
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *host = static_cast<unsigned char *>(std::malloc(size));
	unsigned int seed = 1;

	if (host == nullptr) {
		FAIL("out of host memory");
		return;
	}
	for (enum doca_gpu_mem_type t : types) {
		for (size_t a : aligns) {
			void *gptr = nullptr;
			void *cptr = reinterpret_cast<void *>(0x1); /* must be overwritten */
			size_t want_align = a == 0 ? page : a;
			size_t bad = 0, zero_bad = 0;

			seed++;
			CHECK_STATUS(doca_gpu_mem_alloc(gpu, size, a, t, &gptr, &cptr),
				     DOCA_SUCCESS);
			if (gptr == nullptr) {
				FAIL("type %d alignment %zu: no GPU pointer", (int)t, a);
				continue;
			}
			if ((uintptr_t)gptr % want_align != 0)
				FAIL("type %d: GPU pointer %p not aligned to %zu", (int)t, gptr,
				     want_align);
			if (t == DOCA_GPU_MEM_TYPE_GPU) {
				if (cptr != nullptr)
					FAIL("GPU memory: memptr_cpu %p, expected NULL", cptr);
				for (size_t i = 0; i < size; i++)
					host[i] = pattern(i, seed);
				CHECK_CUDA(cudaMemcpyAsync(gptr, host, size, cudaMemcpyHostToDevice,
							   stream));
				run_inc(gptr, size);
				std::memset(host, 0, size);
				CHECK_CUDA(cudaMemcpyAsync(host, gptr, size, cudaMemcpyDeviceToHost,
							   stream));
				CHECK_CUDA(cudaStreamSynchronize(stream));
				for (size_t i = 0; i < size; i++)
					bad += host[i] != (unsigned char)(pattern(i, seed) + 1);
			} else {
				unsigned char *c = static_cast<unsigned char *>(cptr);

				if (c == nullptr || (uintptr_t)c % want_align != 0) {
					FAIL("type %d: CPU pointer %p (alignment %zu)", (int)t,
					     cptr, want_align);
					continue;
				}
				for (size_t i = 0; i < size; i++) {
					zero_bad += c[i] != 0;
					c[i] = pattern(i, seed);
				}
				run_inc(gptr, size);
				for (size_t i = 0; i < size; i++)
					bad += DOCA_GPUNETIO_VOLATILE(c[i]) !=
					       (unsigned char)(pattern(i, seed) + 1);
			}
			if (bad != 0 || zero_bad != 0)
				FAIL("type %d alignment %zu: %zu bytes wrong after the kernel, %zu "
				     "not zero at first",
				     (int)t, a, bad, zero_bad);
			CHECK_STATUS(doca_gpu_mem_free(gpu, gptr), DOCA_SUCCESS);
			CHECK_STATUS(doca_gpu_mem_free(gpu, gptr), DOCA_ERROR_INVALID_VALUE);
		}
	}
	std::free(host);
	/* Three GPU_CPU allocations, one warning. */
	if (log_count("GPU_CPU memory needs GDRCopy") != 1)
		FAIL("GPU_CPU fallback warned %d times, expected once",
		     log_count("GPU_CPU memory needs GDRCopy"));
}

static void test_errors_and_in_use(struct doca_gpu *gpu)
{
	void *g1 = nullptr, *g2 = nullptr, *c2 = nullptr, *other = nullptr, *p = nullptr;
	void *cp = nullptr;

	CHECK_STATUS(doca_gpu_mem_alloc(gpu, 0, 0, DOCA_GPU_MEM_TYPE_GPU, &p, nullptr),
		     DOCA_ERROR_INVALID_VALUE);
	CHECK_STATUS(doca_gpu_mem_alloc(gpu, 4096, 3, DOCA_GPU_MEM_TYPE_GPU, &p, nullptr),
		     DOCA_ERROR_INVALID_VALUE);
	CHECK_STATUS(doca_gpu_mem_alloc(gpu, 4096, 0, (enum doca_gpu_mem_type)7, &p, &cp),
		     DOCA_ERROR_INVALID_VALUE);
	CHECK_STATUS(doca_gpu_mem_alloc(gpu, 4096, 0, DOCA_GPU_MEM_TYPE_CPU_GPU, &p, nullptr),
		     DOCA_ERROR_INVALID_VALUE);
	CHECK_STATUS(doca_gpu_mem_alloc(gpu, 4096, 0, DOCA_GPU_MEM_TYPE_GPU, nullptr, nullptr),
		     DOCA_ERROR_INVALID_VALUE);
	if (p != nullptr || cp != nullptr)
		FAIL("a refused allocation set an output pointer");

	CHECK_STATUS(doca_gpu_mem_alloc(gpu, 65536, 0, DOCA_GPU_MEM_TYPE_GPU, &g1, nullptr),
		     DOCA_SUCCESS);
	CHECK_STATUS(doca_gpu_mem_alloc(gpu, 100, 64, DOCA_GPU_MEM_TYPE_CPU_GPU, &g2, &c2),
		     DOCA_SUCCESS);
	CHECK_STATUS(doca_gpu_destroy(gpu), DOCA_ERROR_IN_USE);

	/* Pointers that are not allocations of this handle. */
	CHECK_CUDA(cudaMalloc(&other, 4096));
	CHECK_STATUS(doca_gpu_mem_free(gpu, other), DOCA_ERROR_INVALID_VALUE);
	CHECK_STATUS(doca_gpu_mem_free(gpu, static_cast<char *>(g1) + 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_STATUS(doca_gpu_mem_free(gpu, c2 == g2 ? static_cast<char *>(g2) + 64 : c2),
		     DOCA_ERROR_INVALID_VALUE);
	CHECK_CUDA(cudaFree(other));

	/* Still usable after the refusal. */
	CHECK_STATUS(doca_gpu_mem_free(gpu, g1), DOCA_SUCCESS);
	CHECK_STATUS(doca_gpu_destroy(gpu), DOCA_ERROR_IN_USE);
	CHECK_STATUS(doca_gpu_mem_free(gpu, g2), DOCA_SUCCESS);
}

static void test_dmabuf(struct doca_gpu *gpu, const struct sdp_gpu_info *info)
{
	const size_t size = 2u << 20;
	void *g = nullptr, *h = nullptr, *hc = nullptr;
	doca_error_t st;
	int fd = -1;

	CHECK_STATUS(doca_gpu_mem_alloc(gpu, size, 65536, DOCA_GPU_MEM_TYPE_GPU, &g, nullptr),
		     DOCA_SUCCESS);
	CHECK_STATUS(doca_gpu_mem_alloc(gpu, 65536, 0, DOCA_GPU_MEM_TYPE_CPU_GPU, &h, &hc),
		     DOCA_SUCCESS);
	st = doca_gpu_dmabuf_fd(gpu, g, size, &fd);
	if (st == DOCA_SUCCESS) {
		if (!info->dmabuf_supported)
			FAIL("dma-buf export worked although the handle said unsupported");
		if (fd < 0)
			FAIL("dma-buf fd %d", fd);
		else
			close(fd);
		std::printf("dma-buf export: fd %d for %zu bytes\n", fd, size);
		fd = -5;
		CHECK_STATUS(doca_gpu_dmabuf_fd(gpu, g, 1000, &fd), DOCA_ERROR_INVALID_VALUE);
		if (fd != -5)
			FAIL("a refused export set the fd");
	} else if (st == DOCA_ERROR_NOT_SUPPORTED) {
		std::printf("dma-buf export: NOT_SUPPORTED (handle says %d)\n",
			    info->dmabuf_supported);
	} else {
		FAIL("doca_gpu_dmabuf_fd: %s", doca_error_get_name(st));
	}
	/* Beyond the allocation, mapped host memory, bad arguments. */
	CHECK_STATUS(doca_gpu_dmabuf_fd(gpu, g, size + 65536, &fd), DOCA_ERROR_INVALID_VALUE);
	CHECK_STATUS(doca_gpu_dmabuf_fd(gpu, h, 65536, &fd), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_STATUS(doca_gpu_dmabuf_fd(gpu, g, 0, &fd), DOCA_ERROR_INVALID_VALUE);
	CHECK_STATUS(doca_gpu_dmabuf_fd(gpu, g, size, nullptr), DOCA_ERROR_INVALID_VALUE);
	CHECK_STATUS(doca_gpu_mem_free(gpu, g), DOCA_SUCCESS);
	CHECK_STATUS(doca_gpu_mem_free(gpu, h), DOCA_SUCCESS);
}

static const char *thread_bus_id;

/* A thread that never touched the runtime has no current context. */
static void *thread_create(void *arg)
{
	struct sdp_gpu_info info;
	struct doca_gpu *gpu = nullptr;
	void *g = nullptr;

	(void)arg;
	CHECK_STATUS(doca_gpu_create(thread_bus_id, &gpu), DOCA_SUCCESS);
	if (gpu == nullptr)
		return nullptr;
	CHECK_STATUS(sdp_gpu_get_info(gpu, &info), DOCA_SUCCESS);
	if (info.primary_ctx_retained != 1)
		FAIL("thread without a context: primary_ctx_retained %d",
		     info.primary_ctx_retained);
	CHECK_STATUS(doca_gpu_mem_alloc(gpu, 4096, 0, DOCA_GPU_MEM_TYPE_GPU, &g, nullptr),
		     DOCA_SUCCESS);
	CHECK_STATUS(doca_gpu_mem_free(gpu, g), DOCA_SUCCESS);
	CHECK_STATUS(doca_gpu_destroy(gpu), DOCA_SUCCESS);
	return nullptr;
}

static void test_cc_override(const char *bus)
{
	struct doca_gpu *gpu = nullptr;
	struct sdp_gpu_info info;

	CHECK_STATUS(sdp_gpu_set_cc_override(7, 5), DOCA_SUCCESS);
	CHECK_STATUS(doca_gpu_create(bus, &gpu), DOCA_ERROR_NOT_SUPPORTED);
	if (gpu != nullptr)
		FAIL("refused create set the handle");
	CHECK_STATUS(sdp_gpu_set_cc_override(-1, 0), DOCA_SUCCESS);

	setenv("SOFTDPU_GPU_CC_OVERRIDE", "7.5", 1);
	CHECK_STATUS(doca_gpu_create(bus, &gpu), DOCA_ERROR_NOT_SUPPORTED);
	setenv("SOFTDPU_GPU_CC_OVERRIDE", "8.0", 1);
	CHECK_STATUS(doca_gpu_create(bus, &gpu), DOCA_SUCCESS);
	if (gpu != nullptr) {
		CHECK_STATUS(sdp_gpu_get_info(gpu, &info), DOCA_SUCCESS);
		if (info.cc_major != 8 || info.cc_minor != 0 || info.cc_overridden != 1)
			FAIL("override 8.0: info says %d.%d overridden %d", info.cc_major,
			     info.cc_minor, info.cc_overridden);
		CHECK_STATUS(doca_gpu_destroy(gpu), DOCA_SUCCESS);
	}
	/* The call wins over the variable. */
	CHECK_STATUS(sdp_gpu_set_cc_override(7, 0), DOCA_SUCCESS);
	CHECK_STATUS(doca_gpu_create(bus, &gpu), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_STATUS(sdp_gpu_set_cc_override(-1, 0), DOCA_SUCCESS);
	unsetenv("SOFTDPU_GPU_CC_OVERRIDE");
}

int main(void)
{
	struct doca_log_backend *sdk = nullptr;
	struct doca_gpu *gpu = nullptr, *gpu2 = nullptr;
	struct sdp_gpu_info info;
	char bus[32], lower[32];
	pthread_t th;
	int ndev = 0, major = 0, minor = 0;

	gpu_check_require_driver();
	CHECK_STATUS(
		doca_log_backend_create_with_buf_sdk(sdk_buf, sizeof(sdk_buf), sdk_flush, &sdk),
		DOCA_SUCCESS);
	CHECK_STATUS(doca_log_backend_set_sdk_level(sdk, DOCA_LOG_LEVEL_WARNING), DOCA_SUCCESS);

	CHECK_CUDA(cudaGetDeviceCount(&ndev));
	if (ndev < 1) {
		FAIL("no CUDA device although /dev/nvidiactl exists");
		return 1;
	}
	CHECK_CUDA(cudaDeviceGetPCIBusId(bus, sizeof(bus), 0));
	CHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
	CHECK_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
	CHECK_CUDA(cudaSetDevice(0));
	CHECK_CUDA(cudaFree(0));
	CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	std::printf("device 0: %s, compute capability %d.%d\n", bus, major, minor);

	CHECK_STATUS(doca_gpu_create(bus, &gpu), DOCA_SUCCESS);
	if (gpu == nullptr)
		return 1;
	CHECK_STATUS(sdp_gpu_get_info(gpu, &info), DOCA_SUCCESS);
	for (size_t i = 0; i <= std::strlen(bus) && i < sizeof(lower); i++)
		lower[i] = (char)std::tolower((unsigned char)bus[i]);
	/* The runtime writes a 4- or 8-digit domain; the handle keeps 4 (domain 0 here). */
	if (std::strcmp(info.bus_id, std::strchr(lower, ':') - 4) != 0)
		FAIL("info bus id %s, runtime says %s", info.bus_id, bus);
	if (info.cc_major != major || info.cc_minor != minor || info.cc_overridden != 0 ||
	    info.gdrcopy != 0 || info.primary_ctx_retained != 1 || info.device_ordinal != 0)
		FAIL("info: cc %d.%d overridden %d gdrcopy %d primary %d ordinal %d", info.cc_major,
		     info.cc_minor, info.cc_overridden, info.gdrcopy, info.primary_ctx_retained,
		     info.device_ordinal);
	std::printf("handle: %s dma-buf %d\n", info.bus_id, info.dmabuf_supported);

	/* A second handle of the same GPU, from the short form of the address. */
	CHECK_STATUS(doca_gpu_create(std::strchr(info.bus_id, ':') + 1, &gpu2), DOCA_SUCCESS);
	CHECK_STATUS(doca_gpu_destroy(gpu2), DOCA_SUCCESS);

	test_types(gpu);
	test_errors_and_in_use(gpu);
	test_dmabuf(gpu, &info);
	CHECK_STATUS(doca_gpu_destroy(gpu), DOCA_SUCCESS);

	thread_bus_id = bus;
	if (pthread_create(&th, nullptr, thread_create, nullptr) != 0) {
		FAIL("pthread_create");
	} else {
		pthread_join(th, nullptr);
	}
	test_cc_override(bus);

	CHECK_STATUS(doca_gpu_create("ff:1f.7", &gpu2), DOCA_ERROR_NOT_FOUND);
	CHECK_CUDA(cudaStreamDestroy(stream));
	if (failures == 0)
		std::printf("test_gpu_mem: all checks passed\n");
	return failures ? 1 : 0;
}
