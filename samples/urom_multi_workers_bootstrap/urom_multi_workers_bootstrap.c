/*
 * UROM multi-workers bootstrap sample, written against DOCA's public headers only.
 *
 * The main thread connects to the UROM service and finds the worker_graph plugin. Each of N
 * threads then owns a PE and a worker context (worker id = thread index, group id = index % 2),
 * starts it, and runs a few graph loopback commands. Once every worker runs, the main thread
 * asks the service which workers belong to group 0 and group 1 (get-workers-by-gid tasks on
 * the service's PE) and checks that each thread's worker is listed in its group. Then the
 * threads stop their workers while the main thread keeps progressing the service PE, and
 * everything is torn down. SIGINT or SIGTERM cuts the run short with the same clean teardown.
 *
 * Waiting is event driven: when a PE has nothing to do the thread sleeps on the PE's
 * notification handle (bounded poll), it never spins.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_argp.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_pe.h>
#include <doca_urom.h>

#include "urom_graph.h"

DOCA_LOG_REGISTER(UROM_MULTI_WORKERS_BOOTSTRAP);

#define MAX_WORKERS 64
#define DEFAULT_WORKERS 4
#define DEFAULT_LOOPBACKS 8
#define STATE_TIMEOUT_MS 30000
#define WAIT_SLICE_MS 100

struct mwb_config {
	char device[64]; /* IB device name, empty: no device (local service) */
	int num_workers;
	int loopbacks;
};

/* Shared between the main thread and the worker threads. */
struct mwb_shared {
	pthread_mutex_t lock;
	int num_ready;	   /* threads whose worker reached RUNNING or failed */
	int teardown;	   /* main thread: stop your workers now */
	uint64_t graph_id; /* worker_graph's plugin id */
	struct doca_urom_service *service;
};

struct mwb_thread {
	pthread_t thread;
	int index;
	struct mwb_shared *shared;
	const struct mwb_config *cfg;
	int running;	     /* its worker reached RUNNING */
	doca_error_t result; /* DOCA_SUCCESS when everything it did worked */
	uint64_t worker_id;
	int loopbacks_left;
	int loopback_errors;
};

static atomic_int force_quit;

static void signal_handler(int signum)
{
	(void)signum;
	atomic_store(&force_quit, 1);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Progress pe once; when it had nothing to do, sleep on its notification handle (bounded). */
static void progress_or_wait(struct doca_pe *pe)
{
	doca_notification_handle_t handle;
	struct pollfd pfd;

	if (doca_pe_progress(pe) != 0)
		return;
	if (doca_pe_get_notification_handle(pe, &handle) != DOCA_SUCCESS ||
	    doca_pe_request_notification(pe) != DOCA_SUCCESS)
		return;
	pfd.fd = (int)handle;
	pfd.events = POLLIN;
	pfd.revents = 0;
	if (poll(&pfd, 1, WAIT_SLICE_MS) > 0)
		(void)doca_pe_clear_notification(pe, handle);
}

/* Progress pe until ctx reaches want (DOCA_SUCCESS) or timeout / error state. */
static doca_error_t wait_for_state(struct doca_pe *pe, struct doca_ctx *ctx,
				   enum doca_ctx_states want, int allow_quit)
{
	uint64_t deadline = now_ms() + STATE_TIMEOUT_MS;
	enum doca_ctx_states state;
	doca_error_t result;

	for (;;) {
		result = doca_ctx_get_state(ctx, &state);
		if (result != DOCA_SUCCESS)
			return result;
		if (state == want)
			return DOCA_SUCCESS;
		if (want == DOCA_CTX_STATE_RUNNING && state == DOCA_CTX_STATE_IDLE)
			return DOCA_ERROR_BAD_STATE; /* the start failed */
		if (allow_quit && atomic_load(&force_quit))
			return DOCA_ERROR_SHUTDOWN;
		if (now_ms() > deadline)
			return DOCA_ERROR_TIME_OUT;
		progress_or_wait(pe);
	}
}

/* ---- worker threads ------------------------------------------------------------------------- */

static void loopback_finished(doca_error_t result, union doca_data cookie, uint64_t data)
{
	struct mwb_thread *t = cookie.ptr;
	uint64_t expected = ((uint64_t)t->index << 32) | (uint64_t)t->loopbacks_left;

	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("worker %d: loopback failed: %s", t->index,
			     doca_error_get_descr(result));
		t->loopback_errors++;
	} else if (data != expected) {
		DOCA_LOG_ERR("worker %d: loopback echoed %#" PRIx64 ", sent %#" PRIx64, t->index,
			     data, expected);
		t->loopback_errors++;
	}
	t->loopbacks_left--;
}

