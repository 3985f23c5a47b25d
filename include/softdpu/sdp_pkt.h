/*
 * softdpu: the one home of Ethernet II, IPv4, IPv6, UDP and TCP header layout, header builders,
 * parsing and Internet checksums (RFC 1071), for the Ethernet engine (software checksum
 * offloads), the gen provider, the flow classifier, the benchmarks and the tests. Header-only;
 * compiles as C (gnu11), as C++17 and with nvcc, where every function is __host__ __device__.
 *
 * Layout: byte offsets of the fields inside their header (SDP_PKT_<HDR>_<FIELD>); multi-byte
 * fields are in network byte order (big endian) and are read and written with sdp_pkt_get16()
 * and friends, so no buffer needs any alignment.
 *
 * Checksums: sdp_pkt_csum_add() adds the big-endian 16-bit words of a buffer (a last odd byte
 * padded with a zero byte) to a 64-bit running sum, loading 32 bits at a time in host order
 * (RFC 1071 section 2(B): the one's complement sum does not depend on byte order, so one swap
 * of the folded result makes it the big-endian sum). Running sums may be added together and to
 * plain values (a length, a protocol number) and are folded once at the end:
 * sdp_pkt_csum_fold() gives the folded sum, ~fold the checksum to store, and a header verifies
 * when the fold of its sum (checksum field included) is 0xffff.
 *
 * Nothing here logs or allocates; a function given a frame too short for what it looks at does
 * nothing (builders: the caller provides room for the header).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_PKT_H_
#define SDP_PKT_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define SDP_PKT_FN __host__ __device__ static inline
#else
#define SDP_PKT_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- layout ---------------------------------------------------------------------------------- */

#define SDP_PKT_ETHERTYPE_IPV4 0x0800
#define SDP_PKT_ETHERTYPE_ARP 0x0806
#define SDP_PKT_ETHERTYPE_VLAN 0x8100
#define SDP_PKT_ETHERTYPE_IPV6 0x86dd
#define SDP_PKT_ETHERTYPE_QINQ 0x88a8

#define SDP_PKT_PROTO_ICMP 1
#define SDP_PKT_PROTO_TCP 6
#define SDP_PKT_PROTO_UDP 17

/* Ethernet II */
#define SDP_PKT_ETH_DST 0
#define SDP_PKT_ETH_SRC 6
#define SDP_PKT_ETH_TYPE 12
#define SDP_PKT_ETH_HLEN 14
#define SDP_PKT_VLAN_HLEN 4 /* an 802.1Q tag: TCI, then the inner ethertype */

/* IPv4 (without options) */
#define SDP_PKT_IP4_VER_IHL 0
#define SDP_PKT_IP4_TOS 1
#define SDP_PKT_IP4_TOTAL_LEN 2
#define SDP_PKT_IP4_ID 4
#define SDP_PKT_IP4_FRAG 6 /* flags and fragment offset */
#define SDP_PKT_IP4_TTL 8
#define SDP_PKT_IP4_PROTO 9
#define SDP_PKT_IP4_CSUM 10
#define SDP_PKT_IP4_SRC 12
#define SDP_PKT_IP4_DST 16
#define SDP_PKT_IP4_HLEN 20
#define SDP_PKT_IP4_DF 0x4000	    /* in the FRAG field: don't fragment */
#define SDP_PKT_IP4_MF 0x2000	    /* in the FRAG field: more fragments */
#define SDP_PKT_IP4_FRAG_OFF 0x1fff /* in the FRAG field: the fragment offset (8-byte units) */
#define SDP_PKT_IP4_TTL_DEFAULT 64  /* what the builders write */

/* IPv6 (the fixed header) */
#define SDP_PKT_IP6_PAYLOAD_LEN 4
#define SDP_PKT_IP6_NEXT 6
#define SDP_PKT_IP6_HOP_LIMIT 7
#define SDP_PKT_IP6_SRC 8
#define SDP_PKT_IP6_DST 24
#define SDP_PKT_IP6_HLEN 40

