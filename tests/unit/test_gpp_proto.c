/*
 * The protocol work of the GPU packet processing application (samples/gpu_packet_processing/
 * gpp_proto.h) on the CPU: ICMP echo replies (every field, both checksums), DNS-like query
 * counting, the stateless HTTP/1.1 server over TCP through a whole connection (handshake,
 * request, response with FIN, the client's FIN acknowledged), 404/501/400 answers, and the
 * frames it must ignore (other host, bad checksums, fragments, wrong ack, RST, pure ACKs).
 * Every truncation of every valid request is fed too: no reply, no read past the frame (ASan).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpp_proto.h"
#include "softdpu/sdp_pkt.h"
#include "t_helpers.h"

static const struct gpp_host g_host = {.mac = {0x02, 0x53, 0x47, 0, 0, 1},
				       .ip = {10, 9, 8, 1},
				       .http_port = 80,
				       .udp_port = 53,
				       .isn_key = 0x12345678u};
static const uint8_t g_peer_mac[6] = {0x02, 0x53, 0x47, 0, 0, 2};
static const uint8_t g_peer_ip[4] = {10, 9, 8, 2};
static const char g_index[] = "<html><body>softdpu gpp</body></html>\n";
static const struct gpp_page g_pages[] = {
	{"/index.html", "text/html", g_index, sizeof(g_index) - 1},
	{"/hello.txt", "text/plain", "hello\n", 6},
};

/* Ethernet + IPv4 (+ one VLAN tag) from the peer to the host; returns the L4 offset. */
static uint32_t ip4_frame(uint8_t *f, int vlan, uint8_t proto, uint32_t l4_len)
{
	uint32_t l2 = SDP_PKT_ETH_HLEN;

	if (vlan) {
		sdp_pkt_eth_build(f, g_host.mac, g_peer_mac, SDP_PKT_ETHERTYPE_VLAN);
		sdp_pkt_put16(f + 14, 42);
		sdp_pkt_put16(f + 16, SDP_PKT_ETHERTYPE_IPV4);
		l2 += SDP_PKT_VLAN_HLEN;
	} else {
		sdp_pkt_eth_build(f, g_host.mac, g_peer_mac, SDP_PKT_ETHERTYPE_IPV4);
	}
	sdp_pkt_ip4_build(f + l2, (uint16_t)(SDP_PKT_IP4_HLEN + l4_len), 77, SDP_PKT_IP4_DF, proto,
			  g_peer_ip, g_host.ip);
	sdp_pkt_ip4_csum_set(f + l2);
	return l2 + SDP_PKT_IP4_HLEN;
}

static uint32_t echo_request(uint8_t *f, int vlan, uint32_t data_len)
{
	uint32_t off = ip4_frame(f, vlan, SDP_PKT_PROTO_ICMP, GPP_ICMP_HLEN + data_len);
	uint8_t *icmp = f + off;

	icmp[0] = GPP_ICMP_ECHO_REQUEST;
	icmp[1] = 0;
	sdp_pkt_put16(icmp + 2, 0);
	sdp_pkt_put16(icmp + 4, 0x1234);
	sdp_pkt_put16(icmp + 6, 7);
	for (uint32_t i = 0; i < data_len; i++)
		icmp[GPP_ICMP_HLEN + i] = (uint8_t)(i * 3);
	sdp_pkt_put16(icmp + 2, sdp_pkt_csum(icmp, GPP_ICMP_HLEN + data_len));
	return off + GPP_ICMP_HLEN + data_len;
}

/* A TCP segment from the peer's port sport to the host's HTTP port. */
static uint32_t tcp_segment(uint8_t *f, uint16_t sport, uint32_t seq, uint32_t ack, uint8_t flags,
			    const char *data)
{
	uint32_t dlen = data != NULL ? (uint32_t)strlen(data) : 0;
	uint32_t off = ip4_frame(f, 0, SDP_PKT_PROTO_TCP, SDP_PKT_TCP_HLEN + dlen);

	sdp_pkt_tcp_build(f + off, sport, 80, seq, ack, flags, 29200);
	memcpy(f + off + SDP_PKT_TCP_HLEN, data != NULL ? data : "", dlen);
	sdp_pkt_tcp_csum_set(
		f + off, SDP_PKT_TCP_HLEN + dlen,
		sdp_pkt_pseudo_sum(f + 14, 4, SDP_PKT_PROTO_TCP, SDP_PKT_TCP_HLEN + dlen));
	return off + SDP_PKT_TCP_HLEN + dlen;
}

