/*
 * softdpu internal: the context and task base every DOCA context type embeds.
 *
 * A context type (UROM service/worker/domain, eth rxq/txq, the test contexts of the unit tests)
 * embeds `struct doca_ctx` and hands the core a `struct sdp_ctx_ops` table. The core owns the
 * state machine (IDLE -> STARTING/RUNNING -> STOPPING -> IDLE), the PE connection, user data,
 * the state-changed callback and in-flight accounting. The type only does its own work.
 *
 * A task type embeds `struct doca_task` (first member) in its task struct, initialises it with
 * sdp_task_init() when the application allocates one (the context must be RUNNING: use
 * sdp_ctx_check_running()), and reports the result with sdp_task_complete(). The core runs the
 * callback from doca_pe_progress() and frees the task through ops->free on doca_task_free().
 *
 * Threads: sdp_task_complete(), sdp_ctx_start_done(), sdp_ctx_stop_done() and sdp_pe_signal()
 * may be called from any thread (an engine thread, a UCX callback); everything else runs on the
 * thread that calls the public API. Callbacks into the application always run from
 * doca_pe_progress() (or, for synchronous state changes, from doca_ctx_start/stop). The core
 * never calls a type's ops while holding the PE lock, so a type may call the any-thread helpers
 * while holding its own locks.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_CTX_H_
#define SDP_CTX_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "doca_ctx.h"
#include "doca_pe.h"
#include "sdp_list.h"

struct doca_gpu;

struct sdp_ctx_ops {
	/* Short type name used in log messages ("urom_worker", "eth_rxq", ...). */
	const char *name;
	/*
	 * Called by doca_ctx_start() in IDLE, after the core checked that the context is connected
	 * to a PE (or has a GPU data path). Return DOCA_SUCCESS when the context is running now,
	 * DOCA_ERROR_IN_PROGRESS when it finishes asynchronously (then call sdp_ctx_start_done(),
	 * possibly before returning), or an error (logged by the type): the context stays IDLE and
	 * the error is returned to the caller. NULL means "starts synchronously, nothing to do".
	 */
	doca_error_t (*start)(struct doca_ctx *ctx);
	/*
	 * Called by doca_ctx_stop() in STARTING or RUNNING (the state already reads STOPPING, so
	 * no new task is accepted). The type stops taking new work and completes (flushes, with an
	 * error status) or drains what is in flight. Return DOCA_SUCCESS when its own part is
	 * done, DOCA_ERROR_IN_PROGRESS to finish later through sdp_ctx_stop_done(). The core moves
	 * the context to IDLE once the type is done, no task is in flight and the application has
	 * freed every task. Any other error: the context goes back to its previous state and the
	 * error is returned. NULL means "nothing to do".
	 */
	doca_error_t (*stop)(struct doca_ctx *ctx);
	/*
	 * Optional. Called from doca_pe_progress() for each connected context that is not IDLE.
	 * May complete tasks (sdp_task_complete) and asynchronous starts/stops. Must not block.
	 * Returns nonzero if it did any work.
	 */
	int (*progress)(struct doca_ctx *ctx);
	/*
	 * Optional, event mode. Arm the type's own notification sources (added with
	 * sdp_pe_add_event_fd) before the application sleeps on the PE handle. Return nonzero if
	 * work is already pending (the PE then signals its handle immediately).
	 */
	int (*arm)(struct doca_ctx *ctx);
	/*
	 * Optional. Push tasks submitted without DOCA_TASK_SUBMIT_FLAG_FLUSH to the engine
	 * (doca_ctx_flush_tasks, and after every submission that carries the flag).
	 */
	void (*flush)(struct doca_ctx *ctx);
};

