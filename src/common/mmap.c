/*
 * DOCA memory maps. The range is recorded, never touched; devices are held while added; memory
 * keys are synthetic. A mutex guards the state because bufs attach and detach from any thread.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "doca_dev.h"
#include "doca_mmap.h"
#include "sdp_buf.h"
#include "sdp_check.h"
#include "sdp_log.h"
#include "sdp_provider.h"

SDP_LOG_COMPONENT("mmap");

#define MMAP_MAGIC 0x5d0c3a90u
#define MMAP_DEFAULT_MAX_DEVICES 16
#define MMAP_ACCESS_MASK                                                                           \
	(DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ |                          \
	 DOCA_ACCESS_FLAG_RDMA_WRITE | DOCA_ACCESS_FLAG_RDMA_ATOMIC |                              \
	 DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_WRITE |                        \
	 DOCA_ACCESS_FLAG_PCI_RELAXED_ORDERING)

struct mmap_dev {
	struct doca_dev *dev;
	uint32_t mkey;
};

struct doca_mmap {
	uint32_t magic;
	pthread_mutex_t lock;
	int started;
	int ever_started;
	int range_set;
	void *addr;
	size_t len;
	int dmabuf_fd; /* -1 unless set with doca_mmap_set_dmabuf_memrange */
	size_t dmabuf_offset;
	uint32_t access_mask;
	union doca_data user_data;
	doca_mmap_memrange_free_cb_t *free_cb;
	void *free_opaque;
	struct mmap_dev *devs;
	uint32_t num_devs;
	uint32_t max_devs;
	uint32_t num_bufs; /* bufs pointing into the range */
	uint32_t holders;  /* started pools and buffer arrays */
	uint32_t refs;	   /* pools and buffer arrays configured on it (started or not) */
};

/* mkey = (serial << 8) | variant, like a verbs lkey: unique per process, never 0. */
static atomic_uint g_mkey_serial;
#define MKEY_VARIANT 0x5du

static int mmap_ok(const struct doca_mmap *mmap)
{
	return mmap != NULL && mmap->magic == MMAP_MAGIC;
}

static doca_error_t check_mmap(const struct doca_mmap *mmap, const char *func)
{
	return sdp_check_handle(mmap_ok(mmap), mmap, "mmap", func);
}

doca_error_t doca_mmap_create(struct doca_mmap **mmap)
{
	doca_error_t status;
	struct doca_mmap *m;

	if ((status = sdp_check_arg(mmap, "mmap", __func__)) != DOCA_SUCCESS)
		return status;
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		sdp_error("out of memory for an mmap");
		return DOCA_ERROR_NO_MEMORY;
	}
	pthread_mutex_init(&m->lock, NULL);
	m->magic = MMAP_MAGIC;
	m->dmabuf_fd = -1;
	m->access_mask = DOCA_ACCESS_FLAG_LOCAL_READ_ONLY;
	m->max_devs = MMAP_DEFAULT_MAX_DEVICES;
	*mmap = m;
	return DOCA_SUCCESS;
}

