/*
 * worker_rdmo plugin, worker half: Remote Direct Memory Operations executed by the UROM worker
 * on a client's memory, on behalf of initiators the client admitted.
 *
 * Control plane (commands from the client host, urom_rdmo.h): CLIENT_INIT gives the plugin the
 * client's UCP worker address (the plugin makes an endpoint to it, to reach the client's
 * memory); MR_REG exposes [va, va + len) of that memory under a packed UCP remote key and
 * returns an rkey id; RQ_CREATE admits one initiator (its UCP worker address; the plugin makes
 * an endpoint to it) and returns an rq id. Every command gets exactly one notification.
 *
 * Data plane (active messages UROM_RDMO_AM_ID from initiators to this plugin's own UCP worker,
 * the one whose address CLIENT_INIT returns and the addr op hands out): APPEND, SCATTER and
 * FLUSH, parsed by sdp_rdmo_wire.c. The initiator sends them with
 * UCP_AM_SEND_FLAG_REPLY; UCX matches its endpoint with the one RQ_CREATE made (one pair of
 * endpoints per pair of workers), so the reply endpoint names the connection ("RQ") an
 * operation belongs to. Operations from any other endpoint are dropped. Per RQ, operations run
 * in arrival order, one at a time: each one's RMAs are issued and locally completed before the
 * next starts. A FENCE operation (and every FLUSH) first flushes the client endpoint
 * (ucp_ep_flush_nbx) so that everything earlier is in the client's memory; a FLUSH then
 * answers with its flush_id and the outcome of the operations since the previous answer
 * (struct sdp_rdmo_flush_status). Every RMA is checked against the MR_REG range of its rkey id
 * before anything is issued; an operation that fails a check moves no byte.
 *
 * UCP: two contexts with one worker each, "am" (AM only: initiators) and "rma" (RMA: clients'
 * memory); rdmo_ucx_init says why they are apart.
 *
 * Sleeping: the worker runtime cannot see this plugin's UCP workers, so the plugin exports
 * softdpu's optional wakeup entry points (softdpu/urom_plugin.h): softdpu_plugin_wakeup_fd
 * hands the runtime one epoll descriptor that holds both workers' wakeup fds, and
 * softdpu_plugin_arm arms them before the runtime sleeps. The runtime then calls the progress
 * op as soon as an initiator's message or a completion arrives; progress drives the data plane
 * (and returns the notifications of commands, which are answered at once). Every op runs on the
 * runtime's single loop thread: no lock. UCX callbacks only record what happened; progress acts
 * on it after ucp_worker_progress has returned.
 *
 * Transports: whatever UCX picks from the environment (UCX_TLS, UCX_NET_DEVICES): shared memory
 * or TCP on one host. Endpoints use no UCX error handling, which shared memory requires.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_urom_plugin.h>
#include <softdpu/urom_plugin.h>

#include "sdp_rdmo_wire.h"
#include "urom_rdmo.h"

DOCA_LOG_REGISTER(UROM::WORKER::RDMO);

#define RDMO_ADDR_MAX (64u << 10)     /* longest UCP worker address / packed key accepted */
#define RDMO_UCX_PAD 256	      /* zero bytes after a copy handed to UCX (see ucx_copy) */
#define RDMO_RQ_MAX_OPS 4096	      /* operations queued on one RQ */
#define RDMO_RQ_MAX_BYTES (16u << 20) /* payload bytes queued on one RQ */
#define RDMO_LOG_BUDGET 16	      /* refusals logged per RQ (and stray messages per worker) */
#define RDMO_PTR_CACHE_MAX 1024	      /* APPEND pointers cached per client */
#define RDMO_CLOSE_MS 2000	      /* plugin close: bound on draining UCX */
#define RDMO_PROGRESS_BURST 64
#define RDMO_PROGRESS_ROUNDS 16 /* bursts per progress call */

struct rdmo_worker;
struct rdmo_client;

/* One MR_REG: a range of the client's memory and the remote key that reaches it. */
struct rdmo_mr {
	ucs_list_link_t entry; /* in client->mrs */
	uint64_t id;	       /* rkey id */
	uint64_t va;
	uint64_t len;
	ucp_rkey_h rkey;
	unsigned int refs; /* operations whose RMAs use rkey */
	int dead;	   /* deregistered: invisible, freed when refs drops to 0 */
	/* MR_DEREG's answer, held back until the last RMA through rkey completed */
	struct urom_worker_notif_desc *dereg_notif;
	ucs_list_link_t *notif_list; /* where it goes then (the worker's completed list) */
};

/* The cached value of an APPEND pointer (client memory at addr, covered by rkey id mr_id). */
enum rdmo_ptr_state {
	PTR_UNREAD,  /* never read, or the read failed */
	PTR_READING, /* one APPEND is reading it; the others wait */
	PTR_VALID,   /* value is the pointer's current value */
};

struct rdmo_ptr {
	ucs_list_link_t entry; /* in client->ptrs */
	uint64_t mr_id;
	uint64_t addr;
	uint64_t value;
	enum rdmo_ptr_state state;
	int dead; /* its MR was deregistered while READING: the reader frees it */
};

/* A client: the host whose memory operations write (one per host connection, dest_id). */
struct rdmo_client {
	ucs_list_link_t entry; /* in w->clients */
	uint64_t id;	       /* CLIENT_INIT id, urom_rdmo_hdr.id */
	uint64_t dest_id;      /* the host connection that made it */
	ucp_ep_h ep;	       /* to the client's UCP worker */
	ucs_list_link_t mrs;
	ucs_list_link_t ptrs; /* oldest first */
	size_t num_ptrs;
};

/* An admitted initiator: its endpoint, its queue of operations, its failure count. */
struct rdmo_rq {
	ucs_list_link_t entry; /* in w->rqs */
	uint64_t id;
	struct rdmo_client *client; /* the client that created it: operations write its memory */
	ucp_ep_h ep;		    /* to the initiator; also the reply endpoint of its messages */
	uint8_t *addr;		    /* the initiator's address, to refuse a second RQ for it */
	size_t addr_len;
	ucs_list_link_t ops; /* arrival order; the head one runs */
	size_t queued_ops;
	size_t queued_bytes;
	int written;		  /* puts issued since the last flush of the client endpoint */
	uint64_t failed;	  /* operations failed since the last FLUSH answer */
	doca_error_t first_error; /* the first of them */
	unsigned int log_left;	  /* refusals still logged */
	int closing;		  /* RQ_DESTROY: no new operations, freed once empty */
};

enum rdmo_op_stage {
	ST_RECV,     /* rendezvous payload still arriving */
	ST_NEW,	     /* complete, not started */
	ST_BARRIER,  /* FENCE / FLUSH: waiting for the client endpoint's flush */
	ST_START,    /* to be started (an APPEND may wait here for its pointer) */
	ST_PTR_READ, /* APPEND: reading its pointer */
	ST_WAIT,     /* RMAs or the response in flight */
	ST_DONE,
};

struct rdmo_op {
	ucs_list_link_t entry; /* in rq->ops */
	struct rdmo_worker *w;
	struct rdmo_rq *rq;
	struct sdp_rdmo_req req;
	enum rdmo_op_stage stage;
	unsigned int inflight; /* UCX requests not completed */
	doca_error_t status;   /* first failure, else DOCA_SUCCESS */
	uint8_t *data;	       /* payload (data_len bytes) */
	size_t data_len;
	struct rdmo_mr **refs; /* MRs this operation holds */
	size_t num_refs;
	struct rdmo_ptr *ptr;	/* APPEND: its pointer */
	struct rdmo_mr *ptr_mr; /* APPEND: MRs of the pointer and of the data */
	struct rdmo_mr *data_mr;
	uint64_t ptr_read;  /* APPEND: the pointer as read */
	uint64_t ptr_write; /* APPEND: the pointer's new value */
	uint8_t rsp_hdr[SDP_RDMO_FLUSH_RSP_HDR_LEN];
	struct sdp_rdmo_flush_status rsp_status;
};

/* An endpoint being closed in the background. */
struct rdmo_closing {
	ucs_list_link_t entry;
	void *req;
};

