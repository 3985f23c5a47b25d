/*
 * Unit test: DOCA logging. Fallbacks before any backend exists, DOCA_LOG_LEVEL (parser and end
 * to end in a re-executed child), sources, per-backend and global limits (lower, upper,
 * strict), SDK versus application messages, every backend kind, record format, thread safety,
 * the standard backends and the backend limit.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "doca_log.h"
#include "sdp_log.h"
#include "t_helpers.h"

SDP_LOG_COMPONENT("logtest");
DOCA_LOG_REGISTER(TEST::LOG : MAIN);

/* ---- capture helpers ----------------------------------------------------------------------- */

struct capture {
	char text[65536];
	size_t len;
	int records;
};

static struct capture app_cap, sdk_cap;
static char app_buf[4096], sdk_buf[4096];

static void capture_add(struct capture *c, const char *rec)
{
	size_t n = strlen(rec);

	if (c->len + n >= sizeof(c->text))
		n = sizeof(c->text) - 1 - c->len;
	memcpy(c->text + c->len, rec, n);
	c->len += n;
	c->text[c->len] = '\0';
	c->records++;
}

static void capture_reset(struct capture *c)
{
	c->len = 0;
	c->text[0] = '\0';
	c->records = 0;
}

static void app_flush(char *buf)
{
	capture_add(&app_cap, buf);
}

static void sdk_flush(char *buf)
{
	capture_add(&sdk_cap, buf);
}

#define T_HAS(cap, needle)                                                                         \
	do {                                                                                       \
		if (strstr((cap).text, (needle)) == NULL)                                          \
			t_fail("expected \"%s\" in captured output, got \"%s\"", (needle),         \
			       (cap).text);                                                        \
	} while (0)

#define T_LACKS(cap, needle)                                                                       \
	do {                                                                                       \
		if (strstr((cap).text, (needle)) != NULL)                                          \
			t_fail("expected no \"%s\" in captured output, got \"%s\"", (needle),      \
			       (cap).text);                                                        \
	} while (0)

