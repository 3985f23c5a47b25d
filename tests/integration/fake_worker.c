/*
 * A fake softdpu-urom-worker for tests of the service's control link (SOFTDPU_UROM_WORKER_BIN
 * names it). It takes the worker's command line (only --ctrl-fd is used) and does what
 * SDP_FAKE_WORKER, set by the host in the spawn's environment, says:
 *   flood  send junk messages on the control socket as fast as it can (at most 20 s)
 *   deaf   send a valid SW_READY, then never read the control socket (the service's messages
 *          pile up in it), until the service closes it (at most 60 s)
 *   late   stay silent until the service says SW_EXIT (its host left before it was ready), then
 *          send the one SW_READY a real worker sends on its way and exit 0 (at most 20 s)
 *   stats  SW_READY, then one SW_STATS with known values (cmds 7, notifs 5, UCX "fake-ucx 9.9"),
 *          then wait for the hang-up, reading nothing (at most 60 s)
 *   badstats   SW_READY, then a SW_STATS claiming more hosts connected than ever connected
 *   earlystats a valid SW_STATS before SW_READY
 *   statsflood SW_READY, then valid SW_STATS as fast as it can (at most 20 s)
 *          (each of the last three then waits for the hang-up, at most 60 s)
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

/*
 * One SW_STATS with known values; bad: hosts_connected patched above hosts_total on the wire
 * (pack refuses to write it). 0 when sent.
 */
static int fake_send_stats(int fd, int bad)
{
	static const char version[] = "fake-ucx 9.9", tls[] = "tcp", dev[] = "lo",
			  res[] = "tcp/lo,self/memory0";
	struct sdp_urom_msg msg;
	uint8_t buf[512];
	size_t len = 0;

	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_SW_STATS;
	msg.u.sw_stats.uptime_ms = 1234;
	msg.u.sw_stats.cmds = 7;
	msg.u.sw_stats.cmd_bytes = 280;
	msg.u.sw_stats.cmds_refused = 2;
	msg.u.sw_stats.notifs = 5;
	msg.u.sw_stats.notif_bytes = 160;
	msg.u.sw_stats.notifs_error = 1;
	msg.u.sw_stats.hosts_connected = 1;
	msg.u.sw_stats.hosts_total = 3;
	msg.u.sw_stats.ucx_version.data = (const uint8_t *)version;
	msg.u.sw_stats.ucx_version.len = sizeof(version) - 1;
	msg.u.sw_stats.ucx_tls.data = (const uint8_t *)tls;
	msg.u.sw_stats.ucx_tls.len = sizeof(tls) - 1;
	msg.u.sw_stats.ucx_net_devices.data = (const uint8_t *)dev;
	msg.u.sw_stats.ucx_net_devices.len = sizeof(dev) - 1;
	msg.u.sw_stats.ucx_resources.data = (const uint8_t *)res;
	msg.u.sw_stats.ucx_resources.len = sizeof(res) - 1;
	if (sdp_urom_msg_pack(&msg, buf, sizeof(buf), &len) != DOCA_SUCCESS)
		return 1;
	if (bad) /* hosts_connected: header, ten u64 counters in */
		buf[SDP_UROM_HDR_LEN + 80] = 4;
	return send(fd, buf, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : 1;
}

static void fake_wait_hangup(int fd)
{
	struct pollfd p = {.fd = fd, .events = 0};

	poll(&p, 1, 60000);
}

static int fake_stats(int fd, const char *mode)
{
	if (strcmp(mode, "earlystats") == 0) {
		if (fake_send_stats(fd, 0) != 0 || fake_send_ready(fd) != 0)
			return 1;
	} else if (fake_send_ready(fd) != 0) {
		return 1;
	} else if (strcmp(mode, "statsflood") == 0) {
		time_t end = time(NULL) + 20;

		while (time(NULL) < end)
			if (fake_send_stats(fd, 0) != 0 && errno != EINTR && errno != ENOBUFS &&
			    errno != EAGAIN)
				break;
	} else if (fake_send_stats(fd, strcmp(mode, "badstats") == 0) != 0) {
		return 1;
	}
	fake_wait_hangup(fd);
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
	if (strcmp(mode, "stats") == 0 || strcmp(mode, "badstats") == 0 ||
	    strcmp(mode, "earlystats") == 0 || strcmp(mode, "statsflood") == 0)
		return fake_stats(fd, mode);
	fprintf(stderr, "fake_worker: unknown SDP_FAKE_WORKER=%s\n", mode);
	return 2;
}
