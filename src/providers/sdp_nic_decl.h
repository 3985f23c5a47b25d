/*
 * softdpu internal: helpers the software NIC provider modules (loop, gen, ...) share to read
 * their device declarations, to give their devices stable synthetic identities, and to list,
 * open and close those devices (the enumerate / dev_open / dev_close boilerplate).
 *
 * Compiled into each module (src/providers/nic_decl.c, src/providers/nic_dev.c); nothing here
 * is exported.
 *
 * Synthetic PCI addresses live in domain ffff, which no real PCI function has. Each provider
 * owns one bus of it so providers never collide with each other or with the host device
 * (ffff:00:00.0): see SDP_NIC_BUS_* and docs/devices.md.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_NIC_DECL_H_
#define SDP_NIC_DECL_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_types.h"
#include "sdp_provider.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bus numbers of domain ffff: 00 is the host device, then one per software NIC provider. */
#define SDP_NIC_BUS_LOOP 0x01
#define SDP_NIC_BUS_GEN 0x02
#define SDP_NIC_BUS_PCAP 0x03
#define SDP_NIC_BUS_AFPACKET 0x04
#define SDP_NIC_BUS_AFXDP 0x05

/* Devices one provider lists: the slots (32 devices x 8 functions) of its synthetic bus. */
#define SDP_NIC_MAX_DEVICES 256

/* 32-bit FNV-1a of a string: the stable hash behind synthetic addresses. */
uint32_t sdp_nic_hash(const char *s);

/*
 * Refuse (logging the reason with decl->origin) a declaration with a key outside `known`
 * (NULL-terminated) or a key given twice. Returns 1 when every key is known and single.
 */
int sdp_nic_decl_keys_ok(const struct sdp_dev_decl *decl, const char *const *known);

/* Check an ibdev-style name given by `key`: 1..63 chars of [A-Za-z0-9_.-]; logs and 0 if not. */
int sdp_nic_decl_name_ok(const struct sdp_dev_decl *decl, const char *key, const char *name);

/*
 * A declaration number: decimal digits only (no sign, blank, or 0x / leading-0 base prefix:
 * "010" is ten). DOCA_SUCCESS with *value_p set, DOCA_ERROR_INVALID_VALUE for anything but
 * digits, DOCA_ERROR_TOO_BIG beyond 64 bits; not logged.
 */
doca_error_t sdp_nic_parse_decimal(const char *text, uint64_t *value_p);

/*
 * The decimal integer (sdp_nic_parse_decimal) of `key` within [min, max]: 1 with *value_p set,
 * or 0 after logging why (not a decimal number / out of range). An absent key gives def (not
 * checked against the range).
 */
int sdp_nic_decl_uint(const struct sdp_dev_decl *decl, const char *key, uint64_t min, uint64_t max,
		      uint64_t def, uint64_t *value_p);

/* A MAC written aa:bb:cc:dd:ee:ff (hex, either case): 1 with mac set, 0 when malformed. */
int sdp_nic_parse_mac(const char *text, uint8_t mac[6]);

/*
 * A locally administered unicast MAC derived from name: 02:<tag>:<4 bytes of its hash>, so
 * devices of different providers (tag) and names differ.
 */
void sdp_nic_default_mac(const char *name, uint8_t tag, uint8_t mac[6]);

/*
 * Give each of names[0..n-1] a synthetic PCI address "ffff:<bus>:dd.f" in out[i]: the slot
 * (device << 3 | function) starts at the name's hash and moves on past slots already taken, with
 * the names taken in sorted order, so an address depends only on the set of names declared and
 * is the same in every process declaring the same set. Fails (INVALID_VALUE, logged) beyond 256
 * names or with a NULL/empty name.
 */
doca_error_t sdp_nic_pci_assign(uint8_t bus, const char *const *names, size_t n,
				char (*out)[DOCA_DEVINFO_PCI_ADDR_SIZE]);

/* ---- devices (nic_dev.c) --------------------------------------------------------------------- */

/*
 * How a provider's declarations become devices, for sdp_nic_enumerate(). Each listed device
 * keeps a heap copy of its configuration (a struct of conf_size bytes) as its devinfo priv: the
 * provider's devinfo_free releases it (free, after conf_clear where conf holds more), and its
 * dev_open starts from it (sdp_nic_dev_alloc).
 */
struct sdp_nic_provider {
	const char *name; /* "loop": for messages */
	uint8_t bus;	  /* SDP_NIC_BUS_*: where the synthetic PCI addresses live */
	size_t conf_size;
	size_t name_off; /* offsetof the device name (a char array) in the configuration */
	/*
	 * Read decls[i] (accepted by decl_check) into conf (conf_size zeroed bytes). DOCA_SUCCESS
	 * lists it; DOCA_ERROR_SKIPPED leaves it out (the callback says why); anything else ends
	 * the listing with that error. Either error leaves conf holding nothing.
	 */
	doca_error_t (*conf_read)(const struct sdp_dev_decl *const *decls, size_t num_decls,
				  size_t i, void *conf);
	/*
	 * Optional: finish the attributes of a device about to be listed, which come with the
	 * device name as ibdev and interface name, its synthetic PCI address, PF and link up.
	 * Returns 0 to leave the device out of this list (after logging why).
	 */
	int (*conf_attr)(const struct sdp_dev_decl *decl, const void *conf,
			 struct sdp_devinfo_attr *attr);
	/* Optional: release what a configuration holds (not the configuration itself). */
	void (*conf_clear)(void *conf);
};

/*
 * The provider's enumerate: read every declaration (conf_read), give the devices kept a
 * synthetic PCI address on prov->bus (sdp_nic_pci_assign over their names), and add each one
 * (conf_attr) to sink. A device the core refuses (a name already listed) is skipped, as the
 * core logs; DOCA_ERROR_NO_MEMORY or an error of conf_read ends the listing and is returned.
 */
doca_error_t sdp_nic_enumerate(const struct sdp_nic_provider *prov,
			       const struct sdp_dev_decl *const *decls, size_t num_decls,
			       struct sdp_devinfo_sink *sink);

/*
 * The start of a dev_open: a zeroed device state of dev_size bytes whose first conf_size bytes
 * are a copy of the configuration the devinfo keeps (attr->priv), so the configuration struct
 * must be the first member of the device's. INVALID_VALUE (no configuration) or NO_MEMORY,
 * logged.
 */
doca_error_t sdp_nic_dev_alloc(const char *provider, const struct sdp_devinfo_attr *attr,
			       size_t dev_size, size_t conf_size, void **dev_p);

/*
 * For dev_close: a port still open (only a misuse gets here: the engine holds the device while
 * its port is open) is closed with port_close, with a warning. Nothing when port is NULL.
 */
void sdp_nic_dev_close_port(const char *provider, const struct sdp_devinfo_attr *attr,
			    struct sdp_eth_port *port, void (*port_close)(struct sdp_eth_port *));

#ifdef __cplusplus
}
#endif

#endif /* SDP_NIC_DECL_H_ */
