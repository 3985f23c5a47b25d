/*
 * worker_rma plugin, worker half: one-sided operations a UROM host offloads to its worker
 * (common/worker_rma.h has the commands, docs/plugins.md "worker_rma" the semantics).
 *
 * The plugin owns a UCP context (RMA, AMO32, AMO64, WAKEUP) and worker. Memory of domain
 * members is reached through plugins/common's sdp_plugin_mem (import_domain, then range-checked
 * put/get/flush). PUT and GET move data through bounce chunks of the plugin: a chunk is read
 * from the source (the local buffer for PUT, the target for GET) and then written to the other
 * side, UROM_RMA_CHUNKS_INFLIGHT chunks in flight; the command completes after a flush of the
 * side written. Atomics are not part of sdp_plugin_mem: after the same import and range check
 * this file unpacks the segment's remote key on its own endpoint to the owner and issues
 * ucp_atomic_op_nbx(), then flushes that endpoint (posted ops only: a fetching op's reply comes
 * from the target, so it is done there already).
 *
 * Commands run one at a time in arrival order (a FIFO): a command starts when the one before
 * has completed (remotely: flushed). Every command is answered once.
 *
 * Active messages: AM_SEND is a FIFO command: its bytes go, behind a 24-byte wire header
 * (common/worker_rma_am_wire.h), by ucp_am_send_nbx (eager) to the plugin worker of the
 * destination member (its address from doca_urom_worker_domain_addr_lookup, endpoint cached
 * per member). AM_RECV bypasses the FIFO: it is posted at once. An arriving AM is checked by
 * urom_rma_am_wire_parse() (the peer worker's bytes are untrusted), then completes the oldest
 * posted receive of its handler or waits in a bounded queue.
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
#include "sdp_urom_memh.h"
#include "softdpu/urom_plugin.h"
#include "worker_rma.h"
#include "worker_rma_am_wire.h"

DOCA_LOG_REGISTER(UROM::WORKER::RMA);

/* sdp_plugin_mem_progress() calls per progress op, at most (the runtime loop gets its turn). */
#define RMA_PROGRESS_ROUNDS 256
/* Remote keys are unpacked from a zero-padded copy at least this long (UCX takes no length). */
#define RMA_RKEY_PAD 1024
/* Bound on closing the atomic endpoints at teardown. */
#define RMA_CLOSE_MS 1000
/* The runtime's message size, when it tells us (else RMA_DEFAULT_MSG_SIZE). */
#define RMA_MSG_SIZE_ENV "SDP_UROM_WORKER_MAX_MSG_SIZE"
#define RMA_DEFAULT_MSG_SIZE 4096
#define RMA_NOTIFY_HDR_LEN 32 /* offsetof(struct urom_worker_notify, plugin_notif) */
#define RMA_CMD_HDR_LEN 24    /* offsetof(struct urom_worker_cmd, plugin_cmd) */

_Static_assert(RMA_NOTIFY_HDR_LEN + sizeof(struct urom_worker_notify_rma_am) ==
		       UROM_RMA_AM_OVERHEAD,
	       "an AM_RECV notification's overhead is UROM_RMA_AM_OVERHEAD");
_Static_assert(RMA_CMD_HDR_LEN + sizeof(struct urom_worker_rma_cmd) <= UROM_RMA_AM_OVERHEAD,
	       "an AM_SEND command fits whenever its notification does");

/* An AM that arrived before a receive took it. */
struct arrival {
	ucs_list_link_t link;
	uint64_t handler, sender;
	uint32_t hdr_len, len;
	uint8_t bytes[]; /* header, then payload */
};

struct rma;
struct job;

/* One chunk buffer of a PUT / GET. */
struct slot {
	struct job *j;
	uint8_t *buf;
	uint64_t off;
	size_t n;
	int stage; /* 0 free, 1 reading the source, 2 writing the target */
};

/* Endpoint of the atomics to one owner address. */
struct aep {
	ucs_list_link_t link;
	ucp_ep_h ep;
	uint8_t *addr;
	size_t addr_len;
};

/* Remote key of a domain segment, for atomics. */
struct akey {
	ucs_list_link_t link;
	uint64_t dest;
	int seg;
	uint8_t *memh;
	size_t memh_len;
	ucp_rkey_h rkey;
	struct aep *ep;
};

/* The command being executed. */
struct job {
	struct rma *rma;
	struct urom_worker_cmd_desc *cd;
	struct urom_worker_rma_cmd c;
	doca_error_t status;
	/* PUT / GET */
	uint64_t src_region, src_va, dst_region, dst_va, len, next, moved;
	struct slot slots[UROM_RMA_CHUNKS_INFLIGHT];
	uint8_t *bounce;
	int active, flushing;
	int64_t stall_at; /* no chunk moved by then: time out (UROM_RMA_STALL_MS) */
	int stalled;
	int fetching; /* atomic with a reply: its reply means it was done at the target */
	/* raw UCX request (atomic, its flush, FLUSH) */
	struct akey *key;
	int ucx_wait, ucx_done, stage;
	ucs_status_t ucx_status;
	union {
		uint32_t u32;
		uint64_t u64;
	} operand, reply;
	int finished;
};

struct rma {
	ucp_context_h context;
	ucp_worker_h worker;
	struct sdp_plugin_mem *mem;
	struct urom_worker_ctx *ctx;
	ucs_list_link_t queue; /* struct urom_worker_cmd_desc waiting */
	ucs_list_link_t done;  /* notifications for progress */
	ucs_list_link_t aeps, akeys;
	struct job *job;
	int closing;
	/* active messages */
	ucp_address_t *addr;
	size_t addr_len;
	size_t am_max; /* hdr_len + len bound: message size - UROM_RMA_AM_OVERHEAD */
	struct sdp_plugin_peers apeers;
	ucs_list_link_t recvs;	  /* posted AM_RECV struct urom_worker_cmd_desc */
	ucs_list_link_t arrivals; /* struct arrival */
	size_t nrecvs, narrivals, arrival_bytes;
	uint64_t dropped; /* since the last receive told the host */
	int drop_logged;
};

