/*
 * Integration: the worker_coll plugin end to end (the seed's ladder step 3). N ranks
 * (argv[2]: 2 or 4 forked processes), each with its own service connection, a worker running
 * worker_coll and a started domain over softdpu's TCP OOB into which each rank exported one
 * buffer (control area, then the send area SOFF and the receive area ROFF at the same offsets
 * on every rank). Every rank checks its own memory after every collective against a
 * reference computed on the host from every rank's (deterministic) contribution, the bytes
 * after the result unchanged and its send area untouched:
 * - allreduce: sum int64 and double, max int32 at 1 element, an odd count and 1 MiB; every
 *   op on every type it applies to at an odd count; in place (sbuf == rbuf);
 * - alltoall, allgather, bcast (two roots) at 1 element, an odd count and 1 MiB; barriers;
 * - refusals on every rank: unknown collective / type / op, band / bor / bxor on double and
 *   float, count 0, a buffer over the control area, a count too large for the segment, and
 *   counts that differ between ranks: INVALID_VALUE, receive area unchanged; a collective
 *   afterwards still works.
 * argv[1]: the plugin directories for the private daemon; argv[3] "tcp": UCX_TLS=tcp.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <sys/wait.h>

#include "doca_buf.h"
#include "softdpu/urom_mem.h"
#include "softdpu/urom_oob.h"
#include "t_urom.h"
#include "t_uromd.h"
#include "urom_coll.h"

#define MAXR 4
#define SOFF 4096u
#define ROFF (SOFF + (2u << 20))
#define AREA (2u << 20)
#define BUF (ROFF + AREA)
#define MIB (1u << 20)
#define GUARD 0xeeu
#define WAIT_MS 60000

struct rank {
	uint32_t rank, n;
	struct sdp_urom_oob *oob;
	struct t_svc s;
	struct doca_urom_worker *w;
	struct doca_urom_domain *dom;
	struct sdp_urom_mem *mem;
	uint8_t *buf;
	uint64_t seq; /* data pattern seed, advanced per case */
};

static struct t_uromd d;
static const char secret[] = "test_urom_coll shared secret";

#define RCHECK(r, cond)                                                                            \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "rank %u: check failed at line %d: %s\n", (r)->rank,       \
				__LINE__, #cond);                                                  \
			return -1;                                                                 \
		}                                                                                  \
	} while (0)

static size_t esize(int dt)
{
	return dt == UROM_COLL_INT32 || dt == UROM_COLL_UINT32 || dt == UROM_COLL_FLOAT ? 4 : 8;
}

/* Contribution of rank r at element i: a small integer (products stay in range). */
static int64_t gen(uint32_t r, size_t i, uint64_t seq, int op)
{
	int64_t x = (int64_t)((r * 131u + i * 17u + seq * 7u) % 201u) - 100;

	return op == UROM_COLL_PROD ? x % 9 : x;
}

/* Store value x as element i of type dt at p. */
static void put_elem(uint8_t *p, int dt, size_t i, int64_t x)
{
	switch (dt) {
	case UROM_COLL_INT32:
		((int32_t *)p)[i] = (int32_t)x;
		break;
	case UROM_COLL_INT64:
		((int64_t *)p)[i] = x;
		break;
	case UROM_COLL_UINT32:
		((uint32_t *)p)[i] = (uint32_t)(x + 100);
		break;
	case UROM_COLL_UINT64:
		((uint64_t *)p)[i] = (uint64_t)(x + 100) << 20;
		break;
	case UROM_COLL_FLOAT:
		((float *)p)[i] = (float)x * 0.5f;
		break;
	default:
		((double *)p)[i] = (double)x * 0.25;
		break;
	}
}

#define FOLD(T)                                                                                    \
	do {                                                                                       \
		T a, b;                                                                            \
		put_elem((uint8_t *)&a, dt, 0, gen(0, i, seq, op));                                \
		for (uint32_t r = 1; r < n; r++) {                                                 \
			put_elem((uint8_t *)&b, dt, 0, gen(r, i, seq, op));                        \
			a = op == UROM_COLL_SUM	 ? (T)(a + b) :                                    \
			    op == UROM_COLL_PROD ? (T)(a * b) :                                    \
			    op == UROM_COLL_MIN	 ? (b < a ? b : a) :                               \
						   (b > a ? b : a);                                 \
		}                                                                                  \
		memcpy(out, &a, sizeof(a));                                                        \
	} while (0)

