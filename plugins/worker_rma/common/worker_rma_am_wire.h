/*
 * worker_rma: the worker-to-worker active-message wire (between the plugin's UCP workers of
 * two domain members; not seen by hosts). One UCP AM (id UROM_RMA_AM_UCP_ID, no user header)
 * is struct urom_rma_am_wire, then hdr_len header bytes, then len payload bytes. The bytes
 * come from another machine's worker: urom_rma_am_wire_parse() is the only reader.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef WORKER_RMA_AM_WIRE_H_
#define WORKER_RMA_AM_WIRE_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "worker_rma.h"

#define UROM_RMA_AM_UCP_ID 13
#define UROM_RMA_AM_MAGIC 0x414d5231u /* "1RMA" */

/* Both ends little endian, the same layout (24 bytes). */
struct urom_rma_am_wire {
	uint32_t magic;
	uint32_t handler;
	uint64_t sender; /* the sending member's domain id */
	uint32_t hdr_len;
	uint32_t len;
};

/*
 * Check length bytes at data as one AM for a receiver whose bound on hdr_len + len is am_max:
 * the magic, hdr_len <= UROM_RMA_AM_HDR_MAX, hdr_len + len <= am_max and the exact total.
 * 1 with *w filled (the header bytes and payload follow the struct in data), else 0.
 */
static inline int urom_rma_am_wire_parse(const void *data, size_t length, size_t am_max,
					 struct urom_rma_am_wire *w)
{
	if (data == NULL || w == NULL || length < sizeof(*w))
		return 0;
	memcpy(w, data, sizeof(*w));
	if (w->magic != UROM_RMA_AM_MAGIC || w->hdr_len > UROM_RMA_AM_HDR_MAX)
		return 0;
	if ((uint64_t)w->hdr_len + w->len > am_max)
		return 0;
	return length - sizeof(*w) == (size_t)w->hdr_len + w->len;
}

#endif /* WORKER_RMA_AM_WIRE_H_ */
