/*
 * The GPUNetIO rollback helper (include/softdpu/gpunetio_rollback.h) against a kernel that will
 * not stop: a persistent kernel polls a GPU receive queue and sees the stop flag, but keeps
 * running until a second, release flag is set.
 *  - the rollback (drain deadline 300 ms) answers DOCA_ERROR_TIME_OUT within the deadline plus
 *    a margin, the report says the kernel still runs and that nothing was torn down; and
 *    nothing was: the queue is still RUNNING with its GPU handle, the kernel's heartbeat (in
 *    memory of the plan) keeps counting, the stream is still busy, the doca_gpu still answers
 *    and still refuses destruction for its live memory;
 *  - once released, the same plan's next run completes: one queue stopped and destroyed, one
 *    mmap unregistered, every allocation freed, the doca_gpu destroyed, and the parent Ethernet
 *    queue (a CPU data path queue of the same gen device, never torn down) receives at its
 *    earlier rate (tolerance 20 %).
 * Exits 77 only when /dev/nvidiactl is absent; any other CUDA failure is a failure.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "ladder_common.h"

#include "ladder_rx_dev.h"
#include "parent_rxq.h"

#include "softdpu/gpunetio.h"
#include "softdpu/gpunetio_rollback.h"

#define DEADLINE_MS 300

struct hang_state {
	unsigned long long heartbeat; /* rounds of the loop */
	uint32_t saw_stop;	      /* 1 once the stop flag was seen */
	uint32_t packets;
};

__global__ void hang_kernel(struct doca_gpu_eth_rxq *rxq, uint32_t *stop, uint32_t *release,
			    struct hang_state *st)
{
	__shared__ uint64_t first;
	__shared__ uint32_t n, go_on;
	__shared__ struct doca_gpu_dev_eth_rxq_attr attr[32];

	for (;;) {
		if (threadIdx.x == 0) {
			if (DOCA_GPUNETIO_VOLATILE(*stop) != 0)
				DOCA_GPUNETIO_VOLATILE(st->saw_stop) = 1;
			/* the stop flag is ignored: only the release flag ends the loop */
			go_on = DOCA_GPUNETIO_VOLATILE(*release) == 0;
		}
		__syncthreads();
		if (!go_on)
			break;
		(void)ladder_rx_block(rxq, 32, &first, &n, attr);
		if (threadIdx.x == 0) {
			st->packets += n;
			DOCA_GPUNETIO_VOLATILE(st->heartbeat) = st->heartbeat + 1;
			__threadfence_system();
		}
		__syncthreads();
	}
}

