/*
 * Progress engine and context life cycle: create/destroy/connect rules, synchronous and
 * asynchronous start and stop driven by doca_pe_progress, the state-changed callback sequence,
 * a failed asynchronous start, configuration refused after start, NULL arguments, and the
 * notification handle waking up on a state change made by another thread.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "doca_ctx.h"
#include "doca_pe.h"
#include "softdpu/ctx.h"
#include "t_helpers.h"
#include "t_test_ctx.h"

#define T_STATES(s, i, p, n)                                                                       \
	do {                                                                                       \
		T_EQ_INT((s)->prev[i], p);                                                         \
		T_EQ_INT((s)->next[i], n);                                                         \
	} while (0)

static enum doca_ctx_states state_of(struct tctx *t)
{
	enum doca_ctx_states s = (enum doca_ctx_states)99; /* not a state */

	doca_ctx_get_state(&t->base, &s);
	return s;
}

/* Progress until `want` or 100 calls; returns how many calls returned 1. */
static int progress_until(struct doca_pe *pe, struct tctx *t, enum doca_ctx_states want)
{
	int made = 0;

	for (int i = 0; i < 100 && state_of(t) != want; i++)
		made += doca_pe_progress(pe);
	return made;
}

static void test_null_arguments(void)
{
	struct doca_pe *pe = NULL;
	struct tctx *t = tctx_create();
	union doca_data ud;
	enum doca_ctx_states st;
	doca_notification_handle_t h;
	size_t n;

	T_STATUS(doca_pe_create(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_pe_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(doca_pe_progress(NULL), 0);
	T_OK(doca_pe_create(&pe));
	T_STATUS(doca_pe_connect_ctx(NULL, &t->base), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_pe_connect_ctx(pe, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_pe_get_notification_handle(NULL, &h), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_pe_get_notification_handle(pe, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_pe_request_notification(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_pe_clear_notification(NULL, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_pe_clear_notification(pe, -1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_pe_get_num_inflight_tasks(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_pe_get_num_inflight_tasks(pe, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_pe_set_event_mode(NULL, DOCA_PE_EVENT_MODE_PROGRESS_ALL),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_pe_set_event_mode(pe, (enum doca_pe_event_mode)7), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_pe_add_event_fd(NULL, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_pe_add_event_fd(pe, -1), DOCA_ERROR_INVALID_VALUE);

	T_STATUS(doca_ctx_start(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_ctx_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_ctx_get_state(NULL, &st), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_ctx_get_state(&t->base, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_ctx_get_num_inflight_tasks(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_ctx_get_num_inflight_tasks(&t->base, NULL), DOCA_ERROR_INVALID_VALUE);
	ud.u64 = 1;
	T_STATUS(doca_ctx_set_user_data(NULL, ud), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_ctx_get_user_data(NULL, &ud), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_ctx_get_user_data(&t->base, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_ctx_set_state_changed_cb(NULL, tstates_cb), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_ctx_set_datapath_on_gpu(NULL, (struct doca_gpu *)&ud),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_ctx_set_datapath_on_gpu(&t->base, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ctx_get_last_error(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ctx_check_idle(NULL, "test"), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ctx_check_running(NULL, "test"), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ctx_fini(NULL), DOCA_ERROR_INVALID_VALUE);
	doca_ctx_flush_tasks(NULL); /* logs, does not crash */
	sdp_ctx_start_done(NULL, DOCA_SUCCESS);
	sdp_ctx_stop_done(NULL);
	sdp_pe_signal(NULL);
	T_TRUE(sdp_ctx_get_pe(NULL) == NULL);

	/* Nothing above changed the objects. */
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_IDLE);
	T_OK(doca_ctx_get_user_data(&t->base, &ud));
	T_EQ_INT(ud.u64, 0);
	T_OK(tctx_destroy(t));
	T_OK(doca_pe_destroy(pe));
}

static void test_connect_rules(void)
{
	struct doca_pe *pe1, *pe2;
	struct tctx *t = tctx_create();
	struct tctx *g = tctx_create();
	int fake_gpu;

	T_OK(doca_pe_create(&pe1));
	T_OK(doca_pe_create(&pe2));

	/* Unconnected and no GPU data path: nothing could ever progress it. */
	T_STATUS(doca_ctx_start(&t->base), DOCA_ERROR_NOT_CONNECTED);
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_IDLE);
	T_STATUS(doca_ctx_stop(&t->base), DOCA_ERROR_BAD_STATE);

	T_OK(doca_pe_connect_ctx(pe1, &t->base));
	T_TRUE(sdp_ctx_get_pe(&t->base) == pe1);
	T_STATUS(doca_pe_connect_ctx(pe1, &t->base), DOCA_ERROR_NOT_PERMITTED);
	T_STATUS(doca_pe_connect_ctx(pe2, &t->base), DOCA_ERROR_NOT_PERMITTED);
	T_STATUS(doca_pe_destroy(pe1), DOCA_ERROR_IN_USE);

	/* A GPU data path context starts without a PE; once running it cannot be connected. */
	T_OK(doca_ctx_set_datapath_on_gpu(&g->base, (struct doca_gpu *)&fake_gpu));
	T_OK(doca_ctx_start(&g->base));
	T_EQ_INT(state_of(g), DOCA_CTX_STATE_RUNNING);
	T_STATUS(doca_pe_connect_ctx(pe2, &g->base), DOCA_ERROR_BAD_STATE);
	T_TRUE(sdp_ctx_get_pe(&g->base) == NULL);
	T_STATUS(doca_ctx_set_datapath_on_gpu(&g->base, (struct doca_gpu *)&fake_gpu),
		 DOCA_ERROR_BAD_STATE);
	T_STATUS(tctx_destroy(g), DOCA_ERROR_BAD_STATE);
	T_OK(doca_ctx_stop(&g->base));
	T_EQ_INT(state_of(g), DOCA_CTX_STATE_IDLE);
	T_OK(tctx_destroy(g));

	/* Destroying the context disconnects it; then the PE can go. */
	T_OK(tctx_destroy(t));
	T_OK(doca_pe_destroy(pe1));
	T_OK(doca_pe_destroy(pe2));
}

static void test_sync_start_stop(void)
{
	struct tstates s = {0};
	struct doca_pe *pe;
	struct tctx *t = tctx_create();
	union doca_data ud = {.ptr = &s};
	union doca_data got;
	int fake_gpu;
	size_t n = 99;

	T_OK(doca_pe_create(&pe));
	T_OK(doca_pe_connect_ctx(pe, &t->base));
	T_OK(doca_ctx_set_user_data(&t->base, ud));
	T_OK(doca_ctx_get_user_data(&t->base, &got));
	T_TRUE(got.ptr == &s);
	T_OK(doca_ctx_set_state_changed_cb(&t->base, tstates_cb));

	T_OK(doca_ctx_start(&t->base));
	T_EQ_INT(t->n_start, 1);
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_RUNNING);
	T_EQ_INT(s.n, 1);
	T_STATES(&s, 0, DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_RUNNING);
	T_OK(sdp_ctx_get_last_error(&t->base));
	T_OK(doca_ctx_get_num_inflight_tasks(&t->base, &n));
	T_EQ_INT(n, 0);

	/* Configuration is closed while running. */
	T_STATUS(doca_ctx_start(&t->base), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_ctx_set_user_data(&t->base, ud), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_ctx_set_state_changed_cb(&t->base, NULL), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_ctx_set_datapath_on_gpu(&t->base, (struct doca_gpu *)&fake_gpu),
		 DOCA_ERROR_BAD_STATE);
	T_STATUS(sdp_ctx_check_idle(&t->base, "a test setting"), DOCA_ERROR_BAD_STATE);
	T_OK(sdp_ctx_check_running(&t->base, "a test allocation"));
	T_STATUS(doca_pe_destroy(pe), DOCA_ERROR_IN_USE);
	T_STATUS(tctx_destroy(t), DOCA_ERROR_BAD_STATE);

	/* Nothing pending: progress reports no work. */
	T_EQ_INT(doca_pe_progress(pe), 0);
	T_TRUE(t->n_progress >= 1);

	doca_ctx_flush_tasks(&t->base);
	T_EQ_INT(t->n_flush, 1);

	T_OK(doca_ctx_stop(&t->base));
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_IDLE);
	T_EQ_INT(s.n, 2);
	T_STATES(&s, 1, DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_IDLE);
	T_EQ_INT(s.wrong_state, 0);
	T_STATUS(doca_ctx_stop(&t->base), DOCA_ERROR_BAD_STATE);

	/* IDLE again: configurable, and restartable. */
	T_OK(sdp_ctx_check_idle(&t->base, "a test setting"));
	T_STATUS(sdp_ctx_check_running(&t->base, "a test allocation"), DOCA_ERROR_BAD_STATE);
	T_OK(doca_ctx_set_user_data(&t->base, ud));
	T_OK(doca_ctx_start(&t->base));
	T_OK(doca_ctx_stop(&t->base));
	T_EQ_INT(s.n, 4);

	/* A synchronous start that fails leaves the context IDLE and remembers why. */
	t->start_result = DOCA_ERROR_INITIALIZATION;
	T_STATUS(doca_ctx_start(&t->base), DOCA_ERROR_INITIALIZATION);
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_IDLE);
	T_STATUS(sdp_ctx_get_last_error(&t->base), DOCA_ERROR_INITIALIZATION);
	T_EQ_INT(s.n, 4);

	/* A stop the type refuses keeps the context running. */
	t->start_result = DOCA_SUCCESS;
	T_OK(doca_ctx_start(&t->base));
	T_OK(sdp_ctx_get_last_error(&t->base));
	t->stop_result = DOCA_ERROR_DRIVER;
	T_STATUS(doca_ctx_stop(&t->base), DOCA_ERROR_DRIVER);
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_RUNNING);
	t->stop_result = DOCA_SUCCESS;
	T_OK(doca_ctx_stop(&t->base));
	T_EQ_INT(s.n, 6);

	T_OK(tctx_destroy(t));
	T_OK(doca_pe_destroy(pe));
}

/* STARTING -> RUNNING -> STOPPING -> IDLE, every step made by doca_pe_progress. */
static void test_async_lifecycle(void)
{
	struct tstates s = {0};
	struct doca_pe *pe;
	struct tctx *t = tctx_create();
	union doca_data ud = {.ptr = &s};

	T_OK(doca_pe_create(&pe));
	T_OK(doca_pe_connect_ctx(pe, &t->base));
	T_OK(doca_ctx_set_user_data(&t->base, ud));
	T_OK(doca_ctx_set_state_changed_cb(&t->base, tstates_cb));
	t->async_start = 1;
	t->start_after = 3;
	t->async_stop = 1;
	t->stop_after = 2;

	T_STATUS(doca_ctx_start(&t->base), DOCA_ERROR_IN_PROGRESS);
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_STARTING);
	T_EQ_INT(s.n, 1);
	T_STATES(&s, 0, DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_STARTING);
	T_STATUS(doca_ctx_start(&t->base), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_ctx_set_user_data(&t->base, ud), DOCA_ERROR_BAD_STATE);
	T_STATUS(sdp_ctx_check_running(&t->base, "a test allocation"), DOCA_ERROR_BAD_STATE);

	/* The engine finishes the start on the third progress call. */
	T_EQ_INT(doca_pe_progress(pe), 0);
	T_EQ_INT(doca_pe_progress(pe), 0);
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_STARTING);
	T_EQ_INT(doca_pe_progress(pe), 1);
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_RUNNING);
	T_EQ_INT(s.n, 2);
	T_STATES(&s, 1, DOCA_CTX_STATE_STARTING, DOCA_CTX_STATE_RUNNING);
	T_EQ_INT(doca_pe_progress(pe), 0);

	T_STATUS(doca_ctx_stop(&t->base), DOCA_ERROR_IN_PROGRESS);
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_STOPPING);
	T_EQ_INT(s.n, 3);
	T_STATES(&s, 2, DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_STOPPING);
	T_STATUS(doca_ctx_stop(&t->base), DOCA_ERROR_IN_PROGRESS); /* already stopping */
	T_EQ_INT(t->n_stop, 1);
	T_STATUS(tctx_destroy(t), DOCA_ERROR_BAD_STATE);

	T_EQ_INT(doca_pe_progress(pe), 0);
	T_EQ_INT(doca_pe_progress(pe), 1);
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_IDLE);
	T_EQ_INT(s.n, 4);
	T_STATES(&s, 3, DOCA_CTX_STATE_STOPPING, DOCA_CTX_STATE_IDLE);
	T_EQ_INT(s.wrong_state, 0);
	T_EQ_INT(doca_pe_progress(pe), 0);
	T_OK(sdp_ctx_get_last_error(&t->base));

	/* Stop while STARTING: straight to STOPPING; the late start result is ignored. */
	t->start_after = 0; /* the test finishes the start itself */
	t->async_stop = 0;
	T_STATUS(doca_ctx_start(&t->base), DOCA_ERROR_IN_PROGRESS);
	T_OK(doca_ctx_stop(&t->base));
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_IDLE);
	T_EQ_INT(s.n, 6);
	T_STATES(&s, 4, DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_STARTING);
	T_STATES(&s, 5, DOCA_CTX_STATE_STARTING, DOCA_CTX_STATE_IDLE);
	sdp_ctx_start_done(&t->base, DOCA_SUCCESS);
	T_EQ_INT(doca_pe_progress(pe), 0);
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_IDLE);
	T_EQ_INT(s.n, 6);

	/* An asynchronous stop from STARTING. */
	t->async_stop = 1;
	t->stop_after = 1;
	T_STATUS(doca_ctx_start(&t->base), DOCA_ERROR_IN_PROGRESS);
	T_STATUS(doca_ctx_stop(&t->base), DOCA_ERROR_IN_PROGRESS);
	T_STATES(&s, 7, DOCA_CTX_STATE_STARTING, DOCA_CTX_STATE_STOPPING);
	T_EQ_INT(doca_pe_progress(pe), 1);
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_IDLE);
	T_STATES(&s, 8, DOCA_CTX_STATE_STOPPING, DOCA_CTX_STATE_IDLE);

	T_OK(tctx_destroy(t));
	T_OK(doca_pe_destroy(pe));
}

static void test_async_start_fails(void)
{
	struct tstates s = {0};
	struct doca_pe *pe;
	struct tctx *t = tctx_create();
	union doca_data ud = {.ptr = &s};

	T_OK(doca_pe_create(&pe));
	T_OK(doca_pe_connect_ctx(pe, &t->base));
	T_OK(doca_ctx_set_user_data(&t->base, ud));
	T_OK(doca_ctx_set_state_changed_cb(&t->base, tstates_cb));
	t->async_start = 1;
	t->start_after = 2;
	t->start_result = DOCA_ERROR_CONNECTION_ABORTED;

	T_STATUS(doca_ctx_start(&t->base), DOCA_ERROR_IN_PROGRESS);
	T_OK(sdp_ctx_get_last_error(&t->base));
	T_EQ_INT(progress_until(pe, t, DOCA_CTX_STATE_IDLE), 1);
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_IDLE);
	T_EQ_INT(s.n, 2);
	T_STATES(&s, 0, DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_STARTING);
	T_STATES(&s, 1, DOCA_CTX_STATE_STARTING, DOCA_CTX_STATE_IDLE);
	T_STATUS(sdp_ctx_get_last_error(&t->base), DOCA_ERROR_CONNECTION_ABORTED);
	T_EQ_INT(t->n_stop, 0); /* the type cleaned up itself; no stop follows */

	/* The context is usable: configure and start again, this time successfully. */
	T_OK(doca_ctx_set_user_data(&t->base, ud));
	t->start_result = DOCA_SUCCESS;
	T_STATUS(doca_ctx_start(&t->base), DOCA_ERROR_IN_PROGRESS);
	T_OK(sdp_ctx_get_last_error(&t->base)); /* reset by the new attempt */
	T_EQ_INT(progress_until(pe, t, DOCA_CTX_STATE_RUNNING), 1);
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_RUNNING);
	T_OK(sdp_ctx_get_last_error(&t->base));
	T_OK(doca_ctx_stop(&t->base));
	T_EQ_INT(s.n, 5);

	T_OK(tctx_destroy(t));
	T_OK(doca_pe_destroy(pe));
}

