/*
 * Unit test: the configuration registry. Defaults, environment overrides, the scalar parsers,
 * lists, bad values reported once with the variable's name, the listing, unknown SOFTDPU_*
 * variables with the nearest valid name (captured through an SDK buffer backend, and once more
 * end to end from the library constructor in a re-executed child), and docs/environment.md
 * agreeing with the table.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_build_config.h" /* build facts: versions, paths, SDP_HAVE_* */

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "doca_log.h"
#include "sdp_config.h"
#include "sdp_log.h"
#include "t_helpers.h"

static char sdk_buf[4096];
static char captured[65536];
static int records;

static void sdk_flush(char *buf)
{
	size_t len = strlen(captured), n = strlen(buf);

	if (len + n < sizeof(captured))
		memcpy(captured + len, buf, n + 1);
	records++;
}

static void capture_reset(void)
{
	captured[0] = '\0';
	records = 0;
}

#define T_HAS(needle)                                                                              \
	do {                                                                                       \
		if (strstr(captured, (needle)) == NULL)                                            \
			t_fail("expected \"%s\" in the SDK log, got \"%s\"", (needle), captured);  \
	} while (0)

static int count_of(const char *text, const char *needle)
{
	int n = 0;

	while ((text = strstr(text, needle)) != NULL) {
		n++;
		text += strlen(needle);
	}
	return n;
}

static void unset_all(void)
{
	int i;

	for (i = 0; i < SDP_CFG_COUNT; i++)
		unsetenv(sdp_config_name((enum sdp_config_id)i));
}

static void test_names_and_defaults(void)
{
	unset_all();
	T_EQ_STR(sdp_config_name(SDP_CFG_DOCA_LOG_LEVEL), "DOCA_LOG_LEVEL");
	T_EQ_STR(sdp_config_name(SDP_CFG_PROVIDER_PATH), "SOFTDPU_PROVIDER_PATH");
	T_EQ_STR(sdp_config_name(SDP_CFG_DEVICES), "SOFTDPU_DEVICES");
	T_EQ_STR(sdp_config_name(SDP_CFG_DEVICE_CONFIG), "SOFTDPU_DEVICE_CONFIG");
	T_EQ_STR(sdp_config_name(SDP_CFG_HOST_DEV_ALIASES), "SOFTDPU_HOST_DEV_ALIASES");

	T_EQ_STR(sdp_config_get_string(SDP_CFG_DOCA_LOG_LEVEL), "");
	T_EQ_STR(sdp_config_get_string(SDP_CFG_PROVIDER_PATH), "");
	T_EQ_STR(sdp_config_get_string(SDP_CFG_DEVICES), "");
	T_EQ_STR(sdp_config_get_string(SDP_CFG_DEVICE_CONFIG), "/etc/softdpu/devices.conf");
	T_EQ_STR(sdp_config_get_string(SDP_CFG_HOST_DEV_ALIASES), "mlx5_0");
	T_EQ_STR(sdp_config_default(SDP_CFG_HOST_DEV_ALIASES), "mlx5_0");

	/* Ids out of range. */
	T_TRUE(sdp_config_name(SDP_CFG_COUNT) == NULL);
	T_TRUE(sdp_config_default((enum sdp_config_id) - 1) == NULL);
	T_TRUE(sdp_config_get_string((enum sdp_config_id)1000) == NULL);
}

static void test_override(void)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/softdpu-test-config-%d.conf", (int)getpid());
	setenv("SOFTDPU_DEVICE_CONFIG", path, 1);
	T_EQ_STR(sdp_config_get_string(SDP_CFG_DEVICE_CONFIG), path);
	/* Set but empty replaces the default too. */
	setenv("SOFTDPU_HOST_DEV_ALIASES", "", 1);
	T_EQ_STR(sdp_config_get_string(SDP_CFG_HOST_DEV_ALIASES), "");
	unsetenv("SOFTDPU_HOST_DEV_ALIASES");
	T_EQ_STR(sdp_config_get_string(SDP_CFG_HOST_DEV_ALIASES), "mlx5_0");
	unsetenv("SOFTDPU_DEVICE_CONFIG");
	T_EQ_STR(sdp_config_get_string(SDP_CFG_DEVICE_CONFIG), "/etc/softdpu/devices.conf");
}

