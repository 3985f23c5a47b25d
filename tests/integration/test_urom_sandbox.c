/*
 * Integration: the worker_sandbox plugin end to end. A private softdpu-uromd (t_uromd.h) offers
 * worker_sandbox.so; 2 and 4 ranks, as threads of this process and as separate processes (this
 * program run again with --child), each start a worker (worker id != domain id) and a domain
 * of it over softdpu's TCP OOB (include/softdpu/urom_oob.h), and exchange tagged messages in a
 * ring (rank r sends to r + 1, receives from r - 1) through the plugin's host half:
 *
 *   - inline data, receive posted before the send (made sure of: a later command's answer
 *     means the worker posted the receive) and after it;
 *   - tag masks: a receive whose mask ignores the low and high bits matches and reports the
 *     sender's full tag; a receive whose tag nobody sent stays pending (watched for a while)
 *     while a later one matches, and completes once its sender comes;
 *   - registered data: host memory exported with sdp_urom_mem_export() and mapped with
 *     MEM_MAP, sent from and received into it (small and rendezvous-sized), mixed with inline
 *     on the other side; the bytes around the target stay untouched;
 *   - refusals: unknown destination (NOT_FOUND), inline receive larger than a notification and
 *     registered ranges outside the mapping (INVALID_VALUE; nothing moves: the peer's receive
 *     stays pending and the memory keeps its bytes), unknown memh id (NOT_FOUND), a MEM_MAP
 *     range outside the export (INVALID_VALUE), an inline send that cannot fit a command.
 *
 * Every completion's context is checked, and every byte that moved.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/random.h>

#include "doca_buf.h"
#include "softdpu/urom_mem.h"
#include "softdpu/urom_oob.h"

#include "t_urom.h"
#include "t_uromd.h"
#include "urom_sandbox.h"

#define MAX_RANKS 4
#define SECRET_LEN 32
#define PENDING_MS 150	    /* how long a receive that must not complete is watched */
#define MAX_INLINE 4016	    /* what a notification of the default 4096-byte message carries */
#define REG_LEN (512 << 10) /* registered buffer per rank */
#define GUARD 4096	    /* bytes on each side of it, never exported */
#define BIG_LEN (200 << 10) /* a rendezvous-sized registered message */

static struct t_uromd d;
static uint64_t sandbox_id;

/* ---- one outstanding command ---------------------------------------------------------------- */

struct op {
	int done;
	doca_error_t result;
	uint64_t context;
	ucs_status_t ucs;
	uint64_t count;
	uint64_t sender_tag;
	uint64_t memh_id;
	int has_buffer;
	uint8_t data[MAX_INLINE];
};

static void send_cb(doca_error_t result, union doca_data cookie, union doca_data context,
		    ucs_status_t status)
{
	struct op *op = cookie.ptr;

	op->result = result;
	op->context = context.u64;
	op->ucs = status;
	op->done++;
}

static void recv_cb(doca_error_t result, union doca_data cookie, union doca_data context,
		    void *buffer, uint64_t count, uint64_t sender_tag, ucs_status_t status)
{
	struct op *op = cookie.ptr;

	op->result = result;
	op->context = context.u64;
	op->ucs = status;
	op->count = count;
	op->sender_tag = sender_tag;
	op->has_buffer = buffer != NULL;
	if (buffer != NULL && count <= sizeof(op->data))
		memcpy(op->data, buffer, count);
	op->done++;
}

static void map_cb(doca_error_t result, union doca_data cookie, union doca_data context,
		   uint64_t memh_id)
{
	struct op *op = cookie.ptr;

	op->result = result;
	op->context = context.u64;
	op->memh_id = memh_id;
	op->done++;
}

/* ---- one rank ------------------------------------------------------------------------------- */

struct rank {
	uint32_t rank;
	uint32_t size;
	uint64_t worker_id;
	struct sdp_urom_oob *oob;
	struct doca_urom_domain_oob_coll coll;
	struct t_svc svc;
	struct doca_urom_worker *worker;
	struct doca_urom_domain *domain;
	uint8_t *area; /* GUARD + REG_LEN + GUARD */
	uint8_t *reg;  /* area + GUARD: the exported part */
	struct sdp_urom_mem *exp;
	uint64_t memh_id;
	uint64_t next_context;
	int errors;
};

#define RFAIL(r, fmt, ...)                                                                         \
	do {                                                                                       \
		fprintf(stderr, "FAIL %s:%d: rank %u of %u: " fmt "\n", __FILE__, __LINE__,        \
			(r)->rank, (r)->size, ##__VA_ARGS__);                                      \
		(r)->errors++;                                                                     \
	} while (0)

static uint32_t left_of(const struct rank *r)
{
	return (r->rank + r->size - 1) % r->size;
}

static uint32_t right_of(const struct rank *r)
{
	return (r->rank + 1) % r->size;
}

/* The bytes rank src sends to dst in exchange seq. */
static uint8_t pat(uint32_t src, uint32_t dst, uint32_t seq, size_t i)
{
	return (uint8_t)(src * 61u + dst * 17u + seq * 101u + (uint32_t)i * 7u +
			 (uint32_t)(i >> 9));
}

static void pat_fill(uint8_t *buf, size_t len, uint32_t src, uint32_t dst, uint32_t seq)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pat(src, dst, seq, i);
}

