/*
 * doca_error.h: every code 0..31 has its DOCA name and a description; unknown codes are
 * reported as such; the helper macros behave.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdio.h>
#include <string.h>

#include "t_helpers.h"

static const char *const expected_names[] = {
	"DOCA_SUCCESS",
	"DOCA_ERROR_UNKNOWN",
	"DOCA_ERROR_NOT_PERMITTED",
	"DOCA_ERROR_IN_USE",
	"DOCA_ERROR_NOT_SUPPORTED",
	"DOCA_ERROR_AGAIN",
	"DOCA_ERROR_INVALID_VALUE",
	"DOCA_ERROR_NO_MEMORY",
	"DOCA_ERROR_INITIALIZATION",
	"DOCA_ERROR_TIME_OUT",
	"DOCA_ERROR_SHUTDOWN",
	"DOCA_ERROR_CONNECTION_RESET",
	"DOCA_ERROR_CONNECTION_ABORTED",
	"DOCA_ERROR_CONNECTION_INPROGRESS",
	"DOCA_ERROR_NOT_CONNECTED",
	"DOCA_ERROR_NO_LOCK",
	"DOCA_ERROR_NOT_FOUND",
	"DOCA_ERROR_IO_FAILED",
	"DOCA_ERROR_BAD_STATE",
	"DOCA_ERROR_UNSUPPORTED_VERSION",
	"DOCA_ERROR_OPERATING_SYSTEM",
	"DOCA_ERROR_DRIVER",
	"DOCA_ERROR_UNEXPECTED",
	"DOCA_ERROR_ALREADY_EXIST",
	"DOCA_ERROR_FULL",
	"DOCA_ERROR_EMPTY",
	"DOCA_ERROR_IN_PROGRESS",
	"DOCA_ERROR_TOO_BIG",
	"DOCA_ERROR_AUTHENTICATION",
	"DOCA_ERROR_BAD_CONFIG",
	"DOCA_ERROR_SKIPPED",
	"DOCA_ERROR_DEVICE_FATAL_ERROR",
};

int main(void)
{
	for (int i = 0; i < 32; i++) {
		const char *descr = doca_error_get_descr((doca_error_t)i);

		T_EQ_STR(doca_error_get_name((doca_error_t)i), expected_names[i]);
		T_TRUE(descr != NULL && strlen(descr) > 0);
		T_TRUE(strcmp(descr, "unrecognized error code") != 0);
	}
	/* values pinned by DOCA */
	T_EQ_INT(DOCA_SUCCESS, 0);
	T_EQ_INT(DOCA_ERROR_BAD_STATE, 18);
	T_EQ_INT(DOCA_ERROR_IN_PROGRESS, 26);
	T_EQ_INT(DOCA_ERROR_DEVICE_FATAL_ERROR, 31);
	T_EQ_STR(doca_error_get_descr(DOCA_ERROR_IN_USE), "Resource already in use");

	T_EQ_STR(doca_error_get_name((doca_error_t)32), "unrecognized error code");
	T_EQ_STR(doca_error_get_descr((doca_error_t)-1), "unrecognized error code");
	T_EQ_STR(doca_error_get_name((doca_error_t)1000), "unrecognized error code");

	T_TRUE(!DOCA_IS_ERROR(DOCA_SUCCESS));
	T_TRUE(DOCA_IS_ERROR(DOCA_ERROR_AGAIN));

	doca_error_t r = DOCA_SUCCESS;
	DOCA_ERROR_PROPAGATE(r, DOCA_ERROR_IO_FAILED);
	T_STATUS(r, DOCA_ERROR_IO_FAILED);
	DOCA_ERROR_PROPAGATE(r, DOCA_ERROR_NO_MEMORY); /* the first error wins */
	T_STATUS(r, DOCA_ERROR_IO_FAILED);
	T_DONE();
}
