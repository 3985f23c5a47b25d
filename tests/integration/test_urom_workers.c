/*
 * Integration: worker contexts against a real daemon. Spawn and teardown (a worker process
 * appears and goes away), DOCA_UROM_WORKER_ID_ANY versus a fixed id (a second connection to the
 * same id attaches to the same process, gets its own channel and both work), the gid query task,
 * env rules (spaces refused, the env reaches the worker, env on a running id refused), and the
 * wrong-state calls of worker contexts and tasks.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "t_urom.h"
#include "t_uromd.h"

static struct t_uromd d;
static struct t_svc s;
static struct t_loop loop;

static struct t_worker_cfg graph_cfg(uint64_t id)
{
	struct t_worker_cfg c = {.id = id, .plugins = s.graph_id, .max_inflight = 16};

	return c;
}

static void test_spawn_teardown(void)
{
	struct t_worker_cfg cfg = graph_cfg(DOCA_UROM_WORKER_ID_ANY);
	struct doca_urom_worker *w = NULL;
	uint64_t id = 0;
	pid_t pids[4];

	T_EQ_INT(t_uromd_worker_pids(&d, NULL, 0), 0);
	T_OK(t_worker_start(&s, s.pe, &cfg, &w));
	T_EQ_INT(t_uromd_wait_workers(&d, 1, 5000), 1);
	T_EQ_INT(t_uromd_worker_pids(&d, pids, 4), 1);
	T_OK(doca_urom_worker_get_id(w, &id));
	T_TRUE(id != DOCA_UROM_WORKER_ID_ANY);
	T_OK(t_loop_one(&loop, w, s.pe, NULL, 0));
	t_worker_close(&s, s.pe, w);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
	T_TRUE(!t_pid_alive(pids[0]));

	/* A context restarts after a stop: a new spawn. */
	T_OK(t_worker_start(&s, s.pe, &cfg, &w));
	T_OK(t_loop_one(&loop, w, s.pe, NULL, 1));
	{
		doca_error_t r = doca_ctx_stop(doca_urom_worker_as_ctx(w));

		T_TRUE(r == DOCA_SUCCESS || r == DOCA_ERROR_IN_PROGRESS);
	}
	T_EQ_INT(t_ctx_wait_state(doca_urom_worker_as_ctx(w), s.pe, NULL, DOCA_CTX_STATE_IDLE,
				  T_WAIT_MS),
		 DOCA_CTX_STATE_IDLE);
	T_STATUS(doca_ctx_start(doca_urom_worker_as_ctx(w)), DOCA_ERROR_IN_PROGRESS);
	T_EQ_INT(t_ctx_wait_state(doca_urom_worker_as_ctx(w), s.pe, NULL, DOCA_CTX_STATE_RUNNING,
				  T_WAIT_MS),
		 DOCA_CTX_STATE_RUNNING);
	T_OK(t_loop_one(&loop, w, s.pe, NULL, 2));
	t_worker_close(&s, s.pe, w);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
}

