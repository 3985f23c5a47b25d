/*
 * Tasks: submission and ownership, success and error callbacks with their user data, status
 * and context, resubmission and release from inside a callback, refused nested progress,
 * in-flight counts of contexts and PEs, stop with tasks in flight, and completions from another
 * thread waking a PE that sleeps on its notification handle.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <poll.h>
#include <pthread.h>
#include <time.h>

#include "doca_ctx.h"
#include "doca_pe.h"
#include "t_helpers.h"
#include "t_test_ctx.h"

/* What the callbacks saw; passed as the ctx user data. */
struct seen {
	struct tstates st; /* first: the state-changed callback reads the same user data */
	int ok, err;
	doca_error_t last_status;
	uint64_t last_task_ud;
	void *last_ctx_ud;
	struct doca_ctx *last_ctx;
	int resubmit_left;   /* the callback submits the task again this many times */
	int free_in_cb;	     /* the callback frees the task */
	int nested_progress; /* what a nested doca_pe_progress returned (-1: not tried) */
	int nested_destroy;  /* doca_pe_destroy from inside a callback */
	int nested_mode;     /* doca_pe_set_event_mode from inside a callback */
	struct doca_pe *pe;
	struct doca_task *kept; /* last task kept by the callback */
	uint64_t order[16];	/* the task user data of each callback, in order */
	int n_order;
};

static void on_done(struct doca_task *task, union doca_data task_ud, union doca_data ctx_ud, int ok)
{
	struct seen *s = ctx_ud.ptr;

	if (ok)
		s->ok++;
	else
		s->err++;
	if (s->n_order < 16)
		s->order[s->n_order++] = task_ud.u64;
	s->last_status = doca_task_get_status(task);
	s->last_task_ud = task_ud.u64;
	s->last_ctx_ud = ctx_ud.ptr;
	s->last_ctx = doca_task_get_ctx(task);
	if (s->pe != NULL) {
		s->nested_progress = doca_pe_progress(s->pe);
		s->nested_destroy = doca_pe_destroy(s->pe);
		s->nested_mode = doca_pe_set_event_mode(s->pe, DOCA_PE_EVENT_MODE_PROGRESS_ALL);
	}
	if (s->resubmit_left > 0) {
		s->resubmit_left--;
		if (doca_task_submit(task) == DOCA_SUCCESS)
			return;
	}
	if (s->free_in_cb)
		doca_task_free(task);
	else
		s->kept = task;
}

static void ok_cb(struct doca_task *task, union doca_data task_ud, union doca_data ctx_ud)
{
	on_done(task, task_ud, ctx_ud, 1);
}

static void err_cb(struct doca_task *task, union doca_data task_ud, union doca_data ctx_ud)
{
	on_done(task, task_ud, ctx_ud, 0);
}

struct env {
	struct doca_pe *pe;
	struct tctx *t;
	struct seen seen;
};

static void env_up(struct env *e)
{
	union doca_data ud;

	memset(e, 0, sizeof(*e));
	e->seen.nested_progress = -1;
	ud.ptr = &e->seen;
	T_OK(doca_pe_create(&e->pe));
	e->t = tctx_create();
	T_OK(doca_pe_connect_ctx(e->pe, &e->t->base));
	T_OK(doca_ctx_set_user_data(&e->t->base, ud));
	T_OK(doca_ctx_set_state_changed_cb(&e->t->base, tstates_cb));
	T_OK(doca_ctx_start(&e->t->base));
}

static void env_down(struct env *e)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;
	doca_error_t status = doca_ctx_stop(&e->t->base);

	for (int i = 0; i < 100 && status == DOCA_ERROR_IN_PROGRESS && st != DOCA_CTX_STATE_IDLE;
	     i++) {
		doca_pe_progress(e->pe);
		doca_ctx_get_state(&e->t->base, &st);
	}
	T_OK(tctx_destroy(e->t));
	T_OK(doca_pe_destroy(e->pe));
}

