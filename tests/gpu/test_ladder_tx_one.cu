/*
 * GPU ladder step 3 (TX smoke): a kernel sends one packet from device memory on a GPU send queue
 * (doca_gpu_dev_eth_txq_send, thread scope, NOTIFY, completions on the GPU) of one end of a loop
 * wire and polls its completion; a CPU receive queue on the other end receives exactly that
 * frame, byte for byte; the send queue counted one packet. Then the same with the one-block
 * low-level path (get_wqe_ptr, wqe_prepare_send, submit, poll_completion_at).
 * Exits 77 only when /dev/nvidiactl is absent; any other CUDA failure is a failure.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "ladder_common.h"

#include <doca_gpunetio_dev_eth_txq.cuh>

#define FRAME_LEN 200

struct tx_one_result {
	int32_t send_status; /* poll status (doca_error_t) */
	uint32_t completed;
	uint64_t ticket;
};

__global__ void tx_one_kernel(struct doca_gpu_eth_txq *txq, uint64_t addr, uint32_t mkey_be,
			      bool low_level, struct tx_one_result *res)
{
	doca_error_t ret;

	if (threadIdx.x != 0)
		return;
	if (!low_level) {
		doca_gpu_dev_eth_ticket_t ticket = 0;
		uint32_t done = 0;

		doca_gpu_dev_eth_txq_send<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
					  DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
					  DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
					  DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>(
			txq, addr, mkey_be, FRAME_LEN, DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY, &ticket);
		res->ticket = ticket;
		/* each blocking poll is bounded (100 ms); up to 50 of them */
		ret = DOCA_ERROR_TIME_OUT;
		for (int i = 0; i < 50 && ret == DOCA_ERROR_TIME_OUT; i++)
			ret = doca_gpu_dev_eth_txq_poll_completion<DOCA_GPUNETIO_ETH_CQ_POLL_LAST>(
				txq, 1, DOCA_GPUNETIO_ETH_WAIT_FLAG_B, &done);
		res->completed = done;
	} else {
		struct doca_gpu_dev_eth_txq_wqe *wqe = doca_gpu_dev_eth_txq_get_wqe_ptr(txq, 0);

		ret = doca_gpu_dev_eth_txq_wqe_prepare_send(txq, wqe, 0, addr, mkey_be, FRAME_LEN,
							    DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY);
		if (ret == DOCA_SUCCESS) {
			doca_gpu_dev_eth_txq_submit(txq, 1);
			ret = DOCA_ERROR_TIME_OUT;
			for (int i = 0; i < 50 && ret == DOCA_ERROR_TIME_OUT; i++)
				ret = doca_gpu_dev_eth_txq_poll_completion_at(
					txq, 0, DOCA_GPUNETIO_ETH_WAIT_FLAG_B);
			res->completed = ret == DOCA_SUCCESS ? 1 : 0;
		}
	}
	res->send_status = (int32_t)ret;
	__threadfence_system();
}

static struct doca_pe *g_pe;
static int g_recv, g_recv_bad;
static uint8_t g_frame[FRAME_LEN];
static uint8_t g_rx_mem[64 * 2048] __attribute__((aligned(4096)));

static void recv_ok(struct doca_eth_rxq_task_recv *t, union doca_data u, union doca_data c)
{
	struct doca_buf *b = NULL;
	void *data = NULL;
	size_t len = 0;

	(void)u;
	(void)c;
	(void)doca_eth_rxq_task_recv_get_pkt(t, &b);
	(void)doca_buf_get_data(b, &data);
	(void)doca_buf_get_data_len(b, &len);
	if (len != FRAME_LEN || std::memcmp(data, g_frame, FRAME_LEN) != 0)
		g_recv_bad++;
	g_recv++;
	(void)doca_buf_dec_refcount(b, NULL);
	doca_task_free(doca_eth_rxq_task_recv_as_doca_task(t));
}

static void recv_err(struct doca_eth_rxq_task_recv *t, union doca_data u, union doca_data c)
{
	struct doca_buf *b = NULL;

	(void)u;
	(void)c;
	(void)doca_eth_rxq_task_recv_get_pkt(t, &b);
	if (b != NULL)
		(void)doca_buf_dec_refcount(b, NULL);
	doca_task_free(doca_eth_rxq_task_recv_as_doca_task(t));
}

