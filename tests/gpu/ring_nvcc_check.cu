/*
 * The ring format of include/softdpu/sdp_ring.h across the CPU/GPU boundary: both rings live in pinned
 * host memory mapped into the GPU (the CPU_GPU memory of GPUNetIO). The host plays the engine:
 * it pushes sequence-numbered, checksummed frames into a back-pressure RX ring and completes the
 * descriptors of a TX ring. A one-thread kernel plays the queue user: it receives every frame,
 * checks its order and checksum, posts one TX descriptor per frame (NOTIFY on every 8th and the
 * last), polls the completions, and reports what it saw. Then the same in CYCLIC mode with a
 * deliberately slow kernel: every frame it gets is intact and in order, and received +
 * overwritten + dropped equals what the host pushed. Both sides bound their waits.
 *
 * Building this file at all proves the header compiles with nvcc for the device; running it
 * proves the release/acquire pairs hold between a CPU thread and a GPU at system scope. Exits
 * 77 (skip) without an NVIDIA driver or GPU.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <cuda_runtime.h>
#include <unistd.h>

#include "softdpu/sdp_ring.h"

#include "gpu_check.h"

#define FRAMES 20000u
#define RX_SLOTS 64u
#define SLOT_SIZE 256u
#define TX_DESC 32u
#define NOTIFY_EVERY 8u
#define TIMEOUT_NS 30000000000ull /* 30 s for each side */
#define FRAME_HDR 12u

struct result {
	unsigned int received;
	unsigned int bad_order;
	unsigned int bad_sum;
	unsigned int completions;
	unsigned int bad_cmpl;
	unsigned int timed_out;
	unsigned int gaps;	/* CYCLIC: sequence numbers skipped */
	unsigned int host_done; /* CYCLIC: written by the host when it has pushed everything */
};

/* Frame: seq (4 bytes), length (4), checksum (4) of the bytes after the header, payload. */
__host__ __device__ static uint32_t frame_sum(const uint8_t *f, uint32_t len)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = FRAME_HDR; i < len; i++)
		h = (h ^ f[i]) * 16777619u;
	return h;
}

static uint32_t frame_len(uint32_t seq)
{
	return FRAME_HDR + (seq * 7919u) % (SLOT_SIZE - FRAME_HDR + 1);
}

static void frame_fill(uint8_t *f, uint32_t seq, uint32_t len)
{
	uint32_t sum;

	std::memcpy(f, &seq, 4);
	std::memcpy(f + 4, &len, 4);
	for (uint32_t i = FRAME_HDR; i < len; i++)
		f[i] = (uint8_t)(seq * 131u + i);
	sum = frame_sum(f, len);
	std::memcpy(f + 8, &sum, 4);
}

