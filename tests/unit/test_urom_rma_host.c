/*
 * worker_rma's shared messages and host half without a service: the layouts both halves rely
 * on (LP64), the version check of urom_rma_init, and the argument and state checks of the
 * submit calls and blocking helpers (nothing is called back when a submission fails). The
 * commands themselves run end to end in the integration tests urom_rma and urom_ladder.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stddef.h>
#include <stdint.h>

#include "doca_urom.h"
#include "t_helpers.h"
#include "urom_rma.h"
#include "worker_rma.h"
#include "worker_rma_am_wire.h"

static void done_cb(doca_error_t result, union doca_data cookie)
{
	(void)result;
	(void)cookie;
	t_fail("the callback must not run when submission fails");
}

static void atomic_cb(doca_error_t result, union doca_data cookie, uint64_t value)
{
	(void)result;
	(void)cookie;
	(void)value;
	t_fail("the atomic callback must not run when submission fails");
}

static void am_cb(doca_error_t result, union doca_data cookie, uint64_t handler, const void *hdr,
		  size_t hdr_len, const void *payload, size_t len, uint64_t sender,
		  uint64_t dropped)
{
	(void)result, (void)cookie, (void)handler, (void)hdr, (void)hdr_len, (void)payload;
	(void)len, (void)sender, (void)dropped;
	t_fail("the AM callback must not run when submission fails");
}

static void test_layouts(void)
{
	T_EQ_INT(UROM_WORKER_CMD_RMA_PUT, 0);
	T_EQ_INT(UROM_WORKER_CMD_RMA_GET, 1);
	T_EQ_INT(UROM_WORKER_CMD_RMA_ATOMIC, 2);
	T_EQ_INT(UROM_WORKER_CMD_RMA_FENCE, 3);
	T_EQ_INT(UROM_WORKER_CMD_RMA_FLUSH, 4);
	T_EQ_INT(UROM_RMA_ATOMIC_FXOR, 9);
	T_EQ_INT(UROM_WORKER_CMD_RMA_AM_SEND, 5);
	T_EQ_INT(UROM_WORKER_CMD_RMA_AM_RECV, 6);
	T_EQ_INT(UROM_WORKER_RMA_VERSION, 2);
	T_EQ_INT(sizeof(struct urom_worker_rma_cmd_am_send), 48);
	T_EQ_INT(offsetof(struct urom_worker_rma_cmd_am_send, len), 40);
	T_EQ_INT(sizeof(struct urom_worker_rma_cmd_am_recv), 16);
	T_EQ_INT(sizeof(struct urom_worker_notify_rma_am), 72);
	T_EQ_INT(offsetof(struct urom_worker_notify_rma_am, dropped), 64);
	T_EQ_INT(32 + sizeof(struct urom_worker_notify_rma_am), UROM_RMA_AM_OVERHEAD);
	T_EQ_INT(sizeof(struct urom_worker_rma_cmd_xfer), 48);
	T_EQ_INT(offsetof(struct urom_worker_rma_cmd_xfer, len), 40);
	T_EQ_INT(sizeof(struct urom_worker_rma_cmd_atomic), 56);
	T_EQ_INT(offsetof(struct urom_worker_rma_cmd_atomic, compare), 48);
	T_EQ_INT(sizeof(struct urom_worker_rma_cmd_sync), 16);
	T_EQ_INT(offsetof(struct urom_worker_rma_cmd, xfer), 8);
	T_EQ_INT(sizeof(struct urom_worker_rma_cmd), 64);
	T_EQ_INT(sizeof(struct urom_worker_notify_rma), 40);
	T_EQ_INT(offsetof(struct urom_worker_notify_rma, value), 24);
}

/* The worker-to-worker AM parser on good, short, long and lying inputs. */
static void test_am_wire(void)
{
	uint8_t buf[sizeof(struct urom_rma_am_wire) + 200] = {0};
	struct urom_rma_am_wire w = {
		.magic = UROM_RMA_AM_MAGIC, .handler = 7, .sender = 3, .hdr_len = 10, .len = 90};
	struct urom_rma_am_wire out;
	size_t n = sizeof(w) + 100;

	T_EQ_INT(sizeof(struct urom_rma_am_wire), 24);
	memcpy(buf, &w, sizeof(w));
	T_TRUE(urom_rma_am_wire_parse(buf, n, 100, &out));
	T_EQ_INT(out.handler, 7);
	T_EQ_INT(out.sender, 3);
	T_EQ_INT(out.hdr_len, 10);
	T_EQ_INT(out.len, 90);
	T_TRUE(!urom_rma_am_wire_parse(buf, n, 99, &out));	/* over the receiver's bound */
	T_TRUE(!urom_rma_am_wire_parse(buf, n - 1, 100, &out)); /* short */
	T_TRUE(!urom_rma_am_wire_parse(buf, n + 1, 200, &out)); /* trailing bytes */
	T_TRUE(!urom_rma_am_wire_parse(buf, sizeof(w) - 1, 100, &out));
	T_TRUE(!urom_rma_am_wire_parse(NULL, n, 100, &out));
	w.len = UINT32_MAX; /* hdr_len + len wraps in 32 bits */
	memcpy(buf, &w, sizeof(w));
	T_TRUE(!urom_rma_am_wire_parse(buf, n, SIZE_MAX, &out));
	w.len = 90;
	w.hdr_len = UROM_RMA_AM_HDR_MAX + 1;
	memcpy(buf, &w, sizeof(w));
	T_TRUE(!urom_rma_am_wire_parse(buf, sizeof(w) + 90 + w.hdr_len, 1000, &out));
	w.hdr_len = 10;
	w.magic ^= 1;
	memcpy(buf, &w, sizeof(w));
	T_TRUE(!urom_rma_am_wire_parse(buf, n, 100, &out));
}

