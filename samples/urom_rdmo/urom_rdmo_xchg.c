/*
 * urom_rdmo sample: parsing and packing of the TCP exchange (see urom_rdmo_xchg.h). The
 * functions only check and copy; the caller logs a refusal.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "urom_rdmo_xchg.h"

#include <string.h>

_Static_assert(sizeof(struct sdp_rdmo_xchg_hdr) == SDP_RDMO_XCHG_HDR_LEN, "header is 12 bytes");
_Static_assert(sizeof(struct sdp_rdmo_xchg_info) == 72, "info is 72 bytes");

doca_error_t sdp_rdmo_xchg_hdr_parse(const void *buf, size_t len, struct sdp_rdmo_xchg_hdr *hdr_p)
{
	struct sdp_rdmo_xchg_hdr h;
	int ok;

	if (buf == NULL || hdr_p == NULL || len != sizeof(h))
		return DOCA_ERROR_INVALID_VALUE;
	memcpy(&h, buf, sizeof(h));
	if (h.magic != SDP_RDMO_XCHG_MAGIC || h.reserved != 0)
		return DOCA_ERROR_INVALID_VALUE;
	switch (h.type) {
	case SDP_RDMO_XCHG_HELLO:
		ok = h.len >= 1 && h.len <= SDP_RDMO_XCHG_ADDR_MAX;
		break;
	case SDP_RDMO_XCHG_INFO:
		ok = h.len > sizeof(struct sdp_rdmo_xchg_info) &&
		     h.len <= sizeof(struct sdp_rdmo_xchg_info) + SDP_RDMO_XCHG_ADDR_MAX;
		break;
	case SDP_RDMO_XCHG_DONE:
		ok = h.len == sizeof(struct sdp_rdmo_xchg_done);
		break;
	case SDP_RDMO_XCHG_RESULT:
		ok = h.len == sizeof(struct sdp_rdmo_xchg_result);
		break;
	default:
		ok = 0;
		break;
	}
	if (!ok)
		return DOCA_ERROR_INVALID_VALUE;
	*hdr_p = h;
	return DOCA_SUCCESS;
}

void sdp_rdmo_xchg_hdr_pack(uint16_t type, uint32_t len, void *buf)
{
	struct sdp_rdmo_xchg_hdr h = {.magic = SDP_RDMO_XCHG_MAGIC, .type = type, .len = len};

	memcpy(buf, &h, sizeof(h));
}

doca_error_t sdp_rdmo_xchg_info_parse(const void *buf, size_t len,
				      struct sdp_rdmo_xchg_info *info_p, const void **addr_p,
				      size_t *addr_len_p)
{
	size_t fixed = sizeof(struct sdp_rdmo_xchg_info);

	if (buf == NULL || info_p == NULL || addr_p == NULL || addr_len_p == NULL || len <= fixed ||
	    len - fixed > SDP_RDMO_XCHG_ADDR_MAX)
		return DOCA_ERROR_INVALID_VALUE;
	memcpy(info_p, buf, fixed);
	*addr_p = (const uint8_t *)buf + fixed;
	*addr_len_p = len - fixed;
	return DOCA_SUCCESS;
}

doca_error_t sdp_rdmo_xchg_done_parse(const void *buf, size_t len,
				      struct sdp_rdmo_xchg_done *done_p)
{
	struct sdp_rdmo_xchg_done d;

	if (buf == NULL || done_p == NULL || len != sizeof(d))
		return DOCA_ERROR_INVALID_VALUE;
	memcpy(&d, buf, sizeof(d));
	if (d.reserved != 0)
		return DOCA_ERROR_INVALID_VALUE;
	*done_p = d;
	return DOCA_SUCCESS;
}

doca_error_t sdp_rdmo_xchg_result_parse(const void *buf, size_t len,
					struct sdp_rdmo_xchg_result *result_p)
{
	struct sdp_rdmo_xchg_result r;

	if (buf == NULL || result_p == NULL || len != sizeof(r))
		return DOCA_ERROR_INVALID_VALUE;
	memcpy(&r, buf, sizeof(r));
	if (r.reserved != 0 || r.pass > 1)
		return DOCA_ERROR_INVALID_VALUE;
	*result_p = r;
	return DOCA_SUCCESS;
}
