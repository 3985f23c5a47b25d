/*
 * worker_graph host half without a service: the version check of urom_graph_init and the
 * argument and state checks of urom_graph_task_loopback (the loopback itself runs end to end in
 * the integration tests, the sample and bench/urom_cmd).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>

#include "doca_urom.h"
#include "t_helpers.h"
#include "urom_graph.h"
#include "worker_graph.h"

static void loopback_cb(doca_error_t result, union doca_data cookie, uint64_t data)
{
	(void)result;
	(void)cookie;
	(void)data;
	t_fail("the callback must not run when submission fails");
}

int main(void)
{
	struct doca_urom_worker *worker = NULL;
	union doca_data cookie = {.u64 = 1};

	T_OK(doca_urom_worker_create(&worker));

	/* Before a successful init: no plugin id to address. */
	T_STATUS(urom_graph_task_loopback(worker, cookie, 5, loopback_cb), DOCA_ERROR_BAD_STATE);

	/* Only the worker half of the same version is accepted. */
	T_STATUS(urom_graph_init(0x4, UROM_WORKER_GRAPH_VERSION + 1),
		 DOCA_ERROR_UNSUPPORTED_VERSION);
	T_STATUS(urom_graph_init(0x4, 0), DOCA_ERROR_UNSUPPORTED_VERSION);
	T_STATUS(urom_graph_task_loopback(worker, cookie, 5, loopback_cb), DOCA_ERROR_BAD_STATE);
	T_OK(urom_graph_init(0x4, UROM_WORKER_GRAPH_VERSION));

	T_STATUS(urom_graph_task_loopback(NULL, cookie, 5, loopback_cb), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(urom_graph_task_loopback(worker, cookie, 5, NULL), DOCA_ERROR_INVALID_VALUE);

	/* A worker context that is not running refuses the task (the library's status). */
	T_TRUE(urom_graph_task_loopback(worker, cookie, 5, loopback_cb) != DOCA_SUCCESS);

	T_OK(doca_urom_worker_destroy(worker));
	T_DONE();
}
