/*
 * libdoca_urom: the worker context.
 *
 * Start (IDLE -> STARTING, returns DOCA_ERROR_IN_PROGRESS): SPAWN goes to the service through
 * the service context's connection; the SPAWN_REPLY carries the worker's id, pid, UCP address,
 * a dest id and a token. The context then connects its own UCP worker to the worker process
 * and sends W_CONNECT; W_CONNECT_REPLY makes it RUNNING. Each step is driven by this context's
 * progress op, i.e. by doca_pe_progress() on the worker's own PE: while it waits for the
 * service, that op progresses the service connection itself (under the service lock), so the
 * service's PE does not have to be progressed for spawns and releases (progressing it as well
 * does no harm). Stop sends W_DISCONNECT to the worker and RELEASE to the service and finishes
 * when the service answered (bounded).
 *
 * The direct endpoint to the worker process has no UCP error handling while UCX_TLS lets shared
 * memory carry it, so that a worker on this host is reached that way (UCX 1.13's posix/sysv/cma
 * transports cannot watch a peer); where UCX_TLS rules shared memory out it has it
 * (sdp_ucx_tls.h: without it a transport error makes UCX abort the program), and its failure
 * marks the worker dead. Either way a dead worker is also reported by the service (WORKER_EXIT,
 * sent to every host connection that owns the worker, or the loss of the service connection
 * itself). So while the context is connecting or running, its progress op also looks at the
 * service connection, every SDP_UROM_SVC_POLL_MS at most and only when the service lock is free
 * (whoever holds it is progressing that connection or soon done with it), and in event mode the
 * service's wakeup fd stays in this context's PE: a program that only progresses, or sleeps on,
 * the worker's PE still sees its tasks fail with IO_FAILED within a bounded time.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doca_urom.h"
#include "sdp_ctx.h"
#include "sdp_log.h"
#include "sdp_ucx_tls.h"
#include "sdp_urom_host.h"
#include "softdpu/urom.h"

SDP_LOG_COMPONENT("urom_worker");

static struct doca_urom_worker *worker_of(struct doca_ctx *ctx)
{
	return sdp_container_of(ctx, struct doca_urom_worker, ctx);
}

/*
 * Event mode, from start to stop: a duplicate of the service connection's wakeup fd sits in this
 * context's PE, so a program sleeping on that PE wakes up when a reply or WORKER_EXIT arrives (a
 * duplicate, because the same PE may watch the service fd already).
 */
static void worker_watch_svc(struct doca_urom_worker *worker, int on)
{
	struct doca_pe *pe = sdp_ctx_get_pe(&worker->ctx);

	if (on && worker->svc_efd < 0 && worker->svc->chan_ready) {
		worker->svc_efd = dup(worker->svc->chan.fd);
		if (worker->svc_efd < 0) {
			sdp_warn("worker %p: dup of the service wakeup fd failed: %m; a program "
				 "sleeping on the PE may wake up late",
				 (void *)worker);
			return;
		}
		if (sdp_pe_add_event_fd(pe, worker->svc_efd) != DOCA_SUCCESS) {
			close(worker->svc_efd);
			worker->svc_efd = -1;
		}
	} else if (!on && worker->svc_efd >= 0) {
		sdp_pe_del_event_fd(pe, worker->svc_efd);
		close(worker->svc_efd);
		worker->svc_efd = -1;
	}
}

static int spawn_timeout_ms(void)
{
	int t = sdp_urom_connect_timeout_ms() * 2;

	return t < SDP_UROM_SPAWN_TIMEOUT_MIN_MS ? SDP_UROM_SPAWN_TIMEOUT_MIN_MS : t;
}

void sdp_urom_worker_mark_dead(struct doca_urom_worker *worker, const char *why)
{
	struct doca_pe *pe = sdp_ctx_get_pe(&worker->ctx);

	if (atomic_exchange(&worker->dead, 1) != 0) {
		/* told already */
	} else if (worker->phase == SDP_UROM_W_RELEASING) {
		/* expected: we disconnected and the worker may exit */
		sdp_debug("worker %lu (pid %u): gone while releasing: %s",
			  (unsigned long)worker->id, worker->pid, why);
	} else {
		sdp_error("worker %lu (pid %u): connection lost: %s", (unsigned long)worker->id,
			  worker->pid, why);
	}
	if (pe != NULL)
		sdp_pe_signal(pe);
}

/* ---- the worker's own connection ------------------------------------------------------------ */

/* UCX watched the endpoint (peer error handling) and saw it fail (from our progress). */
static void worker_ep_failed(void *arg, ucp_ep_h ep, ucs_status_t status)
{
	char why[96];

	(void)ep;
	snprintf(why, sizeof(why), "the endpoint to the worker failed: %s",
		 ucs_status_string(status));
	sdp_urom_worker_mark_dead(arg, why);
}

