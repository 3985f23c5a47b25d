/*
 * softdpu: the GPU side of DOCA buffer arrays (doca_buf_arr_get_gpu_handle), installed into
 * libdoca_common's buffer arrays (sdp_buf_arr_set_gpu_ops) when libdoca_gpunetio loads.
 *
 * At doca_buf_arr_start the array's memory must be memory of the target doca_gpu
 * (doca_gpu_mem_alloc, any type: its GPU address is what the mmap's range holds) covering every
 * element; then one struct doca_gpu_buf per element (device address, the mmap's mkey) is written
 * into device memory and the handle (softdpu/sdp_gpu_buf.h) into mapped host memory. Stop clears
 * the handle's magic (a kernel that still looks gets NULL bufs) and gives the memory back
 * deferred, as queues do, since a persistent kernel may still read it.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <stdlib.h>

#include "doca_gpunetio.h"
#include "softdpu/sdp_gpu_buf.h"

#include "sdp_buf.h"
#include "sdp_cuda.h"
#include "sdp_gpu.h"
#include "sdp_log.h"

SDP_LOG_COMPONENT("gpunetio");

struct gpu_arr {
	struct doca_gpu *gpu;
	struct doca_gpu_buf *bufs_gpu;
	struct doca_gpu_buf_arr *handle_gpu, *handle_cpu;
};

static void arr_free(struct gpu_arr *a)
{
	if (a->handle_gpu != NULL)
		(void)sdp_gpu_mem_free_deferred(a->gpu, a->handle_gpu);
	if (a->bufs_gpu != NULL)
		(void)sdp_gpu_mem_free_deferred(a->gpu, a->bufs_gpu);
	free(a);
}

static doca_error_t arr_start(struct doca_buf_arr *arr, struct doca_gpu *gpu,
			      const struct sdp_buf_arr_layout *layout, void **priv)
{
	const struct sdp_cuda_api *cu = sdp_gpu_get_cuda_api(gpu);
	struct sdp_gpu_mem_range range;
	struct doca_gpu_buf *host;
	struct gpu_arr *a;
	uint32_t mkey = sdp_mmap_first_mkey(layout->mmap);
	size_t bytes = layout->num_elem * sizeof(struct doca_gpu_buf);
	sdp_cu_result_t res;
	doca_error_t st;
	void *g = NULL, *c = NULL;

	(void)arr;
	/* (start checked that elem_size * num_elem fits the mmap's range) */
	st = sdp_gpu_mem_lookup(gpu, layout->base, layout->elem_size * layout->num_elem, &range);
	if (st != DOCA_SUCCESS) {
		sdp_error("buf_arr: its %zu elements of %zu bytes at %p are not memory of GPU "
			  "target (allocate them with doca_gpu_mem_alloc and give the mmap the GPU "
			  "address)",
			  layout->num_elem, layout->elem_size, layout->base);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (layout->num_elem > SIZE_MAX / sizeof(struct doca_gpu_buf))
		return DOCA_ERROR_NO_MEMORY;
	a = calloc(1, sizeof(*a));
	host = malloc(bytes);
	if (a == NULL || host == NULL) {
		sdp_error("buf_arr: no memory for the GPU side of %zu elements", layout->num_elem);
		free(a);
		free(host);
		return DOCA_ERROR_NO_MEMORY;
	}
	a->gpu = gpu;
	for (size_t i = 0; i < layout->num_elem; i++) {
		host[i].addr = (uint64_t)(uintptr_t)layout->base + (uint64_t)i * layout->elem_size;
		host[i].mkey = mkey;
		host[i].reserved = 0;
	}
	st = doca_gpu_mem_alloc(gpu, bytes, 0, DOCA_GPU_MEM_TYPE_GPU, &g, NULL);
	if (st != DOCA_SUCCESS)
		goto fail;
	a->bufs_gpu = g;
	st = sdp_gpu_ctx_push(gpu);
	if (st != DOCA_SUCCESS)
		goto fail;
	res = cu->memcpy_htod((sdp_cu_deviceptr_t)(uintptr_t)g, host, bytes);
	sdp_gpu_ctx_pop(gpu);
	if (res != SDP_CUDA_SUCCESS) {
		sdp_error(
			"buf_arr: writing %zu element descriptors to the GPU failed: CUDA error %d",
			layout->num_elem, (int)res);
		st = DOCA_ERROR_DRIVER;
		goto fail;
	}
	st = doca_gpu_mem_alloc(gpu, sizeof(struct doca_gpu_buf_arr), 0, DOCA_GPU_MEM_TYPE_CPU_GPU,
				&g, &c);
	if (st != DOCA_SUCCESS)
		goto fail;
	a->handle_gpu = g;
	a->handle_cpu = c;
	a->handle_cpu->mkey = mkey;
	a->handle_cpu->num_elem = layout->num_elem;
	a->handle_cpu->elem_size = layout->elem_size;
	a->handle_cpu->base = (uint64_t)(uintptr_t)layout->base;
	a->handle_cpu->bufs = a->bufs_gpu;
	__atomic_store_n(&a->handle_cpu->magic, SDP_GPU_BUF_ARR_MAGIC, __ATOMIC_RELEASE);
	free(host);
	*priv = a;
	return DOCA_SUCCESS;
fail:
	free(host);
	arr_free(a);
	return st;
}

static void arr_stop(struct doca_buf_arr *arr, void *priv)
{
	struct gpu_arr *a = priv;

	(void)arr;
	if (a == NULL)
		return;
	__atomic_store_n(&a->handle_cpu->magic, 0, __ATOMIC_RELEASE);
	arr_free(a);
}

static doca_error_t arr_get_handle(const struct doca_buf_arr *arr, void *priv,
				   struct doca_gpu_buf_arr **handle)
{
	const struct gpu_arr *a = priv;

	(void)arr;
	*handle = a->handle_gpu;
	return DOCA_SUCCESS;
}

static const struct sdp_buf_arr_gpu_ops gpu_arr_ops = {
	.start = arr_start,
	.stop = arr_stop,
	.get_handle = arr_get_handle,
};

__attribute__((constructor)) static void gpu_arr_install(void)
{
	sdp_buf_arr_set_gpu_ops(&gpu_arr_ops);
}

__attribute__((destructor)) static void gpu_arr_remove(void)
{
	sdp_buf_arr_set_gpu_ops(NULL);
}
