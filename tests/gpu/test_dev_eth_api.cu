/*
 * The GPUNetIO device API (doca_gpunetio_dev_eth_rxq.cuh / _txq.cuh) on a real GPU, without
 * libdoca_eth: the rings and handles are laid out here in pinned host memory mapped into the
 * GPU, and a host thread plays the engine (RX producer with sdp_ring_rx_push, TX consumer with
 * sdp_ring_tx_peek / sdp_ring_tx_complete).
 *
 * RX, in thread, warp and block scope with attributes:
 *   - exact counts: 40 frames pre-pushed, recv(max 16) in thread scope returns 16, 16, 8 (no
 *     off-by-one), then 0 after its timeout (bounded, measured); max 0 returns all 40 at once;
 *     timeout 0 returns 0 within SDP_GPU_ETH_MAX_WAIT_NS on an empty ring;
 *   - BACKPRESSURE stream of 20000 frames: every sequence number exactly once, in order, bytes,
 *     timestamps, slot addresses (get_pkt_addr), get_pkt_bytes / get_pkt_ts and the payload
 *     checked for every packet by the thread that filled nothing but reads it;
 *   - CYCLIC stream pushed flat out against a slowed receiver: the frames it gets are intact and
 *     increasing, and the gaps equal the producer's overwrites + drops;
 *   - a stopped handle (magic 0) gives INVALID_VALUE.
 * TX: send in thread, warp and block scope from 2 blocks sharing one queue (GPU sharing), NOTIFY
 * on the last thread of each block, poll_completion by thread 0; the host checks that every
 * packet id arrives exactly once, with its ticket == its descriptor position, length, NOTIFY
 * and checksum flags; one completion carries an error and exactly one poll reports UNEXPECTED.
 * wait_send + calculate_timestamp (encoding and decoded send time), NOT_SUPPORTED without
 * wait-on-time. The low-level path of DOCA's simple_send (get_wqe_ptr, wqe_prepare_send, submit
 * / update_dbr + ring_db, poll_completion_at) on a second queue.
 * Exits 77 only when /dev/nvidiactl is absent.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include <cuda_runtime.h>
#include <pthread.h>
#include <unistd.h>

#include "doca_gpunetio_dev_eth_rxq.cuh"
#include "doca_gpunetio_dev_eth_txq.cuh"

#include "gpu_check.h"

#define RX_SLOTS 64u
#define SLOT_SIZE 128u
#define STREAM_FRAMES 20000u
#define TS_BASE 1000000ull
#define MAX_BATCH 64u
#define KERNEL_LIMIT_NS 30000000000ull /* each kernel gives up after 30 s */

#define TX_DESC 64u
#define TX_BLOCKS 2u
#define TX_THREADS 64u
#define TX_ITERS 50u
#define TX_PER_RUN (TX_BLOCKS * TX_THREADS * TX_ITERS)
#define TX_RUNS 4u /* thread, warp, block scope; DOCA 2.x strong enqueue */
#define TX_FRAME 64u
#define LL_THREADS 32u
#define LL_ROUNDS 20u

static int g_fails;

#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                  \
			std::fprintf(stderr, __VA_ARGS__);                                         \
			std::fprintf(stderr, "\n");                                                \
			g_fails++;                                                                 \
		}                                                                                  \
	} while (0)

/* ---- frames -------------------------------------------------------------------------------- */

__host__ __device__ static uint32_t frame_len(uint32_t seq)
{
	return 16u + (seq * 37u) % (SLOT_SIZE - 16u + 1u);
}

__host__ __device__ static uint8_t frame_byte(uint32_t seq, uint32_t i)
{
	return (uint8_t)(seq * 131u + i * 7u);
}

static void frame_fill(uint8_t *f, uint32_t seq)
{
	uint32_t len = frame_len(seq);

	std::memcpy(f, &seq, 4);
	for (uint32_t i = 4; i < len; i++)
		f[i] = frame_byte(seq, i);
}

__device__ static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- RX kernels ---------------------------------------------------------------------------- */

struct rx_result {
	unsigned int received;
	unsigned int batches;
	unsigned int bad_status;
	unsigned int too_many;
	unsigned int bad_seq;
	unsigned int bad_attr;
	unsigned int bad_acc; /* get_pkt_bytes / get_pkt_ts / get_pkt_addr */
	unsigned int bad_payload;
	unsigned int gaps;
	unsigned int timed_out;
	unsigned int counts[8]; /* exact-count test: the first calls' counts */
	unsigned long long wait_ns[2];
	unsigned int host_done; /* written by the host */
};

struct rx_params {
	struct doca_gpu_eth_rxq *rxq;
	uint64_t pkt_base; /* device address of slot 0 */
	uint32_t nb;
	uint32_t slot_size;
	uint32_t total; /* frames the host pushes */
	uint32_t max;
	uint64_t timeout_ns;
	uint32_t cyclic;
	uint32_t slow; /* ns to sleep after each batch */
};

/*
 * Receive until every frame is in (BACKPRESSURE) or the host is done and the ring is empty
 * (CYCLIC); every participating thread checks its share of each batch.
 */
