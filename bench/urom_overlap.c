/*
 * bench/urom_overlap: OSU-style non-blocking collective benchmark (issue 13): worker_coll's
 * collectives (the UROM workers move the data) against the MPI library's MPI_I* collectives,
 * in the same invocation, on the same ranks and the same buffers.
 *
 *   mpirun -np N urom_overlap [-s MIN] [-S MAX] [-c LIST] [-i ITERS] [-I ITERS_LARGE]
 *                             [-x WARMUP] [-X WARMUP_LARGE] [-t TEST_US] [-W spin|sleep]
 *                             [-R CPUS] [-C CPUS] [-E CPUS] [-T TIMEOUT_MS] [-G GUARD_S]
 *
 * -R CPUS (a comma list) pins rank r to the r-th CPU of the list (modulo its length); -C CPUS
 * pins rank r's worker likewise (doca_urom_worker_set_cpuset; the daemon's --cpuset must hold
 * them); -E CPUS starts the threads of the rank's softdpu host library (the export engine's
 * progress thread, any UCX thread) on the r-th CPU of that list instead of the rank's own (they
 * inherit the affinity of the thread that creates them).
 *
 * Each rank opens a service context, starts one worker (plugin worker_coll), exports its send
 * and receive buffers into a domain whose out-of-band allgather is MPI_Iallgather, and creates
 * one team of all ranks. Then, for each
 * collective of LIST (default ialltoall,iallreduce,iallgather,ibcast) and each power-of-two
 * size MIN .. MAX (default 1 KiB .. 4 MiB; size = OSU's: per-peer block for alltoall, each
 * rank's contribution for allgather, the vector for allreduce (doubles, sum) and bcast (root 0)):
 *   1. correctness: one softdpu collective on a rank-dependent pattern, compared byte for byte
 *      with the blocking MPI collective's result; a mismatch aborts the whole job (MPI_Abort);
 *   2. for softdpu (urom_coll_* + urom_coll_test/urom_coll_wait) and MPI (MPI_I* + MPI_Test),
 *      the OSU method (osu_coll.c): t_pure = mean of start + wait with no compute; then start,
 *      a dummy compute of about t_pure (calibrated busy arithmetic that calls no library; with
 *      -t TEST_US one test call every TEST_US us of compute, timed as t_test), wait; t_overall is
 *      the mean of that iteration, t_cpu the mean compute time (tests included). A barrier
 *      (not timed) follows every iteration, as in OSU. Every time is the maximum over ranks
 *      (MPI_Reduce MAX; OSU averages) and
 *        overlap% = max(0, 100 * (1 - (t_overall - (t_cpu - t_test)) / t_pure)).
 *      The compute target is the pure time's maximum over ranks, the same on every rank.
 * Waits: -W spin (default) polls urom_coll_test until completion, as MPI_Wait polls; -W sleep
 * uses urom_coll_wait, which sleeps on the PE's notification handle while idle. MPI's wait is
 * an MPI_Test loop. Every wait is bounded by -T (default 30000 ms); past it the job aborts, and
 * SIGALRM after -G seconds (default 900) ends a rank that hangs elsewhere.
 * Prints (rank 0) one "row" line per collective and size:
 *   row COLL SIZE ITERS sd_pure sd_overall sd_cpu sd_test sd_overlap
 *       mpi_pure mpi_overall mpi_cpu mpi_test mpi_overlap ratio(sd_pure/mpi_pure)
 *       sd_init sd_wait mpi_init mpi_wait
 * (times in us; init = the start call, wait = the wait after the compute, both in the
 * overlapped loop). The service is found as any host program finds it
 * (SOFTDPU_UROM_SERVICE_ADDR, ...); bench/urom_overlap.sh starts a private daemon and mpirun.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "doca_ctx.h"
#include "doca_error.h"
#include "doca_pe.h"
#include "doca_urom.h"
#include "softdpu/urom_mem.h"
#include <ucp/api/ucp.h>
#include "urom_coll.h"

#include "overlap_compute.h"

#define TEAM_TAG 0x0f5eull

enum coll {
	C_ALLTOALL,
	C_ALLREDUCE,
	C_ALLGATHER,
	C_BCAST,
	C_COUNT
};
static const char *const coll_names[C_COUNT] = {"ialltoall", "iallreduce", "iallgather", "ibcast"};

enum impl {
	I_SD,
	I_MPI
};

static struct {
	size_t min, max, large_at;
	long iters, iters_large, warm, warm_large;
	double test_us;
	int spin;
	int rcpus[UROM_COLL_MAX_MEMBERS], nrcpus;
	int wcpus[UROM_COLL_MAX_MEMBERS], nwcpus;
	int ecpus[UROM_COLL_MAX_MEMBERS], necpus;
	int timeout_ms;
	unsigned guard_s;
	unsigned mask;
} cfg = {
	.min = 1024,
	.max = 4u << 20,
	.large_at = 8192,
	.iters = 1000,
	.iters_large = 100,
	.warm = 200,
	.warm_large = 10,
	.spin = 1,
	.timeout_ms = 30000,
	.guard_s = 900,
	.mask = (1u << C_COUNT) - 1,
};

static int rank, nranks;
static struct doca_pe *pe;
static struct doca_urom_service *svc;
static struct doca_urom_worker *worker;
static struct doca_urom_domain *dom;
static struct sdp_urom_mem *mem[2];
static struct urom_coll_team *team;
static uint8_t *sbuf, *rbuf, *cbuf;
static size_t buflen;
static char rcpus_s[256], wcpus_s[256], ecpus_s[256] = "-";

static void die(const char *what, doca_error_t st)
{
	fprintf(stderr, "urom_overlap: rank %d: %s: %s\n", rank, what, doca_error_get_name(st));
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 3);
	_exit(3);
}

static void on_alarm(int sig)
{
	static const char msg[] = "urom_overlap: guard timer expired, giving up\n";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(124);
}

/* ---- one collective, either way ------------------------------------------------------------ */