static size_t ctx_inflight(struct tctx *t)
{
	size_t n = 999;

	doca_ctx_get_num_inflight_tasks(&t->base, &n);
	return n;
}

static size_t pe_inflight(struct doca_pe *pe)
{
	size_t n = 999;

	doca_pe_get_num_inflight_tasks(pe, &n);
	return n;
}

static void test_callbacks(void)
{
	struct env e;
	struct ttask *a, *b;
	union doca_data ud;

	env_up(&e);
	e.t->complete_in_progress = 1;
	e.seen.free_in_cb = 1;

	T_OK(ttask_alloc(e.t, 1, ok_cb, err_cb, &a));
	ud.u64 = 0xabcdef;
	doca_task_set_user_data(&a->base, ud);
	T_EQ_INT(doca_task_get_user_data(&a->base).u64, 0xabcdef);
	T_TRUE(doca_task_get_ctx(&a->base) == &e.t->base);
	a->result = DOCA_SUCCESS;
	T_OK(doca_task_submit(&a->base));
	T_EQ_INT(e.seen.ok, 0); /* callbacks only run from progress */
	T_EQ_INT(doca_pe_progress(e.pe), 1);
	T_EQ_INT(e.seen.ok, 1);
	T_EQ_INT(e.seen.err, 0);
	T_STATUS(e.seen.last_status, DOCA_SUCCESS);
	T_EQ_INT(e.seen.last_task_ud, 0xabcdef);
	T_TRUE(e.seen.last_ctx_ud == &e.seen);
	T_TRUE(e.seen.last_ctx == &e.t->base);
	T_EQ_INT(e.t->n_task_free, 1); /* freed in its callback */
	T_EQ_INT(doca_pe_progress(e.pe), 0);

	/* A failed task goes to the error callback with its status. */
	T_OK(ttask_alloc(e.t, 1, ok_cb, err_cb, &b));
	b->result = DOCA_ERROR_IO_FAILED;
	ud.u64 = 7;
	doca_task_set_user_data(&b->base, ud);
	T_OK(doca_task_submit(&b->base));
	T_EQ_INT(doca_pe_progress(e.pe), 1);
	T_EQ_INT(e.seen.ok, 1);
	T_EQ_INT(e.seen.err, 1);
	T_STATUS(e.seen.last_status, DOCA_ERROR_IO_FAILED);
	T_EQ_INT(e.seen.last_task_ud, 7);
	T_EQ_INT(e.t->n_task_free, 2);

	env_down(&e);
}

static void test_resubmit_and_keep(void)
{
	struct env e;
	struct ttask *a;

	env_up(&e);
	e.t->complete_in_submit = 1; /* completes at submit, reported by the next progress */
	e.seen.resubmit_left = 3;

	T_OK(ttask_alloc(e.t, 1, ok_cb, err_cb, &a));
	T_OK(doca_task_submit(&a->base));
	T_EQ_INT(ctx_inflight(e.t), 1);
	/* Each progress runs one round: the resubmitted task is reported by the next call. */
	for (int i = 1; i <= 4; i++) {
		T_EQ_INT(doca_pe_progress(e.pe), 1);
		T_EQ_INT(e.seen.ok, i);
	}
	T_EQ_INT(doca_pe_progress(e.pe), 0);
	T_EQ_INT(e.seen.ok, 4);
	T_EQ_INT(ctx_inflight(e.t), 0);
	/* The last callback kept the task: it is the application's, reusable and freeable. */
	T_TRUE(e.seen.kept == &a->base);
	T_EQ_INT(e.t->n_task_free, 0);
	T_OK(doca_task_submit(&a->base));
	T_EQ_INT(doca_pe_progress(e.pe), 1);
	T_EQ_INT(e.seen.ok, 5);
	doca_task_free(&a->base);
	T_EQ_INT(e.t->n_task_free, 1);

	env_down(&e);
}

