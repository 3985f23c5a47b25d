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
 * With -DSDP_FUZZ_COLL_WIRE_REPLAY this file has its own main() (the replay test, any
 * compiler): the files named on its command line, then N generated inputs (valid messages, the
 * same with bytes changed, cut or extended, noise behind the magic); every valid one must be
 * accepted.
 *
 *   fuzz_urom_coll_wire_replay [--random N] [--seed S] [FILE...]
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
static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A valid message with random contents (small tags and sequence numbers half the time). */
static struct urom_coll_wire make_valid(void)
{
	struct urom_coll_wire w = {.magic = UROM_COLL_WIRE_MAGIC};

	w.kind = rnd() % 2 ? UROM_COLL_WIRE_ARRIVE : UROM_COLL_WIRE_DONE;
	w.flags = rnd() % 4 == 0 ? UROM_COLL_WIRE_BAD : 0;
	w.tag = rnd() % 2 ? 1 + rnd() % 8 : rnd() | 1;
	w.seq = rnd() % 2 ? 1 + rnd() % 1000 : rnd() | 1;
	w.sender = rnd() % 64;
	w.sig = rnd();
	w.team_hash = rnd();
	w.sva = rnd() >> 16;
	w.rva = rnd() >> 16;
	w.voff = rnd() % 4096;
	w.vlen = rnd() % 4096;
	return w;
}

/* Offsets in the checked fields: magic, kind, flags, the low bytes of tag and seq, reserved. */
static const uint8_t checked[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 16, 80, 87};

static void run_one(const uint8_t *data, size_t len)
{
	/* An exact-size heap copy, so a sanitizer sees any read past the end. */
	uint8_t *copy = malloc(len > 0 ? len : 1);

	if (copy == NULL) {
		fprintf(stderr, "replay: out of memory\n");
		exit(1);
	}
	memcpy(copy, data, len);
	LLVMFuzzerTestOneInput(copy, len);
	free(copy);
}

static int run_file(const char *path)
{
	static uint8_t buf[1 << 12];
	size_t len;
	FILE *f = fopen(path, "rb");

	if (f == NULL) {
		perror(path);
		return 1;
	}
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	run_one(buf, len);
	return 0;
}

int main(int argc, char **argv)
{
	static uint8_t buf[2 * sizeof(struct urom_coll_wire)];
	uint64_t seed = 0xc011a11e5eedull;
	unsigned long n = 0, i, valid = 0, before, from;
	int a, errors = 0;

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--random") == 0 && a + 1 < argc)
			n = strtoul(argv[++a], NULL, 0);
		else if (strcmp(argv[a], "--seed") == 0 && a + 1 < argc)
			seed = strtoull(argv[++a], NULL, 0);
		else
			errors += run_file(argv[a]);
	}
	rng = seed ? seed : 1;
	printf("replay: %lu generated worker_coll wire inputs, seed 0x%llx\n", n,
	       (unsigned long long)seed);
	fflush(stdout);
	from = fuzz_accepted;
	for (i = 0; i < n; i++) {
		struct urom_coll_wire w = make_valid();
		size_t len = sizeof(w);

		memcpy(buf, &w, sizeof(w));
		switch (i % 4) {
		case 1: /* bytes changed, mostly in the checked fields */
			for (unsigned long f = 1 + rnd() % 3; f > 0; f--) {
				buf[rnd() % 2 ? checked[rnd() % sizeof(checked)] : rnd() % len] ^=
					(uint8_t)(1u << rnd() % 8);
			}
			break;
		case 2: /* cut or extended (0 .. 2 messages' worth) */
			len = rnd() % 3 ? sizeof(w) - 2 + rnd() % 5 : rnd() % sizeof(buf);
			for (size_t k = sizeof(w); k < len; k++)
				buf[k] = (uint8_t)rnd();
			break;
		case 3: /* noise behind the magic */
			for (size_t k = 4; k < len; k++)
				buf[k] = (uint8_t)rnd();
			break;
		default:
			break;
		}
		before = fuzz_accepted;
		run_one(buf, len);
		if (i % 4 == 0) {
			valid++;
			if (fuzz_accepted != before + 1) {
				fprintf(stderr, "replay: valid input %lu refused\n", i);
				return 1;
			}
		}
	}
	printf("replay: done, %lu of %lu generated inputs accepted (%lu generated valid)\n",
	       fuzz_accepted - from, n, valid);
	return errors ? 1 : 0;
}
#endif /* SDP_FUZZ_COLL_WIRE_REPLAY */
