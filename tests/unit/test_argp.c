/*
 * Unit test: the DOCA Arg Parser (doca_argp.h).
 *
 * Every type through the command line and through a JSON file, the built-in flags (-l and
 * --sdk-log-level checked through the log getters, -h and -v in forked children), and every kind
 * of bad input: each must return its documented error, log a line naming the flag or JSON key,
 * print the usage, leak nothing, and leave argp destroyable and re-initialisable.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_build_config.h" /* build facts: versions, paths, SDP_HAVE_* */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "doca_argp.h"
#include "doca_log.h"
#include "doca_version.h"
#include "t_helpers.h"
#include "t_refusal.h"

/* SDP_HAVE_JSONC comes from sdp_build_config.h. */
#ifndef SDP_HAVE_JSONC
#error "sdp_build_config.h was not included (build through meson)"
#endif

#define MAX_MULTI 8
#define MAX_EVENTS 32

/* What the callbacks saw. */
struct cfg {
	char str[64];
	char long_only[64];
	int i;
	bool b;
	double d;
	int multi[MAX_MULTI];
	int n_multi;
	int n_str, n_int, n_bool, n_dbl;
	char events[MAX_EVENTS][16]; /* order of the calls, e.g. "int=2" */
	int n_events;
	int validated;
};

static void cfg_event(struct cfg *c, const char *fmt, long long v)
{
	if (c->n_events < MAX_EVENTS)
		snprintf(c->events[c->n_events++], sizeof(c->events[0]), fmt, v);
}

static doca_error_t str_cb(void *param, void *config)
{
	struct cfg *c = config;

	snprintf(c->str, sizeof(c->str), "%s", (char *)param);
	c->n_str++;
	return DOCA_SUCCESS;
}

static doca_error_t long_only_cb(void *param, void *config)
{
	struct cfg *c = config;

	snprintf(c->long_only, sizeof(c->long_only), "%s", (char *)param);
	return DOCA_SUCCESS;
}

static doca_error_t int_cb(void *param, void *config)
{
	struct cfg *c = config;

	c->i = *(int *)param;
	c->n_int++;
	cfg_event(c, "int=%lld", c->i);
	return DOCA_SUCCESS;
}

static doca_error_t bool_cb(void *param, void *config)
{
	struct cfg *c = config;

	c->b = *(bool *)param;
	c->n_bool++;
	return DOCA_SUCCESS;
}

static doca_error_t dbl_cb(void *param, void *config)
{
	struct cfg *c = config;

	c->d = *(double *)param;
	c->n_dbl++;
	return DOCA_SUCCESS;
}

static doca_error_t multi_cb(void *param, void *config)
{
	struct cfg *c = config;

	if (c->n_multi < MAX_MULTI)
		c->multi[c->n_multi++] = *(int *)param;
	return DOCA_SUCCESS;
}

static doca_error_t reject_cb(void *param, void *config)
{
	(void)param;
	(void)config;
	return DOCA_ERROR_NOT_PERMITTED;
}

static doca_error_t validate_ok(void *config)
{
	((struct cfg *)config)->validated++;
	return DOCA_SUCCESS;
}

static doca_error_t validate_fail(void *config)
{
	(void)config;
	return DOCA_ERROR_BAD_CONFIG;
}

#define F_MANDATORY 1u
#define F_MULTI 2u
#define F_CLI_ONLY 4u
#define F_HIDDEN 8u
#define F_SINGULAR 16u

/* Create, fill and register one param; returns what register returned. */
static doca_error_t add_param(const char *short_name, const char *long_name, const char *args,
			      enum doca_argp_type type, doca_argp_param_cb_t cb, unsigned flags)
{
	struct doca_argp_param *p = NULL;
	doca_error_t st = doca_argp_param_create(&p);

	if (st != DOCA_SUCCESS)
		return st;
	if (short_name != NULL)
		doca_argp_param_set_short_name(p, short_name);
	if (long_name != NULL)
		doca_argp_param_set_long_name(p, long_name);
	if (args != NULL)
		doca_argp_param_set_arguments(p, args);
	doca_argp_param_set_description(p, "test flag");
	doca_argp_param_set_callback(p, cb);
	doca_argp_param_set_type(p, type);
	if (flags & F_MANDATORY)
		doca_argp_param_set_mandatory(p);
	if (flags & F_MULTI)
		doca_argp_param_set_multiplicity(p);
	if (flags & F_CLI_ONLY)
		doca_argp_param_set_cli_only(p);
	if (flags & F_HIDDEN)
		doca_argp_param_set_hidden(p);
	if (flags & F_SINGULAR)
		doca_argp_param_set_singular(p);
	return doca_argp_register_param(p);
}

/* init + the standard set of flags used by most cases. */
static void setup(struct cfg *c)
{
	memset(c, 0, sizeof(*c));
	T_OK(doca_argp_init("test_argp", c));
	T_OK(add_param("s", "str", "<text>", DOCA_ARGP_TYPE_STRING, str_cb, 0));
	T_OK(add_param("i", "int", "<num>", DOCA_ARGP_TYPE_INT, int_cb, 0));
	T_OK(add_param("b", "bool", NULL, DOCA_ARGP_TYPE_BOOLEAN, bool_cb, 0));
	T_OK(add_param("D", "dbl", "<x>", DOCA_ARGP_TYPE_DOUBLE, dbl_cb, 0));
	T_OK(add_param("m", "multi", "<num>", DOCA_ARGP_TYPE_INT, multi_cb, F_MULTI));
	T_OK(add_param(NULL, "long-only", "<text>", DOCA_ARGP_TYPE_STRING, long_only_cb, 0));
	T_OK(add_param("c", "cli", "<text>", DOCA_ARGP_TYPE_STRING, str_cb, F_CLI_ONLY));
}

/* ---- capturing a file descriptor ---------------------------------------------------------- */

struct capture {
	int fd;	   /* the captured descriptor (1 or 2) */
	int saved; /* its original, to restore */
	int file;  /* the temporary file it writes to */
};