static void test_nested_calls_refused(void)
{
	struct env e;
	struct ttask *a;

	env_up(&e);
	e.t->complete_in_submit = 1;
	e.seen.free_in_cb = 1;
	e.seen.pe = e.pe;
	T_OK(ttask_alloc(e.t, 1, ok_cb, err_cb, &a));
	T_OK(doca_task_submit(&a->base));
	T_EQ_INT(doca_pe_progress(e.pe), 1);
	T_EQ_INT(e.seen.ok, 1);
	T_EQ_INT(e.seen.nested_progress, 0);
	T_STATUS(e.seen.nested_destroy, DOCA_ERROR_BAD_STATE);
	T_STATUS(e.seen.nested_mode, DOCA_ERROR_BAD_STATE);
	e.seen.pe = NULL;
	/* The PE still works after the refused calls. */
	T_OK(ttask_alloc(e.t, 1, ok_cb, err_cb, &a));
	T_OK(doca_task_submit(&a->base));
	T_EQ_INT(doca_pe_progress(e.pe), 1);
	T_EQ_INT(e.seen.ok, 2);
	env_down(&e);
}

static void test_submit_errors(void)
{
	struct env e;
	struct ttask *a, *bad;
	doca_error_t st;

	env_up(&e);
	e.seen.free_in_cb = 1;

	T_STATUS(doca_task_submit(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_task_submit_ex(NULL, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_task_try_submit(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_task_get_status(NULL), DOCA_ERROR_INVALID_VALUE);
	T_TRUE(doca_task_get_ctx(NULL) == NULL);
	T_EQ_INT(doca_task_get_user_data(NULL).u64, 0);
	doca_task_set_user_data(NULL, doca_task_get_user_data(NULL)); /* logs only */
	doca_task_free(NULL);					      /* no-op */

	T_OK(ttask_alloc(e.t, 1, ok_cb, err_cb, &a));
	T_STATUS(doca_task_submit_ex(&a->base, 1U << 7), DOCA_ERROR_INVALID_VALUE);

	/* try_submit validates; the refused task is still the caller's. */
	T_OK(ttask_alloc(e.t, -1, ok_cb, err_cb, &bad));
	T_STATUS(doca_task_try_submit(&bad->base), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(e.t->n_validate, 1);
	T_EQ_INT(ctx_inflight(e.t), 0);
	bad->value = 5;
	T_OK(doca_task_try_submit(&bad->base));
	T_EQ_INT(e.t->n_validate, 2);
	/* Submitted twice, or freed while submitted: refused, the task stays in flight. */
	T_STATUS(doca_task_submit(&bad->base), DOCA_ERROR_IN_USE);
	doca_task_free(&bad->base);
	T_EQ_INT(e.t->n_task_free, 0);
	T_EQ_INT(ctx_inflight(e.t), 1);
	T_EQ_INT(tctx_complete_all(e.t), 1);
	T_EQ_INT(doca_pe_progress(e.pe), 1);
	T_EQ_INT(e.t->n_task_free, 1); /* freed by its callback */

	/* The engine refuses: the caller owns the task, nothing is counted. */
	e.t->submit_result = DOCA_ERROR_FULL;
	T_STATUS(doca_task_submit(&a->base), DOCA_ERROR_FULL);
	T_EQ_INT(ctx_inflight(e.t), 0);
	T_EQ_INT(pe_inflight(e.pe), 0);
	e.t->submit_result = DOCA_SUCCESS;

	/* Flush: doca_task_submit flushes, submit_ex without the flag does not. */
	T_EQ_INT(e.t->n_flush, 1);
	T_OK(doca_task_submit_ex(&a->base, DOCA_TASK_SUBMIT_FLAG_OPTIMIZE_REPORTS));
	T_EQ_INT(e.t->n_flush, 1);
	doca_ctx_flush_tasks(&e.t->base);
	T_EQ_INT(e.t->n_flush, 2);
	T_EQ_INT(tctx_complete_all(e.t), 1);
	T_EQ_INT(doca_pe_progress(e.pe), 1);
	T_EQ_INT(e.seen.ok, 2);

	/* Allocation and submission need a RUNNING context. */
	T_OK(doca_ctx_stop(&e.t->base));
	st = ttask_alloc(e.t, 1, ok_cb, err_cb, &a);
	T_STATUS(st, DOCA_ERROR_BAD_STATE);
	env_down(&e);
}

static enum doca_ctx_states state_of(struct tctx *t)
{
	enum doca_ctx_states st = (enum doca_ctx_states)99; /* not a state */

	doca_ctx_get_state(&t->base, &st);
	return st;
}

static void test_inflight_and_stop(void)
{
	struct env e;
	struct tctx *t2;
	struct ttask *x[3], *y, *kept;
	union doca_data sud;

	env_up(&e);
	e.seen.free_in_cb = 1;
	/* A second context on the same PE, reporting to the same recorder. */
	t2 = tctx_create();
	T_OK(doca_pe_connect_ctx(e.pe, &t2->base));
	sud.ptr = &e.seen;
	T_OK(doca_ctx_set_user_data(&t2->base, sud));
	T_OK(doca_ctx_start(&t2->base));

	for (int i = 0; i < 3; i++) {
		T_OK(ttask_alloc(e.t, 1, ok_cb, err_cb, &x[i]));
		T_OK(doca_task_submit(&x[i]->base));
	}
	T_OK(ttask_alloc(t2, 1, ok_cb, err_cb, &y));
	T_OK(doca_task_submit(&y->base));
	T_EQ_INT(ctx_inflight(e.t), 3);
	T_EQ_INT(ctx_inflight(t2), 1);
	T_EQ_INT(pe_inflight(e.pe), 4);
	T_EQ_INT(doca_pe_progress(e.pe), 0); /* the engines hold them */

	/* Stop with tasks in flight: STOPPING until every callback ran. */
	T_STATUS(doca_ctx_stop(&e.t->base), DOCA_ERROR_IN_PROGRESS);
	T_EQ_INT(state_of(e.t), DOCA_CTX_STATE_STOPPING);
	T_EQ_INT(e.seen.st.n, 2);
	T_EQ_INT(e.seen.st.prev[1], DOCA_CTX_STATE_RUNNING);
	T_EQ_INT(e.seen.st.next[1], DOCA_CTX_STATE_STOPPING);
	T_STATUS(doca_task_submit(&x[0]->base), DOCA_ERROR_BAD_STATE); /* ctx stopping */
	T_STATUS(tctx_destroy(e.t), DOCA_ERROR_BAD_STATE);
	T_EQ_INT(doca_pe_progress(e.pe), 0);
	T_EQ_INT(state_of(e.t), DOCA_CTX_STATE_STOPPING);
	T_EQ_INT(tctx_complete_all(e.t), 3);
	T_EQ_INT(doca_pe_progress(e.pe), 1);
	T_EQ_INT(e.seen.ok, 3);
	T_EQ_INT(state_of(e.t), DOCA_CTX_STATE_IDLE);
	T_EQ_INT(e.seen.st.n, 3);
	T_EQ_INT(e.seen.st.prev[2], DOCA_CTX_STATE_STOPPING);
	T_EQ_INT(e.seen.st.next[2], DOCA_CTX_STATE_IDLE);
	T_EQ_INT(ctx_inflight(e.t), 0);
	T_EQ_INT(pe_inflight(e.pe), 1); /* t2's task */

	/* A stop that flushes the engine: the task fails with the type's flush status; the
	 * callback keeps it, and the context waits in STOPPING until it is freed. */
	e.seen.free_in_cb = 0;
	e.t->flush_on_stop = 1;
	T_OK(doca_ctx_start(&e.t->base));
	T_OK(ttask_alloc(e.t, 1, ok_cb, err_cb, &kept));
	T_OK(doca_task_submit(&kept->base));
	T_STATUS(doca_ctx_stop(&e.t->base), DOCA_ERROR_IN_PROGRESS);
	T_EQ_INT(doca_pe_progress(e.pe), 1);
	T_EQ_INT(e.seen.err, 1);
	T_TRUE(e.seen.kept == &kept->base);
	T_STATUS(doca_task_get_status(&kept->base), DOCA_ERROR_CONNECTION_ABORTED);
	T_EQ_INT(state_of(e.t), DOCA_CTX_STATE_STOPPING);
	T_EQ_INT(doca_pe_progress(e.pe), 0);
	T_EQ_INT(state_of(e.t), DOCA_CTX_STATE_STOPPING);
	doca_task_free(&kept->base);
	T_EQ_INT(doca_pe_progress(e.pe), 1);
	T_EQ_INT(state_of(e.t), DOCA_CTX_STATE_IDLE);
	T_EQ_INT(e.seen.st.n, 6);
	T_EQ_INT(e.seen.st.wrong_state, 0);

	/* The second context's task. */
	e.seen.free_in_cb = 1;
	T_EQ_INT(tctx_complete_all(t2), 1);
	T_EQ_INT(doca_pe_progress(e.pe), 1);
	T_EQ_INT(pe_inflight(e.pe), 0);
	T_OK(doca_ctx_stop(&t2->base));
	T_OK(tctx_destroy(t2));
	T_OK(tctx_destroy(e.t));
	T_OK(doca_pe_destroy(e.pe));
}

struct completer {
	struct tctx *t;
};

static void *complete_later(void *arg)
{
	struct completer *c = arg;
	struct timespec ts = {.tv_sec = 0, .tv_nsec = 50 * 1000 * 1000};

	nanosleep(&ts, NULL);
	tctx_complete_all(c->t);
	return NULL;
}

static void test_notification_wakeup(void)
{
	struct env e;
	struct ttask *a;
	doca_notification_handle_t h;
	struct completer c;
	struct pollfd pfd;
	pthread_t thr;

	env_up(&e);
	e.seen.free_in_cb = 1;
	T_OK(doca_pe_get_notification_handle(e.pe, &h));
	pfd.fd = h;
	pfd.events = POLLIN;

	T_OK(ttask_alloc(e.t, 1, ok_cb, err_cb, &a));
	T_OK(doca_task_submit(&a->base));
	T_OK(doca_pe_request_notification(e.pe));
	T_EQ_INT(poll(&pfd, 1, 0), 0);

	c.t = e.t;
	T_EQ_INT(pthread_create(&thr, NULL, complete_later, &c), 0);
	T_EQ_INT(poll(&pfd, 1, 10000), 1); /* woken by the other thread's completion */
	pthread_join(thr, NULL);
	T_EQ_INT(e.seen.ok, 0);
	T_OK(doca_pe_clear_notification(e.pe, h));
	T_EQ_INT(poll(&pfd, 1, 0), 0);
	T_EQ_INT(doca_pe_progress(e.pe), 1);
	T_EQ_INT(e.seen.ok, 1);
	T_EQ_INT(doca_pe_progress(e.pe), 0);

	/* Completed before arming: the handle is readable at once. */
	e.t->complete_in_submit = 1;
	T_OK(ttask_alloc(e.t, 1, ok_cb, err_cb, &a));
	T_OK(doca_task_submit(&a->base));
	T_OK(doca_pe_request_notification(e.pe));
	T_EQ_INT(poll(&pfd, 1, 0), 1);
	T_OK(doca_pe_clear_notification(e.pe, h));
	T_EQ_INT(doca_pe_progress(e.pe), 1);
	T_EQ_INT(e.seen.ok, 2);

	/* PROGRESS_ALL: arming again clears an old wake-up without clear_notification. */
	T_OK(doca_pe_set_event_mode(e.pe, DOCA_PE_EVENT_MODE_PROGRESS_ALL));
	T_OK(ttask_alloc(e.t, 1, ok_cb, err_cb, &a));
	T_OK(doca_task_submit(&a->base));
	T_OK(doca_pe_request_notification(e.pe));
	T_EQ_INT(poll(&pfd, 1, 0), 1);
	T_EQ_INT(doca_pe_progress(e.pe), 1);
	T_OK(doca_pe_request_notification(e.pe));
	T_EQ_INT(poll(&pfd, 1, 0), 0);
	T_EQ_INT(e.seen.ok, 3);

	env_down(&e);
}

/*
 * Completions keep their order whichever thread makes them: one made by another thread, then
 * one the context's progress makes on the PE's own thread (which skips the PE lock only while
 * no other thread's completion waits), then again; and a task a callback resubmits and that
 * completes at once is due at the next progress call, which the armed handle announces.
 */
static void test_completion_order(void)
{
	struct env e;
	struct ttask *t[4];
	doca_notification_handle_t h;
	struct completer c;
	struct pollfd pfd;
	pthread_t thr;

	env_up(&e);
	e.seen.free_in_cb = 1;
	for (int i = 0; i < 4; i++) {
		T_OK(ttask_alloc(e.t, 1, ok_cb, err_cb, &t[i]));
		doca_task_set_user_data(&t[i]->base, (union doca_data){.u64 = 10 + (uint64_t)i});
	}
	/* 10 completed by another thread, then 11 by the PE's progress */
	T_OK(doca_task_submit(&t[0]->base));
	c.t = e.t;
	T_EQ_INT(pthread_create(&thr, NULL, complete_later, &c), 0);
	pthread_join(thr, NULL);
	T_OK(doca_task_submit(&t[1]->base));
	e.t->complete_in_progress = 1;
	T_EQ_INT(doca_pe_progress(e.pe), 1);
	e.t->complete_in_progress = 0;
	/* 12 by the PE's progress (nothing else waits: its own list), then 13 by another thread */
	T_OK(doca_task_submit(&t[2]->base));
	e.t->complete_in_progress = 1;
	T_EQ_INT(doca_pe_progress(e.pe), 1);
	e.t->complete_in_progress = 0;
	T_OK(doca_task_submit(&t[3]->base));
	T_EQ_INT(pthread_create(&thr, NULL, complete_later, &c), 0);
	pthread_join(thr, NULL);
	T_EQ_INT(doca_pe_progress(e.pe), 1);
	T_EQ_INT(e.seen.n_order, 4);
	for (int i = 0; i < 4 && i < e.seen.n_order; i++)
		T_EQ_INT(e.seen.order[i], 10 + i);
	T_EQ_INT(ctx_inflight(e.t), 0);
	T_EQ_INT(pe_inflight(e.pe), 0);

	/* resubmitted from its callback, completed at once: announced, due at the next call */
	e.seen.free_in_cb = 0;
	e.seen.resubmit_left = 1;
	e.t->complete_in_submit = 1;
	T_OK(ttask_alloc(e.t, 1, ok_cb, err_cb, &t[0]));
	doca_task_set_user_data(&t[0]->base, (union doca_data){.u64 = 20});
	T_OK(doca_task_submit(&t[0]->base));
	T_EQ_INT(doca_pe_progress(e.pe), 1);
	T_EQ_INT(e.seen.n_order, 5);
	T_OK(doca_pe_get_notification_handle(e.pe, &h));
	pfd.fd = h;
	pfd.events = POLLIN;
	T_OK(doca_pe_request_notification(e.pe));
	T_EQ_INT(poll(&pfd, 1, 0), 1); /* the resubmitted task's completion is due */
	T_OK(doca_pe_clear_notification(e.pe, h));
	T_EQ_INT(doca_pe_progress(e.pe), 1);
	T_EQ_INT(e.seen.n_order, 6);
	T_EQ_INT(e.seen.order[5], 20);
	T_EQ_INT(pe_inflight(e.pe), 0);
	T_EQ_INT(doca_pe_progress(e.pe), 0);
	doca_task_free(e.seen.kept);
	e.t->complete_in_submit = 0;
	env_down(&e);
}

int main(void)
{
	test_callbacks();
	test_resubmit_and_keep();
	test_nested_calls_refused();
	test_submit_errors();
	test_inflight_and_stop();
	test_notification_wakeup();
	test_completion_order();
	T_DONE();
}
