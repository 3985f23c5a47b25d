/*
 * Integration: the limits a service and a worker context enforce, against a daemon started with
 * --max-workers 2, -m 1024 and --cpuset 0. Max workers (daemon-wide and per connection), cpuset
 * rules (a subset is applied to the worker process, a non-subset is refused back to IDLE with
 * its cause), the effective message size (payload capacity = min(host, service) - 24), an
 * oversized payload (INVALID_VALUE), max in-flight (AGAIN) and an unknown plugin id
 * (NOT_SUPPORTED).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "doca_buf.h"
#include "t_urom.h"
#include "t_uromd.h"
#include "worker_graph.h"

static struct t_uromd d;
static struct t_svc s;
static struct t_loop loop;

static struct t_worker_cfg graph_cfg(uint64_t id, uint32_t inflight)
{
	struct t_worker_cfg c = {.id = id, .plugins = s.graph_id, .max_inflight = inflight};

	return c;
}

static void test_max_workers(void)
{
	struct t_worker_cfg c = graph_cfg(DOCA_UROM_WORKER_ID_ANY, 4);
	struct doca_urom_worker *w1 = NULL, *w2 = NULL, *w3 = NULL;
	struct t_svc s1;

	T_OK(t_worker_start(&s, s.pe, &c, &w1));
	T_OK(t_worker_start(&s, s.pe, &c, &w2));
	t_expect_refused(t_worker_start(&s, s.pe, &c, &w3), w3, DOCA_ERROR_FULL,
			 "third worker of --max-workers 2");
	T_EQ_INT(t_uromd_worker_pids(&d, NULL, 0), 2);
	/* The refused context can be destroyed; the other two still work. */
	T_OK(doca_urom_worker_destroy(w3));
	w3 = NULL;
	T_OK(t_loop_one(&loop, w1, s.pe, NULL, 0));
	T_OK(t_loop_one(&loop, w2, s.pe, NULL, 1));
	/* Attaching to a running id is not a new worker: allowed at the limit. */
	{
		struct doca_urom_worker *again = NULL;
		struct t_worker_cfg a = graph_cfg(0, 4);
		uint64_t id = 0;

		T_OK(doca_urom_worker_get_id(w1, &id));
		a.id = id;
		T_OK(t_worker_start(&s, s.pe, &a, &again));
		T_OK(t_loop_one(&loop, again, s.pe, NULL, 2));
		t_worker_close(&s, s.pe, again);
	}
	t_worker_close(&s, s.pe, w2);
	T_EQ_INT(t_uromd_wait_workers(&d, 1, 5000), 1);
	/* A slot is free again. */
	T_OK(t_worker_start(&s, s.pe, &c, &w3));
	t_worker_close(&s, s.pe, w3);
	t_worker_close(&s, s.pe, w1);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);

	/* Per connection: doca_urom_service_set_max_workers(1). */
	T_OK(t_svc_open(&s1, 1));
	T_OK(t_worker_start(&s1, s1.pe, &c, &w1));
	t_expect_refused(t_worker_start(&s1, s1.pe, &c, &w2), w2, DOCA_ERROR_FULL,
			 "second worker of a connection limited to 1");
	if (w2 != NULL)
		T_OK(doca_urom_worker_destroy(w2));
	/* Another connection is not limited by that. */
	T_OK(t_worker_start(&s, s.pe, &c, &w3));
	t_worker_close(&s, s.pe, w3);
	t_worker_close(&s1, s1.pe, w1);
	t_svc_close(&s1);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
}

/* Cpus_allowed_list of a process, e.g. "0" or "0-1". */
static int cpus_allowed(pid_t pid, char *out, size_t size)
{
	char path[64], buf[8192], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (t_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "Cpus_allowed_list:");
	if (p == NULL)
		return -1;
	p += strlen("Cpus_allowed_list:");
	while (*p == ' ' || *p == '\t')
		p++;
	snprintf(out, size, "%.*s", (int)strcspn(p, "\n"), p);
	return 0;
}