/* UDP */
#define SDP_PKT_UDP_SPORT 0
#define SDP_PKT_UDP_DPORT 2
#define SDP_PKT_UDP_LEN 4
#define SDP_PKT_UDP_CSUM 6
#define SDP_PKT_UDP_HLEN 8

/* TCP (without options) */
#define SDP_PKT_TCP_SPORT 0
#define SDP_PKT_TCP_DPORT 2
#define SDP_PKT_TCP_SEQ 4
#define SDP_PKT_TCP_ACK 8
#define SDP_PKT_TCP_DATA_OFF 12 /* the header length in 32-bit words, in the high 4 bits */
#define SDP_PKT_TCP_FLAGS 13
#define SDP_PKT_TCP_WINDOW 14
#define SDP_PKT_TCP_CSUM 16
#define SDP_PKT_TCP_URG 18
#define SDP_PKT_TCP_HLEN 20

/* An untagged Ethernet/IPv4/UDP frame (sdp_pkt_udp4_build): where each header starts. */
#define SDP_PKT_UDP4_IP SDP_PKT_ETH_HLEN			   /* 14 */
#define SDP_PKT_UDP4_UDP (SDP_PKT_UDP4_IP + SDP_PKT_IP4_HLEN)	   /* 34 */
#define SDP_PKT_UDP4_PAYLOAD (SDP_PKT_UDP4_UDP + SDP_PKT_UDP_HLEN) /* 42 */

/* ---- byte order ------------------------------------------------------------------------------ */

SDP_PKT_FN uint16_t sdp_pkt_get16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

SDP_PKT_FN uint32_t sdp_pkt_get32(const uint8_t *p)
{
	return (uint32_t)sdp_pkt_get16(p) << 16 | sdp_pkt_get16(p + 2);
}

SDP_PKT_FN void sdp_pkt_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

SDP_PKT_FN void sdp_pkt_put32(uint8_t *p, uint32_t v)
{
	sdp_pkt_put16(p, (uint16_t)(v >> 16));
	sdp_pkt_put16(p + 2, (uint16_t)v);
}

/* ---- checksums (RFC 1071) -------------------------------------------------------------------- */

/*
 * sum folded to 16 bits with end-around carry: 0 only for 0, else 1..0xffff. A loop: the sums of
 * a frame's headers need one or two rounds (cheaper than a fixed sequence for 64 bits).
 */
SDP_PKT_FN uint16_t sdp_pkt_csum_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffffu) + (sum >> 16);
	return (uint16_t)sum;
}

/*
 * sum plus the big-endian 16-bit words of data[0, len), a last odd byte padded with zero; not
 * folded. Any alignment of data; len up to 16 GiB per call.
 */
SDP_PKT_FN uint64_t sdp_pkt_csum_add(uint64_t sum, const void *data, size_t len)
{
	const uint8_t *p = (const uint8_t *)data;
	uint64_t acc = 0, acc2 = 0; /* host-order words */
	uint32_t w32, w32b;
	uint16_t w16 = 0, s;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w32, p + i, 4);
		memcpy(&w32b, p + i + 4, 4);
		acc += w32;
		acc2 += w32b;
	}
	if (i + 4 <= len) {
		memcpy(&w32, p + i, 4);
		acc += w32;
		i += 4;
	}
	if (i + 2 <= len) {
		memcpy(&w16, p + i, 2);
		acc += w16;
		i += 2;
	}
	if (i < len) {
		w16 = 0;
		memcpy(&w16, p + i, 1); /* the first byte in memory: the high byte of a BE word */
		acc += w16;
	}
	s = sdp_pkt_csum_fold(acc + (acc2 & 0xffffffffu) + (acc2 >> 32));
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__
	s = (uint16_t)(s << 8 | s >> 8);
#endif
	return sum + s;
}

/* The RFC 1071 checksum of data[0, len): what a header stores with its checksum field 0. */
SDP_PKT_FN uint16_t sdp_pkt_csum(const void *data, size_t len)
{
	return (uint16_t)~sdp_pkt_csum_fold(sdp_pkt_csum_add(0, data, len));
}

