/*
 * softdpu: DOCA DPDK bridge (doca_dpdk.h).
 *
 * softdpu does not implement the DPDK bridge (its software NIC backends stand where DPDK would).
 * The header exists because DOCA programs include it (the GPU packet
 * processing application does, and uses nothing from it); it declares only what softdpu
 * implements, which today is nothing. Valid C and C++.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_DPDK_H_
#define DOCA_DPDK_H_

#include "doca_error.h"

#endif /* DOCA_DPDK_H_ */
