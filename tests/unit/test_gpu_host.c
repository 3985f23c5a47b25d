/*
 * Unit test: libdoca_gpunetio's GPU handle where there may be no GPU (CI). The library loads
 * (this program links it, and nothing of CUDA); argument checks answer INVALID_VALUE before
 * CUDA is touched and leave output parameters alone; without /dev/nvidiactl doca_gpu_create
 * answers NOT_SUPPORTED and logs the reason exactly once per call; with a GPU, a PCIe address
 * no GPU has answers NOT_FOUND. The override setter checks its range.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "doca_gpunetio.h"
#include "doca_log.h"
#include "softdpu/gpunetio.h"

#include "sdp_cuda.h"
#include "t_helpers.h"

/* Everything the SDK backend printed since the last t_log_reset(). */
static char sdk_buf[4096];
static char sdk_log[65536];
static size_t sdk_log_len;

static void sdk_flush(char *buf)
{
	size_t n = strlen(buf);

	if (n > sizeof(sdk_log) - 1 - sdk_log_len)
		n = sizeof(sdk_log) - 1 - sdk_log_len;
	memcpy(sdk_log + sdk_log_len, buf, n);
	sdk_log_len += n;
	sdk_log[sdk_log_len] = '\0';
}

static void t_log_reset(void)
{
	sdk_log_len = 0;
	sdk_log[0] = '\0';
}

static int t_log_count(const char *needle)
{
	const char *p = sdk_log;
	int n = 0;

	while ((p = strstr(p, needle)) != NULL) {
		n++;
		p += strlen(needle);
	}
	return n;
}

static int t_have_driver(void)
{
	return access("/dev/nvidiactl", F_OK) == 0;
}

