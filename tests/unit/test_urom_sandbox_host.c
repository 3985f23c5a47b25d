/*
 * worker_sandbox's shared messages and host half without a service: the struct layouts both
 * halves rely on (LP64; the MEM_MAP command embeds UCX's ucp_mem_map_params_t, whose size
 * depends on the UCX version), the version check of urom_sandbox_init, and the argument and
 * state checks of the submit calls (nothing is called back when a submission fails). The
 * commands themselves run against the worker half in test_urom_sandbox_ops and end to end in
 * the integration test urom_sandbox.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stddef.h>
#include <stdint.h>

#include "doca_urom.h"
#include "t_helpers.h"
#include "urom_sandbox.h"
#include "worker_sandbox.h"

static void send_cb(doca_error_t result, union doca_data cookie, union doca_data context,
		    ucs_status_t status)
{
	(void)result;
	(void)cookie;
	(void)context;
	(void)status;
	t_fail("the send callback must not run when submission fails");
}

static void recv_cb(doca_error_t result, union doca_data cookie, union doca_data context,
		    void *buffer, uint64_t count, uint64_t sender_tag, ucs_status_t status)
{
	(void)result;
	(void)cookie;
	(void)context;
	(void)buffer;
	(void)count;
	(void)sender_tag;
	(void)status;
	t_fail("the recv callback must not run when submission fails");
}

static void mem_map_cb(doca_error_t result, union doca_data cookie, union doca_data context,
		       uint64_t memh_id)
{
	(void)result;
	(void)cookie;
	(void)context;
	(void)memh_id;
	t_fail("the mem map callback must not run when submission fails");
}

static void test_layouts(void)
{
	size_t mp = sizeof(ucp_mem_map_params_t);

	/* Enum values are part of the wire contract. */
	T_EQ_INT(UROM_WORKER_CMD_SANDBOX_MEM_MAP, 0);
	T_EQ_INT(UROM_WORKER_CMD_SANDBOX_TAG_SEND, 1);
	T_EQ_INT(UROM_WORKER_CMD_SANDBOX_TAG_RECV, 2);
	T_EQ_INT(UROM_WORKER_NOTIFY_SANDBOX_MEM_MAP, 0);
	T_EQ_INT(UROM_WORKER_NOTIFY_SANDBOX_TAG_SEND, 1);
	T_EQ_INT(UROM_WORKER_NOTIFY_SANDBOX_TAG_RECV, 2);
	T_EQ_INT(UROM_WORKER_SANDBOX_VERSION, 1);

	T_EQ_INT(offsetof(struct urom_worker_sandbox_cmd_mem_map, context), 0);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_cmd_mem_map, map_params), 8);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_cmd_mem_map, exported_memh_buffer_len),
		 8 + mp);
	T_EQ_INT(sizeof(struct urom_worker_sandbox_cmd_mem_map), 16 + mp);

	T_EQ_INT(offsetof(struct urom_worker_sandbox_cmd_tag_send, context), 0);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_cmd_tag_send, dest), 8);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_cmd_tag_send, buffer), 16);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_cmd_tag_send, count), 24);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_cmd_tag_send, tag), 32);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_cmd_tag_send, memh_id), 40);
	T_EQ_INT(sizeof(struct urom_worker_sandbox_cmd_tag_send), 48);

	T_EQ_INT(offsetof(struct urom_worker_sandbox_cmd_tag_recv, context), 0);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_cmd_tag_recv, buffer), 8);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_cmd_tag_recv, count), 16);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_cmd_tag_recv, tag), 24);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_cmd_tag_recv, tag_mask), 32);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_cmd_tag_recv, memh_id), 40);
	T_EQ_INT(sizeof(struct urom_worker_sandbox_cmd_tag_recv), 48);

	T_EQ_INT(offsetof(struct urom_worker_sandbox_cmd, type), 0);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_cmd, mem_map), 8);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_cmd, tag_send), 8);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_cmd, tag_recv), 8);
	T_EQ_INT(sizeof(struct urom_worker_sandbox_cmd), 8 + 16 + mp); /* 64 with UCX 1.13 */

	T_EQ_INT(sizeof(struct urom_worker_sandbox_notify_mem_map), 16);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_notify_mem_map, memh_id), 8);
	T_EQ_INT(sizeof(struct urom_worker_sandbox_notify_tag_send), 16);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_notify_tag_send, status), 8);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_notify_tag_recv, context), 0);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_notify_tag_recv, buffer), 8);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_notify_tag_recv, count), 16);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_notify_tag_recv, sender_tag), 24);
	T_EQ_INT(offsetof(struct urom_worker_sandbox_notify_tag_recv, status), 32);
	T_EQ_INT(sizeof(struct urom_worker_sandbox_notify_tag_recv), 40);
	T_EQ_INT(offsetof(struct urom_worker_notify_sandbox, mem_map), 8);
	T_EQ_INT(offsetof(struct urom_worker_notify_sandbox, tag_send), 8);
	T_EQ_INT(offsetof(struct urom_worker_notify_sandbox, tag_recv), 8);
	T_EQ_INT(sizeof(struct urom_worker_notify_sandbox), 48);
}