/* What a task type provides. Task structs embed `struct doca_task` as their first member. */
struct sdp_task_ops {
	const char *name;
	/*
	 * Hand the task to the context's engine. Called with the context RUNNING and the task
	 * already counted in flight. On DOCA_SUCCESS the type later calls sdp_task_complete()
	 * exactly once (it may do so before returning); on an error it must not complete the task
	 * (the caller keeps it). task->submit_flags holds the doca_task_submit_ex() flags.
	 */
	doca_error_t (*submit)(struct doca_task *task);
	/* Optional: check the task's parameters (doca_task_try_submit); log what is wrong. */
	doca_error_t (*validate)(const struct doca_task *task);
	/* Release the task's memory or return it to a pool (doca_task_free). */
	void (*free)(struct doca_task *task);
};

enum sdp_task_state {
	SDP_TASK_ALLOCATED = 0, /* owned by the application */
	SDP_TASK_SUBMITTED,	/* owned by the library */
	SDP_TASK_COMPLETED,	/* completed, waiting for doca_pe_progress to run its callback */
	SDP_TASK_FREED,		/* returned through doca_task_free (pooled tasks keep this) */
};

struct doca_task {
	const struct sdp_task_ops *ops;
	struct doca_ctx *ctx;
	doca_task_completion_cb_t success_cb;
	doca_task_completion_cb_t error_cb;
	union doca_data user_data;
	doca_error_t status;
	enum sdp_task_state state; /* changed under the PE lock once the context has a PE */
	uint32_t submit_flags;	   /* flags of the last submission */
	sdp_list_link_t link;	   /* PE completion queue while COMPLETED */
};

struct doca_ctx {
	const struct sdp_ctx_ops *ops;
	enum doca_ctx_states state;
	struct doca_pe *pe;
	union doca_data user_data;
	doca_ctx_state_changed_callback_t state_changed_cb;
	struct doca_gpu *gpu;	 /* doca_ctx_set_datapath_on_gpu */
	size_t num_inflight;	 /* submitted, callback not yet run (the PE's thread) */
	size_t num_allocated;	 /* allocated and not yet freed */
	doca_error_t last_error; /* cause of the last failed start */
	/* Set from any thread under the PE lock, consumed by doca_pe_progress. */
	int start_pending; /* sdp_ctx_start_done() was called */
	doca_error_t start_status;
	int stop_pending;	 /* the type's stop is still running */
	sdp_list_link_t pe_link; /* in the PE's list of contexts */
};

/* Initialise the base; the context starts IDLE and unconnected. */
void sdp_ctx_init(struct doca_ctx *ctx, const struct sdp_ctx_ops *ops);

/*
 * Tear down the base before the type frees its memory. Refuses (DOCA_ERROR_BAD_STATE, logged)
 * while the context is not IDLE; disconnects it from its PE otherwise. DOCA_ERROR_INVALID_VALUE
 * for NULL.
 */
doca_error_t sdp_ctx_fini(struct doca_ctx *ctx);

/*
 * For configuration setters: DOCA_SUCCESS in IDLE, else DOCA_ERROR_BAD_STATE (logged once,
 * naming `what`); DOCA_ERROR_INVALID_VALUE (logged) for a NULL ctx.
 */
doca_error_t sdp_ctx_check_idle(const struct doca_ctx *ctx, const char *what);

/* For task allocation: DOCA_SUCCESS when RUNNING, else DOCA_ERROR_BAD_STATE (logged). */
doca_error_t sdp_ctx_check_running(const struct doca_ctx *ctx, const char *what);

/*
 * An asynchronous start finished (any thread). doca_pe_progress() then moves the context to
 * RUNNING, or on failure back to IDLE, keeping the status for sdp_ctx_get_last_error() and
 * logging it once (the type reports details at debug level only). On failure the type must
 * already have released what its start acquired: no ops->stop follows. Ignored when the
 * context was stopped meanwhile. A context without a PE applies it at once.
 */
void sdp_ctx_start_done(struct doca_ctx *ctx, doca_error_t status);

/* The type's asynchronous stop finished (any thread). */
void sdp_ctx_stop_done(struct doca_ctx *ctx);