static int pat_check(const uint8_t *buf, size_t len, uint32_t src, uint32_t dst, uint32_t seq)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != pat(src, dst, seq, i))
			return (int)i + 1;
	return 0;
}

/* Lengths differ per sender, so a message delivered to the wrong receive shows. */
static size_t len_of(uint32_t src, size_t base)
{
	return base + src * 13u;
}

static int wait_op(struct rank *r, struct op *op, const char *what)
{
	int64_t deadline = t_now_ms() + T_WAIT_MS;

	while (!op->done && t_now_ms() < deadline)
		t_pe_step(r->svc.pe, 2);
	if (!op->done) {
		RFAIL(r, "%s: no completion within %d ms", what, T_WAIT_MS);
		return -1;
	}
	if (op->done != 1)
		RFAIL(r, "%s: %d completions", what, op->done);
	return 0;
}

/* Progress for PENDING_MS; fail if op completes. */
static void expect_pending(struct rank *r, struct op *op, const char *what)
{
	int64_t deadline = t_now_ms() + PENDING_MS;

	while (t_now_ms() < deadline && !op->done)
		t_pe_step(r->svc.pe, 2);
	if (op->done)
		RFAIL(r, "%s completed (%s), expected it still pending", what,
		      doca_error_get_name(op->result));
}

static void barrier(struct rank *r)
{
	uint8_t in = (uint8_t)r->rank, out[MAX_RANKS];
	doca_error_t st = sdp_urom_oob_allgather(r->oob, &in, out, 1);

	if (st != DOCA_SUCCESS)
		RFAIL(r, "OOB barrier: %s", doca_error_get_name(st));
	for (uint32_t i = 0; st == DOCA_SUCCESS && i < r->size; i++)
		if (out[i] != i)
			RFAIL(r, "OOB barrier: slot %u holds %u", i, out[i]);
}

static doca_error_t do_send(struct rank *r, struct op *op, uint64_t dest, const void *buf,
			    size_t len, uint64_t tag, uint64_t memh_id)
{
	union doca_data cookie = {.ptr = op};

	memset(op, 0, sizeof(*op));
	return urom_sandbox_tag_task_send(r->worker, cookie, r->next_context++, dest,
					  (uint64_t)(uintptr_t)buf, len, tag, memh_id, send_cb);
}

static doca_error_t do_recv(struct rank *r, struct op *op, uint64_t buffer, size_t len,
			    uint64_t tag, uint64_t mask, uint64_t memh_id)
{
	union doca_data cookie = {.ptr = op};

	memset(op, 0, sizeof(*op));
	return urom_sandbox_tag_task_recv(r->worker, cookie, r->next_context++, buffer, len, tag,
					  mask, memh_id, recv_cb);
}

/* Submit; on failure say so. */
static void submit_ok(struct rank *r, doca_error_t st, const char *what)
{
	if (st != DOCA_SUCCESS)
		RFAIL(r, "%s: submit returned %s", what, doca_error_get_name(st));
}

/*
 * Wait for op and check it finished with want, echoing the context it was submitted with
 * (contexts are handed out in order, so the caller passes the one it got).
 */
static int finish(struct rank *r, struct op *op, uint64_t ctx, doca_error_t want, const char *what)
{
	if (wait_op(r, op, what) != 0)
		return -1;
	if (op->result != want) {
		RFAIL(r, "%s: expected %s, got %s (UCX %s)", what, doca_error_get_name(want),
		      doca_error_get_name(op->result), ucs_status_string(op->ucs));
		return -1;
	}
	if (op->context != ctx)
		RFAIL(r, "%s: context %#" PRIx64 ", expected %#" PRIx64, what, op->context, ctx);
	return 0;
}

/* An inline receive must have brought what src sent in exchange seq, with tag. */
static void check_inline(struct rank *r, struct op *op, uint32_t src, uint32_t seq, size_t len,
			 uint64_t tag, const char *what)
{
	int bad;

	if (op->ucs != UCS_OK || !op->has_buffer || op->count != len || op->sender_tag != tag) {
		RFAIL(r,
		      "%s: ucs %d, buffer %d, count %" PRIu64 " (want %zu), tag %#" PRIx64
		      " (want %#" PRIx64 ")",
		      what, (int)op->ucs, op->has_buffer, op->count, len, op->sender_tag, tag);
		return;
	}
	bad = pat_check(op->data, len, src, r->rank, seq);
	if (bad)
		RFAIL(r, "%s: byte %d of %zu differs", what, bad - 1, len);
}

/*
 * A command whose answer proves the worker handled everything submitted before it: a send to
 * a domain id nobody has, refused with NOT_FOUND as soon as the worker sees it.
 */
