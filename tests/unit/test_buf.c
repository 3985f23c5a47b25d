/*
 * doca_buf, doca_buf_inventory, doca_buf_pool, doca_buf_arr: data range checks, inventory
 * exhaustion, pool layout and alloc/free cycles, reference counts, lists, buffer array
 * lifecycle (host side).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "doca_buf.h"
#include "doca_buf_array.h"
#include "doca_buf_inventory.h"
#include "doca_buf_pool.h"
#include "doca_mmap.h"
#include "t_helpers.h"

static char g_mem[4096];

static struct doca_mmap *started_mmap(void *addr, size_t len)
{
	struct doca_mmap *mmap = NULL;

	if (doca_mmap_create(&mmap) != DOCA_SUCCESS ||
	    doca_mmap_set_memrange(mmap, addr, len) != DOCA_SUCCESS ||
	    doca_mmap_start(mmap) != DOCA_SUCCESS) {
		t_fail("expected a started mmap over %p + %zu", addr, len);
		if (mmap != NULL)
			doca_mmap_destroy(mmap);
		return NULL;
	}
	return mmap;
}

static void test_inventory(void)
{
	struct doca_buf_inventory *inv = NULL;
	struct doca_mmap *mmap = started_mmap(g_mem, 1024);
	struct doca_buf *b[4] = {0}, *extra = NULL;
	union doca_data ud = {.u64 = 0};
	uint32_t num = 0;
	void *p;
	size_t len;

	if (mmap == NULL)
		return;
	T_STATUS(doca_buf_inventory_create(0, &inv), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_inventory_create(3, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_inventory_create((size_t)UINT32_MAX + 1, &inv), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_buf_inventory_create(3, &inv));
	T_OK(doca_buf_inventory_get_num_elements(inv, &num));
	T_EQ_INT(num, 3);
	T_STATUS(doca_buf_inventory_get_num_elements(inv, NULL), DOCA_ERROR_INVALID_VALUE);
	ud.u64 = 77;
	T_OK(doca_buf_inventory_set_user_data(inv, ud));
	ud.u64 = 0;
	T_OK(doca_buf_inventory_get_user_data(inv, &ud));
	T_EQ_INT(ud.u64, 77);

	/* not started */
	T_STATUS(doca_buf_inventory_buf_get_by_addr(inv, mmap, g_mem, 16, &b[0]),
		 DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_buf_inventory_stop(inv), DOCA_ERROR_BAD_STATE);
	T_OK(doca_buf_inventory_start(inv));
	T_STATUS(doca_buf_inventory_start(inv), DOCA_ERROR_BAD_STATE);

	/* argument checks */
	T_STATUS(doca_buf_inventory_buf_get_by_addr(NULL, mmap, g_mem, 16, &b[0]),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_inventory_buf_get_by_addr(inv, NULL, g_mem, 16, &b[0]),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_inventory_buf_get_by_addr(inv, mmap, NULL, 16, &b[0]),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_inventory_buf_get_by_addr(inv, mmap, g_mem, 16, NULL),
		 DOCA_ERROR_INVALID_VALUE);
	/* outside the mmap: before it, past its end, wrapping */
	T_STATUS(doca_buf_inventory_buf_get_by_addr(inv, mmap, g_mem + 1020, 8, &b[0]),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_inventory_buf_get_by_addr(inv, mmap, g_mem + 2048, 8, &b[0]),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_inventory_buf_get_by_addr(inv, mmap, g_mem + 1024 + 4, 0, &b[0]),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_inventory_buf_get_by_addr(inv, mmap, g_mem + 8, SIZE_MAX, &b[0]),
		 DOCA_ERROR_INVALID_VALUE);
	/* data outside the buf */
	T_STATUS(
		doca_buf_inventory_buf_get_by_args(inv, mmap, g_mem + 64, 64, g_mem + 32, 8, &b[0]),
		DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_inventory_buf_get_by_args(inv, mmap, g_mem + 64, 64, g_mem + 100, 29,
						    &b[0]),
		 DOCA_ERROR_INVALID_VALUE);
	T_TRUE(b[0] == NULL);
	T_OK(doca_buf_inventory_get_num_free_elements(inv, &num));
	T_EQ_INT(num, 3); /* failed calls took nothing */

	/* by_addr: empty data at head; by_data: full; by_args: as given; whole mmap fits */
	T_OK(doca_buf_inventory_buf_get_by_addr(inv, mmap, g_mem, 1024, &b[0]));
	T_OK(doca_buf_get_data(b[0], &p));
	T_TRUE(p == g_mem);
	T_OK(doca_buf_get_data_len(b[0], &len));
	T_EQ_INT(len, 0);
	T_OK(doca_buf_inventory_buf_get_by_data(inv, mmap, g_mem + 100, 50, &b[1]));
	T_OK(doca_buf_get_head(b[1], &p));
	T_TRUE(p == g_mem + 100);
	T_OK(doca_buf_get_data_len(b[1], &len));
	T_EQ_INT(len, 50);
	T_OK(doca_buf_inventory_buf_get_by_args(inv, mmap, g_mem + 64, 64, g_mem + 100, 28, &b[2]));
	T_OK(doca_buf_get_data(b[2], &p));
	T_TRUE(p == g_mem + 100);

	/* exhausted */
	T_STATUS(doca_buf_inventory_buf_get_by_addr(inv, mmap, g_mem, 8, &extra),
		 DOCA_ERROR_NO_MEMORY);
	T_TRUE(extra == NULL);
	T_OK(doca_buf_inventory_get_num_free_elements(inv, &num));
	T_EQ_INT(num, 0);
	T_STATUS(doca_buf_inventory_destroy(inv), DOCA_ERROR_IN_USE);

	/* stop keeps bufs valid, refuses new ones */
	T_OK(doca_buf_inventory_stop(inv));
	T_OK(doca_buf_dec_refcount(b[2], NULL));
	T_STATUS(doca_buf_inventory_buf_get_by_addr(inv, mmap, g_mem, 8, &b[2]),
		 DOCA_ERROR_BAD_STATE);
	T_OK(doca_buf_inventory_start(inv));
	T_OK(doca_buf_inventory_buf_get_by_addr(inv, mmap, g_mem, 8, &b[2]));

	for (int i = 0; i < 3; i++)
		T_OK(doca_buf_dec_refcount(b[i], NULL));
	T_OK(doca_buf_inventory_get_num_free_elements(inv, &num));
	T_EQ_INT(num, 3);
	T_OK(doca_buf_inventory_destroy(inv)); /* started: implicitly stopped */
	T_STATUS(doca_buf_inventory_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_mmap_destroy(mmap));
}

