/*
 * softdpu plugin helper: host memory regions on a plugin's UCP worker (see sdp_plugin_mem.h).
 *
 * Bookkeeping: a table holds endpoints (one per owner address, counted by the regions that
 * use them), regions (id, bounds, endpoint, unpacked rkey) and operations. An operation is on
 * `ops` while UCX owns it, then on `done` until sdp_plugin_mem_progress() runs its callback;
 * UCX's own callback only moves it, because UCX 1.13 may call it inside ucp_put_nbx() itself.
 * Operations of the blocking calls carry no user callback: their waiter reads the status.
 *
 * Where UCX would emulate RMA in software (an endpoint over TCP) and the memh names an am_key,
 * puts and gets go as softdpu active messages to the owner's export worker instead ("xrma",
 * sdp_urom_xrma.h): one request per SDP_UROM_XRMA_LEN_MAX bytes, each answered. A get
 * completes when every request was sent and answered; a put, like UCX's, once its requests
 * were sent (its buffer is free), while a tracker (struct pm_ack) counts its answers. A flush
 * of such a region completes when the xrma gets and puts issued before it on its endpoint were
 * answered, with the first refusal an answer carried since the last flush. SOFTDPU_UROM_XRMA=0 / 1 turns the
 * path off / on for every endpoint (docs/environment.md).
 *
 * UCX's rule for remote keys is followed: an rkey is destroyed after the operations using it
 * were flushed and before its endpoint closes. The one exception is an endpoint closed by force
 * after a blocking call timed out: its operations are cancelled by the close, and the rkeys of
 * its regions are destroyed right after.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_plugin_mem.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <ucs/datastruct/list.h>

#include <doca_log.h>
#include <doca_urom_plugin.h>

#include "sdp_plugin_util.h"
#include "sdp_urom_memh.h"
#include "sdp_urom_xrma.h"

DOCA_LOG_REGISTER(SOFTDPU::PLUGIN_MEM);

/* Bound of each endpoint flush and close in release and destroy. */
#define PM_CLOSE_TIMEOUT_MS 1000
/* A forced close gets at least this long, even when the bound is spent. */
#define PM_FORCE_GRACE_MS 200
/* Longest sleep on the worker's event fd while waiting (UCX has timer-driven work). */
#define PM_POLL_SLICE_MS 100
/* Without an event fd: sleep between progress rounds, doubling from the first to the last. */
#define PM_NOFD_SLEEP_MIN_US 10
#define PM_NOFD_SLEEP_MAX_US 1000
/*
 * UCX reads a worker address and a packed rkey without knowing their length; both come from
 * peers. They are handed to UCX in zero-filled buffers that reach well past the bytes: the
 * address with SDP_UROM_MEMH_ADDR_MAX zero bytes after it, the rkey in a buffer of at least
 * PM_RKEY_BUF_MIN bytes. UCX 1.13 walks an rkey as an md map (8 bytes), a memory type (1),
 * per md a size byte and at most 255 bytes, a system device (1) and per device a distance (3):
 * whatever the bytes say, it stays inside 8 + 1 + 64 * 256 + 1 + 64 * 3 bytes.
 */
#define PM_RKEY_WALK_MAX (8 + 1 + 64 * 256 + 1 + 64 * 3)
#define PM_RKEY_BUF_MIN                                                                            \
	(PM_RKEY_WALK_MAX > SDP_UROM_MEMH_RKEY_MAX ? PM_RKEY_WALK_MAX : SDP_UROM_MEMH_RKEY_MAX)

struct pm_ep {
	ucs_list_link_t link;
	struct sdp_plugin_mem *mem;
	ucp_ep_h ep;	   /* NULL once closed */
	int xrma;	   /* regions with an am_key go over the xrma path */
	int failed;	   /* UCX reported it failed: every operation on it is refused */
	int failing;	   /* xrma_fail_ep runs: no flush completes on its own */
	uint64_t xrma_seq; /* xrma operations issued on it (their order, for flushes) */
	unsigned gets_out; /* xrma get requests sent and not answered */
	uint8_t *addr;	   /* owner's worker address: the cache key */
	size_t addr_len;
	unsigned users;	  /* regions that use it */
	unsigned pending; /* operations UCX still owns */
};

struct pm_region {
	ucs_list_link_t link;
	uint64_t id;
	uint64_t va;
	uint64_t len;
	struct pm_ep *ep;
	ucp_rkey_h rkey;       /* NULL once its endpoint was closed by force */
	uint64_t am_key;       /* the memh's, 0 without one */
	doca_error_t xrma_err; /* an xrma put's refusal, reported by the region's next flush */
	unsigned inflight;     /* non-blocking operations whose callback has not run */
	int from_domain;       /* cached under (domain_id, seg) */
	int from_member; /* cached under (domain_id, memh bytes): sdp_plugin_mem_import_member */
	uint64_t domain_id;
	int seg;
	uint8_t *memh; /* domain and member regions: the memh bytes imported */
	size_t memh_len;
	unsigned pins;	   /* member regions: holders that asked for it and did not unpin */
	uint64_t last_use; /* member regions: for the eviction of the least recently used */
};

enum pm_op_kind {
	PM_OP_PUT,
	PM_OP_GET,
	PM_OP_FLUSH
};

struct pm_op {
	ucs_list_link_t link; /* in mem->ops while UCX owns it, then mem->done */
	struct sdp_plugin_mem *mem;
	struct pm_region *region; /* NULL for blocking operations */
	struct pm_ep *ep;
	sdp_plugin_mem_cb_func_t cb; /* NULL: a blocking call waits for it */
	void *arg;
	ucs_status_t status;
	int done;   /* UCX reported completion */
	int orphan; /* its waiter gave up: free it on completion, touch nothing else */
	/* The xrma path (op->xrma): */
	int xrma;
	enum pm_op_kind kind;
	uint64_t opid;
	uint64_t region_id;
	uint64_t seq;	     /* issue order on its endpoint; a flush: wait up to this one */
	unsigned n_chunks;   /* requests of SDP_UROM_XRMA_LEN_MAX bytes at most */
	unsigned next_chunk; /* a get's first request not sent yet */
	uint64_t va;	     /* first remote byte */
	uint8_t *local;	     /* a get's destination */
	size_t len;
	unsigned replies_left; /* requests not answered */
	unsigned sends_left;   /* UCX send requests not completed */
	doca_error_t derr;     /* the owner's answer, when not DOCA_SUCCESS */
	struct pm_ack *ack;    /* a put's answers */
	uint8_t *hdrs;	       /* the requests' headers (UCX reads them until sent) */
	uint8_t hdr1[SDP_UROM_XRMA_REQ_LEN];
};

/* The answers an xrma put still waits for, after its callback may have run. */
struct pm_ack {
	ucs_list_link_t link; /* in mem->acks; counted in its endpoint's pending */
	struct pm_ep *ep;
	uint64_t region_id;
	uint64_t opid;
	uint64_t seq;
	unsigned replies_left;
};

struct sdp_plugin_mem {
	ucp_worker_h worker;
	int efd; /* the worker's event fd, -1 without UCP_FEATURE_WAKEUP */
	ucs_list_link_t eps;
	ucs_list_link_t regions;
	ucs_list_link_t ops;  /* owned by UCX */
	ucs_list_link_t done; /* completed, callback not run yet */
	ucs_list_link_t acks; /* xrma puts with answers outstanding */
	size_t inflight;      /* non-blocking operations whose callback has not run */
	uint64_t next_id;
	unsigned nmember;  /* member regions cached (sdp_plugin_mem_import_member) */
	uint64_t use_tick; /* their last_use clock */
	int xrma_ok;	   /* the reply handler is set on the worker */
	uint64_t next_opid;
	unsigned long xrma_refused; /* replies dropped */
};

static const char *op_kind_name(enum pm_op_kind kind)
{
	switch (kind) {
	case PM_OP_PUT:
		return "put";
	case PM_OP_GET:
		return "get";
	default:
		return "flush";
	}
}

static int64_t pm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static doca_error_t pm_status(ucs_status_t status)
{
	switch (status) {
	case UCS_OK:
		return DOCA_SUCCESS;
	case UCS_ERR_CANCELED:
	case UCS_ERR_NOT_CONNECTED:
	case UCS_ERR_CONNECTION_RESET:
	case UCS_ERR_UNREACHABLE:
	case UCS_ERR_ENDPOINT_TIMEOUT:
		return DOCA_ERROR_NOT_CONNECTED;
	default:
		return DOCA_ERROR_DRIVER;
	}
}

