/*
 * Integration: UROM domains against a real daemon. Each rank (a thread with its own PE, service
 * connection, worker and domain) starts a domain over an in-process OOB allgather; the
 * worker_dprobe test plugin then reads the worker's domain table through the four DOCA lookups,
 * and every address, segment, memh and mkey byte is compared with what each rank put in.
 * Also: 1, 2 and 4 members; several local workers in one domain; buffer-table edge cases;
 * unknown ids and segments; duplicate domain ids; a member that never joins (every other
 * member's start fails within SOFTDPU_UROM_DOMAIN_TIMEOUT_MS); an OOB that reports a failure;
 * the wrong-state calls (destroy while running, worker destroy under a running domain, a
 * worker on another PE); a local worker stopped, or SIGKILLed, during the start (IO_FAILED);
 * stop, restart and destroy.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <pthread.h>
#include <stdatomic.h>

#include <sys/wait.h>

#include "doca_buf.h"
#include "softdpu/urom_oob.h"

#include "t_urom.h"
#include "t_uromd.h"

#include "probe/dprobe.h"

#define MAX_RANKS 4
#define BUFS 3
#define BLOB 40

static struct t_uromd d;

/* ---- an in-process OOB: ranks are threads ---------------------------------------------------- */

#define OOB_ROUNDS 64

struct toob {
	pthread_mutex_t mu;
	uint32_t n;
	uint32_t absent; /* this rank never joins (UINT32_MAX: none) */
	int fail_test;	 /* req_test reports CONNECTION_RESET */
	int bad_sizes;	 /* the first round's result lies: every slot says 12 */
	struct {
		size_t msglen;
		uint8_t *data;
		uint32_t arrived;
	} rounds[OOB_ROUNDS];
	uint32_t next[MAX_RANKS]; /* each rank's next round */
};

struct toob_rank {
	struct toob *o;
	uint32_t rank;
};

struct toob_req {
	struct toob *o;
	uint32_t round;
	void *rbuf;
};

