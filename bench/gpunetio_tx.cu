/*
 * bench/gpunetio_tx: send rate of libdoca_eth's GPU data path (issue 5), next to its peers in
 * the same run. Usage (bench/README.md, "gpunetio"):
 *
 *   gpunetio_tx [-t secs] [-w warmup] [-s 64,512,...] [-n 1,4] [-H 64,1514] [-v]
 *
 * softdpu: N gen devices (each its own engine thread; their RX side limited to one frame), one
 * send queue each on the GPU data path (completions on the GPU). One persistent kernel, one
 * block per queue: thread 0 reserves up to 256 descriptors on the queue's ring
 * (include/softdpu/sdp_ring.h), the block fills them with frames from a pool of 1024 frames in
 * device memory (or mapped host memory for -H sizes), thread 0 publishes them; failures come
 * back as completions and are counted. The rate is what the gen TX sink counted
 * (sdp_gen_sink_counters, looked up in the loaded provider module) over the window. Frames are
 * gen frames with the magic cleared, so the sink only counts them; -v sends intact gen frames,
 * which the sink then checks byte for byte (slower: the check runs on the engine thread).
 * Like gpunetio_rx it drives the ring directly: the data path, not the device API wrappers.
 *
 * Peers: pcie: cudaMemcpyAsync D2H of 64 MiB into pinned memory (the copy ceiling, and its
 * Mpps at each size); frame-copy: one cudaMemcpyAsync D2H per frame with a stream synchronise
 * every 64 frames from one thread, and one copy of 64 neighbouring frames per synchronise (the
 * engine's copy pattern alone: it copies runs of neighbouring slots in one piece).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <dlfcn.h>
#include <link.h>
#include <string>
#include <vector>

#include "doca_ctx.h"
#include "doca_eth_txq.h"
#include "doca_eth_txq_gpu_data_path.h"
#include "doca_gpunetio.h"
#include "softdpu/eth.h"
#include "softdpu/sdp_gpu_eth.h"

#include "gpunetio_bench.cuh"

#define MAXQ 8
#define POOL 1024   /* distinct frames a queue sends, round robin */
#define TXBATCH 256 /* descriptors one block posts at once (a quarter of the ring) */
#define NTHR 64

struct qtx {
	unsigned long long posted, counted, errors, full_polls;
};

static volatile uint32_t *g_phase;
static uint32_t *g_phase_dev;
static double g_secs, g_warm; /* -t, -w (struct bench_opts) */
static struct doca_gpu *g_gpu;
static struct doca_dev *g_devs[MAXQ];
static sdp_gen_sink_counters_func_t g_sink;

static __global__ void tx_kernel(struct doca_gpu_eth_txq *const *h, const uint8_t *const *pool,
				 uint32_t size, uint32_t stride, const uint32_t *phase,
				 struct qtx *res, uint64_t limit_ns)
{
	__shared__ uint32_t s_k, s_first, s_ph;
	struct sdp_ring_tx_hdr *r = (struct sdp_ring_tx_hdr *)h[blockIdx.x]->ring;
	const uint8_t *frames = pool[blockIdx.x];
	struct qtx *q = &res[blockIdx.x];
	const uint64_t end = gtime() + limit_ns;
	uint64_t seq = 0;

	for (;;) {
		if (threadIdx.x == 0) {
			uint32_t k = 0, first = 0;
			struct sdp_ring_txc c[8];
			uint32_t m = sdp_ring_tx_poll_cmpl(r, c, 8);

			for (uint32_t i = 0; i < m; i++)
				if (c[i].status != 0)
					q->errors++;
			s_ph = *(const volatile uint32_t *)phase;
			if (gtime() > end)
				s_ph = 2;
			if (s_ph != 2) {
				uint32_t used = SDP_ATOMIC_LOAD_RLX(&r->prod) -
						SDP_ATOMIC_LOAD_ACQ(&r->cons);

				k = r->nb_desc - used;
				if (k > TXBATCH)
					k = TXBATCH;
				if (k > 0 && sdp_ring_tx_reserve(r, k, &first) != k)
					k = 0;
				if (k == 0) {
					q->full_polls++;
					__nanosleep(500);
				}
			}
			s_k = k;
			s_first = first;
		}
		__syncthreads();
		const uint32_t k = s_k, first = s_first, ph = s_ph;

		if (ph == 2)
			break;
		for (uint32_t i = threadIdx.x; i < k; i += blockDim.x) {
			struct sdp_ring_txd *d = sdp_ring_tx_desc(r, first + i);

			d->addr = (uint64_t)(uintptr_t)(frames + ((seq + i) % POOL) * stride);
			d->len = size;
			d->flags = 0;
			d->send_ts_ns = 0;
			d->user = seq + i;
		}
		__syncthreads();
		if (threadIdx.x == 0 && k > 0) {
			sdp_ring_tx_submit(r, first + k);
			q->posted += k;
			if (ph == 1)
				q->counted += k;
		}
		seq += k;
		__syncthreads();
	}
}

