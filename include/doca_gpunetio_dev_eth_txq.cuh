/*
 * softdpu: GPUNetIO device-side Ethernet send (doca_gpunetio_dev_eth_txq.cuh), DOCA 3.x names.
 *
 * A GPU send queue is a TX ring (softdpu/sdp_ring.h) in pinned host memory that the engine (a
 * CPU thread) polls; a "WQE" is a 32-byte ring descriptor. Kernels coordinate through the handle
 * (softdpu/sdp_gpu_eth.h):
 *   reserve  n descriptors: wait (bounded, SDP_GPU_ETH_TX_ROOM_WAIT_NS) until tx_rsvd + n - the
 *            engine's consumer index <= nb_desc, then move tx_rsvd by n with a compare-and-swap
 *            (never past the free space, so a send that gives up leaves no hole; it is counted
 *            in tx_lost);
 *   fill     the descriptors (address, length, NOTIFY and the queue's checksum flags, send time,
 *            user word = position);
 *   publish  in order: wait (bounded) until tx_ready == first, sdp_ring_tx_submit(first + n),
 *            tx_ready = first + n.
 * EXCLUSIVE sharing skips the compare-and-swap and the ordering wait (one thread owns the
 * queue). sync_scope and nic_handler are accepted and ignored: every access to shared words is
 * system scope and the engine polls, so there is no doorbell to ring.
 *
 * doca_gpu_dev_eth_txq_send<sharing, sync, nic_handler, exec_scope>(txq, addr, mkey, size,
 * flags, &ticket): every participating thread sends one packet (THREAD: the caller; WARP: the
 * participating lanes, one reservation; BLOCK: every thread of the block, one reservation, and
 * the call ends with __syncthreads); *ticket = the descriptor's position, or ~0 when the packet
 * was not sent (stopped handle, no room within the bound). mkey is accepted and ignored
 * (addresses are virtual addresses the engine resolves).
 * doca_gpu_dev_eth_txq_wait_send: the same with a send time (the NIC-format value of
 * doca_gpu_dev_eth_txq_calculate_timestamp / doca_eth_txq_calculate_timestamp); nothing is sent
 * (ticket ~0) when the queue has no wait-on-time.
 * Completions (NOTIFY sends, and failed ones): doca_gpu_dev_eth_txq_poll_completion consumes up
 * to num_cqe in order (serialised by the handle's lock unless EXCLUSIVE); ALL and LAST behave
 * alike; NB returns at once; B waits at most SDP_GPU_ETH_MAX_WAIT_NS after the last progress
 * (up to SDP_GPU_DEV_ETH_TIMED_WAIT_NS while the engine holds a timed send), then returns
 * DOCA_ERROR_TIME_OUT; DOCA_ERROR_UNEXPECTED when a consumed completion carries an error.
 * doca_gpu_dev_eth_txq_poll_completion_at(txq, idx, mode) consumes completions up to and
 * including completion idx (DOCA_ERROR_AGAIN in NB mode when it is not there yet).
 * Low level (DOCA's simple_send path; the application owns the positions): get_wqe_ptr,
 * wqe_prepare_send (waits, bounded, for the slot to be free: DOCA_ERROR_AGAIN otherwise),
 * reserve_wq_slots, mark_wqes_ready (ordered publication), submit(pi) (publishes up to pi unless
 * that is already published), doca_priv_gpu_dev_eth_txq_update_dbr (= submit) and
 * doca_gpu_dev_eth_txq_ring_db (a no-op: the engine polls the ring).
 * CUDA only (nvcc -std=c++17).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_GPUNETIO_DEV_ETH_TXQ_CUH_
#define DOCA_GPUNETIO_DEV_ETH_TXQ_CUH_

#include <cuda.h>
#include <cuda/atomic>

#include "doca_gpunetio_dev_buf.cuh"
#include "doca_gpunetio_dev_eth_common.cuh"
#include "doca_gpunetio_eth_def.h"

/* ---- softdpu internals ---------------------------------------------------------------------- */

/* What a send needs from the handle (read once per call). */
struct sdp_gpu_dev_eth_txq_view {
	struct sdp_ring_tx_hdr *ring;
	uint32_t flags;
	uint32_t nb_desc;
};