/*
 * The pseudo-header sum of a UDP/TCP checksum: the addresses of the IP header at ip (ip_ver 4
 * or 6), the protocol and the transport length. Not folded: add the transport bytes to it.
 */
SDP_PKT_FN uint64_t sdp_pkt_pseudo_sum(const uint8_t *ip, uint8_t ip_ver, uint8_t proto,
				       uint32_t l4_len)
{
	uint64_t sum = (uint64_t)proto + l4_len;

	if (ip_ver == 6)
		return sdp_pkt_csum_add(sum, ip + SDP_PKT_IP6_SRC, 32);
	return sdp_pkt_csum_add(sum, ip + SDP_PKT_IP4_SRC, 8);
}

/* IPv4 header length from the header at ip (bytes; 20..60, less for a broken header). */
SDP_PKT_FN uint32_t sdp_pkt_ip4_hlen(const uint8_t *ip)
{
	return (uint32_t)(ip[SDP_PKT_IP4_VER_IHL] & 0xf) * 4;
}

/* Set the header checksum of the IPv4 header at ip (its IHL bytes must be there). */
SDP_PKT_FN void sdp_pkt_ip4_csum_set(uint8_t *ip)
{
	sdp_pkt_put16(ip + SDP_PKT_IP4_CSUM, 0);
	sdp_pkt_put16(ip + SDP_PKT_IP4_CSUM, sdp_pkt_csum(ip, sdp_pkt_ip4_hlen(ip)));
}

/* 1 when the header checksum of the IPv4 header at ip verifies. */
SDP_PKT_FN int sdp_pkt_ip4_csum_ok(const uint8_t *ip)
{
	return sdp_pkt_csum_fold(sdp_pkt_csum_add(0, ip, sdp_pkt_ip4_hlen(ip))) == 0xffff;
}

/*
 * Set the checksum of the UDP datagram at udp (len bytes, header included) under the pseudo
 * sum pseudo (sdp_pkt_pseudo_sum). A computed 0 is sent as 0xffff: 0 means "no checksum".
 */
SDP_PKT_FN void sdp_pkt_udp_csum_set(uint8_t *udp, uint32_t len, uint64_t pseudo)
{
	uint16_t c;

	sdp_pkt_put16(udp + SDP_PKT_UDP_CSUM, 0);
	c = (uint16_t)~sdp_pkt_csum_fold(sdp_pkt_csum_add(pseudo, udp, len));
	sdp_pkt_put16(udp + SDP_PKT_UDP_CSUM, c == 0 ? 0xffff : c);
}

/* Set the checksum of the TCP segment at tcp (len bytes, header included). */
SDP_PKT_FN void sdp_pkt_tcp_csum_set(uint8_t *tcp, uint32_t len, uint64_t pseudo)
{
	sdp_pkt_put16(tcp + SDP_PKT_TCP_CSUM, 0);
	sdp_pkt_put16(tcp + SDP_PKT_TCP_CSUM,
		      (uint16_t)~sdp_pkt_csum_fold(sdp_pkt_csum_add(pseudo, tcp, len)));
}

/* 1 when the UDP/TCP checksum of l4 (len bytes) verifies under pseudo. */
SDP_PKT_FN int sdp_pkt_l4_csum_ok(const uint8_t *l4, uint32_t len, uint64_t pseudo)
{
	return sdp_pkt_csum_fold(sdp_pkt_csum_add(pseudo, l4, len)) == 0xffff;
}

/* ---- builders: the header's fields, checksums 0 (set them last) ------------------------------ */

/* Ethernet II header at f. */
SDP_PKT_FN void sdp_pkt_eth_build(uint8_t *f, const uint8_t dst[6], const uint8_t src[6],
				  uint16_t ethertype)
{
	memcpy(f + SDP_PKT_ETH_DST, dst, 6);
	memcpy(f + SDP_PKT_ETH_SRC, src, 6);
	sdp_pkt_put16(f + SDP_PKT_ETH_TYPE, ethertype);
}

/*
 * IPv4 header without options at ip: TOS 0, TTL 64, frag (SDP_PKT_IP4_DF, ...), addresses as
 * 4 bytes in network order (the bytes of an in_addr_t), header checksum 0.
 */
