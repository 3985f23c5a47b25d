/*
 * worker_sandbox plugin, host half: sandbox commands as doca_urom worker command tasks.
 *
 * A command is written straight into the task's payload buffer (whose data length is its
 * capacity on allocation), inline bytes after it; the caller's cookie, context and callback go
 * into the task's 32-byte user data area. The completion callback checks the notification in
 * the response buffer, points a receive's buffer at its inline bytes, reports and releases the
 * task (a receive's callback runs before the release: its buffer lives in the response).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "urom_sandbox.h"

#include <stdint.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_pe.h>
#include <doca_urom.h>

#include "worker_sandbox.h"

DOCA_LOG_REGISTER(UROM::SANDBOX::HOST);

/* Lives in the task's user data area (at most 32 bytes). */
struct urom_sandbox_task_data {
	union doca_data cookie;
	uint64_t context; /* as submitted: reported when the worker answered without it */
	union {
		urom_sandbox_send_finished send;
		urom_sandbox_recv_finished recv;
		urom_sandbox_mem_map_finished mem_map;
	} cb;
};

_Static_assert(sizeof(struct urom_sandbox_task_data) <= 32,
	       "sandbox task data must fit the worker command task's user data area");

static uint64_t sandbox_plugin_id;
static int sandbox_initialized;

doca_error_t urom_sandbox_init(uint64_t plugin_id, uint64_t version)
{
	if (version != UROM_WORKER_SANDBOX_VERSION) {
		DOCA_LOG_ERR("worker_sandbox version %#lx on the worker, this host half speaks %#x",
			     (unsigned long)version, UROM_WORKER_SANDBOX_VERSION);
		return DOCA_ERROR_UNSUPPORTED_VERSION;
	}

	sandbox_plugin_id = plugin_id;
	sandbox_initialized = 1;
	return DOCA_SUCCESS;
}

/*
 * The notification of a completed task. DOCA_SUCCESS: *n holds it and *data_p / *data_len_p
 * its inline bytes; DOCA_ERROR_EMPTY: the worker answered with the header alone (a refusal);
 * DOCA_ERROR_INVALID_VALUE: a malformed answer (logged).
 */
