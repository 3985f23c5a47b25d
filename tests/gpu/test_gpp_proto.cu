/*
 * The GPU packet processing application's protocol work (samples/gpu_packet_processing/
 * gpp_proto.h) in a CUDA kernel: requests of every kind (ICMP echo, a DNS-like query, an HTTP
 * connection's SYN, GET, FIN, a 404 and frames to ignore) built on the host, answered by one GPU
 * thread each, and every reply compared byte for byte with the same function run on the CPU
 * (tests/unit/test_gpp_proto.c checks the CPU's answers themselves). Exits 77 without a driver.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>

#include "gpp_proto.h"
#include "gpu_check.h"
#include "softdpu/sdp_pkt.h"

#define NREQ 8
#define CAP 1600

struct req {
	uint8_t f[CAP];
	uint32_t len;
	uint32_t kind; /* 0 ICMP, 1 UDP, 2 HTTP */
};

struct rep {
	uint8_t f[CAP];
	uint32_t len;
};

__constant__ char d_index[] = "<html>gpp</html>\n";

static const struct gpp_host host_id = {
	{0x02, 0x53, 0x47, 0, 0, 1}, {10, 9, 8, 1}, 80, 53, 0xabcdef01u};
static const uint8_t peer_mac[6] = {0x02, 0x53, 0x47, 0, 0, 2};
static const uint8_t peer_ip[4] = {10, 9, 8, 2};

static uint32_t ip4(uint8_t *f, uint8_t proto, uint32_t l4_len)
{
	sdp_pkt_eth_build(f, host_id.mac, peer_mac, SDP_PKT_ETHERTYPE_IPV4);
	sdp_pkt_ip4_build(f + 14, (uint16_t)(20 + l4_len), 1, SDP_PKT_IP4_DF, proto, peer_ip,
			  host_id.ip);
	sdp_pkt_ip4_csum_set(f + 14);
	return 34;
}

static uint32_t tcp(uint8_t *f, uint32_t seq, uint32_t ack, uint8_t flags, const char *data)
{
	uint32_t dlen = data != nullptr ? (uint32_t)std::strlen(data) : 0;
	uint32_t off = ip4(f, SDP_PKT_PROTO_TCP, 20 + dlen);

	sdp_pkt_tcp_build(f + off, 41000, 80, seq, ack, flags, 1000);
	std::memcpy(f + off + 20, data != nullptr ? data : "", dlen);
	sdp_pkt_tcp_csum_set(f + off, 20 + dlen, sdp_pkt_pseudo_sum(f + 14, 4, 6, 20 + dlen));
	return off + 20 + dlen;
}

/* One GPU thread per request, as the application's kernels take one packet per thread. */
__global__ void answer(const struct req *reqs, struct rep *reps, struct gpp_host h)
{
	const struct gpp_page pages[1] = {
		{"/index.html", "text/html", d_index, (uint32_t)sizeof(d_index) - 1}};
	uint32_t i = threadIdx.x;

	if (i >= NREQ)
		return;
	if (reqs[i].kind == 0)
		reps[i].len = gpp_icmp_echo(&h, reqs[i].f, reqs[i].len, reps[i].f, CAP);
	else if (reqs[i].kind == 1)
		reps[i].len = (uint32_t)gpp_udp_query(&h, reqs[i].f, reqs[i].len);
	else
		reps[i].len = gpp_http(&h, pages, 1, reqs[i].f, reqs[i].len, -1, reps[i].f, CAP);
}

