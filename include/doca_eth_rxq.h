/*
 * softdpu: DOCA Ethernet receive queue (doca_eth_rxq.h).
 *
 * The receive queue context (create, type, packet buffer, queue id, GPU handle) arrives with
 * the software NIC in issue 4 (eth/flow). Until then this header declares only what softdpu
 * implements (nothing) and gives programs the headers they receive through it in DOCA.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_ETH_RXQ_H_
#define DOCA_ETH_RXQ_H_

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#endif /* DOCA_ETH_RXQ_H_ */
