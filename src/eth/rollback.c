/*
 * libdoca_eth: the GPUNetIO rollback (include/softdpu/gpunetio_rollback.h). Here rather than in
 * libdoca_gpunetio because it stops and destroys Ethernet queues (libdoca_eth already depends on
 * libdoca_gpunetio, not the other way round); the drain polls the kernel's stream through the
 * GPU handle's CUDA driver table (src/gpunetio/sdp_cuda.h), in the handle's context.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "doca_buf_array.h"
#include "doca_ctx.h"
#include "doca_eth_rxq.h"
#include "doca_eth_txq.h"
#include "doca_gpunetio.h"
#include "doca_mmap.h"
#include "sdp_gpu.h"
#include "sdp_log.h"
#include "softdpu/gpunetio_rollback.h"

SDP_LOG_COMPONENT("gpu_rollback");

#define DRAIN_POLL_NS 1000000L	 /* cuStreamQuery every millisecond */
#define DEADLINE_MAX_MS 3600000u /* an hour */
#define CTX_STOP_WAIT_S 5.0	 /* a GPU queue that answers IN_PROGRESS to stop */

enum reg_kind {
	REG_BUF_ARR,
	REG_MMAP
};

struct rb_reg {
	enum reg_kind kind;
	void *obj;
	int done;
};

struct rb_ctx {
	struct doca_eth_rxq *rxq; /* one of the two */
	struct doca_eth_txq *txq;
	int stopped, done;
};

