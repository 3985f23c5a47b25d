/*
 * softdpu: DOCA UROM host API (doca_urom.h), implemented by libdoca_urom (pkg-config doca-urom).
 *
 * A host program reaches a UROM offload service (softdpu-uromd) through a service context,
 * spawns or attaches worker processes through worker contexts and drives their plugins with
 * command tasks. All three objects are DOCA contexts: connect them to a doca_pe, start them with
 * doca_ctx_start() and collect completions with doca_pe_progress().
 *
 * Where the service is: DOCA_UROM_SERVICE_FILE names a file of lines
 *     <app_hostname> dpu <dev_hostname> <dev_pci_addr> <net,devs>
 * and the line for this host's name and the PCI address of the device given to
 * doca_urom_service_set_dev() gives the service's address and the network devices UCX may use.
 * softdpu also reads SOFTDPU_UROM_SERVICE_ADDR (host:port) and otherwise uses 127.0.0.1:62515
 * (docs/environment.md, docs/errors.md).
 *
 * Domains (doca_urom_domain_*) can be created and configured; starting one returns
 * DOCA_ERROR_NOT_SUPPORTED in this softdpu version.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_UROM_H_
#define DOCA_UROM_H_

#include <stddef.h>
#include <stdint.h>

#include <ucs/type/cpu_set.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"
#include "doca_urom_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A set of CPUs: UCX's bit mask type. */
typedef ucs_cpu_set_t doca_cpu_set_t;

/* Empty a set, add one CPU to it, test one CPU (non-zero when present). */
#define DOCA_CPU_ZERO(_cpusetp) UCS_CPU_ZERO(_cpusetp)
#define DOCA_CPU_SET(_cpu, _cpusetp) UCS_CPU_SET(_cpu, _cpusetp)
#define doca_cpu_is_set(_cpu, _cpusetp) ucs_cpu_is_set(_cpu, _cpusetp)

/* Worker id that lets the service choose a fresh, unique id (read it back with get_id). */
#define DOCA_UROM_WORKER_ID_ANY -1ULL

struct doca_buf;
struct doca_ctx;
struct doca_dev;
struct doca_task;

struct doca_urom_service;
struct doca_urom_service_get_workers_by_gid_task;
struct doca_urom_worker;
struct doca_urom_worker_cmd_task;
struct doca_urom_domain;

/* ---- service context ------------------------------------------------------------------------ */

/* Completion of a get-workers-by-gid task (success and failure alike; read the task status). */
typedef void (*doca_urom_service_get_workers_by_gid_task_completion_cb_t)(
	struct doca_urom_service_get_workers_by_gid_task *task, union doca_data task_user_data,
	union doca_data ctx_user_data);

/* A new service context, IDLE. */
DOCA_EXPERIMENTAL
doca_error_t doca_urom_service_create(struct doca_urom_service **service_ctx);

/* Only an IDLE service (NOT_PERMITTED otherwise) without worker contexts using it (IN_USE). */
DOCA_EXPERIMENTAL
doca_error_t doca_urom_service_destroy(struct doca_urom_service *service_ctx);

/* Largest message of the command channel, headers included (default 4096). IDLE only. */
DOCA_EXPERIMENTAL
doca_error_t doca_urom_service_set_max_comm_msg_size(struct doca_urom_service *service_ctx,
						     size_t msg_size);

/* Most workers this connection may spawn; a power of two. IDLE only. */
DOCA_EXPERIMENTAL
doca_error_t doca_urom_service_set_max_workers(struct doca_urom_service *service_ctx,
					       uint32_t max_workers);

/* The device whose PCI address selects the service file's line. IDLE only. */
DOCA_EXPERIMENTAL
doca_error_t doca_urom_service_set_dev(struct doca_urom_service *service_ctx, struct doca_dev *dev);

DOCA_EXPERIMENTAL
struct doca_ctx *doca_urom_service_as_ctx(struct doca_urom_service *service_ctx);

/* The plugins the service offers (array owned by the context). RUNNING only. */
DOCA_EXPERIMENTAL
doca_error_t
doca_urom_service_get_plugins_list(struct doca_urom_service *service_ctx,
				   const struct doca_urom_service_plugin_info **plugins,
				   size_t *plugins_count);

/* The CPUs the service's workers may use. Started service only. */
DOCA_EXPERIMENTAL
doca_error_t doca_urom_service_get_cpuset(struct doca_urom_service *service_ctx,
					  doca_cpu_set_t *cpuset);

