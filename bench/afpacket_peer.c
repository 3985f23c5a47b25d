/*
 * bench/afpacket_peer: the peer of bench/eth_cpu's afpacket case, a plain AF_PACKET receiver
 * with a TPACKET_V3 block ring of the same geometry as softdpu's afpacket provider (128 KiB
 * blocks, handed over when full or 2 ms after their first frame, frames * 2048 bytes in all,
 * PACKET_IGNORE_OUTGOING). One thread walks the blocks in place and counts the frames (it reads
 * each frame's length and first byte, copies nothing); it sleeps in poll() (at most 100 ms) when
 * the next block is still the kernel's.
 *
 *   afpacket_peer -i iface [-s size] [-t secs] [-f frames]
 *
 * Warms up 0.3 s, then counts for secs seconds (default 2). Prints "key=value" lines: packets,
 * seconds, pps, drops (the kernel's tp_drops during the window), offered_pps (the interface's
 * rx_packets during the window), cpu_pct. Exit 1 when frames of another length than -s came
 * (when -s is given), 2 on a setup failure (needs root or CAP_NET_RAW).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

#define BLOCK_SIZE (128u * 1024)
#define FRAME_NOMINAL 2048u
#define MIN_BLOCKS 4u
#define RETIRE_MS 2
#define WARMUP_S 0.3

/* The kernel's counters since the last call (reading them resets them). */
static uint64_t take_drops(int fd)
{
	struct tpacket_stats_v3 st;
	socklen_t len = sizeof(st);

	memset(&st, 0, sizeof(st));
	if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) != 0)
		return 0;
	return st.tp_drops;
}

static void die(const char *what)
{
	fprintf(stderr, "afpacket_peer: %s: %s\n", what, strerror(errno));
	exit(2);
}

int main(int argc, char **argv)
{
	const char *iface = NULL;
	uint32_t size = 0, frames = 4096;
	double secs = 2.0;
	struct tpacket_req3 req;
	struct sockaddr_ll sll;
	int fd, c, v3 = TPACKET_V3, one = 1;
	uint8_t *ring;
	size_t ring_len;
	uint32_t blk = 0;
	uint64_t n = 0, n0 = 0, wrong = 0, sink = 0, off0 = 0, drops;
	double t0 = 0, c0 = 0, start, end, t1, c1;
	int counting = 0;

	while ((c = getopt(argc, argv, "i:s:t:f:")) != -1) {
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
		case 'f':
			frames = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		default:
			goto usage;
		}
	}
	if (iface == NULL || secs <= 0 || secs > 60 || frames < 64 || frames > 262144)
		goto usage;

	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (fd < 0)
		die("socket(AF_PACKET) (needs root or CAP_NET_RAW)");
	if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &v3, sizeof(v3)) != 0)
		die("PACKET_VERSION TPACKET_V3");
	if (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) != 0)
		fprintf(stderr,
			"afpacket_peer: PACKET_IGNORE_OUTGOING: %s (outgoing frames are "
			"skipped by type instead)\n",
			strerror(errno));
	memset(&req, 0, sizeof(req));
	req.tp_block_size = BLOCK_SIZE;
	req.tp_block_nr =
		(uint32_t)(((uint64_t)frames * FRAME_NOMINAL + BLOCK_SIZE - 1) / BLOCK_SIZE);
	if (req.tp_block_nr < MIN_BLOCKS)
		req.tp_block_nr = MIN_BLOCKS;
	req.tp_frame_size = FRAME_NOMINAL;
	req.tp_frame_nr = req.tp_block_nr * (BLOCK_SIZE / FRAME_NOMINAL);
	req.tp_retire_blk_tov = RETIRE_MS;
	if (setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) != 0)
		die("PACKET_RX_RING");
	ring_len = (size_t)req.tp_block_nr * req.tp_block_size;
	ring = mmap(NULL, ring_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED, fd, 0);
	if (ring == MAP_FAILED)
		ring = mmap(NULL, ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED)
		die("mmap of the ring");
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)if_nametoindex(iface);
	if (sll.sll_ifindex == 0)
		die(iface);
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) != 0)
		die("bind");

	start = bench_now_s();
	end = start + WARMUP_S + secs;
	for (;;) {
		struct tpacket_block_desc *bd =
			(struct tpacket_block_desc *)(ring + (size_t)blk * BLOCK_SIZE);
		double t = bench_now_s();

		if (!counting && t >= start + WARMUP_S) {
			counting = 1;
			(void)take_drops(fd);
			off0 = bench_iface_rx_packets(iface);
			c0 = bench_cpu_s();
			n0 = n;
			t0 = t;
		}
		if (t >= end)
			break;
		if ((__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) &
		     TP_STATUS_USER) == 0) {
			struct pollfd pfd = {.fd = fd, .events = POLLIN | POLLERR};

			if (poll(&pfd, 1, 100) < 0 && errno != EINTR)
				die("poll");
			continue;
		}
		{
			uint32_t num = bd->hdr.bh1.num_pkts;
			struct tpacket3_hdr *h =
				(struct tpacket3_hdr *)((uint8_t *)bd +
							bd->hdr.bh1.offset_to_first_pkt);

			for (uint32_t k = 0; k < num; k++) {
				const struct sockaddr_ll *a =
					(const struct sockaddr_ll *)((uint8_t *)h +
								     TPACKET_ALIGN(sizeof(*h)));

				if (a->sll_pkttype != PACKET_OUTGOING) {
					n++;
					sink += ((uint8_t *)h + h->tp_mac)[0];
					if (size != 0 && h->tp_len != size)
						wrong++;
				}
				h = (struct tpacket3_hdr *)((uint8_t *)h + h->tp_next_offset);
			}
		}
		__atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		blk = (blk + 1) % req.tp_block_nr;
	}
	t1 = bench_now_s();
	c1 = bench_cpu_s();
	drops = take_drops(fd);
	printf("packets=%llu\n", (unsigned long long)(n - n0));
	printf("seconds=%.3f\n", t1 - t0);
	printf("pps=%.0f\n", (double)(n - n0) / (t1 - t0));
	printf("drops=%llu\n", (unsigned long long)drops);
	printf("offered_pps=%.0f\n", (double)(bench_iface_rx_packets(iface) - off0) / (t1 - t0));
	printf("cpu_pct=%.0f\n", (c1 - c0) / (t1 - t0) * 100);
	printf("checksum_of_first_bytes=%llu\n", (unsigned long long)sink);
	munmap(ring, ring_len);
	close(fd);
	if (wrong != 0) {
		fprintf(stderr, "afpacket_peer: %llu frames of another length than %u\n",
			(unsigned long long)wrong, size);
		return 1;
	}
	return 0;
usage:
	fprintf(stderr, "usage: afpacket_peer -i iface [-s size] [-t secs] [-f frames]\n");
	return 2;
}
