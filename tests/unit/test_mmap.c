/*
 * doca_mmap: lifecycle and states, ranges (host memory and a range nobody may touch), devices
 * and memory keys, permissions, the holds of bufs, pools and buffer arrays, the free callback.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doca_buf.h"
#include "doca_buf_array.h"
#include "doca_buf_inventory.h"
#include "doca_buf_pool.h"
#include "doca_dev.h"
#include "doca_mmap.h"
#include "t_helpers.h"

static struct doca_dev *open_dev(const char *name)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	char buf[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	uint32_t n = 0;

	if (doca_devinfo_create_list(&list, &n) != DOCA_SUCCESS)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		if (doca_devinfo_get_ibdev_name(list[i], buf, sizeof(buf)) == DOCA_SUCCESS &&
		    strcmp(buf, name) == 0)
			doca_dev_open(list[i], &dev);
	doca_devinfo_destroy_list(list);
	return dev;
}

static void test_lifecycle(void)
{
	struct doca_mmap *mmap = NULL;
	char mem[256];
	void *addr = NULL;
	size_t len = 0;
	union doca_data ud = {.u64 = 0};
	uint32_t num = 7;

	T_STATUS(doca_mmap_create(NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_mmap_create(&mmap));
	T_TRUE(mmap != NULL);

	/* no range yet */
	T_STATUS(doca_mmap_start(mmap), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_mmap_get_memrange(mmap, &addr, &len), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_mmap_stop(mmap), DOCA_ERROR_BAD_STATE);

	/* bad ranges */
	T_STATUS(doca_mmap_set_memrange(NULL, mem, sizeof(mem)), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_mmap_set_memrange(mmap, NULL, sizeof(mem)), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_mmap_set_memrange(mmap, mem, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_mmap_set_memrange(mmap, (void *)(UINTPTR_MAX - 10), 100),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_mmap_set_dmabuf_memrange(mmap, -1, mem, 0, sizeof(mem)),
		 DOCA_ERROR_INVALID_VALUE);

	/* setters before start */
	T_STATUS(doca_mmap_set_permissions(mmap, 1u << 20), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_PCI_READ_ONLY |
							 DOCA_ACCESS_FLAG_PCI_READ_WRITE),
		 DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE |
						     DOCA_ACCESS_FLAG_PCI_RELAXED_ORDERING));
	ud.u64 = 0xfeed;
	T_OK(doca_mmap_set_user_data(mmap, ud));
	T_STATUS(doca_mmap_set_max_num_devices(mmap, 0), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_mmap_set_max_num_devices(mmap, 4));
	T_OK(doca_mmap_get_max_num_devices(mmap, &num));
	T_EQ_INT(num, 4);
	T_OK(doca_mmap_set_memrange(mmap, mem, sizeof(mem)));
	T_STATUS(doca_mmap_set_memrange(mmap, mem, sizeof(mem)), DOCA_ERROR_NOT_PERMITTED);
	T_STATUS(doca_mmap_set_dmabuf_memrange(mmap, 3, mem, 0, sizeof(mem)),
		 DOCA_ERROR_NOT_PERMITTED);
	T_OK(doca_mmap_get_memrange(mmap, &addr, &len));
	T_TRUE(addr == mem);
	T_EQ_INT(len, sizeof(mem));
	T_STATUS(doca_mmap_get_memrange(mmap, NULL, &len), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_mmap_get_memrange(mmap, &addr, NULL), DOCA_ERROR_INVALID_VALUE);

	/* started: setters refused */
	T_OK(doca_mmap_start(mmap));
	T_STATUS(doca_mmap_start(mmap), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE),
		 DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_mmap_set_user_data(mmap, ud), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_mmap_set_memrange(mmap, mem, 8), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_mmap_set_max_num_devices(mmap, 8), DOCA_ERROR_NOT_PERMITTED);
	ud.u64 = 0;
	T_OK(doca_mmap_get_user_data(mmap, &ud));
	T_EQ_INT(ud.u64, 0xfeed);
	T_OK(doca_mmap_get_num_bufs(mmap, &num));
	T_EQ_INT(num, 0);
	T_STATUS(doca_mmap_get_num_bufs(mmap, NULL), DOCA_ERROR_INVALID_VALUE);

	/* stop, restart, destroy while started */
	T_OK(doca_mmap_stop(mmap));
	T_STATUS(doca_mmap_stop(mmap), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_mmap_set_max_num_devices(mmap, 8), DOCA_ERROR_NOT_PERMITTED);
	T_OK(doca_mmap_start(mmap));
	T_OK(doca_mmap_destroy(mmap));
	T_STATUS(doca_mmap_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
}

