/*
 * worker_sandbox plugin, worker half: UCX tagged send and receive offloaded to the worker.
 *
 * The plugin owns a UCP context (TAG, RMA, WAKEUP) and worker; its addr op hands out that
 * worker's address, which softdpu's runtime gives to the other members of a domain. Commands
 * (common/worker_sandbox.h):
 *
 *   TAG_SEND  the destination is a domain worker id: doca_urom_worker_domain_addr_lookup() gives
 *             its sandbox address, an endpoint to it is cached per id (a sorted, bounded table)
 *             and ucp_tag_send_nbx() sends the data: the command's inline bytes (memh_id 0), or
 *             bytes read from mapped host memory into a bounce buffer first. Sends leave in
 *             command order, a send waiting for its host memory holding back the later ones.
 *   TAG_RECV  ucp_tag_recv_nbx() with tag and tag_mask, into the notification's inline area
 *             (memh_id 0; at most what a notification of the runtime's message size can carry)
 *             or into a bounce buffer whose bytes are then written to mapped host memory and
 *             flushed before the notification leaves.
 *   MEM_MAP   the inline bytes are a softdpu memh descriptor (sdp_urom_mem_export() on the
 *             host): sdp_plugin_mem imports it into a region of this plugin's UCP worker, whose
 *             nonzero id is the memh id. Host memory is only ever reached through a region's
 *             checked put and get: a range outside the region is refused, nothing moves. A
 *             memh id belongs to the host that mapped it (the command's dest_id): another
 *             host's TAG_SEND or TAG_RECV naming it is NOT_FOUND, as an unknown id is.
 *
 * Every command gets exactly one notification, failures included (its descriptor is allocated
 * before the work starts; when even that fails, a header-only one answers): UCX failures carry
 * DOCA_ERROR_DRIVER (UCX's own status in the payload), the others the status of the check that
 * refused them. The runtime calls every op from its single loop thread; UCX callbacks only move
 * operations between lists, the work happens in worker_cmd and progress. softdpu's runtime
 * sleeps on the UCP worker's event fd (softdpu/urom_plugin.h), so a message that completes a
 * receive wakes it at once; DOCA's never looks those two symbols up.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ucp/api/ucp.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_urom_plugin.h>
#include <softdpu/urom_plugin.h>

#include "sdp_plugin_mem.h"
#include "worker_sandbox.h"

DOCA_LOG_REGISTER(UROM::WORKER::SANDBOX);

/*
 * Tag sends and receives outstanding at once (a receive without a matching send stays until
 * the plugin closes): past this a TAG_SEND / TAG_RECV is refused with DOCA_ERROR_FULL instead
 * of letting one host grow the worker without bound (an inline receive holds its buffer).
 */
#define SANDBOX_MAX_LIVE_OPS 4096

#define SANDBOX_MAX_PEERS 4096	       /* cached endpoints (domain members sent to) */
#define SANDBOX_MAX_MAPS 4096	       /* MEM_MAP regions per worker */
#define SANDBOX_MAX_BOUNCE (64u << 20) /* largest transfer through host memory */
#define SANDBOX_DEFAULT_MSG_SIZE 4096  /* the service's default message size */
#define SANDBOX_NOTIFY_HDR_LEN 32      /* offsetof(struct urom_worker_notify, plugin_notif) */
#define SANDBOX_PROGRESS_ROUNDS 64     /* ucp_worker_progress calls per progress op, at most */
#define SANDBOX_CLOSE_TIMEOUT_MS 1000  /* flushing and closing at close, in all */

/* The runtime's message size, when it tells us (else SANDBOX_DEFAULT_MSG_SIZE). */
#define SANDBOX_MSG_SIZE_ENV "SDP_UROM_WORKER_MAX_MSG_SIZE"

/* An endpoint to a domain member, keyed by its domain worker id. */
struct sandbox_peer {
	uint64_t dest;
	uint64_t worker_uid; /* of the UCP worker the endpoint leads to */
	ucp_ep_h ep;
};

enum sandbox_op_kind {
	SANDBOX_OP_SEND,
	SANDBOX_OP_RECV,
};

enum sandbox_op_stage {
	SANDBOX_STAGE_FETCH,	/* send: reading its data from host memory */
	SANDBOX_STAGE_READY,	/* send: data at hand, waiting for its turn in the send queue */
	SANDBOX_STAGE_UCX,	/* the tagged operation is with UCX */
	SANDBOX_STAGE_RECEIVED, /* recv: UCX is done, the bytes may still go to host memory */
	SANDBOX_STAGE_STORE,	/* recv: writing and flushing its bytes to host memory */
	SANDBOX_STAGE_DONE,	/* finished: notify and free */
};

struct sandbox_state;

/* One TAG_SEND or TAG_RECV between its command and its notification. */
struct sandbox_op {
	ucs_list_link_t entry; /* send_queue (sends before UCX), done, or no list */
	ucs_list_link_t live;  /* every op not freed yet (sandbox_state.live) */
	struct sandbox_state *state;
	enum sandbox_op_kind kind;
	enum sandbox_op_stage stage;
	int mem_pending;  /* sdp_plugin_mem operations whose callback is due */
	uint64_t dest_id; /* header fields of the notification */
	uint64_t type;
	uint64_t urom_context;
	struct urom_worker_sandbox_cmd cmd;    /* pointer fields rewritten (inline data) */
	struct urom_worker_cmd_desc *cmd_desc; /* kept while its inline data is being sent */
	ucp_ep_h ep;			       /* send: the destination's endpoint */
	const void *data;		       /* send: the bytes (inline or bounce) */
	void *bounce;			       /* host memory transfers (malloc'd) */
	struct urom_worker_notif_desc *notif;  /* recv inline: receives into its payload */
	void *req;			       /* UCX request, freed when finished */
	doca_error_t status;
	ucs_status_t ucs_status;
	uint64_t length; /* recv: bytes received */
	uint64_t sender_tag;
};

/* A MEM_MAP region and the host (command dest_id) it belongs to. */
struct sandbox_map {
	uint64_t id; /* sdp_plugin_mem region id: the memh id */
	uint64_t owner;
};

/* Per-worker state (ctx->plugin_ctx). */
struct sandbox_state {
	ucp_context_h ucp_context;
	ucp_worker_h ucp_worker;
	ucp_address_t *ucp_addr;
	size_t ucp_addr_len;
	struct sdp_plugin_mem *mem;
	struct sandbox_map *maps; /* sorted by id (ids only grow; mappings stay until close) */
	size_t num_maps;
	size_t maps_cap;
	size_t max_inline_recv;	    /* bytes a TAG_RECV notification can carry */
	struct sandbox_peer *peers; /* sorted by dest */
	size_t num_peers;
	size_t peers_cap;
	ucs_list_link_t send_queue; /* sends not yet given to UCX, in command order */
	ucs_list_link_t done;	    /* ops whose UCX or memory step finished */
	ucs_list_link_t completed;  /* notifications for the next progress call */
	ucs_list_link_t live;	    /* every op not freed yet */
	size_t num_live;	    /* its length: at most SANDBOX_MAX_LIVE_OPS */
	uint64_t refused_full;	    /* TAG_SEND / TAG_RECV refused for it (logged sparsely) */
};

/* ---- small helpers ------------------------------------------------------------------------ */

