/*
 * GPU ladder step 5 (negative) and teardown order:
 *  - sdp_gpu_set_cc_override(7, 5): doca_gpu_create answers NOT_SUPPORTED and the capability
 *    query (sdp_gpu_cap_query) says device 0 is unsupported, overridden; removing the override
 *    restores both;
 *  - with a GPU receive queue and a GPU send queue running and a persistent kernel polling the
 *    receive queue, every wrong order is refused with the documented error and changes
 *    nothing: destroy a running rxq / txq (BAD_STATE), destroy the mmap a queue holds (IN_USE),
 *    doca_gpu_destroy with live allocations (IN_USE), close the device (IN_USE);
 *  - then the right order (exit flag, kernel finished, contexts stopped, queues destroyed, mmaps
 *    destroyed, memory freed, device closed, GPU destroyed) succeeds at every step (a stopped
 *    queue still holds its mmap and device: IN_USE), the kernel saw the frames sent meanwhile;
 *    that doca_gpu_destroy and doca_dev_close succeed proves no allocation or object is left;
 *  - a GPU receive queue stopped while its kernel still polls it: doca_ctx_stop returns at once
 *    (it never waits for the kernel), the kernel's next receive answers INVALID_VALUE (stopped
 *    handle, its memory still mapped: no fault), and the rest of the teardown is clean.
 * Exits 77 only when /dev/nvidiactl is absent; any other CUDA failure is a failure.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "ladder_common.h"

#include <doca_gpunetio_dev_eth_rxq.cuh>

#include "softdpu/gpunetio.h"

/* Progress marks on stderr (unbuffered), so a hang shows where it is. */
#define STEP(what) std::fprintf(stderr, "step: %s\n", what)

__global__ void poll_kernel(struct doca_gpu_eth_rxq *rxq, uint32_t *exit_cond,
			    unsigned long long *packets, uint32_t *error)
{
	uint64_t first;
	uint32_t n;

	while (DOCA_GPUNETIO_VOLATILE(*exit_cond) == 0) {
		doca_error_t ret = doca_gpu_dev_eth_rxq_recv<DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>(
			rxq, 64, 1000000, &first, &n, NULL);

		if (ret != DOCA_SUCCESS) {
			*error = (uint32_t)ret;
			break;
		}
		*packets += n;
		__threadfence_system();
	}
}

static void test_cc_override(void)
{
	struct doca_gpu *gpu = NULL;
	struct sdp_gpu_cap cap;
	char bus[32];

	CHECK_CUDA(cudaDeviceGetPCIBusId(bus, sizeof(bus), 0));
	CHECK(sdp_gpu_set_cc_override(7, 5));
	CHECK_STATUS(doca_gpu_create(bus, &gpu), DOCA_ERROR_NOT_SUPPORTED);
	if (gpu != NULL)
		FAIL("doca_gpu_create wrote a handle although it failed");
	std::memset(&cap, 0, sizeof(cap));
	CHECK(sdp_gpu_cap_query(0, &cap));
	std::printf(
		"override 7.5: create refused; cap: %s cc %d.%d overridden %d supported %d (%s)\n",
		cap.bus_id, cap.cc_major, cap.cc_minor, cap.cc_overridden, cap.supported,
		cap.reason);
	if (cap.supported != 0 || cap.cc_overridden != 1 || cap.cc_major != 7 || cap.cc_minor != 5)
		FAIL("the capability query does not report the overridden 7.5 as unsupported");
	CHECK(sdp_gpu_set_cc_override(-1, 0));
	CHECK(sdp_gpu_cap_query(0, &cap));
	if (cap.supported != 1 || cap.cc_overridden != 0 || cap.cc_major < 8)
		FAIL("override removed: device 0 should be supported again (cc %d.%d)",
		     cap.cc_major, cap.cc_minor);
	CHECK(doca_gpu_create(bus, &gpu));
	CHECK(doca_gpu_destroy(gpu));
}

static struct doca_pe *g_pe;