static int find_gen_module(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (info->dlpi_name != NULL && std::strstr(info->dlpi_name, "sdp_provider_gen") != NULL) {
		std::snprintf((char *)data, 4096, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

static void stop_txq(struct doca_eth_txq *txq)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;
	doca_error_t s = doca_ctx_stop(doca_eth_txq_as_doca_ctx(txq));

	if (s != DOCA_SUCCESS && s != DOCA_ERROR_IN_PROGRESS)
		BCHECK(s);
	for (int k = 0; k < 5000 && st != DOCA_CTX_STATE_IDLE; k++) {
		(void)doca_ctx_get_state(doca_eth_txq_as_doca_ctx(txq), &st);
		if (st != DOCA_CTX_STATE_IDLE)
			usleep(1000);
	}
	BCHECK(doca_eth_txq_destroy(txq));
}

struct txres {
	double secs, mpps, gbps, cpu_cores, posted_mpps;
	unsigned long long frames, bytes, gen_ok, gen_bad, errors, full_polls;
};

static void run_softdpu(uint32_t size, int nq, enum doca_gpu_mem_type mt, int verify,
			struct txres *o)
{
	const uint32_t stride = (size + 63) & ~63u;
	struct doca_eth_txq *txq[MAXQ] = {};
	struct doca_gpu_eth_txq **hdev = NULL;
	const uint8_t **pdev = NULL;
	void *pool_gpu[MAXQ] = {};
	struct qtx *res = NULL;
	struct sdp_gen_sink_counters c[2][MAXQ];
	std::vector<uint8_t> frames((size_t)POOL * stride);
	double t0, t1;
	uint64_t cpu0, cpu1;

	for (uint32_t i = 0; i < POOL; i++) {
		uint8_t *f = frames.data() + (size_t)i * stride;

		frame_build(f, size, i);
		if (!verify)
			f[SDP_GEN_L2L3L4_LEN + SDP_GEN_OFF_MAGIC] ^= 0xff;
	}
	CUCHECK(cudaMallocManaged(&hdev, sizeof(*hdev) * MAXQ));
	CUCHECK(cudaMallocManaged(&pdev, sizeof(*pdev) * MAXQ));
	CUCHECK(cudaMallocManaged(&res, sizeof(*res) * MAXQ));
	std::memset(res, 0, sizeof(*res) * MAXQ);
	for (int i = 0; i < nq; i++) {
		struct doca_gpu_eth_txq *h = NULL;
		void *cpu = NULL;

		BCHECK(doca_gpu_mem_alloc(g_gpu, frames.size(), 65536, mt, &pool_gpu[i],
					  mt == DOCA_GPU_MEM_TYPE_GPU ? NULL : &cpu));
		if (cpu != NULL)
			std::memcpy(cpu, frames.data(), frames.size());
		else
			CUCHECK(cudaMemcpy(pool_gpu[i], frames.data(), frames.size(),
					   cudaMemcpyHostToDevice));
		pdev[i] = (const uint8_t *)pool_gpu[i];
		BCHECK(doca_eth_txq_create(g_devs[i], 1024, &txq[i]));
		BCHECK(doca_eth_txq_gpu_set_completion_on_gpu(txq[i]));
		BCHECK(doca_ctx_set_datapath_on_gpu(doca_eth_txq_as_doca_ctx(txq[i]), g_gpu));
		BCHECK(doca_ctx_start(doca_eth_txq_as_doca_ctx(txq[i])));
		BCHECK(doca_eth_txq_get_gpu_handle(txq[i], &h));
		hdev[i] = h;
	}
	__atomic_store_n(g_phase, 0u, __ATOMIC_SEQ_CST);
	tx_kernel<<<nq, NTHR>>>(hdev, pdev, size, stride, g_phase_dev, res,
				(uint64_t)((g_secs + g_warm + 30) * 1e9));
	CUCHECK(cudaGetLastError());
	sleep_s(g_warm);
	for (int i = 0; i < nq; i++)
		BCHECK(g_sink(g_devs[i], &c[0][i]));
	cpu0 = host_ns(CLOCK_PROCESS_CPUTIME_ID);
	t0 = mono_s();
	__atomic_store_n(g_phase, 1u, __ATOMIC_SEQ_CST);
	sleep_s(g_secs);
	for (int i = 0; i < nq; i++)
		BCHECK(g_sink(g_devs[i], &c[1][i]));
	t1 = mono_s();
	cpu1 = host_ns(CLOCK_PROCESS_CPUTIME_ID);
	__atomic_store_n(g_phase, 2u, __ATOMIC_SEQ_CST);
	CUCHECK(cudaDeviceSynchronize());
	std::memset(o, 0, sizeof(*o));
	o->secs = t1 - t0;
	for (int i = 0; i < nq; i++) {
		o->frames += c[1][i].frames - c[0][i].frames;
		o->bytes += c[1][i].bytes - c[0][i].bytes;
		o->gen_ok += c[1][i].gen_ok - c[0][i].gen_ok;
		o->gen_bad += c[1][i].gen_bad - c[0][i].gen_bad;
		o->errors += res[i].errors;
		o->full_polls += res[i].full_polls;
		o->posted_mpps += res[i].counted / o->secs / 1e6;
	}
	o->mpps = o->frames / o->secs / 1e6;
	o->gbps = o->bytes * 8.0 / o->secs / 1e9;
	o->cpu_cores = (cpu1 - cpu0) * 1e-9 / o->secs;
	for (int i = 0; i < nq; i++) {
		stop_txq(txq[i]);
		BCHECK(doca_gpu_mem_free(g_gpu, pool_gpu[i]));
	}
	CUCHECK(cudaFree(hdev));
	CUCHECK(cudaFree(pdev));
	CUCHECK(cudaFree(res));
}

/* One cudaMemcpyAsync D2H per frame, a synchronise every 64 (the engine's pattern). Mpps. */
/*
 * Mpps of copying frames of `size` bytes out of device memory, 64 per stream synchronise, from
 * one thread: span 0, one cudaMemcpyAsync per frame (slots 9216 bytes apart); span 1, one copy
 * of 64 frames in neighbouring slots of `stride` bytes (what the engine does for a pool).
 */
static double frame_copy_mpps(uint32_t size, uint32_t stride, int span)
{
	void *h = NULL, *d = NULL;
	cudaStream_t st;
	unsigned long long n = 0;
	double t0;

	CUCHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	CUCHECK(cudaHostAlloc(&h, (size_t)64 * 9216, cudaHostAllocDefault));
	CUCHECK(cudaMalloc(&d, (size_t)64 * 9216));
	t0 = mono_s();
	for (double end = t0 + 0.3; mono_s() < end;) {
		if (span) {
			CUCHECK(cudaMemcpyAsync(h, d, (size_t)63 * stride + size,
						cudaMemcpyDeviceToHost, st));
			n += 64;
		} else {
			for (int k = 0; k < 64; k++, n++)
				CUCHECK(cudaMemcpyAsync((uint8_t *)h + k * 9216,
							(uint8_t *)d + k * 9216, size,
							cudaMemcpyDeviceToHost, st));
		}
		CUCHECK(cudaStreamSynchronize(st));
	}
	t0 = mono_s() - t0;
	CUCHECK(cudaFreeHost(h));
	CUCHECK(cudaFree(d));
	CUCHECK(cudaStreamDestroy(st));
	return n / t0 / 1e6;
}

static void print_res(uint32_t size, int nq, const char *mem, const struct txres *r)
{
	std::printf("case=softdpu_tx size=%u threads=%d mem=%s frames=%llu secs=%.3f mpps=%.3f "
		    "gbps=%.2f posted_mpps=%.3f gen_ok=%llu gen_bad=%llu errors=%llu "
		    "full_polls=%llu cpu_cores=%.2f\n",
		    size, nq, mem, r->frames, r->secs, r->mpps, r->gbps, r->posted_mpps, r->gen_ok,
		    r->gen_bad, r->errors, r->full_polls, r->cpu_cores);
	std::fflush(stdout);
}

int main(int argc, char **argv)
{
	struct bench_opts o = {1.0, 0.3, {64, 512, 1024, 1514, 8192}, {1, 4}, {64, 1514}, 5, 2, 2};
	int verify = 0, opt, failed = 0;
	char bus[32], path[4096] = "";
	std::string decls;
	double pcie;
	void *mod;

	while ((opt = getopt(argc, argv, "t:w:s:n:H:v")) != -1) {
		if (bench_common_opt(opt, optarg, &o))
			continue;
		switch (opt) {
		case 'v':
			verify = 1;
			break;
		default:
			std::fprintf(stderr,
				     "usage: %s [-t secs] [-w warmup] [-s sizes] [-n threads] "
				     "[-H host-mem sizes|none] [-v]\n",
				     argv[0]);
			return 2;
		}
	}
	g_secs = o.secs;
	g_warm = o.warm;
	for (int i = 0; i < o.ns; i++)
		if (o.sizes[i] < 60 || o.sizes[i] > 9000)
			failed = 1;
	for (int i = 0; i < o.nt; i++)
		if (o.thr[i] < 1 || o.thr[i] > MAXQ)
			failed = 1;
	if (failed || g_secs <= 0) {
		std::fprintf(stderr, "sizes 60..9000, threads 1..8\n");
		return 2;
	}
	if (access("/dev/nvidiactl", F_OK) != 0) {
		std::printf("SKIP: no NVIDIA driver (/dev/nvidiactl is missing)\n");
		return 77;
	}
	for (int q = 0; q < MAXQ; q++) {
		char d[128];

		std::snprintf(d, sizeof(d), "%sgen:name=gt%dd%d,count=1", q ? ";" : "",
			      (int)getpid() % 100000, q);
		decls += d;
	}
	setenv("SOFTDPU_DEVICES", decls.c_str(), 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	CUCHECK(cudaFree(0));
	CUCHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus), 0));
	BCHECK(doca_gpu_create(bus, &g_gpu));
	for (int q = 0; q < MAXQ; q++) {
		char n[64];

		std::snprintf(n, sizeof(n), "gt%dd%d", (int)getpid() % 100000, q);
		g_devs[q] = dev_open_by_name(n);
	}
	dl_iterate_phdr(find_gen_module, path);
	mod = path[0] ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
	if (mod != NULL)
		*(void **)&g_sink = dlsym(mod, SDP_GEN_SINK_COUNTERS_SYMBOL);
	if (g_sink == NULL) {
		std::fprintf(stderr, "FAIL: %s not found in the gen provider module (%s)\n",
			     SDP_GEN_SINK_COUNTERS_SYMBOL, path[0] ? path : "not loaded");
		return 1;
	}
	CUCHECK(cudaHostAlloc((void **)&g_phase, sizeof(uint32_t), cudaHostAllocMapped));
	CUCHECK(cudaHostGetDevicePointer((void **)&g_phase_dev, (void *)g_phase, 0));

	pcie = pcie_gbs(cudaMemcpyDeviceToHost);
	std::printf("case=pcie d2h_gbs=%.2f", pcie);
	for (int i = 0; i < o.ns; i++)
		std::printf(" mpps_%u=%.3f", o.sizes[i], pcie * 1e9 / o.sizes[i] / 1e6);
	std::printf("\n");
	for (int i = 0; i < o.ns; i++)
		std::printf("case=frame_copy size=%u mpps=%.3f span64_mpps=%.3f\n", o.sizes[i],
			    frame_copy_mpps(o.sizes[i], 0, 0),
			    frame_copy_mpps(o.sizes[i], (o.sizes[i] + 63) & ~63u, 1));
	for (int i = 0; i < o.ns; i++)
		for (int j = 0; j < o.nt; j++) {
			struct txres r;

			run_softdpu(o.sizes[i], (int)o.thr[j], DOCA_GPU_MEM_TYPE_GPU, verify, &r);
			print_res(o.sizes[i], (int)o.thr[j], "gpu", &r);
			if (r.errors != 0 || r.gen_bad != 0 || (verify && r.gen_ok != r.frames) ||
			    (r.frames > 0 && r.bytes != r.frames * o.sizes[i]))
				failed = 1;
			for (int h = 0; h < o.nh; h++) {
				if (o.hsz[h] != o.sizes[i])
					continue;
				run_softdpu(o.sizes[i], (int)o.thr[j], DOCA_GPU_MEM_TYPE_CPU_GPU,
					    verify, &r);
				print_res(o.sizes[i], (int)o.thr[j], "host", &r);
				if (r.errors != 0 || r.gen_bad != 0)
					failed = 1;
			}
		}
	dlclose(mod);
	for (int q = 0; q < MAXQ; q++)
		BCHECK(doca_dev_close(g_devs[q]));
	BCHECK(doca_devinfo_destroy_list(g_devlist));
	CUCHECK(cudaFreeHost((void *)g_phase));
	BCHECK(doca_gpu_destroy(g_gpu));
	if (failed)
		std::printf("FAILED: send errors, damaged frames or byte counts off\n");
	return failed;
}
