/*
 * libFuzzer target for the UROM wire format (src/urom/proto). Properties checked on every
 * input: sdp_urom_msg_unpack() never reads past the buffer (ASan), returns SUCCESS,
 * INVALID_VALUE or NOT_SUPPORTED only, NOT_SUPPORTED only for another protocol version, and a
 * message that parses packs back to exactly the same bytes with the same packed size.
 *
 * Built as a libFuzzer binary when the C compiler is clang (tests/fuzz/meson.build); replay.c
 * drives the same function with generated inputs as an ordinary test with any compiler.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doca_log.h"
#include "sdp_urom_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	status = sdp_urom_msg_unpack(size > 0 ? data : empty, size, &msg);
	switch (status) {
	case DOCA_SUCCESS:
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
