/*
 * softdpu: GPU data path of the DOCA Ethernet send queue (doca_eth_txq_gpu_data_path.h).
 *
 * Completion-on-GPU, the CPU proxy progress call and the send error/notify events arrive with
 * GPUNetIO in issue 5, on top of the queue of issue 4. Until then this header declares only
 * what softdpu implements (nothing) and gives programs the headers they receive through it in
 * DOCA.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_ETH_TXQ_GPU_DATA_PATH_H_
#define DOCA_ETH_TXQ_GPU_DATA_PATH_H_

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#endif /* DOCA_ETH_TXQ_GPU_DATA_PATH_H_ */
