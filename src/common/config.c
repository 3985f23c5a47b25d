/*
 * softdpu: the configuration registry. Every environment variable softdpu reads is one row of
 * sdp_config_table below; docs/environment.md lists the same rows for users (test_config checks
 * that the two agree).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sdp_config.h"
#include "sdp_log.h"
#include "sdp_urom_defaults.h"

SDP_LOG_COMPONENT("config");

extern char **environ;

/* How a value is read. A list splits on sep; the scalar kinds parse into a number. */
struct sdp_config_parser {
	const char *expected; /* what a valid value looks like, for messages and the listing */
	doca_error_t (*parse)(const char *value, uint64_t *out); /* scalar kinds only */
	char sep;						 /* list kinds only */
};

struct config_entry {
	const char *name;
	const char *dflt;
	const struct sdp_config_parser *parser;
	const char *help;
};

doca_error_t sdp_config_parse_uint(const char *value, uint64_t *out)
{
	unsigned long long num;
	char *end;

	if (value == NULL || out == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	while (isspace((unsigned char)*value))
		value++;
	if (!isdigit((unsigned char)*value))
		return DOCA_ERROR_INVALID_VALUE;
	errno = 0;
	num = strtoull(value, &end, 0);
	if (errno != 0)
		return DOCA_ERROR_INVALID_VALUE;
	while (isspace((unsigned char)*end))
		end++;
	if (*end != '\0')
		return DOCA_ERROR_INVALID_VALUE;
	*out = num;
	return DOCA_SUCCESS;
}

doca_error_t sdp_config_parse_bool(const char *value, uint64_t *out)
{
	static const char *const yes[] = {"1", "y", "yes", "true", "on"};
	static const char *const no[] = {"0", "n", "no", "false", "off"};
	char word[8];
	size_t len, i;

	if (value == NULL || out == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	while (isspace((unsigned char)*value))
		value++;
	len = strlen(value);
	while (len > 0 && isspace((unsigned char)value[len - 1]))
		len--;
	if (len >= sizeof(word))
		return DOCA_ERROR_INVALID_VALUE;
	memcpy(word, value, len);
	word[len] = '\0';
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(word, yes[i]) == 0) {
			*out = 1;
			return DOCA_SUCCESS;
		}
		if (strcasecmp(word, no[i]) == 0) {
			*out = 0;
			return DOCA_SUCCESS;
		}
	}
	return DOCA_ERROR_INVALID_VALUE;
}

static doca_error_t parse_log_level(const char *value, uint64_t *out)
{
	uint32_t level;
	doca_error_t status;

	status = sdp_log_parse_level(value, &level);
	if (status == DOCA_SUCCESS)
		*out = level;
	return status;
}

/* The parsers a table row can name (uint and bool have no row yet; later issues add some). */
static const struct sdp_config_parser sdp_cfg_string = {"any text", NULL, 0};
static const struct sdp_config_parser sdp_cfg_uint = {
	"an unsigned integer (decimal, 0x hexadecimal or 0 octal)", sdp_config_parse_uint, 0};
static const struct sdp_config_parser sdp_cfg_bool = {
	"a boolean: 1/0, y/n, yes/no, true/false, on/off", sdp_config_parse_bool, 0};
static const struct sdp_config_parser sdp_cfg_log_level = {
	"a log level: 10, 20, ..., 70 or disable, crit, error, warning (warn), info, debug, trace",
	parse_log_level, 0};
static const struct sdp_config_parser sdp_cfg_path_list = {"a colon-separated list of directories",
							   NULL, ':'};
static const struct sdp_config_parser sdp_cfg_semicolon_list = {"a semicolon-separated list", NULL,
								';'};
static const struct sdp_config_parser sdp_cfg_comma_list = {"a comma-separated list of names", NULL,
							    ','};

#define SDP_CFG_ROW(id, name, dflt, parser, help) [id] = {name, dflt, &parser, help}