template <enum doca_gpu_dev_eth_exec_scope scope>
__global__ void rx_stream(struct rx_params p, struct rx_result *res)
{
	__shared__ uint64_t first;
	__shared__ uint32_t n;
	__shared__ struct doca_gpu_dev_eth_rxq_attr attr[MAX_BATCH];
	__shared__ uint32_t next_seq;
	__shared__ int stop;
	__shared__ int done_before;
	uint32_t tid = threadIdx.x, nthr = blockDim.x;
	uint64_t deadline = doca_gpu_dev_eth_query_globaltimer() + KERNEL_LIMIT_NS;

	if (scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD) {
		if (tid != 0)
			return;
		nthr = 1;
	}
	if (tid == 0) {
		next_seq = 0;
		stop = 0;
	}
	__syncthreads();
	while (!stop) {
		if (tid == 0)
			done_before = DOCA_GPUNETIO_ETH_VOLATILE(res->host_done);
		doca_error_t st = doca_gpu_dev_eth_rxq_recv<scope, DOCA_GPUNETIO_ETH_MCST_AUTO,
							    DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
							    DOCA_GPUNETIO_ETH_RX_ATTR_ALL>(
			p.rxq, p.max, p.timeout_ns, &first, &n, attr);
		uint32_t base = next_seq;

		if (st != DOCA_SUCCESS || n > p.max) {
			if (tid == 0) {
				if (st != DOCA_SUCCESS)
					res->bad_status++;
				else
					res->too_many++;
				stop = 1;
			}
		} else {
			for (uint32_t k = tid; k < n; k += nthr) {
				uint64_t addr = doca_gpu_dev_eth_rxq_get_pkt_addr(p.rxq, first + k);
				uint32_t slot = (uint32_t)((first + k) % p.nb);
				const uint8_t *f = (const uint8_t *)addr;
				uint32_t seq, len;

				if (addr != p.pkt_base + (uint64_t)slot * p.slot_size) {
					atomicAdd(&res->bad_acc, 1u);
					continue;
				}
				if (p.cyclic) {
					/*
					 * CYCLIC: the slots went back to the engine at the end of the
					 * call, so a fast producer may already be rewriting them (DOCA's
					 * semantics); the attributes were taken while they were claimed.
					 */
					seq = (uint32_t)(attr[k].timestamp_ns - TS_BASE);
					if (attr[k].bytes != frame_len(seq))
						atomicAdd(&res->bad_attr, 1u);
					if (seq < base ||
					    (k > 0 &&
					     (uint32_t)(attr[k - 1].timestamp_ns - TS_BASE) >= seq))
						atomicAdd(&res->bad_seq, 1u);
					continue;
				}
				seq = rd32(f);
				len = frame_len(seq);
				if (seq != base + k)
					atomicAdd(&res->bad_seq, 1u);
				if (attr[k].bytes != len || attr[k].timestamp_ns != TS_BASE + seq)
					atomicAdd(&res->bad_attr, 1u);
				if (doca_gpu_dev_eth_rxq_get_pkt_bytes(p.rxq, first + k) != len ||
				    doca_gpu_dev_eth_rxq_get_pkt_ts(p.rxq, first + k) !=
					    TS_BASE + seq)
					atomicAdd(&res->bad_acc, 1u);
				for (uint32_t i = 4; i < len; i++) {
					if (f[i] != frame_byte(seq, i)) {
						atomicAdd(&res->bad_payload, 1u);
						break;
					}
				}
			}
		}
		__syncthreads();
		if (tid == 0 && !stop) {
			if (n > 0) {
				uint32_t s0 = (uint32_t)(attr[0].timestamp_ns - TS_BASE);
				uint32_t last = (uint32_t)(attr[n - 1].timestamp_ns - TS_BASE);

				if (p.cyclic && s0 >= next_seq && last >= s0)
					res->gaps += (s0 - next_seq) + (last - s0 + 1u - n);
				next_seq = last + 1;
				res->received += n;
				res->batches++;
				if (p.slow)
					__nanosleep(p.slow);
			}
			if (!p.cyclic && res->received >= p.total)
				stop = 1;
			/*
			 * Empty after the host had finished before the call: drained. (A call
			 * may come back empty while the producer laps it, so the host's flag
			 * must have been set before the call started.)
			 */
			if (p.cyclic && n == 0 && done_before)
				stop = 1;
			if (doca_gpu_dev_eth_query_globaltimer() > deadline) {
				res->timed_out = 1;
				stop = 1;
			}
		}
		__syncthreads();
	}
	if (tid == 0 && p.cyclic && next_seq <= p.total)
		res->gaps += p.total - next_seq;
}

/* Exact counts on 40 pre-pushed frames, then bounded empty waits. */
__global__ void rx_exact(struct rx_params p, struct rx_result *res)
{
	struct doca_gpu_dev_eth_rxq_attr attr[MAX_BATCH];
	uint64_t first = 0;
	uint32_t n = 0, c = 0;
	uint64_t t0;

	for (int i = 0; i < 4; i++) {
		if (doca_gpu_dev_eth_rxq_recv<
			    DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD, DOCA_GPUNETIO_ETH_MCST_DISABLED,
			    DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO, DOCA_GPUNETIO_ETH_RX_ATTR_TS>(
			    p.rxq, 16, 1000000, &first, &n, attr) != DOCA_SUCCESS)
			res->bad_status++;
		res->counts[c++] = n;
		for (uint32_t k = 0; k < n; k++)
			if (attr[k].timestamp_ns !=
			    TS_BASE + rd32((const uint8_t *)doca_gpu_dev_eth_rxq_get_pkt_addr(
					      p.rxq, first + k)))
				res->bad_attr++;
		res->received += n;
	}
	if (first != DOCA_GPUNETIO_ETH_RX_NO_PKT)
		res->bad_acc++; /* the empty call reports no first index */
	/* timeout 0 on an empty ring: bounded by SDP_GPU_ETH_MAX_WAIT_NS */
	t0 = doca_gpu_dev_eth_query_globaltimer();
	doca_gpu_dev_eth_rxq_recv(p.rxq, 8, 0, &first, &n, NULL);
	res->wait_ns[0] = doca_gpu_dev_eth_query_globaltimer() - t0;
	res->counts[c++] = n;
	/* the host pushes 40 more meanwhile (it waits for counts[4] to be written) */
	DOCA_GPUNETIO_ETH_VOLATILE(res->batches) = 1;
	__threadfence_system();
	t0 = doca_gpu_dev_eth_query_globaltimer();
	while (DOCA_GPUNETIO_ETH_VOLATILE(res->host_done) == 0 &&
	       doca_gpu_dev_eth_query_globaltimer() - t0 < 5000000000ull)
		__nanosleep(10000);
	/* max 0: no count limit, returns what is there when the time is up */
	t0 = doca_gpu_dev_eth_query_globaltimer();
	doca_gpu_dev_eth_rxq_recv<DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>(p.rxq, 0, 2000000, &first,
								       &n, NULL);
	res->wait_ns[1] = doca_gpu_dev_eth_query_globaltimer() - t0;
	res->counts[c++] = n;
	res->received += n;
}

