/*
 * worker_coll plugin, worker half: collectives over a team (the whole domain, members
 * 0 .. size-1 by domain id) whose data the worker moves itself, with RMA between the members'
 * exported host buffers; the hosts' CPUs take no part (common/worker_coll.h has the messages,
 * docs/plugins.md "worker_coll" the semantics and the algorithm).
 *
 * Every member's segment 0 starts with a control area, one struct urom_coll_slot per member.
 * A collective numbered seq (every member counts its collectives the same way) runs as:
 * 1. arrive: write (signature, phase 2*seq-1) into this member's slot of every member's
 *    control area (signature first, flushed, then the phase), which says "my send buffer holds
 *    the data of collective seq";
 * 2. wait until every slot of the own control area shows phase >= 2*seq-1 (read with GETs
 *    from the own host, at most every COLL_POLL_US, bounded by UROM_COLL_WAIT_MS), compare
 *    the signatures (a mismatch fails the collective everywhere with INVALID_VALUE);
 * 3. GET the needed parts of the members' send buffers (at the same offsets from each
 *    member's segment base as the own ones) into a local buffer, reducing in member order;
 * 4. done: write phase 2*seq into every member's control area, wait until all show 2*seq
 *    (no member reads a send buffer any more, so the hosts may reuse them);
 * 5. PUT the result into the own host's receive buffer, flush, answer.
 * Commands run one at a time in arrival order. The transfers use sdp_plugin_mem's blocking
 * calls (each bounded); only the waits for the other members return to the runtime loop.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ucp/api/ucp.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_urom_plugin.h>

#include "sdp_plugin_mem.h"
#include "sdp_plugin_util.h"
#include "sdp_urom_memh.h"
#include "softdpu/urom_plugin.h"
#include "worker_coll.h"

DOCA_LOG_REGISTER(UROM::WORKER::COLL);

/* Bound of every single blocking transfer (ms). */
#define COLL_XFER_MS 10000
/* Transfers are split into pieces of this size. */
#define COLL_CHUNK (1u << 20)
/* Least time between two reads of the control area while waiting (us). */
#define COLL_POLL_US 50

struct coll;

struct job {
	struct urom_worker_cmd_desc *cd;
	struct urom_worker_coll_cmd c;
	doca_error_t status;
	uint64_t seq, sig;
	int stage; /* 1 waiting for the arrivals, 2 waiting for the done marks */
	int64_t deadline_us, next_poll_us;
	uint64_t region[UROM_COLL_MAX_MEMBERS];
	uint64_t base[UROM_COLL_MAX_MEMBERS];
	uint64_t soff, roff, slen, rlen, esize;
	uint8_t *res, *tmp;
};

struct coll {
	ucp_context_h context;
	ucp_worker_h worker;
	struct sdp_plugin_mem *mem;
	struct urom_worker_ctx *ctx;
	ucs_list_link_t queue;
	ucs_list_link_t done;
	struct job *job;
	uint64_t seq; /* collectives this worker has run as a team member */
};

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void notify(struct coll *co, const struct urom_worker_cmd_desc *cd, uint64_t type,
		   uint64_t context, doca_error_t status, uint64_t seq)
{
	struct urom_worker_notify_coll n = {
		.type = type, .context = context, .status = status, .seq = seq};
	struct urom_worker_notif_desc *nd = calloc(1, sizeof(*nd) + sizeof(n));

	if (nd == NULL) {
		DOCA_LOG_ERR("no memory for a notification");
		return;
	}
	nd->dest_id = cd->dest_id;
	nd->worker_notif.type = cd->worker_cmd.type;
	nd->worker_notif.urom_context = cd->worker_cmd.urom_context;
	nd->worker_notif.status = status;
	nd->worker_notif.len = sizeof(n);
	memcpy(nd->worker_notif.plugin_notif, &n, sizeof(n));
	ucs_list_add_tail(&co->done, &nd->entry);
}

static void job_end(struct coll *co, struct job *j)
{
	notify(co, j->cd, j->c.type, j->c.context, j->status, j->stage != 0 ? j->seq : 0);
	free(j->cd);
	free(j->res);
	free(j->tmp);
	free(j);
	co->job = NULL;
}

/* ---- element types and reductions ---- */

static size_t dtype_size(uint64_t dt)
{
	return dt == UROM_COLL_INT32 || dt == UROM_COLL_UINT32 || dt == UROM_COLL_FLOAT ? 4 : 8;
}