/*
 * Wait without spinning until cond(arg) holds or the deadline passes, progressing the worker:
 * sleep on its event fd, or in short doubling naps when it has none. 1 when cond holds.
 */
static int pm_wait(struct sdp_plugin_mem *mem, int (*cond)(const void *), const void *arg,
		   int64_t deadline)
{
	long nap_us = PM_NOFD_SLEEP_MIN_US;
	struct pollfd pfd;
	struct timespec ts;
	unsigned progressed;
	ucs_status_t st;
	int64_t left;

	while (!cond(arg)) {
		progressed = ucp_worker_progress(mem->worker);
		if (cond(arg))
			break;
		/* Every round, busy or not: steady traffic must not outlast the bound. */
		left = deadline - pm_now_ms();
		if (left <= 0)
			return 0;
		if (progressed != 0) {
			nap_us = PM_NOFD_SLEEP_MIN_US;
			continue;
		}
		if (mem->efd >= 0) {
			st = ucp_worker_arm(mem->worker);
			if (st == UCS_ERR_BUSY)
				continue;
			if (st == UCS_OK) {
				pfd.fd = mem->efd;
				pfd.events = POLLIN;
				pfd.revents = 0;
				(void)poll(
					&pfd, 1,
					(int)(left < PM_POLL_SLICE_MS ? left : PM_POLL_SLICE_MS));
				continue;
			}
		}
		ts.tv_sec = 0;
		ts.tv_nsec = nap_us * 1000;
		nanosleep(&ts, NULL);
		if (nap_us < PM_NOFD_SLEEP_MAX_US)
			nap_us *= 2;
	}
	return 1;
}

static int pm_req_done(const void *req)
{
	return ucp_request_check_status((void *)req) != UCS_INPROGRESS;
}

/* Wait for a request of UCX's (no callback) within the deadline; frees it when it finished. */
static ucs_status_t pm_req_wait(struct sdp_plugin_mem *mem, ucs_status_ptr_t req, int64_t deadline)
{
	ucs_status_t st;

	if (req == NULL)
		return UCS_OK;
	if (UCS_PTR_IS_ERR(req))
		return UCS_PTR_STATUS(req);
	if (!pm_wait(mem, pm_req_done, req, deadline))
		return UCS_INPROGRESS; /* still UCX's: not freed */
	st = ucp_request_check_status(req);
	ucp_request_free(req);
	return st;
}

/* ---- operations ---- */

/* Free op, or leave it to the last of its UCX send requests (the xrma path). */
static void op_release(struct pm_op *op)
{
	if (op->sends_left != 0) {
		op->orphan = 1;
		return;
	}
	if (op->hdrs != op->hdr1)
		free(op->hdrs);
	free(op);
}

/* What an operation's user sees. */
static doca_error_t op_result(const struct pm_op *op)
{
	return op->derr != DOCA_SUCCESS ? op->derr : pm_status(op->status);
}

static void xrma_flush_check(struct sdp_plugin_mem *mem, struct pm_ep *e);

static void op_complete(struct pm_op *op, ucs_status_t status)
{
	struct sdp_plugin_mem *mem = op->mem;
	struct pm_ep *e = op->ep;
	int xrma_data = op->xrma && op->kind != PM_OP_FLUSH;

	if (op->orphan) {
		op_release(op);
		return;
	}
	ucs_list_del(&op->link);
	op->ep->pending--;
	op->status = status;
	op->done = 1;
	if (op->cb != NULL)
		ucs_list_add_tail(&mem->done, &op->link);
	if (xrma_data)
		xrma_flush_check(mem, e);
}

static void op_ucx_cb(void *request, ucs_status_t status, void *user_data)
{
	op_complete(user_data, status);
	ucp_request_free(request);
}

/* ---- the xrma path ---- */

static struct pm_region *region_find(const struct sdp_plugin_mem *mem, uint64_t id);

/* Get requests an endpoint has out at most (1 MiB each): the owner's answers are copies. */
#define PM_XRMA_GET_WINDOW 16

/* An xrma operation is complete once every request was sent and answered. */
static void xrma_try_done(struct pm_op *op)
{
	if (!op->done && op->replies_left == 0 && op->sends_left == 0)
		op_complete(op, op->status);
}

/* Complete the flushes of e that no earlier xrma operation holds back. */
static void xrma_flush_check(struct sdp_plugin_mem *mem, struct pm_ep *e)
{
	uint64_t oldest = UINT64_MAX;
	struct pm_op *op, *tmp;
	struct pm_region *r;
	struct pm_ack *a;

	if (e->failing)
		return;
	ucs_list_for_each(op, &mem->ops, link) {
		if (op->ep == e && op->xrma && op->kind != PM_OP_FLUSH && op->seq < oldest)
			oldest = op->seq;
	}
	ucs_list_for_each(a, &mem->acks, link) {
		if (a->ep == e && a->seq < oldest)
			oldest = a->seq;
	}
	/* Completing a flush touches no other operation. */
	ucs_list_for_each_safe(op, tmp, &mem->ops, link) {
		if (op->ep != e || !op->xrma || op->kind != PM_OP_FLUSH || op->seq >= oldest)
			continue;
		r = region_find(mem, op->region_id);
		if (r != NULL && r->xrma_err != DOCA_SUCCESS) {
			op->derr = r->xrma_err; /* reported once */
			r->xrma_err = DOCA_SUCCESS;
		}
		op_complete(op, UCS_OK);
	}
}

static void xrma_ack_free(struct sdp_plugin_mem *mem, struct pm_ack *a)
{
	struct pm_op *op;

	ucs_list_for_each(op, &mem->ops, link) {
		if (op->ack == a)
			op->ack = NULL;
	}
	ucs_list_del(&a->link);
	a->ep->pending--;
	free(a);
}

/* Note a put's refusal (or loss) on its region, for the region's next flush. */
static void xrma_region_err(struct sdp_plugin_mem *mem, uint64_t region_id, doca_error_t status)
{
	struct pm_region *r = region_find(mem, region_id);

	if (r != NULL && r->xrma_err == DOCA_SUCCESS)
		r->xrma_err = status;
}

/*
 * Fail everything of e that waits for answers (its endpoint failed or was closed): put
 * trackers (their regions' next flush reports NOT_CONNECTED), gets and flushes, each once.
 */
static void xrma_fail_ep(struct sdp_plugin_mem *mem, struct pm_ep *e, ucs_status_t status)
{
	struct pm_ack *a, *atmp;
	struct pm_op *op;

	e->failing = 1;
	ucs_list_for_each_safe(a, atmp, &mem->acks, link) {
		if (a->ep != e)
			continue;
		xrma_region_err(mem, a->region_id, DOCA_ERROR_NOT_CONNECTED);
		xrma_ack_free(mem, a);
	}
	/*
	 * One at a time from the head: a completion may complete others. Send requests still
	 * UCX's are counted down by their callbacks (op_release waits for them).
	 */
	for (;;) {
		struct pm_op *found = NULL;

		ucs_list_for_each(op, &mem->ops, link) {
			if (op->ep == e && op->xrma) {
				found = op;
				break;
			}
		}
		if (found == NULL)
			break;
		found->replies_left = 0;
		found->next_chunk = found->n_chunks;
		if (found->kind == PM_OP_FLUSH) {
			struct pm_region *r = region_find(mem, found->region_id);

			if (r != NULL)
				r->xrma_err = DOCA_SUCCESS; /* this flush reports the failure */
		}
		op_complete(found, status);
	}
	e->gets_out = 0;
	e->failing = 0;
}

/* One answer (or its loss) of put tracker a; the last one frees it. */
static void xrma_ack_one(struct sdp_plugin_mem *mem, struct pm_ack *a, doca_error_t status)
{
	struct pm_ep *e = a->ep;

	if (status != DOCA_SUCCESS)
		xrma_region_err(mem, a->region_id, status);
	if (--a->replies_left != 0)
		return;
	xrma_ack_free(mem, a);
	xrma_flush_check(mem, e);
}

static void xrma_send_cb(void *request, ucs_status_t status, void *user_data);

