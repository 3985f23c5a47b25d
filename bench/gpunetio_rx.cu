/*
 * bench/gpunetio_rx: receive rate and latency of libdoca_eth's GPU data path (issue 5), next to
 * its peers in the same run. Usage (bench/README.md, "gpunetio"):
 *
 *   gpunetio_rx [-t secs] [-w warmup] [-s 64,512,...] [-n 1,2,4,8] [-H 64,1514] [-B batch]
 *               [-R latency pps]
 *
 * softdpu: N gen devices declared by this program (flat out, frames of the size), each with its
 * own engine thread and one CYCLIC receive queue on the GPU data path, packet buffer in device
 * memory (the engine's copy engine path) or in mapped host memory (-H sizes; zero-copy). The
 * queues are flow-controlled as the bare ring's producers are (softdpu's BACKPRESSURE overflow
 * mode: the engine waits for room instead of overwriting); -O cyclic measures DOCA's default,
 * where a generator faster than the kernel overruns the ring and the rate counted is what the
 * kernel catches between overwrites. One
 * persistent kernel, one block per queue: thread 0 claims up to BATCH completions with
 * sdp_ring_rx_poll (include/softdpu/sdp_ring.h), the block reads every byte of every frame,
 * checks the gen magic and sequence order, records the latency, and releases the batch. The
 * benchmark drives the ring directly, as tests/gpu/test_eth_gpu_path.cu does: it measures the
 * data path (engine + ring), not the device API wrappers.
 *
 * Peers, same frames, same consuming code:
 *   bare-gen / bare-copy: N CPU threads, each writing into a minimal ring of its own in mapped
 *     pinned memory (producer index, descriptors, slots; no softdpu code) read by the same
 *     kind of persistent kernel. bare-gen builds each frame as the gen provider does
 *     (checksums, fill, payload check); bare-copy copies a prebuilt frame and patches its seq.
 *   pcie: cudaMemcpyAsync H2D of 64 MiB pinned buffers on a non-blocking stream (the copy
 *     ceiling, GB/s and its Mpps at each size); burst-copy: one cudaMemcpyAsync + event per 32
 *     frames from one thread (the engine's copy pattern alone).
 *   kpb: kernel per batch: one CPU thread builds B frames (gen layout), cudaMemcpyAsync H2D,
 *     launches a kernel that consumes them, synchronises; repeat.
 *   latency rows (-R pps, default 1000000, 0 none): one softdpu queue fed by a gen device
 *     paced at that rate, and kpb with frames arriving evenly at the same rate (B 256 and 32).
 *
 * Latency: generation time (the gen CQE's ts_ns, CLOCK_REALTIME taken per burst by the
 * provider; the peers take it the same way, once per 32 frames) to the moment the kernel has
 * read the frame (%globaltimer mapped to CLOCK_REALTIME by an offset measured before and after
 * the run, see clock_offset()). Prints key=value lines per case and a summary table.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <pthread.h>
#include <string>
#include <vector>

#include "doca_ctx.h"
#include "doca_eth_rxq.h"
#include "doca_eth_rxq_gpu_data_path.h"
#include "doca_gpunetio.h"
#include "doca_mmap.h"
#include "softdpu/eth.h"
#include "softdpu/sdp_gpu_eth.h"

#include "gpunetio_bench.cuh"
#include "gpunetio_rx_kernel.cuh"

#define SLOTS 4096 /* ring slots per queue (softdpu and bare) */
#define BURST 32   /* frames a producer publishes at once (the engine's burst) */
#define MAXQ 8

/* control word in mapped memory: 0 warm-up, 1 count, 2 stop */
static volatile uint32_t *g_phase;
static uint32_t *g_phase_dev;
/* per block of a persistent kernel, in mapped memory: set once the block runs */
static volatile uint32_t *g_started;
static uint32_t *g_started_dev;
static int64_t g_off;
/* the softdpu queues' overflow mode (-O) */
static enum sdp_eth_overflow g_overflow = SDP_ETH_OVERFLOW_BACKPRESSURE;
static double g_drift_max; /* largest clock offset change between two cases, ns */
static cudaStream_t g_st;  /* non-blocking: the persistent kernels */

/* ---- bare ring: producer index, descriptors, slots, in mapped pinned memory ----------------- */

