/*
 * softdpu-uromd: plugin discovery.
 *
 * The parent lists the candidates itself (every regular *.so of each directory, sorted by
 * name) without loading anything. A child process then loads them in order and reports on a
 * pipe, for each one, "trying index i" before dlopen and the outcome after it. Loading runs
 * foreign constructors, so a .so may crash or hang the child: the parent sees the child die
 * (or time out) with a "trying" record open, marks that file as skipped with the reason, and
 * forks a new child for the files after it. A child that stops outside a "trying" record (it
 * dies between two files, exits early, or sends a short or malformed record) is restarted from
 * the first file whose outcome is still unknown; after SCAN_MAX_STALLS such restarts in a row
 * without any new outcome, the files left are skipped with the reason. The service process
 * itself never dlopens a plugin.
 *
 * A plugin must export urom_plugin_get_version and urom_plugin_get_iface, both must succeed,
 * and the interface's leading __doca_api_version must equal DOCA_VERSION_EXACT. Its name is
 * the file name without ".so" (at most DOCA_UROM_PLUGIN_NAME_MAX_LEN - 1 characters). Ids are
 * single bits in scan order.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "doca_version.h"
#include "sdp_log.h"
#include "uromd.h"

SDP_LOG_COMPONENT("uromd");

/* How long one plugin may take to load in the scanner. */
#define SCAN_LOAD_TIMEOUT_MS 10000
/* Scanner restarts in a row that yield no new outcome before the rest is given up. */
#define SCAN_MAX_STALLS 3
#define SCAN_REASON_LEN 240

enum scan_rec_kind {
	SCAN_REC_TRY = 1,
	SCAN_REC_OK,
	SCAN_REC_SKIP,
};

/* One record on the pipe; smaller than PIPE_BUF, so each write is atomic. */
struct scan_rec {
	uint32_t index;
	uint32_t kind;
	uint64_t version;
	char reason[SCAN_REASON_LEN];
};

struct scan_cand {
	char *path;
	char name[SDP_UROM_NAME_MAX];
	int done; /* outcome known */
	int ok;	  /* accepted */
	uint64_t version;
	char *reason; /* when skipped */
};

/* The plugin entry points (doca_urom_plugin.h); the interface is read only for its leading
 * __doca_api_version, into a generous zeroed buffer so a plugin built against a larger layout
 * cannot write past it. */
typedef doca_error_t (*scan_get_version_func_t)(uint64_t *version);
typedef doca_error_t (*scan_get_iface_func_t)(void *iface);

union scan_iface_buf {
	size_t api_version;
	unsigned char bytes[4096];
};

static void scan_child_send(int fd, const struct scan_rec *rec)
{
	ssize_t n;

	do {
		n = write(fd, rec, sizeof(*rec));
	} while (n < 0 && errno == EINTR);
}

static void scan_child_skip(int fd, uint32_t index, const char *fmt, const char *arg)
{
	struct scan_rec rec;

	memset(&rec, 0, sizeof(rec));
	rec.index = index;
	rec.kind = SCAN_REC_SKIP;
	snprintf(rec.reason, sizeof(rec.reason), fmt, arg);
	scan_child_send(fd, &rec);
}

