/*
 * DOCA devices: devinfo lists built from the providers, and reference-counted open devices.
 *
 * A devinfo is shared by its list and by the device opened from it (a count under g_dev.lock),
 * so a list may be destroyed while its devices stay open. Open devices are kept in one table:
 * opening a device that is already open, through any devinfo with the same provider and ibdev
 * name, takes one more reference on the same doca_dev.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "doca_dev.h"
#include "sdp_check.h"
#include "sdp_dev_int.h"
#include "sdp_list.h"
#include "sdp_log.h"
#include "sdp_provider.h"

SDP_LOG_COMPONENT("dev");

#define DEVINFO_MAGIC 0x5d0cde41u
#define DEV_MAGIC 0x5d0cde42u
#define LIST_MAGIC 0x5d0cde43u

struct doca_devinfo {
	uint32_t magic;
	unsigned refcount; /* the list, plus one per open doca_dev using it; under g_dev.lock */
	const struct sdp_provider_ops *ops;
	struct sdp_devinfo_attr attr;
};

struct doca_dev {
	uint32_t magic;
	unsigned refcount; /* doca_dev_open calls not yet closed; under g_dev.lock */
	unsigned holds;	   /* sdp_dev_hold users (mmaps, contexts); under g_dev.lock */
	struct doca_devinfo *devinfo;
	void *priv;
	sdp_list_link_t link; /* g_dev.open */
};

/* What doca_devinfo_create_list hands out points at items[]. */
struct devinfo_list {
	uint32_t magic;
	uint32_t num;
	struct doca_devinfo *items[]; /* num entries and a NULL */
};

struct sdp_devinfo_sink {
	const struct sdp_provider_ops *ops; /* the provider enumerating now */
	struct doca_devinfo **items;
	size_t num;
	size_t cap;
};

static struct {
	pthread_mutex_t lock;
	sdp_list_link_t open;
} g_dev = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.open = SDP_LIST_HEAD_INIT(g_dev.open),
};

static int devinfo_ok(const struct doca_devinfo *devinfo)
{
	return devinfo != NULL && devinfo->magic == DEVINFO_MAGIC;
}

/* Called with g_dev.lock held. */
static void devinfo_put(struct doca_devinfo *devinfo)
{
	if (--devinfo->refcount > 0)
		return;
	if (devinfo->attr.priv != NULL && devinfo->ops->devinfo_free != NULL)
		devinfo->ops->devinfo_free(devinfo->attr.priv);
	devinfo->magic = 0;
	free(devinfo);
}

/* ---- building lists (provider side) ---------------------------------------------------------- */