SDP_PKT_FN void sdp_pkt_ip4_build(uint8_t *ip, uint16_t total_len, uint16_t id, uint16_t frag,
				  uint8_t proto, const void *src, const void *dst)
{
	ip[SDP_PKT_IP4_VER_IHL] = 0x45;
	ip[SDP_PKT_IP4_TOS] = 0;
	sdp_pkt_put16(ip + SDP_PKT_IP4_TOTAL_LEN, total_len);
	sdp_pkt_put16(ip + SDP_PKT_IP4_ID, id);
	sdp_pkt_put16(ip + SDP_PKT_IP4_FRAG, frag);
	ip[SDP_PKT_IP4_TTL] = SDP_PKT_IP4_TTL_DEFAULT;
	ip[SDP_PKT_IP4_PROTO] = proto;
	sdp_pkt_put16(ip + SDP_PKT_IP4_CSUM, 0);
	memcpy(ip + SDP_PKT_IP4_SRC, src, 4);
	memcpy(ip + SDP_PKT_IP4_DST, dst, 4);
}

/* IPv6 fixed header at ip: traffic class and flow label 0, hop limit 64, 16-byte addresses. */
SDP_PKT_FN void sdp_pkt_ip6_build(uint8_t *ip, uint16_t payload_len, uint8_t next, const void *src,
				  const void *dst)
{
	sdp_pkt_put32(ip, 0x60000000u);
	sdp_pkt_put16(ip + SDP_PKT_IP6_PAYLOAD_LEN, payload_len);
	ip[SDP_PKT_IP6_NEXT] = next;
	ip[SDP_PKT_IP6_HOP_LIMIT] = SDP_PKT_IP4_TTL_DEFAULT;
	memcpy(ip + SDP_PKT_IP6_SRC, src, 16);
	memcpy(ip + SDP_PKT_IP6_DST, dst, 16);
}

/* UDP header at udp; len: header and payload. */
SDP_PKT_FN void sdp_pkt_udp_build(uint8_t *udp, uint16_t sport, uint16_t dport, uint16_t len)
{
	sdp_pkt_put16(udp + SDP_PKT_UDP_SPORT, sport);
	sdp_pkt_put16(udp + SDP_PKT_UDP_DPORT, dport);
	sdp_pkt_put16(udp + SDP_PKT_UDP_LEN, len);
	sdp_pkt_put16(udp + SDP_PKT_UDP_CSUM, 0);
}

/* TCP header without options at tcp (data offset 5), urgent pointer 0. */
SDP_PKT_FN void sdp_pkt_tcp_build(uint8_t *tcp, uint16_t sport, uint16_t dport, uint32_t seq,
				  uint32_t ack, uint8_t flags, uint16_t window)
{
	sdp_pkt_put16(tcp + SDP_PKT_TCP_SPORT, sport);
	sdp_pkt_put16(tcp + SDP_PKT_TCP_DPORT, dport);
	sdp_pkt_put32(tcp + SDP_PKT_TCP_SEQ, seq);
	sdp_pkt_put32(tcp + SDP_PKT_TCP_ACK, ack);
	tcp[SDP_PKT_TCP_DATA_OFF] = (SDP_PKT_TCP_HLEN / 4) << 4;
	tcp[SDP_PKT_TCP_FLAGS] = flags;
	sdp_pkt_put16(tcp + SDP_PKT_TCP_WINDOW, window);
	sdp_pkt_put16(tcp + SDP_PKT_TCP_CSUM, 0);
	sdp_pkt_put16(tcp + SDP_PKT_TCP_URG, 0);
}

/* What sdp_pkt_udp4_build() puts in the headers of an untagged Ethernet/IPv4/UDP frame. */
struct sdp_pkt_udp4 {
	uint8_t dst_mac[6];
	uint8_t src_mac[6];
	uint8_t src_ip[4]; /* network order */
	uint8_t dst_ip[4];
	uint16_t sport;
	uint16_t dport;
	uint16_t ip_id;
	uint16_t ip_frag; /* SDP_PKT_IP4_DF or 0 */
};

