/*
 * softdpu extension (not part of DOCA): counters of the software DOCA Flow classifier.
 *
 * softdpu counts every packet that matches an entry and every packet that reaches a pipe,
 * whether or not the rule asked for a counter (doca_flow_monitor), so tests and tools can check
 * where traffic went.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SOFTDPU_FLOW_H_
#define SOFTDPU_FLOW_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_flow_pipe;
struct doca_flow_pipe_entry;

/*
 * Packets that reached pipe (hits: matched one of its entries; misses: matched none and took
 * the miss path). Either output may be NULL. DOCA_ERROR_INVALID_VALUE for a NULL pipe.
 */
DOCA_STABLE
doca_error_t sdp_flow_pipe_get_hits(const struct doca_flow_pipe *pipe, uint64_t *hits_p,
				    uint64_t *misses_p);

/*
 * Packets and bytes (whole frames) that matched entry. Either output may be NULL.
 * DOCA_ERROR_INVALID_VALUE for a NULL entry.
 */
DOCA_STABLE
doca_error_t sdp_flow_entry_get_hits(const struct doca_flow_pipe_entry *entry, uint64_t *pkts_p,
				     uint64_t *bytes_p);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_FLOW_H_ */
