/*
 * softdpu-urom-worker: loading plugins and filling the gaps of their ops tables.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_urom_plugin.h"

#include "softdpu/urom_plugin.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "doca_version.h"

#include "sdp_log.h"

SDP_LOG_COMPONENT("urom_plugin");

typedef doca_error_t (*sdp_urom_plugin_get_version_func_t)(uint64_t *version);
typedef doca_error_t (*sdp_urom_plugin_get_iface_func_t)(struct urom_plugin_iface *iface);

/* Stand-ins for ops a plugin leaves NULL: typed, so the compiler checks each signature. */
static doca_error_t urom_stub_open(struct urom_worker_ctx *ctx)
{
	(void)ctx;
	return DOCA_ERROR_NOT_SUPPORTED;
}

static void urom_stub_close(struct urom_worker_ctx *ctx)
{
	(void)ctx;
}

static doca_error_t urom_stub_addr(struct urom_worker_ctx *ctx, void *addr, size_t *addr_len)
{
	(void)ctx;
	(void)addr;
	(void)addr_len;
	return DOCA_ERROR_NOT_SUPPORTED;
}

static doca_error_t urom_stub_worker_cmd(struct urom_worker_ctx *ctx, ucs_list_link_t *cmd_list)
{
	(void)ctx;
	(void)cmd_list;
	return DOCA_ERROR_NOT_SUPPORTED;
}

static doca_error_t urom_stub_progress(struct urom_worker_ctx *ctx, ucs_list_link_t *notif_list)
{
	(void)ctx;
	(void)notif_list;
	return DOCA_ERROR_NOT_SUPPORTED;
}

static doca_error_t urom_stub_notif_pack(struct urom_worker_notify *notif, size_t *packed_notif_len,
					 void *packed_notif)
{
	(void)notif;
	(void)packed_notif_len;
	(void)packed_notif;
	return DOCA_ERROR_NOT_SUPPORTED;
}

