/*
 * softdpu: helpers shared by the GPUNetIO device Ethernet headers
 * (doca_gpunetio_dev_eth_common.cuh; kernels include doca_gpunetio_dev_eth_rxq.cuh or
 * doca_gpunetio_dev_eth_txq.cuh, which include this one).
 *
 * Public: doca_gpu_dev_eth_get_lane_id(), doca_gpu_dev_eth_query_globaltimer() and
 * DOCA_GPUNETIO_ETH_VOLATILE(). The sdp_gpu_dev_eth_* helpers are softdpu's own: the bounded
 * waits every device call is built from. A wait polls one word per round trip (the rings and
 * handles are pinned host memory read over PCIe) with a short sleep between polls that grows
 * while nothing happens, and gives up at a deadline taken from %globaltimer.
 * CUDA only (nvcc -std=c++17).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_GPUNETIO_DEV_ETH_COMMON_CUH_
#define DOCA_GPUNETIO_DEV_ETH_COMMON_CUH_

#include <cuda.h>
#include <cuda/atomic>

#include "doca_gpunetio_eth_def.h"

#include "softdpu/sdp_gpu_eth.h"

/* A volatile access to x (lvalue or rvalue). */
#define DOCA_GPUNETIO_ETH_VOLATILE(x) (*(volatile __typeof__(x) *)&(x))

/* The caller's lane in its warp (0 to 31). */
__device__ static inline unsigned int doca_gpu_dev_eth_get_lane_id(void)
{
	unsigned int lane;

	asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
	return lane;
}

/* The GPU's global nanosecond timer (%globaltimer). */
__device__ static inline uint64_t doca_gpu_dev_eth_query_globaltimer(void)
{
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/* ---- softdpu internals ---------------------------------------------------------------------- */

/* A ticket or index that names nothing (a send that did not happen). */
#define SDP_GPU_DEV_ETH_NO_INDEX (~0ULL)
/* Relax iterations sdp_ring_rx_poll() may spend on an entry the producer is deciding about. */
#define SDP_GPU_DEV_ETH_BUSY_SPINS 4096u
/* Sleep between polls: starts short (latency), doubles while idle up to the cap (PCIe load). */
#define SDP_GPU_DEV_ETH_SLEEP_MIN_NS 64u
#define SDP_GPU_DEV_ETH_SLEEP_MAX_NS 2048u
/*
 * Longest a blocking completion wait may last while the engine holds back a descriptor with a
 * send time (wait-on-time); without one the wait ends SDP_GPU_ETH_MAX_WAIT_NS after the last
 * progress.
 */
#define SDP_GPU_DEV_ETH_TIMED_WAIT_NS 10000000000ULL /* 10 s */

/* A bounded wait: deadline and current sleep. */
struct sdp_gpu_dev_eth_wait {
	uint64_t deadline;
	uint32_t sleep_ns;
};

__device__ static inline void sdp_gpu_dev_eth_wait_init(struct sdp_gpu_dev_eth_wait *w,
							uint64_t limit_ns)
{
	w->deadline = doca_gpu_dev_eth_query_globaltimer() + limit_ns;
	w->sleep_ns = SDP_GPU_DEV_ETH_SLEEP_MIN_NS;
}

/* Sleep a little; false once the deadline has passed (then do not poll again). */
__device__ static inline bool sdp_gpu_dev_eth_wait_more(struct sdp_gpu_dev_eth_wait *w)
{
	if (doca_gpu_dev_eth_query_globaltimer() >= w->deadline)
		return false;
	__nanosleep(w->sleep_ns);
	if (w->sleep_ns < SDP_GPU_DEV_ETH_SLEEP_MAX_NS)
		w->sleep_ns *= 2;
	return true;
}

/* Something happened: poll fast again. */
__device__ static inline void sdp_gpu_dev_eth_wait_progress(struct sdp_gpu_dev_eth_wait *w)
{
	w->sleep_ns = SDP_GPU_DEV_ETH_SLEEP_MIN_NS;
}

/* Linear thread index in the block and the block's size. */
__device__ static inline uint32_t sdp_gpu_dev_eth_block_tid(void)
{
	return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

__device__ static inline uint32_t sdp_gpu_dev_eth_block_size(void)
{
	return blockDim.x * blockDim.y * blockDim.z;
}

/* Lanes of the warp that take part in a warp-scope call, and the leader among them. */
__device__ static inline uint32_t sdp_gpu_dev_eth_warp_leader(uint32_t mask)
{
	return (uint32_t)__ffs((int)mask) - 1u;
}

/* The caller's rank among the participating lanes (0 for the leader). */
__device__ static inline uint32_t sdp_gpu_dev_eth_warp_rank(uint32_t mask)
{
	uint32_t lt;

	asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
	return (uint32_t)__popc(mask & lt);
}

#endif /* DOCA_GPUNETIO_DEV_ETH_COMMON_CUH_ */