__device__ static inline bool sdp_gpu_dev_eth_txq_get(const struct doca_gpu_eth_txq *txq,
						      struct sdp_gpu_dev_eth_txq_view *v)
{
	if (txq == NULL || SDP_ATOMIC_LOAD_RLX(&txq->magic) != SDP_GPU_ETH_TXQ_MAGIC ||
	    txq->ring == 0)
		return false;
	v->ring = (struct sdp_ring_tx_hdr *)(uintptr_t)txq->ring;
	v->flags = txq->flags;
	v->nb_desc = txq->nb_desc;
	return true;
}

__host__ __device__ static inline uint64_t sdp_gpu_dev_eth_bswap64(uint64_t v)
{
	uint64_t r = 0;

	for (int i = 0; i < 8; i++)
		r = (r << 8) | ((v >> (8 * i)) & 0xffu);
	return r;
}

/* NIC-format wait-on-time value -> ns (0 stays 0: send now). */
__host__ __device__ static inline uint64_t sdp_gpu_dev_eth_wait_ts_decode(uint64_t wait_on_time_ts)
{
	uint64_t h = sdp_gpu_dev_eth_bswap64(wait_on_time_ts);

	return (h >> 32) * DOCA_GPUNETIO_ETH_NS_PER_SEC + (h & 0xffffffffu);
}

/* Reserve n descriptors (see the top); FULL (counted in tx_lost) when no room came in time. */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing>
__device__ static inline doca_error_t
sdp_gpu_dev_eth_txq_reserve(struct doca_gpu_eth_txq *txq, const struct sdp_gpu_dev_eth_txq_view *v,
			    uint32_t n, uint64_t *pos_p)
{
	struct sdp_gpu_dev_eth_wait w;
	uint64_t r;

	if (n == 0 || n > v->nb_desc)
		return DOCA_ERROR_INVALID_VALUE;
	sdp_gpu_dev_eth_wait_init(&w, SDP_GPU_ETH_TX_ROOM_WAIT_NS);
	r = SDP_ATOMIC_LOAD_ACQ(&txq->tx_rsvd);
	for (;;) {
		uint32_t used = (uint32_t)r - SDP_ATOMIC_LOAD_ACQ(&v->ring->cons);

		if (used <= v->nb_desc && v->nb_desc - used >= n) {
			if (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE) {
				SDP_ATOMIC_STORE_RLX(&txq->tx_rsvd, r + n);
				break;
			}
			if (SDP_ATOMIC_CAS(&txq->tx_rsvd, &r, r + n))
				break;
			/* another thread moved it: r holds the new value; try again at once */
			if (doca_gpu_dev_eth_query_globaltimer() < w.deadline)
				continue;
		} else if (sdp_gpu_dev_eth_wait_more(&w)) {
			r = SDP_ATOMIC_LOAD_ACQ(&txq->tx_rsvd);
			continue;
		}
		SDP_ATOMIC_FETCH_ADD(&txq->tx_lost, (uint64_t)n);
		return DOCA_ERROR_FULL;
	}
	*pos_p = r;
	return DOCA_SUCCESS;
}

/* Publish [pos, pos + n) in order; TIME_OUT (counted) when the predecessors never published. */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing>
__device__ static inline doca_error_t
sdp_gpu_dev_eth_txq_publish(struct doca_gpu_eth_txq *txq, const struct sdp_gpu_dev_eth_txq_view *v,
			    uint64_t pos, uint32_t n)
{
	doca_error_t status;

	if (sharing != DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		struct sdp_gpu_dev_eth_wait w;

		sdp_gpu_dev_eth_wait_init(&w, SDP_GPU_ETH_TX_ROOM_WAIT_NS);
		while (SDP_ATOMIC_LOAD_ACQ(&txq->tx_ready) != pos) {
			if (!sdp_gpu_dev_eth_wait_more(&w)) {
				SDP_ATOMIC_FETCH_ADD(&txq->tx_lost, (uint64_t)n);
				return DOCA_ERROR_TIME_OUT;
			}
		}
	}
	status = sdp_ring_tx_submit(v->ring, (uint32_t)(pos + n));
	SDP_ATOMIC_STORE_REL(&txq->tx_ready, pos + n);
	return status;
}