struct sdp_gpu_rollback {
	struct doca_gpu *gpu;
	uint32_t *flag;
	uint32_t stop_value;
	void *stream;
	uint32_t deadline_ms;
	struct rb_reg regs[2 * SDP_GPU_ROLLBACK_MAX];
	uint32_t nb_regs, nb_arr, nb_mmap;
	struct rb_ctx ctxs[2 * SDP_GPU_ROLLBACK_MAX];
	uint32_t nb_rxq, nb_txq, nb_ctxs;
	void *mem[SDP_GPU_ROLLBACK_MAX];
	int mem_done[SDP_GPU_ROLLBACK_MAX];
	uint32_t nb_mem;
	sdp_gpu_rollback_measure_cb measure;
	void *user;
	void (*before_stop)(void *user);
	void *before_user;
	int before_done;
	struct sdp_gpu_rollback_report rep; /* carried from run to run */
	int have_baseline;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void rep_init(struct sdp_gpu_rollback_report *r)
{
	memset(r, 0, sizeof(*r));
	r->failed_step = SDP_GPU_ROLLBACK_NB_STEPS;
	r->tolerance = SDP_GPU_ROLLBACK_DEFAULT_TOLERANCE;
	r->baseline_pps = -1;
	r->reverify_pps[0] = -1;
	r->reverify_pps[1] = -1;
}

doca_error_t sdp_gpu_rollback_create(struct doca_gpu *gpu, struct sdp_gpu_rollback **rb)
{
	struct sdp_gpu_rollback *p;

	if (rb == NULL) {
		sdp_error("rollback_create: NULL output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		sdp_error("rollback_create: out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	p->gpu = gpu;
	rep_init(&p->rep);
	*rb = p;
	return DOCA_SUCCESS;
}

void sdp_gpu_rollback_destroy(struct sdp_gpu_rollback *rb)
{
	free(rb);
}

doca_error_t sdp_gpu_rollback_set_kernel(struct sdp_gpu_rollback *rb, uint32_t *stop_flag_cpu,
					 uint32_t stop_value, void *stream, uint32_t deadline_ms)
{
	if (rb == NULL || stop_flag_cpu == NULL || stream == NULL) {
		sdp_error("rollback_set_kernel: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (rb->gpu == NULL) {
		sdp_error("rollback_set_kernel: the plan has no GPU");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (deadline_ms == 0 || deadline_ms > DEADLINE_MAX_MS) {
		sdp_error("rollback_set_kernel: deadline %u ms outside 1..%u", deadline_ms,
			  DEADLINE_MAX_MS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rb->flag = stop_flag_cpu;
	rb->stop_value = stop_value;
	rb->stream = stream;
	rb->deadline_ms = deadline_ms;
	return DOCA_SUCCESS;
}

static doca_error_t check_add(struct sdp_gpu_rollback *rb, const void *obj, uint32_t n,
			      const char *what)
{
	if (rb == NULL || obj == NULL) {
		sdp_error("rollback_add_%s: NULL argument", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (rb->gpu == NULL) {
		sdp_error("rollback_add_%s: the plan has no GPU", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (n >= SDP_GPU_ROLLBACK_MAX) {
		sdp_error("rollback_add_%s: more than %d", what, SDP_GPU_ROLLBACK_MAX);
		return DOCA_ERROR_NO_MEMORY;
	}
	return DOCA_SUCCESS;
}

static doca_error_t add_reg(struct sdp_gpu_rollback *rb, enum reg_kind kind, void *obj,
			    uint32_t *count, const char *what)
{
	doca_error_t s = check_add(rb, obj, count != NULL ? *count : 0, what);

	if (s != DOCA_SUCCESS)
		return s;
	rb->regs[rb->nb_regs++] = (struct rb_reg){.kind = kind, .obj = obj};
	(*count)++;
	return DOCA_SUCCESS;
}

doca_error_t sdp_gpu_rollback_add_buf_arr(struct sdp_gpu_rollback *rb, struct doca_buf_arr *arr)
{
	return add_reg(rb, REG_BUF_ARR, arr, rb != NULL ? &rb->nb_arr : NULL, "buf_arr");
}

doca_error_t sdp_gpu_rollback_add_mmap(struct sdp_gpu_rollback *rb, struct doca_mmap *mmap)
{
	return add_reg(rb, REG_MMAP, mmap, rb != NULL ? &rb->nb_mmap : NULL, "mmap");
}

doca_error_t sdp_gpu_rollback_add_rxq(struct sdp_gpu_rollback *rb, struct doca_eth_rxq *rxq)
{
	doca_error_t s = check_add(rb, rxq, rb != NULL ? rb->nb_rxq : 0, "rxq");

	if (s != DOCA_SUCCESS)
		return s;
	rb->ctxs[rb->nb_ctxs++] = (struct rb_ctx){.rxq = rxq};
	rb->nb_rxq++;
	return DOCA_SUCCESS;
}

doca_error_t sdp_gpu_rollback_add_txq(struct sdp_gpu_rollback *rb, struct doca_eth_txq *txq)
{
	doca_error_t s = check_add(rb, txq, rb != NULL ? rb->nb_txq : 0, "txq");

	if (s != DOCA_SUCCESS)
		return s;
	rb->ctxs[rb->nb_ctxs++] = (struct rb_ctx){.txq = txq};
	rb->nb_txq++;
	return DOCA_SUCCESS;
}

doca_error_t sdp_gpu_rollback_add_gpu_mem(struct sdp_gpu_rollback *rb, void *memptr_gpu)
{
	doca_error_t s = check_add(rb, memptr_gpu, rb != NULL ? rb->nb_mem : 0, "gpu_mem");

	if (s != DOCA_SUCCESS)
		return s;
	rb->mem[rb->nb_mem++] = memptr_gpu;
	return DOCA_SUCCESS;
}

doca_error_t sdp_gpu_rollback_set_reverify(struct sdp_gpu_rollback *rb,
					   sdp_gpu_rollback_measure_cb measure, void *user,
					   double tolerance)
{
	if (rb == NULL || measure == NULL) {
		sdp_error("rollback_set_reverify: NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (tolerance >= 1.0) {
		sdp_error("rollback_set_reverify: tolerance %g is not below 1", tolerance);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rb->measure = measure;
	rb->user = user;
	rb->rep.tolerance = tolerance < 0 ? SDP_GPU_ROLLBACK_DEFAULT_TOLERANCE : tolerance;
	return DOCA_SUCCESS;
}

doca_error_t sdp_gpu_rollback_baseline(struct sdp_gpu_rollback *rb, double *rate_pps)
{
	double rate = -1;
	doca_error_t s;

	if (rb == NULL) {
		sdp_error("rollback_baseline: NULL plan");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (rb->measure == NULL) {
		sdp_error(
			"rollback_baseline: no re-verify callback (sdp_gpu_rollback_set_reverify)");
		return DOCA_ERROR_BAD_STATE;
	}
	s = rb->measure(rb->user, &rate);
	if (s != DOCA_SUCCESS) {
		sdp_error("rollback_baseline: measuring the parent path failed: %s",
			  doca_error_get_name(s));
		return s;
	}
	rb->rep.baseline_pps = rate;
	rb->have_baseline = 1;
	if (rate_pps != NULL)
		*rate_pps = rate;
	return DOCA_SUCCESS;
}

doca_error_t sdp_gpu_rollback_set_before_stop(struct sdp_gpu_rollback *rb, void (*fn)(void *user),
					      void *user)
{
	if (rb == NULL) {
		sdp_error("rollback_set_before_stop: NULL plan");
		return DOCA_ERROR_INVALID_VALUE;
	}
	rb->before_stop = fn;
	rb->before_user = user;
	return DOCA_SUCCESS;
}

doca_error_t sdp_gpu_rollback_set_baseline(struct sdp_gpu_rollback *rb, double rate_pps)
{
	if (rb == NULL || !(rate_pps >= 0)) {
		sdp_error("rollback_set_baseline: NULL plan or a negative rate");
		return DOCA_ERROR_INVALID_VALUE;
	}
	rb->rep.baseline_pps = rate_pps;
	rb->have_baseline = 1;
	return DOCA_SUCCESS;
}

static void set_state(struct sdp_gpu_rollback *rb, enum sdp_gpu_rollback_step step,
		      enum sdp_gpu_rollback_state st, doca_error_t res)
{
	rb->rep.state[step] = st;
	rb->rep.result[step] = res;
	if (st == SDP_GPU_ROLLBACK_FAILED)
		rb->rep.failed_step = step;
}

/* Steps 1-2: flag, then poll the stream. SUCCESS (done, also with a kernel error), TIME_OUT. */
static doca_error_t step_drain(struct sdp_gpu_rollback *rb)
{
	const struct sdp_cuda_api *cu;
	double start, end;
	char buf[128];
	doca_error_t s;

	if (rb->flag == NULL) {
		set_state(rb, SDP_GPU_ROLLBACK_STOP_FLAG, SDP_GPU_ROLLBACK_SKIPPED, DOCA_SUCCESS);
		set_state(rb, SDP_GPU_ROLLBACK_DRAIN, SDP_GPU_ROLLBACK_SKIPPED, DOCA_SUCCESS);
		return DOCA_SUCCESS;
	}
	if (rb->rep.state[SDP_GPU_ROLLBACK_DRAIN] == SDP_GPU_ROLLBACK_DONE)
		return DOCA_SUCCESS;
	/* 1: the deadline first, then the flag */
	start = now_ms();
	end = start + rb->deadline_ms;
	rb->rep.deadline_ms = rb->deadline_ms;
	__atomic_store_n(rb->flag, rb->stop_value, __ATOMIC_SEQ_CST);
	set_state(rb, SDP_GPU_ROLLBACK_STOP_FLAG, SDP_GPU_ROLLBACK_DONE, DOCA_SUCCESS);
	/* 2: cuStreamQuery until done or the deadline */
	cu = sdp_gpu_get_cuda_api(rb->gpu);
	for (;;) {
		sdp_cu_result_t r;

		s = sdp_gpu_ctx_push(rb->gpu);
		if (s != DOCA_SUCCESS) {
			set_state(rb, SDP_GPU_ROLLBACK_DRAIN, SDP_GPU_ROLLBACK_FAILED, s);
			return s;
		}
		r = cu->stream_query((sdp_cu_stream_t)rb->stream);
		sdp_gpu_ctx_pop(rb->gpu);
		if (r == SDP_CUDA_SUCCESS)
			break;
		if (r != SDP_CUDA_ERROR_NOT_READY) {
			/* the stream ended with an error: the kernel no longer runs */
			sdp_error("rollback: the kernel's stream ended with %s",
				  sdp_cuda_strerror(r, buf, sizeof(buf)));
			rb->rep.kernel_error = 1;
			break;
		}
		if (now_ms() >= end) {
			rb->rep.drain_ms = now_ms() - start;
			rb->rep.kernel_running = 1;
			sdp_error("rollback: the kernel did not finish within the %u ms drain "
				  "deadline; failing closed (nothing torn down), escalate and run "
				  "the rollback again once it has finished",
				  rb->deadline_ms);
			set_state(rb, SDP_GPU_ROLLBACK_DRAIN, SDP_GPU_ROLLBACK_FAILED,
				  DOCA_ERROR_TIME_OUT);
			return DOCA_ERROR_TIME_OUT;
		}
		nanosleep(&(struct timespec){.tv_nsec = DRAIN_POLL_NS}, NULL);
	}
	rb->rep.drain_ms = now_ms() - start;
	rb->rep.kernel_running = 0;
	rb->rep.failed_step = SDP_GPU_ROLLBACK_NB_STEPS;
	set_state(rb, SDP_GPU_ROLLBACK_DRAIN, SDP_GPU_ROLLBACK_DONE, DOCA_SUCCESS);
	return DOCA_SUCCESS;
}

static struct doca_ctx *ctx_of(const struct rb_ctx *c)
{
	return c->rxq != NULL ? doca_eth_rxq_as_doca_ctx(c->rxq) : doca_eth_txq_as_doca_ctx(c->txq);
}

/* Stop one queue's context (GPU queues stop at once; IN_PROGRESS is waited for, bounded). */
static doca_error_t ctx_stop(struct doca_ctx *ctx)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_IDLE;
	doca_error_t s;
	double end;

	if (doca_ctx_get_state(ctx, &st) == DOCA_SUCCESS && st == DOCA_CTX_STATE_IDLE)
		return DOCA_SUCCESS;
	s = doca_ctx_stop(ctx);
	if (s == DOCA_SUCCESS)
		return DOCA_SUCCESS;
	if (s != DOCA_ERROR_IN_PROGRESS)
		return s;
	end = now_ms() + CTX_STOP_WAIT_S * 1e3;
	while (doca_ctx_get_state(ctx, &st) == DOCA_SUCCESS && st != DOCA_CTX_STATE_IDLE) {
		if (now_ms() > end)
			return DOCA_ERROR_TIME_OUT;
		nanosleep(&(struct timespec){.tv_nsec = DRAIN_POLL_NS}, NULL);
	}
	return DOCA_SUCCESS;
}

static doca_error_t step_contexts(struct sdp_gpu_rollback *rb)
{
	doca_error_t s;

	if (rb->nb_ctxs == 0) {
		set_state(rb, SDP_GPU_ROLLBACK_STOP_CONTEXTS, SDP_GPU_ROLLBACK_SKIPPED,
			  DOCA_SUCCESS);
		return DOCA_SUCCESS;
	}
	for (uint32_t k = rb->nb_ctxs; k-- > 0;) {
		struct rb_ctx *c = &rb->ctxs[k];

		if (c->done)
			continue;
		if (!c->stopped) {
			s = ctx_stop(ctx_of(c));
			if (s != DOCA_SUCCESS) {
				sdp_error("rollback: stopping GPU queue %u failed: %s", k,
					  doca_error_get_name(s));
				set_state(rb, SDP_GPU_ROLLBACK_STOP_CONTEXTS,
					  SDP_GPU_ROLLBACK_FAILED, s);
				return s;
			}
			c->stopped = 1;
		}
		s = c->rxq != NULL ? doca_eth_rxq_destroy(c->rxq) : doca_eth_txq_destroy(c->txq);
		if (s != DOCA_SUCCESS) {
			sdp_error("rollback: destroying GPU queue %u failed: %s", k,
				  doca_error_get_name(s));
			set_state(rb, SDP_GPU_ROLLBACK_STOP_CONTEXTS, SDP_GPU_ROLLBACK_FAILED, s);
			return s;
		}
		c->done = 1;
		rb->rep.contexts++;
	}
	set_state(rb, SDP_GPU_ROLLBACK_STOP_CONTEXTS, SDP_GPU_ROLLBACK_DONE, DOCA_SUCCESS);
	return DOCA_SUCCESS;
}

static doca_error_t step_unregister(struct sdp_gpu_rollback *rb)
{
	doca_error_t s;

	if (rb->nb_regs == 0) {
		set_state(rb, SDP_GPU_ROLLBACK_UNREGISTER, SDP_GPU_ROLLBACK_SKIPPED, DOCA_SUCCESS);
		return DOCA_SUCCESS;
	}
	for (uint32_t k = rb->nb_regs; k-- > 0;) {
		struct rb_reg *r = &rb->regs[k];

		if (r->done)
			continue;
		s = r->kind == REG_BUF_ARR ? doca_buf_arr_destroy(r->obj) :
					     doca_mmap_destroy(r->obj);
		if (s != DOCA_SUCCESS) {
			sdp_error("rollback: unregistering %s %u failed: %s",
				  r->kind == REG_BUF_ARR ? "buffer array" : "mmap", k,
				  doca_error_get_name(s));
			set_state(rb, SDP_GPU_ROLLBACK_UNREGISTER, SDP_GPU_ROLLBACK_FAILED, s);
			return s;
		}
		r->done = 1;
		rb->rep.registrations++;
	}
	set_state(rb, SDP_GPU_ROLLBACK_UNREGISTER, SDP_GPU_ROLLBACK_DONE, DOCA_SUCCESS);
	return DOCA_SUCCESS;
}

static doca_error_t step_free(struct sdp_gpu_rollback *rb)
{
	doca_error_t s;

	if (rb->nb_mem == 0) {
		set_state(rb, SDP_GPU_ROLLBACK_FREE_MEMORY, SDP_GPU_ROLLBACK_SKIPPED, DOCA_SUCCESS);
		return DOCA_SUCCESS;
	}
	for (uint32_t k = rb->nb_mem; k-- > 0;) {
		if (rb->mem_done[k])
			continue;
		s = doca_gpu_mem_free(rb->gpu, rb->mem[k]);
		if (s != DOCA_SUCCESS) {
			sdp_error("rollback: freeing GPU memory %u failed: %s", k,
				  doca_error_get_name(s));
			set_state(rb, SDP_GPU_ROLLBACK_FREE_MEMORY, SDP_GPU_ROLLBACK_FAILED, s);
			return s;
		}
		rb->mem_done[k] = 1;
		rb->rep.gpu_mem++;
	}
	set_state(rb, SDP_GPU_ROLLBACK_FREE_MEMORY, SDP_GPU_ROLLBACK_DONE, DOCA_SUCCESS);
	return DOCA_SUCCESS;
}

static doca_error_t step_gpu(struct sdp_gpu_rollback *rb)
{
	doca_error_t s;

	if (rb->rep.gpu_destroyed)
		return DOCA_SUCCESS;
	s = doca_gpu_destroy(rb->gpu);
	if (s != DOCA_SUCCESS) {
		sdp_error("rollback: doca_gpu_destroy failed: %s", doca_error_get_name(s));
		set_state(rb, SDP_GPU_ROLLBACK_DESTROY_GPU, SDP_GPU_ROLLBACK_FAILED, s);
		return s;
	}
	rb->rep.gpu_destroyed = 1;
	set_state(rb, SDP_GPU_ROLLBACK_DESTROY_GPU, SDP_GPU_ROLLBACK_DONE, DOCA_SUCCESS);
	return DOCA_SUCCESS;
}

static doca_error_t step_reverify(struct sdp_gpu_rollback *rb)
{
	struct sdp_gpu_rollback_report *r = &rb->rep;
	double floor_pps, rate = -1;
	doca_error_t s;

	if (rb->measure == NULL) {
		set_state(rb, SDP_GPU_ROLLBACK_REVERIFY, SDP_GPU_ROLLBACK_SKIPPED, DOCA_SUCCESS);
		return DOCA_SUCCESS;
	}
	if (r->state[SDP_GPU_ROLLBACK_REVERIFY] == SDP_GPU_ROLLBACK_DONE)
		return DOCA_SUCCESS;
	if (r->reverify_attempts >= 2) /* bounded: the residual gap stands */
		return DOCA_ERROR_UNEXPECTED;
	if (!rb->have_baseline) {
		sdp_error("rollback: re-verify without a baseline (sdp_gpu_rollback_baseline "
			  "before the GPU part was attached)");
		set_state(rb, SDP_GPU_ROLLBACK_REVERIFY, SDP_GPU_ROLLBACK_FAILED,
			  DOCA_ERROR_BAD_STATE);
		return DOCA_ERROR_BAD_STATE;
	}
	floor_pps = r->baseline_pps * (1.0 - r->tolerance);
	while (r->reverify_attempts < 2) {
		int k = r->reverify_attempts++;

		s = rb->measure(rb->user, &rate);
		r->reverify_pps[k] = s == DOCA_SUCCESS ? rate : -1;
		if (s == DOCA_SUCCESS && rate >= floor_pps) {
			r->residual_gap = 0;
			r->failed_step = SDP_GPU_ROLLBACK_NB_STEPS;
			set_state(rb, SDP_GPU_ROLLBACK_REVERIFY, SDP_GPU_ROLLBACK_DONE,
				  DOCA_SUCCESS);
			return DOCA_SUCCESS;
		}
		if (k == 0)
			sdp_warn("rollback: re-verify %s (%.0f pps, baseline %.0f, floor %.0f); "
				 "measuring once more",
				 s == DOCA_SUCCESS ? "below the floor" : doca_error_get_name(s),
				 rate, r->baseline_pps, floor_pps);
	}
	r->residual_gap = r->baseline_pps > 0 && r->reverify_pps[1] >= 0 ?
				  (r->baseline_pps - r->reverify_pps[1]) / r->baseline_pps :
				  1.0;
	sdp_error("rollback: the parent Ethernet path did not come back to its earlier rate: "
		  "baseline %.0f pps, after %.0f and %.0f pps (tolerance %.0f %%): residual gap "
		  "%.1f %%; not retrying",
		  r->baseline_pps, r->reverify_pps[0], r->reverify_pps[1], r->tolerance * 100,
		  r->residual_gap * 100);
	set_state(rb, SDP_GPU_ROLLBACK_REVERIFY, SDP_GPU_ROLLBACK_FAILED, DOCA_ERROR_UNEXPECTED);
	return DOCA_ERROR_UNEXPECTED;
}

doca_error_t sdp_gpu_rollback_run(struct sdp_gpu_rollback *rb,
				  struct sdp_gpu_rollback_report *report)
{
	doca_error_t s = DOCA_SUCCESS;

	if (rb == NULL) {
		sdp_error("rollback_run: NULL plan");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (rb->gpu == NULL) {
		for (int k = 0; k < SDP_GPU_ROLLBACK_REVERIFY; k++)
			set_state(rb, (enum sdp_gpu_rollback_step)k, SDP_GPU_ROLLBACK_SKIPPED,
				  DOCA_SUCCESS);
	} else {
		s = step_drain(rb);
		if (s == DOCA_SUCCESS && rb->before_stop != NULL && !rb->before_done) {
			rb->before_done = 1;
			rb->before_stop(rb->before_user);
		}
		if (s == DOCA_SUCCESS)
			s = step_contexts(rb);
		if (s == DOCA_SUCCESS)
			s = step_unregister(rb);
		if (s == DOCA_SUCCESS)
			s = step_free(rb);
		if (s == DOCA_SUCCESS)
			s = step_gpu(rb);
	}
	if (s == DOCA_SUCCESS)
		s = step_reverify(rb);
	if (report != NULL)
		*report = rb->rep;
	return s;
}

const char *sdp_gpu_rollback_step_name(enum sdp_gpu_rollback_step step)
{
	static const char *const names[] = {"stop-flag",  "drain",	 "stop-contexts",
					    "unregister", "free-memory", "destroy-gpu",
					    "reverify"};

	if ((unsigned)step < SDP_GPU_ROLLBACK_NB_STEPS)
		return names[step];
	return "unknown";
}

const char *sdp_gpu_rollback_state_name(enum sdp_gpu_rollback_state state)
{
	static const char *const names[] = {"pending", "done", "failed", "skipped"};

	if ((unsigned)state <= SDP_GPU_ROLLBACK_SKIPPED)
		return names[state];
	return "unknown";
}
