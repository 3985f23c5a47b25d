/*
 * Versions: the header macros, doca_version() / doca_version_runtime() and softdpu's own
 * version queries agree with each other and with what meson built.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_build_config.h" /* build facts: versions, paths, SDP_HAVE_* */

#include <stdio.h>
#include <string.h>

#include "doca_version.h"
#include "softdpu/version.h"
#include "t_helpers.h"

int main(void)
{
	char buf[32];

	/* The header's API level, spelled three ways. */
	snprintf(buf, sizeof(buf), "%d.%d.%d", DOCA_VERSION_MAJOR, DOCA_VERSION_MINOR,
		 DOCA_VERSION_PATCH);
	T_EQ_STR(buf, DOCA_VERSION_STRING);
	T_EQ_STR(doca_version(), DOCA_VERSION_STRING);
	T_EQ_STR(DOCA_VERSION_STRING, "3.3.0");

	/* The library implements the level of the headers it ships with. */
	T_EQ_STR(doca_version_runtime(), doca_version());
	T_EQ_STR(sdp_doca_api_version(), doca_version_runtime());
	T_EQ_STR(doca_version_runtime(), SDP_DOCA_API_VERSION);

	/* softdpu's own version: what meson's project() says, not the DOCA level. */
	T_EQ_STR(sdp_version(), SOFTDPU_VERSION);
	T_TRUE(sdp_version()[0] != '\0');

	/* The exact-version macros order versions like the versions themselves. */
	T_TRUE(DOCA_VERSION_EQ_CURRENT(3, 3, 0));
	T_TRUE(!DOCA_VERSION_EQ_CURRENT(3, 2, 0));
	T_TRUE(DOCA_VERSION_LTE_CURRENT(3, 3, 0));
	T_TRUE(DOCA_VERSION_LTE_CURRENT(3, 2, 9));
	T_TRUE(DOCA_VERSION_LTE_CURRENT(2, 9, 255));
	T_TRUE(!DOCA_VERSION_LTE_CURRENT(3, 3, 1));
	T_TRUE(!DOCA_VERSION_LTE_CURRENT(3, 4, 0));
	T_TRUE(!DOCA_VERSION_LTE_CURRENT(4, 0, 0));
	T_EQ_INT(DOCA_VERSION_OFFICIAL, DOCA_VERSION_CALC(3, 3, 0));
	T_EQ_INT(DOCA_VERSION_CALC(3, 3, 1) - DOCA_VERSION_CALC(3, 3, 0), 1000);
	T_TRUE(DOCA_VERSION_CALC_EXACT(3, 3, 0) < DOCA_VERSION_CALC_EXACT(3, 3, 1));
	T_TRUE(DOCA_VERSION_CALC_EXACT(3, 255, 0) < DOCA_VERSION_CALC_EXACT(4, 0, 0));

	T_DONE();
}
