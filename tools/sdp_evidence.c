/*
 * Ladder evidence: the document `softdpu ladder ...` records, its writer and the eval-loop
 * comparison of two iterations (sdp_evidence.h; schema in docs/schemas/ladder-evidence.md).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sdp_evidence.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EV_MAX_RUNGS 32
#define EV_NAME_MAX 64
/* Largest evidence file read back (a log tail per worker keeps it far below). */
#define EV_FILE_MAX (16u << 20)
/* Longest log line kept in a tail, and how much of a log's end is read. */
#define EV_LINE_MAX 400
#define EV_TAIL_BYTES 65536

struct sdp_ev_rung {
	struct sdp_ev *ev;
	int n;
	char name[EV_NAME_MAX];
	const char *result; /* NULL while running, then "pass", "fail", "skip" */
	struct json_object *material, *detail, *fail;
	char *reason; /* skip */
	struct timespec t0;
};

struct sdp_ev {
	char ladder[EV_NAME_MAX];
	int nrungs, quiet, failed;
	struct json_object *snap_material, *snap_detail, *doc, *notes;
	struct sdp_ev_rung *rungs[EV_MAX_RUNGS + 1];
	char plan[EV_MAX_RUNGS + 1][EV_NAME_MAX];
	char started[32];
};

static void ev_utc_now(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int64_t ev_ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

struct sdp_ev *sdp_ev_new(const char *ladder, int nrungs)
{
	struct sdp_ev *ev;

	if (ladder == NULL || nrungs < 0 || nrungs > EV_MAX_RUNGS)
		return NULL;
	ev = calloc(1, sizeof(*ev));
	if (ev == NULL)
		return NULL;
	snprintf(ev->ladder, sizeof(ev->ladder), "%s", ladder);
	ev->nrungs = nrungs;
	ev->snap_material = json_object_new_object();
	ev->snap_detail = json_object_new_object();
	ev->notes = json_object_new_object();
	if (ev->snap_material == NULL || ev->snap_detail == NULL || ev->notes == NULL) {
		sdp_ev_free(ev);
		return NULL;
	}
	ev_utc_now(ev->started, sizeof(ev->started));
	return ev;
}

static void ev_rung_free(struct sdp_ev_rung *r)
{
	if (r == NULL)
		return;
	json_object_put(r->material);
	json_object_put(r->detail);
	json_object_put(r->fail);
	free(r->reason);
	free(r);
}

void sdp_ev_free(struct sdp_ev *ev)
{
	if (ev == NULL)
		return;
	for (int i = 0; i <= EV_MAX_RUNGS; i++)
		ev_rung_free(ev->rungs[i]);
	json_object_put(ev->snap_material);
	json_object_put(ev->snap_detail);
	json_object_put(ev->doc);
	json_object_put(ev->notes);
	free(ev);
}

void sdp_ev_set_quiet(struct sdp_ev *ev, int quiet)
{
	if (ev != NULL)
		ev->quiet = quiet;
}

void sdp_ev_snapshot(struct sdp_ev *ev, const char *key, struct json_object *val, int detail)
{
	if (ev == NULL || key == NULL) {
		json_object_put(val);
		return;
	}
	json_object_object_add(detail ? ev->snap_detail : ev->snap_material, key, val);
}

void sdp_ev_plan(struct sdp_ev *ev, int n, const char *name)
{
	if (ev == NULL || n < 0 || n > ev->nrungs || name == NULL)
		return;
	snprintf(ev->plan[n], sizeof(ev->plan[n]), "%s", name);
}

struct sdp_ev_rung *sdp_ev_rung_begin(struct sdp_ev *ev, int n, const char *name)
{
	struct sdp_ev_rung *r;

	if (ev == NULL || n < 0 || n > ev->nrungs || ev->rungs[n] != NULL || name == NULL)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	r->ev = ev;
	r->n = n;
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->material = json_object_new_object();
	r->detail = json_object_new_object();
	if (r->material == NULL || r->detail == NULL) {
		ev_rung_free(r);
		return NULL;
	}
	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	ev->rungs[n] = r;
	if (!ev->quiet)
		fprintf(stderr, "[%d/%d] %s ...\n", n, ev->nrungs, name);
	return r;
}

void sdp_ev_material(struct sdp_ev_rung *r, const char *key, struct json_object *val)
{
	if (r == NULL || key == NULL) {
		json_object_put(val);
		return;
	}
	json_object_object_add(r->material, key, val);
}

void sdp_ev_detail(struct sdp_ev_rung *r, const char *key, struct json_object *val)
{
	if (r == NULL || key == NULL) {
		json_object_put(val);
		return;
	}
	json_object_object_add(r->detail, key, val);
}

void sdp_ev_progress(struct sdp_ev_rung *r, const char *fmt, ...)
{
	va_list ap;

	if (r == NULL || r->ev->quiet)
		return;
	fprintf(stderr, "      ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The last max_lines lines of path as a JSON array of strings (each cut at EV_LINE_MAX). */
static struct json_object *ev_tail(const char *path, int max_lines, char *err, size_t errlen)
{
	static char buf[EV_TAIL_BYTES + 1];
	struct json_object *arr;
	struct stat st;
	ssize_t n = 0, got;
	char *p, *end, *start;
	int fd, lines = 0;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open: %s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "not a regular file");
		close(fd);
		return NULL;
	}
	if (st.st_size > EV_TAIL_BYTES)
		(void)lseek(fd, st.st_size - EV_TAIL_BYTES, SEEK_SET);
	while (n < EV_TAIL_BYTES) {
		got = read(fd, buf + n, (size_t)(EV_TAIL_BYTES - n));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += got;
	}
	close(fd);
	buf[n] = '\0';
	/* find the start of the max_lines last lines */
	end = buf + n;
	if (end > buf && end[-1] == '\n')
		end--;
	start = end;
	while (start > buf && lines < max_lines) {
		start--;
		if (*start == '\n' && ++lines == max_lines) {
			start++;
			break;
		}
	}
	arr = json_object_new_array();
	if (arr == NULL)
		return NULL;
	for (p = start; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl != NULL ? nl : end) - p);

		json_object_array_add(arr,
				      json_object_new_string_len(
					      p, (int)(len > EV_LINE_MAX ? EV_LINE_MAX : len)));
		p += len + 1;
	}
	return arr;
}