struct rdmo_worker {
	int epfd;  /* both workers' wakeup fds: the runtime sleeps on it */
	int dirty; /* a callback changed something: run the queues again */
	/* Initiators: AM only (see rdmo_ucx_init); operations arrive here, answers leave here. */
	ucp_context_h am_ctx;
	ucp_worker_h am_worker;
	int am_efd;
	/* Clients' memory: RMA. */
	ucp_context_h rma_ctx;
	ucp_worker_h rma_worker;
	int rma_efd;
	void *addr; /* am_worker's UCP address, handed to initiators */
	size_t addr_len;
	ucs_list_link_t clients;
	ucs_list_link_t rqs;
	ucs_list_link_t closing;
	ucs_list_link_t completed; /* notifications for the next progress call */
	uint64_t next_rq_id;
	uint64_t next_mr_id;
	unsigned int stray_left; /* stray messages still logged */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* UCX status of a failed call → doca_error_t. */
static doca_error_t ucx_to_doca(ucs_status_t status)
{
	switch (status) {
	case UCS_OK:
		return DOCA_SUCCESS;
	case UCS_ERR_NO_MEMORY:
		return DOCA_ERROR_NO_MEMORY;
	default:
		return DOCA_ERROR_DRIVER;
	}
}

/*
 * A copy of bytes for UCX calls that take no length (ucp_ep_create's address, the packed key of
 * ucp_ep_rkey_unpack): zero-padded, so a truncated blob is not followed by whatever lies behind
 * it. The bytes come from an authenticated host; UCX 1.13 cannot be told their length.
 */
static void *ucx_copy(const void *src, size_t len)
{
	uint8_t *p = calloc(1, len + RDMO_UCX_PAD);

	if (p != NULL)
		memcpy(p, src, len);
	return p;
}

static doca_error_t ep_create(ucp_worker_h worker, const void *addr, size_t len, ucp_ep_h *ep_p)
{
	ucp_ep_params_t params;
	ucs_status_t status;
	void *copy;

	copy = ucx_copy(addr, len);
	if (copy == NULL) {
		DOCA_LOG_ERR("no memory for a %zu-byte worker address", len);
		return DOCA_ERROR_NO_MEMORY;
	}
	memset(&params, 0, sizeof(params));
	params.field_mask =
		UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
	params.address = copy;
	params.err_mode = UCP_ERR_HANDLING_MODE_NONE;
	status = ucp_ep_create(worker, &params, ep_p);
	free(copy);
	if (status != UCS_OK) {
		DOCA_LOG_ERR("ucp_ep_create to a %zu-byte worker address failed: %s", len,
			     ucs_status_string(status));
		return ucx_to_doca(status);
	}
	return DOCA_SUCCESS;
}

/* Close an endpoint; a close that needs progress finishes in the background. */
static void ep_close(struct rdmo_worker *w, ucp_ep_h ep, int force)
{
	ucp_request_param_t param;
	struct rdmo_closing *c;
	void *req;

	memset(&param, 0, sizeof(param));
	param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	param.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
	req = ucp_ep_close_nbx(ep, &param);
	if (req == NULL)
		return;
	if (UCS_PTR_IS_ERR(req)) {
		DOCA_LOG_DBG("closing an endpoint: %s", ucs_status_string(UCS_PTR_STATUS(req)));
		return;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		/* Nobody will free the request: UCX still completes it, worker destroy reclaims it. */
		DOCA_LOG_WARN("no memory to track an endpoint close");
		return;
	}
	c->req = req;
	ucs_list_add_tail(&w->closing, &c->entry);
	w->dirty = 1;
}

/* Free the background closes that finished. */
static void closing_reap(struct rdmo_worker *w)
{
	ucs_list_link_t *l, *next;
	struct rdmo_closing *c;

	for (l = w->closing.next; l != &w->closing; l = next) {
		next = l->next;
		c = ucs_container_of(l, struct rdmo_closing, entry);
		if (ucp_request_check_status(c->req) == UCS_INPROGRESS)
			continue;
		ucp_request_free(c->req);
		ucs_list_del(&c->entry);
		free(c);
	}
}

/* ---- lookups ----------------------------------------------------------------------------- */

static struct rdmo_client *client_of(ucs_list_link_t *l)
{
	return ucs_container_of(l, struct rdmo_client, entry);
}

static struct rdmo_rq *rq_of(ucs_list_link_t *l)
{
	return ucs_container_of(l, struct rdmo_rq, entry);
}

static struct rdmo_op *op_of(ucs_list_link_t *l)
{
	return ucs_container_of(l, struct rdmo_op, entry);
}

static struct rdmo_ptr *ptr_of(ucs_list_link_t *l)
{
	return ucs_container_of(l, struct rdmo_ptr, entry);
}

static void ptr_free(struct rdmo_client *c, struct rdmo_ptr *p)
{
	ucs_list_del(&p->entry);
	c->num_ptrs--;
	free(p);
}

static struct rdmo_client *client_by_dest(struct rdmo_worker *w, uint64_t dest_id)
{
	ucs_list_link_t *l;

	for (l = w->clients.next; l != &w->clients; l = l->next)
		if (client_of(l)->dest_id == dest_id)
			return client_of(l);
	return NULL;
}

static struct rdmo_client *client_by_id(struct rdmo_worker *w, uint64_t id)
{
	ucs_list_link_t *l;

	for (l = w->clients.next; l != &w->clients; l = l->next)
		if (client_of(l)->id == id)
			return client_of(l);
	return NULL;
}

static struct rdmo_rq *rq_by_ep(struct rdmo_worker *w, ucp_ep_h ep)
{
	ucs_list_link_t *l;

	for (l = w->rqs.next; l != &w->rqs; l = l->next)
		if (rq_of(l)->ep == ep)
			return rq_of(l);
	return NULL;
}

static struct rdmo_mr *mr_find(struct rdmo_client *c, uint64_t id)
{
	struct rdmo_mr *mr;
	ucs_list_link_t *l;

	for (l = c->mrs.next; l != &c->mrs; l = l->next) {
		mr = ucs_container_of(l, struct rdmo_mr, entry);
		if (mr->id == id && !mr->dead)
			return mr;
	}
	return NULL;
}

/* [addr, addr + len) lies inside mr's range (no overflow for any input). */
static int mr_covers(const struct rdmo_mr *mr, uint64_t addr, uint64_t len)
{
	return len <= mr->len && addr >= mr->va && addr - mr->va <= mr->len - len;
}

static void mr_free(struct rdmo_mr *mr)
{
	if (mr->dereg_notif != NULL)
		ucs_list_add_tail(mr->notif_list, &mr->dereg_notif->entry);
	ucs_list_del(&mr->entry);
	ucp_rkey_destroy(mr->rkey);
	free(mr);
}

static void mr_put(struct rdmo_mr *mr)
{
	if (--mr->refs == 0 && mr->dead)
		mr_free(mr);
}

/*
 * The cache entry of a pointer, made if needed. The cache is bounded: past RDMO_PTR_CACHE_MAX
 * the oldest entry not being read goes (its pointer is read from memory again when next used;
 * memory holds its value, every APPEND writes it back).
 */
static struct rdmo_ptr *ptr_get(struct rdmo_client *c, uint64_t mr_id, uint64_t addr)
{
	struct rdmo_ptr *p;
	ucs_list_link_t *l;

