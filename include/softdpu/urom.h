/*
 * softdpu extension (not part of DOCA): UROM queries DOCA does not offer.
 *
 * Why a worker context went back from STARTING to IDLE (a spawn the service refused, a worker
 * that rejected the connection, a time-out) is readable with sdp_ctx_get_last_error() of
 * softdpu/ctx.h on doca_urom_worker_as_ctx(worker).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SOFTDPU_UROM_H_
#define SOFTDPU_UROM_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_urom_worker;

/*
 * The process id of the worker process a RUNNING worker context is connected to (on the
 * service's machine). DOCA_ERROR_INVALID_VALUE for NULL arguments, DOCA_ERROR_BAD_STATE when
 * the context is not RUNNING.
 */
DOCA_EXPERIMENTAL
doca_error_t sdp_urom_worker_get_pid(struct doca_urom_worker *worker_ctx, uint32_t *pid);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_UROM_H_ */