/* A device-memory-like range: any address is accepted and never touched. */
static void test_untouched_range(void)
{
	struct doca_mmap *mmap = NULL;
	void *far = (void *)(uintptr_t)0x7f0000000000ull; /* not mapped in this process */
	void *addr;
	size_t len;

	T_OK(doca_mmap_create(&mmap));
	T_OK(doca_mmap_set_dmabuf_memrange(mmap, 1000, far, 4096, 1u << 20));
	T_OK(doca_mmap_start(mmap));
	T_OK(doca_mmap_get_memrange(mmap, &addr, &len));
	T_TRUE(addr == far);
	T_EQ_INT(len, 1u << 20);
	T_OK(doca_mmap_stop(mmap));
	T_OK(doca_mmap_destroy(mmap));
}

static int g_freed;
static void free_cb(void *addr, size_t len, void *cookie)
{
	T_TRUE(cookie == &g_freed);
	T_EQ_INT(len, 64);
	free(addr);
	g_freed++;
}

static void test_free_cb(void)
{
	struct doca_mmap *mmap = NULL;
	void *mem = malloc(64);

	/* not started: destroy does not call it (the memory stays the caller's) */
	T_OK(doca_mmap_create(&mmap));
	T_OK(doca_mmap_set_memrange(mmap, mem, 64));
	T_STATUS(doca_mmap_set_free_cb(mmap, NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_mmap_set_free_cb(mmap, free_cb, &g_freed));
	T_OK(doca_mmap_destroy(mmap));
	T_EQ_INT(g_freed, 0);

	/* started: destroy frees the range through the callback */
	T_OK(doca_mmap_create(&mmap));
	T_OK(doca_mmap_set_memrange(mmap, mem, 64));
	T_OK(doca_mmap_set_free_cb(mmap, free_cb, &g_freed));
	T_OK(doca_mmap_start(mmap));
	T_STATUS(doca_mmap_set_free_cb(mmap, free_cb, &g_freed), DOCA_ERROR_BAD_STATE);
	T_OK(doca_mmap_destroy(mmap));
	T_EQ_INT(g_freed, 1);
}

static void test_devices(void)
{
	struct doca_dev *dev = open_dev("softdpu0"), *alias = open_dev("mlx5_0");
	struct doca_mmap *mmap = NULL, *mmap2 = NULL;
	uint32_t mkey = 0, mkey_again = 0, mkey_alias = 0, mkey2 = 0;
	char mem[64];

	if (dev == NULL || alias == NULL) {
		t_fail("expected devices softdpu0 and mlx5_0 (host provider), got %p and %p",
		       (void *)dev, (void *)alias);
		goto out;
	}
	T_OK(doca_mmap_create(&mmap));
	T_OK(doca_mmap_set_memrange(mmap, mem, sizeof(mem)));
	T_STATUS(doca_mmap_add_dev(mmap, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_mmap_add_dev(NULL, dev), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_mmap_add_dev(mmap, dev));
	T_STATUS(doca_mmap_add_dev(mmap, dev), DOCA_ERROR_ALREADY_EXIST);
	T_OK(doca_mmap_add_dev(mmap, alias));

	/* mkeys only once started */
	T_STATUS(doca_mmap_get_mkey(mmap, dev, &mkey), DOCA_ERROR_BAD_STATE);
	T_OK(doca_mmap_start(mmap));
	T_STATUS(doca_mmap_add_dev(mmap, dev), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_mmap_rm_dev(mmap, dev), DOCA_ERROR_BAD_STATE);
	T_OK(doca_mmap_get_mkey(mmap, dev, &mkey));
	T_OK(doca_mmap_get_mkey(mmap, dev, &mkey_again));
	T_OK(doca_mmap_get_mkey(mmap, alias, &mkey_alias));
	T_TRUE(mkey != 0);
	T_EQ_INT(mkey_again, mkey);
	T_TRUE(mkey_alias != mkey);
	T_STATUS(doca_mmap_get_mkey(mmap, NULL, &mkey), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_mmap_get_mkey(mmap, dev, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_mmap_get_mkey(NULL, dev, &mkey), DOCA_ERROR_INVALID_VALUE);

	/* another mmap, same device: another key; a device not added: NOT_FOUND */
	T_OK(doca_mmap_create(&mmap2));
	T_OK(doca_mmap_set_memrange(mmap2, mem, sizeof(mem)));
	T_OK(doca_mmap_add_dev(mmap2, dev));
	T_OK(doca_mmap_start(mmap2));
	T_OK(doca_mmap_get_mkey(mmap2, dev, &mkey2));
	T_TRUE(mkey2 != mkey && mkey2 != mkey_alias);
	T_STATUS(doca_mmap_get_mkey(mmap2, alias, &mkey2), DOCA_ERROR_NOT_FOUND);

	/* the mmaps hold the devices: the last close is refused until they go */
	T_STATUS(doca_dev_close(alias), DOCA_ERROR_IN_USE);
	T_OK(doca_mmap_stop(mmap));
	T_OK(doca_mmap_rm_dev(mmap, alias));
	T_STATUS(doca_mmap_rm_dev(mmap, alias), DOCA_ERROR_NOT_FOUND);
	T_STATUS(doca_mmap_rm_dev(mmap, NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_mmap_start(mmap));
	T_STATUS(doca_mmap_get_mkey(mmap, alias, &mkey_alias), DOCA_ERROR_NOT_FOUND);
	T_OK(doca_mmap_get_mkey(mmap, dev, &mkey_again));
	T_EQ_INT(mkey_again, mkey); /* stable across stop/start */
	T_OK(doca_dev_close(alias));
	alias = NULL;
	T_STATUS(doca_dev_close(dev), DOCA_ERROR_IN_USE);
	T_OK(doca_mmap_destroy(mmap)); /* started, with a device: releases it */
	T_STATUS(doca_dev_close(dev), DOCA_ERROR_IN_USE);
	T_OK(doca_mmap_destroy(mmap2));

	/* the device limit */
	T_OK(doca_mmap_create(&mmap));
	T_OK(doca_mmap_set_max_num_devices(mmap, 1));
	alias = open_dev("mlx5_0");
	T_OK(doca_mmap_add_dev(mmap, dev));
	T_STATUS(doca_mmap_add_dev(mmap, alias), DOCA_ERROR_NO_MEMORY);
	T_OK(doca_mmap_set_max_num_devices(mmap, 1)); /* not below the devices already added */
	T_OK(doca_mmap_destroy(mmap));		      /* never started, still releases the device */
out:
	if (alias != NULL)
		T_OK(doca_dev_close(alias));
	if (dev != NULL)
		T_OK(doca_dev_close(dev));
}

/* Bufs, pools and buffer arrays keep a started mmap from stopping or going away. */
static void test_users(void)
{
	struct doca_buf_inventory *inv = NULL;
	struct doca_buf_pool *pool = NULL;
	struct doca_buf_arr *arr = NULL;
	struct doca_mmap *mmap = NULL;
	struct doca_buf *buf = NULL;
	int fake_gpu;
	char mem[128];
	uint32_t num = 0;

	T_OK(doca_mmap_create(&mmap));
	T_OK(doca_mmap_set_memrange(mmap, mem, sizeof(mem)));
	T_OK(doca_buf_inventory_create(2, &inv));
	T_OK(doca_buf_inventory_start(inv));

	/* bufs need a started mmap */
	T_STATUS(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem, 8, &buf), DOCA_ERROR_BAD_STATE);
	T_OK(doca_mmap_start(mmap));
	T_OK(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem, 8, &buf));
	T_OK(doca_mmap_get_num_bufs(mmap, &num));
	T_EQ_INT(num, 1);
	T_STATUS(doca_mmap_stop(mmap), DOCA_ERROR_IN_USE);
	T_STATUS(doca_mmap_destroy(mmap), DOCA_ERROR_IN_USE);
	T_OK(doca_buf_dec_refcount(buf, NULL));
	T_OK(doca_mmap_get_num_bufs(mmap, &num));
	T_EQ_INT(num, 0);

	/* a started pool */
	T_OK(doca_buf_pool_create(4, 16, mmap, &pool));
	T_OK(doca_buf_pool_start(pool));
	T_STATUS(doca_mmap_stop(mmap), DOCA_ERROR_IN_USE);
	T_OK(doca_buf_pool_stop(pool));
	T_OK(doca_mmap_stop(mmap));
	T_STATUS(doca_buf_pool_start(pool), DOCA_ERROR_BAD_STATE); /* mmap stopped */
	T_OK(doca_mmap_start(mmap));

	/* a started buffer array */
	T_OK(doca_buf_arr_create(4, &arr));
	T_OK(doca_buf_arr_set_params(arr, mmap, 32, 0));
	T_OK(doca_buf_arr_set_target_gpu(arr, (struct doca_gpu *)&fake_gpu));
	T_OK(doca_buf_arr_start(arr));
	T_STATUS(doca_mmap_destroy(mmap), DOCA_ERROR_IN_USE);
	T_OK(doca_buf_arr_destroy(arr)); /* implicitly stops */

	/* configured but never started: still a user, destroy must not leave it dangling */
	T_STATUS(doca_mmap_destroy(mmap), DOCA_ERROR_IN_USE); /* the (stopped) pool */
	T_OK(doca_buf_pool_destroy(pool));
	T_OK(doca_buf_arr_create(4, &arr));
	T_OK(doca_buf_arr_set_params(arr, mmap, 32, 0));
	T_STATUS(doca_mmap_destroy(mmap), DOCA_ERROR_IN_USE);
	T_OK(doca_buf_arr_destroy(arr));
	T_OK(doca_buf_inventory_destroy(inv));
	T_OK(doca_mmap_destroy(mmap));
}

int main(void)
{
	test_lifecycle();
	test_untouched_range();
	test_free_cb();
	test_devices();
	test_users();
	T_DONE();
}