/* Fill one descriptor. */
__device__ static inline void sdp_gpu_dev_eth_txq_fill(struct sdp_ring_txd *d, uint32_t txq_flags,
						       uint64_t addr, size_t size,
						       uint32_t send_flags, uint64_t send_ts_ns,
						       uint64_t user)
{
	d->addr = addr;
	d->len = size > 0xffffffffu ? 0xffffffffu : (uint32_t)size;
	d->flags =
		((send_flags & DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY) ? SDP_RING_TXD_F_NOTIFY : 0u) |
		((txq_flags & SDP_GPU_ETH_TXQ_F_L3_CSUM) ? SDP_RING_TXD_F_L3_CSUM : 0u) |
		((txq_flags & SDP_GPU_ETH_TXQ_F_L4_CSUM) ? SDP_RING_TXD_F_L4_CSUM : 0u);
	d->send_ts_ns = send_ts_ns;
	d->user = user;
}

/* What the entity of a send call found. */
struct sdp_gpu_dev_eth_tx_batch {
	struct sdp_ring_tx_hdr *ring;
	uint64_t pos;
	uint32_t flags;
	uint32_t nb_desc;
	int32_t ok;
};

/* The entity's part of a send: validate and reserve n descriptors. */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing>
__device__ static inline void sdp_gpu_dev_eth_txq_begin(struct doca_gpu_eth_txq *txq, uint32_t n,
							bool timed,
							struct sdp_gpu_dev_eth_tx_batch *b)
{
	struct sdp_gpu_dev_eth_txq_view v;

	b->ok = 0;
	b->ring = NULL;
	b->pos = SDP_GPU_DEV_ETH_NO_INDEX;
	if (!sdp_gpu_dev_eth_txq_get(txq, &v))
		return;
	if (timed && !(v.flags & SDP_GPU_ETH_TXQ_F_WAIT_ON_TIME))
		return;
	b->ring = v.ring;
	b->flags = v.flags;
	b->nb_desc = v.nb_desc;
	if (sdp_gpu_dev_eth_txq_reserve<sharing>(txq, &v, n, &b->pos) != DOCA_SUCCESS)
		return;
	b->ok = 1;
}

/* The entity's last part: publish what the participants filled. */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing>
__device__ static inline void sdp_gpu_dev_eth_txq_end(struct doca_gpu_eth_txq *txq,
						      const struct sdp_gpu_dev_eth_tx_batch *b,
						      uint32_t n)
{
	struct sdp_gpu_dev_eth_txq_view v = {b->ring, b->flags, b->nb_desc};

	(void)sdp_gpu_dev_eth_txq_publish<sharing>(txq, &v, b->pos, n);
}

/* One send call in any scope; send_ts_ns 0 = now; timed: the queue must have wait-on-time. */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing,
	  enum doca_gpu_dev_eth_exec_scope exec_scope>
