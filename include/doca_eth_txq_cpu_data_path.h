/*
 * softdpu: the CPU data path of DOCA Ethernet send queues (doca_eth_txq_cpu_data_path.h).
 *
 * The application allocates send tasks, each with a doca_buf holding one whole frame (its data
 * section), and submits them; the engine hands the frame to the device's backend and completes
 * the task through the queue's doca_pe once the backend took it. A task the backend could not
 * take before the queue stops completes through the error callback with DOCA_ERROR_IO_FAILED.
 * Batch and LSO send tasks come later.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_ETH_TXQ_CPU_DATA_PATH_H_
#define DOCA_ETH_TXQ_CPU_DATA_PATH_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_pe.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_task;
struct doca_eth_txq;
struct doca_eth_txq_task_send; /* sends one packet */

/* Completion callback of send tasks (success and error alike). */
typedef void (*doca_eth_txq_task_send_completion_cb_t)(struct doca_eth_txq_task_send *task_send,
						       union doca_data task_user_data,
						       union doca_data ctx_user_data);

/* Callbacks and the number of send tasks the application may hold at once. IDLE only. */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_task_send_set_conf(
	struct doca_eth_txq *eth_txq, doca_eth_txq_task_send_completion_cb_t task_completion_cb,
	doca_eth_txq_task_send_completion_cb_t task_error_cb, uint32_t task_send_num);

/* A send task of pkt on a RUNNING queue; DOCA_ERROR_NO_MEMORY past task_send_num. */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_task_send_allocate_init(struct doca_eth_txq *eth_txq,
						  struct doca_buf *pkt, union doca_data user_data,
						  struct doca_eth_txq_task_send **task_send);

/* The task as a generic DOCA task; NULL for NULL. */
DOCA_EXPERIMENTAL
struct doca_task *doca_eth_txq_task_send_as_doca_task(struct doca_eth_txq_task_send *task_send);

/* Replace / read the task's packet buffer. */
DOCA_EXPERIMENTAL
void doca_eth_txq_task_send_set_pkt(struct doca_eth_txq_task_send *task_send, struct doca_buf *pkt);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_task_send_get_pkt(const struct doca_eth_txq_task_send *task_send,
					    struct doca_buf **pkt);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ETH_TXQ_CPU_DATA_PATH_H_ */
