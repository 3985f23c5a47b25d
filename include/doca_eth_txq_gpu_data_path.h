/*
 * softdpu: GPU data path of the DOCA Ethernet send queue (doca_eth_txq_gpu_data_path.h).
 *
 * Where completions go and how doorbells ring. softdpu's engine polls the GPU send queue's ring
 * in mapped host memory, so every doorbell mode works (GPU_SM_DB and CPU_PROXY alike) and
 * doca_eth_txq_gpu_cpu_proxy_progress() is harmless. Completions of descriptors flagged NOTIFY
 * (and of failed ones) go to the kernel when doca_eth_txq_gpu_set_completion_on_gpu() was
 * called, else to the event callbacks below through doca_pe_progress(), else nowhere.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_ETH_TXQ_GPU_DATA_PATH_H_
#define DOCA_ETH_TXQ_GPU_DATA_PATH_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_eth_txq;
struct doca_eth_txq_gpu_event_error_send_packet;  /* a descriptor that failed */
struct doca_eth_txq_gpu_event_notify_send_packet; /* a NOTIFY descriptor sent */

typedef void (*doca_eth_txq_gpu_event_error_send_packet_cb_t)(
	struct doca_eth_txq_gpu_event_error_send_packet *event_error,
	union doca_data event_user_data);
typedef void (*doca_eth_txq_gpu_event_notify_send_packet_cb_t)(
	struct doca_eth_txq_gpu_event_notify_send_packet *event_notify,
	union doca_data event_user_data);

/* Completions are polled by the kernel (IDLE only). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_gpu_set_completion_on_gpu(struct doca_eth_txq *eth_txq);

/* CPU-proxy doorbells (IDLE only; the engine polls either way). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_gpu_set_uar_on_cpu(struct doca_eth_txq *eth_txq);

/* Where the send ring lives (IDLE only; any type accepted; it is mapped host memory). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_gpu_set_sq_mem_type(struct doca_eth_txq *eth_txq,
					      enum doca_gpu_mem_type mem_type);

/* The CPU proxy's progress call: harmless; BAD_STATE unless RUNNING on the GPU data path. */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_gpu_cpu_proxy_progress(struct doca_eth_txq *txq);

/* Event callbacks run from doca_pe_progress() (register before start). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_gpu_event_error_send_packet_register(
	struct doca_eth_txq *eth_txq,
	doca_eth_txq_gpu_event_error_send_packet_cb_t event_error_send_packet_cb,
	union doca_data event_user_data);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_gpu_event_notify_send_packet_register(
	struct doca_eth_txq *eth_txq,
	doca_eth_txq_gpu_event_notify_send_packet_cb_t event_notify_send_packet_cb,
	union doca_data event_user_data);

/* The descriptor position (ticket & 0xffff) of an event, and when it was sent (ns, REALTIME). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_gpu_event_error_send_packet_get_position(
	const struct doca_eth_txq_gpu_event_error_send_packet *event_error, uint16_t *packet_index);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_gpu_event_notify_send_packet_get_position(
	const struct doca_eth_txq_gpu_event_notify_send_packet *event_notify,
	uint16_t *packet_index);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_gpu_event_notify_send_packet_get_timestamp(
	const struct doca_eth_txq_gpu_event_notify_send_packet *event_notify,
	uint64_t *packet_timestamp);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ETH_TXQ_GPU_DATA_PATH_H_ */