__device__ static inline void
sdp_gpu_dev_eth_txq_post(struct doca_gpu_eth_txq *txq, uint64_t addr, size_t size,
			 enum doca_gpu_eth_send_flags flags, bool timed, uint64_t send_ts_ns,
			 doca_gpu_dev_eth_ticket_t *out_ticket)
{
	struct sdp_gpu_dev_eth_tx_batch b;
	uint64_t ticket = SDP_GPU_DEV_ETH_NO_INDEX;

	if constexpr (exec_scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD) {
		struct sdp_gpu_dev_eth_txq_view v;

		sdp_gpu_dev_eth_txq_begin<sharing>(txq, 1, timed, &b);
		if (b.ok) {
			sdp_gpu_dev_eth_txq_fill(sdp_ring_tx_desc(b.ring, (uint32_t)b.pos), b.flags,
						 addr, size, flags, send_ts_ns, b.pos);
			v = {b.ring, b.flags, b.nb_desc};
			(void)sdp_gpu_dev_eth_txq_publish<sharing>(txq, &v, b.pos, 1);
			ticket = b.pos;
		}
	} else if constexpr (exec_scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP) {
		const uint32_t mask = __activemask();
		const uint32_t leader = sdp_gpu_dev_eth_warp_leader(mask);
		const uint32_t n = (uint32_t)__popc(mask);
		const bool is_leader = doca_gpu_dev_eth_get_lane_id() == leader;
		unsigned long long ring;

		b = {};
		if (is_leader)
			sdp_gpu_dev_eth_txq_begin<sharing>(txq, n, timed, &b);
		b.ok = __shfl_sync(mask, b.ok, leader);
		if (b.ok) {
			ring = __shfl_sync(mask, (unsigned long long)(uintptr_t)b.ring, leader);
			b.ring = (struct sdp_ring_tx_hdr *)(uintptr_t)ring;
			b.pos = __shfl_sync(mask, (unsigned long long)b.pos, leader);
			b.flags = __shfl_sync(mask, b.flags, leader);
			ticket = b.pos + sdp_gpu_dev_eth_warp_rank(mask);
			sdp_gpu_dev_eth_txq_fill(sdp_ring_tx_desc(b.ring, (uint32_t)ticket),
						 b.flags, addr, size, flags, send_ts_ns, ticket);
			__syncwarp(mask);
			if (is_leader)
				sdp_gpu_dev_eth_txq_end<sharing>(txq, &b, n);
		}
	} else {
		__shared__ struct sdp_gpu_dev_eth_tx_batch sh_batch;
		const uint32_t tid = sdp_gpu_dev_eth_block_tid();
		const uint32_t n = sdp_gpu_dev_eth_block_size();

		if (tid == 0)
			sdp_gpu_dev_eth_txq_begin<sharing>(txq, n, timed, &sh_batch);
		__syncthreads();
		b = sh_batch; /* read before the next barrier: thread 0 reuses it in the next call */
		if (b.ok) {
			ticket = b.pos + tid;
			sdp_gpu_dev_eth_txq_fill(sdp_ring_tx_desc(b.ring, (uint32_t)ticket),
						 b.flags, addr, size, flags, send_ts_ns, ticket);
		}
		__syncthreads();
		if (tid == 0 && b.ok)
			sdp_gpu_dev_eth_txq_end<sharing>(txq, &b, n);
		__syncthreads();
	}
	if (out_ticket != NULL)
		*out_ticket = ticket;
}

/* Bounded non-EXCLUSIVE lock of the completion side (the handle's cq_lock). */
__device__ static inline bool sdp_gpu_dev_eth_txq_cq_lock(struct doca_gpu_eth_txq *txq)
{
	struct sdp_gpu_dev_eth_wait w;

	sdp_gpu_dev_eth_wait_init(&w, SDP_GPU_DEV_ETH_TIMED_WAIT_NS + SDP_GPU_ETH_MAX_WAIT_NS);
	for (;;) {
		int32_t expected = 0;

		if (SDP_ATOMIC_CAS(&txq->cq_lock, &expected, 1))
			return true;
		if (!sdp_gpu_dev_eth_wait_more(&w))
			return false;
	}
}

__device__ static inline void sdp_gpu_dev_eth_txq_cq_unlock(struct doca_gpu_eth_txq *txq)
{
	SDP_ATOMIC_STORE_REL(&txq->cq_lock, 0);
}

/* The engine holds the oldest unsent descriptor back for its send time. */
__device__ static inline bool sdp_gpu_dev_eth_txq_timed_head(const struct sdp_ring_tx_hdr *ring)
{
	uint32_t cons = SDP_ATOMIC_LOAD_ACQ(&ring->cons);

	if (SDP_ATOMIC_LOAD_ACQ(&ring->prod) == cons)
		return false;
	return SDP_ATOMIC_LOAD_RLX(&sdp_ring_tx_desc(ring, cons)->send_ts_ns) != 0;
}

/*
 * Consume up to max completions in order (B: waiting, bounded). Returns SUCCESS, AGAIN (NB,
 * fewer than max), TIME_OUT (B, fewer than max) or UNEXPECTED (a consumed one had failed).
 */
__device__ static inline doca_error_t
sdp_gpu_dev_eth_txq_consume(struct sdp_ring_tx_hdr *ring, uint32_t max,
			    enum doca_gpu_dev_eth_wait_flags wait_mode, uint32_t *done_p)
{
	struct sdp_gpu_dev_eth_wait w;
	struct sdp_ring_txc c[8];
	const uint64_t start = doca_gpu_dev_eth_query_globaltimer();
	doca_error_t status = DOCA_SUCCESS;
	uint32_t done = 0;
	bool failed = false;

