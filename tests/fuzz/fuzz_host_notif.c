/*
 * libFuzzer target for the notification readers of every plugin's host half (issue 15):
 * worker_graph, worker_sandbox, worker_rdmo, worker_rma and worker_coll, each completion
 * callback (their sources are compiled in by the wrappers in host_notif/, which call the static
 * callbacks) run on a finished command task whose response buffer holds the fuzzed bytes, as
 * libdoca_urom hands a worker's notification over.
 *
 * The command task and buffer accessors the callbacks use are defined here (a task of ours:
 * its user-data area, status and response), so no service or worker is involved.
 * Input: [host half][command type selector][task status][flags] then the response bytes (an
 * exact-size heap copy, so ASan sees any read past it); flags bit 0: no response at all.
 * Checked beyond "no crash" (ASan + UBSan): the application's callback runs exactly once,
 * with a doca_error_t in 0..31, and every byte range it is given lies inside the response
 * (it is read whole); the task is released exactly once.
 *
 * With -DSDP_FUZZ_MAIN this file has its own main() (tests/fuzz/fuzz_main.h): the replay test.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doca_buf.h"
#include "doca_pe.h"
#include "doca_urom.h"
#include "host_notif/fz_host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Our task: the 32-byte user-data area of a worker command task, its status and response. */
struct doca_urom_worker_cmd_task {
	union doca_data area[4];
	doca_error_t status;
	int has_resp;
	uint8_t *resp;
	size_t len;
	int released;
};

static struct doca_urom_worker_cmd_task fz_the_task;
static int fz_calls;
static const char *fz_half = "?"; /* the host half being run, for the message */
static unsigned fz_sel;

static void fz_die(const char *what)
{
	fprintf(stderr, "fuzz_host_notif: %s host half, command selector %u: %s\n", fz_half, fz_sel,
		what);
	abort();
}

struct doca_urom_worker_cmd_task *fz_task_make(const uint8_t *resp, size_t len, int has_resp,
					       doca_error_t status)
{
	struct doca_urom_worker_cmd_task *t = &fz_the_task;

	memset(t, 0, sizeof(*t));
	t->status = status;
	t->has_resp = has_resp;
	t->resp = (uint8_t *)resp;
	t->len = len;
	fz_calls = 0;
	return t;
}

void *fz_task_user_data(struct doca_urom_worker_cmd_task *task)
{
	return task->area;
}

void fz_task_done(struct doca_urom_worker_cmd_task *task)
{
	if (task->released != 1)
		fz_die("the task was not released exactly once");
	if (fz_calls != 1)
		fz_die("the application's callback did not run exactly once");
}

void fz_cb(doca_error_t result, const void *p1, size_t n1, const void *p2, size_t n2)
{
	const struct doca_urom_worker_cmd_task *t = &fz_the_task;
	volatile uint8_t sink = 0;
	const uint8_t *a = p1, *b = p2;

	fz_calls++;
	if ((unsigned)result > 31u)
		fz_die("a result outside doca_error_t reached the application");
	/* ranges handed over lie in the response (or in a copy the host half made): read them */
	for (size_t i = 0; i < n1; i++)
		sink ^= a[i];
	for (size_t i = 0; i < n2; i++)
		sink ^= b[i];
	(void)sink;
	(void)t;
}

/* ---- the accessors the host halves call, on our task ---------------------------------------- */

void *doca_urom_worker_cmd_task_get_user_data(struct doca_urom_worker_cmd_task *task)
{
	return task->area;
}

struct doca_task *doca_urom_worker_cmd_task_as_task(struct doca_urom_worker_cmd_task *task)
{
	return (struct doca_task *)task;
}

doca_error_t doca_task_get_status(const struct doca_task *task)
{
	return ((const struct doca_urom_worker_cmd_task *)task)->status;
}

struct doca_buf *doca_urom_worker_cmd_task_get_response(struct doca_urom_worker_cmd_task *task)
{
	return task->has_resp ? (struct doca_buf *)task : NULL;
}

doca_error_t doca_buf_get_data(const struct doca_buf *buf, void **data)
{
	*data = ((const struct doca_urom_worker_cmd_task *)buf)->resp;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_data_len(const struct doca_buf *buf, size_t *len)
{
	*len = ((const struct doca_urom_worker_cmd_task *)buf)->len;
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_worker_cmd_task_release(struct doca_urom_worker_cmd_task *task)
{
	task->released++;
	return DOCA_SUCCESS;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static void (*const halves[])(struct doca_urom_worker_cmd_task *,
				      unsigned) = {fz_graph, fz_sandbox, fz_rdmo, fz_rma, fz_coll};
	static const char *const names[] = {"worker_graph", "worker_sandbox", "worker_rdmo",
					    "worker_rma", "worker_coll"};
	struct doca_urom_worker_cmd_task *task;
	uint8_t *resp;
	size_t len;

	if (size < 4)
		return 0;
	len = size - 4;
	resp = malloc(len > 0 ? len : 1);
	if (resp == NULL)
		abort();
	memcpy(resp, data + 4, len);
	/* statuses 0..31 as libdoca_urom reports a task's, the response as it came */
	task = fz_task_make(len > 0 ? resp : NULL, len, !(data[3] & 1),
			    (doca_error_t)(data[2] % 32));
	fz_half = names[data[0] % 5];
	fz_sel = data[1];
	halves[data[0] % 5](task, data[1]);
	fz_task_done(task);
	free(resp);
	return 0;
}

#ifdef SDP_FUZZ_MAIN
#include "fuzz_main.h"

/* A header, then a response: often of a plausible notification size, with plausible fields. */
static size_t fuzz_generate(uint8_t *buf, size_t cap)
{
	static const size_t sizes[] = {0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 128, 200};
	size_t len = fuzz_rnd() % 2 ? sizes[fuzz_rnd() % 14] : fuzz_rnd() % 300;

	if (cap < 4)
		return 0;
	if (len > cap - 4)
		len = cap - 4;
	buf[0] = (uint8_t)fuzz_rnd();
	buf[1] = (uint8_t)(fuzz_rnd() % 16);
	buf[2] = (uint8_t)(fuzz_rnd() % 4 ? 0 : fuzz_rnd());
	buf[3] = (uint8_t)(fuzz_rnd() % 8 == 0);
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = fuzz_rnd() % 3 ? fuzz_rnd() % 16 : fuzz_rnd();

		memcpy(buf + 4 + i, &v, len - i < 8 ? len - i : 8);
	}
	return 4 + len;
}
#endif /* SDP_FUZZ_MAIN */
