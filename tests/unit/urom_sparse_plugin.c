/*
 * Test fixture for test_urom_plugin_load: a valid plugin that implements only open and close,
 * so the loader must fill addr, worker_cmd, progress and notif_pack with not-supported stubs.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_urom_plugin.h>

DOCA_STABLE doca_error_t urom_plugin_get_version(uint64_t *version);
DOCA_STABLE doca_error_t urom_plugin_get_iface(struct urom_plugin_iface *iface);

static doca_error_t sparse_open(struct urom_worker_ctx *ctx)
{
	ctx->plugin_ctx = malloc(16);
	return ctx->plugin_ctx != NULL ? DOCA_SUCCESS : DOCA_ERROR_NO_MEMORY;
}

static void sparse_close(struct urom_worker_ctx *ctx)
{
	free(ctx->plugin_ctx);
	ctx->plugin_ctx = NULL;
}

doca_error_t urom_plugin_get_version(uint64_t *version)
{
	if (version == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*version = 0x7;
	return DOCA_SUCCESS;
}

doca_error_t urom_plugin_get_iface(struct urom_plugin_iface *iface)
{
	if (iface == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	memset(iface, 0, sizeof(*iface));
	iface->open = sparse_open;
	iface->close = sparse_close;
	DOCA_STRUCT_CTOR(*iface);
	return DOCA_SUCCESS;
}
