/*
 * GPU faults (issue 15), one per process (a faulted CUDA context is the process's):
 *
 *   test_gpu_faults stream  a persistent kernel on a GPU receive queue makes an illegal memory
 *                           access while the CPU proxy feeds it (a sticky stream error):
 *                           the error shows on the kernel's stream within 5 s; the rollback
 *                           plan then drains at once (report.kernel_error = 1, no wait for the
 *                           deadline), stops and destroys the queue, unregisters, frees (the
 *                           driver refuses cuMemFree on a faulted context: the entries are
 *                           dropped, what the driver holds goes with the context), destroys
 *                           the doca_gpu and re-verifies the parent CPU queue at its rate; the
 *                           whole run is bounded (2 s). cudaDeviceReset returns; the driver may
 *                           keep the faulted context until the process ends (CUDA's sticky
 *                           errors), so a new doca_gpu in this process is tried and reported,
 *                           and a new process (this program, "usable") must get a working GPU:
 *                           a new doca_gpu, its memory and a kernel.
 *   test_gpu_faults oom     device memory exhausted under a running persistent kernel: one
 *                           allocation larger than the card and one of pinned host memory
 *                           larger than the machine answer DOCA_ERROR_NO_MEMORY; the card is then
 *                           filled by doca_gpu_mem_alloc until NO_MEMORY (4 GiB, 64 MiB, 1 MiB
 *                           steps); while it is full the kernel's receive loop goes on, a second GPU
 *                           queue's allocation fails with NO_MEMORY and leaves the queue IDLE
 *                           and destroyable, a full rollback of the first queue completes (no
 *                           teardown step needs memory), and doca_gpu_destroy refuses while
 *                           the filler is live (IN_USE); after the filler is freed the card's
 *                           free memory is back within 64 MiB of where it started and a fresh
 *                           allocation works.
 * Exits 77 only when /dev/nvidiactl is absent; any other CUDA failure is a failure.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "ladder_common.h"

#include "ladder_rx_dev.h"
#include "parent_rxq.h"

#include <spawn.h>
#include <sys/wait.h>

#include "softdpu/gpunetio.h"
#include "softdpu/gpunetio_rollback.h"

#define DEADLINE_MS 1000
#define MAX_FILL 4096

struct fault_state {
	unsigned long long heartbeat; /* rounds of the loop */
	uint32_t packets;
	uint32_t faulting; /* 1 right before the illegal access */
};

/* Receive until stop; when *fault is set, write through a pointer the GPU has not mapped. */
__global__ void fault_kernel(struct doca_gpu_eth_rxq *rxq, uint32_t *stop, uint32_t *fault,
			     struct fault_state *st)
{
	__shared__ uint64_t first;
	__shared__ uint32_t n, go_on, do_fault;
	__shared__ struct doca_gpu_dev_eth_rxq_attr attr[32];

	for (;;) {
		if (threadIdx.x == 0) {
			go_on = DOCA_GPUNETIO_VOLATILE(*stop) == 0;
			do_fault = DOCA_GPUNETIO_VOLATILE(*fault) != 0;
		}
		__syncthreads();
		if (!go_on)
			break;
		if (do_fault) {
			if (threadIdx.x == 0) {
				DOCA_GPUNETIO_VOLATILE(st->faulting) = 1;
				__threadfence_system();
				/* an address no allocation of the context covers */
				*(volatile uint32_t *)(uintptr_t)0x10 = 1;
			}
			__syncthreads();
		}
		(void)ladder_rx_block(rxq, 32, &first, &n, attr);
		if (threadIdx.x == 0) {
			st->packets += n;
			DOCA_GPUNETIO_VOLATILE(st->heartbeat) = st->heartbeat + 1;
			__threadfence_system();
		}
		__syncthreads();
	}
}

__global__ void add_one(uint32_t *v)
{
	v[threadIdx.x] += 1;
}

/* What both cases set up: a gen device, the parent queue and its baseline, a GPU queue with a
 * running fault_kernel, every GPU piece in the rollback plan. */
struct setup {
	struct doca_gpu *gpu;
	struct doca_dev *dev;
	struct doca_eth_rxq *parent;
	struct doca_mmap *pmmap;
	struct doca_buf_inventory *inv;
	struct sdp_gpu_rollback *rb;
	struct ladder_rxq q;
	struct ladder_flag stop, fault;
	struct fault_state *st_gpu, *st;
	cudaStream_t stream;
	double base;
};

