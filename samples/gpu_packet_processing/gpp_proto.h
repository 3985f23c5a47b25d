/*
 * softdpu's GPU packet processing application: the protocol work of its kernels, one function
 * per kind of request, the same code on the CPU (unit tests, the application's CPU mode) and in
 * CUDA kernels (every function is __host__ __device__ under nvcc). Header-only; C (gnu11), C++17
 * and nvcc. Frames are untrusted: every function checks lengths against the frame before it
 * reads, and answers only what is addressed to its host and well formed.
 *
 *   gpp_icmp_echo(host, in, len, out, cap)   an ICMP echo request to host -> the echo reply
 *   gpp_udp_query(host, in, len)             a DNS-like query to host's UDP port -> 1
 *   gpp_http(host, pages, n, in, len, l4_ok, out, cap)
 *                                            a minimal, stateless HTTP/1.1 server over TCP
 *                                            (l4_ok: 1 the NIC verified the TCP checksum, as
 *                                            it does for a sender that left it to offload;
 *                                            0 the NIC found it wrong; -1 verify it here):
 *       SYN to host's HTTP port          -> SYN-ACK (initial sequence number from a keyed hash
 *                                           of the connection, so no state is kept);
 *       a segment carrying a whole GET   -> one segment with the whole response and FIN
 *       request (ack = our ISN + 1)         ("Connection: close"): 200 with the page, 404;
 *                                           501 for another method, 400 for a malformed line
 *       FIN from the client              -> its ACK
 *       anything else (pure ACKs, RST)   -> nothing
 * Each returns the length of the reply frame written to out (0: no reply). IPv4, untagged or
 * with one 802.1Q tag (kept in the reply); IP options are accepted and not copied.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef GPP_PROTO_H_
#define GPP_PROTO_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "softdpu/sdp_pkt.h"

#if defined(__CUDACC__)
#define GPP_FN __host__ __device__ static inline
#else
#define GPP_FN static inline
#endif

#define GPP_ICMP_ECHO_REPLY 0
#define GPP_ICMP_ECHO_REQUEST 8
#define GPP_ICMP_HLEN 8
#define GPP_TCP_FIN 0x01
#define GPP_TCP_SYN 0x02
#define GPP_TCP_RST 0x04
#define GPP_TCP_PSH 0x08
#define GPP_TCP_ACK 0x10
#define GPP_TCP_WINDOW 65535
#define GPP_DNS_HLEN 12	   /* a DNS header: id, flags, four counts */
#define GPP_MAX_FRAME 1514 /* replies fit one standard frame */

/* memcmp(a, b, n) == 0 (memcmp has no device version). */
GPP_FN int gpp_memeq(const void *a, const void *b, uint32_t n)
{
	const uint8_t *x = (const uint8_t *)a, *y = (const uint8_t *)b;

	for (uint32_t i = 0; i < n; i++)
		if (x[i] != y[i])
			return 0;
	return 1;
}

/* Who answers: the host's MAC, IPv4 address (network order), ports and the ISN key. */
struct gpp_host {
	uint8_t mac[6];
	uint8_t ip[4];
	uint16_t http_port; /* TCP, usually 80 */
	uint16_t udp_port;  /* DNS-like queries, usually 53 */
	uint32_t isn_key;   /* secret of the initial sequence numbers */
};

/* One built-in page. */
struct gpp_page {
	const char *path; /* "/index.html" */
	const char *type; /* "text/html" */
	const char *body;
	uint32_t body_len;
};

/* The headers of an IPv4 frame for this host (gpp_parse). */
struct gpp_ip4 {
	uint32_t l2_len; /* 14, or 18 with a VLAN tag */
	uint32_t ip_off;
	uint32_t ihl;
	uint32_t l4_off;
	uint32_t l4_len; /* from the IP total length, inside the frame */
	uint8_t proto;
};

/*
 * An IPv4 frame to host (its MAC and address), header checksum right, not a fragment: 1 with
 * the offsets, else 0.
 */
GPP_FN int gpp_parse(const struct gpp_host *host, const uint8_t *f, uint32_t len, struct gpp_ip4 *p)
{
	struct sdp_pkt_info info;
	const uint8_t *ip;

	if (len > 65535 || !sdp_pkt_parse(f, len, &info) || info.ip_ver != 4 || info.l4_off == 0)
		return 0;
	ip = f + info.l3_off;
	if (!gpp_memeq(f + SDP_PKT_ETH_DST, host->mac, 6) ||
	    !gpp_memeq(ip + SDP_PKT_IP4_DST, host->ip, 4) || !sdp_pkt_ip4_csum_ok(ip) ||
	    (sdp_pkt_get16(ip + SDP_PKT_IP4_FRAG) & SDP_PKT_IP4_MF) != 0)
		return 0;
	p->l2_len = info.l3_off;
	p->ip_off = info.l3_off;
	p->ihl = sdp_pkt_ip4_hlen(ip);
	p->l4_off = info.l4_off;
	p->l4_len = info.l4_len;
	p->proto = info.proto;
	return 1;
}

