/*
 * softdpu internal: the configuration registry (softdpu's environment variables).
 *
 * One table in config.c lists every variable softdpu reads: its name, its default (as a
 * string, possibly empty), a help line and how its value is parsed. Adding a variable is one
 * row there plus one id here (and a line in docs/environment.md). Code never calls getenv() for
 * these names directly; it asks the registry, which reports a bad value once, naming the
 * variable and what was expected.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_CONFIG_H_
#define SDP_CONFIG_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "doca_error.h"

enum sdp_config_id {
	SDP_CFG_DOCA_LOG_LEVEL,
	SDP_CFG_PROVIDER_PATH,
	SDP_CFG_DEVICES,
	SDP_CFG_DEVICE_CONFIG,
	SDP_CFG_HOST_DEV_ALIASES,
	SDP_CFG_UROM_PLUGIN_PATH,
	SDP_CFG_UROM_SERVICE_FILE,
	SDP_CFG_UROM_SERVICE_ADDR,
	SDP_CFG_UROM_SECRET_FILE,
	SDP_CFG_UROM_CONNECT_TIMEOUT_MS,
	SDP_CFG_UROM_DOMAIN_TIMEOUT_MS,
	SDP_CFG_UROM_RUN_DIR,
	SDP_CFG_UROM_WORKER_BIN,
	SDP_CFG_UROM_WORKER_TIMEOUT_MS,
	SDP_CFG_UROM_XRMA,
	SDP_CFG_GPU_CC_OVERRIDE,
	SDP_CFG_OOB_ROOT,
	SDP_CFG_OOB_RANK,
	SDP_CFG_OOB_SIZE,
	SDP_CFG_OOB_SECRET_FILE,
	SDP_CFG_OOB_TIMEOUT_MS,
	SDP_CFG_MPI,
	SDP_CFG_MPI_STATS,
	SDP_CFG_MPI_VERBOSE,
	SDP_CFG_MPI_POOL_MB,
	SDP_CFG_MPI_WORKER_CPUS,
	SDP_CFG_MPI_ZCOPY_MIN,
	SDP_CFG_ETH_PROFILE,
	SDP_CFG_COUNT
};

/* The variable's name, e.g. "SOFTDPU_DEVICES"; NULL for an id out of range. */
const char *sdp_config_name(enum sdp_config_id id);

/* The built-in default (may be ""); NULL for an id out of range. */
const char *sdp_config_default(enum sdp_config_id id);

/*
 * The environment value when the variable is set (even to ""), else the default (may be "").
 * NULL only for an id out of range. The string stays valid until the environment changes.
 */
const char *sdp_config_get_string(enum sdp_config_id id);

/*
 * The value parsed with the entry's parser: a number for uint entries, 0/1 for bool entries, the
 * level for log-level entries. INVALID_VALUE (logged with the variable's name and the expected
 * form) for a bad value, for an id out of range, for a NULL value_p or for a list or string
 * entry; NOT_FOUND (not logged) when neither the environment nor the default holds a value.
 */
doca_error_t sdp_config_get_uint(enum sdp_config_id id, uint64_t *value_p);

/*
 * Split a list entry (path list or other separated list) into its non-empty, trimmed elements.
 * *items_p receives a NULL-terminated array (free it with sdp_config_free_list) and *count_p
 * the number of elements; an empty value gives an empty array. INVALID_VALUE (logged) when the
 * entry is not a list or an element is too long; NO_MEMORY when out of memory.
 */
doca_error_t sdp_config_get_list(enum sdp_config_id id, char ***items_p, size_t *count_p);
void sdp_config_free_list(char **items);

/* Check the current value with the entry's parser (reports a bad value like the getters). */
doca_error_t sdp_config_check(enum sdp_config_id id);

/* Print every variable: name, default, current value (or "(not set)") and help. */
void sdp_config_print(FILE *stream);

/*
 * Warn (SDK log, WARNING) about each SOFTDPU_* variable in the environment that is not in the
 * table, suggesting the nearest valid name. Runs once per process: the library constructor
 * calls it, later calls do nothing.
 */
void sdp_config_check_unknown(void);

/* The scan itself, every time it is called: returns how many unknown variables it reported. */
unsigned int sdp_config_report_unknown(void);

/*
 * The scalar parsers of the table, for other softdpu code that reads the same kinds of values
 * (device declaration keys, config files). Not logged; *out is set only on success.
 *   uint: decimal, 0x hexadecimal or 0 octal, surrounding blanks allowed, no sign.
 *   bool: 1/0, y/n, yes/no, true/false, on/off (any case) -> 1 or 0.
 */
doca_error_t sdp_config_parse_uint(const char *value, uint64_t *out);
doca_error_t sdp_config_parse_bool(const char *value, uint64_t *out);

/* The nearest registered SOFTDPU_* name to `name` (edit distance), or NULL if none is close. */
const char *sdp_config_suggest(const char *name);

#endif /* SDP_CONFIG_H_ */
