/*
 * Test provider modules for test_dev, one per FIXTURE_* flag (tests/unit/providers/meson.build).
 *
 * FIXTURE_FAKE is a working provider that takes declarations
 *     fake:name=<ibdev>[,pci=<addr>][,type=pf|vf|sf][,sf=<index>][,fail_open=1][,raw=1]
 * (raw=1 hands the PCI address to the core unchecked, to test the core's own checks) and keeps
 * private data per devinfo and per open device, so leak checkers see any missed free. The other
 * flags build modules the loader must refuse (INTSYM, BIGSYM and WILDPTR export an
 * `sdp_provider` that is no pointer to a table: reading it as one would crash).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdp_log.h"
#include "sdp_provider.h"

SDP_LOG_COMPONENT("fixture");

#if defined(FIXTURE_FAKE)

struct fake_devinfo {
	int fail_open;
};

struct fake_dev {
	char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];
};

static doca_error_t fake_decl_check(const struct sdp_dev_decl *decl)
{
	const char *name = sdp_dev_decl_get(decl, "name");
	const char *type = sdp_dev_decl_get(decl, "type");
	const char *pci = sdp_dev_decl_get(decl, "pci");
	char norm[DOCA_DEVINFO_PCI_ADDR_SIZE];

	if (name == NULL || strlen(name) >= DOCA_DEVINFO_IBDEV_NAME_SIZE) {
		sdp_warn("%s: fake needs name=<ibdev> (< %d chars)", decl->origin,
			 DOCA_DEVINFO_IBDEV_NAME_SIZE);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (type != NULL && strcmp(type, "pf") != 0 && strcmp(type, "vf") != 0 &&
	    strcmp(type, "sf") != 0) {
		sdp_warn("%s: type must be pf, vf or sf", decl->origin);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (pci != NULL && sdp_dev_decl_get(decl, "raw") == NULL &&
	    sdp_pci_addr_normalize(pci, norm) != DOCA_SUCCESS) {
		sdp_warn("%s: bad pci address %s", decl->origin, pci);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t fake_enumerate(const struct sdp_dev_decl *const *decls, size_t num_decls,
				   struct sdp_devinfo_sink *sink)
{
	for (size_t i = 0; i < num_decls; i++) {
		const char *pci = sdp_dev_decl_get(decls[i], "pci");
		const char *type = sdp_dev_decl_get(decls[i], "type");
		const char *sf = sdp_dev_decl_get(decls[i], "sf");
		struct sdp_devinfo_attr attr = {0};
		struct fake_devinfo *priv;

		snprintf(attr.ibdev_name, sizeof(attr.ibdev_name), "%s",
			 sdp_dev_decl_get(decls[i], "name"));
		snprintf(attr.iface_name, sizeof(attr.iface_name), "fake%zu", i);
		snprintf(attr.pci_addr, sizeof(attr.pci_addr), "%s", pci ? pci : "0000:3b:00.0");
		attr.func_type = DOCA_PCI_FUNC_TYPE_PF;
		if (type != NULL && strcmp(type, "vf") == 0)
			attr.func_type = DOCA_PCI_FUNC_TYPE_VF;
		if (type != NULL && strcmp(type, "sf") == 0)
			attr.func_type = DOCA_PCI_FUNC_TYPE_SF;
		attr.sf_index = sf ? (uint32_t)strtoul(sf, NULL, 0) : 0;
		priv = calloc(1, sizeof(*priv));
		if (priv == NULL)
			return DOCA_ERROR_NO_MEMORY;
		priv->fail_open = sdp_dev_decl_get(decls[i], "fail_open") != NULL;
		attr.priv = priv;
		if (sdp_devinfo_add(sink, &attr) != DOCA_SUCCESS)
			free(priv); /* refused (logged by the core): still ours */
	}
	return DOCA_SUCCESS;
}