static void __attribute__((noreturn))
scan_child(int fd, const struct scan_cand *cands, size_t n, size_t start)
{
	static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
	struct sigaction sa;

	/* A plugin that crashes must kill this child plainly (UCX, loaded in the service, installs
	 * its own handlers): the parent reports the signal. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		sigaction(fatal[i], &sa, NULL);
	for (size_t i = start; i < n; i++) {
		scan_get_version_func_t get_version;
		scan_get_iface_func_t get_iface;
		union scan_iface_buf iface;
		struct scan_rec rec;
		doca_error_t status;
		uint64_t version = 0;
		void *handle;

		if (cands[i].done)
			continue;
		memset(&rec, 0, sizeof(rec));
		rec.index = (uint32_t)i;
		rec.kind = SCAN_REC_TRY;
		scan_child_send(fd, &rec);

		handle = dlopen(cands[i].path, RTLD_NOW | RTLD_LOCAL);
		if (handle == NULL) {
			scan_child_skip(fd, (uint32_t)i, "dlopen failed: %s", dlerror());
			continue;
		}
		*(void **)&get_version = dlsym(handle, "urom_plugin_get_version");
		if (get_version == NULL) {
			scan_child_skip(fd, (uint32_t)i, "missing symbol %s",
					"urom_plugin_get_version");
			continue;
		}
		*(void **)&get_iface = dlsym(handle, "urom_plugin_get_iface");
		if (get_iface == NULL) {
			scan_child_skip(fd, (uint32_t)i, "missing symbol %s",
					"urom_plugin_get_iface");
			continue;
		}
		status = get_version(&version);
		if (status != DOCA_SUCCESS) {
			scan_child_skip(fd, (uint32_t)i, "urom_plugin_get_version failed: %s",
					doca_error_get_name(status));
			continue;
		}
		memset(&iface, 0, sizeof(iface));
		status = get_iface(&iface);
		if (status != DOCA_SUCCESS) {
			scan_child_skip(fd, (uint32_t)i, "urom_plugin_get_iface failed: %s",
					doca_error_get_name(status));
			continue;
		}
		if (iface.api_version != DOCA_VERSION_EXACT) {
			size_t v = iface.api_version;

			memset(&rec, 0, sizeof(rec));
			rec.index = (uint32_t)i;
			rec.kind = SCAN_REC_SKIP;
			snprintf(rec.reason, sizeof(rec.reason),
				 "built for DOCA API %zu.%zu.%zu (__doca_api_version %#zx), this "
				 "service implements %s (%#zx)",
				 v >> 24, (v >> 16) & 0xff, v & 0xffff, v, DOCA_VERSION_STRING,
				 (size_t)DOCA_VERSION_EXACT);
			scan_child_send(fd, &rec);
			continue;
		}
		memset(&rec, 0, sizeof(rec));
		rec.index = (uint32_t)i;
		rec.kind = SCAN_REC_OK;
		rec.version = version;
		scan_child_send(fd, &rec);
	}
	/* No dlclose, no exit handlers: plugin destructors must not run in here. */
	_exit(0);
}

static int scan_cand_cmp(const void *a, const void *b)
{
	const struct scan_cand *x = a, *y = b;

	return strcmp(x->path, y->path);
}

static void scan_cand_skip(struct scan_cand *c, const char *reason)
{
	c->done = 1;
	c->ok = 0;
	free(c->reason);
	c->reason = strdup(reason);
}

/*
 * Whether a plugin directory or file (st: stat after symbolic links) is trusted: owned by root
 * or by the service's user, and writable by nobody else (no group or other write bit). NULL
 * when it is, else the reason (in buf).
 */
static const char *scan_untrusted(const struct stat *st, const char *what, char *buf, size_t size)
{
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(buf, size, "%s owned by uid %u, neither root nor the service's uid %u",
			 what, (unsigned int)st->st_uid, (unsigned int)geteuid());
		return buf;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		snprintf(buf, size, "%s writable by %s (mode %04o; chmod go-w it)", what,
			 (st->st_mode & S_IWOTH) ? "others" : "its group",
			 (unsigned int)(st->st_mode & 07777));
		return buf;
	}
	return NULL;
}

/* Record a plugin directory none of whose files is examined in res->skipped. */
static doca_error_t scan_skip_dir(const char *dir, const char *reason,
				  struct uromd_scan_result *res)
{
	struct uromd_skipped *ns = realloc(res->skipped, (res->num_skipped + 1) * sizeof(*ns));

	if (ns == NULL) {
		sdp_error("plugin scan: out of memory listing %s", dir);
		return DOCA_ERROR_NO_MEMORY;
	}
	res->skipped = ns;
	res->skipped[res->num_skipped].path = strdup(dir);
	res->skipped[res->num_skipped].reason = strdup(reason);
	res->num_skipped++;
	return DOCA_SUCCESS;
}

/* Append the *.so files of dir, sorted, to *cands. Unreadable directories are skipped. */
static doca_error_t scan_list_dir(const char *dir, struct scan_cand **cands, size_t *n, size_t *cap,
				  struct uromd_scan_result *res)
{
	char abs_dir[PATH_MAX];
	struct dirent *de;
	size_t first = *n;
	DIR *dp;

