/*
 * GPU test: GPUNetIO semaphores (doca_gpu_semaphore_* and doca_gpunetio_dev_sem.cuh) on a real
 * GPU. Every wait is bounded (globaltimer in kernels, CLOCK_MONOTONIC on the host).
 *  1. GPU to GPU at full rate: a producer kernel and a consumer kernel, persistent, on two
 *     non-blocking streams, hand ITEMS items through a 64-item ring in device memory (items and
 *     custom info): the producer waits for FREE, writes the custom info (sequence number and a
 *     checksum), publishes with set_packet_info(READY, n, start); the consumer polls
 *     get_packet_info_status(READY), checks every field, sets FREE. Many laps of the ring.
 *  2. GPU to CPU: the same producer on a CPU_GPU semaphore, the CPU consuming with
 *     get_status / get_custom_info_addr / set_status(FREE).
 *  3. CPU to GPU: the CPU produces (custom info, then set_status(READY)), a kernel consumes.
 *  4. The device calls' refusals (an index past the items, CAS against the wrong status, the
 *     wrong expected status, custom info where there is none) and the host's (items in GPU
 *     memory: NOT_SUPPORTED on the CPU); stop and destroy; the doca_gpu destroyed cleanly.
 * Exits 77 only when /dev/nvidiactl is absent; any other CUDA failure is a failure.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

#include "doca_gpunetio.h"
#include "doca_gpunetio_dev_sem.cuh"

#include "gpu_check.h"

#define RING 64u
#define ITEMS 200000u
#define CPU_ITEMS 20000u
#define WAIT_NS 10000000000ull /* 10 s for any one item */

struct info {
	uint64_t seq;
	uint64_t check;
};

/* What a kernel reports (mapped host memory). */
struct report {
	uint32_t done;	 /* items handled */
	uint32_t bad;	 /* items with a wrong field */
	uint32_t stuck;	 /* 1: a wait ran out */
	uint32_t errors; /* device calls that failed unexpectedly */
	doca_error_t neg[8];
};

