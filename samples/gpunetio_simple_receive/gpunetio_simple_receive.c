/*
 * gpunetio_simple_receive: a persistent CUDA kernel receives UDP packets from one CYCLIC
 * Ethernet receive queue on the GPU data path, counts them and checks their headers, until
 * SIGINT or --duration; the CPU prints the running count and the rate every second. DOCA Flow
 * steers IPv4/UDP to the queue (other traffic is dropped), as in DOCA's sample of this name.
 *
 * With --peer <loop device>, the sample also drives the other end of a loop wire from a CPU
 * thread (the frames of gpunetio_common.h), so it runs without any traffic source of its own.
 * README.md has the commands for the gen, loop, pcap and afpacket devices.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_eth_rxq.h>
#include <doca_eth_rxq_gpu_data_path.h>
#include <doca_gpunetio.h>
#include <doca_log.h>

#include "gpunetio_common.h"
#include "gpunetio_simple_receive.h"

DOCA_LOG_REGISTER(GPUNETIO_SIMPLE_RECEIVE);

struct rx_resources {
	struct sample_resources base; /* GPU, NIC, rxq, packet buffer, stream, peer */
	struct doca_gpu_eth_rxq *rxq_gpu;
	struct sample_flow flow;
	uint32_t *exit_gpu, *exit_cpu; /* GPU_CPU: the CPU writes, the kernel polls */
	struct rx_stats *stats_gpu, *stats_cpu;
};

static doca_error_t setup(struct sample_args *args, struct rx_resources *r)
{
	uint32_t buf_size = 0;
	int cc_major = 0;
	doca_error_t result;

	result = sample_resources_open(&r->base, args, &cc_major);
	if (result != DOCA_SUCCESS)
		return result;

	result = doca_eth_rxq_create(r->base.dev, MAX_PKT_NUM, MAX_PKT_SIZE, &r->base.rxq);
	if (result == DOCA_SUCCESS)
		result = doca_eth_rxq_set_type(r->base.rxq, DOCA_ETH_RXQ_TYPE_CYCLIC);
	if (result == DOCA_SUCCESS)
		result = doca_eth_rxq_estimate_packet_buf_size(DOCA_ETH_RXQ_TYPE_CYCLIC, 0, 0,
							       MAX_PKT_SIZE, MAX_PKT_NUM, 0, 0, 0,
							       &buf_size);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to create the receive queue: %s",
			     doca_error_get_descr(result));
		return result;
	}
	result = sample_gpu_buf_create(r->base.gpu, r->base.dev, buf_size, DOCA_GPU_MEM_TYPE_GPU,
				       &r->base.pkt_buf);
	if (result != DOCA_SUCCESS)
		return result;
	DOCA_LOG_INFO("packet ring: %u slots of %u B, %zu B of GPU memory (%s)", MAX_PKT_NUM,
		      MAX_PKT_SIZE, r->base.pkt_buf.size,
		      r->base.pkt_buf.dmabuf_fd >= 0 ? "dma-buf" : "memrange");
	result = doca_eth_rxq_set_pkt_buf(r->base.rxq, r->base.pkt_buf.mmap, 0,
					  (uint32_t)r->base.pkt_buf.size);
	if (result == DOCA_SUCCESS && cc_major < 9)
		result = doca_eth_rxq_gpu_enable_mcst_qp(r->base.rxq);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_set_datapath_on_gpu(doca_eth_rxq_as_doca_ctx(r->base.rxq),
						      r->base.gpu);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_start(doca_eth_rxq_as_doca_ctx(r->base.rxq));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to start the receive queue: %s", doca_error_get_descr(result));
		return result;
	}
	r->base.ctx_started = true;
	result = doca_eth_rxq_get_gpu_handle(r->base.rxq, &r->rxq_gpu);
	if (result == DOCA_SUCCESS)
		result = doca_eth_rxq_apply_queue_id(r->base.rxq, 0);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("receive queue GPU handle / queue id: %s",
			     doca_error_get_descr(result));
		return result;
	}
	result = sample_flow_udp_to_queue(r->base.dev, 0, &r->flow);
	if (result != DOCA_SUCCESS)
		return result;

	result = sample_gpu_mem_alloc(&r->base, "the exit flag", sizeof(uint32_t),
				      DOCA_GPU_MEM_TYPE_GPU_CPU, (void **)&r->exit_gpu,
				      (void **)&r->exit_cpu);
	if (result == DOCA_SUCCESS)
		result = sample_gpu_mem_alloc(&r->base, "the statistics", sizeof(struct rx_stats),
					      DOCA_GPU_MEM_TYPE_CPU_GPU, (void **)&r->stats_gpu,
					      (void **)&r->stats_cpu);
	if (result != DOCA_SUCCESS)
		return result;
	return sample_cuda_stream_create(&r->base.stream);
}