static void test_teardown(const char *na, const char *nb)
{
	static uint8_t frames[16 * 256] __attribute__((aligned(4096)));
	struct doca_gpu *gpu = NULL;
	struct doca_dev *da, *db;
	struct ladder_rxq q;
	struct ladder_flag flag;
	struct doca_eth_txq *gtxq = NULL, *ctxq = NULL;
	struct doca_mmap *tx_mmap = NULL, *cpu_mmap = NULL;
	struct doca_buf_inventory *inv = NULL;
	void *tx_mem = NULL;
	unsigned long long *packets;
	uint32_t *error;
	cudaStream_t stream;
	size_t free0 = 0, free1 = 0, total = 0;
	char bus[32];
	double end;

	CHECK_CUDA(cudaDeviceGetPCIBusId(bus, sizeof(bus), 0));
	CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	CHECK_CUDA(cudaMallocHost(&packets, sizeof(*packets) + sizeof(*error)));
	error = (uint32_t *)(packets + 1);
	*packets = 0;
	*error = 0;
	CHECK_CUDA(cudaDeviceSynchronize());
	CHECK_CUDA(cudaMemGetInfo(&free0, &total));

	CHECK(doca_gpu_create(bus, &gpu));
	da = ladder_open(na);
	db = ladder_open(nb);
	/* GPU receive queue on B with a kernel polling it; GPU send queue on B */
	ladder_rxq_start(gpu, db, 256, 2048, DOCA_GPU_MEM_TYPE_GPU, SDP_ETH_OVERFLOW_DEFAULT, &q);
	ladder_flag_alloc(gpu, &flag);
	CHECK(doca_gpu_mem_alloc(gpu, 65536, 65536, DOCA_GPU_MEM_TYPE_GPU, &tx_mem, NULL));
	CHECK(doca_mmap_create(&tx_mmap));
	CHECK(doca_mmap_set_memrange(tx_mmap, tx_mem, 65536));
	CHECK(doca_mmap_add_dev(tx_mmap, db));
	CHECK(doca_mmap_start(tx_mmap));
	CHECK(doca_eth_txq_create(db, 256, &gtxq));
	CHECK(doca_eth_txq_gpu_set_completion_on_gpu(gtxq));
	CHECK(doca_ctx_set_datapath_on_gpu(doca_eth_txq_as_doca_ctx(gtxq), gpu));
	CHECK(doca_ctx_start(doca_eth_txq_as_doca_ctx(gtxq)));
	poll_kernel<<<1, 1, 0, stream>>>(q.gpu_handle, flag.gpu, packets, error);
	CHECK_CUDA(cudaGetLastError());

	STEP("cpu sends 16");
	/* A sends 16 frames to the queue the kernel polls */
	CHECK(doca_pe_create(&g_pe));
	ladder_host_bufs_start(da, frames, sizeof(frames), 16, &cpu_mmap, &inv);
	ctxq = ladder_cpu_txq_start(da, 64, 16, g_pe);
	for (int i = 0; i < 16; i++) {
		struct doca_eth_txq_task_send *t = NULL;
		struct doca_buf *b = NULL;
		uint8_t *f = frames + i * 256;

		std::memset(f, 0, 14);
		f[0] = 2;
		f[6] = 2;
		f[12] = 0x88;
		f[13] = 0xb5;
		std::memset(f + 14, i, 114);
		CHECK(doca_buf_inventory_buf_get_by_data(inv, cpu_mmap, f, 128, &b));
		CHECK(doca_eth_txq_task_send_allocate_init(ctxq, b, (union doca_data){0}, &t));
		CHECK(doca_task_submit(doca_eth_txq_task_send_as_doca_task(t)));
	}
	end = host_now_s() + 10;
	while ((ladder_sent < 16 || DOCA_GPUNETIO_VOLATILE(*packets) < 16) && host_now_s() < end)
		if (doca_pe_progress(g_pe) == 0)
			usleep(200);

	STEP("wrong orders");
	/* wrong orders: each refused, nothing changed */
	CHECK_STATUS(doca_eth_rxq_destroy(q.rxq), DOCA_ERROR_BAD_STATE);
	CHECK_STATUS(doca_eth_txq_destroy(gtxq), DOCA_ERROR_BAD_STATE);
	CHECK_STATUS(doca_mmap_destroy(q.mmap), DOCA_ERROR_IN_USE);
	CHECK_STATUS(doca_gpu_destroy(gpu), DOCA_ERROR_IN_USE);
	CHECK_STATUS(doca_dev_close(db), DOCA_ERROR_IN_USE);
	STEP("kernel still receiving");
	/* still working: the kernel keeps receiving */
	if (DOCA_GPUNETIO_VOLATILE(*packets) != 16 || *error != 0)
		FAIL("kernel saw %llu of 16 frames (error %u)", *packets, *error);

	/* The right order: the kernel goes first (test_stop_under_kernel: the other way round) */
	STEP("right order: exit flag");
	DOCA_GPUNETIO_VOLATILE(*flag.cpu) = 1;
	if (!ladder_stream_wait(stream, 5)) {
		FAIL("the kernel did not stop within 5 s of its exit flag");
		std::exit(1);
	}
	STEP("queues stop");
	CHECK(doca_ctx_stop(doca_eth_txq_as_doca_ctx(gtxq)));
	CHECK(doca_ctx_stop(doca_eth_rxq_as_doca_ctx(q.rxq)));
	/* stopped but not destroyed: the mmap is still held, and so is the device */
	CHECK_STATUS(doca_mmap_destroy(q.mmap), DOCA_ERROR_IN_USE);
	CHECK_STATUS(doca_dev_close(db), DOCA_ERROR_IN_USE);
	CHECK(doca_eth_rxq_destroy(q.rxq));
	CHECK(doca_eth_txq_destroy(gtxq));
	CHECK(doca_mmap_destroy(q.mmap));
	CHECK(doca_mmap_destroy(tx_mmap));
	CHECK(doca_gpu_mem_free(gpu, q.pkt_gpu));
	CHECK(doca_gpu_mem_free(gpu, tx_mem));
	CHECK(doca_gpu_mem_free(gpu, flag.gpu));
	STEP("cpu txq stop");
	ladder_cpu_ctx_stop(doca_eth_txq_as_doca_ctx(ctxq), g_pe);
	CHECK(doca_eth_txq_destroy(ctxq));
	ladder_host_bufs_destroy(cpu_mmap, inv);
	CHECK(doca_pe_destroy(g_pe));
	STEP("close, gpu destroy");
	CHECK(doca_dev_close(da));
	CHECK(doca_dev_close(db));
	CHECK(doca_gpu_destroy(gpu));
	CHECK_CUDA(cudaStreamDestroy(stream));
	CHECK_CUDA(cudaFreeHost(packets));
	CHECK_CUDA(cudaDeviceSynchronize());
	CHECK_CUDA(cudaMemGetInfo(&free1, &total));
	std::printf("teardown: wrong orders refused, right order clean; device memory free %zu -> "
		    "%zu bytes (other processes share the GPU: shown, not checked)\n",
		    free0, free1);
}

