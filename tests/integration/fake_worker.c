/*
 * A fake softdpu-urom-worker for tests of the service's control link (SOFTDPU_UROM_WORKER_BIN
 * names it). It takes the worker's command line (only --ctrl-fd is used) and does what
 * SDP_FAKE_WORKER, set by the host in the spawn's environment, says:
 *   flood  send junk messages on the control socket as fast as it can (at most 20 s)
 *   deaf   send a valid SW_READY, then never read the control socket (the service's messages
 *          pile up in it), until the service closes it (at most 60 s)
 *   late   stay silent until the service says SW_EXIT (its host left before it was ready), then
 *          send the one SW_READY a real worker sends on its way and exit 0 (at most 20 s)
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sdp_urom_proto.h"

static int fake_ctrl_fd(int argc, char **argv)
{
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "--ctrl-fd") == 0)
			return atoi(argv[i + 1]);
	return -1;
}

static void fake_flood(int fd)
{
	time_t end = time(NULL) + 20;

	while (time(NULL) < end)
		if (send(fd, "junk", 4, MSG_NOSIGNAL) < 0 && errno != EINTR && errno != ENOBUFS)
			return;
}

static int fake_send_ready(int fd)
{
	static const char addr[] = "fake-address";
	struct sdp_urom_msg msg;
	uint8_t buf[256];
	size_t len = 0;

	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_SW_READY;
	msg.u.sw_ready.pid = (uint32_t)getpid();
	msg.u.sw_ready.status = 0;
	msg.u.sw_ready.worker_addr.data = (const uint8_t *)addr;
	msg.u.sw_ready.worker_addr.len = sizeof(addr);
	if (sdp_urom_msg_pack(&msg, buf, sizeof(buf), &len) != DOCA_SUCCESS ||
	    send(fd, buf, len, MSG_NOSIGNAL) != (ssize_t)len)
		return 1;
	return 0;
}

static int fake_deaf(int fd)
{
	struct pollfd p = {.fd = fd, .events = 0};

	if (fake_send_ready(fd) != 0)
		return 1;
	/* Only the hang-up (events 0): whatever the service sends stays unread. */
	poll(&p, 1, 60000);
	return 0;
}

static int fake_late(int fd)
{
	time_t end = time(NULL) + 20;
	uint8_t buf[512];

	while (time(NULL) < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		struct sdp_urom_msg msg;
		ssize_t n;

		if (poll(&p, 1, 1000) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			return 1; /* closed before SW_EXIT */
		if (sdp_urom_msg_unpack(buf, (size_t)n, &msg) == DOCA_SUCCESS &&
		    msg.hdr.type == SDP_UROM_MSG_SW_EXIT)
			return fake_send_ready(fd);
	}
	return 1;
}

int main(int argc, char **argv)
{
	const char *mode = getenv("SDP_FAKE_WORKER");
	int fd = fake_ctrl_fd(argc, argv);

	if (fd < 0 || mode == NULL) {
		fprintf(stderr, "fake_worker: needs --ctrl-fd and SDP_FAKE_WORKER\n");
		return 2;
	}
	if (strcmp(mode, "flood") == 0) {
		fake_flood(fd);
		return 0;
	}
	if (strcmp(mode, "deaf") == 0)
		return fake_deaf(fd);
	if (strcmp(mode, "late") == 0)
		return fake_late(fd);
	fprintf(stderr, "fake_worker: unknown SDP_FAKE_WORKER=%s\n", mode);
	return 2;
}