static uint64_t sandbox_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* UCX's view of a failure that happened before UCX was asked anything. */
static ucs_status_t sandbox_ucs_of(doca_error_t status)
{
	switch (status) {
	case DOCA_SUCCESS:
		return UCS_OK;
	case DOCA_ERROR_INVALID_VALUE:
		return UCS_ERR_INVALID_PARAM;
	case DOCA_ERROR_NOT_FOUND:
		return UCS_ERR_NO_ELEM;
	case DOCA_ERROR_NO_MEMORY:
		return UCS_ERR_NO_MEMORY;
	case DOCA_ERROR_FULL:
		return UCS_ERR_EXCEEDS_LIMIT;
	case DOCA_ERROR_NOT_CONNECTED:
		return UCS_ERR_NOT_CONNECTED;
	default:
		return UCS_ERR_IO_ERROR;
	}
}

/*
 * Progress the plugin's UCP worker until it has nothing more (bounded); nonzero when anything
 * happened. sdp_plugin_mem_progress() progresses the worker and runs the host memory callbacks
 * it deferred, so it stands in for ucp_worker_progress().
 */
static int sandbox_ucp_progress(struct sandbox_state *state)
{
	int round, did = 0;

	for (round = 0; round < SANDBOX_PROGRESS_ROUNDS; round++) {
		/* (no table: opening failed half-way, or closing destroyed it already) */
		if (state->mem != NULL ? sdp_plugin_mem_progress(state->mem) == 0 :
					 ucp_worker_progress(state->ucp_worker) == 0)
			break;
		did = 1;
	}
	return did;
}

/*
 * Sleep on the worker's event fd for at most timeout_ms unless events are pending: used only
 * while closing, where the plugin waits for its own operations.
 */
static void sandbox_ucp_sleep(struct sandbox_state *state, int timeout_ms)
{
	struct pollfd pfd;
	int efd = -1;

	if (ucp_worker_get_efd(state->ucp_worker, &efd) != UCS_OK || efd < 0 ||
	    ucp_worker_arm(state->ucp_worker) != UCS_OK)
		return; /* UCS_ERR_BUSY: events pending, progress again */
	pfd.fd = efd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	(void)poll(&pfd, 1, timeout_ms);
}

/* ---- notifications ------------------------------------------------------------------------ */

/* A notification descriptor answering the command with room for extra inline bytes. */
static struct urom_worker_notif_desc *sandbox_notif_alloc(uint64_t dest_id, uint64_t type,
							  uint64_t urom_context, size_t extra)
{
	struct urom_worker_notif_desc *desc;
	size_t size = sizeof(*desc) + sizeof(struct urom_worker_notify_sandbox) + extra;

	desc = calloc(1, size);
	if (desc == NULL) {
		DOCA_LOG_ERR("failed to allocate a notification of %zu bytes", size);
		return NULL;
	}
	desc->dest_id = dest_id;
	desc->worker_notif.type = type;
	desc->worker_notif.urom_context = urom_context;
	desc->worker_notif.len = sizeof(struct urom_worker_notify_sandbox);
	return desc;
}

static struct urom_worker_notify_sandbox *sandbox_notif_payload(struct urom_worker_notif_desc *desc)
{
	return (struct urom_worker_notify_sandbox *)desc->worker_notif.plugin_notif;
}

/* Where a TAG_RECV notification's inline bytes go. */
static uint8_t *sandbox_notif_inline(struct urom_worker_notif_desc *desc)
{
	return desc->worker_notif.plugin_notif + sizeof(struct urom_worker_notify_sandbox);
}

/*
 * A header-only answer (a command too malformed to read its context from). Returns status, or
 * NO_MEMORY when even the answer cannot be allocated.
 */
static doca_error_t sandbox_notify_bare(struct sandbox_state *state,
					const struct urom_worker_cmd_desc *cmd_desc,
					doca_error_t status)
{
	struct urom_worker_notif_desc *desc;

	desc = calloc(1, sizeof(*desc));
	if (desc == NULL) {
		DOCA_LOG_ERR("failed to allocate a notification of %zu bytes", sizeof(*desc));
		return DOCA_ERROR_NO_MEMORY;
	}
	desc->dest_id = cmd_desc->dest_id;
	desc->worker_notif.type = cmd_desc->worker_cmd.type;
	desc->worker_notif.urom_context = cmd_desc->worker_cmd.urom_context;
	desc->worker_notif.len = 0;
	desc->worker_notif.status = status;
	ucs_list_add_tail(&state->completed, &desc->entry);
	return status;
}

/*
 * Answer a command that failed before anything was started, with its own notification type
 * and context (the payload's UCX status says the same in UCX's terms). Returns status, or
 * NO_MEMORY when even the answer cannot be allocated.
 */
static doca_error_t sandbox_notify_refused(struct sandbox_state *state,
					   const struct urom_worker_cmd_desc *cmd_desc,
					   const struct urom_worker_sandbox_cmd *cmd,
					   doca_error_t status)
{
	struct urom_worker_notif_desc *desc;
	struct urom_worker_notify_sandbox *n;

	desc = sandbox_notif_alloc(cmd_desc->dest_id, cmd_desc->worker_cmd.type,
				   cmd_desc->worker_cmd.urom_context, 0);
	if (desc == NULL) /* at least the header, with the status */
		return sandbox_notify_bare(state, cmd_desc, status);
	desc->worker_notif.status = status;
	n = sandbox_notif_payload(desc);
	switch (cmd->type) {
	case UROM_WORKER_CMD_SANDBOX_MEM_MAP:
		n->type = UROM_WORKER_NOTIFY_SANDBOX_MEM_MAP;
		n->mem_map.context = cmd->mem_map.context;
		n->mem_map.memh_id = 0;
		break;
	case UROM_WORKER_CMD_SANDBOX_TAG_SEND:
		n->type = UROM_WORKER_NOTIFY_SANDBOX_TAG_SEND;
		n->tag_send.context = cmd->tag_send.context;
		n->tag_send.status = sandbox_ucs_of(status);
		break;
	default: /* TAG_RECV; the caller checked the type */
		n->type = UROM_WORKER_NOTIFY_SANDBOX_TAG_RECV;
		n->tag_recv.context = cmd->tag_recv.context;
		n->tag_recv.buffer = NULL;
		n->tag_recv.count = 0;
		n->tag_recv.sender_tag = 0;
		n->tag_recv.status = sandbox_ucs_of(status);
		break;
	}
	ucs_list_add_tail(&state->completed, &desc->entry);
	return status;
}

/* ---- operations --------------------------------------------------------------------------- */

/*
 * A new op with its notification allocated already (extra inline bytes for a recv's data), so
 * that finishing it cannot fail. NULL when either allocation failed (logged).
 */
static struct sandbox_op *sandbox_op_create(struct sandbox_state *state,
					    const struct urom_worker_cmd_desc *cmd_desc,
					    const struct urom_worker_sandbox_cmd *cmd,
					    enum sandbox_op_kind kind, size_t extra)
{
	struct sandbox_op *op;

	op = calloc(1, sizeof(*op));
	if (op == NULL) {
		DOCA_LOG_ERR("failed to allocate an operation of %zu bytes", sizeof(*op));
		return NULL;
	}
	op->notif = sandbox_notif_alloc(cmd_desc->dest_id, cmd_desc->worker_cmd.type,
					cmd_desc->worker_cmd.urom_context, extra);
	if (op->notif == NULL) {
		free(op);
		return NULL;
	}
	op->state = state;
	op->kind = kind;
	op->dest_id = cmd_desc->dest_id;
	op->type = cmd_desc->worker_cmd.type;
	op->urom_context = cmd_desc->worker_cmd.urom_context;
	op->cmd = *cmd;
	op->status = DOCA_SUCCESS;
	op->ucs_status = UCS_OK;
	ucs_list_add_tail(&state->live, &op->live);
	state->num_live++;
	return op;
}