static void test_stop_under_kernel(const char *nb)
{
	struct doca_gpu *gpu = NULL;
	struct doca_dev *db;
	struct ladder_rxq q;
	struct ladder_flag flag;
	unsigned long long *packets;
	uint32_t *error;
	cudaStream_t stream;
	char bus[32];
	double t0, dt;

	CHECK_CUDA(cudaDeviceGetPCIBusId(bus, sizeof(bus), 0));
	CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	CHECK_CUDA(cudaMallocHost(&packets, sizeof(*packets) + sizeof(*error)));
	error = (uint32_t *)(packets + 1);
	*packets = 0;
	*error = 0;
	CHECK(doca_gpu_create(bus, &gpu));
	db = ladder_open(nb);
	ladder_rxq_start(gpu, db, 256, 2048, DOCA_GPU_MEM_TYPE_GPU, SDP_ETH_OVERFLOW_DEFAULT, &q);
	ladder_flag_alloc(gpu, &flag);
	poll_kernel<<<1, 1, 0, stream>>>(q.gpu_handle, flag.gpu, packets, error);
	CHECK_CUDA(cudaGetLastError());
	usleep(50000); /* the kernel is in its receive loop */
	if (cudaStreamQuery(stream) != cudaErrorNotReady)
		FAIL("the polling kernel is not running");

	STEP("stop under a running kernel");
	t0 = host_now_s();
	CHECK(doca_ctx_stop(doca_eth_rxq_as_doca_ctx(q.rxq)));
	dt = host_now_s() - t0;
	if (dt > 1.0)
		FAIL("doca_ctx_stop took %.3f s with a kernel running (it must not wait for it)",
		     dt);
	if (!ladder_stream_wait(stream, 5)) {
		FAIL("the kernel did not end within 5 s of its queue stopping");
		std::exit(1);
	}
	if (*error != (uint32_t)DOCA_ERROR_INVALID_VALUE)
		FAIL("the kernel's receive after the stop answered %u, want INVALID_VALUE (%d)",
		     *error, (int)DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_eth_rxq_destroy(q.rxq));
	CHECK(doca_mmap_destroy(q.mmap));
	CHECK(doca_gpu_mem_free(gpu, q.pkt_gpu));
	CHECK(doca_gpu_mem_free(gpu, flag.gpu));
	CHECK(doca_dev_close(db));
	CHECK(doca_gpu_destroy(gpu)); /* releases what the stopped queue left for the kernel */
	CHECK_CUDA(cudaStreamDestroy(stream));
	CHECK_CUDA(cudaFreeHost(packets));
	std::printf("stop under a running kernel: returned in %.3f ms, the kernel's next receive "
		    "answered INVALID_VALUE, teardown clean\n",
		    dt * 1e3);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	struct doca_gpu *gpu = ladder_gpu_init(); /* the skip check and the context */
	char na[32], nb[32];

	CHECK(doca_gpu_destroy(gpu));
	ladder_declare_loop_pair("l5", na, nb);

	test_cc_override();
	test_teardown(na, nb);
	test_stop_under_kernel(nb);
	std::printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}
