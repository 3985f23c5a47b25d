/*
 * A fake softdpu-urom-worker for tests of the service's control link (SOFTDPU_UROM_WORKER_BIN
 * names it). It takes the worker's command line (only --ctrl-fd is used) and does what
 * SDP_FAKE_WORKER, set by the host in the spawn's environment, says:
 *   flood  send junk messages on the control socket as fast as it can (at most 20 s)
 *   deaf   send a valid SW_READY, then never read the control socket (the service's messages
 *          pile up in it), until the service closes it (at most 60 s)
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

static int fake_deaf(int fd)
{
	static const char addr[] = "fake-address";
	struct sdp_urom_msg msg;
	struct pollfd p = {.fd = fd, .events = 0};
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
	/* Only the hang-up (events 0): whatever the service sends stays unread. */
	poll(&p, 1, 60000);
	return 0;
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
	fprintf(stderr, "fake_worker: unknown SDP_FAKE_WORKER=%s\n", mode);
	return 2;
}
