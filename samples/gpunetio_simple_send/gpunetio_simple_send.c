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
	struct doca_gpu *gpu;
	struct doca_dev *dev;
	struct doca_eth_txq *txq;
	struct doca_gpu_eth_txq *txq_gpu;
	struct sample_gpu_buf pkt_buf;
	uint32_t mkey; /* of the packet buffer, host byte order */
	uint32_t *exit_gpu, *exit_cpu;
	struct tx_stats *stats_gpu, *stats_cpu;
	void *stream;
	struct sample_peer *peer;
	pthread_t proxy_thread;
	bool proxy_running;
	bool kernel_running;
	bool ctx_started;
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

/* CPU proxy: forwards the kernel's doorbells while the kernel runs (bounded by its exit). */
static void *proxy_loop(void *arg)
{
	struct tx_resources *r = arg;

	while (DOCA_GPUNETIO_VOLATILE(*r->exit_cpu) == 0) {
		if (doca_eth_txq_gpu_cpu_proxy_progress(r->txq) != DOCA_SUCCESS) {
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
	uint8_t *frames;
	int cc_major = 0;
	doca_error_t result;
	static const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x02}, src[6] = {0x02, 0, 0, 0, 0, 0x01};

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
	result = sample_cuda_stream_create(&r->stream);
	if (result != DOCA_SUCCESS)
		return result;

	result = doca_eth_txq_create(r->dev, MAX_SQ_DESCR_NUM, &r->txq);
	if (result == DOCA_SUCCESS)
		result = doca_eth_txq_set_l3_chksum_offload(r->txq, 1);
	if (result == DOCA_SUCCESS)
		result = doca_eth_txq_set_l4_chksum_offload(r->txq, 1);
	if (result == DOCA_SUCCESS)
		result = doca_eth_txq_gpu_set_completion_on_gpu(r->txq);
	if (result == DOCA_SUCCESS && a->proxy)
		result = doca_eth_txq_gpu_set_uar_on_cpu(r->txq);
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

	/* one packet per CUDA thread, built on the CPU, copied into GPU memory */
	result = sample_gpu_buf_create(r->gpu, r->dev, (size_t)args->threads * MBUF_SIZE,
				       DOCA_GPU_MEM_TYPE_GPU, &r->pkt_buf);
	if (result != DOCA_SUCCESS)
		return result;
	frames = calloc(args->threads, MBUF_SIZE);
	if (frames == NULL)
		return DOCA_ERROR_NO_MEMORY;
	for (uint32_t i = 0; i < args->threads; i++)
		sample_build_frame(frames + (size_t)i * MBUF_SIZE, args->pkt_size, i, dst, src);
	result = copy_to_gpu(r->stream, r->pkt_buf.gpu, frames, (size_t)args->threads * MBUF_SIZE);
	free(frames);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_mmap_get_mkey(r->pkt_buf.mmap, r->dev, &r->mkey);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("doca_mmap_get_mkey: %s", doca_error_get_descr(result));
		return result;
	}

	result = doca_gpu_mem_alloc(r->gpu, sizeof(uint32_t), 4096, DOCA_GPU_MEM_TYPE_GPU_CPU,
				    (void **)&r->exit_gpu, (void **)&r->exit_cpu);
	if (result != DOCA_SUCCESS || r->exit_cpu == NULL)
		return result != DOCA_SUCCESS ? result : DOCA_ERROR_NO_MEMORY;
	DOCA_GPUNETIO_VOLATILE(*r->exit_cpu) = 0;
	result =
		doca_gpu_mem_alloc(r->gpu, sizeof(struct tx_stats), 4096, DOCA_GPU_MEM_TYPE_CPU_GPU,
				   (void **)&r->stats_gpu, (void **)&r->stats_cpu);
	if (result != DOCA_SUCCESS || r->stats_cpu == NULL)
		return result != DOCA_SUCCESS ? result : DOCA_ERROR_NO_MEMORY;
	memset(r->stats_cpu, 0, sizeof(*r->stats_cpu));
	return DOCA_SUCCESS;
}

