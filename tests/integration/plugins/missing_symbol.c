/*
 * Discovery fixture: a would-be plugin that exports urom_plugin_get_version but not
 * urom_plugin_get_iface. The service must skip it, naming the missing symbol.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>

DOCA_STABLE doca_error_t urom_plugin_get_version(uint64_t *version);

doca_error_t urom_plugin_get_version(uint64_t *version)
{
	if (version == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*version = 0x01;
	return DOCA_SUCCESS;
}
