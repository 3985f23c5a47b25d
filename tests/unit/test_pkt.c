/*
 * include/softdpu/sdp_pkt.h: the Internet checksum against known vectors (RFC 1071's example, a
 * textbook IPv4 header) and against a byte-by-byte reference for every length 0..300 at every
 * start offset 0..7 (odd lengths, unaligned buffers); running sums split anywhere; the UDP
 * corner cases (a computed 0 is sent as 0xffff, a stored 0 means "none" over IPv4 only); the
 * builders and the parser round trip (untagged, VLAN, IPv6, TCP, fragments, truncation); the
 * software checksum offload.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "softdpu/sdp_pkt.h"
#include "t_helpers.h"

/* The reference: big-endian 16-bit words, byte by byte, folded with a loop. */
static uint16_t ref_fold_sum(const uint8_t *p, size_t len, uint64_t sum)
{
	for (size_t i = 0; i < len; i++)
		sum += (i & 1) ? p[i] : (uint32_t)p[i] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static void test_vectors(void)
{
	/* RFC 1071 section 3: the sum of these words is ddf2 (folded) */
	static const uint8_t rfc[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
	/* an IPv4 header whose checksum is b861 */
	static const uint8_t ip[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
				       0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
	uint8_t hdr[20];

	T_EQ_INT(sdp_pkt_csum_fold(sdp_pkt_csum_add(0, rfc, sizeof(rfc))), 0xddf2);
	T_EQ_INT(sdp_pkt_csum(rfc, sizeof(rfc)), 0x220d);
	/* odd length: the last byte is the high byte of a padded word */
	T_EQ_INT(sdp_pkt_csum_fold(sdp_pkt_csum_add(0, rfc, 7)), ref_fold_sum(rfc, 7, 0));
	T_EQ_INT(sdp_pkt_csum_fold(sdp_pkt_csum_add(0, "\xab", 1)), 0xab00);
	T_EQ_INT(sdp_pkt_csum_fold(sdp_pkt_csum_add(0, rfc, 0)), 0);
	T_EQ_INT(sdp_pkt_csum(rfc, 0), 0xffff);

	T_TRUE(sdp_pkt_ip4_csum_ok(ip));
	memcpy(hdr, ip, sizeof(hdr));
	sdp_pkt_put16(hdr + SDP_PKT_IP4_CSUM, 0x1234);
	T_TRUE(!sdp_pkt_ip4_csum_ok(hdr));
	sdp_pkt_ip4_csum_set(hdr);
	T_EQ_INT(sdp_pkt_get16(hdr + SDP_PKT_IP4_CSUM), 0xb861);
	T_TRUE(memcmp(hdr, ip, sizeof(hdr)) == 0);

	/* carries: all ones folds to ffff, never to 0 */
	memset(hdr, 0xff, sizeof(hdr));
	T_EQ_INT(sdp_pkt_csum_fold(sdp_pkt_csum_add(0, hdr, sizeof(hdr))), 0xffff);
	T_EQ_INT(sdp_pkt_csum_fold(0), 0);
	T_EQ_INT(sdp_pkt_csum_fold(0xffffffffffffffffull), 0xffff);
	T_EQ_INT(sdp_pkt_csum_fold(0x10000), 1);
}

/* Every length and start offset against the reference, and sums split at every point. */
static void test_lengths_offsets(void)
{
	static uint8_t buf[320 + 8];
	uint32_t x = 12345;
	int bad = 0;

	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	for (size_t off = 0; off < 8; off++)
		for (size_t len = 0; len <= 300; len++) {
			uint16_t want = ref_fold_sum(buf + off, len, 7);

			if (sdp_pkt_csum_fold(sdp_pkt_csum_add(7, buf + off, len)) != want &&
			    bad++ < 5)
				t_fail("offset %zu, length %zu: sum %04x, want %04x", off, len,
				       sdp_pkt_csum_fold(sdp_pkt_csum_add(7, buf + off, len)),
				       want);
		}
	/* a running sum over pieces of even length is the sum of the whole */
	for (size_t cut = 0; cut <= 300; cut += 2) {
		uint64_t s = sdp_pkt_csum_add(sdp_pkt_csum_add(0, buf + 1, cut), buf + 1 + cut,
					      301 - cut);

		if (sdp_pkt_csum_fold(s) != ref_fold_sum(buf + 1, 301, 0) && bad++ < 5)
			t_fail("split at %zu: sums differ", cut);
	}
	T_EQ_INT(bad, 0);
}

static const struct sdp_pkt_udp4 k_udp4 = {
	.dst_mac = {0x02, 0, 0, 0, 0, 0x02},
	.src_mac = {0x02, 0, 0, 0, 0, 0x01},
	.src_ip = {10, 0, 0, 1},
	.dst_ip = {10, 0, 0, 2},
	.sport = 1024,
	.dport = 5001,
	.ip_id = 77,
	.ip_frag = SDP_PKT_IP4_DF,
};

/* A UDP frame whose computed checksum is 0 is sent with 0xffff, which verifies too. */
static void test_udp_corner(void)
{
	uint8_t f[64] = {0}, *udp = f + SDP_PKT_UDP4_UDP;
	struct sdp_pkt_info in;
	uint64_t pseudo;
	uint16_t rest;
	int l3, l4;

	T_EQ_INT(sdp_pkt_udp4_build(f, sizeof(f), &k_udp4), SDP_PKT_UDP4_PAYLOAD);
	T_TRUE(sdp_pkt_parse(f, sizeof(f), &in));
	pseudo = sdp_pkt_info_pseudo_sum(f, &in);
	/* the last payload word makes the sum 0xffff: the checksum comes out 0 */
	rest = (uint16_t)~sdp_pkt_csum_fold(sdp_pkt_csum_add(pseudo, udp, in.l4_len));
	sdp_pkt_put16(f + sizeof(f) - 2, rest);
	T_EQ_INT(sdp_pkt_csum_fold(sdp_pkt_csum_add(pseudo, udp, in.l4_len)), 0xffff);
	sdp_pkt_csum_fill(f, sizeof(f), 1, 1);
	T_EQ_INT(sdp_pkt_get16(udp + SDP_PKT_UDP_CSUM), 0xffff);
	T_TRUE(sdp_pkt_l4_csum_ok(udp, in.l4_len, pseudo));
	T_TRUE(sdp_pkt_csum_check(f, sizeof(f), &l3, &l4));
	T_TRUE(l3 && l4);

	/* 0 stored: no checksum, accepted over IPv4 */
	sdp_pkt_put16(udp + SDP_PKT_UDP_CSUM, 0);
	T_TRUE(sdp_pkt_csum_check(f, sizeof(f), &l3, &l4));
	T_TRUE(l3 && l4);
	/* a wrong one is not */
	sdp_pkt_put16(udp + SDP_PKT_UDP_CSUM, 0x1234);
	T_TRUE(sdp_pkt_csum_check(f, sizeof(f), &l3, &l4));
	T_TRUE(l3 && !l4);
}

/* Untagged IPv4/UDP: the parser finds what the builder wrote; the offload makes it verify. */
static void test_udp4_round_trip(void)
{
	uint8_t f[101];
	struct sdp_pkt_info in;
	int l3, l4;

	memset(f, 0x5a, sizeof(f));
	sdp_pkt_udp4_build(f, sizeof(f), &k_udp4);
	T_TRUE(sdp_pkt_parse(f, sizeof(f), &in));
	T_EQ_INT(in.ethertype, SDP_PKT_ETHERTYPE_IPV4);
	T_EQ_INT(in.ip_ver, 4);
	T_EQ_INT(in.l3_off, SDP_PKT_UDP4_IP);
	T_EQ_INT(in.l4_off, SDP_PKT_UDP4_UDP);
	T_EQ_INT(in.l4_len, sizeof(f) - SDP_PKT_UDP4_UDP);
	T_EQ_INT(in.proto, SDP_PKT_PROTO_UDP);
	T_EQ_INT(f[SDP_PKT_UDP4_IP + SDP_PKT_IP4_TTL], 64);
	T_EQ_INT(sdp_pkt_get16(f + SDP_PKT_UDP4_IP + SDP_PKT_IP4_ID), 77);
	T_EQ_INT(sdp_pkt_get16(f + SDP_PKT_UDP4_IP + SDP_PKT_IP4_FRAG), SDP_PKT_IP4_DF);
	T_EQ_INT(sdp_pkt_get16(f + SDP_PKT_UDP4_UDP + SDP_PKT_UDP_SPORT), 1024);
	T_EQ_INT(sdp_pkt_get16(f + SDP_PKT_UDP4_UDP + SDP_PKT_UDP_DPORT), 5001);
	T_EQ_INT(sdp_pkt_get32(f + SDP_PKT_UDP4_IP + SDP_PKT_IP4_DST), 0x0a000002);
	T_TRUE(memcmp(f, k_udp4.dst_mac, 6) == 0 && memcmp(f + 6, k_udp4.src_mac, 6) == 0);

	T_TRUE(sdp_pkt_csum_check(f, sizeof(f), &l3, &l4));
	T_TRUE(!l3 && l4); /* header checksum 0 is wrong; UDP 0 is "none" */
	sdp_pkt_csum_fill(f, sizeof(f), 1, 0);
	T_TRUE(sdp_pkt_csum_check(f, sizeof(f), &l3, &l4));
	T_TRUE(l3 && l4);
	T_EQ_INT(sdp_pkt_get16(f + SDP_PKT_UDP4_UDP + SDP_PKT_UDP_CSUM), 0);
	sdp_pkt_csum_fill(f, sizeof(f), 0, 1);
	T_TRUE(sdp_pkt_get16(f + SDP_PKT_UDP4_UDP + SDP_PKT_UDP_CSUM) != 0);
	T_TRUE(sdp_pkt_csum_check(f, sizeof(f), &l3, &l4));
	T_TRUE(l3 && l4);
	f[sizeof(f) - 1] ^= 1; /* the odd last byte counts */
	T_TRUE(sdp_pkt_csum_check(f, sizeof(f), &l3, &l4));
	T_TRUE(l3 && !l4);

	/* one byte short of the IP total length: IP header found, no transport header */
	T_TRUE(sdp_pkt_parse(f, sizeof(f) - 1, &in));
	T_EQ_INT(in.l4_off, 0);
	/* a later fragment carries no transport header */
	sdp_pkt_put16(f + SDP_PKT_UDP4_IP + SDP_PKT_IP4_FRAG, 185);
	T_TRUE(sdp_pkt_parse(f, sizeof(f), &in));
	T_EQ_INT(in.ip_ver, 4);
	T_EQ_INT(in.l4_off, 0);
	/* the first fragment (MF) does */
	sdp_pkt_put16(f + SDP_PKT_UDP4_IP + SDP_PKT_IP4_FRAG, SDP_PKT_IP4_MF);
	T_TRUE(sdp_pkt_parse(f, sizeof(f), &in));
	T_EQ_INT(in.l4_off, SDP_PKT_UDP4_UDP);
	/* not IP, too short, a broken header */
	T_TRUE(!sdp_pkt_parse(f, 13, &in));
	T_TRUE(!sdp_pkt_parse(f, 33, &in));
	f[SDP_PKT_UDP4_IP] = 0x44;
	T_TRUE(!sdp_pkt_parse(f, sizeof(f), &in));
	sdp_pkt_put16(f + SDP_PKT_ETH_TYPE, SDP_PKT_ETHERTYPE_ARP);
	T_TRUE(!sdp_pkt_parse(f, sizeof(f), &in));
	T_EQ_INT(in.ethertype, SDP_PKT_ETHERTYPE_ARP);
}

/* VLAN-tagged IPv6/TCP, built field by field, starting at an odd address. */
static void test_vlan_ip6_tcp(void)
{
	static const uint8_t a6[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	static const uint8_t b6[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
	static uint8_t mem[1 + 18 + 40 + 20 + 33];
	uint8_t *f = mem + 1, *ip = f + 18, *tcp = ip + 40;
	const uint32_t len = sizeof(mem) - 1, l4_len = 20 + 33;
	struct sdp_pkt_info in;
	int l3, l4;

	sdp_pkt_eth_build(f, k_udp4.dst_mac, k_udp4.src_mac, SDP_PKT_ETHERTYPE_VLAN);
	sdp_pkt_put16(f + SDP_PKT_ETH_HLEN, 42);
	sdp_pkt_put16(f + SDP_PKT_ETH_HLEN + 2, SDP_PKT_ETHERTYPE_IPV6);
	sdp_pkt_ip6_build(ip, (uint16_t)l4_len, SDP_PKT_PROTO_TCP, a6, b6);
	sdp_pkt_tcp_build(tcp, 40000, 80, 0x01020304u, 0x0a0b0c0du, 0x18, 65535);
	for (uint32_t k = 0; k < 33; k++)
		tcp[20 + k] = (uint8_t)(k * 7 + 1);

	T_TRUE(sdp_pkt_parse(f, len, &in));
	T_EQ_INT(in.ethertype, SDP_PKT_ETHERTYPE_IPV6);
	T_EQ_INT(in.ip_ver, 6);
	T_EQ_INT(in.l3_off, 18);
	T_EQ_INT(in.l4_off, 58);
	T_EQ_INT(in.l4_len, l4_len);
	T_EQ_INT(in.proto, SDP_PKT_PROTO_TCP);
	T_EQ_INT(tcp[SDP_PKT_TCP_DATA_OFF], 0x50);
	T_EQ_INT(sdp_pkt_get32(tcp + SDP_PKT_TCP_ACK), 0x0a0b0c0du);

	T_TRUE(sdp_pkt_csum_check(f, len, &l3, &l4));
	T_TRUE(!l3 && !l4);
	sdp_pkt_csum_fill(f, len, 1, 1);
	T_TRUE(sdp_pkt_csum_check(f, len, &l3, &l4));
	T_TRUE(!l3 && l4); /* no IPv4 header checksum in IPv6 */
	/* the reference over the same words: pseudo header, then the segment */
	{
		uint64_t ps = ref_fold_sum(ip + 8, 32, 0) + (uint64_t)SDP_PKT_PROTO_TCP + l4_len;

		T_EQ_INT(ref_fold_sum(tcp, l4_len, ps), 0xffff);
	}
	tcp[SDP_PKT_TCP_SEQ] ^= 0x80;
	T_TRUE(sdp_pkt_csum_check(f, len, &l3, &l4));
	T_TRUE(!l4);
	/* the IPv6 payload length past the frame: no transport header */
	T_TRUE(sdp_pkt_parse(f, len - 1, &in));
	T_EQ_INT(in.l4_off, 0);
}

int main(void)
{
	test_vectors();
	test_lengths_offsets();
	test_udp_corner();
	test_udp4_round_trip();
	test_vlan_ip6_tcp();
	T_DONE();
}
