/*
 * softdpu internal: framing of UROM messages on a byte stream (the service's control channel,
 * a TCP connection). A frame is one packed message: the 20-byte header of sdp_urom_proto.h,
 * whose body length says where the frame ends, then the body. Nothing else is on the stream.
 *
 * struct sdp_urom_rx reassembles frames from bytes as they arrive, with a bound on the frame
 * length that the owner sets and may raise once the peer has authenticated. Memory: the buffer
 * starts at SDP_UROM_RX_INITIAL bytes (or the bound, if smaller) and only grows, to the length
 * of a frame whose header has arrived and passed the checks (magic, length bound), never past
 * the bound; so a peer that has not authenticated makes the reader allocate at most the
 * pre-authentication bound. Pure code (no system calls): fuzzed together with the message
 * parser (tests/fuzz).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_UROM_FRAME_H_
#define SDP_UROM_FRAME_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_error.h"

/* Frames a peer may send before it has authenticated (HELLO, AUTH: a few hundred bytes). */
#define SDP_UROM_FRAME_PREAUTH_MAX 1024
/* The buffer a reader starts with. */
#define SDP_UROM_RX_INITIAL 4096

/*
 * The length of the frame that starts at buf, of which avail bytes are there. DOCA_ERROR_AGAIN
 * while the header is incomplete; DOCA_ERROR_INVALID_VALUE for a bad magic or a frame longer
 * than max_frame (not logged: the caller knows who sent it). The version and type are not
 * judged here: sdp_urom_msg_unpack() does that with the whole frame.
 */
doca_error_t sdp_urom_frame_len(const void *buf, size_t avail, size_t max_frame, size_t *len_p);

struct sdp_urom_rx {
	uint8_t *buf;
	size_t cap;	  /* allocated */
	size_t off;	  /* first byte not yet handed out */
	size_t len;	  /* bytes held, from buf[0] (buf[off..len) is unread) */
	size_t pending;	  /* length of the frame handed out last, dropped by the next call */
	size_t max_frame; /* current bound */
	int broken;	  /* a bad frame was seen: the stream cannot be resynchronised */
};

doca_error_t sdp_urom_rx_init(struct sdp_urom_rx *rx, size_t max_frame);
void sdp_urom_rx_fini(struct sdp_urom_rx *rx);

/* Raise (or lower, for frames not yet begun) the bound. */
void sdp_urom_rx_set_max(struct sdp_urom_rx *rx, size_t max_frame);

/*
 * Where the next bytes go: *space_p and *size_p (at least 1 byte unless an error is returned).
 * Grows the buffer to the length of the frame in progress when its header is in and valid.
 * DOCA_ERROR_INVALID_VALUE once the stream is broken, DOCA_ERROR_NO_MEMORY (logged) when the
 * buffer cannot grow.
 */
doca_error_t sdp_urom_rx_space(struct sdp_urom_rx *rx, uint8_t **space_p, size_t *size_p);

/* n bytes were written into the space. */
void sdp_urom_rx_commit(struct sdp_urom_rx *rx, size_t n);

/*
 * The next complete frame: *frame_p / *len_p point into the buffer and stay valid until the
 * next call of any sdp_urom_rx_* function. DOCA_ERROR_AGAIN when no complete frame is held,
 * DOCA_ERROR_INVALID_VALUE for a bad frame (the stream is then broken for good).
 * Each successful call consumes the frame returned by the previous one.
 */
doca_error_t sdp_urom_rx_next(struct sdp_urom_rx *rx, const uint8_t **frame_p, size_t *len_p);

#endif /* SDP_UROM_FRAME_H_ */