/* A reply must be a valid IPv4 frame from the host back to the peer. */
static void check_reply_ip(const uint8_t *r, uint32_t len, uint32_t l2, uint8_t proto)
{
	struct sdp_pkt_info info;
	int l3_ok = 0, l4_ok = 0;

	T_TRUE(sdp_pkt_parse(r, len, &info) == 1);
	T_EQ_INT(info.l3_off, l2);
	T_EQ_INT(info.proto, proto);
	T_TRUE(memcmp(r, g_peer_mac, 6) == 0 && memcmp(r + 6, g_host.mac, 6) == 0);
	T_TRUE(memcmp(r + l2 + SDP_PKT_IP4_SRC, g_host.ip, 4) == 0);
	T_TRUE(memcmp(r + l2 + SDP_PKT_IP4_DST, g_peer_ip, 4) == 0);
	T_EQ_INT(sdp_pkt_get16(r + l2 + SDP_PKT_IP4_TOTAL_LEN), len - l2);
	sdp_pkt_csum_check(r, len, &l3_ok, &l4_ok);
	T_TRUE(l3_ok);
	if (proto != SDP_PKT_PROTO_ICMP)
		T_TRUE(l4_ok);
}

/* Every shorter copy of a valid request gets no reply (and reads nothing past its end). */
static void check_truncations(const uint8_t *f, uint32_t len, int kind)
{
	uint8_t out[GPP_MAX_FRAME + 64];
	uint32_t replies = 0;

	for (uint32_t n = 0; n < len; n++) {
		uint8_t *copy = malloc(n > 0 ? n : 1);

		memcpy(copy, f, n);
		if (kind == 0)
			replies += gpp_icmp_echo(&g_host, copy, n, out, sizeof(out)) != 0;
		else if (kind == 1)
			replies += (uint32_t)gpp_udp_query(&g_host, copy, n);
		else
			replies +=
				gpp_http(&g_host, g_pages, 2, copy, n, -1, out, sizeof(out)) != 0;
		free(copy);
	}
	T_EQ_INT(replies, 0);
}

static void test_icmp(void)
{
	uint8_t f[GPP_MAX_FRAME], out[GPP_MAX_FRAME + 64];
	uint32_t len, n;

	for (int vlan = 0; vlan <= 1; vlan++) {
		uint32_t l2 = vlan ? 18 : 14;

		len = echo_request(f, vlan, 56);
		n = gpp_icmp_echo(&g_host, f, len, out, sizeof(out));
		T_EQ_INT(n, len);
		check_reply_ip(out, n, l2, SDP_PKT_PROTO_ICMP);
		T_EQ_INT(out[l2 + 20], GPP_ICMP_ECHO_REPLY);
		T_EQ_INT(sdp_pkt_csum_fold(sdp_pkt_csum_add(0, out + l2 + 20, n - l2 - 20)),
			 0xffff);
		/* identifier, sequence and data unchanged; the VLAN tag kept */
		T_TRUE(memcmp(out + l2 + 24, f + l2 + 24, n - l2 - 24) == 0);
		if (vlan)
			T_EQ_INT(sdp_pkt_get16(out + 14), 42);
		check_truncations(f, len, 0);
	}
	/* too small an output: nothing written */
	len = echo_request(f, 0, 56);
	T_EQ_INT(gpp_icmp_echo(&g_host, f, len, out, len - 1), 0);
	/* not for us, a reply, a bad ICMP or IP checksum, a fragment: ignored */
	f[0] ^= 1;
	T_EQ_INT(gpp_icmp_echo(&g_host, f, len, out, sizeof(out)), 0);
	len = echo_request(f, 0, 56);
	f[34] = GPP_ICMP_ECHO_REPLY;
	T_EQ_INT(gpp_icmp_echo(&g_host, f, len, out, sizeof(out)), 0);
	len = echo_request(f, 0, 56);
	f[40] ^= 0xff;
	T_EQ_INT(gpp_icmp_echo(&g_host, f, len, out, sizeof(out)), 0);
	len = echo_request(f, 0, 56);
	f[14 + SDP_PKT_IP4_TTL] ^= 1; /* the IP checksum no longer fits */
	T_EQ_INT(gpp_icmp_echo(&g_host, f, len, out, sizeof(out)), 0);
	len = echo_request(f, 0, 56);
	sdp_pkt_put16(f + 14 + SDP_PKT_IP4_FRAG, SDP_PKT_IP4_MF);
	sdp_pkt_ip4_csum_set(f + 14);
	T_EQ_INT(gpp_icmp_echo(&g_host, f, len, out, sizeof(out)), 0);
}

