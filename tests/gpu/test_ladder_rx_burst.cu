/*
 * GPU ladder step 2: bursts from the gen device into a GPU receive queue (packet buffer in
 * device memory, 1024 slots; 256 for the late CYCLIC run), a persistent kernel (block scope, 256 threads) marking each gen
 * sequence number it sees in a per-sequence counter in device memory.
 *  - back-pressure (sdp_eth_rxq_set_overflow BACKPRESSURE), 1000 and 10^7 packets: every
 *    sequence number exactly once, nothing dropped or overwritten, every payload header intact
 *    (magic, sequence in range, flow, length);
 *  - CYCLIC, 1000 packets into a kernel that starts after all were made: the gaps (sequence
 *    numbers never seen) equal the queue's overwrite counter (plus drops, 0), the survivors are
 *    the newest;
 *  - CYCLIC, 10^7 packets with the kernel running: gaps == overwrites + drops, no duplicates.
 * Exits 77 only when /dev/nvidiactl is absent; any other CUDA failure is a failure.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "ladder_common.h"

#include "ladder_rx_dev.h"

#include "sdp_gen_payload.h"

#define SLOTS 1024
#define LATE_SLOTS 256
#define FRAME 64
#define THREADS 256
#define BIG 10000000ull

struct burst_result {
	unsigned long long packets; /* packets seen */
	unsigned long long bad;	    /* wrong length, magic, flow or a sequence out of range */
	unsigned long long dups;    /* a sequence seen a second time */
	unsigned int error;	    /* a receive call failed */
};

static __device__ uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int k = 0; k < 8; k++)
		v = v << 8 | p[k];
	return v;
}

__global__ void burst_kernel(struct doca_gpu_eth_rxq *rxq, uint32_t *exit_cond, uint8_t *seen,
			     uint64_t count, struct burst_result *res)
{
	__shared__ uint64_t first;
	__shared__ uint32_t n, stop;
	__shared__ struct doca_gpu_dev_eth_rxq_attr attr[THREADS * 4];
	__shared__ unsigned long long b_bad, b_dups;

	for (;;) {
		doca_error_t ret;
		uint64_t f;
		uint32_t m;

		if (threadIdx.x == 0) {
			stop = DOCA_GPUNETIO_VOLATILE(*exit_cond);
			b_bad = 0;
			b_dups = 0;
		}
		__syncthreads();
		if (stop)
			break;
		ret = ladder_rx_block(rxq, THREADS * 4, &first, &n, attr);
		f = first;
		m = n;
		if (ret != DOCA_SUCCESS && threadIdx.x == 0) {
			res->error = (unsigned int)ret;
			DOCA_GPUNETIO_VOLATILE(*exit_cond) = 1;
		}
		for (uint32_t i = threadIdx.x; i < m; i += blockDim.x) {
			const uint8_t *p =
				(const uint8_t *)doca_gpu_dev_eth_rxq_get_pkt_addr(rxq, f + i);
			const uint8_t *pl = p + SDP_GEN_L2L3L4_LEN;
			uint32_t magic = (uint32_t)pl[4] << 24 | (uint32_t)pl[5] << 16 |
					 (uint32_t)pl[6] << 8 | pl[7];
			uint64_t seq = be64(pl + SDP_GEN_OFF_SEQ);

			if (attr[i].bytes != FRAME || magic != SDP_GEN_MAGIC || seq >= count ||
			    pl[SDP_GEN_OFF_FLOW] != 0 || pl[SDP_GEN_OFF_FLOW + 1] != 0) {
				atomicAdd(&b_bad, 1ull);
				continue;
			}
			/* one byte per sequence number; a second sighting is a duplicate */
			if (atomicAdd((unsigned int *)(seen + (seq & ~3ull)),
				      1u << (8 * (seq & 3))) &
			    (0xffu << (8 * (seq & 3))))
				atomicAdd(&b_dups, 1ull);
		}
		__syncthreads();
		if (threadIdx.x == 0 && m > 0) {
			res->bad += b_bad;
			res->dups += b_dups;
			__threadfence_system();
			DOCA_GPUNETIO_VOLATILE(res->packets) = res->packets + m;
			__threadfence_system();
		}
		__syncthreads();
	}
}

static struct doca_gpu *g_gpu;
static cudaStream_t g_stream;

/*
 * One run: a fresh gen device (its port opens with the queue, so the sequence starts at 0),
 * count packets, the given overflow mode; late: the kernel starts only once the engine took
 * every packet.
 */
