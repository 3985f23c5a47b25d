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

static char g_log[1 << 14];
static char g_rec[1024];
static int g_records;

static void on_record(char *buf)
{
	g_records++;
	strncat(g_log, buf, sizeof(g_log) - strlen(g_log) - 2);
	strcat(g_log, "\n");
}

static void reset(void)
{
	g_log[0] = '\0';
	g_records = 0;
}

/* The last call logged exactly one record, holding "[<func>] <message>". */
#define T_ONE_RECORD(func, message) t_one_record(__LINE__, "][" func "] " message)
static void t_one_record(int line, const char *want)
{
	if (g_records != 1 || strstr(g_log, want) == NULL)
		t_fail("line %d: expected one record with \"%s\", got %d:\n%s", line, want,
		       g_records, g_log);
	reset();
}

int main(void)
{
	struct doca_log_backend *be;
	static _Alignas(64) char not_a_devinfo[4096]; /* zeroes: no live magic */
	char name[64];
	size_t len = 0;
	uint32_t num = 0;
	int x;

	T_OK(doca_log_backend_create_with_buf_sdk(g_rec, sizeof(g_rec), on_record, &be));
	T_OK(doca_log_backend_set_sdk_level(be, DOCA_LOG_LEVEL_WARNING));
	reset();

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
