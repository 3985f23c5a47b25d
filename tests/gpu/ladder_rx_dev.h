/*
 * GPU ladder tests: what the receive kernels (test_ladder_rx_one.cu, test_ladder_rx_burst.cu)
 * share on the device. Header-only, CUDA C++; apart from ladder_common.h, which declares no
 * device API.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef LADDER_RX_DEV_H_
#define LADDER_RX_DEV_H_

#include <doca_gpunetio_dev_eth_rxq.cuh>

/*
 * One receive call of the whole block (block scope, multicast off, the NIC handler chosen
 * automatically, every attribute): up to max packets, waiting at most 1 ms.
 */
__device__ static inline doca_error_t ladder_rx_block(struct doca_gpu_eth_rxq *rxq, uint32_t max,
						      uint64_t *first, uint32_t *n,
						      struct doca_gpu_dev_eth_rxq_attr *attr)
{
	return doca_gpu_dev_eth_rxq_recv<
		DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK, DOCA_GPUNETIO_ETH_MCST_DISABLED,
		DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO, DOCA_GPUNETIO_ETH_RX_ATTR_ALL>(
		rxq, max, 1000000, first, n, attr);
}

#endif /* LADDER_RX_DEV_H_ */
