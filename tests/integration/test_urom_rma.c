/*
 * Integration: the worker_rma plugin end to end between two ranks (processes, each with its
 * own worker, a domain over softdpu's TCP OOB; test_urom_rma_pair.c). Rank 0 commands its
 * worker; rank 1 is the target and checks every byte of its buffer against a model at each
 * step:
 * - PUT of 1 B, 4 KiB + 1 and 3 MiB (split into chunks by the worker) to odd offsets, every
 *   byte checked at the target, the bytes around unchanged;
 * - GET of the same sizes back (rank 1 rewrote the ranges), every byte checked in rank 0's
 *   local buffer, guards around unchanged;
 * - every atomic op on 32- and 64-bit words: fetched value and target word (read back by a
 *   GET, and checked by rank 1 at the end), a failing CSWAP included;
 * - PUT data, FENCE, PUT flag submitted back to back: rank 1 waits for the flag and then finds
 *   all the data; FLUSH to the member and to all;
 * - refusals: unknown destination, out of range, before the buffer, unexported local buffer,
 *   size 0 and > 1 GiB, misaligned / bad-size / unknown atomics, FENCE / FLUSH to an unknown
 *   member, a command of the wrong length: each its documented error, target bytes unchanged.
 * Argument 2 "tcp": the same over UCX_TLS=tcp.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <time.h>

#include "test_urom_rma_pair.c"

#define BUF (8u << 20)
#define LSRC 0x11u		/* rank 0: PUT source */
#define LDST ((4u << 20) + 13u) /* rank 0: GET destination */
#define LWORD (7u << 20)	/* rank 0: scratch words */
#define ATOM (6u << 20)		/* rank 1: atomic words, 16 bytes apart */
#define FDATA (7u << 20)	/* rank 1: FENCE test data */
#define FLEN 65536u
#define FFLAG ((7u << 20) - 64u) /* rank 1: FENCE test flag word */
#define NCASES 11

static const size_t sizes[3] = {1, 4097, 3u << 20};
static const size_t offs[3] = {3, 8192 + 5, (1u << 20) + 7};

static uint8_t fill(uint32_t rank, size_t i)
{
	return (uint8_t)(0xa5 ^ i ^ (i >> 9) ^ (rank * 0x3c));
}