static void test_id_any_and_reuse(void)
{
	struct t_worker_cfg any = graph_cfg(DOCA_UROM_WORKER_ID_ANY), fixed = graph_cfg(5);
	struct doca_urom_worker *a1 = NULL, *a2 = NULL, *f1 = NULL, *f2 = NULL;
	uint64_t id1 = 0, id2 = 0, idf1 = 0, idf2 = 0, i;
	struct doca_pe *pe2;
	pid_t pids[8];

	T_OK(t_worker_start(&s, s.pe, &any, &a1));
	T_OK(t_worker_start(&s, s.pe, &any, &a2));
	T_OK(doca_urom_worker_get_id(a1, &id1));
	T_OK(doca_urom_worker_get_id(a2, &id2));
	T_TRUE(id1 != id2);
	T_TRUE(id1 != DOCA_UROM_WORKER_ID_ANY && id2 != DOCA_UROM_WORKER_ID_ANY);
	T_EQ_INT(t_uromd_wait_workers(&d, 2, 5000), 2);

	/* Fixed id 5 twice: one process, two channels; the second lives on another PE. */
	T_OK(doca_pe_create(&pe2));
	T_OK(t_worker_start(&s, s.pe, &fixed, &f1));
	T_OK(t_worker_start(&s, pe2, &fixed, &f2));
	T_OK(doca_urom_worker_get_id(f1, &idf1));
	T_OK(doca_urom_worker_get_id(f2, &idf2));
	T_EQ_INT(idf1, 5);
	T_EQ_INT(idf2, 5);
	T_EQ_INT(t_uromd_wait_workers(&d, 3, 5000), 3);

	/*
	 * Interleave loopbacks on both connections: each value must come back to the context
	 * that sent it, which fails if the two shared a dest id.
	 */
	for (i = 10; i < 40; i += 2) {
		long want = loop.done + 2;

		T_OK(t_loop_submit(f1, i));
		T_OK(t_loop_submit(f2, i + 1));
		t_pe_wait_count(s.pe, pe2, &loop.done, want, T_WAIT_MS);
		T_EQ_INT(loop.count[i], 1);
		T_EQ_INT(loop.count[i + 1], 1);
		T_TRUE(loop.got[i] == t_loop_value(i));
		T_TRUE(loop.got[i + 1] == t_loop_value(i + 1));
	}
	T_OK(t_loop_one(&loop, a1, s.pe, NULL, 40));
	T_OK(t_loop_one(&loop, a2, s.pe, NULL, 41));

	/* Dropping one connection keeps the shared worker for the other. */
	t_worker_close(&s, s.pe, f1);
	T_EQ_INT(t_uromd_wait_workers(&d, 3, 300), 3);
	T_OK(t_loop_one(&loop, f2, pe2, s.pe, 42));
	t_worker_close(&s, pe2, f2);
	T_EQ_INT(t_uromd_wait_workers(&d, 2, 5000), 2);
	T_EQ_INT(t_uromd_worker_pids(&d, pids, 8), 2);
	t_worker_close(&s, s.pe, a1);
	t_worker_close(&s, s.pe, a2);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
	T_OK(doca_pe_destroy(pe2));
}

struct gid_result {
	int done;
	doca_error_t status;
	size_t count;
	uint64_t ids[16];
};

static void gid_cb(struct doca_urom_service_get_workers_by_gid_task *task,
		   union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct gid_result *r = task_user_data.ptr;
	const uint64_t *ids;
	size_t i;

	(void)ctx_user_data;
	r->status = doca_task_get_status(doca_urom_service_get_workers_by_gid_task_as_task(task));
	r->count = doca_urom_service_get_workers_by_gid_task_get_workers_count(task);
	ids = doca_urom_service_get_workers_by_gid_task_get_worker_ids(task);
	for (i = 0; i < r->count && i < 16 && ids != NULL; i++)
		r->ids[i] = ids[i];
	r->done++;
	if (doca_urom_service_get_workers_by_gid_task_release(task) != DOCA_SUCCESS)
		t_fail("gid task release failed");
}

/* Query gid; returns a bitmap of the ids (< 64) it reported, or ~0 on failure. */
static uint64_t gid_query(uint32_t gid, size_t *count_p)
{
	struct doca_urom_service_get_workers_by_gid_task *task = NULL;
	struct gid_result r = {0};
	union doca_data ud = {.ptr = &r};
	int64_t deadline = t_now_ms() + T_WAIT_MS;
	uint64_t bits = 0;
	size_t i;

	T_OK(doca_urom_service_get_workers_by_gid_task_allocate_init(s.svc, gid, gid_cb, &task));
	if (task == NULL)
		return ~0ull;
	doca_task_set_user_data(doca_urom_service_get_workers_by_gid_task_as_task(task), ud);
	if (doca_task_submit(doca_urom_service_get_workers_by_gid_task_as_task(task)) !=
	    DOCA_SUCCESS) {
		t_fail("gid task submit failed");
		doca_urom_service_get_workers_by_gid_task_release(task);
		return ~0ull;
	}
	while (!r.done && t_now_ms() < deadline)
		t_pe_step(s.pe, 2);
	if (!r.done) {
		t_fail("gid %u query did not complete within %d ms", gid, T_WAIT_MS);
		return ~0ull;
	}
	T_OK(r.status);
	for (i = 0; i < r.count && i < 16; i++)
		bits |= r.ids[i] < 64 ? 1ull << r.ids[i] : 1ull << 63;
	*count_p = r.count;
	return bits;
}

