/*
 * softdpu internal: the argument checks the DOCA Core objects share. Each one logs its refusal
 * once (an SDK error) on behalf of func, the call that got the argument (pass __func__), so the
 * record names the API call the user made, and returns the status to hand back:
 *
 *     if ((status = sdp_check_arg(buf, "buf", __func__)) != DOCA_SUCCESS)
 *             return status;
 *
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_CHECK_H_
#define SDP_CHECK_H_

#include "doca_error.h"

/* The failing half of sdp_check_arg: logs "NULL <name>", returns DOCA_ERROR_INVALID_VALUE. */
doca_error_t sdp_check_arg_null(const char *name, const char *func);

/*
 * DOCA_ERROR_INVALID_VALUE ("NULL <name>") for a NULL arg, else DOCA_SUCCESS. Inline: every
 * accessor of the per-packet paths calls it (issue 18: a call per check was 8 instructions of
 * each of a dozen calls per received frame).
 */
static inline doca_error_t sdp_check_arg(const void *arg, const char *name, const char *func)
{
	if (__builtin_expect(arg != NULL, 1))
		return DOCA_SUCCESS;
	return sdp_check_arg_null(name, func);
}

/*
 * A handle of kind `kind` ("mmap", "buf_pool", ...) that the caller's magic check found ok or
 * not: DOCA_ERROR_INVALID_VALUE ("NULL <kind>", or "invalid (destroyed?) <kind>" for a handle
 * that is not NULL but not live) unless ok, else DOCA_SUCCESS.
 */
doca_error_t sdp_check_handle(int ok, const void *handle, const char *kind, const char *func);

#endif /* SDP_CHECK_H_ */
