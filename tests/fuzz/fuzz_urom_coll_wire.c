/*
 * libFuzzer target for worker_coll's worker-to-worker wire parser (urom_coll_wire_parse in
 * plugins/worker_coll/common/worker_coll_wire.h): the bytes come from another member's worker,
 * possibly another machine. Properties checked on every input: the parser reads only
 * [data, data + length) (ASan, on an exact-size copy); it accepts exactly the inputs of
 * sizeof(struct urom_coll_wire) bytes whose magic is UROM_COLL_WIRE_MAGIC, kind ARRIVE or
 * DONE, flags within UROM_COLL_WIRE_FLAGS_ALL, tag and seq nonzero and reserved 0 (decided
 * here from the little-endian bytes, independently of the struct); what it accepts is those
 * bytes unchanged; NULL data or output is refused.
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
	uint64_t kind, flags;

	if (size != 88)
		return 0;
	kind = le(p + 4, 2);
	flags = le(p + 6, 2);
	return le(p, 4) == UROM_COLL_WIRE_MAGIC &&
	       (kind == UROM_COLL_WIRE_ARRIVE || kind == UROM_COLL_WIRE_DONE) &&
	       (flags & ~(uint64_t)UROM_COLL_WIRE_FLAGS_ALL) == 0 && le(p + 8, 8) != 0 &&
	       le(p + 16, 8) != 0 && le(p + 80, 8) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct urom_coll_wire w;
	uint8_t *copy;
	int ok;

	_Static_assert(sizeof(struct urom_coll_wire) == 88, "the wire message is 88 bytes");
	copy = malloc(size ? size : 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	ok = urom_coll_wire_parse(copy, size, &w);
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
		fuzz_accepted++;
	}
	if (urom_coll_wire_parse(NULL, size, &w) || urom_coll_wire_parse(copy, size, NULL))
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

/* Offsets in the checked fields: magic, kind, flags, the low bytes of tag and seq, reserved. */
static const uint8_t checked[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 16, 80, 87};

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
	if (cap < 2 * sizeof(w))
		return 0;
	memcpy(buf, &w, sizeof(w));
	switch (gen_count++ % 4) {
	case 1: /* bytes changed, mostly in the checked fields */
		for (unsigned long f = 1 + fuzz_rnd() % 3; f > 0; f--) {
			buf[fuzz_rnd() % 2 ? checked[fuzz_rnd() % sizeof(checked)] :
					     fuzz_rnd() % len] ^= (uint8_t)(1u << fuzz_rnd() % 8);
		}
		break;
	case 2: /* cut or extended (0 .. 2 messages' worth) */
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
