/*
 * worker_rdmo plugin (Remote Direct Memory Operations): the messages shared by its host half
 * (host/worker_rdmo.c), its worker half (dpu/worker_rdmo.c) and the initiators that send it
 * operations.
 *
 * Two planes:
 *
 * - Commands (control plane): struct urom_worker_rdmo_cmd in the plugin_cmd bytes of a UROM
 *   command, answered by one struct urom_worker_notify_rdmo. A command or notification that
 *   carries variable data (a UCP worker address, a packed remote key) is the fixed struct
 *   followed by that data ("inline"); its pointer field is meaningless on the wire and each
 *   side points it at the inline copy it received. The payload length is then exactly
 *   sizeof(struct) + the inline lengths.
 *
 * - Operations (data plane): UCX active messages with id UROM_RDMO_AM_ID that an initiator
 *   sends straight to the plugin's UCP worker. The AM header is struct urom_rdmo_hdr followed
 *   at once by the operation's own header; the AM data is the operation's payload. Answers
 *   come back as active messages with the same id on the initiator's worker: struct
 *   urom_rdmo_rsp_hdr followed by the response's header. See docs/plugins.md, "worker_rdmo".
 *
 * Layout: LP64, host byte order, no padding except where noted. Both halves must be built from
 * the same copy of this file; the host half refuses a worker half whose version differs.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef UROM_RDMO_H_
#define UROM_RDMO_H_

#include <stdint.h>

/* Version both halves report; a mismatch fails urom_rdmo_init() with UNSUPPORTED_VERSION. */
#define UROM_WORKER_RDMO_VERSION 0x01

/* ---- commands ------------------------------------------------------------------------------ */

/* Commands the worker half understands (urom_worker_rdmo_cmd.type). */
enum urom_worker_rdmo_cmd_type {
	UROM_WORKER_CMD_RDMO_CLIENT_INIT = 0, /* become a client: the worker reaches our memory */
	UROM_WORKER_CMD_RDMO_RQ_CREATE = 1,   /* accept operations from one initiator */
	UROM_WORKER_CMD_RDMO_RQ_DESTROY = 2,  /* stop accepting them */
	UROM_WORKER_CMD_RDMO_MR_REG = 3,      /* expose a range of our memory to operations */
	UROM_WORKER_CMD_RDMO_MR_DEREG = 4,    /* withdraw it */
};

/* CLIENT_INIT: the client's id and its UCP worker address (addr_len bytes inline). */
struct urom_worker_rdmo_cmd_client_init {
	uint64_t id; /* client id; operations name it in urom_rdmo_hdr.id */
	void *addr;
	uint64_t addr_len;
};

/* RQ_CREATE: the initiator's UCP worker address (addr_len bytes inline). */
struct urom_worker_rdmo_cmd_rq_create {
	void *addr;
	uint64_t addr_len;
};

/* RQ_DESTROY: the id RQ_CREATE returned. */
struct urom_worker_rdmo_cmd_rq_destroy {
	uint64_t rq_id;
};

/*
 * MR_REG: [va, va + len) of the client's memory, the packed UCP remote key that covers it
 * (packed_rkey_len bytes inline), then a packed memory handle (packed_memh_len bytes inline,
 * may be 0: softdpu has no exported memory handles and ignores these bytes).
 */
struct urom_worker_rdmo_cmd_mr_reg {
	uint64_t va;
	uint64_t len;
	void *packed_rkey;
	uint64_t packed_rkey_len;
	void *packed_memh;
	uint64_t packed_memh_len;
};

/* MR_DEREG: the rkey id MR_REG returned. */
struct urom_worker_rdmo_cmd_mr_dereg {
	uint64_t rkey;
};

/* One command, the plugin_cmd bytes of struct urom_worker_cmd (56 bytes, then inline data). */
struct urom_worker_rdmo_cmd {
	uint64_t type; /* enum urom_worker_rdmo_cmd_type */
	union {
		struct urom_worker_rdmo_cmd_client_init client_init;
		struct urom_worker_rdmo_cmd_rq_create rq_create;
		struct urom_worker_rdmo_cmd_rq_destroy rq_destroy;
		struct urom_worker_rdmo_cmd_mr_reg mr_reg;
		struct urom_worker_rdmo_cmd_mr_dereg mr_dereg;
	};
};

/* ---- notifications ------------------------------------------------------------------------- */

/* Notifications (urom_worker_notify_rdmo.type): the same value as the command they answer. */
enum urom_worker_rdmo_notify_type {
	UROM_WORKER_NOTIFY_RDMO_CLIENT_INIT = 0,
	UROM_WORKER_NOTIFY_RDMO_RQ_CREATE = 1,
	UROM_WORKER_NOTIFY_RDMO_RQ_DESTROY = 2,
	UROM_WORKER_NOTIFY_RDMO_MR_REG = 3,
	UROM_WORKER_NOTIFY_RDMO_MR_DEREG = 4,
};

