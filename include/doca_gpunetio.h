/*
 * softdpu: DOCA GPUNetIO host API (doca_gpunetio.h).
 *
 * A doca_gpu is the handle of one CUDA GPU, created from its PCIe address; it allocates memory
 * the GPU and the CPU (and the software NIC's engine) can reach, and exports device memory as
 * dma-buf. libdoca_gpunetio reaches CUDA through the driver API loaded at run time, so it
 * builds and loads without CUDA and answers DOCA_ERROR_NOT_SUPPORTED (logged with the reason)
 * where there is no driver or GPU. docs/gpunetio.md says what each call answers.
 *
 * A doca_gpu_semaphore is a ring of items (a status and packet info each, plus an optional
 * custom-info blob per item) through which a kernel hands work to another kernel or to the
 * CPU (doca_gpunetio_dev_sem.cuh has the device side). This header also gives programs what
 * they receive through it in DOCA: doca_ctx.h, doca_dev.h and doca_types.h
 * (enum doca_gpu_mem_type).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_GPUNETIO_H_
#define DOCA_GPUNETIO_H_

#include <inttypes.h>
#include <stddef.h>

#include "doca_compat.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque handle of one GPU. */
struct doca_gpu;

/*
 * Read or write x through a volatile lvalue, so the compiler neither caches nor drops the
 * access: a flag one side polls while the other side (CPU or GPU) writes it. Usable as an
 * lvalue and an rvalue, in host and device code.
 */
#define DOCA_GPUNETIO_VOLATILE(x) (*(volatile __typeof__(x) *)&(x))

/*
 * Create the handle of the GPU at PCIe address gpu_bus_id ("ca:00.0" or "0000:ca:00.0", any
 * case). A CUDA context of that GPU should be current (cudaFree(0) after cudaSetDevice makes
 * one); without one the device's primary context is retained. INVALID_VALUE for NULL arguments
 * or a malformed address, NOT_SUPPORTED without a usable CUDA driver or for a GPU below compute
 * capability 8.0, NOT_FOUND when no GPU has that address, NO_MEMORY.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_create(const char *gpu_bus_id, struct doca_gpu **gpu_dev);

/*
 * Destroy a GPU handle. IN_USE (nothing changes) while memory allocated from it is not freed;
 * INVALID_VALUE for NULL.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_destroy(struct doca_gpu *gpu_dev);

/*
 * Allocate size bytes aligned to alignment (0: the host page size; else a power of two) of the
 * memory type mtype:
 * - DOCA_GPU_MEM_TYPE_GPU: device memory; *memptr_gpu set, memptr_cpu may be NULL (set to NULL
 *   when given);
 * - DOCA_GPU_MEM_TYPE_GPU_CPU: device memory the CPU can map (needs GDRCopy, which softdpu does
 *   not use: pinned host memory mapped into the GPU is returned instead, with one warning per
 *   doca_gpu);
 * - DOCA_GPU_MEM_TYPE_CPU_GPU: pinned host memory mapped into the GPU.
 * The two mapped types set both pointers (memptr_cpu must not be NULL) and are zeroed; device
 * memory is not (as with cudaMalloc).
 * INVALID_VALUE for bad arguments, NO_MEMORY, DRIVER for other CUDA failures.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_mem_alloc(struct doca_gpu *gpu_dev, size_t size, size_t alignment,
				enum doca_gpu_mem_type mtype, void **memptr_gpu, void **memptr_cpu);

/*
 * Free memory of doca_gpu_mem_alloc, given by its GPU pointer. INVALID_VALUE for a pointer
 * that is not one of this handle's allocations.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_mem_free(struct doca_gpu *gpu, void *memptr_gpu);

/*
 * Export size bytes of device memory at memptr_gpu (an allocation of type GPU from this handle;
 * address and size aligned to the host page size) as a dma-buf file descriptor, which the
 * caller closes. NOT_SUPPORTED where the driver or GPU cannot (the caller then registers the
 * memory another way) or for mapped host memory; INVALID_VALUE for bad arguments.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_dmabuf_fd(struct doca_gpu *gpu_dev, void *memptr_gpu, size_t size,
				int *dmabuf_fd);

/* ---- semaphores ---- */

