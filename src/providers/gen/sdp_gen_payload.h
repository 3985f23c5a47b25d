/*
 * softdpu internal: what the `gen` provider puts in the frames it generates, so a receiver (a
 * test, a benchmark, the gen sink itself) can prove it saw each generated frame exactly once and
 * intact; and the counters of the gen TX sink.
 *
 * A gen frame is Ethernet II (dst = the device's MAC, src = 02:67:<hash of the name>, type
 * 0x0800), IPv4 (20-byte header, no options, DF, TTL 64, id = low 16 bits of seq, valid header
 * checksum), UDP (source port = sport + flow, destination port = dport, valid checksum, never 0)
 * and this payload; multi-byte fields in network byte order (big endian):
 *
 *   offset  size  field
 *        0     4  check: sdp_gen_check() of payload bytes [4, len)
 *        4     4  magic: SDP_GEN_MAGIC
 *        8     8  seq:   0, 1, 2, ... in generation order, from 0 at each port_open
 *       16     2  flow:  seq % flows
 *       18     -  fill:  byte at payload offset k is (uint8_t)(seq + k)
 *
 * The smallest frame, 60 bytes, is 14 + 20 + 8 + 18: headers and payload header, no fill.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_GEN_PAYLOAD_H_
#define SDP_GEN_PAYLOAD_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "doca_dev.h"
#include "doca_error.h"
#include "softdpu/sdp_pkt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SDP_GEN_MAGIC 0x53445047u /* "SDPG" */
#define SDP_GEN_OFF_CHECK 0
#define SDP_GEN_OFF_MAGIC 4
#define SDP_GEN_OFF_SEQ 8
#define SDP_GEN_OFF_FLOW 16
#define SDP_GEN_HDR_LEN 18			/* the payload header; the fill follows */
#define SDP_GEN_L2L3L4_LEN SDP_PKT_UDP4_PAYLOAD /* Ethernet 14 + IPv4 20 + UDP 8 */
#define SDP_GEN_FRAME_MIN 60
#define SDP_GEN_FRAME_MAX 9000

/*
 * The payload check: a Fletcher-style sum over the bytes read as 32-bit little-endian words (a
 * last partial word padded with zero bytes): a += word, b += a, both 64-bit, starting from 0;
 * the check is the low 32 bits of a ^ b ^ (b >> 32). b makes it depend on word order.
 */
static inline uint32_t sdp_gen_check(const uint8_t *data, size_t len)
{
	uint64_t a = 0, b = 0;
	size_t i = 0;

	for (; i + 4 <= len; i += 4) {
		uint32_t w = (uint32_t)data[i] | (uint32_t)data[i + 1] << 8 |
			     (uint32_t)data[i + 2] << 16 | (uint32_t)data[i + 3] << 24;

		a += w;
		b += a;
	}
	if (i < len) {
		uint32_t w = 0;

		for (size_t k = 0; i + k < len; k++)
			w |= (uint32_t)data[i + k] << (8 * k);
		a += w;
		b += a;
	}
	return (uint32_t)(a ^ b ^ (b >> 32));
}

/* What the gen TX sink has counted on one open device (from its dev_open to its dev_close). */
struct sdp_gen_sink_counters {
	uint64_t frames;  /* every frame tx_burst took */
	uint64_t bytes;	  /* their lengths */
	uint64_t gen_ok;  /* frames carrying an intact gen payload (all checks above hold) */
	uint64_t gen_bad; /* gen magic present, but a checksum, the check or the fill fails */
};

/*
 * Exported by sdp_provider_gen.so (look it up with dlsym on the loaded module, e.g.
 * dlopen(sdp_provider_get_path(i), RTLD_NOW | RTLD_NOLOAD)): the sink counters of an open gen
 * device. DOCA_ERROR_INVALID_VALUE (logged) for a NULL argument or a device of another provider.
 */
#define SDP_GEN_SINK_COUNTERS_SYMBOL "sdp_gen_sink_counters"
typedef doca_error_t (*sdp_gen_sink_counters_func_t)(const struct doca_dev *dev,
						     struct sdp_gen_sink_counters *counters_p);

#ifdef __cplusplus
}
#endif

#endif /* SDP_GEN_PAYLOAD_H_ */