#define FOLD_BITS(T)                                                                               \
	do {                                                                                       \
		T a, b;                                                                            \
		put_elem((uint8_t *)&a, dt, 0, gen(0, i, seq, op));                                \
		for (uint32_t r = 1; r < n; r++) {                                                 \
			put_elem((uint8_t *)&b, dt, 0, gen(r, i, seq, op));                        \
			a = op == UROM_COLL_BAND ? (T)(a & b) :                                    \
			    op == UROM_COLL_BOR	 ? (T)(a | b) :                                    \
						   (T)(a ^ b);                                      \
		}                                                                                  \
		memcpy(out, &a, sizeof(a));                                                        \
	} while (0)

/* Reference of element i of an allreduce over n ranks, in member order, into out. */
static void ref_elem(int dt, int op, uint32_t n, size_t i, uint64_t seq, void *out)
{
	int bits = op >= UROM_COLL_BAND;

	switch (dt) {
	case UROM_COLL_INT32:
		if (bits)
			FOLD_BITS(uint32_t);
		else if (op == UROM_COLL_SUM || op == UROM_COLL_PROD)
			FOLD(uint32_t); /* wraps like the worker */
		else
			FOLD(int32_t);
		break;
	case UROM_COLL_INT64:
		if (bits)
			FOLD_BITS(uint64_t);
		else if (op == UROM_COLL_SUM || op == UROM_COLL_PROD)
			FOLD(uint64_t);
		else
			FOLD(int64_t);
		break;
	case UROM_COLL_UINT32:
		if (bits)
			FOLD_BITS(uint32_t);
		else
			FOLD(uint32_t);
		break;
	case UROM_COLL_UINT64:
		if (bits)
			FOLD_BITS(uint64_t);
		else
			FOLD(uint64_t);
		break;
	case UROM_COLL_FLOAT:
		FOLD(float);
		break;
	default:
		FOLD(double);
		break;
	}
}

static uint32_t word(uint32_t from, uint32_t to, size_t k, uint64_t seq)
{
	return (from << 28) ^ (to << 24) ^ (uint32_t)(k * 2654435761u) ^ (uint32_t)seq;
}

/* Receive area to the guard, send area to fill. */
static void reset(struct rank *r)
{
	memset(r->buf + ROFF, GUARD, AREA);
}

static int guard_ok(const struct rank *r, size_t from)
{
	for (size_t k = ROFF + from; k < BUF; k++) {
		if (r->buf[k] != GUARD) {
			fprintf(stderr, "rank %u: byte %zu after the result changed\n", r->rank,
				k - ROFF);
			return 0;
		}
	}
	return 1;
}

static int allreduce_case(struct rank *r, int dt, int op, size_t count, int in_place)
{
	uint8_t *s = r->buf + SOFF, *d = in_place ? s : r->buf + ROFF;
	size_t es = esize(dt), len = count * es;
	uint8_t ref[8];
	uint64_t seq = ++r->seq;

	reset(r);
	for (size_t i = 0; i < count; i++)
		put_elem(s, dt, i, gen(r->rank, i, seq, op));
	RCHECK(r, urom_coll_allreduce_wait(r->w, r->s.pe, s, d, count, dt, op, WAIT_MS) ==
			  DOCA_SUCCESS);
	for (size_t i = 0; i < count; i++) {
		ref_elem(dt, op, r->n, i, seq, ref);
		if (memcmp(d + i * es, ref, es) != 0) {
			fprintf(stderr,
				"rank %u: allreduce dt %d op %d count %zu: element %zu wrong\n",
				r->rank, dt, op, count, i);
			return -1;
		}
	}
	RCHECK(r, guard_ok(r, in_place ? 0 : len));
	if (!in_place) {
		uint8_t e[8];

		for (size_t i = 0; i < count; i++) {
			put_elem(e, dt, 0, gen(r->rank, i, seq, op));
			RCHECK(r, memcmp(s + i * es, e, es) == 0);
		}
	}
	return 0;
}

