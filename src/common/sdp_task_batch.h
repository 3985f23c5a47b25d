/*
 * softdpu internal: the task batch base (struct doca_task_batch) every batch task type embeds.
 *
 * A task batch is one submission of up to 16/32/64/128 tasks of a context. It lives like a task:
 * ALLOCATED (the application's) -> SUBMITTED (the library's) -> COMPLETED (its callback is due)
 * -> ALLOCATED again, or FREED through doca_task_batch_free(). To keep completions in order with
 * the context's single tasks, and stop's in-flight accounting exact, a batch carries a plain
 * `struct doca_task` as its first member: the task core (task.c, pe.c) counts it as one
 * allocated and, while submitted, one in-flight task, queues its completion on the PE and runs
 * it from doca_pe_progress(). The batch type only sees its own ops.
 *
 * A batch type (say the eth send queue):
 * - keeps its batches (pooled: a freed batch stays readable, so a second free or submit of it is
 *   refused instead of touching freed memory), each with arrays of max_tasks entries for the
 *   per-task user data and statuses;
 * - allocates with sdp_task_batch_init() (context RUNNING: sdp_ctx_check_running());
 * - in ops->submit hands the tasks to its engine and, once every task has a result in
 *   batch->status[], calls sdp_task_batch_complete() (from any thread);
 * - in ops->deliver calls the application's typed callback (from doca_pe_progress);
 * - in ops->free takes the batch back.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_TASK_BATCH_H_
#define SDP_TASK_BATCH_H_

#include <stdint.h>

#include "doca_pe.h"
#include "sdp_ctx.h"

struct sdp_task_batch_ops {
	const char *name; /* for log messages ("eth_txq_batch_send") */
	/*
	 * Hand the batch's tasks to the engine; called with the context RUNNING and the batch
	 * counted in flight. Same contract as sdp_task_ops.submit: on DOCA_SUCCESS the type later
	 * calls sdp_task_batch_complete() exactly once; on an error it does not (the application
	 * keeps the batch).
	 */
	doca_error_t (*submit)(struct doca_task_batch *batch);
	/*
	 * Run the application's completion callback (from doca_pe_progress). The batch belongs to
	 * the application again; the callback may free or resubmit it. Use batch->status[] and
	 * sdp_task_batch_get_status() to choose between the success and the error callback.
	 */
	void (*deliver)(struct doca_task_batch *batch, union doca_data ctx_user_data);
	/* Take the batch back (doca_task_batch_free); its state already reads FREED. */
	void (*free)(struct doca_task_batch *batch);
};

struct doca_task_batch {
	struct doca_task task; /* first: state, ctx, completion queue, accounting */
	const struct sdp_task_batch_ops *ops;
	uint16_t tasks_num;		 /* tasks in this submission, 1..max_tasks */
	uint16_t max_tasks;		 /* size of the arrays */
	union doca_data user_data;	 /* task_batch_user_data */
	union doca_data *task_user_data; /* max_tasks entries, owned by the type */
	doca_error_t *status;		 /* max_tasks entries: each task's result */
};

/* 16, 32, 64 or 128 for DOCA's enum values; 0 for anything else. */
uint16_t sdp_task_batch_max_tasks(enum doca_task_batch_max_tasks_number max_tasks_number);

/*
 * Initialise a batch the type allocated (or took from its pool) for tasks_num tasks: ALLOCATED,
 * counted as allocated on ctx, user data set, the first max_tasks entries of task_user_data
 * zeroed and of status set to DOCA_SUCCESS. The caller checked 1 <= tasks_num <= max_tasks.
 */
void sdp_task_batch_init(struct doca_task_batch *batch, const struct sdp_task_batch_ops *ops,
			 struct doca_ctx *ctx, uint16_t tasks_num, uint16_t max_tasks,
			 union doca_data user_data, union doca_data *task_user_data,
			 doca_error_t *status);

/*
 * Complete a submitted batch (any thread) once batch->status[0..tasks_num) holds every task's
 * result; ops->deliver then runs from doca_pe_progress. The batch's overall status is the
 * first failed task's status, or DOCA_SUCCESS.
 */
void sdp_task_batch_complete(struct doca_task_batch *batch);

/* The overall status of a completed batch (see sdp_task_batch_complete). */
static inline doca_error_t sdp_task_batch_get_status(const struct doca_task_batch *batch)
{
	return batch->task.status;
}

/* The batch's state (PE lock not taken: for the application thread's own checks). */
static inline enum sdp_task_state sdp_task_batch_get_state(const struct doca_task_batch *batch)
{
	return batch->task.state;
}

#endif /* SDP_TASK_BATCH_H_ */
