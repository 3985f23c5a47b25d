/*
 * softdpu: DOCA Flow (doca_flow.h), the steering that decides which Ethernet receive queue
 * gets each packet.
 *
 * softdpu runs the rules in software: every port has a classifier that the Ethernet queue engine
 * consults for each received frame. What is implemented is what the GPUNetIO samples and the GPU
 * packet processing application use: global init, ports bound to a doca_dev, BASIC and CONTROL
 * pipes matching outer L2/L3/L4 types and fields, forwarding to RSS over queue ids, to another
 * pipe or to drop, miss actions, and entries. A rule that needs anything else (tunnels, inner
 * headers, metadata, actions, meters, shared resources, other pipe or forward types) is refused
 * with DOCA_ERROR_NOT_SUPPORTED when it is created, with the reason logged. docs/flow.md has the
 * details.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_FLOW_H_
#define DOCA_FLOW_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_flow_net.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;

/* Opaque objects. */
struct doca_flow_cfg;
struct doca_flow_port_cfg;
struct doca_flow_port;
struct doca_flow_pipe_cfg;
struct doca_flow_pipe;
struct doca_flow_pipe_entry;

/* Only pointers to these cross the API; softdpu accepts NULL only (see docs/flow.md). */
struct doca_flow_actions;
struct doca_flow_match_condition;
struct doca_flow_action_descs;

/* Flags of an entry operation (the uint32_t flags argument). */
enum doca_flow_entry_flags {
	DOCA_FLOW_ENTRY_FLAGS_NO_WAIT = (1u << 0),	  /* the entry takes effect now */
	DOCA_FLOW_ENTRY_FLAGS_WAIT_FOR_BATCH = (1u << 1), /* held until doca_flow_entries_process */
};

enum doca_flow_rss_hash_function {
	DOCA_FLOW_RSS_HASH_FUNCTION_TOEPLITZ,
	DOCA_FLOW_RSS_HASH_FUNCTION_SYMMETRIC_TOEPLITZ, /* source and destination sorted first */
};

/* RSS over a set of receive queues (the ids applied with doca_eth_rxq_apply_queue_id). */
struct doca_flow_resource_rss_cfg {
	uint32_t outer_flags; /* OR of enum doca_rss_type: which outer fields feed the hash */
	uint32_t inner_flags;
	uint16_t *queues_array;
	int nr_queues;
	enum doca_flow_rss_hash_function rss_hash_func;
};

enum doca_flow_pipe_type {
	DOCA_FLOW_PIPE_BASIC = 0,
	DOCA_FLOW_PIPE_CONTROL = 1,
	DOCA_FLOW_PIPE_LPM = 2,
	DOCA_FLOW_PIPE_CT = 3,
	DOCA_FLOW_PIPE_ACL = 4,
	DOCA_FLOW_PIPE_ORDERED_LIST = 5,
	DOCA_FLOW_PIPE_HASH = 6,
};

/* Number of 32-bit scratch words in struct doca_flow_meta. */
#define DOCA_FLOW_META_SCRATCH_PAD_MAX 10

enum __attribute__((__packed__)) doca_flow_meter_color {
	DOCA_FLOW_METER_COLOR_RED = 0,
	DOCA_FLOW_METER_COLOR_YELLOW,
	DOCA_FLOW_METER_COLOR_GREEN,
};

enum doca_flow_l2_meta {
	DOCA_FLOW_L2_META_NO_VLAN = 0,
	DOCA_FLOW_L2_META_MULTI_VLAN,
	DOCA_FLOW_L2_META_SINGLE_VLAN,
	DOCA_FLOW_L2_META_CUSTOM_VLAN,
};

enum doca_flow_l3_meta {
	DOCA_FLOW_L3_META_NONE = 0,
	DOCA_FLOW_L3_META_IPV4,
	DOCA_FLOW_L3_META_IPV6,
};

enum doca_flow_l4_meta {
	DOCA_FLOW_L4_META_NONE = 0,
	DOCA_FLOW_L4_META_TCP,
	DOCA_FLOW_L4_META_UDP,
	DOCA_FLOW_L4_META_ICMP, /* ICMP or ICMPv6 */
	DOCA_FLOW_L4_META_ESP,
};

