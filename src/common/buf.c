/*
 * DOCA buffers: data placement, reference counts and lists. Inventories and pools own the
 * descriptors (sdp_buf_owner_ops); this file moves them between states.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <string.h>

#include "doca_buf.h"
#include "sdp_buf.h"
#include "sdp_check.h"
#include "sdp_log.h"

SDP_LOG_COMPONENT("buf");

/* A buf handed to the API must be out of its owner (refcount > 0): INVALID_VALUE, BAD_STATE. */
static doca_error_t check_buf(const struct doca_buf *buf, const char *name, const char *func)
{
	doca_error_t status = sdp_check_arg(buf, name, func);

	if (status == DOCA_SUCCESS && buf->refcount == 0) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func, "buf %p was released (reference count 0)",
			   (const void *)buf);
		status = DOCA_ERROR_BAD_STATE;
	}
	return status;
}

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
	doca_error_t status;

	if ((status = check_buf(buf, "buf", __func__)) != DOCA_SUCCESS)
		return status;
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
	doca_error_t status;
	struct doca_buf *next;
	uint16_t before;

	if ((status = check_buf(buf, "buf", __func__)) != DOCA_SUCCESS)
		return status;
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
	doca_error_t status;

	if ((status = sdp_check_arg(buf, "buf", __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(refcount, "refcount", __func__)) != DOCA_SUCCESS)
		return status;
	*refcount = buf->refcount;
	return DOCA_SUCCESS;
}

/* ---- data placement -------------------------------------------------------------------------- */

doca_error_t doca_buf_get_len(const struct doca_buf *buf, size_t *len)
{
	doca_error_t status;

	if ((status = sdp_check_arg(buf, "buf", __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(len, "len", __func__)) != DOCA_SUCCESS)
		return status;
	*len = buf->len;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_head(const struct doca_buf *buf, void **head)
{
	doca_error_t status;

	if ((status = sdp_check_arg(buf, "buf", __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(head, "head", __func__)) != DOCA_SUCCESS)
		return status;
	*head = buf->head;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_data_len(const struct doca_buf *buf, size_t *data_len)
{
	doca_error_t status;

	if ((status = sdp_check_arg(buf, "buf", __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(data_len, "data_len", __func__)) != DOCA_SUCCESS)
		return status;
	*data_len = buf->data_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_data(const struct doca_buf *buf, void **data)
{
	doca_error_t status;

	if ((status = sdp_check_arg(buf, "buf", __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(data, "data", __func__)) != DOCA_SUCCESS)
		return status;
	*data = buf->data;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_set_data(struct doca_buf *buf, void *data, size_t data_len)
{
	doca_error_t status;

	if ((status = check_buf(buf, "buf", __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(data, "data", __func__)) != DOCA_SUCCESS)
		return status;
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
	doca_error_t status;

	if ((status = check_buf(buf, "buf", __func__)) != DOCA_SUCCESS)
		return status;
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
	doca_error_t status;

	if ((status = check_buf(buf, "buf", __func__)) != DOCA_SUCCESS)
		return status;
	buf->data_len = 0;
	return DOCA_SUCCESS;
}

/* ---- lists ----------------------------------------------------------------------------------- */

doca_error_t doca_buf_get_next_in_list(struct doca_buf *buf, struct doca_buf **next_buf)
{
	doca_error_t status;

	if ((status = sdp_check_arg(buf, "buf", __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(next_buf, "next_buf", __func__)) != DOCA_SUCCESS)
		return status;
	*next_buf = buf->next;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_last_in_list(struct doca_buf *buf, struct doca_buf **last_buf)
{
	doca_error_t status;

	if ((status = sdp_check_arg(buf, "buf", __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(last_buf, "last_buf", __func__)) != DOCA_SUCCESS)
		return status;
	while (buf->next != NULL)
		buf = buf->next;
	*last_buf = buf;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_is_last_in_list(const struct doca_buf *buf, uint8_t *is_last)
{
	doca_error_t status;

	if ((status = sdp_check_arg(buf, "buf", __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(is_last, "is_last", __func__)) != DOCA_SUCCESS)
		return status;
	*is_last = buf->next == NULL;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_is_first_in_list(const struct doca_buf *buf, uint8_t *is_first)
{
	doca_error_t status;

	if ((status = sdp_check_arg(buf, "buf", __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(is_first, "is_first", __func__)) != DOCA_SUCCESS)
		return status;
	*is_first = buf->prev == NULL;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_is_in_list(const struct doca_buf *buf, uint8_t *is_in_list)
{
	doca_error_t status;

	if ((status = sdp_check_arg(buf, "buf", __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(is_in_list, "is_in_list", __func__)) != DOCA_SUCCESS)
		return status;
	*is_in_list = buf->prev != NULL || buf->next != NULL;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_list_len(const struct doca_buf *buf, uint32_t *num_elements)
{
	doca_error_t status;
	uint32_t n = 0;

	if ((status = sdp_check_arg(buf, "buf", __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(num_elements, "num_elements", __func__)) != DOCA_SUCCESS)
		return status;
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
	doca_error_t status;
	struct doca_buf *last;

	if ((status = check_buf(list1, "list1", __func__)) != DOCA_SUCCESS ||
	    (status = check_buf(list2, "list2", __func__)) != DOCA_SUCCESS)
		return status;
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
	doca_error_t status;
	struct doca_buf *b;

	if ((status = check_buf(list1, "list1", __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(list2, "list2", __func__)) != DOCA_SUCCESS)
		return status;
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
