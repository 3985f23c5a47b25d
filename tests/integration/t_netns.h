/*
 * Helpers the tests on a veth pair share (test_nic_afxdp, test_eth_afxdp): run a function inside
 * the second namespace (the sockets it opens stay there), UDP datagrams with a magic, ICMP echo
 * requests from a raw socket and their replies counted. Every wait is bounded.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef T_NETNS_H_
#define T_NETNS_H_

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "softdpu/sdp_pkt.h"
#include "t_helpers.h"

static __attribute__((unused)) uint64_t t_ns_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Run fn(arg) inside the network namespace named ns (/run/netns/<ns>), then come back. */
static __attribute__((unused)) int t_in_netns(const char *ns, int (*fn)(void *), void *arg)
{
	char path[256];
	int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), other, rc = -1;

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	other = open(path, O_RDONLY | O_CLOEXEC);
	if (self < 0 || other < 0 || setns(other, CLONE_NEWNET) != 0) {
		t_fail("expected to enter netns %s: %s", ns, strerror(errno));
		goto out;
	}
	rc = fn(arg);
	if (setns(self, CLONE_NEWNET) != 0) {
		t_fail("expected to come back from netns %s: %s", ns, strerror(errno));
		rc = -1;
	}
out:
	if (other >= 0)
		close(other);
	if (self >= 0)
		close(self);
	return rc;
}

/* The MAC of interface ifname in this thread's network namespace (SIOCGIFHWADDR): 0, or -1. */
static __attribute__((unused)) int t_iface_mac(const char *ifname, uint8_t mac[6])
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = -1;

	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) == 0) {
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
		rc = 0;
	}
	close(fd);
	return rc;
}

/* A UDP socket bound to ip:port (port 0: any), or -1 after a reported failure. */
static __attribute__((unused)) int t_udp_socket(const char *ip, uint16_t port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, ip, &sin.sin_addr);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
		t_fail("expected a UDP socket on %s:%u: %s", ip, port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* A 64-byte datagram: magic, seq, then seq's low byte. */
static __attribute__((unused)) void t_udp_send(int fd, const char *ip, uint16_t port,
					       uint32_t magic, uint32_t seq)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
	uint8_t msg[64];

	inet_pton(AF_INET, ip, &to.sin_addr);
	sdp_pkt_put32(msg, magic);
	sdp_pkt_put32(msg + 4, seq);
	memset(msg + 8, (int)(seq & 0xff), sizeof(msg) - 8);
	if (sendto(fd, msg, sizeof(msg), 0, (struct sockaddr *)&to, sizeof(to)) !=
	    (ssize_t)sizeof(msg))
		t_fail("UDP send to %s:%u: %s", ip, port, strerror(errno));
}

/* Datagrams with magic read from fd until want came or ms passed; returns the count. */
static __attribute__((unused)) uint32_t t_udp_count(int fd, uint32_t magic, uint32_t want, int ms)
{
	uint32_t n = 0;

	for (uint64_t end = t_ns_now_ms() + (uint64_t)ms; n < want && t_ns_now_ms() < end;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		uint8_t msg[128];

		if (poll(&pfd, 1, 50) > 0 && recv(fd, msg, sizeof(msg), MSG_DONTWAIT) == 64 &&
		    sdp_pkt_get32(msg) == magic)
			n++;
	}
	return n;
}

/* What a late datagram would add: read for ms more without waiting for any count. */
static __attribute__((unused)) uint32_t t_udp_drain(int fd, uint32_t magic, int ms)
{
	return t_udp_count(fd, magic, UINT32_MAX, ms);
}

static __attribute__((unused)) uint16_t t_icmp_csum(const uint8_t *p, size_t n)
{
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/*
 * count echo requests (identifier id) from the raw ICMP socket fd to ip; the replies that came
 * back within 3 s.
 */
static __attribute__((unused)) int t_pings(int fd, const char *ip, uint16_t id, int count)
{
	struct sockaddr_in to = {.sin_family = AF_INET};
	uint8_t req[64], rep[256];
	int replies = 0;

	inet_pton(AF_INET, ip, &to.sin_addr);
	for (int i = 0; i < count; i++) {
		uint16_t c;

		memset(req, 0, sizeof(req));
		req[0] = ICMP_ECHO;
		sdp_pkt_put16(req + 4, id);
		sdp_pkt_put16(req + 6, (uint16_t)i);
		c = t_icmp_csum(req, sizeof(req));
		sdp_pkt_put16(req + 2, c);
		if (sendto(fd, req, sizeof(req), 0, (struct sockaddr *)&to, sizeof(to)) < 0)
			t_fail("ping send: %s", strerror(errno));
	}
	for (uint64_t end = t_ns_now_ms() + 3000; replies < count && t_ns_now_ms() < end;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		n = recv(fd, rep, sizeof(rep), MSG_DONTWAIT);
		/* raw ICMP sockets get the IPv4 header too */
		if (n >= 28 && rep[20] == ICMP_ECHOREPLY && sdp_pkt_get16(rep + 24) == id)
			replies++;
	}
	return replies;
}

#endif /* T_NETNS_H_ */
