/*
 * libdoca_gpunetio_device.a: in DOCA, the static library of the GPUNetIO device functions that
 * are not open source, which DOCA's applications link (-Wl,--whole-archive
 * -ldoca_gpunetio_device). softdpu defines every device function inline in its .cuh headers,
 * so a kernel needs nothing from here; the archive exists so that such link lines work
 * unchanged, and holds only this ABI stamp (nm shows which library a program got).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>

/* softdpu's GPUNetIO device ABI: the headers' layout of the GPU handles (1). */
uint32_t sdp_gpunetio_device_abi(void);

uint32_t sdp_gpunetio_device_abi(void)
{
	return 1;
}
