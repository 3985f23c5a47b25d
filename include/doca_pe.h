/*
 * softdpu: DOCA progress engine (PE) and tasks.
 *
 * A progress engine drives the contexts connected to it: every application callback (task
 * completions, context state changes) runs from doca_pe_progress(), on the thread that calls
 * it. A context is connected to at most one PE; a PE serves any number of contexts.
 *
 * Event mode: instead of calling doca_pe_progress() in a loop, a program can sleep on the
 * PE's notification handle (a file descriptor on Linux):
 *   1. doca_pe_get_notification_handle() once;
 *   2. doca_pe_request_notification() (arm);
 *   3. wait until the handle is readable (poll, epoll_wait, select);
 *   4. doca_pe_clear_notification();
 *   5. call doca_pe_progress() until it returns 0, then go back to 2.
 *
 * Task ownership: a submitted task belongs to the library until its completion callback runs;
 * the callback hands it back to the application, which may submit it again, free it, or keep it.
 * A failed submission leaves the task with the application.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_PE_H_
#define DOCA_PE_H_

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_ctx;
struct doca_pe;
struct doca_task;
struct doca_task_batch;
struct doca_devinfo;

/* Task batch sizes (named by samples that use task batches). */
enum doca_task_batch_max_tasks_number {
	DOCA_TASK_BATCH_MAX_TASKS_NUMBER_16 = 0,
	DOCA_TASK_BATCH_MAX_TASKS_NUMBER_32 = 1,
	DOCA_TASK_BATCH_MAX_TASKS_NUMBER_64 = 2,
	DOCA_TASK_BATCH_MAX_TASKS_NUMBER_128 = 3,
};

/* Event batch sizes. */
enum doca_event_batch_events_number {
	DOCA_EVENT_BATCH_EVENTS_NUMBER_1 = 0,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_2 = 1,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_4 = 2,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_8 = 3,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_16 = 4,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_32 = 5,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_64 = 6,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_128 = 7,
};

/* Flags of doca_task_submit_ex(), OR-ed together. */
enum doca_task_submit_flag {
	DOCA_TASK_SUBMIT_FLAG_NONE = 0U,
	/* Push this task (and any the context held back) to the engine now; doca_task_submit()
	 * always does. Without it a context may collect tasks until doca_ctx_flush_tasks(). */
	DOCA_TASK_SUBMIT_FLAG_FLUSH = (1U << 0),
	/* The completion callback may be reported later, together with others. */
	DOCA_TASK_SUBMIT_FLAG_OPTIMIZE_REPORTS = (1U << 1),
};

/* How doca_pe_progress() behaves in event mode. */
enum doca_pe_event_mode {
	/* After a wake-up the program calls doca_pe_clear_notification() before arming again. */
	DOCA_PE_EVENT_MODE_PROGRESS_SELECTIVE,
	/* Every context is progressed; doca_pe_request_notification() clears old wake-ups. */
	DOCA_PE_EVENT_MODE_PROGRESS_ALL,
};

/*
 * Completion callback of a task, used for both success and failure (doca_task_get_status()
 * tells which). Runs from doca_pe_progress(); the task belongs to the application again. It
 * must not call doca_pe_progress().
 */
typedef void (*doca_task_completion_cb_t)(struct doca_task *task, union doca_data task_user_data,
					  union doca_data ctx_user_data);

/*
 * Create a progress engine.
 * Returns DOCA_ERROR_INVALID_VALUE (pe is NULL), DOCA_ERROR_NO_MEMORY, or
 * DOCA_ERROR_OPERATING_SYSTEM when its notification descriptors cannot be created.
 */
DOCA_STABLE
doca_error_t doca_pe_create(struct doca_pe **pe);

/*
 * Destroy a progress engine. Every connected context must be destroyed first
 * (DOCA_ERROR_IN_USE otherwise); not allowed from a callback (DOCA_ERROR_BAD_STATE).
 */
DOCA_STABLE
doca_error_t doca_pe_destroy(struct doca_pe *pe);

/*
 * Make progress: run the connected contexts' engines, the completion callbacks of finished
 * tasks, and the pending context state changes (STARTING -> RUNNING or IDLE, STOPPING -> IDLE).
 * Returns 1 if anything happened, 0 otherwise (also when called from inside a callback, which
 * is refused).
 */
