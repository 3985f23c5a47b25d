/*
 * Integration: the seed's first UROM rung, one put and one get into a peer's exported memory,
 * bytes checked. Two ranks (processes, each with its own service connection and worker, a
 * domain over softdpu's TCP OOB). Each rank exports a buffer into the domain
 * (sdp_urom_domain_export_buffer). Rank 0 makes its worker (the worker_rmabench plugin of
 * bench/urom_rma) put a pattern into rank 1's buffer and get another pattern, which rank 1
 * wrote, back; rank 1 checks every byte that landed and that the bytes around the target did not
 * change. Rank 1 exports its whole buffer but adds only [OFF, OFF + LEN) to the domain. Then the
 * refusals: a put that runs one byte past that segment (still inside the export: the worker's
 * domain table narrows the memh to the segment), a get one byte before it and an unknown member
 * are refused by the worker before anything moves (INVALID_VALUE / NOT_FOUND) and rank 1's bytes
 * stay as they were. Also run with UCX_TLS=tcp (argument "tcp"),
 * where rank 1's export thread carries the transfers.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <sys/wait.h>

#include "doca_buf.h"
#include "softdpu/urom_mem.h"
#include "softdpu/urom_oob.h"
#include "t_urom.h"
#include "t_uromd.h"

#include "../../bench/urom_rma/rmabench.h"

#define BUF 65536
#define OFF 4096 /* the put and get target [OFF, OFF + LEN) */
#define LEN 8192

static struct t_uromd d;
static const char secret[] = "test_urom_put_get shared secret";

struct res {
	int done;
	doca_error_t status;
	struct rmabench_notify n;
};

static void cb(struct doca_urom_worker_cmd_task *task, union doca_data a, union doca_data b)
{
	struct res *r = *(struct res **)doca_urom_worker_cmd_task_get_user_data(task);
	struct doca_buf *resp = doca_urom_worker_cmd_task_get_response(task);
	void *data = NULL;
	size_t len = 0;

	(void)a, (void)b;
	r->status = doca_task_get_status(doca_urom_worker_cmd_task_as_task(task));
	if (resp != NULL && doca_buf_get_data(resp, &data) == DOCA_SUCCESS &&
	    doca_buf_get_data_len(resp, &len) == DOCA_SUCCESS && len == sizeof(r->n))
		memcpy(&r->n, data, sizeof(r->n));
	else
		r->n.status = DOCA_ERROR_UNEXPECTED;
	r->done = 1;
	(void)doca_urom_worker_cmd_task_release(task);
}

/* One command; returns the run's status (the notification's). */
static doca_error_t cmd(struct doca_urom_worker *w, struct doca_pe *pe, uint64_t plugin,
			const struct rmabench_cmd *c, struct rmabench_notify *out)
{
	struct doca_urom_worker_cmd_task *task;
	struct res r = {0};
	struct doca_buf *payload;
	void *p = NULL;
	int64_t deadline;

	if (doca_urom_worker_cmd_task_allocate_init(w, plugin, &task) != DOCA_SUCCESS)
		return DOCA_ERROR_UNEXPECTED;
	payload = doca_urom_worker_cmd_task_get_payload(task);
	(void)doca_buf_get_data(payload, &p);
	memcpy(p, c, sizeof(*c));
	(void)doca_buf_set_data(payload, p, sizeof(*c));
	*(struct res **)doca_urom_worker_cmd_task_get_user_data(task) = &r;
	doca_urom_worker_cmd_task_set_cb(task, cb);
	if (doca_task_submit(doca_urom_worker_cmd_task_as_task(task)) != DOCA_SUCCESS) {
		(void)doca_urom_worker_cmd_task_release(task);
		return DOCA_ERROR_UNEXPECTED;
	}
	deadline = t_now_ms() + T_WAIT_MS;
	while (!r.done && t_now_ms() < deadline)
		t_pe_step(pe, 2);
	if (!r.done)
		return DOCA_ERROR_TIME_OUT;
	if (out != NULL)
		*out = r.n;
	return (doca_error_t)r.n.status;
}

static int expect(struct doca_urom_worker *w, struct doca_pe *pe, uint64_t plugin,
		  const struct rmabench_cmd *c, doca_error_t want, const char *what)
{
	doca_error_t st = cmd(w, pe, plugin, c, NULL);

	if (st == want)
		return 1;
	fprintf(stderr, "rank 0: %s: %s, expected %s\n", what, doca_error_get_name(st),
		doca_error_get_name(want));
	return 0;
}

static int find_plugin(struct t_svc *s, uint64_t *id)
{
	const struct doca_urom_service_plugin_info *pl;
	size_t n = 0;

	if (doca_urom_service_get_plugins_list(s->svc, &pl, &n) != DOCA_SUCCESS)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (strcmp(pl[i].plugin_name, "worker_rmabench") == 0) {
			*id = pl[i].id;
			return 0;
		}
	return -1;
}

#define CHECK(cond, code)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "rank %u: check failed: %s\n", rank, #cond);               \
			return (code);                                                             \
		}                                                                                  \
	} while (0)

