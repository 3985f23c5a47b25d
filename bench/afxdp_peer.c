/*
 * bench/afxdp_peer: the peer of bench/eth_cpu's afxdp case, a plain AF_XDP receiver written with
 * libxdp the way its documentation shows: one socket on queue 0 of the interface with libxdp's
 * own redirect program (loaded by xsk_socket__create), a UMEM of frames 4 KiB chunks all on the
 * fill ring, need-wakeup, copy or zero-copy as the driver allows (the kernel picks). One thread
 * reads each frame's length and first byte in place, copies nothing, and gives the chunk back to
 * the fill ring; it sleeps in poll() (at most 100 ms) when the RX ring is empty.
 *
 *   afxdp_peer -i iface [-s size] [-t secs] [-f frames]
 *
 * Warms up 0.3 s, then counts for secs seconds (default 2). Prints "key=value" lines: packets,
 * seconds, pps, drops (XDP_STATISTICS rx_dropped + rx_ring_full during the window),
 * offered_pps (the interface's rx_packets during the window), cpu_pct. Exit 1 when frames of
 * another length than -s came (when -s is given), 2 on a setup failure (needs root).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <getopt.h>
#include <linux/if_xdp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#include "bench_util.h"

#define CHUNK 4096u
#define WARMUP_S 0.3
#define BURST 64

static uint64_t drops_now(int fd)
{
	struct xdp_statistics st;
	socklen_t len = sizeof(st);

	memset(&st, 0, sizeof(st));
	if (getsockopt(fd, SOL_XDP, XDP_STATISTICS, &st, &len) != 0)
		return 0;
	return st.rx_dropped + st.rx_ring_full;
}

/* libbpf's and libxdp's notes about a missing bpffs are expected: keep the output clean */
static int quiet_bpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int quiet_xdp(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

int main(int argc, char **argv)
{
	const char *iface = NULL;
	uint32_t size = 0, frames = 4096, idx, nstash = 0, room;
	uint64_t *stash;
	double secs = 2.0, t0 = 0, c0 = 0, start, end, t1, c1;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq, rx;
	struct xsk_umem_config uc = {0};
	struct xsk_socket_config sc = {0};
	uint64_t n = 0, n0 = 0, wrong = 0, sink = 0, off0 = 0, d0 = 0, drops;
	int c, fd, err, counting = 0;
	uint8_t *area;
	size_t len;

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
	if (iface == NULL || secs <= 0 || secs > 60 || frames < 64 || frames > 32768 ||
	    (frames & (frames - 1)) != 0)
		goto usage;
	stash = malloc(sizeof(*stash) * frames);
	if (stash == NULL)
		return 2;
	libbpf_set_print(quiet_bpf);
	libxdp_set_print(quiet_xdp);
	len = (size_t)frames * CHUNK;
	area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED) {
		fprintf(stderr, "afxdp_peer: mmap: %s\n", strerror(errno));
		return 2;
	}
	uc.fill_size = frames;
	uc.comp_size = frames;
	uc.frame_size = CHUNK;
	err = xsk_umem__create(&umem, area, len, &fq, &cq, &uc);
	if (err != 0) {
		fprintf(stderr, "afxdp_peer: xsk_umem__create: %s\n", strerror(-err));
		return 2;
	}
	sc.rx_size = frames;
	sc.tx_size = 64;
	sc.bind_flags = XDP_USE_NEED_WAKEUP;
	/* a socket closed just before (the previous program's) frees its queue from a work item */
	for (int waited_ms = 0;; waited_ms += 2) {
		struct timespec pause = {.tv_nsec = 2 * 1000 * 1000};

		err = xsk_socket__create(&xsk, iface, 0, umem, &rx, &tx, &sc);
		if (err != -EBUSY || waited_ms >= 2000)
			break;
		nanosleep(&pause, NULL);
	}
	if (err != 0) {
		fprintf(stderr, "afxdp_peer: xsk_socket__create on %s: %s\n", iface,
			strerror(-err));
		return 2;
	}
	fd = xsk_socket__fd(xsk);
	if (xsk_ring_prod__reserve(&fq, frames, &idx) != frames) {
		fprintf(stderr, "afxdp_peer: the fill ring took fewer than %u chunks\n", frames);
		return 2;
	}
	for (uint32_t i = 0; i < frames; i++)
		*xsk_ring_prod__fill_addr(&fq, idx + i) = (uint64_t)i * CHUNK;
	xsk_ring_prod__submit(&fq, frames);

	start = bench_now_s();
	end = start + WARMUP_S + secs;
	for (;;) {
		double t = bench_now_s();
		uint32_t got, fidx;

		if (!counting && t >= start + WARMUP_S) {
			counting = 1;
			d0 = drops_now(fd);
			off0 = bench_iface_rx_packets(iface);
			c0 = bench_cpu_s();
			n0 = n;
			t0 = t;
		}
		if (t >= end)
			break;
		got = xsk_ring_cons__peek(&rx, BURST, &idx);
		if (got == 0) {
			struct pollfd pfd = {.fd = fd, .events = POLLIN};

			if (xsk_ring_prod__needs_wakeup(&fq))
				(void)recvfrom(fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
			if (poll(&pfd, 1, 100) < 0 && errno != EINTR) {
				fprintf(stderr, "afxdp_peer: poll: %s\n", strerror(errno));
				return 2;
			}
			continue;
		}
		for (uint32_t i = 0; i < got; i++) {
			const struct xdp_desc *d = xsk_ring_cons__rx_desc(&rx, idx + i);

			sink += area[xsk_umem__add_offset_to_addr(d->addr)];
			if (size != 0 && d->len != size)
				wrong++;
			stash[nstash++] = xsk_umem__extract_addr(d->addr);
		}
		xsk_ring_cons__release(&rx, got);
		n += got;
		/* back to the fill ring: what the kernel has not yet published as taken waits */
		room = xsk_prod_nb_free(&fq, nstash);
		if (room > nstash)
			room = nstash;
		if (room > 0 && xsk_ring_prod__reserve(&fq, room, &fidx) == room) {
			for (uint32_t i = 0; i < room; i++)
				*xsk_ring_prod__fill_addr(&fq, fidx + i) = stash[nstash - 1 - i];
			xsk_ring_prod__submit(&fq, room);
			nstash -= room;
		}
	}
	t1 = bench_now_s();
	c1 = bench_cpu_s();
	drops = drops_now(fd) - d0;
	printf("packets=%llu\n", (unsigned long long)(n - n0));
	printf("seconds=%.3f\n", t1 - t0);
	printf("pps=%.0f\n", (double)(n - n0) / (t1 - t0));
	printf("drops=%llu\n", (unsigned long long)drops);
	printf("offered_pps=%.0f\n", (double)(bench_iface_rx_packets(iface) - off0) / (t1 - t0));
	printf("cpu_pct=%.0f\n", (c1 - c0) / (t1 - t0) * 100);
	printf("checksum_of_first_bytes=%llu\n", (unsigned long long)sink);
	xsk_socket__delete(xsk);
	xsk_umem__delete(umem);
	munmap(area, len);
	free(stash);
	if (wrong != 0) {
		fprintf(stderr, "afxdp_peer: %llu frames of another length than %u\n",
			(unsigned long long)wrong, size);
		return 1;
	}
	return 0;
usage:
	fprintf(stderr,
		"usage: afxdp_peer -i iface [-s size] [-t secs] [-f frames (power of 2)]\n");
	return 2;
}
