/*
 * worker_coll plugin, host half: collectives as doca_urom worker command tasks.
 *
 * A command is written into the task's payload buffer; the caller's cookie and callback go
 * into the task's user data area. The completion callback reads the notification from the
 * response buffer (its status is the outcome; the task's status when the worker sent none),
 * releases the task and reports.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "urom_coll.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_buf.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_pe.h>
#include <doca_urom.h>

DOCA_LOG_REGISTER(UROM::COLL::HOST);

struct coll_task_data {
	union doca_data cookie;
	uint64_t type;
	urom_coll_finished cb;
};

_Static_assert(sizeof(struct coll_task_data) <= 32,
	       "collective task data must fit the worker command task's user data area");

static uint64_t coll_plugin_id, coll_rank, coll_size;
static int coll_initialized;

doca_error_t urom_coll_init(uint64_t plugin_id, uint64_t version, uint64_t rank, uint64_t size)
{
	if (version != UROM_WORKER_COLL_VERSION) {
		DOCA_LOG_ERR("worker_coll version %#lx on the worker, this host half speaks %#x",
			     (unsigned long)version, UROM_WORKER_COLL_VERSION);
		return DOCA_ERROR_UNSUPPORTED_VERSION;
	}
	if (size == 0 || size > UROM_COLL_MAX_MEMBERS || rank >= size) {
		DOCA_LOG_ERR("rank %lu of a team of %lu (1 .. %u members)", (unsigned long)rank,
			     (unsigned long)size, UROM_COLL_MAX_MEMBERS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	coll_plugin_id = plugin_id;
	coll_rank = rank;
	coll_size = size;
	coll_initialized = 1;
	return DOCA_SUCCESS;
}

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
			memcpy(&n, ptr, sizeof(n));
			status = (doca_error_t)n.status;
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
	td.cb(status, td.cookie);
}

doca_error_t urom_coll_submit(struct doca_urom_worker *worker, union doca_data cookie,
			      const struct urom_worker_coll_cmd *cmd, urom_coll_finished cb)
{
	struct doca_urom_worker_cmd_task *task;
	struct coll_task_data td = {.cookie = cookie, .cb = cb};
	struct urom_worker_coll_cmd c;
	struct doca_buf *payload;
	doca_error_t st;
	void *p = NULL;
	size_t cap = 0;

	if (worker == NULL || cb == NULL || cmd == NULL) {
		DOCA_LOG_ERR("invalid argument: worker %p, command %p, callback %p", (void *)worker,
			     (const void *)cmd, (void *)cb);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!coll_initialized) {
		DOCA_LOG_ERR("urom_coll_init() was not called");
		return DOCA_ERROR_BAD_STATE;
	}
	c = *cmd;
	c.rank = coll_rank;
	c.size = coll_size;
	c.context = cookie.u64;
	td.type = c.type;
	st = doca_urom_worker_cmd_task_allocate_init(worker, coll_plugin_id, &task);
	if (st != DOCA_SUCCESS)
		return st;
	payload = doca_urom_worker_cmd_task_get_payload(task);
	if (payload == NULL || doca_buf_get_data(payload, &p) != DOCA_SUCCESS ||
	    doca_buf_get_data_len(payload, &cap) != DOCA_SUCCESS || p == NULL || cap < sizeof(c)) {
		DOCA_LOG_ERR("the task's payload cannot hold a collective (%zu bytes)", cap);
		(void)doca_urom_worker_cmd_task_release(task);
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(p, &c, sizeof(c));
	(void)doca_buf_set_data(payload, p, sizeof(c));
	memcpy(doca_urom_worker_cmd_task_get_user_data(task), &td, sizeof(td));
	doca_urom_worker_cmd_task_set_cb(task, coll_completed);
	st = doca_task_submit(doca_urom_worker_cmd_task_as_task(task));
	if (st != DOCA_SUCCESS)
		(void)doca_urom_worker_cmd_task_release(task);
	return st;
}

static struct urom_worker_coll_cmd mk(uint64_t type, const void *sbuf, void *rbuf, uint64_t count,
				      uint64_t dtype, uint64_t op, uint64_t root)
{
	struct urom_worker_coll_cmd c;

	memset(&c, 0, sizeof(c));
	c.type = type;
	c.sbuf_va = (uint64_t)(uintptr_t)sbuf;
	c.rbuf_va = (uint64_t)(uintptr_t)rbuf;
	c.count = count;
	c.dtype = dtype;
	c.op = op;
	c.root = root;
	return c;
}

doca_error_t urom_coll_barrier(struct doca_urom_worker *worker, union doca_data cookie,
			       urom_coll_finished cb)
{
	struct urom_worker_coll_cmd c = mk(UROM_WORKER_CMD_COLL_BARRIER, NULL, NULL, 0, 0, 0, 0);

	return urom_coll_submit(worker, cookie, &c, cb);
}

doca_error_t urom_coll_allreduce(struct doca_urom_worker *worker, union doca_data cookie,
				 const void *sbuf, void *rbuf, uint64_t count,
				 enum urom_coll_dtype dtype, enum urom_coll_op op,
				 urom_coll_finished cb)
{
	struct urom_worker_coll_cmd c =
		mk(UROM_WORKER_CMD_COLL_ALLREDUCE, sbuf, rbuf, count, dtype, op, 0);

	return urom_coll_submit(worker, cookie, &c, cb);
}

doca_error_t urom_coll_alltoall(struct doca_urom_worker *worker, union doca_data cookie,
				const void *sbuf, void *rbuf, uint64_t count,
				enum urom_coll_dtype dtype, urom_coll_finished cb)
{
	struct urom_worker_coll_cmd c =
		mk(UROM_WORKER_CMD_COLL_ALLTOALL, sbuf, rbuf, count, dtype, 0, 0);

	return urom_coll_submit(worker, cookie, &c, cb);
}

doca_error_t urom_coll_allgather(struct doca_urom_worker *worker, union doca_data cookie,
				 const void *sbuf, void *rbuf, uint64_t count,
				 enum urom_coll_dtype dtype, urom_coll_finished cb)
{
	struct urom_worker_coll_cmd c =
		mk(UROM_WORKER_CMD_COLL_ALLGATHER, sbuf, rbuf, count, dtype, 0, 0);

	return urom_coll_submit(worker, cookie, &c, cb);
}

doca_error_t urom_coll_bcast(struct doca_urom_worker *worker, union doca_data cookie,
			     const void *sbuf, void *rbuf, uint64_t count,
			     enum urom_coll_dtype dtype, uint64_t root, urom_coll_finished cb)
{
	struct urom_worker_coll_cmd c =
		mk(UROM_WORKER_CMD_COLL_BCAST, sbuf, rbuf, count, dtype, 0, root);

	return urom_coll_submit(worker, cookie, &c, cb);
}

/* ---- blocking helpers ---- */

