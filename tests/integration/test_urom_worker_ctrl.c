/*
 * Integration: the service's control link to its workers, against a real daemon whose worker
 * binary is tests/integration/fake_worker.c (SOFTDPU_UROM_WORKER_BIN), driven by a raw host
 * (t_urom_raw.h).
 *  - A worker that floods its control socket with junk is a broken worker: the service logs it
 *    once, kills it, refuses the SPAWN in progress (IO_FAILED) and keeps answering at once
 *    (it used to log every message and stay in its read loop for as long as the flood went on).
 *  - A worker that never reads its control socket: once the socket is full, the next
 *    SW_ADD_HOST cannot be sent; the attach in progress is refused with IO_FAILED, logged once,
 *    and the worker is killed, so its other hosts get WORKER_EXIT (the message used to be
 *    dropped with a warning, the attach answered as a success).
 *  - SW_STATS: a valid one is kept and shown in the status (the worker's own numbers, its UCX
 *    facts, the snapshot's age); one with contradicting counts, one before SW_READY and a flood
 *    of them (more than UROMD_STATS_PER_S_MAX a second) each make a broken worker, logged once.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <json-c/json.h>

/* GCC 12 misreads the 32-byte nonce and MAC arguments of t_raw_handshake in this file. */
#pragma GCC diagnostic ignored "-Wstringop-overread"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include "t_urom_raw.h"
#include "t_uromd.h"

static struct t_uromd d;
static struct t_raw r;
static uint64_t plugin_id;
static uint8_t secret[SDP_UROM_SECRET_LEN];

static int log_count(const char *needle)
{
	return t_uromd_log_count(&d, needle);
}

/* The id of the service's first plugin (worker_graph), from its status; 0 if none. */
static uint64_t first_plugin_id(void)
{
	static char json[65536];
	struct json_object *root, *plugins, *id;
	uint64_t v = 0;

	if (t_raw_status(d.port, d.secret_file, json, sizeof(json)) != DOCA_SUCCESS)
		return 0;
	root = json_tokener_parse(json);
	if (root != NULL && json_object_object_get_ex(root, "plugins", &plugins) &&
	    json_object_array_length(plugins) > 0 &&
	    json_object_object_get_ex(json_object_array_get_idx(plugins, 0), "id", &id))
		v = (uint64_t)json_object_get_int64(id);
	json_object_put(root);
	return v;
}

/* SPAWN (env: NULL or one NAME=value) and wait for its reply, skipping other messages. */
static doca_error_t spawn(uint64_t id, const char *env, struct sdp_urom_msg *reply)
{
	struct sdp_urom_msg msg;
	uint64_t req;
	doca_error_t st;

	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_SPAWN;
	msg.u.spawn.worker_id = id;
	msg.u.spawn.plugins = plugin_id;
	if (env != NULL) {
		msg.u.spawn.num_env = 1;
		msg.u.spawn.env[0].data = (const uint8_t *)env;
		msg.u.spawn.env[0].len = (uint32_t)strlen(env);
	}
	st = t_raw_send(&r, &msg, 0);
	if (st != DOCA_SUCCESS)
		return st;
	req = msg.hdr.req_id;
	do {
		st = t_raw_recv(&r, reply, 15000);
		if (st != DOCA_SUCCESS)
			return st;
	} while (reply->hdr.type != SDP_UROM_MSG_SPAWN_REPLY || reply->hdr.req_id != req);
	return (doca_error_t)reply->u.spawn_reply.status;
}

static void test_flood(void)
{
	static char json[65536];
	struct sdp_urom_msg reply;
	int64_t t0 = t_now_ms();

	T_STATUS(spawn(UINT64_MAX /* DOCA_UROM_WORKER_ID_ANY */, "SDP_FAKE_WORKER=flood", &reply),
		 DOCA_ERROR_IO_FAILED);
	/* Killed at the first junk message, not at the ready deadline (10 s). */
	T_TRUE(t_now_ms() - t0 < 5000);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
	T_EQ_INT(log_count("bad control message"), 1);
	t0 = t_now_ms();
	T_OK(t_raw_status(d.port, d.secret_file, json, sizeof(json)));
	T_TRUE(t_now_ms() - t0 < 2000);
	T_EQ_INT(t_status_num_workers(json), 0);
}

