/*
 * softdpu internal: the device provider module ABI, and what the rest of softdpu may ask about
 * devices.
 *
 * A provider is a shared module named sdp_provider_<name>.so that exports one object,
 *
 *     SDP_PROVIDER_DEFINE(my_ops);    (defines `const struct sdp_provider_ops *sdp_provider`)
 *
 * libdoca_common loads every module it finds (dlopen RTLD_NOW | RTLD_LOCAL) the first time a
 * device list is asked for; a module that fails to load, lacks the symbol, exports one that is
 * not a pointer-sized object leading to a whole table inside the module (checked through the ELF
 * symbol entry before anything is read through it), carries another abi_version, another name than its file, or lacks `enumerate` is skipped and the reason is
 * logged (and kept: sdp_provider_get_issues). Search path and device declarations:
 * docs/devices.md.
 *
 * ABI rule: abi_version must equal SDP_PROVIDER_ABI_VERSION exactly. Any change to the structs
 * below (new ops for the ethernet backends, new devinfo fields) bumps it; modules are built
 * with the library, so an old module is refused with a clear reason rather than misread.
 *
 * Threads: the core calls a provider's ops with its device lock held, one call at a time.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_PROVIDER_H_
#define SDP_PROVIDER_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_dev.h"
#include "doca_error.h"
#include "doca_types.h"
#include "sdp_provider_eth.h"

/*
 * 2: struct sdp_provider_ops gained `eth` (the Ethernet port ops of the software NIC backends).
 * 3: struct sdp_eth_port_ops gained `stats` (frames the backend lost on its own).
 * 4: struct sdp_eth_port_ops gained `steer`; struct sdp_eth_port_stats AF_XDP's counters.
 */
#define SDP_PROVIDER_ABI_VERSION 4u
/* The symbol every module exports: a pointer to its ops. */
#define SDP_PROVIDER_SYMBOL "sdp_provider"
#define SDP_PROVIDER_FILE_PREFIX "sdp_provider_"
#define SDP_PROVIDER_NAME_MAX 32

/* One key=value of a device declaration. */
struct sdp_dev_param {
	const char *key;
	const char *value;
};

/*
 * One device declaration, e.g. `loop:name=wire0,peer=wire1` from SOFTDPU_DEVICES or the device
 * configuration file. Keys are [A-Za-z0-9_.-]+, values are non-empty and contain no ',' ';' or
 * '#'; the core has checked the syntax, the provider checks the meaning.
 */
struct sdp_dev_decl {
	const char *provider;
	const char *
		origin; /* "SOFTDPU_DEVICES entry 2", "/etc/softdpu/devices.conf:7": for messages */
	size_t num_params;
	const struct sdp_dev_param *params;
};

/* The value of key in decl, or NULL when absent. */
const char *sdp_dev_decl_get(const struct sdp_dev_decl *decl, const char *key);

/* What a provider tells about one device. */
struct sdp_devinfo_attr {
	char ibdev_name[DOCA_DEVINFO_IBDEV_NAME_SIZE]; /* unique among all devices, non-empty */
	char iface_name[DOCA_DEVINFO_IFACE_NAME_SIZE]; /* may be empty */
	char pci_addr[DOCA_DEVINFO_PCI_ADDR_SIZE];     /* "dddd:bb:dd.f"; "bb:dd.f" accepted */
	enum doca_pci_func_type func_type;
	uint32_t sf_index; /* meaningful for DOCA_PCI_FUNC_TYPE_SF only */
	int link_up;
	/* The provider's own data for this devinfo; handed to devinfo_free when it dies. */
	void *priv;
};

/* The list being built by doca_devinfo_create_list(). */
struct sdp_devinfo_sink;

/*
 * Add one device to the list (the attr is copied). DOCA_ERROR_INVALID_VALUE (logged) for a bad
 * attr, DOCA_ERROR_ALREADY_EXIST (logged) for an ibdev name already in the list,
 * DOCA_ERROR_NO_MEMORY. On failure attr->priv stays the provider's.
 */
doca_error_t sdp_devinfo_add(struct sdp_devinfo_sink *sink, const struct sdp_devinfo_attr *attr);

struct sdp_provider_ops {
	uint32_t abi_version; /* SDP_PROVIDER_ABI_VERSION */
	const char *name;     /* the <name> of sdp_provider_<name>.so */

	/* Optional: once, after the module is loaded. An error skips the provider. */
	doca_error_t (*init)(void);

	/*
	 * Optional: check one declaration naming this provider, once, when declarations are read.
	 * Return DOCA_SUCCESS to keep it, or an error after logging why (with decl->origin).
	 * Without it, every declaration naming this provider is refused.
	 */
	doca_error_t (*decl_check)(const struct sdp_dev_decl *decl);

