/*
 * softdpu plugin helper: host memory for the worker half of softdpu's own UROM plugins.
 *
 * A host exports a buffer with sdp_urom_mem_export() (include/softdpu/urom_mem.h) and hands its
 * memh bytes to the worker (in a command such as the sandbox's MEM_MAP, or as a domain buffer
 * through doca_urom_domain_add_buffer()). This library turns those bytes into a *region* of the
 * plugin's own UCP worker: an endpoint to the UCP worker that owns the memory (one per owner
 * address, shared by every region of that owner) and the unpacked remote key. Puts and gets
 * on a region then move bytes between plugin memory and host memory with ucp_put_nbx() and
 * ucp_get_nbx(): shared memory / CMA on one machine, TCP between machines (then the host's
 * export thread runs the transfer; docs/plugins.md, "Host memory in softdpu").
 *
 * Every transfer is checked against its region BEFORE anything is issued: [addr, addr + len)
 * must lie inside [va, va + len) of the region (overflow-safe); otherwise the call returns
 * DOCA_ERROR_INVALID_VALUE, logs once and nothing moves. An id that names no region returns
 * DOCA_ERROR_NOT_FOUND. UCX failures return DOCA_ERROR_DRIVER.
 *
 * Requirements of the plugin:
 * - its UCP context has UCP_FEATURE_RMA (sdp_plugin_mem_ucp_params() adds it; WAKEUP too, so
 *   the blocking calls can sleep on the worker's event fd instead of polling);
 * - one table per UCP worker, used from one thread at a time (the worker runtime calls every
 *   plugin op from its single loop thread, so a plugin normally needs no lock);
 * - while non-blocking operations are in flight the plugin calls sdp_plugin_mem_progress()
 *   (from its progress op) where it would call ucp_worker_progress(): it progresses the worker
 *   and runs the completion callbacks, which are never called from anywhere else (UCX itself
 *   may finish an operation inside the call that issues it; this library defers the callback).
 *
 * Regions are named by ids (uint64_t, never 0, never reused within a table), so an id that
 * came back from the host in a command can be checked: a stale or forged id is NOT_FOUND, not
 * a wild pointer.
 *
 * Memory handles are parsed by src/urom/proto/sdp_urom_memh.[ch] (the only parser of those
 * bytes, fuzzed); this library never reads them itself.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_PLUGIN_MEM_H_
#define SDP_PLUGIN_MEM_H_

#include <stddef.h>
#include <stdint.h>

#include <ucp/api/ucp.h>

#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

struct urom_worker_ctx;

/* The import table of one plugin UCP worker. */
struct sdp_plugin_mem;

/*
 * Completion of a non-blocking operation: status is DOCA_SUCCESS, or DOCA_ERROR_DRIVER (UCX
 * reported a failure), DOCA_ERROR_NOT_CONNECTED (the region's endpoint was closed, e.g. by
 * sdp_plugin_mem_destroy() or after a blocking call timed out on the same endpoint). Called
 * exactly once per operation the issuing call accepted, from sdp_plugin_mem_progress() (or
 * from sdp_plugin_mem_destroy()), never from inside the issuing call or from a bare
 * ucp_worker_progress(). The callback may issue new non-blocking operations and release
 * regions that have nothing else in flight; it must not call the blocking variants,
 * sdp_plugin_mem_progress() or sdp_plugin_mem_destroy().
 */
typedef void (*sdp_plugin_mem_cb_func_t)(void *arg, doca_error_t status);

/*
 * Add what this library needs to UCP context parameters before ucp_init(): sets
 * UCP_PARAM_FIELD_FEATURES in field_mask and ORs UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP into
 * features (other fields and features are left as they are). A plugin that creates its
 * context without RMA cannot unpack remote keys (imports then fail with DOCA_ERROR_DRIVER).
 * NULL is ignored.
 */
void sdp_plugin_mem_ucp_params(ucp_params_t *params);

/*
 * Create the import table of a plugin's UCP worker (not owned: destroy the table before the
 * worker). DOCA_ERROR_INVALID_VALUE for NULL arguments, DOCA_ERROR_NO_MEMORY.
 */
doca_error_t sdp_plugin_mem_create(ucp_worker_h worker, struct sdp_plugin_mem **mem_p);

