/*
 * The `host` device provider: the device a softdpu host always has.
 *
 * It lists `softdpu0` and one more devinfo per name in SOFTDPU_HOST_DEV_ALIASES (default
 * "mlx5_0"), so a DOCA program started with `-d mlx5_0` finds it, and per declaration
 * `host:alias=<name>` (SOFTDPU_DEVICES or the device configuration file). Every entry is the same
 * device: PCI address ffff:00:00.0 (domain ffff is reserved, no real PCI function has it),
 * function type PF, interface `lo` (the UROM traffic it stands for stays on this host or goes
 * through UCX, never through an Ethernet queue of its own), link up.
 *
 * Opening it needs no resource: there is no dev_open op, and no Ethernet port (`eth` is NULL).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "sdp_config.h"
#include "sdp_log.h"
#include "sdp_provider.h"

SDP_LOG_COMPONENT("host");

#define HOST_IBDEV_NAME "softdpu0"
#define HOST_IFACE_NAME "lo"
#define HOST_PCI_ADDR "ffff:00:00.0"

static void host_attr(struct sdp_devinfo_attr *attr, const char *ibdev_name)
{
	memset(attr, 0, sizeof(*attr));
	snprintf(attr->ibdev_name, sizeof(attr->ibdev_name), "%s", ibdev_name);
	snprintf(attr->iface_name, sizeof(attr->iface_name), "%s", HOST_IFACE_NAME);
	snprintf(attr->pci_addr, sizeof(attr->pci_addr), "%s", HOST_PCI_ADDR);
	attr->func_type = DOCA_PCI_FUNC_TYPE_PF;
	attr->link_up = 1;
}

/*
 * An alias must look like an RDMA device name: [A-Za-z0-9_.-], shorter than the DOCA buffer.
 * `where` names the source in the warning.
 */
static int alias_ok(const char *alias, const char *where)
{
	size_t len = strlen(alias);

	if (len == 0 || len >= DOCA_DEVINFO_IBDEV_NAME_SIZE) {
		sdp_warn("%s: alias '%s' must have 1 to %d characters, skipped", where, alias,
			 DOCA_DEVINFO_IBDEV_NAME_SIZE - 1);
		return 0;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)alias[i];

		if (!isalnum(c) && c != '_' && c != '.' && c != '-') {
			sdp_warn(
				"%s: alias '%s' has a character outside A-Z a-z 0-9 _ . -, skipped",
				where, alias);
			return 0;
		}
	}
	return 1;
}

/* A declaration is `host:alias=<name>` and nothing else. */
static doca_error_t host_decl_check(const struct sdp_dev_decl *decl)
{
	const char *alias = sdp_dev_decl_get(decl, "alias");

	if (alias == NULL || decl->num_params != 1) {
		sdp_warn("%s: the host provider takes exactly one parameter, alias=<name>",
			 decl->origin);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!alias_ok(alias, decl->origin))
		return DOCA_ERROR_INVALID_VALUE;
	return DOCA_SUCCESS;
}

static doca_error_t host_enumerate(const struct sdp_dev_decl *const *decls, size_t num_decls,
				   struct sdp_devinfo_sink *sink)
{
	struct sdp_devinfo_attr attr;
	char **aliases = NULL;
	size_t num_aliases = 0;
	doca_error_t status;

	host_attr(&attr, HOST_IBDEV_NAME);
	status = sdp_devinfo_add(sink, &attr);
	if (status != DOCA_SUCCESS)
		return status;

	/* A bad alias list loses the aliases, never the device itself. */
	if (sdp_config_get_list(SDP_CFG_HOST_DEV_ALIASES, &aliases, &num_aliases) != DOCA_SUCCESS)
		num_aliases = 0;
	for (size_t i = 0; i < num_aliases; i++) {
		if (!alias_ok(aliases[i], sdp_config_name(SDP_CFG_HOST_DEV_ALIASES)))
			continue;
		host_attr(&attr, aliases[i]);
		/* a name already listed (softdpu0, a repeated alias) is reported and skipped */
		status = sdp_devinfo_add(sink, &attr);
		if (status == DOCA_ERROR_NO_MEMORY)
			break;
	}
	sdp_config_free_list(aliases);
	if (status == DOCA_ERROR_NO_MEMORY)
		return status;

	/* declared aliases (checked by host_decl_check) */
	for (size_t i = 0; i < num_decls; i++) {
		host_attr(&attr, sdp_dev_decl_get(decls[i], "alias"));
		if (sdp_devinfo_add(sink, &attr) == DOCA_ERROR_NO_MEMORY)
			return DOCA_ERROR_NO_MEMORY;
	}
	return DOCA_SUCCESS;
}

static const struct sdp_provider_ops host_ops = {
	.abi_version = SDP_PROVIDER_ABI_VERSION,
	.name = "host",
	.decl_check = host_decl_check,
	.enumerate = host_enumerate,
	.eth = NULL, /* the host device has no Ethernet queues of its own */
};

SDP_PROVIDER_DEFINE(host_ops);
