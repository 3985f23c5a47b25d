/*
 * worker_rma plugin, host half: RMA commands as doca_urom worker command tasks.
 *
 * A command is written into the task's payload buffer; the caller's cookie and callback go
 * into the task's 32-byte user data area. The completion callback reads the notification from
 * the response buffer (its status is the command's outcome; the task's status when the worker
 * sent none), releases the task and reports.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "urom_rma.h"

#include <stdlib.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_pe.h>
#include <doca_urom.h>

#include "sdp_plugin_host.h"

DOCA_LOG_REGISTER(UROM::RMA::HOST);

/* Lives in the task's user data area (at most 32 bytes). */
struct rma_task_data {
	union doca_data cookie;
	uint64_t type;
	union {
		urom_rma_finished done;
		urom_rma_atomic_finished atomic;
		urom_rma_am_received am;
	} cb;
};

_Static_assert(sizeof(struct rma_task_data) <= 32,
	       "RMA task data must fit the worker command task's user data area");

static uint64_t rma_plugin_id;
static uint64_t rma_local_id;
static int rma_initialized;

doca_error_t urom_rma_init(uint64_t plugin_id, uint64_t version)
{
	if (version != UROM_WORKER_RMA_VERSION) {
		DOCA_LOG_ERR("worker_rma version %#lx on the worker, this host half speaks %#x",
			     (unsigned long)version, UROM_WORKER_RMA_VERSION);
		return DOCA_ERROR_UNSUPPORTED_VERSION;
	}
	rma_plugin_id = plugin_id;
	rma_initialized = 1;
	return DOCA_SUCCESS;
}

void urom_rma_set_local_id(uint64_t domain_id)
{
	rma_local_id = domain_id;
}

/* An AM_RECV answer: our own check of the notification, then the callback. */
static void am_completed(struct doca_urom_worker_cmd_task *task, const struct rma_task_data *td,
			 doca_error_t status, struct doca_buf *response)
{
	struct urom_worker_notify_rma_am n = {0};
	const uint8_t *body = NULL;
	void *ptr = NULL;
	size_t len = 0;

	if (response != NULL && doca_buf_get_data(response, &ptr) == DOCA_SUCCESS &&
	    doca_buf_get_data_len(response, &len) == DOCA_SUCCESS && len > 0) {
		if (ptr == NULL || len < sizeof(n)) {
			DOCA_LOG_ERR("AM response of %zu bytes, at least %zu expected", len,
				     sizeof(n));
			status = DOCA_ERROR_INVALID_VALUE;
		} else {
			memcpy(&n, ptr, sizeof(n));
			if (n.base.type != UROM_WORKER_CMD_RMA_AM_RECV ||
			    n.hdr_len > UROM_RMA_AM_HDR_MAX || n.base.len > len ||
			    len - sizeof(n) != n.hdr_len + n.base.len) {
				DOCA_LOG_ERR("malformed AM response (%zu bytes)", len);
				status = DOCA_ERROR_INVALID_VALUE;
			} else {
				int bad;

				status = sdp_plugin_notif_status(n.base.status, &bad);
				if (bad)
					DOCA_LOG_ERR(
						"AM response with status %lld, not a doca_error_t",
						(long long)n.base.status);
				else
					body = (const uint8_t *)ptr + sizeof(n);
			}
		}
	} else if (status == DOCA_SUCCESS) {
		DOCA_LOG_ERR("AM receive succeeded without a notification");
		status = DOCA_ERROR_INVALID_VALUE;
	}
	if (status == DOCA_SUCCESS)
		td->cb.am(status, td->cookie, n.handler, body, n.hdr_len, body + n.hdr_len,
			  n.base.len, n.sender, 0);
	else
		td->cb.am(status, td->cookie, n.handler, NULL, 0, NULL, 0, n.sender, n.dropped);
	/* After the callback: the bytes live in the response buffer. */
	if (doca_urom_worker_cmd_task_release(task) != DOCA_SUCCESS)
		DOCA_LOG_ERR("failed to release an AM task");
}

static void rma_completed(struct doca_urom_worker_cmd_task *task, union doca_data task_user_data,
			  union doca_data ctx_user_data)
{
	struct urom_worker_notify_rma n = {0};
	struct rma_task_data td;
	struct doca_buf *response;
	doca_error_t status;
	void *ptr = NULL;
	size_t len = 0;