/*
 * Release every region and close every endpoint of the table (each close flushed within a
 * bound, then forced), then free it. Operations still in flight complete first, with their
 * own status or DOCA_ERROR_NOT_CONNECTED, their callbacks (and those not yet delivered) called
 * from inside this call.
 * NULL is ignored. Never blocks much more than a second per endpoint.
 */
void sdp_plugin_mem_destroy(struct sdp_plugin_mem *mem);

/*
 * Progress the plugin's UCP worker once (ucp_worker_progress()) and run the callbacks of the
 * operations that have completed since the last call, in completion order. Returns nonzero when
 * anything happened (UCX made progress or a callback ran), 0 otherwise and for NULL. Call it
 * instead of ucp_worker_progress() in the plugin's progress op (it progresses the worker for
 * the plugin's other UCX traffic too), at least while sdp_plugin_mem_inflight() is not 0.
 */
int sdp_plugin_mem_progress(struct sdp_plugin_mem *mem);

/*
 * Operations accepted whose callback has not run yet (0 for NULL): while it is not 0 the
 * plugin has work pending here and must keep calling sdp_plugin_mem_progress().
 */
size_t sdp_plugin_mem_inflight(const struct sdp_plugin_mem *mem);

/*
 * Import a softdpu memh (the bytes sdp_urom_mem_get_memh() gave the host): connect to (or
 * reuse the endpoint of) its owner's UCP worker and unpack its remote key. *region_id_p gets a
 * new id; every import is a new region, to be released with sdp_plugin_mem_release().
 * DOCA_ERROR_INVALID_VALUE for NULL arguments or bytes that are not a valid memh (the reason is
 * logged once), DOCA_ERROR_DRIVER when UCX refuses the address or the key, DOCA_ERROR_NO_MEMORY.
 * The memh bytes are not referenced after the call.
 */
doca_error_t sdp_plugin_mem_import(struct sdp_plugin_mem *mem, const void *memh, size_t memh_len,
				   uint64_t *region_id_p);

/*
 * Import from the parts of a registration directly: the owner's UCP worker address, the
 * region [va, va + len) and a packed remote key (ucp_rkey_pack() of a registration covering the
 * region, i.e. softdpu's mkey). For commands that carry these separately (as RDMO's MR_REG and
 * CLIENT_INIT do). Errors as sdp_plugin_mem_import(); len 0 or va + len overflowing is
 * DOCA_ERROR_INVALID_VALUE. No argument is referenced after the call.
 */
doca_error_t sdp_plugin_mem_import_rkey(struct sdp_plugin_mem *mem, const void *owner_addr,
					size_t owner_addr_len, uint64_t va, uint64_t len,
					const void *rkey, size_t rkey_len, uint64_t *region_id_p);

/*
 * The region of domain member domain_id that contains va, imported through the worker
 * runtime's domain lookups of ctx (doca_urom_worker_domain_seg_lookup() and
 * doca_urom_worker_domain_memh_lookup(); softdpu's runtime answers the latter with softdpu
 * memh bytes). Cached per (domain id, segment): asking again for any va of the same segment
 * gives the same id, as long as the runtime's memh bytes for that segment are the same ones
 * (both lookups run on every call); when they changed (a later domain reused the member id)
 * the cached region is released (or, with operations in flight, left to the table out of the
 * cache) and the new memh imported under a new id. Such regions belong to the table: the
 * caller need not release them (sdp_plugin_mem_release() drops one from the cache early).
 * DOCA_ERROR_INVALID_VALUE for NULL arguments or malformed memh bytes, DOCA_ERROR_NOT_FOUND
 * when the runtime knows no such member or segment (its status is passed on), other errors as
 * sdp_plugin_mem_import().
 */
doca_error_t sdp_plugin_mem_import_domain(struct sdp_plugin_mem *mem, struct urom_worker_ctx *ctx,
					  uint64_t domain_id, uint64_t va, uint64_t *region_id_p);

/* Member regions (sdp_plugin_mem_import_member) cached at most, per table. */
#define SDP_PLUGIN_MEM_MEMBER_MAX 512