#define RED_LOOP(T, EXPR)                                                                          \
	do {                                                                                       \
		T *a = (T *)acc;                                                                   \
		const T *b = (const T *)in;                                                        \
		for (size_t i = 0; i < n; i++)                                                     \
			a[i] = EXPR;                                                               \
	} while (0)

#define RED_ARITH(T)                                                                               \
	switch (op) {                                                                              \
	case UROM_COLL_SUM:                                                                        \
		RED_LOOP(T, a[i] + b[i]);                                                          \
		break;                                                                             \
	case UROM_COLL_PROD:                                                                       \
		RED_LOOP(T, a[i] * b[i]);                                                          \
		break;                                                                             \
	case UROM_COLL_MIN:                                                                        \
		RED_LOOP(T, b[i] < a[i] ? b[i] : a[i]);                                            \
		break;                                                                             \
	case UROM_COLL_MAX:                                                                        \
		RED_LOOP(T, b[i] > a[i] ? b[i] : a[i]);                                            \
		break;                                                                             \
	default:                                                                                   \
		break;                                                                             \
	}

#define RED_INT(T)                                                                                 \
	switch (op) {                                                                              \
	case UROM_COLL_BAND:                                                                       \
		RED_LOOP(T, a[i] & b[i]);                                                          \
		break;                                                                             \
	case UROM_COLL_BOR:                                                                        \
		RED_LOOP(T, a[i] | b[i]);                                                          \
		break;                                                                             \
	case UROM_COLL_BXOR:                                                                       \
		RED_LOOP(T, a[i] ^ b[i]);                                                          \
		break;                                                                             \
	default:                                                                                   \
		RED_ARITH(T)                                                                       \
		break;                                                                             \
	}

/* acc[i] = acc[i] op in[i] for n elements (signed sums and products wrap: done unsigned). */
static void reduce(uint64_t dt, uint64_t op, void *acc, const void *in, size_t n)
{
	switch (dt) {
	case UROM_COLL_INT32:
		if (op == UROM_COLL_SUM || op == UROM_COLL_PROD) {
			RED_INT(uint32_t);
		} else {
			RED_INT(int32_t);
		}
		break;
	case UROM_COLL_INT64:
		if (op == UROM_COLL_SUM || op == UROM_COLL_PROD) {
			RED_INT(uint64_t);
		} else {
			RED_INT(int64_t);
		}
		break;
	case UROM_COLL_UINT32:
		RED_INT(uint32_t);
		break;
	case UROM_COLL_UINT64:
		RED_INT(uint64_t);
		break;
	case UROM_COLL_FLOAT:
		RED_ARITH(float);
		break;
	default:
		RED_ARITH(double);
		break;
	}
}

/* ---- transfers ---- */

static doca_error_t get_range(struct coll *co, uint64_t region, uint64_t va, uint8_t *dst,
			      uint64_t len)
{
	for (uint64_t off = 0; off < len; off += COLL_CHUNK) {
		uint64_t n = len - off < COLL_CHUNK ? len - off : COLL_CHUNK;
		doca_error_t st =
			sdp_plugin_mem_get(co->mem, region, va + off, dst + off, n, COLL_XFER_MS);

		if (st != DOCA_SUCCESS)
			return st;
	}
	return DOCA_SUCCESS;
}

static doca_error_t put_range(struct coll *co, uint64_t region, uint64_t va, const uint8_t *src,
			      uint64_t len)
{
	for (uint64_t off = 0; off < len; off += COLL_CHUNK) {
		uint64_t n = len - off < COLL_CHUNK ? len - off : COLL_CHUNK;
		doca_error_t st =
			sdp_plugin_mem_put(co->mem, region, va + off, src + off, n, COLL_XFER_MS);

		if (st != DOCA_SUCCESS)
			return st;
	}
	return DOCA_SUCCESS;
}

/* Write word (sig: offset 0, phase: offset 8) of the own slot into every member. */
static doca_error_t mark_all(struct coll *co, struct job *j, size_t field, uint64_t value)
{
	for (uint64_t p = 0; p < j->c.size; p++) {
		doca_error_t st = sdp_plugin_mem_put(co->mem, j->region[p],
						     j->base[p] + j->c.rank * 16 + field, &value,
						     sizeof(value), COLL_XFER_MS);

		if (st != DOCA_SUCCESS) {
			DOCA_LOG_ERR("collective %llu: cannot mark member %llu: %s",
				     (unsigned long long)j->seq, (unsigned long long)p,
				     doca_error_get_name(st));
			return st;
		}
	}
	return DOCA_SUCCESS;
}

