/*
 * DOCA buffer inventories: a fixed array of descriptors and a free list under a mutex.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <pthread.h>
#include <stdlib.h>

#include "doca_buf_inventory.h"
#include "sdp_buf.h"
#include "sdp_check.h"
#include "sdp_log.h"

SDP_LOG_COMPONENT("buf_inventory");

#define INV_MAGIC 0x5d0c1b70u

struct doca_buf_inventory {
	uint32_t magic;
	pthread_mutex_t lock;
	int started;
	uint32_t num_elements;
	uint32_t num_free;
	struct doca_buf *elems;
	struct doca_buf *free_list;
	union doca_data user_data;
};

static int inv_ok(const struct doca_buf_inventory *inv)
{
	return inv != NULL && inv->magic == INV_MAGIC;
}

static doca_error_t check_inv(const struct doca_buf_inventory *inv, const char *func)
{
	return sdp_check_handle(inv_ok(inv), inv, "inventory", func);
}

static void inv_put(void *owner, struct doca_buf *buf)
{
	struct doca_buf_inventory *inv = owner;

	pthread_mutex_lock(&inv->lock);
	buf->free_next = inv->free_list;
	inv->free_list = buf;
	inv->num_free++;
	pthread_mutex_unlock(&inv->lock);
}

static const struct sdp_buf_owner_ops inv_owner_ops = {
	.name = "buf_inventory",
	.put = inv_put,
};

doca_error_t doca_buf_inventory_create(size_t num_elements, struct doca_buf_inventory **inventory)
{
	doca_error_t status;
	struct doca_buf_inventory *inv;

	if ((status = sdp_check_arg(inventory, "inventory", __func__)) != DOCA_SUCCESS)
		return status;
	if (num_elements == 0 || num_elements > UINT32_MAX) {
		sdp_error("num_elements %zu out of range 1..%u", num_elements, UINT32_MAX);
		return DOCA_ERROR_INVALID_VALUE;
	}
	inv = calloc(1, sizeof(*inv));
	if (inv == NULL)
		goto err_nomem;
	inv->elems = calloc(num_elements, sizeof(*inv->elems));
	if (inv->elems == NULL)
		goto err_free_inv;

	pthread_mutex_init(&inv->lock, NULL);
	inv->magic = INV_MAGIC;
	inv->num_elements = (uint32_t)num_elements;
	inv->num_free = (uint32_t)num_elements;
	for (size_t i = num_elements; i-- > 0;) {
		inv->elems[i].owner_ops = &inv_owner_ops;
		inv->elems[i].owner = inv;
		inv->elems[i].free_next = inv->free_list;
		inv->free_list = &inv->elems[i];
	}
	*inventory = inv;
	return DOCA_SUCCESS;

err_free_inv:
	free(inv);
err_nomem:
	sdp_error("out of memory for an inventory of %zu bufs", num_elements);
	return DOCA_ERROR_NO_MEMORY;
}

doca_error_t doca_buf_inventory_destroy(struct doca_buf_inventory *inventory)
{
	doca_error_t status;

	if ((status = check_inv(inventory, __func__)) != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&inventory->lock);
	if (inventory->num_free != inventory->num_elements) {
		sdp_error("%u buf(s) taken from the inventory are not returned yet",
			  inventory->num_elements - inventory->num_free);
		pthread_mutex_unlock(&inventory->lock);
		return DOCA_ERROR_IN_USE;
	}
	inventory->magic = 0;
	pthread_mutex_unlock(&inventory->lock);
	pthread_mutex_destroy(&inventory->lock);
	free(inventory->elems);
	free(inventory);
	return DOCA_SUCCESS;
}

/* Start or stop; func is the caller, for the argument check's record. */
static doca_error_t set_started(struct doca_buf_inventory *inv, int started, const char *func)
{
	doca_error_t status;

	if ((status = check_inv(inv, func)) != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&inv->lock);
	if (inv->started == started) {
		sdp_error("inventory is %s", started ? "already started" : "not started");
		status = DOCA_ERROR_BAD_STATE;
	} else {
		inv->started = started;
	}
	pthread_mutex_unlock(&inv->lock);
	return status;
}

doca_error_t doca_buf_inventory_start(struct doca_buf_inventory *inventory)
{
	return set_started(inventory, 1, __func__);
}

doca_error_t doca_buf_inventory_stop(struct doca_buf_inventory *inventory)
{
	return set_started(inventory, 0, __func__);
}

doca_error_t doca_buf_inventory_buf_get_by_args(struct doca_buf_inventory *inventory,
						struct doca_mmap *mmap, void *addr, size_t len,
						void *data, size_t data_len, struct doca_buf **buf)
{
	struct doca_buf *b;
	doca_error_t status;

	if ((status = check_inv(inventory, __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(mmap, "mmap", __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(addr, "addr", __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(buf, "buf", __func__)) != DOCA_SUCCESS)
		return status;
	if ((uintptr_t)data < (uintptr_t)addr || (uintptr_t)data - (uintptr_t)addr > len ||
	    data_len > len - ((uintptr_t)data - (uintptr_t)addr)) {
		sdp_error("data %p + %zu is not inside the buf %p + %zu", data, data_len, addr,
			  len);
		return DOCA_ERROR_INVALID_VALUE;
	}

	pthread_mutex_lock(&inventory->lock);
	if (!inventory->started) {
		pthread_mutex_unlock(&inventory->lock);
		sdp_error("inventory is not started");
		return DOCA_ERROR_BAD_STATE;
	}
	b = inventory->free_list;
	if (b == NULL) {
		pthread_mutex_unlock(&inventory->lock);
		sdp_error("inventory is empty: all %u bufs are taken", inventory->num_elements);
		return DOCA_ERROR_NO_MEMORY;
	}
	inventory->free_list = b->free_next;
	inventory->num_free--;
	pthread_mutex_unlock(&inventory->lock);

	status = sdp_mmap_buf_attach(mmap, addr, len);
	if (status != DOCA_SUCCESS) {
		inv_put(inventory, b);
		return status;
	}
	sdp_buf_init(b, mmap, addr, len, data, data_len);
	*buf = b;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_set_user_data(struct doca_buf_inventory *inventory,
					      union doca_data user_data)
{
	doca_error_t status;

	if ((status = check_inv(inventory, __func__)) != DOCA_SUCCESS)
		return status;
	inventory->user_data = user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_get_user_data(const struct doca_buf_inventory *inventory,
					      union doca_data *user_data)
{
	doca_error_t status;

	if ((status = check_inv(inventory, __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(user_data, "user_data", __func__)) != DOCA_SUCCESS)
		return status;
	*user_data = inventory->user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_get_num_elements(const struct doca_buf_inventory *inventory,
						 uint32_t *num_of_elements)
{
	doca_error_t status;

	if ((status = check_inv(inventory, __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(num_of_elements, "num_of_elements", __func__)) != DOCA_SUCCESS)
		return status;
	*num_of_elements = inventory->num_elements;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_get_num_free_elements(const struct doca_buf_inventory *inventory,
						      uint32_t *num_of_free_elements)
{
	doca_error_t status;
	struct doca_buf_inventory *inv = (struct doca_buf_inventory *)inventory;

	if ((status = check_inv(inventory, __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(num_of_free_elements, "num_of_free_elements", __func__)) !=
		    DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&inv->lock);
	*num_of_free_elements = inv->num_free;
	pthread_mutex_unlock(&inv->lock);
	return DOCA_SUCCESS;
}
