/*
 * `softdpu ladder urom`: the UROM seed's test ladder against the configured offload service,
 * rung by rung, with evidence (docs/ladders.md):
 *   0 service        the service answers; worker_rma and worker_coll present, their versions
 *                    those of the host halves (the plugin / version snapshot)
 *   1 single-pair    two ranks: one PUT into the peer's exported memory, the bytes checked at
 *                    the peer, one GET back, both completions
 *   2 multi-op       100 PUTs and 100 fetch-adds with progress between submissions, every
 *                    completion checked, the AGAIN path
 *   3 small-collective allreduce and alltoall across 2 and --ranks ranks, memory checked
 *   4 capability-negative a worker without worker_coll refuses a collective (NOT_SUPPORTED),
 *                    as the discovered plugin list says it must
 *   5 full-pattern   --collective at --size across --ranks ranks, checked, timed
 * Ranks are forked processes of this tool, each with its own service context, worker and a
 * domain over softdpu's TCP out-of-band allgather; each writes its result as one JSON object
 * into a pipe. The parent judges, records the evidence (sdp_evidence.h) and, on failure, names
 * the layer and the next check. Every wait is bounded by the rung timeout; ranks that overrun
 * it are killed; every child is reaped.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_pe.h"
#include "doca_urom.h"
#include "sdp_build_config.h"
#include "sdp_cli.h"
#include "sdp_evidence.h"
#include "sdp_urom_proto.h"
#include "softdpu/ctx.h"
#include "softdpu/urom_mem.h"
#include "softdpu/urom_oob.h"
#include "urom_coll.h"
#include "urom_rma.h"
#include "uromd_paths.h"

#define LU_RUNGS 5
#define LU_MAXR 4
#define LU_DEFAULT_TIMEOUT_S 60
#define LU_DEFAULT_SIZE (1u << 20)
#define LU_MAX_SIZE (64u << 20)
#define LU_RESULT_MAX (1u << 20) /* bytes of one rank's result */
#define LU_TAIL_LINES 20
#define LU_INFLIGHT 8
#define LU_NOPS 100
#define LU_SMALL_COUNT 1001
#define LU_GUARD 0xeeu

/* The rungs' names (0 is the precheck). */
static const char *const lu_names[LU_RUNGS + 1] = {
	"service",	    "single-pair",	   "multi-op",
	"small-collective", "capability-negative", "full-pattern"};

/* What the next check is, per layer (a failure may give a more precise one). */
#define LU_NEXT_SERVICE                                                                            \
	"`softdpu service status` (is the service up, with this secret?); if it is not running: "  \
	"`softdpu service start`; then the service log (<run dir>/uromd.log)"
#define LU_NEXT_PLUGIN                                                                             \
	"`softdpu service status`: the plugins it found and the skipped ones; start the service "  \
	"with a plugin path (--plugin-path or UROM_PLUGIN_PATH) holding worker_rma.so and "        \
	"worker_coll.so"
#define LU_NEXT_VERSION                                                                            \
	"`softdpu service status` (plugin versions, protocol) against this softdpu "               \
	"(`softdpu --version`): install the worker halves built with these host halves"
#define LU_NEXT_TRANSPORT                                                                          \
	"the UCX transport: `ucx_info -d` (the devices UCX sees), UCX_NET_DEVICES and UCX_TLS in " \
	"the environment of this tool and of the service; then the worker log tail in the evidence"
#define LU_NEXT_WORKER_START                                                                       \
	"the host's UCX context: `ucx_info -d` and UCX_TLS / UCX_NET_DEVICES in this tool's "      \
	"environment (UCX says why it found no usable transport on stderr); if the worker was "    \
	"spawned, its log tail in the evidence names a plugin that would not open"
#define LU_NEXT_MEMORY                                                                             \
	"the memory descriptors: local and remote ranges must lie inside buffers exported to the " \
	"domain (sdp_urom_domain_export_buffer), lengths within the plugin's bounds "              \
	"(docs/plugins.md); rerun with DOCA_LOG_LEVEL=trace"
#define LU_NEXT_NO_COMPLETION                                                                      \
	"no completion within the rung timeout although the PE was progressed: the worker (its "   \
	"log tail in the evidence; `softdpu service status`: is it still running?); on a loaded "  \
	"machine raise --timeout"
#define LU_NEXT_PROGRAM                                                                            \
	"rerun with DOCA_LOG_LEVEL=trace and read the rank's message in the evidence; a rank "     \
	"that died is a bug to report with the evidence file"

struct lu_opts {
	const char *evidence, *compare, *run_dir, *secret_file, *addr, *collective;
	int ranks, timeout_s, json;
	uint64_t size;
};

struct lu {
	struct lu_opts o;
	struct sdp_ev *ev;
	int coll_type; /* UROM_WORKER_CMD_COLL_* of --collective */
	char run_dir[PATH_MAX];
	char addr[320];
	char secret[PATH_MAX];
};

/* One rank (a forked process). */
struct lu_rank {
	struct lu *lu;
	uint32_t rank, n;
	uint16_t port;
	const uint8_t *oob_secret;
	struct sdp_urom_oob *oob;
	struct doca_pe *pe;
	struct doca_urom_service *svc;
	struct doca_dev *dev;
	struct doca_urom_worker *w;
	struct doca_urom_domain *dom;
	struct sdp_urom_mem *mem[2];
	uint8_t *seg[2];
	size_t seglen[2];
	uint64_t va[LU_MAXR][2]; /* every rank's segment addresses */
	uint64_t rma_id, rma_version, coll_id, coll_version;
	int64_t deadline; /* monotonic ms: every wait of the rank ends by then */
	struct json_object *mat, *det;
	char phase[48];
	doca_error_t err;
	char what[256];
	int failed; /* this rank's own failure (phase, err, what) */
	char log[PATH_MAX];
};

#define LU_OOB_SECRET_LEN 32

/* ---- small helpers -------------------------------------------------------------------------- */

static int64_t lu_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t lu_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void lu_sleep_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static struct json_object *lu_errj(doca_error_t e)
{
	return json_object_new_string(doca_error_get_name(e));
}

/* Milliseconds left until the rank's deadline (at least 1). */
static int lu_left(const struct lu_rank *r)
{
	int64_t left = r->deadline - lu_now_ms();

	return left < 1 ? 1 : (int)(left > INT32_MAX ? INT32_MAX : left);
}

/* Record the rank's own failure (the first one counts); returns -1. */
static int __attribute__((format(printf, 4, 5)))
lu_rfail(struct lu_rank *r, const char *phase, doca_error_t err, const char *fmt, ...)
{
	va_list ap;

	if (r->failed)
		return -1;
	r->failed = 1;
	snprintf(r->phase, sizeof(r->phase), "%s", phase);
	r->err = err;
	va_start(ap, fmt);
	vsnprintf(r->what, sizeof(r->what), fmt, ap);
	va_end(ap);
	fprintf(stderr, "      rank %u: %s: %s%s%s\n", r->rank, phase, r->what,
		err != DOCA_SUCCESS ? ": " : "",
		err != DOCA_SUCCESS ? doca_error_get_name(err) : "");
	return -1;
}

/* Progress pe once, then sleep on its notification handle for at most slice_ms. */
static void lu_pe_step(struct doca_pe *pe, int slice_ms)
{
	doca_notification_handle_t h;

	if (doca_pe_progress(pe))
		return;
	if (doca_pe_get_notification_handle(pe, &h) == DOCA_SUCCESS &&
	    doca_pe_request_notification(pe) == DOCA_SUCCESS) {
		struct pollfd p = {.fd = (int)h, .events = POLLIN};

		if (poll(&p, 1, slice_ms) > 0)
			(void)doca_pe_clear_notification(pe, h);
	} else {
		lu_sleep_ms(slice_ms);
	}
	(void)doca_pe_progress(pe);
}

/* Progress until ctx is in want or in IDLE, bounded by the rank's deadline. */
static enum doca_ctx_states lu_wait_state(struct lu_rank *r, struct doca_ctx *ctx,
					  enum doca_ctx_states want)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_IDLE;

	for (;;) {
		if (doca_ctx_get_state(ctx, &st) != DOCA_SUCCESS || st == want ||
		    (st == DOCA_CTX_STATE_IDLE && want != DOCA_CTX_STATE_IDLE) ||
		    lu_now_ms() >= r->deadline)
			return st;
		lu_pe_step(r->pe, 5);
	}
}

/* Every rank's ok ANDed (an allgather of the OOB, so also a barrier); 0 when the OOB failed. */
static int lu_barrier(struct lu_rank *r, int ok)
{
	int all[LU_MAXR] = {0};
	doca_error_t st;

	if (r->n == 1)
		return ok;
	st = sdp_urom_oob_allgather(r->oob, &ok, all, sizeof(ok));
	if (st != DOCA_SUCCESS) {
		lu_rfail(r, "oob", st, "the out-of-band barrier between the ranks failed");
		return 0;
	}
	for (uint32_t k = 0; k < r->n; k++)
		if (!all[k])
			return 0;
	return 1;
}

/* ---- rank set-up and tear-down -------------------------------------------------------------- */

enum {
	LU_WANT_RMA = 1,
	LU_WANT_COLL = 2
};

static doca_error_t lu_open_first_dev(struct doca_dev **dev_p)
{
	struct doca_devinfo **list;
	uint32_t n = 0;
	doca_error_t st = doca_devinfo_create_list(&list, &n);

	if (st != DOCA_SUCCESS)
		return st;
	st = n > 0 ? doca_dev_open(list[0], dev_p) : DOCA_ERROR_NOT_FOUND;
	doca_devinfo_destroy_list(list);
	return st;
}

/* The service's entry for this rank's worker (an owner with this pid) into det "worker". */
static void lu_find_worker(struct lu_rank *r)
{
	struct json_object *doc, *workers;
	char *json = NULL, err[256];

	if (sdp_cli_service_status(r->lu->o.run_dir, r->lu->o.secret_file, r->lu->o.addr, 5000,
				   &json, err, sizeof(err)) != 0) {
		json_object_object_add(r->det, "service_worker_error", json_object_new_string(err));
		return;
	}
	doc = json_tokener_parse(json);
	free(json);
	if (doc != NULL && json_object_object_get_ex(doc, "workers", &workers) &&
	    json_object_is_type(workers, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(workers); i++) {
			struct json_object *w = json_object_array_get_idx(workers, i), *owners, *v;

			if (!json_object_object_get_ex(w, "owners", &owners) ||
			    !json_object_is_type(owners, json_type_array))
				continue;
			for (size_t j = 0; j < json_object_array_length(owners); j++) {
				struct json_object *o = json_object_array_get_idx(owners, j);

				if (!json_object_object_get_ex(o, "pid", &v) ||
				    json_object_get_int64(v) != (int64_t)getpid())
					continue;
				json_object_object_add(r->det, "service_worker",
						       json_object_get(w));
				if (json_object_object_get_ex(w, "log", &v) && r->log[0] == '\0')
					snprintf(r->log, sizeof(r->log), "%s",
						 json_object_get_string(v));
				json_object_put(doc);
				return;
			}
		}
	}
	json_object_object_add(r->det, "service_worker_error",
			       json_object_new_string("the service lists no worker of this rank"));
	json_object_put(doc);
}

