/*
 * worker_coll plugin, host half: teams and non-blocking collectives as doca_urom worker
 * command tasks.
 *
 * A command (struct urom_worker_coll_cmd and its trailer) is written into the task's payload
 * buffer; the caller's cookie, callback and team go into the task's user data area. The
 * completion callback reads the notification from the response buffer (its status is the
 * outcome; the task's status when the worker sent none), releases the task and reports.
 * Requests are heap objects the callback marks done; a request freed before completion is
 * released by the callback instead. Teams count their outstanding commands, so destroying a
 * team with collectives in flight is refused (IN_USE) rather than leaving a callback to touch
 * a freed team.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "urom_coll.h"

#include <stdlib.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_pe.h>
#include <doca_urom.h>

#include "sdp_plugin_host.h"

DOCA_LOG_REGISTER(UROM::COLL::HOST);

struct waiter {
	int done, abandoned;
	doca_error_t result;
};

struct urom_coll_team {
	struct urom_coll_team *next; /* live teams of this process */
	struct doca_urom_worker *worker;
	struct doca_pe *pe;
	uint64_t tag, my_id;
	uint32_t rank, size;
	uint32_t outstanding; /* collectives submitted, not yet completed */
	int ready;	      /* the worker answered the creation */
	doca_error_t ready_status;
	struct waiter *destroying; /* the destroy command in flight */
	uint64_t members[UROM_COLL_MAX_MEMBERS];
};

struct urom_coll_req {
	struct urom_coll_team *team;
	int done, freed;
	doca_error_t result;
};

struct coll_task_data {
	union doca_data cookie;
	uint64_t type;
	urom_coll_finished cb;
	struct urom_coll_team *team; /* counted in team->outstanding; NULL when not */
};

_Static_assert(sizeof(struct coll_task_data) <= 32,
	       "collective task data must fit the worker command task's user data area");

static uint64_t coll_plugin_id;
static int coll_initialized;
static struct urom_coll_team *coll_teams;

doca_error_t urom_coll_init(uint64_t plugin_id, uint64_t version)
{
	if (version != UROM_WORKER_COLL_VERSION) {
		DOCA_LOG_ERR("worker_coll version %#lx on the worker, this host half speaks %#x",
			     (unsigned long)version, UROM_WORKER_COLL_VERSION);
		return DOCA_ERROR_UNSUPPORTED_VERSION;
	}
	coll_plugin_id = plugin_id;
	coll_initialized = 1;
	return DOCA_SUCCESS;
}

static size_t dtype_size(uint64_t dtype)
{
	static const uint8_t size[] = {1, 2, 4, 8, 1, 2, 4, 8, 4, 8};

	return dtype <= UROM_COLL_DTYPE_MAX ? size[dtype] : 0;
}

/* ---- submission ---- */

static void coll_completed(struct doca_urom_worker_cmd_task *task, union doca_data task_user_data,
			   union doca_data ctx_user_data)
{
	struct urom_worker_notify_coll n = {0};
	struct coll_task_data td;
	struct doca_buf *response;
	doca_error_t status;
	void *ptr = NULL;
	size_t len = 0;

	(void)task_user_data;
	(void)ctx_user_data;
	memcpy(&td, doca_urom_worker_cmd_task_get_user_data(task), sizeof(td));
	status = doca_task_get_status(doca_urom_worker_cmd_task_as_task(task));
	response = doca_urom_worker_cmd_task_get_response(task);
	if (response != NULL && doca_buf_get_data(response, &ptr) == DOCA_SUCCESS &&
	    doca_buf_get_data_len(response, &len) == DOCA_SUCCESS && len > 0) {
		if (ptr == NULL || len != sizeof(n)) {
			DOCA_LOG_ERR("collective response of %zu bytes, expected %zu", len,
				     sizeof(n));
			status = DOCA_ERROR_INVALID_VALUE;
		} else {
			int bad;

			memcpy(&n, ptr, sizeof(n));
			status = sdp_plugin_notif_status(n.status, &bad);
			if (bad)
				DOCA_LOG_ERR("collective %lu answered with status %lld, not a "
					     "doca_error_t",
					     (unsigned long)td.type, (long long)n.status);
			/* an unreadable command comes back as type UINT64_MAX, its status kept */
			if (n.type != td.type && n.type != UINT64_MAX) {
				DOCA_LOG_ERR("collective %lu answered as type %lu",
					     (unsigned long)td.type, (unsigned long)n.type);
				status = DOCA_ERROR_INVALID_VALUE;
			}
		}
	} else if (status == DOCA_SUCCESS) {
		DOCA_LOG_ERR("collective succeeded without a notification");
		status = DOCA_ERROR_INVALID_VALUE;
	}
	if (doca_urom_worker_cmd_task_release(task) != DOCA_SUCCESS)
		DOCA_LOG_ERR("failed to release a collective task");
	if (td.team != NULL)
		td.team->outstanding--;
	td.cb(status, td.cookie);
}