int main(void)
{
	static const char index_host[] = "<html>gpp</html>\n";
	const struct gpp_page pages[1] = {
		{"/index.html", "text/html", index_host, (uint32_t)sizeof(index_host) - 1}};
	struct req *reqs, *d_reqs;
	struct rep *reps, *d_reps, host_rep;
	uint32_t isn;
	int same = 0;

	gpu_check_require_driver();
	reqs = new struct req[NREQ]();
	reps = new struct rep[NREQ]();
	/* ICMP echo request with 32 bytes of data */
	{
		uint8_t *f = reqs[0].f;
		uint32_t off = ip4(f, SDP_PKT_PROTO_ICMP, 40);

		f[off] = 8;
		for (int i = 8; i < 40; i++)
			f[off + i] = (uint8_t)i;
		sdp_pkt_put16(f + off + 2, sdp_pkt_csum(f + off, 40));
		reqs[0].len = off + 40;
		reqs[0].kind = 0;
	}
	/* a DNS-like query */
	{
		uint8_t *f = reqs[1].f;
		uint32_t off = ip4(f, SDP_PKT_PROTO_UDP, 8 + 20);

		sdp_pkt_udp_build(f + off, 5000, 53, 28);
		sdp_pkt_put16(f + off + 8 + 4, 1);
		reqs[1].len = off + 28;
		reqs[1].kind = 1;
	}
	/* an HTTP connection: SYN, then (with the ISN the CPU answers) GET, 404, FIN; junk */
	reqs[2].len = tcp(reqs[2].f, 500, 0, GPP_TCP_SYN, nullptr);
	host_rep.len = gpp_http(&host_id, pages, 1, reqs[2].f, reqs[2].len, -1, host_rep.f, CAP);
	isn = sdp_pkt_get32(host_rep.f + 38);
	reqs[3].len = tcp(reqs[3].f, 501, isn + 1, GPP_TCP_ACK | GPP_TCP_PSH,
			  "GET /index.html HTTP/1.1\r\nHost: g\r\n\r\n");
	reqs[4].len = tcp(reqs[4].f, 501, isn + 1, GPP_TCP_ACK, "GET /x HTTP/1.1\r\n\r\n");
	reqs[5].len = tcp(reqs[5].f, 540, isn + 60, GPP_TCP_ACK | GPP_TCP_FIN, nullptr);
	reqs[6].len = tcp(reqs[6].f, 501, isn + 1, GPP_TCP_ACK, nullptr); /* pure ACK */
	reqs[7].len = 30;						  /* truncated */
	for (int i = 2; i < NREQ; i++)
		reqs[i].kind = 2;

	CHECK_CUDA(cudaMalloc(&d_reqs, sizeof(struct req) * NREQ));
	CHECK_CUDA(cudaMalloc(&d_reps, sizeof(struct rep) * NREQ));
	CHECK_CUDA(cudaMemcpy(d_reqs, reqs, sizeof(struct req) * NREQ, cudaMemcpyHostToDevice));
	CHECK_CUDA(cudaMemset(d_reps, 0, sizeof(struct rep) * NREQ));
	answer<<<1, 32>>>(d_reqs, d_reps, host_id);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaDeviceSynchronize());
	CHECK_CUDA(cudaMemcpy(reps, d_reps, sizeof(struct rep) * NREQ, cudaMemcpyDeviceToHost));
	for (int i = 0; i < NREQ; i++) {
		std::memset(&host_rep, 0, sizeof(host_rep));
		if (reqs[i].kind == 0)
			host_rep.len =
				gpp_icmp_echo(&host_id, reqs[i].f, reqs[i].len, host_rep.f, CAP);
		else if (reqs[i].kind == 1)
			host_rep.len = (uint32_t)gpp_udp_query(&host_id, reqs[i].f, reqs[i].len);
		else
			host_rep.len = gpp_http(&host_id, pages, 1, reqs[i].f, reqs[i].len, -1,
						host_rep.f, CAP);
		if (reps[i].len != host_rep.len ||
		    (reqs[i].kind != 1 && std::memcmp(reps[i].f, host_rep.f, host_rep.len) != 0))
			FAIL("request %d: the GPU answered %u bytes, the CPU %u (or other bytes)",
			     i, reps[i].len, host_rep.len);
		else
			same++;
	}
	/* the answers exist where they must: echo, query, SYN-ACK, 200, 404, FIN's ACK */
	if (reps[0].len == 0 || reps[1].len != 1 || reps[2].len != 54 || reps[3].len <= 54 ||
	    reps[4].len <= 54 || reps[5].len != 54 || reps[6].len != 0 || reps[7].len != 0)
		FAIL("unexpected reply lengths %u %u %u %u %u %u %u %u", reps[0].len, reps[1].len,
		     reps[2].len, reps[3].len, reps[4].len, reps[5].len, reps[6].len, reps[7].len);
	std::printf("gpp_proto on the GPU: %d of %d replies identical to the CPU's\n", same, NREQ);
	CHECK_CUDA(cudaFree(d_reqs));
	CHECK_CUDA(cudaFree(d_reps));
	delete[] reqs;
	delete[] reps;
	return failures ? 1 : 0;
}