/* Service context, plugin discovery and host-half init, worker with mask (want_mask). */
static int lu_open_worker(struct lu_rank *r, int init, int want_mask, uint32_t max_inflight)
{
	const struct doca_urom_service_plugin_info *pl;
	struct doca_ctx *ctx;
	enum doca_ctx_states st;
	uint64_t mask = 0;
	doca_error_t s;
	size_t n = 0;

	s = doca_pe_create(&r->pe);
	if (s != DOCA_SUCCESS)
		return lu_rfail(r, "setup", s, "doca_pe_create");
	s = doca_urom_service_create(&r->svc);
	if (s == DOCA_SUCCESS)
		s = doca_pe_connect_ctx(r->pe, doca_urom_service_as_ctx(r->svc));
	if (s == DOCA_SUCCESS && lu_open_first_dev(&r->dev) == DOCA_SUCCESS)
		s = doca_urom_service_set_dev(r->svc, r->dev);
	if (s != DOCA_SUCCESS)
		return lu_rfail(r, "setup", s, "service context");
	s = doca_ctx_start(doca_urom_service_as_ctx(r->svc));
	if (s == DOCA_ERROR_IN_PROGRESS) {
		st = lu_wait_state(r, doca_urom_service_as_ctx(r->svc), DOCA_CTX_STATE_RUNNING);
		s = st == DOCA_CTX_STATE_RUNNING ?
			    DOCA_SUCCESS :
		    st == DOCA_CTX_STATE_IDLE ?
			    sdp_ctx_get_last_error(doca_urom_service_as_ctx(r->svc)) :
			    DOCA_ERROR_TIME_OUT;
	}
	if (s != DOCA_SUCCESS)
		return lu_rfail(r, "service-connect", s, "starting the service context");
	s = doca_urom_service_get_plugins_list(r->svc, &pl, &n);
	if (s != DOCA_SUCCESS)
		return lu_rfail(r, "plugins", s, "doca_urom_service_get_plugins_list");
	for (size_t i = 0; i < n; i++) {
		if (strcmp(pl[i].plugin_name, "worker_rma") == 0) {
			r->rma_id = pl[i].id;
			r->rma_version = pl[i].version;
		} else if (strcmp(pl[i].plugin_name, "worker_coll") == 0) {
			r->coll_id = pl[i].id;
			r->coll_version = pl[i].version;
		}
	}
	if ((init & LU_WANT_RMA) != 0) {
		if (r->rma_id == 0)
			return lu_rfail(r, "plugins", DOCA_ERROR_NOT_FOUND,
					"the service offers no worker_rma");
		s = urom_rma_init(r->rma_id, r->rma_version);
		if (s != DOCA_SUCCESS)
			return lu_rfail(r, "plugins", s,
					"worker_rma version %#" PRIx64 ", expected %#x",
					r->rma_version, UROM_WORKER_RMA_VERSION);
		urom_rma_set_local_id(r->rank);
	}
	if ((init & LU_WANT_COLL) != 0) {
		if (r->coll_id == 0)
			return lu_rfail(r, "plugins", DOCA_ERROR_NOT_FOUND,
					"the service offers no worker_coll");
		s = urom_coll_init(r->coll_id, r->coll_version);
		if (s != DOCA_SUCCESS)
			return lu_rfail(r, "plugins", s,
					"worker_coll version %#" PRIx64 ", expected %#x",
					r->coll_version, UROM_WORKER_COLL_VERSION);
	}
	if ((want_mask & LU_WANT_RMA) != 0)
		mask |= r->rma_id;
	if ((want_mask & LU_WANT_COLL) != 0)
		mask |= r->coll_id;
	s = doca_urom_worker_create(&r->w);
	if (s != DOCA_SUCCESS)
		return lu_rfail(r, "worker-start", s, "doca_urom_worker_create");
	ctx = doca_urom_worker_as_ctx(r->w);
	s = doca_urom_worker_set_service(r->w, r->svc);
	if (s == DOCA_SUCCESS)
		s = doca_pe_connect_ctx(r->pe, ctx);
	if (s == DOCA_SUCCESS)
		s = doca_urom_worker_set_id(r->w, DOCA_UROM_WORKER_ID_ANY);
	if (s == DOCA_SUCCESS)
		s = doca_urom_worker_set_max_inflight_tasks(r->w, max_inflight);
	if (s == DOCA_SUCCESS)
		s = doca_urom_worker_set_plugins(r->w, mask);
	if (s != DOCA_SUCCESS)
		return lu_rfail(r, "worker-start", s, "configuring the worker context");
	s = doca_ctx_start(ctx);
	if (s == DOCA_ERROR_IN_PROGRESS) {
		st = lu_wait_state(r, ctx, DOCA_CTX_STATE_RUNNING);
		s = st == DOCA_CTX_STATE_RUNNING ? DOCA_SUCCESS :
		    st == DOCA_CTX_STATE_IDLE	 ? sdp_ctx_get_last_error(ctx) :
						   DOCA_ERROR_TIME_OUT;
		if (s == DOCA_SUCCESS && st != DOCA_CTX_STATE_RUNNING)
			s = DOCA_ERROR_UNEXPECTED;
	}
	if (s != DOCA_SUCCESS)
		return lu_rfail(r, "worker-start", s, "starting the worker (plugins %#" PRIx64 ")",
				mask);
	lu_find_worker(r);
	return 0;
}

/* The domain over the OOB with the rank's two segments exported, and every rank's addresses. */
static int lu_open_domain(struct lu_rank *r, size_t len0, size_t len1)
{
	struct doca_urom_domain_oob_coll coll;
	uint64_t id = r->rank, mine[2], all[LU_MAXR * 2];
	doca_error_t s;

	r->seglen[0] = len0;
	r->seglen[1] = len1;
	for (int k = 0; k < 2; k++) {
		r->seg[k] = aligned_alloc(4096, (r->seglen[k] + 4095) / 4096 * 4096);
		if (r->seg[k] == NULL)
			return lu_rfail(r, "setup", DOCA_ERROR_NO_MEMORY, "segment of %zu bytes",
					r->seglen[k]);
		memset(r->seg[k], LU_GUARD, r->seglen[k]);
	}
	sdp_urom_oob_coll(r->oob, &coll);
	s = doca_urom_domain_create(&r->dom);
	if (s == DOCA_SUCCESS)
		s = doca_pe_connect_ctx(r->pe, doca_urom_domain_as_ctx(r->dom));
	if (s == DOCA_SUCCESS)
		s = doca_urom_domain_set_oob(r->dom, &coll);
	if (s == DOCA_SUCCESS)
		s = doca_urom_domain_set_workers(r->dom, &id, &r->w, 1);
	if (s == DOCA_SUCCESS)
		s = doca_urom_domain_set_buffers_count(r->dom, 2);
	if (s != DOCA_SUCCESS)
		return lu_rfail(r, "domain", s, "configuring the domain");
	for (int k = 0; k < 2; k++) {
		s = sdp_urom_domain_export_buffer(r->dom, r->seg[k], r->seglen[k], &r->mem[k]);
		if (s != DOCA_SUCCESS)
			return lu_rfail(r, "export", s, "exporting segment %d (%zu bytes)", k,
					r->seglen[k]);
	}
	s = doca_ctx_start(doca_urom_domain_as_ctx(r->dom));
	if (s == DOCA_ERROR_IN_PROGRESS) {
		enum doca_ctx_states st =
			lu_wait_state(r, doca_urom_domain_as_ctx(r->dom), DOCA_CTX_STATE_RUNNING);

		s = st == DOCA_CTX_STATE_RUNNING ?
			    DOCA_SUCCESS :
		    st == DOCA_CTX_STATE_IDLE ?
			    sdp_ctx_get_last_error(doca_urom_domain_as_ctx(r->dom)) :
			    DOCA_ERROR_TIME_OUT;
		if (s == DOCA_SUCCESS && st != DOCA_CTX_STATE_RUNNING)
			s = DOCA_ERROR_UNEXPECTED;
	}
	if (s != DOCA_SUCCESS)
		return lu_rfail(r, "domain", s, "starting the domain of %u ranks", r->n);
	mine[0] = (uint64_t)(uintptr_t)r->seg[0];
	mine[1] = (uint64_t)(uintptr_t)r->seg[1];
	s = sdp_urom_oob_allgather(r->oob, mine, all, sizeof(mine));
	if (s != DOCA_SUCCESS)
		return lu_rfail(r, "oob", s, "exchanging the segment addresses");
	for (uint32_t k = 0; k < r->n; k++) {
		r->va[k][0] = all[2 * k];
		r->va[k][1] = all[2 * k + 1];
	}
	return 0;
}

/* Stop a context (bounded: at most 5 s or the deadline, whichever is later). */
static void lu_stop_ctx(struct lu_rank *r, struct doca_ctx *ctx)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_IDLE;
	int64_t dl = lu_now_ms() + 5000;

	if (doca_ctx_get_state(ctx, &st) != DOCA_SUCCESS || st == DOCA_CTX_STATE_IDLE)
		return;
	(void)doca_ctx_stop(ctx);
	while (doca_ctx_get_state(ctx, &st) == DOCA_SUCCESS && st != DOCA_CTX_STATE_IDLE &&
	       lu_now_ms() < dl)
		lu_pe_step(r->pe, 5);
}

static void lu_close(struct lu_rank *r)
{
	if (r->dom != NULL) {
		lu_stop_ctx(r, doca_urom_domain_as_ctx(r->dom));
		(void)doca_urom_domain_destroy(r->dom);
	}
	for (int k = 0; k < 2; k++)
		if (r->mem[k] != NULL)
			(void)sdp_urom_mem_unexport(r->mem[k]);
	if (r->w != NULL) {
		lu_stop_ctx(r, doca_urom_worker_as_ctx(r->w));
		(void)doca_urom_worker_destroy(r->w);
	}
	if (r->svc != NULL) {
		lu_stop_ctx(r, doca_urom_service_as_ctx(r->svc));
		(void)doca_urom_service_destroy(r->svc);
	}
	if (r->pe != NULL)
		(void)doca_pe_destroy(r->pe);
	if (r->dev != NULL)
		(void)doca_dev_close(r->dev);
	if (r->oob != NULL)
		(void)sdp_urom_oob_destroy(r->oob);
	free(r->seg[0]);
	free(r->seg[1]);
}

/*
 * Worker (and, with more than one rank, the domain) with a barrier after each step, so that a
 * rank that failed stops the others before they wait for it. 0 when every rank is set up.
 */
static int lu_setup(struct lu_rank *r, int init, int mask, uint32_t inflight, size_t len0,
		    size_t len1)
{
	struct sdp_urom_oob_params op = {.rank = r->rank,
					 .size = r->n,
					 .secret = r->oob_secret,
					 .secret_len = LU_OOB_SECRET_LEN,
					 .timeout_ms = lu_left(r)};
	char root[64];
	doca_error_t s;
	int ok;

	if (r->n > 1 && r->oob == NULL) {
		snprintf(root, sizeof(root), "127.0.0.1:%u", r->port);
		op.root = root;
		s = sdp_urom_oob_create(&op, &r->oob);
		if (s != DOCA_SUCCESS)
			return lu_rfail(r, "oob", s, "joining the out-of-band group at %s", root);
	}
	ok = lu_open_worker(r, init, mask, inflight) == 0;
	if (r->n == 1)
		return ok ? 0 : -1;
	if (!lu_barrier(r, ok))
		return -1;
	ok = lu_open_domain(r, len0, len1) == 0;
	return lu_barrier(r, ok) ? 0 : -1;
}

/* ---- rungs 1 and 2: worker_rma between two ranks -------------------------------------------- */

static uint8_t lu_pat(unsigned seed, size_t i)
{
	return (uint8_t)(seed * 13 + i * 5 + 1);
}

static uint64_t lu_word(int k)
{
	return 0x0101010101010101ull * (uint64_t)(k + 1) ^ 0x5555000000000055ull;
}

static struct {
	int done, bad, fetched[LU_NOPS];
	doca_error_t first_bad;
} lu_cnt;

static void lu_done_cb(doca_error_t result, union doca_data cookie)
{
	(void)cookie;
	lu_cnt.done++;
	if (result != DOCA_SUCCESS && lu_cnt.bad++ == 0)
		lu_cnt.first_bad = result;
}

static void lu_fadd_cb(doca_error_t result, union doca_data cookie, uint64_t value)
{
	lu_done_cb(result, cookie);
	if (result == DOCA_SUCCESS && value < LU_NOPS)
		lu_cnt.fetched[value]++;
	else if (result == DOCA_SUCCESS && lu_cnt.bad++ == 0)
		lu_cnt.first_bad = DOCA_ERROR_UNEXPECTED;
}

/* Progress until want completions arrived (bounded); 1 when they did. */
static int lu_wait_count(struct lu_rank *r, int want)
{
	while (lu_cnt.done < want && lu_now_ms() < r->deadline)
		lu_pe_step(r->pe, 5);
	return lu_cnt.done >= want;
}

