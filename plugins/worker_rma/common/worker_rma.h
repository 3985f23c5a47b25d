/*
 * worker_rma plugin: the messages its host half (host/urom_rma.c) and its worker half
 * (dpu/worker_rma.c) exchange inside struct urom_worker_cmd / struct urom_worker_notify.
 * The plugin offloads one-sided operations to the worker: PUT and GET between a buffer of the
 * commanding host and any domain member's exported memory, atomics on 32- and 64-bit words of
 * a member's memory, FENCE and FLUSH. docs/plugins.md ("worker_rma") has the semantics.
 *
 * A command is exactly one struct urom_worker_rma_cmd (cmd.len must equal its size; nothing
 * follows it). Every command is answered by exactly one notification, exactly one
 * struct urom_worker_notify_rma, whose status is the command's outcome (the same value as the
 * urom_worker_notify status).
 *
 * Addresses are host virtual addresses as the owners exported them into the domain
 * (sdp_urom_domain_export_buffer / doca_urom_domain_add_buffer). The commanding host's own
 * buffer is found by the worker the same way, under the host's own domain id (local_id).
 * Both halves must be built from the same copy of this file (LP64); the host half refuses a
 * worker half whose urom_plugin_get_version() differs from UROM_WORKER_RMA_VERSION.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef WORKER_RMA_H_
#define WORKER_RMA_H_

#include <stdint.h>

/* Version both halves report; a mismatch fails urom_rma_init() with UNSUPPORTED_VERSION. */
#define UROM_WORKER_RMA_VERSION 0x02

/* Largest PUT / GET (bytes); 0 and anything larger are INVALID_VALUE. */
#define UROM_RMA_MAX_LEN (1ull << 30)

/* The worker splits a PUT / GET into chunks of this size, UROM_RMA_CHUNKS_INFLIGHT in flight. */
#define UROM_RMA_CHUNK (1u << 20)
#define UROM_RMA_CHUNKS_INFLIGHT 4

/*
 * A PUT / GET during which no chunk moved for this long (a member that stopped answering: a
 * link down, a dead host) fails with DOCA_ERROR_TIME_OUT; the worker closes its endpoint to
 * that owner by force, and later PUT / GET touching that member's segments fail at once with
 * DOCA_ERROR_NOT_CONNECTED until a new domain.
 */
#define UROM_RMA_STALL_MS 30000

/* FLUSH / FENCE destination meaning every destination. */
#define UROM_RMA_DEST_ALL UINT64_MAX

/* Commands (urom_worker_rma_cmd.type); notifications carry the same type. */
enum urom_worker_rma_cmd_type {
	UROM_WORKER_CMD_RMA_PUT = 0,	 /* local buffer -> member memory */
	UROM_WORKER_CMD_RMA_GET = 1,	 /* member memory -> local buffer */
	UROM_WORKER_CMD_RMA_ATOMIC = 2,	 /* one atomic on a member's word */
	UROM_WORKER_CMD_RMA_FENCE = 3,	 /* order what follows after what came before */
	UROM_WORKER_CMD_RMA_FLUSH = 4,	 /* complete everything issued before, remotely */
	UROM_WORKER_CMD_RMA_AM_SEND = 5, /* active message to a member's worker (+ bytes) */
	UROM_WORKER_CMD_RMA_AM_RECV = 6, /* take one active message for this host */
};

/*
 * Active messages. An AM is {handler id, header of 0 .. UROM_RMA_AM_HDR_MAX bytes, payload}.
 * With the message size M (the service's -m, 4096 by default) hdr_len + len is at most
 * M - UROM_RMA_AM_OVERHEAD: the AM_SEND command (24 + 64 + bytes) and the AM_RECV
 * notification (32 + 72 + bytes) then both fit.
 */
#define UROM_RMA_AM_HDR_MAX 64
#define UROM_RMA_AM_OVERHEAD 104
/* AM_RECV handler meaning any handler. */
#define UROM_RMA_AM_ANY UINT64_MAX
/* Arrivals a worker keeps before a receive takes them; beyond, AMs are dropped and counted. */
#define UROM_RMA_AM_QUEUE_MAX 1024
#define UROM_RMA_AM_QUEUE_BYTES (16u << 20)
/* Receives a worker keeps posted; beyond, AM_RECV is answered FULL. */
#define UROM_RMA_AM_RECV_MAX 4096

