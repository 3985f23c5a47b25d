/*
 * softdpu: the GPU handle of a DOCA buffer array (doca_buf_arr_get_gpu_handle) as the device
 * header (doca_gpunetio_dev_buf.cuh) and libdoca_gpunetio both see it. Installed because the
 * device API is header-only; applications treat both structs as opaque, as on DOCA.
 *
 * The handle lives in pinned host memory mapped into the GPU and never changes while the array
 * is started; bufs is a device-memory array with one struct doca_gpu_buf per element, written
 * once at start: element i's device address (the array's base + i * elem_size) and the mkey of
 * the array's mmap.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SOFTDPU_SDP_GPU_BUF_H_
#define SOFTDPU_SDP_GPU_BUF_H_

#include <stdint.h>

#define SDP_GPU_BUF_ARR_MAGIC 0x73644742u /* "sdGB" */

struct doca_gpu_buf {
	uint64_t addr;
	uint32_t mkey;
	uint32_t reserved;
};

struct doca_gpu_buf_arr {
	uint32_t magic;
	uint32_t mkey;
	uint64_t num_elem;
	uint64_t elem_size;
	uint64_t base;		   /* device address of element 0 */
	struct doca_gpu_buf *bufs; /* device address */
};

#endif /* SOFTDPU_SDP_GPU_BUF_H_ */