/* Heap-held: a callback after a timed-out wait frees it instead of writing a dead frame. */
struct waiter {
	int done, abandoned;
	doca_error_t result;
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

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One step of the PE: progress, or sleep on its notification handle up to 2 ms. */
static void pe_step(struct doca_pe *pe)
{
	doca_notification_handle_t h;

	if (doca_pe_progress(pe))
		return;
	if (doca_pe_get_notification_handle(pe, &h) == DOCA_SUCCESS &&
	    doca_pe_request_notification(pe) == DOCA_SUCCESS) {
		struct pollfd p = {.fd = (int)h, .events = POLLIN};

		if (poll(&p, 1, 2) > 0)
			(void)doca_pe_clear_notification(pe, h);
	} else {
		struct timespec ts = {0, 1000000};

		nanosleep(&ts, NULL);
	}
	(void)doca_pe_progress(pe);
}

doca_error_t urom_coll_submit_wait(struct doca_urom_worker *worker, struct doca_pe *pe,
				   const struct urom_worker_coll_cmd *cmd, int timeout_ms)
{
	int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	union doca_data cookie;
	struct waiter *w;
	doca_error_t st;

	if (pe == NULL) {
		DOCA_LOG_ERR("invalid argument: NULL progress engine");
		return DOCA_ERROR_INVALID_VALUE;
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return DOCA_ERROR_NO_MEMORY;
	cookie.ptr = w;
	while ((st = urom_coll_submit(worker, cookie, cmd, wait_done)) == DOCA_ERROR_AGAIN &&
	       now_ms() < deadline)
		pe_step(pe);
	if (st != DOCA_SUCCESS) {
		free(w);
		return st;
	}
	while (!w->done && now_ms() < deadline)
		pe_step(pe);
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

doca_error_t urom_coll_barrier_wait(struct doca_urom_worker *worker, struct doca_pe *pe,
				    int timeout_ms)
{
	struct urom_worker_coll_cmd c = mk(UROM_WORKER_CMD_COLL_BARRIER, NULL, NULL, 0, 0, 0, 0);

	return urom_coll_submit_wait(worker, pe, &c, timeout_ms);
}

doca_error_t urom_coll_allreduce_wait(struct doca_urom_worker *worker, struct doca_pe *pe,
				      const void *sbuf, void *rbuf, uint64_t count,
				      enum urom_coll_dtype dtype, enum urom_coll_op op,
				      int timeout_ms)
{
	struct urom_worker_coll_cmd c =
		mk(UROM_WORKER_CMD_COLL_ALLREDUCE, sbuf, rbuf, count, dtype, op, 0);

	return urom_coll_submit_wait(worker, pe, &c, timeout_ms);
}

doca_error_t urom_coll_alltoall_wait(struct doca_urom_worker *worker, struct doca_pe *pe,
				     const void *sbuf, void *rbuf, uint64_t count,
				     enum urom_coll_dtype dtype, int timeout_ms)
{
	struct urom_worker_coll_cmd c =
		mk(UROM_WORKER_CMD_COLL_ALLTOALL, sbuf, rbuf, count, dtype, 0, 0);

	return urom_coll_submit_wait(worker, pe, &c, timeout_ms);
}

doca_error_t urom_coll_allgather_wait(struct doca_urom_worker *worker, struct doca_pe *pe,
				      const void *sbuf, void *rbuf, uint64_t count,
				      enum urom_coll_dtype dtype, int timeout_ms)
{
	struct urom_worker_coll_cmd c =
		mk(UROM_WORKER_CMD_COLL_ALLGATHER, sbuf, rbuf, count, dtype, 0, 0);

	return urom_coll_submit_wait(worker, pe, &c, timeout_ms);
}

doca_error_t urom_coll_bcast_wait(struct doca_urom_worker *worker, struct doca_pe *pe,
				  const void *sbuf, void *rbuf, uint64_t count,
				  enum urom_coll_dtype dtype, uint64_t root, int timeout_ms)
{
	struct urom_worker_coll_cmd c =
		mk(UROM_WORKER_CMD_COLL_BCAST, sbuf, rbuf, count, dtype, 0, root);

	return urom_coll_submit_wait(worker, pe, &c, timeout_ms);
}
