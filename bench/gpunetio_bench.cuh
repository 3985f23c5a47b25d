/*
 * bench/gpunetio_{rx,tx}.cu: what both benchmarks share. Error macros, clocks, a builder of
 * frames in the gen layout (src/providers/gen/sdp_gen_payload.h, written from that
 * description), gen device lookup, the host/GPU clock offset and a latency histogram.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef GPUNETIO_BENCH_CUH_
#define GPUNETIO_BENCH_CUH_

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <arpa/inet.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include "doca_dev.h"
#include "doca_error.h"

#include "sdp_gen_frame.h"
#include "gpu_check.h"
#include "sdp_gen_payload.h"

/* a DOCA call / a CUDA call that must work: FAIL file:line and exit 1 (tests/gpu/gpu_check.h) */
#define BCHECK(call) CHECK(call)
#define CUCHECK(call) CHECK_CUDA(call)

static inline uint64_t host_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline double mono_s(void)
{
	return host_ns(CLOCK_MONOTONIC) * 1e-9;
}

static inline void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};

	while (nanosleep(&ts, &ts) != 0)
		;
}

static __device__ __forceinline__ uint64_t gtime(void)
{
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/* ---- frames in the gen layout -------------------------------------------------------------- */

/*
 * Frame number seq of `size` bytes: Ethernet/IPv4/UDP, both checksums valid, payload check,
 * magic, seq, flow 0 and the fill, made as the gen provider makes them: with its frame builder
 * (sdp_gen_frame.h; the same work per frame). Each thread keeps a builder for the last size it
 * built (set up again, about a millisecond, when the size changes).
 */
static inline void frame_build(uint8_t *f, uint32_t size, uint64_t seq)
{
	static thread_local struct sdp_gen_frame g; /* size 0: not set up */
	static const uint8_t dst_mac[6] = {2, 0x47, 1, 2, 3, 4}, src_mac[6] = {2, 0x67, 1, 2, 3, 4};

	if (g.size != size && !sdp_gen_frame_init(&g, size, dst_mac, src_mac, htonl(0x0a000001),
						  htonl(0x0a000002), 1024, 5001, 1)) {
		std::fprintf(stderr, "FAIL: frame_build: size %u is not a gen frame size\n", size);
		std::exit(1);
	}
	sdp_gen_frame_build(&g, seq, f);
}

/* A copy of a prebuilt frame with its sequence number patched (checksums left stale). */
static inline void frame_patch(uint8_t *f, const uint8_t *tmpl, uint32_t size, uint64_t seq)
{
	uint8_t *pl = f + SDP_GEN_L2L3L4_LEN;

	memcpy(f, tmpl, size);
	sdp_pkt_put32(pl + SDP_GEN_OFF_SEQ, (uint32_t)(seq >> 32));
	sdp_pkt_put32(pl + SDP_GEN_OFF_SEQ + 4, (uint32_t)seq);
}

/*
 * The PCIe copy ceiling in GB/s: 64 MiB copies between pinned host memory and device memory in
 * the direction kind (H2D or D2H), on a non-blocking stream, for about 0.5 s.
 */
static inline double pcie_gbs(cudaMemcpyKind kind)
{
	const size_t sz = 64ull << 20;
	void *h = NULL, *d = NULL, *dst, *src;
	cudaStream_t st;
	cudaEvent_t e0, e1;
	float ms = 0;
	int n = 0;

	CUCHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	CUCHECK(cudaEventCreate(&e0));
	CUCHECK(cudaEventCreate(&e1));
	CUCHECK(cudaHostAlloc(&h, sz, cudaHostAllocDefault));
	CUCHECK(cudaMalloc(&d, sz));
	std::memset(h, 1, sz);
	CUCHECK(cudaMemset(d, 1, sz));
	dst = kind == cudaMemcpyHostToDevice ? d : h;
	src = kind == cudaMemcpyHostToDevice ? h : d;
	CUCHECK(cudaMemcpyAsync(dst, src, sz, kind, st));
	CUCHECK(cudaEventRecord(e0, st));
	for (double end = mono_s() + 0.5; mono_s() < end; n += 4) {
		for (int k = 0; k < 4; k++)
			CUCHECK(cudaMemcpyAsync(dst, src, sz, kind, st));
		CUCHECK(cudaStreamSynchronize(st));
	}
	CUCHECK(cudaEventRecord(e1, st));
	CUCHECK(cudaEventSynchronize(e1));
	CUCHECK(cudaEventElapsedTime(&ms, e0, e1));
	CUCHECK(cudaFreeHost(h));
	CUCHECK(cudaFree(d));
	CUCHECK(cudaEventDestroy(e0));
	CUCHECK(cudaEventDestroy(e1));
	CUCHECK(cudaStreamDestroy(st));
	return (double)sz * n / (ms * 1e-3) / 1e9;
}

/* ---- command lines -------------------------------------------------------------------------- */

/* "64,512,1024" into out (max entries); returns how many. */
static inline int parse_list(const char *s, uint32_t *out, int max)
{
	int n = 0;

	while (*s && n < max) {
		out[n++] = (uint32_t)std::strtoul(s, (char **)&s, 10);
		if (*s == ',')
			s++;
		else
			break;
	}
	return n;
}

/* What the GPU benchmarks' command lines share (each main sets its defaults). */
struct bench_opts {
	double secs, warm; /* -t: counting window, -w: warm-up (s) */
	uint32_t sizes[5]; /* -s 64,512,...: frame sizes */
	uint32_t thr[4];   /* -n 1,2,...: engine threads (queues) */
	uint32_t hsz[5];   /* -H 64,1514 | none: sizes also run from mapped host memory */
	int ns, nt, nh;	   /* how many of each */
};

/* One getopt option of those (-t -w -s -n -H) into o: 1 when it was one of them. */
static inline int bench_common_opt(int opt, const char *arg, struct bench_opts *o)
{
	switch (opt) {
	case 't':
		o->secs = std::atof(arg);
		break;
	case 'w':
		o->warm = std::atof(arg);
		break;
	case 's':
		o->ns = parse_list(arg, o->sizes, 5);
		break;
	case 'n':
		o->nt = parse_list(arg, o->thr, 4);
		break;
	case 'H':
		o->nh = std::strcmp(arg, "none") == 0 ? 0 : parse_list(arg, o->hsz, 5);
		break;
	default:
		return 0;
	}
	return 1;
}

/* ---- gen devices ---------------------------------------------------------------------------- */

static struct doca_devinfo **g_devlist;
static uint32_t g_ndev;

/* Open the declared device called name (SOFTDPU_DEVICES is set before the first call). */
static struct doca_dev *dev_open_by_name(const char *name)
{
	struct doca_dev *dev = NULL;

	if (g_devlist == NULL)
		BCHECK(doca_devinfo_create_list(&g_devlist, &g_ndev));
	for (uint32_t i = 0; i < g_ndev; i++) {
		char n[DOCA_DEVINFO_IBDEV_NAME_SIZE] = "";

		if (doca_devinfo_get_ibdev_name(g_devlist[i], n, sizeof(n)) == DOCA_SUCCESS &&
		    std::strcmp(n, name) == 0) {
			BCHECK(doca_dev_open(g_devlist[i], &dev));
			return dev;
		}
	}
	std::fprintf(stderr, "FAIL: device %s is not listed (SOFTDPU_PROVIDER_PATH?)\n", name);
	std::exit(1);
}

/* ---- host/GPU clock offset ---------------------------------------------------------------- */

/*
 * Ping-pong through mapped pinned memory: the host reads CLOCK_REALTIME (t0), raises a request,
 * a one-thread kernel answers with %globaltimer (g), the host reads CLOCK_REALTIME again (t1).
 * offset = (t0 + t1) / 2 - g, so host time = globaltimer + offset; the error is at most
 * (t1 - t0) / 2 (plus the globaltimer's tick), taken from the round with the shortest trip.
 */
struct clk_pp {
	volatile uint32_t req;
	volatile uint32_t ack;
	volatile uint64_t g;
	volatile uint64_t tick; /* smallest nonzero globaltimer step seen */
};

static __global__ void clk_kernel(struct clk_pp *pp, uint32_t rounds)
{
	uint64_t end = gtime() + 5000000000ull, tick = ~0ull, a = gtime();

	for (int k = 0; k < 2000; k++) {
		uint64_t b = gtime();

		if (b != a && b - a < tick)
			tick = b - a;
		a = b;
	}
	pp->tick = tick;
	for (uint32_t r = 1; r <= rounds && gtime() < end; r++) {
		while (pp->req != r && gtime() < end)
			;
		pp->g = gtime();
		__threadfence_system();
		pp->ack = r;
	}
}

struct clk_off {
	int64_t off_ns; /* host CLOCK_REALTIME - globaltimer */
	int64_t err_ns; /* half the shortest round trip */
	uint64_t tick_ns;
};

static inline struct clk_off clock_offset(void)
{
	struct clk_pp *pp = NULL, *dpp = NULL;
	struct clk_off best = {0, INT64_MAX, 0};
	const uint32_t rounds = 300;

	CUCHECK(cudaHostAlloc((void **)&pp, sizeof(*pp), cudaHostAllocMapped));
	CUCHECK(cudaHostGetDevicePointer((void **)&dpp, pp, 0));
	std::memset((void *)pp, 0, sizeof(*pp));
	clk_kernel<<<1, 1>>>(dpp, rounds);
	CUCHECK(cudaGetLastError());
	for (uint32_t r = 1; r <= rounds; r++) {
		double end = mono_s() + 2;
		uint64_t t0 = host_ns(CLOCK_REALTIME), t1;

		__atomic_store_n(&pp->req, r, __ATOMIC_SEQ_CST);
		while (pp->ack != r && mono_s() < end)
			;
		t1 = host_ns(CLOCK_REALTIME);
		if (pp->ack != r)
			break;
		if ((int64_t)(t1 - t0) / 2 < best.err_ns) {
			best.err_ns = (int64_t)(t1 - t0) / 2;
			best.off_ns = (int64_t)(t0 / 2 + t1 / 2) - (int64_t)pp->g;
		}
	}
	CUCHECK(cudaDeviceSynchronize());
	best.tick_ns = pp->tick;
	CUCHECK(cudaFreeHost(pp));
	return best;
}

/* ---- latency histogram: 32 linear bins, then 32 per octave (3% resolution), up to ~16 ms ---- */

#define HBINS 640

static __host__ __device__ inline uint32_t hbin(uint64_t ns)
{
	uint32_t e = 0, b;

	if (ns < 32)
		return (uint32_t)ns;
	for (uint64_t v = ns; v > 1; v >>= 1)
		e++;
	b = 32 + (e - 5) * 32 + (uint32_t)((ns >> (e - 5)) & 31);
	return b < HBINS ? b : HBINS - 1;
}

static inline double hbin_mid(uint32_t b)
{
	uint32_t e, m;

	if (b < 32)
		return b;
	e = 5 + (b - 32) / 32;
	m = (b - 32) % 32;
	return (double)((32ull + m) << (e - 5)) + (double)(1ull << (e - 5)) / 2;
}

/* p-th percentile (0..1) in ns of a histogram; -1 when empty. */
static inline double hist_pct(const unsigned int *h, double p)
{
	unsigned long long tot = 0, acc = 0;

	for (int i = 0; i < HBINS; i++)
		tot += h[i];
	if (tot == 0)
		return -1;
	for (int i = 0; i < HBINS; i++) {
		acc += h[i];
		if ((double)acc >= p * (double)tot)
			return hbin_mid((uint32_t)i);
	}
	return hbin_mid(HBINS - 1);
}

#endif /* GPUNETIO_BENCH_CUH_ */