static void fence(struct rank *r)
{
	struct op op;
	uint64_t ctx = r->next_context;

	submit_ok(r, do_send(r, &op, 1000 + r->rank, "x", 1, 0, 0), "fence");
	if (finish(r, &op, ctx, DOCA_ERROR_NOT_FOUND, "send to unknown domain id") == 0 &&
	    op.ucs == UCS_OK)
		RFAIL(r, "refused send reported UCX status OK");
}

/* Inline, receive posted before the send. */
static void scenario_before(struct rank *r)
{
	uint32_t left = left_of(r), right = right_of(r);
	size_t out_len = len_of(r->rank, 1000), in_len = len_of(left, 1000);
	uint8_t out[2000];
	struct op s, q;
	uint64_t sc, qc;

	qc = r->next_context;
	submit_ok(r, do_recv(r, &q, 0, in_len, 0x100000 + left, ~0ull, 0), "recv before");
	fence(r);   /* our receive is posted */
	barrier(r); /* everybody's is */
	pat_fill(out, out_len, r->rank, right, 1);
	sc = r->next_context;
	submit_ok(r, do_send(r, &s, right, out, out_len, 0x100000 + r->rank, 0), "send");
	if (finish(r, &s, sc, DOCA_SUCCESS, "send (recv before)") == 0 && s.ucs != UCS_OK)
		RFAIL(r, "send: UCX %s", ucs_status_string(s.ucs));
	if (finish(r, &q, qc, DOCA_SUCCESS, "recv posted before") == 0)
		check_inline(r, &q, left, 1, in_len, 0x100000 + left, "recv posted before");
	barrier(r);
}

/* Inline, receive posted after the send. */
static void scenario_after(struct rank *r)
{
	uint32_t left = left_of(r), right = right_of(r);
	size_t out_len = len_of(r->rank, 3000), in_len = len_of(left, 3000);
	uint8_t out[4000];
	struct op s, q;
	uint64_t sc, qc;

	pat_fill(out, out_len, r->rank, right, 2);
	sc = r->next_context;
	submit_ok(r, do_send(r, &s, right, out, out_len, 0x200000 + r->rank, 0), "send");
	fence(r);   /* our send left */
	barrier(r); /* everybody's did */
	qc = r->next_context;
	submit_ok(r, do_recv(r, &q, 0, MAX_INLINE, 0x200000 + left, ~0ull, 0), "recv after");
	finish(r, &s, sc, DOCA_SUCCESS, "send (recv after)");
	if (finish(r, &q, qc, DOCA_SUCCESS, "recv posted after") == 0)
		check_inline(r, &q, left, 2, in_len, 0x200000 + left, "recv posted after");
	barrier(r);
}

/* Masks: a receive ignoring bits matches; one whose tag nobody sends stays pending. */
static void scenario_masks(struct rank *r)
{
	uint32_t left = left_of(r), right = right_of(r);
	uint64_t wide_tag = 0x5a0000000000ull | 0x3300 | r->rank; /* bits outside 0xff00 vary */
	uint64_t pend_tag = 0x440000, other_tag = 0x450000;
	uint8_t out[200];
	struct op s, qm, qp, qo;
	uint64_t sc, qmc, qpc, qoc;

	qmc = r->next_context;
	submit_ok(r, do_recv(r, &qm, 0, 200, 0x3300, 0xff00, 0), "masked recv");
	qpc = r->next_context;
	submit_ok(r, do_recv(r, &qp, 0, 200, pend_tag + left, ~0ull, 0), "pending recv");
	qoc = r->next_context;
	submit_ok(r, do_recv(r, &qo, 0, 200, other_tag + left, ~0ull, 0), "other recv");
	fence(r);
	barrier(r);

	pat_fill(out, 150, r->rank, right, 3);
	sc = r->next_context;
	submit_ok(r, do_send(r, &s, right, out, 150, wide_tag, 0), "masked send");
	finish(r, &s, sc, DOCA_SUCCESS, "masked send");
	if (finish(r, &qm, qmc, DOCA_SUCCESS, "masked recv") == 0)
		check_inline(r, &qm, left, 3, 150, 0x5a0000000000ull | 0x3300 | left,
			     "masked recv");

	/* The tag after the pending one: it passes the pending receive by. */
	pat_fill(out, 120, r->rank, right, 4);
	sc = r->next_context;
	submit_ok(r, do_send(r, &s, right, out, 120, other_tag + r->rank, 0), "other send");
	finish(r, &s, sc, DOCA_SUCCESS, "other send");
	if (finish(r, &qo, qoc, DOCA_SUCCESS, "other recv") == 0)
		check_inline(r, &qo, left, 4, 120, other_tag + left, "other recv");
	expect_pending(r, &qp, "receive nobody sent to");
	barrier(r);

	/* Its sender comes. */
	pat_fill(out, 90, r->rank, right, 5);
	sc = r->next_context;
	submit_ok(r, do_send(r, &s, right, out, 90, pend_tag + r->rank, 0), "late send");
	finish(r, &s, sc, DOCA_SUCCESS, "late send");
	if (finish(r, &qp, qpc, DOCA_SUCCESS, "pending recv") == 0)
		check_inline(r, &qp, left, 5, 90, pend_tag + left, "pending recv, completed");
	barrier(r);
}