/* Every call with a NULL where a pointer is required, before any CUDA work. */
static void test_null_arguments(void)
{
	struct doca_gpu *const sentinel = (struct doca_gpu *)(uintptr_t)0x5d9;
	struct doca_gpu *gpu = sentinel;
	struct sdp_gpu_info info;
	void *gptr = NULL, *cptr = NULL;
	int fd = -7;

	t_log_reset();
	T_STATUS(doca_gpu_create(NULL, &gpu), DOCA_ERROR_INVALID_VALUE);
	T_TRUE(gpu == sentinel);
	T_STATUS(doca_gpu_create("ca:00.0", NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_mem_alloc(NULL, 4096, 0, DOCA_GPU_MEM_TYPE_GPU, &gptr, &cptr),
		 DOCA_ERROR_INVALID_VALUE);
	T_TRUE(gptr == NULL && cptr == NULL);
	T_STATUS(doca_gpu_mem_free(NULL, &fd), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_dmabuf_fd(NULL, &fd, 4096, &fd), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(fd, -7);
	T_STATUS(sdp_gpu_get_info(NULL, &info), DOCA_ERROR_INVALID_VALUE);
	/* One error line per refused call (log once, where found). */
	T_EQ_INT(t_log_count("invalid argument"), 7);
}

/* Malformed PCIe addresses are refused before CUDA, whatever the machine. */
static void test_malformed_bus_ids(void)
{
	static const char *const bad[] = {
		"",
		"ca",
		"ca:00",
		"ca:00.",
		"ca:00.8",
		"ca:20.0",
		"ca:000.0",
		"cab:00.0",
		"g0:00.0",
		"ca:00.0 ",
		" ca:00.0",
		"1:2:3:4.0",
		"0:ca:00",
		"123456789:ca:00.0",
		"ca.00.0",
		"ca:00:0",
		"0000:ca:00.0x",
	};
	struct doca_gpu *const sentinel = (struct doca_gpu *)(uintptr_t)0x5d9;
	struct doca_gpu *gpu = sentinel;
	size_t i;

	t_log_reset();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		doca_error_t st = doca_gpu_create(bad[i], &gpu);

		if (st != DOCA_ERROR_INVALID_VALUE)
			t_fail("doca_gpu_create(\"%s\"): expected DOCA_ERROR_INVALID_VALUE, got %s",
			       bad[i], doca_error_get_name(st));
	}
	T_TRUE(gpu == sentinel);
	T_EQ_INT(t_log_count("malformed PCIe address"), (int)(sizeof(bad) / sizeof(bad[0])));
}

static void test_cc_override_range(void)
{
	T_STATUS(sdp_gpu_set_cc_override(100, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_gpu_set_cc_override(8, 10), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_gpu_set_cc_override(8, -1), DOCA_ERROR_INVALID_VALUE);
	T_OK(sdp_gpu_set_cc_override(7, 5));
	T_OK(sdp_gpu_set_cc_override(-1, 0));
	/* Removing it twice is fine; a negative major ignores the minor. */
	T_OK(sdp_gpu_set_cc_override(-1, 42));
}

/* No driver: NOT_SUPPORTED with the reason, once per call, and again on a second call. */
static void test_no_driver(void)
{
	struct doca_gpu *const sentinel = (struct doca_gpu *)(uintptr_t)0x5d9;
	struct doca_gpu *gpu = sentinel;
	const struct sdp_cuda_api *api = NULL;
	const char *reason = NULL;
	int round;

	for (round = 0; round < 2; round++) {
		t_log_reset();
		T_STATUS(doca_gpu_create("ca:00.0", &gpu), DOCA_ERROR_NOT_SUPPORTED);
		T_TRUE(gpu == sentinel);
		/* One record, which says why. */
		T_EQ_INT(t_log_count("softdpu::gpunetio"), 1);
		T_EQ_INT(t_log_count("CUDA is not available"), 1);
		/* The address is reported normalised. */
		T_EQ_INT(t_log_count("GPU 0000:ca:00.0"), 1);
	}
	/* The same with the long form. */
	t_log_reset();
	T_STATUS(doca_gpu_create("0000:CA:00.0", &gpu), DOCA_ERROR_NOT_SUPPORTED);
	T_EQ_INT(t_log_count("GPU 0000:ca:00.0"), 1);

	T_STATUS(sdp_cuda_init(&api, &reason), DOCA_ERROR_NOT_SUPPORTED);
	T_TRUE(api == NULL);
	T_TRUE(reason != NULL && reason[0] != '\0');
	if (sdp_cuda_load(&api) != DOCA_SUCCESS) {
		/* No driver library at all: the reason names it. */
		T_TRUE(strstr(sdp_cuda_load_reason(), "libcuda.so.1") != NULL);
		T_TRUE(reason != NULL && strstr(reason, "libcuda.so.1") != NULL);
		printf("no driver library: %s\n", sdp_cuda_load_reason());
	} else {
		/* A driver library without a device (a container): cuInit said no. */
		T_TRUE(reason != NULL && strstr(reason, "cuInit") != NULL);
		printf("driver library present, no device: %s\n", reason);
	}
}

/* A GPU machine: a PCIe address no GPU has. */
static void test_bogus_bus_id(void)
{
	struct doca_gpu *const sentinel = (struct doca_gpu *)(uintptr_t)0x5d9;
	struct doca_gpu *gpu = sentinel;

	t_log_reset();
	T_STATUS(doca_gpu_create("ff:1f.7", &gpu), DOCA_ERROR_NOT_FOUND);
	T_STATUS(doca_gpu_create("0000:ff:1f.7", &gpu), DOCA_ERROR_NOT_FOUND);
	T_TRUE(gpu == sentinel);
	T_EQ_INT(t_log_count("no GPU at PCIe address"), 2);
}

/*
 * Semaphores without a GPU: every argument and state check answers before any memory is
 * allocated (the handle below is never dereferenced by these calls).
 */
static void test_semaphore_checks(void)
{
	struct doca_gpu_semaphore *sem = NULL;
	struct doca_gpu_semaphore_gpu *h = (struct doca_gpu_semaphore_gpu *)&sem;
	enum doca_gpu_semaphore_status status = DOCA_GPU_SEMAPHORE_STATUS_HOLD;
	void *info = &status;
	static char not_a_gpu[64];

	T_STATUS(doca_gpu_semaphore_create(NULL, &sem), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_semaphore_create((struct doca_gpu *)not_a_gpu, NULL),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_semaphore_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_semaphore_start(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_semaphore_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_semaphore_set_items_num(NULL, 4), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_semaphore_set_memory_type(NULL, DOCA_GPU_MEM_TYPE_GPU),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_semaphore_set_custom_info(NULL, 8, DOCA_GPU_MEM_TYPE_GPU),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_semaphore_get_gpu_handle(NULL, &h), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_semaphore_get_status(NULL, 0, &status), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_semaphore_set_status(NULL, 0, DOCA_GPU_SEMAPHORE_STATUS_FREE),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_semaphore_get_custom_info_addr(NULL, 0, &info), DOCA_ERROR_INVALID_VALUE);

	T_OK(doca_gpu_semaphore_create((struct doca_gpu *)not_a_gpu, &sem));
	if (sem == NULL)
		return;
	T_STATUS(doca_gpu_semaphore_set_items_num(sem, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_semaphore_set_items_num(sem, (1u << 20) + 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_semaphore_set_memory_type(sem, (enum doca_gpu_mem_type)7),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_semaphore_set_custom_info(sem, 65537, DOCA_GPU_MEM_TYPE_CPU_GPU),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_semaphore_set_custom_info(sem, 8, (enum doca_gpu_mem_type)9),
		 DOCA_ERROR_INVALID_VALUE);
	/* nothing started: no handle, no items, no info; stop refused; start needs a count */
	T_STATUS(doca_gpu_semaphore_get_gpu_handle(sem, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_semaphore_get_gpu_handle(sem, &h), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_gpu_semaphore_get_status(sem, 0, &status), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_gpu_semaphore_get_status(sem, 0, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_semaphore_set_status(sem, 0, DOCA_GPU_SEMAPHORE_STATUS_READY),
		 DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_gpu_semaphore_set_status(sem, 0, (enum doca_gpu_semaphore_status)6),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_gpu_semaphore_get_custom_info_addr(sem, 0, &info), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_gpu_semaphore_stop(sem), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_gpu_semaphore_start(sem), DOCA_ERROR_BAD_STATE);
	/* every output left alone */
	T_TRUE(h == (struct doca_gpu_semaphore_gpu *)&sem);
	T_EQ_INT(status, DOCA_GPU_SEMAPHORE_STATUS_HOLD);
	T_TRUE(info == &status);
	/* the valid settings are taken */
	T_OK(doca_gpu_semaphore_set_items_num(sem, 1024));
	T_OK(doca_gpu_semaphore_set_memory_type(sem, DOCA_GPU_MEM_TYPE_GPU));
	T_OK(doca_gpu_semaphore_set_custom_info(sem, 64, DOCA_GPU_MEM_TYPE_CPU_GPU));
	T_OK(doca_gpu_semaphore_destroy(sem));
}

int main(void)
{
	struct doca_log_backend *sdk;

	T_OK(doca_log_backend_create_with_buf_sdk(sdk_buf, sizeof(sdk_buf), sdk_flush, &sdk));
	T_OK(doca_log_backend_set_sdk_level(sdk, DOCA_LOG_LEVEL_WARNING));

	test_null_arguments();
	test_malformed_bus_ids();
	test_cc_override_range();
	test_semaphore_checks();
	if (t_have_driver()) {
		printf("/dev/nvidiactl present: checking NOT_FOUND for a bogus address\n");
		test_bogus_bus_id();
	} else {
		printf("/dev/nvidiactl absent: checking NOT_SUPPORTED\n");
		test_no_driver();
	}
	T_DONE();
}
