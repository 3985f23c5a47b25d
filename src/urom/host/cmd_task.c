/*
 * libdoca_urom: worker command tasks.
 *
 * A task owns one allocation: the task, then a struct urom_worker_cmd header followed by the
 * payload area, then the response area. Both areas are doca_bufs over a small doca_mmap of
 * their own, so every doca_buf_* call works on them. The payload buf starts with data = the
 * area and data length = its capacity (message size - 24); the plugin's host half writes its
 * command there and sets the data length. At submit the header is filled in place and the
 * whole command is packed as one W_CMD behind those not sent yet. urom_context = generation
 * << 32 | slot index: a notification for a slot that was flushed or reused meanwhile is
 * dropped.
 *
 * Sending: doca_task_submit() (DOCA_TASK_SUBMIT_FLAG_FLUSH) sends the command at once, with
 * the ones packed before it in the same active message; its own send failing fails the
 * submission, as before batching. doca_task_submit_ex() without the flag only packs: the
 * commands go out together at the next flushing submission, doca_ctx_flush_tasks(), the next
 * doca_pe_progress() call, doca_pe_request_notification(), any other message to the worker or
 * when the next one does not fit (one active message carries at most the service's message
 * size; sdp_urom_proto.h). A batch whose send fails completes its tasks with that error.
 *
 * Released tasks are not freed: they go to the worker context's cache, with their started mmap
 * and attached bufs, and the next allocation takes one from there (creating and starting an
 * mmap per command cost more than the command itself). A reused task is as a new one: payload
 * data = the area, data length = its capacity, response empty, user data zeroed, no callback,
 * plugin as allocate_init sets it. The cache holds at most SDP_UROM_TASK_CACHE_MAX tasks and is
 * freed when the worker context is destroyed; a task whose bufs the application left in an odd
 * state (a reference dropped or taken) is freed instead of cached.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdlib.h>
#include <string.h>

#include "doca_buf.h"
#include "doca_mmap.h"
#include "doca_urom.h"
#include "sdp_buf.h"
#include "sdp_ctx.h"
#include "sdp_log.h"
#include "sdp_urom_host.h"

SDP_LOG_COMPONENT("urom_cmd_task");

#define ALIGN8(x) (((x) + 7u) & ~(size_t)7u)
/* Released tasks kept per worker context, beyond the in-flight limit. */
#define SDP_UROM_TASK_CACHE_MAX 1024

static struct doca_urom_worker_cmd_task *cmd_of(struct doca_task *task)
{
	return (struct doca_urom_worker_cmd_task *)task;
}

/* The application dropped the last reference of a buf that belongs to the task. */
static void cmd_buf_put(void *owner, struct doca_buf *buf)
{
	sdp_error("command task %p: buf %p belongs to the task and was released by the "
		  "application; the task can only be released now",
		  owner, (void *)buf);
}

static const struct sdp_buf_owner_ops cmd_buf_owner = {
	.name = "urom_cmd_task",
	.put = cmd_buf_put,
};

/* ---- slots ---------------------------------------------------------------------------------- */

static void slot_free(struct doca_urom_worker *worker, uint32_t slot)
{
	worker->slots[slot].task = NULL;
	worker->free_slots[worker->num_free++] = slot;
}

void sdp_urom_worker_flush_tasks(struct doca_urom_worker *worker, doca_error_t status)
{
	uint32_t i;

	if (worker->slots == NULL)
		return;
	/* Commands not sent yet end with the rest, unsent. */
	worker->send_len = 0;
	worker->send_n = 0;
	for (i = 0; i < worker->max_inflight; i++) {
		struct doca_urom_worker_cmd_task *task = worker->slots[i].task;

		if (task == NULL)
			continue;
		slot_free(worker, i);
		task->response.data = task->response.head;
		task->response.data_len = 0;
		sdp_task_complete(&task->super, status);
	}
}

