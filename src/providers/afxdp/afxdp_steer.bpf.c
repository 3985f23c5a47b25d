/*
 * The XDP program of the afxdp provider: which frames of the interface go to the port's AF_XDP
 * sockets and which stay with the host's stack.
 *
 * Maps (filled by afxdp.c):
 *   sdp_xsks   XSKMAP, interface queue -> the port's socket bound to it;
 *   sdp_cfg    one u32: 1 = every frame to the sockets, 0 = only the frames a key matches;
 *   sdp_keys   hash of struct sdp_xdp_key (afxdp.c's copy of struct sdp_eth_steer_key, network
 *              order), the summary of the port's DOCA Flow rules; a field of 0 matches anything;
 *   sdp_cnt    per-CPU u64 [0] frames left to the host's stack (no key matched).
 * A frame is parsed once (Ethernet, one VLAN tag, IPv4 or IPv6 without extension headers, TCP or
 * UDP destination port), every read bounds-checked against data_end as the verifier demands;
 * then up to six lookups, most specific first. A frame for a queue with no socket, or one the
 * redirect refuses, goes to the stack (XDP_PASS as bpf_redirect_map's fallback).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define SDP_XDP_MAX_QUEUES 64
#define SDP_XDP_MAX_KEYS 64

struct sdp_xdp_key {
	__u16 ethertype; /* network order; 0 any */
	__u8 ip_proto;
	__u8 pad;
	__u16 dst_port; /* network order; 0 any */
	__u16 pad2;
};

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, SDP_XDP_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} sdp_xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} sdp_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SDP_XDP_MAX_KEYS);
	__type(key, struct sdp_xdp_key);
	__type(value, __u8);
} sdp_keys SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sdp_cnt SEC(".maps");

static __always_inline int sdp_has(__u16 et, __u8 proto, __u16 port)
{
	struct sdp_xdp_key k = {.ethertype = et, .ip_proto = proto, .dst_port = port};

	return bpf_map_lookup_elem(&sdp_keys, &k) != 0;
}

static __always_inline int sdp_wanted(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u16 et, port = 0;
	__u8 proto = 0;
	void *l3;

	if ((void *)(eth + 1) > end)
		return sdp_has(0, 0, 0);
	et = eth->h_proto;
	l3 = eth + 1;
	if (et == bpf_htons(ETH_P_8021Q) || et == bpf_htons(ETH_P_8021AD)) {
		__be16 *inner = (__be16 *)((char *)l3 + 2);

		if ((void *)(inner + 1) > end)
			return sdp_has(0, 0, 0);
		et = *inner;
		l3 = inner + 1;
	}
	if (et == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = l3;

		if ((void *)(ip + 1) <= end && ip->ihl >= 5) {
			proto = ip->protocol;
			/* first fragments only carry the ports */
			if ((ip->frag_off & bpf_htons(0x1fff)) == 0 &&
			    (proto == IPPROTO_TCP || proto == IPPROTO_UDP)) {
				__be16 *ports = (__be16 *)((char *)ip + ip->ihl * 4);

				if ((void *)(ports + 2) <= end)
					port = ports[1];
			}
		}
	} else if (et == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = l3;

		if ((void *)(ip6 + 1) <= end) {
			proto = ip6->nexthdr;
			if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
				__be16 *ports = (__be16 *)(ip6 + 1);

				if ((void *)(ports + 2) <= end)
					port = ports[1];
			}
		}
	}
	if (port != 0 && sdp_has(et, proto, port))
		return 1;
	if (proto != 0 && sdp_has(et, proto, 0))
		return 1;
	if (sdp_has(et, 0, 0))
		return 1;
	if (port != 0 && sdp_has(0, proto, port))
		return 1;
	if (proto != 0 && sdp_has(0, proto, 0))
		return 1;
	return sdp_has(0, 0, 0);
}

SEC("xdp")
int sdp_afxdp_steer(struct xdp_md *ctx)
{
	__u32 zero = 0, *all = bpf_map_lookup_elem(&sdp_cfg, &zero);
	__u64 *cnt;

	if ((all != 0 && *all != 0) || sdp_wanted(ctx))
		return bpf_redirect_map(&sdp_xsks, ctx->rx_queue_index, XDP_PASS);
	cnt = bpf_map_lookup_elem(&sdp_cnt, &zero);
	if (cnt != 0)
		*cnt += 1;
	return XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
