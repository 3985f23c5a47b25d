/*
 * softdpu: DOCA Arg Parser.
 *
 * doca_argp_start() works in two phases. The first reads the whole command line and the JSON
 * file into a list of converted values without side effects; any problem there is reported in
 * one line naming the flag (or JSON key), followed by the usage on stderr. Only when the input as
 * a whole is valid does the second phase apply the log levels and call the callbacks: values
 * from the JSON file first, then those of the command line in their order, so the command line
 * overrides the file.
 *
 * Output on stdout/stderr: the usage (-h, and after an input error) and the version (-v) are
 * user-facing output of a command-line parser and are printed directly; everything else goes
 * through the SDK logger.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_build_config.h" /* build facts: versions, paths, SDP_HAVE_* */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doca_argp.h"
#include "doca_log.h"
#include "doca_version.h"
#include "sdp_check.h"
#include "sdp_list.h"
#include "sdp_log.h"

/* Build facts (SDP_HAVE_JSONC, SOFTDPU_VERSION) come from sdp_build_config.h. */
#ifndef SDP_HAVE_JSONC
#error "sdp_build_config.h was not included (build through meson)"
#endif

#if SDP_HAVE_JSONC
#include <json-c/json.h>
#endif

SDP_LOG_COMPONENT("argp");

/* Sections of the JSON file, as DOCA names them. */
#define ARGP_JSON_GENERAL "doca_general_flags"
#define ARGP_JSON_PROGRAM "doca_program_flags"
#define ARGP_JSON_DPDK "doca_dpdk_flags"

/* A JSON configuration file larger than this is refused (it is hand-written configuration). */
#define ARGP_JSON_MAX_SIZE (16u << 20)

/* Width of the flag column in the usage. */
#define ARGP_USAGE_MIN_COLUMN 34

struct doca_argp_param {
	sdp_list_link_t link; /* in argp.created until registered, then in argp.params */
	char *short_name;
	char *long_name;
	char *arguments;
	char *description;
	doca_argp_param_cb_t callback;
	enum doca_argp_type type;
	bool mandatory;
	bool cli_only;
	bool multiplicity;
	bool singular;
	bool hidden;
	bool registered;
	bool out_of_memory; /* a setter could not copy its string */
};

enum argp_state {
	ARGP_STATE_UNINIT = 0,
	ARGP_STATE_READY,   /* initialised, params may be registered */
	ARGP_STATE_STARTED, /* doca_argp_start was called (successfully or not) */
};

/* The built-in flags. */
enum argp_builtin {
	ARGP_BI_NONE = 0,
	ARGP_BI_HELP,
	ARGP_BI_VERSION,
	ARGP_BI_LOG_LEVEL,
	ARGP_BI_SDK_LOG_LEVEL,
	ARGP_BI_JSON,
};

struct argp_builtin_desc {
	enum argp_builtin id;
	const char *short_name; /* NULL when there is none */
	const char *long_name;
	const char *arguments; /* NULL for a flag without argument */
	const char *description;
};

static const struct argp_builtin_desc argp_builtins[] = {
	{ARGP_BI_HELP, "h", "help", NULL, "Print this help and exit"},
	{ARGP_BI_VERSION, "v", "version", NULL, "Print the program and DOCA versions and exit"},
	{ARGP_BI_LOG_LEVEL, "l", "log-level", "<10..70>",
	 "Application log level: 10=DISABLE, 20=CRITICAL, 30=ERROR, 40=WARNING, 50=INFO, "
	 "60=DEBUG, 70=TRACE"},
	{ARGP_BI_SDK_LOG_LEVEL, NULL, "sdk-log-level", "<10..70>",
	 "SDK (library) log level, same values as --log-level"},
	{ARGP_BI_JSON, "j", "json", "<path>", "Read the flags from a JSON file"},
};

#define ARGP_NUM_BUILTINS (sizeof(argp_builtins) / sizeof(argp_builtins[0]))

static struct {
	enum argp_state state;
	char *program_name; /* from doca_argp_init, else from argv[0] at start; may be NULL */
	void *program_config;
	sdp_list_link_t created; /* params created and not yet registered */
	sdp_list_link_t params;	 /* registered params, in registration order */
	doca_argp_param_cb_t version_cb;
	doca_argp_validation_cb_t validation_cb;
	bool lenient_json; /* doca_argp_disable_pedantic_config_parsing was called */
	int log_level;	   /* given by the user; -1 when not */
	int sdk_log_level; /* given by the user; -1 when not */
} argp;

/* Where a value came from (for messages and for the "given twice" check). */
enum argp_origin {
	ARGP_ORIGIN_CLI,
	ARGP_ORIGIN_JSON,
};

/* One converted value waiting for its callback. */
struct argp_value {
	struct doca_argp_param *param;
	enum argp_origin origin;
	union {
		int i;
		bool b;
		double d;
		char *s;
	} v;
};

/* Everything doca_argp_start collects before it changes anything. */
struct argp_run {
	struct argp_value *values;
	size_t num_values;
	size_t cap_values;
	const char *json_path;
	int log_level;	   /* -1 when not given */
	int sdk_log_level; /* -1 when not given */
	bool log_level_from_cli;
	bool sdk_log_level_from_cli;
};

/* ---- helpers ---------------------------------------------------------------------------- */

/* "-t/--time", "--time" or "-t": how messages and the usage name a flag. */
static const char *argp_flag_label(const char *short_name, const char *long_name, char *buf,
				   size_t len)
{
	if (short_name != NULL && long_name != NULL)
		snprintf(buf, len, "-%s/--%s", short_name, long_name);
	else if (long_name != NULL)
		snprintf(buf, len, "--%s", long_name);
	else
		snprintf(buf, len, "-%s", short_name != NULL ? short_name : "?");
	return buf;
}

static const char *argp_param_label(const struct doca_argp_param *param, char *buf, size_t len)
{
	return argp_flag_label(param->short_name, param->long_name, buf, len);
}

static const char *argp_value_type_name(enum doca_argp_type type)
{
	switch (type) {
	case DOCA_ARGP_TYPE_STRING:
		return "a string";
	case DOCA_ARGP_TYPE_INT:
		return "an integer";
	case DOCA_ARGP_TYPE_BOOLEAN:
		return "a boolean";
	case DOCA_ARGP_TYPE_DOUBLE:
		return "a number";
	case DOCA_ARGP_TYPE_DEVICE:
		return "a device";
	case DOCA_ARGP_TYPE_DEVICE_REP:
		return "a device representor";
	default:
		return "an unknown type";
	}
}

static void argp_param_free(struct doca_argp_param *param)
{
	free(param->short_name);
	free(param->long_name);
	free(param->arguments);
	free(param->description);
	free(param);
}

static const char *argp_program_name(void)
{
	return argp.program_name != NULL ? argp.program_name : "program";
}