static void test_deaf(void)
{
	struct sdp_urom_msg reply;
	doca_error_t st = DOCA_SUCCESS;
	int attaches = 0, got_exit = 0;
	int64_t deadline;

	T_OK(spawn(7, "SDP_FAKE_WORKER=deaf", &reply));
	/* Each attach queues an SW_ADD_HOST the worker never reads: the socket fills up. */
	while (attaches < 5000 && (st = spawn(7, NULL, &reply)) == DOCA_SUCCESS)
		attaches++;
	printf("attach %d refused: %s\n", attaches, doca_error_get_name(st));
	T_STATUS(st, DOCA_ERROR_IO_FAILED);
	if (st == DOCA_ERROR_IO_FAILED)
		T_TRUE(reply.u.spawn_reply.reason.len > 0 &&
		       memmem(reply.u.spawn_reply.reason.data, reply.u.spawn_reply.reason.len,
			      "control link", 12) != NULL);
	T_EQ_INT(log_count("failed to send SW_ADD_HOST"), 1);
	/* The worker is killed: its hosts (the earlier attaches) hear of it. */
	deadline = t_now_ms() + 10000;
	while (!got_exit && t_now_ms() < deadline) {
		if (t_raw_recv(&r, &reply, 1000) != DOCA_SUCCESS)
			continue;
		got_exit = reply.hdr.type == SDP_UROM_MSG_WORKER_EXIT &&
			   reply.u.worker_exit.worker_id == 7;
	}
	T_TRUE(got_exit);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
}

/*
 * A host that leaves before its worker is ready: the service tells the worker SW_EXIT, the
 * worker's one SW_READY arrives after that and is no fault (it was killed as "broken" once).
 */
static void test_ready_while_exiting(void)
{
	int broken = log_count("broken worker");
	struct sdp_urom_msg msg;

	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_SPAWN;
	msg.u.spawn.worker_id = 9;
	msg.u.spawn.plugins = plugin_id;
	msg.u.spawn.num_env = 1;
	msg.u.spawn.env[0].data = (const uint8_t *)"SDP_FAKE_WORKER=late";
	msg.u.spawn.env[0].len = (uint32_t)strlen("SDP_FAKE_WORKER=late");
	T_OK(t_raw_send(&r, &msg, 0));
	T_EQ_INT(t_uromd_wait_workers(&d, 1, 5000), 1);
	t_raw_close(&r); /* the host leaves: SW_EXIT to the starting worker */
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 10000), 0);
	T_EQ_INT(log_count("SW_READY again"), 0);
	T_EQ_INT(log_count("broken worker"), broken);
}

/* Wait (bounded) for WORKER_EXIT of id on the raw host; 1 when it came. */
static int wait_worker_exit(uint64_t id)
{
	int64_t deadline = t_now_ms() + 10000;
	struct sdp_urom_msg reply;

	while (t_now_ms() < deadline) {
		if (t_raw_recv(&r, &reply, 1000) != DOCA_SUCCESS)
			continue;
		if (reply.hdr.type == SDP_UROM_MSG_WORKER_EXIT &&
		    reply.u.worker_exit.worker_id == id)
			return 1;
	}
	return 0;
}

static uint64_t json_u64(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (o == NULL || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int)) {
		t_fail("status: key \"%s\" missing or not a number", key);
		return UINT64_MAX;
	}
	return json_object_get_uint64(v);
}

