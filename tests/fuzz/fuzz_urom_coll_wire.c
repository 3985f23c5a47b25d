/*
 * libFuzzer target for worker_coll's worker-to-worker wire parser (urom_coll_wire_parse in
 * plugins/worker_coll/common/worker_coll_wire.h): the bytes come from another member's worker,
 * possibly another machine. Properties checked on every input: the parser reads only
 * [data, data + length) (ASan, on an exact-size copy); it accepts exactly the inputs whose
 * 88-byte head has magic UROM_COLL_WIRE_MAGIC, kind ARRIVE or DONE, flags within
 * UROM_COLL_WIRE_FLAGS_ALL, tag and seq nonzero and reserved 0, and whose length is 88 when
 * neither SMEMH nor RMEMH is set, else (ARRIVE only, not BAD) 88 + 8 + slen + rlen with the
 * two little-endian uint32 lengths at 88 and 92 nonzero exactly for the flags set and at most
 * UROM_COLL_MEMH_MAX (decided here from the bytes, independently of the struct); what it
 * accepts is those bytes unchanged, the memh pointers inside the input at 96 and 96 + slen
 * (NULL when absent); NULL data or output is refused.
 *
 * With -DSDP_FUZZ_COLL_WIRE_REPLAY this file gets the shared replay main() of fuzz_main.h (the
 * replay test, any compiler): the files and directories named on its command line, then N
 * generated inputs (valid messages, the same with bytes changed, cut or extended, noise behind
 * the magic); every valid one must be accepted.
 *
 *   fuzz_urom_coll_wire_replay [--random N] [--seed S] [FILE|DIR...]
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker_coll_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs accepted so far (the replay driver checks its valid ones against it). */
static unsigned long fuzz_accepted;

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

