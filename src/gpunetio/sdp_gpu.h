/*
 * softdpu internal: what other softdpu parts (the Ethernet engine's GPU data path) need from a
 * doca_gpu: its CUDA context and device, and what an address of its memory is.
 *
 * Exported by libdoca_gpunetio in its private stanza (SOFTDPU_GPUNETIO_PRIVATE_0), not for
 * applications. The handle's fields read here never change after doca_gpu_create.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_GPU_H_
#define SDP_GPU_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_error.h"
#include "doca_types.h"
#include "sdp_cuda.h"

struct doca_gpu;

/* The CUDA context the handle works in (the application's, or the retained primary one). */
sdp_cu_ctx_t sdp_gpu_get_cu_ctx(const struct doca_gpu *gpu);

/* The CUDA device (ordinal in this process's numbering). */
sdp_cu_device_t sdp_gpu_get_cu_device(const struct doca_gpu *gpu);

/* The driver table the handle was created with (never NULL for a valid handle). */
const struct sdp_cuda_api *sdp_gpu_get_cuda_api(const struct doca_gpu *gpu);

/*
 * Make the handle's context current on the calling thread (cuCtxPushCurrent) / undo it. Every
 * push that returned SUCCESS is paired with one pop. push: DRIVER (logged) on failure.
 */
doca_error_t sdp_gpu_ctx_push(const struct doca_gpu *gpu);
void sdp_gpu_ctx_pop(const struct doca_gpu *gpu);

/*
 * Make the handle's context current on the calling thread and leave it so (cuCtxSetCurrent),
 * for a thread of softdpu's own that works with one GPU at a time (an engine thread): a thread-
 * local cache skips the driver call while the same handle stays bound (a handle created later
 * at the same address is told apart by its serial). Not for application threads: it replaces
 * their current context. DRIVER (logged) on failure.
 */
doca_error_t sdp_gpu_ctx_bind(const struct doca_gpu *gpu);

/* Where a range of a doca_gpu allocation lives. */
struct sdp_gpu_mem_range {
	enum doca_gpu_mem_type mtype; /* the type the application asked for */
	int on_device;	   /* 1: device memory; 0: pinned host memory mapped to the GPU */
	void *gpu_ptr;	   /* the range's GPU address */
	void *cpu_ptr;	   /* its CPU address (mapped host memory), else NULL */
	void *alloc_gpu;   /* the whole allocation: GPU address ... */
	void *alloc_cpu;   /* ... its CPU address (mapped host memory), else NULL ... */
	size_t alloc_size; /* ... and size */
	uint64_t gen;	   /* sdp_gpu_mem_gen when the lookup was made */
};

/*
 * Find the allocation of gpu that holds [gpu_ptr, gpu_ptr + size) and describe the range.
 * NOT_FOUND (not logged) when no single allocation holds all of it; INVALID_VALUE for NULL
 * arguments or size 0.
 */
doca_error_t sdp_gpu_mem_lookup(struct doca_gpu *gpu, const void *gpu_ptr, size_t size,
				struct sdp_gpu_mem_range *range_p);

/*
 * A number that changes whenever an allocation of gpu is freed: a range found by
 * sdp_gpu_mem_lookup stays valid (for any address inside alloc_gpu .. + alloc_size) while
 * sdp_gpu_mem_gen still returns its gen. One atomic load, no lock: for caching on hot paths.
 */
uint64_t sdp_gpu_mem_gen(const struct doca_gpu *gpu);

/*
 * Free an allocation of gpu without waiting for the GPU: it leaves the live allocations at once
 * (doca_gpu_destroy no longer counts it, lookups no longer find it) and its memory goes back to
 * CUDA at doca_gpu_destroy. For memory a persistent kernel may still read when a queue stops
 * (rings, handles, staging): cuMemFree / cuMemFreeHost would wait for that kernel, and freeing
 * it under the kernel could fault it. INVALID_VALUE (logged) for a pointer that is not a live
 * allocation.
 */
doca_error_t sdp_gpu_mem_free_deferred(struct doca_gpu *gpu, void *memptr_gpu);

#endif /* SDP_GPU_H_ */
