/*
 * worker_coll's shared messages and host half without a service: the layouts both halves
 * rely on (LP64), the version and team checks of urom_coll_init, and the argument and state
 * checks of the submit calls and blocking helpers (nothing is called back when a submission
 * fails). The collectives themselves run end to end in the integration tests urom_coll_*.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stddef.h>
#include <stdint.h>

#include "doca_urom.h"
#include "t_helpers.h"
#include "urom_coll.h"
#include "worker_coll.h"

static void done_cb(doca_error_t result, union doca_data cookie)
{
	(void)result;
	(void)cookie;
	t_fail("the callback must not run when submission fails");
}

static void test_layouts(void)
{
	T_EQ_INT(UROM_WORKER_CMD_COLL_BARRIER, 0);
	T_EQ_INT(UROM_WORKER_CMD_COLL_ALLREDUCE, 1);
	T_EQ_INT(UROM_WORKER_CMD_COLL_ALLTOALL, 2);
	T_EQ_INT(UROM_WORKER_CMD_COLL_ALLGATHER, 3);
	T_EQ_INT(UROM_WORKER_CMD_COLL_BCAST, 4);
	T_EQ_INT(UROM_COLL_DOUBLE, 5);
	T_EQ_INT(UROM_COLL_BXOR, 6);
	T_EQ_INT(UROM_WORKER_COLL_VERSION, 1);
	T_EQ_INT(UROM_COLL_CTRL_LEN, 1024);
	T_EQ_INT(sizeof(struct urom_coll_slot), 16);
	T_EQ_INT(offsetof(struct urom_coll_slot, phase), 8);
	T_EQ_INT(sizeof(struct urom_worker_coll_cmd), 80);
	T_EQ_INT(offsetof(struct urom_worker_coll_cmd, sbuf_va), 32);
	T_EQ_INT(offsetof(struct urom_worker_coll_cmd, root), 72);
	T_EQ_INT(sizeof(struct urom_worker_notify_coll), 32);
	T_EQ_INT(offsetof(struct urom_worker_notify_coll, status), 16);
}

int main(void)
{
	struct doca_urom_worker *worker = NULL;
	union doca_data cookie = {.u64 = 1};
	struct urom_worker_coll_cmd c = {.type = UROM_WORKER_CMD_COLL_BARRIER};
	uint64_t a[4] = {0};

	test_layouts();
	T_OK(doca_urom_worker_create(&worker));

	/* Before a successful init: no plugin id to address. */
	T_STATUS(urom_coll_barrier(worker, cookie, done_cb), DOCA_ERROR_BAD_STATE);
	T_STATUS(urom_coll_init(0x8, UROM_WORKER_COLL_VERSION + 1, 0, 2),
		 DOCA_ERROR_UNSUPPORTED_VERSION);
	T_STATUS(urom_coll_init(0x8, UROM_WORKER_COLL_VERSION, 0, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(urom_coll_init(0x8, UROM_WORKER_COLL_VERSION, 2, 2), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(urom_coll_init(0x8, UROM_WORKER_COLL_VERSION, 0, UROM_COLL_MAX_MEMBERS + 1),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(urom_coll_allreduce(worker, cookie, a, a + 2, 1, UROM_COLL_INT64, UROM_COLL_SUM,
				     done_cb),
		 DOCA_ERROR_BAD_STATE);
	T_OK(urom_coll_init(0x8, UROM_WORKER_COLL_VERSION, 1, 2));

	/* Arguments. */
	T_STATUS(urom_coll_barrier(NULL, cookie, done_cb), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(urom_coll_alltoall(worker, cookie, a, a + 2, 1, UROM_COLL_INT64, NULL),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(urom_coll_submit(worker, cookie, NULL, done_cb), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(urom_coll_barrier_wait(worker, NULL, 100), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(urom_coll_submit_wait(worker, NULL, &c, 100), DOCA_ERROR_INVALID_VALUE);

	/* A worker context that is not running refuses the task (the library's status). */
	T_TRUE(urom_coll_barrier(worker, cookie, done_cb) != DOCA_SUCCESS);
	T_TRUE(urom_coll_allgather(worker, cookie, a, a + 2, 1, UROM_COLL_INT64, done_cb) !=
	       DOCA_SUCCESS);
	T_TRUE(urom_coll_bcast(worker, cookie, a, a + 2, 1, UROM_COLL_INT64, 0, done_cb) !=
	       DOCA_SUCCESS);

	T_OK(doca_urom_worker_destroy(worker));
	T_DONE();
}
