/*
 * softdpu: the UCX layer of UROM (see sdp_ucx.h).
 *
 * Everything UCX reports through callbacks inside ucp_worker_progress() (a received message, a
 * finished rendezvous receive, an endpoint error) is queued here and handed to the caller's
 * callbacks only after ucp_worker_progress() has returned, from sdp_ucx_worker_progress(). So
 * the caller's callbacks may do anything (send, close endpoints, even wait) except finalise the
 * worker they run on.
 *
 * Memory ownership: a send copies the message into one allocation that lives until UCX reports
 * completion; a received message is copied (eager) or received into a malloc'd buffer
 * (rendezvous) and freed after delivery. Every endpoint this layer creates has a record (its
 * error callback); sdp_ucx_ep_close() and sdp_ucx_worker_fini() release them.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_ucx.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sdp_list.h"
#include "sdp_log.h"
#include "sdp_ucx_am.h"
#include "sdp_urom_proto.h"

SDP_LOG_COMPONENT("urom_ucx");

/* Longest single sleep on the wakeup fd: UCX also has timer-driven work (keepalive). */
#define SDP_UCX_POLL_SLICE_MS 100
/* Bound of each teardown step in sdp_ucx_worker_fini(). */
#define SDP_UCX_FINI_TIMEOUT_MS 1000

/* A received message waiting for delivery. */
struct sdp_ucx_rx {
	sdp_list_link_t link;
	ucp_ep_h reply_ep;
	size_t len;
	uint8_t *data; /* inline_data, or a separate rendezvous buffer */
	uint8_t inline_data[];
};

/* A rendezvous receive in flight. */
struct sdp_ucx_rndv {
	sdp_list_link_t link;
	struct sdp_ucx_worker *w;
	ucp_ep_h reply_ep;
	void *req;
	size_t len;
	uint8_t *buf;
};

/* A send in flight: the copy of the message lives here until UCX is done with it. */
struct sdp_ucx_send_req {
	sdp_list_link_t link;
	struct sdp_ucx_worker *w;
	void *req;
	size_t len;
	uint8_t data[];
};

/* An endpoint this layer created. */
struct sdp_ucx_ep_rec {
	sdp_list_link_t link;
	sdp_list_link_t err_link; /* in priv->ep_errs while an error waits for delivery */
	struct sdp_ucx_worker *w;
	ucp_ep_h ep;
	sdp_ucx_ep_error_func_t err_cb;
	void *err_arg;
	ucs_status_t err_status; /* UCS_OK until UCX reports a failure */
	int err_queued;
	int closing; /* a graceful close outlived its bound: UCX still owns the endpoint */
};

struct ucx_priv {
	sdp_list_link_t rx;	 /* struct sdp_ucx_rx, in arrival order */
	sdp_list_link_t rndv;	 /* struct sdp_ucx_rndv */
	sdp_list_link_t sends;	 /* struct sdp_ucx_send_req */
	sdp_list_link_t eps;	 /* struct sdp_ucx_ep_rec */
	sdp_list_link_t ep_errs; /* struct sdp_ucx_ep_rec, via err_link */
};

static struct ucx_priv *ucx_priv(struct sdp_ucx_worker *w)
{
	return w->priv;
}

static int64_t ucx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static doca_error_t ucx_status_to_doca(ucs_status_t status)
{
	switch (status) {
	case UCS_OK:
		return DOCA_SUCCESS;
	case UCS_ERR_NO_MEMORY:
		return DOCA_ERROR_NO_MEMORY;
	case UCS_ERR_INVALID_PARAM:
	case UCS_ERR_INVALID_ADDR:
		return DOCA_ERROR_INVALID_VALUE;
	case UCS_ERR_UNREACHABLE:
	case UCS_ERR_CONNECTION_RESET:
	case UCS_ERR_NOT_CONNECTED:
	case UCS_ERR_REJECTED:
		return DOCA_ERROR_NOT_CONNECTED;
	case UCS_ERR_BUSY:
		return DOCA_ERROR_IN_USE;
	case UCS_ERR_TIMED_OUT:
	case UCS_ERR_ENDPOINT_TIMEOUT:
		return DOCA_ERROR_TIME_OUT;
	case UCS_ERR_NO_DEVICE:
	case UCS_ERR_UNSUPPORTED:
		return DOCA_ERROR_NOT_SUPPORTED;
	default:
		return DOCA_ERROR_IO_FAILED;
	}
}

