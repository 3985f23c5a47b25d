/*
 * Integration: worker contexts against a real daemon. Spawn and teardown (a worker process
 * appears and goes away), DOCA_UROM_WORKER_ID_ANY versus a fixed id (a second connection to the
 * same id attaches to the same process, gets its own channel and both work), the gid query task,
 * env rules (spaces refused, the env reaches the worker, env on a running id refused), the
 * wrong-state calls of worker contexts and tasks, and the worker's counters and UCX facts in
 * `softdpu service status` (--json and text): a known number of loopbacks and one malformed
 * graph command show up in them within a bounded wait, and ucx.version is this build's UCX.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include <json-c/json.h>
#include <ucp/api/ucp.h>

#include "doca_buf.h"
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

/* Run `softdpu service status [--json]` against d; its stdout into out. The exit status. */
static int cli_status(int json, char *out, size_t size)
{
	const char *cli = getenv("SDP_TEST_CLI");
	char cmd[4 * PATH_MAX];
	size_t n;
	FILE *p;

	out[0] = '\0';
	if (cli == NULL) {
		t_fail("SDP_TEST_CLI is not set");
		return -1;
	}
	snprintf(cmd, sizeof(cmd),
		 "timeout 30 '%s' service status %s --run-dir '%s' --secret-file '%s' --addr %s",
		 cli, json ? "--json" : "", d.run_dir, d.secret_file, d.addr);
	p = popen(cmd, "r");
	if (p == NULL) {
		t_fail("popen %s: %s", cli, strerror(errno));
		return -1;
	}
	n = fread(out, 1, size - 1, p);
	out[n] = '\0';
	return pclose(p);
}

/* What the status says about worker id. */
struct st_worker {
	int found, have_stats;
	uint64_t cmds, cmd_bytes, cmds_refused, notifs, notif_bytes, notifs_error, notifs_dropped;
	uint64_t hosts_connected, hosts_total, uptime_ms, stats_age_ms;
	char version[80], tls[256], net_devices[256];
	size_t num_resources;
};

static uint64_t st_u64(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (o == NULL || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int)) {
		t_fail("status: worker key \"%s\" missing or not a number", key);
		return 0;
	}
	return json_object_get_uint64(v);
}

static void st_text(struct json_object *o, const char *key, char *dst, size_t size)
{
	struct json_object *v;

	dst[0] = '\0';
	if (o == NULL || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string)) {
		t_fail("status: ucx key \"%s\" missing or not a string", key);
		return;
	}
	snprintf(dst, size, "%s", json_object_get_string(v));
}

