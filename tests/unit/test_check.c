/*
 * The argument checks of the DOCA Core objects (src/common/sdp_check.h): each refusal returns
 * its status and logs exactly one record, and that record names the API call the program made
 * (not an internal helper such as set_range or set_started, and without a hand-written prefix).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <string.h>

#include "doca_buf.h"
#include "doca_buf_inventory.h"
#include "doca_buf_pool.h"
#include "doca_dev.h"
#include "doca_log.h"
#include "doca_mmap.h"
#include "t_helpers.h"
#include "t_log_capture.h"

/* The last call logged exactly one record, holding "[<func>] <message>". */
#define T_ONE_RECORD(func, message) t_one_record(__LINE__, "][" func "] " message)
static void t_one_record(int line, const char *want)
{
	if (t_log_nb != 1 || strstr(t_log, want) == NULL)
		t_fail("line %d: expected one record with \"%s\", got %d:\n%s", line, want,
		       t_log_nb, t_log);
	t_log_reset();
}

int main(void)
{
	struct doca_log_backend *be;
	static _Alignas(64) char not_a_devinfo[4096]; /* zeroes: no live magic */
	char name[64];
	size_t len = 0;
	uint32_t num = 0;
	int x;

	be = t_log_capture_level(DOCA_LOG_LEVEL_WARNING);

	T_STATUS(doca_mmap_set_memrange(NULL, &x, sizeof(x)), DOCA_ERROR_INVALID_VALUE);
	T_ONE_RECORD("doca_mmap_set_memrange", "NULL mmap");
	T_STATUS(doca_mmap_start(NULL), DOCA_ERROR_INVALID_VALUE);
	T_ONE_RECORD("doca_mmap_start", "NULL mmap");
	T_STATUS(doca_buf_inventory_start(NULL), DOCA_ERROR_INVALID_VALUE);
	T_ONE_RECORD("doca_buf_inventory_start", "NULL inventory");
	T_STATUS(doca_buf_inventory_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	T_ONE_RECORD("doca_buf_inventory_stop", "NULL inventory");
	T_STATUS(doca_buf_pool_get_num_elements(NULL, &num), DOCA_ERROR_INVALID_VALUE);
	T_ONE_RECORD("doca_buf_pool_get_num_elements", "NULL buf_pool");
	T_STATUS(doca_buf_get_len(NULL, &len), DOCA_ERROR_INVALID_VALUE);
	T_ONE_RECORD("doca_buf_get_len", "NULL buf");
	T_STATUS(doca_buf_inventory_create(4, NULL), DOCA_ERROR_INVALID_VALUE);
	T_ONE_RECORD("doca_buf_inventory_create", "NULL inventory");
	T_STATUS(doca_devinfo_get_ibdev_name(NULL, name, sizeof(name)), DOCA_ERROR_INVALID_VALUE);
	T_ONE_RECORD("doca_devinfo_get_ibdev_name", "NULL devinfo");
	T_STATUS(doca_devinfo_get_iface_name((struct doca_devinfo *)not_a_devinfo, name,
					     sizeof(name)),
		 DOCA_ERROR_INVALID_VALUE);
	T_ONE_RECORD("doca_devinfo_get_iface_name", "invalid (destroyed?) devinfo");

	T_OK(doca_log_backend_set_sdk_level(be, DOCA_LOG_LEVEL_DISABLE));
	T_DONE();
}
