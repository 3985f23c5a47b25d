/*
 * Integration: the worker_coll plugin end to end (the seed's ladder steps 3 and 4). N ranks
 * (argv[2]: 2 or 4 forked processes), each with its own service connection, a worker running
 * worker_coll and a started domain over softdpu's TCP OOB into which each rank exported two
 * segments of rank-dependent sizes: sends come from the first, receives land in the second, at
 * offsets that differ between the ranks (no symmetric layout). After every collective each
 * rank checks its own memory against a reference computed on the host from every member's
 * deterministic contribution: the result, every other byte of the receive window unchanged,
 * the send buffer untouched.
 * - every collective (barrier, bcast from two roots, reduce, allreduce, allgather, alltoall,
 *   alltoallv, reduce_scatter) at counts 0, 1, 1001 and 1 MiB blocks on the whole domain;
 * - allreduce and reduce_scatter for every type and op they apply to, in team order;
 * - the in-place forms; a team in reversed member order and strided sub-teams (pairs of ranks
 *   sharing a tag on disjoint workers, or a team of one), several teams alive at once;
 * - 32 collectives of mixed kinds and teams outstanding at once, completed by waitall;
 * - buffers outside the domain named by memh that come with the command (memh_buffers);
 * - refusals: host-side (INVALID_VALUE, nothing submitted), worker-side on every member
 *   (unknown type / dtype / op / flag, bitwise op on floating point, a buffer outside the
 *   exported segments on one rank only, counts or roots that differ between ranks, overlap,
 *   in place where there is none, a wrong alltoallv trailer), team creation (unknown member
 *   NOT_FOUND, duplicate tag ALREADY_EXIST on the host and on the worker, FULL past
 *   UROM_COLL_MAX_TEAMS), destroy while a collective is outstanding (IN_USE); the receive
 *   window untouched after each, and collectives afterwards still work;
 * - ladder step 4: a worker started without worker_coll answers a team creation with
 *   NOT_SUPPORTED.
 * argv[1]: the plugin directories for the private daemon (worker_coll and worker_graph);
 * argv[3] "tcp": UCX_TLS=tcp; "big": 2 ranks, every collective at 64 MiB instead.
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
#define MIB (1ull << 20)
#define SLACK (64u << 10)
#define GUARD 0xeeu
#define WAIT_MS 60000
#define NOUT 32

struct rank {
	uint32_t rank, n;
	int big;
	struct sdp_urom_oob *oob;
	struct t_svc s;
	struct doca_urom_worker *w;
	struct doca_urom_domain *dom;
	struct sdp_urom_mem *mem[2];
	uint8_t *seg[2];
	struct sdp_urom_mem *extra[4]; /* exported outside the domain (memh_buffers) */
	void *extra_buf[4];
	int nextra, nextra_buf;
	size_t seglen;
	uint64_t coll_id, coll_version, graph_id;
	uint64_t seq; /* advanced per case, the same on every rank */
};

/* A team as the test sees it: ids[p] is the domain id of the member at position p. */
struct cteam {
	struct urom_coll_team *t;
	uint32_t size, me;
	uint64_t ids[MAXR];
};

/* One collective: what it is, where its buffers are, the receive window it may write. */
struct cc {
	const struct cteam *tm;
	uint64_t type, dt, op, count, root;
	int in_place;
	uint8_t *s, *r, *wlo, *whi;
	uint64_t seq;
	uint64_t sc[MAXR], sd[MAXR], rc[MAXR], rd[MAXR]; /* alltoallv, elements */
};

static struct t_uromd d;
static const char secret[] = "test_urom_coll shared secret";
static struct rank *cur; /* for RCHECK's message */

#define RCHECK(cond)                                                                               \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "rank %u: check failed at line %d: %s\n", cur->rank,       \
				__LINE__, #cond);                                                  \
			return -1;                                                                 \
		}                                                                                  \
	} while (0)

#define RSTATUS(expr, want)                                                                        \
	do {                                                                                       \
		doca_error_t st_ = (expr);                                                         \
		if (st_ != (want)) {                                                               \
			fprintf(stderr, "rank %u: line %d: %s: %s, expected %s\n", cur->rank,      \
				__LINE__, #expr, doca_error_get_name(st_),                         \
				doca_error_get_name(want));                                        \
			return -1;                                                                 \
		}                                                                                  \
	} while (0)

static size_t esize(uint64_t dt)
{
	static const uint8_t sz[] = {1, 2, 4, 8, 1, 2, 4, 8, 4, 8};

	return sz[dt];
}

static int is_signed(uint64_t dt)
{
	return dt <= UROM_COLL_INT64;
}

/* ---- contributions and references ---- */

/* Byte k of the block member id sends to position j. */
static uint8_t pat(uint64_t id, uint64_t j, size_t k, uint64_t seq)
{
	return (uint8_t)(id * 37 + j * 11 + k * 7 + (k >> 9) * 3 + seq * 13 + 1);
}

static void fill_bytes(uint8_t *p, size_t len, uint64_t id, uint64_t j, uint64_t seq)
{
	for (size_t k = 0; k < len; k++)
		p[k] = pat(id, j, k, seq);
}

static int check_bytes(const uint8_t *p, size_t len, uint64_t id, uint64_t j, uint64_t seq,
		       const char *what)
{
	for (size_t k = 0; k < len; k++)
		if (p[k] != pat(id, j, k, seq)) {
			fprintf(stderr,
				"rank %u: %s: byte %zu of the block from %lu is %#x, not %#x\n",
				cur->rank, what, k, (unsigned long)id, p[k], pat(id, j, k, seq));
			return -1;
		}
	return 0;
}

/* Reduction input of member id at element i: a small integer (products stay small). */
static int64_t gen(uint64_t id, size_t i, uint64_t seq, uint64_t op)
{
	int64_t x = (int64_t)((id * 131u + i * 17u + seq * 7u) % 201u) - 100;

	return op == UROM_COLL_PROD ? x % 5 : x;
}

static void put_elem(uint8_t *p, uint64_t dt, int64_t x)
{
	uint64_t u;

	if (dt == UROM_COLL_FLOAT) {
		float f = (float)x * 0.5f;

		memcpy(p, &f, 4);
		return;
	}
	if (dt == UROM_COLL_DOUBLE) {
		double v = (double)x * 0.25;

		memcpy(p, &v, 8);
		return;
	}
	u = is_signed(dt)	   ? (uint64_t)x :
	    dt == UROM_COLL_UINT64 ? (uint64_t)(x + 100) << 20 :
				     (uint64_t)(x + 100);
	memcpy(p, &u, esize(dt)); /* little endian: the low bytes */
}

static void fill_red(uint8_t *p, uint64_t dt, uint64_t op, uint64_t id, size_t from, size_t n,
		     uint64_t seq)
{
	size_t es = esize(dt);

	for (size_t i = 0; i < n; i++)
		put_elem(p + i * es, dt, gen(id, from + i, seq, op));
}

/* The element's bits zero-extended (u) and, for signed types, sign-extended (s). */
static void load(const uint8_t *p, uint64_t dt, uint64_t *u, int64_t *s)
{
	unsigned sh = 64 - 8 * (unsigned)esize(dt);

	*u = 0;
	memcpy(u, p, esize(dt));
	*s = sh == 0 ? (int64_t)*u : (int64_t)(*u << sh) >> sh;
}

