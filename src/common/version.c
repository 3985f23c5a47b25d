/*
 * Versions known at run time: the DOCA API level this libdoca_common implements and softdpu's
 * own version (both fixed when the library was built, see meson.build).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_build_config.h" /* build facts: versions, paths, SDP_HAVE_* */

#include "doca_version.h"
#include "softdpu/version.h"

/*
 * A program compares this with doca_version() (the headers it was compiled with) to find out
 * whether it runs with the library it was built for.
 */
const char *doca_version_runtime(void)
{
	return SDP_DOCA_API_VERSION;
}

const char *sdp_doca_api_version(void)
{
	return SDP_DOCA_API_VERSION;
}

const char *sdp_version(void)
{
	return SOFTDPU_VERSION;
}
