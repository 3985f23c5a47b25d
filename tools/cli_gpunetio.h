/*
 * What `softdpu ladder gpunetio` (cli_ladder_gpunetio.c) and `softdpu rollback gpunetio`
 * (cli_rollback.c) share: the devices the tool declares, opening a device by name, CPU data
 * path receive and send queues (the CPU stand-in and the parent Ethernet queue), and the GPU
 * side (cli_gpunetio_kernels.cu, compiled only when CUDA is enabled: without it every GPU call
 * answers DOCA_ERROR_NOT_SUPPORTED and cg_gpu_available() says "built without CUDA").
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef CLI_GPUNETIO_H_
#define CLI_GPUNETIO_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_pe;
struct doca_mmap;
struct doca_buf_inventory;
struct doca_eth_rxq;
struct doca_eth_txq;
struct doca_gpu_eth_rxq;
struct doca_gpu_eth_txq;

#define CG_FRAME_LEN 128
#define CG_NAME_LEN 64

double cg_now_s(void);

/*
 * Declare the tool's devices (appended to SOFTDPU_DEVICES, before the process's first device
 * list), named after the pid: tag "one" (gen, count=1), "burst" (gen, count=burst), "rate"
 * (gen, rate pps), "a"/"b" (a loop pair). cg_dev_name gives the ibdev name of a tag.
 */
void cg_declare_devices(uint32_t burst, uint32_t rate_pps);
const char *cg_dev_name(const char *tag);

/* Open the device whose ibdev name is name: DOCA_ERROR_NOT_FOUND when none is listed. */
doca_error_t cg_open(const char *name, struct doca_dev **dev);

/*
 * A CPU data path REGULAR receive queue with tasks receive tasks re-posted from their
 * completion callback (each completion counted, the first frame kept), on its own PE.
 * ring_slots 0: the default ring; cyclic: SDP_ETH_OVERFLOW_CYCLIC (else back-pressure).
 * post: post the tasks at start (0: later, with cg_rxq_post).
 */
struct cg_rxq {
	struct doca_pe *pe;
	struct doca_eth_rxq *rxq;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	uint8_t *mem;
	uint32_t tasks;
	int no_repost; /* 1: completed tasks are freed, not re-posted (the queue runs dry) */
	uint64_t received, errors;
	uint32_t first_len;
	uint8_t first[CG_FRAME_LEN * 2];
	doca_error_t last_error;
};
doca_error_t cg_rxq_start(struct doca_dev *dev, uint32_t ring_slots, int cyclic, uint32_t tasks,
			  int post, struct cg_rxq *q);
doca_error_t cg_rxq_post(struct cg_rxq *q);
/* Progress the PE for at most seconds, until received >= want (0: the whole time). */
void cg_rxq_progress(struct cg_rxq *q, double seconds, uint64_t want);
void cg_rxq_stop(struct cg_rxq *q);

/* A CPU send queue: send one frame (frame, len) and wait for its completion (bounded). */
doca_error_t cg_cpu_send_one(struct doca_dev *dev, const uint8_t *frame, uint32_t len);

/* A frame of len bytes: Ethernet/IPv4/UDP with a marker payload (the byte k + seq at k). */
void cg_build_frame(uint8_t *frame, uint32_t len, uint32_t seq);

/* ------- GPU side (cli_gpunetio_kernels.cu) ------- */

/* 1 when this program was built with CUDA (cli_gpunetio_kernels.cu), else 0. */
int cg_cuda_built(void);
/* 1 when GPU rungs can run; else 0 with the reason (no /dev/nvidiactl, no driver, no GPU,
 * "built without CUDA"). */