/* Called with the lock held. */
static doca_error_t check_unused(const struct doca_mmap *m, const char *what)
{
	if (m->num_bufs > 0 || m->holders > 0) {
		sdp_error(
			"cannot %s the mmap: %u buf(s) and %u pool(s)/buffer array(s) still use it",
			what, m->num_bufs, m->holders);
		return DOCA_ERROR_IN_USE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_destroy(struct doca_mmap *mmap)
{
	doca_error_t status;
	int call_free_cb;

	if ((status = check_mmap(mmap, __func__)) != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&mmap->lock);
	status = check_unused(mmap, "destroy");
	if (status == DOCA_SUCCESS && mmap->refs > 0) {
		sdp_error(
			"cannot destroy the mmap: %u pool(s)/buffer array(s) are configured on it; "
			"destroy them first",
			mmap->refs);
		status = DOCA_ERROR_IN_USE;
	}
	if (status != DOCA_SUCCESS) {
		pthread_mutex_unlock(&mmap->lock);
		return status;
	}
	call_free_cb = mmap->started && mmap->free_cb != NULL;
	mmap->started = 0;
	mmap->magic = 0;
	pthread_mutex_unlock(&mmap->lock);

	for (uint32_t i = 0; i < mmap->num_devs; i++)
		sdp_dev_release(mmap->devs[i].dev);
	if (call_free_cb)
		mmap->free_cb(mmap->addr, mmap->len, mmap->free_opaque);
	free(mmap->devs);
	pthread_mutex_destroy(&mmap->lock);
	free(mmap);
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_start(struct doca_mmap *mmap)
{
	doca_error_t status = DOCA_SUCCESS;

	if ((status = check_mmap(mmap, __func__)) != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&mmap->lock);
	if (mmap->started) {
		sdp_error("mmap already started");
		status = DOCA_ERROR_BAD_STATE;
	} else if (!mmap->range_set) {
		sdp_error("cannot start an mmap without a memory range (doca_mmap_set_memrange)");
		status = DOCA_ERROR_BAD_STATE;
	} else {
		mmap->started = 1;
		mmap->ever_started = 1;
	}
	pthread_mutex_unlock(&mmap->lock);
	return status;
}

doca_error_t doca_mmap_stop(struct doca_mmap *mmap)
{
	doca_error_t status;

	if ((status = check_mmap(mmap, __func__)) != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&mmap->lock);
	if (!mmap->started) {
		sdp_error("mmap is not started");
		status = DOCA_ERROR_BAD_STATE;
	} else {
		status = check_unused(mmap, "stop");
		if (status == DOCA_SUCCESS)
			mmap->started = 0;
	}
	pthread_mutex_unlock(&mmap->lock);
	return status;
}

/* Setters: DOCA_SUCCESS with the lock held, or the error (logged) with the lock released. */
static doca_error_t lock_idle(struct doca_mmap *mmap, const char *what)
{
	pthread_mutex_lock(&mmap->lock);
	if (mmap->started) {
		pthread_mutex_unlock(&mmap->lock);
		sdp_error("cannot %s a started mmap; stop it first", what);
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_add_dev(struct doca_mmap *mmap, struct doca_dev *dev)
{
	struct mmap_dev *devs;
	doca_error_t status;

	if ((status = check_mmap(mmap, __func__)) != DOCA_SUCCESS)
		return status;
	if (doca_dev_as_devinfo(dev) == NULL) {
		sdp_error("%s dev", dev == NULL ? "NULL" : "closed or invalid");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = lock_idle(mmap, "add a device to");
	if (status != DOCA_SUCCESS)
		return status;
	for (uint32_t i = 0; i < mmap->num_devs; i++) {
		if (mmap->devs[i].dev == dev) {
			sdp_error("device already added to this mmap");
			status = DOCA_ERROR_ALREADY_EXIST;
			goto out;
		}
	}
	if (mmap->num_devs == mmap->max_devs) {
		sdp_error("mmap already has its maximum of %u devices", mmap->max_devs);
		status = DOCA_ERROR_NO_MEMORY;
		goto out;
	}
	devs = realloc(mmap->devs, (mmap->num_devs + 1) * sizeof(*devs));
	if (devs == NULL) {
		sdp_error("out of memory adding a device to an mmap");
		status = DOCA_ERROR_NO_MEMORY;
		goto out;
	}
	mmap->devs = devs;
	devs[mmap->num_devs].dev = dev;
	devs[mmap->num_devs].mkey = ((atomic_fetch_add(&g_mkey_serial, 1) + 1) << 8) | MKEY_VARIANT;
	mmap->num_devs++;
	sdp_dev_hold(dev);
out:
	pthread_mutex_unlock(&mmap->lock);
	return status;
}

doca_error_t doca_mmap_rm_dev(struct doca_mmap *mmap, struct doca_dev *dev)
{
	doca_error_t status;

	if ((status = check_mmap(mmap, __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(dev, "dev", __func__)) != DOCA_SUCCESS)
		return status;
	status = lock_idle(mmap, "remove a device from");
	if (status != DOCA_SUCCESS)
		return status;
	status = DOCA_ERROR_NOT_FOUND;
	for (uint32_t i = 0; i < mmap->num_devs; i++) {
		if (mmap->devs[i].dev == dev) {
			mmap->devs[i] = mmap->devs[--mmap->num_devs];
			sdp_dev_release(dev);
			status = DOCA_SUCCESS;
			break;
		}
	}
	pthread_mutex_unlock(&mmap->lock);
	if (status != DOCA_SUCCESS)
		sdp_error("device was not added to this mmap");
	return status;
}

/* The two range setters; func is the caller, for the argument check's record. */
static doca_error_t set_range(struct doca_mmap *mmap, void *addr, size_t len, int fd, size_t offset,
			      const char *func)
{
	doca_error_t status;

	if ((status = check_mmap(mmap, func)) != DOCA_SUCCESS)
		return status;
	if (addr == NULL || len == 0 || (uintptr_t)addr + len - 1 < (uintptr_t)addr) {
		sdp_error("bad memory range %p + %zu (NULL, empty or wrapping around)", addr, len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = lock_idle(mmap, "set the memory range of");
	if (status != DOCA_SUCCESS)
		return status;
	if (mmap->range_set) {
		pthread_mutex_unlock(&mmap->lock);
		sdp_error("the memory range of an mmap can be set only once");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	mmap->addr = addr;
	mmap->len = len;
	mmap->dmabuf_fd = fd;
	mmap->dmabuf_offset = offset;
	mmap->range_set = 1;
	pthread_mutex_unlock(&mmap->lock);
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_memrange(struct doca_mmap *mmap, void *addr, size_t len)
{
	return set_range(mmap, addr, len, -1, 0, __func__);
}

doca_error_t doca_mmap_set_dmabuf_memrange(struct doca_mmap *mmap, int dmabuf_fd, void *addr,
					   size_t dmabuf_offset, size_t len)
{
	if (dmabuf_fd < 0) {
		sdp_error("bad dmabuf fd %d", dmabuf_fd);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return set_range(mmap, addr, len, dmabuf_fd, dmabuf_offset, __func__);
}

doca_error_t doca_mmap_get_memrange(const struct doca_mmap *mmap, void **addr, size_t *len)
{
	doca_error_t status;

	if ((status = check_mmap(mmap, __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(addr, "addr", __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(len, "len", __func__)) != DOCA_SUCCESS)
		return status;
	status = sdp_mmap_range(mmap, addr, len);
	if (status != DOCA_SUCCESS)
		sdp_error("the mmap has no memory range yet");
	return status;
}

doca_error_t doca_mmap_set_free_cb(struct doca_mmap *mmap, doca_mmap_memrange_free_cb_t *free_cb,
				   void *opaque)
{
	doca_error_t status;

	if ((status = check_mmap(mmap, __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(free_cb, "free_cb", __func__)) != DOCA_SUCCESS)
		return status;
	status = lock_idle(mmap, "set the free callback of");
	if (status != DOCA_SUCCESS)
		return status;
	mmap->free_cb = free_cb;
	mmap->free_opaque = opaque;
	pthread_mutex_unlock(&mmap->lock);
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_permissions(struct doca_mmap *mmap, uint32_t access_mask)
{
	doca_error_t status;

	if ((status = check_mmap(mmap, __func__)) != DOCA_SUCCESS)
		return status;
	if ((access_mask & ~(uint32_t)MMAP_ACCESS_MASK) != 0) {
		sdp_error("undefined access flag bits 0x%x",
			  access_mask & ~(uint32_t)MMAP_ACCESS_MASK);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if ((access_mask & DOCA_ACCESS_FLAG_PCI_READ_ONLY) &&
	    (access_mask & DOCA_ACCESS_FLAG_PCI_READ_WRITE)) {
		sdp_error("PCI_READ_ONLY and PCI_READ_WRITE exclude each other");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = lock_idle(mmap, "set the permissions of");
	if (status != DOCA_SUCCESS)
		return status;
	mmap->access_mask = access_mask;
	pthread_mutex_unlock(&mmap->lock);
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_user_data(struct doca_mmap *mmap, union doca_data user_data)
{
	doca_error_t status;

	if ((status = check_mmap(mmap, __func__)) != DOCA_SUCCESS)
		return status;
	status = lock_idle(mmap, "set the user data of");
	if (status != DOCA_SUCCESS)
		return status;
	mmap->user_data = user_data;
	pthread_mutex_unlock(&mmap->lock);
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_user_data(const struct doca_mmap *mmap, union doca_data *user_data)
{
	doca_error_t status;

	if ((status = check_mmap(mmap, __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(user_data, "user_data", __func__)) != DOCA_SUCCESS)
		return status;
	*user_data = mmap->user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_num_bufs(const struct doca_mmap *mmap, uint32_t *num_bufs)
{
	doca_error_t status;
	struct doca_mmap *m = (struct doca_mmap *)mmap;

	if ((status = check_mmap(mmap, __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(num_bufs, "num_bufs", __func__)) != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&m->lock);
	*num_bufs = m->num_bufs;
	pthread_mutex_unlock(&m->lock);
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_max_num_devices(const struct doca_mmap *mmap, uint32_t *max_num_devices)
{
	doca_error_t status;

	if ((status = check_mmap(mmap, __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(max_num_devices, "max_num_devices", __func__)) != DOCA_SUCCESS)
		return status;
	*max_num_devices = mmap->max_devs;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_max_num_devices(struct doca_mmap *mmap, uint32_t max_num_devices)
{
	doca_error_t status = DOCA_SUCCESS;

	if ((status = check_mmap(mmap, __func__)) != DOCA_SUCCESS)
		return status;
	if (max_num_devices == 0) {
		sdp_error("max_num_devices must be at least 1");
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&mmap->lock);
	if (mmap->ever_started) {
		sdp_error("the device limit cannot change after the mmap was started");
		status = DOCA_ERROR_NOT_PERMITTED;
	} else if (max_num_devices < mmap->num_devs) {
		sdp_error("%u devices are already added, more than %u", mmap->num_devs,
			  max_num_devices);
		status = DOCA_ERROR_INVALID_VALUE;
	} else {
		mmap->max_devs = max_num_devices;
	}
	pthread_mutex_unlock(&mmap->lock);
	return status;
}

uint32_t sdp_mmap_first_mkey(struct doca_mmap *mmap)
{
	uint32_t mkey = 0;

	if (mmap == NULL || mmap->magic != MMAP_MAGIC)
		return 0;
	pthread_mutex_lock(&mmap->lock);
	if (mmap->num_devs != 0)
		mkey = mmap->devs[0].mkey;
	pthread_mutex_unlock(&mmap->lock);
	return mkey;
}

doca_error_t doca_mmap_get_mkey(const struct doca_mmap *mmap, const struct doca_dev *dev,
				uint32_t *mkey)
{
	struct doca_mmap *m = (struct doca_mmap *)mmap;
	doca_error_t status;

	if ((status = check_mmap(mmap, __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(dev, "dev", __func__)) != DOCA_SUCCESS ||
	    (status = sdp_check_arg(mkey, "mkey", __func__)) != DOCA_SUCCESS)
		return status;
	status = DOCA_ERROR_NOT_FOUND;
	pthread_mutex_lock(&m->lock);
	if (!m->started) {
		pthread_mutex_unlock(&m->lock);
		sdp_error("the mmap must be started to have memory keys");
		return DOCA_ERROR_BAD_STATE;
	}
	for (uint32_t i = 0; i < m->num_devs; i++) {
		if (m->devs[i].dev == dev) {
			*mkey = m->devs[i].mkey;
			status = DOCA_SUCCESS;
			break;
		}
	}
	pthread_mutex_unlock(&m->lock);
	if (status != DOCA_SUCCESS)
		sdp_error("device was not added to this mmap (doca_mmap_add_dev)");
	return status;
}

/* ---- internal -------------------------------------------------------------------------------- */

doca_error_t sdp_mmap_buf_attach(struct doca_mmap *mmap, const void *addr, size_t len)
{
	uintptr_t lo, hi;
	doca_error_t status = DOCA_SUCCESS;

	if ((status = check_mmap(mmap, __func__)) != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&mmap->lock);
	lo = (uintptr_t)mmap->addr;
	hi = lo + mmap->len;
	if (!mmap->started) {
		sdp_error("the mmap is not started");
		status = DOCA_ERROR_BAD_STATE;
	} else if ((uintptr_t)addr < lo || (uintptr_t)addr > hi || len > hi - (uintptr_t)addr) {
		sdp_error("range %p + %zu is not inside the mmap's range %p + %zu", addr, len,
			  mmap->addr, mmap->len);
		status = DOCA_ERROR_INVALID_VALUE;
	} else if (mmap->num_bufs == UINT32_MAX) {
		sdp_error("too many bufs on one mmap");
		status = DOCA_ERROR_NO_MEMORY;
	} else {
		mmap->num_bufs++;
	}
	pthread_mutex_unlock(&mmap->lock);
	return status;
}

void sdp_mmap_buf_detach(struct doca_mmap *mmap)
{
	pthread_mutex_lock(&mmap->lock);
	mmap->num_bufs--;
	pthread_mutex_unlock(&mmap->lock);
}

doca_error_t sdp_mmap_hold(struct doca_mmap *mmap, const char *who)
{
	doca_error_t status = DOCA_SUCCESS;

	if ((status = check_mmap(mmap, __func__)) != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&mmap->lock);
	if (!mmap->started) {
		sdp_error("cannot start the %s: its mmap is not started", who);
		status = DOCA_ERROR_BAD_STATE;
	} else {
		mmap->holders++;
	}
	pthread_mutex_unlock(&mmap->lock);
	return status;
}

doca_error_t sdp_mmap_ref(struct doca_mmap *mmap)
{
	doca_error_t status;

	if ((status = check_mmap(mmap, __func__)) != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&mmap->lock);
	mmap->refs++;
	pthread_mutex_unlock(&mmap->lock);
	return DOCA_SUCCESS;
}

void sdp_mmap_unref(struct doca_mmap *mmap)
{
	pthread_mutex_lock(&mmap->lock);
	mmap->refs--;
	pthread_mutex_unlock(&mmap->lock);
}

void sdp_mmap_unhold(struct doca_mmap *mmap)
{
	pthread_mutex_lock(&mmap->lock);
	mmap->holders--;
	pthread_mutex_unlock(&mmap->lock);
}

doca_error_t sdp_mmap_range(const struct doca_mmap *mmap, void **addr, size_t *len)
{
	struct doca_mmap *m = (struct doca_mmap *)mmap;
	doca_error_t status = DOCA_ERROR_BAD_STATE;

	if (!mmap_ok(mmap) || addr == NULL || len == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&m->lock);
	if (m->range_set) {
		*addr = m->addr;
		*len = m->len;
		status = DOCA_SUCCESS;
	}
	pthread_mutex_unlock(&m->lock);
	return status;
}

int sdp_mmap_is_started(const struct doca_mmap *mmap)
{
	struct doca_mmap *m = (struct doca_mmap *)mmap;
	int started;

	if (!mmap_ok(mmap))
		return 0;
	pthread_mutex_lock(&m->lock);
	started = m->started;
	pthread_mutex_unlock(&m->lock);
	return started;
}