static void setup_start(struct setup *su, const char *tag)
{
	char decl[128], name[32];
	void *cpu = NULL;
	double end;

	std::memset(su, 0, sizeof(*su));
	su->gpu = ladder_gpu_init();
	std::snprintf(name, sizeof(name), "%s%d", tag, (int)getpid());
	std::snprintf(decl, sizeof(decl), "gen:name=%s,size=128,rate=20000", name);
	setenv("SOFTDPU_DEVICES", decl, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	su->dev = ladder_open(name);
	CHECK(doca_pe_create(&g_pe));
	ladder_host_bufs_start(su->dev, g_mem, sizeof(g_mem), 64, &su->pmmap, &su->inv);
	su->parent = ladder_cpu_rxq_start(su->dev, 64, parent_ok, parent_err, 32, g_pe, su->inv,
					  su->pmmap, g_mem);
	CHECK(sdp_gpu_rollback_create(su->gpu, &su->rb));
	CHECK(sdp_gpu_rollback_set_reverify(su->rb, measure, NULL, 0.2));
	CHECK(sdp_gpu_rollback_baseline(su->rb, &su->base));
	std::printf("parent baseline: %.0f pps\n", su->base);
	if (su->base < 10000)
		FAIL("baseline %.0f pps, about 20000 expected", su->base);

	ladder_rxq_start(su->gpu, su->dev, 256, 2048, DOCA_GPU_MEM_TYPE_GPU,
			 SDP_ETH_OVERFLOW_DEFAULT, &su->q);
	CHECK(sdp_gpu_rollback_add_gpu_mem(su->rb, su->q.pkt_gpu));
	CHECK(sdp_gpu_rollback_add_mmap(su->rb, su->q.mmap));
	CHECK(sdp_gpu_rollback_add_rxq(su->rb, su->q.rxq));
	ladder_flag_alloc(su->gpu, &su->stop);
	ladder_flag_alloc(su->gpu, &su->fault);
	CHECK(sdp_gpu_rollback_add_gpu_mem(su->rb, su->stop.gpu));
	CHECK(sdp_gpu_rollback_add_gpu_mem(su->rb, su->fault.gpu));
	CHECK(doca_gpu_mem_alloc(su->gpu, sizeof(*su->st), 4096, DOCA_GPU_MEM_TYPE_CPU_GPU,
				 (void **)&su->st_gpu, &cpu));
	su->st = (struct fault_state *)cpu;
	std::memset(su->st, 0, sizeof(*su->st));
	CHECK(sdp_gpu_rollback_add_gpu_mem(su->rb, su->st_gpu));
	CHECK_CUDA(cudaStreamCreateWithFlags(&su->stream, cudaStreamNonBlocking));
	CHECK(sdp_gpu_rollback_set_kernel(su->rb, su->stop.cpu, 1, (void *)su->stream,
					  DEADLINE_MS));

	fault_kernel<<<1, 32, 0, su->stream>>>(su->q.gpu_handle, su->stop.gpu, su->fault.gpu,
					       su->st_gpu);
	CHECK_CUDA(cudaGetLastError());
	/* (the gen device feeds its first queue, the parent: the kernel polls an idle queue) */
	end = host_now_s() + 5;
	while (DOCA_GPUNETIO_VOLATILE(su->st->heartbeat) == 0 && host_now_s() < end)
		progress(0.001);
	if (DOCA_GPUNETIO_VOLATILE(su->st->heartbeat) == 0) {
		FAIL("the kernel never started its loop");
		std::exit(1);
	}
}

/* The parent is intact: running and receiving; then the CPU side goes down. */
static void setup_finish(struct setup *su)
{
	enum doca_ctx_states cs = DOCA_CTX_STATE_IDLE;
	uint64_t n0 = g_parent_rx;

	CHECK(doca_ctx_get_state(doca_eth_rxq_as_doca_ctx(su->parent), &cs));
	if (cs != DOCA_CTX_STATE_RUNNING)
		FAIL("the parent queue is not running");
	progress(0.1);
	if (g_parent_rx == n0)
		FAIL("the parent queue stopped receiving");
	sdp_gpu_rollback_destroy(su->rb);
	ladder_cpu_ctx_stop(doca_eth_rxq_as_doca_ctx(su->parent), g_pe);
	CHECK(doca_eth_rxq_destroy(su->parent));
	ladder_host_bufs_destroy(su->pmmap, su->inv);
	CHECK(doca_pe_destroy(g_pe));
	CHECK(doca_dev_close(su->dev));
}

static void check_all_done(const struct sdp_gpu_rollback_report *rep, const char *what)
{
	for (int k = 0; k < SDP_GPU_ROLLBACK_NB_STEPS; k++)
		if (rep->state[k] != SDP_GPU_ROLLBACK_DONE)
			FAIL("%s: step %s is %s (%s)", what,
			     sdp_gpu_rollback_step_name((enum sdp_gpu_rollback_step)k),
			     sdp_gpu_rollback_state_name(rep->state[k]),
			     doca_error_get_name(rep->result[k]));
	if (rep->contexts != 1 || rep->registrations != 1 || rep->gpu_mem != 4 ||
	    rep->gpu_destroyed != 1)
		FAIL("%s: torn down %u queue(s), %u registration(s), %u allocation(s), gpu %d; "
		     "1, 1, 4, 1 expected",
		     what, rep->contexts, rep->registrations, rep->gpu_mem, rep->gpu_destroyed);
}

/*
 * A new doca_gpu, its memory and a kernel on it work (the result read back): true. strict:
 * each failure is a test failure; else it is only said (the first one).
 */
static bool gpu_usable(const char *what, bool strict)
{
	struct doca_gpu *gpu = NULL;
	uint32_t *dev = NULL, host[32];
	char bus[32];
	const char *step = nullptr;
	cudaError_t e;
	doca_error_t s;

	if ((e = cudaDeviceGetPCIBusId(bus, sizeof(bus), 0)) != cudaSuccess)
		step = cudaGetErrorName(e);
	else if ((s = doca_gpu_create(bus, &gpu)) != DOCA_SUCCESS)
		step = doca_error_get_name(s);
	else if ((s = doca_gpu_mem_alloc(gpu, sizeof(host), 4096, DOCA_GPU_MEM_TYPE_GPU,
					 (void **)&dev, NULL)) != DOCA_SUCCESS)
		step = doca_error_get_name(s);
	else if ((e = cudaMemset(dev, 0, sizeof(host))) != cudaSuccess)
		step = cudaGetErrorName(e);
	if (step == nullptr) {
		add_one<<<1, 32>>>(dev);
		if ((e = cudaGetLastError()) != cudaSuccess ||
		    (e = cudaMemcpy(host, dev, sizeof(host), cudaMemcpyDeviceToHost)) !=
			    cudaSuccess)
			step = cudaGetErrorName(e);
	}
	for (int i = 0; step == nullptr && i < 32; i++)
		if (host[i] != 1)
			step = "a wrong result";
	if (dev != NULL)
		(void)doca_gpu_mem_free(gpu, dev);
	if (gpu != NULL && (s = doca_gpu_destroy(gpu)) != DOCA_SUCCESS && step == nullptr)
		step = doca_error_get_name(s);
	if (step != nullptr) {
		if (strict)
			FAIL("%s: the GPU is not usable: %s", what, step);
		else
			std::printf("%s: not usable in this process (%s)\n", what, step);
		return false;
	}
	std::printf("%s: a new doca_gpu, its memory and a kernel work\n", what);
	return true;
}

/* The same in a new process (this program, "usable"), waited for (60 s at most). */
static void check_gpu_usable_new_process(void)
{
	char self[] = "/proc/self/exe", arg[] = "usable";
	char *args[] = {self, arg, nullptr};
	int status = 0;
	pid_t pid;

	if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, args, environ) != 0) {
		FAIL("spawning a new process failed");
		return;
	}
	for (int i = 0; i < 60000; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				FAIL("a new process could not use the GPU (status %#x)", status);
			return;
		}
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	FAIL("a new process did not finish with the GPU within 60 s");
}