	sdp_gpu_dev_eth_wait_init(&w, SDP_GPU_ETH_MAX_WAIT_NS);
	while (done < max) {
		uint32_t want = max - done < 8u ? max - done : 8u;
		uint32_t got = sdp_ring_tx_poll_cmpl(ring, c, want);

		for (uint32_t i = 0; i < got; i++)
			if (c[i].status != DOCA_SUCCESS)
				failed = true;
		done += got;
		if (got > 0) {
			sdp_gpu_dev_eth_wait_init(&w, SDP_GPU_ETH_MAX_WAIT_NS);
			continue;
		}
		if (wait_mode == DOCA_GPUNETIO_ETH_WAIT_FLAG_NB) {
			status = DOCA_ERROR_AGAIN;
			break;
		}
		if (!sdp_gpu_dev_eth_wait_more(&w)) {
			if (sdp_gpu_dev_eth_txq_timed_head(ring) &&
			    doca_gpu_dev_eth_query_globaltimer() - start <
				    SDP_GPU_DEV_ETH_TIMED_WAIT_NS) {
				sdp_gpu_dev_eth_wait_init(&w, SDP_GPU_ETH_MAX_WAIT_NS);
				continue;
			}
			status = DOCA_ERROR_TIME_OUT;
			break;
		}
	}
	*done_p = done;
	return failed ? DOCA_ERROR_UNEXPECTED : status;
}

/* ---- send ---------------------------------------------------------------------------------- */

template <enum doca_gpu_dev_eth_resource_sharing_mode resource_sharing_mode =
		  DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_eth_exec_scope exec_scope = DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>
__device__ static inline void
doca_gpu_dev_eth_txq_send(struct doca_gpu_eth_txq *txq, uint64_t addr, uint32_t mkey, size_t size,
			  enum doca_gpu_eth_send_flags flags, doca_gpu_dev_eth_ticket_t *out_ticket)
{
	(void)mkey;
	sdp_gpu_dev_eth_txq_post<resource_sharing_mode, exec_scope>(txq, addr, size, flags, false,
								    0, out_ticket);
}

template <enum doca_gpu_dev_eth_resource_sharing_mode resource_sharing_mode =
		  DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ static inline void
doca_gpu_dev_eth_txq_send_thread(struct doca_gpu_eth_txq *txq, uint64_t addr, uint32_t mkey,
				 size_t size, enum doca_gpu_eth_send_flags flags,
				 doca_gpu_dev_eth_ticket_t *out_ticket)
{
	doca_gpu_dev_eth_txq_send<resource_sharing_mode, sync_scope, nic_handler,
				  DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>(txq, addr, mkey, size, flags,
								       out_ticket);
}

template <enum doca_gpu_dev_eth_resource_sharing_mode resource_sharing_mode =
		  DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ static inline void
doca_gpu_dev_eth_txq_send_warp(struct doca_gpu_eth_txq *txq, uint64_t addr, uint32_t mkey,
			       size_t size, enum doca_gpu_eth_send_flags flags,
			       doca_gpu_dev_eth_ticket_t *out_ticket)
{
	doca_gpu_dev_eth_txq_send<resource_sharing_mode, sync_scope, nic_handler,
				  DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP>(txq, addr, mkey, size, flags,
								     out_ticket);
}

template <enum doca_gpu_dev_eth_resource_sharing_mode resource_sharing_mode =
		  DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ static inline void
doca_gpu_dev_eth_txq_send_block(struct doca_gpu_eth_txq *txq, uint64_t addr, uint32_t mkey,
				size_t size, enum doca_gpu_eth_send_flags flags,
				doca_gpu_dev_eth_ticket_t *out_ticket)
{
	doca_gpu_dev_eth_txq_send<resource_sharing_mode, sync_scope, nic_handler,
				  DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK>(txq, addr, mkey, size, flags,
								      out_ticket);
}

