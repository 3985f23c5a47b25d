/*
 * Integration test helpers on the host side: a PE with a service context connected to the
 * test's own daemon (t_uromd.h), worker contexts driven to RUNNING or back to IDLE, and bounded
 * waits on PEs. Waits sleep on the PE's notification handle in slices of a few milliseconds, so
 * an idle test does not spin even when a context arms nothing.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef T_UROM_H_
#define T_UROM_H_

#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>

#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_pe.h"
#include "doca_urom.h"
#include "softdpu/ctx.h"
#include "t_helpers.h"
#include "t_uromd.h"
#include "urom_graph.h"

#define T_WAIT_MS 10000 /* bound of every wait for a state or a completion */

/* Progress pe once, then sleep on its notification handle for at most slice_ms. */
static inline int t_pe_step(struct doca_pe *pe, int slice_ms)
{
	doca_notification_handle_t h;
	int did = doca_pe_progress(pe);

	if (did)
		return did;
	if (doca_pe_get_notification_handle(pe, &h) == DOCA_SUCCESS &&
	    doca_pe_request_notification(pe) == DOCA_SUCCESS) {
		struct pollfd p = {.fd = (int)h, .events = POLLIN};

		if (poll(&p, 1, slice_ms) > 0)
			doca_pe_clear_notification(pe, h);
	} else {
		t_sleep_ms(slice_ms);
	}
	return doca_pe_progress(pe);
}

/* Progress pes (NULL-terminated list, up to 4) until ctx reaches state or timeout_ms passes. */
static inline enum doca_ctx_states t_ctx_wait_state(struct doca_ctx *ctx, struct doca_pe *pe,
						    struct doca_pe *pe2, enum doca_ctx_states want,
						    int timeout_ms)
{
	int64_t deadline = t_now_ms() + timeout_ms;
	enum doca_ctx_states st = DOCA_CTX_STATE_IDLE;

	for (;;) {
		if (doca_ctx_get_state(ctx, &st) != DOCA_SUCCESS || st == want ||
		    t_now_ms() >= deadline)
			return st;
		if (pe2 != NULL)
			doca_pe_progress(pe2);
		t_pe_step(pe, 2);
	}
}

/* Progress until *counter reaches want or timeout; returns the final counter value. */
static inline long t_pe_wait_count(struct doca_pe *pe, struct doca_pe *pe2, long *counter,
				   long want, int timeout_ms)
{
	int64_t deadline = t_now_ms() + timeout_ms;

	while (*counter < want && t_now_ms() < deadline) {
		if (pe2 != NULL)
			doca_pe_progress(pe2);
		t_pe_step(pe, 2);
	}
	return *counter;
}

/* A service context on its own PE, started against the instance in the environment. */
struct t_svc {
	struct doca_pe *pe;
	struct doca_urom_service *svc;
	struct doca_dev *dev;
	uint64_t graph_id; /* id of "worker_graph", 0 when the service has none */
	uint64_t graph_version;
};

/* Open the first device softdpu lists (the samples pass one to doca_urom_service_set_dev). */
static inline doca_error_t t_open_first_dev(struct doca_dev **dev_p)
{
	struct doca_devinfo **list;
	uint32_t n = 0;
	doca_error_t st;

	st = doca_devinfo_create_list(&list, &n);
	if (st != DOCA_SUCCESS)
		return st;
	if (n == 0) {
		doca_devinfo_destroy_list(list);
		return DOCA_ERROR_NOT_FOUND;
	}
	st = doca_dev_open(list[0], dev_p);
	doca_devinfo_destroy_list(list);
	return st;
}

/*
 * Create a PE + service context, configure it and doca_ctx_start it. Returns the start status
 * (the service is RUNNING on DOCA_SUCCESS, else IDLE); s is usable for t_svc_close either way.
 * max_workers 0 leaves the default.
 */
