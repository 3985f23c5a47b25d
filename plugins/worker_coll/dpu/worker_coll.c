/*
 * worker_coll plugin, worker half: non-blocking collectives over teams whose data the worker
 * moves itself with RMA between the members' exported host buffers; the hosts' CPUs take no
 * part (common/worker_coll.h has the commands, common/worker_coll_wire.h the messages between
 * workers, docs/plugins.md "worker_coll" the semantics and the algorithms).
 *
 * A collective is a job. Every member numbers the collectives of a team 1, 2, ... in command
 * order (seq), so the workers of a team agree on which job a message belongs to. A job runs:
 *  1. ARRIVE: check the own buffers, then tell every other member (one small AM each) that
 *     collective seq has started here, with a signature of what it is and where the own
 *     buffers are (and, for ALLTOALLV, where the block for that member lies);
 *  2. once every member arrived and the signatures agree: plan the transfers (GETs from the
 *     members' send buffers into this worker's bounce buffer, a reduction there, PUTs into
 *     receive buffers), check every range against the member's exported segment, run them in
 *     1 MiB chunks with COLL_WINDOW chunks in flight, flush what was written;
 *  3. DONE: tell every member that this worker reads its send buffer no more and has finished
 *     writing into it; wait for every member's DONE;
 *  4. "late" PUTs (in-place forms whose own send buffer the others read until DONE), flush,
 *     answer.
 * Any number of jobs of any teams run at once; their chunks share the plugin's UCP worker.
 * Messages that come before their job has started are kept (bounded) until it starts. A member
 * that refuses a collective locally still takes part (its ARRIVE is marked BAD), so every
 * member fails it with INVALID_VALUE instead of waiting. Every wait is bounded by
 * UROM_COLL_WAIT_MS.
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
#include "sdp_plugin_peer.h"
#include "sdp_plugin_util.h"
#include "softdpu/urom_plugin.h"
#include "worker_coll.h"
#include "worker_coll_wire.h"

DOCA_LOG_REGISTER(UROM::WORKER::COLL);

/* Transfers are split into chunks of this size, at most COLL_WINDOW in flight per job. */
#define COLL_CHUNK (1u << 20)
#define COLL_WINDOW 16
/* ALLREDUCE / REDUCE up to this many bytes: every worker reads every input (one round). */
#define COLL_SMALL (16u << 10)
/* BCAST up to this many bytes (or teams of 2): every worker reads the root's buffer. */
#define COLL_BCAST_SMALL (64u << 10)
/* Messages kept for jobs that have not started here yet, at most. */
#define COLL_MAX_EARLY 65536
/* Bound on closing the AM endpoints at teardown (ms). */
#define COLL_CLOSE_MS 1000

#define DEP_NONE (-1)
#define DEP_REDUCE (-2)

enum stage {
	ST_ARRIVE = 1, /* waiting for the members' ARRIVE */
	ST_XFER,       /* transfers, then flushes */
	ST_DONE,       /* waiting for the members' DONE */
	ST_LATE,       /* late puts, then the own flush */
};

struct team {
	ucs_list_link_t link;
	uint64_t tag, hash, seq;
	uint32_t size, me, active;
	uint64_t ids[UROM_COLL_MAX_MEMBERS];
};

struct early { /* a message for a job that has not started here */
	ucs_list_link_t link;
	struct urom_coll_wire w;
	size_t length; /* of the whole message, in bytes[] */
	uint8_t bytes[];
};

struct xop { /* one GET (member buffer -> bounce) or PUT (bounce -> member buffer) */
	uint64_t region, va, boff, len, issued, done;
	int32_t dep; /* op index that must be complete first, DEP_NONE or DEP_REDUCE */
	uint8_t put, late;
	uint32_t member;
};

struct coll;

struct job {
	ucs_list_link_t link;
	struct coll *co;
	struct team *t;
	struct urom_worker_cmd_desc *cd;
	struct urom_worker_coll_cmd c;
	uint64_t asked; /* the type the host asked for (c.type unless unknown) */
	const uint64_t *trail;
	doca_error_t status;
	enum stage stage;
	int answered, reduced, flushing, logged;
	uint64_t seq, sig, esize, full, arrived, dones;
	int64_t deadline_us;
	struct urom_coll_wire pi[UROM_COLL_MAX_MEMBERS]; /* the members' ARRIVE */
	/* member regions (pinned) of the members' memh-named buffers; 0: a domain segment */
	uint64_t sreg[UROM_COLL_MAX_MEMBERS], rreg[UROM_COLL_MAX_MEMBERS];
	const uint8_t *smemh, *rmemh; /* the own command's memh bytes (inside cd) */
	uint8_t *bounce;
	struct xop *ops;
	uint32_t nops, cap, inflight, nred;
	uint64_t red_len; /* reduction: nred inputs of red_len bytes at bounce + p * red_len */
};

struct chunk {
	struct job *j;
	uint32_t op;
	uint64_t len;
};

struct coll {
	ucp_context_h context;
	ucp_worker_h worker;
	ucp_address_t *addr;
	size_t addr_len;
	struct sdp_plugin_mem *mem;
	struct urom_worker_ctx *ctx;
	ucs_list_link_t teams, jobs, zombies, early, done;
	struct sdp_plugin_peers peers;
	uint32_t nteams, nearly;
	uint32_t nadopt; /* kept memh ARRIVE whose job had started: for adopt_early() */
	uint64_t am_inflight;
	int closing, drop_logged;
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

/* ---- element types and reductions ---- */

static size_t dtype_size(uint64_t dt)
{
	static const uint8_t sz[] = {1, 2, 4, 8, 1, 2, 4, 8, 4, 8};

	return dt <= UROM_COLL_DTYPE_MAX ? sz[dt] : 0;
}

#define RED_LOOP(T, EXPR)                                                                          \
	do {                                                                                       \
		T *a = (T *)acc;                                                                   \
		const T *b = (const T *)in;                                                        \
		for (size_t i = 0; i < n; i++)                                                     \
			a[i] = (T)(EXPR);                                                          \
	} while (0)

/* W: the type sums and products are computed in (unsigned for integers: they wrap). */
#define RED_ARITH(T, W)                                                                            \
	switch (op) {                                                                              \
	case UROM_COLL_SUM:                                                                        \
		RED_LOOP(T, (W)a[i] + (W)b[i]);                                                    \
		break;                                                                             \
	case UROM_COLL_PROD:                                                                       \
		RED_LOOP(T, (W)a[i] * (W)b[i]);                                                    \
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
		RED_ARITH(T, uint64_t)                                                             \
		break;                                                                             \
	}

/* acc[i] = acc[i] op in[i] for n elements. */
static void reduce(uint64_t dt, uint64_t op, void *acc, const void *in, size_t n)
{
	switch (dt) {
	case UROM_COLL_INT8:
		RED_INT(int8_t);
		break;
	case UROM_COLL_INT16:
		RED_INT(int16_t);
		break;
	case UROM_COLL_INT32:
		RED_INT(int32_t);
		break;
	case UROM_COLL_INT64:
		RED_INT(int64_t);
		break;
	case UROM_COLL_UINT8:
		RED_INT(uint8_t);
		break;
	case UROM_COLL_UINT16:
		RED_INT(uint16_t);
		break;
	case UROM_COLL_UINT32:
		RED_INT(uint32_t);
		break;
	case UROM_COLL_UINT64:
		RED_INT(uint64_t);
		break;
	case UROM_COLL_FLOAT:
		RED_ARITH(float, float);
		break;
	default:
		RED_ARITH(double, double);
		break;
	}
}

/* ---- teams and messages ---- */

static struct team *team_find(struct coll *co, uint64_t tag)
{
	struct team *t;