DOCA_EXPERIMENTAL
doca_error_t doca_urom_service_get_workers_by_gid_task_allocate(
	struct doca_urom_service *service_ctx,
	struct doca_urom_service_get_workers_by_gid_task **task);

DOCA_EXPERIMENTAL
doca_error_t doca_urom_service_get_workers_by_gid_task_allocate_init(
	struct doca_urom_service *service_ctx, uint32_t gid,
	doca_urom_service_get_workers_by_gid_task_completion_cb_t cb,
	struct doca_urom_service_get_workers_by_gid_task **task);

/* NOT_PERMITTED while the task is submitted. */
DOCA_EXPERIMENTAL
doca_error_t doca_urom_service_get_workers_by_gid_task_release(
	struct doca_urom_service_get_workers_by_gid_task *task);

DOCA_EXPERIMENTAL
void doca_urom_service_get_workers_by_gid_task_set_gid(
	struct doca_urom_service_get_workers_by_gid_task *task, uint32_t gid);

DOCA_EXPERIMENTAL
void doca_urom_service_get_workers_by_gid_task_set_cb(
	struct doca_urom_service_get_workers_by_gid_task *task,
	doca_urom_service_get_workers_by_gid_task_completion_cb_t cb);

DOCA_EXPERIMENTAL
struct doca_task *doca_urom_service_get_workers_by_gid_task_as_task(
	struct doca_urom_service_get_workers_by_gid_task *task);

/* Result of a completed task: how many ids, and the ids (owned by the task). */
DOCA_EXPERIMENTAL
size_t doca_urom_service_get_workers_by_gid_task_get_workers_count(
	struct doca_urom_service_get_workers_by_gid_task *task);

DOCA_EXPERIMENTAL
const uint64_t *doca_urom_service_get_workers_by_gid_task_get_worker_ids(
	struct doca_urom_service_get_workers_by_gid_task *task);

/* ---- worker context ------------------------------------------------------------------------- */

/* Completion of a command task (success and failure alike; read the task status). */
typedef void (*doca_urom_worker_cmd_task_completion_cb_t)(struct doca_urom_worker_cmd_task *task,
							  union doca_data task_user_data,
							  union doca_data ctx_user_data);

DOCA_EXPERIMENTAL
doca_error_t doca_urom_worker_create(struct doca_urom_worker **worker_ctx);

DOCA_EXPERIMENTAL
doca_error_t doca_urom_worker_destroy(struct doca_urom_worker *worker_ctx);

/* The service that spawns this worker. IDLE only. */
DOCA_EXPERIMENTAL
doca_error_t doca_urom_worker_set_service(struct doca_urom_worker *worker_ctx,
					  struct doca_urom_service *service_ctx);

/* DOCA_UROM_WORKER_ID_ANY (the default) or an id: a known id attaches to that worker. */
DOCA_EXPERIMENTAL
doca_error_t doca_urom_worker_set_id(struct doca_urom_worker *worker_ctx, uint64_t worker_id);

/* Mask of plugin ids (doca_urom_service_plugin_info.id) the worker loads. IDLE only. */
DOCA_EXPERIMENTAL
doca_error_t doca_urom_worker_set_plugins(struct doca_urom_worker *worker_ctx, uint64_t plugins);

/* CPUs for the worker, a subset of the service's. IDLE only. */
DOCA_EXPERIMENTAL
doca_error_t doca_urom_worker_set_cpuset(struct doca_urom_worker *worker_ctx,
					 doca_cpu_set_t cpuset);

DOCA_EXPERIMENTAL
doca_error_t doca_urom_worker_set_gid(struct doca_urom_worker *worker_ctx, uint32_t gid);

/* Most command tasks in flight at once; a power of two. IDLE only. */
DOCA_EXPERIMENTAL
doca_error_t doca_urom_worker_set_max_inflight_tasks(struct doca_urom_worker *worker_ctx,
						     uint32_t max_tasks);

/* "name=value" strings for the worker process's environment; values without spaces. */
DOCA_EXPERIMENTAL
doca_error_t doca_urom_worker_set_env(struct doca_urom_worker *worker_ctx, char *const env[],
				      size_t count);

/* The worker id (the one the service chose for DOCA_UROM_WORKER_ID_ANY once running). */
DOCA_EXPERIMENTAL
doca_error_t doca_urom_worker_get_id(struct doca_urom_worker *worker_ctx, uint64_t *worker_id);

DOCA_EXPERIMENTAL
doca_error_t doca_urom_worker_get_gid(struct doca_urom_worker *worker_ctx, uint32_t *worker_gid);

