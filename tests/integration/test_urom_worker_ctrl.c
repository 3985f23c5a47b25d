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
	}
	t_raw_close(&r);
	T_TRUE(t_uromd_alive(&d));
	t_uromd_stop(&d);
	T_DONE();
}