/*
 * The 42 bytes of headers of an Ethernet/IPv4/UDP frame of frame_len bytes (42..65535 + 14):
 * the lengths follow from frame_len, both checksums 0 (sdp_pkt_csum_fill() sets them once the
 * payload is in). Returns the payload offset, SDP_PKT_UDP4_PAYLOAD.
 */
SDP_PKT_FN uint32_t sdp_pkt_udp4_build(uint8_t *f, uint32_t frame_len, const struct sdp_pkt_udp4 *h)
{
	sdp_pkt_eth_build(f, h->dst_mac, h->src_mac, SDP_PKT_ETHERTYPE_IPV4);
	sdp_pkt_ip4_build(f + SDP_PKT_UDP4_IP, (uint16_t)(frame_len - SDP_PKT_UDP4_IP), h->ip_id,
			  h->ip_frag, SDP_PKT_PROTO_UDP, h->src_ip, h->dst_ip);
	sdp_pkt_udp_build(f + SDP_PKT_UDP4_UDP, h->sport, h->dport,
			  (uint16_t)(frame_len - SDP_PKT_UDP4_UDP));
	return SDP_PKT_UDP4_PAYLOAD;
}

/* ---- parsing --------------------------------------------------------------------------------- */

/* Where the headers of a frame are (sdp_pkt_parse). */
struct sdp_pkt_info {
	uint32_t l3_off;    /* the IPv4/IPv6 header; meaningful when ip_ver != 0 */
	uint32_t l4_off;    /* the transport header; 0: none (not IP, truncated, later fragment) */
	uint32_t l4_len;    /* the transport length the IP header gives (all inside the frame) */
	uint16_t ethertype; /* after at most one VLAN tag */
	uint8_t ip_ver;	    /* 4 or 6: a whole IP header is in the frame; 0: none */
	uint8_t proto;	    /* IPv4 protocol / IPv6 next header (extension headers not followed) */
};

/*
 * Find the headers of frame[0, len): Ethernet II, at most one 802.1Q tag, IPv4 (with options)
 * or IPv6 (fixed header), and the transport header when the IP lengths fit in the frame and
 * this is not an IPv4 fragment past the first. Returns 1 when an IP header was found.
 */
SDP_PKT_FN int sdp_pkt_parse(const uint8_t *frame, uint32_t len, struct sdp_pkt_info *info)
{
	uint32_t off = SDP_PKT_ETH_HLEN;
	const uint8_t *ip;

	memset(info, 0, sizeof(*info));
	if (len < SDP_PKT_ETH_HLEN)
		return 0;
	info->ethertype = sdp_pkt_get16(frame + SDP_PKT_ETH_TYPE);
	if (info->ethertype == SDP_PKT_ETHERTYPE_VLAN && len >= off + SDP_PKT_VLAN_HLEN) {
		info->ethertype = sdp_pkt_get16(frame + off + 2);
		off += SDP_PKT_VLAN_HLEN;
	}
	ip = frame + off;
	if (info->ethertype == SDP_PKT_ETHERTYPE_IPV4) {
		uint32_t ihl, total;

		if (len < off + SDP_PKT_IP4_HLEN || (ip[0] >> 4) != 4)
			return 0;
		ihl = sdp_pkt_ip4_hlen(ip);
		if (ihl < SDP_PKT_IP4_HLEN || len < off + ihl)
			return 0;
		info->ip_ver = 4;
		info->l3_off = off;
		info->proto = ip[SDP_PKT_IP4_PROTO];
		total = sdp_pkt_get16(ip + SDP_PKT_IP4_TOTAL_LEN);
		/* fragments past the first carry no transport header */
		if ((sdp_pkt_get16(ip + SDP_PKT_IP4_FRAG) & SDP_PKT_IP4_FRAG_OFF) != 0 ||
		    total < ihl || len < off + total)
			return 1;
		info->l4_off = off + ihl;
		info->l4_len = total - ihl;
		return 1;
	}
	if (info->ethertype == SDP_PKT_ETHERTYPE_IPV6) {
		uint32_t plen;

		if (len < off + SDP_PKT_IP6_HLEN)
			return 0;
		info->ip_ver = 6;
		info->l3_off = off;
		info->proto = ip[SDP_PKT_IP6_NEXT];
		plen = sdp_pkt_get16(ip + SDP_PKT_IP6_PAYLOAD_LEN);
		if (len < off + SDP_PKT_IP6_HLEN + plen)
			return 1;
		info->l4_off = off + SDP_PKT_IP6_HLEN;
		info->l4_len = plen;
		return 1;
	}
	return 0;
}

