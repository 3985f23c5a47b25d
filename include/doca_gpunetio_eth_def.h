/*
 * softdpu: GPUNetIO Ethernet definitions shared by host and device code
 * (doca_gpunetio_eth_def.h).
 *
 * The enums, flags, types and constants of DOCA 3.x's device Ethernet API (names and numeric
 * values as DOCA has them: the samples take some of them from the command line as raw integers),
 * the per-packet receive attributes, and the GPU queue handles (struct doca_gpu_eth_rxq /
 * doca_gpu_eth_txq, defined in softdpu/sdp_gpu_eth.h; applications treat them as opaque). The
 * device functions are in doca_gpunetio_dev_eth_rxq.cuh and doca_gpunetio_dev_eth_txq.cuh.
 *
 * Besides, programs get through this header what they get through it in DOCA: bool, INT_MAX,
 * and pthread_create/pthread_join (the GPUNetIO send sample's proxy thread relies on getting
 * <pthread.h> here). Valid C and C++, as plain C host files include it.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_GPUNETIO_ETH_DEF_H_
#define DOCA_GPUNETIO_ETH_DEF_H_

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "doca_error.h"
#include "doca_gpunetio.h"
#include "doca_types.h"

#include "softdpu/sdp_gpu_eth.h"

/* DOCA's 64-byte WQE is a 32-byte softdpu descriptor here (get_wqe_ptr / wqe_prepare_send). */
struct doca_gpu_dev_eth_txq_wqe {
	struct sdp_ring_txd desc;
};

/* Threads in a warp (host code uses it for launch sizes too). */
#define DOCA_GPUNETIO_ETH_WARP_SIZE 32
/* Nanoseconds per second (the wait-on-time encoding splits a time into seconds and ns). */
#define DOCA_GPUNETIO_ETH_NS_PER_SEC 1000000000ULL
/* out_first_pkt_idx of a receive call that got nothing. */
#define DOCA_GPUNETIO_ETH_RX_NO_PKT (~0ULL)

/* Per-packet flags of a send. NONE: a completion only if the send fails. */
enum doca_gpu_eth_send_flags {
	DOCA_GPUNETIO_ETH_SEND_FLAG_NONE = 0,
	DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY = 1 << 0, /* a completion when sent */
};

/* Completion polling: return with what is there (NB) or wait (B, bounded in softdpu). */
enum doca_gpu_dev_eth_wait_flags {
	DOCA_GPUNETIO_ETH_WAIT_FLAG_NB = 0,
	DOCA_GPUNETIO_ETH_WAIT_FLAG_B = 1,
};

/* Who takes part in one call: one thread, all threads of a warp, all threads of a block. */
enum doca_gpu_dev_eth_exec_scope {
	DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD = 0,
	DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP = 1,
	DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK = 2,
};

/* Scope of the fences before publication (softdpu always orders at system scope). */
enum doca_gpu_dev_eth_sync_scope {
	DOCA_GPUNETIO_ETH_SYNC_SCOPE_SYS = 0,
	DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU = 1,
	DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA = 2,
	DOCA_GPUNETIO_ETH_SYNC_SCOPE_MAX = INT_MAX,
};

/* Which threads share a send queue: one thread, the threads of one block, any threads. */
enum doca_gpu_dev_eth_resource_sharing_mode {
	DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE = 0,
	DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA = 1,
	DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU = 2,
	DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_MAX = INT_MAX,
};

/* Who rings the doorbell (softdpu's engine polls the ring, so every value works alike). */
enum doca_gpu_dev_eth_nic_handler {
	DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO = 0,
	DOCA_GPUNETIO_ETH_NIC_HANDLER_CPU_PROXY = 1,
	DOCA_GPUNETIO_ETH_NIC_HANDLER_GPU_SM_DB = 2,
	DOCA_GPUNETIO_ETH_NIC_HANDLER_TYPE_MAX = 3,
};

/* Completion polling: every entry in the range, or only the last one. */
enum doca_gpu_dev_eth_cq_poll_mode {
	DOCA_GPUNETIO_ETH_CQ_POLL_ALL = 0,
	DOCA_GPUNETIO_ETH_CQ_POLL_LAST = 1,
};

/* Memory-consistency step after a receive (not needed in softdpu: a no-op). */
enum doca_gpu_dev_eth_mcst_mode {
	DOCA_GPUNETIO_ETH_MCST_DISABLED = 0,
	DOCA_GPUNETIO_ETH_MCST_ENABLED = 1,
	DOCA_GPUNETIO_ETH_MCST_AUTO = 2,
};

/* Which per-packet attributes a receive call fills: none, the timestamp, or all. */
enum doca_gpu_dev_eth_rxq_attr_type {
	DOCA_GPUNETIO_ETH_RX_ATTR_NONE = 0,
	DOCA_GPUNETIO_ETH_RX_ATTR_TS = 1,
	DOCA_GPUNETIO_ETH_RX_ATTR_ALL = 2,
};

/* Attributes of one received packet (16 bytes; out_attr[k] describes packet first + k). */
struct doca_gpu_dev_eth_rxq_attr {
	uint64_t timestamp_ns; /* receive time (ns), 0 when the backend has none */
	uint32_t bytes;	       /* bytes stored in the packet's slot */
	uint32_t padding;
};

/* A send's ticket: the position of its descriptor in the send queue. */
typedef uint64_t doca_gpu_dev_eth_ticket_t;
typedef uint64_t doca_gpu_dev_eth_txq_ticket_t;

#endif /* DOCA_GPUNETIO_ETH_DEF_H_ */
