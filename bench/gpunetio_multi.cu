/*
 * bench/gpunetio_multi: GPUNetIO receive on several GPUs at once (issue 6, the seed's GPUNetIO
 * step 4 scaled out). Usage (bench/README.md, "gpunetio"):
 *
 *   gpunetio_multi [-t secs] [-w warmup] [-s 64,1514] [-q queues per GPU] [-g max GPUs]
 *
 * Per GPU: its own doca_gpu, Q gen devices flat out (each its own engine thread), Q CYCLIC
 * receive queues on the GPU data path (flow-controlled: softdpu's BACKPRESSURE overflow mode,
 * as gpunetio_rx's) with their packet buffers in that GPU's memory, and one
 * persistent kernel (gpunetio_rx's, one block per queue: reads every byte, checks the gen magic
 * and the sequence order) on a non-blocking stream of that GPU. Each size runs every GPU alone
 * first, then all of them together; the figures are the frames the kernels consumed during the
 * window. Prints per-GPU lines (alone, together), the aggregate and the scaling ratio
 * (together / sum of alone). On a one-GPU machine the aggregate is that GPU's rate.
 * Exit 77 without an NVIDIA GPU, 1 when a kernel saw a damaged or reordered frame.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <string>

#include "doca_ctx.h"
#include "doca_eth_rxq.h"
#include "doca_eth_rxq_gpu_data_path.h"
#include "doca_gpunetio.h"
#include "doca_mmap.h"
#include "softdpu/eth.h"
#include "softdpu/sdp_gpu_eth.h"

#include "gpunetio_bench.cuh"
#include "gpunetio_rx_kernel.cuh"

#define MAXGPU 8
#define MAXQ 4
#define SLOTS 4096

struct gpu_run {
	int cuda_dev;
	char bus[32];
	struct doca_gpu *gpu;
	cudaStream_t st;
	struct qres *res_dev;
	unsigned int *hist_dev;
	struct doca_gpu_eth_rxq **hdev;
	struct doca_eth_rxq *rxq[MAXQ];
	struct doca_mmap *mm[MAXQ];
	void *buf[MAXQ];
	struct doca_dev *dev[MAXQ];
	struct sdp_eth_rxq_counters rc[2][MAXQ];
	/* the window's result */
	unsigned long long frames, bytes, bad, ooo, overwrites, drops;
};

static struct gpu_run g_runs[MAXGPU];
static int g_ngpu, g_nq = 2;
static double g_secs, g_warm;	     /* -t, -w (struct bench_opts) */
static volatile uint32_t *g_phase;   /* portable mapped: 0 warm-up, 1 count, 2 stop */
static volatile uint32_t *g_started; /* [MAXGPU][MAXQ], portable mapped */

static void dev_name(char *buf, size_t n, int g, uint32_t size, int q)
{
	std::snprintf(buf, n, "gm%dg%ds%uq%d", (int)getpid() % 100000, g, size, q);
}

/* Queues, packet buffers and the kernel of GPU r for frames of size bytes. */
static void run_start(struct gpu_run *r, int g, uint32_t size)
{
	const uint32_t stride = (size + 63) & ~63u;
	const size_t bsz = (size_t)SLOTS * stride;
	struct doca_gpu_eth_rxq *hh[MAXQ] = {};
	char n[64];

	CUCHECK(cudaSetDevice(r->cuda_dev));
	for (int i = 0; i < g_nq; i++) {
		dev_name(n, sizeof(n), g, size, i);
		r->dev[i] = dev_open_by_name(n);
		BCHECK(doca_gpu_mem_alloc(r->gpu, bsz, 65536, DOCA_GPU_MEM_TYPE_GPU, &r->buf[i],
					  NULL));
		BCHECK(doca_mmap_create(&r->mm[i]));
		BCHECK(doca_mmap_set_memrange(r->mm[i], r->buf[i], bsz));
		BCHECK(doca_mmap_add_dev(r->mm[i], r->dev[i]));
		BCHECK(doca_mmap_start(r->mm[i]));
		BCHECK(doca_eth_rxq_create(r->dev[i], SLOTS, stride, &r->rxq[i]));
		BCHECK(doca_eth_rxq_set_type(r->rxq[i], DOCA_ETH_RXQ_TYPE_CYCLIC));
		/* flow-controlled, as gpunetio_rx's queues (its -O): no overrun of a slow kernel */
		BCHECK(sdp_eth_rxq_set_overflow(r->rxq[i], SDP_ETH_OVERFLOW_BACKPRESSURE));
		BCHECK(doca_eth_rxq_set_pkt_buf(r->rxq[i], r->mm[i], 0, (uint32_t)bsz));
		BCHECK(doca_ctx_set_datapath_on_gpu(doca_eth_rxq_as_doca_ctx(r->rxq[i]), r->gpu));
		BCHECK(doca_ctx_start(doca_eth_rxq_as_doca_ctx(r->rxq[i])));
		BCHECK(doca_eth_rxq_get_gpu_handle(r->rxq[i], &hh[i]));
		g_started[g * MAXQ + i] = 0;
	}
	CUCHECK(cudaMemcpy(r->hdev, hh, sizeof(hh), cudaMemcpyHostToDevice));
	CUCHECK(cudaMemset(r->res_dev, 0, sizeof(struct qres) * MAXQ));
	CUCHECK(cudaMemset(r->hist_dev, 0, sizeof(unsigned int) * HBINS));
	sdp_rx_kernel<<<g_nq, NTHR, 0, r->st>>>(
		r->hdev, (const uint32_t *)g_phase, r->res_dev, r->hist_dev, 0,
		(uint64_t)((g_secs + g_warm + 30) * 1e9), (uint32_t *)g_started + g * MAXQ);
	CUCHECK(cudaGetLastError());
}

