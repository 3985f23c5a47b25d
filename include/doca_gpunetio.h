/*
 * softdpu: DOCA GPUNetIO host API (doca_gpunetio.h).
 *
 * doca_gpu (GPU handle, GPU-visible memory, dma-buf export) and the GPU semaphores arrive in
 * issue 5 (GPUNetIO). Until then this header declares only what softdpu implements (nothing)
 * and gives programs the headers they receive through it in DOCA: the GPUNetIO samples call
 * doca_ctx_* and doca_dev_* having included only this header.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_GPUNETIO_H_
#define DOCA_GPUNETIO_H_

#include <inttypes.h>
#include <stddef.h>

#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_types.h"

#endif /* DOCA_GPUNETIO_H_ */
