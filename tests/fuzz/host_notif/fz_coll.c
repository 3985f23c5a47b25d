/* fuzz_host_notif: worker_coll's host half (its source included). SPDX-License-Identifier: BSD-3-Clause */
#include "../../../plugins/worker_coll/host/urom_coll.c"
#include "fz_host.h"

static void fz_coll_cb(doca_error_t result, union doca_data cookie)
{
	(void)cookie;
	fz_cb(result, NULL, 0, NULL, 0);
}

void fz_coll(struct doca_urom_worker_cmd_task *task, unsigned sel)
{
	struct coll_task_data td = {.type = sel % 16, .cb = fz_coll_cb};
	union doca_data none = {0};

	memcpy(fz_task_user_data(task), &td, sizeof(td));
	coll_completed(task, none, none);
}