static int case_stream(void)
{
	struct sdp_gpu_rollback_report rep;
	struct setup su;
	cudaError_t e = cudaSuccess;
	double t0, err_ms, took_ms, end;
	doca_error_t s;

	setup_start(&su, "gfs");
	std::printf("kernel running: %llu receive rounds\n",
		    DOCA_GPUNETIO_VOLATILE(su.st->heartbeat));

	/* the fault, and how soon the stream shows it */
	t0 = host_now_s();
	DOCA_GPUNETIO_VOLATILE(*su.fault.cpu) = 1;
	end = t0 + 5;
	while (host_now_s() < end) {
		e = cudaStreamQuery(su.stream);
		if (e != cudaErrorNotReady)
			break;
		progress(0.001);
	}
	err_ms = (host_now_s() - t0) * 1e3;
	std::printf("stream: %s after %.1f ms (kernel reached the access: %u)\n",
		    cudaGetErrorName(e), err_ms, DOCA_GPUNETIO_VOLATILE(su.st->faulting));
	if (e == cudaSuccess || e == cudaErrorNotReady) {
		FAIL("the stream shows no error 5 s after the fault (%s)", cudaGetErrorName(e));
		return 1;
	}
	/* a moment of the proxy feeding a dead context: it must neither spin nor stop the parent */
	progress(0.2);

	t0 = host_now_s();
	s = sdp_gpu_rollback_run(su.rb, &rep);
	took_ms = (host_now_s() - t0) * 1e3;
	std::printf("rollback: %s after %.0f ms (drain %.1f ms, kernel_error %d, kernel_running "
		    "%d); %u queue(s), %u registration(s), %u allocation(s), gpu destroyed %d; "
		    "re-verify %.0f pps (baseline %.0f)\n",
		    doca_error_get_name(s), took_ms, rep.drain_ms, rep.kernel_error,
		    rep.kernel_running, rep.contexts, rep.registrations, rep.gpu_mem,
		    rep.gpu_destroyed, rep.reverify_pps[0], rep.baseline_pps);
	CHECK_STATUS(s, DOCA_SUCCESS);
	if (rep.kernel_error != 1 || rep.kernel_running != 0)
		FAIL("the report does not say the kernel ended with an error");
	if (rep.drain_ms > 100)
		FAIL("the drain took %.1f ms for a stream that had already failed", rep.drain_ms);
	if (took_ms > 2000)
		FAIL("the rollback took %.0f ms (bound 2000 ms)", took_ms);
	check_all_done(&rep, "rollback after the fault");
	setup_finish(&su);

	/*
	 * The context is lost for good. cudaDeviceReset returns; whether this process gets a
	 * working GPU back is the driver's choice (said, not checked); a new process must.
	 */
	(void)cudaStreamDestroy(su.stream);
	CHECK_CUDA(cudaDeviceReset());
	(void)gpu_usable("this process after cudaDeviceReset", false);
	check_gpu_usable_new_process();
	std::printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}

