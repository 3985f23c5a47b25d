/*
 * softdpu: GPUNetIO device-side Ethernet receive (doca_gpunetio_dev_eth_rxq.cuh), DOCA 3.x names.
 *
 * doca_gpu_dev_eth_rxq_recv<exec_scope, mcst_mode, nic_handler, rx_attr>(rxq, max_rx_pkts,
 * timeout_ns, &first_pkt_idx, &pkt_num, out_attr) receives ONE contiguous batch of packets from
 * the queue's ring (softdpu/sdp_ring.h; the engine, a CPU thread, produces into it):
 *   - the calling entity (the thread; lane 0 of the participating lanes of a warp; thread 0 of a
 *     block) waits until max_rx_pkts packets are pending or the time is up, then claims
 *     min(pending, max_rx_pkts) with one sdp_ring_rx_poll();
 *   - max_rx_pkts 0 means "no count limit" (up to the ring size: the call returns once the ring
 *     is full or the time is up); a limit above the ring size is the ring size;
 *   - timeout_ns 0 means "no caller limit", but every call is bounded by SDP_GPU_ETH_MAX_WAIT_NS
 *     and then returns what it has (DOCA would never return with both limits 0);
 *   - *out_first_pkt_idx is the slot index of the first packet (DOCA_GPUNETIO_ETH_RX_NO_PKT when
 *     none) and packets first, first + 1, ... (modulo the ring size) are the batch; with
 *     rx_attr TS or ALL, out_attr[k] describes packet first + k (timestamp; bytes with ALL), filled
 *     for EVERY packet of the batch, by the lanes / threads in parallel;
 *   - warp and block scope are collective (every thread of the warp / block calls, converged);
 *     the outputs are written by the entity, then __syncwarp / __syncthreads, so every
 *     participant sees them on return (keep them in shared memory, as DOCA asks);
 *   - slots go back to the engine at the end of the call in CYCLIC mode (DOCA: a packet may be
 *     overwritten one ring lap later), at the start of the next call when the queue is in
 *     back-pressure mode (SDP_GPU_ETH_RXQ_F_BACKPRESSURE: a batch stays intact until the next
 *     call and nothing is ever overwritten);
 *   - returns DOCA_SUCCESS (also for an empty batch), DOCA_ERROR_INVALID_VALUE for a NULL or
 *     stopped handle (magic) or NULL outputs; never DOCA_ERROR_DRIVER.
 * One receiving entity per queue at a time, as in DOCA. mcst_mode and nic_handler are accepted
 * and ignored: the engine publishes a completion only after the packet's bytes landed.
 *
 * Accessors: doca_gpu_dev_eth_rxq_get_pkt_addr(rxq, idx) = pkt_addr + max_pkt_sz * (idx mod
 * pkt_num), get_pkt_mkey, and get_pkt_ts / get_pkt_bytes, which read the completion entry of
 * slot idx (valid while the packet is: prefer out_attr).
 * CUDA only (nvcc -std=c++17).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_GPUNETIO_DEV_ETH_RXQ_CUH_
#define DOCA_GPUNETIO_DEV_ETH_RXQ_CUH_

#include <cuda.h>
#include <cuda/atomic>

#include "doca_gpunetio_dev_eth_common.cuh"
#include "doca_gpunetio_eth_def.h"

/* ---- softdpu internals ---------------------------------------------------------------------- */

/* The ring of a live handle, or NULL (NULL handle, stopped queue). */
__device__ static inline struct sdp_ring_hdr *
sdp_gpu_dev_eth_rxq_ring(const struct doca_gpu_eth_rxq *rxq)
{
	if (rxq == NULL || SDP_ATOMIC_LOAD_RLX(&rxq->magic) != SDP_GPU_ETH_RXQ_MAGIC)
		return NULL;
	return (struct sdp_ring_hdr *)(uintptr_t)rxq->ring;
}

/* What the entity of a receive call found: the batch and whether to release it at the end. */
struct sdp_gpu_dev_eth_rx_batch {
	struct sdp_ring_hdr *ring;
	uint32_t first_pos; /* ring position of the first packet */
	uint32_t n;
	int32_t status;	 /* doca_error_t */
	uint32_t cyclic; /* release at the end of the call */
};

/* The entity's part: validate, release the previous batch (back-pressure), wait, claim. */
__device__ static inline void sdp_gpu_dev_eth_rxq_take(const struct doca_gpu_eth_rxq *rxq,
						       uint32_t max_rx_pkts, uint64_t timeout_ns,
						       uint64_t *out_first_pkt_idx,
						       uint32_t *out_pkt_num,
						       struct sdp_gpu_dev_eth_rx_batch *b)
{
	struct sdp_ring_hdr *ring = sdp_gpu_dev_eth_rxq_ring(rxq);
	struct sdp_gpu_dev_eth_wait w;
	uint32_t nb, want, claim, pending = 0, last = 0;