/* One RMA op: submit, wait, record {"enqueue", "completion"} under key. 0 when both succeeded. */
static int lu_rma_one(struct lu_rank *r, const char *key, int get, uint64_t local, uint64_t remote,
		      uint64_t len)
{
	union doca_data ck = {.u64 = 1};
	struct json_object *o = json_object_new_object();
	int64_t t0 = lu_now_us();
	doca_error_t s;

	memset(&lu_cnt, 0, sizeof(lu_cnt));
	s = get ? urom_rma_get(r->w, ck, 1, local, remote, len, lu_done_cb) :
		  urom_rma_put(r->w, ck, 1, local, remote, len, lu_done_cb);
	json_object_object_add(o, "enqueue", lu_errj(s));
	json_object_object_add(r->mat, key, o);
	if (s != DOCA_SUCCESS)
		return lu_rfail(r, key, s, "submitting the %s", key);
	if (!lu_wait_count(r, 1)) {
		json_object_object_add(o, "completion", json_object_new_string("none"));
		return lu_rfail(r, key, DOCA_ERROR_TIME_OUT, "no completion of the %s", key);
	}
	json_object_object_add(o, "completion",
			       lu_errj(lu_cnt.bad ? lu_cnt.first_bad : DOCA_SUCCESS));
	{
		char k2[64];

		snprintf(k2, sizeof(k2), "%s_us", key);
		json_object_object_add(r->det, k2, json_object_new_int64(lu_now_us() - t0));
	}
	if (lu_cnt.bad)
		return lu_rfail(r, key, lu_cnt.first_bad, "the %s completed with an error", key);
	return 0;
}

/* Check len bytes at p against lu_pat(seed) and the bytes around them against the guard. */
static int lu_check_region(struct lu_rank *r, const char *key, const uint8_t *base, size_t off,
			   size_t len, unsigned seed)
{
	size_t lo = off >= 64 ? off - 64 : 0;

	for (size_t i = lo; i < off + len + 64; i++) {
		uint8_t want = i >= off && i < off + len ? lu_pat(seed, i - off) : LU_GUARD;

		if (base[i] != want) {
			char msg[96];

			snprintf(msg, sizeof(msg), "byte %zd is %#x, expected %#x",
				 (ssize_t)i - (ssize_t)off, base[i], want);
			json_object_object_add(r->mat, key, json_object_new_string(msg));
			return lu_rfail(r, key, DOCA_SUCCESS, "peer memory: %s", msg);
		}
	}
	json_object_object_add(r->mat, key, json_object_new_string("ok"));
	return 0;
}

static int lu_rung1(struct lu_rank *r)
{
	int ok;

	if (lu_setup(r, LU_WANT_RMA, LU_WANT_RMA, LU_INFLIGHT, 64 << 10, 4096) != 0)
		return -1;
	if (r->rank == 0) {
		uint64_t me = (uint64_t)(uintptr_t)r->seg[0];

		for (size_t i = 0; i < 64; i++)
			r->seg[0][0x100 + i] = lu_pat(1, i);
		ok = lu_rma_one(r, "put", 0, me + 0x100, r->va[1][0] + 0x200, 64) == 0;
		ok = lu_barrier(r, ok); /* rank 1 checks */
		ok = lu_barrier(r, ok); /* rank 1 wrote the get source */
		if (ok) {
			ok = lu_rma_one(r, "get", 1, me + 0x400, r->va[1][0] + 0x300, 64) == 0;
			if (ok)
				ok = lu_check_region(r, "get_bytes", r->seg[0], 0x400, 64, 2) == 0;
		}
		return lu_barrier(r, ok) ? 0 : -1;
	}
	ok = lu_barrier(r, 1);
	if (ok)
		ok = lu_check_region(r, "put_landed", r->seg[0], 0x200, 64, 1) == 0;
	for (size_t i = 0; i < 64; i++)
		r->seg[0][0x300 + i] = lu_pat(2, i);
	ok = lu_barrier(r, ok);
	return lu_barrier(r, ok) ? 0 : -1;
}

/* Submit until not AGAIN, progressing in between (bounded); counts the AGAINs. */
#define LU_SUBMIT(r, again, call)                                                                  \
	({                                                                                         \
		doca_error_t st_;                                                                  \
		while ((st_ = (call)) == DOCA_ERROR_AGAIN && lu_now_ms() < (r)->deadline) {        \
			(again)++;                                                                 \
			lu_pe_step((r)->pe, 1);                                                    \
		}                                                                                  \
		st_;                                                                               \
	})

#define LU_WORDS 0x1000u
#define LU_COUNTER 0x2000u
#define LU_LV 0x8000u

static int lu_rung2_rank0(struct lu_rank *r)
{
	uint64_t me = (uint64_t)(uintptr_t)r->seg[0], zero = 0, peer = r->va[1][0];
	union doca_data ck = {.u64 = 2};
	struct json_object *o;
	int k, n, again = 0, seen_ok = 1;
	doca_error_t s;

	memcpy(r->seg[0] + LU_LV - 8, &zero, 8);
	s = urom_rma_put_wait(r->w, r->pe, 1, me + LU_LV - 8, peer + LU_COUNTER, 8, lu_left(r));
	if (s != DOCA_SUCCESS)
		return lu_rfail(r, "put", s, "zeroing the peer's counter");
	for (k = 0; k < LU_NOPS; k++) {
		uint64_t v = lu_word(k);

		memcpy(r->seg[0] + LU_LV + k * 8, &v, 8);
	}
	memset(&lu_cnt, 0, sizeof(lu_cnt));
	for (k = 0; k < LU_NOPS; k++) {
		s = LU_SUBMIT(r, again,
			      urom_rma_put(r->w, ck, 1, me + LU_LV + k * 8, peer + LU_WORDS + k * 8,
					   8, lu_done_cb));
		if (s != DOCA_SUCCESS)
			return lu_rfail(r, "put", s, "submitting put %d of %d", k, LU_NOPS);
		(void)doca_pe_progress(r->pe);
		s = LU_SUBMIT(r, again,
			      urom_rma_atomic(r->w, ck, UROM_RMA_ATOMIC_FADD, 8, 1,
					      peer + LU_COUNTER, 1, 0, lu_fadd_cb));
		if (s != DOCA_SUCCESS)
			return lu_rfail(r, "fetch-add", s, "submitting fetch-add %d of %d", k,
					LU_NOPS);
		(void)doca_pe_progress(r->pe);
		if (k % 25 == 24)
			fprintf(stderr, "      ... %d/%d puts and fetch-adds submitted\n", k + 1,
				LU_NOPS);
	}
	(void)lu_wait_count(r, 2 * LU_NOPS);
	o = json_object_new_object();
	json_object_object_add(o, "submitted", json_object_new_int(2 * LU_NOPS));
	json_object_object_add(o, "completed", json_object_new_int(lu_cnt.done));
	json_object_object_add(o, "failed", json_object_new_int(lu_cnt.bad));
	json_object_object_add(o, "first_error",
			       lu_cnt.bad ? lu_errj(lu_cnt.first_bad) : json_object_new_null());
	json_object_object_add(r->mat, "ops", o);
	json_object_object_add(r->det, "again_on_submit", json_object_new_int(again));
	if (lu_cnt.done < 2 * LU_NOPS)
		return lu_rfail(r, "completions", DOCA_ERROR_TIME_OUT, "%d of %d completions",
				lu_cnt.done, 2 * LU_NOPS);
	if (lu_cnt.bad)
		return lu_rfail(r, "completions", lu_cnt.first_bad, "%d of %d completions failed",
				lu_cnt.bad, 2 * LU_NOPS);
	for (k = 0; k < LU_NOPS; k++)
		if (lu_cnt.fetched[k] != 1)
			seen_ok = 0;
	json_object_object_add(r->mat, "fetched_values",
			       json_object_new_string(seen_ok ? "0..99 each once" : "wrong"));
	if (!seen_ok)
		return lu_rfail(r, "fetch-add-check", DOCA_SUCCESS,
				"the fetched values are not 0..99 each once");
	/* past max_inflight_tasks: AGAIN, then success after progress */
	memset(&lu_cnt, 0, sizeof(lu_cnt));
	for (n = 0; n < 4 * LU_INFLIGHT; n++) {
		s = urom_rma_flush(r->w, ck, UROM_RMA_DEST_ALL, lu_done_cb);
		if (s != DOCA_SUCCESS)
			break;
	}
	o = json_object_new_object();
	json_object_object_add(o, "max_inflight", json_object_new_int(LU_INFLIGHT));
	json_object_object_add(o, "accepted_before_again", json_object_new_int(n));
	json_object_object_add(o, "refusal", lu_errj(s));
	json_object_object_add(r->mat, "again_path", o);
	if (s != DOCA_ERROR_AGAIN || n != LU_INFLIGHT)
		return lu_rfail(r, "again-path", s == DOCA_ERROR_AGAIN ? DOCA_SUCCESS : s,
				"%d submissions accepted before %s, expected %d before AGAIN", n,
				doca_error_get_name(s), LU_INFLIGHT);
	if (!lu_wait_count(r, 1))
		return lu_rfail(r, "again-path", DOCA_ERROR_TIME_OUT,
				"no flush completed after AGAIN");
	s = urom_rma_flush(r->w, ck, UROM_RMA_DEST_ALL, lu_done_cb);
	json_object_object_add(o, "after_progress", lu_errj(s));
	if (s != DOCA_SUCCESS)
		return lu_rfail(r, "again-path", s, "a submission after progress was refused");
	if (!lu_wait_count(r, n + 1) || lu_cnt.bad)
		return lu_rfail(r, "again-path",
				lu_cnt.bad ? lu_cnt.first_bad : DOCA_ERROR_TIME_OUT,
				"the flushes did not all complete");
	return 0;
}

static int lu_rung2(struct lu_rank *r)
{
	int ok;

	if (lu_setup(r, LU_WANT_RMA, LU_WANT_RMA, LU_INFLIGHT, 64 << 10, 4096) != 0)
		return -1;
	if (r->rank == 0) {
		ok = lu_rung2_rank0(r) == 0;
		return lu_barrier(r, ok) ? 0 : -1; /* rank 1 checks after this */
	}
	ok = lu_barrier(r, 1);
	if (ok) {
		uint64_t v;
		int k;

		for (k = 0; k < LU_NOPS; k++) {
			memcpy(&v, r->seg[0] + LU_WORDS + k * 8, 8);
			if (v != lu_word(k))
				break;
		}
		json_object_object_add(r->mat, "peer_words",
				       json_object_new_string(k == LU_NOPS ? "ok" : "wrong"));
		if (k != LU_NOPS)
			return lu_rfail(r, "peer-memory", DOCA_SUCCESS,
					"word %d is %#" PRIx64 ", expected %#" PRIx64, k, v,
					lu_word(k));
		memcpy(&v, r->seg[0] + LU_COUNTER, 8);
		json_object_object_add(r->mat, "peer_counter", json_object_new_int64((int64_t)v));
		if (v != LU_NOPS)
			return lu_rfail(r, "peer-memory", DOCA_SUCCESS,
					"the counter is %" PRIu64 ", expected %d", v, LU_NOPS);
	}
	return ok ? 0 : -1;
}

/* ---- collectives (rungs 3 and 5) ------------------------------------------------------------ */

static const struct {
	const char *name;
	int type;
} lu_colls[] = {
	{"allreduce", UROM_WORKER_CMD_COLL_ALLREDUCE},
	{"alltoall", UROM_WORKER_CMD_COLL_ALLTOALL},
	{"allgather", UROM_WORKER_CMD_COLL_ALLGATHER},
	{"bcast", UROM_WORKER_CMD_COLL_BCAST},
	{"reduce", UROM_WORKER_CMD_COLL_REDUCE},
	{"reduce_scatter", UROM_WORKER_CMD_COLL_REDUCE_SCATTER},
	{"barrier", UROM_WORKER_CMD_COLL_BARRIER},
};