/* Element i of the reduction over the team's members, folded in team order, into out. */
static void ref_elem(uint64_t dt, uint64_t op, const struct cteam *tm, size_t i, uint64_t seq,
		     uint8_t *out)
{
	uint8_t e[8];

	put_elem(out, dt, gen(tm->ids[0], i, seq, op));
	for (uint32_t p = 1; p < tm->size; p++) {
		put_elem(e, dt, gen(tm->ids[p], i, seq, op));
		if (dt == UROM_COLL_FLOAT || dt == UROM_COLL_DOUBLE) {
			double a, b, v;
			float fa, fb, fv;

			if (dt == UROM_COLL_FLOAT) {
				memcpy(&fa, out, 4);
				memcpy(&fb, e, 4);
				fv = op == UROM_COLL_SUM  ? fa + fb :
				     op == UROM_COLL_PROD ? fa * fb :
				     op == UROM_COLL_MIN  ? (fb < fa ? fb : fa) :
							    (fb > fa ? fb : fa);
				memcpy(out, &fv, 4);
			} else {
				memcpy(&a, out, 8);
				memcpy(&b, e, 8);
				v = op == UROM_COLL_SUM	 ? a + b :
				    op == UROM_COLL_PROD ? a * b :
				    op == UROM_COLL_MIN	 ? (b < a ? b : a) :
							   (b > a ? b : a);
				memcpy(out, &v, 8);
			}
		} else {
			uint64_t ua, ub, uv = 0;
			int64_t sa, sb;
			int less;

			load(out, dt, &ua, &sa);
			load(e, dt, &ub, &sb);
			less = is_signed(dt) ? sb < sa : ub < ua; /* b < a */
			switch (op) {
			case UROM_COLL_SUM:
				uv = ua + ub;
				break;
			case UROM_COLL_PROD:
				uv = ua * ub;
				break;
			case UROM_COLL_MIN:
				uv = less ? ub : ua;
				break;
			case UROM_COLL_MAX:
				uv = !less && ub != ua ? ub : ua;
				break;
			case UROM_COLL_BAND:
				uv = ua & ub;
				break;
			case UROM_COLL_BOR:
				uv = ua | ub;
				break;
			default:
				uv = ua ^ ub;
				break;
			}
			memcpy(out, &uv, esize(dt));
		}
	}
}

static int check_red(const uint8_t *p, uint64_t dt, uint64_t op, const struct cteam *tm,
		     size_t from, size_t n, uint64_t seq)
{
	size_t es = esize(dt);
	uint8_t ref[8];

	for (size_t i = 0; i < n; i++) {
		ref_elem(dt, op, tm, from + i, seq, ref);
		if (memcmp(p + i * es, ref, es) != 0) {
			fprintf(stderr, "rank %u: reduction dt %lu op %lu: element %zu wrong\n",
				cur->rank, (unsigned long)dt, (unsigned long)op, from + i);
			return -1;
		}
	}
	return 0;
}

/* ---- one collective: prepare, start, check ---- */

static uint64_t v_count(const struct cc *c, uint32_t from, uint32_t to)
{
	if (c->in_place) /* symmetric: what from sends to is what to expects from from */
		return c->count + 2 * (from + to);
	return (c->count * (from + 1) + 5 * to) % (c->count + 9);
}

/* The receive extents [lo, hi) in bytes from c->r; returns how many. */
static uint32_t extents(const struct cc *c, uint64_t lo[MAXR], uint64_t hi[MAXR])
{
	uint64_t n = c->tm->size, len = c->count * esize(c->dt);

	switch (c->type) {
	case UROM_WORKER_CMD_COLL_BARRIER:
		return 0;
	case UROM_WORKER_CMD_COLL_REDUCE:
		if (c->tm->me != c->root)
			return 0;
		/* fall through */
	case UROM_WORKER_CMD_COLL_BCAST:
	case UROM_WORKER_CMD_COLL_ALLREDUCE:
	case UROM_WORKER_CMD_COLL_REDUCE_SCATTER:
		lo[0] = 0, hi[0] = len;
		if (c->in_place && c->type == UROM_WORKER_CMD_COLL_REDUCE_SCATTER)
			hi[0] = n * len; /* the input was there */
		return 1;
	case UROM_WORKER_CMD_COLL_ALLGATHER:
	case UROM_WORKER_CMD_COLL_ALLTOALL:
		lo[0] = 0, hi[0] = n * len;
		return 1;
	default:
		for (uint32_t j = 0; j < n; j++) {
			lo[j] = c->rd[j] * esize(c->dt);
			hi[j] = lo[j] + c->rc[j] * esize(c->dt);
		}
		return (uint32_t)n;
	}
}

static void prep(struct cc *c)
{
	const struct cteam *tm = c->tm;
	size_t es = esize(c->dt), len = c->count * es;
	uint64_t myid = tm->ids[tm->me], n = tm->size, acc = 0, acc2 = 0;
	uint8_t *in = c->in_place ? c->r : c->s;

	memset(c->wlo, GUARD, (size_t)(c->whi - c->wlo));
	switch (c->type) {
	case UROM_WORKER_CMD_COLL_BCAST:
		if (tm->me == c->root)
			fill_bytes(c->in_place ? c->r : c->s, len, myid, 0, c->seq);
		break;
	case UROM_WORKER_CMD_COLL_REDUCE:
	case UROM_WORKER_CMD_COLL_ALLREDUCE:
		fill_red(in, c->dt, c->op, myid, 0, c->count, c->seq);
		break;
	case UROM_WORKER_CMD_COLL_REDUCE_SCATTER:
		fill_red(in, c->dt, c->op, myid, 0, n * c->count, c->seq);
		break;
	case UROM_WORKER_CMD_COLL_ALLGATHER:
		fill_bytes(c->in_place ? c->r + tm->me * len : c->s, len, myid, 0, c->seq);
		break;
	case UROM_WORKER_CMD_COLL_ALLTOALL:
		for (uint32_t j = 0; j < n; j++)
			fill_bytes(in + j * len, len, myid, j, c->seq);
		break;
	case UROM_WORKER_CMD_COLL_ALLTOALLV:
		for (uint32_t j = 0; j < n; j++) {
			c->sc[j] = v_count(c, tm->me, j);
			c->rc[j] = v_count(c, j, tm->me);
			c->sd[j] = acc + j;
			acc = c->sd[j] + c->sc[j];
			c->rd[j] = c->in_place ? c->sd[j] : acc2 + 2 * j + 1;
			acc2 = c->rd[j] + c->rc[j];
		}
		for (uint32_t j = 0; j < n; j++)
			fill_bytes(in + c->sd[j] * es, c->sc[j] * es, myid, j, c->seq);
		break;
	default:
		break;
	}
}

static doca_error_t start(struct cc *c, struct urom_coll_req **req)
{
	struct urom_coll_team *t = c->tm->t;
	const void *s = c->in_place ? UROM_COLL_IN_PLACE : c->s;

	switch (c->type) {
	case UROM_WORKER_CMD_COLL_BARRIER:
		return urom_coll_barrier(t, req);
	case UROM_WORKER_CMD_COLL_BCAST:
		return urom_coll_bcast(t, c->in_place ? c->r : c->s, c->r, c->count, c->dt,
				       (uint32_t)c->root, req);
	case UROM_WORKER_CMD_COLL_REDUCE:
		return urom_coll_reduce(t, s, c->r, c->count, c->dt, c->op, (uint32_t)c->root, req);
	case UROM_WORKER_CMD_COLL_ALLREDUCE:
		return urom_coll_allreduce(t, s, c->r, c->count, c->dt, c->op, req);
	case UROM_WORKER_CMD_COLL_ALLGATHER:
		return urom_coll_allgather(t, s, c->r, c->count, c->dt, req);
	case UROM_WORKER_CMD_COLL_ALLTOALL:
		return urom_coll_alltoall(t, s, c->r, c->count, c->dt, req);
	case UROM_WORKER_CMD_COLL_ALLTOALLV:
		return urom_coll_alltoallv(t, s, c->sc, c->sd, c->r, c->rc, c->rd, c->dt, req);
	default:
		return urom_coll_reduce_scatter(t, s, c->r, c->count, c->dt, c->op, req);
	}
}