static int alltoall_case(struct rank *r, size_t count)
{
	uint32_t *s = (uint32_t *)(r->buf + SOFF), *d = (uint32_t *)(r->buf + ROFF);
	uint64_t seq = ++r->seq;

	reset(r);
	for (uint32_t j = 0; j < r->n; j++)
		for (size_t k = 0; k < count; k++)
			s[j * count + k] = word(r->rank, j, k, seq);
	RCHECK(r, urom_coll_alltoall_wait(r->w, r->s.pe, s, d, count, UROM_COLL_UINT32, WAIT_MS) ==
			  DOCA_SUCCESS);
	for (uint32_t j = 0; j < r->n; j++)
		for (size_t k = 0; k < count; k++) {
			RCHECK(r, d[j * count + k] == word(j, r->rank, k, seq));
			RCHECK(r, s[j * count + k] == word(r->rank, j, k, seq));
		}
	RCHECK(r, guard_ok(r, r->n * count * 4));
	return 0;
}

static int allgather_case(struct rank *r, size_t count)
{
	uint64_t *s = (uint64_t *)(r->buf + SOFF), *d = (uint64_t *)(r->buf + ROFF);
	uint64_t seq = ++r->seq;

	reset(r);
	for (size_t k = 0; k < count; k++)
		s[k] = (uint64_t)word(r->rank, 7, k, seq) << 32 | k;
	RCHECK(r, urom_coll_allgather_wait(r->w, r->s.pe, s, d, count, UROM_COLL_INT64, WAIT_MS) ==
			  DOCA_SUCCESS);
	for (uint32_t j = 0; j < r->n; j++)
		for (size_t k = 0; k < count; k++)
			RCHECK(r, d[j * count + k] == ((uint64_t)word(j, 7, k, seq) << 32 | k));
	RCHECK(r, guard_ok(r, r->n * count * 8));
	return 0;
}

static int bcast_case(struct rank *r, size_t count, uint32_t root)
{
	uint32_t *s = (uint32_t *)(r->buf + SOFF), *d = (uint32_t *)(r->buf + ROFF);
	uint64_t seq = ++r->seq;

	reset(r);
	for (size_t k = 0; k < count; k++)
		s[k] = word(r->rank, 3, k, seq);
	RCHECK(r, urom_coll_bcast_wait(r->w, r->s.pe, s, d, count, UROM_COLL_FLOAT, root,
				       WAIT_MS) == DOCA_SUCCESS);
	for (size_t k = 0; k < count; k++)
		RCHECK(r, d[k] == word(root, 3, k, seq));
	RCHECK(r, guard_ok(r, count * 4));
	return 0;
}

/* A refused command: its status, and nothing written into the receive area. */
static int refused(struct rank *r, const struct urom_worker_coll_cmd *c, doca_error_t want)
{
	doca_error_t st;

	reset(r);
	st = urom_coll_submit_wait(r->w, r->s.pe, c, WAIT_MS);
	if (st != want) {
		fprintf(stderr, "rank %u: command type %llu: %s, expected %s\n", r->rank,
			(unsigned long long)c->type, doca_error_get_name(st),
			doca_error_get_name(want));
		return -1;
	}
	RCHECK(r, guard_ok(r, 0));
	return 0;
}

static int refusals(struct rank *r)
{
	struct urom_worker_coll_cmd c = {.type = UROM_WORKER_CMD_COLL_ALLREDUCE,
					 .sbuf_va = (uint64_t)(uintptr_t)(r->buf + SOFF),
					 .rbuf_va = (uint64_t)(uintptr_t)(r->buf + ROFF),
					 .count = 5,
					 .dtype = UROM_COLL_INT64,
					 .op = UROM_COLL_SUM};
	struct urom_worker_coll_cmd b = c;
	static const int fl[2] = {UROM_COLL_FLOAT, UROM_COLL_DOUBLE};

	b.type = 99;
	RCHECK(r, refused(r, &b, DOCA_ERROR_INVALID_VALUE) == 0);
	b = c, b.dtype = 9;
	RCHECK(r, refused(r, &b, DOCA_ERROR_INVALID_VALUE) == 0);
	b = c, b.op = 9;
	RCHECK(r, refused(r, &b, DOCA_ERROR_INVALID_VALUE) == 0);
	for (int t = 0; t < 2; t++)
		for (int op = UROM_COLL_BAND; op <= UROM_COLL_BXOR; op++) {
			b = c, b.dtype = fl[t], b.op = op;
			RCHECK(r, refused(r, &b, DOCA_ERROR_INVALID_VALUE) == 0);
		}
	b = c, b.count = 0;
	RCHECK(r, refused(r, &b, DOCA_ERROR_INVALID_VALUE) == 0);
	b = c, b.sbuf_va = (uint64_t)(uintptr_t)(r->buf + 8); /* over the control area */
	RCHECK(r, refused(r, &b, DOCA_ERROR_INVALID_VALUE) == 0);
	b = c, b.count = AREA / 8 + 1; /* past the end of the segment */
	RCHECK(r, refused(r, &b, DOCA_ERROR_INVALID_VALUE) == 0);
	b = c, b.type = UROM_WORKER_CMD_COLL_ALLTOALL, b.count = AREA / 8; /* n * count too big */
	RCHECK(r, refused(r, &b, DOCA_ERROR_INVALID_VALUE) == 0);
	b = c, b.type = UROM_WORKER_CMD_COLL_BCAST, b.root = r->n;
	RCHECK(r, refused(r, &b, DOCA_ERROR_INVALID_VALUE) == 0);
	/* counts that differ between the ranks: every rank refuses, nothing written */
	b = c, b.count = 5 + r->rank;
	RCHECK(r, refused(r, &b, DOCA_ERROR_INVALID_VALUE) == 0);
	b = c, b.type = UROM_WORKER_CMD_COLL_BCAST, b.root = 0, b.count = 3 + (r->rank == 1);
	RCHECK(r, refused(r, &b, DOCA_ERROR_INVALID_VALUE) == 0);
	return 0;
}

