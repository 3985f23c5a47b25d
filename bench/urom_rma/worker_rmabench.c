/*
 * worker_rmabench plugin (rmabench.h): worker-executed puts and gets into host memory, timed
 * inside the worker. Uses plugins/common/sdp_plugin_mem for the import of the target segment
 * and for every (range-checked) transfer, and exports softdpu_plugin_wakeup_fd / _arm so the
 * worker loop sleeps on the plugin's UCP worker instead of polling it.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ucp/api/ucp.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_urom_plugin.h>

#include "rmabench.h"
#include "sdp_plugin_mem.h"
#include "sdp_plugin_util.h"
#include "softdpu/urom_plugin.h"

DOCA_LOG_REGISTER(UROM::WORKER::RMABENCH);

/* sdp_plugin_mem_progress() calls per progress op, at most (the runtime loop gets its turn). */
#define RB_PROGRESS_ROUNDS 256

/* One measurement in progress. */
struct run {
	struct urom_worker_cmd_desc *cd; /* answered when the run ends */
	struct rmabench_cmd c;
	uint64_t region;
	uint8_t *buf;
	uint64_t issued, completed;
	uint64_t t0;
	int flushing;
	doca_error_t status;
};

struct rb {
	ucp_context_h context;
	ucp_worker_h worker;
	struct sdp_plugin_mem *mem;
	ucs_list_link_t done; /* notifications for progress */
	struct run *run;      /* at most one at a time */
	struct urom_worker_ctx *ctx;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static doca_error_t rb_open(struct urom_worker_ctx *ctx)
{
	ucp_worker_params_t wp = {0};
	ucp_params_t params = {0};
	struct rb *rb = calloc(1, sizeof(*rb));

