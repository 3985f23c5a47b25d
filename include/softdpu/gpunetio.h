/*
 * softdpu extension (not part of DOCA): GPU handle queries and a compute-capability override.
 *
 * The override lets tests and demos see how softdpu treats a GPU it refuses (DOCA GPUNetIO
 * needs compute capability 8.0 or later) on a machine whose GPUs are all newer. It applies to
 * doca_gpu_create calls made after it is set. The environment variable SOFTDPU_GPU_CC_OVERRIDE
 * (e.g. "7.5", docs/environment.md) does the same for a whole process; a value set here wins.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SOFTDPU_GPUNETIO_H_
#define SOFTDPU_GPUNETIO_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_gpu;

/* What softdpu knows about a GPU handle. */
struct sdp_gpu_info {
	char bus_id[32];	  /* normalised PCIe address, "0000:ca:00.0" */
	int device_ordinal;	  /* CUDA device ordinal (as CUDA_VISIBLE_DEVICES numbers it) */
	int cc_major;		  /* compute capability the handle was created with (after the */
	int cc_minor;		  /*   override, if one applied) */
	int cc_overridden;	  /* 1 when cc_major/cc_minor come from the override */
	int dmabuf_supported;	  /* 1 when doca_gpu_dmabuf_fd can export device memory */
	int gdrcopy;		  /* 1 when GPU_CPU memory is device memory (never, for now) */
	int primary_ctx_retained; /* 1: the device's primary context (retained); 0: the
				   * creating thread's own context (cuCtxCreate) */
};

/*
 * Make later doca_gpu_create calls see compute capability major.minor instead of the GPU's own
 * (then a value below 8.0 makes them answer NOT_SUPPORTED). major < 0 removes the override
 * (SOFTDPU_GPU_CC_OVERRIDE applies again). INVALID_VALUE for major > 99 or minor outside 0..9.
 */
DOCA_EXPERIMENTAL
doca_error_t sdp_gpu_set_cc_override(int major, int minor);

/* Fill *info_p. INVALID_VALUE for NULL arguments. */
DOCA_EXPERIMENTAL
doca_error_t sdp_gpu_get_info(const struct doca_gpu *gpu, struct sdp_gpu_info *info_p);

/*
 * Capability query of the GPUs this process sees, without creating a handle (tools such as
 * softdpu-selftest). count: the number of CUDA devices (0 with DOCA_ERROR_NOT_SUPPORTED and the
 * reason in *reason_p when CUDA is not available). query: device ordinal i; supported is 1 when
 * doca_gpu_create would accept it (compute capability 8.0 or later, after the override), else 0
 * with the reason.
 */
struct sdp_gpu_cap {
	char bus_id[32];
	char name[96];
	int cc_major, cc_minor, cc_overridden;
	int supported;
	char reason[96];
};

DOCA_EXPERIMENTAL
doca_error_t sdp_gpu_cap_count(int *count, const char **reason_p);
DOCA_EXPERIMENTAL
doca_error_t sdp_gpu_cap_query(int ordinal, struct sdp_gpu_cap *cap);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_GPUNETIO_H_ */