/* One message of what the worker sent. */
static void worker_recv_one(struct doca_urom_worker *worker, const void *data, size_t len)
{
	struct sdp_urom_msg msg_buf; /* unpack writes only what the type uses */
	struct sdp_urom_msg *msg = &msg_buf;
	doca_error_t status;
	char why[160];

	status = sdp_urom_msg_unpack_why(data, len, msg, why, sizeof(why));
	if (status == DOCA_ERROR_NOT_SUPPORTED) {
		sdp_error("UROM protocol mismatch: this host library speaks version %u, worker "
			  "%lu speaks version %u",
			  SDP_UROM_PROTO_VERSION, (unsigned long)worker->id, msg->hdr.version);
		if (worker->phase == SDP_UROM_W_CONNECTING && !worker->connect_done) {
			worker->connect_status = DOCA_ERROR_NOT_SUPPORTED;
			worker->connect_done = 1;
		}
		return;
	}
	if (status != DOCA_SUCCESS) {
		sdp_warn("worker %lu: malformed message dropped: %s", (unsigned long)worker->id,
			 why);
		return;
	}

	switch (msg->hdr.type) {
	case SDP_UROM_MSG_W_NOTIF:
		sdp_urom_worker_handle_notif(worker, msg);
		break;
	case SDP_UROM_MSG_W_DOMAIN_ADDR_REPLY:
	case SDP_UROM_MSG_W_DOMAIN_REPLY:
		sdp_urom_domain_handle_reply(worker, msg);
		break;
	case SDP_UROM_MSG_W_CONNECT_REPLY:
	case SDP_UROM_MSG_REJECT:
	case SDP_UROM_MSG_VERSION_REJECT:
		if (worker->phase != SDP_UROM_W_CONNECTING || worker->connect_done) {
			sdp_debug("worker %lu: late %s dropped", (unsigned long)worker->id,
				  sdp_urom_msg_type_name(msg->hdr.type));
			break;
		}
		if (msg->hdr.type == SDP_UROM_MSG_W_CONNECT_REPLY) {
			worker->connect_status = (doca_error_t)msg->u.w_connect_reply.status;
			if (worker->connect_status != DOCA_SUCCESS)
				sdp_error("worker %lu refused the connection: %.*s (%s)",
					  (unsigned long)worker->id,
					  (int)msg->u.w_connect_reply.reason.len,
					  (const char *)msg->u.w_connect_reply.reason.data,
					  doca_error_get_name(worker->connect_status));
		} else if (msg->hdr.type == SDP_UROM_MSG_REJECT) {
			worker->connect_status = (doca_error_t)msg->u.reject.status;
			sdp_error("worker %lu refused the connection: %.*s (%s)",
				  (unsigned long)worker->id, (int)msg->u.reject.reason.len,
				  (const char *)msg->u.reject.reason.data,
				  doca_error_get_name(worker->connect_status));
		} else {
			sdp_error("UROM protocol mismatch: this host library speaks version %u, "
				  "worker %lu speaks version %u",
				  SDP_UROM_PROTO_VERSION, (unsigned long)worker->id,
				  msg->u.version_reject.version);
			worker->connect_status = DOCA_ERROR_NOT_SUPPORTED;
		}
		if (msg->hdr.type != SDP_UROM_MSG_W_CONNECT_REPLY &&
		    worker->connect_status == DOCA_SUCCESS)
			worker->connect_status = DOCA_ERROR_UNEXPECTED;
		worker->connect_done = 1;
		break;
	default:
		sdp_debug("worker %lu: unexpected %s dropped", (unsigned long)worker->id,
			  sdp_urom_msg_type_name(msg->hdr.type));
		break;
	}
}

/* An active message from the worker: one or more messages back to back (sdp_urom_proto.h). */
static void worker_recv(void *arg, ucp_ep_h reply_ep, const void *data, size_t len)
{
	struct doca_urom_worker *worker = arg;
	const uint8_t *p = data;
	size_t n;
	char why[160];

	(void)reply_ep;
	while (len > 0) {
		if (sdp_urom_msg_next(p, len, &n, why, sizeof(why)) != DOCA_SUCCESS) {
			sdp_warn("worker %lu: the last %zu bytes of an active message dropped: %s",
				 (unsigned long)worker->id, len, why);
			return;
		}
		worker_recv_one(worker, p, n);
		p += n;
		len -= n;
	}
}

/* Release what start acquired for the direct connection (PE thread). */
static void worker_conn_teardown(struct doca_urom_worker *worker)
{
	struct doca_pe *pe = sdp_ctx_get_pe(&worker->ctx);

	if (worker->efd_added) {
		sdp_pe_del_event_fd(pe, worker->ucx.efd);
		worker->efd_added = 0;
	}
	if (worker->ep != NULL) {
		/* A dead worker never completes a flush: close at once (by force). */
		sdp_ucx_ep_close(&worker->ucx, worker->ep,
				 atomic_load(&worker->dead) ? 0 : SDP_UROM_CLOSE_TIMEOUT_MS);
		worker->ep = NULL;
	}
	if (worker->ucx_ready) {
		sdp_ucx_worker_fini(&worker->ucx);
		worker->ucx_ready = 0;
	}
	if (worker->ucp != NULL) {
		sdp_ucx_context_destroy(worker->ucp);
		worker->ucp = NULL;
	}
	free(worker->slots);
	free(worker->free_slots);
	free(worker->send_buf);
	free(worker->send_slots);
	worker->slots = NULL;
	worker->free_slots = NULL;
	worker->send_buf = NULL;
	worker->send_slots = NULL;
	worker->send_len = 0;
	worker->send_n = 0;
}

