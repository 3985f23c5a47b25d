/*
 * libFuzzer target for worker_rma's active-message wire parser (urom_rma_am_wire_parse in
 * plugins/worker_rma/common/worker_rma_am_wire.h): the bytes come from another member's worker,
 * possibly another machine. Properties checked on every input, for a receiver bound taken from
 * the input's first byte: the parser reads only [data, data + length) (ASan, on an exact-size
 * copy), accepts only the magic, a header of at most UROM_RMA_AM_HDR_MAX, header + payload
 * within the bound and exactly the bytes that follow the fixed part.
 *
 * With -DSDP_FUZZ_RMA_AM_REPLAY this file has its own main(): `--random N [--seed S]` runs N
 * generated inputs (valid AMs of random sizes, the same with bytes changed, cut or extended,
 * noise behind the magic), as the fuzz suite does with any compiler.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker_rma_am_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct urom_rma_am_wire w;
	size_t am_max;
	uint8_t *copy;

	if (size == 0)
		return 0;
	am_max = (size_t)data[0] * 64; /* 0 .. 16320 */
	copy = malloc(size - 1 ? size - 1 : 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, data + 1, size - 1);
	if (urom_rma_am_wire_parse(copy, size - 1, am_max, &w)) {
		if (w.magic != UROM_RMA_AM_MAGIC || w.hdr_len > UROM_RMA_AM_HDR_MAX ||
		    (uint64_t)w.hdr_len + w.len > am_max ||
		    size - 1 != sizeof(w) + (size_t)w.hdr_len + w.len)
			abort(); /* accepted something out of bounds */
	}
	free(copy);
	return 0;
}

#ifdef SDP_FUZZ_RMA_AM_REPLAY
static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	static uint8_t buf[1 + sizeof(struct urom_rma_am_wire) + UROM_RMA_AM_HDR_MAX + 16384 + 64];
	unsigned long n = 100000, i;
	uint64_t seed = 0x5eed0a11u;

	for (int a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--random") == 0 && a + 1 < argc)
			n = strtoul(argv[++a], NULL, 0);
		else if (strcmp(argv[a], "--seed") == 0 && a + 1 < argc)
			seed = strtoull(argv[++a], NULL, 0);
	}
	rng = seed ? seed : 1;
	fprintf(stderr, "replay: %lu generated inputs, seed %#llx\n", n, (unsigned long long)seed);
	for (i = 0; i < n; i++) {
		struct urom_rma_am_wire w = {.magic = UROM_RMA_AM_MAGIC};
		size_t len;

		buf[0] = (uint8_t)rnd();
		w.handler = (uint32_t)rnd();
		w.sender = rnd();
		w.hdr_len = (uint32_t)(rnd() % (UROM_RMA_AM_HDR_MAX + 1));
		w.len = (uint32_t)(rnd() % 16384);
		memcpy(buf + 1, &w, sizeof(w));
		len = 1 + sizeof(w) + w.hdr_len + w.len;
		for (size_t k = 1 + sizeof(w); k < len; k++)
			buf[k] = (uint8_t)rnd();
		switch (i % 4) {
		case 1: /* bytes changed */
			for (int f = 0; f < 3; f++)
				buf[1 + rnd() % (len - 1)] = (uint8_t)rnd();
			break;
		case 2: /* cut or extended */
			len = 1 + rnd() % (sizeof(buf) - 1);
			break;
		case 3: /* noise behind the magic */
			len = 1 + rnd() % 256;
			for (size_t k = 5; k < len; k++)
				buf[k] = (uint8_t)rnd();
			break;
		default:
			break;
		}
		LLVMFuzzerTestOneInput(buf, len);
	}
	fprintf(stderr, "replay: done\n");
	return 0;
}
#endif
