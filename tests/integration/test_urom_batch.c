/*
 * Integration: commands submitted without DOCA_TASK_SUBMIT_FLAG_FLUSH (batched into one active
 * message, docs/architecture.md "UROM") through a real daemon and worker_graph worker.
 *
 *   flush:    40 unflushed loopbacks, then doca_ctx_flush_tasks(): each completes once, with its
 *             own value, in submission order;
 *   mixed:    5 unflushed and a flushing one: all 6, in order;
 *   overflow: 300 unflushed (max_inflight 512; a message holds about 60 at the 4 KiB message
 *             size), flushed once: all, in order (the batch went out whenever the next did not
 *             fit);
 *   progress: 3 unflushed, nothing but doca_pe_progress: all complete;
 *   event:    once the armed PE's handle stays quiet for 20 ms, 3 unflushed, then
 *             doca_pe_request_notification() and a bounded poll on the handle without any
 *             progress call before it: the handle fires (arming sent them) and all complete;
 *   flags:    doca_task_submit_ex() with an unknown flag: INVALID_VALUE, the task still the
 *             caller's (released), the next command works;
 *   stop:     3 unflushed, then doca_ctx_stop(): each completes once with CONNECTION_ABORTED,
 *             and a new worker context works;
 *   kill:     the worker SIGKILLed with 8 unflushed commands, then a flush: each completes
 *             once with IO_FAILED within the bound.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <signal.h>

#include "doca_buf.h"
#include "t_urom.h"
#include "t_uromd.h"

#define N_MAX 512

static long order[N_MAX * 4];
static long n_order;

/* t_loop_cb, and the order completions came in. */
static void batch_cb(doca_error_t result, union doca_data cookie, uint64_t data)
{
	if (n_order < (long)(sizeof(order) / sizeof(order[0])))
		order[n_order++] = (long)cookie.u64;
	t_loop_cb(result, cookie, data);
}

static doca_error_t submit(struct doca_urom_worker *w, uint64_t i, uint32_t flags)
{
	union doca_data cookie = {.u64 = i};

	return urom_graph_task_loopback_ex(w, cookie, t_loop_value(i), batch_cb, flags);
}

/*
 * Commands first..first+n-1 completed once each with want (and their values when SUCCESS), in
 * submission order when in_order.
 */
static void check_done(const struct t_loop *l, long first, long n, doca_error_t want, int in_order,
		       const char *what)
{
	long i, k = 0;

	for (i = first; i < first + n; i++) {
		if (l->count[i] != 1) {
			t_fail("%s: command %ld completed %d times, expected once", what, i,
			       l->count[i]);
			continue;
		}
		if (l->status[i] != want)
			t_fail("%s: command %ld: expected %s, got %s", what, i,
			       doca_error_get_name(want), doca_error_get_name(l->status[i]));
		else if (want == DOCA_SUCCESS && l->got[i] != t_loop_value((uint64_t)i))
			t_fail("%s: command %ld: wrong value 0x%" PRIx64, what, i, l->got[i]);
	}
	if (!in_order)
		return;
	for (i = 0; i < n_order; i++) {
		if (order[i] < first || order[i] >= first + n)
			continue;
		if (order[i] != first + k)
			t_fail("%s: completion %ld was command %ld, expected %ld", what, k,
			       order[i], first + k);
		k++;
	}
}

/* n unflushed commands from *next, all submitted successfully. */
static int submit_unflushed(struct doca_urom_worker *w, long *next, long n, const char *what)
{
	for (long i = 0; i < n; i++) {
		doca_error_t st = submit(w, (uint64_t)(*next)++, DOCA_TASK_SUBMIT_FLAG_NONE);

		if (st != DOCA_SUCCESS) {
			t_fail("%s: unflushed submit %ld: %s", what, i, doca_error_get_name(st));
			return -1;
		}
	}
	return 0;
}

/* n unflushed commands, one doca_ctx_flush_tasks(): each completes once, in order. */
static int flushed_window(struct t_svc *s, struct doca_urom_worker *w, struct t_loop *l, long *next,
			  long n, const char *what)
{
	long first = *next;

	if (submit_unflushed(w, next, n, what) != 0)
		return -1;
	doca_ctx_flush_tasks(doca_urom_worker_as_ctx(w));
	T_EQ_INT(t_pe_wait_count(s->pe, NULL, &l->done, *next, T_WAIT_MS), *next);
	check_done(l, first, n, DOCA_SUCCESS, 1, what);
	return 0;
}