static int check(struct cc *c)
{
	const struct cteam *tm = c->tm;
	size_t es = esize(c->dt), len = c->count * es;
	uint64_t myid = tm->ids[tm->me], n = tm->size, lo[MAXR], hi[MAXR];
	uint32_t ne = extents(c, lo, hi);
	int rc = 0;

	switch (c->type) {
	case UROM_WORKER_CMD_COLL_BCAST:
		rc = check_bytes(c->r, len, tm->ids[c->root], 0, c->seq, "bcast");
		break;
	case UROM_WORKER_CMD_COLL_REDUCE:
		if (tm->me == c->root)
			rc = check_red(c->r, c->dt, c->op, tm, 0, c->count, c->seq);
		break;
	case UROM_WORKER_CMD_COLL_ALLREDUCE:
		rc = check_red(c->r, c->dt, c->op, tm, 0, c->count, c->seq);
		break;
	case UROM_WORKER_CMD_COLL_REDUCE_SCATTER:
		rc = check_red(c->r, c->dt, c->op, tm, tm->me * c->count, c->count, c->seq);
		break;
	case UROM_WORKER_CMD_COLL_ALLGATHER:
		for (uint32_t j = 0; j < n && rc == 0; j++)
			rc = check_bytes(c->r + j * len, len, tm->ids[j], 0, c->seq, "allgather");
		break;
	case UROM_WORKER_CMD_COLL_ALLTOALL:
		for (uint32_t j = 0; j < n && rc == 0; j++)
			rc = check_bytes(c->r + j * len, len, tm->ids[j], tm->me, c->seq,
					 "alltoall");
		break;
	case UROM_WORKER_CMD_COLL_ALLTOALLV:
		for (uint32_t j = 0; j < n && rc == 0; j++)
			rc = check_bytes(c->r + c->rd[j] * es, c->rc[j] * es, tm->ids[j], tm->me,
					 c->seq, "alltoallv");
		break;
	default:
		break;
	}
	if (rc != 0)
		return rc;
	/* every byte of the window outside the result as it was */
	for (uint8_t *p = c->wlo; p < c->whi; p++) {
		uint64_t off = (uint64_t)(p - c->r);
		int inside = 0;

		if (*p == GUARD)
			continue;
		for (uint32_t e = 0; e < ne && !inside; e++)
			inside = p >= c->r && off >= lo[e] && off < hi[e];
		if (!inside) {
			fprintf(stderr,
				"rank %u: collective %lu count %lu: byte %td of the window "
				"outside the result changed\n",
				cur->rank, (unsigned long)c->type, (unsigned long)c->count,
				p - c->wlo);
			return -1;
		}
	}
	/* the send buffer untouched */
	if (!c->in_place && c->type != UROM_WORKER_CMD_COLL_BARRIER) {
		switch (c->type) {
		case UROM_WORKER_CMD_COLL_BCAST:
			if (tm->me == c->root)
				rc = check_bytes(c->s, len, myid, 0, c->seq, "bcast source");
			break;
		case UROM_WORKER_CMD_COLL_ALLGATHER:
			rc = check_bytes(c->s, len, myid, 0, c->seq, "allgather source");
			break;
		case UROM_WORKER_CMD_COLL_ALLTOALL:
			for (uint32_t j = 0; j < n && rc == 0; j++)
				rc = check_bytes(c->s + j * len, len, myid, j, c->seq,
						 "alltoall source");
			break;
		case UROM_WORKER_CMD_COLL_ALLTOALLV:
			for (uint32_t j = 0; j < n && rc == 0; j++)
				rc = check_bytes(c->s + c->sd[j] * es, c->sc[j] * es, myid, j,
						 c->seq, "alltoallv source");
			break;
		default: {
			uint64_t m = c->type == UROM_WORKER_CMD_COLL_REDUCE_SCATTER ? n * c->count :
										      c->count;
			uint8_t e[8];

			for (uint64_t i = 0; i < m && rc == 0; i++) {
				put_elem(e, c->dt, gen(myid, i, c->seq, c->op));
				if (memcmp(c->s + i * es, e, es) != 0) {
					fprintf(stderr,
						"rank %u: reduction source changed at %lu\n",
						cur->rank, (unsigned long)i);
					rc = -1;
				}
			}
			break;
		}
		}
	}
	return rc;
}

/* A collective on the whole send / receive areas, started, waited for and checked. */
static int run(struct rank *r, const struct cteam *tm, uint64_t type, uint64_t dt, uint64_t op,
	       uint64_t count, uint64_t root, int in_place)
{
	struct cc c = {.tm = tm,
		       .type = type,
		       .dt = dt,
		       .op = op,
		       .count = count,
		       .root = root,
		       .in_place = in_place,
		       .s = r->seg[0] + 64 * (r->rank + 1),
		       .r = r->seg[1] + 128 * (r->rank + 1),
		       .wlo = r->seg[1],
		       .whi = r->seg[1] + r->seglen,
		       .seq = ++r->seq};
	struct urom_coll_req *req = NULL;

	prep(&c);
	RSTATUS(start(&c, &req), DOCA_SUCCESS);
	RSTATUS(urom_coll_wait(req, WAIT_MS), DOCA_SUCCESS);
	if (check(&c) != 0) {
		fprintf(stderr,
			"rank %u: collective %lu dt %lu op %lu count %lu root %lu%s on a "
			"team of %u failed\n",
			r->rank, (unsigned long)type, (unsigned long)dt, (unsigned long)op,
			(unsigned long)count, (unsigned long)root, in_place ? " in place" : "",
			tm->size);
		return -1;
	}
	return 0;
}

/* ---- the cases ---- */

static int all_kinds(struct rank *r, const struct cteam *tm, uint64_t count, uint64_t dt)
{
	uint32_t last = tm->size - 1;
	uint64_t es = esize(dt);

	RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_BARRIER, 0, 0, 0, 0, 0) == 0);
	RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_BCAST, dt, 0, count, 0, 0) == 0);
	RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_BCAST, dt, 0, count, last, 0) == 0);
	RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_REDUCE, UROM_COLL_INT64, UROM_COLL_SUM,
		   count * es / 8, last, 0) == 0);
	RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_ALLREDUCE, UROM_COLL_DOUBLE, UROM_COLL_SUM,
		   count * es / 8, 0, 0) == 0);
	RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_ALLREDUCE, UROM_COLL_INT32, UROM_COLL_MAX,
		   count * es / 4, 0, 0) == 0);
	RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_ALLGATHER, dt, 0, count, 0, 0) == 0);
	RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_ALLTOALL, dt, 0, count, 0, 0) == 0);
	RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_ALLTOALLV, dt, 0, count, 0, 0) == 0);
	RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_REDUCE_SCATTER, UROM_COLL_FLOAT, UROM_COLL_SUM,
		   count * es / 4, 0, 0) == 0);
	return 0;
}

/*
 * Every type/op pair the plugin accepts (bitwise ops on float and double are refused, as in
 * MPI; refusals() checks that) through the three reducing collectives, count elements each:
 * allreduce and reduce of count, reduce_scatter of count per member.
 */
static int every_type_op(struct rank *r, const struct cteam *tm, uint64_t count)
{
	for (uint64_t dt = 0; dt <= UROM_COLL_DTYPE_MAX; dt++)
		for (uint64_t op = 0; op <= UROM_COLL_OP_MAX; op++) {
			if (op >= UROM_COLL_BAND && dt >= UROM_COLL_FLOAT)
				continue;
			RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_ALLREDUCE, dt, op, count, 0, 0) ==
			       0);
			RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_REDUCE_SCATTER, dt, op, count, 0,
				   0) == 0);
			RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_REDUCE, dt, op, count, op % tm->size,
				   0) == 0);
		}
	return 0;
}

/*
 * The big run: every type/op pair through allreduce at `pair_bytes` per buffer (several of the
 * worker's chunks), half of them in place; then every type at `bytes` (64 MiB) with the ops
 * rotating so that every op also runs at that size. (Every pair at 64 MiB would take minutes:
 * the host reference is computed element by element.)
 */
