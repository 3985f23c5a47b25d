/*
 * libFuzzer target for the out-of-band allgather's frame reader (src/urom/proto/
 * sdp_urom_oob_wire.c), as src/urom/host/oob_tcp.c runs it on bytes from a peer.
 *
 * Input: byte 0 chooses how the stream is cut into reads (1..64 bytes), byte 1 the frame types
 * expected (one bit per type), byte 2 the payload length of DATA and RESULT (0..255, written
 * into an exact-size heap buffer), byte 3 their sequence number, byte 4 the mode:
 *   - raw (bit 0 clear): the rest is the byte stream;
 *   - built (bit 0 set): the rest is a program; each step packs one valid frame of the type and
 *     with the field values it names (DATA and RESULT of the expected length and number), and
 *     with bit 1 set, a later byte changes one byte of the stream.
 * Properties checked: no access outside the buffers (ASan); the reader never offers an empty
 * space or more than the current part lacks; every frame handed out is of an expected type,
 * has its type's body length (DATA/RESULT: exactly the expected one and number) and fields in
 * range (a status in DOCA's range, a HELLO rank in [1, size)); once it refuses a frame it
 * refuses everything after; unchanged built streams decode to exactly what was packed.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sdp_urom_oob_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FRAMES 64
#define STREAM_MAX (MAX_FRAMES * (SDP_UROM_OOB_HDR_LEN + 256))

static void check_msg(const struct sdp_urom_oob_msg *m, const struct sdp_urom_oob_expect *ex)
{
	uint16_t t = m->hdr.type;
	int ctrl = sdp_urom_oob_ctrl_len(t);

	if (t == 0 || t > SDP_UROM_OOB_TYPE_MAX || (ex->types & SDP_UROM_OOB_BIT(t)) == 0)
		abort();
	if (m->hdr.magic != SDP_UROM_OOB_MAGIC || m->hdr.version != SDP_UROM_OOB_VERSION)
		abort();
	if (ctrl >= 0 && m->hdr.body_len != (uint32_t)ctrl)
		abort();
	if (ctrl < 0 && (m->hdr.body_len != ex->payload_len || m->hdr.seq != ex->seq))
		abort();
	if (t == SDP_UROM_OOB_HELLO &&
	    (m->u.hello.size < 2 || m->u.hello.rank == 0 || m->u.hello.rank >= m->u.hello.size))
		abort();
	if ((t == SDP_UROM_OOB_REJECT || t == SDP_UROM_OOB_FAIL) &&
	    (m->u.fail.status == 0 || m->u.fail.status > SDP_UROM_OOB_STATUS_MAX))
		abort();
}

/* The fields of a and b that their type has are equal. */
static int same_msg(const struct sdp_urom_oob_msg *a, const struct sdp_urom_oob_msg *b)
{
	if (a->hdr.type != b->hdr.type)
		return 0;
	switch (a->hdr.type) {
	case SDP_UROM_OOB_HELLO:
		return a->u.hello.rank == b->u.hello.rank && a->u.hello.size == b->u.hello.size &&
		       memcmp(a->u.hello.nonce, b->u.hello.nonce, SDP_UROM_OOB_NONCE_LEN) == 0;
	case SDP_UROM_OOB_CHALLENGE:
		return memcmp(&a->u.challenge, &b->u.challenge, sizeof(a->u.challenge)) == 0;
	case SDP_UROM_OOB_AUTH:
		return memcmp(a->u.auth.mac, b->u.auth.mac, SDP_UROM_OOB_MAC_LEN) == 0;
	case SDP_UROM_OOB_REJECT:
	case SDP_UROM_OOB_FAIL:
		return a->u.fail.status == b->u.fail.status;
	default:
		return a->hdr.seq == b->hdr.seq;
	}
}

/* Pack frames as the program in p[0..n) says; returns the stream length. */
static size_t build(const uint8_t *p, size_t n, const struct sdp_urom_oob_expect *ex, uint8_t *out,
		    struct sdp_urom_oob_msg *msgs, uint8_t *steps, size_t *n_msgs)
{
	size_t pos = 0, len = 0;

