/* fuzz_host_notif: worker_sandbox's host half (its source included). SPDX-License-Identifier: BSD-3-Clause */
#include "../../../plugins/worker_sandbox/host/urom_sandbox.c"
#include "fz_host.h"

static void fz_send_cb(doca_error_t result, union doca_data cookie, union doca_data context,
		       ucs_status_t status)
{
	(void)cookie;
	(void)context;
	(void)status;
	fz_cb(result, NULL, 0, NULL, 0);
}

static void fz_recv_cb(doca_error_t result, union doca_data cookie, union doca_data context,
		       void *buffer, uint64_t count, uint64_t sender_tag, ucs_status_t status)
{
	(void)cookie;
	(void)context;
	(void)sender_tag;
	(void)status;
	fz_cb(result, buffer, buffer != NULL ? count : 0, NULL, 0);
}

static void fz_map_cb(doca_error_t result, union doca_data cookie, union doca_data context,
		      uint64_t memh_id)
{
	(void)cookie;
	(void)context;
	(void)memh_id;
	fz_cb(result, NULL, 0, NULL, 0);
}

void fz_sandbox(struct doca_urom_worker_cmd_task *task, unsigned sel)
{
	struct urom_sandbox_task_data td = {.context = sel};
	union doca_data none = {0};

	switch (sel % 3) {
	case 0:
		td.cb.send = fz_send_cb;
		memcpy(fz_task_user_data(task), &td, sizeof(td));
		sandbox_send_completed(task, none, none);
		break;
	case 1:
		td.cb.recv = fz_recv_cb;
		memcpy(fz_task_user_data(task), &td, sizeof(td));
		sandbox_recv_completed(task, none, none);
		break;
	default:
		td.cb.mem_map = fz_map_cb;
		memcpy(fz_task_user_data(task), &td, sizeof(td));
		sandbox_mem_map_completed(task, none, none);
		break;
	}
}