static uint32_t dns_query(uint8_t *f, uint16_t dport, uint8_t flags0, uint16_t qdcount)
{
	uint32_t off = ip4_frame(f, 0, SDP_PKT_PROTO_UDP, SDP_PKT_UDP_HLEN + 29);
	uint8_t *d = f + off + SDP_PKT_UDP_HLEN;

	sdp_pkt_udp_build(f + off, 5353, dport, SDP_PKT_UDP_HLEN + 29);
	memset(d, 0, 29);
	sdp_pkt_put16(d, 0xabcd);
	d[2] = flags0;
	sdp_pkt_put16(d + 4, qdcount);
	memcpy(d + 12, "\x07softdpu\x03org\x00\x00\x01\x00\x01", 17);
	return off + SDP_PKT_UDP_HLEN + 29;
}

static void test_udp(void)
{
	uint8_t f[256];
	uint32_t len = dns_query(f, 53, 0x01, 1);

	T_EQ_INT(gpp_udp_query(&g_host, f, len), 1);
	check_truncations(f, len, 1);
	len = dns_query(f, 53, 0x81, 1); /* a response */
	T_EQ_INT(gpp_udp_query(&g_host, f, len), 0);
	len = dns_query(f, 53, 0x01, 0); /* no question */
	T_EQ_INT(gpp_udp_query(&g_host, f, len), 0);
	len = dns_query(f, 54, 0x01, 1); /* another port */
	T_EQ_INT(gpp_udp_query(&g_host, f, len), 0);
	len = dns_query(f, 53, 0x01, 1);
	sdp_pkt_put16(f + 34 + SDP_PKT_UDP_LEN, 400); /* longer than the datagram */
	T_EQ_INT(gpp_udp_query(&g_host, f, len), 0);
}

/* The TCP header fields of a reply (no VLAN). */
struct tcp_view {
	uint32_t seq, ack, dlen;
	uint8_t flags;
	const uint8_t *data;
};

static struct tcp_view tcp_of(const uint8_t *r, uint32_t len)
{
	const uint8_t *t = r + 34;
	struct tcp_view v = {sdp_pkt_get32(t + 4), sdp_pkt_get32(t + 8), len - 54, t[13], t + 20};

	T_EQ_INT(sdp_pkt_get16(t), 80);
	T_EQ_INT(sdp_pkt_get16(t + 2), 40000);
	return v;
}