/* MEM_MAP of this rank's exported buffer, plus the ranges MEM_MAP must refuse. */
static void map_region(struct rank *r)
{
	ucp_mem_map_params_t mp;
	union doca_data cookie;
	const void *memh = NULL;
	size_t memh_len = 0;
	struct op m;
	uint64_t mc;

	if (sdp_urom_mem_get_memh(r->exp, &memh, &memh_len) != DOCA_SUCCESS) {
		RFAIL(r, "no memh for the exported buffer");
		return;
	}
	cookie.ptr = &m;

	/* A range outside the export: refused. */
	memset(&mp, 0, sizeof(mp));
	mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
	mp.address = r->reg - 1;
	mp.length = 64;
	memset(&m, 0, sizeof(m));
	mc = r->next_context++;
	submit_ok(r,
		  sdp_urom_sandbox_task_mem_map(r->worker, cookie, mc, mp, memh, memh_len, map_cb),
		  "mem map outside");
	if (finish(r, &m, mc, DOCA_ERROR_INVALID_VALUE, "mem map outside the export") == 0 &&
	    m.memh_id != 0)
		RFAIL(r, "refused mem map gave memh id %#" PRIx64, m.memh_id);

	/* The whole export, named by its range. */
	mp.address = r->reg;
	mp.length = REG_LEN;
	memset(&m, 0, sizeof(m));
	mc = r->next_context++;
	submit_ok(r,
		  sdp_urom_sandbox_task_mem_map(r->worker, cookie, mc, mp, memh, memh_len, map_cb),
		  "mem map");
	if (finish(r, &m, mc, DOCA_SUCCESS, "mem map") == 0) {
		if (m.memh_id == 0)
			RFAIL(r, "mem map: memh id 0");
		r->memh_id = m.memh_id;
	}
}

/* Registered data: both directions, small and rendezvous-sized, mixed with inline. */
static void scenario_registered(struct rank *r)
{
	uint32_t left = left_of(r), right = right_of(r);
	size_t half = REG_LEN / 2;
	uint8_t *send_area = r->reg, *recv_area = r->reg + half;
	size_t small_out = len_of(r->rank, 3000), small_in = len_of(left, 3000);
	size_t big_out = len_of(r->rank, BIG_LEN), big_in = len_of(left, BIG_LEN);
	uint8_t inline_out[1000];
	struct op s, q;
	uint64_t sc, qc;
	int bad;

	if (r->memh_id == 0)
		return;

	/* Registered to registered, small and big, receive at an offset in the mapping. */
	for (int k = 0; k < 2; k++) {
		size_t out_len = k == 0 ? small_out : big_out, in_len = k == 0 ? small_in : big_in;
		uint32_t seq = 10 + (uint32_t)k;
		uint64_t tag = 0x600000 + (uint64_t)k * 0x1000;
		size_t off = 100 + (size_t)k;

		pat_fill(send_area, out_len, r->rank, right, seq);
		memset(recv_area, 0, half);
		qc = r->next_context;
		submit_ok(r,
			  do_recv(r, &q, (uint64_t)(uintptr_t)(recv_area + off), in_len, tag + left,
				  ~0ull, r->memh_id),
			  "registered recv");
		fence(r);
		barrier(r);
		sc = r->next_context;
		submit_ok(r, do_send(r, &s, right, send_area, out_len, tag + r->rank, r->memh_id),
			  "registered send");
		finish(r, &s, sc, DOCA_SUCCESS, "registered send");
		if (finish(r, &q, qc, DOCA_SUCCESS, "registered recv") == 0) {
			if (q.has_buffer || q.count != in_len || q.sender_tag != tag + left ||
			    q.ucs != UCS_OK)
				RFAIL(r, "registered recv: buffer %d, count %" PRIu64 " (want %zu)",
				      q.has_buffer, q.count, in_len);
			bad = pat_check(recv_area + off, in_len, left, r->rank, seq);
			if (bad)
				RFAIL(r, "registered recv of %zu: host byte %d differs", in_len,
				      bad - 1);
			for (size_t i = 0; i < half; i++) {
				if ((i < off || i >= off + in_len) && recv_area[i] != 0) {
					RFAIL(r, "registered recv wrote byte %zu outside its range",
					      i);
					break;
				}
			}
		}
		barrier(r);
	}

	/* Registered send, inline receive. */
	pat_fill(send_area, 700, r->rank, right, 12);
	qc = r->next_context;
	submit_ok(r, do_recv(r, &q, 0, 800, 0x620000 + left, ~0ull, 0), "inline recv");
	fence(r);
	barrier(r);
	sc = r->next_context;
	submit_ok(r, do_send(r, &s, right, send_area, 700, 0x620000 + r->rank, r->memh_id),
		  "registered send to inline");
	finish(r, &s, sc, DOCA_SUCCESS, "registered send to inline");
	if (finish(r, &q, qc, DOCA_SUCCESS, "inline recv of registered") == 0)
		check_inline(r, &q, left, 12, 700, 0x620000 + left, "inline recv of registered");
	barrier(r);

	/* Inline send, registered receive at the very end of the mapping. */
	pat_fill(inline_out, 900, r->rank, right, 13);
	memset(recv_area, 0, half);
	qc = r->next_context;
	submit_ok(r,
		  do_recv(r, &q, (uint64_t)(uintptr_t)(r->reg + REG_LEN - 900), 900,
			  0x630000 + left, ~0ull, r->memh_id),
		  "registered recv at the end");
	fence(r);
	barrier(r);
	sc = r->next_context;
	submit_ok(r, do_send(r, &s, right, inline_out, 900, 0x630000 + r->rank, 0),
		  "inline send to registered");
	finish(r, &s, sc, DOCA_SUCCESS, "inline send to registered");
	if (finish(r, &q, qc, DOCA_SUCCESS, "registered recv at the end") == 0 &&
	    (bad = pat_check(r->reg + REG_LEN - 900, 900, left, r->rank, 13)) != 0)
		RFAIL(r, "registered recv at the end: byte %d differs", bad - 1);
	barrier(r);
}

