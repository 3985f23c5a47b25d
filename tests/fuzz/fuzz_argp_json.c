/*
 * libFuzzer target for argp's JSON configuration file (doca_argp_start with -j/--json FILE,
 * src/argp/argp.c: argp_json_read, argp_json_parse, argp_json_scan, argp_json_general,
 * argp_json_program, argp_json_add_value).
 *
 * Input: byte 0 bit 0 selects lenient parsing (doca_argp_disable_pedantic_config_parsing); the rest
 * is the file, written to a private temporary file (in TMPDIR, else /dev/shm, else /tmp). Each run
 * registers the flags str (string), int (int), bool, dbl (double), multi (int, repeated), cli
 * (string, command line only) and starts argp with `prog -j FILE`. Properties checked beyond "no
 * crash": an accepted file is strict JSON whose top level is an object, with no integer literal
 * beyond 64 bits; every flag of doca_program_flags reached its callback exactly once per value
 * (array elements for multi), with the value the file holds (json-c's reading: the same string, the
 * same int in the int range, the same double, the same boolean); cli never reached its callback; an
 * unknown key or section is refused unless lenient. The usage argp prints on a refused file goes to
 * /dev/null (stderr is restored right after the start).
 *
 * With -DSDP_FUZZ_MAIN this file has its own main() (tests/fuzz/fuzz_main.h): the replay test.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doca_argp.h"
#include "doca_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum {
	P_STR,
	P_INT,
	P_BOOL,
	P_DBL,
	P_MULTI,
	P_CLI,
	P_NUM
};
/* multi's values recorded (an input of 4096 bytes holds at most 2048 array elements) */
#define FZ_MULTI_MAX 2048

static const char *const names[P_NUM] = {"str", "int", "bool", "dbl", "multi", "cli"};

struct fuzz_cfg {
	unsigned calls[P_NUM];
	char *str;
	int i, multi[FZ_MULTI_MAX];
	bool b;
	double d;
};

static doca_error_t cb_str(void *p, void *c)
{
	struct fuzz_cfg *cfg = c;

	cfg->calls[P_STR]++;
	free(cfg->str);
	cfg->str = strdup((const char *)p);
	return DOCA_SUCCESS;
}

static doca_error_t cb_int(void *p, void *c)
{
	((struct fuzz_cfg *)c)->calls[P_INT]++;
	((struct fuzz_cfg *)c)->i = *(int *)p;
	return DOCA_SUCCESS;
}

static doca_error_t cb_bool(void *p, void *c)
{
	((struct fuzz_cfg *)c)->calls[P_BOOL]++;
	((struct fuzz_cfg *)c)->b = *(bool *)p;
	return DOCA_SUCCESS;
}

static doca_error_t cb_dbl(void *p, void *c)
{
	((struct fuzz_cfg *)c)->calls[P_DBL]++;
	((struct fuzz_cfg *)c)->d = *(double *)p;
	return DOCA_SUCCESS;
}

static doca_error_t cb_multi(void *p, void *c)
{
	struct fuzz_cfg *cfg = c;

	if (cfg->calls[P_MULTI] < FZ_MULTI_MAX)
		cfg->multi[cfg->calls[P_MULTI]] = *(int *)p;
	cfg->calls[P_MULTI]++;
	return DOCA_SUCCESS;
}

static doca_error_t cb_cli(void *p, void *c)
{
	(void)p;
	((struct fuzz_cfg *)c)->calls[P_CLI]++;
	return DOCA_SUCCESS;
}

static void add(const char *name, enum doca_argp_type type, doca_argp_param_cb_t cb, int multi,
		int cli_only)
{
	struct doca_argp_param *p = NULL;

	if (doca_argp_param_create(&p) != DOCA_SUCCESS)
		abort();
	doca_argp_param_set_long_name(p, name);
	doca_argp_param_set_arguments(p, "<v>");
	doca_argp_param_set_description(p, "fuzz flag");
	doca_argp_param_set_callback(p, cb);
	doca_argp_param_set_type(p, type);
	if (multi)
		doca_argp_param_set_multiplicity(p);
	if (cli_only)
		doca_argp_param_set_cli_only(p);
	if (doca_argp_register_param(p) != DOCA_SUCCESS)
		abort();
}

static int flag_index(const char *key)
{
	for (int i = 0; i < P_NUM; i++)
		if (strcmp(key, names[i]) == 0)
			return i;
	return -1;
}