	b->ring = ring;
	b->first_pos = 0;
	b->n = 0;
	b->cyclic = 0;
	if (out_pkt_num != NULL)
		*out_pkt_num = 0;
	if (out_first_pkt_idx != NULL)
		*out_first_pkt_idx = DOCA_GPUNETIO_ETH_RX_NO_PKT;
	if (ring == NULL || out_first_pkt_idx == NULL || out_pkt_num == NULL) {
		b->status = DOCA_ERROR_INVALID_VALUE;
		return;
	}
	b->status = DOCA_SUCCESS;
	claim = SDP_ATOMIC_LOAD_RLX(&ring->claim);
	if (rxq->flags & SDP_GPU_ETH_RXQ_F_BACKPRESSURE) {
		/* The previous call's batch goes back now. */
		if (SDP_ATOMIC_LOAD_RLX(&ring->cons) != claim)
			(void)sdp_ring_rx_release(ring, claim);
	} else {
		b->cyclic = 1;
	}
	nb = ring->nb_slots;
	want = (max_rx_pkts == 0 || max_rx_pkts > nb) ? nb : max_rx_pkts;

	/* Wait: only the producer index is polled (this entity alone moves the claim). */
	sdp_gpu_dev_eth_wait_init(&w, timeout_ns != 0 ? timeout_ns : SDP_GPU_ETH_MAX_WAIT_NS);
	for (;;) {
		int32_t d = (int32_t)(SDP_ATOMIC_LOAD_ACQ(&ring->prod) - claim);

		pending = d <= 0 ? 0u : ((uint32_t)d > nb ? nb : (uint32_t)d);
		if (pending >= want)
			break;
		if (pending != last) {
			last = pending;
			sdp_gpu_dev_eth_wait_progress(&w);
		}
		if (!sdp_gpu_dev_eth_wait_more(&w))
			break;
	}
	if (pending == 0)
		return;
	b->n = sdp_ring_rx_poll(ring, pending < want ? pending : want, SDP_GPU_DEV_ETH_BUSY_SPINS,
				&b->first_pos);
	if (b->n > 0) {
		*out_first_pkt_idx = sdp_ring_rx_slot_index(ring, b->first_pos);
		*out_pkt_num = b->n;
	}
}

/* Attributes of packets k = start, start + step, ... of the batch. */
template <enum doca_gpu_dev_eth_rxq_attr_type rx_attr>
__device__ static inline void
sdp_gpu_dev_eth_rxq_fill_attr(struct sdp_ring_hdr *ring, uint32_t first_pos, uint32_t n,
			      uint32_t start, uint32_t step,
			      struct doca_gpu_dev_eth_rxq_attr *out_attr)
{
	if constexpr (rx_attr != DOCA_GPUNETIO_ETH_RX_ATTR_NONE) {
		if (out_attr == NULL)
			return;
		for (uint32_t k = start; k < n; k += step) {
			const struct sdp_ring_cqe *cqe = sdp_ring_rx_cqe(ring, first_pos + k);

			out_attr[k].timestamp_ns = SDP_ATOMIC_LOAD_RLX(&cqe->ts_ns);
			if (rx_attr == DOCA_GPUNETIO_ETH_RX_ATTR_ALL)
				out_attr[k].bytes = SDP_ATOMIC_LOAD_RLX(&cqe->len);
		}
	} else {
		(void)ring;
		(void)first_pos;
		(void)n;
		(void)start;
		(void)step;
		(void)out_attr;
	}
}

/* CYCLIC: everything claimed goes back at the end of the call. */
__device__ static inline void sdp_gpu_dev_eth_rxq_end(const struct sdp_gpu_dev_eth_rx_batch *b)
{
	if (b->status == DOCA_SUCCESS && b->cyclic && b->n > 0)
		(void)sdp_ring_rx_release(b->ring, sdp_ring_rx_claimed(b->ring));
}

/* ---- receive ------------------------------------------------------------------------------- */

/* Thread scope: the caller alone. */
template <enum doca_gpu_dev_eth_mcst_mode mcst_mode = DOCA_GPUNETIO_ETH_MCST_DISABLED,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_eth_rxq_attr_type rx_attr = DOCA_GPUNETIO_ETH_RX_ATTR_NONE>
__device__ static inline doca_error_t
doca_gpu_dev_eth_rxq_recv_thread(struct doca_gpu_eth_rxq *rxq, uint32_t max_rx_pkts,
				 uint64_t timeout_ns, uint64_t *out_first_pkt_idx,
				 uint32_t *out_pkt_num, struct doca_gpu_dev_eth_rxq_attr *out_attr)
{
	struct sdp_gpu_dev_eth_rx_batch b;

	sdp_gpu_dev_eth_rxq_take(rxq, max_rx_pkts, timeout_ns, out_first_pkt_idx, out_pkt_num, &b);
	if (b.status == DOCA_SUCCESS)
		sdp_gpu_dev_eth_rxq_fill_attr<rx_attr>(b.ring, b.first_pos, b.n, 0, 1, out_attr);
	sdp_gpu_dev_eth_rxq_end(&b);
	return (doca_error_t)b.status;
}