/* CLIENT_INIT: the plugin's UCP worker address, for initiators (addr_len bytes inline). */
struct urom_worker_rdmo_notify_client_init {
	void *addr;
	uint64_t addr_len;
};

struct urom_worker_rdmo_notify_rq_create {
	uint64_t rq_id;
};

struct urom_worker_rdmo_notify_rq_destroy {
	uint64_t rq_id;
};

/* MR_REG: the rkey id operations name (ptr_rkey, data_rkey, scatter entries' rkey). */
struct urom_worker_rdmo_notify_mr_reg {
	uint64_t rkey;
};

struct urom_worker_rdmo_notify_mr_dereg {
	uint64_t rkey;
};

/* One notification, the plugin_notif bytes of struct urom_worker_notify (24 bytes + inline). */
struct urom_worker_notify_rdmo {
	uint64_t type; /* enum urom_worker_rdmo_notify_type */
	union {
		struct urom_worker_rdmo_notify_client_init client_init;
		struct urom_worker_rdmo_notify_rq_create rq_create;
		struct urom_worker_rdmo_notify_rq_destroy rq_destroy;
		struct urom_worker_rdmo_notify_mr_reg mr_reg;
		struct urom_worker_rdmo_notify_mr_dereg mr_dereg;
	};
};

/* ---- operations (data plane) ---------------------------------------------------------------- */

/* UCX active message id of operations (to the plugin) and of their responses (to initiators). */
#define UROM_RDMO_AM_ID 0

/* Longest AM header an operation may carry (urom_rdmo_hdr + the operation's header). */
#define UROM_RDMO_HDR_LEN_MAX 64

/* urom_rdmo_hdr.flags: start this operation only once every earlier one has completed at the
 * target (its bytes are in the target's memory). */
#define UROM_RDMO_REQ_FLAG_FENCE (1 << 0)

/* Header every operation starts with (16 bytes). */
struct urom_rdmo_hdr {
	uint64_t id;	/* client id (CLIENT_INIT) whose memory the operation writes */
	uint32_t op_id; /* enum urom_rdmo_op_id */
	uint32_t flags; /* UROM_RDMO_REQ_FLAG_* */
};

enum urom_rdmo_op_id {
	UROM_RDMO_OP_FLUSH = 0,	  /* answer once every earlier operation completed at the target */
	UROM_RDMO_OP_APPEND = 1,  /* write the payload at *ptr_addr, advance *ptr_addr past it */
	UROM_RDMO_OP_SCATTER = 2, /* write each entry of the payload at its own address */
};

/* FLUSH (after urom_rdmo_hdr; no payload). */
struct urom_rdmo_flush_hdr {
	uint64_t flush_id; /* echoed in the response */
};

/*
 * APPEND (after urom_rdmo_hdr; payload: the bytes to append). ptr_addr holds a 64-bit address
 * in the client's memory (covered by ptr_rkey); the payload goes there (covered by data_rkey)
 * and the pointer is advanced by the payload's length.
 */
struct urom_rdmo_append_hdr {
	uint64_t ptr_addr;
	uint64_t ptr_rkey;  /* rkey id of MR_REG */
	uint64_t data_rkey; /* rkey id of MR_REG */
};

/* SCATTER (after urom_rdmo_hdr; payload: count entries, see urom_rdmo_scatter_iov). */
struct urom_rdmo_scatter_hdr {
	uint64_t count;
};

/*
 * One scatter entry: 18 bytes exactly (packed: addr at offset 0, rkey at 8, len at 16), followed
 * at once by its len bytes of data; the next entry starts right after them, without alignment.
 * The payload is the entries back to back and nothing else.
 */
struct urom_rdmo_scatter_iov {
	uint64_t addr; /* where in the client's memory */
	uint64_t rkey; /* rkey id of MR_REG covering [addr, addr + len) */
	uint16_t len;  /* data bytes that follow */
} __attribute__((packed));

/* Response header (4 bytes); the response's own header follows at once (offset 4). */
struct urom_rdmo_rsp_hdr {
	uint32_t rsp_id; /* enum urom_rdmo_rsp_id */
};

enum urom_rdmo_rsp_id {
	UROM_RDMO_RSP_FLUSH = 0,
};

/* FLUSH response (at offset 4 of the AM header, so the header is 12 bytes). */
struct urom_rdmo_flush_rsp_hdr {
	uint64_t flush_id;
};

#endif /* UROM_RDMO_H_ */