/*
 * Submit c (complete but for context) with trail and, when m is not NULL, its memh bytes (their
 * lengths set in c here); td.team counted when the submission holds.
 */
static doca_error_t submit_memh(struct doca_urom_worker *worker, struct urom_worker_coll_cmd *c,
				const uint64_t *trail, const struct urom_coll_memh *m,
				struct coll_task_data td)
{
	struct doca_urom_worker_cmd_task *task;
	size_t cap = 0, need;
	struct doca_buf *payload;
	doca_error_t st;
	void *p = NULL;

	if (!coll_initialized) {
		DOCA_LOG_ERR("urom_coll_init() was not called");
		return DOCA_ERROR_BAD_STATE;
	}
	if (c->ntrail > 4u * UROM_COLL_MAX_MEMBERS || (c->ntrail != 0 && trail == NULL)) {
		DOCA_LOG_ERR("collective command with %lu trailing values (at most %u, non-NULL)",
			     (unsigned long)c->ntrail, 4u * UROM_COLL_MAX_MEMBERS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (m != NULL) {
		if (m->slen > UROM_COLL_MEMH_MAX || m->rlen > UROM_COLL_MEMH_MAX ||
		    (m->slen != 0 && m->s == NULL) || (m->rlen != 0 && m->r == NULL)) {
			DOCA_LOG_ERR("collective command with memh of %zu and %zu bytes (at most "
				     "%u, non-NULL)",
				     m->slen, m->rlen, UROM_COLL_MEMH_MAX);
			return DOCA_ERROR_INVALID_VALUE;
		}
		c->smemh_len = m->slen;
		c->rmemh_len = m->rlen;
	}
	need = sizeof(*c) + c->ntrail * sizeof(uint64_t) + (m != NULL ? m->slen + m->rlen : 0);
	c->context = td.cookie.u64;
	td.type = c->type;
	st = doca_urom_worker_cmd_task_allocate_init(worker, coll_plugin_id, &task);
	if (st != DOCA_SUCCESS)
		return st;
	payload = doca_urom_worker_cmd_task_get_payload(task);
	if (payload == NULL || doca_buf_get_data(payload, &p) != DOCA_SUCCESS ||
	    doca_buf_get_data_len(payload, &cap) != DOCA_SUCCESS || p == NULL || cap < need) {
		DOCA_LOG_ERR("the task's payload (%zu bytes) cannot hold a %zu-byte collective",
			     cap, need);
		(void)doca_urom_worker_cmd_task_release(task);
		return DOCA_ERROR_TOO_BIG;
	}
	memcpy(p, c, sizeof(*c));
	if (c->ntrail != 0)
		memcpy((uint8_t *)p + sizeof(*c), trail, c->ntrail * sizeof(uint64_t));
	if (m != NULL && m->slen != 0)
		memcpy((uint8_t *)p + sizeof(*c) + c->ntrail * sizeof(uint64_t), m->s, m->slen);
	if (m != NULL && m->rlen != 0)
		memcpy((uint8_t *)p + sizeof(*c) + c->ntrail * sizeof(uint64_t) + m->slen, m->r,
		       m->rlen);
	(void)doca_buf_set_data(payload, p, need);
	memcpy(doca_urom_worker_cmd_task_get_user_data(task), &td, sizeof(td));
	doca_urom_worker_cmd_task_set_cb(task, coll_completed);
	st = doca_task_submit(doca_urom_worker_cmd_task_as_task(task));
	if (st != DOCA_SUCCESS) {
		(void)doca_urom_worker_cmd_task_release(task);
		return st;
	}
	if (td.team != NULL)
		td.team->outstanding++;
	return DOCA_SUCCESS;
}

static doca_error_t submit(struct doca_urom_worker *worker, struct urom_worker_coll_cmd *c,
			   const uint64_t *trail, struct coll_task_data td)
{
	return submit_memh(worker, c, trail, NULL, td);
}

/* Whether collectives may be started on team (logs the reason once per refusal). */
static doca_error_t team_usable(const struct urom_coll_team *team)
{
	if (team->destroying != NULL) {
		DOCA_LOG_ERR("team %#lx is being destroyed", (unsigned long)team->tag);
		return DOCA_ERROR_BAD_STATE;
	}
	if (team->ready && team->ready_status != DOCA_SUCCESS) {
		DOCA_LOG_ERR("team %#lx was not created on the worker: %s",
			     (unsigned long)team->tag, doca_error_get_name(team->ready_status));
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

/* urom_coll_submit_memh() once its arguments were checked by the caller's name. */
static doca_error_t team_submit(struct urom_coll_team *team, const struct urom_worker_coll_cmd *cmd,
				const uint64_t *trail, const struct urom_coll_memh *memh,
				union doca_data cookie, urom_coll_finished cb);

doca_error_t urom_coll_submit(struct urom_coll_team *team, const struct urom_worker_coll_cmd *cmd,
			      const uint64_t *trail, union doca_data cookie, urom_coll_finished cb)
{
	if (team == NULL || cmd == NULL || cb == NULL) {
		DOCA_LOG_ERR("invalid argument: team %p, command %p, callback %p", (void *)team,
			     (const void *)cmd, (void *)cb);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return team_submit(team, cmd, trail, NULL, cookie, cb);
}

doca_error_t urom_coll_submit_memh(struct urom_coll_team *team,
				   const struct urom_worker_coll_cmd *cmd, const uint64_t *trail,
				   const struct urom_coll_memh *memh, union doca_data cookie,
				   urom_coll_finished cb)
{
	if (team == NULL || cmd == NULL || cb == NULL) {
		DOCA_LOG_ERR("invalid argument: team %p, command %p, callback %p", (void *)team,
			     (const void *)cmd, (void *)cb);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return team_submit(team, cmd, trail, memh, cookie, cb);
}

static doca_error_t team_submit(struct urom_coll_team *team, const struct urom_worker_coll_cmd *cmd,
				const uint64_t *trail, const struct urom_coll_memh *memh,
				union doca_data cookie, urom_coll_finished cb)
{
	struct coll_task_data td = {.cookie = cookie, .cb = cb, .team = team};
	struct urom_worker_coll_cmd c;
	doca_error_t st;

	st = team_usable(team);
	if (st != DOCA_SUCCESS)
		return st;
	c = *cmd;
	c.team = team->tag;
	c.my_id = team->my_id;
	return submit_memh(team->worker, &c, trail, memh, td);
}

/* ---- teams ---- */

static void team_created(doca_error_t result, union doca_data cookie)
{
	struct urom_coll_team *team = cookie.ptr;

	team->ready = 1;
	team->ready_status = result;
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("team %#lx: the worker refused its creation: %s",
			     (unsigned long)team->tag, doca_error_get_name(result));
}

static void team_unlink(struct urom_coll_team *team)
{
	struct urom_coll_team **pp;

	for (pp = &coll_teams; *pp != NULL; pp = &(*pp)->next)
		if (*pp == team) {
			*pp = team->next;
			return;
		}
}

doca_error_t urom_coll_team_create(struct doca_urom_worker *worker, struct doca_pe *pe,
				   uint64_t tag, uint64_t my_id, const uint64_t *members,
				   uint32_t size, struct urom_coll_team **team_p)
{
	struct coll_task_data td = {.cb = team_created};
	struct urom_worker_coll_cmd c;
	struct urom_coll_team *team;
	uint32_t rank = UINT32_MAX;
	doca_error_t st;

	if (worker == NULL || pe == NULL || members == NULL || team_p == NULL || tag == 0 ||
	    size == 0 || size > UROM_COLL_MAX_MEMBERS) {
		DOCA_LOG_ERR("invalid argument: worker %p, pe %p, members %p, team %p, tag %#lx, "
			     "size %u (1 .. %u)",
			     (void *)worker, (void *)pe, (const void *)members, (void *)team_p,
			     (unsigned long)tag, size, UROM_COLL_MAX_MEMBERS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	for (uint32_t i = 0; i < size; i++) {
		for (uint32_t k = 0; k < i; k++)
			if (members[k] == members[i]) {
				DOCA_LOG_ERR("member %lu listed twice", (unsigned long)members[i]);
				return DOCA_ERROR_INVALID_VALUE;
			}
		if (members[i] == my_id)
			rank = i;
	}
	if (rank == UINT32_MAX) {
		DOCA_LOG_ERR("this host (domain id %lu) is not a member of team %#lx",
			     (unsigned long)my_id, (unsigned long)tag);
		return DOCA_ERROR_INVALID_VALUE;
	}
	for (team = coll_teams; team != NULL; team = team->next)
		if (team->worker == worker && team->tag == tag) {
			DOCA_LOG_ERR("team %#lx already exists on this worker", (unsigned long)tag);
			return DOCA_ERROR_ALREADY_EXIST;
		}
	team = calloc(1, sizeof(*team));
	if (team == NULL)
		return DOCA_ERROR_NO_MEMORY;
	team->worker = worker;
	team->pe = pe;
	team->tag = tag;
	team->my_id = my_id;
	team->rank = rank;
	team->size = size;
	memcpy(team->members, members, size * sizeof(*members));
	memset(&c, 0, sizeof(c));
	c.type = UROM_WORKER_CMD_COLL_TEAM_CREATE;
	c.team = tag;
	c.my_id = my_id;
	c.ntrail = size;
	td.cookie.ptr = team;
	st = submit(worker, &c, team->members, td);
	if (st != DOCA_SUCCESS) {
		free(team);
		return st;
	}
	team->next = coll_teams;
	coll_teams = team;
	*team_p = team;
	return DOCA_SUCCESS;
}

doca_error_t urom_coll_team_create_strided(struct doca_urom_worker *worker, struct doca_pe *pe,
					   uint64_t tag, uint64_t my_id, uint64_t start,
					   uint64_t stride, uint32_t size,
					   struct urom_coll_team **team_p)
{
	uint64_t members[UROM_COLL_MAX_MEMBERS];

	if (stride == 0 || size == 0 || size > UROM_COLL_MAX_MEMBERS ||
	    (UINT64_MAX - start) / stride < size - 1) {
		DOCA_LOG_ERR("invalid team: start %lu, stride %lu, size %u (1 .. %u)",
			     (unsigned long)start, (unsigned long)stride, size,
			     UROM_COLL_MAX_MEMBERS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	for (uint32_t i = 0; i < size; i++)
		members[i] = start + i * stride;
	return urom_coll_team_create(worker, pe, tag, my_id, members, size, team_p);
}

doca_error_t urom_coll_team_wait_ready(struct urom_coll_team *team, int timeout_ms)
{
	int64_t deadline = sdp_plugin_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);

	if (team == NULL) {
		DOCA_LOG_ERR("invalid argument: NULL team");
		return DOCA_ERROR_INVALID_VALUE;
	}
	while (!team->ready && sdp_plugin_now_ms() < deadline)
		sdp_plugin_pe_step(team->pe);
	if (!team->ready) {
		DOCA_LOG_ERR("team %#lx: no answer to its creation within %d ms",
			     (unsigned long)team->tag, timeout_ms);
		return DOCA_ERROR_TIME_OUT;
	}
	return team->ready_status;
}

uint32_t urom_coll_team_rank(const struct urom_coll_team *team)
{
	return team != NULL ? team->rank : 0;
}

uint32_t urom_coll_team_size(const struct urom_coll_team *team)
{
	return team != NULL ? team->size : 0;
}

static void wait_done(doca_error_t result, union doca_data cookie)
{
	struct waiter *w = cookie.ptr;

	if (w->abandoned) {
		free(w);
		return;
	}
	w->result = result;
	w->done = 1;
}

doca_error_t urom_coll_team_destroy(struct urom_coll_team *team, int timeout_ms)
{
	int64_t deadline = sdp_plugin_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	struct coll_task_data td = {.cb = wait_done};
	struct urom_worker_coll_cmd c;
	doca_error_t st;

	if (team == NULL) {
		DOCA_LOG_ERR("invalid argument: NULL team");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (team->outstanding != 0) {
		DOCA_LOG_ERR("team %#lx has %u collectives outstanding", (unsigned long)team->tag,
			     team->outstanding);
		return DOCA_ERROR_IN_USE;
	}
	while (!team->ready && sdp_plugin_now_ms() < deadline)
		sdp_plugin_pe_step(team->pe);
	if (!team->ready) {
		DOCA_LOG_ERR("team %#lx: its creation is still unanswered after %d ms",
			     (unsigned long)team->tag, timeout_ms);
		return DOCA_ERROR_TIME_OUT;
	}
	if (team->ready_status != DOCA_SUCCESS) {
		/* nothing of this handle on the worker */
		team_unlink(team);
		free(team);
		return DOCA_SUCCESS;
	}
	if (team->destroying == NULL) {
		struct waiter *w = calloc(1, sizeof(*w));

		if (w == NULL)
			return DOCA_ERROR_NO_MEMORY;
		memset(&c, 0, sizeof(c));
		c.type = UROM_WORKER_CMD_COLL_TEAM_DESTROY;
		c.team = team->tag;
		c.my_id = team->my_id;
		td.cookie.ptr = w;
		while ((st = submit(team->worker, &c, NULL, td)) == DOCA_ERROR_AGAIN &&
		       sdp_plugin_now_ms() < deadline)
			sdp_plugin_pe_step(team->pe);
		if (st != DOCA_SUCCESS) {
			free(w);
			return st;
		}
		team->destroying = w;
	}
	while (!team->destroying->done && sdp_plugin_now_ms() < deadline)
		sdp_plugin_pe_step(team->pe);
	if (!team->destroying->done) {
		DOCA_LOG_ERR("team %#lx: no answer to its destruction within %d ms (call again)",
			     (unsigned long)team->tag, timeout_ms);
		return DOCA_ERROR_TIME_OUT;
	}
	st = team->destroying->result;
	free(team->destroying);
	team->destroying = NULL;
	if (st == DOCA_ERROR_IN_USE)
		return st; /* someone else's command of this team runs; the handle stays */
	team_unlink(team);
	free(team);
	return st;
}

/* ---- requests ---- */

static void req_done(doca_error_t result, union doca_data cookie)
{
	struct urom_coll_req *r = cookie.ptr;

	if (r->freed) {
		free(r);
		return;
	}
	r->result = result;
	r->done = 1;
}

static doca_error_t start(struct urom_coll_team *team, struct urom_worker_coll_cmd *c,
			  const uint64_t *trail, struct urom_coll_req **req_p)
{
	struct coll_task_data td = {.cb = req_done, .team = team};
	struct urom_coll_req *r;
	doca_error_t st;

	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return DOCA_ERROR_NO_MEMORY;
	r->team = team;
	c->team = team->tag;
	c->my_id = team->my_id;
	td.cookie.ptr = r;
	st = submit(team->worker, c, trail, td);
	if (st != DOCA_SUCCESS) {
		free(r);
		return st;
	}
	*req_p = r;
	return DOCA_SUCCESS;
}

/*
 * Build and check the part every collective shares. sbuf may be UROM_COLL_IN_PLACE (when
 * in_place_ok); the worker then reads the input where worker_coll.h says, which is in_va.
 */
static doca_error_t prepare(struct urom_coll_team *team, struct urom_coll_req **req, uint64_t type,
			    const void *sbuf, void *rbuf, uint64_t count, uint64_t dtype,
			    uint64_t op, uint64_t root, struct urom_worker_coll_cmd *c)
{
	size_t es;
	doca_error_t st;

	if (team == NULL || req == NULL) {
		DOCA_LOG_ERR("invalid argument: team %p, request %p", (void *)team, (void *)req);
		return DOCA_ERROR_INVALID_VALUE;
	}
	st = team_usable(team);
	if (st != DOCA_SUCCESS)
		return st;
	memset(c, 0, sizeof(*c));
	c->type = type;
	if (type == UROM_WORKER_CMD_COLL_BARRIER)
		return DOCA_SUCCESS;
	es = dtype_size(dtype);
	if (es == 0) {
		DOCA_LOG_ERR("unknown element type %lu", (unsigned long)dtype);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (count > UROM_COLL_MAX_LEN / es / team->size) {
		DOCA_LOG_ERR("count %lu of %zu-byte elements in a team of %u: at most %llu bytes",
			     (unsigned long)count, es, team->size, UROM_COLL_MAX_LEN);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (op > UROM_COLL_OP_MAX) {
		DOCA_LOG_ERR("unknown reduction %lu", (unsigned long)op);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (root >= team->size) {
		DOCA_LOG_ERR("root %lu outside the team of %u", (unsigned long)root, team->size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	c->rbuf_va = (uint64_t)(uintptr_t)rbuf;
	if (sbuf == UROM_COLL_IN_PLACE) {
		c->flags |= UROM_COLL_FLAG_IN_PLACE;
		c->sbuf_va = c->rbuf_va;
		if (type == UROM_WORKER_CMD_COLL_ALLGATHER)
			c->sbuf_va += (uint64_t)team->rank * count * es;
	} else {
		c->sbuf_va = (uint64_t)(uintptr_t)sbuf;
	}
	c->count = count;
	c->dtype = dtype;
	c->op = op;
	c->root = root;
	return DOCA_SUCCESS;
}

/* NULL where a buffer is needed (count > 0); in place already resolved in c. */
static doca_error_t need_bufs(const struct urom_worker_coll_cmd *c, int sbuf, int rbuf)
{
	if (c->count != 0 && ((sbuf && c->sbuf_va == 0) || (rbuf && c->rbuf_va == 0))) {
		DOCA_LOG_ERR("collective %lu: NULL buffer (send %#lx, receive %#lx)",
			     (unsigned long)c->type, (unsigned long)c->sbuf_va,
			     (unsigned long)c->rbuf_va);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t urom_coll_barrier(struct urom_coll_team *team, struct urom_coll_req **req)
{
	struct urom_worker_coll_cmd c;
	doca_error_t st =
		prepare(team, req, UROM_WORKER_CMD_COLL_BARRIER, NULL, NULL, 0, 0, 0, 0, &c);

	return st != DOCA_SUCCESS ? st : start(team, &c, NULL, req);
}

doca_error_t urom_coll_bcast(struct urom_coll_team *team, const void *sbuf, void *rbuf,
			     uint64_t count, enum urom_coll_dtype dtype, uint32_t root,
			     struct urom_coll_req **req)
{
	struct urom_worker_coll_cmd c;
	doca_error_t st;

	if (sbuf == UROM_COLL_IN_PLACE) {
		DOCA_LOG_ERR("bcast has no in-place flag: the root passes its rbuf as sbuf");
		return DOCA_ERROR_INVALID_VALUE;
	}
	st = prepare(team, req, UROM_WORKER_CMD_COLL_BCAST, sbuf, rbuf, count, dtype, 0, root, &c);
	if (st == DOCA_SUCCESS)
		st = need_bufs(&c, team->rank == root, 1);
	return st != DOCA_SUCCESS ? st : start(team, &c, NULL, req);
}

doca_error_t urom_coll_reduce(struct urom_coll_team *team, const void *sbuf, void *rbuf,
			      uint64_t count, enum urom_coll_dtype dtype, enum urom_coll_op op,
			      uint32_t root, struct urom_coll_req **req)
{
	struct urom_worker_coll_cmd c;
	doca_error_t st;

	st = prepare(team, req, UROM_WORKER_CMD_COLL_REDUCE, sbuf, rbuf, count, dtype, op, root,
		     &c);
	if (st == DOCA_SUCCESS)
		st = need_bufs(&c, 1, team->rank == root);
	return st != DOCA_SUCCESS ? st : start(team, &c, NULL, req);
}

doca_error_t urom_coll_allreduce(struct urom_coll_team *team, const void *sbuf, void *rbuf,
				 uint64_t count, enum urom_coll_dtype dtype, enum urom_coll_op op,
				 struct urom_coll_req **req)
{
	struct urom_worker_coll_cmd c;
	doca_error_t st;

	st = prepare(team, req, UROM_WORKER_CMD_COLL_ALLREDUCE, sbuf, rbuf, count, dtype, op, 0,
		     &c);
	if (st == DOCA_SUCCESS)
		st = need_bufs(&c, 1, 1);
	return st != DOCA_SUCCESS ? st : start(team, &c, NULL, req);
}

doca_error_t urom_coll_allgather(struct urom_coll_team *team, const void *sbuf, void *rbuf,
				 uint64_t count, enum urom_coll_dtype dtype,
				 struct urom_coll_req **req)
{
	struct urom_worker_coll_cmd c;
	doca_error_t st;

	st = prepare(team, req, UROM_WORKER_CMD_COLL_ALLGATHER, sbuf, rbuf, count, dtype, 0, 0, &c);
	if (st == DOCA_SUCCESS)
		st = need_bufs(&c, 1, 1);
	return st != DOCA_SUCCESS ? st : start(team, &c, NULL, req);
}

doca_error_t urom_coll_alltoall(struct urom_coll_team *team, const void *sbuf, void *rbuf,
				uint64_t count, enum urom_coll_dtype dtype,
				struct urom_coll_req **req)
{
	struct urom_worker_coll_cmd c;
	doca_error_t st;

	st = prepare(team, req, UROM_WORKER_CMD_COLL_ALLTOALL, sbuf, rbuf, count, dtype, 0, 0, &c);
	if (st == DOCA_SUCCESS)
		st = need_bufs(&c, 1, 1);
	return st != DOCA_SUCCESS ? st : start(team, &c, NULL, req);
}

doca_error_t urom_coll_alltoallv(struct urom_coll_team *team, const void *sbuf,
				 const uint64_t *scounts, const uint64_t *sdispls, void *rbuf,
				 const uint64_t *rcounts, const uint64_t *rdispls,
				 enum urom_coll_dtype dtype, struct urom_coll_req **req)
{
	uint64_t trail[4 * UROM_COLL_MAX_MEMBERS];
	struct urom_worker_coll_cmd c;
	doca_error_t st;
	uint32_t n;

	if (scounts == NULL || sdispls == NULL || rcounts == NULL || rdispls == NULL) {
		DOCA_LOG_ERR("alltoallv: NULL count or displacement array");
		return DOCA_ERROR_INVALID_VALUE;
	}
	st = prepare(team, req, UROM_WORKER_CMD_COLL_ALLTOALLV, sbuf, rbuf, 0, dtype, 0, 0, &c);
	if (st != DOCA_SUCCESS)
		return st;
	n = team->size;
	memcpy(trail, scounts, n * sizeof(*trail));
	memcpy(trail + n, sdispls, n * sizeof(*trail));
	memcpy(trail + 2 * n, rcounts, n * sizeof(*trail));
	memcpy(trail + 3 * n, rdispls, n * sizeof(*trail));
	c.ntrail = 4ull * n;
	/* the worker checks every block against the exported segments */
	return start(team, &c, trail, req);
}

doca_error_t urom_coll_reduce_scatter(struct urom_coll_team *team, const void *sbuf, void *rbuf,
				      uint64_t count, enum urom_coll_dtype dtype,
				      enum urom_coll_op op, struct urom_coll_req **req)
{
	struct urom_worker_coll_cmd c;
	doca_error_t st;

	st = prepare(team, req, UROM_WORKER_CMD_COLL_REDUCE_SCATTER, sbuf, rbuf, count, dtype, op,
		     0, &c);
	if (st == DOCA_SUCCESS)
		st = need_bufs(&c, 1, 1);
	return st != DOCA_SUCCESS ? st : start(team, &c, NULL, req);
}

doca_error_t urom_coll_test(struct urom_coll_req *req)
{
	doca_error_t st;

	if (req == NULL) {
		DOCA_LOG_ERR("invalid argument: NULL request");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!req->done)
		(void)doca_pe_progress(req->team->pe);
	if (!req->done)
		return DOCA_ERROR_IN_PROGRESS;
	st = req->result;
	free(req);
	return st;
}

doca_error_t urom_coll_wait(struct urom_coll_req *req, int timeout_ms)
{
	int64_t deadline = sdp_plugin_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	doca_error_t st;

	if (req == NULL) {
		DOCA_LOG_ERR("invalid argument: NULL request");
		return DOCA_ERROR_INVALID_VALUE;
	}
	while (!req->done && sdp_plugin_now_ms() < deadline)
		sdp_plugin_pe_step(req->team->pe);
	if (!req->done) {
		DOCA_LOG_ERR("collective of team %#lx: no completion within %d ms",
			     (unsigned long)req->team->tag, timeout_ms);
		return DOCA_ERROR_TIME_OUT;
	}
	st = req->result;
	free(req);
	return st;
}

doca_error_t urom_coll_waitall(struct urom_coll_req **reqs, size_t n, int timeout_ms)
{
	int64_t deadline = sdp_plugin_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	doca_error_t first = DOCA_SUCCESS;

	if (reqs == NULL && n != 0) {
		DOCA_LOG_ERR("invalid argument: NULL request array");
		return DOCA_ERROR_INVALID_VALUE;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t left = deadline - sdp_plugin_now_ms();
		doca_error_t st;

		if (reqs[i] == NULL)
			continue;
		st = urom_coll_wait(reqs[i], left > 0 ? (int)left : 0);
		if (st == DOCA_ERROR_TIME_OUT)
			return st; /* this and the later requests stay valid */
		reqs[i] = NULL;
		if (st != DOCA_SUCCESS && first == DOCA_SUCCESS)
			first = st;
	}
	return first;
}

void urom_coll_req_free(struct urom_coll_req *req)
{
	if (req == NULL)
		return;
	if (req->done)
		free(req);
	else
		req->freed = 1;
}

doca_error_t urom_coll_submit_wait(struct urom_coll_team *team,
				   const struct urom_worker_coll_cmd *cmd, const uint64_t *trail,
				   int timeout_ms)
{
	if (team == NULL) {
		DOCA_LOG_ERR("invalid argument: NULL team");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return urom_coll_submit_memh_wait(team, cmd, trail, NULL, timeout_ms);
}

doca_error_t urom_coll_submit_memh_wait(struct urom_coll_team *team,
					const struct urom_worker_coll_cmd *cmd,
					const uint64_t *trail, const struct urom_coll_memh *memh,
					int timeout_ms)
{
	int64_t deadline = sdp_plugin_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	union doca_data cookie;
	struct waiter *w;
	doca_error_t st;

	if (team == NULL) {
		DOCA_LOG_ERR("invalid argument: NULL team");
		return DOCA_ERROR_INVALID_VALUE;
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return DOCA_ERROR_NO_MEMORY;
	cookie.ptr = w;
	while ((st = urom_coll_submit_memh(team, cmd, trail, memh, cookie, wait_done)) ==
		       DOCA_ERROR_AGAIN &&
	       sdp_plugin_now_ms() < deadline)
		sdp_plugin_pe_step(team->pe);
	if (st != DOCA_SUCCESS) {
		free(w);
		return st;
	}
	while (!w->done && sdp_plugin_now_ms() < deadline)
		sdp_plugin_pe_step(team->pe);
	if (!w->done) {
		w->abandoned = 1;
		DOCA_LOG_ERR("collective %lu: no completion within %d ms", (unsigned long)cmd->type,
			     timeout_ms);
		return DOCA_ERROR_TIME_OUT;
	}
	st = w->result;
	free(w);
	return st;
}