static void test_cpuset(void)
{
	struct doca_urom_worker *w = NULL, *bad = NULL;
	struct t_worker_cfg c = graph_cfg(DOCA_UROM_WORKER_ID_ANY, 4);
	doca_cpu_set_t svc_cpus, mine;
	char allowed[64] = "";
	pid_t pid = 0;
	int cpu;

	T_OK(doca_urom_service_get_cpuset(s.svc, &svc_cpus));
	T_TRUE(doca_cpu_is_set(0, &svc_cpus));
	for (cpu = 1; cpu < 64; cpu++)
		if (doca_cpu_is_set(cpu, &svc_cpus))
			t_fail("service cpuset: expected only CPU 0 (--cpuset 0), CPU %d is set",
			       cpu);

	/* A subset: applied to the worker process. */
	memset(&mine, 0, sizeof(mine));
	DOCA_CPU_SET(0, &mine);
	c.cpuset = &mine;
	T_OK(t_worker_start(&s, s.pe, &c, &w));
	T_EQ_INT(t_uromd_worker_pids(&d, &pid, 1), 1);
	T_EQ_INT(cpus_allowed(pid, allowed, sizeof(allowed)), 0);
	T_EQ_STR(allowed, "0");
	T_OK(t_loop_one(&loop, w, s.pe, NULL, 10));

	/* Not a subset: refused, IDLE, the cause readable, nothing spawned. */
	memset(&mine, 0, sizeof(mine));
	DOCA_CPU_SET(1, &mine);
	t_expect_refused(t_worker_start(&s, s.pe, &c, &bad), bad, DOCA_ERROR_INVALID_VALUE,
			 "cpuset {1} of a service on {0}");
	if (bad != NULL) {
		T_STATUS(sdp_ctx_get_last_error(doca_urom_worker_as_ctx(bad)),
			 DOCA_ERROR_INVALID_VALUE);
		T_EQ_INT(t_uromd_worker_pids(&d, NULL, 0), 1);
		/* Usable again: with a valid cpuset the same context starts. */
		memset(&mine, 0, sizeof(mine));
		DOCA_CPU_SET(0, &mine);
		T_OK(doca_urom_worker_set_cpuset(bad, mine));
		T_STATUS(doca_ctx_start(doca_urom_worker_as_ctx(bad)), DOCA_ERROR_IN_PROGRESS);
		T_EQ_INT(t_ctx_wait_state(doca_urom_worker_as_ctx(bad), s.pe, NULL,
					  DOCA_CTX_STATE_RUNNING, T_WAIT_MS),
			 DOCA_CTX_STATE_RUNNING);
		T_OK(t_loop_one(&loop, bad, s.pe, NULL, 11));
		t_worker_close(&s, s.pe, bad);
	}
	t_worker_close(&s, s.pe, w);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
}

