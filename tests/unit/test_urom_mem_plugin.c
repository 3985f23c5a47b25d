/*
 * The worker-side host memory helper (plugins/common/sdp_plugin_mem.h) against the export
 * engine of this same process (include/softdpu/urom_mem.h): imports and what they refuse, range
 * checks that move nothing and log once, unknown ids, callbacks that run only from
 * sdp_plugin_mem_progress(), release while busy, regions sharing an endpoint, imports through
 * domain lookups (a fake runtime table, cached per segment, re-imported when the member's memh
 * changes), member regions (memh a member sends at run time: owner check, cache, pins, LRU
 * bound), a memh whose rkey is 1 byte long (ends at a guard page: UCX must not read past
 * it), destroy with work in flight, the error handling mode chosen from UCX_TLS, and an abort
 * of an endpoint with a transfer in flight.
 *
 *   test_urom_mem_plugin [tcp]      (tcp: UCX_TLS=tcp, RMA through the export thread, as
 *                                    softdpu's xrma messages)
 *
 * tests/integration/test_urom_mem.c does the same across processes.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <poll.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include <ucp/api/ucp.h>

#include "doca_urom.h"
#include "sdp_plugin_mem.h"
#include "sdp_plugin_util.h"
#include "sdp_urom_memh.h"
#include "sdp_urom_xrma.h"
#include "softdpu/urom_mem.h"
#include "t_helpers.h"
#include "t_log_capture.h"

#define T_TIMEOUT_MS 10000

/* UCX_TLS=tcp: endpoints run over TCP, so regions take the xrma path on their own. */
static int t_tcp;

struct side {
	ucp_context_h context;
	ucp_worker_h worker;
	int efd;
	struct sdp_plugin_mem *mem;
};