static doca_error_t ucs_to_doca(ucs_status_t st)
{
	switch (st) {
	case UCS_OK:
		return DOCA_SUCCESS;
	case UCS_ERR_NO_MEMORY:
		return DOCA_ERROR_NO_MEMORY;
	case UCS_ERR_UNREACHABLE:
	case UCS_ERR_CONNECTION_RESET:
	case UCS_ERR_ENDPOINT_TIMEOUT:
	case UCS_ERR_CANCELED:
		return DOCA_ERROR_NOT_CONNECTED;
	default:
		return DOCA_ERROR_DRIVER;
	}
}

/* ---- notifications ---- */

static void notify(struct rma *rma, const struct urom_worker_cmd_desc *cd, uint64_t type,
		   uint64_t context, doca_error_t status, uint64_t value, uint64_t len)
{
	struct urom_worker_notify_rma n = {
		.type = type, .context = context, .status = status, .value = value, .len = len};
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
	ucs_list_add_tail(&rma->done, &nd->entry);
}

static uint64_t cmd_context(const struct urom_worker_rma_cmd *c)
{
	switch (c->type) {
	case UROM_WORKER_CMD_RMA_PUT:
	case UROM_WORKER_CMD_RMA_GET:
		return c->xfer.context;
	case UROM_WORKER_CMD_RMA_ATOMIC:
		return c->atomic.context;
	default:
		return c->sync.context;
	}
}

/* The job is over: answer it (its cd freed); the next command starts from progress. */
static void job_finish(struct job *j)
{
	struct rma *rma = j->rma;
	int fetch = 0;
	uint64_t value = 0;

	if (j->c.type == UROM_WORKER_CMD_RMA_ATOMIC && j->status == DOCA_SUCCESS) {
		fetch = j->c.atomic.op != UROM_RMA_ATOMIC_ADD &&
			j->c.atomic.op != UROM_RMA_ATOMIC_AND &&
			j->c.atomic.op != UROM_RMA_ATOMIC_OR &&
			j->c.atomic.op != UROM_RMA_ATOMIC_XOR;
		if (fetch)
			value = j->c.atomic.size == 4 ? j->reply.u32 : j->reply.u64;
	}
	notify(rma, j->cd, j->c.type, cmd_context(&j->c), j->status, value,
	       j->status == DOCA_SUCCESS && j->c.type <= UROM_WORKER_CMD_RMA_GET ? j->len : 0);
	free(j->cd);
	j->cd = NULL;
	j->finished = 1;
}

static void job_free(struct job *j)
{
	if (j == NULL)
		return;
	free(j->cd);
	free(j->bounce);
	free(j);
}

/* ---- PUT / GET ---- */

static int64_t now_ms(void);

static void xfer_pump(struct job *j);

static void flush_done(void *arg, doca_error_t status)
{
	struct job *j = arg;

	if (status != DOCA_SUCCESS && j->status == DOCA_SUCCESS)
		j->status = status;
	job_finish(j);
}

static void slot_done(void *arg, doca_error_t status)
{
	struct slot *s = arg;
	struct job *j = s->j;
	doca_error_t st;

	if (status != DOCA_SUCCESS && j->status == DOCA_SUCCESS)
		j->status = status;
	if (status == DOCA_SUCCESS)
		j->stall_at = now_ms() + UROM_RMA_STALL_MS;
	if (s->stage == 1 && j->status == DOCA_SUCCESS && !j->rma->closing) {
		s->stage = 2;
		st = sdp_plugin_mem_put_nb(j->rma->mem, j->dst_region, j->dst_va + s->off, s->buf,
					   s->n, slot_done, s);
		if (st == DOCA_SUCCESS)
			return;
		j->status = st;
	} else if (s->stage == 2 && j->status == DOCA_SUCCESS) {
		j->moved += s->n;
	}
	s->stage = 0;
	j->active--;
	xfer_pump(j);
}

static void xfer_pump(struct job *j)
{
	struct rma *rma = j->rma;
	doca_error_t st;
	int i;

	for (i = 0; i < UROM_RMA_CHUNKS_INFLIGHT && j->status == DOCA_SUCCESS && !rma->closing &&
		    j->next < j->len;
	     i++) {
		struct slot *s = &j->slots[i];

		if (s->buf == NULL || s->stage != 0)
			continue;
		s->off = j->next;
		s->n = j->len - j->next < UROM_RMA_CHUNK ? j->len - j->next : UROM_RMA_CHUNK;
		s->stage = 1;
		st = sdp_plugin_mem_get_nb(rma->mem, j->src_region, j->src_va + s->off, s->buf,
					   s->n, slot_done, s);
		if (st != DOCA_SUCCESS) {
			s->stage = 0;
			j->status = st;
			break;
		}
		j->next += s->n;
		j->active++;
	}
	if (j->active != 0 || j->flushing || j->finished)
		return;
	if (j->status != DOCA_SUCCESS || rma->closing) {
		if (j->status == DOCA_SUCCESS)
			j->status = DOCA_ERROR_NOT_CONNECTED;
		job_finish(j);
		return;
	}
	if (j->next < j->len)
		return;
	j->flushing = 1;
	st = sdp_plugin_mem_flush_nb(rma->mem, j->dst_region, flush_done, j);
	if (st != DOCA_SUCCESS) {
		j->status = st;
		job_finish(j);
	}
}

/* Import and check [va, va + len) of member id; sdp_plugin_mem logs its refusals. */
static doca_error_t region_of(struct rma *rma, uint64_t id, uint64_t va, uint64_t len,
			      uint64_t *region)
{
	doca_error_t st = sdp_plugin_mem_import_domain(rma->mem, rma->ctx, id, va, region);

	if (st == DOCA_SUCCESS)
		st = sdp_plugin_mem_check(rma->mem, *region, va, len);
	return st;
}

