/*
 * softdpu: the DOCA task base: submission, ownership, completion and release.
 *
 * Ownership follows the state: ALLOCATED (the application's), SUBMITTED and COMPLETED (the
 * library's, until doca_pe_progress runs the callback and makes it ALLOCATED again).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <string.h>

#include "doca_pe.h"
#include "sdp_ctx.h"
#include "sdp_log.h"

SDP_LOG_COMPONENT("task");

#define TASK_SUBMIT_FLAGS_ALL (DOCA_TASK_SUBMIT_FLAG_FLUSH | DOCA_TASK_SUBMIT_FLAG_OPTIMIZE_REPORTS)

static const char *task_type(const struct doca_task *task)
{
	return task->ops->name != NULL ? task->ops->name : "task";
}

void sdp_task_init(struct doca_task *task, const struct sdp_task_ops *ops, struct doca_ctx *ctx,
		   doca_task_completion_cb_t success_cb, doca_task_completion_cb_t error_cb)
{
	task->ops = ops;
	task->ctx = ctx;
	task->success_cb = success_cb;
	task->error_cb = error_cb;
	task->user_data.u64 = 0;
	task->status = DOCA_SUCCESS;
	task->state = SDP_TASK_ALLOCATED;
	task->submit_flags = 0;
	sdp_list_head_init(&task->link);
	ctx->num_allocated++;
}

/* Mark a submitted task completed and queue it on list; 0 (logged) when it was not submitted. */
static int task_mark_completed(struct doca_task *task, doca_error_t status, sdp_list_link_t *list)
{
	if (task->state != SDP_TASK_SUBMITTED)
		return 0;
	task->status = status;
	task->state = SDP_TASK_COMPLETED;
	sdp_list_add_tail(list, &task->link);
	return 1;
}

void sdp_task_complete(struct doca_task *task, doca_error_t status)
{
	struct doca_pe *pe;
	int ok;

	if (task == NULL || task->ctx == NULL || task->ctx->pe == NULL) {
		sdp_error("cannot complete task %p: no task or no progress engine", (void *)task);
		return;
	}
	pe = task->ctx->pe;
	if (sdp_pe_progressing == pe &&
	    !atomic_load_explicit(&pe->has_completed, memory_order_relaxed)) {
		/*
		 * On the thread running this PE's progress, while no other thread's completion
		 * waits: its own list, no lock. (Behind one that waits it queues after it, so
		 * the callbacks keep the order of the completions.)
		 */
		ok = task_mark_completed(task, status, &pe->completed_local);
	} else {
		sdp_pe_lock(pe);
		ok = task_mark_completed(task, status, &pe->completed);
		if (ok) {
			atomic_store_explicit(&pe->has_completed, 1, memory_order_relaxed);
			sdp_pe_notify_locked(pe);
		}
		sdp_pe_unlock(pe);
	}
	if (!ok)
		sdp_error("%s task %p: completed while not submitted (completed twice?)",
			  task_type(task), (void *)task);
}