/*
 * The reply's Ethernet (+ the same VLAN tag) and IPv4 headers (no options) into out, addressed
 * back to the sender of in; l4_len bytes of transport follow. Returns the transport offset.
 */
GPP_FN uint32_t gpp_reply_headers(const struct gpp_host *host, const uint8_t *in,
				  const struct gpp_ip4 *p, uint8_t *out, uint32_t l4_len,
				  uint8_t proto, uint16_t ip_id)
{
	const uint8_t *ip = in + p->ip_off;
	uint8_t *oip = out + p->l2_len;

	memcpy(out + SDP_PKT_ETH_DST, in + SDP_PKT_ETH_SRC, 6);
	memcpy(out + SDP_PKT_ETH_SRC, host->mac, 6);
	memcpy(out + SDP_PKT_ETH_TYPE, in + SDP_PKT_ETH_TYPE, p->l2_len - SDP_PKT_ETH_TYPE);
	sdp_pkt_ip4_build(oip, (uint16_t)(SDP_PKT_IP4_HLEN + l4_len), ip_id, SDP_PKT_IP4_DF, proto,
			  host->ip, ip + SDP_PKT_IP4_SRC);
	sdp_pkt_ip4_csum_set(oip);
	return p->l2_len + SDP_PKT_IP4_HLEN;
}

/* ---- ICMP ------------------------------------------------------------------------------------ */

GPP_FN uint32_t gpp_icmp_echo(const struct gpp_host *host, const uint8_t *in, uint32_t len,
			      uint8_t *out, uint32_t cap)
{
	struct gpp_ip4 p;
	const uint8_t *icmp;
	uint32_t off, n;
	uint8_t *o;

	if (!gpp_parse(host, in, len, &p) || p.proto != SDP_PKT_PROTO_ICMP ||
	    p.l4_len < GPP_ICMP_HLEN)
		return 0;
	icmp = in + p.l4_off;
	if (icmp[0] != GPP_ICMP_ECHO_REQUEST || icmp[1] != 0 ||
	    sdp_pkt_csum_fold(sdp_pkt_csum_add(0, icmp, p.l4_len)) != 0xffff)
		return 0;
	n = p.l2_len + SDP_PKT_IP4_HLEN + p.l4_len;
	if (n > cap)
		return 0;
	off = gpp_reply_headers(host, in, &p, out, p.l4_len, SDP_PKT_PROTO_ICMP,
				sdp_pkt_get16(in + p.ip_off + SDP_PKT_IP4_ID));
	o = out + off;
	memcpy(o, icmp, p.l4_len); /* identifier, sequence and data come back unchanged */
	o[0] = GPP_ICMP_ECHO_REPLY;
	sdp_pkt_put16(o + 2, 0);
	sdp_pkt_put16(o + 2, (uint16_t)~sdp_pkt_csum_fold(sdp_pkt_csum_add(0, o, p.l4_len)));
	return n;
}

/* ---- UDP ------------------------------------------------------------------------------------- */

GPP_FN int gpp_udp_query(const struct gpp_host *host, const uint8_t *in, uint32_t len)
{
	struct gpp_ip4 p;
	const uint8_t *udp;
	uint32_t ulen;

	if (!gpp_parse(host, in, len, &p) || p.proto != SDP_PKT_PROTO_UDP ||
	    p.l4_len < SDP_PKT_UDP_HLEN + GPP_DNS_HLEN)
		return 0;
	udp = in + p.l4_off;
	ulen = sdp_pkt_get16(udp + SDP_PKT_UDP_LEN);
	if (sdp_pkt_get16(udp + SDP_PKT_UDP_DPORT) != host->udp_port || ulen > p.l4_len ||
	    ulen < SDP_PKT_UDP_HLEN + GPP_DNS_HLEN)
		return 0;
	/* a query: QR (the first bit of the flags) 0, at least one question */
	return (udp[SDP_PKT_UDP_HLEN + 2] & 0x80) == 0 &&
	       sdp_pkt_get16(udp + SDP_PKT_UDP_HLEN + 4) != 0;
}

/* ---- TCP / HTTP ------------------------------------------------------------------------------ */