static const char *lu_coll_name(int type)
{
	for (size_t i = 0; i < sizeof(lu_colls) / sizeof(lu_colls[0]); i++)
		if (lu_colls[i].type == type)
			return lu_colls[i].name;
	return "?";
}

static int lu_coll_reduces(int type)
{
	return type == UROM_WORKER_CMD_COLL_ALLREDUCE || type == UROM_WORKER_CMD_COLL_REDUCE ||
	       type == UROM_WORKER_CMD_COLL_REDUCE_SCATTER;
}

/*
 * The element count of a collective whose every member sends bytes (reductions in int64,
 * the others in bytes; alltoall and reduce_scatter split the send buffer in n blocks).
 */
static uint64_t lu_coll_count(int type, uint64_t bytes, uint32_t n)
{
	switch (type) {
	case UROM_WORKER_CMD_COLL_ALLREDUCE:
	case UROM_WORKER_CMD_COLL_REDUCE:
		return bytes / 8;
	case UROM_WORKER_CMD_COLL_REDUCE_SCATTER:
		return bytes / 8 / n;
	case UROM_WORKER_CMD_COLL_ALLTOALL:
		return bytes / n;
	case UROM_WORKER_CMD_COLL_BARRIER:
		return 0;
	default:
		return bytes;
	}
}

/* Send and receive bytes of a rank for a collective of count elements. */
static void lu_coll_sizes(int type, uint64_t count, uint32_t n, size_t *sbytes, size_t *rbytes)
{
	size_t es = lu_coll_reduces(type) ? 8 : 1;

	switch (type) {
	case UROM_WORKER_CMD_COLL_REDUCE_SCATTER:
		*sbytes = n * count * es, *rbytes = count * es;
		break;
	case UROM_WORKER_CMD_COLL_ALLTOALL:
		*sbytes = *rbytes = n * count;
		break;
	case UROM_WORKER_CMD_COLL_ALLGATHER:
		*sbytes = count, *rbytes = n * count;
		break;
	default:
		*sbytes = *rbytes = count * es;
		break;
	}
}

/* Contribution of member id: byte k of the block for position j; reduction element i. */
static uint8_t lu_cpat(uint64_t id, uint64_t j, size_t k, uint64_t seq)
{
	return (uint8_t)(id * 37 + j * 11 + k * 7 + (k >> 9) * 3 + seq * 13 + 1);
}

static int64_t lu_gen(uint64_t id, size_t i, uint64_t seq)
{
	return (int64_t)((id * 131u + i * 17u + seq * 7u) % 201u) - 100;
}

#define LU_SOFF 64u  /* the send buffer's offset in segment 0 */
#define LU_ROFF 128u /* the receive buffer's offset in segment 1 */

/* Fill the send buffer (and the receive window's guard) for one collective. */
static void lu_coll_prep(struct lu_rank *r, int type, uint64_t count, uint64_t seq)
{
	uint8_t *s = r->seg[0] + LU_SOFF;
	uint64_t me = r->rank;

	memset(r->seg[1], LU_GUARD, r->seglen[1]);
	switch (type) {
	case UROM_WORKER_CMD_COLL_ALLREDUCE:
	case UROM_WORKER_CMD_COLL_REDUCE:
	case UROM_WORKER_CMD_COLL_REDUCE_SCATTER: {
		uint64_t m = type == UROM_WORKER_CMD_COLL_REDUCE_SCATTER ? r->n * count : count;

		for (uint64_t i = 0; i < m; i++) {
			int64_t v = lu_gen(me, i, seq);

			memcpy(s + i * 8, &v, 8);
		}
		break;
	}
	case UROM_WORKER_CMD_COLL_ALLTOALL:
		for (uint32_t j = 0; j < r->n; j++)
			for (uint64_t k = 0; k < count; k++)
				s[j * count + k] = lu_cpat(me, j, k, seq);
		break;
	case UROM_WORKER_CMD_COLL_BCAST:
	case UROM_WORKER_CMD_COLL_ALLGATHER:
		for (uint64_t k = 0; k < count; k++)
			s[k] = lu_cpat(me, 0, k, seq);
		break;
	default:
		break;
	}
}

/* Check the receive window against the host reference; NULL when right, else what is wrong. */
static const char *lu_coll_check(struct lu_rank *r, int type, uint64_t count, uint64_t seq,
				 char *msg, size_t msglen)
{
	const uint8_t *rb = r->seg[1] + LU_ROFF;
	size_t sbytes, rbytes, end;
	uint32_t n = r->n;

	lu_coll_sizes(type, count, n, &sbytes, &rbytes);
	if (type == UROM_WORKER_CMD_COLL_BARRIER ||
	    (type == UROM_WORKER_CMD_COLL_REDUCE && r->rank != 0))
		rbytes = 0;
	switch (type) {
	case UROM_WORKER_CMD_COLL_ALLREDUCE:
	case UROM_WORKER_CMD_COLL_REDUCE:
	case UROM_WORKER_CMD_COLL_REDUCE_SCATTER: {
		uint64_t from = type == UROM_WORKER_CMD_COLL_REDUCE_SCATTER ? r->rank * count : 0;

		for (uint64_t i = 0; i < rbytes / 8; i++) {
			int64_t want = 0, got;

			for (uint32_t m = 0; m < n; m++)
				want = (int64_t)((uint64_t)want +
						 (uint64_t)lu_gen(m, from + i, seq));
			memcpy(&got, rb + i * 8, 8);
			if (got != want) {
				snprintf(msg, msglen,
					 "element %" PRIu64 " is %" PRId64
					 ", the reference %" PRId64,
					 i, got, want);
				return msg;
			}
		}
		break;
	}
	case UROM_WORKER_CMD_COLL_ALLTOALL:
		for (uint32_t j = 0; j < n; j++)
			for (uint64_t k = 0; k < count; k++)
				if (rb[j * count + k] != lu_cpat(j, r->rank, k, seq)) {
					snprintf(msg, msglen,
						 "byte %" PRIu64 " of the block from rank %u wrong",
						 k, j);
					return msg;
				}
		break;
	case UROM_WORKER_CMD_COLL_ALLGATHER:
		for (uint32_t j = 0; j < n; j++)
			for (uint64_t k = 0; k < count; k++)
				if (rb[j * count + k] != lu_cpat(j, 0, k, seq)) {
					snprintf(msg, msglen,
						 "byte %" PRIu64 " of the block from rank %u wrong",
						 k, j);
					return msg;
				}
		break;
	case UROM_WORKER_CMD_COLL_BCAST:
		for (uint64_t k = 0; k < count; k++)
			if (rb[k] != lu_cpat(0, 0, k, seq)) {
				snprintf(msg, msglen, "byte %" PRIu64 " differs from rank 0's", k);
				return msg;
			}
		break;
	default:
		break;
	}
	/* the rest of the receive window as it was */
	end = LU_ROFF + rbytes;
	for (size_t i = 0; i < r->seglen[1]; i++) {
		if (i == LU_ROFF)
			i = end;
		if (i < r->seglen[1] && r->seg[1][i] != LU_GUARD) {
			snprintf(msg, msglen, "byte %zd outside the result was written",
				 (ssize_t)i - (ssize_t)LU_ROFF);
			return msg;
		}
	}
	return NULL;
}

/* Start one collective on team (counts in elements). */
static doca_error_t lu_coll_start(struct lu_rank *r, struct urom_coll_team *t, int type,
				  uint64_t count, struct urom_coll_req **req)
{
	const void *s = r->seg[0] + LU_SOFF;
	void *rb = r->seg[1] + LU_ROFF;

	switch (type) {
	case UROM_WORKER_CMD_COLL_ALLREDUCE:
		return urom_coll_allreduce(t, s, rb, count, UROM_COLL_INT64, UROM_COLL_SUM, req);
	case UROM_WORKER_CMD_COLL_REDUCE:
		return urom_coll_reduce(t, s, rb, count, UROM_COLL_INT64, UROM_COLL_SUM, 0, req);
	case UROM_WORKER_CMD_COLL_REDUCE_SCATTER:
		return urom_coll_reduce_scatter(t, s, rb, count, UROM_COLL_INT64, UROM_COLL_SUM,
						req);
	case UROM_WORKER_CMD_COLL_ALLTOALL:
		return urom_coll_alltoall(t, s, rb, count, UROM_COLL_UINT8, req);
	case UROM_WORKER_CMD_COLL_ALLGATHER:
		return urom_coll_allgather(t, s, rb, count, UROM_COLL_UINT8, req);
	case UROM_WORKER_CMD_COLL_BCAST:
		/* the root's receive buffer gets the data too (rbuf != sbuf) */
		return urom_coll_bcast(t, s, rb, count, UROM_COLL_UINT8, 0, req);
	default:
		return urom_coll_barrier(t, req);
	}
}

/* One collective: prepare, start, wait, check; its evidence under key. 0 when right. */
static int lu_coll_one(struct lu_rank *r, struct urom_coll_team *t, const char *key, int type,
		       uint64_t count, uint64_t seq, struct json_object *mat,
		       struct json_object *det)
{
	struct json_object *o = json_object_new_object(), *d = json_object_new_object();
	struct urom_coll_req *req = NULL;
	const char *bad;
	char msg[160];
	int64_t t0;
	doca_error_t s;

	json_object_object_add(mat, key, o);
	json_object_object_add(det, key, d);
	json_object_object_add(o, "collective", json_object_new_string(lu_coll_name(type)));
	json_object_object_add(o, "count", json_object_new_int64((int64_t)count));
	json_object_object_add(o, "ranks", json_object_new_int((int)r->n));
	lu_coll_prep(r, type, count, seq);
	t0 = lu_now_us();
	s = lu_coll_start(r, t, type, count, &req);
	json_object_object_add(o, "enqueue", lu_errj(s));
	if (s != DOCA_SUCCESS)
		return lu_rfail(r, lu_coll_name(type), s, "starting the %s", lu_coll_name(type));
	s = urom_coll_wait(req, lu_left(r));
	json_object_object_add(d, "elapsed_us", json_object_new_int64(lu_now_us() - t0));
	if (s == DOCA_ERROR_TIME_OUT) {
		urom_coll_req_free(req);
		json_object_object_add(o, "completion", json_object_new_string("none"));
		return lu_rfail(r, lu_coll_name(type), s, "no completion of the %s",
				lu_coll_name(type));
	}
	json_object_object_add(o, "completion", lu_errj(s));
	if (s != DOCA_SUCCESS)
		return lu_rfail(r, lu_coll_name(type), s, "the %s completed with an error",
				lu_coll_name(type));
	bad = lu_coll_check(r, type, count, seq, msg, sizeof(msg));
	json_object_object_add(o, "memory", json_object_new_string(bad ? bad : "ok"));
	if (bad != NULL)
		return lu_rfail(r, "memory-check", DOCA_SUCCESS, "%s: %s", lu_coll_name(type), bad);
	return 0;
}

/* Worker with worker_coll, a domain with segments of len0 / len1, a team of every rank. */
static int lu_coll_open(struct lu_rank *r, size_t len0, size_t len1, struct urom_coll_team **t)
{
	uint64_t ids[LU_MAXR];
	doca_error_t s;

	if (lu_setup(r, LU_WANT_COLL, LU_WANT_COLL, 64, len0, len1) != 0)
		return -1;
	for (uint32_t k = 0; k < r->n; k++)
		ids[k] = k;
	s = urom_coll_team_create(r->w, r->pe, 0x1adde7, r->rank, ids, r->n, t);
	if (s == DOCA_SUCCESS)
		s = urom_coll_team_wait_ready(*t, lu_left(r));
	if (s != DOCA_SUCCESS)
		return lu_rfail(r, "team", s, "creating the team of %u ranks", r->n);
	return 0;
}

static void lu_coll_close(struct lu_rank *r, struct urom_coll_team *t)
{
	if (t != NULL && urom_coll_team_destroy(t, 5000) != DOCA_SUCCESS)
		fprintf(stderr, "      rank %u: the team was not destroyed cleanly\n", r->rank);
}