/* NIC-format wait-on-time value of a time in ns; NOT_SUPPORTED without wait-on-time. */
__device__ static inline doca_error_t
doca_gpu_dev_eth_txq_calculate_timestamp(const struct doca_gpu_eth_txq *txq,
					 const uint64_t timestamp_ns, uint64_t *wait_on_time_ts)
{
	struct sdp_gpu_dev_eth_txq_view v;

	if (wait_on_time_ts == NULL || !sdp_gpu_dev_eth_txq_get(txq, &v))
		return DOCA_ERROR_INVALID_VALUE;
	if (!(v.flags & SDP_GPU_ETH_TXQ_F_WAIT_ON_TIME))
		return DOCA_ERROR_NOT_SUPPORTED;
	*wait_on_time_ts =
		sdp_gpu_dev_eth_bswap64((timestamp_ns % DOCA_GPUNETIO_ETH_NS_PER_SEC) |
					((timestamp_ns / DOCA_GPUNETIO_ETH_NS_PER_SEC) << 32));
	return DOCA_SUCCESS;
}

template <enum doca_gpu_dev_eth_resource_sharing_mode resource_sharing_mode =
		  DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_eth_exec_scope exec_scope = DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>
__device__ static inline void doca_gpu_dev_eth_txq_wait_send(
	struct doca_gpu_eth_txq *txq, const uint64_t wait_on_time_ts, uint64_t addr, uint32_t mkey,
	size_t size, enum doca_gpu_eth_send_flags flags, doca_gpu_dev_eth_ticket_t *out_ticket)
{
	(void)mkey;
	sdp_gpu_dev_eth_txq_post<resource_sharing_mode, exec_scope>(
		txq, addr, size, flags, true, sdp_gpu_dev_eth_wait_ts_decode(wait_on_time_ts),
		out_ticket);
}

/* ---- completions --------------------------------------------------------------------------- */

template <enum doca_gpu_dev_eth_cq_poll_mode cqe_poll = DOCA_GPUNETIO_ETH_CQ_POLL_ALL,
	  enum doca_gpu_dev_eth_resource_sharing_mode resource_sharing_mode =
		  DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ static inline doca_error_t
doca_gpu_dev_eth_txq_poll_completion(struct doca_gpu_eth_txq *txq, const uint32_t num_cqe,
				     enum doca_gpu_dev_eth_wait_flags wait_mode,
				     uint32_t *num_completed)
{
	struct sdp_gpu_dev_eth_txq_view v;
	doca_error_t status;
	uint32_t done = 0;

	if (num_completed != NULL)
		*num_completed = 0;
	if (num_completed == NULL || !sdp_gpu_dev_eth_txq_get(txq, &v))
		return DOCA_ERROR_INVALID_VALUE;
	if (num_cqe == 0)
		return DOCA_SUCCESS;
	if (resource_sharing_mode != DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE &&
	    !sdp_gpu_dev_eth_txq_cq_lock(txq))
		return DOCA_ERROR_TIME_OUT;
	status = sdp_gpu_dev_eth_txq_consume(v.ring, num_cqe, wait_mode, &done);
	if (resource_sharing_mode != DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE)
		sdp_gpu_dev_eth_txq_cq_unlock(txq);
	*num_completed = done;
	/* DOCA: non-blocking polling reports what it found as a success */
	return status == DOCA_ERROR_AGAIN ? DOCA_SUCCESS : status;
}

/* Consume completions up to and including completion cqe_idx (a running completion count). */
template <enum doca_gpu_dev_eth_resource_sharing_mode resource_sharing_mode =
		  DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ static inline doca_error_t
doca_gpu_dev_eth_txq_poll_completion_at(struct doca_gpu_eth_txq *txq, const uint64_t cqe_idx,
					enum doca_gpu_dev_eth_wait_flags wait_mode)
{
	struct sdp_gpu_dev_eth_txq_view v;
	int32_t left;
	uint32_t done = 0;

	if (!sdp_gpu_dev_eth_txq_get(txq, &v))
		return DOCA_ERROR_INVALID_VALUE;
	left = (int32_t)((uint32_t)cqe_idx - SDP_ATOMIC_LOAD_RLX(&v.ring->cq_cons)) + 1;
	if (left <= 0)
		return DOCA_SUCCESS; /* consumed already */
	return sdp_gpu_dev_eth_txq_consume(v.ring, (uint32_t)left, wait_mode, &done);
}

/* ---- low level ----------------------------------------------------------------------------- */

