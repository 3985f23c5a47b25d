/*
 * softdpu: the CPU data path of DOCA Ethernet receive queues (doca_eth_rxq_cpu_data_path.h).
 *
 * REGULAR queues: the application allocates receive tasks, each with a doca_buf, and submits
 * them; the engine stores one received frame in each task's buffer (from the buffer's head;
 * the data section is set to the frame) and completes it through the queue's doca_pe. When the
 * queue stops, tasks still waiting are completed through the error callback with
 * DOCA_ERROR_IO_FAILED.
 *
 * MANAGED_MEMPOOL queues: the queue keeps received frames in the memory given with
 * doca_eth_rxq_set_pkt_buf() and hands them to the application in batches of events through
 * the queue's doca_pe. The batch's doca_bufs point into that memory and are valid until the
 * callback returns; the application does not release them (the queue takes them back when the
 * callback returns) and frees the array with doca_eth_rxq_event_batch_managed_recv_pkt_array_free().
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_ETH_RXQ_CPU_DATA_PATH_H_
#define DOCA_ETH_RXQ_CPU_DATA_PATH_H_

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
struct doca_eth_rxq;
struct doca_eth_rxq_task_recv;		      /* receives one packet (REGULAR queues) */
struct doca_eth_rxq_event_batch_managed_recv; /* a batch of received packets (MANAGED_MEMPOOL) */

/* Completion callback of receive tasks (success and error alike). */
typedef void (*doca_eth_rxq_task_recv_completion_cb_t)(struct doca_eth_rxq_task_recv *task_recv,
						       union doca_data task_user_data,
						       union doca_data ctx_user_data);

/*
 * Callbacks and the number of receive tasks the application may hold allocated at once.
 * IDLE only; required before a REGULAR queue starts on the CPU data path.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_task_recv_set_conf(
	struct doca_eth_rxq *eth_rxq, doca_eth_rxq_task_recv_completion_cb_t task_completion_cb,
	doca_eth_rxq_task_recv_completion_cb_t task_error_cb, uint32_t task_recv_num);

/*
 * A receive task into pkt, on a RUNNING queue. DOCA_ERROR_NO_MEMORY when task_recv_num tasks
 * are already allocated.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_task_recv_allocate_init(struct doca_eth_rxq *eth_rxq,
						  struct doca_buf *pkt, union doca_data user_data,
						  struct doca_eth_rxq_task_recv **task_recv);

/* The task as a generic DOCA task (submit, free, status); NULL for NULL. */
DOCA_EXPERIMENTAL
struct doca_task *doca_eth_rxq_task_recv_as_doca_task(struct doca_eth_rxq_task_recv *task_recv);

/* Replace / read the task's packet buffer. */
DOCA_EXPERIMENTAL
void doca_eth_rxq_task_recv_set_pkt(struct doca_eth_rxq_task_recv *task_recv, struct doca_buf *pkt);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_task_recv_get_pkt(const struct doca_eth_rxq_task_recv *task_recv,
					    struct doca_buf **pkt);

/* Whether the received frame's IPv4 header / UDP-TCP checksum was correct (1) or not (0). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_task_recv_get_l3_ok(const struct doca_eth_rxq_task_recv *task_recv,
					      uint8_t *l3_ok);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_task_recv_get_l4_ok(const struct doca_eth_rxq_task_recv *task_recv,
					      uint8_t *l4_ok);

/*
 * Handler of a batch of received packets: events_number packets in pkt_array (status
 * DOCA_SUCCESS), or the queue's error (pkt_array may then be NULL and events_number 0).
 */
typedef void (*doca_eth_rxq_event_batch_managed_recv_handler_cb_t)(
	struct doca_eth_rxq_event_batch_managed_recv *event_batch_managed_recv,
	uint16_t events_number, union doca_data event_batch_user_data, doca_error_t status,
	struct doca_buf **pkt_array);

/*
 * Receive MANAGED_MEMPOOL packets in batches of events_number_min to events_number_max (IDLE
 * only; required before such a queue starts). A batch is delivered as soon as at least
 * events_number_min packets wait.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_event_batch_managed_recv_register(
	struct doca_eth_rxq *eth_rxq, enum doca_event_batch_events_number events_number_max,
	enum doca_event_batch_events_number events_number_min, union doca_data user_data,
	doca_eth_rxq_event_batch_managed_recv_handler_cb_t success_event_batch_handler,
	doca_eth_rxq_event_batch_managed_recv_handler_cb_t error_event_batch_handler);

/* The receive queue's context, from inside a batch handler; NULL for NULL. */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_eth_rxq_event_batch_managed_recv_get_ctx(
	const struct doca_eth_rxq_event_batch_managed_recv *event_batch_managed_recv);

/* Free the packet array a batch handler received (not the packets). NULL is ignored. */
DOCA_EXPERIMENTAL
void doca_eth_rxq_event_batch_managed_recv_pkt_array_free(struct doca_buf **pkt_array);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ETH_RXQ_CPU_DATA_PATH_H_ */