static doca_error_t fake_dev_open(const struct sdp_devinfo_attr *attr, void **dev_priv)
{
	const struct fake_devinfo *info = attr->priv;
	struct fake_dev *dev;

	if (info->fail_open) {
		sdp_error("fake device %s refuses to open (fail_open=1)", attr->ibdev_name);
		return DOCA_ERROR_DRIVER;
	}
	dev = calloc(1, sizeof(*dev));
	if (dev == NULL)
		return DOCA_ERROR_NO_MEMORY;
	snprintf(dev->name, sizeof(dev->name), "%s", attr->ibdev_name);
	*dev_priv = dev;
	return DOCA_SUCCESS;
}

static void fake_dev_close(const struct sdp_devinfo_attr *attr, void *dev_priv)
{
	(void)attr;
	free(dev_priv);
}

static const struct sdp_provider_ops fake_ops = {
	.abi_version = SDP_PROVIDER_ABI_VERSION,
	.name = "fake",
	.decl_check = fake_decl_check,
	.enumerate = fake_enumerate,
	.dev_open = fake_dev_open,
	.dev_close = fake_dev_close,
	.devinfo_free = free,
	.eth = NULL, /* provider ABI 2: a device without an Ethernet port */
};
SDP_PROVIDER_DEFINE(fake_ops);

#elif defined(FIXTURE_NOSYM)

/* A shared object that is no provider at all. */
__attribute__((visibility("default"))) int sdp_fixture_not_a_provider(void);
int sdp_fixture_not_a_provider(void)
{
	return 42;
}

#elif defined(FIXTURE_INTSYM)

/* The symbol is an int, not a pointer: read as a table it would crash the loader. */
__attribute__((visibility("default"))) int sdp_provider = 5;

#elif defined(FIXTURE_BIGSYM)

/* The symbol is a 200-byte object of garbage. */
__attribute__((visibility("default"))) const struct {
	unsigned char bytes[200];
} sdp_provider = {{0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04}};

#elif defined(FIXTURE_WILDPTR)

/* The symbol has a pointer's size but points at no table of the module. */
__attribute__((visibility("default"))) const struct sdp_provider_ops *const sdp_provider =
	(const struct sdp_provider_ops *)(uintptr_t)0x10;

#else

#if !defined(FIXTURE_NOENUM)
static doca_error_t broken_enumerate(const struct sdp_dev_decl *const *decls, size_t num_decls,
				     struct sdp_devinfo_sink *sink)
{
	struct sdp_devinfo_attr attr = {.pci_addr = "0000:01:00.0"};

	(void)decls;
	(void)num_decls;
	/* never reached: the loader refuses these modules */
	snprintf(attr.ibdev_name, sizeof(attr.ibdev_name), "must_not_appear");
	return sdp_devinfo_add(sink, &attr);
}
#endif

#if defined(FIXTURE_FAILINIT)
static doca_error_t failing_init(void)
{
	sdp_error("failinit fixture: init fails on purpose");
	return DOCA_ERROR_DRIVER;
}
#endif

static const struct sdp_provider_ops broken_ops = {
#if defined(FIXTURE_BADABI)
	.abi_version = 999,
	.name = "badabi",
	.enumerate = broken_enumerate,
#elif defined(FIXTURE_NOENUM)
	.abi_version = SDP_PROVIDER_ABI_VERSION,
	.name = "noenum",
#elif defined(FIXTURE_MISNAMED)
	.abi_version = SDP_PROVIDER_ABI_VERSION,
	.name = "somethingelse",
	.enumerate = broken_enumerate,
#elif defined(FIXTURE_LONGNAME)
	/* longer than any provider name: its length is read no further than the limit */
	.abi_version = SDP_PROVIDER_ABI_VERSION,
	.name = "longname_that_runs_past_the_provider_name_limit",
	.enumerate = broken_enumerate,
#elif defined(FIXTURE_FAILINIT)
	.abi_version = SDP_PROVIDER_ABI_VERSION,
	.name = "failinit",
	.init = failing_init,
	.enumerate = broken_enumerate,
#else
#error "define one FIXTURE_* flag"
#endif
};
SDP_PROVIDER_DEFINE(broken_ops);

#endif