/* Parse a base-10 int: no sign-only, no blanks, no trailing characters, within int range. */
static bool argp_parse_int(const char *text, int *out, const char **why)
{
	char *end = NULL;
	long long val;

	if (text[0] == '\0' || isspace((unsigned char)text[0])) {
		*why = "not an integer";
		return false;
	}
	errno = 0;
	val = strtoll(text, &end, 10);
	if (end == text || *end != '\0') {
		*why = "not an integer";
		return false;
	}
	if (errno == ERANGE || val < INT_MIN || val > INT_MAX) {
		*why = "out of the range of an int";
		return false;
	}
	*out = (int)val;
	return true;
}

static bool argp_parse_double(const char *text, double *out, const char **why)
{
	char *end = NULL;
	double val;

	if (text[0] == '\0' || isspace((unsigned char)text[0])) {
		*why = "not a number";
		return false;
	}
	errno = 0;
	val = strtod(text, &end);
	if (end == text || *end != '\0') {
		*why = "not a number";
		return false;
	}
	if (!isfinite(val)) {
		*why = isnan(val) ? "not a number" : "out of range";
		return false;
	}
	if (errno == ERANGE && (val == HUGE_VAL || val == -HUGE_VAL)) {
		*why = "out of range";
		return false;
	}
	*out = val;
	return true;
}

static bool argp_parse_bool(const char *text, bool *out)
{
	if (strcasecmp(text, "true") == 0 || strcmp(text, "1") == 0) {
		*out = true;
		return true;
	}
	if (strcasecmp(text, "false") == 0 || strcmp(text, "0") == 0) {
		*out = false;
		return true;
	}
	return false;
}

static bool argp_log_level_valid(long long level)
{
	return level >= DOCA_LOG_LEVEL_DISABLE && level <= DOCA_LOG_LEVEL_TRACE && level % 10 == 0;
}

/* ---- usage ------------------------------------------------------------------------------ */

static int argp_usage_head(FILE *out, const char *short_name, const char *long_name,
			   const char *arguments)
{
	int n = 0;

	if (short_name != NULL && long_name != NULL)
		n = fprintf(out, "  -%s, --%s", short_name, long_name);
	else if (long_name != NULL)
		n = fprintf(out, "  --%s", long_name);
	else
		n = fprintf(out, "  -%s", short_name);
	if (arguments != NULL && arguments[0] != '\0')
		n += fprintf(out, " %s", arguments);
	return n;
}

static size_t argp_usage_head_width(const char *short_name, const char *long_name,
				    const char *arguments)
{
	size_t w = 2;

	if (short_name != NULL)
		w += 1 + strlen(short_name) + (long_name != NULL ? 2 : 0);
	if (long_name != NULL)
		w += 2 + strlen(long_name);
	if (arguments != NULL && arguments[0] != '\0')
		w += 1 + strlen(arguments);
	return w;
}

static void argp_usage_line(FILE *out, size_t column, const char *short_name, const char *long_name,
			    const char *arguments, const char *description, bool mandatory)
{
	int n = argp_usage_head(out, short_name, long_name, arguments);

	fprintf(out, "%*s%s%s\n", (int)(column - (size_t)(n > 0 ? n : 0)), "",
		description != NULL ? description : "", mandatory ? " (mandatory)" : "");
}

static void argp_print_usage(FILE *out)
{
	struct doca_argp_param *param;
	size_t column = ARGP_USAGE_MIN_COLUMN;
	bool any_program_flag = false;

	if (argp.state == ARGP_STATE_UNINIT)
		return;

	for (size_t i = 0; i < ARGP_NUM_BUILTINS; i++) {
		size_t w = argp_usage_head_width(argp_builtins[i].short_name,
						 argp_builtins[i].long_name,
						 argp_builtins[i].arguments);
		if (w + 2 > column)
			column = w + 2;
	}
	sdp_list_for_each(param, &argp.params, link) {
		size_t w;

		if (param->hidden)
			continue;
		any_program_flag = true;
		w = argp_usage_head_width(param->short_name, param->long_name, param->arguments);
		if (w + 2 > column)
			column = w + 2;
	}

	fprintf(out, "Usage: %s [DOCA Flags] [Program Flags]\n\nDOCA Flags:\n",
		argp_program_name());
	for (size_t i = 0; i < ARGP_NUM_BUILTINS; i++)
		argp_usage_line(out, column, argp_builtins[i].short_name,
				argp_builtins[i].long_name, argp_builtins[i].arguments,
				argp_builtins[i].description, false);
	if (any_program_flag) {
		fprintf(out, "\nProgram Flags:\n");
		sdp_list_for_each(param, &argp.params, link) {
			if (!param->hidden)
				argp_usage_line(out, column, param->short_name, param->long_name,
						param->arguments, param->description,
						param->mandatory);
		}
	}
	fflush(out);
}

/*
 * The state check of the calls that need doca_argp_init first and, with need_ready, come before
 * doca_argp_start: DOCA_ERROR_BAD_STATE, logged on behalf of func (the call made), or
 * DOCA_SUCCESS.
 */
static doca_error_t argp_check_state(bool need_ready, const char *func)
{
	if (argp.state == ARGP_STATE_UNINIT) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func,
			   "argp is not initialised (call doca_argp_init)");
		return DOCA_ERROR_BAD_STATE;
	}
	if (need_ready && argp.state != ARGP_STATE_READY) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func, "doca_argp_start was already called");
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

void doca_argp_usage(void)
{
	if (argp_check_state(false, __func__) == DOCA_SUCCESS)
		argp_print_usage(stdout);
}

/* ---- init / destroy --------------------------------------------------------------------- */

doca_error_t doca_argp_init(const char *program_name, void *program_config)
{
	char *name = NULL;

	if (argp.state != ARGP_STATE_UNINIT) {
		sdp_error("argp is already initialised (call doca_argp_destroy first)");
		return DOCA_ERROR_BAD_STATE;
	}
	if (program_name != NULL) {
		if (program_name[0] == '\0') {
			sdp_error("empty program name (pass NULL to use argv[0])");
			return DOCA_ERROR_INVALID_VALUE;
		}
		name = strdup(program_name);
		if (name == NULL) {
			sdp_error("out of memory copying the program name");
			return DOCA_ERROR_NO_MEMORY;
		}
	}

	memset(&argp, 0, sizeof(argp));
	argp.program_name = name;
	argp.program_config = program_config;
	sdp_list_head_init(&argp.created);
	sdp_list_head_init(&argp.params);
	argp.log_level = -1;
	argp.sdk_log_level = -1;
	argp.state = ARGP_STATE_READY;
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_destroy(void)
{
	doca_error_t status = argp_check_state(false, __func__);
	struct doca_argp_param *param, *tmp;

	if (status != DOCA_SUCCESS)
		return status;
	sdp_list_for_each_safe(param, tmp, &argp.params, link) {
		sdp_list_del(&param->link);
		argp_param_free(param);
	}
	sdp_list_for_each_safe(param, tmp, &argp.created, link) {
		sdp_list_del(&param->link);
		argp_param_free(param);
	}
	free(argp.program_name);
	memset(&argp, 0, sizeof(argp));
	argp.state = ARGP_STATE_UNINIT;
	return DOCA_SUCCESS;
}

/* ---- params ----------------------------------------------------------------------------- */

doca_error_t doca_argp_param_create(struct doca_argp_param **param)
{
	doca_error_t status = sdp_check_arg(param, "param", __func__);
	struct doca_argp_param *p;

	if (status == DOCA_SUCCESS)
		status = argp_check_state(false, __func__);
	if (status != DOCA_SUCCESS)
		return status;
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		sdp_error("out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	p->type = DOCA_ARGP_TYPE_UNKNOWN;
	sdp_list_add_tail(&argp.created, &p->link);
	*param = p;
	return DOCA_SUCCESS;
}

/*
 * Common guard of the setters: they change nothing on a NULL or registered param. Logs on
 * behalf of func, the setter called.
 */
static bool argp_param_settable(const struct doca_argp_param *param, const char *func)
{
	if (param == NULL) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func, "NULL param");
		return false;
	}
	if (param->registered) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func,
			   "the param is already registered and can no longer change");
		return false;
	}
	return true;
}