	/* Workers get absolute paths: the daemon changes its directory to / . */
	if (realpath(dir, abs_dir) != NULL)
		dir = abs_dir;
	dp = opendir(dir);
	if (dp != NULL) {
		struct stat dst;
		char reason[SCAN_REASON_LEN];

		if (fstat(dirfd(dp), &dst) != 0)
			snprintf(reason, sizeof(reason), "cannot stat plugin directory: %s",
				 strerror(errno));
		else if (scan_untrusted(&dst, "plugin directory", reason, sizeof(reason)) == NULL)
			reason[0] = '\0';
		if (reason[0] != '\0') {
			closedir(dp);
			sdp_warn("plugin path entry %s: %s; none of its files is loaded", dir,
				 reason);
			return scan_skip_dir(dir, reason, res);
		}
	}
	if (dp == NULL) {
		char reason[SCAN_REASON_LEN];

		snprintf(reason, sizeof(reason), "cannot open plugin directory: %s",
			 strerror(errno));
		sdp_warn("plugin path entry %s: %s", dir, reason);
		struct uromd_skipped *ns;

		ns = realloc(res->skipped, (res->num_skipped + 1) * sizeof(*ns));
		if (ns == NULL)
			goto err_no_memory;
		res->skipped = ns;
		res->skipped[res->num_skipped].path = strdup(dir);
		res->skipped[res->num_skipped].reason = strdup(reason);
		res->num_skipped++;
		return DOCA_SUCCESS;
	}
	while ((de = readdir(dp)) != NULL) {
		size_t len = strlen(de->d_name);
		char why[SCAN_REASON_LEN];
		struct scan_cand *c;
		struct stat st;
		char *path;

		if (len <= 3 || strcmp(de->d_name + len - 3, ".so") != 0)
			continue;
		if (asprintf(&path, "%s/%s", dir, de->d_name) < 0)
			goto err_no_memory_dir;
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
			sdp_debug("plugin scan: %s is not a regular file, ignored", path);
			free(path);
			continue;
		}
		if (*n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 16;
			struct scan_cand *nc = realloc(*cands, ncap * sizeof(*nc));

			if (nc == NULL) {
				free(path);
				goto err_no_memory_dir;
			}
			*cands = nc;
			*cap = ncap;
		}
		c = &(*cands)[(*n)++];
		memset(c, 0, sizeof(*c));
		c->path = path;
		if (scan_untrusted(&st, "plugin file", why, sizeof(why)) != NULL) {
			scan_cand_skip(c, why);
		} else if (len - 3 >= SDP_UROM_NAME_MAX) {
			scan_cand_skip(c, "plugin name longer than 47 characters");
		} else {
			memcpy(c->name, de->d_name, len - 3);
			c->name[len - 3] = '\0';
		}
	}
	closedir(dp);
	if (*n > first)
		qsort(*cands + first, *n - first, sizeof(**cands), scan_cand_cmp);
	return DOCA_SUCCESS;

err_no_memory_dir:
	closedir(dp);
err_no_memory:
	sdp_error("plugin scan: out of memory listing %s", dir);
	return DOCA_ERROR_NO_MEMORY;
}

/* How a scanner child ended, for the log and the skip reasons ("killed by signal 9 ..."). */
static void scan_describe_exit(int wstatus, char *buf, size_t size)
{
	if (WIFSIGNALED(wstatus))
		snprintf(buf, size, "killed by signal %d (%s)", WTERMSIG(wstatus),
			 strsignal(WTERMSIG(wstatus)));
	else if (WIFEXITED(wstatus))
		snprintf(buf, size, "exited with status %d", WEXITSTATUS(wstatus));
	else
		snprintf(buf, size, "ended with wait status %#x", (unsigned int)wstatus);
}

/*
 * Run one scanner child from index start. A file it was loading when it died (or timed out)
 * is marked skipped and early is left empty; otherwise early says how the child ended, which
 * matters only when some outcome is still unknown (the caller then restarts from there).
 */