/* A state-changed callback cannot progress the PE it is called from. */
static void test_reentrant_progress(void)
{
	struct tstates s = {0};
	struct doca_pe *pe;
	struct tctx *t = tctx_create();
	union doca_data ud = {.ptr = &s};

	T_OK(doca_pe_create(&pe));
	T_OK(doca_pe_connect_ctx(pe, &t->base));
	T_OK(doca_ctx_set_user_data(&t->base, ud));
	T_OK(doca_ctx_set_state_changed_cb(&t->base, tstates_cb));
	t->async_start = 1;
	t->start_after = 1;
	T_STATUS(doca_ctx_start(&t->base), DOCA_ERROR_IN_PROGRESS);
	s.pe = pe;
	s.progress_ret = -1;
	T_EQ_INT(doca_pe_progress(pe), 1);
	T_EQ_INT(s.progress_ret, 0); /* the nested call was refused */
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_RUNNING);
	s.pe = NULL;
	/* The refused call left the PE working. */
	T_OK(doca_ctx_stop(&t->base));
	T_OK(tctx_destroy(t));
	T_OK(doca_pe_destroy(pe));
}

struct finisher {
	struct doca_ctx *ctx;
	doca_error_t status;
};

static void *finish_start_later(void *arg)
{
	struct finisher *f = arg;
	struct timespec ts = {.tv_sec = 0, .tv_nsec = 50 * 1000 * 1000};

	nanosleep(&ts, NULL);
	sdp_ctx_start_done(f->ctx, f->status);
	return NULL;
}

