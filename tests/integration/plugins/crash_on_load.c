/*
 * Discovery fixture: a plugin whose constructor dies with SIGSEGV as soon as it is dlopen()ed.
 * The service scans in a child process, so only that child dies; the plugin is skipped and the
 * service keeps running. Both entry points exist so that nothing but the crash disqualifies it.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_urom_plugin.h>

__attribute__((constructor)) static void crash_on_load(void)
{
	raise(SIGSEGV);
}

DOCA_STABLE doca_error_t urom_plugin_get_version(uint64_t *version);
DOCA_STABLE doca_error_t urom_plugin_get_iface(struct urom_plugin_iface *iface);

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
	DOCA_STRUCT_CTOR(*iface);
	return DOCA_SUCCESS;
}