/* Warp scope: every lane of the warp calls (converged); the lowest lane is the entity. */
template <enum doca_gpu_dev_eth_mcst_mode mcst_mode = DOCA_GPUNETIO_ETH_MCST_DISABLED,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_eth_rxq_attr_type rx_attr = DOCA_GPUNETIO_ETH_RX_ATTR_NONE>
__device__ static inline doca_error_t
doca_gpu_dev_eth_rxq_recv_warp(struct doca_gpu_eth_rxq *rxq, uint32_t max_rx_pkts,
			       uint64_t timeout_ns, uint64_t *out_first_pkt_idx,
			       uint32_t *out_pkt_num, struct doca_gpu_dev_eth_rxq_attr *out_attr)
{
	const uint32_t mask = __activemask();
	const uint32_t leader = sdp_gpu_dev_eth_warp_leader(mask);
	struct sdp_gpu_dev_eth_rx_batch b = {};
	unsigned long long ring;

	if (doca_gpu_dev_eth_get_lane_id() == leader)
		sdp_gpu_dev_eth_rxq_take(rxq, max_rx_pkts, timeout_ns, out_first_pkt_idx,
					 out_pkt_num, &b);
	ring = __shfl_sync(mask, (unsigned long long)(uintptr_t)b.ring, leader);
	b.ring = (struct sdp_ring_hdr *)(uintptr_t)ring;
	b.first_pos = __shfl_sync(mask, b.first_pos, leader);
	b.n = __shfl_sync(mask, b.n, leader);
	b.status = __shfl_sync(mask, b.status, leader);
	if (b.status == DOCA_SUCCESS)
		sdp_gpu_dev_eth_rxq_fill_attr<rx_attr>(b.ring, b.first_pos, b.n,
						       sdp_gpu_dev_eth_warp_rank(mask),
						       (uint32_t)__popc(mask), out_attr);
	__syncwarp(mask);
	if (doca_gpu_dev_eth_get_lane_id() == leader)
		sdp_gpu_dev_eth_rxq_end(&b);
	return (doca_error_t)b.status;
}

/* Block scope: every thread of the block calls; thread 0 (linear index) is the entity. */
template <enum doca_gpu_dev_eth_mcst_mode mcst_mode = DOCA_GPUNETIO_ETH_MCST_DISABLED,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_eth_rxq_attr_type rx_attr = DOCA_GPUNETIO_ETH_RX_ATTR_NONE>
__device__ static inline doca_error_t
doca_gpu_dev_eth_rxq_recv_block(struct doca_gpu_eth_rxq *rxq, uint32_t max_rx_pkts,
				uint64_t timeout_ns, uint64_t *out_first_pkt_idx,
				uint32_t *out_pkt_num, struct doca_gpu_dev_eth_rxq_attr *out_attr)
{
	__shared__ struct sdp_gpu_dev_eth_rx_batch sh_batch;
	const uint32_t tid = sdp_gpu_dev_eth_block_tid();
	struct sdp_gpu_dev_eth_rx_batch b;

	if (tid == 0)
		sdp_gpu_dev_eth_rxq_take(rxq, max_rx_pkts, timeout_ns, out_first_pkt_idx,
					 out_pkt_num, &sh_batch);
	__syncthreads();
	b = sh_batch; /* read before the next barrier: thread 0 reuses it in the next call */
	if (b.status == DOCA_SUCCESS)
		sdp_gpu_dev_eth_rxq_fill_attr<rx_attr>(b.ring, b.first_pos, b.n, tid,
						       sdp_gpu_dev_eth_block_size(), out_attr);
	__syncthreads();
	if (tid == 0)
		sdp_gpu_dev_eth_rxq_end(&b);
	return (doca_error_t)b.status;
}

template <enum doca_gpu_dev_eth_exec_scope exec_scope = DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD,
	  enum doca_gpu_dev_eth_mcst_mode mcst_mode = DOCA_GPUNETIO_ETH_MCST_DISABLED,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_eth_rxq_attr_type rx_attr = DOCA_GPUNETIO_ETH_RX_ATTR_NONE>
