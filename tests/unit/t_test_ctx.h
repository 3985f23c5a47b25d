/*
 * A context type and a task type for the unit tests of the PE, context and task core
 * (test_pe_ctx, test_task). The context has a tiny "engine": a queue of submitted tasks that
 * it completes when told to (from progress, from submit, from the test, or from another
 * thread). How start and stop behave (synchronous, asynchronous, failing) is set per test.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef T_TEST_CTX_H_
#define T_TEST_CTX_H_

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "doca_ctx.h"
#include "doca_pe.h"
#include "sdp_ctx.h"

#define TCTX_QUEUE_MAX 64

struct tctx {
	struct doca_ctx base;
	pthread_mutex_t lock; /* the engine queue: completions may come from another thread */
	/* Behaviour, set by the test while IDLE. */
	int async_start;	    /* start returns IN_PROGRESS ... */
	int start_after;	    /* ... and progress finishes it on this call (0: never) */
	doca_error_t start_result;  /* sync: start's return; async: what start_done reports */
	int async_stop;		    /* stop returns IN_PROGRESS ... */
	int stop_after;		    /* ... and progress finishes it on this call (0: never) */
	doca_error_t stop_result;   /* a failing stop */
	int complete_in_progress;   /* progress completes every queued task with SUCCESS */
	int complete_in_submit;	    /* submit completes the task at once with SUCCESS */
	doca_error_t submit_result; /* a failing submit */
	int flush_on_stop; /* stop completes queued tasks with DOCA_ERROR_CONNECTION_ABORTED */
	int arm_pending;   /* arm reports pending work */
	/* What happened. */
	int n_start, n_stop, n_progress, n_flush, n_arm, n_validate, n_task_free;
	int progress_since_start, progress_since_stop;
	struct doca_task *queue[TCTX_QUEUE_MAX];
	int queued;
};

struct ttask {
	struct doca_task base;
	int value;	     /* validate refuses a negative value */
	doca_error_t result; /* status the engine completes it with */
	struct tctx *owner;
};

static inline struct tctx *tctx_of(struct doca_ctx *ctx)
{
	return sdp_container_of(ctx, struct tctx, base);
}

/* Complete every queued task with its own result (any thread). Returns how many. */
static inline int tctx_complete_all(struct tctx *t)
{
	int n;

	pthread_mutex_lock(&t->lock);
	n = t->queued;
	for (int i = 0; i < t->queued; i++) {
		struct ttask *task = sdp_container_of(t->queue[i], struct ttask, base);

		sdp_task_complete(&task->base, task->result);
	}
	t->queued = 0;
	pthread_mutex_unlock(&t->lock);
	return n;
}

static inline doca_error_t tctx_start(struct doca_ctx *ctx)
{
	struct tctx *t = tctx_of(ctx);

	t->n_start++;
	t->progress_since_start = 0;
	if (!t->async_start) {
		return t->start_result;
	}
	return DOCA_ERROR_IN_PROGRESS;
}

static inline doca_error_t tctx_stop(struct doca_ctx *ctx)
{
	struct tctx *t = tctx_of(ctx);

	t->n_stop++;
	t->progress_since_stop = 0;
	if (t->stop_result != DOCA_SUCCESS)
		return t->stop_result;
	if (t->flush_on_stop) {
		pthread_mutex_lock(&t->lock);
		for (int i = 0; i < t->queued; i++)
			sdp_task_complete(t->queue[i], DOCA_ERROR_CONNECTION_ABORTED);
		t->queued = 0;
		pthread_mutex_unlock(&t->lock);
	}
	return t->async_stop ? DOCA_ERROR_IN_PROGRESS : DOCA_SUCCESS;
}

static inline int tctx_progress(struct doca_ctx *ctx)
{
	struct tctx *t = tctx_of(ctx);
	enum doca_ctx_states state;
	int made = 0;

	t->n_progress++;
	doca_ctx_get_state(ctx, &state);
	if (state == DOCA_CTX_STATE_STARTING && t->async_start && t->start_after > 0 &&
	    ++t->progress_since_start == t->start_after) {
		sdp_ctx_start_done(ctx, t->start_result);
		made = 1;
	}
	if (state == DOCA_CTX_STATE_STOPPING && t->async_stop && t->stop_after > 0 &&
	    ++t->progress_since_stop == t->stop_after) {
		sdp_ctx_stop_done(ctx);
		made = 1;
	}
	if (t->complete_in_progress && tctx_complete_all(t) > 0)
		made = 1;
	return made;
}

