/*
 * worker_graph plugin, worker half: the smallest useful UROM plugin. It answers the LOOPBACK
 * command with a notification that carries the command's 64-bit value back to the host.
 *
 * Written against doca_urom_plugin.h only, as a DOCA plugin would be: softdpu-urom-worker
 * dlopen()s worker_graph.so, calls urom_plugin_get_iface() and then the ops below from its
 * single loop thread, so the plugin needs no locking.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_urom_plugin.h>

#include "worker_graph.h"

DOCA_LOG_REGISTER(UROM::WORKER::GRAPH);

/* What the addr op hands out: the plugin keeps no transport, so a fixed tag stands in. */
static const char graph_addr_blob[] = "softdpu-worker-graph-v1";

/* Per-worker state: notifications waiting for the next progress call. */
struct graph_state {
	ucs_list_link_t completed;
};

static doca_error_t graph_open(struct urom_worker_ctx *ctx)
{
	struct graph_state *state;

	if (ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;

	state = calloc(1, sizeof(*state));
	if (state == NULL) {
		DOCA_LOG_ERR("failed to allocate the graph plugin state");
		return DOCA_ERROR_NO_MEMORY;
	}
	ucs_list_head_init(&state->completed);
	ctx->plugin_ctx = state;
	return DOCA_SUCCESS;
}

static void graph_close(struct urom_worker_ctx *ctx)
{
	struct graph_state *state;
	struct urom_worker_notif_desc *desc;

	if (ctx == NULL || ctx->plugin_ctx == NULL)
		return;

	state = ctx->plugin_ctx;
	while (!ucs_list_is_empty(&state->completed)) {
		desc = ucs_list_extract_head(&state->completed, struct urom_worker_notif_desc,
					     entry);
		free(desc);
	}
	free(state);
	ctx->plugin_ctx = NULL;
}

static doca_error_t graph_addr(struct urom_worker_ctx *ctx, void *addr, size_t *addr_len)
{
	if (ctx == NULL || addr_len == NULL)
		return DOCA_ERROR_INVALID_VALUE;

	/* First call (or a short buffer): say how much room the address needs. */
	if (addr == NULL || *addr_len < sizeof(graph_addr_blob)) {
		*addr_len = sizeof(graph_addr_blob);
		return DOCA_ERROR_INVALID_VALUE;
	}

	memcpy(addr, graph_addr_blob, sizeof(graph_addr_blob));
	*addr_len = sizeof(graph_addr_blob);
	return DOCA_SUCCESS;
}

/* Queue one notification answering cmd_desc; payload NULL sends the header alone. */
static doca_error_t graph_notify(struct graph_state *state,
				 const struct urom_worker_cmd_desc *cmd_desc, doca_error_t status,
				 const struct urom_worker_notify_graph *payload)
{
	size_t payload_len = payload != NULL ? sizeof(*payload) : 0;
	struct urom_worker_notif_desc *desc;

	desc = calloc(1, sizeof(*desc) + payload_len);
	if (desc == NULL) {
		DOCA_LOG_ERR("failed to allocate a notification of %zu bytes",
			     sizeof(*desc) + payload_len);
		return DOCA_ERROR_NO_MEMORY;
	}

	desc->dest_id = cmd_desc->dest_id;
	desc->worker_notif.type = cmd_desc->worker_cmd.type;
	desc->worker_notif.urom_context = cmd_desc->worker_cmd.urom_context;
	desc->worker_notif.len = payload_len;
	desc->worker_notif.status = status;
	if (payload != NULL)
		memcpy(desc->worker_notif.plugin_notif, payload, payload_len);

	ucs_list_add_tail(&state->completed, &desc->entry);
	return DOCA_SUCCESS;
}

/* Handle one command; queue exactly one notification for it (success or error). */
static doca_error_t graph_cmd_one(struct graph_state *state,
				  const struct urom_worker_cmd_desc *cmd_desc)
{
	const struct urom_worker_cmd *cmd = &cmd_desc->worker_cmd;
	struct urom_worker_graph_cmd graph_cmd;
	struct urom_worker_notify_graph notif;
	doca_error_t status;

	if (cmd->len != sizeof(graph_cmd)) {
		DOCA_LOG_ERR("graph command of %lu bytes, expected %zu", (unsigned long)cmd->len,
			     sizeof(graph_cmd));
		status = DOCA_ERROR_INVALID_VALUE;
		goto err_notify;
	}

	memcpy(&graph_cmd, cmd->plugin_cmd, sizeof(graph_cmd));
	switch (graph_cmd.type) {
	case UROM_WORKER_CMD_GRAPH_LOOPBACK:
		memset(&notif, 0, sizeof(notif));
		notif.type = UROM_WORKER_NOTIFY_GRAPH_LOOPBACK;
		notif.loopback.data = graph_cmd.loopback.data;
		DOCA_LOG_TRC("loopback %lu for dest %lu", (unsigned long)notif.loopback.data,
			     (unsigned long)cmd_desc->dest_id);
		return graph_notify(state, cmd_desc, DOCA_SUCCESS, &notif);
	default:
		DOCA_LOG_ERR("unknown graph command type %lu", (unsigned long)graph_cmd.type);
		status = DOCA_ERROR_INVALID_VALUE;
		goto err_notify;
	}

err_notify:
	/* The host still gets an answer; if even that fails, report the allocation failure. */
	if (graph_notify(state, cmd_desc, status, NULL) != DOCA_SUCCESS)
		return DOCA_ERROR_NO_MEMORY;
	return status;
}

static doca_error_t graph_worker_cmd(struct urom_worker_ctx *ctx, ucs_list_link_t *cmd_list)
{
	struct urom_worker_cmd_desc *cmd_desc;
	doca_error_t status = DOCA_SUCCESS;
	doca_error_t one;

	if (ctx == NULL || ctx->plugin_ctx == NULL || cmd_list == NULL)
		return DOCA_ERROR_INVALID_VALUE;

	while (!ucs_list_is_empty(cmd_list)) {
		cmd_desc = ucs_list_extract_head(cmd_list, struct urom_worker_cmd_desc, entry);
		one = graph_cmd_one(ctx->plugin_ctx, cmd_desc);
		/* Each descriptor is freed here and only here, whatever happened to it. */
		free(cmd_desc);
		if (one != DOCA_SUCCESS)
			status = one;
	}
	return status;
}

static doca_error_t graph_progress(struct urom_worker_ctx *ctx, ucs_list_link_t *notif_list)
{
	struct graph_state *state;

	if (ctx == NULL || ctx->plugin_ctx == NULL || notif_list == NULL)
		return DOCA_ERROR_INVALID_VALUE;

	state = ctx->plugin_ctx;
	if (ucs_list_is_empty(&state->completed))
		return DOCA_ERROR_EMPTY;

	ucs_list_splice_tail(notif_list, &state->completed);
	ucs_list_head_init(&state->completed);
	return DOCA_SUCCESS;
}

static doca_error_t graph_notif_pack(struct urom_worker_notify *notif, size_t *packed_notif_len,
				     void *packed_notif)
{
	size_t need;

	if (notif == NULL || packed_notif_len == NULL || packed_notif == NULL)
		return DOCA_ERROR_INVALID_VALUE;

	if (notif->len > sizeof(struct urom_worker_notify_graph))
		return DOCA_ERROR_INVALID_VALUE;

	need = offsetof(struct urom_worker_notify, plugin_notif) + notif->len;
	if (*packed_notif_len < need) {
		DOCA_LOG_ERR("notification needs %zu bytes, the buffer holds %zu", need,
			     *packed_notif_len);
		return DOCA_ERROR_TOO_BIG;
	}

	memcpy(packed_notif, notif, need);
	*packed_notif_len = need;
	return DOCA_SUCCESS;
}

/* The plugin's entry points, looked up by name by the worker runtime and the service. */
DOCA_STABLE doca_error_t urom_plugin_get_iface(struct urom_plugin_iface *iface);
DOCA_STABLE doca_error_t urom_plugin_get_version(uint64_t *version);

doca_error_t urom_plugin_get_iface(struct urom_plugin_iface *iface)
{
	struct urom_plugin_iface ops = {
		.open = graph_open,
		.close = graph_close,
		.addr = graph_addr,
		.worker_cmd = graph_worker_cmd,
		.progress = graph_progress,
		.notif_pack = graph_notif_pack,
	};

	if (iface == NULL)
		return DOCA_ERROR_INVALID_VALUE;

	DOCA_STRUCT_CTOR(ops);
	*iface = ops;
	return DOCA_SUCCESS;
}

doca_error_t urom_plugin_get_version(uint64_t *version)
{
	if (version == NULL)
		return DOCA_ERROR_INVALID_VALUE;

	*version = UROM_WORKER_GRAPH_VERSION;
	return DOCA_SUCCESS;
}
