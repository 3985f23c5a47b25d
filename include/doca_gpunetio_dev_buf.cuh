/*
 * softdpu: GPUNetIO device-side buffer array access (doca_gpunetio_dev_buf.cuh).
 *
 * The device functions that read a doca_buf_arr from a kernel (address, mkey, buffer by index)
 * arrive in issue 5 (GPUNetIO), in the device library. Until then this header declares only
 * what softdpu implements (nothing) and gives kernels the headers they receive through it in
 * DOCA. CUDA only (nvcc -std=c++17).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_GPUNETIO_DEV_BUF_CUH_
#define DOCA_GPUNETIO_DEV_BUF_CUH_

#include <stdint.h>

#include "doca_error.h"
#include "doca_gpunetio.h"

#endif /* DOCA_GPUNETIO_DEV_BUF_CUH_ */