static inline int tctx_arm(struct doca_ctx *ctx)
{
	struct tctx *t = tctx_of(ctx);

	t->n_arm++;
	return t->arm_pending;
}

static inline void tctx_flush(struct doca_ctx *ctx)
{
	tctx_of(ctx)->n_flush++;
}

static const struct sdp_ctx_ops tctx_ops = {
	.name = "test_ctx",
	.start = tctx_start,
	.stop = tctx_stop,
	.progress = tctx_progress,
	.arm = tctx_arm,
	.flush = tctx_flush,
};

static inline struct tctx *tctx_create(void)
{
	struct tctx *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	sdp_ctx_init(&t->base, &tctx_ops);
	pthread_mutex_init(&t->lock, NULL);
	return t;
}

/* Like a DOCA *_destroy: refused unless IDLE. */
static inline doca_error_t tctx_destroy(struct tctx *t)
{
	doca_error_t status = sdp_ctx_fini(&t->base);

	if (status != DOCA_SUCCESS)
		return status;
	pthread_mutex_destroy(&t->lock);
	free(t);
	return DOCA_SUCCESS;
}

static inline doca_error_t ttask_submit(struct doca_task *task)
{
	struct ttask *tt = sdp_container_of(task, struct ttask, base);
	struct tctx *t = tt->owner;

	if (t->submit_result != DOCA_SUCCESS)
		return t->submit_result;
	if (t->complete_in_submit) {
		sdp_task_complete(task, tt->result);
		return DOCA_SUCCESS;
	}
	pthread_mutex_lock(&t->lock);
	if (t->queued == TCTX_QUEUE_MAX) {
		pthread_mutex_unlock(&t->lock);
		return DOCA_ERROR_FULL;
	}
	t->queue[t->queued++] = task;
	pthread_mutex_unlock(&t->lock);
	return DOCA_SUCCESS;
}

static inline doca_error_t ttask_validate(const struct doca_task *task)
{
	const struct ttask *tt = sdp_container_of(task, const struct ttask, base);

	tt->owner->n_validate++;
	return tt->value < 0 ? DOCA_ERROR_INVALID_VALUE : DOCA_SUCCESS;
}

static inline void ttask_free(struct doca_task *task)
{
	struct ttask *tt = sdp_container_of(task, struct ttask, base);

	tt->owner->n_task_free++;
	free(tt);
}

static const struct sdp_task_ops ttask_ops = {
	.name = "test_task",
	.submit = ttask_submit,
	.validate = ttask_validate,
	.free = ttask_free,
};

/* Like a DOCA *_task_alloc_init: only while RUNNING. */
static inline doca_error_t ttask_alloc(struct tctx *t, int value, doca_task_completion_cb_t ok_cb,
				       doca_task_completion_cb_t err_cb, struct ttask **out)
{
	doca_error_t status = sdp_ctx_check_running(&t->base, "test task allocation");
	struct ttask *tt;

	if (status != DOCA_SUCCESS)
		return status;
	tt = calloc(1, sizeof(*tt));
	if (tt == NULL)
		return DOCA_ERROR_NO_MEMORY;
	sdp_task_init(&tt->base, &ttask_ops, &t->base, ok_cb, err_cb);
	tt->value = value;
	tt->owner = t;
	*out = tt;
	return DOCA_SUCCESS;
}

/* Records the state-changed callbacks of a context (pass it as the ctx user data). */
struct tstates {
	int n;
	enum doca_ctx_states prev[16];
	enum doca_ctx_states next[16];
	int wrong_state;  /* the callback saw a state other than next */
	int progress_ret; /* what a nested doca_pe_progress returned (-1: not tried) */
	struct doca_pe *pe;
};

static inline void tstates_cb(const union doca_data user_data, struct doca_ctx *ctx,
			      enum doca_ctx_states prev, enum doca_ctx_states next)
{
	struct tstates *s = (struct tstates *)user_data.ptr;
	enum doca_ctx_states now = DOCA_CTX_STATE_IDLE;

	doca_ctx_get_state(ctx, &now);
	if (now != next)
		s->wrong_state++;
	if (s->n < 16) {
		s->prev[s->n] = prev;
		s->next[s->n] = next;
	}
	s->n++;
	if (s->pe != NULL)
		s->progress_ret = doca_pe_progress(s->pe);
}

#endif /* T_TEST_CTX_H_ */
