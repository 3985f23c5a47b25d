/*
 * Device boilerplate shared by the software NIC provider modules (sdp_nic_decl.h): listing the
 * declared devices, the configuration copy of dev_open, a port left open at dev_close.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdp_log.h"
#include "sdp_nic_decl.h"

SDP_LOG_COMPONENT("nic");

/*
 * List the device of conf (a slot of sdp_nic_enumerate's array): on success the devinfo owns a
 * copy and the slot is zeroed, so clearing it later releases nothing twice. DOCA_SUCCESS also
 * for a device left out or refused by the core (which logged why); NO_MEMORY ends the list.
 */
static doca_error_t nic_dev_list(const struct sdp_nic_provider *prov,
				 const struct sdp_dev_decl *decl, void *conf, const char *pci,
				 struct sdp_devinfo_sink *sink)
{
	const char *name = (const char *)conf + prov->name_off;
	struct sdp_devinfo_attr attr;
	doca_error_t status;
	void *priv;

	memset(&attr, 0, sizeof(attr));
	snprintf(attr.ibdev_name, sizeof(attr.ibdev_name), "%s", name);
	snprintf(attr.iface_name, sizeof(attr.iface_name), "%s", name);
	snprintf(attr.pci_addr, sizeof(attr.pci_addr), "%s", pci);
	attr.func_type = DOCA_PCI_FUNC_TYPE_PF;
	attr.link_up = 1;
	if (prov->conf_attr != NULL && !prov->conf_attr(decl, conf, &attr))
		return DOCA_SUCCESS;
	priv = malloc(prov->conf_size);
	if (priv == NULL) {
		sdp_error("out of memory listing %s device %s", prov->name, name);
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(priv, conf, prov->conf_size);
	memset(conf, 0, prov->conf_size);
	attr.priv = priv;
	status = sdp_devinfo_add(sink, &attr);
	if (status != DOCA_SUCCESS) {
		/* refused (the core logged why, e.g. a name already listed): still ours */
		if (prov->conf_clear != NULL)
			prov->conf_clear(priv);
		free(priv);
		if (status == DOCA_ERROR_NO_MEMORY)
			return status;
	}
	return DOCA_SUCCESS;
}

doca_error_t sdp_nic_enumerate(const struct sdp_nic_provider *prov,
			       const struct sdp_dev_decl *const *decls, size_t num_decls,
			       struct sdp_devinfo_sink *sink)
{
	char(*pci)[DOCA_DEVINFO_PCI_ADDR_SIZE] = NULL;
	const char **names = NULL;
	size_t *decl_of = NULL;
	uint8_t *confs = NULL;
	doca_error_t status = DOCA_SUCCESS;
	size_t n = 0;

	if (num_decls == 0)
		return DOCA_SUCCESS;
	confs = calloc(num_decls, prov->conf_size);
	names = calloc(num_decls, sizeof(*names));
	decl_of = calloc(num_decls, sizeof(*decl_of));
	pci = calloc(num_decls, sizeof(*pci));
	if (confs == NULL || names == NULL || decl_of == NULL || pci == NULL) {
		sdp_error("out of memory listing %zu %s devices", num_decls, prov->name);
		status = DOCA_ERROR_NO_MEMORY;
		goto out;
	}
	for (size_t i = 0; i < num_decls; i++) {
		uint8_t *conf = confs + n * prov->conf_size;

		if (n == SDP_NIC_MAX_DEVICES) {
			/* the bus is full: the rest is refused, the devices read so far stay */
			sdp_warn("%s: %s lists at most %d devices (the slots of its synthetic PCI "
				 "bus); this declaration and the %zu after it are not listed",
				 decls[i]->origin, prov->name, SDP_NIC_MAX_DEVICES,
				 num_decls - i - 1);
			break;
		}
		memset(conf, 0, prov->conf_size); /* a skipped one may have left bytes */
		status = prov->conf_read(decls, num_decls, i, conf);
		if (status == DOCA_ERROR_SKIPPED) {
			status = DOCA_SUCCESS;
			continue;
		}
		if (status != DOCA_SUCCESS)
			goto out;
		names[n] = (const char *)conf + prov->name_off;
		decl_of[n] = i;
		n++;
	}
	status = sdp_nic_pci_assign(prov->bus, names, n, pci);
	for (size_t k = 0; k < n && status == DOCA_SUCCESS; k++)
		status = nic_dev_list(prov, decls[decl_of[k]], confs + k * prov->conf_size, pci[k],
				      sink);
out:
	/* what was not handed to a devinfo (listed slots are zeroed) */
	for (size_t k = 0; k < n && prov->conf_clear != NULL; k++)
		prov->conf_clear(confs + k * prov->conf_size);
	free(pci);
	free(decl_of);
	free(names);
	free(confs);
	return status;
}

doca_error_t sdp_nic_dev_alloc(const char *provider, const struct sdp_devinfo_attr *attr,
			       size_t dev_size, size_t conf_size, void **dev_p)
{
	void *dev;

	if (attr == NULL || attr->priv == NULL || dev_p == NULL || dev_size < conf_size) {
		sdp_error("%s device %s: no configuration to open it with", provider,
			  attr != NULL ? attr->ibdev_name : "(null)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	dev = calloc(1, dev_size);
	if (dev == NULL) {
		sdp_error("out of memory opening %s device %s", provider, attr->ibdev_name);
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(dev, attr->priv, conf_size);
	*dev_p = dev;
	return DOCA_SUCCESS;
}

void sdp_nic_dev_close_port(const char *provider, const struct sdp_devinfo_attr *attr,
			    struct sdp_eth_port *port, void (*port_close)(struct sdp_eth_port *))
{
	if (port == NULL)
		return;
	sdp_warn("%s device %s closed with its port open; closing the port", provider,
		 attr->ibdev_name);
	port_close(port);
}
