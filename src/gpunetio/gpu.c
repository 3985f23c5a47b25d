/*
 * softdpu: the GPUNetIO GPU handle (doca_gpu_create/destroy), GPU-visible memory
 * (doca_gpu_mem_alloc/free) and dma-buf export, on the CUDA driver API loaded at run time.
 *
 * Memory types (docs/gpunetio.md):
 * - GPU: cuMemAlloc, padded to honour the alignment, with SYNC_MEMOPS set so synchronous
 *   copies into it are complete when they return;
 * - CPU_GPU: cuMemHostAlloc(PORTABLE | DEVICEMAP), zeroed, and its device address;
 * - GPU_CPU: would be device memory mapped for the CPU through GDRCopy; softdpu has no GDRCopy,
 *   so it is CPU_GPU memory, with one warning per handle (DOCA falls back the same way).
 * Each handle keeps a list of its allocations under a mutex: mem_free finds them by GPU
 * pointer and destroy is refused while the list is not empty.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doca_gpunetio.h"
#include "softdpu/gpunetio.h"

#include "sdp_config.h"
#include "sdp_cuda.h"
#include "sdp_gpu.h"
#include "sdp_log.h"

SDP_LOG_COMPONENT("gpunetio");

/* DOCA GPUNetIO's minimum compute capability (Ampere). */
#define SDP_GPU_MIN_CC_MAJOR 8
#define SDP_GPU_MIN_CC_MINOR 0

/* cuMemAlloc's documented minimum alignment. */
#define SDP_GPU_DEVICE_ALIGN 256

struct sdp_gpu_alloc {
	struct sdp_gpu_alloc *next;
	sdp_cu_deviceptr_t gpu_addr;  /* aligned address returned to the application */
	void *cpu_ptr;		      /* aligned CPU address (mapped host memory), else NULL */
	size_t size;		      /* as requested */
	enum doca_gpu_mem_type mtype; /* as requested */
	int on_device;		      /* 1: cuMemAlloc; 0: cuMemHostAlloc */
	sdp_cu_deviceptr_t dev_base;  /* what cuMemAlloc returned (on_device) */
	void *host_base;	      /* what cuMemHostAlloc returned (!on_device) */
};

struct doca_gpu {
	const struct sdp_cuda_api *cu;
	sdp_cu_device_t device;
	sdp_cu_ctx_t ctx;
	int ctx_retained; /* ctx is the device's primary context, retained by create */
	uint64_t serial;  /* unique per handle created in this process (sdp_gpu_ctx_bind) */
	char bus_id[32];
	int cc_major;
	int cc_minor;
	int cc_overridden;
	int dmabuf_supported;
	size_t page_size;

	pthread_mutex_t lock;	      /* guards the fields below */
	struct sdp_gpu_alloc *allocs; /* live allocations, newest first */
	size_t nr_allocs;
	int warned_gpu_cpu;		/* the GPU_CPU fallback warning was given */
	uint64_t mem_gen;		/* bumped (atomically, lock held) by every free */
	struct sdp_gpu_alloc *deferred; /* freed by softdpu, released at doca_gpu_destroy */
};

/* Serials of the handles created so far (sdp_gpu_ctx_bind). */
static uint64_t sdp_gpu_serial;

/* The sdp_gpu_set_cc_override value (major < 0: none). */
static pthread_mutex_t sdp_gpu_cc_lock = PTHREAD_MUTEX_INITIALIZER;
static int sdp_gpu_cc_major = -1;
static int sdp_gpu_cc_minor;

/* Parse 1..max_digits hex digits at *str; advances *str. */
static int gpu_parse_hex(const char **str, int max_digits, unsigned int *value_p)
{
	const char *p = *str;
	unsigned int value = 0;
	int digits = 0;
	int d;

	for (;;) {
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (++digits > max_digits)
			return -1;
		value = value * 16 + (unsigned int)d;
		p++;
	}
	if (digits == 0)
		return -1;
	*str = p;
	*value_p = value;
	return 0;
}