/* The descriptor ("WQE") of position wqe_idx; NULL for a NULL or stopped handle. */
__device__ static inline struct doca_gpu_dev_eth_txq_wqe *
doca_gpu_dev_eth_txq_get_wqe_ptr(struct doca_gpu_eth_txq *txq, uint64_t wqe_idx)
{
	struct sdp_gpu_dev_eth_txq_view v;

	if (!sdp_gpu_dev_eth_txq_get(txq, &v))
		return NULL;
	return (struct doca_gpu_dev_eth_txq_wqe *)sdp_ring_tx_desc(v.ring, (uint32_t)wqe_idx);
}

/*
 * Fill the descriptor of position wqe_idx (user word = wqe_idx), after waiting (bounded) until
 * the engine is done with its previous use: AGAIN when it is not within the bound.
 */
__device__ static inline doca_error_t doca_gpu_dev_eth_txq_wqe_prepare_send(
	const struct doca_gpu_eth_txq *txq, struct doca_gpu_dev_eth_txq_wqe *wqe_ptr,
	const uint64_t wqe_idx, const uint64_t addr, const uint32_t mkey, const uint32_t nbytes,
	const enum doca_gpu_eth_send_flags flags)
{
	struct sdp_gpu_dev_eth_txq_view v;
	struct sdp_gpu_dev_eth_wait w;

	(void)mkey;
	if (wqe_ptr == NULL || !sdp_gpu_dev_eth_txq_get(txq, &v))
		return DOCA_ERROR_INVALID_VALUE;
	sdp_gpu_dev_eth_wait_init(&w, SDP_GPU_ETH_TX_ROOM_WAIT_NS);
	while ((uint32_t)wqe_idx - SDP_ATOMIC_LOAD_ACQ(&v.ring->cons) >= v.nb_desc) {
		if (!sdp_gpu_dev_eth_wait_more(&w))
			return DOCA_ERROR_AGAIN;
	}
	sdp_gpu_dev_eth_txq_fill(&wqe_ptr->desc, v.flags, addr, nbytes, flags, 0, wqe_idx);
	return DOCA_SUCCESS;
}

/* Reserve count descriptors; their first position, or ~0 when no room came in time. */
template <enum doca_gpu_dev_eth_resource_sharing_mode resource_sharing_mode =
		  DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>
__device__ static inline uint64_t
doca_gpu_dev_eth_txq_reserve_wq_slots(struct doca_gpu_eth_txq *txq, const uint32_t count)
{
	struct sdp_gpu_dev_eth_txq_view v;
	uint64_t pos;

	if (!sdp_gpu_dev_eth_txq_get(txq, &v) || sdp_gpu_dev_eth_txq_reserve<resource_sharing_mode>(
							 txq, &v, count, &pos) != DOCA_SUCCESS)
		return SDP_GPU_DEV_ETH_NO_INDEX;
	return pos;
}

/* Publish the reserved and filled descriptors from_idx..to_idx (inclusive), in order. */
template <enum doca_gpu_dev_eth_resource_sharing_mode resource_sharing_mode =
		  DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>
__device__ static inline void doca_gpu_dev_eth_txq_mark_wqes_ready(struct doca_gpu_eth_txq *txq,
								   const uint64_t from_idx,
								   const uint64_t to_idx)
{
	struct sdp_gpu_dev_eth_txq_view v;

	if (!sdp_gpu_dev_eth_txq_get(txq, &v) || to_idx < from_idx ||
	    to_idx - from_idx >= v.nb_desc)
		return;
	(void)sdp_gpu_dev_eth_txq_publish<resource_sharing_mode>(txq, &v, from_idx,
								 (uint32_t)(to_idx - from_idx + 1));
}

/*
 * Publish every descriptor before prod_index (the application owns the positions: one
 * submitter at a time). Nothing when they are published already (mark_wqes_ready did it).
 */