/* Run the configured number of loopbacks, one at a time. */
static doca_error_t run_loopbacks(struct mwb_thread *t, struct doca_pe *pe,
				  struct doca_urom_worker *worker)
{
	uint64_t deadline;
	doca_error_t result;
	union doca_data cookie;
	int outstanding;

	t->loopbacks_left = t->cfg->loopbacks;
	while (t->loopbacks_left > 0 && !atomic_load(&force_quit)) {
		cookie.ptr = t;
		outstanding = t->loopbacks_left;
		result = urom_graph_task_loopback(
			worker, cookie, ((uint64_t)t->index << 32) | (uint64_t)t->loopbacks_left,
			loopback_finished);
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("worker %d: loopback submit failed: %s", t->index,
				     doca_error_get_descr(result));
			return result;
		}
		deadline = now_ms() + STATE_TIMEOUT_MS;
		while (t->loopbacks_left == outstanding) {
			if (now_ms() > deadline) {
				DOCA_LOG_ERR("worker %d: loopback timed out", t->index);
				return DOCA_ERROR_TIME_OUT;
			}
			progress_or_wait(pe);
		}
	}
	if (t->loopback_errors)
		return DOCA_ERROR_IO_FAILED;
	if (t->loopbacks_left > 0) {
		DOCA_LOG_INFO("worker %d: interrupted after %d of %d loopback(s)", t->index,
			      t->cfg->loopbacks - t->loopbacks_left, t->cfg->loopbacks);
		return DOCA_ERROR_SHUTDOWN;
	}
	return DOCA_SUCCESS;
}

/* Create, configure and start the thread's worker, then run its loopbacks. */
static doca_error_t worker_bringup(struct mwb_thread *t, struct doca_pe *pe,
				   struct doca_urom_worker *worker, int *started)
{
	struct doca_ctx *ctx = doca_urom_worker_as_ctx(worker);
	doca_error_t result;

	result = doca_urom_worker_set_service(worker, t->shared->service);
	if (result == DOCA_SUCCESS)
		result = doca_pe_connect_ctx(pe, ctx);
	if (result == DOCA_SUCCESS)
		result = doca_urom_worker_set_id(worker, (uint64_t)t->index);
	if (result == DOCA_SUCCESS)
		result = doca_urom_worker_set_gid(worker, (uint32_t)(t->index % 2));
	if (result == DOCA_SUCCESS)
		result = doca_urom_worker_set_max_inflight_tasks(worker, 16);
	if (result == DOCA_SUCCESS)
		result = doca_urom_worker_set_plugins(worker, t->shared->graph_id);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("worker %d: configuration failed: %s", t->index,
			     doca_error_get_descr(result));
		return result;
	}

	result = doca_ctx_start(ctx);
	if (result != DOCA_ERROR_IN_PROGRESS && result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("worker %d: start failed: %s", t->index, doca_error_get_descr(result));
		return result;
	}
	*started = 1;
	result = wait_for_state(pe, ctx, DOCA_CTX_STATE_RUNNING, 1);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("worker %d: did not reach RUNNING: %s", t->index,
			     doca_error_get_descr(result));
		return result;
	}
	t->running = 1;
	(void)doca_urom_worker_get_id(worker, &t->worker_id);
	DOCA_LOG_INFO("worker %d: running, worker id %" PRIu64 ", group %d", t->index, t->worker_id,
		      t->index % 2);

	result = run_loopbacks(t, pe, worker);
	if (result == DOCA_SUCCESS)
		DOCA_LOG_INFO("worker %d: %d loopback(s) echoed correctly", t->index,
			      t->cfg->loopbacks);
	return result;
}