__device__ static uint64_t gpu_now_ns(void)
{
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__device__ static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Drain TX completions into res; returns how many. */
__device__ static uint32_t gpu_poll_cmpl(struct sdp_ring_tx_hdr *tx, struct result *res,
					 uint32_t *next_user)
{
	struct sdp_ring_txc c[4];
	uint32_t n = sdp_ring_tx_poll_cmpl(tx, c, 4);

	for (uint32_t i = 0; i < n; i++) {
		if (c[i].status != DOCA_SUCCESS || c[i].user < *next_user ||
		    (c[i].user % NOTIFY_EVERY != NOTIFY_EVERY - 1 && c[i].user != FRAMES - 1))
			res->bad_cmpl++;
		*next_user = (uint32_t)c[i].user + 1;
	}
	res->completions += n;
	return n;
}

__global__ void ring_consumer(struct sdp_ring_hdr *rx, struct sdp_ring_tx_hdr *tx,
			      struct result *res)
{
	uint64_t deadline = gpu_now_ns() + TIMEOUT_NS;
	uint32_t next = 0, next_user = 0;
	uint32_t want_cmpl = (FRAMES + NOTIFY_EVERY - 1) / NOTIFY_EVERY;

	if (threadIdx.x != 0 || blockIdx.x != 0)
		return;
	while (next < FRAMES || res->completions < want_cmpl) {
		uint32_t first = 0, n;

		if (gpu_now_ns() > deadline) {
			res->timed_out = 1;
			break;
		}
		gpu_poll_cmpl(tx, res, &next_user);
		n = next < FRAMES ? sdp_ring_rx_poll(rx, 8, 1000, &first) : 0;
		for (uint32_t i = 0; i < n; i++) {
			const struct sdp_ring_cqe *cqe = sdp_ring_rx_cqe(rx, first + i);
			const uint8_t *f = (const uint8_t *)sdp_ring_rx_slot(rx, first + i);
			uint32_t seq = rd32(f);
			uint32_t dpos;

			if (seq != next)
				res->bad_order++;
			if (rd32(f + 4) != cqe->len || rd32(f + 8) != frame_sum(f, cqe->len))
				res->bad_sum++;
			next = seq + 1;
			res->received++;
			/* One descriptor per frame; wait (bounded) for room. */
			while (sdp_ring_tx_reserve(tx, 1, &dpos) != 1) {
				if (gpu_now_ns() > deadline) {
					res->timed_out = 1;
					return;
				}
				if (gpu_poll_cmpl(tx, res, &next_user) == 0)
					__nanosleep(1000);
			}
			struct sdp_ring_txd *d = sdp_ring_tx_desc(tx, dpos);

			d->addr = (uint64_t)(uintptr_t)f;
			d->len = cqe->len;
			d->flags = (seq % NOTIFY_EVERY == NOTIFY_EVERY - 1 || seq == FRAMES - 1) ?
					   SDP_RING_TXD_F_NOTIFY :
					   0;
			d->send_ts_ns = 0;
			d->user = seq;
			sdp_ring_tx_submit(tx, dpos + 1);
		}
		if (n > 0)
			sdp_ring_rx_release(rx, sdp_ring_rx_claimed(rx));
		else
			__nanosleep(2000);
	}
}

/*
 * CYCLIC: a deliberately slow receiver. Every frame it gets must be intact and in order; what it
 * misses the host's counters must explain (overwritten or dropped).
 */
__global__ void ring_cyclic_consumer(struct sdp_ring_hdr *rx, struct result *res)
{
	uint64_t deadline = gpu_now_ns() + TIMEOUT_NS;
	uint32_t next = 0, calls = 0;

	if (threadIdx.x != 0 || blockIdx.x != 0)
		return;
	for (;;) {
		uint32_t first = 0, n = sdp_ring_rx_poll(rx, 16, 1000, &first);

		for (uint32_t i = 0; i < n; i++) {
			const struct sdp_ring_cqe *cqe = sdp_ring_rx_cqe(rx, first + i);
			const uint8_t *f = (const uint8_t *)sdp_ring_rx_slot(rx, first + i);
			uint32_t seq = rd32(f);

			if (rd32(f + 4) != cqe->len || rd32(f + 8) != frame_sum(f, cqe->len)) {
				res->bad_sum++;
				continue;
			}
			if (seq < next) {
				res->bad_order++;
				continue;
			}
			res->gaps += seq - next;
			next = seq + 1;
			res->received++;
		}
		if (n > 0) {
			sdp_ring_rx_release(rx, sdp_ring_rx_claimed(rx));
			if (++calls % 4 == 0)
				__nanosleep(50000);
			continue;
		}
		if (SDP_ATOMIC_LOAD_ACQ(&res->host_done) &&
		    SDP_ATOMIC_LOAD_ACQ(&rx->prod) == sdp_ring_rx_claimed(rx))
			break;
		if (gpu_now_ns() > deadline) {
			res->timed_out = 1;
			break;
		}
		__nanosleep(2000);
	}
	res->gaps += FRAMES - next;
}

/* The CYCLIC run: push flat out (no retry), then check that every frame is accounted for. */
static int run_cyclic(void *rx_mem, uint64_t rx_size, struct result *res, void *res_dev)
{
	struct sdp_ring_hdr *rx = nullptr;
	struct sdp_ring_counters rc;
	uint8_t frame[SLOT_SIZE];
	void *rx_dev = nullptr;
	int fails = 0;

	std::memset(res, 0, sizeof(*res));
	if (sdp_ring_rx_init(rx_mem, rx_size, RX_SLOTS, SLOT_SIZE, SDP_RING_MODE_CYCLIC,
			     UINT32_MAX - 7000, &rx) != DOCA_SUCCESS) {
		std::fprintf(stderr, "FAIL: CYCLIC ring init\n");
		return 1;
	}
	CHECK_CUDA(cudaHostGetDevicePointer(&rx_dev, rx_mem, 0));
	ring_cyclic_consumer<<<1, 32>>>((struct sdp_ring_hdr *)rx_dev, (struct result *)res_dev);
	CHECK_CUDA(cudaGetLastError());
	for (uint32_t seq = 0; seq < FRAMES; seq++) {
		uint32_t len = frame_len(seq);

		frame_fill(frame, seq, len);
		sdp_ring_rx_push(rx, frame, len, len, 0, seq);
		if (seq % 64 == 63)
			usleep(10);
	}
	__atomic_store_n(&res->host_done, 1u, __ATOMIC_RELEASE);
	CHECK_CUDA(cudaDeviceSynchronize());
	sdp_ring_rx_counters(rx, &rc);
	std::printf("ring_nvcc_check CYCLIC: GPU received %u (bad order %u, bad checksum %u, gaps "
		    "%u); overwritten %llu, dropped %llu, ring-full %llu\n",
		    res->received, res->bad_order, res->bad_sum, res->gaps,
		    (unsigned long long)rc.overwrites, (unsigned long long)rc.drops,
		    (unsigned long long)rc.ring_full);
	if (res->timed_out || res->bad_order || res->bad_sum) {
		std::fprintf(stderr, "FAIL: CYCLIC: timed out %u or torn/out-of-order frames\n",
			     res->timed_out);
		fails++;
	}
	if (res->received + rc.overwrites + rc.drops != FRAMES ||
	    res->gaps != rc.overwrites + rc.drops || res->received == 0) {
		std::fprintf(stderr, "FAIL: CYCLIC: received + overwritten + dropped != %u sent\n",
			     FRAMES);
		fails++;
	}
	return fails;
}

static int skip(const char *why)
{
	std::printf("SKIP: %s\n", why);
	return 77;
}

int main(void)
{
	struct sdp_ring_hdr *rx = nullptr;
	struct sdp_ring_tx_hdr *tx = nullptr;
	struct result *res = nullptr;
	uint64_t rx_size = 0, tx_size = 0;
	void *rx_mem = nullptr, *tx_mem = nullptr;
	struct sdp_ring_counters rc, tc;
	uint8_t frame[SLOT_SIZE];
	uint32_t seq = 0, done_tx = 0;
	double deadline;
	int ndev = 0, fails = 0;
	cudaError_t err;

	gpu_check_require_driver();
	err = cudaGetDeviceCount(&ndev);
	if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver || ndev == 0)
		return skip("the CUDA runtime sees no usable GPU");
	CHECK_CUDA(err);

	if (sdp_ring_rx_mem_size(RX_SLOTS, SLOT_SIZE, &rx_size) != DOCA_SUCCESS ||
	    sdp_ring_tx_mem_size(TX_DESC, &tx_size) != DOCA_SUCCESS) {
		std::fprintf(stderr, "FAIL: ring sizes\n");
		return 1;
	}
	CHECK_CUDA(cudaHostAlloc(&rx_mem, rx_size, cudaHostAllocMapped));
	CHECK_CUDA(cudaHostAlloc(&tx_mem, tx_size, cudaHostAllocMapped));
	CHECK_CUDA(cudaHostAlloc((void **)&res, sizeof(*res), cudaHostAllocMapped));
	std::memset(res, 0, sizeof(*res));
	/* Start near the 32-bit wrap so the GPU crosses it. */
	if (sdp_ring_rx_init(rx_mem, rx_size, RX_SLOTS, SLOT_SIZE, SDP_RING_MODE_BACKPRESSURE,
			     UINT32_MAX - 5000, &rx) != DOCA_SUCCESS ||
	    sdp_ring_tx_init(tx_mem, tx_size, TX_DESC, UINT32_MAX - 3000, &tx) != DOCA_SUCCESS) {
		std::fprintf(stderr, "FAIL: ring init\n");
		return 1;
	}

	void *rx_dev = nullptr, *tx_dev = nullptr, *res_dev = nullptr;

	CHECK_CUDA(cudaHostGetDevicePointer(&rx_dev, rx_mem, 0));
	CHECK_CUDA(cudaHostGetDevicePointer(&tx_dev, tx_mem, 0));
	CHECK_CUDA(cudaHostGetDevicePointer(&res_dev, res, 0));
	ring_consumer<<<1, 32>>>((struct sdp_ring_hdr *)rx_dev, (struct sdp_ring_tx_hdr *)tx_dev,
				 (struct result *)res_dev);
	CHECK_CUDA(cudaGetLastError());

	/* The engine: push frames (retry a dropped one after a pause), complete descriptors. */
	deadline = host_now_s() + 30.0;
	while ((seq < FRAMES || done_tx < FRAMES) && host_now_s() < deadline) {
		int busy = 0;
		uint32_t pos, n;

		if (seq < FRAMES) {
			uint32_t len = frame_len(seq);

			frame_fill(frame, seq, len);
			if (sdp_ring_rx_push(rx, frame, len, len, 0, seq)) {
				seq++;
				busy = 1;
			}
		}
		n = sdp_ring_tx_peek(tx, 16, &pos);
		for (uint32_t i = 0; i < n; i++) {
			const struct sdp_ring_txd *d = sdp_ring_tx_desc(tx, pos + i);

			if (d->user != done_tx && fails++ < 5)
				std::fprintf(stderr,
					     "FAIL descriptor for frame %llu, expected %u\n",
					     (unsigned long long)d->user, done_tx);
			sdp_ring_tx_complete(tx, pos + i, DOCA_SUCCESS, 0);
			done_tx++;
			busy = 1;
		}
		if (!busy)
			usleep(20);
	}
	CHECK_CUDA(cudaDeviceSynchronize());

	sdp_ring_rx_counters(rx, &rc);
	sdp_ring_tx_counters(tx, &tc);
	std::printf("ring_nvcc_check: GPU received %u frames (bad order %u, bad checksum %u), "
		    "%u completions (bad %u); RX drops %llu ring-full %llu; TX sent %llu "
		    "ring-full %llu\n",
		    res->received, res->bad_order, res->bad_sum, res->completions, res->bad_cmpl,
		    (unsigned long long)rc.drops, (unsigned long long)rc.ring_full,
		    (unsigned long long)tc.packets, (unsigned long long)tc.ring_full);
	if (res->timed_out || seq != FRAMES || done_tx != FRAMES) {
		std::fprintf(stderr, "FAIL: timed out (GPU %u, host pushed %u completed %u)\n",
			     res->timed_out, seq, done_tx);
		fails++;
	}
	if (res->received != FRAMES || res->bad_order || res->bad_sum || res->bad_cmpl ||
	    res->completions != (FRAMES + NOTIFY_EVERY - 1) / NOTIFY_EVERY) {
		std::fprintf(stderr, "FAIL: GPU side saw errors (see the counts above)\n");
		fails++;
	}
	if (rc.packets != FRAMES || tc.packets != FRAMES || rc.overwrites != 0) {
		std::fprintf(stderr,
			     "FAIL: counters: RX packets %llu, TX packets %llu, overwrites "
			     "%llu\n",
			     (unsigned long long)rc.packets, (unsigned long long)tc.packets,
			     (unsigned long long)rc.overwrites);
		fails++;
	}
	fails += run_cyclic(rx_mem, rx_size, res, res_dev);
	cudaFreeHost(res);
	cudaFreeHost(tx_mem);
	cudaFreeHost(rx_mem);
	return fails ? 1 : 0;
}