static doca_error_t toob_allgather(void *sbuf, void *rbuf, size_t msglen, void *coll_info,
				   void **req)
{
	struct toob_rank *r = coll_info;
	struct toob *o = r->o;
	struct toob_req *q = malloc(sizeof(*q));
	uint32_t round;

	if (q == NULL)
		return DOCA_ERROR_NO_MEMORY;
	pthread_mutex_lock(&o->mu);
	round = o->next[r->rank]++ % OOB_ROUNDS;
	if (o->rounds[round].data == NULL) {
		o->rounds[round].data = calloc(o->n, msglen);
		o->rounds[round].msglen = msglen;
	}
	if (o->rounds[round].msglen != msglen || o->rounds[round].data == NULL) {
		pthread_mutex_unlock(&o->mu);
		free(q);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(o->rounds[round].data + (size_t)r->rank * msglen, sbuf, msglen);
	o->rounds[round].arrived++;
	pthread_mutex_unlock(&o->mu);
	q->o = o;
	q->round = round;
	q->rbuf = rbuf;
	*req = q;
	return DOCA_SUCCESS;
}

static doca_error_t toob_req_test(void *req)
{
	struct toob_req *q = req;
	struct toob *o = q->o;
	doca_error_t st = DOCA_ERROR_IN_PROGRESS;

	if (o->fail_test)
		return DOCA_ERROR_CONNECTION_RESET;
	pthread_mutex_lock(&o->mu);
	if (o->rounds[q->round].arrived == o->n) {
		memcpy(q->rbuf, o->rounds[q->round].data, o->n * o->rounds[q->round].msglen);
		if (o->bad_sizes && o->rounds[q->round].msglen == 8)
			for (uint32_t i = 0; i < o->n; i++)
				memcpy((uint8_t *)q->rbuf + 8 * i, "\x0c\0\0\0\0\0\0\0", 8);
		st = DOCA_SUCCESS;
	}
	pthread_mutex_unlock(&o->mu);
	return st;
}

static doca_error_t toob_req_free(void *req)
{
	free(req);
	return DOCA_SUCCESS;
}

static void toob_init(struct toob *o, uint32_t n)
{
	memset(o, 0, sizeof(*o));
	pthread_mutex_init(&o->mu, NULL);
	o->n = n;
	o->absent = UINT32_MAX;
}

static void toob_fini(struct toob *o)
{
	for (int i = 0; i < OOB_ROUNDS; i++)
		free(o->rounds[i].data);
	pthread_mutex_destroy(&o->mu);
}

/* ---- probe commands ------------------------------------------------------------------------- */

struct probe_res {
	int done;
	doca_error_t status;
	struct dprobe_notify n;
	uint8_t data[2048];
};

static uint64_t dprobe_id;

static void probe_cb(struct doca_urom_worker_cmd_task *task, union doca_data task_user_data,
		     union doca_data ctx_user_data)
{
	struct probe_res *res = *(struct probe_res **)doca_urom_worker_cmd_task_get_user_data(task);
	struct doca_buf *resp = doca_urom_worker_cmd_task_get_response(task);
	void *data = NULL;
	size_t len = 0;

	(void)task_user_data, (void)ctx_user_data;
	res->status = doca_task_get_status(doca_urom_worker_cmd_task_as_task(task));
	if (res->status == DOCA_SUCCESS && resp != NULL &&
	    doca_buf_get_data(resp, &data) == DOCA_SUCCESS &&
	    doca_buf_get_data_len(resp, &len) == DOCA_SUCCESS && len >= sizeof(res->n)) {
		memcpy(&res->n, data, sizeof(res->n));
		if (res->n.len > sizeof(res->data) || len != sizeof(res->n) + res->n.len)
			res->status = DOCA_ERROR_UNEXPECTED;
		else
			memcpy(res->data, (uint8_t *)data + sizeof(res->n), res->n.len);
	} else if (res->status == DOCA_SUCCESS) {
		res->status = DOCA_ERROR_UNEXPECTED;
	}
	res->done = 1;
	(void)doca_urom_worker_cmd_task_release(task);
}

/* One probe command on w; the lookup's own status lands in res->n.status. */
static doca_error_t probe(struct doca_urom_worker *w, struct doca_pe *pe, uint64_t op, uint64_t id,
			  uint64_t va, int64_t seg, struct probe_res *res)
{
	struct doca_urom_worker_cmd_task *task;
	struct dprobe_cmd c = {.op = op, .id = id, .va = va, .seg = seg};
	struct doca_buf *payload;
	void *p = NULL;
	doca_error_t st;
	int64_t deadline;

	memset(res, 0, sizeof(*res));
	st = doca_urom_worker_cmd_task_allocate_init(w, dprobe_id, &task);
	if (st != DOCA_SUCCESS)
		return st;
	payload = doca_urom_worker_cmd_task_get_payload(task);
	(void)doca_buf_get_data(payload, &p);
	memcpy(p, &c, sizeof(c));
	(void)doca_buf_set_data(payload, p, sizeof(c));
	*(struct probe_res **)doca_urom_worker_cmd_task_get_user_data(task) = res;
	doca_urom_worker_cmd_task_set_cb(task, probe_cb);
	st = doca_task_submit(doca_urom_worker_cmd_task_as_task(task));
	if (st != DOCA_SUCCESS) {
		(void)doca_urom_worker_cmd_task_release(task);
		return st;
	}
	deadline = t_now_ms() + T_WAIT_MS;
	while (!res->done && t_now_ms() < deadline)
		t_pe_step(pe, 2);
	return res->done ? res->status : DOCA_ERROR_TIME_OUT;
}

/* Progress pe until ctx leaves STARTING (RUNNING, or IDLE after a failed start). */
static enum doca_ctx_states wait_started(struct doca_ctx *ctx, struct doca_pe *pe, int timeout_ms)
{
	int64_t deadline = t_now_ms() + timeout_ms;
	enum doca_ctx_states st = DOCA_CTX_STATE_IDLE;

	while (doca_ctx_get_state(ctx, &st) == DOCA_SUCCESS && st == DOCA_CTX_STATE_STARTING &&
	       t_now_ms() < deadline)
		t_pe_step(pe, 2);
	return st;
}

/* ---- one rank ------------------------------------------------------------------------------- */

struct rank {
	uint32_t rank;
	uint32_t local;	 /* local workers (domain members) of this rank */
	uint64_t ids[2]; /* their domain ids */
	struct toob_rank oob_rank;
	struct toob *oob;
	pthread_barrier_t *bar;
	int never_start; /* joins nothing: the others must time out */
	/* results */
	int errors;
	char err[256];
	doca_error_t start_status;
	int64_t start_ms;
	char own_addr[2][DPROBE_ADDR_LEN];
	uint8_t bufs[BUFS][64];
	uint8_t memh[BUFS][BLOB], mkey[BUFS][BLOB];
};

static struct rank ranks[MAX_RANKS];
static uint32_t nranks;

#define R_CHECK(r, cond, ...)                                                                      \
	do {                                                                                       \
		if (!(cond) && (r)->errors++ == 0)                                                 \
			snprintf((r)->err, sizeof((r)->err), __VA_ARGS__);                         \
	} while (0)

static void blob_fill(uint8_t *b, uint32_t rank, int i, int kind)
{
	for (int k = 0; k < BLOB; k++)
		b[k] = (uint8_t)(rank * 31 + i * 7 + kind * 101 + k);
}

/* Check what member rank r's worker number lw sees about every member of every rank. */
static void check_tables(struct rank *r, struct doca_urom_worker *w, struct doca_pe *pe)
{
	struct probe_res *res = malloc(sizeof(*res));
	doca_error_t st;

	for (uint32_t o = 0; o < nranks && res != NULL; o++) {
		struct rank * or = &ranks[o];

		for (uint32_t l = 0; l < or->local; l++) {
			uint64_t id = or->ids[l];

			st = probe(w, pe, DPROBE_ADDR, id, 0, 0, res);
			R_CHECK(r,
				st == DOCA_SUCCESS && res->n.status == DOCA_SUCCESS &&
					memcmp(res->data, or->own_addr[l], DPROBE_ADDR_LEN) == 0,
				"addr of member %lu: %s/%s", (unsigned long)id,
				doca_error_get_name(st), doca_error_get_name(res->n.status));
			for (int b = 0; b < BUFS; b++) {
				uint64_t va = (uint64_t)(uintptr_t) or->bufs[b];

				/* first, middle and last byte of each buffer */
				for (uint64_t off = 0; off < 64; off += 31) {
					st = probe(w, pe, DPROBE_SEG, id, va + off, 0, res);
					R_CHECK(r,
						st == DOCA_SUCCESS && res->n.status == DOCA_SUCCESS,
						"seg of member %lu va+%lu: %s", (unsigned long)id,
						(unsigned long)off,
						doca_error_get_name(res->n.status));
					if (res->n.status != DOCA_SUCCESS)
						continue;
					st = probe(w, pe, DPROBE_MEMH, id, 0, res->n.seg, res);
					R_CHECK(r,
						st == DOCA_SUCCESS && res->n.len == BLOB &&
							memcmp(res->data, or->memh[b], BLOB) == 0,
						"memh of member %lu buffer %d", (unsigned long)id,
						b);
				}
				st = probe(w, pe, DPROBE_SEG, id, va + 63, 0, res);
				st = probe(w, pe, DPROBE_MKEY, id, 0, res->n.seg, res);
				R_CHECK(r,
					st == DOCA_SUCCESS && res->n.len == BLOB &&
						memcmp(res->data, or->mkey[b], BLOB) == 0,
					"mkey of member %lu buffer %d", (unsigned long)id, b);
			}
			/* one byte past the last buffer of the array: in no segment */
			st = probe(w, pe, DPROBE_SEG, id,
				   (uint64_t)(uintptr_t) or->bufs[BUFS - 1] + 64, 0, res);
			R_CHECK(r, st == DOCA_SUCCESS && res->n.status == DOCA_ERROR_NOT_FOUND,
				"va past the buffers of member %lu: %s", (unsigned long)id,
				doca_error_get_name(res->n.status));
			st = probe(w, pe, DPROBE_MEMH, id, 0, BUFS, res);
			R_CHECK(r, st == DOCA_SUCCESS && res->n.status == DOCA_ERROR_NOT_FOUND,
				"segment %d of member %lu: %s", BUFS, (unsigned long)id,
				doca_error_get_name(res->n.status));
			st = probe(w, pe, DPROBE_MKEY, id, 0, -1, res);
			R_CHECK(r, st == DOCA_SUCCESS && res->n.status == DOCA_ERROR_NOT_FOUND,
				"segment -1 of member %lu", (unsigned long)id);
		}
	}
	if (res != NULL) {
		st = probe(w, pe, DPROBE_ADDR, 999999, 0, 0, res);
		R_CHECK(r, st == DOCA_SUCCESS && res->n.status == DOCA_ERROR_NOT_FOUND,
			"unknown member: %s", doca_error_get_name(res->n.status));
		st = probe(w, pe, DPROBE_SEG, 999999, 0, 0, res);
		R_CHECK(r, st == DOCA_SUCCESS && res->n.status == DOCA_ERROR_NOT_FOUND,
			"seg of unknown member");
	}
	free(res);
}

static int svc_find_dprobe(struct t_svc *s)
{
	const struct doca_urom_service_plugin_info *plugins;
	size_t n = 0;

	if (doca_urom_service_get_plugins_list(s->svc, &plugins, &n) != DOCA_SUCCESS)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (strcmp(plugins[i].plugin_name, "worker_dprobe") == 0) {
			dprobe_id = plugins[i].id;
			return 0;
		}
	return -1;
}

static void *rank_main(void *arg)
{
	struct rank *r = arg;
	struct t_svc s;
	struct doca_urom_worker *w[2] = {NULL, NULL};
	struct doca_urom_domain *dom = NULL;
	struct doca_urom_domain_oob_coll oob;
	struct probe_res *res = malloc(sizeof(*res));
	enum doca_ctx_states state;
	doca_error_t st;
	int64_t t0;

	R_CHECK(r, res != NULL, "no memory");
	st = t_svc_open(&s, 0);
	R_CHECK(r, st == DOCA_SUCCESS && svc_find_dprobe(&s) == 0, "service: %s",
		doca_error_get_name(st));
	for (uint32_t l = 0; l < r->local && r->errors == 0; l++) {
		struct t_worker_cfg cfg = {
			.id = DOCA_UROM_WORKER_ID_ANY, .plugins = dprobe_id, .max_inflight = 16};

		st = t_worker_start(&s, s.pe, &cfg, &w[l]);
		R_CHECK(r, st == DOCA_SUCCESS, "worker start: %s", doca_error_get_name(st));
		if (st == DOCA_SUCCESS) {
			st = probe(w[l], s.pe, DPROBE_OWN_ADDR, 0, 0, 0, res);
			R_CHECK(r, st == DOCA_SUCCESS && res->n.len == DPROBE_ADDR_LEN,
				"own address: %s", doca_error_get_name(st));
			memcpy(r->own_addr[l], res->data, DPROBE_ADDR_LEN);
		}
	}
	for (int b = 0; b < BUFS; b++) {
		blob_fill(r->memh[b], r->rank, b, 0);
		blob_fill(r->mkey[b], r->rank, b, 1);
	}
	st = doca_urom_domain_create(&dom);
	R_CHECK(r, st == DOCA_SUCCESS, "domain create");
	if (r->errors == 0) {
		oob.allgather = toob_allgather;
		oob.req_test = toob_req_test;
		oob.req_free = toob_req_free;
		oob.coll_info = &r->oob_rank;
		oob.n_oob_indexes = r->oob->n;
		oob.oob_index = r->rank;
		r->oob_rank.o = r->oob;
		r->oob_rank.rank = r->rank;
		R_CHECK(r, doca_pe_connect_ctx(s.pe, doca_urom_domain_as_ctx(dom)) == DOCA_SUCCESS,
			"connect");
		R_CHECK(r, doca_urom_domain_set_oob(dom, &oob) == DOCA_SUCCESS, "set_oob");
		R_CHECK(r, doca_urom_domain_set_workers(dom, r->ids, w, r->local) == DOCA_SUCCESS,
			"set_workers");
		R_CHECK(r, doca_urom_domain_set_buffers_count(dom, BUFS) == DOCA_SUCCESS,
			"buffers count");
		for (int b = BUFS - 1; b >= 0; b--) /* added out of address order */
			R_CHECK(r,
				doca_urom_domain_add_buffer(dom, r->bufs[b], sizeof(r->bufs[b]),
							    r->memh[b], BLOB, r->mkey[b],
							    BLOB) == DOCA_SUCCESS,
				"add_buffer %d", b);
		R_CHECK(r,
			doca_urom_domain_add_buffer(dom, r->bufs[0], 1, r->memh[0], 1, r->mkey[0],
						    1) == DOCA_ERROR_FULL,
			"add_buffer past the count is FULL");
	}
	/* Everyone has its own address before anyone checks tables. */
	pthread_barrier_wait(r->bar);
	if (r->errors == 0 && !r->never_start) {
		t0 = t_now_ms();
		st = doca_ctx_start(doca_urom_domain_as_ctx(dom));
		R_CHECK(r, st == DOCA_ERROR_IN_PROGRESS, "domain start: %s",
			doca_error_get_name(st));
		R_CHECK(r, doca_urom_domain_set_buffers_count(dom, 1) == DOCA_ERROR_BAD_STATE,
			"set while starting");
		R_CHECK(r, doca_urom_domain_destroy(dom) == DOCA_ERROR_NOT_PERMITTED,
			"destroy while starting");
		state = wait_started(doca_urom_domain_as_ctx(dom), s.pe, 60000);
		r->start_ms = t_now_ms() - t0;
		r->start_status = state == DOCA_CTX_STATE_RUNNING ?
					  DOCA_SUCCESS :
					  sdp_ctx_get_last_error(doca_urom_domain_as_ctx(dom));
	}
	pthread_barrier_wait(r->bar);
	if (r->errors == 0 && r->start_status == DOCA_SUCCESS && !r->never_start) {
		for (uint32_t l = 0; l < r->local; l++)
			check_tables(r, w[l], s.pe);
		R_CHECK(r, doca_urom_domain_destroy(dom) == DOCA_ERROR_NOT_PERMITTED,
			"destroy while running");
		R_CHECK(r, doca_urom_worker_destroy(w[0]) == DOCA_ERROR_IN_USE,
			"worker destroy under a running domain");
	}
	/* Nobody stops (clears the tables) before everyone checked. */
	pthread_barrier_wait(r->bar);
	if (dom != NULL) {
		if (doca_ctx_get_state(doca_urom_domain_as_ctx(dom), &state) == DOCA_SUCCESS &&
		    state != DOCA_CTX_STATE_IDLE)
			R_CHECK(r, doca_ctx_stop(doca_urom_domain_as_ctx(dom)) == DOCA_SUCCESS,
				"domain stop");
		R_CHECK(r, doca_urom_domain_destroy(dom) == DOCA_SUCCESS, "domain destroy");
	}
	if (r->errors == 0 && r->start_status == DOCA_SUCCESS && !r->never_start) {
		/* After stop the worker's table is gone. */
		st = probe(w[0], s.pe, DPROBE_ADDR, r->ids[0], 0, 0, res);
		R_CHECK(r, st == DOCA_SUCCESS && res->n.status == DOCA_ERROR_NOT_FOUND,
			"lookup after stop: %s", doca_error_get_name(res->n.status));
	}
	for (uint32_t l = 0; l < r->local; l++)
		if (w[l] != NULL)
			t_worker_close(&s, s.pe, w[l]);
	t_svc_close(&s);
	free(res);
	return NULL;
}

/* n ranks with local[i] workers each; domain ids 100 + 10 * rank + worker. */
static void run_domain(uint32_t n, const uint32_t *local, uint32_t absent, int fail_test,
		       int dup_ids, doca_error_t want)
{
	pthread_t th[MAX_RANKS];
	pthread_barrier_t bar;
	struct toob o;

	toob_init(&o, n);
	o.fail_test = fail_test == 1;
	o.bad_sizes = fail_test == 2;
	pthread_barrier_init(&bar, NULL, n);
	nranks = n;
	memset(ranks, 0, sizeof(ranks));
	for (uint32_t i = 0; i < n; i++) {
		ranks[i].rank = i;
		ranks[i].local = local[i];
		ranks[i].oob = &o;
		ranks[i].bar = &bar;
		ranks[i].never_start = i == absent;
		for (uint32_t l = 0; l < local[i]; l++)
			ranks[i].ids[l] = dup_ids ? 100 + l : 100 + 10 * i + l;
		pthread_create(&th[i], NULL, rank_main, &ranks[i]);
	}
	for (uint32_t i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (uint32_t i = 0; i < n; i++) {
		if (ranks[i].errors)
			t_fail("%u ranks: rank %u: %d errors, first: %s", n, i, ranks[i].errors,
			       ranks[i].err);
		if (i != absent && ranks[i].start_status != want)
			t_fail("%u ranks: rank %u: domain start %s, expected %s", n, i,
			       doca_error_get_name(ranks[i].start_status),
			       doca_error_get_name(want));
	}
	pthread_barrier_destroy(&bar);
	toob_fini(&o);
}

static void test_members(void)
{
	static const uint32_t one[] = {1}, two[] = {1, 1}, four[] = {1, 1, 1, 1}, multi[] = {2, 1};

	run_domain(1, one, UINT32_MAX, 0, 0, DOCA_SUCCESS);
	run_domain(2, two, UINT32_MAX, 0, 0, DOCA_SUCCESS);
	run_domain(4, four, UINT32_MAX, 0, 0, DOCA_SUCCESS);
	/* Two local workers of one process in one domain. */
	run_domain(2, multi, UINT32_MAX, 0, 0, DOCA_SUCCESS);
}

static void test_failures(void)
{
	static const uint32_t two[] = {1, 1}, three[] = {1, 1, 1};
	int64_t worst = 0;

	/* The same domain id claimed by two ranks: every start refuses. */
	run_domain(2, two, UINT32_MAX, 0, 1, DOCA_ERROR_INVALID_VALUE);
	/* The OOB reports a broken peer: start fails with that error at once. */
	run_domain(2, two, UINT32_MAX, 1, 0, DOCA_ERROR_CONNECTION_RESET);
	/*
	 * The OOB's answer is inconsistent with what this member sent (every size slot reads
	 * 12, shorter than any record): refused, nothing copied past a buffer (ASan build).
	 */
	run_domain(2, two, UINT32_MAX, 2, 0, DOCA_ERROR_INVALID_VALUE);
	/* A member never joins: the others fail at the timeout (1.5 s here), nobody hangs. */
	setenv("SOFTDPU_UROM_DOMAIN_TIMEOUT_MS", "1500", 1);
	run_domain(3, three, 1, 0, 0, DOCA_ERROR_TIME_OUT);
	unsetenv("SOFTDPU_UROM_DOMAIN_TIMEOUT_MS");
	for (int i = 0; i < 3; i++)
		if (i != 1 && ranks[i].start_ms > worst)
			worst = ranks[i].start_ms;
	if (worst < 1400 || worst > 8000)
		t_fail("timed-out start took %lld ms, expected about 1500", (long long)worst);
}

/* Wrong PE and stopped workers, on one rank. */
static void test_wrong_state(void)
{
	struct t_svc s;
	struct doca_urom_worker *w = NULL;
	struct doca_urom_domain *dom = NULL;
	struct doca_urom_domain_oob_coll oob = {0};
	struct toob o;
	struct toob_rank tr;
	struct doca_pe *pe2 = NULL;
	uint64_t id = 7;
	struct t_worker_cfg cfg = {.id = DOCA_UROM_WORKER_ID_ANY, .max_inflight = 16};
	enum doca_ctx_states state;

	toob_init(&o, 1);
	tr.o = &o;
	tr.rank = 0;
	oob.allgather = toob_allgather;
	oob.req_test = toob_req_test;
	oob.req_free = toob_req_free;
	oob.coll_info = &tr;
	oob.n_oob_indexes = 1;
	T_OK(t_svc_open(&s, 0));
	T_TRUE(svc_find_dprobe(&s) == 0);
	cfg.plugins = dprobe_id;
	T_OK(t_worker_start(&s, s.pe, &cfg, &w));
	T_OK(doca_pe_create(&pe2));
	T_OK(doca_urom_domain_create(&dom));
	T_OK(doca_pe_connect_ctx(pe2, doca_urom_domain_as_ctx(dom)));
	T_OK(doca_urom_domain_set_oob(dom, &oob));
	T_OK(doca_urom_domain_set_workers(dom, &id, &w, 1));
	/* the domain on another PE than its worker */
	T_STATUS(doca_ctx_start(doca_urom_domain_as_ctx(dom)), DOCA_ERROR_NOT_PERMITTED);
	T_OK(doca_urom_domain_destroy(dom));
	/* announced buffers that were never added */
	T_OK(doca_urom_domain_create(&dom));
	T_OK(doca_pe_connect_ctx(s.pe, doca_urom_domain_as_ctx(dom)));
	T_OK(doca_urom_domain_set_oob(dom, &oob));
	T_OK(doca_urom_domain_set_workers(dom, &id, &w, 1));
	T_OK(doca_urom_domain_set_buffers_count(dom, 2));
	T_STATUS(doca_ctx_start(doca_urom_domain_as_ctx(dom)), DOCA_ERROR_BAD_STATE);
	/* a worker set twice */
	{
		uint64_t ids2[2] = {1, 2};
		struct doca_urom_worker *ws[2] = {w, w};

		T_OK(doca_urom_domain_set_workers(dom, ids2, ws, 2));
		T_OK(doca_urom_domain_set_buffers_count(dom, 1));
		T_OK(doca_urom_domain_add_buffer(dom, &id, 8, &id, 8, &id, 8));
		T_STATUS(doca_ctx_start(doca_urom_domain_as_ctx(dom)), DOCA_ERROR_INVALID_VALUE);
	}
	/* fine now: one worker; start, stop, start again */
	T_OK(doca_urom_domain_set_workers(dom, &id, &w, 1));
	for (int round = 0; round < 2; round++) {
		T_STATUS(doca_ctx_start(doca_urom_domain_as_ctx(dom)), DOCA_ERROR_IN_PROGRESS);
		state = t_ctx_wait_state(doca_urom_domain_as_ctx(dom), s.pe, NULL,
					 DOCA_CTX_STATE_RUNNING, T_WAIT_MS);
		T_EQ_INT(state, DOCA_CTX_STATE_RUNNING);
		T_STATUS(doca_urom_domain_set_oob(dom, &oob), DOCA_ERROR_BAD_STATE);
		T_OK(doca_ctx_stop(doca_urom_domain_as_ctx(dom)));
	}
	T_OK(doca_urom_domain_destroy(dom));
	/* a second domain on a worker that serves a running one: IN_USE */
	{
		struct doca_urom_domain *dom2 = NULL;
		uint64_t id2 = 8;

		T_OK(doca_urom_domain_create(&dom));
		T_OK(doca_pe_connect_ctx(s.pe, doca_urom_domain_as_ctx(dom)));
		T_OK(doca_urom_domain_set_oob(dom, &oob));
		T_OK(doca_urom_domain_set_workers(dom, &id, &w, 1));
		T_STATUS(doca_ctx_start(doca_urom_domain_as_ctx(dom)), DOCA_ERROR_IN_PROGRESS);
		T_EQ_INT(wait_started(doca_urom_domain_as_ctx(dom), s.pe, T_WAIT_MS),
			 DOCA_CTX_STATE_RUNNING);
		T_OK(doca_urom_domain_create(&dom2));
		T_OK(doca_pe_connect_ctx(s.pe, doca_urom_domain_as_ctx(dom2)));
		T_OK(doca_urom_domain_set_oob(dom2, &oob));
		T_OK(doca_urom_domain_set_workers(dom2, &id2, &w, 1));
		T_STATUS(doca_ctx_start(doca_urom_domain_as_ctx(dom2)), DOCA_ERROR_IN_USE);
		T_OK(doca_ctx_stop(doca_urom_domain_as_ctx(dom)));
		T_OK(doca_urom_domain_destroy(dom));
		/* free again: the second one starts now */
		T_STATUS(doca_ctx_start(doca_urom_domain_as_ctx(dom2)), DOCA_ERROR_IN_PROGRESS);
		T_EQ_INT(wait_started(doca_urom_domain_as_ctx(dom2), s.pe, T_WAIT_MS),
			 DOCA_CTX_STATE_RUNNING);
		T_OK(doca_ctx_stop(doca_urom_domain_as_ctx(dom2)));
		T_OK(doca_urom_domain_destroy(dom2));
	}
	/* stopped while starting (a 2-member OOB whose other member never comes): IDLE, reusable */
	{
		struct toob o2;
		struct toob_rank tr2;
		struct doca_urom_domain_oob_coll oob2 = oob;
		enum doca_ctx_states st2;

		toob_init(&o2, 2);
		tr2.o = &o2;
		tr2.rank = 0;
		oob2.coll_info = &tr2;
		oob2.n_oob_indexes = 2;
		T_OK(doca_urom_domain_create(&dom));
		T_OK(doca_pe_connect_ctx(s.pe, doca_urom_domain_as_ctx(dom)));
		T_OK(doca_urom_domain_set_oob(dom, &oob2));
		T_OK(doca_urom_domain_set_workers(dom, &id, &w, 1));
		T_STATUS(doca_ctx_start(doca_urom_domain_as_ctx(dom)), DOCA_ERROR_IN_PROGRESS);
		for (int k = 0; k < 50; k++)
			t_pe_step(s.pe, 2); /* into the OOB phase */
		T_OK(doca_ctx_get_state(doca_urom_domain_as_ctx(dom), &st2));
		T_EQ_INT(st2, DOCA_CTX_STATE_STARTING);
		T_OK(doca_ctx_stop(doca_urom_domain_as_ctx(dom)));
		T_EQ_INT(t_ctx_wait_state(doca_urom_domain_as_ctx(dom), s.pe, NULL,
					  DOCA_CTX_STATE_IDLE, T_WAIT_MS),
			 DOCA_CTX_STATE_IDLE);
		T_OK(doca_urom_domain_destroy(dom));
		/* the worker is free for the next domain */
		T_OK(doca_urom_domain_create(&dom));
		T_OK(doca_pe_connect_ctx(s.pe, doca_urom_domain_as_ctx(dom)));
		T_OK(doca_urom_domain_set_oob(dom, &oob));
		T_OK(doca_urom_domain_set_workers(dom, &id, &w, 1));
		T_STATUS(doca_ctx_start(doca_urom_domain_as_ctx(dom)), DOCA_ERROR_IN_PROGRESS);
		T_EQ_INT(wait_started(doca_urom_domain_as_ctx(dom), s.pe, T_WAIT_MS),
			 DOCA_CTX_STATE_RUNNING);
		T_OK(doca_ctx_stop(doca_urom_domain_as_ctx(dom)));
		T_OK(doca_urom_domain_destroy(dom));
		/* its worker stopped while the domain waits for the OOB: IO_FAILED, at once */
		{
			struct toob o3;
			struct toob_rank tr3 = {.o = &o3, .rank = 0};
			struct doca_urom_domain_oob_coll oob3 = oob2;
			struct doca_urom_worker *w3 = NULL;
			doca_error_t r;
			int64_t t0;

			toob_init(&o3, 2);
			oob3.coll_info = &tr3;
			T_OK(t_worker_start(&s, s.pe, &cfg, &w3));
			T_OK(doca_urom_domain_create(&dom));
			T_OK(doca_pe_connect_ctx(s.pe, doca_urom_domain_as_ctx(dom)));
			T_OK(doca_urom_domain_set_oob(dom, &oob3));
			T_OK(doca_urom_domain_set_workers(dom, &id, &w3, 1));
			T_STATUS(doca_ctx_start(doca_urom_domain_as_ctx(dom)),
				 DOCA_ERROR_IN_PROGRESS);
			for (int k = 0; k < 50; k++)
				t_pe_step(s.pe, 2);
			t0 = t_now_ms();
			r = doca_ctx_stop(doca_urom_worker_as_ctx(w3));
			T_TRUE(r == DOCA_SUCCESS || r == DOCA_ERROR_IN_PROGRESS);
			T_EQ_INT(wait_started(doca_urom_domain_as_ctx(dom), s.pe, 10000),
				 DOCA_CTX_STATE_IDLE);
			T_STATUS(sdp_ctx_get_last_error(doca_urom_domain_as_ctx(dom)),
				 DOCA_ERROR_IO_FAILED);
			T_TRUE(t_now_ms() - t0 < 5000);
			T_OK(doca_urom_domain_destroy(dom));
			T_EQ_INT(t_ctx_wait_state(doca_urom_worker_as_ctx(w3), s.pe, NULL,
						  DOCA_CTX_STATE_IDLE, T_WAIT_MS),
				 DOCA_CTX_STATE_IDLE);
			T_OK(doca_urom_worker_destroy(w3));
			toob_fini(&o3);
		}
		/* its worker SIGKILLed while the domain waits for the OOB: IO_FAILED, bounded */
		{
			struct toob o4;
			struct toob_rank tr4 = {.o = &o4, .rank = 0};
			struct doca_urom_domain_oob_coll oob4 = oob2;
			struct doca_urom_worker *w4 = NULL;
			pid_t before[T_UROMD_MAX_PIDS], after[T_UROMD_MAX_PIDS], victim = 0;
			int nb, na;
			int64_t t0;

			toob_init(&o4, 2);
			oob4.coll_info = &tr4;
			nb = t_uromd_worker_pids(&d, before, T_UROMD_MAX_PIDS);
			T_OK(t_worker_start(&s, s.pe, &cfg, &w4));
			na = t_uromd_worker_pids(&d, after, T_UROMD_MAX_PIDS);
			for (int i = 0; i < na && victim == 0; i++) {
				int j = 0;

				while (j < nb && before[j] != after[i])
					j++;
				if (j == nb)
					victim = after[i];
			}
			T_TRUE(victim > 0);
			T_OK(doca_urom_domain_create(&dom));
			T_OK(doca_pe_connect_ctx(s.pe, doca_urom_domain_as_ctx(dom)));
			T_OK(doca_urom_domain_set_oob(dom, &oob4));
			T_OK(doca_urom_domain_set_workers(dom, &id, &w4, 1));
			T_STATUS(doca_ctx_start(doca_urom_domain_as_ctx(dom)),
				 DOCA_ERROR_IN_PROGRESS);
			for (int k = 0; k < 50; k++)
				t_pe_step(s.pe, 2);
			t0 = t_now_ms();
			if (victim > 0)
				T_EQ_INT(kill(victim, SIGKILL), 0);
			T_EQ_INT(wait_started(doca_urom_domain_as_ctx(dom), s.pe, 10000),
				 DOCA_CTX_STATE_IDLE);
			T_STATUS(sdp_ctx_get_last_error(doca_urom_domain_as_ctx(dom)),
				 DOCA_ERROR_IO_FAILED);
			if (t_now_ms() - t0 > 5000)
				t_fail("a domain start whose worker was killed failed only after "
				       "%lld ms",
				       (long long)(t_now_ms() - t0));
			fprintf(stderr,
				"note: worker SIGKILLed during its domain's start: IO_FAILED "
				"after %lld ms\n",
				(long long)(t_now_ms() - t0));
			T_OK(doca_urom_domain_destroy(dom));
			t_worker_close(&s, s.pe, w4);
			toob_fini(&o4);
		}
		toob_fini(&o2);
	}
	/* a stopped worker */
	t_worker_close(&s, s.pe, w);
	T_OK(t_worker_start(&s, s.pe, &cfg, &w));
	T_OK(doca_urom_domain_create(&dom));
	T_OK(doca_pe_connect_ctx(s.pe, doca_urom_domain_as_ctx(dom)));
	T_OK(doca_urom_domain_set_oob(dom, &oob));
	T_OK(doca_urom_domain_set_workers(dom, &id, &w, 1));
	{
		doca_error_t r = doca_ctx_stop(doca_urom_worker_as_ctx(w));

		T_TRUE(r == DOCA_SUCCESS || r == DOCA_ERROR_IN_PROGRESS);
		T_EQ_INT(t_ctx_wait_state(doca_urom_worker_as_ctx(w), s.pe, NULL,
					  DOCA_CTX_STATE_IDLE, T_WAIT_MS),
			 DOCA_CTX_STATE_IDLE);
	}
	T_STATUS(doca_ctx_start(doca_urom_domain_as_ctx(dom)), DOCA_ERROR_BAD_STATE);
	T_OK(doca_urom_domain_destroy(dom));
	T_OK(doca_urom_worker_destroy(w));
	T_OK(doca_pe_destroy(pe2));
	t_svc_close(&s);
	toob_fini(&o);
}

/* ---- ranks as processes, over softdpu's TCP OOB ----------------------------------------------- */

#define PROC_VA(rank, b) (0x100000000ull * ((rank) + 1) + 0x10000ull * (b))
static const char proc_secret[] = "test_urom_domain-shared-secret!";

/*
 * One rank in a child process: its own service connection, worker and domain over the TCP
 * OOB (root 127.0.0.1:port). Buffers sit at fake addresses PROC_VA (a domain never touches
 * them) with memh/mkey bytes every rank can predict, so each rank checks every other rank's
 * segments. mode 1: take part in the first OOB round of the others' domain start, then exit (a
 * member that dies during everybody else's start). Exit status 0 = all checks passed; 10 + doca_error_t = the
 * domain start failed with that error.
 */
static int proc_rank(uint32_t rank, uint32_t n, uint16_t port, struct sdp_urom_oob *oob, int mode)
{
	struct sdp_urom_oob_params p = {.rank = rank,
					.size = n,
					.secret = proc_secret,
					.secret_len = sizeof(proc_secret),
					.timeout_ms = 20000};
	struct doca_urom_domain_oob_coll coll;
	struct doca_urom_worker *w = NULL;
	struct doca_urom_domain *dom = NULL;
	struct t_worker_cfg cfg = {.id = DOCA_UROM_WORKER_ID_ANY, .max_inflight = 16};
	struct probe_res *res = malloc(sizeof(*res));
	uint8_t memh[BUFS][BLOB], mkey[BUFS][BLOB];
	enum doca_ctx_states state;
	char root[64], seen[MAX_RANKS][DPROBE_ADDR_LEN];
	uint64_t id = 100 + rank;
	struct t_svc s;
	doca_error_t st;
	int bad = 0;

	snprintf(root, sizeof(root), "127.0.0.1:%u", port);
	p.root = root;
	if (oob == NULL && sdp_urom_oob_create(&p, &oob) != DOCA_SUCCESS)
		return 2;
	if (mode == 1) {
		/*
		 * Take part in the first round of the others' domain start (the 8-byte record
		 * sizes: announce a plausible one), then die before the second.
		 */
		uint64_t len = 100, all[MAX_RANKS];

		(void)sdp_urom_oob_allgather(oob, &len, all, sizeof(len));
		_exit(0);
	}
	if (res == NULL || t_svc_open(&s, 0) != DOCA_SUCCESS || svc_find_dprobe(&s) != 0)
		return 3;
	cfg.plugins = dprobe_id;
	if (t_worker_start(&s, s.pe, &cfg, &w) != DOCA_SUCCESS)
		return 4;
	sdp_urom_oob_coll(oob, &coll);
	if (doca_urom_domain_create(&dom) != DOCA_SUCCESS ||
	    doca_pe_connect_ctx(s.pe, doca_urom_domain_as_ctx(dom)) != DOCA_SUCCESS ||
	    doca_urom_domain_set_oob(dom, &coll) != DOCA_SUCCESS ||
	    doca_urom_domain_set_workers(dom, &id, &w, 1) != DOCA_SUCCESS ||
	    doca_urom_domain_set_buffers_count(dom, BUFS) != DOCA_SUCCESS)
		return 5;
	for (int b = 0; b < BUFS; b++) {
		blob_fill(memh[b], rank, b, 0);
		blob_fill(mkey[b], rank, b, 1);
		if (doca_urom_domain_add_buffer(dom, (void *)(uintptr_t)PROC_VA(rank, b), 4096,
						memh[b], BLOB, mkey[b], BLOB) != DOCA_SUCCESS)
			return 6;
	}
	if (doca_ctx_start(doca_urom_domain_as_ctx(dom)) != DOCA_ERROR_IN_PROGRESS)
		return 7;
	state = wait_started(doca_urom_domain_as_ctx(dom), s.pe, 60000);
	if (state != DOCA_CTX_STATE_RUNNING) {
		st = sdp_ctx_get_last_error(doca_urom_domain_as_ctx(dom));
		(void)doca_urom_domain_destroy(dom);
		t_worker_close(&s, s.pe, w);
		t_svc_close(&s);
		(void)sdp_urom_oob_destroy(oob);
		return 10 + (int)st;
	}
	for (uint32_t o = 0; o < n; o++) {
		if (probe(w, s.pe, DPROBE_ADDR, 100 + o, 0, 0, res) != DOCA_SUCCESS ||
		    res->n.status != DOCA_SUCCESS || memcmp(res->data, "dprobe-", 7) != 0) {
			bad++;
			continue;
		}
		memcpy(seen[o], res->data, DPROBE_ADDR_LEN);
		for (uint32_t k = 0; k < o; k++)
			bad += memcmp(seen[k], seen[o], DPROBE_ADDR_LEN) ==
			       0; /* distinct workers */
		for (int b = 0; b < BUFS; b++) {
			uint8_t want[BLOB];

			if (probe(w, s.pe, DPROBE_SEG, 100 + o, PROC_VA(o, b) + 4095, 0, res) !=
				    DOCA_SUCCESS ||
			    res->n.status != DOCA_SUCCESS) {
				bad++;
				continue;
			}
			blob_fill(want, o, b, 1);
			if (probe(w, s.pe, DPROBE_MKEY, 100 + o, 0, res->n.seg, res) !=
				    DOCA_SUCCESS ||
			    res->n.len != BLOB || memcmp(res->data, want, BLOB) != 0)
				bad++;
		}
		if (probe(w, s.pe, DPROBE_SEG, 100 + o, PROC_VA(o, 0) + 4096, 0, res) !=
			    DOCA_SUCCESS ||
		    res->n.status != DOCA_ERROR_NOT_FOUND)
			bad++;
	}
	/* nobody stops (and clears its worker's table) before everybody checked */
	if (sdp_urom_oob_allgather(oob, &bad, res->data, sizeof(bad)) != DOCA_SUCCESS)
		bad++;
	(void)doca_ctx_stop(doca_urom_domain_as_ctx(dom));
	(void)doca_urom_domain_destroy(dom);
	t_worker_close(&s, s.pe, w);
	t_svc_close(&s);
	(void)sdp_urom_oob_destroy(oob);
	free(res);
	return bad ? 1 : 0;
}

/* n ranks as processes; rank `dies` (if < n) leaves during the start. */
static void run_procs(uint32_t n, uint32_t dies, int want_status)
{
	struct sdp_urom_oob_params p = {.root = "127.0.0.1:0",
					.rank = 0,
					.size = n,
					.secret = proc_secret,
					.secret_len = sizeof(proc_secret),
					.timeout_ms = 20000};
	struct sdp_urom_oob *root = NULL;
	pid_t pids[MAX_RANKS];
	uint16_t port = 0;
	int64_t t0 = t_now_ms();

	if (n > 1) {
		T_OK(sdp_urom_oob_create(&p, &root));
		port = sdp_urom_oob_port(root);
	}
	for (uint32_t i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(proc_rank(i, n, port, i == 0 ? root : NULL, i == dies));
	}
	/* the parent's copy of rank 0's listener must not keep the port open */
	if (root != NULL)
		(void)sdp_urom_oob_destroy(root);
	for (uint32_t i = 0; i < n; i++) {
		int status = -1;

		if (!t_wait_child(pids[i], 90000, &status)) {
			t_fail("%u processes: rank %u did not exit", n, i);
			kill(pids[i], SIGKILL);
			continue;
		}
		if (i == dies)
			continue;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != want_status)
			t_fail("%u processes: rank %u exit status %d, expected %d", n, i,
			       WIFEXITED(status) ? WEXITSTATUS(status) : -1, want_status);
	}
	if (dies < n && t_now_ms() - t0 > 15000)
		t_fail("a dead member took %lld ms to fail the others' starts",
		       (long long)(t_now_ms() - t0));
}

static void test_processes(void)
{
	run_procs(2, UINT32_MAX, 0);
	run_procs(4, UINT32_MAX, 0);
	/* rank 2 of 3 joins the OOB and exits: the others fail with CONNECTION_RESET, at once */
	run_procs(3, 2, 10 + DOCA_ERROR_CONNECTION_RESET);
}

int main(void)
{
	const char *graph = getenv("UROM_PLUGIN_PATH"), *probe_dir = getenv("SDP_TEST_DPROBE_DIR");
	char path[4096];

	if (graph == NULL || probe_dir == NULL) {
		fprintf(stderr, "UROM_PLUGIN_PATH and SDP_TEST_DPROBE_DIR must be set\n");
		return T_EXIT_FAIL;
	}
	snprintf(path, sizeof(path), "%s;%s", graph, probe_dir);
	setenv("UROM_PLUGIN_PATH", path, 1);
	if (t_uromd_start(&d, NULL) != 0)
		return T_EXIT_FAIL;
	test_members();
	test_failures();
	test_wrong_state();
	test_processes();
	t_uromd_stop(&d);
	T_DONE();
}