static void *worker_thread(void *arg)
{
	struct mwb_thread *t = arg;
	struct mwb_shared *shared = t->shared;
	struct doca_urom_worker *worker = NULL;
	struct doca_pe *pe = NULL;
	enum doca_ctx_states state;
	struct doca_ctx *ctx;
	doca_error_t result, tmp;
	int started = 0;

	result = doca_pe_create(&pe);
	if (result == DOCA_SUCCESS)
		result = doca_urom_worker_create(&worker);
	if (result == DOCA_SUCCESS)
		result = worker_bringup(t, pe, worker, &started);
	else
		DOCA_LOG_ERR("worker %d: failed to create its PE or worker: %s", t->index,
			     doca_error_get_descr(result));

	/* Report, then keep the worker alive until the main thread has queried the groups. */
	pthread_mutex_lock(&shared->lock);
	shared->num_ready++;
	while (!shared->teardown && t->running && !atomic_load(&force_quit)) {
		pthread_mutex_unlock(&shared->lock);
		progress_or_wait(pe);
		pthread_mutex_lock(&shared->lock);
	}
	pthread_mutex_unlock(&shared->lock);

	ctx = worker != NULL ? doca_urom_worker_as_ctx(worker) : NULL;
	if (started && doca_ctx_get_state(ctx, &state) == DOCA_SUCCESS &&
	    state != DOCA_CTX_STATE_IDLE) {
		tmp = doca_ctx_stop(ctx);
		if (tmp == DOCA_SUCCESS || tmp == DOCA_ERROR_IN_PROGRESS)
			tmp = wait_for_state(pe, ctx, DOCA_CTX_STATE_IDLE, 0);
		if (tmp != DOCA_SUCCESS) {
			DOCA_LOG_ERR("worker %d: did not stop: %s", t->index,
				     doca_error_get_descr(tmp));
			DOCA_ERROR_PROPAGATE(result, tmp);
		}
	}
	if (worker != NULL) {
		tmp = doca_urom_worker_destroy(worker);
		if (tmp != DOCA_SUCCESS) {
			DOCA_LOG_ERR("worker %d: destroy failed: %s", t->index,
				     doca_error_get_descr(tmp));
			DOCA_ERROR_PROPAGATE(result, tmp);
		}
	}
	if (pe != NULL) {
		tmp = doca_pe_destroy(pe);
		if (tmp != DOCA_SUCCESS)
			DOCA_ERROR_PROPAGATE(result, tmp);
	}
	t->result = result;
	return NULL;
}

/* ---- gid queries (main thread, service PE) --------------------------------------------------- */

struct gid_query {
	uint32_t gid;
	int done;
	doca_error_t result;
	uint64_t ids[MAX_WORKERS * 4];
	size_t count;
};

static void gid_task_cb(struct doca_urom_service_get_workers_by_gid_task *task,
			union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct gid_query *q = task_user_data.ptr;
	const uint64_t *ids;
	size_t i;

	(void)ctx_user_data;
	if (task == NULL || q == NULL)
		return;
	q->result = doca_task_get_status(doca_urom_service_get_workers_by_gid_task_as_task(task));
	if (q->result == DOCA_SUCCESS) {
		q->count = doca_urom_service_get_workers_by_gid_task_get_workers_count(task);
		ids = doca_urom_service_get_workers_by_gid_task_get_worker_ids(task);
		if (q->count > sizeof(q->ids) / sizeof(q->ids[0]))
			q->count = sizeof(q->ids) / sizeof(q->ids[0]);
		for (i = 0; i < q->count; i++)
			q->ids[i] = ids[i];
	}
	q->done = 1;
	(void)doca_urom_service_get_workers_by_gid_task_release(task);
}

