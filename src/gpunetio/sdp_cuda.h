/*
 * softdpu internal: the CUDA driver API, loaded at run time (src/gpunetio/cuda_drv.c).
 *
 * libdoca_gpunetio must build without the CUDA toolkit and load on machines without an NVIDIA
 * driver, so it never links libcuda: the first caller of sdp_cuda_load() dlopens
 * "libcuda.so.1" (once per process, thread-safe) and fills a table of entry points. Where the
 * library or a required symbol is missing every call of sdp_cuda_load() answers NOT_SUPPORTED
 * and sdp_cuda_load_reason() says why; the caller logs that reason with its own context.
 *
 * The types and values below are softdpu's own minimal declarations of the driver ABI (the
 * numbers are those of the driver API; sdp_ names so that a CUDA translation unit may include
 * both this header and cuda.h). Nothing here calls cuInit: sdp_cuda_init() does, once.
 *
 * Later users (the Ethernet engine's copies into device memory) need a current context of the
 * right GPU (sdp_gpu_ctx_push()/pop() in sdp_gpu.h) and non-blocking streams
 * (SDP_CU_STREAM_NON_BLOCKING): the legacy default stream would serialize with a persistent
 * kernel.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_CUDA_H_
#define SDP_CUDA_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_error.h"

typedef int sdp_cu_result_t;			  /* CUresult */
typedef int sdp_cu_device_t;			  /* CUdevice: an ordinal */
typedef struct sdp_cu_ctx_st *sdp_cu_ctx_t;	  /* CUcontext */
typedef struct sdp_cu_stream_st *sdp_cu_stream_t; /* CUstream */
typedef struct sdp_cu_event_st *sdp_cu_event_t;	  /* CUevent */
typedef unsigned long long sdp_cu_deviceptr_t;	  /* CUdeviceptr (64-bit) */

/* CUresult values softdpu tells apart. */
#define SDP_CUDA_SUCCESS 0
#define SDP_CUDA_ERROR_INVALID_VALUE 1
#define SDP_CUDA_ERROR_OUT_OF_MEMORY 2
#define SDP_CUDA_ERROR_NOT_INITIALIZED 3
#define SDP_CUDA_ERROR_NO_DEVICE 100
#define SDP_CUDA_ERROR_INVALID_DEVICE 101
#define SDP_CUDA_ERROR_INVALID_CONTEXT 201
#define SDP_CUDA_ERROR_NOT_READY 600
#define SDP_CUDA_ERROR_NOT_SUPPORTED 801

/* CUdevice_attribute values. */
#define SDP_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define SDP_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define SDP_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED 124

/* cuMemHostAlloc flags. */
#define SDP_CU_MEMHOSTALLOC_PORTABLE 0x1
#define SDP_CU_MEMHOSTALLOC_DEVICEMAP 0x2

/* CUpointer_attribute, CUmemRangeHandleType, stream and event flags. */
#define SDP_CU_POINTER_ATTRIBUTE_SYNC_MEMOPS 6
#define SDP_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD 1
#define SDP_CU_STREAM_NON_BLOCKING 0x1
#define SDP_CU_EVENT_DISABLE_TIMING 0x2

/*
 * The entry points. Every member is set once sdp_cuda_load() succeeded, except those marked
 * optional, which are NULL where the driver predates them.
 */
struct sdp_cuda_api {
	sdp_cu_result_t (*init)(unsigned int flags);
	sdp_cu_result_t (*driver_get_version)(int *version);
	sdp_cu_result_t (*get_error_string)(sdp_cu_result_t error, const char **str);
	sdp_cu_result_t (*get_error_name)(sdp_cu_result_t error, const char **str);

	sdp_cu_result_t (*device_get_count)(int *count);
	sdp_cu_result_t (*device_get)(sdp_cu_device_t *device, int ordinal);
	sdp_cu_result_t (*device_get_by_pci_bus_id)(sdp_cu_device_t *device, const char *bus_id);
	sdp_cu_result_t (*device_get_pci_bus_id)(char *bus_id, int len, sdp_cu_device_t device);
	sdp_cu_result_t (*device_get_name)(char *name, int len, sdp_cu_device_t device);
	sdp_cu_result_t (*device_get_attribute)(int *value, int attribute, sdp_cu_device_t device);

	sdp_cu_result_t (*device_primary_ctx_retain)(sdp_cu_ctx_t *ctx, sdp_cu_device_t device);
	sdp_cu_result_t (*device_primary_ctx_release)(sdp_cu_device_t device); /* _v2 */
	sdp_cu_result_t (*ctx_get_current)(sdp_cu_ctx_t *ctx);
	sdp_cu_result_t (*ctx_set_current)(sdp_cu_ctx_t ctx);
	sdp_cu_result_t (*ctx_get_device)(sdp_cu_device_t *device);
	sdp_cu_result_t (*ctx_push_current)(sdp_cu_ctx_t ctx); /* _v2 */
	sdp_cu_result_t (*ctx_pop_current)(sdp_cu_ctx_t *ctx); /* _v2 */

