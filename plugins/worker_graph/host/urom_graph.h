/*
 * worker_graph plugin, host half: submit LOOPBACK commands to a UROM worker that runs the
 * worker_graph plugin and get the echoed value back in a callback.
 *
 * Call urom_graph_init() once with the id and version the service reported for "worker_graph"
 * (doca_urom_service_get_plugins_list), then urom_graph_task_loopback() on a RUNNING worker
 * context. The callback runs from doca_pe_progress() of the worker context's PE.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef UROM_GRAPH_H_
#define UROM_GRAPH_H_

#include <stdint.h>

#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_urom_worker;

/* Completion of one loopback: status of the command, the caller's cookie, the echoed value. */
typedef void (*urom_graph_loopback_finished)(doca_error_t result, union doca_data cookie,
					     uint64_t data);

/*
 * Remember the plugin id to address commands to. DOCA_ERROR_UNSUPPORTED_VERSION when the worker
 * half's version differs from this host half's (UROM_WORKER_GRAPH_VERSION).
 */
doca_error_t urom_graph_init(uint64_t plugin_id, uint64_t version);

/*
 * Submit one LOOPBACK command carrying data. On DOCA_SUCCESS, cb is called exactly once (from
 * the worker context's PE) with the outcome; on failure it is not called.
 */
doca_error_t urom_graph_task_loopback(struct doca_urom_worker *worker_ctx, union doca_data cookie,
				      uint64_t data, urom_graph_loopback_finished cb);

/*
 * The same, submitted with doca_task_submit_ex(flags) (softdpu's extension, not in DOCA's
 * sample): without DOCA_TASK_SUBMIT_FLAG_FLUSH the command waits, packed, for the next
 * flushing submission, doca_ctx_flush_tasks() or progress call, and goes to the worker in one
 * active message with the others (docs/architecture.md, "UROM").
 */
doca_error_t urom_graph_task_loopback_ex(struct doca_urom_worker *worker_ctx,
					 union doca_data cookie, uint64_t data,
					 urom_graph_loopback_finished cb, uint32_t flags);

#ifdef __cplusplus
}
#endif

#endif /* UROM_GRAPH_H_ */