/* A stopped handle. */
__global__ void rx_invalid(struct doca_gpu_eth_rxq *rxq, struct rx_result *res)
{
	__shared__ uint64_t first;
	__shared__ uint32_t n;
	doca_error_t st = doca_gpu_dev_eth_rxq_recv<DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK>(
		rxq, 8, 1000, &first, &n, NULL);

	if (threadIdx.x == 0) {
		res->counts[0] = (unsigned int)st;
		res->counts[1] =
			(unsigned int)doca_gpu_dev_eth_rxq_recv(NULL, 8, 1000, &first, &n, NULL);
		res->counts[2] = n;
	}
}

/* ---- TX kernels ---------------------------------------------------------------------------- */

struct tx_result {
	unsigned long long tickets[TX_PER_RUN];
	unsigned int completions;
	unsigned int unexpected;
	unsigned int bad_status;
	unsigned int bad_ticket;
	/* wait_send / calculate_timestamp */
	unsigned long long wot_value;
	unsigned long long wot_ticket;
	unsigned int wot_status;
	unsigned int nowot_status;
	unsigned long long nowot_ticket;
	unsigned int nb_status;
	unsigned int nb_completed;
	unsigned int at_nb_status;
	/* low level */
	unsigned int ll_bad;
	unsigned int ll_done;
};

template <enum doca_gpu_dev_eth_exec_scope scope>
__global__ void tx_send(struct doca_gpu_eth_txq *txq, uint64_t frames_dev, struct tx_result *res)
{
	for (uint32_t it = 0; it < TX_ITERS; it++) {
		uint32_t id = it * TX_BLOCKS * TX_THREADS + blockIdx.x * TX_THREADS + threadIdx.x;
		enum doca_gpu_eth_send_flags fl = threadIdx.x == TX_THREADS - 1 ?
							  DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY :
							  DOCA_GPUNETIO_ETH_SEND_FLAG_NONE;
		doca_gpu_dev_eth_ticket_t t = 0;
		uint32_t done = 0;

		doca_gpu_dev_eth_txq_send<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
					  DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
					  DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO, scope>(
			txq, frames_dev + (uint64_t)id * TX_FRAME, 0x1234, TX_FRAME - (id % 4u), fl,
			&t);
		res->tickets[id] = t;
		if (t == ~0ull)
			atomicAdd(&res->bad_ticket, 1u);
		__syncthreads();
		if (threadIdx.x == 0) {
			doca_error_t st = doca_gpu_dev_eth_txq_poll_completion<
				DOCA_GPUNETIO_ETH_CQ_POLL_LAST>(
				txq, 1, DOCA_GPUNETIO_ETH_WAIT_FLAG_B, &done);

			if (st == DOCA_ERROR_UNEXPECTED)
				atomicAdd(&res->unexpected, 1u);
			else if (st != DOCA_SUCCESS)
				atomicAdd(&res->bad_status, 1u);
			atomicAdd(&res->completions, done);
		}
		__syncthreads();
	}
}

/*
 * The same packets through DOCA 2.x's names: every thread a strong enqueue of a buffer (an
 * element as doca_gpu_dev_buf_get_buf hands out), thread 0 commit_strong and push; then the
 * refusals (NULL buffer, zero length, NULL queue).
 */
__global__ void tx_send_v2(struct doca_gpu_eth_txq *txq, uint64_t frames_dev, struct tx_result *res)
{
	for (uint32_t it = 0; it < TX_ITERS; it++) {
		uint32_t id = it * TX_BLOCKS * TX_THREADS + blockIdx.x * TX_THREADS + threadIdx.x;
		struct doca_gpu_buf buf = {frames_dev + (uint64_t)id * TX_FRAME, 0x1234, 0};
		uint32_t fl = threadIdx.x == TX_THREADS - 1 ? DOCA_GPU_SEND_FLAG_NOTIFY :
							      DOCA_GPU_SEND_FLAG_NONE;
		uint32_t done = 0;

		if (doca_gpu_dev_eth_txq_send_enqueue_strong(txq, &buf, TX_FRAME - (id % 4u), fl) !=
		    DOCA_SUCCESS)
			atomicAdd(&res->bad_ticket, 1u);
		res->tickets[id] = ~0ull; /* 2.x gives no position: check_tx_run learns it */
		__syncthreads();
		if (threadIdx.x == 0) {
			doca_error_t st;

			if (doca_gpu_dev_eth_txq_commit_strong(txq) != DOCA_SUCCESS ||
			    doca_gpu_dev_eth_txq_push(txq) != DOCA_SUCCESS)
				atomicAdd(&res->bad_status, 1u);
			st = doca_gpu_dev_eth_txq_poll_completion<DOCA_GPUNETIO_ETH_CQ_POLL_LAST>(
				txq, 1, DOCA_GPUNETIO_ETH_WAIT_FLAG_B, &done);
			if (st == DOCA_ERROR_UNEXPECTED)
				atomicAdd(&res->unexpected, 1u);
			else if (st != DOCA_SUCCESS)
				atomicAdd(&res->bad_status, 1u);
			atomicAdd(&res->completions, done);
		}
		__syncthreads();
	}
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		struct doca_gpu_buf buf = {frames_dev, 0, 0};

		if (doca_gpu_dev_eth_txq_send_enqueue_strong(txq, nullptr, 64, 0) !=
			    DOCA_ERROR_INVALID_VALUE ||
		    doca_gpu_dev_eth_txq_send_enqueue_strong(txq, &buf, 0, 0) !=
			    DOCA_ERROR_INVALID_VALUE ||
		    doca_gpu_dev_eth_txq_send_enqueue_strong(nullptr, &buf, 64, 0) !=
			    DOCA_ERROR_INVALID_VALUE ||
		    doca_gpu_dev_eth_txq_commit_strong(nullptr) != DOCA_ERROR_INVALID_VALUE ||
		    doca_gpu_dev_eth_txq_push(nullptr) != DOCA_ERROR_INVALID_VALUE)
			atomicAdd(&res->bad_status, 1u);
	}
}

