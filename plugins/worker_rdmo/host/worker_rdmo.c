/*
 * worker_rdmo plugin, host half: RDMO commands as doca_urom worker command tasks.
 *
 * A command is written straight into the task's payload buffer (its data length is the
 * capacity on allocation): struct urom_worker_rdmo_cmd, then its inline data (addresses, the
 * packed key). The cookie, the callback and the command type go into the task's 32-byte user
 * data area. The completion callback checks the notification in the response buffer (its type
 * and its exact length, repointing the inline address), releases the task and calls the
 * caller's callback.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "worker_rdmo.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_pe.h>
#include <doca_urom.h>

#include "urom_rdmo.h"

DOCA_LOG_REGISTER(UROM::RDMO::HOST);

/* Lives in the task's user data area (at most 32 bytes). */
struct urom_rdmo_task_data {
	union doca_data cookie;
	union {
		urom_rdmo_client_init_finished client_init;
		urom_rdmo_rq_create_finished rq_create;
		urom_rdmo_rq_destroy_finished rq_destroy;
		urom_rdmo_mr_register_finished mr_register;
		urom_rdmo_mr_deregister_finished mr_deregister;
	} cb;
	uint64_t type; /* enum urom_worker_rdmo_cmd_type */
};

_Static_assert(sizeof(struct urom_rdmo_task_data) <= 32,
	       "rdmo task data must fit the worker command task's user data area");
_Static_assert(sizeof(struct urom_worker_rdmo_cmd) == 56, "the rdmo command is 56 bytes");
_Static_assert(sizeof(struct urom_worker_notify_rdmo) == 24, "the rdmo notification is 24 bytes");

static uint64_t rdmo_plugin_id;
static int rdmo_initialized;

doca_error_t urom_rdmo_init(uint64_t plugin_id, uint64_t version)
{
	if (version != UROM_WORKER_RDMO_VERSION) {
		DOCA_LOG_ERR("worker_rdmo version %#lx on the worker, this host half speaks %#x",
			     (unsigned long)version, UROM_WORKER_RDMO_VERSION);
		return DOCA_ERROR_UNSUPPORTED_VERSION;
	}
	rdmo_plugin_id = plugin_id;
	rdmo_initialized = 1;
	return DOCA_SUCCESS;
}

/*
 * Read the notification of a completed command: it must be of the command's type and exactly
 * 24 bytes (+ the inline address for CLIENT_INIT, which *addr_p then points at).
 */
static doca_error_t rdmo_read_response(struct doca_urom_worker_cmd_task *task, uint64_t type,
				       struct urom_worker_notify_rdmo *notif_p, void **addr_p)
{
	struct urom_worker_notify_rdmo notif;
	struct doca_buf *response;
	size_t len = 0;
	void *ptr = NULL;
	doca_error_t status;

