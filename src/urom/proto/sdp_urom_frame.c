/*
 * softdpu: UROM frames on a byte stream (see sdp_urom_frame.h).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_urom_frame.h"

#include <stdlib.h>
#include <string.h>

#include "sdp_log.h"
#include "sdp_urom_proto.h"

SDP_LOG_COMPONENT("urom_proto");

static uint32_t frame_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

doca_error_t sdp_urom_frame_len(const void *buf, size_t avail, size_t max_frame, size_t *len_p)
{
	const uint8_t *p = buf;
	uint64_t len;

	/* Judge the magic as soon as its 4 bytes are in: junk is refused without waiting. */
	if (avail >= 4 && frame_le32(p) != SDP_UROM_MAGIC)
		return DOCA_ERROR_INVALID_VALUE;
	if (avail < SDP_UROM_HDR_LEN)
		return DOCA_ERROR_AGAIN;
	len = (uint64_t)SDP_UROM_HDR_LEN + frame_le32(p + 16);
	if (len > max_frame)
		return DOCA_ERROR_INVALID_VALUE;
	*len_p = (size_t)len;
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_rx_init(struct sdp_urom_rx *rx, size_t max_frame)
{
	memset(rx, 0, sizeof(*rx));
	rx->max_frame = max_frame < SDP_UROM_HDR_LEN ? SDP_UROM_HDR_LEN : max_frame;
	rx->cap = rx->max_frame < SDP_UROM_RX_INITIAL ? rx->max_frame : SDP_UROM_RX_INITIAL;
	rx->buf = malloc(rx->cap);
	if (rx->buf == NULL) {
		sdp_error("failed to allocate a %zu-byte receive buffer", rx->cap);
		rx->cap = 0;
		return DOCA_ERROR_NO_MEMORY;
	}
	return DOCA_SUCCESS;
}

void sdp_urom_rx_fini(struct sdp_urom_rx *rx)
{
	free(rx->buf);
	memset(rx, 0, sizeof(*rx));
}

void sdp_urom_rx_set_max(struct sdp_urom_rx *rx, size_t max_frame)
{
	rx->max_frame = max_frame < SDP_UROM_HDR_LEN ? SDP_UROM_HDR_LEN : max_frame;
}

/* Drop the frame handed out last; move what is unread to the front. */
static void rx_compact(struct sdp_urom_rx *rx)
{
	rx->off += rx->pending;
	rx->pending = 0;
	if (rx->off == 0)
		return;
	if (rx->len > rx->off)
		memmove(rx->buf, rx->buf + rx->off, rx->len - rx->off);
	rx->len -= rx->off;
	rx->off = 0;
}

doca_error_t sdp_urom_rx_space(struct sdp_urom_rx *rx, uint8_t **space_p, size_t *size_p)
{
	size_t need = SDP_UROM_HDR_LEN, flen;
	doca_error_t status;

	if (rx->broken || rx->buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	rx_compact(rx);
	status = sdp_urom_frame_len(rx->buf, rx->len, rx->max_frame, &flen);
	if (status == DOCA_ERROR_INVALID_VALUE) {
		rx->broken = 1;
		return status;
	}
	if (status == DOCA_SUCCESS)
		need = flen;
	if (need > rx->cap) {
		uint8_t *nb = realloc(rx->buf, need);

		if (nb == NULL) {
			sdp_error("failed to grow a receive buffer to %zu bytes", need);
			return DOCA_ERROR_NO_MEMORY;
		}
		rx->buf = nb;
		rx->cap = need;
	}
	if (rx->len == rx->cap) {
		/* A whole frame is held and fills the buffer: the caller must take it first. */
		return DOCA_ERROR_AGAIN;
	}
	*space_p = rx->buf + rx->len;
	*size_p = rx->cap - rx->len;
	return DOCA_SUCCESS;
}

void sdp_urom_rx_commit(struct sdp_urom_rx *rx, size_t n)
{
	if (n > rx->cap - rx->len)
		n = rx->cap - rx->len;
	rx->len += n;
}

doca_error_t sdp_urom_rx_next(struct sdp_urom_rx *rx, const uint8_t **frame_p, size_t *len_p)
{
	size_t flen;
	doca_error_t status;

	if (rx->broken || rx->buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	rx->off += rx->pending;
	rx->pending = 0;
	status = sdp_urom_frame_len(rx->buf + rx->off, rx->len - rx->off, rx->max_frame, &flen);
	if (status == DOCA_ERROR_INVALID_VALUE) {
		rx->broken = 1;
		return status;
	}
	if (status != DOCA_SUCCESS || rx->len - rx->off < flen)
		return DOCA_ERROR_AGAIN;
	*frame_p = rx->buf + rx->off;
	*len_p = flen;
	rx->pending = flen;
	return DOCA_SUCCESS;
}