/* The initial sequence number of a connection: a keyed mix of its addresses and ports. */
GPP_FN uint32_t gpp_isn(const struct gpp_host *host, const uint8_t *ip, const uint8_t *tcp)
{
	uint32_t h = host->isn_key ^ 0x9e3779b9u;
	uint32_t words[3] = {sdp_pkt_get32(ip + SDP_PKT_IP4_SRC),
			     sdp_pkt_get32(ip + SDP_PKT_IP4_DST),
			     sdp_pkt_get32(tcp + SDP_PKT_TCP_SPORT)};

	for (int i = 0; i < 3; i++) {
		h ^= words[i];
		h *= 0x85ebca6bu;
		h ^= h >> 13;
		h *= 0xc2b2ae35u;
		h ^= h >> 16;
	}
	return h;
}

/* Append n bytes of s at out[*pos], within cap; 0 when they do not fit. */
GPP_FN int gpp_put(uint8_t *out, uint32_t *pos, uint32_t cap, const char *s, uint32_t n)
{
	if (*pos + n > cap)
		return 0;
	memcpy(out + *pos, s, n);
	*pos += n;
	return 1;
}

GPP_FN uint32_t gpp_strlen(const char *s)
{
	uint32_t n = 0;

	while (s[n] != '\0')
		n++;
	return n;
}

GPP_FN int gpp_put_str(uint8_t *out, uint32_t *pos, uint32_t cap, const char *s)
{
	return gpp_put(out, pos, cap, s, gpp_strlen(s));
}

GPP_FN int gpp_put_u32(uint8_t *out, uint32_t *pos, uint32_t cap, uint32_t v)
{
	char d[10];
	uint32_t n = 0;

	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	if (*pos + n > cap)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		out[(*pos)++] = (uint8_t)d[n - 1 - i];
	return 1;
}

/* Status lines and bodies of the answers without a page (no static tables: device code). */
GPP_FN const char *gpp_http_status(uint32_t code)
{
	switch (code) {
	case 0:
		return "200 OK";
	case 1:
		return "404 Not Found";
	case 2:
		return "501 Not Implemented";
	default:
		return "400 Bad Request";
	}
}

GPP_FN const char *gpp_http_msg(uint32_t code)
{
	switch (code) {
	case 1:
		return "not found\n";
	case 2:
		return "not implemented\n";
	default:
		return "bad request\n";
	}
}

/*
 * The HTTP response to the request in req[0, n) into out (at most cap bytes); its length, or 0
 * when it would not fit. A request is one segment that holds the request line and the end of
 * the headers (an empty line).
 */
GPP_FN uint32_t gpp_http_response(const struct gpp_page *pages, uint32_t nb_pages,
				  const uint8_t *req, uint32_t n, uint8_t *out, uint32_t cap)
{
	uint32_t line_end = 0, path_end, code = 3, pos = 0, blen;
	const struct gpp_page *page = NULL;
	const char *body, *type = "text/plain";

	while (line_end + 1 < n && !(req[line_end] == '\r' && req[line_end + 1] == '\n'))
		line_end++;
	/* the request line ends, and so do the headers (an empty line), within the segment */
	if (line_end + 1 < n && n >= 4 && gpp_memeq(req + n - 4, "\r\n\r\n", 4)) {
		uint32_t sp = 0, upper = 1;

		while (sp < line_end && req[sp] != ' ') {
			upper = upper && req[sp] >= 'A' && req[sp] <= 'Z';
			sp++;
		}
		if (sp == 3 && gpp_memeq(req, "GET", 3) && sp < line_end) {
			path_end = sp + 1;
			while (path_end < line_end && req[path_end] != ' ')
				path_end++;
			if (path_end + 9 == line_end && gpp_memeq(req + path_end, " HTTP/1.", 8) &&
			    (req[line_end - 1] == '0' || req[line_end - 1] == '1') &&
			    path_end > sp + 1 && req[sp + 1] == '/') {
				code = 1;
				for (uint32_t i = 0; i < nb_pages; i++) {
					uint32_t pl = gpp_strlen(pages[i].path);

					if (pl == path_end - sp - 1 &&
					    gpp_memeq(req + sp + 1, pages[i].path, pl)) {
						page = &pages[i];
						code = 0;
						break;
					}
				}
			}
		} else if (sp > 0 && sp < line_end && upper) {
			code = 2; /* another method */
		}
	}
	body = page != NULL ? page->body : gpp_http_msg(code);
	blen = page != NULL ? page->body_len : gpp_strlen(body);
	if (page != NULL)
		type = page->type;
	if (!gpp_put_str(out, &pos, cap, "HTTP/1.1 ") ||
	    !gpp_put_str(out, &pos, cap, gpp_http_status(code)) ||
	    !gpp_put_str(out, &pos, cap, "\r\nServer: softdpu-gpp\r\nContent-Type: ") ||
	    !gpp_put_str(out, &pos, cap, type) ||
	    !gpp_put_str(out, &pos, cap, "\r\nContent-Length: ") ||
	    !gpp_put_u32(out, &pos, cap, blen) ||
	    !gpp_put_str(out, &pos, cap, "\r\nConnection: close\r\n\r\n") ||
	    !gpp_put(out, &pos, cap, body, blen))
		return 0;
	return pos;
}

