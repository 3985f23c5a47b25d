/*
 * libFuzzer target for the UROM wire format (src/urom/proto). Properties checked on every
 * input: sdp_urom_msg_unpack() never reads past the buffer (ASan), returns SUCCESS,
 * INVALID_VALUE or NOT_SUPPORTED only, NOT_SUPPORTED only for another protocol version, and a
 * message that parses packs back to exactly the same bytes with the same packed size. The same
 * input is also read as a domain member record and as a host record (sdp_urom_dom_*): a record
 * that parses packs back to the same bytes (a host record: up to its zero padding), and the
 * iterators visit exactly the counts the parser announced. The input read as several messages
 * back to back (sdp_urom_msg_next, protocol 2) is stepped through within its bounds. A
 * SW_STATS that parses keeps the bounds the service relies on (counts in order, strings
 * printable and within their maxima).
 *
 * Built as a libFuzzer binary when the C compiler is clang (tests/fuzz/meson.build); replay.c
 * drives the same function with generated inputs as an ordinary test with any compiler.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "doca_log.h"
#include "sdp_urom_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_dom(const uint8_t *data, size_t size)
{
	static struct sdp_urom_dom_seg segs[SDP_UROM_DOM_MAX_SEGS];
	static struct sdp_urom_bytes members[SDP_UROM_DOM_MAX_MEMBERS];
	static struct sdp_urom_dom_member m;
	static uint8_t out[1 << 17];
	const uint8_t *raw;
	size_t len, pos = 0, raw_len;
	uint32_t n = 0, count;

	if (sdp_urom_dom_member_unpack_why(data, size, &m, NULL, 0) == DOCA_SUCCESS) {
		while (n < SDP_UROM_DOM_MAX_SEGS && sdp_urom_dom_seg_next(&m, &pos, &segs[n]))
			n++;
		if (n != m.num_segs || pos != m.segs_len)
			abort(); /* the iterator and the parser disagree */
		if (sdp_urom_dom_member_pack(&m, segs, out, sizeof(out), &len) != DOCA_SUCCESS ||
		    len != size || memcmp(out, data, size) != 0) {
			fprintf(stderr, "member pack len %zu size %zu\n", len, size);
			abort();
		}
	}
	if (sdp_urom_dom_host_unpack_why(data, size, &count, &raw, &raw_len, NULL, 0) ==
	    DOCA_SUCCESS) {
		n = 0;
		pos = 0;
		while (n < SDP_UROM_DOM_MAX_MEMBERS &&
		       sdp_urom_dom_host_next(raw, raw_len, &pos, &members[n]))
			n++;
		if (n != count || pos != raw_len) {
			fprintf(stderr, "n %u count %u pos %zu raw_len %zu\n", n, count, pos,
				raw_len);
			abort();
		}
		if (sdp_urom_dom_host_pack(members, n, out, sizeof(out), &len) != DOCA_SUCCESS ||
		    len > size || memcmp(out, data, len) != 0) {
			fprintf(stderr, "host pack len %zu size %zu\n", len, size);
			abort();
		}
	}
}

static int fuzz_text_ok(const struct sdp_urom_bytes *b, uint32_t max)
{
	if (b->len > max || (b->len > 0 && b->data == NULL))
		return 0;
	for (uint32_t i = 0; i < b->len; i++)
		if (b->data[i] < 0x20 || b->data[i] > 0x7e)
			return 0;
	return 1;
}

static void fuzz_stats(const struct sdp_urom_msg *msg)
{
	const typeof(msg->u.sw_stats) *st = &msg->u.sw_stats;

	if (st->cmds_refused > st->cmds || st->notifs_error > st->notifs ||
	    st->hosts_connected > st->hosts_total ||
	    !fuzz_text_ok(&st->ucx_version, SDP_UROM_STATS_VERSION_MAX) ||
	    !fuzz_text_ok(&st->ucx_tls, SDP_UROM_STATS_STR_MAX) ||
	    !fuzz_text_ok(&st->ucx_net_devices, SDP_UROM_STATS_STR_MAX) ||
	    !fuzz_text_ok(&st->ucx_resources, SDP_UROM_STATS_STR_MAX))
		abort(); /* a SW_STATS out of bounds parsed */
}

/*
 * The input as an active message carrying several messages (protocol 2): sdp_urom_msg_next()
 * only ever steps forward within the buffer, by at least a header, and a message that parses
 * on its own is one step of exactly its size.
 */
static void fuzz_batch(const uint8_t *data, size_t size)
{
	struct sdp_urom_msg msg;
	size_t pos = 0, n;

	while (pos < size &&
	       sdp_urom_msg_next(data + pos, size - pos, &n, NULL, 0) == DOCA_SUCCESS) {
		if (n < SDP_UROM_HDR_LEN || n > size - pos)
			abort();				/* a step out of bounds */
		(void)sdp_urom_msg_unpack(data + pos, n, &msg); /* within its step (ASan) */
		pos += n;
	}
	if (size > 0 && sdp_urom_msg_unpack(data, size, &msg) == DOCA_SUCCESS &&
	    (sdp_urom_msg_next(data, size, &n, NULL, 0) != DOCA_SUCCESS || n != size))
		abort(); /* a whole message is not one step */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet;
	static uint8_t out[1 << 17];
	struct sdp_urom_msg msg;
	doca_error_t status;
	size_t len;
	/* Non-NULL even for an empty input. */
	static const uint8_t empty[1];

	if (!quiet) {
		/* Every malformed input is logged by unpack: far too many to print. */
		(void)doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
		quiet = 1;
	}
	fuzz_dom(size > 0 ? data : empty, size);
	fuzz_batch(size > 0 ? data : empty, size);
	status = sdp_urom_msg_unpack(size > 0 ? data : empty, size, &msg);
	switch (status) {
	case DOCA_SUCCESS:
		if (msg.hdr.type == SDP_UROM_MSG_SW_STATS)
			fuzz_stats(&msg);
		if (sdp_urom_msg_pack(&msg, out, sizeof(out), &len) != DOCA_SUCCESS ||
		    len != size || memcmp(out, data, size) != 0 ||
		    sdp_urom_msg_packed_size(&msg) != size)
			abort(); /* parse and pack disagree */
		break;
	case DOCA_ERROR_NOT_SUPPORTED:
		if (size < SDP_UROM_HDR_LEN || msg.hdr.magic != SDP_UROM_MAGIC ||
		    msg.hdr.version == SDP_UROM_PROTO_VERSION)
			abort(); /* NOT_SUPPORTED must mean "well-formed header, other version" */
		break;
	case DOCA_ERROR_INVALID_VALUE:
		break;
	default:
		abort();
	}
	return 0;
}
