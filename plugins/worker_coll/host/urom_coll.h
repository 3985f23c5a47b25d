/*
 * worker_coll plugin, host half: collectives over the domain (the team: members 0 .. size-1
 * by domain id) submitted as commands to a UROM worker that runs the worker_coll plugin; the
 * workers move the data between the members' exported buffers (docs/plugins.md, "worker_coll").
 *
 * Call urom_coll_init() once with the id and version the service reported for "worker_coll",
 * this host's domain id (rank) and the team size. The host exports one domain buffer first
 * (its segment 0) whose first UROM_COLL_CTRL_LEN bytes are zero and left to the plugin; send
 * and receive buffers lie after them, at the SAME offsets from the buffer start on every
 * member. Every member submits the same collectives in the same order, one at a time.
 *
 * Callbacks run once, from doca_pe_progress() of the worker context's PE, when the submission
 * succeeded. A failed submission calls nothing: DOCA_ERROR_AGAIN (worker full),
 * DOCA_ERROR_BAD_STATE before urom_coll_init(), DOCA_ERROR_INVALID_VALUE for NULL worker / cb.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef UROM_COLL_H_
#define UROM_COLL_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>
#include <doca_types.h>

#include "worker_coll.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_urom_worker;
struct doca_pe;

typedef void (*urom_coll_finished)(doca_error_t result, union doca_data cookie);

/*
 * Remember the plugin id, this member's rank (domain id) and the team size.
 * DOCA_ERROR_UNSUPPORTED_VERSION when the worker half's version differs,
 * DOCA_ERROR_INVALID_VALUE when size is 0 or above UROM_COLL_MAX_MEMBERS or rank >= size.
 */
doca_error_t urom_coll_init(uint64_t plugin_id, uint64_t version, uint64_t rank, uint64_t size);

doca_error_t urom_coll_barrier(struct doca_urom_worker *worker, union doca_data cookie,
			       urom_coll_finished cb);
doca_error_t urom_coll_allreduce(struct doca_urom_worker *worker, union doca_data cookie,
				 const void *sbuf, void *rbuf, uint64_t count,
				 enum urom_coll_dtype dtype, enum urom_coll_op op,
				 urom_coll_finished cb);
/* count elements per member (sbuf and rbuf hold size * count). */
doca_error_t urom_coll_alltoall(struct doca_urom_worker *worker, union doca_data cookie,
				const void *sbuf, void *rbuf, uint64_t count,
				enum urom_coll_dtype dtype, urom_coll_finished cb);
/* count elements in sbuf, size * count in rbuf. */
doca_error_t urom_coll_allgather(struct doca_urom_worker *worker, union doca_data cookie,
				 const void *sbuf, void *rbuf, uint64_t count,
				 enum urom_coll_dtype dtype, urom_coll_finished cb);
/* count elements of root's sbuf into every member's rbuf (sbuf unused off the root). */
doca_error_t urom_coll_bcast(struct doca_urom_worker *worker, union doca_data cookie,
			     const void *sbuf, void *rbuf, uint64_t count,
			     enum urom_coll_dtype dtype, uint64_t root, urom_coll_finished cb);

/* Any command, as built by the caller (rank and size are filled in here). Tests use it. */
doca_error_t urom_coll_submit(struct doca_urom_worker *worker, union doca_data cookie,
			      const struct urom_worker_coll_cmd *cmd, urom_coll_finished cb);

/*
 * Blocking helpers: submit, then progress pe (sleeping on its notification handle when
 * idle) until the callback ran or timeout_ms passed (DOCA_ERROR_TIME_OUT; a late callback
 * touches nothing). Return the command's result.
 */
doca_error_t urom_coll_submit_wait(struct doca_urom_worker *worker, struct doca_pe *pe,
				   const struct urom_worker_coll_cmd *cmd, int timeout_ms);
doca_error_t urom_coll_barrier_wait(struct doca_urom_worker *worker, struct doca_pe *pe,
				    int timeout_ms);
doca_error_t urom_coll_allreduce_wait(struct doca_urom_worker *worker, struct doca_pe *pe,
				      const void *sbuf, void *rbuf, uint64_t count,
				      enum urom_coll_dtype dtype, enum urom_coll_op op,
				      int timeout_ms);
doca_error_t urom_coll_alltoall_wait(struct doca_urom_worker *worker, struct doca_pe *pe,
				     const void *sbuf, void *rbuf, uint64_t count,
				     enum urom_coll_dtype dtype, int timeout_ms);
doca_error_t urom_coll_allgather_wait(struct doca_urom_worker *worker, struct doca_pe *pe,
				      const void *sbuf, void *rbuf, uint64_t count,
				      enum urom_coll_dtype dtype, int timeout_ms);
doca_error_t urom_coll_bcast_wait(struct doca_urom_worker *worker, struct doca_pe *pe,
				  const void *sbuf, void *rbuf, uint64_t count,
				  enum urom_coll_dtype dtype, uint64_t root, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* UROM_COLL_H_ */