GPP_FN uint32_t gpp_http(const struct gpp_host *host, const struct gpp_page *pages,
			 uint32_t nb_pages, const uint8_t *in, uint32_t len, int l4_ok,
			 uint8_t *out, uint32_t cap)
{
	struct gpp_ip4 p;
	const uint8_t *ip, *tcp;
	uint32_t thl, plen, seq, ack, isn, off, rlen = 0, l4;
	uint8_t flags, oflags;
	uint8_t *o;

	if (!gpp_parse(host, in, len, &p) || p.proto != SDP_PKT_PROTO_TCP ||
	    p.l4_len < SDP_PKT_TCP_HLEN)
		return 0;
	ip = in + p.ip_off;
	tcp = in + p.l4_off;
	thl = (uint32_t)(tcp[SDP_PKT_TCP_DATA_OFF] >> 4) * 4;
	if (thl < SDP_PKT_TCP_HLEN || thl > p.l4_len ||
	    sdp_pkt_get16(tcp + SDP_PKT_TCP_DPORT) != host->http_port || l4_ok == 0 ||
	    (l4_ok < 0 &&
	     !sdp_pkt_l4_csum_ok(tcp, p.l4_len,
				 sdp_pkt_pseudo_sum(ip, 4, SDP_PKT_PROTO_TCP, p.l4_len))))
		return 0;
	flags = tcp[SDP_PKT_TCP_FLAGS];
	plen = p.l4_len - thl;
	seq = sdp_pkt_get32(tcp + SDP_PKT_TCP_SEQ);
	ack = sdp_pkt_get32(tcp + SDP_PKT_TCP_ACK);
	isn = gpp_isn(host, ip, tcp);
	if (flags & GPP_TCP_RST)
		return 0;
	off = p.l2_len + SDP_PKT_IP4_HLEN;
	if (off + SDP_PKT_TCP_HLEN > cap)
		return 0;
	o = out + off + SDP_PKT_TCP_HLEN;
	if ((flags & (GPP_TCP_SYN | GPP_TCP_ACK)) == GPP_TCP_SYN) {
		/* the handshake: our ISN, their sequence number + 1 */
		oflags = GPP_TCP_SYN | GPP_TCP_ACK;
		ack = seq + 1;
		seq = isn;
	} else if (!(flags & GPP_TCP_ACK) || (flags & GPP_TCP_SYN)) {
		return 0;
	} else if (plen > 0 && ack == isn + 1) {
		/* a request in one segment: the whole response, and we close */
		rlen = gpp_http_response(pages, nb_pages, tcp + thl, plen, o,
					 cap - off - SDP_PKT_TCP_HLEN);
		if (rlen == 0)
			return 0;
		oflags = GPP_TCP_ACK | GPP_TCP_PSH | GPP_TCP_FIN;
		seq = isn + 1;
		ack = sdp_pkt_get32(tcp + SDP_PKT_TCP_SEQ) + plen + ((flags & GPP_TCP_FIN) ? 1 : 0);
	} else if ((flags & GPP_TCP_FIN) && plen == 0) {
		/* the client closes (after our FIN): acknowledge it */
		oflags = GPP_TCP_ACK;
		ack = seq + 1;
		seq = sdp_pkt_get32(tcp + SDP_PKT_TCP_ACK);
	} else {
		return 0; /* pure ACKs, and data we did not ask for */
	}
	l4 = SDP_PKT_TCP_HLEN + rlen;
	off = gpp_reply_headers(host, in, &p, out, l4, SDP_PKT_PROTO_TCP, 0);
	sdp_pkt_tcp_build(out + off, host->http_port, sdp_pkt_get16(tcp + SDP_PKT_TCP_SPORT), seq,
			  ack, oflags, GPP_TCP_WINDOW);
	sdp_pkt_tcp_csum_set(out + off, l4,
			     sdp_pkt_pseudo_sum(out + p.l2_len, 4, SDP_PKT_PROTO_TCP, l4));
	return off + l4;
}

/* Whether a TCP reply of gpp_http (n bytes in out) carries data: an HTTP response. */
GPP_FN int gpp_tcp_reply_has_data(const uint8_t *out, uint32_t n)
{
	uint32_t l2 = sdp_pkt_get16(out + SDP_PKT_ETH_TYPE) == SDP_PKT_ETHERTYPE_VLAN ?
			      SDP_PKT_ETH_HLEN + SDP_PKT_VLAN_HLEN :
			      SDP_PKT_ETH_HLEN;

	return n > l2 + SDP_PKT_IP4_HLEN + SDP_PKT_TCP_HLEN;
}

#endif /* GPP_PROTO_H_ */
