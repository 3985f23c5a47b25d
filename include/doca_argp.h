/*
 * softdpu: DOCA Arg Parser (libdoca_argp, pkg-config doca-argp).
 *
 * A program describes its command-line flags as params (name, type, description and a callback),
 * registers them, and hands argc/argv to doca_argp_start(). The parser checks the whole command
 * line (and an optional JSON file given with -j/--json) before it calls any callback, then calls
 * each param's callback with a pointer to the converted value and the program's config pointer.
 * The value pointer is only valid during the callback; the callback copies what it keeps.
 *
 * Value handed to a callback, by type:
 *   DOCA_ARGP_TYPE_STRING  char *   (NUL-terminated)
 *   DOCA_ARGP_TYPE_INT     int *
 *   DOCA_ARGP_TYPE_BOOLEAN bool *   (a flag without argument on the command line means true)
 *   DOCA_ARGP_TYPE_DOUBLE  double *
 * DEVICE and DEVICE_REP params are refused at registration with DOCA_ERROR_NOT_SUPPORTED.
 *
 * Built-in flags: -h/--help, -v/--version, -l/--log-level, --sdk-log-level, -j/--json.
 * docs/argp.md describes the JSON file and the errors.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef DOCA_ARGP_H_
#define DOCA_ARGP_H_

#include <stdarg.h>

#include "doca_compat.h"
#include "doca_dev.h"
#include "doca_error.h"
#include "doca_log.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Called with (pointer to the flag's value, program config given to doca_argp_init). */
typedef doca_error_t (*doca_argp_param_cb_t)(void *, void *);

/* Called once after every flag was handed over, with the program config. */
typedef doca_error_t (*doca_argp_validation_cb_t)(void *);

/* The kind of value a flag carries. */
enum doca_argp_type {
	DOCA_ARGP_TYPE_UNKNOWN = 0,
	DOCA_ARGP_TYPE_STRING,
	DOCA_ARGP_TYPE_INT,
	DOCA_ARGP_TYPE_BOOLEAN,
	DOCA_ARGP_TYPE_DEVICE,
	DOCA_ARGP_TYPE_DEVICE_REP,
	DOCA_ARGP_TYPE_DOUBLE,
};

/* One program flag; created by doca_argp_param_create, owned by argp once registered. */
struct doca_argp_param;

/* Print the usage of the program (every built-in and registered flag) to stdout. */
DOCA_EXPERIMENTAL
void doca_argp_usage(void);

/*
 * Start the parser. program_name may be NULL (the name then comes from argv[0]); program_config
 * is handed to every callback. BAD_STATE when already initialised.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_init(const char *program_name, void *program_config);

/*
 * Hand a param to argp. argp owns the param afterwards in every case, success or not (a param
 * that fails registration is freed). INITIALIZATION when a name, the description, the callback
 * or the type is missing; INVALID_VALUE for a name that is malformed or already taken (the
 * built-ins included); NOT_SUPPORTED for DEVICE/DEVICE_REP; BAD_STATE before init, after start,
 * or when the param is already registered.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_param(struct doca_argp_param *input_param);

/* Replace the default -v/--version output; the callback receives (NULL, program config). */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_version_callback(doca_argp_param_cb_t callback);

/* Called with the program config after all flag callbacks succeeded; its error fails start. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_validation_callback(doca_argp_validation_cb_t callback);

/*
 * Parse argv (and the JSON file given with -j), then call the callbacks. -h and -v print and
 * end the process with exit status 0. Every other problem is reported in one line naming the
 * flag or JSON key, followed by the usage, and returned: INVALID_VALUE for bad input,
 * NOT_FOUND for a missing JSON file, IO_FAILED when it cannot be read, NOT_SUPPORTED for -j in
 * a build without JSON support, a callback's own error as it returned it. BAD_STATE before init
 * or on a second call.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_start(int argc, char **argv);

/* Free every param (registered or not) and return to the uninitialised state. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_destroy(void);

/* Create an empty param; BAD_STATE before doca_argp_init. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_param_create(struct doca_argp_param **param);

/*
 * Param setters. The strings are copied. A NULL param or value, or a param that is already
 * registered, is refused with a logged error and leaves the param unchanged.
 */
DOCA_EXPERIMENTAL
void doca_argp_param_set_short_name(struct doca_argp_param *param, const char *name);

DOCA_EXPERIMENTAL
void doca_argp_param_set_long_name(struct doca_argp_param *param, const char *name);

/* How the argument appears in the usage, e.g. "<path>". */
DOCA_EXPERIMENTAL
void doca_argp_param_set_arguments(struct doca_argp_param *param, const char *arguments);

DOCA_EXPERIMENTAL
void doca_argp_param_set_description(struct doca_argp_param *param, const char *description);

DOCA_EXPERIMENTAL
void doca_argp_param_set_callback(struct doca_argp_param *param, doca_argp_param_cb_t callback);

DOCA_EXPERIMENTAL
void doca_argp_param_set_type(struct doca_argp_param *param, enum doca_argp_type type);

/* start fails with INVALID_VALUE when a mandatory flag is given neither on the line nor in JSON. */
DOCA_EXPERIMENTAL
void doca_argp_param_set_mandatory(struct doca_argp_param *param);

/* The flag is accepted on the command line only, never from the JSON file. */
DOCA_EXPERIMENTAL
void doca_argp_param_set_cli_only(struct doca_argp_param *param);

/*
 * The flag may be given several times; the callback runs once per value. In JSON the values are
 * an array. Without this, a repeated flag is an error.
 */
DOCA_EXPERIMENTAL
void doca_argp_param_set_multiplicity(struct doca_argp_param *param);

/* The flag must be the only program flag given. */
DOCA_EXPERIMENTAL
void doca_argp_param_set_singular(struct doca_argp_param *param);

/* The flag works but is left out of the usage. */
DOCA_EXPERIMENTAL
void doca_argp_param_set_hidden(struct doca_argp_param *param);

/* Free a param that was never registered; BAD_STATE for a registered one. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_param_destroy(struct doca_argp_param *param);

/* The level given with -l/--log-level (or JSON), else the current global application limit. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_get_log_level(int *log_level);

/* The level given with --sdk-log-level (or JSON), else the current global SDK limit. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_get_sdk_log_level(int *log_level);

/* Ignore (instead of refusing) unknown sections and keys in the JSON file. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_disable_pedantic_config_parsing(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DOCA_ARGP_H_ */