/* Wait (10 s at most) until every block of GPU g's kernel runs. */
static void run_wait_started(int g)
{
	double end = mono_s() + 10;

	for (int i = 0; i < g_nq; i++)
		while (g_started[g * MAXQ + i] == 0) {
			if (mono_s() > end) {
				std::fprintf(stderr, "FAIL: GPU %d: block %d did not start\n", g,
					     i);
				std::exit(1);
			}
			sleep_s(1e-4);
		}
}

static void run_snap(struct gpu_run *r, int k)
{
	for (int i = 0; i < g_nq; i++)
		BCHECK(sdp_eth_rxq_get_counters(r->rxq[i], &r->rc[k][i]));
}

/* After the window: the kernel's results, then the right teardown order. */
static void run_finish(struct gpu_run *r)
{
	struct qres res[MAXQ];

	CUCHECK(cudaSetDevice(r->cuda_dev));
	CUCHECK(cudaStreamSynchronize(r->st));
	CUCHECK(cudaMemcpy(res, r->res_dev, sizeof(res), cudaMemcpyDeviceToHost));
	r->frames = r->bytes = r->bad = r->ooo = r->overwrites = r->drops = 0;
	for (int i = 0; i < g_nq; i++) {
		r->frames += res[i].frames;
		r->bytes += res[i].bytes;
		r->bad += res[i].bad;
		r->ooo += res[i].ooo;
		r->overwrites += r->rc[1][i].overwrites - r->rc[0][i].overwrites;
		r->drops += r->rc[1][i].drops - r->rc[0][i].drops;
		BCHECK(doca_ctx_stop(doca_eth_rxq_as_doca_ctx(r->rxq[i])));
		BCHECK(doca_eth_rxq_destroy(r->rxq[i]));
		BCHECK(doca_mmap_destroy(r->mm[i]));
		BCHECK(doca_gpu_mem_free(r->gpu, r->buf[i]));
		BCHECK(doca_dev_close(r->dev[i]));
	}
}

/* One window over the GPUs [g0, g1): all started, counted together. Returns its seconds. */
static double window_over(int g0, int g1, uint32_t size)
{
	double t0, t1;

	*g_phase = 0;
	for (int g = g0; g < g1; g++)
		run_start(&g_runs[g], g, size);
	for (int g = g0; g < g1; g++)
		run_wait_started(g);
	sleep_s(g_warm);
	for (int g = g0; g < g1; g++)
		run_snap(&g_runs[g], 0);
	t0 = mono_s();
	__atomic_store_n(g_phase, 1u, __ATOMIC_SEQ_CST);
	sleep_s(g_secs);
	__atomic_store_n(g_phase, 2u, __ATOMIC_SEQ_CST);
	t1 = mono_s();
	for (int g = g0; g < g1; g++)
		run_snap(&g_runs[g], 1);
	for (int g = g0; g < g1; g++)
		run_finish(&g_runs[g]);
	return t1 - t0;
}

static int print_run(const char *name, int g, uint32_t size, double secs)
{
	const struct gpu_run *r = &g_runs[g];

	std::printf("case=%s gpu=%d bus=%s size=%u queues=%d frames=%llu secs=%.3f mpps=%.3f "
		    "gbps=%.2f overwrites=%llu drops=%llu bad=%llu ooo=%llu\n",
		    name, g, r->bus, size, g_nq, r->frames, secs, r->frames / secs / 1e6,
		    r->bytes * 8.0 / secs / 1e9, r->overwrites, r->drops, r->bad, r->ooo);
	std::fflush(stdout);
	return r->bad + r->ooo != 0;
}

