/*
 * GPU ladder step 1: one packet in, one completion seen by a persistent kernel, bytes checked.
 *  - gen device with count=1 (128-byte frames): the kernel (block scope, 32 threads, attributes
 *    on) sees exactly one packet, 128 bytes, and its gen payload (magic, seq 0, check, fill) is
 *    intact; nothing more arrives in the next 300 ms; the queue counted one ring packet.
 *  - loop pair: a CPU send queue on one end sends one frame; the GPU queue on the other end
 *    (packet buffer in device memory, then in mapped host memory) sees exactly that frame, byte
 *    for byte.
 * Exits 77 only when /dev/nvidiactl is absent; any other CUDA failure is a failure.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "ladder_common.h"

#include "ladder_rx_dev.h"

#include "sdp_gen_payload.h"

#define FRAME_LEN 128

struct rx_one_result {
	uint32_t packets;	      /* packets the kernel saw */
	uint32_t calls;		      /* receive calls that returned */
	uint32_t bytes;		      /* attr bytes of the first packet */
	uint32_t error;		      /* a receive call's error */
	uint8_t frame[FRAME_LEN * 2]; /* the first packet's bytes */
};

__global__ void rx_one_kernel(struct doca_gpu_eth_rxq *rxq, uint32_t *exit_cond,
			      struct rx_one_result *res)
{
	__shared__ uint64_t first;
	__shared__ uint32_t n, stop;
	__shared__ struct doca_gpu_dev_eth_rxq_attr attr[32];

	for (;;) {
		doca_error_t ret;

		if (threadIdx.x == 0)
			stop = DOCA_GPUNETIO_VOLATILE(*exit_cond);
		__syncthreads();
		if (stop)
			break;
		ret = ladder_rx_block(rxq, 32, &first, &n, attr);
		if (threadIdx.x == 0) {
			if (ret != DOCA_SUCCESS) {
				res->error = (uint32_t)ret;
				DOCA_GPUNETIO_VOLATILE(*exit_cond) = 1;
			}
			res->calls++;
			if (n > 0 && res->packets == 0) {
				const uint8_t *p =
					(const uint8_t *)doca_gpu_dev_eth_rxq_get_pkt_addr(rxq,
											   first);
				uint32_t len = attr[0].bytes < sizeof(res->frame) ?
						       attr[0].bytes :
						       sizeof(res->frame);

				res->bytes = attr[0].bytes;
				for (uint32_t k = 0; k < len; k++)
					res->frame[k] = p[k];
			}
			res->packets += n;
			__threadfence_system();
		}
		__syncthreads();
	}
}

static struct doca_gpu *g_gpu;
static cudaStream_t g_stream;

/* Run the kernel on q until one packet (or 10 s), then 300 ms more; the result is in res. */
static void run_kernel(struct ladder_rxq *q, struct rx_one_result *res, void (*send)(void))
{
	struct ladder_flag flag;
	double end;

	ladder_flag_alloc(g_gpu, &flag);
	std::memset(res, 0, sizeof(*res));
	rx_one_kernel<<<1, 32, 0, g_stream>>>(q->gpu_handle, flag.gpu, res);
	CHECK_CUDA(cudaGetLastError());
	if (send != NULL)
		send();
	end = host_now_s() + 10;
	while (DOCA_GPUNETIO_VOLATILE(res->packets) == 0 && host_now_s() < end)
		usleep(1000);
	usleep(300000);
	DOCA_GPUNETIO_VOLATILE(*flag.cpu) = 1;
	if (!ladder_stream_wait(g_stream, 5)) {
		FAIL("the kernel did not stop within 5 s of its exit flag");
		std::exit(1);
	}
	CHECK(doca_gpu_mem_free(g_gpu, flag.gpu));
	if (res->error != 0)
		FAIL("receive failed: %s", doca_error_get_name((doca_error_t)res->error));
	if (res->calls == 0)
		FAIL("no receive call returned");
}

static void test_gen(const char *name)
{
	struct doca_dev *dev = ladder_open(name);
	struct rx_one_result *res;
	struct sdp_eth_rxq_counters c;
	struct ladder_rxq q;
	const uint8_t *pl;
	uint32_t check, magic;
	uint64_t seq = 0;
	bool fill_ok = true;

	CHECK_CUDA(cudaMallocHost(&res, sizeof(*res)));
	ladder_rxq_start(g_gpu, dev, 256, 2048, DOCA_GPU_MEM_TYPE_GPU, SDP_ETH_OVERFLOW_DEFAULT,
			 &q);
	run_kernel(&q, res, NULL);
	CHECK(sdp_eth_rxq_get_counters(q.rxq, &c));
	pl = res->frame + SDP_GEN_L2L3L4_LEN;
	check = (uint32_t)pl[0] << 24 | (uint32_t)pl[1] << 16 | (uint32_t)pl[2] << 8 | pl[3];
	magic = (uint32_t)pl[4] << 24 | (uint32_t)pl[5] << 16 | (uint32_t)pl[6] << 8 | pl[7];
	for (int k = 0; k < 8; k++)
		seq = seq << 8 | pl[SDP_GEN_OFF_SEQ + k];
	for (uint32_t k = SDP_GEN_HDR_LEN; k < FRAME_LEN - SDP_GEN_L2L3L4_LEN; k++)
		fill_ok = fill_ok && pl[k] == (uint8_t)(seq + k);
	std::printf("gen: kernel saw %u packet(s) in %u calls, %u bytes, seq %llu, magic %08x; "
		    "ring packets %llu, overwrites %llu\n",
		    res->packets, res->calls, res->bytes, (unsigned long long)seq, magic,
		    (unsigned long long)c.ring_packets, (unsigned long long)c.overwrites);
	if (res->packets != 1 || res->bytes != FRAME_LEN || c.ring_packets != 1)
		FAIL("gen count=1: expected exactly one packet of %d bytes", FRAME_LEN);
	if (magic != SDP_GEN_MAGIC || seq != 0 || !fill_ok ||
	    check != sdp_gen_check(pl + SDP_GEN_OFF_MAGIC,
				   FRAME_LEN - SDP_GEN_L2L3L4_LEN - SDP_GEN_OFF_MAGIC))
		FAIL("gen frame damaged (magic %08x seq %llu fill %d)", magic,
		     (unsigned long long)seq, fill_ok);
	ladder_rxq_destroy(g_gpu, &q);
	CHECK(doca_dev_close(dev));
	CHECK_CUDA(cudaFreeHost(res));
}