/* The context leaves the service's active set (PE thread). */
static void worker_deactivate(struct doca_urom_worker *worker)
{
	struct doca_urom_service *svc = worker->svc;

	pthread_mutex_lock(&svc->lock);
	if (worker->req_queued) {
		sdp_urom_req_drop_locked(&worker->req);
		worker->req_queued = 0;
	}
	sdp_urom_req_clear(&worker->req);
	if (worker->active) {
		svc->num_active--;
		worker->active = 0;
	}
	pthread_mutex_unlock(&svc->lock);
	worker_watch_svc(worker, 0);
	worker->phase = SDP_UROM_W_IDLE;
}

static doca_error_t worker_send_release(struct doca_urom_worker *worker)
{
	struct doca_urom_service *svc = worker->svc;
	struct sdp_urom_msg msg;
	doca_error_t status;

	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_RELEASE;
	msg.u.release.worker_id = worker->id;
	msg.u.release.dest_id = worker->dest_id;
	pthread_mutex_lock(&svc->lock);
	sdp_urom_req_clear(&worker->req);
	worker->req.wake_pe = sdp_ctx_get_pe(&worker->ctx);
	status = sdp_urom_svc_request_locked(svc, &msg, &worker->req, SDP_UROM_MSG_RELEASE_REPLY);
	worker->req_queued = status == DOCA_SUCCESS;
	pthread_mutex_unlock(&svc->lock);
	worker->release_sent = 1;
	worker->phase = SDP_UROM_W_RELEASING;
	if (status == DOCA_SUCCESS)
		worker_watch_svc(worker, 1);
	worker->deadline_ms = sdp_urom_now_ms() + (uint64_t)sdp_urom_connect_timeout_ms();
	return status;
}

/* Progress the service connection for our request; 1 when the request is done. */
static int worker_poll_req(struct doca_urom_worker *worker, int *made)
{
	struct doca_urom_service *svc = worker->svc;
	int done;

	pthread_mutex_lock(&svc->lock);
	if (!worker->req_queued) {
		done = 1;
	} else {
		if (!worker->req.done)
			*made |= sdp_urom_svc_progress_locked(svc);
		done = worker->req.done;
		if (done)
			worker->req_queued = 0;
	}
	pthread_mutex_unlock(&svc->lock);
	return done;
}

/* ---- start ---------------------------------------------------------------------------------- */

static doca_error_t worker_start(struct doca_ctx *ctx)
{
	struct doca_urom_worker *worker = worker_of(ctx);
	struct doca_urom_service *svc = worker->svc;
	struct sdp_urom_msg *msg;
	doca_error_t status;
	size_t i;

	if (svc == NULL) {
		sdp_error("worker %p: no service (doca_urom_worker_set_service)", (void *)worker);
		return DOCA_ERROR_BAD_STATE;
	}
	if (svc->ctx.state != DOCA_CTX_STATE_RUNNING) {
		sdp_error("worker %p: its service %p is %s, not RUNNING", (void *)worker,
			  (void *)svc, sdp_ctx_state_name(svc->ctx.state));
		return DOCA_ERROR_BAD_STATE;
	}
	if (worker->plugins == 0) {
		sdp_error("worker %p: no plugin selected (doca_urom_worker_set_plugins)",
			  (void *)worker);
		return DOCA_ERROR_BAD_STATE;
	}
	if ((worker->plugins & ~svc->plugins_mask) != 0) {
		sdp_error("worker %p: plugin mask 0x%lx names plugins the service at %s does not "
			  "offer (it offers 0x%lx)",
			  (void *)worker, (unsigned long)worker->plugins, svc->addr_str,
			  (unsigned long)svc->plugins_mask);
		return DOCA_ERROR_NOT_SUPPORTED;
	}

	msg = calloc(1, sizeof(*msg));
	if (msg == NULL) {
		sdp_error("failed to allocate a SPAWN message");
		return DOCA_ERROR_NO_MEMORY;
	}
	msg->hdr.type = SDP_UROM_MSG_SPAWN;
	msg->u.spawn.worker_id = worker->id;
	msg->u.spawn.gid = worker->gid;
	msg->u.spawn.plugins = worker->plugins;
	msg->u.spawn.has_cpuset = (uint32_t)worker->has_cpuset;
	for (i = 0; i < SDP_UROM_CPUSET_WORDS &&
		    i < sizeof(worker->cpuset.ucs_bits) / sizeof(worker->cpuset.ucs_bits[0]);
	     i++)
		msg->u.spawn.cpuset[i] = worker->cpuset.ucs_bits[i];
	msg->u.spawn.num_env = (uint32_t)worker->num_env;
	for (i = 0; i < worker->num_env; i++) {
		msg->u.spawn.env[i].data = (const uint8_t *)worker->env[i];
		msg->u.spawn.env[i].len = (uint32_t)strlen(worker->env[i]);
	}

	atomic_store(&worker->dead, 0);
	worker->abandon = 0;
	worker->release_sent = 0;
	worker->connect_done = 0;
	worker->connect_status = DOCA_SUCCESS;
	worker->dest_id = 0;
	worker->pid = 0;

	pthread_mutex_lock(&svc->lock);
	sdp_urom_req_clear(&worker->req);
	worker->req.wake_pe = sdp_ctx_get_pe(ctx);
	worker->req.done_cb = NULL;
	status = sdp_urom_svc_request_locked(svc, msg, &worker->req, SDP_UROM_MSG_SPAWN_REPLY);
	if (status == DOCA_SUCCESS) {
		worker->req_queued = 1;
		worker->active = 1;
		svc->num_active++;
	}
	pthread_mutex_unlock(&svc->lock);
	free(msg);
	if (status != DOCA_SUCCESS)
		return status;

	worker->phase = SDP_UROM_W_SPAWNING;
	worker->deadline_ms = sdp_urom_now_ms() + (uint64_t)spawn_timeout_ms();
	worker_watch_svc(worker, 1);
	sdp_debug("worker %p: SPAWN id %ld gid %u plugins 0x%lx sent", (void *)worker,
		  (long)worker->id, worker->gid, (unsigned long)worker->plugins);
	return DOCA_ERROR_IN_PROGRESS;
}

