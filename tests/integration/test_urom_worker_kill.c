/*
 * Integration: a worker process killed with SIGKILL while commands stream to it. Every command
 * in flight completes with DOCA_ERROR_IO_FAILED within a bounded time, the context stops and is
 * destroyed, the daemon survives (reaps the worker, spawns new ones) and nothing leaks: no
 * process of the daemon is left and this process holds as many file descriptors as after an
 * identical cycle without the kill. The host's endpoint to its worker has no UCP error handling
 * (shared memory), so the death is learnt from the service: a last cycle puts the worker context
 * on a PE of its own and progresses (and sleeps on) only that PE while the worker dies.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "t_urom.h"
#include "t_uromd.h"

#define DEPTH 8
#define FAIL_BOUND_MS 5000
#define STREAM_MAX 20000 /* commands per cycle at most (the index space is shared) */

static struct t_uromd d;
static struct t_svc s;
static struct t_loop loop;
static uint64_t next_idx;

static struct t_worker_cfg cfg(void)
{
	struct t_worker_cfg c = {
		.id = DOCA_UROM_WORKER_ID_ANY, .plugins = s.graph_id, .max_inflight = DEPTH};

	return c;
}

/* Keep DEPTH loopbacks in flight on w (on pe) for ms milliseconds. */
static void stream(struct doca_pe *pe, struct doca_urom_worker *w, long *submitted, int ms)
{
	int64_t end = t_now_ms() + ms;

	while (t_now_ms() < end) {
		while (*submitted - loop.done < DEPTH && *submitted < STREAM_MAX &&
		       next_idx < loop.n) {
			if (t_loop_submit(w, next_idx) != DOCA_SUCCESS)
				break;
			next_idx++;
			(*submitted)++;
		}
		t_pe_step(pe, 1);
	}
}

/* One worker cycle on pe: start, stream, optionally SIGKILL it mid-stream, stop, destroy. */
static void cycle(struct doca_pe *pe, int kill_it)
{
	struct t_worker_cfg c = cfg();
	struct doca_urom_worker *w = NULL;
	long submitted = 0, base_done = loop.done, base_err = loop.errors;
	uint64_t first = next_idx, i;
	pid_t pid = 0;

	loop.done = 0;
	loop.errors = 0;
	T_OK(t_worker_start(&s, pe, &c, &w));
	if (w == NULL)
		return;
	T_EQ_INT(t_uromd_worker_pids(&d, &pid, 1), 1);
	stream(pe, w, &submitted, 300);
	T_TRUE(loop.done > 0);
	if (kill_it && pid > 0) {
		static char pending_at_kill[1 << 16];
		long before;
		int64_t t0, waited;

		/*
		 * Mid-stream, deterministically: freeze the worker (SIGSTOP) while commands flow,
		 * fill the queue with commands it can no longer answer, then SIGKILL it. Those
		 * must all fail; the ones sent before the freeze may have been answered.
		 */
		T_EQ_INT(kill(pid, SIGSTOP), 0);
		{
			int64_t settle = t_now_ms() + 50;

			while (t_now_ms() < settle)
				t_pe_step(pe, 5);
		}
		while (submitted - loop.done < DEPTH &&
		       t_loop_submit(w, next_idx) == DOCA_SUCCESS) {
			next_idx++;
			submitted++;
		}
		/* What the frozen worker still owes us: all of it must fail. */
		before = loop.done;
		T_TRUE(submitted - before > 0);
		for (i = first; i < next_idx; i++)
			pending_at_kill[i - first] = loop.count[i] == 0;
		T_EQ_INT(kill(pid, SIGKILL), 0);
		t0 = t_now_ms();
		t_pe_wait_count(pe, NULL, &loop.done, submitted, FAIL_BOUND_MS);
		waited = t_now_ms() - t0;
		T_EQ_INT(loop.done, submitted);
		if (waited >= FAIL_BOUND_MS)
			t_fail("in-flight tasks still pending %d ms after the worker died",
			       FAIL_BOUND_MS);
		for (i = first; i < next_idx; i++) {
			if (loop.count[i] != 1)
				t_fail("command %" PRIu64 " completed %d times, expected once", i,
				       loop.count[i]);
			else if (pending_at_kill[i - first] &&
				 loop.status[i] != DOCA_ERROR_IO_FAILED)
				t_fail("command %" PRIu64 " (unanswered at the kill): expected "
				       "IO_FAILED, got %s",
				       i, doca_error_get_name(loop.status[i]));
			else if (!pending_at_kill[i - first] && loop.status[i] != DOCA_SUCCESS)
				t_fail("command %" PRIu64 " (answered before the kill): expected "
				       "SUCCESS, got %s",
				       i, doca_error_get_name(loop.status[i]));
		}
		T_EQ_INT(loop.errors, submitted - before);
		fprintf(stderr,
			"note: %ld commands done before the kill, %ld failed after it in "
			"%lld ms\n",
			before, loop.errors, (long long)waited);
		/* A dead worker takes no new command (refused now or failed later). */
		{
			doca_error_t st = t_loop_submit(w, next_idx);

			if (st == DOCA_SUCCESS) {
				t_pe_wait_count(pe, NULL, &loop.done, submitted + 1, FAIL_BOUND_MS);
				T_EQ_INT(loop.count[next_idx], 1);
				T_STATUS(loop.status[next_idx], DOCA_ERROR_IO_FAILED);
			}
			next_idx++;
		}
		/* The daemon reaped it: no zombie, no process left. */
		T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
		T_TRUE(t_uromd_alive(&d));
	} else {
		t_pe_wait_count(pe, NULL, &loop.done, submitted, T_WAIT_MS);
		T_EQ_INT(loop.done, submitted);
		T_EQ_INT(loop.errors, 0);
	}
	t_worker_close(&s, pe, w);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
	loop.done += base_done;
	loop.errors += base_err;
}

int main(void)
{
	int fds_after_clean, fds_after_kill;

	if (t_uromd_start(&d, NULL) != 0)
		return T_EXIT_FAIL;
	t_loop_init(&loop, 1 << 18);
	if (t_svc_open(&s, 0) != DOCA_SUCCESS || t_svc_find_graph(&s) != DOCA_SUCCESS) {
		t_fail("service start or worker_graph lookup failed");
		goto out;
	}
	/* A first clean cycle settles what UCX opens once per context. */
	cycle(s.pe, 0);
	fds_after_clean = t_count_fds();
	cycle(s.pe, 1);
	fds_after_kill = t_count_fds();
	T_EQ_INT(fds_after_kill, fds_after_clean);
	/* The service connection still spawns and runs workers. */
	cycle(s.pe, 0);
	T_EQ_INT(t_count_fds(), fds_after_clean);
	T_TRUE(t_uromd_alive(&d));
	/* Only the worker's own PE is progressed while its worker dies. */
	{
		struct doca_pe *wpe = NULL;

		T_OK(doca_pe_create(&wpe));
		if (wpe != NULL) {
			cycle(wpe, 1);
			T_OK(doca_pe_destroy(wpe));
		}
	}
	T_EQ_INT(t_count_fds(), fds_after_clean);
	T_TRUE(t_uromd_alive(&d));
out:
	t_svc_close(&s);
	t_loop_fini(&loop);
	t_uromd_stop(&d);
	T_DONE();
}
