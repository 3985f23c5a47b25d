/*
 * gpunetio_send_wait_time: accurate send scheduling. The CPU checks that the device offers
 * wait-on-time (doca_eth_txq_cap_get_wait_on_time_offload_supported), enables it on a GPU send
 * queue, and turns NUM_BURST_SEND send times (the first FIRST_BURST_DELAY_NS from now, then
 * every -t nanoseconds, CLOCK_REALTIME) into the queue's format with
 * doca_eth_txq_calculate_timestamp, in GPU_CPU memory; a kernel posts each burst of
 * NUM_PACKETS_X_BURST packets with doca_gpu_dev_eth_txq_wait_send.
 *
 * With --peer <loop device>, a CPU receive queue on the other end of the wire records when
 * each packet arrives: the sample prints, per burst, its send time and how late its first and
 * last packets arrived, and fails if a packet arrived before its time, is missing or damaged.
 * softdpu's queue engine holds each packet until its time (docs/gpunetio.md).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <endian.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_argp.h>
#include <doca_bitfield.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_eth_txq.h>
#include <doca_eth_txq_gpu_data_path.h>
#include <doca_gpunetio.h>
#include <doca_log.h>

#include "gpunetio_common.h"
#include "gpunetio_send_wait_time.h"

DOCA_LOG_REGISTER(GPUNETIO_SEND_WAIT_TIME);

#define NUM_PACKETS (NUM_BURST_SEND * NUM_PACKETS_X_BURST)

struct wt_resources {
	struct doca_gpu *gpu;
	struct doca_dev *dev;
	struct doca_eth_txq *txq;
	struct doca_gpu_eth_txq *txq_gpu;
	struct sample_gpu_buf pkt_buf;
	uint32_t mkey;
	uint64_t *ts_gpu, *ts_cpu; /* GPU_CPU: the send times in the queue's format */
	struct wt_result *res_gpu, *res_cpu;
	uint64_t send_ns[NUM_BURST_SEND]; /* the same times, CLOCK_REALTIME ns */
	void *stream;
	struct sample_peer *peer;
	bool kernel_running;
	bool ctx_started;
};

static doca_error_t setup(struct sample_args *args, struct wt_resources *r)
{
	static const uint8_t dst[6] = {0x10, 0x11, 0x12, 0x13, 0x14, 0x15};
	static const uint8_t src[6] = {0x02, 0, 0, 0, 0, 0x01};
	enum doca_eth_wait_on_time_type wot = DOCA_ETH_WAIT_ON_TIME_TYPE_NONE;
	uint8_t *frames;
	int cc_major = 0;
	doca_error_t result;

	result = sample_cuda_init(args->gpu_pcie, sizeof(args->gpu_pcie), &cc_major);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_gpu_create(args->gpu_pcie, &r->gpu);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("doca_gpu_create(%s): %s", args->gpu_pcie,
			     doca_error_get_descr(result));
		return result;
	}
	result = sample_open_dev(args->nic_pcie, args->dev_name, &r->dev);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_eth_txq_cap_get_wait_on_time_offload_supported(doca_dev_as_devinfo(r->dev),
								     &wot);
	if (result != DOCA_SUCCESS || wot != DOCA_ETH_WAIT_ON_TIME_TYPE_NATIVE) {
		DOCA_LOG_ERR("the device offers no native wait-on-time (%s, mode %d)",
			     doca_error_get_descr(result), (int)wot);
		return result != DOCA_SUCCESS ? result : DOCA_ERROR_NOT_SUPPORTED;
	}
	result = sample_cuda_stream_create(&r->stream);
	if (result != DOCA_SUCCESS)
		return result;

	result = doca_eth_txq_create(r->dev, MAX_SQ_DESCR_NUM, &r->txq);
	if (result == DOCA_SUCCESS)
		result = doca_eth_txq_set_wait_on_time_offload(r->txq);
	if (result == DOCA_SUCCESS)
		result = doca_eth_txq_gpu_set_completion_on_gpu(r->txq);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_set_datapath_on_gpu(doca_eth_txq_as_doca_ctx(r->txq), r->gpu);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_start(doca_eth_txq_as_doca_ctx(r->txq));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to start the send queue: %s", doca_error_get_descr(result));
		return result;
	}
	r->ctx_started = true;
	result = doca_eth_txq_apply_queue_id(r->txq, 0);
	if (result == DOCA_SUCCESS)
		result = doca_eth_txq_get_gpu_handle(r->txq, &r->txq_gpu);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("send queue GPU handle: %s", doca_error_get_descr(result));
		return result;
	}

	result = sample_gpu_buf_create(r->gpu, r->dev, (size_t)NUM_PACKETS * PACKET_SIZE,
				       DOCA_GPU_MEM_TYPE_GPU, &r->pkt_buf);
	if (result != DOCA_SUCCESS)
		return result;
	frames = calloc(NUM_PACKETS, PACKET_SIZE);
	if (frames == NULL)
		return DOCA_ERROR_NO_MEMORY;
	for (uint32_t i = 0; i < NUM_PACKETS; i++)
		sample_build_frame(frames + (size_t)i * PACKET_SIZE, PACKET_SIZE, i, dst, src);
	result = wt_copy_to_gpu(r->stream, r->pkt_buf.gpu, frames,
				(size_t)NUM_PACKETS * PACKET_SIZE);
	free(frames);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_get_mkey(r->pkt_buf.mmap, r->dev, &r->mkey);
	if (result != DOCA_SUCCESS)
		return result;

	result = doca_gpu_mem_alloc(r->gpu, sizeof(uint64_t) * NUM_BURST_SEND, 4096,
				    DOCA_GPU_MEM_TYPE_GPU_CPU, (void **)&r->ts_gpu,
				    (void **)&r->ts_cpu);
	if (result != DOCA_SUCCESS || r->ts_cpu == NULL)
		return result != DOCA_SUCCESS ? result : DOCA_ERROR_NO_MEMORY;
	result = doca_gpu_mem_alloc(r->gpu, sizeof(struct wt_result), 4096,
				    DOCA_GPU_MEM_TYPE_CPU_GPU, (void **)&r->res_gpu,
				    (void **)&r->res_cpu);
	if (result != DOCA_SUCCESS || r->res_cpu == NULL)
		return result != DOCA_SUCCESS ? result : DOCA_ERROR_NO_MEMORY;
	memset(r->res_cpu, 0, sizeof(*r->res_cpu));
	return DOCA_SUCCESS;
}