static inline doca_error_t t_svc_open(struct t_svc *s, uint32_t max_workers)
{
	doca_error_t st;

	memset(s, 0, sizeof(*s));
	st = doca_pe_create(&s->pe);
	if (st != DOCA_SUCCESS)
		return st;
	st = doca_urom_service_create(&s->svc);
	if (st != DOCA_SUCCESS)
		return st;
	st = doca_pe_connect_ctx(s->pe, doca_urom_service_as_ctx(s->svc));
	if (st != DOCA_SUCCESS)
		return st;
	if (t_open_first_dev(&s->dev) == DOCA_SUCCESS) {
		st = doca_urom_service_set_dev(s->svc, s->dev);
		if (st != DOCA_SUCCESS)
			return st;
	}
	if (max_workers != 0) {
		st = doca_urom_service_set_max_workers(s->svc, max_workers);
		if (st != DOCA_SUCCESS)
			return st;
	}
	st = doca_ctx_start(doca_urom_service_as_ctx(s->svc));
	if (st != DOCA_SUCCESS)
		return st;
	return DOCA_SUCCESS;
}

/* Find worker_graph in the plugin list and initialise the graph host half with it. */
static inline doca_error_t t_svc_find_graph(struct t_svc *s)
{
	const struct doca_urom_service_plugin_info *plugins;
	size_t n = 0, i;
	doca_error_t st;

	st = doca_urom_service_get_plugins_list(s->svc, &plugins, &n);
	if (st != DOCA_SUCCESS)
		return st;
	for (i = 0; i < n; i++) {
		if (strcmp(plugins[i].plugin_name, "worker_graph") == 0) {
			s->graph_id = plugins[i].id;
			s->graph_version = plugins[i].version;
			return urom_graph_init(plugins[i].id, plugins[i].version);
		}
	}
	return DOCA_ERROR_NOT_FOUND;
}

/* Stop (if running) and destroy everything t_svc_open created; counts failures. */
static inline void t_svc_close(struct t_svc *s)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_IDLE;

	if (s->svc != NULL) {
		struct doca_ctx *ctx = doca_urom_service_as_ctx(s->svc);

		if (doca_ctx_get_state(ctx, &st) == DOCA_SUCCESS && st != DOCA_CTX_STATE_IDLE) {
			doca_error_t r = doca_ctx_stop(ctx);

			if (r != DOCA_SUCCESS && r != DOCA_ERROR_IN_PROGRESS)
				t_fail("service stop: expected SUCCESS or IN_PROGRESS, got %s",
				       doca_error_get_name(r));
			st = t_ctx_wait_state(ctx, s->pe, NULL, DOCA_CTX_STATE_IDLE, T_WAIT_MS);
			if (st != DOCA_CTX_STATE_IDLE)
				t_fail("service did not return to IDLE (state %d)", (int)st);
		}
		T_OK(doca_urom_service_destroy(s->svc));
	}
	if (s->pe != NULL)
		T_OK(doca_pe_destroy(s->pe));
	if (s->dev != NULL)
		T_OK(doca_dev_close(s->dev));
	memset(s, 0, sizeof(*s));
}

/* What a worker context is started with. */
struct t_worker_cfg {
	uint64_t id;  /* DOCA_UROM_WORKER_ID_ANY or a fixed id */
	uint32_t gid; /* set only when has_gid */
	int has_gid;
	uint64_t plugins;      /* mask */
	uint32_t max_inflight; /* 0 = library default */
	char *const *env;      /* set_env when env_count > 0 */
	size_t env_count;
	const doca_cpu_set_t *cpuset; /* set_cpuset when non-NULL */
};

/*
 * Create a worker context on pe for service s, configure it from cfg and start it; progress pe
 * (and the service's PE, when different) until the context is RUNNING or back in IDLE. Returns
 * DOCA_SUCCESS when RUNNING; else the error doca_ctx_start returned or, for a refused spawn,
 * sdp_ctx_get_last_error() (the context is IDLE and *w_p still holds it, to be destroyed).
 */
static inline doca_error_t t_worker_start(struct t_svc *s, struct doca_pe *pe,
					  const struct t_worker_cfg *cfg,
					  struct doca_urom_worker **w_p)
{
	struct doca_urom_worker *w;
	struct doca_ctx *ctx;
	enum doca_ctx_states state;
	doca_error_t st;