/* SPAWN_REPLY arrived (success): connect to the worker process. */
static doca_error_t worker_connect(struct doca_urom_worker *worker)
{
	const struct sdp_urom_msg *reply = worker->req.reply;
	struct doca_urom_service *svc = worker->svc;
	struct sdp_urom_msg msg;
	doca_error_t status;
	uint32_t i;

	worker->id = reply->u.spawn_reply.worker_id;
	worker->dest_id = reply->u.spawn_reply.dest_id;
	worker->pid = reply->u.spawn_reply.pid;
	memcpy(worker->token, reply->u.spawn_reply.token, sizeof(worker->token));
	worker->msg_size = svc->msg_size;

	worker->slots = calloc(worker->max_inflight, sizeof(*worker->slots));
	worker->free_slots = calloc(worker->max_inflight, sizeof(*worker->free_slots));
	worker->send_cap = worker->msg_size + SDP_UROM_HDR_LEN + 64;
	worker->send_buf = malloc(worker->send_cap);
	worker->send_slots = calloc(worker->max_inflight, sizeof(*worker->send_slots));
	worker->send_len = 0;
	worker->send_n = 0;
	if (worker->slots == NULL || worker->free_slots == NULL || worker->send_buf == NULL ||
	    worker->send_slots == NULL) {
		sdp_error("worker %lu: failed to allocate %u task slots", (unsigned long)worker->id,
			  worker->max_inflight);
		return DOCA_ERROR_NO_MEMORY;
	}
	for (i = 0; i < worker->max_inflight; i++)
		worker->free_slots[i] = worker->max_inflight - 1 - i;
	worker->num_free = worker->max_inflight;

	status = sdp_ucx_context_create(svc->addr.net_devices[0] ? svc->addr.net_devices : NULL,
					&worker->ucp);
	if (status != DOCA_SUCCESS)
		return status;
	status = sdp_ucx_worker_init(&worker->ucx, worker->ucp, UCS_THREAD_MODE_SINGLE, worker_recv,
				     worker);
	if (status != DOCA_SUCCESS)
		return status;
	worker->ucx_ready = 1;
	status = sdp_pe_add_event_fd(sdp_ctx_get_pe(&worker->ctx), worker->ucx.efd);
	if (status != DOCA_SUCCESS)
		return status;
	worker->efd_added = 1;
	/* Peer error handling only where UCX_TLS rules shared memory out (see the top). */
	status = sdp_ucx_ep_connect_addr(&worker->ucx, reply->u.spawn_reply.worker_addr.data,
					 reply->u.spawn_reply.worker_addr.len,
					 sdp_ucx_tls_err_mode(getenv("UCX_TLS")), worker_ep_failed,
					 worker, &worker->ep);
	if (status != DOCA_SUCCESS)
		return status;

	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_W_CONNECT;
	msg.u.w_connect.dest_id = worker->dest_id;
	memcpy(msg.u.w_connect.token, worker->token, sizeof(worker->token));
	status = sdp_urom_send_msg(&worker->ucx, worker->ep, &msg);
	if (status != DOCA_SUCCESS)
		return status;
	worker->phase = SDP_UROM_W_CONNECTING;
	worker->deadline_ms = sdp_urom_now_ms() + (uint64_t)sdp_urom_connect_timeout_ms();
	return DOCA_SUCCESS;
}

/* A started attempt failed: undo it and tell the core (PE thread). */
static void worker_start_failed(struct doca_urom_worker *worker, doca_error_t status)
{
	int spawned = worker->dest_id != 0 && !worker->release_sent;

	worker_conn_teardown(worker);
	if (spawned && !atomic_load(&worker->dead)) {
		/* Let the service forget our connection; its answer is not awaited. */
		struct sdp_urom_msg msg;

		memset(&msg, 0, sizeof(msg));
		msg.hdr.type = SDP_UROM_MSG_RELEASE;
		msg.u.release.worker_id = worker->id;
		msg.u.release.dest_id = worker->dest_id;
		pthread_mutex_lock(&worker->svc->lock);
		if (worker->svc->chan_ready && !worker->svc->conn_lost)
			(void)sdp_urom_svc_send_locked(worker->svc, &msg);
		pthread_mutex_unlock(&worker->svc->lock);
	}
	worker_deactivate(worker);
	sdp_ctx_start_done(&worker->ctx, status);
}

