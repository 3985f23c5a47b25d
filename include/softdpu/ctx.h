/*
 * softdpu extension (not part of DOCA): context queries DOCA does not offer.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SOFTDPU_CTX_H_
#define SOFTDPU_CTX_H_

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_ctx;

/*
 * Why the most recent start attempt of ctx failed: the error of a synchronous doca_ctx_start(),
 * or, after doca_ctx_start() returned DOCA_ERROR_IN_PROGRESS, the error that sent the context
 * from STARTING back to IDLE during doca_pe_progress(). DOCA_SUCCESS when that attempt did not
 * fail (or none was made); DOCA_ERROR_INVALID_VALUE for a NULL ctx. Each doca_ctx_start()
 * resets it.
 */
DOCA_STABLE
doca_error_t sdp_ctx_get_last_error(const struct doca_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_CTX_H_ */
