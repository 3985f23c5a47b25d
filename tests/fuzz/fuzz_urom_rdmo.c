/*
 * libFuzzer target for the worker_rdmo data plane (plugins/worker_rdmo/common/sdp_rdmo_wire.c)
 * and the urom_rdmo sample's TCP exchange (samples/urom_rdmo/urom_rdmo_xchg.c): every parser
 * of bytes that arrive from a network peer in that plugin and sample.
 *
 * Input: byte 0 picks what to parse (low two bits: 0 an operation, 1 a response, 2 an exchange
 * message, 3 all three); for operations and responses byte 1 is the AM header's length, the
 * header follows, the rest is the AM data. Header and data are copied into buffers of exactly
 * their size, so ASan sees any read past either.
 *
 * Properties: the parsers return DOCA_SUCCESS or DOCA_ERROR_INVALID_VALUE only; what parses
 * packs back to the same bytes (operation and response headers, every scatter entry, exchange
 * headers); scatter entries lie inside the payload and fill it exactly; an exchange payload
 * parses only with the length its header allows.
 *
 * Built as a libFuzzer binary when the C compiler is clang (tests/fuzz/meson.build);
 * replay_rdmo.c drives it with generated inputs as an ordinary test with any compiler.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sdp_rdmo_wire.h"
#include "urom_rdmo_xchg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_status(doca_error_t st)
{
	if (st != DOCA_SUCCESS && st != DOCA_ERROR_INVALID_VALUE)
		abort();
}

/* An exact-size heap copy (a non-NULL pointer even for 0 bytes). */
static uint8_t *dup_exact(const uint8_t *p, size_t n)
{
	uint8_t *c = malloc(n > 0 ? n : 1);

	if (c == NULL)
		abort();
	if (n > 0)
		memcpy(c, p, n);
	return c;
}

static void fuzz_scatter(const struct sdp_rdmo_req *req, const uint8_t *payload, size_t len)
{
	struct sdp_rdmo_scatter_entry *e;
	uint8_t *again;
	size_t off = 0;
	uint64_t i;
	doca_error_t st;

	e = calloc(req->scatter.count, sizeof(*e));
	again = malloc(len > 0 ? len : 1);
	if (e == NULL || again == NULL)
		abort();
	st = sdp_rdmo_scatter_parse(payload, len, req->scatter.count, e, NULL);
	check_status(st);
	if (st == DOCA_SUCCESS) {
		for (i = 0; i < req->scatter.count; i++) {
			if (e[i].len == 0 || e[i].data < payload ||
			    e[i].data + e[i].len > payload + len)
				abort(); /* an entry outside its payload */
			if (sdp_rdmo_scatter_pack(again, len, &off, e[i].addr, e[i].rkey, e[i].data,
						  e[i].len) != DOCA_SUCCESS)
				abort();
		}
		if (off != len || memcmp(again, payload, len) != 0)
			abort(); /* entries do not fill the payload, or pack differently */
	}
	free(again);
	free(e);
}

static void fuzz_req(const uint8_t *data, size_t size)
{
	uint8_t out[UROM_RDMO_HDR_LEN_MAX];
	struct sdp_rdmo_req req;
	uint8_t *hdr, *payload;
	size_t hlen, plen;
	doca_error_t st;

	if (size < 1)
		return;
	hlen = data[0] % (UROM_RDMO_HDR_LEN_MAX + 8);
	if (hlen > size - 1)
		hlen = size - 1;
	plen = size - 1 - hlen;
	hdr = dup_exact(data + 1, hlen);
	payload = dup_exact(data + 1 + hlen, plen);

	st = sdp_rdmo_req_parse(hdr, hlen, plen, &req, NULL);
	check_status(st);
	if (st == DOCA_SUCCESS) {
		if (sdp_rdmo_req_pack(&req, out, sizeof(out)) != hlen ||
		    memcmp(out, hdr, hlen) != 0)
			abort(); /* parse and pack disagree */
		if (req.hdr.op_id == UROM_RDMO_OP_SCATTER)
			fuzz_scatter(&req, payload, plen);
	}
	free(payload);
	free(hdr);
}

static void fuzz_rsp(const uint8_t *data, size_t size)
{
	uint8_t out[SDP_RDMO_FLUSH_RSP_HDR_LEN];
	struct sdp_rdmo_rsp rsp;
	uint8_t *hdr, *payload;
	size_t hlen, plen;
	doca_error_t st;

	if (size < 1)
		return;
	hlen = data[0] % 32;
	if (hlen > size - 1)
		hlen = size - 1;
	plen = size - 1 - hlen;
	hdr = dup_exact(data + 1, hlen);
	payload = dup_exact(data + 1 + hlen, plen);

	st = sdp_rdmo_rsp_parse(hdr, hlen, payload, plen, &rsp, NULL);
	check_status(st);
	if (st == DOCA_SUCCESS) {
		if (sdp_rdmo_rsp_pack(&rsp, out, sizeof(out)) != hlen ||
		    memcmp(out, hdr, hlen) != 0)
			abort();
		if (rsp.has_status != (plen != 0) ||
		    (rsp.has_status && memcmp(&rsp.status, payload, sizeof(rsp.status)) != 0))
			abort();
	}
	free(payload);
	free(hdr);
}

static void fuzz_xchg(const uint8_t *data, size_t size)
{
	struct sdp_rdmo_xchg_result result;
	struct sdp_rdmo_xchg_info info;
	struct sdp_rdmo_xchg_done done;
	struct sdp_rdmo_xchg_hdr h;
	uint8_t out[SDP_RDMO_XCHG_HDR_LEN];
	const void *addr = NULL;
	size_t addr_len = 0, plen;
	uint8_t *hdr, *payload;
	doca_error_t st;

	if (size < SDP_RDMO_XCHG_HDR_LEN)
		return;
	hdr = dup_exact(data, SDP_RDMO_XCHG_HDR_LEN);
	plen = size - SDP_RDMO_XCHG_HDR_LEN;
	payload = dup_exact(data + SDP_RDMO_XCHG_HDR_LEN, plen);

	st = sdp_rdmo_xchg_hdr_parse(hdr, SDP_RDMO_XCHG_HDR_LEN, &h);
	check_status(st);
	if (st == DOCA_SUCCESS) {
		sdp_rdmo_xchg_hdr_pack(h.type, h.len, out);
		if (memcmp(out, hdr, sizeof(out)) != 0)
			abort();
	}
	/* Every payload parser on the payload, whatever the header said. */
	st = sdp_rdmo_xchg_info_parse(payload, plen, &info, &addr, &addr_len);
	check_status(st);
	if (st == DOCA_SUCCESS &&
	    ((const uint8_t *)addr != payload + sizeof(info) || addr_len != plen - sizeof(info) ||
	     addr_len == 0 || addr_len > SDP_RDMO_XCHG_ADDR_MAX))
		abort();
	check_status(sdp_rdmo_xchg_done_parse(payload, plen, &done));
	check_status(sdp_rdmo_xchg_result_parse(payload, plen, &result));
	free(payload);
	free(hdr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] & 3) {
	case 0:
		fuzz_req(data + 1, size - 1);
		break;
	case 1:
		fuzz_rsp(data + 1, size - 1);
		break;
	case 2:
		fuzz_xchg(data + 1, size - 1);
		break;
	default:
		fuzz_req(data + 1, size - 1);
		fuzz_rsp(data + 1, size - 1);
		fuzz_xchg(data + 1, size - 1);
		break;
	}
	return 0;
}