void sdp_ev_log_tail(struct sdp_ev_rung *r, const char *path, int max_lines)
{
	struct json_object *tails, *arr;
	char err[160];

	if (r == NULL || path == NULL || max_lines <= 0)
		return;
	if (!json_object_object_get_ex(r->detail, "log_tail", &tails) ||
	    !json_object_is_type(tails, json_type_object)) {
		tails = json_object_new_object();
		if (tails == NULL)
			return;
		json_object_object_add(r->detail, "log_tail", tails);
	}
	arr = ev_tail(path, max_lines, err, sizeof(err));
	if (arr == NULL) {
		struct json_object *e = json_object_new_object();

		if (e == NULL)
			return;
		json_object_object_add(e, "error", json_object_new_string(err));
		json_object_object_add(tails, path, e);
		return;
	}
	json_object_object_add(tails, path, arr);
}

static void ev_rung_end(struct sdp_ev_rung *r, const char *result)
{
	json_object_object_add(r->detail, "elapsed_ms", json_object_new_int64(ev_ms_since(&r->t0)));
	r->result = result;
}

void sdp_ev_rung_pass(struct sdp_ev_rung *r)
{
	if (r == NULL || r->result != NULL)
		return;
	ev_rung_end(r, "pass");
	if (!r->ev->quiet)
		fprintf(stderr, "[%d/%d] %s: pass (%" PRId64 " ms)\n", r->n, r->ev->nrungs, r->name,
			ev_ms_since(&r->t0));
}

