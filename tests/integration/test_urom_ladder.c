/*
 * Integration: the seed's ladder steps 1, 2 and 4 over worker_rma, two ranks (processes) in a
 * domain over the TCP OOB (test_urom_rma_pair.c); rank 0 commands, rank 1 checks its memory.
 * (1) single pair: one small PUT into rank 1's exported memory, its completion observed on
 *     the PE, the bytes checked at rank 1 (and around them unchanged); one GET back, checked.
 * (2) 100 PUTs and 100 fetch-adds with doca_pe_progress between submissions: every completion
 *     fires with success, the fetched values are 0..99, the words and the counter checked at
 *     rank 1; submitting past the worker's max_inflight_tasks returns DOCA_ERROR_AGAIN and
 *     succeeds after progress.
 * (4) a worker started with worker_graph only (both plugins are in the discovered list) gets
 *     DOCA_ERROR_NOT_SUPPORTED for an RMA command.
 * Argument 2 "tcp": the same over UCX_TLS=tcp.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "test_urom_rma_pair.c"

#define BUF (1u << 20)
#define INFLIGHT 8
#define NOPS 100
#define WORDS 0x1000u /* rank 1: the 100 put words */
#define COUNTER 0x2000u
#define LV 0x8000u /* rank 0: the put sources */

static uint8_t fill(uint32_t rank, size_t i)
{
	return (uint8_t)(0x3c ^ i ^ (i >> 8) ^ (rank * 0x5b));
}

static uint8_t pat(unsigned seed, size_t i)
{
	return (uint8_t)(seed * 13 + i * 5 + 1);
}

static uint64_t word(int k)
{
	return 0x0101010101010101ull * (uint64_t)(k + 1) ^ 0x5555000000000055ull;
}

/* Completions of step 1 and 2. */
static struct {
	int done, bad, fetched_seen[NOPS];
	doca_error_t last;
} cnt;

static void done_cb(doca_error_t result, union doca_data cookie)
{
	(void)cookie;
	cnt.done++;
	if (result != DOCA_SUCCESS) {
		cnt.bad++;
		cnt.last = result;
	}
}

static void fadd_cb(doca_error_t result, union doca_data cookie, uint64_t value)
{
	done_cb(result, cookie);
	if (result == DOCA_SUCCESS && value < NOPS)
		cnt.fetched_seen[value]++;
	else
		cnt.bad++;
}

static int wait_count(struct pair *p, int want)
{
	int64_t deadline = t_now_ms() + T_WAIT_MS;

	while (cnt.done < want && t_now_ms() < deadline)
		t_pe_step(p->s.pe, 2);
	return cnt.done >= want;
}

static int step1(struct pair *p, int ok)
{
	uint64_t me = (uint64_t)(uintptr_t)p->buf;
	union doca_data ck = {.u64 = 1};

	if (p->rank == 0) {
		for (size_t i = 0; i < 64; i++)
			p->buf[0x100 + i] = pat(1, i);
		memset(&cnt, 0, sizeof(cnt));
		ok &= urom_rma_put(p->w, ck, 1, me + 0x100, p->vas[1] + 0x200, 64, done_cb) ==
		      DOCA_SUCCESS;
		ok &= wait_count(p, 1) && cnt.bad == 0;
		if (!ok)
			fprintf(stderr, "rank 0: step 1 put: %d done, %s\n", cnt.done,
				doca_error_get_name(cnt.last));
		ok = pair_barrier(p, ok); /* rank 1 checks */
		ok = pair_barrier(p, ok); /* rank 1 wrote the get source */
		memset(p->buf + 0x400, 0, 64);
		ok &= urom_rma_get(p->w, ck, 1, me + 0x400, p->vas[1] + 0x300, 64, done_cb) ==
		      DOCA_SUCCESS;
		ok &= wait_count(p, 2) && cnt.bad == 0;
		for (size_t i = 0; i < 64 && ok; i++)
			if (p->buf[0x400 + i] != pat(2, i)) {
				fprintf(stderr, "rank 0: step 1 get: byte %zu wrong\n", i);
				ok = 0;
			}
		return pair_barrier(p, ok);
	}
	ok = pair_barrier(p, ok);
	for (size_t i = 0x1c0; i < 0x280; i++) {
		uint8_t want = i >= 0x200 && i < 0x240 ? pat(1, i - 0x200) : fill(1, i);

		if (p->buf[i] != want) {
			fprintf(stderr, "rank 1: step 1: byte %#zx is %#x, expected %#x\n", i,
				p->buf[i], want);
			ok = 0;
			break;
		}
	}
	for (size_t i = 0; i < 64; i++)
		p->buf[0x300 + i] = pat(2, i);
	ok = pair_barrier(p, ok);
	return pair_barrier(p, ok);
}