/* Per burst: when its packets arrived at the peer, against its send time. */
static doca_error_t check_peer(struct sample_args *args, struct wt_resources *r)
{
	struct sample_peer_stats ps;
	double end = sample_now_s() + 2.0;
	uint32_t early = 0;

	do {
		usleep(10000);
		sample_peer_get_stats(r->peer, &ps);
	} while (ps.frames < NUM_PACKETS && sample_now_s() < end);
	printf("peer %s received %llu of %d frames (%llu bad)\n", args->peer_name,
	       (unsigned long long)ps.frames, NUM_PACKETS, (unsigned long long)ps.bad);
	for (uint32_t b = 0; b < NUM_BURST_SEND; b++) {
		uint64_t first = UINT64_MAX, last = 0;
		uint32_t n = 0;

		for (uint32_t i = 0; i < ps.nb_times; i++) {
			if (ps.seqs[i] / NUM_PACKETS_X_BURST != b)
				continue;
			n++;
			if (ps.times_ns[i] < r->send_ns[b])
				early++;
			first = ps.times_ns[i] < first ? ps.times_ns[i] : first;
			last = ps.times_ns[i] > last ? ps.times_ns[i] : last;
		}
		if (n == 0) {
			printf("burst %u: send at +%.3f ms, nothing arrived\n", b,
			       (double)(r->send_ns[b] - r->send_ns[0]) / 1e6);
			continue;
		}
		printf("burst %u: send at +%.3f ms; %u packets, first %+.1f us, last %+.1f us "
		       "from the send time\n",
		       b, (double)(r->send_ns[b] - r->send_ns[0]) / 1e6, n,
		       ((double)first - (double)r->send_ns[b]) / 1e3,
		       ((double)last - (double)r->send_ns[b]) / 1e3);
	}
	if (ps.frames != NUM_PACKETS || ps.bad != 0 || early != 0) {
		DOCA_LOG_ERR("peer check failed: %llu frames, %llu bad, %u before their time",
			     (unsigned long long)ps.frames, (unsigned long long)ps.bad, early);
		return DOCA_ERROR_UNEXPECTED;
	}
	return DOCA_SUCCESS;
}

