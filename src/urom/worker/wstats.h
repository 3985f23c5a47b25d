/*
 * softdpu-urom-worker: the counters a worker keeps and reports to its service (SW_STATS).
 *
 * Plain increments on the worker's one loop thread (worker.c), no locks, no atomics. The loop
 * pushes a snapshot to the service right after SW_READY and then, whenever a counter changed,
 * at most every SDP_UROM_STATS_INTERVAL_MS: the loop's own sleep is shortened to the moment the
 * next snapshot is due, so there is no timer and no extra wakeup while nothing changes. The
 * UCX facts (version, UCX_TLS, UCX_NET_DEVICES, the UCP context's resources) are read once at
 * start-up and travel in every snapshot, which is complete on its own.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_UROM_WSTATS_H_
#define SDP_UROM_WSTATS_H_

#include <stdint.h>

#include <ucp/api/ucp.h>

#include "sdp_urom_proto.h"

struct sdp_urom_wstats {
	uint64_t start_us; /* CLOCK_MONOTONIC at start-up */
	uint64_t cmds, cmd_bytes, cmds_refused;
	uint64_t notifs, notif_bytes, notifs_error, notifs_dropped;
	uint64_t connects_refused, domains_committed;
	uint32_t hosts_total;  /* saturates (the service refuses connected > total) */
	int dirty;	       /* something changed since the last snapshot went out */
	uint64_t last_sent_us; /* 0 = none sent yet */
	char ucx_version[SDP_UROM_STATS_VERSION_MAX + 1];
	char ucx_tls[SDP_UROM_STATS_STR_MAX + 1];
	char ucx_net_devices[SDP_UROM_STATS_STR_MAX + 1];
	char ucx_resources[SDP_UROM_STATS_STR_MAX + 1];
};

/* Zero the counters, remember the start; UCX facts "unknown" until sdp_urom_wstats_ucx(). */
void sdp_urom_wstats_init(struct sdp_urom_wstats *s, uint64_t now_us);

/*
 * Read the UCX facts: ucp_get_version_string(), UCX_TLS and UCX_NET_DEVICES from the
 * environment ("default" when unset or empty) and the transport resources of context as
 * "tl/device" joined by commas (from ucp_context_print_info; "unknown" if that fails). Bytes
 * outside printable ASCII become '?', and a value longer than the wire allows is cut, ending
 * in "...".
 */
void sdp_urom_wstats_ucx(struct sdp_urom_wstats *s, ucp_context_h context);

/* A counter changed: the next snapshot is due. */
static inline void sdp_urom_wstats_touch(struct sdp_urom_wstats *s)
{
	s->dirty = 1;
}

/* Fill msg (SW_STATS; strings point into s) for hosts_connected hosts connected now. */
void sdp_urom_wstats_fill(const struct sdp_urom_wstats *s, uint64_t now_us,
			  uint32_t hosts_connected, struct sdp_urom_msg *msg);

#endif /* SDP_UROM_WSTATS_H_ */
