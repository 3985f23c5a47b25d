/*
 * bench/eth_blast: the traffic source of bench/eth_cpu's afpacket case. Sends one Ethernet/IPv4/
 * UDP frame of the given size over and over on an interface through a plain AF_PACKET socket
 * (sendmmsg, 64 frames a call, PACKET_QDISC_BYPASS), flat out, until secs pass or SIGTERM.
 * The socket blocks while the kernel has no room, so the sender never spins.
 *
 *   eth_blast -i iface -s size -t secs -S src_mac -D dst_mac -a src_ip -b dst_ip [-k kind]
 *
 * kind (bench/gpp.sh's traffic for the GPU packet processing application):
 *   udp   UDP to port 9, checksum 0 (none, allowed over IPv4): the default
 *   dns   UDP to port 53 carrying a DNS query (one question), UDP checksum set
 *   icmp  an ICMP echo request, ICMP checksum set
 *   syn   a TCP SYN to port 80, TCP checksum set
 * The IPv4 header checksum is always valid; the frame is size bytes (padded). Prints
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

/* A DNS query for softdpu.org, type A, class IN (after the UDP header). */
static const uint8_t dns_query[] = {0xab, 0xcd, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
				    0x00, 0x00, 0x07, 's',  'o',  'f',	't',  'd',  'p',  'u',
				    0x03, 'o',	'r',  'g',  0x00, 0x00, 0x01, 0x00, 0x01};

/* The frame of kind (not "udp") into frame (size bytes, zeroed): 0, or -1 for an unknown kind. */
static int build_kind(uint8_t *frame, uint32_t size, const char *kind, const uint8_t dst[6],
		      const uint8_t src[6], const uint8_t sip[4], const uint8_t dip[4])
{
	const uint32_t l4 = SDP_PKT_ETH_HLEN + SDP_PKT_IP4_HLEN;
	uint8_t *ip = frame + SDP_PKT_ETH_HLEN, *t = frame + l4;
	uint32_t l4_len;
	uint8_t proto;

	sdp_pkt_eth_build(frame, dst, src, SDP_PKT_ETHERTYPE_IPV4);
	if (strcmp(kind, "dns") == 0) {
		l4_len = SDP_PKT_UDP_HLEN + (uint32_t)sizeof(dns_query);
		proto = SDP_PKT_PROTO_UDP;
		sdp_pkt_udp_build(t, 12345, 53, (uint16_t)l4_len);
		memcpy(t + SDP_PKT_UDP_HLEN, dns_query, sizeof(dns_query));
	} else if (strcmp(kind, "icmp") == 0) {
		l4_len = size -
			 l4; /* header (type 8, code 0, id, seq) and data to the frame's end */
		proto = SDP_PKT_PROTO_ICMP;
		t[0] = 8;
		sdp_pkt_put16(t + 4, 0x5d5a);
		sdp_pkt_put16(t + 6, 1);
		for (uint32_t k = 8; k < l4_len; k++)
			t[k] = (uint8_t)k;
		sdp_pkt_put16(t + 2, sdp_pkt_csum(t, l4_len));
	} else if (strcmp(kind, "syn") == 0) {
		l4_len = SDP_PKT_TCP_HLEN;
		proto = SDP_PKT_PROTO_TCP;
		sdp_pkt_tcp_build(t, 40000, 80, 1000, 0, 0x02, 65535);
	} else {
		return -1;
	}
	if (l4 + l4_len > size)
		return -1;
	sdp_pkt_ip4_build(ip, (uint16_t)(SDP_PKT_IP4_HLEN + l4_len), 1, SDP_PKT_IP4_DF, proto, sip,
			  dip);
	sdp_pkt_ip4_csum_set(ip);
	if (proto == SDP_PKT_PROTO_UDP)
		sdp_pkt_udp_csum_set(t, l4_len, sdp_pkt_pseudo_sum(ip, 4, proto, l4_len));
	else if (proto == SDP_PKT_PROTO_TCP)
		sdp_pkt_tcp_csum_set(t, l4_len, sdp_pkt_pseudo_sum(ip, 4, proto, l4_len));
	return 0;
}

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
	const char *kind = "udp";
	uint32_t size = 64;
	double secs = 10, start, end;
	uint8_t frame[1514];
	struct sockaddr_ll sll;
	struct mmsghdr msgs[BATCH];
	struct iovec iov;
	struct sigaction sa;
	uint64_t sent = 0;
	int fd, c, one = 1;

	while ((c = getopt(argc, argv, "i:s:t:S:D:a:b:k:")) != -1) {
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
		case 'k':
			kind = optarg;
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
		if (strcmp(kind, "udp") == 0) {
			sdp_pkt_udp4_build(frame, size, &h);
			sdp_pkt_csum_fill(frame, size, 1, 0); /* UDP checksum 0: none */
			for (uint32_t k = 42; k < size; k++)
				frame[k] = (uint8_t)k;
		} else if (build_kind(frame, size, kind, h.dst_mac, h.src_mac, h.src_ip,
				      h.dst_ip) != 0) {
			fprintf(stderr, "eth_blast: no kind '%s' of %u bytes\n", kind, size);
			goto usage;
		}
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
			"-a src_ip -b dst_ip [-k udp|dns|icmp|syn]\n");
	return 2;
}