int main(void)
{
	struct doca_urom_worker *worker = NULL;
	union doca_data cookie = {.u64 = 1};
	uint64_t v = 0;

	test_layouts();
	test_am_wire();
	T_OK(doca_urom_worker_create(&worker));

	/* Before a successful init: no plugin id to address. */
	T_STATUS(urom_rma_put(worker, cookie, 1, 0x1000, 0x2000, 8, done_cb), DOCA_ERROR_BAD_STATE);
	T_STATUS(urom_rma_flush(worker, cookie, UROM_RMA_DEST_ALL, done_cb), DOCA_ERROR_BAD_STATE);
	T_STATUS(urom_rma_init(0x4, UROM_WORKER_RMA_VERSION + 1), DOCA_ERROR_UNSUPPORTED_VERSION);
	T_STATUS(urom_rma_get(worker, cookie, 1, 0x1000, 0x2000, 8, done_cb), DOCA_ERROR_BAD_STATE);
	T_OK(urom_rma_init(0x4, UROM_WORKER_RMA_VERSION));
	urom_rma_set_local_id(3);

	/* Arguments. */
	T_STATUS(urom_rma_put(NULL, cookie, 1, 0x1000, 0x2000, 8, done_cb),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(urom_rma_get(worker, cookie, 1, 0x1000, 0x2000, 8, NULL),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(urom_rma_atomic(worker, cookie, UROM_RMA_ATOMIC_ADD, 8, 1, 0x2000, 1, 0, NULL),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(urom_rma_fence(NULL, cookie, 1, done_cb), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(urom_rma_flush(worker, cookie, 1, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(urom_rma_put_wait(worker, NULL, 1, 0x1000, 0x2000, 8, 100),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(urom_rma_atomic_wait(worker, NULL, UROM_RMA_ATOMIC_FADD, 8, 1, 0x2000, 1, 0, &v,
				      100),
		 DOCA_ERROR_INVALID_VALUE);

	{
		uint8_t h[UROM_RMA_AM_HDR_MAX + 1] = {0};
		struct urom_rma_am_msg m = {.hdr = h};

		T_STATUS(urom_rma_am_send(worker, cookie, 1, 1, h, sizeof(h), NULL, 0, done_cb),
			 DOCA_ERROR_INVALID_VALUE);
		T_STATUS(urom_rma_am_send(worker, cookie, 1, 1, NULL, 1, NULL, 0, done_cb),
			 DOCA_ERROR_INVALID_VALUE);
		T_STATUS(urom_rma_am_send(worker, cookie, 1, 1, NULL, 0, NULL, 1, done_cb),
			 DOCA_ERROR_INVALID_VALUE);
		T_STATUS(urom_rma_am_send(worker, cookie, 1, 1ull << 32, NULL, 0, NULL, 0, done_cb),
			 DOCA_ERROR_INVALID_VALUE);
		T_STATUS(urom_rma_am_send(worker, cookie, 1, 1, NULL, 0, NULL, 0, NULL),
			 DOCA_ERROR_INVALID_VALUE);
		T_STATUS(urom_rma_am_recv(worker, cookie, 1ull << 32, am_cb),
			 DOCA_ERROR_INVALID_VALUE);
		T_STATUS(urom_rma_am_recv(NULL, cookie, 1, am_cb), DOCA_ERROR_INVALID_VALUE);
		T_STATUS(urom_rma_am_recv_wait(worker, NULL, 1, &m, 100), DOCA_ERROR_INVALID_VALUE);
		T_STATUS(urom_rma_am_recv_wait(worker, NULL, 1, NULL, 100),
			 DOCA_ERROR_INVALID_VALUE);
		T_TRUE(urom_rma_am_recv(worker, cookie, UROM_RMA_AM_ANY, am_cb) != DOCA_SUCCESS);
	}

	/* A worker context that is not running refuses the task (the library's status). */
	T_TRUE(urom_rma_put(worker, cookie, 1, 0x1000, 0x2000, 8, done_cb) != DOCA_SUCCESS);
	T_TRUE(urom_rma_atomic(worker, cookie, UROM_RMA_ATOMIC_FADD, 8, 1, 0x2000, 1, 0,
			       atomic_cb) != DOCA_SUCCESS);
	T_TRUE(urom_rma_fence(worker, cookie, 1, done_cb) != DOCA_SUCCESS);

	T_OK(doca_urom_worker_destroy(worker));
	T_DONE();
}
