/*
 * softdpu: DOCA buffer arrays: num_elem fixed-size buffers over an mmap, for a GPU (or DPA)
 * data path that addresses them by index.
 *
 * This is the host side. start checks the configuration (parameters set, a target GPU, a
 * started mmap large enough) and holds the mmap. The GPU-side handle is built by
 * libdoca_gpunetio when it is in the process (it then also requires the array's memory to be
 * memory of the target GPU: INVALID_VALUE otherwise); without it start succeeds but
 * doca_buf_arr_get_gpu_handle() answers DOCA_ERROR_NOT_SUPPORTED, with the reason logged.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_BUF_ARRAY_H_
#define DOCA_BUF_ARRAY_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_gpu;
struct doca_dpa;
struct doca_mmap;
struct doca_buf_arr;
struct doca_gpu_buf_arr;

/* num_elem > 0. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_create(size_t num_elem, struct doca_buf_arr **buf_arr);

/* Before start (DOCA_ERROR_BAD_STATE after). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_target_gpu(struct doca_buf_arr *buf_arr,
					 struct doca_gpu *gpu_handler);

/* Element i covers [mmap start + start_offset + i * elem_size, + elem_size). Before start. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_params(struct doca_buf_arr *buf_arr, struct doca_mmap *mmap,
				     size_t elem_size, uint64_t start_offset);

/*
 * DOCA_ERROR_BAD_STATE when already started, without parameters or target GPU, or with the
 * mmap not started; DOCA_ERROR_NO_MEMORY when the mmap's range is too small.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_start(struct doca_buf_arr *buf_arr);

/* DOCA_ERROR_BAD_STATE when not started. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_stop(struct doca_buf_arr *buf_arr);

/* Stops the array if needed. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_destroy(struct doca_buf_arr *buf_arr);

/*
 * The array's handle in GPU memory. DOCA_ERROR_BAD_STATE when not started;
 * DOCA_ERROR_NOT_SUPPORTED (logged) while libdoca_gpunetio has not provided GPU support.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_get_gpu_handle(const struct doca_buf_arr *buf_arr,
					 struct doca_gpu_buf_arr **gpu_buf_arr);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_ARRAY_H_ */