/* ---- stop ----------------------------------------------------------------------------------- */

static void worker_stop_finish(struct doca_urom_worker *worker)
{
	worker_conn_teardown(worker);
	worker_deactivate(worker);
	sdp_ctx_stop_done(&worker->ctx);
}

static doca_error_t worker_stop(struct doca_ctx *ctx)
{
	struct doca_urom_worker *worker = worker_of(ctx);
	struct sdp_urom_msg msg;

	switch (worker->phase) {
	case SDP_UROM_W_SPAWNING:
		/* The reply decides: a worker that was spawned meanwhile is released. */
		worker->abandon = 1;
		return DOCA_ERROR_IN_PROGRESS;
	case SDP_UROM_W_RELEASING:
		return DOCA_ERROR_IN_PROGRESS;
	case SDP_UROM_W_CONNECTING:
	case SDP_UROM_W_RUNNING:
		sdp_urom_worker_flush_tasks(worker, DOCA_ERROR_CONNECTION_ABORTED);
		if (!atomic_load(&worker->dead) && worker->ep != NULL) {
			memset(&msg, 0, sizeof(msg));
			msg.hdr.type = SDP_UROM_MSG_W_DISCONNECT;
			msg.u.w_disconnect.dest_id = worker->dest_id;
			(void)sdp_urom_send_msg(&worker->ucx, worker->ep, &msg);
		}
		if (worker_send_release(worker) != DOCA_SUCCESS) {
			/* no service to tell: done now (logged by the request) */
			worker_conn_teardown(worker);
			worker_deactivate(worker);
			return DOCA_SUCCESS;
		}
		return DOCA_ERROR_IN_PROGRESS;
	case SDP_UROM_W_IDLE:
	default:
		return DOCA_SUCCESS;
	}
}

/* ---- progress ------------------------------------------------------------------------------- */

static int worker_progress_spawning(struct doca_urom_worker *worker)
{
	doca_error_t status;
	int made = 0;

	if (!worker_poll_req(worker, &made)) {
		if (sdp_urom_now_ms() < worker->deadline_ms)
			return made;
		sdp_error("worker %p: no answer to SPAWN from the service at %s within %d ms",
			  (void *)worker, worker->svc->addr_str, spawn_timeout_ms());
		if (worker->abandon) {
			worker_stop_finish(worker);
			return 1;
		}
		worker_start_failed(worker, DOCA_ERROR_TIME_OUT);
		return 1;
	}

	status = worker->req.status;
	if (status != DOCA_SUCCESS) {
		if (!worker->abandon || status != DOCA_ERROR_CONNECTION_ABORTED)
			sdp_error("worker %p: the service at %s refused to spawn worker id %ld: "
				  "%s (%s)",
				  (void *)worker, worker->svc->addr_str, (long)worker->id,
				  worker->req.reason[0] ? worker->req.reason : "no reason given",
				  doca_error_get_name(status));
		if (worker->abandon)
			worker_stop_finish(worker);
		else
			worker_start_failed(worker, status);
		return 1;
	}
	if (worker->req.reply->u.spawn_reply.status != DOCA_SUCCESS) {
		char reason[256];
		const struct sdp_urom_bytes *r = &worker->req.reply->u.spawn_reply.reason;
		size_t n = r->len < sizeof(reason) - 1 ? r->len : sizeof(reason) - 1;

		memcpy(reason, r->data, n);
		reason[n] = '\0';
		status = (doca_error_t)worker->req.reply->u.spawn_reply.status;
		sdp_error("worker %p: the service at %s refused to spawn worker id %ld: %s (%s)",
			  (void *)worker, worker->svc->addr_str, (long)worker->id,
			  n ? reason : "no reason given", doca_error_get_name(status));
		if (worker->abandon)
			worker_stop_finish(worker);
		else
			worker_start_failed(worker, status);
		return 1;
	}

	if (worker->abandon) {
		worker->id = worker->req.reply->u.spawn_reply.worker_id;
		worker->dest_id = worker->req.reply->u.spawn_reply.dest_id;
		if (worker_send_release(worker) != DOCA_SUCCESS)
			worker_stop_finish(worker);
		return 1;
	}
	status = worker_connect(worker);
	if (status != DOCA_SUCCESS)
		worker_start_failed(worker, status);
	else
		sdp_debug("worker %lu: spawned (pid %u), connecting", (unsigned long)worker->id,
			  worker->pid);
	return 1;
}

/*
 * Connecting or running: notice WORKER_EXIT (or a lost service connection) even when only this
 * context's PE is progressed. Cheap: a counter, a clock read every SDP_UROM_SVC_POLL_CALLS
 * calls, the service connection every SDP_UROM_SVC_POLL_MS, never waiting for its lock.
 */