/* Event mode: sleep on the handle while another thread finishes the start. */
static void test_notification_state_change(void)
{
	struct doca_pe *pe;
	struct tctx *t = tctx_create();
	doca_notification_handle_t h = -1, h2 = -1;
	struct finisher f;
	struct pollfd pfd;
	pthread_t thr;

	T_OK(doca_pe_create(&pe));
	T_OK(doca_pe_get_notification_handle(pe, &h));
	T_OK(doca_pe_get_notification_handle(pe, &h2));
	T_TRUE(h >= 0);
	T_EQ_INT(h2, h);
	T_OK(doca_pe_connect_ctx(pe, &t->base));
	t->async_start = 1; /* start_after = 0: only the thread finishes it */

	T_STATUS(doca_ctx_start(&t->base), DOCA_ERROR_IN_PROGRESS);
	T_OK(doca_pe_request_notification(pe));
	T_EQ_INT(t->n_arm, 1);
	pfd.fd = h;
	pfd.events = POLLIN;
	T_EQ_INT(poll(&pfd, 1, 0), 0); /* nothing yet */

	f.ctx = &t->base;
	f.status = DOCA_SUCCESS;
	T_EQ_INT(pthread_create(&thr, NULL, finish_start_later, &f), 0);
	T_EQ_INT(poll(&pfd, 1, 10000), 1);
	T_TRUE(pfd.revents & POLLIN);
	pthread_join(thr, NULL);
	T_OK(doca_pe_clear_notification(pe, h));
	T_EQ_INT(poll(&pfd, 1, 0), 0); /* cleared */
	T_EQ_INT(doca_pe_progress(pe), 1);
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_RUNNING);
	T_EQ_INT(doca_pe_progress(pe), 0);

	/* A type reporting pending work on arm: the handle is readable at once. */
	t->arm_pending = 1;
	T_OK(doca_pe_request_notification(pe));
	T_EQ_INT(poll(&pfd, 1, 0), 1);
	T_OK(doca_pe_clear_notification(pe, h));
	T_EQ_INT(poll(&pfd, 1, 0), 0);
	t->arm_pending = 0;

	/* A signal while not armed is remembered until the next arm. */
	sdp_pe_signal(pe);
	T_EQ_INT(poll(&pfd, 1, 0), 0);
	T_OK(doca_pe_request_notification(pe));
	T_EQ_INT(poll(&pfd, 1, 0), 1);
	T_OK(doca_pe_clear_notification(pe, h));
	T_EQ_INT(doca_pe_progress(pe), 0);
	T_OK(doca_pe_request_notification(pe));
	T_EQ_INT(poll(&pfd, 1, 0), 0); /* progress consumed it */
	T_OK(doca_pe_clear_notification(pe, h));

	/* A stop that finishes asynchronously (stop_after = 0 here: a thread-less stop_done). */
	t->async_stop = 1;
	T_STATUS(doca_ctx_stop(&t->base), DOCA_ERROR_IN_PROGRESS);
	T_OK(doca_pe_request_notification(pe));
	T_EQ_INT(poll(&pfd, 1, 0), 0);
	sdp_ctx_stop_done(&t->base);
	T_EQ_INT(poll(&pfd, 1, 1000), 1);
	T_OK(doca_pe_clear_notification(pe, h));
	T_EQ_INT(doca_pe_progress(pe), 1);
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_IDLE);

	T_OK(tctx_destroy(t));
	T_OK(doca_pe_destroy(pe));
}

