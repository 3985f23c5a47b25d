/*
 * bench/eth_blast: the traffic source of bench/eth_cpu's afpacket case. Sends one Ethernet/IPv4/
 * UDP frame of the given size over and over on an interface through a plain AF_PACKET socket
 * (sendmmsg, 64 frames a call, PACKET_QDISC_BYPASS), flat out, until secs pass or SIGTERM.
 * The socket blocks while the kernel has no room, so the sender never spins.
 *
 *   eth_blast -i iface -s size -t secs -S src_mac -D dst_mac -a src_ip -b dst_ip
 *
 * The IPv4 header checksum is valid; the UDP checksum is 0 (none, allowed over IPv4). Prints
 * "sent=N" and "pps=R" when it stops. Exit 2 on a setup failure (needs root or CAP_NET_RAW).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "softdpu/sdp_pkt.h"

#define BATCH 64

static volatile sig_atomic_t g_stop;

static void on_term(int sig)
{
	(void)sig;
	g_stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

int main(int argc, char **argv)
{
	const char *iface = NULL, *smac = NULL, *dmac = NULL, *sip = NULL, *dip = NULL;
	uint32_t size = 64;
	double secs = 10, start, end;
	uint8_t frame[1514];
	struct sockaddr_ll sll;
	struct mmsghdr msgs[BATCH];
	struct iovec iov;
	struct sigaction sa;
	uint64_t sent = 0;
	int fd, c, one = 1;

	while ((c = getopt(argc, argv, "i:s:t:S:D:a:b:")) != -1) {
		switch (c) {
		case 'i':
			iface = optarg;
			break;
		case 's':
			size = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 't':
			secs = strtod(optarg, NULL);
			break;
		case 'S':
			smac = optarg;
			break;
		case 'D':
			dmac = optarg;
			break;
		case 'a':
			sip = optarg;
			break;
		case 'b':
			dip = optarg;
			break;
		default:
			goto usage;
		}
	}
	if (iface == NULL || smac == NULL || dmac == NULL || sip == NULL || dip == NULL ||
	    size < 60 || size > sizeof(frame) || secs <= 0 || secs > 600)
		goto usage;

	memset(frame, 0, sizeof(frame));
	{
		struct sdp_pkt_udp4 h = {
			.sport = 12345, .dport = 9 /* discard */, .ip_frag = SDP_PKT_IP4_DF};

		if (parse_mac(dmac, h.dst_mac) != 0 || parse_mac(smac, h.src_mac) != 0 ||
		    inet_pton(AF_INET, sip, h.src_ip) != 1 ||
		    inet_pton(AF_INET, dip, h.dst_ip) != 1)
			goto usage;
		sdp_pkt_udp4_build(frame, size, &h);
		sdp_pkt_csum_fill(frame, size, 1, 0); /* UDP checksum 0: none */
		for (uint32_t k = 42; k < size; k++)
			frame[k] = (uint8_t)k;
	}

	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "eth_blast: socket(AF_PACKET): %s (needs root or CAP_NET_RAW)\n",
			strerror(errno));
		return 2;
	}
	if (setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) != 0)
		fprintf(stderr, "eth_blast: PACKET_QDISC_BYPASS: %s (going through the qdisc)\n",
			strerror(errno));
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_IP);
	sll.sll_ifindex = (int)if_nametoindex(iface);
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, frame, 6);
	if (sll.sll_ifindex == 0) {
		fprintf(stderr, "eth_blast: no interface %s\n", iface);
		return 2;
	}
	iov.iov_base = frame;
	iov.iov_len = size;
	memset(msgs, 0, sizeof(msgs));
	for (int i = 0; i < BATCH; i++) {
		msgs[i].msg_hdr.msg_name = &sll;
		msgs[i].msg_hdr.msg_namelen = sizeof(sll);
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	start = now_s();
	end = start + secs;
	while (!g_stop) {
		int r = sendmmsg(fd, msgs, BATCH, 0);

		if (r > 0) {
			sent += (uint64_t)r;
		} else if (r < 0 && errno != EINTR) {
			/* ENOBUFS and the like: back off a little instead of spinning */
			struct timespec nap = {0, 100 * 1000};

			nanosleep(&nap, NULL);
		}
		if (now_s() >= end)
			break;
	}
	printf("sent=%llu\n", (unsigned long long)sent);
	printf("pps=%.0f\n", (double)sent / (now_s() - start));
	close(fd);
	return 0;
usage:
	fprintf(stderr, "usage: eth_blast -i iface -s size(60-1514) -t secs -S src_mac -D dst_mac "
			"-a src_ip -b dst_ip\n");
	return 2;
}
