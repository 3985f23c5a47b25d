/*
 * Driver for fuzz_urom_rdmo.c without libFuzzer: feeds the files named on the command line
 * and/or N generated inputs to LLVMFuzzerTestOneInput(). Generated inputs are reproducible
 * (seeded): well-formed operations (FLUSH, APPEND, SCATTER with random entries), responses and
 * exchange messages in the target's input format, then the same with bytes changed, cut or
 * extended, and plain noise. A failing property aborts, so a crash names the iteration and
 * the seed printed before it.
 *
 *   fuzz_urom_rdmo_replay [--random N] [--seed S] [FILE...]
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdp_rdmo_wire.h"
#include "urom_rdmo_xchg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static uint8_t pool[4096];

/* [selector][header length][header][data] for an operation. */
static size_t make_req(uint8_t *buf, size_t cap)
{
	struct sdp_rdmo_req r;
	size_t hlen, off = 0, i, n;

	memset(&r, 0, sizeof(r));
	r.hdr.id = rnd() % 4;
	r.hdr.op_id = (uint32_t)(rnd() % 3);
	r.hdr.flags = rnd() % 2 ? UROM_RDMO_REQ_FLAG_FENCE : 0;
	r.flush.flush_id = rnd();
	if (r.hdr.op_id == UROM_RDMO_OP_APPEND) {
		r.append.ptr_addr = rnd();
		r.append.ptr_rkey = rnd() % 8;
		r.append.data_rkey = rnd() % 8;
	}
	buf[0] = 0;
	hlen = sdp_rdmo_req_pack(&r, buf + 2, cap - 2);
	buf[1] = (uint8_t)hlen;
	off = 2 + hlen;
	switch (r.hdr.op_id) {
	case UROM_RDMO_OP_APPEND:
		n = 1 + rnd() % 200;
		memcpy(buf + off, pool + rnd() % (sizeof(pool) - 200), n);
		off += n;
		break;
	case UROM_RDMO_OP_SCATTER:
		n = 1 + rnd() % 6;
		r.scatter.count = n;
		(void)sdp_rdmo_req_pack(&r, buf + 2, cap - 2);
		for (i = 0; i < n; i++) {
			size_t data_off = off - 2 - hlen, room = cap - 2 - hlen;

			(void)sdp_rdmo_scatter_pack(buf + 2 + hlen, room, &data_off, rnd(),
						    rnd() % 8, pool + rnd() % 512,
						    (uint16_t)(1 + rnd() % 100));
			off = 2 + hlen + data_off;
		}
		break;
	default:
		break;
	}
	return off;
}

static size_t make_rsp(uint8_t *buf, size_t cap)
{
	struct sdp_rdmo_rsp r;
	size_t hlen;

	memset(&r, 0, sizeof(r));
	r.hdr.rsp_id = UROM_RDMO_RSP_FLUSH;
	r.flush.flush_id = rnd();
	buf[0] = 1;
	hlen = sdp_rdmo_rsp_pack(&r, buf + 2, cap - 2);
	buf[1] = (uint8_t)hlen;
	if (rnd() % 2) {
		struct sdp_rdmo_flush_status s = {.status = (uint32_t)(rnd() % 32),
						  .failed = rnd() % 100};

		memcpy(buf + 2 + hlen, &s, sizeof(s));
		return 2 + hlen + sizeof(s);
	}
	return 2 + hlen;
}

