/*
 * softdpu internal: what the Ethernet queue engine asks DOCA Flow (libdoca_flow).
 *
 * Each started flow port (doca_flow_port_start) carries a software classifier built from its
 * pipes and entries. The engine that receives frames for a doca_dev looks the port up once
 * (sdp_flow_port_get), classifies every received frame with sdp_flow_classify() and delivers it
 * to the DOCA receive queue whose applied id (doca_eth_rxq_apply_queue_id) the classifier
 * returns, and releases the port (sdp_flow_port_put) when it stops.
 *
 * Threads: sdp_flow_classify() may run on any number of engine threads at once, also while the
 * application adds or removes pipes and entries: each port has a reader/writer lock (writers
 * preferred, so a steady stream of packets cannot starve rule updates); classify holds it for
 * reading for the duration of one frame, the control calls take it for writing. Counters are
 * updated with relaxed atomic additions. Work per frame is bounded: one parse of the
 * headers (Ethernet, one VLAN tag, IP, transport), and at most SDP_FLOW_MAX_HOPS pipes: a
 * control pipe tries its entries by priority, a basic pipe looks its entries up in an
 * exact-match hash index.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_FLOW_H_
#define SDP_FLOW_H_

#include <stdint.h>

#include "doca_flow.h"
#include "sdp_provider_eth.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;

/* How many pipes one frame may traverse (DOCA_FLOW_FWD_PIPE chains); deeper is a drop. */
#define SDP_FLOW_MAX_HOPS 16

/* The verdict of sdp_flow_classify(). */
enum sdp_flow_verdict {
	SDP_FLOW_FORWARD = 0,  /* deliver to *queue_id */
	SDP_FLOW_DROP = 1,     /* a DROP action, a pipe miss without a miss action, or a loop */
	SDP_FLOW_NO_RULES = 2, /* no started port or no root pipe: the engine's default queue */
	SDP_FLOW_MISS = 3,     /* no entry of the root pipe matched and it has no miss action:
				* DOCA leaves such packets to the port's default (the engine's
				* default queue, as for NO_RULES) */
};

/*
 * Classify one received frame of len bytes (the whole frame from the destination MAC) on port.
 * Returns an enum sdp_flow_verdict; *queue_id is written only for SDP_FLOW_FORWARD. A NULL or
 * stopped port, a NULL queue_id or a NULL frame with a length answer SDP_FLOW_NO_RULES. Counts
 * the hit on the matching entries and pipes.
 */
int sdp_flow_classify(struct doca_flow_port *port, const uint8_t *frame, uint32_t len,
		      uint16_t *queue_id);

/*
 * The started flow port bound to dev, with a reference that keeps the object valid (classify
 * then answers NO_RULES once the application stops the port); NULL when there is none.
 * Release with sdp_flow_port_put().
 */
struct doca_flow_port *sdp_flow_port_get(const struct doca_dev *dev);
void sdp_flow_port_put(struct doca_flow_port *port);

/*
 * What the receive queues of dev want, for a backend that leaves the rest to the host's stack
 * (sdp_provider_eth.h, struct sdp_eth_steer): one key per transport and destination port the
 * entries of the root pipe name (a superset: addresses and other fields are left to
 * sdp_flow_classify); `all` when dev has no started flow port or no root pipe, when the root
 * pipe has a miss action, or past SDP_ETH_STEER_MAX_KEYS keys.
 */
void sdp_flow_steer_summary(const struct doca_dev *dev, struct sdp_eth_steer *steer);

/*
 * A number that changes whenever any flow port starts or stops or its pipes or active entries
 * change (so the summary above may have); cb, when set, is called after each such change,
 * outside every flow lock, from the thread that made it (libdoca_eth wakes its engines).
 */
uint64_t sdp_flow_generation(void);
void sdp_flow_set_change_cb(void (*cb)(void));

#ifdef __cplusplus
}
#endif

#endif /* SDP_FLOW_H_ */