	ucs_list_for_each(t, &co->teams, link) {
		if (t->tag == tag)
			return t;
	}
	return NULL;
}

static int team_index(const struct team *t, uint64_t id)
{
	for (uint32_t i = 0; i < t->size; i++) {
		if (t->ids[i] == id)
			return (int)i;
	}
	return -1;
}

static struct job *job_find(struct coll *co, const struct team *t, uint64_t seq)
{
	struct job *j;

	ucs_list_for_each(j, &co->jobs, link) {
		if (j->t == t && j->seq == seq)
			return j;
	}
	return NULL;
}

/* Record message w for job j (its sender a member of j's team). */
/* Import (pinned) the memh member i sent for one of its buffers; the job's status on failure. */
static void take_memh(struct job *j, uint32_t i, const uint8_t *memh, uint32_t len, uint64_t *reg)
{
	doca_error_t st;

	if (memh == NULL || j->status != DOCA_SUCCESS)
		return;
	st = sdp_plugin_mem_import_member(j->co->mem, j->co->ctx, j->t->ids[i], memh, len, reg);
	if (st != DOCA_SUCCESS) {
		DOCA_LOG_ERR("team %llu collective %llu: member %u's buffer: %s",
			     (unsigned long long)j->t->tag, (unsigned long long)j->seq, i,
			     doca_error_get_name(st));
		*reg = 0;
		j->status = st;
	}
}

static void job_take(struct job *j, const struct urom_coll_wire *w,
		     const struct urom_coll_wire_memh *m, const uint8_t *smemh,
		     const uint8_t *rmemh)
{
	int i = team_index(j->t, w->sender);
	uint64_t bit;

	if (i < 0 || (uint32_t)i == j->t->me) {
		if (!j->logged)
			DOCA_LOG_ERR("team %llu: message from %llu, not another member: dropped",
				     (unsigned long long)j->t->tag, (unsigned long long)w->sender);
		j->logged = 1;
		return;
	}
	bit = 1ull << i;
	if (w->kind == UROM_COLL_WIRE_ARRIVE) {
		if (j->arrived & bit)
			return; /* a duplicate changes nothing */
		j->pi[i] = *w;
		j->arrived |= bit;
		take_memh(j, (uint32_t)i, smemh, m->slen, &j->sreg[i]);
		take_memh(j, (uint32_t)i, rmemh, m->rlen, &j->rreg[i]);
	} else {
		j->dones |= bit;
	}
}

static ucs_status_t am_recv_cb(void *arg, const void *header, size_t header_length, void *data,
			       size_t length, const ucp_am_recv_param_t *param)
{
	struct coll *co = arg;
	struct urom_coll_wire_memh m;
	const uint8_t *sm = NULL, *rm = NULL;
	struct urom_coll_wire w;
	struct early *e;
	struct team *t;
	struct job *j;

	(void)header;
	if (co->closing)
		return UCS_OK;
	if (header_length != 0 || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) ||
	    !urom_coll_wire_parse(data, length, &w, &m, &sm, &rm)) {
		if (!co->drop_logged)
			DOCA_LOG_ERR("malformed message of %zu bytes from a peer worker: dropped",
				     length);
		co->drop_logged = 1;
		return UCS_OK;
	}
	t = team_find(co, w.tag);
	/*
	 * An ARRIVE with memh is kept like an early one even when its job runs: importing the
	 * memh may create an endpoint or release (flush) an evicted region, which must not
	 * happen inside ucp_worker_progress(); adopt_early() takes it from the progress op.
	 */
	if (t != NULL && w.seq <= t->seq && m.slen + m.rlen == 0) {
		j = job_find(co, t, w.seq);
		if (j != NULL && !j->answered)
			job_take(j, &w, &m, sm, rm);
		return UCS_OK; /* else stale: its job is over here */
	}
	if (co->nearly >= COLL_MAX_EARLY || (e = malloc(sizeof(*e) + length)) == NULL) {
		if (!co->drop_logged)
			DOCA_LOG_ERR("too many messages for collectives not started here: dropped");
		co->drop_logged = 1;
		return UCS_OK;
	}
	e->w = w;
	e->length = length;
	memcpy(e->bytes, data, length);
	ucs_list_add_tail(&co->early, &e->link);
	co->nearly++;
	if (t != NULL && w.seq <= t->seq)
		co->nadopt++;
	return UCS_OK;
}

static void am_sent(void *request, ucs_status_t status, void *user_data)
{
	struct coll *co = ((void **)user_data)[0];

	(void)status;
	co->am_inflight--;
	free(user_data);
	ucp_request_free(request);
}

/* Send one message to member index i of j's team (fire and forget: a loss shows as a wait). */
static doca_error_t send_msg(struct job *j, uint32_t i, uint16_t kind, uint16_t flags,
			     uint64_t voff, uint64_t vlen)
{
	struct urom_coll_wire_memh m = {0, 0};
	struct coll *co = j->co;
	ucp_request_param_t p = {0};
	struct urom_coll_wire *w;
	ucs_status_ptr_t req;
	size_t length;
	doca_error_t st;
	ucp_ep_h ep;
	void **buf;

	st = sdp_plugin_peer_ep(&co->peers, co->ctx, j->t->ids[i], &ep);
	if (st != DOCA_SUCCESS)
		return st;
	if (kind == UROM_COLL_WIRE_ARRIVE && !(flags & UROM_COLL_WIRE_BAD)) {
		m.slen = (uint32_t)j->c.smemh_len;
		m.rlen = (uint32_t)j->c.rmemh_len;
		flags |= (m.slen != 0 ? UROM_COLL_WIRE_SMEMH : 0) |
			 (m.rlen != 0 ? UROM_COLL_WIRE_RMEMH : 0);
	}
	length = sizeof(*w) + (m.slen + m.rlen != 0 ? sizeof(m) + m.slen + m.rlen : 0);
	buf = malloc(sizeof(void *) * 2 + length);
	if (buf == NULL)
		return DOCA_ERROR_NO_MEMORY;
	buf[0] = co;
	w = (struct urom_coll_wire *)(buf + 2);
	memset(w, 0, sizeof(*w));
	w->magic = UROM_COLL_WIRE_MAGIC;
	w->kind = kind;
	w->flags = flags;
	w->tag = j->t->tag;
	w->seq = j->seq;
	w->sender = j->t->ids[j->t->me];
	w->sig = j->sig;
	w->team_hash = j->t->hash;
	w->sva = j->c.sbuf_va;
	w->rva = j->c.rbuf_va;
	w->voff = voff;
	w->vlen = vlen;
	if (m.slen + m.rlen != 0) {
		uint8_t *t = (uint8_t *)(w + 1);

		memcpy(t, &m, sizeof(m));
		if (m.slen != 0)
			memcpy(t + sizeof(m), j->smemh, m.slen);
		if (m.rlen != 0)
			memcpy(t + sizeof(m) + m.slen, j->rmemh, m.rlen);
	}
	p.op_attr_mask =
		UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
	p.cb.send = am_sent;
	p.user_data = buf;
	p.flags = UCP_AM_SEND_FLAG_EAGER;
	req = ucp_am_send_nbx(ep, UROM_COLL_AM_UCP_ID, NULL, 0, w, length, &p);
	if (req == NULL) {
		free(buf);
		return DOCA_SUCCESS;
	}
	if (UCS_PTR_IS_ERR(req)) {
		DOCA_LOG_ERR("message to member %llu: %s", (unsigned long long)j->t->ids[i],
			     ucs_status_string(UCS_PTR_STATUS(req)));
		free(buf);
		return DOCA_ERROR_DRIVER;
	}
	co->am_inflight++;
	return DOCA_SUCCESS;
}