static int lu_rung3(struct lu_rank *r)
{
	struct urom_coll_team *t = NULL;
	size_t bytes = LU_SMALL_COUNT * 8 * LU_MAXR + 4096;
	int ok;

	ok = lu_coll_open(r, bytes, bytes + 4096, &t) == 0;
	ok = lu_barrier(r, ok);
	if (ok)
		ok = lu_coll_one(r, t, "allreduce", UROM_WORKER_CMD_COLL_ALLREDUCE, LU_SMALL_COUNT,
				 1, r->mat, r->det) == 0;
	ok = lu_barrier(r, ok);
	if (ok)
		ok = lu_coll_one(r, t, "alltoall", UROM_WORKER_CMD_COLL_ALLTOALL, LU_SMALL_COUNT, 2,
				 r->mat, r->det) == 0;
	ok = lu_barrier(r, ok);
	lu_coll_close(r, t);
	return ok ? 0 : -1;
}

static int lu_rung5(struct lu_rank *r)
{
	struct urom_coll_team *t = NULL;
	int type = r->lu->coll_type;
	uint64_t count = lu_coll_count(type, r->lu->o.size, r->n);
	size_t sbytes, rbytes;
	int ok;

	lu_coll_sizes(type, count, r->n, &sbytes, &rbytes);
	ok = lu_coll_open(r, sbytes + 2 * LU_SOFF, rbytes + 2 * LU_ROFF, &t) == 0;
	ok = lu_barrier(r, ok);
	if (ok) {
		int64_t t0 = lu_now_us();

		ok = lu_coll_one(r, t, "pattern", type, count, 5, r->mat, r->det) == 0;
		json_object_object_add(r->det, "pattern_us",
				       json_object_new_int64(lu_now_us() - t0));
		json_object_object_add(r->det, "send_bytes",
				       json_object_new_int64((int64_t)sbytes));
	}
	ok = lu_barrier(r, ok);
	lu_coll_close(r, t);
	return ok ? 0 : -1;
}

/* ---- rung 4: the capability negative -------------------------------------------------------- */

static int lu_rung4(struct lu_rank *r)
{
	struct urom_coll_team *t = NULL;
	uint64_t me = 0;
	doca_error_t s;
	struct json_object *wp;

	/* both host halves initialised, the worker started with worker_rma only */
	if (lu_open_worker(r, LU_WANT_RMA | LU_WANT_COLL, LU_WANT_RMA, LU_INFLIGHT) != 0)
		return -1;
	json_object_object_add(r->mat, "discovered_worker_coll",
			       json_object_new_boolean(r->coll_id != 0));
	wp = json_object_new_array();
	json_object_array_add(wp, json_object_new_string("worker_rma"));
	json_object_object_add(r->mat, "worker_plugins", wp);
	fprintf(stderr, "      a collective on a worker without worker_coll (the library logs "
			"the refusal)\n");
	s = urom_coll_team_create(r->w, r->pe, 0x4e4547, me, &me, 1, &t);
	if (s == DOCA_SUCCESS) {
		s = urom_coll_team_wait_ready(t, lu_left(r));
		if (urom_coll_team_destroy(t, 5000) != DOCA_SUCCESS && s == DOCA_SUCCESS)
			s = DOCA_ERROR_UNEXPECTED;
	}
	json_object_object_add(r->mat, "collective_on_worker_without_coll", lu_errj(s));
	json_object_object_add(
		r->mat, "matches_discovery",
		json_object_new_boolean(s == DOCA_ERROR_NOT_SUPPORTED && r->coll_id != 0));
	if (s == DOCA_SUCCESS)
		return lu_rfail(r, "capability", DOCA_SUCCESS,
				"a worker without worker_coll accepted a collective command");
	if (s != DOCA_ERROR_NOT_SUPPORTED)
		return lu_rfail(r, "capability", s,
				"a collective on a worker without worker_coll did not answer "
				"NOT_SUPPORTED");
	return 0;
}

/* ---- running a group of ranks --------------------------------------------------------------- */

typedef int (*lu_rank_fn)(struct lu_rank *r);

/* The child: run fn as rank, write its result into fd, exit. */
static void __attribute__((noreturn))
lu_child(struct lu *lu, uint32_t rank, uint32_t n, uint16_t port, struct sdp_urom_oob *oob,
	 const uint8_t *secret, lu_rank_fn fn, int fd, int64_t deadline)
{
	struct lu_rank r;
	struct json_object *res;
	const char *s;
	size_t len;
	int rc;

	memset(&r, 0, sizeof(r));
	r.lu = lu;
	r.rank = rank;
	r.n = n;
	r.port = port;
	r.oob = oob;
	r.oob_secret = secret;
	r.deadline = deadline;
	r.mat = json_object_new_object();
	r.det = json_object_new_object();
	rc = fn(&r);
	/* the result goes out before the tear-down, which a stuck worker may hold up */
	res = json_object_new_object();
	json_object_object_add(res, "rank", json_object_new_int((int)rank));
	json_object_object_add(res, "ok", json_object_new_boolean(rc == 0 && !r.failed));
	json_object_object_add(res, "failed", json_object_new_boolean(r.failed));
	if (r.failed) {
		json_object_object_add(res, "phase", json_object_new_string(r.phase));
		json_object_object_add(res, "error",
				       r.err == DOCA_SUCCESS ? json_object_new_null() :
							       lu_errj(r.err));
		json_object_object_add(res, "what", json_object_new_string(r.what));
	}
	if (r.log[0] != '\0')
		json_object_object_add(res, "log", json_object_new_string(r.log));
	json_object_object_add(res, "material", r.mat);
	json_object_object_add(res, "detail", r.det);
	s = json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN);
	len = strlen(s);
	while (len > 0) {
		ssize_t w = write(fd, s, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		s += w;
		len -= (size_t)w;
	}
	close(fd);
	json_object_put(res);
	lu_close(&r);
	_exit(0);
}

struct lu_group {
	uint32_t n;
	struct json_object *res[LU_MAXR]; /* each rank's result, NULL when it gave none */
	char status[LU_MAXR][96];	  /* how each rank ended, when not normally */
	int late[LU_MAXR];		  /* ended abnormally after giving its result */
	int timed_out;
};

/* Wait (bounded, sleeping on a pidfd) for pid; 1 when reaped (*st set). */
static int lu_reap(pid_t pid, int timeout_ms, int *st)
{
	int64_t dl = lu_now_ms() + timeout_ms;
	int pfd = -1;

#ifdef SYS_pidfd_open
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	for (;;) {
		pid_t w = waitpid(pid, st, WNOHANG);
		int64_t left;

		if (w == pid || (w < 0 && errno != EINTR)) {
			if (pfd >= 0)
				close(pfd);
			return 1;
		}
		left = dl - lu_now_ms();
		if (left <= 0)
			break;
		if (pfd >= 0) {
			struct pollfd p = {.fd = pfd, .events = POLLIN};

			(void)poll(&p, 1, (int)(left < 1000 ? left : 1000));
		} else {
			lu_sleep_ms(left < 10 ? (int)left : 10);
		}
	}
	if (pfd >= 0)
		close(pfd);
	return 0;
}

static void lu_group_free(struct lu_group *g)
{
	for (uint32_t k = 0; k < LU_MAXR; k++)
		json_object_put(g->res[k]);
	memset(g, 0, sizeof(*g));
}

