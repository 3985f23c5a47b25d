/*
 * softdpu: GPUNetIO device-side Ethernet send (doca_gpunetio_dev_eth_txq.cuh).
 *
 * The header-only send templates (send, wait_send, submit, completion polling, WQE access),
 * the ticket type and the lane-id helper arrive in issue 5 (GPUNetIO). Until then this header
 * declares only what softdpu implements (nothing) and gives kernels the headers they receive
 * through it in DOCA: the CUDA driver types, libcu++ atomics and the shared GPUNetIO Ethernet
 * definitions. CUDA only (nvcc -std=c++17).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_GPUNETIO_DEV_ETH_TXQ_CUH_
#define DOCA_GPUNETIO_DEV_ETH_TXQ_CUH_

#include <cuda.h>
#include <cuda/atomic>

#include "doca_gpunetio_eth_def.h"

#endif /* DOCA_GPUNETIO_DEV_ETH_TXQ_CUH_ */