/* An asynchronous start of a context without a PE (GPU data path) finishes at once. */
static void test_unconnected_async(void)
{
	struct tstates s = {0};
	struct tctx *t = tctx_create();
	union doca_data ud = {.ptr = &s};
	int fake_gpu;

	T_OK(doca_ctx_set_user_data(&t->base, ud));
	T_OK(doca_ctx_set_state_changed_cb(&t->base, tstates_cb));
	T_OK(doca_ctx_set_datapath_on_gpu(&t->base, (struct doca_gpu *)&fake_gpu));
	t->async_start = 1;
	T_STATUS(doca_ctx_start(&t->base), DOCA_ERROR_IN_PROGRESS);
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_STARTING);
	sdp_ctx_start_done(&t->base, DOCA_SUCCESS);
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_RUNNING);
	t->async_stop = 1;
	T_STATUS(doca_ctx_stop(&t->base), DOCA_ERROR_IN_PROGRESS);
	sdp_ctx_stop_done(&t->base);
	T_EQ_INT(state_of(t), DOCA_CTX_STATE_IDLE);
	T_EQ_INT(s.n, 4);
	T_STATES(&s, 1, DOCA_CTX_STATE_STARTING, DOCA_CTX_STATE_RUNNING);
	T_STATES(&s, 3, DOCA_CTX_STATE_STOPPING, DOCA_CTX_STATE_IDLE);
	T_OK(tctx_destroy(t));
}