/* Room for one more op; else DOCA_ERROR_FULL (logged for the first and every 1024th). */
static doca_error_t sandbox_op_room(struct sandbox_state *state)
{
	if (state->num_live < SANDBOX_MAX_LIVE_OPS)
		return DOCA_SUCCESS;
	if (state->refused_full++ % 1024 == 0)
		DOCA_LOG_ERR("%zu tag sends and receives outstanding, the most a worker keeps: "
			     "refused with DOCA_ERROR_FULL (%" PRIu64 " so far)",
			     state->num_live, state->refused_full);
	return DOCA_ERROR_FULL;
}

static void sandbox_op_free(struct sandbox_op *op)
{
	if (op->req != NULL)
		ucp_request_free(op->req);
	free(op->cmd_desc);
	free(op->bounce);
	free(op->notif);
	ucs_list_del(&op->live);
	op->state->num_live--;
	free(op);
}

/* Record a failure (the first one wins); UCX's status when UCX produced it. */
static void sandbox_op_fail(struct sandbox_op *op, doca_error_t status, ucs_status_t ucs_status)
{
	if (op->status != DOCA_SUCCESS)
		return;
	op->status = status;
	op->ucs_status = ucs_status != UCS_OK ? ucs_status : sandbox_ucs_of(status);
}

/* Queue op's notification and free op. */
static void sandbox_op_finish(struct sandbox_op *op)
{
	struct sandbox_state *state = op->state;
	struct urom_worker_notif_desc *desc = op->notif;
	struct urom_worker_notify_sandbox *n;

	/* (allocated with the op: finishing never needs memory) */
	op->notif = NULL;
	desc->worker_notif.status = op->status;
	desc->worker_notif.len = sizeof(*n);
	n = sandbox_notif_payload(desc);
	if (op->kind == SANDBOX_OP_SEND) {
		n->type = UROM_WORKER_NOTIFY_SANDBOX_TAG_SEND;
		n->tag_send.context = op->cmd.tag_send.context;
		n->tag_send.status = op->ucs_status;
		DOCA_LOG_TRC("tag send of %" PRIu64 " bytes to %" PRIu64 " tag %#" PRIx64 ": %s",
			     op->cmd.tag_send.count, op->cmd.tag_send.dest, op->cmd.tag_send.tag,
			     ucs_status_string(op->ucs_status));
	} else {
		n->type = UROM_WORKER_NOTIFY_SANDBOX_TAG_RECV;
		n->tag_recv.context = op->cmd.tag_recv.context;
		n->tag_recv.buffer = NULL;
		n->tag_recv.count = op->status == DOCA_SUCCESS ? op->length : 0;
		n->tag_recv.sender_tag = op->status == DOCA_SUCCESS ? op->sender_tag : 0;
		n->tag_recv.status = op->ucs_status;
		if (op->cmd.tag_recv.memh_id == 0 && op->status == DOCA_SUCCESS) {
			/* The bytes are already in place; buffer marks them present. */
			n->tag_recv.buffer = sandbox_notif_inline(desc);
			desc->worker_notif.len += op->length;
		}
		DOCA_LOG_TRC("tag recv tag %#" PRIx64 " mask %#" PRIx64 ": %" PRIu64
			     " bytes, sender tag %#" PRIx64 ", %s",
			     op->cmd.tag_recv.tag, op->cmd.tag_recv.tag_mask, n->tag_recv.count,
			     n->tag_recv.sender_tag, ucs_status_string(op->ucs_status));
	}
	ucs_list_add_tail(&state->completed, &desc->entry);
	sandbox_op_free(op);
}

/* UCX callbacks: record, and leave the work to progress. */
static void sandbox_send_cb(void *request, ucs_status_t status, void *user_data)
{
	struct sandbox_op *op = user_data;

	(void)request;
	if (status != UCS_OK)
		sandbox_op_fail(op, DOCA_ERROR_DRIVER, status);
	op->stage = SANDBOX_STAGE_DONE;
	ucs_list_add_tail(&op->state->done, &op->entry);
}

static void sandbox_recv_cb(void *request, ucs_status_t status, const ucp_tag_recv_info_t *info,
			    void *user_data)
{
	struct sandbox_op *op = user_data;

	(void)request;
	if (status == UCS_OK && info != NULL) {
		op->length = info->length;
		op->sender_tag = info->sender_tag;
	} else {
		sandbox_op_fail(op, DOCA_ERROR_DRIVER,
				status != UCS_OK ? status : UCS_ERR_IO_ERROR);
	}
	op->stage = SANDBOX_STAGE_RECEIVED;
	ucs_list_add_tail(&op->state->done, &op->entry);
}

/*
 * Host memory callbacks. A send being fetched stays in the send queue (its turn comes in
 * order); a recv being stored is on no list until its last callback.
 */
static void sandbox_mem_cb(void *arg, doca_error_t status)
{
	struct sandbox_op *op = arg;

	if (status != DOCA_SUCCESS)
		sandbox_op_fail(op, status, UCS_OK);
	if (--op->mem_pending > 0)
		return;
	if (op->kind == SANDBOX_OP_SEND) {
		op->stage = SANDBOX_STAGE_READY;
	} else {
		op->stage = SANDBOX_STAGE_DONE;
		ucs_list_add_tail(&op->state->done, &op->entry);
	}
}

/* Give a send whose data is at hand to UCX. */
static void sandbox_send_issue(struct sandbox_op *op)
{
	ucp_request_param_t param;
	ucs_status_ptr_t req;

	/*
	 * Immediate completion allowed: a small send over shared memory then costs no UCX
	 * request. Either way the op moves on from the done list.
	 */
	memset(&param, 0, sizeof(param));
	param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	param.cb.send = sandbox_send_cb;
	param.user_data = op;

	op->stage = SANDBOX_STAGE_UCX;
	req = ucp_tag_send_nbx(op->ep, op->data, op->cmd.tag_send.count, op->cmd.tag_send.tag,
			       &param);
	if (UCS_PTR_IS_ERR(req)) {
		DOCA_LOG_ERR("ucp_tag_send_nbx of %" PRIu64 " bytes to %" PRIu64 ": %s",
			     op->cmd.tag_send.count, op->cmd.tag_send.dest,
			     ucs_status_string(UCS_PTR_STATUS(req)));
		sandbox_op_fail(op, DOCA_ERROR_DRIVER, UCS_PTR_STATUS(req));
		sandbox_op_finish(op);
		return;
	}
	if (req == NULL) {
		/* Done at once; UCX calls no callback then. */
		op->stage = SANDBOX_STAGE_DONE;
		ucs_list_add_tail(&op->state->done, &op->entry);
		return;
	}
	op->req = req;
}

/* Issue the sends at the head of the queue whose data is ready, in order; nonzero if any. */
static int sandbox_send_queue_run(struct sandbox_state *state)
{
	struct sandbox_op *op;
	int did = 0;

	while (!ucs_list_is_empty(&state->send_queue)) {
		op = ucs_list_head(&state->send_queue, struct sandbox_op, entry);
		if (op->stage == SANDBOX_STAGE_FETCH)
			break; /* later sends wait for it: tag order is command order */
		ucs_list_del(&op->entry);
		if (op->status != DOCA_SUCCESS)
			sandbox_op_finish(op);
		else
			sandbox_send_issue(op);
		did = 1;
	}
	return did;
}

