/*
 * softdpu internal: facts about a Linux network interface, for the software NIC backends that
 * sit on one (afpacket, afxdp): the declaration's iface= check, the device list attributes
 * (the interface's own PCI function or none, link state), link state now, MAC and MTU.
 * Compiled into each backend (nic_iface.c).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_NIC_IFACE_H_
#define SDP_NIC_IFACE_H_

#include "doca_error.h"
#include "sdp_provider.h"

/*
 * The doca_error_t of an errno from a socket, ioctl or bpf call: EPERM/EACCES NOT_PERMITTED,
 * ENOMEM/ENOBUFS NO_MEMORY, ENODEV/ENXIO/ENOENT NOT_FOUND, EBUSY/EEXIST IN_USE,
 * EINVAL/EOPNOTSUPP/EAFNOSUPPORT/EPROTONOSUPPORT NOT_SUPPORTED, else OPERATING_SYSTEM.
 */
doca_error_t sdp_nic_errno_status(int err);

/* 1 when iface (the value of iface=, maybe NULL) is a Linux interface name; else logs, 0. */
int sdp_nic_iface_name_ok(const struct sdp_dev_decl *decl, const char *provider, const char *iface);

/*
 * conf_attr of sdp_nic_enumerate for a device on iface: 0 (logged) when the interface does not
 * exist now; else the interface name, its PCI function when it has one, and its link state.
 */
int sdp_nic_iface_attr(const struct sdp_dev_decl *decl, const char *iface, const char *name,
		       struct sdp_devinfo_attr *attr);

/* Link state of iface: 1 up, 0 down (or unreadable). */
int sdp_nic_iface_link_up(const char *iface);

/*
 * MAC and MTU of iface into info (the MTU capped so a frame with one VLAN tag fits
 * SDP_ETH_MAX_FRAME). Logs as "<provider> device <name>" and returns the error otherwise.
 */
doca_error_t sdp_nic_iface_read(const char *provider, const char *name, const char *iface,
				struct sdp_eth_port_info *info);

#endif /* SDP_NIC_IFACE_H_ */