/* Refusals: nothing sent, nothing written. */
static void scenario_refusals(struct rank *r)
{
	uint32_t left = left_of(r), right = right_of(r);
	size_t area_len = GUARD + REG_LEN + GUARD;
	uint8_t *snapshot = malloc(area_len), big[5000], out[64];
	struct op s, q, p;
	uint64_t sc, qc, pc;
	int bad;

	if (snapshot == NULL) {
		RFAIL(r, "out of memory");
		return;
	}
	memset(big, 0x42, sizeof(big));

	/* Inline receive one byte larger than a notification carries. */
	qc = r->next_context;
	submit_ok(r, do_recv(r, &q, 0, MAX_INLINE + 1, 0x700000, ~0ull, 0), "oversize recv");
	if (finish(r, &q, qc, DOCA_ERROR_INVALID_VALUE, "oversize inline recv") == 0 &&
	    (q.has_buffer || q.count != 0))
		RFAIL(r, "oversize recv: buffer %d, count %" PRIu64, q.has_buffer, q.count);
	/* An inline send the command cannot carry: refused before a task exists. */
	if (do_send(r, &s, right, big, sizeof(big), 0x700001, 0) != DOCA_ERROR_INVALID_VALUE)
		RFAIL(r, "inline send of %zu bytes accepted", sizeof(big));
	else
		r->next_context--; /* no task, no completion */

	/* The peer's receive that a leaked refused send would complete. */
	pc = r->next_context;
	submit_ok(r, do_recv(r, &p, 0, 64, 0x880000 + left, ~0ull, 0), "guard recv");
	fence(r);
	barrier(r);

	if (r->memh_id != 0) {
		pat_fill(r->reg, REG_LEN, r->rank, r->rank, 20);
		memcpy(snapshot, r->area, area_len);

		/* Sends reaching past either end of the mapping. */
		sc = r->next_context;
		submit_ok(r,
			  do_send(r, &s, right, r->reg + REG_LEN - 10, 20, 0x880000 + r->rank,
				  r->memh_id),
			  "send past the end");
		finish(r, &s, sc, DOCA_ERROR_INVALID_VALUE, "send past the end of the mapping");
		sc = r->next_context;
		submit_ok(r, do_send(r, &s, right, r->reg - 1, 10, 0x880000 + r->rank, r->memh_id),
			  "send before the start");
		finish(r, &s, sc, DOCA_ERROR_INVALID_VALUE, "send before the mapping");
		sc = r->next_context;
		submit_ok(r,
			  do_send(r, &s, right, r->reg, 10, 0x880000 + r->rank, r->memh_id + 999),
			  "send from an unknown memh");
		finish(r, &s, sc, DOCA_ERROR_NOT_FOUND, "send from an unknown memh id");

		/* Receives reaching outside it. */
		qc = r->next_context;
		submit_ok(r,
			  do_recv(r, &q, (uint64_t)(uintptr_t)(r->reg + REG_LEN - 5), 10, 0x890000,
				  ~0ull, r->memh_id),
			  "recv past the end");
		finish(r, &q, qc, DOCA_ERROR_INVALID_VALUE, "recv past the end of the mapping");
		qc = r->next_context;
		submit_ok(r,
			  do_recv(r, &q, (uint64_t)(uintptr_t)(r->reg - GUARD), 10, 0x890000, ~0ull,
				  r->memh_id),
			  "recv into the guard");
		finish(r, &q, qc, DOCA_ERROR_INVALID_VALUE, "recv into the guard");
		qc = r->next_context;
		submit_ok(r,
			  do_recv(r, &q, (uint64_t)(uintptr_t)r->reg, 10, 0x890000, ~0ull,
				  r->memh_id + 999),
			  "recv into an unknown memh");
		finish(r, &q, qc, DOCA_ERROR_NOT_FOUND, "recv into an unknown memh id");

		bad = memcmp(snapshot, r->area, area_len);
		if (bad != 0)
			RFAIL(r, "a refused command changed host memory");
	}
	barrier(r);
	/* Nothing reached the peer: its receive is still waiting. */
	expect_pending(r, &p, "receive behind refused sends");
	barrier(r);
	pat_fill(out, 64, r->rank, right, 21);
	sc = r->next_context;
	submit_ok(r, do_send(r, &s, right, out, 64, 0x880000 + r->rank, 0), "guard send");
	finish(r, &s, sc, DOCA_SUCCESS, "guard send");
	if (finish(r, &p, pc, DOCA_SUCCESS, "guard recv") == 0)
		check_inline(r, &p, left, 21, 64, 0x880000 + left, "guard recv");
	barrier(r);
	free(snapshot);
}