static doca_error_t scan_run_child(struct scan_cand *cands, size_t n, size_t start, char *early,
				   size_t early_size)
{
	int pfd[2], wstatus = 0, bad_record = 0;
	long open_try = -1;
	uint64_t deadline;
	char reason[SCAN_REASON_LEN], how[128];
	ssize_t got = 0;
	pid_t pid;

	early[0] = '\0';
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		sdp_error("plugin scan: pipe2 failed: %m");
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		sdp_error("plugin scan: fork failed: %m");
		close(pfd[0]);
		close(pfd[1]);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	if (pid == 0) {
		close(pfd[0]);
		scan_child(pfd[1], cands, n, start);
	}
	close(pfd[1]);

	deadline = uromd_now_ms() + SCAN_LOAD_TIMEOUT_MS;
	for (;;) {
		struct pollfd p = {.fd = pfd[0], .events = POLLIN};
		uint64_t now = uromd_now_ms();
		struct scan_rec rec;
		int rc;

		if (now >= deadline) {
			kill(pid, SIGKILL);
			break;
		}
		rc = poll(&p, 1, (int)(deadline - now));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			continue; /* timeout: handled at the top */
		got = read(pfd[0], &rec, sizeof(rec));
		if (got < 0 && errno == EINTR)
			continue;
		if (got == 0 || got < 0)
			break;
		if (got != (ssize_t)sizeof(rec) || rec.index >= n ||
		    (rec.kind != SCAN_REC_TRY && rec.kind != SCAN_REC_OK &&
		     rec.kind != SCAN_REC_SKIP)) {
			bad_record = 1;
			break;
		}
		rec.reason[sizeof(rec.reason) - 1] = '\0';
		if (rec.kind == SCAN_REC_TRY) {
			open_try = rec.index;
			deadline = uromd_now_ms() + SCAN_LOAD_TIMEOUT_MS;
		} else {
			struct scan_cand *c = &cands[rec.index];

			c->done = 1;
			c->ok = rec.kind == SCAN_REC_OK;
			c->version = rec.version;
			if (!c->ok)
				scan_cand_skip(c, rec.reason);
			open_try = -1;
		}
	}
	close(pfd[0]);
	if (bad_record)
		kill(pid, SIGKILL); /* it speaks nonsense: do not wait for it to finish */
	while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	scan_describe_exit(wstatus, how, sizeof(how));

	if (open_try < 0) {
		/* Between files: fine only when it finished normally with every outcome sent. */
		if (bad_record)
			snprintf(early, early_size, "the scanner sent a %s record (%zd bytes)",
				 got == (ssize_t)sizeof(struct scan_rec) ? "malformed" : "short",
				 got);
		else
			snprintf(early, early_size, "the scanner %s between two files", how);
		return DOCA_SUCCESS; /* ignored by the caller when every outcome is known */
	}
	if (WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL && uromd_now_ms() >= deadline)
		snprintf(reason, sizeof(reason), "loading did not finish within %d ms",
			 SCAN_LOAD_TIMEOUT_MS);
	else if (bad_record)
		snprintf(reason, sizeof(reason),
			 "the scanner sent a short or malformed record while loading");
	else if (WIFSIGNALED(wstatus))
		snprintf(reason, sizeof(reason),
			 "crashed the scanner while loading (signal %d, %s)", WTERMSIG(wstatus),
			 strsignal(WTERMSIG(wstatus)));
	else
		snprintf(reason, sizeof(reason), "the scanner exited with status %d while loading",
			 WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
	scan_cand_skip(&cands[open_try], reason);
	return DOCA_SUCCESS;
}

/* The first candidate whose outcome is unknown (n when none), and how many are known. */
static size_t scan_first_open(const struct scan_cand *cands, size_t n, size_t *num_done_p)
{
	size_t first = n, done = 0;

	for (size_t i = 0; i < n; i++) {
		if (cands[i].done)
			done++;
		else if (first == n)
			first = i;
	}
	*num_done_p = done;
	return first;
}

/*
 * Run scanner children until every candidate has an outcome. A child that stops early outside
 * a "trying" record is restarted from the first open candidate; SCAN_MAX_STALLS restarts in a
 * row without a new outcome skip the rest, with the last cause.
 */
static doca_error_t scan_run_all(struct scan_cand *cands, size_t n)
{
	char early[SCAN_REASON_LEN], reason[SCAN_REASON_LEN + 96];
	unsigned int stalls = 0;
	size_t done, first = scan_first_open(cands, n, &done);

	while (first < n) {
		size_t done_before = done;
		doca_error_t status;

		status = scan_run_child(cands, n, first, early, sizeof(early));
		if (status != DOCA_SUCCESS)
			return status;
		first = scan_first_open(cands, n, &done);
		if (first == n)
			break;
		if (early[0] == '\0') {
			/* It died loading a file, now skipped: go on after it. */
			stalls = 0;
			continue;
		}
		stalls = done > done_before ? 0 : stalls + 1;
		if (stalls >= SCAN_MAX_STALLS) {
			snprintf(reason, sizeof(reason),
				 "not examined: the scanner stopped %u times in a row without "
				 "progress (last: %s)",
				 stalls, early);
			sdp_error("plugin scan: giving up on %s and %zu other file(s) left: %s",
				  cands[first].path, n - done - 1, reason);
			for (size_t i = first; i < n; i++)
				if (!cands[i].done)
					scan_cand_skip(&cands[i], reason);
			break;
		}
		sdp_warn("plugin scan: %s; restarting it from %s (%zu file(s) left)", early,
			 cands[first].path, n - done);
	}
	return DOCA_SUCCESS;
}

doca_error_t uromd_scan_plugins(const char *path_list, struct uromd_scan_result *result_p)
{
	struct uromd_scan_result res;
	struct scan_cand *cands = NULL;
	size_t n = 0, cap = 0;
	doca_error_t status = DOCA_SUCCESS;
	char *list = NULL, *save = NULL, *dir;

	if (result_p == NULL) {
		sdp_error("plugin scan: NULL result");
		return DOCA_ERROR_INVALID_VALUE;
	}
	memset(&res, 0, sizeof(res));
	if (path_list != NULL) {
		list = strdup(path_list);
		if (list == NULL) {
			sdp_error("plugin scan: out of memory");
			return DOCA_ERROR_NO_MEMORY;
		}
		for (dir = strtok_r(list, ";", &save); dir != NULL;
		     dir = strtok_r(NULL, ";", &save)) {
			size_t len;

			while (*dir == ' ' || *dir == '\t')
				dir++;
			len = strlen(dir);
			while (len > 1 &&
			       (dir[len - 1] == ' ' || dir[len - 1] == '\t' || dir[len - 1] == '/'))
				dir[--len] = '\0';
			if (len == 0)
				continue;
			status = scan_list_dir(dir, &cands, &n, &cap, &res);
			if (status != DOCA_SUCCESS)
				goto out;
		}
	}

	/* The same name twice would be ambiguous for hosts: the first one wins. */
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (!cands[i].done && cands[j].name[0] != '\0' &&
			    strcmp(cands[i].name, cands[j].name) == 0) {
				scan_cand_skip(&cands[i],
					       "another plugin with this name comes first in "
					       "the plugin path");
				break;
			}

	status = scan_run_all(cands, n);
	if (status != DOCA_SUCCESS)
		goto out;

	for (size_t i = 0; i < n; i++) {
		struct scan_cand *c = &cands[i];

		if (!c->done) /* cannot happen: scan_run_all leaves none open */
			scan_cand_skip(c, "not examined");
		if (c->ok && res.num_plugins == SDP_UROM_MAX_PLUGINS)
			scan_cand_skip(c, "more than 64 plugins");
		if (c->ok) {
			struct uromd_plugin *p;

			p = realloc(res.plugins, (res.num_plugins + 1) * sizeof(*p));
			if (p == NULL)
				goto err_no_memory;
			res.plugins = p;
			p = &res.plugins[res.num_plugins];
			memset(p, 0, sizeof(*p));
			p->id = 1ULL << res.num_plugins;
			p->version = c->version;
			memcpy(p->name, c->name, sizeof(p->name));
			p->path = c->path;
			c->path = NULL;
			res.num_plugins++;
			sdp_info("plugin %s: id %#" PRIx64 ", version %#" PRIx64 ", %s", p->name,
				 p->id, p->version, p->path);
		} else {
			struct uromd_skipped *s;

			s = realloc(res.skipped, (res.num_skipped + 1) * sizeof(*s));
			if (s == NULL)
				goto err_no_memory;
			res.skipped = s;
			sdp_warn("plugin %s skipped: %s", c->path, c->reason ? c->reason : "?");
			res.skipped[res.num_skipped].path = c->path;
			res.skipped[res.num_skipped].reason = c->reason;
			c->path = NULL;
			c->reason = NULL;
			res.num_skipped++;
		}
	}
	*result_p = res;
	memset(&res, 0, sizeof(res));
	goto out;

err_no_memory:
	sdp_error("plugin scan: out of memory");
	status = DOCA_ERROR_NO_MEMORY;
out:
	for (size_t i = 0; i < n; i++) {
		free(cands[i].path);
		free(cands[i].reason);
	}
	free(cands);
	free(list);
	uromd_scan_result_fini(&res);
	return status;
}

void uromd_scan_result_fini(struct uromd_scan_result *result)
{
	if (result == NULL)
		return;
	for (size_t i = 0; i < result->num_plugins; i++)
		free(result->plugins[i].path);
	for (size_t i = 0; i < result->num_skipped; i++) {
		free(result->skipped[i].path);
		free(result->skipped[i].reason);
	}
	free(result->plugins);
	free(result->skipped);
	memset(result, 0, sizeof(*result));
}