/* Send request i of op (its header kept in op->hdrs until UCX is done with it). */
static ucs_status_t xrma_send(struct pm_op *op, uint64_t am_key, unsigned i)
{
	uint8_t *hdr = op->hdrs + (size_t)i * SDP_UROM_XRMA_REQ_LEN;
	size_t off = (size_t)i * SDP_UROM_XRMA_LEN_MAX;
	size_t chunk =
		op->len - off < SDP_UROM_XRMA_LEN_MAX ? op->len - off : SDP_UROM_XRMA_LEN_MAX;
	struct sdp_urom_xrma_req req;
	ucp_request_param_t param;
	ucs_status_ptr_t sreq;

	req.op = op->kind == PM_OP_PUT ? SDP_UROM_XRMA_PUT : SDP_UROM_XRMA_GET;
	req.opid = op->opid;
	req.am_key = am_key;
	req.va = op->va + off;
	req.len = chunk;
	sdp_urom_xrma_req_pack(&req, hdr);
	memset(&param, 0, sizeof(param));
	param.op_attr_mask =
		UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
	param.cb.send = xrma_send_cb;
	param.user_data = op;
	param.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
	sreq = ucp_am_send_nbx(op->ep->ep, SDP_UROM_XRMA_REQ_AM_ID, hdr, SDP_UROM_XRMA_REQ_LEN,
			       op->kind == PM_OP_PUT ? op->local + off : NULL,
			       op->kind == PM_OP_PUT ? chunk : 0, &param);
	if (UCS_PTR_IS_PTR(sreq))
		op->sends_left++;
	return UCS_PTR_IS_ERR(sreq) ? UCS_PTR_STATUS(sreq) : UCS_OK;
}

/* Send what gets of e still hold back, within the window; complete what that fails. */
static void xrma_pump(struct sdp_plugin_mem *mem, struct pm_ep *e)
{
	struct pm_region *r;
	struct pm_op *op;
	ucs_status_t st;
	int settle = 0;

	if (e->ep == NULL || e->failed)
		return;
	ucs_list_for_each(op, &mem->ops, link) {
		if (e->gets_out >= PM_XRMA_GET_WINDOW)
			break;
		if (op->ep != e || !op->xrma || op->kind != PM_OP_GET ||
		    op->next_chunk >= op->n_chunks)
			continue;
		r = region_find(mem, op->region_id);
		while (e->gets_out < PM_XRMA_GET_WINDOW && op->next_chunk < op->n_chunks) {
			st = r != NULL ? xrma_send(op, r->am_key, op->next_chunk) :
					 UCS_ERR_CANCELED;
			if (st != UCS_OK) {
				/* None of the rest goes out: none of it will be answered. */
				if (op->status == UCS_OK)
					op->status = st;
				op->replies_left -= op->n_chunks - op->next_chunk;
				op->next_chunk = op->n_chunks;
				settle = 1;
				break;
			}
			op->next_chunk++;
			e->gets_out++;
		}
	}
	/* One at a time from the head: a completion may complete flushes behind it. */
	while (settle) {
		settle = 0;
		ucs_list_for_each(op, &mem->ops, link) {
			if (op->ep == e && op->xrma && op->kind == PM_OP_GET && !op->done &&
			    op->replies_left == 0 && op->sends_left == 0) {
				op_complete(op, op->status);
				settle = 1;
				break;
			}
		}
	}
}

static void xrma_send_cb(void *request, ucs_status_t status, void *user_data)
{
	struct pm_op *op = user_data;

	ucp_request_free(request);
	op->sends_left--;
	if (op->orphan) {
		if (op->sends_left == 0)
			op_release(op);
		return;
	}
	if (op->done)
		return;
	if (status != UCS_OK) {
		/* Its answer will not come. */
		if (op->status == UCS_OK)
			op->status = status;
		if (op->ack != NULL) {
			xrma_ack_one(op->mem, op->ack, DOCA_ERROR_NOT_CONNECTED);
		} else if (op->kind == PM_OP_GET && op->replies_left != 0) {
			op->replies_left--;
			if (op->ep->gets_out != 0)
				op->ep->gets_out--;
		}
	}
	xrma_try_done(op);
}

/* The xrma get of opid still waiting for answers; NULL when there is none. */
static struct pm_op *xrma_op_find(struct sdp_plugin_mem *mem, uint64_t opid)
{
	struct pm_op *op;

	/* Answers come in order, so the operation is near the head. */
	ucs_list_for_each(op, &mem->ops, link) {
		if (op->xrma && op->opid == opid)
			return op;
	}
	return NULL;
}

static void xrma_drop(struct sdp_plugin_mem *mem, const char *why)
{
	if (mem->xrma_refused++ % 1024 == 0)
		DOCA_LOG_ERR("dropped an xrma answer (%lu so far): %s", mem->xrma_refused, why);
}

static ucs_status_t xrma_rep_cb(void *arg, const void *header, size_t header_length, void *data,
				size_t length, const ucp_am_recv_param_t *param)
{
	struct sdp_plugin_mem *mem = arg;
	struct sdp_urom_xrma_rep rep;
	uint64_t off, chunk;
	struct pm_ack *a;
	struct pm_op *op;
	char why[160];

	if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0) {
		xrma_drop(mem, "a rendezvous message (answers are eager)");
		return UCS_OK;
	}
	why[0] = '\0';
	if (sdp_urom_xrma_rep_unpack(header, header_length, length, &rep, why, sizeof(why)) !=
	    DOCA_SUCCESS) {
		xrma_drop(mem, why);
		return UCS_OK;
	}
	if (rep.op == SDP_UROM_XRMA_PUT_ACK) {
		ucs_list_for_each(a, &mem->acks, link) {
			if (a->opid == rep.opid) {
				xrma_ack_one(mem, a, (doca_error_t)rep.status);
				return UCS_OK;
			}
		}
		xrma_drop(mem, "no put waits for it (failed already?)");
		return UCS_OK;
	}
	op = xrma_op_find(mem, rep.opid);
	if (op == NULL || op->kind != PM_OP_GET || op->replies_left == 0) {
		xrma_drop(mem, "no get waits for it (completed or failed already?)");
		return UCS_OK;
	}
	/* It must answer a request that went out, for exactly that request's bytes. */
	off = rep.va - op->va;
	chunk = op->len - off < SDP_UROM_XRMA_LEN_MAX ? op->len - off : SDP_UROM_XRMA_LEN_MAX;
	if (rep.va < op->va || off >= op->len || off % SDP_UROM_XRMA_LEN_MAX != 0 ||
	    off / SDP_UROM_XRMA_LEN_MAX >= op->next_chunk ||
	    (rep.status == DOCA_SUCCESS && rep.len != chunk)) {
		xrma_drop(mem, "it does not match a request of its get");
		return UCS_OK;
	}
	if (rep.status != DOCA_SUCCESS) {
		if (op->derr == DOCA_SUCCESS)
			op->derr = (doca_error_t)rep.status;
	} else {
		memcpy(op->local + off, data, rep.len);
	}
	op->replies_left--;
	if (op->ep->gets_out != 0)
		op->ep->gets_out--;
	xrma_try_done(op);
	xrma_pump(mem, op->ep);
	return UCS_OK;
}

/* Issue an xrma put, get or flush of region r (op already linked on mem->ops). */
static ucs_status_t xrma_issue(struct sdp_plugin_mem *mem, struct pm_op *op, struct pm_region *r,
			       enum pm_op_kind kind, uint64_t addr, void *local, size_t len)
{
	ucs_status_t st;
	unsigned n, i;

	op->xrma = 1;
	op->kind = kind;
	op->opid = mem->next_opid++;
	op->region_id = r->id;
	op->seq = op->ep->xrma_seq;
	if (kind == PM_OP_FLUSH)
		return UCS_OK; /* completed by xrma_flush_check */
	op->seq = ++op->ep->xrma_seq;
	op->va = addr;
	op->local = local;
	op->len = len;
	n = (unsigned)((len + SDP_UROM_XRMA_LEN_MAX - 1) / SDP_UROM_XRMA_LEN_MAX);
	op->n_chunks = n;
	op->hdrs = n == 1 ? op->hdr1 : malloc((size_t)n * SDP_UROM_XRMA_REQ_LEN);
	if (op->hdrs == NULL)
		return UCS_ERR_NO_MEMORY;
	if (kind == PM_OP_GET) {
		/* Sent within the endpoint's window, the rest as answers come. */
		op->replies_left = n;
		xrma_pump(mem, op->ep);
		return op->next_chunk == 0 && op->status != UCS_OK ? op->status : UCS_OK;
	}
	/* A put completes once sent; its answers go to a tracker the flushes wait for. */
	op->ack = calloc(1, sizeof(*op->ack));
	if (op->ack == NULL)
		return UCS_ERR_NO_MEMORY;
	op->ack->ep = op->ep;
	op->ack->region_id = r->id;
	op->ack->opid = op->opid;
	op->ack->seq = op->seq;
	op->ack->replies_left = n;
	ucs_list_add_tail(&mem->acks, &op->ack->link);
	op->ep->pending++;
	for (i = 0; i < n; i++) {
		st = xrma_send(op, r->am_key, i);
		if (st == UCS_OK)
			continue;
		if (op->status == UCS_OK)
			op->status = st;
		if (i == 0 && op->sends_left == 0) {
			xrma_ack_free(mem, op->ack);
			op->ack = NULL;
			return st;
		}
		/* As many answers lost as requests not sent (the tracker may go with them). */
		op->ack->replies_left -= n - i - 1;
		xrma_ack_one(mem, op->ack, DOCA_ERROR_NOT_CONNECTED);
		break;
	}
	return UCS_OK;
}

