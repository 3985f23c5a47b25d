/*
 * softdpu: the memh descriptor (see sdp_urom_memh.h for the layout and the rules).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_urom_memh.h"

#include "sdp_urom_wire.h"

#include <stdio.h>
#include <string.h>

#include "sdp_log.h"

SDP_LOG_COMPONENT("urom_memh");

/* The first field of m that cannot be packed, NULL when m is valid. */
static const char *memh_invalid_field(const struct sdp_urom_memh *m)
{
	if (m->len == 0)
		return "len (0)";
	if (m->len > UINT64_MAX - m->va)
		return "len (va + len overflows)";
	if ((m->flags & ~SDP_UROM_MEMH_FLAGS_KNOWN) != 0)
		return "flags (unknown bits)";
	if (m->owner_addr == NULL || m->owner_addr_len == 0 ||
	    m->owner_addr_len > SDP_UROM_MEMH_ADDR_MAX)
		return "owner_addr";
	if (m->rkey == NULL || m->rkey_len == 0 || m->rkey_len > SDP_UROM_MEMH_RKEY_MAX)
		return "rkey";
	return NULL;
}

size_t sdp_urom_memh_packed_size(const struct sdp_urom_memh *m)
{
	if (m == NULL || memh_invalid_field(m) != NULL)
		return 0;
	return SDP_UROM_MEMH_HDR_LEN + (size_t)m->owner_addr_len + m->rkey_len +
	       ((m->flags & SDP_UROM_MEMH_FLAG_AM_KEY) != 0 ? SDP_UROM_MEMH_AM_KEY_LEN : 0);
}