struct req {
	enum impl impl;
	struct urom_coll_req *sd;
	MPI_Request mpi;
	int done;
};

/* bytes of the result in rbuf */
static size_t result_len(enum coll c, size_t size)
{
	return c == C_ALLTOALL || c == C_ALLGATHER ? size * (size_t)nranks : size;
}

static void start(enum impl impl, enum coll c, size_t size, struct req *r)
{
	doca_error_t st = DOCA_SUCCESS;
	double deadline = now_us() + cfg.timeout_ms * 1e3;
	int rc = MPI_SUCCESS;

	r->impl = impl;
	r->done = 0;
	r->sd = NULL;
	if (impl == I_MPI) {
		switch (c) {
		case C_ALLTOALL:
			rc = MPI_Ialltoall(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE,
					   MPI_COMM_WORLD, &r->mpi);
			break;
		case C_ALLREDUCE:
			rc = MPI_Iallreduce(sbuf, rbuf, (int)(size / 8), MPI_DOUBLE, MPI_SUM,
					    MPI_COMM_WORLD, &r->mpi);
			break;
		case C_ALLGATHER:
			rc = MPI_Iallgather(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE,
					    MPI_COMM_WORLD, &r->mpi);
			break;
		default:
			rc = MPI_Ibcast(rbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD, &r->mpi);
			break;
		}
		if (rc != MPI_SUCCESS)
			die("MPI collective start", DOCA_ERROR_IO_FAILED);
		return;
	}
	do {
		switch (c) {
		case C_ALLTOALL:
			st = urom_coll_alltoall(team, sbuf, rbuf, size, UROM_COLL_UINT8, &r->sd);
			break;
		case C_ALLREDUCE:
			st = urom_coll_allreduce(team, sbuf, rbuf, size / 8, UROM_COLL_DOUBLE,
						 UROM_COLL_SUM, &r->sd);
			break;
		case C_ALLGATHER:
			st = urom_coll_allgather(team, sbuf, rbuf, size, UROM_COLL_UINT8, &r->sd);
			break;
		default:
			/* the root passes its rbuf as sbuf, as MPI_Ibcast's one buffer */
			st = urom_coll_bcast(team, rbuf, rbuf, size, UROM_COLL_UINT8, 0, &r->sd);
			break;
		}
		if (st == DOCA_ERROR_AGAIN)
			(void)doca_pe_progress(pe);
	} while (st == DOCA_ERROR_AGAIN && now_us() < deadline);
	if (st != DOCA_SUCCESS)
		die("urom_coll start", st);
}