/* ---- context ---- */

doca_error_t sdp_ucx_context_create(const char *net_devices, ucp_context_h *context_p)
{
	ucp_params_t params;
	ucp_config_t *config;
	ucp_context_h context;
	ucs_status_t status;
	doca_error_t ret;

	if (context_p == NULL) {
		sdp_error("invalid argument: context_p is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = ucp_config_read(NULL, NULL, &config);
	if (status != UCS_OK) {
		sdp_error("ucp_config_read failed: %s", ucs_status_string(status));
		return ucx_status_to_doca(status);
	}
	if (net_devices != NULL && net_devices[0] != '\0' && getenv("UCX_NET_DEVICES") == NULL) {
		status = ucp_config_modify(config, "NET_DEVICES", net_devices);
		if (status != UCS_OK) {
			sdp_error("cannot set UCX NET_DEVICES to \"%s\": %s", net_devices,
				  ucs_status_string(status));
			ret = DOCA_ERROR_INVALID_VALUE;
			goto err_release_config;
		}
		sdp_debug("UCX NET_DEVICES pinned to %s", net_devices);
	}
	memset(&params, 0, sizeof(params));
	params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
	params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
	/* Workers of one context may live on different threads (one per worker context). */
	params.mt_workers_shared = 1;
	status = ucp_init(&params, config, &context);
	if (status != UCS_OK) {
		sdp_error("ucp_init failed (NET_DEVICES %s): %s",
			  net_devices != NULL ? net_devices : "(default)",
			  ucs_status_string(status));
		ret = ucx_status_to_doca(status);
		goto err_release_config;
	}
	ucp_config_release(config);
	*context_p = context;
	return DOCA_SUCCESS;

err_release_config:
	ucp_config_release(config);
	return ret;
}

void sdp_ucx_context_destroy(ucp_context_h context)
{
	if (context != NULL)
		ucp_cleanup(context);
}

/* ---- receive path ---- */

static void ucx_rx_free(struct sdp_ucx_rx *rx)
{
	if (rx->data != rx->inline_data)
		free(rx->data);
	free(rx);
}

static void ucx_rndv_done(void *request, ucs_status_t status, size_t length, void *user_data)
{
	struct sdp_ucx_rndv *rndv = user_data;
	struct sdp_ucx_rx *rx;

	sdp_list_del(&rndv->link);
	if (status != UCS_OK) {
		if (status != UCS_ERR_CANCELED)
			sdp_error("rendezvous receive of %zu bytes failed: %s", rndv->len,
				  ucs_status_string(status));
		free(rndv->buf);
		goto out;
	}
	rx = malloc(sizeof(*rx));
	if (rx == NULL) {
		sdp_error("dropping a %zu-byte message: out of memory", length);
		free(rndv->buf);
		goto out;
	}
	rx->reply_ep = rndv->reply_ep;
	rx->len = length;
	rx->data = rndv->buf;
	sdp_list_add_tail(&ucx_priv(rndv->w)->rx, &rx->link);
out:
	free(rndv);
	ucp_request_free(request);
}

static ucs_status_t ucx_am_cb(void *arg, const void *header, size_t header_length, void *data,
			      size_t length, const ucp_am_recv_param_t *param)
{
	struct sdp_ucx_worker *w = arg;
	struct ucx_priv *priv = ucx_priv(w);
	ucp_ep_h reply_ep = NULL;
	ucp_request_param_t rparam;
	struct sdp_ucx_rndv *rndv;
	struct sdp_ucx_rx *rx;
	ucs_status_ptr_t req;

	(void)header;
	(void)header_length;
	if (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP)
		reply_ep = param->reply_ep;
	if (length > w->max_recv) {
		/* Before any allocation: the sender is not trusted yet. */
		sdp_warn("dropping a %zu-byte message: longer than the %zu bytes this worker "
			 "accepts",
			 length, w->max_recv);
		/* Rendezvous: returning without starting the receive tells UCX the data is not
		 * wanted; it completes the sender and frees the descriptor itself. */
		return UCS_OK;
	}

	if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
		rx = malloc(sizeof(*rx) + length);
		if (rx == NULL) {
			sdp_error("dropping a %zu-byte message: out of memory", length);
			return UCS_OK;
		}
		rx->reply_ep = reply_ep;
		rx->len = length;
		rx->data = rx->inline_data;
		if (length > 0)
			memcpy(rx->inline_data, data, length);
		sdp_list_add_tail(&priv->rx, &rx->link);
		return UCS_OK;
	}

	/* Rendezvous: fetch the data into our own buffer, deliver when it has arrived. */
	rndv = calloc(1, sizeof(*rndv));
	if (rndv == NULL) {
		sdp_error("refusing a %zu-byte rendezvous message: out of memory", length);
		return UCS_ERR_NO_MEMORY;
	}
	rndv->buf = malloc(length > 0 ? length : 1);
	if (rndv->buf == NULL) {
		sdp_error("refusing a %zu-byte rendezvous message: out of memory", length);
		free(rndv);
		return UCS_ERR_NO_MEMORY;
	}
	rndv->w = w;
	rndv->reply_ep = reply_ep;
	rndv->len = length;
	sdp_trace("rendezvous receive of %zu bytes", length);
	memset(&rparam, 0, sizeof(rparam));
	rparam.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	rparam.cb.recv_am = ucx_rndv_done;
	rparam.user_data = rndv;
	/* Linked before the call: the completion callback unlinks it. */
	sdp_list_add_tail(&priv->rndv, &rndv->link);
	req = ucp_am_recv_data_nbx(w->worker, data, rndv->buf, length, &rparam);
	if (UCS_PTR_IS_ERR(req)) {
		sdp_list_del(&rndv->link);
		sdp_error("ucp_am_recv_data_nbx of %zu bytes failed: %s", length,
			  ucs_status_string(UCS_PTR_STATUS(req)));
		free(rndv->buf);
		free(rndv);
		return UCS_OK;
	}
	if (req == NULL) {
		/* Completed at once, no callback. */
		sdp_list_del(&rndv->link);
		rx = malloc(sizeof(*rx));
		if (rx == NULL) {
			sdp_error("dropping a %zu-byte message: out of memory", length);
			free(rndv->buf);
		} else {
			rx->reply_ep = reply_ep;
			rx->len = length;
			rx->data = rndv->buf;
			sdp_list_add_tail(&priv->rx, &rx->link);
		}
		free(rndv);
		return UCS_OK;
	}
	rndv->req = req;
	return UCS_OK;
}

/* ---- worker ---- */

doca_error_t sdp_ucx_worker_init(struct sdp_ucx_worker *w, ucp_context_h context,
				 ucs_thread_mode_t mode, sdp_ucx_recv_func_t recv_cb,
				 void *recv_arg)
{
	ucp_worker_params_t wparams;
	struct ucx_priv *priv;
	ucp_worker_h worker;
	ucs_status_t status;
	doca_error_t ret;
	int efd;

	if (w == NULL || context == NULL || recv_cb == NULL) {
		sdp_error("invalid argument: w %p, context %p, recv_cb %s", (void *)w,
			  (void *)context, recv_cb != NULL ? "set" : "NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	priv = calloc(1, sizeof(*priv));
	if (priv == NULL) {
		sdp_error("failed to allocate %zu bytes of worker state", sizeof(*priv));
		return DOCA_ERROR_NO_MEMORY;
	}
	sdp_list_head_init(&priv->rx);
	sdp_list_head_init(&priv->rndv);
	sdp_list_head_init(&priv->sends);
	sdp_list_head_init(&priv->eps);
	sdp_list_head_init(&priv->ep_errs);

	memset(&wparams, 0, sizeof(wparams));
	wparams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wparams.thread_mode = mode;
	status = ucp_worker_create(context, &wparams, &worker);
	if (status != UCS_OK) {
		sdp_error("ucp_worker_create failed: %s", ucs_status_string(status));
		ret = ucx_status_to_doca(status);
		goto err_free_priv;
	}
	status = ucp_worker_get_efd(worker, &efd);
	if (status != UCS_OK) {
		sdp_error("ucp_worker_get_efd failed: %s", ucs_status_string(status));
		ret = ucx_status_to_doca(status);
		goto err_destroy_worker;
	}

	/* The handler's arg is w itself: set the fields it reads before registering. */
	w->context = context;
	w->worker = worker;
	w->efd = efd;
	w->recv_cb = recv_cb;
	w->recv_arg = recv_arg;
	w->max_recv = SDP_UCX_MAX_RECV_DEFAULT;
	w->priv = priv;

	status = sdp_ucx_am_handler(worker, SDP_UROM_AM_ID, ucx_am_cb, w);
	if (status != UCS_OK) {
		sdp_error("ucp_worker_set_am_recv_handler failed: %s", ucs_status_string(status));
		ret = ucx_status_to_doca(status);
		goto err_clear_w;
	}
	sdp_debug("UCP worker %p created (efd %d)", (void *)worker, efd);
	return DOCA_SUCCESS;

err_clear_w:
	memset(w, 0, sizeof(*w));
	w->efd = -1;
err_destroy_worker:
	ucp_worker_destroy(worker);
err_free_priv:
	free(priv);
	return ret;
}

/* Wait until req completes or deadline passes; progress only UCX (no deliveries). */
static ucs_status_t ucx_req_wait(struct sdp_ucx_worker *w, void *req, int64_t deadline)
{
	ucs_status_t status;
	struct pollfd pfd;
	int64_t left;

	for (;;) {
		status = ucp_request_check_status(req);
		if (status != UCS_INPROGRESS)
			return status;
		if (ucp_worker_progress(w->worker) != 0)
			continue;
		left = deadline - ucx_now_ms();
		if (left <= 0)
			return UCS_INPROGRESS;
		if (ucp_worker_arm(w->worker) != UCS_OK)
			continue;
		pfd.fd = w->efd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		(void)poll(&pfd, 1,
			   (int)(left < SDP_UCX_POLL_SLICE_MS ? left : SDP_UCX_POLL_SLICE_MS));
	}
}

/* Progress UCX (no deliveries) until cond(w) holds or the deadline passes. */
static void ucx_progress_until(struct sdp_ucx_worker *w, int (*cond)(struct sdp_ucx_worker *),
			       int64_t deadline)
{
	struct pollfd pfd;
	int64_t left;

	while (!cond(w)) {
		if (ucp_worker_progress(w->worker) != 0)
			continue;
		left = deadline - ucx_now_ms();
		if (left <= 0)
			return;
		if (ucp_worker_arm(w->worker) != UCS_OK)
			continue;
		pfd.fd = w->efd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		(void)poll(&pfd, 1,
			   (int)(left < SDP_UCX_POLL_SLICE_MS ? left : SDP_UCX_POLL_SLICE_MS));
	}
}

static int ucx_no_requests(struct sdp_ucx_worker *w)
{
	struct ucx_priv *priv = ucx_priv(w);

	return sdp_list_is_empty(&priv->sends) && sdp_list_is_empty(&priv->rndv);
}

/* Forget everything queued for an endpoint that is going away. */
static void ucx_drop_ep_events(struct sdp_ucx_worker *w, ucp_ep_h ep)
{
	struct ucx_priv *priv = ucx_priv(w);
	struct sdp_ucx_rx *rx, *rx_tmp;
	struct sdp_ucx_rndv *rndv;

	sdp_list_for_each_safe(rx, rx_tmp, &priv->rx, link) {
		if (rx->reply_ep == ep) {
			sdp_list_del(&rx->link);
			ucx_rx_free(rx);
		}
	}
	sdp_list_for_each(rndv, &priv->rndv, link) {
		if (rndv->reply_ep == ep)
			rndv->reply_ep = NULL;
	}
}

static struct sdp_ucx_ep_rec *ucx_ep_find(struct sdp_ucx_worker *w, ucp_ep_h ep)
{
	struct sdp_ucx_ep_rec *rec;

	sdp_list_for_each(rec, &ucx_priv(w)->eps, link) {
		if (rec->ep == ep && !rec->closing)
			return rec;
	}
	return NULL;
}

static void ucx_ep_rec_free(struct sdp_ucx_ep_rec *rec)
{
	sdp_list_del(&rec->link);
	if (rec->err_queued)
		sdp_list_del(&rec->err_link);
	free(rec);
}

/*
 * Close ep: flush it within the bound, then close gracefully; if the flush fails or times out,
 * force-close it (local, outstanding operations complete as cancelled).
 */
static void ucx_ep_close_internal(struct sdp_ucx_worker *w, ucp_ep_h ep, int timeout_ms)
{
	struct sdp_ucx_ep_rec *rec = ucx_ep_find(w, ep);
	int64_t deadline = ucx_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	ucp_request_param_t param;
	ucs_status_ptr_t req;
	ucs_status_t status = UCS_OK;
	int force = rec != NULL && rec->err_status != UCS_OK;

	memset(&param, 0, sizeof(param));
	if (!force) {
		req = ucp_ep_flush_nbx(ep, &param);
		if (UCS_PTR_IS_ERR(req)) {
			status = UCS_PTR_STATUS(req);
		} else if (req != NULL) {
			status = ucx_req_wait(w, req, deadline);
			ucp_request_free(req);
		}
		if (status != UCS_OK) {
			sdp_debug("flush of endpoint %p: %s, closing it by force", (void *)ep,
				  ucs_status_string(status));
			force = 1;
		}
	}

	param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	param.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
	req = ucp_ep_close_nbx(ep, &param);
	if (UCS_PTR_IS_ERR(req)) {
		status = UCS_PTR_STATUS(req);
		sdp_debug("close of endpoint %p: %s", (void *)ep, ucs_status_string(status));
	} else if (req != NULL) {
		/* A forced close is local: give it a short grace even when the bound is spent. */
		int64_t min_deadline = ucx_now_ms() + (force ? 200 : 0);

		status = ucx_req_wait(w, req, deadline > min_deadline ? deadline : min_deadline);
		ucp_request_free(req);
		if (status == UCS_INPROGRESS) {
			/* UCX keeps closing it in the background; the record must outlive that. */
			sdp_warn("close of endpoint %p did not finish within %d ms", (void *)ep,
				 timeout_ms);
			ucx_drop_ep_events(w, ep);
			if (rec != NULL) {
				rec->closing = 1;
				if (rec->err_queued) {
					sdp_list_del(&rec->err_link);
					rec->err_queued = 0;
				}
			}
			return;
		}
	}
	ucx_drop_ep_events(w, ep);
	if (rec != NULL)
		ucx_ep_rec_free(rec);
}

void sdp_ucx_worker_fini(struct sdp_ucx_worker *w)
{
	struct sdp_ucx_ep_rec *rec, *rec_tmp;
	struct sdp_ucx_rndv *rndv;
	struct ucx_priv *priv;
	struct sdp_ucx_rx *rx;

	if (w == NULL || w->worker == NULL)
		return;
	priv = ucx_priv(w);

	/* Endpoints the caller left open: close them by force (local, quick). */
	sdp_list_for_each_safe(rec, rec_tmp, &priv->eps, link) {
		if (!rec->closing) {
			rec->err_status = UCS_ERR_CANCELED;
			ucx_ep_close_internal(w, rec->ep, 0);
		}
	}

	/* Sends complete (cancelled) with their endpoints; cancel receives still running. */
	sdp_list_for_each(rndv, &priv->rndv, link)
		ucp_request_cancel(w->worker, rndv->req);
	ucx_progress_until(w, ucx_no_requests, ucx_now_ms() + SDP_UCX_FINI_TIMEOUT_MS);
	if (!ucx_no_requests(w))
		sdp_warn("%zu sends and %zu receives still pending at worker teardown",
			 sdp_list_length(&priv->sends), sdp_list_length(&priv->rndv));

	while (!sdp_list_is_empty(&priv->rx)) {
		rx = sdp_container_of(priv->rx.next, struct sdp_ucx_rx, link);
		sdp_list_del(&rx->link);
		ucx_rx_free(rx);
	}
	ucp_worker_destroy(w->worker);
	/* Records of closes UCX finished (or dropped) inside ucp_worker_destroy. */
	sdp_list_for_each_safe(rec, rec_tmp, &priv->eps, link)
		ucx_ep_rec_free(rec);
	if (ucx_no_requests(w))
		free(priv);
	/* else: UCX may still reference the pending requests' memory; leak rather than crash. */
	sdp_debug("UCP worker %p destroyed", (void *)w->worker);
	memset(w, 0, sizeof(*w));
	w->efd = -1;
}

void sdp_ucx_worker_set_max_recv(struct sdp_ucx_worker *w, size_t max_recv)
{
	if (w != NULL)
		w->max_recv = max_recv;
}

/* Hand queued events to the caller's callbacks; returns how many. */
static int ucx_deliver(struct sdp_ucx_worker *w)
{
	struct ucx_priv *priv = ucx_priv(w);
	struct sdp_ucx_ep_rec *rec;
	struct sdp_ucx_rx *rx;
	int count = 0;
	int again = 1;

	while (again) {
		again = 0;
		if (!sdp_list_is_empty(&priv->rx)) {
			rx = sdp_container_of(priv->rx.next, struct sdp_ucx_rx, link);
			sdp_list_del(&rx->link);
			w->recv_cb(w->recv_arg, rx->reply_ep, rx->data, rx->len);
			ucx_rx_free(rx);
			count++;
			again = 1;
			continue;
		}
		if (!sdp_list_is_empty(&priv->ep_errs)) {
			rec = sdp_container_of(priv->ep_errs.next, struct sdp_ucx_ep_rec, err_link);
			sdp_list_del(&rec->err_link);
			rec->err_queued = 0;
			if (rec->err_cb != NULL)
				rec->err_cb(rec->err_arg, rec->ep, rec->err_status);
			count++;
			again = 1;
		}
	}
	return count;
}

int sdp_ucx_worker_progress(struct sdp_ucx_worker *w)
{
	int count;

	if (w == NULL || w->worker == NULL)
		return 0;
	count = (int)ucp_worker_progress(w->worker);
	return count + ucx_deliver(w);
}

static int ucx_has_events(struct sdp_ucx_worker *w)
{
	struct ucx_priv *priv = ucx_priv(w);

	return !sdp_list_is_empty(&priv->rx) || !sdp_list_is_empty(&priv->ep_errs);
}

doca_error_t sdp_ucx_worker_arm(struct sdp_ucx_worker *w)
{
	ucs_status_t status;

	if (w == NULL || w->worker == NULL) {
		sdp_error("invalid argument: worker %p is not initialised", (void *)w);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* Events queued here do not show on the fd: report them as pending. */
	if (ucx_has_events(w))
		return DOCA_ERROR_AGAIN;
	status = ucp_worker_arm(w->worker);
	if (status == UCS_OK)
		return DOCA_SUCCESS;
	if (status == UCS_ERR_BUSY)
		return DOCA_ERROR_AGAIN;
	sdp_error("ucp_worker_arm failed: %s", ucs_status_string(status));
	return ucx_status_to_doca(status);
}

doca_error_t sdp_ucx_worker_wait(struct sdp_ucx_worker *w, volatile int *flag, int timeout_ms)
{
	int64_t deadline, left;
	struct pollfd pfd;
	doca_error_t status;

	if (w == NULL || w->worker == NULL || flag == NULL || timeout_ms < 0) {
		sdp_error("invalid argument: w %p, flag %p, timeout %d ms", (void *)w, (void *)flag,
			  timeout_ms);
		return DOCA_ERROR_INVALID_VALUE;
	}
	deadline = ucx_now_ms() + timeout_ms;
	for (;;) {
		if (*flag)
			return DOCA_SUCCESS;
		if (sdp_ucx_worker_progress(w) != 0)
			continue;
		if (*flag)
			return DOCA_SUCCESS;
		left = deadline - ucx_now_ms();
		if (left <= 0)
			return DOCA_ERROR_TIME_OUT; /* not logged: the caller knows what it waited for */
		status = sdp_ucx_worker_arm(w);
		if (status == DOCA_ERROR_AGAIN)
			continue;
		if (status != DOCA_SUCCESS)
			return status;
		pfd.fd = w->efd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1,
			 (int)(left < SDP_UCX_POLL_SLICE_MS ? left : SDP_UCX_POLL_SLICE_MS)) < 0 &&
		    errno != EINTR) {
			sdp_error("poll on the UCP wakeup fd %d failed: %m", w->efd);
			return DOCA_ERROR_OPERATING_SYSTEM;
		}
	}
}

doca_error_t sdp_ucx_worker_address(struct sdp_ucx_worker *w, void **addr_p, size_t *len_p)
{
	ucp_address_t *addr;
	size_t len;
	ucs_status_t status;
	void *copy;

	if (w == NULL || w->worker == NULL || addr_p == NULL || len_p == NULL) {
		sdp_error("invalid argument: w %p, addr_p %p, len_p %p", (void *)w, (void *)addr_p,
			  (void *)len_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = ucp_worker_get_address(w->worker, &addr, &len);
	if (status != UCS_OK) {
		sdp_error("ucp_worker_get_address failed: %s", ucs_status_string(status));
		return ucx_status_to_doca(status);
	}
	copy = malloc(len);
	if (copy == NULL) {
		sdp_error("failed to allocate %zu bytes for a worker address", len);
		ucp_worker_release_address(w->worker, addr);
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(copy, addr, len);
	ucp_worker_release_address(w->worker, addr);
	*addr_p = copy;
	*len_p = len;
	return DOCA_SUCCESS;
}

/* ---- endpoints ---- */

static void ucx_ep_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
	struct sdp_ucx_ep_rec *rec = arg;

	sdp_debug("endpoint %p failed: %s", (void *)ep, ucs_status_string(status));
	if (rec->closing || rec->err_status != UCS_OK)
		return;
	rec->err_status = status;
	rec->err_queued = 1;
	sdp_list_add_tail(&ucx_priv(rec->w)->ep_errs, &rec->err_link);
}

/* Create an endpoint from params (which get the error handling fields); records it. */
static doca_error_t ucx_ep_create(struct sdp_ucx_worker *w, ucp_ep_params_t *params,
				  ucp_err_handling_mode_t err_mode, sdp_ucx_ep_error_func_t err_cb,
				  void *err_arg, const char *what, ucp_ep_h *ep_p)
{
	struct sdp_ucx_ep_rec *rec;
	ucs_status_t status;
	ucp_ep_h ep;

	rec = calloc(1, sizeof(*rec));
	if (rec == NULL) {
		sdp_error("failed to allocate an endpoint record");
		return DOCA_ERROR_NO_MEMORY;
	}
	rec->w = w;
	rec->err_cb = err_cb;
	rec->err_arg = err_arg;
	rec->err_status = UCS_OK;
	params->field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
	params->err_mode = err_mode;
	if (err_mode != UCP_ERR_HANDLING_MODE_NONE) {
		params->field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
		params->err_handler.cb = ucx_ep_err_cb;
		params->err_handler.arg = rec;
	}
	status = ucp_ep_create(w->worker, params, &ep);
	if (status != UCS_OK) {
		sdp_error("ucp_ep_create (%s) failed: %s", what, ucs_status_string(status));
		free(rec);
		return ucx_status_to_doca(status);
	}
	rec->ep = ep;
	sdp_list_add_tail(&ucx_priv(w)->eps, &rec->link);
	sdp_debug("endpoint %p created (%s, %s error handling)", (void *)ep, what,
		  err_mode == UCP_ERR_HANDLING_MODE_NONE ? "no" : "peer");
	*ep_p = ep;
	return DOCA_SUCCESS;
}

doca_error_t sdp_ucx_ep_connect_addr(struct sdp_ucx_worker *w, const void *addr, size_t len,
				     ucp_err_handling_mode_t err_mode,
				     sdp_ucx_ep_error_func_t err_cb, void *err_arg, ucp_ep_h *ep_p)
{
	ucp_ep_params_t params;

	if (w == NULL || w->worker == NULL || addr == NULL || len == 0 || ep_p == NULL ||
	    (err_mode != UCP_ERR_HANDLING_MODE_NONE && err_mode != UCP_ERR_HANDLING_MODE_PEER)) {
		sdp_error("invalid argument: w %p, addr %p, len %zu, err_mode %d, ep_p %p",
			  (void *)w, addr, len, (int)err_mode, (void *)ep_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memset(&params, 0, sizeof(params));
	params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
	params.address = addr;
	return ucx_ep_create(w, &params, err_mode, err_cb, err_arg, "worker address", ep_p);
}

/* ---- send ---- */

static void ucx_send_done(void *request, ucs_status_t status, void *user_data)
{
	struct sdp_ucx_send_req *sreq = user_data;

	if (status != UCS_OK && status != UCS_ERR_CANCELED)
		sdp_debug("send of %zu bytes failed: %s", sreq->len, ucs_status_string(status));
	sdp_list_del(&sreq->link);
	free(sreq);
	ucp_request_free(request);
}

doca_error_t sdp_ucx_send(struct sdp_ucx_worker *w, ucp_ep_h ep, const void *data, size_t len)
{
	struct sdp_ucx_send_req *sreq;
	ucp_request_param_t param;
	struct sdp_ucx_ep_rec *rec;
	ucs_status_ptr_t req;

	if (w == NULL || w->worker == NULL || ep == NULL || data == NULL || len == 0) {
		sdp_error("invalid argument: w %p, ep %p, data %p, len %zu", (void *)w, (void *)ep,
			  data, len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rec = ucx_ep_find(w, ep);
	if (rec != NULL && rec->err_status != UCS_OK) {
		sdp_error("cannot send %zu bytes on endpoint %p: it failed (%s)", len, (void *)ep,
			  ucs_status_string(rec->err_status));
		return DOCA_ERROR_NOT_CONNECTED;
	}
	/*
	 * Small messages usually go out at once (a shared-memory FIFO slot, a socket): try that
	 * from the caller's buffer first and copy only when UCX would have to keep the buffer.
	 */
	memset(&param, 0, sizeof(param));
	param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
	param.flags = UCP_AM_SEND_FLAG_REPLY;
	req = ucp_am_send_nbx(ep, SDP_UROM_AM_ID, NULL, 0, data, len, &param);
	if (req == NULL)
		return DOCA_SUCCESS;
	if (UCS_PTR_IS_ERR(req) && UCS_PTR_STATUS(req) != UCS_ERR_NO_RESOURCE) {
		sdp_error("ucp_am_send_nbx of %zu bytes on endpoint %p failed: %s", len, (void *)ep,
			  ucs_status_string(UCS_PTR_STATUS(req)));
		return DOCA_ERROR_IO_FAILED;
	}
	if (!UCS_PTR_IS_ERR(req)) {
		/* Not expected with FORCE_IMM_CMPL; the buffer is the caller's: wait it out. */
		ucs_status_t st = ucx_req_wait(w, req, ucx_now_ms() + 1000);

		if (st == UCS_INPROGRESS)
			ucp_request_cancel(w->worker, req);
		ucp_request_free(req);
		return st == UCS_OK ? DOCA_SUCCESS : DOCA_ERROR_IO_FAILED;
	}
	sreq = malloc(sizeof(*sreq) + len);
	if (sreq == NULL) {
		sdp_error("failed to allocate %zu bytes for a message copy", len);
		return DOCA_ERROR_NO_MEMORY;
	}
	sreq->w = w;
	sreq->req = NULL;
	sreq->len = len;
	memcpy(sreq->data, data, len);
	memset(&param, 0, sizeof(param));
	param.op_attr_mask =
		UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
	param.cb.send = ucx_send_done;
	param.user_data = sreq;
	param.flags = UCP_AM_SEND_FLAG_REPLY;
	sdp_list_add_tail(&ucx_priv(w)->sends, &sreq->link);
	req = ucp_am_send_nbx(ep, SDP_UROM_AM_ID, NULL, 0, sreq->data, len, &param);
	if (req == NULL) {
		sdp_list_del(&sreq->link);
		free(sreq);
		return DOCA_SUCCESS;
	}
	if (UCS_PTR_IS_ERR(req)) {
		sdp_list_del(&sreq->link);
		free(sreq);
		sdp_error("ucp_am_send_nbx of %zu bytes on endpoint %p failed: %s", len, (void *)ep,
			  ucs_status_string(UCS_PTR_STATUS(req)));
		return DOCA_ERROR_IO_FAILED;
	}
	sreq->req = req;
	return DOCA_SUCCESS;
}

void sdp_ucx_ep_close(struct sdp_ucx_worker *w, ucp_ep_h ep, int timeout_ms)
{
	if (w == NULL || w->worker == NULL || ep == NULL)
		return;
	ucx_ep_close_internal(w, ep, timeout_ms);
}
