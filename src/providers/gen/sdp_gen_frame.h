/*
 * softdpu internal: a fast builder of frames in the gen layout (sdp_gen_payload.h), shared by
 * the gen provider and the benchmarks that make the same frames on the host.
 *
 * The fill byte at payload offset k is (uint8_t)(seq + k), so the fill, its share of the UDP
 * checksum and its share of the payload check depend only on seq mod 256 and the frame size.
 * sdp_gen_frame_init() tabulates them once for a size (and the constant headers); each
 * sdp_gen_frame_build() then writes the headers, sums a handful of words and copies the fill
 * out of a pattern buffer: the same bytes as writing the fill byte by byte and running
 * sdp_gen_check() and the UDP checksum over the frame.
 *
 * The UDP checksum is the ones' complement sum of big-endian 16-bit words (the IPv4
 * pseudo-header, the UDP header, the payload, a last odd byte padded); the fill starts at UDP
 * offset 8 + SDP_GEN_HDR_LEN = 26, even, so it adds whole words of its own. The payload check
 * reads payload bytes [4, len) as n 32-bit little-endian words w_0 .. w_(n-1) (a last partial
 * word padded): a = sum w_i, b = sum (n - i) * w_i, both linear. w_0 .. w_3 (payload offsets 4,
 * 8, 12, 16: magic, seq, and flow with fill bytes 18 and 19) are summed per frame; the words
 * from payload offset 20 on are fill only, and tabulated.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_GEN_FRAME_H_
#define SDP_GEN_FRAME_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sdp_gen_payload.h"
#include "softdpu/sdp_pkt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The headers and the payload header up to the fill: the smallest frame. */
#define SDP_GEN_FRAME_HDR_LEN (SDP_GEN_L2L3L4_LEN + SDP_GEN_HDR_LEN)

/* What builds frames of one size and one set of addresses (about 15 KiB: no allocation). */
struct sdp_gen_frame {
	uint32_t size;	    /* frame size, SDP_GEN_FRAME_MIN..SDP_GEN_FRAME_MAX */
	uint32_t pl_len;    /* UDP payload length: size - 42 */
	uint32_t fill_len;  /* pl_len - SDP_GEN_HDR_LEN */
	uint32_t flows;	    /* flow = seq % flows */
	uint16_t sport;	    /* UDP source port of flow 0 */
	uint64_t ip_sum;    /* IPv4 header words but the id (and the checksum, 0) */
	uint64_t udp_sum;   /* pseudo-header, UDP header but the source port, magic */
	uint64_t a0, b0;    /* the check's a and b from w_0 (the magic) */
	uint64_t n;	    /* words of the check */
	uint32_t csum[256]; /* by seq mod 256: the fill's share of the UDP sum */
	uint64_t fa[256];   /* by seq mod 256: sum of w_i, i >= 4 */
	uint64_t fb[256];   /* by seq mod 256: sum of (n - i) * w_i, i >= 4 */
	uint8_t tmpl[SDP_GEN_FRAME_HDR_LEN];	  /* the constant bytes of the headers */
	uint8_t pattern[SDP_GEN_FRAME_MAX + 256]; /* pattern[i] = i mod 256 */
};

/*
 * Set g up for frames of size bytes (SDP_GEN_FRAME_MIN..SDP_GEN_FRAME_MAX) from src_mac to
 * dst_mac, src_ip to dst_ip (network byte order), UDP sport + flow to dport, flows flows
 * (at least 1). Returns 0 for a size or flows out of range, 1 otherwise.
 */
