/*
 * softdpu: the CUDA driver API loaded at run time (see sdp_cuda.h).
 *
 * One pthread_once loads libcuda.so.1 and resolves every entry point by its ABI name (the _v2
 * names where the driver has several versions); a second one runs cuInit. Both results are
 * kept for the life of the process, so a machine without a driver pays for one failed dlopen.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "sdp_cuda.h"
#include "sdp_log.h"

SDP_LOG_COMPONENT("gpunetio");

#define SDP_CUDA_LIBRARY "libcuda.so.1"

struct sdp_cuda_sym {
	const char *name;
	size_t offset; /* of the member in struct sdp_cuda_api */
	int optional;
};

#define SDP_CUDA_SYM(member, name)                                                                 \
	{                                                                                          \
		name, offsetof(struct sdp_cuda_api, member), 0                                     \
	}
#define SDP_CUDA_SYM_OPT(member, name)                                                             \
	{                                                                                          \
		name, offsetof(struct sdp_cuda_api, member), 1                                     \
	}

static const struct sdp_cuda_sym sdp_cuda_syms[] = {
	SDP_CUDA_SYM(init, "cuInit"),
	SDP_CUDA_SYM(driver_get_version, "cuDriverGetVersion"),
	SDP_CUDA_SYM(get_error_string, "cuGetErrorString"),
	SDP_CUDA_SYM(get_error_name, "cuGetErrorName"),
	SDP_CUDA_SYM(device_get_count, "cuDeviceGetCount"),
	SDP_CUDA_SYM(device_get, "cuDeviceGet"),
	SDP_CUDA_SYM(device_get_by_pci_bus_id, "cuDeviceGetByPCIBusId"),
	SDP_CUDA_SYM(device_get_pci_bus_id, "cuDeviceGetPCIBusId"),
	SDP_CUDA_SYM(device_get_name, "cuDeviceGetName"),
	SDP_CUDA_SYM(device_get_attribute, "cuDeviceGetAttribute"),
	SDP_CUDA_SYM(device_primary_ctx_retain, "cuDevicePrimaryCtxRetain"),
	SDP_CUDA_SYM(device_primary_ctx_release, "cuDevicePrimaryCtxRelease_v2"),
	SDP_CUDA_SYM(ctx_get_current, "cuCtxGetCurrent"),
	SDP_CUDA_SYM(ctx_set_current, "cuCtxSetCurrent"),
	SDP_CUDA_SYM(ctx_get_device, "cuCtxGetDevice"),
	SDP_CUDA_SYM(ctx_push_current, "cuCtxPushCurrent_v2"),
	SDP_CUDA_SYM(ctx_pop_current, "cuCtxPopCurrent_v2"),
	SDP_CUDA_SYM(mem_alloc, "cuMemAlloc_v2"),
	SDP_CUDA_SYM(mem_free, "cuMemFree_v2"),
	SDP_CUDA_SYM(mem_host_alloc, "cuMemHostAlloc"),
	SDP_CUDA_SYM(mem_host_get_device_pointer, "cuMemHostGetDevicePointer_v2"),
	SDP_CUDA_SYM(mem_free_host, "cuMemFreeHost"),
	SDP_CUDA_SYM(pointer_set_attribute, "cuPointerSetAttribute"),
	SDP_CUDA_SYM_OPT(mem_get_handle_for_address_range, "cuMemGetHandleForAddressRange"),
	SDP_CUDA_SYM(memset_d8, "cuMemsetD8_v2"),
	SDP_CUDA_SYM(memcpy_htod, "cuMemcpyHtoD_v2"),
	SDP_CUDA_SYM(memcpy_dtoh, "cuMemcpyDtoH_v2"),
	SDP_CUDA_SYM(stream_create, "cuStreamCreate"),
	SDP_CUDA_SYM(stream_destroy, "cuStreamDestroy_v2"),
	SDP_CUDA_SYM(stream_synchronize, "cuStreamSynchronize"),
	SDP_CUDA_SYM(stream_query, "cuStreamQuery"),
	SDP_CUDA_SYM(memcpy_htod_async, "cuMemcpyHtoDAsync_v2"),
	SDP_CUDA_SYM(memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2"),
	SDP_CUDA_SYM(event_create, "cuEventCreate"),
	SDP_CUDA_SYM(event_record, "cuEventRecord"),
	SDP_CUDA_SYM(event_query, "cuEventQuery"),
	SDP_CUDA_SYM(event_destroy, "cuEventDestroy_v2"),
	SDP_CUDA_SYM_OPT(stream_write_value32, "cuStreamWriteValue32_v2"),
	SDP_CUDA_SYM_OPT(device_total_mem, "cuDeviceTotalMem_v2"),
};

/* Written once by the pthread_once routines, read-only afterwards. */
static pthread_once_t sdp_cuda_load_once = PTHREAD_ONCE_INIT;
static pthread_once_t sdp_cuda_init_once = PTHREAD_ONCE_INIT;
static struct sdp_cuda_api sdp_cuda_api_table;
static doca_error_t sdp_cuda_load_status = DOCA_ERROR_NOT_SUPPORTED;
static doca_error_t sdp_cuda_init_status = DOCA_ERROR_NOT_SUPPORTED;
static char sdp_cuda_load_why[256];
static char sdp_cuda_init_why[320];

static void cuda_do_load(void)
{
	struct sdp_cuda_api api;
	const char *err;
	void *handle;
	void *sym;
	size_t i;

	memset(&api, 0, sizeof(api));
	handle = dlopen(SDP_CUDA_LIBRARY, RTLD_NOW | RTLD_LOCAL);
	if (handle == NULL) {
		err = dlerror();
		snprintf(sdp_cuda_load_why, sizeof(sdp_cuda_load_why), "no CUDA driver library: %s",
			 err != NULL ? err : SDP_CUDA_LIBRARY);
		sdp_debug("%s", sdp_cuda_load_why);
		return;
	}

	for (i = 0; i < sizeof(sdp_cuda_syms) / sizeof(sdp_cuda_syms[0]); i++) {
		(void)dlerror();
		sym = dlsym(handle, sdp_cuda_syms[i].name);
		if (sym == NULL) {
			if (sdp_cuda_syms[i].optional) {
				sdp_debug("%s lacks %s (optional)", SDP_CUDA_LIBRARY,
					  sdp_cuda_syms[i].name);
				continue;
			}
			snprintf(sdp_cuda_load_why, sizeof(sdp_cuda_load_why),
				 "%s lacks %s (driver too old?)", SDP_CUDA_LIBRARY,
				 sdp_cuda_syms[i].name);
			sdp_debug("%s", sdp_cuda_load_why);
			dlclose(handle);
			return;
		}
		/* POSIX: object and function pointers have one representation. */
		memcpy((char *)&api + sdp_cuda_syms[i].offset, &sym, sizeof(sym));
	}

	sdp_cuda_api_table = api;
	sdp_cuda_load_status = DOCA_SUCCESS;
	sdp_debug("loaded %s", SDP_CUDA_LIBRARY);
}

doca_error_t sdp_cuda_load(const struct sdp_cuda_api **api_p)
{
	if (api_p == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_once(&sdp_cuda_load_once, cuda_do_load);
	if (sdp_cuda_load_status != DOCA_SUCCESS)
		return sdp_cuda_load_status;
	*api_p = &sdp_cuda_api_table;
	return DOCA_SUCCESS;
}

const char *sdp_cuda_load_reason(void)
{
	pthread_once(&sdp_cuda_load_once, cuda_do_load);
	return sdp_cuda_load_why;
}

static void cuda_do_init(void)
{
	const struct sdp_cuda_api *api;
	sdp_cu_result_t res;
	char err[160];
	int version = 0;

	if (sdp_cuda_load(&api) != DOCA_SUCCESS) {
		snprintf(sdp_cuda_init_why, sizeof(sdp_cuda_init_why), "%s",
			 sdp_cuda_load_reason());
		return;
	}
	res = api->init(0);
	if (res != SDP_CUDA_SUCCESS) {
		snprintf(sdp_cuda_init_why, sizeof(sdp_cuda_init_why),
			 "cuInit failed: %s (no usable NVIDIA driver or GPU)",
			 sdp_cuda_strerror(res, err, sizeof(err)));
		return;
	}
	if (api->driver_get_version(&version) == SDP_CUDA_SUCCESS)
		sdp_debug("CUDA driver API %d.%d", version / 1000, (version % 1000) / 10);
	sdp_cuda_init_status = DOCA_SUCCESS;
}

doca_error_t sdp_cuda_init(const struct sdp_cuda_api **api_p, const char **reason_p)
{
	if (api_p == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_once(&sdp_cuda_init_once, cuda_do_init);
	if (sdp_cuda_init_status != DOCA_SUCCESS) {
		if (reason_p != NULL)
			*reason_p = sdp_cuda_init_why;
		return sdp_cuda_init_status;
	}
	*api_p = &sdp_cuda_api_table;
	return DOCA_SUCCESS;
}

const char *sdp_cuda_strerror(sdp_cu_result_t result, char *buf, size_t len)
{
	const char *name = NULL;
	const char *descr = NULL;

	if (buf == NULL || len == 0)
		return "";
	if (sdp_cuda_load_status == DOCA_SUCCESS) {
		if (sdp_cuda_api_table.get_error_name(result, &name) != SDP_CUDA_SUCCESS)
			name = NULL;
		if (sdp_cuda_api_table.get_error_string(result, &descr) != SDP_CUDA_SUCCESS)
			descr = NULL;
	}
	if (name != NULL && descr != NULL)
		snprintf(buf, len, "%s (%s)", name, descr);
	else if (name != NULL)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "CUresult %d", result);
	return buf;
}

doca_error_t sdp_cuda_to_doca(sdp_cu_result_t result)
{
	switch (result) {
	case SDP_CUDA_SUCCESS:
		return DOCA_SUCCESS;
	case SDP_CUDA_ERROR_INVALID_VALUE:
		return DOCA_ERROR_INVALID_VALUE;
	case SDP_CUDA_ERROR_OUT_OF_MEMORY:
		return DOCA_ERROR_NO_MEMORY;
	case SDP_CUDA_ERROR_NOT_SUPPORTED:
		return DOCA_ERROR_NOT_SUPPORTED;
	case SDP_CUDA_ERROR_NOT_READY:
		return DOCA_ERROR_AGAIN;
	default:
		return DOCA_ERROR_DRIVER;
	}
}
