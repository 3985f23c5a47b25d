/*
 * softdpu: GPUNetIO device-side semaphores (doca_gpunetio_dev_sem.cuh).
 *
 * The device functions that read and set GPU semaphore items and their custom info arrive in
 * issue 5 (GPUNetIO), in the device library. Until then this header declares only what softdpu
 * implements (nothing) and gives kernels the headers they receive through it in DOCA.
 * CUDA only (nvcc -std=c++17).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_GPUNETIO_DEV_SEM_CUH_
#define DOCA_GPUNETIO_DEV_SEM_CUH_

#include <stdint.h>

#include "doca_error.h"
#include "doca_gpunetio.h"

#endif /* DOCA_GPUNETIO_DEV_SEM_CUH_ */