static const char *json_text(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (o == NULL || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return "(missing)";
	return json_object_get_string(v);
}

/* A worker whose one SW_STATS carries known numbers: the status shows exactly them. */
static void test_stats(void)
{
	static char json[65536];
	int broken = log_count("broken worker"), found = 0;
	struct json_object *root = NULL, *workers, *w = NULL, *c = NULL, *u = NULL, *res, *age;
	struct sdp_urom_msg reply, msg;
	int64_t deadline;
	uint64_t dest = 0;

	T_OK(spawn(11, "SDP_FAKE_WORKER=stats", &reply));
	dest = reply.u.spawn_reply.dest_id;
	deadline = t_now_ms() + 5000;
	while (!found && t_now_ms() < deadline) {
		json_object_put(root);
		root = NULL;
		if (t_raw_status(d.port, d.secret_file, json, sizeof(json)) != DOCA_SUCCESS)
			break;
		root = json_tokener_parse(json);
		if (root == NULL || !json_object_object_get_ex(root, "workers", &workers))
			break;
		for (size_t i = 0; i < json_object_array_length(workers); i++) {
			w = json_object_array_get_idx(workers, i);
			if (json_u64(w, "id") == 11 &&
			    json_object_object_get_ex(w, "counters", &c) && c != NULL)
				found = 1;
			if (found)
				break;
		}
		if (!found)
			t_sleep_ms(20); /* poll interval */
	}
	T_TRUE(found);
	if (found) {
		T_EQ_INT(json_u64(c, "uptime_ms"), 1234);
		T_EQ_INT(json_u64(c, "cmds"), 7);
		T_EQ_INT(json_u64(c, "cmd_bytes"), 280);
		T_EQ_INT(json_u64(c, "cmds_refused"), 2);
		T_EQ_INT(json_u64(c, "notifs"), 5);
		T_EQ_INT(json_u64(c, "notif_bytes"), 160);
		T_EQ_INT(json_u64(c, "notifs_error"), 1);
		T_EQ_INT(json_u64(c, "notifs_dropped"), 0);
		T_EQ_INT(json_u64(c, "connects_refused"), 0);
		T_EQ_INT(json_u64(c, "domains_committed"), 0);
		T_EQ_INT(json_u64(c, "hosts_connected"), 1);
		T_EQ_INT(json_u64(c, "hosts_total"), 3);
		T_TRUE(json_object_object_get_ex(w, "stats_age_ms", &age) &&
		       json_object_is_type(age, json_type_int) &&
		       json_object_get_uint64(age) < 10000);
		T_TRUE(json_object_object_get_ex(w, "ucx", &u) && u != NULL);
		T_EQ_STR(json_text(u, "version"), "fake-ucx 9.9");
		T_EQ_STR(json_text(u, "tls"), "tcp");
		T_EQ_STR(json_text(u, "net_devices"), "lo");
		T_TRUE(json_object_object_get_ex(u, "resources", &res) &&
		       json_object_is_type(res, json_type_array) &&
		       json_object_array_length(res) == 2);
		if (json_object_array_length(res) == 2) {
			T_EQ_STR(json_object_get_string(json_object_array_get_idx(res, 0)),
				 "tcp/lo");
			T_EQ_STR(json_object_get_string(json_object_array_get_idx(res, 1)),
				 "self/memory0");
		}
		/* The keys that were there before stay, with their values. */
		T_EQ_INT(json_u64(w, "pid") > 0, 1);
		T_EQ_STR(json_text(w, "state"), "running");
	}
	json_object_put(root);
	T_EQ_INT(log_count("broken worker"), broken);
	/* Released: SW_EXIT, which the fake ignores, then SIGKILL at the exit deadline. */
	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_RELEASE;
	msg.u.release.worker_id = 11;
	msg.u.release.dest_id = dest;
	T_OK(t_raw_send(&r, &msg, 0));
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 10000), 0);
}

/* SW_STATS a worker must not send: each makes it a broken worker, killed and logged once. */
static void test_bad_stats(void)
{
	static char json[65536];
	struct sdp_urom_msg reply;
	int64_t t0;

	/* Counts that contradict each other (after a good SW_READY: the spawn succeeded). */
	T_OK(spawn(12, "SDP_FAKE_WORKER=badstats", &reply));
	T_TRUE(wait_worker_exit(12));
	T_EQ_INT(log_count("field sw_stats.hosts_connected"), 1);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);

	/* SW_STATS before SW_READY: the spawn in progress fails. */
	T_STATUS(spawn(13, "SDP_FAKE_WORKER=earlystats", &reply), DOCA_ERROR_IO_FAILED);
	T_EQ_INT(log_count("SW_STATS before SW_READY"), 1);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);

	/* A flood of valid ones. */
	T_OK(spawn(14, "SDP_FAKE_WORKER=statsflood", &reply));
	T_TRUE(wait_worker_exit(14));
	T_EQ_INT(log_count("SW_STATS in a second"), 1);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
	t0 = t_now_ms();
	T_OK(t_raw_status(d.port, d.secret_file, json, sizeof(json)));
	T_TRUE(t_now_ms() - t0 < 2000);
	T_EQ_INT(t_status_num_workers(json), 0);
}

/* Connect and authenticate the raw host. */
static doca_error_t host_connect(void)
{
	struct sdp_urom_msg msg;
	doca_error_t st;

	st = sdp_urom_secret_load(d.secret_file, secret);
	if (st == DOCA_SUCCESS)
		st = t_raw_connect(&r, d.port);
	if (st == DOCA_SUCCESS)
		st = t_raw_handshake(&r, secret, &msg);
	return st;
}

int main(void)
{
	const char *fake = getenv("SDP_TEST_FAKE_WORKER");

	if (fake == NULL)
		T_SKIP("SDP_TEST_FAKE_WORKER is not set");
	setenv("SOFTDPU_UROM_WORKER_BIN", fake, 1);
	if (t_uromd_start(&d, NULL) != 0) {
		t_fail("daemon start failed");
		T_DONE();
	}
	plugin_id = first_plugin_id();
	T_TRUE(plugin_id != 0);
	T_OK(host_connect());
	if (t_failures == 0) {
		test_flood();
		test_deaf();
		test_ready_while_exiting();
		/* test_ready_while_exiting closed the raw host: a new one. */
		T_OK(host_connect());
		test_stats();
		test_bad_stats();
	}
	t_raw_close(&r);
	T_TRUE(t_uromd_alive(&d));
	t_uromd_stop(&d);
	T_DONE();
}