doca_error_t sdp_urom_memh_pack(const struct sdp_urom_memh *m, void *buf, size_t cap, size_t *len_p)
{
	const char *bad;
	uint8_t *p = buf;
	size_t need;

	if (m == NULL || len_p == NULL || (buf == NULL && cap != 0)) {
		sdp_error("invalid argument: m %p, buf %p, cap %zu, len_p %p", (const void *)m, buf,
			  cap, (void *)len_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	bad = memh_invalid_field(m);
	if (bad != NULL) {
		sdp_error("cannot pack a memh of %llu bytes at 0x%llx: field %s",
			  (unsigned long long)m->len, (unsigned long long)m->va, bad);
		return DOCA_ERROR_INVALID_VALUE;
	}
	need = sdp_urom_memh_packed_size(m);
	if (cap < need) {
		*len_p = need;
		return DOCA_ERROR_TOO_BIG;
	}
	memcpy(p, SDP_UROM_MEMH_MAGIC, 4);
	sdp_wire_put_le(p + 4, SDP_UROM_MEMH_VERSION, 2);
	sdp_wire_put_le(p + 6, m->flags, 2);
	sdp_wire_put_le(p + 8, m->va, 8);
	sdp_wire_put_le(p + 16, m->len, 8);
	sdp_wire_put_le(p + 24, m->owner_addr_len, 4);
	sdp_wire_put_le(p + 28, m->rkey_len, 4);
	memcpy(p + SDP_UROM_MEMH_HDR_LEN, m->owner_addr, m->owner_addr_len);
	memcpy(p + SDP_UROM_MEMH_HDR_LEN + m->owner_addr_len, m->rkey, m->rkey_len);
	if ((m->flags & SDP_UROM_MEMH_FLAG_AM_KEY) != 0)
		sdp_wire_put_le(p + SDP_UROM_MEMH_HDR_LEN + m->owner_addr_len + m->rkey_len,
				m->am_key, SDP_UROM_MEMH_AM_KEY_LEN);
	*len_p = need;
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_memh_unpack_why(const void *buf, size_t len, struct sdp_urom_memh *m,
				      char *why, size_t why_size)
{
	const uint8_t *p = buf;
	struct sdp_urom_memh out;
	size_t left, trailer;

	if (buf == NULL || m == NULL) {
		sdp_error("invalid argument: buf %p, m %p", buf, (void *)m);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* Magic and version first, so another version is told apart from garbage. */
	if (len < 6) {
		sdp_wire_why(why, why_size, "memh of %zu bytes is shorter than its %d-byte header",
			     len, SDP_UROM_MEMH_HDR_LEN);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (memcmp(p, SDP_UROM_MEMH_MAGIC, 4) != 0) {
		sdp_wire_why(why, why_size,
			     "memh has bad magic %02x %02x %02x %02x (expected \"%s\")", p[0], p[1],
			     p[2], p[3], SDP_UROM_MEMH_MAGIC);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memset(&out, 0, sizeof(out));
	out.version = (uint16_t)sdp_wire_get_le(p + 4, 2);
	if (out.version != SDP_UROM_MEMH_VERSION) {
		m->version = out.version;
		sdp_wire_why(why, why_size, "memh of version %u (this softdpu reads version %d)",
			     out.version, SDP_UROM_MEMH_VERSION);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (len < SDP_UROM_MEMH_HDR_LEN) {
		sdp_wire_why(why, why_size, "memh of %zu bytes is shorter than its %d-byte header",
			     len, SDP_UROM_MEMH_HDR_LEN);
		return DOCA_ERROR_INVALID_VALUE;
	}
	out.flags = (uint16_t)sdp_wire_get_le(p + 6, 2);
	out.va = sdp_wire_get_le(p + 8, 8);
	out.len = sdp_wire_get_le(p + 16, 8);
	out.owner_addr_len = (uint32_t)sdp_wire_get_le(p + 24, 4);
	out.rkey_len = (uint32_t)sdp_wire_get_le(p + 28, 4);
	if ((out.flags & ~SDP_UROM_MEMH_FLAGS_KNOWN) != 0) {
		sdp_wire_why(why, why_size, "memh has unknown flags 0x%x", out.flags);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (out.len == 0 || out.len > UINT64_MAX - out.va) {
		sdp_wire_why(why, why_size, "memh region of %llu bytes at 0x%llx is empty or wraps",
			     (unsigned long long)out.len, (unsigned long long)out.va);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (out.owner_addr_len == 0 || out.owner_addr_len > SDP_UROM_MEMH_ADDR_MAX) {
		sdp_wire_why(why, why_size, "memh owner address of %u bytes (1 .. %d allowed)",
			     out.owner_addr_len, SDP_UROM_MEMH_ADDR_MAX);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (out.rkey_len == 0 || out.rkey_len > SDP_UROM_MEMH_RKEY_MAX) {
		sdp_wire_why(why, why_size, "memh remote key of %u bytes (1 .. %d allowed)",
			     out.rkey_len, SDP_UROM_MEMH_RKEY_MAX);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* Both lengths are bounded, so the sum cannot overflow. */
	left = len - SDP_UROM_MEMH_HDR_LEN;
	trailer = (out.flags & SDP_UROM_MEMH_FLAG_AM_KEY) != 0 ? SDP_UROM_MEMH_AM_KEY_LEN : 0;
	if ((size_t)out.owner_addr_len + out.rkey_len + trailer != left) {
		sdp_wire_why(why, why_size,
			     "memh announces %u + %u + %zu bytes of address, key and am_key, %zu "
			     "bytes follow",
			     out.owner_addr_len, out.rkey_len, trailer, left);
		return DOCA_ERROR_INVALID_VALUE;
	}
	out.owner_addr = p + SDP_UROM_MEMH_HDR_LEN;
	out.rkey = out.owner_addr + out.owner_addr_len;
	if (trailer != 0)
		out.am_key = sdp_wire_get_le(out.rkey + out.rkey_len, SDP_UROM_MEMH_AM_KEY_LEN);
	*m = out;
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_memh_unpack(const void *buf, size_t len, struct sdp_urom_memh *m)
{
	return sdp_urom_memh_unpack_why(buf, len, m, NULL, 0);
}