/*
 * Import a memh that domain member domain_id handed over at run time (a buffer it registered
 * for one operation, outside its domain segments; worker_coll's ARRIVE carries them), pinned:
 * the region stays until sdp_plugin_mem_unpin() is called once for every successful call.
 * Cached under (domain_id, memh bytes): the same bytes again give the same id (pinned once
 * more) without touching UCX. A member may name only its own memory: the memh's owner address
 * must be the one of the member's first domain segment (doca_urom_worker_domain_memh_lookup()
 * of segment 0), else DOCA_ERROR_NOT_PERMITTED (also when the member exported no segment). At
 * most SDP_PLUGIN_MEM_MEMBER_MAX such regions are kept: past that the least recently used one
 * that is neither pinned nor busy is released, and DOCA_ERROR_FULL when there is none.
 * DOCA_ERROR_INVALID_VALUE for NULL arguments or bytes that are not a valid memh; other errors
 * as sdp_plugin_mem_import(). The bytes are not referenced after the call.
 */
doca_error_t sdp_plugin_mem_import_member(struct sdp_plugin_mem *mem, struct urom_worker_ctx *ctx,
					  uint64_t domain_id, const void *memh, size_t memh_len,
					  uint64_t *region_id_p);

/*
 * Give back one pin of a member region: DOCA_SUCCESS, DOCA_ERROR_NOT_FOUND (unknown id),
 * DOCA_ERROR_BAD_STATE (not a member region, or not pinned), DOCA_ERROR_INVALID_VALUE (NULL).
 * An unpinned region stays cached until it is evicted or the table destroyed.
 */
doca_error_t sdp_plugin_mem_unpin(struct sdp_plugin_mem *mem, uint64_t region_id);

/*
 * Release a region: destroy its remote key, and close its endpoint (flushed within a bound,
 * then forced) when no other region uses it. DOCA_ERROR_INVALID_VALUE for a NULL table,
 * DOCA_ERROR_NOT_FOUND for an unknown id, DOCA_ERROR_IN_USE while non-blocking operations on
 * the region are in flight (nothing is released then: wait for their callbacks and call again).
 */
doca_error_t sdp_plugin_mem_release(struct sdp_plugin_mem *mem, uint64_t region_id);

/*
 * Give up on a peer that stopped answering (a plugin's own time-out): when the endpoint of
 * region_id has operations outstanding, close it by force; every region through it fails from
 * now on with DOCA_ERROR_NOT_CONNECTED (import a new domain or memh to reach the owner again),
 * and the callbacks of its outstanding non-blocking operations run from the next
 * sdp_plugin_mem_progress() (never from this call), with DOCA_ERROR_NOT_CONNECTED or the
 * status UCX gave them. DOCA_SUCCESS when it closed the endpoint; DOCA_ERROR_EMPTY (nothing
 * done) when the endpoint has nothing outstanding or is closed already; DOCA_ERROR_NOT_FOUND
 * for an unknown id; DOCA_ERROR_INVALID_VALUE for a NULL table. Bounded: the forced close gets
 * at most 200 ms.
 */
doca_error_t sdp_plugin_mem_abort(struct sdp_plugin_mem *mem, uint64_t region_id);

/*
 * The bounds of a region: *va_p (host virtual address of its first byte) and *len_p (bytes).
 * Either output may be NULL. DOCA_ERROR_INVALID_VALUE for a NULL table, DOCA_ERROR_NOT_FOUND
 * for an unknown id.
 */
doca_error_t sdp_plugin_mem_region_get(const struct sdp_plugin_mem *mem, uint64_t region_id,
				       uint64_t *va_p, uint64_t *len_p);

/*
 * Check without moving anything that [addr, addr + len) lies inside region region_id:
 * DOCA_SUCCESS, DOCA_ERROR_INVALID_VALUE (outside, len 0, or a NULL table; logged once),
 * DOCA_ERROR_NOT_FOUND (unknown id). The put/get calls run the same check themselves.
 */
doca_error_t sdp_plugin_mem_check(const struct sdp_plugin_mem *mem, uint64_t region_id,
				  uint64_t addr, size_t len);

/*
 * Whether puts and gets of region region_id go as softdpu active messages to the owner's
 * export worker (the xrma path, sdp_urom_xrma.h) rather than UCX's RMA: 1 or 0, -1 for an
 * unknown id or a NULL table. The path is taken where the memh has an am_key and the endpoint
 * runs over TCP (or SOFTDPU_UROM_XRMA=1 says so).
 */