/* ---- loop pair: one frame from a CPU send queue ----------------------------------------- */

static struct doca_pe *g_pe;
static struct doca_eth_txq *g_txq;
static struct doca_buf_inventory *g_inv;
static struct doca_mmap *g_mmap;
static uint8_t g_frame[4096] __attribute__((aligned(4096)));

static void frame_fill(uint8_t *f, uint32_t len, uint32_t salt)
{
	static const uint8_t hdr[14] = {2, 0, 0, 0, 0, 0xb, 2, 0, 0, 0, 0, 0xa, 0x88, 0xb5};

	std::memcpy(f, hdr, 14);
	for (uint32_t k = 14; k < len; k++)
		f[k] = (uint8_t)(k * 13 + salt);
}

static void send_one(void)
{
	struct doca_eth_txq_task_send *t = NULL;
	struct doca_buf *b = NULL;
	double end = host_now_s() + 10;

	ladder_sent = 0;
	CHECK(doca_buf_inventory_buf_get_by_data(g_inv, g_mmap, g_frame, FRAME_LEN, &b));
	CHECK(doca_eth_txq_task_send_allocate_init(g_txq, b, (union doca_data){0}, &t));
	CHECK(doca_task_submit(doca_eth_txq_task_send_as_doca_task(t)));
	while (ladder_sent == 0 && host_now_s() < end)
		if (doca_pe_progress(g_pe) == 0)
			usleep(100);
	if (ladder_sent != 1)
		FAIL("the CPU send did not complete");
}

static void test_loop(const char *a, const char *b, enum doca_gpu_mem_type mtype, uint32_t salt)
{
	struct doca_dev *da = ladder_open(a), *db = ladder_open(b);
	struct rx_one_result *res;
	struct ladder_rxq q;

	CHECK_CUDA(cudaMallocHost(&res, sizeof(*res)));
	CHECK(doca_pe_create(&g_pe));
	ladder_host_bufs_start(da, g_frame, sizeof(g_frame), 4, &g_mmap, &g_inv);
	g_txq = ladder_cpu_txq_start(da, 64, 4, g_pe);
	frame_fill(g_frame, FRAME_LEN, salt);

	ladder_rxq_start(g_gpu, db, 256, 2048, mtype, SDP_ETH_OVERFLOW_DEFAULT, &q);
	run_kernel(&q, res, send_one);
	std::printf("loop (%s): kernel saw %u packet(s), %u bytes, %s\n",
		    mtype == DOCA_GPU_MEM_TYPE_GPU ? "device memory" : "mapped host memory",
		    res->packets, res->bytes,
		    std::memcmp(res->frame, g_frame, FRAME_LEN) == 0 ? "bytes equal" :
								       "BYTES DIFFER");
	if (res->packets != 1 || res->bytes != FRAME_LEN ||
	    std::memcmp(res->frame, g_frame, FRAME_LEN) != 0)
		FAIL("loop: expected exactly the frame sent");
	ladder_rxq_destroy(g_gpu, &q);

	ladder_cpu_ctx_stop(doca_eth_txq_as_doca_ctx(g_txq), g_pe);
	CHECK(doca_eth_txq_destroy(g_txq));
	ladder_host_bufs_destroy(g_mmap, g_inv);
	CHECK(doca_pe_destroy(g_pe));
	CHECK(doca_dev_close(da));
	CHECK(doca_dev_close(db));
	CHECK_CUDA(cudaFreeHost(res));
}

int main(void)
{
	char decls[256], gen[32], la[32], lb[32];
	int pid = (int)getpid();

	g_gpu = ladder_gpu_init();
	std::snprintf(gen, sizeof(gen), "l1g%d", pid);
	std::snprintf(la, sizeof(la), "l1a%d", pid);
	std::snprintf(lb, sizeof(lb), "l1b%d", pid);
	std::snprintf(decls, sizeof(decls),
		      "gen:name=%s,size=%d,count=1;loop:name=%s,peer=%s;loop:name=%s,peer=%s", gen,
		      FRAME_LEN, la, lb, lb, la);
	setenv("SOFTDPU_DEVICES", decls, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	CHECK_CUDA(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));

	test_gen(gen);
	test_loop(la, lb, DOCA_GPU_MEM_TYPE_GPU, 1);
	test_loop(la, lb, DOCA_GPU_MEM_TYPE_CPU_GPU, 2);

	CHECK_CUDA(cudaStreamDestroy(g_stream));
	CHECK(doca_gpu_destroy(g_gpu));
	std::printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}
