/* fuzz_host_notif: worker_rdmo's host half (its source included). SPDX-License-Identifier: BSD-3-Clause */
#include "../../../plugins/worker_rdmo/host/worker_rdmo.c"
#include "fz_host.h"

static void fz_init_cb(doca_error_t result, union doca_data cookie, void *addr, uint64_t len)
{
	(void)cookie;
	fz_cb(result, addr, addr != NULL ? len : 0, NULL, 0);
}

static void fz_id_cb(doca_error_t result, union doca_data cookie, uint64_t id)
{
	(void)cookie;
	(void)id;
	fz_cb(result, NULL, 0, NULL, 0);
}

void fz_rdmo(struct doca_urom_worker_cmd_task *task, unsigned sel)
{
	struct urom_rdmo_task_data td = {.type = sel % 6};
	union doca_data none = {0};

	if (td.type == UROM_WORKER_CMD_RDMO_CLIENT_INIT)
		td.cb.client_init = fz_init_cb;
	else
		td.cb.rq_create = fz_id_cb; /* the other four have this signature */
	memcpy(fz_task_user_data(task), &td, sizeof(td));
	rdmo_completed(task, none, none);
}
