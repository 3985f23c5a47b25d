/*
 * softdpu extension (not part of DOCA): counters of the software Ethernet queues.
 *
 * The engine counts what each queue moved and what it had to drop, so tests and tools can see
 * where traffic went. Counters survive stop/start and reset only with the queue.
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

struct doca_eth_rxq;
struct doca_eth_txq;

struct sdp_eth_rxq_counters {
	uint64_t packets;   /* frames stored in receive tasks */
	uint64_t bytes;	    /* their bytes (as stored) */
	uint64_t no_task;   /* frames steered to the queue while it had no task waiting: dropped */
	uint64_t truncated; /* frames longer than the task's buffer or max_packet_size */
	uint64_t csum_bad;  /* frames the backend marked with a bad L3 or L4 checksum */
};

struct sdp_eth_txq_counters {
	uint64_t packets; /* frames the backend took */
	uint64_t bytes;
	uint64_t errors; /* send tasks completed with an error */
};

/* A snapshot of the queue's counters. DOCA_ERROR_INVALID_VALUE for NULL arguments. */
DOCA_STABLE
doca_error_t sdp_eth_rxq_get_counters(const struct doca_eth_rxq *eth_rxq,
				      struct sdp_eth_rxq_counters *counters);
DOCA_STABLE
doca_error_t sdp_eth_txq_get_counters(const struct doca_eth_txq *eth_txq,
				      struct sdp_eth_txq_counters *counters);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_ETH_H_ */
