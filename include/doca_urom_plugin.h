/*
 * softdpu: DOCA UROM worker plugin interface (doca_urom_plugin.h).
 *
 * The plugin interface (struct urom_plugin_iface, the command and notification descriptors,
 * struct doca_urom_service_plugin_info, the domain lookups) arrives with the UROM control plane
 * in issue 3, which also brings the UCX include this header needs for ucs_list_link_t. Until
 * then it declares only what softdpu implements (nothing) and gives programs the headers they
 * receive through it in DOCA.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_UROM_PLUGIN_H_
#define DOCA_UROM_PLUGIN_H_

#include <limits.h>

#include "doca_compat.h"
#include "doca_error.h"

#endif /* DOCA_UROM_PLUGIN_H_ */
