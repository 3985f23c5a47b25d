/*
 * The argument checks shared by the DOCA Core objects (sdp_check.h).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_check.h"

#include "sdp_log.h"

SDP_LOG_COMPONENT("check");

doca_error_t sdp_check_arg_null(const char *name, const char *func)
{
	sdp_log_as(DOCA_LOG_LEVEL_ERROR, func, "NULL %s", name);
	return DOCA_ERROR_INVALID_VALUE;
}

doca_error_t sdp_check_handle(int ok, const void *handle, const char *kind, const char *func)
{
	if (ok)
		return DOCA_SUCCESS;
	sdp_log_as(DOCA_LOG_LEVEL_ERROR, func, "%s %s",
		   handle == NULL ? "NULL" : "invalid (destroyed?)", kind);
	return DOCA_ERROR_INVALID_VALUE;
}