static int every_type_op_bytes(struct rank *r, const struct cteam *tm, uint64_t pair_bytes,
			       uint64_t bytes)
{
	for (uint64_t dt = 0; dt <= UROM_COLL_DTYPE_MAX; dt++)
		for (uint64_t op = 0; op <= UROM_COLL_OP_MAX; op++) {
			if (op >= UROM_COLL_BAND && dt >= UROM_COLL_FLOAT)
				continue;
			RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_ALLREDUCE, dt, op,
				   pair_bytes / esize(dt), 0, (dt + op) % 2) == 0);
		}
	for (uint64_t dt = 0; dt <= UROM_COLL_DTYPE_MAX; dt++) {
		/* dt 0..6 give ops 0, 3, 6, 2, 5, 1, 4: all seven */
		uint64_t op = dt * 3 % (UROM_COLL_OP_MAX + 1);

		if (op >= UROM_COLL_BAND && dt >= UROM_COLL_FLOAT)
			op = dt % UROM_COLL_BAND;
		RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_ALLREDUCE, dt, op, bytes / esize(dt), 0,
			   dt % 2) == 0);
	}
	return 0;
}

static int in_place(struct rank *r, const struct cteam *tm, uint64_t count)
{
	uint32_t last = tm->size - 1;

	RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_ALLREDUCE, UROM_COLL_INT16, UROM_COLL_SUM, count, 0,
		   1) == 0);
	RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_REDUCE, UROM_COLL_DOUBLE, UROM_COLL_MIN, count, last,
		   tm->me == last) == 0);
	RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_REDUCE_SCATTER, UROM_COLL_UINT8, UROM_COLL_BXOR,
		   count, 0, 1) == 0);
	RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_ALLGATHER, UROM_COLL_INT8, 0, count, 0, 1) == 0);
	RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_ALLTOALL, UROM_COLL_UINT32, 0, count, 0, 1) == 0);
	RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_ALLTOALLV, UROM_COLL_UINT16, 0, count, 0, 1) == 0);
	/* bcast's root passing its receive buffer as the send buffer */
	RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_BCAST, UROM_COLL_INT32, 0, count, last,
		   tm->me == last) == 0);
	return 0;
}

/* NOUT collectives of mixed kinds over two teams, each in its own slice, then waitall. */
static int outstanding(struct rank *r, const struct cteam *a, const struct cteam *b)
{
	static const uint64_t kinds[] = {
		UROM_WORKER_CMD_COLL_ALLREDUCE, UROM_WORKER_CMD_COLL_ALLTOALL,
		UROM_WORKER_CMD_COLL_ALLGATHER, UROM_WORKER_CMD_COLL_BCAST,
		UROM_WORKER_CMD_COLL_BARRIER,	UROM_WORKER_CMD_COLL_REDUCE_SCATTER,
		UROM_WORKER_CMD_COLL_ALLTOALLV, UROM_WORKER_CMD_COLL_REDUCE};
	size_t slice = (r->seglen - 1024) / NOUT / 64 * 64;
	struct urom_coll_req *reqs[NOUT];
	static struct cc c[NOUT];

	for (int k = 0; k < NOUT; k++) {
		const struct cteam *tm = k % 3 == 2 ? b : a;
		uint64_t type = kinds[k % 8], count = 101 + 2 * k;

		memset(&c[k], 0, sizeof(c[k]));
		c[k].tm = tm;
		c[k].type = type;
		c[k].dt = (uint64_t)k % (UROM_COLL_DTYPE_MAX + 1);
		c[k].op = type == UROM_WORKER_CMD_COLL_ALLREDUCE ||
					  type == UROM_WORKER_CMD_COLL_REDUCE ||
					  type == UROM_WORKER_CMD_COLL_REDUCE_SCATTER ?
				  (uint64_t)k % 4 :
				  0;
		c[k].count = type == UROM_WORKER_CMD_COLL_BARRIER ? 0 : count;
		c[k].root = (uint64_t)k % tm->size;
		c[k].s = r->seg[0] + 64 + k * slice;
		c[k].r = r->seg[1] + 128 + k * slice;
		c[k].wlo = r->seg[1] + k * slice + 64;
		c[k].whi = r->seg[1] + (k + 1) * slice;
		c[k].seq = ++r->seq;
		RCHECK(MAXR * (count + 2 * MAXR + 9) * 8 + 128 < slice);
		prep(&c[k]);
		RSTATUS(start(&c[k], &reqs[k]), DOCA_SUCCESS);
	}
	RSTATUS(urom_coll_waitall(reqs, NOUT, WAIT_MS), DOCA_SUCCESS);
	for (int k = 0; k < NOUT; k++)
		if (check(&c[k]) != 0) {
			fprintf(stderr, "rank %u: outstanding collective %d (type %lu) wrong\n",
				r->rank, k, (unsigned long)c[k].type);
			return -1;
		}
	return 0;
}

static int window_clean(struct rank *r)
{
	for (size_t k = 0; k < r->seglen; k++)
		if (r->seg[1][k] != GUARD) {
			fprintf(stderr,
				"rank %u: receive byte %zu written by a refused collective\n",
				r->rank, k);
			return -1;
		}
	return 0;
}

/* A raw command refused on the worker with want on every member, nothing written. */
static int raw(struct rank *r, const struct cteam *tm, const struct urom_worker_coll_cmd *c,
	       const uint64_t *trail, doca_error_t want)
{
	doca_error_t st;

	memset(r->seg[1], GUARD, r->seglen);
	st = urom_coll_submit_wait(tm->t, c, trail, WAIT_MS);
	if (st != want) {
		fprintf(stderr, "rank %u: raw command type %lu dtype %lu op %lu: %s, expected %s\n",
			r->rank, (unsigned long)c->type, (unsigned long)c->dtype,
			(unsigned long)c->op, doca_error_get_name(st), doca_error_get_name(want));
		return -1;
	}
	return window_clean(r);
}

