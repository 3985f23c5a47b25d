/*
 * libFuzzer target for the GPU packet processing application's protocol work
 * (samples/gpu_packet_processing/gpp_proto.h): every frame its queues take comes from the wire,
 * so its bytes are anyone's. The input is one frame, answered by each function as the
 * application would (gpp_icmp_echo, gpp_udp_query, gpp_http with the NIC's checksum verdict
 * unknown, good and bad).
 *
 * Properties checked beyond "no crash, no read past the frame": a reply fits its buffer, is a
 * well-formed IPv4 frame back to the sender (its MAC and address), from the host, with correct
 * header and transport checksums (sdp_pkt_csum_check), of the kind asked (an ICMP echo reply
 * carrying the request's identifier, sequence and data; TCP from the HTTP port with SYN-ACK,
 * ACK or ACK-PSH-FIN, a response that starts "HTTP/1.1 "); a query is counted only when an
 * independent reading of the bytes here agrees (IPv4 to the host's MAC and address, UDP to its
 * port); a segment the NIC failed is never answered.
 *
 * With -DSDP_FUZZ_MAIN this file has its own main() (tests/fuzz/fuzz_main.h), whose generator
 * builds echo requests, queries and TCP segments of a connection and then damages them.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpp_proto.h"
#include "softdpu/sdp_pkt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_CAP 2048u

static const struct gpp_host fz_host = {.mac = {0x02, 0x53, 0x47, 0, 0, 1},
					.ip = {10, 9, 8, 1},
					.http_port = 80,
					.udp_port = 53,
					.isn_key = 0x5eed1234u};
static const char fz_body[] = "<html>fuzz</html>\n";
static const struct gpp_page fz_pages[] = {{"/", "text/html", fz_body, sizeof(fz_body) - 1},
					   {"/a", "text/plain", "a\n", 2}};

static void fz_fail(const char *what)
{
	fprintf(stderr, "fuzz_gpp_proto: %s\n", what);
	abort();
}

/* A reply of n bytes to request in: addressed back, checksums right; returns its L4 offset. */
static uint32_t fz_check_reply(const uint8_t *in, uint32_t len, const uint8_t *r, uint32_t n,
			       uint8_t proto)
{
	struct sdp_pkt_info info;
	int l3_ok = 0, l4_ok = 0;

	if (n > FZ_CAP)
		fz_fail("a reply longer than its buffer");
	if (!sdp_pkt_parse(r, n, &info) || info.ip_ver != 4 || info.proto != proto ||
	    info.l4_off == 0 || info.l4_off + info.l4_len != n)
		fz_fail("a reply that is not a whole IPv4 frame of the protocol asked");
	if (len < 12 || memcmp(r, in + 6, 6) != 0 || memcmp(r + 6, fz_host.mac, 6) != 0)
		fz_fail("a reply not addressed back to the sender's MAC");
	if (memcmp(r + info.l3_off + SDP_PKT_IP4_SRC, fz_host.ip, 4) != 0 ||
	    memcmp(r + info.l3_off + SDP_PKT_IP4_DST, in + info.l3_off + SDP_PKT_IP4_SRC, 4) != 0)
		fz_fail("a reply with the wrong addresses");
	sdp_pkt_csum_check(r, n, &l3_ok, &l4_ok);
	if (!l3_ok || (proto != SDP_PKT_PROTO_ICMP && !l4_ok))
		fz_fail("a reply with a wrong checksum");
	if (proto == SDP_PKT_PROTO_ICMP &&
	    sdp_pkt_csum_fold(sdp_pkt_csum_add(0, r + info.l4_off, info.l4_len)) != 0xffff)
		fz_fail("an echo reply with a wrong ICMP checksum");
	return info.l4_off;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[FZ_CAP];
	struct sdp_pkt_info info;
	uint32_t len = size > 9216 ? 9216 : (uint32_t)size, n, off;
	int q, for_us;

	/* ICMP */
	n = gpp_icmp_echo(&fz_host, data, len, out, FZ_CAP);
	if (n != 0) {
		off = fz_check_reply(data, len, out, n, SDP_PKT_PROTO_ICMP);
		if (out[off] != GPP_ICMP_ECHO_REPLY || out[off + 1] != 0)
			fz_fail("not an echo reply");
		if (!sdp_pkt_parse(data, len, &info) || info.l4_len != n - off ||
		    memcmp(out + off + 4, data + info.l4_off + 4, n - off - 4) != 0)
			fz_fail("an echo reply that does not carry the request's identifier and data");
	}
	/* UDP: counted only when an independent reading agrees */
	q = gpp_udp_query(&fz_host, data, len);
	for_us = sdp_pkt_parse(data, len, &info) && info.ip_ver == 4 && info.l4_off != 0 &&
		 info.proto == SDP_PKT_PROTO_UDP && info.l4_len >= 20 &&
		 memcmp(data, fz_host.mac, 6) == 0 &&
		 memcmp(data + info.l3_off + SDP_PKT_IP4_DST, fz_host.ip, 4) == 0 &&
		 sdp_pkt_get16(data + info.l4_off + SDP_PKT_UDP_DPORT) == fz_host.udp_port;
	if (q != 0 && (q != 1 || !for_us))
		fz_fail("a query counted that is not a UDP datagram to the host's port");
	/* TCP: the NIC's verdict unknown, good, bad */
	for (int v = -1; v <= 1; v++) {
		n = gpp_http(&fz_host, fz_pages, 2, data, len, v, out, FZ_CAP);
		if (n == 0)
			continue;
		if (v == 0)
			fz_fail("a segment the NIC failed was answered");
		off = fz_check_reply(data, len, out, n, SDP_PKT_PROTO_TCP);
		if (sdp_pkt_get16(out + off) != fz_host.http_port)
			fz_fail("a segment not from the HTTP port");
		switch (out[off + SDP_PKT_TCP_FLAGS]) {
		case GPP_TCP_SYN | GPP_TCP_ACK:
		case GPP_TCP_ACK:
			if (n != off + SDP_PKT_TCP_HLEN)
				fz_fail("a SYN-ACK or ACK with data");
			break;
		case GPP_TCP_ACK | GPP_TCP_PSH | GPP_TCP_FIN:
			if (n < off + SDP_PKT_TCP_HLEN + 9 ||
			    memcmp(out + off + SDP_PKT_TCP_HLEN, "HTTP/1.1 ", 9) != 0)
				fz_fail("a response that is not HTTP/1.1");
			break;
		default:
			fz_fail("a segment with unexpected flags");
		}
	}
	return 0;
}