static int side_open(struct side *s)
{
	ucp_worker_params_t wparams;
	ucp_params_t params;
	ucp_config_t *config;

	memset(s, 0, sizeof(*s));
	memset(&params, 0, sizeof(params));
	sdp_plugin_mem_ucp_params(&params);
	sdp_plugin_mem_ucp_params(NULL);
	T_TRUE(params.field_mask & UCP_PARAM_FIELD_FEATURES);
	T_TRUE(params.features & UCP_FEATURE_RMA);
	if (ucp_config_read(NULL, NULL, &config) != UCS_OK)
		return -1;
	if (ucp_init(&params, config, &s->context) != UCS_OK) {
		ucp_config_release(config);
		return -1;
	}
	ucp_config_release(config);
	memset(&wparams, 0, sizeof(wparams));
	if (ucp_worker_create(s->context, &wparams, &s->worker) != UCS_OK) {
		ucp_cleanup(s->context);
		return -1;
	}
	if (ucp_worker_get_efd(s->worker, &s->efd) != UCS_OK) {
		ucp_worker_destroy(s->worker);
		ucp_cleanup(s->context);
		return -1;
	}
	T_STATUS(sdp_plugin_mem_create(NULL, &s->mem), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_create(s->worker, NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(sdp_plugin_mem_create(s->worker, &s->mem));
	return s->mem != NULL ? 0 : -1;
}

static void side_close(struct side *s)
{
	sdp_plugin_mem_destroy(s->mem);
	ucp_worker_destroy(s->worker);
	ucp_cleanup(s->context);
}

struct cb_count {
	int calls;
	doca_error_t last;
};

static void count_cb(void *arg, doca_error_t status)
{
	struct cb_count *c = arg;

	c->calls++;
	c->last = status;
}

/* Progress until c->calls reaches want, sleeping on the worker's event fd (bounded). */
static void progress_until(struct side *s, struct cb_count *c, int want)
{
	struct pollfd pfd = {.fd = s->efd, .events = POLLIN};
	int slices = 0;

	while (c->calls < want && slices < T_TIMEOUT_MS / 10) {
		if (sdp_plugin_mem_progress(s->mem))
			continue;
		if (ucp_worker_arm(s->worker) == UCS_OK) {
			pfd.revents = 0;
			if (poll(&pfd, 1, 10) == 0)
				slices++;
		}
	}
	T_EQ_INT(c->calls, want);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 31 + (i >> 8));
}

static void test_plugin_local(void)
{
	enum {
		REGION = 256 << 10,
		GUARD = 4096
	};
	static uint8_t host[GUARD + REGION + GUARD], shadow[sizeof(host)], local[REGION];
	const uint64_t va = (uintptr_t)(host + GUARD);
	struct cb_count c = {0, DOCA_SUCCESS};
	struct sdp_urom_mem *exp = NULL;
	uint64_t id = 0, id2 = 0, got_va = 0, got_len = 0, found = 0;
	const void *memh, *mkey;
	size_t memh_len, mkey_len, sz;
	struct sdp_urom_memh d;
	struct side s;
	uint8_t junk[40];

	fill(host, sizeof(host), 3);
	memcpy(shadow, host, sizeof(host));
	T_OK(sdp_urom_mem_export(host + GUARD, REGION, &exp));
	if (exp == NULL || side_open(&s) != 0) {
		t_fail("cannot set up the worker side");
		return;
	}
	T_OK(sdp_urom_mem_get_memh(exp, &memh, &memh_len));
	T_OK(sdp_urom_mem_get_mkey(exp, &mkey, &mkey_len));

	/* Imports: bad bytes, then a good one. */
	memset(junk, 0, sizeof(junk));
	T_STATUS(sdp_plugin_mem_import(s.mem, junk, sizeof(junk), &id), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_import(s.mem, memh, memh_len - 1, &id), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_import(NULL, memh, memh_len, &id), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_import(s.mem, memh, memh_len, NULL), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(id, 0);
	T_OK(sdp_plugin_mem_import(s.mem, memh, memh_len, &id));
	T_TRUE(id != 0);
	if (t_tcp)
		T_EQ_INT(sdp_plugin_mem_uses_xrma(s.mem, id), 1);
	T_OK(sdp_plugin_mem_region_get(s.mem, id, &got_va, &got_len));
	T_EQ_INT(got_va, va);
	T_EQ_INT(got_len, REGION);
	T_STATUS(sdp_plugin_mem_region_get(s.mem, id + 100, &got_va, NULL), DOCA_ERROR_NOT_FOUND);
	T_OK(sdp_plugin_mem_find(s.mem, va + 10, 20, &found));
	T_EQ_INT(found, id);
	T_STATUS(sdp_plugin_mem_find(s.mem, va + REGION - 1, 2, &found), DOCA_ERROR_NOT_FOUND);
	T_OK(sdp_plugin_mem_check(s.mem, id, va, REGION));
	T_STATUS(sdp_plugin_mem_check(s.mem, id, va, REGION + 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_check(s.mem, id, va - 1, 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_check(s.mem, id, va, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_check(s.mem, 999, va, 1), DOCA_ERROR_NOT_FOUND);

	/* Blocking put/get of a few sizes at odd offsets, every byte checked. */
	for (sz = 1; sz <= REGION; sz = sz * 3 + 1) {
		size_t off = (sz * 7) % (REGION - sz + 1);

		fill(local, sz, (unsigned)sz);
		T_OK(sdp_plugin_mem_put(s.mem, id, va + off, local, sz, T_TIMEOUT_MS));
		memcpy(shadow + GUARD + off, local, sz);
		T_TRUE(memcmp(host, shadow, sizeof(host)) == 0);
		fill(host + GUARD + off, sz, (unsigned)sz + 99);
		memcpy(shadow + GUARD + off, host + GUARD + off, sz);
		memset(local, 0, sz);
		T_OK(sdp_plugin_mem_get(s.mem, id, va + off, local, sz, T_TIMEOUT_MS));
		T_TRUE(memcmp(local, host + GUARD + off, sz) == 0);
	}

	/* Refusals move nothing and log once. */
	fill(local, 64, 77);
	t_log_reset();
	T_STATUS(sdp_plugin_mem_put(s.mem, id, va - 1, local, 2, T_TIMEOUT_MS),
		 DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(t_log_nb, 1);
	T_STATUS(sdp_plugin_mem_put(s.mem, id, va + REGION - 1, local, 2, T_TIMEOUT_MS),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_put(s.mem, id, va + REGION, local, 1, T_TIMEOUT_MS),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_put(s.mem, id, UINT64_MAX, local, 2, T_TIMEOUT_MS),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_put(s.mem, id, va + 8, local, SIZE_MAX, T_TIMEOUT_MS),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_put(s.mem, id, va, local, 0, T_TIMEOUT_MS),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_put(s.mem, id, va, NULL, 8, T_TIMEOUT_MS),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_put(s.mem, id, va, local, 8, -1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_put(s.mem, id + 1000, va, local, 8, T_TIMEOUT_MS),
		 DOCA_ERROR_NOT_FOUND);
	T_STATUS(sdp_plugin_mem_put_nb(s.mem, id, va - 8, local, 16, count_cb, &c),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_put_nb(s.mem, id, va, local, 16, NULL, &c),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_get_nb(s.mem, 0, va, local, 16, count_cb, &c),
		 DOCA_ERROR_NOT_FOUND);
	T_STATUS(sdp_plugin_mem_get(s.mem, id, va + REGION - 4, local, 8, T_TIMEOUT_MS),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_flush_nb(s.mem, 12345, count_cb, &c), DOCA_ERROR_NOT_FOUND);
	T_STATUS(sdp_plugin_mem_flush(s.mem, 12345, T_TIMEOUT_MS), DOCA_ERROR_NOT_FOUND);
	T_OK(sdp_plugin_mem_flush(s.mem, id, T_TIMEOUT_MS));
	T_TRUE(memcmp(host, shadow, sizeof(host)) == 0);
	T_EQ_INT(c.calls, 0);

	/* Non-blocking: callbacks only from sdp_plugin_mem_progress(), release refused meanwhile. */
	fill(local, 4096, 5);
	T_OK(sdp_plugin_mem_put_nb(s.mem, id, va + 100, local, 4096, count_cb, &c));
	T_OK(sdp_plugin_mem_flush_nb(s.mem, id, count_cb, &c));
	T_EQ_INT(c.calls, 0);
	T_EQ_INT(sdp_plugin_mem_inflight(s.mem), 2);
	T_STATUS(sdp_plugin_mem_release(s.mem, id), DOCA_ERROR_IN_USE);
	progress_until(&s, &c, 2);
	T_EQ_INT(c.last, DOCA_SUCCESS);
	T_EQ_INT(sdp_plugin_mem_inflight(s.mem), 0);
	memcpy(shadow + GUARD + 100, local, 4096);
	T_TRUE(memcmp(host, shadow, sizeof(host)) == 0);
	memset(local, 0, 4096);
	T_OK(sdp_plugin_mem_get_nb(s.mem, id, va + 100, local, 4096, count_cb, &c));
	progress_until(&s, &c, 3);
	T_TRUE(memcmp(local, host + GUARD + 100, 4096) == 0);
	/* An idle flush completes too, from progress. */
	T_OK(sdp_plugin_mem_flush_nb(s.mem, id, count_cb, &c));
	T_EQ_INT(c.calls, 3);
	progress_until(&s, &c, 4);

	/* The same registration through import_rkey (owner address from the memh). */
	T_OK(sdp_urom_memh_unpack(memh, memh_len, &d));
	T_STATUS(sdp_plugin_mem_import_rkey(s.mem, d.owner_addr, d.owner_addr_len, va, 0, mkey,
					    mkey_len, &id2),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_import_rkey(s.mem, d.owner_addr, d.owner_addr_len, UINT64_MAX, 2,
					    mkey, mkey_len, &id2),
		 DOCA_ERROR_INVALID_VALUE);
	T_OK(sdp_plugin_mem_import_rkey(s.mem, d.owner_addr, d.owner_addr_len, va + 64, 64, mkey,
					mkey_len, &id2));
	T_TRUE(id2 != id && id2 != 0);
	fill(local, 64, 200);
	T_OK(sdp_plugin_mem_put(s.mem, id2, va + 64, local, 64, T_TIMEOUT_MS));
	T_STATUS(sdp_plugin_mem_put(s.mem, id2, va, local, 64, T_TIMEOUT_MS),
		 DOCA_ERROR_INVALID_VALUE);
	memcpy(shadow + GUARD + 64, local, 64);
	T_TRUE(memcmp(host, shadow, sizeof(host)) == 0);
	T_OK(sdp_plugin_mem_release(s.mem, id2));
	T_STATUS(sdp_plugin_mem_release(s.mem, id2), DOCA_ERROR_NOT_FOUND);
	T_STATUS(sdp_plugin_mem_release(NULL, id), DOCA_ERROR_INVALID_VALUE);
	/* The first region still works through the shared endpoint. */
	T_OK(sdp_plugin_mem_get(s.mem, id, va, local, 64, T_TIMEOUT_MS));
	T_TRUE(memcmp(local, host + GUARD, 64) == 0);
	T_OK(sdp_plugin_mem_release(s.mem, id));
	T_STATUS(sdp_plugin_mem_put(s.mem, id, va, local, 1, T_TIMEOUT_MS), DOCA_ERROR_NOT_FOUND);

	/* Destroy with work in flight: callbacks still run exactly once, from destroy. */
	T_OK(sdp_plugin_mem_import(s.mem, memh, memh_len, &id));
	c.calls = 0;
	T_OK(sdp_plugin_mem_get_nb(s.mem, id, va, local, 1024, count_cb, &c));
	T_OK(sdp_plugin_mem_put_nb(s.mem, id, va + 2048, host + GUARD + 2048, 1024, count_cb, &c));
	side_close(&s);
	T_EQ_INT(c.calls, 2);
	T_TRUE(memcmp(host, shadow, sizeof(host)) == 0);
	T_OK(sdp_urom_mem_unexport(exp));
}

/* A fake runtime table for import_domain: member 7 has two segments. */
struct fake_domain {
	struct urom_worker_ctx ctx;
	const void *memh[2];
	size_t memh_len[2];
	uint64_t va[2], len[2];
	int memh_lookups;
};

static doca_error_t fake_seg(struct urom_worker_ctx *ctx, uint64_t id, uint64_t va, int *seg)
{
	struct fake_domain *f = (struct fake_domain *)ctx;
	int i;

	if (seg == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	for (i = 0; i < 2 && id == 7; i++) {
		if (va >= f->va[i] && va - f->va[i] < f->len[i]) {
			*seg = i;
			return DOCA_SUCCESS;
		}
	}
	return DOCA_ERROR_NOT_FOUND;
}

static doca_error_t fake_memh(struct urom_worker_ctx *ctx, uint64_t id, int seg, size_t *len,
			      void **memh)
{
	struct fake_domain *f = (struct fake_domain *)ctx;

	f->memh_lookups++;
	if (id != 7 || seg < 0 || seg > 1)
		return DOCA_ERROR_NOT_FOUND;
	*len = f->memh_len[seg];
	*memh = (void *)f->memh[seg];
	return DOCA_SUCCESS;
}

static void test_plugin_domain(void)
{
	static uint8_t seg0[1000], seg1[3000], seg2[2000], shadow0[1000], local[3000];
	struct sdp_urom_mem *e0 = NULL, *e1 = NULL, *e2 = NULL;
	uint64_t id0 = 0, id0b = 0, id1 = 0, idx = 0, got_va = 0, got_len = 0;
	struct cb_count c = {0, DOCA_SUCCESS};
	struct fake_domain f;
	struct side s;

	memset(&f, 0, sizeof(f));
	f.ctx.domain_iface.seg_lookup = fake_seg;
	f.ctx.domain_iface.memh_lookup = fake_memh;
	T_OK(sdp_urom_mem_export(seg0, sizeof(seg0), &e0));
	T_OK(sdp_urom_mem_export(seg1, sizeof(seg1), &e1));
	T_OK(sdp_urom_mem_export(seg2, sizeof(seg2), &e2));
	if (e0 == NULL || e1 == NULL || e2 == NULL || side_open(&s) != 0) {
		t_fail("cannot set up the domain test");
		return;
	}
	T_OK(sdp_urom_mem_get_memh(e0, &f.memh[0], &f.memh_len[0]));
	T_OK(sdp_urom_mem_get_memh(e1, &f.memh[1], &f.memh_len[1]));
	f.va[0] = (uintptr_t)seg0;
	f.len[0] = sizeof(seg0);
	f.va[1] = (uintptr_t)seg1;
	f.len[1] = sizeof(seg1);

	T_STATUS(sdp_plugin_mem_import_domain(s.mem, NULL, 7, f.va[0], &id0),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_import_domain(s.mem, &f.ctx, 8, f.va[0], &id0),
		 DOCA_ERROR_NOT_FOUND);
	T_STATUS(sdp_plugin_mem_import_domain(s.mem, &f.ctx, 7, f.va[1] + sizeof(seg1), &id0),
		 DOCA_ERROR_NOT_FOUND);
	T_EQ_INT(f.memh_lookups, 0);
	T_OK(sdp_plugin_mem_import_domain(s.mem, &f.ctx, 7, f.va[0] + 5, &id0));
	T_OK(sdp_plugin_mem_import_domain(s.mem, &f.ctx, 7, f.va[0] + 999, &id0b));
	T_EQ_INT(id0b, id0); /* cached per (member, segment), the memh checked every time */
	T_EQ_INT(f.memh_lookups, 2);
	T_OK(sdp_plugin_mem_import_domain(s.mem, &f.ctx, 7, f.va[1], &id1));
	T_TRUE(id1 != id0);
	T_EQ_INT(f.memh_lookups, 3);

	fill(seg1, sizeof(seg1), 9);
	T_OK(sdp_plugin_mem_get(s.mem, id1, f.va[1], local, sizeof(seg1), T_TIMEOUT_MS));
	T_TRUE(memcmp(local, seg1, sizeof(seg1)) == 0);
	fill(local, sizeof(seg0), 11);
	T_OK(sdp_plugin_mem_put(s.mem, id0, f.va[0], local, sizeof(seg0), T_TIMEOUT_MS));
	T_TRUE(memcmp(local, seg0, sizeof(seg0)) == 0);
	/* Segment 0's region does not reach into segment 1. */
	T_STATUS(sdp_plugin_mem_get(s.mem, id0, f.va[1], local, 1, T_TIMEOUT_MS),
		 DOCA_ERROR_INVALID_VALUE);

	/* Released early: the next lookup imports it again under a new id. */
	T_OK(sdp_plugin_mem_release(s.mem, id0));
	T_OK(sdp_plugin_mem_import_domain(s.mem, &f.ctx, 7, f.va[0], &idx));
	T_TRUE(idx != id0);
	T_EQ_INT(f.memh_lookups, 4);

	/*
	 * A later domain reuses member 7 with other memory under segment 0 (seg2): the cached
	 * region must not be used, the new bounds must. First idle, then with work in flight on
	 * the old region (it stays valid until its callbacks ran and it is released).
	 */
	T_OK(sdp_urom_mem_get_memh(e2, &f.memh[0], &f.memh_len[0]));
	f.va[0] = (uintptr_t)seg2;
	f.len[0] = sizeof(seg2);
	T_OK(sdp_plugin_mem_import_domain(s.mem, &f.ctx, 7, f.va[0] + 1, &id0));
	T_TRUE(id0 != idx && id0 != 0);
	T_STATUS(sdp_plugin_mem_region_get(s.mem, idx, NULL, NULL), DOCA_ERROR_NOT_FOUND);
	T_OK(sdp_plugin_mem_region_get(s.mem, id0, &got_va, &got_len));
	T_EQ_INT(got_va, (uintptr_t)seg2);
	T_EQ_INT(got_len, sizeof(seg2));
	memcpy(shadow0, seg0, sizeof(seg0));
	fill(local, sizeof(seg2), 21);
	T_OK(sdp_plugin_mem_put(s.mem, id0, f.va[0], local, sizeof(seg2), T_TIMEOUT_MS));
	T_TRUE(memcmp(seg2, local, sizeof(seg2)) == 0);
	T_TRUE(memcmp(seg0, shadow0, sizeof(seg0)) == 0);
	fill(local, 100, 23);
	T_OK(sdp_plugin_mem_put_nb(s.mem, id0, f.va[0], local, 100, count_cb, &c));
	T_OK(sdp_urom_mem_get_memh(e0, &f.memh[0], &f.memh_len[0]));
	f.va[0] = (uintptr_t)seg0;
	f.len[0] = sizeof(seg0);
	T_OK(sdp_plugin_mem_import_domain(s.mem, &f.ctx, 7, f.va[0], &idx));
	T_TRUE(idx != id0);
	T_OK(sdp_plugin_mem_region_get(s.mem, idx, &got_va, &got_len));
	T_EQ_INT(got_va, (uintptr_t)seg0);
	T_EQ_INT(got_len, sizeof(seg0));
	progress_until(&s, &c, 1);
	T_EQ_INT(c.last, DOCA_SUCCESS);
	T_OK(sdp_plugin_mem_flush(s.mem, id0, T_TIMEOUT_MS));
	T_TRUE(memcmp(seg2, local, 100) == 0);
	T_OK(sdp_plugin_mem_release(s.mem, id0)); /* out of the cache, still the caller's to drop */
	T_OK(sdp_plugin_mem_import_domain(s.mem, &f.ctx, 7, f.va[0], &id0b));
	T_EQ_INT(id0b, idx);

	/* A memh the runtime hands out garbled is refused. */
	f.memh_len[1] = 10;
	T_OK(sdp_plugin_mem_release(s.mem, id1));
	T_STATUS(sdp_plugin_mem_import_domain(s.mem, &f.ctx, 7, f.va[1], &id1),
		 DOCA_ERROR_INVALID_VALUE);

	side_close(&s); /* domain regions belong to the table */
	T_OK(sdp_urom_mem_unexport(e0));
	T_OK(sdp_urom_mem_unexport(e1));
	T_OK(sdp_urom_mem_unexport(e2));
}

/*
 * A memh whose envelope is valid but whose rkey is 1 byte, placed so that it ends right before
 * a page that cannot be read: UCX takes the rkey without its length, so it must get a padded
 * copy (before that fix this test died of SIGSEGV in ucp_ep_rkey_unpack()). The import fails
 * or succeeds; either way nothing is read past the bytes.
 */
/*
 * Member regions (sdp_plugin_mem_import_member): memh a domain member sends at run time, pinned,
 * cached by their bytes, refused unless the member's own process owns them, bounded with LRU
 * eviction of unpinned ones.
 */
static void test_plugin_member(void)
{
	static uint8_t seg0[1000], buf[4096], local[4096];
	struct sdp_urom_mem *e0 = NULL, *ex = NULL, **many = NULL;
	const void *mx = NULL;
	size_t mx_len = 0, forged_len = 0;
	uint8_t forged[4096], *owner = NULL;
	uint64_t id = 0, id2 = 0, first = 0, dom = 0;
	struct sdp_urom_memh m;
	struct fake_domain f;
	struct side s;
	unsigned n = SDP_PLUGIN_MEM_MEMBER_MAX + 1;

	memset(&f, 0, sizeof(f));
	f.ctx.domain_iface.seg_lookup = fake_seg;
	f.ctx.domain_iface.memh_lookup = fake_memh;
	T_OK(sdp_urom_mem_export(seg0, sizeof(seg0), &e0));
	T_OK(sdp_urom_mem_export(buf, sizeof(buf), &ex));
	if (e0 == NULL || ex == NULL || side_open(&s) != 0) {
		t_fail("cannot set up the member test");
		return;
	}
	T_OK(sdp_urom_mem_get_memh(e0, &f.memh[0], &f.memh_len[0]));
	f.memh[1] = f.memh[0];
	f.memh_len[1] = f.memh_len[0];
	f.va[0] = (uintptr_t)seg0;
	f.len[0] = sizeof(seg0);
	T_OK(sdp_urom_mem_get_memh(ex, &mx, &mx_len));

	/* refusals */
	T_STATUS(sdp_plugin_mem_import_member(NULL, &f.ctx, 7, mx, mx_len, &id),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_import_member(s.mem, NULL, 7, mx, mx_len, &id),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_import_member(s.mem, &f.ctx, 7, mx, 0, &id),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_import_member(s.mem, &f.ctx, 7, "junk", 4, &id),
		 DOCA_ERROR_INVALID_VALUE);
	/* member 8 exported no segment: nothing to compare the owner with */
	T_STATUS(sdp_plugin_mem_import_member(s.mem, &f.ctx, 8, mx, mx_len, &id),
		 DOCA_ERROR_NOT_PERMITTED);
	/* the same region under another owner address: not member 7's memory */
	T_OK(sdp_urom_memh_unpack(mx, mx_len, &m));
	owner = malloc(m.owner_addr_len);
	if (owner == NULL)
		return;
	memcpy(owner, m.owner_addr, m.owner_addr_len);
	owner[m.owner_addr_len - 1] ^= 0x5a;
	m.owner_addr = owner;
	T_OK(sdp_urom_memh_pack(&m, forged, sizeof(forged), &forged_len));
	T_STATUS(sdp_plugin_mem_import_member(s.mem, &f.ctx, 7, forged, forged_len, &id),
		 DOCA_ERROR_NOT_PERMITTED);
	free(owner);

	/* accepted, cached by its bytes, pinned per call */
	T_OK(sdp_plugin_mem_import_member(s.mem, &f.ctx, 7, mx, mx_len, &id));
	T_OK(sdp_plugin_mem_import_member(s.mem, &f.ctx, 7, mx, mx_len, &id2));
	T_EQ_INT(id2, id);
	fill(buf, sizeof(buf), 31);
	T_OK(sdp_plugin_mem_get(s.mem, id, (uintptr_t)buf, local, sizeof(buf), T_TIMEOUT_MS));
	T_TRUE(memcmp(local, buf, sizeof(buf)) == 0);
	T_STATUS(
		sdp_plugin_mem_get(s.mem, id, (uintptr_t)buf + 1, local, sizeof(buf), T_TIMEOUT_MS),
		DOCA_ERROR_INVALID_VALUE);
	T_OK(sdp_plugin_mem_unpin(s.mem, id));
	T_OK(sdp_plugin_mem_unpin(s.mem, id));
	T_STATUS(sdp_plugin_mem_unpin(s.mem, id), DOCA_ERROR_BAD_STATE);
	T_STATUS(sdp_plugin_mem_unpin(s.mem, 999999), DOCA_ERROR_NOT_FOUND);
	T_STATUS(sdp_plugin_mem_unpin(NULL, id), DOCA_ERROR_INVALID_VALUE);
	T_OK(sdp_plugin_mem_import_domain(s.mem, &f.ctx, 7, f.va[0], &dom));
	T_STATUS(sdp_plugin_mem_unpin(s.mem, dom), DOCA_ERROR_BAD_STATE);
	/* unpinned, it stays cached: the same id again */
	T_OK(sdp_plugin_mem_import_member(s.mem, &f.ctx, 7, mx, mx_len, &id2));
	T_EQ_INT(id2, id);
	first = id; /* stays pinned below */

	/* the bound: more distinct memh than fit; unpinned ones go (LRU), pinned ones stay */
	many = calloc(n, sizeof(*many));
	if (many == NULL)
		return;
	for (unsigned i = 0; i < n; i++) {
		const void *mh = NULL;
		size_t mh_len = 0;

		T_OK(sdp_urom_mem_export(buf + i, 64, &many[i])); /* distinct bytes each */
		T_OK(sdp_urom_mem_get_memh(many[i], &mh, &mh_len));
		T_OK(sdp_plugin_mem_import_member(s.mem, &f.ctx, 7, mh, mh_len, &id));
		if (i == 0)
			id2 = id; /* the least recently used unpinned one: evicted first */
		T_OK(sdp_plugin_mem_unpin(s.mem, id));
	}
	T_STATUS(sdp_plugin_mem_region_get(s.mem, id2, NULL, NULL), DOCA_ERROR_NOT_FOUND);
	T_OK(sdp_plugin_mem_region_get(s.mem, first, NULL, NULL));
	T_OK(sdp_plugin_mem_region_get(s.mem, id, NULL, NULL));
	/* every cached one pinned (the first and the last n - 2): no room, FULL */
	for (unsigned i = 2; i < n; i++) {
		const void *mh = NULL;
		size_t mh_len = 0;

		T_OK(sdp_urom_mem_get_memh(many[i], &mh, &mh_len));
		T_OK(sdp_plugin_mem_import_member(s.mem, &f.ctx, 7, mh, mh_len, &id));
	}
	{
		const void *mh = NULL;
		size_t mh_len = 0;

		T_OK(sdp_urom_mem_get_memh(many[0], &mh, &mh_len));
		T_STATUS(sdp_plugin_mem_import_member(s.mem, &f.ctx, 7, mh, mh_len, &id),
			 DOCA_ERROR_FULL);
	}
	T_OK(sdp_plugin_mem_unpin(s.mem, first));
	side_close(&s);
	for (unsigned i = 0; i < n; i++)
		if (many[i] != NULL)
			T_OK(sdp_urom_mem_unexport(many[i]));
	free(many);
	T_OK(sdp_urom_mem_unexport(ex));
	T_OK(sdp_urom_mem_unexport(e0));
}

static void test_plugin_short_rkey(void)
{
	static uint8_t host[256];
	const uint8_t key_bytes[] = {0x00, 0x01};
	struct sdp_urom_mem *exp = NULL;
	const void *memh;
	size_t memh_len, len, page = (size_t)sysconf(_SC_PAGESIZE), i;
	struct sdp_urom_memh d;
	uint8_t *map, *at;
	uint64_t id;
	struct side s;
	doca_error_t status;

	T_OK(sdp_urom_mem_export(host, sizeof(host), &exp));
	if (exp == NULL || side_open(&s) != 0) {
		t_fail("cannot set up the short rkey test");
		return;
	}
	T_OK(sdp_urom_mem_get_memh(exp, &memh, &memh_len));
	T_OK(sdp_urom_memh_unpack(memh, memh_len, &d));
	map = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_TRUE(map != MAP_FAILED);
	if (map == MAP_FAILED)
		return;
	T_TRUE(mprotect(map + 2 * page, page, PROT_NONE) == 0);
	for (i = 0; i < sizeof(key_bytes); i++) {
		d.rkey = &key_bytes[i];
		d.rkey_len = 1;
		len = sdp_urom_memh_packed_size(&d);
		T_TRUE(len <= 2 * page);
		at = map + 2 * page - len; /* the last byte of the memh is the last readable one */
		T_OK(sdp_urom_memh_pack(&d, at, len, &len));
		id = 0;
		status = sdp_plugin_mem_import(s.mem, at, len, &id);
		T_TRUE(status == DOCA_SUCCESS || status == DOCA_ERROR_DRIVER);
		if (status == DOCA_SUCCESS)
			T_OK(sdp_plugin_mem_release(s.mem, id));
		/* The same through import_rkey. */
		at = map + 2 * page - 1;
		*at = key_bytes[i];
		status = sdp_plugin_mem_import_rkey(s.mem, d.owner_addr, d.owner_addr_len,
						    (uintptr_t)host, sizeof(host), at, 1, &id);
		T_TRUE(status == DOCA_SUCCESS || status == DOCA_ERROR_DRIVER);
		if (status == DOCA_SUCCESS)
			T_OK(sdp_plugin_mem_release(s.mem, id));
	}
	side_close(&s);
	munmap(map, 3 * page);
	T_OK(sdp_urom_mem_unexport(exp));
}

/* sdp_plugin_err_mode(): peer error handling exactly where UCX_TLS rules shared memory out. */
static void test_err_mode(void)
{
	static const struct {
		const char *tls;
		ucp_err_handling_mode_t want;
	} cases[] = {
		{"", UCP_ERR_HANDLING_MODE_NONE},
		{"all", UCP_ERR_HANDLING_MODE_NONE},
		{"sm", UCP_ERR_HANDLING_MODE_NONE},
		{"tcp,cma", UCP_ERR_HANDLING_MODE_NONE},
		{"posix,tcp", UCP_ERR_HANDLING_MODE_NONE},
		{"sm:aux,rc", UCP_ERR_HANDLING_MODE_NONE},
		{"^tcp", UCP_ERR_HANDLING_MODE_NONE},
		{"^cma", UCP_ERR_HANDLING_MODE_NONE},
		{"tcp", UCP_ERR_HANDLING_MODE_PEER},
		{"rc,ud", UCP_ERR_HANDLING_MODE_PEER},
		{"tcp,self", UCP_ERR_HANDLING_MODE_PEER},
		{"^sm", UCP_ERR_HANDLING_MODE_PEER},
		{"^shm,tcp", UCP_ERR_HANDLING_MODE_PEER},
		{"smx", UCP_ERR_HANDLING_MODE_PEER},
	};
	const char *old = getenv("UCX_TLS");
	char *saved = old != NULL ? strdup(old) : NULL;

	unsetenv("UCX_TLS");
	T_EQ_INT(sdp_plugin_err_mode(), UCP_ERR_HANDLING_MODE_NONE);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setenv("UCX_TLS", cases[i].tls, 1);
		if (sdp_plugin_err_mode() != cases[i].want)
			t_fail("UCX_TLS=\"%s\": expected error mode %d, got %d", cases[i].tls,
			       (int)cases[i].want, (int)sdp_plugin_err_mode());
	}
	if (saved != NULL)
		setenv("UCX_TLS", saved, 1);
	else
		unsetenv("UCX_TLS");
	free(saved);
}

/* What the raw worker of test_plugin_xrma got back (AM id SDP_UROM_XRMA_REP_AM_ID). */
static struct {
	int n;
	struct sdp_urom_xrma_rep rep;
	uint8_t data[64];
} xr;

static ucs_status_t raw_rep_cb(void *arg, const void *header, size_t header_length, void *data,
			       size_t length, const ucp_am_recv_param_t *param)
{
	(void)arg;
	(void)param;
	T_OK(sdp_urom_xrma_rep_unpack(header, header_length, length, &xr.rep, NULL, 0));
	if (length <= sizeof(xr.data))
		memcpy(xr.data, data, length);
	xr.n++;
	return UCS_OK;
}

/* Send one request (header as given, data) from the raw worker; wait for n_want answers. */
static void raw_send(struct side *raw, ucp_ep_h ep, const uint8_t *hdr, size_t hdr_len,
		     const void *data, size_t len, int reply, int n_want)
{
	ucp_request_param_t param;
	ucs_status_ptr_t req;
	int slices = 0;

	memset(&param, 0, sizeof(param));
	param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	param.flags = UCP_AM_SEND_FLAG_EAGER | (reply ? UCP_AM_SEND_FLAG_REPLY : 0);
	req = ucp_am_send_nbx(ep, SDP_UROM_XRMA_REQ_AM_ID, hdr, hdr_len, data, len, &param);
	T_TRUE(!UCS_PTR_IS_ERR(req));
	while (UCS_PTR_IS_PTR(req) && ucp_request_check_status(req) == UCS_INPROGRESS &&
	       slices++ < T_TIMEOUT_MS)
		if (ucp_worker_progress(raw->worker) == 0)
			usleep(1000);
	if (UCS_PTR_IS_PTR(req))
		ucp_request_free(req);
	for (slices = 0; xr.n < n_want && slices < T_TIMEOUT_MS; slices++)
		if (ucp_worker_progress(raw->worker) == 0)
			usleep(1000);
	T_EQ_INT(xr.n, n_want);
}

static void raw_req(struct side *raw, ucp_ep_h ep, uint8_t op, uint64_t key, uint64_t va,
		    uint64_t len, const void *data, int n_want)
{
	static uint8_t hdr[SDP_UROM_XRMA_REQ_LEN];
	struct sdp_urom_xrma_req q = {op, 7, key, va, len};

	sdp_urom_xrma_req_pack(&q, hdr);
	raw_send(raw, ep, hdr, sizeof(hdr), data, op == SDP_UROM_XRMA_PUT ? len : 0, 1, n_want);
}

/*
 * The xrma path (sdp_urom_xrma.h), forced on with SOFTDPU_UROM_XRMA=1 whatever the transport:
 * puts and gets larger than one request (split, every byte checked, nothing outside touched),
 * non-blocking ones and a flush. Then what a peer that is not a plugin may send the export
 * thread, from a raw UCP worker: a wrong key, ranges outside the region, a bad header, a request
 * without a reply endpoint; nothing moves, the thread answers what it can and keeps serving,
 * and a region's key stops working when it is unexported.
 */
static void test_plugin_xrma(void)
{
	enum {
		REGION = (5 << 20) / 2 + 4099,
		GUARD = 4096
	};
	static uint8_t host[GUARD + REGION + GUARD], shadow[sizeof(host)], local[REGION];
	static uint8_t keep_buf[64], bad_hdr[SDP_UROM_XRMA_REQ_LEN];
	const uint64_t va = (uintptr_t)(host + GUARD);
	struct sdp_urom_mem *exp = NULL, *keep = NULL;
	struct cb_count c = {0, DOCA_SUCCESS};
	ucp_ep_params_t eparams;
	const void *memh;
	size_t memh_len;
	struct sdp_urom_memh d;
	struct side s, raw;
	uint8_t *padded;
	ucp_ep_h ep = NULL;
	uint64_t id = 0;

	fill(host, sizeof(host), 11);
	memcpy(shadow, host, sizeof(host));
	/* keep holds the engine up after exp goes (the last unexport stops it). */
	T_OK(sdp_urom_mem_export(keep_buf, sizeof(keep_buf), &keep));
	T_OK(sdp_urom_mem_export(host + GUARD, REGION, &exp));
	setenv("SOFTDPU_UROM_XRMA", "1", 1);
	if (exp == NULL || keep == NULL || side_open(&s) != 0) {
		unsetenv("SOFTDPU_UROM_XRMA");
		t_fail("cannot set up the worker side");
		return;
	}
	T_OK(sdp_urom_mem_get_memh(exp, &memh, &memh_len));
	T_OK(sdp_plugin_mem_import(s.mem, memh, memh_len, &id));
	unsetenv("SOFTDPU_UROM_XRMA");
	T_EQ_INT(sdp_plugin_mem_uses_xrma(s.mem, id), 1);
	T_EQ_INT(sdp_plugin_mem_uses_xrma(s.mem, id + 100), -1);
	T_EQ_INT(sdp_plugin_mem_uses_xrma(NULL, id), -1);

	/* Blocking: three requests each way, at an odd offset. */
	fill(local, REGION - 3, 5);
	T_OK(sdp_plugin_mem_put(s.mem, id, va + 1, local, REGION - 3, T_TIMEOUT_MS));
	memcpy(shadow + GUARD + 1, local, REGION - 3);
	T_TRUE(memcmp(host, shadow, sizeof(host)) == 0);
	fill(host + GUARD, REGION, 9);
	memcpy(shadow + GUARD, host + GUARD, REGION);
	memset(local, 0, REGION);
	T_OK(sdp_plugin_mem_get(s.mem, id, va + 2, local, REGION - 2, T_TIMEOUT_MS));
	T_TRUE(memcmp(local, host + GUARD + 2, REGION - 2) == 0);
	T_OK(sdp_plugin_mem_flush(s.mem, id, T_TIMEOUT_MS));

	/* Non-blocking: two puts, a flush, a get; callbacks from progress only, in order. */
	fill(local, REGION, 21);
	T_OK(sdp_plugin_mem_put_nb(s.mem, id, va, local, 1 << 20, count_cb, &c));
	T_OK(sdp_plugin_mem_put_nb(s.mem, id, va + (1 << 20), local + (1 << 20), REGION - (1 << 20),
				   count_cb, &c));
	T_OK(sdp_plugin_mem_flush_nb(s.mem, id, count_cb, &c));
	T_EQ_INT(c.calls, 0);
	progress_until(&s, &c, 3);
	T_OK(c.last);
	T_TRUE(memcmp(host + GUARD, local, REGION) == 0);
	memcpy(shadow + GUARD, local, REGION);
	T_EQ_INT(sdp_plugin_mem_inflight(s.mem), 0);
	T_OK(sdp_plugin_mem_release(s.mem, id));
	side_close(&s);

	/* A raw worker: what any peer could send. */
	memset(&raw, 0, sizeof(raw));
	{
		ucp_params_t params;
		ucp_worker_params_t wparams;

		memset(&params, 0, sizeof(params));
		params.field_mask = UCP_PARAM_FIELD_FEATURES;
		params.features = UCP_FEATURE_AM;
		memset(&wparams, 0, sizeof(wparams));
		if (ucp_init(&params, NULL, &raw.context) != UCS_OK ||
		    ucp_worker_create(raw.context, &wparams, &raw.worker) != UCS_OK) {
			t_fail("cannot create the raw worker");
			return;
		}
	}
	T_TRUE(sdp_ucx_am_handler(raw.worker, SDP_UROM_XRMA_REP_AM_ID, raw_rep_cb, NULL) == UCS_OK);
	T_OK(sdp_urom_memh_unpack(memh, memh_len, &d));
	T_TRUE((d.flags & SDP_UROM_MEMH_FLAG_AM_KEY) != 0);
	padded = calloc(1, d.owner_addr_len + SDP_UROM_MEMH_ADDR_MAX);
	T_TRUE(padded != NULL);
	if (padded == NULL)
		return;
	memcpy(padded, d.owner_addr, d.owner_addr_len);
	memset(&eparams, 0, sizeof(eparams));
	eparams.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
	eparams.address = (const ucp_address_t *)padded;
	T_TRUE(ucp_ep_create(raw.worker, &eparams, &ep) == UCS_OK);
	free(padded);
	fill(local, 64, 77);
	t_log_reset();
	/* A key no region has: NOT_FOUND, nothing written; logged once by the thread. */
	raw_req(&raw, ep, SDP_UROM_XRMA_PUT, d.am_key + 1, va, 16, local, 1);
	T_EQ_INT(xr.rep.op, SDP_UROM_XRMA_PUT_ACK);
	T_EQ_INT(xr.rep.status, DOCA_ERROR_NOT_FOUND);
	T_EQ_INT(xr.rep.opid, 7);
	/* The right key, ranges that leave the region by one byte each way. */
	raw_req(&raw, ep, SDP_UROM_XRMA_PUT, d.am_key, va - 1, 16, local, 2);
	T_EQ_INT(xr.rep.status, DOCA_ERROR_INVALID_VALUE);
	raw_req(&raw, ep, SDP_UROM_XRMA_PUT, d.am_key, va + REGION - 15, 16, local, 3);
	T_EQ_INT(xr.rep.status, DOCA_ERROR_INVALID_VALUE);
	raw_req(&raw, ep, SDP_UROM_XRMA_GET, d.am_key, va + REGION - 4, 8, NULL, 4);
	T_EQ_INT(xr.rep.op, SDP_UROM_XRMA_GET_DATA);
	T_EQ_INT(xr.rep.status, DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(xr.rep.len, 0);
	T_TRUE(memcmp(host, shadow, sizeof(host)) == 0);
	/* Bad bytes and a request with no way to answer: dropped, no answer; then a good get. */
	memset(bad_hdr, 0xa5, sizeof(bad_hdr));
	raw_send(&raw, ep, bad_hdr, sizeof(bad_hdr), NULL, 0, 1, 4);
	raw_send(&raw, ep, bad_hdr, 3, NULL, 0, 1, 4);
	{
		static uint8_t hdr[SDP_UROM_XRMA_REQ_LEN];
		struct sdp_urom_xrma_req q = {SDP_UROM_XRMA_GET, 8, d.am_key, va, 16};

		sdp_urom_xrma_req_pack(&q, hdr);
		raw_send(&raw, ep, hdr, sizeof(hdr), NULL, 0, 0, 4);
		/* a put whose data is shorter than it says */
		q.op = SDP_UROM_XRMA_PUT;
		sdp_urom_xrma_req_pack(&q, hdr);
		raw_send(&raw, ep, hdr, sizeof(hdr), local, 15, 1, 4);
	}
	raw_req(&raw, ep, SDP_UROM_XRMA_GET, d.am_key, va + 100, 32, NULL, 5);
	/* At most one record for the seven refusals (the thread logs the first of every 1024;
	 * earlier tests of this process may have been refused already). */
	T_TRUE(t_log_nb <= 1);
	T_EQ_INT(xr.rep.status, DOCA_SUCCESS);
	T_EQ_INT(xr.rep.len, 32);
	T_TRUE(memcmp(xr.data, host + GUARD + 100, 32) == 0);
	T_TRUE(memcmp(host, shadow, sizeof(host)) == 0);
	/* Unexported: the key is gone at once (the engine still runs for keep). */
	T_OK(sdp_urom_mem_unexport(exp));
	raw_req(&raw, ep, SDP_UROM_XRMA_GET, d.am_key, va, 8, NULL, 6);
	T_EQ_INT(xr.rep.status, DOCA_ERROR_NOT_FOUND);
	{
		ucp_request_param_t cparam;
		ucs_status_ptr_t req;
		int slices = 0;

		memset(&cparam, 0, sizeof(cparam));
		cparam.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
		cparam.flags = UCP_EP_CLOSE_FLAG_FORCE;
		req = ucp_ep_close_nbx(ep, &cparam);
		while (UCS_PTR_IS_PTR(req) && ucp_request_check_status(req) == UCS_INPROGRESS &&
		       slices++ < T_TIMEOUT_MS)
			if (ucp_worker_progress(raw.worker) == 0)
				usleep(1000);
		if (UCS_PTR_IS_PTR(req))
			ucp_request_free(req);
	}
	ucp_worker_destroy(raw.worker);
	ucp_cleanup(raw.context);
	T_OK(sdp_urom_mem_unexport(keep));
}

/*
 * The xrma path's failures (forced on): a put refused by the owner (its buffer unexported
 * after the import) is reported by its own region's flush, once, and not by another region's;
 * a get larger than the endpoint's window of requests; an abort with a put, a flush and a get
 * outstanding on one endpoint: every callback runs exactly once, from progress, and the region
 * is refused afterwards.
 */
static void test_plugin_xrma_faults(void)
{
	enum {
		BIG = (20 << 20) + 77
	};
	static uint8_t small[4096], gone[4096];
	struct sdp_urom_mem *exp_small = NULL, *exp_gone = NULL, *exp_big = NULL;
	struct cb_count c = {0, DOCA_SUCCESS}, c2 = {0, DOCA_SUCCESS};
	uint64_t id_small = 0, id_gone = 0, id_big = 0;
	uint8_t *big = malloc(BIG), *local = malloc(BIG);
	const void *memh;
	size_t memh_len;
	doca_error_t st;
	struct side s;

	if (big == NULL || local == NULL) {
		t_fail("no memory for the big buffers");
		free(big);
		free(local);
		return;
	}
	fill(big, BIG, 13);
	T_OK(sdp_urom_mem_export(small, sizeof(small), &exp_small));
	T_OK(sdp_urom_mem_export(gone, sizeof(gone), &exp_gone));
	T_OK(sdp_urom_mem_export(big, BIG, &exp_big));
	setenv("SOFTDPU_UROM_XRMA", "1", 1);
	if (exp_small == NULL || exp_gone == NULL || exp_big == NULL || side_open(&s) != 0) {
		unsetenv("SOFTDPU_UROM_XRMA");
		t_fail("cannot set up the worker side");
		free(big);
		free(local);
		return;
	}
	T_OK(sdp_urom_mem_get_memh(exp_small, &memh, &memh_len));
	T_OK(sdp_plugin_mem_import(s.mem, memh, memh_len, &id_small));
	T_OK(sdp_urom_mem_get_memh(exp_gone, &memh, &memh_len));
	T_OK(sdp_plugin_mem_import(s.mem, memh, memh_len, &id_gone));
	T_OK(sdp_urom_mem_get_memh(exp_big, &memh, &memh_len));
	T_OK(sdp_plugin_mem_import(s.mem, memh, memh_len, &id_big));
	unsetenv("SOFTDPU_UROM_XRMA");
	T_EQ_INT(sdp_plugin_mem_uses_xrma(s.mem, id_gone), 1);

	/* A refused put: sent (its callback succeeds), its region's flush says why, once. */
	T_OK(sdp_urom_mem_unexport(exp_gone));
	fill(local, 64, 3);
	T_OK(sdp_plugin_mem_put_nb(s.mem, id_gone, (uintptr_t)gone, local, 64, count_cb, &c));
	progress_until(&s, &c, 1);
	T_OK(c.last);
	T_OK(sdp_plugin_mem_flush(s.mem, id_small, T_TIMEOUT_MS)); /* not small's to report */
	T_STATUS(sdp_plugin_mem_flush(s.mem, id_gone, T_TIMEOUT_MS), DOCA_ERROR_NOT_FOUND);
	T_OK(sdp_plugin_mem_flush(s.mem, id_gone, T_TIMEOUT_MS)); /* reported already */
	T_STATUS(sdp_plugin_mem_get(s.mem, id_gone, (uintptr_t)gone, local, 8, T_TIMEOUT_MS),
		 DOCA_ERROR_NOT_FOUND);
	T_OK(sdp_plugin_mem_release(s.mem, id_gone));

	/* A get of 21 requests through a window of 16, every byte checked. */
	memset(local, 0, BIG);
	T_OK(sdp_plugin_mem_get(s.mem, id_big, (uintptr_t)big, local, BIG, T_TIMEOUT_MS));
	T_TRUE(memcmp(local, big, BIG) == 0);

	/* Abort with a put, a flush and a get outstanding (not over TCP in one process: see
	 * test_plugin_abort). */
	if (t_tcp) {
		side_close(&s);
		T_OK(sdp_urom_mem_unexport(exp_big));
		T_OK(sdp_urom_mem_unexport(exp_small));
		free(big);
		free(local);
		return;
	}
	c.calls = 0;
	fill(local, 4 << 20, 17);
	T_OK(sdp_plugin_mem_put_nb(s.mem, id_big, (uintptr_t)big, local, 4 << 20, count_cb, &c));
	T_OK(sdp_plugin_mem_flush_nb(s.mem, id_big, count_cb, &c));
	T_OK(sdp_plugin_mem_get_nb(s.mem, id_big, (uintptr_t)big + (8 << 20), local + (8 << 20),
				   8 << 20, count_cb, &c2));
	st = sdp_plugin_mem_abort(s.mem, id_big);
	T_TRUE(st == DOCA_SUCCESS || st == DOCA_ERROR_EMPTY);
	T_EQ_INT(c.calls + c2.calls, 0); /* never from inside a call */
	progress_until(&s, &c, 2);
	progress_until(&s, &c2, 1);
	T_EQ_INT(sdp_plugin_mem_inflight(s.mem), 0);
	if (st == DOCA_SUCCESS) {
		T_STATUS(sdp_plugin_mem_get(s.mem, id_big, (uintptr_t)big, local, 8, T_TIMEOUT_MS),
			 DOCA_ERROR_NOT_CONNECTED);
		T_STATUS(sdp_plugin_mem_flush(s.mem, id_big, T_TIMEOUT_MS),
			 DOCA_ERROR_NOT_CONNECTED);
	}
	/* Nothing calls back twice. */
	for (int i = 0; i < 20; i++)
		(void)sdp_plugin_mem_progress(s.mem);
	T_EQ_INT(c.calls, 2);
	T_EQ_INT(c2.calls, 1);
	side_close(&s);
	T_OK(sdp_urom_mem_unexport(exp_big));
	T_OK(sdp_urom_mem_unexport(exp_small));
	free(big);
	free(local);
}

/*
 * sdp_plugin_mem_abort(): refusals, an idle endpoint left alone, and an endpoint with a get in
 * flight closed by force: the callback runs once, from progress only, and the region fails
 * from then on with NOT_CONNECTED.
 */
static void test_plugin_abort(int tcp)
{
	enum {
		REGION = 4 << 20
	};
	static uint8_t host[REGION], local[REGION];
	struct cb_count c = {0, DOCA_SUCCESS};
	struct sdp_urom_mem *exp = NULL;
	const void *memh;
	size_t memh_len;
	uint64_t id = 0;
	doca_error_t st;
	struct side s;

	fill(host, sizeof(host), 5);
	T_OK(sdp_urom_mem_export(host, REGION, &exp));
	if (exp == NULL || side_open(&s) != 0) {
		t_fail("cannot set up the worker side");
		return;
	}
	T_OK(sdp_urom_mem_get_memh(exp, &memh, &memh_len));
	T_OK(sdp_plugin_mem_import(s.mem, memh, memh_len, &id));
	T_STATUS(sdp_plugin_mem_abort(NULL, id), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_plugin_mem_abort(s.mem, id + 100), DOCA_ERROR_NOT_FOUND);
	T_STATUS(sdp_plugin_mem_abort(s.mem, id), DOCA_ERROR_EMPTY); /* nothing outstanding */
	T_OK(sdp_plugin_mem_get(s.mem, id, (uintptr_t)host, local, 64, T_TIMEOUT_MS));
	T_TRUE(memcmp(local, host, 64) == 0);
	T_EQ_INT(sdp_plugin_mem_uses_xrma(s.mem, id), tcp);
	{
		/*
		 * Not in one process: closing the endpoint by force while the export engine still
		 * holds the get's reply leaves that reply pending on the export worker, and UCX
		 * 1.13 then crashes in ucp_worker_destroy over shared memory (SIGSEGV in
		 * ucp_mem_rereg_mds from uct_mm_ep_pending_purge); over TCP its transport asserts
		 * in the export thread (uct_iface.h:884 "comp->count > 0", 1 of 3 stress rounds
		 * with the xrma path). Across processes the forced close is exercised by
		 * urom_netfault.
		 */
		side_close(&s);
		T_OK(sdp_urom_mem_unexport(exp));
		return;
	}

	T_OK(sdp_plugin_mem_get_nb(s.mem, id, (uintptr_t)host, local, REGION, count_cb, &c));
	st = sdp_plugin_mem_abort(s.mem, id);
	T_EQ_INT(c.calls, 0); /* never from inside the call */
	progress_until(&s, &c, 1);
	T_EQ_INT(sdp_plugin_mem_inflight(s.mem), 0);
	if (st == DOCA_SUCCESS) {
		/* closed by force: the get may have finished first, else it was cancelled */
		T_TRUE(c.last == DOCA_SUCCESS || c.last == DOCA_ERROR_NOT_CONNECTED);
		T_STATUS(sdp_plugin_mem_get(s.mem, id, (uintptr_t)host, local, 64, T_TIMEOUT_MS),
			 DOCA_ERROR_NOT_CONNECTED);
		T_STATUS(sdp_plugin_mem_abort(s.mem, id), DOCA_ERROR_EMPTY);
	} else {
		/* UCX finished the get inside the call (shared memory): nothing to abort */
		T_STATUS(st, DOCA_ERROR_EMPTY);
		T_OK(c.last);
	}
	side_close(&s);
	T_OK(sdp_urom_mem_unexport(exp));
}

int main(int argc, char **argv)
{
	static char app_rec[4096];
	struct doca_log_backend *app = NULL;

	t_tcp = argc > 1 && strcmp(argv[1], "tcp") == 0;
	if (t_tcp)
		setenv("UCX_TLS", "tcp", 1);
	/* Loopback for TCP. */
	setenv("UCX_NET_DEVICES", "lo", 0);
	/* The library's SDK records and the helper's (application) records, one count. */
	t_log_capture();
	T_OK(doca_log_backend_create_with_buf(app_rec, sizeof(app_rec), t_log_flush, &app));
	if (app != NULL)
		T_OK(doca_log_backend_set_level_lower_limit(app, DOCA_LOG_LEVEL_WARNING));
	test_plugin_local();
	test_plugin_domain();
	test_plugin_member();
	test_plugin_short_rkey();
	test_err_mode();
	test_plugin_xrma();
	test_plugin_xrma_faults();
	test_plugin_abort(argc > 1 && strcmp(argv[1], "tcp") == 0);
	T_DONE();
}
