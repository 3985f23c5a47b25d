/*
 * The gen frame builder (src/providers/gen/sdp_gen_frame.h): every frame it builds is byte for
 * byte the frame of the straightforward builder kept here (the headers by sdp_pkt.h's builders,
 * the fill written byte by byte, sdp_gen_check(), then both checksums over the whole frame), for
 * sizes around the odd and even edges, seq values across the 8-, 16- and 32-bit boundaries and
 * one or several flows.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdp_gen_frame.h"
#include "sdp_gen_payload.h"
#include "softdpu/sdp_pkt.h"
#include "t_helpers.h"

struct ref_cfg {
	uint8_t mac[6];
	uint8_t src_mac[6];
	uint32_t size;
	uint32_t flows;
	uint32_t src_ip; /* network byte order */
	uint32_t dst_ip;
	uint16_t sport;
	uint16_t dport;
};

/* ---- the reference: the format of sdp_gen_payload.h, written field by field ------------------ */

/* Store v big-endian in n bytes at p. */
static void ref_be(uint8_t *p, uint64_t v, int n)
{
	for (int k = n - 1; k >= 0; k--, v >>= 8)
		p[k] = (uint8_t)v;
}

static void ref_frame(const struct ref_cfg *cfg, uint64_t seq, uint8_t *f)
{
	const uint32_t pl_off = SDP_PKT_UDP4_PAYLOAD;
	const uint16_t flow = (uint16_t)(seq % cfg->flows);
	struct sdp_pkt_udp4 h = {.sport = (uint16_t)(cfg->sport + flow),
				 .dport = cfg->dport,
				 .ip_id = (uint16_t)(seq & 0xffffu),
				 .ip_frag = SDP_PKT_IP4_DF};

	memset(f, 0, cfg->size);
	/* Ethernet, IPv4 (id = seq, DF, TTL 64, UDP) and UDP headers, the lengths from the size */
	memcpy(h.dst_mac, cfg->mac, 6);
	memcpy(h.src_mac, cfg->src_mac, 6);
	memcpy(h.src_ip, &cfg->src_ip, 4);
	memcpy(h.dst_ip, &cfg->dst_ip, 4);
	sdp_pkt_udp4_build(f, cfg->size, &h);
	/* the payload: magic, seq, flow, fill, and the check over [4, end) */
	ref_be(f + pl_off + SDP_GEN_OFF_MAGIC, SDP_GEN_MAGIC, 4);
	ref_be(f + pl_off + SDP_GEN_OFF_SEQ, seq, 8);
	ref_be(f + pl_off + SDP_GEN_OFF_FLOW, flow, 2);
	for (uint32_t k = SDP_GEN_HDR_LEN; pl_off + k < cfg->size; k++)
		f[pl_off + k] = (uint8_t)((seq + k) & 0xff);
	ref_be(f + pl_off + SDP_GEN_OFF_CHECK,
	       sdp_gen_check(f + pl_off + SDP_GEN_OFF_MAGIC,
			     cfg->size - pl_off - SDP_GEN_OFF_MAGIC),
	       4);
	/* both checksums over the whole headers and datagram (a UDP 0 is sent as 0xffff) */
	sdp_pkt_csum_fill(f, cfg->size, 1, 1);
}

/* ---- the comparison -------------------------------------------------------------------------- */

static struct sdp_gen_frame g_frame;
static uint8_t g_got[SDP_GEN_FRAME_MAX + 64], g_want[SDP_GEN_FRAME_MAX + 64];
static unsigned long g_frames;

/* Build frame seq both ways and compare (and the guard bytes past the frame stay put). */
static void compare(const struct ref_cfg *cfg, uint64_t seq)
{
	memset(g_got, 0xa5, sizeof(g_got));
	memset(g_want, 0xa5, sizeof(g_want));
	sdp_gen_frame_build(&g_frame, seq, g_got);
	ref_frame(cfg, seq, g_want);
	g_frames++;
	if (memcmp(g_got, g_want, sizeof(g_got)) != 0) {
		uint32_t i = 0;

		while (g_got[i] == g_want[i])
			i++;
		t_fail("size %u, flows %u, seq %llu: byte %u is 0x%02x, want 0x%02x", cfg->size,
		       cfg->flows, (unsigned long long)seq, i, g_got[i], g_want[i]);
	}
}

static void check_cfg(const struct ref_cfg *cfg)
{
	static const uint64_t seqs[] = {0,	    1,
					2,	    3,
					255,	    256,
					257,	    65535,
					65536,	    0xffffffffu,
					1ull << 32, (1ull << 32) + 7,
					UINT64_MAX, 0x0123456789abcdefull};

	if (!sdp_gen_frame_init(&g_frame, cfg->size, cfg->mac, cfg->src_mac, cfg->src_ip,
				cfg->dst_ip, cfg->sport, cfg->dport, cfg->flows)) {
		t_fail("sdp_gen_frame_init refused size %u, flows %u", cfg->size, cfg->flows);
		return;
	}
	for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++)
		compare(cfg, seqs[i]);
	/* every seq mod 256, and the flows cycling */
	for (uint64_t seq = 1000; seq < 1000 + 300; seq++)
		compare(cfg, seq);
}

int main(void)
{
	static const uint32_t sizes[] = {60,  61,  62,	 63,   64,   65,   66,	 67,   128,
					 512, 513, 1023, 1024, 1514, 1515, 8192, 8999, 9000};
	static const uint8_t mac[6] = {0x02, 0x47, 0x12, 0x34, 0x56, 0x78};
	static const uint8_t src_mac[6] = {0x02, 0x67, 0x9a, 0xbc, 0xde, 0xf0};
	static const struct {
		uint32_t flows;
		const char *src, *dst;
		uint16_t sport, dport;
	} addrs[] = {{1, "10.0.0.1", "10.0.0.2", 1024, 5001},
		     {7, "192.168.255.254", "255.255.255.255", 65529, 65535},
		     {65536, "0.0.0.0", "0.0.0.0", 0, 1}};
	struct ref_cfg cfg;

	memcpy(cfg.mac, mac, 6);
	memcpy(cfg.src_mac, src_mac, 6);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		cfg.size = sizes[i];
		/* the defaults of gen, then many flows and other addresses */
		for (size_t k = 0; k < sizeof(addrs) / sizeof(addrs[0]); k++) {
			cfg.flows = addrs[k].flows;
			cfg.src_ip = inet_addr(addrs[k].src);
			cfg.dst_ip = inet_addr(addrs[k].dst);
			cfg.sport = addrs[k].sport;
			cfg.dport = addrs[k].dport;
			check_cfg(&cfg);
		}
	}
	/* sizes and flows out of range are refused */
	T_EQ_INT(sdp_gen_frame_init(&g_frame, 59, mac, src_mac, 0, 0, 1, 1, 1), 0);
	T_EQ_INT(sdp_gen_frame_init(&g_frame, 9001, mac, src_mac, 0, 0, 1, 1, 1), 0);
	T_EQ_INT(sdp_gen_frame_init(&g_frame, 64, mac, src_mac, 0, 0, 1, 1, 0), 0);
	printf("%lu frames compared\n", g_frames);
	T_DONE();
}
