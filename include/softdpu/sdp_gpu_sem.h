/*
 * softdpu: the GPU semaphore as the device header (doca_gpunetio_dev_sem.cuh) and
 * libdoca_gpunetio both see it. Installed because the device API is header-only; applications
 * treat struct doca_gpu_semaphore_gpu as opaque, as on DOCA.
 *
 * The GPU handle lives in pinned host memory mapped into the GPU (the device address is what
 * doca_gpu_semaphore_get_gpu_handle returns) and never changes after start. items and info are
 * device addresses: of device memory (DOCA_GPU_MEM_TYPE_GPU) or of pinned host memory mapped
 * into the GPU (CPU_GPU, GPU_CPU), which the CPU reaches through the semaphore's CPU handle.
 *
 * Ordering (the producer / consumer contract): a producer writes the item's custom info and
 * packet info, then sets its status with release semantics (a system-scope fence before the
 * store, on the GPU; a release store on the CPU); a consumer reads the status with acquire
 * semantics (a system-scope fence after the load, on the GPU; an acquire load on the CPU) and
 * only then reads the info. Either side may be a kernel or the CPU.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SOFTDPU_SDP_GPU_SEM_H_
#define SOFTDPU_SDP_GPU_SEM_H_

#include <stdint.h>

#define SDP_GPU_SEM_MAGIC 0x73644753u /* "sdGS" */
#define SDP_GPU_SEM_MAX_ITEMS (1u << 20)
#define SDP_GPU_SEM_MAX_INFO 65536u

/* One item (16 bytes). status holds an enum doca_gpu_semaphore_status. */
struct sdp_gpu_sem_item {
	uint32_t status;
	uint32_t num_packets;
	uint64_t doca_buf_idx_start;
};

struct doca_gpu_semaphore_gpu {
	uint32_t magic;
	uint32_t nitems;
	uint32_t info_bytes; /* custom info per item; 0: none */
	uint32_t reserved;
	struct sdp_gpu_sem_item *items; /* device address */
	uint8_t *info;			/* device address of item 0's custom info, or NULL */
};

#endif /* SOFTDPU_SDP_GPU_SEM_H_ */
