/*
 * softdpu: GPU data path of the DOCA Ethernet receive queue (doca_eth_rxq_gpu_data_path.h).
 *
 * The knobs a ConnectX queue needs for GPUDirect (where the receive ring lives, the
 * memory-consistency "dump" QP of pre-Hopper GPUs, CPU-side doorbells). softdpu's queues are fed
 * by a CPU engine (docs/gpunetio.md), so each of these is accepted before start and changes
 * nothing that a kernel could observe: the engine always publishes a completion only after the
 * packet's bytes are visible to the GPU.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_ETH_RXQ_GPU_DATA_PATH_H_
#define DOCA_ETH_RXQ_GPU_DATA_PATH_H_

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_eth_rxq;

/* Enable the memory-consistency QP (IDLE only; accepted, nothing to do on softdpu). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_gpu_enable_mcst_qp(struct doca_eth_rxq *eth_rxq);

/* Ring the receive doorbell from the CPU (IDLE only; accepted: the engine is on the CPU). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_gpu_set_uar_on_cpu(struct doca_eth_rxq *eth_rxq);

/* Where the receive ring lives (IDLE only; any type is accepted; the ring is mapped host memory). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_gpu_set_rq_mem_type(struct doca_eth_rxq *eth_rxq,
					      enum doca_gpu_mem_type mem_type);

/* The CPU proxy's progress call: harmless (the engine always drains); BAD_STATE unless RUNNING. */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_gpu_cpu_proxy_progress(struct doca_eth_rxq *eth_rxq);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ETH_RXQ_GPU_DATA_PATH_H_ */