/* Bring a rank up, run every scenario, tear it down. */
static void rank_run(struct rank *r)
{
	struct t_worker_cfg cfg;
	struct doca_ctx *dctx;
	doca_error_t st;
	enum doca_ctx_states state;
	uint64_t domain_id = r->rank;

	r->next_context = ((uint64_t)r->rank << 32) | 0x1000;
	sdp_urom_oob_coll(r->oob, &r->coll);
	if (r->coll.oob_index != r->rank || r->coll.n_oob_indexes != r->size)
		RFAIL(r, "OOB coll says rank %u of %u", r->coll.oob_index, r->coll.n_oob_indexes);

	r->area = calloc(1, GUARD + REG_LEN + GUARD);
	if (r->area == NULL) {
		RFAIL(r, "out of memory");
		return;
	}
	r->reg = r->area + GUARD;
	memset(r->area, 0xee, GUARD + REG_LEN + GUARD);
	st = sdp_urom_mem_export(r->reg, REG_LEN, &r->exp);
	if (st != DOCA_SUCCESS)
		RFAIL(r, "sdp_urom_mem_export: %s", doca_error_get_name(st));

	st = t_svc_open(&r->svc, 0);
	if (st != DOCA_SUCCESS) {
		RFAIL(r, "service start: %s", doca_error_get_name(st));
		goto out_svc;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.id = r->worker_id;
	cfg.plugins = sandbox_id;
	cfg.max_inflight = 64;
	st = t_worker_start(&r->svc, r->svc.pe, &cfg, &r->worker);
	if (st != DOCA_SUCCESS) {
		RFAIL(r, "worker start: %s", doca_error_get_name(st));
		goto out_worker;
	}

	st = doca_urom_domain_create(&r->domain);
	if (st != DOCA_SUCCESS) {
		RFAIL(r, "domain create: %s", doca_error_get_name(st));
		goto out_worker;
	}
	dctx = doca_urom_domain_as_ctx(r->domain);
	st = doca_pe_connect_ctx(r->svc.pe, dctx);
	if (st == DOCA_SUCCESS)
		st = doca_urom_domain_set_oob(r->domain, &r->coll);
	if (st == DOCA_SUCCESS)
		st = doca_urom_domain_set_workers(r->domain, &domain_id, &r->worker, 1);
	if (st == DOCA_SUCCESS) {
		st = doca_ctx_start(dctx);
		if (st == DOCA_ERROR_IN_PROGRESS)
			st = DOCA_SUCCESS;
	}
	if (st != DOCA_SUCCESS) {
		RFAIL(r, "domain setup: %s", doca_error_get_name(st));
		goto out_domain;
	}
	state = t_ctx_wait_state(dctx, r->svc.pe, NULL, DOCA_CTX_STATE_RUNNING, 40000);
	if (state != DOCA_CTX_STATE_RUNNING) {
		RFAIL(r, "domain did not start (state %d, %s)", (int)state,
		      doca_error_get_name(sdp_ctx_get_last_error(dctx)));
		goto out_domain;
	}

	scenario_before(r);
	scenario_after(r);
	scenario_masks(r);
	map_region(r);
	scenario_registered(r);
	scenario_refusals(r);

	st = doca_ctx_stop(dctx);
	if (st == DOCA_ERROR_IN_PROGRESS)
		st = t_ctx_wait_state(dctx, r->svc.pe, NULL, DOCA_CTX_STATE_IDLE, T_WAIT_MS) ==
				     DOCA_CTX_STATE_IDLE ?
			     DOCA_SUCCESS :
			     DOCA_ERROR_TIME_OUT;
	if (st != DOCA_SUCCESS)
		RFAIL(r, "domain stop: %s", doca_error_get_name(st));
out_domain:
	if (r->domain != NULL && doca_urom_domain_destroy(r->domain) != DOCA_SUCCESS)
		RFAIL(r, "domain destroy failed");
out_worker:
	t_worker_close(&r->svc, r->svc.pe, r->worker);
out_svc:
	t_svc_close(&r->svc);
	/* The worker that imported the buffer is gone: it may be unexported now. */
	if (r->exp != NULL && sdp_urom_mem_unexport(r->exp) != DOCA_SUCCESS)
		RFAIL(r, "unexport failed");
	free(r->area);
}

/* ---- ranks as threads ------------------------------------------------------------------------ */

static void *rank_thread(void *arg)
{
	rank_run(arg);
	return NULL;
}

static void run_threads(uint32_t n, uint64_t worker_base)
{
	struct sdp_urom_oob_params params;
	struct rank ranks[MAX_RANKS];
	pthread_t threads[MAX_RANKS];
	uint8_t secret[SECRET_LEN];
	char root[64];
	uint32_t i;

	printf("# %u ranks as threads\n", n);
	fflush(stdout);
	memset(ranks, 0, sizeof(ranks));
	if (getrandom(secret, sizeof(secret), 0) != (ssize_t)sizeof(secret)) {
		t_fail("getrandom failed");
		return;
	}
	memset(&params, 0, sizeof(params));
	params.secret = secret;
	params.secret_len = sizeof(secret);
	params.size = n;
	params.timeout_ms = 40000;
	for (i = 0; i < n; i++) {
		if (i == 0)
			snprintf(root, sizeof(root), "127.0.0.1:0");
		params.root = root;
		params.rank = i;
		ranks[i].rank = i;
		ranks[i].size = n;
		ranks[i].worker_id = worker_base + i;
		T_OK(sdp_urom_oob_create(&params, &ranks[i].oob));
		if (ranks[i].oob == NULL)
			goto out_destroy;
		if (i == 0)
			snprintf(root, sizeof(root), "127.0.0.1:%u",
				 sdp_urom_oob_port(ranks[0].oob));
	}
	for (i = 0; i < n; i++)
		if (pthread_create(&threads[i], NULL, rank_thread, &ranks[i]) != 0) {
			t_fail("pthread_create failed");
			n = i;
			break;
		}
	for (i = 0; i < n; i++) {
		pthread_join(threads[i], NULL);
		if (ranks[i].errors > 0)
			t_fail("%u threads: rank %u had %d failure(s)", n, i, ranks[i].errors);
	}
out_destroy:
	for (i = 0; i < MAX_RANKS; i++)
		if (ranks[i].oob != NULL)
			T_OK(sdp_urom_oob_destroy(ranks[i].oob));
}

/* ---- ranks as processes ---------------------------------------------------------------------- */

/* --child rank size root secret_file worker_id port_fd: one rank; exit status 0 = passed. */
static int child_main(char **argv)
{
	struct sdp_urom_oob_params params;
	uint8_t secret[SECRET_LEN];
	struct rank r;
	uint16_t port;
	int fd, port_fd;

	memset(&r, 0, sizeof(r));
	r.rank = (uint32_t)strtoul(argv[0], NULL, 10);
	r.size = (uint32_t)strtoul(argv[1], NULL, 10);
	r.worker_id = strtoull(argv[4], NULL, 10);
	port_fd = atoi(argv[5]);
	fd = open(argv[3], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, secret, sizeof(secret)) != (ssize_t)sizeof(secret)) {
		fprintf(stderr, "child %u: cannot read the secret %s\n", r.rank, argv[3]);
		return T_EXIT_FAIL;
	}
	close(fd);
	memset(&params, 0, sizeof(params));
	params.root = argv[2];
	params.rank = r.rank;
	params.size = r.size;
	params.secret = secret;
	params.secret_len = sizeof(secret);
	params.timeout_ms = 40000;
	if (sdp_urom_oob_create(&params, &r.oob) != DOCA_SUCCESS) {
		fprintf(stderr, "child %u: no OOB\n", r.rank);
		return T_EXIT_FAIL;
	}
	if (port_fd >= 0) {
		port = sdp_urom_oob_port(r.oob);
		if (write(port_fd, &port, sizeof(port)) != (ssize_t)sizeof(port))
			r.errors++;
		close(port_fd);
	}
	rank_run(&r);
	if (sdp_urom_oob_destroy(r.oob) != DOCA_SUCCESS)
		r.errors++;
	return r.errors == 0 && t_failures == 0 ? T_EXIT_PASS : T_EXIT_FAIL;
}