/* The table: one row per variable (keep docs/environment.md in step). */
static const struct config_entry sdp_config_table[] = {
	SDP_CFG_ROW(SDP_CFG_DOCA_LOG_LEVEL, "DOCA_LOG_LEVEL", "", sdp_cfg_log_level,
		    "softdpu extension: level of application and SDK logging set at library load "
		    "(empty: DOCA's defaults, INFO for backends the program creates)"),
	SDP_CFG_ROW(SDP_CFG_PROVIDER_PATH, "SOFTDPU_PROVIDER_PATH", "", sdp_cfg_path_list,
		    "directories searched for device provider modules (empty: the installed "
		    "provider directory, or the build tree when run from it)"),
	SDP_CFG_ROW(SDP_CFG_DEVICES, "SOFTDPU_DEVICES", "", sdp_cfg_semicolon_list,
		    "device declarations <provider>:<key>=<value>,... separated by ';', e.g. "
		    "host:alias=mlx5_1"),
	SDP_CFG_ROW(SDP_CFG_DEVICE_CONFIG, "SOFTDPU_DEVICE_CONFIG", "/etc/softdpu/devices.conf",
		    sdp_cfg_string, "path of the device declaration file"),
	SDP_CFG_ROW(SDP_CFG_HOST_DEV_ALIASES, "SOFTDPU_HOST_DEV_ALIASES", "mlx5_0",
		    sdp_cfg_comma_list,
		    "extra ibdev names under which the host device softdpu0 is also listed"),
	SDP_CFG_ROW(SDP_CFG_UROM_PLUGIN_PATH, "UROM_PLUGIN_PATH", "", sdp_cfg_semicolon_list,
		    "directories softdpu-uromd scans for UROM worker plugins, separated by ';' "
		    "(empty: its --plugin-dir, default <libdir>/softdpu/plugins)"),
	SDP_CFG_ROW(SDP_CFG_UROM_SERVICE_FILE, "DOCA_UROM_SERVICE_FILE", "", sdp_cfg_string,
		    "UROM service file: lines <app_hostname> dpu <dev_hostname> <dev_pci_addr> "
		    "<net,devs> (empty: use SOFTDPU_UROM_SERVICE_ADDR)"),
	SDP_CFG_ROW(SDP_CFG_UROM_SERVICE_ADDR, "SOFTDPU_UROM_SERVICE_ADDR", "", sdp_cfg_string,
		    "host:port of the UROM offload service when no service file names it "
		    "(empty: " SDP_UROM_DEFAULT_ADDR ")"),
	SDP_CFG_ROW(SDP_CFG_UROM_SECRET_FILE, "SOFTDPU_UROM_SECRET_FILE", "", sdp_cfg_string,
		    "file holding the UROM service secret (empty: $XDG_RUNTIME_DIR/softdpu/"
		    "urom.secret, else $HOME/.softdpu/urom.secret, else "
		    "/tmp/softdpu-<uid>/urom.secret)"),
	SDP_CFG_ROW(SDP_CFG_UROM_CONNECT_TIMEOUT_MS, "SOFTDPU_UROM_CONNECT_TIMEOUT_MS", "5000",
		    sdp_cfg_uint, "bound in milliseconds of a UROM service context start"),
	SDP_CFG_ROW(SDP_CFG_UROM_DOMAIN_TIMEOUT_MS, "SOFTDPU_UROM_DOMAIN_TIMEOUT_MS", "30000",
		    sdp_cfg_uint,
		    "bound in milliseconds of a UROM domain start (the OOB exchange with every "
		    "member included)"),
	SDP_CFG_ROW(SDP_CFG_UROM_RUN_DIR, "SOFTDPU_UROM_RUN_DIR", "", sdp_cfg_string,
		    "run directory of softdpu-uromd: pid file, port file, worker logs (empty: "
		    "for root /run/softdpu, else $XDG_RUNTIME_DIR/softdpu, else "
		    "/tmp/softdpu-<uid>)"),
	SDP_CFG_ROW(SDP_CFG_UROM_WORKER_BIN, "SOFTDPU_UROM_WORKER_BIN", "", sdp_cfg_string,
		    "path of the UROM worker program softdpu-uromd spawns (empty: the build "
		    "tree's, else <libexecdir>/softdpu/softdpu-urom-worker)"),
	SDP_CFG_ROW(SDP_CFG_UROM_WORKER_TIMEOUT_MS, "SOFTDPU_UROM_WORKER_TIMEOUT_MS", "3000",
		    sdp_cfg_uint,
		    "softdpu-uromd's liveness bound: a worker silent this many milliseconds is "
		    "killed and its hosts' tasks fail with IO_FAILED (0 = off; 300 .. 3600000)"),
	SDP_CFG_ROW(SDP_CFG_UROM_XRMA, "SOFTDPU_UROM_XRMA", "", sdp_cfg_string,
		    "workers: 1 (on) sends puts and gets to exported host memory as softdpu "
		    "active messages over any transport, 0 (off) never (empty: over TCP only)"),
	SDP_CFG_ROW(SDP_CFG_GPU_CC_OVERRIDE, "SOFTDPU_GPU_CC_OVERRIDE", "", sdp_cfg_string,
		    "compute capability <major>.<minor> doca_gpu_create sees instead of the "
		    "GPU's own, e.g. 7.5 to test a pre-Ampere GPU (empty: the GPU's own)"),
	SDP_CFG_ROW(SDP_CFG_OOB_ROOT, "SOFTDPU_OOB_ROOT", "", sdp_cfg_string,
		    "host:port or [v6addr]:port of rank 0's listener for sdp_urom_oob_from_env "
		    "(rank 0 binds it; port 0 lets the system choose)"),
	SDP_CFG_ROW(SDP_CFG_OOB_RANK, "SOFTDPU_OOB_RANK", "", sdp_cfg_uint,
		    "this process's rank for sdp_urom_oob_from_env, below SOFTDPU_OOB_SIZE"),
	SDP_CFG_ROW(SDP_CFG_OOB_SIZE, "SOFTDPU_OOB_SIZE", "", sdp_cfg_uint,
		    "number of ranks of the sdp_urom_oob_from_env group"),
	SDP_CFG_ROW(SDP_CFG_OOB_SECRET_FILE, "SOFTDPU_OOB_SECRET_FILE", "", sdp_cfg_string,
		    "file whose content (16 to 4096 bytes, mode 0600) is the secret the ranks of "
		    "an sdp_urom_oob_from_env group share"),
	SDP_CFG_ROW(SDP_CFG_OOB_TIMEOUT_MS, "SOFTDPU_OOB_TIMEOUT_MS", "30000", sdp_cfg_uint,
		    "bound in milliseconds on joining the sdp_urom_oob_from_env group and on each "
		    "allgather (0: the default)"),
	SDP_CFG_ROW(SDP_CFG_MPI, "SOFTDPU_MPI", "1", sdp_cfg_bool,
		    "libsoftdpu_mpi: 0 passes every MPI call through to the MPI library "
		    "(docs/mpi.md)"),
	SDP_CFG_ROW(SDP_CFG_MPI_STATS, "SOFTDPU_MPI_STATS", "0", sdp_cfg_bool,
		    "libsoftdpu_mpi: 1 prints each rank's offloaded / passed-through counts per "
		    "call at MPI_Finalize"),
	SDP_CFG_ROW(SDP_CFG_MPI_VERBOSE, "SOFTDPU_MPI_VERBOSE", "0", sdp_cfg_bool,
		    "libsoftdpu_mpi: 1 reports every rank's set-up outcome, not only rank 0's"),
	SDP_CFG_ROW(SDP_CFG_MPI_POOL_MB, "SOFTDPU_MPI_POOL_MB", "1024", sdp_cfg_uint,
		    "libsoftdpu_mpi: MiB of address space each rank reserves and exports as its "
		    "staging pool (pages exist once used); a collective of more than half of it "
		    "passes through"),
	SDP_CFG_ROW(SDP_CFG_MPI_WORKER_CPUS, "SOFTDPU_MPI_WORKER_CPUS", "", sdp_cfg_string,
		    "libsoftdpu_mpi: comma-separated CPUs; rank r's worker runs on entry r modulo "
		    "the count (empty: the service's cpuset)"),
	SDP_CFG_ROW(SDP_CFG_MPI_ZCOPY_MIN, "SOFTDPU_MPI_ZCOPY_MIN", "65536", sdp_cfg_uint,
		    "libsoftdpu_mpi: bytes from which a collective's user buffers are registered "
		    "(cached) and used in place instead of staged through the pool; 0: always "
		    "staged"),
	SDP_CFG_ROW(SDP_CFG_ETH_PROFILE, "SOFTDPU_ETH_PROFILE", "0", sdp_cfg_bool,
		    "libdoca_eth: 1 times the engine threads' work (backend, GPU copy-path driver "
		    "calls) and logs where the time went at info level when a port or GPU receive "
		    "queue stops"),
};