/* Read a whole file descriptor from offset 0 into buf (NUL-terminated). */
static size_t read_fd_all(int fd, char *buf, size_t cap)
{
	size_t len = 0;
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	while (len + 1 < cap && (n = read(fd, buf + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	return len;
}

static int make_tmpfile(void)
{
	char path[] = "/tmp/softdpu-test-log-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0) {
		perror("mkstemp");
		exit(T_EXIT_FAIL);
	}
	unlink(path);
	return fd;
}

/* Log one application message at each level with a marker "<tag>-<LEVEL>". */
static void log_all_levels(const char *tag)
{
	DOCA_LOG_CRIT("%s-CRIT", tag);
	DOCA_LOG_ERR("%s-ERR", tag);
	DOCA_LOG_WARN("%s-WARN", tag);
	DOCA_LOG_INFO("%s-INFO", tag);
	DOCA_LOG_DBG("%s-DBG", tag);
	DOCA_LOG_TRC("%s-TRC", tag);
}

static void sdk_all_levels(const char *tag)
{
	sdp_crit("%s-CRIT", tag);
	sdp_error("%s-ERR", tag);
	sdp_warn("%s-WARN", tag);
	sdp_info("%s-INFO", tag);
	sdp_debug("%s-DBG", tag);
	sdp_trace("%s-TRC", tag);
}

/*
 * Check which of the six markers "<tag>-<LEVEL>" a capture holds: shown is a string of six
 * characters, 'y' or 'n', for CRIT, ERR, WARN, INFO, DBG, TRC.
 */
static void check_levels(const struct capture *c, const char *tag, const char *shown, int line)
{
	static const char *const names[] = {"CRIT", "ERR", "WARN", "INFO", "DBG", "TRC"};
	char marker[64];
	int i, has;

	for (i = 0; i < 6; i++) {
		snprintf(marker, sizeof(marker), "%s-%s", tag, names[i]);
		has = strstr(c->text, marker) != NULL;
		if (has != (shown[i] == 'y'))
			t_fail("line %d: %s: expected %s, got %s (captured: \"%s\")", line, marker,
			       shown[i] == 'y' ? "shown" : "hidden", has ? "shown" : "hidden",
			       c->text);
	}
}

#define CHECK_LEVELS(cap, tag, shown) check_levels(&(cap), tag, shown, __LINE__)

/* ---- child processes ----------------------------------------------------------------------- */

/*
 * Run this program again with argv[1] = mode and one environment variable set (value NULL:
 * unset), collecting its stderr into out. Returns its exit status, or -1. The wait is bounded.
 */
static int run_child(const char *mode, const char *var, const char *value, char *out, size_t cap)
{
	struct pollfd pfd;
	size_t len = 0;
	int pipefd[2], status = -1, rc;
	ssize_t n;
	pid_t pid;
	time_t deadline = time(NULL) + 20;

	out[0] = '\0';
	if (pipe(pipefd) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(pipefd[1], STDERR_FILENO);
		close(pipefd[0]);
		close(pipefd[1]);
		if (value)
			setenv(var, value, 1);
		else
			unsetenv(var);
		execl("/proc/self/exe", "test_log", mode, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	pfd.fd = pipefd[0];
	pfd.events = POLLIN;
	for (;;) {
		rc = poll(&pfd, 1, 1000);
		if (rc < 0 && errno != EINTR)
			break;
		if (rc > 0) {
			n = read(pipefd[0], out + len, cap - 1 - len);
			if (n <= 0)
				break;
			len += (size_t)n;
			out[len] = '\0';
			if (len + 1 >= cap)
				break;
		}
		if (time(NULL) > deadline) {
			kill(pid, SIGKILL);
			break;
		}
	}
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Child: report the global limits the library applied at load. */
static int child_levels(void)
{
	fprintf(stderr, "levels lower=%u upper=%u sdk=%u\n",
		doca_log_level_get_global_lower_limit(), doca_log_level_get_global_upper_limit(),
		doca_log_level_get_global_sdk_limit());
	/* With DOCA_LOG_LEVEL=debug the fallbacks show debug messages too. */
	DOCA_LOG_DBG("child-app-debug");
	sdp_debug("child-sdk-debug");
	return 0;
}

static int count_lines_with(const char *text, const char *needle)
{
	const char *p = text;
	int n = 0;

	while ((p = strstr(p, needle)) != NULL) {
		n++;
		p += strlen(needle);
	}
	return n;
}

static void test_env_level(void)
{
	char out[8192];

	T_EQ_INT(run_child("child-levels", "DOCA_LOG_LEVEL", "debug", out, sizeof(out)), 0);
	T_TRUE(strstr(out, "levels lower=60 upper=20 sdk=60") != NULL);
	T_TRUE(strstr(out, "child-app-debug") != NULL);
	T_TRUE(strstr(out, "child-sdk-debug") != NULL);

	T_EQ_INT(run_child("child-levels", "DOCA_LOG_LEVEL", "70", out, sizeof(out)), 0);
	T_TRUE(strstr(out, "levels lower=70 upper=20 sdk=70") != NULL);

	T_EQ_INT(run_child("child-levels", "DOCA_LOG_LEVEL", " Error ", out, sizeof(out)), 0);
	T_TRUE(strstr(out, "levels lower=30 upper=20 sdk=30") != NULL);
	T_TRUE(strstr(out, "child-app-debug") == NULL);

	/* Empty means DOCA's defaults, silently. */
	T_EQ_INT(run_child("child-levels", "DOCA_LOG_LEVEL", "", out, sizeof(out)), 0);
	T_TRUE(strstr(out, "levels lower=50 upper=20 sdk=50") != NULL);
	T_TRUE(strstr(out, "DOCA_LOG_LEVEL") == NULL);

	/* A bad value: one warning naming the value and the accepted forms; defaults stay. */
	T_EQ_INT(run_child("child-levels", "DOCA_LOG_LEVEL", "verbose", out, sizeof(out)), 0);
	T_TRUE(strstr(out, "levels lower=50 upper=20 sdk=50") != NULL);
	T_TRUE(strstr(out, "DOCA_LOG_LEVEL='verbose'") != NULL);
	T_TRUE(strstr(out, "disable, crit, error, warning (warn), info, debug, trace") != NULL);
	T_TRUE(strstr(out, "child-app-debug") == NULL);
	T_EQ_INT(count_lines_with(out, "DOCA_LOG_LEVEL='verbose'"), 1);
	if (t_failures)
		fprintf(stderr, "child output:\n%s\n", out);
}

static void test_parse_level(void)
{
	static const struct {
		const char *text;
		uint32_t level;
	} good[] = {
		{"10", 10},	 {"20", 20},	 {"30", 30},	  {"40", 40},	  {"50", 50},
		{"60", 60},	 {"70", 70},	 {"disable", 10}, {"crit", 20},	  {"error", 30},
		{"warning", 40}, {"warn", 40},	 {"info", 50},	  {"debug", 60},  {"trace", 70},
		{"TRACE", 70},	 {" Warn ", 40}, {"DeBuG", 60},	  {"\t50\n", 50},
	};
	static const char *const bad[] = {"",
					  "   ",
					  "0",
					  "5",
					  "45",
					  "80",
					  "100",
					  "-10",
					  "10x",
					  "x10",
					  "err",
					  "warnings",
					  "verbose",
					  "99999999999999999999999",
					  "infoinfoinfoinfo"};
	uint32_t level;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		level = 0;
		T_OK(sdp_log_parse_level(good[i].text, &level));
		if (level != good[i].level)
			t_fail("parse \"%s\": expected %u, got %u", good[i].text, good[i].level,
			       level);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		level = 12345;
		if (sdp_log_parse_level(bad[i], &level) != DOCA_ERROR_INVALID_VALUE)
			t_fail("parse \"%s\": expected DOCA_ERROR_INVALID_VALUE", bad[i]);
		if (level != 12345)
			t_fail("parse \"%s\": output changed on failure to %u", bad[i], level);
	}
	T_STATUS(sdp_log_parse_level(NULL, &level), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_log_parse_level("info", NULL), DOCA_ERROR_INVALID_VALUE);

	T_EQ_STR(sdp_log_level_name(DOCA_LOG_LEVEL_ERROR), "ERR");
	T_EQ_STR(sdp_log_level_name(DOCA_LOG_LEVEL_TRACE), "TRC");
	T_EQ_STR(sdp_log_level_name(33), "?");
}

/* Before any backend exists: WARNING and worse of both streams reach stderr. */
static void test_fallback(void)
{
	char out[8192];
	int saved, fd;

	fflush(stderr);
	saved = dup(STDERR_FILENO);
	fd = make_tmpfile();
	dup2(fd, STDERR_FILENO);
	log_all_levels("fb-app");
	sdk_all_levels("fb-sdk");
	dup2(saved, STDERR_FILENO);
	close(saved);
	read_fd_all(fd, out, sizeof(out));
	close(fd);

	static struct capture c;
	snprintf(c.text, sizeof(c.text), "%s", out);
	CHECK_LEVELS(c, "fb-app", "yyynnn");
	CHECK_LEVELS(c, "fb-sdk", "yyynnn");
	/* The SDK source is named after the component. */
	T_TRUE(strstr(out, "[softdpu::logtest]") != NULL);
	T_TRUE(strstr(out, "[TEST::LOG : MAIN]") != NULL);
}

/* ---- sources and doca_log arguments -------------------------------------------------------- */

static void test_sources(void)
{
	char longname[400];
	int a = -1, b = -1, c = -1, d = -1, e = -1, f = -1, untouched = -7;

	T_OK(doca_log_register_source("UROM::SAMPLES : COMMON", &a));
	T_OK(doca_log_register_source("UROM::SAMPLES : COMMON", &b));
	T_EQ_INT(b, a); /* one name, one source, from any number of translation units */
	T_OK(doca_log_register_source("", &c));
	T_TRUE(c > 0 && c != a);
	T_OK(doca_log_register_source("100%s %n %d", &d));
	T_OK(doca_log_register_source("line\nbreak\tand\x01", &e));
	memset(longname, 'L', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	T_OK(doca_log_register_source(longname, &f));

	T_STATUS(doca_log_register_source(NULL, &untouched), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(untouched, -7);
	T_STATUS(doca_log_register_source("x", NULL), DOCA_ERROR_INVALID_VALUE);

	/* Odd names print verbatim (control characters as '?'), never as format directives. */
	capture_reset(&app_cap);
	T_OK(doca_log(DOCA_LOG_LEVEL_ERROR, d, __FILE__, __LINE__, __func__, "odd-%d", 1));
	T_HAS(app_cap, "[100%s %n %d]");
	T_HAS(app_cap, "odd-1");
	T_OK(doca_log(DOCA_LOG_LEVEL_ERROR, e, __FILE__, __LINE__, __func__, "ctl"));
	T_HAS(app_cap, "[line?break?and?]");
	T_OK(doca_log(DOCA_LOG_LEVEL_ERROR, c, __FILE__, __LINE__, __func__, "empty-name"));
	T_HAS(app_cap, "[][test_log.c:");
	T_OK(doca_log(DOCA_LOG_LEVEL_ERROR, f, __FILE__, __LINE__, __func__, "long-name"));
	memset(longname, 'L', DOCA_LOGGER_NAME_SIZE - 1);
	longname[DOCA_LOGGER_NAME_SIZE - 1] = ']';
	longname[DOCA_LOGGER_NAME_SIZE] = '\0';
	T_HAS(app_cap, longname); /* truncated to 255 characters */
	T_EQ_INT(app_cap.records, 4);

	/* Two registrations, two unregistrations; then the id is gone. */
	T_OK(doca_log_unregister_source(a));
	T_OK(doca_log(DOCA_LOG_LEVEL_ERROR, a, __FILE__, __LINE__, __func__, "still-there"));
	T_OK(doca_log_unregister_source(b));
	T_STATUS(doca_log(DOCA_LOG_LEVEL_ERROR, a, __FILE__, __LINE__, __func__, "gone"),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_unregister_source(a), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_unregister_source(0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_unregister_source(-3), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_unregister_source(1 << 30), DOCA_ERROR_INVALID_VALUE);
	/* Re-registering the name revives it. */
	T_OK(doca_log_register_source("UROM::SAMPLES : COMMON", &b));
	T_EQ_INT(b, a);
}

static void test_doca_log_args(void)
{
	const char *null_format = NULL;

	capture_reset(&sdk_cap);
	T_STATUS(doca_log(DOCA_LOG_LEVEL_DISABLE, log_source, __FILE__, __LINE__, __func__, "x"),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log(0, log_source, __FILE__, __LINE__, __func__, "x"),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log(45, log_source, __FILE__, __LINE__, __func__, "x"),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log(80, log_source, __FILE__, __LINE__, __func__, "x"),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log(DOCA_LOG_LEVEL_ERROR, 0, __FILE__, __LINE__, __func__, "x"),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log(DOCA_LOG_LEVEL_ERROR, -1, __FILE__, __LINE__, __func__, "x"),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log(DOCA_LOG_LEVEL_ERROR, 100000, __FILE__, __LINE__, __func__, "x"),
		 DOCA_ERROR_INVALID_VALUE);
	/* A NULL format is the point here; some compilers enable -Wformat-security by default. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-security"
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	T_STATUS(doca_log(DOCA_LOG_LEVEL_ERROR, log_source, __FILE__, __LINE__, __func__,
			  null_format),
		 DOCA_ERROR_INVALID_VALUE);
#pragma GCC diagnostic pop
	/* Each rejected call said why, once, through the SDK log. */
	T_EQ_INT(sdk_cap.records, 8);
	T_HAS(sdk_cap, "invalid log level 45");
	T_HAS(sdk_cap, "log source 100000 is not registered");
	T_HAS(sdk_cap, "NULL format");

	/* NULL file and function names are printed as '?', not dereferenced. */
	capture_reset(&app_cap);
	T_OK(doca_log(DOCA_LOG_LEVEL_ERROR, log_source, NULL, 7, NULL, "nulls"));
	T_HAS(app_cap, "[?:7][?] nulls");
}

/* ---- backends ------------------------------------------------------------------------------ */

static struct doca_log_backend *app_be, *sdk_be;

/* Backends cannot be destroyed: one a check no longer needs is switched off for good. */
static void silence(struct doca_log_backend *be)
{
	T_OK(doca_log_backend_set_level_lower_limit(be, DOCA_LOG_LEVEL_DISABLE));
	T_OK(doca_log_backend_set_level_lower_limit_strict(be));
}

static void test_create_args(void)
{
	struct doca_log_backend *be = (struct doca_log_backend *)&be;
	int fd;

	T_STATUS(doca_log_backend_create_with_buf(NULL, 10, app_flush, &be),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_create_with_buf(app_buf, 0, app_flush, &be),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_create_with_buf(app_buf, 10, NULL, &be),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_create_with_buf(app_buf, 10, app_flush, NULL),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_create_with_buf_sdk(NULL, 10, sdk_flush, &be),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_create_with_file(NULL, &be), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_create_with_file(stderr, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_create_with_file_sdk(NULL, &be), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_create_with_fd(-1, &be), DOCA_ERROR_INVALID_VALUE);
	fd = make_tmpfile();
	close(fd); /* now surely not open */
	T_STATUS(doca_log_backend_create_with_fd(fd, &be), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_create_with_fd_sdk(fd, &be), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_create_with_fd(STDERR_FILENO, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_create_with_syslog(NULL, &be), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_create_with_syslog_sdk(NULL, &be), DOCA_ERROR_INVALID_VALUE);
	/* Output parameters are untouched on failure. */
	T_TRUE(be == (struct doca_log_backend *)&be);
}

static void test_sdk_vs_app(void)
{
	T_OK(doca_log_backend_create_with_buf_sdk(sdk_buf, sizeof(sdk_buf), sdk_flush, &sdk_be));
	T_OK(doca_log_backend_create_with_buf(app_buf, sizeof(app_buf), app_flush, &app_be));
	T_TRUE(sdk_be != NULL && app_be != NULL && sdk_be != app_be);

	capture_reset(&app_cap);
	capture_reset(&sdk_cap);
	log_all_levels("sep-app");
	sdk_all_levels("sep-sdk");
	/* Defaults: app [CRIT..INFO], SDK up to INFO; each stream only on its own backends. */
	CHECK_LEVELS(app_cap, "sep-app", "yyyynn");
	CHECK_LEVELS(sdk_cap, "sep-sdk", "yyyynn");
	CHECK_LEVELS(app_cap, "sep-sdk", "nnnnnn");
	CHECK_LEVELS(sdk_cap, "sep-app", "nnnnnn");
	T_EQ_INT(app_cap.records, 4);
	T_EQ_INT(sdk_cap.records, 4);
}

static void test_record_format(void)
{
	char expect[256];
	int line;

	capture_reset(&app_cap);
	line = __LINE__ + 1;
	DOCA_LOG_WARN("format %s %d", "check", 42);
	T_EQ_INT(app_cap.records, 1);
	/* [YYYY-MM-DD HH:MM:SS.uuuuuu][pid][WARN][source][file:line][function] message\n */
	snprintf(expect, sizeof(expect),
		 "][%d][WARN][TEST::LOG : MAIN][test_log.c:%d][%s] "
		 "format check 42\n",
		 (int)getpid(), line, __func__);
	T_HAS(app_cap, expect);
	T_TRUE(app_cap.text[0] == '[' && app_cap.text[5] == '-' && app_cap.text[11] == ' ' &&
	       app_cap.text[20] == '.' && app_cap.text[27] == ']');
	T_TRUE(strchr(app_cap.text, '\n') == app_cap.text + app_cap.len - 1);

	capture_reset(&sdk_cap);
	line = __LINE__ + 1;
	sdp_error("sdk format %u", 7u);
	snprintf(expect, sizeof(expect),
		 "][ERR][softdpu::logtest][test_log.c:%d][%s] sdk format 7\n", line, __func__);
	T_HAS(sdk_cap, expect);

	/* %m names the caller's errno, which logging leaves as it was. */
	capture_reset(&sdk_cap);
	capture_reset(&app_cap);
	errno = ENOENT;
	sdp_error("sdk-errno: %m");
	T_EQ_INT(errno, ENOENT);
	DOCA_LOG_ERR("app-errno: %m");
	T_EQ_INT(errno, ENOENT);
	snprintf(expect, sizeof(expect), "sdk-errno: %s\n", strerror(ENOENT));
	T_HAS(sdk_cap, expect);
	snprintf(expect, sizeof(expect), "app-errno: %s\n", strerror(ENOENT));
	T_HAS(app_cap, expect);
}

static void test_app_limits(void)
{
	struct doca_log_backend *bogus = (struct doca_log_backend *)&app_cap;

	capture_reset(&app_cap);
	T_OK(doca_log_backend_set_level_lower_limit(app_be, DOCA_LOG_LEVEL_DEBUG));
	log_all_levels("lo-dbg");
	CHECK_LEVELS(app_cap, "lo-dbg", "yyyyyn");
	T_OK(doca_log_backend_set_level_lower_limit(app_be, DOCA_LOG_LEVEL_TRACE));
	log_all_levels("lo-trc");
	CHECK_LEVELS(app_cap, "lo-trc", "yyyyyy");
	T_OK(doca_log_backend_set_level_lower_limit(app_be, DOCA_LOG_LEVEL_ERROR));
	log_all_levels("lo-err");
	CHECK_LEVELS(app_cap, "lo-err", "yynnnn");
	T_OK(doca_log_backend_set_level_lower_limit(app_be, DOCA_LOG_LEVEL_DISABLE));
	log_all_levels("lo-off");
	CHECK_LEVELS(app_cap, "lo-off", "nnnnnn");

	/* Upper limit: the most severe level shown. */
	T_OK(doca_log_backend_set_level_lower_limit(app_be, DOCA_LOG_LEVEL_DEBUG));
	T_OK(doca_log_backend_set_level_upper_limit(app_be, DOCA_LOG_LEVEL_WARNING));
	log_all_levels("up-warn");
	CHECK_LEVELS(app_cap, "up-warn", "nnyyyn");
	T_OK(doca_log_backend_set_level_upper_limit(app_be, DOCA_LOG_LEVEL_INFO));
	T_OK(doca_log_backend_set_level_lower_limit(app_be, DOCA_LOG_LEVEL_INFO));
	log_all_levels("up-only-info");
	CHECK_LEVELS(app_cap, "up-only-info", "nnnynn");
	/* An upper limit beyond the lower limit shows nothing. */
	T_OK(doca_log_backend_set_level_upper_limit(app_be, DOCA_LOG_LEVEL_DEBUG));
	log_all_levels("up-empty");
	CHECK_LEVELS(app_cap, "up-empty", "nnnnnn");
	T_OK(doca_log_backend_set_level_upper_limit(app_be, DOCA_LOG_LEVEL_CRIT));

	/* Bad levels and handles; each failure is logged once. */
	capture_reset(&sdk_cap);
	T_STATUS(doca_log_backend_set_level_lower_limit(app_be, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_set_level_lower_limit(app_be, 55), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_set_level_lower_limit(app_be, 80), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_set_level_upper_limit(app_be, 9), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_set_level_lower_limit(NULL, 50), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_set_level_upper_limit(bogus, 50), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_set_level_lower_limit_strict(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_set_level_upper_limit_strict(bogus), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_backend_set_sdk_level(NULL, 50), DOCA_ERROR_INVALID_VALUE);
	/* Limits of the other stream's kind of backend. */
	T_STATUS(doca_log_backend_set_sdk_level(app_be, 50), DOCA_ERROR_NOT_PERMITTED);
	T_STATUS(doca_log_backend_set_level_lower_limit(sdk_be, 50), DOCA_ERROR_NOT_PERMITTED);
	T_STATUS(doca_log_backend_set_level_upper_limit(sdk_be, 50), DOCA_ERROR_NOT_PERMITTED);
	T_STATUS(doca_log_backend_set_level_lower_limit_strict(sdk_be), DOCA_ERROR_NOT_PERMITTED);
	T_EQ_INT(sdk_cap.records, 13);
	T_HAS(sdk_cap, "wrong kind of backend");
	/* The backend still works as it was. */
	log_all_levels("after-bad");
	CHECK_LEVELS(app_cap, "after-bad", "yyyynn");
}

static void test_global_limits(void)
{
	struct doca_log_backend *late;
	static char late_buf[4096];

	T_EQ_INT(doca_log_level_get_global_lower_limit(), DOCA_LOG_LEVEL_INFO);
	T_EQ_INT(doca_log_level_get_global_upper_limit(), DOCA_LOG_LEVEL_CRIT);
	T_EQ_INT(doca_log_level_get_global_sdk_limit(), DOCA_LOG_LEVEL_INFO);

	capture_reset(&app_cap);
	T_OK(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_DEBUG));
	T_EQ_INT(doca_log_level_get_global_lower_limit(), DOCA_LOG_LEVEL_DEBUG);
	log_all_levels("gl-dbg");
	CHECK_LEVELS(app_cap, "gl-dbg", "yyyyyn");
	T_OK(doca_log_level_set_global_upper_limit(DOCA_LOG_LEVEL_ERROR));
	T_EQ_INT(doca_log_level_get_global_upper_limit(), DOCA_LOG_LEVEL_ERROR);
	log_all_levels("gu-err");
	CHECK_LEVELS(app_cap, "gu-err", "nyyyyn");

	/* A backend created now starts from the global limits. */
	T_OK(doca_log_backend_create_with_buf(late_buf, sizeof(late_buf), app_flush, &late));
	capture_reset(&app_cap);
	DOCA_LOG_DBG("late-dbg");
	DOCA_LOG_CRIT("late-crit");
	T_EQ_INT(app_cap.records, 2); /* DBG twice (two backends), CRIT nowhere */
	T_LACKS(app_cap, "late-crit");
	T_STATUS(doca_log_level_set_global_lower_limit(5), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_level_set_global_upper_limit(71), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_log_level_set_global_sdk_limit(35), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(doca_log_level_get_global_lower_limit(), DOCA_LOG_LEVEL_DEBUG);
	T_EQ_INT(doca_log_level_get_global_upper_limit(), DOCA_LOG_LEVEL_ERROR);
	T_EQ_INT(doca_log_level_get_global_sdk_limit(), DOCA_LOG_LEVEL_INFO);

	/* SDK: the global limit and the per-backend level. */
	capture_reset(&sdk_cap);
	T_OK(doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_TRACE));
	T_EQ_INT(doca_log_level_get_global_sdk_limit(), DOCA_LOG_LEVEL_TRACE);
	T_TRUE(sdp_log_sdk_enabled(DOCA_LOG_LEVEL_TRACE));
	sdk_all_levels("gs-trc");
	CHECK_LEVELS(sdk_cap, "gs-trc", "yyyyyy");
	T_OK(doca_log_backend_set_sdk_level(sdk_be, DOCA_LOG_LEVEL_WARNING));
	T_TRUE(!sdp_log_sdk_enabled(DOCA_LOG_LEVEL_INFO));
	sdk_all_levels("bs-warn");
	CHECK_LEVELS(sdk_cap, "bs-warn", "yyynnn");
	T_OK(doca_log_backend_set_sdk_level(sdk_be, DOCA_LOG_LEVEL_DISABLE));
	T_TRUE(!sdp_log_sdk_enabled(DOCA_LOG_LEVEL_CRIT));
	sdk_all_levels("bs-off");
	CHECK_LEVELS(sdk_cap, "bs-off", "nnnnnn");
	T_STATUS(doca_log_backend_set_sdk_level(sdk_be, 75), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_INFO));
	sdk_all_levels("gs-info");
	CHECK_LEVELS(sdk_cap, "gs-info", "yyyynn");

	/* Back to the defaults for the rest of the test. */
	T_OK(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_INFO));
	T_OK(doca_log_level_set_global_upper_limit(DOCA_LOG_LEVEL_CRIT));
	silence(late);
}

static void test_strict(void)
{
	capture_reset(&app_cap);
	/* Strict lower limit: never chattier than INFO again, quieter is fine. */
	T_OK(doca_log_backend_set_level_lower_limit(app_be, DOCA_LOG_LEVEL_INFO));
	T_OK(doca_log_backend_set_level_lower_limit_strict(app_be));
	T_STATUS(doca_log_backend_set_level_lower_limit(app_be, DOCA_LOG_LEVEL_DEBUG),
		 DOCA_ERROR_NOT_PERMITTED);
	log_all_levels("sl-1");
	CHECK_LEVELS(app_cap, "sl-1", "yyyynn");
	T_OK(doca_log_backend_set_level_lower_limit(app_be, DOCA_LOG_LEVEL_WARNING));
	log_all_levels("sl-2");
	CHECK_LEVELS(app_cap, "sl-2", "yyynnn");
	/* A global change is clamped to the strict bound instead of refused. */
	T_OK(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_TRACE));
	log_all_levels("sl-3");
	CHECK_LEVELS(app_cap, "sl-3", "yyyynn");
	T_OK(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_ERROR));
	log_all_levels("sl-4");
	CHECK_LEVELS(app_cap, "sl-4", "yynnnn");
	T_OK(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_INFO));

	/* Strict upper limit: never more severe than ERROR again. */
	T_OK(doca_log_backend_set_level_upper_limit(app_be, DOCA_LOG_LEVEL_ERROR));
	T_OK(doca_log_backend_set_level_upper_limit_strict(app_be));
	T_STATUS(doca_log_backend_set_level_upper_limit(app_be, DOCA_LOG_LEVEL_CRIT),
		 DOCA_ERROR_NOT_PERMITTED);
	log_all_levels("su-1");
	CHECK_LEVELS(app_cap, "su-1", "nyyynn");
	T_OK(doca_log_level_set_global_upper_limit(DOCA_LOG_LEVEL_CRIT));
	log_all_levels("su-2");
	CHECK_LEVELS(app_cap, "su-2", "nyyynn");
	T_OK(doca_log_level_set_global_upper_limit(DOCA_LOG_LEVEL_WARNING));
	log_all_levels("su-3");
	CHECK_LEVELS(app_cap, "su-3", "nnyynn");
	T_OK(doca_log_level_set_global_upper_limit(DOCA_LOG_LEVEL_CRIT));
}

/* fd, FILE and syslog backends; a buffer that truncates; a long record. */
static void test_kinds(void)
{
	static char small[32];
	static char out[16384];
	char big[3000];
	struct doca_log_backend *fd_be, *file_be, *sl_be, *small_be;
	FILE *file;
	size_t len;
	int fd;

	fd = make_tmpfile();
	T_OK(doca_log_backend_create_with_fd(fd, &fd_be));
	DOCA_LOG_ERR("to-fd %d", 1);
	DOCA_LOG_DBG("fd-hidden");
	len = read_fd_all(fd, out, sizeof(out));
	T_TRUE(strstr(out, "to-fd 1\n") != NULL);
	T_TRUE(strstr(out, "fd-hidden") == NULL);
	T_TRUE(len > 0 && out[len - 1] == '\n');

	/* A record longer than the on-stack buffer is written whole, in one piece. */
	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	T_TRUE(ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0);
	DOCA_LOG_ERR("big:%s:end", big);
	len = read_fd_all(fd, out, sizeof(out));
	T_TRUE(len > sizeof(big) && strstr(out, big) != NULL && strstr(out, ":end\n") != NULL);
	silence(fd_be); /* the backend keeps using fd: it stays open */

	file = tmpfile();
	T_TRUE(file != NULL);
	if (file != NULL) {
		T_OK(doca_log_backend_create_with_file(file, &file_be));
		DOCA_LOG_INFO("to-file");
		silence(file_be);
		DOCA_LOG_INFO("file-after-disable");
		read_fd_all(fileno(file), out, sizeof(out));
		T_TRUE(strstr(out, "to-file\n") != NULL);
		T_TRUE(strstr(out, "file-after-disable") == NULL);
		/* The backend keeps the FILE: it stays open until the process exits. */
	}

	/* Syslog: created, then silenced so the test does not write to the system log. */
	T_OK(doca_log_backend_create_with_syslog("softdpu-test-log", &sl_be));
	silence(sl_be);
	T_OK(doca_log_backend_create_with_syslog_sdk("softdpu-test-log-sdk", &sl_be));
	T_OK(doca_log_backend_set_sdk_level(sl_be, DOCA_LOG_LEVEL_DISABLE));

	/* Capacity 32: the record is cut to 31 characters plus the NUL, and still flushed. */
	T_OK(doca_log_backend_create_with_buf(small, sizeof(small), app_flush, &small_be));
	capture_reset(&app_cap);
	DOCA_LOG_ERR("truncated-record");
	T_EQ_INT(app_cap.records, 2);
	T_EQ_INT(strlen(small), sizeof(small) - 1);
	silence(small_be);
}

/* A flush handler that logs: the nested message is dropped, nothing deadlocks. */
static char nest_buf[1024];
static int nest_calls;
static doca_error_t nest_status = DOCA_SUCCESS, nest_api_status = DOCA_SUCCESS;
static uint32_t nest_level;

static void nesting_flush(char *buf)
{
	int id;

	(void)buf;
	nest_calls++;
	nest_status = DOCA_LOG_ERR("from inside a flush handler");
	sdp_error("sdk from inside a flush handler");
	/* The rest of the API refuses instead of waiting for the lock the logger holds. */
	nest_api_status = doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_TRACE);
	if (doca_log_register_source("nested", &id) != DOCA_ERROR_BAD_STATE)
		nest_api_status = DOCA_ERROR_UNEXPECTED;
	nest_level = doca_log_level_get_global_lower_limit();
}

static void test_nested(void)
{
	struct doca_log_backend *be;

	T_OK(doca_log_backend_create_with_buf(nest_buf, sizeof(nest_buf), nesting_flush, &be));
	capture_reset(&app_cap);
	capture_reset(&sdk_cap);
	DOCA_LOG_ERR("outer");
	T_EQ_INT(nest_calls, 1);
	T_STATUS(nest_status, DOCA_ERROR_AGAIN);
	T_STATUS(nest_api_status, DOCA_ERROR_BAD_STATE);
	T_EQ_INT(nest_level, DOCA_LOG_LEVEL_INFO);
	T_EQ_INT(doca_log_level_get_global_lower_limit(), DOCA_LOG_LEVEL_INFO);
	T_EQ_INT(app_cap.records, 1);
	T_LACKS(app_cap, "inside a flush handler");
	T_LACKS(sdk_cap, "inside a flush handler");
	silence(be);
	/* Logging works normally afterwards. */
	DOCA_LOG_ERR("after-nesting");
	T_HAS(app_cap, "after-nesting");
}

/* Many threads, one fd backend: every record arrives whole, on its own line. */
#define N_THREADS 4
#define N_RECORDS 200

static void *writer(void *arg)
{
	long id = (long)arg;
	int i;

	for (i = 0; i < N_RECORDS; i++)
		DOCA_LOG_ERR("thread=%ld seq=%d payload=%s", id, i,
			     "0123456789abcdefghijklmnopqrstuvwxyz0123456789");
	return NULL;
}

static void test_threads(void)
{
	static char out[N_THREADS * N_RECORDS * 256];
	struct doca_log_backend *be;
	pthread_t th[N_THREADS];
	char *line, *save = NULL;
	int fd, lines = 0, good = 0;
	long i;

	T_OK(doca_log_backend_set_level_lower_limit(app_be, DOCA_LOG_LEVEL_DISABLE));
	fd = make_tmpfile();
	T_OK(doca_log_backend_create_with_fd(fd, &be));
	for (i = 0; i < N_THREADS; i++)
		pthread_create(&th[i], NULL, writer, (void *)i);
	for (i = 0; i < N_THREADS; i++)
		pthread_join(th[i], NULL);
	silence(be);
	read_fd_all(fd, out, sizeof(out));
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lines++;
		if (line[0] == '[' && strstr(line, "][ERR][TEST::LOG : MAIN][test_log.c:") &&
		    strstr(line, "payload=0123456789abcdefghijklmnopqrstuvwxyz0123456789") &&
		    strlen(strstr(line, "payload=")) == strlen("payload=") + 46)
			good++;
	}
	T_EQ_INT(lines, N_THREADS * N_RECORDS);
	T_EQ_INT(good, N_THREADS * N_RECORDS);
	T_OK(doca_log_backend_set_level_lower_limit(app_be, DOCA_LOG_LEVEL_INFO));
}

/* Standard backends: INFO and chattier to stdout, WARNING and worse to stderr. */
static void test_standard(void)
{
	char out[8192], err[8192];
	int saved_out, saved_err, fd_out, fd_err;

	T_OK(doca_log_backend_set_level_lower_limit(app_be, DOCA_LOG_LEVEL_DISABLE));
	fflush(stdout);
	fflush(stderr);
	saved_out = dup(STDOUT_FILENO);
	saved_err = dup(STDERR_FILENO);
	fd_out = make_tmpfile();
	fd_err = make_tmpfile();
	dup2(fd_out, STDOUT_FILENO);
	dup2(fd_err, STDERR_FILENO);

	T_OK(doca_log_backend_create_standard());
	T_OK(doca_log_backend_create_standard()); /* no second set of backends */
	log_all_levels("std-1");
	T_OK(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_TRACE));
	log_all_levels("std-2");
	T_OK(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_ERROR));
	log_all_levels("std-3");
	T_OK(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_INFO));

	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, STDOUT_FILENO);
	dup2(saved_err, STDERR_FILENO);
	close(saved_out);
	close(saved_err);
	read_fd_all(fd_out, out, sizeof(out));
	read_fd_all(fd_err, err, sizeof(err));
	close(fd_out);
	close(fd_err);

	static struct capture o, e;
	snprintf(o.text, sizeof(o.text), "%s", out);
	snprintf(e.text, sizeof(e.text), "%s", err);
	CHECK_LEVELS(o, "std-1", "nnnynn");
	CHECK_LEVELS(e, "std-1", "yyynnn");
	CHECK_LEVELS(o, "std-2", "nnnyyy");
	CHECK_LEVELS(e, "std-2", "yyynnn");
	CHECK_LEVELS(o, "std-3", "nnnnnn");
	CHECK_LEVELS(e, "std-3", "yynnnn");
	/* One record per message, so no duplicates from the second call. */
	T_TRUE(strstr(strstr(e.text, "std-1-ERR") + 1, "std-1-ERR") == NULL);
}