static doca_error_t run(struct sample_args *args, struct wt_resources *r)
{
	uint64_t t0, timeout_ns;
	doca_error_t result;

	if (args->peer_name[0] != '\0') {
		result = sample_peer_receiver_start(args->peer_name, NUM_PACKETS, &r->peer);
		if (result != DOCA_SUCCESS)
			return result;
	}
	t0 = sample_realtime_ns() + FIRST_BURST_DELAY_NS;
	for (uint32_t b = 0; b < NUM_BURST_SEND; b++) {
		r->send_ns[b] = t0 + b * args->interval_ns;
		result = doca_eth_txq_calculate_timestamp(r->txq, r->send_ns[b], &r->ts_cpu[b]);
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("doca_eth_txq_calculate_timestamp: %s",
				     doca_error_get_descr(result));
			return result;
		}
	}
	timeout_ns = FIRST_BURST_DELAY_NS + NUM_BURST_SEND * args->interval_ns + 5000000000ull;
	result = kernel_send_wait_time(r->stream, r->txq_gpu, r->ts_gpu,
				       (uint64_t)(uintptr_t)r->pkt_buf.gpu, htobe32(r->mkey),
				       timeout_ns, r->res_gpu);
	if (result != DOCA_SUCCESS)
		return result;
	r->kernel_running = true;
	DOCA_LOG_INFO("%d bursts of %d packets, every %" PRIu64 " ns from %" PRIu64
		      " ns (CLOCK_REALTIME)",
		      NUM_BURST_SEND, NUM_PACKETS_X_BURST, args->interval_ns, t0);
	result = sample_cuda_stream_wait(r->stream, (double)timeout_ns / 1e9 + 2.0);
	if (result != DOCA_SUCCESS)
		return result;
	r->kernel_running = false;
	printf("kernel: %u of %d burst completions, error %u\n", r->res_cpu->completions,
	       NUM_BURST_SEND, r->res_cpu->error);
	if (r->res_cpu->error != 0 || r->res_cpu->completions != NUM_BURST_SEND)
		return DOCA_ERROR_UNEXPECTED;
	return r->peer != NULL ? check_peer(args, r) : DOCA_SUCCESS;
}

static void teardown(struct wt_resources *r)
{
	if (r->kernel_running) {
		if (sample_cuda_stream_wait(r->stream, 5.0) != DOCA_SUCCESS) {
			/* stopping the queue or freeing GPU memory would wait for the kernel */
			DOCA_LOG_ERR("the kernel did not stop: nothing is torn down");
			return;
		}
		r->kernel_running = false;
	}
	sample_peer_stop(r->peer);
	sample_cuda_stream_destroy(r->stream);
	if (r->ctx_started)
		(void)sample_ctx_stop(doca_eth_txq_as_doca_ctx(r->txq), NULL, 10);
	if (r->txq != NULL && doca_eth_txq_destroy(r->txq) != DOCA_SUCCESS)
		DOCA_LOG_ERR("failed to destroy the send queue");
	sample_gpu_buf_destroy(r->gpu, &r->pkt_buf);
	if (r->ts_gpu != NULL)
		(void)doca_gpu_mem_free(r->gpu, r->ts_gpu);
	if (r->res_gpu != NULL)
		(void)doca_gpu_mem_free(r->gpu, r->res_gpu);
	if (r->dev != NULL && doca_dev_close(r->dev) != DOCA_SUCCESS)
		DOCA_LOG_ERR("failed to close the device");
	if (r->gpu != NULL && doca_gpu_destroy(r->gpu) != DOCA_SUCCESS)
		DOCA_LOG_ERR("failed to destroy the GPU handle");
}

int main(int argc, char **argv)
{
	struct sample_args args;
	struct wt_resources res;
	doca_error_t result;

	memset(&args, 0, sizeof(args));
	memset(&res, 0, sizeof(res));
	res.pkt_buf.dmabuf_fd = -1;
	args.interval_ns = 5000000; /* 5 ms */

	if (doca_log_backend_create_standard() != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = doca_argp_init("doca_gpunetio_send_wait_time", &args);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to init ARGP: %s", doca_error_get_descr(result));
		return EXIT_FAILURE;
	}
	result = sample_register_params(SAMPLE_OPT_GPU | SAMPLE_OPT_NIC | SAMPLE_OPT_INTERVAL |
					SAMPLE_OPT_PEER);
	if (result == DOCA_SUCCESS)
		result = doca_argp_start(argc, argv);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to parse the arguments: %s", doca_error_get_descr(result));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	sample_install_signals();

	result = setup(&args, &res);
	if (result == DOCA_SUCCESS)
		result = run(&args, &res);
	teardown(&res);
	if (result == DOCA_SUCCESS)
		DOCA_LOG_INFO("sample finished successfully");
	else
		DOCA_LOG_ERR("sample failed: %s", doca_error_get_descr(result));
	doca_argp_destroy();
	return result == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}