_Static_assert(sizeof(sdp_config_table) / sizeof(sdp_config_table[0]) == SDP_CFG_COUNT,
	       "every sdp_config_id needs a row in sdp_config_table");

/* Longest list element accepted (a path, a device declaration). */
#define SDP_CONFIG_MAX_ITEM (PATH_MAX - 1)

static const struct config_entry *config_entry(enum sdp_config_id id)
{
	if ((unsigned int)id >= SDP_CFG_COUNT)
		return NULL;
	return &sdp_config_table[id];
}

/*
 * Report a bad value once per variable and value: code that reads a variable on every call
 * does not repeat the same warning.
 */
static pthread_mutex_t sdp_config_lock = PTHREAD_MUTEX_INITIALIZER;
static char sdp_config_reported[SDP_CFG_COUNT][128];

static void config_report(enum sdp_config_id id, const char *value, const char *why)
{
	const struct config_entry *e = &sdp_config_table[id];
	int first;

	pthread_mutex_lock(&sdp_config_lock);
	first = strncmp(sdp_config_reported[id], value, sizeof(sdp_config_reported[id]) - 1) != 0 ||
		sdp_config_reported[id][0] == '\0';
	if (first)
		snprintf(sdp_config_reported[id], sizeof(sdp_config_reported[id]), "%s", value);
	pthread_mutex_unlock(&sdp_config_lock);

	if (first)
		sdp_warn("%s='%.200s%s' is not valid (%s): expected %s%s%s%s", e->name, value,
			 strlen(value) > 200 ? "..." : "", why, e->parser->expected,
			 e->dflt[0] ? "; default is '" : "", e->dflt[0] ? e->dflt : "",
			 e->dflt[0] ? "'" : "");
}

