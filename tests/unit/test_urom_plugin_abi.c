/*
 * UROM plugin ABI: doca_urom_plugin.h lays its structs out exactly as DOCA does (LP64), so
 * plugins and host halves built against DOCA's header exchange the same bytes; DOCA_STRUCT_CTOR
 * stamps the ops table with the API version; the domain lookup wrappers forward to the table.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "doca_urom_plugin.h"
#include "doca_version.h"
#include "t_helpers.h"

/* Compile-time checks: a wrong layout does not even build. */
_Static_assert(DOCA_UROM_PLUGIN_NAME_MAX_LEN == 48, "plugin name length");
_Static_assert(sizeof(struct doca_urom_service_plugin_info) == 64, "plugin_info size");
_Static_assert(sizeof(struct urom_worker_cmd) == 24, "urom_worker_cmd header size");
_Static_assert(sizeof(struct urom_worker_notify) == 32, "urom_worker_notify header size");
_Static_assert(sizeof(struct urom_worker_cmd_desc) == 48, "urom_worker_cmd_desc size");
_Static_assert(sizeof(struct urom_worker_notif_desc) == 56, "urom_worker_notif_desc size");
_Static_assert(sizeof(struct urom_plugin_iface) == 56, "urom_plugin_iface size");
_Static_assert(sizeof(struct urom_domain_lookups_iface) == 32, "domain lookups size");
_Static_assert(sizeof(struct urom_worker_ctx) == 56 + 32 + 8, "urom_worker_ctx size");

struct lookup_probe {
	int calls;
	uint64_t domain_id;
	uint64_t va;
	int seg;
};

static struct lookup_probe probe;

static doca_error_t probe_addr(struct urom_worker_ctx *ctx, uint64_t domain_id, void **addr)
{
	probe.calls++;
	probe.domain_id = domain_id;
	*addr = ctx;
	return DOCA_SUCCESS;
}

static doca_error_t probe_seg(struct urom_worker_ctx *ctx, uint64_t domain_id, uint64_t va,
			      int *seg)
{
	(void)ctx;
	probe.calls++;
	probe.domain_id = domain_id;
	probe.va = va;
	*seg = 3;
	return DOCA_SUCCESS;
}

static doca_error_t probe_memh(struct urom_worker_ctx *ctx, uint64_t domain_id, int seg,
			       size_t *len, void **memh)
{
	(void)ctx;
	(void)memh;
	probe.calls++;
	probe.domain_id = domain_id;
	probe.seg = seg;
	*len = 11;
	return DOCA_ERROR_NOT_FOUND;
}

static doca_error_t probe_mkey(struct urom_worker_ctx *ctx, uint64_t domain_id, int seg,
			       size_t *len, void **rkey)
{
	(void)ctx;
	(void)rkey;
	probe.calls++;
	probe.domain_id = domain_id;
	probe.seg = seg;
	*len = 22;
	return DOCA_ERROR_INVALID_VALUE;
}