/* A received message whose UCX part is over: store it to host memory, or finish. */
static void sandbox_recv_received(struct sandbox_op *op)
{
	struct sandbox_state *state = op->state;
	doca_error_t status;

	if (op->status != DOCA_SUCCESS || op->cmd.tag_recv.memh_id == 0 || op->length == 0) {
		sandbox_op_finish(op);
		return;
	}

	/* Put and flush back to back: the flush completes after the put reached the host. */
	op->stage = SANDBOX_STAGE_STORE;
	op->mem_pending = 1;
	status =
		sdp_plugin_mem_put_nb(state->mem, op->cmd.tag_recv.memh_id, op->cmd.tag_recv.buffer,
				      op->bounce, op->length, sandbox_mem_cb, op);
	if (status != DOCA_SUCCESS) {
		sandbox_op_fail(op, status, UCS_OK);
		sandbox_op_finish(op);
		return;
	}
	op->mem_pending++;
	status = sdp_plugin_mem_flush_nb(state->mem, op->cmd.tag_recv.memh_id, sandbox_mem_cb, op);
	if (status != DOCA_SUCCESS) {
		/* The put's callback is still due and finishes the op. */
		sandbox_op_fail(op, status, UCS_OK);
		op->mem_pending--;
	}
}

/* Move every op that finished a step one step further; nonzero if any. */
static int sandbox_done_run(struct sandbox_state *state)
{
	struct sandbox_op *op;
	int did = 0;

	while (!ucs_list_is_empty(&state->done)) {
		op = ucs_list_extract_head(&state->done, struct sandbox_op, entry);
		if (op->stage == SANDBOX_STAGE_RECEIVED)
			sandbox_recv_received(op);
		else
			sandbox_op_finish(op);
		did = 1;
	}
	return did;
}

/* ---- endpoints ---------------------------------------------------------------------------- */

