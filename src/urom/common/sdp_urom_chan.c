/*
 * softdpu: the UROM control channel over a stream socket (see sdp_urom_chan.h).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_urom_chan.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sdp_log.h"

SDP_LOG_COMPONENT("urom_chan");

/* Reads per sdp_urom_chan_read call: the event loop comes back for more. */
#define CHAN_READS_PER_CALL 8

static doca_error_t chan_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		sdp_error("failed to make socket %d non-blocking: %m", fd);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_chan_init(struct sdp_urom_chan *chan, int fd, size_t max_frame)
{
	doca_error_t status;
	int one = 1;

	memset(chan, 0, sizeof(*chan));
	chan->fd = -1;
	status = chan_nonblock(fd);
	if (status != DOCA_SUCCESS)
		return status;
	/* Requests and replies are small and latency-bound. Fails harmlessly on non-TCP. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	status = sdp_urom_rx_init(&chan->rx, max_frame);
	if (status != DOCA_SUCCESS)
		return status;
	chan->fd = fd;
	return DOCA_SUCCESS;
}

void sdp_urom_chan_fini(struct sdp_urom_chan *chan)
{
	if (chan->fd >= 0)
		close(chan->fd);
	chan->fd = -1;
	sdp_urom_rx_fini(&chan->rx);
	free(chan->out);
	chan->out = NULL;
	chan->out_len = chan->out_off = chan->out_cap = 0;
}

void sdp_urom_chan_set_max_frame(struct sdp_urom_chan *chan, size_t max_frame)
{
	sdp_urom_rx_set_max(&chan->rx, max_frame);
}

/* Hand out every complete frame held; nonzero when the callback asked to stop. */
static int chan_deliver(struct sdp_urom_chan *chan, sdp_urom_chan_frame_func_t cb, void *arg,
			doca_error_t *status_p)
{
	const uint8_t *frame;
	size_t len;
	doca_error_t status;

	while ((status = sdp_urom_rx_next(&chan->rx, &frame, &len)) == DOCA_SUCCESS)
		if (cb(arg, frame, len))
			return 1;
	if (status == DOCA_ERROR_INVALID_VALUE) {
		*status_p = status;
		return 1;
	}
	return 0;
}

doca_error_t sdp_urom_chan_read(struct sdp_urom_chan *chan, sdp_urom_chan_frame_func_t cb,
				void *arg, int *made_p)
{
	doca_error_t status = DOCA_SUCCESS;
	int i;

	*made_p = 0;
	if (chan->fd < 0 || chan->eof)
		return DOCA_ERROR_NOT_CONNECTED;
	for (i = 0; i < CHAN_READS_PER_CALL; i++) {
		uint8_t *space;
		size_t size;
		ssize_t n;

		status = sdp_urom_rx_space(&chan->rx, &space, &size);
		if (status == DOCA_ERROR_AGAIN) { /* a full buffer holds whole frames */
			if (chan_deliver(chan, cb, arg, &status))
				return status;
			continue;
		}
		if (status != DOCA_SUCCESS)
			return status;
		n = recv(chan->fd, space, size, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return DOCA_SUCCESS;
		if (n < 0 && (errno == ECONNRESET || errno == EPIPE || errno == ETIMEDOUT)) {
			chan->eof = 1;
			return DOCA_ERROR_NOT_CONNECTED;
		}
		if (n < 0) {
			sdp_error("recv on socket %d failed: %m", chan->fd);
			return DOCA_ERROR_IO_FAILED;
		}
		if (n == 0) {
			chan->eof = 1;
			/* Frames that arrived before the close still count. */
			if (chan_deliver(chan, cb, arg, &status))
				return status;
			return DOCA_ERROR_NOT_CONNECTED;
		}
		*made_p = 1;
		sdp_urom_rx_commit(&chan->rx, (size_t)n);
		status = DOCA_SUCCESS;
		if (chan_deliver(chan, cb, arg, &status))
			return status;
		if ((size_t)n < size)
			return DOCA_SUCCESS; /* the socket is drained */
	}
	return DOCA_SUCCESS;
}

int sdp_urom_chan_out_pending(const struct sdp_urom_chan *chan)
{
	return chan->out_len > chan->out_off;
}

doca_error_t sdp_urom_chan_flush(struct sdp_urom_chan *chan)
{
	while (chan->out_off < chan->out_len) {
		ssize_t n = send(chan->fd, chan->out + chan->out_off, chan->out_len - chan->out_off,
				 MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return DOCA_ERROR_AGAIN;
		if (n < 0) {
			/* The peer went away; reading tells the rest. Not an error of ours. */
			chan->eof = 1;
			return DOCA_ERROR_NOT_CONNECTED;
		}
		chan->out_off += (size_t)n;
	}
	chan->out_off = chan->out_len = 0;
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_chan_send(struct sdp_urom_chan *chan, const struct sdp_urom_msg *msg)
{
	size_t need = sdp_urom_msg_packed_size(msg), used = 0;
	doca_error_t status;

	if (need == 0) {
		sdp_error("cannot pack a %s message", sdp_urom_msg_type_name(msg->hdr.type));
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (chan->fd < 0 || chan->eof)
		return DOCA_ERROR_NOT_CONNECTED;
	if (chan->out_off > 0 && chan->out_off == chan->out_len)
		chan->out_off = chan->out_len = 0;
	if (chan->out_len - chan->out_off + need > SDP_UROM_CHAN_MAX_QUEUE) {
		sdp_error("socket %d: the peer does not read; %zu bytes already queued, %s of %zu "
			  "bytes refused",
			  chan->fd, chan->out_len - chan->out_off,
			  sdp_urom_msg_type_name(msg->hdr.type), need);
		return DOCA_ERROR_IO_FAILED;
	}
	if (chan->out_len + need > chan->out_cap) {
		size_t cap = chan->out_cap ? chan->out_cap : 4096;
		uint8_t *nb;

		if (chan->out_off > 0) { /* reclaim what went out */
			memmove(chan->out, chan->out + chan->out_off,
				chan->out_len - chan->out_off);
			chan->out_len -= chan->out_off;
			chan->out_off = 0;
		}
		while (cap < chan->out_len + need)
			cap *= 2;
		if (cap > chan->out_cap) {
			nb = realloc(chan->out, cap);
			if (nb == NULL) {
				sdp_error("failed to grow an output queue to %zu bytes", cap);
				return DOCA_ERROR_NO_MEMORY;
			}
			chan->out = nb;
			chan->out_cap = cap;
		}
	}
	status = sdp_urom_msg_pack(msg, chan->out + chan->out_len, chan->out_cap - chan->out_len,
				   &used);
	if (status != DOCA_SUCCESS) {
		sdp_error("failed to pack a %s message: %s", sdp_urom_msg_type_name(msg->hdr.type),
			  doca_error_get_name(status));
		return status;
	}
	chan->out_len += used;
	status = sdp_urom_chan_flush(chan);
	return status == DOCA_ERROR_AGAIN ? DOCA_SUCCESS : status;
}

static uint64_t chan_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

doca_error_t sdp_urom_chan_send_wait(struct sdp_urom_chan *chan, const struct sdp_urom_msg *msg,
				     int timeout_ms)
{
	uint64_t deadline = chan_now_ms() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms);
	doca_error_t status = sdp_urom_chan_send(chan, msg);

	while (status == DOCA_SUCCESS && sdp_urom_chan_out_pending(chan)) {
		struct pollfd p = {.fd = chan->fd, .events = POLLOUT};
		uint64_t now = chan_now_ms();

		if (now >= deadline)
			return DOCA_ERROR_IO_FAILED;
		(void)poll(&p, 1, (int)(deadline - now));
		status = sdp_urom_chan_flush(chan);
		if (status == DOCA_ERROR_AGAIN)
			status = DOCA_SUCCESS;
	}
	return status;
}

doca_error_t sdp_urom_chan_wait(struct sdp_urom_chan *chan, int timeout_ms)
{
	struct pollfd p = {.fd = chan->fd, .events = POLLIN};
	int rc;

	if (chan->fd < 0 || chan->eof)
		return DOCA_ERROR_NOT_CONNECTED;
	if (sdp_urom_chan_out_pending(chan))
		p.events |= POLLOUT;
	do
		rc = poll(&p, 1, timeout_ms < 0 ? 0 : timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc == 0)
		return DOCA_ERROR_TIME_OUT;
	if (rc < 0) {
		sdp_error("poll on socket %d failed: %m", chan->fd);
		return DOCA_ERROR_IO_FAILED;
	}
	if ((p.revents & POLLOUT) && sdp_urom_chan_flush(chan) == DOCA_ERROR_NOT_CONNECTED)
		return DOCA_ERROR_NOT_CONNECTED;
	/* POLLHUP / POLLERR: reading reports what happened. */
	return (p.revents & (POLLIN | POLLHUP | POLLERR)) ? DOCA_SUCCESS : DOCA_ERROR_AGAIN;
}

doca_error_t sdp_urom_chan_connect(const struct sockaddr *sa, socklen_t sa_len, int timeout_ms,
				   int *fd_p, char *errbuf, size_t errbuf_size)
{
	struct pollfd p;
	socklen_t elen = sizeof(int);
	int fd, err = 0, rc;

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(errbuf, errbuf_size, "socket: %s", strerror(errno));
		return DOCA_ERROR_NOT_CONNECTED;
	}
	if (connect(fd, sa, sa_len) == 0)
		goto done;
	if (errno != EINPROGRESS) {
		snprintf(errbuf, errbuf_size, "%s", strerror(errno));
		goto err;
	}
	p.fd = fd;
	p.events = POLLOUT;
	do
		rc = poll(&p, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc == 0) {
		snprintf(errbuf, errbuf_size, "no answer within %d ms", timeout_ms);
		goto err;
	}
	if (rc < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0) {
		snprintf(errbuf, errbuf_size, "%s", strerror(errno));
		goto err;
	}
	if (err != 0) {
		snprintf(errbuf, errbuf_size, "%s", strerror(err));
		goto err;
	}
done:
	*fd_p = fd;
	return DOCA_SUCCESS;
err:
	close(fd);
	return DOCA_ERROR_NOT_CONNECTED;
}

doca_error_t sdp_urom_chan_listen(const struct sockaddr *sa, socklen_t sa_len, int *fd_p,
				  uint16_t *port_p)
{
	struct sockaddr_storage bound;
	socklen_t blen = sizeof(bound);
	char addr[80];
	int fd, one = 1;

	sdp_urom_sockaddr_str(sa, addr, sizeof(addr));
	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		sdp_error("failed to create a socket for %s: %m", addr);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) {
		sdp_error("setsockopt(SO_REUSEADDR) for %s failed: %m", addr);
		goto err;
	}
	if (bind(fd, sa, sa_len) != 0) {
		int e = errno;

		sdp_error("failed to listen on %s: %m", addr);
		close(fd);
		return e == EADDRINUSE ? DOCA_ERROR_IN_USE :
		       e == EACCES     ? DOCA_ERROR_NOT_PERMITTED :
					 DOCA_ERROR_INVALID_VALUE;
	}
	if (listen(fd, 128) != 0) {
		sdp_error("listen on %s failed: %m", addr);
		goto err;
	}
	if (getsockname(fd, (struct sockaddr *)&bound, &blen) != 0) {
		sdp_error("getsockname for %s failed: %m", addr);
		goto err;
	}
	if (port_p != NULL)
		*port_p = bound.ss_family == AF_INET6 ?
				  ntohs(((struct sockaddr_in6 *)&bound)->sin6_port) :
				  ntohs(((struct sockaddr_in *)&bound)->sin_port);
	*fd_p = fd;
	return DOCA_SUCCESS;
err:
	close(fd);
	return DOCA_ERROR_OPERATING_SYSTEM;
}

void sdp_urom_sockaddr_str(const struct sockaddr *sa, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, size, "%s:%u", host, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, size, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else {
		snprintf(buf, size, "(family %d)", sa->sa_family);
	}
}