static void test_parsers(void)
{
	static const struct {
		const char *text;
		uint64_t value;
	} good_uint[] = {
		{"0", 0},     {"42", 42}, {" 7 ", 7},
		{"0x10", 16}, {"010", 8}, {"18446744073709551615", UINT64_MAX},
	};
	static const char *const bad_uint[] = {
		"", " ", "-1", "+3", "12abc", "abc", "0x", "18446744073709551616", "1 2"};
	static const char *const yes[] = {"1", "y", "YES", "true", " On "};
	static const char *const no[] = {"0", "n", "No", "FALSE", "off"};
	static const char *const bad_bool[] = {"", "2", "maybe", "yess", "truetrue"};
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(good_uint) / sizeof(good_uint[0]); i++) {
		v = 12345;
		T_OK(sdp_config_parse_uint(good_uint[i].text, &v));
		if (v != good_uint[i].value)
			t_fail("uint \"%s\": expected %" PRIu64 ", got %" PRIu64, good_uint[i].text,
			       good_uint[i].value, v);
	}
	for (i = 0; i < sizeof(bad_uint) / sizeof(bad_uint[0]); i++) {
		v = 12345;
		if (sdp_config_parse_uint(bad_uint[i], &v) != DOCA_ERROR_INVALID_VALUE ||
		    v != 12345)
			t_fail("uint \"%s\": expected INVALID_VALUE and no output, got %" PRIu64,
			       bad_uint[i], v);
	}
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		v = 7;
		T_OK(sdp_config_parse_bool(yes[i], &v));
		T_EQ_INT(v, 1);
		T_OK(sdp_config_parse_bool(no[i], &v));
		T_EQ_INT(v, 0);
	}
	for (i = 0; i < sizeof(bad_bool) / sizeof(bad_bool[0]); i++) {
		v = 7;
		if (sdp_config_parse_bool(bad_bool[i], &v) != DOCA_ERROR_INVALID_VALUE || v != 7)
			t_fail("bool \"%s\": expected INVALID_VALUE and no output", bad_bool[i]);
	}
	T_STATUS(sdp_config_parse_uint(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_config_parse_uint("1", NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_config_parse_bool(NULL, &v), DOCA_ERROR_INVALID_VALUE);
}

static void test_get_uint(void)
{
	uint64_t v = 99;

	unsetenv("DOCA_LOG_LEVEL");
	T_STATUS(sdp_config_get_uint(SDP_CFG_DOCA_LOG_LEVEL, &v), DOCA_ERROR_NOT_FOUND);
	T_EQ_INT(v, 99);
	setenv("DOCA_LOG_LEVEL", "Debug", 1);
	T_OK(sdp_config_get_uint(SDP_CFG_DOCA_LOG_LEVEL, &v));
	T_EQ_INT(v, DOCA_LOG_LEVEL_DEBUG);
	setenv("DOCA_LOG_LEVEL", "20", 1);
	T_OK(sdp_config_get_uint(SDP_CFG_DOCA_LOG_LEVEL, &v));
	T_EQ_INT(v, DOCA_LOG_LEVEL_CRIT);

	/* A bad value: reported once, naming the variable, the value and the expected form. */
	capture_reset();
	setenv("DOCA_LOG_LEVEL", "loud", 1);
	v = 99;
	T_STATUS(sdp_config_get_uint(SDP_CFG_DOCA_LOG_LEVEL, &v), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_config_get_uint(SDP_CFG_DOCA_LOG_LEVEL, &v), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_config_check(SDP_CFG_DOCA_LOG_LEVEL), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(v, 99);
	T_EQ_INT(records, 1);
	T_HAS("[WARN][softdpu::config]");
	T_HAS("DOCA_LOG_LEVEL='loud' is not valid");
	T_HAS("expected a log level: 10, 20, ..., 70 or disable, crit, error, warning (warn), info, "
	      "debug, trace");
	/* Another bad value is reported again. */
	setenv("DOCA_LOG_LEVEL", "45", 1);
	T_STATUS(sdp_config_get_uint(SDP_CFG_DOCA_LOG_LEVEL, &v), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(records, 2);
	T_HAS("DOCA_LOG_LEVEL='45'");
	unsetenv("DOCA_LOG_LEVEL");
	T_OK(sdp_config_check(SDP_CFG_DOCA_LOG_LEVEL));

	/* Wrong kind of entry or bad arguments. */
	capture_reset();
	T_STATUS(sdp_config_get_uint(SDP_CFG_PROVIDER_PATH, &v), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_config_get_uint(SDP_CFG_DEVICE_CONFIG, &v), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_config_get_uint(SDP_CFG_DOCA_LOG_LEVEL, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_config_get_uint(SDP_CFG_COUNT, &v), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(records, 4);
	T_HAS("SOFTDPU_PROVIDER_PATH is a colon-separated list of directories, not a number");
	T_EQ_INT(v, 99);
}

static void check_list(enum sdp_config_id id, const char *value, size_t want_count,
		       const char *const *want, int line)
{
	char **items = (char **)&items;
	size_t count = 777, i;
	doca_error_t status;

	if (value)
		setenv(sdp_config_name(id), value, 1);
	else
		unsetenv(sdp_config_name(id));
	status = sdp_config_get_list(id, &items, &count);
	if (status != DOCA_SUCCESS) {
		t_fail("line %d: %s='%s': expected success, got %s", line, sdp_config_name(id),
		       value ? value : "(unset)", doca_error_get_name(status));
		return;
	}
	if (count != want_count)
		t_fail("line %d: %s='%s': expected %zu elements, got %zu", line,
		       sdp_config_name(id), value ? value : "(unset)", want_count, count);
	for (i = 0; i < count && i < want_count; i++)
		if (strcmp(items[i], want[i]) != 0)
			t_fail("line %d: element %zu: expected \"%s\", got \"%s\"", line, i,
			       want[i], items[i]);
	if (items[count] != NULL)
		t_fail("line %d: list not NULL-terminated", line);
	sdp_config_free_list(items);
	unsetenv(sdp_config_name(id));
}

#define CHECK_LIST(id, value, ...)                                                                 \
	do {                                                                                       \
		static const char *const want_[] = {__VA_ARGS__};                                  \
		check_list(id, value, sizeof(want_) / sizeof(want_[0]) - 1, want_, __LINE__);      \
	} while (0)

static void test_lists(void)
{
	char *big;
	char **items = (char **)&items;
	size_t count = 777;

	CHECK_LIST(SDP_CFG_HOST_DEV_ALIASES, NULL, "mlx5_0", NULL);
	CHECK_LIST(SDP_CFG_HOST_DEV_ALIASES, "mlx5_0, mlx5_1 ,,mlx5_2", "mlx5_0", "mlx5_1",
		   "mlx5_2", NULL);
	CHECK_LIST(SDP_CFG_HOST_DEV_ALIASES, "", NULL);
	CHECK_LIST(SDP_CFG_PROVIDER_PATH, NULL, NULL);
	CHECK_LIST(SDP_CFG_PROVIDER_PATH, "/a/b::/c d/e: /f ", "/a/b", "/c d/e", "/f", NULL);
	CHECK_LIST(SDP_CFG_PROVIDER_PATH, ":::", NULL);
	CHECK_LIST(SDP_CFG_DEVICES, "host:alias=mlx5_1; loop:name=lo0,mtu=9000;",
		   "host:alias=mlx5_1", "loop:name=lo0,mtu=9000", NULL);

	/* Not a list, bad arguments, an element too long: refused, outputs untouched. */
	capture_reset();
	T_STATUS(sdp_config_get_list(SDP_CFG_DEVICE_CONFIG, &items, &count),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_config_get_list(SDP_CFG_DOCA_LOG_LEVEL, &items, &count),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_config_get_list(SDP_CFG_DEVICES, NULL, &count), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_config_get_list(SDP_CFG_DEVICES, &items, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_config_get_list(SDP_CFG_COUNT, &items, &count), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(records, 5);
	big = malloc(8192);
	if (big == NULL)
		return;
	memset(big, 'p', 8191);
	big[0] = '/';
	big[8191] = '\0';
	setenv("SOFTDPU_PROVIDER_PATH", big, 1);
	T_STATUS(sdp_config_get_list(SDP_CFG_PROVIDER_PATH, &items, &count),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_config_check(SDP_CFG_PROVIDER_PATH), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(records, 6); /* the same bad value is reported once */
	T_HAS("SOFTDPU_PROVIDER_PATH='/ppp");
	T_HAS("an element is too long");
	T_TRUE(items == (char **)&items && count == 777);
	unsetenv("SOFTDPU_PROVIDER_PATH");
	free(big);
	T_OK(sdp_config_check(SDP_CFG_PROVIDER_PATH));
	T_OK(sdp_config_check(SDP_CFG_DEVICE_CONFIG));
	T_STATUS(sdp_config_check(SDP_CFG_COUNT), DOCA_ERROR_INVALID_VALUE);
	sdp_config_free_list(NULL);
}

static void test_print(void)
{
	char out[16384];
	FILE *f = tmpfile();
	size_t len;
	int i;

	if (f == NULL) {
		t_fail("tmpfile: %s", strerror(errno));
		return;
	}
	unset_all();
	setenv("SOFTDPU_DEVICES", "host:alias=mlx5_9", 1);
	sdp_config_print(f);
	sdp_config_print(NULL); /* ignored */
	rewind(f);
	len = fread(out, 1, sizeof(out) - 1, f);
	out[len] = '\0';
	fclose(f);
	unsetenv("SOFTDPU_DEVICES");

	for (i = 0; i < SDP_CFG_COUNT; i++)
		T_TRUE(strstr(out, sdp_config_name((enum sdp_config_id)i)) != NULL);
	T_TRUE(strstr(out, "SOFTDPU_DEVICES=host:alias=mlx5_9\n") != NULL);
	T_TRUE(strstr(out, "# SOFTDPU_DEVICE_CONFIG is not set\n") != NULL);
	T_TRUE(strstr(out, "default: '/etc/softdpu/devices.conf'") != NULL);
	T_TRUE(strstr(out, "# expects a colon-separated list of directories; default: (empty)") !=
	       NULL);
	T_TRUE(strstr(out, "extra ibdev names under which the host device softdpu0") != NULL);
}

static void test_unknown(void)
{
	unsigned int n;

	T_EQ_STR(sdp_config_suggest("SOFTDPU_PROVIDR_PATH"), "SOFTDPU_PROVIDER_PATH");
	T_EQ_STR(sdp_config_suggest("SOFTDPU_DEVICE"), "SOFTDPU_DEVICES");
	T_EQ_STR(sdp_config_suggest("SOFTDPU_HOST_DEV_ALIAS"), "SOFTDPU_HOST_DEV_ALIASES");
	T_TRUE(sdp_config_suggest("SOFTDPU_TOTALLY_DIFFERENT_THING") == NULL);
	T_TRUE(sdp_config_suggest("X") == NULL);
	T_TRUE(sdp_config_suggest(NULL) == NULL);

	unset_all();
	capture_reset();
	setenv("SOFTDPU_PROVIDR_PATH", "/x", 1);
	setenv("SOFTDPU_QQQQQQQQQQQQQQQQQQQQ", "1", 1);
	setenv("SOFTDPUX", "1", 1); /* not the SOFTDPU_ prefix: not ours */
	n = sdp_config_report_unknown();
	T_TRUE(n >= 2);
	T_HAS("[WARN][softdpu::config]");
	T_HAS("unknown environment variable SOFTDPU_PROVIDR_PATH: did you mean "
	      "SOFTDPU_PROVIDER_PATH?");
	T_HAS("unknown environment variable SOFTDPU_QQQQQQQQQQQQQQQQQQQQ (softdpu-selftest --vars");
	T_EQ_INT(count_of(captured, "SOFTDPUX"), 0);
	/* Known names are never reported. */
	setenv("SOFTDPU_DEVICES", "", 1);
	capture_reset();
	T_EQ_INT(sdp_config_report_unknown(), n);
	T_EQ_INT(count_of(captured, "SOFTDPU_DEVICES"), 0);
	unsetenv("SOFTDPU_PROVIDR_PATH");
	unsetenv("SOFTDPU_QQQQQQQQQQQQQQQQQQQQ");
	unsetenv("SOFTDPUX");
	unsetenv("SOFTDPU_DEVICES");
	/* The constructor's check already ran: calling it again reports nothing. */
	setenv("SOFTDPU_PROVIDR_PATH", "/x", 1);
	capture_reset();
	sdp_config_check_unknown();
	T_EQ_INT(records, 0);
	unsetenv("SOFTDPU_PROVIDR_PATH");
}

/* End to end: the library constructor warns once on stderr, before main(). */
static void test_unknown_at_load(void)
{
	char out[8192];
	struct pollfd pfd;
	size_t len = 0;
	int pipefd[2], status = -1, rc;
	ssize_t n;
	pid_t pid;
	time_t deadline = time(NULL) + 20;

	if (pipe(pipefd) != 0) {
		t_fail("pipe: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid < 0) {
		t_fail("fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		dup2(pipefd[1], STDERR_FILENO);
		close(pipefd[0]);
		close(pipefd[1]);
		setenv("SOFTDPU_PROVIDR_PATH", "/x", 1);
		execl("/proc/self/exe", "test_config", "child-recheck", (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	pfd.fd = pipefd[0];
	pfd.events = POLLIN;
	out[0] = '\0';
	while (time(NULL) <= deadline) {
		rc = poll(&pfd, 1, 1000);
		if (rc < 0 && errno != EINTR)
			break;
		if (rc <= 0)
			continue;
		n = read(pipefd[0], out + len, sizeof(out) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		out[len] = '\0';
	}
	if (time(NULL) > deadline)
		kill(pid, SIGKILL);
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	T_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	T_EQ_INT(count_of(out, "unknown environment variable SOFTDPU_PROVIDR_PATH: did you mean "
			       "SOFTDPU_PROVIDER_PATH?"),
		 1);
	T_EQ_INT(count_of(out, "[WARN][softdpu::config]"), 1);
	if (t_failures)
		fprintf(stderr, "child output:\n%s\n", out);
}

/* docs/environment.md has one table row per variable, with the table's default. */
static void test_docs_in_sync(void)
{
	char path[4096], line[2048], want[512];
	FILE *f;
	int i, found;
	const char *dflt;

	snprintf(path, sizeof(path), "%s/docs/environment.md", SDP_SOURCE_ROOT);
	f = fopen(path, "r");
	if (f == NULL) {
		t_fail("cannot open %s: %s", path, strerror(errno));
		return;
	}
	for (i = 0; i < SDP_CFG_COUNT; i++) {
		dflt = sdp_config_default((enum sdp_config_id)i);
		snprintf(want, sizeof(want), "| `%s` | %s%s%s |",
			 sdp_config_name((enum sdp_config_id)i), dflt[0] ? "`" : "(empty)", dflt,
			 dflt[0] ? "`" : "");
		found = 0;
		rewind(f);
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, want, strlen(want)) == 0)
				found = 1;
		if (!found)
			t_fail("docs/environment.md: expected a row starting \"%s\"", want);
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	struct doca_log_backend *sdk;

	if (argc > 1 && strcmp(argv[1], "child-recheck") == 0) {
		/* Already reported by the constructor: the explicit call adds nothing. */
		sdp_config_check_unknown();
		return 0;
	}

	T_OK(doca_log_backend_create_with_buf_sdk(sdk_buf, sizeof(sdk_buf), sdk_flush, &sdk));
	T_OK(doca_log_backend_set_sdk_level(sdk, DOCA_LOG_LEVEL_WARNING));

	test_names_and_defaults();
	test_override();
	test_parsers();
	test_get_uint();
	test_lists();
	test_print();
	test_unknown();
	test_unknown_at_load();
	test_docs_in_sync();
	T_DONE();
}
