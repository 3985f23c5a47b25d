/*
 * softdpu internal: intrusive doubly linked list.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_LIST_H_
#define SDP_LIST_H_

#include <stddef.h>

typedef struct sdp_list_link {
	struct sdp_list_link *prev;
	struct sdp_list_link *next;
} sdp_list_link_t;

#define sdp_container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

#define SDP_LIST_HEAD_INIT(name)                                                                   \
	{                                                                                          \
		&(name), &(name)                                                                   \
	}

static inline void sdp_list_head_init(sdp_list_link_t *head)
{
	head->prev = head;
	head->next = head;
}

static inline int sdp_list_is_empty(const sdp_list_link_t *head)
{
	return head->next == head;
}

static inline void sdp_list_insert_between(sdp_list_link_t *elem, sdp_list_link_t *prev,
					   sdp_list_link_t *next)
{
	elem->prev = prev;
	elem->next = next;
	prev->next = elem;
	next->prev = elem;
}

static inline void sdp_list_add_tail(sdp_list_link_t *head, sdp_list_link_t *elem)
{
	sdp_list_insert_between(elem, head->prev, head);
}

static inline void sdp_list_add_head(sdp_list_link_t *head, sdp_list_link_t *elem)
{
	sdp_list_insert_between(elem, head, head->next);
}

static inline void sdp_list_del(sdp_list_link_t *elem)
{
	elem->prev->next = elem->next;
	elem->next->prev = elem->prev;
	elem->prev = elem;
	elem->next = elem;
}

/* Move every element of src to the tail of dst; src becomes empty. */
static inline void sdp_list_splice_tail(sdp_list_link_t *dst, sdp_list_link_t *src)
{
	if (sdp_list_is_empty(src))
		return;
	src->next->prev = dst->prev;
	dst->prev->next = src->next;
	src->prev->next = dst;
	dst->prev = src->prev;
	sdp_list_head_init(src);
}

static inline size_t sdp_list_length(const sdp_list_link_t *head)
{
	size_t n = 0;
	for (const sdp_list_link_t *l = head->next; l != head; l = l->next)
		n++;
	return n;
}

#define sdp_list_for_each(elem, head, member)                                                      \
	for (elem = sdp_container_of((head)->next, __typeof__(*elem), member);                     \
	     &(elem)->member != (head);                                                            \
	     elem = sdp_container_of((elem)->member.next, __typeof__(*elem), member))

#define sdp_list_for_each_safe(elem, tmp, head, member)                                            \
	for (elem = sdp_container_of((head)->next, __typeof__(*elem), member),                     \
	    tmp = sdp_container_of((elem)->member.next, __typeof__(*elem), member);                \
	     &(elem)->member != (head);                                                            \
	     elem = tmp, tmp = sdp_container_of((tmp)->member.next, __typeof__(*tmp), member))

#endif /* SDP_LIST_H_ */
