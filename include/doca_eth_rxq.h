/*
 * softdpu: DOCA Ethernet receive queue (doca_eth_rxq.h).
 *
 * A receive queue is a DOCA context bound to one device. On the CPU data path softdpu runs it
 * on a software engine (libdoca_eth): frames the device's backend receives are steered by DOCA
 * Flow (when a flow port is started on the device) and copied into the buffers of submitted
 * receive tasks (doca_eth_rxq_cpu_data_path.h). Only the REGULAR type runs on the CPU data path
 * for now; CYCLIC is the GPU data path's type (issue 5). Declared here: what softdpu
 * implements; GPU handles, headroom/tailroom and metadata setters come later.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_ETH_RXQ_H_
#define DOCA_ETH_RXQ_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_ctx;
struct doca_dev;
struct doca_devinfo;
struct doca_mmap;
struct doca_eth_rxq;
struct doca_gpu_eth_rxq;

/* How a receive queue hands packets to the application. */
enum doca_eth_rxq_type {
	DOCA_ETH_RXQ_TYPE_CYCLIC = 0,	       /* a ring of packet slots (GPU data path) */
	DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL = 1, /* the library fills buffers of a managed pool */
	DOCA_ETH_RXQ_TYPE_REGULAR = 2,	       /* one receive task per packet */
};

/* Where the queue's data path runs. */
enum doca_eth_rxq_data_path_type {
	DOCA_ETH_RXQ_DATA_PATH_TYPE_CPU = 0,
	DOCA_ETH_RXQ_DATA_PATH_TYPE_GPU = 1,
};

/*
 * Create a receive queue on dev for bursts of up to max_burst_size packets of up to
 * max_packet_size bytes each. The queue starts IDLE, of type REGULAR.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_create(struct doca_dev *dev, uint32_t max_burst_size,
				 uint32_t max_packet_size, struct doca_eth_rxq **eth_rxq);

/* Destroy an IDLE queue (DOCA_ERROR_BAD_STATE otherwise). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_destroy(struct doca_eth_rxq *eth_rxq);

/* The queue as a DOCA context (NULL for NULL). */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_eth_rxq_as_doca_ctx(struct doca_eth_rxq *eth_rxq);

/* Setters, IDLE only. */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_set_type(struct doca_eth_rxq *eth_rxq, enum doca_eth_rxq_type type);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_set_max_burst_size(struct doca_eth_rxq *eth_rxq, uint32_t max_burst_size);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_set_max_packet_size(struct doca_eth_rxq *eth_rxq,
					      uint32_t max_packet_size);

/*
 * The packet memory of a CYCLIC or MANAGED_MEMPOOL queue: [mmap_offset, mmap_offset +
 * mmap_len) of a started mmap. IDLE only.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_set_pkt_buf(struct doca_eth_rxq *eth_rxq, struct doca_mmap *mmap,
				      uint32_t mmap_offset, uint32_t mmap_len);

/*
 * The packet memory a queue of this type needs (bytes) for the given rate (MB/s), longest
 * time a packet stays (us), packet and burst sizes, log2 of the largest LRO packet and the
 * per-packet head and tail room.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_estimate_packet_buf_size(enum doca_eth_rxq_type type, uint32_t rate,
						   uint16_t pkt_max_time, uint32_t max_packet_size,
						   uint32_t max_burst_size,
						   uint8_t log_max_lro_pkt_sz, uint16_t head_size,
						   uint16_t tail_size, uint32_t *buf_size);

/*
 * Give a RUNNING queue the id DOCA Flow's forward actions (DOCA_FLOW_FWD_RSS queues) name it
 * by on its device.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_apply_queue_id(struct doca_eth_rxq *eth_rxq, uint16_t queue_id);

/*
 * The GPU handle of a queue started on the GPU data path, for its kernels (a device address).
 * DOCA_ERROR_BAD_STATE unless RUNNING, DOCA_ERROR_NOT_SUPPORTED for a CPU data path queue.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_get_gpu_handle(const struct doca_eth_rxq *eth_rxq,
					 struct doca_gpu_eth_rxq **eth_rxq_ext);

/*
 * Capabilities of a device. is_type_supported: DOCA_SUCCESS when the type runs on that data
 * path, DOCA_ERROR_NOT_SUPPORTED when not.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_cap_is_type_supported(const struct doca_devinfo *devinfo,
						enum doca_eth_rxq_type type,
						enum doca_eth_rxq_data_path_type data_path_type);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_cap_get_max_burst_size(const struct doca_devinfo *devinfo,
						 uint32_t *max_burst_size);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_cap_get_max_packet_size(const struct doca_devinfo *devinfo,
						  uint32_t *max_packet_size);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ETH_RXQ_H_ */