	*w_p = NULL;
	st = doca_urom_worker_create(&w);
	if (st != DOCA_SUCCESS)
		return st;
	*w_p = w;
	ctx = doca_urom_worker_as_ctx(w);
	st = doca_urom_worker_set_service(w, s->svc);
	if (st == DOCA_SUCCESS)
		st = doca_pe_connect_ctx(pe, ctx);
	if (st == DOCA_SUCCESS)
		st = doca_urom_worker_set_id(w, cfg->id);
	if (st == DOCA_SUCCESS && cfg->has_gid)
		st = doca_urom_worker_set_gid(w, cfg->gid);
	if (st == DOCA_SUCCESS && cfg->env_count > 0)
		st = doca_urom_worker_set_env(w, cfg->env, cfg->env_count);
	if (st == DOCA_SUCCESS && cfg->max_inflight > 0)
		st = doca_urom_worker_set_max_inflight_tasks(w, cfg->max_inflight);
	if (st == DOCA_SUCCESS)
		st = doca_urom_worker_set_plugins(w, cfg->plugins);
	if (st == DOCA_SUCCESS && cfg->cpuset != NULL)
		st = doca_urom_worker_set_cpuset(w, *cfg->cpuset);
	if (st != DOCA_SUCCESS)
		return st;
	st = doca_ctx_start(ctx);
	if (st == DOCA_SUCCESS)
		return DOCA_SUCCESS;
	if (st != DOCA_ERROR_IN_PROGRESS)
		return st;
	/* STARTING: wait until RUNNING or a refusal sends it back to IDLE. */
	{
		int64_t deadline = t_now_ms() + T_WAIT_MS;

		for (;;) {
			if (doca_ctx_get_state(ctx, &state) != DOCA_SUCCESS)
				return DOCA_ERROR_UNEXPECTED;
			if (state == DOCA_CTX_STATE_RUNNING)
				return DOCA_SUCCESS;
			if (state == DOCA_CTX_STATE_IDLE) {
				st = sdp_ctx_get_last_error(ctx);
				return st == DOCA_SUCCESS ? DOCA_ERROR_UNEXPECTED : st;
			}
			if (t_now_ms() >= deadline)
				return DOCA_ERROR_TIME_OUT;
			if (pe != s->pe)
				doca_pe_progress(s->pe);
			t_pe_step(pe, 2);
		}
	}
}

/* Stop a worker context (progressing pe and the service's PE) and destroy it. */
static inline void t_worker_close(struct t_svc *s, struct doca_pe *pe, struct doca_urom_worker *w)
{
	struct doca_ctx *ctx;
	enum doca_ctx_states st = DOCA_CTX_STATE_IDLE;

	if (w == NULL)
		return;
	ctx = doca_urom_worker_as_ctx(w);
	if (doca_ctx_get_state(ctx, &st) == DOCA_SUCCESS && st != DOCA_CTX_STATE_IDLE) {
		doca_error_t r = doca_ctx_stop(ctx);

		if (r != DOCA_SUCCESS && r != DOCA_ERROR_IN_PROGRESS)
			t_fail("worker stop: expected SUCCESS or IN_PROGRESS, got %s",
			       doca_error_get_name(r));
		st = t_ctx_wait_state(ctx, pe, pe == s->pe ? NULL : s->pe, DOCA_CTX_STATE_IDLE,
				      T_WAIT_MS);
		if (st != DOCA_CTX_STATE_IDLE)
			t_fail("worker context did not return to IDLE (state %d)", (int)st);
	}
	T_OK(doca_urom_worker_destroy(w));
}

/*
 * A spawn the service (or the library, before asking it) must refuse with `want`: the context
 * is back in IDLE (usable and destroyable) and, when the refusal came after doca_ctx_start,
 * sdp_ctx_get_last_error() names the same cause.
 */
