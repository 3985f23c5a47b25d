/*
 * worker_coll plugin, host half: teams and non-blocking collectives submitted as commands to a
 * UROM worker that runs the worker_coll plugin; the workers move the data between the
 * members' exported buffers (docs/plugins.md, "worker_coll").
 *
 * Use:
 *  1. urom_coll_init() once with the id and version the service reported for "worker_coll".
 *  2. Export the buffers collectives will use to the domain (doca_urom_domain_add_buffer())
 *     and start the domain.
 *  3. urom_coll_team_create() (or _strided) on every member of the team, with the same tag and
 *     member list. The team can be used at once (the worker runs its commands in order).
 *  4. Start collectives: urom_coll_allreduce(team, ..., &req) etc. Every member of a team
 *     starts the same collectives in the same order; many may be outstanding. Complete a
 *     request with urom_coll_test() or urom_coll_wait() (or use urom_coll_submit() with a
 *     callback). The host computes meanwhile: the worker needs nothing from it.
 *  5. urom_coll_team_destroy() once its collectives are complete.
 *
 * Requests and callbacks complete from doca_pe_progress() of the worker context's PE (the PE
 * given to team create). A refused start returns the error and completes nothing:
 * DOCA_ERROR_AGAIN (the worker has its maximum of commands in flight: progress, retry),
 * DOCA_ERROR_BAD_STATE before urom_coll_init(), DOCA_ERROR_INVALID_VALUE for bad arguments
 * the host half can see (NULL, count past UROM_COLL_MAX_LEN, root outside the team). Errors
 * the worker finds (buffers outside the exported segments, a member that runs a different
 * collective, an unknown type or op) complete the request with that status on every member.
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
struct urom_coll_team;
struct urom_coll_req;

/* Pass as sbuf for the in-place form of a collective (the input is in rbuf; see worker_coll.h). */
#define UROM_COLL_IN_PLACE ((const void *)1)

typedef void (*urom_coll_finished)(doca_error_t result, union doca_data cookie);

/* Remember the plugin id. DOCA_ERROR_UNSUPPORTED_VERSION when the worker half's differs. */
doca_error_t urom_coll_init(uint64_t plugin_id, uint64_t version);

/*
 * Create a team of size members whose domain ids are members[0 .. size-1] (team order, all
 * distinct); my_id is this host's domain id and must be among them. tag (nonzero) names the
 * team on every member. pe is the PE of worker's context. The handle is usable at once; the
 * worker's answer to the creation arrives through the first test/wait of a request on it, or
 * through urom_coll_team_wait_ready(). DOCA_ERROR_INVALID_VALUE for bad arguments,
 * DOCA_ERROR_NO_MEMORY, or the submission's error.
 */
doca_error_t urom_coll_team_create(struct doca_urom_worker *worker, struct doca_pe *pe,
				   uint64_t tag, uint64_t my_id, const uint64_t *members,
				   uint32_t size, struct urom_coll_team **team_p);
/* The same for members start, start + stride, ..., start + (size - 1) * stride (stride >= 1). */
doca_error_t urom_coll_team_create_strided(struct doca_urom_worker *worker, struct doca_pe *pe,
					   uint64_t tag, uint64_t my_id, uint64_t start,
					   uint64_t stride, uint32_t size,
					   struct urom_coll_team **team_p);
/* Wait (bounded) for the worker's answer to the team's creation; its result. */
doca_error_t urom_coll_team_wait_ready(struct urom_coll_team *team, int timeout_ms);
/* This member's position in the team, and the team's size. */
uint32_t urom_coll_team_rank(const struct urom_coll_team *team);
uint32_t urom_coll_team_size(const struct urom_coll_team *team);
/*
 * Destroy the team on the worker and free the handle, waiting (bounded) for the answer.
 * DOCA_ERROR_IN_USE (nothing destroyed) while requests of the team are outstanding.
 */
doca_error_t urom_coll_team_destroy(struct urom_coll_team *team, int timeout_ms);

/* ---- collectives: each returns a request on success (*req) ---- */

doca_error_t urom_coll_barrier(struct urom_coll_team *team, struct urom_coll_req **req);
doca_error_t urom_coll_bcast(struct urom_coll_team *team, const void *sbuf, void *rbuf,
			     uint64_t count, enum urom_coll_dtype dtype, uint32_t root,
			     struct urom_coll_req **req);
doca_error_t urom_coll_reduce(struct urom_coll_team *team, const void *sbuf, void *rbuf,
			      uint64_t count, enum urom_coll_dtype dtype, enum urom_coll_op op,
			      uint32_t root, struct urom_coll_req **req);