int main(void)
{
	struct urom_plugin_iface iface;
	struct urom_worker_ctx ctx;
	void *addr = NULL;
	size_t len = 0;
	int seg = -1;

	/* Field offsets as documented (the same figures at run time, for the log). */
	T_EQ_INT(offsetof(struct doca_urom_service_plugin_info, id), 0);
	T_EQ_INT(offsetof(struct doca_urom_service_plugin_info, version), 8);
	T_EQ_INT(offsetof(struct doca_urom_service_plugin_info, plugin_name), 16);

	T_EQ_INT(offsetof(struct urom_worker_cmd, type), 0);
	T_EQ_INT(offsetof(struct urom_worker_cmd, urom_context), 8);
	T_EQ_INT(offsetof(struct urom_worker_cmd, len), 16);
	T_EQ_INT(offsetof(struct urom_worker_cmd, plugin_cmd), 24);

	T_EQ_INT(offsetof(struct urom_worker_cmd_desc, entry), 0);
	T_EQ_INT(offsetof(struct urom_worker_cmd_desc, dest_id), 16);
	T_EQ_INT(offsetof(struct urom_worker_cmd_desc, worker_cmd), 24);
	T_EQ_INT(offsetof(struct urom_worker_cmd_desc, worker_cmd.plugin_cmd), 48);

	T_EQ_INT(offsetof(struct urom_worker_notify, type), 0);
	T_EQ_INT(offsetof(struct urom_worker_notify, urom_context), 8);
	T_EQ_INT(offsetof(struct urom_worker_notify, len), 16);
	T_EQ_INT(offsetof(struct urom_worker_notify, status), 24);
	T_EQ_INT(offsetof(struct urom_worker_notify, reserved), 28);
	T_EQ_INT(offsetof(struct urom_worker_notify, plugin_notif), 32);
	T_EQ_INT(sizeof(((struct urom_worker_notify *)0)->status), 4);

	T_EQ_INT(offsetof(struct urom_worker_notif_desc, entry), 0);
	T_EQ_INT(offsetof(struct urom_worker_notif_desc, dest_id), 16);
	T_EQ_INT(offsetof(struct urom_worker_notif_desc, worker_notif), 24);
	T_EQ_INT(offsetof(struct urom_worker_notif_desc, worker_notif.plugin_notif), 56);

	/* The ops table: version first, then the six ops in DOCA's order. */
	T_EQ_INT(offsetof(struct urom_plugin_iface, __doca_api_version), 0);
	T_EQ_INT(offsetof(struct urom_plugin_iface, open), 8);
	T_EQ_INT(offsetof(struct urom_plugin_iface, close), 16);
	T_EQ_INT(offsetof(struct urom_plugin_iface, addr), 24);
	T_EQ_INT(offsetof(struct urom_plugin_iface, worker_cmd), 32);
	T_EQ_INT(offsetof(struct urom_plugin_iface, progress), 40);
	T_EQ_INT(offsetof(struct urom_plugin_iface, notif_pack), 48);

	T_EQ_INT(offsetof(struct urom_domain_lookups_iface, addr_lookup), 0);
	T_EQ_INT(offsetof(struct urom_domain_lookups_iface, seg_lookup), 8);
	T_EQ_INT(offsetof(struct urom_domain_lookups_iface, memh_lookup), 16);
	T_EQ_INT(offsetof(struct urom_domain_lookups_iface, mkey_lookup), 24);

	T_EQ_INT(offsetof(struct urom_worker_ctx, iface), 0);
	T_EQ_INT(offsetof(struct urom_worker_ctx, domain_iface), 56);
	T_EQ_INT(offsetof(struct urom_worker_ctx, plugin_ctx), 88);

	/* DOCA_STRUCT_CTOR stamps the version the plugin is compiled against. */
	memset(&iface, 0, sizeof(iface));
	T_EQ_INT(iface.__doca_api_version, 0);
	DOCA_STRUCT_CTOR(iface);
	T_EQ_INT(iface.__doca_api_version, DOCA_VERSION_EXACT);
	T_EQ_INT(DOCA_STRUCT_GET_VERSION(&iface), DOCA_VERSION_CALC_EXACT(3, 3, 0));
	T_TRUE(iface.open == NULL && iface.notif_pack == NULL);

	/* The inline lookups forward every argument and the status unchanged. */
	memset(&ctx, 0, sizeof(ctx));
	ctx.domain_iface.addr_lookup = probe_addr;
	ctx.domain_iface.seg_lookup = probe_seg;
	ctx.domain_iface.memh_lookup = probe_memh;
	ctx.domain_iface.mkey_lookup = probe_mkey;

	T_OK(doca_urom_worker_domain_addr_lookup(&ctx, 5, &addr));
	T_TRUE(addr == (void *)&ctx);
	T_EQ_INT(probe.domain_id, 5);

	T_OK(doca_urom_worker_domain_seg_lookup(&ctx, 6, 0x1000, &seg));
	T_EQ_INT(seg, 3);
	T_EQ_INT(probe.va, 0x1000);
	T_EQ_INT(probe.domain_id, 6);

	T_STATUS(doca_urom_worker_domain_memh_lookup(&ctx, 7, 2, &len, &addr),
		 DOCA_ERROR_NOT_FOUND);
	T_EQ_INT(len, 11);
	T_EQ_INT(probe.seg, 2);

	T_STATUS(doca_urom_worker_domain_mkey_lookup(&ctx, 8, 4, &len, &addr),
		 DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(len, 22);
	T_EQ_INT(probe.seg, 4);
	T_EQ_INT(probe.domain_id, 8);
	T_EQ_INT(probe.calls, 4);

	T_DONE();
}