static int refusals(struct rank *r, const struct cteam *tm)
{
	uint8_t *s = r->seg[0] + 64, *rb = r->seg[1] + 64;
	struct urom_worker_coll_cmd c = {.type = UROM_WORKER_CMD_COLL_ALLREDUCE,
					 .sbuf_va = (uint64_t)(uintptr_t)s,
					 .rbuf_va = (uint64_t)(uintptr_t)rb,
					 .count = 5,
					 .dtype = UROM_COLL_INT64,
					 .op = UROM_COLL_SUM};
	struct urom_worker_coll_cmd b;
	struct urom_coll_req *req = (struct urom_coll_req *)&c; /* must stay untouched */
	uint64_t *heap = malloc(4096), trail[4 * MAXR] = {0};

	RCHECK(heap != NULL);
	/* host side: refused before anything is submitted */
	RSTATUS(urom_coll_allreduce(NULL, s, rb, 5, UROM_COLL_INT64, UROM_COLL_SUM, &req),
		DOCA_ERROR_INVALID_VALUE);
	RSTATUS(urom_coll_allreduce(tm->t, s, rb, 5, UROM_COLL_INT64, UROM_COLL_SUM, NULL),
		DOCA_ERROR_INVALID_VALUE);
	RSTATUS(urom_coll_allreduce(tm->t, s, rb, 5, (enum urom_coll_dtype)10, UROM_COLL_SUM, &req),
		DOCA_ERROR_INVALID_VALUE);
	RSTATUS(urom_coll_allreduce(tm->t, s, rb, 5, UROM_COLL_INT64, (enum urom_coll_op)7, &req),
		DOCA_ERROR_INVALID_VALUE);
	RSTATUS(urom_coll_allreduce(tm->t, s, rb, UROM_COLL_MAX_LEN / 8 / tm->size + 1,
				    UROM_COLL_INT64, UROM_COLL_SUM, &req),
		DOCA_ERROR_INVALID_VALUE);
	RSTATUS(urom_coll_allreduce(tm->t, NULL, rb, 5, UROM_COLL_INT64, UROM_COLL_SUM, &req),
		DOCA_ERROR_INVALID_VALUE);
	RSTATUS(urom_coll_bcast(tm->t, s, rb, 5, UROM_COLL_INT8, tm->size, &req),
		DOCA_ERROR_INVALID_VALUE);
	RSTATUS(urom_coll_bcast(tm->t, UROM_COLL_IN_PLACE, rb, 5, UROM_COLL_INT8, 0, &req),
		DOCA_ERROR_INVALID_VALUE);
	RSTATUS(urom_coll_alltoallv(tm->t, s, NULL, trail, rb, trail, trail, UROM_COLL_INT8, &req),
		DOCA_ERROR_INVALID_VALUE);
	RCHECK(req == (struct urom_coll_req *)&c);

	/* worker side, every member */
	b = c, b.type = 99;
	RCHECK(raw(r, tm, &b, NULL, DOCA_ERROR_INVALID_VALUE) == 0);
	b = c, b.dtype = UROM_COLL_DTYPE_MAX + 1;
	RCHECK(raw(r, tm, &b, NULL, DOCA_ERROR_INVALID_VALUE) == 0);
	b = c, b.op = UROM_COLL_OP_MAX + 1;
	RCHECK(raw(r, tm, &b, NULL, DOCA_ERROR_INVALID_VALUE) == 0);
	b = c, b.flags = 0x2;
	RCHECK(raw(r, tm, &b, NULL, DOCA_ERROR_INVALID_VALUE) == 0);
	for (uint64_t op = UROM_COLL_BAND; op <= UROM_COLL_BXOR; op++) {
		b = c, b.dtype = op == UROM_COLL_BOR ? UROM_COLL_FLOAT : UROM_COLL_DOUBLE,
		b.op = op;
		RCHECK(raw(r, tm, &b, NULL, DOCA_ERROR_INVALID_VALUE) == 0);
	}
	/* one rank's send buffer is not exported: everyone fails, nothing written */
	b = c;
	if (r->rank == 0)
		b.sbuf_va = (uint64_t)(uintptr_t)heap;
	RCHECK(raw(r, tm, &b, NULL, DOCA_ERROR_INVALID_VALUE) == 0);
	/* the receive buffer runs past the end of the segment on the last rank */
	b = c;
	if (r->rank == r->n - 1)
		b.rbuf_va = (uint64_t)(uintptr_t)(r->seg[1] + r->seglen - 16);
	RCHECK(raw(r, tm, &b, NULL, DOCA_ERROR_INVALID_VALUE) == 0);
	/* counts, roots, types that differ between the ranks */
	b = c, b.count = 5 + r->rank;
	RCHECK(raw(r, tm, &b, NULL, DOCA_ERROR_INVALID_VALUE) == 0);
	b = c, b.type = UROM_WORKER_CMD_COLL_BCAST, b.root = r->rank % 2;
	RCHECK(raw(r, tm, &b, NULL, DOCA_ERROR_INVALID_VALUE) == 0);
	b = c, b.dtype = r->rank == 1 ? UROM_COLL_UINT64 : UROM_COLL_INT64;
	RCHECK(raw(r, tm, &b, NULL, DOCA_ERROR_INVALID_VALUE) == 0);
	/* overlapping buffers without the flag; in place where there is none */
	b = c, b.sbuf_va = (uint64_t)(uintptr_t)rb, b.rbuf_va = (uint64_t)(uintptr_t)(rb + 8);
	RCHECK(raw(r, tm, &b, NULL, DOCA_ERROR_INVALID_VALUE) == 0);
	b = c, b.type = UROM_WORKER_CMD_COLL_BCAST, b.flags = UROM_COLL_FLAG_IN_PLACE;
	b.sbuf_va = b.rbuf_va;
	RCHECK(raw(r, tm, &b, NULL, DOCA_ERROR_INVALID_VALUE) == 0);
	b = c, b.type = UROM_WORKER_CMD_COLL_REDUCE, b.root = 0, b.flags = UROM_COLL_FLAG_IN_PLACE;
	b.sbuf_va = b.rbuf_va; /* in place off the root too */
	RCHECK(raw(r, tm, &b, NULL, DOCA_ERROR_INVALID_VALUE) == 0);
	/* an alltoallv with a short trailer; a count given beside the arrays */
	b = c, b.type = UROM_WORKER_CMD_COLL_ALLTOALLV, b.count = 0, b.ntrail = 4;
	RCHECK(raw(r, tm, &b, trail, DOCA_ERROR_INVALID_VALUE) == 0);
	b = c, b.type = UROM_WORKER_CMD_COLL_ALLTOALLV, b.ntrail = 4ull * tm->size;
	RCHECK(raw(r, tm, &b, trail, DOCA_ERROR_INVALID_VALUE) == 0);
	/* a team creation for a tag that exists on the worker */
	b = c, b.type = UROM_WORKER_CMD_COLL_TEAM_CREATE, b.ntrail = 1;
	trail[0] = tm->ids[tm->me];
	RCHECK(raw(r, tm, &b, trail, DOCA_ERROR_ALREADY_EXIST) == 0);
	free(heap);
	/* still in step: a collective afterwards works */
	RCHECK(run(r, tm, UROM_WORKER_CMD_COLL_ALLREDUCE, UROM_COLL_INT64, UROM_COLL_SUM, 7, 0,
		   0) == 0);
	return 0;
}

static int teams(struct rank *r, struct cteam *world)
{
	struct urom_coll_team *extra[UROM_COLL_MAX_TEAMS], *t = NULL;
	uint64_t me = r->rank, bad[2] = {r->rank, 60};
	struct urom_coll_req *req = NULL;
	uint32_t k, live = 3; /* world, reversed, strided */

	/* duplicate tag on this worker: the host half refuses */
	RSTATUS(urom_coll_team_create(r->w, r->s.pe, 0x10, me, world->ids, world->size, &t),
		DOCA_ERROR_ALREADY_EXIST);
	RCHECK(t == NULL);
	/* a member that is not in the domain: the worker refuses; the handle is destroyable */
	RSTATUS(urom_coll_team_create(r->w, r->s.pe, 0x40, me, bad, 2, &t), DOCA_SUCCESS);
	RSTATUS(urom_coll_team_wait_ready(t, WAIT_MS), DOCA_ERROR_NOT_FOUND);
	RSTATUS(urom_coll_barrier(t, &req), DOCA_ERROR_BAD_STATE);
	RSTATUS(urom_coll_team_destroy(t, WAIT_MS), DOCA_SUCCESS);
	/* teams of one up to the worker's limit, then FULL */
	for (k = 0; live + k < UROM_COLL_MAX_TEAMS; k++) {
		RSTATUS(urom_coll_team_create(r->w, r->s.pe, 0x100 + k, me, &me, 1, &extra[k]),
			DOCA_SUCCESS);
	}
	RSTATUS(urom_coll_team_create(r->w, r->s.pe, 0x100 + k, me, &me, 1, &t), DOCA_SUCCESS);
	RSTATUS(urom_coll_team_wait_ready(t, WAIT_MS), DOCA_ERROR_FULL);
	RSTATUS(urom_coll_team_destroy(t, WAIT_MS), DOCA_SUCCESS);
	for (uint32_t i = 0; i < k; i++)
		RSTATUS(urom_coll_team_wait_ready(extra[i], WAIT_MS), DOCA_SUCCESS);
	/* a team of one runs collectives locally */
	{
		struct cteam one = {.t = extra[0], .size = 1, .me = 0, .ids = {me}};

		RCHECK(run(r, &one, UROM_WORKER_CMD_COLL_ALLTOALL, UROM_COLL_INT32, 0, 77, 0, 0) ==
		       0);
		RCHECK(run(r, &one, UROM_WORKER_CMD_COLL_ALLREDUCE, UROM_COLL_FLOAT, UROM_COLL_PROD,
			   77, 0, 1) == 0);
	}
	for (uint32_t i = 0; i < k; i++)
		RSTATUS(urom_coll_team_destroy(extra[i], WAIT_MS), DOCA_SUCCESS);
	/* destroy while a collective is outstanding: IN_USE, the team still works */
	RSTATUS(urom_coll_barrier(world->t, &req), DOCA_SUCCESS);
	RSTATUS(urom_coll_team_destroy(world->t, WAIT_MS), DOCA_ERROR_IN_USE);
	RSTATUS(urom_coll_wait(req, WAIT_MS), DOCA_SUCCESS);
	RCHECK(run(r, world, UROM_WORKER_CMD_COLL_BARRIER, 0, 0, 0, 0, 0) == 0);
	return 0;
}

