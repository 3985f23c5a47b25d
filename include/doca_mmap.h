/*
 * softdpu: DOCA memory maps.
 *
 * An mmap names one address range (host memory, GPU memory, a dmabuf) and the devices that may
 * reach it. softdpu never reads or writes the range itself, so any range is accepted. Memory
 * keys are synthetic: one per (mmap, device), fixed when the device is added and stable until
 * it is removed.
 *
 * Lifecycle: create -> set_memrange (mandatory, once) / set_permissions / add_dev -> start ->
 * (bufs) -> stop -> destroy. Setters and add/rm_dev answer DOCA_ERROR_BAD_STATE while started;
 * stop and destroy answer DOCA_ERROR_IN_USE while bufs (or a started buf pool / buf array)
 * still use the mmap.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_MMAP_H_
#define DOCA_MMAP_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_devinfo;
struct doca_mmap;

/* Called by doca_mmap_destroy() for the range of an mmap that was started. */
typedef void(doca_mmap_memrange_free_cb_t)(void *addr, size_t len, void *cookie);

DOCA_STABLE
doca_error_t doca_mmap_create(struct doca_mmap **mmap);

/* Stops the mmap if needed; DOCA_ERROR_IN_USE while bufs still point into it. */
DOCA_STABLE
doca_error_t doca_mmap_destroy(struct doca_mmap *mmap);

/* DOCA_ERROR_BAD_STATE without a memory range or when already started. */
DOCA_STABLE
doca_error_t doca_mmap_start(struct doca_mmap *mmap);

/* DOCA_ERROR_BAD_STATE when not started; DOCA_ERROR_IN_USE while bufs still point into it. */
DOCA_STABLE
doca_error_t doca_mmap_stop(struct doca_mmap *mmap);

/* DOCA_ERROR_ALREADY_EXIST for a device added before; the mmap holds the device open. */
DOCA_STABLE
doca_error_t doca_mmap_add_dev(struct doca_mmap *mmap, struct doca_dev *dev);

/* DOCA_ERROR_NOT_FOUND for a device that was not added. */
DOCA_STABLE
doca_error_t doca_mmap_rm_dev(struct doca_mmap *mmap, struct doca_dev *dev);

/* Mandatory, once per mmap (DOCA_ERROR_NOT_PERMITTED the second time); len > 0, no wrap-around. */
DOCA_STABLE
doca_error_t doca_mmap_set_memrange(struct doca_mmap *mmap, void *addr, size_t len);

/* As doca_mmap_set_memrange, for a dmabuf (the fd is recorded, not used or closed). */
DOCA_STABLE
doca_error_t doca_mmap_set_dmabuf_memrange(struct doca_mmap *mmap, int dmabuf_fd, void *addr,
					   size_t dmabuf_offset, size_t len);

/* DOCA_ERROR_BAD_STATE when no range was set. */
DOCA_STABLE
doca_error_t doca_mmap_get_memrange(const struct doca_mmap *mmap, void **addr, size_t *len);

DOCA_STABLE
doca_error_t doca_mmap_set_free_cb(struct doca_mmap *mmap, doca_mmap_memrange_free_cb_t *free_cb,
				   void *opaque);

/* access_mask: enum doca_access_flag bits; an undefined bit is DOCA_ERROR_INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_mmap_set_permissions(struct doca_mmap *mmap, uint32_t access_mask);

DOCA_STABLE
doca_error_t doca_mmap_set_user_data(struct doca_mmap *mmap, union doca_data user_data);

DOCA_STABLE
doca_error_t doca_mmap_get_user_data(const struct doca_mmap *mmap, union doca_data *user_data);

/* Number of doca_buf objects that point into the mmap now. */
DOCA_STABLE
doca_error_t doca_mmap_get_num_bufs(const struct doca_mmap *mmap, uint32_t *num_bufs);

DOCA_STABLE
doca_error_t doca_mmap_get_max_num_devices(const struct doca_mmap *mmap, uint32_t *max_num_devices);

/* Only before the first start (DOCA_ERROR_NOT_PERMITTED after). */
DOCA_STABLE
doca_error_t doca_mmap_set_max_num_devices(struct doca_mmap *mmap, uint32_t max_num_devices);

/*
 * The memory key of the range for dev, host byte order. DOCA_ERROR_BAD_STATE when the mmap is
 * not started, DOCA_ERROR_NOT_FOUND when dev was not added.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_get_mkey(const struct doca_mmap *mmap, const struct doca_dev *dev,
				uint32_t *mkey);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_MMAP_H_ */
