/*
 * DOCA buffers: data placement, reference counts and lists. Inventories and pools own the
 * descriptors (sdp_buf_owner_ops); this file moves them between states.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <string.h>

#include "doca_buf.h"
#include "sdp_buf.h"
#include "sdp_log.h"

SDP_LOG_COMPONENT("buf");

#define CHECK_ARG(arg)                                                                             \
	do {                                                                                       \
		if ((arg) == NULL) {                                                               \
			sdp_error("NULL " #arg);                                                   \
			return DOCA_ERROR_INVALID_VALUE;                                           \
		}                                                                                  \
	} while (0)

/* A buf handed to the API must be out of its owner (refcount > 0). */
#define CHECK_BUF(buf)                                                                             \
	do {                                                                                       \
		CHECK_ARG(buf);                                                                    \
		if ((buf)->refcount == 0) {                                                        \
			sdp_error("buf %p was released (reference count 0)", (const void *)(buf)); \
			return DOCA_ERROR_BAD_STATE;                                               \
		}                                                                                  \
	} while (0)

void sdp_buf_init(struct doca_buf *buf, struct doca_mmap *mmap, void *head, size_t len, void *data,
		  size_t data_len)
{
	buf->head = head;
	buf->len = len;
	buf->data = data;
	buf->data_len = data_len;
	buf->refcount = 1;
	buf->mmap = mmap;
	buf->next = NULL;
	buf->prev = NULL;
}

/* [data, data+data_len] inside [head, head+len], without overflow. */
static int range_inside(const struct doca_buf *buf, const void *data, size_t data_len)
{
	uintptr_t head = (uintptr_t)buf->head, d = (uintptr_t)data;

	return d >= head && d - head <= buf->len && data_len <= buf->len - (d - head);
}

/* ---- reference counts ------------------------------------------------------------------------ */

