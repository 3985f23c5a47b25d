/*
 * What the GPU tests (the .cu files here and ladder_common.h) share to report and to give up: FAIL
 * counts a failure and goes on, CHECK / CHECK_CUDA stop the test (exit 1) on a setup step that
 * must work, CHECK_STATUS expects one status. Header-only (static), CUDA C++. The only skip (77)
 * is a machine without /dev/nvidiactl (gpu_check_require_driver); every CUDA failure is a
 * failure.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef GPU_CHECK_H_
#define GPU_CHECK_H_

#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <cuda_runtime.h>
#include <unistd.h>

#include "doca_error.h"

/* Failures counted by FAIL (and CHECK_STATUS); main returns 1 when there were any. */
[[maybe_unused]] static int failures;

#define FAIL(fmt, ...)                                                                             \
	do {                                                                                       \
		std::fprintf(stderr, "FAIL %s:%d: " fmt "\n", __FILE__, __LINE__, ##__VA_ARGS__);  \
		failures++;                                                                        \
	} while (0)

/* A setup step that must work: the test cannot go on without it. */
#define CHECK(call)                                                                                \
	do {                                                                                       \
		doca_error_t s_ = (call);                                                          \
		if (s_ != DOCA_SUCCESS) {                                                          \
			FAIL("%s: %s", #call, doca_error_get_name(s_));                            \
			std::exit(1);                                                              \
		}                                                                                  \
	} while (0)

#define CHECK_STATUS(call, want)                                                                   \
	do {                                                                                       \
		doca_error_t g_ = (call);                                                          \
		if (g_ != (want))                                                                  \
			FAIL("%s: expected %s, got %s", #call, doca_error_get_name(want),          \
			     doca_error_get_name(g_));                                             \
	} while (0)

#define CHECK_CUDA(call)                                                                           \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			std::fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call,    \
				     cudaGetErrorString(e_));                                      \
			std::exit(1);                                                              \
		}                                                                                  \
	} while (0)

/* Exits 77 (skip) when /dev/nvidiactl is absent: the one reason these tests skip. */
static inline void gpu_check_require_driver(void)
{
	if (access("/dev/nvidiactl", F_OK) != 0) {
		std::printf("SKIP: no NVIDIA driver (/dev/nvidiactl is missing)\n");
		std::exit(77);
	}
}

/* CLOCK_MONOTONIC in seconds, for the tests' bounded waits. */
static inline double host_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif /* GPU_CHECK_H_ */
