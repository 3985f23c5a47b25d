/*
 * A registration cache for libsoftdpu_mpi (and anything else that registers user buffers again
 * and again): the first use of a buffer registers the pages around it, later uses of any range
 * inside those pages find the registration, and a registration whose pages leave the address
 * space (munmap, a free() that unmaps, brk shrinking, mremap, madvise DONTNEED/FREE, shmdt) is
 * dropped before the next lookup can return it, as UCX's rcache does. Unmaps are noticed
 * through UCX's memory hooks (libucm, UCM_EVENT_VM_UNMAPPED); where those cannot be installed
 * sdp_rcache_create() fails, so no registration ever outlives its memory unnoticed.
 *
 * The hook runs inside the unmapping thread, possibly inside malloc: it only appends the range
 * to a lock-free queue (SDP_RCACHE_QUEUE slots; past that it marks the queue overflowed, and
 * the next lookup drops every registration nothing holds). Lookups, releases and
 * deregistrations run in the caller's context: the cache is not thread-safe by itself, the
 * caller serializes its calls (libsoftdpu_mpi holds its lock).
 *
 * A region is held from sdp_rcache_get() to sdp_rcache_put(): an unmap of a held region
 * marks it stale (it is never returned again) and deregisters it at its last put. At most
 * max_regions are cached; past that the least recently used region nothing holds is
 * deregistered, and a lookup that finds none to drop fails (the caller stages the data
 * instead).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_RCACHE_H_
#define SDP_RCACHE_H_

#include <stddef.h>
#include <stdint.h>

#define SDP_RCACHE_QUEUE 1024

/* How a region is registered and deregistered (addr and len page aligned). 0 = success. */
struct sdp_rcache_ops {
	int (*reg)(void *arg, void *addr, size_t len, void **handle);
	void (*dereg)(void *arg, void *handle);
};

struct sdp_rcache_stats {
	uint64_t hits;	      /* lookups that found a registration */
	uint64_t misses;      /* lookups that registered */
	uint64_t invalidated; /* registrations dropped because their pages were unmapped */
	uint64_t evicted;     /* registrations dropped to make room */
	uint64_t failed;      /* lookups that failed (registration refused, or no room) */
	uint64_t overflows;   /* times the unmap queue overflowed */
	uint64_t regions;     /* registrations cached now */
};

struct sdp_rcache;
struct sdp_rcache_region;

/*
 * A cache of at most max_regions registrations made through ops (arg passed to them). 0 and
 * *rc_p, or -1 with the reason in why (why_len bytes): bad arguments, no memory, or UCX's
 * memory hooks could not be installed.
 */
int sdp_rcache_create(const struct sdp_rcache_ops *ops, void *arg, unsigned max_regions,
		      struct sdp_rcache **rc_p, char *why, size_t why_len);

/*
 * Deregister everything and free the cache (the hook is removed first). Regions still held are
 * deregistered too: call it when nothing uses them. NULL is ignored.
 */
void sdp_rcache_destroy(struct sdp_rcache *rc);

/*
 * A region covering [addr, addr + len) (len > 0), held: found, or registered now (the pages
 * around the range). NULL when it cannot be had (registration refused, no room, len 0).
 */
struct sdp_rcache_region *sdp_rcache_get(struct sdp_rcache *rc, const void *addr, size_t len);

/* Release a hold from sdp_rcache_get(). NULL is ignored. */
void sdp_rcache_put(struct sdp_rcache *rc, struct sdp_rcache_region *r);

/* The handle ops->reg gave for the region. */
void *sdp_rcache_region_handle(const struct sdp_rcache_region *r);

/* The counters so far. */
void sdp_rcache_stats(const struct sdp_rcache *rc, struct sdp_rcache_stats *st);

/*
 * Apply the unmaps queued so far (sdp_rcache_get() does it first). For tests and for callers
 * that want registrations of unmapped memory gone before they deregister other things.
 */
void sdp_rcache_drain(struct sdp_rcache *rc);

#endif /* SDP_RCACHE_H_ */