	sdp_cu_result_t (*mem_alloc)(sdp_cu_deviceptr_t *dptr, size_t size); /* _v2 */
	sdp_cu_result_t (*mem_free)(sdp_cu_deviceptr_t dptr);		     /* _v2 */
	sdp_cu_result_t (*mem_host_alloc)(void **ptr, size_t size, unsigned int flags);
	sdp_cu_result_t (*mem_host_get_device_pointer)(sdp_cu_deviceptr_t *dptr, void *ptr,
						       unsigned int flags); /* _v2 */
	sdp_cu_result_t (*mem_free_host)(void *ptr);
	sdp_cu_result_t (*pointer_set_attribute)(const void *value, int attribute,
						 sdp_cu_deviceptr_t dptr);
	/* optional (CUDA 11.7 drivers and later) */
	sdp_cu_result_t (*mem_get_handle_for_address_range)(void *handle, sdp_cu_deviceptr_t dptr,
							    size_t size, int handle_type,
							    unsigned long long flags);
	sdp_cu_result_t (*memset_d8)(sdp_cu_deviceptr_t dptr, unsigned char value,
				     size_t count); /* _v2 */
	sdp_cu_result_t (*memcpy_htod)(sdp_cu_deviceptr_t dst, const void *src,
				       size_t size);					/* _v2 */
	sdp_cu_result_t (*memcpy_dtoh)(void *dst, sdp_cu_deviceptr_t src, size_t size); /* _v2 */

	sdp_cu_result_t (*stream_create)(sdp_cu_stream_t *stream, unsigned int flags);
	sdp_cu_result_t (*stream_destroy)(sdp_cu_stream_t stream); /* _v2 */
	sdp_cu_result_t (*stream_synchronize)(sdp_cu_stream_t stream);
	/* SUCCESS when the stream's work is done, NOT_READY while it runs (rollback drain) */
	sdp_cu_result_t (*stream_query)(sdp_cu_stream_t stream);
	sdp_cu_result_t (*memcpy_htod_async)(sdp_cu_deviceptr_t dst, const void *src, size_t size,
					     sdp_cu_stream_t stream); /* _v2 */
	sdp_cu_result_t (*memcpy_dtoh_async)(void *dst, sdp_cu_deviceptr_t src, size_t size,
					     sdp_cu_stream_t stream); /* _v2 */
	sdp_cu_result_t (*event_create)(sdp_cu_event_t *event, unsigned int flags);
	sdp_cu_result_t (*event_record)(sdp_cu_event_t event, sdp_cu_stream_t stream);
	sdp_cu_result_t (*event_query)(sdp_cu_event_t event);
	sdp_cu_result_t (*event_destroy)(sdp_cu_event_t event); /* _v2 */
	/* optional (NULL when the driver lacks it): a stream-ordered 32-bit store, _v2 */
	sdp_cu_result_t (*stream_write_value32)(sdp_cu_stream_t stream, sdp_cu_deviceptr_t addr,
						unsigned int value, unsigned int flags);
	/* optional: device memory in bytes (tools: doca_caps, softdpu env) */
	sdp_cu_result_t (*device_total_mem)(size_t *bytes, sdp_cu_device_t device); /* _v2 */
};

/*
 * The driver's entry points: loads libcuda.so.1 on the first call (any thread). SUCCESS and
 * *api_p set, or NOT_SUPPORTED (library or a required symbol missing; not logged here, see
 * sdp_cuda_load_reason()) or INVALID_VALUE for a NULL api_p. The table lives as long as the
 * process (the library is never closed).
 */
doca_error_t sdp_cuda_load(const struct sdp_cuda_api **api_p);

/* Why the last sdp_cuda_load() failed ("" after a success); a constant string. */
const char *sdp_cuda_load_reason(void);

/*
 * Load the driver and run cuInit(0) once per process. SUCCESS and *api_p set, or
 * NOT_SUPPORTED with *reason_p (if not NULL) pointing at a constant string saying why (no
 * library, no driver, no device): the caller logs it. Later calls return the same answer.
 */
doca_error_t sdp_cuda_init(const struct sdp_cuda_api **api_p, const char **reason_p);

/* "CUDA_ERROR_X (description)" for a driver result, for messages; never NULL. Thread-safe. */
const char *sdp_cuda_strerror(sdp_cu_result_t result, char *buf, size_t len);

/* The DOCA status for a failed driver call that has no better-known meaning. */
doca_error_t sdp_cuda_to_doca(sdp_cu_result_t result);

#endif /* SDP_CUDA_H_ */
