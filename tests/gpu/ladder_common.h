/*
 * GPU ladder tests (issue 5, seed steps 1-3 and 5): what the four programs share (the CPU queue
 * helpers also serve test_eth_gpu_path.cu). Header-only (static functions), CUDA C++. Every wait is bounded; CUDA failures are failures; the only
 * skip (77) is a machine without /dev/nvidiactl.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef LADDER_COMMON_H_
#define LADDER_COMMON_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <endian.h>

#include <cuda_runtime.h>
#include <unistd.h>

#include "doca_buf.h"
#include "doca_buf_inventory.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_eth_rxq.h"
#include "doca_eth_rxq_cpu_data_path.h"
#include "doca_eth_rxq_gpu_data_path.h"
#include "doca_eth_txq.h"
#include "doca_eth_txq_cpu_data_path.h"
#include "doca_eth_txq_gpu_data_path.h"
#include "doca_gpunetio.h"
#include "doca_mmap.h"
#include "doca_pe.h"
#include "softdpu/eth.h"

#include "gpu_check.h"

/* 77 without an NVIDIA driver; else the GPU handle of CUDA device 0 (its context current). */
static inline struct doca_gpu *ladder_gpu_init(void)
{
	struct doca_gpu *gpu = NULL;
	char bus[32];

	gpu_check_require_driver();
	CHECK_CUDA(cudaSetDevice(0));
	CHECK_CUDA(cudaFree(0));
	CHECK_CUDA(cudaDeviceGetPCIBusId(bus, sizeof(bus), 0));
	CHECK(doca_gpu_create(bus, &gpu));
	return gpu;
}

/* Declare devices (decls, before the first device list of the process) and open one by name. */
static inline struct doca_dev *ladder_open(const char *name)
{
	struct doca_devinfo **list = NULL;
	struct doca_dev *dev = NULL;
	uint32_t n = 0;

	CHECK(doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n; i++) {
		char ibdev[64] = "";

		if (doca_devinfo_get_ibdev_name(list[i], ibdev, sizeof(ibdev)) == DOCA_SUCCESS &&
		    std::strcmp(ibdev, name) == 0)
			CHECK(doca_dev_open(list[i], &dev));
	}
	CHECK(doca_devinfo_destroy_list(list));
	if (dev == NULL) {
		FAIL("device %s is not listed (SOFTDPU_DEVICES=%s)", name,
		     getenv("SOFTDPU_DEVICES") ? getenv("SOFTDPU_DEVICES") : "");
		std::exit(1);
	}
	return dev;
}

/*
 * Declare a loop pair, <tag>a<pid> and <tag>b<pid> (their names into a and b, 32 bytes each),
 * as the process's devices, with no device configuration.
 */