	response = doca_urom_worker_cmd_task_get_response(task);
	if (response == NULL) {
		DOCA_LOG_ERR("rdmo command completed without a response buffer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = doca_buf_get_data(response, &ptr);
	if (status != DOCA_SUCCESS)
		return status;
	status = doca_buf_get_data_len(response, &len);
	if (status != DOCA_SUCCESS)
		return status;
	if (ptr == NULL || len < sizeof(notif)) {
		DOCA_LOG_ERR("rdmo response of %zu bytes, at least %zu expected", len,
			     sizeof(notif));
		return DOCA_ERROR_INVALID_VALUE;
	}

	memcpy(&notif, ptr, sizeof(notif));
	if (notif.type != type) {
		DOCA_LOG_ERR("rdmo command %lu answered with notification type %lu",
			     (unsigned long)type, (unsigned long)notif.type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (type == UROM_WORKER_CMD_RDMO_CLIENT_INIT) {
		if (notif.client_init.addr_len == 0 ||
		    notif.client_init.addr_len != len - sizeof(notif)) {
			DOCA_LOG_ERR("CLIENT_INIT response of %zu bytes for an address of %lu", len,
				     (unsigned long)notif.client_init.addr_len);
			return DOCA_ERROR_INVALID_VALUE;
		}
		*addr_p = (uint8_t *)ptr + sizeof(notif);
	} else if (len != sizeof(notif)) {
		DOCA_LOG_ERR("rdmo response of %zu bytes, expected %zu", len, sizeof(notif));
		return DOCA_ERROR_INVALID_VALUE;
	}
	*notif_p = notif;
	return DOCA_SUCCESS;
}

static void rdmo_completed(struct doca_urom_worker_cmd_task *task, union doca_data task_user_data,
			   union doca_data ctx_user_data)
{
	struct urom_worker_notify_rdmo notif;
	struct urom_rdmo_task_data td;
	void *addr = NULL, *copy = NULL;
	uint64_t addr_len = 0;
	doca_error_t status;

	(void)task_user_data;
	(void)ctx_user_data;

	memcpy(&td, doca_urom_worker_cmd_task_get_user_data(task), sizeof(td));
	memset(&notif, 0, sizeof(notif));
	status = doca_task_get_status(doca_urom_worker_cmd_task_as_task(task));
	if (status == DOCA_SUCCESS)
		status = rdmo_read_response(task, td.type, &notif, &addr);
	if (status == DOCA_SUCCESS && addr != NULL) {
		/* The response buffer goes with the task: the callback gets a copy. */
		addr_len = notif.client_init.addr_len;
		copy = malloc(addr_len);
		if (copy == NULL) {
			DOCA_LOG_ERR("no memory for a %lu-byte worker address",
				     (unsigned long)addr_len);
			status = DOCA_ERROR_NO_MEMORY;
			addr_len = 0;
		} else {
			memcpy(copy, addr, addr_len);
		}
	}

	/* Release first: the callback may submit the next task into the freed slot. */
	if (doca_urom_worker_cmd_task_release(task) != DOCA_SUCCESS)
		DOCA_LOG_ERR("failed to release an rdmo task");

	switch (td.type) {
	case UROM_WORKER_CMD_RDMO_CLIENT_INIT:
		td.cb.client_init(status, td.cookie, copy, addr_len);
		break;
	case UROM_WORKER_CMD_RDMO_RQ_CREATE:
		td.cb.rq_create(status, td.cookie, notif.rq_create.rq_id);
		break;
	case UROM_WORKER_CMD_RDMO_RQ_DESTROY:
		td.cb.rq_destroy(status, td.cookie, notif.rq_destroy.rq_id);
		break;
	case UROM_WORKER_CMD_RDMO_MR_REG:
		td.cb.mr_register(status, td.cookie, notif.mr_reg.rkey);
		break;
	default:
		td.cb.mr_deregister(status, td.cookie, notif.mr_dereg.rkey);
		break;
	}
	free(copy);
}

/*
 * Pack cmd followed by up to two inline blobs into a new task and submit it. td carries the
 * cookie, callback and type for the completion.
 */
static doca_error_t rdmo_submit(struct doca_urom_worker *worker_ctx,
				const struct urom_worker_rdmo_cmd *cmd, const void *inl1,
				uint64_t len1, const void *inl2, uint64_t len2,
				const struct urom_rdmo_task_data *td)
{
	struct doca_urom_worker_cmd_task *task;
	struct doca_buf *payload;
	size_t capacity = 0, need;
	void *ptr = NULL;
	doca_error_t status;

	if (worker_ctx == NULL) {
		DOCA_LOG_ERR("invalid argument: worker NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!rdmo_initialized) {
		DOCA_LOG_ERR("urom_rdmo_init() was not called");
		return DOCA_ERROR_BAD_STATE;
	}
	if (len1 > SIZE_MAX / 4 || len2 > SIZE_MAX / 4) {
		DOCA_LOG_ERR("rdmo command with %lu + %lu inline bytes", (unsigned long)len1,
			     (unsigned long)len2);
		return DOCA_ERROR_INVALID_VALUE;
	}
	need = sizeof(*cmd) + len1 + len2;

	status = doca_urom_worker_cmd_task_allocate_init(worker_ctx, rdmo_plugin_id, &task);
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
	if (ptr == NULL || capacity < need) {
		DOCA_LOG_ERR("rdmo command of %zu bytes, the task's payload holds %zu", need,
			     capacity);
		status = DOCA_ERROR_TOO_BIG;
		goto err_release;
	}

	memcpy(ptr, cmd, sizeof(*cmd));
	if (len1 > 0)
		memcpy((uint8_t *)ptr + sizeof(*cmd), inl1, len1);
	if (len2 > 0)
		memcpy((uint8_t *)ptr + sizeof(*cmd) + len1, inl2, len2);
	status = doca_buf_set_data(payload, ptr, need);
	if (status != DOCA_SUCCESS)
		goto err_release;

	memcpy(doca_urom_worker_cmd_task_get_user_data(task), td, sizeof(*td));
	doca_urom_worker_cmd_task_set_cb(task, rdmo_completed);
	status = doca_task_submit(doca_urom_worker_cmd_task_as_task(task));
	if (status != DOCA_SUCCESS)
		goto err_release;
	return DOCA_SUCCESS;

err_release:
	if (doca_urom_worker_cmd_task_release(task) != DOCA_SUCCESS)
		DOCA_LOG_ERR("failed to release an rdmo task");
	return status;
}

static doca_error_t check_blob(const char *what, const void *p, uint64_t len, int may_be_empty)
{
	if ((p == NULL && len > 0) || (len == 0 && !may_be_empty)) {
		DOCA_LOG_ERR("invalid argument: %s %p of %lu bytes", what, p, (unsigned long)len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

/* A NULL callback: every submit refuses it. */
static doca_error_t no_cb(void)
{
	DOCA_LOG_ERR("invalid argument: callback NULL");
	return DOCA_ERROR_INVALID_VALUE;
}

doca_error_t urom_rdmo_task_client_init(struct doca_urom_worker *worker_ctx, union doca_data cookie,
					uint64_t id, void *addr, uint64_t addr_len,
					urom_rdmo_client_init_finished cb)
{
	struct urom_rdmo_task_data td = {.cookie = cookie,
					 .type = UROM_WORKER_CMD_RDMO_CLIENT_INIT};
	struct urom_worker_rdmo_cmd cmd;
	doca_error_t status;

	if (cb == NULL)
		return no_cb();
	if ((status = check_blob("address", addr, addr_len, 0)) != DOCA_SUCCESS)
		return status;
	memset(&cmd, 0, sizeof(cmd));
	cmd.type = UROM_WORKER_CMD_RDMO_CLIENT_INIT;
	cmd.client_init.id = id;
	cmd.client_init.addr_len = addr_len;
	td.cb.client_init = cb;
	return rdmo_submit(worker_ctx, &cmd, addr, addr_len, NULL, 0, &td);
}

doca_error_t urom_rdmo_task_rq_create(struct doca_urom_worker *worker_ctx, union doca_data cookie,
				      void *addr, uint64_t addr_len,
				      urom_rdmo_rq_create_finished cb)
{
	struct urom_rdmo_task_data td = {.cookie = cookie, .type = UROM_WORKER_CMD_RDMO_RQ_CREATE};
	struct urom_worker_rdmo_cmd cmd;
	doca_error_t status;

	if (cb == NULL)
		return no_cb();
	if ((status = check_blob("address", addr, addr_len, 0)) != DOCA_SUCCESS)
		return status;
	memset(&cmd, 0, sizeof(cmd));
	cmd.type = UROM_WORKER_CMD_RDMO_RQ_CREATE;
	cmd.rq_create.addr_len = addr_len;
	td.cb.rq_create = cb;
	return rdmo_submit(worker_ctx, &cmd, addr, addr_len, NULL, 0, &td);
}

doca_error_t urom_rdmo_task_rq_destroy(struct doca_urom_worker *worker_ctx, union doca_data cookie,
				       uint64_t rq_id, urom_rdmo_rq_destroy_finished cb)
{
	struct urom_rdmo_task_data td = {.cookie = cookie, .type = UROM_WORKER_CMD_RDMO_RQ_DESTROY};
	struct urom_worker_rdmo_cmd cmd;

	if (cb == NULL)
		return no_cb();
	memset(&cmd, 0, sizeof(cmd));
	cmd.type = UROM_WORKER_CMD_RDMO_RQ_DESTROY;
	cmd.rq_destroy.rq_id = rq_id;
	td.cb.rq_destroy = cb;
	return rdmo_submit(worker_ctx, &cmd, NULL, 0, NULL, 0, &td);
}

doca_error_t urom_rdmo_task_mr_register(struct doca_urom_worker *worker_ctx, union doca_data cookie,
					uint64_t va, uint64_t len, void *rkey, uint64_t rkey_len,
					void *memh, uint64_t memh_len,
					urom_rdmo_mr_register_finished cb)
{
	struct urom_rdmo_task_data td = {.cookie = cookie, .type = UROM_WORKER_CMD_RDMO_MR_REG};
	struct urom_worker_rdmo_cmd cmd;
	doca_error_t status;

	if (cb == NULL)
		return no_cb();
	if ((status = check_blob("packed rkey", rkey, rkey_len, 0)) != DOCA_SUCCESS ||
	    (status = check_blob("packed memh", memh, memh_len, 1)) != DOCA_SUCCESS)
		return status;
	memset(&cmd, 0, sizeof(cmd));
	cmd.type = UROM_WORKER_CMD_RDMO_MR_REG;
	cmd.mr_reg.va = va;
	cmd.mr_reg.len = len;
	cmd.mr_reg.packed_rkey_len = rkey_len;
	cmd.mr_reg.packed_memh_len = memh_len;
	td.cb.mr_register = cb;
	return rdmo_submit(worker_ctx, &cmd, rkey, rkey_len, memh, memh_len, &td);
}

doca_error_t urom_rdmo_task_mr_deregister(struct doca_urom_worker *worker_ctx,
					  union doca_data cookie, uint64_t rkey_id,
					  urom_rdmo_mr_deregister_finished cb)
{
	struct urom_rdmo_task_data td = {.cookie = cookie, .type = UROM_WORKER_CMD_RDMO_MR_DEREG};
	struct urom_worker_rdmo_cmd cmd;

	if (cb == NULL)
		return no_cb();
	memset(&cmd, 0, sizeof(cmd));
	cmd.type = UROM_WORKER_CMD_RDMO_MR_DEREG;
	cmd.mr_dereg.rkey = rkey_id;
	td.cb.mr_deregister = cb;
	return rdmo_submit(worker_ctx, &cmd, NULL, 0, NULL, 0, &td);
}