void sdp_ev_rung_fail(struct sdp_ev_rung *r, const char *trigger, const char *layer,
		      doca_error_t err, const char *next_check, const char *fmt, ...)
{
	char seen[1024];
	va_list ap;

	if (r == NULL || r->result != NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(seen, sizeof(seen), fmt, ap);
	va_end(ap);
	r->fail = json_object_new_object();
	if (r->fail != NULL) {
		json_object_object_add(r->fail, "trigger",
				       json_object_new_string(trigger ? trigger : "unknown"));
		json_object_object_add(
			r->fail, "layer",
			json_object_new_string(layer ? layer : SDP_EV_LAYER_PROGRAM));
		json_object_object_add(r->fail, "error",
				       err == DOCA_SUCCESS ?
					       NULL :
					       json_object_new_string(doca_error_get_name(err)));
		json_object_object_add(r->fail, "next_check",
				       json_object_new_string(next_check ? next_check : ""));
		json_object_object_add(r->fail, "seen", json_object_new_string(seen));
	}
	ev_rung_end(r, "fail");
	r->ev->failed = 1;
	if (!r->ev->quiet) {
		fprintf(stderr, "[%d/%d] %s: FAIL: %s\n", r->n, r->ev->nrungs, r->name, seen);
		fprintf(stderr, "      layer: %s, trigger %s\n",
			layer ? layer : SDP_EV_LAYER_PROGRAM, trigger ? trigger : "unknown");
		if (next_check != NULL && *next_check != '\0')
			fprintf(stderr, "      next check: %s\n", next_check);
	}
}

void sdp_ev_rung_skip(struct sdp_ev_rung *r, const char *reason)
{
	if (r == NULL || r->result != NULL)
		return;
	r->reason = strdup(reason ? reason : "");
	ev_rung_end(r, "skip");
	if (!r->ev->quiet)
		fprintf(stderr, "[%d/%d] %s: skipped: %s\n", r->n, r->ev->nrungs, r->name,
			reason ? reason : "");
}

void sdp_ev_annotate(struct sdp_ev *ev, const char *key, struct json_object *val)
{
	static const char *const own[] = {"schema",   "ladder",	     "result",
					  "trigger",  "rungs_total", "started",
					  "finished", "snapshot",    "rungs"};

	if (ev == NULL || key == NULL) {
		json_object_put(val);
		return;
	}
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (strcmp(key, own[i]) == 0) {
			json_object_put(val);
			return;
		}
	json_object_object_add(ev->notes, key, val);
}

int sdp_ev_failed(const struct sdp_ev *ev)
{
	return ev != NULL && ev->failed;
}

/* A new reference to o (json-c objects are shared into the document by reference). */
static struct json_object *ev_ref(struct json_object *o)
{
	return json_object_get(o);
}

static struct json_object *ev_rung_json(const struct sdp_ev *ev, int n)
{
	const struct sdp_ev_rung *r = ev->rungs[n];
	struct json_object *o = json_object_new_object();

	if (o == NULL)
		return NULL;
	json_object_object_add(o, "n", json_object_new_int(n));
	if (r == NULL) {
		json_object_object_add(o, "name", json_object_new_string(ev->plan[n]));
		json_object_object_add(o, "result", json_object_new_string("not-run"));
		json_object_object_add(o, "material", json_object_new_object());
		json_object_object_add(o, "detail", json_object_new_object());
		return o;
	}
	json_object_object_add(o, "name", json_object_new_string(r->name));
	json_object_object_add(o, "result",
			       json_object_new_string(r->result ? r->result : "unfinished"));
	if (r->fail != NULL) {
		json_object_object_foreach(r->fail, k, v)
		{
			json_object_object_add(o, k, ev_ref(v));
		}
	}
	if (r->reason != NULL)
		json_object_object_add(o, "reason", json_object_new_string(r->reason));
	json_object_object_add(o, "material", ev_ref(r->material));
	json_object_object_add(o, "detail", ev_ref(r->detail));
	return o;
}

struct json_object *sdp_ev_json(struct sdp_ev *ev)
{
	struct json_object *doc, *rungs, *snap, *trig = NULL;
	char finished[32];
	const char *result = "pass";

	if (ev == NULL)
		return NULL;
	doc = json_object_new_object();
	rungs = json_object_new_array();
	snap = json_object_new_object();
	if (doc == NULL || rungs == NULL || snap == NULL) {
		json_object_put(doc);
		json_object_put(rungs);
		json_object_put(snap);
		return NULL;
	}
	for (int n = 0; n <= ev->nrungs; n++) {
		const struct sdp_ev_rung *r = ev->rungs[n];

		/* rung 0 (the precheck) is listed only when it was planned or run */
		if (n == 0 && r == NULL && ev->plan[0][0] == '\0')
			continue;
		json_object_array_add(rungs, ev_rung_json(ev, n));
		if (r == NULL)
			continue;
		if (r->result == NULL && strcmp(result, "pass") == 0)
			result = "incomplete";
		if (r->result != NULL && strcmp(r->result, "fail") == 0 && trig == NULL) {
			struct json_object *v;

			result = "fail";
			trig = json_object_new_object();
			json_object_object_add(trig, "rung", json_object_new_int(n));
			json_object_object_add(trig, "name", json_object_new_string(r->name));
			if (json_object_object_get_ex(r->fail, "trigger", &v))
				json_object_object_add(trig, "trigger", ev_ref(v));
			if (json_object_object_get_ex(r->fail, "layer", &v))
				json_object_object_add(trig, "layer", ev_ref(v));
			if (json_object_object_get_ex(r->fail, "error", &v))
				json_object_object_add(trig, "error", ev_ref(v));
			if (json_object_object_get_ex(r->fail, "next_check", &v))
				json_object_object_add(trig, "next_check", ev_ref(v));
		}
	}
	if (trig == NULL && strcmp(result, "pass") == 0) {
		/* every planned rung must have run for a pass */
		for (int n = 1; n <= ev->nrungs; n++)
			if (ev->rungs[n] == NULL)
				result = "incomplete";
	}
	ev_utc_now(finished, sizeof(finished));
	json_object_object_add(doc, "schema", json_object_new_string(SDP_EV_SCHEMA));
	json_object_object_add(doc, "ladder", json_object_new_string(ev->ladder));
	json_object_object_add(doc, "result", json_object_new_string(result));
	json_object_object_add(doc, "trigger", trig);
	json_object_object_add(doc, "rungs_total", json_object_new_int(ev->nrungs));
	json_object_object_add(doc, "started", json_object_new_string(ev->started));
	json_object_object_add(doc, "finished", json_object_new_string(finished));
	json_object_object_add(snap, "material", ev_ref(ev->snap_material));
	json_object_object_add(snap, "detail", ev_ref(ev->snap_detail));
	json_object_object_add(doc, "snapshot", snap);
	json_object_object_add(doc, "rungs", rungs);
	json_object_object_foreach(ev->notes, nk, nv)
	{
		json_object_object_add(doc, nk, ev_ref(nv));
	}
	json_object_put(ev->doc);
	ev->doc = doc;
	return doc;
}

/* ---- reading and writing ------------------------------------------------------------------ */

/* 1 when o is an evidence document of this schema (object with the schema key). */
static int ev_is_doc(struct json_object *o)
{
	struct json_object *v;

	return o != NULL && json_object_is_type(o, json_type_object) &&
	       json_object_object_get_ex(o, "schema", &v) &&
	       json_object_is_type(v, json_type_string) &&
	       strcmp(json_object_get_string(v), SDP_EV_SCHEMA) == 0;
}

/* Parse the whole of fd (a regular file of at most EV_FILE_MAX bytes); NULL with why. */
static struct json_object *ev_parse_fd(int fd, char *why, size_t whylen)
{
	struct json_tokener *tok;
	struct json_object *o;
	struct stat st;
	char *buf;
	ssize_t got;
	size_t n = 0;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "not a regular file");
		return NULL;
	}
	if ((uint64_t)st.st_size > EV_FILE_MAX) {
		snprintf(why, whylen, "larger than %u bytes", EV_FILE_MAX);
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	while (n < (size_t)st.st_size) {
		got = read(fd, buf + n, (size_t)st.st_size - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	buf[n] = '\0';
	tok = json_tokener_new();
	o = tok != NULL ? json_tokener_parse_ex(tok, buf, (int)n) : NULL;
	if (o == NULL || json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(o);
		o = NULL;
		snprintf(why, whylen, "not valid JSON");
	} else {
		/* nothing but white space after the document */
		for (size_t i = json_tokener_get_parse_end(tok); i < n; i++)
			if (buf[i] != ' ' && buf[i] != '\n' && buf[i] != '\t' && buf[i] != '\r') {
				json_object_put(o);
				o = NULL;
				snprintf(why, whylen, "not valid JSON (data after the document)");
				break;
			}
	}
	if (tok != NULL)
		json_tokener_free(tok);
	free(buf);
	return o;
}

struct json_object *sdp_ev_read(const char *path)
{
	struct json_object *o;
	char why[128];
	int fd;

	if (path == NULL)
		return NULL;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "softdpu: cannot read evidence %s: %s\n", path, strerror(errno));
		return NULL;
	}
	o = ev_parse_fd(fd, why, sizeof(why));
	close(fd);
	if (o == NULL) {
		fprintf(stderr, "softdpu: %s: %s, not a ladder evidence file\n", path, why);
		return NULL;
	}
	if (!ev_is_doc(o)) {
		fprintf(stderr, "softdpu: %s: not a ladder evidence file (no \"schema\": \"%s\")\n",
			path, SDP_EV_SCHEMA);
		json_object_put(o);
		return NULL;
	}
	return o;
}

