/*
 * softdpu internal: the wire format of the TCP out-of-band allgather (src/urom/host/oob_tcp.c,
 * include/softdpu/urom_oob.h). The ONLY code that packs and parses the bytes its peers send;
 * pure (no system calls), fuzzed by tests/fuzz/fuzz_urom_oob.c.
 *
 * A frame is a 16-byte little-endian header, then its body:
 *
 *   u32 magic (SDP_UROM_OOB_MAGIC) | u16 version | u16 type | u32 seq | u32 body length
 *
 * Control frames (HELLO, CHALLENGE, AUTH, ACCEPT, REJECT, FAIL) have one fixed body length
 * each, at most SDP_UROM_OOB_CTRL_MAX bytes. DATA (a rank's contribution to allgather number
 * seq) and RESULT (the root's concatenation) carry opaque bytes whose length the receiver knows
 * in advance: the header must state exactly that length and the body goes straight to where
 * the receiver wants it. So a reader never allocates, and before authentication it accepts
 * only control frames: at most SDP_UROM_OOB_PREAUTH_MAX bytes per frame.
 *
 * Handshake (the keys are derived from the shared secret; MACs are HMAC-SHA256 over a label
 * naming the direction, the claimed rank and size, and both nonces):
 *   rank -> root  HELLO      rank, size, nonce Nr
 *   root -> rank  CHALLENGE  nonce N0, MAC("root", Nr, N0)
 *   rank -> root  AUTH       MAC("rank", N0, Nr)             (only after checking the root's)
 *   root -> rank  ACCEPT | REJECT status
 * then DATA / RESULT per allgather, and FAIL status from either side when the group fails.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_UROM_OOB_WIRE_H_
#define SDP_UROM_OOB_WIRE_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_error.h"

#define SDP_UROM_OOB_MAGIC 0x424f4f53u /* "SOOB" */
#define SDP_UROM_OOB_VERSION 1
#define SDP_UROM_OOB_HDR_LEN 16
#define SDP_UROM_OOB_NONCE_LEN 32
#define SDP_UROM_OOB_MAC_LEN 32
/* The largest control body (CHALLENGE). */
#define SDP_UROM_OOB_CTRL_MAX (SDP_UROM_OOB_NONCE_LEN + SDP_UROM_OOB_MAC_LEN)
/* The largest frame a peer may send before it has authenticated. */
#define SDP_UROM_OOB_PREAUTH_MAX (SDP_UROM_OOB_HDR_LEN + SDP_UROM_OOB_CTRL_MAX)
/* The statuses REJECT and FAIL may carry: DOCA's error codes. */
#define SDP_UROM_OOB_STATUS_MAX DOCA_ERROR_DEVICE_FATAL_ERROR

enum sdp_urom_oob_type {
	SDP_UROM_OOB_HELLO = 1, /* rank -> root: rank, size, nonce */
	SDP_UROM_OOB_CHALLENGE, /* root -> rank: nonce, MAC */
	SDP_UROM_OOB_AUTH,	/* rank -> root: MAC */
	SDP_UROM_OOB_ACCEPT,	/* root -> rank: joined (empty body) */
	SDP_UROM_OOB_REJECT,	/* root -> authenticated rank: refused, status */
	SDP_UROM_OOB_DATA,	/* rank -> root: its contribution to allgather seq */
	SDP_UROM_OOB_RESULT,	/* root -> rank: all contributions of allgather seq, by rank */
	SDP_UROM_OOB_FAIL,	/* either way, authenticated: the group failed, status */
	SDP_UROM_OOB_TYPE_MAX = SDP_UROM_OOB_FAIL,
};

/* The bit of a type in sdp_urom_oob_expect.types. */
#define SDP_UROM_OOB_BIT(type) (1u << (type))

struct sdp_urom_oob_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t seq;
	uint32_t body_len;
};

/* One decoded frame; which member is valid depends on hdr.type (none for ACCEPT, DATA, RESULT). */
struct sdp_urom_oob_msg {
	struct sdp_urom_oob_hdr hdr;
	union {
		struct {
			uint32_t rank; /* in [1, size) */
			uint32_t size; /* >= 2 */
			uint8_t nonce[SDP_UROM_OOB_NONCE_LEN];
		} hello;
		struct {
			uint8_t nonce[SDP_UROM_OOB_NONCE_LEN];
			uint8_t mac[SDP_UROM_OOB_MAC_LEN];
		} challenge;
		struct {
			uint8_t mac[SDP_UROM_OOB_MAC_LEN];
		} auth;
		struct {
			uint32_t status; /* doca_error_t in [1, SDP_UROM_OOB_STATUS_MAX] */
		} reject, fail;
	} u;
};