int sdp_plugin_mem_uses_xrma(const struct sdp_plugin_mem *mem, uint64_t region_id);

/*
 * The id of a region of this table that contains all of [addr, addr + len) (the first found
 * when regions overlap). DOCA_ERROR_INVALID_VALUE for NULL arguments or len 0,
 * DOCA_ERROR_NOT_FOUND when no region covers the range (not logged: a lookup may miss).
 */
doca_error_t sdp_plugin_mem_find(const struct sdp_plugin_mem *mem, uint64_t addr, size_t len,
				 uint64_t *region_id_p);

/*
 * Non-blocking put: copy len bytes from local (plugin memory) to host address addr of the
 * region. On DOCA_SUCCESS the operation is issued and cb(arg, status) will be called once from
 * sdp_plugin_mem_progress() (see sdp_plugin_mem_cb_func_t); local must stay valid and
 * unchanged until then. The callback
 * means the local buffer is free again, NOT that the bytes are visible in host memory: that
 * takes a flush of the region (sdp_plugin_mem_flush_nb() or sdp_plugin_mem_flush()).
 * Refusals (cb is never called, nothing moves): DOCA_ERROR_INVALID_VALUE (NULL table, local
 * or cb, len 0, range outside the region), DOCA_ERROR_NOT_FOUND (unknown id),
 * DOCA_ERROR_NOT_CONNECTED (the region's endpoint was closed), DOCA_ERROR_NO_MEMORY,
 * DOCA_ERROR_DRIVER (UCX refused it at once).
 */
doca_error_t sdp_plugin_mem_put_nb(struct sdp_plugin_mem *mem, uint64_t region_id, uint64_t addr,
				   const void *local, size_t len, sdp_plugin_mem_cb_func_t cb,
				   void *arg);

/*
 * Non-blocking get: copy len bytes from host address addr of the region into local. When the
 * callback reports DOCA_SUCCESS the bytes are in local. Refusals as sdp_plugin_mem_put_nb();
 * local must stay valid until the callback.
 */
doca_error_t sdp_plugin_mem_get_nb(struct sdp_plugin_mem *mem, uint64_t region_id, uint64_t addr,
				   void *local, size_t len, sdp_plugin_mem_cb_func_t cb, void *arg);

/*
 * Non-blocking flush of the region's endpoint: the callback reports DOCA_SUCCESS once every
 * put and get issued earlier on that endpoint (any region of the same owner) has completed at
 * the host, puts included. Refusals as sdp_plugin_mem_put_nb() (no range check).
 */
doca_error_t sdp_plugin_mem_flush_nb(struct sdp_plugin_mem *mem, uint64_t region_id,
				     sdp_plugin_mem_cb_func_t cb, void *arg);

/*
 * Blocking put for simple uses: sdp_plugin_mem_put_nb() followed by a flush of the endpoint,
 * progressing the plugin's worker (sleeping on its event fd when it has one, never spinning
 * while idle) for at most timeout_ms (>= 0). Callbacks of other operations are not run here
 * (the next sdp_plugin_mem_progress() runs them). On DOCA_SUCCESS the bytes are in host memory.
 * DOCA_ERROR_TIME_OUT when the bound passes: the region's endpoint is then closed by force
 * (so no transfer can touch local after the return) and every region through it fails with
 * DOCA_ERROR_NOT_CONNECTED from then on; release them and import again. Other errors as
 * sdp_plugin_mem_put_nb() (refusals move nothing) or the status of a failed completion.
 * Must not be called from a completion callback.
 */
doca_error_t sdp_plugin_mem_put(struct sdp_plugin_mem *mem, uint64_t region_id, uint64_t addr,
				const void *local, size_t len, int timeout_ms);

/* Blocking get: as sdp_plugin_mem_put(); on DOCA_SUCCESS the bytes are in local. */
doca_error_t sdp_plugin_mem_get(struct sdp_plugin_mem *mem, uint64_t region_id, uint64_t addr,
				void *local, size_t len, int timeout_ms);

/* Blocking flush of the region's endpoint within timeout_ms: as sdp_plugin_mem_flush_nb(). */
doca_error_t sdp_plugin_mem_flush(struct sdp_plugin_mem *mem, uint64_t region_id, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* SDP_PLUGIN_MEM_H_ */
