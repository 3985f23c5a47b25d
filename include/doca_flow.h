/*
 * softdpu: DOCA Flow (doca_flow.h).
 *
 * Flow init, ports, pipes and entries (the steering that feeds received packets to the right
 * Ethernet queue) arrive with the software NIC in issue 4 (eth/flow). Until then this header
 * declares only what softdpu implements (nothing) and gives programs the headers they receive
 * through it in DOCA, doca_flow_net.h included.
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

#endif /* DOCA_FLOW_H_ */