static doca_error_t run(struct send_args *a, struct tx_resources *r)
{
	struct sample_args *args = &a->common;
	double start, last, end, elapsed;
	uint64_t last_pkts = 0, pkts;
	doca_error_t result = DOCA_SUCCESS;

	if (args->peer_name[0] != '\0') {
		result = sample_peer_receiver_start(args->peer_name, 0, &r->peer);
		if (result != DOCA_SUCCESS)
			return result;
	}
	if (a->proxy) {
		if (pthread_create(&r->proxy_thread, NULL, proxy_loop, r) != 0)
			return DOCA_ERROR_OPERATING_SYSTEM;
		r->proxy_running = true;
	}
	result = kernel_send_packets(r->stream, r->txq_gpu, (uint64_t)(uintptr_t)r->pkt_buf.gpu,
				     htobe32(r->mkey), args->pkt_size, args->threads, a->shared_qp,
				     (enum doca_gpu_dev_eth_exec_scope)args->exec_scope,
				     r->exit_gpu, r->stats_gpu);
	if (result != DOCA_SUCCESS)
		return result;
	r->kernel_running = true;
	DOCA_LOG_INFO("send kernel running: %u threads, %s, %u B packets; %s", args->threads,
		      a->shared_qp ? "shared queue" : "one block, own descriptors", args->pkt_size,
		      args->duration_s > 0 ? "stops after --duration" : "Ctrl-C stops it");
	start = last = sample_now_s();
	end = args->duration_s > 0 ? start + args->duration_s : 0;
	while (!sample_force_quit && (end == 0 || sample_now_s() < end) &&
	       DOCA_GPUNETIO_VOLATILE(*r->exit_cpu) == 0) {
		double now;

		usleep(100000);
		now = sample_now_s();
		if (now - last >= 1.0) {
			pkts = DOCA_GPUNETIO_VOLATILE(r->stats_cpu->packets);
			printf("%8.1f s: %llu packets sent (%.3f Mpps)\n", now - start,
			       (unsigned long long)pkts,
			       (double)(pkts - last_pkts) / (now - last) / 1e6);
			fflush(stdout);
			last_pkts = pkts;
			last = now;
		}
	}
	elapsed = sample_now_s() - start;
	DOCA_GPUNETIO_VOLATILE(*r->exit_cpu) = 1;
	result = sample_cuda_stream_wait(r->stream, 5.0);
	if (result != DOCA_SUCCESS)
		return result;
	r->kernel_running = false;
	pkts = r->stats_cpu->packets;
	printf("sent %llu packets of %u B in %.2f s: %.3f Mpps, %.3f Gbit/s; %llu completions\n",
	       (unsigned long long)pkts, args->pkt_size, elapsed, (double)pkts / elapsed / 1e6,
	       (double)pkts * args->pkt_size * 8 / elapsed / 1e9,
	       (unsigned long long)r->stats_cpu->completions);
	if (r->stats_cpu->error != 0) {
		DOCA_LOG_ERR("the kernel stopped on a completion error (%u)", r->stats_cpu->error);
		result = DOCA_ERROR_DRIVER;
	}
	if (r->peer != NULL) {
		struct sample_peer_stats ps;
		double wait_end = sample_now_s() + 2.0;

		/* what the kernel sent may still be on the wire */
		do {
			usleep(10000);
			sample_peer_get_stats(r->peer, &ps);
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
	if (r->kernel_running) {
		DOCA_GPUNETIO_VOLATILE(*r->exit_cpu) = 1;
		if (sample_cuda_stream_wait(r->stream, 5.0) != DOCA_SUCCESS) {
			/* stopping the queue or freeing GPU memory would wait for the kernel */
			DOCA_LOG_ERR("the kernel did not stop: nothing is torn down");
			return;
		}
		r->kernel_running = false;
	}
	if (r->proxy_running)
		pthread_join(r->proxy_thread, NULL);
	sample_peer_stop(r->peer);
	sample_cuda_stream_destroy(r->stream);
	if (r->ctx_started)
		(void)sample_ctx_stop(doca_eth_txq_as_doca_ctx(r->txq), NULL, 10);
	if (r->txq != NULL && doca_eth_txq_destroy(r->txq) != DOCA_SUCCESS)
		DOCA_LOG_ERR("failed to destroy the send queue");
	sample_gpu_buf_destroy(r->gpu, &r->pkt_buf);
	if (r->exit_gpu != NULL)
		(void)doca_gpu_mem_free(r->gpu, r->exit_gpu);
	if (r->stats_gpu != NULL)
		(void)doca_gpu_mem_free(r->gpu, r->stats_gpu);
	if (r->dev != NULL && doca_dev_close(r->dev) != DOCA_SUCCESS)
		DOCA_LOG_ERR("failed to close the device");
	if (r->gpu != NULL && doca_gpu_destroy(r->gpu) != DOCA_SUCCESS)
		DOCA_LOG_ERR("failed to destroy the GPU handle");
}

int main(int argc, char **argv)
{
	struct send_args args;
	struct tx_resources res;
	doca_error_t result;

	memset(&args, 0, sizeof(args));
	memset(&res, 0, sizeof(res));
	res.pkt_buf.dmabuf_fd = -1;
	args.common.exec_scope = DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD;
	args.common.pkt_size = 1024;
	args.common.threads = 256;

	if (doca_log_backend_create_standard() != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = doca_argp_init("doca_gpunetio_simple_send", &args);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to init ARGP: %s", doca_error_get_descr(result));
		return EXIT_FAILURE;
	}
	result = sample_register_params(SAMPLE_OPT_GPU | SAMPLE_OPT_NIC | SAMPLE_OPT_SCOPE |
					SAMPLE_OPT_DURATION | SAMPLE_OPT_PEER | SAMPLE_OPT_SIZE |
					SAMPLE_OPT_THREADS);
	if (result == DOCA_SUCCESS)
		result =
			register_flag("q", "shared-qp",
				      "two blocks share the queue (high-level send)", shared_qp_cb);
	if (result == DOCA_SUCCESS)
		result = register_flag("p", "proxy", "CPU proxy doorbells", proxy_cb);
	if (result == DOCA_SUCCESS)
		result = doca_argp_start(argc, argv);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to parse the arguments: %s", doca_error_get_descr(result));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	if (args.shared_qp && args.common.threads % (SHARED_QP_BLOCKS * 32) != 0) {
		DOCA_LOG_ERR("-q needs a multiple of %d threads", SHARED_QP_BLOCKS * 32);
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