static int worker_poll_svc(struct doca_urom_worker *worker)
{
	struct doca_urom_service *svc = worker->svc;
	uint64_t now;
	int made;

	if (++worker->svc_poll_calls < SDP_UROM_SVC_POLL_CALLS)
		return 0;
	worker->svc_poll_calls = 0;
	now = sdp_urom_now_ms();
	if (now - worker->svc_poll_ms < SDP_UROM_SVC_POLL_MS)
		return 0;
	if (pthread_mutex_trylock(&svc->lock) != 0)
		return 0; /* busy: try again at the next look */
	worker->svc_poll_ms = now;
	made = sdp_urom_svc_progress_locked(svc);
	pthread_mutex_unlock(&svc->lock);
	return made;
}

static int worker_progress_own(struct doca_urom_worker *worker)
{
	int made = 0, i;

	if (!worker->ucx_ready)
		return 0;
	for (i = 0; i < 64 && sdp_ucx_worker_progress(&worker->ucx); i++)
		made = 1;
	return made;
}

static int worker_progress(struct doca_ctx *ctx)
{
	struct doca_urom_worker *worker = worker_of(ctx);
	int made = 0;

	switch (worker->phase) {
	case SDP_UROM_W_SPAWNING:
		return worker_progress_spawning(worker);
	case SDP_UROM_W_CONNECTING:
		made = worker_progress_own(worker);
		made |= worker_poll_svc(worker);
		if (atomic_load(&worker->dead) && !worker->connect_done) {
			worker->connect_status = DOCA_ERROR_IO_FAILED;
			worker->connect_done = 1;
		}
		if (worker->connect_done) {
			if (worker->connect_status == DOCA_SUCCESS) {
				worker->phase = SDP_UROM_W_RUNNING;
				sdp_debug("worker %lu: connected", (unsigned long)worker->id);
				sdp_ctx_start_done(ctx, DOCA_SUCCESS);
			} else {
				worker_start_failed(worker, worker->connect_status);
			}
			return 1;
		}
		if (sdp_urom_now_ms() >= worker->deadline_ms) {
			sdp_error("worker %lu (pid %u): no answer to W_CONNECT within %d ms",
				  (unsigned long)worker->id, worker->pid,
				  sdp_urom_connect_timeout_ms());
			worker_start_failed(worker, DOCA_ERROR_TIME_OUT);
			return 1;
		}
		return made;
	case SDP_UROM_W_RUNNING:
		if (worker->send_len != 0 && !atomic_load(&worker->dead)) {
			(void)sdp_urom_worker_send_cmds(worker);
			made = 1;
		}
		made |= worker_progress_own(worker);
		made |= worker_poll_svc(worker);
		if (atomic_load(&worker->dead) && worker->num_free != worker->max_inflight) {
			sdp_urom_worker_flush_tasks(worker, DOCA_ERROR_IO_FAILED);
			made = 1;
		}
		return made;
	case SDP_UROM_W_RELEASING:
		made = worker_progress_own(worker);
		if (worker_poll_req(worker, &made)) {
			if (worker->req.status != DOCA_SUCCESS)
				sdp_warn("worker %lu: the service did not confirm its release: %s "
					 "(%s)",
					 (unsigned long)worker->id,
					 worker->req.reason[0] ? worker->req.reason : "-",
					 doca_error_get_name(worker->req.status));
			worker_stop_finish(worker);
			return 1;
		}
		if (sdp_urom_now_ms() >= worker->deadline_ms) {
			sdp_warn("worker %lu: no answer to RELEASE within %d ms; stopping anyway",
				 (unsigned long)worker->id, sdp_urom_connect_timeout_ms());
			worker_stop_finish(worker);
			return 1;
		}
		return made;
	case SDP_UROM_W_IDLE:
	default:
		return 0;
	}
}

/* doca_ctx_flush_tasks(), and after a submission with DOCA_TASK_SUBMIT_FLAG_FLUSH. */
static void worker_flush(struct doca_ctx *ctx)
{
	struct doca_urom_worker *worker = worker_of(ctx);

	if (worker->phase == SDP_UROM_W_RUNNING && worker->send_len != 0)
		(void)sdp_urom_worker_send_cmds(worker);
}

static int worker_arm(struct doca_ctx *ctx)
{
	struct doca_urom_worker *worker = worker_of(ctx);
	int pending = 0;

	if (worker->phase == SDP_UROM_W_RUNNING && worker->send_len != 0 &&
	    !atomic_load(&worker->dead)) {
		/* they go before the program sleeps; a failure completed tasks */
		pending = sdp_urom_worker_send_cmds(worker) != DOCA_SUCCESS;
	}
	if (worker->ucx_ready)
		pending |= sdp_ucx_worker_arm(&worker->ucx) != DOCA_SUCCESS;
	if (worker->phase != SDP_UROM_W_IDLE) {
		/*
		 * Waiting for the service, or for news of the worker's death from it: arm its
		 * connection too (see worker_watch_svc). Taking the lock may wait a little: the
		 * program is about to sleep anyway.
		 */
		int waiting = worker->phase == SDP_UROM_W_SPAWNING ||
			      worker->phase == SDP_UROM_W_RELEASING;

		pthread_mutex_lock(&worker->svc->lock);
		if ((waiting && worker->req.done) || sdp_urom_svc_progress_locked(worker->svc) ||
		    (worker->svc->chan_ready && sdp_urom_chan_out_pending(&worker->svc->chan)))
			pending = 1;
		pthread_mutex_unlock(&worker->svc->lock);
	}
	if (atomic_load(&worker->dead) && worker->num_free != worker->max_inflight)
		pending = 1;
	return pending;
}