static int find_plugin(struct rank *r, uint64_t *id)
{
	const struct doca_urom_service_plugin_info *pl;
	size_t n = 0;

	if (doca_urom_service_get_plugins_list(r->s.svc, &pl, &n) != DOCA_SUCCESS)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(pl[i].plugin_name, "worker_coll") == 0) {
			*id = pl[i].id;
			return urom_coll_init(pl[i].id, pl[i].version, r->rank, r->n) ==
					       DOCA_SUCCESS ?
				       0 :
				       -1;
		}
	}
	return -1;
}

static int rank_open(struct rank *r, uint16_t port)
{
	struct sdp_urom_oob_params op = {.rank = r->rank,
					 .size = r->n,
					 .secret = secret,
					 .secret_len = sizeof(secret),
					 .timeout_ms = 30000};
	struct t_worker_cfg cfg = {.id = DOCA_UROM_WORKER_ID_ANY, .max_inflight = 4};
	struct doca_urom_domain_oob_coll coll;
	uint64_t id = r->rank, plugin = 0;
	char root[64];

	r->buf = aligned_alloc(4096, BUF);
	RCHECK(r, r->buf != NULL);
	memset(r->buf, 0, BUF); /* the control area starts zeroed */
	snprintf(root, sizeof(root), "127.0.0.1:%u", port);
	op.root = root;
	if (r->oob == NULL)
		RCHECK(r, sdp_urom_oob_create(&op, &r->oob) == DOCA_SUCCESS);
	RCHECK(r, t_svc_open(&r->s, 0) == DOCA_SUCCESS);
	RCHECK(r, find_plugin(r, &plugin) == 0);
	cfg.plugins = plugin;
	RCHECK(r, t_worker_start(&r->s, r->s.pe, &cfg, &r->w) == DOCA_SUCCESS);
	sdp_urom_oob_coll(r->oob, &coll);
	RCHECK(r, doca_urom_domain_create(&r->dom) == DOCA_SUCCESS);
	RCHECK(r, doca_pe_connect_ctx(r->s.pe, doca_urom_domain_as_ctx(r->dom)) == DOCA_SUCCESS);
	RCHECK(r, doca_urom_domain_set_oob(r->dom, &coll) == DOCA_SUCCESS);
	RCHECK(r, doca_urom_domain_set_workers(r->dom, &id, &r->w, 1) == DOCA_SUCCESS);
	RCHECK(r, doca_urom_domain_set_buffers_count(r->dom, 1) == DOCA_SUCCESS);
	RCHECK(r, sdp_urom_domain_export_buffer(r->dom, r->buf, BUF, &r->mem) == DOCA_SUCCESS);
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
	free(r->buf);
}