/* wait_send and calculate_timestamp, then the non-blocking polls on an idle queue. */
__global__ void tx_misc(struct doca_gpu_eth_txq *txq, struct doca_gpu_eth_txq *txq_nowot,
			uint64_t frame_dev, uint64_t when_ns, struct tx_result *res)
{
	uint64_t v = 0, ticket = 0;
	uint32_t done = 7;

	res->wot_status = (unsigned int)doca_gpu_dev_eth_txq_calculate_timestamp(txq, when_ns, &v);
	res->wot_value = v;
	doca_gpu_dev_eth_txq_wait_send<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE>(
		txq, v, frame_dev, 0, TX_FRAME, DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY, &ticket);
	res->wot_ticket = ticket;
	if (doca_gpu_dev_eth_txq_poll_completion(txq, 1, DOCA_GPUNETIO_ETH_WAIT_FLAG_B, &done) !=
		    DOCA_SUCCESS ||
	    done != 1)
		res->bad_status++;
	res->nowot_status =
		(unsigned int)doca_gpu_dev_eth_txq_calculate_timestamp(txq_nowot, when_ns, &v);
	doca_gpu_dev_eth_txq_wait_send(txq_nowot, v, frame_dev, 0, TX_FRAME,
				       DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY, &ticket);
	res->nowot_ticket = ticket;
	res->nb_status = (unsigned int)doca_gpu_dev_eth_txq_poll_completion(
		txq, 4, DOCA_GPUNETIO_ETH_WAIT_FLAG_NB, &done);
	res->nb_completed = done;
	res->at_nb_status = (unsigned int)doca_gpu_dev_eth_txq_poll_completion_at(
		txq, 1000000, DOCA_GPUNETIO_ETH_WAIT_FLAG_NB);
}

/* DOCA simple_send's low-level loop: the application owns the positions (from 0). */
__global__ void tx_lowlevel(struct doca_gpu_eth_txq *txq, uint64_t frames_dev,
			    struct tx_result *res)
{
	uint64_t wqe_idx = threadIdx.x;

	for (uint32_t round = 0; round < LL_ROUNDS; round++) {
		enum doca_gpu_eth_send_flags fl = threadIdx.x == LL_THREADS - 1 ?
							  DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY :
							  DOCA_GPUNETIO_ETH_SEND_FLAG_NONE;
		struct doca_gpu_dev_eth_txq_wqe *w = doca_gpu_dev_eth_txq_get_wqe_ptr(txq, wqe_idx);

		if (w == NULL || doca_gpu_dev_eth_txq_wqe_prepare_send(
					 txq, w, wqe_idx, frames_dev + wqe_idx * TX_FRAME, 0,
					 TX_FRAME - (uint32_t)(wqe_idx % 4u), fl) != DOCA_SUCCESS)
			atomicAdd(&res->ll_bad, 1u);
		__syncthreads();
		if (threadIdx.x == LL_THREADS - 1) {
			if (round % 2 == 0) {
				doca_gpu_dev_eth_txq_submit(txq, wqe_idx + 1);
			} else {
				doca_priv_gpu_dev_eth_txq_update_dbr(txq, (uint32_t)(wqe_idx + 1));
				doca_gpu_dev_eth_txq_ring_db(txq, wqe_idx + 1);
			}
			if (doca_gpu_dev_eth_txq_poll_completion_at<
				    DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
				    DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA>(
				    txq, round, DOCA_GPUNETIO_ETH_WAIT_FLAG_B) != DOCA_SUCCESS)
				atomicAdd(&res->ll_bad, 1u);
			else
				res->ll_done++;
		}
		__syncthreads();
		wqe_idx += blockDim.x;
	}
}

/* ---- host: the engine ------------------------------------------------------------------------ */

struct tx_seen {
	uint32_t count;
	uint64_t pos;
	uint32_t len;
	uint32_t flags;
	uint64_t send_ts;
};

struct tx_engine {
	struct sdp_ring_tx_hdr *ring;
	uint64_t start;	      /* 64-bit position of the ring's first descriptor */
	uint64_t frames_dev;  /* device address of frame 0 */
	uint8_t *frames_host; /* its host view */
	uint64_t done;	      /* descriptors completed */
	std::vector<tx_seen> seen;
	uint32_t bad_user, bad_addr;
	uint64_t fail_after; /* fail the first NOTIFY descriptor from this position on, once */
	bool failed;
};

