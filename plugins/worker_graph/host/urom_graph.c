/*
 * worker_graph plugin, host half: LOOPBACK commands as doca_urom worker command tasks.
 *
 * A command is written straight into the task's payload buffer (whose data length is its
 * capacity on allocation), the caller's cookie and callback go into the task's 32-byte user
 * data area, and the completion callback reads the notification from the response buffer,
 * reports it and releases the task.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "urom_graph.h"

#include <stdint.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_pe.h>
#include <doca_urom.h>

#include "worker_graph.h"

DOCA_LOG_REGISTER(UROM::GRAPH::HOST);

/* Lives in the task's user data area (at most 32 bytes). */
struct urom_graph_task_data {
	union doca_data cookie;
	urom_graph_loopback_finished cb;
};

_Static_assert(sizeof(struct urom_graph_task_data) <= 32,
	       "graph task data must fit the worker command task's user data area");

static uint64_t graph_plugin_id;
static int graph_initialized;

doca_error_t urom_graph_init(uint64_t plugin_id, uint64_t version)
{
	if (version != UROM_WORKER_GRAPH_VERSION) {
		DOCA_LOG_ERR("worker_graph version %#lx on the worker, this host half speaks %#x",
			     (unsigned long)version, UROM_WORKER_GRAPH_VERSION);
		return DOCA_ERROR_UNSUPPORTED_VERSION;
	}

	graph_plugin_id = plugin_id;
	graph_initialized = 1;
	return DOCA_SUCCESS;
}

/* Extract the echoed value of a completed loopback; INVALID_VALUE for a malformed answer. */
static doca_error_t urom_graph_read_response(struct doca_urom_worker_cmd_task *task,
					     uint64_t *data_p)
{
	struct urom_worker_notify_graph notif;
	struct doca_buf *response;
	size_t len = 0;
	void *ptr = NULL;
	doca_error_t status;

	response = doca_urom_worker_cmd_task_get_response(task);
	if (response == NULL) {
		DOCA_LOG_ERR("loopback completed without a response buffer");
		return DOCA_ERROR_INVALID_VALUE;
	}

	status = doca_buf_get_data(response, &ptr);
	if (status != DOCA_SUCCESS)
		return status;
	status = doca_buf_get_data_len(response, &len);
	if (status != DOCA_SUCCESS)
		return status;

	if (ptr == NULL || len != sizeof(notif)) {
		DOCA_LOG_ERR("loopback response of %zu bytes, expected %zu", len, sizeof(notif));
		return DOCA_ERROR_INVALID_VALUE;
	}

	memcpy(&notif, ptr, sizeof(notif));
	if (notif.type != UROM_WORKER_NOTIFY_GRAPH_LOOPBACK) {
		DOCA_LOG_ERR("loopback answered with notification type %lu",
			     (unsigned long)notif.type);
		return DOCA_ERROR_INVALID_VALUE;
	}

	*data_p = notif.loopback.data;
	return DOCA_SUCCESS;
}

static void urom_graph_completed(struct doca_urom_worker_cmd_task *task,
				 union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct urom_graph_task_data *td;
	union doca_data cookie;
	urom_graph_loopback_finished cb;
	uint64_t data = 0;
	doca_error_t status;

	(void)task_user_data;
	(void)ctx_user_data;

	td = doca_urom_worker_cmd_task_get_user_data(task);
	cookie = td->cookie;
	cb = td->cb;

	status = doca_task_get_status(doca_urom_worker_cmd_task_as_task(task));
	if (status == DOCA_SUCCESS)
		status = urom_graph_read_response(task, &data);

	/* Release first: the callback may submit the next task into the freed slot. */
	if (doca_urom_worker_cmd_task_release(task) != DOCA_SUCCESS)
		DOCA_LOG_ERR("failed to release a loopback task");

	if (cb != NULL)
		cb(status, cookie, data);
}

doca_error_t urom_graph_task_loopback(struct doca_urom_worker *worker_ctx, union doca_data cookie,
				      uint64_t data, urom_graph_loopback_finished cb)
{
	return urom_graph_task_loopback_ex(worker_ctx, cookie, data, cb,
					   DOCA_TASK_SUBMIT_FLAG_FLUSH);
}

doca_error_t urom_graph_task_loopback_ex(struct doca_urom_worker *worker_ctx,
					 union doca_data cookie, uint64_t data,
					 urom_graph_loopback_finished cb, uint32_t flags)
{
	struct doca_urom_worker_cmd_task *task;
	struct urom_worker_graph_cmd *cmd;
	struct urom_graph_task_data *td;
	struct doca_buf *payload;
	size_t capacity = 0;
	void *ptr = NULL;
	doca_error_t status;

	if (worker_ctx == NULL || cb == NULL) {
		DOCA_LOG_ERR("invalid argument: worker %p, callback %s", (void *)worker_ctx,
			     cb == NULL ? "NULL" : "set");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!graph_initialized) {
		DOCA_LOG_ERR("urom_graph_init() was not called");
		return DOCA_ERROR_BAD_STATE;
	}

	status = doca_urom_worker_cmd_task_allocate_init(worker_ctx, graph_plugin_id, &task);
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
	if (ptr == NULL || capacity < sizeof(*cmd)) {
		DOCA_LOG_ERR("command payload holds %zu bytes, a loopback needs %zu", capacity,
			     sizeof(*cmd));
		status = DOCA_ERROR_INVALID_VALUE;
		goto err_release;
	}

	cmd = ptr;
	memset(cmd, 0, sizeof(*cmd));
	cmd->type = UROM_WORKER_CMD_GRAPH_LOOPBACK;
	cmd->loopback.data = data;
	status = doca_buf_set_data(payload, ptr, sizeof(*cmd));
	if (status != DOCA_SUCCESS)
		goto err_release;

	td = doca_urom_worker_cmd_task_get_user_data(task);
	td->cookie = cookie;
	td->cb = cb;
	doca_urom_worker_cmd_task_set_cb(task, urom_graph_completed);

	status = doca_task_submit_ex(doca_urom_worker_cmd_task_as_task(task), flags);
	if (status != DOCA_SUCCESS)
		goto err_release;

	return DOCA_SUCCESS;

err_release:
	if (doca_urom_worker_cmd_task_release(task) != DOCA_SUCCESS)
		DOCA_LOG_ERR("failed to release a loopback task");
	return status;
}