int main(void)
{
	struct t_worker_cfg c = {.id = DOCA_UROM_WORKER_ID_ANY, .max_inflight = N_MAX};
	struct doca_urom_worker_cmd_task *task = NULL;
	struct doca_urom_worker *w = NULL;
	doca_notification_handle_t h;
	struct t_uromd d;
	struct t_svc s;
	struct t_loop loop;
	long next = 0, first;
	pid_t pids[4];

	if (t_uromd_start(&d, NULL) != 0)
		return T_EXIT_FAIL;
	t_loop_init(&loop, N_MAX * 4);
	if (t_svc_open(&s, 0) != DOCA_SUCCESS || t_svc_find_graph(&s) != DOCA_SUCCESS) {
		t_fail("service start or worker_graph lookup failed");
		goto out;
	}
	c.plugins = s.graph_id;
	T_OK(t_worker_start(&s, s.pe, &c, &w));
	if (w == NULL)
		goto out;

	/* flush */
	if (flushed_window(&s, w, &loop, &next, 40, "flush") != 0)
		goto stop;

	/* mixed */
	first = next;
	if (submit_unflushed(w, &next, 5, "mixed") != 0)
		goto stop;
	T_OK(submit(w, (uint64_t)next++, DOCA_TASK_SUBMIT_FLAG_FLUSH));
	T_EQ_INT(t_pe_wait_count(s.pe, NULL, &loop.done, next, T_WAIT_MS), next);
	check_done(&loop, first, 6, DOCA_SUCCESS, 1, "mixed");

	/* overflow */
	if (flushed_window(&s, w, &loop, &next, 300, "overflow") != 0)
		goto stop;

	/* progress */
	first = next;
	if (submit_unflushed(w, &next, 3, "progress") != 0)
		goto stop;
	{
		int64_t deadline = t_now_ms() + T_WAIT_MS;

		while (loop.done < next && t_now_ms() < deadline)
			(void)doca_pe_progress(s.pe);
	}
	T_EQ_INT(loop.done, next);
	check_done(&loop, first, 3, DOCA_SUCCESS, 1, "progress");

	/* event: first a quiet handle (armed, nothing fires), then arm before any progress call */
	T_OK(doca_pe_get_notification_handle(s.pe, &h));
	{
		struct pollfd p = {.fd = (int)h, .events = POLLIN};
		int quiet = 0;

		for (int k = 0; k < 20 && !quiet; k++) {
			while (doca_pe_progress(s.pe) != 0)
				;
			T_OK(doca_pe_request_notification(s.pe));
			quiet = poll(&p, 1, 20) == 0;
			doca_pe_clear_notification(s.pe, h);
		}
		if (!quiet)
			t_fail("event: the PE's handle kept firing with nothing in flight");
	}
	first = next;
	if (submit_unflushed(w, &next, 3, "event") != 0)
		goto stop;
	T_OK(doca_pe_request_notification(s.pe));
	{
		struct pollfd p = {.fd = (int)h, .events = POLLIN};

		if (poll(&p, 1, T_WAIT_MS) != 1)
			t_fail("event: the PE's handle did not fire within %d ms (unflushed "
			       "commands not sent when arming?)",
			       T_WAIT_MS);
		doca_pe_clear_notification(s.pe, h);
	}
	T_EQ_INT(t_pe_wait_count(s.pe, NULL, &loop.done, next, T_WAIT_MS), next);
	check_done(&loop, first, 3, DOCA_SUCCESS, 1, "event");

	/* flags */
	T_OK(doca_urom_worker_cmd_task_allocate_init(w, s.graph_id, &task));
	if (task != NULL) {
		T_STATUS(doca_task_submit_ex(doca_urom_worker_cmd_task_as_task(task), 1u << 7),
			 DOCA_ERROR_INVALID_VALUE);
		T_OK(doca_urom_worker_cmd_task_release(task));
	}
	T_EQ_INT(t_loop_one(&loop, w, s.pe, NULL, (uint64_t)next++), DOCA_SUCCESS);

	/* stop with unsent commands */
	first = next;
	if (submit_unflushed(w, &next, 3, "stop") != 0)
		goto stop;
	t_worker_close(&s, s.pe, w);
	w = NULL;
	check_done(&loop, first, 3, DOCA_ERROR_CONNECTION_ABORTED, 0, "stop");
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);

	/* a new worker, killed with unsent commands */
	T_OK(t_worker_start(&s, s.pe, &c, &w));
	if (w == NULL)
		goto out;
	T_EQ_INT(t_loop_one(&loop, w, s.pe, NULL, (uint64_t)next++), DOCA_SUCCESS);
	first = next;
	if (submit_unflushed(w, &next, 8, "kill") != 0)
		goto stop;
	T_EQ_INT(t_uromd_worker_pids(&d, pids, 4), 1);
	T_EQ_INT(kill(pids[0], SIGKILL), 0);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
	doca_ctx_flush_tasks(doca_urom_worker_as_ctx(w));
	T_EQ_INT(t_pe_wait_count(s.pe, NULL, &loop.done, next, T_WAIT_MS), next);
	check_done(&loop, first, 8, DOCA_ERROR_IO_FAILED, 0, "kill");
stop:
	t_worker_close(&s, s.pe, w);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
out:
	t_svc_close(&s);
	t_loop_fini(&loop);
	t_uromd_stop(&d);
	T_DONE();
}