	(void)task_user_data;
	(void)ctx_user_data;
	memcpy(&td, doca_urom_worker_cmd_task_get_user_data(task), sizeof(td));
	status = doca_task_get_status(doca_urom_worker_cmd_task_as_task(task));
	response = doca_urom_worker_cmd_task_get_response(task);
	if (td.type == UROM_WORKER_CMD_RMA_AM_RECV) {
		am_completed(task, &td, status, response);
		return;
	}
	if (response != NULL && doca_buf_get_data(response, &ptr) == DOCA_SUCCESS &&
	    doca_buf_get_data_len(response, &len) == DOCA_SUCCESS && len > 0) {
		if (ptr == NULL || len != sizeof(n)) {
			DOCA_LOG_ERR("RMA response of %zu bytes, expected %zu", len, sizeof(n));
			status = DOCA_ERROR_INVALID_VALUE;
		} else {
			memcpy(&n, ptr, sizeof(n));
			if (n.type != td.type) {
				DOCA_LOG_ERR("RMA command %lu answered as type %lu",
					     (unsigned long)td.type, (unsigned long)n.type);
				status = DOCA_ERROR_INVALID_VALUE;
			} else {
				int bad;

				status = sdp_plugin_notif_status(n.status, &bad);
				if (bad)
					DOCA_LOG_ERR(
						"RMA command %lu answered with status %lld, not a "
						"doca_error_t",
						(unsigned long)td.type, (long long)n.status);
			}
		}
	} else if (status == DOCA_SUCCESS) {
		DOCA_LOG_ERR("RMA command succeeded without a notification");
		status = DOCA_ERROR_INVALID_VALUE;
	}
	/* Release first: the callback may submit the next task into the freed slot. */
	if (doca_urom_worker_cmd_task_release(task) != DOCA_SUCCESS)
		DOCA_LOG_ERR("failed to release an RMA task");
	if (td.type == UROM_WORKER_CMD_RMA_ATOMIC)
		td.cb.atomic(status, td.cookie, status == DOCA_SUCCESS ? n.value : 0);
	else
		td.cb.done(status, td.cookie);
}

