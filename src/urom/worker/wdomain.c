/*
 * softdpu-urom-worker: the domain table and the four domain lookups (wdomain.h).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "wdomain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdp_log.h"
#include "sdp_urom_memh.h"
#include "sdp_urom_plugin.h"

SDP_LOG_COMPONENT("urom_worker");

static const struct sdp_urom_wdoms *lookup_table;

static void member_free(struct sdp_urom_wdom_member *m)
{
	uint32_t i;

	for (i = 0; m->clamped != NULL && i < m->num_segs; i++)
		free(m->clamped[i]);
	free(m->clamped);
	free(m->raw);
	free(m->addrs);
	free(m->segs);
	memset(m, 0, sizeof(*m));
}

static void wdom_reset(struct sdp_urom_wdom *dom)
{
	size_t i;

	for (i = 0; i < dom->num; i++)
		member_free(&dom->members[i]);
	free(dom->members);
	memset(dom, 0, sizeof(*dom));
}

static int seg_cmp(const void *a, const void *b)
{
	const struct sdp_urom_dom_seg *x = a, *y = b;

	return x->va < y->va ? -1 : x->va > y->va;
}

static int member_cmp(const void *a, const void *b)
{
	const struct sdp_urom_wdom_member *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * A segment whose memh is softdpu's descriptor: the segment must lie inside the memh's range,
 * and the memh the lookups hand out is a copy narrowed to the segment, so a plugin importing it
 * reaches exactly what the owner added to its domain, not the rest of a larger export. Other
 * memh bytes (not softdpu's) are handed out as they came.
 */