const char *sdp_config_name(enum sdp_config_id id)
{
	const struct config_entry *e = config_entry(id);

	return e ? e->name : NULL;
}

const char *sdp_config_default(enum sdp_config_id id)
{
	const struct config_entry *e = config_entry(id);

	return e ? e->dflt : NULL;
}

const char *sdp_config_get_string(enum sdp_config_id id)
{
	const struct config_entry *e = config_entry(id);
	const char *value;

	if (e == NULL)
		return NULL;
	value = getenv(e->name);
	return value ? value : e->dflt;
}

static int is_blank(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return *s == '\0';
}

doca_error_t sdp_config_get_uint(enum sdp_config_id id, uint64_t *value_p)
{
	const struct config_entry *e = config_entry(id);
	const char *value;
	uint64_t num;

	if (e == NULL || value_p == NULL) {
		sdp_error("bad arguments: config id %d, value pointer %p", (int)id,
			  (void *)value_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (e->parser->parse == NULL) {
		sdp_error("%s is %s, not a number", e->name, e->parser->expected);
		return DOCA_ERROR_INVALID_VALUE;
	}
	value = sdp_config_get_string(id);
	if (is_blank(value))
		return DOCA_ERROR_NOT_FOUND;
	if (e->parser->parse(value, &num) != DOCA_SUCCESS) {
		config_report(id, value, "cannot parse it");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*value_p = num;
	return DOCA_SUCCESS;
}

void sdp_config_free_list(char **items)
{
	size_t i;

	if (items == NULL)
		return;
	for (i = 0; items[i] != NULL; i++)
		free(items[i]);
	free(items);
}

/* Split value on sep into trimmed, non-empty elements. */
static doca_error_t config_split(enum sdp_config_id id, const char *value, char sep,
				 char ***items_p, size_t *count_p)
{
	char **items = NULL, **grown;
	size_t count = 0, len;
	const char *start, *end, *next;
	doca_error_t status;

	items = calloc(1, sizeof(*items));
	if (items == NULL)
		goto err_nomem;

	for (start = value; start != NULL; start = next) {
		end = strchr(start, sep);
		next = end ? end + 1 : NULL;
		if (end == NULL)
			end = start + strlen(start);
		while (start < end && isspace((unsigned char)*start))
			start++;
		while (end > start && isspace((unsigned char)end[-1]))
			end--;
		len = (size_t)(end - start);
		if (len == 0)
			continue;
		if (len > SDP_CONFIG_MAX_ITEM) {
			config_report(id, value, "an element is too long");
			status = DOCA_ERROR_INVALID_VALUE;
			goto err_free;
		}
		grown = realloc(items, (count + 2) * sizeof(*items));
		if (grown == NULL)
			goto err_nomem;
		items = grown;
		items[count] = strndup(start, len);
		if (items[count] == NULL)
			goto err_nomem;
		items[++count] = NULL;
	}

	*items_p = items;
	*count_p = count;
	return DOCA_SUCCESS;

err_nomem:
	sdp_error("out of memory splitting %s", sdp_config_table[id].name);
	status = DOCA_ERROR_NO_MEMORY;
err_free:
	sdp_config_free_list(items);
	return status;
}

doca_error_t sdp_config_get_list(enum sdp_config_id id, char ***items_p, size_t *count_p)
{
	const struct config_entry *e = config_entry(id);

	if (e == NULL || items_p == NULL || count_p == NULL) {
		sdp_error("bad arguments: config id %d, items %p, count %p", (int)id,
			  (void *)items_p, (void *)count_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (e->parser->sep == '\0') {
		sdp_error("%s is %s, not a list", e->name, e->parser->expected);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return config_split(id, sdp_config_get_string(id), e->parser->sep, items_p, count_p);
}

doca_error_t sdp_config_check(enum sdp_config_id id)
{
	const struct config_entry *e = config_entry(id);
	uint64_t num;
	char **items;
	size_t count;
	doca_error_t status;

	if (e == NULL) {
		sdp_error("bad config id %d", (int)id);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (e->parser->parse != NULL) {
		status = sdp_config_get_uint(id, &num);
		return status == DOCA_ERROR_NOT_FOUND ? DOCA_SUCCESS : status;
	}
	if (e->parser->sep != '\0') {
		status = sdp_config_get_list(id, &items, &count);
		if (status == DOCA_SUCCESS)
			sdp_config_free_list(items);
		return status;
	}
	return DOCA_SUCCESS;
}

void sdp_config_print(FILE *stream)
{
	const struct config_entry *e;
	const char *value;
	size_t i;

	if (stream == NULL)
		return;
	for (i = 0; i < SDP_CFG_COUNT; i++) {
		e = &sdp_config_table[i];
		value = getenv(e->name);
		fprintf(stream, "# %s\n# expects %s; default: %s%s%s\n", e->help,
			e->parser->expected, e->dflt[0] ? "'" : "(empty)", e->dflt,
			e->dflt[0] ? "'" : "");
		if (value != NULL)
			fprintf(stream, "%s=%s\n\n", e->name, value);
		else
			fprintf(stream, "# %s is not set\n\n", e->name);
	}
}

/* Levenshtein distance of a and b (both at most 127 characters are compared). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t row[128];
	size_t la = strnlen(a, 127), lb = strnlen(b, 127);
	size_t i, j, diag, up, cost, best;

	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		diag = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			up = row[j];
			cost = a[i - 1] == b[j - 1] ? 0 : 1;
			best = diag + cost;
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *sdp_config_suggest(const char *name)
{
	const char *best = NULL;
	size_t best_dist = (size_t)-1, dist, limit, i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < SDP_CFG_COUNT; i++) {
		dist = edit_distance(name, sdp_config_table[i].name);
		if (dist < best_dist) {
			best_dist = dist;
			best = sdp_config_table[i].name;
		}
	}
	/* Close enough to be a typo: a few edits, relative to the name's length. */
	limit = strlen(name) / 3;
	if (limit < 2)
		limit = 2;
	return best_dist <= limit ? best : NULL;
}

static int config_is_known(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < SDP_CFG_COUNT; i++)
		if (strlen(sdp_config_table[i].name) == len &&
		    strncmp(sdp_config_table[i].name, name, len) == 0)
			return 1;
	return 0;
}

unsigned int sdp_config_report_unknown(void)
{
	static const char prefix[] = "SOFTDPU_";
	char name[128];
	const char *eq, *hint;
	unsigned int unknown = 0;
	size_t len;
	char **env;

	for (env = environ; env != NULL && *env != NULL; env++) {
		if (strncmp(*env, prefix, sizeof(prefix) - 1) != 0)
			continue;
		eq = strchr(*env, '=');
		len = eq ? (size_t)(eq - *env) : strlen(*env);
		if (config_is_known(*env, len))
			continue;
		unknown++;
		snprintf(name, sizeof(name), "%.*s", (int)len, *env);
		hint = sdp_config_suggest(name);
		if (hint != NULL)
			sdp_warn("unknown environment variable %s: did you mean %s?", name, hint);
		else
			sdp_warn("unknown environment variable %s (softdpu-selftest --vars lists "
				 "the valid ones)",
				 name);
	}
	return unknown;
}

static void config_report_unknown_once(void)
{
	sdp_config_report_unknown();
}

void sdp_config_check_unknown(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, config_report_unknown_once);
}