#define t_expect_refused(status, w, want, what)                                                    \
	do {                                                                                       \
		doca_error_t t_st_ = (status);                                                     \
		enum doca_ctx_states t_state_ = DOCA_CTX_STATE_RUNNING;                            \
		if (t_st_ != (want))                                                               \
			t_fail("%s: expected the spawn refused with %s, got %s", what,             \
			       doca_error_get_name(want), doca_error_get_name(t_st_));             \
		if ((w) != NULL &&                                                                 \
		    doca_ctx_get_state(doca_urom_worker_as_ctx(w), &t_state_) == DOCA_SUCCESS &&   \
		    t_state_ != DOCA_CTX_STATE_IDLE)                                               \
			t_fail("%s: expected the worker context back in IDLE, got state %d", what, \
			       (int)t_state_);                                                     \
	} while (0)

/*
 * Loopback bookkeeping for urom_graph_task_loopback: the cookie carries the command's index,
 * the callback records how often each index completed, with which status and value.
 */
struct t_loop {
	long done;	      /* completions so far */
	long errors;	      /* completions with a status other than SUCCESS */
	size_t n;	      /* capacity of the arrays */
	uint64_t *got;	      /* echoed value by index */
	int *count;	      /* completions by index */
	doca_error_t *status; /* status by index */
};

static struct t_loop *t_loop_cur __attribute__((unused));

static inline void t_loop_cb(doca_error_t result, union doca_data cookie, uint64_t data)
{
	struct t_loop *l = t_loop_cur;
	uint64_t i = cookie.u64;

	if (l == NULL || i >= l->n) {
		t_fail("loopback completion with unknown cookie %" PRIu64, i);
		return;
	}
	l->count[i]++;
	l->status[i] = result;
	l->got[i] = data;
	l->done++;
	if (result != DOCA_SUCCESS)
		l->errors++;
}

static inline void t_loop_init(struct t_loop *l, size_t n)
{
	memset(l, 0, sizeof(*l));
	l->n = n;
	l->got = (uint64_t *)calloc(n, sizeof(*l->got));
	l->count = (int *)calloc(n, sizeof(*l->count));
	l->status = (doca_error_t *)calloc(n, sizeof(*l->status));
	if (l->got == NULL || l->count == NULL || l->status == NULL) {
		fprintf(stderr, "out of memory\n");
		exit(T_EXIT_FAIL);
	}
	t_loop_cur = l;
}

static inline void t_loop_fini(struct t_loop *l)
{
	free(l->got);
	free(l->count);
	free(l->status);
	if (t_loop_cur == l)
		t_loop_cur = NULL;
	memset(l, 0, sizeof(*l));
}

/* The value command i carries: distinct for every i, all 64 bits exercised. */
static inline uint64_t t_loop_value(uint64_t i)
{
	return (i + 1) * 0x9e3779b97f4a7c15ull ^ 0xa5a5000000000000ull;
}

/* Submit loopback i on w. */
static inline doca_error_t t_loop_submit(struct doca_urom_worker *w, uint64_t i)
{
	union doca_data cookie = {.u64 = i};

	return urom_graph_task_loopback(w, cookie, t_loop_value(i), t_loop_cb);
}

/*
 * One loopback round trip on w (its PE pe): submit, wait, check status and value. Uses index
 * idx of l. Returns the completion status (TIME_OUT when none came).
 */
static inline doca_error_t t_loop_one(struct t_loop *l, struct doca_urom_worker *w,
				      struct doca_pe *pe, struct doca_pe *pe2, uint64_t idx)
{
	long want = l->done + 1;
	doca_error_t st = t_loop_submit(w, idx);

	if (st != DOCA_SUCCESS)
		return st;
	if (t_pe_wait_count(pe, pe2, &l->done, want, T_WAIT_MS) < want)
		return DOCA_ERROR_TIME_OUT;
	if (l->status[idx] == DOCA_SUCCESS && l->got[idx] != t_loop_value(idx))
		t_fail("loopback %" PRIu64 ": expected value 0x%" PRIx64 ", got 0x%" PRIx64, idx,
		       t_loop_value(idx), l->got[idx]);
	return l->status[idx];
}

#endif /* T_UROM_H_ */
