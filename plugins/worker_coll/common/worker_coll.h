/*
 * worker_coll plugin: the messages its host half (host/urom_coll.c) and its worker half
 * (dpu/worker_coll.c) exchange inside struct urom_worker_cmd / struct urom_worker_notify.
 *
 * The worker runs non-blocking collectives over teams (subsets of the domain, named by a tag
 * the members agree on) and moves the data itself: GETs from the members' exported host
 * buffers into its own memory, reductions there, PUTs into the members' exported receive
 * buffers. The workers of a team meet through small active messages between their plugin
 * UCP workers (common/worker_coll_wire.h); the hosts' CPUs take no part. docs/plugins.md
 * ("worker_coll") has the semantics and the algorithms.
 *
 * A command is one struct urom_worker_coll_cmd followed by cmd.ntrail uint64_t values (the
 * member list of TEAM_CREATE, the four arrays of ALLTOALLV), then cmd.smemh_len bytes of the
 * send buffer's memh and cmd.rmemh_len bytes of the receive buffer's (collectives only; see
 * "Buffers" below); the command's length must be exactly that.
 * It is answered by exactly one struct urom_worker_notify_coll whose status is the outcome.
 * Both halves must be built from the same copy of this file (LP64); the host half refuses a
 * worker half whose urom_plugin_get_version() differs from UROM_WORKER_COLL_VERSION.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef WORKER_COLL_H_
#define WORKER_COLL_H_

#include <stdint.h>

#define UROM_WORKER_COLL_VERSION 0x03

/* Most members in a team, most teams on one worker. */
#define UROM_COLL_MAX_MEMBERS 64
#define UROM_COLL_MAX_TEAMS 64

/* Largest send or receive buffer of one collective (bytes). */
#define UROM_COLL_MAX_LEN (256ull << 20)

/* Longest memh one buffer of a collective may come with (command and wire). */
#define UROM_COLL_MEMH_MAX 1024u

/* Default bound on each wait for the other members (ms); past it the collective is TIME_OUT. */
#define UROM_COLL_WAIT_MS 30000

enum urom_worker_coll_cmd_type {
	UROM_WORKER_CMD_COLL_TEAM_CREATE = 0,
	UROM_WORKER_CMD_COLL_TEAM_DESTROY = 1,
	UROM_WORKER_CMD_COLL_BARRIER = 2,
	UROM_WORKER_CMD_COLL_BCAST = 3,
	UROM_WORKER_CMD_COLL_REDUCE = 4,
	UROM_WORKER_CMD_COLL_ALLREDUCE = 5,
	UROM_WORKER_CMD_COLL_ALLGATHER = 6,
	UROM_WORKER_CMD_COLL_ALLTOALL = 7,
	UROM_WORKER_CMD_COLL_ALLTOALLV = 8,
	UROM_WORKER_CMD_COLL_REDUCE_SCATTER = 9,
	UROM_WORKER_CMD_COLL_MAX = UROM_WORKER_CMD_COLL_REDUCE_SCATTER,
};

enum urom_coll_dtype {
	UROM_COLL_INT8 = 0,
	UROM_COLL_INT16 = 1,
	UROM_COLL_INT32 = 2,
	UROM_COLL_INT64 = 3,
	UROM_COLL_UINT8 = 4,
	UROM_COLL_UINT16 = 5,
	UROM_COLL_UINT32 = 6,
	UROM_COLL_UINT64 = 7,
	UROM_COLL_FLOAT = 8,
	UROM_COLL_DOUBLE = 9,
	UROM_COLL_DTYPE_MAX = UROM_COLL_DOUBLE,
};

enum urom_coll_op {
	UROM_COLL_SUM = 0,
	UROM_COLL_PROD = 1,
	UROM_COLL_MIN = 2,
	UROM_COLL_MAX = 3,
	UROM_COLL_BAND = 4, /* integers only */
	UROM_COLL_BOR = 5,  /* integers only */
	UROM_COLL_BXOR = 6, /* integers only */
	UROM_COLL_OP_MAX = UROM_COLL_BXOR,
};