DOCA_STABLE
uint8_t doca_pe_progress(struct doca_pe *pe);

#ifdef __linux__
/*
 * The descriptor to wait on in event mode; it stays the same for the PE's lifetime and is
 * owned by the PE (do not close it).
 */
DOCA_STABLE
doca_error_t doca_pe_get_notification_handle(const struct doca_pe *pe,
					     doca_notification_handle_t *handle);
#endif

/*
 * Reset the notification handle after a wake-up; handle is the one the PE returned.
 * DOCA_ERROR_INVALID_VALUE for a NULL pe or another handle, DOCA_ERROR_OPERATING_SYSTEM when
 * the descriptor cannot be read.
 */
DOCA_STABLE
doca_error_t doca_pe_clear_notification(struct doca_pe *pe, doca_notification_handle_t handle);

/*
 * Arm the PE: its handle becomes readable at the next completion or event. If work is already
 * waiting, the handle becomes readable at once.
 */
DOCA_STABLE
doca_error_t doca_pe_request_notification(struct doca_pe *pe);

/* Number of tasks submitted to all contexts of the PE whose callback has not run yet. */
DOCA_STABLE
doca_error_t doca_pe_get_num_inflight_tasks(const struct doca_pe *pe, size_t *num_inflight_tasks);

/*
 * Submit a task without validating it (same as doca_task_submit_ex with
 * DOCA_TASK_SUBMIT_FLAG_FLUSH). On DOCA_SUCCESS the library owns the task until its callback
 * runs; on any error the caller still owns it. DOCA_ERROR_BAD_STATE when its context is not
 * RUNNING, DOCA_ERROR_IN_USE when the task is already submitted.
 */
DOCA_STABLE
doca_error_t doca_task_submit(struct doca_task *task);

/* doca_task_submit() with flags (enum doca_task_submit_flag); unknown bits are refused. */
DOCA_EXPERIMENTAL
doca_error_t doca_task_submit_ex(struct doca_task *task, uint32_t flags);

/* Validate the task's parameters (DOCA_ERROR_INVALID_VALUE when wrong), then submit it. */
DOCA_STABLE
doca_error_t doca_task_try_submit(struct doca_task *task);

/*
 * Give a task back to the context that allocated it. Allowed whenever the application owns it
 * (not while submitted), including from its own callback. Every task must be freed before its
 * context can finish stopping.
 */
DOCA_STABLE
void doca_task_free(struct doca_task *task);

/* Result of a completed task: DOCA_SUCCESS or the reason it failed. */
DOCA_STABLE
doca_error_t doca_task_get_status(const struct doca_task *task);

DOCA_STABLE
void doca_task_set_user_data(struct doca_task *task, union doca_data user_data);

DOCA_STABLE
union doca_data doca_task_get_user_data(const struct doca_task *task);

/* The context that allocated the task. */
DOCA_STABLE
struct doca_ctx *doca_task_get_ctx(const struct doca_task *task);

/*
 * Submit a task batch (allocated by a context type, e.g.
 * doca_eth_txq_task_batch_send_allocate()): all its tasks go to the engine at once and one
 * callback reports them, with a status per task. On DOCA_SUCCESS the library owns the batch
 * until that callback runs; on any error the caller still owns it. DOCA_ERROR_INVALID_VALUE for
 * NULL, DOCA_ERROR_BAD_STATE when the batch is already submitted or freed or its context is not
 * RUNNING.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_task_batch_submit(struct doca_task_batch *task_batch);

/*
 * Give a task batch back to its context (allowed whenever the application owns it, including
 * from its callback). Every batch must be freed before its context can finish stopping.
 */
DOCA_EXPERIMENTAL
void doca_task_batch_free(struct doca_task_batch *task_batch);

/*
 * Connect an IDLE context to the PE (DOCA_ERROR_BAD_STATE otherwise). A context has one PE for
 * life: connecting it again gives DOCA_ERROR_NOT_PERMITTED; destroying the context disconnects it.
 */
DOCA_STABLE
doca_error_t doca_pe_connect_ctx(struct doca_pe *pe, struct doca_ctx *ctx);

/* Choose the event mode; not from inside a callback (DOCA_ERROR_BAD_STATE). */
DOCA_EXPERIMENTAL
doca_error_t doca_pe_set_event_mode(struct doca_pe *pe, enum doca_pe_event_mode event_mode);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_PE_H_ */