static int rank_cases(struct rank *r)
{
	static const int types[6] = {UROM_COLL_INT32,  UROM_COLL_INT64, UROM_COLL_UINT32,
				     UROM_COLL_UINT64, UROM_COLL_FLOAT, UROM_COLL_DOUBLE};
	const size_t counts[3] = {1, 1001, 0};
	size_t c;

	RCHECK(r, urom_coll_barrier_wait(r->w, r->s.pe, WAIT_MS) == DOCA_SUCCESS);
	for (int k = 0; k < 3; k++) {
		c = counts[k];
		RCHECK(r,
		       allreduce_case(r, UROM_COLL_INT64, UROM_COLL_SUM, c ? c : MIB / 8, 0) == 0);
		RCHECK(r,
		       allreduce_case(r, UROM_COLL_DOUBLE, UROM_COLL_SUM, c ? c : MIB / 8, 0) == 0);
		RCHECK(r,
		       allreduce_case(r, UROM_COLL_INT32, UROM_COLL_MAX, c ? c : MIB / 4, 0) == 0);
		RCHECK(r, alltoall_case(r, c ? c : MIB / 4 / r->n) == 0);
		RCHECK(r, allgather_case(r, c ? c : MIB / 8 / r->n) == 0);
		RCHECK(r, bcast_case(r, c ? c : MIB / 4, 0) == 0);
		RCHECK(r, bcast_case(r, c ? c : MIB / 4, r->n - 1) == 0);
		RCHECK(r, urom_coll_barrier_wait(r->w, r->s.pe, WAIT_MS) == DOCA_SUCCESS);
	}
	for (int t = 0; t < 6; t++)
		for (int op = UROM_COLL_SUM; op <= UROM_COLL_BXOR; op++) {
			if (op >= UROM_COLL_BAND && types[t] >= UROM_COLL_FLOAT)
				continue;
			RCHECK(r, allreduce_case(r, types[t], op, 37, 0) == 0);
		}
	RCHECK(r, allreduce_case(r, UROM_COLL_DOUBLE, UROM_COLL_SUM, 333, 1) == 0);
	RCHECK(r, refusals(r) == 0);
	RCHECK(r, allreduce_case(r, UROM_COLL_INT64, UROM_COLL_SUM, 7, 0) == 0);
	RCHECK(r, urom_coll_barrier_wait(r->w, r->s.pe, WAIT_MS) == DOCA_SUCCESS);
	fprintf(stderr, "rank %u of %u: %llu collectives checked\n", r->rank, r->n,
		(unsigned long long)r->seq);
	return 0;
}

static int rank_main(uint32_t rank, uint32_t n, uint16_t port, struct sdp_urom_oob *oob)
{
	struct rank r;
	int ok, all[MAXR] = {0}, rc = -1;

	memset(&r, 0, sizeof(r));
	r.rank = rank;
	r.n = n;
	r.oob = oob;
	ok = rank_open(&r, port) == 0 && rank_cases(&r) == 0;
	/* every rank's verdict ANDed, so none tears down while another still runs */
	if (r.oob != NULL && sdp_urom_oob_allgather(r.oob, &ok, all, sizeof(ok)) == DOCA_SUCCESS) {
		rc = 0;
		for (uint32_t k = 0; k < n; k++)
			rc |= all[k] ? 0 : -1;
	}
	rank_close(&r);
	return rc;
}

int main(int argc, char **argv)
{
	struct sdp_urom_oob_params op = {.root = "127.0.0.1:0",
					 .rank = 0,
					 .secret = secret,
					 .secret_len = sizeof(secret),
					 .timeout_ms = 30000};
	struct sdp_urom_oob *root = NULL;
	pid_t pids[MAXR];
	uint32_t n;

	if (argc < 3 || (n = (uint32_t)atoi(argv[2])) < 2 || n > MAXR) {
		fprintf(stderr, "usage: %s PLUGIN_PATH NRANKS(2..%d) [tcp]\n", argv[0], MAXR);
		return T_EXIT_FAIL;
	}
	if (argc > 3 && strcmp(argv[3], "tcp") == 0)
		setenv("UCX_TLS", "tcp", 1);
	setenv("UROM_PLUGIN_PATH", argv[1], 1);
	op.size = n;
	if (t_uromd_start(&d, NULL) != 0)
		return T_EXIT_FAIL;
	T_OK(sdp_urom_oob_create(&op, &root));
	for (uint32_t k = 0; k < n; k++) {
		pids[k] = fork();
		if (pids[k] == 0)
			_exit(rank_main(k, n, sdp_urom_oob_port(root), k == 0 ? root : NULL) == 0 ?
				      0 :
				      1);
	}
	(void)sdp_urom_oob_destroy(root);
	for (uint32_t k = 0; k < n; k++) {
		int st = -1;

		if (!t_wait_child(pids[k], 240000, &st)) {
			kill(pids[k], SIGKILL);
			t_fail("rank %u did not exit", k);
		} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			t_fail("rank %u exit status %d", k, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		}
	}
	t_uromd_stop(&d);
	T_DONE();
}