doca_error_t sdp_devinfo_add(struct sdp_devinfo_sink *sink, const struct sdp_devinfo_attr *attr)
{
	const char *who = (sink != NULL && sink->ops != NULL) ? sink->ops->name : "?";
	struct doca_devinfo *devinfo;
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];

	if (sink == NULL || attr == NULL) {
		sdp_error("provider '%s': NULL %s", who, sink == NULL ? "sink" : "attr");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (attr->ibdev_name[0] == '\0' ||
	    memchr(attr->ibdev_name, '\0', sizeof(attr->ibdev_name)) == NULL ||
	    memchr(attr->iface_name, '\0', sizeof(attr->iface_name)) == NULL) {
		sdp_error("provider '%s' gave a device with an empty or unterminated name", who);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (sdp_pci_addr_normalize(attr->pci_addr, pci) != DOCA_SUCCESS) {
		sdp_error("provider '%s': device %s has a bad PCI address '%.*s'", who,
			  attr->ibdev_name, (int)sizeof(attr->pci_addr), attr->pci_addr);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (attr->func_type != DOCA_PCI_FUNC_TYPE_PF && attr->func_type != DOCA_PCI_FUNC_TYPE_VF &&
	    attr->func_type != DOCA_PCI_FUNC_TYPE_SF) {
		sdp_error("provider '%s': device %s has an unknown PCI function type %d", who,
			  attr->ibdev_name, (int)attr->func_type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	for (size_t i = 0; i < sink->num; i++) {
		if (strcmp(sink->items[i]->attr.ibdev_name, attr->ibdev_name) == 0) {
			sdp_warn("provider '%s': device name %s is taken by provider '%s', skipped",
				 who, attr->ibdev_name, sink->items[i]->ops->name);
			return DOCA_ERROR_ALREADY_EXIST;
		}
	}
	if (sink->num + 1 >= sink->cap) {
		size_t cap = sink->cap ? sink->cap * 2 : 8;
		struct doca_devinfo **items = realloc(sink->items, cap * sizeof(*items));

		if (items == NULL) {
			sdp_error("out of memory adding device %s", attr->ibdev_name);
			return DOCA_ERROR_NO_MEMORY;
		}
		sink->items = items;
		sink->cap = cap;
	}
	devinfo = calloc(1, sizeof(*devinfo));
	if (devinfo == NULL) {
		sdp_error("out of memory adding device %s", attr->ibdev_name);
		return DOCA_ERROR_NO_MEMORY;
	}
	devinfo->magic = DEVINFO_MAGIC;
	devinfo->refcount = 1;
	devinfo->ops = sink->ops;
	devinfo->attr = *attr;
	memcpy(devinfo->attr.pci_addr, pci, sizeof(pci));
	sink->items[sink->num++] = devinfo;
	return DOCA_SUCCESS;
}

/* ---- devinfo lists --------------------------------------------------------------------------- */

doca_error_t doca_devinfo_create_list(struct doca_devinfo ***dev_list, uint32_t *nb_devs)
{
	struct sdp_devinfo_sink sink = {0};
	struct devinfo_list *list;
	doca_error_t status;

	if (dev_list == NULL || nb_devs == NULL) {
		sdp_error("NULL %s", dev_list == NULL ? "dev_list" : "nb_devs");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_providers_load();
	if (status != DOCA_SUCCESS)
		return status;

	pthread_mutex_lock(&g_dev.lock);
	for (size_t i = 0; i < sdp_providers_num(); i++) {
		const struct sdp_dev_decl *const *decls;
		size_t num_decls;

		sink.ops = sdp_providers_ops(i, &decls, &num_decls);
		status = sink.ops->enumerate(decls, num_decls, &sink);
		if (status != DOCA_SUCCESS)
			sdp_warn("provider '%s' could not list its devices (%s); its other devices "
				 "are missing",
				 sink.ops->name, doca_error_get_name(status));
	}

	if (sink.num > UINT32_MAX - 1) {
		sdp_error("too many devices (%zu)", sink.num);
		status = DOCA_ERROR_NO_MEMORY;
		goto err_free;
	}
	list = malloc(sizeof(*list) + (sink.num + 1) * sizeof(list->items[0]));
	if (list == NULL) {
		sdp_error("out of memory for a list of %zu devices", sink.num);
		status = DOCA_ERROR_NO_MEMORY;
		goto err_free;
	}
	list->magic = LIST_MAGIC;
	list->num = (uint32_t)sink.num;
	if (sink.num > 0)
		memcpy(list->items, sink.items, sink.num * sizeof(list->items[0]));
	list->items[sink.num] = NULL;
	pthread_mutex_unlock(&g_dev.lock);
	free(sink.items);

	*dev_list = list->items;
	*nb_devs = list->num;
	return DOCA_SUCCESS;

err_free:
	for (size_t i = 0; i < sink.num; i++)
		devinfo_put(sink.items[i]);
	pthread_mutex_unlock(&g_dev.lock);
	free(sink.items);
	return status;
}

doca_error_t doca_devinfo_destroy_list(struct doca_devinfo **dev_list)
{
	struct devinfo_list *list;

	if (dev_list == NULL) {
		sdp_error("NULL dev_list");
		return DOCA_ERROR_INVALID_VALUE;
	}
	list = sdp_container_of(dev_list, struct devinfo_list, items);
	if (list->magic != LIST_MAGIC) {
		sdp_error("%p is not a list from doca_devinfo_create_list", (void *)dev_list);
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&g_dev.lock);
	for (uint32_t i = 0; i < list->num; i++)
		devinfo_put(list->items[i]);
	pthread_mutex_unlock(&g_dev.lock);
	list->magic = 0;
	free(list);
	return DOCA_SUCCESS;
}

/* ---- devinfo properties ---------------------------------------------------------------------- */

static doca_error_t copy_name(const char *what, const char *name, char *out, uint32_t size)
{
	size_t need = strlen(name) + 1;

	if (size < need) {
		sdp_error("a %u-byte buffer cannot hold %s '%s' (%zu bytes with its NUL)", size,
			  what, name, need);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(out, name, need);
	return DOCA_SUCCESS;
}

/* A live devinfo and a non-NULL output pointer: INVALID_VALUE (logged as func) otherwise. */
static doca_error_t check_devinfo_out(const struct doca_devinfo *devinfo, const void *out,
				      const char *out_name, const char *func)
{
	doca_error_t status = sdp_check_handle(devinfo_ok(devinfo), devinfo, "devinfo", func);

	if (status == DOCA_SUCCESS)
		status = sdp_check_arg(out, out_name, func);
	return status;
}

doca_error_t doca_devinfo_get_ibdev_name(const struct doca_devinfo *devinfo, char *ibdev_name,
					 uint32_t size)
{
	doca_error_t status;

	if ((status = check_devinfo_out(devinfo, ibdev_name, "ibdev_name", __func__)) !=
	    DOCA_SUCCESS)
		return status;
	return copy_name("ibdev name", devinfo->attr.ibdev_name, ibdev_name, size);
}

doca_error_t doca_devinfo_get_iface_name(const struct doca_devinfo *devinfo, char *iface_name,
					 uint32_t size)
{
	doca_error_t status;

	if ((status = check_devinfo_out(devinfo, iface_name, "iface_name", __func__)) !=
	    DOCA_SUCCESS)
		return status;
	return copy_name("interface name", devinfo->attr.iface_name, iface_name, size);
}

doca_error_t doca_devinfo_get_pci_addr_str(const struct doca_devinfo *devinfo, char *pci_addr_str)
{
	doca_error_t status;

	if ((status = check_devinfo_out(devinfo, pci_addr_str, "pci_addr_str", __func__)) !=
	    DOCA_SUCCESS)
		return status;
	memcpy(pci_addr_str, devinfo->attr.pci_addr, DOCA_DEVINFO_PCI_ADDR_SIZE);
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_get_pci_func_type(const struct doca_devinfo *devinfo,
					    enum doca_pci_func_type *pci_func_type)
{
	doca_error_t status;

	if ((status = check_devinfo_out(devinfo, pci_func_type, "pci_func_type", __func__)) !=
	    DOCA_SUCCESS)
		return status;
	*pci_func_type = devinfo->attr.func_type;
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_get_sf_index(const struct doca_devinfo *devinfo, uint32_t *sf_index)
{
	doca_error_t status;

	if ((status = check_devinfo_out(devinfo, sf_index, "sf_index", __func__)) != DOCA_SUCCESS)
		return status;
	if (devinfo->attr.func_type != DOCA_PCI_FUNC_TYPE_SF) {
		/* a documented answer to a capability question, not a failure: debug only */
		sdp_debug("device %s is not a scalable function", devinfo->attr.ibdev_name);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	*sf_index = devinfo->attr.sf_index;
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_is_equal_pci_addr(const struct doca_devinfo *devinfo,
					    const char *pci_addr_str, uint8_t *is_equal)
{
	doca_error_t status;
	char norm[DOCA_DEVINFO_PCI_ADDR_SIZE];

	if ((status = check_devinfo_out(devinfo, is_equal, "is_equal", __func__)) != DOCA_SUCCESS)
		return status;
	if (pci_addr_str == NULL) {
		sdp_error("NULL pci_addr_str");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (sdp_pci_addr_normalize(pci_addr_str, norm) != DOCA_SUCCESS) {
		sdp_error("'%.*s' is not a PCI address (expected dddd:bb:dd.f or bb:dd.f, hex)",
			  DOCA_DEVINFO_PCI_ADDR_SIZE + 4, pci_addr_str);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*is_equal = strcmp(norm, devinfo->attr.pci_addr) == 0;
	return DOCA_SUCCESS;
}

/* ---- open devices ---------------------------------------------------------------------------- */

static int dev_ok(const struct doca_dev *dev)
{
	return dev != NULL && dev->magic == DEV_MAGIC;
}

doca_error_t doca_dev_open(struct doca_devinfo *devinfo, struct doca_dev **dev)
{
	struct doca_dev *d;
	doca_error_t status;

	if ((status = check_devinfo_out(devinfo, dev, "dev", __func__)) != DOCA_SUCCESS)
		return status;

	pthread_mutex_lock(&g_dev.lock);
	sdp_list_for_each(d, &g_dev.open, link) {
		if (d->devinfo->ops == devinfo->ops &&
		    strcmp(d->devinfo->attr.ibdev_name, devinfo->attr.ibdev_name) == 0) {
			if (d->refcount == UINT32_MAX) {
				sdp_error("device %s opened too many times",
					  devinfo->attr.ibdev_name);
				status = DOCA_ERROR_INITIALIZATION;
				goto out_unlock;
			}
			d->refcount++;
			*dev = d;
			status = DOCA_SUCCESS;
			goto out_unlock;
		}
	}

	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		sdp_error("out of memory opening device %s", devinfo->attr.ibdev_name);
		status = DOCA_ERROR_NO_MEMORY;
		goto out_unlock;
	}
	if (devinfo->ops->dev_open != NULL) {
		status = devinfo->ops->dev_open(&devinfo->attr, &d->priv);
		if (status != DOCA_SUCCESS) {
			/* the provider logged the cause */
			free(d);
			goto out_unlock;
		}
	}
	d->magic = DEV_MAGIC;
	d->refcount = 1;
	d->devinfo = devinfo;
	devinfo->refcount++;
	sdp_list_add_tail(&g_dev.open, &d->link);
	sdp_debug("opened device %s (provider %s)", devinfo->attr.ibdev_name, devinfo->ops->name);
	*dev = d;
	status = DOCA_SUCCESS;
out_unlock:
	pthread_mutex_unlock(&g_dev.lock);
	return status;
}

doca_error_t doca_dev_close(struct doca_dev *dev)
{
	struct doca_devinfo *devinfo;

	if (!dev_ok(dev)) {
		sdp_error("%s dev", dev == NULL ? "NULL" : "invalid (closed?)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&g_dev.lock);
	devinfo = dev->devinfo;
	if (dev->refcount == 1 && dev->holds > 0) {
		sdp_error("device %s is still used by %u object(s) (mmap, context); destroy them "
			  "first",
			  devinfo->attr.ibdev_name, dev->holds);
		pthread_mutex_unlock(&g_dev.lock);
		return DOCA_ERROR_IN_USE;
	}
	if (--dev->refcount > 0) {
		pthread_mutex_unlock(&g_dev.lock);
		return DOCA_SUCCESS;
	}
	sdp_list_del(&dev->link);
	if (devinfo->ops->dev_close != NULL)
		devinfo->ops->dev_close(&devinfo->attr, dev->priv);
	sdp_debug("closed device %s", devinfo->attr.ibdev_name);
	dev->magic = 0;
	devinfo_put(devinfo);
	pthread_mutex_unlock(&g_dev.lock);
	free(dev);
	return DOCA_SUCCESS;
}

struct doca_devinfo *doca_dev_as_devinfo(const struct doca_dev *dev)
{
	if (!dev_ok(dev))
		return NULL;
	return dev->devinfo;
}

void sdp_dev_hold(struct doca_dev *dev)
{
	if (!dev_ok(dev))
		return;
	pthread_mutex_lock(&g_dev.lock);
	dev->holds++;
	pthread_mutex_unlock(&g_dev.lock);
}

void sdp_dev_release(struct doca_dev *dev)
{
	if (!dev_ok(dev))
		return;
	pthread_mutex_lock(&g_dev.lock);
	if (dev->holds == 0)
		sdp_error("device %s released more often than held", dev->devinfo->attr.ibdev_name);
	else
		dev->holds--;
	pthread_mutex_unlock(&g_dev.lock);
}

const char *sdp_devinfo_get_provider_name(const struct doca_devinfo *devinfo)
{
	return devinfo_ok(devinfo) ? devinfo->ops->name : NULL;
}

const struct sdp_eth_port_ops *sdp_devinfo_get_eth_ops(const struct doca_devinfo *devinfo)
{
	return devinfo_ok(devinfo) ? devinfo->ops->eth : NULL;
}

const struct sdp_devinfo_attr *sdp_devinfo_get_attr(const struct doca_devinfo *devinfo)
{
	return devinfo_ok(devinfo) ? &devinfo->attr : NULL;
}

const struct sdp_provider_ops *sdp_dev_get_provider_ops(const struct doca_dev *dev)
{
	return dev_ok(dev) ? dev->devinfo->ops : NULL;
}

void *sdp_dev_get_priv(const struct doca_dev *dev)
{
	return dev_ok(dev) ? dev->priv : NULL;
}

/* ---- representors: softdpu devices have none ------------------------------------------------- */

doca_error_t doca_devinfo_rep_create_list(struct doca_dev *dev, int filter,
					  struct doca_devinfo_rep ***dev_list_rep,
					  uint32_t *nb_devs_rep)
{
	const int known = DOCA_DEVINFO_REP_FILTER_NET | DOCA_DEVINFO_REP_FILTER_EMULATED;

	if (!dev_ok(dev) || dev_list_rep == NULL || nb_devs_rep == NULL) {
		sdp_error("%s", !dev_ok(dev)	     ? "NULL or closed dev" :
				dev_list_rep == NULL ? "NULL dev_list_rep" :
						       "NULL nb_devs_rep");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if ((filter & ~known) != 0) {
		sdp_error("unknown representor filter bits 0x%x", (unsigned)(filter & ~known));
		return DOCA_ERROR_INVALID_VALUE;
	}
	sdp_warn("device %s exposes no representors (softdpu devices have none)",
		 dev->devinfo->attr.ibdev_name);
	return DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_devinfo_rep_destroy_list(struct doca_devinfo_rep **dev_list_rep)
{
	sdp_error("%s: no representor list exists in softdpu",
		  dev_list_rep == NULL ? "NULL dev_list_rep" : "invalid dev_list_rep");
	return DOCA_ERROR_INVALID_VALUE;
}

doca_error_t doca_devinfo_rep_get_vuid(const struct doca_devinfo_rep *devinfo_rep, char *rep_vuid,
				       uint32_t size)
{
	(void)rep_vuid;
	(void)size;
	sdp_error("%s: no representor exists in softdpu",
		  devinfo_rep == NULL ? "NULL devinfo_rep" : "invalid devinfo_rep");
	return DOCA_ERROR_INVALID_VALUE;
}

doca_error_t doca_devinfo_rep_is_equal_pci_addr(const struct doca_devinfo_rep *devinfo_rep,
						const char *pci_addr_str, uint8_t *is_equal)
{
	(void)pci_addr_str;
	(void)is_equal;
	sdp_error("%s: no representor exists in softdpu",
		  devinfo_rep == NULL ? "NULL devinfo_rep" : "invalid devinfo_rep");
	return DOCA_ERROR_INVALID_VALUE;
}

doca_error_t doca_dev_rep_open(struct doca_devinfo_rep *devinfo, struct doca_dev_rep **dev_rep)
{
	if (devinfo == NULL || dev_rep == NULL) {
		sdp_error("NULL %s", devinfo == NULL ? "devinfo" : "dev_rep");
		return DOCA_ERROR_INVALID_VALUE;
	}
	sdp_error("representors are not supported: softdpu devices expose none");
	return DOCA_ERROR_NOT_SUPPORTED;
}
