/*
 * gpunetio_simple_send: what the host program and its kernels share.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef GPUNETIO_SIMPLE_SEND_H_
#define GPUNETIO_SIMPLE_SEND_H_

#include <stdint.h>

#include <doca_error.h>
#include <doca_gpunetio_eth_def.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MAX_SQ_DESCR_NUM 8192 /* send queue descriptors */
#define SHARED_QP_BLOCKS 2    /* blocks sharing one queue in the shared-queue kernel */
#define MBUF_SIZE 2048	      /* bytes between two packets of the packet buffer */

/* Running totals the kernel publishes (CPU_GPU memory). */
struct tx_stats {
	uint64_t packets;     /* packets posted */
	uint64_t completions; /* completions polled */
	uint32_t error;	      /* a completion reported an error (doca_error_t); kernel stopped */
	uint32_t padding;
};

struct doca_gpu_eth_txq;

/*
 * Launch the persistent send kernel on stream: shared_qp: SHARED_QP_BLOCKS blocks of
 * threads / SHARED_QP_BLOCKS threads send with doca_gpu_dev_eth_txq_send in the given scope;
 * otherwise one block of threads prepares descriptors itself (get_wqe_ptr, wqe_prepare_send,
 * submit, poll_completion_at). Thread i sends the packet at pkt_addr + i * MBUF_SIZE.
 */
doca_error_t kernel_send_packets(void *stream, struct doca_gpu_eth_txq *txq_gpu, uint64_t pkt_addr,
				 uint32_t mkey_be, uint32_t pkt_size, uint32_t threads,
				 bool shared_qp, enum doca_gpu_dev_eth_exec_scope scope,
				 uint32_t *exit_cond, struct tx_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* GPUNETIO_SIMPLE_SEND_H_ */
