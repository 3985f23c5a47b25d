/*
 * DOCA buffer pools: the descriptors are allocated at create; start lays them out over the
 * mmap's range (element i at align_up(range start) + i * align_up(element_size)).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <pthread.h>
#include <stdlib.h>

#include "doca_buf_pool.h"
#include "sdp_buf.h"
#include "sdp_check.h"
#include "sdp_log.h"

SDP_LOG_COMPONENT("buf_pool");

#define POOL_MAGIC 0x5d0cb001u

struct doca_buf_pool {
	uint32_t magic;
	pthread_mutex_t lock;
	int started;
	struct doca_mmap *mmap;
	uint32_t num_elements;
	uint32_t num_free;
	size_t element_size;
	size_t alignment;
	struct doca_buf *elems;
	struct doca_buf *free_list;
	union doca_data user_data;
};

static int pool_ok(const struct doca_buf_pool *pool)
{
	return pool != NULL && pool->magic == POOL_MAGIC;
}

static doca_error_t check_pool(const struct doca_buf_pool *pool, const char *func)
{
	return sdp_check_handle(pool_ok(pool), pool, "buf_pool", func);
}

static void pool_put(void *owner, struct doca_buf *buf)
{
	struct doca_buf_pool *pool = owner;

	pthread_mutex_lock(&pool->lock);
	buf->free_next = pool->free_list;
	pool->free_list = buf;
	pool->num_free++;
	pthread_mutex_unlock(&pool->lock);
}

static const struct sdp_buf_owner_ops pool_owner_ops = {
	.name = "buf_pool",
	.put = pool_put,
};

doca_error_t doca_buf_pool_create(size_t num_elements, size_t element_size,
				  const struct doca_mmap *mmap, struct doca_buf_pool **buf_pool)
{
	doca_error_t status;
	struct doca_buf_pool *pool;

	if ((status = sdp_check_arg(mmap, "mmap", __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(buf_pool, "buf_pool", __func__)) != DOCA_SUCCESS)
		return status;
	if (sdp_mmap_ref((struct doca_mmap *)mmap) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (num_elements == 0 || num_elements > UINT32_MAX || element_size == 0) {
		sdp_error("bad pool shape: %zu elements of %zu bytes (need 1..%u elements of > 0 "
			  "bytes)",
			  num_elements, element_size, UINT32_MAX);
		sdp_mmap_unref((struct doca_mmap *)mmap);
		return DOCA_ERROR_INVALID_VALUE;
	}
	pool = calloc(1, sizeof(*pool));
	if (pool == NULL)
		goto err_nomem;
	pool->elems = calloc(num_elements, sizeof(*pool->elems));
	if (pool->elems == NULL)
		goto err_free_pool;
	pthread_mutex_init(&pool->lock, NULL);
	pool->magic = POOL_MAGIC;
	pool->mmap = (struct doca_mmap *)mmap;
	pool->num_elements = (uint32_t)num_elements;
	pool->element_size = element_size;
	pool->alignment = 1;
	pool->num_free = (uint32_t)num_elements;
	for (size_t i = 0; i < num_elements; i++) {
		pool->elems[i].owner_ops = &pool_owner_ops;
		pool->elems[i].owner = pool;
	}
	*buf_pool = pool;
	return DOCA_SUCCESS;

err_free_pool:
	free(pool);
err_nomem:
	sdp_mmap_unref((struct doca_mmap *)mmap);
	sdp_error("out of memory for a pool of %zu bufs", num_elements);
	return DOCA_ERROR_NO_MEMORY;
}

/* Called with the lock held. */
static doca_error_t pool_stop_locked(struct doca_buf_pool *pool, const char *what)
{
	if (pool->num_free != pool->num_elements) {
		sdp_error("cannot %s the pool: %u buf(s) are still allocated", what,
			  pool->num_elements - pool->num_free);
		return DOCA_ERROR_IN_USE;
	}
	if (pool->started) {
		pool->started = 0;
		sdp_mmap_unhold(pool->mmap);
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool_destroy(struct doca_buf_pool *buf_pool)
{
	doca_error_t status;

	if ((status = check_pool(buf_pool, __func__)) != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&buf_pool->lock);
	status = pool_stop_locked(buf_pool, "destroy");
	if (status != DOCA_SUCCESS) {
		pthread_mutex_unlock(&buf_pool->lock);
		return status;
	}
	buf_pool->magic = 0;
	pthread_mutex_unlock(&buf_pool->lock);
	pthread_mutex_destroy(&buf_pool->lock);
	sdp_mmap_unref(buf_pool->mmap);
	free(buf_pool->elems);
	free(buf_pool);
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool_start(struct doca_buf_pool *buf_pool)
{
	size_t stride, pad, need;
	uintptr_t base;
	doca_error_t status;
	void *addr;
	size_t len;

	if ((status = check_pool(buf_pool, __func__)) != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&buf_pool->lock);
	if (buf_pool->started) {
		sdp_error("buf_pool already started");
		status = DOCA_ERROR_BAD_STATE;
		goto out;
	}
	status = sdp_mmap_hold(buf_pool->mmap, "buf_pool");
	if (status != DOCA_SUCCESS)
		goto out;
	/* the mmap is started, so its range is set and fixed */
	sdp_mmap_range(buf_pool->mmap, &addr, &len);

	base = ((uintptr_t)addr + buf_pool->alignment - 1) & ~(uintptr_t)(buf_pool->alignment - 1);
	pad = base - (uintptr_t)addr;
	stride = (buf_pool->element_size + buf_pool->alignment - 1) & ~(buf_pool->alignment - 1);
	if (stride < buf_pool->element_size ||
	    __builtin_mul_overflow(stride, (size_t)buf_pool->num_elements - 1, &need) ||
	    __builtin_add_overflow(need, buf_pool->element_size + pad, &need) || need > len) {
		sdp_error(
			"the mmap's %zu bytes cannot hold %u elements of %zu bytes aligned to %zu",
			len, buf_pool->num_elements, buf_pool->element_size, buf_pool->alignment);
		sdp_mmap_unhold(buf_pool->mmap);
		status = DOCA_ERROR_INITIALIZATION;
		goto out;
	}

	buf_pool->free_list = NULL;
	for (size_t i = buf_pool->num_elements; i-- > 0;) {
		struct doca_buf *b = &buf_pool->elems[i];

		b->head = (void *)(base + i * stride);
		b->len = buf_pool->element_size;
		b->free_next = buf_pool->free_list;
		buf_pool->free_list = b;
	}
	buf_pool->num_free = buf_pool->num_elements;
	buf_pool->started = 1;
out:
	pthread_mutex_unlock(&buf_pool->lock);
	return status;
}

doca_error_t doca_buf_pool_stop(struct doca_buf_pool *buf_pool)
{
	doca_error_t status;

	if ((status = check_pool(buf_pool, __func__)) != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&buf_pool->lock);
	if (!buf_pool->started) {
		sdp_error("buf_pool is not started");
		status = DOCA_ERROR_BAD_STATE;
	} else {
		status = pool_stop_locked(buf_pool, "stop");
	}
	pthread_mutex_unlock(&buf_pool->lock);
	return status;
}

doca_error_t doca_buf_pool_buf_alloc(struct doca_buf_pool *buf_pool, struct doca_buf **buf)
{
	struct doca_buf *b;
	doca_error_t status;

	if ((status = check_pool(buf_pool, __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(buf, "buf", __func__)) != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&buf_pool->lock);
	if (!buf_pool->started) {
		pthread_mutex_unlock(&buf_pool->lock);
		sdp_error("buf_pool is not started");
		return DOCA_ERROR_BAD_STATE;
	}
	b = buf_pool->free_list;
	if (b == NULL) {
		pthread_mutex_unlock(&buf_pool->lock);
		/* expected on a busy data path: debug level, not to flood the log */
		sdp_debug("buf_pool is empty: all %u bufs are allocated", buf_pool->num_elements);
		return DOCA_ERROR_EMPTY;
	}
	buf_pool->free_list = b->free_next;
	buf_pool->num_free--;
	pthread_mutex_unlock(&buf_pool->lock);

	status = sdp_mmap_buf_attach(buf_pool->mmap, b->head, b->len);
	if (status != DOCA_SUCCESS) {
		pool_put(buf_pool, b);
		return status;
	}
	sdp_buf_init(b, buf_pool->mmap, b->head, b->len, b->head, 0);
	*buf = b;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool_set_user_data(struct doca_buf_pool *buf_pool, union doca_data user_data)
{
	doca_error_t status = DOCA_SUCCESS;

	if ((status = check_pool(buf_pool, __func__)) != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&buf_pool->lock);
	if (buf_pool->started) {
		sdp_error("cannot set the user data of a started buf_pool");
		status = DOCA_ERROR_BAD_STATE;
	} else {
		buf_pool->user_data = user_data;
	}
	pthread_mutex_unlock(&buf_pool->lock);
	return status;
}

doca_error_t doca_buf_pool_set_element_alignment(struct doca_buf_pool *buf_pool,
						 size_t element_alignment)
{
	doca_error_t status = DOCA_SUCCESS;

	if ((status = check_pool(buf_pool, __func__)) != DOCA_SUCCESS)
		return status;
	if (element_alignment == 0 || (element_alignment & (element_alignment - 1)) != 0) {
		sdp_error("alignment %zu is not a power of 2", element_alignment);
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&buf_pool->lock);
	if (buf_pool->started) {
		sdp_error("cannot set the alignment of a started buf_pool");
		status = DOCA_ERROR_BAD_STATE;
	} else {
		buf_pool->alignment = element_alignment;
	}
	pthread_mutex_unlock(&buf_pool->lock);
	return status;
}

doca_error_t doca_buf_pool_get_num_elements(const struct doca_buf_pool *buf_pool,
					    uint32_t *num_of_elements)
{
	doca_error_t status;

	if ((status = check_pool(buf_pool, __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(num_of_elements, "num_of_elements", __func__)) != DOCA_SUCCESS)
		return status;
	*num_of_elements = buf_pool->num_elements;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool_get_num_free_elements(const struct doca_buf_pool *buf_pool,
						 uint32_t *num_of_free_elements)
{
	doca_error_t status;
	struct doca_buf_pool *pool = (struct doca_buf_pool *)buf_pool;

	if ((status = check_pool(buf_pool, __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(num_of_free_elements, "num_of_free_elements", __func__)) !=
		    DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&pool->lock);
	*num_of_free_elements = pool->num_free;
	pthread_mutex_unlock(&pool->lock);
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool_get_user_data(const struct doca_buf_pool *buf_pool,
					 union doca_data *user_data)
{
	doca_error_t status;

	if ((status = check_pool(buf_pool, __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(user_data, "user_data", __func__)) != DOCA_SUCCESS)
		return status;
	*user_data = buf_pool->user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_pool_get_element_alignment(const struct doca_buf_pool *buf_pool,
						 size_t *element_alignment)
{
	doca_error_t status;

	if ((status = check_pool(buf_pool, __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(element_alignment, "element_alignment", __func__)) !=
		    DOCA_SUCCESS)
		return status;
	*element_alignment = buf_pool->alignment;
	return DOCA_SUCCESS;
}
