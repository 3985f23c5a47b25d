/*
 * libFuzzer target for softdpu's memh descriptor (src/urom/proto/sdp_urom_memh.c). Properties
 * checked on every input: sdp_urom_memh_unpack_why() never reads past the buffer (ASan),
 * returns SUCCESS, INVALID_VALUE or NOT_SUPPORTED only, NOT_SUPPORTED only for a good magic
 * with another version; a refusal writes a terminated reason within its buffer; a memh that
 * parses has its views inside the input, in range fields, and packs back to exactly the same
 * bytes with the same packed size.
 *
 * Built as a libFuzzer binary when the C compiler is clang (tests/fuzz/meson.build). Built
 * with SDP_FUZZ_MEMH_REPLAY, this file also has a main() (the replay test, any compiler) that
 * feeds the files named on its command line and N reproducible generated inputs: valid memhs,
 * the same with bytes changed, cut or extended, and noise behind a valid-looking header.
 *
 *   fuzz_urom_memh_replay [--random N] [--seed S] [FILE...]
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doca_log.h"
#include "sdp_urom_memh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int inside(const uint8_t *p, size_t n, const uint8_t *base, size_t size)
{
	return p >= base && n <= size && (size_t)(p - base) <= size - n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[SDP_UROM_MEMH_MAX_LEN];
	static const uint8_t empty[1]; /* non-NULL even for an empty input */
	static int quiet;
	const uint8_t *in = size > 0 ? data : empty;
	struct sdp_urom_memh m;
	doca_error_t status;
	char why[48];
	size_t len;

	if (!quiet) {
		(void)doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
		quiet = 1;
	}
	memset(&m, 0, sizeof(m));
	memset(why, 'x', sizeof(why));
	status = sdp_urom_memh_unpack_why(in, size, &m, why, sizeof(why));
	switch (status) {
	case DOCA_SUCCESS:
		if (m.version != SDP_UROM_MEMH_VERSION || m.len == 0 || m.len > UINT64_MAX - m.va ||
		    (m.flags & ~SDP_UROM_MEMH_FLAGS_KNOWN) != 0 ||
		    !inside(m.owner_addr, m.owner_addr_len, in, size) ||
		    !inside(m.rkey, m.rkey_len, in, size) || m.owner_addr_len == 0 ||
		    m.rkey_len == 0 || m.owner_addr_len > SDP_UROM_MEMH_ADDR_MAX ||
		    m.rkey_len > SDP_UROM_MEMH_RKEY_MAX ||
		    ((m.flags & SDP_UROM_MEMH_FLAG_AM_KEY) == 0 && m.am_key != 0))
			abort(); /* accepted something out of range */
		if (sdp_urom_memh_pack(&m, out, sizeof(out), &len) != DOCA_SUCCESS || len != size ||
		    memcmp(out, in, size) != 0 || sdp_urom_memh_packed_size(&m) != size)
			abort(); /* parse and pack disagree */
		if (sdp_urom_memh_pack(&m, out, size - 1, &len) != DOCA_ERROR_TOO_BIG ||
		    len != size)
			abort(); /* a short buffer must be refused with the size needed */
		break;
	case DOCA_ERROR_NOT_SUPPORTED:
		if (size < 6 || memcmp(in, SDP_UROM_MEMH_MAGIC, 4) != 0 ||
		    m.version == SDP_UROM_MEMH_VERSION)
			abort(); /* NOT_SUPPORTED must mean "our magic, another version" */
		if (memchr(why, '\0', sizeof(why)) == NULL)
			abort(); /* the reason must be terminated inside its buffer */
		break;
	case DOCA_ERROR_INVALID_VALUE:
		if (memchr(why, '\0', sizeof(why)) == NULL)
			abort();
		break;
	default:
		abort();
	}
	return 0;
}

#ifdef SDP_FUZZ_MEMH_REPLAY
#include <stdio.h>

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