static size_t make_xchg(uint8_t *buf, size_t cap)
{
	static const uint16_t types[] = {SDP_RDMO_XCHG_HELLO, SDP_RDMO_XCHG_INFO,
					 SDP_RDMO_XCHG_DONE, SDP_RDMO_XCHG_RESULT};
	uint16_t type = types[rnd() % 4];
	size_t len;

	switch (type) {
	case SDP_RDMO_XCHG_HELLO:
		len = 1 + rnd() % 300;
		break;
	case SDP_RDMO_XCHG_INFO:
		len = sizeof(struct sdp_rdmo_xchg_info) + 1 + rnd() % 300;
		break;
	case SDP_RDMO_XCHG_DONE:
		len = sizeof(struct sdp_rdmo_xchg_done);
		break;
	default:
		len = sizeof(struct sdp_rdmo_xchg_result);
		break;
	}
	if (1 + SDP_RDMO_XCHG_HDR_LEN + len > cap)
		return 0;
	buf[0] = 2;
	sdp_rdmo_xchg_hdr_pack(type, (uint32_t)len, buf + 1);
	memset(buf + 1 + SDP_RDMO_XCHG_HDR_LEN, 0, len);
	if (type == SDP_RDMO_XCHG_RESULT)
		buf[1 + SDP_RDMO_XCHG_HDR_LEN] = (uint8_t)(rnd() % 2);
	else if (type != SDP_RDMO_XCHG_DONE)
		memcpy(buf + 1 + SDP_RDMO_XCHG_HDR_LEN, pool, len);
	return 1 + SDP_RDMO_XCHG_HDR_LEN + len;
}

static void mutate(uint8_t *buf, size_t *len, size_t cap)
{
	size_t i, n = 1 + rnd() % 4;

	switch (rnd() % 4) {
	case 0: /* flip bytes */
		for (i = 0; i<n && * len> 0; i++)
			buf[rnd() % *len] ^= (uint8_t)(1u << (rnd() % 8));
		break;
	case 1: /* cut */
		if (*len > 1)
			*len = 1 + rnd() % (*len - 1);
		break;
	case 2: /* extend */
		for (i = 0; i < n * 8 && *len < cap; i++)
			buf[(*len)++] = (uint8_t)rnd();
		break;
	default: /* random header length byte */
		if (*len > 1)
			buf[1] = (uint8_t)rnd();
		break;
	}
}

int main(int argc, char **argv)
{
	static uint8_t buf[8192], file_buf[1 << 20];
	unsigned long random_n = 0, i;
	uint64_t seed = 0x5eed0f0dd5ull;
	size_t len;
	int a;

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--random") == 0 && a + 1 < argc) {
			random_n = strtoul(argv[++a], NULL, 0);
		} else if (strcmp(argv[a], "--seed") == 0 && a + 1 < argc) {
			seed = strtoull(argv[++a], NULL, 0);
		} else {
			FILE *f = fopen(argv[a], "rb");

			if (f == NULL) {
				fprintf(stderr, "cannot open %s\n", argv[a]);
				return 1;
			}
			len = fread(file_buf, 1, sizeof(file_buf), f);
			fclose(f);
			LLVMFuzzerTestOneInput(file_buf, len);
		}
	}

	rng = seed | 1;
	for (i = 0; i < sizeof(pool); i++)
		pool[i] = (uint8_t)rnd();
	printf("seed %#llx, %lu generated inputs\n", (unsigned long long)seed, random_n);
	fflush(stdout);
	for (i = 0; i < random_n; i++) {
		switch (i % 7) {
		case 0:
		case 1:
			len = make_req(buf, sizeof(buf));
			break;
		case 2:
			len = make_rsp(buf, sizeof(buf));
			break;
		case 3:
			len = make_xchg(buf, sizeof(buf));
			break;
		case 4:
		case 5:
			len = i % 2 ? make_req(buf, sizeof(buf)) : make_xchg(buf, sizeof(buf));
			mutate(buf, &len, sizeof(buf));
			break;
		default: /* noise */
			len = rnd() % 200;
			for (size_t k = 0; k < len; k++)
				buf[k] = (uint8_t)rnd();
			break;
		}
		/* Generated inputs must also pass the "all three" selector now and then. */
		if (len > 0 && i % 11 == 0)
			buf[0] |= 3;
		LLVMFuzzerTestOneInput(buf, len);
	}
	return 0;
}
