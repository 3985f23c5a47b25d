/*
 * softdpu: the DOCA context base: life cycle, configuration guard, user data.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <string.h>

#include "doca_ctx.h"
#include "sdp_ctx.h"
#include "sdp_log.h"
#include "softdpu/ctx.h"

SDP_LOG_COMPONENT("ctx");

static const char *ctx_type(const struct doca_ctx *ctx)
{
	return ctx->ops->name != NULL ? ctx->ops->name : "ctx";
}

const char *sdp_ctx_state_name(enum doca_ctx_states state)
{
	switch (state) {
	case DOCA_CTX_STATE_IDLE:
		return "IDLE";
	case DOCA_CTX_STATE_STARTING:
		return "STARTING";
	case DOCA_CTX_STATE_RUNNING:
		return "RUNNING";
	case DOCA_CTX_STATE_STOPPING:
		return "STOPPING";
	}
	return "INVALID";
}

/* Enter `next` and tell the application. The callback may destroy ctx: touch nothing after. */
static void ctx_change_state(struct doca_ctx *ctx, enum doca_ctx_states prev,
			     enum doca_ctx_states next)
{
	doca_ctx_state_changed_callback_t cb = ctx->state_changed_cb;

	ctx->state = next;
	sdp_debug("%s %p: %s -> %s", ctx_type(ctx), (void *)ctx, sdp_ctx_state_name(prev),
		  sdp_ctx_state_name(next));
	if (cb != NULL)
		cb(ctx->user_data, ctx, prev, next);
}

/* For a base initialised without a type (nothing to start, stop or progress). */
static const struct sdp_ctx_ops ctx_no_ops = {
	.name = "ctx",
};

void sdp_ctx_init(struct doca_ctx *ctx, const struct sdp_ctx_ops *ops)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->ops = ops != NULL ? ops : &ctx_no_ops;
	ctx->state = DOCA_CTX_STATE_IDLE;
	ctx->last_error = DOCA_SUCCESS;
	ctx->start_status = DOCA_SUCCESS;
	sdp_list_head_init(&ctx->pe_link);
}

