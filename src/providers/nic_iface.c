/*
 * Facts about a Linux network interface for the backends on one (sdp_nic_iface.h).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <limits.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sdp_log.h"
#include "sdp_nic_iface.h"
#include "sdp_provider.h"
#include "sdp_provider_eth.h"

SDP_LOG_COMPONENT("nic");

#define IFACE_VLAN_HLEN 4

doca_error_t sdp_nic_errno_status(int err)
{
	switch (err) {
	case EPERM:
	case EACCES:
		return DOCA_ERROR_NOT_PERMITTED;
	case ENOMEM:
	case ENOBUFS:
		return DOCA_ERROR_NO_MEMORY;
	case ENODEV:
	case ENXIO:
	case ENOENT:
		return DOCA_ERROR_NOT_FOUND;
	case EBUSY:
	case EEXIST:
		return DOCA_ERROR_IN_USE;
	case EINVAL:
	case EOPNOTSUPP:
	case EAFNOSUPPORT:
	case EPROTONOSUPPORT:
		return DOCA_ERROR_NOT_SUPPORTED;
	default:
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
}

/* 1 when text is a full "dddd:bb:dd.f" PCI address (written into out). */
static int is_pci_addr(const char *text, char out[DOCA_DEVINFO_PCI_ADDR_SIZE])
{
	return strlen(text) == DOCA_DEVINFO_PCI_ADDR_SIZE - 1 &&
	       sdp_pci_addr_normalize(text, out) == DOCA_SUCCESS;
}

/*
 * The PCI function behind iface: the last PCI address on the sysfs path of its `device` link
 * (a virtio or USB network device sits below its PCI function). 0 for a virtual interface.
 */
static int iface_pci_addr(const char *iface, char out[DOCA_DEVINFO_PCI_ADDR_SIZE])
{
	char link[PATH_MAX], real[PATH_MAX];
	char *slash;

	snprintf(link, sizeof(link), "/sys/class/net/%s/device", iface);
	if (realpath(link, real) == NULL)
		return 0;
	while ((slash = strrchr(real, '/')) != NULL) {
		if (is_pci_addr(slash + 1, out))
			return 1;
		*slash = '\0';
	}
	return 0;
}

/* IFF_UP and IFF_RUNNING, or -1 when the flags cannot be read. */
static int iface_flags_up(const char *iface)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int up = -1;

	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", iface);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0)
		up = (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
	close(fd);
	return up;
}

int sdp_nic_iface_link_up(const char *iface)
{
	char path[PATH_MAX], state[32] = "";
	FILE *f;
	int up;

	snprintf(path, sizeof(path), "/sys/class/net/%s/operstate", iface);
	f = fopen(path, "re");
	if (f != NULL) {
		if (fgets(state, sizeof(state), f) == NULL)
			state[0] = '\0';
		fclose(f);
		state[strcspn(state, "\n")] = '\0';
	}
	if (strcmp(state, "up") == 0)
		return 1;
	if (state[0] != '\0' && strcmp(state, "unknown") != 0)
		return 0; /* down, lowerlayerdown, dormant, notpresent, testing */
	/* lo and some tunnels say "unknown": the flags tell */
	up = iface_flags_up(iface);
	return up > 0;
}

int sdp_nic_iface_name_ok(const struct sdp_dev_decl *decl, const char *provider, const char *iface)
{
	if (iface == NULL) {
		sdp_warn("%s: provider %s needs iface=<linux interface name>", decl->origin,
			 provider);
		return 0;
	}
	if (strlen(iface) >= IFNAMSIZ || strchr(iface, '/') != NULL || strcmp(iface, ".") == 0 ||
	    strcmp(iface, "..") == 0) {
		sdp_warn("%s: iface '%s' is not a Linux interface name (at most %d characters, no "
			 "'/')",
			 decl->origin, iface, IFNAMSIZ - 1);
		return 0;
	}
	return 1;
}

/*
 * An interface that does not exist now is left out of this list. Every declared name took a
 * slot of the synthetic bus, so an address does not depend on which interfaces exist; a PCI
 * interface reports its own address instead.
 */
int sdp_nic_iface_attr(const struct sdp_dev_decl *decl, const char *iface, const char *name,
		       struct sdp_devinfo_attr *attr)
{
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];

	if (if_nametoindex(iface) == 0) {
		sdp_warn("%s: interface %s: %m; device %s left out of the list", decl->origin,
			 iface, name);
		return 0;
	}
	snprintf(attr->iface_name, sizeof(attr->iface_name), "%s", iface);
	if (iface_pci_addr(iface, pci))
		memcpy(attr->pci_addr, pci, sizeof(attr->pci_addr));
	attr->link_up = sdp_nic_iface_link_up(iface);
	return 1;
}

doca_error_t sdp_nic_iface_read(const char *provider, const char *name, const char *iface,
				struct sdp_eth_port_info *info)
{
	struct ifreq ifr;
	doca_error_t status = DOCA_SUCCESS;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		int err = errno;

		sdp_error("%s device %s: socket for interface ioctls: %m", provider, name);
		return sdp_nic_errno_status(err);
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", iface);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) != 0) {
		int err = errno;

		sdp_error("%s device %s: SIOCGIFHWADDR on %s: %m", provider, name, iface);
		status = sdp_nic_errno_status(err);
		goto out;
	}
	memcpy(info->mac, ifr.ifr_hwaddr.sa_data, sizeof(info->mac));
	if (ioctl(fd, SIOCGIFMTU, &ifr) != 0) {
		int err = errno;

		sdp_error("%s device %s: SIOCGIFMTU on %s: %m", provider, name, iface);
		status = sdp_nic_errno_status(err);
		goto out;
	}
	info->mtu = (uint32_t)ifr.ifr_mtu;
	if (info->mtu + ETH_HLEN + IFACE_VLAN_HLEN > SDP_ETH_MAX_FRAME)
		info->mtu = SDP_ETH_MAX_FRAME - ETH_HLEN - IFACE_VLAN_HLEN; /* lo: 65536 */
out:
	close(fd);
	return status;
}