doca_error_t urom_coll_allreduce(struct urom_coll_team *team, const void *sbuf, void *rbuf,
				 uint64_t count, enum urom_coll_dtype dtype, enum urom_coll_op op,
				 struct urom_coll_req **req);
doca_error_t urom_coll_allgather(struct urom_coll_team *team, const void *sbuf, void *rbuf,
				 uint64_t count, enum urom_coll_dtype dtype,
				 struct urom_coll_req **req);
doca_error_t urom_coll_alltoall(struct urom_coll_team *team, const void *sbuf, void *rbuf,
				uint64_t count, enum urom_coll_dtype dtype,
				struct urom_coll_req **req);
/* Arrays of team-size entries, in elements. */
doca_error_t urom_coll_alltoallv(struct urom_coll_team *team, const void *sbuf,
				 const uint64_t *scounts, const uint64_t *sdispls, void *rbuf,
				 const uint64_t *rcounts, const uint64_t *rdispls,
				 enum urom_coll_dtype dtype, struct urom_coll_req **req);
/* sbuf holds size * count elements, rbuf count. */
doca_error_t urom_coll_reduce_scatter(struct urom_coll_team *team, const void *sbuf, void *rbuf,
				      uint64_t count, enum urom_coll_dtype dtype,
				      enum urom_coll_op op, struct urom_coll_req **req);

/*
 * Progress the team's PE once and report: DOCA_ERROR_IN_PROGRESS while the collective runs;
 * otherwise its result, and the request is released (as MPI_Test). NULL: INVALID_VALUE.
 */
doca_error_t urom_coll_test(struct urom_coll_req *req);
/*
 * Progress the PE (sleeping on its notification handle while idle) until the collective
 * completes: its result, the request released. DOCA_ERROR_TIME_OUT after timeout_ms: the
 * request stays valid (wait again, or free it).
 */
doca_error_t urom_coll_wait(struct urom_coll_req *req, int timeout_ms);
/* Complete several; the first error among them (all are waited for, bounded in all). */
doca_error_t urom_coll_waitall(struct urom_coll_req **reqs, size_t n, int timeout_ms);
/* Release a request without waiting (as MPI_Request_free: the collective still runs). */
void urom_coll_req_free(struct urom_coll_req *req);

/*
 * Any command, as built by the caller (team, my_id and context are filled in here; trail holds
 * cmd->ntrail values), completed through cb from the PE. Tests use it for malformed commands.
 */
doca_error_t urom_coll_submit(struct urom_coll_team *team, const struct urom_worker_coll_cmd *cmd,
			      const uint64_t *trail, union doca_data cookie, urom_coll_finished cb);

/*
 * Buffers outside the domain's segments: the memh (sdp_urom_mem_get_memh() of an export that
 * covers the buffer, at most UROM_COLL_MEMH_MAX bytes) of the send buffer (s, slen; slen 0:
 * the send buffer is in a domain segment) and of the receive buffer (r, rlen; likewise). The
 * export must stay until the collective completed on every member (the workers may keep the
 * imported key cached after that: unexport only after the domain is gone, or accept that a
 * stale key names nothing any collective uses; worker_coll.h "Buffers").
 */
struct urom_coll_memh {
	const void *s;
	size_t slen;
	const void *r;
	size_t rlen;
};

/*
 * urom_coll_submit() with memh for buffers outside the domain's segments (NULL: none, as
 * urom_coll_submit()); cmd's smemh_len / rmemh_len are set from it. DOCA_ERROR_INVALID_VALUE
 * for a memh past UROM_COLL_MEMH_MAX or a NULL one with a length; DOCA_ERROR_TOO_BIG when the
 * command does not fit the worker's command size (then use a domain segment).
 */
doca_error_t urom_coll_submit_memh(struct urom_coll_team *team,
				   const struct urom_worker_coll_cmd *cmd, const uint64_t *trail,
				   const struct urom_coll_memh *memh, union doca_data cookie,
				   urom_coll_finished cb);

/* Bounded blocking form: start a collective from cmd (as urom_coll_submit) and wait for it. */
doca_error_t urom_coll_submit_wait(struct urom_coll_team *team,
				   const struct urom_worker_coll_cmd *cmd, const uint64_t *trail,
				   int timeout_ms);
/* The same with memh (urom_coll_submit_memh()). */
doca_error_t urom_coll_submit_memh_wait(struct urom_coll_team *team,
					const struct urom_worker_coll_cmd *cmd,
					const uint64_t *trail, const struct urom_coll_memh *memh,
					int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* UROM_COLL_H_ */