doca_error_t sdp_ctx_fini(struct doca_ctx *ctx)
{
	struct doca_pe *pe;

	if (ctx == NULL) {
		sdp_error("NULL context");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (ctx->state != DOCA_CTX_STATE_IDLE) {
		sdp_error("%s %p: cannot be destroyed while %s; stop it and wait for IDLE first",
			  ctx_type(ctx), (void *)ctx, sdp_ctx_state_name(ctx->state));
		return DOCA_ERROR_BAD_STATE;
	}
	if (ctx->num_allocated != 0)
		sdp_warn("%s %p: destroyed while the application still holds %zu task(s)",
			 ctx_type(ctx), (void *)ctx, ctx->num_allocated);

	pe = ctx->pe;
	if (pe != NULL) {
		sdp_pe_lock(pe);
		sdp_list_del(&ctx->pe_link);
		pe->num_ctxs--;
		pe->ctxs_gen++;
		ctx->pe = NULL;
		sdp_pe_unlock(pe);
	}
	return DOCA_SUCCESS;
}

doca_error_t sdp_ctx_check_idle(const struct doca_ctx *ctx, const char *what)
{
	if (ctx == NULL) {
		sdp_error("%s: NULL context", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (ctx->state != DOCA_CTX_STATE_IDLE) {
		sdp_error("%s %p: %s is only possible while IDLE, the context is %s", ctx_type(ctx),
			  (const void *)ctx, what, sdp_ctx_state_name(ctx->state));
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

doca_error_t sdp_ctx_check_running(const struct doca_ctx *ctx, const char *what)
{
	if (ctx == NULL) {
		sdp_error("%s: NULL context", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (ctx->state != DOCA_CTX_STATE_RUNNING) {
		sdp_error("%s %p: %s needs a RUNNING context, it is %s", ctx_type(ctx),
			  (const void *)ctx, what, sdp_ctx_state_name(ctx->state));
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

struct doca_pe *sdp_ctx_get_pe(const struct doca_ctx *ctx)
{
	return ctx != NULL ? ctx->pe : NULL;
}

int sdp_ctx_stop_ready_locked(const struct doca_ctx *ctx)
{
	return ctx->state == DOCA_CTX_STATE_STOPPING && !ctx->stop_pending &&
	       ctx->num_inflight == 0 && ctx->num_allocated == 0;
}

int sdp_ctx_apply_pending(struct doca_ctx *ctx)
{
	struct doca_pe *pe = ctx->pe;
	doca_error_t status;
	int start_done;
	int stop_ready;

	/*
	 * A running context has nothing to apply (its start was applied, a stop makes it
	 * STOPPING first): spare every progress call a lock round per context.
	 */
	if (ctx->state == DOCA_CTX_STATE_RUNNING)
		return 0;
	sdp_pe_lock(pe);
	start_done = ctx->start_pending;
	status = ctx->start_status;
	ctx->start_pending = 0;
	stop_ready = sdp_ctx_stop_ready_locked(ctx);
	sdp_pe_unlock(pe);

	if (start_done && ctx->state == DOCA_CTX_STATE_STARTING) {
		if (status == DOCA_SUCCESS) {
			ctx_change_state(ctx, DOCA_CTX_STATE_STARTING, DOCA_CTX_STATE_RUNNING);
			return 1;
		}
		ctx->last_error = status;
		sdp_error("%s %p: asynchronous start failed: %s (%s); the context is IDLE again",
			  ctx_type(ctx), (void *)ctx, doca_error_get_name(status),
			  doca_error_get_descr(status));
		ctx_change_state(ctx, DOCA_CTX_STATE_STARTING, DOCA_CTX_STATE_IDLE);
		return 1;
	}
	if (start_done)
		sdp_debug("%s %p: start finished (%s) after stop was requested; ignored",
			  ctx_type(ctx), (void *)ctx, doca_error_get_name(status));
	if (stop_ready) {
		ctx_change_state(ctx, DOCA_CTX_STATE_STOPPING, DOCA_CTX_STATE_IDLE);
		return 1;
	}
	return 0;
}

void sdp_ctx_start_done(struct doca_ctx *ctx, doca_error_t status)
{
	struct doca_pe *pe;

	if (ctx == NULL) {
		sdp_error("NULL context");
		return;
	}
	pe = ctx->pe;
	sdp_pe_lock(pe);
	ctx->start_pending = 1;
	ctx->start_status = status;
	if (pe != NULL)
		sdp_pe_notify_locked(pe);
	sdp_pe_unlock(pe);
	/* Without a PE nobody progresses the context: apply now (only once it reads STARTING;
	 * doca_ctx_start applies a result that arrives before that). */
	if (pe == NULL && ctx->state == DOCA_CTX_STATE_STARTING)
		(void)sdp_ctx_apply_pending(ctx);
}

void sdp_ctx_stop_done(struct doca_ctx *ctx)
{
	struct doca_pe *pe;

	if (ctx == NULL) {
		sdp_error("NULL context");
		return;
	}
	pe = ctx->pe;
	sdp_pe_lock(pe);
	ctx->stop_pending = 0;
	if (pe != NULL)
		sdp_pe_notify_locked(pe);
	sdp_pe_unlock(pe);
	if (pe == NULL && ctx->state == DOCA_CTX_STATE_STOPPING)
		(void)sdp_ctx_apply_pending(ctx);
}

doca_error_t doca_ctx_start(struct doca_ctx *ctx)
{
	doca_error_t status;

	if (ctx == NULL) {
		sdp_error("NULL context");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (ctx->state != DOCA_CTX_STATE_IDLE) {
		sdp_error("%s %p: cannot start, the context is %s (not IDLE)", ctx_type(ctx),
			  (void *)ctx, sdp_ctx_state_name(ctx->state));
		return DOCA_ERROR_BAD_STATE;
	}
	if (ctx->pe == NULL && ctx->gpu == NULL) {
		sdp_error("%s %p: cannot start: neither connected to a progress engine "
			  "(doca_pe_connect_ctx) nor given a GPU data path",
			  ctx_type(ctx), (void *)ctx);
		return DOCA_ERROR_NOT_CONNECTED;
	}

	ctx->last_error = DOCA_SUCCESS;
	sdp_pe_lock(ctx->pe);
	ctx->start_pending = 0;
	ctx->start_status = DOCA_SUCCESS;
	ctx->stop_pending = 0;
	sdp_pe_unlock(ctx->pe);

	status = ctx->ops->start != NULL ? ctx->ops->start(ctx) : DOCA_SUCCESS;
	if (status == DOCA_SUCCESS) {
		ctx_change_state(ctx, DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_RUNNING);
		return DOCA_SUCCESS;
	}
	if (status == DOCA_ERROR_IN_PROGRESS) {
		ctx_change_state(ctx, DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_STARTING);
		if (ctx->pe == NULL && ctx->state == DOCA_CTX_STATE_STARTING)
			(void)sdp_ctx_apply_pending(ctx);
		return DOCA_ERROR_IN_PROGRESS;
	}
	/* The type logged the cause; the context stays IDLE. */
	ctx->last_error = status;
	return status;
}

doca_error_t doca_ctx_stop(struct doca_ctx *ctx)
{
	enum doca_ctx_states prev;
	doca_error_t status;
	int ready;

	if (ctx == NULL) {
		sdp_error("NULL context");
		return DOCA_ERROR_INVALID_VALUE;
	}
	switch (ctx->state) {
	case DOCA_CTX_STATE_IDLE:
		sdp_error("%s %p: cannot stop, the context is IDLE", ctx_type(ctx), (void *)ctx);
		return DOCA_ERROR_BAD_STATE;
	case DOCA_CTX_STATE_STOPPING:
		sdp_debug("%s %p: already stopping", ctx_type(ctx), (void *)ctx);
		return DOCA_ERROR_IN_PROGRESS;
	default:
		break;
	}

	prev = ctx->state;
	sdp_pe_lock(ctx->pe);
	ctx->stop_pending = 1;
	ctx->state = DOCA_CTX_STATE_STOPPING; /* refuse new tasks while the type stops */
	sdp_pe_unlock(ctx->pe);

	status = ctx->ops->stop != NULL ? ctx->ops->stop(ctx) : DOCA_SUCCESS;
	if (status != DOCA_SUCCESS && status != DOCA_ERROR_IN_PROGRESS) {
		/* The type logged the cause and kept running. */
		sdp_pe_lock(ctx->pe);
		ctx->stop_pending = 0;
		ctx->state = prev;
		sdp_pe_unlock(ctx->pe);
		return status;
	}

	sdp_pe_lock(ctx->pe);
	if (status == DOCA_SUCCESS)
		ctx->stop_pending = 0;
	ready = sdp_ctx_stop_ready_locked(ctx);
	if (!ready)
		sdp_debug("%s %p: stopping: %zu task(s) in flight, %zu not freed, engine %s",
			  ctx_type(ctx), (void *)ctx, ctx->num_inflight, ctx->num_allocated,
			  ctx->stop_pending ? "busy" : "done");
	sdp_pe_unlock(ctx->pe);

	if (ready) {
		ctx_change_state(ctx, prev, DOCA_CTX_STATE_IDLE);
		return DOCA_SUCCESS;
	}
	ctx_change_state(ctx, prev, DOCA_CTX_STATE_STOPPING);
	return DOCA_ERROR_IN_PROGRESS;
}

doca_error_t doca_ctx_get_num_inflight_tasks(const struct doca_ctx *ctx, size_t *num_inflight_tasks)
{
	if (ctx == NULL || num_inflight_tasks == NULL) {
		sdp_error("NULL argument (ctx %p, num_inflight_tasks %p)", (const void *)ctx,
			  (void *)num_inflight_tasks);
		return DOCA_ERROR_INVALID_VALUE;
	}
	sdp_pe_lock(ctx->pe);
	*num_inflight_tasks = ctx->num_inflight;
	sdp_pe_unlock(ctx->pe);
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_set_datapath_on_gpu(struct doca_ctx *ctx, struct doca_gpu *gpu_dev)
{
	doca_error_t status;

	if (gpu_dev == NULL) {
		sdp_error("NULL GPU device");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_ctx_check_idle(ctx, "setting the GPU data path");
	if (status != DOCA_SUCCESS)
		return status;
	ctx->gpu = gpu_dev;
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_set_user_data(struct doca_ctx *ctx, union doca_data user_data)
{
	doca_error_t status = sdp_ctx_check_idle(ctx, "setting user data");

	if (status != DOCA_SUCCESS)
		return status;
	ctx->user_data = user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_get_user_data(const struct doca_ctx *ctx, union doca_data *user_data)
{
	if (ctx == NULL || user_data == NULL) {
		sdp_error("NULL argument (ctx %p, user_data %p)", (const void *)ctx,
			  (void *)user_data);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*user_data = ctx->user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_set_state_changed_cb(struct doca_ctx *ctx,
					   doca_ctx_state_changed_callback_t cb)
{
	doca_error_t status = sdp_ctx_check_idle(ctx, "setting the state-changed callback");

	if (status != DOCA_SUCCESS)
		return status;
	ctx->state_changed_cb = cb;
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_get_state(const struct doca_ctx *ctx, enum doca_ctx_states *state)
{
	if (ctx == NULL || state == NULL) {
		sdp_error("NULL argument (ctx %p, state %p)", (const void *)ctx, (void *)state);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*state = ctx->state;
	return DOCA_SUCCESS;
}

void doca_ctx_flush_tasks(struct doca_ctx *ctx)
{
	if (ctx == NULL) {
		sdp_error("NULL context");
		return;
	}
	if (ctx->state == DOCA_CTX_STATE_RUNNING && ctx->ops->flush != NULL)
		ctx->ops->flush(ctx);
}

doca_error_t sdp_ctx_get_last_error(const struct doca_ctx *ctx)
{
	if (ctx == NULL) {
		sdp_error("NULL context");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return ctx->last_error;
}
