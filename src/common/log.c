/*
 * softdpu: DOCA logging. Application and SDK backends, global limits, registered sources, the
 * stderr fallbacks used until the program creates backends, and DOCA_LOG_LEVEL.
 *
 * One mutex guards every table and every write, so records never interleave. Backends live in
 * fixed arrays (DOCA has no call that destroys one), so a backend handle stays valid for the
 * life of the process and nothing is allocated per backend. The cheap "would anything print
 * this" checks read cached thresholds without the lock.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "doca_log.h"
#include "sdp_config.h"
#include "sdp_log.h"

SDP_LOG_COMPONENT("log");

#define SDP_LOG_MAX_APP_BACKENDS 32
#define SDP_LOG_MAX_SDK_BACKENDS 32
#define SDP_LOG_SYSLOG_NAME_SIZE 64
/* Records up to this size are formatted on the stack; longer ones are allocated. */
#define SDP_LOG_STACK_RECORD 1024

enum sdp_log_sink {
	SDP_LOG_SINK_FILE,
	SDP_LOG_SINK_FD,
	SDP_LOG_SINK_BUF,
	SDP_LOG_SINK_SYSLOG,
};

struct doca_log_backend {
	int sdk; /* receives SDK messages (else application messages) */
	enum sdp_log_sink sink;
	FILE *file;
	int fd;
	char *buf;
	size_t capacity;
	log_flush_callback flush;
	char syslog_name[SDP_LOG_SYSLOG_NAME_SIZE];
	/* Application backends: print levels in [upper, lower] (numerically). */
	uint32_t lower;
	uint32_t upper;
	int lower_strict; /* lower may never exceed lower_bound */
	int upper_strict; /* upper may never drop below upper_bound */
	uint32_t lower_bound;
	uint32_t upper_bound;
	/* SDK backends: print levels <= sdk_level. */
	uint32_t sdk_level;
};

struct sdp_log_source {
	char *name;
	unsigned int refs;
};

static pthread_mutex_t sdp_log_lock = PTHREAD_MUTEX_INITIALIZER;

static struct doca_log_backend sdp_app_backends[SDP_LOG_MAX_APP_BACKENDS];
static struct doca_log_backend sdp_sdk_backends[SDP_LOG_MAX_SDK_BACKENDS];
static uint32_t sdp_num_app_backends;
static uint32_t sdp_num_sdk_backends;
static int sdp_standard_created;

static uint32_t sdp_global_lower = DOCA_LOG_LEVEL_INFO;
static uint32_t sdp_global_upper = DOCA_LOG_LEVEL_CRIT;
static uint32_t sdp_global_sdk = DOCA_LOG_LEVEL_INFO;
/* The most verbose level the stderr fallbacks show (DOCA_LOG_LEVEL raises it). */
static uint32_t sdp_fallback_cap = DOCA_LOG_LEVEL_WARNING;

/*
 * The most verbose level any destination of each stream accepts, and for application messages
 * the most severe one; read without the lock by the quick checks.
 */
static uint32_t sdp_app_max = DOCA_LOG_LEVEL_WARNING;
static uint32_t sdp_app_min = DOCA_LOG_LEVEL_CRIT;
static uint32_t sdp_sdk_max = DOCA_LOG_LEVEL_WARNING;

/* Source ids are index + 1, so a log_source left 0 by a failed registration is invalid. */
static struct sdp_log_source *sdp_sources;
static int sdp_num_sources;
static int sdp_sources_capacity;

static char sdp_syslog_ident[SDP_LOG_SYSLOG_NAME_SIZE];

/* Set while this thread writes records: a flush handler that logs is not re-entered. */
static __thread int sdp_log_busy;

static const struct {
	uint32_t level;
	const char *name;  /* as printed in records */
	const char *parse; /* as accepted by sdp_log_parse_level */
} sdp_level_names[] = {
	{DOCA_LOG_LEVEL_DISABLE, "DISABLE", "disable"}, {DOCA_LOG_LEVEL_CRIT, "CRIT", "crit"},
	{DOCA_LOG_LEVEL_ERROR, "ERR", "error"},		{DOCA_LOG_LEVEL_WARNING, "WARN", "warning"},
	{DOCA_LOG_LEVEL_WARNING, "WARN", "warn"},	{DOCA_LOG_LEVEL_INFO, "INFO", "info"},
	{DOCA_LOG_LEVEL_DEBUG, "DBG", "debug"},		{DOCA_LOG_LEVEL_TRACE, "TRC", "trace"},
};

#define SDP_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * A flush handler runs with the lock held; the logging API it calls must not wait for that
 * lock. Such calls are refused with DOCA_ERROR_BAD_STATE (nothing can be logged about it from
 * there either).
 */
