/*
 * Ladder fixture (`softdpu ladder urom`, tests/integration/test_cli_ladder_urom.sh): a plugin
 * named worker_rma (its file name) whose worker half reports another version than the host
 * half expects (UROM_WORKER_RMA_VERSION + 0x10), as a service with an older or newer
 * worker_rma would. The service lists it; the ladder's precheck must name the version layer.
 * Its open refuses, so no worker ever runs it.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <string.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_urom_plugin.h>
#include <doca_version.h>

#include "worker_rma.h"

DOCA_STABLE doca_error_t urom_plugin_get_version(uint64_t *version);
DOCA_STABLE doca_error_t urom_plugin_get_iface(struct urom_plugin_iface *iface);

static doca_error_t skew_open(struct urom_worker_ctx *ctx)
{
	(void)ctx;
	return DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t urom_plugin_get_version(uint64_t *version)
{
	if (version == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*version = UROM_WORKER_RMA_VERSION + 0x10;
	return DOCA_SUCCESS;
}

doca_error_t urom_plugin_get_iface(struct urom_plugin_iface *iface)
{
	if (iface == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	memset(iface, 0, sizeof(*iface));
	iface->open = skew_open;
	iface->__doca_api_version = DOCA_VERSION_EXACT;
	return DOCA_SUCCESS;
}