static void run(struct doca_gpu *gpu, struct doca_dev *da, struct doca_dev *db, bool low_level,
		uint8_t salt)
{
	struct doca_eth_rxq *rxq = NULL;
	struct doca_eth_txq *txq = NULL;
	struct doca_gpu_eth_txq *h = NULL;
	struct doca_buf_inventory *inv = NULL;
	struct doca_mmap *rx_mmap = NULL, *tx_mmap = NULL;
	struct sdp_eth_txq_counters tc;
	struct tx_one_result *res;
	cudaStream_t stream;
	void *fr_gpu = NULL;
	uint32_t mkey = 0;
	double end;

	static const uint8_t hdr[14] = {2, 0, 0, 0, 0, 0xa, 2, 0, 0, 0, 0, 0xb, 0x88, 0xb5};

	g_recv = g_recv_bad = 0;
	std::memcpy(g_frame, hdr, 14);
	for (int k = 14; k < FRAME_LEN; k++)
		g_frame[k] = (uint8_t)(k * 7 + salt);
	CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	CHECK_CUDA(cudaMallocHost(&res, sizeof(*res)));
	std::memset(res, 0, sizeof(*res));

	/* A: CPU receive queue with 16 tasks */
	ladder_host_bufs_start(da, g_rx_mem, sizeof(g_rx_mem), 64, &rx_mmap, &inv);
	rxq = ladder_cpu_rxq_start(da, 64, recv_ok, recv_err, 16, g_pe, inv, rx_mmap, g_rx_mem);

	/* B: GPU send queue, the frame in device memory */
	CHECK(doca_gpu_mem_alloc(gpu, 65536, 65536, DOCA_GPU_MEM_TYPE_GPU, &fr_gpu, NULL));
	CHECK_CUDA(cudaMemcpyAsync(fr_gpu, g_frame, FRAME_LEN, cudaMemcpyHostToDevice, stream));
	CHECK_CUDA(cudaStreamSynchronize(stream));
	CHECK(doca_mmap_create(&tx_mmap));
	CHECK(doca_mmap_set_memrange(tx_mmap, fr_gpu, 65536));
	CHECK(doca_mmap_add_dev(tx_mmap, db));
	CHECK(doca_mmap_start(tx_mmap));
	CHECK(doca_mmap_get_mkey(tx_mmap, db, &mkey));
	CHECK(doca_eth_txq_create(db, 256, &txq));
	CHECK(doca_eth_txq_gpu_set_completion_on_gpu(txq));
	CHECK(doca_ctx_set_datapath_on_gpu(doca_eth_txq_as_doca_ctx(txq), gpu));
	CHECK(doca_ctx_start(doca_eth_txq_as_doca_ctx(txq)));
	CHECK(doca_eth_txq_get_gpu_handle(txq, &h));

	tx_one_kernel<<<1, 1, 0, stream>>>(h, (uint64_t)(uintptr_t)fr_gpu, htobe32(mkey), low_level,
					   res);
	CHECK_CUDA(cudaGetLastError());
	if (!ladder_stream_wait(stream, 10)) {
		FAIL("the send kernel did not finish within 10 s");
		std::exit(1);
	}
	end = host_now_s() + 10;
	while (g_recv < 1 && host_now_s() < end)
		if (doca_pe_progress(g_pe) == 0)
			usleep(100);
	end = host_now_s() + 0.2; /* and nothing more */
	while (host_now_s() < end)
		if (doca_pe_progress(g_pe) == 0)
			usleep(100);
	CHECK(sdp_eth_txq_get_counters(txq, &tc));
	std::printf("%s: poll %s, %u completion(s), ticket %llu; peer received %d (bad %d); txq "
		    "packets %llu\n",
		    low_level ? "low-level" : "send",
		    doca_error_get_name((doca_error_t)res->send_status), res->completed,
		    (unsigned long long)res->ticket, g_recv, g_recv_bad,
		    (unsigned long long)tc.packets);
	if (res->send_status != DOCA_SUCCESS || res->completed != 1 || g_recv != 1 ||
	    g_recv_bad != 0 || tc.packets != 1)
		FAIL("%s: one packet, intact, one completion expected",
		     low_level ? "low-level" : "send");

	CHECK(doca_ctx_stop(doca_eth_txq_as_doca_ctx(txq)));
	CHECK(doca_eth_txq_destroy(txq));
	CHECK(doca_mmap_destroy(tx_mmap));
	CHECK(doca_gpu_mem_free(gpu, fr_gpu));
	ladder_cpu_ctx_stop(doca_eth_rxq_as_doca_ctx(rxq), g_pe);
	CHECK(doca_eth_rxq_destroy(rxq));
	ladder_host_bufs_destroy(rx_mmap, inv);
	CHECK_CUDA(cudaFreeHost(res));
	CHECK_CUDA(cudaStreamDestroy(stream));
}

int main(void)
{
	struct doca_gpu *gpu = ladder_gpu_init();
	struct doca_dev *da, *db;
	char la[32], lb[32];

	ladder_declare_loop_pair("l3", la, lb);
	da = ladder_open(la);
	db = ladder_open(lb);
	CHECK(doca_pe_create(&g_pe));

	run(gpu, da, db, false, 3);
	run(gpu, da, db, true, 4);

	CHECK(doca_pe_destroy(g_pe));
	CHECK(doca_dev_close(da));
	CHECK(doca_dev_close(db));
	CHECK(doca_gpu_destroy(gpu));
	std::printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}