/*
 * Buffers outside the domain (worker_coll.h "Buffers"): each rank exports two buffers of its
 * own with sdp_urom_mem_export() and hands their memh with the command; the workers pass them
 * on with their ARRIVE. Allreduce (memh for both buffers, three times on the same memh: the
 * workers' caches), allgather (the others PUT into memh-named memory), a domain send buffer
 * with a memh receive buffer, the in-place form with one memh; then the refusals: another
 * rank's memh as one's own (NOT_PERMITTED here, INVALID_VALUE on the others), bytes that are
 * no memh, a buffer past its memh's region, and host-side bounds.
 */
static void int64_ref(int64_t *want, size_t count, uint32_t n, uint64_t seq)
{
	for (size_t i = 0; i < count; i++)
		want[i] = (int64_t)(i * (n * (n + 1) / 2) + n * seq);
}

static void int64_mine(int64_t *p, size_t count, uint32_t rank, uint64_t seq)
{
	for (size_t i = 0; i < count; i++)
		p[i] = (int64_t)((rank + 1) * i + seq);
}

static int memh_buffers(struct rank *r, const struct cteam *tm)
{
	const size_t count = 65536 + 3, bytes = count * 8;
	const size_t len = bytes + 4096 + 100;
	struct sdp_urom_mem *ms = NULL, *mr = NULL;
	const void *hs = NULL, *hr = NULL;
	size_t ls = 0, lr = 0;
	struct urom_coll_memh m;
	struct urom_worker_coll_cmd c;
	uint8_t *sb = malloc(len), *rb = malloc(len * MAXR);
	int64_t *want = malloc(bytes), *s, *rv;
	struct {
		uint32_t len;
		uint8_t b[UROM_COLL_MEMH_MAX];
	} mine, *all = calloc(MAXR, sizeof(*all));
	int rc = -1;

	RCHECK(sb != NULL && rb != NULL && want != NULL && all != NULL);
	/* offsets inside a page: the workers must not assume page-aligned buffers */
	s = (int64_t *)(sb + 104);
	rv = (int64_t *)(rb + 200);
	RSTATUS(sdp_urom_mem_export(sb, len, &ms), DOCA_SUCCESS);
	RSTATUS(sdp_urom_mem_export(rb, len * MAXR, &mr), DOCA_SUCCESS);
	RSTATUS(sdp_urom_mem_get_memh(ms, &hs, &ls), DOCA_SUCCESS);
	RSTATUS(sdp_urom_mem_get_memh(mr, &hr, &lr), DOCA_SUCCESS);
	RCHECK(ls <= UROM_COLL_MEMH_MAX && lr <= UROM_COLL_MEMH_MAX);
	memset(&c, 0, sizeof(c));
	c.type = UROM_WORKER_CMD_COLL_ALLREDUCE;
	c.dtype = UROM_COLL_INT64;
	c.op = UROM_COLL_SUM;
	c.count = count;
	c.sbuf_va = (uint64_t)(uintptr_t)s;
	c.rbuf_va = (uint64_t)(uintptr_t)rv;
	m = (struct urom_coll_memh){.s = hs, .slen = ls, .r = hr, .rlen = lr};
	for (int round = 0; round < 3; round++) {
		uint64_t seq = ++r->seq;

		int64_mine(s, count, r->rank, seq);
		memset(rv, 0xee, bytes);
		RSTATUS(urom_coll_submit_memh_wait(tm->t, &c, NULL, &m, WAIT_MS), DOCA_SUCCESS);
		int64_ref(want, count, tm->size, seq);
		RCHECK(memcmp(rv, want, bytes) == 0);
	}
	/* allgather: every member's block lands in every rb (the others write it remotely) */
	{
		struct urom_worker_coll_cmd g = c;
		uint64_t seq = ++r->seq;

		g.type = UROM_WORKER_CMD_COLL_ALLGATHER;
		g.dtype = UROM_COLL_UINT8;
		g.op = 0;
		g.count = bytes;
		fill_bytes((uint8_t *)s, bytes, r->rank, 0, seq);
		memset(rv, 0xee, bytes * tm->size);
		RSTATUS(urom_coll_submit_memh_wait(tm->t, &g, NULL, &m, WAIT_MS), DOCA_SUCCESS);
		for (uint32_t p = 0; p < tm->size; p++)
			RCHECK(check_bytes((uint8_t *)rv + p * bytes, bytes, tm->ids[p], 0, seq,
					   "memh allgather") == 0);
	}
	/* the send buffer in a domain segment, the receive buffer memh-named */
	{
		struct urom_worker_coll_cmd d = c;
		struct urom_coll_memh mo = {.r = hr, .rlen = lr};
		uint64_t seq = ++r->seq;

		d.sbuf_va = (uint64_t)(uintptr_t)(r->seg[0] + 64);
		int64_mine((int64_t *)(r->seg[0] + 64), count, r->rank, seq);
		memset(rv, 0xee, bytes);
		RSTATUS(urom_coll_submit_memh_wait(tm->t, &d, NULL, &mo, WAIT_MS), DOCA_SUCCESS);
		int64_ref(want, count, tm->size, seq);
		RCHECK(memcmp(rv, want, bytes) == 0);
	}
	/* in place: the input in the memh receive buffer */
	{
		struct urom_worker_coll_cmd ip = c;
		struct urom_coll_memh mo = {.r = hr, .rlen = lr};
		uint64_t seq = ++r->seq;

		ip.sbuf_va = ip.rbuf_va;
		ip.flags = UROM_COLL_FLAG_IN_PLACE;
		int64_mine(rv, count, r->rank, seq);
		RSTATUS(urom_coll_submit_memh_wait(tm->t, &ip, NULL, &mo, WAIT_MS), DOCA_SUCCESS);
		int64_ref(want, count, tm->size, seq);
		RCHECK(memcmp(rv, want, bytes) == 0);
	}
	/* refusals on the worker: every member fails the collective */
	memset(&mine, 0, sizeof(mine));
	mine.len = (uint32_t)lr;
	memcpy(mine.b, hr, lr);
	RSTATUS(sdp_urom_oob_allgather(r->oob, &mine, all, sizeof(mine)), DOCA_SUCCESS);
	{
		/* rank 0 names rank 1's receive buffer with rank 1's memh: not its own memory */
		const uint8_t *theirs = all[tm->ids[1] % MAXR].b;
		struct urom_worker_coll_cmd f = c;
		struct urom_coll_memh mf = {.s = hs, .slen = ls, .r = hr, .rlen = lr};
		doca_error_t want_st = DOCA_ERROR_INVALID_VALUE;

		++r->seq;
		if (tm->me == 0) {
			mf.r = theirs;
			mf.rlen = all[tm->ids[1] % MAXR].len;
			want_st = DOCA_ERROR_NOT_PERMITTED;
		}
		RSTATUS(urom_coll_submit_memh_wait(tm->t, &f, NULL, &mf, WAIT_MS), want_st);
	}
	{
		/* bytes that are no memh (rank 0), then a receive buffer past its region (rank 1) */
		static const uint8_t junk[64] = {1, 2, 3};
		struct urom_worker_coll_cmd f = c;
		struct urom_coll_memh mf = m;

		++r->seq;
		if (tm->me == 0) {
			mf.r = junk;
			mf.rlen = sizeof(junk);
		}
		RSTATUS(urom_coll_submit_memh_wait(tm->t, &f, NULL, &mf, WAIT_MS),
			DOCA_ERROR_INVALID_VALUE);
		++r->seq;
		f.rbuf_va = (uint64_t)(uintptr_t)(rb + len * MAXR - bytes / 2);
		if (tm->me != 1)
			f.rbuf_va = c.rbuf_va;
		RSTATUS(urom_coll_submit_memh_wait(tm->t, &f, NULL, &m, WAIT_MS),
			DOCA_ERROR_INVALID_VALUE);
	}
	/* host side: refused before anything is submitted */
	{
		struct urom_coll_memh mf = {.s = NULL, .slen = 8};

		RSTATUS(urom_coll_submit_memh_wait(tm->t, &c, NULL, &mf, WAIT_MS),
			DOCA_ERROR_INVALID_VALUE);
		mf = m;
		mf.rlen = UROM_COLL_MEMH_MAX + 1;
		RSTATUS(urom_coll_submit_memh_wait(tm->t, &c, NULL, &mf, WAIT_MS),
			DOCA_ERROR_INVALID_VALUE);
	}
	/* and the team still works, on the same registrations */
	{
		uint64_t seq = ++r->seq;

		int64_mine(s, count, r->rank, seq);
		RSTATUS(urom_coll_submit_memh_wait(tm->t, &c, NULL, &m, WAIT_MS), DOCA_SUCCESS);
		int64_ref(want, count, tm->size, seq);
		RCHECK(memcmp(rv, want, bytes) == 0);
	}
	rc = 0;
	/* the domain's workers may still hold the keys: unexported after the domain (rank_close) */
	r->extra[r->nextra++] = ms;
	r->extra[r->nextra++] = mr;
	r->extra_buf[r->nextra_buf++] = sb;
	r->extra_buf[r->nextra_buf++] = rb;
	free(want);
	free(all);
	return rc;
}

