/*
 * libsoftdpu_mpi's registration cache (src/mpi/sdp_rcache.[ch]) with counting fake
 * registrations: a second use of a buffer (or of any range inside its pages) registers nothing;
 * munmap, a free() that unmaps, mremap and madvise(DONTNEED) drop the registrations of those
 * pages before the next lookup, held ones only at their last release; the LRU bound; the
 * overflowed unmap queue (more unmaps than slots between two lookups) drops everything not
 * held; unmaps from another thread; refused registrations; every registration is deregistered
 * exactly once by the end.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sdp_rcache.h"
#include "t_helpers.h"

#if defined(__SANITIZE_ADDRESS__)
#define SDP_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SDP_UNDER_ASAN 1
#endif
#endif

/* A fake registration: its bounds, and whether it was deregistered. */
struct fake {
	uintptr_t start, end;
	int dead;
};

static struct {
	struct fake *regs[4096];
	unsigned n, live, refuse;
} f;

static int fake_reg(void *arg, void *addr, size_t len, void **handle)
{
	struct fake *r;

	(void)arg;
	if (f.refuse || f.n == sizeof(f.regs) / sizeof(f.regs[0]))
		return -1;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return -1;
	r->start = (uintptr_t)addr;
	r->end = r->start + len;
	f.regs[f.n++] = r;
	f.live++;
	*handle = r;
	return 0;
}

static void fake_dereg(void *arg, void *handle)
{
	struct fake *r = handle;

	(void)arg;
	if (r->dead)
		t_fail("registration [%#lx, %#lx) deregistered twice", (unsigned long)r->start,
		       (unsigned long)r->end);
	r->dead = 1;
	f.live--;
}

static const struct sdp_rcache_ops ops = {fake_reg, fake_dereg};
static size_t pg;

static void *map(size_t pages)
{
	void *p =
		mmap(NULL, pages * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(T_EXIT_FAIL);
	}
	return p;
}

static struct sdp_rcache_stats stats(struct sdp_rcache *rc)
{
	struct sdp_rcache_stats st;

	sdp_rcache_stats(rc, &st);
	return st;
}

/* Hits, reuse inside the pages, distinct buffers. */
static void test_hits(struct sdp_rcache *rc)
{
	uint8_t *a = map(4), *b = map(2);
	struct sdp_rcache_region *r1, *r2, *r3;
	struct fake *h;
	unsigned n0 = f.n;

	r1 = sdp_rcache_get(rc, a + 100, 2 * pg);
	T_TRUE(r1 != NULL);
	h = sdp_rcache_region_handle(r1);
	T_TRUE(h != NULL && h->start == (uintptr_t)a && h->end == (uintptr_t)a + 3 * pg);
	for (int i = 0; i < 100; i++) {
		r2 = sdp_rcache_get(rc, a + 200, pg);
		T_TRUE(r2 == r1);
		sdp_rcache_put(rc, r2);
	}
	r3 = sdp_rcache_get(rc, b, pg);
	T_TRUE(r3 != NULL && r3 != r1);
	T_EQ_INT(f.n - n0, 2);
	T_EQ_INT(stats(rc).hits, 100);
	T_EQ_INT(stats(rc).misses, 2);
	/* past the first registration's pages: a new one */
	r2 = sdp_rcache_get(rc, a + 2 * pg, 2 * pg);
	T_TRUE(r2 != NULL && r2 != r1);
	sdp_rcache_put(rc, r1);
	sdp_rcache_put(rc, r2);
	sdp_rcache_put(rc, r3);
	sdp_rcache_put(rc, NULL);
	T_TRUE(sdp_rcache_get(rc, a, 0) == NULL);
	munmap(a, 4 * pg);
	munmap(b, 2 * pg);
	sdp_rcache_drain(rc);
	T_EQ_INT(stats(rc).regions, 0);
	T_EQ_INT(f.live, 0);
}