static uint8_t pat(unsigned seed, size_t i)
{
	return (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

/* Atomic case c on a word of size bytes: op, operands, initial value, final, expected fetch. */
struct acase {
	enum urom_rma_atomic_op op;
	uint64_t operand, compare, init, final, fetched;
	int fetch;
};

static struct acase acase(uint32_t size, int c)
{
	static const enum urom_rma_atomic_op ops[NCASES] = {
		UROM_RMA_ATOMIC_ADD,   UROM_RMA_ATOMIC_FADD,  UROM_RMA_ATOMIC_SWAP,
		UROM_RMA_ATOMIC_CSWAP, UROM_RMA_ATOMIC_CSWAP, UROM_RMA_ATOMIC_AND,
		UROM_RMA_ATOMIC_OR,    UROM_RMA_ATOMIC_XOR,   UROM_RMA_ATOMIC_FAND,
		UROM_RMA_ATOMIC_FOR,   UROM_RMA_ATOMIC_FXOR};
	uint64_t mask = size == 4 ? 0xffffffffull : ~0ull;
	struct acase a = {.op = ops[c]};
	uint64_t v, o;

	a.init = (0x0123456789abcdefull ^ ((uint64_t)c * 0x1111)) & mask;
	a.operand = 0xf0f0f0f00f0f0f0full + (uint64_t)c * 0x10001; /* upper bits ignored for 4 */
	o = a.operand & mask;
	v = a.init;
	a.compare = c == 4 ? (a.init + 1) & mask : a.init; /* case 4: a CSWAP that fails */
	switch (a.op) {
	case UROM_RMA_ATOMIC_ADD:
	case UROM_RMA_ATOMIC_FADD:
		a.final = (v + o) & mask;
		break;
	case UROM_RMA_ATOMIC_SWAP:
		a.final = o;
		break;
	case UROM_RMA_ATOMIC_CSWAP:
		a.final = v == a.compare ? o : v;
		break;
	case UROM_RMA_ATOMIC_AND:
	case UROM_RMA_ATOMIC_FAND:
		a.final = v & o;
		break;
	case UROM_RMA_ATOMIC_OR:
	case UROM_RMA_ATOMIC_FOR:
		a.final = v | o;
		break;
	default:
		a.final = v ^ o;
		break;
	}
	a.fetch = a.op != UROM_RMA_ATOMIC_ADD && a.op != UROM_RMA_ATOMIC_AND &&
		  a.op != UROM_RMA_ATOMIC_OR && a.op != UROM_RMA_ATOMIC_XOR;
	a.fetched = a.fetch ? v : 0;
	return a;
}

static uint64_t atom_off(uint32_t size, int c)
{
	return ATOM + (size == 8 ? NCASES * 16 : 0) + (uint64_t)c * 16;
}

static int expect(uint32_t rank, doca_error_t st, doca_error_t want, const char *what)
{
	if (st == want)
		return 1;
	fprintf(stderr, "rank %u: %s: %s, expected %s\n", rank, what, doca_error_get_name(st),
		doca_error_get_name(want));
	return 0;
}

/* Completion record of the async FENCE test. */
static struct {
	int n;
	int order[8];
	doca_error_t res[8];
} fence_rec;

static void fence_cb(doca_error_t result, union doca_data cookie)
{
	if (fence_rec.n < 8) {
		fence_rec.order[fence_rec.n] = (int)cookie.u64;
		fence_rec.res[fence_rec.n] = result;
	}
	fence_rec.n++;
}

/* A raw command of len bytes (a wrong length must be refused). */
struct raw {
	int done;
	doca_error_t st;
};

static void raw_cb(struct doca_urom_worker_cmd_task *task, union doca_data a, union doca_data b)
{
	struct raw *r = *(struct raw **)doca_urom_worker_cmd_task_get_user_data(task);
	struct doca_buf *resp = doca_urom_worker_cmd_task_get_response(task);
	struct urom_worker_notify_rma n;
	void *data = NULL;
	size_t len = 0;

	(void)a, (void)b;
	r->st = doca_task_get_status(doca_urom_worker_cmd_task_as_task(task));
	if (resp != NULL && doca_buf_get_data(resp, &data) == DOCA_SUCCESS &&
	    doca_buf_get_data_len(resp, &len) == DOCA_SUCCESS && len == sizeof(n)) {
		memcpy(&n, data, sizeof(n));
		r->st = (doca_error_t)n.status;
	}
	r->done = 1;
	(void)doca_urom_worker_cmd_task_release(task);
}

static doca_error_t raw_cmd(struct pair *p, size_t len)
{
	struct doca_urom_worker_cmd_task *task;
	struct urom_worker_rma_cmd c = {.type = UROM_WORKER_CMD_RMA_FLUSH};
	struct doca_buf *payload;
	struct raw r = {0};
	void *ptr = NULL;
	int64_t deadline;

	c.sync.dest = UROM_RMA_DEST_ALL;
	if (doca_urom_worker_cmd_task_allocate_init(p->w, p->rma_id, &task) != DOCA_SUCCESS)
		return DOCA_ERROR_UNEXPECTED;
	payload = doca_urom_worker_cmd_task_get_payload(task);
	(void)doca_buf_get_data(payload, &ptr);
	memset(ptr, 0, sizeof(c) + 8);
	memcpy(ptr, &c, sizeof(c));
	(void)doca_buf_set_data(payload, ptr, len);
	*(struct raw **)doca_urom_worker_cmd_task_get_user_data(task) = &r;
	doca_urom_worker_cmd_task_set_cb(task, raw_cb);
	if (doca_task_submit(doca_urom_worker_cmd_task_as_task(task)) != DOCA_SUCCESS) {
		(void)doca_urom_worker_cmd_task_release(task);
		return DOCA_ERROR_UNEXPECTED;
	}
	deadline = t_now_ms() + T_WAIT_MS;
	while (!r.done && t_now_ms() < deadline)
		t_pe_step(p->s.pe, 2);
	return r.done ? r.st : DOCA_ERROR_TIME_OUT;
}

static int initiator(struct pair *p)
{
	struct doca_pe *pe = p->s.pe;
	struct doca_urom_worker *w = p->w;
	uint64_t base = p->vas[1], me = (uint64_t)(uintptr_t)p->buf, v;
	uint8_t *buf = p->buf;
	uint8_t unexported[64];
	union doca_data ck;
	int ok = 1, k, c;

	/* PUT */
	for (k = 0; k < 3; k++) {
		for (size_t i = 0; i < sizes[k]; i++)
			buf[LSRC + i] = pat(0x10 + k, i);
		ok &= expect(
			0,
			urom_rma_put_wait(w, pe, 1, me + LSRC, base + offs[k], sizes[k], T_WAIT_MS),
			DOCA_SUCCESS, "put");
	}
	ok = pair_barrier(p, ok); /* rank 1 checks the puts */
	ok = pair_barrier(p, ok); /* rank 1 wrote the get sources */
	/* GET */
	for (k = 0; k < 3 && ok; k++) {
		memset(buf + LDST - 16, 0xee, sizes[k] + 32);
		ok &= expect(
			0,
			urom_rma_get_wait(w, pe, 1, me + LDST, base + offs[k], sizes[k], T_WAIT_MS),
			DOCA_SUCCESS, "get");
		for (size_t i = 0; i < sizes[k] + 32 && ok; i++) {
			uint8_t want = i < 16 || i >= sizes[k] + 16 ? 0xee : pat(0x40 + k, i - 16);

			if (buf[LDST - 16 + i] != want) {
				fprintf(stderr, "rank 0: get %d: byte %zu is %#x, expected %#x\n",
					k, i, buf[LDST - 16 + i], want);
				ok = 0;
			}
		}
	}
	/* atomics */
	for (uint32_t size = 4; size <= 8 && ok; size += 4)
		for (c = 0; c < NCASES && ok; c++) {
			struct acase a = acase(size, c);
			uint64_t word = 0, at = base + atom_off(size, c);

			memcpy(buf + LWORD, &a.init, size);
			ok &= expect(0,
				     urom_rma_put_wait(w, pe, 1, me + LWORD, at, size, T_WAIT_MS),
				     DOCA_SUCCESS, "atomic init put");
			v = 0xdead;
			ok &= expect(0,
				     urom_rma_atomic_wait(w, pe, a.op, size, 1, at, a.operand,
							  a.compare, &v, T_WAIT_MS),
				     DOCA_SUCCESS, "atomic");
			if (v != a.fetched) {
				fprintf(stderr,
					"rank 0: atomic %d/%u fetched %#lx, expected %#lx\n", c,
					size, (unsigned long)v, (unsigned long)a.fetched);
				ok = 0;
			}
			ok &= expect(
				0, urom_rma_get_wait(w, pe, 1, me + LWORD + 8, at, size, T_WAIT_MS),
				DOCA_SUCCESS, "atomic read back");
			memcpy(&word, buf + LWORD + 8, size);
			if (word != a.final) {
				fprintf(stderr, "rank 0: atomic %d/%u left %#lx, expected %#lx\n",
					c, size, (unsigned long)word, (unsigned long)a.final);
				ok = 0;
			}
		}
	/* FENCE: data, fence, flag back to back; then FLUSH one and all */
	ok = pair_barrier(p, ok); /* rank 1 watches the flag */
	for (size_t i = 0; i < FLEN; i++)
		buf[LSRC + i] = pat(0x77, i);
	v = 1;
	memcpy(buf + LWORD, &v, 8);
	ck.u64 = 0;
	ok &= expect(0, urom_rma_put(w, ck, 1, me + LSRC, base + FDATA, FLEN, fence_cb),
		     DOCA_SUCCESS, "fence test put");
	ck.u64 = 1;
	ok &= expect(0, urom_rma_fence(w, ck, 1, fence_cb), DOCA_SUCCESS, "fence");
	ck.u64 = 2;
	ok &= expect(0, urom_rma_put(w, ck, 1, me + LWORD, base + FFLAG, 8, fence_cb), DOCA_SUCCESS,
		     "flag put");
	ck.u64 = 3;
	ok &= expect(0, urom_rma_flush(w, ck, 1, fence_cb), DOCA_SUCCESS, "flush");
	ck.u64 = 4;
	ok &= expect(0, urom_rma_flush(w, ck, UROM_RMA_DEST_ALL, fence_cb), DOCA_SUCCESS,
		     "flush all");
	{
		long n = 0;
		int64_t deadline = t_now_ms() + T_WAIT_MS;

		while (fence_rec.n < 5 && t_now_ms() < deadline)
			t_pe_step(pe, 2);
		n = fence_rec.n;
		if (n != 5)
			fprintf(stderr, "rank 0: %ld of 5 fence test completions\n", n), ok = 0;
		for (k = 0; k < 5 && ok; k++)
			if (fence_rec.order[k] != k || fence_rec.res[k] != DOCA_SUCCESS) {
				fprintf(stderr, "rank 0: completion %d: command %d, %s\n", k,
					fence_rec.order[k], doca_error_get_name(fence_rec.res[k]));
				ok = 0;
			}
	}
	ok = pair_barrier(p, ok); /* rank 1 saw flag and data */
	/* refusals: nothing moves */
	ok &= expect(0, urom_rma_put_wait(w, pe, 42, me + LSRC, base, 8, T_WAIT_MS),
		     DOCA_ERROR_NOT_FOUND, "put to an unknown member");
	ok &= expect(0, urom_rma_put_wait(w, pe, 1, me + LSRC, base + BUF - 10, 20, T_WAIT_MS),
		     DOCA_ERROR_INVALID_VALUE, "put past the end");
	ok &= expect(0, urom_rma_put_wait(w, pe, 1, me + LSRC, base - 4096, 8, T_WAIT_MS),
		     DOCA_ERROR_NOT_FOUND, "put before the buffer");
	ok &= expect(0, urom_rma_put_wait(w, pe, 1, me + LSRC, base, 0, T_WAIT_MS),
		     DOCA_ERROR_INVALID_VALUE, "put of 0 bytes");
	ok &= expect(0,
		     urom_rma_get_wait(w, pe, 1, me + LSRC, base, UROM_RMA_MAX_LEN + 1, T_WAIT_MS),
		     DOCA_ERROR_INVALID_VALUE, "get of more than 1 GiB");
	ok &= expect(
		0, urom_rma_put_wait(w, pe, 1, (uint64_t)(uintptr_t)unexported, base, 8, T_WAIT_MS),
		DOCA_ERROR_NOT_FOUND, "put from an unexported buffer");
	ok &= expect(0, urom_rma_put_wait(w, pe, 1, me + BUF - 4, base, 8, T_WAIT_MS),
		     DOCA_ERROR_INVALID_VALUE, "put from past the local buffer");
	/* One byte over either end, and gets (the local side is written): nothing moves. */
	ok &= expect(0, urom_rma_put_wait(w, pe, 1, me + LSRC, base + BUF - 7, 8, T_WAIT_MS),
		     DOCA_ERROR_INVALID_VALUE, "put one byte past the end");
	for (size_t i = 0; i < 16; i++)
		buf[LSRC + i] = (uint8_t)(0xc0 + i);
	ok &= expect(0, urom_rma_get_wait(w, pe, 1, me + LSRC, base + BUF - 7, 8, T_WAIT_MS),
		     DOCA_ERROR_INVALID_VALUE, "get one byte past the end");
	ok &= expect(0, urom_rma_get_wait(w, pe, 1, me + LSRC, base - 4096, 8, T_WAIT_MS),
		     DOCA_ERROR_NOT_FOUND, "get before the buffer");
	ok &= expect(0, urom_rma_get_wait(w, pe, 1, me + BUF - 7, base, 8, T_WAIT_MS),
		     DOCA_ERROR_INVALID_VALUE, "get into one byte past the local buffer");
	ok &= expect(
		0, urom_rma_get_wait(w, pe, 1, (uint64_t)(uintptr_t)unexported, base, 8, T_WAIT_MS),
		DOCA_ERROR_NOT_FOUND, "get into an unexported buffer");
	for (size_t i = 0; i < 16; i++)
		if (buf[LSRC + i] != (uint8_t)(0xc0 + i)) {
			fprintf(stderr, "rank 0: a refused get changed local byte %zu\n", i);
			ok = 0;
			break;
		}
	ok &= expect(0,
		     urom_rma_atomic_wait(w, pe, UROM_RMA_ATOMIC_FADD, 8, 1, base + ATOM + 4, 1, 0,
					  &v, T_WAIT_MS),
		     DOCA_ERROR_INVALID_VALUE, "misaligned 64-bit atomic");
	ok &= expect(0,
		     urom_rma_atomic_wait(w, pe, UROM_RMA_ATOMIC_ADD, 4, 1, base + ATOM + 2, 1, 0,
					  &v, T_WAIT_MS),
		     DOCA_ERROR_INVALID_VALUE, "misaligned 32-bit atomic");
	ok &= expect(0,
		     urom_rma_atomic_wait(w, pe, UROM_RMA_ATOMIC_ADD, 2, 1, base + ATOM, 1, 0, &v,
					  T_WAIT_MS),
		     DOCA_ERROR_INVALID_VALUE, "atomic of 2 bytes");
	ok &= expect(0,
		     urom_rma_atomic_wait(w, pe, (enum urom_rma_atomic_op)99, 8, 1, base + ATOM, 1,
					  0, &v, T_WAIT_MS),
		     DOCA_ERROR_INVALID_VALUE, "unknown atomic op");
	ok &= expect(0,
		     urom_rma_atomic_wait(w, pe, UROM_RMA_ATOMIC_ADD, 8, 42, base + ATOM, 1, 0, &v,
					  T_WAIT_MS),
		     DOCA_ERROR_NOT_FOUND, "atomic at an unknown member");
	ok &= expect(0,
		     urom_rma_atomic_wait(w, pe, UROM_RMA_ATOMIC_ADD, 8, 1, base + BUF, 1, 0, &v,
					  T_WAIT_MS),
		     DOCA_ERROR_NOT_FOUND, "atomic past the buffer");
	ok &= expect(0, urom_rma_fence_wait(w, pe, 42, T_WAIT_MS), DOCA_ERROR_NOT_FOUND,
		     "fence to an unknown member");
	ok &= expect(0, urom_rma_flush_wait(w, pe, 42, T_WAIT_MS), DOCA_ERROR_NOT_FOUND,
		     "flush to an unknown member");
	ok &= expect(0, raw_cmd(p, sizeof(struct urom_worker_rma_cmd) - 1),
		     DOCA_ERROR_INVALID_VALUE, "a command one byte short");
	ok &= expect(0, raw_cmd(p, sizeof(struct urom_worker_rma_cmd) + 1),
		     DOCA_ERROR_INVALID_VALUE, "a command one byte long");
	ok &= expect(0, raw_cmd(p, sizeof(struct urom_worker_rma_cmd)), DOCA_SUCCESS,
		     "a command of the right length");
	/* and the worker still works */
	ok &= expect(0, urom_rma_flush_wait(w, pe, UROM_RMA_DEST_ALL, T_WAIT_MS), DOCA_SUCCESS,
		     "flush after the refusals");
	return pair_barrier(p, ok) ? 0 : 1;
}

static int check_model(struct pair *p, const uint8_t *exp, const char *when)
{
	for (size_t i = 0; i < BUF; i++)
		if (p->buf[i] != exp[i]) {
			fprintf(stderr, "rank 1: %s: byte %zu is %#x, expected %#x\n", when, i,
				p->buf[i], exp[i]);
			return 0;
		}
	return 1;
}

static int target(struct pair *p)
{
	uint8_t *exp = malloc(BUF);
	volatile uint64_t *flag = (volatile uint64_t *)(p->buf + FFLAG);
	int ok = exp != NULL, k, c;

	if (exp == NULL)
		return 1;
	for (size_t i = 0; i < BUF; i++)
		exp[i] = fill(1, i);
	/* the puts */
	ok = pair_barrier(p, ok);
	for (k = 0; k < 3; k++)
		for (size_t i = 0; i < sizes[k]; i++)
			exp[offs[k] + i] = pat(0x10 + k, i);
	ok &= check_model(p, exp, "after the puts");
	for (k = 0; k < 3; k++)
		for (size_t i = 0; i < sizes[k]; i++)
			exp[offs[k] + i] = p->buf[offs[k] + i] = pat(0x40 + k, i);
	ok = pair_barrier(p, ok);
	/* rank 0 gets and does the atomics */
	for (uint32_t size = 4; size <= 8; size += 4)
		for (c = 0; c < NCASES; c++) {
			struct acase a = acase(size, c);

			memcpy(exp + atom_off(size, c), &a.final, size);
		}
	ok = pair_barrier(p, ok);
	/* FENCE: once the flag is there, all the data put before the fence is there too */
	{
		int64_t deadline = t_now_ms() + T_WAIT_MS;
		struct timespec ts = {0, 1000000};

		while (*flag != 1 && t_now_ms() < deadline)
			nanosleep(&ts, NULL);
		if (*flag != 1) {
			fprintf(stderr, "rank 1: the flag never came\n");
			ok = 0;
		}
		for (size_t i = 0; i < FLEN && ok; i++)
			if (p->buf[FDATA + i] != pat(0x77, i)) {
				fprintf(stderr, "rank 1: flag before data byte %zu\n", i);
				ok = 0;
			}
		for (size_t i = 0; i < FLEN; i++)
			exp[FDATA + i] = pat(0x77, i);
		{
			uint64_t one = 1;

			memcpy(exp + FFLAG, &one, 8);
		}
	}
	ok = pair_barrier(p, ok);
	/* the refusals: then every byte as the model says */
	ok = pair_barrier(p, ok);
	ok &= check_model(p, exp, "at the end");
	free(exp);
	return ok ? 0 : 1;
}

static int rank_main(uint32_t rank, uint16_t port, struct sdp_urom_oob *oob)
{
	struct pair p;
	int rc;

	if (pair_open(&p, rank, port, oob, BUF, 0, fill) != 0) {
		pair_close(&p);
		return 1;
	}
	rc = rank == 0 ? initiator(&p) : target(&p);
	pair_close(&p);
	return rc;
}

int main(int argc, char **argv)
{
	return pair_main(argc, argv, rank_main);
}
