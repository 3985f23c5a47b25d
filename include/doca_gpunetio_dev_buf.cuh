/*
 * softdpu: GPUNetIO device-side buffer array access (doca_gpunetio_dev_buf.cuh).
 *
 * A kernel takes element idx of a started doca_buf_arr (its GPU handle from
 * doca_buf_arr_get_gpu_handle) and reads the element's device address and mkey. In DOCA these
 * are functions of a static device library; softdpu defines them here, inline (no device link
 * step). As in DOCA they return nothing: an index past the array, or a NULL or stopped handle,
 * gives a NULL buf, and a NULL buf gives address 0 and mkey 0. The layout is in
 * softdpu/sdp_gpu_buf.h. CUDA only (nvcc -std=c++17).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_GPUNETIO_DEV_BUF_CUH_
#define DOCA_GPUNETIO_DEV_BUF_CUH_

#include <stdint.h>

#include "doca_error.h"
#include "doca_gpunetio.h"
#include "softdpu/sdp_gpu_buf.h"

/* Element doca_gpu_buf_idx of the array (NULL past its end or for a stopped handle). */
__device__ static inline void doca_gpu_dev_buf_get_buf(const struct doca_gpu_buf_arr *buf_arr_gpu,
						       const uint64_t doca_gpu_buf_idx,
						       struct doca_gpu_buf **buf)
{
	if (buf == NULL)
		return;
	if (buf_arr_gpu == NULL || buf_arr_gpu->magic != SDP_GPU_BUF_ARR_MAGIC ||
	    doca_gpu_buf_idx >= buf_arr_gpu->num_elem) {
		*buf = NULL;
		return;
	}
	*buf = buf_arr_gpu->bufs + doca_gpu_buf_idx;
}

/* The element's device address (0 for NULL). */
__device__ static inline void doca_gpu_dev_buf_get_addr(const struct doca_gpu_buf *buf,
							uintptr_t *addr)
{
	if (addr != NULL)
		*addr = buf != NULL ? (uintptr_t)buf->addr : 0;
}

/* The element's mkey (0 for NULL), what doca_gpu_dev_eth_txq_send takes. */
__device__ static inline void doca_gpu_dev_buf_get_mkey(const struct doca_gpu_buf *buf,
							uint32_t *mkey)
{
	if (mkey != NULL)
		*mkey = buf != NULL ? buf->mkey : 0;
}

#endif /* DOCA_GPUNETIO_DEV_BUF_CUH_ */
