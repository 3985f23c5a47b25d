/*
 * DOCA buffer arrays, host side: configuration, checks and the mmap hold. The GPU-side array is
 * built by libdoca_gpunetio through sdp_buf_arr_set_gpu_ops().
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "doca_buf_array.h"
#include "sdp_buf.h"
#include "sdp_check.h"
#include "sdp_log.h"

SDP_LOG_COMPONENT("buf_arr");

#define ARR_MAGIC 0x5d0cba77u

struct doca_buf_arr {
	uint32_t magic;
	int started;
	size_t num_elem;
	struct doca_mmap *mmap; /* set_params */
	size_t elem_size;
	uint64_t start_offset;
	struct doca_gpu *gpu;
	const struct sdp_buf_arr_gpu_ops *gpu_ops; /* the ops that started it, NULL without */
	void *gpu_priv;
};

static _Atomic(const struct sdp_buf_arr_gpu_ops *) g_gpu_ops;

void sdp_buf_arr_set_gpu_ops(const struct sdp_buf_arr_gpu_ops *ops)
{
	atomic_store(&g_gpu_ops, ops);
}

static int arr_ok(const struct doca_buf_arr *arr)
{
	return arr != NULL && arr->magic == ARR_MAGIC;
}

static doca_error_t check_arr(const struct doca_buf_arr *arr, const char *func)
{
	return sdp_check_handle(arr_ok(arr), arr, "buf_arr", func);
}

/* Setters refuse a started array: BAD_STATE, naming what was to be set. */
static doca_error_t check_idle(const struct doca_buf_arr *arr, const char *what, const char *func)
{
	if (!arr->started)
		return DOCA_SUCCESS;
	sdp_log_as(DOCA_LOG_LEVEL_ERROR, func, "cannot set the %s of a started buf_arr", what);
	return DOCA_ERROR_BAD_STATE;
}

