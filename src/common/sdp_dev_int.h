/*
 * softdpu internal to libdoca_common: what dev.c needs from provider.c. Not exported.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_DEV_INT_H_
#define SDP_DEV_INT_H_

#include <stddef.h>

#include "sdp_provider.h"

#define SDP_HIDDEN __attribute__((visibility("hidden")))

/* Number of loaded providers (after sdp_providers_load). */
SDP_HIDDEN size_t sdp_providers_num(void);

/* Provider idx: its ops, and the declarations it kept. NULL past the end. */
SDP_HIDDEN const struct sdp_provider_ops *
sdp_providers_ops(size_t idx, const struct sdp_dev_decl *const **decls, size_t *num_decls);

#endif /* SDP_DEV_INT_H_ */