#ifdef SDP_FUZZ_MAIN
#include "fuzz_main.h"

/* Valid requests of every kind, then damaged: bytes flipped, cut short or grown. */
static size_t fuzz_generate(uint8_t *buf, size_t cap)
{
	static const char *const reqs[] = {"GET / HTTP/1.1\r\nHost: h\r\n\r\n",
					   "GET /a HTTP/1.0\r\n\r\n",
					   "GET /zz HTTP/1.1\r\n\r\n",
					   "PUT / HTTP/1.1\r\n\r\n",
					   "GET\r\n\r\n",
					   "x"};
	static const uint8_t peer_mac[6] = {0x02, 0x53, 0x47, 0, 0, 2}, peer_ip[4] = {10, 9, 8, 2};
	uint32_t kind = (uint32_t)(fuzz_rnd() % 4), l4len, off = 34, len;
	uint8_t *l4 = buf + off;

	if (cap < 400)
		return 0;
	sdp_pkt_eth_build(buf, fz_host.mac, peer_mac, SDP_PKT_ETHERTYPE_IPV4);
	if (kind == 0) { /* echo request */
		uint32_t dl = (uint32_t)(fuzz_rnd() % 64);

		l4len = GPP_ICMP_HLEN + dl;
		memset(l4, 0, l4len);
		l4[0] = GPP_ICMP_ECHO_REQUEST;
		for (uint32_t i = 4; i < l4len; i++)
			l4[i] = (uint8_t)fuzz_rnd();
		sdp_pkt_put16(l4 + 2, sdp_pkt_csum(l4, l4len));
		sdp_pkt_ip4_build(buf + 14, (uint16_t)(20 + l4len), 1, 0, SDP_PKT_PROTO_ICMP,
				  peer_ip, fz_host.ip);
	} else if (kind == 1) { /* a DNS-like query */
		l4len = 8 + 12 + (uint32_t)(fuzz_rnd() % 40);
		memset(l4, 0, l4len);
		sdp_pkt_udp_build(l4, 999, (uint16_t)(fuzz_rnd() % 4 ? 53 : 54), (uint16_t)l4len);
		l4[8 + 2] = (uint8_t)(fuzz_rnd() % 2 ? 0x01 : 0x81);
		sdp_pkt_put16(l4 + 8 + 4, (uint16_t)(fuzz_rnd() % 3));
		sdp_pkt_ip4_build(buf + 14, (uint16_t)(20 + l4len), 1, 0, SDP_PKT_PROTO_UDP,
				  peer_ip, fz_host.ip);
	} else { /* TCP: SYN, or a request/FIN with the ISN this host would give */
		const char *r = reqs[fuzz_rnd() % 6];
		uint32_t dl = kind == 2 ? 0 : (uint32_t)strlen(r), isn;
		uint8_t flags = kind == 2 ? GPP_TCP_SYN : (uint8_t)(GPP_TCP_ACK | (fuzz_rnd() % 2));

		l4len = 20 + dl;
		sdp_pkt_ip4_build(buf + 14, (uint16_t)(20 + l4len), 1, 0, SDP_PKT_PROTO_TCP,
				  peer_ip, fz_host.ip);
		sdp_pkt_tcp_build(l4, (uint16_t)(40000 + fuzz_rnd() % 4), 80, 100, 0, flags, 1000);
		isn = gpp_isn(&fz_host, buf + 14, l4);
		sdp_pkt_put32(l4 + SDP_PKT_TCP_ACK, fuzz_rnd() % 8 ? isn + 1 : isn);
		memcpy(l4 + 20, r, dl);
		sdp_pkt_tcp_csum_set(l4, l4len, sdp_pkt_pseudo_sum(buf + 14, 4, 6, l4len));
	}
	sdp_pkt_ip4_csum_set(buf + 14);
	len = off + l4len;
	switch (fuzz_rnd() % 4) {
	case 0: /* flip a few bytes */
		for (int k = (int)(fuzz_rnd() % 4); k >= 0; k--)
			buf[fuzz_rnd() % len] ^= (uint8_t)(1u << (fuzz_rnd() % 8));
		break;
	case 1: /* cut short */
		len = (uint32_t)(fuzz_rnd() % (len + 1));
		break;
	case 2: /* trailing bytes */
		for (uint32_t k = (uint32_t)(fuzz_rnd() % 16); k > 0 && len < cap; k--)
			buf[len++] = (uint8_t)fuzz_rnd();
		break;
	default:
		break;
	}
	return len;
}
#endif
