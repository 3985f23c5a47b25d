/*
 * softdpu internal: the Ethernet port part of the provider module ABI (sdp_provider.h): what a
 * software NIC backend (a device provider module: loop, gen, pcap, afpacket, afxdp)
 * offers to the queue engine of libdoca_eth. It lives with the rest of the provider ABI in
 * src/common, the bottom layer, because it is the contract between libdoca_common's loader and
 * the modules; libdoca_eth (src/eth) is one user of it.
 *
 * A provider with Ethernet devices sets `eth` in its struct sdp_provider_ops (provider ABI 2).
 * The engine opens one port per doca_dev it runs queues on, with as many hardware RX queues as
 * the backend can spread traffic over (afpacket: fanout members; afxdp: interface queues;
 * others: 1) and TX queues, and then moves frames between the port and the DOCA queues' rings.
 * Steering (DOCA Flow) runs in the engine, after rx_burst; a backend that can leave frames to
 * the host's stack gets a summary of the rules (op steer) and never sees the rules themselves.
 *
 * Threads: each port queue is used by one engine thread at a time; different queues of one port
 * may be used concurrently. Nothing here blocks: rx_burst/tx_burst return what they could do
 * now, and the engine sleeps on rx_fd() (or its own timer where a backend has no fd).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_PROVIDER_ETH_H_
#define SDP_PROVIDER_ETH_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_error.h"

#define SDP_ETH_MAX_FRAME 9216 /* largest frame any backend handles (jumbo) */

/* Per-frame flags. */
enum sdp_pkt_flags {
	SDP_PKT_F_L3_CSUM_BAD = 1u << 0,  /* IPv4 header checksum wrong */
	SDP_PKT_F_L4_CSUM_BAD = 1u << 1,  /* UDP/TCP checksum wrong */
	SDP_PKT_F_CSUM_PARTIAL = 1u << 2, /* kernel left the checksum to "hardware": not an error */
	SDP_PKT_F_TRUNCATED = 1u << 3,	  /* the frame was longer than the buffer */
};

/*
 * One frame. rx_burst: on entry data/cap describe an engine buffer to copy the frame into; the
 * backend sets len (bytes of the frame stored, at most cap), wire_len (the frame's real
 * length), flags and ts_ns. tx_burst: data/len are the frame to send; ts_ns, when nonzero, is
 * the earliest CLOCK_TAI/REALTIME send time the backend should honour (wait-on-time), flags
 * ignored.
 */
struct sdp_pkt {
	void *data;
	uint32_t cap;
	uint32_t len;
	uint32_t wire_len;
	uint32_t flags;
	uint64_t ts_ns;
};

struct sdp_eth_port_cfg {
	uint16_t nb_rxq; /* requested RX queues (the backend may give fewer: see port info) */
	uint16_t nb_txq;
	uint32_t ring_size; /* backend ring depth hint per queue (frames) */
};

struct sdp_eth_port_info {
	uint16_t nb_rxq; /* RX queues the backend really spreads over */
	uint16_t nb_txq;
	uint32_t mtu;
	uint8_t mac[6];
	int has_rx_fd; /* rx_fd() returns pollable fds */
};

/* What a backend lost on its own (optional op stats). */
struct sdp_eth_port_stats {
	uint64_t
		rx_drops; /* frames that reached the port but were lost before rx_burst (full ring) */
	/* AF_XDP's own counters (XDP_STATISTICS, summed over the port's sockets); 0 elsewhere */
	uint64_t rx_ring_full;	    /* frames dropped because an RX ring was full */
	uint64_t rx_fill_empty;	    /* times the kernel found a fill ring empty */
	uint64_t rx_invalid_descs;  /* RX descriptors the kernel refused */
	uint64_t tx_invalid_descs;  /* TX descriptors the kernel refused */
	uint64_t rx_steered_kernel; /* frames the port left to the host's stack (no rule wanted) */
};

/*
 * What the port's receive queues want, for a backend that filters before the host's own stack
 * sees a frame (optional op steer; afxdp's XDP program): every frame when `all`, else the
 * frames one key matches (a field of 0 matches anything); the rest stay with the host (ARP,
 * ping and sockets of the host keep working). A summary of the DOCA Flow rules of the port,
 * made by libdoca_flow (sdp_flow_steer_summary): a superset of what the rules accept, so the
 * engine's own classification still decides; too many keys become `all`.
 */
#define SDP_ETH_STEER_MAX_KEYS 64

struct sdp_eth_steer_key {
	uint16_t ethertype; /* host order: 0x0800, 0x86dd, ...; 0 any */
	uint8_t ip_proto;   /* IPPROTO_*; 0 any */
	uint8_t pad;
	uint16_t dst_port; /* host order (TCP and UDP); 0 any */
	uint16_t pad2;
};

struct sdp_eth_steer {
	int all;
	uint32_t nb_keys;
	struct sdp_eth_steer_key keys[SDP_ETH_STEER_MAX_KEYS];
};

struct sdp_eth_port; /* the backend's own */

struct sdp_eth_port_ops {
	/* Open the port of an opened device (dev_priv from the provider's dev_open). */
	doca_error_t (*port_open)(void *dev_priv, const struct sdp_eth_port_cfg *cfg,
				  struct sdp_eth_port **port_p, struct sdp_eth_port_info *info_p);
	void (*port_close)(struct sdp_eth_port *port);
	/* Up to n frames from RX queue q into pkts[] (see struct sdp_pkt); returns the count. */
	uint16_t (*rx_burst)(struct sdp_eth_port *port, uint16_t q, struct sdp_pkt *pkts,
			     uint16_t n);
	/*
	 * Send up to n frames on TX queue q; returns how many the backend took (it copied them).
	 * Fewer than n means "full now": the engine retries later or drops and counts.
	 */
	uint16_t (*tx_burst)(struct sdp_eth_port *port, uint16_t q, const struct sdp_pkt *pkts,
			     uint16_t n);
	/* A fd readable when RX queue q may have frames, or -1 (the engine then polls on a timer). */
	int (*rx_fd)(struct sdp_eth_port *port, uint16_t q);
	/* A fd readable when TX queue q has room again after a short tx_burst, or -1. */
	int (*tx_fd)(struct sdp_eth_port *port, uint16_t q);
	/* Link state now (1 up, 0 down). */
	int (*link_up)(struct sdp_eth_port *port);
	/*
	 * Optional (provider ABI 3; NULL: the backend never loses a frame on its own, as gen and
	 * pcap). Totals since port_open. Called from an application thread while the engine may
	 * be in rx_burst/tx_burst on the same port; calls are serialised by the caller (libdoca_eth
	 * holds its port list lock), never concurrent with each other.
	 */
	void (*stats)(struct sdp_eth_port *port, struct sdp_eth_port_stats *stats);
	/*
	 * Optional (provider ABI 4; NULL: the backend sees only what is meant for it, or hands
	 * everything to the engine). Replace what the port's receive queues take (struct
	 * sdp_eth_steer). Called by the engine thread of the port, between bursts, whenever the
	 * port's DOCA Flow rules changed; the port starts with `all`. An error is logged by the
	 * backend; the port keeps its previous steering.
	 */
	doca_error_t (*steer)(struct sdp_eth_port *port, const struct sdp_eth_steer *steer);
};

#endif /* SDP_PROVIDER_ETH_H_ */
