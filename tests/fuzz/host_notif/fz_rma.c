/* fuzz_host_notif: worker_rma's host half (its source included). SPDX-License-Identifier: BSD-3-Clause */
#include "../../../plugins/worker_rma/host/urom_rma.c"
#include "fz_host.h"

static void fz_done_cb(doca_error_t result, union doca_data cookie)
{
	(void)cookie;
	fz_cb(result, NULL, 0, NULL, 0);
}

static void fz_atomic_cb(doca_error_t result, union doca_data cookie, uint64_t value)
{
	(void)cookie;
	(void)value;
	fz_cb(result, NULL, 0, NULL, 0);
}

static void fz_am_cb(doca_error_t result, union doca_data cookie, uint64_t handler, const void *hdr,
		     size_t hdr_len, const void *payload, size_t len, uint64_t sender,
		     uint64_t dropped)
{
	(void)cookie;
	(void)handler;
	(void)sender;
	(void)dropped;
	fz_cb(result, hdr, hdr != NULL ? hdr_len : 0, payload, payload != NULL ? len : 0);
}

void fz_rma(struct doca_urom_worker_cmd_task *task, unsigned sel)
{
	struct rma_task_data td = {.type = sel % 8};
	union doca_data none = {0};

	if (td.type == UROM_WORKER_CMD_RMA_AM_RECV)
		td.cb.am = fz_am_cb;
	else if (td.type == UROM_WORKER_CMD_RMA_ATOMIC)
		td.cb.atomic = fz_atomic_cb;
	else
		td.cb.done = fz_done_cb;
	memcpy(fz_task_user_data(task), &td, sizeof(td));
	rma_completed(task, none, none);
}