/* One accepted value against json-c's reading of it. */
static void check_value(int idx, struct json_object *v, const struct fuzz_cfg *cfg, unsigned nth)
{
	int64_t i64;

	switch (idx) {
	case P_STR:
		if (!json_object_is_type(v, json_type_string) || cfg->str == NULL ||
		    strlen(cfg->str) != (size_t)json_object_get_string_len(v) ||
		    strcmp(cfg->str, json_object_get_string(v)) != 0)
			abort();
		break;
	case P_INT:
	case P_MULTI:
		if (!json_object_is_type(v, json_type_int))
			abort();
		i64 = json_object_get_int64(v);
		if (i64 < INT_MIN || i64 > INT_MAX ||
		    (idx == P_INT	? cfg->i :
		     nth < FZ_MULTI_MAX ? cfg->multi[nth] :
					  (int)i64) != (int)i64)
			abort();
		break;
	case P_BOOL:
		if (!json_object_is_type(v, json_type_boolean) ||
		    cfg->b != (json_object_get_boolean(v) != 0))
			abort();
		break;
	case P_DBL:
		if ((!json_object_is_type(v, json_type_double) &&
		     !json_object_is_type(v, json_type_int)) ||
		    cfg->d != json_object_get_double(v))
			abort();
		break;
	default:
		abort(); /* cli_only from a file */
	}
}

static void check_accepted(const char *text, size_t len, int lenient, const struct fuzz_cfg *cfg)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *root, *prog;
	unsigned want[P_NUM] = {0};

	if (tok == NULL)
		abort();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, text, (int)len);
	if (root == NULL || json_tokener_get_error(tok) != json_tokener_success ||
	    !json_object_is_type(root, json_type_object))
		abort(); /* accepted text that is not a strict JSON object */
	json_tokener_free(tok);
	json_object_object_foreach(root, section, body)
	{
		if (strcmp(section, "doca_general_flags") != 0 &&
		    strcmp(section, "doca_program_flags") != 0 && !lenient)
			abort();
	}
	if (json_object_object_get_ex(root, "doca_program_flags", &prog)) {
		if (!json_object_is_type(prog, json_type_object))
			abort();
		json_object_object_foreach(prog, key, v)
		{
			int idx = flag_index(key);

			if (idx < 0) {
				if (!lenient)
					abort();
				continue;
			}
			if (idx == P_CLI)
				abort();
			if (json_object_is_type(v, json_type_array)) {
				size_t n = json_object_array_length(v);

				if (idx != P_MULTI)
					abort();
				for (size_t k = 0; k < n; k++)
					check_value(idx, json_object_array_get_idx(v, k), cfg,
						    (unsigned)k);
				want[idx] += (unsigned)n;
			} else {
				/* a single value is the last one its callback saw */
				check_value(idx, v, cfg, want[idx]);
				want[idx]++;
			}
		}
	}
	for (int i = 0; i < P_NUM; i++)
		if (cfg->calls[i] != want[i])
			abort();
	json_object_put(root);
}

static char path[256];
static int file_fd = -1;
static int devnull = -1, saved_stderr = -1;

/* The temporary file is this process's own (mkstemp): removed at exit. */
static void fuzz_unlink(void)
{
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_cfg cfg;
	char *argv[] = {"prog", "-j", path, NULL};
	doca_error_t st;

	if (path[0] == '\0') {
		const char *tmp = getenv("TMPDIR");

		snprintf(path, sizeof(path), "%s/fuzz_argp_json.XXXXXX",
			 tmp != NULL && *tmp != '\0'   ? tmp :
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" :
							 "/tmp");
		file_fd = mkstemp(path);
		if (file_fd < 0)
			abort();
		atexit(fuzz_unlink);
		devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
		saved_stderr = dup(2);
		if (devnull < 0 || saved_stderr < 0)
			abort();
	}
	/* A file may set log levels: quiet again before every run. */
	(void)doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
	(void)doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_DISABLE);
	if (size < 1 || size > (1u << 16))
		return 0;
	/* Rewritten in place (no truncation to 0 first: ext4 would flush it at every close). */
	if ((size > 1 && pwrite(file_fd, data + 1, size - 1, 0) != (ssize_t)(size - 1)) ||
	    ftruncate(file_fd, (off_t)(size - 1)) != 0)
		abort();

	memset(&cfg, 0, sizeof(cfg));
	if (doca_argp_init("fuzz_argp_json", &cfg) != DOCA_SUCCESS)
		abort();
	add("str", DOCA_ARGP_TYPE_STRING, cb_str, 0, 0);
	add("int", DOCA_ARGP_TYPE_INT, cb_int, 0, 0);
	add("bool", DOCA_ARGP_TYPE_BOOLEAN, cb_bool, 0, 0);
	add("dbl", DOCA_ARGP_TYPE_DOUBLE, cb_dbl, 0, 0);
	add("multi", DOCA_ARGP_TYPE_INT, cb_multi, 1, 0);
	add("cli", DOCA_ARGP_TYPE_STRING, cb_cli, 0, 1);
	if ((data[0] & 1) && doca_argp_disable_pedantic_config_parsing() != DOCA_SUCCESS)
		abort();
	/* A refused file prints the usage to stderr: sent to /dev/null during the start only. */
	fflush(stderr);
	dup2(devnull, 2);
	st = doca_argp_start(3, argv);
	fflush(stderr);
	dup2(saved_stderr, 2);
	if (st == DOCA_SUCCESS)
		check_accepted((const char *)data + 1, size - 1, data[0] & 1, &cfg);
	else if (cfg.calls[P_CLI] != 0)
		abort();
	if (doca_argp_destroy() != DOCA_SUCCESS)
		abort();
	free(cfg.str);
	return 0;
}

