/*
 * softdpu: DOCA task batches (doca_task_batch_submit, doca_task_batch_free) and the base batch
 * task types build on (sdp_task_batch.h).
 *
 * A batch rides on the task core through the `struct doca_task` it embeds: submission,
 * ownership, in-flight accounting, the PE's completion queue and release are the task core's;
 * this file only routes the embedded task's hooks to the batch type's ops.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_task_batch.h"

#include <string.h>

#include "doca_pe.h"
#include "sdp_ctx.h"
#include "sdp_log.h"

SDP_LOG_COMPONENT("task_batch");

static struct doca_task_batch *batch_of(struct doca_task *task)
{
	return sdp_container_of(task, struct doca_task_batch, task);
}

static doca_error_t batch_task_submit(struct doca_task *task)
{
	struct doca_task_batch *batch = batch_of(task);

	return batch->ops->submit(batch);
}

static void batch_task_free(struct doca_task *task)
{
	struct doca_task_batch *batch = batch_of(task);

	if (batch->ops->free != NULL)
		batch->ops->free(batch);
}

/* The embedded task's callback (success and error alike): hand over to the batch type. */
static void batch_task_done(struct doca_task *task, union doca_data task_user_data,
			    union doca_data ctx_user_data)
{
	struct doca_task_batch *batch = batch_of(task);

	(void)task_user_data;
	batch->ops->deliver(batch, ctx_user_data);
}

static const struct sdp_task_ops batch_task_ops = {
	.name = "task batch",
	.submit = batch_task_submit,
	.free = batch_task_free,
};

uint16_t sdp_task_batch_max_tasks(enum doca_task_batch_max_tasks_number max_tasks_number)
{
	switch (max_tasks_number) {
	case DOCA_TASK_BATCH_MAX_TASKS_NUMBER_16:
		return 16;
	case DOCA_TASK_BATCH_MAX_TASKS_NUMBER_32:
		return 32;
	case DOCA_TASK_BATCH_MAX_TASKS_NUMBER_64:
		return 64;
	case DOCA_TASK_BATCH_MAX_TASKS_NUMBER_128:
		return 128;
	}
	return 0;
}

void sdp_task_batch_init(struct doca_task_batch *batch, const struct sdp_task_batch_ops *ops,
			 struct doca_ctx *ctx, uint16_t tasks_num, uint16_t max_tasks,
			 union doca_data user_data, union doca_data *task_user_data,
			 doca_error_t *status)
{
	sdp_task_init(&batch->task, &batch_task_ops, ctx, batch_task_done, batch_task_done);
	batch->ops = ops;
	batch->tasks_num = tasks_num;
	batch->max_tasks = max_tasks;
	batch->user_data = user_data;
	batch->task_user_data = task_user_data;
	batch->status = status;
	memset(task_user_data, 0, sizeof(*task_user_data) * max_tasks);
	for (uint16_t i = 0; i < max_tasks; i++)
		status[i] = DOCA_SUCCESS;
}

void sdp_task_batch_complete(struct doca_task_batch *batch)
{
	doca_error_t status = DOCA_SUCCESS;

	if (batch == NULL) {
		sdp_error("cannot complete a NULL task batch");
		return;
	}
	for (uint16_t i = 0; i < batch->tasks_num; i++) {
		if (batch->status[i] != DOCA_SUCCESS) {
			status = batch->status[i];
			break;
		}
	}
	sdp_trace("%s batch %p: %u task(s) done (%s)", batch->ops->name, (void *)batch,
		  batch->tasks_num, doca_error_get_name(status));
	sdp_task_complete(&batch->task, status);
}

/* A batch some context allocated: NULL and foreign pointers give INVALID_VALUE (logged). */
static doca_error_t batch_check(const struct doca_task_batch *batch, const char *what)
{
	if (batch == NULL) {
		sdp_error("%s: NULL task batch", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (batch->task.ops != &batch_task_ops || batch->task.ctx == NULL || batch->ops == NULL) {
		sdp_error("%s: task batch %p was not allocated by a context", what,
			  (const void *)batch);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_task_batch_submit(struct doca_task_batch *task_batch)
{
	enum sdp_task_state state;
	struct doca_ctx *ctx;
	doca_error_t status;

	status = batch_check(task_batch, "doca_task_batch_submit");
	if (status != DOCA_SUCCESS)
		return status;
	ctx = task_batch->task.ctx;
	sdp_pe_lock(ctx->pe);
	state = task_batch->task.state;
	sdp_pe_unlock(ctx->pe);
	if (state != SDP_TASK_ALLOCATED) {
		sdp_error("%s batch %p: cannot submit, it is %s", task_batch->ops->name,
			  (void *)task_batch,
			  state == SDP_TASK_FREED ? "freed" : "submitted (wait for its callback)");
		return DOCA_ERROR_BAD_STATE;
	}
	/* The task core checks the context (RUNNING, a PE) and does the accounting. */
	return doca_task_submit(&task_batch->task);
}

void doca_task_batch_free(struct doca_task_batch *task_batch)
{
	if (task_batch == NULL)
		return; /* as doca_task_free */
	if (batch_check(task_batch, "doca_task_batch_free") != DOCA_SUCCESS)
		return;
	/* Refused (and logged) by the task core unless the application owns the batch. */
	doca_task_free(&task_batch->task);
}