int main(void)
{
	struct doca_gpu *gpu = ladder_gpu_init();
	struct sdp_gpu_rollback *rb = NULL;
	struct sdp_gpu_rollback_report rep;
	struct ladder_rxq q;
	struct ladder_flag stop, release;
	struct hang_state *st_gpu = NULL, *st = NULL;
	struct doca_mmap *pmmap = NULL;
	struct doca_buf_inventory *inv = NULL;
	struct doca_eth_rxq *parent;
	struct doca_gpu_eth_rxq *h = NULL;
	struct doca_dev *dev;
	enum doca_ctx_states cs = DOCA_CTX_STATE_IDLE;
	cudaStream_t stream;
	unsigned long long hb0;
	char decl[128], name[32];
	double base = 0, t0, took_ms, end;
	struct sdp_gpu_info info;
	doca_error_t s;

	setvbuf(stdout, NULL, _IOLBF, 0); /* the lines land in the log even if a wait hangs */
	std::snprintf(name, sizeof(name), "rbg%d", (int)getpid());
	std::snprintf(decl, sizeof(decl), "gen:name=%s,size=128,rate=20000", name);
	setenv("SOFTDPU_DEVICES", decl, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	dev = ladder_open(name);
	CHECK(doca_pe_create(&g_pe));

	/* the parent Ethernet queue first (the device's default queue) and its baseline */
	ladder_host_bufs_start(dev, g_mem, sizeof(g_mem), 64, &pmmap, &inv);
	parent = ladder_cpu_rxq_start(dev, 64, parent_ok, parent_err, 32, g_pe, inv, pmmap, g_mem);
	CHECK(sdp_gpu_rollback_create(gpu, &rb));
	CHECK(sdp_gpu_rollback_set_reverify(rb, measure, NULL, 0.2));
	CHECK(sdp_gpu_rollback_baseline(rb, &base));
	std::printf("parent baseline: %.0f pps\n", base);
	if (base < 10000)
		FAIL("baseline %.0f pps, about 20000 expected", base);

	/* the GPU part, each piece recorded in the plan in the order it is made */
	ladder_rxq_start(gpu, dev, 256, 2048, DOCA_GPU_MEM_TYPE_GPU, SDP_ETH_OVERFLOW_DEFAULT, &q);
	CHECK(sdp_gpu_rollback_add_gpu_mem(rb, q.pkt_gpu));
	CHECK(sdp_gpu_rollback_add_mmap(rb, q.mmap));
	CHECK(sdp_gpu_rollback_add_rxq(rb, q.rxq));
	ladder_flag_alloc(gpu, &stop);
	ladder_flag_alloc(gpu, &release);
	CHECK(sdp_gpu_rollback_add_gpu_mem(rb, stop.gpu));
	CHECK(sdp_gpu_rollback_add_gpu_mem(rb, release.gpu));
	{
		void *cpu = NULL;

		CHECK(doca_gpu_mem_alloc(gpu, sizeof(*st), 4096, DOCA_GPU_MEM_TYPE_CPU_GPU,
					 (void **)&st_gpu, &cpu));
		st = (struct hang_state *)cpu;
		std::memset(st, 0, sizeof(*st));
	}
	CHECK(sdp_gpu_rollback_add_gpu_mem(rb, st_gpu));
	CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	CHECK(sdp_gpu_rollback_set_kernel(rb, stop.cpu, 1, (void *)stream, DEADLINE_MS));
	CHECK_STATUS(sdp_gpu_rollback_set_kernel(rb, stop.cpu, 1, (void *)stream, 0),
		     DOCA_ERROR_INVALID_VALUE);

	hang_kernel<<<1, 32, 0, stream>>>(q.gpu_handle, stop.gpu, release.gpu, st_gpu);
	CHECK_CUDA(cudaGetLastError());
	end = host_now_s() + 5;
	while (DOCA_GPUNETIO_VOLATILE(st->heartbeat) == 0 && host_now_s() < end)
		progress(0.001);
	if (DOCA_GPUNETIO_VOLATILE(st->heartbeat) == 0)
		FAIL("the kernel never started its loop");

	/* 1: the kernel ignores the stop flag: the rollback fails closed */
	t0 = host_now_s();
	s = sdp_gpu_rollback_run(rb, &rep);
	took_ms = (host_now_s() - t0) * 1e3;
	std::printf("run 1: %s after %.0f ms (drain %.0f ms), kernel_running %d\n",
		    doca_error_get_name(s), took_ms, rep.drain_ms, rep.kernel_running);
	CHECK_STATUS(s, DOCA_ERROR_TIME_OUT);
	if (took_ms < DEADLINE_MS || took_ms > DEADLINE_MS + 500)
		FAIL("run 1 took %.0f ms; the deadline is %d ms", took_ms, DEADLINE_MS);
	if (rep.kernel_running != 1 || rep.failed_step != SDP_GPU_ROLLBACK_DRAIN ||
	    rep.state[SDP_GPU_ROLLBACK_STOP_FLAG] != SDP_GPU_ROLLBACK_DONE ||
	    rep.state[SDP_GPU_ROLLBACK_DRAIN] != SDP_GPU_ROLLBACK_FAILED ||
	    rep.result[SDP_GPU_ROLLBACK_DRAIN] != DOCA_ERROR_TIME_OUT)
		FAIL("run 1: the report does not say 'drain failed, kernel running'");
	for (int k = SDP_GPU_ROLLBACK_STOP_CONTEXTS; k < SDP_GPU_ROLLBACK_NB_STEPS; k++)
		if (rep.state[k] != SDP_GPU_ROLLBACK_PENDING)
			FAIL("run 1: step %s is %s, not pending",
			     sdp_gpu_rollback_step_name((enum sdp_gpu_rollback_step)k),
			     sdp_gpu_rollback_state_name(rep.state[k]));
	if (rep.contexts != 0 || rep.registrations != 0 || rep.gpu_mem != 0 || rep.gpu_destroyed)
		FAIL("run 1 tore something down (%u queues, %u registrations, %u allocations, gpu "
		     "%d)",
		     rep.contexts, rep.registrations, rep.gpu_mem, rep.gpu_destroyed);
	if (DOCA_GPUNETIO_VOLATILE(st->saw_stop) != 1)
		FAIL("the kernel never saw the stop flag");
	/* and nothing was: queue, handle, memory, stream, doca_gpu */
	CHECK(doca_ctx_get_state(doca_eth_rxq_as_doca_ctx(q.rxq), &cs));
	if (cs != DOCA_CTX_STATE_RUNNING)
		FAIL("the GPU queue is no longer running (state %d)", (int)cs);
	CHECK_STATUS(doca_eth_rxq_get_gpu_handle(q.rxq, &h), DOCA_SUCCESS);
	hb0 = DOCA_GPUNETIO_VOLATILE(st->heartbeat);
	progress(0.05);
	if (DOCA_GPUNETIO_VOLATILE(st->heartbeat) == hb0)
		FAIL("the kernel's heartbeat stopped");
	if (cudaStreamQuery(stream) != cudaErrorNotReady)
		FAIL("the stream is not busy any more");
	/* (no allocation here: cuMemFree would wait for the kernel that never ends) */
	CHECK_STATUS(sdp_gpu_get_info(gpu, &info), DOCA_SUCCESS);
	CHECK_STATUS(doca_gpu_destroy(gpu), DOCA_ERROR_IN_USE); /* its memory is all still there */
	/* a second run while it still runs: the same answer */
	CHECK_STATUS(sdp_gpu_rollback_run(rb, &rep), DOCA_ERROR_TIME_OUT);
	if (rep.contexts != 0 || rep.gpu_mem != 0)
		FAIL("run 2 tore something down");

	/* 2: released, the kernel ends; the same plan resumes and completes */
	DOCA_GPUNETIO_VOLATILE(*release.cpu) = 1;
	s = sdp_gpu_rollback_run(rb, &rep);
	std::printf("run 3: %s, drain %.1f ms; %u queue(s), %u registration(s), %u allocation(s), "
		    "gpu destroyed %d; re-verify %.0f pps (baseline %.0f, %d attempt(s))\n",
		    doca_error_get_name(s), rep.drain_ms, rep.contexts, rep.registrations,
		    rep.gpu_mem, rep.gpu_destroyed, rep.reverify_pps[0], rep.baseline_pps,
		    rep.reverify_attempts);
	CHECK_STATUS(s, DOCA_SUCCESS);
	for (int k = 0; k < SDP_GPU_ROLLBACK_NB_STEPS; k++)
		if (rep.state[k] != SDP_GPU_ROLLBACK_DONE)
			FAIL("run 3: step %s is %s",
			     sdp_gpu_rollback_step_name((enum sdp_gpu_rollback_step)k),
			     sdp_gpu_rollback_state_name(rep.state[k]));
	if (rep.kernel_running != 0 || rep.kernel_error != 0 || rep.contexts != 1 ||
	    rep.registrations != 1 || rep.gpu_mem != 4 || rep.gpu_destroyed != 1)
		FAIL("run 3: not everything was torn down exactly once");
	if (cudaStreamQuery(stream) != cudaSuccess)
		FAIL("the stream is still busy after the rollback");
	/* the parent is intact: running, and still receiving */
	CHECK(doca_ctx_get_state(doca_eth_rxq_as_doca_ctx(parent), &cs));
	if (cs != DOCA_CTX_STATE_RUNNING)
		FAIL("the parent queue is not running");
	sdp_gpu_rollback_destroy(rb);

	CHECK_CUDA(cudaStreamDestroy(stream));
	ladder_cpu_ctx_stop(doca_eth_rxq_as_doca_ctx(parent), g_pe);
	CHECK(doca_eth_rxq_destroy(parent));
	ladder_host_bufs_destroy(pmmap, inv);
	CHECK(doca_pe_destroy(g_pe));
	CHECK(doca_dev_close(dev));
	std::printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}
