/*
 * softdpu: DOCA buffer pools: num_elements bufs of element_size bytes laid out back to back
 * (each aligned as set) from the start of an mmap's range. Allocating and returning bufs is
 * thread-safe.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_BUF_POOL_H_
#define DOCA_BUF_POOL_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_mmap;
struct doca_buf;
struct doca_buf_pool;

/* num_elements: 1 .. UINT32_MAX; element_size > 0. The mmap is checked at start. */
DOCA_STABLE
doca_error_t doca_buf_pool_create(size_t num_elements, size_t element_size,
				  const struct doca_mmap *mmap, struct doca_buf_pool **buf_pool);

/* Stops the pool if needed; DOCA_ERROR_IN_USE while bufs are allocated. */
DOCA_STABLE
doca_error_t doca_buf_pool_destroy(struct doca_buf_pool *buf_pool);

/*
 * DOCA_ERROR_BAD_STATE when already started or the mmap is not started;
 * DOCA_ERROR_INITIALIZATION when the mmap's range cannot hold every element.
 */
DOCA_STABLE
doca_error_t doca_buf_pool_start(struct doca_buf_pool *buf_pool);

/* DOCA_ERROR_BAD_STATE when not started; DOCA_ERROR_IN_USE while bufs are allocated. */
DOCA_STABLE
doca_error_t doca_buf_pool_stop(struct doca_buf_pool *buf_pool);

/*
 * An empty buf (data = head, data_len = 0) over one element. DOCA_ERROR_BAD_STATE when not
 * started, DOCA_ERROR_EMPTY when every element is allocated.
 */
DOCA_STABLE
doca_error_t doca_buf_pool_buf_alloc(struct doca_buf_pool *buf_pool, struct doca_buf **buf);

DOCA_STABLE
doca_error_t doca_buf_pool_set_user_data(struct doca_buf_pool *buf_pool, union doca_data user_data);

/* A power of 2, before start (default 1). */
DOCA_STABLE
doca_error_t doca_buf_pool_set_element_alignment(struct doca_buf_pool *buf_pool,
						 size_t element_alignment);

DOCA_STABLE
doca_error_t doca_buf_pool_get_num_elements(const struct doca_buf_pool *buf_pool,
					    uint32_t *num_of_elements);

DOCA_STABLE
doca_error_t doca_buf_pool_get_num_free_elements(const struct doca_buf_pool *buf_pool,
						 uint32_t *num_of_free_elements);

DOCA_STABLE
doca_error_t doca_buf_pool_get_user_data(const struct doca_buf_pool *buf_pool,
					 union doca_data *user_data);

DOCA_STABLE
doca_error_t doca_buf_pool_get_element_alignment(const struct doca_buf_pool *buf_pool,
						 size_t *element_alignment);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_POOL_H_ */