/* Index of dest in the sorted peer table, or where it would go. */
static size_t sandbox_peer_index(const struct sandbox_state *state, uint64_t dest)
{
	size_t lo = 0, hi = state->num_peers, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (state->peers[mid].dest < dest)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Close one endpoint within the deadline (flush, then close; forced when that fails). */
static void sandbox_ep_close(struct sandbox_state *state, ucp_ep_h ep, uint64_t deadline)
{
	ucp_request_param_t param;
	ucs_status_ptr_t req;
	ucs_status_t status;

	memset(&param, 0, sizeof(param));
	param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	param.flags = 0;
	req = ucp_ep_close_nbx(ep, &param);
	if (UCS_PTR_IS_ERR(req)) {
		DOCA_LOG_DBG("close of endpoint %p: %s", (void *)ep,
			     ucs_status_string(UCS_PTR_STATUS(req)));
		return;
	}
	if (req == NULL)
		return;
	for (;;) {
		sandbox_ucp_progress(state);
		status = ucp_request_check_status(req);
		if (status != UCS_INPROGRESS)
			break;
		if (sandbox_now_ms() >= deadline) {
			/* UCX finishes it in the background; the worker's destruction ends it. */
			DOCA_LOG_WARN("close of endpoint %p did not finish in time", (void *)ep);
			break;
		}
		sandbox_ucp_sleep(state, 10);
	}
	ucp_request_free(req);
}

/*
 * The endpoint to domain member dest. The runtime is asked every time, so an id that left the
 * domain is NOT_FOUND at once, and when the id now names another UCP worker (a new domain
 * reusing the ids) the endpoint is replaced: the cache is keyed by the worker's unique id,
 * which ucp_worker_address_query reads from the address.
 */
static doca_error_t sandbox_peer_get(struct urom_worker_ctx *ctx, struct sandbox_state *state,
				     uint64_t dest, ucp_ep_h *ep_p)
{
	struct sandbox_peer *peer, *peers;
	ucp_worker_address_attr_t attr;
	ucp_ep_params_t params;
	ucs_status_t ucs_status;
	doca_error_t status;
	void *addr = NULL;
	size_t i, cap;
	ucp_ep_h ep;

	status = doca_urom_worker_domain_addr_lookup(ctx, dest, &addr);
	if (status != DOCA_SUCCESS || addr == NULL) {
		DOCA_LOG_ERR("tag send to domain worker %" PRIu64 ": no such domain member (%s)",
			     dest, doca_error_get_name(status));
		return status != DOCA_SUCCESS ? status : DOCA_ERROR_NOT_FOUND;
	}

	memset(&attr, 0, sizeof(attr));
	attr.field_mask = UCP_WORKER_ADDRESS_ATTR_FIELD_UID;
	ucs_status = ucp_worker_address_query(addr, &attr);
	if (ucs_status != UCS_OK) {
		DOCA_LOG_ERR("address of domain worker %" PRIu64 " unreadable: %s", dest,
			     ucs_status_string(ucs_status));
		return DOCA_ERROR_DRIVER;
	}

	i = sandbox_peer_index(state, dest);
	peer = i < state->num_peers && state->peers[i].dest == dest ? &state->peers[i] : NULL;
	if (peer != NULL && peer->worker_uid == attr.worker_uid) {
		*ep_p = peer->ep;
		return DOCA_SUCCESS;
	}
	if (peer == NULL && state->num_peers >= SANDBOX_MAX_PEERS) {
		DOCA_LOG_ERR("tag send to domain worker %" PRIu64 ": %d peers already, no more",
			     dest, SANDBOX_MAX_PEERS);
		return DOCA_ERROR_FULL;
	}
	if (peer == NULL && state->num_peers == state->peers_cap) {
		cap = state->peers_cap != 0 ? state->peers_cap * 2 : 8;
		peers = realloc(state->peers, cap * sizeof(*peers));
		if (peers == NULL) {
			DOCA_LOG_ERR("failed to grow the peer table to %zu entries", cap);
			return DOCA_ERROR_NO_MEMORY;
		}
		state->peers = peers;
		state->peers_cap = cap;
	}

	/*
	 * No UCX error handling: with it UCX 1.13 would leave shared memory aside even between
	 * processes of one machine. A dead member's messages stay queued until close.
	 */
	memset(&params, 0, sizeof(params));
	params.field_mask =
		UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
	params.address = addr;
	params.err_mode = UCP_ERR_HANDLING_MODE_NONE;
	ucs_status = ucp_ep_create(state->ucp_worker, &params, &ep);
	if (ucs_status != UCS_OK) {
		DOCA_LOG_ERR("ucp_ep_create to domain worker %" PRIu64 ": %s", dest,
			     ucs_status_string(ucs_status));
		return DOCA_ERROR_DRIVER;
	}

	if (peer != NULL) {
		/* Operations still on the old endpoint finish there before it closes. */
		DOCA_LOG_DBG("domain worker %" PRIu64 " is another UCP worker now, new endpoint",
			     dest);
		sandbox_ep_close(state, peer->ep, sandbox_now_ms() + SANDBOX_CLOSE_TIMEOUT_MS);
	} else {
		memmove(&state->peers[i + 1], &state->peers[i],
			(state->num_peers - i) * sizeof(*state->peers));
		state->num_peers++;
		peer = &state->peers[i];
		peer->dest = dest;
	}
	peer->worker_uid = attr.worker_uid;
	peer->ep = ep;
	DOCA_LOG_DBG("endpoint to domain worker %" PRIu64 " created", dest);
	*ep_p = ep;
	return DOCA_SUCCESS;
}

/* ---- commands ----------------------------------------------------------------------------- */

/* The mapping memh_id, or NULL. */
static const struct sandbox_map *sandbox_map_find(const struct sandbox_state *state,
						  uint64_t memh_id)
{
	size_t lo = 0, hi = state->num_maps, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (state->maps[mid].id < memh_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < state->num_maps && state->maps[lo].id == memh_id ? &state->maps[lo] : NULL;
}

/*
 * [addr, addr + count) must lie inside mapping memh_id of host owner (for count 0: the mapping
 * must exist). Nothing moves; INVALID_VALUE outside, NOT_FOUND for an unknown id or one that
 * another host mapped (the ids are small and sequential: easy to guess).
 */
static doca_error_t sandbox_mem_range(struct sandbox_state *state, uint64_t owner, uint64_t memh_id,
				      uint64_t addr, uint64_t count)
{
	const struct sandbox_map *map = sandbox_map_find(state, memh_id);

	if (map == NULL)
		return DOCA_ERROR_NOT_FOUND;
	if (map->owner != owner) {
		DOCA_LOG_DBG("memh %#" PRIx64 " belongs to dest %" PRIu64 ", not %" PRIu64, memh_id,
			     map->owner, owner);
		return DOCA_ERROR_NOT_FOUND;
	}
	if (count == 0)
		return sdp_plugin_mem_region_get(state->mem, memh_id, NULL, NULL);
	return sdp_plugin_mem_check(state->mem, memh_id, addr, count);
}

static doca_error_t sandbox_cmd_tag_send(struct urom_worker_ctx *ctx, struct sandbox_state *state,
					 struct urom_worker_cmd_desc *cmd_desc,
					 const struct urom_worker_sandbox_cmd *cmd,
					 int *keep_desc_p)
{
	const struct urom_worker_sandbox_cmd_tag_send *ts = &cmd->tag_send;
	uint64_t inline_len = ts->memh_id == 0 ? ts->count : 0;
	struct sandbox_op *op;
	doca_error_t status;
	ucp_ep_h ep = NULL;

	/* (sandbox_cmd_one checked len >= sizeof(*cmd); subtracting cannot wrap) */
	if (cmd_desc->worker_cmd.len - sizeof(*cmd) != inline_len) {
		DOCA_LOG_ERR("tag send command of %" PRIu64 " bytes, expected %zu + %" PRIu64
			     " inline",
			     (uint64_t)cmd_desc->worker_cmd.len, sizeof(*cmd), inline_len);
		return sandbox_notify_refused(state, cmd_desc, cmd, DOCA_ERROR_INVALID_VALUE);
	}
	if (ts->memh_id != 0 && ts->count > SANDBOX_MAX_BOUNCE) {
		DOCA_LOG_ERR("tag send of %" PRIu64 " bytes from host memory: at most %u",
			     ts->count, SANDBOX_MAX_BOUNCE);
		return sandbox_notify_refused(state, cmd_desc, cmd, DOCA_ERROR_INVALID_VALUE);
	}
	if (ts->memh_id != 0) {
		/* Checked before anything is sent: outside the mapping, nothing moves. */
		status = sandbox_mem_range(state, cmd_desc->dest_id, ts->memh_id, ts->buffer,
					   ts->count);
		if (status != DOCA_SUCCESS) {
			DOCA_LOG_ERR(
				"tag send from memh %#" PRIx64 " [%#" PRIx64 ", +%" PRIu64 "): %s",
				ts->memh_id, ts->buffer, ts->count, doca_error_get_name(status));
			return sandbox_notify_refused(state, cmd_desc, cmd, status);
		}
	}
	status = sandbox_peer_get(ctx, state, ts->dest, &ep);
	if (status != DOCA_SUCCESS)
		return sandbox_notify_refused(state, cmd_desc, cmd, status);

	status = sandbox_op_room(state);
	if (status != DOCA_SUCCESS)
		return sandbox_notify_refused(state, cmd_desc, cmd, status);
	op = sandbox_op_create(state, cmd_desc, cmd, SANDBOX_OP_SEND, 0);
	if (op == NULL)
		return sandbox_notify_refused(state, cmd_desc, cmd, DOCA_ERROR_NO_MEMORY);
	op->ep = ep;

	if (ts->memh_id == 0) {
		/* The data is the command's inline area: keep the descriptor until it is sent. */
		op->cmd_desc = cmd_desc;
		*keep_desc_p = 1;
		op->data = cmd_desc->worker_cmd.plugin_cmd + sizeof(*cmd);
		op->cmd.tag_send.buffer = (uint64_t)(uintptr_t)op->data;
		op->stage = SANDBOX_STAGE_READY;
	} else if (ts->count == 0) {
		op->data = NULL;
		op->stage = SANDBOX_STAGE_READY;
	} else {
		op->bounce = malloc(ts->count);
		if (op->bounce == NULL) {
			DOCA_LOG_ERR("failed to allocate a bounce buffer of %" PRIu64 " bytes",
				     ts->count);
			sandbox_op_free(op);
			return sandbox_notify_refused(state, cmd_desc, cmd, DOCA_ERROR_NO_MEMORY);
		}
		op->data = op->bounce;
		op->stage = SANDBOX_STAGE_FETCH;
		op->mem_pending = 1;
		status = sdp_plugin_mem_get_nb(state->mem, ts->memh_id, ts->buffer, op->bounce,
					       ts->count, sandbox_mem_cb, op);
		if (status != DOCA_SUCCESS) {
			sandbox_op_free(op);
			return sandbox_notify_refused(state, cmd_desc, cmd, status);
		}
	}
	ucs_list_add_tail(&state->send_queue, &op->entry);
	return DOCA_SUCCESS;
}

static doca_error_t sandbox_cmd_tag_recv(struct sandbox_state *state,
					 const struct urom_worker_cmd_desc *cmd_desc,
					 const struct urom_worker_sandbox_cmd *cmd)
{
	const struct urom_worker_sandbox_cmd_tag_recv *tr = &cmd->tag_recv;
	ucp_request_param_t param;
	struct sandbox_op *op;
	ucs_status_ptr_t req;
	doca_error_t status;
	void *target;

	if (cmd_desc->worker_cmd.len != sizeof(*cmd)) {
		DOCA_LOG_ERR("tag recv command of %" PRIu64 " bytes, expected %zu",
			     (uint64_t)cmd_desc->worker_cmd.len, sizeof(*cmd));
		return sandbox_notify_refused(state, cmd_desc, cmd, DOCA_ERROR_INVALID_VALUE);
	}
	if (tr->memh_id == 0 && tr->count > state->max_inline_recv) {
		DOCA_LOG_ERR("tag recv of %" PRIu64 " bytes inline: a notification carries at "
			     "most %zu",
			     tr->count, state->max_inline_recv);
		return sandbox_notify_refused(state, cmd_desc, cmd, DOCA_ERROR_INVALID_VALUE);
	}
	if (tr->memh_id != 0) {
		if (tr->count > SANDBOX_MAX_BOUNCE) {
			DOCA_LOG_ERR("tag recv of %" PRIu64 " bytes into host memory: at most %u",
				     tr->count, SANDBOX_MAX_BOUNCE);
			return sandbox_notify_refused(state, cmd_desc, cmd,
						      DOCA_ERROR_INVALID_VALUE);
		}
		status = sandbox_mem_range(state, cmd_desc->dest_id, tr->memh_id, tr->buffer,
					   tr->count);
		if (status != DOCA_SUCCESS) {
			DOCA_LOG_ERR(
				"tag recv into memh %#" PRIx64 " [%#" PRIx64 ", +%" PRIu64 "): %s",
				tr->memh_id, tr->buffer, tr->count, doca_error_get_name(status));
			return sandbox_notify_refused(state, cmd_desc, cmd, status);
		}
	}

	/* Inline: the notification has room for the data and receives it. */
	status = sandbox_op_room(state);
	if (status != DOCA_SUCCESS)
		return sandbox_notify_refused(state, cmd_desc, cmd, status);
	op = sandbox_op_create(state, cmd_desc, cmd, SANDBOX_OP_RECV,
			       tr->memh_id == 0 ? tr->count : 0);
	if (op == NULL)
		return sandbox_notify_refused(state, cmd_desc, cmd, DOCA_ERROR_NO_MEMORY);
	if (tr->memh_id == 0) {
		target = sandbox_notif_inline(op->notif);
	} else {
		op->bounce = tr->count > 0 ? malloc(tr->count) : NULL;
		target = op->bounce;
	}
	if (target == NULL && (tr->memh_id == 0 || tr->count > 0)) {
		DOCA_LOG_ERR("failed to allocate %" PRIu64 " bytes to receive into", tr->count);
		sandbox_op_free(op);
		return sandbox_notify_refused(state, cmd_desc, cmd, DOCA_ERROR_NO_MEMORY);
	}

	/*
	 * No immediate completion: when a message already waiting completed the receive inside
	 * the call, UCX 1.13 left recv_info unfilled (seen over shared memory); the callback
	 * reports length and tag reliably.
	 */
	memset(&param, 0, sizeof(param));
	param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
			     UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
	param.cb.recv = sandbox_recv_cb;
	param.user_data = op;
	op->stage = SANDBOX_STAGE_UCX;
	req = ucp_tag_recv_nbx(state->ucp_worker, target, tr->count, tr->tag, tr->tag_mask, &param);
	if (UCS_PTR_IS_ERR(req)) {
		DOCA_LOG_ERR("ucp_tag_recv_nbx of %" PRIu64 " bytes tag %#" PRIx64 ": %s",
			     tr->count, tr->tag, ucs_status_string(UCS_PTR_STATUS(req)));
		sandbox_op_fail(op, DOCA_ERROR_DRIVER, UCS_PTR_STATUS(req));
		sandbox_op_finish(op);
		return DOCA_ERROR_DRIVER;
	}
	op->req = req; /* NO_IMM_CMPL: never NULL (the callback may have run already) */
	return DOCA_SUCCESS;
}

static doca_error_t sandbox_cmd_mem_map(struct sandbox_state *state,
					const struct urom_worker_cmd_desc *cmd_desc,
					struct urom_worker_sandbox_cmd *cmd)
{
	struct urom_worker_sandbox_cmd_mem_map *mm = &cmd->mem_map;
	const ucp_mem_map_params_t *mp = &mm->map_params;
	const uint64_t range = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
	struct urom_worker_notif_desc *desc;
	struct urom_worker_notify_sandbox *n;
	struct sandbox_map *maps;
	const uint8_t *memh;
	uint64_t region_id = 0;
	doca_error_t status;
	size_t cap;

	if (mm->exported_memh_buffer_len == 0 ||
	    cmd_desc->worker_cmd.len - sizeof(*cmd) != mm->exported_memh_buffer_len) {
		DOCA_LOG_ERR("mem map command of %" PRIu64 " bytes, expected %zu + %zu inline "
			     "(a memh descriptor is never empty)",
			     (uint64_t)cmd_desc->worker_cmd.len, sizeof(*cmd),
			     mm->exported_memh_buffer_len);
		return sandbox_notify_refused(state, cmd_desc, cmd, DOCA_ERROR_INVALID_VALUE);
	}
	if (state->num_maps >= SANDBOX_MAX_MAPS) {
		DOCA_LOG_ERR("mem map: %d mappings already, no more", SANDBOX_MAX_MAPS);
		return sandbox_notify_refused(state, cmd_desc, cmd, DOCA_ERROR_FULL);
	}
	/* Memory for the answer and the owner record first: once mapped, nothing can fail. */
	if (state->num_maps == state->maps_cap) {
		cap = state->maps_cap != 0 ? state->maps_cap * 2 : 16;
		maps = realloc(state->maps, cap * sizeof(*maps));
		if (maps == NULL) {
			DOCA_LOG_ERR("failed to grow the mapping table to %zu entries", cap);
			return sandbox_notify_refused(state, cmd_desc, cmd, DOCA_ERROR_NO_MEMORY);
		}
		state->maps = maps;
		state->maps_cap = cap;
	}
	desc = sandbox_notif_alloc(cmd_desc->dest_id, cmd_desc->worker_cmd.type,
				   cmd_desc->worker_cmd.urom_context, 0);
	if (desc == NULL)
		return sandbox_notify_bare(state, cmd_desc, DOCA_ERROR_NO_MEMORY);

	memh = cmd_desc->worker_cmd.plugin_cmd + sizeof(*cmd);
#ifdef SDP_SANDBOX_HAVE_EXPORTED_MEMH
	mm->map_params.exported_memh_buffer = memh; /* pointer fields point into the command */
#endif
	status = sdp_plugin_mem_import(state->mem, memh, mm->exported_memh_buffer_len, &region_id);
	if (status != DOCA_SUCCESS) {
		free(desc);
		return sandbox_notify_refused(state, cmd_desc, cmd, status);
	}

	/* A range given with the descriptor must lie inside what the host exported. */
	if ((mp->field_mask & range) == range && mp->length > 0) {
		status = sdp_plugin_mem_check(state->mem, region_id,
					      (uint64_t)(uintptr_t)mp->address, mp->length);
		if (status != DOCA_SUCCESS) {
			DOCA_LOG_ERR("mem map of [%p, +%zu): outside the exported memory",
				     mp->address, mp->length);
			(void)sdp_plugin_mem_release(state->mem, region_id);
			free(desc);
			return sandbox_notify_refused(state, cmd_desc, cmd, status);
		}
	}

	/* Region ids only grow: appending keeps the table sorted. */
	state->maps[state->num_maps].id = region_id;
	state->maps[state->num_maps].owner = cmd_desc->dest_id;
	state->num_maps++;
	desc->worker_notif.status = DOCA_SUCCESS;
	n = sandbox_notif_payload(desc);
	n->type = UROM_WORKER_NOTIFY_SANDBOX_MEM_MAP; /* (DOCA's sample says TAG_SEND here) */
	n->mem_map.context = mm->context;
	n->mem_map.memh_id = region_id;
	ucs_list_add_tail(&state->completed, &desc->entry);
	DOCA_LOG_DBG("mem map: memh id %#" PRIx64 " of dest %" PRIu64, region_id,
		     cmd_desc->dest_id);
	return DOCA_SUCCESS;
}

/* Handle one command; it is answered exactly once. *keep_desc_p: the op owns cmd_desc now. */
static doca_error_t sandbox_cmd_one(struct urom_worker_ctx *ctx, struct sandbox_state *state,
				    struct urom_worker_cmd_desc *cmd_desc, int *keep_desc_p)
{
	struct urom_worker_sandbox_cmd cmd;

	if (cmd_desc->worker_cmd.len < sizeof(cmd)) {
		DOCA_LOG_ERR("sandbox command of %" PRIu64
			     " bytes, shorter than its %zu-byte struct",
			     (uint64_t)cmd_desc->worker_cmd.len, sizeof(cmd));
		return sandbox_notify_bare(state, cmd_desc, DOCA_ERROR_INVALID_VALUE);
	}
	memcpy(&cmd, cmd_desc->worker_cmd.plugin_cmd, sizeof(cmd));

	switch (cmd.type) {
	case UROM_WORKER_CMD_SANDBOX_MEM_MAP:
		return sandbox_cmd_mem_map(state, cmd_desc, &cmd);
	case UROM_WORKER_CMD_SANDBOX_TAG_SEND:
		return sandbox_cmd_tag_send(ctx, state, cmd_desc, &cmd, keep_desc_p);
	case UROM_WORKER_CMD_SANDBOX_TAG_RECV:
		return sandbox_cmd_tag_recv(state, cmd_desc, &cmd);
	default:
		DOCA_LOG_ERR("unknown sandbox command type %" PRIu64, cmd.type);
		return sandbox_notify_bare(state, cmd_desc, DOCA_ERROR_INVALID_VALUE);
	}
}

/* ---- ops ---------------------------------------------------------------------------------- */

/* The inline bytes a TAG_RECV notification can carry in a message of the runtime's size. */
static size_t sandbox_max_inline_recv(void)
{
	const char *env = getenv(SANDBOX_MSG_SIZE_ENV);
	unsigned long long v = SANDBOX_DEFAULT_MSG_SIZE;
	size_t overhead = SANDBOX_NOTIFY_HDR_LEN + sizeof(struct urom_worker_notify_sandbox);
	char *end;

	if (env != NULL && *env != '\0') {
		errno = 0;
		v = strtoull(env, &end, 10);
		if (errno != 0 || *end != '\0' || v > (1ull << 30)) {
			DOCA_LOG_WARN("%s=%s is not a message size, using %d", SANDBOX_MSG_SIZE_ENV,
				      env, SANDBOX_DEFAULT_MSG_SIZE);
			v = SANDBOX_DEFAULT_MSG_SIZE;
		}
	}
	return v > overhead ? (size_t)v - overhead : 0;
}

static void sandbox_state_destroy(struct sandbox_state *state);

static doca_error_t sandbox_open(struct urom_worker_ctx *ctx)
{
	ucp_worker_params_t worker_params;
	struct sandbox_state *state;
	ucp_params_t params;
	ucs_status_t ucs_status;
	doca_error_t status;

	if (ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;

	state = calloc(1, sizeof(*state));
	if (state == NULL) {
		DOCA_LOG_ERR("failed to allocate the sandbox plugin state");
		return DOCA_ERROR_NO_MEMORY;
	}
	ucs_list_head_init(&state->send_queue);
	ucs_list_head_init(&state->done);
	ucs_list_head_init(&state->completed);
	ucs_list_head_init(&state->live);
	state->max_inline_recv = sandbox_max_inline_recv();

	memset(&params, 0, sizeof(params));
	params.field_mask = UCP_PARAM_FIELD_FEATURES;
	params.features = UCP_FEATURE_TAG;
	sdp_plugin_mem_ucp_params(&params); /* RMA and WAKEUP */
	ucs_status = ucp_init(&params, NULL, &state->ucp_context);
	if (ucs_status != UCS_OK) {
		DOCA_LOG_ERR("ucp_init: %s", ucs_status_string(ucs_status));
		status = DOCA_ERROR_DRIVER;
		goto err_destroy;
	}

	memset(&worker_params, 0, sizeof(worker_params));
	worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
	ucs_status = ucp_worker_create(state->ucp_context, &worker_params, &state->ucp_worker);
	if (ucs_status != UCS_OK) {
		DOCA_LOG_ERR("ucp_worker_create: %s", ucs_status_string(ucs_status));
		status = DOCA_ERROR_DRIVER;
		goto err_destroy;
	}

	ucs_status =
		ucp_worker_get_address(state->ucp_worker, &state->ucp_addr, &state->ucp_addr_len);
	if (ucs_status != UCS_OK) {
		DOCA_LOG_ERR("ucp_worker_get_address: %s", ucs_status_string(ucs_status));
		status = DOCA_ERROR_DRIVER;
		goto err_destroy;
	}

	status = sdp_plugin_mem_create(state->ucp_worker, &state->mem);
	if (status != DOCA_SUCCESS)
		goto err_destroy;

	ctx->plugin_ctx = state;
	DOCA_LOG_DBG("sandbox open: UCP address of %zu bytes, inline receives up to %zu bytes",
		     state->ucp_addr_len, state->max_inline_recv);
	return DOCA_SUCCESS;

err_destroy:
	sandbox_state_destroy(state);
	return status;
}

/* Wait (bounded) for the worker's outstanding sends to complete. */
static void sandbox_flush(struct sandbox_state *state, uint64_t deadline)
{
	ucp_request_param_t param;
	ucs_status_ptr_t req;

	memset(&param, 0, sizeof(param));
	req = ucp_worker_flush_nbx(state->ucp_worker, &param);
	if (UCS_PTR_IS_ERR(req) || req == NULL)
		return;
	for (;;) {
		sandbox_ucp_progress(state);
		if (ucp_request_check_status(req) != UCS_INPROGRESS)
			break;
		if (sandbox_now_ms() >= deadline) {
			DOCA_LOG_WARN("sandbox close: sends still in flight after %d ms",
				      SANDBOX_CLOSE_TIMEOUT_MS);
			break;
		}
		sandbox_ucp_sleep(state, 10);
	}
	ucp_request_free(req);
}

/*
 * Free everything, waiting at most SANDBOX_CLOSE_TIMEOUT_MS in all for UCX: posted receives
 * are cancelled, sends flushed, host memory operations completed (sdp_plugin_mem_destroy
 * calls them back), endpoints closed. Notifications not handed out yet are dropped with it.
 * Also undoes a partial open.
 */
static void sandbox_state_destroy(struct sandbox_state *state)
{
	uint64_t deadline = sandbox_now_ms() + SANDBOX_CLOSE_TIMEOUT_MS;
	struct urom_worker_notif_desc *desc;
	struct sandbox_op *op, *tmp;
	size_t i;

	if (state->ucp_worker != NULL) {
		ucs_list_for_each(op, &state->live, live)
			if (op->kind == SANDBOX_OP_RECV && op->stage == SANDBOX_STAGE_UCX)
				ucp_request_cancel(state->ucp_worker, op->req);
		sandbox_flush(state, deadline);
		sandbox_done_run(state);
	}
	sdp_plugin_mem_destroy(state->mem);
	state->mem = NULL;
	if (state->ucp_worker != NULL) {
		sandbox_done_run(state);
		/* Sends that never reached UCX (their fetch has been called back by now). */
		while (!ucs_list_is_empty(&state->send_queue)) {
			op = ucs_list_extract_head(&state->send_queue, struct sandbox_op, entry);
			sandbox_op_free(op);
		}
		for (i = 0; i < state->num_peers; i++)
			sandbox_ep_close(state, state->peers[i].ep, deadline);
		sandbox_done_run(state);
		if (state->ucp_addr != NULL)
			ucp_worker_release_address(state->ucp_worker, state->ucp_addr);
		ucp_worker_destroy(state->ucp_worker);
	}
	/* What UCX never called back: its requests went with the worker. */
	ucs_list_for_each_safe(op, tmp, &state->live, live) {
		DOCA_LOG_WARN("sandbox close: a %s was still with UCX",
			      op->kind == SANDBOX_OP_SEND ? "tag send" : "tag recv");
		op->req = NULL;
		sandbox_op_free(op);
	}
	while (!ucs_list_is_empty(&state->completed)) {
		desc = ucs_list_extract_head(&state->completed, struct urom_worker_notif_desc,
					     entry);
		free(desc);
	}
	free(state->peers);
	free(state->maps);
	if (state->ucp_context != NULL)
		ucp_cleanup(state->ucp_context);
	free(state);
}

static void sandbox_close(struct urom_worker_ctx *ctx)
{
	if (ctx == NULL || ctx->plugin_ctx == NULL)
		return;
	sandbox_state_destroy(ctx->plugin_ctx);
	ctx->plugin_ctx = NULL;
}

static doca_error_t sandbox_addr(struct urom_worker_ctx *ctx, void *addr, size_t *addr_len)
{
	struct sandbox_state *state;

	if (ctx == NULL || ctx->plugin_ctx == NULL || addr_len == NULL)
		return DOCA_ERROR_INVALID_VALUE;

	state = ctx->plugin_ctx;
	/* First call (or a short buffer): say how much room the address needs. */
	if (addr == NULL || *addr_len < state->ucp_addr_len) {
		*addr_len = state->ucp_addr_len;
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(addr, state->ucp_addr, state->ucp_addr_len);
	*addr_len = state->ucp_addr_len;
	return DOCA_SUCCESS;
}

static doca_error_t sandbox_worker_cmd(struct urom_worker_ctx *ctx, ucs_list_link_t *cmd_list)
{
	struct urom_worker_cmd_desc *cmd_desc;
	struct sandbox_state *state;
	doca_error_t status = DOCA_SUCCESS;
	doca_error_t one;
	int keep;

	if (ctx == NULL || ctx->plugin_ctx == NULL || cmd_list == NULL)
		return DOCA_ERROR_INVALID_VALUE;

	state = ctx->plugin_ctx;
	while (!ucs_list_is_empty(cmd_list)) {
		cmd_desc = ucs_list_extract_head(cmd_list, struct urom_worker_cmd_desc, entry);
		keep = 0;
		one = sandbox_cmd_one(ctx, state, cmd_desc, &keep);
		/* Freed here, or by the send that still reads its inline data. */
		if (!keep)
			free(cmd_desc);
		if (one != DOCA_SUCCESS)
			status = one;
	}
	sandbox_send_queue_run(state);
	return status;
}

static doca_error_t sandbox_progress(struct urom_worker_ctx *ctx, ucs_list_link_t *notif_list)
{
	struct sandbox_state *state;
	int round, did;

	if (ctx == NULL || ctx->plugin_ctx == NULL || notif_list == NULL)
		return DOCA_ERROR_INVALID_VALUE;

	state = ctx->plugin_ctx;
	/*
	 * Until nothing moves: a step may issue host memory operations whose callbacks the
	 * library defers to its next progress, and nothing would call it before the loop sleeps.
	 */
	for (round = 0; round < SANDBOX_PROGRESS_ROUNDS; round++) {
		did = sandbox_ucp_progress(state);
		did |= sandbox_done_run(state);
		did |= sandbox_send_queue_run(state);
		if (!did)
			break;
	}
	if (ucs_list_is_empty(&state->completed))
		return DOCA_ERROR_EMPTY;

	ucs_list_splice_tail(notif_list, &state->completed);
	ucs_list_head_init(&state->completed);
	return DOCA_SUCCESS;
}

static doca_error_t sandbox_notif_pack(struct urom_worker_notify *notif, size_t *packed_notif_len,
				       void *packed_notif)
{
	const struct urom_worker_notify_sandbox *n;
	size_t need, expected;

	if (notif == NULL || packed_notif_len == NULL || packed_notif == NULL)
		return DOCA_ERROR_INVALID_VALUE;

	/* Only notifications of this plugin come here: header-only ones, or payload + data. */
	if (notif->len != 0) {
		if (notif->len < sizeof(*n))
			return DOCA_ERROR_INVALID_VALUE;
		n = (const struct urom_worker_notify_sandbox *)notif->plugin_notif;
		expected = sizeof(*n);
		if (n->type == UROM_WORKER_NOTIFY_SANDBOX_TAG_RECV && n->tag_recv.buffer != NULL)
			expected += n->tag_recv.count;
		if (notif->len != expected)
			return DOCA_ERROR_INVALID_VALUE;
	}

	need = offsetof(struct urom_worker_notify, plugin_notif) + notif->len;
	if (*packed_notif_len < need) {
		DOCA_LOG_ERR("notification needs %zu bytes, the message holds %zu", need,
			     *packed_notif_len);
		return DOCA_ERROR_TOO_BIG;
	}
	/* tag_recv.buffer travels as it is: the host half points it at the inline bytes. */
	memcpy(packed_notif, notif, need);
	*packed_notif_len = need;
	return DOCA_SUCCESS;
}

/* softdpu's runtime: sleep on the UCP worker's event fd instead of polling the plugin. */
DOCA_STABLE doca_error_t softdpu_plugin_wakeup_fd(struct urom_worker_ctx *ctx, int *fd);
DOCA_STABLE doca_error_t softdpu_plugin_arm(struct urom_worker_ctx *ctx);

doca_error_t softdpu_plugin_wakeup_fd(struct urom_worker_ctx *ctx, int *fd)
{
	struct sandbox_state *state;
	ucs_status_t ucs_status;
	int efd = -1;

	if (ctx == NULL || ctx->plugin_ctx == NULL || fd == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	state = ctx->plugin_ctx;
	ucs_status = ucp_worker_get_efd(state->ucp_worker, &efd);
	if (ucs_status != UCS_OK) {
		DOCA_LOG_WARN("ucp_worker_get_efd: %s; the runtime polls instead",
			      ucs_status_string(ucs_status));
		return DOCA_ERROR_DRIVER;
	}
	*fd = efd;
	return DOCA_SUCCESS;
}

doca_error_t softdpu_plugin_arm(struct urom_worker_ctx *ctx)
{
	struct sandbox_state *state;
	ucs_status_t ucs_status;

	if (ctx == NULL || ctx->plugin_ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	state = ctx->plugin_ctx;
	/* Work the next progress call would do: do not sleep on it. */
	if (!ucs_list_is_empty(&state->done) || !ucs_list_is_empty(&state->completed))
		return DOCA_ERROR_AGAIN;
	ucs_status = ucp_worker_arm(state->ucp_worker);
	if (ucs_status == UCS_OK)
		return DOCA_SUCCESS;
	if (ucs_status == UCS_ERR_BUSY)
		return DOCA_ERROR_AGAIN;
	DOCA_LOG_ERR("ucp_worker_arm: %s", ucs_status_string(ucs_status));
	return DOCA_ERROR_DRIVER;
}

/* The plugin's entry points, looked up by name by the worker runtime and the service. */
DOCA_STABLE doca_error_t urom_plugin_get_iface(struct urom_plugin_iface *iface);
DOCA_STABLE doca_error_t urom_plugin_get_version(uint64_t *version);

doca_error_t urom_plugin_get_iface(struct urom_plugin_iface *iface)
{
	struct urom_plugin_iface ops = {
		.open = sandbox_open,
		.close = sandbox_close,
		.addr = sandbox_addr,
		.worker_cmd = sandbox_worker_cmd,
		.progress = sandbox_progress,
		.notif_pack = sandbox_notif_pack,
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

	*version = UROM_WORKER_SANDBOX_VERSION;
	return DOCA_SUCCESS;
}
