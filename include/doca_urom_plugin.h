/*
 * softdpu: DOCA UROM worker plugin interface (doca_urom_plugin.h).
 *
 * What a UROM worker plugin (a shared object loaded by softdpu-urom-worker) sees: the ops
 * table it exports through urom_plugin_get_iface(), the per-plugin worker context, the command
 * and notification descriptors that travel between the host half and the worker half, and the
 * domain lookups. Layouts are DOCA's, member for member (LP64):
 *
 *   struct urom_worker_cmd          24-byte header, then len bytes of plugin command
 *   struct urom_worker_notify       32-byte header, then len bytes of plugin notification
 *   struct urom_worker_cmd_desc     list link + dest id + command (48 bytes + payload)
 *   struct urom_worker_notif_desc   list link + dest id + notification (56 bytes + payload)
 *
 * Ownership: the worker runtime malloc()s each command descriptor and the plugin free()s it
 * once consumed; the plugin malloc()s each notification descriptor and the runtime free()s it
 * after notif_pack. Only the UCX 1.13 API is assumed (see docs/plugins.md).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_UROM_PLUGIN_H_
#define DOCA_UROM_PLUGIN_H_

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <ucs/datastruct/list.h>

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest plugin name, the terminating NUL included. */
#define DOCA_UROM_PLUGIN_NAME_MAX_LEN 48

struct urom_worker_ctx;

/* One plugin a service offers, as doca_urom_service_get_plugins_list() reports it. */
struct doca_urom_service_plugin_info {
	uint64_t id;					 /* single bit; commands carry it as type */
	uint64_t version;				 /* urom_plugin_get_version() */
	char plugin_name[DOCA_UROM_PLUGIN_NAME_MAX_LEN]; /* file name without ".so" */
};

/* A command as it arrives at the worker: header, then the plugin's own bytes. */
struct urom_worker_cmd {
	uint64_t type;	       /* id of the plugin that handles it */
	uint64_t urom_context; /* host task cookie: echo it untouched in the notification */
	uint64_t len;	       /* bytes in plugin_cmd */
	uint8_t plugin_cmd[];
};

#if defined(__clang__)
/* The descriptors end in a struct that ends in a flexible array: intended, it is last. */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wflexible-array-extensions"
#pragma clang diagnostic ignored "-Wgnu-variable-sized-type-not-at-end"
#endif

/* A command handed to urom_plugin_iface.worker_cmd; the plugin free()s it. */
struct urom_worker_cmd_desc {
	ucs_list_link_t entry;		   /* link in the cmd_list given to worker_cmd */
	uint64_t dest_id;		   /* host connection the answer goes back to */
	struct urom_worker_cmd worker_cmd; /* last: the payload follows the descriptor */
};

/* A notification on the wire: header, then the plugin's own bytes. */
struct urom_worker_notify {
	uint64_t type;	       /* plugin id, as in the command */
	uint64_t urom_context; /* copied from the command by the plugin */
	uint64_t len;	       /* bytes in plugin_notif */
	doca_error_t status;   /* outcome of the command */
	uint32_t reserved;     /* keeps plugin_notif 8-byte aligned */
	uint8_t plugin_notif[];
};

/* A notification a plugin appends to the notif_list of progress; the runtime free()s it. */
struct urom_worker_notif_desc {
	ucs_list_link_t entry;			/* link in the notif_list given to progress */
	uint64_t dest_id;			/* copied from the command descriptor */
	struct urom_worker_notify worker_notif; /* last: the payload follows the descriptor */
};

#if defined(__clang__)
#pragma clang diagnostic pop
#endif

/* The operations a plugin exports. The runtime replaces NULL entries with not-supported ones. */
struct urom_plugin_iface {
	DOCA_STRUCT_START; /* DOCA API version the plugin was built against (DOCA_STRUCT_CTOR) */

	/* Set up the plugin's state for one worker; keep it in ctx->plugin_ctx. */
	doca_error_t (*open)(struct urom_worker_ctx *ctx);

