/*
 * Integration: a worker running worker_rma killed with SIGKILL while puts stream through it
 * (two ranks, each with its own worker, a domain over softdpu's TCP OOB; test_urom_rma_pair.c).
 * Rank 0 keeps DEPTH puts of 256 KiB in flight to rank 1, freezes its worker (SIGSTOP), fills
 * the queue with puts the worker can no longer carry out, then SIGKILLs it: every put completes
 * exactly once within FAIL_BOUND_MS, those submitted after the freeze with IO_FAILED, and the
 * worker context stops and is destroyed. Rank 1 does not hang: it meets rank 0 at the next OOB
 * barrier, its own worker still works (a put into rank 0's buffer, checked by rank 0 byte by
 * byte) and its domain and worker stop cleanly.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "softdpu/urom.h"
#include "test_urom_rma_pair.c"

#define BUF (4u << 20)
#define CHUNK (256u << 10)
#define DEPTH 8
#define FAIL_BOUND_MS 5000
#define MAXOPS 100000
#define R1_OFF (3u << 20) /* rank 0 puts below this; rank 1 puts from here to here */
#define R1_LEN 65536u

static struct {
	long done, errors;
	int count[MAXOPS];
	doca_error_t status[MAXOPS];
} ops;

static char owed[MAXOPS]; /* unanswered when the worker was killed */

static uint8_t fill(uint32_t rank, size_t i)
{
	return (uint8_t)(0x5a ^ i ^ (i >> 11) ^ (rank * 0x77));
}

static void put_cb(doca_error_t result, union doca_data cookie)
{
	if (cookie.u64 >= MAXOPS)
		return;
	ops.count[cookie.u64]++;
	ops.status[cookie.u64] = result;
	ops.done++;
	if (result != DOCA_SUCCESS)
		ops.errors++;
}

static doca_error_t put_one(struct pair *p, long idx)
{
	union doca_data c = {.u64 = (uint64_t)idx};
	uint64_t off = ((uint64_t)idx % (R1_OFF / CHUNK)) * CHUNK; /* below R1_OFF */

	return urom_rma_put(p->w, c, 1, (uint64_t)(uintptr_t)p->buf + off, p->vas[1] + off, CHUNK,
			    put_cb);
}