static int rank_main(uint32_t rank, uint16_t port, struct sdp_urom_oob *oob)
{
	struct sdp_urom_oob_params p = {.rank = rank,
					.size = 2,
					.secret = secret,
					.secret_len = sizeof(secret),
					.timeout_ms = 20000};
	struct t_worker_cfg cfg = {.id = DOCA_UROM_WORKER_ID_ANY, .max_inflight = 16};
	uint8_t *buf = aligned_alloc(4096, BUF);
	struct doca_urom_domain_oob_coll coll;
	struct doca_urom_worker *w = NULL;
	struct doca_urom_domain *dom = NULL;
	struct sdp_urom_mem *mem = NULL;
	uint64_t id = rank, plugin = 0, vas[2], my_va;
	struct rmabench_notify n = {0};
	struct rmabench_cmd c;
	doca_error_t st;
	char root[64];
	struct t_svc s;
	int ok = 1;

	CHECK(buf != NULL, 2);
	snprintf(root, sizeof(root), "127.0.0.1:%u", port);
	p.root = root;
	if (oob == NULL)
		CHECK(sdp_urom_oob_create(&p, &oob) == DOCA_SUCCESS, 2);
	/* rank 1's buffer: its own pattern, the get's source at [OFF, OFF + LEN) */
	for (size_t i = 0; i < BUF; i++)
		buf[i] = (uint8_t)(0x5a ^ i ^ rank);
	for (size_t i = 0; i < LEN; i++)
		buf[OFF + i] = rmabench_byte(0x77, i);
	CHECK(t_svc_open(&s, 0) == DOCA_SUCCESS && find_plugin(&s, &plugin) == 0, 3);
	cfg.plugins = plugin;
	CHECK(t_worker_start(&s, s.pe, &cfg, &w) == DOCA_SUCCESS, 4);
	sdp_urom_oob_coll(oob, &coll);
	CHECK(doca_urom_domain_create(&dom) == DOCA_SUCCESS, 5);
	CHECK(doca_pe_connect_ctx(s.pe, doca_urom_domain_as_ctx(dom)) == DOCA_SUCCESS, 5);
	CHECK(doca_urom_domain_set_oob(dom, &coll) == DOCA_SUCCESS, 5);
	CHECK(doca_urom_domain_set_workers(dom, &id, &w, 1) == DOCA_SUCCESS, 5);
	CHECK(doca_urom_domain_set_buffers_count(dom, 1) == DOCA_SUCCESS, 5);
	if (rank == 0) {
		CHECK(sdp_urom_domain_export_buffer(dom, buf, BUF, &mem) == DOCA_SUCCESS, 5);
	} else {
		/*
		 * Rank 1 exports its whole buffer but gives the domain only [OFF, OFF + LEN): the
		 * worker must keep to that segment, not to the export behind it.
		 */
		const void *memh, *mkey;
		size_t memh_len, mkey_len;

		CHECK(sdp_urom_mem_export(buf, BUF, &mem) == DOCA_SUCCESS, 5);
		CHECK(sdp_urom_mem_get_memh(mem, &memh, &memh_len) == DOCA_SUCCESS, 5);
		CHECK(sdp_urom_mem_get_mkey(mem, &mkey, &mkey_len) == DOCA_SUCCESS, 5);
		CHECK(doca_urom_domain_add_buffer(dom, buf + OFF, LEN, (void *)memh, memh_len,
						  (void *)mkey, mkey_len) == DOCA_SUCCESS,
		      5);
	}
	CHECK(doca_ctx_start(doca_urom_domain_as_ctx(dom)) == DOCA_ERROR_IN_PROGRESS, 6);
	CHECK(t_ctx_wait_state(doca_urom_domain_as_ctx(dom), s.pe, NULL, DOCA_CTX_STATE_RUNNING,
			       T_WAIT_MS) == DOCA_CTX_STATE_RUNNING,
	      6);
	/* where is rank 1's buffer (its virtual address, as its domain record says) */
	my_va = (uint64_t)(uintptr_t)buf;
	CHECK(sdp_urom_oob_allgather(oob, &my_va, vas, sizeof(my_va)) == DOCA_SUCCESS, 7);

	if (rank == 0) {
		memset(&c, 0, sizeof(c));
		c.dest = 1;
		c.iters = 1;
		c.window = 1;
		/* one put of LEN bytes of pattern 0x33 into rank 1's buffer at OFF */
		c.op = RMABENCH_PUT;
		c.va = vas[1] + OFF;
		c.size = LEN;
		c.seed = 0x33;
		st = cmd(w, s.pe, plugin, &c, &n);
		if (st != DOCA_SUCCESS || n.done != 1) {
			fprintf(stderr, "rank 0: put: %s, %lu done\n", doca_error_get_name(st),
				(unsigned long)n.done);
			ok = 0;
		}
		/* barriers: rank 1 checks the put, then writes the get's source */
		ok &= sdp_urom_oob_allgather(oob, &ok, vas, sizeof(ok)) == DOCA_SUCCESS;
		ok &= sdp_urom_oob_allgather(oob, &ok, vas, sizeof(ok)) == DOCA_SUCCESS;
		/* one get back of what rank 1 wrote there since (pattern 0x77): checked in the worker */
		c.op = RMABENCH_GET;
		c.seed = 0x77;
		st = cmd(w, s.pe, plugin, &c, &n);
		if (st != DOCA_SUCCESS || n.done != 1 || n.bad != 0) {
			fprintf(stderr, "rank 0: get: %s, %lu done, %lu bad bytes\n",
				doca_error_get_name(st), (unsigned long)n.done,
				(unsigned long)n.bad);
			ok = 0;
		}
		/*
		 * refused: a put that runs one byte past rank 1's segment (inside its export), a get
		 * one byte before the segment, a get at an unknown member
		 */
		c.op = RMABENCH_PUT;
		c.va = vas[1] + OFF + 1;
		ok &= expect(w, s.pe, plugin, &c, DOCA_ERROR_INVALID_VALUE, "put past the segment");
		c.op = RMABENCH_GET;
		c.va = vas[1] + OFF - 1;
		ok &= expect(w, s.pe, plugin, &c, DOCA_ERROR_NOT_FOUND, "get before the segment");
		c.dest = 42;
		c.va = vas[1];
		ok &= expect(w, s.pe, plugin, &c, DOCA_ERROR_NOT_FOUND, "get at an unknown member");
	} else {
		int peer_ok[2];

		/* after rank 0's put: the pattern at [OFF, OFF + LEN), nothing else changed */
		CHECK(sdp_urom_oob_allgather(oob, &ok, peer_ok, sizeof(ok)) == DOCA_SUCCESS, 8);
		for (size_t i = 0; i < BUF; i++) {
			uint8_t want = i >= OFF && i < OFF + LEN ? rmabench_byte(0x33, i - OFF) :
								   (uint8_t)(0x5a ^ i ^ rank);

			if (buf[i] != want) {
				fprintf(stderr, "rank 1: byte %zu is %#x, expected %#x\n", i,
					buf[i], want);
				ok = 0;
				break;
			}
		}
		for (size_t i = 0; i < LEN; i++)
			buf[OFF + i] = rmabench_byte(0x77, i);
		/* written: rank 0 may get it now */
		CHECK(sdp_urom_oob_allgather(oob, &ok, peer_ok, sizeof(ok)) == DOCA_SUCCESS, 8);
	}
	/* final barrier, then rank 1 checks the refusals moved nothing */
	{
		int all[2];

		CHECK(sdp_urom_oob_allgather(oob, &ok, all, sizeof(ok)) == DOCA_SUCCESS, 9);
		ok &= all[0] && all[1];
	}
	if (rank == 1)
		for (size_t i = 0; i < BUF && ok; i++) {
			uint8_t want = i >= OFF && i < OFF + LEN ? rmabench_byte(0x77, i - OFF) :
								   (uint8_t)(0x5a ^ i ^ rank);

			if (buf[i] != want) {
				fprintf(stderr, "rank 1: after the refusals byte %zu changed\n", i);
				ok = 0;
			}
		}
	(void)doca_ctx_stop(doca_urom_domain_as_ctx(dom));
	(void)doca_urom_domain_destroy(dom);
	(void)sdp_urom_mem_unexport(mem);
	t_worker_close(&s, s.pe, w);
	t_svc_close(&s);
	(void)sdp_urom_oob_destroy(oob);
	free(buf);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct sdp_urom_oob_params p = {.root = "127.0.0.1:0",
					.rank = 0,
					.size = 2,
					.secret = secret,
					.secret_len = sizeof(secret),
					.timeout_ms = 20000};
	const char *dir = getenv("SDP_TEST_RMABENCH_DIR");
	struct sdp_urom_oob *root = NULL;
	pid_t pids[2];

	if (dir == NULL) {
		fprintf(stderr, "SDP_TEST_RMABENCH_DIR must be set\n");
		return T_EXIT_FAIL;
	}
	if (argc > 1 && strcmp(argv[1], "tcp") == 0)
		setenv("UCX_TLS", "tcp", 1);
	setenv("UROM_PLUGIN_PATH", dir, 1);
	if (t_uromd_start(&d, NULL) != 0)
		return T_EXIT_FAIL;
	T_OK(sdp_urom_oob_create(&p, &root));
	for (uint32_t r = 0; r < 2; r++) {
		pids[r] = fork();
		if (pids[r] == 0)
			_exit(rank_main(r, sdp_urom_oob_port(root), r == 0 ? root : NULL));
	}
	(void)sdp_urom_oob_destroy(root);
	for (int r = 0; r < 2; r++) {
		int st = -1;

		if (!t_wait_child(pids[r], 90000, &st)) {
			kill(pids[r], SIGKILL);
			t_fail("rank %d did not exit", r);
		} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			t_fail("rank %d exit status %d", r, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		}
	}
	t_uromd_stop(&d);
	T_DONE();
}