/* Atomic operations (urom_worker_rma_cmd_atomic.op); the F* ones return the old value. */
enum urom_rma_atomic_op {
	UROM_RMA_ATOMIC_ADD = 0,
	UROM_RMA_ATOMIC_FADD = 1,
	UROM_RMA_ATOMIC_SWAP = 2,  /* fetches: the old value */
	UROM_RMA_ATOMIC_CSWAP = 3, /* fetches: the old value; stores operand if old == compare */
	UROM_RMA_ATOMIC_AND = 4,
	UROM_RMA_ATOMIC_OR = 5,
	UROM_RMA_ATOMIC_XOR = 6,
	UROM_RMA_ATOMIC_FAND = 7,
	UROM_RMA_ATOMIC_FOR = 8,
	UROM_RMA_ATOMIC_FXOR = 9,
	UROM_RMA_ATOMIC_OP_MAX = UROM_RMA_ATOMIC_FXOR,
};

/* PUT and GET: len bytes between local_va (member local_id) and remote_va (member dest). */
struct urom_worker_rma_cmd_xfer {
	uint64_t context;   /* echoed in the notification */
	uint64_t local_id;  /* domain id under which the commanding host exported local_va */
	uint64_t local_va;  /* host address of the local buffer */
	uint64_t dest;	    /* domain id of the target member */
	uint64_t remote_va; /* address in the target's exported memory */
	uint64_t len;	    /* 1 .. UROM_RMA_MAX_LEN */
};

/* ATOMIC on the size-byte word (4 or 8, naturally aligned) at remote_va of member dest. */
struct urom_worker_rma_cmd_atomic {
	uint64_t context;
	uint64_t op;   /* enum urom_rma_atomic_op */
	uint64_t size; /* 4 or 8 */
	uint64_t dest;
	uint64_t remote_va;
	uint64_t operand; /* low 32 bits for size 4 */
	uint64_t compare; /* CSWAP only */
};

/* FENCE and FLUSH: dest is a member's domain id or UROM_RMA_DEST_ALL. */
struct urom_worker_rma_cmd_sync {
	uint64_t context;
	uint64_t dest;
};

/* AM_SEND: followed in the command by hdr_len header bytes, then len payload bytes. */
struct urom_worker_rma_cmd_am_send {
	uint64_t context;
	uint64_t local_id; /* the sender's domain id, given to the receiver */
	uint64_t dest;	   /* domain id of the receiving member */
	uint64_t handler;  /* 0 .. UINT32_MAX */
	uint64_t hdr_len;  /* 0 .. UROM_RMA_AM_HDR_MAX */
	uint64_t len;	   /* payload bytes */
};

/* AM_RECV: completed by one AM for this worker whose handler is handler (or any). */
struct urom_worker_rma_cmd_am_recv {
	uint64_t context;
	uint64_t handler; /* a handler id or UROM_RMA_AM_ANY */
};

/* One command, the plugin_cmd bytes of struct urom_worker_cmd. */
struct urom_worker_rma_cmd {
	uint64_t type; /* enum urom_worker_rma_cmd_type */
	union {
		struct urom_worker_rma_cmd_xfer xfer; /* PUT, GET */
		struct urom_worker_rma_cmd_atomic atomic;
		struct urom_worker_rma_cmd_sync sync; /* FENCE, FLUSH */
		struct urom_worker_rma_cmd_am_send am_send;
		struct urom_worker_rma_cmd_am_recv am_recv;
	};
};

/* One notification, the plugin_notif bytes of struct urom_worker_notify. */
struct urom_worker_notify_rma {
	uint64_t type;	  /* the command's type (UINT64_MAX when the command was unreadable) */
	uint64_t context; /* the command's context (0 when unreadable) */
	int64_t status;	  /* doca_error_t outcome */
	uint64_t value;	  /* ATOMIC: the fetched old value (fetching ops), else 0 */
	uint64_t len;	  /* PUT / GET: bytes transferred (len on success, else 0) */
};

/*
 * The AM_RECV notification: base.len is the payload length; hdr_len header bytes then len
 * payload bytes follow. base.status FULL (no message) reports AMs dropped since the last
 * receive (dropped), queue bounds exceeded or malformed AMs from the peer worker.
 */
struct urom_worker_notify_rma_am {
	struct urom_worker_notify_rma base;
	uint64_t handler;
	uint64_t sender; /* the sending member's domain id */
	uint64_t hdr_len;
	uint64_t dropped;
};

#endif /* WORKER_RMA_H_ */
