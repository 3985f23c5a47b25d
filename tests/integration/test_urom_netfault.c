/*
 * One rank of the network fault test (test_urom_netfault.sh, which runs rank 0 in namespace a
 * and rank 1 in namespace b, joined by a veth pair, each with the softdpu-uromd of its own
 * namespace). Each rank has a service connection, one worker running worker_rma and worker_coll,
 * and a domain over softdpu's TCP OOB into which it exported one buffer. The script injects the
 * faults between steps; a step is met through files in the control directory: the rank writes
 * <step>.r<rank> and waits (bounded) for <step>.go, whose content the script writes first
 * ("on", "skip: why", or the wall-clock millisecond at which the fault began).
 *
 *   test_urom_netfault <rank> <ctl dir> <oob root ip:port> <oob root ip:port for recovery>
 *
 * Steps: base (puts, gets and an allreduce across the veth, every byte checked), netem (the
 * same under loss and delay, each completion timed against NF_NETEM_BOUND_MS), down_put (a
 * stream of puts while the script takes the link down: every outstanding put completes, with
 * success or an error, within NF_DOWN_BOUND_MS of the link going down), down_coll (allreduces
 * outstanding when the link goes down, and one started after: each completes within
 * NF_DOWN_COLL_BOUND_MS, with an error for those that could not finish; the link comes back up
 * between the two, at mid_up), up (the link is back: the
 * old worker, domain and service context are destroyed, within T_WAIT_MS each, and new ones
 * over a new OOB pass the base checks again). Results are printed as "NF <key> <value>" lines.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "doca_buf.h"
#include "softdpu/urom_mem.h"
#include "softdpu/urom_oob.h"
#include "t_urom.h"
#include "urom_coll.h"
#include "urom_rma.h"

#define MIB (1u << 20)
#define BUF_LEN (16 * MIB)
#define SRC_OFF 0	      /* 1 MiB of this rank's pattern, what the peer gets */
#define DST_OFF (1 * MIB)     /* where the peer puts its pattern */
#define GET_OFF (2 * MIB)     /* where this rank gets the peer's pattern */
#define CS_OFF (4 * MIB)      /* allreduce send: COLL_MAX elements of int64 */
#define CR_OFF (8 * MIB)      /* allreduce receive */
#define COLL_COUNT 4096	      /* elements of the base allreduce (32 KiB) */
#define COLL_BIG (256 * 1024) /* elements of the allreduces in flight at link down (2 MiB) */
#define COLL_INFLIGHT 8
#define PUT_INFLIGHT 16
#define STREAM_PUTS 4096	/* an upper bound on the stream; the link goes down long before */
#define NF_NETEM_BOUND_MS 30000 /* each operation under 10% loss and 20 ms delay */
#define NF_DOWN_BOUND_MS 45000	/* each outstanding operation after the link went down */
/*
 * Each outstanding collective: UCX's failure of the transfer (about 15 s with UCX 1.22's TCP),
 * then the DONE wait (UROM_COLL_WAIT_MS, 30 s) by which worker_coll makes sure no member still
 * touches this host's buffers when it answers, and a margin.
 */
#define NF_DOWN_COLL_BOUND_MS 75000
/* nf_close's bound: the team (10 s), the domain, the worker and the service (T_WAIT_MS each) */
#define NF_CLOSE_BOUND_MS (10000 + 3 * T_WAIT_MS)
/*
 * The wait for the script at each step: the other rank may reach the step up to a whole phase
 * later (NF_DOWN_COLL_BOUND_MS apart at worst), and the script waits 120 s for both, so a rank
 * waits longer than that: a stalled step is named by the script, never a rank's own timeout.
 */
#define SYNC_MS 130000

struct nf {
	uint32_t rank, peer;
	const char *ctl;
	struct sdp_urom_oob *oob;
	struct t_svc s;
	struct doca_urom_worker *w;
	struct doca_urom_domain *dom;
	struct sdp_urom_mem *mem;
	struct urom_coll_team *team;
	uint8_t *buf;
	uint64_t peer_va;
	uint64_t rma_id, rma_ver, coll_id, coll_ver;
};

