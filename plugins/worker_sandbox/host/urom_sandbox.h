/*
 * worker_sandbox plugin, host half: UCX tagged send and receive, and host memory mapping,
 * submitted as commands to a UROM worker that runs the worker_sandbox plugin.
 *
 * Call urom_sandbox_init() once with the id and version the service reported for
 * "worker_sandbox" (doca_urom_service_get_plugins_list), then submit on a RUNNING worker
 * context. Tagged sends name their receiver by domain worker id, so the worker must belong to
 * a started domain (doca_urom_domain) whose members run the plugin too. Each callback runs
 * once, from doca_pe_progress() of the worker context's PE, when the submission succeeded; it
 * gets the command's outcome (result), the caller's cookie, the context value the worker
 * echoed (the submitted one when the worker answered without it), and the command's fields.
 *
 * Data: with memh_id 0 a send's count bytes at buffer are copied into the command (they must
 * fit the worker's message size) and a receive's bytes come back inside the notification:
 * the recv callback's buffer points into the task's response, valid only until the callback
 * returns. With a memh id from a MEM_MAP, buffer is a host address inside that mapping and
 * the worker reads or writes host memory itself (the recv callback's buffer is then NULL).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef UROM_SANDBOX_H_
#define UROM_SANDBOX_H_

#include <stddef.h>
#include <stdint.h>

#include <ucp/api/ucp.h>

#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_urom_worker;

/* A tagged send finished: UCX's status of the send on the worker. */
typedef void (*urom_sandbox_send_finished)(doca_error_t result, union doca_data cookie,
					   union doca_data context, ucs_status_t status);

/*
 * A tagged receive finished: count bytes arrived with sender_tag; buffer holds them when they
 * came back inline (memh_id 0), else NULL.
 */
typedef void (*urom_sandbox_recv_finished)(doca_error_t result, union doca_data cookie,
					   union doca_data context, void *buffer, uint64_t count,
					   uint64_t sender_tag, ucs_status_t status);

/* A mapping is ready: memh_id names it in later sends and receives (0 on failure). */
typedef void (*urom_sandbox_mem_map_finished)(doca_error_t result, union doca_data cookie,
					      union doca_data context, uint64_t memh_id);

/*
 * Remember the plugin id to address commands to. DOCA_ERROR_UNSUPPORTED_VERSION when the worker
 * half's version differs from this host half's (UROM_WORKER_SANDBOX_VERSION).
 */
doca_error_t urom_sandbox_init(uint64_t plugin_id, uint64_t version);

/*
 * Send count bytes with tag to the domain member whose domain worker id is dest. memh_id 0:
 * the bytes at buffer (a host address) travel in the command; otherwise buffer lies in the
 * mapping memh_id. DOCA_ERROR_INVALID_VALUE for a NULL worker or cb, for inline data that
 * does not fit the command, or a NULL buffer with count > 0; DOCA_ERROR_BAD_STATE before
 * urom_sandbox_init(); otherwise the library's status for the task.
 */
doca_error_t urom_sandbox_tag_task_send(struct doca_urom_worker *worker_ctx, union doca_data cookie,
					uint64_t context, uint64_t dest, uint64_t buffer,
					uint64_t count, uint64_t tag, uint64_t memh_id,
					urom_sandbox_send_finished cb);

/*
 * Receive at most count bytes of a message whose tag matches tag in the bits of tag_mask.
 * memh_id 0: the bytes come back in the notification (a worker refuses more than its message
 * size carries with DOCA_ERROR_INVALID_VALUE); otherwise they are written at buffer inside
 * mapping memh_id. Errors as urom_sandbox_tag_task_send().
 */
doca_error_t urom_sandbox_tag_task_recv(struct doca_urom_worker *worker_ctx, union doca_data cookie,
					uint64_t context, uint64_t buffer, uint64_t count,
					uint64_t tag, uint64_t tag_mask, uint64_t memh_id,
					urom_sandbox_recv_finished cb);

/*
 * DOCA's form: map the memory whose exported memory handle map_params.exported_memh_buffer
 * holds (exported_memh_buffer_len bytes). That field exists from UCX 1.15 on; built against an
 * older UCX (softdpu's default 1.13) this returns DOCA_ERROR_NOT_SUPPORTED: use
 * sdp_urom_sandbox_task_mem_map(). In softdpu the bytes must be a softdpu memh descriptor
 * (sdp_urom_mem_get_memh() of include/softdpu/urom_mem.h), not UCX's exported memh.
 */
doca_error_t urom_sandbox_task_mem_map(struct doca_urom_worker *worker_ctx, union doca_data cookie,
				       uint64_t context, ucp_mem_map_params_t map_params,
				       size_t exported_memh_buffer_len,
				       urom_sandbox_mem_map_finished cb);

/*
 * softdpu's form, for every UCX version: the memh descriptor is passed directly (memh,
 * memh_len bytes, copied into the command). map_params may name the range to map
 * (UCP_MEM_MAP_PARAM_FIELD_ADDRESS | _LENGTH): the worker then checks it lies inside the
 * exported memory; other fields are ignored. Errors as urom_sandbox_tag_task_send(), and
 * DOCA_ERROR_INVALID_VALUE for a NULL or empty descriptor.
 */
doca_error_t sdp_urom_sandbox_task_mem_map(struct doca_urom_worker *worker_ctx,
					   union doca_data cookie, uint64_t context,
					   ucp_mem_map_params_t map_params, const void *memh,
					   size_t memh_len, urom_sandbox_mem_map_finished cb);

#ifdef __cplusplus
}
#endif

#endif /* UROM_SANDBOX_H_ */