/* munmap of a part, of a held region, mremap, madvise, free(). */
static void test_unmaps(struct sdp_rcache *rc)
{
	uint8_t *a = map(8), *b;
	struct sdp_rcache_region *r, *held;
	struct sdp_rcache_stats st0 = stats(rc);
	struct fake *h;

	/* one page in the middle goes: the registration goes */
	r = sdp_rcache_get(rc, a, 8 * pg);
	sdp_rcache_put(rc, r);
	munmap(a + 3 * pg, pg);
	r = sdp_rcache_get(rc, a, 2 * pg);
	T_EQ_INT(stats(rc).invalidated - st0.invalidated, 1);
	T_EQ_INT(stats(rc).misses - st0.misses, 2);
	T_TRUE(r != NULL &&
	       ((struct fake *)sdp_rcache_region_handle(r))->end == (uintptr_t)a + 2 * pg);
	sdp_rcache_put(rc, r);

	/* a held region whose pages go: never returned again, deregistered at its last put */
	held = sdp_rcache_get(rc, a + 4 * pg, pg);
	h = sdp_rcache_region_handle(held);
	munmap(a + 4 * pg, 4 * pg);
	sdp_rcache_drain(rc);
	T_TRUE(!h->dead);
	b = mmap(a + 4 * pg, 4 * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (b == MAP_FAILED)
		b = map(4);
	r = sdp_rcache_get(rc, b, pg);
	T_TRUE(r != NULL && r != held);
	sdp_rcache_put(rc, r);
	sdp_rcache_put(rc, held);
	T_TRUE(h->dead);

	/* madvise(DONTNEED) drops the pages' contents: their registration goes */
	r = sdp_rcache_get(rc, b, 2 * pg);
	sdp_rcache_put(rc, r);
	st0 = stats(rc);
	T_EQ_INT(madvise(b, pg, MADV_DONTNEED), 0);
	sdp_rcache_drain(rc);
	T_EQ_INT(stats(rc).invalidated - st0.invalidated, 2); /* [b, +1 page) and [b, +2 pages) */

	/* mremap moves the pages: the old range's registration goes */
	r = sdp_rcache_get(rc, b, 4 * pg);
	sdp_rcache_put(rc, r);
	st0 = stats(rc);
	b = mremap(b, 4 * pg, 64 * pg, MREMAP_MAYMOVE);
	T_TRUE(b != MAP_FAILED);
	sdp_rcache_drain(rc);
	T_EQ_INT(stats(rc).invalidated - st0.invalidated, 1);
	munmap(b, 64 * pg);
	munmap(a, 3 * pg);

	/* free() of a buffer malloc placed in its own mapping (ASan's allocator keeps it mapped) */
#ifndef SDP_UNDER_ASAN
	{
		size_t big = 64u << 20; /* past glibc's largest mmap threshold */
		uint8_t *m = malloc(big);

		T_TRUE(m != NULL);
		r = sdp_rcache_get(rc, m, big);
		sdp_rcache_put(rc, r);
		st0 = stats(rc);
		free(m);
		sdp_rcache_drain(rc);
		T_EQ_INT(stats(rc).invalidated - st0.invalidated, 1);
	}
#endif
	sdp_rcache_drain(rc);
	T_EQ_INT(stats(rc).regions, 0);
	T_EQ_INT(f.live, 0);
}

/* At most max regions: the least recently used unheld one goes; all held: refused. */
static void test_bound(void)
{
	struct sdp_rcache_region *r[5], *x;
	struct sdp_rcache *rc = NULL;
	uint8_t *a = map(8);
	struct fake *h2;
	char why[128];

	T_EQ_INT(sdp_rcache_create(&ops, NULL, 4, &rc, why, sizeof(why)), 0);
	for (int i = 0; i < 4; i++)
		r[i] = sdp_rcache_get(rc, a + (size_t)i * 2 * pg, pg);
	h2 = sdp_rcache_region_handle(r[2]);
	sdp_rcache_put(rc, r[1]);
	sdp_rcache_put(rc, r[2]);
	x = sdp_rcache_get(rc, a + 2 * pg, 16); /* r[1] used again: r[2] is the LRU */
	T_TRUE(x == r[1]);
	sdp_rcache_put(rc, x);
	r[4] = sdp_rcache_get(rc, a + pg, pg);
	T_TRUE(r[4] != NULL);
	T_EQ_INT(stats(rc).evicted, 1);
	T_TRUE(h2->dead);
	T_EQ_INT(stats(rc).regions, 4);
	/* everything held now: refused */
	T_TRUE(sdp_rcache_get(rc, a + 2 * pg, 16) == r[1]);
	T_TRUE(sdp_rcache_get(rc, a + 7 * pg, 8) == NULL);
	T_EQ_INT(stats(rc).failed, 1);
	sdp_rcache_put(rc, r[0]);
	sdp_rcache_put(rc, r[1]);
	sdp_rcache_put(rc, r[3]);
	sdp_rcache_put(rc, r[4]);
	/* a refused registration (after making room) */
	f.refuse = 1;
	T_TRUE(sdp_rcache_get(rc, a + 7 * pg, 8) == NULL);
	T_EQ_INT(stats(rc).failed, 2);
	T_EQ_INT(stats(rc).evicted, 2);
	f.refuse = 0;
	sdp_rcache_destroy(rc);
	T_EQ_INT(f.live, 0);
	munmap(a, 8 * pg);
}

/* More unmaps than queue slots between two lookups: everything unheld goes, held stale. */
static void test_overflow(struct sdp_rcache *rc)
{
	uint8_t *a = map(4);
	struct sdp_rcache_region *keep, *held;
	struct fake *hk, *hh;

	keep = sdp_rcache_get(rc, a, pg);
	sdp_rcache_put(rc, keep);
	hk = sdp_rcache_region_handle(keep);
	held = sdp_rcache_get(rc, a + 2 * pg, pg);
	hh = sdp_rcache_region_handle(held);
	for (int i = 0; i < SDP_RCACHE_QUEUE + 10; i++)
		munmap(map(1), pg);
	keep = sdp_rcache_get(rc, a + 3 * pg, 8); /* drains first */
	T_TRUE(keep != NULL);
	sdp_rcache_put(rc, keep);
	T_EQ_INT(stats(rc).overflows, 1);
	T_TRUE(hk->dead && !hh->dead);
	sdp_rcache_put(rc, held);
	T_TRUE(hh->dead);
	munmap(a, 4 * pg);
	sdp_rcache_drain(rc);
	T_EQ_INT(f.live, 0);
}

static void *unmapper(void *arg)
{
	uint8_t **bufs = arg;

	for (int i = 0; i < 64; i++)
		munmap(bufs[i], pg);
	return NULL;
}

/* Unmaps in another thread reach the cache. */
static void test_thread(struct sdp_rcache *rc)
{
	uint8_t *bufs[64];
	pthread_t th;

	for (int i = 0; i < 64; i++) {
		bufs[i] = map(1);
		sdp_rcache_put(rc, sdp_rcache_get(rc, bufs[i], 8));
	}
	T_EQ_INT(stats(rc).regions, 64);
	T_EQ_INT(pthread_create(&th, NULL, unmapper, bufs), 0);
	pthread_join(th, NULL);
	sdp_rcache_drain(rc);
	T_EQ_INT(stats(rc).regions, 0);
	T_EQ_INT(f.live, 0);
}

int main(void)
{
	struct sdp_rcache *rc = NULL;
	char why[256];

	pg = (size_t)sysconf(_SC_PAGESIZE);
	T_EQ_INT(sdp_rcache_create(NULL, NULL, 4, &rc, why, sizeof(why)), -1);
	T_EQ_INT(sdp_rcache_create(&ops, NULL, 0, &rc, why, sizeof(why)), -1);
	if (sdp_rcache_create(&ops, NULL, 256, &rc, why, sizeof(why)) != 0) {
		t_fail("no registration cache: %s", why); /* UCX is there: its hooks must work */
		T_DONE();
	}
	test_hits(rc);
	test_unmaps(rc);
	test_overflow(rc);
	test_thread(rc);
	test_bound();
	sdp_rcache_destroy(rc);
	sdp_rcache_destroy(NULL);
	T_EQ_INT(f.live, 0);
	for (unsigned i = 0; i < f.n; i++)
		free(f.regs[i]);
	T_DONE();
}
