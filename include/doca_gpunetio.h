/*
 * softdpu: DOCA GPUNetIO host API (doca_gpunetio.h).
 *
 * A doca_gpu is the handle of one CUDA GPU, created from its PCIe address; it allocates memory
 * the GPU and the CPU (and the software NIC's engine) can reach, and exports device memory as
 * dma-buf. libdoca_gpunetio reaches CUDA through the driver API loaded at run time, so it
 * builds and loads without CUDA and answers DOCA_ERROR_NOT_SUPPORTED (logged with the reason)
 * where there is no driver or GPU. docs/gpunetio.md says what each call answers.
 *
 * The GPU semaphores (doca_gpu_semaphore_*) come later in issue 5 (GPUNetIO) and are not
 * declared yet. This header also gives programs what they receive through it in DOCA:
 * doca_ctx.h, doca_dev.h and doca_types.h (enum doca_gpu_mem_type).
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

#ifdef __cplusplus
}
#endif

#endif /* DOCA_GPUNETIO_H_ */