int main(int argc, char **argv)
{
	struct bench_opts o = {1.0, 0.3, {64, 1514}, {0}, {0}, 2, 0, 0};
	int max_gpu = MAXGPU, damaged = 0, opt, count = 0;
	std::string decls;

	while ((opt = getopt(argc, argv, "t:w:s:q:g:")) != -1) {
		if (bench_common_opt(opt, optarg, &o))
			continue;
		switch (opt) {
		case 'q':
			g_nq = std::atoi(optarg);
			break;
		case 'g':
			max_gpu = std::atoi(optarg);
			break;
		default:
			std::fprintf(
				stderr,
				"usage: %s [-t secs] [-w warmup] [-s sizes] [-q queues per GPU] "
				"[-g max GPUs]\n",
				argv[0]);
			return 2;
		}
	}
	g_secs = o.secs;
	g_warm = o.warm;
	for (int i = 0; i < o.ns; i++)
		if (o.sizes[i] < 60 || o.sizes[i] > 8192)
			damaged = 2;
	if (damaged || g_secs <= 0 || g_nq < 1 || g_nq > MAXQ || max_gpu < 1 || max_gpu > MAXGPU) {
		std::fprintf(stderr, "sizes 60..8192, queues 1..%d, GPUs 1..%d\n", MAXQ, MAXGPU);
		return 2;
	}
	if (access("/dev/nvidiactl", F_OK) != 0) {
		std::printf("SKIP: no NVIDIA driver (/dev/nvidiactl is missing)\n");
		return 77;
	}
	CUCHECK(cudaGetDeviceCount(&count));
	g_ngpu = count < max_gpu ? count : max_gpu;
	/* gen devices: per GPU, per size, per queue */
	for (int g = 0; g < g_ngpu; g++)
		for (int s = 0; s < o.ns; s++)
			for (int q = 0; q < g_nq; q++) {
				char n[64], d[128];

				dev_name(n, sizeof(n), g, o.sizes[s], q);
				std::snprintf(d, sizeof(d), "%sgen:name=%s,size=%u",
					      decls.empty() ? "" : ";", n, o.sizes[s]);
				decls += d;
			}
	setenv("SOFTDPU_DEVICES", decls.c_str(), 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);

	CUCHECK(cudaHostAlloc((void **)&g_phase, sizeof(uint32_t),
			      cudaHostAllocMapped | cudaHostAllocPortable));
	CUCHECK(cudaHostAlloc((void **)&g_started, sizeof(uint32_t) * MAXGPU * MAXQ,
			      cudaHostAllocMapped | cudaHostAllocPortable));
	for (int g = 0; g < g_ngpu; g++) {
		struct gpu_run *r = &g_runs[g];

		r->cuda_dev = g;
		CUCHECK(cudaSetDevice(g));
		CUCHECK(cudaFree(0));
		CUCHECK(cudaDeviceGetPCIBusId(r->bus, sizeof(r->bus), g));
		BCHECK(doca_gpu_create(r->bus, &r->gpu));
		CUCHECK(cudaStreamCreateWithFlags(&r->st, cudaStreamNonBlocking));
		CUCHECK(cudaMalloc(&r->res_dev, sizeof(struct qres) * MAXQ));
		CUCHECK(cudaMalloc(&r->hist_dev, sizeof(unsigned int) * HBINS));
		CUCHECK(cudaMalloc(&r->hdev, sizeof(*r->hdev) * MAXQ));
	}
	std::printf("gpus=%d queues_per_gpu=%d\n", g_ngpu, g_nq);

	for (int s = 0; s < o.ns; s++) {
		double alone_sum = 0, total = 0, total_gbps = 0, secs;

		for (int g = 0; g < g_ngpu; g++) {
			secs = window_over(g, g + 1, o.sizes[s]);
			damaged |= print_run("multi_alone", g, o.sizes[s], secs);
			alone_sum += g_runs[g].frames / secs / 1e6;
		}
		secs = window_over(0, g_ngpu, o.sizes[s]);
		for (int g = 0; g < g_ngpu; g++) {
			damaged |= print_run("multi_all", g, o.sizes[s], secs);
			total += g_runs[g].frames / secs / 1e6;
			total_gbps += g_runs[g].bytes * 8.0 / secs / 1e9;
		}
		std::printf("case=multi_total gpus=%d size=%u queues=%d mpps=%.3f gbps=%.2f "
			    "alone_sum_mpps=%.3f scaling=%.2f\n",
			    g_ngpu, o.sizes[s], g_nq, total, total_gbps, alone_sum,
			    alone_sum > 0 ? total / alone_sum : 0.0);
		std::fflush(stdout);
	}

	for (int g = 0; g < g_ngpu; g++) {
		struct gpu_run *r = &g_runs[g];

		CUCHECK(cudaSetDevice(r->cuda_dev));
		CUCHECK(cudaFree(r->res_dev));
		CUCHECK(cudaFree(r->hist_dev));
		CUCHECK(cudaFree(r->hdev));
		CUCHECK(cudaStreamDestroy(r->st));
		BCHECK(doca_gpu_destroy(r->gpu));
	}
	BCHECK(doca_devinfo_destroy_list(g_devlist));
	CUCHECK(cudaFreeHost((void *)g_phase));
	CUCHECK(cudaFreeHost((void *)g_started));
	if (damaged)
		std::printf("DAMAGED: a kernel saw a wrong magic or an out-of-order sequence\n");
	return damaged ? 1 : 0;
}