DOCA_EXPERIMENTAL
struct doca_ctx *doca_urom_worker_as_ctx(struct doca_urom_worker *worker_ctx);

/* ---- worker command task -------------------------------------------------------------------- */

DOCA_EXPERIMENTAL
doca_error_t doca_urom_worker_cmd_task_allocate(struct doca_urom_worker *worker_ctx,
						struct doca_urom_worker_cmd_task **task);

DOCA_EXPERIMENTAL
doca_error_t doca_urom_worker_cmd_task_allocate_init(struct doca_urom_worker *worker_ctx,
						     uint64_t plugin,
						     struct doca_urom_worker_cmd_task **task);

/* NOT_PERMITTED while the task is submitted. */
DOCA_EXPERIMENTAL
doca_error_t doca_urom_worker_cmd_task_release(struct doca_urom_worker_cmd_task *task);

DOCA_EXPERIMENTAL
void doca_urom_worker_cmd_task_set_plugin(struct doca_urom_worker_cmd_task *task, uint64_t plugin);

DOCA_EXPERIMENTAL
void doca_urom_worker_cmd_task_set_cb(struct doca_urom_worker_cmd_task *task,
				      doca_urom_worker_cmd_task_completion_cb_t cb);

/* The command buffer: data = where to write, data length = capacity until set_data. */
DOCA_EXPERIMENTAL
struct doca_buf *doca_urom_worker_cmd_task_get_payload(struct doca_urom_worker_cmd_task *task);

/* The plugin's notification bytes once the task completed. */
DOCA_EXPERIMENTAL
struct doca_buf *doca_urom_worker_cmd_task_get_response(struct doca_urom_worker_cmd_task *task);

/* A 32-byte scratch area for the caller (plugin host halves keep their cookies there). */
DOCA_EXPERIMENTAL
void *doca_urom_worker_cmd_task_get_user_data(struct doca_urom_worker_cmd_task *task);

DOCA_EXPERIMENTAL
struct doca_task *doca_urom_worker_cmd_task_as_task(struct doca_urom_worker_cmd_task *task);

/* ---- domain context ------------------------------------------------------------------------- */

/* Non-blocking allgather the program provides: *req is then tested and freed. */
typedef doca_error_t (*doca_urom_domain_allgather_cb_t)(void *sbuf, void *rbuf, size_t msglen,
							void *coll_info, void **req);
/* DOCA_SUCCESS when req is complete, DOCA_ERROR_IN_PROGRESS while it is not. */
typedef doca_error_t (*doca_urom_domain_req_test_cb_t)(void *req);
typedef doca_error_t (*doca_urom_domain_req_free_cb_t)(void *req);

/* How the domain's processes exchange data out of band. */
struct doca_urom_domain_oob_coll {
	doca_urom_domain_allgather_cb_t allgather;
	doca_urom_domain_req_test_cb_t req_test;
	doca_urom_domain_req_free_cb_t req_free;
	void *coll_info;	/* handed to allgather as is (an MPI communicator, ...) */
	uint32_t n_oob_indexes; /* number of participating processes */
	uint32_t oob_index;	/* this process's place, in [0, n_oob_indexes) */
};

DOCA_EXPERIMENTAL
doca_error_t doca_urom_domain_create(struct doca_urom_domain **domain_ctx);

DOCA_EXPERIMENTAL
doca_error_t doca_urom_domain_destroy(struct doca_urom_domain *domain_ctx);

DOCA_EXPERIMENTAL
doca_error_t doca_urom_domain_set_buffers_count(struct doca_urom_domain *domain_ctx,
						size_t buffers_cnt);

DOCA_EXPERIMENTAL
doca_error_t doca_urom_domain_add_buffer(struct doca_urom_domain *domain_ctx, void *buffer,
					 size_t buf_len, void *memh, size_t memh_len, void *mkey,
					 size_t mkey_len);

DOCA_EXPERIMENTAL
doca_error_t doca_urom_domain_set_oob(struct doca_urom_domain *domain_ctx,
				      struct doca_urom_domain_oob_coll *oob);

DOCA_EXPERIMENTAL
doca_error_t doca_urom_domain_set_workers(struct doca_urom_domain *domain_ctx,
					  uint64_t *domain_worker_ids,
					  struct doca_urom_worker **workers, size_t workers_cnt);

DOCA_EXPERIMENTAL
struct doca_ctx *doca_urom_domain_as_ctx(struct doca_urom_domain *domain_ctx);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_UROM_H_ */