struct bare_ring {
	uint32_t prod; /* written by the CPU thread */
	uint8_t pad0[60];
	uint32_t cons; /* written by the kernel */
	uint8_t pad1[60];
	struct fdesc desc[SLOTS]; /* addr holds the slot's offset from data */
				  /* then SLOTS slots of stride bytes */
};

static __device__ __forceinline__ uint32_t ld_acq_sys(const uint32_t *p)
{
	uint32_t v;

	asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

static __device__ __forceinline__ void st_rel_sys(uint32_t *p, uint32_t v)
{
	asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* the bare ring as a source of frames for rx_loop (cons: thread 0's) */
struct bare_src {
	struct bare_ring *r;
	uint64_t data;
	uint32_t stride, cons;

	__device__ uint32_t poll(uint32_t max, uint32_t *first)
	{
		uint32_t avail = ld_acq_sys(&r->prod) - cons;

		*first = cons;
		return avail > max ? max : avail;
	}
	__device__ void desc(uint32_t k, struct fdesc *d) const
	{
		const struct fdesc *c = &r->desc[k & (SLOTS - 1)];

		d->addr = data + (uint64_t)(k & (SLOTS - 1)) * stride;
		d->len = c->len;
		d->ts = c->ts;
	}
	__device__ void release(uint32_t first, uint32_t n)
	{
		cons = first + n;
		st_rel_sys(&r->cons, cons);
	}
};

static __global__ void bare_rx_kernel(struct bare_ring *const *rings, uint32_t stride,
				      const uint32_t *phase, struct qres *res, unsigned int *hist,
				      int64_t off, uint64_t limit_ns, uint32_t *started)
{
	struct bare_ring *r = rings[blockIdx.x];
	struct bare_src src = {r, (uint64_t)(uintptr_t)(r + 1), stride, 0};

	rx_loop(src, phase, &res[blockIdx.x], hist, off, limit_ns, started);
}

struct bare_arg {
	struct bare_ring *r;
	uint32_t size, stride;
	int gen; /* build frames like gen (1) or copy a template (0) */
	const uint8_t *tmpl;
	volatile int *stop;
	unsigned long long produced;
};

static void *bare_producer(void *p)
{
	struct bare_arg *a = (struct bare_arg *)p;
	uint8_t *data = (uint8_t *)(a->r + 1);
	uint32_t prod = 0, cons = 0;
	uint64_t seq = 0;

	while (!*a->stop) {
		uint64_t ts;

		if (prod + BURST - cons > SLOTS) {
			cons = __atomic_load_n(&a->r->cons, __ATOMIC_ACQUIRE);
			if (prod + BURST - cons > SLOTS) {
				__builtin_ia32_pause();
				continue;
			}
		}
		ts = host_ns(CLOCK_REALTIME);
		for (uint32_t i = 0; i < BURST; i++, seq++) {
			uint32_t s = (prod + i) & (SLOTS - 1);
			uint8_t *f = data + (size_t)s * a->stride;

			if (a->gen)
				frame_build(f, a->size, seq);
			else
				frame_patch(f, a->tmpl, a->size, seq);
			a->r->desc[s].len = a->size;
			a->r->desc[s].ts = ts;
		}
		prod += BURST;
		__atomic_store_n(&a->r->prod, prod, __ATOMIC_RELEASE);
	}
	a->produced = prod;
	return NULL;
}

/* ---- kernel per batch ---------------------------------------------------------------------- */

static __global__ void kpb_kernel(const struct fdesc *desc, uint32_t n, struct qres *q,
				  unsigned int *hist, int64_t off, int count)
{
	__shared__ struct fdesc s_d[BATCH];
	__shared__ uint64_t s_seq[BATCH];
	__shared__ unsigned int shist[HBINS];
	__shared__ unsigned long long s_acc[6];

	hist_init(shist);
	if (threadIdx.x < 6)
		s_acc[threadIdx.x] = 0;
	for (uint32_t b = 0; b < n; b += BATCH) {
		uint32_t m = n - b < BATCH ? n - b : BATCH;

		__syncthreads();
		for (uint32_t i = threadIdx.x; i < m; i += blockDim.x)
			s_d[i] = desc[b + i];
		__syncthreads();
		consume(s_d, m, q, shist, count != 0, off, s_seq, s_acc);
	}
	hist_flush(shist, hist);
}

/* ---- results -------------------------------------------------------------------------------- */

struct result {
	unsigned long long frames, bytes, gaps, ooo, bad, neg, polls;
	double secs, mpps, gbps, p50_us, p99_us, cpu_cores;
	unsigned long long published, overwrites, port_rx, drops;
};

/* results: written by the kernels in device memory, copied back after they finished */
static unsigned int g_hist[HBINS], *g_hist_dev;
static struct qres g_res[MAXQ], *g_res_dev;

/*
 * Before a case: zero the results, measure the clock offset again (%globaltimer drifts against
 * CLOCK_REALTIME by a few ppm: about 1 ms over a whole run), clear the started flags.
 */
static void res_reset(void)
{
	struct clk_off c = clock_offset();
	double d = std::fabs((double)(c.off_ns - g_off));

	if (d > g_drift_max)
		g_drift_max = d;
	g_off = c.off_ns;
	CUCHECK(cudaMemset(g_hist_dev, 0, sizeof(unsigned int) * HBINS));
	CUCHECK(cudaMemset(g_res_dev, 0, sizeof(struct qres) * MAXQ));
	for (int i = 0; i < MAXQ; i++)
		g_started[i] = 0;
}

/* Wait (10 s at most) until the nq blocks of the persistent kernel run. */
static void wait_started(int nq)
{
	double end = mono_s() + 10;

	for (int i = 0; i < nq; i++)
		while (g_started[i] == 0) {
			if (mono_s() > end) {
				std::fprintf(stderr, "FAIL: block %d of the kernel did not start\n",
					     i);
				std::exit(1);
			}
			sleep_s(1e-4);
		}
}

static void res_collect(struct result *o, int nq, uint32_t size, double secs)
{
	std::memset(o, 0, sizeof(*o));
	CUCHECK(cudaMemcpy(g_hist, g_hist_dev, sizeof(g_hist), cudaMemcpyDeviceToHost));
	CUCHECK(cudaMemcpy(g_res, g_res_dev, sizeof(g_res), cudaMemcpyDeviceToHost));
	for (int i = 0; i < nq; i++) {
		o->frames += g_res[i].frames;
		o->bytes += g_res[i].bytes;
		o->gaps += g_res[i].gaps;
		o->ooo += g_res[i].ooo;
		o->bad += g_res[i].bad;
		o->neg += g_res[i].neg;
		o->polls += g_res[i].polls;
	}
	(void)size;
	o->secs = secs;
	o->mpps = o->frames / secs / 1e6;
	o->gbps = o->bytes * 8.0 / secs / 1e9;
	o->p50_us = hist_pct(g_hist, 0.50) / 1e3;
	o->p99_us = hist_pct(g_hist, 0.99) / 1e3;
}

static double g_secs, g_warm; /* -t, -w (struct bench_opts) */
static struct doca_gpu *g_gpu;
static struct doca_dev *g_devs[5][MAXQ];
static const uint32_t g_all_sizes[5] = {64, 512, 1024, 1514, 8192};

static int size_idx(uint32_t size)
{
	for (int i = 0; i < 5; i++)
		if (g_all_sizes[i] == size)
			return i;
	return -1;
}

static uint32_t stride_of(uint32_t size)
{
	return (size + 63) & ~63u;
}

static void dev_name(char *buf, size_t n, uint32_t size, int q)
{
	std::snprintf(buf, n, "gr%ds%ud%d", (int)getpid() % 100000, size, q);
}

/* Warm up, count for g_secs, stop; fills secs and the process CPU time (cores busy). */
static double window(double *cpu_cores, void (*snap)(void *, int), void *ctx)
{
	double t0, t1;
	uint64_t c0, c1;

	__atomic_store_n(g_phase, 0u, __ATOMIC_SEQ_CST);
	sleep_s(g_warm);
	if (snap)
		snap(ctx, 0);
	c0 = host_ns(CLOCK_PROCESS_CPUTIME_ID);
	t0 = mono_s();
	__atomic_store_n(g_phase, 1u, __ATOMIC_SEQ_CST);
	sleep_s(g_secs);
	__atomic_store_n(g_phase, 2u, __ATOMIC_SEQ_CST);
	t1 = mono_s();
	c1 = host_ns(CLOCK_PROCESS_CPUTIME_ID);
	if (snap)
		snap(ctx, 1);
	*cpu_cores = (c1 - c0) * 1e-9 / (t1 - t0);
	return t1 - t0;
}

struct sdp_ctx {
	int nq;
	struct doca_eth_rxq *rxq[MAXQ];
	struct doca_dev *dev[MAXQ];
	struct sdp_eth_rxq_counters rc[2][MAXQ];
	struct sdp_eth_port_counters pc[2][MAXQ];
};

static void window_snap(void *p, int k)
{
	struct sdp_ctx *c = (struct sdp_ctx *)p;

	for (int i = 0; i < c->nq; i++) {
		BCHECK(sdp_eth_rxq_get_counters(c->rxq[i], &c->rc[k][i]));
		BCHECK(sdp_eth_dev_get_port_counters(c->dev[i], &c->pc[k][i]));
	}
}

static void run_softdpu(uint32_t size, int nq, enum doca_gpu_mem_type mt, struct doca_dev *dev0,
			struct result *o)
{
	struct sdp_ctx c = {};
	struct doca_mmap *mm[MAXQ] = {};
	void *buf[MAXQ] = {}, *cpu = NULL;
	struct doca_gpu_eth_rxq **hdev = NULL;
	const uint32_t stride = stride_of(size);
	const size_t bsz = (size_t)SLOTS * stride;
	double cores, secs;

	c.nq = nq;
	struct doca_gpu_eth_rxq *hh[MAXQ] = {};

	CUCHECK(cudaMalloc(&hdev, sizeof(*hdev) * MAXQ));
	for (int i = 0; i < nq; i++) {
		struct doca_gpu_eth_rxq *h = NULL;

		c.dev[i] = dev0 != NULL ? dev0 : g_devs[size_idx(size)][i];
		BCHECK(doca_gpu_mem_alloc(g_gpu, bsz, 65536, mt, &buf[i],
					  mt == DOCA_GPU_MEM_TYPE_GPU ? NULL : &cpu));
		BCHECK(doca_mmap_create(&mm[i]));
		BCHECK(doca_mmap_set_memrange(mm[i], buf[i], bsz));
		BCHECK(doca_mmap_add_dev(mm[i], c.dev[i]));
		BCHECK(doca_mmap_start(mm[i]));
		BCHECK(doca_eth_rxq_create(c.dev[i], SLOTS, stride, &c.rxq[i]));
		BCHECK(doca_eth_rxq_set_type(c.rxq[i], DOCA_ETH_RXQ_TYPE_CYCLIC));
		BCHECK(doca_eth_rxq_set_pkt_buf(c.rxq[i], mm[i], 0, (uint32_t)bsz));
		BCHECK(sdp_eth_rxq_set_overflow(c.rxq[i], g_overflow));
		BCHECK(doca_ctx_set_datapath_on_gpu(doca_eth_rxq_as_doca_ctx(c.rxq[i]), g_gpu));
		BCHECK(doca_ctx_start(doca_eth_rxq_as_doca_ctx(c.rxq[i])));
		BCHECK(doca_eth_rxq_get_gpu_handle(c.rxq[i], &h));
		hh[i] = h;
	}
	CUCHECK(cudaMemcpy(hdev, hh, sizeof(hh), cudaMemcpyHostToDevice));
	res_reset();
	*g_phase = 0;
	sdp_rx_kernel<<<nq, NTHR, 0, g_st>>>(hdev, g_phase_dev, g_res_dev, g_hist_dev, g_off,
					     (uint64_t)((g_secs + g_warm + 30) * 1e9),
					     g_started_dev);
	CUCHECK(cudaGetLastError());
	wait_started(nq);
	secs = window(&cores, window_snap, &c);
	CUCHECK(cudaStreamSynchronize(g_st));
	res_collect(o, nq, size, secs);
	o->cpu_cores = cores;
	for (int i = 0; i < nq; i++) {
		o->published += c.rc[1][i].ring_packets - c.rc[0][i].ring_packets;
		o->overwrites += c.rc[1][i].overwrites - c.rc[0][i].overwrites;
		o->drops += c.rc[1][i].drops - c.rc[0][i].drops;
		o->port_rx += c.pc[1][i].rx_packets - c.pc[0][i].rx_packets;
		BCHECK(doca_ctx_stop(doca_eth_rxq_as_doca_ctx(c.rxq[i])));
		BCHECK(doca_eth_rxq_destroy(c.rxq[i]));
		BCHECK(doca_mmap_destroy(mm[i]));
		BCHECK(doca_gpu_mem_free(g_gpu, buf[i]));
	}
	CUCHECK(cudaFree(hdev));
}

static void run_bare(uint32_t size, int nq, int gen, struct result *o)
{
	const uint32_t stride = stride_of(size);
	const size_t rsz = sizeof(struct bare_ring) + (size_t)SLOTS * stride;
	struct bare_ring **rdev = NULL;
	struct bare_arg a[MAXQ];
	pthread_t th[MAXQ];
	volatile int stop = 0;
	std::vector<uint8_t> tmpl(size);
	double cores, secs;
	unsigned long long produced = 0;

	frame_build(tmpl.data(), size, 0);
	struct bare_ring *rr[MAXQ] = {};

	CUCHECK(cudaMalloc(&rdev, sizeof(*rdev) * MAXQ));
	for (int i = 0; i < nq; i++) {
		void *d = NULL;

		a[i] = {};
		CUCHECK(cudaHostAlloc((void **)&a[i].r, rsz, cudaHostAllocMapped));
		std::memset(a[i].r, 0, sizeof(struct bare_ring));
		CUCHECK(cudaHostGetDevicePointer(&d, a[i].r, 0));
		rr[i] = (struct bare_ring *)d;
		a[i].size = size;
		a[i].stride = stride;
		a[i].gen = gen;
		a[i].tmpl = tmpl.data();
		a[i].stop = &stop;
	}
	CUCHECK(cudaMemcpy(rdev, rr, sizeof(rr), cudaMemcpyHostToDevice));
	res_reset();
	*g_phase = 0;
	bare_rx_kernel<<<nq, NTHR, 0, g_st>>>(rdev, stride, g_phase_dev, g_res_dev, g_hist_dev,
					      g_off, (uint64_t)((g_secs + g_warm + 30) * 1e9),
					      g_started_dev);
	CUCHECK(cudaGetLastError());
	wait_started(nq);
	for (int i = 0; i < nq; i++)
		pthread_create(&th[i], NULL, bare_producer, &a[i]);
	secs = window(&cores, NULL, NULL);
	CUCHECK(cudaStreamSynchronize(g_st));
	stop = 1;
	for (int i = 0; i < nq; i++) {
		pthread_join(th[i], NULL);
		produced += a[i].produced;
		CUCHECK(cudaFreeHost(a[i].r));
	}
	res_collect(o, nq, size, secs);
	o->cpu_cores = cores;
	o->published = produced;
	CUCHECK(cudaFree(rdev));
}

/*
 * Kernel per batch: the CPU builds B frames, copies them and their descriptors to the GPU and
 * launches a kernel that consumes them. rate 0: flat out, each frame stamped when built; rate
 * R: frame k arrives at start + k/R (its stamp) and a batch is sent when its last frame has
 * arrived (a receiver that waits for B frames).
 */
static void run_kpb(uint32_t size, uint32_t B, uint64_t rate, struct result *o)
{
	const uint32_t stride = stride_of(size);
	uint8_t *h = NULL, *dd = NULL;
	struct fdesc *hd = NULL, *ddesc = NULL;
	cudaStream_t st;
	uint64_t seq = 0;
	double t0, tc = 0, tend;
	uint64_t c0 = 0;
	int counting = 0;
	unsigned long long frames = 0;
	const uint64_t start = host_ns(CLOCK_REALTIME);

	CUCHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	CUCHECK(cudaHostAlloc((void **)&h, (size_t)B * stride, cudaHostAllocDefault));
	CUCHECK(cudaHostAlloc((void **)&hd, sizeof(*hd) * B, cudaHostAllocDefault));
	CUCHECK(cudaMalloc((void **)&dd, (size_t)B * stride));
	CUCHECK(cudaMalloc((void **)&ddesc, sizeof(*hd) * B));
	res_reset();
	t0 = mono_s();
	tend = t0 + g_warm + g_secs;
	for (double now = t0; now < tend; now = mono_s()) {
		uint64_t ts = 0;

		if (!counting && now >= t0 + g_warm) {
			counting = 1;
			tc = now;
			c0 = host_ns(CLOCK_PROCESS_CPUTIME_ID);
		}
		for (uint32_t i = 0; i < B; i++, seq++) {
			if (rate != 0)
				ts = start + (uint64_t)((double)seq * 1e9 / (double)rate);
			else if (i % BURST == 0)
				ts = host_ns(CLOCK_REALTIME);
			frame_build(h + (size_t)i * stride, size, seq);
			hd[i].addr = (uint64_t)(uintptr_t)(dd + (size_t)i * stride);
			hd[i].len = size;
			hd[i].ts = ts;
		}
		while (rate != 0) { /* the batch is complete when its last frame has arrived */
			uint64_t t = host_ns(CLOCK_REALTIME);

			if (t >= ts)
				break;
			if (ts - t > 100000)
				sleep_s((double)(ts - t - 50000) * 1e-9);
		}
		CUCHECK(cudaMemcpyAsync(dd, h, (size_t)B * stride, cudaMemcpyHostToDevice, st));
		CUCHECK(cudaMemcpyAsync(ddesc, hd, sizeof(*hd) * B, cudaMemcpyHostToDevice, st));
		kpb_kernel<<<1, NTHR, 0, st>>>(ddesc, B, g_res_dev, g_hist_dev, g_off, counting);
		CUCHECK(cudaStreamSynchronize(st));
		if (counting)
			frames += B;
	}
	{
		double secs = mono_s() - tc;

		o->cpu_cores = (host_ns(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e-9 / secs;
		res_collect(o, 1, size, secs);
		o->published = frames;
	}
	CUCHECK(cudaStreamDestroy(st));
	CUCHECK(cudaFreeHost(h));
	CUCHECK(cudaFreeHost(hd));
	CUCHECK(cudaFree(dd));
	CUCHECK(cudaFree(ddesc));
}

/*
 * The engine's copy pattern alone: one thread issuing one cudaMemcpyAsync of 32 frames plus an
 * event record per burst, at most 16 bursts in flight. Mpps.
 */
static double burst_copy_mpps(uint32_t size)
{
	const uint32_t stride = stride_of(size);
	const size_t bytes = (size_t)BURST * stride;
	void *h = NULL, *d = NULL;
	cudaStream_t st;
	cudaEvent_t ev[16];
	unsigned long long n = 0;
	double t0, t;

	CUCHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	for (int i = 0; i < 16; i++)
		CUCHECK(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming));
	CUCHECK(cudaHostAlloc(&h, bytes * 16, cudaHostAllocDefault));
	CUCHECK(cudaMalloc(&d, bytes * 16));
	t0 = mono_s();
	for (double end = t0 + 0.3; mono_s() < end; n++) {
		int k = (int)(n % 16);

		if (n >= 16)
			CUCHECK(cudaEventSynchronize(ev[k]));
		CUCHECK(cudaMemcpyAsync((uint8_t *)d + k * bytes, (uint8_t *)h + k * bytes, bytes,
					cudaMemcpyHostToDevice, st));
		CUCHECK(cudaEventRecord(ev[k], st));
	}
	CUCHECK(cudaStreamSynchronize(st));
	t = mono_s() - t0;
	for (int i = 0; i < 16; i++)
		CUCHECK(cudaEventDestroy(ev[i]));
	CUCHECK(cudaFreeHost(h));
	CUCHECK(cudaFree(d));
	CUCHECK(cudaStreamDestroy(st));
	return n * BURST / t / 1e6;
}

static void print_res(const char *name, uint32_t size, int nq, const char *mem,
		      const struct result *r)
{
	std::printf(
		"case=%s size=%u threads=%d mem=%s frames=%llu secs=%.3f mpps=%.3f gbps=%.2f "
		"p50_us=%.2f p99_us=%.2f published=%llu overwrites=%llu drops=%llu "
		"port_rx=%llu gaps=%llu ooo=%llu bad=%llu neg_lat=%llu polls=%llu cpu_cores=%.2f\n",
		name, size, nq, mem, r->frames, r->secs, r->mpps, r->gbps, r->p50_us, r->p99_us,
		r->published, r->overwrites, r->drops, r->port_rx, r->gaps, r->ooo, r->bad, r->neg,
		r->polls, r->cpu_cores);
	std::fflush(stdout);
}

int main(int argc, char **argv)
{
	struct bench_opts o = {1.0, 0.3, {64, 512, 1024, 1514, 8192}, {1, 2, 4, 8}, {64, 1514}, 5,
			       4,   2};
	int bad = 0;
	uint32_t B = 256, lat_rate = 1000000, lat_b[2] = {256, 32};
	char bus[32];
	std::string decls;
	struct clk_off c0, c1;
	double pcie;
	int opt;

	while ((opt = getopt(argc, argv, "t:w:s:n:H:B:R:O:")) != -1) {
		if (bench_common_opt(opt, optarg, &o))
			continue;
		switch (opt) {
		case 'B':
			B = (uint32_t)std::atoi(optarg);
			break;
		case 'R':
			lat_rate = (uint32_t)std::strtoul(optarg, NULL, 10);
			break;
		case 'O':
			if (std::strcmp(optarg, "cyclic") != 0 &&
			    std::strcmp(optarg, "backpressure") != 0) {
				std::fprintf(stderr, "-O takes cyclic or backpressure\n");
				return 2;
			}
			g_overflow = std::strcmp(optarg, "cyclic") == 0 ?
					     SDP_ETH_OVERFLOW_CYCLIC :
					     SDP_ETH_OVERFLOW_BACKPRESSURE;
			break;
		default:
			std::fprintf(stderr,
				     "usage: %s [-t secs] [-w warmup] [-s sizes] [-n threads] "
				     "[-H host-mem sizes|none] [-B batch] [-R latency pps, 0 none] "
				     "[-O backpressure|cyclic]\n",
				     argv[0]);
			return 2;
		}
	}
	g_secs = o.secs;
	g_warm = o.warm;
	for (int i = 0; i < o.ns; i++)
		if (size_idx(o.sizes[i]) < 0)
			bad = 1;
	for (int i = 0; i < o.nh; i++)
		if (size_idx(o.hsz[i]) < 0)
			bad = 1;
	for (int i = 0; i < o.nt; i++)
		if (o.thr[i] < 1 || o.thr[i] > MAXQ)
			bad = 1;
	if (bad || g_secs <= 0 || B == 0 || B > 65536 || lat_rate > 100000000) {
		std::fprintf(stderr,
			     "sizes: 64,512,1024,1514,8192; threads 1..8; batch 1..65536\n");
		return 2;
	}
	if (access("/dev/nvidiactl", F_OK) != 0) {
		std::printf("SKIP: no NVIDIA driver (/dev/nvidiactl is missing)\n");
		return 77;
	}
	/* gen devices: 8 per size, flat out */
	for (int s = 0; s < 5; s++)
		for (int q = 0; q < MAXQ; q++) {
			char n[64], d[128];

			dev_name(n, sizeof(n), g_all_sizes[s], q);
			std::snprintf(d, sizeof(d), "%sgen:name=%s,size=%u",
				      decls.empty() ? "" : ";", n, g_all_sizes[s]);
			decls += d;
		}
	if (lat_rate != 0) { /* the paced generator of the latency rows */
		char d[160];

		std::snprintf(d, sizeof(d), ";gen:name=gr%dlat,size=64,rate=%u",
			      (int)getpid() % 100000, lat_rate);
		decls += d;
	}
	setenv("SOFTDPU_DEVICES", decls.c_str(), 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);

	CUCHECK(cudaFree(0));
	CUCHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus), 0));
	BCHECK(doca_gpu_create(bus, &g_gpu));
	CUCHECK(cudaHostAlloc((void **)&g_phase, sizeof(uint32_t), cudaHostAllocMapped));
	CUCHECK(cudaHostGetDevicePointer((void **)&g_phase_dev, (void *)g_phase, 0));
	CUCHECK(cudaHostAlloc((void **)&g_started, sizeof(uint32_t) * MAXQ, cudaHostAllocMapped));
	CUCHECK(cudaHostGetDevicePointer((void **)&g_started_dev, (void *)g_started, 0));
	CUCHECK(cudaMalloc(&g_hist_dev, sizeof(unsigned int) * HBINS));
	CUCHECK(cudaMalloc(&g_res_dev, sizeof(struct qres) * MAXQ));
	CUCHECK(cudaStreamCreateWithFlags(&g_st, cudaStreamNonBlocking));
	for (int s = 0; s < 5; s++)
		for (int q = 0; q < MAXQ; q++) {
			char n[64];

			dev_name(n, sizeof(n), g_all_sizes[s], q);
			g_devs[s][q] = dev_open_by_name(n);
		}

	c0 = clock_offset();
	g_off = c0.off_ns;
	std::printf("clock offset_ns=%lld err_ns=%lld globaltimer_tick_ns=%llu (CLOCK_REALTIME - "
		    "%%globaltimer, best of 300 ping-pongs)\n",
		    (long long)c0.off_ns, (long long)c0.err_ns, (unsigned long long)c0.tick_ns);

	pcie = pcie_gbs(cudaMemcpyHostToDevice);
	std::printf("case=config overflow=%s\n",
		    g_overflow == SDP_ETH_OVERFLOW_CYCLIC ? "cyclic" : "backpressure");
	std::printf("case=pcie h2d_gbs=%.2f", pcie);
	for (int i = 0; i < o.ns; i++)
		std::printf(" mpps_%u=%.3f", o.sizes[i], pcie * 1e9 / o.sizes[i] / 1e6);
	std::printf("\n");
	for (int i = 0; i < o.ns; i++)
		std::printf("case=burst_copy size=%u mpps=%.3f\n", o.sizes[i],
			    burst_copy_mpps(o.sizes[i]));

	for (int i = 0; i < o.ns; i++) {
		struct result k;

		run_kpb(o.sizes[i], B, 0, &k);
		print_res("kpb", o.sizes[i], 1, "gpu", &k);
		for (int j = 0; j < o.nt; j++) {
			struct result s, bg, bc;

			run_softdpu(o.sizes[i], (int)o.thr[j], DOCA_GPU_MEM_TYPE_GPU, NULL, &s);
			print_res("softdpu", o.sizes[i], (int)o.thr[j], "gpu", &s);
			for (int h = 0; h < o.nh; h++) {
				if (o.hsz[h] != o.sizes[i])
					continue;
				run_softdpu(o.sizes[i], (int)o.thr[j], DOCA_GPU_MEM_TYPE_CPU_GPU,
					    NULL, &s);
				print_res("softdpu", o.sizes[i], (int)o.thr[j], "host", &s);
			}
			run_bare(o.sizes[i], (int)o.thr[j], 1, &bg);
			print_res("bare_gen", o.sizes[i], (int)o.thr[j], "host", &bg);
			run_bare(o.sizes[i], (int)o.thr[j], 0, &bc);
			print_res("bare_copy", o.sizes[i], (int)o.thr[j], "host", &bc);
		}
	}
	if (lat_rate != 0) {
		/* latency at an offered load both can carry: 64 B at lat_rate pps */
		char n[64];
		struct doca_dev *ld;
		struct result r;

		std::snprintf(n, sizeof(n), "gr%dlat", (int)getpid() % 100000);
		ld = dev_open_by_name(n);
		run_softdpu(64, 1, DOCA_GPU_MEM_TYPE_GPU, ld, &r);
		std::printf("lat rate=%u batch=0 ", lat_rate);
		print_res("lat_softdpu", 64, 1, "gpu", &r);
		for (int b = 0; b < 2; b++) {
			run_kpb(64, lat_b[b], lat_rate, &r);
			std::printf("lat rate=%u batch=%u ", lat_rate, lat_b[b]);
			print_res("lat_kpb", 64, 1, "gpu", &r);
		}
		BCHECK(doca_dev_close(ld));
	}
	c1 = clock_offset();
	std::printf("clock_end offset_ns=%lld err_ns=%lld drift_ns=%lld case_drift_max_ns=%.0f\n",
		    (long long)c1.off_ns, (long long)c1.err_ns, (long long)(c1.off_ns - c0.off_ns),
		    g_drift_max);
	std::printf("batch=%u\n", B);

	for (int s = 0; s < 5; s++)
		for (int q = 0; q < MAXQ; q++)
			BCHECK(doca_dev_close(g_devs[s][q]));
	BCHECK(doca_devinfo_destroy_list(g_devlist));
	CUCHECK(cudaFree(g_hist_dev));
	CUCHECK(cudaFree(g_res_dev));
	CUCHECK(cudaFreeHost((void *)g_started));
	CUCHECK(cudaStreamDestroy(g_st));
	CUCHECK(cudaFreeHost((void *)g_phase));
	BCHECK(doca_gpu_destroy(g_gpu));
	return 0;
}
