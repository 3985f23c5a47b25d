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
 *   DONE:   the sender no longer reads the receiver's send buffer and every write of the
 *           sender into the receiver's receive buffer is complete (flushed).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef WORKER_COLL_WIRE_H_
#define WORKER_COLL_WIRE_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define UROM_COLL_AM_UCP_ID 17
#define UROM_COLL_WIRE_MAGIC 0x4c4f4331u /* "1COL" */

enum urom_coll_wire_kind {
	UROM_COLL_WIRE_ARRIVE = 1,
	UROM_COLL_WIRE_DONE = 2,
};

#define UROM_COLL_WIRE_BAD 0x1u
#define UROM_COLL_WIRE_FLAGS_ALL UROM_COLL_WIRE_BAD

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

/* 1 with *w filled when length bytes at data are one valid message, else 0. */
static inline int urom_coll_wire_parse(const void *data, size_t length, struct urom_coll_wire *w)
{
	if (data == NULL || w == NULL || length != sizeof(*w))
		return 0;
	memcpy(w, data, sizeof(*w));
	if (w->magic != UROM_COLL_WIRE_MAGIC || w->reserved != 0)
		return 0;
	if (w->kind != UROM_COLL_WIRE_ARRIVE && w->kind != UROM_COLL_WIRE_DONE)
		return 0;
	if ((w->flags & ~UROM_COLL_WIRE_FLAGS_ALL) != 0)
		return 0;
	return w->tag != 0 && w->seq != 0;
}

#endif /* WORKER_COLL_WIRE_H_ */
