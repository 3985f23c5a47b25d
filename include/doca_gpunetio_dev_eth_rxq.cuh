/*
 * softdpu: GPUNetIO device-side Ethernet receive (doca_gpunetio_dev_eth_rxq.cuh).
 *
 * The header-only receive templates (doca_gpu_dev_eth_rxq_recv and the packet address/mkey
 * helpers), the ticket type and the lane-id helper arrive in issue 5 (GPUNetIO). Until then
 * this header declares only what softdpu implements (nothing) and gives kernels the headers
 * they receive through it in DOCA: the CUDA driver types, libcu++ atomics and the shared
 * GPUNetIO Ethernet definitions. CUDA only (nvcc -std=c++17).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_GPUNETIO_DEV_ETH_RXQ_CUH_
#define DOCA_GPUNETIO_DEV_ETH_RXQ_CUH_

#include <cuda.h>
#include <cuda/atomic>

#include "doca_gpunetio_eth_def.h"

#endif /* DOCA_GPUNETIO_DEV_ETH_RXQ_CUH_ */