struct engine {
	std::atomic<int> stop;
	struct tx_engine tx[2];
};

static void tx_engine_step(struct tx_engine *e, int *busy)
{
	uint32_t pos, n = sdp_ring_tx_peek(e->ring, 16, &pos);

	for (uint32_t i = 0; i < n; i++) {
		const struct sdp_ring_txd *d = sdp_ring_tx_desc(e->ring, pos + i);
		uint64_t p64 = e->start + e->done;
		uint64_t id = (d->addr - e->frames_dev) / TX_FRAME;
		doca_error_t st = DOCA_SUCCESS;

		if ((uint32_t)p64 != pos + i || d->user != p64)
			e->bad_user++;
		if (d->addr < e->frames_dev || id >= e->seen.size() ||
		    (d->addr - e->frames_dev) % TX_FRAME != 0 ||
		    *(const uint32_t *)(e->frames_host + id * TX_FRAME) != (uint32_t)id) {
			e->bad_addr++;
		} else {
			tx_seen &s = e->seen[id];

			s.count++;
			s.pos = p64;
			s.len = d->len;
			s.flags = d->flags;
			s.send_ts = d->send_ts_ns;
		}
		if (!e->failed && p64 >= e->fail_after && (d->flags & SDP_RING_TXD_F_NOTIFY)) {
			st = DOCA_ERROR_IO_FAILED;
			e->failed = true;
		}
		sdp_ring_tx_complete(e->ring, pos + i, st, 0);
		e->done++;
		*busy = 1;
	}
}

static void *engine_main(void *arg)
{
	struct engine *en = (struct engine *)arg;

	while (!en->stop.load()) {
		int busy = 0;

		for (int i = 0; i < 2; i++)
			if (en->tx[i].ring != nullptr)
				tx_engine_step(&en->tx[i], &busy);
		if (!busy)
			usleep(5);
	}
	return nullptr;
}

/* ---- host: setup --------------------------------------------------------------------------- */

static void *mapped(size_t size, uint64_t *dev)
{
	void *p = nullptr, *d = nullptr;

	CHECK_CUDA(cudaHostAlloc(&p, size, cudaHostAllocMapped));
	std::memset(p, 0, size);
	CHECK_CUDA(cudaHostGetDevicePointer(&d, p, 0));
	*dev = (uint64_t)(uintptr_t)d;
	return p;
}

struct rxq_setup {
	void *mem;
	uint64_t mem_dev;
	uint64_t size;
	struct sdp_ring_hdr *ring;
	struct doca_gpu_eth_rxq *h;
	uint64_t h_dev;
};

static void rxq_init(struct rxq_setup *s, uint32_t mode, uint32_t start)
{
	EXPECT(sdp_ring_rx_init(s->mem, s->size, RX_SLOTS, SLOT_SIZE, mode, start, &s->ring) ==
		       DOCA_SUCCESS,
	       "rx ring init");
	std::memset(s->h, 0, sizeof(*s->h));
	s->h->magic = SDP_GPU_ETH_RXQ_MAGIC;
	s->h->flags = mode == SDP_RING_MODE_BACKPRESSURE ? SDP_GPU_ETH_RXQ_F_BACKPRESSURE : 0;
	s->h->ring = s->mem_dev;
	s->h->pkt_addr = s->mem_dev + s->ring->slot_off;
	s->h->pkt_num = RX_SLOTS;
	s->h->max_pkt_sz = SLOT_SIZE;
	s->h->pkt_mkey = 0x5d0000aa;
}

static struct rx_params rx_params_of(const struct rxq_setup *s, uint32_t total, uint32_t max,
				     uint64_t timeout_ns, uint32_t cyclic, uint32_t slow)
{
	struct rx_params p;

	p.rxq = (struct doca_gpu_eth_rxq *)(uintptr_t)s->h_dev;
	p.pkt_base = s->h->pkt_addr;
	p.nb = RX_SLOTS;
	p.slot_size = SLOT_SIZE;
	p.total = total;
	p.max = max;
	p.timeout_ns = timeout_ns;
	p.cyclic = cyclic;
	p.slow = slow;
	return p;
}

static void push(struct sdp_ring_hdr *ring, uint32_t seq, bool retry)
{
	uint8_t f[SLOT_SIZE];
	double deadline = host_now_s() + 30.0;

	frame_fill(f, seq);
	while (!sdp_ring_rx_push(ring, f, frame_len(seq), frame_len(seq), 0, TS_BASE + seq) &&
	       retry && host_now_s() < deadline)
		usleep(2);
}

static void wait_word(volatile unsigned int *w, double limit_s)
{
	double deadline = host_now_s() + limit_s;

	while (*w == 0 && host_now_s() < deadline)
		usleep(100);
}

