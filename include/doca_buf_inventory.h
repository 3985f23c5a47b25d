/*
 * softdpu: DOCA buffer inventories: a fixed number of doca_buf descriptors, each pointed at any
 * region of a started mmap when it is taken. Taking and returning bufs is thread-safe.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_BUF_INVENTORY_H_
#define DOCA_BUF_INVENTORY_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_mmap;
struct doca_buf_inventory;

/* num_elements: 1 .. UINT32_MAX descriptors, allocated now. */
DOCA_STABLE
doca_error_t doca_buf_inventory_create(size_t num_elements, struct doca_buf_inventory **inventory);

/* Stops the inventory if needed; DOCA_ERROR_IN_USE while bufs taken from it are not returned. */
DOCA_STABLE
doca_error_t doca_buf_inventory_destroy(struct doca_buf_inventory *inventory);

/* DOCA_ERROR_BAD_STATE when already started. */
DOCA_STABLE
doca_error_t doca_buf_inventory_start(struct doca_buf_inventory *inventory);

/* No more bufs can be taken (those out stay valid). DOCA_ERROR_BAD_STATE when not started. */
DOCA_STABLE
doca_error_t doca_buf_inventory_stop(struct doca_buf_inventory *inventory);

/*
 * Take a buf for [addr, addr + len) of mmap with data [data, data + data_len). Both objects must
 * be started (DOCA_ERROR_BAD_STATE). DOCA_ERROR_INVALID_VALUE when the region is not inside the
 * mmap's range or the data is not inside the region; DOCA_ERROR_NO_MEMORY when every buf is out.
 */
DOCA_STABLE
doca_error_t doca_buf_inventory_buf_get_by_args(struct doca_buf_inventory *inventory,
						struct doca_mmap *mmap, void *addr, size_t len,
						void *data, size_t data_len, struct doca_buf **buf);

/* A buf for [addr, addr + len) holding no data yet (data = addr, data_len = 0). */
static inline doca_error_t doca_buf_inventory_buf_get_by_addr(struct doca_buf_inventory *inventory,
							      struct doca_mmap *mmap, void *addr,
							      size_t len, struct doca_buf **buf)
{
	return doca_buf_inventory_buf_get_by_args(inventory, mmap, addr, len, addr, 0, buf);
}

/* A buf for [data, data + data_len) that is full of data. */
static inline doca_error_t doca_buf_inventory_buf_get_by_data(struct doca_buf_inventory *inventory,
							      struct doca_mmap *mmap, void *data,
							      size_t data_len,
							      struct doca_buf **buf)
{
	return doca_buf_inventory_buf_get_by_args(inventory, mmap, data, data_len, data, data_len,
						  buf);
}

DOCA_STABLE
doca_error_t doca_buf_inventory_set_user_data(struct doca_buf_inventory *inventory,
					      union doca_data user_data);

DOCA_STABLE
doca_error_t doca_buf_inventory_get_user_data(const struct doca_buf_inventory *inventory,
					      union doca_data *user_data);

DOCA_STABLE
doca_error_t doca_buf_inventory_get_num_elements(const struct doca_buf_inventory *inventory,
						 uint32_t *num_of_elements);

DOCA_STABLE
doca_error_t doca_buf_inventory_get_num_free_elements(const struct doca_buf_inventory *inventory,
						      uint32_t *num_of_free_elements);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_INVENTORY_H_ */
