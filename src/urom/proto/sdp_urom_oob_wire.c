/*
 * softdpu: the out-of-band allgather's frames (see sdp_urom_oob_wire.h). Every length is
 * checked before it is used; nothing here allocates or logs.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_urom_oob_wire.h"

#include "sdp_urom_wire.h"

#include <stdio.h>
#include <string.h>

static void put16(uint8_t *p, uint16_t v)
{
	sdp_wire_put_le(p, v, 2);
}

static void put32(uint8_t *p, uint32_t v)
{
	sdp_wire_put_le(p, v, 4);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)sdp_wire_get_le(p, 2);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)sdp_wire_get_le(p, 4);
}

const char *sdp_urom_oob_type_name(uint16_t type)
{
	switch (type) {
	case SDP_UROM_OOB_HELLO:
		return "HELLO";
	case SDP_UROM_OOB_CHALLENGE:
		return "CHALLENGE";
	case SDP_UROM_OOB_AUTH:
		return "AUTH";
	case SDP_UROM_OOB_ACCEPT:
		return "ACCEPT";
	case SDP_UROM_OOB_REJECT:
		return "REJECT";
	case SDP_UROM_OOB_DATA:
		return "DATA";
	case SDP_UROM_OOB_RESULT:
		return "RESULT";
	case SDP_UROM_OOB_FAIL:
		return "FAIL";
	default:
		return "UNKNOWN";
	}
}

int sdp_urom_oob_ctrl_len(uint16_t type)
{
	switch (type) {
	case SDP_UROM_OOB_HELLO:
		return 8 + SDP_UROM_OOB_NONCE_LEN;
	case SDP_UROM_OOB_CHALLENGE:
		return SDP_UROM_OOB_NONCE_LEN + SDP_UROM_OOB_MAC_LEN;
	case SDP_UROM_OOB_AUTH:
		return SDP_UROM_OOB_MAC_LEN;
	case SDP_UROM_OOB_ACCEPT:
		return 0;
	case SDP_UROM_OOB_REJECT:
	case SDP_UROM_OOB_FAIL:
		return 4;
	default:
		return -1;
	}
}

static int status_valid(uint32_t status)
{
	return status >= 1 && status <= SDP_UROM_OOB_STATUS_MAX;
}

size_t sdp_urom_oob_pack(const struct sdp_urom_oob_msg *msg, size_t payload_len, void *buf,
			 size_t cap)
{
	uint8_t *p = buf;
	size_t body;
	int ctrl;

	if (msg == NULL || buf == NULL)
		return 0;
	ctrl = sdp_urom_oob_ctrl_len(msg->hdr.type);
	if (ctrl >= 0) {
		body = (size_t)ctrl;
	} else if (msg->hdr.type == SDP_UROM_OOB_DATA || msg->hdr.type == SDP_UROM_OOB_RESULT) {
		if (payload_len > UINT32_MAX)
			return 0;
		body = payload_len;
	} else {
		return 0;
	}
	if (cap < SDP_UROM_OOB_HDR_LEN + (ctrl >= 0 ? body : 0))
		return 0;
	put32(p, SDP_UROM_OOB_MAGIC);
	put16(p + 4, SDP_UROM_OOB_VERSION);
	put16(p + 6, msg->hdr.type);
	put32(p + 8, msg->hdr.seq);
	put32(p + 12, (uint32_t)body);
	p += SDP_UROM_OOB_HDR_LEN;
	switch (msg->hdr.type) {
	case SDP_UROM_OOB_HELLO:
		if (msg->u.hello.size < 2 || msg->u.hello.rank == 0 ||
		    msg->u.hello.rank >= msg->u.hello.size)
			return 0;
		put32(p, msg->u.hello.rank);
		put32(p + 4, msg->u.hello.size);
		memcpy(p + 8, msg->u.hello.nonce, SDP_UROM_OOB_NONCE_LEN);
		break;
	case SDP_UROM_OOB_CHALLENGE:
		memcpy(p, msg->u.challenge.nonce, SDP_UROM_OOB_NONCE_LEN);
		memcpy(p + SDP_UROM_OOB_NONCE_LEN, msg->u.challenge.mac, SDP_UROM_OOB_MAC_LEN);
		break;
	case SDP_UROM_OOB_AUTH:
		memcpy(p, msg->u.auth.mac, SDP_UROM_OOB_MAC_LEN);
		break;
	case SDP_UROM_OOB_REJECT:
		if (!status_valid(msg->u.reject.status))
			return 0;
		put32(p, msg->u.reject.status);
		break;
	case SDP_UROM_OOB_FAIL:
		if (!status_valid(msg->u.fail.status))
			return 0;
		put32(p, msg->u.fail.status);
		break;
	default: /* ACCEPT, DATA, RESULT: nothing more here */
		return SDP_UROM_OOB_HDR_LEN + (ctrl >= 0 ? body : 0);
	}
	return SDP_UROM_OOB_HDR_LEN + body;
}