static const struct sdp_ctx_ops worker_ops = {
	.name = "urom_worker",
	.start = worker_start,
	.stop = worker_stop,
	.progress = worker_progress,
	.arm = worker_arm,
	.flush = worker_flush,
};

/* ---- public API ----------------------------------------------------------------------------- */

doca_error_t doca_urom_worker_create(struct doca_urom_worker **worker_ctx)
{
	struct doca_urom_worker *worker;

	if (worker_ctx == NULL) {
		sdp_error("NULL worker_ctx");
		return DOCA_ERROR_INVALID_VALUE;
	}
	worker = calloc(1, sizeof(*worker));
	if (worker == NULL) {
		sdp_error("failed to allocate a worker context of %zu bytes", sizeof(*worker));
		return DOCA_ERROR_NO_MEMORY;
	}
	sdp_ctx_init(&worker->ctx, &worker_ops);
	sdp_list_head_init(&worker->svc_link);
	sdp_list_head_init(&worker->req.link);
	sdp_list_head_init(&worker->task_cache);
	worker->id = DOCA_UROM_WORKER_ID_ANY;
	worker->max_inflight = SDP_UROM_DEFAULT_MAX_INFLIGHT;
	worker->svc_efd = -1;
	atomic_init(&worker->dead, 0);
	*worker_ctx = worker;
	sdp_debug("worker %p created", (void *)worker);
	return DOCA_SUCCESS;
}

static void worker_free_env(struct doca_urom_worker *worker)
{
	for (size_t i = 0; i < worker->num_env; i++)
		free(worker->env[i]);
	free(worker->env);
	worker->env = NULL;
	worker->num_env = 0;
}

static void worker_detach(struct doca_urom_worker *worker)
{
	struct doca_urom_service *svc = worker->svc;

	if (svc == NULL)
		return;
	pthread_mutex_lock(&svc->lock);
	sdp_list_del(&worker->svc_link);
	sdp_list_head_init(&worker->svc_link);
	svc->num_workers--;
	pthread_mutex_unlock(&svc->lock);
	worker->svc = NULL;
}