/* Metadata a pipe may set and a later pipe match (not supported by softdpu). */
struct doca_flow_meta {
	doca_be32_t pkt_meta;
	doca_be32_t u32[DOCA_FLOW_META_SCRATCH_PAD_MAX];
};

/* What the parser found in the packet (read-only). */
struct doca_flow_parser_meta {
	uint16_t port_id;
	doca_be16_t random;
	uint8_t ipsec_syndrome;
	uint8_t ipsec_ar_syndrome;
	uint8_t psp_syndrome;
	enum doca_flow_meter_color meter_color;
	enum doca_flow_l2_meta outer_l2_type;
	enum doca_flow_l3_meta outer_l3_type;
	enum doca_flow_l4_meta outer_l4_type;
	enum doca_flow_l2_meta inner_l2_type;
	enum doca_flow_l3_meta inner_l3_type;
	enum doca_flow_l4_meta inner_l4_type;
	uint8_t outer_ip_fragmented;
	uint8_t inner_ip_fragmented;
	uint8_t outer_l3_ok;
	uint8_t outer_ip4_checksum_ok;
	uint8_t outer_l4_ok;
	uint8_t outer_l4_checksum_ok;
	uint8_t inner_l3_ok;
	uint8_t inner_ip4_checksum_ok;
	uint8_t inner_l4_ok;
	uint8_t inner_l4_checksum_ok;
};

/* TCP flag bits of struct doca_flow_header_tcp.flags (the TCP header's own bit order). */
enum doca_flow_match_tcp_flags {
	DOCA_FLOW_MATCH_TCP_FLAG_FIN = (1 << 0),
	DOCA_FLOW_MATCH_TCP_FLAG_SYN = (1 << 1),
	DOCA_FLOW_MATCH_TCP_FLAG_RST = (1 << 2),
	DOCA_FLOW_MATCH_TCP_FLAG_PSH = (1 << 3),
	DOCA_FLOW_MATCH_TCP_FLAG_ACK = (1 << 4),
	DOCA_FLOW_MATCH_TCP_FLAG_URG = (1 << 5),
	DOCA_FLOW_MATCH_TCP_FLAG_ECE = (1 << 6),
	DOCA_FLOW_MATCH_TCP_FLAG_CWR = (1 << 7),
};

#define DOCA_FLOW_VLAN_MAX 2

/* Bits of struct doca_flow_header_format.l2_valid_headers. */
enum doca_flow_l2_valid_header {
	DOCA_FLOW_L2_VALID_HEADER_VLAN_0 = (1 << 0),
	DOCA_FLOW_L2_VALID_HEADER_VLAN_1 = (1 << 1),
};

/* The headers of one layer of a packet (outer, or inner after a tunnel). */
struct doca_flow_header_format {
	struct doca_flow_header_eth eth;
	uint16_t l2_valid_headers;
	struct doca_flow_header_eth_vlan eth_vlan[DOCA_FLOW_VLAN_MAX];
	enum doca_flow_l3_type l3_type; /* which member of the next union is meant */
	union {
		struct doca_flow_header_ip4 ip4;
		struct doca_flow_header_ip6 ip6;
	};
	enum doca_flow_l4_type_ext l4_type_ext; /* which member of the next union is meant */
	union {
		struct doca_flow_header_icmp icmp;
		struct doca_flow_header_udp udp;
		struct doca_flow_header_tcp tcp;
		struct doca_flow_header_l4_port transport;
		struct doca_flow_header_roce_v2 roce_v2;
	};
};

/*
 * What a pipe or an entry matches. In a pipe's match template, a field set to all ones is
 * given by each entry; another nonzero value is matched as is by every entry of the pipe.
 */
struct doca_flow_match {
	struct doca_flow_meta meta;
	struct doca_flow_parser_meta parser_meta;
	struct doca_flow_header_format outer;
	struct doca_flow_tun tun;
	struct doca_flow_header_format inner;
};

enum doca_flow_resource_type {
	DOCA_FLOW_RESOURCE_TYPE_NONE,
	DOCA_FLOW_RESOURCE_TYPE_SHARED,
	DOCA_FLOW_RESOURCE_TYPE_NON_SHARED,
};

