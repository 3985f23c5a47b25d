/*
 * softdpu: CPU data path of the DOCA Ethernet receive queue (doca_eth_rxq_cpu_data_path.h).
 *
 * Managed-mempool receive events on a doca_pe arrive with the software NIC in issue 4
 * (eth/flow). Until then this header declares only what softdpu implements (nothing) and gives
 * programs the headers they receive through it in DOCA (doca_pe.h for the batch-size enums).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_ETH_RXQ_CPU_DATA_PATH_H_
#define DOCA_ETH_RXQ_CPU_DATA_PATH_H_

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_pe.h"
#include "doca_types.h"

#endif /* DOCA_ETH_RXQ_CPU_DATA_PATH_H_ */