#ifdef SDP_FUZZ_MAIN
#include "fuzz_main.h"

static const char *const fuzz_words[] = {
	"{",
	"}",
	"[",
	"]",
	",",
	":",
	"\"doca_program_flags\"",
	"\"doca_general_flags\"",
	"\"doca_dpdk_flags\"",
	"\"str\"",
	"\"int\"",
	"\"bool\"",
	"\"dbl\"",
	"\"multi\"",
	"\"cli\"",
	"\"log-level\"",
	"\"sdk-log-level\"",
	"\"other\"",
	"\"text\"",
	"\"a\\u0000b\"",
	"true",
	"false",
	"null",
	"0",
	"-1",
	"2147483647",
	"2147483648",
	"-2147483649",
	"99999999999999999999",
	"1.5",
	"1e400",
	"-0.0",
	"40",
	"70",
	"11",
	" ",
	"\n",
};

/* Mostly well-formed: {"doca_program_flags": {"key": value, ...}, ...} with odd words. */
static size_t fuzz_generate(uint8_t *buf, size_t cap)
{
	size_t len = 0, nw = sizeof(fuzz_words) / sizeof(fuzz_words[0]);
	uint64_t r = fuzz_rnd();

#define PUT(s)                                                                                     \
	do {                                                                                       \
		const char *s_ = (s);                                                              \
		size_t n_ = strlen(s_);                                                            \
		if (len + n_ < cap) {                                                              \
			memcpy(buf + len, s_, n_);                                                 \
			len += n_;                                                                 \
		}                                                                                  \
	} while (0)
	buf[len++] = (uint8_t)r;
	if (r % 8 == 0) { /* word soup */
		for (uint64_t i = 0, n = fuzz_rnd() % 30; i < n; i++)
			PUT(fuzz_words[fuzz_rnd() % nw]);
		return len;
	}
	PUT("{");
	for (uint64_t s = 0, ns = 1 + fuzz_rnd() % 2; s < ns; s++) {
		if (s > 0)
			PUT(",");
		PUT(fuzz_rnd() % 4 == 0 ? fuzz_words[6 + fuzz_rnd() % 3] : fuzz_words[6]);
		PUT(":{");
		for (uint64_t k = 0, nk = fuzz_rnd() % 5; k < nk; k++) {
			if (k > 0)
				PUT(",");
			PUT(fuzz_words[9 + fuzz_rnd() % 9]);
			PUT(":");
			if (fuzz_rnd() % 4 == 0) {
				PUT("[");
				for (uint64_t e = 0, ne = fuzz_rnd() % 4; e < ne; e++) {
					if (e > 0)
						PUT(",");
					PUT(fuzz_words[18 + fuzz_rnd() % (nw - 18)]);
				}
				PUT("]");
			} else {
				PUT(fuzz_words[18 + fuzz_rnd() % (nw - 18)]);
			}
		}
		PUT("}");
	}
	PUT("}");
	if (fuzz_rnd() % 8 == 0 && len > 1)
		buf[1 + fuzz_rnd() % (len - 1)] = (uint8_t)fuzz_rnd(); /* one byte changed */
	return len;
#undef PUT
}

#endif