enum doca_flow_fwd_type {
	DOCA_FLOW_FWD_NONE = 0,
	DOCA_FLOW_FWD_RSS,
	DOCA_FLOW_FWD_PORT,
	DOCA_FLOW_FWD_PIPE,
	DOCA_FLOW_FWD_DROP,
	DOCA_FLOW_FWD_TARGET,
	DOCA_FLOW_FWD_ORDERED_LIST_PIPE,
	DOCA_FLOW_FWD_HASH_PIPE,
	DOCA_FLOW_FWD_CHANGEABLE = 100,
};

/* Fields that feed the RSS hash (struct doca_flow_resource_rss_cfg.outer_flags). */
enum doca_rss_type {
	DOCA_FLOW_RSS_IPV4 = (1 << 0),
	DOCA_FLOW_RSS_IPV6 = (1 << 1),
	DOCA_FLOW_RSS_UDP = (1 << 2),
	DOCA_FLOW_RSS_TCP = (1 << 3),
	DOCA_FLOW_RSS_ESP = (1 << 4),
	DOCA_FLOW_RSS_IPV4_SRC = (1 << 5),
	DOCA_FLOW_RSS_IPV4_DST = (1 << 6),
	DOCA_FLOW_RSS_IPV6_SRC = (1 << 7),
	DOCA_FLOW_RSS_IPV6_DST = (1 << 8),
	DOCA_FLOW_RSS_UDP_SRC = (1 << 9),
	DOCA_FLOW_RSS_UDP_DST = (1 << 10),
	DOCA_FLOW_RSS_TCP_SRC = (1 << 11),
	DOCA_FLOW_RSS_TCP_DST = (1 << 12),
	DOCA_FLOW_RSS_AUTO = (1 << 30),
};

/* Where matching packets go. */
struct doca_flow_fwd {
	enum doca_flow_fwd_type type;
	union {
		struct {
			enum doca_flow_resource_type rss_type;
			union {
				struct doca_flow_resource_rss_cfg rss; /* rss_type NON_SHARED */
				uint32_t shared_rss_id;		       /* rss_type SHARED */
			};
		};
		struct {
			uint16_t port_id; /* DOCA_FLOW_FWD_PORT */
		};
		struct {
			struct doca_flow_pipe *next_pipe; /* DOCA_FLOW_FWD_PIPE */
		};
	};
};

enum doca_flow_meter_limit_type {
	DOCA_FLOW_METER_LIMIT_TYPE_BYTES = 0,
	DOCA_FLOW_METER_LIMIT_TYPE_PACKETS,
};

/* Counting, metering and aging of a pipe's or an entry's packets. */
struct doca_flow_monitor {
	enum doca_flow_resource_type meter_type;
	union {
		struct {
			enum doca_flow_meter_limit_type limit_type;
			uint64_t cir;
			uint64_t cbs;
		} non_shared_meter;
		struct {
			uint32_t shared_meter_id;
			enum doca_flow_meter_color meter_init_color;
		} shared_meter;
	};
	enum doca_flow_resource_type counter_type;
	union {
		struct {
			uint32_t shared_counter_id;
		} shared_counter;
	};
	uint32_t aging_sec;
};

/* ---- global configuration ------------------------------------------------------------------ */

DOCA_STABLE
doca_error_t doca_flow_cfg_create(struct doca_flow_cfg **cfg);

DOCA_STABLE
doca_error_t doca_flow_cfg_destroy(struct doca_flow_cfg *cfg);

/* Number of entry queues (the pipe_queue argument of the entry calls ranges below it). */
DOCA_STABLE
doca_error_t doca_flow_cfg_set_pipe_queues(struct doca_flow_cfg *cfg, uint16_t pipe_queues);

DOCA_STABLE
doca_error_t doca_flow_cfg_set_nr_counters(struct doca_flow_cfg *cfg, uint32_t nr_counters);

/* Comma-separated mode and options: "vnf", "vnf,hws", "vnf,hws,isolated,use_doca_eth", ... */
DOCA_STABLE
doca_error_t doca_flow_cfg_set_mode_args(struct doca_flow_cfg *cfg, const char *mode_args);

/* Initialise DOCA Flow for the process (the cfg is copied and may be destroyed right after). */
DOCA_STABLE
doca_error_t doca_flow_init(struct doca_flow_cfg *cfg);

/* Tear DOCA Flow down; ports still started are stopped. */
DOCA_STABLE
void doca_flow_destroy(void);

/* ---- ports ----------------------------------------------------------------------------------- */

DOCA_STABLE
doca_error_t doca_flow_port_cfg_create(struct doca_flow_port_cfg **cfg);

