/*
 * softdpu: DOCA Flow network header formats (doca_flow_net.h).
 *
 * The header structs and the L3/L4 type enums that Flow matches on arrive with the software
 * NIC's steering in issue 4 (eth/flow). Until then this header declares only what softdpu
 * implements (nothing) and gives programs the headers they receive through it in DOCA.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_FLOW_NET_H_
#define DOCA_FLOW_NET_H_

#include <stdbool.h>
#include <stdint.h>

#include "doca_types.h"

#endif /* DOCA_FLOW_NET_H_ */
