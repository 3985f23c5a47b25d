/*
 * softdpu: DOCA context, the base of every data-path object (UROM service, worker and domain,
 * Ethernet queues, ...). Each library hands out its objects as a `struct doca_ctx *` through an
 * `..._as_ctx()` call; the calls below then work on any of them.
 *
 * Life cycle:
 *
 *   IDLE --doca_ctx_start--> RUNNING        (synchronous start: returns DOCA_SUCCESS)
 *   IDLE --doca_ctx_start--> STARTING       (asynchronous: returns DOCA_ERROR_IN_PROGRESS)
 *   STARTING --(progress)--> RUNNING        (the context is connected)
 *   STARTING --(progress)--> IDLE           (the asynchronous start failed)
 *   STARTING or RUNNING --doca_ctx_stop--> STOPPING --(progress, nothing in flight)--> IDLE
 *                                          (or straight to IDLE when nothing is left to drain)
 *
 * Configuration is possible only in IDLE; tasks can be allocated and submitted only in RUNNING.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_CTX_H_
#define DOCA_CTX_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_ctx;
struct doca_devinfo;
struct doca_gpu;

enum doca_ctx_states {
	/* Created or stopped: configurable; no tasks. */
	DOCA_CTX_STATE_IDLE = 0,
	/* Asynchronous start under way; no tasks yet. */
	DOCA_CTX_STATE_STARTING = 1,
	/* Started: tasks may be allocated and submitted. */
	DOCA_CTX_STATE_RUNNING = 2,
	/* Stopping: no new tasks; those in flight are completed or flushed while the program keeps
	 * calling doca_pe_progress(), then the context becomes IDLE. */
	DOCA_CTX_STATE_STOPPING = 3,
};

/*
 * Called on every state change with the context already in next_state. Transitions made by
 * doca_ctx_start()/doca_ctx_stop() themselves call it from there; later ones from
 * doca_pe_progress().
 */
typedef void (*doca_ctx_state_changed_callback_t)(const union doca_data user_data,
						  struct doca_ctx *ctx,
						  enum doca_ctx_states prev_state,
						  enum doca_ctx_states next_state);

/*
 * Finish configuration and start. DOCA_SUCCESS: RUNNING now. DOCA_ERROR_IN_PROGRESS: STARTING,
 * doca_pe_progress() completes it. DOCA_ERROR_NOT_CONNECTED: neither a PE nor a GPU data path;
 * DOCA_ERROR_BAD_STATE: not IDLE; other errors come from the context type (it stays IDLE).
 */
DOCA_STABLE
doca_error_t doca_ctx_start(struct doca_ctx *ctx);

/*
 * Stop (from STARTING or RUNNING). DOCA_SUCCESS: IDLE now. DOCA_ERROR_IN_PROGRESS: STOPPING
 * until everything in flight has completed and every task was freed; keep calling
 * doca_pe_progress(). DOCA_ERROR_BAD_STATE when IDLE.
 */
DOCA_STABLE
doca_error_t doca_ctx_stop(struct doca_ctx *ctx);

/* Tasks submitted to this context whose completion callback has not run yet. */
DOCA_STABLE
doca_error_t doca_ctx_get_num_inflight_tasks(const struct doca_ctx *ctx,
					     size_t *num_inflight_tasks);

/* Run the context's data path on a GPU; IDLE only (DOCA_ERROR_BAD_STATE otherwise). */
DOCA_EXPERIMENTAL
doca_error_t doca_ctx_set_datapath_on_gpu(struct doca_ctx *ctx, struct doca_gpu *gpu_dev);

/* User data handed to the state-changed callback and to task callbacks (ctx_user_data). */
DOCA_STABLE
doca_error_t doca_ctx_set_user_data(struct doca_ctx *ctx, union doca_data user_data);

DOCA_STABLE
doca_error_t doca_ctx_get_user_data(const struct doca_ctx *ctx, union doca_data *user_data);

/* Install (or, with NULL, remove) the state-changed callback. */
DOCA_STABLE
doca_error_t doca_ctx_set_state_changed_cb(struct doca_ctx *ctx,
					   doca_ctx_state_changed_callback_t cb);

DOCA_STABLE
doca_error_t doca_ctx_get_state(const struct doca_ctx *ctx, enum doca_ctx_states *state);

/* Push tasks submitted without DOCA_TASK_SUBMIT_FLAG_FLUSH to the context's engine. */
DOCA_EXPERIMENTAL
void doca_ctx_flush_tasks(struct doca_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_CTX_H_ */