static int case_oom(void)
{
	static void *fill[MAX_FILL];
	static const size_t steps[] = {(size_t)4 << 30, (size_t)64 << 20, (size_t)1 << 20};
	struct sdp_gpu_rollback_report rep;
	struct doca_eth_rxq *q2 = NULL;
	enum doca_ctx_states cs = DOCA_CTX_STATE_RUNNING;
	size_t free0 = 0, total = 0, free1 = 0, free2 = 0, filled = 0;
	unsigned long long hb;
	void *p = NULL, *cpu = NULL;
	struct setup su;
	int nfill = 0;
	doca_error_t s;
	double t0;

	setup_start(&su, "gfm");
	CHECK_CUDA(cudaMemGetInfo(&free0, &total));
	std::printf("card: %zu MiB free of %zu MiB\n", free0 >> 20, total >> 20);

	/* one allocation bigger than the card, one of pinned host memory bigger than the machine */
	CHECK_STATUS(doca_gpu_mem_alloc(su.gpu, total * 2, 4096, DOCA_GPU_MEM_TYPE_GPU, &p, NULL),
		     DOCA_ERROR_NO_MEMORY);
	if (p != NULL)
		FAIL("a refused allocation wrote its pointer");
	CHECK_STATUS(doca_gpu_mem_alloc(su.gpu, (size_t)1 << 44, 4096, DOCA_GPU_MEM_TYPE_CPU_GPU,
					&p, &cpu),
		     DOCA_ERROR_NO_MEMORY);

	/* fill the card */
	t0 = host_now_s();
	for (size_t k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
		while (nfill < MAX_FILL) {
			p = NULL;
			s = doca_gpu_mem_alloc(su.gpu, steps[k], 4096, DOCA_GPU_MEM_TYPE_GPU, &p,
					       NULL);
			if (s == DOCA_ERROR_NO_MEMORY)
				break;
			if (s != DOCA_SUCCESS) {
				FAIL("filling: %s, NO_MEMORY expected", doca_error_get_name(s));
				break;
			}
			fill[nfill++] = p;
			filled += steps[k];
		}
	}
	CHECK_CUDA(cudaMemGetInfo(&free1, &total));
	std::printf("filled %zu MiB in %d allocations (%.1f s); %zu MiB free\n", filled >> 20,
		    nfill, host_now_s() - t0, free1 >> 20);
	if (nfill == MAX_FILL)
		FAIL("the card did not fill up within %d allocations", MAX_FILL);
	if (free1 > ((size_t)64 << 20))
		FAIL("%zu MiB still free after NO_MEMORY for 1 MiB", free1 >> 20);

	/* the running kernel does not notice: its receive loop goes on */
	hb = DOCA_GPUNETIO_VOLATILE(su.st->heartbeat);
	progress(0.2);
	if (DOCA_GPUNETIO_VOLATILE(su.st->heartbeat) == hb)
		FAIL("the kernel's receive loop stopped when the card filled up");
	std::printf("kernel while full: %llu receive rounds in 0.2 s\n",
		    DOCA_GPUNETIO_VOLATILE(su.st->heartbeat) - hb);

	/* a second GPU queue cannot get its buffer: NO_MEMORY, the queue IDLE and destroyable */
	CHECK(doca_eth_rxq_create(su.dev, 256, 2048, &q2));
	CHECK(doca_eth_rxq_set_type(q2, DOCA_ETH_RXQ_TYPE_CYCLIC));
	p = NULL;
	CHECK_STATUS(
		doca_gpu_mem_alloc(su.gpu, (size_t)4 << 20, 65536, DOCA_GPU_MEM_TYPE_GPU, &p, NULL),
		DOCA_ERROR_NO_MEMORY);
	CHECK(doca_ctx_set_datapath_on_gpu(doca_eth_rxq_as_doca_ctx(q2), su.gpu));
	s = doca_ctx_start(doca_eth_rxq_as_doca_ctx(q2)); /* no packet buffer: refused */
	if (s == DOCA_SUCCESS)
		FAIL("a GPU queue without a packet buffer started");
	CHECK(doca_ctx_get_state(doca_eth_rxq_as_doca_ctx(q2), &cs));
	if (cs != DOCA_CTX_STATE_IDLE)
		FAIL("the refused queue is in state %d, not IDLE", (int)cs);
	CHECK(doca_eth_rxq_destroy(q2));

	/* the doca_gpu refuses destruction while the filler lives */
	CHECK_STATUS(doca_gpu_destroy(su.gpu), DOCA_ERROR_IN_USE);

	/* the rollback of the first queue, on a full card (teardown allocates nothing); its
	 * destroy-gpu step is the one that cannot pass until the filler is gone */
	s = sdp_gpu_rollback_run(su.rb, &rep);
	std::printf("rollback on a full card: %s at step %s (drain %.1f ms)\n",
		    doca_error_get_name(s),
		    rep.failed_step < SDP_GPU_ROLLBACK_NB_STEPS ?
			    sdp_gpu_rollback_step_name(rep.failed_step) :
			    "none",
		    rep.drain_ms);
	CHECK_STATUS(s, DOCA_ERROR_IN_USE);
	if (rep.failed_step != SDP_GPU_ROLLBACK_DESTROY_GPU || rep.contexts != 1 ||
	    rep.registrations != 1 || rep.gpu_mem != 4 || rep.gpu_destroyed != 0 ||
	    rep.kernel_error != 0)
		FAIL("the rollback on a full card did not tear down everything up to destroy-gpu");
	for (int i = 0; i < nfill; i++)
		CHECK(doca_gpu_mem_free(su.gpu, fill[i]));
	s = sdp_gpu_rollback_run(su.rb, &rep);
	CHECK_STATUS(s, DOCA_SUCCESS);
	check_all_done(&rep, "rollback after the filler was freed");
	setup_finish(&su);
	CHECK_CUDA(cudaStreamDestroy(su.stream));
	CHECK_CUDA(cudaMemGetInfo(&free2, &total));
	std::printf("after: %zu MiB free (%zu MiB before)\n", free2 >> 20, free0 >> 20);
	if (free2 + ((size_t)64 << 20) < free0)
		FAIL("%zu MiB less free than before", (free0 - free2) >> 20);
	(void)gpu_usable("after the card was full", true);
	std::printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0); /* the lines land in the log even if a wait hangs */
	if (argc == 2 && std::strcmp(argv[1], "stream") == 0)
		return case_stream();
	if (argc == 2 && std::strcmp(argv[1], "oom") == 0)
		return case_oom();
	if (argc == 2 && std::strcmp(argv[1], "usable") == 0)
		return gpu_usable("a new process after the fault", true) && failures == 0 ? 0 : 1;
	std::fprintf(stderr, "usage: test_gpu_faults stream|oom|usable\n");
	return 2;
}