/* Send kind to every other member. The first failure is the job's status. */
static void send_all(struct job *j, uint16_t kind, uint16_t flags)
{
	for (uint32_t i = 0; i < j->t->size; i++) {
		uint64_t voff = 0, vlen = 0;
		doca_error_t st;

		if (i == j->t->me)
			continue;
		if (kind == UROM_COLL_WIRE_ARRIVE && j->c.type == UROM_WORKER_CMD_COLL_ALLTOALLV &&
		    !(flags & UROM_COLL_WIRE_BAD)) {
			voff = j->trail[j->t->size + i] * j->esize;
			vlen = j->trail[i] * j->esize;
		}
		st = send_msg(j, i, kind, flags, voff, vlen);
		if (st != DOCA_SUCCESS && j->status == DOCA_SUCCESS)
			j->status = st;
	}
}

/* ---- checks of the own command ---- */

static int overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return alen != 0 && blen != 0 && a < b + blen && b < a + alen;
}

/* [va, va + len) inside one segment member i exported; *region_p the imported segment. */
static doca_error_t member_range(struct job *j, uint32_t i, uint64_t va, uint64_t len,
				 uint64_t *region_p)
{
	struct coll *co = j->co;
	uint64_t regs[2] = {j->sreg[i], j->rreg[i]};
	doca_error_t st;

	if (va + len < va) {
		DOCA_LOG_ERR("team %llu member %u: range at %#llx of %llu bytes overflows",
			     (unsigned long long)j->t->tag, i, (unsigned long long)va,
			     (unsigned long long)len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* the member's memh-named buffers first, then its domain segments */
	for (int k = 0; k < 2; k++) {
		uint64_t rva = 0, rlen = 0;

		if (regs[k] != 0 &&
		    sdp_plugin_mem_region_get(co->mem, regs[k], &rva, &rlen) == DOCA_SUCCESS &&
		    va >= rva && va - rva <= rlen && len <= rlen - (va - rva)) {
			*region_p = regs[k];
			return DOCA_SUCCESS;
		}
	}
	st = sdp_plugin_mem_import_domain(co->mem, co->ctx, j->t->ids[i], va, region_p);
	if (st != DOCA_SUCCESS) {
		DOCA_LOG_ERR("team %llu member %u: %#llx is in no exported segment (%s)",
			     (unsigned long long)j->t->tag, i, (unsigned long long)va,
			     doca_error_get_name(st));
		return st == DOCA_ERROR_NOT_FOUND ? DOCA_ERROR_INVALID_VALUE : st;
	}
	return sdp_plugin_mem_check(co->mem, *region_p, va, len);
}

/* Bytes of the own send and receive buffers the collective touches. */
static doca_error_t own_extents(struct job *j, uint64_t *slen, uint64_t *rlen)
{
	const struct urom_worker_coll_cmd *c = &j->c;
	uint64_t n = j->t->size, blk = c->count * j->esize, lo = UINT64_MAX, hi = 0;
	int root = c->root == j->t->me;

	*slen = *rlen = 0;
	switch (c->type) {
	case UROM_WORKER_CMD_COLL_BCAST:
		*slen = root ? blk : 0;
		*rlen = blk;
		break;
	case UROM_WORKER_CMD_COLL_REDUCE:
		*slen = blk;
		*rlen = root ? blk : 0;
		break;
	case UROM_WORKER_CMD_COLL_ALLREDUCE:
		*slen = *rlen = blk;
		break;
	case UROM_WORKER_CMD_COLL_ALLGATHER:
		*slen = blk;
		*rlen = blk * n;
		break;
	case UROM_WORKER_CMD_COLL_ALLTOALL:
		*slen = *rlen = blk * n;
		break;
	case UROM_WORKER_CMD_COLL_REDUCE_SCATTER:
		*slen = blk * n;
		*rlen = blk;
		break;
	case UROM_WORKER_CMD_COLL_ALLTOALLV:
		for (int side = 0; side < 2; side++) {
			const uint64_t *cnt = j->trail + 2 * side * n, *dsp = cnt + n;

			lo = UINT64_MAX;
			hi = 0;
			for (uint64_t p = 0; p < n; p++) {
				uint64_t lim = UROM_COLL_MAX_LEN / j->esize;

				if (cnt[p] > lim || dsp[p] > lim) {
					DOCA_LOG_ERR("alltoallv: count %llu / displacement %llu "
						     "of member %llu past %llu elements",
						     (unsigned long long)cnt[p],
						     (unsigned long long)dsp[p],
						     (unsigned long long)p,
						     (unsigned long long)lim);
					return DOCA_ERROR_INVALID_VALUE;
				}
				if (cnt[p] == 0)
					continue;
				lo = dsp[p] < lo ? dsp[p] : lo;
				hi = dsp[p] + cnt[p] > hi ? dsp[p] + cnt[p] : hi;
			}
			if (hi == 0)
				continue;
			/* the buffer handed over starts at element 0: extent [0, hi) */
			if (hi * j->esize > UROM_COLL_MAX_LEN) {
				DOCA_LOG_ERR("alltoallv: buffer of %llu bytes past %llu",
					     (unsigned long long)(hi * j->esize),
					     (unsigned long long)UROM_COLL_MAX_LEN);
				return DOCA_ERROR_INVALID_VALUE;
			}
			*(side == 0 ? slen : rlen) = hi * j->esize;
		}
		break;
	default:
		break;
	}
	return DOCA_SUCCESS;
}

/* Everything the own host gave that can be checked here; status of a local refusal. */
static doca_error_t check_own(struct job *j)
{
	const struct urom_worker_coll_cmd *c = &j->c;
	uint64_t n = j->t->size, slen, rlen, region;
	int in_place = (c->flags & UROM_COLL_FLAG_IN_PLACE) != 0;
	doca_error_t st;

	if (c->flags & ~UROM_COLL_FLAG_IN_PLACE) {
		DOCA_LOG_ERR("unknown collective flags %#llx", (unsigned long long)c->flags);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (c->type == UROM_WORKER_CMD_COLL_BARRIER)
		return DOCA_SUCCESS;
	if (c->dtype > UROM_COLL_DTYPE_MAX) {
		DOCA_LOG_ERR("unknown element type %llu", (unsigned long long)c->dtype);
		return DOCA_ERROR_INVALID_VALUE;
	}
	j->esize = dtype_size(c->dtype);
	if (c->type == UROM_WORKER_CMD_COLL_REDUCE || c->type == UROM_WORKER_CMD_COLL_ALLREDUCE ||
	    c->type == UROM_WORKER_CMD_COLL_REDUCE_SCATTER) {
		if (c->op > UROM_COLL_OP_MAX) {
			DOCA_LOG_ERR("unknown reduction %llu", (unsigned long long)c->op);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (c->op >= UROM_COLL_BAND && c->dtype >= UROM_COLL_FLOAT) {
			DOCA_LOG_ERR("bitwise reduction %llu on a floating-point type",
				     (unsigned long long)c->op);
			return DOCA_ERROR_INVALID_VALUE;
		}
	}
	if ((c->type == UROM_WORKER_CMD_COLL_BCAST || c->type == UROM_WORKER_CMD_COLL_REDUCE) &&
	    c->root >= n) {
		DOCA_LOG_ERR("root %llu outside the team of %llu", (unsigned long long)c->root,
			     (unsigned long long)n);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (c->type == UROM_WORKER_CMD_COLL_ALLTOALLV) {
		if (c->count != 0) {
			DOCA_LOG_ERR("alltoallv takes its counts from the arrays, not count");
			return DOCA_ERROR_INVALID_VALUE;
		}
	} else if (c->count > UROM_COLL_MAX_LEN / j->esize / n) {
		DOCA_LOG_ERR("count %llu: at most %llu for this type and team",
			     (unsigned long long)c->count,
			     (unsigned long long)(UROM_COLL_MAX_LEN / j->esize / n));
		return DOCA_ERROR_INVALID_VALUE;
	}
	st = own_extents(j, &slen, &rlen);
	if (st != DOCA_SUCCESS)
		return st;
	if (in_place) {
		uint64_t want = c->rbuf_va;

		if (c->type == UROM_WORKER_CMD_COLL_BCAST ||
		    (c->type == UROM_WORKER_CMD_COLL_REDUCE && c->root != j->t->me)) {
			DOCA_LOG_ERR("collective %llu has no in-place form here",
				     (unsigned long long)c->type);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (c->type == UROM_WORKER_CMD_COLL_ALLGATHER)
			want = c->rbuf_va + (uint64_t)j->t->me * c->count * j->esize;
		if (c->sbuf_va != want) {
			DOCA_LOG_ERR("in place: the input must be at %#llx, not %#llx",
				     (unsigned long long)want, (unsigned long long)c->sbuf_va);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (c->type == UROM_WORKER_CMD_COLL_ALLTOALLV)
			slen = rlen > slen ? rlen : slen;
	} else if (!(c->type == UROM_WORKER_CMD_COLL_BCAST && c->sbuf_va == c->rbuf_va) &&
		   overlap(c->sbuf_va, slen, c->rbuf_va, rlen)) {
		DOCA_LOG_ERR("send and receive buffers overlap (in place needs the flag)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (slen != 0) {
		st = member_range(j, j->t->me, c->sbuf_va, slen, &region);
		if (st != DOCA_SUCCESS)
			return st;
	}
	if (rlen != 0)
		st = member_range(j, j->t->me, c->rbuf_va, rlen, &region);
	return st;
}

/* ---- planning ---- */

static doca_error_t add_op(struct job *j, int put, uint32_t m, uint64_t va, uint64_t boff,
			   uint64_t len, int32_t dep, int late)
{
	struct xop *o;
	doca_error_t st;

	if (len == 0)
		return DOCA_SUCCESS;
	if (j->nops == j->cap) {
		uint32_t cap = j->cap == 0 ? 8 : j->cap * 2;
		struct xop *ops = realloc(j->ops, cap * sizeof(*ops));

		if (ops == NULL)
			return DOCA_ERROR_NO_MEMORY;
		j->ops = ops;
		j->cap = cap;
	}
	o = &j->ops[j->nops];
	memset(o, 0, sizeof(*o));
	st = member_range(j, m, va, len, &o->region);
	if (st != DOCA_SUCCESS)
		return st;
	o->put = (uint8_t)put;
	o->late = (uint8_t)late;
	o->member = m;
	o->va = va;
	o->boff = boff;
	o->len = len;
	o->dep = dep;
	j->nops++;
	return DOCA_SUCCESS;
}

#define GET(m, va, boff, len) add_op(j, 0, m, va, boff, len, DEP_NONE, 0)
#define PUT(m, va, boff, len, dep, late) add_op(j, 1, m, va, boff, len, dep, late)
#define LAST ((int32_t)j->nops - 1)
#define TRY(expr)                                                                                  \
	do {                                                                                       \
		doca_error_t st_ = (expr);                                                         \
		if (st_ != DOCA_SUCCESS)                                                           \
			return st_;                                                                \
	} while (0)

/* Part p of count elements split into n: [*off, *off + *cnt) elements. */
static void part(uint64_t count, uint64_t n, uint64_t p, uint64_t *off, uint64_t *cnt)
{
	uint64_t base = count / n, rem = count % n;

	*cnt = base + (p < rem);
	*off = p * base + (p < rem ? p : rem);
}

/* Reduce nred inputs of len bytes each, read from members at va_of(m) + off, into the bounce. */
static doca_error_t plan_gather_reduce(struct job *j, uint64_t soff, uint64_t len)
{
	struct urom_coll_wire *pi = j->pi;

	for (uint32_t m = 0; m < j->t->size; m++)
		TRY(GET(m, pi[m].sva + soff, (uint64_t)m * len, len));
	j->nred = j->t->size;
	j->red_len = len;
	return DOCA_SUCCESS;
}

static doca_error_t plan(struct job *j)
{
	const struct urom_worker_coll_cmd *c = &j->c;
	struct urom_coll_wire *pi = j->pi;
	uint32_t n = j->t->size, me = j->t->me, r = (uint32_t)c->root;
	int in_place = (c->flags & UROM_COLL_FLAG_IN_PLACE) != 0;
	uint64_t es = j->esize, blk = c->count * es, off, cnt, boff;
	size_t need = 0;

	switch (c->type) {
	case UROM_WORKER_CMD_COLL_BCAST:
		if (blk <= COLL_BCAST_SMALL || n <= 2) {
			if (me != r || pi[me].sva != pi[me].rva) {
				TRY(GET(r, pi[r].sva, 0, blk));
				TRY(PUT(me, pi[me].rva, 0, blk, LAST, 0));
			}
			break;
		}
		/* scatter, then allgather: the root's buffer is read once in all */
		part(c->count, n, me, &off, &cnt);
		TRY(GET(r, pi[r].sva + off * es, 0, cnt * es));
		for (uint32_t m = 0, g = (uint32_t)LAST; cnt != 0 && m < n; m++) {
			if (m == r && pi[r].sva == pi[r].rva)
				continue;
			TRY(PUT(m, pi[m].rva + off * es, 0, cnt * es, (int32_t)g, 0));
		}
		break;
	case UROM_WORKER_CMD_COLL_REDUCE:
		if (blk <= COLL_SMALL) {
			if (me == r) {
				TRY(plan_gather_reduce(j, 0, blk));
				TRY(PUT(me, pi[me].rva, 0, blk, DEP_REDUCE, 0));
			}
			break;
		}
		part(c->count, n, me, &off, &cnt);
		if (cnt != 0) {
			TRY(plan_gather_reduce(j, off * es, cnt * es));
			TRY(PUT(r, pi[r].rva + off * es, 0, cnt * es, DEP_REDUCE, 0));
		}
		break;
	case UROM_WORKER_CMD_COLL_ALLREDUCE:
		if (blk <= COLL_SMALL) {
			TRY(plan_gather_reduce(j, 0, blk));
			TRY(PUT(me, pi[me].rva, 0, blk, DEP_REDUCE, in_place));
			break;
		}
		/* reduce-scatter then allgather, both direct: block me is reduced here */
		part(c->count, n, me, &off, &cnt);
		if (cnt == 0)
			break;
		TRY(plan_gather_reduce(j, off * es, cnt * es));
		for (uint32_t m = 0; m < n; m++)
			TRY(PUT(m, pi[m].rva + off * es, 0, cnt * es, DEP_REDUCE, 0));
		break;
	case UROM_WORKER_CMD_COLL_REDUCE_SCATTER:
		if (blk != 0) {
			TRY(plan_gather_reduce(j, (uint64_t)me * blk, blk));
			TRY(PUT(me, pi[me].rva, 0, blk, DEP_REDUCE, in_place));
		}
		break;
	case UROM_WORKER_CMD_COLL_ALLGATHER:
		for (uint32_t k = 0; k < n && blk != 0; k++) {
			uint32_t p = (me + k) % n;

			if (p == me && in_place)
				continue;
			TRY(GET(p, pi[p].sva, (uint64_t)p * blk, blk));
			TRY(PUT(me, pi[me].rva + p * blk, (uint64_t)p * blk, blk, LAST, 0));
		}
		break;
	case UROM_WORKER_CMD_COLL_ALLTOALL:
		for (uint32_t k = 0; k < n && blk != 0; k++) {
			uint32_t p = (me + k) % n;

			TRY(GET(p, pi[p].sva + me * blk, (uint64_t)p * blk, blk));
			TRY(PUT(me, pi[me].rva + p * blk, (uint64_t)p * blk, blk, LAST, in_place));
		}
		break;
	case UROM_WORKER_CMD_COLL_ALLTOALLV: {
		const uint64_t *rcounts = j->trail + 2 * n, *rdispls = rcounts + n;

		/* what member p sends here is in its ARRIVE (its own is in the trailer) */
		pi[me].voff = j->trail[n + me] * es;
		pi[me].vlen = j->trail[me] * es;
		boff = 0;
		for (uint32_t k = 0; k < n; k++) {
			uint32_t p = (me + k) % n;

			if (pi[p].vlen != rcounts[p] * es) {
				DOCA_LOG_ERR("alltoallv: member %u sends %llu bytes here, %llu "
					     "expected",
					     p, (unsigned long long)pi[p].vlen,
					     (unsigned long long)(rcounts[p] * es));
				return DOCA_ERROR_INVALID_VALUE;
			}
			if (pi[p].vlen == 0)
				continue;
			TRY(GET(p, pi[p].sva + pi[p].voff, boff, pi[p].vlen));
			TRY(PUT(me, pi[me].rva + rdispls[p] * es, boff, pi[p].vlen, LAST,
				in_place));
			boff += pi[p].vlen;
		}
		break;
	}
	default:
		break;
	}
	for (uint32_t i = 0; i < j->nops; i++) {
		if (j->ops[i].boff + j->ops[i].len > need)
			need = j->ops[i].boff + j->ops[i].len;
	}
	if (need != 0) {
		j->bounce = malloc(need);
		if (j->bounce == NULL) {
			DOCA_LOG_ERR("no memory for %zu bytes of collective data", need);
			return DOCA_ERROR_NO_MEMORY;
		}
	}
	return DOCA_SUCCESS;
}

/* ---- running the transfers ---- */

static void chunk_done(void *arg, doca_error_t status)
{
	struct chunk *ch = arg;
	struct job *j = ch->j;

	if (status != DOCA_SUCCESS && j->status == DOCA_SUCCESS) {
		DOCA_LOG_ERR("team %llu collective %llu: a transfer failed: %s",
			     (unsigned long long)j->t->tag, (unsigned long long)j->seq,
			     doca_error_get_name(status));
		j->status = status;
	}
	j->ops[ch->op].done += ch->len;
	j->inflight--;
	free(ch);
}

static void flush_done(void *arg, doca_error_t status)
{
	struct job *j = arg;

	if (status != DOCA_SUCCESS && j->status == DOCA_SUCCESS)
		j->status = status;
	j->inflight--;
}

static int op_ready(const struct job *j, const struct xop *o)
{
	if (o->dep == DEP_REDUCE)
		return j->reduced;
	if (o->dep >= 0)
		return j->ops[o->dep].done == j->ops[o->dep].len;
	return 1;
}

/* Issue what may go now (late ops only when late); 1 when every such op is complete. */
static int pump(struct job *j, int late)
{
	int all = 1;

	for (uint32_t i = 0; i < j->nops; i++) {
		struct xop *o = &j->ops[i];

		if (o->late != late)
			continue;
		if (o->done != o->len)
			all = 0;
		while (j->status == DOCA_SUCCESS && o->issued < o->len &&
		       j->inflight < COLL_WINDOW && op_ready(j, o)) {
			struct chunk *ch = malloc(sizeof(*ch));
			uint64_t len = o->len - o->issued;
			doca_error_t st;

			if (ch == NULL) {
				j->status = DOCA_ERROR_NO_MEMORY;
				break;
			}
			len = len < COLL_CHUNK ? len : COLL_CHUNK;
			ch->j = j;
			ch->op = i;
			ch->len = len;
			if (o->put)
				st = sdp_plugin_mem_put_nb(j->co->mem, o->region, o->va + o->issued,
							   j->bounce + o->boff + o->issued, len,
							   chunk_done, ch);
			else
				st = sdp_plugin_mem_get_nb(j->co->mem, o->region, o->va + o->issued,
							   j->bounce + o->boff + o->issued, len,
							   chunk_done, ch);
			if (st != DOCA_SUCCESS) {
				free(ch);
				j->status = st;
				break;
			}
			o->issued += len;
			j->inflight++;
		}
	}
	return all;
}

/* The reduction, once every GET is complete. */
static void maybe_reduce(struct job *j)
{
	if (j->reduced)
		return;
	for (uint32_t i = 0; i < j->nops; i++) {
		if (!j->ops[i].put && j->ops[i].done != j->ops[i].len)
			return;
	}
	for (uint32_t p = 1; p < j->nred; p++)
		reduce(j->c.dtype, j->c.op, j->bounce, j->bounce + p * j->red_len,
		       j->red_len / j->esize);
	j->reduced = 1;
}

/* Flush every member written by the (late or early) puts: 0 when nothing to flush. */
static int flush_written(struct job *j, int late)
{
	uint64_t seen = 0;
	int n = 0;

	for (uint32_t i = 0; i < j->nops; i++) {
		struct xop *o = &j->ops[i];

		if (!o->put || o->late != late || (seen & (1ull << o->member)))
			continue;
		seen |= 1ull << o->member;
		if (sdp_plugin_mem_flush_nb(j->co->mem, o->region, flush_done, j) != DOCA_SUCCESS) {
			if (j->status == DOCA_SUCCESS)
				j->status = DOCA_ERROR_DRIVER;
			continue;
		}
		j->inflight++;
		n++;
	}
	return n;
}

/* ---- the job's life ---- */

static void job_answer(struct job *j)
{
	if (j->answered)
		return;
	j->answered = 1;
	notify(j->co, j->cd, j->asked, j->c.context, j->status, j->seq);
	j->t->active--;
}

static void job_free(struct job *j)
{
	for (uint32_t i = 0; i < UROM_COLL_MAX_MEMBERS; i++) {
		if (j->sreg[i] != 0)
			(void)sdp_plugin_mem_unpin(j->co->mem, j->sreg[i]);
		if (j->rreg[i] != 0)
			(void)sdp_plugin_mem_unpin(j->co->mem, j->rreg[i]);
	}
	ucs_list_del(&j->link);
	free(j->cd);
	free(j->bounce);
	free(j->ops);
	free(j);
}

static void set_deadline(struct job *j)
{
	j->deadline_us = now_us() + (int64_t)UROM_COLL_WAIT_MS * 1000;
}

/* Check the arrivals: same collective, same team, nobody refused. */
static void check_arrivals(struct job *j)
{
	for (uint32_t i = 0; i < j->t->size && j->status == DOCA_SUCCESS; i++) {
		const struct urom_coll_wire *w = &j->pi[i];

		if (i == j->t->me)
			continue;
		if (w->flags & UROM_COLL_WIRE_BAD) {
			DOCA_LOG_ERR("team %llu collective %llu: member %u refused it",
				     (unsigned long long)j->t->tag, (unsigned long long)j->seq, i);
			j->status = DOCA_ERROR_INVALID_VALUE;
		} else if (w->sig != j->sig || w->team_hash != j->t->hash) {
			DOCA_LOG_ERR("team %llu collective %llu: member %u runs a different "
				     "collective or team (signature %#llx, here %#llx)",
				     (unsigned long long)j->t->tag, (unsigned long long)j->seq, i,
				     (unsigned long long)w->sig, (unsigned long long)j->sig);
			j->status = DOCA_ERROR_INVALID_VALUE;
		}
	}
}

/* Advance job j as far as it can go now. */
static void job_step(struct job *j)
{
	int64_t now;

	if (j->answered) {
		if (j->inflight == 0)
			job_free(j);
		return;
	}
	now = now_us();
	switch (j->stage) {
	case ST_ARRIVE:
		if (j->arrived != j->full) {
			if (now > j->deadline_us) {
				DOCA_LOG_ERR("team %llu collective %llu: members %#llx did not "
					     "arrive within %d ms",
					     (unsigned long long)j->t->tag,
					     (unsigned long long)j->seq,
					     (unsigned long long)(j->full & ~j->arrived),
					     UROM_COLL_WAIT_MS);
				j->status = DOCA_ERROR_TIME_OUT;
				job_answer(j);
			}
			return;
		}
		if (j->status == DOCA_SUCCESS)
			check_arrivals(j);
		if (j->status == DOCA_SUCCESS)
			j->status = plan(j);
		j->stage = ST_XFER;
		set_deadline(j);
		/* fall through */
	case ST_XFER:
		if (j->status == DOCA_SUCCESS && !j->flushing) {
			int all = pump(j, 0);

			if (j->nred != 0 && !j->reduced) {
				maybe_reduce(j);
				if (j->reduced)
					all = pump(j, 0);
			}
			if (!all || j->inflight != 0)
				goto wait_xfer;
			j->flushing = 1;
			flush_written(j, 0);
		}
		if (j->inflight != 0)
			goto wait_xfer;
		send_all(j, UROM_COLL_WIRE_DONE, 0);
		j->stage = ST_DONE;
		set_deadline(j);
		/* fall through */
	case ST_DONE:
		if (j->dones != j->full) {
			if (now > j->deadline_us) {
				DOCA_LOG_ERR("team %llu collective %llu: members %#llx did not "
					     "finish within %d ms",
					     (unsigned long long)j->t->tag,
					     (unsigned long long)j->seq,
					     (unsigned long long)(j->full & ~j->dones),
					     UROM_COLL_WAIT_MS);
				j->status = DOCA_ERROR_TIME_OUT;
				job_answer(j);
			}
			return;
		}
		j->stage = ST_LATE;
		j->flushing = 0;
		/* fall through */
	case ST_LATE:
		if (j->status == DOCA_SUCCESS && !j->flushing) {
			if (!pump(j, 1) || j->inflight != 0)
				goto wait_xfer;
			j->flushing = 1;
			flush_written(j, 1);
		}
		if (j->inflight != 0)
			goto wait_xfer;
		job_answer(j);
		job_free(j);
		return;
	}
	return;
wait_xfer:
	if (now > j->deadline_us) {
		DOCA_LOG_ERR("team %llu collective %llu: transfers not done within %d ms",
			     (unsigned long long)j->t->tag, (unsigned long long)j->seq,
			     UROM_COLL_WAIT_MS);
		j->status = DOCA_ERROR_TIME_OUT;
		job_answer(j); /* freed once its transfers are over */
	}
}

static uint64_t signature(const struct job *j)
{
	const struct urom_worker_coll_cmd *c = &j->c;

	if (c->type == UROM_WORKER_CMD_COLL_BARRIER)
		return c->type;
	return c->type | c->dtype << 8 | c->op << 16 | (c->root & 0xff) << 24 | c->count << 32 |
	       (c->root >> 8) << 60;
}

/* A kept message leaves the list: given to its job j when that still runs, then freed. */
static void early_take(struct coll *co, struct early *e, struct job *j)
{
	struct urom_coll_wire_memh m;
	const uint8_t *sm = NULL, *rm = NULL;
	struct urom_coll_wire w;

	ucs_list_del(&e->link);
	co->nearly--;
	if (j != NULL && !j->answered &&
	    urom_coll_wire_parse(e->bytes, e->length, &w, &m, &sm, &rm))
		job_take(j, &w, &m, sm, rm);
	free(e);
}

/* A collective command of a known team: it takes the next number and starts at once. */
/*
 * Start c as the team's next collective. asked differs from c->type when the host asked for an
 * unknown type: it then runs as a failed barrier (every member fails it, the numbering stays in
 * step) and is answered as asked.
 */
static void job_start(struct coll *co, struct team *t, struct urom_worker_cmd_desc *cd,
		      const struct urom_worker_coll_cmd *c, uint64_t asked)
{
	struct early *e, *tmp;
	struct job *j = calloc(1, sizeof(*j));

	if (j == NULL) {
		/* the team's numbering is now off by one here: the next collective mismatches */
		DOCA_LOG_ERR("no memory for a collective");
		notify(co, cd, asked, c->context, DOCA_ERROR_NO_MEMORY, 0);
		free(cd);
		t->seq++;
		return;
	}
	j->co = co;
	j->t = t;
	j->cd = cd;
	j->c = *c;
	j->asked = asked;
	j->trail = (const uint64_t *)(cd->worker_cmd.plugin_cmd + sizeof(*c));
	j->seq = ++t->seq;
	j->full = (t->size == 64 ? ~0ull : (1ull << t->size) - 1);
	j->arrived = j->dones = 1ull << t->me;
	j->stage = ST_ARRIVE;
	t->active++;
	ucs_list_add_tail(&co->jobs, &j->link);
	if (c->type == UROM_WORKER_CMD_COLL_ALLTOALLV && c->ntrail != 4ull * t->size) {
		DOCA_LOG_ERR("alltoallv with %llu array values, %u expected",
			     (unsigned long long)c->ntrail, 4 * t->size);
		j->status = DOCA_ERROR_INVALID_VALUE;
	} else if (c->type != UROM_WORKER_CMD_COLL_ALLTOALLV && c->ntrail != 0) {
		DOCA_LOG_ERR("collective %llu with %llu trailing values",
			     (unsigned long long)c->type, (unsigned long long)c->ntrail);
		j->status = DOCA_ERROR_INVALID_VALUE;
	} else {
		/* the own memh-named buffers (the command's length was checked on arrival) */
		const uint8_t *m = (const uint8_t *)(j->trail + c->ntrail);

		j->smemh = c->smemh_len != 0 ? m : NULL;
		j->rmemh = c->rmemh_len != 0 ? m + c->smemh_len : NULL;
		take_memh(j, t->me, j->smemh, (uint32_t)c->smemh_len, &j->sreg[t->me]);
		take_memh(j, t->me, j->rmemh, (uint32_t)c->rmemh_len, &j->rreg[t->me]);
		if (j->status == DOCA_SUCCESS)
			j->status = check_own(j);
	}
	if (j->status != DOCA_SUCCESS)
		j->c.smemh_len = j->c.rmemh_len = 0; /* a refused ARRIVE carries none */
	if (asked != c->type)
		j->status = DOCA_ERROR_INVALID_VALUE;
	j->sig = signature(j);
	j->pi[t->me].sva = c->sbuf_va;
	j->pi[t->me].rva = c->rbuf_va;
	ucs_list_for_each_safe(e, tmp, &co->early, link) {
		if (e->w.tag == t->tag && e->w.seq == j->seq)
			early_take(co, e, j);
	}
	send_all(j, UROM_COLL_WIRE_ARRIVE, j->status != DOCA_SUCCESS ? UROM_COLL_WIRE_BAD : 0);
	set_deadline(j);
	job_step(j);
}

static uint64_t team_hash(const uint64_t *ids, uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (uint32_t i = 0; i < n; i++) {
		h ^= ids[i];
		h *= 0x100000001b3ull;
	}
	return h ^ n;
}

static doca_error_t team_create(struct coll *co, const struct urom_worker_coll_cmd *c,
				const uint64_t *ids)
{
	struct team *t;
	void *addr;
	int me = -1;

	if (c->team == 0 || c->ntrail == 0 || c->ntrail > UROM_COLL_MAX_MEMBERS) {
		DOCA_LOG_ERR("team %llu of %llu members: tag nonzero, 1 .. %d members",
			     (unsigned long long)c->team, (unsigned long long)c->ntrail,
			     UROM_COLL_MAX_MEMBERS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (team_find(co, c->team) != NULL) {
		DOCA_LOG_ERR("team %llu exists already", (unsigned long long)c->team);
		return DOCA_ERROR_ALREADY_EXIST;
	}
	if (co->nteams >= UROM_COLL_MAX_TEAMS) {
		DOCA_LOG_ERR("at most %d teams per worker", UROM_COLL_MAX_TEAMS);
		return DOCA_ERROR_FULL;
	}
	for (uint64_t i = 0; i < c->ntrail; i++) {
		for (uint64_t k = 0; k < i; k++) {
			if (ids[k] == ids[i]) {
				DOCA_LOG_ERR("team %llu: member %llu listed twice",
					     (unsigned long long)c->team,
					     (unsigned long long)ids[i]);
				return DOCA_ERROR_INVALID_VALUE;
			}
		}
		if (doca_urom_worker_domain_addr_lookup(co->ctx, ids[i], &addr) != DOCA_SUCCESS) {
			DOCA_LOG_ERR("team %llu: %llu is not a member of the worker's domain",
				     (unsigned long long)c->team, (unsigned long long)ids[i]);
			return DOCA_ERROR_NOT_FOUND;
		}
		if (ids[i] == c->my_id)
			me = (int)i;
	}
	if (me < 0) {
		DOCA_LOG_ERR("team %llu: the commanding member %llu is not in it",
			     (unsigned long long)c->team, (unsigned long long)c->my_id);
		return DOCA_ERROR_INVALID_VALUE;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return DOCA_ERROR_NO_MEMORY;
	t->tag = c->team;
	t->size = (uint32_t)c->ntrail;
	t->me = (uint32_t)me;
	memcpy(t->ids, ids, t->size * sizeof(ids[0]));
	t->hash = team_hash(ids, t->size);
	ucs_list_add_tail(&co->teams, &t->link);
	co->nteams++;
	return DOCA_SUCCESS;
}

static doca_error_t team_destroy(struct coll *co, uint64_t tag)
{
	struct team *t = team_find(co, tag);
	struct job *j, *tmp;

	if (t == NULL) {
		DOCA_LOG_ERR("no team %llu", (unsigned long long)tag);
		return DOCA_ERROR_NOT_FOUND;
	}
	if (t->active != 0) {
		DOCA_LOG_ERR("team %llu has %u collectives running", (unsigned long long)tag,
			     t->active);
		return DOCA_ERROR_IN_USE;
	}
	/* answered jobs still draining transfers keep their team pointer: park them */
	ucs_list_for_each_safe(j, tmp, &co->jobs, link) {
		if (j->t == t) {
			ucs_list_del(&j->link);
			ucs_list_add_tail(&co->zombies, &j->link);
		}
	}
	ucs_list_for_each(j, &co->zombies, link) {
		if (j->t == t)
			return DOCA_ERROR_IN_USE;
	}
	ucs_list_del(&t->link);
	co->nteams--;
	free(t);
	return DOCA_SUCCESS;
}

static void command(struct coll *co, struct urom_worker_cmd_desc *cd)
{
	struct urom_worker_coll_cmd c;
	doca_error_t st = DOCA_SUCCESS;
	struct team *t;

	if (cd->worker_cmd.len < sizeof(c)) {
		DOCA_LOG_ERR("collective command of %llu bytes, at least %zu expected",
			     (unsigned long long)cd->worker_cmd.len, sizeof(c));
		notify(co, cd, UINT64_MAX, 0, DOCA_ERROR_INVALID_VALUE, 0);
		free(cd);
		return;
	}
	memcpy(&c, cd->worker_cmd.plugin_cmd, sizeof(c));
	if (c.ntrail > (cd->worker_cmd.len - sizeof(c)) / 8 || c.smemh_len > UROM_COLL_MEMH_MAX ||
	    c.rmemh_len > UROM_COLL_MEMH_MAX ||
	    cd->worker_cmd.len != sizeof(c) + c.ntrail * 8 + c.smemh_len + c.rmemh_len) {
		DOCA_LOG_ERR("collective command of %llu bytes with %llu trailing values and "
			     "memh of %llu and %llu bytes",
			     (unsigned long long)cd->worker_cmd.len, (unsigned long long)c.ntrail,
			     (unsigned long long)c.smemh_len, (unsigned long long)c.rmemh_len);
		st = DOCA_ERROR_INVALID_VALUE;
	} else if ((c.smemh_len != 0 || c.rmemh_len != 0) &&
		   (c.type == UROM_WORKER_CMD_COLL_TEAM_CREATE ||
		    c.type == UROM_WORKER_CMD_COLL_TEAM_DESTROY)) {
		DOCA_LOG_ERR("team command %llu with a memh", (unsigned long long)c.type);
		st = DOCA_ERROR_INVALID_VALUE;
	} else if (c.type > UROM_WORKER_CMD_COLL_MAX) {
		DOCA_LOG_ERR("unknown collective command %llu", (unsigned long long)c.type);
		st = DOCA_ERROR_INVALID_VALUE;
		/* a known team still counts it, so the members' numbering stays in step */
		if ((t = team_find(co, c.team)) != NULL) {
			uint64_t asked = c.type;

			c.type = UROM_WORKER_CMD_COLL_BARRIER;
			job_start(co, t, cd, &c, asked);
			return;
		}
	} else if (c.type == UROM_WORKER_CMD_COLL_TEAM_CREATE) {
		st = team_create(co, &c, (const uint64_t *)(cd->worker_cmd.plugin_cmd + sizeof(c)));
	} else if (c.type == UROM_WORKER_CMD_COLL_TEAM_DESTROY) {
		st = team_destroy(co, c.team);
	} else if ((t = team_find(co, c.team)) == NULL) {
		DOCA_LOG_ERR("collective %llu on unknown team %llu", (unsigned long long)c.type,
			     (unsigned long long)c.team);
		st = DOCA_ERROR_NOT_FOUND;
	} else {
		job_start(co, t, cd, &c, c.type);
		return;
	}
	notify(co, cd, c.type, c.context, st, 0);
	free(cd);
}

/* ---- plugin ops ---- */

static void coll_free_all(struct coll *co)
{
	while (!ucs_list_is_empty(&co->jobs))
		job_free(ucs_list_head(&co->jobs, struct job, link));
	while (!ucs_list_is_empty(&co->zombies))
		job_free(ucs_list_head(&co->zombies, struct job, link));
	while (!ucs_list_is_empty(&co->teams))
		free(ucs_list_extract_head(&co->teams, struct team, link));
	while (!ucs_list_is_empty(&co->early))
		free(ucs_list_extract_head(&co->early, struct early, link));
	while (!ucs_list_is_empty(&co->done))
		free(ucs_list_extract_head(&co->done, struct urom_worker_notif_desc, entry));
}

static doca_error_t coll_open(struct urom_worker_ctx *ctx)
{
	ucp_worker_params_t wp = {0};
	ucp_params_t params = {0};
	struct coll *co = calloc(1, sizeof(*co));

	if (co == NULL)
		return DOCA_ERROR_NO_MEMORY;
	ucs_list_head_init(&co->teams);
	ucs_list_head_init(&co->jobs);
	ucs_list_head_init(&co->zombies);
	ucs_list_head_init(&co->early);
	ucs_list_head_init(&co->done);
	params.field_mask = UCP_PARAM_FIELD_FEATURES;
	params.features = UCP_FEATURE_AM;
	sdp_plugin_mem_ucp_params(&params);
	if (ucp_init(&params, NULL, &co->context) != UCS_OK)
		goto fail;
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SINGLE;
	if (ucp_worker_create(co->context, &wp, &co->worker) != UCS_OK)
		goto fail;
	sdp_plugin_peers_init(&co->peers, co->worker);
	if (sdp_plugin_mem_create(co->worker, &co->mem) != DOCA_SUCCESS)
		goto fail;
	if (ucp_worker_get_address(co->worker, &co->addr, &co->addr_len) != UCS_OK)
		goto fail;
	if (sdp_ucx_am_handler(co->worker, UROM_COLL_AM_UCP_ID, am_recv_cb, co) != UCS_OK)
		goto fail;
	co->ctx = ctx;
	ctx->plugin_ctx = co;
	return DOCA_SUCCESS;
fail:
	DOCA_LOG_ERR("cannot create the plugin's UCP context and worker");
	if (co->mem != NULL)
		sdp_plugin_mem_destroy(co->mem);
	if (co->addr != NULL)
		ucp_worker_release_address(co->worker, co->addr);
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
	co->closing = 1;
	/* transfers still in flight call back (NOT_CONNECTED) into their jobs: free them after */
	sdp_plugin_mem_destroy(co->mem);
	sdp_plugin_peers_close(&co->peers, COLL_CLOSE_MS);
	coll_free_all(co);
	ucp_worker_release_address(co->worker, co->addr);
	ucp_worker_destroy(co->worker);
	ucp_cleanup(co->context);
	free(co);
	ctx->plugin_ctx = NULL;
}

static doca_error_t coll_addr(struct urom_worker_ctx *ctx, void *addr, size_t *addr_len)
{
	struct coll *co = ctx->plugin_ctx;

	if (addr == NULL || *addr_len < co->addr_len) {
		*addr_len = co->addr_len;
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(addr, co->addr, co->addr_len);
	*addr_len = co->addr_len;
	return DOCA_SUCCESS;
}

/* Kept messages whose job runs here now (memh ARRIVE): taken; those of finished jobs: dropped. */
static void adopt_early(struct coll *co)
{
	struct early *e, *tmp;

	ucs_list_for_each_safe(e, tmp, &co->early, link) {
		struct team *t = team_find(co, e->w.tag);

		if (t == NULL || e->w.seq > t->seq)
			continue; /* its job has not started here */
		early_take(co, e, job_find(co, t, e->w.seq));
	}
}

static void step_all(struct coll *co)
{
	struct job *j, *tmp;

	if (co->nadopt != 0) {
		co->nadopt = 0;
		adopt_early(co);
	}
	ucs_list_for_each_safe(j, tmp, &co->jobs, link)
		job_step(j);
	ucs_list_for_each_safe(j, tmp, &co->zombies, link) {
		if (j->inflight == 0)
			job_free(j);
	}
}

static doca_error_t coll_worker_cmd(struct urom_worker_ctx *ctx, ucs_list_link_t *cmd_list)
{
	struct coll *co = ctx->plugin_ctx;

	while (!ucs_list_is_empty(cmd_list))
		command(co, ucs_list_extract_head(cmd_list, struct urom_worker_cmd_desc, entry));
	return DOCA_SUCCESS;
}

static doca_error_t coll_progress(struct urom_worker_ctx *ctx, ucs_list_link_t *notif_list)
{
	struct coll *co = ctx->plugin_ctx;

	for (int k = 0; k < 4 && sdp_plugin_mem_progress(co->mem); k++)
		;
	step_all(co);
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

	/*
	 * Jobs waiting for messages sleep: an arriving AM wakes the worker's fd (the runtime
	 * also wakes now and then while commands are outstanding, for the deadlines).
	 */
	if (!ucs_list_is_empty(&co->done) || sdp_plugin_mem_inflight(co->mem) != 0)
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