/* Everything submit and try_submit check before handing the task to its type. */
static doca_error_t task_check_submit(const struct doca_task *task, uint32_t flags)
{
	const struct doca_ctx *ctx;

	if (task == NULL) {
		sdp_error("NULL task");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (task->ops == NULL || task->ctx == NULL) {
		sdp_error("task %p was not allocated by a context", (const void *)task);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if ((flags & ~(uint32_t)TASK_SUBMIT_FLAGS_ALL) != 0) {
		sdp_error("%s task %p: unknown submit flags 0x%x", task_type(task),
			  (const void *)task, flags & ~(uint32_t)TASK_SUBMIT_FLAGS_ALL);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (task->ops->submit == NULL) {
		sdp_error("%s task %p: this task type cannot be submitted", task_type(task),
			  (const void *)task);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	ctx = task->ctx;
	if (ctx->state != DOCA_CTX_STATE_RUNNING) {
		sdp_error("%s task %p: cannot submit, its context is %s (not RUNNING)",
			  task_type(task), (const void *)task, sdp_ctx_state_name(ctx->state));
		return DOCA_ERROR_BAD_STATE;
	}
	if (ctx->pe == NULL) {
		sdp_error("%s task %p: its context has no progress engine to report completions",
			  task_type(task), (const void *)task);
		return DOCA_ERROR_NOT_CONNECTED;
	}
	return DOCA_SUCCESS;
}

static doca_error_t task_submit(struct doca_task *task, uint32_t flags)
{
	struct doca_ctx *ctx = task->ctx;
	struct doca_pe *pe = ctx->pe;
	doca_error_t status;

	/*
	 * No lock: an ALLOCATED task and the in-flight counts are the PE thread's (docs/
	 * architecture.md, "The progress engine"); a context type hands the task to an engine
	 * thread through its own synchronised queue, which also carries this state to it.
	 */
	if (task->state != SDP_TASK_ALLOCATED) {
		enum sdp_task_state state = task->state;

		sdp_error("%s task %p: cannot submit, it is %s", task_type(task), (void *)task,
			  state == SDP_TASK_FREED ? "freed" : "already submitted");
		return state == SDP_TASK_FREED ? DOCA_ERROR_INVALID_VALUE : DOCA_ERROR_IN_USE;
	}
	task->state = SDP_TASK_SUBMITTED;
	task->submit_flags = flags;
	ctx->num_inflight++;
	pe->num_inflight++;

	status = task->ops->submit(task);
	if (status != DOCA_SUCCESS) {
		/* The type logged why; the task is the caller's again. */
		task->state = SDP_TASK_ALLOCATED;
		ctx->num_inflight--;
		pe->num_inflight--;
		return status;
	}
	/* The task may have completed already; its callback waits for doca_pe_progress. */
	if ((flags & DOCA_TASK_SUBMIT_FLAG_FLUSH) && ctx->ops->flush != NULL)
		ctx->ops->flush(ctx);
	return DOCA_SUCCESS;
}

doca_error_t doca_task_submit_ex(struct doca_task *task, uint32_t flags)
{
	doca_error_t status = task_check_submit(task, flags);

	if (status != DOCA_SUCCESS)
		return status;
	return task_submit(task, flags);
}

doca_error_t doca_task_submit(struct doca_task *task)
{
	return doca_task_submit_ex(task, DOCA_TASK_SUBMIT_FLAG_FLUSH);
}

doca_error_t doca_task_try_submit(struct doca_task *task)
{
	doca_error_t status = task_check_submit(task, DOCA_TASK_SUBMIT_FLAG_FLUSH);

	if (status != DOCA_SUCCESS)
		return status;
	if (task->ops->validate != NULL && task->ops->validate(task) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE; /* validate logged what is wrong */
	return task_submit(task, DOCA_TASK_SUBMIT_FLAG_FLUSH);
}

void doca_task_free(struct doca_task *task)
{
	struct doca_ctx *ctx;
	enum sdp_task_state state;

	if (task == NULL)
		return;
	if (task->ops == NULL || task->ctx == NULL) {
		sdp_error("task %p was not allocated by a context", (void *)task);
		return;
	}
	ctx = task->ctx;
	sdp_pe_lock(ctx->pe);
	state = task->state;
	if (state == SDP_TASK_ALLOCATED)
		task->state = SDP_TASK_FREED;
	sdp_pe_unlock(ctx->pe);
	if (state != SDP_TASK_ALLOCATED) {
		sdp_error("%s task %p: cannot be freed, it is %s", task_type(task), (void *)task,
			  state == SDP_TASK_FREED ? "freed already" :
						    "submitted (wait for its callback)");
		return;
	}

	ctx->num_allocated--;
	if (task->ops->free != NULL)
		task->ops->free(task);
	/* A stopping context may be waiting for this task: let a sleeping application look. */
	if (ctx->state == DOCA_CTX_STATE_STOPPING && ctx->pe != NULL)
		sdp_pe_signal(ctx->pe);
}

doca_error_t doca_task_get_status(const struct doca_task *task)
{
	if (task == NULL) {
		sdp_error("NULL task");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return task->status;
}

void doca_task_set_user_data(struct doca_task *task, union doca_data user_data)
{
	if (task == NULL) {
		sdp_error("NULL task");
		return;
	}
	task->user_data = user_data;
}

union doca_data doca_task_get_user_data(const struct doca_task *task)
{
	union doca_data none = {.u64 = 0};

	if (task == NULL) {
		sdp_error("NULL task");
		return none;
	}
	return task->user_data;
}

struct doca_ctx *doca_task_get_ctx(const struct doca_task *task)
{
	if (task == NULL) {
		sdp_error("NULL task");
		return NULL;
	}
	return task->ctx;
}