static doca_error_t member_clamp(struct sdp_urom_wdom_member *w, char *why, size_t why_size)
{
	struct sdp_urom_memh mh;
	uint32_t i;
	size_t len;

	w->clamped = calloc(w->num_segs ? w->num_segs : 1, sizeof(*w->clamped));
	if (w->clamped == NULL) {
		snprintf(why, why_size, "no memory for %u segments", w->num_segs);
		return DOCA_ERROR_NO_MEMORY;
	}
	for (i = 0; i < w->num_segs; i++) {
		struct sdp_urom_dom_seg *g = &w->segs[i];

		if (g->memh.len == 0 || sdp_urom_memh_unpack_why(g->memh.data, g->memh.len, &mh,
								 NULL, 0) != DOCA_SUCCESS)
			continue;
		if (g->va < mh.va || g->va - mh.va > mh.len || g->len > mh.len - (g->va - mh.va)) {
			snprintf(why, why_size,
				 "segment [%#lx, +%lu) is not inside its memh's range [%#lx, +%lu)",
				 (unsigned long)g->va, (unsigned long)g->len, (unsigned long)mh.va,
				 (unsigned long)mh.len);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (mh.va == g->va && mh.len == g->len)
			continue;
		mh.va = g->va;
		mh.len = g->len;
		len = 0;
		(void)sdp_urom_memh_pack(&mh, NULL, 0, &len);
		w->clamped[i] = len ? malloc(len) : NULL;
		if (w->clamped[i] == NULL ||
		    sdp_urom_memh_pack(&mh, w->clamped[i], len, &len) != DOCA_SUCCESS) {
			snprintf(why, why_size, "cannot narrow the memh of segment %u", i);
			return DOCA_ERROR_NO_MEMORY;
		}
		g->memh.data = w->clamped[i];
		g->memh.len = (uint32_t)len;
	}
	return DOCA_SUCCESS;
}

/* Copy and index one record; INVALID_VALUE (reason in why) when malformed or overlapping. */
static doca_error_t member_build(struct sdp_urom_wdom_member *out, const void *rec, size_t len,
				 char *why, size_t why_size)
{
	struct sdp_urom_dom_member *m;
	struct sdp_urom_wdom_member w;
	doca_error_t status;
	size_t pos = 0;
	uint32_t i;

	memset(&w, 0, sizeof(w));
	m = malloc(sizeof(*m));
	w.raw = malloc(len);
	if (m == NULL || w.raw == NULL) {
		free(m);
		free(w.raw);
		snprintf(why, why_size, "no memory for a record of %zu bytes", len);
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(w.raw, rec, len);
	w.raw_len = len;
	status = sdp_urom_dom_member_unpack_why(w.raw, len, m, why, why_size);
	if (status != DOCA_SUCCESS)
		goto fail;
	w.id = m->id;
	w.num_addrs = m->num_addrs;
	w.num_segs = m->num_segs;
	w.addrs = calloc(m->num_addrs ? m->num_addrs : 1, sizeof(*w.addrs));
	w.segs = calloc(m->num_segs ? m->num_segs : 1, sizeof(*w.segs));
	if (w.addrs == NULL || w.segs == NULL) {
		snprintf(why, why_size, "no memory to index a record of %zu bytes", len);
		status = DOCA_ERROR_NO_MEMORY;
		goto fail;
	}
	memcpy(w.addrs, m->addrs, m->num_addrs * sizeof(*w.addrs));
	for (i = 0; i < m->num_segs; i++)
		if (!sdp_urom_dom_seg_next(m, &pos, &w.segs[i])) {
			snprintf(why, why_size, "segment %u unreadable", i);
			status = DOCA_ERROR_INVALID_VALUE;
			goto fail;
		}
	qsort(w.segs, w.num_segs, sizeof(*w.segs), seg_cmp);
	status = member_clamp(&w, why, why_size);
	if (status != DOCA_SUCCESS)
		goto fail;
	for (i = 1; i < w.num_segs; i++)
		if (w.segs[i].va < w.segs[i - 1].va + w.segs[i - 1].len) {
			snprintf(why, why_size, "segments at %#lx and %#lx overlap",
				 (unsigned long)w.segs[i - 1].va, (unsigned long)w.segs[i].va);
			status = DOCA_ERROR_INVALID_VALUE;
			goto fail;
		}
	free(m);
	*out = w;
	return DOCA_SUCCESS;
fail:
	free(m);
	member_free(&w);
	return status;
}

doca_error_t sdp_urom_wdom_add_member(struct sdp_urom_wdoms *d, uint64_t owner, uint64_t key,
				      const void *rec, size_t len, char *why, size_t why_size)
{
	struct sdp_urom_wdom *st = &d->staging;
	struct sdp_urom_wdom_member m;
	doca_error_t status;
	size_t i;

	if (d->active.used && d->active.owner != owner) {
		snprintf(why, why_size, "this worker serves a domain of another host (dest %lu)",
			 (unsigned long)d->active.owner);
		return DOCA_ERROR_IN_USE;
	}
	if (st->used && st->owner != owner) {
		snprintf(why, why_size, "another host (dest %lu) is pushing its domain",
			 (unsigned long)st->owner);
		return DOCA_ERROR_IN_USE;
	}
	if (st->staged_bytes + len > SDP_UROM_WDOM_STAGE_MAX) {
		snprintf(why, why_size, "more than %u bytes of member records staged",
			 SDP_UROM_WDOM_STAGE_MAX);
		return DOCA_ERROR_FULL;
	}
	if (!st->used || st->owner != owner || st->key != key) {
		wdom_reset(st);
		st->used = 1;
		st->owner = owner;
		st->key = key;
	}
	if (st->num == SDP_UROM_DOM_MAX_MEMBERS) {
		snprintf(why, why_size, "more than %d members", SDP_UROM_DOM_MAX_MEMBERS);
		return DOCA_ERROR_FULL;
	}
	status = member_build(&m, rec, len, why, why_size);
	if (status != DOCA_SUCCESS)
		return status;
	for (i = 0; i < st->num; i++)
		if (st->members[i].id == m.id) {
			snprintf(why, why_size, "domain id %lu pushed twice", (unsigned long)m.id);
			member_free(&m);
			return DOCA_ERROR_ALREADY_EXIST;
		}
	if (st->num == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 4;
		void *p = realloc(st->members, cap * sizeof(*st->members));

		if (p == NULL) {
			member_free(&m);
			snprintf(why, why_size, "no memory for %zu members", cap);
			return DOCA_ERROR_NO_MEMORY;
		}
		st->members = p;
		st->cap = cap;
	}
	st->members[st->num++] = m;
	st->staged_bytes += len;
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_wdom_commit(struct sdp_urom_wdoms *d, uint64_t owner, uint64_t key,
				  uint32_t num, char *why, size_t why_size)
{
	struct sdp_urom_wdom *st = &d->staging;

	if (d->active.used && d->active.owner != owner) {
		snprintf(why, why_size, "this worker serves a domain of another host (dest %lu)",
			 (unsigned long)d->active.owner);
		wdom_reset(st);
		return DOCA_ERROR_IN_USE;
	}
	if (st->used && st->owner != owner) {
		snprintf(why, why_size, "another host (dest %lu) is pushing its domain",
			 (unsigned long)st->owner);
		return DOCA_ERROR_IN_USE;
	}
	if (!st->used || st->key != key || st->num != num || num == 0) {
		snprintf(why, why_size, "commit of %u members, %zu were pushed", num,
			 st->used && st->key == key ? st->num : 0);
		wdom_reset(st);
		return DOCA_ERROR_INVALID_VALUE;
	}
	qsort(st->members, st->num, sizeof(*st->members), member_cmp);
	wdom_reset(&d->active);
	d->active = *st;
	memset(st, 0, sizeof(*st));
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_wdom_clear(struct sdp_urom_wdoms *d, uint64_t owner, uint64_t key)
{
	doca_error_t status = DOCA_ERROR_NOT_FOUND;

	if (d->staging.used && d->staging.owner == owner && d->staging.key == key) {
		wdom_reset(&d->staging);
		status = DOCA_SUCCESS;
	}
	if (d->active.used && d->active.owner == owner && d->active.key == key) {
		wdom_reset(&d->active);
		status = DOCA_SUCCESS;
	}
	return status;
}

void sdp_urom_wdom_drop_owner(struct sdp_urom_wdoms *d, uint64_t owner)
{
	if (d->staging.used && d->staging.owner == owner)
		wdom_reset(&d->staging);
	if (d->active.used && d->active.owner == owner)
		wdom_reset(&d->active);
}

void sdp_urom_wdom_fini(struct sdp_urom_wdoms *d)
{
	wdom_reset(&d->staging);
	wdom_reset(&d->active);
	if (lookup_table == d)
		lookup_table = NULL;
}

const struct sdp_urom_wdom_member *sdp_urom_wdom_find(const struct sdp_urom_wdoms *d, uint64_t id)
{
	size_t lo = 0, hi;

	if (d == NULL || !d->active.used)
		return NULL;
	hi = d->active.num;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v = d->active.members[mid].id;

		if (v == id)
			return &d->active.members[mid];
		if (v < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ---- lookups ---- */

static const char *ctx_plugin_name(struct urom_worker_ctx *ctx)
{
	struct sdp_urom_plugin *p =
		(struct sdp_urom_plugin *)((char *)ctx - offsetof(struct sdp_urom_plugin, ctx));

	return p->name;
}

static const struct sdp_urom_wdom_member *lookup_member(struct urom_worker_ctx *ctx,
							uint64_t domain_id, const char *what)
{
	const struct sdp_urom_wdom_member *m = sdp_urom_wdom_find(lookup_table, domain_id);

	if (m == NULL)
		sdp_debug("%s lookup (plugin %s): no domain member %lu", what, ctx_plugin_name(ctx),
			  (unsigned long)domain_id);
	return m;
}

static doca_error_t wdom_addr_lookup(struct urom_worker_ctx *ctx, uint64_t domain_id, void **addr)
{
	const struct sdp_urom_wdom_member *m;
	const char *name;
	uint32_t i;

	if (ctx == NULL || addr == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	m = lookup_member(ctx, domain_id, "address");
	if (m == NULL)
		return DOCA_ERROR_NOT_FOUND;
	name = ctx_plugin_name(ctx);
	for (i = 0; i < m->num_addrs; i++)
		if (strcmp(m->addrs[i].name, name) == 0) {
			*addr = (void *)m->addrs[i].addr.data;
			return DOCA_SUCCESS;
		}
	sdp_debug("address lookup: domain member %lu has no plugin %s", (unsigned long)domain_id,
		  name);
	return DOCA_ERROR_NOT_FOUND;
}

static doca_error_t wdom_seg_lookup(struct urom_worker_ctx *ctx, uint64_t domain_id, uint64_t va,
				    int *seg)
{
	const struct sdp_urom_wdom_member *m;
	uint32_t lo = 0, hi;

	if (ctx == NULL || seg == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	m = lookup_member(ctx, domain_id, "segment");
	if (m == NULL)
		return DOCA_ERROR_NOT_FOUND;
	hi = m->num_segs;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct sdp_urom_dom_seg *g = &m->segs[mid];

		if (va < g->va) {
			hi = mid;
		} else if (va - g->va >= g->len) {
			lo = mid + 1;
		} else {
			*seg = (int)mid;
			return DOCA_SUCCESS;
		}
	}
	sdp_debug("segment lookup: va %#lx is in no segment of domain member %lu",
		  (unsigned long)va, (unsigned long)domain_id);
	return DOCA_ERROR_NOT_FOUND;
}

static doca_error_t seg_blob(struct urom_worker_ctx *ctx, uint64_t domain_id, int seg, size_t *len,
			     void **out, int mkey)
{
	const struct sdp_urom_wdom_member *m;
	const struct sdp_urom_bytes *b;

	if (ctx == NULL || len == NULL || out == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	m = lookup_member(ctx, domain_id, mkey ? "mkey" : "memh");
	if (m == NULL)
		return DOCA_ERROR_NOT_FOUND;
	if (seg < 0 || (uint32_t)seg >= m->num_segs)
		return DOCA_ERROR_NOT_FOUND;
	b = mkey ? &m->segs[seg].mkey : &m->segs[seg].memh;
	if (b->len == 0)
		return DOCA_ERROR_NOT_FOUND;
	*len = b->len;
	*out = (void *)b->data;
	return DOCA_SUCCESS;
}

static doca_error_t wdom_memh_lookup(struct urom_worker_ctx *ctx, uint64_t domain_id, int seg,
				     size_t *len, void **memh)
{
	return seg_blob(ctx, domain_id, seg, len, memh, 0);
}

static doca_error_t wdom_mkey_lookup(struct urom_worker_ctx *ctx, uint64_t domain_id, int seg,
				     size_t *len, void **rkey)
{
	return seg_blob(ctx, domain_id, seg, len, rkey, 1);
}

void sdp_urom_wdom_bind(struct urom_worker_ctx *ctx, const struct sdp_urom_wdoms *d)
{
	lookup_table = d;
	ctx->domain_iface.addr_lookup = wdom_addr_lookup;
	ctx->domain_iface.seg_lookup = wdom_seg_lookup;
	ctx->domain_iface.memh_lookup = wdom_memh_lookup;
	ctx->domain_iface.mkey_lookup = wdom_mkey_lookup;
}