/* One test call; 1 when the collective is complete. */
static int test(struct req *r)
{
	doca_error_t st;
	int flag = 0;

	if (r->done)
		return 1;
	if (r->impl == I_MPI) {
		if (MPI_Test(&r->mpi, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			die("MPI_Test", DOCA_ERROR_IO_FAILED);
		r->done = flag;
		return flag;
	}
	st = urom_coll_test(r->sd);
	if (st == DOCA_ERROR_IN_PROGRESS)
		return 0;
	r->sd = NULL;
	if (st != DOCA_SUCCESS)
		die("urom_coll_test", st);
	r->done = 1;
	return 1;
}

static void wait_req(struct req *r)
{
	double deadline;
	doca_error_t st;

	if (r->done)
		return;
	if (r->impl == I_SD && !cfg.spin) {
		st = urom_coll_wait(r->sd, cfg.timeout_ms);
		if (st != DOCA_SUCCESS)
			die("urom_coll_wait", st);
		r->sd = NULL;
		r->done = 1;
		return;
	}
	deadline = now_us() + cfg.timeout_ms * 1e3;
	while (!test(r))
		if (now_us() > deadline)
			die("wait (bounded by -T)", DOCA_ERROR_TIME_OUT);
}

/* ---- correctness: softdpu's result against the blocking MPI collective's ------------------- */

static void fill(enum coll c, size_t size)
{
	if (c == C_ALLREDUCE) {
		double *d = (double *)sbuf;

		/* small integers: every summation order gives the same bits */
		for (size_t i = 0; i < size / 8; i++)
			d[i] = (double)((rank + 1) * (int)(i % 1021)) - 300.0;
	} else if (c == C_BCAST) {
		for (size_t i = 0; i < size; i++)
			rbuf[i] = rank == 0 ? (uint8_t)(i * 7 + 3 + i / 4093) : 0;
	} else {
		size_t n = c == C_ALLTOALL ? size * (size_t)nranks : size;

		for (size_t i = 0; i < n; i++)
			sbuf[i] = (uint8_t)(rank * 29 + i * 13 + i / 251);
	}
}

static void check(enum coll c, size_t size)
{
	size_t len = result_len(c, size);
	struct req r;
	int rc, bad = 0, anybad = 0;
	size_t at = 0;

	fill(c, size);
	if (c != C_BCAST)
		memset(rbuf, 0xee, len);
	start(I_SD, c, size, &r);
	wait_req(&r);
	memcpy(cbuf, rbuf, len);
	MPI_Barrier(MPI_COMM_WORLD);
	fill(c, size);
	if (c != C_BCAST)
		memset(rbuf, 0x5a, len);
	switch (c) {
	case C_ALLTOALL:
		rc = MPI_Alltoall(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE,
				  MPI_COMM_WORLD);
		break;
	case C_ALLREDUCE:
		rc = MPI_Allreduce(sbuf, rbuf, (int)(size / 8), MPI_DOUBLE, MPI_SUM,
				   MPI_COMM_WORLD);
		break;
	case C_ALLGATHER:
		rc = MPI_Allgather(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE,
				   MPI_COMM_WORLD);
		break;
	default:
		rc = MPI_Bcast(rbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
		break;
	}
	if (rc != MPI_SUCCESS)
		die("MPI reference collective", DOCA_ERROR_IO_FAILED);
	if (memcmp(cbuf, rbuf, len) != 0) {
		while (at < len && cbuf[at] == rbuf[at])
			at++;
		bad = 1;
	}
	MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
	if (bad)
		fprintf(stderr,
			"urom_overlap: MISMATCH rank %d %s size %zu: byte %zu of %zu is %#x, "
			"MPI has %#x\n",
			rank, coll_names[c], size, at, len, cbuf[at], rbuf[at]);
	if (anybad) {
		fflush(stderr);
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0)
			fprintf(stderr,
				"urom_overlap: softdpu %s result differs from MPI's at "
				"size %zu: aborting\n",
				coll_names[c], size);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
}

/* ---- the OSU loops --------------------------------------------------------------------------- */

struct times {
	double pure, overall, cpu, test, init, wait;
};

static double pure_loop(enum impl impl, enum coll c, size_t size, long iters, long warm)
{
	double sum = 0;
	struct req r;

	MPI_Barrier(MPI_COMM_WORLD);
	for (long i = 0; i < iters + warm; i++) {
		double t0 = now_us();

		start(impl, c, size, &r);
		wait_req(&r);
		if (i >= warm)
			sum += now_us() - t0;
		MPI_Barrier(MPI_COMM_WORLD);
	}
	return sum / (double)iters;
}

/* the compute of about target_us, a test every cfg.test_us when set (*t_test: their time) */
static double compute(struct req *r, double target_us, double *t_test)
{
	long n = (long)(target_us * chunks_per_us + 0.5);
	double t0 = now_us(), next;

	*t_test = 0;
	if (cfg.test_us <= 0) {
		for (long k = 0; k < n; k++)
			chunk();
		return now_us() - t0;
	}
	next = t0 + cfg.test_us;
	for (long k = 0; k < n; k++) {
		chunk();
		if (!r->done && now_us() >= next) {
			double a = now_us();

			(void)test(r);
			next = now_us();
			*t_test += next - a;
			next += cfg.test_us;
		}
	}
	return now_us() - t0;
}

static void overlap_loop(enum impl impl, enum coll c, size_t size, long iters, long warm,
			 double target_us, struct times *t)
{
	struct req r;

	t->overall = t->cpu = t->test = t->init = t->wait = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	for (long i = 0; i < iters + warm; i++) {
		double t0 = now_us(), t1, t2, t3, tc, tt;

		start(impl, c, size, &r);
		t1 = now_us();
		tc = compute(&r, target_us, &tt);
		t2 = now_us();
		wait_req(&r);
		t3 = now_us();
		if (i >= warm) {
			t->overall += t3 - t0;
			t->cpu += tc;
			t->test += tt;
			t->init += t1 - t0;
			t->wait += t3 - t2;
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	t->overall /= (double)iters;
	t->cpu /= (double)iters;
	t->test /= (double)iters;
	t->init /= (double)iters;
	t->wait /= (double)iters;
}

static double overlap_pct(const struct times *t)
{
	double o = 100.0 * (1.0 - (t->overall - (t->cpu - t->test)) / t->pure);

	return o < 0 ? 0 : o;
}

static void measure(enum impl impl, enum coll c, size_t size, long iters, long warm,
		    struct times *t)
{
	double local[6], max[6], pure_max = 0;

	fill(c, size);
	t->pure = pure_loop(impl, c, size, iters, warm);
	MPI_Allreduce(&t->pure, &pure_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	overlap_loop(impl, c, size, iters, warm, pure_max, t);
	local[0] = t->pure, local[1] = t->overall, local[2] = t->cpu, local[3] = t->test;
	local[4] = t->init, local[5] = t->wait;
	MPI_Reduce(local, max, 6, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	t->pure = max[0], t->overall = max[1], t->cpu = max[2], t->test = max[3];
	t->init = max[4], t->wait = max[5];
}

/* ---- setup ----------------------------------------------------------------------------------- */

static doca_error_t oob_allgather(void *s, void *r, size_t len, void *info, void **req)
{
	MPI_Request *mr = calloc(1, sizeof(*mr));

	(void)info;
	if (mr == NULL)
		return DOCA_ERROR_NO_MEMORY;
	if (len > (size_t)INT32_MAX || MPI_Iallgather(s, (int)len, MPI_BYTE, r, (int)len, MPI_BYTE,
						      MPI_COMM_WORLD, mr) != MPI_SUCCESS) {
		free(mr);
		return DOCA_ERROR_IO_FAILED;
	}
	*req = mr;
	return DOCA_SUCCESS;
}

static doca_error_t oob_test(void *req)
{
	int flag = 0;

	if (MPI_Test(req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
		return DOCA_ERROR_IO_FAILED;
	return flag ? DOCA_SUCCESS : DOCA_ERROR_IN_PROGRESS;
}

static doca_error_t oob_free(void *req)
{
	free(req);
	return DOCA_SUCCESS;
}

static void wait_state(struct doca_ctx *ctx, enum doca_ctx_states want, const char *what)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_IDLE;
	double deadline = now_us() + cfg.timeout_ms * 1e3;

	while (doca_ctx_get_state(ctx, &st) == DOCA_SUCCESS && st != want && now_us() < deadline)
		(void)doca_pe_progress(pe);
	if (st != want)
		die(what, DOCA_ERROR_TIME_OUT);
}

#define CHK(call, what)                                                                            \
	do {                                                                                       \
		doca_error_t st_ = (call);                                                         \
		if (st_ != DOCA_SUCCESS)                                                           \
			die(what, st_);                                                            \
	} while (0)

static void setup(void)
{
	const struct doca_urom_service_plugin_info *plugins;
	struct doca_urom_domain_oob_coll oob = {.allgather = oob_allgather,
						.req_test = oob_test,
						.req_free = oob_free,
						.coll_info = NULL,
						.n_oob_indexes = (uint32_t)nranks,
						.oob_index = (uint32_t)rank};
	uint64_t plugin = 0, id = (uint64_t)rank;
	size_t n = 0;
	doca_error_t st;

	buflen = (cfg.max * (size_t)nranks + 4095) / 4096 * 4096;
	sbuf = aligned_alloc(4096, buflen);
	rbuf = aligned_alloc(4096, buflen);
	cbuf = malloc(buflen);
	if (sbuf == NULL || rbuf == NULL || cbuf == NULL)
		die("buffers", DOCA_ERROR_NO_MEMORY);
	memset(sbuf, 0, buflen);
	memset(rbuf, 0, buflen);

	CHK(doca_pe_create(&pe), "doca_pe_create");
	CHK(doca_urom_service_create(&svc), "service create");
	CHK(doca_pe_connect_ctx(pe, doca_urom_service_as_ctx(svc)), "service connect");
	CHK(doca_ctx_start(doca_urom_service_as_ctx(svc)), "service start");
	CHK(doca_urom_service_get_plugins_list(svc, &plugins, &n), "plugin list");
	for (size_t i = 0; i < n; i++)
		if (strcmp(plugins[i].plugin_name, "worker_coll") == 0) {
			plugin = plugins[i].id;
			CHK(urom_coll_init(plugins[i].id, plugins[i].version), "urom_coll_init");
		}
	if (plugin == 0)
		die("worker_coll is not on the service's plugin path", DOCA_ERROR_NOT_FOUND);

	CHK(doca_urom_worker_create(&worker), "worker create");
	CHK(doca_urom_worker_set_service(worker, svc), "worker set service");
	CHK(doca_pe_connect_ctx(pe, doca_urom_worker_as_ctx(worker)), "worker connect");
	CHK(doca_urom_worker_set_id(worker, DOCA_UROM_WORKER_ID_ANY), "worker id");
	CHK(doca_urom_worker_set_max_inflight_tasks(worker, 64), "worker inflight");
	CHK(doca_urom_worker_set_plugins(worker, plugin), "worker plugins");
	if (cfg.nwcpus > 0) {
		doca_cpu_set_t set;

		DOCA_CPU_ZERO(&set);
		DOCA_CPU_SET(cfg.wcpus[rank % cfg.nwcpus], &set);
		CHK(doca_urom_worker_set_cpuset(worker, set), "worker cpuset");
	}
	st = doca_ctx_start(doca_urom_worker_as_ctx(worker));
	if (st != DOCA_SUCCESS && st != DOCA_ERROR_IN_PROGRESS)
		die("worker start", st);
	wait_state(doca_urom_worker_as_ctx(worker), DOCA_CTX_STATE_RUNNING, "worker running");

	CHK(doca_urom_domain_create(&dom), "domain create");
	CHK(doca_pe_connect_ctx(pe, doca_urom_domain_as_ctx(dom)), "domain connect");
	CHK(doca_urom_domain_set_oob(dom, &oob), "domain oob");
	CHK(doca_urom_domain_set_workers(dom, &id, &worker, 1), "domain workers");
	CHK(doca_urom_domain_set_buffers_count(dom, 2), "domain buffers");
	CHK(sdp_urom_domain_export_buffer(dom, sbuf, buflen, &mem[0]), "export sbuf");
	CHK(sdp_urom_domain_export_buffer(dom, rbuf, buflen, &mem[1]), "export rbuf");
	st = doca_ctx_start(doca_urom_domain_as_ctx(dom));
	if (st != DOCA_SUCCESS && st != DOCA_ERROR_IN_PROGRESS)
		die("domain start", st);
	wait_state(doca_urom_domain_as_ctx(dom), DOCA_CTX_STATE_RUNNING, "domain running");

	CHK(urom_coll_team_create_strided(worker, pe, TEAM_TAG, id, 0, 1, (uint32_t)nranks, &team),
	    "team create");
	CHK(urom_coll_team_wait_ready(team, cfg.timeout_ms), "team ready");
}

static void teardown(void)
{
	MPI_Barrier(MPI_COMM_WORLD);
	CHK(urom_coll_team_destroy(team, cfg.timeout_ms), "team destroy");
	/* nobody's worker touches the buffers any more once every team is gone */
	MPI_Barrier(MPI_COMM_WORLD);
	(void)doca_ctx_stop(doca_urom_domain_as_ctx(dom));
	(void)doca_urom_domain_destroy(dom);
	for (int k = 0; k < 2; k++)
		(void)sdp_urom_mem_unexport(mem[k]);
	(void)doca_ctx_stop(doca_urom_worker_as_ctx(worker));
	wait_state(doca_urom_worker_as_ctx(worker), DOCA_CTX_STATE_IDLE, "worker stop");
	(void)doca_urom_worker_destroy(worker);
	(void)doca_ctx_stop(doca_urom_service_as_ctx(svc));
	(void)doca_urom_service_destroy(svc);
	(void)doca_pe_destroy(pe);
	free(sbuf);
	free(rbuf);
	free(cbuf);
}

static unsigned parse_colls(const char *s)
{
	unsigned m = 0;
	char *copy = strdup(s), *save = NULL;

	for (char *tok = strtok_r(copy, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		int found = 0;

		for (int c = 0; c < C_COUNT; c++)
			if (strcmp(tok, coll_names[c]) == 0 || strcmp(tok, coll_names[c] + 1) == 0)
				m |= 1u << c, found = 1;
		if (!found) {
			m = 0;
			break;
		}
	}
	free(copy);
	return m;
}

/* a comma list of CPU numbers into cpus[]; its length, or -1 */
static int parse_cpus(const char *s, int *cpus)
{
	int n = 0;

	while (*s != '\0') {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s || v < 0 || v >= CPU_SETSIZE || n == UROM_COLL_MAX_MEMBERS ||
		    (*end != ',' && *end != '\0'))
			return -1;
		cpus[n++] = (int)v;
		s = *end == ',' ? end + 1 : end;
	}
	return n;
}

/* pin the calling thread (only) to the rank's CPU of list */
static void pin_self(const int *list, int n)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(list[rank % n], &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		die("sched_setaffinity", DOCA_ERROR_OPERATING_SYSTEM);
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [-s MIN] [-S MAX] [-c ialltoall,iallreduce,iallgather,ibcast] "
		"[-i ITERS] [-I ITERS_LARGE] [-x WARMUP] [-X WARMUP_LARGE] [-L LARGE_FROM] "
		"[-t TEST_US] [-W spin|sleep] [-R CPUS] [-C CPUS] [-E CPUS] [-T TIMEOUT_MS] [-G GUARD_S]\n",
		argv0);
}

int main(int argc, char **argv)
{
	int opt;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	while ((opt = getopt(argc, argv, "s:S:c:i:I:x:X:L:t:W:R:C:E:T:G:")) != -1) {
		switch (opt) {
		case 's':
			cfg.min = strtoull(optarg, NULL, 0);
			break;
		case 'S':
			cfg.max = strtoull(optarg, NULL, 0);
			break;
		case 'c':
			cfg.mask = parse_colls(optarg);
			break;
		case 'i':
			cfg.iters = strtol(optarg, NULL, 0);
			break;
		case 'I':
			cfg.iters_large = strtol(optarg, NULL, 0);
			break;
		case 'x':
			cfg.warm = strtol(optarg, NULL, 0);
			break;
		case 'X':
			cfg.warm_large = strtol(optarg, NULL, 0);
			break;
		case 'L':
			cfg.large_at = strtoull(optarg, NULL, 0);
			break;
		case 't':
			cfg.test_us = strtod(optarg, NULL);
			break;
		case 'W':
			cfg.spin = strcmp(optarg, "sleep") != 0;
			break;
		case 'R':
			snprintf(rcpus_s, sizeof(rcpus_s), "%s", optarg);
			cfg.nrcpus = parse_cpus(optarg, cfg.rcpus);
			break;
		case 'C':
			snprintf(wcpus_s, sizeof(wcpus_s), "%s", optarg);
			cfg.nwcpus = parse_cpus(optarg, cfg.wcpus);
			break;
		case 'E':
			snprintf(ecpus_s, sizeof(ecpus_s), "%s", optarg);
			cfg.necpus = parse_cpus(optarg, cfg.ecpus);
			break;
		case 'T':
			cfg.timeout_ms = atoi(optarg);
			break;
		case 'G':
			cfg.guard_s = (unsigned)strtoul(optarg, NULL, 0);
			break;
		default:
			if (rank == 0)
				usage(argv[0]);
			MPI_Finalize();
			return 2;
		}
	}
	if (cfg.min < 8 || cfg.max < cfg.min || cfg.max > (64u << 20) || cfg.mask == 0 ||
	    cfg.iters <= 0 || cfg.iters_large <= 0 || cfg.warm < 0 || cfg.warm_large < 0 ||
	    cfg.timeout_ms <= 0 || nranks > UROM_COLL_MAX_MEMBERS || cfg.nrcpus < 0 ||
	    cfg.nwcpus < 0 || cfg.necpus < 0) {
		if (rank == 0)
			usage(argv[0]);
		MPI_Finalize();
		return 2;
	}
	if (cfg.guard_s > 0) {
		signal(SIGALRM, on_alarm);
		alarm(cfg.guard_s);
	}
	/* threads setup() starts (the export engine's, UCX's) inherit the -E CPU, not the rank's */
	if (cfg.necpus > 0)
		pin_self(cfg.ecpus, cfg.necpus);
	else if (cfg.nrcpus > 0)
		pin_self(cfg.rcpus, cfg.nrcpus);
	setup();
	if (cfg.nrcpus > 0)
		pin_self(cfg.rcpus, cfg.nrcpus);
	calibrate();
	if (rank == 0) {
		char mpiv[MPI_MAX_LIBRARY_VERSION_STRING] = "";
		int len = 0;

		MPI_Get_library_version(mpiv, &len);
		mpiv[strcspn(mpiv, ",\n")] = '\0';
		printf("# urom_overlap: %d ranks, wait %s, test every %.1f us (0 = none), ranks on "
		       "%s%s, workers on %s%s, host library threads on CPU list -E %s, iters "
		       "%ld/%ld (large from %zu B), warmup %ld/%ld, compute %.1f chunks/us\n",
		       nranks, cfg.spin ? "spin" : "sleep", cfg.test_us,
		       cfg.nrcpus > 0 ? "CPU list -R " : "any CPU", cfg.nrcpus > 0 ? rcpus_s : "",
		       cfg.nwcpus > 0 ? "CPU list -C " : "any CPU", cfg.nwcpus > 0 ? wcpus_s : "",
		       ecpus_s, cfg.iters, cfg.iters_large, cfg.large_at, cfg.warm, cfg.warm_large,
		       chunks_per_us);
		printf("# lib: %s; UCX %s\n", mpiv, ucp_get_version_string());
		printf("# row COLL SIZE ITERS sd_pure sd_overall sd_cpu sd_test sd_overlap mpi_pure "
		       "mpi_overall mpi_cpu mpi_test mpi_overlap ratio sd_init sd_wait mpi_init mpi_wait "
		       "(us, %%; max over ranks)\n");
		fflush(stdout);
	}
	for (int c = 0; c < C_COUNT; c++) {
		if (!(cfg.mask & (1u << c)))
			continue;
		for (size_t size = cfg.min; size <= cfg.max; size *= 2) {
			int large = size >= cfg.large_at;
			long iters = large ? cfg.iters_large : cfg.iters;
			long warm = large ? cfg.warm_large : cfg.warm;
			struct times sd, mpi;

			check((enum coll)c, size);
			measure(I_SD, (enum coll)c, size, iters, warm, &sd);
			measure(I_MPI, (enum coll)c, size, iters, warm, &mpi);
			if (rank == 0) {
				printf("row %s %zu %ld %.2f %.2f %.2f %.2f %.1f %.2f %.2f %.2f %.2f "
				       "%.1f %.2f %.2f %.2f %.2f %.2f\n",
				       coll_names[c], size, iters, sd.pure, sd.overall, sd.cpu,
				       sd.test, overlap_pct(&sd), mpi.pure, mpi.overall, mpi.cpu,
				       mpi.test, overlap_pct(&mpi), sd.pure / mpi.pure, sd.init,
				       sd.wait, mpi.init, mpi.wait);
				fflush(stdout);
			}
		}
	}
	teardown();
	MPI_Finalize();
	return 0;
}