/* Query `softdpu service status --json` and pick worker id out of it; 0 = a document came. */
static int status_of(uint64_t id, struct st_worker *out)
{
	static char json[1 << 16];
	struct json_object *root, *workers, *running, *ucx, *c, *age, *res;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = cli_status(1, json, sizeof(json));
	root = json_tokener_parse(json);
	if (rc != 0 || root == NULL) {
		t_fail("softdpu service status --json: exit %d, output:\n%s", rc, json);
		json_object_put(root);
		return -1;
	}
	if (!json_object_object_get_ex(root, "running", &running) ||
	    !json_object_get_boolean(running) ||
	    !json_object_object_get_ex(root, "workers", &workers) ||
	    !json_object_is_type(workers, json_type_array)) {
		t_fail("status --json: no \"running\": true or no \"workers\": %s", json);
		json_object_put(root);
		return -1;
	}
	for (size_t i = 0; i < json_object_array_length(workers); i++) {
		struct json_object *w = json_object_array_get_idx(workers, i), *v;

		if (!json_object_object_get_ex(w, "id", &v) || json_object_get_uint64(v) != id)
			continue;
		out->found = 1;
		/* The three keys are always there: null until the first SW_STATS. */
		if (!json_object_object_get_ex(w, "ucx", &ucx) ||
		    !json_object_object_get_ex(w, "counters", &c) ||
		    !json_object_object_get_ex(w, "stats_age_ms", &age)) {
			t_fail("status: worker %" PRIu64 " lacks ucx, counters or stats_age_ms",
			       id);
			break;
		}
		if (c == NULL || ucx == NULL || age == NULL) {
			if (c != NULL || ucx != NULL || age != NULL)
				t_fail("status: ucx, counters and stats_age_ms not all null");
			break;
		}
		out->have_stats = 1;
		out->cmds = st_u64(c, "cmds");
		out->cmd_bytes = st_u64(c, "cmd_bytes");
		out->cmds_refused = st_u64(c, "cmds_refused");
		out->notifs = st_u64(c, "notifs");
		out->notif_bytes = st_u64(c, "notif_bytes");
		out->notifs_error = st_u64(c, "notifs_error");
		out->notifs_dropped = st_u64(c, "notifs_dropped");
		out->hosts_connected = st_u64(c, "hosts_connected");
		out->hosts_total = st_u64(c, "hosts_total");
		out->uptime_ms = st_u64(c, "uptime_ms");
		(void)st_u64(c, "connects_refused");
		(void)st_u64(c, "domains_committed");
		out->stats_age_ms = json_object_get_uint64(age);
		st_text(ucx, "version", out->version, sizeof(out->version));
		st_text(ucx, "tls", out->tls, sizeof(out->tls));
		st_text(ucx, "net_devices", out->net_devices, sizeof(out->net_devices));
		if (json_object_object_get_ex(ucx, "resources", &res) &&
		    json_object_is_type(res, json_type_array))
			out->num_resources = json_object_array_length(res);
		else
			t_fail("status: ucx.resources missing or not an array");
		break;
	}
	json_object_put(root);
	return 0;
}

/* Poll the status (bounded) until worker id reports at least cmds commands and notifs. */
static int wait_counts(uint64_t id, uint64_t cmds, uint64_t notifs, struct st_worker *out)
{
	int64_t deadline = t_now_ms() + T_WAIT_MS;

	do {
		if (status_of(id, out) != 0)
			return -1;
		if (out->have_stats && out->cmds >= cmds && out->notifs >= notifs)
			return 0;
		t_sleep_ms(50); /* poll interval; the worker pushes every 500 ms at most */
	} while (t_now_ms() < deadline);
	t_fail("status: worker %" PRIu64 " did not reach %" PRIu64 " commands and %" PRIu64
	       " notifications within %d ms (found %d, stats %d, cmds %" PRIu64 ", notifs %" PRIu64
	       ")",
	       id, cmds, notifs, T_WAIT_MS, out->found, out->have_stats, out->cmds, out->notifs);
	return -1;
}

static doca_error_t bad_status;
static int bad_done;

static void bad_cb(struct doca_urom_worker_cmd_task *task, union doca_data task_user_data,
		   union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	bad_status = doca_task_get_status(doca_urom_worker_cmd_task_as_task(task));
	bad_done = 1;
	(void)doca_urom_worker_cmd_task_release(task);
}

/* A graph command of 8 bytes (the plugin wants 16): the plugin answers INVALID_VALUE. */
static void send_bad_graph_cmd(struct doca_urom_worker *w)
{
	struct doca_urom_worker_cmd_task *task = NULL;
	struct doca_buf *pb;
	void *data = NULL;
	long done = 0;
	int64_t deadline;

	bad_done = 0;
	T_OK(doca_urom_worker_cmd_task_allocate_init(w, s.graph_id, &task));
	if (task == NULL)
		return;
	pb = doca_urom_worker_cmd_task_get_payload(task);
	T_OK(doca_buf_get_data(pb, &data));
	memset(data, 0, 8);
	T_OK(doca_buf_set_data(pb, data, 8));
	doca_urom_worker_cmd_task_set_cb(task, bad_cb);
	T_OK(doca_task_submit(doca_urom_worker_cmd_task_as_task(task)));
	deadline = t_now_ms() + T_WAIT_MS;
	while (!bad_done && t_now_ms() < deadline)
		t_pe_step(s.pe, 5);
	done = bad_done;
	T_EQ_INT(done, 1);
	T_STATUS(bad_status, DOCA_ERROR_INVALID_VALUE);
}