doca_error_t doca_buf_inc_refcount(struct doca_buf *buf, uint16_t *refcount)
{
	CHECK_BUF(buf);
	if (buf->prev != NULL) {
		sdp_error("buf %p is inside a list; only the list's head has a reference count",
			  (void *)buf);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (buf->refcount == UINT16_MAX) {
		sdp_error("buf %p reference count is at its maximum %u", (void *)buf, UINT16_MAX);
		return DOCA_ERROR_TOO_BIG;
	}
	if (refcount != NULL)
		*refcount = buf->refcount;
	buf->refcount++;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_dec_refcount(struct doca_buf *buf, uint16_t *refcount)
{
	struct doca_buf *next;
	uint16_t before;

	CHECK_BUF(buf);
	if (buf->prev != NULL) {
		sdp_error("buf %p is inside a list; release the list's head", (void *)buf);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	before = buf->refcount--;
	if (buf->refcount == 0) {
		/* the whole list goes back, each buf to its own owner */
		for (; buf != NULL; buf = next) {
			next = buf->next;
			buf->next = NULL;
			buf->prev = NULL;
			buf->refcount = 0;
			sdp_mmap_buf_detach(buf->mmap);
			buf->owner_ops->put(buf->owner, buf);
		}
	}
	if (refcount != NULL)
		*refcount = before;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_refcount(const struct doca_buf *buf, uint16_t *refcount)
{
	CHECK_ARG(buf);
	CHECK_ARG(refcount);
	*refcount = buf->refcount;
	return DOCA_SUCCESS;
}

/* ---- data placement -------------------------------------------------------------------------- */

doca_error_t doca_buf_get_len(const struct doca_buf *buf, size_t *len)
{
	CHECK_ARG(buf);
	CHECK_ARG(len);
	*len = buf->len;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_head(const struct doca_buf *buf, void **head)
{
	CHECK_ARG(buf);
	CHECK_ARG(head);
	*head = buf->head;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_data_len(const struct doca_buf *buf, size_t *data_len)
{
	CHECK_ARG(buf);
	CHECK_ARG(data_len);
	*data_len = buf->data_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_data(const struct doca_buf *buf, void **data)
{
	CHECK_ARG(buf);
	CHECK_ARG(data);
	*data = buf->data;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_set_data(struct doca_buf *buf, void *data, size_t data_len)
{
	CHECK_BUF(buf);
	CHECK_ARG(data);
	if (!range_inside(buf, data, data_len)) {
		sdp_error("data %p + %zu is not inside the buf [%p, %p + %zu]", data, data_len,
			  buf->head, buf->head, buf->len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	buf->data = data;
	buf->data_len = data_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_set_data_len(struct doca_buf *buf, size_t data_len)
{
	CHECK_BUF(buf);
	if (!range_inside(buf, buf->data, data_len)) {
		sdp_error("data %p + %zu would pass the end of the buf %p + %zu", buf->data,
			  data_len, buf->head, buf->len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	buf->data_len = data_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_reset_data_len(struct doca_buf *buf)
{
	CHECK_BUF(buf);
	buf->data_len = 0;
	return DOCA_SUCCESS;
}

/* ---- lists ----------------------------------------------------------------------------------- */

doca_error_t doca_buf_get_next_in_list(struct doca_buf *buf, struct doca_buf **next_buf)
{
	CHECK_ARG(buf);
	CHECK_ARG(next_buf);
	*next_buf = buf->next;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_last_in_list(struct doca_buf *buf, struct doca_buf **last_buf)
{
	CHECK_ARG(buf);
	CHECK_ARG(last_buf);
	while (buf->next != NULL)
		buf = buf->next;
	*last_buf = buf;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_is_last_in_list(const struct doca_buf *buf, uint8_t *is_last)
{
	CHECK_ARG(buf);
	CHECK_ARG(is_last);
	*is_last = buf->next == NULL;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_is_first_in_list(const struct doca_buf *buf, uint8_t *is_first)
{
	CHECK_ARG(buf);
	CHECK_ARG(is_first);
	*is_first = buf->prev == NULL;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_is_in_list(const struct doca_buf *buf, uint8_t *is_in_list)
{
	CHECK_ARG(buf);
	CHECK_ARG(is_in_list);
	*is_in_list = buf->prev != NULL || buf->next != NULL;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_list_len(const struct doca_buf *buf, uint32_t *num_elements)
{
	uint32_t n = 0;

	CHECK_ARG(buf);
	CHECK_ARG(num_elements);
	if (buf->prev != NULL) {
		sdp_error("buf %p is not the head of its list", (const void *)buf);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	for (; buf != NULL; buf = buf->next)
		n++;
	*num_elements = n;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_chain_list(struct doca_buf *list1, struct doca_buf *list2)
{
	struct doca_buf *last;

	CHECK_BUF(list1);
	CHECK_BUF(list2);
	if (list1 == list2) {
		sdp_error("cannot chain a list to itself");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (list1->prev != NULL || list2->prev != NULL) {
		sdp_error("both bufs must be heads of lists (%s is inside a list)",
			  list1->prev != NULL ? "list1" : "list2");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (list2->refcount != 1) {
		sdp_error("list2 must have a reference count of 1, it has %u", list2->refcount);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	for (last = list1; last->next != NULL; last = last->next)
		;
	last->next = list2;
	list2->prev = last;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_unchain_list(struct doca_buf *list1, struct doca_buf *list2)
{
	struct doca_buf *b;

	CHECK_BUF(list1);
	CHECK_ARG(list2);
	if (list1 == list2) {
		sdp_error("list2 must differ from list1");
		return DOCA_ERROR_INVALID_VALUE;
	}
	for (b = list1->next; b != NULL && b != list2; b = b->next)
		;
	if (b == NULL) {
		sdp_error("list2 %p is not in list1 %p", (void *)list2, (void *)list1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	list2->prev->next = NULL;
	list2->prev = NULL;
	list2->refcount = 1;
	return DOCA_SUCCESS;
}