static doca_error_t query_gid(struct doca_pe *pe, struct doca_urom_service *service,
			      struct gid_query *q)
{
	struct doca_urom_service_get_workers_by_gid_task *task = NULL;
	union doca_data ud;
	uint64_t deadline;
	doca_error_t result;

	result = doca_urom_service_get_workers_by_gid_task_allocate_init(service, q->gid,
									 gid_task_cb, &task);
	if (result != DOCA_SUCCESS)
		return result;
	ud.ptr = q;
	doca_task_set_user_data(doca_urom_service_get_workers_by_gid_task_as_task(task), ud);
	result = doca_task_submit(doca_urom_service_get_workers_by_gid_task_as_task(task));
	if (result != DOCA_SUCCESS) {
		(void)doca_urom_service_get_workers_by_gid_task_release(task);
		return result;
	}
	deadline = now_ms() + STATE_TIMEOUT_MS;
	while (!q->done) {
		if (now_ms() > deadline)
			return DOCA_ERROR_TIME_OUT; /* the task completes later, at service stop */
		progress_or_wait(pe);
	}
	return q->result;
}

/* ---- main flow ------------------------------------------------------------------------------ */

static doca_error_t open_device(const char *name, struct doca_dev **dev_p)
{
	char ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	struct doca_devinfo **list = NULL;
	doca_error_t result;
	uint32_t n = 0, i;

	result = doca_devinfo_create_list(&list, &n);
	if (result != DOCA_SUCCESS)
		return result;
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < n; i++) {
		if (doca_devinfo_get_ibdev_name(list[i], ibdev, sizeof(ibdev)) == DOCA_SUCCESS &&
		    strcmp(ibdev, name) == 0) {
			result = doca_dev_open(list[i], dev_p);
			break;
		}
	}
	doca_devinfo_destroy_list(list);
	return result;
}