/* Fill the remaining application slots; the next creation fails cleanly. */
static void test_max_backends(void)
{
	static char bufs[64][64];
	struct doca_log_backend *be, *keep = (struct doca_log_backend *)&keep;
	uint32_t max = doca_log_get_max_num_backends(), created = 0;
	doca_error_t status = DOCA_SUCCESS;

	T_TRUE(max >= 2 && max <= 64);
	T_TRUE(doca_log_get_max_num_backends_sdk() >= 1);
	while (created < 64) {
		status = doca_log_backend_create_with_buf(bufs[created], sizeof(bufs[0]), app_flush,
							  &be);
		if (status != DOCA_SUCCESS)
			break;
		silence(be);
		created++;
	}
	T_STATUS(status, DOCA_ERROR_NO_MEMORY);
	T_TRUE(created > 0 && created < max);
	T_STATUS(doca_log_backend_create_with_fd(STDERR_FILENO, &keep), DOCA_ERROR_NO_MEMORY);
	T_TRUE(keep == (struct doca_log_backend *)&keep);
	/* The existing backends still work. */
	capture_reset(&sdk_cap);
	sdp_error("after-exhaustion");
	T_HAS(sdk_cap, "after-exhaustion");
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "child-levels") == 0)
		return child_levels();
	/* The checks below assume DOCA's defaults: run without an inherited DOCA_LOG_LEVEL. */
	if (getenv("DOCA_LOG_LEVEL") != NULL) {
		unsetenv("DOCA_LOG_LEVEL");
		execl("/proc/self/exe", argv[0], (char *)NULL);
		perror("re-exec");
		return T_EXIT_FAIL;
	}
	test_fallback(); /* must run before any backend exists */
	test_parse_level();
	test_env_level();
	test_create_args();
	test_sdk_vs_app();
	test_record_format();
	test_sources();
	test_doca_log_args();
	test_app_limits();
	test_global_limits();
	test_strict();
	test_kinds();
	test_nested();
	test_threads();
	test_standard();
	test_max_backends();
	T_DONE();
}