	/* Release everything open created. */
	void (*close)(struct urom_worker_ctx *ctx);

	/*
	 * Copy the plugin's address (e.g. its UCP worker address) into addr. When *addr_len is
	 * smaller than needed: store the needed size in *addr_len, return INVALID_VALUE.
	 */
	doca_error_t (*addr)(struct urom_worker_ctx *ctx, void *addr, size_t *addr_len);

	/* Consume the struct urom_worker_cmd_desc entries of cmd_list, free()ing each one. */
	doca_error_t (*worker_cmd)(struct urom_worker_ctx *ctx, ucs_list_link_t *cmd_list);

	/*
	 * Move completed struct urom_worker_notif_desc entries to the tail of notif_list;
	 * DOCA_ERROR_EMPTY when there is none.
	 */
	doca_error_t (*progress)(struct urom_worker_ctx *ctx, ucs_list_link_t *notif_list);

	/* Serialise notif into packed_notif; *packed_notif_len: capacity in, bytes used out. */
	doca_error_t (*notif_pack)(struct urom_worker_notify *notif, size_t *packed_notif_len,
				   void *packed_notif);
};

/* Lookups into the domains the worker belongs to, provided by the runtime. */
struct urom_domain_lookups_iface {
	/* Address (as returned by the member's plugin addr op) of domain member domain_id. */
	doca_error_t (*addr_lookup)(struct urom_worker_ctx *ctx, uint64_t domain_id, void **addr);

	/* Index of the segment of member domain_id that contains va. */
	doca_error_t (*seg_lookup)(struct urom_worker_ctx *ctx, uint64_t domain_id, uint64_t va,
				   int *seg);

	/* Packed memory handle of segment seg of member domain_id. */
	doca_error_t (*memh_lookup)(struct urom_worker_ctx *ctx, uint64_t domain_id, int seg,
				    size_t *len, void **memh);

	/* Packed remote key of segment seg of member domain_id. */
	doca_error_t (*mkey_lookup)(struct urom_worker_ctx *ctx, uint64_t domain_id, int seg,
				    size_t *len, void **rkey);
};

/* What each plugin op receives; one per plugin per worker. */
struct urom_worker_ctx {
	struct urom_plugin_iface iface;		       /* the plugin's ops */
	struct urom_domain_lookups_iface domain_iface; /* filled by the runtime */
	void *plugin_ctx;			       /* the plugin's own state */
};

/*
 * The four lookups below forward to the runtime's table. They return DOCA_SUCCESS,
 * DOCA_ERROR_INVALID_VALUE for bad input, DOCA_ERROR_NOT_FOUND for an unknown domain id,
 * segment, memory handle or key.
 */
static inline doca_error_t doca_urom_worker_domain_addr_lookup(struct urom_worker_ctx *ctx,
							       uint64_t domain_id, void **addr)
{
	return ctx->domain_iface.addr_lookup(ctx, domain_id, addr);
}

static inline doca_error_t doca_urom_worker_domain_seg_lookup(struct urom_worker_ctx *ctx,
							      uint64_t domain_id, uint64_t va,
							      int *seg)
{
	return ctx->domain_iface.seg_lookup(ctx, domain_id, va, seg);
}

static inline doca_error_t doca_urom_worker_domain_memh_lookup(struct urom_worker_ctx *ctx,
							       uint64_t domain_id, int seg,
							       size_t *len, void **memh)
{
	return ctx->domain_iface.memh_lookup(ctx, domain_id, seg, len, memh);
}

static inline doca_error_t doca_urom_worker_domain_mkey_lookup(struct urom_worker_ctx *ctx,
							       uint64_t domain_id, int seg,
							       size_t *len, void **rkey)
{
	return ctx->domain_iface.mkey_lookup(ctx, domain_id, seg, len, rkey);
}

#ifdef __cplusplus
}
#endif

#endif /* DOCA_UROM_PLUGIN_H_ */