doca_error_t doca_urom_worker_destroy(struct doca_urom_worker *worker_ctx)
{
	doca_error_t status;

	if (worker_ctx == NULL) {
		sdp_error("NULL worker_ctx");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (worker_ctx->dom_refs > 0) {
		sdp_error("worker %p: a domain that is not IDLE uses it; stop and destroy the "
			  "domain first",
			  (void *)worker_ctx);
		return DOCA_ERROR_IN_USE;
	}
	status = sdp_ctx_fini(&worker_ctx->ctx);
	if (status != DOCA_SUCCESS)
		return status;
	worker_detach(worker_ctx);
	sdp_urom_worker_task_cache_fini(worker_ctx);
	worker_free_env(worker_ctx);
	sdp_urom_req_clear(&worker_ctx->req);
	sdp_debug("worker %p destroyed", (void *)worker_ctx);
	free(worker_ctx);
	return DOCA_SUCCESS;
}

/* NULL check + IDLE check for the setters. */
static doca_error_t worker_check_setter(struct doca_urom_worker *worker, const char *what)
{
	if (worker == NULL) {
		sdp_error("NULL worker_ctx (%s)", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return sdp_ctx_check_idle(&worker->ctx, what);
}

doca_error_t doca_urom_worker_set_service(struct doca_urom_worker *worker_ctx,
					  struct doca_urom_service *service_ctx)
{
	doca_error_t status = worker_check_setter(worker_ctx, "setting the service");

	if (status != DOCA_SUCCESS)
		return status;
	if (service_ctx == NULL) {
		sdp_error("NULL service_ctx");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (worker_ctx->svc == service_ctx)
		return DOCA_SUCCESS;
	worker_detach(worker_ctx);
	pthread_mutex_lock(&service_ctx->lock);
	sdp_list_add_tail(&service_ctx->workers, &worker_ctx->svc_link);
	service_ctx->num_workers++;
	pthread_mutex_unlock(&service_ctx->lock);
	worker_ctx->svc = service_ctx;
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_worker_set_id(struct doca_urom_worker *worker_ctx, uint64_t worker_id)
{
	doca_error_t status = worker_check_setter(worker_ctx, "setting the worker id");

	if (status != DOCA_SUCCESS)
		return status;
	worker_ctx->id = worker_id;
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_worker_set_plugins(struct doca_urom_worker *worker_ctx, uint64_t plugins)
{
	doca_error_t status = worker_check_setter(worker_ctx, "setting the plugins");

	if (status != DOCA_SUCCESS)
		return status;
	if (plugins == 0) {
		sdp_error("empty plugin mask: select at least one plugin id");
		return DOCA_ERROR_INVALID_VALUE;
	}
	worker_ctx->plugins = plugins;
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_worker_set_cpuset(struct doca_urom_worker *worker_ctx, doca_cpu_set_t cpuset)
{
	doca_error_t status = worker_check_setter(worker_ctx, "setting the cpuset");
	size_t i, n = sizeof(cpuset.ucs_bits) / sizeof(cpuset.ucs_bits[0]);
	int empty = 1;

	if (status != DOCA_SUCCESS)
		return status;
	for (i = 0; i < n; i++)
		if (cpuset.ucs_bits[i] != 0)
			empty = 0;
	if (empty) {
		sdp_error("empty cpuset: a worker needs at least one CPU");
		return DOCA_ERROR_INVALID_VALUE;
	}
	worker_ctx->cpuset = cpuset;
	worker_ctx->has_cpuset = 1;
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_worker_set_gid(struct doca_urom_worker *worker_ctx, uint32_t gid)
{
	doca_error_t status = worker_check_setter(worker_ctx, "setting the group id");

	if (status != DOCA_SUCCESS)
		return status;
	worker_ctx->gid = gid;
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_worker_set_max_inflight_tasks(struct doca_urom_worker *worker_ctx,
						     uint32_t max_tasks)
{
	doca_error_t status = worker_check_setter(worker_ctx, "setting the in-flight limit");

	if (status != DOCA_SUCCESS)
		return status;
	if (max_tasks == 0 || (max_tasks & (max_tasks - 1)) != 0) {
		sdp_error("maximum in-flight tasks %u is not a power of two", max_tasks);
		return DOCA_ERROR_INVALID_VALUE;
	}
	worker_ctx->max_inflight = max_tasks;
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_worker_set_env(struct doca_urom_worker *worker_ctx, char *const env[],
				      size_t count)
{
	doca_error_t status = worker_check_setter(worker_ctx, "setting the environment");
	char **copy;
	size_t i;

	if (status != DOCA_SUCCESS)
		return status;
	if (count > SDP_UROM_MAX_ENV || (count > 0 && env == NULL)) {
		sdp_error("invalid environment: env %p, count %zu (at most %u)", (void *)env, count,
			  SDP_UROM_MAX_ENV);
		return DOCA_ERROR_INVALID_VALUE;
	}
	for (i = 0; i < count; i++) {
		const char *eq;

		if (env[i] == NULL) {
			sdp_error("environment entry %zu is NULL", i);
			return DOCA_ERROR_INVALID_VALUE;
		}
		eq = strchr(env[i], '=');
		if (eq == NULL || eq == env[i]) {
			sdp_error("environment entry %zu \"%s\" is not name=value", i, env[i]);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (strpbrk(env[i], " \t\n\r") != NULL) {
			sdp_error("environment entry %zu \"%s\" contains a space", i, env[i]);
			return DOCA_ERROR_INVALID_VALUE;
		}
	}
	copy = calloc(count ? count : 1, sizeof(*copy));
	if (copy == NULL) {
		sdp_error("failed to allocate %zu environment entries", count);
		return DOCA_ERROR_NO_MEMORY;
	}
	for (i = 0; i < count; i++) {
		copy[i] = strdup(env[i]);
		if (copy[i] == NULL) {
			sdp_error("failed to copy environment entry %zu", i);
			while (i-- > 0)
				free(copy[i]);
			free(copy);
			return DOCA_ERROR_NO_MEMORY;
		}
	}
	worker_free_env(worker_ctx);
	worker_ctx->env = copy;
	worker_ctx->num_env = count;
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_worker_get_id(struct doca_urom_worker *worker_ctx, uint64_t *worker_id)
{
	if (worker_ctx == NULL || worker_id == NULL) {
		sdp_error("invalid argument: worker_ctx %p, worker_id %p", (void *)worker_ctx,
			  (void *)worker_id);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*worker_id = worker_ctx->id;
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_worker_get_gid(struct doca_urom_worker *worker_ctx, uint32_t *worker_gid)
{
	if (worker_ctx == NULL || worker_gid == NULL) {
		sdp_error("invalid argument: worker_ctx %p, worker_gid %p", (void *)worker_ctx,
			  (void *)worker_gid);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*worker_gid = worker_ctx->gid;
	return DOCA_SUCCESS;
}

struct doca_ctx *doca_urom_worker_as_ctx(struct doca_urom_worker *worker_ctx)
{
	if (worker_ctx == NULL) {
		sdp_error("NULL worker_ctx");
		return NULL;
	}
	return &worker_ctx->ctx;
}

doca_error_t sdp_urom_worker_get_pid(struct doca_urom_worker *worker_ctx, uint32_t *pid)
{
	if (worker_ctx == NULL || pid == NULL) {
		sdp_error("invalid argument: worker_ctx %p, pid %p", (void *)worker_ctx,
			  (void *)pid);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (worker_ctx->ctx.state != DOCA_CTX_STATE_RUNNING) {
		sdp_error("worker %p: no worker process while the context is %s",
			  (void *)worker_ctx, sdp_ctx_state_name(worker_ctx->ctx.state));
		return DOCA_ERROR_BAD_STATE;
	}
	*pid = worker_ctx->pid;
	return DOCA_SUCCESS;
}