static doca_error_t xfer_start(struct job *j)
{
	const struct urom_worker_rma_cmd_xfer *x = &j->c.xfer;
	struct rma *rma = j->rma;
	uint64_t local, remote, nslots, chunk, i;
	doca_error_t st;

	if (x->len == 0 || x->len > UROM_RMA_MAX_LEN) {
		DOCA_LOG_ERR("%s of %llu bytes: the size must be 1 .. %llu",
			     j->c.type == UROM_WORKER_CMD_RMA_PUT ? "PUT" : "GET",
			     (unsigned long long)x->len, (unsigned long long)UROM_RMA_MAX_LEN);
		return DOCA_ERROR_INVALID_VALUE;
	}
	st = region_of(rma, x->dest, x->remote_va, x->len, &remote);
	if (st != DOCA_SUCCESS)
		return st;
	st = region_of(rma, x->local_id, x->local_va, x->len, &local);
	if (st != DOCA_SUCCESS)
		return st;
	j->len = x->len;
	if (j->c.type == UROM_WORKER_CMD_RMA_PUT) {
		j->src_region = local, j->src_va = x->local_va;
		j->dst_region = remote, j->dst_va = x->remote_va;
	} else {
		j->src_region = remote, j->src_va = x->remote_va;
		j->dst_region = local, j->dst_va = x->local_va;
	}
	chunk = x->len < UROM_RMA_CHUNK ? x->len : UROM_RMA_CHUNK;
	nslots = (x->len + UROM_RMA_CHUNK - 1) / UROM_RMA_CHUNK;
	if (nslots > UROM_RMA_CHUNKS_INFLIGHT)
		nslots = UROM_RMA_CHUNKS_INFLIGHT;
	j->bounce = malloc(chunk * nslots);
	if (j->bounce == NULL) {
		DOCA_LOG_ERR("no memory for %llu chunk buffers of %llu bytes",
			     (unsigned long long)nslots, (unsigned long long)chunk);
		return DOCA_ERROR_NO_MEMORY;
	}
	for (i = 0; i < nslots; i++) {
		j->slots[i].j = j;
		j->slots[i].buf = j->bounce + i * chunk;
	}
	j->stall_at = now_ms() + UROM_RMA_STALL_MS;
	xfer_pump(j);
	return DOCA_SUCCESS;
}

/* ---- raw UCX requests (atomics, flushes) ---- */

static void ucx_cb(void *request, ucs_status_t status, void *user_data)
{
	struct job *j = user_data;

	j->ucx_status = status;
	j->ucx_done = 1;
	ucp_request_free(request);
}

static void ucx_param(struct job *j, ucp_request_param_t *p)
{
	memset(p, 0, sizeof(*p));
	p->op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	p->cb.send = ucx_cb;
	p->user_data = j;
}

/* The outcome of issuing a raw request: wait for it, or note it done. */
static doca_error_t ucx_issued(struct job *j, ucs_status_ptr_t req, const char *what)
{
	if (UCS_PTR_IS_ERR(req)) {
		DOCA_LOG_ERR("%s failed: %s", what, ucs_status_string(UCS_PTR_STATUS(req)));
		return ucs_to_doca(UCS_PTR_STATUS(req));
	}
	j->ucx_wait = 1;
	j->ucx_done = req == NULL;
	j->ucx_status = UCS_OK;
	return DOCA_SUCCESS;
}

/* ---- atomics ---- */

static struct aep *aep_get(struct rma *rma, const uint8_t *addr, size_t len)
{
	ucp_ep_params_t params;
	uint8_t *padded;
	struct aep *e;
	ucs_status_t st;

	ucs_list_for_each(e, &rma->aeps, link) {
		if (e->addr_len == len && memcmp(e->addr, addr, len) == 0)
			return e;
	}
	e = calloc(1, sizeof(*e));
	padded = calloc(1, len + SDP_UROM_MEMH_ADDR_MAX);
	if (e == NULL || padded == NULL || (e->addr = malloc(len)) == NULL) {
		DOCA_LOG_ERR("no memory for an atomic endpoint");
		free(padded);
		free(e);
		return NULL;
	}
	memcpy(e->addr, addr, len);
	e->addr_len = len;
	memcpy(padded, addr, len);
	memset(&params, 0, sizeof(params));
	params.field_mask =
		UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
	params.address = (const ucp_address_t *)padded;
	/*
	 * No error handling on the atomic endpoints, whatever UCX_TLS says: with UCX 1.22 over
	 * TCP, a second endpoint to the owner's export worker in peer mode (sdp_plugin_mem has
	 * the first) gets its connection reset by the owner and every atomic fails with
	 * NOT_CONNECTED (urom_rma_tcp, urom_ladder_tcp under the ucx122 step). The owner's export
	 * context runs without TCP keepalive (src/urom/host/export.c), which is what kept a
	 * failed endpoint there from aborting the owner when a link returned.
	 */
	params.err_mode = UCP_ERR_HANDLING_MODE_NONE;
	st = ucp_ep_create(rma->worker, &params, &e->ep);
	free(padded);
	if (st != UCS_OK) {
		DOCA_LOG_ERR("ucp_ep_create for atomics failed: %s", ucs_status_string(st));
		free(e->addr);
		free(e);
		return NULL;
	}
	ucs_list_add_tail(&rma->aeps, &e->link);
	return e;
}

static void akey_free(struct akey *k)
{
	ucs_list_del(&k->link);
	ucp_rkey_destroy(k->rkey);
	free(k->memh);
	free(k);
}

