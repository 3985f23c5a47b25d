/*
 * Integration: a worker_coll member's worker killed with a collective in flight on a team (two
 * ranks, processes, each with its own worker running worker_coll and a domain over softdpu's
 * TCP OOB). Both ranks create a team and run one allreduce; rank 0 then freezes its worker
 * (SIGSTOP), both start a second allreduce (rank 0's command waits at the frozen worker), and
 * rank 0 SIGKILLs its worker. Rank 0's request completes with IO_FAILED within 5 s. Rank 1 does
 * not hang: its request completes with an error (TIME_OUT, after UROM_COLL_WAIT_MS, the bound
 * of a member that never arrives) well within this test's wait, and both ranks stop.
 * argv[1]: the plugin directories for the private daemon's UROM_PLUGIN_PATH.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <sys/wait.h>

#include "softdpu/urom.h"
#include "softdpu/urom_mem.h"
#include "softdpu/urom_oob.h"
#include "t_urom.h"
#include "t_uromd.h"
#include "urom_coll.h"

#define SEG (1u << 20)
#define COUNT 1024
#define FAIL_BOUND_MS 5000
#define PEER_WAIT_MS (UROM_COLL_WAIT_MS + 20000)

struct rank {
	uint32_t rank;
	struct sdp_urom_oob *oob;
	struct t_svc s;
	struct doca_urom_worker *w;
	struct doca_urom_domain *dom;
	struct sdp_urom_mem *mem;
	uint8_t *seg;
};

static struct t_uromd d;
static const char secret[] = "test_urom_coll_kill shared secret";

#define RCHECK(r, cond)                                                                            \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "rank %u: check failed at line %d: %s\n", (r)->rank,       \
				__LINE__, #cond);                                                  \
			return -1;                                                                 \
		}                                                                                  \
	} while (0)

static int barrier(struct rank *r, int ok)
{
	int all[2] = {0, 0};

	if (sdp_urom_oob_allgather(r->oob, &ok, all, sizeof(ok)) != DOCA_SUCCESS)
		return 0;
	return all[0] && all[1];
}

static int rank_open(struct rank *r, uint32_t rank, uint16_t port, struct sdp_urom_oob *oob)
{
	struct sdp_urom_oob_params op = {.rank = rank,
					 .size = 2,
					 .secret = secret,
					 .secret_len = sizeof(secret),
					 .timeout_ms = 60000};
	struct t_worker_cfg cfg = {.id = DOCA_UROM_WORKER_ID_ANY};
	const struct doca_urom_service_plugin_info *pl;
	struct doca_urom_domain_oob_coll coll;
	uint64_t id = rank;
	size_t n = 0;
	char root[64];

	memset(r, 0, sizeof(*r));
	r->rank = rank;
	r->seg = aligned_alloc(4096, SEG);
	RCHECK(r, r->seg != NULL);
	memset(r->seg, 0, SEG);
	snprintf(root, sizeof(root), "127.0.0.1:%u", port);
	op.root = root;
	r->oob = oob;
	if (r->oob == NULL)
		RCHECK(r, sdp_urom_oob_create(&op, &r->oob) == DOCA_SUCCESS);
	RCHECK(r, t_svc_open(&r->s, 0) == DOCA_SUCCESS);
	RCHECK(r, doca_urom_service_get_plugins_list(r->s.svc, &pl, &n) == DOCA_SUCCESS);
	for (size_t i = 0; i < n; i++)
		if (strcmp(pl[i].plugin_name, "worker_coll") == 0) {
			RCHECK(r, urom_coll_init(pl[i].id, pl[i].version) == DOCA_SUCCESS);
			cfg.plugins = pl[i].id;
		}
	RCHECK(r, cfg.plugins != 0);
	RCHECK(r, t_worker_start(&r->s, r->s.pe, &cfg, &r->w) == DOCA_SUCCESS);
	sdp_urom_oob_coll(r->oob, &coll);
	RCHECK(r, doca_urom_domain_create(&r->dom) == DOCA_SUCCESS);
	RCHECK(r, doca_pe_connect_ctx(r->s.pe, doca_urom_domain_as_ctx(r->dom)) == DOCA_SUCCESS);
	RCHECK(r, doca_urom_domain_set_oob(r->dom, &coll) == DOCA_SUCCESS);
	RCHECK(r, doca_urom_domain_set_workers(r->dom, &id, &r->w, 1) == DOCA_SUCCESS);
	RCHECK(r, doca_urom_domain_set_buffers_count(r->dom, 1) == DOCA_SUCCESS);
	RCHECK(r, sdp_urom_domain_export_buffer(r->dom, r->seg, SEG, &r->mem) == DOCA_SUCCESS);
	RCHECK(r, doca_ctx_start(doca_urom_domain_as_ctx(r->dom)) == DOCA_ERROR_IN_PROGRESS);
	RCHECK(r, t_ctx_wait_state(doca_urom_domain_as_ctx(r->dom), r->s.pe, NULL,
				   DOCA_CTX_STATE_RUNNING, T_WAIT_MS) == DOCA_CTX_STATE_RUNNING);
	return 0;
}

static void rank_close(struct rank *r)
{
	if (r->dom != NULL) {
		(void)doca_ctx_stop(doca_urom_domain_as_ctx(r->dom));
		(void)doca_urom_domain_destroy(r->dom);
	}
	if (r->mem != NULL)
		(void)sdp_urom_mem_unexport(r->mem);
	if (r->w != NULL)
		t_worker_close(&r->s, r->s.pe, r->w);
	if (r->s.svc != NULL)
		t_svc_close(&r->s);
	if (r->oob != NULL)
		(void)sdp_urom_oob_destroy(r->oob);
	free(r->seg);
}

static int run(struct rank *r)
{
	static const uint64_t members[2] = {0, 1};
	int64_t *sbuf = (int64_t *)r->seg, *rbuf = (int64_t *)(r->seg + SEG / 2);
	struct urom_coll_team *team = NULL;
	struct urom_coll_req *req = NULL;
	doca_error_t st;
	uint32_t pid = 0;
	int64_t t0, took, end;
	char state = 0;
	pid_t ppid;

	for (int i = 0; i < COUNT; i++)
		sbuf[i] = (int64_t)(i + 1) * (r->rank + 1);
	RCHECK(r, urom_coll_team_create(r->w, r->s.pe, 0x51, r->rank, members, 2, &team) ==
			  DOCA_SUCCESS);
	RCHECK(r, urom_coll_team_wait_ready(team, T_WAIT_MS) == DOCA_SUCCESS);
	/* One allreduce works: the team is up on both workers. */
	RCHECK(r, urom_coll_allreduce(team, sbuf, rbuf, COUNT, UROM_COLL_INT64, UROM_COLL_SUM,
				      &req) == DOCA_SUCCESS);
	RCHECK(r, urom_coll_wait(req, T_WAIT_MS) == DOCA_SUCCESS);
	RCHECK(r, rbuf[COUNT - 1] == (int64_t)COUNT * 3);
	if (r->rank == 0) {
		RCHECK(r, sdp_urom_worker_get_pid(r->w, &pid) == DOCA_SUCCESS && pid > 0);
		RCHECK(r, kill((pid_t)pid, SIGSTOP) == 0);
		for (end = t_now_ms() + 5000; t_now_ms() < end;)
			if (t_proc_stat((pid_t)pid, &state, &ppid) != 0 || state == 'T')
				break;
		RCHECK(r, state == 'T');
	}
	RCHECK(r, barrier(r, 1));
	/* The second allreduce: rank 0's worker is frozen, its command waits there. */
	req = NULL;
	RCHECK(r, urom_coll_allreduce(team, sbuf, rbuf, COUNT, UROM_COLL_INT64, UROM_COLL_SUM,
				      &req) == DOCA_SUCCESS);
	RCHECK(r, barrier(r, 1));
	t0 = t_now_ms();
	if (r->rank == 0) {
		RCHECK(r, kill((pid_t)pid, SIGKILL) == 0);
		st = urom_coll_wait(req, FAIL_BOUND_MS);
		took = t_now_ms() - t0;
		fprintf(stderr, "note: rank 0 (worker killed): allreduce %s after %lld ms\n",
			doca_error_get_name(st), (long long)took);
		RCHECK(r, st == DOCA_ERROR_IO_FAILED);
	} else {
		st = urom_coll_wait(req, PEER_WAIT_MS);
		took = t_now_ms() - t0;
		fprintf(stderr, "note: rank 1 (peer's worker killed): allreduce %s after %lld ms\n",
			doca_error_get_name(st), (long long)took);
		RCHECK(r, st != DOCA_SUCCESS && st != DOCA_ERROR_IN_PROGRESS &&
				  st != DOCA_ERROR_AGAIN);
		RCHECK(r, took < PEER_WAIT_MS);
	}
	/* Both ranks meet again, then stop. */
	RCHECK(r, barrier(r, 1));
	(void)urom_coll_team_destroy(team, r->rank == 0 ? 1000 : T_WAIT_MS);
	return 0;
}