int main(void)
{
	struct doca_urom_worker *worker = NULL;
	union doca_data cookie = {.u64 = 1};
	ucp_mem_map_params_t mp;
	static const uint8_t memh[16] = {1, 2, 3};
	char data[8] = "payload";

	test_layouts();
	memset(&mp, 0, sizeof(mp));
	T_OK(doca_urom_worker_create(&worker));

	/* Before a successful init: no plugin id to address. */
	T_STATUS(urom_sandbox_tag_task_send(worker, cookie, 1, 0, (uint64_t)(uintptr_t)data, 8, 5,
					    0, send_cb),
		 DOCA_ERROR_BAD_STATE);
	T_STATUS(urom_sandbox_tag_task_recv(worker, cookie, 1, 0, 8, 5, ~0ull, 0, recv_cb),
		 DOCA_ERROR_BAD_STATE);
	T_STATUS(sdp_urom_sandbox_task_mem_map(worker, cookie, 1, mp, memh, sizeof(memh),
					       mem_map_cb),
		 DOCA_ERROR_BAD_STATE);

	/* Only the worker half of the same version is accepted. */
	T_STATUS(urom_sandbox_init(0x8, UROM_WORKER_SANDBOX_VERSION + 1),
		 DOCA_ERROR_UNSUPPORTED_VERSION);
	T_STATUS(urom_sandbox_init(0x8, 0), DOCA_ERROR_UNSUPPORTED_VERSION);
	T_STATUS(urom_sandbox_tag_task_recv(worker, cookie, 1, 0, 8, 5, ~0ull, 0, recv_cb),
		 DOCA_ERROR_BAD_STATE);
	T_OK(urom_sandbox_init(0x8, UROM_WORKER_SANDBOX_VERSION));

	/* Arguments. */
	T_STATUS(urom_sandbox_tag_task_send(NULL, cookie, 1, 0, (uint64_t)(uintptr_t)data, 8, 5, 0,
					    send_cb),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(urom_sandbox_tag_task_send(worker, cookie, 1, 0, (uint64_t)(uintptr_t)data, 8, 5,
					    0, NULL),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(urom_sandbox_tag_task_send(worker, cookie, 1, 0, 0, 8, 5, 0, send_cb),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(urom_sandbox_tag_task_send(worker, cookie, 1, 0, (uint64_t)(uintptr_t)data,
					    UINT64_MAX, 5, 0, send_cb),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(urom_sandbox_tag_task_recv(NULL, cookie, 1, 0, 8, 5, ~0ull, 0, recv_cb),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(urom_sandbox_tag_task_recv(worker, cookie, 1, 0, 8, 5, ~0ull, 0, NULL),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_sandbox_task_mem_map(NULL, cookie, 1, mp, memh, sizeof(memh), mem_map_cb),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_sandbox_task_mem_map(worker, cookie, 1, mp, NULL, sizeof(memh),
					       mem_map_cb),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_sandbox_task_mem_map(worker, cookie, 1, mp, memh, 0, mem_map_cb),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_sandbox_task_mem_map(worker, cookie, 1, mp, memh, sizeof(memh), NULL),
		 DOCA_ERROR_INVALID_VALUE);
#ifdef SDP_SANDBOX_HAVE_EXPORTED_MEMH
	/* DOCA's form needs the exported memh buffer in map_params. */
	T_STATUS(urom_sandbox_task_mem_map(worker, cookie, 1, mp, sizeof(memh), mem_map_cb),
		 DOCA_ERROR_INVALID_VALUE);
#else
	/* DOCA's form cannot name the memh bytes with this UCX. */
	T_STATUS(urom_sandbox_task_mem_map(worker, cookie, 1, mp, sizeof(memh), mem_map_cb),
		 DOCA_ERROR_NOT_SUPPORTED);
#endif

	/* A worker context that is not running refuses the task (the library's status). */
	T_TRUE(urom_sandbox_tag_task_send(worker, cookie, 1, 0, (uint64_t)(uintptr_t)data, 8, 5, 0,
					  send_cb) != DOCA_SUCCESS);
	T_TRUE(urom_sandbox_tag_task_recv(worker, cookie, 1, 0, 8, 5, ~0ull, 0, recv_cb) !=
	       DOCA_SUCCESS);
	T_TRUE(sdp_urom_sandbox_task_mem_map(worker, cookie, 1, mp, memh, sizeof(memh),
					     mem_map_cb) != DOCA_SUCCESS);

	T_OK(doca_urom_worker_destroy(worker));
	T_DONE();
}
