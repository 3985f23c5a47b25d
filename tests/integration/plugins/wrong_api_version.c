/*
 * Discovery fixture: a complete plugin whose ops table claims a DOCA API version one above the
 * one softdpu implements (as if built against other headers). The service and the worker must
 * refuse it.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <string.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_urom_plugin.h>
#include <doca_version.h>

DOCA_STABLE doca_error_t urom_plugin_get_version(uint64_t *version);
DOCA_STABLE doca_error_t urom_plugin_get_iface(struct urom_plugin_iface *iface);

static doca_error_t wrong_open(struct urom_worker_ctx *ctx)
{
	(void)ctx;
	return DOCA_SUCCESS;
}

doca_error_t urom_plugin_get_version(uint64_t *version)
{
	if (version == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*version = 0x01;
	return DOCA_SUCCESS;
}

doca_error_t urom_plugin_get_iface(struct urom_plugin_iface *iface)
{
	if (iface == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	memset(iface, 0, sizeof(*iface));
	iface->open = wrong_open;
	iface->__doca_api_version = DOCA_VERSION_EXACT + 1;
	return DOCA_SUCCESS;
}