void sdp_urom_worker_handle_notif(struct doca_urom_worker *worker, const struct sdp_urom_msg *msg)
{
	const struct sdp_urom_bytes *bytes = &msg->u.w_notif.notif;
	struct doca_urom_worker_cmd_task *task;
	struct urom_worker_notify hdr;
	doca_error_t status;
	uint32_t slot, gen;

	if (bytes->len < SDP_UROM_NOTIFY_HDR_LEN) {
		sdp_warn("worker %lu: notification of %u bytes is shorter than its %u-byte header; "
			 "dropped",
			 (unsigned long)worker->id, bytes->len, SDP_UROM_NOTIFY_HDR_LEN);
		return;
	}
	memcpy(&hdr, bytes->data, SDP_UROM_NOTIFY_HDR_LEN);
	slot = (uint32_t)(hdr.urom_context & 0xffffffffu);
	gen = (uint32_t)(hdr.urom_context >> 32);
	if (worker->slots == NULL || slot >= worker->max_inflight ||
	    worker->slots[slot].task == NULL || worker->slots[slot].gen != gen) {
		sdp_debug("worker %lu: notification for context 0x%lx matches no task in flight "
			  "(late or foreign); dropped",
			  (unsigned long)worker->id, (unsigned long)hdr.urom_context);
		return;
	}
	task = worker->slots[slot].task;
	slot_free(worker, slot);

	status = hdr.status;
	task->response.data = task->response.head;
	task->response.data_len = 0;
	if (hdr.len > bytes->len - SDP_UROM_NOTIFY_HDR_LEN) {
		sdp_error("worker %lu: notification says %lu payload bytes but carries %u",
			  (unsigned long)worker->id, (unsigned long)hdr.len,
			  bytes->len - SDP_UROM_NOTIFY_HDR_LEN);
		status = DOCA_ERROR_UNEXPECTED;
	} else if (hdr.len > task->resp_cap) {
		sdp_error("worker %lu: notification of %lu bytes exceeds the response capacity %zu",
			  (unsigned long)worker->id, (unsigned long)hdr.len, task->resp_cap);
		status = DOCA_ERROR_TOO_BIG;
	} else {
		memcpy(task->resp_mem, bytes->data + SDP_UROM_NOTIFY_HDR_LEN, hdr.len);
		task->response.data_len = hdr.len;
	}
	sdp_trace("worker %lu: task %p completed: %s", (unsigned long)worker->id, (void *)task,
		  doca_error_get_name(status));
	sdp_task_complete(&task->super, status);
}

/* The commands in send_buf failed to go out: their tasks complete with status. */
static void cmds_fail(struct doca_urom_worker *worker, uint32_t n, doca_error_t status)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t slot = worker->send_slots[i];
		struct doca_urom_worker_cmd_task *task = worker->slots[slot].task;

		slot_free(worker, slot);
		task->response.data = task->response.head;
		task->response.data_len = 0;
		sdp_task_complete(&task->super, status);
	}
}

/*
 * Send the first len bytes of send_buf: the commands waiting there, and maybe one more packed
 * behind them. When that fails the waiting ones complete with the error.
 */
static doca_error_t cmds_send(struct doca_urom_worker *worker, size_t len)
{
	uint32_t n = worker->send_n;
	doca_error_t status;

	status = sdp_ucx_send(&worker->ucx, worker->ep, worker->send_buf, len);
	worker->send_len = 0;
	worker->send_n = 0;
	if (status != DOCA_SUCCESS && n != 0) {
		sdp_error("worker %lu: %u commands submitted without flush failed to go out: %s",
			  (unsigned long)worker->id, n, doca_error_get_name(status));
		cmds_fail(worker, n, status);
	}
	return status;
}

doca_error_t sdp_urom_worker_send_cmds(struct doca_urom_worker *worker)
{
	return worker->send_len != 0 ? cmds_send(worker, worker->send_len) : DOCA_SUCCESS;
}

/* ---- task type ------------------------------------------------------------------------------ */

