/*
 * softdpu: DOCA Ethernet send queue (doca_eth_txq.h).
 *
 * A send queue is a DOCA context bound to one device. On the CPU data path softdpu hands each
 * send task's frame to the device's software backend (libdoca_eth), computing the IPv4 header
 * and UDP/TCP checksums in software when the offloads are enabled. Declared here: what softdpu
 * implements; wait-on-time, LSO, metadata and GPU handles come later (issue 4/5).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_ETH_TXQ_H_
#define DOCA_ETH_TXQ_H_

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
struct doca_eth_txq;
struct doca_gpu_eth_txq;

/* How a send queue takes packets. */
enum doca_eth_txq_type {
	DOCA_ETH_TXQ_TYPE_REGULAR = 0,
};

/* Where the queue's data path runs. */
enum doca_eth_txq_data_path_type {
	DOCA_ETH_TXQ_DATA_PATH_TYPE_CPU = 0,
	DOCA_ETH_TXQ_DATA_PATH_TYPE_GPU = 1,
};

/* Create a send queue on dev with room for max_burst_size packets in flight. IDLE, REGULAR. */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_create(struct doca_dev *dev, uint32_t max_burst_size,
				 struct doca_eth_txq **eth_txq);

/* Destroy an IDLE queue (DOCA_ERROR_BAD_STATE otherwise). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_destroy(struct doca_eth_txq *eth_txq);

/* The queue as a DOCA context (NULL for NULL). */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_eth_txq_as_doca_ctx(struct doca_eth_txq *eth_txq);

/* Setters, IDLE only. */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_set_type(struct doca_eth_txq *eth_txq, enum doca_eth_txq_type type);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_set_max_burst_size(struct doca_eth_txq *eth_txq, uint32_t max_burst_size);
/* Fill in the IPv4 header checksum of every IPv4 frame sent (nonzero: on). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_set_l3_chksum_offload(struct doca_eth_txq *eth_txq,
						uint8_t enable_l3_chksum);
/* Fill in the UDP/TCP checksum of every IPv4/IPv6 frame sent (nonzero: on). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_set_l4_chksum_offload(struct doca_eth_txq *eth_txq,
						uint8_t enable_l4_chksum);

/* Give a RUNNING queue its id on the device. */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_apply_queue_id(struct doca_eth_txq *eth_txq, uint16_t queue_id);

/*
 * The GPU handle of a queue started on the GPU data path, for its kernels (a device address).
 * DOCA_ERROR_BAD_STATE unless RUNNING, DOCA_ERROR_NOT_SUPPORTED for a CPU data path queue.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_get_gpu_handle(const struct doca_eth_txq *eth_txq,
					 struct doca_gpu_eth_txq **eth_txq_ext);

/*
 * Wait-on-time: descriptors carry the earliest send time and the engine holds each until then
 * (softdpu answers DOCA_ETH_WAIT_ON_TIME_TYPE_NATIVE). set: IDLE only, GPU data path.
 * calculate_timestamp: a CLOCK_REALTIME time in ns to the value the device API takes
 * (seconds in the high 32 bits, nanoseconds in the low ones, big-endian); RUNNING queues with
 * the offload on, else DOCA_ERROR_BAD_STATE.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_set_wait_on_time_offload(struct doca_eth_txq *eth_txq);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_cap_get_wait_on_time_offload_supported(
	const struct doca_devinfo *devinfo, enum doca_eth_wait_on_time_type *wait_on_time_mode);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_calculate_timestamp(struct doca_eth_txq *eth_txq, uint64_t timestamp_ns,
					      uint64_t *wait_on_time_value);

/*
 * Capabilities of a device. is_type_supported: DOCA_SUCCESS when the type runs on that data
 * path, DOCA_ERROR_NOT_SUPPORTED when not.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_cap_is_type_supported(const struct doca_devinfo *devinfo,
						enum doca_eth_txq_type type,
						enum doca_eth_txq_data_path_type data_path_type);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_cap_get_max_burst_size(const struct doca_devinfo *devinfo,
						 uint32_t max_send_buf_list_len,
						 uint16_t max_lso_header_size,
						 uint32_t *max_burst_size);
/* DOCA_SUCCESS when the device offloads L3 / L4 checksums on send (softdpu: always). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_cap_is_l3_chksum_offload_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_cap_is_l4_chksum_offload_supported(const struct doca_devinfo *devinfo);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ETH_TXQ_H_ */