static void capture_begin(struct capture *cap, int fd)
{
	char path[] = "/tmp/test_argp_capture_XXXXXX";

	fflush(stdout);
	fflush(stderr);
	cap->fd = fd;
	cap->file = mkstemp(path);
	if (cap->file < 0) {
		t_fail("mkstemp: %s", strerror(errno));
		exit(T_EXIT_FAIL);
	}
	unlink(path);
	cap->saved = dup(fd);
	dup2(cap->file, fd);
}

/* Restore the descriptor and return what was written (caller frees). */
static char *capture_end(struct capture *cap)
{
	off_t size;
	char *buf;
	ssize_t n;

	fflush(stdout);
	fflush(stderr);
	dup2(cap->saved, cap->fd);
	close(cap->saved);
	size = lseek(cap->file, 0, SEEK_END);
	buf = calloc(1, (size_t)(size > 0 ? size : 0) + 1);
	if (buf == NULL) {
		close(cap->file);
		return NULL;
	}
	n = pread(cap->file, buf, (size_t)size, 0);
	buf[n > 0 ? n : 0] = '\0';
	close(cap->file);
	return buf;
}

static doca_error_t start_captured(int argc, char **argv, char **err_out)
{
	struct capture cap;
	doca_error_t st;

	capture_begin(&cap, 2);
	st = doca_argp_start(argc, argv);
	*err_out = capture_end(&cap);
	return st;
}

#define ARGC(v) ((int)(sizeof(v) / sizeof((v)[0])) - 1)

#if SDP_HAVE_JSONC
/* Write content to a new file with a unique name; its path goes to path (len bytes). */
static void write_json(char *path, size_t len, const char *content)
{
	int fd;

	snprintf(path, len, "/tmp/test_argp_%d_XXXXXX", (int)getpid());
	fd = mkstemp(path);
	if (fd < 0) {
		t_fail("mkstemp: %s", strerror(errno));
		exit(T_EXIT_FAIL);
	}
	if (write(fd, content, strlen(content)) != (ssize_t)strlen(content))
		t_fail("short write of %s", path);
	close(fd);
}
#endif

/*
 * Run argv through start and expect `want`, the usage on stderr and `needle` in the message.
 * Destroys argp afterwards.
 */
static void expect_bad(const char *what, char **argv, int argc, doca_error_t want,
		       const char *needle)
{
	char *err = NULL;
	doca_error_t st = start_captured(argc, argv, &err);

	if (st != want)
		t_fail("%s: expected %s, got %s", what, doca_error_get_name(want),
		       doca_error_get_name(st));
	if (err == NULL || strstr(err, "Usage: test_argp") == NULL)
		t_fail("%s: expected the usage on stderr, got \"%s\"", what, err ? err : "(null)");
	if (needle != NULL && (err == NULL || strstr(err, needle) == NULL))
		t_fail("%s: expected the error to mention \"%s\", got \"%s\"", what, needle,
		       err ? err : "(null)");
	free(err);
	T_OK(doca_argp_destroy());
}

/* ---- cases ------------------------------------------------------------------------------ */