static void test_event_fds(void)
{
	struct doca_pe *pe;
	doca_notification_handle_t h;
	struct pollfd pfd;
	int p[2];

	T_OK(doca_pe_create(&pe));
	T_OK(doca_pe_get_notification_handle(pe, &h));
	T_EQ_INT(pipe(p), 0);
	T_OK(sdp_pe_add_event_fd(pe, p[0]));
	T_STATUS(sdp_pe_add_event_fd(pe, p[0]), DOCA_ERROR_ALREADY_EXIST);
	pfd.fd = h;
	pfd.events = POLLIN;
	T_EQ_INT(poll(&pfd, 1, 0), 0);
	T_EQ_INT(write(p[1], "x", 1), 1);
	T_EQ_INT(poll(&pfd, 1, 1000), 1); /* a type's own descriptor wakes the PE handle */
	sdp_pe_del_event_fd(pe, p[0]);
	T_EQ_INT(poll(&pfd, 1, 0), 0);
	close(p[0]);
	close(p[1]);
	T_OK(doca_pe_set_event_mode(pe, DOCA_PE_EVENT_MODE_PROGRESS_ALL));
	T_OK(doca_pe_set_event_mode(pe, DOCA_PE_EVENT_MODE_PROGRESS_SELECTIVE));
	T_OK(doca_pe_destroy(pe));
}

int main(void)
{
	test_null_arguments();
	test_connect_rules();
	test_sync_start_stop();
	test_async_lifecycle();
	test_async_start_fails();
	test_reentrant_progress();
	test_notification_state_change();
	test_unconnected_async();
	test_event_fds();
	T_DONE();
}
