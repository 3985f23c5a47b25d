/*
 * softdpu internal: the UROM control channel, softdpu's own network-facing port.
 *
 * The offload service listens on a plain TCP socket (never UCX's connection manager, whose
 * parser asserts on junk). Hosts and the softdpu CLI connect to it; every byte that arrives
 * goes through the frame reassembler and the message parser of src/urom/proto (both fuzzed)
 * and nothing else. The first frames are the challenge-response handshake
 * (sdp_urom_auth.h), bounded by SDP_UROM_FRAME_PREAUTH_MAX; only an authenticated peer may send
 * longer frames, and only then does the service hand out UCX worker addresses (SPAWN_REPLY),
 * from which the host creates its UCX endpoints to the worker.
 *
 * A struct sdp_urom_chan owns one connected, non-blocking stream socket: a receive reassembler
 * and a bounded output queue. Sends never block: what the socket does not take at once waits
 * in the queue and goes out with sdp_urom_chan_flush() (poll for POLLOUT while
 * sdp_urom_chan_out_pending()); a queue past its bound fails the send with DOCA_ERROR_IO_FAILED
 * (the peer does not read). Used by one thread at a time.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_UROM_CHAN_H_
#define SDP_UROM_CHAN_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "doca_error.h"
#include "sdp_urom_frame.h"
#include "sdp_urom_proto.h"

/* Output a channel queues before a send fails (the peer does not read). */
#define SDP_UROM_CHAN_MAX_QUEUE (8u << 20)
/* Control frames an authenticated host may send: the negotiated message size, never less than
 * this (a SPAWN with its environment). */
#define SDP_UROM_CTRL_FRAME_MIN (64u << 10)
/* Frames an authenticated service may send to a host or the CLI (status documents). */
#define SDP_UROM_CHAN_MAX_FROM_SERVICE (16u << 20)

struct sdp_urom_chan {
	int fd;
	struct sdp_urom_rx rx;
	uint8_t *out;
	size_t out_len, out_off, out_cap;
	int eof; /* the peer closed or reset its end */
};

/*
 * One complete frame arrived. The bytes are valid during the call only. Return nonzero to stop
 * reading (the caller closes the channel, say).
 */
typedef int (*sdp_urom_chan_frame_func_t)(void *arg, const uint8_t *frame, size_t len);

/* Take ownership of a connected socket (made non-blocking here). fd is closed by fini. */
doca_error_t sdp_urom_chan_init(struct sdp_urom_chan *chan, int fd, size_t max_frame);
void sdp_urom_chan_fini(struct sdp_urom_chan *chan);

/* The largest frame the peer may send from now on. */
void sdp_urom_chan_set_max_frame(struct sdp_urom_chan *chan, size_t max_frame);

/*
 * Read what the socket holds (at most a few reads: callers come back on the next readiness)
 * and hand each complete frame to cb. DOCA_SUCCESS (*made_p nonzero when any byte came),
 * DOCA_ERROR_NOT_CONNECTED once the peer closed or reset, DOCA_ERROR_INVALID_VALUE for a frame
 * with a bad magic or over the bound (the channel is then unusable), DOCA_ERROR_IO_FAILED
 * (logged) for another socket error. Frames before the closing or the bad one are delivered.
 */
doca_error_t sdp_urom_chan_read(struct sdp_urom_chan *chan, sdp_urom_chan_frame_func_t cb,
				void *arg, int *made_p);

/* Pack msg and queue it, writing what the socket takes now. Errors are logged. */
doca_error_t sdp_urom_chan_send(struct sdp_urom_chan *chan, const struct sdp_urom_msg *msg);

/*
 * Send msg and wait, at most timeout_ms, until the socket took all of it (for peers that must
 * not go on before their request is out: hosts and the CLI; never the service). DOCA_SUCCESS,
 * DOCA_ERROR_IO_FAILED when the time ran out (the peer does not read), NOT_CONNECTED, or what
 * sdp_urom_chan_send() refused with.
 */
doca_error_t sdp_urom_chan_send_wait(struct sdp_urom_chan *chan, const struct sdp_urom_msg *msg,
				     int timeout_ms);

/* Write queued output; DOCA_SUCCESS when the queue is empty, DOCA_ERROR_AGAIN when some is
 * left, DOCA_ERROR_NOT_CONNECTED when the peer is gone. */
doca_error_t sdp_urom_chan_flush(struct sdp_urom_chan *chan);
int sdp_urom_chan_out_pending(const struct sdp_urom_chan *chan);

/*
 * Wait until the socket is readable (or, with queued output, writable: the output is flushed)
 * or timeout_ms passes. DOCA_SUCCESS when readable, DOCA_ERROR_TIME_OUT, NOT_CONNECTED.
 */
doca_error_t sdp_urom_chan_wait(struct sdp_urom_chan *chan, int timeout_ms);

/*
 * Connect to sa within timeout_ms (non-blocking connect + poll). NOT_CONNECTED (cause in
 * errbuf: "Connection refused", "timed out") when no connection is made; not logged.
 */
doca_error_t sdp_urom_chan_connect(const struct sockaddr *sa, socklen_t sa_len, int timeout_ms,
				   int *fd_p, char *errbuf, size_t errbuf_size);

/*
 * Listen on sa (SO_REUSEADDR, so a restart binds at once after a close; non-blocking,
 * close-on-exec). *port_p gets the bound port. DOCA_ERROR_IN_USE when the address is taken;
 * logged.
 */
doca_error_t sdp_urom_chan_listen(const struct sockaddr *sa, socklen_t sa_len, int *fd_p,
				  uint16_t *port_p);

/* "ip:port" of a socket address. */
void sdp_urom_sockaddr_str(const struct sockaddr *sa, char *buf, size_t size);

#endif /* SDP_UROM_CHAN_H_ */
