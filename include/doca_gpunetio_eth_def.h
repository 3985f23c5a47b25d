/*
 * softdpu: GPUNetIO Ethernet definitions shared by host and device code
 * (doca_gpunetio_eth_def.h).
 *
 * The execution/sync scope and NIC-handler enums, the send and wait flags and the GPU queue
 * handles arrive in issue 5 (GPUNetIO). Until then this header declares only what softdpu
 * implements (nothing) and gives programs the headers they receive through it in DOCA: bool,
 * INT_MAX, and pthread_create/pthread_join (the GPUNetIO send sample's proxy thread relies on
 * getting <pthread.h> here). Valid C and C++, as plain C host files include it.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_GPUNETIO_ETH_DEF_H_
#define DOCA_GPUNETIO_ETH_DEF_H_

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "doca_error.h"
#include "doca_gpunetio.h"
#include "doca_types.h"

#endif /* DOCA_GPUNETIO_ETH_DEF_H_ */