DOCA_STABLE
doca_error_t doca_flow_port_cfg_destroy(struct doca_flow_port_cfg *cfg);

DOCA_EXPERIMENTAL
doca_error_t doca_flow_port_cfg_set_port_id(struct doca_flow_port_cfg *cfg, uint16_t port_id);

DOCA_EXPERIMENTAL
doca_error_t doca_flow_port_cfg_set_dev(struct doca_flow_port_cfg *cfg, struct doca_dev *dev);

DOCA_EXPERIMENTAL
doca_error_t doca_flow_port_start(const struct doca_flow_port_cfg *cfg,
				  struct doca_flow_port **port);

/* Stop the port: its pipes and entries are destroyed with it. */
DOCA_STABLE
doca_error_t doca_flow_port_stop(struct doca_flow_port *port);

/* ---- pipes ----------------------------------------------------------------------------------- */

DOCA_STABLE
doca_error_t doca_flow_pipe_cfg_create(struct doca_flow_pipe_cfg **cfg,
				       struct doca_flow_port *port);

DOCA_STABLE
doca_error_t doca_flow_pipe_cfg_destroy(struct doca_flow_pipe_cfg *cfg);

DOCA_STABLE
doca_error_t doca_flow_pipe_cfg_set_name(struct doca_flow_pipe_cfg *cfg, const char *name);

DOCA_STABLE
doca_error_t doca_flow_pipe_cfg_set_type(struct doca_flow_pipe_cfg *cfg,
					 enum doca_flow_pipe_type type);

DOCA_STABLE
doca_error_t doca_flow_pipe_cfg_set_is_root(struct doca_flow_pipe_cfg *cfg, bool is_root);

/* The match template (copied); match_mask NULL: every nonzero field of match is matched. */
DOCA_STABLE
doca_error_t doca_flow_pipe_cfg_set_match(struct doca_flow_pipe_cfg *cfg,
					  const struct doca_flow_match *match,
					  const struct doca_flow_match *match_mask);

DOCA_STABLE
doca_error_t doca_flow_pipe_cfg_set_monitor(struct doca_flow_pipe_cfg *cfg,
					    const struct doca_flow_monitor *monitor);

DOCA_STABLE
doca_error_t doca_flow_pipe_create(const struct doca_flow_pipe_cfg *cfg,
				   const struct doca_flow_fwd *fwd,
				   const struct doca_flow_fwd *fwd_miss,
				   struct doca_flow_pipe **pipe);

DOCA_STABLE
void doca_flow_pipe_destroy(struct doca_flow_pipe *pipe);

/* ---- entries --------------------------------------------------------------------------------- */

DOCA_EXPERIMENTAL
doca_error_t doca_flow_pipe_basic_add_entry(uint16_t pipe_queue, struct doca_flow_pipe *pipe,
					    const struct doca_flow_match *match, uint8_t action_idx,
					    const struct doca_flow_actions *actions,
					    const struct doca_flow_monitor *monitor,
					    const struct doca_flow_fwd *fwd, uint32_t flags,
					    void *usr_ctx, struct doca_flow_pipe_entry **entry);

/* priority: 0 is the highest; entries of equal priority are tried in the order added. */
DOCA_EXPERIMENTAL
doca_error_t doca_flow_pipe_control_add_entry(
	uint16_t pipe_queue, struct doca_flow_pipe *pipe, const struct doca_flow_match *match,
	const struct doca_flow_match *match_mask, const struct doca_flow_match_condition *condition,
	const struct doca_flow_actions *actions, const struct doca_flow_actions *actions_mask,
	const struct doca_flow_action_descs *action_descs, const struct doca_flow_monitor *monitor,
	uint32_t priority, const struct doca_flow_fwd *fwd, void *usr_ctx,
	struct doca_flow_pipe_entry **entry);

DOCA_STABLE
doca_error_t doca_flow_pipe_remove_entry(uint16_t pipe_queue, uint32_t flags,
					 struct doca_flow_pipe_entry *entry);

/* Complete the entry operations queued on pipe_queue (timeout in microseconds). */
DOCA_STABLE
doca_error_t doca_flow_entries_process(struct doca_flow_port *port, uint16_t pipe_queue,
				       uint64_t timeout, uint32_t max_processed_entries);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DOCA_FLOW_H_ */