/* Whether r's puts, gets and flushes take the xrma path. */
static int region_xrma(const struct sdp_plugin_mem *mem, const struct pm_region *r)
{
	return r->ep->xrma && r->am_key != 0 && mem->xrma_ok;
}

/* Issue op on its endpoint. DOCA_SUCCESS: UCX owns it (or it is done already). */
static doca_error_t op_issue(struct sdp_plugin_mem *mem, struct pm_op *op, struct pm_region *r,
			     enum pm_op_kind kind, uint64_t addr, void *local, size_t len)
{
	ucp_request_param_t param;
	ucs_status_ptr_t req;
	ucs_status_t st;

	op->mem = mem;
	op->kind = kind;
	if (region_xrma(mem, r)) {
		/* Linked first, like UCX's: an answer may come inside the call. */
		ucs_list_add_tail(&mem->ops, &op->link);
		op->ep->pending++;
		st = xrma_issue(mem, op, r, kind, addr, local, len);
		if (st != UCS_OK && op->sends_left == 0 && !op->done && op->next_chunk == 0) {
			ucs_list_del(&op->link);
			op->ep->pending--;
			DOCA_LOG_ERR("xrma %s of %zu bytes at 0x%llx failed: %s",
				     op_kind_name(kind), len, (unsigned long long)addr,
				     ucs_status_string(st));
			return DOCA_ERROR_DRIVER;
		}
		if (kind == PM_OP_FLUSH)
			xrma_flush_check(mem, op->ep);
		else
			xrma_try_done(op);
		return DOCA_SUCCESS;
	}
	memset(&param, 0, sizeof(param));
	/*
	 * Immediate completion allowed: a small put over shared memory then costs no UCX
	 * request (NO_IMM_CMPL made every 8-byte put a request of its own, ~6 us each in
	 * bench/urom_rma). Either way the callback is deferred to sdp_plugin_mem_progress().
	 */
	param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	param.cb.send = op_ucx_cb;
	param.user_data = op;
	/* Linked first: UCX may complete it inside the call. */
	ucs_list_add_tail(&mem->ops, &op->link);
	op->ep->pending++;
	switch (kind) {
	case PM_OP_PUT:
		req = ucp_put_nbx(op->ep->ep, local, len, addr, r->rkey, &param);
		break;
	case PM_OP_GET:
		req = ucp_get_nbx(op->ep->ep, local, len, addr, r->rkey, &param);
		break;
	default:
		req = ucp_ep_flush_nbx(op->ep->ep, &param);
		break;
	}
	if (UCS_PTR_IS_ERR(req)) {
		ucs_list_del(&op->link);
		op->ep->pending--;
		DOCA_LOG_ERR("ucp %s of %zu bytes at 0x%llx failed: %s", op_kind_name(kind), len,
			     (unsigned long long)addr, ucs_status_string(UCS_PTR_STATUS(req)));
		return DOCA_ERROR_DRIVER;
	}
	if (req == NULL && !op->done)
		op_complete(op, UCS_OK); /* done at once (a small put, an idle flush) */
	return DOCA_SUCCESS;
}

/* ---- lookups ---- */

static struct pm_region *region_find(const struct sdp_plugin_mem *mem, uint64_t id)
{
	struct pm_region *r;

	ucs_list_for_each(r, &mem->regions, link) {
		if (r->id == id)
			return r;
	}
	return NULL;
}

static int range_inside(const struct pm_region *r, uint64_t addr, size_t len)
{
	return len > 0 && addr >= r->va && addr - r->va <= r->len &&
	       (uint64_t)len <= r->len - (addr - r->va);
}

/* The region for an operation, checked: NOT_FOUND, INVALID_VALUE (outside), NOT_CONNECTED. */
static doca_error_t region_for_op(const struct sdp_plugin_mem *mem, uint64_t id, uint64_t addr,
				  size_t len, int check_range, const char *what,
				  struct pm_region **r_p)
{
	struct pm_region *r = region_find(mem, id);

	if (r == NULL) {
		DOCA_LOG_ERR("%s: no region %llu", what, (unsigned long long)id);
		return DOCA_ERROR_NOT_FOUND;
	}
	if (check_range && !range_inside(r, addr, len)) {
		DOCA_LOG_ERR("%s of %zu bytes at 0x%llx refused: outside region %llu "
			     "[0x%llx, +%llu)",
			     what, len, (unsigned long long)addr, (unsigned long long)id,
			     (unsigned long long)r->va, (unsigned long long)r->len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (r->ep->ep == NULL || r->rkey == NULL || r->ep->failed) {
		DOCA_LOG_ERR("%s on region %llu refused: its endpoint was closed", what,
			     (unsigned long long)id);
		return DOCA_ERROR_NOT_CONNECTED;
	}
	*r_p = r;
	return DOCA_SUCCESS;
}

/* ---- endpoints ---- */

static struct pm_ep *ep_find(struct sdp_plugin_mem *mem, const void *addr, size_t len)
{
	struct pm_ep *e;

	ucs_list_for_each(e, &mem->eps, link) {
		if (e->ep != NULL && !e->failed && e->addr_len == len &&
		    memcmp(e->addr, addr, len) == 0)
			return e;
	}
	return NULL;
}

/* The endpoint failed (peer error handling only): what waits for answers fails now. */
static void pm_ep_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
	struct pm_ep *e = arg;

	DOCA_LOG_ERR("endpoint %p to a memory owner failed: %s", (void *)ep,
		     ucs_status_string(status));
	e->failed = 1;
	xrma_fail_ep(e->mem, e, status);
}

/*
 * Whether e's regions with an am_key use the xrma path: SOFTDPU_UROM_XRMA=1 always, =0
 * never, else (auto) where the endpoint runs over TCP, on which UCX emulates RMA with active
 * messages of its own (its lanes, as ucp_ep_print_info() tells them: UCX 1.13 has no query).
 */
static int pm_ep_wants_xrma(ucp_ep_h ep)
{
	const char *env = getenv("SOFTDPU_UROM_XRMA");
	char *buf = NULL;
	size_t size = 0;
	int tcp = 0;
	FILE *f;

	if (env != NULL && (strcmp(env, "1") == 0 || strcmp(env, "on") == 0))
		return 1;
	if (env != NULL && (strcmp(env, "0") == 0 || strcmp(env, "off") == 0))
		return 0;
	f = open_memstream(&buf, &size);
	if (f == NULL)
		return 0;
	ucp_ep_print_info(ep, f);
	if (fclose(f) == 0 && buf != NULL)
		tcp = strstr(buf, "tcp/") != NULL;
	free(buf);
	return tcp;
}

static doca_error_t ep_get(struct sdp_plugin_mem *mem, const void *addr, size_t len,
			   struct pm_ep **e_p)
{
	ucp_ep_params_t params;
	uint8_t *padded;
	struct pm_ep *e;
	ucs_status_t st;

