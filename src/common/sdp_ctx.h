/*
 * softdpu internal: the context and task base every DOCA context type embeds.
 *
 * A context type (UROM service/worker/domain, eth rxq/txq, the test contexts of the unit tests)
 * embeds `struct doca_ctx` and hands the core a `struct sdp_ctx_ops` table. The core owns the
 * state machine (IDLE -> STARTING/RUNNING -> STOPPING -> IDLE), the PE connection, user data,
 * the state-changed callback and in-flight accounting. The type only does its own work.
 *
 * Threads: sdp_task_complete(), sdp_ctx_start_done() and sdp_ctx_stop_done() may be called
 * from any thread (an engine thread, a UCX callback); everything else runs on the thread that
 * calls the public API. Callbacks into the application always run from doca_pe_progress().
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_CTX_H_
#define SDP_CTX_H_

#include <pthread.h>
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
	 * DOCA_ERROR_IN_PROGRESS when it finishes asynchronously (then call sdp_ctx_start_done()),
	 * or an error: the context stays IDLE and the error is returned to the caller.
	 */
	doca_error_t (*start)(struct doca_ctx *ctx);
	/*
	 * Called by doca_ctx_stop() in STARTING or RUNNING. The type stops taking new work and
	 * completes (flushes) or drains what is in flight. Return DOCA_SUCCESS when its own part is
	 * done, DOCA_ERROR_IN_PROGRESS to finish later through sdp_ctx_stop_done(). The core moves
	 * the context to IDLE once the type is done and no task is in flight.
	 */
	doca_error_t (*stop)(struct doca_ctx *ctx);
	/*
	 * Optional. Called from doca_pe_progress() for each connected context that is not IDLE.
	 * May complete tasks (sdp_task_complete). Returns nonzero if it did any work.
	 */
	int (*progress)(struct doca_ctx *ctx);
	/*
	 * Optional, event mode. Arm the type's own notification sources before the application
	 * sleeps on the PE handle. Return nonzero if work is already pending (the PE then signals
	 * its handle immediately).
	 */
	int (*arm)(struct doca_ctx *ctx);
};

/* What a task type provides. Task structs embed `struct doca_task` as their first member. */
struct sdp_task_ops {
	const char *name;
	/* Hand the task to the context's engine. Called with the context RUNNING. */
	doca_error_t (*submit)(struct doca_task *task);
	/* Optional: check the task's parameters (doca_task_try_submit). */
	doca_error_t (*validate)(const struct doca_task *task);
	/* Release the task's memory (doca_task_free). */
	void (*free)(struct doca_task *task);
};

enum sdp_task_state {
	SDP_TASK_ALLOCATED = 0, /* owned by the application */
	SDP_TASK_SUBMITTED,     /* owned by the library */
	SDP_TASK_COMPLETED,     /* completed, waiting for doca_pe_progress to run its callback */
};

struct doca_task {
	const struct sdp_task_ops *ops;
	struct doca_ctx *ctx;
	doca_task_completion_cb_t success_cb;
	doca_task_completion_cb_t error_cb;
	union doca_data user_data;
	doca_error_t status;
	enum sdp_task_state state;
	sdp_list_link_t link; /* PE completion queue while COMPLETED */
};

struct doca_ctx {
	const struct sdp_ctx_ops *ops;
	enum doca_ctx_states state;
	struct doca_pe *pe;
	union doca_data user_data;
	doca_ctx_state_changed_callback_t state_changed_cb;
	struct doca_gpu *gpu;          /* doca_ctx_set_datapath_on_gpu */
	size_t num_inflight;           /* submitted, callback not yet run */
	size_t num_allocated;          /* allocated and not yet freed */
	doca_error_t last_error;       /* cause of the last failed asynchronous start */
	/* Set from any thread under the PE lock, consumed by doca_pe_progress. */
	int start_pending;             /* sdp_ctx_start_done() was called */
	doca_error_t start_status;
	int stop_pending;              /* the type's stop is still running */
	sdp_list_link_t pe_link;       /* in the PE's list of contexts */
};

/* Initialise the base; the context starts IDLE and unconnected. */
void sdp_ctx_init(struct doca_ctx *ctx, const struct sdp_ctx_ops *ops);

/*
 * Tear down the base before the type frees its memory. Refuses (DOCA_ERROR_BAD_STATE, logged)
 * while the context is not IDLE; disconnects it from its PE otherwise.
 */
doca_error_t sdp_ctx_fini(struct doca_ctx *ctx);

/*
 * For configuration setters: DOCA_SUCCESS in IDLE, else DOCA_ERROR_BAD_STATE (logged once,
 * naming `what`).
 */
doca_error_t sdp_ctx_check_idle(const struct doca_ctx *ctx, const char *what);

/* For task allocation: DOCA_SUCCESS when RUNNING, else DOCA_ERROR_BAD_STATE (logged). */
doca_error_t sdp_ctx_check_running(const struct doca_ctx *ctx, const char *what);

/* An asynchronous start finished: RUNNING on success, back to IDLE (cause kept) on failure. */
void sdp_ctx_start_done(struct doca_ctx *ctx, doca_error_t status);

/* The type's asynchronous stop finished. */
void sdp_ctx_stop_done(struct doca_ctx *ctx);

/* The PE the context is connected to, or NULL. */
struct doca_pe *sdp_ctx_get_pe(const struct doca_ctx *ctx);

/* Initialise a task the type allocated; it is counted as allocated on ctx. */
void sdp_task_init(struct doca_task *task, const struct sdp_task_ops *ops, struct doca_ctx *ctx,
		   doca_task_completion_cb_t success_cb, doca_task_completion_cb_t error_cb);

/* Complete a submitted task with a status; its callback runs from doca_pe_progress. */
void sdp_task_complete(struct doca_task *task, doca_error_t status);

/*
 * Event mode: add a pollable fd of the type (a UCX wakeup fd, an engine eventfd) to the PE's
 * notification handle, or remove it.
 */
doca_error_t sdp_pe_add_event_fd(struct doca_pe *pe, int fd);
void sdp_pe_del_event_fd(struct doca_pe *pe, int fd);

/* Wake a PE sleeping on its notification handle (any thread). */
void sdp_pe_signal(struct doca_pe *pe);

#endif /* SDP_CTX_H_ */