/* The pseudo-header sum of the transport header of a parsed frame (info->ip_ver != 0). */
SDP_PKT_FN uint64_t sdp_pkt_info_pseudo_sum(const uint8_t *frame, const struct sdp_pkt_info *info)
{
	return sdp_pkt_pseudo_sum(frame + info->l3_off, info->ip_ver, info->proto, info->l4_len);
}

/*
 * Software checksum offload of frame[0, len) in place: with l3 the IPv4 header checksum, with
 * l4 the UDP or TCP checksum (over IPv4 or IPv6); anything else is left as it is.
 */
SDP_PKT_FN void sdp_pkt_csum_fill(uint8_t *frame, uint32_t len, int l3, int l4)
{
	struct sdp_pkt_info in;
	uint8_t *l4p;

	if (!sdp_pkt_parse(frame, len, &in))
		return;
	if (l3 && in.ip_ver == 4)
		sdp_pkt_ip4_csum_set(frame + in.l3_off);
	if (!l4 || in.l4_off == 0)
		return;
	l4p = frame + in.l4_off;
	if (in.proto == SDP_PKT_PROTO_UDP && in.l4_len >= SDP_PKT_UDP_HLEN)
		sdp_pkt_udp_csum_set(l4p, in.l4_len, sdp_pkt_info_pseudo_sum(frame, &in));
	else if (in.proto == SDP_PKT_PROTO_TCP && in.l4_len >= SDP_PKT_TCP_HLEN)
		sdp_pkt_tcp_csum_set(l4p, in.l4_len, sdp_pkt_info_pseudo_sum(frame, &in));
}

/*
 * The checksums of frame[0, len) as a receiver checks them: *l3_ok_p 1 when the IPv4 header
 * checksum verifies (0 for a frame without IPv4), *l4_ok_p 1 when the UDP or TCP checksum
 * verifies (a UDP checksum 0 over IPv4 counts: "none"; 0 without UDP/TCP). Returns 1 when the
 * frame has an IP header.
 */
SDP_PKT_FN int sdp_pkt_csum_check(const uint8_t *frame, uint32_t len, int *l3_ok_p, int *l4_ok_p)
{
	struct sdp_pkt_info in;
	const uint8_t *l4p;
	int ok = 0;

	*l3_ok_p = 0;
	*l4_ok_p = 0;
	if (!sdp_pkt_parse(frame, len, &in))
		return 0;
	if (in.ip_ver == 4)
		*l3_ok_p = sdp_pkt_ip4_csum_ok(frame + in.l3_off);
	l4p = frame + in.l4_off;
	if (in.l4_off == 0)
		return 1;
	if (in.proto == SDP_PKT_PROTO_UDP && in.l4_len >= SDP_PKT_UDP_HLEN)
		ok = (in.ip_ver == 4 && sdp_pkt_get16(l4p + SDP_PKT_UDP_CSUM) == 0) ||
		     sdp_pkt_l4_csum_ok(l4p, in.l4_len, sdp_pkt_info_pseudo_sum(frame, &in));
	else if (in.proto == SDP_PKT_PROTO_TCP && in.l4_len >= SDP_PKT_TCP_HLEN)
		ok = sdp_pkt_l4_csum_ok(l4p, in.l4_len, sdp_pkt_info_pseudo_sum(frame, &in));
	*l4_ok_p = ok;
	return 1;
}

#ifdef __cplusplus
}
#endif

#endif /* SDP_PKT_H_ */
