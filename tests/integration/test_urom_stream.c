/*
 * Integration: 1000 graph loopback commands through a real daemon and worker, kept
 * max_inflight_tasks (16) deep; every command completes exactly once, successfully, with its own
 * value, and the queue really reaches its depth (no AGAIN below it). Then a released task comes
 * back from allocate as new: payload data and length reset to its capacity, empty response,
 * zeroed user data.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "doca_buf.h"
#include "t_urom.h"
#include "t_uromd.h"

#define N_CMDS 1000
#define DEPTH 16

int main(void)
{
	struct t_worker_cfg c = {.id = DOCA_UROM_WORKER_ID_ANY, .max_inflight = DEPTH};
	struct doca_urom_worker *w = NULL;
	struct t_uromd d;
	struct t_svc s;
	struct t_loop loop;
	long submitted = 0, max_depth = 0, again = 0;
	int64_t deadline;
	size_t inflight = 0;
	long i;

	if (t_uromd_start(&d, NULL) != 0)
		return T_EXIT_FAIL;
	t_loop_init(&loop, N_CMDS);
	if (t_svc_open(&s, 0) != DOCA_SUCCESS || t_svc_find_graph(&s) != DOCA_SUCCESS) {
		t_fail("service start or worker_graph lookup failed");
		goto out;
	}
	c.plugins = s.graph_id;
	T_OK(t_worker_start(&s, s.pe, &c, &w));
	if (w == NULL)
		goto out;

	deadline = t_now_ms() + 30000;
	while (loop.done < N_CMDS && t_now_ms() < deadline) {
		while (submitted < N_CMDS && submitted - loop.done < DEPTH) {
			doca_error_t st = t_loop_submit(w, (uint64_t)submitted);

			if (st == DOCA_ERROR_AGAIN) {
				again++;
				break;
			}
			if (st != DOCA_SUCCESS) {
				t_fail("submit %ld: expected SUCCESS, got %s", submitted,
				       doca_error_get_name(st));
				goto stop;
			}
			submitted++;
		}
		if (submitted - loop.done > max_depth)
			max_depth = submitted - loop.done;
		if (doca_ctx_get_num_inflight_tasks(doca_urom_worker_as_ctx(w), &inflight) ==
			    DOCA_SUCCESS &&
		    inflight > DEPTH)
			t_fail("%zu tasks in flight, expected at most %d", inflight, DEPTH);
		t_pe_step(s.pe, 2);
	}
	T_EQ_INT(loop.done, N_CMDS);
	T_EQ_INT(loop.errors, 0);
	T_EQ_INT(max_depth, DEPTH);
	T_EQ_INT(again, 0);
	for (i = 0; i < N_CMDS; i++) {
		if (loop.count[i] != 1)
			t_fail("command %ld completed %d times, expected once", i, loop.count[i]);
		else if (loop.status[i] != DOCA_SUCCESS)
			t_fail("command %ld: expected SUCCESS, got %s", i,
			       doca_error_get_name(loop.status[i]));
		else if (loop.got[i] != t_loop_value((uint64_t)i))
			t_fail("command %ld: expected value 0x%" PRIx64 ", got 0x%" PRIx64, i,
			       t_loop_value((uint64_t)i), loop.got[i]);
	}
	/* Reuse (the library keeps released tasks): each allocation looks new. */
	for (i = 0; i < 3; i++) {
		struct doca_urom_worker_cmd_task *t = NULL;
		struct doca_buf *pb, *rb;
		void *data = NULL, *head = NULL;
		size_t len = 0, cap = 0;
		uint8_t *ud;
		size_t k;

		T_OK(doca_urom_worker_cmd_task_allocate_init(w, s.graph_id, &t));
		if (t == NULL)
			break;
		pb = doca_urom_worker_cmd_task_get_payload(t);
		rb = doca_urom_worker_cmd_task_get_response(t);
		T_OK(doca_buf_get_head(pb, &head));
		T_OK(doca_buf_get_len(pb, &cap));
		T_OK(doca_buf_get_data(pb, &data));
		T_OK(doca_buf_get_data_len(pb, &len));
		T_TRUE(data == head && len == cap && cap > 16);
		T_OK(doca_buf_get_data_len(rb, &len));
		T_EQ_INT(len, 0);
		ud = doca_urom_worker_cmd_task_get_user_data(t);
		for (k = 0; k < 32; k++)
			if (ud[k] != 0)
				t_fail("allocation %ld: user data byte %zu is %u, expected 0", i, k,
				       ud[k]);
		/* Leave it dirty for the next round. */
		memset(ud, 0xa5, 32);
		T_OK(doca_buf_set_data(pb, (uint8_t *)head + 8, 8));
		T_OK(doca_urom_worker_cmd_task_release(t));
	}
stop:
	t_worker_close(&s, s.pe, w);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
out:
	t_svc_close(&s);
	t_loop_fini(&loop);
	t_uromd_stop(&d);
	T_DONE();
}