int cg_gpu_available(char *why, size_t len);
/* CUDA driver and runtime versions (1000 * major + 10 * minor), 0 when unknown. */
void cg_cuda_versions(int *driver, int *runtime);
/* cudaSetDevice(ordinal) + context; its PCIe address into bus. */
doca_error_t cg_gpu_select(int ordinal, char *bus, size_t len);
doca_error_t cg_stream_create(void **stream);
void cg_stream_destroy(void *stream);
/* 1 when the stream's work is done, 0 while it runs, -1 when it failed (why filled). */
int cg_stream_done(void *stream, char *why, size_t len);
doca_error_t cg_copy_to_gpu(void *dst_gpu, const void *src, size_t len);

/* What the receive kernel publishes (CPU_GPU memory). */
struct cg_rx_stats {
	uint64_t packets, bytes, calls;
	uint32_t error; /* a receive call's doca_error_t; the kernel stopped */
	uint32_t first_len;
	uint8_t first[CG_FRAME_LEN * 2];
};
/* Persistent receive kernel (one block of 32, block scope) until *stop_gpu != 0. */
doca_error_t cg_rx_kernel_launch(void *stream, struct doca_gpu_eth_rxq *rxq, uint32_t *stop_gpu,
				 struct cg_rx_stats *stats_gpu);

struct cg_tx_stats {
	uint32_t completed; /* completions polled (1 expected) */
	int32_t status;	    /* the completion poll's doca_error_t */
};
/* One thread sends one frame (frame_gpu, len bytes of GPU memory, mkey in big endian) through
 * txq with NOTIFY and polls its completion (bounded: 50 blocking polls of 100 ms). */
doca_error_t cg_tx_kernel_launch(void *stream, struct doca_gpu_eth_txq *txq, void *frame_gpu,
				 uint32_t mkey_be, uint32_t len, struct cg_tx_stats *stats_gpu);

/* ------- GPU attach (cli_gpunetio.c), torn down through the rollback helper ------- */

struct doca_gpu;
struct sdp_gpu_rollback;

/*
 * The GPU part of a device: a doca_gpu (bus), a CYCLIC receive queue on the GPU data path
 * (slots packets of 2048 bytes, device memory registered with an mmap), a GPU_CPU stop flag,
 * CPU_GPU statistics, a stream and the persistent receive kernel; every piece recorded in a
 * rollback plan (rb) as it is made. On failure *layer names the layer (gpu, queue, driver) and
 * why says what.
 */
struct cg_gpu_rx {
	struct doca_gpu *gpu;
	struct doca_eth_rxq *rxq;
	struct doca_gpu_eth_rxq *h;
	struct doca_mmap *mmap;
	void *pkt_gpu;
	size_t size;
	uint32_t *flag_gpu, *flag_cpu;
	struct cg_rx_stats *st_gpu, *st_cpu;
	void *stream;
	struct sdp_gpu_rollback *rb;
	int launched;
};
doca_error_t cg_gpu_rx_attach(const char *bus, struct doca_dev *dev, uint32_t slots,
			      struct cg_gpu_rx *g, const char **layer, char *why, size_t len);
doca_error_t cg_gpu_rx_launch(struct cg_gpu_rx *g, uint32_t deadline_ms, char *why, size_t len);
/* Wait (at most seconds) until the kernel counted want packets. */
void cg_gpu_rx_wait(struct cg_gpu_rx *g, double seconds, uint64_t want);
/* Everything not yet handed to the plan is released here; then the plan runs (report may be
 * NULL); the stream is destroyed only when the run succeeded. */
doca_error_t cg_gpu_rx_detach(struct cg_gpu_rx *g, void *report);

/*
 * The GPU TX smoke on a loop pair: a GPU send queue on tx_dev sends one frame of len bytes from
 * device memory (kernel), a CPU receive queue on rx_dev receives it. *received and *intact
 * (byte for byte) and the kernel's completion status; *layer / why on failure.
 */
doca_error_t cg_gpu_tx_one(const char *bus, struct doca_dev *tx_dev, struct doca_dev *rx_dev,
			   uint32_t len, uint64_t *received, int *intact, int32_t *cq_status,
			   const char **layer, char *why, size_t why_len);

#ifdef __cplusplus
}
#endif

#endif /* CLI_GPUNETIO_H_ */