/* Domains arrive in a later issue: until then no domain member is known to any lookup. */
static doca_error_t urom_domain_addr_lookup(struct urom_worker_ctx *ctx, uint64_t domain_id,
					    void **addr)
{
	if (ctx == NULL || addr == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	sdp_debug("addr lookup of domain member %lu: no domain", (unsigned long)domain_id);
	return DOCA_ERROR_NOT_FOUND;
}

static doca_error_t urom_domain_seg_lookup(struct urom_worker_ctx *ctx, uint64_t domain_id,
					   uint64_t va, int *seg)
{
	if (ctx == NULL || seg == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	sdp_debug("segment lookup of va %#lx at domain member %lu: no domain", (unsigned long)va,
		  (unsigned long)domain_id);
	return DOCA_ERROR_NOT_FOUND;
}

static doca_error_t urom_domain_memh_lookup(struct urom_worker_ctx *ctx, uint64_t domain_id,
					    int seg, size_t *len, void **memh)
{
	if (ctx == NULL || len == NULL || memh == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	sdp_debug("memh lookup of segment %d at domain member %lu: no domain", seg,
		  (unsigned long)domain_id);
	return DOCA_ERROR_NOT_FOUND;
}

static doca_error_t urom_domain_mkey_lookup(struct urom_worker_ctx *ctx, uint64_t domain_id,
					    int seg, size_t *len, void **rkey)
{
	if (ctx == NULL || len == NULL || rkey == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	sdp_debug("rkey lookup of segment %d at domain member %lu: no domain", seg,
		  (unsigned long)domain_id);
	return DOCA_ERROR_NOT_FOUND;
}

doca_error_t sdp_urom_plugin_name(const char *path, char name[DOCA_UROM_PLUGIN_NAME_MAX_LEN])
{
	const char *base;
	size_t len;

	if (path == NULL || name == NULL)
		return DOCA_ERROR_INVALID_VALUE;

	base = strrchr(path, '/');
	base = base != NULL ? base + 1 : path;
	len = strlen(base);
	if (len >= 3 && strcmp(base + len - 3, ".so") == 0)
		len -= 3;
	if (len == 0 || len >= DOCA_UROM_PLUGIN_NAME_MAX_LEN) {
		sdp_error("plugin %s: name of %zu characters, expected 1 to %d", path, len,
			  DOCA_UROM_PLUGIN_NAME_MAX_LEN - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}

	memcpy(name, base, len);
	name[len] = '\0';
	return DOCA_SUCCESS;
}

static void urom_plugin_fill_stubs(struct urom_plugin_iface *iface)
{
	if (iface->open == NULL)
		iface->open = urom_stub_open;
	if (iface->close == NULL)
		iface->close = urom_stub_close;
	if (iface->addr == NULL)
		iface->addr = urom_stub_addr;
	if (iface->worker_cmd == NULL)
		iface->worker_cmd = urom_stub_worker_cmd;
	if (iface->progress == NULL)
		iface->progress = urom_stub_progress;
	if (iface->notif_pack == NULL)
		iface->notif_pack = urom_stub_notif_pack;
}

doca_error_t sdp_urom_plugin_load(const char *path, uint64_t id, struct sdp_urom_plugin *plugin)
{
	sdp_urom_plugin_get_version_func_t get_version;
	sdp_urom_plugin_get_iface_func_t get_iface;
	struct sdp_urom_plugin p;
	doca_error_t status;

	if (path == NULL || plugin == NULL) {
		sdp_error("invalid argument: path %p, plugin %p", (const void *)path,
			  (void *)plugin);
		return DOCA_ERROR_INVALID_VALUE;
	}

	memset(&p, 0, sizeof(p));
	p.id = id;
	status = sdp_urom_plugin_name(path, p.name);
	if (status != DOCA_SUCCESS)
		return status;

	p.path = strdup(path);
	if (p.path == NULL) {
		sdp_error("plugin %s: out of memory", path);
		return DOCA_ERROR_NO_MEMORY;
	}

	p.dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (p.dl == NULL) {
		sdp_error("plugin %s: dlopen failed: %s", path, dlerror());
		status = DOCA_ERROR_NOT_FOUND;
		goto err_free_path;
	}

	/* Converting dlsym's object pointer to a function pointer is what POSIX prescribes. */
	*(void **)&get_version = dlsym(p.dl, "urom_plugin_get_version");
	if (get_version == NULL) {
		sdp_error("plugin %s: no symbol urom_plugin_get_version", path);
		status = DOCA_ERROR_NOT_FOUND;
		goto err_dlclose;
	}
	*(void **)&get_iface = dlsym(p.dl, "urom_plugin_get_iface");
	if (get_iface == NULL) {
		sdp_error("plugin %s: no symbol urom_plugin_get_iface", path);
		status = DOCA_ERROR_NOT_FOUND;
		goto err_dlclose;
	}

	status = get_version(&p.version);
	if (status != DOCA_SUCCESS) {
		sdp_error("plugin %s: urom_plugin_get_version failed: %s", path,
			  doca_error_get_name(status));
		status = DOCA_ERROR_INVALID_VALUE;
		goto err_dlclose;
	}

	status = get_iface(&p.ctx.iface);
	if (status != DOCA_SUCCESS) {
		sdp_error("plugin %s: urom_plugin_get_iface failed: %s", path,
			  doca_error_get_name(status));
		status = DOCA_ERROR_INVALID_VALUE;
		goto err_dlclose;
	}

	if (p.ctx.iface.__doca_api_version != (size_t)DOCA_VERSION_EXACT) {
		sdp_error("plugin %s: built for DOCA API version %#zx, this worker implements %#zx",
			  path, p.ctx.iface.__doca_api_version, (size_t)DOCA_VERSION_EXACT);
		status = DOCA_ERROR_UNSUPPORTED_VERSION;
		goto err_dlclose;
	}

	/* Optional softdpu extension: both or neither (softdpu/urom_plugin.h). */
	*(void **)&p.wakeup_fd = dlsym(p.dl, SOFTDPU_PLUGIN_WAKEUP_FD_SYMBOL);
	*(void **)&p.arm = dlsym(p.dl, SOFTDPU_PLUGIN_ARM_SYMBOL);
	if ((p.wakeup_fd == NULL) != (p.arm == NULL)) {
		sdp_warn("plugin %s: exports only one of %s and %s; polled instead", path,
			 SOFTDPU_PLUGIN_WAKEUP_FD_SYMBOL, SOFTDPU_PLUGIN_ARM_SYMBOL);
		p.wakeup_fd = NULL;
		p.arm = NULL;
	}

	urom_plugin_fill_stubs(&p.ctx.iface);
	p.ctx.domain_iface.addr_lookup = urom_domain_addr_lookup;
	p.ctx.domain_iface.seg_lookup = urom_domain_seg_lookup;
	p.ctx.domain_iface.memh_lookup = urom_domain_memh_lookup;
	p.ctx.domain_iface.mkey_lookup = urom_domain_mkey_lookup;

	sdp_debug("plugin %s loaded from %s: id %#lx, version %#lx", p.name, path,
		  (unsigned long)p.id, (unsigned long)p.version);
	*plugin = p;
	return DOCA_SUCCESS;

err_dlclose:
	dlclose(p.dl);
err_free_path:
	free(p.path);
	return status;
}

doca_error_t sdp_urom_plugin_open(struct sdp_urom_plugin *plugin)
{
	size_t len = 0;
	doca_error_t status;
	void *addr;

	if (plugin == NULL || plugin->dl == NULL || plugin->opened) {
		sdp_error("invalid argument: plugin %p is not loaded or already open",
			  (void *)plugin);
		return DOCA_ERROR_INVALID_VALUE;
	}

	status = plugin->ctx.iface.open(&plugin->ctx);
	if (status != DOCA_SUCCESS) {
		sdp_error("plugin %s: open failed: %s", plugin->name, doca_error_get_name(status));
		return status;
	}
	plugin->opened = 1;

	/* Size query first; a plugin without an address answers NOT_SUPPORTED (stub). */
	status = plugin->ctx.iface.addr(&plugin->ctx, NULL, &len);
	if (status == DOCA_ERROR_NOT_SUPPORTED)
		return DOCA_SUCCESS;
	if (status != DOCA_ERROR_INVALID_VALUE || len == 0) {
		if (status != DOCA_SUCCESS)
			sdp_warn("plugin %s: addr size query failed: %s", plugin->name,
				 doca_error_get_name(status));
		return DOCA_SUCCESS; /* no address to keep */
	}

	addr = malloc(len);
	if (addr == NULL) {
		sdp_warn("plugin %s: no memory for its %zu-byte address", plugin->name, len);
		return DOCA_SUCCESS;
	}
	status = plugin->ctx.iface.addr(&plugin->ctx, addr, &len);
	if (status != DOCA_SUCCESS) {
		sdp_warn("plugin %s: addr failed with a %zu-byte buffer: %s", plugin->name, len,
			 doca_error_get_name(status));
		free(addr);
		return DOCA_SUCCESS;
	}
	plugin->addr = addr;
	plugin->addr_len = len;
	sdp_debug("plugin %s: address of %zu bytes", plugin->name, len);
	return DOCA_SUCCESS;
}

void sdp_urom_plugin_unload(struct sdp_urom_plugin *plugin)
{
	if (plugin == NULL)
		return;

	if (plugin->opened)
		plugin->ctx.iface.close(&plugin->ctx);
	free(plugin->addr);
	if (plugin->dl != NULL)
		dlclose(plugin->dl);
	free(plugin->path);
	memset(plugin, 0, sizeof(*plugin));
}
