/*
 * Shared by test_urom_rma.c and test_urom_ladder.c (#included, not a test of its own): two
 * ranks (forked processes), each with its own service connection, a worker running worker_rma
 * and a started domain over softdpu's TCP OOB into which each rank exported one buffer
 * (sdp_urom_domain_export_buffer). argv[1]: the plugin directories for the private daemon's
 * UROM_PLUGIN_PATH; argv[2] "tcp": run with UCX_TLS=tcp.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <sys/wait.h>

#include "doca_buf.h"
#include "softdpu/urom_mem.h"
#include "softdpu/urom_oob.h"
#include "t_urom.h"
#include "t_uromd.h"
#include "urom_rma.h"

struct pair {
	uint32_t rank;
	struct sdp_urom_oob *oob;
	struct t_svc s;
	struct doca_urom_worker *w;
	struct doca_urom_domain *dom;
	struct sdp_urom_mem *mem;
	uint8_t *buf;
	size_t len;
	uint64_t vas[2];   /* each rank's buffer address */
	uint64_t rma_id;   /* plugin id of worker_rma */
	uint64_t graph_id; /* plugin id of worker_graph, 0 when not offered */
};

static struct t_uromd pair_d;
static const char pair_secret[] = "test_urom_rma shared secret";

#define PCHECK(p, cond)                                                                            \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "rank %u: check failed at line %d: %s\n", (p)->rank,       \
				__LINE__, #cond);                                                  \
			return -1;                                                                 \
		}                                                                                  \
	} while (0)

/* Every rank's ok ANDed (an allgather: also a barrier). 0 when the OOB failed. */
static int pair_barrier(struct pair *p, int ok)
{
	int all[2] = {0, 0};

	if (sdp_urom_oob_allgather(p->oob, &ok, all, sizeof(ok)) != DOCA_SUCCESS)
		return 0;
	return all[0] && all[1];
}

static int pair_find_plugins(struct pair *p)
{
	const struct doca_urom_service_plugin_info *pl;
	size_t n = 0;
	int found = 0;

	if (doca_urom_service_get_plugins_list(p->s.svc, &pl, &n) != DOCA_SUCCESS)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(pl[i].plugin_name, "worker_rma") == 0) {
			p->rma_id = pl[i].id;
			found = urom_rma_init(pl[i].id, pl[i].version) == DOCA_SUCCESS;
		} else if (strcmp(pl[i].plugin_name, "worker_graph") == 0) {
			p->graph_id = pl[i].id;
		}
	}
	return found ? 0 : -1;
}