/* Ladder step 4: a worker without worker_coll refuses a team creation with NOT_SUPPORTED. */
static int step4(struct rank *r)
{
	struct t_worker_cfg cfg = {.id = DOCA_UROM_WORKER_ID_ANY, .max_inflight = 4};
	struct urom_coll_team *t = NULL;
	struct doca_urom_worker *w2 = NULL;
	uint64_t me = r->rank;
	doca_error_t st;
	int rc = -1;

	RCHECK(r->graph_id != 0 && r->graph_id != r->coll_id);
	cfg.plugins = r->graph_id;
	if (t_worker_start(&r->s, r->s.pe, &cfg, &w2) != DOCA_SUCCESS) {
		fprintf(stderr, "rank %u: worker_graph-only worker did not start\n", r->rank);
		if (w2 != NULL)
			(void)doca_urom_worker_destroy(w2);
		return -1;
	}
	/* refused at submission (the library knows the worker's plugins) or by the worker */
	st = urom_coll_team_create(w2, r->s.pe, 0x77, me, &me, 1, &t);
	if (st == DOCA_SUCCESS) {
		st = urom_coll_team_wait_ready(t, WAIT_MS);
		if (urom_coll_team_destroy(t, WAIT_MS) != DOCA_SUCCESS)
			st = DOCA_ERROR_UNKNOWN;
	}
	if (st == DOCA_ERROR_NOT_SUPPORTED)
		rc = 0;
	else
		fprintf(stderr, "rank %u: team on a worker without worker_coll: %s\n", r->rank,
			doca_error_get_name(st));
	t_worker_close(&r->s, r->s.pe, w2);
	return rc;
}

/* ---- setup ---- */

static int find_plugins(struct rank *r)
{
	const struct doca_urom_service_plugin_info *pl;
	size_t n = 0;

	RCHECK(doca_urom_service_get_plugins_list(r->s.svc, &pl, &n) == DOCA_SUCCESS);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(pl[i].plugin_name, "worker_coll") == 0) {
			r->coll_id = pl[i].id;
			r->coll_version = pl[i].version;
		} else if (strcmp(pl[i].plugin_name, "worker_graph") == 0) {
			r->graph_id = pl[i].id;
		}
	}
	RCHECK(r->coll_id != 0);
	RSTATUS(urom_coll_init(r->coll_id, r->coll_version + 1), DOCA_ERROR_UNSUPPORTED_VERSION);
	RSTATUS(urom_coll_init(r->coll_id, r->coll_version), DOCA_SUCCESS);
	return 0;
}

static int rank_open(struct rank *r, uint16_t port)
{
	struct sdp_urom_oob_params op = {.rank = r->rank,
					 .size = r->n,
					 .secret = secret,
					 .secret_len = sizeof(secret),
					 .timeout_ms = 30000};
	struct t_worker_cfg cfg = {.id = DOCA_UROM_WORKER_ID_ANY, .max_inflight = 64};
	struct doca_urom_domain_oob_coll coll;
	uint64_t id = r->rank;
	char root[64];

	/* sized for 1 MiB blocks from every member (64 MiB in all in big mode), rank-dependent */
	r->seglen = (r->big ? 64 * MIB : MAXR * MIB) + SLACK + 4096 * r->rank;
	for (int k = 0; k < 2; k++) {
		r->seg[k] = aligned_alloc(4096, (r->seglen + 4095) / 4096 * 4096);
		RCHECK(r->seg[k] != NULL);
		memset(r->seg[k], 0, r->seglen);
	}
	snprintf(root, sizeof(root), "127.0.0.1:%u", port);
	op.root = root;
	if (r->oob == NULL)
		RCHECK(sdp_urom_oob_create(&op, &r->oob) == DOCA_SUCCESS);
	RCHECK(t_svc_open(&r->s, 0) == DOCA_SUCCESS);
	RCHECK(find_plugins(r) == 0);
	cfg.plugins = r->coll_id;
	RCHECK(t_worker_start(&r->s, r->s.pe, &cfg, &r->w) == DOCA_SUCCESS);
	sdp_urom_oob_coll(r->oob, &coll);
	RCHECK(doca_urom_domain_create(&r->dom) == DOCA_SUCCESS);
	RCHECK(doca_pe_connect_ctx(r->s.pe, doca_urom_domain_as_ctx(r->dom)) == DOCA_SUCCESS);
	RCHECK(doca_urom_domain_set_oob(r->dom, &coll) == DOCA_SUCCESS);
	RCHECK(doca_urom_domain_set_workers(r->dom, &id, &r->w, 1) == DOCA_SUCCESS);
	RCHECK(doca_urom_domain_set_buffers_count(r->dom, 2) == DOCA_SUCCESS);
	for (int k = 0; k < 2; k++)
		RCHECK(sdp_urom_domain_export_buffer(r->dom, r->seg[k], r->seglen, &r->mem[k]) ==
		       DOCA_SUCCESS);
	RCHECK(doca_ctx_start(doca_urom_domain_as_ctx(r->dom)) == DOCA_ERROR_IN_PROGRESS);
	RCHECK(t_ctx_wait_state(doca_urom_domain_as_ctx(r->dom), r->s.pe, NULL,
				DOCA_CTX_STATE_RUNNING, T_WAIT_MS) == DOCA_CTX_STATE_RUNNING);
	return 0;
}

static void rank_close(struct rank *r)
{
	if (r->dom != NULL) {
		(void)doca_ctx_stop(doca_urom_domain_as_ctx(r->dom));
		(void)doca_urom_domain_destroy(r->dom);
	}
	for (int k = 0; k < 2; k++)
		if (r->mem[k] != NULL)
			(void)sdp_urom_mem_unexport(r->mem[k]);
	for (int k = 0; k < r->nextra; k++)
		(void)sdp_urom_mem_unexport(r->extra[k]);
	if (r->w != NULL)
		t_worker_close(&r->s, r->s.pe, r->w);
	if (r->s.svc != NULL)
		t_svc_close(&r->s);
	if (r->oob != NULL)
		(void)sdp_urom_oob_destroy(r->oob);
	free(r->seg[0]);
	free(r->seg[1]);
	for (int k = 0; k < r->nextra_buf; k++)
		free(r->extra_buf[k]);
}