static pid_t spawn_child(const char *self, uint32_t rank, uint32_t n, const char *root,
			 const char *secret_file, uint64_t worker_id, int port_fd)
{
	char a_rank[16], a_size[16], a_id[32], a_fd[16];
	pid_t pid;

	snprintf(a_rank, sizeof(a_rank), "%u", rank);
	snprintf(a_size, sizeof(a_size), "%u", n);
	snprintf(a_id, sizeof(a_id), "%" PRIu64, worker_id);
	snprintf(a_fd, sizeof(a_fd), "%d", port_fd);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		execl(self, self, "--child", a_rank, a_size, root, secret_file, a_id, a_fd,
		      (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void run_processes(const char *self, uint32_t n, uint64_t worker_base)
{
	char secret_file[PATH_MAX + 32], root[64];
	uint8_t secret[SECRET_LEN];
	pid_t pids[MAX_RANKS];
	struct pollfd pfd;
	uint16_t port = 0;
	int fds[2], fd, status;
	uint32_t i, started = 0;

	printf("# %u ranks as processes\n", n);
	fflush(stdout);
	snprintf(secret_file, sizeof(secret_file), "%s/oob-secret-%u", d.tmp_dir, n);
	fd = open(secret_file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || getrandom(secret, sizeof(secret), 0) != (ssize_t)sizeof(secret) ||
	    write(fd, secret, sizeof(secret)) != (ssize_t)sizeof(secret)) {
		t_fail("cannot write %s", secret_file);
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);

	/* Rank 0 listens on a port the kernel picks and tells us through a pipe. */
	if (pipe(fds) != 0) {
		t_fail("pipe failed");
		return;
	}
	pids[0] = spawn_child(self, 0, n, "127.0.0.1:0", secret_file, worker_base, fds[1]);
	close(fds[1]);
	if (pids[0] > 0)
		started = 1;
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	if (started == 0 || poll(&pfd, 1, T_WAIT_MS) <= 0 ||
	    read(fds[0], &port, sizeof(port)) != (ssize_t)sizeof(port) || port == 0)
		t_fail("rank 0 did not report its OOB port");
	close(fds[0]);
	snprintf(root, sizeof(root), "127.0.0.1:%u", port);
	for (i = 1; port != 0 && i < n; i++) {
		pids[i] = spawn_child(self, i, n, root, secret_file, worker_base + i, -1);
		if (pids[i] <= 0) {
			t_fail("fork failed");
			break;
		}
		started++;
	}
	for (i = 0; i < started; i++) {
		if (!t_wait_child(pids[i], 120000, &status)) {
			t_fail("%u processes: rank %u did not finish; killing it", n, i);
			kill(pids[i], SIGKILL);
			t_wait_child(pids[i], 5000, &status);
		} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			t_fail("%u processes: rank %u %s %d", n, i,
			       WIFEXITED(status) ? "exited with" : "died of signal",
			       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		}
	}
	unlink(secret_file);
}

/* ---- main ------------------------------------------------------------------------------------ */

/*
 * Every worker the ranks started must have exited by itself with status 0 (a sanitizer report
 * in a worker changes its exit status): the daemon logs each worker's end.
 */
static void check_worker_exits(int want)
{
	int left = t_uromd_wait_workers(&d, 0, 10000);
	int64_t deadline = t_now_ms() + 10000;
	int clean, ended;

	/* A worker that is gone may not be reaped and logged yet: wait for the line. */
	for (;;) {
		clean = t_uromd_log_count(&d, "exited with status 0");
		ended = t_uromd_log_count(&d, "exited with status") +
			t_uromd_log_count(&d, "killed by signal") +
			t_uromd_log_count(&d, "ended with wait status");
		if (ended >= want || t_now_ms() >= deadline)
			break;
		t_sleep_ms(20);
	}

	if (left != 0)
		t_fail("%d worker processes still alive after the last rank finished", left);
	if (clean != want || ended != want)
		t_fail("worker exits: %d clean of %d, expected %d clean", clean, ended, want);
}

static int find_sandbox(void)
{
	const struct doca_urom_service_plugin_info *plugins;
	struct t_svc s;
	size_t n = 0, i;
	int found = -1;

	if (t_svc_open(&s, 0) != DOCA_SUCCESS) {
		t_fail("service start failed");
		t_svc_close(&s);
		return -1;
	}
	T_OK(doca_urom_service_get_plugins_list(s.svc, &plugins, &n));
	for (i = 0; i < n; i++) {
		if (strcmp(plugins[i].plugin_name, "worker_sandbox") == 0) {
			sandbox_id = plugins[i].id;
			/* The host half: a version other than its own is refused. */
			T_STATUS(urom_sandbox_init(plugins[i].id, plugins[i].version + 1),
				 DOCA_ERROR_UNSUPPORTED_VERSION);
			T_OK(urom_sandbox_init(plugins[i].id, plugins[i].version));
			found = 0;
		}
	}
	if (found != 0)
		t_fail("the service offers no worker_sandbox plugin");
	t_svc_close(&s);
	return found;
}

int main(int argc, char **argv)
{
	if (argc == 8 && strcmp(argv[1], "--child") == 0) {
		/* The host half is set up again in each process. */
		if (find_sandbox() != 0)
			return T_EXIT_FAIL;
		return child_main(argv + 2);
	}
	if (argc != 2) {
		fprintf(stderr, "usage: %s <directory of worker_sandbox.so>\n", argv[0]);
		return T_EXIT_FAIL;
	}
	setenv("UROM_PLUGIN_PATH", argv[1], 1);
	if (t_uromd_start(&d, NULL) != 0)
		return T_EXIT_FAIL;

	if (find_sandbox() == 0) {
		run_threads(2, 10);
		run_threads(4, 20);
		run_processes(argv[0], 2, 30);
		run_processes(argv[0], 4, 40);
		check_worker_exits(2 + 4 + 2 + 4);
	}

	t_uromd_stop(&d);
	T_DONE();
}