static doca_error_t rma_submit2(struct doca_urom_worker *worker, union doca_data cookie,
				const struct urom_worker_rma_cmd *c, const void *x1, size_t n1,
				const void *x2, size_t n2, void *cb)
{
	struct doca_urom_worker_cmd_task *task;
	struct rma_task_data td = {.cookie = cookie, .type = c->type};
	struct doca_buf *payload;
	doca_error_t st;
	void *p = NULL;
	size_t cap = 0;

	if (worker == NULL || cb == NULL) {
		DOCA_LOG_ERR("invalid argument: worker %p, callback %p", (void *)worker, cb);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!rma_initialized) {
		DOCA_LOG_ERR("urom_rma_init() was not called");
		return DOCA_ERROR_BAD_STATE;
	}
	st = doca_urom_worker_cmd_task_allocate_init(worker, rma_plugin_id, &task);
	if (st != DOCA_SUCCESS)
		return st;
	payload = doca_urom_worker_cmd_task_get_payload(task);
	if (payload == NULL || doca_buf_get_data(payload, &p) != DOCA_SUCCESS ||
	    doca_buf_get_data_len(payload, &cap) != DOCA_SUCCESS || p == NULL || cap < sizeof(*c)) {
		DOCA_LOG_ERR("the task's payload cannot hold an RMA command (%zu bytes)", cap);
		(void)doca_urom_worker_cmd_task_release(task);
		return DOCA_ERROR_NO_MEMORY;
	}
	/* AM bytes: bounded so that the receiver's notification fits the message size too. */
	if (n1 + n2 != 0 && n1 + n2 + sizeof(*c) + 16 > cap) {
		DOCA_LOG_ERR("AM of %zu + %zu bytes: at most %zu with this message size", n1, n2,
			     cap - sizeof(*c) - 16);
		(void)doca_urom_worker_cmd_task_release(task);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(p, c, sizeof(*c));
	if (n1 != 0)
		memcpy((uint8_t *)p + sizeof(*c), x1, n1);
	if (n2 != 0)
		memcpy((uint8_t *)p + sizeof(*c) + n1, x2, n2);
	(void)doca_buf_set_data(payload, p, sizeof(*c) + n1 + n2);
	if (c->type == UROM_WORKER_CMD_RMA_AM_RECV)
		td.cb.am = (urom_rma_am_received)cb;
	else if (c->type == UROM_WORKER_CMD_RMA_ATOMIC)
		td.cb.atomic = (urom_rma_atomic_finished)cb;
	else
		td.cb.done = (urom_rma_finished)cb;
	memcpy(doca_urom_worker_cmd_task_get_user_data(task), &td, sizeof(td));
	doca_urom_worker_cmd_task_set_cb(task, rma_completed);
	st = doca_task_submit(doca_urom_worker_cmd_task_as_task(task));
	if (st != DOCA_SUCCESS)
		(void)doca_urom_worker_cmd_task_release(task);
	return st;
}

static doca_error_t rma_submit(struct doca_urom_worker *worker, union doca_data cookie,
			       const struct urom_worker_rma_cmd *c, void *cb)
{
	return rma_submit2(worker, cookie, c, NULL, 0, NULL, 0, cb);
}

static doca_error_t rma_xfer(struct doca_urom_worker *worker, union doca_data cookie, uint64_t type,
			     uint64_t dest, uint64_t local_va, uint64_t remote_va, uint64_t len,
			     urom_rma_finished cb)
{
	struct urom_worker_rma_cmd c;

	memset(&c, 0, sizeof(c));
	c.type = type;
	c.xfer.context = cookie.u64;
	c.xfer.local_id = rma_local_id;
	c.xfer.local_va = local_va;
	c.xfer.dest = dest;
	c.xfer.remote_va = remote_va;
	c.xfer.len = len;
	return rma_submit(worker, cookie, &c, (void *)cb);
}

doca_error_t urom_rma_put(struct doca_urom_worker *worker, union doca_data cookie, uint64_t dest,
			  uint64_t local_va, uint64_t remote_va, uint64_t len, urom_rma_finished cb)
{
	return rma_xfer(worker, cookie, UROM_WORKER_CMD_RMA_PUT, dest, local_va, remote_va, len,
			cb);
}

doca_error_t urom_rma_get(struct doca_urom_worker *worker, union doca_data cookie, uint64_t dest,
			  uint64_t local_va, uint64_t remote_va, uint64_t len, urom_rma_finished cb)
{
	return rma_xfer(worker, cookie, UROM_WORKER_CMD_RMA_GET, dest, local_va, remote_va, len,
			cb);
}

doca_error_t urom_rma_atomic(struct doca_urom_worker *worker, union doca_data cookie,
			     enum urom_rma_atomic_op op, uint32_t size, uint64_t dest,
			     uint64_t remote_va, uint64_t operand, uint64_t compare,
			     urom_rma_atomic_finished cb)
{
	struct urom_worker_rma_cmd c;

	memset(&c, 0, sizeof(c));
	c.type = UROM_WORKER_CMD_RMA_ATOMIC;
	c.atomic.context = cookie.u64;
	c.atomic.op = op;
	c.atomic.size = size;
	c.atomic.dest = dest;
	c.atomic.remote_va = remote_va;
	c.atomic.operand = operand;
	c.atomic.compare = compare;
	return rma_submit(worker, cookie, &c, (void *)cb);
}

static doca_error_t rma_sync(struct doca_urom_worker *worker, union doca_data cookie, uint64_t type,
			     uint64_t dest, urom_rma_finished cb)
{
	struct urom_worker_rma_cmd c;

	memset(&c, 0, sizeof(c));
	c.type = type;
	c.sync.context = cookie.u64;
	c.sync.dest = dest;
	return rma_submit(worker, cookie, &c, (void *)cb);
}

doca_error_t urom_rma_fence(struct doca_urom_worker *worker, union doca_data cookie, uint64_t dest,
			    urom_rma_finished cb)
{
	return rma_sync(worker, cookie, UROM_WORKER_CMD_RMA_FENCE, dest, cb);
}

doca_error_t urom_rma_flush(struct doca_urom_worker *worker, union doca_data cookie, uint64_t dest,
			    urom_rma_finished cb)
{
	return rma_sync(worker, cookie, UROM_WORKER_CMD_RMA_FLUSH, dest, cb);
}

doca_error_t urom_rma_am_send(struct doca_urom_worker *worker, union doca_data cookie,
			      uint64_t dest, uint64_t handler, const void *hdr, size_t hdr_len,
			      const void *payload, size_t len, urom_rma_finished cb)
{
	struct urom_worker_rma_cmd c;

	if (hdr_len > UROM_RMA_AM_HDR_MAX || handler > UINT32_MAX ||
	    (hdr_len != 0 && hdr == NULL) || (len != 0 && payload == NULL) ||
	    len > UROM_RMA_MAX_LEN) {
		DOCA_LOG_ERR("AM for handler %lu: header of %zu bytes (at most %d), payload %zu "
			     "bytes at %p",
			     (unsigned long)handler, hdr_len, UROM_RMA_AM_HDR_MAX, len, payload);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memset(&c, 0, sizeof(c));
	c.type = UROM_WORKER_CMD_RMA_AM_SEND;
	c.am_send.context = cookie.u64;
	c.am_send.local_id = rma_local_id;
	c.am_send.dest = dest;
	c.am_send.handler = handler;
	c.am_send.hdr_len = hdr_len;
	c.am_send.len = len;
	return rma_submit2(worker, cookie, &c, hdr, hdr_len, payload, len, (void *)cb);
}

doca_error_t urom_rma_am_recv(struct doca_urom_worker *worker, union doca_data cookie,
			      uint64_t handler, urom_rma_am_received cb)
{
	struct urom_worker_rma_cmd c;

	if (handler != UROM_RMA_AM_ANY && handler > UINT32_MAX) {
		DOCA_LOG_ERR("AM receive for handler %lu: handler ids are 32-bit",
			     (unsigned long)handler);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memset(&c, 0, sizeof(c));
	c.type = UROM_WORKER_CMD_RMA_AM_RECV;
	c.am_recv.context = cookie.u64;
	c.am_recv.handler = handler;
	return rma_submit(worker, cookie, &c, (void *)cb);
}

/* ---- blocking helpers ---- */

/* Heap-held: a callback after a timed-out wait frees it instead of writing a dead frame. */
struct waiter {
	int done, abandoned;
	doca_error_t result;
	uint64_t value;
	struct urom_rma_am_msg *msg; /* AM receive */
};

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

static void wait_atomic_done(doca_error_t result, union doca_data cookie, uint64_t value)
{
	struct waiter *w = cookie.ptr;

	if (!w->abandoned)
		w->value = value;
	wait_done(result, cookie);
}

/* A submission as a closure over the waiter (the cookie). */
struct sub {
	uint64_t type;
	uint64_t dest, local_va, remote_va, len, operand, compare;
	enum urom_rma_atomic_op op;
	uint32_t size;
	uint64_t handler; /* AM */
	const void *hdr, *payload;
	size_t hdr_len;
};

static void wait_am_done(doca_error_t result, union doca_data cookie, uint64_t handler,
			 const void *hdr, size_t hdr_len, const void *payload, size_t len,
			 uint64_t sender, uint64_t dropped)
{
	struct waiter *w = cookie.ptr;
	struct urom_rma_am_msg *m = w->msg;

	if (!w->abandoned) {
		m->handler = handler;
		m->sender = sender;
		m->dropped = dropped;
		m->hdr_len = hdr_len;
		m->len = len;
		if (result == DOCA_SUCCESS && len > m->cap) {
			DOCA_LOG_ERR("AM of %zu bytes for a %zu-byte buffer", len, m->cap);
			result = DOCA_ERROR_INVALID_VALUE;
		} else if (result == DOCA_SUCCESS) {
			if (hdr_len != 0)
				memcpy(m->hdr, hdr, hdr_len);
			if (len != 0)
				memcpy(m->payload, payload, len);
		}
	}
	wait_done(result, cookie);
}

static doca_error_t sub_issue(struct doca_urom_worker *worker, const struct sub *s,
			      union doca_data cookie)
{
	switch (s->type) {
	case UROM_WORKER_CMD_RMA_PUT:
		return urom_rma_put(worker, cookie, s->dest, s->local_va, s->remote_va, s->len,
				    wait_done);
	case UROM_WORKER_CMD_RMA_GET:
		return urom_rma_get(worker, cookie, s->dest, s->local_va, s->remote_va, s->len,
				    wait_done);
	case UROM_WORKER_CMD_RMA_ATOMIC:
		return urom_rma_atomic(worker, cookie, s->op, s->size, s->dest, s->remote_va,
				       s->operand, s->compare, wait_atomic_done);
	case UROM_WORKER_CMD_RMA_FENCE:
		return urom_rma_fence(worker, cookie, s->dest, wait_done);
	case UROM_WORKER_CMD_RMA_AM_SEND:
		return urom_rma_am_send(worker, cookie, s->dest, s->handler, s->hdr, s->hdr_len,
					s->payload, s->len, wait_done);
	case UROM_WORKER_CMD_RMA_AM_RECV:
		return urom_rma_am_recv(worker, cookie, s->handler, wait_am_done);
	default:
		return urom_rma_flush(worker, cookie, s->dest, wait_done);
	}
}

static doca_error_t sub_wait(struct doca_urom_worker *worker, struct doca_pe *pe,
			     const struct sub *s, uint64_t *value, struct urom_rma_am_msg *msg,
			     int timeout_ms)
{
	int64_t deadline = sdp_plugin_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	struct waiter *w;
	union doca_data cookie;
	doca_error_t st;

	if (pe == NULL) {
		DOCA_LOG_ERR("invalid argument: NULL progress engine");
		return DOCA_ERROR_INVALID_VALUE;
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return DOCA_ERROR_NO_MEMORY;
	w->msg = msg;
	cookie.ptr = w;
	while ((st = sub_issue(worker, s, cookie)) == DOCA_ERROR_AGAIN &&
	       sdp_plugin_now_ms() < deadline)
		sdp_plugin_pe_step(pe);
	if (st != DOCA_SUCCESS) {
		free(w);
		return st;
	}
	while (!w->done && sdp_plugin_now_ms() < deadline)
		sdp_plugin_pe_step(pe);
	if (!w->done) {
		w->abandoned = 1;
		DOCA_LOG_ERR("RMA command type %lu: no completion within %d ms",
			     (unsigned long)s->type, timeout_ms);
		return DOCA_ERROR_TIME_OUT;
	}
	st = w->result;
	if (value != NULL)
		*value = w->value;
	free(w);
	return st;
}

doca_error_t urom_rma_put_wait(struct doca_urom_worker *worker, struct doca_pe *pe, uint64_t dest,
			       uint64_t local_va, uint64_t remote_va, uint64_t len, int timeout_ms)
{
	struct sub s = {.type = UROM_WORKER_CMD_RMA_PUT,
			.dest = dest,
			.local_va = local_va,
			.remote_va = remote_va,
			.len = len};

	return sub_wait(worker, pe, &s, NULL, NULL, timeout_ms);
}

doca_error_t urom_rma_get_wait(struct doca_urom_worker *worker, struct doca_pe *pe, uint64_t dest,
			       uint64_t local_va, uint64_t remote_va, uint64_t len, int timeout_ms)
{
	struct sub s = {.type = UROM_WORKER_CMD_RMA_GET,
			.dest = dest,
			.local_va = local_va,
			.remote_va = remote_va,
			.len = len};

	return sub_wait(worker, pe, &s, NULL, NULL, timeout_ms);
}

doca_error_t urom_rma_atomic_wait(struct doca_urom_worker *worker, struct doca_pe *pe,
				  enum urom_rma_atomic_op op, uint32_t size, uint64_t dest,
				  uint64_t remote_va, uint64_t operand, uint64_t compare,
				  uint64_t *value, int timeout_ms)
{
	struct sub s = {.type = UROM_WORKER_CMD_RMA_ATOMIC,
			.dest = dest,
			.remote_va = remote_va,
			.operand = operand,
			.compare = compare,
			.op = op,
			.size = size};

	return sub_wait(worker, pe, &s, value, NULL, timeout_ms);
}

doca_error_t urom_rma_fence_wait(struct doca_urom_worker *worker, struct doca_pe *pe, uint64_t dest,
				 int timeout_ms)
{
	struct sub s = {.type = UROM_WORKER_CMD_RMA_FENCE, .dest = dest};

	return sub_wait(worker, pe, &s, NULL, NULL, timeout_ms);
}

doca_error_t urom_rma_flush_wait(struct doca_urom_worker *worker, struct doca_pe *pe, uint64_t dest,
				 int timeout_ms)
{
	struct sub s = {.type = UROM_WORKER_CMD_RMA_FLUSH, .dest = dest};

	return sub_wait(worker, pe, &s, NULL, NULL, timeout_ms);
}

doca_error_t urom_rma_am_send_wait(struct doca_urom_worker *worker, struct doca_pe *pe,
				   uint64_t dest, uint64_t handler, const void *hdr, size_t hdr_len,
				   const void *payload, size_t len, int timeout_ms)
{
	struct sub s = {.type = UROM_WORKER_CMD_RMA_AM_SEND,
			.dest = dest,
			.handler = handler,
			.hdr = hdr,
			.hdr_len = hdr_len,
			.payload = payload,
			.len = len};

	return sub_wait(worker, pe, &s, NULL, NULL, timeout_ms);
}

doca_error_t urom_rma_am_recv_wait(struct doca_urom_worker *worker, struct doca_pe *pe,
				   uint64_t handler, struct urom_rma_am_msg *msg, int timeout_ms)
{
	struct sub s = {.type = UROM_WORKER_CMD_RMA_AM_RECV, .handler = handler};

	if (msg == NULL || msg->hdr == NULL || (msg->cap != 0 && msg->payload == NULL)) {
		DOCA_LOG_ERR("invalid argument: AM receive without buffers");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return sub_wait(worker, pe, &s, NULL, msg, timeout_ms);
}