/* Submit through f until it is not AGAIN, progressing in between (bounded). */
#define SUBMIT(p, call)                                                                            \
	({                                                                                         \
		int64_t dl_ = t_now_ms() + T_WAIT_MS;                                              \
		doca_error_t st_;                                                                  \
		while ((st_ = (call)) == DOCA_ERROR_AGAIN && t_now_ms() < dl_)                     \
			t_pe_step((p)->s.pe, 1);                                                   \
		st_;                                                                               \
	})

static int step2(struct pair *p, int ok)
{
	uint64_t me = (uint64_t)(uintptr_t)p->buf, zero = 0;
	union doca_data ck = {.u64 = 2};
	int k, n, again = 0;

	if (p->rank != 0) {
		ok = pair_barrier(p, ok);
		for (k = 0; k < NOPS && ok; k++) {
			uint64_t v;

			memcpy(&v, p->buf + WORDS + k * 8, 8);
			if (v != word(k)) {
				fprintf(stderr, "rank 1: step 2: word %d is %#lx\n", k,
					(unsigned long)v);
				ok = 0;
			}
		}
		memcpy(&zero, p->buf + COUNTER, 8);
		if (zero != NOPS) {
			fprintf(stderr, "rank 1: step 2: counter %lu\n", (unsigned long)zero);
			ok = 0;
		}
		return pair_barrier(p, ok);
	}
	memset(&cnt, 0, sizeof(cnt));
	memcpy(p->buf + LV - 8, &zero, 8);
	ok &= urom_rma_put_wait(p->w, p->s.pe, 1, me + LV - 8, p->vas[1] + COUNTER, 8, T_WAIT_MS) ==
	      DOCA_SUCCESS;
	for (k = 0; k < NOPS; k++) {
		uint64_t v = word(k);

		memcpy(p->buf + LV + k * 8, &v, 8);
	}
	for (k = 0; k < NOPS && ok; k++) {
		ok &= SUBMIT(p, urom_rma_put(p->w, ck, 1, me + LV + k * 8,
					     p->vas[1] + WORDS + k * 8, 8, done_cb)) ==
		      DOCA_SUCCESS;
		(void)doca_pe_progress(p->s.pe);
		ok &= SUBMIT(p, urom_rma_atomic(p->w, ck, UROM_RMA_ATOMIC_FADD, 8, 1,
						p->vas[1] + COUNTER, 1, 0, fadd_cb)) ==
		      DOCA_SUCCESS;
		(void)doca_pe_progress(p->s.pe);
	}
	ok &= wait_count(p, 2 * NOPS) && cnt.bad == 0;
	for (k = 0; k < NOPS && ok; k++)
		if (cnt.fetched_seen[k] != 1) {
			fprintf(stderr, "rank 0: fetched value %d seen %d times\n", k,
				cnt.fetched_seen[k]);
			ok = 0;
		}
	if (!ok)
		fprintf(stderr, "rank 0: step 2: %d of %d done, %d bad (%s)\n", cnt.done, 2 * NOPS,
			cnt.bad, doca_error_get_name(cnt.last));
	/*
	 * Past max_inflight_tasks: AGAIN, then success after progress. The puts rewrite words
	 * already there with the same values, so rank 1's check below still holds.
	 */
	memset(&cnt, 0, sizeof(cnt));
	for (n = 0; n < 4 * INFLIGHT; n++) {
		int w = n % NOPS;
		doca_error_t st = urom_rma_put(p->w, ck, 1, me + LV + w * 8,
					       p->vas[1] + WORDS + w * 8, 8, done_cb);

		if (st == DOCA_ERROR_AGAIN) {
			again = 1;
			break;
		}
		if (st != DOCA_SUCCESS) {
			fprintf(stderr, "rank 0: put %d: %s\n", n, doca_error_get_name(st));
			ok = 0;
			break;
		}
	}
	if (!again || n != INFLIGHT) {
		fprintf(stderr, "rank 0: %d submissions before AGAIN (again %d), expected %d\n", n,
			again, INFLIGHT);
		ok = 0;
	}
	ok &= wait_count(p, 1);
	ok &= urom_rma_put(p->w, ck, 1, me + LV, p->vas[1] + WORDS, 8, done_cb) == DOCA_SUCCESS;
	ok &= wait_count(p, n + 1) && cnt.bad == 0;
	ok = pair_barrier(p, ok); /* rank 1 checks */
	return pair_barrier(p, ok);
}