static int initiator(struct pair *p)
{
	long submitted = 0, before, first;
	uint32_t pid = 0;
	int64_t t0, waited, end;
	char state = 0;
	pid_t ppid;
	int ok = 1;

	PCHECK(p, sdp_urom_worker_get_pid(p->w, &pid) == DOCA_SUCCESS && pid > 0);
	/* Stream for a while: puts complete. */
	end = t_now_ms() + 300;
	while (t_now_ms() < end && submitted < MAXOPS / 2) {
		while (submitted - ops.done < DEPTH && put_one(p, submitted) == DOCA_SUCCESS)
			submitted++;
		t_pe_step(p->s.pe, 1);
	}
	PCHECK(p, ops.done > 0 && ops.errors == 0);
	/* Freeze it mid-stream, fill the queue with puts it cannot carry out, kill it. */
	PCHECK(p, kill((pid_t)pid, SIGSTOP) == 0);
	for (end = t_now_ms() + 5000; t_now_ms() < end;)
		if (t_proc_stat((pid_t)pid, &state, &ppid) != 0 || state == 'T')
			break;
	PCHECK(p, state == 'T');
	/* What it answered before the freeze arrives; what it still owes must all fail. */
	for (end = t_now_ms() + 50; t_now_ms() < end;)
		t_pe_step(p->s.pe, 5);
	while (submitted - ops.done < DEPTH && put_one(p, submitted) == DOCA_SUCCESS)
		submitted++;
	before = ops.done;
	PCHECK(p, submitted > before);
	for (long i = 0; i < submitted; i++)
		owed[i] = ops.count[i] == 0;
	first = 0;
	while (first < submitted && !owed[first])
		first++;
	PCHECK(p, kill((pid_t)pid, SIGKILL) == 0);
	t0 = t_now_ms();
	t_pe_wait_count(p->s.pe, NULL, &ops.done, submitted, FAIL_BOUND_MS);
	waited = t_now_ms() - t0;
	PCHECK(p, ops.done == submitted);
	PCHECK(p, waited < FAIL_BOUND_MS);
	for (long i = 0; i < submitted; i++) {
		if (ops.count[i] != 1) {
			fprintf(stderr, "rank 0: put %ld completed %d times\n", i, ops.count[i]);
			ok = 0;
		} else if (owed[i] && ops.status[i] != DOCA_ERROR_IO_FAILED) {
			fprintf(stderr,
				"rank 0: put %ld (unanswered at the kill): expected "
				"IO_FAILED, got %s\n",
				i, doca_error_get_name(ops.status[i]));
			ok = 0;
		} else if (!owed[i] && ops.status[i] != DOCA_SUCCESS) {
			fprintf(stderr,
				"rank 0: put %ld (answered before the kill): expected "
				"SUCCESS, got %s\n",
				i, doca_error_get_name(ops.status[i]));
			ok = 0;
		}
	}
	fprintf(stderr,
		"note: %ld puts done before the kill, %ld failed after it in %lld ms (first owed: "
		"%ld)\n",
		before, submitted - before, (long long)waited, first);
	PCHECK(p, ops.errors == submitted - before);
	/* A dead worker takes no new put (refused now, or failed later). */
	{
		long want = ops.done + 1;

		if (put_one(p, submitted) == DOCA_SUCCESS) {
			t_pe_wait_count(p->s.pe, NULL, &ops.done, want, FAIL_BOUND_MS);
			PCHECK(p, ops.count[submitted] == 1 &&
					  ops.status[submitted] == DOCA_ERROR_IO_FAILED);
		}
	}
	/* Rank 1 is still with us, and its worker can write into our buffer. */
	PCHECK(p, pair_barrier(p, ok));
	PCHECK(p, pair_barrier(p, 1)); /* rank 1's put is done */
	for (size_t i = 0; i < R1_LEN; i++)
		if (p->buf[R1_OFF + i] != fill(1, R1_OFF + i)) {
			fprintf(stderr,
				"rank 0: byte %zu of rank 1's put: 0x%02x, expected 0x%02x\n", i,
				p->buf[R1_OFF + i], fill(1, R1_OFF + i));
			return -1;
		}
	return ok ? 0 : -1;
}

static int target(struct pair *p)
{
	doca_error_t st;

	/* Rank 0's worker dies meanwhile: this rank only waits at the barrier (bounded). */
	PCHECK(p, pair_barrier(p, 1));
	/* From a range rank 0 never wrote into, to the same offset of rank 0's buffer. */
	st = urom_rma_put_wait(p->w, p->s.pe, 0, (uint64_t)(uintptr_t)p->buf + R1_OFF,
			       p->vas[0] + R1_OFF, R1_LEN, FAIL_BOUND_MS);
	if (st != DOCA_SUCCESS)
		fprintf(stderr, "rank 1: put to rank 0 after its worker died: %s\n",
			doca_error_get_name(st));
	PCHECK(p, pair_barrier(p, st == DOCA_SUCCESS));
	return st == DOCA_SUCCESS ? 0 : -1;
}

static int rank_main(uint32_t rank, uint16_t port, struct sdp_urom_oob *oob)
{
	struct pair p;
	int rc;

	if (pair_open(&p, rank, port, oob, BUF, DEPTH, fill) != 0) {
		pair_close(&p);
		return -1;
	}
	rc = rank == 0 ? initiator(&p) : target(&p);
	pair_close(&p);
	return rc;
}

int main(int argc, char **argv)
{
	return pair_main(argc, argv, rank_main);
}
