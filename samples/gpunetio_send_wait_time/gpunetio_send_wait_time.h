/*
 * gpunetio_send_wait_time: what the host program and its kernel share.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef GPUNETIO_SEND_WAIT_TIME_H_
#define GPUNETIO_SEND_WAIT_TIME_H_

#include <stdint.h>

#include <doca_error.h>
#include <doca_gpunetio_eth_def.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NUM_BURST_SEND 8				/* bursts */
#define NUM_PACKETS_X_BURST DOCA_GPUNETIO_ETH_WARP_SIZE /* packets per burst: one block */
#define PACKET_SIZE 1024
#define MAX_SQ_DESCR_NUM 4096
#define FIRST_BURST_DELAY_NS 100000000ull /* the first burst leaves 100 ms after the start */

struct wt_result {
	uint32_t completions; /* NOTIFY completions polled (one per burst) */
	uint32_t error;	      /* a wait-send or completion failure (doca_error_t) */
};

struct doca_gpu_eth_txq;

/*
 * Launch the kernel (one block of NUM_PACKETS_X_BURST threads): burst b is sent with
 * doca_gpu_dev_eth_txq_wait_send at wait_on_time[b] (values of doca_eth_txq_calculate_timestamp),
 * packet i of burst b being pkt_addr + (b * NUM_PACKETS_X_BURST + i) * PACKET_SIZE; then it polls
 * the NUM_BURST_SEND completions (at most timeout_ns in all).
 */
doca_error_t kernel_send_wait_time(void *stream, struct doca_gpu_eth_txq *txq_gpu,
				   uint64_t *wait_on_time, uint64_t pkt_addr, uint32_t mkey_be,
				   uint64_t timeout_ns, struct wt_result *result);

#ifdef __cplusplus
}
#endif

#endif /* GPUNETIO_SEND_WAIT_TIME_H_ */