static doca_error_t cmd_task_validate(const struct doca_task *t)
{
	const struct doca_urom_worker_cmd_task *task = (const struct doca_urom_worker_cmd_task *)t;
	const struct doca_urom_worker *worker = task->worker;
	size_t offset;

	/* A command goes to exactly one plugin: its id is a single bit of the worker's mask. */
	if (task->plugin == 0 || (task->plugin & (task->plugin - 1)) != 0 ||
	    (task->plugin & ~worker->plugins) != 0) {
		sdp_error("command task %p: plugin 0x%lx is not one of the worker's plugins 0x%lx",
			  (const void *)task, (unsigned long)task->plugin,
			  (unsigned long)worker->plugins);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (task->payload.refcount == 0) {
		sdp_error("command task %p: its payload buf was released", (const void *)task);
		return DOCA_ERROR_INVALID_VALUE;
	}
	offset =
		(size_t)((const uint8_t *)task->payload.data - (const uint8_t *)task->payload.head);
	if (task->payload.data_len > task->payload_cap ||
	    offset > task->payload_cap - task->payload.data_len) {
		sdp_error("command task %p: payload of %zu bytes at offset %zu exceeds the "
			  "capacity of %zu bytes (message size %zu)",
			  (const void *)task, task->payload.data_len, offset, task->payload_cap,
			  worker->msg_size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t cmd_task_submit(struct doca_task *t)
{
	struct doca_urom_worker_cmd_task *task = cmd_of(t);
	struct doca_urom_worker *worker = task->worker;
	struct urom_worker_cmd hdr;
	struct sdp_urom_msg msg;
	doca_error_t status;
	uint32_t slot;
	size_t used = 0;

	status = cmd_task_validate(t);
	if (status != DOCA_SUCCESS)
		return status;
	if (worker->phase != SDP_UROM_W_RUNNING || atomic_load(&worker->dead)) {
		sdp_error("command task %p: worker %lu (pid %u) is gone", (void *)task,
			  (unsigned long)worker->id, worker->pid);
		return DOCA_ERROR_IO_FAILED;
	}
	if (worker->num_free == 0) {
		sdp_debug("command task %p: %u tasks in flight already (max_inflight_tasks)",
			  (void *)task, worker->max_inflight);
		return DOCA_ERROR_AGAIN;
	}

	if (task->payload.data != task->payload.head) {
		memmove(task->payload.head, task->payload.data, task->payload.data_len);
		task->payload.data = task->payload.head;
	}
	slot = worker->free_slots[--worker->num_free];
	worker->slots[slot].gen++;
	worker->slots[slot].task = task;
	task->slot = slot;

	hdr.type = task->plugin;
	hdr.urom_context = (uint64_t)worker->slots[slot].gen << 32 | slot;
	hdr.len = task->payload.data_len;
	memcpy(task->cmd_mem, &hdr, SDP_UROM_CMD_HDR_LEN);
	task->response.data = task->response.head;
	task->response.data_len = 0;

	msg.hdr.type = SDP_UROM_MSG_W_CMD;
	msg.hdr.req_id = 0;
	msg.u.w_cmd.dest_id = worker->dest_id;
	msg.u.w_cmd.cmd.data = task->cmd_mem;
	msg.u.w_cmd.cmd.len = (uint32_t)(SDP_UROM_CMD_HDR_LEN + hdr.len);
	status = sdp_urom_msg_pack(&msg, (uint8_t *)worker->send_buf + worker->send_len,
				   worker->send_cap - worker->send_len, &used);
	if (status == DOCA_ERROR_TOO_BIG && worker->send_len != 0) {
		/* what waits goes first (a failure there fails those tasks, not this one) */
		(void)sdp_urom_worker_send_cmds(worker);
		status = sdp_urom_msg_pack(&msg, worker->send_buf, worker->send_cap, &used);
	}
	if (status != DOCA_SUCCESS) {
		sdp_error("command task %p: packing a command of %lu bytes failed: %s",
			  (void *)task, (unsigned long)hdr.len, doca_error_get_name(status));
		goto err_free_slot;
	}
	if (task->super.submit_flags & DOCA_TASK_SUBMIT_FLAG_FLUSH) {
		/* This one and those packed before it, in one active message. */
		status = cmds_send(worker, worker->send_len + used);
		if (status != DOCA_SUCCESS)
			goto err_free_slot;
	} else {
		worker->send_slots[worker->send_n++] = slot;
		worker->send_len += used;
	}
	sdp_trace("worker %lu: task %p submitted, context 0x%lx, %lu bytes",
		  (unsigned long)worker->id, (void *)task, (unsigned long)hdr.urom_context,
		  (unsigned long)hdr.len);
	return DOCA_SUCCESS;

err_free_slot:
	slot_free(worker, slot);
	return status;
}

static void cmd_task_destroy(struct doca_urom_worker_cmd_task *task)
{
	if (task->payload.refcount != 0)
		sdp_mmap_buf_detach(task->mmap);
	if (task->response.refcount != 0)
		sdp_mmap_buf_detach(task->mmap);
	if (doca_mmap_stop(task->mmap) != DOCA_SUCCESS ||
	    doca_mmap_destroy(task->mmap) != DOCA_SUCCESS)
		sdp_warn("command task %p: its buffer map could not be destroyed", (void *)task);
	free(task);
}

static void cmd_task_completed(struct doca_task *t, union doca_data task_user_data,
			       union doca_data ctx_user_data);
static const struct sdp_task_ops cmd_task_ops;

/* doca_task_free: keep the task for the next allocation when it is intact. */
static void cmd_task_free(struct doca_task *t)
{
	struct doca_urom_worker_cmd_task *task = cmd_of(t);
	struct doca_urom_worker *worker = task->worker;

	if (task->payload.refcount != 1 || task->response.refcount != 1 ||
	    worker->num_cached >= SDP_UROM_TASK_CACHE_MAX) {
		cmd_task_destroy(task);
		return;
	}
	sdp_list_add_tail(&worker->task_cache, &task->cache_link);
	worker->num_cached++;
}

void sdp_urom_worker_task_cache_fini(struct doca_urom_worker *worker)
{
	struct doca_urom_worker_cmd_task *task;

	while (!sdp_list_is_empty(&worker->task_cache)) {
		task = sdp_container_of(worker->task_cache.next, struct doca_urom_worker_cmd_task,
					cache_link);
		sdp_list_del(&task->cache_link);
		cmd_task_destroy(task);
	}
	worker->num_cached = 0;
}

/* A cached task of the right size made new again, or NULL. */
static struct doca_urom_worker_cmd_task *cmd_task_reuse(struct doca_urom_worker *worker,
							size_t payload_cap, size_t resp_cap)
{
	struct doca_urom_worker_cmd_task *t;

	while (!sdp_list_is_empty(&worker->task_cache)) {
		/* Most recently released first: its memory is still in the cache. */
		t = sdp_container_of(worker->task_cache.prev, struct doca_urom_worker_cmd_task,
				     cache_link);
		sdp_list_del(&t->cache_link);
		worker->num_cached--;
		if (t->payload_cap != payload_cap || t->resp_cap != resp_cap) {
			cmd_task_destroy(t); /* another message size: made for an earlier run */
			continue;
		}
		t->plugin = 0;
		t->cb = NULL;
		memset(t->user_data, 0, sizeof(t->user_data));
		t->slot = 0;
		sdp_buf_init(&t->payload, t->mmap, t->cmd_mem + SDP_UROM_CMD_HDR_LEN, payload_cap,
			     t->cmd_mem + SDP_UROM_CMD_HDR_LEN, payload_cap);
		t->payload.owner_ops = &cmd_buf_owner;
		t->payload.owner = t;
		sdp_buf_init(&t->response, t->mmap, t->resp_mem, resp_cap, t->resp_mem, 0);
		t->response.owner_ops = &cmd_buf_owner;
		t->response.owner = t;
		sdp_task_init(&t->super, &cmd_task_ops, &worker->ctx, cmd_task_completed,
			      cmd_task_completed);
		return t;
	}
	return NULL;
}

static const struct sdp_task_ops cmd_task_ops = {
	.name = "urom_worker_cmd",
	.submit = cmd_task_submit,
	.validate = cmd_task_validate,
	.free = cmd_task_free,
};

/* Both completion slots of the core lead here: UROM has one callback for both outcomes. */
static void cmd_task_completed(struct doca_task *t, union doca_data task_user_data,
			       union doca_data ctx_user_data)
{
	struct doca_urom_worker_cmd_task *task = cmd_of(t);

	if (task->cb != NULL)
		task->cb(task, task_user_data, ctx_user_data);
}

/* ---- public API ----------------------------------------------------------------------------- */

doca_error_t doca_urom_worker_cmd_task_allocate(struct doca_urom_worker *worker_ctx,
						struct doca_urom_worker_cmd_task **task)
{
	struct doca_urom_worker_cmd_task *t;
	size_t payload_cap, resp_cap, resp_off, total;
	doca_error_t status;

	if (worker_ctx == NULL || task == NULL) {
		sdp_error("invalid argument: worker_ctx %p, task %p", (void *)worker_ctx,
			  (void *)task);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_ctx_check_running(&worker_ctx->ctx, "allocating a command task");
	if (status != DOCA_SUCCESS)
		return status;

	payload_cap = worker_ctx->msg_size - SDP_UROM_CMD_HDR_LEN;
	resp_cap = worker_ctx->msg_size - SDP_UROM_NOTIFY_HDR_LEN;
	t = cmd_task_reuse(worker_ctx, payload_cap, resp_cap);
	if (t != NULL) {
		*task = t;
		return DOCA_SUCCESS;
	}
	resp_off = ALIGN8(SDP_UROM_CMD_HDR_LEN + payload_cap);
	total = resp_off + resp_cap;
	t = calloc(1, ALIGN8(sizeof(*t)) + total);
	if (t == NULL) {
		sdp_error("failed to allocate a command task of %zu bytes", sizeof(*t) + total);
		return DOCA_ERROR_NO_MEMORY;
	}
	t->worker = worker_ctx;
	t->payload_cap = payload_cap;
	t->resp_cap = resp_cap;
	t->cmd_mem = (uint8_t *)t + ALIGN8(sizeof(*t));
	t->resp_mem = t->cmd_mem + resp_off;

	status = doca_mmap_create(&t->mmap);
	if (status != DOCA_SUCCESS)
		goto err_free_task;
	status = doca_mmap_set_memrange(t->mmap, t->cmd_mem, total);
	if (status != DOCA_SUCCESS)
		goto err_destroy_mmap;
	status = doca_mmap_start(t->mmap);
	if (status != DOCA_SUCCESS)
		goto err_destroy_mmap;
	status = sdp_mmap_buf_attach(t->mmap, t->cmd_mem + SDP_UROM_CMD_HDR_LEN, payload_cap);
	if (status != DOCA_SUCCESS)
		goto err_stop_mmap;
	status = sdp_mmap_buf_attach(t->mmap, t->resp_mem, resp_cap);
	if (status != DOCA_SUCCESS)
		goto err_detach_payload;

	sdp_buf_init(&t->payload, t->mmap, t->cmd_mem + SDP_UROM_CMD_HDR_LEN, payload_cap,
		     t->cmd_mem + SDP_UROM_CMD_HDR_LEN, payload_cap);
	t->payload.owner_ops = &cmd_buf_owner;
	t->payload.owner = t;
	sdp_buf_init(&t->response, t->mmap, t->resp_mem, resp_cap, t->resp_mem, 0);
	t->response.owner_ops = &cmd_buf_owner;
	t->response.owner = t;

	sdp_task_init(&t->super, &cmd_task_ops, &worker_ctx->ctx, cmd_task_completed,
		      cmd_task_completed);
	*task = t;
	return DOCA_SUCCESS;

err_detach_payload:
	sdp_mmap_buf_detach(t->mmap);
err_stop_mmap:
	(void)doca_mmap_stop(t->mmap);
err_destroy_mmap:
	(void)doca_mmap_destroy(t->mmap);
err_free_task:
	free(t);
	return status;
}

doca_error_t doca_urom_worker_cmd_task_allocate_init(struct doca_urom_worker *worker_ctx,
						     uint64_t plugin,
						     struct doca_urom_worker_cmd_task **task)
{
	struct doca_urom_worker_cmd_task *t = NULL;
	doca_error_t status;

	if (task == NULL) {
		sdp_error("NULL task output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = doca_urom_worker_cmd_task_allocate(worker_ctx, &t);
	if (status != DOCA_SUCCESS)
		return status;
	t->plugin = plugin;
	*task = t;
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_task_release(struct doca_task *task, const char *kind, const char *api)
{
	enum sdp_task_state state;
	struct doca_pe *pe;

	if (task == NULL) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, api, "NULL task");
		return DOCA_ERROR_INVALID_VALUE;
	}
	pe = sdp_ctx_get_pe(task->ctx);
	sdp_pe_lock(pe);
	state = task->state;
	sdp_pe_unlock(pe);
	if (state != SDP_TASK_ALLOCATED) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, api, "%s task %p: cannot release, it is %s", kind,
			   (void *)task,
			   state == SDP_TASK_FREED ? "released already" :
						     "submitted (wait for its callback)");
		return state == SDP_TASK_FREED ? DOCA_ERROR_INVALID_VALUE :
						 DOCA_ERROR_NOT_PERMITTED;
	}
	doca_task_free(task);
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_worker_cmd_task_release(struct doca_urom_worker_cmd_task *task)
{
	return sdp_urom_task_release(task != NULL ? &task->super : NULL, "command", __func__);
}

void doca_urom_worker_cmd_task_set_plugin(struct doca_urom_worker_cmd_task *task, uint64_t plugin)
{
	if (task == NULL) {
		sdp_error("NULL task");
		return;
	}
	task->plugin = plugin;
}

void doca_urom_worker_cmd_task_set_cb(struct doca_urom_worker_cmd_task *task,
				      doca_urom_worker_cmd_task_completion_cb_t cb)
{
	if (task == NULL) {
		sdp_error("NULL task");
		return;
	}
	task->cb = cb;
}

struct doca_buf *doca_urom_worker_cmd_task_get_payload(struct doca_urom_worker_cmd_task *task)
{
	if (task == NULL) {
		sdp_error("NULL task");
		return NULL;
	}
	return &task->payload;
}

struct doca_buf *doca_urom_worker_cmd_task_get_response(struct doca_urom_worker_cmd_task *task)
{
	if (task == NULL) {
		sdp_error("NULL task");
		return NULL;
	}
	return &task->response;
}

void *doca_urom_worker_cmd_task_get_user_data(struct doca_urom_worker_cmd_task *task)
{
	if (task == NULL) {
		sdp_error("NULL task");
		return NULL;
	}
	return task->user_data;
}

struct doca_task *doca_urom_worker_cmd_task_as_task(struct doca_urom_worker_cmd_task *task)
{
	if (task == NULL) {
		sdp_error("NULL task");
		return NULL;
	}
	return &task->super;
}