__device__ static inline void sdp_gpu_dev_eth_txq_submit_pi(struct doca_gpu_eth_txq *txq,
							    uint64_t prod_index)
{
	struct sdp_gpu_dev_eth_txq_view v;
	uint64_t ready;

	if (!sdp_gpu_dev_eth_txq_get(txq, &v))
		return;
	ready = SDP_ATOMIC_LOAD_ACQ(&txq->tx_ready);
	if ((int64_t)(prod_index - ready) <= 0)
		return;
	if (sdp_ring_tx_submit(v.ring, (uint32_t)prod_index) != DOCA_SUCCESS)
		return; /* beyond the free space: nothing published */
	SDP_ATOMIC_STORE_REL(&txq->tx_ready, prod_index);
	if ((int64_t)(prod_index - SDP_ATOMIC_LOAD_RLX(&txq->tx_rsvd)) > 0)
		SDP_ATOMIC_STORE_RLX(&txq->tx_rsvd, prod_index);
}

template <enum doca_gpu_dev_eth_resource_sharing_mode resource_sharing_mode =
		  DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_eth_txq_submit(struct doca_gpu_eth_txq *txq,
							  uint64_t prod_index)
{
	sdp_gpu_dev_eth_txq_submit_pi(txq, prod_index);
}

/* DOCA's doorbell-record update: here the same publication as submit (32-bit index). */
__device__ static inline void doca_priv_gpu_dev_eth_txq_update_dbr(struct doca_gpu_eth_txq *txq,
								   uint32_t prod_index)
{
	uint64_t ready;

	if (txq == NULL)
		return;
	ready = SDP_ATOMIC_LOAD_ACQ(&txq->tx_ready);
	sdp_gpu_dev_eth_txq_submit_pi(
		txq, ready + (uint64_t)(int64_t)(int32_t)(prod_index - (uint32_t)ready));
}

/* DOCA's doorbell: nothing to ring, the engine polls the ring (kept for the samples' sake). */
template <enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ static inline void doca_gpu_dev_eth_txq_ring_db(struct doca_gpu_eth_txq *txq,
							   uint64_t prod_index)
{
	(void)txq;
	(void)prod_index;
}

/* ---- DOCA 2.x send names ------------------------------------------------------------------ */

/*
 * DOCA 2.x sent with a strong enqueue per thread, then one thread's commit and push (the GPU
 * packet processing application still names the first in a message). Here each enqueue is a
 * whole send of the 3.x path (reserve, fill, publish in order; GPU sharing mode, any number of
 * threads at once, order between threads unspecified, as in 2.x), so commit_strong and push have
 * nothing left to do and return DOCA_SUCCESS. The buffer is an element of a GPU buffer array
 * (doca_gpunetio_dev_buf.cuh). DOCA_ERROR_INVALID_VALUE for a NULL queue or buffer or a zero
 * length, DOCA_ERROR_AGAIN when the packet was not sent (no room within the bound, stopped
 * queue).
 */
enum doca_gpu_send_flags {
	DOCA_GPU_SEND_FLAG_NONE = 0,
	DOCA_GPU_SEND_FLAG_NOTIFY = 1 << 0, /* a completion when sent */
};

__device__ static inline doca_error_t
doca_gpu_dev_eth_txq_send_enqueue_strong(struct doca_gpu_eth_txq *txq,
					 const struct doca_gpu_buf *buf, const uint32_t nbytes,
					 const uint32_t flags_bitmask)
{
	doca_gpu_dev_eth_ticket_t ticket = ~0ull;

	if (txq == NULL || buf == NULL || nbytes == 0)
		return DOCA_ERROR_INVALID_VALUE;
	doca_gpu_dev_eth_txq_send<
		DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
		DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO, DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>(
		txq, (uint64_t)buf->addr, 0, nbytes,
		(flags_bitmask & DOCA_GPU_SEND_FLAG_NOTIFY) ? DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY :
							      DOCA_GPUNETIO_ETH_SEND_FLAG_NONE,
		&ticket);
	return ticket == ~0ull ? DOCA_ERROR_AGAIN : DOCA_SUCCESS;
}

__device__ static inline doca_error_t
doca_gpu_dev_eth_txq_commit_strong(struct doca_gpu_eth_txq *txq)
{
	return txq == NULL ? DOCA_ERROR_INVALID_VALUE : DOCA_SUCCESS;
}

__device__ static inline doca_error_t doca_gpu_dev_eth_txq_push(struct doca_gpu_eth_txq *txq)
{
	return txq == NULL ? DOCA_ERROR_INVALID_VALUE : DOCA_SUCCESS;
}

#endif /* DOCA_GPUNETIO_DEV_ETH_TXQ_CUH_ */