/* A worker without worker_rma: RMA commands are not supported there. */
static void ns_cb(doca_error_t result, union doca_data cookie)
{
	*(doca_error_t *)cookie.ptr = result;
}

static int step4(struct pair *p, int ok)
{
	struct t_worker_cfg cfg = {.id = DOCA_UROM_WORKER_ID_ANY};
	struct doca_urom_worker *w2 = NULL;
	doca_error_t res = DOCA_ERROR_UNKNOWN, st;
	union doca_data ck = {.ptr = &res};
	int64_t deadline;

	if (p->rank != 0 || !ok)
		return ok;
	if (p->graph_id == 0 || p->rma_id == 0 || p->graph_id == p->rma_id) {
		fprintf(stderr, "rank 0: discovered ids rma %#lx graph %#lx\n",
			(unsigned long)p->rma_id, (unsigned long)p->graph_id);
		return 0;
	}
	cfg.plugins = p->graph_id;
	if (t_worker_start(&p->s, p->s.pe, &cfg, &w2) != DOCA_SUCCESS) {
		fprintf(stderr, "rank 0: worker_graph-only worker did not start\n");
		if (w2 != NULL)
			(void)doca_urom_worker_destroy(w2);
		return 0;
	}
	st = urom_rma_flush(w2, ck, UROM_RMA_DEST_ALL, ns_cb);
	if (st == DOCA_SUCCESS) {
		deadline = t_now_ms() + T_WAIT_MS;
		while (res == DOCA_ERROR_UNKNOWN && t_now_ms() < deadline)
			t_pe_step(p->s.pe, 2);
		st = res;
	}
	if (st != DOCA_ERROR_NOT_SUPPORTED) {
		fprintf(stderr, "rank 0: RMA on a worker without worker_rma: %s\n",
			doca_error_get_name(st));
		ok = 0;
	}
	t_worker_close(&p->s, p->s.pe, w2);
	return ok;
}

static int rank_main(uint32_t rank, uint16_t port, struct sdp_urom_oob *oob)
{
	struct pair p;
	int ok;

	if (pair_open(&p, rank, port, oob, BUF, INFLIGHT, fill) != 0) {
		pair_close(&p);
		return 1;
	}
	ok = step1(&p, 1);
	ok = step2(&p, ok);
	ok = step4(&p, ok);
	ok = pair_barrier(&p, ok);
	pair_close(&p);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	return pair_main(argc, argv, rank_main);
}