/*
 * Whether path may be written: 0 when it does not exist (*exists 0), or exists and is an
 * evidence document (*exists 1, its device and inode in *st); -1 (reported) otherwise.
 */
static int ev_check_target(const char *path, int *exists, struct stat *st)
{
	struct json_object *o;
	char why[128];
	int fd, ok;

	*exists = 0;
	if (lstat(path, st) != 0) {
		if (errno == ENOENT)
			return 0;
		fprintf(stderr, "softdpu: cannot write evidence %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		fprintf(stderr,
			"softdpu: %s exists and is not a regular file; not replaced (choose another "
			"--evidence file)\n",
			path);
		return -1;
	}
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "softdpu: cannot read %s to check it: %s; not replaced\n", path,
			strerror(errno));
		return -1;
	}
	o = ev_parse_fd(fd, why, sizeof(why));
	close(fd);
	ok = ev_is_doc(o);
	json_object_put(o);
	if (!ok) {
		fprintf(stderr,
			"softdpu: %s exists and is not a ladder evidence file; left untouched "
			"(choose another --evidence file)\n",
			path);
		return -1;
	}
	*exists = 1;
	return 0;
}

static int ev_write_all(int fd, const char *s, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, s, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

int sdp_ev_write(struct sdp_ev *ev, const char *path)
{
	char dcopy[PATH_MAX], bcopy[PATH_MAX], tmp[PATH_MAX + 16];
	struct json_object *doc;
	struct stat st, now;
	const char *text;
	int exists, fd, rc;

	if (ev == NULL || path == NULL || *path == '\0' || strlen(path) >= PATH_MAX) {
		fprintf(stderr, "softdpu: bad evidence path\n");
		return -1;
	}
	if (ev_check_target(path, &exists, &st) != 0)
		return -1;
	doc = sdp_ev_json(ev);
	text = doc != NULL ?
		       json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
								   JSON_C_TO_STRING_NOSLASHESCAPE) :
		       NULL;
	if (text == NULL) {
		fprintf(stderr, "softdpu: out of memory building the evidence\n");
		return -1;
	}
	snprintf(dcopy, sizeof(dcopy), "%s", path);
	snprintf(bcopy, sizeof(bcopy), "%s", path);
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dirname(dcopy), basename(bcopy)) >=
	    sizeof(tmp)) {
		fprintf(stderr, "softdpu: evidence path too long\n");
		return -1;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "softdpu: cannot create %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	rc = fchmod(fd, 0644) == 0 && ev_write_all(fd, text, strlen(text)) == 0 &&
			     ev_write_all(fd, "\n", 1) == 0 && fsync(fd) == 0 ?
		     0 :
		     -1;
	if (close(fd) != 0)
		rc = -1;
	if (rc != 0) {
		fprintf(stderr, "softdpu: cannot write %s: %s\n", tmp, strerror(errno));
		unlink(tmp);
		return -1;
	}
	if (exists) {
		/* still the evidence file checked above (not swapped meanwhile) */
		if (lstat(path, &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
			fprintf(stderr,
				"softdpu: %s changed while the evidence was written; left "
				"untouched\n",
				path);
			unlink(tmp);
			return -1;
		}
		rc = rename(tmp, path);
	} else {
		rc = renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE);
		if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
			/* a file system without RENAME_NOREPLACE: link refuses an existing name too */
			rc = link(tmp, path);
			if (rc == 0)
				unlink(tmp);
		}
	}
	if (rc != 0) {
		fprintf(stderr, "softdpu: cannot write evidence %s: %s%s\n", path, strerror(errno),
			errno == EEXIST ? " (created by someone else meanwhile; left untouched)" :
					  "");
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* ---- comparison --------------------------------------------------------------------------- */

const char *sdp_ev_outcome_name(enum sdp_ev_outcome o)
{
	switch (o) {
	case SDP_EV_RESOLVED:
		return "resolved";
	case SDP_EV_SHAPE_CHANGED:
		return "shape-changed";
	case SDP_EV_UNCHANGED:
		return "unchanged";
	}
	return "?";
}

static const char *ev_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* The value of key, or JSON null (a missing key and null are the same fact). */
static struct json_object *ev_get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (o == NULL || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

/* Validate one document's shape; its rungs array in *rungs. 0, or -1 with why. */
static int ev_validate(struct json_object *doc, const char *which, struct json_object **rungs,
		       char *why, size_t why_len)
{
	struct json_object *snap, *arr;
	size_t n;

	if (!ev_is_doc(doc)) {
		snprintf(why, why_len, "the %s document is not ladder evidence (schema %s)", which,
			 SDP_EV_SCHEMA);
		return -1;
	}
	if (ev_str(doc, "ladder") == NULL || !json_object_object_get_ex(doc, "rungs", &arr) ||
	    !json_object_is_type(arr, json_type_array) ||
	    !json_object_object_get_ex(doc, "snapshot", &snap) ||
	    !json_object_is_type(snap, json_type_object)) {
		snprintf(why, why_len, "the %s document lacks ladder, snapshot or rungs", which);
		return -1;
	}
	n = json_object_array_length(arr);
	for (size_t i = 0; i < n; i++) {
		struct json_object *r = json_object_array_get_idx(arr, i), *v;

		if (!json_object_is_type(r, json_type_object) ||
		    !json_object_object_get_ex(r, "n", &v) ||
		    !json_object_is_type(v, json_type_int) || ev_str(r, "name") == NULL ||
		    ev_str(r, "result") == NULL) {
			snprintf(why, why_len, "the %s document has a malformed rung (entry %zu)",
				 which, i);
			return -1;
		}
	}
	*rungs = arr;
	return 0;
}

/* The first failing (or unfinished) rung of a rungs array; -1 when none. */
static int ev_first_fail(struct json_object *rungs)
{
	size_t n = json_object_array_length(rungs);

	for (size_t i = 0; i < n; i++) {
		const char *res = ev_str(json_object_array_get_idx(rungs, i), "result");

		if (strcmp(res, "fail") == 0 || strcmp(res, "unfinished") == 0)
			return (int)i;
	}
	return -1;
}

static const char *ev_trigger_of(struct json_object *rung)
{
	const char *t = ev_str(rung, "trigger");

	if (strcmp(ev_str(rung, "result"), "unfinished") == 0)
		return "unfinished";
	return t != NULL ? t : "unknown";
}

/*
 * The first difference between two material objects: 0 when equal, else 1 with the key that
 * differs (prefix.key) in diff.
 */
static int ev_diff(struct json_object *a, struct json_object *b, const char *prefix, char *diff,
		   size_t difflen)
{
	if (json_object_equal(a, b))
		return 0;
	if (a != NULL && b != NULL && json_object_is_type(a, json_type_object) &&
	    json_object_is_type(b, json_type_object)) {
		json_object_object_foreach(a, ka, va)
		{
			if (!json_object_equal(va, ev_get(b, ka))) {
				snprintf(diff, difflen, "%s.%s", prefix, ka);
				return 1;
			}
		}
		json_object_object_foreach(b, kb, vb)
		{
			if (!json_object_equal(vb, ev_get(a, kb))) {
				snprintf(diff, difflen, "%s.%s", prefix, kb);
				return 1;
			}
		}
	}
	snprintf(diff, difflen, "%s", prefix);
	return 1;
}

int sdp_ev_compare(struct json_object *prev, struct json_object *cur, enum sdp_ev_outcome *out,
		   char *why, size_t why_len)
{
	struct json_object *pr, *cr, *prung, *crung, *psnap, *csnap;
	char diff[256];
	int pf, cf;
	size_t n;

	if (out == NULL || why == NULL || why_len == 0)
		return -1;
	if (ev_validate(prev, "previous", &pr, why, why_len) != 0 ||
	    ev_validate(cur, "current", &cr, why, why_len) != 0)
		return -1;
	if (strcmp(ev_str(prev, "ladder"), ev_str(cur, "ladder")) != 0) {
		snprintf(why, why_len,
			 "different ladders: the previous run is \"%s\", this one \"%s\"",
			 ev_str(prev, "ladder"), ev_str(cur, "ladder"));
		return -1;
	}
	n = json_object_array_length(pr);
	if (json_object_array_length(cr) != n) {
		snprintf(why, why_len, "the ladders' rungs differ (%zu rungs before, %zu now)", n,
			 json_object_array_length(cr));
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *a = json_object_array_get_idx(pr, i),
				   *b = json_object_array_get_idx(cr, i);

		if (json_object_get_int(ev_get(a, "n")) != json_object_get_int(ev_get(b, "n")) ||
		    (*ev_str(a, "name") != '\0' && *ev_str(b, "name") != '\0' &&
		     strcmp(ev_str(a, "name"), ev_str(b, "name")) != 0)) {
			snprintf(why, why_len, "the ladders' rungs differ at entry %zu (%s / %s)",
				 i, ev_str(a, "name"), ev_str(b, "name"));
			return -1;
		}
	}
	pf = ev_first_fail(pr);
	cf = ev_first_fail(cr);
	if (pf < 0 && cf < 0) {
		*out = SDP_EV_UNCHANGED;
		snprintf(why, why_len, "both iterations are green: no trigger, nothing to fix");
		return 0;
	}
	if (pf < 0) {
		crung = json_object_array_get_idx(cr, (size_t)cf);
		*out = SDP_EV_SHAPE_CHANGED;
		snprintf(why, why_len,
			 "the previous iteration was green; now rung %d (%s) fails (%s)",
			 json_object_get_int(ev_get(crung, "n")), ev_str(crung, "name"),
			 ev_trigger_of(crung));
		return 0;
	}
	prung = json_object_array_get_idx(pr, (size_t)pf);
	crung = json_object_array_get_idx(cr, (size_t)pf);
	if (strcmp(ev_str(crung, "result"), "pass") == 0) {
		*out = SDP_EV_RESOLVED;
		if (cf >= 0) {
			struct json_object *c2 = json_object_array_get_idx(cr, (size_t)cf);

			snprintf(why, why_len,
				 "rung %d (%s) passes now (was %s); the climb now stops at rung %d "
				 "(%s, %s)",
				 json_object_get_int(ev_get(prung, "n")), ev_str(prung, "name"),
				 ev_trigger_of(prung), json_object_get_int(ev_get(c2, "n")),
				 ev_str(c2, "name"), ev_trigger_of(c2));
		} else {
			snprintf(why, why_len,
				 "rung %d (%s) passes now (was %s); every rung passed",
				 json_object_get_int(ev_get(prung, "n")), ev_str(prung, "name"),
				 ev_trigger_of(prung));
		}
		return 0;
	}
	if (cf != pf || strcmp(ev_trigger_of(prung), ev_trigger_of(crung)) != 0) {
		*out = SDP_EV_SHAPE_CHANGED;
		if (cf < 0) {
			snprintf(why, why_len,
				 "rung %d (%s) no longer fails but is %s now; nothing "
				 "fails",
				 json_object_get_int(ev_get(prung, "n")), ev_str(prung, "name"),
				 ev_str(crung, "result"));
		} else {
			struct json_object *c2 = json_object_array_get_idx(cr, (size_t)cf);

			snprintf(why, why_len,
				 "another trigger: rung %d (%s) %s before, rung %d (%s) %s now",
				 json_object_get_int(ev_get(prung, "n")), ev_str(prung, "name"),
				 ev_trigger_of(prung), json_object_get_int(ev_get(c2, "n")),
				 ev_str(c2, "name"), ev_trigger_of(c2));
		}
		return 0;
	}
	/* the same trigger: is the evidence materially the same? */
	psnap = ev_get(ev_get(prev, "snapshot"), "material");
	csnap = ev_get(ev_get(cur, "snapshot"), "material");
	if (ev_diff(psnap, csnap, "snapshot", diff, sizeof(diff))) {
		*out = SDP_EV_SHAPE_CHANGED;
		snprintf(why, why_len, "same trigger (rung %d, %s) but the evidence changed: %s",
			 json_object_get_int(ev_get(prung, "n")), ev_trigger_of(prung), diff);
		return 0;
	}
	for (int i = 0; i <= pf; i++) {
		static const char *const keys[] = {"result", "layer", "error"};
		struct json_object *a = json_object_array_get_idx(pr, (size_t)i),
				   *b = json_object_array_get_idx(cr, (size_t)i);
		char prefix[96];

		snprintf(prefix, sizeof(prefix), "rung %d material",
			 json_object_get_int(ev_get(a, "n")));
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (!json_object_equal(ev_get(a, keys[k]), ev_get(b, keys[k]))) {
				snprintf(diff, sizeof(diff), "rung %d %s",
					 json_object_get_int(ev_get(a, "n")), keys[k]);
				goto changed;
			}
		if (ev_diff(ev_get(a, "material"), ev_get(b, "material"), prefix, diff,
			    sizeof(diff)))
			goto changed;
	}
	*out = SDP_EV_UNCHANGED;
	snprintf(why, why_len,
		 "same trigger (rung %d %s, %s) and the same material evidence: the change did not "
		 "help",
		 json_object_get_int(ev_get(prung, "n")), ev_str(prung, "name"),
		 ev_trigger_of(prung));
	return 0;
changed:
	*out = SDP_EV_SHAPE_CHANGED;
	snprintf(why, why_len, "same trigger (rung %d, %s) but the evidence changed: %s",
		 json_object_get_int(ev_get(prung, "n")), ev_trigger_of(prung), diff);
	return 0;
}
