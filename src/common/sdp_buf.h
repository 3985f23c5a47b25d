/*
 * softdpu internal: doca_buf, and what buffers, inventories, pools and buffer arrays need from
 * each other and from doca_mmap. Other parts of softdpu may use the mmap queries, the buf layout
 * and the buffer-array GPU hooks below.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_BUF_H_
#define SDP_BUF_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_buf.h"
#include "doca_buf_array.h"
#include "doca_error.h"
#include "doca_mmap.h"

/* Where a buf goes back when its reference count drops to 0 (an inventory, a pool). */
struct sdp_buf_owner_ops {
	const char *name;
	void (*put)(void *owner, struct doca_buf *buf);
};

struct doca_buf {
	void *head;
	size_t len;
	void *data;
	size_t data_len;
	uint16_t refcount;	/* 0 while the buf sits in its owner */
	struct doca_mmap *mmap; /* the mmap the buf points into */
	struct doca_buf *next;	/* next buf of the list, NULL at its end */
	struct doca_buf *prev;	/* NULL for the head of a list (or a lone buf) */
	const struct sdp_buf_owner_ops *owner_ops;
	void *owner;
	struct doca_buf *free_next; /* owner's free list */
};

/* Point a buf taken from its owner at [head, head+len) with data [data, data+data_len). */
void sdp_buf_init(struct doca_buf *buf, struct doca_mmap *mmap, void *head, size_t len, void *data,
		  size_t data_len);

/* ---- mmap ------------------------------------------------------------------------------------ */

/*
 * A buf is about to point at [addr, addr+len) of mmap: the mmap must be started
 * (DOCA_ERROR_BAD_STATE) and hold the range (DOCA_ERROR_INVALID_VALUE), both logged. On success
 * the mmap counts one more buf (doca_mmap_get_num_bufs) and refuses stop/destroy until
 * sdp_mmap_buf_detach.
 */
doca_error_t sdp_mmap_buf_attach(struct doca_mmap *mmap, const void *addr, size_t len);
void sdp_mmap_buf_detach(struct doca_mmap *mmap);

/*
 * A pool or buffer array starts using the mmap: it must be started (DOCA_ERROR_BAD_STATE,
 * logged, naming `who`). The mmap then refuses stop/destroy until sdp_mmap_unhold.
 */
doca_error_t sdp_mmap_hold(struct doca_mmap *mmap, const char *who);
void sdp_mmap_unhold(struct doca_mmap *mmap);

/*
 * A pool or buffer array configured on the mmap (from create / set_params until destroy) keeps
 * a reference, so doca_mmap_destroy refuses with DOCA_ERROR_IN_USE instead of leaving it with a
 * dangling pointer. sdp_mmap_ref fails (INVALID_VALUE, logged) for a destroyed or bogus mmap.
 */
doca_error_t sdp_mmap_ref(struct doca_mmap *mmap);
void sdp_mmap_unref(struct doca_mmap *mmap);

/* The range (DOCA_ERROR_BAD_STATE, not logged, when none was set). */
doca_error_t sdp_mmap_range(const struct doca_mmap *mmap, void **addr, size_t *len);
int sdp_mmap_is_started(const struct doca_mmap *mmap);
/* The mkey of the first device added to the mmap (0 when it has none). */
uint32_t sdp_mmap_first_mkey(struct doca_mmap *mmap);

/* ---- buffer arrays: the GPU side, provided by libdoca_gpunetio --------------------------------- */

struct doca_gpu;
struct doca_gpu_buf_arr;

/* What a started buffer array covers. */
struct sdp_buf_arr_layout {
	struct doca_mmap *mmap;
	void *base; /* mmap start + start_offset */
	size_t elem_size;
	size_t num_elem;
};

struct sdp_buf_arr_gpu_ops {
	/* Build the GPU-side array at doca_buf_arr_start(); *priv is handed back below. */
	doca_error_t (*start)(struct doca_buf_arr *arr, struct doca_gpu *gpu,
			      const struct sdp_buf_arr_layout *layout, void **priv);
	/* At doca_buf_arr_stop() / destroy. */
	void (*stop)(struct doca_buf_arr *arr, void *priv);
	/* doca_buf_arr_get_gpu_handle() of a started array. */
	doca_error_t (*get_handle)(const struct doca_buf_arr *arr, void *priv,
				   struct doca_gpu_buf_arr **handle);
};

/*
 * Install (or, with NULL, remove) the GPU side. libdoca_gpunetio calls it from its constructor;
 * arrays started before keep running without a GPU handle.
 */
void sdp_buf_arr_set_gpu_ops(const struct sdp_buf_arr_gpu_ops *ops);

#endif /* SDP_BUF_H_ */
