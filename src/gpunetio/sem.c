/*
 * softdpu: GPUNetIO semaphores (doca_gpu_semaphore_*), the host side. The device side is
 * header-only (doca_gpunetio_dev_sem.cuh); both see the GPU handle through
 * softdpu/sdp_gpu_sem.h, which also states the producer / consumer ordering contract.
 *
 * start allocates, from the semaphore's doca_gpu: the items (the configured memory type), the
 * custom info (its own type), both zeroed (every item FREE), and the GPU handle in mapped host
 * memory (CPU_GPU), written once. stop gives all three back with sdp_gpu_mem_free_deferred(): a
 * persistent kernel may still hold the handle, and freeing its memory under it could fault it;
 * the memory returns to CUDA when the doca_gpu is destroyed.
 *
 * Configuration and start/stop are not thread-safe against each other (as DOCA: one thread
 * sets a semaphore up); get/set_status and get_custom_info_addr may run on any thread while
 * kernels run, and touch nothing but the item.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doca_gpunetio.h"
#include "softdpu/sdp_gpu_sem.h"

#include "sdp_cuda.h"
#include "sdp_gpu.h"
#include "sdp_log.h"

SDP_LOG_COMPONENT("gpunetio");

struct doca_gpu_semaphore {
	struct doca_gpu *gpu;
	enum doca_gpu_mem_type mtype;
	enum doca_gpu_mem_type info_mtype;
	uint32_t nitems;
	uint32_t info_bytes;
	int started;
	/* after start */
	struct sdp_gpu_sem_item *items_gpu, *items_cpu; /* items_cpu NULL for GPU memory */
	uint8_t *info_gpu, *info_cpu;			/* info_cpu NULL for GPU memory */
	struct doca_gpu_semaphore_gpu *handle_gpu, *handle_cpu;
};

static int mtype_ok(enum doca_gpu_mem_type mtype)
{
	return mtype == DOCA_GPU_MEM_TYPE_GPU || mtype == DOCA_GPU_MEM_TYPE_CPU_GPU ||
	       mtype == DOCA_GPU_MEM_TYPE_GPU_CPU;
}

