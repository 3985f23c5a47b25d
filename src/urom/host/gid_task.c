/*
 * libdoca_urom: the service's get-workers-by-gid task. Submit sends GID_QUERY over the service
 * connection; the reply (taken by whichever thread progresses that connection) fills the task
 * and completes it, and its callback runs from doca_pe_progress() on the service's PE.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdlib.h>
#include <string.h>

#include "doca_urom.h"
#include "sdp_ctx.h"
#include "sdp_log.h"
#include "sdp_urom_host.h"

SDP_LOG_COMPONENT("urom_gid_task");

struct doca_urom_service_get_workers_by_gid_task {
	struct doca_task super; /* first: ..._as_task */
	struct doca_urom_service *svc;
	uint32_t gid;
	doca_urom_service_get_workers_by_gid_task_completion_cb_t cb;
	uint64_t *ids; /* result of the last completion */
	size_t count;
	struct sdp_urom_req req; /* the query in flight */
};

typedef struct doca_urom_service_get_workers_by_gid_task gid_task_t;

static gid_task_t *gid_of(struct doca_task *task)
{
	return (gid_task_t *)task;
}

/* The reply or a failure arrived (service lock held, any thread). */
static void gid_req_done(struct sdp_urom_req *req)
{
	gid_task_t *task = req->arg;
	doca_error_t status = req->status;
	const struct sdp_urom_msg *reply = req->reply;
	uint32_t i, n;

	if (status == DOCA_SUCCESS && reply->u.gid_reply.status != DOCA_SUCCESS)
		status = (doca_error_t)reply->u.gid_reply.status;
	if (status == DOCA_SUCCESS) {
		n = reply->u.gid_reply.count;
		task->ids = calloc(n ? n : 1, sizeof(*task->ids));
		if (task->ids == NULL) {
			sdp_error("gid task %p: failed to allocate %u worker ids", (void *)task, n);
			status = DOCA_ERROR_NO_MEMORY;
		} else {
			for (i = 0; i < n; i++)
				task->ids[i] = sdp_urom_gid_reply_id(reply, i);
			task->count = n;
		}
	} else {
		sdp_error("gid task %p: query for group %u failed: %s (%s)", (void *)task,
			  task->gid, req->reason[0] ? req->reason : "-",
			  doca_error_get_name(status));
	}
	sdp_urom_req_clear(req);
	sdp_task_complete(&task->super, status);
}

static doca_error_t gid_task_submit(struct doca_task *t)
{
	gid_task_t *task = gid_of(t);
	struct doca_urom_service *svc = task->svc;
	struct sdp_urom_msg msg;
	doca_error_t status;

	free(task->ids);
	task->ids = NULL;
	task->count = 0;
	memset(&msg.hdr, 0, sizeof(msg.hdr));
	msg.hdr.type = SDP_UROM_MSG_GID_QUERY;
	msg.u.gid_query.gid = task->gid;

	pthread_mutex_lock(&svc->lock);
	sdp_list_head_init(&task->req.link);
	task->req.done_cb = gid_req_done;
	task->req.arg = task;
	task->req.wake_pe = NULL; /* sdp_task_complete wakes the service's PE */
	status = sdp_urom_svc_request_locked(svc, &msg, &task->req, SDP_UROM_MSG_GID_REPLY);
	pthread_mutex_unlock(&svc->lock);
	return status;
}

static void gid_task_free(struct doca_task *t)
{
	gid_task_t *task = gid_of(t);

	free(task->ids);
	free(task);
}

static const struct sdp_task_ops gid_task_ops = {
	.name = "urom_get_workers_by_gid",
	.submit = gid_task_submit,
	.free = gid_task_free,
};

static void gid_task_completed(struct doca_task *t, union doca_data task_user_data,
			       union doca_data ctx_user_data)
{
	gid_task_t *task = gid_of(t);

	if (task->cb != NULL)
		task->cb(task, task_user_data, ctx_user_data);
}

doca_error_t
doca_urom_service_get_workers_by_gid_task_allocate(struct doca_urom_service *service_ctx,
						   gid_task_t **task)
{
	doca_error_t status;
	gid_task_t *t;

	if (service_ctx == NULL || task == NULL) {
		sdp_error("invalid argument: service_ctx %p, task %p", (void *)service_ctx,
			  (void *)task);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_ctx_check_running(&service_ctx->ctx, "allocating a get-workers-by-gid task");
	if (status != DOCA_SUCCESS)
		return status;
	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		sdp_error("failed to allocate a get-workers-by-gid task of %zu bytes", sizeof(*t));
		return DOCA_ERROR_NO_MEMORY;
	}
	t->svc = service_ctx;
	sdp_list_head_init(&t->req.link);
	sdp_task_init(&t->super, &gid_task_ops, &service_ctx->ctx, gid_task_completed,
		      gid_task_completed);
	*task = t;
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_service_get_workers_by_gid_task_allocate_init(
	struct doca_urom_service *service_ctx, uint32_t gid,
	doca_urom_service_get_workers_by_gid_task_completion_cb_t cb, gid_task_t **task)
{
	gid_task_t *t = NULL;
	doca_error_t status;

	if (task == NULL) {
		sdp_error("NULL task output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = doca_urom_service_get_workers_by_gid_task_allocate(service_ctx, &t);
	if (status != DOCA_SUCCESS)
		return status;
	t->gid = gid;
	t->cb = cb;
	*task = t;
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_service_get_workers_by_gid_task_release(gid_task_t *task)
{
	return sdp_urom_task_release(task != NULL ? &task->super : NULL, "gid", __func__);
}

void doca_urom_service_get_workers_by_gid_task_set_gid(gid_task_t *task, uint32_t gid)
{
	if (task == NULL) {
		sdp_error("NULL task");
		return;
	}
	task->gid = gid;
}

void doca_urom_service_get_workers_by_gid_task_set_cb(
	gid_task_t *task, doca_urom_service_get_workers_by_gid_task_completion_cb_t cb)
{
	if (task == NULL) {
		sdp_error("NULL task");
		return;
	}
	task->cb = cb;
}

struct doca_task *doca_urom_service_get_workers_by_gid_task_as_task(gid_task_t *task)
{
	if (task == NULL) {
		sdp_error("NULL task");
		return NULL;
	}
	return &task->super;
}

size_t doca_urom_service_get_workers_by_gid_task_get_workers_count(gid_task_t *task)
{
	if (task == NULL) {
		sdp_error("NULL task");
		return 0;
	}
	return task->count;
}

const uint64_t *doca_urom_service_get_workers_by_gid_task_get_worker_ids(gid_task_t *task)
{
	if (task == NULL) {
		sdp_error("NULL task");
		return NULL;
	}
	return task->ids;
}