/* Open rank's side: buffer of len bytes (page aligned, filled by fill(rank, i)). */
static int pair_open(struct pair *p, uint32_t rank, uint16_t port, struct sdp_urom_oob *oob,
		     size_t len, uint32_t max_inflight, uint8_t (*fill)(uint32_t, size_t))
{
	struct sdp_urom_oob_params op = {.rank = rank,
					 .size = 2,
					 .secret = pair_secret,
					 .secret_len = sizeof(pair_secret),
					 .timeout_ms = 20000};
	struct t_worker_cfg cfg = {.id = DOCA_UROM_WORKER_ID_ANY, .max_inflight = max_inflight};
	struct doca_urom_domain_oob_coll coll;
	uint64_t id = rank, my_va;
	char root[64];

	memset(p, 0, sizeof(*p));
	p->rank = rank;
	p->len = len;
	p->buf = aligned_alloc(4096, len);
	PCHECK(p, p->buf != NULL);
	for (size_t i = 0; i < len; i++)
		p->buf[i] = fill(rank, i);
	snprintf(root, sizeof(root), "127.0.0.1:%u", port);
	op.root = root;
	p->oob = oob;
	if (p->oob == NULL)
		PCHECK(p, sdp_urom_oob_create(&op, &p->oob) == DOCA_SUCCESS);
	PCHECK(p, t_svc_open(&p->s, 0) == DOCA_SUCCESS);
	PCHECK(p, pair_find_plugins(p) == 0);
	urom_rma_set_local_id(rank);
	cfg.plugins = p->rma_id;
	PCHECK(p, t_worker_start(&p->s, p->s.pe, &cfg, &p->w) == DOCA_SUCCESS);
	sdp_urom_oob_coll(p->oob, &coll);
	PCHECK(p, doca_urom_domain_create(&p->dom) == DOCA_SUCCESS);
	PCHECK(p, doca_pe_connect_ctx(p->s.pe, doca_urom_domain_as_ctx(p->dom)) == DOCA_SUCCESS);
	PCHECK(p, doca_urom_domain_set_oob(p->dom, &coll) == DOCA_SUCCESS);
	PCHECK(p, doca_urom_domain_set_workers(p->dom, &id, &p->w, 1) == DOCA_SUCCESS);
	PCHECK(p, doca_urom_domain_set_buffers_count(p->dom, 1) == DOCA_SUCCESS);
	PCHECK(p, sdp_urom_domain_export_buffer(p->dom, p->buf, len, &p->mem) == DOCA_SUCCESS);
	PCHECK(p, doca_ctx_start(doca_urom_domain_as_ctx(p->dom)) == DOCA_ERROR_IN_PROGRESS);
	PCHECK(p, t_ctx_wait_state(doca_urom_domain_as_ctx(p->dom), p->s.pe, NULL,
				   DOCA_CTX_STATE_RUNNING, T_WAIT_MS) == DOCA_CTX_STATE_RUNNING);
	my_va = (uint64_t)(uintptr_t)p->buf;
	PCHECK(p, sdp_urom_oob_allgather(p->oob, &my_va, p->vas, sizeof(my_va)) == DOCA_SUCCESS);
	return 0;
}

static void pair_close(struct pair *p)
{
	if (p->dom != NULL) {
		(void)doca_ctx_stop(doca_urom_domain_as_ctx(p->dom));
		(void)doca_urom_domain_destroy(p->dom);
	}
	if (p->mem != NULL)
		(void)sdp_urom_mem_unexport(p->mem);
	if (p->w != NULL)
		t_worker_close(&p->s, p->s.pe, p->w);
	if (p->s.svc != NULL)
		t_svc_close(&p->s);
	if (p->oob != NULL)
		(void)sdp_urom_oob_destroy(p->oob);
	free(p->buf);
}

/* Fork the two ranks, each running rank_main(rank, port, oob); the parent judges. */
static int pair_main(int argc, char **argv,
		     int (*rank_main)(uint32_t, uint16_t, struct sdp_urom_oob *))
{
	struct sdp_urom_oob_params op = {.root = "127.0.0.1:0",
					 .rank = 0,
					 .size = 2,
					 .secret = pair_secret,
					 .secret_len = sizeof(pair_secret),
					 .timeout_ms = 20000};
	struct sdp_urom_oob *root = NULL;
	pid_t pids[2];

	if (argc < 2) {
		fprintf(stderr, "usage: %s PLUGIN_PATH [tcp]\n", argv[0]);
		return T_EXIT_FAIL;
	}
	if (argc > 2 && strcmp(argv[2], "tcp") == 0)
		setenv("UCX_TLS", "tcp", 1);
	setenv("UROM_PLUGIN_PATH", argv[1], 1);
	if (t_uromd_start(&pair_d, NULL) != 0)
		return T_EXIT_FAIL;
	T_OK(sdp_urom_oob_create(&op, &root));
	for (uint32_t r = 0; r < 2; r++) {
		pids[r] = fork();
		if (pids[r] == 0)
			_exit(rank_main(r, sdp_urom_oob_port(root), r == 0 ? root : NULL) == 0 ? 0 :
												 1);
	}
	(void)sdp_urom_oob_destroy(root);
	for (int r = 0; r < 2; r++) {
		int st = -1;

		if (!t_wait_child(pids[r], 180000, &st)) {
			kill(pids[r], SIGKILL);
			t_fail("rank %d did not exit", r);
		} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			t_fail("rank %d exit status %d", r, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		}
	}
	t_uromd_stop(&pair_d);
	T_DONE();
}