static doca_error_t multi_workers_bootstrap(const struct mwb_config *cfg)
{
	const struct doca_urom_service_plugin_info *plugins = NULL;
	struct mwb_thread threads[MAX_WORKERS];
	struct mwb_shared shared;
	struct doca_dev *dev = NULL;
	struct doca_pe *pe = NULL;
	struct gid_query q[2];
	doca_error_t result, tmp;
	size_t num_plugins = 0, i;
	uint32_t max_workers = 1;
	int started = 0, j, k, found;

	memset(&shared, 0, sizeof(shared));
	memset(threads, 0, sizeof(threads));
	pthread_mutex_init(&shared.lock, NULL);

	if (cfg->device[0] != '\0') {
		result = open_device(cfg->device, &dev);
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("failed to open device %s: %s", cfg->device,
				     doca_error_get_descr(result));
			goto out;
		}
	}
	result = doca_pe_create(&pe);
	if (result != DOCA_SUCCESS)
		goto close_dev;
	result = doca_urom_service_create(&shared.service);
	if (result != DOCA_SUCCESS)
		goto destroy_pe;
	result = doca_pe_connect_ctx(pe, doca_urom_service_as_ctx(shared.service));
	while (max_workers < (uint32_t)cfg->num_workers)
		max_workers <<= 1;
	if (result == DOCA_SUCCESS)
		result = doca_urom_service_set_max_workers(shared.service, max_workers);
	if (result == DOCA_SUCCESS && dev != NULL)
		result = doca_urom_service_set_dev(shared.service, dev);
	if (result != DOCA_SUCCESS)
		goto destroy_service;
	result = doca_ctx_start(doca_urom_service_as_ctx(shared.service));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to connect to the UROM service: %s",
			     doca_error_get_descr(result));
		goto destroy_service;
	}

	result = doca_urom_service_get_plugins_list(shared.service, &plugins, &num_plugins);
	if (result != DOCA_SUCCESS)
		goto stop_service;
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < num_plugins; i++) {
		if (strcmp(plugins[i].plugin_name, "worker_graph") == 0) {
			result = urom_graph_init(plugins[i].id, plugins[i].version);
			shared.graph_id = plugins[i].id;
			break;
		}
	}
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("the service offers no usable worker_graph plugin: %s",
			     doca_error_get_descr(result));
		goto stop_service;
	}

	for (j = 0; j < cfg->num_workers; j++) {
		threads[j].index = j;
		threads[j].shared = &shared;
		threads[j].cfg = cfg;
		if (pthread_create(&threads[j].thread, NULL, worker_thread, &threads[j]) != 0) {
			DOCA_LOG_ERR("failed to create thread %d: %s", j, strerror(errno));
			result = DOCA_ERROR_OPERATING_SYSTEM;
			break;
		}
		started++;
	}

	/* Bootstrap: the worker threads start their workers; the service PE keeps going. */
	pthread_mutex_lock(&shared.lock);
	while (shared.num_ready < started && !atomic_load(&force_quit)) {
		pthread_mutex_unlock(&shared.lock);
		progress_or_wait(pe);
		pthread_mutex_lock(&shared.lock);
	}
	pthread_mutex_unlock(&shared.lock);

	if (result == DOCA_SUCCESS && !atomic_load(&force_quit)) {
		for (k = 0; k < 2; k++) {
			memset(&q[k], 0, sizeof(q[k]));
			q[k].gid = (uint32_t)k;
			tmp = query_gid(pe, shared.service, &q[k]);
			if (tmp != DOCA_SUCCESS) {
				DOCA_LOG_ERR("query of group %d failed: %s", k,
					     doca_error_get_descr(tmp));
				DOCA_ERROR_PROPAGATE(result, tmp);
				continue;
			}
			DOCA_LOG_INFO("group %d: %zu worker(s)", k, q[k].count);
			for (j = k; j < started; j += 2) {
				if (!threads[j].running)
					continue;
				found = 0;
				for (i = 0; i < q[k].count; i++)
					found |= q[k].ids[i] == threads[j].worker_id;
				if (!found) {
					DOCA_LOG_ERR("worker %" PRIu64 " missing from group %d",
						     threads[j].worker_id, k);
					DOCA_ERROR_PROPAGATE(result, DOCA_ERROR_NOT_FOUND);
				}
			}
		}
	}

	/* Teardown: the threads stop their workers; the service PE keeps going. */
	pthread_mutex_lock(&shared.lock);
	shared.teardown = 1;
	pthread_mutex_unlock(&shared.lock);
	for (j = 0; j < started; j++) {
		(void)doca_pe_progress(pe);
		pthread_join(threads[j].thread, NULL);
		if (threads[j].result != DOCA_SUCCESS)
			DOCA_ERROR_PROPAGATE(result, threads[j].result);
		else if (!threads[j].running)
			DOCA_ERROR_PROPAGATE(result, DOCA_ERROR_SHUTDOWN);
	}

stop_service:
	tmp = doca_ctx_stop(doca_urom_service_as_ctx(shared.service));
	if (tmp == DOCA_ERROR_IN_PROGRESS)
		tmp = wait_for_state(pe, doca_urom_service_as_ctx(shared.service),
				     DOCA_CTX_STATE_IDLE, 0);
	if (tmp != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to stop the service context: %s", doca_error_get_descr(tmp));
		DOCA_ERROR_PROPAGATE(result, tmp);
	}
destroy_service:
	tmp = doca_urom_service_destroy(shared.service);
	if (tmp != DOCA_SUCCESS)
		DOCA_ERROR_PROPAGATE(result, tmp);
