/*
 * libFuzzer target for the control channel's frame reassembler (src/urom/proto/sdp_urom_frame.c)
 * feeding the message parser, as the service runs them on bytes from an unauthenticated peer.
 *
 * The first two input bytes choose how the rest is cut into reads (chunk sizes 1..256) and the
 * frame bound (the pre-authentication bound or a larger one); the rest is the byte stream.
 * Properties checked: no read outside the buffers (ASan); every frame handed out starts with the
 * magic, is at least a header long, is exactly header + body length and no longer than the
 * bound; the buffer never grows past max(bound, SDP_UROM_RX_INITIAL); once the reassembler
 * refuses a frame it refuses everything after; sdp_urom_msg_unpack() answers each frame with
 * SUCCESS, INVALID_VALUE or NOT_SUPPORTED only.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doca_log.h"
#include "sdp_urom_frame.h"
#include "sdp_urom_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void check_frame(const uint8_t *f, size_t len, size_t max_frame)
{
	struct sdp_urom_msg msg;
	doca_error_t st;

	if (len < SDP_UROM_HDR_LEN || len > max_frame || le32(f) != SDP_UROM_MAGIC ||
	    len != SDP_UROM_HDR_LEN + (size_t)le32(f + 16))
		abort();
	st = sdp_urom_msg_unpack(f, len, &msg);
	if (st != DOCA_SUCCESS && st != DOCA_ERROR_INVALID_VALUE && st != DOCA_ERROR_NOT_SUPPORTED)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet;
	struct sdp_urom_rx rx;
	size_t chunk, max_frame, pos = 2, cap_bound;
	int broken = 0;

	if (!quiet) {
		(void)doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
		quiet = 1;
	}
	if (size < 2)
		return 0;
	chunk = 1 + data[0];
	max_frame = (data[1] & 1) ? SDP_UROM_FRAME_PREAUTH_MAX : (64u << 10);
	cap_bound = max_frame > SDP_UROM_RX_INITIAL ? max_frame : SDP_UROM_RX_INITIAL;
	if (sdp_urom_rx_init(&rx, max_frame) != DOCA_SUCCESS)
		return 0;
	while (pos < size) {
		const uint8_t *frame;
		uint8_t *space;
		size_t room, n, flen;
		doca_error_t st = sdp_urom_rx_space(&rx, &space, &room);

		if (st == DOCA_ERROR_INVALID_VALUE) {
			broken = 1;
			break;
		}
		if (st == DOCA_SUCCESS) {
			n = size - pos < chunk ? size - pos : chunk;
			if (n > room)
				n = room;
			memcpy(space, data + pos, n);
			sdp_urom_rx_commit(&rx, n);
			pos += n;
		} else if (st != DOCA_ERROR_AGAIN) {
			abort();
		}
		while ((st = sdp_urom_rx_next(&rx, &frame, &flen)) == DOCA_SUCCESS)
			check_frame(frame, flen, max_frame);
		if (st == DOCA_ERROR_INVALID_VALUE) {
			broken = 1;
			break;
		}
		if (rx.cap > cap_bound)
			abort(); /* grew past the bound */
	}
	if (broken) {
		const uint8_t *frame;
		uint8_t *space;
		size_t n;

		/* A broken stream stays broken. */
		if (sdp_urom_rx_next(&rx, &frame, &n) != DOCA_ERROR_INVALID_VALUE ||
		    sdp_urom_rx_space(&rx, &space, &n) != DOCA_ERROR_INVALID_VALUE)
			abort();
	}
	sdp_urom_rx_fini(&rx);
	return 0;
}