/* Run fn on n ranks (forked), bounded by the rung timeout; their results in g. */
static int lu_group_run(struct lu *lu, uint32_t n, lu_rank_fn fn, struct lu_group *g)
{
	uint8_t secret[LU_OOB_SECRET_LEN];
	struct sdp_urom_oob_params op = {.root = "127.0.0.1:0",
					 .rank = 0,
					 .size = n,
					 .secret = secret,
					 .secret_len = sizeof(secret)};
	struct sdp_urom_oob *root = NULL;
	int64_t t0 = lu_now_ms(), deadline = t0 + (int64_t)lu->o.timeout_s * 1000;
	pid_t pids[LU_MAXR] = {0};
	int fds[LU_MAXR], open_fds, st;
	char *buf[LU_MAXR] = {NULL};
	size_t len[LU_MAXR] = {0};
	uint16_t port = 0;

	memset(g, 0, sizeof(*g));
	g->n = n;
	for (uint32_t k = 0; k < LU_MAXR; k++)
		fds[k] = -1;
	if (getrandom(secret, sizeof(secret), 0) != (ssize_t)sizeof(secret)) {
		fprintf(stderr, "softdpu: getrandom: %s\n", strerror(errno));
		return -1;
	}
	/* the ranks' own waits end a little before the group's deadline, so they can report */
	op.timeout_ms = (int)((deadline - t0) * 8 / 10);
	if (n > 1) {
		if (sdp_urom_oob_create(&op, &root) != DOCA_SUCCESS) {
			fprintf(stderr, "softdpu: cannot open the ranks' out-of-band listener\n");
			return -1;
		}
		port = sdp_urom_oob_port(root);
	}
	fflush(stdout);
	fflush(stderr);
	for (uint32_t k = 0; k < n; k++) {
		int p[2];

		if (pipe2(p, O_CLOEXEC) != 0) {
			fprintf(stderr, "softdpu: pipe: %s\n", strerror(errno));
			break;
		}
		pids[k] = fork();
		if (pids[k] == 0) {
			(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(p[0]);
			for (uint32_t j = 0; j < k; j++)
				if (fds[j] >= 0)
					close(fds[j]);
			lu_child(lu, k, n, port, k == 0 ? root : NULL, secret, fn, p[1],
				 t0 + (deadline - t0) * 8 / 10);
		}
		close(p[1]);
		if (pids[k] < 0) {
			fprintf(stderr, "softdpu: fork: %s\n", strerror(errno));
			pids[k] = 0;
			close(p[0]);
			break;
		}
		fds[k] = p[0];
	}
	if (root != NULL)
		(void)sdp_urom_oob_destroy(root); /* rank 0 has its own copy */
	/* read every result until each pipe closes or the deadline passes */
	for (;;) {
		struct pollfd pf[LU_MAXR];
		uint32_t who[LU_MAXR];
		int64_t left = deadline - lu_now_ms();
		nfds_t np = 0;

		open_fds = 0;
		for (uint32_t k = 0; k < n; k++)
			if (fds[k] >= 0) {
				pf[np].fd = fds[k];
				pf[np].events = POLLIN;
				pf[np].revents = 0;
				who[np] = k;
				np++;
				open_fds++;
			}
		if (open_fds == 0)
			break;
		if (left <= 0) {
			g->timed_out = 1;
			break;
		}
		if (poll(pf, np, (int)(left < 1000 ? left : 1000)) < 0 && errno != EINTR)
			break;
		for (nfds_t i = 0; i < np; i++) {
			uint32_t k = who[i];
			char chunk[65536];
			ssize_t got;

			/* only what poll says is readable (or closed): a read never blocks */
			if ((pf[i].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) == 0)
				continue;
			got = read(fds[k], chunk, sizeof(chunk));
			if (got < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (got > 0 && len[k] + (size_t)got <= LU_RESULT_MAX) {
				char *nb = realloc(buf[k], len[k] + (size_t)got + 1);

				if (nb != NULL) {
					memcpy(nb + len[k], chunk, (size_t)got);
					len[k] += (size_t)got;
					nb[len[k]] = '\0';
					buf[k] = nb;
				}
				continue;
			}
			if (got > 0)
				continue; /* over the bound: dropped */
			close(fds[k]);
			fds[k] = -1;
		}
	}
	for (uint32_t k = 0; k < n; k++) {
		if (fds[k] >= 0)
			close(fds[k]);
		if (pids[k] <= 0) {
			snprintf(g->status[k], sizeof(g->status[k]), "not started");
			continue;
		}
		if (g->timed_out)
			kill(pids[k], SIGKILL);
		if (!lu_reap(pids[k], g->timed_out ? 10000 : 15000, &st)) {
			kill(pids[k], SIGKILL);
			if (!lu_reap(pids[k], 10000, &st)) {
				snprintf(g->status[k], sizeof(g->status[k]),
					 "did not exit after SIGKILL");
				continue;
			}
		}
		if (g->timed_out)
			snprintf(g->status[k], sizeof(g->status[k]),
				 "killed after the rung timeout of %d s", lu->o.timeout_s);
		else if (WIFSIGNALED(st))
			snprintf(g->status[k], sizeof(g->status[k]), "killed by signal %d",
				 WTERMSIG(st));
		else if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
			snprintf(g->status[k], sizeof(g->status[k]), "exit status %d",
				 WEXITSTATUS(st));
		if (buf[k] != NULL)
			g->res[k] = json_tokener_parse(buf[k]);
		free(buf[k]);
		buf[k] = NULL;
		if (g->res[k] != NULL && g->status[k][0] != '\0') {
			/* its result came; only its tear-down overran or failed */
			g->late[k] = 1;
		}
	}
	return 0;
}

/* ---- judging a rung from its ranks ---------------------------------------------------------- */

static const char *lu_js(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (o == NULL || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int lu_jb(struct json_object *o, const char *key)
{
	struct json_object *v;

	return o != NULL && json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

/* The DOCA error named s (DOCA_SUCCESS for NULL or an unknown name). */
static doca_error_t lu_err_by_name(const char *s)
{
	if (s == NULL)
		return DOCA_SUCCESS;
	for (int e = 0; e < 64; e++)
		if (strcmp(doca_error_get_name((doca_error_t)e), s) == 0)
			return (doca_error_t)e;
	return DOCA_SUCCESS;
}

static int lu_is_transport_err(doca_error_t e)
{
	return e == DOCA_ERROR_NOT_CONNECTED || e == DOCA_ERROR_IO_FAILED ||
	       e == DOCA_ERROR_DRIVER || e == DOCA_ERROR_CONNECTION_RESET ||
	       e == DOCA_ERROR_CONNECTION_ABORTED || e == DOCA_ERROR_CONNECTION_INPROGRESS;
}

/* The layer and next check a rank's failure (phase, err) points to. */
static void lu_classify(const char *phase, doca_error_t e, const char **layer, const char **next)
{
	if (strcmp(phase, "service-connect") == 0) {
		*layer = SDP_EV_LAYER_SERVICE, *next = LU_NEXT_SERVICE;
	} else if (strcmp(phase, "plugins") == 0) {
		if (e == DOCA_ERROR_UNSUPPORTED_VERSION)
			*layer = SDP_EV_LAYER_VERSION, *next = LU_NEXT_VERSION;
		else
			*layer = SDP_EV_LAYER_PLUGIN, *next = LU_NEXT_PLUGIN;
	} else if (lu_is_transport_err(e)) {
		*layer = SDP_EV_LAYER_TRANSPORT, *next = LU_NEXT_TRANSPORT;
	} else if (strcmp(phase, "worker-start") == 0) {
		/*
		 * The precheck found the plugins with the right versions and protocol: a worker
		 * start refused as NOT_SUPPORTED is the host's UCX context that could not be
		 * created (no usable transport or device), or a worker whose plugin would not
		 * open (its log says so).
		 */
		if (e == DOCA_ERROR_NOT_SUPPORTED)
			*layer = SDP_EV_LAYER_TRANSPORT, *next = LU_NEXT_WORKER_START;
		else if (e == DOCA_ERROR_UNSUPPORTED_VERSION)
			*layer = SDP_EV_LAYER_VERSION, *next = LU_NEXT_VERSION;
		else
			*layer = SDP_EV_LAYER_SERVICE, *next = LU_NEXT_SERVICE;
	} else if (strcmp(phase, "oob") == 0 || strcmp(phase, "domain") == 0) {
		*layer = SDP_EV_LAYER_TRANSPORT, *next = LU_NEXT_TRANSPORT;
	} else if (e == DOCA_ERROR_UNSUPPORTED_VERSION) {
		*layer = SDP_EV_LAYER_VERSION, *next = LU_NEXT_VERSION;
	} else if (e == DOCA_ERROR_NOT_SUPPORTED || strcmp(phase, "capability") == 0) {
		*layer = SDP_EV_LAYER_PLUGIN, *next = LU_NEXT_PLUGIN;
	} else if (e == DOCA_ERROR_INVALID_VALUE || e == DOCA_ERROR_NOT_FOUND ||
		   strcmp(phase, "export") == 0 ||
		   (e == DOCA_SUCCESS &&
		    (strstr(phase, "memory") != NULL || strcmp(phase, "put_landed") == 0 ||
		     strcmp(phase, "get_bytes") == 0 || strcmp(phase, "fetch-add-check") == 0))) {
		*layer = SDP_EV_LAYER_MEMORY, *next = LU_NEXT_MEMORY;
	} else if (e == DOCA_ERROR_TIME_OUT) {
		*layer = SDP_EV_LAYER_SERVICE, *next = LU_NEXT_NO_COMPLETION;
	} else {
		*layer = SDP_EV_LAYER_PROGRAM, *next = LU_NEXT_PROGRAM;
	}
}

/*
 * Record a group's results in rung r under key (NULL: at the rung's top level) and fail the
 * rung if a rank failed. 0 when every rank passed.
 */
static int lu_judge(struct sdp_ev_rung *rg, const char *key, struct lu_group *g)
{
	struct json_object *mat = json_object_new_array(), *det = json_object_new_array();
	int first = -1, first_oob = -1, dead = -1;
	char mk[64], dk[64];

	for (uint32_t k = 0; k < g->n; k++) {
		struct json_object *res = g->res[k], *m = NULL, *d = NULL, *dk2;

		if (res != NULL) {
			json_object_object_get_ex(res, "material", &m);
			json_object_object_get_ex(res, "detail", &d);
		}
		m = m != NULL ? json_object_get(m) : json_object_new_object();
		d = d != NULL ? json_object_get(d) : json_object_new_object();
		if (res != NULL && lu_jb(res, "failed")) {
			struct json_object *v;

			json_object_object_add(m, "failed_phase",
					       json_object_new_string(lu_js(res, "phase")));
			json_object_object_add(m, "failed_error",
					       json_object_object_get_ex(res, "error", &v) ?
						       json_object_get(v) :
						       NULL);
			json_object_object_add(d, "what",
					       json_object_new_string(lu_js(res, "what") ?: ""));
			/* a failed barrier is most often the echo of another rank's failure */
			if (strcmp(lu_js(res, "phase") ?: "", "oob") != 0) {
				if (first < 0)
					first = (int)k;
			} else if (first_oob < 0) {
				first_oob = (int)k;
			}
		}
		if (g->status[k][0] != '\0')
			json_object_object_add(d, "status", json_object_new_string(g->status[k]));
		if (res == NULL || (g->status[k][0] != '\0' && !g->late[k])) {
			json_object_object_add(
				m, "ended",
				json_object_new_string(res == NULL ? "no result" : "abnormally"));
			if (dead < 0)
				dead = (int)k;
		}
		if (res != NULL && lu_js(res, "log") != NULL) {
			dk2 = json_object_new_string(lu_js(res, "log"));
			json_object_object_add(d, "worker_log", dk2);
			sdp_ev_log_tail(rg, lu_js(res, "log"), LU_TAIL_LINES);
		}
		json_object_array_add(mat, m);
		json_object_array_add(det, d);
	}
	snprintf(mk, sizeof(mk), "%s", key ? key : "ranks");
	snprintf(dk, sizeof(dk), "%s", key ? key : "ranks");
	sdp_ev_material(rg, mk, mat);
	sdp_ev_detail(rg, dk, det);
	if (first < 0 && dead < 0)
		first = first_oob;
	if (first >= 0) {
		struct json_object *res = g->res[first];
		const char *phase = lu_js(res, "phase") ?: "?", *layer, *next;
		doca_error_t e = lu_err_by_name(lu_js(res, "error"));
		char trig[96];

		lu_classify(phase, e, &layer, &next);
		snprintf(trig, sizeof(trig), "%s:%s", phase,
			 e == DOCA_SUCCESS ? "check-failed" : doca_error_get_name(e));
		sdp_ev_rung_fail(rg, trig, layer, e, next, "rank %d of %u%s%s: %s: %s", first, g->n,
				 key ? ", " : "", key ? key : "", phase, lu_js(res, "what") ?: "");
		return -1;
	}
	if (g->timed_out && dead >= 0) {
		sdp_ev_rung_fail(rg, "rung-timeout", SDP_EV_LAYER_SERVICE, DOCA_ERROR_TIME_OUT,
				 LU_NEXT_NO_COMPLETION,
				 "rank %d of %u gave no result within the rung timeout (%s)", dead,
				 g->n, g->status[dead]);
		return -1;
	}
	if (dead >= 0) {
		sdp_ev_rung_fail(rg, "rank-died", SDP_EV_LAYER_PROGRAM, DOCA_SUCCESS,
				 LU_NEXT_PROGRAM, "rank %d of %u gave no result (%s)", dead, g->n,
				 g->status[dead][0] ? g->status[dead] : "no result");
		return -1;
	}
	for (uint32_t k = 0; k < g->n; k++)
		if (!lu_jb(g->res[k], "ok")) {
			sdp_ev_rung_fail(rg, "rank-not-ok", SDP_EV_LAYER_PROGRAM, DOCA_SUCCESS,
					 LU_NEXT_PROGRAM,
					 "rank %u reported no success and no failure of its own",
					 k);
			return -1;
		}
	return 0;
}

/* One rung run as a group of n ranks. */
static int lu_rung_group(struct lu *lu, int num, uint32_t n, lu_rank_fn fn)
{
	struct sdp_ev_rung *rg = sdp_ev_rung_begin(lu->ev, num, lu_names[num]);
	struct lu_group g;
	int rc;

	sdp_ev_progress(rg, "%u rank%s", n, n == 1 ? "" : "s");
	if (lu_group_run(lu, n, fn, &g) != 0) {
		sdp_ev_rung_fail(rg, "cannot-fork", SDP_EV_LAYER_PROGRAM,
				 DOCA_ERROR_OPERATING_SYSTEM, LU_NEXT_PROGRAM,
				 "the ranks could not be started");
		return -1;
	}
	rc = lu_judge(rg, NULL, &g);
	lu_group_free(&g);
	if (rc == 0)
		sdp_ev_rung_pass(rg);
	return rc;
}

static int lu_rung3_all(struct lu *lu)
{
	struct sdp_ev_rung *rg = sdp_ev_rung_begin(lu->ev, 3, lu_names[3]);
	uint32_t sizes[2] = {2, (uint32_t)lu->o.ranks};
	int nsizes = lu->o.ranks == 2 ? 1 : 2;

	for (int i = 0; i < nsizes; i++) {
		struct lu_group g;
		char key[32];
		int rc;

		snprintf(key, sizeof(key), "ranks_%u", sizes[i]);
		sdp_ev_progress(rg, "allreduce and alltoall across %u ranks", sizes[i]);
		if (lu_group_run(lu, sizes[i], lu_rung3, &g) != 0) {
			sdp_ev_rung_fail(rg, "cannot-fork", SDP_EV_LAYER_PROGRAM,
					 DOCA_ERROR_OPERATING_SYSTEM, LU_NEXT_PROGRAM,
					 "the ranks could not be started");
			return -1;
		}
		rc = lu_judge(rg, key, &g);
		lu_group_free(&g);
		if (rc != 0)
			return -1;
	}
	sdp_ev_rung_pass(rg);
	return 0;
}

static int lu_rung5_all(struct lu *lu)
{
	struct sdp_ev_rung *rg = sdp_ev_rung_begin(lu->ev, 5, lu_names[5]);
	struct lu_group g;
	int rc;

	sdp_ev_material(rg, "collective", json_object_new_string(lu_coll_name(lu->coll_type)));
	sdp_ev_material(rg, "size", json_object_new_int64((int64_t)lu->o.size));
	sdp_ev_progress(rg, "%s of %" PRIu64 " bytes across %d ranks", lu_coll_name(lu->coll_type),
			lu->o.size, lu->o.ranks);
	if (lu_group_run(lu, (uint32_t)lu->o.ranks, lu_rung5, &g) != 0) {
		sdp_ev_rung_fail(rg, "cannot-fork", SDP_EV_LAYER_PROGRAM,
				 DOCA_ERROR_OPERATING_SYSTEM, LU_NEXT_PROGRAM,
				 "the ranks could not be started");
		return -1;
	}
	rc = lu_judge(rg, NULL, &g);
	if (rc == 0) {
		/* the slowest rank's time is the pattern's */
		int64_t worst = 0;

		for (uint32_t k = 0; k < g.n; k++) {
			struct json_object *d, *v;

			if (json_object_object_get_ex(g.res[k], "detail", &d) &&
			    json_object_object_get_ex(d, "pattern_us", &v) &&
			    json_object_get_int64(v) > worst)
				worst = json_object_get_int64(v);
		}
		sdp_ev_detail(rg, "pattern_us", json_object_new_int64(worst));
		sdp_ev_progress(rg, "%s of %" PRIu64 " bytes across %d ranks: %" PRId64 " us",
				lu_coll_name(lu->coll_type), lu->o.size, lu->o.ranks, worst);
		sdp_ev_rung_pass(rg);
	}
	lu_group_free(&g);
	return rc;
}

/* ---- rung 0: the service and its plugins ---------------------------------------------------- */

static int lu_cmp_plugin(const void *a, const void *b)
{
	struct json_object *const *x = a, *const *y = b;

	return strcmp(lu_js(*x, "name") ?: "", lu_js(*y, "name") ?: "");
}

static int64_t lu_ji(struct json_object *o, const char *key, int64_t dflt)
{
	struct json_object *v;

	if (o == NULL || !json_object_object_get_ex(o, key, &v))
		return dflt;
	return json_object_get_int64(v);
}

static int lu_precheck(struct lu *lu)
{
	struct sdp_ev_rung *rg = sdp_ev_rung_begin(lu->ev, 0, lu_names[0]);
	struct json_object *doc, *plugins, *mat_pl, *det_pl, *svc, *host, *v;
	struct json_object *list[256];
	int64_t rma_v = -1, coll_v = -1, proto;
	char *json = NULL, err[512];
	size_t np = 0;

	host = json_object_new_object();
	json_object_object_add(host, "softdpu_version", json_object_new_string(SOFTDPU_VERSION));
	json_object_object_add(host, "doca_api", json_object_new_string(SDP_DOCA_API_VERSION));
	json_object_object_add(host, "protocol", json_object_new_int(SDP_UROM_PROTO_VERSION));
	json_object_object_add(host, "worker_rma_version",
			       json_object_new_int(UROM_WORKER_RMA_VERSION));
	json_object_object_add(host, "worker_coll_version",
			       json_object_new_int(UROM_WORKER_COLL_VERSION));
	sdp_ev_snapshot(lu->ev, "host", host, 0);
	sdp_ev_progress(rg, "asking the service for its status");
	if (sdp_cli_service_status(lu->o.run_dir, lu->o.secret_file, lu->o.addr,
				   lu->o.timeout_s * 1000, &json, err, sizeof(err)) != 0) {
		int not_running = strstr(err, "no service running") != NULL;
		char log[PATH_MAX + 32];

		svc = json_object_new_object();
		json_object_object_add(svc, "answers", json_object_new_boolean(0));
		json_object_object_add(svc, "running", json_object_new_boolean(!not_running));
		sdp_ev_snapshot(lu->ev, "service", svc, 0);
		sdp_ev_detail(rg, "status_error", json_object_new_string(err));
		snprintf(log, sizeof(log), "%s/%s", lu->run_dir, SDP_UROMD_LOG_FILE);
		if (access(log, R_OK) == 0)
			sdp_ev_log_tail(rg, log, LU_TAIL_LINES);
		sdp_ev_rung_fail(rg, not_running ? "service-not-running" : "service-not-answering",
				 SDP_EV_LAYER_SERVICE, DOCA_SUCCESS, LU_NEXT_SERVICE, "%s", err);
		return -1;
	}
	doc = json_tokener_parse(json);
	free(json);
	if (doc == NULL || !json_object_is_type(doc, json_type_object)) {
		json_object_put(doc);
		sdp_ev_rung_fail(rg, "service-status-garbled", SDP_EV_LAYER_SERVICE, DOCA_SUCCESS,
				 LU_NEXT_SERVICE, "the service's status document is not JSON");
		return -1;
	}
	svc = json_object_new_object();
	json_object_object_add(svc, "answers", json_object_new_boolean(1));
	json_object_object_add(svc, "version",
			       json_object_new_string(lu_js(doc, "version") ?: "?"));
	json_object_object_add(svc, "doca_api",
			       json_object_new_string(lu_js(doc, "doca_api") ?: "?"));
	proto = lu_ji(doc, "protocol", -1);
	json_object_object_add(svc, "protocol", json_object_new_int64(proto));
	sdp_ev_snapshot(lu->ev, "service", svc, 0);
	/* what changes between runs of the same service, or of equal services */
	{
		static const char *const dkeys[] = {"pid",	    "uptime_s",	   "listen",
						    "run_dir",	    "cpuset",	   "cpuset_present",
						    "max_msg_size", "max_workers", "skipped"};
		struct json_object *d = json_object_new_object();

		for (size_t i = 0; i < sizeof(dkeys) / sizeof(dkeys[0]); i++)
			if (json_object_object_get_ex(doc, dkeys[i], &v))
				json_object_object_add(d, dkeys[i], json_object_get(v));
		sdp_ev_snapshot(lu->ev, "service_detail", d, 1);
	}
	mat_pl = json_object_new_array();
	det_pl = json_object_new_array();
	if (json_object_object_get_ex(doc, "plugins", &plugins) &&
	    json_object_is_type(plugins, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(plugins) && np < 256; i++)
			list[np++] = json_object_array_get_idx(plugins, i);
		qsort(list, np, sizeof(list[0]), lu_cmp_plugin);
	}
	for (size_t i = 0; i < np; i++) {
		struct json_object *m = json_object_new_object();
		const char *name = lu_js(list[i], "name") ?: "?";
		int64_t ver = lu_ji(list[i], "version", -1);

		json_object_object_add(m, "name", json_object_new_string(name));
		json_object_object_add(m, "version", json_object_new_int64(ver));
		json_object_array_add(mat_pl, m);
		json_object_array_add(det_pl, json_object_get(list[i]));
		if (strcmp(name, "worker_rma") == 0)
			rma_v = ver;
		else if (strcmp(name, "worker_coll") == 0)
			coll_v = ver;
	}
	sdp_ev_snapshot(lu->ev, "plugins", mat_pl, 0);
	sdp_ev_snapshot(lu->ev, "plugins_detail", det_pl, 1);
	sdp_ev_material(rg, "service_version",
			json_object_new_string(lu_js(doc, "version") ?: "?"));
	sdp_ev_material(rg, "worker_rma", json_object_new_int64(rma_v));
	sdp_ev_material(rg, "worker_coll", json_object_new_int64(coll_v));
	sdp_ev_progress(rg, "softdpu-uromd %s, protocol %" PRId64 ", %zu plugin%s",
			lu_js(doc, "version") ?: "?", proto, np, np == 1 ? "" : "s");
	json_object_put(doc);
	if (proto != SDP_UROM_PROTO_VERSION) {
		sdp_ev_rung_fail(rg, "protocol-mismatch", SDP_EV_LAYER_VERSION,
				 DOCA_ERROR_NOT_SUPPORTED, LU_NEXT_VERSION,
				 "the service speaks protocol %" PRId64 ", this host %d", proto,
				 SDP_UROM_PROTO_VERSION);
		return -1;
	}
	if (rma_v < 0 || coll_v < 0) {
		sdp_ev_rung_fail(rg, "plugin-missing", SDP_EV_LAYER_PLUGIN, DOCA_ERROR_NOT_FOUND,
				 LU_NEXT_PLUGIN, "the service offers no %s%s%s",
				 rma_v < 0 ? "worker_rma" : "",
				 rma_v < 0 && coll_v < 0 ? " and no " : "",
				 coll_v < 0 ? "worker_coll" : "");
		return -1;
	}
	if (rma_v != UROM_WORKER_RMA_VERSION || coll_v != UROM_WORKER_COLL_VERSION) {
		sdp_ev_rung_fail(rg, "plugin-version-mismatch", SDP_EV_LAYER_VERSION,
				 DOCA_ERROR_UNSUPPORTED_VERSION, LU_NEXT_VERSION,
				 "worker_rma %#" PRIx64 " (host half %#x), worker_coll %#" PRIx64
				 " (host half %#x)",
				 (uint64_t)rma_v, UROM_WORKER_RMA_VERSION, (uint64_t)coll_v,
				 UROM_WORKER_COLL_VERSION);
		return -1;
	}
	sdp_ev_rung_pass(rg);
	return 0;
}

/* ---- where the service is, for the ranks' host library -------------------------------------- */

static void lu_first_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (f == NULL)
		return;
	if (fgets(buf, (int)size, f) == NULL)
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\r\n")] = '\0';
}

/* Point the ranks (SOFTDPU_UROM_*) at the service the precheck asked. */
static void lu_locate(struct lu *lu)
{
	char path[PATH_MAX + 32];
	struct json_object *o = json_object_new_object();

	if (lu->o.addr != NULL) {
		snprintf(lu->addr, sizeof(lu->addr), "%s", lu->o.addr);
	} else {
		snprintf(path, sizeof(path), "%s/%s", lu->run_dir, SDP_UROMD_LISTEN_FILE);
		lu_first_line(path, lu->addr, sizeof(lu->addr));
	}
	if (lu->o.secret_file != NULL) {
		if (sdp_uromd_abs_path(lu->o.secret_file, lu->secret, sizeof(lu->secret)) !=
		    DOCA_SUCCESS)
			lu->secret[0] = '\0';
	} else {
		snprintf(path, sizeof(path), "%s/%s", lu->run_dir, SDP_UROMD_SECRET_PATH_FILE);
		lu_first_line(path, lu->secret, sizeof(lu->secret));
		if (lu->secret[0] != '/')
			lu->secret[0] = '\0';
	}
	if (lu->addr[0] != '\0')
		setenv("SOFTDPU_UROM_SERVICE_ADDR", lu->addr, 1);
	if (lu->secret[0] != '\0')
		setenv("SOFTDPU_UROM_SECRET_FILE", lu->secret, 1);
	setenv("SOFTDPU_UROM_RUN_DIR", lu->run_dir, 1);
	json_object_object_add(o, "run_dir", json_object_new_string(lu->run_dir));
	json_object_object_add(
		o, "addr",
		json_object_new_string(getenv("SOFTDPU_UROM_SERVICE_ADDR") ?: "(default)"));
	json_object_object_add(
		o, "secret_file",
		json_object_new_string(getenv("SOFTDPU_UROM_SECRET_FILE") ?: "(default)"));
	{
		static const char *const vars[] = {"UCX_NET_DEVICES", "UCX_TLS", "DOCA_LOG_LEVEL",
						   "UROM_PLUGIN_PATH"};

		for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
			json_object_object_add(
				o, vars[i],
				getenv(vars[i]) ? json_object_new_string(getenv(vars[i])) : NULL);
	}
	sdp_ev_snapshot(lu->ev, "where", o, 1);
}

/* ---- the command ---------------------------------------------------------------------------- */

static void lu_usage(FILE *out)
{
	fprintf(out,
		"Usage: softdpu ladder urom [options]\n"
		"\n"
		"Climb the UROM test ladder against the configured service, recording evidence:\n"
		"  0 service              the service answers; worker_rma and worker_coll present,\n"
		"                         with the versions of these host halves\n"
		"  1 single-pair          one PUT into a peer's exported memory and one GET back\n"
		"  2 multi-op             100 PUTs and 100 fetch-adds, every completion; AGAIN\n"
		"  3 small-collective     allreduce and alltoall across 2 and --ranks ranks\n"
		"  4 capability-negative  a worker without worker_coll refuses a collective\n"
		"  5 full-pattern         --collective at --size across --ranks ranks, timed\n"
		"A failing rung stops the climb and names the layer and the next check.\n"
		"\n"
		"Options:\n"
		"  --evidence FILE        where the evidence goes (default\n"
		"                         softdpu-ladder-urom-<UTC time>.json here); an existing\n"
		"                         file is replaced only when it is ladder evidence\n"
		"  --compare PREVIOUS     classify this run against a previous evidence file:\n"
		"                         resolved, shape-changed or unchanged\n"
		"  --ranks 2|4            ranks of the collective rungs (default 4)\n"
		"  --collective NAME      rung 5: allreduce (default), alltoall, allgather, bcast,\n"
		"                         reduce, reduce_scatter, barrier\n"
		"  --size BYTES           rung 5: bytes each rank sends (K/M suffixes; default 1M)\n"
		"  --run-dir DIR          the service's run directory (as `softdpu service status`)\n"
		"  --secret-file PATH     the service's secret\n"
		"  --addr HOST:PORT       the service's address\n"
		"  --timeout S            bound of each rung in seconds (default %d)\n"
		"  --json                 the evidence (with the comparison) as one JSON document\n"
		"                         on stdout\n"
		"Exit status: 0 every rung passed, 1 a rung failed, 2 bad usage.\n",
		LU_DEFAULT_TIMEOUT_S);
}

static int lu_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *s == '-')
		return -1;
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	if (*end != '\0' || v == 0 || v > LU_MAX_SIZE)
		return -1;
	*out = v;
	return 0;
}

static int lu_parse(int argc, char **argv, struct lu *lu)
{
	enum {
		O_EVIDENCE = 256,
		O_COMPARE,
		O_RANKS,
		O_COLL,
		O_SIZE,
		O_RUN_DIR,
		O_SECRET,
		O_ADDR,
		O_TIMEOUT,
		O_JSON
	};
	static const struct option opts[] = {
		{"evidence", required_argument, NULL, O_EVIDENCE},
		{"compare", required_argument, NULL, O_COMPARE},
		{"ranks", required_argument, NULL, O_RANKS},
		{"collective", required_argument, NULL, O_COLL},
		{"size", required_argument, NULL, O_SIZE},
		{"run-dir", required_argument, NULL, O_RUN_DIR},
		{"secret-file", required_argument, NULL, O_SECRET},
		{"addr", required_argument, NULL, O_ADDR},
		{"timeout", required_argument, NULL, O_TIMEOUT},
		{"json", no_argument, NULL, O_JSON},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct lu_opts *o = &lu->o;
	char *end;
	long v;
	int c;

	o->ranks = LU_MAXR;
	o->timeout_s = LU_DEFAULT_TIMEOUT_S;
	o->size = LU_DEFAULT_SIZE;
	o->collective = "allreduce";
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case O_EVIDENCE:
			o->evidence = optarg;
			break;
		case O_COMPARE:
			o->compare = optarg;
			break;
		case O_RANKS:
			if (strcmp(optarg, "2") != 0 && strcmp(optarg, "4") != 0) {
				fprintf(stderr, "softdpu: --ranks must be 2 or 4\n");
				return -1;
			}
			o->ranks = atoi(optarg);
			break;
		case O_COLL:
			o->collective = optarg;
			break;
		case O_SIZE:
			if (lu_parse_size(optarg, &o->size) != 0) {
				fprintf(stderr,
					"softdpu: --size must be 1 .. %u bytes (K and M suffixes)\n",
					LU_MAX_SIZE);
				return -1;
			}
			break;
		case O_RUN_DIR:
			o->run_dir = optarg;
			break;
		case O_SECRET:
			o->secret_file = optarg;
			break;
		case O_ADDR:
			o->addr = optarg;
			break;
		case O_TIMEOUT:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || v < 1 || v > 3600) {
				fprintf(stderr, "softdpu: --timeout must be 1 .. 3600 seconds\n");
				return -1;
			}
			o->timeout_s = (int)v;
			break;
		case O_JSON:
			o->json = 1;
			break;
		case 'h':
			return 1;
		case ':':
			fprintf(stderr, "softdpu: %s needs a value\n", argv[optind - 1]);
			return -1;
		default:
			fprintf(stderr, "softdpu: ladder urom: unknown option %s\n",
				argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "softdpu: ladder urom: unexpected argument %s\n", argv[optind]);
		return -1;
	}
	lu->coll_type = -1;
	for (size_t i = 0; i < sizeof(lu_colls) / sizeof(lu_colls[0]); i++)
		if (strcmp(o->collective, lu_colls[i].name) == 0)
			lu->coll_type = lu_colls[i].type;
	if (lu->coll_type < 0) {
		fprintf(stderr, "softdpu: unknown --collective %s\n", o->collective);
		return -1;
	}
	if (lu->coll_type != UROM_WORKER_CMD_COLL_BARRIER &&
	    lu_coll_count(lu->coll_type, o->size, (uint32_t)o->ranks) == 0) {
		fprintf(stderr, "softdpu: --size %" PRIu64 " is too small for %s across %d ranks\n",
			o->size, o->collective, o->ranks);
		return -1;
	}
	return 0;
}

/* Print the compare outcome for a person (stdout unless --json). */
static void lu_print_compare(struct lu *lu, enum sdp_ev_outcome out, const char *why,
			     struct json_object *doc, FILE *f)
{
	struct json_object *trig = NULL, *rungs;

	fprintf(f, "compared with %s: %s: %s\n", lu->o.compare, sdp_ev_outcome_name(out), why);
	json_object_object_get_ex(doc, "trigger", &trig);
	if (out == SDP_EV_UNCHANGED && trig != NULL) {
		int n = (int)lu_ji(trig, "rung", -1);

		fprintf(f,
			"the prescribed change did not move the failure: the cause is below UROM.\n"
			"Escalate below the library: the offload service (its log, `softdpu "
			"service status`), the transport (UCX: `ucx_info -d`, UCX_NET_DEVICES, "
			"UCX_TLS; the fabric), the UCX / MPI stack; take this evidence along.\n");
		if (json_object_object_get_ex(doc, "rungs", &rungs))
			for (size_t i = 0; i < json_object_array_length(rungs); i++) {
				struct json_object *r = json_object_array_get_idx(rungs, i);

				if (lu_ji(r, "n", -2) == n)
					fprintf(f, "evidence of the failing rung %d:\n%s\n", n,
						json_object_to_json_string_ext(
							r, JSON_C_TO_STRING_PRETTY |
								   JSON_C_TO_STRING_NOSLASHESCAPE));
			}
	} else if (out == SDP_EV_UNCHANGED) {
		fprintf(f, "both runs are green: nothing to escalate\n");
	}
}

int sdp_cli_ladder_urom(int argc, char **argv, FILE *json_out)
{
	struct lu lu;
	struct json_object *prev = NULL, *doc, *trig = NULL;
	char defpath[96];
	const char *path;
	int r, rc;

	memset(&lu, 0, sizeof(lu));
	r = lu_parse(argc, argv, &lu);
	if (r == 1) {
		lu_usage(stdout);
		return SDP_CLI_EXIT_OK;
	}
	if (r != 0) {
		lu_usage(stderr);
		return SDP_CLI_EXIT_USAGE;
	}
	if (lu.o.compare != NULL) {
		struct json_object *l;

		prev = sdp_ev_read(lu.o.compare);
		if (prev == NULL)
			return SDP_CLI_EXIT_USAGE;
		if (!json_object_object_get_ex(prev, "ladder", &l) ||
		    strcmp(json_object_get_string(l), "urom") != 0) {
			fprintf(stderr,
				"softdpu: %s is evidence of another ladder (%s), not urom\n",
				lu.o.compare, l != NULL ? json_object_get_string(l) : "none");
			json_object_put(prev);
			return SDP_CLI_EXIT_USAGE;
		}
	}
	if (sdp_uromd_run_dir(lu.o.run_dir, lu.run_dir, sizeof(lu.run_dir)) != DOCA_SUCCESS) {
		json_object_put(prev);
		return SDP_CLI_EXIT_USAGE;
	}
	if (lu.o.evidence != NULL) {
		path = lu.o.evidence;
	} else {
		time_t now = time(NULL);
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(defpath, sizeof(defpath), "softdpu-ladder-urom-%Y%m%dT%H%M%SZ.json", &tm);
		path = defpath;
	}
	lu.ev = sdp_ev_new("urom", LU_RUNGS);
	if (lu.ev == NULL) {
		json_object_put(prev);
		return SDP_CLI_EXIT_FAIL;
	}
	for (int n = 0; n <= LU_RUNGS; n++)
		sdp_ev_plan(lu.ev, n, lu_names[n]);
	{
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "ranks", json_object_new_int(lu.o.ranks));
		json_object_object_add(o, "collective", json_object_new_string(lu.o.collective));
		json_object_object_add(o, "size", json_object_new_int64((int64_t)lu.o.size));
		sdp_ev_snapshot(lu.ev, "options", o, 0);
		sdp_ev_snapshot(lu.ev, "timeout_s", json_object_new_int(lu.o.timeout_s), 1);
	}
	lu_locate(&lu);
	if (lu_precheck(&lu) == 0 && lu_rung_group(&lu, 1, 2, lu_rung1) == 0 &&
	    lu_rung_group(&lu, 2, 2, lu_rung2) == 0 && lu_rung3_all(&lu) == 0 &&
	    lu_rung_group(&lu, 4, 1, lu_rung4) == 0)
		(void)lu_rung5_all(&lu);
	rc = sdp_ev_failed(lu.ev) ? SDP_CLI_EXIT_FAIL : SDP_CLI_EXIT_OK;
	doc = sdp_ev_json(lu.ev);
	if (prev != NULL && doc != NULL) {
		enum sdp_ev_outcome out;
		char why[512];
		struct json_object *c = json_object_new_object();

		json_object_object_add(c, "previous", json_object_new_string(lu.o.compare));
		if (sdp_ev_compare(prev, doc, &out, why, sizeof(why)) == 0) {
			json_object_object_add(c, "outcome",
					       json_object_new_string(sdp_ev_outcome_name(out)));
			json_object_object_add(c, "why", json_object_new_string(why));
			json_object_object_add(c, "escalate",
					       json_object_new_boolean(out == SDP_EV_UNCHANGED &&
								       sdp_ev_failed(lu.ev)));
			lu_print_compare(&lu, out, why, doc, lu.o.json ? stderr : stdout);
		} else {
			json_object_object_add(c, "outcome", NULL);
			json_object_object_add(c, "why", json_object_new_string(why));
			fprintf(stderr, "softdpu: cannot compare with %s: %s\n", lu.o.compare, why);
		}
		sdp_ev_annotate(lu.ev, "compare", c);
		doc = sdp_ev_json(lu.ev);
	}
	if (sdp_ev_write(lu.ev, path) != 0) {
		fprintf(stderr, "softdpu: the evidence was not written\n");
		if (rc == SDP_CLI_EXIT_OK)
			rc = SDP_CLI_EXIT_FAIL;
	} else {
		sdp_ev_annotate(lu.ev, "evidence_file", json_object_new_string(path));
		doc = sdp_ev_json(lu.ev);
	}
	if (doc != NULL)
		json_object_object_get_ex(doc, "trigger", &trig);
	if (lu.o.json) {
		fprintf(json_out, "%s\n",
			doc != NULL ? json_object_to_json_string_ext(
					      doc, JSON_C_TO_STRING_PLAIN |
							   JSON_C_TO_STRING_NOSLASHESCAPE) :
				      "{}");
		fflush(json_out);
	} else {
		if (trig != NULL)
			printf("ladder urom: FAIL at rung %" PRId64 " (%s): layer %s, trigger %s\n"
			       "  next check: %s\n",
			       lu_ji(trig, "rung", -1), lu_js(trig, "name") ?: "?",
			       lu_js(trig, "layer") ?: "?", lu_js(trig, "trigger") ?: "?",
			       lu_js(trig, "next_check") ?: "?");
		else if (rc == SDP_CLI_EXIT_OK)
			printf("ladder urom: pass (rungs 0-%d)\n", LU_RUNGS);
		printf("evidence: %s\n", path);
	}
	json_object_put(prev);
	sdp_ev_free(lu.ev);
	return rc;
}
