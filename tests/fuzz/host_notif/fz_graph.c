/* fuzz_host_notif: worker_graph's host half (its source included). SPDX-License-Identifier: BSD-3-Clause */
#include "../../../plugins/worker_graph/host/urom_graph.c"
#include "fz_host.h"

static void fz_graph_cb(doca_error_t result, union doca_data cookie, uint64_t data)
{
	(void)cookie;
	(void)data;
	fz_cb(result, NULL, 0, NULL, 0);
}

void fz_graph(struct doca_urom_worker_cmd_task *task, unsigned sel)
{
	struct urom_graph_task_data td = {.cb = fz_graph_cb};
	union doca_data none = {0};

	(void)sel;
	memcpy(fz_task_user_data(task), &td, sizeof(td));
	urom_graph_completed(task, none, none);
}
