/*
 * bench: the persistent receive kernel of gpunetio_rx and gpunetio_multi, and what it shares
 * with the peers' kernels (consume: read every byte of every frame, check the gen magic and
 * that sequence numbers only grow, record the latency; the per-block results).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef GPUNETIO_RX_KERNEL_CUH_
#define GPUNETIO_RX_KERNEL_CUH_

#include "softdpu/sdp_gpu_eth.h"
#include "softdpu/sdp_ring.h"

#include "gpunetio_bench.cuh"

#define BATCH 256 /* frames one block takes at once */
#define NTHR 256  /* threads per block */

struct qres {
	unsigned long long frames, bytes, gaps, ooo, bad, neg, polls;
	unsigned long long last_seq;
	unsigned int started;
	unsigned int xsum;
};

struct fdesc {
	uint64_t addr;
	uint64_t ts;
	uint32_t len;
	uint32_t pad;
};

/* The block says it runs (the host starts the window only once every block does). */
static __device__ void say_started(uint32_t *started)
{
	if (threadIdx.x == 0) {
		*(volatile uint32_t *)&started[blockIdx.x] = 1;
		__threadfence_system();
	}
}

/*
 * The block consumes n frames described in d (shared): groups of G lanes read a frame each in
 * 16-byte loads, XOR them (so the loads happen), lane 3 of the group extracts the seq and the
 * magic's tail, the leader records the latency; then the order check over the batch.
 */
static __device__ void consume(const struct fdesc *d, uint32_t n, struct qres *q,
			       unsigned int *shist, bool count, int64_t off, uint64_t *s_seq,
			       unsigned long long *s_acc)
{
	const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
	uint32_t need = (d[0].len + 15) / 16, G = 4;

	while (G < need && G < 32)
		G <<= 1;
	const uint32_t fpw = 32 / G, gl = lane % G, gbase = lane - gl;

	for (uint32_t base = warp * fpw; base < n; base += nwarps * fpw) {
		uint32_t i = base + lane / G, x = 0, b50 = 0;
		bool act = i < n;
		uint64_t seq = 0;

		if (act) {
			const uint4 *v = (const uint4 *)d[i].addr;
			uint32_t len = d[i].len, nv = len / 16;

			for (uint32_t k = gl; k < nv; k += G) {
				uint4 w = v[k];

				x ^= w.x ^ w.y ^ w.z ^ w.w;
				if (k == 3) {
					b50 = w.x;
					seq = (uint64_t)__byte_perm(w.x, w.y, 0x2345) << 32 |
					      __byte_perm(w.y, w.z, 0x2345);
				}
			}
			for (uint32_t k = nv * 16 + gl; k < len; k += G)
				x ^= ((const uint8_t *)v)[k];
		}
		for (uint32_t o = G / 2; o > 0; o >>= 1)
			x ^= __shfl_xor_sync(0xffffffffu, x, o);
		seq = __shfl_sync(0xffffffffu, seq, gbase + 3);
		b50 = __shfl_sync(0xffffffffu, b50, gbase + 3);
		if (act && gl == 0) {
			/* bytes 48, 49: the last two of the magic "SDPG" */
			if ((b50 & 0xffffu) != 0x4750u || d[i].len < 60)
				atomicAdd(&s_acc[2], 1ull);
			s_seq[i] = seq;
			if (count) {
				int64_t lat = (int64_t)(gtime() + off - d[i].ts);

				if (lat < 0) {
					atomicAdd(&s_acc[3], 1ull);
					lat = 0;
				}
				atomicAdd(&shist[hbin((uint64_t)lat)], 1u);
			}
			atomicXor((unsigned int *)&s_acc[4], x);
			atomicAdd(&s_acc[5], (unsigned long long)d[i].len);
		}
	}
	__syncthreads();
	for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
		uint64_t prev, s = s_seq[i];

		if (i == 0 && !q->started)
			continue;
		prev = i == 0 ? q->last_seq : s_seq[i - 1];
		if (s <= prev)
			atomicAdd(&s_acc[1], 1ull);
		else if (s - prev > 1)
			atomicAdd(&s_acc[0], s - prev - 1);
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		q->last_seq = s_seq[n - 1];
		q->started = 1;
		if (count) {
			q->frames += n;
			q->bytes += s_acc[5];
			q->gaps += s_acc[0];
			q->ooo += s_acc[1];
			q->bad += s_acc[2];
			q->neg += s_acc[3];
		}
		q->xsum ^= (unsigned int)s_acc[4];
		for (int k = 0; k < 6; k++)
			s_acc[k] = 0;
	}
	__syncthreads();
}