static void test_status_counters(void)
{
	enum {
		N = 25
	};
	struct t_worker_cfg cfg = graph_cfg(DOCA_UROM_WORKER_ID_ANY);
	static char text[1 << 16];
	struct doca_urom_worker *w = NULL;
	struct st_worker a, b, c;
	const char *tls = getenv("UCX_TLS"), *nd = getenv("UCX_NET_DEVICES");
	char want[128];
	uint64_t id = 0, i;
	int64_t deadline;

	T_OK(t_worker_start(&s, s.pe, &cfg, &w));
	if (w == NULL)
		return;
	T_OK(doca_urom_worker_get_id(w, &id));

	/* The first snapshot comes with SW_READY: UCX facts and one host, before any command. */
	deadline = t_now_ms() + T_WAIT_MS;
	do {
		if (status_of(id, &a) != 0)
			break;
		if (a.have_stats && a.hosts_connected == 1)
			break;
		t_sleep_ms(50);
	} while (t_now_ms() < deadline);
	T_TRUE(a.found);
	T_TRUE(a.have_stats);
	T_EQ_STR(a.version, ucp_get_version_string());
	T_EQ_STR(a.tls, tls != NULL && tls[0] != '\0' ? tls : "default");
	/* Unset, the service gives workers of its loopback listener UCX_NET_DEVICES=lo. */
	T_EQ_STR(a.net_devices, nd != NULL && nd[0] != '\0' ? nd : "lo");
	T_TRUE(a.num_resources > 0);
	T_EQ_INT(a.hosts_connected, 1);
	T_EQ_INT(a.hosts_total, 1);
	T_EQ_INT(a.cmds_refused, 0);
	T_EQ_INT(a.notifs_error, 0);
	T_EQ_INT(a.notifs_dropped, 0);
	T_TRUE(a.uptime_ms < 60000 && a.stats_age_ms < 60000);

	/* N loopbacks: N commands of 40 bytes (24 of header, 16 of graph command) and N answers. */
	for (i = 0; i < N; i++)
		T_OK(t_loop_one(&loop, w, s.pe, NULL, 100 + i));
	if (wait_counts(id, a.cmds + N, a.notifs + N, &b) == 0) {
		T_EQ_INT(b.cmds, a.cmds + N);
		T_EQ_INT(b.notifs, a.notifs + N);
		T_EQ_INT(b.cmd_bytes - a.cmd_bytes, N * 40);
		T_TRUE(b.notif_bytes - a.notif_bytes >= N * 32);
		T_EQ_INT(b.cmds_refused, 0);
		T_EQ_INT(b.notifs_error, 0);
		T_EQ_INT(b.notifs_dropped, 0);
		T_EQ_INT(b.hosts_connected, 1);
		T_TRUE(b.uptime_ms >= a.uptime_ms);
	}

	/* A command the plugin takes and answers with an error: counted, not refused. */
	send_bad_graph_cmd(w);
	if (wait_counts(id, b.cmds + 1, b.notifs + 1, &c) == 0) {
		T_EQ_INT(c.cmds, b.cmds + 1);
		T_EQ_INT(c.cmd_bytes - b.cmd_bytes, 32);
		T_EQ_INT(c.notifs_error, 1);
		T_EQ_INT(c.cmds_refused, 0);
	}

	/* The text summary shows the same numbers, one line each for UCX and the counters. */
	T_EQ_INT(cli_status(0, text, sizeof(text)), 0);
	snprintf(want, sizeof(want), "UCX %s  UCX_TLS ", ucp_get_version_string());
	if (strstr(text, want) == NULL)
		t_fail("status text lacks \"%s\":\n%s", want, text);
	snprintf(want, sizeof(want), "cmds %" PRIu64 " (0 refused)  notifs %" PRIu64 " (1 errors",
		 c.cmds, c.notifs);
	if (strstr(text, want) == NULL)
		t_fail("status text lacks \"%s\":\n%s", want, text);

	t_worker_close(&s, s.pe, w);
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
		test_status_counters();
	}
	t_svc_close(&s);
	t_loop_fini(&loop);
	t_uromd_stop(&d);
	T_DONE();
}