destroy_pe:
	tmp = doca_pe_destroy(pe);
	if (tmp != DOCA_SUCCESS)
		DOCA_ERROR_PROPAGATE(result, tmp);
close_dev:
	if (dev != NULL)
		(void)doca_dev_close(dev);
out:
	pthread_mutex_destroy(&shared.lock);
	return result;
}

/* ---- arguments ------------------------------------------------------------------------------ */

static doca_error_t device_cb(void *param, void *config)
{
	struct mwb_config *cfg = config;
	const char *name = param;

	if (strlen(name) >= sizeof(cfg->device)) {
		DOCA_LOG_ERR("device name %s is too long", name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(cfg->device, name);
	return DOCA_SUCCESS;
}

static doca_error_t workers_cb(void *param, void *config)
{
	struct mwb_config *cfg = config;
	int n = *(int *)param;

	if (n < 1 || n > MAX_WORKERS) {
		DOCA_LOG_ERR("number of workers %d out of range [1, %d]", n, MAX_WORKERS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	cfg->num_workers = n;
	return DOCA_SUCCESS;
}

static doca_error_t loopbacks_cb(void *param, void *config)
{
	struct mwb_config *cfg = config;
	int n = *(int *)param;

	if (n < 0 || n > 1000000) {
		DOCA_LOG_ERR("number of loopbacks %d out of range [0, 1000000]", n);
		return DOCA_ERROR_INVALID_VALUE;
	}
	cfg->loopbacks = n;
	return DOCA_SUCCESS;
}

static doca_error_t register_param(const char *short_name, const char *long_name,
				   const char *description, enum doca_argp_type type,
				   doca_argp_param_cb_t cb)
{
	struct doca_argp_param *param;
	doca_error_t result;

	result = doca_argp_param_create(&param);
	if (result != DOCA_SUCCESS)
		return result;
	doca_argp_param_set_short_name(param, short_name);
	doca_argp_param_set_long_name(param, long_name);
	doca_argp_param_set_description(param, description);
	doca_argp_param_set_callback(param, cb);
	doca_argp_param_set_type(param, type);
	return doca_argp_register_param(param);
}

int main(int argc, char **argv)
{
	struct mwb_config cfg;
	struct sigaction sa;
	doca_error_t result;

	memset(&cfg, 0, sizeof(cfg));
	cfg.num_workers = DEFAULT_WORKERS;
	cfg.loopbacks = DEFAULT_LOOPBACKS;

	result = doca_log_backend_create_standard();
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;

	result = doca_argp_init("doca_urom_multi_workers_bootstrap", &cfg);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to init ARGP: %s", doca_error_get_descr(result));
		return EXIT_FAILURE;
	}
	result = register_param("d", "device",
				"IB device name whose PCI address selects the "
				"DOCA_UROM_SERVICE_FILE line (optional)",
				DOCA_ARGP_TYPE_STRING, device_cb);
	if (result == DOCA_SUCCESS)
		result = register_param("n", "workers", "number of worker threads (default 4)",
					DOCA_ARGP_TYPE_INT, workers_cb);
	if (result == DOCA_SUCCESS)
		result = register_param("c", "loopbacks", "graph loopbacks per worker (default 8)",
					DOCA_ARGP_TYPE_INT, loopbacks_cb);
	if (result == DOCA_SUCCESS)
		result = doca_argp_start(argc, argv);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to parse the arguments: %s", doca_error_get_descr(result));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = signal_handler;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	result = multi_workers_bootstrap(&cfg);
	if (atomic_load(&force_quit))
		DOCA_LOG_INFO(
			"multi-workers bootstrap sample interrupted; everything was torn down");
	else if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("multi-workers bootstrap sample failed: %s",
			     doca_error_get_descr(result));
	else
		DOCA_LOG_INFO("multi-workers bootstrap sample finished successfully");
	doca_argp_destroy();
	return result == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}