doca_error_t sdp_urom_oob_hdr_unpack(const uint8_t hdr_buf[SDP_UROM_OOB_HDR_LEN],
				     const struct sdp_urom_oob_expect *expect,
				     struct sdp_urom_oob_hdr *hdr_p, char *why, size_t why_size)
{
	struct sdp_urom_oob_hdr h;
	int ctrl;

	if (hdr_buf == NULL || expect == NULL || hdr_p == NULL) {
		sdp_wire_why(why, why_size, "no header");
		return DOCA_ERROR_INVALID_VALUE;
	}
	h.magic = get32(hdr_buf);
	h.version = get16(hdr_buf + 4);
	h.type = get16(hdr_buf + 6);
	h.seq = get32(hdr_buf + 8);
	h.body_len = get32(hdr_buf + 12);
	if (h.magic != SDP_UROM_OOB_MAGIC) {
		sdp_wire_why(why, why_size, "bad magic 0x%08x", (unsigned int)h.magic);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (h.version != SDP_UROM_OOB_VERSION) {
		sdp_wire_why(why, why_size, "protocol version %u, expected %u", h.version,
			     SDP_UROM_OOB_VERSION);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (h.type == 0 || h.type > SDP_UROM_OOB_TYPE_MAX ||
	    (expect->types & SDP_UROM_OOB_BIT(h.type)) == 0) {
		sdp_wire_why(why, why_size, "unexpected frame %s (type %u)",
			     sdp_urom_oob_type_name(h.type), h.type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	ctrl = sdp_urom_oob_ctrl_len(h.type);
	if (ctrl >= 0) {
		if (h.body_len != (uint32_t)ctrl) {
			sdp_wire_why(why, why_size, "%s body of %u bytes, expected %d",
				     sdp_urom_oob_type_name(h.type), (unsigned int)h.body_len,
				     ctrl);
			return DOCA_ERROR_INVALID_VALUE;
		}
	} else {
		if (h.seq != expect->seq) {
			sdp_wire_why(why, why_size, "%s of allgather %u, expected %u",
				     sdp_urom_oob_type_name(h.type), (unsigned int)h.seq,
				     (unsigned int)expect->seq);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if ((size_t)h.body_len != expect->payload_len) {
			sdp_wire_why(why, why_size, "%s of %u bytes, expected %zu",
				     sdp_urom_oob_type_name(h.type), (unsigned int)h.body_len,
				     expect->payload_len);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (h.body_len > 0 && expect->payload == NULL) {
			sdp_wire_why(why, why_size, "no buffer for %u bytes",
				     (unsigned int)h.body_len);
			return DOCA_ERROR_INVALID_VALUE;
		}
	}
	*hdr_p = h;
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_oob_ctrl_unpack(const struct sdp_urom_oob_hdr *hdr, const uint8_t *body,
				      size_t len, struct sdp_urom_oob_msg *msg_p, char *why,
				      size_t why_size)
{
	struct sdp_urom_oob_msg m;
	int ctrl;

	if (hdr == NULL || msg_p == NULL || (len > 0 && body == NULL)) {
		sdp_wire_why(why, why_size, "no frame");
		return DOCA_ERROR_INVALID_VALUE;
	}
	ctrl = sdp_urom_oob_ctrl_len(hdr->type);
	if (ctrl < 0 || len != (size_t)ctrl) {
		sdp_wire_why(why, why_size, "%s with a body of %zu bytes",
			     sdp_urom_oob_type_name(hdr->type), len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memset(&m, 0, sizeof(m));
	m.hdr = *hdr;
	switch (hdr->type) {
	case SDP_UROM_OOB_HELLO:
		m.u.hello.rank = get32(body);
		m.u.hello.size = get32(body + 4);
		memcpy(m.u.hello.nonce, body + 8, SDP_UROM_OOB_NONCE_LEN);
		if (m.u.hello.size < 2 || m.u.hello.rank == 0 || m.u.hello.rank >= m.u.hello.size) {
			sdp_wire_why(why, why_size, "HELLO from rank %u of a group of %u",
				     (unsigned int)m.u.hello.rank, (unsigned int)m.u.hello.size);
			return DOCA_ERROR_INVALID_VALUE;
		}
		break;
	case SDP_UROM_OOB_CHALLENGE:
		memcpy(m.u.challenge.nonce, body, SDP_UROM_OOB_NONCE_LEN);
		memcpy(m.u.challenge.mac, body + SDP_UROM_OOB_NONCE_LEN, SDP_UROM_OOB_MAC_LEN);
		break;
	case SDP_UROM_OOB_AUTH:
		memcpy(m.u.auth.mac, body, SDP_UROM_OOB_MAC_LEN);
		break;
	case SDP_UROM_OOB_REJECT:
	case SDP_UROM_OOB_FAIL:
		m.u.fail.status = get32(body);
		if (!status_valid(m.u.fail.status)) {
			sdp_wire_why(why, why_size, "%s with status %u",
				     sdp_urom_oob_type_name(hdr->type),
				     (unsigned int)m.u.fail.status);
			return DOCA_ERROR_INVALID_VALUE;
		}
		break;
	default: /* ACCEPT */
		break;
	}
	*msg_p = m;
	return DOCA_SUCCESS;
}

void sdp_urom_oob_rx_init(struct sdp_urom_oob_rx *rx)
{
	if (rx != NULL)
		memset(rx, 0, sizeof(*rx));
}

doca_error_t sdp_urom_oob_rx_space(struct sdp_urom_oob_rx *rx, uint8_t **space_p, size_t *size_p)
{
	if (rx == NULL || space_p == NULL || size_p == NULL || rx->broken)
		return DOCA_ERROR_INVALID_VALUE;
	if (!rx->in_body) {
		*space_p = rx->hdr_buf + rx->got;
		*size_p = SDP_UROM_OOB_HDR_LEN - rx->got;
	} else {
		*space_p = rx->body + rx->got;
		*size_p = rx->body_len - rx->got;
	}
	return DOCA_SUCCESS;
}

static doca_error_t rx_break(struct sdp_urom_oob_rx *rx)
{
	rx->broken = 1;
	rx->in_body = 0;
	rx->body = NULL;
	return DOCA_ERROR_INVALID_VALUE;
}

/* The frame in rx is complete: decode it into *msg_p and get ready for the next one. */
static doca_error_t rx_complete(struct sdp_urom_oob_rx *rx, struct sdp_urom_oob_msg *msg_p)
{
	struct sdp_urom_oob_msg m;

	if (sdp_urom_oob_ctrl_len(rx->hdr.type) >= 0) {
		if (sdp_urom_oob_ctrl_unpack(&rx->hdr, rx->ctrl, rx->body_len, &m, rx->why,
					     sizeof(rx->why)) != DOCA_SUCCESS)
			return rx_break(rx);
	} else {
		memset(&m, 0, sizeof(m));
		m.hdr = rx->hdr;
	}
	rx->in_body = 0;
	rx->body = NULL;
	rx->body_len = 0;
	rx->got = 0;
	*msg_p = m;
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_oob_rx_commit(struct sdp_urom_oob_rx *rx, size_t n,
				    const struct sdp_urom_oob_expect *expect,
				    struct sdp_urom_oob_msg *msg_p)
{
	size_t want;

	if (rx == NULL || rx->broken)
		return DOCA_ERROR_INVALID_VALUE;
	if (expect == NULL || msg_p == NULL) {
		snprintf(rx->why, sizeof(rx->why), "no expectation");
		return rx_break(rx);
	}
	want = rx->in_body ? rx->body_len - rx->got : SDP_UROM_OOB_HDR_LEN - rx->got;
	if (n > want) {
		snprintf(rx->why, sizeof(rx->why), "%zu bytes committed, %zu offered", n, want);
		return rx_break(rx);
	}
	rx->got += n;
	if (!rx->in_body) {
		if (rx->got < SDP_UROM_OOB_HDR_LEN)
			return DOCA_ERROR_AGAIN;
		if (sdp_urom_oob_hdr_unpack(rx->hdr_buf, expect, &rx->hdr, rx->why,
					    sizeof(rx->why)) != DOCA_SUCCESS)
			return rx_break(rx);
		rx->got = 0;
		rx->in_body = 1;
		rx->body_len = rx->hdr.body_len;
		rx->body = sdp_urom_oob_ctrl_len(rx->hdr.type) >= 0 ? rx->ctrl : expect->payload;
		if (rx->body_len == 0)
			return rx_complete(rx, msg_p);
		return DOCA_ERROR_AGAIN;
	}
	if (rx->got < rx->body_len)
		return DOCA_ERROR_AGAIN;
	return rx_complete(rx, msg_p);
}
