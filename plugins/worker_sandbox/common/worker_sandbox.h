/*
 * worker_sandbox plugin: the messages its host half (host/urom_sandbox.c) and its worker half
 * (dpu/worker_sandbox.c) exchange inside struct urom_worker_cmd / struct urom_worker_notify.
 * The plugin offloads UCX tagged send and receive to the worker: the worker half owns a UCP
 * worker, and domain members reach one another by domain worker id.
 *
 * A command is struct urom_worker_sandbox_cmd followed by its inline bytes:
 *   MEM_MAP   exported_memh_buffer_len bytes: the memory descriptor to import (in softdpu a
 *             softdpu memh descriptor, see docs/plugins.md)
 *   TAG_SEND  count bytes of data when memh_id is 0, nothing otherwise
 *   TAG_RECV  nothing
 * and the command length must be exactly sizeof(struct urom_worker_sandbox_cmd) plus those.
 * A notification is struct urom_worker_notify_sandbox, followed for a TAG_RECV with memh_id 0
 * by the count bytes received (tag_recv.buffer points at them on the host).
 *
 * Pointers and UCX structs travel as they are (LP64, one UCX version on both sides): both
 * halves must be built from the same copy of this file and against the same UCX headers; the
 * host half also refuses a worker half whose urom_plugin_get_version() differs from
 * UROM_WORKER_SANDBOX_VERSION.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef WORKER_SANDBOX_H_
#define WORKER_SANDBOX_H_

#include <stddef.h>
#include <stdint.h>

#include <ucp/api/ucp.h>

/* Version both halves report; a mismatch fails urom_sandbox_init() with UNSUPPORTED_VERSION. */
#define UROM_WORKER_SANDBOX_VERSION 0x01

/* Commands the worker half understands (urom_worker_sandbox_cmd.type). */
enum urom_worker_sandbox_cmd_type {
	UROM_WORKER_CMD_SANDBOX_MEM_MAP = 0,  /* make host memory reachable, get a memh id */
	UROM_WORKER_CMD_SANDBOX_TAG_SEND = 1, /* tagged send to a domain member */
	UROM_WORKER_CMD_SANDBOX_TAG_RECV = 2, /* tagged receive */
};

/* Map host memory: the descriptor follows the command (exported_memh_buffer_len bytes). */
struct urom_worker_sandbox_cmd_mem_map {
	uint64_t context;		 /* echoed in the notification */
	ucp_mem_map_params_t map_params; /* address and length of the memory (when set) */
	size_t exported_memh_buffer_len; /* bytes of the inline descriptor */
};

/* Send count bytes with tag to the domain member whose domain worker id is dest. */
struct urom_worker_sandbox_cmd_tag_send {
	uint64_t context; /* echoed in the notification */
	uint64_t dest;	  /* domain worker id of the receiver */
	uint64_t buffer;  /* host address of the data (memh_id != 0) */
	uint64_t count;	  /* bytes */
	uint64_t tag;
	uint64_t memh_id; /* 0: the data follows the command; else a MEM_MAP's memh id */
};

/* Receive up to count bytes whose tag matches tag under tag_mask. */
struct urom_worker_sandbox_cmd_tag_recv {
	uint64_t context; /* echoed in the notification */
	uint64_t buffer;  /* host address to receive into (memh_id != 0) */
	uint64_t count;	  /* bytes at most */
	uint64_t tag;
	uint64_t tag_mask; /* bits of tag that must match */
	uint64_t memh_id;  /* 0: the data comes back in the notification; else a memh id */
};

/* One command, the plugin_cmd bytes of struct urom_worker_cmd. */
struct urom_worker_sandbox_cmd {
	uint64_t type; /* enum urom_worker_sandbox_cmd_type */
	union {
		struct urom_worker_sandbox_cmd_mem_map mem_map;
		struct urom_worker_sandbox_cmd_tag_send tag_send;
		struct urom_worker_sandbox_cmd_tag_recv tag_recv;
	};
};

/* Notifications the worker half sends (urom_worker_notify_sandbox.type). */
enum urom_worker_sandbox_notify_type {
	UROM_WORKER_NOTIFY_SANDBOX_MEM_MAP = 0,
	UROM_WORKER_NOTIFY_SANDBOX_TAG_SEND = 1,
	UROM_WORKER_NOTIFY_SANDBOX_TAG_RECV = 2,
};

/* MEM_MAP done: the id later TAG_SEND / TAG_RECV commands name the mapping by. */
struct urom_worker_sandbox_notify_mem_map {
	uint64_t context;
	uint64_t memh_id; /* nonzero */
};

/* TAG_SEND done. */
struct urom_worker_sandbox_notify_tag_send {
	uint64_t context;
	ucs_status_t status; /* UCX's status of the send */
};

/* TAG_RECV done. */
struct urom_worker_sandbox_notify_tag_recv {
	uint64_t context;
	void *buffer;	     /* host half: the inline data, NULL when received into host memory */
	uint64_t count;	     /* bytes received */
	uint64_t sender_tag; /* the tag the message was sent with */
	ucs_status_t status; /* UCX's status of the receive */
};

/* One notification, the plugin_notif bytes of struct urom_worker_notify. */
struct urom_worker_notify_sandbox {
	uint64_t type; /* enum urom_worker_sandbox_notify_type */
	union {
		struct urom_worker_sandbox_notify_mem_map mem_map;
		struct urom_worker_sandbox_notify_tag_send tag_send;
		struct urom_worker_sandbox_notify_tag_recv tag_recv;
	};
};

#endif /* WORKER_SANDBOX_H_ */