static void test_rx_exact(struct rxq_setup *s, struct rx_result *res, uint64_t res_dev)
{
	std::memset(res, 0, sizeof(*res));
	rxq_init(s, SDP_RING_MODE_BACKPRESSURE, 0);
	for (uint32_t seq = 0; seq < 40; seq++)
		push(s->ring, seq, false);
	rx_exact<<<1, 1>>>(rx_params_of(s, 40, 16, 1000000, 0, 0), (struct rx_result *)res_dev);
	CHECK_CUDA(cudaGetLastError());
	wait_word(&res->batches, 10.0);
	for (uint32_t seq = 40; seq < 80; seq++)
		push(s->ring, seq, true);
	__atomic_store_n(&res->host_done, 1u, __ATOMIC_RELEASE);
	CHECK_CUDA(cudaDeviceSynchronize());
	std::printf("rx exact: counts %u %u %u %u, empty(timeout 0) %u in %.1f ms, max 0 -> %u in "
		    "%.1f ms\n",
		    res->counts[0], res->counts[1], res->counts[2], res->counts[3], res->counts[4],
		    res->wait_ns[0] / 1e6, res->counts[5], res->wait_ns[1] / 1e6);
	EXPECT(res->counts[0] == 16 && res->counts[1] == 16 && res->counts[2] == 8 &&
		       res->counts[3] == 0,
	       "thread scope recv(max 16) of 40 frames: %u %u %u %u, want 16 16 8 0",
	       res->counts[0], res->counts[1], res->counts[2], res->counts[3]);
	EXPECT(res->counts[4] == 0 && res->wait_ns[0] >= SDP_GPU_ETH_MAX_WAIT_NS - 1000000 &&
		       res->wait_ns[0] < SDP_GPU_ETH_MAX_WAIT_NS * 3,
	       "timeout 0 on an empty ring: %u packets after %llu ns", res->counts[4],
	       res->wait_ns[0]);
	EXPECT(res->counts[5] == 40 && res->wait_ns[1] < 1000000000ull,
	       "max 0 with 40 pending: %u packets after %llu ns", res->counts[5], res->wait_ns[1]);
	EXPECT(res->bad_status == 0 && res->bad_attr == 0 && res->bad_acc == 0,
	       "exact: status %u attr %u first-idx %u", res->bad_status, res->bad_attr,
	       res->bad_acc);
}

template <enum doca_gpu_dev_eth_exec_scope scope>
static void test_rx_stream(struct rxq_setup *s, struct rx_result *res, uint64_t res_dev,
			   uint32_t threads, bool cyclic, const char *name)
{
	struct sdp_ring_counters rc;
	uint32_t max = cyclic ? 32 : (scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD ? 7 : MAX_BATCH);

	std::memset(res, 0, sizeof(*res));
	/* start near the 32-bit wrap so positions cross it */
	rxq_init(s, cyclic ? SDP_RING_MODE_CYCLIC : SDP_RING_MODE_BACKPRESSURE, UINT32_MAX - 3000);
	rx_stream<scope><<<1, threads>>>(
		rx_params_of(s, STREAM_FRAMES, max, 200000, cyclic, cyclic ? 100000 : 0),
		(struct rx_result *)res_dev);
	CHECK_CUDA(cudaGetLastError());
	for (uint32_t seq = 0; seq < STREAM_FRAMES; seq++) {
		push(s->ring, seq, !cyclic);
		if (cyclic && seq % 32 == 31)
			usleep(5);
	}
	__atomic_store_n(&res->host_done, 1u, __ATOMIC_RELEASE);
	CHECK_CUDA(cudaDeviceSynchronize());
	sdp_ring_rx_counters(s->ring, &rc);
	std::printf("rx %s: received %u in %u batches (status %u, >max %u, seq %u, attr %u, "
		    "accessors %u, payload %u, gaps %u, timed out %u); ring: packets %llu "
		    "overwrites %llu drops %llu\n",
		    name, res->received, res->batches, res->bad_status, res->too_many, res->bad_seq,
		    res->bad_attr, res->bad_acc, res->bad_payload, res->gaps, res->timed_out,
		    (unsigned long long)rc.packets, (unsigned long long)rc.overwrites,
		    (unsigned long long)rc.drops);
	EXPECT(res->bad_status == 0 && res->too_many == 0 && res->bad_seq == 0 &&
		       res->bad_attr == 0 && res->bad_acc == 0 && res->bad_payload == 0 &&
		       res->timed_out == 0,
	       "rx %s: the GPU saw errors (counts above)", name);
	if (!cyclic) {
		EXPECT(res->received == STREAM_FRAMES && rc.overwrites == 0,
		       "rx %s: %u received of %u", name, res->received, STREAM_FRAMES);
	} else {
		EXPECT(res->received + rc.overwrites + rc.drops == STREAM_FRAMES &&
			       res->gaps == rc.overwrites + rc.drops && res->received > 0,
		       "rx %s: received %u + overwritten %llu + dropped %llu != %u or gaps %u",
		       name, res->received, (unsigned long long)rc.overwrites,
		       (unsigned long long)rc.drops, STREAM_FRAMES, res->gaps);
	}
}

static void test_rx(void)
{
	struct rxq_setup s;
	struct rx_result *res;
	uint64_t res_dev;

	EXPECT(sdp_ring_rx_mem_size(RX_SLOTS, SLOT_SIZE, &s.size) == DOCA_SUCCESS, "rx size");
	s.mem = mapped(s.size, &s.mem_dev);
	s.h = (struct doca_gpu_eth_rxq *)mapped(sizeof(*s.h), &s.h_dev);
	res = (struct rx_result *)mapped(sizeof(*res), &res_dev);

	test_rx_exact(&s, res, res_dev);
	test_rx_stream<DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>(&s, res, res_dev, 1, false,
							    "thread BP");
	test_rx_stream<DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP>(&s, res, res_dev, 32, false, "warp BP");
	test_rx_stream<DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK>(&s, res, res_dev, 128, false,
							   "block BP");
	test_rx_stream<DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>(&s, res, res_dev, 1, true,
							    "thread CYCLIC");
	test_rx_stream<DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP>(&s, res, res_dev, 32, true,
							  "warp CYCLIC");
	test_rx_stream<DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK>(&s, res, res_dev, 128, true,
							   "block CYCLIC");

	std::memset(res, 0, sizeof(*res));
	s.h->magic = 0;
	rx_invalid<<<1, 64>>>((struct doca_gpu_eth_rxq *)(uintptr_t)s.h_dev,
			      (struct rx_result *)res_dev);
	CHECK_CUDA(cudaDeviceSynchronize());
	EXPECT(res->counts[0] == DOCA_ERROR_INVALID_VALUE &&
		       res->counts[1] == DOCA_ERROR_INVALID_VALUE && res->counts[2] == 0,
	       "stopped / NULL handle: %u %u (n %u)", res->counts[0], res->counts[1],
	       res->counts[2]);

	cudaFreeHost(res);
	cudaFreeHost(s.h);
	cudaFreeHost(s.mem);
}