/* Payload capacity, oversized payloads, in-flight limit, unknown plugin id. */
static void test_task_limits(void)
{
	struct t_worker_cfg c = graph_cfg(DOCA_UROM_WORKER_ID_ANY, 4);
	struct doca_urom_worker_cmd_task *task = NULL;
	struct doca_urom_worker *w = NULL;
	struct doca_buf *payload;
	void *data = NULL;
	size_t cap = 0;
	long want;
	uint64_t i;
	doca_error_t st;

	T_OK(t_worker_start(&s, s.pe, &c, &w));
	if (w == NULL)
		return;

	/* Effective message size: min(host 4096, service -m 1024) = 1024; payload = 1024 - 24. */
	T_OK(doca_urom_worker_cmd_task_allocate_init(w, s.graph_id, &task));
	if (task != NULL) {
		payload = doca_urom_worker_cmd_task_get_payload(task);
		T_TRUE(payload != NULL);
		T_TRUE(doca_urom_worker_cmd_task_get_user_data(task) != NULL);
		if (payload != NULL) {
			T_OK(doca_buf_get_data(payload, &data));
			T_OK(doca_buf_get_data_len(payload, &cap));
			T_EQ_INT(cap, 1024 - 24);
			/* One byte over: refused at set_data or at submit, never sent. */
			st = doca_buf_set_data(payload, data, cap + 1);
			if (st == DOCA_SUCCESS)
				T_STATUS(doca_task_submit(doca_urom_worker_cmd_task_as_task(task)),
					 DOCA_ERROR_INVALID_VALUE);
			else
				T_STATUS(st, DOCA_ERROR_INVALID_VALUE);
		}
		/* The refused task is still ours: release it. */
		T_OK(doca_urom_worker_cmd_task_release(task));
		task = NULL;
	}
	/* Still works after the refusal. */
	T_OK(t_loop_one(&loop, w, s.pe, NULL, 20));

	/* Unknown plugin id: NOT_SUPPORTED at allocation or at submission. */
	st = doca_urom_worker_cmd_task_allocate_init(w, 1ull << 62, &task);
	if (st == DOCA_SUCCESS) {
		struct urom_worker_graph_cmd cmd = {.type = UROM_WORKER_CMD_GRAPH_LOOPBACK};

		payload = doca_urom_worker_cmd_task_get_payload(task);
		T_OK(doca_buf_get_data(payload, &data));
		memcpy(data, &cmd, sizeof(cmd));
		T_OK(doca_buf_set_data(payload, data, sizeof(cmd)));
		T_STATUS(doca_task_submit(doca_urom_worker_cmd_task_as_task(task)),
			 DOCA_ERROR_NOT_SUPPORTED);
		T_OK(doca_urom_worker_cmd_task_release(task));
	} else {
		T_STATUS(st, DOCA_ERROR_NOT_SUPPORTED);
	}

	/* max_inflight_tasks 4: the fifth submission without progress is AGAIN. */
	want = loop.done;
	for (i = 100; i < 104; i++) {
		T_OK(t_loop_submit(w, i));
		want++;
	}
	T_STATUS(t_loop_submit(w, 104), DOCA_ERROR_AGAIN);
	T_EQ_INT(t_pe_wait_count(s.pe, NULL, &loop.done, want, T_WAIT_MS), want);
	for (i = 100; i < 104; i++) {
		T_EQ_INT(loop.count[i], 1);
		T_TRUE(loop.got[i] == t_loop_value(i));
	}
	T_EQ_INT(loop.count[104], 0);
	/* Room again once they completed. */
	T_OK(t_loop_one(&loop, w, s.pe, NULL, 105));
	t_worker_close(&s, s.pe, w);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
}

/* NULL arguments of the task calls on a running worker (last: a crash here ends the test). */
static void test_task_null_args(void)
{
	struct t_worker_cfg c = graph_cfg(DOCA_UROM_WORKER_ID_ANY, 4);
	struct doca_urom_worker_cmd_task *task = NULL;
	struct doca_urom_worker *w = NULL;

	T_OK(t_worker_start(&s, s.pe, &c, &w));
	if (w == NULL)
		return;
	T_STATUS(doca_urom_worker_cmd_task_allocate_init(NULL, s.graph_id, &task),
		 DOCA_ERROR_INVALID_VALUE);
	T_TRUE(task == NULL);
	fflush(stderr);
	T_STATUS(doca_urom_worker_cmd_task_allocate_init(w, s.graph_id, NULL),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_cmd_task_allocate(w, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_cmd_task_release(NULL), DOCA_ERROR_INVALID_VALUE);
	T_TRUE(doca_urom_worker_cmd_task_get_payload(NULL) == NULL);
	T_TRUE(doca_urom_worker_cmd_task_as_task(NULL) == NULL);
	T_OK(t_loop_one(&loop, w, s.pe, NULL, 200));
	t_worker_close(&s, s.pe, w);
}

int main(void)
{
	const char *args[] = {"--max-workers", "2", "-m", "1024", "--cpuset", "0", NULL};

	if (t_uromd_start(&d, args) != 0)
		return T_EXIT_FAIL;
	t_loop_init(&loop, 256);
	if (t_svc_open(&s, 0) != DOCA_SUCCESS || t_svc_find_graph(&s) != DOCA_SUCCESS) {
		t_fail("service start or worker_graph lookup failed");
	} else {
		test_max_workers();
		test_cpuset();
		test_task_limits();
		test_task_null_args();
	}
	t_svc_close(&s);
	t_loop_fini(&loop);
	t_uromd_stop(&d);
	T_DONE();
}