static void test_gid_query(void)
{
	struct doca_urom_worker *w[4] = {NULL};
	size_t count = 99;
	uint64_t i;

	for (i = 0; i < 4; i++) {
		struct t_worker_cfg c = graph_cfg(100 + i);

		c.has_gid = 1;
		c.gid = (uint32_t)(i % 2);
		T_OK(t_worker_start(&s, s.pe, &c, &w[i]));
	}
	/* Ids of 64 and more land in bit 63 of the bitmap: count them. */
	T_EQ_INT(gid_query(0, &count), 1ull << 63);
	T_EQ_INT(count, 2);
	T_EQ_INT(gid_query(1, &count), 1ull << 63);
	T_EQ_INT(count, 2);
	T_EQ_INT(gid_query(7, &count), 0);
	T_EQ_INT(count, 0);
	for (i = 0; i < 4; i++)
		t_worker_close(&s, s.pe, w[i]);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);

	/* Small ids: check exactly which ones each group reports. */
	for (i = 0; i < 4; i++) {
		struct t_worker_cfg c = graph_cfg(i);

		c.has_gid = 1;
		c.gid = (uint32_t)(i % 2);
		T_OK(t_worker_start(&s, s.pe, &c, &w[i]));
	}
	T_EQ_INT(gid_query(0, &count), (1ull << 0) | (1ull << 2));
	T_EQ_INT(gid_query(1, &count), (1ull << 1) | (1ull << 3));
	t_worker_close(&s, s.pe, w[3]);
	T_EQ_INT(gid_query(1, &count), 1ull << 1);
	for (i = 0; i < 3; i++)
		t_worker_close(&s, s.pe, w[i]);
	T_EQ_INT(gid_query(0, &count), 0);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
}

