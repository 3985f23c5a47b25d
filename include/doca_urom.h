/*
 * softdpu: DOCA UROM host API (doca_urom.h).
 *
 * The service, worker and domain contexts, command tasks and the cpuset type arrive with the
 * UROM control plane in issue 3, which also adds the UCX include (<ucs/type/cpu_set.h>) that
 * doca_cpu_set_t needs. Until then this header declares only what softdpu implements (nothing)
 * and gives programs the headers they receive through it in DOCA, doca_urom_plugin.h included.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_UROM_H_
#define DOCA_UROM_H_

#include "doca_error.h"
#include "doca_types.h"
#include "doca_urom_plugin.h"

#endif /* DOCA_UROM_H_ */