	/*
	 * Required: add the provider's devices to sink with sdp_devinfo_add(): the ones it always
	 * has and one per kept declaration (decls[0 .. num_decls-1]). Runs at every
	 * doca_devinfo_create_list(). An error makes the list miss this provider's devices (the
	 * ones added stay) and is not returned to the application.
	 */
	doca_error_t (*enumerate)(const struct sdp_dev_decl *const *decls, size_t num_decls,
				  struct sdp_devinfo_sink *sink);

	/*
	 * Optional: open the device (first doca_dev_open of it); *dev_priv is kept with the
	 * doca_dev (sdp_dev_get_priv). An error fails doca_dev_open with it.
	 */
	doca_error_t (*dev_open)(const struct sdp_devinfo_attr *attr, void **dev_priv);

	/* Optional: the last doca_dev_close. */
	void (*dev_close)(const struct sdp_devinfo_attr *attr, void *dev_priv);

	/* Optional: a devinfo whose attr.priv is not NULL dies. */
	void (*devinfo_free)(void *priv);

	/*
	 * The Ethernet port of this provider's devices (sdp_provider_eth.h), or NULL for a
	 * provider whose devices carry no Ethernet queues (host). port_open gets the dev_priv of
	 * dev_open, so a provider with `eth` has a dev_open. The engine holds the doca_dev
	 * (sdp_dev_hold) while a port of it is open, so dev_close never meets an open port.
	 */
	const struct sdp_eth_port_ops *eth;
};

#define SDP_PROVIDER_DEFINE(ops)                                                                   \
	__attribute__((visibility("default"))) const struct sdp_provider_ops *const sdp_provider = \
		&(ops)

/* ---- for softdpu's libraries, daemons and tools ---------------------------------------------- */

/* Load the providers and read the declarations now (done once; later calls return at once). */
doca_error_t sdp_providers_load(void);

/* A module skipped, a declaration refused: where and why, in the order met. */
struct sdp_provider_issue {
	const char *where; /* module path or declaration origin */
	const char *reason;
};

/*
 * The issues met while loading (valid until the process ends). *issues may be NULL when the
 * count is 0. Loads the providers first if needed.
 */
size_t sdp_provider_get_issues(const struct sdp_provider_issue **issues);

/* Loaded providers, in load order: name and module path; NULL past the end. */
const char *sdp_provider_get_name(size_t idx);
const char *sdp_provider_get_path(size_t idx);

/* The device's provider name ("host", ...), its attributes and its per-device private data. */
const char *sdp_devinfo_get_provider_name(const struct doca_devinfo *devinfo);
const struct sdp_devinfo_attr *sdp_devinfo_get_attr(const struct doca_devinfo *devinfo);
const struct sdp_provider_ops *sdp_dev_get_provider_ops(const struct doca_dev *dev);
void *sdp_dev_get_priv(const struct doca_dev *dev);
/* The Ethernet port ops of an open device's provider; NULL for a bad dev or one without. */
const struct sdp_eth_port_ops *sdp_dev_get_eth_ops(const struct doca_dev *dev);
/* The same for a listed device (capability queries); NULL for a bad devinfo or one without. */
const struct sdp_eth_port_ops *sdp_devinfo_get_eth_ops(const struct doca_devinfo *devinfo);

/*
 * An object built on a device (an mmap, a UROM service, an eth queue) holds it while it uses
 * it: doca_dev_close() of the last reference answers DOCA_ERROR_IN_USE while holds remain.
 * Every hold needs one release.
 */
void sdp_dev_hold(struct doca_dev *dev);
void sdp_dev_release(struct doca_dev *dev);

/*
 * Parse "dddd:bb:dd.f" or "bb:dd.f" (hex, either case) into the normalised lower-case
 * "dddd:bb:dd.f" (DOCA_DEVINFO_PCI_ADDR_SIZE bytes). DOCA_ERROR_INVALID_VALUE, not logged,
 * for anything else.
 */
doca_error_t sdp_pci_addr_normalize(const char *in, char out[DOCA_DEVINFO_PCI_ADDR_SIZE]);

/*
 * Parse device declarations (docs/devices.md). `text` holds declarations separated by ';'; with
 * `lines` nonzero (a file) also by newlines, and '#' starts a comment. Each declaration's origin
 * is "<source> entry <n>" (n counts the ';'-separated fields from 1) or, with `lines`,
 * "<source>:<line>". Each good declaration is handed to cb (valid during the call only); each
 * malformed one is logged (WARNING) and handed to bad_cb (may be NULL) with the reason. Returns
 * the number of good declarations.
 */
typedef void (*sdp_decl_cb_t)(const struct sdp_dev_decl *decl, void *arg);
typedef void (*sdp_decl_bad_cb_t)(const char *origin, const char *reason, void *arg);
size_t sdp_dev_decl_parse(const char *text, const char *source, int lines, sdp_decl_cb_t cb,
			  sdp_decl_bad_cb_t bad_cb, void *arg);

#endif /* SDP_PROVIDER_H_ */