/* Whether the bytes form a message the parser must accept. */
static int should_accept(const uint8_t *p, size_t size)
{
	uint64_t kind, flags, slen, rlen;
	int head;

	if (size < 88)
		return 0;
	kind = le(p + 4, 2);
	flags = le(p + 6, 2);
	head = le(p, 4) == UROM_COLL_WIRE_MAGIC &&
	       (kind == UROM_COLL_WIRE_ARRIVE || kind == UROM_COLL_WIRE_DONE) &&
	       (flags & ~(uint64_t)UROM_COLL_WIRE_FLAGS_ALL) == 0 && le(p + 8, 8) != 0 &&
	       le(p + 16, 8) != 0 && le(p + 80, 8) == 0;
	if (!head)
		return 0;
	if (!(flags & (UROM_COLL_WIRE_SMEMH | UROM_COLL_WIRE_RMEMH)))
		return size == 88;
	if (kind != UROM_COLL_WIRE_ARRIVE || (flags & UROM_COLL_WIRE_BAD) || size < 96)
		return 0;
	slen = le(p + 88, 4);
	rlen = le(p + 92, 4);
	return (slen != 0) == ((flags & UROM_COLL_WIRE_SMEMH) != 0) &&
	       (rlen != 0) == ((flags & UROM_COLL_WIRE_RMEMH) != 0) && slen <= UROM_COLL_MEMH_MAX &&
	       rlen <= UROM_COLL_MEMH_MAX && size == 96 + slen + rlen;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sm = (const uint8_t *)1, *rm = (const uint8_t *)1;
	struct urom_coll_wire_memh m = {0xdead, 0xbeef};
	struct urom_coll_wire w;
	uint8_t *copy;
	int ok;

	_Static_assert(sizeof(struct urom_coll_wire) == 88, "the wire message is 88 bytes");
	copy = malloc(size ? size : 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	ok = urom_coll_wire_parse(copy, size, &w, &m, &sm, &rm);
	if (ok != 0 && ok != 1)
		abort();
	if (ok != should_accept(copy, size))
		abort(); /* accepted a bad message or refused a good one */
	if (ok) {
		if (w.magic != UROM_COLL_WIRE_MAGIC ||
		    (w.kind != UROM_COLL_WIRE_ARRIVE && w.kind != UROM_COLL_WIRE_DONE) ||
		    (w.flags & ~UROM_COLL_WIRE_FLAGS_ALL) != 0 || w.tag == 0 || w.seq == 0 ||
		    w.reserved != 0)
			abort(); /* let through a value the header promises it refuses */
		if (memcmp(&w, copy, sizeof(w)) != 0)
			abort(); /* not the bytes as received */
		if (size == 88 ? (m.slen | m.rlen) != 0 || sm != NULL || rm != NULL :
				 m.slen != le(copy + 88, 4) || m.rlen != le(copy + 92, 4) ||
					 sm != (m.slen ? copy + 96 : NULL) ||
					 rm != (m.rlen ? copy + 96 + m.slen : NULL))
			abort(); /* the memh are not where the bytes say */
		if (urom_coll_wire_parse(copy, size, &w, NULL, NULL, NULL) != 1)
			abort(); /* the lengths are checked without m too */
		fuzz_accepted++;
	}
	if (urom_coll_wire_parse(NULL, size, &w, &m, &sm, &rm) ||
	    urom_coll_wire_parse(copy, size, NULL, &m, &sm, &rm))
		abort();
	free(copy);
	return 0;
}

#ifdef SDP_FUZZ_COLL_WIRE_REPLAY
static int coll_wire_done(unsigned long n);
#define FUZZ_MAIN_DONE(n) coll_wire_done(n)
#include "fuzz_main.h"

/* A valid message with random contents (small tags and sequence numbers half the time). */
static struct urom_coll_wire make_valid(void)
{
	struct urom_coll_wire w = {.magic = UROM_COLL_WIRE_MAGIC};

	w.kind = fuzz_rnd() % 2 ? UROM_COLL_WIRE_ARRIVE : UROM_COLL_WIRE_DONE;
	w.flags = fuzz_rnd() % 4 == 0 ? UROM_COLL_WIRE_BAD : 0;
	w.tag = fuzz_rnd() % 2 ? 1 + fuzz_rnd() % 8 : fuzz_rnd() | 1;
	w.seq = fuzz_rnd() % 2 ? 1 + fuzz_rnd() % 1000 : fuzz_rnd() | 1;
	w.sender = fuzz_rnd() % 64;
	w.sig = fuzz_rnd();
	w.team_hash = fuzz_rnd();
	w.sva = fuzz_rnd() >> 16;
	w.rva = fuzz_rnd() >> 16;
	w.voff = fuzz_rnd() % 4096;
	w.vlen = fuzz_rnd() % 4096;
	return w;
}

/*
 * Offsets in the checked fields: magic, kind, flags, the low bytes of tag and seq, reserved,
 * the memh lengths (when there are any).
 */
static const uint8_t checked[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 16, 80, 87, 88, 89, 92, 93};

/* Every fourth generated input is valid: it must have been accepted when the next one is made. */
static unsigned long gen_count, gen_valid, gen_refused, gen_mark;
static int gen_pending;

static void check_pending(void)
{
	if (gen_pending && fuzz_accepted != gen_mark + 1)
		gen_refused++;
	gen_pending = 0;
}

static size_t fuzz_generate(uint8_t *buf, size_t cap)
{
	struct urom_coll_wire w = make_valid();
	size_t len = sizeof(w);

	check_pending();
	if (cap < 2 * sizeof(w) + 8 + 2 * UROM_COLL_MEMH_MAX)
		return 0;
	/* half the valid ARRIVE carry memh trailers, of random lengths and bytes */
	if (w.kind == UROM_COLL_WIRE_ARRIVE && !(w.flags & UROM_COLL_WIRE_BAD) && fuzz_rnd() % 2) {
		struct urom_coll_wire_memh m = {0, 0};

		if (fuzz_rnd() % 3 != 0)
			m.slen = 1 + (uint32_t)(fuzz_rnd() % UROM_COLL_MEMH_MAX);
		if (m.slen == 0 || fuzz_rnd() % 2)
			m.rlen = 1 + (uint32_t)(fuzz_rnd() % UROM_COLL_MEMH_MAX);
		w.flags |=
			(m.slen ? UROM_COLL_WIRE_SMEMH : 0) | (m.rlen ? UROM_COLL_WIRE_RMEMH : 0);
		memcpy(buf + sizeof(w), &m, sizeof(m));
		for (size_t k = 0; k < m.slen + m.rlen; k++)
			buf[sizeof(w) + sizeof(m) + k] = (uint8_t)fuzz_rnd();
		len = sizeof(w) + sizeof(m) + m.slen + m.rlen;
	}
	memcpy(buf, &w, sizeof(w));
	switch (gen_count++ % 4) {
	case 1: /* bytes changed, mostly in the checked fields */
		for (unsigned long f = 1 + fuzz_rnd() % 3; f > 0; f--) {
			size_t at = fuzz_rnd() % 2 ? checked[fuzz_rnd() % sizeof(checked)] :
						     fuzz_rnd() % len;

			buf[at < len ? at : at % len] ^= (uint8_t)(1u << fuzz_rnd() % 8);
		}
		break;
	case 2: /* cut or extended (0 .. 2 messages' worth) */
		if (len > sizeof(w) && fuzz_rnd() % 2) {
			len = len - 2 + fuzz_rnd() % 5; /* around the trailer's end */
			buf[len - 1] = (uint8_t)fuzz_rnd();
			break;
		}
		len = fuzz_rnd() % 3 ? sizeof(w) - 2 + fuzz_rnd() % 5 :
				       fuzz_rnd() % (2 * sizeof(w));
		for (size_t k = sizeof(w); k < len; k++)
			buf[k] = (uint8_t)fuzz_rnd();
		break;
	case 3: /* noise behind the magic */
		for (size_t k = 4; k < len; k++)
			buf[k] = (uint8_t)fuzz_rnd();
		break;
	default:
		gen_valid++;
		gen_pending = 1;
		gen_mark = fuzz_accepted;
		break;
	}
	return len;
}

static int coll_wire_done(unsigned long n)
{
	check_pending();
	printf("replay: %lu of %lu generated worker_coll wire inputs valid, %lu of them refused\n",
	       gen_valid, n, gen_refused);
	return gen_refused != 0;
}
#endif /* SDP_FUZZ_COLL_WIRE_REPLAY */