	*n_msgs = 0;
	while (pos < n && *n_msgs < MAX_FRAMES) {
		struct sdp_urom_oob_msg m;
		uint8_t step = p[pos++];
		size_t k;

		memset(&m, 0, sizeof(m));
		m.hdr.type = (uint16_t)(1 + step % SDP_UROM_OOB_TYPE_MAX);
		m.hdr.seq = ex->seq;
		for (size_t i = 0; i < sizeof(m.u); i++)
			((uint8_t *)&m.u)[i] = pos < n ? p[pos++] : (uint8_t)i;
		m.u.hello.size = 2 + m.u.hello.size % 1000;
		m.u.hello.rank = 1 + m.u.hello.rank % (m.u.hello.size - 1);
		if (m.hdr.type == SDP_UROM_OOB_REJECT || m.hdr.type == SDP_UROM_OOB_FAIL)
			m.u.fail.status = 1 + m.u.fail.status % SDP_UROM_OOB_STATUS_MAX;
		k = sdp_urom_oob_pack(&m, ex->payload_len, out + len, STREAM_MAX - len);
		if (k == 0)
			abort(); /* every frame built here is valid and fits */
		len += k;
		if (sdp_urom_oob_ctrl_len(m.hdr.type) < 0) {
			for (size_t i = 0; i < ex->payload_len; i++)
				out[len++] = (uint8_t)(step + i);
		}
		steps[*n_msgs] = step;
		msgs[(*n_msgs)++] = m;
	}
	return len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t stream[STREAM_MAX];
	static struct sdp_urom_oob_msg built[MAX_FRAMES];
	static uint8_t steps[MAX_FRAMES];
	struct sdp_urom_oob_expect ex;
	struct sdp_urom_oob_rx rx;
	size_t chunk, len, pos = 0, n_built = 0, n_got = 0;
	int built_mode, mutated = 0, broken = 0;
	uint8_t *payload;

	if (size < 5)
		return 0;
	chunk = 1 + data[0] % 64;
	memset(&ex, 0, sizeof(ex));
	ex.types = (uint32_t)data[1] << 1;
	ex.payload_len = data[2];
	ex.seq = data[3];
	built_mode = data[4] & 1;
	payload = malloc(ex.payload_len > 0 ? ex.payload_len : 1);
	if (payload == NULL)
		return 0;
	ex.payload = ex.payload_len > 0 ? payload : NULL;
	if (built_mode) {
		ex.types = 0x1feu; /* every type */
		len = build(data + 5, size - 5, &ex, stream, built, steps, &n_built);
		if ((data[4] & 2) && len > 0 && size > 6) {
			stream[data[5] % len] ^= (uint8_t)(data[size - 1] | 1);
			mutated = 1;
		}
	} else {
		len = size - 5;
		memcpy(stream, data + 5, len < sizeof(stream) ? len : sizeof(stream));
		if (len > sizeof(stream))
			len = sizeof(stream);
	}

	sdp_urom_oob_rx_init(&rx);
	while (pos < len) {
		struct sdp_urom_oob_msg m;
		uint8_t *space;
		size_t room, n;
		doca_error_t st;

		if (sdp_urom_oob_rx_space(&rx, &space, &room) != DOCA_SUCCESS) {
			broken = 1;
			break;
		}
		if (room == 0 || room > (rx.in_body ? rx.body_len : (size_t)SDP_UROM_OOB_HDR_LEN))
			abort();
		n = len - pos < chunk ? len - pos : chunk;
		if (n > room)
			n = room;
		memcpy(space, stream + pos, n);
		pos += n;
		st = sdp_urom_oob_rx_commit(&rx, n, &ex, &m);
		if (st == DOCA_ERROR_AGAIN)
			continue;
		if (st != DOCA_SUCCESS) {
			if (st != DOCA_ERROR_INVALID_VALUE || !rx.broken || rx.why[0] == '\0')
				abort();
			broken = 1;
			break;
		}
		check_msg(&m, &ex);
		if (built_mode && !mutated) {
			if (n_got >= n_built || !same_msg(&m, &built[n_got]))
				abort();
			/* A DATA or RESULT body lands in the payload buffer unchanged. */
			if (sdp_urom_oob_ctrl_len(m.hdr.type) < 0)
				for (size_t i = 0; i < ex.payload_len; i++)
					if (payload[i] != (uint8_t)(steps[n_got] + i))
						abort();
		}
		n_got++;
	}
	if (built_mode && !mutated && (broken || n_got != n_built))
		abort(); /* a valid stream decodes completely */
	if (broken) {
		struct sdp_urom_oob_msg m;
		uint8_t *space;
		size_t room;

		if (sdp_urom_oob_rx_space(&rx, &space, &room) != DOCA_ERROR_INVALID_VALUE ||
		    sdp_urom_oob_rx_commit(&rx, 0, &ex, &m) != DOCA_ERROR_INVALID_VALUE)
			abort();
	}
	free(payload);
	return 0;
}