/*
 * What the receiver accepts as the next frame: the types (SDP_UROM_OOB_BIT of each) and, for
 * DATA and RESULT, the sequence number the header must carry, the exact body length and the
 * buffer of payload_len bytes the body is written to.
 */
struct sdp_urom_oob_expect {
	uint32_t types;
	uint32_t seq;
	size_t payload_len;
	uint8_t *payload;
};

/* The body length of a control frame type; -1 for DATA, RESULT and unknown types. */
int sdp_urom_oob_ctrl_len(uint16_t type);

/*
 * Pack the header of msg (its type and seq; magic and version are filled in) and, for a
 * control frame, its body, into buf. For DATA and RESULT only the header is packed, stating
 * payload_len, and the payload follows it on the stream. Returns the bytes written; 0 when
 * buf is too small, the type unknown, a field out of range, or payload_len too large.
 */
size_t sdp_urom_oob_pack(const struct sdp_urom_oob_msg *msg, size_t payload_len, void *buf,
			 size_t cap);

/*
 * Check a complete header against what the receiver expects. DOCA_SUCCESS, or
 * DOCA_ERROR_INVALID_VALUE with the reason in why (bad magic, another version, a type not
 * expected, a wrong body length or sequence number). Not logged: the caller knows the peer.
 */
doca_error_t sdp_urom_oob_hdr_unpack(const uint8_t hdr_buf[SDP_UROM_OOB_HDR_LEN],
				     const struct sdp_urom_oob_expect *expect,
				     struct sdp_urom_oob_hdr *hdr_p, char *why, size_t why_size);

/* Decode the body of a control frame whose header hdr passed sdp_urom_oob_hdr_unpack(). */
doca_error_t sdp_urom_oob_ctrl_unpack(const struct sdp_urom_oob_hdr *hdr, const uint8_t *body,
				      size_t len, struct sdp_urom_oob_msg *msg_p, char *why,
				      size_t why_size);

/*
 * Reassembly of frames from a byte stream. The owner asks where the next bytes go
 * (sdp_urom_oob_rx_space: never more than what the current header or body still lacks, so a
 * read never crosses a frame boundary), reads into that space and commits what it got. The
 * header is judged when its last byte arrives, against the expectation given to that commit;
 * a control body is held in the reader, a DATA or RESULT body goes to expect->payload, which
 * must stay valid until the frame completes. After an error the reader refuses everything
 * (the stream cannot be resynchronised).
 */
struct sdp_urom_oob_rx {
	uint8_t hdr_buf[SDP_UROM_OOB_HDR_LEN];
	uint8_t ctrl[SDP_UROM_OOB_CTRL_MAX];
	size_t got;		     /* bytes of the current part (header, then body) held */
	int in_body;		     /* the header is in and valid; reading its body */
	uint8_t *body;		     /* where the body goes (ctrl or the expected payload) */
	size_t body_len;	     /* its length */
	struct sdp_urom_oob_hdr hdr; /* valid while in_body */
	int broken;
	char why[128]; /* why the stream broke */
};

void sdp_urom_oob_rx_init(struct sdp_urom_oob_rx *rx);

/* Where the next bytes go. DOCA_ERROR_INVALID_VALUE once the stream is broken. */
doca_error_t sdp_urom_oob_rx_space(struct sdp_urom_oob_rx *rx, uint8_t **space_p, size_t *size_p);

/*
 * n bytes (at most what rx_space offered) were written into the space. DOCA_ERROR_AGAIN while
 * the frame is incomplete; DOCA_SUCCESS when it is complete: *msg_p holds its header and, for a
 * control frame, its fields (a DATA or RESULT body is in expect->payload); the next commit
 * starts a new frame. DOCA_ERROR_INVALID_VALUE for a frame the expectation refuses or a
 * malformed body (reason in rx->why; the reader is broken from then on).
 */
doca_error_t sdp_urom_oob_rx_commit(struct sdp_urom_oob_rx *rx, size_t n,
				    const struct sdp_urom_oob_expect *expect,
				    struct sdp_urom_oob_msg *msg_p);

/* "HELLO", "DATA", ... for logs; "UNKNOWN" otherwise. */
const char *sdp_urom_oob_type_name(uint16_t type);

#endif /* SDP_UROM_OOB_WIRE_H_ */
