/*
 * softdpu extension (not part of DOCA): counters and overflow behaviour of the software Ethernet
 * queues.
 *
 * Each running receive queue owns a ring (include/softdpu/sdp_ring.h) that its device's engine thread
 * fills and the queue's consumer (doca_pe_progress on the CPU data path, a GPU kernel on the GPU
 * data path) empties. What happens when the ring is full is the queue's overflow mode:
 *
 * - SDP_ETH_OVERFLOW_BACKPRESSURE (the default of REGULAR and MANAGED_MEMPOOL queues): the
 *   engine never overwrites. It takes from the backend no more frames than the fullest
 *   back-pressured ring of the port has room for, so the backend holds the rest (a loop sender
 *   or a generator waits; a kernel ring fills and the kernel drops, counted in the port
 *   counters as rx_port_drops). A frame that still finds no slot is dropped and counted.
 * - SDP_ETH_OVERFLOW_CYCLIC (the default of CYCLIC queues, DOCA's behaviour): the engine never
 *   waits; the oldest frame the consumer has not taken is overwritten and counted.
 *
 * Counters survive stop/start and reset only with the queue (port counters: while some queue of
 * the device runs).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SOFTDPU_ETH_H_
#define SOFTDPU_ETH_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_eth_rxq;
struct doca_eth_txq;

enum sdp_eth_overflow {
	SDP_ETH_OVERFLOW_DEFAULT = 0, /* BACKPRESSURE, or CYCLIC for a CYCLIC queue */
	SDP_ETH_OVERFLOW_BACKPRESSURE =
		1,		     /* hold the backend; drop (counted) only as a last resort */
	SDP_ETH_OVERFLOW_CYCLIC = 2, /* overwrite the oldest unclaimed frame (counted) */
};

struct sdp_eth_rxq_counters {
	uint64_t packets;      /* frames handed to the application (tasks, events) */
	uint64_t bytes;	       /* their bytes (as stored) */
	uint64_t ring_packets; /* frames the engine published into the queue's ring */
	uint64_t drops;	       /* frames steered to the queue that found no ring slot */
	uint64_t overwrites;   /* CYCLIC: frames overwritten before the application took them */
	uint64_t ring_full;    /* times the ring went from "has room" to "full" */
	uint64_t truncated;    /* frames longer than the task's buffer or max_packet_size */
	uint64_t csum_bad;     /* frames the backend marked with a bad L3 or L4 checksum */
};

struct sdp_eth_txq_counters {
	uint64_t packets; /* frames the backend took */
	uint64_t bytes;
	uint64_t errors; /* send tasks completed with an error */
};

/* Counters of a device's engine port: everything the backend delivered, before steering. */
struct sdp_eth_port_counters {
	uint64_t rx_packets; /* frames the engine took from the backend */
	uint64_t rx_bytes;
	uint64_t rx_unsteered; /* frames with no queue to go to (a DROP rule, an unapplied id) */
	uint64_t
		rx_port_drops; /* frames the backend itself lost (e.g. the kernel's ring was full) */
	uint64_t rx_wait;      /* times the engine held the backend for a back-pressured ring */
	uint64_t tx_packets;
	uint64_t tx_bytes;
	/* the afxdp backend's (XDP_STATISTICS and its XDP program); 0 for the other backends */
	uint64_t rx_ring_full;	    /* frames dropped because an AF_XDP RX ring was full */
	uint64_t rx_fill_empty;	    /* times the kernel found a fill ring empty */
	uint64_t rx_invalid_descs;  /* RX descriptors the kernel refused */
	uint64_t tx_invalid_descs;  /* TX descriptors the kernel refused */
	uint64_t rx_steered_kernel; /* frames left to the host's stack: no flow rule wanted them */
};

/* A snapshot of the queue's counters. DOCA_ERROR_INVALID_VALUE for NULL arguments. */
DOCA_STABLE
doca_error_t sdp_eth_rxq_get_counters(const struct doca_eth_rxq *eth_rxq,
				      struct sdp_eth_rxq_counters *counters);
DOCA_STABLE
doca_error_t sdp_eth_txq_get_counters(const struct doca_eth_txq *eth_txq,
				      struct sdp_eth_txq_counters *counters);

/*
 * A snapshot of the engine port counters of dev. DOCA_ERROR_BAD_STATE when no queue of the
 * device is running (the port is closed), DOCA_ERROR_INVALID_VALUE for NULL arguments.
 */
DOCA_STABLE
doca_error_t sdp_eth_dev_get_port_counters(struct doca_dev *dev,
					   struct sdp_eth_port_counters *counters);

/*
 * The overflow mode of a receive queue (before start; DOCA_ERROR_BAD_STATE after);
 * DOCA_ERROR_INVALID_VALUE for a mode not in the enum.
 */
DOCA_STABLE
doca_error_t sdp_eth_rxq_set_overflow(struct doca_eth_rxq *eth_rxq, enum sdp_eth_overflow mode);

/*
 * Number of slots of the queue's ring (before start). Default: REGULAR queues max_burst_size
 * rounded up to a power of two, from 64 to 4096; MANAGED_MEMPOOL queues as many as the packet
 * buffer holds (each slot takes max_packet_size rounded up to 64 bytes, plus 32). A power of two
 * from 1 to 16777216, else DOCA_ERROR_INVALID_VALUE.
 */
DOCA_STABLE
doca_error_t sdp_eth_rxq_set_ring_size(struct doca_eth_rxq *eth_rxq, uint32_t nb_slots);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_ETH_H_ */