static void argp_param_set_string(struct doca_argp_param *param, char **field, const char *value,
				  const char *func)
{
	char *copy;

	if (!argp_param_settable(param, func))
		return;
	if (value == NULL) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func, "NULL value");
		return;
	}
	copy = strdup(value);
	if (copy == NULL) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func, "out of memory copying \"%s\"", value);
		param->out_of_memory = true;
		return;
	}
	free(*field);
	*field = copy;
}

void doca_argp_param_set_short_name(struct doca_argp_param *param, const char *name)
{
	argp_param_set_string(param, param != NULL ? &param->short_name : NULL, name, __func__);
}

void doca_argp_param_set_long_name(struct doca_argp_param *param, const char *name)
{
	argp_param_set_string(param, param != NULL ? &param->long_name : NULL, name, __func__);
}

void doca_argp_param_set_arguments(struct doca_argp_param *param, const char *arguments)
{
	argp_param_set_string(param, param != NULL ? &param->arguments : NULL, arguments, __func__);
}

void doca_argp_param_set_description(struct doca_argp_param *param, const char *description)
{
	argp_param_set_string(param, param != NULL ? &param->description : NULL, description,
			      __func__);
}

void doca_argp_param_set_callback(struct doca_argp_param *param, doca_argp_param_cb_t callback)
{
	if (!argp_param_settable(param, __func__))
		return;
	param->callback = callback;
}

void doca_argp_param_set_type(struct doca_argp_param *param, enum doca_argp_type type)
{
	if (!argp_param_settable(param, __func__))
		return;
	if ((int)type < (int)DOCA_ARGP_TYPE_UNKNOWN || (int)type > (int)DOCA_ARGP_TYPE_DOUBLE) {
		sdp_error("unknown type %d", (int)type);
		return;
	}
	param->type = type;
}

void doca_argp_param_set_mandatory(struct doca_argp_param *param)
{
	if (argp_param_settable(param, __func__))
		param->mandatory = true;
}

void doca_argp_param_set_cli_only(struct doca_argp_param *param)
{
	if (argp_param_settable(param, __func__))
		param->cli_only = true;
}

void doca_argp_param_set_multiplicity(struct doca_argp_param *param)
{
	if (argp_param_settable(param, __func__))
		param->multiplicity = true;
}

void doca_argp_param_set_singular(struct doca_argp_param *param)
{
	if (argp_param_settable(param, __func__))
		param->singular = true;
}

void doca_argp_param_set_hidden(struct doca_argp_param *param)
{
	if (argp_param_settable(param, __func__))
		param->hidden = true;
}