/* CPU handle of a semaphore; the GPU handle (passed to kernels). */
struct doca_gpu_semaphore;
struct doca_gpu_semaphore_gpu;

/* The status of one item. */
enum doca_gpu_semaphore_status {
	DOCA_GPU_SEMAPHORE_STATUS_FREE = 0,
	DOCA_GPU_SEMAPHORE_STATUS_READY = 1,
	DOCA_GPU_SEMAPHORE_STATUS_DONE = 2,
	DOCA_GPU_SEMAPHORE_STATUS_HOLD = 3,
	DOCA_GPU_SEMAPHORE_STATUS_ERROR = 4,
	DOCA_GPU_SEMAPHORE_STATUS_EXIT = 5,
};

/*
 * A semaphore of gpu_dev, to be configured (memory type, items, custom info) and started.
 * INVALID_VALUE for NULL arguments, NO_MEMORY.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_create(struct doca_gpu *gpu_dev,
				       struct doca_gpu_semaphore **semaphore);

/* Stop it when started, then free it. INVALID_VALUE for NULL. */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_destroy(struct doca_gpu_semaphore *semaphore);

/*
 * Where the items live (before start): DOCA_GPU_MEM_TYPE_GPU (kernels only: GPU to GPU),
 * _CPU_GPU or _GPU_CPU (the CPU reads and sets them too). Default CPU_GPU. BAD_STATE once
 * started, INVALID_VALUE for another type.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_set_memory_type(struct doca_gpu_semaphore *semaphore,
						enum doca_gpu_mem_type mtype);

/* The number of items (1 .. 1048576; before start). */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_set_items_num(struct doca_gpu_semaphore *semaphore,
					      uint32_t num_items);

/*
 * nbytes (0 .. 65536; 0: none) of custom info per item, in memory of type mtype (before
 * start; the CPU reaches it only in CPU_GPU or GPU_CPU memory).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_set_custom_info(struct doca_gpu_semaphore *semaphore,
						uint32_t nbytes, enum doca_gpu_mem_type mtype);

/*
 * Allocate the items (all FREE, packet info 0) and custom info (zeroed) and the GPU handle.
 * BAD_STATE when started or no item count was set; errors of doca_gpu_mem_alloc().
 */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_start(struct doca_gpu_semaphore *semaphore);

/*
 * Release the memory (a kernel that may still hold the GPU handle must have stopped: the
 * memory goes back to CUDA when the doca_gpu is destroyed, not at once). BAD_STATE when not
 * started.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_stop(struct doca_gpu_semaphore *semaphore);

/* The GPU handle for kernels (valid until stop). BAD_STATE before start. */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_get_gpu_handle(struct doca_gpu_semaphore *semaphore_cpu,
					       struct doca_gpu_semaphore_gpu **semaphore_gpu);

/*
 * Item idx's status, read with acquire ordering: custom info and packet info read after it are
 * at least as new as what the producer wrote before setting it. NOT_SUPPORTED for items in GPU
 * memory, INVALID_VALUE for idx past the items, BAD_STATE before start.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_get_status(struct doca_gpu_semaphore *semaphore_cpu, uint32_t idx,
					   enum doca_gpu_semaphore_status *status);

/* Set item idx's status with release ordering (errors as get_status; an unknown status). */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_set_status(struct doca_gpu_semaphore *semaphore_cpu, uint32_t idx,
					   enum doca_gpu_semaphore_status status);

/*
 * The CPU address of item idx's custom info. NOT_SUPPORTED when it is in GPU memory,
 * BAD_STATE before start or without custom info, INVALID_VALUE for idx past the items.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_get_custom_info_addr(struct doca_gpu_semaphore *semaphore_cpu,
						     uint32_t idx, void **custom_info);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_GPUNETIO_H_ */