/* "[domain:]bus:device.function" to "dddd:bb:dd.f"; -1 if malformed. */
static int gpu_normalize_bus_id(const char *str, char *out, size_t len)
{
	unsigned int domain = 0, bus, dev, fn;
	const char *p = str;
	int colons = 0;

	for (; *p != '\0'; p++)
		colons += *p == ':';
	p = str;
	if (colons == 2) {
		if (gpu_parse_hex(&p, 8, &domain) != 0 || *p++ != ':')
			return -1;
	} else if (colons != 1) {
		return -1;
	}
	if (gpu_parse_hex(&p, 2, &bus) != 0 || *p++ != ':')
		return -1;
	if (gpu_parse_hex(&p, 2, &dev) != 0 || dev > 0x1f || *p++ != '.')
		return -1;
	if (gpu_parse_hex(&p, 1, &fn) != 0 || fn > 7 || *p != '\0')
		return -1;
	snprintf(out, len, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
	return 0;
}

doca_error_t sdp_gpu_set_cc_override(int major, int minor)
{
	if (major > 99 || (major >= 0 && (minor < 0 || minor > 9))) {
		sdp_error("compute capability override %d.%d: expected major 0..99 and minor 0..9",
			  major, minor);
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&sdp_gpu_cc_lock);
	sdp_gpu_cc_major = major < 0 ? -1 : major;
	sdp_gpu_cc_minor = major < 0 ? 0 : minor;
	pthread_mutex_unlock(&sdp_gpu_cc_lock);
	return DOCA_SUCCESS;
}

/* The override in force: 1 with *major_p and *minor_p set, or 0 (none, or a bad value). */
static int gpu_cc_override(int *major_p, int *minor_p)
{
	const char *value;
	unsigned int major, minor;
	int found = 0;
	int used;

	pthread_mutex_lock(&sdp_gpu_cc_lock);
	if (sdp_gpu_cc_major >= 0) {
		*major_p = sdp_gpu_cc_major;
		*minor_p = sdp_gpu_cc_minor;
		found = 1;
	}
	pthread_mutex_unlock(&sdp_gpu_cc_lock);
	if (found)
		return 1;

	value = sdp_config_get_string(SDP_CFG_GPU_CC_OVERRIDE);
	if (value == NULL || value[0] == '\0')
		return 0;
	used = 0;
	if (sscanf(value, "%2u.%1u%n", &major, &minor, &used) != 2 || value[used] != '\0' ||
	    value[0] < '0' || value[0] > '9') {
		sdp_warn("environment variable %s: value \"%s\" ignored, expected <major>.<minor> "
			 "such as 7.5",
			 sdp_config_name(SDP_CFG_GPU_CC_OVERRIDE), value);
		return 0;
	}
	*major_p = (int)major;
	*minor_p = (int)minor;
	return 1;
}

/* Find the device whose PCIe address is bus_id (normalised); NOT_FOUND or DRIVER, logged. */
static doca_error_t gpu_find_device(const struct sdp_cuda_api *cu, const char *bus_id,
				    const char *asked, sdp_cu_device_t *device_p)
{
	char busbuf[64], norm[32], err[160];
	sdp_cu_device_t device;
	sdp_cu_result_t res;
	int count = 0;
	int i;

	res = cu->device_get_count(&count);
	if (res != SDP_CUDA_SUCCESS) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, "doca_gpu_create", "cuDeviceGetCount failed: %s",
			   sdp_cuda_strerror(res, err, sizeof(err)));
		return DOCA_ERROR_DRIVER;
	}
	for (i = 0; i < count; i++) {
		res = cu->device_get(&device, i);
		if (res == SDP_CUDA_SUCCESS)
			res = cu->device_get_pci_bus_id(busbuf, sizeof(busbuf), device);
		if (res != SDP_CUDA_SUCCESS) {
			sdp_log_as(DOCA_LOG_LEVEL_ERROR, "doca_gpu_create",
				   "cannot read the PCIe address of CUDA device %d: %s", i,
				   sdp_cuda_strerror(res, err, sizeof(err)));
			return DOCA_ERROR_DRIVER;
		}
		if (gpu_normalize_bus_id(busbuf, norm, sizeof(norm)) == 0 &&
		    strcmp(norm, bus_id) == 0) {
			*device_p = device;
			return DOCA_SUCCESS;
		}
	}
	sdp_log_as(DOCA_LOG_LEVEL_ERROR, "doca_gpu_create",
		   "no GPU at PCIe address %s (%d CUDA device(s) visible)", asked, count);
	return DOCA_ERROR_NOT_FOUND;
}

/*
 * The context of gpu->device to use: the primary one, retained (which also brings it back after
 * cudaDeviceReset: the thread's current context may then still name the reset primary context,
 * which refuses every call until it is retained again), unless the calling thread has a context
 * of its own on the device (cuCtxCreate), which is used as it is.
 */
static doca_error_t gpu_get_context(struct doca_gpu *gpu)
{
	const struct sdp_cuda_api *cu = gpu->cu;
	sdp_cu_device_t cur_dev = -1;
	sdp_cu_ctx_t cur = NULL, primary = NULL;
	sdp_cu_result_t res;
	char err[160];

	res = cu->device_primary_ctx_retain(&primary, gpu->device);
	if (res != SDP_CUDA_SUCCESS) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, "doca_gpu_create",
			   "GPU %s: cuDevicePrimaryCtxRetain failed: %s", gpu->bus_id,
			   sdp_cuda_strerror(res, err, sizeof(err)));
		return sdp_cuda_to_doca(res) == DOCA_ERROR_NO_MEMORY ? DOCA_ERROR_NO_MEMORY :
								       DOCA_ERROR_DRIVER;
	}
	if (cu->ctx_get_current(&cur) == SDP_CUDA_SUCCESS && cur != NULL && cur != primary &&
	    cu->ctx_get_device(&cur_dev) == SDP_CUDA_SUCCESS && cur_dev == gpu->device) {
		(void)cu->device_primary_ctx_release(gpu->device);
		gpu->ctx = cur;
		return DOCA_SUCCESS;
	}
	gpu->ctx = primary;
	gpu->ctx_retained = 1;
	return DOCA_SUCCESS;
}

