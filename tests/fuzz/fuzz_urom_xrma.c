/*
 * libFuzzer target for the xrma headers (src/urom/proto/sdp_urom_xrma.h): the requests the
 * export thread takes from any peer that reaches its worker, and the answers a plugin's worker
 * takes from a memory owner.
 *
 * Input: byte 0 picks the parser (even: request, odd: reply), bytes 1-4 the AM's data length
 * (little-endian, any value), the rest is the header. An accepted header must re-pack to the
 * same bytes, and what was accepted is checked against the documented rules, written here
 * again rather than taken from the parser: magic, version, reserved bits, op, 1 <= len <=
 * SDP_UROM_XRMA_LEN_MAX without wrapping, a put's data exactly len, a get's none; a reply's
 * status a doca_error_t, data only with a successful GET_DATA and exactly its len. A crash or a
 * disagreement fails.
 *
 * With -DSDP_FUZZ_MAIN this file has its own main() (tests/fuzz/fuzz_main.h): the replay test.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sdp_urom_wire.h"
#include "sdp_urom_xrma.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int req_rules(const uint8_t *h, size_t hl, size_t dl)
{
	uint64_t va, len;

	if (hl != SDP_UROM_XRMA_REQ_LEN || memcmp(h, "SDXR", 4) != 0 || h[5] != 1 || h[6] != 0 ||
	    h[7] != 0 || (h[4] != 1 && h[4] != 2))
		return 0;
	va = sdp_wire_get_le(h + 24, 8);
	len = sdp_wire_get_le(h + 32, 8);
	if (len == 0 || len > (1u << 20) || va + len < va)
		return 0;
	return dl == (h[4] == 1 ? len : 0);
}

static int rep_rules(const uint8_t *h, size_t hl, size_t dl)
{
	uint64_t len, status;

	if (hl != SDP_UROM_XRMA_REP_LEN || memcmp(h, "SDXA", 4) != 0 || h[5] != 1 ||
	    (h[4] != 3 && h[4] != 4))
		return 0;
	status = sdp_wire_get_le(h + 6, 2);
	len = sdp_wire_get_le(h + 24, 8);
	if (status > 31 || len > (1u << 20))
		return 0;
	if (h[4] == 4 && status == 0)
		return dl == len;
	return len == 0 && dl == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t out[SDP_UROM_XRMA_REQ_LEN];
	struct sdp_urom_xrma_req q;
	struct sdp_urom_xrma_rep r;
	const uint8_t *h;
	size_t hl, dl;
	char why[40];
	int ok;

	if (size < 5)
		return 0;
	dl = (size_t)sdp_wire_get_le(data + 1, 4);
	h = data + 5;
	hl = size - 5;
	memset(why, 'x', sizeof(why));
	if ((data[0] & 1) == 0) {
		ok = sdp_urom_xrma_req_unpack(h, hl, dl, &q, why, sizeof(why)) == DOCA_SUCCESS;
		if (ok != req_rules(h, hl, dl))
			abort(); /* parser and rules disagree */
		if (ok) {
			sdp_urom_xrma_req_pack(&q, out);
			if (memcmp(out, h, SDP_UROM_XRMA_REQ_LEN) != 0)
				abort();
		}
	} else {
		ok = sdp_urom_xrma_rep_unpack(h, hl, dl, &r, why, sizeof(why)) == DOCA_SUCCESS;
		if (ok != rep_rules(h, hl, dl))
			abort();
		if (ok) {
			sdp_urom_xrma_rep_pack(&r, out);
			if (memcmp(out, h, SDP_UROM_XRMA_REP_LEN) != 0)
				abort();
		}
	}
	if (!ok && memchr(why, '\0', sizeof(why)) == NULL)
		abort(); /* the reason must end inside its buffer */
	return 0;
}

#ifdef SDP_FUZZ_MAIN
#include "fuzz_main.h"

/* Valid headers with one field bent more often than not, and data lengths near the rules. */
static size_t fuzz_generate(uint8_t *buf, size_t cap)
{
	struct sdp_urom_xrma_req q;
	struct sdp_urom_xrma_rep r;
	uint64_t dl;
	size_t n;

	if (cap < 5 + SDP_UROM_XRMA_REQ_LEN)
		return 0;
	buf[0] = (uint8_t)fuzz_rnd();
	if ((buf[0] & 1) == 0) {
		q.op = (uint8_t)(1 + fuzz_rnd() % 2);
		q.opid = fuzz_rnd();
		q.am_key = fuzz_rnd();
		q.va = fuzz_rnd() % 3 == 0 ? UINT64_MAX - fuzz_rnd() % 4096 : fuzz_rnd();
		q.len = fuzz_rnd() % 4 == 0 ? fuzz_rnd() : 1 + fuzz_rnd() % (1u << 20);
		sdp_urom_xrma_req_pack(&q, buf + 5);
		n = SDP_UROM_XRMA_REQ_LEN;
		dl = q.op == 1 ? q.len : 0;
	} else {
		r.op = (uint8_t)(3 + fuzz_rnd() % 2);
		r.status = (uint16_t)(fuzz_rnd() % 4 == 0 ? fuzz_rnd() % 40 : 0);
		r.opid = fuzz_rnd();
		r.va = fuzz_rnd();
		r.len = r.op == 4 && r.status == 0 ? fuzz_rnd() % ((1u << 20) + 2) : 0;
		sdp_urom_xrma_rep_pack(&r, buf + 5);
		n = SDP_UROM_XRMA_REP_LEN;
		dl = r.len;
	}
	switch (fuzz_rnd() % 6) {
	case 0:
		dl += fuzz_rnd() % 3 - 1;
		break;
	case 1:
		buf[5 + fuzz_rnd() % n] ^= (uint8_t)(1u << (fuzz_rnd() % 8));
		break;
	case 2:
		n -= fuzz_rnd() % n;
		break;
	default:
		break;
	}
	sdp_wire_put_le(buf + 1, dl, 4);
	return 5 + n;
}
#endif
