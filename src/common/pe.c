/*
 * softdpu: the DOCA progress engine.
 *
 * The PE keeps the list of connected contexts and a queue of completed tasks. Engines complete
 * tasks from any thread (sdp_task_complete queues them under the PE lock); doca_pe_progress()
 * runs the contexts' own progress, then the queued callbacks, then pending state changes.
 *
 * The notification handle is an epoll descriptor holding an internal eventfd (written when
 * work arrives while the PE is armed) plus whatever descriptors context types add.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "doca_pe.h"
#include "sdp_ctx.h"
#include "sdp_log.h"

SDP_LOG_COMPONENT("pe");

/* initial-exec: no __tls_get_addr call per completion (libdoca_common is linked, not loaded) */
__thread struct doca_pe *sdp_pe_progressing __attribute__((tls_model("initial-exec")));

doca_error_t doca_pe_create(struct doca_pe **pe_out)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct doca_pe *pe;
	doca_error_t status;
	int ret;

	if (pe_out == NULL) {
		sdp_error("NULL output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	pe = calloc(1, sizeof(*pe));
	if (pe == NULL) {
		sdp_error("cannot allocate a progress engine");
		return DOCA_ERROR_NO_MEMORY;
	}
	ret = pthread_mutex_init(&pe->lock, NULL);
	if (ret != 0) {
		sdp_error("pthread_mutex_init failed: error %d", ret);
		status = DOCA_ERROR_OPERATING_SYSTEM;
		goto err_free;
	}
	sdp_list_head_init(&pe->ctxs);
	sdp_list_head_init(&pe->completed);
	sdp_list_head_init(&pe->completed_local);
	pe->event_mode = DOCA_PE_EVENT_MODE_PROGRESS_SELECTIVE;

	pe->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (pe->event_fd < 0) {
		sdp_error("eventfd failed: %m");
		status = DOCA_ERROR_OPERATING_SYSTEM;
		goto err_mutex;
	}
	pe->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (pe->epoll_fd < 0) {
		sdp_error("epoll_create1 failed: %m");
		status = DOCA_ERROR_OPERATING_SYSTEM;
		goto err_eventfd;
	}
	ev.data.fd = pe->event_fd;
	if (epoll_ctl(pe->epoll_fd, EPOLL_CTL_ADD, pe->event_fd, &ev) < 0) {
		sdp_error("adding the eventfd to the epoll set failed: %m");
		status = DOCA_ERROR_OPERATING_SYSTEM;
		goto err_epoll;
	}

	*pe_out = pe;
	return DOCA_SUCCESS;

err_epoll:
	close(pe->epoll_fd);
err_eventfd:
	close(pe->event_fd);
err_mutex:
	pthread_mutex_destroy(&pe->lock);
err_free:
	free(pe);
	return status;
}

doca_error_t doca_pe_destroy(struct doca_pe *pe)
{
	if (pe == NULL) {
		sdp_error("NULL progress engine");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (pe->in_progress) {
		sdp_error("pe %p: cannot be destroyed from inside one of its callbacks",
			  (void *)pe);
		return DOCA_ERROR_BAD_STATE;
	}
	if (pe->num_ctxs != 0) {
		sdp_error("pe %p: %zu context(s) still connected; destroy them first", (void *)pe,
			  pe->num_ctxs);
		return DOCA_ERROR_IN_USE;
	}
	close(pe->epoll_fd);
	close(pe->event_fd);
	pthread_mutex_destroy(&pe->lock);
	free(pe);
	return DOCA_SUCCESS;
}

doca_error_t doca_pe_connect_ctx(struct doca_pe *pe, struct doca_ctx *ctx)
{
	if (pe == NULL || ctx == NULL) {
		sdp_error("NULL argument (pe %p, ctx %p)", (void *)pe, (void *)ctx);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (ctx->state != DOCA_CTX_STATE_IDLE) {
		sdp_error("ctx %p: can be connected only while IDLE, it is %s", (void *)ctx,
			  sdp_ctx_state_name(ctx->state));
		return DOCA_ERROR_BAD_STATE;
	}
	if (ctx->pe != NULL) {
		sdp_error("ctx %p: already connected to pe %p; a context has one PE for life",
			  (void *)ctx, (void *)ctx->pe);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	sdp_pe_lock(pe);
	ctx->pe = pe;
	sdp_list_add_tail(&pe->ctxs, &ctx->pe_link);
	pe->num_ctxs++;
	pe->ctxs_gen++;
	sdp_pe_unlock(pe);
	return DOCA_SUCCESS;
}

/* Reset the internal eventfd; the caller holds the PE lock. */
static doca_error_t pe_drain_locked(struct doca_pe *pe)
{
	uint64_t value;

	if (read(pe->event_fd, &value, sizeof(value)) < 0 && errno != EAGAIN) {
		sdp_error("pe %p: reading the eventfd failed: %m", (void *)pe);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	pe->signaled = 0;
	return DOCA_SUCCESS;
}

static void pe_write_event_locked(struct doca_pe *pe)
{
	uint64_t one = 1;

	if (write(pe->event_fd, &one, sizeof(one)) < 0) {
		/* EAGAIN only when the counter is saturated: the handle is readable anyway. */
		if (errno != EAGAIN)
			sdp_error("pe %p: writing the eventfd failed: %m", (void *)pe);
	}
	pe->signaled = 1;
}

void sdp_pe_notify_locked(struct doca_pe *pe)
{
	if (!pe->armed) {
		pe->kicked = 1;
		return;
	}
	if (!pe->signaled)
		pe_write_event_locked(pe);
}

void sdp_pe_signal(struct doca_pe *pe)
{
	if (pe == NULL) {
		sdp_error("NULL progress engine");
		return;
	}
	sdp_pe_lock(pe);
	sdp_pe_notify_locked(pe);
	sdp_pe_unlock(pe);
}

/*
 * Call fn on every connected context. A callback that connects or destroys a context changes
 * the list under the iteration: stop there, the next doca_pe_progress() call goes on.
 */
static int pe_for_each_ctx(struct doca_pe *pe, int (*fn)(struct doca_ctx *ctx))
{
	sdp_list_link_t *link = pe->ctxs.next;
	int made = 0;

	while (link != &pe->ctxs) {
		struct doca_ctx *ctx = sdp_container_of(link, struct doca_ctx, pe_link);
		sdp_list_link_t *next = link->next;
		unsigned int gen = pe->ctxs_gen;

		made |= fn(ctx);
		if (gen != pe->ctxs_gen)
			break;
		link = next;
	}
	return made;
}

static int pe_ctx_progress(struct doca_ctx *ctx)
{
	if (ctx->state == DOCA_CTX_STATE_IDLE || ctx->ops->progress == NULL)
		return 0;
	return ctx->ops->progress(ctx) != 0;
}

/* Run the callbacks of the tasks completed so far (not those completed meanwhile). */
static int pe_run_completions(struct doca_pe *pe)
{
	sdp_list_link_t done;
	int made = 0;

	sdp_list_head_init(&done);
	/* this thread's own completions: no lock */
	sdp_list_splice_tail(&done, &pe->completed_local);
	/* Set under the lock by every other completion: no lock needed to see there is none. */
	if (atomic_load_explicit(&pe->has_completed, memory_order_relaxed)) {
		sdp_pe_lock(pe);
		sdp_list_splice_tail(&done, &pe->completed);
		atomic_store_explicit(&pe->has_completed, 0, memory_order_relaxed);
		sdp_pe_unlock(pe);
	}
	if (sdp_list_is_empty(&done))
		return 0;

	while (!sdp_list_is_empty(&done)) {
		struct doca_task *task = sdp_container_of(done.next, struct doca_task, link);
		struct doca_ctx *ctx = task->ctx;
		doca_task_completion_cb_t cb;

		sdp_list_del(&task->link);
		/*
		 * No lock: a completed task and the in-flight counts are this thread's alone
		 * (engines complete tasks under the lock and never touch them again; submit and
		 * the stop checks run on the thread that progresses the PE).
		 */
		task->state = SDP_TASK_ALLOCATED; /* back to the application */
		ctx->num_inflight--;
		pe->num_inflight--;

		cb = task->status == DOCA_SUCCESS ? task->success_cb : task->error_cb;
		if (cb != NULL)
			cb(task, task->user_data, ctx->user_data);
		else
			sdp_warn("%s task %p completed (%s) without a callback to report it",
				 task->ops->name != NULL ? task->ops->name : "a", (void *)task,
				 doca_error_get_name(task->status));
		made = 1;
	}
	return made;
}

uint8_t doca_pe_progress(struct doca_pe *pe)
{
	struct doca_pe *prev;
	int made = 0;

	if (pe == NULL) {
		sdp_error("NULL progress engine");
		return 0;
	}
	if (pe->in_progress) {
		sdp_error("pe %p: doca_pe_progress called from inside a callback; refused",
			  (void *)pe);
		return 0;
	}
	pe->in_progress = 1;
	prev = sdp_pe_progressing;
	sdp_pe_progressing = pe;

	if (atomic_load_explicit(&pe->kicked, memory_order_relaxed)) {
		sdp_pe_lock(pe);
		pe->kicked = 0;
		sdp_pe_unlock(pe);
	}

	made |= pe_for_each_ctx(pe, pe_ctx_progress);
	made |= pe_run_completions(pe);
	made |= pe_for_each_ctx(pe, sdp_ctx_apply_pending);

	sdp_pe_progressing = prev;
	if (!sdp_list_is_empty(&pe->completed_local)) {
		/*
		 * Completed by the callbacks or the state changes: due at the next call, before
		 * what other threads completed since (it came later: a completion joins this
		 * list only while the shared one is empty).
		 */
		sdp_pe_lock(pe);
		sdp_list_splice_tail(&pe->completed_local, &pe->completed);
		sdp_list_splice_tail(&pe->completed, &pe->completed_local);
		atomic_store_explicit(&pe->has_completed, 1, memory_order_relaxed);
		sdp_pe_notify_locked(pe);
		sdp_pe_unlock(pe);
	}
	pe->in_progress = 0;
	return made ? 1 : 0;
}

#ifdef __linux__
doca_error_t doca_pe_get_notification_handle(const struct doca_pe *pe,
					     doca_notification_handle_t *handle)
{
	if (pe == NULL || handle == NULL) {
		sdp_error("NULL argument (pe %p, handle %p)", (const void *)pe, (void *)handle);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*handle = pe->epoll_fd;
	return DOCA_SUCCESS;
}
#endif

doca_error_t doca_pe_clear_notification(struct doca_pe *pe, doca_notification_handle_t handle)
{
	doca_error_t status;

	if (pe == NULL) {
		sdp_error("NULL progress engine");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (handle != pe->epoll_fd) {
		sdp_error("pe %p: handle %d is not this PE's notification handle (%d)", (void *)pe,
			  (int)handle, pe->epoll_fd);
		return DOCA_ERROR_INVALID_VALUE;
	}
	sdp_pe_lock(pe);
	status = pe_drain_locked(pe);
	pe->armed = 0;
	sdp_pe_unlock(pe);
	return status;
}

static int pe_ctx_arm(struct doca_ctx *ctx)
{
	if (ctx->state == DOCA_CTX_STATE_IDLE || ctx->ops->arm == NULL)
		return 0;
	return ctx->ops->arm(ctx) != 0;
}

doca_error_t doca_pe_request_notification(struct doca_pe *pe)
{
	doca_error_t status = DOCA_SUCCESS;
	sdp_list_link_t *link;
	int pending;

	if (pe == NULL) {
		sdp_error("NULL progress engine");
		return DOCA_ERROR_INVALID_VALUE;
	}

	sdp_pe_lock(pe);
	if (pe->event_mode == DOCA_PE_EVENT_MODE_PROGRESS_ALL && pe->signaled)
		status = pe_drain_locked(pe);
	pe->armed = 1;
	pending = pe->kicked || !sdp_list_is_empty(&pe->completed);
	for (link = pe->ctxs.next; link != &pe->ctxs && !pending; link = link->next) {
		struct doca_ctx *ctx = sdp_container_of(link, struct doca_ctx, pe_link);

		pending = ctx->start_pending || sdp_ctx_stop_ready_locked(ctx);
	}
	sdp_pe_unlock(pe);

	/* The types' arm hooks run without the PE lock (they may complete tasks). */
	pending |= pe_for_each_ctx(pe, pe_ctx_arm);

	if (pending) {
		sdp_pe_lock(pe);
		if (!pe->signaled)
			pe_write_event_locked(pe);
		sdp_pe_unlock(pe);
	}
	return status;
}

doca_error_t doca_pe_get_num_inflight_tasks(const struct doca_pe *pe, size_t *num_inflight_tasks)
{
	struct doca_pe *mpe = (struct doca_pe *)pe; /* the lock is not part of the value */

	if (pe == NULL || num_inflight_tasks == NULL) {
		sdp_error("NULL argument (pe %p, num_inflight_tasks %p)", (const void *)pe,
			  (void *)num_inflight_tasks);
		return DOCA_ERROR_INVALID_VALUE;
	}
	sdp_pe_lock(mpe);
	*num_inflight_tasks = pe->num_inflight;
	sdp_pe_unlock(mpe);
	return DOCA_SUCCESS;
}

doca_error_t doca_pe_set_event_mode(struct doca_pe *pe, enum doca_pe_event_mode event_mode)
{
	if (pe == NULL) {
		sdp_error("NULL progress engine");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (event_mode != DOCA_PE_EVENT_MODE_PROGRESS_SELECTIVE &&
	    event_mode != DOCA_PE_EVENT_MODE_PROGRESS_ALL) {
		sdp_error("pe %p: unknown event mode %d", (void *)pe, (int)event_mode);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (pe->in_progress) {
		sdp_error("pe %p: the event mode cannot change inside a callback", (void *)pe);
		return DOCA_ERROR_BAD_STATE;
	}
	pe->event_mode = event_mode;
	return DOCA_SUCCESS;
}

doca_error_t sdp_pe_add_event_fd(struct doca_pe *pe, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN};

	if (pe == NULL || fd < 0) {
		sdp_error("invalid argument (pe %p, fd %d)", (void *)pe, fd);
		return DOCA_ERROR_INVALID_VALUE;
	}
	ev.data.fd = fd;
	if (epoll_ctl(pe->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		if (errno == EEXIST) {
			sdp_error("pe %p: fd %d is already part of the notification handle",
				  (void *)pe, fd);
			return DOCA_ERROR_ALREADY_EXIST;
		}
		sdp_error("pe %p: adding fd %d to the notification handle failed: %m", (void *)pe,
			  fd);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	return DOCA_SUCCESS;
}

void sdp_pe_del_event_fd(struct doca_pe *pe, int fd)
{
	if (pe == NULL || fd < 0) {
		sdp_error("invalid argument (pe %p, fd %d)", (void *)pe, fd);
		return;
	}
	if (epoll_ctl(pe->epoll_fd, EPOLL_CTL_DEL, fd, NULL) < 0)
		sdp_warn("pe %p: removing fd %d from the notification handle failed: %m",
			 (void *)pe, fd);
}
