/*
 * softdpu internal: loading one UROM worker plugin (a .so exporting urom_plugin_get_version and
 * urom_plugin_get_iface) into a struct urom_worker_ctx ready for its ops to be called.
 *
 * Used by softdpu-urom-worker for the plugins on its command line; the service's plugin scan may
 * use it too (in its scanning child) to apply exactly the same acceptance rules. Built into the
 * static library sdp_urom_plugin (meson variable sdp_urom_plugin_dep).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_UROM_PLUGIN_H_
#define SDP_UROM_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_error.h"
#include "doca_urom_plugin.h"

struct sdp_urom_plugin {
	char *path;				  /* as given (malloc'd) */
	char name[DOCA_UROM_PLUGIN_NAME_MAX_LEN]; /* file name without directory and ".so" */
	uint64_t id;				  /* single bit assigned by the service */
	uint64_t version;			  /* urom_plugin_get_version() */
	void *dl;				  /* dlopen handle */
	struct urom_worker_ctx ctx;		  /* iface with every NULL op replaced */
	int opened;				  /* open succeeded, close is due */
	void *addr;				  /* what the addr op returned (malloc'd) */
	size_t addr_len;
	/* softdpu/urom_plugin.h entry points, when the plugin exports both (else NULL) */
	doca_error_t (*wakeup_fd)(struct urom_worker_ctx *ctx, int *fd);
	doca_error_t (*arm)(struct urom_worker_ctx *ctx);
};

/*
 * The plugin name for a path: the last component without a trailing ".so". INVALID_VALUE when
 * it is empty or does not fit DOCA_UROM_PLUGIN_NAME_MAX_LEN (with its NUL).
 */
doca_error_t sdp_urom_plugin_name(const char *path, char name[DOCA_UROM_PLUGIN_NAME_MAX_LEN]);

/*
 * dlopen path (RTLD_NOW | RTLD_LOCAL), read the version, get the iface into a zeroed struct,
 * check its __doca_api_version against DOCA_VERSION_EXACT, fill every NULL op with a
 * not-supported stub (close: nothing) and the domain lookups with ones answering NOT_FOUND.
 * Does not call open. Errors (logged with the path and the reason):
 *   NOT_FOUND            dlopen failed or a required symbol is missing
 *   UNSUPPORTED_VERSION  the iface was built for another DOCA API version
 *   INVALID_VALUE        bad arguments or name, or a get_* call failed
 * On failure *plugin is left zeroed.
 */
doca_error_t sdp_urom_plugin_load(const char *path, uint64_t id, struct sdp_urom_plugin *plugin);

/*
 * Call the plugin's open, then ask for its address with the two-call size protocol and keep
 * a copy (a plugin without an address is fine). Returns open's status.
 */
doca_error_t sdp_urom_plugin_open(struct sdp_urom_plugin *plugin);

/* close (if opened), dlclose, free; leaves *plugin zeroed. Safe on a zeroed struct. */
void sdp_urom_plugin_unload(struct sdp_urom_plugin *plugin);

#endif /* SDP_UROM_PLUGIN_H_ */
