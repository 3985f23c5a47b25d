/*
 * softdpu: GPUNetIO device-side semaphores (doca_gpunetio_dev_sem.cuh).
 *
 * Kernels read and set the items of a semaphore's GPU handle (doca_gpu_semaphore_get_gpu_handle)
 * and reach each item's custom info. In DOCA these are functions of a static device library;
 * softdpu defines them here, inline, so a kernel needs no device link step. The ordering
 * contract is in softdpu/sdp_gpu_sem.h: set_status / set_packet_info publish with a
 * system-scope fence before the status store (what was written before is visible to a CPU or
 * another kernel that then sees the status); get_status / get_packet_info* fence after the
 * load. Every index is checked: past the items is DOCA_ERROR_INVALID_VALUE, nothing touched.
 * CUDA only (nvcc -std=c++17).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_GPUNETIO_DEV_SEM_CUH_
#define DOCA_GPUNETIO_DEV_SEM_CUH_

#include <stdint.h>

#include "doca_error.h"
#include "doca_gpunetio.h"
#include "softdpu/sdp_gpu_sem.h"

__device__ static inline int sdp_gpu_dev_sem_ok(const struct doca_gpu_semaphore_gpu *s,
						uint32_t idx)
{
	return s != NULL && s->magic == SDP_GPU_SEM_MAGIC && idx < s->nitems;
}

/* Item idx's status (acquire). */
__device__ static inline doca_error_t
doca_gpu_dev_semaphore_get_status(const struct doca_gpu_semaphore_gpu *semaphore_gpu, uint32_t idx,
				  enum doca_gpu_semaphore_status *status)
{
	uint32_t v;

	if (!sdp_gpu_dev_sem_ok(semaphore_gpu, idx) || status == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	v = *(volatile const uint32_t *)&semaphore_gpu->items[idx].status;
	__threadfence_system();
	*status = (enum doca_gpu_semaphore_status)v;
	return DOCA_SUCCESS;
}

/* Set item idx's status (release: what this thread wrote before is visible first). */
__device__ static inline doca_error_t
doca_gpu_dev_semaphore_set_status(struct doca_gpu_semaphore_gpu *semaphore_gpu, uint32_t idx,
				  enum doca_gpu_semaphore_status status)
{
	if (!sdp_gpu_dev_sem_ok(semaphore_gpu, idx) ||
	    (uint32_t)status > (uint32_t)DOCA_GPU_SEMAPHORE_STATUS_EXIT)
		return DOCA_ERROR_INVALID_VALUE;
	__threadfence_system();
	*(volatile uint32_t *)&semaphore_gpu->items[idx].status = (uint32_t)status;
	return DOCA_SUCCESS;
}

/*
 * Set item idx's status to status_val only if it is status_compare (one atomic compare and
 * swap): DOCA_ERROR_NOT_PERMITTED when it was not, nothing changed.
 */
__device__ static inline doca_error_t
doca_gpu_dev_semaphore_set_status_cas(struct doca_gpu_semaphore_gpu *semaphore_gpu, uint32_t idx,
				      enum doca_gpu_semaphore_status status_compare,
				      enum doca_gpu_semaphore_status status_val)
{
	uint32_t old;

	if (!sdp_gpu_dev_sem_ok(semaphore_gpu, idx) ||
	    (uint32_t)status_val > (uint32_t)DOCA_GPU_SEMAPHORE_STATUS_EXIT)
		return DOCA_ERROR_INVALID_VALUE;
	__threadfence_system();
	old = atomicCAS_system((unsigned int *)&semaphore_gpu->items[idx].status,
			       (unsigned int)status_compare, (unsigned int)status_val);
	return old == (uint32_t)status_compare ? DOCA_SUCCESS : DOCA_ERROR_NOT_PERMITTED;
}

/* Write item idx's packet info, then publish status (release). */
__device__ static inline doca_error_t
doca_gpu_dev_semaphore_set_packet_info(struct doca_gpu_semaphore_gpu *semaphore_gpu, uint32_t idx,
				       enum doca_gpu_semaphore_status status, uint32_t num_packets,
				       uint64_t doca_buf_idx_start)
{
	if (!sdp_gpu_dev_sem_ok(semaphore_gpu, idx) ||
	    (uint32_t)status > (uint32_t)DOCA_GPU_SEMAPHORE_STATUS_EXIT)
		return DOCA_ERROR_INVALID_VALUE;
	*(volatile uint32_t *)&semaphore_gpu->items[idx].num_packets = num_packets;
	*(volatile uint64_t *)&semaphore_gpu->items[idx].doca_buf_idx_start = doca_buf_idx_start;
	return doca_gpu_dev_semaphore_set_status(semaphore_gpu, idx, status); /* publishes */
}

/* Item idx's status (acquire), then its packet info. */
__device__ static inline doca_error_t
doca_gpu_dev_semaphore_get_packet_info(const struct doca_gpu_semaphore_gpu *semaphore_gpu,
				       uint32_t idx, enum doca_gpu_semaphore_status *status,
				       uint32_t *num_packets, uint64_t *doca_buf_idx_start)
{
	doca_error_t st;

	if (num_packets == NULL || doca_buf_idx_start == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	st = doca_gpu_dev_semaphore_get_status(semaphore_gpu, idx, status);
	if (st != DOCA_SUCCESS)
		return st;
	*num_packets = *(volatile const uint32_t *)&semaphore_gpu->items[idx].num_packets;
	*doca_buf_idx_start =
		*(volatile const uint64_t *)&semaphore_gpu->items[idx].doca_buf_idx_start;
	return DOCA_SUCCESS;
}

/*
 * The packet info of item idx if its status is status_expected (the poll of a consumer):
 * DOCA_ERROR_NOT_FOUND while it is another status, the outputs untouched.
 */
__device__ static inline doca_error_t
doca_gpu_dev_semaphore_get_packet_info_status(const struct doca_gpu_semaphore_gpu *semaphore_gpu,
					      uint32_t idx,
					      enum doca_gpu_semaphore_status status_expected,
					      uint32_t *num_packets, uint64_t *doca_buf_idx_start)
{
	enum doca_gpu_semaphore_status status;
	uint32_t n;
	uint64_t start;
	doca_error_t st;

	st = doca_gpu_dev_semaphore_get_packet_info(semaphore_gpu, idx, &status, &n, &start);
	if (st != DOCA_SUCCESS)
		return st;
	if (status != status_expected)
		return DOCA_ERROR_NOT_FOUND;
	*num_packets = n;
	*doca_buf_idx_start = start;
	return DOCA_SUCCESS;
}

/* The device address of item idx's custom info. INVALID_VALUE without custom info. */
__device__ static inline doca_error_t
doca_gpu_dev_semaphore_get_custom_info_addr(struct doca_gpu_semaphore_gpu *semaphore_gpu,
					    uint32_t idx, void **custom_info)
{
	if (!sdp_gpu_dev_sem_ok(semaphore_gpu, idx) || custom_info == NULL ||
	    semaphore_gpu->info == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*custom_info = semaphore_gpu->info + (uint64_t)idx * semaphore_gpu->info_bytes;
	return DOCA_SUCCESS;
}

#endif /* DOCA_GPUNETIO_DEV_SEM_CUH_ */
