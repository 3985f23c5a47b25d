/*
 * softdpu: DOCA devices (doca_devinfo, doca_dev).
 *
 * Devices come from provider modules that libdoca_common loads at run time (docs/devices.md):
 * the `host` provider always contributes `softdpu0` plus one alias devinfo per name in
 * SOFTDPU_HOST_DEV_ALIASES (default "mlx5_0"); later providers add the devices declared in
 * SOFTDPU_DEVICES or the device configuration file.
 *
 * Representors: softdpu devices expose none. doca_devinfo_rep_create_list() therefore answers
 * DOCA_ERROR_NOT_SUPPORTED (logged), which is what DOCA documents for a local device without
 * representors; no doca_devinfo_rep or doca_dev_rep object ever exists, so the calls that take
 * one answer DOCA_ERROR_INVALID_VALUE.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_DEV_H_
#define DOCA_DEV_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_devinfo;
struct doca_devinfo_rep;
struct doca_dev;
struct doca_dev_rep;

/* Representor kinds for doca_devinfo_rep_create_list(); bits, OR-able. */
enum doca_devinfo_rep_filter {
	DOCA_DEVINFO_REP_FILTER_ALL = 0,
	DOCA_DEVINFO_REP_FILTER_NET = 1 << 1,
	DOCA_DEVINFO_REP_FILTER_EMULATED = 1 << 2,
};

/* Buffer sizes, each counting the terminating NUL. */
#define DOCA_DEVINFO_IFACE_NAME_SIZE 256
#define DOCA_DEVINFO_IBDEV_NAME_SIZE 64
/* "dddd:bb:dd.f" */
#define DOCA_DEVINFO_PCI_ADDR_SIZE 13
/* "bb:dd.f" */
#define DOCA_DEVINFO_PCI_BDF_SIZE 8
#define DOCA_DEVINFO_REP_VUID_SIZE 128
#define DOCA_DEVINFO_REP_PCI_ADDR_SIZE 13
#define DOCA_DEVINFO_REP_PCI_BDF_SIZE 8

/*
 * A snapshot of the devices present now: (*dev_list)[0 .. *nb_devs-1]. Destroy it with
 * doca_devinfo_destroy_list(); its entries die with it, except those held by an open doca_dev
 * (doca_dev_as_devinfo() stays valid until the device is closed). An empty list is a success
 * (*nb_devs = 0).
 */
DOCA_STABLE
doca_error_t doca_devinfo_create_list(struct doca_devinfo ***dev_list, uint32_t *nb_devs);

DOCA_STABLE
doca_error_t doca_devinfo_destroy_list(struct doca_devinfo **dev_list);

/* Always DOCA_ERROR_NOT_SUPPORTED for valid arguments: softdpu devices have no representors. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_create_list(struct doca_dev *dev, int filter,
					  struct doca_devinfo_rep ***dev_list_rep,
					  uint32_t *nb_devs_rep);

/* No representor list can exist: DOCA_ERROR_INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_destroy_list(struct doca_devinfo_rep **dev_list_rep);

/*
 * Open the device, or take one more reference on it when it is already open (through this or
 * any other devinfo of the same device name). Every successful open needs one doca_dev_close().
 */
DOCA_STABLE
doca_error_t doca_dev_open(struct doca_devinfo *devinfo, struct doca_dev **dev);

/*
 * Drop one reference; the last one closes the device. DOCA_ERROR_IN_USE (nothing changes) when
 * the last reference would go while an mmap or a context still uses the device.
 */
DOCA_STABLE
doca_error_t doca_dev_close(struct doca_dev *dev);

/* No representor can be opened: DOCA_ERROR_NOT_SUPPORTED (logged). */
DOCA_STABLE
doca_error_t doca_dev_rep_open(struct doca_devinfo_rep *devinfo, struct doca_dev_rep **dev_rep);

/* The devinfo the device was opened from; NULL for a NULL dev. Valid while dev is open. */
DOCA_STABLE
struct doca_devinfo *doca_dev_as_devinfo(const struct doca_dev *dev);

/* Writes DOCA_DEVINFO_PCI_ADDR_SIZE bytes: "dddd:bb:dd.f", lower-case hex. */
DOCA_STABLE
doca_error_t doca_devinfo_get_pci_addr_str(const struct doca_devinfo *devinfo, char *pci_addr_str);

DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_pci_func_type(const struct doca_devinfo *devinfo,
					    enum doca_pci_func_type *pci_func_type);

/*
 * *is_equal = 1 when pci_addr_str names the device's function. Accepts "dddd:bb:dd.f" and
 * "bb:dd.f" (domain 0000), hex digits in either case; anything else is DOCA_ERROR_INVALID_VALUE.
 */
DOCA_STABLE
doca_error_t doca_devinfo_is_equal_pci_addr(const struct doca_devinfo *devinfo,
					    const char *pci_addr_str, uint8_t *is_equal);

/* size must hold the name and its NUL (DOCA_DEVINFO_IFACE_NAME_SIZE always does). */
DOCA_STABLE
doca_error_t doca_devinfo_get_iface_name(const struct doca_devinfo *devinfo, char *iface_name,
					 uint32_t size);

/* size must hold the name and its NUL (DOCA_DEVINFO_IBDEV_NAME_SIZE always does). */
DOCA_STABLE
doca_error_t doca_devinfo_get_ibdev_name(const struct doca_devinfo *devinfo, char *ibdev_name,
					 uint32_t size);

/* DOCA_ERROR_NOT_SUPPORTED unless the device is a scalable function (DOCA_PCI_FUNC_TYPE_SF). */
DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_sf_index(const struct doca_devinfo *devinfo, uint32_t *sf_index);

/* No representor can exist: DOCA_ERROR_INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_get_vuid(const struct doca_devinfo_rep *devinfo_rep, char *rep_vuid,
				       uint32_t size);

/* No representor can exist: DOCA_ERROR_INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_is_equal_pci_addr(const struct doca_devinfo_rep *devinfo_rep,
						const char *pci_addr_str, uint8_t *is_equal);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DEV_H_ */