/* ---- host: TX ------------------------------------------------------------------------------ */

static uint64_t host_bswap64(uint64_t v)
{
	return __builtin_bswap64(v);
}

struct txq_setup {
	void *mem;
	uint64_t mem_dev;
	struct doca_gpu_eth_txq *h;
	uint64_t h_dev;
};

static void txq_init(struct txq_setup *s, struct tx_engine *e, uint32_t start, uint32_t flags,
		     uint64_t frames_dev, uint8_t *frames_host, size_t nframes)
{
	uint64_t size = 0;

	EXPECT(sdp_ring_tx_mem_size(TX_DESC, &size) == DOCA_SUCCESS, "tx size");
	s->mem = mapped(size, &s->mem_dev);
	s->h = (struct doca_gpu_eth_txq *)mapped(sizeof(*s->h) * 2, &s->h_dev);
	EXPECT(sdp_ring_tx_init(s->mem, size, TX_DESC, start, &e->ring) == DOCA_SUCCESS,
	       "tx ring init");
	s->h->magic = SDP_GPU_ETH_TXQ_MAGIC;
	s->h->flags = flags;
	s->h->ring = s->mem_dev;
	s->h->nb_desc = TX_DESC;
	s->h->desc_mask = TX_DESC - 1;
	s->h->tx_rsvd = start;
	s->h->tx_ready = start;
	/* the second handle: the same ring without wait-on-time */
	s->h[1] = s->h[0];
	s->h[1].flags &= ~SDP_GPU_ETH_TXQ_F_WAIT_ON_TIME;
	e->start = start;
	e->frames_dev = frames_dev;
	e->frames_host = frames_host;
	e->done = 0;
	e->seen.assign(nframes, tx_seen{});
	e->bad_user = e->bad_addr = 0;
	e->fail_after = ~0ull;
	e->failed = true;
}

static void check_tx_run(struct tx_engine *e, struct tx_result *res, uint32_t run, const char *name)
{
	uint32_t bad = 0;

	for (uint32_t id = 0; id < TX_PER_RUN; id++) {
		const tx_seen &s = e->seen[run * TX_PER_RUN + id];
		uint32_t want_flags =
			SDP_RING_TXD_F_L3_CSUM |
			(id % TX_THREADS == TX_THREADS - 1 ? SDP_RING_TXD_F_NOTIFY : 0);

		if (s.count != 1 || (res->tickets[id] != ~0ull && s.pos != res->tickets[id]) ||
		    s.len != TX_FRAME - (id % 4u) || s.flags != want_flags || s.send_ts != 0) {
			if (bad++ < 5)
				std::fprintf(
					stderr,
					"FAIL tx %s id %u: seen %u times at %llu (ticket %llu) "
					"len %u flags 0x%x ts %llu\n",
					name, id, s.count, (unsigned long long)s.pos,
					(unsigned long long)res->tickets[id], s.len, s.flags,
					(unsigned long long)s.send_ts);
		}
	}
	std::printf("tx %s: %u packets, %u completions, %u unexpected, %u bad status, %u bad "
		    "tickets, %u bad packets\n",
		    name, TX_PER_RUN, res->completions, res->unexpected, res->bad_status,
		    res->bad_ticket, bad);
	EXPECT(bad == 0 && res->bad_status == 0 && res->bad_ticket == 0 &&
		       res->completions == TX_BLOCKS * TX_ITERS &&
		       res->unexpected == (run == 0 ? 1u : 0u),
	       "tx %s: wrong packets or completions", name);
}

template <enum doca_gpu_dev_eth_exec_scope scope>
static void tx_run(struct txq_setup *s, struct tx_engine *e, struct tx_result *res,
		   uint64_t res_dev, uint32_t run, const char *name)
{
	std::memset(res, 0, sizeof(*res));
	tx_send<scope><<<TX_BLOCKS, TX_THREADS>>>(
		(struct doca_gpu_eth_txq *)(uintptr_t)s->h_dev,
		e->frames_dev + (uint64_t)run * TX_PER_RUN * TX_FRAME, (struct tx_result *)res_dev);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaDeviceSynchronize());
	check_tx_run(e, res, run, name);
}