static int rank_main(uint32_t rank, uint16_t port, struct sdp_urom_oob *oob)
{
	struct rank r;
	int rc = rank_open(&r, rank, port, oob) == 0 ? run(&r) : -1;

	rank_close(&r);
	return rc;
}

int main(int argc, char **argv)
{
	struct sdp_urom_oob_params op = {.root = "127.0.0.1:0",
					 .rank = 0,
					 .size = 2,
					 .secret = secret,
					 .secret_len = sizeof(secret),
					 .timeout_ms = 60000};
	struct sdp_urom_oob *root = NULL;
	pid_t pids[2];

	if (argc < 2) {
		fprintf(stderr, "usage: %s PLUGIN_PATH\n", argv[0]);
		return T_EXIT_FAIL;
	}
	setenv("UROM_PLUGIN_PATH", argv[1], 1);
	if (t_uromd_start(&d, NULL) != 0)
		return T_EXIT_FAIL;
	T_OK(sdp_urom_oob_create(&op, &root));
	for (uint32_t k = 0; k < 2; k++) {
		pids[k] = fork();
		if (pids[k] == 0)
			_exit(rank_main(k, sdp_urom_oob_port(root), k == 0 ? root : NULL) == 0 ? 0 :
												 1);
	}
	(void)sdp_urom_oob_destroy(root);
	for (int k = 0; k < 2; k++) {
		int st = -1;

		if (!t_wait_child(pids[k], PEER_WAIT_MS + 30000, &st)) {
			kill(pids[k], SIGKILL);
			t_fail("rank %d did not exit", k);
		} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			t_fail("rank %d exit status %d", k, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		}
	}
	t_uromd_stop(&d);
	T_DONE();
}