static void test_lifecycle(void)
{
	struct doca_argp_param *p = NULL;
	struct cfg c;
	char *argv[] = {"prog", NULL};
	int level = 0;

	/* Nothing works before init. */
	T_STATUS(doca_argp_start(1, argv), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_argp_destroy(), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_argp_param_create(&p), DOCA_ERROR_BAD_STATE);
	T_TRUE(p == NULL);
	T_STATUS(doca_argp_register_version_callback(str_cb), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_argp_register_validation_callback(validate_ok), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_argp_disable_pedantic_config_parsing(), DOCA_ERROR_BAD_STATE);
	doca_argp_usage(); /* logs, prints nothing, must not crash */

	T_STATUS(doca_argp_init("", NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_argp_init(NULL, &c));
	T_STATUS(doca_argp_init("again", NULL), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_argp_param_create(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_argp_register_version_callback(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_argp_register_validation_callback(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_argp_get_log_level(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_argp_get_sdk_log_level(NULL), DOCA_ERROR_INVALID_VALUE);
	/* Not given by the user: the current global limits. */
	T_OK(doca_argp_get_log_level(&level));
	T_EQ_INT(level, doca_log_level_get_global_lower_limit());
	T_OK(doca_argp_get_sdk_log_level(&level));
	T_EQ_INT(level, doca_log_level_get_global_sdk_limit());
	T_STATUS(doca_argp_start(-1, argv), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_argp_start(2, NULL), DOCA_ERROR_INVALID_VALUE);

	/* An empty command line is fine; start cannot run twice; no registration after it. */
	T_OK(doca_argp_start(1, argv));
	T_STATUS(doca_argp_start(1, argv), DOCA_ERROR_BAD_STATE);
	T_OK(doca_argp_param_create(&p));
	doca_argp_param_set_long_name(p, "late");
	doca_argp_param_set_description(p, "late flag");
	doca_argp_param_set_callback(p, str_cb);
	doca_argp_param_set_type(p, DOCA_ARGP_TYPE_STRING);
	T_STATUS(doca_argp_register_param(p), DOCA_ERROR_BAD_STATE); /* freed by argp */
	T_OK(doca_argp_destroy());
	T_STATUS(doca_argp_destroy(), DOCA_ERROR_BAD_STATE);

	/* Re-initialise after destroy; start with argc == 0 (no argv[0]) works too. */
	T_OK(doca_argp_init("test_argp", NULL));
	T_OK(doca_argp_start(0, NULL));
	T_OK(doca_argp_destroy());
}

static void test_registration(void)
{
	struct doca_argp_param *p = NULL, *q = NULL;
	struct cfg c;

	setup(&c);
	T_STATUS(doca_argp_register_param(NULL), DOCA_ERROR_INVALID_VALUE);

	/* Collisions with registered flags and with the built-ins. */
	T_STATUS(add_param("s", "other", NULL, DOCA_ARGP_TYPE_STRING, str_cb, 0),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(add_param("o", "str", NULL, DOCA_ARGP_TYPE_STRING, str_cb, 0),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(add_param(NULL, "long-only", NULL, DOCA_ARGP_TYPE_STRING, str_cb, 0),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(add_param("h", NULL, NULL, DOCA_ARGP_TYPE_BOOLEAN, bool_cb, 0),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(add_param("v", NULL, NULL, DOCA_ARGP_TYPE_BOOLEAN, bool_cb, 0),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(add_param("l", NULL, NULL, DOCA_ARGP_TYPE_INT, int_cb, 0),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(add_param("j", NULL, NULL, DOCA_ARGP_TYPE_STRING, str_cb, 0),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(add_param(NULL, "json", NULL, DOCA_ARGP_TYPE_STRING, str_cb, 0),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(add_param(NULL, "sdk-log-level", NULL, DOCA_ARGP_TYPE_INT, int_cb, 0),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(add_param(NULL, "help", NULL, DOCA_ARGP_TYPE_BOOLEAN, bool_cb, 0),
		 DOCA_ERROR_INVALID_VALUE);
	/* Malformed names. */
	T_STATUS(add_param("-x", NULL, NULL, DOCA_ARGP_TYPE_STRING, str_cb, 0),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(add_param(NULL, "has space", NULL, DOCA_ARGP_TYPE_STRING, str_cb, 0),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(add_param(NULL, "a=b", NULL, DOCA_ARGP_TYPE_STRING, str_cb, 0),
		 DOCA_ERROR_INVALID_VALUE);
	/* Unsupported types. */
	T_STATUS(add_param(NULL, "dev", NULL, DOCA_ARGP_TYPE_DEVICE, str_cb, 0),
		 DOCA_ERROR_NOT_SUPPORTED);
	T_STATUS(add_param(NULL, "rep", NULL, DOCA_ARGP_TYPE_DEVICE_REP, str_cb, 0),
		 DOCA_ERROR_NOT_SUPPORTED);

	/* Missing fields: INITIALIZATION, and argp frees the param. */
	T_STATUS(add_param(NULL, NULL, NULL, DOCA_ARGP_TYPE_STRING, str_cb, 0),
		 DOCA_ERROR_INITIALIZATION);
	T_STATUS(add_param("z", NULL, NULL, DOCA_ARGP_TYPE_STRING, NULL, 0),
		 DOCA_ERROR_INITIALIZATION);
	T_STATUS(add_param("z", NULL, NULL, DOCA_ARGP_TYPE_UNKNOWN, str_cb, 0),
		 DOCA_ERROR_INITIALIZATION);
	T_OK(doca_argp_param_create(&p));
	doca_argp_param_set_short_name(p, "z");
	doca_argp_param_set_callback(p, str_cb);
	doca_argp_param_set_type(p, DOCA_ARGP_TYPE_STRING);
	T_STATUS(doca_argp_register_param(p), DOCA_ERROR_INITIALIZATION); /* no description */

	/* Setters refuse NULL and keep the param intact; an out-of-range type is ignored. */
	doca_argp_param_set_short_name(NULL, "x");
	doca_argp_param_set_long_name(NULL, "x");
	doca_argp_param_set_arguments(NULL, "x");
	doca_argp_param_set_description(NULL, "x");
	doca_argp_param_set_callback(NULL, str_cb);
	doca_argp_param_set_type(NULL, DOCA_ARGP_TYPE_INT);
	doca_argp_param_set_mandatory(NULL);
	doca_argp_param_set_cli_only(NULL);
	doca_argp_param_set_multiplicity(NULL);
	doca_argp_param_set_singular(NULL);
	doca_argp_param_set_hidden(NULL);
	T_OK(doca_argp_param_create(&p));
	doca_argp_param_set_long_name(p, "fine");
	doca_argp_param_set_long_name(p, NULL);
	doca_argp_param_set_description(p, "fine flag");
	doca_argp_param_set_callback(p, int_cb);
	doca_argp_param_set_type(p, DOCA_ARGP_TYPE_INT);
	doca_argp_param_set_type(p, (enum doca_argp_type)99);
	T_OK(doca_argp_register_param(p));
	/* Registered: twice is BAD_STATE, its setters are refused, it cannot be destroyed. */
	T_STATUS(doca_argp_register_param(p), DOCA_ERROR_BAD_STATE);
	doca_argp_param_set_long_name(p, "renamed");
	T_STATUS(doca_argp_param_destroy(p), DOCA_ERROR_BAD_STATE);

	/* An unregistered param can be destroyed; one left unregistered is freed by destroy. */
	T_STATUS(doca_argp_param_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_argp_param_create(&p));
	doca_argp_param_set_short_name(p, "q");
	T_OK(doca_argp_param_destroy(p));
	T_OK(doca_argp_param_create(&q));
	doca_argp_param_set_long_name(q, "forgotten");

	/* The flags DOCA samples use never collide with the built-ins. */
	{
		static const char *const shorts[] = {"d", "e", "g", "n", "p", "q", "t"};
		static const char *const longs[] = {
			"device",    "message", "exec-scope", "gpu",  "nic",   "proxy",
			"shared-qp", "size",	"threads",    "time", "queue", "httpserver"};

		for (size_t k = 0; k < sizeof(shorts) / sizeof(shorts[0]); k++)
			T_OK(add_param(shorts[k], NULL, NULL, DOCA_ARGP_TYPE_STRING, str_cb, 0));
		for (size_t k = 0; k < sizeof(longs) / sizeof(longs[0]); k++)
			T_OK(add_param(NULL, longs[k], NULL, DOCA_ARGP_TYPE_STRING, str_cb, 0));
	}
	T_OK(doca_argp_destroy());

	/* The sample letters m and s too (setup uses them for its own flags). */
	T_OK(doca_argp_init("test_argp", NULL));
	T_OK(add_param("m", "message", NULL, DOCA_ARGP_TYPE_STRING, str_cb, 0));
	T_OK(add_param("s", "size", NULL, DOCA_ARGP_TYPE_INT, int_cb, 0));
	T_OK(doca_argp_destroy());
}

static void test_cli_types(void)
{
	struct cfg c;

	setup(&c);
	{
		char *argv[] = {
			"/usr/bin/prog", "-s",	"hello", "--int",	"42", "-b",	   "--dbl",
			"2.5",		 "-m",	"1",	 "-m",		"-2", "--multi=3", "-m4",
			"--long-only",	 "x y", "-c",	 "cli-only-ok", NULL};
		char *err = NULL;

		T_OK(start_captured(ARGC(argv), argv, &err));
		free(err);
	}
	T_EQ_STR(c.str, "cli-only-ok"); /* -c shares str_cb and comes last */
	T_EQ_INT(c.n_str, 2);
	T_EQ_INT(c.i, 42);
	T_EQ_INT(c.n_int, 1);
	T_TRUE(c.b);
	T_EQ_INT(c.n_bool, 1);
	T_TRUE(c.d == 2.5);
	T_EQ_INT(c.n_multi, 4);
	T_EQ_INT(c.multi[0], 1);
	T_EQ_INT(c.multi[1], -2);
	T_EQ_INT(c.multi[2], 3);
	T_EQ_INT(c.multi[3], 4);
	T_EQ_STR(c.long_only, "x y");
	T_OK(doca_argp_destroy());

	/* Explicit booleans, glued short values, negative and boundary ints, exponents. */
	setup(&c);
	{
		char *argv[] = {"prog",	       "--bool=false", "-i-2147483648",
				"--dbl=-1e-3", "--str=",       NULL};

		T_OK(doca_argp_start(ARGC(argv), argv));
	}
	T_TRUE(!c.b);
	T_EQ_INT(c.n_bool, 1);
	T_EQ_INT(c.i, -2147483647 - 1);
	T_TRUE(c.d == -1e-3);
	T_EQ_STR(c.str, "");
	T_OK(doca_argp_destroy());

	/* No flags: no callback runs; the validation callback does. */
	setup(&c);
	T_OK(doca_argp_register_validation_callback(validate_ok));
	{
		char *argv[] = {"prog", NULL};

		T_OK(doca_argp_start(ARGC(argv), argv));
	}
	T_EQ_INT(c.n_str + c.n_int + c.n_bool + c.n_dbl + c.n_multi, 0);
	T_EQ_INT(c.validated, 1);
	T_OK(doca_argp_destroy());
}

static void test_log_levels(void)
{
	uint32_t app0 = doca_log_level_get_global_lower_limit();
	uint32_t sdk0 = doca_log_level_get_global_sdk_limit();
	struct cfg c;
	int level = 0;

	setup(&c);
	{
		char *argv[] = {"prog", "-l", "60", "--sdk-log-level", "20", NULL};

		T_OK(doca_argp_start(ARGC(argv), argv));
	}
	T_EQ_INT(doca_log_level_get_global_lower_limit(), 60);
	T_EQ_INT(doca_log_level_get_global_sdk_limit(), 20);
	T_OK(doca_argp_get_log_level(&level));
	T_EQ_INT(level, 60);
	T_OK(doca_argp_get_sdk_log_level(&level));
	T_EQ_INT(level, 20);
	T_OK(doca_argp_destroy());

	setup(&c);
	{
		char *argv[] = {"prog", "--log-level=70", "--sdk-log-level=30", NULL};

		T_OK(doca_argp_start(ARGC(argv), argv));
	}
	T_EQ_INT(doca_log_level_get_global_lower_limit(), 70);
	T_EQ_INT(doca_log_level_get_global_sdk_limit(), 30);
	T_OK(doca_argp_destroy());

	/* Restore: the error cases below need SDK errors to reach stderr. */
	T_OK(doca_log_level_set_global_lower_limit(app0));
	T_OK(doca_log_level_set_global_sdk_limit(sdk0));
}

static void test_cli_errors(void)
{
	struct cfg c;

#define BAD(needle, want, ...)                                                                     \
	do {                                                                                       \
		char *argv_[] = {"prog", __VA_ARGS__, NULL};                                       \
		setup(&c);                                                                         \
		expect_bad(#__VA_ARGS__, argv_, ARGC(argv_), want, needle);                        \
		if (c.n_str + c.n_int + c.n_bool + c.n_dbl + c.n_multi != 0)                       \
			t_fail("%s: a callback ran although the input was rejected",               \
			       #__VA_ARGS__);                                                      \
	} while (0)

	BAD("--nope", DOCA_ERROR_INVALID_VALUE, "--nope");
	BAD("--nope", DOCA_ERROR_INVALID_VALUE, "--nope=3");
	BAD("-x", DOCA_ERROR_INVALID_VALUE, "-x");
	BAD("stray", DOCA_ERROR_INVALID_VALUE, "-s", "a", "stray");
	BAD("\"-\"", DOCA_ERROR_INVALID_VALUE, "-");
	BAD("--", DOCA_ERROR_INVALID_VALUE, "--");
	BAD("-s", DOCA_ERROR_INVALID_VALUE, "-s");
	BAD("--int", DOCA_ERROR_INVALID_VALUE, "--int");
	BAD("12abc", DOCA_ERROR_INVALID_VALUE, "-i", "12abc");
	BAD("range", DOCA_ERROR_INVALID_VALUE, "-i", "2147483648");
	BAD("range", DOCA_ERROR_INVALID_VALUE, "-i", "-99999999999999999999");
	BAD("--int", DOCA_ERROR_INVALID_VALUE, "--int=");
	BAD("--int", DOCA_ERROR_INVALID_VALUE, "--int", " 5");
	BAD("1.5x", DOCA_ERROR_INVALID_VALUE, "--dbl", "1.5x");
	BAD("--dbl", DOCA_ERROR_INVALID_VALUE, "--dbl", "inf");
	BAD("--dbl", DOCA_ERROR_INVALID_VALUE, "--dbl", "1e999");
	BAD("maybe", DOCA_ERROR_INVALID_VALUE, "--bool=maybe");
	BAD("more than once", DOCA_ERROR_INVALID_VALUE, "-s", "a", "--str", "b");
	BAD("more than once", DOCA_ERROR_INVALID_VALUE, "-b", "-b");
	BAD("35", DOCA_ERROR_INVALID_VALUE, "-l", "35");
	BAD("80", DOCA_ERROR_INVALID_VALUE, "-l", "80");
	BAD("--sdk-log-level", DOCA_ERROR_INVALID_VALUE, "--sdk-log-level", "abc");
	BAD("-l", DOCA_ERROR_INVALID_VALUE, "-l");
	BAD("--help", DOCA_ERROR_INVALID_VALUE, "--help=1");
	BAD("-j", DOCA_ERROR_INVALID_VALUE, "-j", "");
#undef BAD

	/* Mandatory flag missing. */
	memset(&c, 0, sizeof(c));
	T_OK(doca_argp_init("test_argp", &c));
	T_OK(add_param("t", "time", "<ms>", DOCA_ARGP_TYPE_INT, int_cb, F_MANDATORY));
	T_OK(add_param("s", "str", NULL, DOCA_ARGP_TYPE_STRING, str_cb, 0));
	{
		char *argv[] = {"prog", "-s", "x", NULL};

		expect_bad("mandatory", argv, ARGC(argv), DOCA_ERROR_INVALID_VALUE, "-t/--time");
	}
	T_EQ_INT(c.n_str, 0);

	/* A callback's error is returned as it is. */
	memset(&c, 0, sizeof(c));
	T_OK(doca_argp_init("test_argp", &c));
	T_OK(add_param("r", "reject", "<x>", DOCA_ARGP_TYPE_STRING, reject_cb, 0));
	{
		char *argv[] = {"prog", "-r", "anything", NULL};

		expect_bad("callback", argv, ARGC(argv), DOCA_ERROR_NOT_PERMITTED, "-r/--reject");
	}

	/* So is the validation callback's. */
	setup(&c);
	T_OK(doca_argp_register_validation_callback(validate_fail));
	{
		char *argv[] = {"prog", "-i", "1", NULL};

		expect_bad("validation", argv, ARGC(argv), DOCA_ERROR_BAD_CONFIG, "validation");
	}
	T_EQ_INT(c.i, 1);

	/* A singular flag must come alone. */
	memset(&c, 0, sizeof(c));
	T_OK(doca_argp_init("test_argp", &c));
	T_OK(add_param("a", "alone", NULL, DOCA_ARGP_TYPE_BOOLEAN, bool_cb, F_SINGULAR));
	T_OK(add_param("i", "int", NULL, DOCA_ARGP_TYPE_INT, int_cb, 0));
	{
		char *argv[] = {"prog", "-i", "3", "--alone", NULL};

		expect_bad("singular", argv, ARGC(argv), DOCA_ERROR_INVALID_VALUE, "--alone");
	}
	memset(&c, 0, sizeof(c));
	T_OK(doca_argp_init("test_argp", &c));
	T_OK(add_param("a", "alone", NULL, DOCA_ARGP_TYPE_BOOLEAN, bool_cb, F_SINGULAR));
	{
		char *argv[] = {"prog", "-a", NULL};

		T_OK(doca_argp_start(ARGC(argv), argv));
		T_TRUE(c.b);
	}
	T_OK(doca_argp_destroy());
}

static void test_usage(void)
{
	struct capture cap;
	struct cfg c;
	char *out;

	setup(&c);
	T_OK(add_param("t", "time", "<ms>", DOCA_ARGP_TYPE_INT, int_cb, F_MANDATORY));
	T_OK(add_param(NULL, "secret", NULL, DOCA_ARGP_TYPE_BOOLEAN, bool_cb, F_HIDDEN));
	capture_begin(&cap, 1);
	doca_argp_usage();
	out = capture_end(&cap);
	T_TRUE(out != NULL);
	if (out != NULL) {
		static const char *const want[] = {
			"Usage: test_argp",   "-h, --help",	 "-v, --version",
			"-l, --log-level",    "--sdk-log-level", "-j, --json",
			"-s, --str <text>",   "-i, --int <num>", "-b, --bool",
			"--long-only <text>", "-t, --time <ms>", "test flag",
			"(mandatory)"};

		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
			if (strstr(out, want[k]) == NULL)
				t_fail("usage: expected \"%s\" in:\n%s", want[k], out);
		}
		if (strstr(out, "secret") != NULL)
			t_fail("usage: the hidden flag --secret is listed:\n%s", out);
		/* Exactly one flag is mandatory: --time. */
		const char *time_line = strstr(out, "--time");
		const char *first = strstr(out, "(mandatory)");

		if (time_line == NULL || first == NULL ||
		    first != strstr(time_line, "(mandatory)") ||
		    strstr(first + 1, "(mandatory)") != NULL)
			t_fail("usage: only --time should be marked mandatory:\n%s", out);
	}
	free(out);
	/* The hidden flag still works. */
	{
		char *argv[] = {"prog", "--secret", "-t", "5", NULL};

		T_OK(doca_argp_start(ARGC(argv), argv));
		T_TRUE(c.b);
		T_EQ_INT(c.i, 5);
	}
	T_OK(doca_argp_destroy());
}

static void test_json(void)
{
#if !SDP_HAVE_JSONC
	struct cfg c;
	char *argv[] = {"prog", "-j", "/nonexistent.json", NULL};

	setup(&c);
	expect_bad("json unsupported", argv, ARGC(argv), DOCA_ERROR_NOT_SUPPORTED, "json");
#else
	uint32_t app0 = doca_log_level_get_global_lower_limit();
	uint32_t sdk0 = doca_log_level_get_global_sdk_limit();
	char path[128];
	struct cfg c;

	/* Every type from the file, and the general flags. */
	write_json(path, sizeof(path),
		   "{\n"
		   "  \"doca_general_flags\": { \"log-level\": 40, \"sdk-log-level\": 60 },\n"
		   "  \"doca_program_flags\": {\n"
		   "    \"str\": \"from json\", \"int\": -12, \"bool\": true, \"dbl\": 1.25,\n"
		   "    \"multi\": [4, 5, 6], \"long-only\": \"y\"\n"
		   "  }\n"
		   "}\n");
	setup(&c);
	{
		char *argv[] = {"prog", "-j", path, NULL};
		int level = 0;

		T_OK(doca_argp_start(ARGC(argv), argv));
		T_EQ_STR(c.str, "from json");
		T_EQ_INT(c.i, -12);
		T_TRUE(c.b);
		T_EQ_INT(c.n_bool, 1);
		T_TRUE(c.d == 1.25);
		T_EQ_INT(c.n_multi, 3);
		T_EQ_INT(c.multi[0], 4);
		T_EQ_INT(c.multi[2], 6);
		T_EQ_STR(c.long_only, "y");
		T_EQ_INT(doca_log_level_get_global_lower_limit(), 40);
		T_EQ_INT(doca_log_level_get_global_sdk_limit(), 60);
		T_OK(doca_argp_get_log_level(&level));
		T_EQ_INT(level, 40);
	}
	T_OK(doca_argp_destroy());
	unlink(path);

	/* false booleans, an integer where a double is expected, a single value for a multi flag. */
	write_json(path, sizeof(path),
		   "{\"doca_program_flags\": {\"bool\": false, \"dbl\": 3, \"multi\": 9}}");
	setup(&c);
	{
		char *argv[] = {"prog", "--json", path, NULL};

		T_OK(doca_argp_start(ARGC(argv), argv));
		T_TRUE(!c.b);
		T_EQ_INT(c.n_bool, 1);
		T_TRUE(c.d == 3.0);
		T_EQ_INT(c.n_multi, 1);
		T_EQ_INT(c.multi[0], 9);
	}
	T_OK(doca_argp_destroy());
	unlink(path);

	/* The command line overrides the file: JSON callbacks first, then the command line. */
	write_json(path, sizeof(path),
		   "{\"doca_general_flags\": {\"log-level\": 30},"
		   " \"doca_program_flags\": {\"int\": 1}}");
	setup(&c);
	{
		char *argv2[] = {"prog", "--int", "2", "-l", "60", "-j", path, NULL};

		T_OK(doca_argp_start(ARGC(argv2), argv2));
		T_EQ_INT(c.i, 2);
		T_EQ_INT(c.n_events, 2);
		T_EQ_STR(c.events[0], "int=1");
		T_EQ_STR(c.events[1], "int=2");
		T_EQ_INT(doca_log_level_get_global_lower_limit(), 60);
	}
	T_OK(doca_argp_destroy());
	unlink(path);

	/* A mandatory flag may come from the file. */
	write_json(path, sizeof(path), "{\"doca_program_flags\": {\"time\": 7}}");
	memset(&c, 0, sizeof(c));
	T_OK(doca_argp_init("test_argp", &c));
	T_OK(add_param("t", "time", "<ms>", DOCA_ARGP_TYPE_INT, int_cb, F_MANDATORY));
	{
		char *argv[] = {"prog", "-j", path, NULL};

		T_OK(doca_argp_start(ARGC(argv), argv));
		T_EQ_INT(c.i, 7);
	}
	T_OK(doca_argp_destroy());
	unlink(path);

	/* Unknown keys are refused, unless pedantic parsing is off. */
	write_json(path, sizeof(path),
		   "{\"doca_program_flags\": {\"int\": 5, \"bogus\": 1}, \"extra_section\": {}}");
	setup(&c);
	T_OK(doca_argp_disable_pedantic_config_parsing());
	{
		char *argv[] = {"prog", "-j", path, NULL};

		T_OK(doca_argp_start(ARGC(argv), argv));
		T_EQ_INT(c.i, 5);
	}
	T_OK(doca_argp_destroy());
	unlink(path);

	T_OK(doca_log_level_set_global_lower_limit(app0));
	T_OK(doca_log_level_set_global_sdk_limit(sdk0));

	/* Bad files: each with its error, the usage, and nothing called. */
	{
		static const struct {
			const char *content;
			doca_error_t want;
			const char *needle;
		} bad[] = {
			{"{\"doca_program_flags\": {\"int\": 1,}}", DOCA_ERROR_INVALID_VALUE,
			 "not valid JSON"},
			{"{\"doca_program_flags\": {\"int\": 1}", DOCA_ERROR_INVALID_VALUE,
			 "not valid JSON"},
			{"", DOCA_ERROR_INVALID_VALUE, "not valid JSON"},
			{"{} trailing", DOCA_ERROR_INVALID_VALUE, "line 1, column"},
			{"[1, 2]", DOCA_ERROR_INVALID_VALUE, "top level"},
			{"{\"doca_program_flags\": {\"int\": \"12\"}}", DOCA_ERROR_INVALID_VALUE,
			 "doca_program_flags.int"},
			{"{\"doca_program_flags\": {\"int\": 1.5}}", DOCA_ERROR_INVALID_VALUE,
			 "doca_program_flags.int"},
			{"{\"doca_program_flags\": {\"int\": 3000000000}}",
			 DOCA_ERROR_INVALID_VALUE,
			 "3000000000 is out of the range of an int "
			 "(-2147483648 to 2147483647)"},
			{"{\"doca_program_flags\": {\"int\": -2147483649}}",
			 DOCA_ERROR_INVALID_VALUE, "-2147483649 is out of the range of an int"},
			/* beyond 64 bits json-c saturates: the error shows the number as written */
			{"{\"doca_program_flags\": {\"int\": 99999999999999999999}}",
			 DOCA_ERROR_INVALID_VALUE,
			 "integer 99999999999999999999 at line 1, column 32"},
			{"{\"doca_program_flags\": {\"int\": -99999999999999999999}}",
			 DOCA_ERROR_INVALID_VALUE, "integer -99999999999999999999 at line 1"},
			{"{\"doca_program_flags\": {\"dbl\": 99999999999999999999}}",
			 DOCA_ERROR_INVALID_VALUE, "beyond the 64-bit range"},
			{"{\"doca_general_flags\": {\"log-level\": 18446744073709551616}}",
			 DOCA_ERROR_INVALID_VALUE, "integer 18446744073709551616"},
			/* a NUL inside a string would cut it: refused, naming the key */
			{"{\"doca_program_flags\": {\"str\": \"ab\\u0000cd\"}}",
			 DOCA_ERROR_INVALID_VALUE,
			 "doca_program_flags.str: the string holds a NUL"},
			{"{\"doca_program_flags\": {\"str\": \"\\u0000\"}}",
			 DOCA_ERROR_INVALID_VALUE,
			 "doca_program_flags.str: the string holds a NUL character (\\u0000) at offset 0"},
			{"{\"doca_program_flags\": {\"str\\u0000x\": \"a\"}}",
			 DOCA_ERROR_INVALID_VALUE, "key at line 1, column 25 holds a NUL"},
			/* an escaped backslash before u0000 is no NUL */
			{"{\"doca_program_flags\": {\"nope\\\\u0000\": 1}}",
			 DOCA_ERROR_INVALID_VALUE, "unknown program flag"},
			{"{\"doca_program_flags\": {\"str\": 5}}", DOCA_ERROR_INVALID_VALUE,
			 "doca_program_flags.str"},
			{"{\"doca_program_flags\": {\"bool\": \"true\"}}", DOCA_ERROR_INVALID_VALUE,
			 "doca_program_flags.bool"},
			{"{\"doca_program_flags\": {\"dbl\": \"x\"}}", DOCA_ERROR_INVALID_VALUE,
			 "doca_program_flags.dbl"},
			{"{\"doca_program_flags\": {\"multi\": [1, \"two\"]}}",
			 DOCA_ERROR_INVALID_VALUE, "doca_program_flags.multi"},
			{"{\"doca_program_flags\": {\"int\": [1, 2]}}", DOCA_ERROR_INVALID_VALUE,
			 "doca_program_flags.int"},
			{"{\"doca_program_flags\": {\"bogus\": 1}}", DOCA_ERROR_INVALID_VALUE,
			 "doca_program_flags.bogus"},
			{"{\"doca_program_flags\": {\"cli\": \"x\"}}", DOCA_ERROR_INVALID_VALUE,
			 "doca_program_flags.cli"},
			{"{\"doca_program_flags\": 5}", DOCA_ERROR_INVALID_VALUE,
			 "doca_program_flags"},
			{"{\"unknown_section\": {}}", DOCA_ERROR_INVALID_VALUE, "unknown_section"},
			{"{\"doca_general_flags\": {\"log-level\": 45}}", DOCA_ERROR_INVALID_VALUE,
			 "doca_general_flags.log-level"},
			{"{\"doca_general_flags\": {\"sdk-log-level\": \"60\"}}",
			 DOCA_ERROR_INVALID_VALUE, "doca_general_flags.sdk-log-level"},
			{"{\"doca_general_flags\": {\"verbose\": 1}}", DOCA_ERROR_INVALID_VALUE,
			 "doca_general_flags.verbose"},
			{"{\"doca_dpdk_flags\": {\"core-list\": \"0\"}}", DOCA_ERROR_NOT_SUPPORTED,
			 "doca_dpdk_flags"},
		};

		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			char *argv[] = {"prog", "-j", path, NULL};
			char what[96];

			write_json(path, sizeof(path), bad[k].content);
			setup(&c);
			snprintf(what, sizeof(what), "json case %zu", k);
			expect_bad(what, argv, ARGC(argv), bad[k].want, bad[k].needle);
			T_EQ_INT(c.n_str + c.n_int + c.n_bool + c.n_dbl + c.n_multi, 0);
			unlink(path);
		}
	}

	/* A missing file is NOT_FOUND; a directory is not a JSON file. */
	{
		char missing[128];
		char *argv[] = {"prog", "-j", missing, NULL};
		char *argv_dir[] = {"prog", "-j", "/tmp", NULL};
		char *argv_twice[] = {"prog", "-j", "/tmp/a", "-j", "/tmp/b", NULL};

		snprintf(missing, sizeof(missing), "/tmp/test_argp_missing_%d.json", (int)getpid());
		setup(&c);
		expect_bad("missing json", argv, ARGC(argv), DOCA_ERROR_NOT_FOUND, missing);
		setup(&c);
		expect_bad("json directory", argv_dir, ARGC(argv_dir), DOCA_ERROR_INVALID_VALUE,
			   "/tmp");
		setup(&c);
		expect_bad("json twice", argv_twice, ARGC(argv_twice), DOCA_ERROR_INVALID_VALUE,
			   "more than once");
	}
#endif
}

/* ---- -h and -v in children ---------------------------------------------------------------- */

static doca_error_t version_cb_ok(void *param, void *config)
{
	(void)param;
	printf("custom-version-%s\n", (const char *)config);
	return DOCA_SUCCESS;
}

static doca_error_t version_cb_fail(void *param, void *config)
{
	(void)param;
	(void)config;
	return DOCA_ERROR_NOT_SUPPORTED;
}

/* Like the samples' version callback: print, destroy argp and exit from inside. */
static doca_error_t version_cb_exit(void *param, void *config)
{
	(void)param;
	(void)config;
	printf("exiting-version\n");
	fflush(stdout);
	doca_argp_destroy();
	exit(EXIT_SUCCESS);
}

/*
 * Run start(argv) in a child with stdout captured. Returns the exit status (or 128 + signal),
 * the output in *out. A child whose start returns exits with 100 + the status it got.
 */
static int run_child(char **argv, int argc, doca_argp_param_cb_t version_cb, char **out)
{
	struct capture cap;
	struct cfg c;
	int status = 0;
	pid_t pid;

	capture_begin(&cap, 1);
	pid = fork();
	if (pid == 0) {
		static char tag[] = "tag";
		doca_error_t st;

		setup(&c);
		if (version_cb != NULL) {
			doca_argp_destroy();
			T_OK(doca_argp_init("test_argp", tag));
			T_OK(add_param("s", "str", "<text>", DOCA_ARGP_TYPE_STRING, str_cb, 0));
			T_OK(doca_argp_register_version_callback(version_cb));
		}
		st = doca_argp_start(argc, argv);
		if (doca_argp_destroy() != DOCA_SUCCESS)
			_exit(99);
		exit(100 + (int)st);
	}
	if (pid < 0) {
		*out = capture_end(&cap);
		t_fail("fork: %s", strerror(errno));
		return -1;
	}
	/* Bounded wait: the child needs milliseconds; give up after 20 s. */
	for (int tries = 0;; tries++) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		pid_t got = waitpid(pid, &status, WNOHANG);

		if (got == pid)
			break;
		if (tries >= 2000) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			t_fail("child for %s did not finish within 20 s", argv[1]);
			break;
		}
		nanosleep(&ts, NULL);
	}
	*out = capture_end(&cap);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static void expect_child(const char *what, char **argv, int argc, doca_argp_param_cb_t cb,
			 int want_status, const char *needle)
{
	char *out = NULL;
	int st = run_child(argv, argc, cb, &out);

	if (st != want_status)
		t_fail("%s: expected exit status %d, got %d (output \"%s\")", what, want_status, st,
		       out ? out : "(null)");
	if (needle != NULL && (out == NULL || strstr(out, needle) == NULL))
		t_fail("%s: expected \"%s\" on stdout, got \"%s\"", what, needle,
		       out ? out : "(null)");
	free(out);
}

static void test_help_version(void)
{
	char ver[64];

	{
		char *argv[] = {"prog", "-h", NULL};
		expect_child("-h", argv, ARGC(argv), NULL, 0, "-s, --str <text>");
	}
	{
		/* Help wins even after other valid flags; the callbacks did not run. */
		char *argv[] = {"prog", "-i", "3", "--help", NULL};
		expect_child("--help", argv, ARGC(argv), NULL, 0, "Usage: test_argp");
	}
	{
		/* A bad flag before -h is an error, reported as such. */
		char *argv[] = {"prog", "--bogus", "-h", NULL};
		expect_child("--bogus -h", argv, ARGC(argv), NULL, 100 + DOCA_ERROR_INVALID_VALUE,
			     NULL);
	}
	snprintf(ver, sizeof(ver), "%s", doca_version());
	{
		char *argv[] = {"prog", "-v", NULL};
		expect_child("-v", argv, ARGC(argv), NULL, 0, ver);
	}
	{
		char *argv[] = {"prog", "--version", NULL};
		expect_child("--version", argv, ARGC(argv), NULL, 0, doca_version_runtime());
	}
	{
		char *argv[] = {"prog", "-v", NULL};
		expect_child("-v callback", argv, ARGC(argv), version_cb_ok, 0,
			     "custom-version-tag");
	}
	{
		char *argv[] = {"prog", "-v", NULL};
		expect_child("-v exiting callback", argv, ARGC(argv), version_cb_exit, 0,
			     "exiting-version");
	}
	{
		char *argv[] = {"prog", "-v", NULL};
		expect_child("-v failing callback", argv, ARGC(argv), version_cb_fail,
			     100 + DOCA_ERROR_NOT_SUPPORTED, NULL);
	}
}

/* A refusal is one record naming the call made, also when a shared check finds it. */
static void test_refusal_records(void)
{
	struct doca_log_backend *be = t_refusal_capture();
	struct doca_argp_param *p = NULL;
	int level;
	struct cfg c;

	doca_argp_usage();
	T_REFUSAL("doca_argp_usage", "argp is not initialised");
	T_STATUS(doca_argp_register_version_callback(str_cb), DOCA_ERROR_BAD_STATE);
	T_REFUSAL("doca_argp_register_version_callback", "argp is not initialised");
	setup(&c);
	t_refusal_reset();
	T_STATUS(doca_argp_register_validation_callback(NULL), DOCA_ERROR_INVALID_VALUE);
	T_REFUSAL("doca_argp_register_validation_callback", "NULL callback");
	T_STATUS(doca_argp_get_sdk_log_level(NULL), DOCA_ERROR_INVALID_VALUE);
	T_REFUSAL("doca_argp_get_sdk_log_level", "NULL log_level");
	T_OK(doca_argp_get_log_level(&level));
	T_TRUE(t_refusal_reset() == 0);
	doca_argp_param_set_hidden(NULL);
	T_REFUSAL("doca_argp_param_set_hidden", "NULL param");
	T_OK(doca_argp_param_create(&p));
	doca_argp_param_set_type(p, (enum doca_argp_type)99);
	T_REFUSAL("doca_argp_param_set_type", "unknown type 99");
	doca_argp_param_set_long_name(p, NULL);
	T_REFUSAL("doca_argp_param_set_long_name", "NULL value");
	doca_argp_param_set_short_name(p, "z");
	doca_argp_param_set_callback(p, str_cb);
	doca_argp_param_set_type(p, DOCA_ARGP_TYPE_STRING);
	T_TRUE(t_refusal_reset() == 0);
	T_STATUS(doca_argp_register_param(p), DOCA_ERROR_INITIALIZATION); /* frees p */
	T_REFUSAL("doca_argp_register_param", "param -z: no description set");
	T_OK(doca_argp_param_create(&p));
	doca_argp_param_set_description(p, "nameless");
	T_STATUS(doca_argp_register_param(p), DOCA_ERROR_INITIALIZATION);
	T_REFUSAL("doca_argp_register_param", "the param has neither a short nor a long name");
	T_OK(doca_argp_param_create(&p));
	doca_argp_param_set_long_name(p, "registered");
	doca_argp_param_set_description(p, "registered flag");
	doca_argp_param_set_callback(p, str_cb);
	doca_argp_param_set_type(p, DOCA_ARGP_TYPE_STRING);
	T_OK(doca_argp_register_param(p));
	T_TRUE(t_refusal_reset() == 0);
	doca_argp_param_set_mandatory(p);
	T_REFUSAL("doca_argp_param_set_mandatory",
		  "the param is already registered and can no longer change");
	T_OK(doca_argp_start(0, NULL));
	t_refusal_reset();
	T_STATUS(doca_argp_disable_pedantic_config_parsing(), DOCA_ERROR_BAD_STATE);
	T_REFUSAL("doca_argp_disable_pedantic_config_parsing",
		  "doca_argp_start was already called");
	T_OK(doca_argp_destroy());
	if (be != NULL)
		T_OK(doca_log_backend_set_sdk_level(be, DOCA_LOG_LEVEL_DISABLE));
}

int main(void)
{
	/* The checks read argp's error lines: SDK errors must reach stderr even under
	 * DOCA_LOG_LEVEL=disable. */
	if (doca_log_level_get_global_sdk_limit() < DOCA_LOG_LEVEL_ERROR)
		T_OK(doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_ERROR));
	test_lifecycle();
	test_registration();
	test_cli_types();
	test_log_levels();
	test_cli_errors();
	test_usage();
	test_json();
	test_help_version();
	test_refusal_records();
	T_DONE();
}