static void test_data(void)
{
	struct doca_buf_inventory *inv = NULL;
	struct doca_mmap *mmap = started_mmap(g_mem, sizeof(g_mem));
	struct doca_buf *buf = NULL;
	char *head = g_mem + 256;
	void *p = NULL;
	size_t len = 0;

	if (mmap == NULL)
		return;
	T_OK(doca_buf_inventory_create(1, &inv));
	T_OK(doca_buf_inventory_start(inv));
	T_OK(doca_buf_inventory_buf_get_by_args(inv, mmap, head, 100, head + 10, 20, &buf));
	if (buf == NULL)
		goto out;

	T_OK(doca_buf_get_len(buf, &len));
	T_EQ_INT(len, 100);
	T_OK(doca_buf_get_head(buf, &p));
	T_TRUE(p == head);
	T_STATUS(doca_buf_get_len(NULL, &len), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_get_len(buf, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_get_head(buf, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_get_data(NULL, &p), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_get_data_len(buf, NULL), DOCA_ERROR_INVALID_VALUE);

	/* set_data: the edges are inside, one byte more is not */
	T_OK(doca_buf_set_data(buf, head, 100));
	T_OK(doca_buf_set_data(buf, head + 100, 0));
	T_OK(doca_buf_set_data(buf, head + 40, 60));
	T_STATUS(doca_buf_set_data(buf, head + 40, 61), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_set_data(buf, head - 1, 10), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_set_data(buf, head + 101, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_set_data(buf, head + 1, SIZE_MAX), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_set_data(buf, NULL, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_set_data(NULL, head, 1), DOCA_ERROR_INVALID_VALUE);
	/* failed calls change nothing */
	T_OK(doca_buf_get_data(buf, &p));
	T_TRUE(p == head + 40);
	T_OK(doca_buf_get_data_len(buf, &len));
	T_EQ_INT(len, 60);

	/* set_data_len relative to data */
	T_OK(doca_buf_set_data_len(buf, 10));
	T_OK(doca_buf_get_data_len(buf, &len));
	T_EQ_INT(len, 10);
	T_STATUS(doca_buf_set_data_len(buf, 61), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_buf_set_data_len(buf, 60));
	T_OK(doca_buf_reset_data_len(buf));
	T_OK(doca_buf_get_data_len(buf, &len));
	T_EQ_INT(len, 0);
	T_OK(doca_buf_get_data(buf, &p));
	T_TRUE(p == head + 40); /* data stays */
	T_STATUS(doca_buf_reset_data_len(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_set_data_len(NULL, 1), DOCA_ERROR_INVALID_VALUE);

	T_OK(doca_buf_dec_refcount(buf, NULL));
	/* a released buf refuses changes */
	T_STATUS(doca_buf_set_data(buf, head, 1), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_buf_dec_refcount(buf, NULL), DOCA_ERROR_BAD_STATE);
out:
	T_OK(doca_buf_inventory_destroy(inv));
	T_OK(doca_mmap_destroy(mmap));
}

static void test_refcount_and_lists(void)
{
	struct doca_buf_inventory *inv = NULL;
	struct doca_mmap *mmap = started_mmap(g_mem, sizeof(g_mem));
	struct doca_buf *b[5] = {0}, *x = NULL;
	uint16_t rc = 0;
	uint32_t n = 0;
	uint8_t flag = 9;

	if (mmap == NULL)
		return;
	T_OK(doca_buf_inventory_create(5, &inv));
	T_OK(doca_buf_inventory_start(inv));
	for (int i = 0; i < 5; i++)
		T_OK(doca_buf_inventory_buf_get_by_addr(inv, mmap, g_mem + i * 100, 100, &b[i]));

	/* refcounts */
	T_OK(doca_buf_get_refcount(b[0], &rc));
	T_EQ_INT(rc, 1);
	T_OK(doca_buf_inc_refcount(b[0], &rc));
	T_EQ_INT(rc, 1); /* the count before */
	T_OK(doca_buf_inc_refcount(b[0], NULL));
	T_OK(doca_buf_get_refcount(b[0], &rc));
	T_EQ_INT(rc, 3);
	T_OK(doca_buf_dec_refcount(b[0], &rc));
	T_EQ_INT(rc, 3);
	T_OK(doca_buf_dec_refcount(b[0], NULL));
	T_STATUS(doca_buf_inc_refcount(NULL, &rc), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_get_refcount(b[0], NULL), DOCA_ERROR_INVALID_VALUE);
	for (int i = 1; i < UINT16_MAX; i++)
		doca_buf_inc_refcount(b[4], NULL);
	T_OK(doca_buf_get_refcount(b[4], &rc));
	T_EQ_INT(rc, UINT16_MAX);
	T_STATUS(doca_buf_inc_refcount(b[4], NULL), DOCA_ERROR_TOO_BIG);
	for (int i = 1; i < UINT16_MAX; i++)
		doca_buf_dec_refcount(b[4], NULL);
	T_OK(doca_buf_get_refcount(b[4], &rc));
	T_EQ_INT(rc, 1);

	/* a lone buf is a list of one */
	T_OK(doca_buf_get_list_len(b[0], &n));
	T_EQ_INT(n, 1);
	T_OK(doca_buf_is_in_list(b[0], &flag));
	T_EQ_INT(flag, 0);

	/* [0,1,2] + [3] */
	T_OK(doca_buf_chain_list(b[0], b[1]));
	T_OK(doca_buf_chain_list(b[0], b[2]));
	T_OK(doca_buf_chain_list(b[3], b[4]));
	T_STATUS(doca_buf_chain_list(b[0], b[0]), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_chain_list(b[0], b[4]), DOCA_ERROR_NOT_PERMITTED); /* not a head */
	T_STATUS(doca_buf_chain_list(b[1], b[3]), DOCA_ERROR_NOT_PERMITTED); /* not a head */
	T_STATUS(doca_buf_chain_list(NULL, b[3]), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_buf_inc_refcount(b[3], NULL));
	T_STATUS(doca_buf_chain_list(b[0], b[3]), DOCA_ERROR_NOT_PERMITTED); /* refcount 2 */
	T_OK(doca_buf_dec_refcount(b[3], NULL));
	T_OK(doca_buf_chain_list(b[0], b[3])); /* [0,1,2,3,4] */

	T_OK(doca_buf_get_list_len(b[0], &n));
	T_EQ_INT(n, 5);
	T_STATUS(doca_buf_get_list_len(b[2], &n), DOCA_ERROR_NOT_PERMITTED);
	T_OK(doca_buf_get_next_in_list(b[0], &x));
	T_TRUE(x == b[1]);
	T_OK(doca_buf_get_next_in_list(b[4], &x));
	T_TRUE(x == NULL);
	T_OK(doca_buf_get_last_in_list(b[0], &x));
	T_TRUE(x == b[4]);
	T_OK(doca_buf_get_last_in_list(b[2], &x));
	T_TRUE(x == b[4]);
	T_STATUS(doca_buf_get_last_in_list(NULL, &x), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_buf_is_last_in_list(b[4], &flag));
	T_EQ_INT(flag, 1);
	T_OK(doca_buf_is_last_in_list(b[0], &flag));
	T_EQ_INT(flag, 0);
	T_OK(doca_buf_is_first_in_list(b[0], &flag));
	T_EQ_INT(flag, 1);
	T_OK(doca_buf_is_first_in_list(b[3], &flag));
	T_EQ_INT(flag, 0);
	T_OK(doca_buf_is_in_list(b[4], &flag));
	T_EQ_INT(flag, 1);
	T_STATUS(doca_buf_is_in_list(b[4], NULL), DOCA_ERROR_INVALID_VALUE);

	/* only the head carries the count */
	T_STATUS(doca_buf_inc_refcount(b[2], NULL), DOCA_ERROR_NOT_PERMITTED);
	T_STATUS(doca_buf_dec_refcount(b[2], NULL), DOCA_ERROR_NOT_PERMITTED);

	/* unchain [0,1,2,3,4] at 3 -> [0,1,2] + [3,4] */
	T_STATUS(doca_buf_unchain_list(b[0], b[0]), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_unchain_list(b[3], b[1]), DOCA_ERROR_INVALID_VALUE); /* not after */
	T_STATUS(doca_buf_unchain_list(b[0], NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_buf_unchain_list(b[0], b[3]));
	T_OK(doca_buf_get_list_len(b[0], &n));
	T_EQ_INT(n, 3);
	T_OK(doca_buf_get_list_len(b[3], &n));
	T_EQ_INT(n, 2);
	T_OK(doca_buf_get_refcount(b[3], &rc));
	T_EQ_INT(rc, 1);

	/* releasing a head releases its whole list */
	T_OK(doca_buf_inc_refcount(b[0], NULL));
	T_OK(doca_buf_dec_refcount(b[0], &rc));
	T_EQ_INT(rc, 2);
	{
		uint32_t free_before = 0, free_after = 0, num_bufs = 0;

		T_OK(doca_buf_inventory_get_num_free_elements(inv, &free_before));
		T_EQ_INT(free_before, 0);
		T_OK(doca_buf_dec_refcount(b[0], &rc)); /* [0,1,2] back */
		T_EQ_INT(rc, 1);
		T_OK(doca_buf_inventory_get_num_free_elements(inv, &free_after));
		T_EQ_INT(free_after, 3);
		T_OK(doca_mmap_get_num_bufs(mmap, &num_bufs));
		T_EQ_INT(num_bufs, 2);
		T_OK(doca_buf_is_in_list(b[1], &flag)); /* a returned element is unlinked */
		T_EQ_INT(flag, 0);
		T_OK(doca_buf_dec_refcount(b[3], NULL)); /* [3,4] back */
		T_OK(doca_buf_inventory_get_num_free_elements(inv, &free_after));
		T_EQ_INT(free_after, 5);
		T_OK(doca_mmap_get_num_bufs(mmap, &num_bufs));
		T_EQ_INT(num_bufs, 0);
	}

	T_OK(doca_buf_inventory_destroy(inv));
	T_OK(doca_mmap_destroy(mmap));
}

/* Bufs from two owners in one list go back each to its own. */
static void test_mixed_list(void)
{
	struct doca_mmap *mmap = started_mmap(g_mem, sizeof(g_mem));
	struct doca_buf_inventory *inv = NULL;
	struct doca_buf_pool *pool = NULL;
	struct doca_buf *a = NULL, *b = NULL;
	uint32_t n = 0;

	if (mmap == NULL)
		return;
	T_OK(doca_buf_inventory_create(1, &inv));
	T_OK(doca_buf_inventory_start(inv));
	T_OK(doca_buf_pool_create(2, 64, mmap, &pool));
	T_OK(doca_buf_pool_start(pool));
	T_OK(doca_buf_inventory_buf_get_by_data(inv, mmap, g_mem, 10, &a));
	T_OK(doca_buf_pool_buf_alloc(pool, &b));
	T_OK(doca_buf_chain_list(a, b));
	T_OK(doca_buf_dec_refcount(a, NULL));
	T_OK(doca_buf_inventory_get_num_free_elements(inv, &n));
	T_EQ_INT(n, 1);
	T_OK(doca_buf_pool_get_num_free_elements(pool, &n));
	T_EQ_INT(n, 2);
	T_OK(doca_buf_pool_destroy(pool));
	T_OK(doca_buf_inventory_destroy(inv));
	T_OK(doca_mmap_destroy(mmap));
}

static void test_pool(void)
{
	struct doca_mmap *mmap = started_mmap(g_mem + 3, 1100); /* an odd start address */
	struct doca_mmap *idle = NULL;
	struct doca_buf_pool *pool = NULL;
	struct doca_buf *bufs[8] = {0}, *extra = NULL;
	union doca_data ud = {.u64 = 5};
	uint32_t n = 0;
	size_t align = 0, len = 0;
	void *head, *data;

	if (mmap == NULL)
		return;
	T_STATUS(doca_buf_pool_create(0, 64, mmap, &pool), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_pool_create(4, 0, mmap, &pool), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_pool_create(4, 64, NULL, &pool), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_pool_create(4, 64, mmap, NULL), DOCA_ERROR_INVALID_VALUE);

	/* too big for the range: 18 x 64 > 1100 */
	T_OK(doca_buf_pool_create(18, 64, mmap, &pool));
	T_STATUS(doca_buf_pool_start(pool), DOCA_ERROR_INITIALIZATION);
	T_OK(doca_buf_pool_destroy(pool));

	/* 8 x 100 aligned to 64: stride 128, the first at the next 64-byte boundary (<= 61 bytes
	 * on): 61 + 7 x 128 + 100 <= 1100 */
	T_OK(doca_buf_pool_create(8, 100, mmap, &pool));
	T_STATUS(doca_buf_pool_set_element_alignment(pool, 48), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_pool_set_element_alignment(pool, 0), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_buf_pool_set_element_alignment(pool, 64));
	T_OK(doca_buf_pool_get_element_alignment(pool, &align));
	T_EQ_INT(align, 64);
	T_OK(doca_buf_pool_set_user_data(pool, ud));
	T_STATUS(doca_buf_pool_buf_alloc(pool, &bufs[0]), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_buf_pool_stop(pool), DOCA_ERROR_BAD_STATE);
	T_OK(doca_buf_pool_start(pool));
	T_STATUS(doca_buf_pool_start(pool), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_buf_pool_set_element_alignment(pool, 8), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_buf_pool_set_user_data(pool, ud), DOCA_ERROR_BAD_STATE);
	ud.u64 = 0;
	T_OK(doca_buf_pool_get_user_data(pool, &ud));
	T_EQ_INT(ud.u64, 5);
	T_OK(doca_buf_pool_get_num_elements(pool, &n));
	T_EQ_INT(n, 8);

	/* several alloc/free cycles: all 8 out, empty, all back */
	for (int cycle = 0; cycle < 3; cycle++) {
		for (int i = 0; i < 8; i++) {
			T_OK(doca_buf_pool_buf_alloc(pool, &bufs[i]));
			T_OK(doca_buf_get_head(bufs[i], &head));
			T_EQ_INT((uintptr_t)head % 64, 0);
			T_TRUE((char *)head >= g_mem + 3 && (char *)head + 100 <= g_mem + 3 + 1100);
			T_OK(doca_buf_get_len(bufs[i], &len));
			T_EQ_INT(len, 100);
			T_OK(doca_buf_get_data(bufs[i], &data));
			T_TRUE(data == head);
			T_OK(doca_buf_get_data_len(bufs[i], &len));
			T_EQ_INT(len, 0); /* allocated empty */
			T_OK(doca_buf_set_data(bufs[i], head, 100));
		}
		for (int i = 1; i < 8; i++) /* distinct elements */
			T_TRUE(bufs[i] != bufs[i - 1]);
		T_STATUS(doca_buf_pool_buf_alloc(pool, &extra), DOCA_ERROR_EMPTY);
		T_OK(doca_buf_pool_get_num_free_elements(pool, &n));
		T_EQ_INT(n, 0);
		T_STATUS(doca_buf_pool_stop(pool), DOCA_ERROR_IN_USE);
		T_STATUS(doca_buf_pool_destroy(pool), DOCA_ERROR_IN_USE);
		for (int i = 0; i < 8; i++)
			T_OK(doca_buf_dec_refcount(bufs[i], NULL));
		T_OK(doca_buf_pool_get_num_free_elements(pool, &n));
		T_EQ_INT(n, 8);
	}
	T_STATUS(doca_buf_pool_buf_alloc(pool, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_pool_buf_alloc(NULL, &extra), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_buf_pool_stop(pool));
	T_OK(doca_buf_pool_destroy(pool));

	/* the mmap must be started at pool start */
	T_OK(doca_mmap_create(&idle));
	T_OK(doca_mmap_set_memrange(idle, g_mem, 256));
	T_OK(doca_buf_pool_create(2, 64, idle, &pool));
	T_STATUS(doca_buf_pool_start(pool), DOCA_ERROR_BAD_STATE);
	T_OK(doca_buf_pool_destroy(pool));
	T_OK(doca_mmap_destroy(idle));
	T_OK(doca_mmap_destroy(mmap));
}

/* Two threads allocate and free from one pool at once: nothing lost, nothing doubled. */
struct pool_thread_arg {
	struct doca_buf_pool *pool;
	int failures;
};

static void *pool_thread(void *p)
{
	struct pool_thread_arg *arg = p;

	for (int i = 0; i < 2000; i++) {
		struct doca_buf *b = NULL;
		doca_error_t st = doca_buf_pool_buf_alloc(arg->pool, &b);

		if (st == DOCA_ERROR_EMPTY)
			continue;
		if (st != DOCA_SUCCESS || doca_buf_dec_refcount(b, NULL) != DOCA_SUCCESS)
			arg->failures++;
	}
	return NULL;
}

static void test_pool_threads(void)
{
	struct doca_mmap *mmap = started_mmap(g_mem, sizeof(g_mem));
	struct pool_thread_arg args[2] = {{0}, {0}};
	struct doca_buf_pool *pool = NULL;
	pthread_t th[2];
	uint32_t n = 0;

	if (mmap == NULL)
		return;
	T_OK(doca_buf_pool_create(4, 32, mmap, &pool));
	T_OK(doca_buf_pool_start(pool));
	for (int i = 0; i < 2; i++) {
		args[i].pool = pool;
		pthread_create(&th[i], NULL, pool_thread, &args[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	T_EQ_INT(args[0].failures + args[1].failures, 0);
	T_OK(doca_buf_pool_get_num_free_elements(pool, &n));
	T_EQ_INT(n, 4);
	T_OK(doca_buf_pool_destroy(pool));
	T_OK(doca_mmap_destroy(mmap));
}

static void test_buf_arr(void)
{
	struct doca_mmap *mmap = started_mmap(g_mem, 1024);
	struct doca_gpu_buf_arr *handle = NULL;
	struct doca_buf_arr *arr = NULL;
	int fake_gpu_object;
	struct doca_gpu *gpu = (struct doca_gpu *)&fake_gpu_object; /* never dereferenced here */

	if (mmap == NULL)
		return;
	T_STATUS(doca_buf_arr_create(0, &arr), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_arr_create(4, NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_buf_arr_create(4, &arr));

	/* start needs parameters and a target GPU */
	T_STATUS(doca_buf_arr_start(arr), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_buf_arr_set_params(arr, NULL, 64, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_arr_set_params(arr, mmap, 0, 0), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_buf_arr_set_params(arr, mmap, 256, 64));
	T_STATUS(doca_buf_arr_start(arr), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_buf_arr_set_target_gpu(arr, NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_buf_arr_set_target_gpu(arr, gpu));
	T_STATUS(doca_buf_arr_get_gpu_handle(arr, &handle), DOCA_ERROR_BAD_STATE);

	/* 64 + 4 x 256 > 1024 */
	T_STATUS(doca_buf_arr_start(arr), DOCA_ERROR_NO_MEMORY);
	T_OK(doca_buf_arr_set_params(arr, mmap, 256, 0));
	T_OK(doca_buf_arr_start(arr));
	T_STATUS(doca_buf_arr_start(arr), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_buf_arr_set_params(arr, mmap, 128, 0), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_buf_arr_set_target_gpu(arr, gpu), DOCA_ERROR_BAD_STATE);
	/* no GPU side in this process */
	T_STATUS(doca_buf_arr_get_gpu_handle(arr, &handle), DOCA_ERROR_NOT_SUPPORTED);
	T_TRUE(handle == NULL);
	T_STATUS(doca_buf_arr_get_gpu_handle(arr, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_buf_arr_get_gpu_handle(NULL, &handle), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_buf_arr_stop(arr));
	T_STATUS(doca_buf_arr_stop(arr), DOCA_ERROR_BAD_STATE);
	T_OK(doca_buf_arr_set_params(arr, mmap, 128, 512)); /* settable again when stopped */
	T_OK(doca_buf_arr_start(arr));
	T_OK(doca_buf_arr_destroy(arr)); /* implicitly stops */
	T_STATUS(doca_buf_arr_destroy(NULL), DOCA_ERROR_INVALID_VALUE);

	/* the mmap must be started */
	T_OK(doca_mmap_stop(mmap));
	T_OK(doca_buf_arr_create(1, &arr));
	T_OK(doca_buf_arr_set_params(arr, mmap, 8, 0));
	T_OK(doca_buf_arr_set_target_gpu(arr, gpu));
	T_STATUS(doca_buf_arr_start(arr), DOCA_ERROR_BAD_STATE);
	T_OK(doca_buf_arr_destroy(arr));
	T_OK(doca_mmap_destroy(mmap));
}

int main(void)
{
	test_inventory();
	test_data();
	test_refcount_and_lists();
	test_mixed_list();
	test_pool();
	test_pool_threads();
	test_buf_arr();
	T_DONE();
}