static void test_http(void)
{
	uint8_t f[GPP_MAX_FRAME], out[GPP_MAX_FRAME + 64];
	const char *get = "GET /index.html HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\n\r\n";
	char want[512];
	uint32_t len, n, isn;
	struct tcp_view v;

	/* SYN -> SYN-ACK */
	len = tcp_segment(f, 40000, 1000, 0, GPP_TCP_SYN, NULL);
	n = gpp_http(&g_host, g_pages, 2, f, len, -1, out, sizeof(out));
	T_EQ_INT(n, 54);
	check_reply_ip(out, n, 14, SDP_PKT_PROTO_TCP);
	v = tcp_of(out, n);
	T_EQ_INT(v.flags, GPP_TCP_SYN | GPP_TCP_ACK);
	T_EQ_INT(v.ack, 1001);
	isn = v.seq;
	check_truncations(f, len, 2);
	/* a retransmitted SYN gets the same answer (no state) */
	T_EQ_INT(gpp_http(&g_host, g_pages, 2, f, len, -1, out, sizeof(out)), 54);
	T_EQ_INT(tcp_of(out, 54).seq, isn);
	/* the handshake's ACK: nothing */
	len = tcp_segment(f, 40000, 1001, isn + 1, GPP_TCP_ACK, NULL);
	T_EQ_INT(gpp_http(&g_host, g_pages, 2, f, len, -1, out, sizeof(out)), 0);
	/* the request -> the whole response with FIN */
	len = tcp_segment(f, 40000, 1001, isn + 1, GPP_TCP_ACK | GPP_TCP_PSH, get);
	n = gpp_http(&g_host, g_pages, 2, f, len, -1, out, sizeof(out));
	T_TRUE(n > 54);
	check_reply_ip(out, n, 14, SDP_PKT_PROTO_TCP);
	v = tcp_of(out, n);
	T_EQ_INT(v.flags, GPP_TCP_ACK | GPP_TCP_PSH | GPP_TCP_FIN);
	T_EQ_INT(v.seq, isn + 1);
	T_EQ_INT(v.ack, 1001 + (uint32_t)strlen(get));
	snprintf(want, sizeof(want),
		 "HTTP/1.1 200 OK\r\nServer: softdpu-gpp\r\nContent-Type: text/html\r\n"
		 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
		 strlen(g_index), g_index);
	T_EQ_INT(v.dlen, strlen(want));
	T_TRUE(memcmp(v.data, want, v.dlen) == 0);
	check_truncations(f, len, 2);
	/* the client's FIN (after our FIN was acknowledged) -> its ACK */
	len = tcp_segment(f, 40000, 1001 + (uint32_t)strlen(get), isn + 2 + v.dlen,
			  GPP_TCP_ACK | GPP_TCP_FIN, NULL);
	n = gpp_http(&g_host, g_pages, 2, f, len, -1, out, sizeof(out));
	T_EQ_INT(n, 54);
	v = tcp_of(out, n);
	T_EQ_INT(v.flags, GPP_TCP_ACK);
	T_EQ_INT(v.ack, 1002 + (uint32_t)strlen(get));
	/* 404, 501, 400 */
	len = tcp_segment(f, 40000, 1001, isn + 1, GPP_TCP_ACK,
			  "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
	n = gpp_http(&g_host, g_pages, 2, f, len, -1, out, sizeof(out));
	T_TRUE(n > 54 && memcmp(out + 54, "HTTP/1.1 404 Not Found\r\n", 24) == 0);
	len = tcp_segment(f, 40000, 1001, isn + 1, GPP_TCP_ACK, "POST / HTTP/1.1\r\n\r\n");
	n = gpp_http(&g_host, g_pages, 2, f, len, -1, out, sizeof(out));
	T_TRUE(n > 54 && memcmp(out + 54, "HTTP/1.1 501 Not Implemented\r\n", 30) == 0);
	len = tcp_segment(f, 40000, 1001, isn + 1, GPP_TCP_ACK, "GET\r\n\r\n");
	n = gpp_http(&g_host, g_pages, 2, f, len, -1, out, sizeof(out));
	T_TRUE(n > 54 && memcmp(out + 54, "HTTP/1.1 400 Bad Request\r\n", 26) == 0);
	/* a request whose ack is not ours, an RST, another port, a bad checksum: ignored */
	len = tcp_segment(f, 40000, 1001, isn + 7, GPP_TCP_ACK, get);
	T_EQ_INT(gpp_http(&g_host, g_pages, 2, f, len, -1, out, sizeof(out)), 0);
	len = tcp_segment(f, 40000, 1001, isn + 1, GPP_TCP_RST | GPP_TCP_ACK, NULL);
	T_EQ_INT(gpp_http(&g_host, g_pages, 2, f, len, -1, out, sizeof(out)), 0);
	len = tcp_segment(f, 40000, 1001, isn + 1, GPP_TCP_ACK, get);
	f[54] ^= 1;
	T_EQ_INT(gpp_http(&g_host, g_pages, 2, f, len, -1, out, sizeof(out)), 0);
	/* the NIC's verdict on the TCP checksum wins: a sender's offloaded (partial) checksum
	 * that the NIC passed is answered, a segment the NIC failed is not */
	len = tcp_segment(f, 40000, 1001, isn + 1, GPP_TCP_ACK, get);
	sdp_pkt_put16(f + 34 + SDP_PKT_TCP_CSUM, 0x1234);
	T_TRUE(gpp_http(&g_host, g_pages, 2, f, len, 1, out, sizeof(out)) > 54);
	T_EQ_INT(gpp_http(&g_host, g_pages, 2, f, len, -1, out, sizeof(out)), 0);
	len = tcp_segment(f, 40000, 1001, isn + 1, GPP_TCP_ACK, get);
	T_EQ_INT(gpp_http(&g_host, g_pages, 2, f, len, 0, out, sizeof(out)), 0);
	/* a response that does not fit the output: nothing */
	len = tcp_segment(f, 40000, 1001, isn + 1, GPP_TCP_ACK, get);
	T_EQ_INT(gpp_http(&g_host, g_pages, 2, f, len, -1, out, 100), 0);
	/* another client: another ISN */
	len = tcp_segment(f, 40001, 5, 0, GPP_TCP_SYN, NULL);
	n = gpp_http(&g_host, g_pages, 2, f, len, -1, out, sizeof(out));
	T_EQ_INT(n, 54);
	T_TRUE(sdp_pkt_get32(out + 34 + 4) != isn);
}

int main(void)
{
	test_icmp();
	test_udp();
	test_http();
	T_DONE();
}