static inline int sdp_gen_frame_init(struct sdp_gen_frame *g, uint32_t size,
				     const uint8_t dst_mac[6], const uint8_t src_mac[6],
				     uint32_t src_ip, uint32_t dst_ip, uint16_t sport,
				     uint16_t dport, uint32_t flows)
{
	uint8_t *ip = g->tmpl + SDP_PKT_UDP4_IP, *udp = g->tmpl + SDP_PKT_UDP4_UDP;
	uint8_t *pl = g->tmpl + SDP_PKT_UDP4_PAYLOAD;
	uint32_t pl_len = size - SDP_GEN_L2L3L4_LEN;
	struct sdp_pkt_udp4 h;
	uint64_t n;

	if (size < SDP_GEN_FRAME_MIN || size > SDP_GEN_FRAME_MAX || flows == 0)
		return 0;
	g->size = size;
	g->pl_len = pl_len;
	g->fill_len = pl_len - SDP_GEN_HDR_LEN;
	g->flows = flows;
	g->sport = sport;
	n = (pl_len - SDP_GEN_OFF_MAGIC + 3) / 4;
	g->n = n;

	memset(g->tmpl, 0, sizeof(g->tmpl));
	memset(&h, 0, sizeof(h));
	h.dport = dport;
	h.ip_frag = SDP_PKT_IP4_DF;
	memcpy(h.dst_mac, dst_mac, 6);
	memcpy(h.src_mac, src_mac, 6);
	memcpy(h.src_ip, &src_ip, 4);
	memcpy(h.dst_ip, &dst_ip, 4);
	/* the IPv4 id, the source port and both checksums are 0 in the template */
	sdp_pkt_udp4_build(g->tmpl, size, &h);
	g->ip_sum = sdp_pkt_csum_add(0, ip, SDP_PKT_IP4_HLEN);
	sdp_pkt_put32(pl + SDP_GEN_OFF_MAGIC, SDP_GEN_MAGIC);
	/* the check, seq and flow are 0 in the template too */
	g->udp_sum = sdp_pkt_csum_add(sdp_pkt_pseudo_sum(ip, 4, SDP_PKT_PROTO_UDP, pl_len + 8), udp,
				      SDP_PKT_UDP_HLEN + SDP_GEN_HDR_LEN);
	g->a0 = __builtin_bswap32(SDP_GEN_MAGIC);
	g->b0 = n * g->a0;

	for (uint32_t i = 0; i < sizeof(g->pattern); i++)
		g->pattern[i] = (uint8_t)i;
	for (uint32_t s = 0; s < 256; s++) {
		const uint8_t *fill = g->pattern + ((s + SDP_GEN_HDR_LEN) & 255);
		uint64_t a = 0, b = 0;
		uint32_t k, i;

		g->csum[s] = (uint32_t)sdp_pkt_csum_add(0, fill, g->fill_len);
		/* words from payload offset 20 (word 4) on: fill only, fill[k - 18] at offset k */
		for (k = 20, i = 4; k + 4 <= pl_len; k += 4, i++) {
			const uint8_t *q = fill + k - SDP_GEN_HDR_LEN;
			uint32_t w = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 |
				     (uint32_t)q[3] << 24;

			a += w;
			b += (n - i) * w;
		}
		if (k < pl_len) { /* a last partial word, padded */
			uint32_t w = 0;

			for (uint32_t j = 0; k + j < pl_len; j++)
				w |= (uint32_t)fill[k + j - SDP_GEN_HDR_LEN] << (8 * j);
			a += w;
			b += (n - i) * w;
		}
		g->fa[s] = a;
		g->fb[s] = b;
	}
	return 1;
}

/* Write frame number seq into f (g->size bytes). */
static inline void sdp_gen_frame_build(const struct sdp_gen_frame *g, uint64_t seq, uint8_t *f)
{
	uint8_t *ip = f + SDP_PKT_UDP4_IP, *udp = f + SDP_PKT_UDP4_UDP,
		*pl = f + SDP_PKT_UDP4_PAYLOAD;
	uint32_t s = (uint32_t)seq & 255;
	uint16_t flow = (uint16_t)(g->flows == 1 ? 0 : seq % g->flows);
	uint16_t sport = (uint16_t)(g->sport + flow), id = (uint16_t)seq, c;
	uint32_t seq_hi = (uint32_t)(seq >> 32), seq_lo = (uint32_t)seq, check;
	uint32_t w1 = __builtin_bswap32(seq_hi), w2 = __builtin_bswap32(seq_lo);
	uint32_t w3 = (uint32_t)(flow >> 8) | (uint32_t)(flow & 0xff) << 8;
	uint64_t a, b, sum;
	uint64_t n = g->n;

	memcpy(f, g->tmpl, SDP_GEN_FRAME_HDR_LEN);
	memcpy(pl + SDP_GEN_HDR_LEN, g->pattern + ((s + SDP_GEN_HDR_LEN) & 255), g->fill_len);

	sdp_pkt_put16(ip + SDP_PKT_IP4_ID, id);
	sdp_pkt_put16(ip + SDP_PKT_IP4_CSUM, (uint16_t)~sdp_pkt_csum_fold(g->ip_sum + id));

	sdp_pkt_put16(udp + SDP_PKT_UDP_SPORT, sport);
	sdp_pkt_put32(pl + SDP_GEN_OFF_SEQ, seq_hi);
	sdp_pkt_put32(pl + SDP_GEN_OFF_SEQ + 4, seq_lo);
	sdp_pkt_put16(pl + SDP_GEN_OFF_FLOW, flow);

	/* w_3: flow (big endian), then fill bytes 18 and 19 where the payload has them */
	if (g->pl_len > SDP_GEN_HDR_LEN)
		w3 |= (uint32_t)(uint8_t)(seq + SDP_GEN_HDR_LEN) << 16;
	if (g->pl_len > SDP_GEN_HDR_LEN + 1)
		w3 |= (uint32_t)(uint8_t)(seq + SDP_GEN_HDR_LEN + 1) << 24;
	a = g->a0 + w1 + w2 + w3 + g->fa[s];
	b = g->b0 + (n - 1) * w1 + (n - 2) * w2 + (n - 3) * w3 + g->fb[s];
	check = (uint32_t)(a ^ b ^ (b >> 32));
	sdp_pkt_put32(pl + SDP_GEN_OFF_CHECK, check);

	sum = g->udp_sum + sport + (check >> 16) + (check & 0xffff) + (seq_hi >> 16) +
	      (seq_hi & 0xffff) + (seq_lo >> 16) + (seq_lo & 0xffff) + flow + g->csum[s];
	c = (uint16_t)~sdp_pkt_csum_fold(sum);
	sdp_pkt_put16(udp + SDP_PKT_UDP_CSUM, c == 0 ? 0xffff : c);
}

#ifdef __cplusplus
}
#endif

#endif /* SDP_GEN_FRAME_H_ */