static void run(const char *gen, uint64_t count, enum sdp_eth_overflow mode, bool late)
{
	struct doca_dev *dev = ladder_open(gen);
	struct burst_result *res;
	struct sdp_eth_rxq_counters c;
	struct sdp_eth_port_counters pc;
	struct ladder_flag flag;
	struct ladder_rxq q;
	uint8_t *seen = NULL, *seen_host;
	uint64_t missing = 0, present_from = count, seen_n = 0;
	double t0, end, secs;
	size_t seen_size = (count + 3) & ~3ull;
	bool cyclic = mode == SDP_ETH_OVERFLOW_CYCLIC;
	uint32_t slots = late ? LATE_SLOTS : SLOTS; /* late: fewer slots than packets */

	CHECK_CUDA(cudaMallocHost(&res, sizeof(*res)));
	std::memset(res, 0, sizeof(*res));
	CHECK_CUDA(cudaMalloc(&seen, seen_size));
	CHECK_CUDA(cudaMemsetAsync(seen, 0, seen_size, g_stream));
	CHECK_CUDA(cudaStreamSynchronize(g_stream));
	ladder_flag_alloc(g_gpu, &flag);

	t0 = host_now_s();
	ladder_rxq_start(g_gpu, dev, slots, 2048, DOCA_GPU_MEM_TYPE_GPU, mode, &q);
	if (late) {
		/* the engine drains the generator into the ring, overwriting as it goes */
		end = host_now_s() + 30;
		do {
			usleep(10000);
			CHECK(sdp_eth_dev_get_port_counters(dev, &pc));
		} while (pc.rx_packets < count && host_now_s() < end);
		usleep(100000);
	}
	burst_kernel<<<1, THREADS, 0, g_stream>>>(q.gpu_handle, flag.gpu, seen, count, res);
	CHECK_CUDA(cudaGetLastError());

	/* done when every packet is seen, overwritten or dropped (bounded) */
	end = host_now_s() + (count > 100000 ? 240 : 30);
	for (;;) {
		CHECK(sdp_eth_rxq_get_counters(q.rxq, &c));
		if (DOCA_GPUNETIO_VOLATILE(res->packets) + c.overwrites + c.drops >= count ||
		    DOCA_GPUNETIO_VOLATILE(res->error) != 0 || host_now_s() > end)
			break;
		usleep(2000);
	}
	usleep(100000); /* nothing more may come */
	DOCA_GPUNETIO_VOLATILE(*flag.cpu) = 1;
	if (!ladder_stream_wait(g_stream, 5)) {
		FAIL("the kernel did not stop within 5 s of its exit flag");
		std::exit(1);
	}
	secs = host_now_s() - t0;
	CHECK(sdp_eth_rxq_get_counters(q.rxq, &c));

	seen_host = (uint8_t *)std::malloc(seen_size);
	if (seen_host == NULL) {
		FAIL("out of memory");
		std::exit(1);
	}
	CHECK_CUDA(cudaMemcpy(seen_host, seen, seen_size, cudaMemcpyDeviceToHost));
	for (uint64_t s = 0; s < count; s++) {
		if (seen_host[s] == 0) {
			missing++;
		} else {
			seen_n++;
			if (present_from == count)
				present_from = s;
		}
	}
	std::printf("%s %llu: kernel saw %llu (bad %llu, dups %llu, error %u), missing %llu; "
		    "queue: ring packets %llu, overwrites %llu, drops %llu, ring-full %llu; "
		    "%.2f s, %.2f Mpps\n",
		    cyclic ? (late ? "CYCLIC-late" : "CYCLIC") : "BACKPRESSURE",
		    (unsigned long long)count, res->packets, res->bad, res->dups, res->error,
		    (unsigned long long)missing, (unsigned long long)c.ring_packets,
		    (unsigned long long)c.overwrites, (unsigned long long)c.drops,
		    (unsigned long long)c.ring_full, secs, (double)res->packets / secs / 1e6);
	if (res->error != 0 || res->bad != 0 || res->dups != 0)
		FAIL("packets seen wrong");
	if (res->packets != seen_n)
		FAIL("kernel count %llu != distinct sequences %llu", res->packets,
		     (unsigned long long)seen_n);
	if (!cyclic) {
		if (missing != 0 || res->packets != count || c.overwrites != 0 || c.drops != 0)
			FAIL("back-pressure: every sequence number exactly once expected");
	} else {
		if (missing != c.overwrites + c.drops)
			FAIL("CYCLIC: gaps %llu != overwrites %llu + drops %llu",
			     (unsigned long long)missing, (unsigned long long)c.overwrites,
			     (unsigned long long)c.drops);
		if (late && (seen_n != slots || present_from != count - slots || c.overwrites == 0))
			FAIL("CYCLIC late start: expected the newest %u (first %llu)", slots,
			     (unsigned long long)present_from);
	}
	std::free(seen_host);
	ladder_rxq_destroy(g_gpu, &q);
	CHECK(doca_gpu_mem_free(g_gpu, flag.gpu));
	CHECK(doca_dev_close(dev));
	CHECK_CUDA(cudaFree(seen));
	CHECK_CUDA(cudaFreeHost(res));
}

int main(void)
{
	char decls[512], g[4][32];
	int pid = (int)getpid();

	g_gpu = ladder_gpu_init();
	for (int i = 0; i < 4; i++)
		std::snprintf(g[i], sizeof(g[i]), "l2g%d_%d", i, pid);
	std::snprintf(decls, sizeof(decls),
		      "gen:name=%s,size=%d,count=1000;gen:name=%s,size=%d,count=%llu;"
		      "gen:name=%s,size=%d,count=1000;gen:name=%s,size=%d,count=%llu",
		      g[0], FRAME, g[1], FRAME, BIG, g[2], FRAME, g[3], FRAME, BIG);
	setenv("SOFTDPU_DEVICES", decls, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	CHECK_CUDA(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));

	run(g[0], 1000, SDP_ETH_OVERFLOW_BACKPRESSURE, false);
	run(g[1], BIG, SDP_ETH_OVERFLOW_BACKPRESSURE, false);
	run(g[2], 1000, SDP_ETH_OVERFLOW_CYCLIC, true);
	run(g[3], BIG, SDP_ETH_OVERFLOW_CYCLIC, false);

	CHECK_CUDA(cudaStreamDestroy(g_stream));
	CHECK(doca_gpu_destroy(g_gpu));
	std::printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}