/* The PE the context is connected to, or NULL. */
struct doca_pe *sdp_ctx_get_pe(const struct doca_ctx *ctx);

/* "IDLE", "STARTING", "RUNNING", "STOPPING" (for log messages). */
const char *sdp_ctx_state_name(enum doca_ctx_states state);

/* Initialise a task the type allocated; it is counted as allocated on ctx. */
void sdp_task_init(struct doca_task *task, const struct sdp_task_ops *ops, struct doca_ctx *ctx,
		   doca_task_completion_cb_t success_cb, doca_task_completion_cb_t error_cb);

/* Complete a submitted task with a status (any thread); its callback runs from
 * doca_pe_progress. */
void sdp_task_complete(struct doca_task *task, doca_error_t status);

/*
 * Event mode: add a pollable fd of the type (a UCX wakeup fd, an engine eventfd) to the PE's
 * notification handle (level-triggered, readable), or remove it.
 */
doca_error_t sdp_pe_add_event_fd(struct doca_pe *pe, int fd);
void sdp_pe_del_event_fd(struct doca_pe *pe, int fd);

/*
 * Wake a PE sleeping on its notification handle (any thread). When the PE is not armed the
 * wake-up is remembered and reported by the next doca_pe_request_notification().
 */
void sdp_pe_signal(struct doca_pe *pe);

/*
 * ---- Core-private (pe.c, ctx.c, task.c only) ----
 */

struct doca_pe {
	pthread_mutex_t lock; /* guards the fields marked (PE lock) here and in ctx/task */
	sdp_list_link_t ctxs; /* connected contexts (application thread only) */
	size_t num_ctxs;
	unsigned int ctxs_gen;	   /* bumped on every change of ctxs */
	sdp_list_link_t completed; /* tasks whose callback is due (PE lock) */
	/*
	 * Tasks completed by the thread running doca_pe_progress on this PE, while it runs (that
	 * thread only, no lock): what a context's progress completes on its own thread, the
	 * per-packet case, skips the lock. Empty outside doca_pe_progress.
	 */
	sdp_list_link_t completed_local;
	size_t num_inflight; /* (the PE's thread: submit and the callbacks) */
	int epoll_fd;	     /* the notification handle */
	int event_fd;	     /* inside epoll_fd; written to wake the application */
	int armed;	     /* (PE lock) request_notification was called */
	int signaled;	     /* (PE lock) event_fd holds a wake-up */
	atomic_int kicked;   /* (PE lock to set) work arrived while not armed */
	/*
	 * Set with `completed` (PE lock) and cleared when doca_pe_progress takes the list: an
	 * idle progress call reads these two flags instead of taking the lock for each.
	 */
	atomic_int has_completed;
	int in_progress; /* doca_pe_progress is running (re-entrancy guard) */
	enum doca_pe_event_mode event_mode;
};

/* The PE whose doca_pe_progress this thread is running (NULL: none). */
extern __thread struct doca_pe *sdp_pe_progressing __attribute__((tls_model("initial-exec")));

static inline void sdp_pe_lock(struct doca_pe *pe)
{
	if (pe != NULL)
		pthread_mutex_lock(&pe->lock);
}

static inline void sdp_pe_unlock(struct doca_pe *pe)
{
	if (pe != NULL)
		pthread_mutex_unlock(&pe->lock);
}

/* Wake the application if it waits on the PE; call with the PE lock held. */
void sdp_pe_notify_locked(struct doca_pe *pe);

/*
 * Apply what finished asynchronously (start done, stop drained) and call the state-changed
 * callback. Returns 1 when the state changed. The callback may destroy the context.
 */
int sdp_ctx_apply_pending(struct doca_ctx *ctx);

/* True when a STOPPING context may become IDLE; call with the PE lock held. */
int sdp_ctx_stop_ready_locked(const struct doca_ctx *ctx);

#endif /* SDP_CTX_H_ */