/* The remote key of the segment of dest holding va (the range is checked already). */
static doca_error_t akey_get(struct rma *rma, uint64_t dest, uint64_t va, struct akey **k_p)
{
	struct sdp_urom_memh m;
	struct akey *k, *tmp;
	void *memh = NULL;
	size_t memh_len = 0;
	uint8_t *padded;
	doca_error_t st;
	ucs_status_t us;
	int seg = -1;

	st = doca_urom_worker_domain_seg_lookup(rma->ctx, dest, va, &seg);
	if (st == DOCA_SUCCESS)
		st = doca_urom_worker_domain_memh_lookup(rma->ctx, dest, seg, &memh_len, &memh);
	if (st != DOCA_SUCCESS || memh == NULL) {
		DOCA_LOG_ERR("no memh of member %llu at 0x%llx", (unsigned long long)dest,
			     (unsigned long long)va);
		return st != DOCA_SUCCESS ? st : DOCA_ERROR_NOT_FOUND;
	}
	ucs_list_for_each_safe(k, tmp, &rma->akeys, link) {
		if (k->dest != dest || k->seg != seg)
			continue;
		if (k->memh_len == memh_len && memcmp(k->memh, memh, memh_len) == 0) {
			*k_p = k;
			return DOCA_SUCCESS;
		}
		akey_free(k); /* the member id was reused by a later domain */
	}
	st = sdp_urom_memh_unpack(memh, memh_len, &m);
	if (st != DOCA_SUCCESS) {
		DOCA_LOG_ERR("malformed memh of member %llu", (unsigned long long)dest);
		return DOCA_ERROR_INVALID_VALUE;
	}
	k = calloc(1, sizeof(*k));
	padded = calloc(1, m.rkey_len > RMA_RKEY_PAD ? m.rkey_len : RMA_RKEY_PAD);
	if (k == NULL || padded == NULL || (k->memh = malloc(memh_len)) == NULL) {
		DOCA_LOG_ERR("no memory for an atomic key");
		free(padded);
		free(k);
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(k->memh, memh, memh_len);
	memcpy(padded, m.rkey, m.rkey_len);
	k->memh_len = memh_len;
	k->dest = dest;
	k->seg = seg;
	k->ep = aep_get(rma, m.owner_addr, m.owner_addr_len);
	us = k->ep == NULL ? UCS_ERR_NO_MEMORY : ucp_ep_rkey_unpack(k->ep->ep, padded, &k->rkey);
	free(padded);
	if (us != UCS_OK) {
		DOCA_LOG_ERR("cannot unpack the remote key of member %llu for atomics: %s",
			     (unsigned long long)dest, ucs_status_string(us));
		free(k->memh);
		free(k);
		return DOCA_ERROR_DRIVER;
	}
	ucs_list_add_tail(&rma->akeys, &k->link);
	*k_p = k;
	return DOCA_SUCCESS;
}

static const ucp_atomic_op_t ucp_ops[] = {
	[UROM_RMA_ATOMIC_ADD] = UCP_ATOMIC_OP_ADD,   [UROM_RMA_ATOMIC_FADD] = UCP_ATOMIC_OP_ADD,
	[UROM_RMA_ATOMIC_SWAP] = UCP_ATOMIC_OP_SWAP, [UROM_RMA_ATOMIC_CSWAP] = UCP_ATOMIC_OP_CSWAP,
	[UROM_RMA_ATOMIC_AND] = UCP_ATOMIC_OP_AND,   [UROM_RMA_ATOMIC_OR] = UCP_ATOMIC_OP_OR,
	[UROM_RMA_ATOMIC_XOR] = UCP_ATOMIC_OP_XOR,   [UROM_RMA_ATOMIC_FAND] = UCP_ATOMIC_OP_AND,
	[UROM_RMA_ATOMIC_FOR] = UCP_ATOMIC_OP_OR,    [UROM_RMA_ATOMIC_FXOR] = UCP_ATOMIC_OP_XOR,
};

static doca_error_t atomic_start(struct job *j)
{
	const struct urom_worker_rma_cmd_atomic *a = &j->c.atomic;
	struct rma *rma = j->rma;
	ucp_request_param_t p;
	uint64_t region, swap_in;
	doca_error_t st;
	int fetch;

	if (a->op > UROM_RMA_ATOMIC_OP_MAX || (a->size != 4 && a->size != 8)) {
		DOCA_LOG_ERR("atomic op %llu of size %llu: unknown op or size not 4 / 8",
			     (unsigned long long)a->op, (unsigned long long)a->size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (a->remote_va % a->size != 0) {
		DOCA_LOG_ERR("atomic on 0x%llx: not aligned to its %llu bytes",
			     (unsigned long long)a->remote_va, (unsigned long long)a->size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	st = region_of(rma, a->dest, a->remote_va, a->size, &region);
	if (st == DOCA_SUCCESS)
		st = akey_get(rma, a->dest, a->remote_va, &j->key);
	if (st != DOCA_SUCCESS)
		return st;
	fetch = a->op != UROM_RMA_ATOMIC_ADD && a->op != UROM_RMA_ATOMIC_AND &&
		a->op != UROM_RMA_ATOMIC_OR && a->op != UROM_RMA_ATOMIC_XOR;
	/* UCX's CSWAP compares with buffer and swaps in what reply_buffer holds. */
	swap_in = a->op == UROM_RMA_ATOMIC_CSWAP ? a->operand : a->compare;
	if (a->size == 4) {
		j->operand.u32 =
			(uint32_t)(a->op == UROM_RMA_ATOMIC_CSWAP ? a->compare : a->operand);
		j->reply.u32 = (uint32_t)swap_in;
	} else {
		j->operand.u64 = a->op == UROM_RMA_ATOMIC_CSWAP ? a->compare : a->operand;
		j->reply.u64 = swap_in;
	}
	ucx_param(j, &p);
	p.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
	p.datatype = ucp_dt_make_contig(a->size);
	if (fetch) {
		p.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
		p.reply_buffer = &j->reply;
	}
	j->fetching = fetch;
	j->stage = 0;
	return ucx_issued(j,
			  ucp_atomic_op_nbx(j->key->ep->ep, ucp_ops[a->op], &j->operand, 1,
					    a->remote_va, j->key->rkey, &p),
			  "ucp_atomic_op_nbx");
}

/* ---- FENCE / FLUSH ---- */

static doca_error_t dest_known(struct rma *rma, uint64_t dest, const char *what)
{
	void *addr = NULL;
	doca_error_t st;

	if (dest == UROM_RMA_DEST_ALL)
		return DOCA_SUCCESS;
	st = doca_urom_worker_domain_addr_lookup(rma->ctx, dest, &addr);
	if (st != DOCA_SUCCESS) {
		DOCA_LOG_ERR("%s to member %llu: no such domain member (%s)", what,
			     (unsigned long long)dest, doca_error_get_name(st));
		return DOCA_ERROR_NOT_FOUND;
	}
	return DOCA_SUCCESS;
}

static doca_error_t sync_start(struct job *j)
{
	struct rma *rma = j->rma;
	ucp_request_param_t p;
	doca_error_t st;

	st = dest_known(rma, j->c.sync.dest,
			j->c.type == UROM_WORKER_CMD_RMA_FENCE ? "FENCE" : "FLUSH");
	if (st != DOCA_SUCCESS)
		return st;
	if (j->c.type == UROM_WORKER_CMD_RMA_FENCE) {
		ucs_status_t us = ucp_worker_fence(rma->worker);

		if (us != UCS_OK) {
			DOCA_LOG_ERR("ucp_worker_fence failed: %s", ucs_status_string(us));
			return ucs_to_doca(us);
		}
		job_finish(j);
		return DOCA_SUCCESS;
	}
	/* Whole worker: every endpoint, the transfers' and the atomics'. */
	ucx_param(j, &p);
	j->stage = 2;
	return ucx_issued(j, ucp_worker_flush_nbx(rma->worker, &p), "ucp_worker_flush_nbx");
}

/* A raw request finished: the next step of its job. */
static void ucx_step(struct job *j)
{
	ucp_request_param_t p;

	j->ucx_wait = 0;
	if (j->ucx_status != UCS_OK) {
		DOCA_LOG_ERR("%s failed: %s",
			     j->stage == 0 ? "atomic" :
			     j->stage == 3 ? "AM send" :
					     "flush",
			     ucs_status_string(j->ucx_status));
		j->status = ucs_to_doca(j->ucx_status);
		job_finish(j);
		return;
	}
	if (j->stage == 3) {
		job_finish(j); /* AM sent: UCX is done with its bytes */
		return;
	}
	if (j->stage == 0 && !j->rma->closing && !j->fetching) {
		/*
		 * A posted atomic: make it visible at the target before answering (a fetching
		 * one is: its reply came back from there).
		 */
		ucx_param(j, &p);
		j->stage = 1;
		j->status = ucx_issued(j, ucp_ep_flush_nbx(j->key->ep->ep, &p), "ucp_ep_flush_nbx");
		if (j->status == DOCA_SUCCESS)
			return;
	}
	job_finish(j);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- active messages ---- */

static size_t msg_size_get(void)
{
	const char *env = getenv(RMA_MSG_SIZE_ENV);
	unsigned long long v = RMA_DEFAULT_MSG_SIZE;
	char *end = NULL;

	if (env != NULL && *env != '\0') {
		v = strtoull(env, &end, 10);
		if (end == NULL || *end != '\0' || v < UROM_RMA_AM_OVERHEAD + UROM_RMA_AM_HDR_MAX ||
		    v > (1ull << 30)) {
			DOCA_LOG_WARN("%s=%s is not a usable message size, using %d",
				      RMA_MSG_SIZE_ENV, env, RMA_DEFAULT_MSG_SIZE);
			v = RMA_DEFAULT_MSG_SIZE;
		}
	}
	return (size_t)v;
}

/* Answer the AM_RECV cd (freed) with status and, when bytes != NULL, the message. */
static void am_recv_answer(struct rma *rma, struct urom_worker_cmd_desc *cd, doca_error_t status,
			   uint64_t handler, uint64_t sender, uint32_t hdr_len, uint32_t len,
			   const uint8_t *bytes, uint64_t dropped)
{
	struct urom_worker_notify_rma_am n;
	struct urom_worker_cmd_desc *c = cd;
	struct urom_worker_notif_desc *nd;
	size_t body = bytes != NULL ? (size_t)hdr_len + len : 0;
	uint64_t context = 0;

	if (c->worker_cmd.len >= offsetof(struct urom_worker_rma_cmd, am_recv) + sizeof(context))
		memcpy(&context,
		       c->worker_cmd.plugin_cmd + offsetof(struct urom_worker_rma_cmd, am_recv),
		       sizeof(context));
	memset(&n, 0, sizeof(n));
	n.base.type = UROM_WORKER_CMD_RMA_AM_RECV;
	n.base.context = context;
	n.base.status = status;
	n.base.len = bytes != NULL ? len : 0;
	n.handler = handler;
	n.sender = sender;
	n.hdr_len = bytes != NULL ? hdr_len : 0;
	n.dropped = dropped;
	nd = calloc(1, sizeof(*nd) + sizeof(n) + body);
	if (nd == NULL) {
		DOCA_LOG_ERR("no memory for an AM notification");
		free(cd);
		return;
	}
	nd->dest_id = cd->dest_id;
	nd->worker_notif.type = cd->worker_cmd.type;
	nd->worker_notif.urom_context = cd->worker_cmd.urom_context;
	nd->worker_notif.status = status;
	nd->worker_notif.len = sizeof(n) + body;
	memcpy(nd->worker_notif.plugin_notif, &n, sizeof(n));
	if (body != 0)
		memcpy(nd->worker_notif.plugin_notif + sizeof(n), bytes, body);
	ucs_list_add_tail(&rma->done, &nd->entry);
	free(cd);
}

static uint64_t recv_handler(const struct urom_worker_cmd_desc *cd)
{
	struct urom_worker_rma_cmd c;

	memcpy(&c, cd->worker_cmd.plugin_cmd, sizeof(c));
	return c.am_recv.handler;
}

/* One parsed AM: to the oldest receive that takes its handler, else queued (bounded). */
static void am_deliver(struct rma *rma, const struct urom_rma_am_wire *w, const uint8_t *bytes)
{
	struct urom_worker_cmd_desc *cd;
	size_t body = (size_t)w->hdr_len + w->len;
	struct arrival *a;

	ucs_list_for_each(cd, &rma->recvs, entry) {
		uint64_t h = recv_handler(cd);

		if (h == UROM_RMA_AM_ANY || h == w->handler) {
			ucs_list_del(&cd->entry);
			rma->nrecvs--;
			am_recv_answer(rma, cd, DOCA_SUCCESS, w->handler, w->sender, w->hdr_len,
				       w->len, bytes, 0);
			return;
		}
	}
	if (rma->narrivals >= UROM_RMA_AM_QUEUE_MAX ||
	    rma->arrival_bytes + body > UROM_RMA_AM_QUEUE_BYTES ||
	    (a = malloc(sizeof(*a) + body)) == NULL) {
		if (!rma->drop_logged)
			DOCA_LOG_ERR("AM for handler %u dropped: %zu AMs (%zu bytes) wait for a "
				     "receive already",
				     w->handler, rma->narrivals, rma->arrival_bytes);
		rma->drop_logged = 1;
		rma->dropped++;
		return;
	}
	a->handler = w->handler;
	a->sender = w->sender;
	a->hdr_len = w->hdr_len;
	a->len = w->len;
	memcpy(a->bytes, bytes, body);
	ucs_list_add_tail(&rma->arrivals, &a->link);
	rma->narrivals++;
	rma->arrival_bytes += body;
}

static ucs_status_t am_recv_cb(void *arg, const void *header, size_t header_length, void *data,
			       size_t length, const ucp_am_recv_param_t *param)
{
	struct rma *rma = arg;
	struct urom_rma_am_wire w;

	(void)header;
	if (rma->closing)
		return UCS_OK;
	if (header_length != 0 || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) ||
	    !urom_rma_am_wire_parse(data, length, rma->am_max, &w)) {
		if (!rma->drop_logged)
			DOCA_LOG_ERR("malformed AM of %zu bytes from a peer worker: dropped",
				     length);
		rma->drop_logged = 1;
		rma->dropped++;
		return UCS_OK;
	}
	am_deliver(rma, &w, (const uint8_t *)data + sizeof(w));
	return UCS_OK;
}

/* AM_RECV: report drops, take a queued AM, or post (bounded). */
static void am_recv_post(struct rma *rma, struct urom_worker_cmd_desc *cd)
{
	struct arrival *a;
	uint64_t h;

	if (cd->worker_cmd.len != sizeof(struct urom_worker_rma_cmd)) {
		DOCA_LOG_ERR("AM_RECV command of %llu bytes, expected %zu",
			     (unsigned long long)cd->worker_cmd.len,
			     sizeof(struct urom_worker_rma_cmd));
		am_recv_answer(rma, cd, DOCA_ERROR_INVALID_VALUE, 0, 0, 0, 0, NULL, 0);
		return;
	}
	h = recv_handler(cd);
	if (h != UROM_RMA_AM_ANY && h > UINT32_MAX) {
		DOCA_LOG_ERR("AM_RECV for handler %llu: handler ids are 32-bit",
			     (unsigned long long)h);
		am_recv_answer(rma, cd, DOCA_ERROR_INVALID_VALUE, 0, 0, 0, 0, NULL, 0);
		return;
	}
	if (rma->dropped != 0) {
		am_recv_answer(rma, cd, DOCA_ERROR_FULL, 0, 0, 0, 0, NULL, rma->dropped);
		rma->dropped = 0;
		rma->drop_logged = 0;
		return;
	}
	ucs_list_for_each(a, &rma->arrivals, link) {
		if (h == UROM_RMA_AM_ANY || h == a->handler) {
			ucs_list_del(&a->link);
			rma->narrivals--;
			rma->arrival_bytes -= (size_t)a->hdr_len + a->len;
			am_recv_answer(rma, cd, DOCA_SUCCESS, a->handler, a->sender, a->hdr_len,
				       a->len, a->bytes, 0);
			free(a);
			return;
		}
	}
	if (rma->nrecvs >= UROM_RMA_AM_RECV_MAX) {
		DOCA_LOG_ERR("AM_RECV: %d receives posted already", UROM_RMA_AM_RECV_MAX);
		am_recv_answer(rma, cd, DOCA_ERROR_FULL, 0, 0, 0, 0, NULL, 0);
		return;
	}
	ucs_list_add_tail(&rma->recvs, &cd->entry);
	rma->nrecvs++;
}

static doca_error_t am_send_start(struct job *j)
{
	const struct urom_worker_rma_cmd_am_send *a = &j->c.am_send;
	struct rma *rma = j->rma;
	struct urom_rma_am_wire w;
	ucp_request_param_t p;
	doca_error_t st;
	ucp_ep_h ep;
	size_t body;

	if (a->hdr_len > UROM_RMA_AM_HDR_MAX || a->handler > UINT32_MAX || a->len > rma->am_max ||
	    a->hdr_len + a->len > rma->am_max) {
		DOCA_LOG_ERR("AM of header %llu and payload %llu bytes for handler %llu: at most "
			     "%d + %zu in all, 32-bit handler",
			     (unsigned long long)a->hdr_len, (unsigned long long)a->len,
			     (unsigned long long)a->handler, UROM_RMA_AM_HDR_MAX, rma->am_max);
		return DOCA_ERROR_INVALID_VALUE;
	}
	body = (size_t)(a->hdr_len + a->len);
	if (j->cd->worker_cmd.len != sizeof(struct urom_worker_rma_cmd) + body) {
		DOCA_LOG_ERR("AM_SEND command of %llu bytes, expected %zu",
			     (unsigned long long)j->cd->worker_cmd.len,
			     sizeof(struct urom_worker_rma_cmd) + body);
		return DOCA_ERROR_INVALID_VALUE;
	}
	st = sdp_plugin_peer_ep(&rma->apeers, rma->ctx, a->dest, &ep);
	if (st != DOCA_SUCCESS)
		return st;
	j->bounce = malloc(sizeof(w) + body);
	if (j->bounce == NULL) {
		DOCA_LOG_ERR("no memory for an AM of %zu bytes", body);
		return DOCA_ERROR_NO_MEMORY;
	}
	w.magic = UROM_RMA_AM_MAGIC;
	w.handler = (uint32_t)a->handler;
	w.sender = a->local_id;
	w.hdr_len = (uint32_t)a->hdr_len;
	w.len = (uint32_t)a->len;
	memcpy(j->bounce, &w, sizeof(w));
	memcpy(j->bounce + sizeof(w), j->cd->worker_cmd.plugin_cmd + sizeof(j->c), body);
	ucx_param(j, &p);
	p.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
	p.flags = UCP_AM_SEND_FLAG_EAGER;
	j->stage = 3;
	return ucx_issued(
		j,
		ucp_am_send_nbx(ep, UROM_RMA_AM_UCP_ID, NULL, 0, j->bounce, sizeof(w) + body, &p),
		"ucp_am_send_nbx");
}

/* Close the AM endpoints (flushing what they still send), and drop what waits. */
static void am_close(struct rma *rma)
{
	sdp_plugin_peers_close(&rma->apeers, RMA_CLOSE_MS);
	while (!ucs_list_is_empty(&rma->recvs))
		free(ucs_list_extract_head(&rma->recvs, struct urom_worker_cmd_desc, entry));
	while (!ucs_list_is_empty(&rma->arrivals))
		free(ucs_list_extract_head(&rma->arrivals, struct arrival, link));
}

/* ---- the command queue ---- */

/*
 * A PUT / GET that moved nothing for UROM_RMA_STALL_MS: fail it with TIME_OUT and close the
 * endpoints it waits on by force; their callbacks finish the job from the next progress.
 */
static void xfer_stall_check(struct job *j)
{
	if (j->stall_at == 0 || j->stalled || j->finished || now_ms() < j->stall_at)
		return;
	j->stalled = 1;
	DOCA_LOG_ERR("%s of %llu bytes to member %llu: nothing moved for %d ms, giving up",
		     j->c.type == UROM_WORKER_CMD_RMA_PUT ? "PUT" : "GET",
		     (unsigned long long)j->len, (unsigned long long)j->c.xfer.dest,
		     UROM_RMA_STALL_MS);
	if (j->status == DOCA_SUCCESS)
		j->status = DOCA_ERROR_TIME_OUT;
	(void)sdp_plugin_mem_abort(j->rma->mem, j->dst_region);
	(void)sdp_plugin_mem_abort(j->rma->mem, j->src_region);
}

static void start_next(struct rma *rma)
{
	struct urom_worker_cmd_desc *cd;
	struct job *j;
	doca_error_t st;

	for (;;) {
		if (rma->job != NULL) {
			if (rma->job->ucx_wait && rma->job->ucx_done)
				ucx_step(rma->job);
			xfer_stall_check(rma->job);
			if (!rma->job->finished)
				return;
			job_free(rma->job);
			rma->job = NULL;
		}
		if (ucs_list_is_empty(&rma->queue) || rma->closing)
			return;
		cd = ucs_list_extract_head(&rma->queue, struct urom_worker_cmd_desc, entry);
		if (cd->worker_cmd.len < sizeof(struct urom_worker_rma_cmd) ||
		    (cd->worker_cmd.len != sizeof(struct urom_worker_rma_cmd) &&
		     *(const uint64_t *)cd->worker_cmd.plugin_cmd != UROM_WORKER_CMD_RMA_AM_SEND)) {
			DOCA_LOG_ERR("RMA command of %llu bytes, expected %zu",
				     (unsigned long long)cd->worker_cmd.len,
				     sizeof(struct urom_worker_rma_cmd));
			notify(rma, cd, UINT64_MAX, 0, DOCA_ERROR_INVALID_VALUE, 0, 0);
			free(cd);
			continue;
		}
		j = calloc(1, sizeof(*j));
		if (j == NULL) {
			DOCA_LOG_ERR("no memory for an RMA command");
			notify(rma, cd, UINT64_MAX, 0, DOCA_ERROR_NO_MEMORY, 0, 0);
			free(cd);
			continue;
		}
		j->rma = rma;
		j->cd = cd;
		memcpy(&j->c, cd->worker_cmd.plugin_cmd, sizeof(j->c));
		rma->job = j;
		switch (j->c.type) {
		case UROM_WORKER_CMD_RMA_PUT:
		case UROM_WORKER_CMD_RMA_GET:
			st = xfer_start(j);
			break;
		case UROM_WORKER_CMD_RMA_ATOMIC:
			st = atomic_start(j);
			break;
		case UROM_WORKER_CMD_RMA_FENCE:
		case UROM_WORKER_CMD_RMA_FLUSH:
			st = sync_start(j);
			break;
		case UROM_WORKER_CMD_RMA_AM_SEND:
			st = am_send_start(j);
			break;
		default:
			DOCA_LOG_ERR("unknown RMA command type %llu",
				     (unsigned long long)j->c.type);
			st = DOCA_ERROR_INVALID_VALUE;
			break;
		}
		if (st != DOCA_SUCCESS && !j->finished) {
			/* refused before anything was issued */
			j->status = st;
			job_finish(j);
		}
	}
}

/* ---- plugin ops ---- */

static doca_error_t rma_open(struct urom_worker_ctx *ctx)
{
	ucp_worker_params_t wp = {0};
	ucp_params_t params = {0};
	struct rma *rma = calloc(1, sizeof(*rma));

	if (rma == NULL)
		return DOCA_ERROR_NO_MEMORY;
	params.field_mask = UCP_PARAM_FIELD_FEATURES;
	params.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 | UCP_FEATURE_AM;
	sdp_plugin_mem_ucp_params(&params);
	if (ucp_init(&params, NULL, &rma->context) != UCS_OK)
		goto fail;
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SINGLE;
	if (ucp_worker_create(rma->context, &wp, &rma->worker) != UCS_OK)
		goto fail;
	if (sdp_plugin_mem_create(rma->worker, &rma->mem) != DOCA_SUCCESS)
		goto fail;
	if (ucp_worker_get_address(rma->worker, &rma->addr, &rma->addr_len) != UCS_OK)
		goto fail;
	if (sdp_ucx_am_handler(rma->worker, UROM_RMA_AM_UCP_ID, am_recv_cb, rma) != UCS_OK)
		goto fail;
	rma->am_max = msg_size_get() - UROM_RMA_AM_OVERHEAD;
	sdp_plugin_peers_init(&rma->apeers, rma->worker);
	ucs_list_head_init(&rma->recvs);
	ucs_list_head_init(&rma->arrivals);
	ucs_list_head_init(&rma->queue);
	ucs_list_head_init(&rma->done);
	ucs_list_head_init(&rma->aeps);
	ucs_list_head_init(&rma->akeys);
	rma->ctx = ctx;
	ctx->plugin_ctx = rma;
	return DOCA_SUCCESS;
fail:
	DOCA_LOG_ERR("cannot create the plugin's UCP context and worker");
	if (rma->mem != NULL)
		sdp_plugin_mem_destroy(rma->mem);
	if (rma->addr != NULL)
		ucp_worker_release_address(rma->worker, rma->addr);
	if (rma->worker != NULL)
		ucp_worker_destroy(rma->worker);
	if (rma->context != NULL)
		ucp_cleanup(rma->context);
	free(rma);
	return DOCA_ERROR_DRIVER;
}

/* Close the atomic endpoints, forced, progressing within a bound. */
static void aeps_close(struct rma *rma)
{
	ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
				 .flags = UCP_EP_CLOSE_FLAG_FORCE};
	struct aep *e;

	while (!ucs_list_is_empty(&rma->akeys))
		akey_free(ucs_list_head(&rma->akeys, struct akey, link));
	while (!ucs_list_is_empty(&rma->aeps)) {
		ucs_status_ptr_t req;
		int64_t deadline = now_ms() + RMA_CLOSE_MS;

		e = ucs_list_extract_head(&rma->aeps, struct aep, link);
		req = ucp_ep_close_nbx(e->ep, &p);
		if (UCS_PTR_IS_PTR(req)) {
			while (ucp_request_check_status(req) == UCS_INPROGRESS &&
			       now_ms() < deadline)
				ucp_worker_progress(rma->worker);
			ucp_request_free(req);
		}
		free(e->addr);
		free(e);
	}
}

static void rma_close(struct urom_worker_ctx *ctx)
{
	struct rma *rma = ctx->plugin_ctx;
	int64_t deadline;

	if (rma == NULL)
		return;
	rma->closing = 1;
	aeps_close(rma);
	am_close(rma);
	sdp_plugin_mem_destroy(rma->mem); /* runs the transfers' callbacks */
	deadline = now_ms() + RMA_CLOSE_MS;
	while (rma->job != NULL && rma->job->ucx_wait && !rma->job->ucx_done && now_ms() < deadline)
		ucp_worker_progress(rma->worker);
	if (rma->job != NULL && (!rma->job->ucx_wait || rma->job->ucx_done))
		job_free(rma->job);
	else if (rma->job != NULL)
		DOCA_LOG_WARN("a UCX request outlived the close: its command record is left");
	while (!ucs_list_is_empty(&rma->queue))
		free(ucs_list_extract_head(&rma->queue, struct urom_worker_cmd_desc, entry));
	while (!ucs_list_is_empty(&rma->done))
		free(ucs_list_extract_head(&rma->done, struct urom_worker_notif_desc, entry));
	ucp_worker_release_address(rma->worker, rma->addr);
	ucp_worker_destroy(rma->worker);
	ucp_cleanup(rma->context);
	free(rma);
	ctx->plugin_ctx = NULL;
}

static doca_error_t rma_addr(struct urom_worker_ctx *ctx, void *addr, size_t *addr_len)
{
	struct rma *rma = ctx->plugin_ctx;

	/* The AM peers connect to this worker; the RMA ops reach the owners' export workers. */
	if (addr == NULL || *addr_len < rma->addr_len) {
		*addr_len = rma->addr_len;
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(addr, rma->addr, rma->addr_len);
	*addr_len = rma->addr_len;
	return DOCA_SUCCESS;
}

static doca_error_t rma_worker_cmd(struct urom_worker_ctx *ctx, ucs_list_link_t *cmd_list)
{
	struct rma *rma = ctx->plugin_ctx;
	struct urom_worker_cmd_desc *cd, *tmp;

	/* AM_RECV waits for a message, not for the commands before it: posted at once. */
	ucs_list_for_each_safe(cd, tmp, cmd_list, entry) {
		uint64_t type;

		if (cd->worker_cmd.len < sizeof(type))
			continue;
		memcpy(&type, cd->worker_cmd.plugin_cmd, sizeof(type));
		if (type != UROM_WORKER_CMD_RMA_AM_RECV)
			continue;
		ucs_list_del(&cd->entry);
		am_recv_post(rma, cd);
	}
	ucs_list_splice_tail(&rma->queue, cmd_list);
	ucs_list_head_init(cmd_list);
	start_next(rma);
	return DOCA_SUCCESS;
}

static doca_error_t rma_progress(struct urom_worker_ctx *ctx, ucs_list_link_t *notif_list)
{
	struct rma *rma = ctx->plugin_ctx;
	int round;

	for (round = 0; round < RMA_PROGRESS_ROUNDS; round++) {
		int did = sdp_plugin_mem_progress(rma->mem);

		start_next(rma);
		if (did == 0)
			break;
	}
	return sdp_plugin_take_done(&rma->done, notif_list);
}

__attribute__((visibility("default"))) doca_error_t
softdpu_plugin_wakeup_fd(struct urom_worker_ctx *ctx, int *fd)
{
	struct rma *rma = ctx->plugin_ctx;

	return sdp_plugin_ucp_wakeup_fd(rma->worker, fd);
}

__attribute__((visibility("default"))) doca_error_t softdpu_plugin_arm(struct urom_worker_ctx *ctx)
{
	struct rma *rma = ctx->plugin_ctx;

	/* Work queued or in flight is not idle: keep the loop polling until it ends. */
	if (rma->job != NULL || !ucs_list_is_empty(&rma->queue) || !ucs_list_is_empty(&rma->done) ||
	    sdp_plugin_mem_inflight(rma->mem) != 0)
		return DOCA_ERROR_AGAIN;
	return sdp_plugin_ucp_arm(rma->worker);
}

__attribute__((visibility("default"))) doca_error_t
urom_plugin_get_iface(struct urom_plugin_iface *iface)
{
	struct urom_plugin_iface ops = {
		.open = rma_open,
		.close = rma_close,
		.addr = rma_addr,
		.worker_cmd = rma_worker_cmd,
		.progress = rma_progress,
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
	*version = UROM_WORKER_RMA_VERSION;
	return DOCA_SUCCESS;
}