__device__ static inline doca_error_t
doca_gpu_dev_eth_rxq_recv(struct doca_gpu_eth_rxq *rxq, uint32_t max_rx_pkts, uint64_t timeout_ns,
			  uint64_t *out_first_pkt_idx, uint32_t *out_pkt_num,
			  struct doca_gpu_dev_eth_rxq_attr *out_attr)
{
	if constexpr (exec_scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP)
		return doca_gpu_dev_eth_rxq_recv_warp<mcst_mode, nic_handler, rx_attr>(
			rxq, max_rx_pkts, timeout_ns, out_first_pkt_idx, out_pkt_num, out_attr);
	else if constexpr (exec_scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK)
		return doca_gpu_dev_eth_rxq_recv_block<mcst_mode, nic_handler, rx_attr>(
			rxq, max_rx_pkts, timeout_ns, out_first_pkt_idx, out_pkt_num, out_attr);
	else
		return doca_gpu_dev_eth_rxq_recv_thread<mcst_mode, nic_handler, rx_attr>(
			rxq, max_rx_pkts, timeout_ns, out_first_pkt_idx, out_pkt_num, out_attr);
}

/* ---- accessors ----------------------------------------------------------------------------- */

/* Address of packet slot packet_idx (taken modulo the ring size); 0 for a NULL handle. */
__device__ static inline uint64_t
doca_gpu_dev_eth_rxq_get_pkt_addr(const struct doca_gpu_eth_rxq *rxq, uint64_t packet_idx)
{
	uint32_t num;

	if (rxq == NULL || (num = rxq->pkt_num) == 0)
		return 0;
	if (packet_idx >= num)
		packet_idx %= num;
	return rxq->pkt_addr + (uint64_t)rxq->max_pkt_sz * packet_idx;
}

/* The packet buffer's memory key (what a send of the received bytes passes). */
__device__ static inline uint32_t
doca_gpu_dev_eth_rxq_get_pkt_mkey(const struct doca_gpu_eth_rxq *rxq)
{
	return rxq == NULL ? 0u : rxq->pkt_mkey;
}

/* The completion entry of slot packet_idx (CQE index == position & mask == slot index). */
__device__ static inline const struct sdp_ring_cqe *
sdp_gpu_dev_eth_rxq_slot_cqe(const struct doca_gpu_eth_rxq *rxq, uint64_t packet_idx)
{
	struct sdp_ring_hdr *ring = sdp_gpu_dev_eth_rxq_ring(rxq);
	uint32_t num;

	if (ring == NULL || (num = rxq->pkt_num) == 0)
		return NULL;
	return sdp_ring_rx_cqe(ring, (uint32_t)(packet_idx % num));
}

/* Receive timestamp (ns) of the packet in slot packet_idx; 0 when unknown. */
__device__ static inline uint64_t
doca_gpu_dev_eth_rxq_get_pkt_ts(const struct doca_gpu_eth_rxq *rxq, uint64_t packet_idx)
{
	const struct sdp_ring_cqe *cqe = sdp_gpu_dev_eth_rxq_slot_cqe(rxq, packet_idx);

	return cqe == NULL ? 0 : SDP_ATOMIC_LOAD_RLX(&cqe->ts_ns);
}

/* Bytes of the packet in slot packet_idx; 0 when unknown. */
__device__ static inline uint32_t
doca_gpu_dev_eth_rxq_get_pkt_bytes(const struct doca_gpu_eth_rxq *rxq, uint64_t packet_idx)
{
	const struct sdp_ring_cqe *cqe = sdp_gpu_dev_eth_rxq_slot_cqe(rxq, packet_idx);

	return cqe == NULL ? 0 : SDP_ATOMIC_LOAD_RLX(&cqe->len);
}

/*
 * softdpu extension (no DOCA name): the software NIC's flags of the packet in slot packet_idx,
 * SDP_RING_CQE_F_* (softdpu/sdp_ring.h): L3_CSUM_BAD / L4_CSUM_BAD (a backend found the checksum
 * wrong), CSUM_PARTIAL (a local sender left the TCP/UDP checksum to offload: the frame never
 * crossed a wire), TRUNCATED. 0 when unknown. A kernel that must trust a TCP/UDP checksum
 * verifies it itself unless CSUM_PARTIAL is set: no backend verifies on the GPU path.
 */
__device__ static inline uint32_t
sdp_gpu_dev_eth_rxq_get_pkt_flags(const struct doca_gpu_eth_rxq *rxq, uint64_t packet_idx)
{
	const struct sdp_ring_cqe *cqe = sdp_gpu_dev_eth_rxq_slot_cqe(rxq, packet_idx);

	return cqe == NULL ? 0 : SDP_ATOMIC_LOAD_RLX(&cqe->flags);
}

#endif /* DOCA_GPUNETIO_DEV_ETH_RXQ_CUH_ */