/* ---- setting a collective up ---- */

/* Segment 0 of member p: its base address, imported. */
static doca_error_t member_of(struct coll *co, uint64_t p, uint64_t *base, uint64_t *region)
{
	struct sdp_urom_memh m;
	void *memh = NULL;
	size_t memh_len = 0;
	uint64_t len = 0;
	doca_error_t st;

	st = doca_urom_worker_domain_memh_lookup(co->ctx, p, 0, &memh_len, &memh);
	if (st != DOCA_SUCCESS || memh == NULL) {
		DOCA_LOG_ERR("team member %llu has no exported segment 0", (unsigned long long)p);
		return st != DOCA_SUCCESS ? st : DOCA_ERROR_NOT_FOUND;
	}
	if (sdp_urom_memh_unpack(memh, memh_len, &m) != DOCA_SUCCESS) {
		DOCA_LOG_ERR("malformed memh of team member %llu", (unsigned long long)p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	st = sdp_plugin_mem_import_domain(co->mem, co->ctx, p, m.va, region);
	if (st != DOCA_SUCCESS)
		return st;
	st = sdp_plugin_mem_region_get(co->mem, *region, base, &len);
	if (st == DOCA_SUCCESS && len < UROM_COLL_CTRL_LEN) {
		DOCA_LOG_ERR(
			"team member %llu: segment 0 of %llu bytes cannot hold the control area",
			(unsigned long long)p, (unsigned long long)len);
		st = DOCA_ERROR_INVALID_VALUE;
	}
	return st;
}

/* Check [off, off + len) after the control area, inside member p's segment 0. */
static doca_error_t range_ok(struct coll *co, struct job *j, uint64_t p, uint64_t off, uint64_t len)
{
	if (len == 0)
		return DOCA_SUCCESS;
	if (off < UROM_COLL_CTRL_LEN) {
		DOCA_LOG_ERR("collective buffer at offset %llu overlaps the control area",
			     (unsigned long long)off);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (j->base[p] + off < j->base[p]) {
		DOCA_LOG_ERR("collective buffer offset %llu overflows", (unsigned long long)off);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return sdp_plugin_mem_check(co->mem, j->region[p], j->base[p] + off, len);
}

static doca_error_t check_cmd(const struct urom_worker_coll_cmd *c, uint64_t *esize)
{
	if (c->type > UROM_WORKER_CMD_COLL_MAX) {
		DOCA_LOG_ERR("unknown collective %llu", (unsigned long long)c->type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (c->size == 0 || c->size > UROM_COLL_MAX_MEMBERS || c->rank >= c->size) {
		DOCA_LOG_ERR("rank %llu of a team of %llu (1 .. %u members)",
			     (unsigned long long)c->rank, (unsigned long long)c->size,
			     UROM_COLL_MAX_MEMBERS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (c->type == UROM_WORKER_CMD_COLL_BARRIER)
		return DOCA_SUCCESS;
	if (c->dtype > UROM_COLL_DTYPE_MAX) {
		DOCA_LOG_ERR("unknown element type %llu", (unsigned long long)c->dtype);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*esize = dtype_size(c->dtype);
	if (c->count == 0 || c->count > UROM_COLL_MAX_LEN / *esize / c->size) {
		DOCA_LOG_ERR("count %llu: must be 1 .. %llu for this type and team",
			     (unsigned long long)c->count,
			     (unsigned long long)(UROM_COLL_MAX_LEN / *esize / c->size));
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (c->type == UROM_WORKER_CMD_COLL_ALLREDUCE) {
		if (c->op > UROM_COLL_OP_MAX) {
			DOCA_LOG_ERR("unknown reduction %llu", (unsigned long long)c->op);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (c->op >= UROM_COLL_BAND &&
		    (c->dtype == UROM_COLL_FLOAT || c->dtype == UROM_COLL_DOUBLE)) {
			DOCA_LOG_ERR("bitwise reduction %llu on a floating-point type",
				     (unsigned long long)c->op);
			return DOCA_ERROR_INVALID_VALUE;
		}
	}
	if (c->type == UROM_WORKER_CMD_COLL_BCAST && c->root >= c->size) {
		DOCA_LOG_ERR("broadcast root %llu outside the team of %llu",
			     (unsigned long long)c->root, (unsigned long long)c->size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

/* Resolve the team and check every range that will be touched; nothing moves yet. */
static doca_error_t job_setup(struct coll *co, struct job *j)
{
	const struct urom_worker_coll_cmd *c = &j->c;
	uint64_t blk, p;
	doca_error_t st;

	st = check_cmd(c, &j->esize);
	if (st != DOCA_SUCCESS)
		return st;
	for (p = 0; p < c->size; p++) {
		st = member_of(co, p, &j->base[p], &j->region[p]);
		if (st != DOCA_SUCCESS)
			return st;
	}
	blk = c->count * j->esize;
	switch (c->type) {
	case UROM_WORKER_CMD_COLL_ALLREDUCE:
		j->slen = j->rlen = blk;
		break;
	case UROM_WORKER_CMD_COLL_ALLTOALL:
		j->slen = j->rlen = blk * c->size;
		break;
	case UROM_WORKER_CMD_COLL_ALLGATHER:
		j->slen = blk;
		j->rlen = blk * c->size;
		break;
	case UROM_WORKER_CMD_COLL_BCAST:
		j->slen = j->rlen = blk;
		break;
	default:
		break;
	}
	if (j->rlen != 0) {
		if (c->sbuf_va < j->base[c->rank] || c->rbuf_va < j->base[c->rank]) {
			DOCA_LOG_ERR("collective buffers below the member's segment 0");
			return DOCA_ERROR_INVALID_VALUE;
		}
		j->soff = c->sbuf_va - j->base[c->rank];
		j->roff = c->rbuf_va - j->base[c->rank];
		st = range_ok(co, j, c->rank, j->roff, j->rlen);
		for (p = 0; p < c->size && st == DOCA_SUCCESS; p++) {
			if (c->type != UROM_WORKER_CMD_COLL_BCAST || p == c->root)
				st = range_ok(co, j, p, j->soff, j->slen);
		}
		if (st != DOCA_SUCCESS)
			return st;
		j->res = malloc(j->rlen);
		j->tmp = c->type == UROM_WORKER_CMD_COLL_ALLREDUCE ? malloc(blk) : NULL;
		if (j->res == NULL ||
		    (c->type == UROM_WORKER_CMD_COLL_ALLREDUCE && j->tmp == NULL)) {
			DOCA_LOG_ERR("no memory for %llu bytes of collective data",
				     (unsigned long long)j->rlen);
			return DOCA_ERROR_NO_MEMORY;
		}
	}
	j->sig = c->type | c->dtype << 4 | c->op << 8 | c->root << 12 | c->count << 20;
	if (c->type == UROM_WORKER_CMD_COLL_BARRIER)
		j->sig = 0;
	return DOCA_SUCCESS;
}

/* Step 3: the members' data into j->res. */
static doca_error_t gather(struct coll *co, struct job *j)
{
	const struct urom_worker_coll_cmd *c = &j->c;
	uint64_t blk = c->count * j->esize, p;
	doca_error_t st = DOCA_SUCCESS;

	for (p = 0; p < c->size && st == DOCA_SUCCESS; p++) {
		uint64_t sva = j->base[p] + j->soff;

		switch (c->type) {
		case UROM_WORKER_CMD_COLL_ALLREDUCE:
			st = get_range(co, j->region[p], sva, p == 0 ? j->res : j->tmp, blk);
			if (st == DOCA_SUCCESS && p != 0)
				reduce(c->dtype, c->op, j->res, j->tmp, c->count);
			break;
		case UROM_WORKER_CMD_COLL_ALLTOALL:
			st = get_range(co, j->region[p], sva + c->rank * blk, j->res + p * blk,
				       blk);
			break;
		case UROM_WORKER_CMD_COLL_ALLGATHER:
			st = get_range(co, j->region[p], sva, j->res + p * blk, blk);
			break;
		case UROM_WORKER_CMD_COLL_BCAST:
			if (p == c->root)
				st = get_range(co, j->region[p], sva, j->res, blk);
			break;
		default:
			break;
		}
	}
	return st;
}

/* ---- the waits ---- */

/* Read the own control area: 1 when every member's phase is >= want, 0 not yet, -1 error. */
static int all_reached(struct coll *co, struct job *j, uint64_t want, int check_sig)
{
	struct urom_coll_slot s[UROM_COLL_MAX_MEMBERS];
	uint64_t me = j->c.rank;
	doca_error_t st;

	st = sdp_plugin_mem_get(co->mem, j->region[me], j->base[me], s, j->c.size * sizeof(s[0]),
				COLL_XFER_MS);
	if (st != DOCA_SUCCESS) {
		j->status = st;
		return -1;
	}
	for (uint64_t p = 0; p < j->c.size; p++) {
		if (s[p].phase < want)
			return 0;
	}
	for (uint64_t p = 0; check_sig && p < j->c.size; p++) {
		if (s[p].sig != j->sig && j->status == DOCA_SUCCESS) {
			DOCA_LOG_ERR("collective %llu: member %llu runs a different collective "
				     "(signature %#llx, here %#llx)",
				     (unsigned long long)j->seq, (unsigned long long)p,
				     (unsigned long long)s[p].sig, (unsigned long long)j->sig);
			j->status = DOCA_ERROR_INVALID_VALUE;
		}
	}
	return 1;
}

/* Advance the current collective as far as the other members allow. */
static void job_poll(struct coll *co, struct job *j)
{
	int64_t now = now_us();
	int r;

	if (now < j->next_poll_us)
		return;
	j->next_poll_us = now + COLL_POLL_US;
	r = all_reached(co, j, j->stage == 1 ? 2 * j->seq - 1 : 2 * j->seq, j->stage == 1);
	if (r == 0 && now > j->deadline_us) {
		DOCA_LOG_ERR("collective %llu: the other members did not %s within %d ms",
			     (unsigned long long)j->seq, j->stage == 1 ? "arrive" : "finish",
			     UROM_COLL_WAIT_MS);
		j->status = DOCA_ERROR_TIME_OUT;
		r = -1;
	}
	if (r < 0) {
		job_end(co, j);
		return;
	}
	if (r == 0)
		return;
	if (j->stage == 1) {
		doca_error_t st;

		if (j->status == DOCA_SUCCESS && j->rlen != 0)
			j->status = gather(co, j);
		st = mark_all(co, j, 8, 2 * j->seq);
		if (st != DOCA_SUCCESS) {
			j->status = st;
			job_end(co, j);
			return;
		}
		j->stage = 2;
		j->deadline_us = now_us() + (int64_t)UROM_COLL_WAIT_MS * 1000;
		j->next_poll_us = 0;
		return;
	}
	if (j->status == DOCA_SUCCESS && j->rlen != 0)
		j->status = put_range(co, j->region[j->c.rank], j->base[j->c.rank] + j->roff,
				      j->res, j->rlen);
	job_end(co, j);
}

static void start_next(struct coll *co)
{
	struct urom_worker_cmd_desc *cd;
	struct job *j;
	doca_error_t st;

	while (co->job == NULL && !ucs_list_is_empty(&co->queue)) {
		cd = ucs_list_extract_head(&co->queue, struct urom_worker_cmd_desc, entry);
		if (cd->worker_cmd.len != sizeof(struct urom_worker_coll_cmd)) {
			DOCA_LOG_ERR("collective command of %llu bytes, expected %zu",
				     (unsigned long long)cd->worker_cmd.len,
				     sizeof(struct urom_worker_coll_cmd));
			notify(co, cd, UINT64_MAX, 0, DOCA_ERROR_INVALID_VALUE, 0);
			free(cd);
			continue;
		}
		j = calloc(1, sizeof(*j));
		if (j == NULL) {
			DOCA_LOG_ERR("no memory for a collective");
			notify(co, cd, UINT64_MAX, 0, DOCA_ERROR_NO_MEMORY, 0);
			free(cd);
			continue;
		}
		j->cd = cd;
		memcpy(&j->c, cd->worker_cmd.plugin_cmd, sizeof(j->c));
		co->job = j;
		st = job_setup(co, j);
		if (st != DOCA_SUCCESS) {
			j->status = st; /* refused: no sequence number used, nothing written */
			job_end(co, j);
			continue;
		}
		j->seq = ++co->seq;
		j->stage = 1;
		st = mark_all(co, j, 0, j->sig);
		if (st == DOCA_SUCCESS)
			st = mark_all(co, j, 8, 2 * j->seq - 1);
		if (st != DOCA_SUCCESS) {
			j->status = st;
			job_end(co, j);
			continue;
		}
		j->deadline_us = now_us() + (int64_t)UROM_COLL_WAIT_MS * 1000;
		job_poll(co, j);
	}
}

/* ---- plugin ops ---- */

static doca_error_t coll_open(struct urom_worker_ctx *ctx)
{
	ucp_worker_params_t wp = {0};
	ucp_params_t params = {0};
	struct coll *co = calloc(1, sizeof(*co));

	if (co == NULL)
		return DOCA_ERROR_NO_MEMORY;
	sdp_plugin_mem_ucp_params(&params);
	if (ucp_init(&params, NULL, &co->context) != UCS_OK)
		goto fail;
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SINGLE;
	if (ucp_worker_create(co->context, &wp, &co->worker) != UCS_OK)
		goto fail;
	if (sdp_plugin_mem_create(co->worker, &co->mem) != DOCA_SUCCESS)
		goto fail;
	ucs_list_head_init(&co->queue);
	ucs_list_head_init(&co->done);
	co->ctx = ctx;
	ctx->plugin_ctx = co;
	return DOCA_SUCCESS;
fail:
	DOCA_LOG_ERR("cannot create the plugin's UCP context and worker");
	if (co->worker != NULL)
		ucp_worker_destroy(co->worker);
	if (co->context != NULL)
		ucp_cleanup(co->context);
	free(co);
	return DOCA_ERROR_DRIVER;
}

static void coll_close(struct urom_worker_ctx *ctx)
{
	struct coll *co = ctx->plugin_ctx;

	if (co == NULL)
		return;
	sdp_plugin_mem_destroy(co->mem);
	if (co->job != NULL) {
		free(co->job->cd);
		free(co->job->res);
		free(co->job->tmp);
		free(co->job);
	}
	while (!ucs_list_is_empty(&co->queue))
		free(ucs_list_extract_head(&co->queue, struct urom_worker_cmd_desc, entry));
	while (!ucs_list_is_empty(&co->done))
		free(ucs_list_extract_head(&co->done, struct urom_worker_notif_desc, entry));
	ucp_worker_destroy(co->worker);
	ucp_cleanup(co->context);
	free(co);
	ctx->plugin_ctx = NULL;
}

static doca_error_t coll_addr(struct urom_worker_ctx *ctx, void *addr, size_t *addr_len)
{
	(void)ctx;
	/* The workers meet in the hosts' memory, not on this plugin's worker: a token. */
	if (addr == NULL || *addr_len < 8) {
		*addr_len = 8;
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(addr, "wrk_coll", 8);
	*addr_len = 8;
	return DOCA_SUCCESS;
}

static doca_error_t coll_worker_cmd(struct urom_worker_ctx *ctx, ucs_list_link_t *cmd_list)
{
	struct coll *co = ctx->plugin_ctx;

	ucs_list_splice_tail(&co->queue, cmd_list);
	ucs_list_head_init(cmd_list);
	start_next(co);
	return DOCA_SUCCESS;
}

static doca_error_t coll_progress(struct urom_worker_ctx *ctx, ucs_list_link_t *notif_list)
{
	struct coll *co = ctx->plugin_ctx;

	(void)sdp_plugin_mem_progress(co->mem);
	if (co->job != NULL)
		job_poll(co, co->job);
	start_next(co);
	return sdp_plugin_take_done(&co->done, notif_list);
}

__attribute__((visibility("default"))) doca_error_t
softdpu_plugin_wakeup_fd(struct urom_worker_ctx *ctx, int *fd)
{
	struct coll *co = ctx->plugin_ctx;

	return sdp_plugin_ucp_wakeup_fd(co->worker, fd);
}

__attribute__((visibility("default"))) doca_error_t softdpu_plugin_arm(struct urom_worker_ctx *ctx)
{
	struct coll *co = ctx->plugin_ctx;

	/* A collective waiting for the others polls their marks: not idle. */
	if (co->job != NULL || !ucs_list_is_empty(&co->queue) || !ucs_list_is_empty(&co->done) ||
	    sdp_plugin_mem_inflight(co->mem) != 0)
		return DOCA_ERROR_AGAIN;
	return sdp_plugin_ucp_arm(co->worker);
}

__attribute__((visibility("default"))) doca_error_t
urom_plugin_get_iface(struct urom_plugin_iface *iface)
{
	struct urom_plugin_iface ops = {
		.open = coll_open,
		.close = coll_close,
		.addr = coll_addr,
		.worker_cmd = coll_worker_cmd,
		.progress = coll_progress,
		.notif_pack = sdp_plugin_notif_copy,
	};

	if (iface == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	DOCA_STRUCT_CTOR(ops);
	*iface = ops;
	return DOCA_SUCCESS;
}

__attribute__((visibility("default"))) doca_error_t urom_plugin_get_version(uint64_t *version)
{
	if (version == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*version = UROM_WORKER_COLL_VERSION;
	return DOCA_SUCCESS;
}
