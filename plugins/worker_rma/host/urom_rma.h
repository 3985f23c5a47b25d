/*
 * worker_rma plugin, host half: one-sided operations (PUT, GET, atomics, FENCE, FLUSH)
 * submitted as commands to a UROM worker that runs the worker_rma plugin
 * (docs/plugins.md, "worker_rma", has the semantics).
 *
 * Call urom_rma_init() once with the id and version the service reported for "worker_rma"
 * (doca_urom_service_get_plugins_list) and urom_rma_set_local_id() with this host's domain
 * worker id; then submit on a RUNNING worker context that belongs to a started domain. The
 * local buffer of a PUT / GET must lie in memory this host exported into that domain
 * (sdp_urom_domain_export_buffer of include/softdpu/urom_mem.h): the worker reaches it under
 * this host's domain id. The remote side names a member (dest, its domain worker id) and an
 * address inside the memory that member exported.
 *
 * Each callback runs once, from doca_pe_progress() of the worker context's PE, when the
 * submission succeeded: result is the command's outcome, cookie the caller's. A submission
 * that fails (returned status) calls nothing: DOCA_ERROR_AGAIN when the worker already has
 * max_inflight_tasks commands in flight (progress the PE, then submit again),
 * DOCA_ERROR_BAD_STATE before urom_rma_init(), DOCA_ERROR_INVALID_VALUE for NULL worker / cb,
 * otherwise the library's status for the task.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef UROM_RMA_H_
#define UROM_RMA_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>
#include <doca_types.h>

#include "worker_rma.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_urom_worker;
struct doca_pe;

/* PUT, GET, FENCE, FLUSH finished. */
typedef void (*urom_rma_finished)(doca_error_t result, union doca_data cookie);

/* An atomic finished: value is the fetched old value (fetching ops; 0 otherwise). */
typedef void (*urom_rma_atomic_finished)(doca_error_t result, union doca_data cookie,
					 uint64_t value);

/*
 * An active message arrived for an urom_rma_am_recv() (result DOCA_SUCCESS): handler, the
 * sending member's domain id, hdr_len header bytes and len payload bytes, valid during the
 * call only. On failure hdr / payload are NULL; DOCA_ERROR_FULL says AMs were dropped (dropped
 * of them) because none were received in time: the queue bound of the worker.
 */
typedef void (*urom_rma_am_received)(doca_error_t result, union doca_data cookie, uint64_t handler,
				     const void *hdr, size_t hdr_len, const void *payload,
				     size_t len, uint64_t sender, uint64_t dropped);

/*
 * Remember the plugin id to address commands to. DOCA_ERROR_UNSUPPORTED_VERSION when the
 * worker half's version differs from UROM_WORKER_RMA_VERSION.
 */
doca_error_t urom_rma_init(uint64_t plugin_id, uint64_t version);

/* This host's domain worker id (the id its local buffers are exported under). Default 0. */
void urom_rma_set_local_id(uint64_t domain_id);

/* Copy len bytes (1 .. UROM_RMA_MAX_LEN) at local_va to remote_va of member dest. */
doca_error_t urom_rma_put(struct doca_urom_worker *worker, union doca_data cookie, uint64_t dest,
			  uint64_t local_va, uint64_t remote_va, uint64_t len,
			  urom_rma_finished cb);

/* Copy len bytes at remote_va of member dest to local_va. */
doca_error_t urom_rma_get(struct doca_urom_worker *worker, union doca_data cookie, uint64_t dest,
			  uint64_t local_va, uint64_t remote_va, uint64_t len,
			  urom_rma_finished cb);

/*
 * One atomic op (enum urom_rma_atomic_op) on the size-byte word (4 or 8, aligned) at remote_va
 * of member dest; compare is used by CSWAP only.
 */
doca_error_t urom_rma_atomic(struct doca_urom_worker *worker, union doca_data cookie,
			     enum urom_rma_atomic_op op, uint32_t size, uint64_t dest,
			     uint64_t remote_va, uint64_t operand, uint64_t compare,
			     urom_rma_atomic_finished cb);

