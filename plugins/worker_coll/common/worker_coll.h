/*
 * worker_coll plugin: the messages its host half (host/urom_coll.c) and its worker half
 * (dpu/worker_coll.c) exchange inside struct urom_worker_cmd / struct urom_worker_notify.
 * The worker runs collectives over a team (the whole domain, members 0 .. size-1 by domain
 * id) and moves the data itself with RMA between the members' exported host buffers.
 * docs/plugins.md ("worker_coll") has the semantics, the memory layout and the algorithm.
 *
 * A command is exactly one struct urom_worker_coll_cmd (cmd.len must equal its size); it is
 * answered by exactly one struct urom_worker_notify_coll whose status is the outcome.
 * Both halves must be built from the same copy of this file (LP64); the host half refuses a
 * worker half whose urom_plugin_get_version() differs from UROM_WORKER_COLL_VERSION.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef WORKER_COLL_H_
#define WORKER_COLL_H_

#include <stdint.h>

#define UROM_WORKER_COLL_VERSION 0x01

/* Most members in a team. */
#define UROM_COLL_MAX_MEMBERS 64

/*
 * Control area: the first UROM_COLL_CTRL_LEN bytes of every member's first exported domain
 * segment (segment 0) belong to the plugin: one struct urom_coll_slot per member. The host
 * zeroes it before the domain starts and never touches it afterwards; send and receive
 * buffers must lie after it.
 */
#define UROM_COLL_CTRL_LEN (UROM_COLL_MAX_MEMBERS * 16u)

/* Largest send or receive buffer of one collective (bytes). */
#define UROM_COLL_MAX_LEN (256ull << 20)

/* Bound on each wait for the other members (ms); past it the command is TIME_OUT. */
#define UROM_COLL_WAIT_MS 30000

/* What member j wrote into slot j of every member's control area. */
struct urom_coll_slot {
	uint64_t
		sig; /* signature of member j's current collective (type, dtype, op, count, root) */
	uint64_t phase; /* 2 * seq - 1: arrived at collective seq; 2 * seq: done reading */
};

enum urom_worker_coll_cmd_type {
	UROM_WORKER_CMD_COLL_BARRIER = 0,
	UROM_WORKER_CMD_COLL_ALLREDUCE = 1,
	UROM_WORKER_CMD_COLL_ALLTOALL = 2,
	UROM_WORKER_CMD_COLL_ALLGATHER = 3,
	UROM_WORKER_CMD_COLL_BCAST = 4,
	UROM_WORKER_CMD_COLL_MAX = UROM_WORKER_CMD_COLL_BCAST,
};

enum urom_coll_dtype {
	UROM_COLL_INT32 = 0,
	UROM_COLL_INT64 = 1,
	UROM_COLL_UINT32 = 2,
	UROM_COLL_UINT64 = 3,
	UROM_COLL_FLOAT = 4,
	UROM_COLL_DOUBLE = 5,
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

/*
 * One collective. sbuf_va / rbuf_va are host addresses inside the commanding member's
 * segment 0; every member must pass them at the same offsets from its segment 0's start
 * (symmetric layout): the worker finds peer buffers at peer base + the same offset.
 *   BARRIER:   no buffers (count 0).
 *   ALLREDUCE: count elements of dtype in sbuf, reduced by op in member order into rbuf.
 *   ALLTOALL:  count elements per member: block j of sbuf goes to member j, block j of rbuf
 *              comes from member j (size * count elements each buffer).
 *   ALLGATHER: count elements in sbuf; block j of rbuf (size * count) is member j's sbuf.
 *   BCAST:     count elements of root's sbuf into every member's rbuf (root's too).
 * sbuf and rbuf may be the same (in place) or overlap: rbuf is written only after every
 * member has finished reading.
 */
struct urom_worker_coll_cmd {
	uint64_t type;	  /* enum urom_worker_coll_cmd_type */
	uint64_t context; /* echoed in the notification */
	uint64_t rank;	  /* the commanding member's domain id */
	uint64_t size;	  /* team size: members 0 .. size-1 */
	uint64_t sbuf_va;
	uint64_t rbuf_va;
	uint64_t count;
	uint64_t dtype; /* enum urom_coll_dtype */
	uint64_t op;	/* enum urom_coll_op (ALLREDUCE) */
	uint64_t root;	/* BCAST */
};

struct urom_worker_notify_coll {
	uint64_t type;	  /* the command's type (UINT64_MAX when unreadable) */
	uint64_t context; /* the command's context (0 when unreadable) */
	int64_t status;	  /* doca_error_t outcome */
	uint64_t seq;	  /* the team sequence number it ran as (0 when refused locally) */
};

#endif /* WORKER_COLL_H_ */