/* Lengths near the edges more often than elsewhere. */
static uint32_t some_len(uint32_t max)
{
	switch (rnd() % 4) {
	case 0:
		return 1;
	case 1:
		return max - (uint32_t)(rnd() % 2);
	default:
		return 1 + (uint32_t)(rnd() % 200);
	}
}

/* A valid memh with random fields into buf: its length. */
static size_t make_valid(uint8_t *buf, size_t cap)
{
	static uint8_t pool[SDP_UROM_MEMH_ADDR_MAX + SDP_UROM_MEMH_RKEY_MAX];
	static int pool_ready;
	struct sdp_urom_memh m;
	size_t len = 0, i;

	if (!pool_ready) {
		for (i = 0; i < sizeof(pool); i++)
			pool[i] = (uint8_t)rnd();
		pool_ready = 1;
	}
	memset(&m, 0, sizeof(m));
	m.flags = (uint16_t)(rnd() % 4);
	m.am_key = (m.flags & SDP_UROM_MEMH_FLAG_AM_KEY) != 0 ? rnd() : 0;
	m.va = rnd() % 3 == 0 ? UINT64_MAX - (rnd() % 4096) - 1 : rnd() >> (rnd() % 64);
	if (m.va == UINT64_MAX)
		m.va--;
	m.len = 1 + rnd() % (UINT64_MAX - m.va);
	m.owner_addr_len = some_len(SDP_UROM_MEMH_ADDR_MAX);
	m.rkey_len = some_len(SDP_UROM_MEMH_RKEY_MAX);
	m.owner_addr = pool;
	m.rkey = pool + SDP_UROM_MEMH_ADDR_MAX;
	if (sdp_urom_memh_pack(&m, buf, cap, &len) != DOCA_SUCCESS) {
		fprintf(stderr, "replay: cannot pack a valid memh\n");
		exit(1);
	}
	return len;
}

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
	static uint8_t buf[1 << 16];
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

static size_t gen_input(unsigned long i, uint8_t *buf, size_t cap)
{
	unsigned long j, flips;
	size_t len, newlen;

	switch (i % 4) {
	case 0:
		return make_valid(buf, cap);
	case 1: /* a few bytes changed, mostly in the header */
	case 2: /* changed, then cut or extended */
		len = make_valid(buf, cap);
		flips = 1 + rnd() % 3;
		for (j = 0; j < flips; j++)
			buf[rnd() % 2 ? rnd() % SDP_UROM_MEMH_HDR_LEN : rnd() % len] =
				(uint8_t)rnd();
		if (i % 4 == 2) {
			newlen = (size_t)(rnd() % (len + 16));
			if (newlen > cap)
				newlen = cap;
			for (j = len; j < newlen; j++)
				buf[j] = (uint8_t)rnd();
			len = newlen;
		}
		return len;
	default: /* noise behind our magic and version */
		len = (size_t)(rnd() % 300);
		for (j = 0; j < len; j++)
			buf[j] = (uint8_t)rnd();
		if (len >= 6) {
			memcpy(buf, SDP_UROM_MEMH_MAGIC, 4);
			buf[4] = rnd() % 8 ? SDP_UROM_MEMH_VERSION : (uint8_t)rnd();
			buf[5] = 0;
		}
		return len;
	}
}

int main(int argc, char **argv)
{
	static uint8_t buf[SDP_UROM_MEMH_MAX_LEN + 16];
	uint64_t seed = 0x6d656d6812345678ull;
	unsigned long n = 0, i;
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
	printf("replay: %lu generated memh inputs, seed 0x%llx\n", n, (unsigned long long)seed);
	fflush(stdout);
	for (i = 0; i < n; i++)
		run_one(buf, gen_input(i, buf, sizeof(buf)));
	printf("replay: done\n");
	return errors ? 1 : 0;
}
#endif /* SDP_FUZZ_MEMH_REPLAY */