	e = ep_find(mem, addr, len);
	if (e != NULL) {
		*e_p = e;
		return DOCA_SUCCESS;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL || (e->addr = malloc(len)) == NULL) {
		DOCA_LOG_ERR("failed to allocate an endpoint record (address of %zu bytes)", len);
		free(e);
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(e->addr, addr, len);
	e->addr_len = len;
	/* UCX takes no length: give it the address followed by zeros (see PM_RKEY_WALK_MAX). */
	padded = calloc(1, len + SDP_UROM_MEMH_ADDR_MAX);
	if (padded == NULL) {
		DOCA_LOG_ERR("failed to allocate a copy of an owner address of %zu bytes", len);
		free(e->addr);
		free(e);
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(padded, addr, len);
	memset(&params, 0, sizeof(params));
	/* Peer error handling only where shared memory is ruled out (sdp_plugin_util.h). */
	params.field_mask =
		UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
	params.address = (const ucp_address_t *)padded;
	params.err_mode = sdp_plugin_err_mode();
	if (params.err_mode == UCP_ERR_HANDLING_MODE_PEER) {
		params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
		params.err_handler.cb = pm_ep_err_cb;
		params.err_handler.arg = e;
	}
	e->mem = mem;
	st = ucp_ep_create(mem->worker, &params, &e->ep);
	free(padded); /* UCX copies what it needs of the address */
	if (st != UCS_OK) {
		DOCA_LOG_ERR("ucp_ep_create to an owner address of %zu bytes failed: %s", len,
			     ucs_status_string(st));
		free(e->addr);
		free(e);
		return DOCA_ERROR_DRIVER;
	}
	e->xrma = pm_ep_wants_xrma(e->ep);
	ucs_list_add_tail(&mem->eps, &e->link);
	DOCA_LOG_DBG("endpoint %p to an owner address of %zu bytes created%s", (void *)e->ep, len,
		     e->xrma ? " (xrma path)" : "");
	*e_p = e;
	return DOCA_SUCCESS;
}

static int ep_idle(const void *arg)
{
	return ((const struct pm_ep *)arg)->pending == 0;
}

/*
 * Close e's UCP endpoint: flush then close gently within the bound, else by force (its
 * operations then complete as cancelled). The record stays; e->ep is NULL afterwards.
 */
static void ep_close(struct sdp_plugin_mem *mem, struct pm_ep *e, int force, int timeout_ms)
{
	int64_t deadline = pm_now_ms() + timeout_ms;
	ucp_request_param_t param;
	ucs_status_ptr_t req;
	ucs_status_t st;

	if (e->ep == NULL)
		return;
	memset(&param, 0, sizeof(param));
	if (!force) {
		if (!pm_wait(mem, ep_idle, e, deadline))
			force = 1;
		else if ((st = pm_req_wait(mem, ucp_ep_flush_nbx(e->ep, &param), deadline)) !=
			 UCS_OK)
			force = 1;
	}
	param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	param.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
	req = ucp_ep_close_nbx(e->ep, &param);
	if (force && deadline < pm_now_ms() + PM_FORCE_GRACE_MS)
		deadline = pm_now_ms() + PM_FORCE_GRACE_MS;
	st = pm_req_wait(mem, req, deadline);
	if (st == UCS_INPROGRESS)
		DOCA_LOG_WARN("close of endpoint %p did not finish within %d ms; UCX finishes it",
			      (void *)e->ep, timeout_ms);
	else if (st != UCS_OK)
		DOCA_LOG_DBG("close of endpoint %p: %s", (void *)e->ep, ucs_status_string(st));
	DOCA_LOG_DBG("endpoint %p closed%s", (void *)e->ep, force ? " by force" : "");
	e->ep = NULL;
	/* Answers to its xrma operations can no longer come. */
	xrma_fail_ep(mem, e, UCS_ERR_CANCELED);
}

static void ep_free(struct pm_ep *e)
{
	ucs_list_del(&e->link);
	free(e->addr);
	free(e);
}

/* The blocking call on e timed out: close it by force, so nothing touches its buffers later. */
static void ep_fail(struct sdp_plugin_mem *mem, struct pm_ep *e)
{
	struct pm_region *r;

	DOCA_LOG_ERR("closing endpoint %p by force after a time-out; its regions fail from now on",
		     (void *)e->ep);
	ep_close(mem, e, 1, 0);
	ucs_list_for_each(r, &mem->regions, link) {
		if (r->ep == e && r->rkey != NULL) {
			ucp_rkey_destroy(r->rkey);
			r->rkey = NULL;
		}
	}
}

doca_error_t sdp_plugin_mem_abort(struct sdp_plugin_mem *mem, uint64_t region_id)
{
	struct pm_op *op, *tmp;
	struct pm_region *r;
	struct pm_ep *e;

	if (mem == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	r = region_find(mem, region_id);
	if (r == NULL)
		return DOCA_ERROR_NOT_FOUND;
	e = r->ep;
	if (e->ep == NULL || e->pending == 0)
		return DOCA_ERROR_EMPTY;
	ep_fail(mem, e); /* what UCX finishes during the close lands on done */
	/* What it did not finish: UCX keeps the record (freed when it calls back), a copy
	 * carries the callback to the next progress. */
	ucs_list_for_each_safe(op, tmp, &mem->ops, link) {
		struct pm_op *late;

		if (op->ep != e)
			continue;
		ucs_list_del(&op->link);
		e->pending--;
		op->orphan = 1;
		if (op->cb == NULL)
			continue; /* a blocking call's, whose waiter already gave up */
		late = calloc(1, sizeof(*late));
		if (late == NULL) {
			op->region->inflight--;
			mem->inflight--;
			op->cb(op->arg, DOCA_ERROR_NOT_CONNECTED);
			continue;
		}
		*late = *op;
		late->orphan = 0;
		late->done = 1;
		late->status = UCS_ERR_CANCELED;
		ucs_list_add_tail(&mem->done, &late->link);
	}
	return DOCA_SUCCESS;
}

/* ---- table ---- */

void sdp_plugin_mem_ucp_params(ucp_params_t *params)
{
	if (params == NULL)
		return;
	params->field_mask |= UCP_PARAM_FIELD_FEATURES;
	params->features |= UCP_FEATURE_RMA | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
}

doca_error_t sdp_plugin_mem_create(ucp_worker_h worker, struct sdp_plugin_mem **mem_p)
{
	struct sdp_plugin_mem *mem;

	if (worker == NULL || mem_p == NULL) {
		DOCA_LOG_ERR("sdp_plugin_mem_create: invalid argument: worker %p, mem %p",
			     (void *)worker, (void *)mem_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	mem = calloc(1, sizeof(*mem));
	if (mem == NULL) {
		DOCA_LOG_ERR("failed to allocate a host memory table");
		return DOCA_ERROR_NO_MEMORY;
	}
	mem->worker = worker;
	/* Without UCP_FEATURE_WAKEUP there is no fd: waits nap instead. */
	if (ucp_worker_get_efd(worker, &mem->efd) != UCS_OK)
		mem->efd = -1;
	ucs_list_head_init(&mem->eps);
	ucs_list_head_init(&mem->regions);
	ucs_list_head_init(&mem->ops);
	ucs_list_head_init(&mem->done);
	ucs_list_head_init(&mem->acks);
	mem->next_id = 1;
	/* Answers name their operation: make the ids hard to guess for other peers. */
	if (getrandom(&mem->next_opid, sizeof(mem->next_opid), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(mem->next_opid))
		mem->next_opid = 1;
	/* Answers of the xrma path; a worker without UCP_FEATURE_AM keeps UCX's RMA only. */
	mem->xrma_ok =
		sdp_ucx_am_handler(worker, SDP_UROM_XRMA_REP_AM_ID, xrma_rep_cb, mem) == UCS_OK;
	*mem_p = mem;
	return DOCA_SUCCESS;
}

/* Run the callbacks of the operations completed so far (not those their callbacks start). */
static int pm_deliver(struct sdp_plugin_mem *mem)
{
	size_t n = ucs_list_length(&mem->done), i;
	struct pm_op *op;

	for (i = 0; i < n && !ucs_list_is_empty(&mem->done); i++) {
		op = ucs_list_extract_head(&mem->done, struct pm_op, link);
		op->region->inflight--;
		mem->inflight--;
		op->cb(op->arg, op_result(op));
		op_release(op);
	}
	return (int)i;
}

int sdp_plugin_mem_progress(struct sdp_plugin_mem *mem)
{
	int n;

	if (mem == NULL)
		return 0;
	n = (int)ucp_worker_progress(mem->worker);
	return n + pm_deliver(mem) != 0;
}

size_t sdp_plugin_mem_inflight(const struct sdp_plugin_mem *mem)
{
	return mem != NULL ? mem->inflight : 0;
}

static int pm_no_ops(const void *arg)
{
	const struct sdp_plugin_mem *mem = arg;

	return mem->ops.next == &mem->ops;
}

void sdp_plugin_mem_destroy(struct sdp_plugin_mem *mem)
{
	struct pm_region *r, *r_tmp;
	struct pm_ep *e, *e_tmp;
	struct pm_op *op;

	if (mem == NULL)
		return;
	/* Let what is in flight finish (bounded), then close every endpoint. */
	(void)pm_wait(mem, pm_no_ops, mem, pm_now_ms() + PM_CLOSE_TIMEOUT_MS);
	ucs_list_for_each(e, &mem->eps, link) {
		if (e->pending != 0) {
			ep_close(mem, e, 1, 0);
			continue;
		}
		/* UCX's rule: the rkeys go before their endpoint. */
		ucs_list_for_each(r, &mem->regions, link) {
			if (r->ep == e && r->rkey != NULL) {
				ucp_rkey_destroy(r->rkey);
				r->rkey = NULL;
			}
		}
		ep_close(mem, e, 0, PM_CLOSE_TIMEOUT_MS);
	}
	/* Operations UCX did not finish even after a forced close: it may still call back. */
	while (!ucs_list_is_empty(&mem->ops)) {
		op = ucs_list_extract_head(&mem->ops, struct pm_op, link);
		DOCA_LOG_WARN("a %s operation outlived its endpoint's close; dropping it",
			      op->cb != NULL ? "non-blocking" : "blocking");
		if (op->cb != NULL) {
			op->region->inflight--;
			mem->inflight--;
			op->cb(op->arg, DOCA_ERROR_NOT_CONNECTED);
		}
		op->orphan = 1;
	}
	while (!ucs_list_is_empty(&mem->done))
		pm_deliver(mem);
	ucs_list_for_each_safe(r, r_tmp, &mem->regions, link) {
		if (r->rkey != NULL)
			ucp_rkey_destroy(r->rkey);
		ucs_list_del(&r->link);
		free(r->memh);
		free(r);
	}
	while (!ucs_list_is_empty(&mem->acks))
		free(ucs_list_extract_head(&mem->acks, struct pm_ack, link));
	ucs_list_for_each_safe(e, e_tmp, &mem->eps, link)
		ep_free(e);
	/* Nothing may call into freed memory. */
	if (mem->xrma_ok)
		(void)sdp_ucx_am_handler(mem->worker, SDP_UROM_XRMA_REP_AM_ID, NULL, NULL);
	free(mem);
}

/* ---- import ---- */

static doca_error_t import_parts(struct sdp_plugin_mem *mem, const void *owner_addr,
				 size_t owner_addr_len, uint64_t va, uint64_t len, const void *rkey,
				 size_t rkey_len, uint64_t am_key, struct pm_region **r_p)
{
	size_t padded_len = rkey_len > PM_RKEY_BUF_MIN ? rkey_len : PM_RKEY_BUF_MIN;
	struct pm_region *r;
	doca_error_t status;
	uint8_t *padded;
	ucs_status_t st;

	r = calloc(1, sizeof(*r));
	/* UCX takes no length: unpack from a zero-filled copy it cannot walk out of. */
	padded = calloc(1, padded_len);
	if (r == NULL || padded == NULL) {
		DOCA_LOG_ERR("failed to allocate a region record");
		free(padded);
		free(r);
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(padded, rkey, rkey_len);
	status = ep_get(mem, owner_addr, owner_addr_len, &r->ep);
	if (status != DOCA_SUCCESS) {
		free(padded);
		free(r);
		return status;
	}
	r->ep->users++;
	st = ucp_ep_rkey_unpack(r->ep->ep, padded, &r->rkey);
	free(padded); /* the unpacked key holds no pointer into the buffer */
	if (st != UCS_OK) {
		DOCA_LOG_ERR("ucp_ep_rkey_unpack of a %zu-byte key failed: %s", rkey_len,
			     ucs_status_string(st));
		if (--r->ep->users == 0) {
			ep_close(mem, r->ep, 0, PM_CLOSE_TIMEOUT_MS);
			ep_free(r->ep);
		}
		free(r);
		return DOCA_ERROR_DRIVER;
	}
	r->id = mem->next_id++;
	r->va = va;
	r->len = len;
	r->am_key = am_key;
	ucs_list_add_tail(&mem->regions, &r->link);
	DOCA_LOG_DBG("region %llu: %llu bytes at 0x%llx", (unsigned long long)r->id,
		     (unsigned long long)len, (unsigned long long)va);
	*r_p = r;
	return DOCA_SUCCESS;
}

static doca_error_t import_memh(struct sdp_plugin_mem *mem, const void *memh, size_t memh_len,
				const char *source, struct pm_region **r_p)
{
	struct sdp_urom_memh m;
	doca_error_t status;
	char why[128];

	why[0] = '\0';
	status = sdp_urom_memh_unpack_why(memh, memh_len, &m, why, sizeof(why));
	if (status != DOCA_SUCCESS) {
		DOCA_LOG_ERR("refusing a memh of %zu bytes from %s: %s", memh_len, source, why);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return import_parts(mem, m.owner_addr, m.owner_addr_len, m.va, m.len, m.rkey, m.rkey_len,
			    m.am_key, r_p);
}

doca_error_t sdp_plugin_mem_import(struct sdp_plugin_mem *mem, const void *memh, size_t memh_len,
				   uint64_t *region_id_p)
{
	struct pm_region *r;
	doca_error_t status;

	if (mem == NULL || memh == NULL || region_id_p == NULL) {
		DOCA_LOG_ERR("sdp_plugin_mem_import: invalid argument: mem %p, memh %p, "
			     "region_id %p",
			     (void *)mem, memh, (void *)region_id_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = import_memh(mem, memh, memh_len, "a command", &r);
	if (status != DOCA_SUCCESS)
		return status;
	*region_id_p = r->id;
	return DOCA_SUCCESS;
}

doca_error_t sdp_plugin_mem_import_rkey(struct sdp_plugin_mem *mem, const void *owner_addr,
					size_t owner_addr_len, uint64_t va, uint64_t len,
					const void *rkey, size_t rkey_len, uint64_t *region_id_p)
{
	struct pm_region *r;
	doca_error_t status;

	if (mem == NULL || owner_addr == NULL || owner_addr_len == 0 || rkey == NULL ||
	    rkey_len == 0 || len == 0 || len > UINT64_MAX - va || region_id_p == NULL) {
		DOCA_LOG_ERR("sdp_plugin_mem_import_rkey: invalid argument: mem %p, owner address "
			     "%p of %zu bytes, region of %llu bytes at 0x%llx, rkey %p of %zu "
			     "bytes, region_id %p",
			     (void *)mem, owner_addr, owner_addr_len, (unsigned long long)len,
			     (unsigned long long)va, rkey, rkey_len, (void *)region_id_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = import_parts(mem, owner_addr, owner_addr_len, va, len, rkey, rkey_len, 0, &r);
	if (status != DOCA_SUCCESS)
		return status;
	*region_id_p = r->id;
	return DOCA_SUCCESS;
}

/* Import memh bytes of domain member domain_id, keeping a copy of them in the region (cache key). */
static doca_error_t import_keep(struct sdp_plugin_mem *mem, const void *memh, size_t memh_len,
				uint64_t domain_id, struct pm_region **r_p)
{
	uint8_t *copy = malloc(memh_len > 0 ? memh_len : 1);
	doca_error_t status;

	if (copy == NULL) {
		DOCA_LOG_ERR("failed to allocate a copy of a memh of %zu bytes", memh_len);
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(copy, memh, memh_len);
	status = import_memh(mem, memh, memh_len, "a domain member", r_p);
	if (status != DOCA_SUCCESS) {
		free(copy);
		return status;
	}
	(*r_p)->domain_id = domain_id;
	(*r_p)->memh = copy;
	(*r_p)->memh_len = memh_len;
	return DOCA_SUCCESS;
}

doca_error_t sdp_plugin_mem_import_domain(struct sdp_plugin_mem *mem, struct urom_worker_ctx *ctx,
					  uint64_t domain_id, uint64_t va, uint64_t *region_id_p)
{
	struct pm_region *r;
	doca_error_t status;
	void *memh = NULL;
	size_t memh_len = 0;
	int seg = -1;

	if (mem == NULL || ctx == NULL || region_id_p == NULL) {
		DOCA_LOG_ERR("sdp_plugin_mem_import_domain: invalid argument: mem %p, ctx %p, "
			     "region_id %p",
			     (void *)mem, (void *)ctx, (void *)region_id_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (ctx->domain_iface.seg_lookup == NULL || ctx->domain_iface.memh_lookup == NULL) {
		DOCA_LOG_ERR("the worker runtime offers no domain lookups");
		return DOCA_ERROR_NOT_FOUND;
	}
	status = doca_urom_worker_domain_seg_lookup(ctx, domain_id, va, &seg);
	if (status != DOCA_SUCCESS) {
		DOCA_LOG_ERR("no segment of domain member %llu holds 0x%llx: %s",
			     (unsigned long long)domain_id, (unsigned long long)va,
			     doca_error_get_name(status));
		return status;
	}
	/* Looked up on every call: a later domain may reuse the member id with other memory. */
	status = doca_urom_worker_domain_memh_lookup(ctx, domain_id, seg, &memh_len, &memh);
	if (status != DOCA_SUCCESS) {
		DOCA_LOG_ERR("no memh for segment %d of domain member %llu: %s", seg,
			     (unsigned long long)domain_id, doca_error_get_name(status));
		return status;
	}
	if (memh == NULL) {
		DOCA_LOG_ERR("the runtime gave a NULL memh for segment %d of domain member %llu",
			     seg, (unsigned long long)domain_id);
		return DOCA_ERROR_INVALID_VALUE;
	}
	ucs_list_for_each(r, &mem->regions, link) {
		if (!r->from_domain || r->domain_id != domain_id || r->seg != seg)
			continue;
		if (r->memh_len != memh_len || memcmp(r->memh, memh, memh_len) != 0) {
			DOCA_LOG_DBG("segment %d of domain member %llu changed: importing it again",
				     seg, (unsigned long long)domain_id);
			/* Busy: it stays the table's (released at destroy), out of the cache. */
			r->from_domain = 0;
			if (r->inflight == 0)
				(void)sdp_plugin_mem_release(mem, r->id);
			break;
		}
		if ((r->rkey != NULL && !r->ep->failed) || r->inflight != 0) {
			*region_id_p = r->id;
			return DOCA_SUCCESS;
		}
		/* Its endpoint was closed by force or failed: import the segment afresh. */
		(void)sdp_plugin_mem_release(mem, r->id);
		break;
	}
	status = import_keep(mem, memh, memh_len, domain_id, &r);
	if (status != DOCA_SUCCESS)
		return status;
	r->from_domain = 1;
	r->seg = seg;
	*region_id_p = r->id;
	return DOCA_SUCCESS;
}

/* The owner address inside memh bytes (pointing into them); 0 when they do not parse. */
static int memh_owner(const void *memh, size_t len, const uint8_t **addr, size_t *addr_len)
{
	struct sdp_urom_memh m;

	if (sdp_urom_memh_unpack(memh, len, &m) != DOCA_SUCCESS)
		return 0;
	*addr = m.owner_addr;
	*addr_len = m.owner_addr_len;
	return 1;
}

/* Drop the least recently used member region nothing holds; 0 when every one is held. */
static int member_evict(struct sdp_plugin_mem *mem)
{
	struct pm_region *r, *lru = NULL;

	ucs_list_for_each(r, &mem->regions, link) {
		if (r->from_member && r->pins == 0 && r->inflight == 0 &&
		    (lru == NULL || r->last_use < lru->last_use))
			lru = r;
	}
	if (lru == NULL)
		return 0;
	return sdp_plugin_mem_release(mem, lru->id) == DOCA_SUCCESS;
}

doca_error_t sdp_plugin_mem_import_member(struct sdp_plugin_mem *mem, struct urom_worker_ctx *ctx,
					  uint64_t domain_id, const void *memh, size_t memh_len,
					  uint64_t *region_id_p)
{
	const uint8_t *owner, *seg_owner;
	size_t owner_len, seg_owner_len, seg_memh_len = 0;
	void *seg_memh = NULL;
	struct pm_region *r;
	doca_error_t status;

	if (mem == NULL || ctx == NULL || memh == NULL || memh_len == 0 || region_id_p == NULL) {
		DOCA_LOG_ERR("sdp_plugin_mem_import_member: invalid argument: mem %p, ctx %p, "
			     "memh %p of %zu bytes, region_id %p",
			     (void *)mem, (void *)ctx, memh, memh_len, (void *)region_id_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	ucs_list_for_each(r, &mem->regions, link) {
		if (r->from_member && r->domain_id == domain_id && r->rkey != NULL &&
		    !r->ep->failed && r->memh_len == memh_len &&
		    memcmp(r->memh, memh, memh_len) == 0) {
			r->pins++;
			r->last_use = ++mem->use_tick;
			*region_id_p = r->id;
			return DOCA_SUCCESS;
		}
	}
	if (!memh_owner(memh, memh_len, &owner, &owner_len)) {
		DOCA_LOG_ERR("refusing a memh of %zu bytes from domain member %llu: it does not "
			     "parse",
			     memh_len, (unsigned long long)domain_id);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* The member may name only its own memory: the owner of its first domain segment. */
	if (ctx->domain_iface.memh_lookup == NULL ||
	    doca_urom_worker_domain_memh_lookup(ctx, domain_id, 0, &seg_memh_len, &seg_memh) !=
		    DOCA_SUCCESS ||
	    seg_memh == NULL || !memh_owner(seg_memh, seg_memh_len, &seg_owner, &seg_owner_len)) {
		DOCA_LOG_ERR("refusing a memh from domain member %llu: it exported no segment to "
			     "compare its owner with",
			     (unsigned long long)domain_id);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (owner_len != seg_owner_len || memcmp(owner, seg_owner, owner_len) != 0) {
		DOCA_LOG_ERR("refusing a memh from domain member %llu: its owner is not the "
			     "process that exported the member's domain segments",
			     (unsigned long long)domain_id);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (mem->nmember >= SDP_PLUGIN_MEM_MEMBER_MAX && !member_evict(mem)) {
		DOCA_LOG_ERR("%u member regions are held: no room for another", mem->nmember);
		return DOCA_ERROR_FULL;
	}
	status = import_keep(mem, memh, memh_len, domain_id, &r);
	if (status != DOCA_SUCCESS)
		return status;
	r->from_member = 1;
	r->pins = 1;
	r->last_use = ++mem->use_tick;
	mem->nmember++;
	*region_id_p = r->id;
	return DOCA_SUCCESS;
}

doca_error_t sdp_plugin_mem_unpin(struct sdp_plugin_mem *mem, uint64_t region_id)
{
	struct pm_region *r;

	if (mem == NULL) {
		DOCA_LOG_ERR("sdp_plugin_mem_unpin: invalid argument: mem is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	r = region_find(mem, region_id);
	if (r == NULL || !r->from_member || r->pins == 0) {
		DOCA_LOG_ERR("sdp_plugin_mem_unpin: region %llu is no pinned member region",
			     (unsigned long long)region_id);
		return r == NULL ? DOCA_ERROR_NOT_FOUND : DOCA_ERROR_BAD_STATE;
	}
	r->pins--;
	return DOCA_SUCCESS;
}

doca_error_t sdp_plugin_mem_release(struct sdp_plugin_mem *mem, uint64_t region_id)
{
	struct pm_region *r;
	struct pm_ep *e;
	ucs_status_t st;

	if (mem == NULL) {
		DOCA_LOG_ERR("sdp_plugin_mem_release: invalid argument: mem is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	r = region_find(mem, region_id);
	if (r == NULL) {
		DOCA_LOG_ERR("sdp_plugin_mem_release: no region %llu",
			     (unsigned long long)region_id);
		return DOCA_ERROR_NOT_FOUND;
	}
	if (r->inflight != 0) {
		DOCA_LOG_ERR("sdp_plugin_mem_release: region %llu has %u operations in flight",
			     (unsigned long long)region_id, r->inflight);
		return DOCA_ERROR_IN_USE;
	}
	e = r->ep;
	if (r->rkey != NULL) {
		/* UCX's rule: operations that used the key are flushed before it goes. */
		if (e->ep != NULL) {
			ucp_request_param_t param;

			memset(&param, 0, sizeof(param));
			st = pm_req_wait(mem, ucp_ep_flush_nbx(e->ep, &param),
					 pm_now_ms() + PM_CLOSE_TIMEOUT_MS);
			if (st != UCS_OK)
				DOCA_LOG_WARN("flush before releasing region %llu: %s",
					      (unsigned long long)region_id, ucs_status_string(st));
		}
		ucp_rkey_destroy(r->rkey);
	}
	ucs_list_del(&r->link);
	if (r->from_member)
		mem->nmember--;
	free(r->memh);
	free(r);
	if (--e->users == 0) {
		ep_close(mem, e, e->pending != 0, PM_CLOSE_TIMEOUT_MS);
		if (e->pending == 0)
			ep_free(e);
		/* else: operations of blocking calls that gave up still point at it */
	}
	DOCA_LOG_DBG("region %llu released", (unsigned long long)region_id);
	return DOCA_SUCCESS;
}

/* ---- queries ---- */

doca_error_t sdp_plugin_mem_region_get(const struct sdp_plugin_mem *mem, uint64_t region_id,
				       uint64_t *va_p, uint64_t *len_p)
{
	const struct pm_region *r;

	if (mem == NULL) {
		DOCA_LOG_ERR("sdp_plugin_mem_region_get: invalid argument: mem is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	r = region_find(mem, region_id);
	if (r == NULL)
		return DOCA_ERROR_NOT_FOUND;
	if (va_p != NULL)
		*va_p = r->va;
	if (len_p != NULL)
		*len_p = r->len;
	return DOCA_SUCCESS;
}

doca_error_t sdp_plugin_mem_check(const struct sdp_plugin_mem *mem, uint64_t region_id,
				  uint64_t addr, size_t len)
{
	const struct pm_region *r;

	if (mem == NULL) {
		DOCA_LOG_ERR("sdp_plugin_mem_check: invalid argument: mem is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	r = region_find(mem, region_id);
	if (r == NULL)
		return DOCA_ERROR_NOT_FOUND;
	if (!range_inside(r, addr, len)) {
		DOCA_LOG_ERR("%zu bytes at 0x%llx are outside region %llu [0x%llx, +%llu)", len,
			     (unsigned long long)addr, (unsigned long long)region_id,
			     (unsigned long long)r->va, (unsigned long long)r->len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

int sdp_plugin_mem_uses_xrma(const struct sdp_plugin_mem *mem, uint64_t region_id)
{
	const struct pm_region *r = mem != NULL ? region_find(mem, region_id) : NULL;

	if (r == NULL)
		return -1;
	return region_xrma(mem, r);
}

doca_error_t sdp_plugin_mem_find(const struct sdp_plugin_mem *mem, uint64_t addr, size_t len,
				 uint64_t *region_id_p)
{
	const struct pm_region *r;

	if (mem == NULL || len == 0 || region_id_p == NULL) {
		DOCA_LOG_ERR("sdp_plugin_mem_find: invalid argument: mem %p, len %zu, region_id %p",
			     (const void *)mem, len, (void *)region_id_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	ucs_list_for_each(r, &mem->regions, link) {
		if (range_inside(r, addr, len)) {
			*region_id_p = r->id;
			return DOCA_SUCCESS;
		}
	}
	return DOCA_ERROR_NOT_FOUND;
}

/* ---- non-blocking transfers ---- */

static doca_error_t pm_rma_nb(struct sdp_plugin_mem *mem, enum pm_op_kind kind, uint64_t id,
			      uint64_t addr, void *local, size_t len, sdp_plugin_mem_cb_func_t cb,
			      void *arg, const char *what)
{
	struct pm_region *r;
	doca_error_t status;
	struct pm_op *op;

	if (mem == NULL || cb == NULL || (kind != PM_OP_FLUSH && (local == NULL || len == 0))) {
		DOCA_LOG_ERR("%s: invalid argument: mem %p, local %p, len %zu, cb %s", what,
			     (void *)mem, local, len, cb != NULL ? "set" : "NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = region_for_op(mem, id, addr, len, kind != PM_OP_FLUSH, what, &r);
	if (status != DOCA_SUCCESS)
		return status;
	op = calloc(1, sizeof(*op));
	if (op == NULL) {
		DOCA_LOG_ERR("%s: failed to allocate an operation", what);
		return DOCA_ERROR_NO_MEMORY;
	}
	op->region = r;
	op->ep = r->ep;
	op->cb = cb;
	op->arg = arg;
	status = op_issue(mem, op, r, kind, addr, local, len);
	if (status != DOCA_SUCCESS) {
		op_release(op);
		return status;
	}
	r->inflight++;
	mem->inflight++;
	return DOCA_SUCCESS;
}

doca_error_t sdp_plugin_mem_put_nb(struct sdp_plugin_mem *mem, uint64_t region_id, uint64_t addr,
				   const void *local, size_t len, sdp_plugin_mem_cb_func_t cb,
				   void *arg)
{
	/* UCX takes a non-const buffer for puts too; it only reads it. */
	return pm_rma_nb(mem, PM_OP_PUT, region_id, addr, (void *)local, len, cb, arg,
			 "sdp_plugin_mem_put_nb");
}

doca_error_t sdp_plugin_mem_get_nb(struct sdp_plugin_mem *mem, uint64_t region_id, uint64_t addr,
				   void *local, size_t len, sdp_plugin_mem_cb_func_t cb, void *arg)
{
	return pm_rma_nb(mem, PM_OP_GET, region_id, addr, local, len, cb, arg,
			 "sdp_plugin_mem_get_nb");
}

doca_error_t sdp_plugin_mem_flush_nb(struct sdp_plugin_mem *mem, uint64_t region_id,
				     sdp_plugin_mem_cb_func_t cb, void *arg)
{
	return pm_rma_nb(mem, PM_OP_FLUSH, region_id, 0, NULL, 0, cb, arg,
			 "sdp_plugin_mem_flush_nb");
}

/* ---- blocking transfers ---- */

static int op_done(const void *arg)
{
	return ((const struct pm_op *)arg)->done;
}

/*
 * Issue one blocking operation of kind and wait for it until deadline. On time-out the
 * endpoint is closed by force (after which UCX no longer touches local).
 */
static doca_error_t pm_blocking_one(struct sdp_plugin_mem *mem, struct pm_region *r,
				    enum pm_op_kind kind, uint64_t addr, void *local, size_t len,
				    int64_t deadline, const char *what)
{
	doca_error_t status;
	struct pm_op *op;

	op = calloc(1, sizeof(*op));
	if (op == NULL) {
		DOCA_LOG_ERR("%s: failed to allocate an operation", what);
		return DOCA_ERROR_NO_MEMORY;
	}
	op->ep = r->ep;
	status = op_issue(mem, op, r, kind, addr, local, len);
	if (status != DOCA_SUCCESS) {
		op_release(op);
		return status;
	}
	if (!pm_wait(mem, op_done, op, deadline)) {
		DOCA_LOG_ERR("%s of %zu bytes at 0x%llx (%s) timed out", what, len,
			     (unsigned long long)addr, op_kind_name(kind));
		ep_fail(mem, r->ep);
		if (!op->done) {
			op->orphan = 1; /* UCX still owns it; freed when it completes */
			ucs_list_del(&op->link);
			op->ep->pending--;
		} else {
			op_release(op);
		}
		return DOCA_ERROR_TIME_OUT;
	}
	status = op_result(op);
	if (status != DOCA_SUCCESS)
		DOCA_LOG_ERR("%s of %zu bytes at 0x%llx (%s) failed: %s", what, len,
			     (unsigned long long)addr, op_kind_name(kind),
			     doca_error_get_name(status));
	op_release(op);
	return status;
}

static doca_error_t pm_rma(struct sdp_plugin_mem *mem, enum pm_op_kind kind, uint64_t id,
			   uint64_t addr, void *local, size_t len, int timeout_ms, const char *what)
{
	struct pm_region *r;
	doca_error_t status;
	int64_t deadline;

	if (mem == NULL || timeout_ms < 0 || (kind != PM_OP_FLUSH && (local == NULL || len == 0))) {
		DOCA_LOG_ERR("%s: invalid argument: mem %p, local %p, len %zu, timeout %d ms", what,
			     (void *)mem, local, len, timeout_ms);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = region_for_op(mem, id, addr, len, kind != PM_OP_FLUSH, what, &r);
	if (status != DOCA_SUCCESS)
		return status;
	deadline = pm_now_ms() + timeout_ms;
	if (kind != PM_OP_FLUSH) {
		status = pm_blocking_one(mem, r, kind, addr, local, len, deadline, what);
		if (status != DOCA_SUCCESS || kind == PM_OP_GET)
			return status;
	}
	/* A put is in host memory only once the endpoint is flushed. */
	return pm_blocking_one(mem, r, PM_OP_FLUSH, 0, NULL, 0, deadline, what);
}

doca_error_t sdp_plugin_mem_put(struct sdp_plugin_mem *mem, uint64_t region_id, uint64_t addr,
				const void *local, size_t len, int timeout_ms)
{
	return pm_rma(mem, PM_OP_PUT, region_id, addr, (void *)local, len, timeout_ms,
		      "sdp_plugin_mem_put");
}

doca_error_t sdp_plugin_mem_get(struct sdp_plugin_mem *mem, uint64_t region_id, uint64_t addr,
				void *local, size_t len, int timeout_ms)
{
	return pm_rma(mem, PM_OP_GET, region_id, addr, local, len, timeout_ms,
		      "sdp_plugin_mem_get");
}

doca_error_t sdp_plugin_mem_flush(struct sdp_plugin_mem *mem, uint64_t region_id, int timeout_ms)
{
	return pm_rma(mem, PM_OP_FLUSH, region_id, 0, NULL, 0, timeout_ms, "sdp_plugin_mem_flush");
}
