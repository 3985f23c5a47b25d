/*
 * softdpu: the xrma headers (see sdp_urom_xrma.h for the layout and the rules).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_urom_xrma.h"

#include <string.h>

#include "sdp_urom_wire.h"

void sdp_urom_xrma_req_pack(const struct sdp_urom_xrma_req *r, uint8_t *out)
{
	memcpy(out, SDP_UROM_XRMA_REQ_MAGIC, 4);
	out[4] = r->op;
	out[5] = SDP_UROM_XRMA_VERSION;
	sdp_wire_put_le(out + 6, 0, 2);
	sdp_wire_put_le(out + 8, r->opid, 8);
	sdp_wire_put_le(out + 16, r->am_key, 8);
	sdp_wire_put_le(out + 24, r->va, 8);
	sdp_wire_put_le(out + 32, r->len, 8);
}

void sdp_urom_xrma_rep_pack(const struct sdp_urom_xrma_rep *r, uint8_t *out)
{
	memcpy(out, SDP_UROM_XRMA_REP_MAGIC, 4);
	out[4] = r->op;
	out[5] = SDP_UROM_XRMA_VERSION;
	sdp_wire_put_le(out + 6, r->status, 2);
	sdp_wire_put_le(out + 8, r->opid, 8);
	sdp_wire_put_le(out + 16, r->va, 8);
	sdp_wire_put_le(out + 24, r->len, 8);
}

/* Magic, length and version of a header; 0 (reason in why) when they are wrong. */
static int xrma_head_ok(const uint8_t *p, size_t len, size_t want, const char *magic,
			const char *what, char *why, size_t why_size)
{
	if (p == NULL || len != want) {
		sdp_wire_why(why, why_size, "xrma %s header of %zu bytes (%zu expected)", what, len,
			     want);
		return 0;
	}
	if (memcmp(p, magic, 4) != 0) {
		sdp_wire_why(why, why_size, "xrma %s header has bad magic %02x %02x %02x %02x",
			     what, p[0], p[1], p[2], p[3]);
		return 0;
	}
	if (p[5] != SDP_UROM_XRMA_VERSION) {
		sdp_wire_why(why, why_size, "xrma %s of version %u (this softdpu speaks %d)", what,
			     p[5], SDP_UROM_XRMA_VERSION);
		return 0;
	}
	return 1;
}

doca_error_t sdp_urom_xrma_req_unpack(const void *hdr, size_t len, size_t data_len,
				      struct sdp_urom_xrma_req *r, char *why, size_t why_size)
{
	const uint8_t *p = hdr;
	struct sdp_urom_xrma_req out;

	if (r == NULL || !xrma_head_ok(p, len, SDP_UROM_XRMA_REQ_LEN, SDP_UROM_XRMA_REQ_MAGIC,
				       "request", why, why_size))
		return DOCA_ERROR_INVALID_VALUE;
	out.op = p[4];
	out.opid = sdp_wire_get_le(p + 8, 8);
	out.am_key = sdp_wire_get_le(p + 16, 8);
	out.va = sdp_wire_get_le(p + 24, 8);
	out.len = sdp_wire_get_le(p + 32, 8);
	if (sdp_wire_get_le(p + 6, 2) != 0) {
		sdp_wire_why(why, why_size, "xrma request with reserved bits set");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (out.op != SDP_UROM_XRMA_PUT && out.op != SDP_UROM_XRMA_GET) {
		sdp_wire_why(why, why_size, "xrma request of unknown op %u", out.op);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (out.len == 0 || out.len > SDP_UROM_XRMA_LEN_MAX || out.len > UINT64_MAX - out.va) {
		sdp_wire_why(why, why_size,
			     "xrma request of %llu bytes at 0x%llx (1 .. %u, not wrapping)",
			     (unsigned long long)out.len, (unsigned long long)out.va,
			     SDP_UROM_XRMA_LEN_MAX);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (data_len != (out.op == SDP_UROM_XRMA_PUT ? out.len : 0)) {
		sdp_wire_why(why, why_size, "xrma %s of %llu bytes carries %zu bytes of data",
			     out.op == SDP_UROM_XRMA_PUT ? "put" : "get",
			     (unsigned long long)out.len, data_len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*r = out;
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_xrma_rep_unpack(const void *hdr, size_t len, size_t data_len,
				      struct sdp_urom_xrma_rep *r, char *why, size_t why_size)
{
	const uint8_t *p = hdr;
	struct sdp_urom_xrma_rep out;
	uint64_t want;

	if (r == NULL || !xrma_head_ok(p, len, SDP_UROM_XRMA_REP_LEN, SDP_UROM_XRMA_REP_MAGIC,
				       "reply", why, why_size))
		return DOCA_ERROR_INVALID_VALUE;
	out.op = p[4];
	out.status = (uint16_t)sdp_wire_get_le(p + 6, 2);
	out.opid = sdp_wire_get_le(p + 8, 8);
	out.va = sdp_wire_get_le(p + 16, 8);
	out.len = sdp_wire_get_le(p + 24, 8);
	if (out.op != SDP_UROM_XRMA_PUT_ACK && out.op != SDP_UROM_XRMA_GET_DATA) {
		sdp_wire_why(why, why_size, "xrma reply of unknown op %u", out.op);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (out.status > DOCA_ERROR_DEVICE_FATAL_ERROR) {
		sdp_wire_why(why, why_size, "xrma reply with status %u (0 .. %d)", out.status,
			     DOCA_ERROR_DEVICE_FATAL_ERROR);
		return DOCA_ERROR_INVALID_VALUE;
	}
	want = out.op == SDP_UROM_XRMA_GET_DATA && out.status == DOCA_SUCCESS ? out.len : 0;
	if ((want == 0 && out.len != 0) || out.len > SDP_UROM_XRMA_LEN_MAX || data_len != want) {
		sdp_wire_why(why, why_size,
			     "xrma reply (op %u, status %u) of %llu bytes carries %zu", out.op,
			     out.status, (unsigned long long)out.len, data_len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*r = out;
	return DOCA_SUCCESS;
}