static doca_error_t run(struct sample_args *args, struct rx_resources *r)
{
	static const char *const scope_name[] = {"thread", "warp", "block"};
	double elapsed;
	uint64_t pkts, bytes, bad;
	doca_error_t result;

	result = kernel_receive_packets(r->base.stream, r->rxq_gpu, r->exit_gpu, r->stats_gpu,
					(enum doca_gpu_dev_eth_exec_scope)args->exec_scope);
	if (result != DOCA_SUCCESS)
		return result;
	r->base.kernel_running = true;
	DOCA_LOG_INFO("receive kernel running (%s scope, %d threads); %s",
		      scope_name[args->exec_scope], CUDA_BLOCK_THREADS,
		      args->duration_s > 0 ? "stops after --duration" : "Ctrl-C stops it");
	if (args->peer_name[0] != '\0') {
		result = sample_peer_sender_start(args->peer_name, args->peer_count, 1024,
						  args->peer_rate, &r->base.peer);
		if (result != DOCA_SUCCESS)
			return result;
		DOCA_LOG_INFO("peer %s sends %s frames of 1024 B", args->peer_name,
			      args->peer_count ? "a count of" : "endless");
	}
	elapsed = sample_monitor(args->duration_s, r->exit_cpu, &r->stats_cpu->error,
				 &r->stats_cpu->packets, "");
	result = sample_kernel_stop(&r->base, r->exit_cpu, 5.0);
	if (result != DOCA_SUCCESS)
		return result;
	if (r->base.peer != NULL) {
		struct sample_peer_stats ps;

		sample_peer_get_stats(r->base.peer, &ps);
		printf("peer sent %llu frames\n", (unsigned long long)ps.frames);
	}
	pkts = r->stats_cpu->packets;
	bytes = r->stats_cpu->bytes;
	bad = r->stats_cpu->bad;
	printf("received %llu packets, %llu bytes in %.2f s: %.3f Mpps, %.3f Gbit/s; %llu bad\n",
	       (unsigned long long)pkts, (unsigned long long)bytes, elapsed,
	       (double)pkts / elapsed / 1e6, (double)bytes * 8 / elapsed / 1e9,
	       (unsigned long long)bad);
	if (r->stats_cpu->error != 0) {
		DOCA_LOG_ERR("the kernel stopped on a receive error (%u)", r->stats_cpu->error);
		return DOCA_ERROR_DRIVER;
	}
	return bad == 0 ? DOCA_SUCCESS : DOCA_ERROR_UNEXPECTED;
}

static void flow_destroy(void *flow)
{
	sample_flow_destroy(flow);
}

/*
 * Kernel stopped (bounded drain; nothing is torn down while it runs), flow rules gone, queue
 * stopped and destroyed, buffer unregistered, memory freed, GPU released: softdpu's rollback
 * helper (sample_rollback), then the peer, the stream and the NIC.
 */
static void teardown(struct rx_resources *r)
{
	if (!sample_rollback(&r->base, r->exit_cpu, flow_destroy, &r->flow))
		return;
	sample_resources_close(&r->base);
}

int main(int argc, char **argv)
{
	struct sample_args args = {.exec_scope = DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK};
	struct rx_resources res = {0};
	doca_error_t result;

	if (sample_argp_start("doca_gpunetio_simple_receive", &args,
			      SAMPLE_OPT_GPU | SAMPLE_OPT_NIC | SAMPLE_OPT_SCOPE |
				      SAMPLE_OPT_DURATION | SAMPLE_OPT_PEER,
			      NULL, argc, argv) != DOCA_SUCCESS)
		return EXIT_FAILURE;

	result = setup(&args, &res);
	if (result == DOCA_SUCCESS)
		result = run(&args, &res);
	teardown(&res);
	return sample_exit(result);
}