/* Configuration is allowed only before start. */
static doca_error_t sem_conf(const struct doca_gpu_semaphore *sem, const char *what)
{
	if (sem == NULL) {
		sdp_error("%s: invalid argument: semaphore is NULL", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (sem->started) {
		sdp_error("%s: the semaphore is started", what);
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_gpu_semaphore_create(struct doca_gpu *gpu_dev,
				       struct doca_gpu_semaphore **semaphore)
{
	struct doca_gpu_semaphore *sem;

	if (gpu_dev == NULL || semaphore == NULL) {
		sdp_error("invalid argument: gpu_dev %p, semaphore %p", (void *)gpu_dev,
			  (void *)semaphore);
		return DOCA_ERROR_INVALID_VALUE;
	}
	sem = calloc(1, sizeof(*sem));
	if (sem == NULL) {
		sdp_error("failed to allocate a semaphore");
		return DOCA_ERROR_NO_MEMORY;
	}
	sem->gpu = gpu_dev;
	sem->mtype = DOCA_GPU_MEM_TYPE_CPU_GPU;
	sem->info_mtype = DOCA_GPU_MEM_TYPE_CPU_GPU;
	*semaphore = sem;
	return DOCA_SUCCESS;
}

doca_error_t doca_gpu_semaphore_set_memory_type(struct doca_gpu_semaphore *semaphore,
						enum doca_gpu_mem_type mtype)
{
	doca_error_t st = sem_conf(semaphore, "doca_gpu_semaphore_set_memory_type");

	if (st != DOCA_SUCCESS)
		return st;
	if (!mtype_ok(mtype)) {
		sdp_error("invalid memory type %d for semaphore items", (int)mtype);
		return DOCA_ERROR_INVALID_VALUE;
	}
	semaphore->mtype = mtype;
	return DOCA_SUCCESS;
}

doca_error_t doca_gpu_semaphore_set_items_num(struct doca_gpu_semaphore *semaphore,
					      uint32_t num_items)
{
	doca_error_t st = sem_conf(semaphore, "doca_gpu_semaphore_set_items_num");

	if (st != DOCA_SUCCESS)
		return st;
	if (num_items == 0 || num_items > SDP_GPU_SEM_MAX_ITEMS) {
		sdp_error("invalid item count %u (1 .. %u)", num_items, SDP_GPU_SEM_MAX_ITEMS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	semaphore->nitems = num_items;
	return DOCA_SUCCESS;
}

doca_error_t doca_gpu_semaphore_set_custom_info(struct doca_gpu_semaphore *semaphore,
						uint32_t nbytes, enum doca_gpu_mem_type mtype)
{
	doca_error_t st = sem_conf(semaphore, "doca_gpu_semaphore_set_custom_info");

	if (st != DOCA_SUCCESS)
		return st;
	if (nbytes > SDP_GPU_SEM_MAX_INFO || !mtype_ok(mtype)) {
		sdp_error("invalid custom info: %u bytes (0 .. %u), memory type %d", nbytes,
			  SDP_GPU_SEM_MAX_INFO, (int)mtype);
		return DOCA_ERROR_INVALID_VALUE;
	}
	semaphore->info_bytes = nbytes;
	semaphore->info_mtype = mtype;
	return DOCA_SUCCESS;
}

/* Zero n bytes of an allocation: through the CPU mapping, else with the driver's memset. */
static doca_error_t sem_zero(struct doca_gpu *gpu, void *gpu_ptr, void *cpu_ptr, size_t n)
{
	const struct sdp_cuda_api *cu;
	sdp_cu_result_t res;
	doca_error_t st;

	if (cpu_ptr != NULL) {
		memset(cpu_ptr, 0, n);
		return DOCA_SUCCESS;
	}
	cu = sdp_gpu_get_cuda_api(gpu);
	st = sdp_gpu_ctx_push(gpu);
	if (st != DOCA_SUCCESS)
		return st;
	res = cu->memset_d8((sdp_cu_deviceptr_t)(uintptr_t)gpu_ptr, 0, n);
	sdp_gpu_ctx_pop(gpu);
	if (res != SDP_CUDA_SUCCESS) {
		sdp_error("clearing %zu bytes of semaphore memory failed: CUDA error %d", n,
			  (int)res);
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}

/* Give back what start allocated (deferred: a kernel may still read it). */
static void sem_release(struct doca_gpu_semaphore *sem)
{
	if (sem->handle_gpu != NULL)
		(void)sdp_gpu_mem_free_deferred(sem->gpu, sem->handle_gpu);
	if (sem->info_gpu != NULL)
		(void)sdp_gpu_mem_free_deferred(sem->gpu, sem->info_gpu);
	if (sem->items_gpu != NULL)
		(void)sdp_gpu_mem_free_deferred(sem->gpu, sem->items_gpu);
	sem->handle_gpu = sem->handle_cpu = NULL;
	sem->info_gpu = sem->info_cpu = NULL;
	sem->items_gpu = sem->items_cpu = NULL;
}

/* doca_gpu_mem_alloc for a semaphore part; *cpu stays NULL for GPU memory. */
static doca_error_t sem_alloc(struct doca_gpu *gpu, size_t n, enum doca_gpu_mem_type mtype,
			      void **gpu_ptr, void **cpu_ptr)
{
	*cpu_ptr = NULL;
	return doca_gpu_mem_alloc(gpu, n, 0, mtype, gpu_ptr,
				  mtype == DOCA_GPU_MEM_TYPE_GPU ? NULL : cpu_ptr);
}

doca_error_t doca_gpu_semaphore_start(struct doca_gpu_semaphore *semaphore)
{
	struct doca_gpu_semaphore *sem = semaphore;
	doca_error_t st = sem_conf(sem, "doca_gpu_semaphore_start");
	void *g = NULL, *c = NULL;

	if (st != DOCA_SUCCESS)
		return st;
	if (sem->nitems == 0) {
		sdp_error("doca_gpu_semaphore_start: no item count set");
		return DOCA_ERROR_BAD_STATE;
	}
	st = sem_alloc(sem->gpu, (size_t)sem->nitems * sizeof(struct sdp_gpu_sem_item), sem->mtype,
		       &g, &c);
	if (st != DOCA_SUCCESS)
		goto fail;
	sem->items_gpu = g;
	sem->items_cpu = c;
	st = sem_zero(sem->gpu, g, c, (size_t)sem->nitems * sizeof(struct sdp_gpu_sem_item));
	if (st != DOCA_SUCCESS)
		goto fail;
	if (sem->info_bytes != 0) {
		size_t n = (size_t)sem->nitems * sem->info_bytes;

		st = sem_alloc(sem->gpu, n, sem->info_mtype, &g, &c);
		if (st != DOCA_SUCCESS)
			goto fail;
		sem->info_gpu = g;
		sem->info_cpu = c;
		st = sem_zero(sem->gpu, g, c, n);
		if (st != DOCA_SUCCESS)
			goto fail;
	}
	st = sem_alloc(sem->gpu, sizeof(struct doca_gpu_semaphore_gpu), DOCA_GPU_MEM_TYPE_CPU_GPU,
		       &g, &c);
	if (st != DOCA_SUCCESS)
		goto fail;
	sem->handle_gpu = g;
	sem->handle_cpu = c;
	sem->handle_cpu->nitems = sem->nitems;
	sem->handle_cpu->info_bytes = sem->info_bytes;
	sem->handle_cpu->items = sem->items_gpu;
	sem->handle_cpu->info = sem->info_gpu;
	__atomic_store_n(&sem->handle_cpu->magic, SDP_GPU_SEM_MAGIC, __ATOMIC_RELEASE);
	sem->started = 1;
	return DOCA_SUCCESS;
fail:
	sem_release(sem);
	return st;
}

doca_error_t doca_gpu_semaphore_stop(struct doca_gpu_semaphore *semaphore)
{
	if (semaphore == NULL) {
		sdp_error("doca_gpu_semaphore_stop: invalid argument: semaphore is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!semaphore->started) {
		sdp_error("doca_gpu_semaphore_stop: the semaphore is not started");
		return DOCA_ERROR_BAD_STATE;
	}
	/* a kernel that still looks sees no semaphore, not freed memory */
	__atomic_store_n(&semaphore->handle_cpu->magic, 0, __ATOMIC_RELEASE);
	sem_release(semaphore);
	semaphore->started = 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_gpu_semaphore_destroy(struct doca_gpu_semaphore *semaphore)
{
	if (semaphore == NULL) {
		sdp_error("doca_gpu_semaphore_destroy: invalid argument: semaphore is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (semaphore->started)
		(void)doca_gpu_semaphore_stop(semaphore);
	free(semaphore);
	return DOCA_SUCCESS;
}

doca_error_t doca_gpu_semaphore_get_gpu_handle(struct doca_gpu_semaphore *semaphore_cpu,
					       struct doca_gpu_semaphore_gpu **semaphore_gpu)
{
	if (semaphore_cpu == NULL || semaphore_gpu == NULL) {
		sdp_error("invalid argument: semaphore %p, semaphore_gpu %p", (void *)semaphore_cpu,
			  (void *)semaphore_gpu);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!semaphore_cpu->started) {
		sdp_error("doca_gpu_semaphore_get_gpu_handle: the semaphore is not started");
		return DOCA_ERROR_BAD_STATE;
	}
	*semaphore_gpu = semaphore_cpu->handle_gpu;
	return DOCA_SUCCESS;
}

/* Item idx for the CPU, or NULL with *st set (logged). */
static struct sdp_gpu_sem_item *sem_item(struct doca_gpu_semaphore *sem, uint32_t idx,
					 const char *what, doca_error_t *st)
{
	if (sem == NULL) {
		sdp_error("%s: invalid argument: semaphore is NULL", what);
		*st = DOCA_ERROR_INVALID_VALUE;
		return NULL;
	}
	if (!sem->started) {
		sdp_error("%s: the semaphore is not started", what);
		*st = DOCA_ERROR_BAD_STATE;
		return NULL;
	}
	if (sem->items_cpu == NULL) {
		sdp_error("%s: the items are in GPU memory: the CPU cannot reach them", what);
		*st = DOCA_ERROR_NOT_SUPPORTED;
		return NULL;
	}
	if (idx >= sem->nitems) {
		sdp_error("%s: item %u past the %u items", what, idx, sem->nitems);
		*st = DOCA_ERROR_INVALID_VALUE;
		return NULL;
	}
	*st = DOCA_SUCCESS;
	return &sem->items_cpu[idx];
}

doca_error_t doca_gpu_semaphore_get_status(struct doca_gpu_semaphore *semaphore_cpu, uint32_t idx,
					   enum doca_gpu_semaphore_status *status)
{
	struct sdp_gpu_sem_item *it;
	doca_error_t st;

	if (status == NULL) {
		sdp_error("doca_gpu_semaphore_get_status: invalid argument: status is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	it = sem_item(semaphore_cpu, idx, "doca_gpu_semaphore_get_status", &st);
	if (it == NULL)
		return st;
	*status = (enum doca_gpu_semaphore_status)__atomic_load_n(&it->status, __ATOMIC_ACQUIRE);
	return DOCA_SUCCESS;
}

doca_error_t doca_gpu_semaphore_set_status(struct doca_gpu_semaphore *semaphore_cpu, uint32_t idx,
					   enum doca_gpu_semaphore_status status)
{
	struct sdp_gpu_sem_item *it;
	doca_error_t st;

	if ((uint32_t)status > (uint32_t)DOCA_GPU_SEMAPHORE_STATUS_EXIT) {
		sdp_error("doca_gpu_semaphore_set_status: unknown status %d", (int)status);
		return DOCA_ERROR_INVALID_VALUE;
	}
	it = sem_item(semaphore_cpu, idx, "doca_gpu_semaphore_set_status", &st);
	if (it == NULL)
		return st;
	__atomic_store_n(&it->status, (uint32_t)status, __ATOMIC_RELEASE);
	return DOCA_SUCCESS;
}

doca_error_t doca_gpu_semaphore_get_custom_info_addr(struct doca_gpu_semaphore *semaphore_cpu,
						     uint32_t idx, void **custom_info)
{
	struct doca_gpu_semaphore *sem = semaphore_cpu;

	if (sem == NULL || custom_info == NULL) {
		sdp_error("doca_gpu_semaphore_get_custom_info_addr: invalid argument: semaphore "
			  "%p, custom_info %p",
			  (void *)sem, (void *)custom_info);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!sem->started || sem->info_bytes == 0) {
		sdp_error("doca_gpu_semaphore_get_custom_info_addr: %s",
			  !sem->started ? "the semaphore is not started" : "it has no custom info");
		return DOCA_ERROR_BAD_STATE;
	}
	if (sem->info_cpu == NULL) {
		sdp_error("doca_gpu_semaphore_get_custom_info_addr: the custom info is in GPU "
			  "memory: the CPU cannot reach it");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (idx >= sem->nitems) {
		sdp_error("doca_gpu_semaphore_get_custom_info_addr: item %u past the %u items", idx,
			  sem->nitems);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*custom_info = sem->info_cpu + (size_t)idx * sem->info_bytes;
	return DOCA_SUCCESS;
}