/* One put of the stream: when it was submitted and completed, how. */
struct op {
	int64_t t_sub, t_done;
	doca_error_t st;
	int done;
};

static struct op ops[STREAM_PUTS];
static const char nf_secret[] = "test_urom_netfault OOB secret";
static uint32_t me;

#define NCHECK(cond)                                                                               \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "rank %u: check failed at line %d: %s\n", me, __LINE__,    \
				#cond);                                                            \
			return -1;                                                                 \
		}                                                                                  \
	} while (0)

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint8_t pat(uint32_t rank, size_t i, uint32_t round)
{
	return (uint8_t)(rank * 101 + i * 7 + (i >> 10) * 13 + round * 29 + 1);
}

/* Write <step>.r<rank>, then wait for <step>.go; its first line into go (may be NULL). */
static int nf_sync(struct nf *n, const char *step, char *go, size_t golen)
{
	char path[512], line[128] = "";
	int64_t deadline = t_now_ms() + SYNC_MS;
	int fd;

	snprintf(path, sizeof(path), "%s/%s.r%u", n->ctl, step, n->rank);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	NCHECK(fd >= 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/%s.go", n->ctl, step);
	for (;;) {
		FILE *f = fopen(path, "r");

		if (f != NULL) {
			int ok = fgets(line, sizeof(line), f) != NULL;

			fclose(f);
			if (ok) {
				line[strcspn(line, "\n")] = '\0';
				break;
			}
		}
		if (t_now_ms() >= deadline) {
			fprintf(stderr, "rank %u: no %s from the script\n", n->rank, path);
			return -1;
		}
		t_sleep_ms(5);
	}
	if (go != NULL)
		snprintf(go, golen, "%s", line);
	return 0;
}

/* The go file exists (non-blocking). */
static int nf_go_seen(struct nf *n, const char *step)
{
	char path[512];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s.go", n->ctl, step);
	return stat(path, &sb) == 0 && sb.st_size > 0;
}

static int nf_find_plugins(struct nf *n)
{
	const struct doca_urom_service_plugin_info *pl;
	size_t cnt = 0;

	NCHECK(doca_urom_service_get_plugins_list(n->s.svc, &pl, &cnt) == DOCA_SUCCESS);
	for (size_t i = 0; i < cnt; i++) {
		if (strcmp(pl[i].plugin_name, "worker_rma") == 0) {
			n->rma_id = pl[i].id;
			n->rma_ver = pl[i].version;
		} else if (strcmp(pl[i].plugin_name, "worker_coll") == 0) {
			n->coll_id = pl[i].id;
			n->coll_ver = pl[i].version;
		}
	}
	NCHECK(n->rma_id != 0 && n->coll_id != 0);
	NCHECK(urom_rma_init(n->rma_id, n->rma_ver) == DOCA_SUCCESS);
	NCHECK(urom_coll_init(n->coll_id, n->coll_ver) == DOCA_SUCCESS);
	return 0;
}

/*
 * Service context, worker (worker_rma + worker_coll), domain over an OOB rooted at root, team.
 * oob_ms bounds the wait for the peer at the OOB: after a fault it includes the peer's own
 * bounded teardown (NF_CLOSE_BOUND_MS).
 */
static int nf_open(struct nf *n, const char *root, uint64_t tag, int oob_ms)
{
	struct sdp_urom_oob_params op = {.root = root,
					 .rank = n->rank,
					 .size = 2,
					 .secret = nf_secret,
					 .secret_len = sizeof(nf_secret),
					 .timeout_ms = oob_ms};
	struct t_worker_cfg cfg = {.id = DOCA_UROM_WORKER_ID_ANY, .max_inflight = 64};
	struct doca_urom_domain_oob_coll coll;
	uint64_t id = n->rank, my_va, vas[2];
	int64_t t0 = t_now_ms();

	NCHECK(sdp_urom_oob_create(&op, &n->oob) == DOCA_SUCCESS);
	NCHECK(t_svc_open(&n->s, 0) == DOCA_SUCCESS);
	NCHECK(nf_find_plugins(n) == 0);
	urom_rma_set_local_id(n->rank);
	cfg.plugins = n->rma_id | n->coll_id;
	NCHECK(t_worker_start(&n->s, n->s.pe, &cfg, &n->w) == DOCA_SUCCESS);
	sdp_urom_oob_coll(n->oob, &coll);
	NCHECK(doca_urom_domain_create(&n->dom) == DOCA_SUCCESS);
	NCHECK(doca_pe_connect_ctx(n->s.pe, doca_urom_domain_as_ctx(n->dom)) == DOCA_SUCCESS);
	NCHECK(doca_urom_domain_set_oob(n->dom, &coll) == DOCA_SUCCESS);
	NCHECK(doca_urom_domain_set_workers(n->dom, &id, &n->w, 1) == DOCA_SUCCESS);
	NCHECK(doca_urom_domain_set_buffers_count(n->dom, 1) == DOCA_SUCCESS);
	NCHECK(sdp_urom_domain_export_buffer(n->dom, n->buf, BUF_LEN, &n->mem) == DOCA_SUCCESS);
	NCHECK(doca_ctx_start(doca_urom_domain_as_ctx(n->dom)) == DOCA_ERROR_IN_PROGRESS);
	NCHECK(t_ctx_wait_state(doca_urom_domain_as_ctx(n->dom), n->s.pe, NULL,
				DOCA_CTX_STATE_RUNNING, 30000) == DOCA_CTX_STATE_RUNNING);
	my_va = (uint64_t)(uintptr_t)n->buf;
	NCHECK(sdp_urom_oob_allgather(n->oob, &my_va, vas, sizeof(my_va)) == DOCA_SUCCESS);
	n->peer_va = vas[n->peer];
	NCHECK(urom_coll_team_create_strided(n->w, n->s.pe, tag, n->rank, 0, 1, 2, &n->team) ==
	       DOCA_SUCCESS);
	NCHECK(urom_coll_team_wait_ready(n->team, 30000) == DOCA_SUCCESS);
	printf("NF open_ms %" PRId64 "\n", t_now_ms() - t0);
	return 0;
}

/* Tear down; each step bounded (t_worker_close and t_svc_close wait T_WAIT_MS at most). */
static int nf_close(struct nf *n, const char *what)
{
	int64_t t0 = t_now_ms();
	int fails = t_failures;

	if (n->team != NULL) {
		doca_error_t st = urom_coll_team_destroy(n->team, 10000);

		printf("NF %s_team_destroy %s\n", what, doca_error_get_name(st));
		n->team = NULL;
	}
	if (n->dom != NULL) {
		(void)doca_ctx_stop(doca_urom_domain_as_ctx(n->dom));
		(void)t_ctx_wait_state(doca_urom_domain_as_ctx(n->dom), n->s.pe, NULL,
				       DOCA_CTX_STATE_IDLE, T_WAIT_MS);
		NCHECK(doca_urom_domain_destroy(n->dom) == DOCA_SUCCESS);
		n->dom = NULL;
	}
	if (n->w != NULL)
		t_worker_close(&n->s, n->s.pe, n->w);
	n->w = NULL;
	if (n->s.svc != NULL)
		t_svc_close(&n->s);
	if (n->mem != NULL)
		NCHECK(sdp_urom_mem_unexport(n->mem) == DOCA_SUCCESS);
	n->mem = NULL;
	if (n->oob != NULL)
		(void)sdp_urom_oob_destroy(n->oob);
	n->oob = NULL;
	printf("NF %s_close_ms %" PRId64 "\n", what, t_now_ms() - t0);
	NCHECK(t_failures == fails);
	return 0;
}

static int nf_barrier(struct nf *n, int ok)
{
	int all[2] = {0, 0};

	if (sdp_urom_oob_allgather(n->oob, &ok, all, sizeof(ok)) != DOCA_SUCCESS)
		return 0;
	return all[0] && all[1];
}

static void put_cb(doca_error_t result, union doca_data cookie)
{
	struct op *o = &ops[cookie.u64];

	o->st = result;
	o->t_done = wall_ms();
	o->done = 1;
}

/*
 * The base checks of one round: this rank puts its pattern into the peer's DST and gets the
 * peer's pattern into GET, then an allreduce (SUM of int64); every byte checked. *max_ms is
 * the longest single completion, checked against bound_ms.
 */
static int nf_round(struct nf *n, uint32_t round, int bound_ms, int64_t *max_ms)
{
	uint64_t base = (uint64_t)(uintptr_t)n->buf;
	int64_t *s = (int64_t *)(n->buf + CS_OFF), *r = (int64_t *)(n->buf + CR_OFF);
	struct urom_coll_req *req;
	int64_t t;
	int ok = 1;

	for (size_t i = 0; i < MIB; i++)
		n->buf[SRC_OFF + i] = pat(n->rank, i, round);
	memset(n->buf + GET_OFF, 0, MIB);
	NCHECK(nf_barrier(n, 1));
	t = t_now_ms();
	NCHECK(urom_rma_put_wait(n->w, n->s.pe, n->peer, base + SRC_OFF, n->peer_va + DST_OFF, MIB,
				 bound_ms) == DOCA_SUCCESS);
	*max_ms = t_now_ms() - t > *max_ms ? t_now_ms() - t : *max_ms;
	t = t_now_ms();
	NCHECK(urom_rma_get_wait(n->w, n->s.pe, n->peer, base + GET_OFF, n->peer_va + SRC_OFF, MIB,
				 bound_ms) == DOCA_SUCCESS);
	*max_ms = t_now_ms() - t > *max_ms ? t_now_ms() - t : *max_ms;
	for (size_t i = 0; i < MIB; i++)
		if (n->buf[GET_OFF + i] != pat(n->peer, i, round)) {
			fprintf(stderr, "rank %u round %u: get byte %zu wrong\n", n->rank, round,
				i);
			ok = 0;
			break;
		}
	/* the peer's put into our DST is complete once the peer passed its put: barrier */
	NCHECK(nf_barrier(n, ok));
	for (size_t i = 0; i < MIB; i++)
		if (n->buf[DST_OFF + i] != pat(n->peer, i, round)) {
			fprintf(stderr, "rank %u round %u: put byte %zu wrong\n", n->rank, round,
				i);
			return -1;
		}
	for (size_t i = 0; i < COLL_COUNT; i++) {
		s[i] = (int64_t)((n->rank + 1) * i + round);
		r[i] = -1;
	}
	t = t_now_ms();
	NCHECK(urom_coll_allreduce(n->team, s, r, COLL_COUNT, UROM_COLL_INT64, UROM_COLL_SUM,
				   &req) == DOCA_SUCCESS);
	NCHECK(urom_coll_wait(req, bound_ms) == DOCA_SUCCESS);
	*max_ms = t_now_ms() - t > *max_ms ? t_now_ms() - t : *max_ms;
	for (size_t i = 0; i < COLL_COUNT; i++)
		NCHECK(r[i] == (int64_t)(3 * i + 2 * round));
	NCHECK(nf_barrier(n, 1));
	return 0;
}

/*
 * A stream of puts (PUT_INFLIGHT outstanding) to the peer until the script took the link down,
 * then every outstanding one waited for (NF_DOWN_BOUND_MS after the link went down).
 */
static int nf_down_put(struct nf *n)
{
	uint64_t base = (uint64_t)(uintptr_t)n->buf;
	char go[128];
	size_t sub = 0, done = 0, okc = 0, err_after = 0, ok_after = 0;
	int64_t t_down = 0, last = 0, deadline;
	int signalled = 0;
	doca_error_t first_err = DOCA_SUCCESS;

	memset(ops, 0, sizeof(ops));
	if (n->rank == 1)
		return nf_sync(n, "down_put", NULL, 0);
	for (;;) {
		while (t_down == 0 && sub < STREAM_PUTS && sub - done < PUT_INFLIGHT) {
			union doca_data c = {.u64 = sub};
			doca_error_t st;

			ops[sub].t_sub = wall_ms();
			st = urom_rma_put(n->w, c, n->peer, base + SRC_OFF, n->peer_va + DST_OFF,
					  MIB, put_cb);
			if (st == DOCA_ERROR_AGAIN)
				break;
			NCHECK(st == DOCA_SUCCESS);
			sub++;
		}
		t_pe_step(n->s.pe, 2);
		done = 0;
		for (size_t i = 0; i < sub; i++)
			done += ops[i].done;
		if (!signalled && done >= 8) {
			char path[512];
			int fd;

			snprintf(path, sizeof(path), "%s/down_put.r0", n->ctl);
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
			NCHECK(fd >= 0);
			close(fd);
			signalled = 1;
		}
		if (t_down == 0 && signalled && nf_go_seen(n, "down_put"))
			break;
		NCHECK(sub < STREAM_PUTS);
	}
	/* the go file holds the wall-clock ms at which the script took the link down */
	{
		char path[512];
		FILE *f;

		snprintf(path, sizeof(path), "%s/down_put.go", n->ctl);
		f = fopen(path, "r");
		NCHECK(f != NULL);
		NCHECK(fgets(go, sizeof(go), f) != NULL);
		fclose(f);
		t_down = strtoll(go, NULL, 10);
		NCHECK(t_down > 0);
	}
	deadline = t_now_ms() + NF_DOWN_BOUND_MS;
	for (;;) {
		done = 0;
		for (size_t i = 0; i < sub; i++)
			done += ops[i].done;
		if (done == sub || t_now_ms() >= deadline)
			break;
		t_pe_step(n->s.pe, 5);
	}
	for (size_t i = 0; i < sub; i++) {
		if (!ops[i].done)
			continue;
		if (ops[i].st == DOCA_SUCCESS)
			okc++;
		if (ops[i].t_done >= t_down) {
			if (ops[i].st == DOCA_SUCCESS)
				ok_after++;
			else
				err_after++;
			if (ops[i].st != DOCA_SUCCESS && first_err == DOCA_SUCCESS)
				first_err = ops[i].st;
			if (ops[i].t_done - t_down > last)
				last = ops[i].t_done - t_down;
		}
	}
	printf("NF down_put_submitted %zu\nNF down_put_ok %zu\nNF down_put_ok_after_down %zu\n"
	       "NF down_put_err_after_down %zu\nNF down_put_error %s\nNF down_put_last_ms %" PRId64
	       "\nNF down_put_outstanding %zu\n",
	       sub, okc, ok_after, err_after, doca_error_get_name(first_err), last, sub - done);
	fflush(stdout);
	NCHECK(done == sub); /* no put left hanging past the bound */
	return 0;
}

/*
 * Allreduces outstanding when the link goes down (COLL_INFLIGHT of 2 MiB each, submitted just
 * before the sync) and one started after it; each must complete within NF_DOWN_COLL_BOUND_MS.
 */
static int nf_down_coll(struct nf *n)
{
	int64_t *s = (int64_t *)(n->buf + CS_OFF), *r = (int64_t *)(n->buf + CR_OFF);
	struct urom_coll_req *reqs[COLL_INFLIGHT + 1];
	doca_error_t st[COLL_INFLIGHT + 1];
	int64_t t_done[COLL_INFLIGHT + 1], t_down, last = 0, deadline;
	size_t ok = 0, err = 0, left = COLL_INFLIGHT + 1;
	doca_error_t first_err = DOCA_SUCCESS;
	char go[128];

	for (size_t i = 0; i < COLL_BIG; i++)
		s[i] = (int64_t)i;
	/* all of them write the same receive buffer: a failed collective writes nothing
	 * meaningful, and the successful ones write the same values */
	for (int k = 0; k < COLL_INFLIGHT; k++) {
		NCHECK(urom_coll_allreduce(n->team, s, r, COLL_BIG, UROM_COLL_INT64, UROM_COLL_SUM,
					   &reqs[k]) == DOCA_SUCCESS);
		st[k] = DOCA_ERROR_IN_PROGRESS;
	}
	NCHECK(nf_sync(n, "down_coll", go, sizeof(go)) == 0);
	t_down = strtoll(go, NULL, 10);
	NCHECK(t_down > 0);
	NCHECK(urom_coll_allreduce(n->team, s, r, COLL_BIG, UROM_COLL_INT64, UROM_COLL_SUM,
				   &reqs[COLL_INFLIGHT]) == DOCA_SUCCESS);
	st[COLL_INFLIGHT] = DOCA_ERROR_IN_PROGRESS;
	deadline = t_now_ms() + NF_DOWN_COLL_BOUND_MS;
	while (left > 0 && t_now_ms() < deadline) {
		t_pe_step(n->s.pe, 5);
		for (int k = 0; k <= COLL_INFLIGHT; k++) {
			if (st[k] != DOCA_ERROR_IN_PROGRESS)
				continue;
			st[k] = urom_coll_test(reqs[k]);
			if (st[k] == DOCA_ERROR_IN_PROGRESS)
				continue;
			t_done[k] = wall_ms();
			left--;
			if (st[k] == DOCA_SUCCESS)
				ok++;
			else
				err++;
			if (st[k] != DOCA_SUCCESS && first_err == DOCA_SUCCESS)
				first_err = st[k];
			if (t_done[k] - t_down > last)
				last = t_done[k] - t_down;
		}
	}
	printf("NF down_coll_ok %zu\nNF down_coll_err %zu\nNF down_coll_error %s\n"
	       "NF down_coll_last_ms %" PRId64 "\nNF down_coll_outstanding %zu\n",
	       ok, err, doca_error_get_name(first_err), last, left);
	fflush(stdout);
	for (int k = 0; k <= COLL_INFLIGHT; k++)
		if (st[k] == DOCA_ERROR_IN_PROGRESS)
			urom_coll_req_free(reqs[k]);
	NCHECK(left == 0);
	/* the one started after the link went down cannot have succeeded */
	NCHECK(st[COLL_INFLIGHT] != DOCA_SUCCESS);
	return 0;
}

int main(int argc, char **argv)
{
	struct nf n;
	char go[128];
	int64_t max_ms = 0;

	if (argc != 5) {
		fprintf(stderr, "usage: %s RANK CTL_DIR OOB_ROOT OOB_ROOT2\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&n, 0, sizeof(n));
	n.rank = me = (uint32_t)atoi(argv[1]);
	n.peer = 1 - n.rank;
	n.ctl = argv[2];
	n.buf = aligned_alloc(4096, BUF_LEN);
	NCHECK(n.rank <= 1 && n.buf != NULL);
	memset(n.buf, 0, BUF_LEN);

	/* a. base */
	NCHECK(nf_open(&n, argv[3], 0x51, 30000) == 0);
	NCHECK(nf_round(&n, 0, 30000, &max_ms) == 0);
	printf("NF base_max_ms %" PRId64 "\n", max_ms);

	/* b. loss and delay */
	NCHECK(nf_sync(&n, "netem", go, sizeof(go)) == 0);
	if (strcmp(go, "on") == 0) {
		int64_t t0 = t_now_ms();

		max_ms = 0;
		for (uint32_t k = 1; k <= 3; k++)
			NCHECK(nf_round(&n, k, NF_NETEM_BOUND_MS, &max_ms) == 0);
		printf("NF netem_max_ms %" PRId64 "\nNF netem_total_ms %" PRId64 "\n", max_ms,
		       t_now_ms() - t0);
	} else {
		printf("NF netem %s\n", go);
	}
	NCHECK(nf_sync(&n, "netem_off", NULL, 0) == 0);
	max_ms = 0;
	NCHECK(nf_round(&n, 4, 30000, &max_ms) == 0);

	/* c. link down during a stream of puts, then during collectives */
	NCHECK(nf_down_put(&n) == 0);
	NCHECK(nf_sync(&n, "mid_up", NULL, 0) == 0);
	NCHECK(nf_down_coll(&n) == 0);

	/* d. the link is back: the old contexts go, new ones work */
	NCHECK(nf_sync(&n, "up", NULL, 0) == 0);
	NCHECK(nf_close(&n, "faulted") == 0);
	NCHECK(nf_open(&n, argv[4], 0x52, 30000 + NF_CLOSE_BOUND_MS) == 0);
	max_ms = 0;
	NCHECK(nf_round(&n, 5, 30000, &max_ms) == 0);
	printf("NF recovered_max_ms %" PRId64 "\n", max_ms);
	NCHECK(nf_close(&n, "final") == 0);
	free(n.buf);
	printf("NF rank %u PASS\n", n.rank);
	return 0;
}