	if (rb == NULL)
		return DOCA_ERROR_NO_MEMORY;
	params.field_mask = UCP_PARAM_FIELD_FEATURES;
	params.features = UCP_FEATURE_RMA;
	sdp_plugin_mem_ucp_params(&params);
	if (ucp_init(&params, NULL, &rb->context) != UCS_OK)
		goto fail;
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SINGLE;
	if (ucp_worker_create(rb->context, &wp, &rb->worker) != UCS_OK)
		goto fail;
	if (sdp_plugin_mem_create(rb->worker, &rb->mem) != DOCA_SUCCESS)
		goto fail;
	ucs_list_head_init(&rb->done);
	rb->ctx = ctx;
	ctx->plugin_ctx = rb;
	return DOCA_SUCCESS;
fail:
	DOCA_LOG_ERR("cannot create the plugin's UCP context and worker");
	if (rb->worker != NULL)
		ucp_worker_destroy(rb->worker);
	if (rb->context != NULL)
		ucp_cleanup(rb->context);
	free(rb);
	return DOCA_ERROR_DRIVER;
}

static void rb_close(struct urom_worker_ctx *ctx)
{
	struct rb *rb = ctx->plugin_ctx;

	if (rb == NULL)
		return;
	sdp_plugin_mem_destroy(rb->mem);
	if (rb->run != NULL) {
		free(rb->run->buf);
		free(rb->run->cd);
		free(rb->run);
	}
	while (!ucs_list_is_empty(&rb->done))
		free(ucs_list_extract_head(&rb->done, struct urom_worker_notif_desc, entry));
	ucp_worker_destroy(rb->worker);
	ucp_cleanup(rb->context);
	free(rb);
	ctx->plugin_ctx = NULL;
}

static doca_error_t rb_addr(struct urom_worker_ctx *ctx, void *addr, size_t *addr_len)
{
	(void)ctx;
	/* No peer ever connects to this plugin: a token address. */
	if (addr == NULL || *addr_len < 8) {
		*addr_len = 8;
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(addr, "rmabench", 8);
	*addr_len = 8;
	return DOCA_SUCCESS;
}

static void notify(struct rb *rb, const struct urom_worker_cmd_desc *cd,
		   const struct rmabench_notify *n)
{
	struct urom_worker_notif_desc *nd = calloc(1, sizeof(*nd) + sizeof(*n));

	if (nd == NULL) {
		DOCA_LOG_ERR("no memory for a notification");
		return;
	}
	nd->dest_id = cd->dest_id;
	nd->worker_notif.type = cd->worker_cmd.type;
	nd->worker_notif.urom_context = cd->worker_cmd.urom_context;
	nd->worker_notif.status = (doca_error_t)n->status;
	nd->worker_notif.len = sizeof(*n);
	memcpy(nd->worker_notif.plugin_notif, n, sizeof(*n));
	ucs_list_add_tail(&rb->done, &nd->entry);
}

static void run_end(struct rb *rb)
{
	struct run *r = rb->run;
	struct rmabench_notify n = {.op = r->c.op, .status = r->status, .done = r->completed};
	uint64_t i;

	n.ns = now_ns() - r->t0;
	if (r->status == DOCA_SUCCESS && r->c.op == RMABENCH_GET)
		for (i = 0; i < r->c.size; i++)
			n.bad += r->buf[i] != rmabench_byte(r->c.seed, i);
	notify(rb, r->cd, &n);
	free(r->cd);
	free(r->buf);
	free(r);
	rb->run = NULL;
}

static void op_done(void *arg, doca_error_t status);

/* Issue operations up to the window; the flush once all are issued and completed. */
static void run_pump(struct rb *rb)
{
	struct run *r = rb->run;
	doca_error_t st;

	while (r != NULL && r->status == DOCA_SUCCESS && r->issued < r->c.iters &&
	       r->issued - r->completed < r->c.window) {
		st = r->c.op == RMABENCH_PUT ?
			     sdp_plugin_mem_put_nb(rb->mem, r->region, r->c.va, r->buf, r->c.size,
						   op_done, rb) :
			     sdp_plugin_mem_get_nb(rb->mem, r->region, r->c.va, r->buf, r->c.size,
						   op_done, rb);
		if (st != DOCA_SUCCESS) {
			r->status = st;
			break;
		}
		r->issued++;
	}
	if (r != NULL && r->completed == r->issued &&
	    (r->status != DOCA_SUCCESS || r->issued == r->c.iters) && !r->flushing) {
		if (r->status != DOCA_SUCCESS) {
			run_end(rb);
			return;
		}
		r->flushing = 1;
		st = sdp_plugin_mem_flush_nb(rb->mem, r->region, op_done, rb);
		if (st != DOCA_SUCCESS) {
			r->status = st;
			run_end(rb);
		}
	}
}

static void op_done(void *arg, doca_error_t status)
{
	struct rb *rb = arg;
	struct run *r = rb->run;

	if (r == NULL)
		return;
	if (status != DOCA_SUCCESS && r->status == DOCA_SUCCESS)
		r->status = status;
	if (r->flushing) {
		run_end(rb);
		return;
	}
	r->completed++;
	run_pump(rb);
}

static void rb_one(struct rb *rb, struct urom_worker_cmd_desc *cd)
{
	struct rmabench_notify n = {0};
	struct run *r;
	uint64_t i;

	if (cd->worker_cmd.len != sizeof(struct rmabench_cmd)) {
		n.status = DOCA_ERROR_INVALID_VALUE;
		goto refuse;
	}
	if (rb->run != NULL) {
		n.status = DOCA_ERROR_IN_USE;
		goto refuse;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		n.status = DOCA_ERROR_NO_MEMORY;
		goto refuse;
	}
	memcpy(&r->c, cd->worker_cmd.plugin_cmd, sizeof(r->c));
	n.op = r->c.op;
	if (r->c.size == 0 || r->c.size > (1u << 30) || r->c.iters == 0 || r->c.window == 0 ||
	    r->c.op > RMABENCH_GET) {
		free(r);
		n.status = DOCA_ERROR_INVALID_VALUE;
		goto refuse;
	}
	r->buf = malloc(r->c.size);
	n.status = r->buf == NULL ? DOCA_ERROR_NO_MEMORY :
				    sdp_plugin_mem_import_domain(rb->mem, rb->ctx, r->c.dest,
								 r->c.va, &r->region);
	if (n.status == DOCA_SUCCESS)
		n.status = sdp_plugin_mem_check(rb->mem, r->region, r->c.va, r->c.size);
	if (n.status != DOCA_SUCCESS) {
		free(r->buf);
		free(r);
		goto refuse;
	}
	for (i = 0; i < r->c.size; i++)
		r->buf[i] = r->c.op == RMABENCH_PUT ? rmabench_byte(r->c.seed, i) : 0;
	r->cd = cd;
	r->t0 = now_ns();
	rb->run = r;
	run_pump(rb);
	return;
refuse:
	notify(rb, cd, &n);
	free(cd);
}

static doca_error_t rb_worker_cmd(struct urom_worker_ctx *ctx, ucs_list_link_t *cmd_list)
{
	while (!ucs_list_is_empty(cmd_list))
		rb_one(ctx->plugin_ctx,
		       ucs_list_extract_head(cmd_list, struct urom_worker_cmd_desc, entry));
	return DOCA_SUCCESS;
}

static doca_error_t rb_progress(struct urom_worker_ctx *ctx, ucs_list_link_t *notif_list)
{
	struct rb *rb = ctx->plugin_ctx;
	int round;

	/*
	 * UCX progress and the transfers' callbacks (they issue the next ones), bounded: the
	 * runtime's loop must get its turn (other plugins, host messages) during a long run; the
	 * arm op answers AGAIN while a run is active, so the loop comes back here at once.
	 */
	for (round = 0; round < RB_PROGRESS_ROUNDS; round++)
		if (sdp_plugin_mem_progress(rb->mem) == 0)
			break;
	return sdp_plugin_take_done(&rb->done, notif_list);
}

__attribute__((visibility("default"))) doca_error_t
softdpu_plugin_wakeup_fd(struct urom_worker_ctx *ctx, int *fd)
{
	struct rb *rb = ctx->plugin_ctx;

	return sdp_plugin_ucp_wakeup_fd(rb->worker, fd);
}

__attribute__((visibility("default"))) doca_error_t softdpu_plugin_arm(struct urom_worker_ctx *ctx)
{
	struct rb *rb = ctx->plugin_ctx;

	/* A run in flight is not idle: keep the loop polling until it ends. */
	if (rb->run != NULL)
		return DOCA_ERROR_AGAIN;
	return sdp_plugin_ucp_arm(rb->worker);
}

__attribute__((visibility("default"))) doca_error_t
urom_plugin_get_iface(struct urom_plugin_iface *iface)
{
	struct urom_plugin_iface ops = {
		.open = rb_open,
		.close = rb_close,
		.addr = rb_addr,
		.worker_cmd = rb_worker_cmd,
		.progress = rb_progress,
		.notif_pack = sdp_plugin_notif_copy,
	};

	if (iface == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	DOCA_STRUCT_CTOR(ops);
	*iface = ops;
	return DOCA_SUCCESS;
}

__attribute__((visibility("default"))) doca_error_t urom_plugin_get_version(uint64_t *version)
{
	if (version == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*version = 1;
	return DOCA_SUCCESS;
}