static int log_in_handler(void)
{
	return sdp_log_busy;
}

static int level_is_valid(uint32_t level)
{
	return level >= DOCA_LOG_LEVEL_DISABLE && level <= DOCA_LOG_LEVEL_TRACE && level % 10 == 0;
}

/* A level a message may carry: CRIT .. TRACE. */
static int msg_level_is_valid(uint32_t level)
{
	return level_is_valid(level) && level != DOCA_LOG_LEVEL_DISABLE;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

const char *sdp_log_level_name(uint32_t level)
{
	size_t i;

	for (i = 0; i < SDP_ARRAY_SIZE(sdp_level_names); i++)
		if (sdp_level_names[i].level == level)
			return sdp_level_names[i].name;
	return "?";
}

doca_error_t sdp_log_parse_level(const char *str, uint32_t *level_p)
{
	char word[16];
	size_t len, i;
	char *end;
	unsigned long num;

	if (str == NULL || level_p == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	while (isspace((unsigned char)*str))
		str++;
	len = strlen(str);
	while (len > 0 && isspace((unsigned char)str[len - 1]))
		len--;
	if (len == 0 || len >= sizeof(word))
		return DOCA_ERROR_INVALID_VALUE;
	memcpy(word, str, len);
	word[len] = '\0';

	if (isdigit((unsigned char)word[0])) {
		errno = 0;
		num = strtoul(word, &end, 10);
		if (errno != 0 || *end != '\0' || num > UINT32_MAX ||
		    !level_is_valid((uint32_t)num))
			return DOCA_ERROR_INVALID_VALUE;
		*level_p = (uint32_t)num;
		return DOCA_SUCCESS;
	}
	for (i = 0; i < SDP_ARRAY_SIZE(sdp_level_names); i++) {
		if (strcasecmp(word, sdp_level_names[i].parse) == 0) {
			*level_p = sdp_level_names[i].level;
			return DOCA_SUCCESS;
		}
	}
	return DOCA_ERROR_INVALID_VALUE;
}

/* Recompute the cached thresholds. Called with the lock held after any change. */
static void log_update_thresholds(void)
{
	uint32_t app_max = 0, app_min = DOCA_LOG_LEVEL_TRACE + 1, sdk_max = 0;
	uint32_t i;
	struct doca_log_backend *be;

	if (sdp_num_app_backends == 0) {
		app_max = min_u32(sdp_fallback_cap, sdp_global_lower);
		app_min = sdp_global_upper;
	}
	for (i = 0; i < sdp_num_app_backends; i++) {
		be = &sdp_app_backends[i];
		if (be->upper > be->lower)
			continue;
		app_max = max_u32(app_max, be->lower);
		app_min = min_u32(app_min, be->upper);
	}
	if (sdp_num_sdk_backends == 0)
		sdk_max = min_u32(sdp_fallback_cap, sdp_global_sdk);
	for (i = 0; i < sdp_num_sdk_backends; i++)
		sdk_max = max_u32(sdk_max, sdp_sdk_backends[i].sdk_level);

	__atomic_store_n(&sdp_app_max, app_max, __ATOMIC_RELAXED);
	__atomic_store_n(&sdp_app_min, app_min, __ATOMIC_RELAXED);
	__atomic_store_n(&sdp_sdk_max, sdk_max, __ATOMIC_RELAXED);
}

static int log_app_enabled(uint32_t level)
{
	return level <= __atomic_load_n(&sdp_app_max, __ATOMIC_RELAXED) &&
	       level >= __atomic_load_n(&sdp_app_min, __ATOMIC_RELAXED);
}

int sdp_log_sdk_enabled(uint32_t level)
{
	return level > DOCA_LOG_LEVEL_DISABLE &&
	       level <= __atomic_load_n(&sdp_sdk_max, __ATOMIC_RELAXED);
}

/* ---- formatting and writing ---------------------------------------------------------------- */

struct sdp_log_record {
	char stack[SDP_LOG_STACK_RECORD];
	char *text; /* stack or heap */
	size_t len; /* without the terminating NUL; ends with '\n' */
};

static const char *base_name(const char *path)
{
	const char *slash;

	if (path == NULL)
		return "?";
	slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/*
 * Format "[time][pid][LEVEL][prefix+source][file:line][func] message\n" into rec. errno is the
 * caller's value at the time of the log call, so %m names the error of the failed call even
 * though getting the time may change errno.
 */
static void log_format(struct sdp_log_record *rec, int saved_errno, uint32_t level,
		       const char *prefix, const char *source, const char *file, int line,
		       const char *func, const char *fmt, va_list ap)
{
	char head[512];
	char stamp[32];
	struct timespec now;
	struct tm tm;
	int head_len, msg_len;
	size_t total;
	va_list ap2;

	clock_gettime(CLOCK_REALTIME, &now);
	localtime_r(&now.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
	head_len = snprintf(head, sizeof(head), "[%s.%06ld][%d][%s][%s%s][%s:%d][%s] ", stamp,
			    now.tv_nsec / 1000, (int)getpid(), sdp_log_level_name(level), prefix,
			    source, base_name(file), line, func ? func : "?");
	if (head_len < 0)
		head_len = 0;
	if ((size_t)head_len >= sizeof(head))
		head_len = sizeof(head) - 1;

	va_copy(ap2, ap);
	errno = saved_errno;
	msg_len = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (msg_len < 0)
		msg_len = 0;

	total = (size_t)head_len + (size_t)msg_len + 1; /* + '\n' */
	rec->text = rec->stack;
	if (total + 1 > sizeof(rec->stack)) {
		rec->text = malloc(total + 1);
		if (rec->text == NULL) {
			/* Out of memory: keep what fits on the stack. */
			rec->text = rec->stack;
			total = sizeof(rec->stack) - 1;
		}
	}
	memcpy(rec->text, head, (size_t)head_len);
	errno = saved_errno;
	vsnprintf(rec->text + head_len, total - (size_t)head_len, fmt, ap);
	rec->text[total - 1] = '\n';
	rec->text[total] = '\0';
	rec->len = total;
}

static void log_record_release(struct sdp_log_record *rec)
{
	if (rec->text != rec->stack)
		free(rec->text);
}

/* One write of the whole record (continued after a short write or a signal). */
static void log_write_fd(int fd, const char *text, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, text, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return; /* nowhere left to report a failing log destination */
		}
		text += n;
		len -= (size_t)n;
	}
}

static int syslog_priority(uint32_t level)
{
	switch (level) {
	case DOCA_LOG_LEVEL_CRIT:
		return LOG_CRIT;
	case DOCA_LOG_LEVEL_ERROR:
		return LOG_ERR;
	case DOCA_LOG_LEVEL_WARNING:
		return LOG_WARNING;
	case DOCA_LOG_LEVEL_INFO:
		return LOG_INFO;
	default:
		return LOG_DEBUG;
	}
}

static void log_emit(struct doca_log_backend *be, uint32_t level, const struct sdp_log_record *rec)
{
	size_t n;
	int same_ident;

	switch (be->sink) {
	case SDP_LOG_SINK_FILE:
		fwrite(rec->text, 1, rec->len, be->file);
		fflush(be->file);
		break;
	case SDP_LOG_SINK_FD:
		log_write_fd(be->fd, rec->text, rec->len);
		break;
	case SDP_LOG_SINK_BUF:
		n = rec->len < be->capacity - 1 ? rec->len : be->capacity - 1;
		memcpy(be->buf, rec->text, n);
		be->buf[n] = '\0';
		be->flush(be->buf);
		break;
	case SDP_LOG_SINK_SYSLOG:
		same_ident = strcmp(be->syslog_name, sdp_syslog_ident) == 0;
		syslog(syslog_priority(level), "%s%s%.*s", same_ident ? "" : be->syslog_name,
		       same_ident ? "" : ": ", (int)(rec->len - 1), rec->text);
		break;
	}
}

static int app_backend_accepts(const struct doca_log_backend *be, uint32_t level)
{
	return level >= be->upper && level <= be->lower;
}

/* ---- SDK messages -------------------------------------------------------------------------- */

void sdp_log_sdk(uint32_t level, const char *component, const char *file, int line,
		 const char *func, const char *fmt, ...)
{
	struct sdp_log_record rec;
	int saved_errno = errno;
	va_list ap;
	uint32_t i;

	if (!msg_level_is_valid(level) || fmt == NULL || sdp_log_busy ||
	    !sdp_log_sdk_enabled(level))
		return;

	va_start(ap, fmt);
	log_format(&rec, saved_errno, level, "softdpu::", component ? component : "?", file, line,
		   func, fmt, ap);
	va_end(ap);

	pthread_mutex_lock(&sdp_log_lock);
	sdp_log_busy = 1;
	if (sdp_num_sdk_backends == 0) {
		if (level <= min_u32(sdp_fallback_cap, sdp_global_sdk))
			log_write_fd(STDERR_FILENO, rec.text, rec.len);
	}
	for (i = 0; i < sdp_num_sdk_backends; i++)
		if (level <= sdp_sdk_backends[i].sdk_level)
			log_emit(&sdp_sdk_backends[i], level, &rec);
	sdp_log_busy = 0;
	pthread_mutex_unlock(&sdp_log_lock);

	log_record_release(&rec);
	errno = saved_errno; /* logging leaves the caller's errno alone */
}

/* ---- application messages and sources ------------------------------------------------------ */

doca_error_t doca_log_register_source(const char *source_name, int *source)
{
	struct sdp_log_source *grown;
	char *name;
	size_t len, i;
	int id, capacity;

	if (log_in_handler())
		return DOCA_ERROR_BAD_STATE;
	if (source_name == NULL || source == NULL) {
		sdp_error("source name (%p) and source id pointer (%p) must not be NULL",
			  (const void *)source_name, (void *)source);
		return DOCA_ERROR_INVALID_VALUE;
	}

	/* Keep records on one line: control characters in the name print as '?'. */
	len = strnlen(source_name, DOCA_LOGGER_NAME_SIZE - 1);
	name = malloc(len + 1);
	if (name == NULL) {
		sdp_error("cannot allocate %zu bytes for log source name", len + 1);
		return DOCA_ERROR_NO_MEMORY;
	}
	for (i = 0; i < len; i++)
		name[i] = iscntrl((unsigned char)source_name[i]) ? '?' : source_name[i];
	name[len] = '\0';

	pthread_mutex_lock(&sdp_log_lock);
	for (id = 0; id < sdp_num_sources; id++) {
		if (strcmp(sdp_sources[id].name, name) == 0) {
			sdp_sources[id].refs++;
			pthread_mutex_unlock(&sdp_log_lock);
			free(name);
			*source = id + 1;
			return DOCA_SUCCESS;
		}
	}
	if (sdp_num_sources == sdp_sources_capacity) {
		capacity = sdp_sources_capacity ? sdp_sources_capacity * 2 : 16;
		grown = realloc(sdp_sources, (size_t)capacity * sizeof(*grown));
		if (grown == NULL) {
			pthread_mutex_unlock(&sdp_log_lock);
			free(name);
			sdp_error("cannot grow the log source table to %d entries", capacity);
			return DOCA_ERROR_NO_MEMORY;
		}
		sdp_sources = grown;
		sdp_sources_capacity = capacity;
	}
	id = sdp_num_sources++;
	sdp_sources[id].name = name;
	sdp_sources[id].refs = 1;
	pthread_mutex_unlock(&sdp_log_lock);

	*source = id + 1;
	return DOCA_SUCCESS;
}

doca_error_t doca_log_unregister_source(int source)
{
	doca_error_t status = DOCA_SUCCESS;

	if (log_in_handler())
		return DOCA_ERROR_BAD_STATE;
	pthread_mutex_lock(&sdp_log_lock);
	if (source < 1 || source > sdp_num_sources || sdp_sources[source - 1].refs == 0)
		status = DOCA_ERROR_INVALID_VALUE;
	else
		sdp_sources[source - 1].refs--;
	pthread_mutex_unlock(&sdp_log_lock);

	if (status != DOCA_SUCCESS)
		sdp_error("log source %d is not registered", source);
	return status;
}

doca_error_t doca_log(uint32_t level, int source, const char *fname, int line, const char *func,
		      const char *format, ...)
{
	struct sdp_log_record rec;
	char name[DOCA_LOGGER_NAME_SIZE];
	int saved_errno = errno;
	va_list ap;
	uint32_t i;
	int known;

	if (sdp_log_busy)
		return DOCA_ERROR_AGAIN; /* logged from a flush handler: dropped */
	if (!msg_level_is_valid(level)) {
		sdp_error("invalid log level %u (expected %d..%d)", level, DOCA_LOG_LEVEL_CRIT,
			  DOCA_LOG_LEVEL_TRACE);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (format == NULL) {
		sdp_error("NULL format string from source %d", source);
		return DOCA_ERROR_INVALID_VALUE;
	}

	pthread_mutex_lock(&sdp_log_lock);
	known = source >= 1 && source <= sdp_num_sources && sdp_sources[source - 1].refs > 0;
	if (known)
		memcpy(name, sdp_sources[source - 1].name,
		       strlen(sdp_sources[source - 1].name) + 1);
	pthread_mutex_unlock(&sdp_log_lock);
	if (!known) {
		sdp_error("log source %d is not registered (missing DOCA_LOG_REGISTER?)", source);
		return DOCA_ERROR_INVALID_VALUE;
	}

	if (!log_app_enabled(level))
		return DOCA_SUCCESS;

	va_start(ap, format);
	log_format(&rec, saved_errno, level, "", name, fname, line, func, format, ap);
	va_end(ap);

	pthread_mutex_lock(&sdp_log_lock);
	sdp_log_busy = 1;
	if (sdp_num_app_backends == 0) {
		if (level <= min_u32(sdp_fallback_cap, sdp_global_lower) &&
		    level >= sdp_global_upper)
			log_write_fd(STDERR_FILENO, rec.text, rec.len);
	}
	for (i = 0; i < sdp_num_app_backends; i++)
		if (app_backend_accepts(&sdp_app_backends[i], level))
			log_emit(&sdp_app_backends[i], level, &rec);
	sdp_log_busy = 0;
	pthread_mutex_unlock(&sdp_log_lock);

	log_record_release(&rec);
	errno = saved_errno;
	return DOCA_SUCCESS;
}

/* ---- backends ------------------------------------------------------------------------------ */

uint32_t doca_log_get_max_num_backends(void)
{
	return SDP_LOG_MAX_APP_BACKENDS;
}

uint32_t doca_log_get_max_num_backends_sdk(void)
{
	return SDP_LOG_MAX_SDK_BACKENDS;
}

/*
 * Take the next free backend slot of a stream and fill it from tmpl. Returns NULL (and leaves
 * the tables unchanged) when the stream has no slot left. Called with the lock held.
 */
static struct doca_log_backend *backend_add_locked(const struct doca_log_backend *tmpl)
{
	struct doca_log_backend *be;

	if (tmpl->sdk) {
		if (sdp_num_sdk_backends == SDP_LOG_MAX_SDK_BACKENDS)
			return NULL;
		be = &sdp_sdk_backends[sdp_num_sdk_backends++];
	} else {
		if (sdp_num_app_backends == SDP_LOG_MAX_APP_BACKENDS)
			return NULL;
		be = &sdp_app_backends[sdp_num_app_backends++];
	}
	*be = *tmpl;
	be->lower = sdp_global_lower;
	be->upper = sdp_global_upper;
	be->sdk_level = sdp_global_sdk;
	return be;
}

static doca_error_t backend_create(struct doca_log_backend *tmpl, struct doca_log_backend **backend)
{
	struct doca_log_backend *be;
	uint32_t max;

	if (log_in_handler())
		return DOCA_ERROR_BAD_STATE;
	pthread_mutex_lock(&sdp_log_lock);
	be = backend_add_locked(tmpl);
	if (be != NULL) {
		if (be->sink == SDP_LOG_SINK_SYSLOG && sdp_syslog_ident[0] == '\0') {
			/* syslog keeps one identity per process: the first name given. */
			memcpy(sdp_syslog_ident, be->syslog_name, sizeof(sdp_syslog_ident));
			openlog(sdp_syslog_ident, LOG_PID, LOG_USER);
		}
		log_update_thresholds();
	}
	pthread_mutex_unlock(&sdp_log_lock);

	if (be == NULL) {
		max = tmpl->sdk ? SDP_LOG_MAX_SDK_BACKENDS : SDP_LOG_MAX_APP_BACKENDS;
		sdp_error("all %u %s log backends are in use", max,
			  tmpl->sdk ? "SDK" : "application");
		return DOCA_ERROR_NO_MEMORY;
	}
	*backend = be;
	return DOCA_SUCCESS;
}

static doca_error_t create_with_file(int sdk, FILE *fptr, struct doca_log_backend **backend)
{
	struct doca_log_backend tmpl = {0};

	if (fptr == NULL || backend == NULL) {
		sdp_error("stream (%p) and backend pointer (%p) must not be NULL", (void *)fptr,
			  (void *)backend);
		return DOCA_ERROR_INVALID_VALUE;
	}
	tmpl.sdk = sdk;
	tmpl.sink = SDP_LOG_SINK_FILE;
	tmpl.file = fptr;
	tmpl.fd = -1;
	return backend_create(&tmpl, backend);
}

static doca_error_t create_with_fd(int sdk, int fd, struct doca_log_backend **backend)
{
	struct doca_log_backend tmpl = {0};

	if (backend == NULL) {
		sdp_error("backend pointer must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (fd < 0) {
		sdp_error("invalid file descriptor %d", fd);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (fcntl(fd, F_GETFL) < 0) {
		sdp_error("file descriptor %d is not usable: %m", fd);
		return DOCA_ERROR_INVALID_VALUE;
	}
	tmpl.sdk = sdk;
	tmpl.sink = SDP_LOG_SINK_FD;
	tmpl.fd = fd;
	return backend_create(&tmpl, backend);
}

static doca_error_t create_with_buf(int sdk, char *buf, size_t capacity, log_flush_callback handler,
				    struct doca_log_backend **backend)
{
	struct doca_log_backend tmpl = {0};

	if (buf == NULL || capacity == 0 || handler == NULL || backend == NULL) {
		sdp_error("invalid buffer backend arguments: buf %p, capacity %zu, flush handler "
			  "%s, backend pointer %p",
			  (void *)buf, capacity, handler ? "set" : "NULL", (void *)backend);
		return DOCA_ERROR_INVALID_VALUE;
	}
	tmpl.sdk = sdk;
	tmpl.sink = SDP_LOG_SINK_BUF;
	tmpl.fd = -1;
	tmpl.buf = buf;
	tmpl.capacity = capacity;
	tmpl.flush = handler;
	return backend_create(&tmpl, backend);
}

static doca_error_t create_with_syslog(int sdk, const char *name, struct doca_log_backend **backend)
{
	struct doca_log_backend tmpl = {0};

	if (name == NULL || backend == NULL) {
		sdp_error("syslog name (%p) and backend pointer (%p) must not be NULL",
			  (const void *)name, (void *)backend);
		return DOCA_ERROR_INVALID_VALUE;
	}
	tmpl.sdk = sdk;
	tmpl.sink = SDP_LOG_SINK_SYSLOG;
	tmpl.fd = -1;
	snprintf(tmpl.syslog_name, sizeof(tmpl.syslog_name), "%s", name);
	return backend_create(&tmpl, backend);
}

doca_error_t doca_log_backend_create_with_file(FILE *fptr, struct doca_log_backend **backend)
{
	return create_with_file(0, fptr, backend);
}

doca_error_t doca_log_backend_create_with_fd(int fd, struct doca_log_backend **backend)
{
	return create_with_fd(0, fd, backend);
}

doca_error_t doca_log_backend_create_with_buf(char *buf, size_t capacity,
					      log_flush_callback handler,
					      struct doca_log_backend **backend)
{
	return create_with_buf(0, buf, capacity, handler, backend);
}

doca_error_t doca_log_backend_create_with_syslog(const char *name,
						 struct doca_log_backend **backend)
{
	return create_with_syslog(0, name, backend);
}

doca_error_t doca_log_backend_create_with_file_sdk(FILE *fptr, struct doca_log_backend **backend)
{
	return create_with_file(1, fptr, backend);
}

doca_error_t doca_log_backend_create_with_fd_sdk(int fd, struct doca_log_backend **backend)
{
	return create_with_fd(1, fd, backend);
}

doca_error_t doca_log_backend_create_with_buf_sdk(char *buf, size_t capacity,
						  log_flush_callback handler,
						  struct doca_log_backend **backend)
{
	return create_with_buf(1, buf, capacity, handler, backend);
}

doca_error_t doca_log_backend_create_with_syslog_sdk(const char *name,
						     struct doca_log_backend **backend)
{
	return create_with_syslog(1, name, backend);
}

doca_error_t doca_log_backend_create_standard(void)
{
	struct doca_log_backend tmpl = {0};
	struct doca_log_backend *out, *err;
	doca_error_t status = DOCA_SUCCESS;

	tmpl.sink = SDP_LOG_SINK_FILE;
	tmpl.fd = -1;

	if (log_in_handler())
		return DOCA_ERROR_BAD_STATE;
	pthread_mutex_lock(&sdp_log_lock);
	if (sdp_standard_created)
		goto out_unlock; /* a second call adds nothing: no duplicated records */
	if (sdp_num_app_backends + 2 > SDP_LOG_MAX_APP_BACKENDS) {
		status = DOCA_ERROR_NO_MEMORY;
		goto out_unlock;
	}
	/* stdout: the global lower limit up to INFO, never anything more severe. */
	tmpl.file = stdout;
	out = backend_add_locked(&tmpl);
	out->upper = max_u32(out->upper, DOCA_LOG_LEVEL_INFO);
	out->upper_strict = 1;
	out->upper_bound = DOCA_LOG_LEVEL_INFO;
	/* stderr: WARNING up to the global upper limit, never anything more verbose. */
	tmpl.file = stderr;
	err = backend_add_locked(&tmpl);
	err->lower = min_u32(err->lower, DOCA_LOG_LEVEL_WARNING);
	err->lower_strict = 1;
	err->lower_bound = DOCA_LOG_LEVEL_WARNING;
	sdp_standard_created = 1;
	log_update_thresholds();
out_unlock:
	pthread_mutex_unlock(&sdp_log_lock);
	if (status != DOCA_SUCCESS)
		sdp_error(
			"the standard backends need 2 free application backends, %u of %u are used",
			sdp_num_app_backends, SDP_LOG_MAX_APP_BACKENDS);
	return status;
}

/* The backend behind a handle, or NULL when the handle is not one of ours. */
static struct doca_log_backend *backend_lookup(struct doca_log_backend *backend)
{
	uintptr_t p = (uintptr_t)backend;
	uintptr_t app = (uintptr_t)sdp_app_backends, sdk = (uintptr_t)sdp_sdk_backends;

	if (p >= app && p < (uintptr_t)(sdp_app_backends + sdp_num_app_backends) &&
	    (p - app) % sizeof(*backend) == 0)
		return backend;
	if (p >= sdk && p < (uintptr_t)(sdp_sdk_backends + sdp_num_sdk_backends) &&
	    (p - sdk) % sizeof(*backend) == 0)
		return backend;
	return NULL;
}

enum sdp_limit_kind {
	SDP_LIMIT_LOWER,
	SDP_LIMIT_UPPER,
	SDP_LIMIT_SDK,
};

static const char *const sdp_limit_names[] = {
	[SDP_LIMIT_LOWER] = "lower limit",
	[SDP_LIMIT_UPPER] = "upper limit",
	[SDP_LIMIT_SDK] = "SDK level",
};

/* Apply a level to one backend, called with the lock held. */
static doca_error_t backend_set_locked(struct doca_log_backend *be, enum sdp_limit_kind kind,
				       uint32_t level, int global)
{
	switch (kind) {
	case SDP_LIMIT_LOWER:
		if (be->sdk)
			return DOCA_ERROR_NOT_PERMITTED;
		if (be->lower_strict && level > be->lower_bound) {
			if (!global)
				return DOCA_ERROR_NOT_PERMITTED;
			level = be->lower_bound;
		}
		be->lower = level;
		break;
	case SDP_LIMIT_UPPER:
		if (be->sdk)
			return DOCA_ERROR_NOT_PERMITTED;
		if (be->upper_strict && level < be->upper_bound) {
			if (!global)
				return DOCA_ERROR_NOT_PERMITTED;
			level = be->upper_bound;
		}
		be->upper = level;
		break;
	case SDP_LIMIT_SDK:
		if (!be->sdk)
			return DOCA_ERROR_NOT_PERMITTED;
		be->sdk_level = level;
		break;
	}
	return DOCA_SUCCESS;
}

static doca_error_t backend_set(struct doca_log_backend *backend, enum sdp_limit_kind kind,
				uint32_t level)
{
	struct doca_log_backend *be;
	doca_error_t status;

	if (!level_is_valid(level)) {
		sdp_error("invalid log level %u for the %s (expected 10, 20, ..., 70)", level,
			  sdp_limit_names[kind]);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (log_in_handler())
		return DOCA_ERROR_BAD_STATE;
	pthread_mutex_lock(&sdp_log_lock);
	be = backend_lookup(backend);
	status = be ? backend_set_locked(be, kind, level, 0) : DOCA_ERROR_INVALID_VALUE;
	if (status == DOCA_SUCCESS)
		log_update_thresholds();
	pthread_mutex_unlock(&sdp_log_lock);

	if (status == DOCA_ERROR_INVALID_VALUE)
		sdp_error("%p is not a log backend", (void *)backend);
	else if (status == DOCA_ERROR_NOT_PERMITTED)
		sdp_error("cannot set the %s of %s log backend %p to %u: %s", sdp_limit_names[kind],
			  backend->sdk ? "SDK" : "application", (void *)backend, level,
			  (kind == SDP_LIMIT_SDK) == !backend->sdk ? "wrong kind of backend" :
								     "beyond its strict limit");
	return status;
}

doca_error_t doca_log_backend_set_level_lower_limit(struct doca_log_backend *backend,
						    uint32_t level)
{
	return backend_set(backend, SDP_LIMIT_LOWER, level);
}

doca_error_t doca_log_backend_set_level_upper_limit(struct doca_log_backend *backend,
						    uint32_t upper_limit)
{
	return backend_set(backend, SDP_LIMIT_UPPER, upper_limit);
}

doca_error_t doca_log_backend_set_sdk_level(struct doca_log_backend *backend, uint32_t level)
{
	return backend_set(backend, SDP_LIMIT_SDK, level);
}

static doca_error_t backend_set_strict(struct doca_log_backend *backend, int lower)
{
	struct doca_log_backend *be;
	doca_error_t status = DOCA_SUCCESS;

	if (log_in_handler())
		return DOCA_ERROR_BAD_STATE;
	pthread_mutex_lock(&sdp_log_lock);
	be = backend_lookup(backend);
	if (be == NULL)
		status = DOCA_ERROR_INVALID_VALUE;
	else if (be->sdk)
		status = DOCA_ERROR_NOT_PERMITTED;
	else if (lower) {
		be->lower_strict = 1;
		be->lower_bound = be->lower;
	} else {
		be->upper_strict = 1;
		be->upper_bound = be->upper;
	}
	pthread_mutex_unlock(&sdp_log_lock);

	if (status == DOCA_ERROR_INVALID_VALUE)
		sdp_error("%p is not a log backend", (void *)backend);
	else if (status == DOCA_ERROR_NOT_PERMITTED)
		sdp_error("SDK log backend %p has no %s limit", (void *)backend,
			  lower ? "lower" : "upper");
	return status;
}

doca_error_t doca_log_backend_set_level_lower_limit_strict(struct doca_log_backend *backend)
{
	return backend_set_strict(backend, 1);
}

doca_error_t doca_log_backend_set_level_upper_limit_strict(struct doca_log_backend *backend)
{
	return backend_set_strict(backend, 0);
}

/* Set a global limit and apply it to every backend of its stream (strict limits clamp it). */
static doca_error_t global_set(enum sdp_limit_kind kind, uint32_t level)
{
	uint32_t i;

	if (!level_is_valid(level)) {
		sdp_error("invalid global %s %u (expected 10, 20, ..., 70)", sdp_limit_names[kind],
			  level);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (log_in_handler())
		return DOCA_ERROR_BAD_STATE;
	pthread_mutex_lock(&sdp_log_lock);
	switch (kind) {
	case SDP_LIMIT_LOWER:
		sdp_global_lower = level;
		break;
	case SDP_LIMIT_UPPER:
		sdp_global_upper = level;
		break;
	case SDP_LIMIT_SDK:
		sdp_global_sdk = level;
		break;
	}
	if (kind == SDP_LIMIT_SDK) {
		for (i = 0; i < sdp_num_sdk_backends; i++)
			backend_set_locked(&sdp_sdk_backends[i], kind, level, 1);
	} else {
		for (i = 0; i < sdp_num_app_backends; i++)
			backend_set_locked(&sdp_app_backends[i], kind, level, 1);
	}
	log_update_thresholds();
	pthread_mutex_unlock(&sdp_log_lock);
	return DOCA_SUCCESS;
}

doca_error_t doca_log_level_set_global_lower_limit(uint32_t level)
{
	return global_set(SDP_LIMIT_LOWER, level);
}

doca_error_t doca_log_level_set_global_upper_limit(uint32_t upper_limit)
{
	return global_set(SDP_LIMIT_UPPER, upper_limit);
}

doca_error_t doca_log_level_set_global_sdk_limit(uint32_t level)
{
	return global_set(SDP_LIMIT_SDK, level);
}

uint32_t doca_log_level_get_global_lower_limit(void)
{
	uint32_t level;

	if (sdp_log_busy) /* the lock is ours already: the value cannot change under us */
		return sdp_global_lower;
	pthread_mutex_lock(&sdp_log_lock);
	level = sdp_global_lower;
	pthread_mutex_unlock(&sdp_log_lock);
	return level;
}

uint32_t doca_log_level_get_global_upper_limit(void)
{
	uint32_t level;

	if (sdp_log_busy) /* the lock is ours already: the value cannot change under us */
		return sdp_global_upper;
	pthread_mutex_lock(&sdp_log_lock);
	level = sdp_global_upper;
	pthread_mutex_unlock(&sdp_log_lock);
	return level;
}

uint32_t doca_log_level_get_global_sdk_limit(void)
{
	uint32_t level;

	if (sdp_log_busy) /* the lock is ours already: the value cannot change under us */
		return sdp_global_sdk;
	pthread_mutex_lock(&sdp_log_lock);
	level = sdp_global_sdk;
	pthread_mutex_unlock(&sdp_log_lock);
	return level;
}

/* ---- process setup ------------------------------------------------------------------------- */

/* A fork while another thread writes a record must not leave the child's lock held. */
static void log_atfork_prepare(void)
{
	pthread_mutex_lock(&sdp_log_lock);
}

static void log_atfork_release(void)
{
	pthread_mutex_unlock(&sdp_log_lock);
}

/* Apply DOCA_LOG_LEVEL (a bad value was reported by the registry; defaults stay). */
static void log_apply_env(void)
{
	uint64_t level;

	if (sdp_config_get_uint(SDP_CFG_DOCA_LOG_LEVEL, &level) != DOCA_SUCCESS)
		return;
	pthread_mutex_lock(&sdp_log_lock);
	sdp_global_lower = (uint32_t)level;
	sdp_global_sdk = (uint32_t)level;
	sdp_fallback_cap = (uint32_t)level;
	log_update_thresholds();
	pthread_mutex_unlock(&sdp_log_lock);
}

/*
 * Runs when libdoca_common loads, before the program's DOCA_LOG_REGISTER constructors (a
 * library is initialised before the executable that links it).
 */
__attribute__((constructor(102))) static void sdp_log_init(void)
{
	pthread_atfork(log_atfork_prepare, log_atfork_release, log_atfork_release);
	log_apply_env();
	sdp_config_check_unknown();
}
