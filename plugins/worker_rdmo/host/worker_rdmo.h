/*
 * worker_rdmo plugin, host half: the five RDMO commands as doca_urom worker command tasks.
 *
 * Call urom_rdmo_init() once with the id and version the service reported for "worker_rdmo"
 * (doca_urom_service_get_plugins_list), then submit commands on a RUNNING worker context whose
 * plugin mask includes that id. Each submit that returns DOCA_SUCCESS calls its callback exactly
 * once, from doca_pe_progress() of the worker context's PE, with the command's outcome; a
 * failed submit calls nothing. The order of use is CLIENT_INIT first (on each worker context),
 * then MR_REG / RQ_CREATE as needed; see docs/plugins.md, "worker_rdmo".
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef WORKER_RDMO_HOST_H_
#define WORKER_RDMO_HOST_H_

#include <stdint.h>

#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_urom_worker;

/*
 * CLIENT_INIT done: addr (addr_len bytes) is the plugin's UCP worker address, the one
 * initiators send operations to. It is valid during the callback only: copy it.
 */
typedef void (*urom_rdmo_client_init_finished)(doca_error_t result, union doca_data cookie,
					       void *addr, uint64_t addr_len);

/* RQ_CREATE done: rq_id names the new receive queue (RQ_DESTROY takes it). */
typedef void (*urom_rdmo_rq_create_finished)(doca_error_t result, union doca_data cookie,
					     uint64_t rq_id);

/* RQ_DESTROY done (rq_id as given). */
typedef void (*urom_rdmo_rq_destroy_finished)(doca_error_t result, union doca_data cookie,
					      uint64_t rq_id);

/* MR_REG done: rkey is the rkey id operations name for the registered range. */
typedef void (*urom_rdmo_mr_register_finished)(doca_error_t result, union doca_data cookie,
					       uint64_t rkey);

/* MR_DEREG done (rkey as given). */
typedef void (*urom_rdmo_mr_deregister_finished)(doca_error_t result, union doca_data cookie,
						 uint64_t rkey);

/*
 * Remember the plugin id to address commands to. DOCA_ERROR_UNSUPPORTED_VERSION when the worker
 * half's version differs from this host half's (UROM_WORKER_RDMO_VERSION).
 */
doca_error_t urom_rdmo_init(uint64_t plugin_id, uint64_t version);

/*
 * CLIENT_INIT: make this worker context a client with id `id`. addr / addr_len: the UCP
 * worker address (ucp_worker_get_address) of the worker whose memory the plugin will write; the
 * caller must progress that UCP worker while operations run (TCP moves bytes only then). A
 * second CLIENT_INIT on the same context, or one with an id in use, completes with
 * DOCA_ERROR_ALREADY_EXIST.
 */
doca_error_t urom_rdmo_task_client_init(struct doca_urom_worker *worker_ctx, union doca_data cookie,
					uint64_t id, void *addr, uint64_t addr_len,
					urom_rdmo_client_init_finished cb);

/* RQ_CREATE: admit the initiator whose UCP worker address is addr (addr_len bytes). */
doca_error_t urom_rdmo_task_rq_create(struct doca_urom_worker *worker_ctx, union doca_data cookie,
				      void *addr, uint64_t addr_len,
				      urom_rdmo_rq_create_finished cb);

/* RQ_DESTROY: stop accepting that initiator's operations; those not started are dropped. */
doca_error_t urom_rdmo_task_rq_destroy(struct doca_urom_worker *worker_ctx, union doca_data cookie,
				       uint64_t rq_id, urom_rdmo_rq_destroy_finished cb);

/*
 * MR_REG: let operations write [va, va + len) of the client's memory. rkey / rkey_len: the packed
 * remote key (ucp_rkey_pack) covering that range; memh / memh_len: a packed memory handle, which
 * softdpu ignores (no exported memory handles): pass NULL / 0 or any bytes.
 */
doca_error_t urom_rdmo_task_mr_register(struct doca_urom_worker *worker_ctx, union doca_data cookie,
					uint64_t va, uint64_t len, void *rkey, uint64_t rkey_len,
					void *memh, uint64_t memh_len,
					urom_rdmo_mr_register_finished cb);

/* MR_DEREG: withdraw an rkey id; later operations naming it are refused (NOT_FOUND). */
doca_error_t urom_rdmo_task_mr_deregister(struct doca_urom_worker *worker_ctx,
					  union doca_data cookie, uint64_t rkey_id,
					  urom_rdmo_mr_deregister_finished cb);

#ifdef __cplusplus
}
#endif

#endif /* WORKER_RDMO_HOST_H_ */
