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
	struct sample_resources base; /* GPU, NIC, txq, packet buffer, stream, peer */
	struct doca_gpu_eth_txq *txq_gpu;
	uint32_t mkey;
	uint64_t *ts_gpu, *ts_cpu; /* GPU_CPU: the send times in the queue's format */
	struct wt_result *res_gpu, *res_cpu;
	uint64_t send_ns[NUM_BURST_SEND]; /* the same times, CLOCK_REALTIME ns */
};

static doca_error_t setup(struct sample_args *args, struct wt_resources *r)
{
	static const uint8_t dst[6] = {0x10, 0x11, 0x12, 0x13, 0x14, 0x15};
	static const uint8_t src[6] = {0x02, 0, 0, 0, 0, 0x01};
	enum doca_eth_wait_on_time_type wot = DOCA_ETH_WAIT_ON_TIME_TYPE_NONE;
	doca_error_t result;

	result = sample_resources_open(&r->base, args, NULL);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_eth_txq_cap_get_wait_on_time_offload_supported(
		doca_dev_as_devinfo(r->base.dev), &wot);
	if (result != DOCA_SUCCESS || wot != DOCA_ETH_WAIT_ON_TIME_TYPE_NATIVE) {
		DOCA_LOG_ERR("the device offers no native wait-on-time (%s, mode %d)",
			     doca_error_get_descr(result), (int)wot);
		return result != DOCA_SUCCESS ? result : DOCA_ERROR_NOT_SUPPORTED;
	}
	result = sample_cuda_stream_create(&r->base.stream);
	if (result != DOCA_SUCCESS)
		return result;

	result = doca_eth_txq_create(r->base.dev, MAX_SQ_DESCR_NUM, &r->base.txq);
	if (result == DOCA_SUCCESS)
		result = doca_eth_txq_set_wait_on_time_offload(r->base.txq);
	if (result == DOCA_SUCCESS)
		result = doca_eth_txq_gpu_set_completion_on_gpu(r->base.txq);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to start the send queue: %s", doca_error_get_descr(result));
		return result;
	}
	result = sample_txq_start_on_gpu(&r->base, &r->txq_gpu);
	if (result != DOCA_SUCCESS)
		return result;

	result = sample_pkt_buf_fill(&r->base, NUM_PACKETS, PACKET_SIZE, PACKET_SIZE, dst, src,
				     &r->mkey);
	if (result != DOCA_SUCCESS)
		return result;

	result = sample_gpu_mem_alloc(&r->base, "the send times", sizeof(uint64_t) * NUM_BURST_SEND,
				      DOCA_GPU_MEM_TYPE_GPU_CPU, (void **)&r->ts_gpu,
				      (void **)&r->ts_cpu);
	if (result != DOCA_SUCCESS)
		return result;
	return sample_gpu_mem_alloc(&r->base, "the result", sizeof(struct wt_result),
				    DOCA_GPU_MEM_TYPE_CPU_GPU, (void **)&r->res_gpu,
				    (void **)&r->res_cpu);
}

/* Per burst: when its packets arrived at the peer, against its send time. */
static doca_error_t check_peer(struct sample_args *args, struct wt_resources *r)
{
	struct sample_peer_stats ps;
	double end = sample_now_s() + 2.0;
	uint32_t early = 0;

	do {
		usleep(10000);
		sample_peer_get_stats(r->base.peer, &ps);
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
		result = sample_peer_receiver_start(args->peer_name, NUM_PACKETS, &r->base.peer);
		if (result != DOCA_SUCCESS)
			return result;
	}
	t0 = sample_realtime_ns() + FIRST_BURST_DELAY_NS;
	for (uint32_t b = 0; b < NUM_BURST_SEND; b++) {
		r->send_ns[b] = t0 + b * args->interval_ns;
		result =
			doca_eth_txq_calculate_timestamp(r->base.txq, r->send_ns[b], &r->ts_cpu[b]);
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("doca_eth_txq_calculate_timestamp: %s",
				     doca_error_get_descr(result));
			return result;
		}
	}
	timeout_ns = FIRST_BURST_DELAY_NS + NUM_BURST_SEND * args->interval_ns + 5000000000ull;
	result = kernel_send_wait_time(r->base.stream, r->txq_gpu, r->ts_gpu,
				       (uint64_t)(uintptr_t)r->base.pkt_buf.gpu, htobe32(r->mkey),
				       timeout_ns, r->res_gpu);
	if (result != DOCA_SUCCESS)
		return result;
	r->base.kernel_running = true;
	DOCA_LOG_INFO("%d bursts of %d packets, every %" PRIu64 " ns from %" PRIu64
		      " ns (CLOCK_REALTIME)",
		      NUM_BURST_SEND, NUM_PACKETS_X_BURST, args->interval_ns, t0);
	result = sample_kernel_stop(&r->base, NULL, (double)timeout_ns / 1e9 + 2.0);
	if (result != DOCA_SUCCESS)
		return result;
	printf("kernel: %u of %d burst completions, error %u\n", r->res_cpu->completions,
	       NUM_BURST_SEND, r->res_cpu->error);
	if (r->res_cpu->error != 0 || r->res_cpu->completions != NUM_BURST_SEND)
		return DOCA_ERROR_UNEXPECTED;
	return r->base.peer != NULL ? check_peer(args, r) : DOCA_SUCCESS;
}

static void teardown(struct wt_resources *r)
{
	if (sample_teardown_begin(&r->base, NULL))
		sample_resources_close(&r->base);
}

int main(int argc, char **argv)
{
	struct sample_args args = {.interval_ns = 5000000 /* 5 ms */};
	struct wt_resources res = {0};
	doca_error_t result;

	if (sample_argp_start("doca_gpunetio_send_wait_time", &args,
			      SAMPLE_OPT_GPU | SAMPLE_OPT_NIC | SAMPLE_OPT_INTERVAL |
				      SAMPLE_OPT_PEER,
			      NULL, argc, argv) != DOCA_SUCCESS)
		return EXIT_FAILURE;

	result = setup(&args, &res);
	if (result == DOCA_SUCCESS)
		result = run(&args, &res);
	teardown(&res);
	return sample_exit(result);
}
