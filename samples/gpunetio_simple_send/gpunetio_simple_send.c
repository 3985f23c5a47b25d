/*
 * gpunetio_simple_send: a persistent CUDA kernel sends UDP packets prepared in GPU memory
 * through an Ethernet send queue on the GPU data path, as fast as the queue completes them,
 * until SIGINT or --duration. Options as DOCA's sample of this name: -e execution scope,
 * -s packet size, -t CUDA threads, -q the shared-queue kernel (high-level send calls from two
 * blocks) instead of the one-block kernel that prepares descriptors itself, -p CPU proxy
 * doorbells (a CPU thread calls doca_eth_txq_gpu_cpu_proxy_progress).
 *
 * With --peer <loop device>, a CPU receive queue on the other end of the wire counts the
 * packets and checks every byte. README.md has the commands for gen, loop, pcap and afpacket.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <endian.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <doca_argp.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_eth_txq.h>
#include <doca_eth_txq_gpu_data_path.h>
#include <doca_gpunetio.h>
#include <doca_log.h>

#include "gpunetio_common.h"
#include "gpunetio_simple_send.h"

DOCA_LOG_REGISTER(GPUNETIO_SIMPLE_SEND);

struct send_args {
	struct sample_args common; /* first: the common option callbacks write here */
	bool shared_qp;
	bool proxy;
};

struct tx_resources {
	struct sample_resources base; /* GPU, NIC, txq, packet buffer, stream, peer */
	struct doca_gpu_eth_txq *txq_gpu;
	uint32_t mkey; /* of the packet buffer, host byte order */
	uint32_t *exit_gpu, *exit_cpu;
	struct tx_stats *stats_gpu, *stats_cpu;
	pthread_t proxy_thread;
	bool proxy_running;
};

static doca_error_t shared_qp_cb(void *param, void *config)
{
	((struct send_args *)config)->shared_qp = *(bool *)param;
	return DOCA_SUCCESS;
}

static doca_error_t proxy_cb(void *param, void *config)
{
	((struct send_args *)config)->proxy = *(bool *)param;
	return DOCA_SUCCESS;
}

static doca_error_t register_flag(const char *s, const char *l, const char *d,
				  doca_argp_param_cb_t cb)
{
	struct doca_argp_param *p = NULL;
	doca_error_t r = doca_argp_param_create(&p);

	if (r != DOCA_SUCCESS)
		return r;
	doca_argp_param_set_short_name(p, s);
	doca_argp_param_set_long_name(p, l);
	doca_argp_param_set_description(p, d);
	doca_argp_param_set_callback(p, cb);
	doca_argp_param_set_type(p, DOCA_ARGP_TYPE_BOOLEAN);
	return doca_argp_register_param(p);
}

static doca_error_t register_send_params(void)
{
	doca_error_t result = register_flag(
		"q", "shared-qp", "two blocks share the queue (high-level send)", shared_qp_cb);

	if (result == DOCA_SUCCESS)
		result = register_flag("p", "proxy", "CPU proxy doorbells", proxy_cb);
	return result;
}

/* CPU proxy: forwards the kernel's doorbells while the kernel runs (bounded by its exit). */
static void *proxy_loop(void *arg)
{
	struct tx_resources *r = arg;

	while (DOCA_GPUNETIO_VOLATILE(*r->exit_cpu) == 0) {
		if (doca_eth_txq_gpu_cpu_proxy_progress(r->base.txq) != DOCA_SUCCESS) {
			DOCA_LOG_ERR("CPU proxy progress failed");
			break;
		}
		usleep(10);
	}
	return NULL;
}

static doca_error_t setup(struct send_args *a, struct tx_resources *r)
{
	struct sample_args *args = &a->common;
	doca_error_t result;
	static const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x02}, src[6] = {0x02, 0, 0, 0, 0, 0x01};

	result = sample_resources_open(&r->base, args, NULL);
	if (result != DOCA_SUCCESS)
		return result;
	result = sample_cuda_stream_create(&r->base.stream);
	if (result != DOCA_SUCCESS)
		return result;

	result = doca_eth_txq_create(r->base.dev, MAX_SQ_DESCR_NUM, &r->base.txq);
	if (result == DOCA_SUCCESS)
		result = doca_eth_txq_set_l3_chksum_offload(r->base.txq, 1);
	if (result == DOCA_SUCCESS)
		result = doca_eth_txq_set_l4_chksum_offload(r->base.txq, 1);
	if (result == DOCA_SUCCESS)
		result = doca_eth_txq_gpu_set_completion_on_gpu(r->base.txq);
	if (result == DOCA_SUCCESS && a->proxy)
		result = doca_eth_txq_gpu_set_uar_on_cpu(r->base.txq);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to start the send queue: %s", doca_error_get_descr(result));
		return result;
	}
	result = sample_txq_start_on_gpu(&r->base, &r->txq_gpu);
	if (result != DOCA_SUCCESS)
		return result;

	/* one packet per CUDA thread, built on the CPU, copied into GPU memory */
	result = sample_pkt_buf_fill(&r->base, args->threads, MBUF_SIZE, args->pkt_size, dst, src,
				     &r->mkey);
	if (result != DOCA_SUCCESS)
		return result;

	result = sample_gpu_mem_alloc(&r->base, "the exit flag", sizeof(uint32_t),
				      DOCA_GPU_MEM_TYPE_GPU_CPU, (void **)&r->exit_gpu,
				      (void **)&r->exit_cpu);
	if (result != DOCA_SUCCESS)
		return result;
	return sample_gpu_mem_alloc(&r->base, "the statistics", sizeof(struct tx_stats),
				    DOCA_GPU_MEM_TYPE_CPU_GPU, (void **)&r->stats_gpu,
				    (void **)&r->stats_cpu);
}