static doca_error_t sandbox_read_response(struct doca_urom_worker_cmd_task *task,
					  uint64_t expected_type,
					  struct urom_worker_notify_sandbox *n, uint8_t **data_p,
					  size_t *data_len_p)
{
	struct doca_buf *response;
	size_t len = 0;
	void *ptr = NULL;

	response = doca_urom_worker_cmd_task_get_response(task);
	if (response == NULL)
		return DOCA_ERROR_EMPTY;
	if (doca_buf_get_data(response, &ptr) != DOCA_SUCCESS ||
	    doca_buf_get_data_len(response, &len) != DOCA_SUCCESS || len == 0)
		return DOCA_ERROR_EMPTY;
	if (ptr == NULL || len < sizeof(*n)) {
		DOCA_LOG_ERR("sandbox response of %zu bytes, expected at least %zu", len,
			     sizeof(*n));
		return DOCA_ERROR_INVALID_VALUE;
	}

	memcpy(n, ptr, sizeof(*n));
	if (n->type != expected_type) {
		DOCA_LOG_ERR("sandbox command answered with notification type %lu, expected %lu",
			     (unsigned long)n->type, (unsigned long)expected_type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*data_p = (uint8_t *)ptr + sizeof(*n);
	*data_len_p = len - sizeof(*n);
	return DOCA_SUCCESS;
}

/*
 * Combine the task's status with what reading its response found: a malformed answer fails a
 * successful task, and a successful task must have a payload.
 */
static doca_error_t sandbox_result(doca_error_t task_status, doca_error_t parse)
{
	if (parse == DOCA_SUCCESS)
		return task_status;
	if (task_status != DOCA_SUCCESS)
		return task_status;
	if (parse == DOCA_ERROR_EMPTY)
		DOCA_LOG_ERR("sandbox command succeeded without a notification payload");
	return DOCA_ERROR_INVALID_VALUE;
}

static void sandbox_release(struct doca_urom_worker_cmd_task *task)
{
	if (doca_urom_worker_cmd_task_release(task) != DOCA_SUCCESS)
		DOCA_LOG_ERR("failed to release a sandbox task");
}

static void sandbox_send_completed(struct doca_urom_worker_cmd_task *task,
				   union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct urom_sandbox_task_data td;
	struct urom_worker_notify_sandbox n;
	union doca_data context;
	ucs_status_t ucs_status = UCS_ERR_IO_ERROR;
	doca_error_t status, parse;
	size_t data_len = 0;
	uint8_t *data = NULL;

	(void)task_user_data;
	(void)ctx_user_data;

	memcpy(&td, doca_urom_worker_cmd_task_get_user_data(task), sizeof(td));
	context.u64 = td.context;
	status = doca_task_get_status(doca_urom_worker_cmd_task_as_task(task));
	parse = sandbox_read_response(task, UROM_WORKER_NOTIFY_SANDBOX_TAG_SEND, &n, &data,
				      &data_len);
	if (parse == DOCA_SUCCESS && data_len != 0) {
		DOCA_LOG_ERR("tag send answered with %zu unexpected bytes", data_len);
		parse = DOCA_ERROR_INVALID_VALUE;
	}
	if (parse == DOCA_SUCCESS) {
		context.u64 = n.tag_send.context;
		ucs_status = n.tag_send.status;
	}
	status = sandbox_result(status, parse);

	/* Release first: the callback may submit the next task into the freed slot. */
	sandbox_release(task);
	td.cb.send(status, td.cookie, context, ucs_status);
}

static void sandbox_recv_completed(struct doca_urom_worker_cmd_task *task,
				   union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct urom_sandbox_task_data td;
	struct urom_worker_notify_sandbox n;
	union doca_data context;
	ucs_status_t ucs_status = UCS_ERR_IO_ERROR;
	doca_error_t status, parse;
	uint64_t count = 0, sender_tag = 0;
	size_t data_len = 0;
	uint8_t *data = NULL;
	void *buffer = NULL;

	(void)task_user_data;
	(void)ctx_user_data;

	memcpy(&td, doca_urom_worker_cmd_task_get_user_data(task), sizeof(td));
	context.u64 = td.context;
	status = doca_task_get_status(doca_urom_worker_cmd_task_as_task(task));
	parse = sandbox_read_response(task, UROM_WORKER_NOTIFY_SANDBOX_TAG_RECV, &n, &data,
				      &data_len);
	if (parse == DOCA_SUCCESS) {
		/* On the worker a non-NULL buffer means "the bytes follow". */
		if (n.tag_recv.buffer != NULL ? data_len != n.tag_recv.count : data_len != 0) {
			DOCA_LOG_ERR("tag recv of %lu bytes answered with %zu inline",
				     (unsigned long)n.tag_recv.count, data_len);
			parse = DOCA_ERROR_INVALID_VALUE;
		}
	}
	if (parse == DOCA_SUCCESS) {
		context.u64 = n.tag_recv.context;
		buffer = n.tag_recv.buffer != NULL ? data : NULL;
		count = n.tag_recv.count;
		sender_tag = n.tag_recv.sender_tag;
		ucs_status = n.tag_recv.status;
	}
	status = sandbox_result(status, parse);

	/* The inline bytes live in the task's response: report, then release. */
	td.cb.recv(status, td.cookie, context, buffer, count, sender_tag, ucs_status);
	sandbox_release(task);
}

static void sandbox_mem_map_completed(struct doca_urom_worker_cmd_task *task,
				      union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct urom_sandbox_task_data td;
	struct urom_worker_notify_sandbox n;
	union doca_data context;
	doca_error_t status, parse;
	uint64_t memh_id = 0;
	size_t data_len = 0;
	uint8_t *data = NULL;

	(void)task_user_data;
	(void)ctx_user_data;

	memcpy(&td, doca_urom_worker_cmd_task_get_user_data(task), sizeof(td));
	context.u64 = td.context;
	status = doca_task_get_status(doca_urom_worker_cmd_task_as_task(task));
	parse = sandbox_read_response(task, UROM_WORKER_NOTIFY_SANDBOX_MEM_MAP, &n, &data,
				      &data_len);
	if (parse == DOCA_SUCCESS && data_len != 0) {
		DOCA_LOG_ERR("mem map answered with %zu unexpected bytes", data_len);
		parse = DOCA_ERROR_INVALID_VALUE;
	}
	if (parse == DOCA_SUCCESS) {
		context.u64 = n.mem_map.context;
		memh_id = n.mem_map.memh_id;
	}
	status = sandbox_result(status, parse);
	if (status == DOCA_SUCCESS && memh_id == 0) {
		DOCA_LOG_ERR("mem map succeeded with memh id 0");
		status = DOCA_ERROR_INVALID_VALUE;
	}
	if (status != DOCA_SUCCESS)
		memh_id = 0;

	sandbox_release(task);
	td.cb.mem_map(status, td.cookie, context, memh_id);
}

/*
 * Allocate a task, write cmd and inline_len bytes of inline data into its payload, store the
 * user data and submit it. On failure the task is released and nothing is called back.
 */
static doca_error_t sandbox_submit(struct doca_urom_worker *worker_ctx,
				   const struct urom_sandbox_task_data *td,
				   doca_urom_worker_cmd_task_completion_cb_t completed,
				   const struct urom_worker_sandbox_cmd *cmd,
				   const void *inline_data, size_t inline_len)
{
	struct doca_urom_worker_cmd_task *task;
	struct doca_buf *payload;
	size_t capacity = 0;
	void *ptr = NULL;
	doca_error_t status;

	if (!sandbox_initialized) {
		DOCA_LOG_ERR("urom_sandbox_init() was not called");
		return DOCA_ERROR_BAD_STATE;
	}

	status = doca_urom_worker_cmd_task_allocate_init(worker_ctx, sandbox_plugin_id, &task);
	if (status != DOCA_SUCCESS)
		return status;

	payload = doca_urom_worker_cmd_task_get_payload(task);
	if (payload == NULL) {
		DOCA_LOG_ERR("command task without a payload buffer");
		status = DOCA_ERROR_INVALID_VALUE;
		goto err_release;
	}
	status = doca_buf_get_data(payload, &ptr);
	if (status != DOCA_SUCCESS)
		goto err_release;
	status = doca_buf_get_data_len(payload, &capacity);
	if (status != DOCA_SUCCESS)
		goto err_release;
	if (ptr == NULL || capacity < sizeof(*cmd) || capacity - sizeof(*cmd) < inline_len) {
		DOCA_LOG_ERR("command payload holds %zu bytes, this command needs %zu + %zu inline",
			     capacity, sizeof(*cmd), inline_len);
		status = DOCA_ERROR_INVALID_VALUE;
		goto err_release;
	}

	memcpy(ptr, cmd, sizeof(*cmd));
	if (inline_len > 0)
		memcpy((uint8_t *)ptr + sizeof(*cmd), inline_data, inline_len);
	status = doca_buf_set_data(payload, ptr, sizeof(*cmd) + inline_len);
	if (status != DOCA_SUCCESS)
		goto err_release;

	memcpy(doca_urom_worker_cmd_task_get_user_data(task), td, sizeof(*td));
	doca_urom_worker_cmd_task_set_cb(task, completed);

	status = doca_task_submit(doca_urom_worker_cmd_task_as_task(task));
	if (status != DOCA_SUCCESS)
		goto err_release;
	return DOCA_SUCCESS;

err_release:
	sandbox_release(task);
	return status;
}

/* Refuse what cannot be a command before a task is allocated. */
static doca_error_t sandbox_check(struct doca_urom_worker *worker_ctx, int cb_set, const char *what)
{
	if (worker_ctx == NULL || !cb_set) {
		DOCA_LOG_ERR("%s: invalid argument: worker %p, callback %s", what,
			     (void *)worker_ctx, cb_set ? "set" : "NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t urom_sandbox_tag_task_send(struct doca_urom_worker *worker_ctx, union doca_data cookie,
					uint64_t context, uint64_t dest, uint64_t buffer,
					uint64_t count, uint64_t tag, uint64_t memh_id,
					urom_sandbox_send_finished cb)
{
	struct urom_worker_sandbox_cmd cmd;
	struct urom_sandbox_task_data td;
	doca_error_t status;

	status = sandbox_check(worker_ctx, cb != NULL, "tag send");
	if (status != DOCA_SUCCESS)
		return status;
	if (memh_id == 0 && count > 0 && buffer == 0) {
		DOCA_LOG_ERR("tag send of %lu inline bytes from a NULL buffer",
			     (unsigned long)count);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (memh_id == 0 && count > SIZE_MAX / 2) {
		DOCA_LOG_ERR("tag send of %lu inline bytes cannot fit a command",
			     (unsigned long)count);
		return DOCA_ERROR_INVALID_VALUE;
	}

	memset(&cmd, 0, sizeof(cmd));
	cmd.type = UROM_WORKER_CMD_SANDBOX_TAG_SEND;
	cmd.tag_send.context = context;
	cmd.tag_send.dest = dest;
	cmd.tag_send.buffer = buffer;
	cmd.tag_send.count = count;
	cmd.tag_send.tag = tag;
	cmd.tag_send.memh_id = memh_id;

	memset(&td, 0, sizeof(td));
	td.cookie = cookie;
	td.context = context;
	td.cb.send = cb;
	return sandbox_submit(worker_ctx, &td, sandbox_send_completed, &cmd,
			      (const void *)(uintptr_t)buffer, memh_id == 0 ? (size_t)count : 0);
}

doca_error_t urom_sandbox_tag_task_recv(struct doca_urom_worker *worker_ctx, union doca_data cookie,
					uint64_t context, uint64_t buffer, uint64_t count,
					uint64_t tag, uint64_t tag_mask, uint64_t memh_id,
					urom_sandbox_recv_finished cb)
{
	struct urom_worker_sandbox_cmd cmd;
	struct urom_sandbox_task_data td;
	doca_error_t status;

	status = sandbox_check(worker_ctx, cb != NULL, "tag recv");
	if (status != DOCA_SUCCESS)
		return status;

	memset(&cmd, 0, sizeof(cmd));
	cmd.type = UROM_WORKER_CMD_SANDBOX_TAG_RECV;
	cmd.tag_recv.context = context;
	cmd.tag_recv.buffer = buffer;
	cmd.tag_recv.count = count;
	cmd.tag_recv.tag = tag;
	cmd.tag_recv.tag_mask = tag_mask;
	cmd.tag_recv.memh_id = memh_id;

	memset(&td, 0, sizeof(td));
	td.cookie = cookie;
	td.context = context;
	td.cb.recv = cb;
	return sandbox_submit(worker_ctx, &td, sandbox_recv_completed, &cmd, NULL, 0);
}

doca_error_t sdp_urom_sandbox_task_mem_map(struct doca_urom_worker *worker_ctx,
					   union doca_data cookie, uint64_t context,
					   ucp_mem_map_params_t map_params, const void *memh,
					   size_t memh_len, urom_sandbox_mem_map_finished cb)
{
	struct urom_worker_sandbox_cmd cmd;
	struct urom_sandbox_task_data td;
	doca_error_t status;

	status = sandbox_check(worker_ctx, cb != NULL, "mem map");
	if (status != DOCA_SUCCESS)
		return status;
	if (memh == NULL || memh_len == 0) {
		DOCA_LOG_ERR("mem map: memh descriptor %p of %zu bytes", memh, memh_len);
		return DOCA_ERROR_INVALID_VALUE;
	}

	memset(&cmd, 0, sizeof(cmd));
	cmd.type = UROM_WORKER_CMD_SANDBOX_MEM_MAP;
	cmd.mem_map.context = context;
	cmd.mem_map.map_params = map_params;
#ifdef SDP_SANDBOX_HAVE_EXPORTED_MEMH
	/* A host pointer means nothing to the worker: it points the field at the inline copy. */
	cmd.mem_map.map_params.exported_memh_buffer = NULL;
#endif
	cmd.mem_map.exported_memh_buffer_len = memh_len;

	memset(&td, 0, sizeof(td));
	td.cookie = cookie;
	td.context = context;
	td.cb.mem_map = cb;
	return sandbox_submit(worker_ctx, &td, sandbox_mem_map_completed, &cmd, memh, memh_len);
}

doca_error_t urom_sandbox_task_mem_map(struct doca_urom_worker *worker_ctx, union doca_data cookie,
				       uint64_t context, ucp_mem_map_params_t map_params,
				       size_t exported_memh_buffer_len,
				       urom_sandbox_mem_map_finished cb)
{
#ifdef SDP_SANDBOX_HAVE_EXPORTED_MEMH
	if ((map_params.field_mask & UCP_MEM_MAP_PARAM_FIELD_EXPORTED_MEMH_BUFFER) == 0) {
		DOCA_LOG_ERR("mem map: map_params carries no exported memh buffer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return sdp_urom_sandbox_task_mem_map(worker_ctx, cookie, context, map_params,
					     map_params.exported_memh_buffer,
					     exported_memh_buffer_len, cb);
#else
	(void)worker_ctx;
	(void)cookie;
	(void)context;
	(void)map_params;
	(void)exported_memh_buffer_len;
	(void)cb;
	DOCA_LOG_ERR("mem map: this UCX has no ucp_mem_map_params_t.exported_memh_buffer; pass "
		     "the memh descriptor to sdp_urom_sandbox_task_mem_map()");
	return DOCA_ERROR_NOT_SUPPORTED;
#endif
}