doca_error_t doca_gpu_create(const char *gpu_bus_id, struct doca_gpu **gpu_dev)
{
	const struct sdp_cuda_api *cu;
	const char *reason = "";
	struct doca_gpu *gpu;
	sdp_cu_device_t device;
	sdp_cu_result_t res;
	doca_error_t status;
	char norm[32], err[160];
	int major = 0, minor = 0, dmabuf = 0;
	int ov_major, ov_minor, overridden;
	long page;

	if (gpu_bus_id == NULL || gpu_dev == NULL) {
		sdp_error("invalid argument: gpu_bus_id %p, gpu_dev %p", (const void *)gpu_bus_id,
			  (void *)gpu_dev);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (gpu_normalize_bus_id(gpu_bus_id, norm, sizeof(norm)) != 0) {
		sdp_error("malformed PCIe address \"%.64s\", expected "
			  "[domain:]bus:device.function such as ca:00.0",
			  gpu_bus_id);
		return DOCA_ERROR_INVALID_VALUE;
	}

	status = sdp_cuda_init(&cu, &reason);
	if (status != DOCA_SUCCESS) {
		sdp_error("GPU %s: CUDA is not available: %s", norm, reason);
		return DOCA_ERROR_NOT_SUPPORTED;
	}

	status = gpu_find_device(cu, norm, gpu_bus_id, &device);
	if (status != DOCA_SUCCESS)
		return status;

	res = cu->device_get_attribute(&major, SDP_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
				       device);
	if (res == SDP_CUDA_SUCCESS)
		res = cu->device_get_attribute(
			&minor, SDP_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
	if (res != SDP_CUDA_SUCCESS) {
		sdp_error("GPU %s: cannot read its compute capability: %s", norm,
			  sdp_cuda_strerror(res, err, sizeof(err)));
		return DOCA_ERROR_DRIVER;
	}
	overridden = gpu_cc_override(&ov_major, &ov_minor);
	if (overridden) {
		sdp_info("GPU %s: compute capability %d.%d overridden as %d.%d", norm, major, minor,
			 ov_major, ov_minor);
		major = ov_major;
		minor = ov_minor;
	}
	if (major < SDP_GPU_MIN_CC_MAJOR ||
	    (major == SDP_GPU_MIN_CC_MAJOR && minor < SDP_GPU_MIN_CC_MINOR)) {
		sdp_error("GPU %s has compute capability %d.%d%s, GPUNetIO needs "
			  "%d.%d or later",
			  norm, major, minor, overridden ? " (overridden)" : "",
			  SDP_GPU_MIN_CC_MAJOR, SDP_GPU_MIN_CC_MINOR);
		return DOCA_ERROR_NOT_SUPPORTED;
	}

	/* No dma-buf answer counts as "not supported"; export then says so. */
	if (cu->device_get_attribute(&dmabuf, SDP_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, device) !=
	    SDP_CUDA_SUCCESS)
		dmabuf = 0;

	gpu = calloc(1, sizeof(*gpu));
	if (gpu == NULL) {
		sdp_error("failed to allocate a handle of %zu bytes", sizeof(*gpu));
		return DOCA_ERROR_NO_MEMORY;
	}
	gpu->cu = cu;
	gpu->device = device;
	gpu->serial = __atomic_add_fetch(&sdp_gpu_serial, 1, __ATOMIC_RELAXED);
	snprintf(gpu->bus_id, sizeof(gpu->bus_id), "%s", norm);
	gpu->cc_major = major;
	gpu->cc_minor = minor;
	gpu->cc_overridden = overridden;
	gpu->dmabuf_supported = dmabuf != 0 && cu->mem_get_handle_for_address_range != NULL;
	page = sysconf(_SC_PAGESIZE);
	gpu->page_size = page > 0 ? (size_t)page : 4096;
	pthread_mutex_init(&gpu->lock, NULL);

	status = gpu_get_context(gpu);
	if (status != DOCA_SUCCESS)
		goto err_free_gpu;

	sdp_debug("GPU %s created: CUDA device %d, compute capability %d.%d, dma-buf %s, %s "
		  "context",
		  gpu->bus_id, device, major, minor, gpu->dmabuf_supported ? "yes" : "no",
		  gpu->ctx_retained ? "primary" : "current");
	*gpu_dev = gpu;
	return DOCA_SUCCESS;

err_free_gpu:
	pthread_mutex_destroy(&gpu->lock);
	free(gpu);
	return status;
}

static void gpu_alloc_release(struct doca_gpu *gpu, struct sdp_gpu_alloc *a);

doca_error_t doca_gpu_destroy(struct doca_gpu *gpu_dev)
{
	struct sdp_gpu_alloc *deferred;
	size_t live;
	char err[160];
	sdp_cu_result_t res;

	if (gpu_dev == NULL) {
		sdp_error("invalid argument: gpu_dev NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&gpu_dev->lock);
	live = gpu_dev->nr_allocs;
	pthread_mutex_unlock(&gpu_dev->lock);
	if (live != 0) {
		sdp_error("GPU %s still has %zu allocation(s), free them first", gpu_dev->bus_id,
			  live);
		return DOCA_ERROR_IN_USE;
	}

	/* what softdpu's queues gave up while a kernel might still have read it */
	pthread_mutex_lock(&gpu_dev->lock);
	deferred = gpu_dev->deferred;
	gpu_dev->deferred = NULL;
	pthread_mutex_unlock(&gpu_dev->lock);
	while (deferred != NULL) {
		struct sdp_gpu_alloc *a = deferred;

		deferred = a->next;
		gpu_alloc_release(gpu_dev, a);
	}
	if (gpu_dev->ctx_retained) {
		res = gpu_dev->cu->device_primary_ctx_release(gpu_dev->device);
		if (res != SDP_CUDA_SUCCESS)
			sdp_warn("GPU %s: cuDevicePrimaryCtxRelease failed: %s", gpu_dev->bus_id,
				 sdp_cuda_strerror(res, err, sizeof(err)));
	}
	sdp_debug("GPU %s destroyed", gpu_dev->bus_id);
	pthread_mutex_destroy(&gpu_dev->lock);
	free(gpu_dev);
	return DOCA_SUCCESS;
}

doca_error_t sdp_gpu_ctx_push(const struct doca_gpu *gpu)
{
	sdp_cu_result_t res;
	char err[160];

	res = gpu->cu->ctx_push_current(gpu->ctx);
	if (res != SDP_CUDA_SUCCESS) {
		sdp_error("GPU %s: cuCtxPushCurrent failed: %s", gpu->bus_id,
			  sdp_cuda_strerror(res, err, sizeof(err)));
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}

doca_error_t sdp_gpu_ctx_bind(const struct doca_gpu *gpu)
{
	static __thread uint64_t bound_serial; /* 0: none */
	sdp_cu_result_t res;
	char err[160];

	if (bound_serial == gpu->serial)
		return DOCA_SUCCESS;
	res = gpu->cu->ctx_set_current(gpu->ctx);
	if (res != SDP_CUDA_SUCCESS) {
		bound_serial = 0;
		sdp_error("GPU %s: cuCtxSetCurrent failed: %s", gpu->bus_id,
			  sdp_cuda_strerror(res, err, sizeof(err)));
		return DOCA_ERROR_DRIVER;
	}
	bound_serial = gpu->serial;
	return DOCA_SUCCESS;
}

void sdp_gpu_ctx_pop(const struct doca_gpu *gpu)
{
	sdp_cu_ctx_t popped = NULL;
	sdp_cu_result_t res;
	char err[160];

	res = gpu->cu->ctx_pop_current(&popped);
	if (res != SDP_CUDA_SUCCESS)
		sdp_warn("GPU %s: cuCtxPopCurrent failed: %s", gpu->bus_id,
			 sdp_cuda_strerror(res, err, sizeof(err)));
}

/* A failed allocation call: NO_MEMORY when the driver says so, else DRIVER. Logged. */
static doca_error_t gpu_alloc_failed(const struct doca_gpu *gpu, const char *call, size_t bytes,
				     sdp_cu_result_t res)
{
	char err[160];

	sdp_log_as(DOCA_LOG_LEVEL_ERROR, "doca_gpu_mem_alloc", "GPU %s: %s of %zu bytes failed: %s",
		   gpu->bus_id, call, bytes, sdp_cuda_strerror(res, err, sizeof(err)));
	return res == SDP_CUDA_ERROR_OUT_OF_MEMORY ? DOCA_ERROR_NO_MEMORY : DOCA_ERROR_DRIVER;
}

/* Device memory (context pushed). */
static doca_error_t gpu_alloc_device(struct doca_gpu *gpu, struct sdp_gpu_alloc *a,
				     size_t alignment)
{
	const struct sdp_cuda_api *cu = gpu->cu;
	unsigned int one = 1;
	sdp_cu_result_t res;
	size_t bytes = a->size;
	char err[160];

	/* cuMemAlloc aligns to at least SDP_GPU_DEVICE_ALIGN; pad for more. */
	if (alignment > SDP_GPU_DEVICE_ALIGN)
		bytes += alignment - 1;
	res = cu->mem_alloc(&a->dev_base, bytes);
	if (res != SDP_CUDA_SUCCESS)
		return gpu_alloc_failed(gpu, "cuMemAlloc", bytes, res);
	if (bytes == a->size && (a->dev_base & (alignment - 1)) != 0) {
		/* Not the documented minimum: pad after all. */
		cu->mem_free(a->dev_base);
		bytes += alignment - 1;
		res = cu->mem_alloc(&a->dev_base, bytes);
		if (res != SDP_CUDA_SUCCESS)
			return gpu_alloc_failed(gpu, "cuMemAlloc", bytes, res);
	}
	a->gpu_addr = (a->dev_base + alignment - 1) & ~(sdp_cu_deviceptr_t)(alignment - 1);
	a->on_device = 1;

	res = cu->pointer_set_attribute(&one, SDP_CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, a->dev_base);
	if (res != SDP_CUDA_SUCCESS) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, "doca_gpu_mem_alloc",
			   "GPU %s: setting SYNC_MEMOPS on 0x%llx failed: %s", gpu->bus_id,
			   a->dev_base, sdp_cuda_strerror(res, err, sizeof(err)));
		cu->mem_free(a->dev_base);
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}

/* Pinned host memory mapped into the GPU (context pushed). */
static doca_error_t gpu_alloc_mapped(struct doca_gpu *gpu, struct sdp_gpu_alloc *a,
				     size_t alignment)
{
	const struct sdp_cuda_api *cu = gpu->cu;
	sdp_cu_deviceptr_t dev_base;
	sdp_cu_result_t res;
	size_t bytes = a->size;
	uintptr_t base, aligned;
	char err[160];

	if (alignment > gpu->page_size)
		bytes += alignment - 1;
	res = cu->mem_host_alloc(&a->host_base, bytes,
				 SDP_CU_MEMHOSTALLOC_PORTABLE | SDP_CU_MEMHOSTALLOC_DEVICEMAP);
	if (res != SDP_CUDA_SUCCESS)
		return gpu_alloc_failed(gpu, "cuMemHostAlloc", bytes, res);
	base = (uintptr_t)a->host_base;
	if (bytes == a->size && (base & (alignment - 1)) != 0) {
		cu->mem_free_host(a->host_base);
		bytes += alignment - 1;
		res = cu->mem_host_alloc(&a->host_base, bytes,
					 SDP_CU_MEMHOSTALLOC_PORTABLE |
						 SDP_CU_MEMHOSTALLOC_DEVICEMAP);
		if (res != SDP_CUDA_SUCCESS)
			return gpu_alloc_failed(gpu, "cuMemHostAlloc", bytes, res);
		base = (uintptr_t)a->host_base;
	}
	aligned = (base + alignment - 1) & ~(uintptr_t)(alignment - 1);

	res = cu->mem_host_get_device_pointer(&dev_base, a->host_base, 0);
	if (res != SDP_CUDA_SUCCESS) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, "doca_gpu_mem_alloc",
			   "GPU %s: cuMemHostGetDevicePointer failed: %s", gpu->bus_id,
			   sdp_cuda_strerror(res, err, sizeof(err)));
		cu->mem_free_host(a->host_base);
		return DOCA_ERROR_DRIVER;
	}
	/* With unified addressing (every 64-bit Linux driver) the two addresses are equal. */
	a->gpu_addr = dev_base + (aligned - base);
	a->cpu_ptr = (void *)aligned;
	a->on_device = 0;
	memset(a->host_base, 0, bytes);
	return DOCA_SUCCESS;
}

doca_error_t doca_gpu_mem_alloc(struct doca_gpu *gpu_dev, size_t size, size_t alignment,
				enum doca_gpu_mem_type mtype, void **memptr_gpu, void **memptr_cpu)
{
	struct sdp_gpu_alloc *a;
	doca_error_t status;
	int warn_fallback = 0;

	if (gpu_dev == NULL || memptr_gpu == NULL) {
		sdp_error("invalid argument: gpu_dev %p, memptr_gpu %p", (void *)gpu_dev,
			  (void *)memptr_gpu);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (mtype != DOCA_GPU_MEM_TYPE_GPU && mtype != DOCA_GPU_MEM_TYPE_GPU_CPU &&
	    mtype != DOCA_GPU_MEM_TYPE_CPU_GPU) {
		sdp_error("invalid memory type %d", (int)mtype);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (mtype != DOCA_GPU_MEM_TYPE_GPU && memptr_cpu == NULL) {
		sdp_error("memory type %s needs memptr_cpu",
			  mtype == DOCA_GPU_MEM_TYPE_GPU_CPU ? "GPU_CPU" : "CPU_GPU");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (size == 0) {
		sdp_error("invalid size 0");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (alignment == 0)
		alignment = gpu_dev->page_size;
	if ((alignment & (alignment - 1)) != 0) {
		sdp_error("alignment %zu is not a power of two", alignment);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (size > SIZE_MAX - alignment) {
		sdp_error("size %zu with alignment %zu is too large", size, alignment);
		return DOCA_ERROR_INVALID_VALUE;
	}

	a = calloc(1, sizeof(*a));
	if (a == NULL) {
		sdp_error("failed to allocate %zu bytes", sizeof(*a));
		return DOCA_ERROR_NO_MEMORY;
	}
	a->size = size;
	a->mtype = mtype;

	status = sdp_gpu_ctx_push(gpu_dev);
	if (status != DOCA_SUCCESS)
		goto err_free_entry;
	if (mtype == DOCA_GPU_MEM_TYPE_GPU)
		status = gpu_alloc_device(gpu_dev, a, alignment);
	else
		status = gpu_alloc_mapped(gpu_dev, a, alignment);
	sdp_gpu_ctx_pop(gpu_dev);
	if (status != DOCA_SUCCESS)
		goto err_free_entry;

	pthread_mutex_lock(&gpu_dev->lock);
	a->next = gpu_dev->allocs;
	gpu_dev->allocs = a;
	gpu_dev->nr_allocs++;
	if (mtype == DOCA_GPU_MEM_TYPE_GPU_CPU && !gpu_dev->warned_gpu_cpu) {
		gpu_dev->warned_gpu_cpu = 1;
		warn_fallback = 1;
	}
	pthread_mutex_unlock(&gpu_dev->lock);

	if (warn_fallback)
		sdp_warn(
			"GPU %s: GPU_CPU memory needs GDRCopy, which softdpu does not use: "
			"allocating CPU_GPU memory (pinned host memory mapped into the GPU) instead",
			gpu_dev->bus_id);
	sdp_trace("GPU %s: allocated %zu bytes (alignment %zu, type %d) at GPU 0x%llx CPU %p",
		  gpu_dev->bus_id, size, alignment, (int)mtype, a->gpu_addr, a->cpu_ptr);
	*memptr_gpu = (void *)(uintptr_t)a->gpu_addr;
	if (memptr_cpu != NULL)
		*memptr_cpu = a->cpu_ptr;
	return DOCA_SUCCESS;

err_free_entry:
	free(a);
	return status;
}

/* Give an allocation's memory back to CUDA (teardown: a failure is logged, the entry goes). */
static void gpu_alloc_release(struct doca_gpu *gpu, struct sdp_gpu_alloc *a)
{
	sdp_cu_result_t res;
	char err[160];

	if (sdp_gpu_ctx_push(gpu) == DOCA_SUCCESS) {
		if (a->on_device)
			res = gpu->cu->mem_free(a->dev_base);
		else
			res = gpu->cu->mem_free_host(a->host_base);
		if (res != SDP_CUDA_SUCCESS)
			sdp_warn("GPU %s: freeing 0x%llx failed: %s", gpu->bus_id,
				 (unsigned long long)a->gpu_addr,
				 sdp_cuda_strerror(res, err, sizeof(err)));
		sdp_gpu_ctx_pop(gpu);
	}
	sdp_trace("GPU %s: freed 0x%llx", gpu->bus_id, (unsigned long long)a->gpu_addr);
	free(a);
}

/*
 * Take the live allocation at memptr_gpu off the list (NULL when there is none); with deferred,
 * onto the deferred list in the same critical section (a doca_gpu_destroy racing with it sees
 * the allocation on one list or the other, never on neither).
 */
static struct sdp_gpu_alloc *gpu_alloc_unlink(struct doca_gpu *gpu, void *memptr_gpu, int deferred)
{
	struct sdp_gpu_alloc **link, *a = NULL;

	pthread_mutex_lock(&gpu->lock);
	for (link = &gpu->allocs; *link != NULL; link = &(*link)->next) {
		if ((*link)->gpu_addr == (sdp_cu_deviceptr_t)(uintptr_t)memptr_gpu) {
			a = *link;
			*link = a->next;
			gpu->nr_allocs--;
			__atomic_add_fetch(&gpu->mem_gen, 1, __ATOMIC_RELEASE);
			if (deferred) {
				a->next = gpu->deferred;
				gpu->deferred = a;
			}
			break;
		}
	}
	pthread_mutex_unlock(&gpu->lock);
	return a;
}

doca_error_t doca_gpu_mem_free(struct doca_gpu *gpu, void *memptr_gpu)
{
	struct sdp_gpu_alloc *a;

	if (gpu == NULL || memptr_gpu == NULL) {
		sdp_error("invalid argument: gpu %p, memptr_gpu %p", (void *)gpu, memptr_gpu);
		return DOCA_ERROR_INVALID_VALUE;
	}
	a = gpu_alloc_unlink(gpu, memptr_gpu, 0);
	if (a == NULL) {
		sdp_error("GPU %s: %p is not an allocation of this GPU handle", gpu->bus_id,
			  memptr_gpu);
		return DOCA_ERROR_INVALID_VALUE;
	}
	gpu_alloc_release(gpu, a);
	return DOCA_SUCCESS;
}

doca_error_t sdp_gpu_mem_free_deferred(struct doca_gpu *gpu, void *memptr_gpu)
{
	struct sdp_gpu_alloc *a;

	if (gpu == NULL || memptr_gpu == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	a = gpu_alloc_unlink(gpu, memptr_gpu, 1);
	if (a == NULL) {
		sdp_error("GPU %s: %p is not an allocation of this GPU handle", gpu->bus_id,
			  memptr_gpu);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

/* The allocation holding [addr, addr + size) (lock held), or NULL. */
static struct sdp_gpu_alloc *gpu_find_range(struct doca_gpu *gpu, sdp_cu_deviceptr_t addr,
					    size_t size)
{
	struct sdp_gpu_alloc *a;

	for (a = gpu->allocs; a != NULL; a = a->next)
		if (addr >= a->gpu_addr && size <= a->size && addr - a->gpu_addr <= a->size - size)
			return a;
	return NULL;
}

doca_error_t doca_gpu_dmabuf_fd(struct doca_gpu *gpu_dev, void *memptr_gpu, size_t size,
				int *dmabuf_fd)
{
	sdp_cu_deviceptr_t addr = (sdp_cu_deviceptr_t)(uintptr_t)memptr_gpu;
	struct sdp_gpu_alloc *a;
	sdp_cu_result_t res;
	doca_error_t status;
	int on_device = 0;
	char err[160];
	int fd = -1;

	if (gpu_dev == NULL || memptr_gpu == NULL || dmabuf_fd == NULL || size == 0) {
		sdp_error("invalid argument: gpu_dev %p, memptr_gpu %p, size "
			  "%zu, dmabuf_fd %p",
			  (void *)gpu_dev, memptr_gpu, size, (void *)dmabuf_fd);
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&gpu_dev->lock);
	a = gpu_find_range(gpu_dev, addr, size);
	if (a != NULL)
		on_device = a->on_device;
	pthread_mutex_unlock(&gpu_dev->lock);
	if (a == NULL) {
		sdp_error("GPU %s: %zu bytes at %p are not within one "
			  "allocation of this GPU handle",
			  gpu_dev->bus_id, size, memptr_gpu);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!on_device) {
		sdp_error("GPU %s: %p is mapped host memory, not device "
			  "memory: register it as host memory instead",
			  gpu_dev->bus_id, memptr_gpu);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (!gpu_dev->dmabuf_supported) {
		sdp_error("GPU %s: the CUDA driver does not support dma-buf "
			  "export (%s)",
			  gpu_dev->bus_id,
			  gpu_dev->cu->mem_get_handle_for_address_range == NULL ?
				  "no cuMemGetHandleForAddressRange" :
				  "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 0");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if ((addr & (gpu_dev->page_size - 1)) != 0 || (size & (gpu_dev->page_size - 1)) != 0) {
		sdp_error("GPU %s: address %p and size %zu must be multiples "
			  "of the host page size %zu",
			  gpu_dev->bus_id, memptr_gpu, size, gpu_dev->page_size);
		return DOCA_ERROR_INVALID_VALUE;
	}

	status = sdp_gpu_ctx_push(gpu_dev);
	if (status != DOCA_SUCCESS)
		return status;
	res = gpu_dev->cu->mem_get_handle_for_address_range(
		&fd, addr, size, SDP_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	sdp_gpu_ctx_pop(gpu_dev);
	if (res != SDP_CUDA_SUCCESS) {
		sdp_error("GPU %s: cuMemGetHandleForAddressRange of %zu bytes "
			  "at %p failed: %s",
			  gpu_dev->bus_id, size, memptr_gpu,
			  sdp_cuda_strerror(res, err, sizeof(err)));
		return res == SDP_CUDA_ERROR_NOT_SUPPORTED ? DOCA_ERROR_NOT_SUPPORTED :
							     DOCA_ERROR_DRIVER;
	}
	sdp_debug("GPU %s: dma-buf fd %d for %zu bytes at %p", gpu_dev->bus_id, fd, size,
		  memptr_gpu);
	*dmabuf_fd = fd;
	return DOCA_SUCCESS;
}

doca_error_t sdp_gpu_get_info(const struct doca_gpu *gpu, struct sdp_gpu_info *info_p)
{
	if (gpu == NULL || info_p == NULL) {
		sdp_error("invalid argument: gpu %p, info_p %p", (const void *)gpu, (void *)info_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memset(info_p, 0, sizeof(*info_p));
	snprintf(info_p->bus_id, sizeof(info_p->bus_id), "%s", gpu->bus_id);
	info_p->device_ordinal = gpu->device;
	info_p->cc_major = gpu->cc_major;
	info_p->cc_minor = gpu->cc_minor;
	info_p->cc_overridden = gpu->cc_overridden;
	info_p->dmabuf_supported = gpu->dmabuf_supported;
	info_p->gdrcopy = 0;
	info_p->primary_ctx_retained = gpu->ctx_retained;
	return DOCA_SUCCESS;
}

sdp_cu_ctx_t sdp_gpu_get_cu_ctx(const struct doca_gpu *gpu)
{
	return gpu != NULL ? gpu->ctx : NULL;
}

sdp_cu_device_t sdp_gpu_get_cu_device(const struct doca_gpu *gpu)
{
	return gpu != NULL ? gpu->device : -1;
}

const struct sdp_cuda_api *sdp_gpu_get_cuda_api(const struct doca_gpu *gpu)
{
	return gpu != NULL ? gpu->cu : NULL;
}

doca_error_t sdp_gpu_mem_lookup(struct doca_gpu *gpu, const void *gpu_ptr, size_t size,
				struct sdp_gpu_mem_range *range_p)
{
	sdp_cu_deviceptr_t addr = (sdp_cu_deviceptr_t)(uintptr_t)gpu_ptr;
	struct sdp_gpu_alloc *a;
	doca_error_t status = DOCA_ERROR_NOT_FOUND;

	if (gpu == NULL || gpu_ptr == NULL || size == 0 || range_p == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&gpu->lock);
	a = gpu_find_range(gpu, addr, size);
	if (a != NULL) {
		range_p->mtype = a->mtype;
		range_p->on_device = a->on_device;
		range_p->gpu_ptr = (void *)(uintptr_t)addr;
		range_p->cpu_ptr =
			a->on_device ? NULL : (char *)a->cpu_ptr + (size_t)(addr - a->gpu_addr);
		range_p->alloc_gpu = (void *)(uintptr_t)a->gpu_addr;
		range_p->alloc_cpu = a->on_device ? NULL : a->cpu_ptr;
		range_p->alloc_size = a->size;
		range_p->gen = __atomic_load_n(&gpu->mem_gen, __ATOMIC_ACQUIRE);
		status = DOCA_SUCCESS;
	}
	pthread_mutex_unlock(&gpu->lock);
	return status;
}

uint64_t sdp_gpu_mem_gen(const struct doca_gpu *gpu)
{
	return __atomic_load_n(&gpu->mem_gen, __ATOMIC_ACQUIRE);
}

/* ---- capability query ----------------------------------------------------------------------- */

doca_error_t sdp_gpu_cap_count(int *count, const char **reason_p)
{
	const struct sdp_cuda_api *cu;
	const char *reason = "";
	int n = 0;

	if (count == NULL) {
		sdp_error("NULL count");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*count = 0;
	if (sdp_cuda_init(&cu, &reason) != DOCA_SUCCESS) {
		if (reason_p != NULL)
			*reason_p = reason;
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (cu->device_get_count(&n) != SDP_CUDA_SUCCESS)
		n = 0;
	*count = n;
	return DOCA_SUCCESS;
}

doca_error_t sdp_gpu_cap_query(int ordinal, struct sdp_gpu_cap *cap)
{
	const struct sdp_cuda_api *cu;
	const char *reason = "";
	sdp_cu_device_t device;
	int n = 0, ov_major, ov_minor;

	if (cap == NULL) {
		sdp_error("NULL output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	memset(cap, 0, sizeof(*cap));
	if (sdp_cuda_init(&cu, &reason) != DOCA_SUCCESS) {
		snprintf(cap->reason, sizeof(cap->reason), "%s", reason);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (cu->device_get_count(&n) != SDP_CUDA_SUCCESS || ordinal < 0 || ordinal >= n) {
		sdp_error("no CUDA device %d (%d visible)", ordinal, n);
		return DOCA_ERROR_NOT_FOUND;
	}
	if (cu->device_get(&device, ordinal) != SDP_CUDA_SUCCESS ||
	    cu->device_get_pci_bus_id(cap->bus_id, sizeof(cap->bus_id), device) !=
		    SDP_CUDA_SUCCESS ||
	    cu->device_get_attribute(&cap->cc_major,
				     SDP_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
				     device) != SDP_CUDA_SUCCESS ||
	    cu->device_get_attribute(&cap->cc_minor,
				     SDP_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
				     device) != SDP_CUDA_SUCCESS) {
		sdp_error("CUDA device %d cannot be queried", ordinal);
		return DOCA_ERROR_DRIVER;
	}
	for (char *c = cap->bus_id; *c != '\0'; c++)
		*c = (char)tolower((unsigned char)*c);
	if (cu->device_get_name != NULL)
		(void)cu->device_get_name(cap->name, (int)sizeof(cap->name), device);
	cap->cc_overridden = gpu_cc_override(&ov_major, &ov_minor);
	if (cap->cc_overridden) {
		cap->cc_major = ov_major;
		cap->cc_minor = ov_minor;
	}
	cap->supported =
		cap->cc_major > SDP_GPU_MIN_CC_MAJOR ||
		(cap->cc_major == SDP_GPU_MIN_CC_MAJOR && cap->cc_minor >= SDP_GPU_MIN_CC_MINOR);
	if (!cap->supported)
		snprintf(cap->reason, sizeof(cap->reason),
			 "compute capability %d.%d%s is below %d.%d", cap->cc_major, cap->cc_minor,
			 cap->cc_overridden ? " (overridden)" : "", SDP_GPU_MIN_CC_MAJOR,
			 SDP_GPU_MIN_CC_MINOR);
	return DOCA_SUCCESS;
}