__device__ static inline uint64_t now_ns(void)
{
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__host__ __device__ static inline uint64_t check_of(uint64_t seq)
{
	return seq * 0x9e3779b97f4a7c15ull ^ 0x5344u;
}

static __global__ void producer(struct doca_gpu_semaphore_gpu *sem, uint32_t n, struct report *r)
{
	for (uint32_t k = 0; k < n; k++) {
		uint32_t idx = k % RING;
		enum doca_gpu_semaphore_status st = DOCA_GPU_SEMAPHORE_STATUS_ERROR;
		uint64_t deadline = now_ns() + WAIT_NS;
		struct info *inf = nullptr;

		while (doca_gpu_dev_semaphore_get_status(sem, idx, &st) == DOCA_SUCCESS &&
		       st != DOCA_GPU_SEMAPHORE_STATUS_FREE && now_ns() < deadline)
			;
		if (st != DOCA_GPU_SEMAPHORE_STATUS_FREE) {
			r->stuck = 1;
			return;
		}
		if (doca_gpu_dev_semaphore_get_custom_info_addr(sem, idx, (void **)&inf) !=
		    DOCA_SUCCESS) {
			r->errors++;
			return;
		}
		inf->seq = k;
		inf->check = check_of(k);
		if (doca_gpu_dev_semaphore_set_packet_info(sem, idx,
							   DOCA_GPU_SEMAPHORE_STATUS_READY,
							   k & 0xffffu, k) != DOCA_SUCCESS) {
			r->errors++;
			return;
		}
		DOCA_GPUNETIO_VOLATILE(r->done) = k + 1;
	}
}

/* check_pkt: the packet info was set too (a GPU producer; the CPU API sets only the status) */
static __global__ void consumer(struct doca_gpu_semaphore_gpu *sem, uint32_t n, int check_pkt,
				struct report *r)
{
	for (uint32_t k = 0; k < n; k++) {
		uint32_t idx = k % RING, num = 0;
		uint64_t start = 0, deadline = now_ns() + WAIT_NS;
		struct info *inf = nullptr;
		doca_error_t st;

		while ((st = doca_gpu_dev_semaphore_get_packet_info_status(
				sem, idx, DOCA_GPU_SEMAPHORE_STATUS_READY, &num, &start)) ==
			       DOCA_ERROR_NOT_FOUND &&
		       now_ns() < deadline)
			;
		if (st != DOCA_SUCCESS) {
			r->stuck = st == DOCA_ERROR_NOT_FOUND;
			r->errors += st != DOCA_ERROR_NOT_FOUND;
			return;
		}
		(void)doca_gpu_dev_semaphore_get_custom_info_addr(sem, idx, (void **)&inf);
		if (inf == nullptr || DOCA_GPUNETIO_VOLATILE(inf->seq) != k ||
		    DOCA_GPUNETIO_VOLATILE(inf->check) != check_of(k) ||
		    (check_pkt && (start != k || num != (k & 0xffffu))))
			r->bad++;
		if (doca_gpu_dev_semaphore_set_status(sem, idx, DOCA_GPU_SEMAPHORE_STATUS_FREE) !=
		    DOCA_SUCCESS)
			r->errors++;
		DOCA_GPUNETIO_VOLATILE(r->done) = k + 1;
	}
}

/* The refusals of the device calls, on a started semaphore of RING items with custom info. */
static __global__ void negatives(struct doca_gpu_semaphore_gpu *sem,
				 struct doca_gpu_semaphore_gpu *plain, struct report *r)
{
	enum doca_gpu_semaphore_status st;
	uint32_t num;
	uint64_t start;
	void *p;

	r->neg[0] = doca_gpu_dev_semaphore_get_status(sem, RING, &st);
	r->neg[1] = doca_gpu_dev_semaphore_set_status(sem, RING, DOCA_GPU_SEMAPHORE_STATUS_READY);
	r->neg[2] = doca_gpu_dev_semaphore_set_status_cas(sem, 0, DOCA_GPU_SEMAPHORE_STATUS_READY,
							  DOCA_GPU_SEMAPHORE_STATUS_DONE);
	r->neg[3] = doca_gpu_dev_semaphore_set_status_cas(sem, 0, DOCA_GPU_SEMAPHORE_STATUS_FREE,
							  DOCA_GPU_SEMAPHORE_STATUS_HOLD);
	r->neg[4] = doca_gpu_dev_semaphore_get_packet_info_status(
		sem, 0, DOCA_GPU_SEMAPHORE_STATUS_READY, &num, &start);
	r->neg[5] = doca_gpu_dev_semaphore_get_custom_info_addr(plain, 0, &p);
	r->neg[6] = doca_gpu_dev_semaphore_set_status(sem, 0, (enum doca_gpu_semaphore_status)9);
	(void)doca_gpu_dev_semaphore_get_status(sem, 0, &st);
	r->neg[7] = st == DOCA_GPU_SEMAPHORE_STATUS_HOLD ? DOCA_SUCCESS : DOCA_ERROR_UNEXPECTED;
	(void)doca_gpu_dev_semaphore_set_status(sem, 0, DOCA_GPU_SEMAPHORE_STATUS_FREE);
}

static struct doca_gpu_semaphore *make(struct doca_gpu *gpu, enum doca_gpu_mem_type items,
				       uint32_t info_bytes, enum doca_gpu_mem_type info_type)
{
	struct doca_gpu_semaphore *sem = nullptr;

	CHECK(doca_gpu_semaphore_create(gpu, &sem));
	CHECK(doca_gpu_semaphore_set_memory_type(sem, items));
	CHECK(doca_gpu_semaphore_set_items_num(sem, RING));
	if (info_bytes != 0)
		CHECK(doca_gpu_semaphore_set_custom_info(sem, info_bytes, info_type));
	CHECK(doca_gpu_semaphore_start(sem));
	return sem;
}

/* Wait (bounded) for a stream; 0 when it finished in time. */
static int stream_wait(cudaStream_t s, double seconds)
{
	double deadline = host_now_s() + seconds;

	while (cudaStreamQuery(s) == cudaErrorNotReady) {
		if (host_now_s() > deadline)
			return -1;
		usleep(1000);
	}
	CHECK_CUDA(cudaGetLastError());
	return 0;
}

static struct report *new_report(void)
{
	struct report *r = nullptr;

	CHECK_CUDA(cudaHostAlloc((void **)&r, sizeof(*r), cudaHostAllocMapped));
	std::memset(r, 0, sizeof(*r));
	return r;
}

static void gpu_to_gpu(struct doca_gpu *gpu)
{
	struct doca_gpu_semaphore *sem =
		make(gpu, DOCA_GPU_MEM_TYPE_GPU, sizeof(struct info), DOCA_GPU_MEM_TYPE_GPU);
	struct doca_gpu_semaphore_gpu *h = nullptr;
	enum doca_gpu_semaphore_status st;
	struct report *rp = new_report(), *rc = new_report();
	cudaStream_t sp, sc;
	double t0;

	CHECK(doca_gpu_semaphore_get_gpu_handle(sem, &h));
	/* the CPU cannot reach items in device memory */
	CHECK_STATUS(doca_gpu_semaphore_get_status(sem, 0, &st), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_CUDA(cudaStreamCreateWithFlags(&sp, cudaStreamNonBlocking));
	CHECK_CUDA(cudaStreamCreateWithFlags(&sc, cudaStreamNonBlocking));
	/*
	 * Both kernels loaded before either runs: with CUDA's lazy loading (the default) the
	 * second launch would load its kernel only after the first, which spins waiting for it,
	 * has ended; the two would run one after the other and each wait would run out.
	 */
	{
		cudaFuncAttributes fa;

		CHECK_CUDA(cudaFuncGetAttributes(&fa, consumer));
		CHECK_CUDA(cudaFuncGetAttributes(&fa, producer));
	}
	t0 = host_now_s();
	consumer<<<1, 1, 0, sc>>>(h, ITEMS, 1, rc);
	producer<<<1, 1, 0, sp>>>(h, ITEMS, rp);
	CHECK_CUDA(cudaGetLastError());
	if (stream_wait(sp, 120) != 0 || stream_wait(sc, 120) != 0)
		FAIL("GPU to GPU: the kernels did not finish within 120 s");
	if (rp->done != ITEMS || rc->done != ITEMS || rc->bad != 0 || rp->stuck || rc->stuck ||
	    rp->errors || rc->errors)
		FAIL("GPU to GPU: produced %u consumed %u of %u, %u bad, stuck %u/%u, errors %u/%u",
		     rp->done, rc->done, ITEMS, rc->bad, rp->stuck, rc->stuck, rp->errors,
		     rc->errors);
	else
		std::printf("GPU to GPU: %u items through a %u-item ring, every one checked, "
			    "%.2f M items/s\n",
			    ITEMS, RING, ITEMS / (host_now_s() - t0) / 1e6);
	CHECK_CUDA(cudaStreamDestroy(sp));
	CHECK_CUDA(cudaStreamDestroy(sc));
	CHECK(doca_gpu_semaphore_stop(sem));
	CHECK(doca_gpu_semaphore_destroy(sem));
	CHECK_CUDA(cudaFreeHost(rp));
	CHECK_CUDA(cudaFreeHost(rc));
}

static void gpu_to_cpu(struct doca_gpu *gpu)
{
	struct doca_gpu_semaphore *sem = make(gpu, DOCA_GPU_MEM_TYPE_CPU_GPU, sizeof(struct info),
					      DOCA_GPU_MEM_TYPE_CPU_GPU);
	struct doca_gpu_semaphore_gpu *h = nullptr;
	struct report *rp = new_report();
	uint32_t k = 0, bad = 0;
	cudaStream_t sp;
	double deadline;

	CHECK(doca_gpu_semaphore_get_gpu_handle(sem, &h));
	CHECK_CUDA(cudaStreamCreateWithFlags(&sp, cudaStreamNonBlocking));
	producer<<<1, 1, 0, sp>>>(h, CPU_ITEMS, rp);
	CHECK_CUDA(cudaGetLastError());
	deadline = host_now_s() + 60;
	while (k < CPU_ITEMS && host_now_s() < deadline) {
		enum doca_gpu_semaphore_status st = DOCA_GPU_SEMAPHORE_STATUS_ERROR;
		struct info *inf = nullptr;

		CHECK(doca_gpu_semaphore_get_status(sem, k % RING, &st));
		if (st != DOCA_GPU_SEMAPHORE_STATUS_READY)
			continue;
		CHECK(doca_gpu_semaphore_get_custom_info_addr(sem, k % RING, (void **)&inf));
		if (inf->seq != k || inf->check != check_of(k))
			bad++;
		CHECK(doca_gpu_semaphore_set_status(sem, k % RING, DOCA_GPU_SEMAPHORE_STATUS_FREE));
		k++;
	}
	if (stream_wait(sp, 30) != 0)
		FAIL("GPU to CPU: the producer did not finish");
	if (k != CPU_ITEMS || bad != 0 || rp->stuck || rp->errors)
		FAIL("GPU to CPU: consumed %u of %u, %u bad, stuck %u, errors %u", k, CPU_ITEMS,
		     bad, rp->stuck, rp->errors);
	else
		std::printf("GPU to CPU: %u items consumed by the CPU, every one checked\n", k);
	CHECK_CUDA(cudaStreamDestroy(sp));
	CHECK(doca_gpu_semaphore_destroy(sem)); /* stops it first */
	CHECK_CUDA(cudaFreeHost(rp));
}

static void cpu_to_gpu(struct doca_gpu *gpu)
{
	struct doca_gpu_semaphore *sem = make(gpu, DOCA_GPU_MEM_TYPE_CPU_GPU, sizeof(struct info),
					      DOCA_GPU_MEM_TYPE_CPU_GPU);
	struct doca_gpu_semaphore_gpu *h = nullptr;
	struct report *rc = new_report();
	uint32_t k = 0;
	cudaStream_t sc;
	double deadline;

	CHECK(doca_gpu_semaphore_get_gpu_handle(sem, &h));
	CHECK_CUDA(cudaStreamCreateWithFlags(&sc, cudaStreamNonBlocking));
	consumer<<<1, 1, 0, sc>>>(h, CPU_ITEMS, 0, rc);
	CHECK_CUDA(cudaGetLastError());
	deadline = host_now_s() + 60;
	while (k < CPU_ITEMS && host_now_s() < deadline) {
		enum doca_gpu_semaphore_status st = DOCA_GPU_SEMAPHORE_STATUS_ERROR;
		struct info *inf = nullptr;

		CHECK(doca_gpu_semaphore_get_status(sem, k % RING, &st));
		if (st != DOCA_GPU_SEMAPHORE_STATUS_FREE)
			continue;
		CHECK(doca_gpu_semaphore_get_custom_info_addr(sem, k % RING, (void **)&inf));
		inf->seq = k;
		inf->check = check_of(k);
		CHECK(doca_gpu_semaphore_set_status(sem, k % RING,
						    DOCA_GPU_SEMAPHORE_STATUS_READY));
		k++;
	}
	if (stream_wait(sc, 30) != 0)
		FAIL("CPU to GPU: the consumer did not finish");
	if (k != CPU_ITEMS || rc->done != CPU_ITEMS || rc->stuck || rc->errors || rc->bad != 0)
		FAIL("CPU to GPU: produced %u consumed %u of %u, %u bad, stuck %u, errors %u", k,
		     rc->done, CPU_ITEMS, rc->bad, rc->stuck, rc->errors);
	else
		std::printf("CPU to GPU: %u items consumed by a kernel, custom info checked\n", k);
	CHECK_CUDA(cudaStreamDestroy(sc));
	CHECK(doca_gpu_semaphore_destroy(sem));
	CHECK_CUDA(cudaFreeHost(rc));
}

static void refusals(struct doca_gpu *gpu)
{
	struct doca_gpu_semaphore *sem =
		make(gpu, DOCA_GPU_MEM_TYPE_CPU_GPU, 8, DOCA_GPU_MEM_TYPE_GPU);
	struct doca_gpu_semaphore *plain =
		make(gpu, DOCA_GPU_MEM_TYPE_GPU, 0, DOCA_GPU_MEM_TYPE_GPU);
	struct doca_gpu_semaphore_gpu *h = nullptr, *hp = nullptr;
	struct report *r = new_report();
	void *p = nullptr;

	CHECK(doca_gpu_semaphore_get_gpu_handle(sem, &h));
	CHECK(doca_gpu_semaphore_get_gpu_handle(plain, &hp));
	/* custom info in device memory: not for the CPU; configuration after start refused */
	CHECK_STATUS(doca_gpu_semaphore_get_custom_info_addr(sem, 0, &p), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_STATUS(doca_gpu_semaphore_set_items_num(sem, 8), DOCA_ERROR_BAD_STATE);
	CHECK_STATUS(doca_gpu_semaphore_start(sem), DOCA_ERROR_BAD_STATE);
	CHECK_STATUS(doca_gpu_semaphore_get_status(sem, RING, nullptr), DOCA_ERROR_INVALID_VALUE);
	negatives<<<1, 1>>>(h, hp, r);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaDeviceSynchronize());
	{
		static const doca_error_t want[8] = {
			DOCA_ERROR_INVALID_VALUE, DOCA_ERROR_INVALID_VALUE,
			DOCA_ERROR_NOT_PERMITTED, DOCA_SUCCESS,
			DOCA_ERROR_NOT_FOUND,	  DOCA_ERROR_INVALID_VALUE,
			DOCA_ERROR_INVALID_VALUE, DOCA_SUCCESS};

		for (int i = 0; i < 8; i++)
			if (r->neg[i] != want[i])
				FAIL("device refusal %d: expected %s, got %s", i,
				     doca_error_get_name(want[i]), doca_error_get_name(r->neg[i]));
	}
	CHECK(doca_gpu_semaphore_stop(sem));
	CHECK_STATUS(doca_gpu_semaphore_stop(sem), DOCA_ERROR_BAD_STATE);
	CHECK(doca_gpu_semaphore_destroy(sem));
	CHECK(doca_gpu_semaphore_destroy(plain));
	CHECK_CUDA(cudaFreeHost(r));
}

int main(void)
{
	struct doca_gpu *gpu = nullptr;
	char bus[32];

	gpu_check_require_driver();
	CHECK_CUDA(cudaSetDevice(0));
	CHECK_CUDA(cudaDeviceGetPCIBusId(bus, sizeof(bus), 0));
	CHECK(doca_gpu_create(bus, &gpu));
	gpu_to_gpu(gpu);
	gpu_to_cpu(gpu);
	cpu_to_gpu(gpu);
	refusals(gpu);
	CHECK(doca_gpu_destroy(gpu));
	std::printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