doca_error_t doca_argp_param_destroy(struct doca_argp_param *param)
{
	if (param == NULL) {
		sdp_error("NULL param");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (param->registered) {
		sdp_error("the param is registered; argp owns and frees it");
		return DOCA_ERROR_BAD_STATE;
	}
	sdp_list_del(&param->link);
	argp_param_free(param);
	return DOCA_SUCCESS;
}

/* A flag name: letters, digits, '-' and '_', not starting with '-'. */
static bool argp_name_valid(const char *name)
{
	if (name[0] == '\0' || name[0] == '-')
		return false;
	for (const char *c = name; *c != '\0'; c++) {
		if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_')
			return false;
	}
	return true;
}

/* Which flag (built-in or registered) already uses this name, NULL when none. */
static const char *argp_name_owner(const char *name, bool is_long, char *buf, size_t len)
{
	struct doca_argp_param *param;

	for (size_t i = 0; i < ARGP_NUM_BUILTINS; i++) {
		const char *used =
			is_long ? argp_builtins[i].long_name : argp_builtins[i].short_name;
		if (used != NULL && strcmp(used, name) == 0)
			return argp_flag_label(argp_builtins[i].short_name,
					       argp_builtins[i].long_name, buf, len);
	}
	sdp_list_for_each(param, &argp.params, link) {
		const char *used = is_long ? param->long_name : param->short_name;
		if (used != NULL && strcmp(used, name) == 0)
			return argp_param_label(param, buf, len);
	}
	return NULL;
}

/*
 * Checks of doca_argp_register_param that do not depend on the module state; logged on behalf
 * of func, the call made.
 */
static doca_error_t argp_param_check(const struct doca_argp_param *param, const char *func)
{
	char label[160], owner_buf[160];
	const char *owner;

	argp_param_label(param, label, sizeof(label));
	if (param->out_of_memory) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func,
			   "param %s: a setter ran out of memory earlier", label);
		return DOCA_ERROR_NO_MEMORY;
	}
	if (param->short_name == NULL && param->long_name == NULL) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func,
			   "the param has neither a short nor a long name");
		return DOCA_ERROR_INITIALIZATION;
	}
	if (param->description == NULL) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func, "param %s: no description set", label);
		return DOCA_ERROR_INITIALIZATION;
	}
	if (param->callback == NULL) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func, "param %s: no callback set", label);
		return DOCA_ERROR_INITIALIZATION;
	}
	if (param->type == DOCA_ARGP_TYPE_UNKNOWN) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func, "param %s: no type set", label);
		return DOCA_ERROR_INITIALIZATION;
	}
	if (param->type == DOCA_ARGP_TYPE_DEVICE || param->type == DOCA_ARGP_TYPE_DEVICE_REP) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func,
			   "param %s: type %s is not supported by softdpu (use a STRING flag and "
			   "open the device in the callback)",
			   label, argp_value_type_name(param->type));
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (param->short_name != NULL && !argp_name_valid(param->short_name)) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func,
			   "param %s: invalid short name \"%s\" (letters, digits, '-' and '_', not "
			   "starting with '-')",
			   label, param->short_name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (param->long_name != NULL && !argp_name_valid(param->long_name)) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func,
			   "param %s: invalid long name \"%s\" (letters, digits, '-' and '_', not "
			   "starting with '-')",
			   label, param->long_name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (param->short_name != NULL) {
		owner = argp_name_owner(param->short_name, false, owner_buf, sizeof(owner_buf));
		if (owner != NULL) {
			sdp_log_as(DOCA_LOG_LEVEL_ERROR, func,
				   "param %s: short name -%s is already used by %s", label,
				   param->short_name, owner);
			return DOCA_ERROR_INVALID_VALUE;
		}
	}
	if (param->long_name != NULL) {
		owner = argp_name_owner(param->long_name, true, owner_buf, sizeof(owner_buf));
		if (owner != NULL) {
			sdp_log_as(DOCA_LOG_LEVEL_ERROR, func,
				   "param %s: long name --%s is already used by %s", label,
				   param->long_name, owner);
			return DOCA_ERROR_INVALID_VALUE;
		}
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_register_param(struct doca_argp_param *input_param)
{
	doca_error_t status;

	if (input_param == NULL) {
		sdp_error("NULL param");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (input_param->registered) {
		/* Already owned by the registered list: must not be freed a second time. */
		sdp_error("the param is already registered");
		return DOCA_ERROR_BAD_STATE;
	}
	status = argp_check_state(true, __func__);
	if (status != DOCA_SUCCESS)
		goto err_free;
	status = argp_param_check(input_param, __func__);
	if (status != DOCA_SUCCESS)
		goto err_free;

	sdp_list_del(&input_param->link);
	sdp_list_add_tail(&argp.params, &input_param->link);
	input_param->registered = true;
	return DOCA_SUCCESS;

err_free:
	/* argp owns the param in every flow; a refused one is released here. */
	sdp_list_del(&input_param->link);
	argp_param_free(input_param);
	return status;
}

/* The checks of the callback registrations: a callback (set is callback != NULL), after init. */
static doca_error_t argp_callback_check(bool set, const char *func)
{
	if (!set) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func, "NULL callback");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return argp_check_state(false, func);
}

doca_error_t doca_argp_register_version_callback(doca_argp_param_cb_t callback)
{
	doca_error_t status = argp_callback_check(callback != NULL, __func__);

	if (status == DOCA_SUCCESS)
		argp.version_cb = callback;
	return status;
}

doca_error_t doca_argp_register_validation_callback(doca_argp_validation_cb_t callback)
{
	doca_error_t status = argp_callback_check(callback != NULL, __func__);

	if (status == DOCA_SUCCESS)
		argp.validation_cb = callback;
	return status;
}

doca_error_t doca_argp_disable_pedantic_config_parsing(void)
{
	doca_error_t status = argp_check_state(true, __func__);

	if (status == DOCA_SUCCESS)
		argp.lenient_json = true;
	return status;
}

/* The log level argp took from the command line or configuration, else the global one. */
static doca_error_t argp_log_level_get(int argp_level, int global_level, int *log_level,
				       const char *func)
{
	doca_error_t status = sdp_check_arg(log_level, "log_level", func);

	if (status == DOCA_SUCCESS)
		*log_level = argp_level >= 0 ? argp_level : global_level;
	return status;
}

doca_error_t doca_argp_get_log_level(int *log_level)
{
	return argp_log_level_get(argp.log_level, (int)doca_log_level_get_global_lower_limit(),
				  log_level, __func__);
}

doca_error_t doca_argp_get_sdk_log_level(int *log_level)
{
	return argp_log_level_get(argp.sdk_log_level, (int)doca_log_level_get_global_sdk_limit(),
				  log_level, __func__);
}

/* ---- start: collecting values ----------------------------------------------------------- */

static void argp_run_free(struct argp_run *run)
{
	for (size_t i = 0; i < run->num_values; i++) {
		if (run->values[i].param->type == DOCA_ARGP_TYPE_STRING)
			free(run->values[i].v.s);
	}
	free(run->values);
	memset(run, 0, sizeof(*run));
}

/* Append a value slot for param; NULL (logged) when out of memory. */
static struct argp_value *argp_run_add(struct argp_run *run, struct doca_argp_param *param,
				       enum argp_origin origin)
{
	struct argp_value *val;

	if (run->num_values == run->cap_values) {
		size_t cap = run->cap_values != 0 ? run->cap_values * 2 : 16;
		struct argp_value *grown = realloc(run->values, cap * sizeof(*grown));

		if (grown == NULL) {
			sdp_error("out of memory collecting %zu flag values", cap);
			return NULL;
		}
		run->values = grown;
		run->cap_values = cap;
	}
	val = &run->values[run->num_values++];
	memset(val, 0, sizeof(*val));
	val->param = param;
	val->origin = origin;
	return val;
}

/* True when param already has a value from this origin. */
static bool argp_run_has(const struct argp_run *run, const struct doca_argp_param *param,
			 enum argp_origin origin)
{
	for (size_t i = 0; i < run->num_values; i++) {
		if (run->values[i].param == param && run->values[i].origin == origin)
			return true;
	}
	return false;
}

/* Convert a command-line text for param into a new value; logs and fails on bad input. */
static doca_error_t argp_cli_add_value(struct argp_run *run, struct doca_argp_param *param,
				       const char *typed, const char *text)
{
	struct argp_value *val;
	const char *why = NULL;
	int i_val = 0;
	double d_val = 0;
	bool b_val = true;
	char *s_val = NULL;

	if (!param->multiplicity && argp_run_has(run, param, ARGP_ORIGIN_CLI)) {
		sdp_error("flag %s: given more than once", typed);
		return DOCA_ERROR_INVALID_VALUE;
	}
	switch (param->type) {
	case DOCA_ARGP_TYPE_INT:
		if (!argp_parse_int(text, &i_val, &why)) {
			sdp_error("flag %s: value \"%s\" is %s", typed, text, why);
			return DOCA_ERROR_INVALID_VALUE;
		}
		break;
	case DOCA_ARGP_TYPE_DOUBLE:
		if (!argp_parse_double(text, &d_val, &why)) {
			sdp_error("flag %s: value \"%s\" is %s", typed, text, why);
			return DOCA_ERROR_INVALID_VALUE;
		}
		break;
	case DOCA_ARGP_TYPE_BOOLEAN:
		if (text != NULL && !argp_parse_bool(text, &b_val)) {
			sdp_error("flag %s: value \"%s\" is not a boolean (true or false)", typed,
				  text);
			return DOCA_ERROR_INVALID_VALUE;
		}
		break;
	case DOCA_ARGP_TYPE_STRING:
		s_val = strdup(text);
		if (s_val == NULL) {
			sdp_error("flag %s: out of memory copying its value", typed);
			return DOCA_ERROR_NO_MEMORY;
		}
		break;
	default:
		/* Registration refuses every other type. */
		sdp_error("flag %s: unexpected type %d", typed, (int)param->type);
		return DOCA_ERROR_UNEXPECTED;
	}

	val = argp_run_add(run, param, ARGP_ORIGIN_CLI);
	if (val == NULL) {
		free(s_val);
		return DOCA_ERROR_NO_MEMORY;
	}
	switch (param->type) {
	case DOCA_ARGP_TYPE_INT:
		val->v.i = i_val;
		break;
	case DOCA_ARGP_TYPE_DOUBLE:
		val->v.d = d_val;
		break;
	case DOCA_ARGP_TYPE_BOOLEAN:
		val->v.b = b_val;
		break;
	default:
		val->v.s = s_val;
		break;
	}
	return DOCA_SUCCESS;
}

static doca_error_t argp_cli_log_level(const char *typed, const char *text, int *out)
{
	const char *why = NULL;
	int level;

	if (!argp_parse_int(text, &level, &why)) {
		sdp_error("flag %s: value \"%s\" is %s (expected 10, 20, ... 70)", typed, text,
			  why);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!argp_log_level_valid(level)) {
		sdp_error("flag %s: invalid log level %d (expected 10, 20, 30, 40, 50, 60 or 70)",
			  typed, level);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*out = level;
	return DOCA_SUCCESS;
}

/* Print usage, release argp and end the process successfully (-h). */
static void __attribute__((noreturn)) argp_exit_help(struct argp_run *run)
{
	argp_run_free(run);
	argp_print_usage(stdout);
	doca_argp_destroy();
	exit(EXIT_SUCCESS);
}

/* -v: the program's version callback, or softdpu's own output. Returns only on error. */
static doca_error_t argp_handle_version(struct argp_run *run)
{
	doca_argp_param_cb_t cb = argp.version_cb;
	void *config = argp.program_config;
	doca_error_t status;

	argp_run_free(run);
	if (cb == NULL) {
		printf("%s\nDOCA SDK version (compile time): %s\nDOCA runtime version:            %s\n"
		       "softdpu version:                 %s\n",
		       argp_program_name(), doca_version(), doca_version_runtime(),
		       SOFTDPU_VERSION);
		fflush(stdout);
		doca_argp_destroy();
		exit(EXIT_SUCCESS);
	}
	/* The callback may itself destroy argp and exit, as DOCA programs commonly do. */
	status = cb(NULL, config);
	if (status != DOCA_SUCCESS) {
		sdp_error("flag -v/--version: the program's version callback failed: %s",
			  doca_error_get_name(status));
		return status;
	}
	if (argp.state != ARGP_STATE_UNINIT)
		doca_argp_destroy();
	exit(EXIT_SUCCESS);
}

/* Find the built-in or registered flag a command-line name refers to. */
static bool argp_lookup(const char *name, size_t len, bool is_long,
			const struct argp_builtin_desc **builtin, struct doca_argp_param **param)
{
	struct doca_argp_param *p;

	*builtin = NULL;
	*param = NULL;
	for (size_t i = 0; i < ARGP_NUM_BUILTINS; i++) {
		const char *n = is_long ? argp_builtins[i].long_name : argp_builtins[i].short_name;
		if (n != NULL && strlen(n) == len && strncmp(n, name, len) == 0) {
			*builtin = &argp_builtins[i];
			return true;
		}
	}
	sdp_list_for_each(p, &argp.params, link) {
		const char *n = is_long ? p->long_name : p->short_name;
		if (n != NULL && strlen(n) == len && strncmp(n, name, len) == 0) {
			*param = p;
			return true;
		}
	}
	return false;
}

static bool argp_takes_argument(const struct argp_builtin_desc *builtin,
				const struct doca_argp_param *param)
{
	if (builtin != NULL)
		return builtin->arguments != NULL;
	return param->type != DOCA_ARGP_TYPE_BOOLEAN;
}

/* Read argv into run. -h and -v end the process here. */
static doca_error_t argp_parse_cli(struct argp_run *run, int argc, char **argv)
{
	const struct argp_builtin_desc *builtin;
	struct doca_argp_param *param;
	doca_error_t status;

	for (int i = 1; i < argc && argv[i] != NULL; i++) {
		const char *tok = argv[i];
		const char *value = NULL; /* attached with '=' or glued to a short flag */
		char typed[160];
		bool found;

		if (tok[0] != '-' || tok[1] == '\0') {
			sdp_error("unexpected argument \"%s\" (every argument belongs to a flag)",
				  tok);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (tok[1] == '-') {
			const char *name = tok + 2;
			const char *eq = strchr(name, '=');
			size_t len = eq != NULL ? (size_t)(eq - name) : strlen(name);

			found = len > 0 && argp_lookup(name, len, true, &builtin, &param);
			if (!found) {
				sdp_error("unknown flag \"%.*s\"", (int)(len + 2), tok);
				return DOCA_ERROR_INVALID_VALUE;
			}
			if (eq != NULL)
				value = eq + 1;
			snprintf(typed, sizeof(typed), "--%.*s", (int)len, name);
		} else {
			const char *name = tok + 1;

			found = argp_lookup(name, strlen(name), false, &builtin, &param);
			if (!found && strlen(name) > 1) {
				/* "-t100": a one-letter flag with its value glued on. */
				found = argp_lookup(name, 1, false, &builtin, &param) &&
					argp_takes_argument(builtin, param);
				if (found)
					value = name + 1;
			}
			if (!found) {
				sdp_error("unknown flag \"%s\"", tok);
				return DOCA_ERROR_INVALID_VALUE;
			}
			snprintf(typed, sizeof(typed), "-%.*s",
				 value != NULL ? 1 : (int)strlen(name), name);
		}

		if (argp_takes_argument(builtin, param)) {
			if (value == NULL) {
				if (i + 1 >= argc || argv[i + 1] == NULL) {
					const char *args = builtin != NULL ? builtin->arguments :
									     param->arguments;
					sdp_error("flag %s requires an argument%s%s", typed,
						  args != NULL ? " " : "",
						  args != NULL ? args : "");
					return DOCA_ERROR_INVALID_VALUE;
				}
				value = argv[++i];
			}
		} else if (value != NULL && builtin != NULL) {
			sdp_error("flag %s takes no argument (got \"%s\")", typed, value);
			return DOCA_ERROR_INVALID_VALUE;
		}

		if (param != NULL) {
			status = argp_cli_add_value(run, param, typed, value);
			if (status != DOCA_SUCCESS)
				return status;
			continue;
		}
		switch (builtin->id) {
		case ARGP_BI_HELP:
			argp_exit_help(run);
		case ARGP_BI_VERSION:
			return argp_handle_version(run);
		case ARGP_BI_LOG_LEVEL:
			if (run->log_level_from_cli) {
				sdp_error("flag %s: given more than once", typed);
				return DOCA_ERROR_INVALID_VALUE;
			}
			status = argp_cli_log_level(typed, value, &run->log_level);
			if (status != DOCA_SUCCESS)
				return status;
			run->log_level_from_cli = true;
			break;
		case ARGP_BI_SDK_LOG_LEVEL:
			if (run->sdk_log_level_from_cli) {
				sdp_error("flag %s: given more than once", typed);
				return DOCA_ERROR_INVALID_VALUE;
			}
			status = argp_cli_log_level(typed, value, &run->sdk_log_level);
			if (status != DOCA_SUCCESS)
				return status;
			run->sdk_log_level_from_cli = true;
			break;
		case ARGP_BI_JSON:
			if (run->json_path != NULL) {
				sdp_error("flag %s: given more than once", typed);
				return DOCA_ERROR_INVALID_VALUE;
			}
			if (value[0] == '\0') {
				sdp_error("flag %s: empty path", typed);
				return DOCA_ERROR_INVALID_VALUE;
			}
			run->json_path = value;
			break;
		default:
			break;
		}
	}
	return DOCA_SUCCESS;
}

/* ---- start: the JSON file --------------------------------------------------------------- */

#if SDP_HAVE_JSONC

static const char *argp_json_type_name(struct json_object *obj)
{
	return json_type_to_name(json_object_get_type(obj));
}

/* Read the whole file; NOT_FOUND when it does not exist, IO_FAILED when it cannot be read. */
static doca_error_t argp_json_read(const char *path, char **text, size_t *len)
{
	struct stat st;
	char *buf = NULL;
	size_t done = 0;
	doca_error_t status;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not block us */
	if (fd < 0) {
		int err = errno;

		sdp_error("flag -j/--json: cannot open \"%s\": %m", path);
		return err == ENOENT ? DOCA_ERROR_NOT_FOUND : DOCA_ERROR_IO_FAILED;
	}
	if (fstat(fd, &st) != 0) {
		sdp_error("flag -j/--json: cannot stat \"%s\": %m", path);
		status = DOCA_ERROR_IO_FAILED;
		goto err_close;
	}
	if (!S_ISREG(st.st_mode)) {
		sdp_error("flag -j/--json: \"%s\" is not a regular file", path);
		status = DOCA_ERROR_INVALID_VALUE;
		goto err_close;
	}
	if ((unsigned long long)st.st_size > ARGP_JSON_MAX_SIZE) {
		sdp_error("flag -j/--json: \"%s\" is %lld bytes, more than the %u allowed", path,
			  (long long)st.st_size, ARGP_JSON_MAX_SIZE);
		status = DOCA_ERROR_INVALID_VALUE;
		goto err_close;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL) {
		sdp_error("flag -j/--json: out of memory reading \"%s\"", path);
		status = DOCA_ERROR_NO_MEMORY;
		goto err_close;
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + done, (size_t)st.st_size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			sdp_error("flag -j/--json: cannot read \"%s\": %m", path);
			status = DOCA_ERROR_IO_FAILED;
			goto err_free;
		}
		if (n == 0)
			break; /* the file shrank meanwhile: parse what is there */
		done += (size_t)n;
	}
	buf[done] = '\0';
	close(fd);
	*text = buf;
	*len = done;
	return DOCA_SUCCESS;

err_free:
	free(buf);
err_close:
	close(fd);
	return status;
}

/* 1-based line and column of a byte offset, for parse error messages. */
static void argp_json_position(const char *text, size_t offset, unsigned *line, unsigned *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < offset && text[i] != '\0'; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

/* True when the JSON integer literal lit (len bytes, valid JSON) fits json-c's 64 bits. */
static bool argp_json_int_fits(const char *lit, size_t len)
{
	const char *limit = "18446744073709551615"; /* UINT64_MAX */
	size_t n;

	if (lit[0] == '-') {
		lit++;
		len--;
		limit = "9223372036854775808"; /* -INT64_MIN */
	}
	n = strlen(limit);
	return len < n || (len == n && strncmp(lit, limit, n) <= 0);
}

/*
 * What json-c hides once it has parsed valid text: an integer literal beyond 64 bits (json-c
 * saturates it, so 99999999999999999999 would read as 18446744073709551615) and a key holding
 * \u0000 (json-c cuts the key there). The first one found is logged as written, with its
 * position.
 */
static doca_error_t argp_json_scan(const char *path, const char *text, size_t len)
{
	unsigned line, col;
	size_t i = 0, start;

	while (i < len) {
		bool nul = false, integer = true;

		start = i;
		if (text[i] == '"') {
			for (i++; i < len && text[i] != '"'; i += text[i] == '\\' ? 2 : 1)
				nul |= text[i] == '\\' && len - i >= 6 &&
				       strncmp(text + i + 1, "u0000", 5) == 0;
			for (i++; i < len && isspace((unsigned char)text[i]);)
				i++;
			if (nul && i < len && text[i] == ':') {
				argp_json_position(text, start, &line, &col);
				sdp_error(
					"flag -j/--json: \"%s\": the key at line %u, column %u holds "
					"a NUL character (\\u0000)",
					path, line, col);
				return DOCA_ERROR_INVALID_VALUE;
			}
			continue;
		}
		if (text[i] != '-' && !isdigit((unsigned char)text[i])) {
			i++;
			continue;
		}
		for (; i < len && (isdigit((unsigned char)text[i]) || strchr("+-.eE", text[i]));
		     i++)
			integer &= strchr(".eE", text[i]) == NULL;
		if (integer && !argp_json_int_fits(text + start, i - start)) {
			argp_json_position(text, start, &line, &col);
			sdp_error("flag -j/--json: \"%s\": integer %.*s at line %u, column %u is "
				  "beyond the 64-bit range",
				  path, (int)(i - start > 64 ? 64 : i - start), text + start, line,
				  col);
			return DOCA_ERROR_INVALID_VALUE;
		}
	}
	return DOCA_SUCCESS;
}

static doca_error_t argp_json_parse(const char *path, const char *text, size_t len,
				    struct json_object **root)
{
	struct json_tokener *tok;
	struct json_object *obj;
	enum json_tokener_error jerr;
	unsigned line, col;
	size_t end;

	tok = json_tokener_new();
	if (tok == NULL) {
		sdp_error("flag -j/--json: out of memory creating the JSON parser");
		return DOCA_ERROR_NO_MEMORY;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);

	if (obj == NULL || jerr != json_tokener_success) {
		if (jerr == json_tokener_continue)
			jerr = json_tokener_error_parse_eof;
		argp_json_position(text, end, &line, &col);
		sdp_error("flag -j/--json: \"%s\" is not valid JSON: %s at line %u, column %u",
			  path, json_tokener_error_desc(jerr), line, col);
		json_object_put(obj);
		return DOCA_ERROR_INVALID_VALUE;
	}
	while (end < len && isspace((unsigned char)text[end]))
		end++;
	if (end < len) {
		argp_json_position(text, end, &line, &col);
		sdp_error(
			"flag -j/--json: \"%s\": unexpected text after the JSON object at line %u, "
			"column %u",
			path, line, col);
		json_object_put(obj);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!json_object_is_type(obj, json_type_object)) {
		sdp_error("flag -j/--json: \"%s\": the top level must be an object, got %s", path,
			  argp_json_type_name(obj));
		json_object_put(obj);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (argp_json_scan(path, text, len) != DOCA_SUCCESS) {
		json_object_put(obj);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*root = obj;
	return DOCA_SUCCESS;
}

/* Convert one JSON value of program flag `key` into a new value of param. */
static doca_error_t argp_json_add_value(struct argp_run *run, struct doca_argp_param *param,
					const char *key, struct json_object *jval)
{
	struct argp_value *val;
	char *s_val = NULL;
	int64_t i64;
	double d;

	switch (param->type) {
	case DOCA_ARGP_TYPE_STRING:
		if (!json_object_is_type(jval, json_type_string))
			goto err_type;
		if (strlen(json_object_get_string(jval)) !=
		    (size_t)json_object_get_string_len(jval)) {
			sdp_error("JSON " ARGP_JSON_PROGRAM ".%s: the string holds a NUL character "
				  "(\\u0000) at offset %zu",
				  key, strlen(json_object_get_string(jval)));
			return DOCA_ERROR_INVALID_VALUE;
		}
		s_val = strdup(json_object_get_string(jval));
		if (s_val == NULL) {
			sdp_error("JSON " ARGP_JSON_PROGRAM ".%s: out of memory copying its value",
				  key);
			return DOCA_ERROR_NO_MEMORY;
		}
		break;
	case DOCA_ARGP_TYPE_INT:
		if (!json_object_is_type(jval, json_type_int))
			goto err_type;
		/* exact: argp_json_scan refused literals beyond 64 bits */
		errno = 0;
		i64 = json_object_get_int64(jval);
		if (errno == ERANGE || i64 < INT_MIN || i64 > INT_MAX ||
		    (i64 == INT64_MAX && json_object_get_uint64(jval) > (uint64_t)INT64_MAX)) {
			sdp_error("JSON " ARGP_JSON_PROGRAM
				  ".%s: value %s is out of the range of an int (%d to %d)",
				  key, json_object_to_json_string(jval), INT_MIN, INT_MAX);
			return DOCA_ERROR_INVALID_VALUE;
		}
		break;
	case DOCA_ARGP_TYPE_DOUBLE:
		if (!json_object_is_type(jval, json_type_double) &&
		    !json_object_is_type(jval, json_type_int))
			goto err_type;
		d = json_object_get_double(jval);
		if (!isfinite(d)) {
			sdp_error("JSON " ARGP_JSON_PROGRAM ".%s: value %s is not a finite number",
				  key, json_object_to_json_string(jval));
			return DOCA_ERROR_INVALID_VALUE;
		}
		break;
	case DOCA_ARGP_TYPE_BOOLEAN:
		if (!json_object_is_type(jval, json_type_boolean))
			goto err_type;
		break;
	default:
		sdp_error("JSON " ARGP_JSON_PROGRAM ".%s: unexpected type %d", key,
			  (int)param->type);
		return DOCA_ERROR_UNEXPECTED;
	}

	val = argp_run_add(run, param, ARGP_ORIGIN_JSON);
	if (val == NULL) {
		free(s_val);
		return DOCA_ERROR_NO_MEMORY;
	}
	switch (param->type) {
	case DOCA_ARGP_TYPE_STRING:
		val->v.s = s_val;
		break;
	case DOCA_ARGP_TYPE_INT:
		val->v.i = (int)json_object_get_int64(jval);
		break;
	case DOCA_ARGP_TYPE_DOUBLE:
		val->v.d = json_object_get_double(jval);
		break;
	default:
		val->v.b = json_object_get_boolean(jval) != 0;
		break;
	}
	return DOCA_SUCCESS;

err_type:
	sdp_error("JSON " ARGP_JSON_PROGRAM ".%s: expected %s, got %s %s", key,
		  argp_value_type_name(param->type), argp_json_type_name(jval),
		  json_object_to_json_string(jval));
	return DOCA_ERROR_INVALID_VALUE;
}

static doca_error_t argp_json_program(struct argp_run *run, struct json_object *section)
{
	doca_error_t status;

	json_object_object_foreach(section, key, jval)
	{
		const struct argp_builtin_desc *builtin;
		struct doca_argp_param *param = NULL;

		if (!argp_lookup(key, strlen(key), true, &builtin, &param) || param == NULL) {
			if (argp.lenient_json) {
				sdp_debug("JSON " ARGP_JSON_PROGRAM ".%s: unknown flag, ignored",
					  key);
				continue;
			}
			sdp_error("JSON " ARGP_JSON_PROGRAM ".%s: unknown program flag", key);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (param->cli_only) {
			sdp_error("JSON " ARGP_JSON_PROGRAM
				  ".%s: this flag is accepted on the command "
				  "line only",
				  key);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (json_object_is_type(jval, json_type_array)) {
			size_t n = json_object_array_length(jval);

			if (!param->multiplicity) {
				sdp_error("JSON " ARGP_JSON_PROGRAM
					  ".%s: expected %s, got an array "
					  "(the flag takes one value)",
					  key, argp_value_type_name(param->type));
				return DOCA_ERROR_INVALID_VALUE;
			}
			for (size_t i = 0; i < n; i++) {
				status = argp_json_add_value(run, param, key,
							     json_object_array_get_idx(jval, i));
				if (status != DOCA_SUCCESS)
					return status;
			}
			continue;
		}
		status = argp_json_add_value(run, param, key, jval);
		if (status != DOCA_SUCCESS)
			return status;
	}
	return DOCA_SUCCESS;
}

static doca_error_t argp_json_general(struct argp_run *run, struct json_object *section)
{
	json_object_object_foreach(section, key, jval)
	{
		int *target;
		bool from_cli;
		int64_t level;

		if (strcmp(key, "log-level") == 0) {
			target = &run->log_level;
			from_cli = run->log_level_from_cli;
		} else if (strcmp(key, "sdk-log-level") == 0) {
			target = &run->sdk_log_level;
			from_cli = run->sdk_log_level_from_cli;
		} else {
			if (argp.lenient_json) {
				sdp_debug("JSON " ARGP_JSON_GENERAL ".%s: unknown flag, ignored",
					  key);
				continue;
			}
			sdp_error("JSON " ARGP_JSON_GENERAL ".%s: unknown general flag (expected "
				  "log-level or sdk-log-level)",
				  key);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (!json_object_is_type(jval, json_type_int)) {
			sdp_error("JSON " ARGP_JSON_GENERAL ".%s: expected an integer, got %s %s",
				  key, argp_json_type_name(jval), json_object_to_json_string(jval));
			return DOCA_ERROR_INVALID_VALUE;
		}
		level = json_object_get_int64(jval);
		if (!argp_log_level_valid(level)) {
			sdp_error("JSON " ARGP_JSON_GENERAL
				  ".%s: invalid log level %s (expected 10, "
				  "20, 30, 40, 50, 60 or 70)",
				  key, json_object_to_json_string(jval));
			return DOCA_ERROR_INVALID_VALUE;
		}
		/* The command line overrides the file. */
		if (!from_cli)
			*target = (int)level;
	}
	return DOCA_SUCCESS;
}

static doca_error_t argp_parse_json(struct argp_run *run)
{
	struct json_object *root = NULL;
	char *text = NULL;
	size_t len = 0;
	doca_error_t status;

	status = argp_json_read(run->json_path, &text, &len);
	if (status != DOCA_SUCCESS)
		return status;
	status = argp_json_parse(run->json_path, text, len, &root);
	if (status != DOCA_SUCCESS)
		goto out_free_text;

	json_object_object_foreach(root, section, body)
	{
		bool general = strcmp(section, ARGP_JSON_GENERAL) == 0;
		bool program = strcmp(section, ARGP_JSON_PROGRAM) == 0;

		if (!general && !program) {
			if (strcmp(section, ARGP_JSON_DPDK) == 0) {
				sdp_error("JSON %s: DPDK flags are not supported by softdpu's argp "
					  "(no DPDK program support)",
					  section);
				status = DOCA_ERROR_NOT_SUPPORTED;
				goto out_put;
			}
			if (argp.lenient_json) {
				sdp_debug("JSON %s: unknown section, ignored", section);
				continue;
			}
			sdp_error("JSON %s: unknown section (expected " ARGP_JSON_GENERAL
				  " or " ARGP_JSON_PROGRAM ")",
				  section);
			status = DOCA_ERROR_INVALID_VALUE;
			goto out_put;
		}
		if (!json_object_is_type(body, json_type_object)) {
			sdp_error("JSON %s: expected an object, got %s", section,
				  argp_json_type_name(body));
			status = DOCA_ERROR_INVALID_VALUE;
			goto out_put;
		}
		status = general ? argp_json_general(run, body) : argp_json_program(run, body);
		if (status != DOCA_SUCCESS)
			goto out_put;
	}

out_put:
	json_object_put(root);
out_free_text:
	free(text);
	return status;
}

#else /* !SDP_HAVE_JSONC */

static doca_error_t argp_parse_json(struct argp_run *run)
{
	sdp_error("flag -j/--json \"%s\": JSON configuration files are not supported by this "
		  "build of softdpu (built without json-c)",
		  run->json_path);
	return DOCA_ERROR_NOT_SUPPORTED;
}

#endif /* SDP_HAVE_JSONC */

/* ---- start: checks and callbacks -------------------------------------------------------- */

static doca_error_t argp_check_run(const struct argp_run *run)
{
	struct doca_argp_param *param;
	char label[160], other[160];

	for (size_t i = 0; i < run->num_values; i++) {
		const struct doca_argp_param *single = run->values[i].param;

		if (!single->singular)
			continue;
		for (size_t j = 0; j < run->num_values; j++) {
			if (run->values[j].param != single) {
				sdp_error(
					"flag %s must be the only program flag, but %s is given too",
					argp_param_label(single, label, sizeof(label)),
					argp_param_label(run->values[j].param, other,
							 sizeof(other)));
				return DOCA_ERROR_INVALID_VALUE;
			}
		}
	}
	sdp_list_for_each(param, &argp.params, link) {
		bool given = false;

		if (!param->mandatory)
			continue;
		for (size_t i = 0; i < run->num_values && !given; i++)
			given = run->values[i].param == param;
		if (!given) {
			sdp_error("missing mandatory flag %s",
				  argp_param_label(param, label, sizeof(label)));
			return DOCA_ERROR_INVALID_VALUE;
		}
	}
	return DOCA_SUCCESS;
}

static doca_error_t argp_apply_log_levels(const struct argp_run *run)
{
	doca_error_t status;

	if (run->log_level >= 0) {
		status = doca_log_level_set_global_lower_limit((uint32_t)run->log_level);
		if (status != DOCA_SUCCESS)
			return status;
		argp.log_level = run->log_level;
	}
	if (run->sdk_log_level >= 0) {
		status = doca_log_level_set_global_sdk_limit((uint32_t)run->sdk_log_level);
		if (status != DOCA_SUCCESS)
			return status;
		argp.sdk_log_level = run->sdk_log_level;
	}
	return DOCA_SUCCESS;
}

static doca_error_t argp_call_callbacks(struct argp_run *run)
{
	char label[160];
	doca_error_t status;

	/* The JSON file first, then the command line, so that the command line wins. */
	for (int pass = 0; pass < 2; pass++) {
		enum argp_origin origin = pass == 0 ? ARGP_ORIGIN_JSON : ARGP_ORIGIN_CLI;

		for (size_t i = 0; i < run->num_values; i++) {
			struct argp_value *val = &run->values[i];
			void *arg;

			if (val->origin != origin)
				continue;
			switch (val->param->type) {
			case DOCA_ARGP_TYPE_STRING:
				arg = val->v.s;
				break;
			case DOCA_ARGP_TYPE_INT:
				arg = &val->v.i;
				break;
			case DOCA_ARGP_TYPE_DOUBLE:
				arg = &val->v.d;
				break;
			default:
				arg = &val->v.b;
				break;
			}
			status = val->param->callback(arg, argp.program_config);
			if (status != DOCA_SUCCESS) {
				sdp_error("flag %s%s: the program rejected the value: %s",
					  argp_param_label(val->param, label, sizeof(label)),
					  origin == ARGP_ORIGIN_JSON ? " (from the JSON file)" : "",
					  doca_error_get_name(status));
				return status;
			}
		}
	}
	if (argp.validation_cb != NULL) {
		status = argp.validation_cb(argp.program_config);
		if (status != DOCA_SUCCESS) {
			sdp_error("the program's validation of its flags failed: %s",
				  doca_error_get_name(status));
			return status;
		}
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_start(int argc, char **argv)
{
	struct argp_run run = {.log_level = -1, .sdk_log_level = -1};
	doca_error_t status;

	status = argp_check_state(true, __func__);
	if (status != DOCA_SUCCESS)
		return status;
	if (argc < 0 || (argc > 0 && argv == NULL)) {
		sdp_error("invalid argc %d / argv %p", argc, (void *)argv);
		return DOCA_ERROR_INVALID_VALUE;
	}
	argp.state = ARGP_STATE_STARTED;

	if (argp.program_name == NULL && argc > 0 && argv[0] != NULL && argv[0][0] != '\0') {
		const char *base = strrchr(argv[0], '/');

		/* Without a name the usage says "program"; no need to fail for that. */
		argp.program_name = strdup(base != NULL && base[1] != '\0' ? base + 1 : argv[0]);
	}

	status = argp_parse_cli(&run, argc, argv);
	if (status != DOCA_SUCCESS)
		goto err_usage;
	if (run.json_path != NULL) {
		status = argp_parse_json(&run);
		if (status != DOCA_SUCCESS)
			goto err_usage;
	}
	status = argp_check_run(&run);
	if (status != DOCA_SUCCESS)
		goto err_usage;

	status = argp_apply_log_levels(&run);
	if (status != DOCA_SUCCESS)
		goto err_free;
	status = argp_call_callbacks(&run);
	if (status != DOCA_SUCCESS)
		goto err_usage;

	argp_run_free(&run);
	return DOCA_SUCCESS;

err_usage:
	argp_print_usage(stderr);
err_free:
	argp_run_free(&run);
	return status;
}
