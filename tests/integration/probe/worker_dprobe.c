/*
 * worker_dprobe plugin (dprobe.h). Its address is "dprobe-<16 hex digits>", random per worker,
 * so a test can tell members apart. Each command is answered by one notification; the lookup
 * status travels in the notification body (the notification status stays DOCA_SUCCESS unless
 * the command itself is malformed).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_urom_plugin.h>

#include "dprobe.h"

struct dprobe_state {
	ucs_list_link_t completed;
	char addr[DPROBE_ADDR_LEN];
};

static doca_error_t dprobe_open(struct urom_worker_ctx *ctx)
{
	struct dprobe_state *st = calloc(1, sizeof(*st));
	uint64_t r = 0;

	if (st == NULL)
		return DOCA_ERROR_NO_MEMORY;
	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		r = (uint64_t)(uintptr_t)st;
	snprintf(st->addr, sizeof(st->addr), "dprobe-%016llx", (unsigned long long)r);
	ucs_list_head_init(&st->completed);
	ctx->plugin_ctx = st;
	return DOCA_SUCCESS;
}

static void dprobe_close(struct urom_worker_ctx *ctx)
{
	struct dprobe_state *st = ctx->plugin_ctx;

	while (st != NULL && !ucs_list_is_empty(&st->completed))
		free(ucs_list_extract_head(&st->completed, struct urom_worker_notif_desc, entry));
	free(st);
	ctx->plugin_ctx = NULL;
}

static doca_error_t dprobe_addr(struct urom_worker_ctx *ctx, void *addr, size_t *addr_len)
{
	struct dprobe_state *st = ctx->plugin_ctx;

	if (addr == NULL || *addr_len < sizeof(st->addr)) {
		*addr_len = sizeof(st->addr);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(addr, st->addr, sizeof(st->addr));
	*addr_len = sizeof(st->addr);
	return DOCA_SUCCESS;
}

static void dprobe_one(struct urom_worker_ctx *ctx, const struct urom_worker_cmd_desc *cd)
{
	struct dprobe_state *st = ctx->plugin_ctx;
	struct urom_worker_notif_desc *nd;
	struct dprobe_notify n = {0};
	struct dprobe_cmd c;
	doca_error_t cmd_status = DOCA_SUCCESS;
	const void *data = NULL;
	void *p = NULL;
	size_t len = 0;
	int seg = -1;

	if (cd->worker_cmd.len != sizeof(c)) {
		cmd_status = DOCA_ERROR_INVALID_VALUE;
	} else {
		memcpy(&c, cd->worker_cmd.plugin_cmd, sizeof(c));
		n.op = c.op;
		switch (c.op) {
		case DPROBE_OWN_ADDR:
			data = st->addr;
			len = sizeof(st->addr);
			break;
		case DPROBE_ADDR:
			n.status = doca_urom_worker_domain_addr_lookup(ctx, c.id, &p);
			if (n.status == DOCA_SUCCESS) {
				data = p;
				len = DPROBE_ADDR_LEN; /* members' addresses all have this size */
			}
			break;
		case DPROBE_SEG:
			n.status = doca_urom_worker_domain_seg_lookup(ctx, c.id, c.va, &seg);
			n.seg = seg;
			break;
		case DPROBE_MEMH:
		case DPROBE_MKEY:
			n.status = c.op == DPROBE_MEMH ? doca_urom_worker_domain_memh_lookup(
								 ctx, c.id, (int)c.seg, &len, &p) :
							 doca_urom_worker_domain_mkey_lookup(
								 ctx, c.id, (int)c.seg, &len, &p);
			if (n.status == DOCA_SUCCESS)
				data = p;
			else
				len = 0;
			break;
		default:
			cmd_status = DOCA_ERROR_INVALID_VALUE;
		}
	}
	if (len > 2048)
		len = 2048;
	n.len = len;
	nd = calloc(1, sizeof(*nd) + sizeof(n) + len);
	if (nd == NULL)
		return;
	nd->dest_id = cd->dest_id;
	nd->worker_notif.type = cd->worker_cmd.type;
	nd->worker_notif.urom_context = cd->worker_cmd.urom_context;
	nd->worker_notif.status = cmd_status;
	nd->worker_notif.len = cmd_status == DOCA_SUCCESS ? sizeof(n) + len : 0;
	if (cmd_status == DOCA_SUCCESS) {
		memcpy(nd->worker_notif.plugin_notif, &n, sizeof(n));
		if (len)
			memcpy(nd->worker_notif.plugin_notif + sizeof(n), data, len);
	}
	ucs_list_add_tail(&st->completed, &nd->entry);
}

static doca_error_t dprobe_worker_cmd(struct urom_worker_ctx *ctx, ucs_list_link_t *cmd_list)
{
	while (!ucs_list_is_empty(cmd_list)) {
		struct urom_worker_cmd_desc *cd =
			ucs_list_extract_head(cmd_list, struct urom_worker_cmd_desc, entry);

		dprobe_one(ctx, cd);
		free(cd);
	}
	return DOCA_SUCCESS;
}

static doca_error_t dprobe_progress(struct urom_worker_ctx *ctx, ucs_list_link_t *notif_list)
{
	struct dprobe_state *st = ctx->plugin_ctx;

	if (ucs_list_is_empty(&st->completed))
		return DOCA_ERROR_EMPTY;
	ucs_list_splice_tail(notif_list, &st->completed);
	ucs_list_head_init(&st->completed);
	return DOCA_SUCCESS;
}

static doca_error_t dprobe_notif_pack(struct urom_worker_notify *notif, size_t *packed_len,
				      void *packed)
{
	size_t need = offsetof(struct urom_worker_notify, plugin_notif) + notif->len;

	if (*packed_len < need)
		return DOCA_ERROR_TOO_BIG;
	memcpy(packed, notif, need);
	*packed_len = need;
	return DOCA_SUCCESS;
}

__attribute__((visibility("default"))) doca_error_t
urom_plugin_get_iface(struct urom_plugin_iface *iface)
{
	struct urom_plugin_iface ops = {
		.open = dprobe_open,
		.close = dprobe_close,
		.addr = dprobe_addr,
		.worker_cmd = dprobe_worker_cmd,
		.progress = dprobe_progress,
		.notif_pack = dprobe_notif_pack,
	};

	if (iface == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	DOCA_STRUCT_CTOR(ops);
	*iface = ops;
	return DOCA_SUCCESS;
}

__attribute__((visibility("default"))) doca_error_t urom_plugin_get_version(uint64_t *version)
{
	if (version == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*version = 1;
	return DOCA_SUCCESS;
}
