/*
 * gpunetio_simple_receive: what the host program and its kernel share.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef GPUNETIO_SIMPLE_RECEIVE_H_
#define GPUNETIO_SIMPLE_RECEIVE_H_

#include <stdint.h>

#include <doca_error.h>
#include <doca_gpunetio_eth_def.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MAX_PKT_NUM 16384	 /* receive ring slots */
#define MAX_PKT_SIZE 2048	 /* bytes per slot */
#define MAX_RX_NUM_PKTS 2048	 /* packets one receive call may return */
#define MAX_RX_TIMEOUT_NS 500000 /* 500 us: the loop re-reads the exit flag at least this often */
#define CUDA_BLOCK_THREADS 32

/* Running totals the kernel publishes (CPU_GPU memory: the CPU reads them while it runs). */
struct rx_stats {
	uint64_t packets;
	uint64_t bytes;
	uint64_t bad;	/* not Ethernet/IPv4/UDP, or shorter than the IPv4 length says */
	uint32_t error; /* a receive call failed (the doca_error_t); the kernel stopped */
	uint32_t padding;
};

struct doca_gpu_eth_rxq;

/* Launch the persistent receive kernel (one block of CUDA_BLOCK_THREADS) on stream. */
doca_error_t kernel_receive_packets(void *stream, struct doca_gpu_eth_rxq *rxq_gpu,
				    uint32_t *exit_cond, struct rx_stats *stats,
				    enum doca_gpu_dev_eth_exec_scope scope);

#ifdef __cplusplus
}
#endif

#endif /* GPUNETIO_SIMPLE_RECEIVE_H_ */
