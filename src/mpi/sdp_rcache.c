/*
 * The registration cache of sdp_rcache.h.
 *
 * Regions live on one list, most recently used first (a few hundred at most: a walk costs
 * less than the registration it saves). The unmap hook and the cache share only the queue:
 * a writer claims index i (fetch-add on widx), fills slot i % SDP_RCACHE_QUEUE and publishes it
 * by storing i + 1 in the slot's seq; the reader (under the caller's serialization) takes
 * slots in index order while their seq says they are written, and stops at the first that is
 * not (a writer still inside its hook: taken next time). A writer that finds the queue full
 * sets the overflow flag instead; the reader then drops every registration nothing holds,
 * marks the held ones stale, and skips to the writers' index.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_rcache.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ucm/api/ucm.h>

struct sdp_rcache_region {
	struct sdp_rcache_region *prev, *next;
	uintptr_t start, end; /* page aligned */
	void *handle;
	unsigned refs;
	int stale; /* its pages were unmapped while held: deregistered at the last put */
};

struct sdp_rcache_slot {
	_Atomic uint64_t seq; /* index + 1 once written */
	uintptr_t start, end;
};

struct sdp_rcache {
	struct sdp_rcache_ops ops;
	void *arg;
	unsigned max;
	struct sdp_rcache_region *head;	 /* cached, most recently used first */
	struct sdp_rcache_region *stale; /* held, unmapped: freed at their last put */
	unsigned n;
	uintptr_t page;
	_Atomic uint64_t widx; /* next index a writer claims */
	_Atomic uint64_t ridx; /* next index the reader takes */
	_Atomic int overflow;
	int hooked;
	struct sdp_rcache_stats st;
	struct sdp_rcache_slot q[SDP_RCACHE_QUEUE];
};

/* ---- the unmap hook: atomics only (it may run inside malloc) ---- */

static void rcache_unmapped(ucm_event_type_t type, ucm_event_t *event, void *arg)
{
	struct sdp_rcache *rc = arg;
	uintptr_t start, end;
	uint64_t i;

	if (type != UCM_EVENT_VM_UNMAPPED || event->vm_unmapped.size == 0)
		return;
	start = (uintptr_t)event->vm_unmapped.address;
	end = start + event->vm_unmapped.size;
	if (end < start)
		end = UINTPTR_MAX;
	i = atomic_fetch_add_explicit(&rc->widx, 1, memory_order_acq_rel);
	if (i - atomic_load_explicit(&rc->ridx, memory_order_acquire) >= SDP_RCACHE_QUEUE) {
		atomic_store_explicit(&rc->overflow, 1, memory_order_release);
		return;
	}
	rc->q[i % SDP_RCACHE_QUEUE].start = start;
	rc->q[i % SDP_RCACHE_QUEUE].end = end;
	atomic_store_explicit(&rc->q[i % SDP_RCACHE_QUEUE].seq, i + 1, memory_order_release);
}

/* ---- the list ---- */

static void unlink_region(struct sdp_rcache_region **head, struct sdp_rcache_region *r)
{
	if (r->prev != NULL)
		r->prev->next = r->next;
	else
		*head = r->next;
	if (r->next != NULL)
		r->next->prev = r->prev;
	r->prev = r->next = NULL;
}

static void push_front(struct sdp_rcache_region **head, struct sdp_rcache_region *r)
{
	r->prev = NULL;
	r->next = *head;
	if (*head != NULL)
		(*head)->prev = r;
	*head = r;
}

static void region_free(struct sdp_rcache *rc, struct sdp_rcache_region *r)
{
	rc->ops.dereg(rc->arg, r->handle);
	free(r);
}

/* Take r out of the cache: freed now, or (held) kept stale until its last put. */
static void drop(struct sdp_rcache *rc, struct sdp_rcache_region *r)
{
	unlink_region(&rc->head, r);
	rc->n--;
	if (r->refs == 0) {
		region_free(rc, r);
	} else {
		r->stale = 1;
		push_front(&rc->stale, r);
	}
}

static void invalidate(struct sdp_rcache *rc, uintptr_t start, uintptr_t end)
{
	struct sdp_rcache_region *r = rc->head, *next;

	for (; r != NULL; r = next) {
		next = r->next;
		if (r->start < end && start < r->end) {
			drop(rc, r);
			rc->st.invalidated++;
		}
	}
}

void sdp_rcache_drain(struct sdp_rcache *rc)
{
	uint64_t r, w;

	if (rc == NULL)
		return;
	if (atomic_exchange_explicit(&rc->overflow, 0, memory_order_acq_rel)) {
		w = atomic_load_explicit(&rc->widx, memory_order_acquire);
		invalidate(rc, 0, UINTPTR_MAX);
		atomic_store_explicit(&rc->ridx, w, memory_order_release);
		rc->st.overflows++;
	}
	r = atomic_load_explicit(&rc->ridx, memory_order_relaxed);
	w = atomic_load_explicit(&rc->widx, memory_order_acquire);
	while (r < w) {
		struct sdp_rcache_slot *s = &rc->q[r % SDP_RCACHE_QUEUE];

		if (atomic_load_explicit(&s->seq, memory_order_acquire) != r + 1)
			break; /* its writer is still in the hook */
		invalidate(rc, s->start, s->end);
		r++;
		atomic_store_explicit(&rc->ridx, r, memory_order_release);
	}
}