	for (l = c->ptrs.next; l != &c->ptrs; l = l->next) {
		p = ptr_of(l);
		if (p->mr_id == mr_id && p->addr == addr && !p->dead)
			return p;
	}
	if (c->num_ptrs >= RDMO_PTR_CACHE_MAX) {
		for (l = c->ptrs.next; l != &c->ptrs; l = l->next) {
			if (ptr_of(l)->state != PTR_READING) {
				ptr_free(c, ptr_of(l));
				break;
			}
		}
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->mr_id = mr_id;
	p->addr = addr;
	p->state = PTR_UNREAD;
	ucs_list_add_tail(&c->ptrs, &p->entry);
	c->num_ptrs++;
	return p;
}

/* ---- operations ---------------------------------------------------------------------------- */

static const char *op_name(uint32_t op_id)
{
	switch (op_id) {
	case UROM_RDMO_OP_FLUSH:
		return "FLUSH";
	case UROM_RDMO_OP_APPEND:
		return "APPEND";
	case UROM_RDMO_OP_SCATTER:
		return "SCATTER";
	default:
		return "operation";
	}
}

/* Record a refusal or failure of op (the first one counts), logged within the RQ's budget. */
static void op_fail(struct rdmo_op *op, doca_error_t status, const char *why)
{
	struct rdmo_rq *rq = op->rq;

	if (op->status == DOCA_SUCCESS)
		op->status = status;
	if (rq->log_left > 0) {
		rq->log_left--;
		DOCA_LOG_WARN("rq %lu: %s refused (%s): %s%s", (unsigned long)rq->id,
			      op_name(op->req.hdr.op_id), doca_error_get_name(status), why,
			      rq->log_left == 0 ? "; further refusals on this rq are only counted" :
						  "");
	}
}

static void op_req_done(void *request, ucs_status_t status, void *user_data)
{
	struct rdmo_op *op = user_data;

	if (status != UCS_OK && op->status == DOCA_SUCCESS)
		op->status = DOCA_ERROR_DRIVER;
	op->inflight--;
	op->w->dirty = 1;
	ucp_request_free(request);
}

static void op_recv_done(void *request, ucs_status_t status, size_t length, void *user_data)
{
	(void)length;
	op_req_done(request, status, user_data);
}

/* Account for the request a non-blocking UCX call returned. */
static void op_track(struct rdmo_op *op, ucs_status_ptr_t req, const char *what)
{
	char why[96];

	if (req == NULL)
		return; /* completed at once */
	if (UCS_PTR_IS_ERR(req)) {
		snprintf(why, sizeof(why), "%s failed: %s", what,
			 ucs_status_string(UCS_PTR_STATUS(req)));
		op_fail(op, DOCA_ERROR_DRIVER, why);
		return;
	}
	op->inflight++;
}

static void op_param(struct rdmo_op *op, ucp_request_param_t *param)
{
	memset(param, 0, sizeof(*param));
	param->op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	param->cb.send = op_req_done;
	param->user_data = op;
}

static void op_hold(struct rdmo_op *op, struct rdmo_mr *mr)
{
	mr->refs++;
	op->refs[op->num_refs++] = mr;
}

static void op_free(struct rdmo_op *op)
{
	size_t i;

	for (i = 0; i < op->num_refs; i++)
		mr_put(op->refs[i]);
	free(op->refs);
	free(op->data);
	free(op);
}

/*
 * An operation reached the head of its queue done: count its outcome (the next FLUSH answer
 * reports it; a FLUSH that answered has reported its own), free it.
 */
static void op_finish(struct rdmo_op *op)
{
	struct rdmo_rq *rq = op->rq;

	if (op->status != DOCA_SUCCESS && rq->failed++ == 0)
		rq->first_error = op->status;
	ucs_list_del(&op->entry);
	rq->queued_ops--;
	rq->queued_bytes -= op->data_len;
	op_free(op);
}

/* Flush the client endpoint: everything this RQ put so far lands in the client's memory. */
static void op_barrier(struct rdmo_op *op)
{
	ucp_request_param_t param;

	op_param(op, &param);
	op->rq->written = 0;
	op_track(op, ucp_ep_flush_nbx(op->rq->client->ep, &param), "ucp_ep_flush_nbx");
}

/* FLUSH: answer with the flush id and how the operations before it went. */
static void op_flush_answer(struct rdmo_op *op)
{
	struct rdmo_rq *rq = op->rq;
	ucp_request_param_t param;
	struct sdp_rdmo_rsp rsp;

	if (op->status != DOCA_SUCCESS && rq->failed++ == 0)
		rq->first_error = op->status; /* the barrier itself failed */
	memset(&rsp, 0, sizeof(rsp));
	rsp.hdr.rsp_id = UROM_RDMO_RSP_FLUSH;
	rsp.flush.flush_id = op->req.flush.flush_id;
	(void)sdp_rdmo_rsp_pack(&rsp, op->rsp_hdr, sizeof(op->rsp_hdr));
	op->rsp_status.status = (uint32_t)(rq->failed > 0 ? rq->first_error : DOCA_SUCCESS);
	op->rsp_status.reserved = 0;
	op->rsp_status.failed = rq->failed;
	DOCA_LOG_TRC("rq %lu: FLUSH %lu answered, %lu failed", (unsigned long)rq->id,
		     (unsigned long)rsp.flush.flush_id, (unsigned long)rq->failed);
	rq->failed = 0;
	rq->first_error = DOCA_SUCCESS;
	op->status = DOCA_SUCCESS;

	op_param(op, &param);
	param.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
	param.flags = UCP_AM_SEND_FLAG_EAGER;
	op_track(op,
		 ucp_am_send_nbx(rq->ep, UROM_RDMO_AM_ID, op->rsp_hdr, sizeof(op->rsp_hdr),
				 &op->rsp_status, sizeof(op->rsp_status), &param),
		 "ucp_am_send_nbx of a FLUSH answer");
	if (op->status != DOCA_SUCCESS)
		DOCA_LOG_WARN("rq %lu: FLUSH %lu answer not sent", (unsigned long)rq->id,
			      (unsigned long)rsp.flush.flush_id);
}

static void op_scatter_start(struct rdmo_op *op)
{
	struct rdmo_client *c = op->rq->client;
	struct sdp_rdmo_scatter_entry *e;
	ucp_request_param_t param;
	struct rdmo_mr **mrs;
	const char *why = NULL;
	uint64_t i, count = op->req.scatter.count;
	char msg[160];

	e = calloc(count, sizeof(*e));
	mrs = calloc(count, sizeof(*mrs));
	op->refs = calloc(count, sizeof(*op->refs));
	if (e == NULL || mrs == NULL || op->refs == NULL) {
		op_fail(op, DOCA_ERROR_NO_MEMORY, "no memory for its entries");
		goto out;
	}
	if (sdp_rdmo_scatter_parse(op->data, op->data_len, count, e, &why) != DOCA_SUCCESS) {
		op_fail(op, DOCA_ERROR_INVALID_VALUE, why);
		goto out;
	}

	/* Every entry is checked before the first put: a refused SCATTER moves nothing. */
	for (i = 0; i < count; i++) {
		mrs[i] = mr_find(c, e[i].rkey);
		if (mrs[i] == NULL) {
			snprintf(msg, sizeof(msg), "entry %lu names rkey id %lu, not registered",
				 (unsigned long)i, (unsigned long)e[i].rkey);
			op_fail(op, DOCA_ERROR_NOT_FOUND, msg);
			goto out;
		}
		if (!mr_covers(mrs[i], e[i].addr, e[i].len)) {
			snprintf(msg, sizeof(msg),
				 "entry %lu: %u bytes at %#lx outside rkey id %lu [%#lx, +%lu)",
				 (unsigned long)i, e[i].len, (unsigned long)e[i].addr,
				 (unsigned long)e[i].rkey, (unsigned long)mrs[i]->va,
				 (unsigned long)mrs[i]->len);
			op_fail(op, DOCA_ERROR_NOT_PERMITTED, msg);
			goto out;
		}
	}

	for (i = 0; i < count && op->status == DOCA_SUCCESS; i++) {
		op_hold(op, mrs[i]);
		op_param(op, &param);
		op_track(op,
			 ucp_put_nbx(c->ep, e[i].data, e[i].len, e[i].addr, mrs[i]->rkey, &param),
			 "ucp_put_nbx");
		op->rq->written = 1;
	}
out:
	free(mrs);
	free(e);
	op->stage = ST_WAIT;
}

/* APPEND with the pointer's value known: put the data there, then the advanced pointer. */
static void op_append_put(struct rdmo_op *op)
{
	struct rdmo_client *c = op->rq->client;
	struct rdmo_ptr *p = op->ptr;
	uint64_t at = p->value, len = op->data_len;
	ucp_request_param_t param;
	ucs_status_t status;
	char msg[160];

	op->stage = ST_WAIT;
	if (at > UINT64_MAX - len || !mr_covers(op->data_mr, at, len)) {
		snprintf(msg, sizeof(msg),
			 "%lu bytes at pointer value %#lx outside rkey id %lu [%#lx, +%lu)",
			 (unsigned long)len, (unsigned long)at, (unsigned long)op->data_mr->id,
			 (unsigned long)op->data_mr->va, (unsigned long)op->data_mr->len);
		op_fail(op, DOCA_ERROR_NOT_PERMITTED, msg);
		return;
	}

	op_param(op, &param);
	op_track(op, ucp_put_nbx(c->ep, op->data, len, at, op->data_mr->rkey, &param),
		 "ucp_put_nbx of the data");
	if (op->status != DOCA_SUCCESS)
		return; /* nothing left: the pointer keeps its value */
	op->rq->written = 1;
	p->value = at + len;
	op->ptr_write = p->value;

	/* The pointer must not become visible before the data it covers. */
	status = ucp_worker_fence(op->w->rma_worker);
	if (status != UCS_OK) {
		op_fail(op, DOCA_ERROR_DRIVER, "ucp_worker_fence failed");
		return;
	}
	op_param(op, &param);
	op_track(op,
		 ucp_put_nbx(c->ep, &op->ptr_write, sizeof(op->ptr_write), p->addr,
			     op->ptr_mr->rkey, &param),
		 "ucp_put_nbx of the pointer");
}

/* APPEND's pointer read finished (successfully or not). */
static void op_append_read_done(struct rdmo_op *op)
{
	struct rdmo_ptr *p = op->ptr;

	if (p->dead) {
		ptr_free(op->rq->client, p);
		op->ptr = NULL;
		op_fail(op, DOCA_ERROR_NOT_FOUND, "its pointer's rkey id was deregistered");
		op->stage = ST_DONE;
		return;
	}
	if (op->status != DOCA_SUCCESS) {
		p->state = PTR_UNREAD; /* the next APPEND tries again */
		op->stage = ST_DONE;
		return;
	}
	if (op->data_mr->dead || op->ptr_mr->dead) {
		/* deregistered while the pointer was read: nothing may land there any more */
		p->state = PTR_UNREAD;
		op_fail(op, DOCA_ERROR_NOT_FOUND, "its rkey id was deregistered meanwhile");
		op->stage = ST_DONE;
		return;
	}
	p->value = op->ptr_read;
	p->state = PTR_VALID;
	op_append_put(op);
}

/* Start an APPEND; it stays in ST_START while another operation reads its pointer. */
static void op_append_start(struct rdmo_op *op)
{
	const struct urom_rdmo_append_hdr *a = &op->req.append;
	struct rdmo_client *c = op->rq->client;
	ucp_request_param_t param;
	struct rdmo_mr *ptr_mr, *data_mr;
	struct rdmo_ptr *p;
	char msg[160];

	op->stage = ST_DONE;
	ptr_mr = mr_find(c, a->ptr_rkey);
	data_mr = mr_find(c, a->data_rkey);
	if (ptr_mr == NULL || data_mr == NULL) {
		snprintf(msg, sizeof(msg), "rkey id %lu not registered",
			 (unsigned long)(ptr_mr == NULL ? a->ptr_rkey : a->data_rkey));
		op_fail(op, DOCA_ERROR_NOT_FOUND, msg);
		return;
	}
	if (!mr_covers(ptr_mr, a->ptr_addr, sizeof(uint64_t))) {
		snprintf(msg, sizeof(msg), "pointer at %#lx outside rkey id %lu [%#lx, +%lu)",
			 (unsigned long)a->ptr_addr, (unsigned long)ptr_mr->id,
			 (unsigned long)ptr_mr->va, (unsigned long)ptr_mr->len);
		op_fail(op, DOCA_ERROR_NOT_PERMITTED, msg);
		return;
	}
	p = ptr_get(c, ptr_mr->id, a->ptr_addr);
	if (p == NULL) {
		op_fail(op, DOCA_ERROR_NO_MEMORY, "no memory for its pointer");
		return;
	}
	if (p->state == PTR_READING) {
		op->stage = ST_START; /* wait for the reader */
		return;
	}

	op->refs = calloc(2, sizeof(*op->refs));
	if (op->refs == NULL) {
		op_fail(op, DOCA_ERROR_NO_MEMORY, "no memory");
		return;
	}
	op_hold(op, ptr_mr);
	op_hold(op, data_mr);
	op->ptr = p;
	op->ptr_mr = ptr_mr;
	op->data_mr = data_mr;
	if (p->state == PTR_VALID) {
		op_append_put(op); /* the cached value: no read */
		return;
	}

	p->state = PTR_READING;
	op->stage = ST_PTR_READ;
	op_param(op, &param);
	op_track(op,
		 ucp_get_nbx(c->ep, &op->ptr_read, sizeof(op->ptr_read), a->ptr_addr, ptr_mr->rkey,
			     &param),
		 "ucp_get_nbx of the pointer");
	if (op->inflight == 0)
		op_append_read_done(op);
}

static void op_start(struct rdmo_op *op)
{
	struct rdmo_rq *rq = op->rq;
	char msg[96];

	if (op->req.hdr.id != rq->client->id) {
		snprintf(msg, sizeof(msg), "names client %lu, this rq belongs to client %lu",
			 (unsigned long)op->req.hdr.id, (unsigned long)rq->client->id);
		op_fail(op, DOCA_ERROR_NOT_PERMITTED, msg);
		/* A FLUSH still answers, counting its own refusal in what it reports. */
		if (op->req.hdr.op_id != UROM_RDMO_OP_FLUSH) {
			op->stage = ST_DONE;
			return;
		}
	}

	switch (op->req.hdr.op_id) {
	case UROM_RDMO_OP_FLUSH:
		op->stage = ST_WAIT;
		op_flush_answer(op);
		break;
	case UROM_RDMO_OP_APPEND:
		op_append_start(op);
		break;
	default:
		op_scatter_start(op);
		break;
	}
}

/* Advance op as far as it goes now; nonzero once it is done. */
static int op_step(struct rdmo_op *op)
{
	for (;;) {
		switch (op->stage) {
		case ST_RECV:
			if (op->inflight > 0)
				return 0;
			op->stage = op->status == DOCA_SUCCESS ? ST_NEW : ST_DONE;
			break;
		case ST_NEW:
			op->stage = ST_START;
			if (op->req.hdr.op_id == UROM_RDMO_OP_FLUSH ||
			    (op->req.hdr.flags & UROM_RDMO_REQ_FLAG_FENCE)) {
				op->stage = ST_BARRIER;
				if (op->rq->written)
					op_barrier(op);
			}
			break;
		case ST_BARRIER:
			if (op->inflight > 0)
				return 0;
			/* A FLUSH still answers (reporting the failure); a FENCE op does not run. */
			op->stage = op->status == DOCA_SUCCESS ||
						    op->req.hdr.op_id == UROM_RDMO_OP_FLUSH ?
					    ST_START :
					    ST_DONE;
			break;
		case ST_START:
			op_start(op);
			if (op->stage == ST_START)
				return 0; /* waiting for another operation's pointer read */
			break;
		case ST_PTR_READ:
			if (op->inflight > 0)
				return 0;
			op_append_read_done(op);
			break;
		case ST_WAIT:
			if (op->inflight > 0)
				return 0;
			op->stage = ST_DONE;
			break;
		case ST_DONE:
			return 1;
		}
	}
}

static void rq_free(struct rdmo_worker *w, struct rdmo_rq *rq)
{
	DOCA_LOG_DBG("rq %lu freed", (unsigned long)rq->id);
	ucs_list_del(&rq->entry);
	/* Forced: a graceful close would wait forever for an initiator that went away. */
	ep_close(w, rq->ep, 1);
	free(rq->addr);
	free(rq);
}

/* Drop every operation of a closing RQ that has not started; free the RQ once it is empty. */
static void rq_drain_closing(struct rdmo_worker *w, struct rdmo_rq *rq)
{
	ucs_list_link_t *l, *next;
	struct rdmo_op *op;

	for (l = rq->ops.next; l != &rq->ops; l = next) {
		next = l->next;
		op = op_of(l);
		if (op->inflight > 0)
			continue; /* UCX still holds it: freed when it completes */
		if (op->stage == ST_PTR_READ && op->ptr != NULL) {
			/* Its read ended: leave the pointer for others, without writing. */
			if (op->ptr->dead)
				ptr_free(rq->client, op->ptr);
			else
				op->ptr->state = PTR_UNREAD;
		}
		ucs_list_del(&op->entry);
		rq->queued_ops--;
		rq->queued_bytes -= op->data_len;
		op_free(op);
	}
	if (ucs_list_is_empty(&rq->ops))
		rq_free(w, rq);
}

/* Run every RQ's head operations as far as they go. */
static void rdmo_run(struct rdmo_worker *w)
{
	ucs_list_link_t *l, *next;
	struct rdmo_rq *rq;
	struct rdmo_op *op;
	int again;

	do {
		again = 0;
		for (l = w->rqs.next; l != &w->rqs; l = next) {
			next = l->next;
			rq = rq_of(l);
			if (rq->closing) {
				rq_drain_closing(w, rq);
				continue;
			}
			while (!ucs_list_is_empty(&rq->ops)) {
				op = ucs_list_head(&rq->ops, struct rdmo_op, entry);
				if (!op_step(op))
					break;
				op_finish(op);
				again = 1; /* a pointer may have become free for another RQ */
			}
		}
	} while (again);
	closing_reap(w);
}

/* ---- active messages from initiators ------------------------------------------------------- */

static ucs_status_t rdmo_am_cb(void *arg, const void *header, size_t header_length, void *data,
			       size_t length, const ucp_am_recv_param_t *param)
{
	int rndv = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
	ucs_status_t reject = rndv ? UCS_ERR_REJECTED : UCS_OK;
	struct rdmo_worker *w = arg;
	ucp_request_param_t rparam;
	struct rdmo_rq *rq = NULL;
	const char *why = NULL;
	struct rdmo_op *op;
	ucs_status_ptr_t req;

	if (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP)
		rq = rq_by_ep(w, param->reply_ep);
	if (rq == NULL || rq->closing) {
		if (w->stray_left > 0) {
			w->stray_left--;
			DOCA_LOG_WARN(
				"dropping a %zu-byte operation from an endpoint no rq was created "
				"for%s",
				length,
				w->stray_left == 0 ? "; further ones are dropped silently" : "");
		}
		return reject;
	}

	w->dirty = 1;
	/* Beyond the queue's bounds nothing is allocated: the refusal is counted at once. */
	if (rq->queued_ops >= RDMO_RQ_MAX_OPS || length > RDMO_RQ_MAX_BYTES - rq->queued_bytes) {
		if (rq->failed++ == 0)
			rq->first_error = DOCA_ERROR_FULL;
		if (rq->log_left > 0) {
			rq->log_left--;
			DOCA_LOG_WARN("rq %lu: %zu-byte operation refused: %zu operations of %zu "
				      "bytes queued",
				      (unsigned long)rq->id, length, rq->queued_ops,
				      rq->queued_bytes);
		}
		return reject;
	}
	op = calloc(1, sizeof(*op));
	if (op == NULL) {
		DOCA_LOG_ERR("rq %lu: no memory for an operation, dropped", (unsigned long)rq->id);
		if (rq->failed++ == 0)
			rq->first_error = DOCA_ERROR_NO_MEMORY;
		return reject;
	}
	op->w = w;
	op->rq = rq;
	op->status = DOCA_SUCCESS;
	op->stage = ST_DONE; /* unless it turns out well-formed */
	ucs_list_add_tail(&rq->ops, &op->entry);
	rq->queued_ops++;

	/* Refused operations are queued too, so they are counted in order, by the right FLUSH. */
	if (sdp_rdmo_req_parse(header, header_length, length, &op->req, &why) != DOCA_SUCCESS) {
		op->req.hdr.op_id = UINT32_MAX;
		op_fail(op, DOCA_ERROR_INVALID_VALUE, why);
		return reject;
	}
	if (length == 0) {
		op->stage = ST_NEW;
		return UCS_OK;
	}
	op->data = malloc(length);
	if (op->data == NULL) {
		op_fail(op, DOCA_ERROR_NO_MEMORY, "no memory for its payload");
		return reject;
	}
	op->data_len = length;
	rq->queued_bytes += length;

	if (!rndv) {
		memcpy(op->data, data, length);
		op->stage = ST_NEW;
		return UCS_OK;
	}

	memset(&rparam, 0, sizeof(rparam));
	rparam.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	rparam.cb.recv_am = op_recv_done;
	rparam.user_data = op;
	op->stage = ST_RECV;
	req = ucp_am_recv_data_nbx(w->am_worker, data, op->data, length, &rparam);
	op_track(op, req, "ucp_am_recv_data_nbx");
	return UCS_OK;
}

/* ---- progress ----------------------------------------------------------------------------- */

/* Progress both UCP workers (a bounded burst each); nonzero if anything happened. */
static int rdmo_progress_workers(struct rdmo_worker *w)
{
	int k, busy = 0;

	for (k = 0; k < RDMO_PROGRESS_BURST; k++) {
		if (ucp_worker_progress(w->am_worker) == 0)
			break;
		busy = 1;
	}
	for (k = 0; k < RDMO_PROGRESS_BURST; k++) {
		if (ucp_worker_progress(w->rma_worker) == 0)
			break;
		busy = 1;
	}
	return busy;
}

/* ---- notifications ------------------------------------------------------------------------- */

/*
 * Queue the one notification answering cmd_desc. payload NULL sends the header alone (a command
 * too short to have a type); inline_data (inline_len bytes) follows the payload, and the
 * payload's addr field is pointed at it.
 */
static struct urom_worker_notif_desc *
rdmo_notif_build(const struct urom_worker_cmd_desc *cmd_desc, doca_error_t status,
		 const struct urom_worker_notify_rdmo *payload, const void *inline_data,
		 size_t inline_len);

static doca_error_t rdmo_notify(struct rdmo_worker *w, const struct urom_worker_cmd_desc *cmd_desc,
				doca_error_t status, const struct urom_worker_notify_rdmo *payload,
				const void *inline_data, size_t inline_len)
{
	struct urom_worker_notif_desc *desc =
		rdmo_notif_build(cmd_desc, status, payload, inline_data, inline_len);

	if (desc == NULL)
		return DOCA_ERROR_NO_MEMORY;
	ucs_list_add_tail(&w->completed, &desc->entry);
	return DOCA_SUCCESS;
}

/* One notification answering cmd_desc, not queued yet (NULL when out of memory, logged). */
static struct urom_worker_notif_desc *
rdmo_notif_build(const struct urom_worker_cmd_desc *cmd_desc, doca_error_t status,
		 const struct urom_worker_notify_rdmo *payload, const void *inline_data,
		 size_t inline_len)
{
	size_t payload_len = payload != NULL ? sizeof(*payload) + inline_len : 0;
	struct urom_worker_notify_rdmo *n;
	struct urom_worker_notif_desc *desc;

	desc = calloc(1, sizeof(*desc) + payload_len);
	if (desc == NULL) {
		DOCA_LOG_ERR("failed to allocate a notification of %zu bytes",
			     sizeof(*desc) + payload_len);
		return NULL;
	}
	desc->dest_id = cmd_desc->dest_id;
	desc->worker_notif.type = cmd_desc->worker_cmd.type;
	desc->worker_notif.urom_context = cmd_desc->worker_cmd.urom_context;
	desc->worker_notif.len = payload_len;
	desc->worker_notif.status = status;
	if (payload != NULL) {
		n = (struct urom_worker_notify_rdmo *)desc->worker_notif.plugin_notif;
		memcpy(n, payload, sizeof(*payload));
		if (inline_len > 0) {
			memcpy(n + 1, inline_data, inline_len);
			n->client_init.addr = n + 1;
			n->client_init.addr_len = inline_len;
		}
	}
	return desc;
}

/* ---- commands ------------------------------------------------------------------------------ */

static doca_error_t cmd_client_init(struct rdmo_worker *w, uint64_t dest_id,
				    const struct urom_worker_rdmo_cmd_client_init *ci)
{
	struct rdmo_client *c;
	doca_error_t status;

	if (client_by_dest(w, dest_id) != NULL) {
		DOCA_LOG_ERR("CLIENT_INIT: host connection %lu already has a client",
			     (unsigned long)dest_id);
		return DOCA_ERROR_ALREADY_EXIST;
	}
	if (client_by_id(w, ci->id) != NULL) {
		DOCA_LOG_ERR("CLIENT_INIT: client id %lu exists", (unsigned long)ci->id);
		return DOCA_ERROR_ALREADY_EXIST;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		DOCA_LOG_ERR("CLIENT_INIT: no memory for a client");
		return DOCA_ERROR_NO_MEMORY;
	}
	status = ep_create(w->rma_worker, ci->addr, ci->addr_len, &c->ep);
	if (status != DOCA_SUCCESS) {
		free(c);
		return status;
	}
	c->id = ci->id;
	c->dest_id = dest_id;
	ucs_list_head_init(&c->mrs);
	ucs_list_head_init(&c->ptrs);
	ucs_list_add_tail(&w->clients, &c->entry);
	DOCA_LOG_DBG("client %lu (host connection %lu) initialised", (unsigned long)c->id,
		     (unsigned long)dest_id);
	return DOCA_SUCCESS;
}

static doca_error_t cmd_rq_create(struct rdmo_worker *w, struct rdmo_client *c,
				  const struct urom_worker_rdmo_cmd_rq_create *rc,
				  uint64_t *rq_id_p)
{
	struct rdmo_rq *rq;
	ucs_list_link_t *l;
	doca_error_t status;

	for (l = w->rqs.next; l != &w->rqs; l = l->next) {
		rq = rq_of(l);
		if (!rq->closing && rq->addr_len == rc->addr_len &&
		    memcmp(rq->addr, rc->addr, rc->addr_len) == 0) {
			DOCA_LOG_ERR("RQ_CREATE: rq %lu already serves that initiator",
				     (unsigned long)rq->id);
			return DOCA_ERROR_ALREADY_EXIST;
		}
	}
	rq = calloc(1, sizeof(*rq));
	if (rq == NULL || (rq->addr = malloc(rc->addr_len)) == NULL) {
		DOCA_LOG_ERR("RQ_CREATE: no memory for an rq");
		free(rq);
		return DOCA_ERROR_NO_MEMORY;
	}
	status = ep_create(w->am_worker, rc->addr, rc->addr_len, &rq->ep);
	if (status != DOCA_SUCCESS) {
		free(rq->addr);
		free(rq);
		return status;
	}
	memcpy(rq->addr, rc->addr, rc->addr_len);
	rq->addr_len = rc->addr_len;
	rq->id = ++w->next_rq_id;
	rq->client = c;
	rq->first_error = DOCA_SUCCESS;
	rq->log_left = RDMO_LOG_BUDGET;
	ucs_list_head_init(&rq->ops);
	ucs_list_add_tail(&w->rqs, &rq->entry);
	DOCA_LOG_DBG("rq %lu created for client %lu", (unsigned long)rq->id, (unsigned long)c->id);
	*rq_id_p = rq->id;
	return DOCA_SUCCESS;
}

static doca_error_t cmd_rq_destroy(struct rdmo_worker *w, struct rdmo_client *c, uint64_t rq_id)
{
	struct rdmo_rq *rq;
	ucs_list_link_t *l;

	for (l = w->rqs.next; l != &w->rqs; l = l->next) {
		rq = rq_of(l);
		if (rq->id == rq_id && rq->client == c && !rq->closing) {
			rq->closing = 1;
			rq_drain_closing(w, rq);
			return DOCA_SUCCESS;
		}
	}
	DOCA_LOG_ERR("RQ_DESTROY: client %lu has no rq %lu", (unsigned long)c->id,
		     (unsigned long)rq_id);
	return DOCA_ERROR_NOT_FOUND;
}

static doca_error_t cmd_mr_reg(struct rdmo_worker *w, struct rdmo_client *c,
			       const struct urom_worker_rdmo_cmd_mr_reg *mr_cmd, uint64_t *id_p)
{
	struct rdmo_mr *mr;
	ucs_status_t status;
	void *copy;

	if (mr_cmd->len == 0 || mr_cmd->va > UINT64_MAX - mr_cmd->len) {
		DOCA_LOG_ERR("MR_REG: range [%#lx, +%lu) is empty or wraps",
			     (unsigned long)mr_cmd->va, (unsigned long)mr_cmd->len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	mr = calloc(1, sizeof(*mr));
	copy = ucx_copy(mr_cmd->packed_rkey, mr_cmd->packed_rkey_len);
	if (mr == NULL || copy == NULL) {
		DOCA_LOG_ERR("MR_REG: no memory");
		free(copy);
		free(mr);
		return DOCA_ERROR_NO_MEMORY;
	}
	status = ucp_ep_rkey_unpack(c->ep, copy, &mr->rkey);
	free(copy);
	if (status != UCS_OK) {
		DOCA_LOG_ERR("MR_REG: ucp_ep_rkey_unpack of %lu bytes failed: %s",
			     (unsigned long)mr_cmd->packed_rkey_len, ucs_status_string(status));
		free(mr);
		return ucx_to_doca(status);
	}
	mr->id = ++w->next_mr_id;
	mr->va = mr_cmd->va;
	mr->len = mr_cmd->len;
	ucs_list_add_tail(&c->mrs, &mr->entry);
	DOCA_LOG_DBG("client %lu: rkey id %lu covers [%#lx, +%lu)", (unsigned long)c->id,
		     (unsigned long)mr->id, (unsigned long)mr->va, (unsigned long)mr->len);
	*id_p = mr->id;
	return DOCA_SUCCESS;
}

static doca_error_t cmd_mr_dereg(struct rdmo_client *c, uint64_t id)
{
	struct rdmo_mr *mr = mr_find(c, id);
	ucs_list_link_t *l, *next;
	struct rdmo_ptr *p;

	if (mr == NULL) {
		DOCA_LOG_ERR("MR_DEREG: client %lu has no rkey id %lu", (unsigned long)c->id,
			     (unsigned long)id);
		return DOCA_ERROR_NOT_FOUND;
	}
	/* Cached pointers inside it go too; one being read is freed by its reader. */
	for (l = c->ptrs.next; l != &c->ptrs; l = next) {
		next = l->next;
		p = ptr_of(l);
		if (p->mr_id != id)
			continue;
		if (p->state == PTR_READING)
			p->dead = 1;
		else
			ptr_free(c, p);
	}
	mr->dead = 1;
	if (mr->refs == 0)
		mr_free(mr);
	DOCA_LOG_DBG("client %lu: rkey id %lu deregistered", (unsigned long)c->id,
		     (unsigned long)id);
	return DOCA_SUCCESS;
}

/*
 * Check the command's length against its inline data and point the inline pointers at it:
 * len must be exactly sizeof(struct urom_worker_rdmo_cmd) + the inline lengths it declares.
 */
static doca_error_t cmd_unpack(const struct urom_worker_cmd *cmd, struct urom_worker_rdmo_cmd *rc)
{
	const uint8_t *inl = cmd->plugin_cmd + sizeof(*rc);
	uint64_t have = cmd->len - sizeof(*rc), want = 0;

	switch (rc->type) {
	case UROM_WORKER_CMD_RDMO_CLIENT_INIT:
	case UROM_WORKER_CMD_RDMO_RQ_CREATE:
		want = rc->type == UROM_WORKER_CMD_RDMO_CLIENT_INIT ? rc->client_init.addr_len :
								      rc->rq_create.addr_len;
		if (want == 0 || want > RDMO_ADDR_MAX) {
			DOCA_LOG_ERR("command %lu: worker address of %lu bytes (1 to %u accepted)",
				     (unsigned long)rc->type, (unsigned long)want, RDMO_ADDR_MAX);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (rc->type == UROM_WORKER_CMD_RDMO_CLIENT_INIT)
			rc->client_init.addr = (void *)inl;
		else
			rc->rq_create.addr = (void *)inl;
		break;
	case UROM_WORKER_CMD_RDMO_MR_REG:
		if (rc->mr_reg.packed_rkey_len == 0 || rc->mr_reg.packed_rkey_len > RDMO_ADDR_MAX ||
		    rc->mr_reg.packed_memh_len > RDMO_ADDR_MAX) {
			DOCA_LOG_ERR("MR_REG: packed rkey of %lu bytes, memh of %lu (rkey 1 to %u, "
				     "memh up to %u accepted)",
				     (unsigned long)rc->mr_reg.packed_rkey_len,
				     (unsigned long)rc->mr_reg.packed_memh_len, RDMO_ADDR_MAX,
				     RDMO_ADDR_MAX);
			return DOCA_ERROR_INVALID_VALUE;
		}
		want = rc->mr_reg.packed_rkey_len + rc->mr_reg.packed_memh_len;
		rc->mr_reg.packed_rkey = (void *)inl;
		rc->mr_reg.packed_memh = (void *)(inl + rc->mr_reg.packed_rkey_len);
		break;
	default:
		break;
	}
	if (have != want) {
		DOCA_LOG_ERR("command %lu of %lu bytes, expected %zu + %lu inline",
			     (unsigned long)rc->type, (unsigned long)cmd->len, sizeof(*rc),
			     (unsigned long)want);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

/* Handle one command; queue exactly one notification for it. */
static doca_error_t rdmo_cmd_one(struct rdmo_worker *w, const struct urom_worker_cmd_desc *desc)
{
	const struct urom_worker_cmd *cmd = &desc->worker_cmd;
	struct urom_worker_notify_rdmo notif;
	struct urom_worker_rdmo_cmd rc;
	struct rdmo_client *c = NULL;
	const void *inl = NULL;
	size_t inl_len = 0;
	doca_error_t status, queued;

	memset(&notif, 0, sizeof(notif));
	if (cmd->len < sizeof(rc)) {
		DOCA_LOG_ERR("rdmo command of %lu bytes, at least %zu expected",
			     (unsigned long)cmd->len, sizeof(rc));
		status = DOCA_ERROR_INVALID_VALUE;
		queued = rdmo_notify(w, desc, status, NULL, NULL, 0);
		return queued != DOCA_SUCCESS ? queued : status;
	}
	memcpy(&rc, cmd->plugin_cmd, sizeof(rc));
	notif.type = rc.type; /* the notification type equals its command's */

	if (rc.type > UROM_WORKER_CMD_RDMO_MR_DEREG) {
		DOCA_LOG_ERR("unknown rdmo command type %lu", (unsigned long)rc.type);
		status = DOCA_ERROR_NOT_SUPPORTED;
		goto notify;
	}
	status = cmd_unpack(cmd, &rc);
	if (status != DOCA_SUCCESS)
		goto notify;
	if (rc.type != UROM_WORKER_CMD_RDMO_CLIENT_INIT) {
		c = client_by_dest(w, desc->dest_id);
		if (c == NULL) {
			DOCA_LOG_ERR("command %lu from host connection %lu before its CLIENT_INIT",
				     (unsigned long)rc.type, (unsigned long)desc->dest_id);
			status = DOCA_ERROR_NOT_FOUND;
			goto notify;
		}
	}

	switch (rc.type) {
	case UROM_WORKER_CMD_RDMO_CLIENT_INIT:
		status = cmd_client_init(w, desc->dest_id, &rc.client_init);
		if (status == DOCA_SUCCESS) {
			inl = w->addr;
			inl_len = w->addr_len;
		}
		break;
	case UROM_WORKER_CMD_RDMO_RQ_CREATE:
		status = cmd_rq_create(w, c, &rc.rq_create, &notif.rq_create.rq_id);
		break;
	case UROM_WORKER_CMD_RDMO_RQ_DESTROY:
		notif.rq_destroy.rq_id = rc.rq_destroy.rq_id;
		status = cmd_rq_destroy(w, c, rc.rq_destroy.rq_id);
		break;
	case UROM_WORKER_CMD_RDMO_MR_REG:
		status = cmd_mr_reg(w, c, &rc.mr_reg, &notif.mr_reg.rkey);
		break;
	default: /* UROM_WORKER_CMD_RDMO_MR_DEREG */
		notif.mr_dereg.rkey = rc.mr_dereg.rkey;
		{
			struct rdmo_mr *mr = mr_find(c, rc.mr_dereg.rkey);

			/*
			 * RMAs through the key still in flight: answer once the last one has
			 * completed, so the host never unmaps memory a put may still reach.
			 */
			if (mr != NULL && mr->refs > 0) {
				struct urom_worker_notif_desc *nd =
					rdmo_notif_build(desc, DOCA_SUCCESS, &notif, NULL, 0);

				if (nd != NULL) {
					(void)cmd_mr_dereg(c, rc.mr_dereg.rkey);
					mr->dereg_notif = nd;
					mr->notif_list = &w->completed;
					return DOCA_SUCCESS;
				}
			}
		}
		status = cmd_mr_dereg(c, rc.mr_dereg.rkey);
		break;
	}

notify:
	queued = rdmo_notify(w, desc, status, &notif, inl, inl_len);
	return queued != DOCA_SUCCESS ? queued : status;
}

/* ---- ops ----------------------------------------------------------------------------------- */

static void rdmo_teardown(struct rdmo_worker *w);

/* One UCP context with features and one single-threaded worker of it, with its wakeup fd. */
static doca_error_t rdmo_ucx_open(const char *name, uint64_t features, ucp_context_h *ctx_p,
				  ucp_worker_h *worker_p, int *efd_p)
{
	ucp_worker_params_t wp;
	ucp_config_t *config;
	ucp_params_t up;
	ucs_status_t status;

	/* UCX_* from the environment, as the service gave it to the worker: no transport
	 * restriction of our own (shared memory and TCP must work). */
	status = ucp_config_read(NULL, NULL, &config);
	if (status != UCS_OK) {
		DOCA_LOG_ERR("ucp_config_read failed: %s", ucs_status_string(status));
		return DOCA_ERROR_DRIVER;
	}
	memset(&up, 0, sizeof(up));
	up.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
	up.features = features;
	up.name = name;
	status = ucp_init(&up, config, ctx_p);
	ucp_config_release(config);
	if (status != UCS_OK) {
		DOCA_LOG_ERR("ucp_init (%s) failed: %s", name, ucs_status_string(status));
		return DOCA_ERROR_DRIVER;
	}
	memset(&wp, 0, sizeof(wp));
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SINGLE;
	status = ucp_worker_create(*ctx_p, &wp, worker_p);
	if (status != UCS_OK) {
		DOCA_LOG_ERR("ucp_worker_create (%s) failed: %s", name, ucs_status_string(status));
		return DOCA_ERROR_DRIVER;
	}
	status = ucp_worker_get_efd(*worker_p, efd_p);
	if (status != UCS_OK) {
		DOCA_LOG_ERR("ucp_worker_get_efd (%s) failed: %s", name, ucs_status_string(status));
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}

/*
 * Two UCP workers of two contexts. Initiators talk to one with AM only: UCX 1.13 pairs the
 * endpoint RQ_CREATE makes with the initiator's own endpoint to us, and when the two sides
 * were created with different features (RMA here, none there) that pairing over shared memory
 * aborts the process ("endpoint reconfiguration not supported yet"); with AM only on our side it
 * works whatever the initiator asked for. Client memory is reached from the RMA one, whose
 * endpoints have no counterpart to pair with.
 */
static doca_error_t rdmo_ucx_init(struct rdmo_worker *w)
{
	ucp_am_handler_param_t am;
	ucs_status_t status;
	ucp_address_t *addr;
	doca_error_t ret;
	size_t len;

	ret = rdmo_ucx_open("worker_rdmo_am", UCP_FEATURE_AM | UCP_FEATURE_WAKEUP, &w->am_ctx,
			    &w->am_worker, &w->am_efd);
	if (ret != DOCA_SUCCESS)
		return ret;
	ret = rdmo_ucx_open("worker_rdmo_rma", UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP, &w->rma_ctx,
			    &w->rma_worker, &w->rma_efd);
	if (ret != DOCA_SUCCESS)
		return ret;

	memset(&am, 0, sizeof(am));
	am.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
			UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
	am.id = UROM_RDMO_AM_ID;
	am.flags = UCP_AM_FLAG_WHOLE_MSG;
	am.cb = rdmo_am_cb;
	am.arg = w;
	status = ucp_worker_set_am_recv_handler(w->am_worker, &am);
	if (status != UCS_OK) {
		DOCA_LOG_ERR("ucp_worker_set_am_recv_handler failed: %s",
			     ucs_status_string(status));
		return DOCA_ERROR_DRIVER;
	}

	status = ucp_worker_get_address(w->am_worker, &addr, &len);
	if (status != UCS_OK) {
		DOCA_LOG_ERR("ucp_worker_get_address failed: %s", ucs_status_string(status));
		return DOCA_ERROR_DRIVER;
	}
	w->addr = malloc(len);
	if (w->addr != NULL) {
		memcpy(w->addr, addr, len);
		w->addr_len = len;
	}
	ucp_worker_release_address(w->am_worker, addr);
	if (w->addr == NULL) {
		DOCA_LOG_ERR("no memory for a %zu-byte worker address", len);
		return DOCA_ERROR_NO_MEMORY;
	}
	return DOCA_SUCCESS;
}

static doca_error_t rdmo_epoll_add(struct rdmo_worker *w, int fd)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.fd = fd;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		DOCA_LOG_ERR("epoll_ctl(ADD, fd %d) failed: %s", fd, strerror(errno));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	return DOCA_SUCCESS;
}

static doca_error_t rdmo_open(struct urom_worker_ctx *ctx)
{
	struct rdmo_worker *w;
	doca_error_t status;

	if (ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	w = calloc(1, sizeof(*w));
	if (w == NULL) {
		DOCA_LOG_ERR("failed to allocate the rdmo plugin state");
		return DOCA_ERROR_NO_MEMORY;
	}
	w->epfd = -1;
	w->stray_left = RDMO_LOG_BUDGET;
	ucs_list_head_init(&w->clients);
	ucs_list_head_init(&w->rqs);
	ucs_list_head_init(&w->closing);
	ucs_list_head_init(&w->completed);

	status = rdmo_ucx_init(w);
	if (status != DOCA_SUCCESS)
		goto err_teardown;

	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epfd < 0) {
		DOCA_LOG_ERR("epoll_create1 failed: %s", strerror(errno));
		status = DOCA_ERROR_OPERATING_SYSTEM;
		goto err_teardown;
	}
	status = rdmo_epoll_add(w, w->am_efd);
	if (status == DOCA_SUCCESS)
		status = rdmo_epoll_add(w, w->rma_efd);
	if (status != DOCA_SUCCESS)
		goto err_teardown;

	ctx->plugin_ctx = w;
	DOCA_LOG_DBG("rdmo plugin open, worker address of %zu bytes", w->addr_len);
	return DOCA_SUCCESS;

err_teardown:
	rdmo_teardown(w);
	return status;
}

/*
 * Progress (at close) until every operation's UCX requests and every endpoint close
 * finished, bounded; nonzero when some are still pending.
 */
static int rdmo_drain(struct rdmo_worker *w)
{
	uint64_t deadline = now_ms() + RDMO_CLOSE_MS;
	ucs_list_link_t *l, *o;
	int pending;

	do {
		(void)rdmo_progress_workers(w);
		closing_reap(w);
		pending = !ucs_list_is_empty(&w->closing);
		for (l = w->rqs.next; l != &w->rqs; l = l->next)
			for (o = rq_of(l)->ops.next; o != &rq_of(l)->ops; o = o->next)
				pending |= op_of(o)->inflight > 0;
		if (pending) {
			struct timespec ts = {.tv_sec = 0, .tv_nsec = 1000000};

			nanosleep(&ts, NULL);
		}
	} while (pending && now_ms() < deadline);
	if (pending)
		DOCA_LOG_WARN("rdmo close: UCX requests still pending after %d ms", RDMO_CLOSE_MS);
	return pending;
}

/* Free everything; safe on a partly opened state. */
static void rdmo_teardown(struct rdmo_worker *w)
{
	struct urom_worker_notif_desc *desc;
	struct rdmo_client *c;
	struct rdmo_rq *rq;
	ucs_list_link_t *l;

	if (w->am_worker != NULL && w->rma_worker != NULL) {
		/* Initiators get no more answers; RMAs in flight to clients may finish. */
		for (l = w->rqs.next; l != &w->rqs; l = l->next)
			ep_close(w, rq_of(l)->ep, 1);
		if (rdmo_drain(w) != 0) {
			/* A client that does not answer: cut it, its requests complete canceled. */
			for (l = w->clients.next; l != &w->clients; l = l->next) {
				ep_close(w, client_of(l)->ep, 1);
				client_of(l)->ep = NULL;
			}
			if (rdmo_drain(w) != 0) {
				/* UCX would call back into freed state: keep it all, leaked. */
				DOCA_LOG_ERR("rdmo close: UCX does not release its requests, the "
					     "plugin's state is leaked");
				return;
			}
		}
	}
	/* No UCX request refers to an operation any more. */
	while (!ucs_list_is_empty(&w->rqs)) {
		rq = ucs_list_extract_head(&w->rqs, struct rdmo_rq, entry);
		while (!ucs_list_is_empty(&rq->ops))
			op_free(ucs_list_extract_head(&rq->ops, struct rdmo_op, entry));
		free(rq->addr);
		free(rq);
	}
	while (!ucs_list_is_empty(&w->clients)) {
		c = ucs_list_head(&w->clients, struct rdmo_client, entry);
		while (!ucs_list_is_empty(&c->mrs))
			mr_free(ucs_list_head(&c->mrs, struct rdmo_mr, entry));
		while (!ucs_list_is_empty(&c->ptrs))
			ptr_free(c, ucs_list_head(&c->ptrs, struct rdmo_ptr, entry));
		if (c->ep != NULL)
			ep_close(w, c->ep, 1);
		ucs_list_del(&c->entry);
		free(c);
	}
	if (w->am_worker != NULL && w->rma_worker != NULL)
		(void)rdmo_drain(w);
	while (!ucs_list_is_empty(&w->closing))
		free(ucs_list_extract_head(&w->closing, struct rdmo_closing, entry));
	while (!ucs_list_is_empty(&w->completed)) {
		desc = ucs_list_extract_head(&w->completed, struct urom_worker_notif_desc, entry);
		free(desc);
	}
	free(w->addr);
	if (w->am_worker != NULL)
		ucp_worker_destroy(w->am_worker);
	if (w->rma_worker != NULL)
		ucp_worker_destroy(w->rma_worker);
	if (w->am_ctx != NULL)
		ucp_cleanup(w->am_ctx);
	if (w->rma_ctx != NULL)
		ucp_cleanup(w->rma_ctx);
	if (w->epfd >= 0)
		close(w->epfd);
	free(w);
}

static void rdmo_close(struct urom_worker_ctx *ctx)
{
	if (ctx == NULL || ctx->plugin_ctx == NULL)
		return;
	rdmo_teardown(ctx->plugin_ctx);
	ctx->plugin_ctx = NULL;
}

static doca_error_t rdmo_addr(struct urom_worker_ctx *ctx, void *addr, size_t *addr_len)
{
	struct rdmo_worker *w;

	if (ctx == NULL || ctx->plugin_ctx == NULL || addr_len == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	w = ctx->plugin_ctx;
	if (addr == NULL || *addr_len < w->addr_len) {
		*addr_len = w->addr_len;
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(addr, w->addr, w->addr_len);
	*addr_len = w->addr_len;
	return DOCA_SUCCESS;
}

static doca_error_t rdmo_worker_cmd(struct urom_worker_ctx *ctx, ucs_list_link_t *cmd_list)
{
	struct urom_worker_cmd_desc *desc;
	doca_error_t status = DOCA_SUCCESS, one;
	struct rdmo_worker *w;

	if (ctx == NULL || ctx->plugin_ctx == NULL || cmd_list == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	w = ctx->plugin_ctx;

	while (!ucs_list_is_empty(cmd_list)) {
		desc = ucs_list_extract_head(cmd_list, struct urom_worker_cmd_desc, entry);
		one = rdmo_cmd_one(w, desc);
		/* Each descriptor is freed here and only here, whatever happened to it. */
		free(desc);
		if (one != DOCA_SUCCESS)
			status = one;
	}
	/* Endpoints and closes may want progress: the next progress call runs it. */
	w->dirty = 1;
	return status;
}

static doca_error_t rdmo_progress(struct urom_worker_ctx *ctx, ucs_list_link_t *notif_list)
{
	doca_error_t status = DOCA_ERROR_EMPTY;
	struct rdmo_worker *w;
	int round;

	if (ctx == NULL || ctx->plugin_ctx == NULL || notif_list == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	w = ctx->plugin_ctx;

	/*
	 * The data plane: messages from initiators, completions of RMAs, answers. Bounded, so
	 * a busy initiator does not keep the runtime from its hosts; what is left makes arm say
	 * AGAIN (dirty), and the runtime comes back at once.
	 */
	for (round = 0; round < RDMO_PROGRESS_ROUNDS; round++) {
		if (!rdmo_progress_workers(w) && !w->dirty)
			break;
		w->dirty = 0;
		rdmo_run(w);
	}
	if (round == RDMO_PROGRESS_ROUNDS)
		w->dirty = 1;
	if (!ucs_list_is_empty(&w->completed)) {
		ucs_list_splice_tail(notif_list, &w->completed);
		ucs_list_head_init(&w->completed);
		status = DOCA_SUCCESS;
	}
	return status;
}

/*
 * softdpu's wakeup extension (softdpu/urom_plugin.h): the runtime sleeps on epfd, which holds
 * both UCP workers' wakeup fds, and calls softdpu_plugin_arm before each sleep.
 */
DOCA_STABLE doca_error_t softdpu_plugin_wakeup_fd(struct urom_worker_ctx *ctx, int *fd);
DOCA_STABLE doca_error_t softdpu_plugin_arm(struct urom_worker_ctx *ctx);

doca_error_t softdpu_plugin_wakeup_fd(struct urom_worker_ctx *ctx, int *fd)
{
	struct rdmo_worker *w;

	if (ctx == NULL || ctx->plugin_ctx == NULL || fd == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	w = ctx->plugin_ctx;
	*fd = w->epfd;
	return DOCA_SUCCESS;
}

doca_error_t softdpu_plugin_arm(struct urom_worker_ctx *ctx)
{
	struct rdmo_worker *w;
	ucs_status_t status;

	if (ctx == NULL || ctx->plugin_ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	w = ctx->plugin_ctx;
	if (w->dirty)
		return DOCA_ERROR_AGAIN;
	status = ucp_worker_arm(w->am_worker);
	if (status == UCS_OK)
		status = ucp_worker_arm(w->rma_worker);
	if (status == UCS_OK)
		return DOCA_SUCCESS;
	if (status != UCS_ERR_BUSY)
		DOCA_LOG_WARN("ucp_worker_arm failed: %s", ucs_status_string(status));
	return DOCA_ERROR_AGAIN;
}

static doca_error_t rdmo_notif_pack(struct urom_worker_notify *notif, size_t *packed_notif_len,
				    void *packed_notif)
{
	size_t hdr = offsetof(struct urom_worker_notify, plugin_notif), need;
	struct urom_worker_notify_rdmo n;

	if (notif == NULL || packed_notif_len == NULL || packed_notif == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (notif->len != 0 && (notif->len < sizeof(n) || notif->len - sizeof(n) > RDMO_ADDR_MAX)) {
		DOCA_LOG_ERR("rdmo notification of %lu bytes is malformed",
			     (unsigned long)notif->len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	need = hdr + notif->len;
	if (*packed_notif_len < need) {
		DOCA_LOG_ERR("rdmo notification needs %zu bytes, the buffer holds %zu", need,
			     *packed_notif_len);
		return DOCA_ERROR_TOO_BIG;
	}
	memcpy(packed_notif, notif, need);
	if (notif->len >= sizeof(n)) {
		/* The inline pointer means nothing to the host (it repoints it): send it as 0. */
		memcpy(&n, notif->plugin_notif, sizeof(n));
		if (n.type == UROM_WORKER_NOTIFY_RDMO_CLIENT_INIT) {
			n.client_init.addr = NULL;
			memcpy((uint8_t *)packed_notif + hdr, &n, sizeof(n));
		}
	}
	*packed_notif_len = need;
	return DOCA_SUCCESS;
}

/* The plugin's entry points, looked up by name by the worker runtime and the service. */
DOCA_STABLE doca_error_t urom_plugin_get_iface(struct urom_plugin_iface *iface);
DOCA_STABLE doca_error_t urom_plugin_get_version(uint64_t *version);

doca_error_t urom_plugin_get_iface(struct urom_plugin_iface *iface)
{
	struct urom_plugin_iface ops = {
		.open = rdmo_open,
		.close = rdmo_close,
		.addr = rdmo_addr,
		.worker_cmd = rdmo_worker_cmd,
		.progress = rdmo_progress,
		.notif_pack = rdmo_notif_pack,
	};

	if (iface == NULL)
		return DOCA_ERROR_INVALID_VALUE;

	DOCA_STRUCT_CTOR(ops);
	*iface = ops;
	return DOCA_SUCCESS;
}

doca_error_t urom_plugin_get_version(uint64_t *version)
{
	if (version == NULL)
		return DOCA_ERROR_INVALID_VALUE;

	*version = UROM_WORKER_RDMO_VERSION;
	return DOCA_SUCCESS;
}