static inline void ladder_declare_loop_pair(const char *tag, char *a, char *b)
{
	char decls[256];
	int pid = (int)getpid();

	std::snprintf(a, 32, "%sa%d", tag, pid);
	std::snprintf(b, 32, "%sb%d", tag, pid);
	std::snprintf(decls, sizeof(decls), "loop:name=%s,peer=%s;loop:name=%s,peer=%s", a, b, b,
		      a);
	setenv("SOFTDPU_DEVICES", decls, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
}

/* A CYCLIC receive queue on the GPU data path, its packet buffer of type mtype, started. */
struct ladder_rxq {
	struct doca_eth_rxq *rxq;
	struct doca_gpu_eth_rxq *gpu_handle;
	struct doca_mmap *mmap;
	void *pkt_gpu;
	size_t size;
};

static inline void ladder_rxq_start(struct doca_gpu *gpu, struct doca_dev *dev, uint32_t slots,
				    uint32_t max_pkt, enum doca_gpu_mem_type mtype,
				    enum sdp_eth_overflow overflow, struct ladder_rxq *q)
{
	void *cpu = NULL;
	uint32_t size = 0;

	std::memset(q, 0, sizeof(*q));
	CHECK(doca_eth_rxq_create(dev, slots, max_pkt, &q->rxq));
	CHECK(doca_eth_rxq_set_type(q->rxq, DOCA_ETH_RXQ_TYPE_CYCLIC));
	CHECK(doca_eth_rxq_estimate_packet_buf_size(DOCA_ETH_RXQ_TYPE_CYCLIC, 0, 0, max_pkt, slots,
						    0, 0, 0, &size));
	q->size = (size + 65535) & ~(size_t)65535;
	CHECK(doca_gpu_mem_alloc(gpu, q->size, 65536, mtype, &q->pkt_gpu,
				 mtype == DOCA_GPU_MEM_TYPE_GPU ? NULL : &cpu));
	CHECK(doca_mmap_create(&q->mmap));
	CHECK(doca_mmap_set_memrange(q->mmap, q->pkt_gpu, q->size));
	CHECK(doca_mmap_set_permissions(q->mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	CHECK(doca_mmap_add_dev(q->mmap, dev));
	CHECK(doca_mmap_start(q->mmap));
	CHECK(doca_eth_rxq_set_pkt_buf(q->rxq, q->mmap, 0, (uint32_t)q->size));
	CHECK(sdp_eth_rxq_set_overflow(q->rxq, overflow));
	CHECK(doca_ctx_set_datapath_on_gpu(doca_eth_rxq_as_doca_ctx(q->rxq), gpu));
	CHECK(doca_ctx_start(doca_eth_rxq_as_doca_ctx(q->rxq)));
	CHECK(doca_eth_rxq_get_gpu_handle(q->rxq, &q->gpu_handle));
}

/* The right order: (kernel already finished) stop, destroy the queue, the mmap, the memory. */
static inline void ladder_rxq_destroy(struct doca_gpu *gpu, struct ladder_rxq *q)
{
	CHECK(doca_ctx_stop(doca_eth_rxq_as_doca_ctx(q->rxq)));
	CHECK(doca_eth_rxq_destroy(q->rxq));
	CHECK(doca_mmap_destroy(q->mmap));
	CHECK(doca_gpu_mem_free(gpu, q->pkt_gpu));
	std::memset(q, 0, sizeof(*q));
}

/* Wait for a stream's work, at most timeout_s (polled every millisecond). */
static inline bool ladder_stream_wait(cudaStream_t s, double timeout_s)
{
	double end = host_now_s() + timeout_s;

	for (;;) {
		cudaError_t e = cudaStreamQuery(s);

		if (e == cudaSuccess)
			return true;
		if (e != cudaErrorNotReady) {
			FAIL("kernel failed: %s", cudaGetErrorString(e));
			std::exit(1);
		}
		if (host_now_s() > end)
			return false;
		usleep(1000);
	}
}

/* A GPU_CPU exit flag (the CPU writes, kernels poll). */
struct ladder_flag {
	uint32_t *gpu, *cpu;
};

static inline void ladder_flag_alloc(struct doca_gpu *gpu, struct ladder_flag *f)
{
	CHECK(doca_gpu_mem_alloc(gpu, sizeof(uint32_t), 4096, DOCA_GPU_MEM_TYPE_GPU_CPU,
				 (void **)&f->gpu, (void **)&f->cpu));
	DOCA_GPUNETIO_VOLATILE(*f->cpu) = 0;
}

/* Stop a CPU-data-path context, progressing pe until it is idle (at most 10 s). */
static inline void ladder_cpu_ctx_stop(struct doca_ctx *ctx, struct doca_pe *pe)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;
	doca_error_t s = doca_ctx_stop(ctx);
	double end = host_now_s() + 10;

	if (s != DOCA_SUCCESS && s != DOCA_ERROR_IN_PROGRESS)
		FAIL("ctx stop: %s", doca_error_get_name(s));
	while (doca_ctx_get_state(ctx, &st) == DOCA_SUCCESS && st != DOCA_CTX_STATE_IDLE &&
	       host_now_s() < end) {
		if (doca_pe_progress(pe) == 0)
			usleep(200);
	}
	if (st != DOCA_CTX_STATE_IDLE)
		FAIL("a context did not stop within 10 s");
}

/* CPU send tasks completed (successfully or not) by ladder_send_done, in this program. */
[[maybe_unused]] static int ladder_sent;

/* Both callbacks of a CPU send queue: release the frame's buffer and the task, count it. */
static inline void ladder_send_done(struct doca_eth_txq_task_send *t, union doca_data u,
				    union doca_data c)
{
	struct doca_buf *b = NULL;

	(void)u;
	(void)c;
	(void)doca_eth_txq_task_send_get_pkt(t, &b);
	(void)doca_buf_dec_refcount(b, NULL);
	doca_task_free(doca_eth_txq_task_send_as_doca_task(t));
	ladder_sent++;
}

/* Host memory mem (len bytes) mapped for dev, and an inventory of n buffers; both started. */
static inline void ladder_host_bufs_start(struct doca_dev *dev, void *mem, size_t len, uint32_t n,
					  struct doca_mmap **mmap, struct doca_buf_inventory **inv)
{
	CHECK(doca_mmap_create(mmap));
	CHECK(doca_mmap_set_memrange(*mmap, mem, len));
	CHECK(doca_mmap_add_dev(*mmap, dev));
	CHECK(doca_mmap_start(*mmap));
	CHECK(doca_buf_inventory_create(n, inv));
	CHECK(doca_buf_inventory_start(*inv));
}

/* Stop and destroy the inventory, then destroy the mmap. */
static inline void ladder_host_bufs_destroy(struct doca_mmap *mmap, struct doca_buf_inventory *inv)
{
	CHECK(doca_buf_inventory_stop(inv));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_mmap_destroy(mmap));
}

/* A CPU send queue on dev (depth descriptors, tasks send tasks calling ladder_send_done) on pe,
 * started. */
static inline struct doca_eth_txq *ladder_cpu_txq_start(struct doca_dev *dev, uint32_t depth,
							uint32_t tasks, struct doca_pe *pe)
{
	struct doca_eth_txq *txq = NULL;

	CHECK(doca_eth_txq_create(dev, depth, &txq));
	CHECK(doca_eth_txq_task_send_set_conf(txq, ladder_send_done, ladder_send_done, tasks));
	CHECK(doca_pe_connect_ctx(pe, doca_eth_txq_as_doca_ctx(txq)));
	CHECK(doca_ctx_start(doca_eth_txq_as_doca_ctx(txq)));
	return txq;
}

/*
 * A CPU receive queue on dev (depth descriptors of 2048 bytes, callbacks ok and err) on pe,
 * started, with tasks receive tasks posted: task i on the 2048 bytes at mem + i * 2048 (of
 * mmap, its buffer from inv).
 */
static inline struct doca_eth_rxq *ladder_cpu_rxq_start(struct doca_dev *dev, uint32_t depth,
							doca_eth_rxq_task_recv_completion_cb_t ok,
							doca_eth_rxq_task_recv_completion_cb_t err,
							uint32_t tasks, struct doca_pe *pe,
							struct doca_buf_inventory *inv,
							struct doca_mmap *mmap, uint8_t *mem)
{
	struct doca_eth_rxq *rxq = NULL;

	CHECK(doca_eth_rxq_create(dev, depth, 2048, &rxq));
	CHECK(doca_eth_rxq_task_recv_set_conf(rxq, ok, err, tasks));
	CHECK(doca_pe_connect_ctx(pe, doca_eth_rxq_as_doca_ctx(rxq)));
	CHECK(doca_ctx_start(doca_eth_rxq_as_doca_ctx(rxq)));
	for (uint32_t i = 0; i < tasks; i++) {
		struct doca_eth_rxq_task_recv *t = NULL;
		struct doca_buf *b = NULL;

		CHECK(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + (size_t)i * 2048, 2048,
							 &b));
		CHECK(doca_eth_rxq_task_recv_allocate_init(rxq, b, (union doca_data){0}, &t));
		CHECK(doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(t)));
	}
	return rxq;
}

#endif /* LADDER_COMMON_H_ */