static __device__ void hist_init(unsigned int *shist)
{
	for (uint32_t i = threadIdx.x; i < HBINS; i += blockDim.x)
		shist[i] = 0;
}

static __device__ void hist_flush(unsigned int *shist, unsigned int *hist)
{
	__syncthreads();
	for (uint32_t i = threadIdx.x; i < HBINS; i += blockDim.x)
		if (shist[i] != 0)
			atomicAdd(&hist[i], shist[i]);
}

static __device__ __forceinline__ uint32_t phase_get(const uint32_t *p)
{
	return *(const volatile uint32_t *)p;
}

/*
 * The persistent receive loop of one block, over a source of frames: thread 0 polls
 * (src.poll(max, &first) -> n) and releases (src.release(first, n)), every thread describes
 * frames (src.desc(k, &d) for k in [first, first + n)); consume() does the rest. Ends when the
 * phase says stop (2) or after limit_ns.
 */
template <class Src>
static __device__ void rx_loop(Src &src, const uint32_t *phase, struct qres *q, unsigned int *hist,
			       int64_t off, uint64_t limit_ns, uint32_t *started)
{
	__shared__ struct fdesc s_d[BATCH];
	__shared__ uint64_t s_seq[BATCH];
	__shared__ unsigned int shist[HBINS];
	__shared__ unsigned long long s_acc[6];
	__shared__ uint32_t s_n, s_first, s_ph;
	const uint64_t end = gtime() + limit_ns;

	say_started(started);
	hist_init(shist);
	if (threadIdx.x < 6)
		s_acc[threadIdx.x] = 0;
	__syncthreads();
	for (;;) {
		if (threadIdx.x == 0) {
			uint32_t first = 0;

			s_ph = phase_get(phase);
			if (gtime() > end)
				s_ph = 2;
			s_n = src.poll(BATCH, &first);
			s_first = first;
			q->polls++;
		}
		__syncthreads();
		const uint32_t n = s_n, first = s_first, ph = s_ph;

		if (n > 0) {
			for (uint32_t i = threadIdx.x; i < n; i += blockDim.x)
				src.desc(first + i, &s_d[i]);
			__syncthreads();
			consume(s_d, n, q, shist, ph == 1, off, s_seq, s_acc);
			if (threadIdx.x == 0)
				src.release(first, n);
		} else if (threadIdx.x == 0) {
			__nanosleep(100);
		}
		if (ph == 2)
			break;
		__syncthreads();
	}
	hist_flush(shist, hist);
}

/* softdpu's ring (include/softdpu/sdp_ring.h) behind a GPU handle */
struct sdp_src {
	struct sdp_ring_hdr *r;
	uint64_t pkt;
	uint32_t stride;

	__device__ uint32_t poll(uint32_t max, uint32_t *first)
	{
		return sdp_ring_rx_poll(r, max, 1000, first);
	}
	__device__ void desc(uint32_t k, struct fdesc *d) const
	{
		const struct sdp_ring_cqe *c = sdp_ring_rx_cqe(r, k);

		d->addr = pkt + (uint64_t)c->slot * stride;
		d->len = c->len;
		d->ts = c->ts_ns;
	}
	__device__ void release(uint32_t first, uint32_t n)
	{
		sdp_ring_rx_release(r, first + n);
	}
};

/* softdpu: block b consumes the ring of handle h[b] until the phase says stop. */
static __global__ void sdp_rx_kernel(struct doca_gpu_eth_rxq *const *h, const uint32_t *phase,
				     struct qres *res, unsigned int *hist, int64_t off,
				     uint64_t limit_ns, uint32_t *started)
{
	const struct doca_gpu_eth_rxq *hq = h[blockIdx.x];
	struct sdp_src src = {(struct sdp_ring_hdr *)hq->ring, hq->pkt_addr, hq->max_pkt_sz};

	rx_loop(src, phase, &res[blockIdx.x], hist, off, limit_ns, started);
}

#endif /* GPUNETIO_RX_KERNEL_CUH_ */