doca_error_t doca_buf_arr_create(size_t num_elem, struct doca_buf_arr **buf_arr)
{
	struct doca_buf_arr *arr;

	if (buf_arr == NULL || num_elem == 0) {
		sdp_error("%s", buf_arr == NULL ? "NULL buf_arr" : "num_elem must be > 0");
		return DOCA_ERROR_INVALID_VALUE;
	}
	arr = calloc(1, sizeof(*arr));
	if (arr == NULL) {
		sdp_error("out of memory for a buf_arr");
		return DOCA_ERROR_NO_MEMORY;
	}
	arr->magic = ARR_MAGIC;
	arr->num_elem = num_elem;
	*buf_arr = arr;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_arr_set_target_gpu(struct doca_buf_arr *buf_arr, struct doca_gpu *gpu_handler)
{
	doca_error_t status;

	if ((status = check_arr(buf_arr, __func__)) != DOCA_SUCCESS)
		return status;
	if (gpu_handler == NULL) {
		sdp_error("NULL gpu_handler");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if ((status = check_idle(buf_arr, "target GPU", __func__)) != DOCA_SUCCESS)
		return status;
	buf_arr->gpu = gpu_handler;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_arr_set_params(struct doca_buf_arr *buf_arr, struct doca_mmap *mmap,
				     size_t elem_size, uint64_t start_offset)
{
	doca_error_t status;

	if ((status = check_arr(buf_arr, __func__)) != DOCA_SUCCESS)
		return status;
	if (mmap == NULL || elem_size == 0) {
		sdp_error("%s", mmap == NULL ? "NULL mmap" : "elem_size must be > 0");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if ((status = check_idle(buf_arr, "parameters", __func__)) != DOCA_SUCCESS)
		return status;
	if (sdp_mmap_ref(mmap) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf_arr->mmap != NULL)
		sdp_mmap_unref(buf_arr->mmap);
	buf_arr->mmap = mmap;
	buf_arr->elem_size = elem_size;
	buf_arr->start_offset = start_offset;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_arr_start(struct doca_buf_arr *buf_arr)
{
	const struct sdp_buf_arr_gpu_ops *ops;
	struct sdp_buf_arr_layout layout;
	doca_error_t status;
	size_t need, len;
	void *addr;

	if ((status = check_arr(buf_arr, __func__)) != DOCA_SUCCESS)
		return status;
	if (buf_arr->started) {
		sdp_error("buf_arr already started");
		return DOCA_ERROR_BAD_STATE;
	}
	if (buf_arr->mmap == NULL || buf_arr->gpu == NULL) {
		sdp_error("cannot start a buf_arr without %s",
			  buf_arr->mmap == NULL ? "parameters (doca_buf_arr_set_params)" :
						  "a target GPU (doca_buf_arr_set_target_gpu)");
		return DOCA_ERROR_BAD_STATE;
	}
	status = sdp_mmap_hold(buf_arr->mmap, "buf_arr");
	if (status != DOCA_SUCCESS)
		return status;
	sdp_mmap_range(buf_arr->mmap, &addr, &len);
	if (__builtin_mul_overflow(buf_arr->elem_size, buf_arr->num_elem, &need) ||
	    buf_arr->start_offset > len || need > len - buf_arr->start_offset) {
		sdp_error("the mmap's %zu bytes cannot hold %zu elements of %zu bytes from offset "
			  "%" PRIu64,
			  len, buf_arr->num_elem, buf_arr->elem_size, buf_arr->start_offset);
		status = DOCA_ERROR_NO_MEMORY;
		goto err_unhold;
	}

	ops = atomic_load(&g_gpu_ops);
	if (ops != NULL) {
		layout = (struct sdp_buf_arr_layout){
			.mmap = buf_arr->mmap,
			.base = (char *)addr + buf_arr->start_offset,
			.elem_size = buf_arr->elem_size,
			.num_elem = buf_arr->num_elem,
		};
		status = ops->start(buf_arr, buf_arr->gpu, &layout, &buf_arr->gpu_priv);
		if (status != DOCA_SUCCESS)
			goto err_unhold; /* the GPU side logged why */
	}
	buf_arr->gpu_ops = ops;
	buf_arr->started = 1;
	return DOCA_SUCCESS;

err_unhold:
	sdp_mmap_unhold(buf_arr->mmap);
	return status;
}

static void arr_stop(struct doca_buf_arr *arr)
{
	if (arr->gpu_ops != NULL)
		arr->gpu_ops->stop(arr, arr->gpu_priv);
	arr->gpu_ops = NULL;
	arr->gpu_priv = NULL;
	arr->started = 0;
	sdp_mmap_unhold(arr->mmap);
}

doca_error_t doca_buf_arr_stop(struct doca_buf_arr *buf_arr)
{
	doca_error_t status;

	if ((status = check_arr(buf_arr, __func__)) != DOCA_SUCCESS)
		return status;
	if (!buf_arr->started) {
		sdp_error("buf_arr is not started");
		return DOCA_ERROR_BAD_STATE;
	}
	arr_stop(buf_arr);
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_arr_destroy(struct doca_buf_arr *buf_arr)
{
	doca_error_t status;

	if ((status = check_arr(buf_arr, __func__)) != DOCA_SUCCESS)
		return status;
	if (buf_arr->started)
		arr_stop(buf_arr);
	if (buf_arr->mmap != NULL)
		sdp_mmap_unref(buf_arr->mmap);
	buf_arr->magic = 0;
	free(buf_arr);
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_arr_get_gpu_handle(const struct doca_buf_arr *buf_arr,
					 struct doca_gpu_buf_arr **gpu_buf_arr)
{
	doca_error_t status;

	if ((status = check_arr(buf_arr, __func__)) != DOCA_SUCCESS)
		return status;
	if (gpu_buf_arr == NULL) {
		sdp_error("NULL gpu_buf_arr");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!buf_arr->started) {
		sdp_error("buf_arr is not started");
		return DOCA_ERROR_BAD_STATE;
	}
	if (buf_arr->gpu_ops == NULL) {
		sdp_error("no GPU-side buf_arr: GPU support (libdoca_gpunetio) was not active when "
			  "the array was started");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return buf_arr->gpu_ops->get_handle(buf_arr, buf_arr->gpu_priv, gpu_buf_arr);
}
