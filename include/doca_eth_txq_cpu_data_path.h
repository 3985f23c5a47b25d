/*
 * softdpu: the CPU data path of DOCA Ethernet send queues (doca_eth_txq_cpu_data_path.h).
 *
 * The application allocates send tasks, each with a doca_buf holding one whole frame (its data
 * section), and submits them; the engine hands the frame to the device's backend and completes
 * the task through the queue's doca_pe once the backend took it. A task the backend could not
 * take before the queue stops completes through the error callback with DOCA_ERROR_IO_FAILED.
 *
 * Batch send tasks send up to 16/32/64/128 frames with one submission (doca_task_batch_submit)
 * and report them with one callback carrying a status per frame. They keep their order with the
 * queue's single send tasks. LSO send tasks come later.
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

/*
 * Completion callback of batch send tasks: tasks_num frames, the batch's user data, and the
 * batch's arrays (task_user_data_array, pkt_array, status_array: one entry per frame). The
 * success callback runs when every frame was sent, the error callback when any failed (see
 * status_array). The batch belongs to the application again (doca_task_batch_free).
 */
typedef void (*doca_eth_txq_task_batch_send_completion_cb_t)(
	struct doca_task_batch *task_batch, uint16_t tasks_num, union doca_data ctx_user_data,
	union doca_data task_batch_user_data, union doca_data *task_user_data_array,
	struct doca_buf **pkt_array, doca_error_t *status_array);

/*
 * Batch send tasks: the largest batch, how many batches the application may hold at once, and
 * the callbacks. IDLE only (DOCA_ERROR_BAD_STATE otherwise); DOCA_ERROR_INVALID_VALUE for an
 * unknown size, no batches or a NULL callback.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_task_batch_send_set_conf(
	struct doca_eth_txq *eth_txq, enum doca_task_batch_max_tasks_number max_tasks_number,
	uint16_t num_task_batches,
	doca_eth_txq_task_batch_send_completion_cb_t success_completion_cb,
	doca_eth_txq_task_batch_send_completion_cb_t error_completion_cb);

/*
 * A batch of tasks_num (1 to the configured maximum) send tasks on a RUNNING queue. The batch
 * owns two arrays of the configured maximum size, returned in pkt_array and
 * task_user_data_array: the application writes the first tasks_num entries (each packet a
 * doca_buf whose data section is one whole frame) before doca_task_batch_submit().
 * DOCA_ERROR_NO_MEMORY past num_task_batches batches held.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_task_batch_send_allocate(struct doca_eth_txq *eth_txq, uint16_t tasks_num,
						   union doca_data task_batch_user_data,
						   struct doca_buf ***pkt_array,
						   union doca_data **task_user_data_array,
						   struct doca_task_batch **task_batch);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ETH_TXQ_CPU_DATA_PATH_H_ */
