/*
 * worker_coll: the worker-to-worker wire (between the plugin UCP workers of two team members;
 * never seen by hosts). One UCP active message (id UROM_COLL_AM_UCP_ID, no user header, eager)
 * is exactly one struct urom_coll_wire. The bytes come from another machine's worker:
 * urom_coll_wire_parse() is the only reader, and the values it lets through are still checked
 * where they are used (member ranges against the imported segments, sequence numbers against
 * the team's window).
 *   ARRIVE: the sender started collective seq of team tag; sig identifies the collective
 *           (type, dtype, op, root, count) and team_hash the member list; its buffers are sva /
 *           rva; voff / vlen are the sender's block for the receiver (ALLTOALLV), in bytes.
 *           flags BAD: the sender refused the collective locally (every member fails it).
 *           flags SMEMH / RMEMH: the send / receive buffer is not in a domain segment but in
 *           memory the sender's host registered for this collective: its softdpu memh
 *           follows (see "Trailer" below); the receiver imports it as that member's memory
 *           (sdp_plugin_mem_import_member: only the member's own process may be its owner).
 *   DONE:   the sender no longer reads the receiver's send buffer and every write of the
 *           sender into the receiver's receive buffer is complete (flushed).
 * Trailer: an ARRIVE with SMEMH or RMEMH is the 88-byte struct followed by struct
 * urom_coll_wire_memh (two uint32_t lengths, the one of an absent memh 0, the one of a present
 * memh 1 .. UROM_COLL_MEMH_MAX), then the send memh's bytes, then the receive memh's; the
 * message is exactly that long. Every other message is the 88 bytes alone.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef WORKER_COLL_WIRE_H_
#define WORKER_COLL_WIRE_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "worker_coll.h" /* UROM_COLL_MEMH_MAX */

#define UROM_COLL_AM_UCP_ID 17
#define UROM_COLL_WIRE_MAGIC 0x4c4f4331u /* "1COL" */

enum urom_coll_wire_kind {
	UROM_COLL_WIRE_ARRIVE = 1,
	UROM_COLL_WIRE_DONE = 2,
};

#define UROM_COLL_WIRE_BAD 0x1u
#define UROM_COLL_WIRE_SMEMH 0x2u
#define UROM_COLL_WIRE_RMEMH 0x4u
#define UROM_COLL_WIRE_FLAGS_ALL (UROM_COLL_WIRE_BAD | UROM_COLL_WIRE_SMEMH | UROM_COLL_WIRE_RMEMH)

/* Both ends little endian, the same layout (88 bytes). */
struct urom_coll_wire {
	uint32_t magic;
	uint16_t kind;
	uint16_t flags;
	uint64_t tag;	 /* the team */
	uint64_t seq;	 /* the collective's number in the team, from 1 */
	uint64_t sender; /* the sender's domain id */
	uint64_t sig;
	uint64_t team_hash;
	uint64_t sva, rva;
	uint64_t voff, vlen;
	uint64_t reserved; /* 0 */
};

/* The trailer's head (little endian, 8 bytes). */
struct urom_coll_wire_memh {
	uint32_t slen, rlen;
};

/*
 * 1 when length bytes at data are one valid message, else 0: *w gets the 88 bytes and, when
 * m is not NULL, *m the memh lengths (0 for an absent one) with *s / *r pointing at their bytes
 * inside data (NULL when absent). m may be NULL only when the caller refuses memh messages
 * itself: the lengths are checked either way.
 */
static inline int urom_coll_wire_parse(const void *data, size_t length, struct urom_coll_wire *w,
				       struct urom_coll_wire_memh *m, const uint8_t **s,
				       const uint8_t **r)
{
	struct urom_coll_wire_memh h = {0, 0};
	const uint8_t *p = (const uint8_t *)data;

	if (data == NULL || w == NULL || length < sizeof(*w))
		return 0;
	memcpy(w, data, sizeof(*w));
	if (w->magic != UROM_COLL_WIRE_MAGIC || w->reserved != 0)
		return 0;
	if (w->kind != UROM_COLL_WIRE_ARRIVE && w->kind != UROM_COLL_WIRE_DONE)
		return 0;
	if ((w->flags & ~UROM_COLL_WIRE_FLAGS_ALL) != 0 || w->tag == 0 || w->seq == 0)
		return 0;
	if (w->flags & (UROM_COLL_WIRE_SMEMH | UROM_COLL_WIRE_RMEMH)) {
		if (w->kind != UROM_COLL_WIRE_ARRIVE || (w->flags & UROM_COLL_WIRE_BAD) ||
		    length < sizeof(*w) + sizeof(h))
			return 0;
		memcpy(&h, p + sizeof(*w), sizeof(h));
		if ((h.slen != 0) != ((w->flags & UROM_COLL_WIRE_SMEMH) != 0) ||
		    (h.rlen != 0) != ((w->flags & UROM_COLL_WIRE_RMEMH) != 0) ||
		    h.slen > UROM_COLL_MEMH_MAX || h.rlen > UROM_COLL_MEMH_MAX ||
		    length != sizeof(*w) + sizeof(h) + h.slen + h.rlen)
			return 0;
	} else if (length != sizeof(*w)) {
		return 0;
	}
	if (m != NULL) {
		*m = h;
		if (s != NULL)
			*s = h.slen != 0 ? p + sizeof(*w) + sizeof(h) : NULL;
		if (r != NULL)
			*r = h.rlen != 0 ? p + sizeof(*w) + sizeof(h) + h.slen : NULL;
	}
	return 1;
}

#endif /* WORKER_COLL_WIRE_H_ */