/* cmd.flags */
#define UROM_COLL_FLAG_IN_PLACE 0x1ull /* the input is in rbuf (see the layouts below) */

/*
 * One command. Buffers: host addresses inside segments this member exported to the domain
 * (any segment, any offset: members need not use the same layout), or inside memory the host
 * exported for the collective with sdp_urom_mem_export() and whose memh comes with the command
 * (smemh_len / rmemh_len bytes, at most UROM_COLL_MEMH_MAX each; the host may keep using one
 * registration for many collectives: the workers cache what they imported, by its bytes). The
 * worker hands such a memh to the other members with its ARRIVE; each member's worker accepts
 * it only when its owner is that member's process (the one that exported its domain segments). Counts are in
 * elements of dtype; rank / root / indices are positions in the team (0 .. size-1).
 *   TEAM_CREATE:  team = the new team's tag (nonzero, unique on this worker); ntrail = size;
 *                 the trailer lists the members' domain ids in team order, this member's
 *                 (my_id) among them.
 *   TEAM_DESTROY: team = the tag (IN_USE while a collective of it runs).
 *   BARRIER:      no buffers.
 *   BCAST:        count elements of root's sbuf into every member's rbuf (the root's rbuf too
 *                 unless it is its sbuf; sbuf is unused off the root).
 *   REDUCE:       count elements reduced by op in team order into root's rbuf (rbuf is unused
 *                 off the root). IN_PLACE at the root: its input is in rbuf.
 *   ALLREDUCE:    as REDUCE, into every member's rbuf. IN_PLACE: the input is in rbuf.
 *   ALLGATHER:    count elements in sbuf; block j of rbuf (size * count) is member j's sbuf.
 *                 IN_PLACE: this member's block is already at block rank of rbuf.
 *   ALLTOALL:     count elements per member: block j of sbuf goes to member j, block j of
 *                 rbuf comes from member j. IN_PLACE: the send blocks are in rbuf.
 *   ALLTOALLV:    ntrail = 4 * size: scounts[size], sdispls[size], rcounts[size],
 *                 rdispls[size] (elements); count unused. IN_PLACE: the send blocks are in
 *                 rbuf at sdispls.
 *   REDUCE_SCATTER: sbuf holds size * count elements; block j, reduced over the members, goes
 *                 to member j's rbuf (count elements). IN_PLACE: the input is in rbuf, the
 *                 result lands at its start.
 * Without IN_PLACE, sbuf and rbuf must not overlap. Reductions run in team order
 * (0, 1, ..., size-1), so floating-point results are the same on every member.
 */
struct urom_worker_coll_cmd {
	uint64_t type;	  /* enum urom_worker_coll_cmd_type */
	uint64_t context; /* echoed in the notification */
	uint64_t team;	  /* the team's tag */
	uint64_t my_id;	  /* TEAM_CREATE: the commanding member's domain id */
	uint64_t sbuf_va;
	uint64_t rbuf_va;
	uint64_t count;
	uint64_t dtype; /* enum urom_coll_dtype */
	uint64_t op;	/* enum urom_coll_op */
	uint64_t root;
	uint64_t flags;	    /* UROM_COLL_FLAG_* */
	uint64_t ntrail;    /* uint64_t values after the struct */
	uint64_t smemh_len; /* bytes of the send buffer's memh after them (0: a domain segment) */
	uint64_t rmemh_len; /* bytes of the receive buffer's memh after those (0: likewise) */
};

struct urom_worker_notify_coll {
	uint64_t type;	  /* the command's type (UINT64_MAX when unreadable) */
	uint64_t context; /* the command's context (0 when unreadable) */
	int64_t status;	  /* doca_error_t outcome */
	uint64_t seq;	  /* the team sequence number it ran as (0 when refused locally) */
};

#endif /* WORKER_COLL_H_ */