static void test_tx(void)
{
	const size_t nframes = (size_t)TX_PER_RUN * TX_RUNS + 1;
	struct txq_setup s, ll;
	struct engine en;
	struct tx_result *res;
	uint64_t res_dev, frames_dev;
	uint8_t *frames;
	pthread_t th;
	const uint64_t when = 1234567890123456789ull;

	frames = (uint8_t *)mapped(nframes * TX_FRAME, &frames_dev);
	for (uint32_t id = 0; id < nframes; id++)
		std::memcpy(frames + (size_t)id * TX_FRAME, &id, 4);
	res = (struct tx_result *)mapped(sizeof(*res), &res_dev);
	en.stop.store(0);
	txq_init(&s, &en.tx[0], UINT32_MAX - 1000,
		 SDP_GPU_ETH_TXQ_F_L3_CSUM | SDP_GPU_ETH_TXQ_F_WAIT_ON_TIME, frames_dev, frames,
		 nframes);
	txq_init(&ll, &en.tx[1], 0, 0, frames_dev, frames, nframes);
	/* run 0 (thread scope): one NOTIFY descriptor in the middle fails (one error completion) */
	en.tx[0].fail_after = en.tx[0].start + TX_PER_RUN / 2;
	en.tx[0].failed = false;
	if (pthread_create(&th, nullptr, engine_main, &en) != 0) {
		std::fprintf(stderr, "FAIL: engine thread\n");
		std::exit(1);
	}

	tx_run<DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>(&s, &en.tx[0], res, res_dev, 0, "thread");
	tx_run<DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP>(&s, &en.tx[0], res, res_dev, 1, "warp");
	tx_run<DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK>(&s, &en.tx[0], res, res_dev, 2, "block");
	/* DOCA 2.x: strong enqueue, commit_strong, push */
	std::memset(res, 0, sizeof(*res));
	tx_send_v2<<<TX_BLOCKS, TX_THREADS>>>((struct doca_gpu_eth_txq *)(uintptr_t)s.h_dev,
					      frames_dev + (uint64_t)3 * TX_PER_RUN * TX_FRAME,
					      (struct tx_result *)res_dev);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaDeviceSynchronize());
	check_tx_run(&en.tx[0], res, 3, "2.x strong enqueue");

	/* wait_send + calculate_timestamp, NB polls */
	std::memset(res, 0, sizeof(*res));
	tx_misc<<<1, 1>>>((struct doca_gpu_eth_txq *)(uintptr_t)s.h_dev,
			  (struct doca_gpu_eth_txq *)(uintptr_t)(s.h_dev + sizeof(*s.h)),
			  frames_dev + (nframes - 1) * TX_FRAME, when, (struct tx_result *)res_dev);
	CHECK_CUDA(cudaDeviceSynchronize());
	{
		uint64_t want =
			host_bswap64((when % 1000000000ull) | ((when / 1000000000ull) << 32));
		const tx_seen &w = en.tx[0].seen[nframes - 1];

		std::printf("tx wait_send: status %u value 0x%llx ticket %llu seen %u ts %llu; "
			    "no wait-on-time: status %u ticket 0x%llx; NB poll %u (%u done), "
			    "NB poll_at %u\n",
			    res->wot_status, res->wot_value, res->wot_ticket, w.count,
			    (unsigned long long)w.send_ts, res->nowot_status, res->nowot_ticket,
			    res->nb_status, res->nb_completed, res->at_nb_status);
		EXPECT(res->wot_status == DOCA_SUCCESS && res->wot_value == want,
		       "calculate_timestamp");
		EXPECT(w.count == 1 && w.send_ts == when && w.pos == res->wot_ticket &&
			       (w.flags & SDP_RING_TXD_F_NOTIFY) && res->bad_status == 0,
		       "wait_send descriptor");
		EXPECT(res->nowot_status == DOCA_ERROR_NOT_SUPPORTED && res->nowot_ticket == ~0ull,
		       "no wait-on-time");
		EXPECT(res->nb_status == DOCA_SUCCESS && res->nb_completed == 0, "NB poll");
		EXPECT(res->at_nb_status == DOCA_ERROR_AGAIN, "NB poll_completion_at");
	}

	/* the low-level path on the second queue */
	std::memset(res, 0, sizeof(*res));
	tx_lowlevel<<<1, LL_THREADS>>>((struct doca_gpu_eth_txq *)(uintptr_t)ll.h_dev, frames_dev,
				       (struct tx_result *)res_dev);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaDeviceSynchronize());
	{
		uint32_t bad = 0;

		for (uint32_t id = 0; id < LL_THREADS * LL_ROUNDS; id++) {
			const tx_seen &t = en.tx[1].seen[id];
			uint32_t want_flags =
				id % LL_THREADS == LL_THREADS - 1 ? SDP_RING_TXD_F_NOTIFY : 0;

			if (t.count != 1 || t.pos != id || t.len != TX_FRAME - (id % 4u) ||
			    t.flags != want_flags)
				bad++;
		}
		std::printf("tx low level: %llu descriptors, %u rounds completed, %u errors, %u "
			    "bad packets\n",
			    (unsigned long long)en.tx[1].done, res->ll_done, res->ll_bad, bad);
		EXPECT(bad == 0 && res->ll_bad == 0 && res->ll_done == LL_ROUNDS &&
			       en.tx[1].done == LL_THREADS * LL_ROUNDS,
		       "low-level path");
	}
	en.stop.store(1);
	pthread_join(th, nullptr);
	for (int i = 0; i < 2; i++)
		EXPECT(en.tx[i].bad_user == 0 && en.tx[i].bad_addr == 0,
		       "queue %d: %u descriptors with a wrong user word, %u with a wrong address",
		       i, en.tx[i].bad_user, en.tx[i].bad_addr);
	EXPECT(s.h->tx_lost == 0 && ll.h->tx_lost == 0, "tx_lost %llu / %llu",
	       (unsigned long long)s.h->tx_lost, (unsigned long long)ll.h->tx_lost);

	cudaFreeHost(res);
	cudaFreeHost(frames);
	cudaFreeHost(s.h);
	cudaFreeHost(s.mem);
	cudaFreeHost(ll.h);
	cudaFreeHost(ll.mem);
}

int main(void)
{
	int ndev = 0;
	cudaError_t err;

	setvbuf(stdout, nullptr, _IONBF, 0);
	gpu_check_require_driver();
	err = cudaGetDeviceCount(&ndev);
	CHECK_CUDA(err);
	if (ndev == 0) {
		std::fprintf(stderr, "FAIL: /dev/nvidiactl exists but no CUDA device\n");
		return 1;
	}
	test_rx();
	test_tx();
	std::printf("test_dev_eth_api: %s (%d failures)\n", g_fails ? "FAIL" : "PASS", g_fails);
	return g_fails ? 1 : 0;
}
