/*
 * softdpu: DOCA buffers.
 *
 * A doca_buf describes a region [head, head + len) of an mmap and, inside it, the data
 * [data, data + data_len). Bufs come from a doca_buf_inventory or a doca_buf_pool and go back
 * when their reference count drops to 0. Bufs chain into lists; only the head of a list carries
 * a reference count (the others stay at 1), and releasing the head releases the whole list.
 *
 * softdpu checks what DOCA leaves undefined: a data range outside [head, head + len] is
 * DOCA_ERROR_INVALID_VALUE. A buf is not locked: use each buf from one thread at a time.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_BUF_H_
#define DOCA_BUF_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;

/*
 * *refcount (may be NULL) gets the count before the call. DOCA_ERROR_NOT_PERMITTED for a buf
 * inside a list (not its head), DOCA_ERROR_TOO_BIG at UINT16_MAX.
 */
DOCA_STABLE
doca_error_t doca_buf_inc_refcount(struct doca_buf *buf, uint16_t *refcount);

/*
 * *refcount (may be NULL) gets the count before the call; at 0 the buf (and every buf chained
 * after it) returns to its inventory or pool. DOCA_ERROR_NOT_PERMITTED for a buf inside a list
 * (not its head), DOCA_ERROR_BAD_STATE when the count is already 0.
 */
DOCA_STABLE
doca_error_t doca_buf_dec_refcount(struct doca_buf *buf, uint16_t *refcount);

DOCA_STABLE
doca_error_t doca_buf_get_refcount(const struct doca_buf *buf, uint16_t *refcount);

DOCA_STABLE
doca_error_t doca_buf_get_len(const struct doca_buf *buf, size_t *len);

DOCA_STABLE
doca_error_t doca_buf_get_head(const struct doca_buf *buf, void **head);

DOCA_STABLE
doca_error_t doca_buf_get_data_len(const struct doca_buf *buf, size_t *data_len);

DOCA_STABLE
doca_error_t doca_buf_get_data(const struct doca_buf *buf, void **data);

/* [data, data + data_len] must lie within [head, head + len]: DOCA_ERROR_INVALID_VALUE otherwise. */
DOCA_STABLE
doca_error_t doca_buf_set_data(struct doca_buf *buf, void *data, size_t data_len);

/* data + data_len must not pass head + len: DOCA_ERROR_INVALID_VALUE otherwise. */
DOCA_STABLE
doca_error_t doca_buf_set_data_len(struct doca_buf *buf, size_t data_len);

/* data_len = 0; data stays where it is. */
DOCA_STABLE
doca_error_t doca_buf_reset_data_len(struct doca_buf *buf);

/* *next_buf = the buf after buf in its list, NULL at the end. */
DOCA_STABLE
doca_error_t doca_buf_get_next_in_list(struct doca_buf *buf, struct doca_buf **next_buf);

DOCA_STABLE
doca_error_t doca_buf_get_last_in_list(struct doca_buf *buf, struct doca_buf **last_buf);

DOCA_STABLE
doca_error_t doca_buf_is_last_in_list(const struct doca_buf *buf, uint8_t *is_last);

DOCA_STABLE
doca_error_t doca_buf_is_first_in_list(const struct doca_buf *buf, uint8_t *is_first);

/* *is_in_list = 1 when buf is chained with at least one other buf. */
DOCA_STABLE
doca_error_t doca_buf_is_in_list(const struct doca_buf *buf, uint8_t *is_in_list);

/* DOCA_ERROR_NOT_PERMITTED unless buf is the head of its list (a lone buf is a list of 1). */
DOCA_STABLE
doca_error_t doca_buf_get_list_len(const struct doca_buf *buf, uint32_t *num_elements);

/*
 * Append list2 to list1. Both must be heads (DOCA_ERROR_NOT_PERMITTED otherwise), list2 with a
 * reference count of 1 (DOCA_ERROR_NOT_PERMITTED otherwise); list1 == list2 is
 * DOCA_ERROR_INVALID_VALUE.
 */
DOCA_STABLE
doca_error_t doca_buf_chain_list(struct doca_buf *list1, struct doca_buf *list2);

/*
 * Cut list1 just before list2, which becomes the head of its own list with a reference count
 * of 1. DOCA_ERROR_INVALID_VALUE when list2 is list1 or not in list1.
 */
DOCA_STABLE
doca_error_t doca_buf_unchain_list(struct doca_buf *list1, struct doca_buf *list2);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_H_ */