/* ---- the API ---- */

int sdp_rcache_create(const struct sdp_rcache_ops *ops, void *arg, unsigned max_regions,
		      struct sdp_rcache **rc_p, char *why, size_t why_len)
{
	struct sdp_rcache *rc;
	ucs_status_t st;
	uint64_t before;
	long page = sysconf(_SC_PAGESIZE);
	void *probe;

	if (ops == NULL || ops->reg == NULL || ops->dereg == NULL || max_regions == 0 ||
	    rc_p == NULL) {
		snprintf(why, why_len, "invalid arguments");
		return -1;
	}
	rc = calloc(1, sizeof(*rc));
	if (rc == NULL) {
		snprintf(why, why_len, "no memory for the cache");
		return -1;
	}
	rc->ops = *ops;
	rc->arg = arg;
	rc->max = max_regions;
	rc->page = page > 0 ? (uintptr_t)page : 4096;
	st = ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 1000, rcache_unmapped, rc);
	if (st != UCS_OK) {
		snprintf(why, why_len, "UCX's memory hooks could not be installed: %s",
			 ucs_status_string(st));
		free(rc);
		return -1;
	}
	rc->hooked = 1;
	/* Hooks that install but never fire (UCX_MEM_EVENTS=no, a static munmap) are no hooks. */
	before = atomic_load(&rc->widx);
	probe = mmap(NULL, rc->page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (probe == MAP_FAILED || munmap(probe, rc->page) != 0 ||
	    atomic_load(&rc->widx) == before) {
		snprintf(why, why_len, "UCX's memory hooks do not report munmap (UCX_MEM_EVENTS?)");
		sdp_rcache_destroy(rc);
		return -1;
	}
	sdp_rcache_drain(rc);
	*rc_p = rc;
	return 0;
}

void sdp_rcache_destroy(struct sdp_rcache *rc)
{
	if (rc == NULL)
		return;
	if (rc->hooked)
		ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, rcache_unmapped, rc);
	while (rc->head != NULL) {
		struct sdp_rcache_region *r = rc->head;

		unlink_region(&rc->head, r);
		region_free(rc, r);
	}
	while (rc->stale != NULL) {
		struct sdp_rcache_region *r = rc->stale;

		unlink_region(&rc->stale, r);
		region_free(rc, r);
	}
	free(rc);
}

struct sdp_rcache_region *sdp_rcache_get(struct sdp_rcache *rc, const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, start, end;
	struct sdp_rcache_region *r;

	if (rc == NULL || len == 0 || a + len < a)
		return NULL;
	sdp_rcache_drain(rc);
	for (r = rc->head; r != NULL; r = r->next) {
		if (r->start <= a && a + len <= r->end) {
			if (r != rc->head) { /* most recently used first */
				unlink_region(&rc->head, r);
				push_front(&rc->head, r);
			}
			r->refs++;
			rc->st.hits++;
			return r;
		}
	}
	start = a & ~(rc->page - 1);
	end = (a + len + rc->page - 1) & ~(rc->page - 1);
	if (end < a + len) {
		rc->st.failed++;
		return NULL;
	}
	if (rc->n >= rc->max) {
		struct sdp_rcache_region *lru = NULL;

		for (r = rc->head; r != NULL; r = r->next)
			if (r->refs == 0)
				lru = r; /* the last one nothing holds: least recently used */
		if (lru == NULL) {
			rc->st.failed++;
			return NULL;
		}
		drop(rc, lru);
		rc->st.evicted++;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		rc->st.failed++;
		return NULL;
	}
	r->start = start;
	r->end = end;
	if (rc->ops.reg(rc->arg, (void *)start, end - start, &r->handle) != 0) {
		free(r);
		rc->st.failed++;
		return NULL;
	}
	r->refs = 1;
	push_front(&rc->head, r);
	rc->n++;
	rc->st.misses++;
	return r;
}

void sdp_rcache_put(struct sdp_rcache *rc, struct sdp_rcache_region *r)
{
	if (rc == NULL || r == NULL || r->refs == 0)
		return;
	if (--r->refs == 0 && r->stale) {
		unlink_region(&rc->stale, r);
		region_free(rc, r);
	}
}

void *sdp_rcache_region_handle(const struct sdp_rcache_region *r)
{
	return r != NULL ? r->handle : NULL;
}

void sdp_rcache_stats(const struct sdp_rcache *rc, struct sdp_rcache_stats *st)
{
	if (st == NULL)
		return;
	memset(st, 0, sizeof(*st));
	if (rc == NULL)
		return;
	*st = rc->st;
	st->regions = rc->n;
}