static doca_error_t run(struct send_args *a, struct tx_resources *r)
{
	struct sample_args *args = &a->common;
	double elapsed;
	uint64_t pkts;
	doca_error_t result = DOCA_SUCCESS;

	if (args->peer_name[0] != '\0') {
		result = sample_peer_receiver_start(args->peer_name, 0, &r->base.peer);
		if (result != DOCA_SUCCESS)
			return result;
	}
	if (a->proxy) {
		if (pthread_create(&r->proxy_thread, NULL, proxy_loop, r) != 0)
			return DOCA_ERROR_OPERATING_SYSTEM;
		r->proxy_running = true;
	}
	result = kernel_send_packets(
		r->base.stream, r->txq_gpu, (uint64_t)(uintptr_t)r->base.pkt_buf.gpu,
		htobe32(r->mkey), args->pkt_size, args->threads, a->shared_qp,
		(enum doca_gpu_dev_eth_exec_scope)args->exec_scope, r->exit_gpu, r->stats_gpu);
	if (result != DOCA_SUCCESS)
		return result;
	r->base.kernel_running = true;
	DOCA_LOG_INFO("send kernel running: %u threads, %s, %u B packets; %s", args->threads,
		      a->shared_qp ? "shared queue" : "one block, own descriptors", args->pkt_size,
		      args->duration_s > 0 ? "stops after --duration" : "Ctrl-C stops it");
	elapsed = sample_monitor(args->duration_s, r->exit_cpu, NULL, &r->stats_cpu->packets,
				 " sent");
	result = sample_kernel_stop(&r->base, r->exit_cpu, 5.0);
	if (result != DOCA_SUCCESS)
		return result;
	pkts = r->stats_cpu->packets;
	printf("sent %llu packets of %u B in %.2f s: %.3f Mpps, %.3f Gbit/s; %llu completions\n",
	       (unsigned long long)pkts, args->pkt_size, elapsed, (double)pkts / elapsed / 1e6,
	       (double)pkts * args->pkt_size * 8 / elapsed / 1e9,
	       (unsigned long long)r->stats_cpu->completions);
	if (r->stats_cpu->error != 0) {
		DOCA_LOG_ERR("the kernel stopped on a completion error (%u)", r->stats_cpu->error);
		result = DOCA_ERROR_DRIVER;
	}
	if (r->base.peer != NULL) {
		struct sample_peer_stats ps;
		double wait_end = sample_now_s() + 2.0;

		/* what the kernel sent may still be on the wire */
		do {
			usleep(10000);
			sample_peer_get_stats(r->base.peer, &ps);
		} while (ps.frames < pkts && sample_now_s() < wait_end);
		printf("peer %s received %llu frames (%llu bad)\n", args->peer_name,
		       (unsigned long long)ps.frames, (unsigned long long)ps.bad);
		if (ps.bad != 0 || ps.frames != pkts) {
			DOCA_LOG_ERR("the peer did not receive every packet intact");
			result = DOCA_ERROR_UNEXPECTED;
		}
	}
	return result;
}

static void teardown(struct tx_resources *r)
{
	if (!sample_teardown_begin(&r->base, r->exit_cpu))
		return;
	if (r->proxy_running)
		pthread_join(r->proxy_thread, NULL);
	sample_resources_close(&r->base);
}

int main(int argc, char **argv)
{
	struct send_args args = {.common = {.exec_scope = DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD,
					    .pkt_size = 1024,
					    .threads = 256}};
	struct tx_resources res = {0};
	doca_error_t result;

	if (sample_argp_start("doca_gpunetio_simple_send", &args,
			      SAMPLE_OPT_GPU | SAMPLE_OPT_NIC | SAMPLE_OPT_SCOPE |
				      SAMPLE_OPT_DURATION | SAMPLE_OPT_PEER | SAMPLE_OPT_SIZE |
				      SAMPLE_OPT_THREADS,
			      register_send_params, argc, argv) != DOCA_SUCCESS)
		return EXIT_FAILURE;
	if (args.shared_qp && args.common.threads % (SHARED_QP_BLOCKS * 32) != 0) {
		DOCA_LOG_ERR("-q needs a multiple of %d threads", SHARED_QP_BLOCKS * 32);
		doca_argp_destroy();
		return EXIT_FAILURE;
	}

	result = setup(&args, &res);
	if (result == DOCA_SUCCESS)
		result = run(&args, &res);
	teardown(&res);
	return sample_exit(result);
}
