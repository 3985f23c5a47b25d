/*
 * softdpu: DOCA Flow network header formats (doca_flow_net.h).
 *
 * The protocol numbers, Ethernet types and header layouts that a struct doca_flow_match is made
 * of (doca_flow.h). Multi-byte header fields are in network byte order (doca_be*_t), as on the
 * wire. softdpu's software classifier matches the outer Ethernet, VLAN, IPv4 and TCP/UDP/ICMP
 * fields; tunnel fields exist so that programs compile, and a rule that sets them is refused
 * with DOCA_ERROR_NOT_SUPPORTED (docs/flow.md).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_FLOW_NET_H_
#define DOCA_FLOW_NET_H_

#include <stdbool.h>
#include <stdint.h>

#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DOCA_FLOW_ETHER_ADDR_LEN (6)

/* IP protocol numbers (the IPv4 next_proto / IPv6 next header field). */
#define DOCA_FLOW_PROTO_ICMP (1)
#define DOCA_FLOW_PROTO_IPV4 (4)
#define DOCA_FLOW_PROTO_TCP (6)
#define DOCA_FLOW_PROTO_UDP (17)
#define DOCA_FLOW_PROTO_IPV6 (41)
#define DOCA_FLOW_PROTO_ESP (50)
#define DOCA_FLOW_PROTO_ICMP6 (58)

/* Ethernet types, in host byte order (wrap them in htons() to fill a header field). */
#define DOCA_FLOW_ETHER_TYPE_IPV4 (0x0800)
#define DOCA_FLOW_ETHER_TYPE_ARP (0x0806)
#define DOCA_FLOW_ETHER_TYPE_VLAN (0x8100)
#define DOCA_FLOW_ETHER_TYPE_IPV6 (0x86DD)
#define DOCA_FLOW_ETHER_TYPE_QINQ (0x88A8)

/* One 802.1Q tag: priority (3), DEI (1) and VLAN id (12). */
struct doca_flow_header_eth_vlan {
	doca_be16_t tci;
};

/* Which network layer header a header format holds. */
enum doca_flow_l3_type {
	DOCA_FLOW_L3_TYPE_NONE = 0,
	DOCA_FLOW_L3_TYPE_IP4 = 1,
	DOCA_FLOW_L3_TYPE_IP6 = 2,
};

struct doca_flow_header_eth {
	uint8_t src_mac[DOCA_FLOW_ETHER_ADDR_LEN];
	uint8_t dst_mac[DOCA_FLOW_ETHER_ADDR_LEN];
	doca_be16_t type; /* the Ethernet type of the payload (after the VLAN tags, if any) */
};

/* Which transport header a header format holds. */
enum doca_flow_l4_type_ext {
	DOCA_FLOW_L4_TYPE_EXT_NONE = 0,
	DOCA_FLOW_L4_TYPE_EXT_TCP = 1,
	DOCA_FLOW_L4_TYPE_EXT_UDP = 2,
	DOCA_FLOW_L4_TYPE_EXT_ICMP = 3,
	DOCA_FLOW_L4_TYPE_EXT_ICMP6 = 4,
	DOCA_FLOW_L4_TYPE_EXT_TRANSPORT = 5, /* TCP or UDP: the ports only */
	DOCA_FLOW_L4_TYPE_EXT_ROCE_V2 = 6,
};

/* InfiniBand base transport header (RoCE v2). */
struct doca_flow_header_ib_bth {
	uint8_t opcode;
	uint8_t sempt;
	doca_be16_t pkey;
	uint8_t flags0;
	uint8_t dest_qp[3];
	uint8_t flags1;
	uint8_t psn[3];
};

/* The two ports TCP and UDP share. */
struct doca_flow_header_l4_port {
	doca_be16_t src_port;
	doca_be16_t dst_port;
};

struct doca_flow_header_udp {
	struct doca_flow_header_l4_port l4_port;
};

struct doca_flow_header_roce_v2 {
	struct doca_flow_header_udp udp;
	struct doca_flow_header_ib_bth bth;
};

struct doca_flow_header_tcp {
	struct doca_flow_header_l4_port l4_port;
	uint8_t data_offset; /* the header's data offset byte (offset in the high nibble) */
	uint8_t flags;	     /* DOCA_FLOW_MATCH_TCP_FLAG_* bits, as in the TCP header */
	doca_be32_t seq_num;
	doca_be32_t ack_num;
};

struct doca_flow_header_icmp {
	uint8_t type;
	uint8_t code;
	doca_be16_t ident; /* echo identifier */
};

struct doca_flow_header_ip4 {
	doca_be32_t src_ip;
	doca_be32_t dst_ip;
	uint8_t version_ihl;
	uint8_t dscp_ecn;
	doca_be16_t total_len;
	doca_be16_t identification;
	doca_be16_t flags_fragment_offset;
	uint8_t next_proto;
	uint8_t ttl;
};

struct doca_flow_header_ip6 {
	doca_be32_t src_ip[4];
	doca_be32_t dst_ip[4];
	uint8_t traffic_class;
	doca_be32_t flow_label;
	doca_be16_t payload_len;
	uint8_t next_proto;
	uint8_t hop_limit;
};

/* Tunnel kinds (matching on a tunnel is not supported by softdpu's classifier). */
enum doca_flow_tun_type {
	DOCA_FLOW_TUN_NONE = 0,
	DOCA_FLOW_TUN_VXLAN,
	DOCA_FLOW_TUN_GTPU,
	DOCA_FLOW_TUN_GRE,
	DOCA_FLOW_TUN_ESP,
	DOCA_FLOW_TUN_MPLS_O_UDP,
	DOCA_FLOW_TUN_GENEVE,
	DOCA_FLOW_TUN_PSP,
	DOCA_FLOW_TUN_IP_IN_IP,
	DOCA_FLOW_TUN_MAX,
};

/* Tunnel header fields of a match; type says which member of the union is meant. */
struct doca_flow_tun {
	enum doca_flow_tun_type type;
	union {
		struct {
			doca_be32_t vxlan_tun_id; /* VNI (24) and reserved (8) */
		};
		struct {
			doca_be16_t protocol;
			bool key_present;
			doca_be32_t gre_key;
		};
		struct {
			doca_be32_t gtp_teid;
			uint8_t gtp_next_ext_hdr_type;
			uint8_t gtp_ext_psc_qfi;
		};
		struct {
			doca_be32_t esp_spi;
			doca_be32_t esp_sn;
		};
	};
};

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DOCA_FLOW_NET_H_ */