/* FENCE: commands after it start after those before it completed (dest or UROM_RMA_DEST_ALL). */
doca_error_t urom_rma_fence(struct doca_urom_worker *worker, union doca_data cookie, uint64_t dest,
			    urom_rma_finished cb);

/* FLUSH: completes when everything issued before it is complete at its targets. */
doca_error_t urom_rma_flush(struct doca_urom_worker *worker, union doca_data cookie, uint64_t dest,
			    urom_rma_finished cb);

/*
 * Active message to member dest's host: handler (any 32-bit id), hdr_len (0 .. 64) header
 * bytes and len payload bytes, copied into the command. hdr_len + len is at most the message
 * size - UROM_RMA_AM_OVERHEAD (4096 - 104 by default): more is INVALID_VALUE, returned before
 * a task exists. cb runs when the worker handed the AM to UCX (NOT_FOUND for an unknown dest).
 */
doca_error_t urom_rma_am_send(struct doca_urom_worker *worker, union doca_data cookie,
			      uint64_t dest, uint64_t handler, const void *hdr, size_t hdr_len,
			      const void *payload, size_t len, urom_rma_finished cb);

/*
 * Take the next AM for this worker whose handler is handler (or any, UROM_RMA_AM_ANY): the
 * receive is posted at the worker at once, not behind other commands, and completed by one
 * AM, whether it arrived before or after.
 */
doca_error_t urom_rma_am_recv(struct doca_urom_worker *worker, union doca_data cookie,
			      uint64_t handler, urom_rma_am_received cb);

/*
 * Blocking helpers (tests, simple uses): submit, then progress pe (sleeping on its
 * notification handle when idle) until the callback ran or timeout_ms passed
 * (DOCA_ERROR_TIME_OUT; the command may still complete later and its callback then touches
 * nothing). A submission refused with DOCA_ERROR_AGAIN is retried after progress until the
 * bound. Return the command's result.
 */
doca_error_t urom_rma_put_wait(struct doca_urom_worker *worker, struct doca_pe *pe, uint64_t dest,
			       uint64_t local_va, uint64_t remote_va, uint64_t len, int timeout_ms);
doca_error_t urom_rma_get_wait(struct doca_urom_worker *worker, struct doca_pe *pe, uint64_t dest,
			       uint64_t local_va, uint64_t remote_va, uint64_t len, int timeout_ms);
doca_error_t urom_rma_atomic_wait(struct doca_urom_worker *worker, struct doca_pe *pe,
				  enum urom_rma_atomic_op op, uint32_t size, uint64_t dest,
				  uint64_t remote_va, uint64_t operand, uint64_t compare,
				  uint64_t *value, int timeout_ms);
doca_error_t urom_rma_fence_wait(struct doca_urom_worker *worker, struct doca_pe *pe, uint64_t dest,
				 int timeout_ms);
doca_error_t urom_rma_flush_wait(struct doca_urom_worker *worker, struct doca_pe *pe, uint64_t dest,
				 int timeout_ms);

/* AM send, blocking. */
doca_error_t urom_rma_am_send_wait(struct doca_urom_worker *worker, struct doca_pe *pe,
				   uint64_t dest, uint64_t handler, const void *hdr, size_t hdr_len,
				   const void *payload, size_t len, int timeout_ms);

/* What urom_rma_am_recv_wait() received; hdr and payload are copied into caller buffers. */
struct urom_rma_am_msg {
	uint64_t handler, sender, dropped;
	void *hdr;	/* UROM_RMA_AM_HDR_MAX bytes of room */
	size_t hdr_len; /* out */
	void *payload;
	size_t cap; /* room at payload; a longer payload is INVALID_VALUE (its bytes dropped) */
	size_t len; /* out */
};

/*
 * AM receive, blocking. On timeout the receive stays posted at the worker: the AM that
 * completes it later is lost to the caller.
 */
doca_error_t urom_rma_am_recv_wait(struct doca_urom_worker *worker, struct doca_pe *pe,
				   uint64_t handler, struct urom_rma_am_msg *msg, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* UROM_RMA_H_ */
