/*
 * bench/gpunetio_{rx,tx}.cu: what both benchmarks share. Error macros, clocks, a builder of
 * frames in the gen layout (src/providers/gen/sdp_gen_payload.h, written from that
 * description), gen device lookup, the host/GPU clock offset and a latency histogram.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef GPUNETIO_BENCH_CUH_
#define GPUNETIO_BENCH_CUH_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <cuda_runtime.h>
#include <unistd.h>

#include "doca_dev.h"
#include "doca_error.h"

#include "sdp_gen_payload.h"

#define BCHECK(call)                                                                               \
	do {                                                                                       \
		doca_error_t s_ = (call);                                                          \
		if (s_ != DOCA_SUCCESS) {                                                          \
			std::fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call,    \
				     doca_error_get_name(s_));                                     \
			std::exit(1);                                                              \
		}                                                                                  \
	} while (0)

#define CUCHECK(call)                                                                              \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			std::fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call,    \
				     cudaGetErrorString(e_));                                      \
			std::exit(1);                                                              \
		}                                                                                  \
	} while (0)

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

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static inline uint64_t sum16(uint64_t s, const uint8_t *p, size_t n)
{
	size_t i = 0;

	for (; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (i < n)
		s += (uint32_t)p[i] << 8;
	return s;
}

static inline uint16_t fold16(uint64_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/*
 * Frame number seq of `size` bytes: Ethernet/IPv4/UDP, both checksums valid, payload check,
 * magic, seq, flow 0 and the fill, as the gen provider makes them (the same work per frame).
 */
static inline void frame_build(uint8_t *f, uint32_t size, uint64_t seq)
{
	uint8_t *ip = f + 14, *udp = ip + 20, *pl = udp + 8;
	uint16_t udp_len = (uint16_t)(size - 34), c;
	uint32_t pl_len = udp_len - 8u;

	static const uint8_t macs[12] = {2, 0x47, 1, 2, 3, 4, 2, 0x67, 1, 2, 3, 4};
	memcpy(f, macs, 12);
	put16(f + 12, 0x0800);
	ip[0] = 0x45;
	ip[1] = 0;
	put16(ip + 2, (uint16_t)(size - 14));
	put16(ip + 4, (uint16_t)seq);
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = 17;
	put16(ip + 10, 0);
	put32(ip + 12, 0x0a000001);
	put32(ip + 16, 0x0a000002);
	put16(ip + 10, (uint16_t)~fold16(sum16(0, ip, 20)));
	put16(udp, 1024);
	put16(udp + 2, 5001);
	put16(udp + 4, udp_len);
	put16(udp + 6, 0);
	put32(pl + SDP_GEN_OFF_MAGIC, SDP_GEN_MAGIC);
	put32(pl + SDP_GEN_OFF_SEQ, (uint32_t)(seq >> 32));
	put32(pl + SDP_GEN_OFF_SEQ + 4, (uint32_t)seq);
	put16(pl + SDP_GEN_OFF_FLOW, 0);
	for (uint32_t k = SDP_GEN_HDR_LEN; k < pl_len; k++)
		pl[k] = (uint8_t)(seq + k);
	put32(pl + SDP_GEN_OFF_CHECK,
	      sdp_gen_check(pl + SDP_GEN_OFF_MAGIC, pl_len - SDP_GEN_OFF_MAGIC));
	c = (uint16_t)~fold16(sum16(sum16(17u + udp_len, ip + 12, 8), udp, udp_len));
	put16(udp + 6, c == 0 ? 0xffff : c);
}

/* A copy of a prebuilt frame with its sequence number patched (checksums left stale). */
static inline void frame_patch(uint8_t *f, const uint8_t *tmpl, uint32_t size, uint64_t seq)
{
	uint8_t *pl = f + SDP_GEN_L2L3L4_LEN;

	memcpy(f, tmpl, size);
	put32(pl + SDP_GEN_OFF_SEQ, (uint32_t)(seq >> 32));
	put32(pl + SDP_GEN_OFF_SEQ + 4, (uint32_t)seq);
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