static void test_env(void)
{
	char var[64], *env_ok[2], *env_space[1], *env_noeq[1];
	char bad_space[] = "SDP_IT_VAR=has space";
	char bad_noeq[] = "SDP_IT_VAR";
	struct doca_urom_worker *w = NULL, *w2 = NULL, *w3 = NULL;
	struct t_worker_cfg c = graph_cfg(77), plain = graph_cfg(77);
	pid_t pid = 0;

	snprintf(var, sizeof(var), "SDP_IT_ENV_%d=value_%d", (int)getpid(), (int)getpid());
	env_ok[0] = var;
	env_ok[1] = (char *)"UCX_LOG_LEVEL=error";
	env_space[0] = bad_space;
	env_noeq[0] = bad_noeq;

	/* Host-side checks on an idle context. */
	T_OK(doca_urom_worker_create(&w));
	T_STATUS(doca_urom_worker_set_env(NULL, env_ok, 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_env(w, NULL, 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_env(w, env_space, 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_env(w, env_noeq, 1), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_urom_worker_set_env(w, env_ok, 2));
	T_OK(doca_urom_worker_destroy(w));
	w = NULL;

	/* The env reaches the worker process. */
	c.env = env_ok;
	c.env_count = 2;
	T_OK(t_worker_start(&s, s.pe, &c, &w));
	T_EQ_INT(t_uromd_worker_pids(&d, &pid, 1), 1);
	T_TRUE(pid > 0 && t_proc_file_has(pid, "environ", var));
	T_OK(t_loop_one(&loop, w, s.pe, NULL, 50));

	/* Env on an id that already runs: refused, back to IDLE with the cause, nothing new. */
	t_expect_refused(t_worker_start(&s, s.pe, &c, &w2), w2, DOCA_ERROR_BAD_STATE,
			 "env on a running id");
	T_EQ_INT(t_uromd_worker_pids(&d, NULL, 0), 1);
	t_worker_close(&s, s.pe, w2);
	/* Without env the same id attaches. */
	T_OK(t_worker_start(&s, s.pe, &plain, &w3));
	T_OK(t_loop_one(&loop, w3, s.pe, NULL, 51));
	T_OK(t_loop_one(&loop, w, s.pe, NULL, 52));
	t_worker_close(&s, s.pe, w3);
	t_worker_close(&s, s.pe, w);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
}

/* Calls in the wrong state, NULL arguments, destroy while in use. */
static void test_wrong_state(void)
{
	struct t_worker_cfg c = graph_cfg(DOCA_UROM_WORKER_ID_ANY);
	struct doca_urom_worker_cmd_task *task = NULL;
	struct doca_urom_worker *w = NULL, *idle = NULL;
	doca_cpu_set_t cpus;
	uint64_t id = 12345;
	char *env[1] = {(char *)"A=b"};

	T_STATUS(doca_urom_worker_create(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_urom_worker_create(&idle));
	T_STATUS(doca_urom_worker_set_service(idle, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_service(NULL, s.svc), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_max_inflight_tasks(idle, 3), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_set_max_inflight_tasks(idle, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_worker_get_id(idle, NULL), DOCA_ERROR_INVALID_VALUE);
	/* Tasks need a RUNNING context. */
	T_STATUS(doca_urom_worker_cmd_task_allocate_init(idle, s.graph_id, &task),
		 DOCA_ERROR_BAD_STATE);
	T_TRUE(task == NULL);
	T_OK(doca_urom_worker_destroy(idle));

	T_OK(t_worker_start(&s, s.pe, &c, &w));
	/* Configuration of a running worker is refused and changes nothing. */
	T_STATUS(doca_urom_worker_set_id(w, 9), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_urom_worker_set_gid(w, 9), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_urom_worker_set_plugins(w, s.graph_id), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_urom_worker_set_max_inflight_tasks(w, 4), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_urom_worker_set_env(w, env, 1), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_urom_worker_set_service(w, s.svc), DOCA_ERROR_BAD_STATE);
	memset(&cpus, 0, sizeof(cpus));
	DOCA_CPU_SET(0, &cpus);
	T_STATUS(doca_urom_worker_set_cpuset(w, cpus), DOCA_ERROR_BAD_STATE);
	T_OK(doca_urom_worker_get_id(w, &id));
	T_TRUE(id != 9 && id != DOCA_UROM_WORKER_ID_ANY);
	T_STATUS(doca_urom_worker_destroy(w), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_ctx_start(doca_urom_worker_as_ctx(w)), DOCA_ERROR_BAD_STATE);
	/* The service is in use while a worker runs on it: no stop, no destroy. */
	T_STATUS(doca_urom_service_destroy(s.svc), DOCA_ERROR_NOT_PERMITTED);
	T_STATUS(doca_ctx_stop(doca_urom_service_as_ctx(s.svc)), DOCA_ERROR_IN_USE);
	{
		enum doca_ctx_states st = DOCA_CTX_STATE_IDLE;

		T_OK(doca_ctx_get_state(doca_urom_service_as_ctx(s.svc), &st));
		T_EQ_INT(st, DOCA_CTX_STATE_RUNNING);
	}
	T_OK(t_loop_one(&loop, w, s.pe, NULL, 60));
	t_worker_close(&s, s.pe, w);

	/* An idle worker still bound to the service: destroying the service is IN_USE. */
	{
		struct t_svc s2;

		T_OK(t_svc_open(&s2, 0));
		T_OK(doca_urom_worker_create(&idle));
		T_OK(doca_urom_worker_set_service(idle, s2.svc));
		T_OK(doca_ctx_stop(doca_urom_service_as_ctx(s2.svc)));
		T_EQ_INT(t_ctx_wait_state(doca_urom_service_as_ctx(s2.svc), s2.pe, NULL,
					  DOCA_CTX_STATE_IDLE, T_WAIT_MS),
			 DOCA_CTX_STATE_IDLE);
		T_STATUS(doca_urom_service_destroy(s2.svc), DOCA_ERROR_IN_USE);
		T_OK(doca_urom_worker_destroy(idle));
		t_svc_close(&s2);
	}
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
}

int main(void)
{
	if (t_uromd_start(&d, NULL) != 0)
		return T_EXIT_FAIL;
	t_loop_init(&loop, 1024);
	if (t_svc_open(&s, 0) != DOCA_SUCCESS || t_svc_find_graph(&s) != DOCA_SUCCESS) {
		t_fail("service start or worker_graph lookup failed");
	} else {
		test_spawn_teardown();
		test_id_any_and_reuse();
		test_gid_query();
		test_env();
		test_wrong_state();
	}
	t_svc_close(&s);
	t_loop_fini(&loop);
	t_uromd_stop(&d);
	T_DONE();
}