static int team_open(struct rank *r, struct cteam *tm, uint64_t tag, const uint64_t *ids,
		     uint32_t size)
{
	memset(tm, 0, sizeof(*tm));
	tm->size = size;
	memcpy(tm->ids, ids, size * sizeof(*ids));
	for (uint32_t p = 0; p < size; p++)
		if (ids[p] == r->rank)
			tm->me = p;
	RSTATUS(urom_coll_team_create(r->w, r->s.pe, tag, r->rank, ids, size, &tm->t),
		DOCA_SUCCESS);
	RCHECK(urom_coll_team_rank(tm->t) == tm->me && urom_coll_team_size(tm->t) == size);
	return 0;
}

static int rank_cases(struct rank *r)
{
	uint64_t ids[MAXR], rev[MAXR], sub[MAXR];
	struct cteam world, back, half;
	uint32_t n = r->n, hs = n == 4 ? 2 : 1;
	const uint64_t counts[3] = {0, 1, 1001};

	for (uint32_t k = 0; k < n; k++)
		ids[k] = k, rev[k] = n - 1 - k;
	for (uint32_t k = 0; k < hs; k++)
		sub[k] = n == 4 ? r->rank % 2 + 2 * k : r->rank;
	RCHECK(team_open(r, &world, 0x10, ids, n) == 0);
	RCHECK(team_open(r, &back, 0x11, rev, n) == 0);
	/* n == 4: {0, 2} and {1, 3}, the same tag on disjoint workers; n == 2: a team of one */
	if (n == 4)
		RSTATUS(urom_coll_team_create_strided(r->w, r->s.pe, 0x20, r->rank, r->rank % 2, 2,
						      2, &half.t),
			DOCA_SUCCESS);
	else
		RSTATUS(urom_coll_team_create_strided(r->w, r->s.pe, 0x20, r->rank, r->rank, 1, 1,
						      &half.t),
			DOCA_SUCCESS);
	half.size = hs;
	half.me = n == 4 ? r->rank / 2 : 0;
	memcpy(half.ids, sub, sizeof(sub));
	RCHECK(urom_coll_team_rank(half.t) == half.me);
	RSTATUS(urom_coll_team_wait_ready(world.t, WAIT_MS), DOCA_SUCCESS);

	if (r->big) {
		/* 64 MiB per collective: the largest buffer each one has */
		uint64_t b = 64 * MIB;

		RCHECK(run(r, &world, UROM_WORKER_CMD_COLL_BCAST, UROM_COLL_UINT8, 0, b, 1, 0) ==
		       0);
		RCHECK(run(r, &world, UROM_WORKER_CMD_COLL_ALLREDUCE, UROM_COLL_DOUBLE,
			   UROM_COLL_SUM, b / 8, 0, 0) == 0);
		RCHECK(run(r, &world, UROM_WORKER_CMD_COLL_ALLREDUCE, UROM_COLL_INT32,
			   UROM_COLL_MAX, b / 4, 0, 1) == 0);
		RCHECK(run(r, &world, UROM_WORKER_CMD_COLL_REDUCE, UROM_COLL_INT64, UROM_COLL_SUM,
			   b / 8, 1, 0) == 0);
		RCHECK(run(r, &world, UROM_WORKER_CMD_COLL_ALLGATHER, UROM_COLL_UINT64, 0,
			   b / 8 / n, 0, 0) == 0);
		RCHECK(run(r, &world, UROM_WORKER_CMD_COLL_ALLTOALL, UROM_COLL_UINT32, 0, b / 4 / n,
			   0, 0) == 0);
		RCHECK(run(r, &world, UROM_WORKER_CMD_COLL_ALLTOALLV, UROM_COLL_UINT16, 0,
			   b / 2 / n - 64, 0, 0) == 0);
		RCHECK(run(r, &world, UROM_WORKER_CMD_COLL_REDUCE_SCATTER, UROM_COLL_FLOAT,
			   UROM_COLL_SUM, b / 4 / n, 0, 0) == 0);
		RCHECK(run(r, &world, UROM_WORKER_CMD_COLL_BARRIER, 0, 0, 0, 0, 0) == 0);
		RCHECK(every_type_op_bytes(r, &world, 4 * MIB, b) == 0);
	} else {
		for (int k = 0; k < 3; k++)
			RCHECK(all_kinds(r, &world, counts[k], (uint64_t)(k * 3 + 2) % 10) == 0);
		RCHECK(all_kinds(r, &world, MIB / 4, UROM_COLL_UINT32) == 0);
		RCHECK(every_type_op(r, &world, 0) == 0);
		RCHECK(every_type_op(r, &world, 1) == 0);
		RCHECK(every_type_op(r, &world, 37) == 0);
		RCHECK(in_place(r, &world, 1) == 0);
		RCHECK(in_place(r, &world, 1001) == 0);
		RCHECK(all_kinds(r, &back, 1001, UROM_COLL_INT16) == 0);
		RCHECK(in_place(r, &back, 333) == 0);
		RCHECK(all_kinds(r, &half, 1001, UROM_COLL_UINT64) == 0);
		RCHECK(outstanding(r, &world, &back) == 0);
		RCHECK(refusals(r, &world) == 0);
		RCHECK(memh_buffers(r, &world) == 0);
		RCHECK(teams(r, &world) == 0);
		if (r->rank == 0)
			RCHECK(step4(r) == 0);
	}
	RCHECK(run(r, &world, UROM_WORKER_CMD_COLL_BARRIER, 0, 0, 0, 0, 0) == 0);
	RSTATUS(urom_coll_team_destroy(half.t, WAIT_MS), DOCA_SUCCESS);
	RSTATUS(urom_coll_team_destroy(back.t, WAIT_MS), DOCA_SUCCESS);
	RSTATUS(urom_coll_team_destroy(world.t, WAIT_MS), DOCA_SUCCESS);
	fprintf(stderr, "rank %u of %u: %llu collectives checked\n", r->rank, r->n,
		(unsigned long long)r->seq);
	return 0;
}

static int rank_main(uint32_t rank, uint32_t n, int big, uint16_t port, struct sdp_urom_oob *oob)
{
	struct rank r;
	int ok, all[MAXR] = {0}, rc = -1;

	memset(&r, 0, sizeof(r));
	cur = &r;
	r.rank = rank;
	r.n = n;
	r.big = big;
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
	int big = 0;

	if (argc < 3 || (n = (uint32_t)atoi(argv[2])) < 2 || n > MAXR || n == 3) {
		fprintf(stderr, "usage: %s PLUGIN_PATH NRANKS(2 or 4) [tcp|big]\n", argv[0]);
		return T_EXIT_FAIL;
	}
	if (argc > 3 && strcmp(argv[3], "tcp") == 0)
		setenv("UCX_TLS", "tcp", 1);
	big = argc > 3 && strcmp(argv[3], "big") == 0;
	setenv("UROM_PLUGIN_PATH", argv[1], 1);
	op.size = n;
	if (t_uromd_start(&d, NULL) != 0)
		return T_EXIT_FAIL;
	T_OK(sdp_urom_oob_create(&op, &root));
	for (uint32_t k = 0; k < n; k++) {
		pids[k] = fork();
		if (pids[k] == 0)
			_exit(rank_main(k, n, big, sdp_urom_oob_port(root), k == 0 ? root : NULL) ==
					      0 ?
				      0 :
				      1);
	}
	(void)sdp_urom_oob_destroy(root);
	for (uint32_t k = 0; k < n; k++) {
		int st = -1;

		if (!t_wait_child(pids[k], 280000, &st)) {
			kill(pids[k], SIGKILL);
			t_fail("rank %u did not exit", k);
		} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			t_fail("rank %u exit status %d", k, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		}
	}
	t_uromd_stop(&d);
	T_DONE();
}
